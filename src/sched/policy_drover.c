/* policy_drover.c - drover's default policy: heterogeneity-aware shortest
 * remaining work first, aged, each job on the GPU type it uses best.
 *
 * On every change (a job arrives or ends, or the aging timer fires) the
 * policy re-plans the running jobs and the best few pending ones:
 *
 *  1. Priority.  1 / (max(60 s, T_best - alpha * waited) * GPUs), T_best the
 *     job's estimated remaining time on its fastest type: shortest remaining
 *     GPU-time first (SRPT), which minimises mean completion time on one
 *     machine type, with the time waited counted against the remaining
 *     time; once the slowdown it would end with if it ran now ((waited +
 *     T_best) / T_best) passes `age`, times the 4th power of the excess, so
 *     that long jobs and wide gangs do not starve (priority_of).
 *  2. Place.  Every (job, type) pair is worth priority * T_best / T_type,
 *     the priority scaled by how efficiently the job runs there - or, on
 *     the types that finish it by its deadline (without one: within
 *     `slowdown` of its best time), by how cheaply it does its work there
 *     (type_values: routing by cost where it costs no completion time);
 *     pairs are
 *     taken greedily, heaviest first, while the type has room (lp=1: as a
 *     transportation LP).  A job that gains 10x from a V100 outbids, for the
 *     V100, one that gains 2x; that one takes a K80, where it loses little.
 *     A running job's pair on its own type counts 1 + margin times: it keeps
 *     its GPUs unless clearly outbid, so the plan does not churn; one that
 *     checkpoints counts more again by the work a stop would lose, so the
 *     victims are those that lose least.
 *  3. Act.  Jobs planned onto a type start there (running ones on their own
 *     type just continue; a task whose array's throttle this pass's starts
 *     used up waits); running jobs planned elsewhere or nowhere are
 *     preempted - if they checkpoint: one that does not would lose all its
 *     work, so it keeps its GPUs (may_stop; PreemptWithoutCheckpoint=YES lets
 *     it be moved to a faster type).  This runs even when nothing waits, if a running job
 * would run faster on a type with free GPUs: it migrates there rather than stay on the slow type a
 * burst left it on.
 *
 * Remaining work is an estimate (size_estimate.h): from the size the user
 * declared, corrected by how far declarations proved off on completed jobs,
 * or - with nothing declared - from the sizes completed jobs had; either
 * way conditioned on the progress the job has shown, and capped by its
 * walltime limit.  The policy cannot read the work a job will really do:
 * that is not in dr_job_t, and the view's truth is NULL for it.
 *
 * What a pass costs.  Only the best 2 x GPUs + 16 pending jobs, and of
 * gangs of g GPUs at most 2 x GPUs / g + 16 (as many as fill the cluster
 * twice), are planned for: the candidates.  Finding them must not cost a
 * scan of the queue: a burst makes the queue long while every job end
 * forces a re-plan, and scoring every pending job on every pass made a
 * burst of n jobs cost O(n^2) estimates (4,000 queued 8-GPU jobs: 1.6 s of
 * CPU; 50,000: 224 s).  So:
 *  - after mere arrivals, with nothing freed since the last pass, only the
 *    new jobs can outbid the running ones, and only they are scored;
 *  - a queue of no more than 2 x GPUs + 16 jobs is scored whole, afresh,
 *    as it always was;
 *  - a longer one is searched in an index of the pending jobs
 *    (pending_index.h).  Each job enters it once, with its estimate
 *    cached: for a waiting job that changes only when the size estimator
 *    does, and its priority then depends on time through its wait alone,
 *    in a way the index bounds over subtrees.  A pass takes the best jobs
 *    of each gang size by their cached estimates (exactly, ties in queue
 *    order) in about O(candidates x log n) - last pass's best give a
 *    threshold, priorities of waiting jobs only grow - and scores only the
 *    candidates afresh for the plan.  Every cached estimate is recomputed
 *    when the estimator's parameters have moved by more than `rekey`
 *    (0.01, in ln-size units) since the last time, but no sooner than the
 *    passes since then have scored as many jobs as the queue holds, so
 *    re-keying at most doubles the work.  With rekey=0 estimates are
 *    recomputed at every move, and the policy decides exactly as a scan of
 *    the whole queue (index=0) does, record for record
 *    (tests/unit/test_drover_index.c).
 * A pass thus costs O((running + candidates) x types + candidates x log n),
 * bounded by the cluster, not the queue; a burst of n jobs that per pass
 * plus O(n log n) for the index.  (The per-size cap is new with the index:
 * before, 2 x GPUs + 16 candidates of any size, which for 8-GPU jobs is
 * 16 times what can run.  It changes nothing on Gavel's benchmark.)
 *
 * Options: margin=X (0.25: a running job's bonus), age=X (1.5: slowdown
 * from which the boost grows; 0 = no aging), alpha=X (5), beta=X (1:
 * exponent on the efficiency factor), wake=S (1800: aging timer), lp=0|1
 * (0), preempt=0|1 (1), index=0|1 (1; 0 scores every pending job on every
 * pass: the reference the index is tested against), rekey=X (0.01),
 * fairshare=X (1: the exponent on the account's fair-share weight that
 * multiplies every priority, sched.h; 0 = fair share ignored), slowdown=X
 * (1: how much slower a type a job without a deadline accepts for a
 * saving), cost=0|1 (1: route by cost; 0: by speed alone).
 *
 * Fair share.  Between accounts whose factors differ, a job's priority is
 * scaled by its account's weight (its factor over the highest), so the
 * account that used more of its share waits while the other's jobs of a
 * like size go first; sizes still count within and across accounts.  With
 * one account the weight is exactly 1 and nothing changes. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drover/placement.h"
#include "drover/sched.h"
#include "drover/util.h"
#include "sched/lp.h"
#include "sched/pending_index.h"
#include "sched/policy_util.h"
#include "sched/size_estimate.h"

#define NT DR_MAX_GPU_TYPES
/* the slowdown a job without a deadline accepts for a saving, by default
 * (docs/scheduling.md, "Routing by cost") */
#define SLOWDOWN_DEFAULT 1.0

typedef struct pair {
    double w;
    uint32_t m; /* index into the active list */
    uint16_t t;
} pair_t;

/* A pending job that may get GPUs this pass, with what it was scored on. */
typedef struct cand {
    double prio;
    dr_job_t *j;
    uint32_t rec; /* its index record, DR_PIDX_NONE if it was scored afresh */
    double best, remw, left;
    dr_typemask_t runm;
} cand_t;

