/* test_cli_format.c - what the live-cluster verbs print: Slurm-style
 * durations, local times, ages, memory, shell-quoted commands, aligned
 * tables (control characters neutralised, UTF-8 widths, printed whole),
 * the reading of JOB objects (terminal states, wait's exit statuses, ids,
 * TIME, progress lines), the classes' and a job's speeds per GPU type
 * (drover classes, drover show), and the parsing of --server addresses. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/client.h"
#include "cli/format.h"
#include "cli/speeds.h"

static void expect_duration(double s, const char *want)
{
    char buf[32];
    assert_string_equal(cli_fmt_duration(s, buf, sizeof buf), want);
}

static void test_duration(void **state)
{
    (void)state;
    expect_duration(0, "0:00");
    expect_duration(12.9, "0:12"); /* truncated, as Slurm does */
    expect_duration(59, "0:59");
    expect_duration(61, "1:01");
    expect_duration(3599, "59:59");
    expect_duration(3600, "1:00:00");
    expect_duration(36000 + 62, "10:01:02");
    expect_duration(86399, "23:59:59");
    expect_duration(86400, "1-00:00:00");
    expect_duration(86400 + 3661, "1-01:01:01");
    expect_duration(400 * 86400.0 + 5, "400-00:00:05");
    expect_duration(-5, "0:00"); /* clocks a little apart */
    expect_duration(NAN, "-");
}

static void test_time_age_mem(void **state)
{
    (void)state;
    char buf[64];
    setenv("TZ", "UTC", 1);
    tzset();
    assert_string_equal(cli_fmt_time(1767000000.0, buf, sizeof buf), "2025-12-29 09:20:00");
    assert_string_equal(cli_fmt_time(1767000000.9, buf, sizeof buf), "2025-12-29 09:20:00");
    assert_string_equal(cli_fmt_time(NAN, buf, sizeof buf), "-");
    assert_string_equal(cli_fmt_time(1e300, buf, sizeof buf), "-");
    setenv("TZ", "CET-1", 1); /* POSIX form: no tzdata needed */
    tzset();
    assert_string_equal(cli_fmt_time(1767000000.0, buf, sizeof buf), "2025-12-29 10:20:00");
    setenv("TZ", "UTC", 1);
    tzset();

    assert_string_equal(cli_fmt_age(0.4, buf, sizeof buf), "0s");
    assert_string_equal(cli_fmt_age(119, buf, sizeof buf), "119s");
    assert_string_equal(cli_fmt_age(120, buf, sizeof buf), "2m");
    assert_string_equal(cli_fmt_age(7199, buf, sizeof buf), "119m");
    assert_string_equal(cli_fmt_age(7200, buf, sizeof buf), "2h");
    assert_string_equal(cli_fmt_age(3 * 86400, buf, sizeof buf), "3d");
    assert_string_equal(cli_fmt_age(-3, buf, sizeof buf), "0s");

    assert_string_equal(cli_fmt_mem_mb(0, buf, sizeof buf), "0M");
    assert_string_equal(cli_fmt_mem_mb(512, buf, sizeof buf), "512M");
    assert_string_equal(cli_fmt_mem_mb(1024, buf, sizeof buf), "1G");
    assert_string_equal(cli_fmt_mem_mb(1536, buf, sizeof buf), "1.5G");
    assert_string_equal(cli_fmt_mem_mb(512000, buf, sizeof buf), "500G");
    assert_string_equal(cli_fmt_mem_mb(2097152, buf, sizeof buf), "2T");
}

static void expect_argv(const char *const *argv, size_t n, const char *want)
{
    char *s = cli_fmt_argv(argv, n);
    assert_non_null(s);
    assert_string_equal(s, want);
    free(s);
}

static void test_argv(void **state)
{
    (void)state;
    const char *a[] = {"python", "train.py", "--lr=3e-4", "/data/x,y"};
    expect_argv(a, 4, "python train.py --lr=3e-4 /data/x,y");
    const char *b[] = {"sh", "-c", "echo $HOME; ls", "", "it's"};
    expect_argv(b, 5, "sh -c 'echo $HOME; ls' '' 'it'\\''s'");
    expect_argv(NULL, 0, "");
}

static char *render(cli_table_t *t)
{
    char *s = cli_table_render(t);
    assert_non_null(s);
    return s;
}

