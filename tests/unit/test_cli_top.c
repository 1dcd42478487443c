/* test_cli_top.c - `drover top`'s frame as a pure function of the
 * controller's replies: the per-type GPU counts and cost rate computed from
 * GET /v1/nodes when there is no /v1/stats, and taken from /v1/stats when
 * there is; the job counts (an array counts its pending tasks, a held job
 * is counted as held, not pending); the utilisation bars; the frame's sections and
 * order, and its cutting to the screen's width and height. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/top_frame.h"

#define NOW 1800000000.0

/* (fails with both texts: the frame is the thing to see) */
#define has(hay, needle)                                                                           \
    do {                                                                                           \
        if (!strstr((hay), (needle)))                                                              \
            fail_msg("expected the frame to contain \"%s\":\n%s", (needle), (hay));                \
    } while (0)

static json_t *parse(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j)
        fail_msg("fixture: %s at %d: %s", e.text, e.position, s);
    return j;
}

static const char *NODES =
    "{\"nodes\":["
    "{\"name\":\"n1\",\"state\":\"up\",\"reason\":\"\",\"gpu_type\":\"H100-SXM-80GB\",\"gpus\":4,"
    "\"gpus_alloc\":2,\"agent\":{\"connected\":true,\"last_heartbeat\":1799999995.0}},"
    "{\"name\":\"n2\",\"state\":\"drain\",\"reason\":\"drained by root: fan\",\"gpu_type\":"
    "\"H100-SXM-80GB\",\"gpus\":4,\"gpus_alloc\":1,\"agent\":{\"connected\":true,"
    "\"last_heartbeat\":1799999999.0}},"
    "{\"name\":\"n3\",\"state\":\"up\",\"reason\":\"\",\"gpu_type\":\"L40S-48GB\",\"gpus\":2,"
    "\"gpus_alloc\":1,\"agent\":{\"connected\":true,\"last_heartbeat\":1799999700.0}},"
    "{\"name\":\"c1\",\"state\":\"up\",\"reason\":\"\",\"gpu_type\":\"\",\"gpus\":0,"
    "\"gpus_alloc\":0,\"agent\":{\"connected\":false,\"last_heartbeat\":null}}]}";

static const char *RUNNING =
    "{\"jobs\":["
    "{\"id\":1,\"user\":\"alice\",\"kind\":\"batch\",\"state\":\"running\",\"gpu_type\":"
    "\"H100-SXM-80GB\",\"nodelist\":\"n1\",\"gpus\":2,\"submit_time\":1799999000.0,"
    "\"start_time\":1799999100.0,\"elapsed\":900.0,\"cost_usd\":3.44,\"reason\":\"\","
    "\"hold\":null},"
    "{\"id\":2,\"user\":\"bob\",\"kind\":\"array\",\"state\":\"running\",\"gpu_type\":null,"
    "\"gpu_types_requested\":\"L40S\",\"nodelist\":\"\",\"gpus\":0,\"submit_time\":1799999900.0,"
    "\"start_time\":1799999950.0,\"elapsed\":50.0,\"cost_usd\":0.0,\"reason\":\"queued\","
    "\"tasks\":{\"total\":5,\"pending\":3,\"running\":1,\"completed\":1,\"failed\":0,"
    "\"cancelled\":0,\"timeout\":0}},"
    "{\"id\":4,\"array_parent\":2,\"array_index\":1,\"user\":\"bob\",\"kind\":\"array\","
    "\"state\":\"running\",\"gpu_type\":\"L40S-48GB\",\"nodelist\":\"n3\",\"gpus\":1,"
    "\"submit_time\":1799999900.0,\"start_time\":1799999990.0,\"elapsed\":10.0,"
    "\"cost_usd\":0.005,\"reason\":\"\"}]}";

static const char *PENDING =
    "{\"jobs\":["
    "{\"id\":7,\"user\":\"carol\",\"kind\":\"batch\",\"state\":\"pending\",\"gpu_type\":null,"
    "\"gpu_types_requested\":\"H100\",\"nodelist\":\"\",\"gpus\":8,\"submit_time\":1799999940.0,"
    "\"cost_usd\":0,\"reason\":\"waiting for 8 GPUs (H100)\",\"hold\":null},"
    "{\"id\":8,\"user\":\"carol\",\"kind\":\"batch\",\"state\":\"pending\",\"gpu_type\":null,"
    "\"gpu_types_requested\":null,\"nodelist\":\"\",\"gpus\":1,\"submit_time\":1799999980.0,"
    "\"cost_usd\":0,\"reason\":\"JobHeldUser\",\"hold\":\"user\"}]}";

