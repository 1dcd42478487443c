/* policy_gavel.c - Gavel's scheduling policies and its round-based
 * mechanism (Narayanan et al., OSDI 2020), as references to measure drover
 * against on Gavel's own benchmark.
 *
 * Mechanism (scheduler.py): time advances in rounds (360 s).  At a round
 * boundary, jobs that arrived are admitted; when jobs came or went, the
 * policy's allocation X[job][type] (the fraction of time each job should
 * spend on each GPU type) is recomputed, at most every 1,920 s, and the
 * time-run-so-far counters are reset into per-job deficits.  Each job's
 * priority on a type is X / (the fraction of that type's time it received),
 * and jobs are taken greedily in priority order (then deficit, then X) onto
 * the types in a fixed order (v100, p100, k80) for heterogeneity-aware
 * policies, a shuffled order for agnostic ones.  A job keeps its GPUs when
 * it is picked for the same type again; otherwise it is preempted (free, as
 * in Gavel's simulator).  GPUs freed mid-round stay idle until the round
 * ends, unless nothing runs at all.  A job that arrived since the last
 * allocation has none and does not run until the next one, even on idle
 * GPUs (see select_jobs); docs/scheduling.md lists what still differs from
 * Gavel's simulator (the LP's optimum, round rounding, the first reset).
 *
 * Allocation policies (scheduler/policies/):
 *   gavel_fifo             jobs in arrival order keep a GPU type (agnostic).
 *                          Gavel's FIFOPolicy draws a random index but then
 *                          assigns a stale loop variable - the last type in
 *                          sorted order with room, i.e. v100 first - and
 *                          drops the randomly drawn type from the list when
 *                          the assigned one fills up; reproduced as it is,
 *                          since that is what its published numbers measured,
 *                          except that no job is bound to a type it cannot
 *                          run on (rate 0, or nodes that cannot hold it):
 *                          such a stale type gives way to the drawn one, and
 *                          such a freed type is not handed to the head of
 *                          the queue (see alloc_fifo)
 *   fifo_perf              jobs in arrival order get the fastest type with room
 *   max_min_fairness       LAS: every job an equal share of every type (agnostic)
 *   max_min_fairness_perf  Gavel's LAS: an LP maximising the minimum, over jobs,
 *                          of throughput normalised by the throughput of an
 *                          equal share (solved with GLPK)
 * Where Gavel's agnostic LP has many optima (any split of a job's share
 * across types is optimal when throughputs are ignored), the equal split
 * across types in proportion to their GPU counts is used.
 *
 * Options: round=SECONDS (360), reset=SECONDS (1920). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/pyrandom.h"
#include "drover/sched.h"
#include "drover/util.h"
#include "sched/lp.h"
#include "sched/policy_util.h"

enum gkind { G_FIFO, G_FIFO_PERF, G_MMF, G_MMF_PERF };
#define NT DR_MAX_GPU_TYPES

typedef struct gjob {
    dr_job_t *job; /* NULL once it ended: the driver may free an ended job after the pass */
    uint64_t id;
    dr_time_t ended_at; /* when it ended, DR_TIME_NEVER while it has not */
    double time_on[NT]; /* time run on each type since the last reset (+ round/2) */
    double deficit[NT];
    double alloc[NT];
    double prio[NT];
    int fifo_type; /* fifo: the type the job holds, -1 */
    int cur_type;  /* type it runs on this round, -1 */
    int next_type; /* type picked for the coming round, -1 */
    uint32_t mark;
    dr_typemask_t host; /* types with nodes able to hold the job at all */
    bool allocated;     /* in the allocation last computed (Gavel's self._allocation) */
} gjob_t;

