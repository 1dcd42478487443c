/* test_joblist.c - the compact job listing (GET /v1/jobs?format=tsv): rows
 * written with their escapes and read back (columns found by the header,
 * notes, the truncation line), what a malformed listing is refused for, a
 * JOB object's row (TIME, GPU type, an array's summary) and the same rules
 * through `drover queue`'s TIME of a JOB object. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/joblist.h"

#define MAXROWS 8

typedef struct got {
    size_t n;
    char f[MAXROWS][DR_JL_NCOLS][64];
} got_t;

static int collect(void *ud, char *const *f)
{
    got_t *g = ud;
    if (g->n == MAXROWS)
        return DR_ELIMIT;
    for (size_t k = 0; k < DR_JL_NCOLS; k++)
        snprintf(g->f[g->n][k], sizeof g->f[g->n][k], "%s", f[k]);
    g->n++;
    return 0;
}

/* Parse a listing (a copy: parsing changes it); its return code. */
static int parse(const char *text, got_t *g, bool *trunc, dr_err_t *err)
{
    size_t len = strlen(text);
    char *buf = malloc(len + 1);
    assert_non_null(buf);
    memcpy(buf, text, len + 1);
    memset(g, 0, sizeof *g);
    int rc = dr_joblist_parse(buf, len, collect, g, trunc, err);
    free(buf);
    return rc;
}

static void expect_bad(const char *text, const char *msg)
{
    got_t g;
    bool trunc;
    dr_err_t err = {0};
    int rc = parse(text, &g, &trunc, &err);
    if (rc != DR_EINVAL)
        fail_msg("rc %d for %s", rc, text);
    tu_assert_contains(err.msg, msg);
}

static void test_write_read(void **state)
{
    (void)state;
    dr_joblist_row_t r = {.name = "we\tird\nna\\me\r",
                          .user = "alice",
                          .kind = "batch",
                          .state = "running",
                          .gpus = 16,
                          .gpu_type = "H100-SXM-80GB",
                          .nodelist = "n[1-2]",
                          .time_s = 72.9,
                          .reason = NULL};
    snprintf(r.id, sizeof r.id, "42_3");
    char line[512];
    assert_true(dr_joblist_row_max(&r) < sizeof line);
    size_t n = dr_joblist_row_write(&r, line);
    assert_true(n <= dr_joblist_row_max(&r));
    line[n] = '\0';
    assert_string_equal(line, "42_3\twe\\tird\\nna\\\\me\\r\talice\tbatch\trunning\t16\t"
                              "H100-SXM-80GB\tn[1-2]\t72\t\n");

    char text[1024];
    snprintf(text, sizeof text, "%s%s", DR_JOBLIST_HEADER, line);
    r.time_s = NAN;
    r.gpus = 0;
    r.nodelist = "";
    r.reason = "waiting for 8 GPUs";
    n = dr_joblist_row_write(&r, line);
    line[n] = '\0';
    size_t k = strlen(text);
    snprintf(text + k, sizeof text - k, "%s%s", line, DR_JOBLIST_TRUNCATED);

    got_t g;
    bool trunc = false;
    dr_err_t err = {0};
    assert_int_equal(parse(text, &g, &trunc, &err), DR_OK);
    assert_int_equal(g.n, 2);
    assert_true(trunc);
    assert_string_equal(g.f[0][DR_JL_ID], "42_3");
    assert_string_equal(g.f[0][DR_JL_NAME], "we\tird\nna\\me\r");
    assert_string_equal(g.f[0][DR_JL_TIME], "72");
    assert_string_equal(g.f[0][DR_JL_REASON], "");
    assert_string_equal(g.f[1][DR_JL_TIME], "-");
    assert_string_equal(g.f[1][DR_JL_GPUS], "0");
    assert_string_equal(g.f[1][DR_JL_NODES], "");
    assert_string_equal(g.f[1][DR_JL_REASON], "waiting for 8 GPUs");

    /* time as cli_fmt_duration shows it: negative 0, huge clamped */
    r.time_s = -3;
    n = dr_joblist_row_write(&r, line);
    line[n] = '\0';
    tu_assert_contains(line, "\t0\twaiting");
    r.time_s = INFINITY;
    n = dr_joblist_row_write(&r, line);
    line[n] = '\0';
    tu_assert_contains(line, "\t9200000000000000\t");

    /* an empty listing; columns in another order, one more, notes skipped */
    assert_int_equal(parse(DR_JOBLIST_HEADER, &g, &trunc, &err), DR_OK);
    assert_int_equal(g.n, 0);
    assert_false(trunc);
    assert_int_equal(parse("reason\tid\tname\tuser\tkind\tstate\tgpus\tgpu_type\tnodelist\ttime\t"
                           "later\n"
                           "#a note\n"
                           "why\t7\tn\tu\tk\ts\t1\tt\t\t5\tx\n",
                           &g, &trunc, &err),
                     DR_OK);
    assert_int_equal(g.n, 1);
    assert_false(trunc);
    assert_string_equal(g.f[0][DR_JL_ID], "7");
    assert_string_equal(g.f[0][DR_JL_REASON], "why");
    assert_string_equal(g.f[0][DR_JL_TIME], "5");
}

