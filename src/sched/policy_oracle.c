/* policy_oracle.c - oracle shortest-job-first (SJF) and shortest-remaining-
 * time-first (SRTF): references that know every job's true run time, which
 * only the simulator can supply.  They bound what runtime-aware scheduling
 * could gain; neither is fair (long jobs can wait indefinitely).
 *
 *   sjf   non-preemptive: pending jobs start shortest first, skipping those
 *         that do not fit.
 *   srtf  preemptive: as sjf, and a pending job that does not fit preempts
 *         running jobs whose remaining time is longer than its whole run
 *         time, longest first, when that makes room. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drover/placement.h"
#include "drover/sched.h"
#include "drover/truth.h"
#include "drover/util.h"
#include "sched/policy_util.h"

/* Remaining run time of j in seconds on the fastest GPU type it may use,
 * from its true remaining work (v->truth: these policies are oracles).
 * Pending and running jobs are measured on the same basis, so a job placed
 * on a slow GPU does not look longer than it is and get preempted back and
 * forth. */
static double oracle_remaining_s(const dr_sched_view_t *v, const dr_job_t *j)
{
    double rate = dr_perf_best_rate(v->perf, j, dr_perf_runnable(v->perf, v->cluster, j));
    double rem = dr_truth_remaining(v->truth, j, v->now);
    return rate > 0 && !isnan(rem) ? rem / rate : 1e300;
}

typedef struct keyed {
    double key;
    uint64_t id;
    dr_job_t *job;
} keyed_t;

typedef struct oracle {
    bool preempt;
    double min_gain; /* srtf: preempt only if victim remaining > min_gain x job's */
    size_t max_probes;
    keyed_t *q;
    size_t qcap;
    keyed_t *victims;
    size_t vcap;
    uint64_t last_gen; /* cluster->freed_gen after the last pass */
    bool ran;
} oracle_t;

static int cmp_asc(const void *a, const void *b)
{
    const keyed_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id);
}

static int cmp_desc(const void *a, const void *b)
{
    return cmp_asc(b, a);
}

static int oracle_opt(void *ud, const char *k, const char *val, dr_err_t *err)
{
    oracle_t *o = ud;
    if (o->preempt && dr_streq_ci(k, "min_gain")) {
        if (dr_parse_double(val, &o->min_gain) != 0 || o->min_gain < 1)
            return dr_err_set(err, DR_EINVAL, "min_gain: '%s' must be a number >= 1", val);
        return DR_OK;
    }
    if (o->preempt && dr_streq_ci(k, "probes")) {
        uint64_t n;
        if (dr_parse_u64(val, &n) != 0)
            return dr_err_set(err, DR_EINVAL, "probes: '%s' is not a count", val);
        o->max_probes = (size_t)n;
        return DR_OK;
    }
    return dr_err_set(err, DR_EINVAL, "unknown option '%s'%s", k,
                      o->preempt ? " (known: min_gain, probes)" : "");
}

static int create(void **state, const char *opts, bool preempt, dr_err_t *err)
{
    oracle_t *o = calloc(1, sizeof *o);
    if (!o)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    o->preempt = preempt;
    o->min_gain = 1.0;
    o->max_probes = 64;
    int rc = dr_policy_opts_each(opts, oracle_opt, o, err);
    if (rc != DR_OK) {
        free(o);
        return rc;
    }
    *state = o;
    return DR_OK;
}

static int sjf_create(void **state, const char *opts, const dr_policy_env_t *env, dr_err_t *err)
{
    (void)env;
    return create(state, opts, false, err);
}

static int srtf_create(void **state, const char *opts, const dr_policy_env_t *env, dr_err_t *err)
{
    (void)env;
    return create(state, opts, true, err);
}

static void oracle_destroy(void *state)
{
    oracle_t *o = state;
    if (o) {
        free(o->q);
        free(o->victims);
        free(o);
    }
}

/* Make room for j by preempting running jobs longer than it (longest
 * first).  Victims are released one at a time until j fits; victims that
 * turn out not to be needed are put back exactly where they were.  Returns
 * DR_OK if j started. */