/* The size estimator's parameters the cached estimates were computed with. */
typedef struct est_snap {
    double decl_mu, decl_sigma, free_mu, free_sigma, n;
} est_snap_t;

/* A record a pass found among the best, as it was then: its priority then
 * is a lower bound on its priority now while its estimate is the same
 * (gen: the same record, ver: the same estimate), since waiting only ever
 * raises a priority. */
typedef struct kept {
    uint32_t rec, gen, ver;
    double v;
} kept_t;

/* For a gang size, how far below last pass's best a descent starts. */
typedef struct rho {
    double g, v;
} rho_t;

typedef struct dpol {
    double margin, age, alpha, beta, wake_s;
    /* cost routing: a job without a deadline accepts types up to `slowdown`
     * times slower than its fastest for a saving (1 = none); cost=0 turns
     * routing by cost off altogether (deadlines too) */
    double slowdown;
    bool cost;
    double rekey;        /* drift of the estimator that re-keys the index (0: any) */
    double fairshare;    /* exponent on the fair-share weight (0: ignore it) */
    uint64_t last_fsgen; /* dr_sched_fairshare_gen after the last pass */
    bool lp, use_index;
    double *prio, *best;
    double *remw, *left; /* estimated remaining work, walltime left (s), per active job */
    size_t remw_cap, left_cap;
    dr_size_est_t est;
    bool planned;
    uint64_t last_gen; /* cluster->freed_gen after the last pass */
    size_t prio_cap, best_cap;
    dr_typemask_t *runm; /* types each active job can run on, this pass */
    size_t runm_cap;
    bool preempt;
    dr_job_t **act;
    size_t act_cap;
    int *pick; /* type chosen for each active job, -1 */
    size_t pick_cap;
    pair_t *pairs, *pairs_tmp;
    size_t pairs_cap, pairs_tmp_cap;
    /* the pending index and what a pass keeps of it */
    dr_pidx_t idx;
    /* Pending jobs that ask for no GPU: they compete for no type, so the
     * plan (pairs of job and GPU type) has no place for them; they start in
     * queue order wherever they fit (cpu_starts). */
    dr_job_t **cpuq;
    size_t ncpu, cpu_cap;
    est_snap_t snap; /* estimator when the index was last re-keyed */
    cand_t *cand;
    size_t ncand, cand_cap;
    dr_pidx_hit_t *hits;
    size_t nhits, hits_cap;
    cand_t *cand2; /* (sorting) */
    size_t cand2_cap;
    struct qkey *qk;
    size_t qk_cap;
    unsigned char *mark;
    size_t mark_cap;
    dr_pidx_hit_t *sel; /* the best of each size, this pass */
    size_t nsel, sel_cap;
    kept_t *keep, *keep2; /* best records of the last pass; of this one */
    size_t nkeep, keep_cap, nkeep2, keep2_cap;
    unsigned char *usable, *usable_c; /* per index tree, this pass; of one size */
    size_t usable_cap, usable_c_cap;
    rho_t *rho; /* per gang size */
    size_t nrho, rho_cap;
    struct gcount *gc;
    size_t gc_cap;
    size_t since_rekey; /* jobs scored since the last re-key */
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
    else if (dr_streq_ci(k, "index"))
        d->use_index = x != 0;
    else if (dr_streq_ci(k, "rekey"))
        d->rekey = x;
    else if (dr_streq_ci(k, "fairshare"))
        d->fairshare = x;
    else if (dr_streq_ci(k, "slowdown") && x >= 1)
        d->slowdown = x;
    else if (dr_streq_ci(k, "slowdown"))
        return dr_err_set(err, DR_EINVAL, "slowdown: '%s' must be a number >= 1", val);
    else if (dr_streq_ci(k, "cost"))
        d->cost = x != 0;
    else
        return dr_err_set(err, DR_EINVAL,
                          "unknown option '%s' (known: margin, age, alpha, beta, wake, lp, "
                          "preempt, index, rekey, fairshare, slowdown, cost)",
                          k);
    return DR_OK;
}

static est_snap_t snap_of(const dr_size_est_t *e)
{
    return (est_snap_t){e->decl_mu, e->decl_sigma, e->free_mu, e->free_sigma,
                        e->decl_n + e->free_n};
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
    d->use_index = true;
    d->rekey = 0.01;
    d->fairshare = 1;
    d->slowdown = SLOWDOWN_DEFAULT;
    d->cost = true;
    dr_size_est_init(&d->est);
    int rc = dr_policy_opts_each(opts, dpol_opt, d, err);
    if (rc != DR_OK) {
        free(d);
        return rc;
    }
    dr_pidx_init(&d->idx, d->alpha, d->age);
    d->snap = snap_of(&d->est);
    *state = d;
    return DR_OK;
}

static void dpol_destroy(void *state)
{
    dpol_t *d = state;
    if (d) {
        free(d->cpuq);
        free(d->act);
        free(d->pick);
        free(d->pairs);
        free(d->pairs_tmp);
        free(d->prio);
        free(d->best);
        free(d->remw);
        free(d->left);
        free(d->runm);
        free(d->cand);
        free(d->hits);
        free(d->keep);
        free(d->keep2);
        free(d->sel);
        free(d->cand2);
        free(d->qk);
        free(d->mark);
        free(d->usable);
        free(d->usable_c);
        free(d->rho);
        free(d->gc);
        dr_pidx_free(&d->idx);
        free(d);
    }
}

static double gpus_of(const dr_job_t *j)
{
    double s = (double)j->req.gpus_per_node * (j->req.nodes ? j->req.nodes : 1);
    return s > 0 ? s : 1;
}

/* Estimated remaining run time of a job on a type where it runs at rate r,
 * seconds: its expected remaining work remw at that rate, no longer than
 * the `left` its walltime limit allows, and at least a minute. */
static double time_at_rate(double remw, double left, double r)
{
    if (r <= 0)
        return INFINITY;
    double s = remw / r;
    if (s > left)
        s = left;
    return s > 60 ? s : 60;
}

/* Stopping a running job costs the work since its last checkpoint.  One
 * that declares no checkpoints is never stopped for another job (it would
 * lose all it did: the starts planned in its place find no room and wait),
 * and moved to a faster type only while what it loses is under a tenth of
 * what it has left, or when it would not finish in its walltime where it
 * is. */
