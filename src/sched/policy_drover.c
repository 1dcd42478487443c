/* policy_drover.c - drover's default policy: heterogeneity-aware shortest
 * remaining work first, placing each job where it will *finish* earliest.
 *
 * On every change (a job arrives or ends) the policy re-plans all active
 * jobs, running ones included:
 *
 *  1. Order.  Jobs go in ascending remaining GPU-time on their best type,
 *     remaining_time(best) * gpus - shortest remaining work first (SRPT),
 *     which minimises mean completion time on one machine type; dividing by
 *     a boost that grows with the job's slowdown so far keeps long jobs from
 *     starving; running jobs get a small bonus so the plan does not churn.
 *  2. Place.  Each GPU type is a set of slots with the time each becomes
 *     free in the plan (now, or the planned end of the job put there).  A
 *     job needing s GPUs can start on type j when s slots are free; it goes
 *     to the type where start + remaining_time(j) is smallest (earliest
 *     finish time, as in list scheduling for unrelated machines).  So a job
 *     that gains 10x from a V100 waits a little for one rather than crawl on
 *     a K80, while a job that runs as fast on a K80 takes the K80 at once.
 *  3. Act.  Jobs planned to start now start (running ones on the same type
 *     just continue); running jobs planned elsewhere or later are preempted.
 *     This runs even when nothing waits, if a running job would run faster
 *     on a type with free GPUs: it migrates there rather than stay on the
 *     slow type a burst left it on.
 *
 * Remaining work is an estimate (size_estimate.h): from the size the user
 * declared, corrected by how far declarations proved off on completed jobs,
 * or - with nothing declared - from the sizes completed jobs had; either
 * way conditioned on the progress the job has shown, and capped by its
 * walltime limit.  The policy cannot read the work a job will really do:
 * that is not in dr_job_t, and the view's truth is NULL for it.
 *
 * Options: margin=X (0.25: a running job's priority bonus), age=X (4:
 * slowdown from which the boost grows linearly; 0 = no aging),
 * preempt=0|1 (1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drover/placement.h"
#include "drover/sched.h"
#include "drover/util.h"
#include "sched/lp.h"
#include "sched/policy_util.h"
#include "sched/size_estimate.h"

#define NT DR_MAX_GPU_TYPES

typedef struct pair {
    double w;
    uint32_t m; /* index into the active list */
    uint16_t t;
} pair_t;

typedef struct dpol {
    double margin, age, alpha, beta, wake_s;
    bool lp;
    double *prio, *best;
    double *remw, *left; /* estimated remaining work, walltime left (s), per active job */
    size_t remw_cap, left_cap;
    dr_size_est_t est;
    bool planned;
    uint64_t last_gen; /* cluster->freed_gen after the last pass */
    size_t prio_cap, best_cap;
    dr_typemask_t *runm; /* types each active job can run on, this pass */
    size_t runm_cap;
    uint32_t *rank;
    size_t rank_cap;
    bool preempt;
    dr_job_t **act;
    size_t act_cap;
    int *pick; /* type chosen for each active job, -1 */
    size_t pick_cap;
    pair_t *pairs, *pairs_tmp;
    size_t pairs_cap, pairs_tmp_cap;
    unsigned char *sel; /* pending jobs among the candidates of this pass */
    size_t sel_cap;
} dpol_t;

static int dpol_opt(void *ud, const char *k, const char *val, dr_err_t *err)
{
    dpol_t *d = ud;
    double x;
    if (dr_parse_double(val, &x) != 0 || x < 0)
        return dr_err_set(err, DR_EINVAL, "%s: '%s' must be a number >= 0", k, val);
    if (dr_streq_ci(k, "margin"))
        d->margin = x;
    else if (dr_streq_ci(k, "age"))
        d->age = x;
    else if (dr_streq_ci(k, "alpha"))
        d->alpha = x;
    else if (dr_streq_ci(k, "beta"))
        d->beta = x;
    else if (dr_streq_ci(k, "wake"))
        d->wake_s = x;
    else if (dr_streq_ci(k, "lp"))
        d->lp = x != 0;
    else if (dr_streq_ci(k, "preempt"))
        d->preempt = x != 0;
    else
        return dr_err_set(err, DR_EINVAL, "unknown option '%s' (known: margin, age, preempt)", k);
    return DR_OK;
}

