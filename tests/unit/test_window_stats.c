/* test_window_stats.c - the lower bound, slowdown and finish-time fairness
 * (dr_window_stats, dr_lower_bounds) on a six-job workload whose every
 * figure is computed by hand below.
 *
 * Cluster: node h0 with 4 H100s, node l0 with 4 L40Ss: G = 8, G_H100 =
 * G_L40S = 4.  Perf classes: "fast" runs 2 work units/s on an H100 and 1 on
 * an L40S; class 0 runs 1 unit/s anywhere; "nowhere" runs on neither.
 *
 *   id  class    GPUs  work  submit  outcome            lower bound
 *   1   fast     1     200   0       completed at 150   200 / 2 = 100
 *   2   0        4     100   0       completed at 300   100 / 1 = 100
 *   3   fast     1     100   50      still running      100 / 2 =  50
 *   4   fast     4     400   60      completed at 400   400 / 2 = 200
 *   5   fast     1      60   350     cancelled at 360    60 / 2 =  30
 *   6   nowhere  1      10   10      "completed" at 20   none (NAN)
 *
 * Every job: jobs 6, completed 4 (1, 2, 4, 6), unfinished 1 (3); measured
 * = the completed jobs with a lower bound = 1, 2, 4.
 *   JCT: 150, 300, 340 -> avg 790 / 3 = 263.33; p50 (rank ceil(1.5) = 2) =
 *   300; p99 (rank 3) = 340.
 *   lower bound avg over the same jobs: (100 + 100 + 200) / 3 = 133.33 (over
 *   every job with a bound, as before the fix: (100+100+50+200+30) / 5 = 96).
 *   slowdown: 150/100 = 1.5, 300/100 = 3, 340/200 = 1.7 -> avg 6.2 / 3,
 *   p99 = max = 3.
 *   FTF = JCT / (work / (s * mix)), s = min(1, G / (N * g)), mix = sum over
 *   the job's types of G_k / G * rate_k, N = jobs submitted at or before its
 *   submit minus jobs ended by then:
 *     job 1: N = 2 (1, 2), g = 1: s = min(1, 8/2) = 1; mix = 0.5*2 + 0.5*1
 *            = 1.5; fair time 200 / 1.5 = 133.33; FTF = 150 / 133.33 = 1.125
 *     job 2: N = 2, g = 4: s = min(1, 8/8) = 1; mix = 0.5 + 0.5 = 1; fair
 *            time 100; FTF = 300 / 100 = 3
 *     job 4: N = 5 submitted (1, 2, 3, 4, 6) - 1 ended (6, at 20) = 4,
 *            g = 4: s = 8 / 16 = 0.5; mix = 1.5; fair time 400 / 0.75 =
 *            533.33; FTF = 340 / 533.33 = 0.6375
 *   avg FTF = (1.125 + 3 + 0.6375) / 3 = 1.5875, max 3.
 *   makespan: first submit (0) to the last measured end (400) = 400.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drover/sim.h"
#include "drover/workload.h"
#include "testutil.h"

#define H100 "H100-SXM-80GB"
#define L40S "L40S-48GB"

static void near(double got, double want, const char *what)
{
    if (!(fabs(got - want) <= 1e-9 * fmax(1.0, fabs(want))))
        fail_msg("%s: got %.17g, want %.17g", what, got, want);
}
#define NEAR(got, want) near((got), (want), #got)

typedef struct fixture {
    dr_cluster_t c;
    dr_workload_t wl;
    dr_sim_result_t res; /* the final job states, set by hand */
} fixture_t;

static void add(dr_workload_t *wl, uint64_t id, uint32_t cls, uint32_t gpus, double work,
                double submit)
{
    dr_job_t j;
    dr_job_init(&j);
    j.id = id;
    j.perf_class = cls;
    j.req.nodes = 1;
    j.req.gpus_per_node = gpus;
    j.work_declared = work;
    j.submit = dr_time_from_s(submit);
    assert_int_equal(dr_workload_add(wl, &j, work, NULL), DR_OK);
}

