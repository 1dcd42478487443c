/* test_start_estimate.c - the `--test-only` start estimate (sched/
 * start_estimate.c): an empty cluster starts now, a full one when the first
 * limit ends, a job ahead that takes the freed GPUs pushes the start later,
 * a short job backfills before a reservation and a long one does not, and
 * an impossible request never starts, saying why.  What the controller
 * enforces besides room: a held job ahead reserves nothing; a job ahead
 * waiting for a dependency reserves from when it holds (and is planned
 * after the job it waits for, wherever that is in the order); the new
 * job's own dependency; an account at its MaxRunningGpus waits for room,
 * its reservations ahead counted; and the order the jobs ahead are taken
 * in is the queue's, fair share included (dr_sched_queue_before). */
#include <string.h>

#include "drover/placement.h"
#include "drover/sched.h"
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
    dr_est_running_t run[3] = {{.alloc = &a[0], .end = S(100)},
                               {.alloc = &a[1], .end = S(80)},
                               {.alloc = &a[2], .end = S(50)}};
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

/* A held job ahead reserves nothing, and one waiting for it gets no time. */
static void test_held_ahead(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_alloc_t a[2];
    dr_est_running_t run[2];
    fill(&c, a, run);
    dr_job_req_t r4 = req(1, 4);
    dr_est_dep_t on_held = {.job = 7};
    dr_est_job_t ahead[2] = {{.req = &r4, .limit = S(200), .id = 7, .held = true},
                             {.req = &r4, .limit = S(200), .id = 8, .deps = &on_held, .ndeps = 1}};
    dr_start_est_t e;
    /* not held, it would take n1 at 50 s and the new job n0 at 100 s */
    est(&c, run, 2, ahead, 1, req(1, 4), 60, &e);
    assert_true(e.start == S(50));
    assert_int_equal(node_of(&e), 1);
    assert_int_equal(e.ahead_placed, 0);
    assert_int_equal(e.ahead_held, 1);
    dr_alloc_free(&e.alloc);
    /* nor does a job that waits for the held one */
    est(&c, run, 2, ahead, 2, req(1, 4), 60, &e);
    assert_true(e.start == S(50));
    assert_int_equal(e.ahead_placed, 0);
    assert_int_equal(e.ahead_waiting, 1);
    dr_alloc_free(&e.alloc);
    unfill(&c, a);
}

/* Running jobs 11 (n0, until 100 s) and 12 (n1, until 50 s). */
static void fill_ids(dr_cluster_t *c, dr_alloc_t a[2], dr_est_running_t run[2])
{
    fill(c, a, run);
    run[0].id = 11;
    run[1].id = 12;
}

/* A job ahead waiting for a running job's end reserves from then: the new
 * job backfills before it, and one that needs both nodes waits for it,
 * saying so. */
static void test_dependency_ahead(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_alloc_t a[2];
    dr_est_running_t run[2];
    fill_ids(&c, a, run);
    dr_job_req_t r4 = req(1, 4);
    dr_est_dep_t on11 = {.job = 11};
    dr_est_job_t x = {.req = &r4, .limit = S(200), .id = 20, .deps = &on11, .ndeps = 1};
    dr_start_est_t e;
    /* x cannot take n1 at 50 s: it waits for 11 (100 s); 30 s fit before */
    est(&c, run, 2, &x, 1, req(1, 4), 30, &e);
    assert_true(e.start == S(50));
    assert_int_equal(e.ahead_placed, 1);
    dr_alloc_free(&e.alloc);
    /* both nodes: after x's 100 s to 300 s, not after 250 s */
    est(&c, run, 2, &x, 1, req(2, 4), 60, &e);
    assert_true(e.start == S(300));
    tu_assert_contains(e.why, "behind job 20's dependency on job 11");
    dr_alloc_free(&e.alloc);
    /* after: (its start) holds at once for a running job */
    on11.on_start = true;
    est(&c, run, 2, &x, 1, req(2, 4), 60, &e);
    assert_true(e.start == S(250));
    assert_string_equal(e.why, "");
    dr_alloc_free(&e.alloc);
    unfill(&c, a);
}

/* A job ahead waiting for one later in the order is planned right after
 * it (the controller queues it only then), not in its own place. */
