/* size_estimate.h - how long will a job still run?  What the non-oracle
 * policies use instead of the truth (private to src/sched).
 *
 * A job's size X is modelled as lognormal.  Sizes (ln of seconds on the
 * job's fastest type) follow the distribution of the completed jobs' sizes,
 * starting from a broad prior (median 1 h, sigma 2).  A declared size D is
 * evidence: ln X = ln D + mu + sigma Z, with mu and sigma learned from
 * completed jobs that declared one (ln of real / declared), starting from
 * mu = 0, sigma = 1; the two combine as normal prior and likelihood, so a
 * declaration weighs as much as declarations have proved worth and an
 * extreme one is pulled toward what jobs usually take.
 *
 * Given what the job has shown - progress A so far - the expected remaining
 * work is E[X - A | X > A].  With a tight estimate that is about D - A
 * (shortest remaining work first); with a loose one it grows with A, so
 * jobs that have run long rank behind fresh ones: the least-attained-
 * service behaviour Tiresias (Gu et al., NSDI 2019) and Gittins-index
 * scheduling rely on when sizes are unknown.  The policy thus moves from
 * SRPT to LAS as its confidence in declarations drops, and a running job
 * whose progress outgrows its estimate is re-estimated every pass.  A
 * walltime limit caps the estimate (the job cannot run past it). */
#ifndef DROVER_SCHED_SIZE_ESTIMATE_H
#define DROVER_SCHED_SIZE_ESTIMATE_H

#include "drover/sched.h"

typedef struct dr_size_est {
    /* completed jobs that declared a size: ln(real / declared) */
    double decl_n, decl_sum, decl_sum2;
    /* all completed jobs: ln(real seconds on fastest type) */
    double free_n, free_sum, free_sum2;
    double prior_n;     /* weight of the priors, in jobs (4) */
    double decl_sigma0; /* prior spread of declarations (1) */
    double free_mu0;    /* prior median of undeclared sizes: ln(3600 s) */
    double free_sigma0; /* and its spread (2) */
    /* attained service is conditioned on in levels median x level_f^k
     * (2; <= 1: continuously) */
    double level_f;
    /* derived, refreshed by learn */
    double decl_mu, decl_sigma, free_mu, free_sigma;
} dr_size_est_t;

void dr_size_est_init(dr_size_est_t *e);
/* Learn from the jobs that ended since the last pass (v->ended). */
void dr_size_est_learn(dr_size_est_t *e, const dr_sched_view_t *v);
/* Expected remaining work of j at v->now, in its work units; best_rate is
 * its rate on its fastest type (converts undeclared sizes). */
double dr_size_est_remaining_work(const dr_size_est_t *e, const dr_sched_view_t *v,
                                  const dr_job_t *j, double best_rate);
/* The q-quantile of the remaining work (0 < q < 1): what a deadline is
 * planned with, so that it holds with probability about q. */
double dr_size_est_remaining_work_q(const dr_size_est_t *e, const dr_sched_view_t *v,
                                    const dr_job_t *j, double best_rate, double q);
/* The median of j's size as estimated before it ran (work units). */
double dr_size_est_median_work(const dr_size_est_t *e, const dr_job_t *j, double best_rate);
/* Seconds j may still run before its walltime limit (INFINITY if none). */
double dr_size_est_limit_left_s(const dr_sched_view_t *v, const dr_job_t *j);
/* E[X - A | X > A] for X lognormal(m, s^2), A >= 0 (exposed for tests). */
double dr_lognormal_excess(double m, double s, double a);
/* The q-quantile of X - A given X > A. */
double dr_lognormal_excess_q(double m, double s, double a, double q);

#endif