typedef struct gavel {
    int kind;
    double round_s, reset_s;
    gjob_t *jobs; /* active jobs, sorted by id */
    size_t n, cap;
    double worker_time[NT];
    dr_time_t last_reset, next_round, round_start;
    bool need_alloc, ordered;
    uint32_t mark;
    int order[NT];
    size_t norder;
    dr_pyrand_t shuffler, fifo_rng;
    /* fifo: types freed by jobs that ended since the last allocation */
    struct freed {
        uint64_t id;
        int type;
    } * freed;
    size_t nfreed, freed_cap;
    /* fifo: the unallocated jobs in queue order (indices into jobs) */
    size_t *ord;
    size_t ord_cap;
    /* scratch */
    struct entry {
        gjob_t *gj;
        double prio, deficit, alloc;
    } * ent;
    size_t ent_cap;
} gavel_t;

static int gavel_opt(void *ud, const char *k, const char *val, dr_err_t *err)
{
    gavel_t *g = ud;
    double *dst = dr_streq_ci(k, "round")   ? &g->round_s
                  : dr_streq_ci(k, "reset") ? &g->reset_s
                                            : NULL;
    if (!dst)
        return dr_err_set(err, DR_EINVAL, "unknown option '%s' (known: round, reset)", k);
    dr_time_t d;
    if (dr_duration_parse(val, &d) != 0 || d <= 0)
        return dr_err_set(err, DR_EINVAL, "%s: '%s' is not a positive duration", k, val);
    *dst = dr_time_to_s(d);
    return DR_OK;
}

static int gavel_create(void **state, const char *opts, const dr_policy_env_t *env, int kind,
                        dr_err_t *err)
{
    gavel_t *g = calloc(1, sizeof *g);
    if (!g)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    g->kind = kind;
    g->round_s = 360;
    g->reset_s = 1920;
    g->last_reset = DR_TIME_NEVER;
    uint64_t seed = env ? env->seed : 0;
    dr_pyrand_seed(&g->shuffler, seed + 5); /* Scheduler._initialize_seeds */
    dr_pyrand_seed(&g->fifo_rng, seed);     /* FIFOPolicy(seed=seed) */
    int rc = dr_policy_opts_each(opts, gavel_opt, g, err);
    if (rc != DR_OK) {
        free(g);
        return rc;
    }
    *state = g;
    return DR_OK;
}

static void gavel_destroy(void *state)
{
    gavel_t *g = state;
    if (g) {
        free(g->freed);
        free(g->ord);
        free(g->jobs);
        free(g->ent);
        free(g);
    }
}

