/* test_truth.c - no policy but an oracle can see what a job will really do.
 *
 * The same jobs, declared the same way and showing the same progress, are
 * scheduled twice with two different truths (the work each job really does,
 * reversed between the runs).  Every non-oracle policy must decide exactly
 * the same both times: it sees declarations and observations only.  The
 * oracle policies (sjf, srtf) must not - that shows the two truths are far
 * enough apart for the test to catch a policy that reads them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/cluster.h"
#include "drover/sched.h"
#include "drover/truth.h"
#include "testutil.h"

#define NJ 14

/* Run three passes of `policy` over NJ jobs whose true work is work[];
 * write what it decided into sig. */
static void decisions(const char *policy, const double *work, char *sig, size_t cap)
{
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=a[0-1] Gpus=H100:4 Cpus=32 MemGB=256\n"
                   "NodeName=b0 Gpus=A100:4 Cpus=32 MemGB=256\n");
    dr_job_t jobs[NJ];
    for (int i = 0; i < NJ; i++) {
        dr_job_init(&jobs[i]);
        jobs[i].id = (uint64_t)i + 1;
        jobs[i].kind = DR_KIND_TRAIN;
        jobs[i].req.gpus_per_node = (uint32_t)(1u << (i % 3)); /* 1, 2, 4 */
        jobs[i].work_declared = 600.0 * (1 + (i * 7) % 11);    /* what users said */
        jobs[i].time_limit = dr_time_from_s(jobs[i].work_declared * 4);
        if (i % 4 == 3)
            jobs[i].deadline = dr_time_from_s(3 * jobs[i].work_declared);
    }
    dr_truth_t truth = {jobs, work, NJ};
    dr_sched_opts_t o = {
        .policy = policy, .placement = DR_PLACE_BEST_FIT, .truth = &truth, .audit = true};
    dr_sched_t *s;
    dr_err_t err;
    if (dr_sched_create(&s, &c, &o, &err) != DR_OK)
        fail_msg("%s: %s", policy, err.msg);
    size_t n = 0;
    dr_time_t at[3] = {0, dr_time_from_s(900), dr_time_from_s(2700)};
    for (int p = 0; p < 3; p++) {
        if (p == 0)
            for (int i = 0; i < NJ; i++)
                dr_sched_submit(s, &jobs[i], 0, &err);
        if (p == 1) {
            /* the driver reports the same facts in both runs: the lowest
             * running job completes at 900 s, having done 900 s of work */
            for (int i = 0; i < NJ; i++)
                if (jobs[i].state == DR_JOB_RUNNING) {
                    dr_sched_job_ended(s, &jobs[i], DR_JOB_COMPLETED, at[1], NULL, &err);
                    break;
                }
        }
        dr_pass_result_t r = {0};
        if (dr_sched_pass(s, at[p], &r, &err) != DR_OK)
            fail_msg("%s: pass %d: %s", policy, p, err.msg);
        for (size_t k = 0; k < r.nstarted; k++) {
            dr_sched_job_running(s, r.started[k], at[p], &err);
            n += (size_t)snprintf(sig + n, cap - n, "s%llu@%d ",
                                  (unsigned long long)r.started[k]->id, p);
        }
        for (size_t k = 0; k < r.npreempted; k++)
            n += (size_t)snprintf(sig + n, cap - n, "p%llu@%d ",
                                  (unsigned long long)r.preempted[k]->id, p);
        dr_pass_result_free(&r);
    }
    dr_sched_destroy(s);
    for (int i = 0; i < NJ; i++)
        dr_alloc_free(&jobs[i].alloc);
    dr_cluster_free(&c);
}

static void test_only_oracles_see_truth(void **st)
{
    (void)st;
    double a[NJ], b[NJ];
    for (int i = 0; i < NJ; i++) {
        a[i] = 300.0 * (i + 1);  /* short jobs first */
        b[i] = 300.0 * (NJ - i); /* reversed */
    }
    int oracles = 0, oracles_differ = 0, honest = 0;
    for (const dr_policy_ops_t *const *p = dr_policy_list(); *p; p++) {
        char sa[4096] = "", sb[4096] = "";
        decisions((*p)->name, a, sa, sizeof sa);
        decisions((*p)->name, b, sb, sizeof sb);
        if ((*p)->oracle) {
            oracles++;
            oracles_differ += strcmp(sa, sb) != 0;
        } else {
            honest++;
            if (strcmp(sa, sb) != 0)
                fail_msg("policy %s decides on the truth:\n  %s\n  %s", (*p)->name, sa, sb);
            if (!sa[0])
                fail_msg("policy %s started nothing: the test proves nothing for it", (*p)->name);
        }
    }
    assert_true(honest >= 8);
    assert_true(oracles >= 2);
    assert_int_equal(oracles_differ, oracles);
}

/* Without a truth (the controller), an oracle policy cannot even be made. */
static void test_oracle_needs_truth(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=a0 Gpus=H100:4 Cpus=32 MemGB=256\n");
    dr_sched_opts_t o = {.policy = "srtf"};
    dr_sched_t *s = NULL;
    dr_err_t err;
    assert_int_equal(dr_sched_create(&s, &c, &o, &err), DR_EINVAL);
    assert_non_null(strstr(err.msg, "oracle"));
    o.policy = "drover";
    assert_int_equal(dr_sched_create(&s, &c, &o, &err), DR_OK);
    dr_sched_destroy(s);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_oracles_see_truth),
        cmocka_unit_test(test_oracle_needs_truth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
