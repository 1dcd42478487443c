/* test_ctld_loglimit.c - what a peer can make the controller log: at most
 * a few lines a window, then one line counting the rest; and a peer's
 * string cleaned of control bytes (a node name holding a newline cannot
 * write a log line of its own). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctld/ctld.h"

static void test_sanitize(void **state)
{
    (void)state;
    char out[16];
    ctld_sanitize(out, sizeof out, "n1\nforged\r\x1b[0m");
    assert_string_equal(out, "n1?forged??[0m");
    ctld_sanitize(out, sizeof out,
                  "a\x7f"
                  "b");
    assert_string_equal(out, "a?b");
    ctld_sanitize(out, 4, "longer than four");
    assert_string_equal(out, "lon");
    ctld_sanitize(out, sizeof out, NULL);
    assert_string_equal(out, "");
    /* bytes >= 0x80 (UTF-8) pass */
    ctld_sanitize(out, sizeof out, "gpu-\xc3\xbc");
    assert_string_equal(out, "gpu-\xc3\xbc");
}

/* Run fn with stderr going to a file; return what it wrote (malloc'd). */
static char *capture_stderr(void (*fn)(ctld_loglimit_t *), ctld_loglimit_t *l)
{
    char path[] = "/tmp/drover-loglimit-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn(l);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t n = lseek(fd, 0, SEEK_END);
    char *buf = calloc(1, (size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(pread(fd, buf, (size_t)n, 0), n);
    close(fd);
    unlink(path);
    return buf;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void flood(ctld_loglimit_t *l)
{
    for (int i = 0; i < 1000; i++)
        ctld_log_limited(l, "agent 10.0.0.%d: refused", i % 250);
}

static void next_window(ctld_loglimit_t *l)
{
    l->window_ns -= 11LL * 1000000000; /* as if 11 s had passed */
    ctld_log_limited(l, "agent x: refused");
}

static void test_log_limited(void **state)
{
    (void)state;
    ctld_loglimit_t l = {0};
    char *out = capture_stderr(flood, &l);
    assert_int_equal(count_lines(out), 10);
    tu_assert_contains(out, "droverd: agent 10.0.0.0: refused\n");
    free(out);
    assert_int_equal(l.held, 990);
    out = capture_stderr(next_window, &l);
    assert_int_equal(count_lines(out), 2);
    tu_assert_contains(out, "... and 990 more such lines held back in the last 10 s\n");
    tu_assert_contains(out, "droverd: agent x: refused\n");
    free(out);
    assert_int_equal(l.held, 0);
    assert_int_equal(l.lines, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sanitize),
        cmocka_unit_test(test_log_limited),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
