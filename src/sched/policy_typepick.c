/* policy_typepick.c - two reference points for the cost-aware policy:
 * "always the fastest GPU" (`fastest`) and "always the cheapest GPU that
 * fits" (`cheapest`).
 *
 * Why: they are what a site does by hand when it optimises one thing.
 * `fastest` buys speed everywhere (the fastest type for each job by its
 * rate, peak bf16 TFLOPS breaking ties, e.g. for jobs with no measured
 * rate); `cheapest` buys the lowest USD per GPU-hour among the types the job
 * fits on (its memory and its shape: a 1 x 8 gang does not fit 4-GPU
 * nodes).  Both take jobs in queue order and ignore deadlines; a job that
 * cannot start on its preferred type takes the next one in that order that
 * has room (strict=1: it waits for its first choice instead), and a job that
 * fits nowhere now is skipped, not blocking the jobs behind it.  Neither
 * rents cloud nodes.  The cost-aware policy is measured against them in
 * bench/cost.c. */
#include <math.h>
#include <stdlib.h>

#include "drover/placement.h"
#include "drover/sched.h"
#include "drover/util.h"
#include "sched/policy_util.h"

typedef struct tpick {
    bool cheapest;
    bool strict;
} tpick_t;

static int tpick_opt(void *ud, const char *k, const char *val, dr_err_t *err)
{
    tpick_t *d = ud;
    double x;
    if (!dr_streq_ci(k, "strict"))
        return dr_err_set(err, DR_EINVAL, "unknown option '%s' (known: strict)", k);
    if (dr_parse_double(val, &x) != 0 || (x != 0 && x != 1))
        return dr_err_set(err, DR_EINVAL, "strict: '%s' must be 0 or 1", val);
    d->strict = x != 0;
    return DR_OK;
}

static int tpick_create(void **state, const char *opts, bool cheapest, dr_err_t *err)
{
    tpick_t *d = calloc(1, sizeof *d);
    if (!d)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    d->cheapest = cheapest;
    int rc = dr_policy_opts_each(opts, tpick_opt, d, err);
    if (rc != DR_OK) {
        free(d);
        return rc;
    }
    *state = d;
    return DR_OK;
}

static int fastest_create(void **state, const char *opts, const dr_policy_env_t *env, dr_err_t *err)
{
    (void)env;
    return tpick_create(state, opts, false, err);
}

static int cheapest_create(void **state, const char *opts, const dr_policy_env_t *env,
                           dr_err_t *err)
{
    (void)env;
    return tpick_create(state, opts, true, err);
}

static void tpick_destroy(void *state)
{
    free(state);
}

/* Sort key of type t for job j: lower is preferred. */
static double type_key(const tpick_t *d, const dr_sched_view_t *v, const dr_job_t *j, unsigned t)
{
    const dr_gpu_spec_t *g = &v->cluster->types[t];
    if (j->req.pref[0]) /* the user's order of preference comes first */
        return dr_req_pref_rank(&j->req, t);
    if (d->cheapest) /* unknown prices last */
        return isfinite(g->price_hr) ? g->price_hr : INFINITY;
    /* fastest: by rate, then by peak (so rate-1 jobs prefer the biggest GPU) */
    double peak = isfinite(g->bf16_tflops) ? g->bf16_tflops : 0;
    return -(dr_perf_rate(v->perf, j, t) * 1e6 + peak);
}

static int tpick_pass(void *state, const dr_sched_view_t *v, dr_time_t *wake_at, dr_err_t *err)
{
    const tpick_t *d = state;
    dr_cluster_t *c = v->cluster;
    *wake_at = DR_TIME_NEVER;
    for (size_t i = 0; i < v->npending; i++) {
        dr_job_t *j = v->pending[i];
        if (j->state != DR_JOB_PENDING || dr_sched_throttled(v->sched, j))
            continue;
        if (j->req.gpus_per_node == 0) {
            int rc = dr_policy_try_start(v, j);
            if (rc != DR_OK && rc != DR_ENOSPC)
                return dr_err_set(err, rc, "%s: starting job %llu failed",
                                  d->cheapest ? "cheapest" : "fastest", (unsigned long long)j->id);
            continue;
        }
        /* the types it runs on whose nodes could ever host its shape */
        dr_typemask_t left = 0, run = dr_perf_runnable(v->perf, c, j);
        for (unsigned t = 0; t < c->ntypes; t++) {
            dr_job_req_t one = j->req;
            one.types = 1ULL << t;
            if ((run >> t & 1) && dr_cluster_total_gpus(c, (int)t) > 0 &&
                dr_cluster_req_possible(c, &one, NULL) == DR_OK)
                left |= one.types;
        }
        left &= dr_sched_account_types(v->sched, j); /* its account's limits */
        for (bool first = true; left; first = false) {
            unsigned best = 0;
            double bk = INFINITY;
            bool found = false;
            for (unsigned t = 0; t < c->ntypes; t++) {
                double k = type_key(d, v, j, t);
                if ((left >> t & 1) && (!found || k < bk)) {
                    best = t;
                    bk = k;
                    found = true;
                }
            }
            if (!found || (!first && d->strict))
                break;
            left &= ~(1ULL << best);
            dr_alloc_t a;
            int rc = dr_place(c, &j->req, 1ULL << best, v->place, &a);
            if (rc == DR_OK)
                rc = dr_sched_decide_start(v->sched, j, &a);
            if (rc == DR_OK)
                break;
            if (rc != DR_ENOSPC)
                return dr_err_set(err, rc, "%s: starting job %llu failed",
                                  d->cheapest ? "cheapest" : "fastest", (unsigned long long)j->id);
        }
    }
    dr_sched_count_considered(v->sched, v->npending);
    return DR_OK;
}

const dr_policy_ops_t dr_policy_fastest = {
    .name = "fastest",
    .doc = "reference: each job on the fastest GPU type with room (next fastest if full); "
           "option strict=1 waits for the fastest",
    .oracle = false,
    .create = fastest_create,
    .pass = tpick_pass,
    .destroy = tpick_destroy,
};

const dr_policy_ops_t dr_policy_cheapest = {
    .name = "cheapest",
    .doc = "reference: each job on the cheapest GPU type (USD/GPU-hour) it fits with room; "
           "option strict=1 waits for the cheapest",
    .oracle = false,
    .create = cheapest_create,
    .pass = tpick_pass,
    .destroy = tpick_destroy,
};