typedef struct fx {
    json_t *nodes, *running, *pending;
    dr_catalog_t cat;
} fx_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof *f);
    f->nodes = parse(NODES);
    f->running = parse(RUNNING);
    f->pending = parse(PENDING);
    dr_err_t err = {0};
    assert_int_equal(dr_catalog_builtin(&f->cat, &err), DR_OK);
    setenv("TZ", "UTC", 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    json_decref(f->nodes);
    json_decref(f->running);
    json_decref(f->pending);
    dr_catalog_free(&f->cat);
    free(f);
    return 0;
}

static double price(const fx_t *f, const char *type)
{
    const dr_gpu_spec_t *g = dr_catalog_find(&f->cat, type);
    assert_non_null(g);
    return g->price_hr;
}

static void test_summary_from_nodes(void **state)
{
    fx_t *f = *state;
    cli_top_summary_t s;
    assert_int_equal(cli_top_summarise(NULL, f->nodes, f->running, f->pending, &f->cat, &s), DR_OK);
    assert_false(s.from_stats);
    assert_int_equal(s.ntypes, 2); /* c1 has no GPUs: no type */
    assert_string_equal(s.types[0].name, "H100-SXM-80GB");
    /* n1: 2 of 4 allocated, 2 idle; n2 drained: 1 allocated, its 3 free ones down */
    assert_int_equal(s.types[0].total, 8);
    assert_int_equal(s.types[0].allocated, 3);
    assert_int_equal(s.types[0].idle, 2);
    assert_int_equal(s.types[0].down, 3);
    assert_string_equal(s.types[1].name, "L40S-48GB");
    assert_int_equal(s.types[1].total, 2);
    assert_int_equal(s.types[1].allocated, 1);
    assert_int_equal(s.types[1].idle, 1);
    assert_int_equal(s.types[1].down, 0);
    double want = 3 * price(f, "H100-SXM-80GB") + price(f, "L40S-48GB");
    assert_true(fabs(s.cost_usd_per_hour - want) < 1e-9);
    assert_false(s.cost_partial);
    /* running: job 1 and task 2_1 (the array parent is no job of its own);
     * pending: the array's 3 pending tasks and job 7; 8 is held */
    assert_int_equal(s.running, 2);
    assert_int_equal(s.pending, 4);
    assert_int_equal(s.held, 1);
    cli_top_summary_free(&s);

    /* a type the catalog does not price: the rate says it is partial */
    json_t *odd = parse("{\"nodes\":[{\"name\":\"x\",\"state\":\"up\",\"gpu_type\":\"Z9\","
                        "\"gpus\":2,\"gpus_alloc\":2}]}");
    assert_int_equal(cli_top_summarise(NULL, odd, NULL, NULL, &f->cat, &s), DR_OK);
    assert_true(isnan(s.types[0].usd_per_gpu_hour));
    assert_true(s.cost_partial);
    assert_true(s.cost_usd_per_hour == 0);
    cli_top_summary_free(&s);
    json_decref(odd);
}

static void test_summary_from_stats(void **state)
{
    fx_t *f = *state;
    json_t *stats = parse(
        "{\"t\":1800000000,\"types\":[{\"type\":\"B200\",\"total\":16,\"allocated\":9,\"idle\":"
        "5,\"down\":2,\"usd_per_gpu_hour\":5.5}],\"cost_usd_per_hour\":49.5,"
        "\"jobs\":{\"pending\":11,\"running\":4,\"held\":3}}");
    cli_top_summary_t s;
    assert_int_equal(cli_top_summarise(stats, f->nodes, f->running, f->pending, &f->cat, &s),
                     DR_OK);
    assert_true(s.from_stats);
    assert_int_equal(s.ntypes, 1); /* the controller's figures, not the nodes' */
    assert_string_equal(s.types[0].name, "B200");
    assert_int_equal(s.types[0].total, 16);
    assert_int_equal(s.types[0].allocated, 9);
    assert_int_equal(s.types[0].idle, 5);
    assert_int_equal(s.types[0].down, 2);
    assert_true(s.types[0].usd_per_gpu_hour == 5.5);
    assert_true(s.cost_usd_per_hour == 49.5);
    assert_int_equal(s.running, 4);
    assert_int_equal(s.pending, 11);
    assert_int_equal(s.held, 3);
    cli_top_summary_free(&s);
    json_decref(stats);
}