static int dpol_create(void **state, const char *opts, const dr_policy_env_t *env, dr_err_t *err)
{
    (void)env;
    dpol_t *d = calloc(1, sizeof *d);
    if (!d)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    d->margin = 0.25;
    d->age = 1.5;
    d->alpha = 5;
    d->beta = 1;
    d->wake_s = 1800;
    d->lp = false;
    d->preempt = true;
    dr_size_est_init(&d->est);
    int rc = dr_policy_opts_each(opts, dpol_opt, d, err);
    if (rc != DR_OK) {
        free(d);
        return rc;
    }
    *state = d;
    return DR_OK;
}

static void dpol_destroy(void *state)
{
    dpol_t *d = state;
    if (d) {
        free(d->act);
        free(d->pick);
        free(d->pairs);
        free(d->pairs_tmp);
        free(d->sel);
        free(d->prio);
        free(d->best);
        free(d->remw);
        free(d->left);
        free(d->runm);
        free(d->rank);
        free(d);
    }
}

static double gpus_of(const dr_job_t *j)
{
    double s = (double)j->req.gpus_per_node * (j->req.nodes ? j->req.nodes : 1);
    return s > 0 ? s : 1;
}

/* Estimated remaining run time of active job m on type t, seconds: its
 * expected remaining work at t's rate, no longer than its walltime limit
 * allows, and at least a minute. */
static double remaining_time(const dpol_t *d, const dr_sched_view_t *v, size_t m, unsigned t)
{
    double r = dr_perf_rate(v->perf, d->act[m], t);
    if (r <= 0)
        return INFINITY;
    double s = d->remw[m] / r;
    if (s > d->left[m])
        s = d->left[m];
    return s > 60 ? s : 60;
}

/* Shortest remaining GPU-time first, aged two ways: the time already
 * waited counts against the remaining time (alpha), so a job that has
 * waited long ranks like a short one; and once its slowdown passes
 * `age`, its priority grows with the 4th power of the excess, so even a
 * wide gang eventually outbids a stream of small jobs. */
static double job_priority(const dpol_t *d, const dr_sched_view_t *v, size_t m, double best)
{
    const dr_job_t *j = d->act[m];
    double wait = dr_time_to_s(v->now - j->submit);
    double eff = best - d->alpha * wait;
    double prio = 1.0 / ((eff > 60 ? eff : 60) * gpus_of(j));
    if (d->age > 0) {
        /* ideal run time: the estimated whole size, done and to do */
        double ideal = best;
        double done = dr_job_work_done(j, v->now);
        if (done > 0 && d->remw[m] > 0 && isfinite(d->remw[m]))
            ideal = best * (done + d->remw[m]) / d->remw[m];
        double slowdown = (wait + best) / (ideal > 1 ? ideal : 1);
        if (slowdown > d->age) {
            double x = slowdown / d->age;
            prio *= x * x * x * x;
        }
    }
    return prio;
}

static int cmp_rank(const void *a, const void *b, void *ud)
{
    const double *prio = ud;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (prio[x] != prio[y])
        return prio[x] > prio[y] ? -1 : 1;
    return x < y ? -1 : (x > y);
}

/* Move the k highest-priority entries of r[0..n) to the front
 * (quickselect; their order among themselves is left to the caller). */
static void select_top(uint32_t *r, size_t n, size_t k, const double *prio)
{
    /* Lomuto quickselect: each round fixes one pivot, so it always ends */
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t p = lo + (hi - lo) / 2, store = lo;
        uint32_t t = r[p];
        r[p] = r[hi - 1];
        r[hi - 1] = t;
        for (size_t i = lo; i + 1 < hi; i++)
            if (cmp_rank(&r[i], &r[hi - 1], (void *)prio) < 0) {
                t = r[i];
                r[i] = r[store];
                r[store++] = t;
            }
        t = r[store];
        r[store] = r[hi - 1];
        r[hi - 1] = t;
        if (store == k)
            break;
        if (k < store)
            hi = store;
        else
            lo = store + 1;
    }
}

