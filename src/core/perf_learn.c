/* perf_learn.c - per-type run-time estimates of a class of jobs from its
 * completed runs and a prior: the estimator perf_learn.h describes. */
#include "drover/perf_learn.h"

#include <math.h>
#include <string.h>

#define SIGMA0      0.3 /* run-to-run spread before runs show theirs (ln units) */
#define SIGMA0_RUNS 2.0 /* ... worth this many runs */

const char *dr_perf_basis_name(dr_perf_basis_t b)
{
    switch (b) {
    case DR_PERF_NONE: return "cannot run";
    case DR_PERF_PRIOR: return "prior";
    case DR_PERF_VIA: return "via other types";
    case DR_PERF_OBSERVED: return "observed";
    }
    return "?";
}

void dr_perf_obs_add(dr_perf_obs_t *o, double seconds)
{
    if (!(seconds > 0) || !isfinite(seconds))
        return;
    double x = log(seconds < 1e-3 ? 1e-3 : seconds);
    o->n++;
    o->sum += x;
    o->sum2 += x * x;
}

void dr_perf_estimate(const double *prior, double tau, const dr_perf_obs_t *obs, size_t ntypes,
                      dr_perf_est_t *out)
{
    memset(out, 0, sizeof *out);
    size_t n = ntypes < DR_MAX_GPU_TYPES ? ntypes : DR_MAX_GPU_TYPES;
    out->ntypes = n;
    /* the reference: the fastest by the prior (the first of equals) */
    double best = 0;
    for (size_t t = 0; t < n; t++)
        if (prior[t] > best) {
            best = prior[t];
            out->ref = (unsigned)t;
        }
    /* pooled run-to-run spread */
    double ss = SIGMA0 * SIGMA0 * SIGMA0_RUNS, df = SIGMA0_RUNS, nall = 0;
    for (size_t t = 0; t < n; t++) {
        const dr_perf_obs_t *o = &obs[t];
        out->runs += o->n;
        nall += o->n;
        if (o->n > 1) {
            double dev = o->sum2 - o->sum * o->sum / o->n;
            ss += dev > 0 ? dev : 0;
            df += o->n - 1;
        }
    }
    double s2 = ss / df;
    out->sigma = sqrt(s2);
    if (nall == 0) {
        for (size_t t = 0; t < n; t++) {
            out->rate[t] = best > 0 && prior[t] > 0 ? prior[t] / best : 0;
            out->basis[t] = out->rate[t] > 0 ? DR_PERF_PRIOR : DR_PERF_NONE;
        }
        return;
    }
    double mu[DR_MAX_GPU_TYPES];
    for (size_t t = 0; t < n; t++) {
        const dr_perf_obs_t *o = &obs[t];
        /* what the other types' runs predict for t through the prior */
        double pw = 0, pm = 0, nother = 0;
        if (prior[t] > 0)
            for (size_t u = 0; u < n; u++)
                if (u != t && obs[u].n && prior[u] > 0) {
                    pm += obs[u].sum + obs[u].n * log(prior[u] / prior[t]);
                    nother += obs[u].n;
                }
        if (nother > 0) {
            pm /= nother;
            pw = 1.0 / (tau * tau + s2 / nother);
        }
        double ow = o->n ? o->n / s2 : 0, om = o->n ? o->sum / o->n : 0;
        if (ow + pw <= 0) {
            mu[t] = NAN;
            out->basis[t] = DR_PERF_NONE;
            continue;
        }
        mu[t] = (ow * om + pw * pm) / (ow + pw);
        out->spread[t] = exp(sqrt(1.0 / (ow + pw)));
        out->basis[t] = o->n ? DR_PERF_OBSERVED : DR_PERF_VIA;
        out->run_s[t] = exp(mu[t]);
    }
    /* the reference may have no estimate (its prior 0 and no run): then
     * the fastest estimated type is */
    if (isnan(mu[out->ref])) {
        double lo = INFINITY;
        for (size_t t = 0; t < n; t++)
            if (!isnan(mu[t]) && mu[t] < lo) {
                lo = mu[t];
                out->ref = (unsigned)t;
            }
    }
    double mref = mu[out->ref];
    out->size = exp(mref);
    for (size_t t = 0; t < n; t++)
        out->rate[t] = isnan(mu[t]) ? 0 : exp(mref - mu[t]);
}
