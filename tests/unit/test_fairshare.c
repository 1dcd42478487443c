/* test_fairshare.c - fair share between accounts in the scheduler core:
 * the factor F = 2^(-U/S) on hand-computed usage, the decay over the
 * half-life (exact however often it is sampled), usage set back after a
 * restart, the queue order it gives (priority first, then fair share, then
 * submit time), and under every policy: of two accounts with equal shares
 * the one that used the GPUs just before waits longer, and under
 * contention shares of 2:1 split the GPU time near 2:1 where queue order
 * alone would give the first burst everything. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/cluster.h"
#include "drover/sched.h"
#include "testutil.h"

#define S                              DR_NSEC_PER_SEC
#define assert_double_equal(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static const char *const pols[] = {"fifo",
                                   "backfill",
                                   "drover",
                                   "cost",
                                   "fastest",
                                   "cheapest",
                                   "gavel_fifo",
                                   "fifo_perf",
                                   "max_min_fairness",
                                   "max_min_fairness_perf"};

static void job(dr_job_t *j, uint64_t id, dr_time_t submit, uint32_t acct, uint32_t gpus,
                double work)
{
    dr_job_init(j);
    j->id = id;
    j->submit = submit;
    j->account = acct;
    j->req.gpus_per_node = gpus;
    j->work_declared = work;
    j->time_limit = (dr_time_t)(work * 4) * S;
}

static dr_sched_t *mk(dr_cluster_t *c, const char *conf, const char *policy)
{
    tu_cluster(c, conf);
    dr_sched_t *s;
    dr_sched_opts_t so = {.policy = policy, .placement = DR_PLACE_BEST_FIT, .audit = true};
    dr_err_t err;
    assert_int_equal(dr_sched_create(&s, c, &so, &err), DR_OK);
    assert_int_equal(dr_sched_bind_account(s, 1, "a", &err), DR_OK);
    assert_int_equal(dr_sched_bind_account(s, 2, "b", &err), DR_OK);
    return s;
}

/* One pass at t; what it starts runs at once. */
static void pass(dr_sched_t *s, dr_time_t t)
{
    dr_err_t err;
    dr_pass_result_t pr = {0};
    int rc = dr_sched_pass(s, t, &pr, &err);
    if (rc != DR_OK)
        fail_msg("pass at %.0f s: %s (%d)", dr_time_to_s(t), err.msg, rc);
    for (size_t i = 0; i < pr.nstarted; i++)
        assert_int_equal(dr_sched_job_running(s, pr.started[i], t, &err), DR_OK);
    dr_pass_result_free(&pr);
}

/* End every running job of jobs[0..n) whose work is done by t. */
static void end_done(dr_sched_t *s, dr_job_t *jobs, size_t n, dr_time_t t)
{
    dr_err_t err;
    for (size_t i = 0; i < n; i++)
        if (jobs[i].state == DR_JOB_RUNNING &&
            dr_job_work_done(&jobs[i], t) >= jobs[i].work_declared - 1e-6)
            assert_int_equal(dr_sched_job_ended(s, &jobs[i], DR_JOB_COMPLETED, t, NULL, &err),
                             DR_OK);
}

/* The allocations of jobs still running when a test ends are the test's. */
static void free_allocs(dr_job_t *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dr_alloc_free(&jobs[i].alloc);
}

static void info(dr_sched_t *s, dr_time_t t, dr_share_info_t *out)
{
    assert_int_equal(dr_sched_share_count(s), 3); /* a, b, the implicit account */
    dr_sched_share_all(s, t, out);
}

/* No decay: usage is GPU-seconds; S from the shares of the declared
 * accounts (the implicit one, unused, does not dilute them). */