static void test_table(void **state)
{
    (void)state;
    static const char *const head[] = {"ID", "NAME", "GPUS", "REASON"};
    cli_table_t t;
    assert_int_equal(cli_table_init(&t, 4, head), DR_OK);
    cli_table_right(&t, 0);
    cli_table_right(&t, 2);
    cli_table_right(&t, 9); /* out of range: ignored */
    const char *r1[] = {"7", "train", "16", "waiting for 16 GPUs"};
    const char *r2[] = {"1234_5", "a", "1", NULL};
    const char *r3[] = {"8", "x\ny\033[2J", "0", "ok"};
    const char *r4[] = {"9", "héllo", "2", ""};
    assert_int_equal(cli_table_add(&t, r1), DR_OK);
    assert_int_equal(cli_table_add(&t, r2), DR_OK);
    assert_int_equal(cli_table_add(&t, r3), DR_OK);
    assert_int_equal(cli_table_add(&t, r4), DR_OK);
    char *s = render(&t);
    assert_string_equal(s, "    ID  NAME     GPUS  REASON\n"
                           "     7  train      16  waiting for 16 GPUs\n"
                           "1234_5  a           1\n"
                           "     8  x?y?[2J     0  ok\n"
                           "     9  héllo       2\n");
    free(s);
    cli_table_free(&t);

    /* a header alone; C1 controls in UTF-8 are neutralised too */
    static const char *const h2[] = {"A", "B"};
    assert_int_equal(cli_table_init(&t, 2, h2), DR_OK);
    const char *c1[] = {"\xc2\x9b"
                        "31m",
                        "z"};
    assert_int_equal(cli_table_add(&t, c1), DR_OK);
    s = render(&t);
    assert_string_equal(s, "A     B\n?31m  z\n");
    free(s);
    /* the same text with its length, and printed in one piece */
    size_t len = 0;
    s = cli_table_render_len(&t, &len);
    assert_non_null(s);
    assert_int_equal(len, strlen(s));
    free(s);
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(cli_table_print(&t, f), DR_OK);
    char got[64] = "";
    rewind(f);
    assert_int_equal(fread(got, 1, sizeof got - 1, f), strlen("A     B\n?31m  z\n"));
    assert_string_equal(got, "A     B\n?31m  z\n");
    fclose(f);
    cli_table_free(&t);

    /* many rows: the widths are kept as rows come, the text in one block */
    static const char *const h3[] = {"N", "X"};
    assert_int_equal(cli_table_init(&t, 2, h3), DR_OK);
    cli_table_right(&t, 0);
    for (int i = 0; i < 20000; i++) {
        char n[16];
        snprintf(n, sizeof n, "%d", i);
        const char *row[] = {n, i % 2 ? "odd" : NULL};
        assert_int_equal(cli_table_add(&t, row), DR_OK);
    }
    s = cli_table_render_len(&t, &len);
    assert_non_null(s);
    assert_int_equal(len, strlen(s));
    tu_assert_contains(s, "    N  X\n    0\n    1  odd\n");
    tu_assert_contains(s, "19999  odd\n");
    free(s);
    cli_table_free(&t);
}

static json_t *job(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad test JSON: %s: %s", e.text, text);
    return j;
}

static void expect_exit(const char *text, int want)
{
    json_t *j = job(text);
    int got = cli_job_exit_status(j);
    if (got != want)
        fail_msg("exit status %d, want %d for %s", got, want, text);
    json_decref(j);
}

static void test_exit_status(void **state)
{
    (void)state;
    expect_exit("{\"state\":\"completed\",\"exit_code\":0}", 0);
    expect_exit("{\"state\":\"failed\",\"exit_code\":3}", 3);
    expect_exit("{\"state\":\"failed\",\"exit_code\":256}", 1); /* 256 & 255 = 0: still a failure */
    expect_exit("{\"state\":\"failed\",\"exit_code\":257}", 1);
    expect_exit("{\"state\":\"failed\",\"exit_code\":-1,\"signal\":9}", 137);
    expect_exit("{\"state\":\"failed\",\"exit_code\":-1,\"signal\":null}", 1);
    expect_exit("{\"state\":\"failed\",\"exit_code\":null,\"reason\":\"node n1 failed\"}", 1);
    expect_exit("{\"state\":\"failed\",\"exit_code\":0}", 1);
    expect_exit("{\"state\":\"cancelled\",\"exit_code\":null}", 1);
    expect_exit("{\"state\":\"timeout\",\"exit_code\":-1,\"signal\":15}", 124);
    expect_exit("{\"state\":\"running\"}", -1);
    expect_exit("{\"state\":\"preempted\"}", -1);
    expect_exit("{\"state\":\"requeued\"}", -1);
    expect_exit("{}", -1);
    assert_true(cli_state_terminal("timeout"));
    assert_false(cli_state_terminal("completing"));
    assert_false(cli_state_terminal(NULL));
}