/* Job `id` of the result ends in `state` at `end` seconds. */
static void ends(fixture_t *f, uint64_t id, dr_job_state_t state, double end)
{
    for (size_t i = 0; i < f->res.njobs; i++)
        if (f->res.jobs[i].id == id) {
            f->res.jobs[i].state = (uint8_t)state;
            f->res.jobs[i].end = dr_time_from_s(end);
            return;
        }
    fail_msg("no job %llu", (unsigned long long)id);
}

static fixture_t *fixture_new(void)
{
    fixture_t *f = calloc(1, sizeof *f);
    assert_non_null(f);
    tu_cluster(&f->c, "NodeName=h0 Gpus=" H100 ":4 Cpus=64 MemGB=512\n"
                      "NodeName=l0 Gpus=" L40S ":4 Cpus=64 MemGB=512\n");
    dr_workload_init(&f->wl);
    const char *cols[] = {H100, L40S};
    assert_int_equal(dr_perf_set_types(&f->wl.perf, cols, 2), DR_OK);
    int fast = dr_perf_add_class(&f->wl.perf, "fast", (const double[]){2, 1});
    int nowhere = dr_perf_add_class(&f->wl.perf, "nowhere", (const double[]){0, 0});
    assert_true(fast > 0 && nowhere > 0);
    add(&f->wl, 1, (uint32_t)fast, 1, 200, 0);
    add(&f->wl, 2, 0, 4, 100, 0);
    add(&f->wl, 3, (uint32_t)fast, 1, 100, 50);
    add(&f->wl, 4, (uint32_t)fast, 4, 400, 60);
    add(&f->wl, 5, (uint32_t)fast, 1, 60, 350);
    add(&f->wl, 6, (uint32_t)nowhere, 1, 10, 10);
    tu_workload_ready(&f->wl, &f->c);
    /* the run: a copy of the jobs in the workload's order, as dr_sim_run returns them */
    f->res.njobs = f->wl.njobs;
    f->res.jobs = malloc(f->wl.njobs * sizeof *f->res.jobs);
    assert_non_null(f->res.jobs);
    memcpy(f->res.jobs, f->wl.jobs, f->wl.njobs * sizeof *f->res.jobs);
    dr_eventlog_init(&f->res.log);
    ends(f, 1, DR_JOB_COMPLETED, 150);
    ends(f, 2, DR_JOB_COMPLETED, 300);
    ends(f, 3, DR_JOB_RUNNING, 0);
    ends(f, 4, DR_JOB_COMPLETED, 400);
    ends(f, 5, DR_JOB_CANCELLED, 360);
    ends(f, 6, DR_JOB_COMPLETED, 20);
    return f;
}

static void fixture_free(fixture_t *f)
{
    dr_sim_result_free(&f->res);
    dr_workload_free(&f->wl);
    dr_cluster_free(&f->c);
    free(f);
}

/* wl->jobs index of job id */
static size_t at(const fixture_t *f, uint64_t id)
{
    for (size_t i = 0; i < f->wl.njobs; i++)
        if (f->wl.jobs[i].id == id)
            return i;
    fail_msg("no job %llu", (unsigned long long)id);
    return 0;
}

static void test_lower_bounds(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    double lb[6];
    dr_err_t err;
    assert_int_equal(dr_lower_bounds(&f->c, &f->wl, lb, &err), DR_OK);
    NEAR(lb[at(f, 1)], 100);
    NEAR(lb[at(f, 2)], 100);
    NEAR(lb[at(f, 3)], 50);
    NEAR(lb[at(f, 4)], 200);
    NEAR(lb[at(f, 5)], 30);
    assert_true(isnan(lb[at(f, 6)]));
    fixture_free(f);
}

static void test_all_jobs(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    dr_window_stats_t w;
    dr_err_t err;
    assert_int_equal(dr_window_stats(&f->res, &f->c, &f->wl, 0, 0, &w, &err), DR_OK);
    assert_int_equal(w.jobs, 6);
    assert_int_equal(w.completed, 4);
    assert_int_equal(w.unfinished, 1);
    assert_int_equal(w.measured, 3);
    NEAR(w.avg_jct_s, 790.0 / 3);
    NEAR(w.p50_jct_s, 300);
    NEAR(w.p99_jct_s, 340);
    /* the lower bound over the same three jobs as avg JCT (it was 96, over
     * every job, unfinished and cancelled ones included) */
    NEAR(w.lower_bound_avg_jct_s, 400.0 / 3);
    NEAR(w.avg_slowdown, 6.2 / 3);
    NEAR(w.p99_slowdown, 3);
    NEAR(w.max_slowdown, 3);
    NEAR(w.avg_ftf, (1.125 + 3 + 0.6375) / 3);
    NEAR(w.max_ftf, 3);
    NEAR(w.makespan_s, 400);
    fixture_free(f);
}