static void expect_bar(long long a, long long i, long long d, int w, const char *want)
{
    char buf[64];
    assert_string_equal(cli_top_bar(a, i, d, w, buf, sizeof buf), want);
}

static void test_bar(void **state)
{
    (void)state;
    expect_bar(5, 5, 0, 10, "[#####-----]");
    expect_bar(0, 0, 0, 10, "[----------]");
    expect_bar(1, 99, 0, 10, "[#---------]"); /* 1% still shows */
    expect_bar(99, 1, 0, 10, "[#########-]"); /* so does one idle GPU */
    expect_bar(1, 98, 1, 10, "[#--------x]");
    expect_bar(8, 0, 0, 4, "[####]");
    expect_bar(0, 0, 3, 4, "[xxxx]");
    expect_bar(2, 1, 1, 4, "[##-x]");
    char small[4];
    assert_string_equal(cli_top_bar(1, 1, 0, 10, small, sizeof small), ""); /* no room */
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_frame_whole(void **state)
{
    fx_t *f = *state;
    json_t *ping = parse("{\"ok\":true,\"epoch\":3,\"policy\":\"cost\",\"user\":\"alice\"}");
    cli_top_input_t in = {.controller = "http://10.0.0.1:6817",
                          .ping = ping,
                          .nodes = f->nodes,
                          .running = f->running,
                          .pending = f->pending,
                          .cat = &f->cat,
                          .now = NOW};
    char *fr = cli_top_frame(&in);
    assert_non_null(fr);
    has(fr, "drover top - http://10.0.0.1:6817  epoch 3  policy cost  "
            "2027-01-15 08:00:00\n");
    has(fr, "\nH100-SXM-80GB      8      3     2     3   38%");
    has(fr, "[########----xxxxxxxx]\n");
    has(fr, "\nall               10      4     3     3   40%");
    char want[128];
    snprintf(want, sizeof want, "\ncost $%.2f/h  jobs: 2 running, 4 pending, 1 held\n",
             3 * price(f, "H100-SXM-80GB") + price(f, "L40S-48GB"));
    has(fr, want);
    /* nodes with heartbeat ages; the drained node's reason */
    has(fr, "\nn1    H100-SXM-80GB   2/4  up            5s\n");
    has(fr, "\nn2    H100-SXM-80GB   1/4  drain         1s  drained by root: fan\n");
    has(fr, "\nn3    L40S-48GB       1/2  up            5m\n");
    has(fr, "\nc1    -               0/0  up             -\n");
    /* the queue: running (the array with its progress), then pending */
    const char *p1 =
        strstr(fr, "\n1    alice  batch  H100-SXM-80GB  n1     running         15:00  $3.44\n");
    const char *p2 = strstr(fr, "\n2    bob    array  L40S           -      running          0:50  "
                                "$0.00  1/5 done, 1 running");
    const char *p3 =
        strstr(fr, "\n2_1  bob    array  L40S-48GB      n3     running          0:10  $0.01\n");
    const char *p4 = strstr(fr, "\n7    carol  batch  H100           -      pending          1:00  "
                                "$0.00  waiting for 8 GPUs (H100)\n");
    const char *p5 = strstr(
        fr,
        "\n8    carol  batch  any            -      pending (held)   0:20  $0.00  JobHeldUser\n");
    if (!(p1 && p2 && p3 && p4 && p5 && p1 < p2 && p2 < p3 && p3 < p4 && p4 < p5))
        fail_msg("queue rows or order: %p %p %p %p %p\n%s", (void *)p1, (void *)p2, (void *)p3,
                 (void *)p4, (void *)p5, fr);
    assert_null(strstr(fr, "more"));
    assert_null(strchr(fr, '\x1b'));
    free(fr);

    /* an empty cluster: still a frame, saying so */
    json_t *none = parse("{\"jobs\":[]}"), *nonodes = parse("{\"nodes\":[]}");
    in.nodes = nonodes;
    in.running = in.pending = none;
    in.ping = NULL;
    in.note = "cannot reach the controller\x1b[2J";
    fr = cli_top_frame(&in);
    assert_non_null(fr);
    /* (an escape sequence in a message is shown, not obeyed) */
    has(fr, "drover top - http://10.0.0.1:6817  2027-01-15 08:00:00\n! cannot reach "
            "the controller?[2J\n");
    has(fr, "jobs: 0 running, 0 pending\n");
    has(fr, "(no jobs running or pending)\n");
    free(fr);
    json_decref(none);
    json_decref(nonodes);
    json_decref(ping);
}

static void test_frame_cut(void **state)
{
    fx_t *f = *state;
    /* 30 nodes and 40 pending jobs on a 50x24 screen */
    json_t *nodes = json_pack("{s:[]}", "nodes"),
           *pend = json_pack("{s:[],s:b}", "jobs", "truncated", 1);
    for (int i = 0; i < 30; i++) {
        char name[16];
        snprintf(name, sizeof name, "node%02d", i);
        json_array_append_new(json_object_get(nodes, "nodes"),
                              json_pack("{s:s,s:s,s:s,s:i,s:i}", "name", name, "state", "up",
                                        "gpu_type", "A100-80GB-SXM", "gpus", 8, "gpus_alloc", 8));
    }
    for (int i = 0; i < 40; i++)
        json_array_append_new(json_object_get(pend, "jobs"),
                              json_pack("{s:i,s:s,s:s,s:s,s:f,s:s}", "id", 100 + i, "user", "dave",
                                        "kind", "batch", "state", "pending", "submit_time",
                                        NOW - 30, "reason",
                                        "waiting for 8 GPUs of A100-80GB-SXM, a long reason"));
    json_t *none = parse("{\"jobs\":[]}");
    cli_top_input_t in = {.controller = "/run/drover/droverd.sock",
                          .nodes = nodes,
                          .running = none,
                          .pending = pend,
                          .cat = &f->cat,
                          .now = NOW,
                          .width = 50,
                          .height = 24};
    char *fr = cli_top_frame(&in);
    assert_non_null(fr);
    assert_int_equal(count_lines(fr), 24);
    for (const char *p = fr; *p;) {
        const char *nl = strchr(p, '\n');
        if (nl - p > 50)
            fail_msg("line wider than 50: '%.*s'", (int)(nl - p), p);
        p = nl + 1;
    }
    /* the listing was cut by the server: the count is a floor */
    has(fr, "jobs: 0 running, 40+ pending");
    /* both sections cut, each saying how much it left out; nodes first */
    const char *mn = strstr(fr, "\n... "), *mj = mn ? strstr(mn + 1, "\n... ") : NULL;
    if (!mn || !mj || !strstr(mn, "more nodes\n") || !strstr(mj, "more jobs\n"))
        fail_msg("no '... N more' lines:\n%s", fr);
    has(fr, "\nnode00 ");
    has(fr, "\n100 ");
    /* shown + left out = all */
    int nshown = 0, jshown = 0;
    for (const char *p = fr; (p = strstr(p, "\nnode")) != NULL; p++)
        nshown++;
    for (const char *p = fr; (p = strstr(p, "\n1")) != NULL; p++)
        jshown++;
    int nmore = atoi(mn + 5), jmore = atoi(mj + 5);
    assert_int_equal(nshown + nmore, 30);
    assert_int_equal(jshown + jmore, 40);
    free(fr);

    /* few nodes: the queue takes the room they leave */
    json_t *two = parse("{\"nodes\":[{\"name\":\"a\",\"state\":\"up\",\"gpu_type\":\"A100\","
                        "\"gpus\":8,\"gpus_alloc\":8},{\"name\":\"b\",\"state\":\"up\","
                        "\"gpu_type\":\"A100\",\"gpus\":8,\"gpus_alloc\":8}]}");
    in.nodes = two;
    in.width = 0;
    fr = cli_top_frame(&in);
    assert_int_equal(count_lines(fr), 24);
    has(fr, "\nb  ");
    assert_null(strstr(fr, "more node"));
    has(fr, "more jobs\n");
    free(fr);

    /* a tiny screen: at most its height, whatever is left out */
    in.height = 3;
    fr = cli_top_frame(&in);
    assert_int_equal(count_lines(fr), 3);
    free(fr);
    json_decref(two);
    json_decref(none);
    json_decref(nodes);
    json_decref(pend);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_from_nodes),
        cmocka_unit_test(test_summary_from_stats),
        cmocka_unit_test(test_bar),
        cmocka_unit_test(test_frame_whole),
        cmocka_unit_test(test_frame_cut),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