static void test_job_text(void **state)
{
    (void)state;
    char buf[256];
    json_t *j = job("{\"id\":42,\"state\":\"running\",\"nodelist\":\"n1\",\"gpu_type\":\"H100\","
                    "\"submit_time\":1000.0,\"start_time\":1003.0,\"end_time\":null,"
                    "\"elapsed\":12.5,\"reason\":\"\",\"array_parent\":null,\"array_index\":null}");
    assert_string_equal(cli_job_id(j, buf, sizeof buf), "42");
    assert_string_equal(cli_job_time(j, 2000, buf, sizeof buf), "0:12"); /* the server's elapsed */
    assert_string_equal(cli_job_progress(j, 2000, buf, sizeof buf),
                        "job 42: running 0:12 on n1 (H100)");
    json_object_del(j, "elapsed");
    assert_string_equal(cli_job_time(j, 1065, buf, sizeof buf), "1:02"); /* now - start */
    json_decref(j);

    j = job("{\"id\":43,\"state\":\"pending\",\"nodelist\":\"\",\"gpu_type\":null,"
            "\"submit_time\":1000.0,\"start_time\":null,\"reason\":\"waiting for 8 GPUs\"}");
    assert_string_equal(cli_job_time(j, 1005, buf, sizeof buf), "0:05");
    assert_string_equal(cli_job_progress(j, 1005, buf, sizeof buf),
                        "job 43: pending 0:05 (waiting for 8 GPUs)");
    json_decref(j);

    j = job("{\"id\":44,\"state\":\"completed\",\"start_time\":10.0,\"end_time\":3730.0,"
            "\"array_parent\":40,\"array_index\":7}");
    assert_string_equal(cli_job_id(j, buf, sizeof buf), "40_7");
    assert_string_equal(cli_job_time(j, 99999, buf, sizeof buf), "1:02:00"); /* end - start */
    json_decref(j);

    j = job("{\"id\":42,\"state\":\"running\",\"tasks\":{\"total\":1000,\"pending\":144,"
            "\"running\":16,\"completed\":838,\"failed\":2,\"cancelled\":0}}");
    assert_string_equal(cli_job_progress(j, 0, buf, sizeof buf),
                        "array 42: 840/1000 done, 16 running, 2 failed");
    json_decref(j);
    j = job("{\"id\":42,\"tasks\":{\"total\":10,\"running\":3,\"completed\":7}}");
    assert_string_equal(cli_job_progress(j, 0, buf, sizeof buf), "array 42: 7/10 done, 3 running");
    json_decref(j);

    /* accessors tolerate absent, null and mistyped members */
    j = job("{\"s\":\"x\",\"n\":null,\"i\":3,\"f\":2.5}");
    assert_string_equal(cli_json_str(j, "s", "d"), "x");
    assert_string_equal(cli_json_str(j, "n", "d"), "d");
    assert_string_equal(cli_json_str(j, "i", "d"), "d");
    assert_true(cli_json_num(j, "i") == 3 && cli_json_num(j, "f") == 2.5);
    assert_true(isnan(cli_json_num(j, "n")) && isnan(cli_json_num(j, "missing")));
    json_decref(j);
}

static void expect_endpoint(const char *spec, bool is_unix, const char *a, const char *b,
                            const char *display)
{
    cli_endpoint_t ep;
    dr_err_t err = {0};
    if (cli_endpoint_parse(spec, &ep, &err) != DR_OK)
        fail_msg("'%s': %s", spec, err.msg);
    assert_int_equal(ep.is_unix, is_unix);
    if (is_unix) {
        assert_string_equal(ep.path, a);
    } else {
        assert_string_equal(ep.host, a);
        assert_string_equal(ep.port, b);
    }
    assert_string_equal(ep.display, display);
    cli_endpoint_free(&ep);
}

/* What a printer of JSON wrote, as a string (malloc'd). */
static char *printed(int (*print)(FILE *, const json_t *), const char *text)
{
    json_t *j = job(text);
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    assert_non_null(m);
    assert_int_equal(print(m, j), DR_OK);
    fclose(m);
    json_decref(j);
    return out;
}

