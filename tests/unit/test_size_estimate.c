/* test_size_estimate.c - the remaining-size estimate the drover and cost
 * policies use instead of the truth (src/sched/size_estimate.c), against
 * values computed by hand. */
#include <math.h>
#include <string.h>

#include "drover/sched.h"
#include "sched/size_estimate.h"
#include "testutil.h"

static void near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.6f, want %.6f", got, want);
}

static void test_excess(void **st)
{
    (void)st;
    /* X ~ lognormal(0, 1): E[X] = e^0.5 = 1.648721 */
    near(dr_lognormal_excess(0, 1, 0), 1.648721, 1e-6);
    /* E[X | X > 1] = e^0.5 Phi(1) / Phi(0) = 1.648721 x 0.841345 / 0.5
     * = 2.774286, so 1.774286 remains */
    near(dr_lognormal_excess(0, 1, 1), 1.774286, 1e-6);
    /* tight: s = 0 is plain subtraction, never below 0 */
    near(dr_lognormal_excess(log(100), 0, 30), 70, 1e-9);
    near(dr_lognormal_excess(log(100), 0, 130), 0, 1e-9);
    /* far past every estimate the expected excess stays positive and
     * grows with what was attained (least attained service) */
    double e1 = dr_lognormal_excess(0, 1, exp(8)), e2 = dr_lognormal_excess(0, 1, exp(12));
    assert_true(e1 > 0 && e2 > e1 && e1 < exp(8) && e2 < exp(12));
    /* in the tail E[X - a | X > a] ~ a s^2 / (ln a - m): within 15% at 12 s.d. */
    near(e2 / (exp(12) / 12), 1, 0.15);
}

/* Completed jobs that ran e^0.7 times what they declared: the estimator
 * learns the bias (shrunk by the 4-job prior) and a small spread. */
static void test_learns_from_completed(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=n0 Gpus=H100:8 Cpus=32 MemGB=256\n");
    dr_perf_view_t pv = {0};
    dr_job_t done[20];
    dr_job_t *ended[20];
    for (int i = 0; i < 20; i++) {
        dr_job_init(&done[i]);
        done[i].state = DR_JOB_COMPLETED;
        done[i].work_declared = 1000.0 * (i + 1);
        done[i].work_done = done[i].work_declared * exp(0.7);
        ended[i] = &done[i];
    }
    dr_sched_view_t v = {.cluster = &c, .perf = &pv, .ended = ended, .nended = 20};
    dr_size_est_t e;
    dr_size_est_init(&e);
    near(e.decl_mu, 0, 1e-12);
    near(e.decl_sigma, 1, 1e-12);
    dr_size_est_learn(&e, &v);
    near(e.decl_mu, 0.7 * 20 / 24, 1e-9);
    /* spread: (4 x 1 + 20 x (0.7 - mu)^2) / 24, mu = 0.5833 */
    near(e.decl_sigma, sqrt((4 + 20 * pow(0.7 - 0.7 * 20 / 24, 2)) / 24), 1e-9);
    /* a job that ended otherwise (failed, cancelled) teaches nothing */
    done[0].state = DR_JOB_FAILED;
    v.nended = 1;
    double mu = e.decl_mu;
    dr_size_est_learn(&e, &v);
    near(e.decl_mu, mu, 1e-12);
    /* a pending job declaring 3600 s (class 0: rate 1): its estimate lies
     * between the declaration corrected by the bias and the population */
    dr_job_t j;
    dr_job_init(&j);
    j.work_declared = 3600;
    v.now = 0;
    double r = dr_size_est_remaining_work(&e, &v, &j, 1.0);
    assert_true(r > 3600 && r < 3600 * exp(0.7) * 2);
    /* it has run 10 h: what is left is re-estimated (never negative) */
    j.work_done = 36000;
    double r2 = dr_size_est_remaining_work(&e, &v, &j, 1.0);
    assert_true(r2 >= 0 && r2 < 36000);
    /* attained service counts in levels (median x 2^k): within a level the
     * estimate falls second for second; entering the next it is raised */
    dr_size_est_init(&e); /* untaught: the declaration trusted to sigma = 1 */
    double med = dr_size_est_median_work(&e, &j, 1.0);
    double rs[3], at[3] = {1.1, 1.6, 2.3};
    for (int k = 0; k < 3; k++) {
        j.work_done = at[k] * med;
        rs[k] = dr_size_est_remaining_work(&e, &v, &j, 1.0);
    }
    /* 1.1 and 1.6 x the median: one level, 0.5 x the median less */
    near(rs[0] - rs[1], 0.5 * med, 1e-6 * med);
    assert_true(rs[1] < rs[0]);
    assert_true(rs[2] > rs[1]); /* past 2 x the median: re-estimated upward */
    /* continuous conditioning (level_f <= 1) grows with attained service */
    e.level_f = 0;
    j.work_done = 10 * med;
    double c10 = dr_size_est_remaining_work(&e, &v, &j, 1.0);
    j.work_done = 20 * med;
    assert_true(dr_size_est_remaining_work(&e, &v, &j, 1.0) > c10);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_excess),
        cmocka_unit_test(test_learns_from_completed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