static void test_dependency_order(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_alloc_t a[2];
    dr_est_running_t run[2];
    fill_ids(&c, a, run);
    dr_job_req_t r4 = req(1, 4);
    dr_est_dep_t on21 = {.job = 21};
    /* y waits for x, which comes after it: x takes n1 at 50 s to 150 s,
     * y from 150 s; the new job fits on n0 at 100 s for 30 s */
    dr_est_job_t ahead[2] = {{.req = &r4, .limit = S(100), .id = 20, .deps = &on21, .ndeps = 1},
                             {.req = &r4, .limit = S(100), .id = 21}};
    dr_start_est_t e;
    est(&c, run, 2, ahead, 2, req(1, 4), 30, &e);
    assert_true(e.start == S(100));
    assert_int_equal(node_of(&e), 0);
    assert_int_equal(e.ahead_placed, 2);
    dr_alloc_free(&e.alloc);
    /* both nodes: once y's 150 s to 250 s is over (in its own place, y
     * would take n1 at 50 s and x n0 at 100 s: 200 s) */
    est(&c, run, 2, ahead, 2, req(2, 4), 30, &e);
    assert_true(e.start == S(250));
    tu_assert_contains(e.why, "behind job 20's dependency on job 21");
    dr_alloc_free(&e.alloc);
    /* a job named that is nowhere here (not planned): y reserves nothing */
    on21.job = 99;
    est(&c, run, 2, ahead, 2, req(1, 4), 60, &e);
    assert_int_equal(e.ahead_waiting, 1);
    assert_int_equal(e.ahead_placed, 1);
    assert_true(e.start == S(100)); /* behind x alone */
    dr_alloc_free(&e.alloc);
    unfill(&c, a);
}

/* The new job's own dependencies: all terms, any of them (?), a ref that
 * holds already or never will, and one on a held job. */
static void test_own_dependency(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_alloc_t a[2];
    dr_est_running_t run[2];
    fill_ids(&c, a, run);
    dr_job_req_t r4 = req(1, 4), rj = req(1, 4);
    dr_est_job_t held = {.req = &r4, .limit = S(100), .id = 30, .held = true};
    dr_est_dep_t d[2] = {{.job = 11, .term = 0}, {.job = 30, .term = 1}};
    dr_est_job_t j = {.req = &rj, .limit = S(30), .deps = d, .ndeps = 1};
    dr_start_est_t e;
    dr_err_t err = {0};
    /* afterany:11: at 100 s, not at 50 s */
    assert_int_equal(dr_start_estimate(&c, S(10), run, 2, &held, 1, &j, &e, &err), DR_OK);
    assert_true(e.start == S(100));
    tu_assert_contains(e.why, "after its dependency on job 11");
    dr_alloc_free(&e.alloc);
    /* and on the held job too: never, saying which */
    j.ndeps = 2;
    assert_int_equal(dr_start_estimate(&c, S(10), run, 2, &held, 1, &j, &e, &err), DR_OK);
    assert_true(e.start == DR_TIME_NEVER);
    tu_assert_contains(e.reason, "job 30, which is held");
    /* either one (?): 11's end */
    j.dep_any = true;
    assert_int_equal(dr_start_estimate(&c, S(10), run, 2, &held, 1, &j, &e, &err), DR_OK);
    assert_true(e.start == S(100));
    dr_alloc_free(&e.alloc);
    /* decided already: holds (at, no job) or never */
    dr_est_dep_t done = {.at = S(5)};
    j = (dr_est_job_t){.req = &rj, .limit = S(30), .deps = &done, .ndeps = 1};
    assert_int_equal(dr_start_estimate(&c, S(10), run, 2, NULL, 0, &j, &e, &err), DR_OK);
    assert_true(e.start == S(50));
    dr_alloc_free(&e.alloc);
    done.at = DR_TIME_NEVER;
    assert_int_equal(dr_start_estimate(&c, S(10), run, 2, NULL, 0, &j, &e, &err), DR_OK);
    assert_true(e.start == DR_TIME_NEVER);
    tu_assert_contains(e.reason, "can never hold");
    unfill(&c, a);
}

/* Account a (1 + index 0) may hold 4 GPUs: n0, n1 of 4 A100s each. */
static void build_limited(dr_cluster_t *c)
{
    tu_cluster(c, "NodeName=n0 Gpus=A100:4 Cpus=32 MemGB=256\n"
                  "NodeName=n1 Gpus=A100:4 Cpus=32 MemGB=256\n"
                  "Account=a MaxRunningGpus=4\nAccount=b\n");
}