static gjob_t *find(gavel_t *g, uint64_t id)
{
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->jobs[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->n && g->jobs[lo].id == id ? &g->jobs[lo] : NULL;
}

/* The job's rate on type t; 0 where no node of t could hold it (Gavel's
 * clusters have one GPU per server, so it never had to ask). */
static double grate(const dr_sched_view_t *v, const gjob_t *gj, unsigned t)
{
    return (gj->host >> t & 1) ? dr_perf_rate(v->perf, gj->job, t) : 0;
}

static gjob_t *add(gavel_t *g, dr_job_t *j)
{
    if (dr_grow((void **)&g->jobs, &g->cap, g->n + 1, sizeof *g->jobs) != 0)
        return NULL;
    size_t pos = g->n;
    while (pos > 0 && g->jobs[pos - 1].id > j->id)
        pos--;
    memmove(g->jobs + pos + 1, g->jobs + pos, (g->n - pos) * sizeof *g->jobs);
    g->n++;
    gjob_t *gj = &g->jobs[pos];
    memset(gj, 0, sizeof *gj);
    gj->job = j;
    gj->id = j->id;
    gj->ended_at = DR_TIME_NEVER;
    gj->fifo_type = gj->cur_type = gj->next_type = -1;
    for (size_t t = 0; t < NT; t++) {
        gj->time_on[t] = g->round_s / 2; /* Gavel ignores a first half round */
        g->worker_time[t] += g->round_s / 2;
    }
    return gj;
}

static double scale_of(const dr_job_t *j)
{
    double s = (double)j->req.gpus_per_node * (j->req.nodes ? j->req.nodes : 1);
    return s > 0 ? s : 1;
}

/* Type order: Gavel's (v100, p100, k80) when the perf table names them,
 * else fastest catalog figure first. */
static void make_order(gavel_t *g, const dr_sched_view_t *v)
{
    const dr_cluster_t *c = v->cluster;
    static const char *const gavel_names[] = {"v100", "p100", "k80"};
    g->norder = 0;
    bool used[NT] = {false};
    const dr_perf_table_t *pt = v->perf ? v->perf->table : NULL;
    for (size_t k = 0; pt && k < 3; k++)
        for (size_t t = 0; t < c->ntypes; t++) {
            int col = v->perf->map[t];
            if (!used[t] && col >= 0 && dr_streq_ci(pt->type_names[col], gavel_names[k])) {
                g->order[g->norder++] = (int)t;
                used[t] = true;
            }
        }
    for (;;) {
        int best = -1;
        double bf = -1;
        for (size_t t = 0; t < c->ntypes; t++) {
            if (used[t])
                continue;
            double f = c->types[t].bf16_tflops;
            if (!(f > 0))
                f = c->types[t].fp16_tflops;
            if (!(f > 0))
                f = 0;
            if (best < 0 || f > bf)
                best = (int)t, bf = f;
        }
        if (best < 0)
            break;
        used[best] = true;
        g->order[g->norder++] = best;
    }
    g->ordered = true;
}

/* _reset_time_run_so_far: fold what each job got versus its allocation into
 * its deficit and restart the counters. */
static void reset_time(gavel_t *g, dr_time_t now)
{
    double elapsed = g->last_reset == DR_TIME_NEVER ? 0 : dr_time_to_s(now - g->last_reset);
    for (size_t t = 0; t < NT; t++)
        g->worker_time[t] = 0;
    for (size_t i = 0; i < g->n; i++) {
        gjob_t *gj = &g->jobs[i];
        for (size_t t = 0; t < NT; t++) {
            double received = gj->time_on[t] - g->round_s / 2;
            gj->deficit[t] += gj->alloc[t] * elapsed - received;
            gj->time_on[t] = g->round_s / 2;
            g->worker_time[t] += gj->time_on[t];
        }
    }
    g->last_reset = now;
}

/* FIFO's queue, fair share first: the jobs with no FIFO allocation in id
 * order, or - while fair-share factors differ between accounts - by the
 * weight of their account first (sched.h), ids breaking ties, and jobs
 * whose accounts have no room now last (a freed type goes to the head: the
 * head then is one that may take it, as in id order the account whose job
 * ended is).  Returns how many; -1 when out of memory. */
typedef struct wkey {
    bool barred;
    double w;
    size_t i;
} wkey_t;

static int wkey_cmp(const void *pa, const void *pb)
{
    const wkey_t *a = pa, *b = pb;
    if (a->barred != b->barred)
        return a->barred ? 1 : -1;
    if (a->w != b->w)
        return a->w > b->w ? -1 : 1;
    return a->i < b->i ? -1 : (a->i > b->i);
}

static ptrdiff_t fifo_queue(gavel_t *g, const dr_sched_view_t *v)
{
    if (dr_grow((void **)&g->ord, &g->ord_cap, g->n + 1, sizeof *g->ord) != 0)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++)
        if (g->jobs[i].fifo_type < 0)
            g->ord[n++] = i;
    if (n < 2 || !dr_sched_fairshare_active(v->sched))
        return (ptrdiff_t)n;
    wkey_t *k = malloc(n * sizeof *k);
    if (!k)
        return -1;
    for (size_t q = 0; q < n; q++) {
        const gjob_t *gj = &g->jobs[g->ord[q]];
        bool barred = gj->job && !(dr_sched_account_types(v->sched, gj->job) & gj->host);
        k[q] = (wkey_t){barred, gj->job ? dr_sched_fairshare_weight(v->sched, gj->job) : 1.0,
                        g->ord[q]};
    }
    qsort(k, n, sizeof *k, wkey_cmp);
    for (size_t q = 0; q < n; q++)
        g->ord[q] = k[q].i;
    free(k);
    return (ptrdiff_t)n;
}