static void test_factor_hand_computed(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_sched_t *s = mk(&c,
                       "NodeName=n1 Gpus=H100:8 Cpus=8 MemGB=64\n"
                       "Account=a Shares=1\nAccount=b Shares=3\nFairShareHalfLife=0\n",
                       "fifo");
    dr_job_t ja, jb;
    dr_err_t err;
    job(&ja, 1, 0, 1, 4, 100);
    assert_int_equal(dr_sched_submit(s, &ja, 0, &err), DR_OK);
    pass(s, 0);
    dr_share_info_t in[3];
    info(s, 100 * S, in);
    assert_string_equal(in[0].name, "a");
    assert_null(in[2].name);
    assert_double_equal(in[0].raw_gpu_s, 400, 1e-9);
    assert_double_equal(in[0].decayed_gpu_s, 400, 1e-9);
    assert_double_equal(in[0].norm_shares, 0.25, 1e-12);
    assert_double_equal(in[1].norm_shares, 0.75, 1e-12);
    assert_double_equal(in[2].norm_shares, 0, 0);
    assert_double_equal(in[0].effective, 1, 1e-12);
    assert_double_equal(in[0].factor, 0.0625, 1e-12); /* 2^-(1 / 0.25) */
    assert_double_equal(in[1].factor, 1, 0);
    assert_int_equal(in[0].running_milli, 4000);
    assert_int_equal(dr_sched_job_ended(s, &ja, DR_JOB_COMPLETED, 100 * S, NULL, &err), DR_OK);
    job(&jb, 2, 100 * S, 2, 4, 100);
    assert_int_equal(dr_sched_submit(s, &jb, 100 * S, &err), DR_OK);
    pass(s, 100 * S);
    info(s, 200 * S, in);
    assert_double_equal(in[1].raw_gpu_s, 400, 1e-9);
    assert_double_equal(in[0].effective, 0.5, 1e-12);
    assert_double_equal(in[0].factor, 0.25, 1e-12);               /* 2^-(0.5/0.25) */
    assert_double_equal(in[1].factor, pow(2, -2.0 / 3.0), 1e-12); /* 2^-(0.5/0.75) */
    /* b's running job stops at 200 s: usage stays */
    assert_int_equal(dr_sched_job_ended(s, &jb, DR_JOB_COMPLETED, 200 * S, NULL, &err), DR_OK);
    info(s, 5000 * S, in);
    assert_double_equal(in[1].raw_gpu_s, 400, 1e-9);
    assert_int_equal(in[1].running_milli, 0);
    dr_sched_destroy(s);
    dr_cluster_free(&c);
}

/* Half-life 2 minutes: 1 GPU for 120 s accrues 1 x 120/ln2 x (1 - 1/2),
 * which halves in the next 120 s; the same whether passes sample the
 * interval or not. */
static void test_decay(void **st)
{
    (void)st;
    const char *conf = "NodeName=n1 Gpus=H100:8 Cpus=8 MemGB=64\n"
                       "Account=a\nAccount=b\nFairShareHalfLife=2\n";
    double want = 60.0 / M_LN2;
    for (int sampled = 0; sampled < 2; sampled++) {
        dr_cluster_t c;
        dr_sched_t *s = mk(&c, conf, "fifo");
        dr_job_t ja;
        dr_err_t err;
        job(&ja, 1, 0, 1, 1, 120);
        assert_int_equal(dr_sched_submit(s, &ja, 0, &err), DR_OK);
        pass(s, 0);
        for (int k = 1; sampled && k < 120; k++)
            pass(s, (dr_time_t)k * S);
        assert_int_equal(dr_sched_job_ended(s, &ja, DR_JOB_COMPLETED, 120 * S, NULL, &err), DR_OK);
        dr_share_info_t in[3];
        info(s, 120 * S, in);
        assert_double_equal(in[0].raw_gpu_s, 120, 1e-9);
        assert_double_equal(in[0].decayed_gpu_s, want, 1e-9);
        for (int k = 121; sampled && k < 240; k += 7)
            pass(s, (dr_time_t)k * S);
        info(s, 240 * S, in);
        assert_double_equal(in[0].decayed_gpu_s, want / 2, 1e-9);
        assert_double_equal(in[0].raw_gpu_s, 120, 1e-9);
        /* a restart sets usage back as of a time; it decays from there */
        assert_int_equal(dr_sched_share_set_usage(s, 1, 50, 1000, 300 * S, &err), DR_OK);
        info(s, 420 * S, in);
        assert_double_equal(in[1].decayed_gpu_s, 500, 1e-9);
        assert_double_equal(in[1].raw_gpu_s, 50, 1e-9);
        assert_int_equal(dr_sched_share_set_usage(s, 7, 0, 0, 420 * S, &err), DR_EINVAL);
        assert_int_equal(dr_sched_share_set_usage(s, 0, -1, 0, 420 * S, &err), DR_EINVAL);
        dr_sched_destroy(s);
        dr_cluster_free(&c);
    }
}