/* ids 2..4: jobs 2 (completed), 3 (running), 4 (completed).  Lower bound
 * (100 + 200) / 2 = 150 (it was (100 + 50 + 200) / 3 = 116.67); JCT (300 +
 * 340) / 2 = 320; slowdown 3 and 1.7; FTF 3 and 0.6375 (N counts every
 * job in the system, inside the window or not); makespan 0 to 400. */
static void test_window(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    dr_window_stats_t w;
    dr_err_t err;
    assert_int_equal(dr_window_stats(&f->res, &f->c, &f->wl, 2, 4, &w, &err), DR_OK);
    assert_int_equal(w.jobs, 3);
    assert_int_equal(w.completed, 2);
    assert_int_equal(w.unfinished, 1);
    assert_int_equal(w.measured, 2);
    NEAR(w.avg_jct_s, 320);
    NEAR(w.lower_bound_avg_jct_s, 150);
    NEAR(w.avg_slowdown, (3 + 1.7) / 2);
    NEAR(w.max_slowdown, 3);
    NEAR(w.avg_ftf, (3 + 0.6375) / 2);
    NEAR(w.max_ftf, 3);
    NEAR(w.makespan_s, 400);
    fixture_free(f);
}

/* Nothing completed: every figure is unknown, never 0 or an average over
 * other jobs. */
static void test_none_completed(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    dr_window_stats_t w;
    dr_err_t err;
    assert_int_equal(dr_window_stats(&f->res, &f->c, &f->wl, 3, 3, &w, &err), DR_OK);
    assert_int_equal(w.jobs, 1);
    assert_int_equal(w.completed, 0);
    assert_int_equal(w.unfinished, 1);
    assert_int_equal(w.measured, 0);
    assert_true(isnan(w.avg_jct_s));
    assert_true(isnan(w.lower_bound_avg_jct_s));
    assert_true(isnan(w.avg_slowdown));
    assert_true(isnan(w.avg_ftf));
    /* a result that is not a run of this workload */
    f->res.njobs--;
    assert_int_equal(dr_window_stats(&f->res, &f->c, &f->wl, 0, 0, &w, &err), DR_EINVAL);
    f->res.njobs++;
    fixture_free(f);
}

/* The same through the simulator: two 1-GPU jobs of 100 s (class 0) on one
 * GPU, both at t = 0.  FIFO runs job 1 on 0..100, job 2 on 100..200.  Lower
 * bounds 100 and 100; JCT 100 and 200; slowdown 1 and 2; N = 2 for both,
 * s = min(1, 1 / 2) = 0.5, fair time 100 / 0.5 = 200: FTF 0.5 and 1. */
static void test_simulated(void **state)
{
    (void)state;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=g0 Gpus=" H100 ":1 Cpus=8 MemGB=64\n");
    dr_workload_t wl;
    dr_workload_init(&wl);
    add(&wl, 1, 0, 1, 100, 0);
    add(&wl, 2, 0, 1, 100, 0);
    tu_workload_ready(&wl, &c);
    dr_sim_result_t res;
    tu_sim(&c, &wl, "fifo", &res);
    dr_window_stats_t w;
    dr_err_t err;
    assert_int_equal(dr_window_stats(&res, &c, &wl, 0, 0, &w, &err), DR_OK);
    assert_int_equal(w.measured, 2);
    NEAR(w.avg_jct_s, 150);
    NEAR(w.lower_bound_avg_jct_s, 100);
    NEAR(w.avg_slowdown, 1.5);
    NEAR(w.max_slowdown, 2);
    NEAR(w.avg_ftf, 0.75);
    NEAR(w.max_ftf, 1);
    dr_sim_result_free(&res);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lower_bounds), cmocka_unit_test(test_all_jobs),
        cmocka_unit_test(test_window),       cmocka_unit_test(test_none_completed),
        cmocka_unit_test(test_simulated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