static int alloc_fifo(gavel_t *g, const dr_sched_view_t *v)
{
    const dr_cluster_t *c = v->cluster;
    bool perf = g->kind == G_FIFO_PERF;
    double avail[NT] = {0};
    for (size_t t = 0; t < c->ntypes; t++)
        avail[t] = (double)dr_cluster_total_gpus(c, (int)t);
    if (perf)
        for (size_t i = 0; i < g->n; i++)
            g->jobs[i].fifo_type = -1; /* perf mode recomputes from scratch */
    for (size_t i = 0; i < g->n; i++)
        if (g->jobs[i].fifo_type >= 0)
            avail[g->jobs[i].fifo_type] -= scale_of(g->jobs[i].job);
    /* the queue: unallocated jobs in id order (fair share first) */
    ptrdiff_t nq = fifo_queue(g, v);
    if (nq < 0)
        return DR_ENOMEM;
    size_t q = 0;
    /* a job that ended hands its type to the head of the queue (base mode).
     * As in Gavel the head leaves the queue whether or not it fits there
     * (if not, it waits for the next allocation).  Gavel never asks whether
     * the head can run on the type at all: handed one where it runs at rate
     * 0 (ResNet-50 x2+ on a K80) or whose nodes cannot hold its GPUs, it
     * would be bound there for good and never start.  Such a type is not
     * offered to it: it keeps its place at the head, so the next freed type
     * or the loop below gives it one it can run on.  (Popping it like a head
     * that does not fit could strand it: when the last job to end held such
     * a type, nothing would ever re-allocate again.) */
    for (size_t f = 0; !perf && f < g->nfreed && q < (size_t)nq; f++) {
        gjob_t *head = &g->jobs[g->ord[q]];
        int t = g->freed[f].type;
        if (!(grate(v, head, (unsigned)t) > 0))
            continue;
        if (scale_of(head->job) <= avail[t]) {
            head->fifo_type = t;
            avail[t] -= scale_of(head->job);
        }
        q++;
    }
    g->nfreed = 0;
    /* available types in sorted-name order, as Gavel sorts worker types */
    int types[NT];
    size_t nt = 0;
    for (size_t t = 0; t < c->ntypes; t++)
        if (avail[t] > 0)
            types[nt++] = (int)t;
    for (size_t x = 0; x < nt; x++)
        for (size_t y = x + 1; y < nt; y++)
            if (strcmp(c->types[types[y]].name, c->types[types[x]].name) < 0) {
                int tmp = types[x];
                types[x] = types[y];
                types[y] = tmp;
            }
    for (; q < (size_t)nq && nt > 0; q++) {
        gjob_t *gj = &g->jobs[g->ord[q]];
        double s = scale_of(gj->job);
        int cand[NT];
        size_t map[NT], nc = 0;
        for (size_t k = 0; k < nt; k++)
            if (avail[types[k]] >= s && grate(v, gj, (unsigned)types[k]) > 0) {
                map[nc] = k;
                cand[nc++] = types[k];
            }
        if (nc == 0 && dr_sched_account_of(v->sched, gj->job) >= 0 &&
            (gj->host & dr_sched_account_types(v->sched, gj->job)) != gj->host)
            continue; /* held back by its account's limits: no queue blocker */
        if (nc == 0)
            break; /* FIFO: nothing behind the head may jump ahead */
        size_t idx = 0;
        int pick;
        if (perf) {
            double best = -1;
            pick = cand[0];
            for (size_t k = 0; k < nc; k++) {
                double r = grate(v, gj, (unsigned)cand[k]);
                if (r > best)
                    best = r, pick = cand[k], idx = k;
            }
        } else {
            idx = dr_pyrand_below(&g->fifo_rng, (uint32_t)nc);
            /* Gavel's stale loop variable (see top): the last type in sorted
             * order with any room left, whether or not the job fits there -
             * kept whenever the job can run on it at all (it waits for the
             * GPUs, as in Gavel).  Where it cannot (rate 0, or no set of
             * nodes of that type holds its GPUs) it would wait for ever, so
             * it gets the type drawn above instead: the one Gavel's code
             * means to assign (the drop below assumes it), as agnostic as
             * the rest of the policy, with room for the job and a nonzero
             * rate (cand holds only such types), and the draw Gavel makes
             * anyway, so the random stream is unchanged. */
            pick = types[nt - 1];
            if (!(grate(v, gj, (unsigned)pick) > 0))
                pick = cand[idx];
        }
        gj->fifo_type = pick;
        avail[pick] -= s;
        if (avail[pick] == 0) {
            size_t drop = map[idx];
            memmove(types + drop, types + drop + 1, (nt - drop - 1) * sizeof *types);
            nt--;
        }
    }
    for (size_t i = 0; i < g->n; i++) {
        gjob_t *gj = &g->jobs[i];
        for (size_t t = 0; t < NT; t++)
            gj->alloc[t] = (int)t == gj->fifo_type ? 1.0 : 0.0;
    }
    return DR_OK;
}