static void test_malformed(void **state)
{
    (void)state;
    expect_bad("", "line 1: no header");
    expect_bad("id\tname\n", "line 1: the header has no column 'user'");
    expect_bad(DR_JOBLIST_HEADER "1\tn\tu\tk\ts\t1\tt\t\t5\tr",
               "line 2: does not end in a newline");
    expect_bad(DR_JOBLIST_HEADER "1\tn\tu\tk\ts\t1\tt\t\t5\n",
               "line 2: 9 fields, the header has 10");
    expect_bad(DR_JOBLIST_HEADER "1\tn\\x\tu\tk\ts\t1\tt\t\t5\tr\n", "line 2: a '\\' that is not");
    expect_bad(DR_JOBLIST_HEADER "1\tn\tu\tk\ts\t1\tt\t\t5\tr\\\n", "line 2: a '\\' that is not");
    expect_bad(DR_JOBLIST_HEADER "\tn\tu\tk\ts\t1\tt\t\t5\tr\n", "line 2: id '' is not");
    expect_bad(DR_JOBLIST_HEADER "4_\tn\tu\tk\ts\t1\tt\t\t5\tr\n", "line 2: id '4_' is not");
    expect_bad(DR_JOBLIST_HEADER "x\tn\tu\tk\ts\t1\tt\t\t5\tr\n", "line 2: id 'x' is not");
    expect_bad(DR_JOBLIST_HEADER "1\tn\tu\tk\ts\t-1\tt\t\t5\tr\n", "line 2: gpus '-1'");
    expect_bad(DR_JOBLIST_HEADER "1\tn\tu\tk\ts\t1\tt\t\t1.5\tr\n", "line 2: time '1.5'");
    expect_bad(DR_JOBLIST_HEADER "1\tn\tu\tk\ts\t1\tt\t\t\tr\n", "line 2: time ''");

    /* a NUL byte inside a line */
    static const char nul[] = DR_JOBLIST_HEADER "1\tn\0x\tu\tk\ts\t1\tt\t\t5\tr\n";
    char buf[sizeof nul];
    memcpy(buf, nul, sizeof nul);
    got_t g = {0};
    bool trunc;
    dr_err_t err = {0};
    assert_int_equal(dr_joblist_parse(buf, sizeof nul - 1, collect, &g, &trunc, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "line 2: a NUL byte");

    /* the callback's code stops the reading */
    char many[2048];
    snprintf(many, sizeof many, "%s", DR_JOBLIST_HEADER);
    for (int i = 0; i < MAXROWS + 2; i++) {
        size_t k = strlen(many);
        snprintf(many + k, sizeof many - k, "%d\tn\tu\tk\ts\t1\tt\t\t5\tr\n", i);
    }
    assert_int_equal(parse(many, &g, &trunc, &err), DR_ELIMIT);
    assert_int_equal(g.n, MAXROWS);
}

static json_t *job(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad test JSON: %s: %s", e.text, text);
    return j;
}

static void test_from_json(void **state)
{
    (void)state;
    dr_joblist_row_t r;
    json_t *j =
        job("{\"id\":9,\"array_parent\":42,\"array_index\":3,\"name\":\"t\",\"user\":\"bob\","
            "\"kind\":\"array\",\"state\":\"running\",\"gpus\":2,\"gpu_type\":null,"
            "\"gpu_types_requested\":\"A100\",\"nodelist\":\"n4\",\"submit_time\":10.0,"
            "\"start_time\":20.0,\"end_time\":null,\"elapsed\":59.9996,\"reason\":\"\"}");
    dr_joblist_from_json(j, 1000, &r);
    assert_string_equal(r.id, "42_3");
    assert_string_equal(r.name, "t");
    assert_string_equal(r.gpu_type, "A100");
    assert_int_equal(r.gpus, 2);
    assert_string_equal(r.nodelist, "n4");
    assert_true(r.time_s == 59.9996);
    assert_string_equal(r.reason, "");
    json_decref(j);

    /* an array parent: its tasks summary when it has no reason */
    j = job(
        "{\"id\":42,\"kind\":\"array\",\"state\":\"running\",\"gpu_type\":\"H100\",\"reason\":\"\","
        "\"tasks\":{\"total\":10,\"pending\":5,\"running\":2,\"completed\":1,\"failed\":1,"
        "\"cancelled\":1,\"timeout\":1}}");
    dr_joblist_from_json(j, 0, &r);
    assert_string_equal(r.id, "42");
    assert_string_equal(r.gpu_type, "H100");
    assert_string_equal(r.reason, "3/10 done, 2 running");
    assert_string_equal(r.state, "running");
    json_decref(j);

    /* a waiting job: since submit; nothing known: '?' state, "any", "-" */
    j = job("{\"id\":5,\"state\":\"pending\",\"submit_time\":100.5,\"start_time\":null}");
    dr_joblist_from_json(j, 130.0, &r);
    assert_true(r.time_s == 29.5);
    assert_string_equal(r.gpu_type, "any");
    json_decref(j);
    j = job("{\"id\":6,\"state\":\"requeued\"}");
    dr_joblist_from_json(j, 130.0, &r);
    assert_true(isnan(r.time_s));
    json_decref(j);
    j = job("{}");
    dr_joblist_from_json(j, 130.0, &r);
    assert_string_equal(r.id, "0");
    assert_string_equal(r.state, "?");
    assert_string_equal(r.name, "");
    assert_true(r.time_s == 0);
    json_decref(j);

    /* the rules alone */
    assert_true(dr_joblist_time("completed", 1, 10, 70, NAN, 1000) == 60);
    assert_true(dr_joblist_time("running", 1, 10, NAN, NAN, 100) == 90);
    assert_true(dr_joblist_time("requeued", 1, 10, NAN, 5, 100) == 5); /* it ran: elapsed */
    assert_true(dr_joblist_time(NULL, NAN, NAN, NAN, NAN, 100) == 0);
    assert_string_equal(dr_joblist_type("", "L40S"), "L40S");
    assert_string_equal(dr_joblist_type(NULL, NULL), "any");
    char esc[16];
    *dr_tsv_escape(esc, "a\\\tb", 4) = '\0';
    assert_string_equal(esc, "a\\\\\\tb");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_read),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_from_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
