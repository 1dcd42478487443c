/* size_estimate.c - expected remaining size of a job from what was declared,
 * what it has shown and what completed jobs taught (size_estimate.h). */
#include "sched/size_estimate.h"

#include <math.h>

#include "drover/perf.h"

static void refresh(dr_size_est_t *e)
{
    double n = e->prior_n + e->decl_n;
    e->decl_mu = e->decl_sum / n; /* prior mean 0: declarations unbiased */
    double ss = e->decl_sum2 - 2 * e->decl_mu * e->decl_sum + e->decl_n * e->decl_mu * e->decl_mu;
    e->decl_sigma = sqrt((e->prior_n * e->decl_sigma0 * e->decl_sigma0 + (ss > 0 ? ss : 0)) / n);
    n = e->prior_n + e->free_n;
    e->free_mu = (e->prior_n * e->free_mu0 + e->free_sum) / n;
    ss = e->free_sum2 - 2 * e->free_mu * e->free_sum + e->free_n * e->free_mu * e->free_mu;
    e->free_sigma = sqrt((e->prior_n * e->free_sigma0 * e->free_sigma0 + (ss > 0 ? ss : 0)) / n);
}

void dr_size_est_init(dr_size_est_t *e)
{
    *e = (dr_size_est_t){
        .prior_n = 4, .decl_sigma0 = 1, .free_mu0 = log(3600), .free_sigma0 = 2, .level_f = 2};
    refresh(e);
}

void dr_size_est_learn(dr_size_est_t *e, const dr_sched_view_t *v)
{
    bool changed = false;
    for (size_t i = 0; i < v->nended; i++) {
        const dr_job_t *j = v->ended[i];
        /* only completed jobs show their whole size; the others ended early
         * (killed, failed, cancelled) and say only that it was larger */
        if (j->state != DR_JOB_COMPLETED || !(j->work_done > 0) || !isfinite(j->work_done))
            continue;
        if (j->work_declared > 0) {
            double l = log(j->work_done / j->work_declared);
            e->decl_n++, e->decl_sum += l, e->decl_sum2 += l * l;
        }
        /* every completed job teaches the distribution of sizes */
        double r = dr_perf_best_rate(v->perf, j, dr_perf_runnable(v->perf, v->cluster, j));
        if (r > 0) {
            double l = log(j->work_done / r);
            e->free_n++, e->free_sum += l, e->free_sum2 += l * l;
        }
        changed = true;
    }
    if (changed)
        refresh(e);
}

/* ln Phi(y), accurate far into the lower tail. */
static double log_phi(double y)
{
    if (y > -6)
        return log(0.5 * erfc(-y / M_SQRT2));
    double y2 = y * y; /* Phi(y) ~ phi(y) / -y (1 - 1/y^2 + 3/y^4) */
    return -0.5 * y2 - log(-y) - 0.5 * log(2 * M_PI) + log1p(-1 / y2 + 3 / (y2 * y2));
}

double dr_lognormal_excess(double m, double s, double a)
{
    if (!(a > 0))
        return exp(m + 0.5 * s * s);
    if (s < 1e-9) {
        double x = exp(m);
        return x > a ? x - a : 0;
    }
    /* E[X | X > a] = e^{m + s^2/2} Phi(y + s) / Phi(y), y = (m - ln a) / s */
    double la = log(a), y = (m - la) / s;
    double lm = m + 0.5 * s * s + log_phi(y + s) - log_phi(y);
    double x = a * expm1(lm - la);
    return x > 0 && isfinite(x) ? x : 0;
}

/* Inverse of the standard normal CDF for p in (0, 1): Acklam's rational
 * approximation (relative error below 1.2e-9), fine far into both tails. */