static void test_classes(void **state)
{
    (void)state;
    char *s = printed(cli_classes_print, "{\"classes\":[]}");
    assert_string_equal(s, "no classes yet: jobs given --class NAME, and arrays, teach drover "
                           "their speed on each GPU type\n");
    free(s);
    /* size only once a run is seen; spread exp(sigma)-1; "-" for what is unknown */
    s = printed(cli_classes_print,
                "{\"classes\":[{\"name\":\"sim\",\"owner\":\"alice\",\"prior\":\"catalog\","
                "\"runs\":12,\"reference\":\"H100-SXM-80GB\",\"sigma\":0.076961,\"size_s\":630,"
                "\"types\":[{\"type\":\"H100-SXM-80GB\",\"rate\":1,\"basis\":\"observed\","
                "\"runs\":10,\"mean_run_s\":630,\"spread\":1.08},"
                "{\"type\":\"A100-SXM-80GB\",\"rate\":0.452311,\"basis\":\"via the runs on "
                "other types\",\"runs\":2,\"mean_run_s\":1392.9,\"spread\":1.153},"
                "{\"type\":\"L4\",\"rate\":0.12,\"basis\":\"catalog\",\"runs\":0}]},"
                "{\"name\":\"array 7\",\"owner\":\"bob\",\"prior\":\"H100=1,A100=0.5\","
                "\"runs\":1,\"reference\":\"H100-SXM-80GB\",\"sigma\":0.262364,"
                "\"types\":[{\"type\":\"H100-SXM-80GB\",\"rate\":1,\"basis\":\"declared\","
                "\"runs\":0}]}]}");
    assert_string_equal(
        s, "CLASS sim (alice): 12 runs, reference H100-SXM-80GB, size 10.5 min, run-to-run "
           "spread 8%\n"
           "TYPE            RATE  RUNS  MEAN RUN  SPREAD  BASIS\n"
           "H100-SXM-80GB      1    10  10.5 min     ±8%  observed\n"
           "A100-SXM-80GB  0.452     2  23.2 min    ±15%  via the runs on other types\n"
           "L4              0.12     0         -       -  catalog\n"
           "\n"
           "CLASS array 7 (bob): 1 run, reference H100-SXM-80GB, run-to-run spread 30%\n"
           "TYPE           RATE  RUNS  MEAN RUN  SPREAD  BASIS\n"
           "H100-SXM-80GB     1     0         -       -  declared\n");
    free(s);
}

static void test_job_speeds(void **state)
{
    (void)state;
    char *s = printed(cli_job_speeds_print, "{\"id\":3,\"speeds\":null}");
    assert_string_equal(s, "");
    free(s);
    s = printed(cli_job_speeds_print,
                "{\"id\":3,\"deadline\":1767000000,\"speeds\":{\"class\":\"sim\",\"prior\":"
                "\"catalog\",\"class_runs\":12,\"reference\":\"H100-SXM-80GB\",\"work_s\":630,"
                "\"work_from\":\"its class's runs\",\"types\":["
                "{\"type\":\"H100-SXM-80GB\",\"rate\":1,\"basis\":\"observed\",\"runs\":10,"
                "\"mean_run_s\":630,\"spread\":1.08,\"run_s\":630,\"usd\":0.7,"
                "\"meets_deadline\":true,\"chosen\":true},"
                "{\"type\":\"A100-SXM-80GB\",\"rate\":0.45,\"basis\":\"catalog\",\"runs\":0,"
                "\"run_s\":1400,\"usd\":0.001,\"meets_deadline\":false},"
                "{\"type\":\"L4\",\"rate\":0,\"basis\":\"cannot run\",\"runs\":0}]}}");
    assert_string_equal(s, "\nSpeeds\n"
                           "class: sim (prior: catalog, 12 runs of the class); work: 10.5 min on "
                           "H100-SXM-80GB (from its class's runs)\n"
                           "TYPE            RATE  RUN TIME    COST  DEADLINE  BASIS\n"
                           "H100-SXM-80GB*     1  10.5 min   $0.70  yes       observed\n"
                           "A100-SXM-80GB   0.45  23.3 min  <$0.01  no        catalog\n"
                           "L4                 0         -       -  -         cannot run\n"
                           "* the type it was given\n");
    free(s);
    /* no work known yet */
    s = printed(cli_job_speeds_print,
                "{\"speeds\":{\"class\":\"declared speeds\",\"prior\":\"declared\","
                "\"class_runs\":1,\"reference\":\"H100-SXM-80GB\",\"work_from\":null,"
                "\"types\":[{\"type\":\"H100-SXM-80GB\",\"rate\":1,\"basis\":\"declared\","
                "\"runs\":1}]}}");
    assert_string_equal(s, "\nSpeeds\n"
                           "class: declared speeds (prior: declared, 1 run of the class); work: "
                           "unknown (no --estimate, no run of its class yet)\n"
                           "TYPE           RATE  RUN TIME  COST  DEADLINE  BASIS\n"
                           "H100-SXM-80GB     1         -     -  -         declared\n");
    free(s);
}

