/* declare.c - a simulated user's declarations: size estimates, walltime
 * limits and checkpoint intervals drawn from the truth (declare.h). */
#include "drover/declare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "drover/util.h"

void dr_declare_opts_default(dr_declare_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->mode = DR_SIZE_LOGNORMAL;
    o->sigma = 1.0;
    o->walltime_factor = 2.0;
    o->walltime_noise = 1.0;
    o->ckpt_every = dr_time_from_s(1800);
    o->seed = 1;
}

int dr_size_mode_parse(const char *s, dr_declare_opts_t *o, dr_err_t *err)
{
    if (!s)
        return dr_err_set(err, DR_EINVAL, "size estimate: missing mode");
    if (dr_streq_ci(s, "exact")) {
        o->mode = DR_SIZE_EXACT;
        return DR_OK;
    }
    if (dr_streq_ci(s, "none")) {
        o->mode = DR_SIZE_NONE;
        return DR_OK;
    }
    if (dr_streq_ci(s, "trace")) {
        o->mode = DR_SIZE_TRACE;
        return DR_OK;
    }
    if (strncmp(s, "lognormal", 9) == 0 && (s[9] == '\0' || s[9] == ':')) {
        double sg = 1.0;
        if (s[9] == ':' && (dr_parse_double(s + 10, &sg) != 0 || !(sg >= 0) || sg > 10))
            return dr_err_set(err, DR_EINVAL,
                              "size estimate: '%s': S must be a number in [0, 10] (lognormal:S)",
                              s);
        o->mode = DR_SIZE_LOGNORMAL;
        o->sigma = sg;
        return DR_OK;
    }
    return dr_err_set(err, DR_EINVAL,
                      "size estimate: '%s' is not a mode (exact, lognormal:S, none, trace)", s);
}

const char *dr_size_mode_format(const dr_declare_opts_t *o, char *buf, size_t n)
{
    switch (o->mode) {
    case DR_SIZE_EXACT: snprintf(buf, n, "exact"); break;
    case DR_SIZE_NONE: snprintf(buf, n, "none"); break;
    case DR_SIZE_TRACE: snprintf(buf, n, "trace"); break;
    default: snprintf(buf, n, "lognormal:%g", o->sigma); break;
    }
    return buf;
}

/* A standard normal draw (Box-Muller; one of the pair is enough here). */
static double normal(dr_rng_t *r)
{
    double u = dr_rng_uniform(r), v = dr_rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * M_PI * v);
}

/* Slowest positive rate of j's class (1 for class 0). */
static double slowest_rate(const dr_workload_t *wl, const dr_job_t *j)
{
    const dr_perf_table_t *p = &wl->perf;
    if (j->perf_class == 0 || j->perf_class >= p->nclasses)
        return 1.0;
    double minr = 0;
    for (size_t c = 0; c < p->ntypes; c++) {
        double r = p->rate[(size_t)j->perf_class * p->ntypes + c];
        if (r > 0 && (minr == 0 || r < minr))
            minr = r;
    }
    return minr > 0 ? minr : 1.0;
}

int dr_workload_declare(dr_workload_t *wl, const dr_declare_opts_t *o, dr_err_t *err)
{
    if (!(o->sigma >= 0) || !(o->walltime_factor >= 0) || !(o->walltime_noise >= 0) ||
        (o->walltime_factor > 0 && o->walltime_factor < 1) || isinf(o->walltime_factor))
        return dr_err_set(err, DR_EINVAL,
                          "declarations: S >= 0, walltime factor 0 or >= 1, noise >= 0");
    dr_rng_t rng;
    dr_rng_seed(&rng, o->seed ^ 0x5eed5123a11ce5ULL);
    for (size_t i = 0; i < wl->njobs; i++) {
        dr_job_t *j = &wl->jobs[i];
        double truth = wl->work[i];
        /* both draws for every job, whatever the mode, so that modes differ
         * only in what they declare */
        double zs = normal(&rng), zw = normal(&rng);
        switch (o->mode) {
        case DR_SIZE_EXACT: j->work_declared = truth; break;
        case DR_SIZE_LOGNORMAL: j->work_declared = truth * exp(o->sigma * zs); break;
        case DR_SIZE_NONE: j->work_declared = 0; break;
        case DR_SIZE_TRACE: break; /* as read */
        }
        if (!isfinite(j->work_declared) || j->work_declared < 0)
            j->work_declared = 0;
        bool gen_limit = o->mode == DR_SIZE_EXACT || o->mode == DR_SIZE_LOGNORMAL;
        if (gen_limit && j->time_limit == 0 && o->walltime_factor > 0 && isfinite(truth) &&
            truth > 0) {
            double secs = truth / slowest_rate(wl, j) * o->walltime_factor *
                          exp(o->walltime_noise * fabs(zw));
            j->time_limit = dr_time_from_s(secs < 9.0e9 ? secs : 9.0e9);
        }
        if (j->ckpt_every == 0 && j->kind == DR_KIND_TRAIN)
            j->ckpt_every = o->ckpt_every;
    }
    return DR_OK;
}