static bool may_stop(const dpol_t *d, const dr_sched_view_t *v, size_t m, bool migrate)
{
    const dr_job_t *j = d->act[m];
    if (j->ckpt_every > 0)
        return true;
    /* one that declares no checkpoints loses all its work: it is never
     * stopped, not even to move it to a faster type, unless the site allows
     * it (PreemptWithoutCheckpoint=YES; docs/scheduling.md's promise) */
    if (!migrate || !v->cluster->preempt_nockpt)
        return false;
    /* where it runs it would not finish within its walltime: nothing to keep */
    if (j->work_rate > 0 && d->remw[m] / j->work_rate > d->left[m])
        return true;
    double lost = dr_job_work_done(j, v->now) - dr_job_ckpt_progress(j, v->now);
    return lost <= 0.1 * d->remw[m];
}

/* What does not change for a job: the types it can run on and its rate on
 * the fastest of them. */
static void job_static(const dr_sched_view_t *v, const dr_job_t *j, dr_typemask_t *runm,
                       double *rate)
{
    *runm = dr_perf_runnable(v->perf, v->cluster, j);
    *rate = dr_perf_best_rate(v->perf, j, *runm);
}

/* What the policy estimates about j now, given job_static's answers:
 * remaining work, walltime left and remaining time on its best type. */
static void estimate(const dpol_t *d, const dr_sched_view_t *v, const dr_job_t *j,
                     dr_typemask_t run, double rate, double *remw, double *left, double *best)
{
    *remw = dr_size_est_remaining_work(&d->est, v, j, rate);
    *left = dr_size_est_limit_left_s(v, j);
    /* the least time_at_rate over the runnable types is the one at the best
     * rate (it only grows with remw / rate) */
    double b = INFINITY;
    if (run && rate > 0) {
        b = *remw / rate;
        if (b > *left)
            b = *left;
        if (b < 60)
            b = 60;
    }
    *best = b;
}

/* How much each type is worth to job m (eff[t], by which its priority is
 * scaled in the plan).  By speed: best / time there (to the power beta).
 * Routed by cost: the types it accepts - those that finish it by its
 * deadline, or without one those within `slowdown` of its best time - are
 * worth the least cost of its remaining work among them over its cost
 * there (1 for the cheapest), and the types it does not accept their speed
 * value times the least of those, so that any accepted type outbids them.
 * A job with no accepted type, or one a type of unknown price could run,
 * is routed by speed alone; one that lists its types in an order of
 * preference (dr_job_req_t.pref) by that order. */
static void type_values(const dpol_t *d, const dr_sched_view_t *v, size_t m, dr_typemask_t run,
                        double best, double *eff, double *rt)
{
    const dr_cluster_t *c = v->cluster;
    const dr_job_t *j = d->act[m];
    /* time there without time_at_rate's one-minute floor, which would make a
     * short job's types look alike and send it to the cheapest however slow */
    double rate[NT], raw[NT], usd[NT], rbest = INFINITY, cmin = INFINITY;
    dr_typemask_t acc = 0;
    bool priced = true;
    for (size_t t = 0; t < c->ntypes; t++) {
        if (!(run >> t & 1))
            continue;
        double r = rate[t] = dr_perf_rate(v->perf, j, (unsigned)t);
        rt[t] = time_at_rate(d->remw[m], d->left[m], r);
        eff[t] = d->beta == 1 ? best / rt[t] : pow(best / rt[t], d->beta);
        raw[t] = r > 0 ? d->remw[m] / r : INFINITY;
        if (raw[t] > d->left[m])
            raw[t] = d->left[m];
        if (raw[t] < rbest)
            rbest = raw[t];
        double p = c->types[t].price_hr;
        priced &= isfinite(p) && p > 0;
        usd[t] = p * raw[t];
    }
    if (!j->req.pref[0] && (!d->cost || !priced || !isfinite(rbest)))
        return;
    /* a deadline is kept on what the job declared it still has to do when
     * that is more than the estimate: the estimate leans on what other
     * jobs took (a burst of one-second tasks makes every job look short) */
    double decl_left = j->work_declared > 0 ? j->work_declared - dr_job_work_done(j, v->now) : 0;
    for (size_t t = 0; t < c->ntypes; t++) {
        if (!(run >> t & 1) || !isfinite(raw[t]))
            continue;
        double need = raw[t];
        if (decl_left > 0 && rate[t] > 0 && decl_left / rate[t] > need)
            need = decl_left / rate[t];
        bool ok = j->deadline > 0 ? dr_time_add(v->now, dr_time_from_s(need)) <= j->deadline
                                  : raw[t] <= d->slowdown * rbest * (1 + 1e-9);
        if (ok) {
            acc |= (dr_typemask_t)1 << t;
            if (usd[t] < cmin)
                cmin = usd[t];
        }
    }
    if (j->req.pref[0]) {
        /* the user's order of preference decides among the types that
         * finish it in time (each rank down worth half as much), then
         * among the others */
        bool dl = j->deadline > 0 && acc; /* without a deadline, every type is in time */
        for (size_t t = 0; t < c->ntypes; t++)
            if (run >> t & 1)
                eff[t] = ldexp(!dl || (acc >> t & 1) ? 1.0 : 1.0 / 1024,
                               -(int)dr_req_pref_rank(&j->req, (unsigned)t));
        return;
    }
    if (!acc || !(cmin > 0))
        return;
    double floor = INFINITY;
    for (size_t t = 0; t < c->ntypes; t++)
        if (acc >> t & 1) {
            eff[t] = cmin / usd[t];
            if (eff[t] < floor)
                floor = eff[t];
        }
    for (size_t t = 0; t < c->ntypes; t++)
        if ((run >> t & 1) && !(acc >> t & 1))
            eff[t] *= floor;
}

/* Shortest remaining GPU-time first, aged two ways: the time already
 * waited counts against the remaining time (alpha), so a job that has
 * waited long ranks like a short one; and once its slowdown passes
 * `age`, its priority grows with the 4th power of the excess, so even a
 * wide gang eventually outbids a stream of small jobs.  (pending_index.h
 * bounds this expression over sets of jobs: keep the two in step.) */
static double priority_of(const dpol_t *d, dr_time_t now, dr_time_t submit, double gpus,
                          double best)
{
    double wait = dr_time_to_s(now - submit);
    double eff = best - d->alpha * wait;
    double prio = 1.0 / ((eff > 60 ? eff : 60) * gpus);
    if (d->age > 0) {
        /* the slowdown it would end with if it ran now, on what is left of
         * it.  Measured on its whole size instead, a job that has run
         * looked less delayed than one that has not, so under a long queue
         * (every job's wait equal: a burst) aging handed the GPUs
         * round-robin to whoever had run least */
        double slowdown = (wait + best) / (best > 1 ? best : 1);
        if (slowdown > d->age) {
            double x = slowdown / d->age;
            prio *= x * x * x * x;
        }
    }
    return prio;
}