static int try_preempt(oracle_t *o, const dr_sched_view_t *v, dr_job_t *j, double j_rem,
                       size_t nvictims)
{
    dr_cluster_t *c = v->cluster;
    dr_typemask_t allowed = j->req.gpus_per_node ? dr_perf_runnable(v->perf, c, j) : 0;
    size_t released = 0;
    dr_alloc_t a;
    bool fit = false;
    for (size_t k = 0; k < nvictims && !fit; k++) {
        keyed_t *vk = &o->victims[k];
        if (!vk->job || vk->key <= o->min_gain * j_rem)
            break; /* sorted longest first: no longer victims left */
        dr_cluster_give(c, &vk->job->alloc);
        vk->id |= 1ULL << 63; /* mark released (ids are < 2^63) */
        released = k + 1;
        fit = dr_place(c, &j->req, allowed, v->place, &a) == DR_OK;
    }
    if (!fit) {
        for (size_t k = 0; k < released; k++)
            if (o->victims[k].id >> 63) {
                dr_cluster_take(c, &o->victims[k].job->alloc, NULL);
                o->victims[k].id &= ~(1ULL << 63);
            }
        return DR_ENOSPC;
    }
    /* put back victims whose resources j did not need */
    for (size_t k = 0; k < released; k++)
        if (dr_cluster_take(c, &o->victims[k].job->alloc, NULL) == DR_OK)
            o->victims[k].id &= ~(1ULL << 63);
    /* undo j's booking and the needed releases, then do it for real
     * through the scheduler so the state machine and log record it */
    dr_cluster_give(c, &a);
    dr_alloc_free(&a);
    for (size_t k = 0; k < released; k++)
        if (o->victims[k].id >> 63)
            dr_cluster_take(c, &o->victims[k].job->alloc, NULL);
    for (size_t k = 0; k < released; k++)
        if (o->victims[k].id >> 63) {
            dr_job_t *victim = o->victims[k].job;
            o->victims[k].job = NULL;
            o->victims[k].id &= ~(1ULL << 63);
            int rc = dr_sched_decide_preempt(v->sched, victim, "preempted by a shorter job");
            if (rc != DR_OK)
                return rc;
        }
    return dr_policy_try_start(v, j);
}

static int oracle_pass(void *state, const dr_sched_view_t *v, dr_time_t *wake_at, dr_err_t *err)
{
    oracle_t *o = state;
    *wake_at = DR_TIME_NEVER;
    if (dr_grow((void **)&o->q, &o->qcap, v->npending + 1, sizeof *o->q) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    /* sjf: if nothing was freed since the last pass, every job that did not
     * fit then does not fit now, so only newly queued jobs need a look.
     * (Not for srtf: a job started since may now be a victim.) */
    bool incremental = !o->preempt && o->ran && v->cluster->freed_gen == o->last_gen;
    dr_job_t *const *cand = incremental ? v->fresh : v->pending;
    size_t ncand = incremental ? v->nfresh : v->npending, n = 0;
    for (size_t i = 0; i < ncand; i++) {
        dr_job_t *j = cand[i];
        if (!j->array_throttle || !dr_sched_throttled(v->sched, j))
            o->q[n++] = (keyed_t){oracle_remaining_s(v, j), j->id, j};
    }
    if (n > 1)
        qsort(o->q, n, sizeof *o->q, cmp_asc);
    /* victims: running jobs by remaining time, longest first (taken before
     * any decision, as the view's running list changes with decisions) */
    size_t nv = 0;
    if (o->preempt) {
        if (dr_grow((void **)&o->victims, &o->vcap, v->nrunning + 1, sizeof *o->victims) != 0)
            return dr_err_set(err, DR_ENOMEM, "out of memory");
        for (size_t i = 0; i < v->nrunning; i++)
            o->victims[nv++] =
                (keyed_t){oracle_remaining_s(v, v->running[i]), v->running[i]->id, v->running[i]};
        if (nv > 1)
            qsort(o->victims, nv, sizeof *o->victims, cmp_desc);
    }
    size_t probes = 0;
    for (size_t i = 0; i < n; i++) {
        dr_job_t *j = o->q[i].job;
        int rc = dr_policy_try_start(v, j);
        if (rc == DR_ENOSPC && o->preempt && probes < o->max_probes && nv && o->victims[0].job &&
            o->victims[0].key > o->min_gain * o->q[i].key) {
            probes++;
            /* drop victims already preempted (job = NULL) from the front */
            rc = try_preempt(o, v, j, o->q[i].key, nv);
            size_t w = 0;
            for (size_t k = 0; k < nv; k++)
                if (o->victims[k].job)
                    o->victims[w++] = o->victims[k];
            nv = w;
        }
        if (rc != DR_OK && rc != DR_ENOSPC)
            return dr_err_set(err, rc, "%s: starting job %llu failed", o->preempt ? "srtf" : "sjf",
                              (unsigned long long)j->id);
    }
    dr_sched_count_considered(v->sched, n);
    o->ran = true;
    o->last_gen = v->cluster->freed_gen;
    return DR_OK;
}

const dr_policy_ops_t dr_policy_sjf = {
    .name = "sjf",
    .doc = "oracle shortest-job-first, non-preemptive (knows true run times; simulation only)",
    .oracle = true,
    .create = sjf_create,
    .pass = oracle_pass,
    .destroy = oracle_destroy,
};

const dr_policy_ops_t dr_policy_srtf = {
    .name = "srtf",
    .doc = "oracle shortest-remaining-time-first, preemptive (simulation only); options "
           "min_gain=X, probes=N",
    .oracle = true,
    .create = srtf_create,
    .pass = oracle_pass,
    .destroy = oracle_destroy,
};