static void expect_endpoint_error(const char *spec, const char *msg)
{
    cli_endpoint_t ep;
    dr_err_t err = {0};
    assert_int_equal(cli_endpoint_parse(spec, &ep, &err), DR_EINVAL);
    tu_assert_contains(err.msg, msg);
}

static void test_endpoint(void **state)
{
    (void)state;
    expect_endpoint("http://127.0.0.1:6817", false, "127.0.0.1", "6817", "http://127.0.0.1:6817");
    expect_endpoint("http://ctl.example:80/", false, "ctl.example", "80", "http://ctl.example:80");
    expect_endpoint("http://ctl", false, "ctl", "6817", "http://ctl:6817");
    expect_endpoint("ctl:7000", false, "ctl", "7000", "http://ctl:7000");
    expect_endpoint("[::1]:6817", false, "::1", "6817", "http://[::1]:6817");
    expect_endpoint("http://[fe80::1]", false, "fe80::1", "6817", "http://[fe80::1]:6817");
    expect_endpoint("/run/drover/droverd.sock", true, "/run/drover/droverd.sock", NULL,
                    "/run/drover/droverd.sock");
    expect_endpoint("./d.sock", true, "./d.sock", NULL, "./d.sock");
    expect_endpoint("d.sock", true, "d.sock", NULL, "d.sock");
    expect_endpoint("unix:/tmp/a:b.sock", true, "/tmp/a:b.sock", NULL, "/tmp/a:b.sock");
    expect_endpoint_error("", "empty");
    /* https:// (issue 21: it was refused; TLS is verified by cli/tls.c) */
    expect_endpoint("https://ctl:443", false, "ctl", "443", "https://ctl:443");
    expect_endpoint("https://[::1]", false, "::1", "6817", "https://[::1]:6817");
    cli_endpoint_t tep;
    dr_err_t terr = {0};
    assert_int_equal(cli_endpoint_parse("https://ctl", &tep, &terr), DR_OK);
    assert_true(tep.tls);
    cli_endpoint_free(&tep);
    assert_int_equal(cli_endpoint_parse("http://ctl", &tep, &terr), DR_OK);
    assert_false(tep.tls);
    cli_endpoint_free(&tep);
    expect_endpoint_error("ftp://ctl:21", "unknown scheme");
    expect_endpoint_error("https://ctl:6817/api", "a path after the address is not supported");
    expect_endpoint_error("http://ctl:6817/api", "a path after the address is not supported");
    expect_endpoint_error("ctl:0", "port '0' is not a number from 1 to 65535");
    expect_endpoint_error("ctl:65536", "port '65536'");
    expect_endpoint_error("ctl:68x", "port '68x'");
    expect_endpoint_error("::1:6817", "brackets");
    expect_endpoint_error("[::1:6817", "unbalanced '['");
    expect_endpoint_error("http://:6817", "no host");
    char longpath[200];
    memset(longpath, 'a', sizeof longpath - 1);
    longpath[0] = '/';
    longpath[sizeof longpath - 1] = '\0';
    expect_endpoint_error(longpath, "socket path longer than 107 bytes");

    char *e = cli_url_escape("pending,running");
    assert_string_equal(e, "pending,running");
    free(e);
    e = cli_url_escape("a b&c=d/é");
    assert_string_equal(e, "a%20b%26c%3Dd%2F%C3%A9");
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration),    cmocka_unit_test(test_time_age_mem),
        cmocka_unit_test(test_argv),        cmocka_unit_test(test_table),
        cmocka_unit_test(test_exit_status), cmocka_unit_test(test_job_text),
        cmocka_unit_test(test_endpoint),    cmocka_unit_test(test_classes),
        cmocka_unit_test(test_job_speeds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