/* Sort the pairs by weight, heaviest first, ties in (job index, type)
 * order: the order the greedy assignment takes them in.  The pairs are
 * built in (job index, type) order, so a stable sort on the weight alone
 * gives that order; an LSD radix sort on the weight's bits (non-negative
 * doubles order as their bit patterns) is stable and O(n).  It replaced a
 * qsort that took half of each pass on large clusters. */
static int sort_pairs(dpol_t *d, size_t np)
{
    if (np < 2)
        return DR_OK;
    if (dr_grow((void **)&d->pairs_tmp, &d->pairs_tmp_cap, np, sizeof *d->pairs_tmp) != 0)
        return DR_ENOMEM;
    pair_t *a = d->pairs, *b = d->pairs_tmp;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t cnt[257] = {0};
        for (size_t i = 0; i < np; i++) {
            uint64_t k;
            memcpy(&k, &a[i].w, sizeof k);
            cnt[((~k >> shift) & 0xff) + 1]++;
        }
        bool one_bucket = false;
        for (size_t x = 1; x <= 256; x++)
            if (cnt[x] == np)
                one_bucket = true;
        if (one_bucket)
            continue; /* every key has the same byte here */
        for (size_t x = 1; x <= 256; x++)
            cnt[x] += cnt[x - 1];
        for (size_t i = 0; i < np; i++) {
            uint64_t k;
            memcpy(&k, &a[i].w, sizeof k);
            b[cnt[(~k >> shift) & 0xff]++] = a[i];
        }
        pair_t *t = a;
        a = b;
        b = t;
    }
    if (a != d->pairs)
        memcpy(d->pairs, a, np * sizeof *a);
    return DR_OK;
}

/* Could a running job run faster on a type with free GPUs now?  (A cheap
 * test: the re-plan decides whether it actually moves.) */
static bool can_upgrade(const dr_sched_view_t *v, dr_job_t *const *run, size_t nrun)
{
    const dr_cluster_t *c = v->cluster;
    dr_typemask_t roomy = 0;
    for (size_t t = 0; t < c->ntypes; t++)
        if (dr_cluster_free_milli(c, (int)t) > 0)
            roomy |= (dr_typemask_t)1 << t;
    for (size_t i = 0; roomy && i < nrun; i++) {
        const dr_job_t *j = run[i];
        double cur = dr_perf_rate(v->perf, j, j->alloc.type);
        dr_typemask_t m = dr_perf_runnable(v->perf, c, j) & roomy;
        for (size_t t = 0; t < c->ntypes; t++)
            if ((m >> t & 1) && dr_perf_rate(v->perf, j, (unsigned)t) > cur)
                return true;
    }
    return false;
}