static int alloc_mmf(gavel_t *g, const dr_sched_view_t *v, dr_err_t *err)
{
    const dr_cluster_t *c = v->cluster;
    size_t m = g->n, n = c->ntypes;
    double G = 0, N[NT], S = 0;
    for (size_t t = 0; t < n; t++) {
        N[t] = (double)dr_cluster_total_gpus(c, (int)t);
        G += N[t];
    }
    for (size_t i = 0; i < m; i++)
        S += scale_of(g->jobs[i].job);
    /* the equal share: each job the same fraction f of every type,
     * proportionally to the types' sizes */
    double f = S > 0 && G < S ? G / S : 1.0;
    for (size_t i = 0; i < m; i++)
        for (size_t t = 0; t < NT; t++)
            g->jobs[i].alloc[t] = t < n && G > 0 ? f * N[t] / G : 0;
    if (g->kind == G_MMF || m == 0)
        return DR_OK;
    /* Gavel's LAS: maximise z subject to sum_j c_mj x_mj >= z for every job,
     * sum_j x_mj <= 1, sum_m s_m x_mj <= N_j, with c_mj = T_mj s_m / iso_m */
    size_t nx = m * n, ncols = nx + 1;
    dr_lp_t *lp = dr_lp_new(ncols, true);
    double *x = malloc(ncols * sizeof *x);
    int *cols = malloc((n + m + 1) * sizeof *cols);
    double *vals = malloc((n + m + 1) * sizeof *vals);
    int rc = DR_OK;
    if (!lp || !x || !cols || !vals) {
        rc = dr_err_set(err, DR_ENOMEM, "out of memory");
        goto out;
    }
    dr_lp_bounds(lp, nx, -INFINITY, INFINITY);
    dr_lp_obj(lp, nx, 1.0);
    for (size_t i = 0; i < m; i++) {
        const dr_job_t *j = g->jobs[i].job;
        double s = scale_of(j), iso = 0;
        for (size_t t = 0; t < n; t++)
            iso += grate(v, &g->jobs[i], (unsigned)t) * g->jobs[i].alloc[t];
        size_t k = 0;
        for (size_t t = 0; t < n; t++) {
            double T = grate(v, &g->jobs[i], (unsigned)t);
            dr_lp_bounds(lp, i * n + t, 0, T > 0 ? 1 : 0);
            if (T > 0 && iso > 0) {
                cols[k] = (int)(i * n + t);
                vals[k++] = T * s / iso;
            }
        }
        cols[k] = (int)nx;
        vals[k++] = -1.0;
        if ((rc = dr_lp_row(lp, k, cols, vals, 0, INFINITY)) != DR_OK)
            goto out;
        for (size_t t = 0; t < n; t++) {
            cols[t] = (int)(i * n + t);
            vals[t] = 1.0;
        }
        if ((rc = dr_lp_row(lp, n, cols, vals, -INFINITY, 1.0)) != DR_OK)
            goto out;
    }
    for (size_t t = 0; t < n; t++) {
        for (size_t i = 0; i < m; i++) {
            cols[i] = (int)(i * n + t);
            vals[i] = scale_of(g->jobs[i].job);
        }
        if ((rc = dr_lp_row(lp, m, cols, vals, -INFINITY, N[t])) != DR_OK)
            goto out;
    }
    if ((rc = dr_lp_solve(lp, x, NULL, err)) != DR_OK)
        goto out;
    for (size_t i = 0; i < m; i++)
        for (size_t t = 0; t < n; t++) {
            double a = x[i * n + t];
            g->jobs[i].alloc[t] = a < 0 ? 0 : a > 1 ? 1 : a;
        }
out:
    dr_lp_free(lp);
    free(x);
    free(cols);
    free(vals);
    return rc;
}

