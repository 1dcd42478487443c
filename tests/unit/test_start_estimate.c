/* test_start_estimate.c - the `--test-only` start estimate (sched/
 * start_estimate.c): an empty cluster starts now, a full one when the first
 * limit ends, a job ahead that takes the freed GPUs pushes the start later,
 * a short job backfills before a reservation and a long one does not, and
 * an impossible request never starts, saying why. */
#include <string.h>

#include "drover/placement.h"
#include "drover/start_estimate.h"
#include "testutil.h"

#define S(x) dr_time_from_s(x)

/* n0, n1: 4 A GPUs each */
static void build(dr_cluster_t *c)
{
    dr_cluster_init(c);
    dr_gpu_spec_t s;
    dr_gpu_spec_unknown(&s, "A");
    s.mem_gb = 80;
    assert_true(dr_cluster_add_type(c, &s, NULL) >= 0);
    dr_gpu_spec_free(&s);
    assert_true(dr_cluster_add_node(c, "n0", 0, 4, 32000, 256000, NULL) >= 0);
    assert_true(dr_cluster_add_node(c, "n1", 0, 4, 32000, 256000, NULL) >= 0);
    assert_int_equal(dr_cluster_finalize(c, NULL), DR_OK);
}

static dr_job_req_t req(uint32_t nodes, uint32_t gpn)
{
    return (dr_job_req_t){.nodes = nodes, .gpus_per_node = gpn, .gpu_milli = 1000};
}

static void est(const dr_cluster_t *c, const dr_est_running_t *run, size_t nrun,
                const dr_est_job_t *ahead, size_t nahead, dr_job_req_t r, double limit,
                dr_start_est_t *out)
{
    dr_est_job_t j = {.req = &r, .limit = S(limit)};
    dr_err_t err = {0};
    assert_int_equal(dr_start_estimate(c, S(10), run, nrun, ahead, nahead, &j, out, &err), DR_OK);
}

/* The node an estimate's allocation is on (its first slot). */
static uint32_t node_of(const dr_start_est_t *e)
{
    assert_true(e->alloc.nslots > 0);
    return e->alloc.slots[0].node;
}

static void test_empty_starts_now(void **st)
{
    (void)st;
    dr_cluster_t c;
    build(&c);
    dr_start_est_t e;
    est(&c, NULL, 0, NULL, 0, req(2, 4), 60, &e);
    assert_true(e.start == S(10));
    assert_int_equal(e.alloc.nnodes, 2);
    assert_string_equal(e.reason, "");
    dr_alloc_free(&e.alloc);
    /* the caller's cluster is untouched */
    assert_int_equal(dr_cluster_free_milli(&c, 0), 8000);
    dr_cluster_free(&c);
}

/* n0 held until 100 s, n1 until 50 s */
static void fill(dr_cluster_t *c, dr_alloc_t a[2], dr_est_running_t run[2])
{
    build(c);
    dr_place_opts_t ff = {.strategy = DR_PLACE_FIRST_FIT};
    dr_job_req_t r = req(1, 4);
    assert_int_equal(dr_place(c, &r, 1, &ff, &a[0]), DR_OK);
    assert_int_equal(dr_place(c, &r, 1, &ff, &a[1]), DR_OK);
    assert_int_equal(a[0].slots[0].node, 0);
    assert_int_equal(a[1].slots[0].node, 1);
    run[0] = (dr_est_running_t){.alloc = &a[0], .end = S(100)};
    run[1] = (dr_est_running_t){.alloc = &a[1], .end = S(50)};
}

static void unfill(dr_cluster_t *c, dr_alloc_t a[2])
{
    dr_alloc_free(&a[0]);
    dr_alloc_free(&a[1]);
    dr_cluster_free(c);
}

static void test_full_starts_at_first_limit(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_alloc_t a[2];
    dr_est_running_t run[2];
    fill(&c, a, run);
    dr_start_est_t e;
    est(&c, run, 2, NULL, 0, req(1, 4), 60, &e);
    assert_true(e.start == S(50));
    assert_int_equal(node_of(&e), 1);
    dr_alloc_free(&e.alloc);
    /* both nodes: when the later one ends */
    est(&c, run, 2, NULL, 0, req(2, 4), 60, &e);
    assert_true(e.start == S(100));
    dr_alloc_free(&e.alloc);
    /* a limit already past (the job is being stopped): free now */
    run[1].end = S(5);
    est(&c, run, 2, NULL, 0, req(1, 2), 60, &e);
    assert_true(e.start == S(10));
    dr_alloc_free(&e.alloc);
    unfill(&c, a);
}

static void test_job_ahead_pushes_later(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_alloc_t a[2];
    dr_est_running_t run[2];
    fill(&c, a, run);
    dr_job_req_t r4 = req(1, 4);
    dr_est_job_t ahead = {.req = &r4, .limit = S(200)};
    dr_start_est_t e;
    /* the job ahead takes n1 at 50 s (until 250 s): the new one gets n0 at 100 s */
    est(&c, run, 2, &ahead, 1, req(1, 4), 60, &e);
    assert_true(e.start == S(100));
    assert_int_equal(node_of(&e), 0);
    assert_int_equal(e.ahead_placed, 1);
    dr_alloc_free(&e.alloc);
    /* and behind two such jobs it waits for the first one's end */
    dr_est_job_t two[2] = {ahead, ahead};
    est(&c, run, 2, two, 2, req(1, 4), 60, &e);
    assert_true(e.start == S(250));
    dr_alloc_free(&e.alloc);
    unfill(&c, a);
}

