/* test_compare.c - several policies on one workload (compare.h): splitting
 * the policy list (options use ',' too), each run's report, and the JSON
 * `drover sim --json` prints. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/compare.h"
#include "drover/config.h"
#include "testutil.h"

/* Split `list` and compare with the '|'-joined specs (NULL: must fail with
 * code, its message containing `msg`). */
static void split_is(const char *list, size_t max, const char *want, int code, const char *msg)
{
    char **p = (char **)1;
    size_t n = 99;
    dr_err_t err = {0};
    int rc = dr_compare_policies_split(list, max, &p, &n, &err);
    if (!want) {
        if (rc != code)
            fail_msg("'%s': rc %d, want %d (%s)", list ? list : "(null)", rc, code, err.msg);
        tu_assert_contains(err.msg, msg);
        assert_null(p);
        assert_int_equal(n, 0);
        return;
    }
    if (rc != DR_OK)
        fail_msg("'%s': %s", list, err.msg);
    char got[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(got + len, sizeof got - len, "%s%s", i ? "|" : "", p[i]);
    assert_string_equal(got, want);
    dr_compare_policies_free(p, n);
}

static void test_policies_split(void **st)
{
    (void)st;
    split_is("fifo", 16, "fifo", 0, NULL);
    split_is("fifo,backfill,sjf", 16, "fifo|backfill|sjf", 0, NULL);
    /* a policy's options continue until a word names a policy */
    split_is("backfill:depth=5,fifo", 16, "backfill:depth=5|fifo", 0, NULL);
    split_is("drover:a=1,b=2,fifo,cost:x=3", 16, "drover:a=1,b=2|fifo|cost:x=3", 0, NULL);
    split_is(",fifo,,backfill,", 16, "fifo|backfill", 0, NULL); /* empty words skipped */
    split_is("fifo,a=1", 16, "fifo,a=1", 0, NULL); /* options (the policy judges them) */
    split_is("fifo,lottery", 16, NULL, DR_ENOENT, "unknown policy 'lottery'");
    split_is("a=1,fifo", 16, NULL, DR_ENOENT, "unknown policy 'a=1'"); /* nothing to continue */
    split_is("lottery:x=1", 16, NULL, DR_ENOENT, "unknown policy 'lottery'");
    split_is("fifo,sjf,srtf", 2, NULL, DR_ELIMIT, "at most 2 policies");
    split_is("fifo,sjf,a=1", 2, "fifo|sjf,a=1", 0, NULL); /* options do not count */
    split_is(",,,", 16, NULL, DR_EINVAL, "empty list");
    split_is("", 16, NULL, DR_EINVAL, "empty list");
    split_is(NULL, 16, NULL, DR_EINVAL, "empty list");
}

static void test_gavel_steady_gpus(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_cluster_init(&c);
    dr_err_t err;
    assert_int_equal(dr_cluster_preset(&c, NULL, "gavel-36-36-36", &err), DR_OK);
    uint32_t g[3] = {7, 7, 7};
    dr_gavel_steady_gpus(&c, g);
    assert_true(g[0] == 36 && g[1] == 36 && g[2] == 36);
    dr_cluster_free(&c);
    tu_cluster(&c, "NodeName=n[1-2] Gpus=H100:8 Cpus=8 MemGB=64\n");
    dr_gavel_steady_gpus(&c, g);
    assert_true(g[0] == 0 && g[1] == 0 && g[2] == 0);
    dr_cluster_free(&c);
}

/* Two policies on a small workload, reported and turned into JSON: every
 * run's report fields, then what only the run knows, then the comparison's
 * own fields, in that order. */
static void test_report_and_json(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=n[1-2] Gpus=H100:8 Cpus=64 MemGB=512\n");
    dr_workload_t wl;
    dr_workload_init(&wl);
    for (uint64_t i = 1; i <= 6; i++)
        tu_add_job(&wl, i, 10.0 * (double)i, 1, 8, 600, 600, 1200, NULL);
    tu_workload_ready(&wl, &c);
    const char *pols[2] = {"fifo", "sjf"};
    dr_report_t rep[2];
    dr_sim_result_t res[2];
    dr_window_stats_t win[2];
    double wall[2] = {0.25, 0.5};
    dr_err_t err;
    for (int i = 0; i < 2; i++) {
        dr_sim_opts_t o;
        dr_sim_opts_default(&o);
        o.policy = pols[i];
        o.stop_first = 2; /* a window of ids 2..5 */
        o.stop_last = 5;
        assert_int_equal(dr_sim_run(&c, &wl, &o, &res[i], &err), DR_OK);
        assert_int_equal(dr_compare_report(&c, &wl, &o, &res[i], 50, &rep[i], &win[i], &err),
                         DR_OK);
        assert_string_equal(rep[i].policy, pols[i]);
        assert_int_equal(rep[i].jobs, 4); /* the window's */
        assert_true(rep[i].sim.set && rep[i].sim.window && rep[i].sim.bound);
        assert_int_equal(win[i].jobs, 4);
        assert_true(rep[i].util_series.n <= 50);
        assert_true(fabs(rep[i].sim.total_cost_usd - rep[i].cost_usd) < 1e-9); /* no cloud */
    }
    dr_declare_opts_t d;
    dr_declare_opts_default(&d);
    d.mode = DR_SIZE_EXACT;
    dr_compare_info_t info = {.trace_rows_skipped = 3, .declared = &d, .restart_overhead_s = 30};
    char *s = dr_compare_json(rep, res, win, wall, 2, &info);
    assert_non_null(s);
    assert_int_equal(s[strlen(s) - 1], '\n');
    json_error_t je;
    json_t *root = json_loads(s, 0, &je);
    assert_non_null(root);
    json_t *arr = json_object_get(root, "policies");
    assert_int_equal(json_array_size(arr), 2);
    json_t *o = json_array_get(arr, 1);
    assert_string_equal(json_string_value(json_object_get(o, "name")), "sjf");
    assert_true(json_real_value(json_object_get(o, "sim_wall_s")) == 0.5);
    assert_int_equal(json_integer_value(json_object_get(o, "sched_passes")),
                     (json_int_t)res[1].stats.passes);
    assert_int_equal(json_integer_value(json_object_get(o, "window_jobs")), 4);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(o, "starts_by_locality"), "node")),
        (json_int_t)res[1].stats.starts_by_locality[DR_LOC_NODE]);
    assert_true(fabs(json_number_value(json_object_get(o, "total_cost_usd")) -
                     rep[1].sim.total_cost_usd) <= 1e-9 * rep[1].sim.total_cost_usd);
    /* the report's own fields come first, the run's after per_type */
    const char *k1 = strstr(s, "\"per_type\""), *k2 = strstr(s, "\"sim_wall_s\"");
    assert_true(k1 && k2 && k1 < k2);
    assert_int_equal(json_integer_value(json_object_get(root, "trace_rows_skipped")), 3);
    assert_string_equal(json_string_value(json_object_get(root, "size_estimate")), "exact");
    assert_true(json_is_true(json_object_get(root, "size_estimate_is_oracle")));
    assert_true(json_real_value(json_object_get(root, "restart_overhead_s")) == 30);
    /* keys after "policies", in this order */
    const char *a = strstr(s, "\"trace_rows_skipped\""), *b = strstr(s, "\"size_estimate\""),
               *e = strstr(s, "\"restart_overhead_s\"");
    assert_true(a && b && e && strstr(s, "\"policies\"") < a && a < b && b < e);
    json_decref(root);
    free(s);
    for (int i = 0; i < 2; i++) {
        dr_report_free(&rep[i]);
        dr_sim_result_free(&res[i]);
    }
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policies_split),
        cmocka_unit_test(test_gavel_steady_gpus),
        cmocka_unit_test(test_report_and_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