/* _update_priorities: X over the fraction of the type's time received;
 * a job that has not run on a type yet gets X * 1e9.  Times the job's
 * account's fair-share weight (sched.h), so that between accounts whose
 * factors differ the one that used more of its share comes later in each
 * round's greedy order (Gavel itself has no accounts). */
static void update_priorities(gavel_t *g, const dr_sched_view_t *v)
{
    for (size_t i = 0; i < g->n; i++) {
        gjob_t *gj = &g->jobs[i];
        for (size_t t = 0; t < v->cluster->ntypes; t++) {
            double a = gj->alloc[t], p;
            if (a == 0.0 || grate(v, gj, (unsigned)t) <= 0)
                p = 0;
            else {
                double frac = g->worker_time[t] > 0 ? gj->time_on[t] / g->worker_time[t] : 0;
                p = frac > 0 ? a / frac : a * 1e9;
                /* fair share between accounts (1.0 exactly with one) */
                double w = gj->job ? dr_sched_fairshare_weight(v->sched, gj->job) : 1.0;
                if (w != 1.0)
                    p *= w;
            }
            gj->prio[t] = p;
        }
    }
}

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->prio != y->prio)
        return x->prio > y->prio ? -1 : 1;
    if (x->deficit != y->deficit)
        return x->deficit > y->deficit ? -1 : 1;
    if (x->alloc != y->alloc)
        return x->alloc > y->alloc ? -1 : 1;
    return x->gj->id < y->gj->id ? -1 : (x->gj->id > y->gj->id); /* Python's sort is stable */
}

/* _schedule_jobs_on_workers_helper: greedy in priority order per type.
 * A job that arrived after the allocation was last computed (it waits up to
 * reset seconds for the next one) has priority 0 on every type; the
 * non-FIFO policies still pick it when GPUs are left over, which takes the
 * GPUs from the type's count and marks it scheduled, but Gavel's
 * _schedule_jobs_on_workers then gives no workers to a job that is not in
 * self._allocation ("elif job_id not in self._allocation: continue"): the
 * GPUs stay idle for the round and the job waits.  gavel_pass does the
 * same (it starts only allocated jobs).  FIFO never picks priority 0. */
/* Does a pending job's account leave it no room on type t now?  (Jobs
 * still in the list have a job: those that ended were dropped.) */
static bool acct_bars(const dr_sched_view_t *v, const gjob_t *gj, unsigned t)
{
    const dr_job_t *j = gj->job;
    return j->state == DR_JOB_PENDING && !(dr_sched_account_types(v->sched, j) >> t & 1);
}

static int select_jobs(gavel_t *g, const dr_sched_view_t *v)
{
    const dr_cluster_t *c = v->cluster;
    int order[NT];
    memcpy(order, g->order, sizeof order); /* an array: never NULL */
    if (g->kind == G_FIFO || g->kind == G_MMF)
        dr_pyrand_shuffle(&g->shuffler, order, g->norder, sizeof *order);
    double left[NT] = {0};
    for (size_t t = 0; t < c->ntypes; t++)
        left[t] = (double)dr_cluster_total_gpus(c, (int)t);
    for (size_t i = 0; i < g->n; i++)
        g->jobs[i].next_type = -1;
    if (dr_grow((void **)&g->ent, &g->ent_cap, g->n + 1, sizeof *g->ent) != 0)
        return DR_ENOMEM;
    bool fifo = g->kind == G_FIFO || g->kind == G_FIFO_PERF;
    for (size_t k = 0; k < g->norder; k++) {
        int t = order[k];
        /* jobs with priority 0 are never picked by FIFO: leave them out
         * of the sort (a long queue would otherwise dominate each round) */
        size_t ne = 0;
        for (size_t i = 0; i < g->n; i++) {
            gjob_t *gj = &g->jobs[i];
            if (fifo && gj->prio[t] <= 0)
                continue;
            g->ent[ne++] = (struct entry){gj, gj->prio[t], gj->deficit[t], gj->alloc[t]};
        }
        if (ne > 1)
            qsort(g->ent, ne, sizeof *g->ent, cmp_entry);
        for (size_t i = 0; i < ne; i++) {
            gjob_t *gj = g->ent[i].gj;
            if (left[t] <= 0 || gj->next_type >= 0)
                continue;
            /* a pending job whose account may not use the type now */
            if (acct_bars(v, gj, (unsigned)t))
                continue;
            if (grate(v, gj, (unsigned)t) <= 0)
                continue;
            if (fifo && g->ent[i].prio <= 0)
                continue;
            double s = scale_of(gj->job);
            if (s > left[t])
                continue;
            left[t] -= s;
            gj->next_type = t;
        }
    }
    return DR_OK;
}