/* Queue order: priority first, then fair share, then submit time. */
static void test_queue_order(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_sched_t *s =
        mk(&c, "NodeName=n1 Gpus=H100:1 Cpus=8 MemGB=64\nAccount=a\nAccount=b\n", "fifo");
    dr_err_t err;
    dr_job_t first, q[4];
    job(&first, 1, 0, 1, 1, 100);
    assert_int_equal(dr_sched_submit(s, &first, 0, &err), DR_OK);
    pass(s, 0);
    job(&q[0], 2, 10 * S, 1, 1, 100); /* a, early */
    job(&q[1], 3, 20 * S, 1, 1, 100); /* a */
    job(&q[2], 4, 30 * S, 2, 1, 100); /* b, later */
    job(&q[3], 5, 40 * S, 1, 1, 100); /* a, priority 5 */
    q[3].priority = 5;
    for (int i = 0; i < 4; i++)
        assert_int_equal(dr_sched_submit(s, &q[i], q[i].submit, &err), DR_OK);
    pass(s, 50 * S); /* a has used 50 GPU-s, b nothing */
    dr_job_t *const *p = dr_sched_pending(s);
    assert_int_equal(dr_sched_npending(s), 4);
    assert_int_equal(p[0]->id, 5); /* priority beats fair share */
    assert_int_equal(p[1]->id, 4); /* b's factor is higher */
    assert_int_equal(p[2]->id, 2);
    assert_int_equal(p[3]->id, 3);
    assert_true(dr_sched_fairshare_active(s));
    assert_true(dr_sched_fairshare_weight(s, &q[2]) == 1.0);
    assert_true(dr_sched_fairshare_weight(s, &q[0]) < 1.0);
    free_allocs(&first, 1);
    dr_sched_destroy(s);
    dr_cluster_free(&c);
}

/* With one account (or none) the factors are equal: no weight, no gen. */
static void test_one_account_inert(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=n1 Gpus=H100:1 Cpus=8 MemGB=64\n");
    dr_sched_t *s;
    dr_sched_opts_t so = {.policy = "fifo", .placement = DR_PLACE_BEST_FIT};
    dr_err_t err;
    assert_int_equal(dr_sched_create(&s, &c, &so, &err), DR_OK);
    assert_int_equal(dr_sched_share_count(s), 1);
    dr_job_t j[3];
    for (int i = 0; i < 3; i++) {
        job(&j[i], (uint64_t)(3 - i), (dr_time_t)i * S, (uint32_t)i, 1, 100);
        assert_int_equal(dr_sched_submit(s, &j[i], j[i].submit, &err), DR_OK);
    }
    pass(s, 10 * S);
    pass(s, 60 * S);
    assert_false(dr_sched_fairshare_active(s));
    assert_true(dr_sched_fairshare_weight(s, &j[1]) == 1.0);
    assert_int_equal(dr_sched_fairshare_gen(s), 0);
    dr_share_info_t in;
    dr_sched_share_all(s, 60 * S, &in);
    assert_double_equal(in.norm_shares, 1, 0);
    assert_double_equal(in.raw_gpu_s, 50, 1e-9);
    assert_double_equal(in.factor, 0.5, 1e-12); /* all the usage, all the shares */
    free_allocs(j, 3);
    dr_sched_destroy(s);
    dr_cluster_free(&c);
    /* every job in the one declared account: the unused implicit account
     * does not make its factor differ from the highest */
    tu_cluster(&c, "NodeName=n1 Gpus=H100:1 Cpus=8 MemGB=64\nAccount=x Shares=3\n");
    assert_int_equal(dr_sched_create(&s, &c, &so, &err), DR_OK);
    assert_int_equal(dr_sched_bind_account(s, 1, "x", &err), DR_OK);
    for (int i = 0; i < 3; i++) {
        job(&j[i], (uint64_t)(3 - i), (dr_time_t)i * S, 1, 1, 100);
        assert_int_equal(dr_sched_submit(s, &j[i], j[i].submit, &err), DR_OK);
    }
    pass(s, 10 * S);
    pass(s, 60 * S);
    assert_false(dr_sched_fairshare_active(s));
    assert_true(dr_sched_fairshare_weight(s, &j[1]) == 1.0);
    assert_int_equal(dr_sched_fairshare_gen(s), 0);
    free_allocs(j, 3);
    dr_sched_destroy(s);
    dr_cluster_free(&c);
}

#define NB 12

/* a used the 4 GPUs for 2,000 s; then both submit NB one-GPU jobs of
 * 400 s, a's first.  Under every policy b's jobs start earlier on
 * average; without fair share queue order would put a's first. */