static void test_backfill_around_reservation(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_alloc_t a[2];
    dr_est_running_t run[2];
    fill(&c, a, run);
    /* ahead: both nodes, from 100 s to 200 s */
    dr_job_req_t r8 = req(2, 4);
    dr_est_job_t ahead = {.req = &r8, .limit = S(100)};
    dr_start_est_t e;
    /* 30 s on n1 from 50 s ends by 80 s, before the reservation */
    est(&c, run, 2, &ahead, 1, req(1, 4), 30, &e);
    assert_true(e.start == S(50));
    dr_alloc_free(&e.alloc);
    /* 60 s would run into it: after it, at 200 s */
    est(&c, run, 2, &ahead, 1, req(1, 4), 60, &e);
    assert_true(e.start == S(200));
    dr_alloc_free(&e.alloc);
    /* no limit: only after it too */
    est(&c, run, 2, &ahead, 1, req(1, 4), 0, &e);
    assert_true(e.start == S(200));
    dr_alloc_free(&e.alloc);
    unfill(&c, a);
}

/* Shares of a GPU and CPUs count as placement counts them: a half GPU
 * does not fit beside 600 milli, 16 CPUs do not fit beside 24 of 32. */
static void test_shares_and_cpus(void **st)
{
    (void)st;
    dr_cluster_t c;
    build(&c);
    dr_place_opts_t ff = {.strategy = DR_PLACE_FIRST_FIT};
    dr_job_req_t part = {.nodes = 1, .gpus_per_node = 1, .gpu_milli = 600};
    dr_job_req_t three = req(1, 3), four = req(1, 4);
    dr_alloc_t a[3];
    assert_int_equal(dr_place(&c, &part, 1, &ff, &a[0]), DR_OK);  /* n0 GPU 0 */
    assert_int_equal(dr_place(&c, &three, 1, &ff, &a[1]), DR_OK); /* n0 GPUs 1-3 */
    four.cpu_milli_per_node = 24000;
    assert_int_equal(dr_place(&c, &four, 1, &ff, &a[2]), DR_OK); /* n1, 24 CPUs */
    assert_int_equal(a[2].slots[0].node, 1);
    dr_est_running_t run[3] = {{&a[0], S(100)}, {&a[1], S(80)}, {&a[2], S(50)}};
    dr_start_est_t e;
    /* half a GPU: not beside the 600 milli, so when n1 frees at 50 s */
    dr_job_req_t half = {.nodes = 1, .gpus_per_node = 1, .gpu_milli = 500};
    est(&c, run, 3, NULL, 0, half, 60, &e);
    assert_true(e.start == S(50));
    dr_alloc_free(&e.alloc);
    /* 400 milli fit now, beside it */
    half.gpu_milli = 400;
    est(&c, run, 3, NULL, 0, half, 60, &e);
    assert_true(e.start == S(10));
    assert_int_equal(node_of(&e), 0);
    dr_alloc_free(&e.alloc);
    /* a CPU job of 16 CPUs: n0 has all 32 free now */
    dr_job_req_t cpu = {.nodes = 1, .cpu_milli_per_node = 16000};
    est(&c, run, 3, NULL, 0, cpu, 60, &e);
    assert_true(e.start == S(10));
    dr_alloc_free(&e.alloc);
    /* ahead: a CPU job of 32 CPUs takes n0 now until 1000 s; then 16 CPUs
     * wait for n1's 24 to be given back at 50 s */
    dr_job_req_t cpu32 = {.nodes = 1, .cpu_milli_per_node = 32000};
    dr_est_job_t ahead = {.req = &cpu32, .limit = S(990)};
    est(&c, run, 3, &ahead, 1, cpu, 60, &e);
    assert_true(e.start == S(50));
    assert_int_equal(node_of(&e), 1);
    dr_alloc_free(&e.alloc);
    for (int i = 0; i < 3; i++)
        dr_alloc_free(&a[i]);
    dr_cluster_free(&c);
}

static void test_never(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_alloc_t a[2];
    dr_est_running_t run[2];
    fill(&c, a, run);
    dr_start_est_t e;
    /* more GPUs on one node than any node has */
    est(&c, run, 2, NULL, 0, req(1, 8), 60, &e);
    assert_true(e.start == DR_TIME_NEVER);
    assert_int_equal(e.alloc.nslots, 0);
    assert_true(e.reason[0] != '\0');
    tu_assert_contains(e.reason, "8");
    /* more nodes than the cluster has */
    est(&c, run, 2, NULL, 0, req(3, 1), 60, &e);
    assert_true(e.start == DR_TIME_NEVER);
    assert_true(e.reason[0] != '\0');
    /* possible, but both nodes are held by jobs without limits */
    run[0].end = run[1].end = DR_TIME_NEVER;
    est(&c, run, 2, NULL, 0, req(1, 1), 60, &e);
    assert_true(e.start == DR_TIME_NEVER);
    tu_assert_contains(e.reason, "no start time");
    unfill(&c, a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_starts_now),
        cmocka_unit_test(test_full_starts_at_first_limit),
        cmocka_unit_test(test_job_ahead_pushes_later),
        cmocka_unit_test(test_backfill_around_reservation),
        cmocka_unit_test(test_shares_and_cpus),
        cmocka_unit_test(test_never),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