/* A job's priority, times its account's fair-share weight (sched.h) to
 * the power `fairshare`: between accounts whose factors differ, the one
 * that used more of its share ranks lower by that ratio.  With every factor
 * equal the weight is 1.0 exactly and nothing is multiplied, so one
 * account decides bit for bit as no accounts do. */
static double job_priority(const dpol_t *d, const dr_sched_view_t *v, const dr_job_t *j,
                           double best)
{
    double p = priority_of(d, v->now, j->submit, gpus_of(j), best);
    double w = d->fairshare > 0 ? dr_sched_fairshare_weight(v->sched, j) : 1.0;
    if (w != 1.0)
        p *= d->fairshare == 1.0 ? w : pow(w, d->fairshare);
    return p;
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

/* --- the pending index (pending_index.h) --- */

typedef struct vctx {
    const dpol_t *d;
    const dr_sched_view_t *v;
    double total_gpus;
} vctx_t;

/* A pending job's priority now from its cached estimate (0: it cannot be
 * placed on this cluster). */
static double rec_value(void *ud, const dr_pidx_rec_t *r)
{
    const vctx_t *c = ud;
    if (!(r->best < INFINITY) || r->g > c->total_gpus)
        return 0;
    return priority_of(c->d, c->v->now, r->submit, r->g, r->best);
}

static void rec_estimate(void *ud, dr_pidx_rec_t *r)
{
    const vctx_t *c = ud;
    estimate(c->d, c->v, r->j, r->runm, r->rate, &r->remw, &r->left, &r->best);
}

static double moved(double a, double b, bool scale)
{
    if (scale && a > 0 && b > 0)
        return fabs(log(a / b));
    return fabs(a - b);
}

/* How far the estimator moved between two snapshots, in ln-size units. */
static double est_drift(const est_snap_t *a, const est_snap_t *b)
{
    double x[4] = {moved(a->decl_mu, b->decl_mu, false), moved(a->free_mu, b->free_mu, false),
                   moved(a->decl_sigma, b->decl_sigma, true),
                   moved(a->free_sigma, b->free_sigma, true)};
    double m = 0;
    for (size_t i = 0; i < 4; i++)
        if (x[i] > m)
            m = x[i];
    return m;
}

/* Put pending job j in the index (if `again`, it may be there already: a
 * requeued job) and estimate it afresh. */
static int index_put(dr_pidx_t *x, const dr_sched_view_t *v, vctx_t *cx, dr_job_t *j, bool again)
{
    uint32_t r = again ? dr_pidx_find(x, j) : DR_PIDX_NONE;
    if (r == DR_PIDX_NONE) {
        if (dr_pidx_add(x, j, &r) != DR_OK)
            return DR_ENOMEM;
        job_static(v, j, &x->rec[r].runm, &x->rec[r].rate);
    }
    rec_estimate(cx, &x->rec[r]);
    dr_pidx_update(x, r);
    return DR_OK;
}

/* Bring the index up to date with what happened since the last pass: jobs
 * that ended leave it (those the policy started left it then), fresh ones
 * enter it, and if the estimator has moved by more than `rekey` every
 * cached estimate is recomputed.  That costs O(queue), so it also waits
 * until the passes since the last re-key have scored as many jobs as the
 * queue holds: re-keying at most doubles what the passes cost. */
static int index_sync(dpol_t *d, const dr_sched_view_t *v, vctx_t *cx, size_t *scored)
{
    dr_pidx_t *x = &d->idx;
    for (size_t i = 0; i < v->nended + v->nwithdrawn; i++) {
        /* ended, or withdrawn by the driver (held: still PENDING, but gone) */
        dr_job_t *gone = i < v->nended ? v->ended[i] : v->withdrawn[i - v->nended];
        uint32_t r = dr_pidx_find(x, gone);
        if (r != DR_PIDX_NONE)
            dr_pidx_remove(x, r);
    }
    est_snap_t now = snap_of(&d->est);
    double drift = est_drift(&now, &d->snap);
    if (drift > 0 && (d->rekey == 0 || (drift > d->rekey && d->since_rekey >= x->nrec))) {
        dr_pidx_rekey(x, rec_estimate, cx);
        *scored += x->nrec;
        d->snap = now;
        d->since_rekey = 0;
    }
    for (size_t i = 0; i < v->nfresh; i++) {
        if (v->fresh[i]->state != DR_JOB_PENDING)
            continue;
        if (index_put(x, v, cx, v->fresh[i], true) != DR_OK)
            return DR_ENOMEM;
        ++*scored;
    }
    if (x->nrec == v->npending)
        return DR_OK;
    /* The index lost track (it should not): rebuild it from the queue. */
    for (size_t r = 0; r < x->nslots; r++)
        if (x->rec[r].j && x->rec[r].j->state != DR_JOB_PENDING)
            dr_pidx_remove(x, (uint32_t)r);
    for (size_t i = 0; i < v->npending; i++)
        if (dr_pidx_find(x, v->pending[i]) == DR_PIDX_NONE) {
            if (index_put(x, v, cx, v->pending[i], false) != DR_OK)
                return DR_ENOMEM;
            ++*scored;
        }
    return DR_OK;
}

/* --- candidates: the pending jobs a pass plans for --- */

/* A candidate's place in the queue (and priority), copied out of the job
 * so that sorting does not chase pointers. */
typedef struct qkey {
    double v;
    dr_time_t submit;
    uint64_t id;
    int32_t prio;
    uint32_t i;
} qkey_t;

static qkey_t qkey_of(const dr_job_t *j, double v, size_t i)
{
    return (qkey_t){v, j->submit, j->id, j->priority, (uint32_t)i};
}

/* Queue order: priority desc, submit asc, id asc (dr_pidx_queue_before). */
static int qkey_cmp_queue(const void *pa, const void *pb)
{
    const qkey_t *a = pa, *b = pb;
    if (a->prio != b->prio)
        return a->prio > b->prio ? -1 : 1;
    if (a->submit != b->submit)
        return a->submit < b->submit ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int qkey_cmp_prio(const void *pa, const void *pb)
{
    const qkey_t *a = pa, *b = pb;
    if (a->v != b->v)
        return a->v > b->v ? -1 : 1;
    return qkey_cmp_queue(pa, pb);
}

/* How many pending jobs a pass plans for: the best 2 x GPUs + 16, and of
 * jobs of g GPUs at most 2 x GPUs / g + 16 (as many as would fill the
 * cluster twice, and a few): more of them could not all get GPUs, while
 * smaller jobs further down may fill what they leave. */
static size_t cand_total(double total_gpus)
{
    return (size_t)(2 * total_gpus) + 16;
}

static size_t cand_cap(double total_gpus, double g)
{
    size_t cap = (size_t)(2 * total_gpus / (g > 1 ? g : 1)) + 16;
    size_t all = cand_total(total_gpus);
    return cap < all ? cap : all;
}

/* Per gang size, a count (a few sizes: a linear list). */
typedef struct gcount {
    double g;
    size_t n;
} gcount_t;

static size_t *gcount_of(gcount_t *gc, size_t *ngc, double g)
{
    for (size_t i = 0; i < *ngc; i++)
        if (gc[i].g == g)
            return &gc[i].n;
    gc[*ngc] = (gcount_t){g, 0};
    return &gc[(*ngc)++].n;
}

/* Keep the candidates of highest priority (ties: queue order) within
 * cand_total and cand_cap; then restore queue order (the order pairs are
 * built in). */
static int cand_limit(dpol_t *d, double total_gpus)
{
    if (dr_grow((void **)&d->gc, &d->gc_cap, d->ncand + 1, sizeof *d->gc) != 0 ||
        dr_grow((void **)&d->qk, &d->qk_cap, d->ncand + 1, sizeof *d->qk) != 0 ||
        dr_grow((void **)&d->mark, &d->mark_cap, d->ncand + 1, sizeof *d->mark) != 0)
        return DR_ENOMEM;
    size_t ngc = 0;
    bool over = d->ncand > cand_total(total_gpus);
    for (size_t i = 0; i < d->ncand; i++) {
        double g = gpus_of(d->cand[i].j);
        over = over || ++*gcount_of(d->gc, &ngc, g) > cand_cap(total_gpus, g);
    }
    if (!over)
        return DR_OK;
    for (size_t i = 0; i < d->ncand; i++) {
        d->qk[i] = qkey_of(d->cand[i].j, d->cand[i].prio, i);
        d->mark[i] = 0;
    }
    qsort(d->qk, d->ncand, sizeof *d->qk, qkey_cmp_prio);
    ngc = 0;
    size_t k = 0, all = cand_total(total_gpus);
    for (size_t i = 0; i < d->ncand && k < all; i++) {
        uint32_t c = d->qk[i].i;
        double g = gpus_of(d->cand[c].j);
        size_t *n = gcount_of(d->gc, &ngc, g);
        if (*n < cand_cap(total_gpus, g)) {
            ++*n;
            d->mark[c] = 1;
            k++;
        }
    }
    k = 0; /* the chosen, still in queue order */
    for (size_t i = 0; i < d->ncand; i++)
        if (d->mark[i])
            d->cand[k++] = d->cand[i];
    d->ncand = k;
    return DR_OK;
}

/* Put the candidates in queue order. */
static int cand_sort_queue(dpol_t *d)
{
    if (dr_grow((void **)&d->qk, &d->qk_cap, d->ncand + 1, sizeof *d->qk) != 0 ||
        dr_grow((void **)&d->cand2, &d->cand2_cap, d->ncand + 1, sizeof *d->cand2) != 0)
        return DR_ENOMEM;
    for (size_t i = 0; i < d->ncand; i++)
        d->qk[i] = qkey_of(d->cand[i].j, 0, i);
    qsort(d->qk, d->ncand, sizeof *d->qk, qkey_cmp_queue);
    for (size_t i = 0; i < d->ncand; i++)
        d->cand2[i] = d->cand[d->qk[i].i];
    cand_t *t = d->cand;
    d->cand = d->cand2, d->cand2 = t;
    size_t c = d->cand_cap;
    d->cand_cap = d->cand2_cap, d->cand2_cap = c;
    return DR_OK;
}

/* Add j as a candidate, scored afresh (fresh, or without an index
 * record) or from the estimate its record got this pass. */
static int cand_add(dpol_t *d, const vctx_t *cx, dr_job_t *j, uint32_t rec, bool fresh)
{
    cand_t c = {.j = j, .rec = rec};
    const dr_pidx_rec_t *r = rec != DR_PIDX_NONE ? &d->idx.rec[rec] : NULL;
    if (r && !fresh) {
        c.runm = r->runm, c.remw = r->remw, c.left = r->left, c.best = r->best;
    } else {
        double rate;
        if (r)
            c.runm = r->runm, rate = r->rate;
        else
            job_static(cx->v, j, &c.runm, &rate);
        estimate(d, cx->v, j, c.runm, rate, &c.remw, &c.left, &c.best);
    }
    if (!(c.best < INFINITY) || gpus_of(j) > cx->total_gpus)
        return DR_OK; /* no candidate: it cannot be placed */
    c.prio = job_priority(d, cx->v, j, c.best);
    return DR_PUSH(d->cand, d->ncand, d->cand_cap, c) == 0 ? DR_OK : DR_ENOMEM;
}

/* Every job in list (not throttled), each scored afresh or from the index
 * record it got this pass. */
static int cand_list(dpol_t *d, const vctx_t *cx, dr_job_t *const *list, size_t n, bool cached,
                     bool *any, size_t *scored)
{
    const dr_sched_view_t *v = cx->v;
    for (size_t i = 0; i < n; i++) {
        dr_job_t *j = list[i];
        if (j->array_throttle && dr_sched_throttled(v->sched, j))
            continue;
        *any = true;
        uint32_t rec = d->use_index ? dr_pidx_find(&d->idx, j) : DR_PIDX_NONE;
        bool fresh = !cached || rec == DR_PIDX_NONE;
        *scored += fresh;
        if (cand_add(d, cx, j, rec, fresh) != DR_OK)
            return DR_ENOMEM;
    }
    return DR_OK;
}

/* A long queue: the candidates come out of the index, by their cached
 * estimates, one gang size at a time (then merged within cand_total).
 * Last pass's best records of that size (`keep`: cand_cap of them and a
 * cluster's worth more) that still wait give a threshold, the priority of
 * the cand_cap-th of them.  Priorities of waiting jobs only grow, so the
 * best jobs now are all at or above it, and one descent collects every job
 * there is above it: about as many as last time, at O(log n) each.  When
 * fewer than keep are left (starts took some) the descent starts a little
 * lower, by a factor that adapts so that it finds about keep.  When fewer
 * than cand_cap are left (the first pass, a wave of starts) or far too
 * many jobs have risen above the threshold, a branch-and-bound search
 * takes the best jobs in order instead.  Either way the result is the best
 * by cached estimate, exactly; the candidates are then scored afresh. */
static int class_search(dpol_t *d, vctx_t *cx, const dr_pidx_query_t *q, double g, double *rho,
                        size_t *scored)
{
    dr_pidx_t *x = &d->idx;
    size_t cap = cand_cap(cx->total_gpus, g);
    size_t keep = cap + (size_t)(cx->total_gpus / g);
    d->nhits = 0;
    for (size_t k = 0; k < d->nkeep; k++) {
        const kept_t *kp = &d->keep[k];
        const dr_pidx_rec_t *r = &x->rec[kp->rec];
        if (!r->j || r->gen != kp->gen || r->g != g || !q->usable[r->tree])
            continue;
        double val = kp->v;
        if (r->ver != kp->ver) { /* re-keyed since: value it again */
            val = rec_value(cx, r);
            ++*scored;
        }
        if (val > 0 && DR_PUSH(d->hits, d->nhits, d->hits_cap,
                               ((dr_pidx_hit_t){val, r->g, r->j, kp->rec})) != 0)
            return DR_ENOMEM;
    }
    int rc = DR_ELIMIT;
    size_t nvalued = 0, have = d->nhits, nclass = 0;
    for (size_t ti = 0; ti < x->ntree; ti++)
        nclass += q->usable[ti] ? x->tree[ti].nrec : 0;
    if (nclass <= keep) { /* few of this size: take them all */
        d->nhits = 0;
        rc = dr_pidx_collect(x, q, DBL_MIN, INFINITY, &d->hits, &d->nhits, &d->hits_cap, &nvalued);
    } else if (have >= cap) {
        size_t k = dr_pidx_hit_select(d->hits, d->nhits, (double)(have < keep ? have : keep) * g);
        double tau = INFINITY;
        for (size_t i = 0; i < k; i++)
            tau = d->hits[i].v < tau ? d->hits[i].v : tau;
        bool full = have >= keep;
        tau *= full ? 1 : *rho;
        d->nhits = 0;
        rc = dr_pidx_collect(x, q, tau, 4.0 * (double)keep * g, &d->hits, &d->nhits, &d->hits_cap,
                             &nvalued);
        double r = *rho;
        if (!full && rc == DR_OK && d->nhits < keep && r > 1e-12)
            *rho = r * r;
        else if (!full && (rc == DR_ELIMIT || d->nhits > 2 * keep))
            *rho = sqrt(*rho);
    }
    if (rc == DR_ELIMIT) {
        d->nhits = 0;
        rc = dr_pidx_top(x, q, (double)keep * g, &d->hits, &d->nhits, &d->hits_cap, &nvalued);
    }
    *scored += nvalued;
    if (rc != DR_OK)
        return rc;
    /* the best `keep` for the next pass, the best `cap` for this one */
    size_t nk = dr_pidx_hit_select(d->hits, d->nhits, (double)keep * g);
    if (dr_grow((void **)&d->keep2, &d->keep2_cap, d->nkeep2 + nk + 1, sizeof *d->keep2) != 0)
        return DR_ENOMEM;
    for (size_t i = 0; i < nk; i++) {
        const dr_pidx_rec_t *r = &x->rec[d->hits[i].rec];
        d->keep2[d->nkeep2++] = (kept_t){d->hits[i].rec, r->gen, r->ver, d->hits[i].v};
    }
    size_t nc = dr_pidx_hit_select(d->hits, nk, (double)cap * g);
    for (size_t i = 0; i < nc; i++)
        if (DR_PUSH(d->sel, d->nsel, d->sel_cap, d->hits[i]) != 0)
            return DR_ENOMEM;
    return DR_OK;
}

static int cand_index(dpol_t *d, vctx_t *cx, bool *any, size_t *scored)
{
    const dr_sched_view_t *v = cx->v;
    dr_pidx_t *x = &d->idx;
    if (dr_grow((void **)&d->usable, &d->usable_cap, x->ntree + 1, sizeof *d->usable) != 0 ||
        dr_grow((void **)&d->usable_c, &d->usable_c_cap, x->ntree + 1, sizeof *d->usable_c) != 0)
        return DR_ENOMEM;
    for (size_t ti = 0; ti < x->ntree; ti++) {
        const dr_pidx_tree_t *t = &x->tree[ti];
        bool u = t->inuse && t->nrec;
        if (u && t->parent) {
            uint32_t r = dr_pidx_any(x, ti);
            u = r == DR_PIDX_NONE || !dr_sched_throttled(v->sched, x->rec[r].j);
        }
        *any = *any || u;
        d->usable[ti] = u && t->g <= cx->total_gpus;
    }
    dr_pidx_query_t q = {
        .t = dr_time_to_s(v->now - x->origin), .usable = d->usable_c, .value = rec_value, .ud = cx};
    d->nsel = 0;
    d->nkeep2 = 0;
    size_t nsizes = 0; /* the gang sizes there are (d->gc: a few) */
    if (dr_grow((void **)&d->gc, &d->gc_cap, x->ntree + 1, sizeof *d->gc) != 0)
        return DR_ENOMEM;
    for (size_t ti = 0; ti < x->ntree; ti++)
        if (d->usable[ti])
            (void)gcount_of(d->gc, &nsizes, x->tree[ti].g);
    for (size_t k = 0; k < nsizes; k++) {
        double g = d->gc[k].g;
        for (size_t tj = 0; tj < x->ntree; tj++)
            d->usable_c[tj] = d->usable[tj] && x->tree[tj].g == g;
        double *rho = NULL;
        for (size_t i = 0; i < d->nrho && !rho; i++)
            if (d->rho[i].g == g)
                rho = &d->rho[i].v;
        if (!rho) {
            if (DR_PUSH(d->rho, d->nrho, d->rho_cap, ((rho_t){g, 0.5})) != 0)
                return DR_ENOMEM;
            rho = &d->rho[d->nrho - 1].v;
        }
        int rc = class_search(d, cx, &q, g, rho, scored);
        if (rc != DR_OK)
            return rc;
    }
    /* the next pass's survivors */
    kept_t *t = d->keep;
    d->keep = d->keep2, d->keep2 = t;
    size_t c = d->keep_cap;
    d->keep_cap = d->keep2_cap, d->keep2_cap = c;
    d->nkeep = d->nkeep2;
    /* the best cand_total of the sizes' best, scored afresh */
    for (size_t i = 0; i < d->nsel; i++)
        d->sel[i].g = 1; /* select by count */
    size_t n = dr_pidx_hit_select(d->sel, d->nsel, (double)cand_total(cx->total_gpus));
    for (size_t i = 0; i < n; i++) {
        if (cand_add(d, cx, d->sel[i].j, d->sel[i].rec, true) != DR_OK)
            return DR_ENOMEM;
        ++*scored;
    }
    return cand_sort_queue(d);
}

static void count_scored(dpol_t *d, const dr_sched_view_t *v, size_t scored)
{
    d->since_rekey += scored;
    dr_sched_count_considered(v->sched, scored);
}

/* CPU-only jobs: drop those no longer pending (started, ended), take in the
 * fresh ones, and start what fits, in queue order (the queue's own order:
 * priority, then submit time). */
static int cpu_starts(dpol_t *d, const dr_sched_view_t *v)
{
    size_t w = 0;
    for (size_t i = 0; i < d->ncpu; i++) {
        bool gone = d->cpuq[i]->state != DR_JOB_PENDING;
        for (size_t k = 0; k < v->nended && !gone; k++)
            gone = v->ended[k] == d->cpuq[i];
        for (size_t k = 0; k < v->nwithdrawn && !gone; k++)
            gone = v->withdrawn[k] == d->cpuq[i];
        if (!gone)
            d->cpuq[w++] = d->cpuq[i];
    }
    d->ncpu = w;
    for (size_t i = 0; i < v->nfresh; i++) {
        dr_job_t *j = v->fresh[i];
        if (j->state != DR_JOB_PENDING || j->req.gpus_per_node != 0)
            continue;
        bool have = false;
        for (size_t k = 0; k < d->ncpu && !have; k++)
            have = d->cpuq[k] == j;
        if (!have && DR_PUSH(d->cpuq, d->ncpu, d->cpu_cap, j) != 0)
            return DR_ENOMEM;
    }
    for (size_t i = 0; i < d->ncpu; i++) {
        dr_job_t *j = d->cpuq[i];
        if (j->state != DR_JOB_PENDING || (j->array_throttle && dr_sched_throttled(v->sched, j)))
            continue;
        int rc = dr_policy_try_start(v, j);
        if (rc != DR_OK && rc != DR_ENOSPC)
            return rc;
        if (rc == DR_OK && d->use_index) {
            uint32_t r = dr_pidx_find(&d->idx, j);
            if (r != DR_PIDX_NONE)
                dr_pidx_remove(&d->idx, r);
        }
    }
    return DR_OK;
}

static int dpol_plan(void *state, const dr_sched_view_t *v, dr_time_t *wake_at, dr_err_t *err)
{
    dpol_t *d = state;
    const dr_cluster_t *c = v->cluster;
    *wake_at = DR_TIME_NEVER;
    double total_gpus = 0;
    for (size_t t = 0; t < c->ntypes; t++)
        total_gpus += (double)dr_cluster_total_gpus(c, (int)t);
    vctx_t cx = {d, v, total_gpus};
    size_t scored = 0;
    dr_size_est_learn(&d->est, v);
    /* If nothing was freed since the last pass and jobs only arrived, jobs
     * that were not picked then still are not (capacity only shrank and
     * their priority relative to each other is unchanged): only the new
     * arrivals can outbid running jobs.  Timed wake-ups (aging) and
     * releases re-plan everything. */
    bool incremental = d->planned && v->nfresh > 0 && c->freed_gen == d->last_gen &&
                       dr_sched_fairshare_gen(v->sched) == d->last_fsgen;
    /* The index bounds priorities that only grow as jobs wait; fair-share
     * weights move both ways, so while they differ between accounts a long
     * queue is scored whole, from the index's cached estimates. */
    bool fair = d->fairshare > 0 && dr_sched_fairshare_active(v->sched);
    d->planned = true;
    int rc = d->use_index ? index_sync(d, v, &cx, &scored) : DR_OK;
    /* The pending jobs planned for (candidates): only the best few can get
     * GPUs now (cand_total, cand_cap).  After mere arrivals, the fresh
     * jobs; when the whole queue is that few, all of it, scored afresh; else
     * the best of the index (cand_index). */
    bool any = false; /* a pending job that is not throttled */
    d->ncand = 0;
    if (rc == DR_OK && incremental) {
        rc = cand_list(d, &cx, v->fresh, v->nfresh, d->use_index, &any, &scored);
        if (rc == DR_OK)
            rc = cand_limit(d, total_gpus);
    } else if (rc == DR_OK && (!d->use_index || d->idx.nrec <= cand_total(total_gpus))) {
        rc = cand_list(d, &cx, v->pending, v->npending, false, &any, &scored);
        if (rc == DR_OK)
            rc = cand_limit(d, total_gpus);
    } else if (rc == DR_OK && fair) {
        rc = cand_list(d, &cx, v->pending, v->npending, true, &any, &scored);
        if (rc == DR_OK)
            rc = cand_limit(d, total_gpus);
    } else if (rc == DR_OK) {
        rc = cand_index(d, &cx, &any, &scored);
    }
    if (rc != DR_OK) {
        count_scored(d, v, scored);
        return dr_err_set(err, rc, "drover: out of memory");
    }
    size_t nrun = v->nrunning, na = nrun + d->ncand;
    /* Nothing waits: the only decision left is to move a running job to a
     * faster type that has room now (a long job that got a K80 in a burst
     * would otherwise crawl there long after the V100s went idle). */
    if (!any && (!d->preempt || !can_upgrade(v, v->running, nrun))) {
        count_scored(d, v, scored);
        return DR_OK;
    }
    if (dr_grow((void **)&d->act, &d->act_cap, na + 1, sizeof *d->act) != 0 ||
        dr_grow((void **)&d->pick, &d->pick_cap, na + 1, sizeof *d->pick) != 0 ||
        dr_grow((void **)&d->pairs, &d->pairs_cap, (na + 1) * (c->ntypes ? c->ntypes : 1),
                sizeof *d->pairs) != 0 ||
        dr_grow((void **)&d->prio, &d->prio_cap, na + 1, sizeof *d->prio) != 0 ||
        dr_grow((void **)&d->best, &d->best_cap, na + 1, sizeof *d->best) != 0 ||
        dr_grow((void **)&d->remw, &d->remw_cap, na + 1, sizeof *d->remw) != 0 ||
        dr_grow((void **)&d->left, &d->left_cap, na + 1, sizeof *d->left) != 0 ||
        dr_grow((void **)&d->runm, &d->runm_cap, na + 1, sizeof *d->runm) != 0) {
        count_scored(d, v, scored);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    /* running jobs first, re-estimated (their progress moved), then the
     * candidates in queue order */
    for (size_t m = 0; m < nrun; m++) {
        dr_job_t *j = d->act[m] = v->running[m];
        double rate;
        job_static(v, j, &d->runm[m], &rate);
        estimate(d, v, j, d->runm[m], rate, &d->remw[m], &d->left[m], &d->best[m]);
        d->prio[m] = d->best[m] < INFINITY && gpus_of(j) <= total_gpus
                         ? job_priority(d, v, j, d->best[m])
                         : 0;
        d->pick[m] = -1;
    }
    scored += nrun;
    for (size_t k = 0; k < d->ncand; k++) {
        const cand_t *cd = &d->cand[k];
        size_t m = nrun + k;
        d->act[m] = cd->j;
        d->runm[m] = cd->runm;
        d->remw[m] = cd->remw;
        d->left[m] = cd->left;
        d->best[m] = cd->best;
        d->prio[m] = cd->prio;
        d->pick[m] = -1;
    }
    size_t np = 0;
    for (size_t m = 0; m < na; m++) {
        dr_job_t *j = d->act[m];
        double best = d->best[m];
        if (d->prio[m] <= 0)
            continue;
        dr_typemask_t run = d->runm[m];
        bool running = m < nrun;
        if (!running)
            run &= dr_sched_account_types(v->sched, j); /* its account's limits */
        double eff[NT], rts[NT];
        type_values(d, v, m, run, best, eff, rts);
        for (size_t t = 0; t < c->ntypes; t++) {
            if (!(run >> t & 1))
                continue;
            if (running && !d->preempt && t != j->alloc.type)
                continue;
            double rt = rts[t];
            /* a type is worth the job's priority scaled by how efficiently
             * the job runs there: by speed, or by cost (type_values) */
            double w = d->prio[m] * eff[t];
            if (running && j->alloc.type == t) {
                w *= 1 + d->margin; /* incumbents keep their GPUs unless clearly outbid */
                /* and the more so the more work a stop would lose: stopped
                 * now, it redoes what it ran since its last checkpoint, as
                 * if it ran (rt + lost) / rt times slower - so victims are
                 * the jobs that lose least (from its start and declared
                 * checkpoint interval alone, as the cost policy weighs).
                 * Only jobs that checkpoint (the others are never stopped
                 * for another job; may_stop) and can still finish here. */
                double lost = j->ckpt_every > 0 ? dr_job_lost_s(j, v->now) : 0;
                bool fits = !(j->work_rate > 0 && d->remw[m] / j->work_rate > d->left[m]);
                if (lost > 0 && fits && rt > 0 && isfinite(rt))
                    w *= d->beta == 1 ? (rt + lost) / rt : pow((rt + lost) / rt, d->beta);
            }
            d->pairs[np++] = (pair_t){w, (uint32_t)m, (uint16_t)t};
        }
    }
    if (sort_pairs(d, np) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    double left[NT] = {0};
    for (size_t t = 0; t < c->ntypes; t++)
        left[t] = (double)dr_cluster_total_gpus(c, (int)t);
    /* a running job that may be neither stopped nor moved keeps its GPUs
     * whatever outbids it: planning another job onto them would only make
     * that one wait (its start finds no room) while other types had room */
    for (size_t m = 0; m < nrun; m++)
        if (d->prio[m] > 0 && !may_stop(d, v, m, false) && !may_stop(d, v, m, true)) {
            d->pick[m] = (int)d->act[m]->alloc.type;
            left[d->act[m]->alloc.type] -= gpus_of(d->act[m]);
        }
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
    for (size_t m = 0; m < nrun && rc == DR_OK; m++)
        if (d->pick[m] != (int)d->act[m]->alloc.type && may_stop(d, v, m, d->pick[m] >= 0))
            rc = dr_sched_decide_preempt(v->sched, d->act[m], "outbid by a shorter job");
    for (size_t m = 0; m < na && rc == DR_OK; m++) {
        dr_job_t *j = d->act[m];
        if (d->pick[m] < 0 || j->state != DR_JOB_PENDING)
            continue;
        /* throttles were checked before the plan, which may hold several
         * tasks of one array: the ones its starts have used up wait */
        if (j->array_throttle && dr_sched_throttled(v->sched, j))
            continue;
        dr_alloc_t a;
        int prc = dr_place(v->cluster, &j->req, 1ULL << d->pick[m], v->place, &a);
        if (prc == DR_OK)
            rc = dr_sched_decide_start(v->sched, j, &a);
        else if (prc != DR_ENOSPC)
            rc = prc;
        if (prc == DR_OK && rc == DR_OK && d->use_index) {
            uint32_t r = m >= nrun ? d->cand[m - nrun].rec : DR_PIDX_NONE;
            if (r == DR_PIDX_NONE)
                r = dr_pidx_find(&d->idx, j);
            if (r != DR_PIDX_NONE)
                dr_pidx_remove(&d->idx, r); /* it no longer waits */
        }
    }
    count_scored(d, v, scored);
    d->last_gen = v->cluster->freed_gen;
    d->last_fsgen = dr_sched_fairshare_gen(v->sched);
    if (d->alpha > 0 && v->npending)
        *wake_at = dr_time_add(v->now, dr_time_from_s(d->wake_s));
    return rc == DR_OK
               ? DR_OK
               : dr_err_set(err, rc, "drover: applying decisions failed: %s", dr_strerror(rc));
}

/* The plan for GPU jobs, then the CPU-only jobs wherever they fit. */
static int dpol_pass(void *state, const dr_sched_view_t *v, dr_time_t *wake_at, dr_err_t *err)
{
    int rc = dpol_plan(state, v, wake_at, err);
    if (rc == DR_OK && (rc = cpu_starts(state, v)) != DR_OK)
        return dr_err_set(err, rc, "drover: starting CPU-only jobs failed: %s", dr_strerror(rc));
    return rc;
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