static double norm_inv(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    if (p <= 0)
        return -INFINITY;
    if (p >= 1)
        return INFINITY;
    if (p < 0.02425) {
        double q = sqrt(-2 * log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    if (p > 1 - 0.02425)
        return -norm_inv(1 - p);
    double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double dr_lognormal_excess_q(double m, double s, double a, double q)
{
    if (s < 1e-9) {
        double x = exp(m);
        return x > a ? x - a : 0;
    }
    /* P(X > x | X > a) = 1 - q  ->  Phi((m - ln x) / s) = (1 - q) Phi((m - ln a) / s) */
    double tail = a > 0 ? 0.5 * erfc(-((m - log(a)) / s) / M_SQRT2) : 1;
    double z = -norm_inv((1 - q) * tail);
    double x = exp(m + s * z) - (a > 0 ? a : 0);
    return x > 0 && isfinite(x) ? x : 0;
}

/* The job's lognormal (m, s) in its work units (see the header). */
static void job_dist(const dr_size_est_t *e, const dr_job_t *j, double best_rate, double *mo,
                     double *so)
{
    /* ln size in seconds on the fastest type: the population's distribution
     * (learned), and if the user declared a size, that evidence combined
     * with it (normal prior x normal likelihood: precisions add), so a
     * declaration counts for as much as declarations have proved worth */
    double lr = log(best_rate);
    double m = e->free_mu, s = e->free_sigma;
    if (j->work_declared > 0) {
        double md = log(j->work_declared) + e->decl_mu - lr, sd = e->decl_sigma;
        double pp = 1 / (s * s), pd = sd > 1e-6 ? 1 / (sd * sd) : 1e12;
        m = (m * pp + md * pd) / (pp + pd);
        s = sqrt(1 / (pp + pd));
    }
    *mo = m + lr;
    *so = s;
}

double dr_size_est_median_work(const dr_size_est_t *e, const dr_job_t *j, double best_rate)
{
    if (!(best_rate > 0))
        return INFINITY;
    double m, s;
    job_dist(e, j, best_rate, &m, &s);
    return exp(m);
}

/* The progress a job's estimate is conditioned on: its attained work
 * rounded down to a level (median x f^k; nothing below median / f), as
 * Tiresias discretises attained service.  Within a level the estimate only
 * shrinks as the job runs, so jobs alike do not preempt one another in turn
 * (continuous conditioning made drover time-slice a burst of bounded-size
 * jobs); a job is re-ranked when it crosses into the next level. */
static double level_of(const dr_size_est_t *e, double m, double a)
{
    if (!(e->level_f > 1) || !(a > 0))
        return a > 0 ? a : 0;
    double k = floor(log(a / exp(m)) / log(e->level_f));
    if (k < -1)
        return 0;
    double l = exp(m) * pow(e->level_f, k);
    return l < a ? l : a;
}

double dr_size_est_remaining_work(const dr_size_est_t *e, const dr_sched_view_t *v,
                                  const dr_job_t *j, double best_rate)
{
    if (!(best_rate > 0))
        return INFINITY;
    double m, s, a = dr_job_work_done(j, v->now);
    job_dist(e, j, best_rate, &m, &s);
    double l = level_of(e, m, a);
    double x = dr_lognormal_excess(m, s, l) + l - (a > 0 ? a : 0);
    return x > 0 ? x : 0;
}

double dr_size_est_remaining_work_q(const dr_size_est_t *e, const dr_sched_view_t *v,
                                    const dr_job_t *j, double best_rate, double q)
{
    if (!(best_rate > 0))
        return INFINITY;
    double m, s, a = dr_job_work_done(j, v->now);
    job_dist(e, j, best_rate, &m, &s);
    double l = level_of(e, m, a);
    double x = dr_lognormal_excess_q(m, s, l, q) + l - (a > 0 ? a : 0);
    return x > 0 ? x : 0;
}

double dr_size_est_limit_left_s(const dr_sched_view_t *v, const dr_job_t *j)
{
    if (j->time_limit <= 0)
        return INFINITY;
    bool on = j->state == DR_JOB_RUNNING || j->state == DR_JOB_STARTING;
    return dr_time_to_s(j->time_limit) -
           (on && v->now > j->start ? dr_time_to_s(v->now - j->start) : 0);
}