static int gavel_pass(void *state, const dr_sched_view_t *v, dr_time_t *wake_at, dr_err_t *err)
{
    gavel_t *g = state;
    dr_time_t now = v->now;
    if (!g->ordered)
        make_order(g, v);
    *wake_at = g->next_round > now ? g->next_round : DR_TIME_NEVER;
    /* Jobs that ended since the last pass: note when, and let go of them
     * now, mid-round too (sched.h: no policy keeps a job past the pass that
     * lists it as ended). */
    for (size_t i = 0; i < v->nended; i++) {
        gjob_t *gj = find(g, v->ended[i]->id);
        if (gj) {
            gj->ended_at = v->ended[i]->end;
            gj->job = NULL;
        }
    }
    if (now < g->next_round && v->nrunning > 0)
        return DR_OK; /* mid-round: arrivals wait, freed GPUs idle */
    /* account the round that ends now */
    for (size_t i = 0; i < g->n; i++) {
        gjob_t *gj = &g->jobs[i];
        if (gj->cur_type < 0)
            continue;
        dr_time_t end = gj->ended_at < now ? gj->ended_at : now;
        double ran = end > g->round_start ? dr_time_to_s(end - g->round_start) : 0;
        gj->time_on[gj->cur_type] += ran;
        g->worker_time[gj->cur_type] += ran;
        gj->cur_type = -1;
    }
    /* admit arrivals, forget jobs that ended */
    g->mark++;
    for (int pass = 0; pass < 2; pass++) {
        dr_job_t *const *list = pass ? v->running : v->pending;
        size_t cnt = pass ? v->nrunning : v->npending;
        for (size_t i = 0; i < cnt; i++) {
            gjob_t *gj = find(g, list[i]->id);
            if (!gj) {
                if (!(gj = add(g, list[i])))
                    return dr_err_set(err, DR_ENOMEM, "out of memory");
                gj->host = dr_cluster_hostable_types(v->cluster, &list[i]->req) &
                           dr_sched_account_types_ever(v->sched, list[i]);
                g->need_alloc = true;
            }
            gj->job = list[i];
            gj->mark = g->mark;
        }
    }
    size_t w = 0;
    for (size_t i = 0; i < g->n; i++) {
        if (g->jobs[i].mark == g->mark) {
            g->jobs[w++] = g->jobs[i];
            continue;
        }
        g->need_alloc = true;
        if (g->jobs[i].fifo_type >= 0) {
            struct freed fr = {g->jobs[i].id, g->jobs[i].fifo_type};
            if (DR_PUSH(g->freed, g->nfreed, g->freed_cap, fr) != 0)
                return dr_err_set(err, DR_ENOMEM, "out of memory");
        }
    }
    g->n = w;
    if (g->need_alloc &&
        (g->last_reset == DR_TIME_NEVER || dr_time_to_s(now - g->last_reset) >= g->reset_s)) {
        reset_time(g, now);
        if (g->kind == G_FIFO || g->kind == G_FIFO_PERF) {
            if (alloc_fifo(g, v) != DR_OK)
                return dr_err_set(err, DR_ENOMEM, "gavel: out of memory");
        } else if (alloc_mmf(g, v, err) != DR_OK)
            return err ? err->code : DR_EINVAL;
        for (size_t i = 0; i < g->n; i++)
            g->jobs[i].allocated = true;
        g->need_alloc = false;
    }
    update_priorities(g, v);
    if (select_jobs(g, v) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    /* keep jobs picked for the type they run on; preempt the others */
    size_t nr = v->nrunning;
    dr_job_t **running = malloc((nr ? nr : 1) * sizeof *running);
    if (!running)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    if (nr)
        memcpy(running, v->running, nr * sizeof *running);
    int rc = DR_OK;
    for (size_t i = 0; i < nr && rc == DR_OK; i++) {
        gjob_t *gj = find(g, running[i]->id);
        if (gj && gj->next_type == (int)running[i]->alloc.type) {
            gj->cur_type = gj->next_type;
            gj->next_type = -1;
        } else {
            rc = dr_sched_decide_preempt(v->sched, running[i], "not picked for this round");
        }
    }
    free(running);
    for (size_t i = 0; i < g->n && rc == DR_OK; i++) {
        gjob_t *gj = &g->jobs[i];
        /* a job picked before any allocation included it holds its GPUs
         * idle for the round (see select_jobs) */
        if (gj->next_type < 0 || !gj->allocated)
            continue;
        dr_alloc_t a;
        int prc = dr_place(v->cluster, &gj->job->req, 1ULL << gj->next_type, v->place, &a);
        if (prc == DR_OK) {
            rc = dr_sched_decide_start(v->sched, gj->job, &a);
            gj->cur_type = gj->next_type;
        } else if (prc != DR_ENOSPC) {
            rc = prc;
        }
    }
    dr_sched_count_considered(v->sched, g->n);
    g->round_start = now;
    g->next_round = dr_time_add(now, dr_time_from_s(g->round_s));
    *wake_at = g->next_round;
    return rc == DR_OK ? DR_OK : dr_err_set(err, rc, "gavel: applying the round failed");
}

static int fifo_create(void **st, const char *o, const dr_policy_env_t *e, dr_err_t *err)
{
    return gavel_create(st, o, e, G_FIFO, err);
}

static int fifo_perf_create(void **st, const char *o, const dr_policy_env_t *e, dr_err_t *err)
{
    return gavel_create(st, o, e, G_FIFO_PERF, err);
}

static int mmf_create(void **st, const char *o, const dr_policy_env_t *e, dr_err_t *err)
{
    return gavel_create(st, o, e, G_MMF, err);
}

static int mmf_perf_create(void **st, const char *o, const dr_policy_env_t *e, dr_err_t *err)
{
    return gavel_create(st, o, e, G_MMF_PERF, err);
}

const dr_policy_ops_t dr_policy_gavel_fifo = {
    .name = "gavel_fifo",
    .doc = "Gavel's FIFO (agnostic) in 360 s rounds, as its code behaves (fills v100 first)",
    .create = fifo_create,
    .pass = gavel_pass,
    .destroy = gavel_destroy,
};

const dr_policy_ops_t dr_policy_gavel_fifo_perf = {
    .name = "fifo_perf",
    .doc = "Gavel's heterogeneity-aware FIFO in rounds: arrival order, fastest GPU type",
    .create = fifo_perf_create,
    .pass = gavel_pass,
    .destroy = gavel_destroy,
};

const dr_policy_ops_t dr_policy_gavel_mmf = {
    .name = "max_min_fairness",
    .doc = "Gavel's LAS, agnostic: equal share of every GPU type, in 360 s rounds",
    .create = mmf_create,
    .pass = gavel_pass,
    .destroy = gavel_destroy,
};

const dr_policy_ops_t dr_policy_gavel_mmf_perf = {
    .name = "max_min_fairness_perf",
    .doc = "Gavel's heterogeneity-aware LAS: LP over time fractions per GPU type (GLPK)",
    .create = mmf_perf_create,
    .pass = gavel_pass,
    .destroy = gavel_destroy,
};