static void test_recent_user_waits(void **st)
{
    (void)st;
    for (size_t p = 0; p < sizeof pols / sizeof *pols; p++) {
        dr_cluster_t c;
        dr_sched_t *s =
            mk(&c, "NodeName=n1 Gpus=H100:4 Cpus=16 MemGB=64\nAccount=a\nAccount=b\n", pols[p]);
        dr_err_t err;
        dr_job_t pre, jobs[2 * NB];
        job(&pre, 1, 0, 1, 4, 2000);
        assert_int_equal(dr_sched_submit(s, &pre, 0, &err), DR_OK);
        dr_time_t t = 0;
        for (; pre.state != DR_JOB_COMPLETED; t += 400 * S) {
            end_done(s, &pre, 1, t);
            pass(s, t);
        }
        dr_time_t at = t;
        for (int i = 0; i < 2 * NB; i++) {
            job(&jobs[i], 10 + (uint64_t)i, at + i, i < NB ? 1 : 2, 1, 400);
            assert_int_equal(dr_sched_submit(s, &jobs[i], jobs[i].submit, &err), DR_OK);
        }
        for (t = at + S; t < at + 200 * 400 * S; t += 400 * S) {
            end_done(s, jobs, 2 * NB, t);
            pass(s, t);
        }
        double sa = 0, sb = 0;
        for (int i = 0; i < 2 * NB; i++) {
            assert_true(jobs[i].first_start != DR_TIME_NEVER);
            *(i < NB ? &sa : &sb) += dr_time_to_s(jobs[i].first_start - at);
        }
        if (!(sb < sa))
            fail_msg("%s: b's jobs started after a's (mean %.0f s vs %.0f s)", pols[p], sb / NB,
                     sa / NB);
        free_allocs(jobs, 2 * NB);
        free_allocs(&pre, 1);
        dr_sched_destroy(s);
        dr_cluster_free(&c);
    }
}

#define NC 60

/* Both accounts keep 4 GPUs busy with 200-s jobs (a's burst first); GPU
 * time over the first 4,000 s: with shares 2:1 near 2:1, with 1:1 near
 * 1:1.  Queue order alone gives a all of it. */
static void split(const char *policy, const char *shares_a, double lo, double hi)
{
    char conf[256];
    snprintf(conf, sizeof conf,
             "NodeName=n1 Gpus=H100:4 Cpus=16 MemGB=64\nAccount=a Shares=%s\nAccount=b\n",
             shares_a);
    dr_cluster_t c;
    dr_sched_t *s = mk(&c, conf, policy);
    dr_err_t err;
    dr_job_t *jobs = calloc(2 * NC, sizeof *jobs);
    assert_non_null(jobs);
    for (int i = 0; i < 2 * NC; i++) {
        job(&jobs[i], 1 + (uint64_t)i, i, i < NC ? 1 : 2, 1, 200);
        assert_int_equal(dr_sched_submit(s, &jobs[i], jobs[i].submit, &err), DR_OK);
    }
    dr_time_t t = S, horizon = 4001 * S;
    for (; t <= horizon; t += 100 * S) {
        end_done(s, jobs, 2 * NC, t);
        pass(s, t);
    }
    dr_share_info_t in[3];
    info(s, horizon, in);
    double ratio = in[0].raw_gpu_s / in[1].raw_gpu_s;
    if (!(ratio >= lo && ratio <= hi))
        fail_msg("%s, shares %s:1: GPU time split %.0f:%.0f (ratio %.2f, want %.2f..%.2f)", policy,
                 shares_a, in[0].raw_gpu_s, in[1].raw_gpu_s, ratio, lo, hi);
    free_allocs(jobs, 2 * NC);
    dr_sched_destroy(s);
    dr_cluster_free(&c);
    free(jobs);
}

static void test_share_split(void **st)
{
    (void)st;
    split("fifo", "2", 1.6, 2.5);
    split("fifo", "1", 0.8, 1.25);
    split("backfill", "2", 1.6, 2.5);
    split("drover", "2", 1.6, 2.5);
    split("cost", "2", 1.6, 2.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factor_hand_computed), cmocka_unit_test(test_decay),
        cmocka_unit_test(test_queue_order),          cmocka_unit_test(test_one_account_inert),
        cmocka_unit_test(test_recent_user_waits),    cmocka_unit_test(test_share_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