static int dpol_pass(void *state, const dr_sched_view_t *v, dr_time_t *wake_at, dr_err_t *err)
{
    dpol_t *d = state;
    const dr_cluster_t *c = v->cluster;
    size_t na = 0, cap = v->npending + v->nrunning + 1;
    *wake_at = DR_TIME_NEVER;
    if (dr_grow((void **)&d->act, &d->act_cap, cap, sizeof *d->act) != 0 ||
        dr_grow((void **)&d->pick, &d->pick_cap, cap, sizeof *d->pick) != 0 ||
        dr_grow((void **)&d->pairs, &d->pairs_cap, cap * (c->ntypes ? c->ntypes : 1),
                sizeof *d->pairs) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    for (size_t i = 0; i < v->nrunning; i++)
        d->act[na++] = v->running[i];
    size_t nrun = na;
    /* If nothing was freed since the last pass and jobs only arrived, jobs
     * that were not picked then still are not (capacity only shrank and
     * their priority relative to each other is unchanged): only the new
     * arrivals can outbid running jobs.  Timed wake-ups (aging) and
     * releases re-plan everything. */
    bool incremental = d->planned && v->nfresh > 0 && v->cluster->freed_gen == d->last_gen;
    dr_job_t *const *cand = incremental ? v->fresh : v->pending;
    size_t ncand = incremental ? v->nfresh : v->npending;
    for (size_t i = 0; i < ncand; i++) {
        dr_job_t *j = cand[i];
        if (!j->array_throttle || !dr_sched_throttled(v->sched, j))
            d->act[na++] = j;
    }
    d->planned = true;
    dr_size_est_learn(&d->est, v);
    /* Nothing waits: the only decision left is to move a running job to a
     * faster type that has room now (a long job that got a K80 in a burst
     * would otherwise crawl there long after the V100s went idle). */
    if (na == nrun && (!d->preempt || !can_upgrade(v, d->act, nrun)))
        return DR_OK;
    /* priority of every active job; only the best few (a couple of times
     * the GPUs there are, plus everything running) can get GPUs now, so
     * only they are scored per type - a long queue costs O(n log n), not
     * an LP over every pending job */
    if (dr_grow((void **)&d->prio, &d->prio_cap, na, sizeof *d->prio) != 0 ||
        dr_grow((void **)&d->best, &d->best_cap, na, sizeof *d->best) != 0 ||
        dr_grow((void **)&d->remw, &d->remw_cap, na, sizeof *d->remw) != 0 ||
        dr_grow((void **)&d->left, &d->left_cap, na, sizeof *d->left) != 0 ||
        dr_grow((void **)&d->runm, &d->runm_cap, na, sizeof *d->runm) != 0 ||
        dr_grow((void **)&d->rank, &d->rank_cap, na, sizeof *d->rank) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    double total_gpus = 0;
    for (size_t t = 0; t < c->ntypes; t++)
        total_gpus += (double)dr_cluster_total_gpus(c, (int)t);
    size_t nrank = 0;
    for (size_t m = 0; m < na; m++) {
        dr_job_t *j = d->act[m];
        d->pick[m] = -1;
        d->prio[m] = 0;
        dr_typemask_t run = d->runm[m] = dr_perf_runnable(v->perf, c, j);
        d->remw[m] = dr_size_est_remaining_work(&d->est, v, j, dr_perf_best_rate(v->perf, j, run));
        d->left[m] = dr_size_est_limit_left_s(v, j);
        double best = INFINITY;
        for (size_t t = 0; t < c->ntypes; t++)
            if (run >> t & 1) {
                double rt = remaining_time(d, v, m, (unsigned)t);
                if (rt < best)
                    best = rt;
            }
        d->best[m] = best;
        if (!(best < INFINITY) || gpus_of(j) > total_gpus)
            continue;
        d->prio[m] = job_priority(d, v, m, best);
        if (m >= nrun)
            d->rank[nrank++] = (uint32_t)m;
    }
    size_t limit = (size_t)(2 * total_gpus) + 16;
    if (nrank > limit) {
        select_top(d->rank, nrank, limit, d->prio); /* O(n), not a full sort */
        nrank = limit;
    }
    /* the candidates in index order: pairs come out in (job, type) order */
    if (dr_grow((void **)&d->sel, &d->sel_cap, na + 1, sizeof *d->sel) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    memset(d->sel, 0, na);
    for (size_t k = 0; k < nrank; k++)
        d->sel[d->rank[k]] = 1;
    size_t np = 0;
    for (size_t m = 0; m < na; m++) {
        if (m >= nrun && !d->sel[m])
            continue;
        dr_job_t *j = d->act[m];
        double best = d->best[m];
        if (d->prio[m] <= 0)
            continue;
        dr_typemask_t run = d->runm[m];
        bool running = m < nrun;
        for (size_t t = 0; t < c->ntypes; t++) {
            if (!(run >> t & 1))
                continue;
            if (running && !d->preempt && t != j->alloc.type)
                continue;
            double rt = remaining_time(d, v, m, (unsigned)t);
            /* a type is worth the job's priority scaled by how efficiently
             * the job runs there */
            double w = d->prio[m] * (d->beta == 1 ? best / rt : pow(best / rt, d->beta));
            if (running && j->alloc.type == t)
                w *= 1 + d->margin; /* incumbents keep their GPUs unless clearly outbid */
            d->pairs[np++] = (pair_t){w, (uint32_t)m, (uint16_t)t};
        }
    }
    if (sort_pairs(d, np) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    double left[NT] = {0};
    for (size_t t = 0; t < c->ntypes; t++)
        left[t] = (double)dr_cluster_total_gpus(c, (int)t);
    if (d->lp && np) {
        /* exact assignment: maximise sum of pair weights (transportation LP) */
        dr_lp_t *lp = dr_lp_new(np, true);
        double *x = malloc(np * sizeof *x);
        int *cols = malloc((np + 1) * sizeof *cols);
        double *vals = malloc((np + 1) * sizeof *vals);
        if (lp && x && cols && vals) {
            for (size_t i = 0; i < np; i++) {
                dr_lp_bounds(lp, i, 0, 1);
                dr_lp_obj(lp, i, d->pairs[i].w * 1e6);
            }
            for (size_t m = 0; m < na; m++) {
                size_t k = 0;
                for (size_t i = 0; i < np; i++)
                    if (d->pairs[i].m == m)
                        cols[k] = (int)i, vals[k++] = 1;
                if (k)
                    dr_lp_row(lp, k, cols, vals, -INFINITY, 1);
            }
            for (size_t t = 0; t < c->ntypes; t++) {
                size_t k = 0;
                for (size_t i = 0; i < np; i++)
                    if (d->pairs[i].t == t)
                        cols[k] = (int)i, vals[k++] = gpus_of(d->act[d->pairs[i].m]);
                if (k)
                    dr_lp_row(lp, k, cols, vals, -INFINITY, left[t]);
            }
            if (dr_lp_solve(lp, x, NULL, NULL) == DR_OK)
                for (size_t i = 0; i < np; i++) {
                    pair_t *p = &d->pairs[i];
                    double sz = gpus_of(d->act[p->m]);
                    if (x[i] > 0.5 && d->pick[p->m] < 0 && sz <= left[p->t]) {
                        d->pick[p->m] = p->t;
                        left[p->t] -= sz;
                    }
                }
        }
        dr_lp_free(lp);
        free(x);
        free(cols);
        free(vals);
    }
    for (size_t i = 0; i < np; i++) {
        pair_t *p = &d->pairs[i];
        if (d->pick[p->m] >= 0)
            continue;
        double sz = gpus_of(d->act[p->m]);
        if (sz > left[p->t])
            continue;
        left[p->t] -= sz;
        d->pick[p->m] = p->t;
    }
    int rc = DR_OK;
    for (size_t m = 0; m < nrun && rc == DR_OK; m++)
        if (d->pick[m] != (int)d->act[m]->alloc.type)
            rc = dr_sched_decide_preempt(v->sched, d->act[m], "outbid by a shorter job");
    for (size_t m = 0; m < na && rc == DR_OK; m++) {
        dr_job_t *j = d->act[m];
        if (d->pick[m] < 0 || j->state != DR_JOB_PENDING)
            continue;
        dr_alloc_t a;
        int prc = dr_place(v->cluster, &j->req, 1ULL << d->pick[m], v->place, &a);
        if (prc == DR_OK)
            rc = dr_sched_decide_start(v->sched, j, &a);
        else if (prc != DR_ENOSPC)
            rc = prc;
    }
    dr_sched_count_considered(v->sched, na);
    d->last_gen = v->cluster->freed_gen;
    if (d->alpha > 0 && v->npending)
        *wake_at = dr_time_add(v->now, dr_time_from_s(d->wake_s));
    return rc == DR_OK ? DR_OK : dr_err_set(err, rc, "drover: applying decisions failed");
}

const dr_policy_ops_t dr_policy_drover = {
    .name = "drover",
    .doc = "drover's default: heterogeneity-aware shortest remaining work per GPU first, with "
           "aging; options margin=X, age=X, preempt=0|1",
    .oracle = false,
    .create = dpol_create,
    .pass = dpol_pass,
    .destroy = dpol_destroy,
};