/* A job of an account at its limit waits for its running jobs (and its
 * reservations ahead) to leave room, with GPUs idle; other accounts do
 * not. */
static void test_account_limit(void **st)
{
    (void)st;
    dr_cluster_t c;
    build_limited(&c);
    dr_place_opts_t ff = {.strategy = DR_PLACE_FIRST_FIT};
    dr_job_req_t r4 = req(1, 4), r2 = req(1, 2);
    dr_alloc_t a0;
    assert_int_equal(dr_place(&c, &r4, ~0ULL, &ff, &a0), DR_OK); /* n0 */
    dr_est_running_t run = {.alloc = &a0, .end = S(100), .id = 1, .account = 1};
    dr_est_job_t j = {.req = &r2, .limit = S(30), .account = 1};
    dr_start_est_t e;
    dr_err_t err = {0};
    /* n1 is idle, but a holds its 4: at 100 s */
    assert_int_equal(dr_start_estimate(&c, S(10), &run, 1, NULL, 0, &j, &e, &err), DR_OK);
    assert_true(e.start == S(100));
    tu_assert_contains(e.why, "account a is at its limit MaxRunningGpus=4");
    dr_alloc_free(&e.alloc);
    /* b has no limit: now */
    j.account = 2;
    assert_int_equal(dr_start_estimate(&c, S(10), &run, 1, NULL, 0, &j, &e, &err), DR_OK);
    assert_true(e.start == S(10));
    dr_alloc_free(&e.alloc);
    /* a job of a ahead reserves a's 4 GPUs from 100 s to 200 s: a waits
     * for that too */
    dr_est_job_t ahead = {.req = &r4, .limit = S(100), .id = 2, .account = 1};
    j.account = 1;
    assert_int_equal(dr_start_estimate(&c, S(10), &run, 1, &ahead, 1, &j, &e, &err), DR_OK);
    assert_true(e.start == S(200));
    dr_alloc_free(&e.alloc);
    dr_alloc_free(&a0);
    dr_cluster_free(&c);
}

/* Room now is not enough: a start stands only if the account's later
 * takes before its end stay within the limit with it (here on other
 * nodes than its own, so the limit alone refuses it). */
static void test_account_limit_window(void **st)
{
    (void)st;
    dr_cluster_t c;
    build_limited(&c);
    dr_place_opts_t ff = {.strategy = DR_PLACE_FIRST_FIT};
    dr_job_req_t r1 = req(1, 1), r2 = req(1, 2), r4 = req(1, 4);
    dr_alloc_t a[3];
    assert_int_equal(dr_place(&c, &r1, ~0ULL, &ff, &a[0]), DR_OK); /* n0: b's, for good */
    assert_int_equal(dr_place(&c, &r2, ~0ULL, &ff, &a[1]), DR_OK); /* n0: a's 2 */
    assert_int_equal(dr_place(&c, &r4, ~0ULL, &ff, &a[2]), DR_OK); /* n1: b's 4 */
    assert_int_equal(a[1].slots[0].node, 0);
    assert_int_equal(a[2].slots[0].node, 1);
    dr_est_running_t run[3] = {{.alloc = &a[0], .end = DR_TIME_NEVER, .id = 1, .account = 2},
                               {.alloc = &a[1], .end = S(50), .id = 2, .account = 1},
                               {.alloc = &a[2], .end = S(50), .id = 3, .account = 2}};
    /* ahead: 4 GPUs of a, which only n1 can take: from 50 s to 150 s */
    dr_est_job_t ahead = {.req = &r4, .limit = S(100), .id = 4, .account = 1};
    dr_est_job_t j = {.req = &r1, .limit = S(100), .account = 1};
    dr_start_est_t e;
    dr_err_t err = {0};
    /* 2 + 1 fit now on n0's last GPU, but at 50 s a would hold 1 + 4: at 150 s */
    assert_int_equal(dr_start_estimate(&c, S(10), run, 3, &ahead, 1, &j, &e, &err), DR_OK);
    assert_int_equal(e.ahead_placed, 1);
    assert_true(e.start == S(150));
    tu_assert_contains(e.why, "account a's MaxRunningGpus leave it no room before then");
    dr_alloc_free(&e.alloc);
    /* 30 s end before it: now */
    j.limit = S(30);
    assert_int_equal(dr_start_estimate(&c, S(10), run, 3, &ahead, 1, &j, &e, &err), DR_OK);
    assert_true(e.start == S(10));
    assert_int_equal(node_of(&e), 0);
    dr_alloc_free(&e.alloc);
    for (int i = 0; i < 3; i++)
        dr_alloc_free(&a[i]);
    dr_cluster_free(&c);
}

/* The jobs ahead are those before it in the queue's order: with fair share
 * active, an older job of equal priority from an account that used more
 * comes after a new job of one that used less; priority still first. */
static void test_queue_order_ahead(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=n1 Gpus=H100:1 Cpus=8 MemGB=64\nAccount=a\nAccount=b\n");
    dr_sched_t *s;
    dr_sched_opts_t so = {.policy = "fifo", .placement = DR_PLACE_BEST_FIT};
    dr_err_t err;
    assert_int_equal(dr_sched_create(&s, &c, &so, &err), DR_OK);
    assert_int_equal(dr_sched_bind_account(s, 1, "a", &err), DR_OK);
    assert_int_equal(dr_sched_bind_account(s, 2, "b", &err), DR_OK);
    dr_job_t first, x, y;
    dr_job_init(&first);
    first.id = 1;
    first.account = 1;
    first.time_limit = S(400);
    assert_int_equal(dr_sched_submit(s, &first, 0, &err), DR_OK);
    dr_pass_result_t pr = {0};
    assert_int_equal(dr_sched_pass(s, 0, &pr, &err), DR_OK);
    assert_int_equal(pr.nstarted, 1);
    assert_int_equal(dr_sched_job_running(s, &first, 0, &err), DR_OK);
    dr_pass_result_free(&pr);
    dr_job_init(&x); /* a, queued at 10 s */
    x.id = 2;
    x.account = 1;
    x.submit = S(10);
    x.time_limit = S(100);
    assert_int_equal(dr_sched_submit(s, &x, S(10), &err), DR_OK);
    pr = (dr_pass_result_t){0};
    assert_int_equal(dr_sched_pass(s, S(50), &pr, &err), DR_OK); /* a has used 50 GPU-s */
    dr_pass_result_free(&pr);
    assert_true(dr_sched_fairshare_active(s));
    dr_job_init(&y); /* b, the new job at 60 s */
    y.id = 3;
    y.account = 2;
    y.submit = S(60);
    y.time_limit = S(100);
    assert_false(dr_sched_queue_before(s, &x, &y));
    assert_true(dr_sched_queue_before(s, &y, &x));
    /* the estimate over the jobs before it: none, so at first's end */
    dr_job_t *const *q;
    size_t nq = dr_sched_queue(s, &q), nahead = 0;
    dr_est_job_t ahead[4];
    for (size_t i = 0; i < nq; i++)
        if (q[i]->state == DR_JOB_PENDING && dr_sched_queue_before(s, q[i], &y))
            ahead[nahead++] = (dr_est_job_t){.req = &q[i]->req, .limit = q[i]->time_limit};
    assert_int_equal(nahead, 0);
    dr_est_running_t run = {.alloc = &first.alloc, .end = dr_sched_expected_end(&first)};
    dr_est_job_t j = {.req = &y.req, .limit = y.time_limit};
    dr_start_est_t e;
    assert_int_equal(dr_start_estimate(&c, S(60), &run, 1, ahead, nahead, &j, &e, &err), DR_OK);
    assert_true(e.start == S(400));
    dr_alloc_free(&e.alloc);
    /* priority comes first */
    x.priority = 1;
    assert_true(dr_sched_queue_before(s, &x, &y));
    x.priority = 0;
    dr_alloc_free(&first.alloc);
    dr_sched_destroy(s);
    dr_cluster_free(&c);
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
        cmocka_unit_test(test_held_ahead),
        cmocka_unit_test(test_dependency_ahead),
        cmocka_unit_test(test_dependency_order),
        cmocka_unit_test(test_own_dependency),
        cmocka_unit_test(test_account_limit),
        cmocka_unit_test(test_account_limit_window),
        cmocka_unit_test(test_queue_order_ahead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
