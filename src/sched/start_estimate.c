/* start_estimate.c - the earliest start of a new job behind the queue
 * (start_estimate.h; Slurm's `sbatch --test-only`).
 *
 * A timeline of ledger events over a copy of the cluster: each running job
 * gives its allocation back when its limit ends, and each job ahead, in
 * order, takes the earliest reservation that fits and gives it back when
 * its own limit ends (conservative backfill: every job ahead keeps its
 * reservation, so none is delayed by one behind it).  A job can only start
 * now or when something is given back, so those are the times tried; at a
 * time t the copy holds exactly what is booked at t, placement (the same
 * dr_place every policy uses) picks the nodes, and the reservation stands
 * only if every later take before its own end still books on top of it.
 * That check follows only the candidate's nodes, with the ledger's own
 * per-slot tests (win_ok), since the timeline without it is consistent;
 * which nodes fit is never re-derived here.
 *
 * What the controller enforces besides room is followed on the same
 * timeline.  A held job reserves nothing.  A job with dependencies is
 * tried from the time they hold, as the timeline dates the jobs they name
 * (a running job's limit, a planned job's reservation; after: its start),
 * so one waiting for a job later in the order is planned right after that
 * one (the controller queues it only then), and one waiting for a job that
 * never starts here reserves nothing.  Accounts' MaxRunningGpus limits:
 * the milli-GPUs each account holds are followed with the events, a time
 * is tried only on the types where its account has room then (as the
 * scheduler core gates placement), and the reservation stands only if the
 * account's later takes before its end stay within the limits with it.
 *
 * Cost: per job, one cluster copy, the events up to its start booked in
 * the ledger, and for each time tried a placement and a walk of the events
 * in its window; about a second for 500 jobs ahead of 8,000 running on
 * 1,000 nodes (the controller bounds the jobs ahead it passes).  A
 * dependency is looked up among the running jobs and the jobs ahead by a
 * scan (few jobs wait for others). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/placement.h"
#include "drover/start_estimate.h"
#include "drover/util.h"

typedef struct ev {
    dr_time_t t;
    bool take;               /* else a give */
    int32_t who;             /* the job ahead a reservation is for; -1: a running job */
    uint32_t account;        /* whose limits count it (0: none) */
    const dr_alloc_t *alloc; /* a running job's, or one of tl.owned */
} ev_t;

typedef struct tl {
    ev_t *ev; /* by time, gives before takes at one time */
    size_t nev, cap;
    dr_alloc_t **owned; /* reservations' allocations */
    size_t nowned, owned_cap;
} tl_t;

static bool ev_before(const ev_t *a, const ev_t *b)
{
    return a->t != b->t ? a->t < b->t : (!a->take && b->take);
}

static int ev_cmp(const void *a, const void *b)
{
    const ev_t *x = a, *y = b;
    return ev_before(x, y) ? -1 : ev_before(y, x);
}

/* Insert keeping the order (after events equal to it: stable). */
static int tl_insert(tl_t *tl, ev_t e)
{
    if (tl->nev == tl->cap && dr_grow((void **)&tl->ev, &tl->cap, tl->nev + 1, sizeof *tl->ev))
        return DR_ENOMEM;
    size_t i = tl->nev;
    while (i > 0 && ev_before(&e, &tl->ev[i - 1])) {
        tl->ev[i] = tl->ev[i - 1];
        i--;
    }
    tl->ev[i] = e;
    tl->nev++;
    return DR_OK;
}

static void tl_free(tl_t *tl)
{
    for (size_t i = 0; i < tl->nowned; i++) {
        dr_alloc_free(tl->owned[i]);
        free(tl->owned[i]);
    }
    free(tl->owned);
    free(tl->ev);
}

/* --- accounts' running-GPU limits --- */

/* Milli-GPUs each account's jobs hold, per GPU type and (last) in all:
 * naccounts x w.  base: as booked now (the running jobs); use: along the
 * walk of the timeline under way. */
typedef struct lim {
    size_t w; /* ntypes + 1 */
    uint64_t *base, *use;
    bool any; /* does an account declare a limit? */
} lim_t;

/* Do a's GPUs count against account acct's limits? */
static bool lim_counts(const dr_cluster_t *c, uint32_t acct, const dr_alloc_t *a)
{
    return acct && acct <= c->naccounts && a->nslots && a->slots[0].gpu != DR_NO_GPU;
}

static int lim_init(lim_t *l, const dr_cluster_t *c, const dr_est_running_t *run, size_t nrun)
{
    memset(l, 0, sizeof *l);
    for (size_t k = 0; k < c->naccounts && !l->any; k++) {
        l->any = c->accounts[k].max_running_gpus != DR_ACCT_NO_LIMIT;
        for (size_t t = 0; t < c->ntypes && !l->any; t++)
            l->any = c->accounts[k].max_running_gpus_type[t] != DR_ACCT_NO_LIMIT;
    }
    if (!l->any)
        return DR_OK;
    l->w = c->ntypes + 1;
    size_t n = c->naccounts ? c->naccounts * l->w : 1;
    l->base = calloc(n, sizeof *l->base);
    l->use = calloc(n, sizeof *l->use);
    if (!l->base || !l->use)
        return DR_ENOMEM;
    for (size_t i = 0; i < nrun; i++)
        if (lim_counts(c, run[i].account, run[i].alloc)) {
            uint64_t m = dr_alloc_milli(run[i].alloc), *u = &l->base[(run[i].account - 1) * l->w];
            u[run[i].alloc->type] += m;
            u[l->w - 1] += m;
        }
    return DR_OK;
}

static void lim_free(lim_t *l)
{
    free(l->base);
    free(l->use);
}

static void lim_apply(lim_t *l, const dr_cluster_t *c, const ev_t *e)
{
    if (!l->any || !lim_counts(c, e->account, e->alloc))
        return;
    uint64_t m = dr_alloc_milli(e->alloc), *u = &l->use[(e->account - 1) * l->w];
    if (e->take) {
        u[e->alloc->type] += m;
        u[l->w - 1] += m;
    } else {
        u[e->alloc->type] -= m;
        u[l->w - 1] -= m;
    }
}

/* A limit in milli-GPUs (UINT64_MAX: none). */
static uint64_t lim_milli(int64_t v)
{
    return v == DR_ACCT_NO_LIMIT ? UINT64_MAX : (uint64_t)v * 1000;
}

/* The types on which account acct has room for `need` more milli-GPUs
 * with what `use` says it holds (the scheduler core's placement gate,
 * dr_account_room). */
static dr_typemask_t lim_room(const dr_cluster_t *c, const lim_t *l, const uint64_t *use,
                              uint32_t acct, uint64_t need)
{
    if (!l->any || !acct || acct > c->naccounts || !need)
        return ~0ULL;
    const uint64_t *u = &use[(acct - 1) * l->w];
    return dr_account_room(&c->accounts[acct - 1], c->ntypes, u, u[l->w - 1], need);
}

static int ev_apply(dr_cluster_t *w, lim_t *l, const dr_cluster_t *c, const ev_t *e)
{
    lim_apply(l, c, e);
    if (!e->take) {
        dr_cluster_give(w, e->alloc);
        return DR_OK;
    }
    return dr_cluster_take(w, e->alloc, NULL);
}

/* What the window check tracks of the nodes a candidate allocation holds:
 * their free CPUs, memory and milli-GPUs as the events after its start
 * change them (arrays sized to the cluster, valid on marked nodes). */
typedef struct win {
    uint8_t *mark;
    int64_t *cpu, *mem, *gpu;
} win_t;

static int win_init(win_t *v, const dr_cluster_t *c)
{
    v->mark = calloc(c->nnodes ? c->nnodes : 1, 1);
    v->cpu = malloc((c->nnodes ? c->nnodes : 1) * sizeof *v->cpu);
    v->mem = malloc((c->nnodes ? c->nnodes : 1) * sizeof *v->mem);
    v->gpu = malloc((c->ngpus ? c->ngpus : 1) * sizeof *v->gpu);
    return v->mark && v->cpu && v->mem && v->gpu ? DR_OK : DR_ENOMEM;
}

static void win_free(win_t *v)
{
    free(v->mark);
    free(v->cpu);
    free(v->mem);
    free(v->gpu);
}

/* Book (sign -1) or free (+1) what e's allocation holds on marked nodes;
 * false if that leaves any of them short (a take the ledger would refuse). */
static bool win_apply(win_t *v, const dr_cluster_t *c, const dr_alloc_t *a, int sign)
{
    bool ok = true;
    for (uint32_t i = 0; i < a->nslots; i++) {
        const dr_slot_t *sl = &a->slots[i];
        if (!v->mark[sl->node])
            continue;
        if (i == 0 || a->slots[i - 1].node != sl->node) {
            v->cpu[sl->node] += sign * (int64_t)a->cpu_milli_per_node;
            v->mem[sl->node] += sign * (int64_t)a->mem_mb_per_node;
            ok = ok && v->cpu[sl->node] >= 0 && v->mem[sl->node] >= 0;
        }
        if (sl->gpu != DR_NO_GPU) {
            int64_t *g = &v->gpu[c->nodes[sl->node].gpu_base + sl->gpu];
            *g += sign * (int64_t)sl->milli;
            ok = ok && *g >= 0;
        }
    }
    return ok;
}

/* Do the events [from, to) leave room for allocation a, booked in w now?
 * Only a's nodes can refuse a take for its sake (the timeline without it is
 * consistent), so only they are followed, with the ledger's own checks, not
 * the ledger itself: a check costs a few operations per event rather than
 * two index updates. */
static bool win_ok(win_t *v, const dr_cluster_t *w, const dr_alloc_t *a, const ev_t *ev,
                   size_t from, size_t to)
{
    for (uint32_t i = 0; i < a->nslots; i++) {
        uint32_t nd = a->slots[i].node;
        if (v->mark[nd])
            continue;
        const dr_node_t *n = &w->nodes[nd];
        v->mark[nd] = 1;
        v->cpu[nd] = n->cpu_free;
        v->mem[nd] = (int64_t)n->mem_free;
        for (uint16_t g = 0; g < n->ngpus; g++)
            v->gpu[n->gpu_base + g] = w->gpu_free[n->gpu_base + g];
    }
    bool ok = true;
    for (size_t i = from; i < to && ok; i++)
        ok = win_apply(v, w, ev[i].alloc, ev[i].take ? -1 : 1);
    for (uint32_t i = 0; i < a->nslots; i++)
        v->mark[a->slots[i].node] = 0;
    return ok;
}

/* What becomes of a job ahead. */
enum {
    AH_OPEN = 0, /* not planned yet: it waits for a job ahead not planned yet */
    AH_PLACED,   /* a reservation at at[i] */
    AH_NONE,     /* no start time (it can never run here, or never finds room) */
    AH_HELD,     /* held: reserves nothing */
    AH_WAITING,  /* its dependencies do not hold within the estimate */
};

typedef struct est {
    const dr_cluster_t *c;
    dr_time_t now;
    const dr_est_running_t *run;
    size_t nrun;
    const dr_est_job_t *ahead;
    size_t nahead;
    tl_t tl;
    win_t win;
    lim_t lim;
    /* per job ahead: AH_*, and for a placed one its reservation's start,
     * when its dependencies held (now if it has none) and the job whose
     * start or end that was (0: none) */
    uint8_t *st;
    dr_time_t *at, *dep;
    uint64_t *dep_on;
} est_t;

/* Do the events [from, to) keep account acct within its limits with a
 * on top (booked at their start; lim.use as of then)? */
static bool lim_ok(const est_t *e, uint32_t acct, const dr_alloc_t *a, size_t from, size_t to)
{
    const dr_cluster_t *c = e->c;
    if (!e->lim.any || !lim_counts(c, acct, a))
        return true;
    const dr_account_t *ac = &c->accounts[acct - 1];
    const uint64_t *u = &e->lim.use[(acct - 1) * e->lim.w];
    uint64_t m = dr_alloc_milli(a);
    uint64_t tot = u[e->lim.w - 1] + m, ty = u[a->type] + m;
    uint64_t ltot = lim_milli(ac->max_running_gpus),
             lty = lim_milli(ac->max_running_gpus_type[a->type]);
    for (size_t i = from; i < to; i++) {
        const ev_t *x = &e->tl.ev[i];
        if (x->account != acct || !lim_counts(c, acct, x->alloc))
            continue;
        uint64_t d = dr_alloc_milli(x->alloc);
        bool same = x->alloc->type == a->type;
        if (!x->take) {
            tot -= d;
            ty -= same ? d : 0;
            continue;
        }
        tot += d;
        ty += same ? d : 0;
        if (tot > ltot || ty > lty)
            return false;
    }
    return true;
}

/* The earliest time j fits on the timeline at or after `from` (DR_TIME_NEVER
 * if none), with its allocation in *got; with `limits`, within its
 * account's limits. */
static int earliest(est_t *e, const dr_est_job_t *j, dr_time_t from, bool limits, dr_time_t *at,
                    dr_alloc_t *got, dr_err_t *err)
{
    const dr_cluster_t *base = e->c;
    const tl_t *tl = &e->tl;
    *at = DR_TIME_NEVER;
    memset(got, 0, sizeof *got);
    const dr_job_req_t *r = j->req;
    dr_typemask_t allowed = r->gpus_per_node ? dr_cluster_hostable_types(base, r) : 0;
    if (r->gpus_per_node && !allowed)
        return DR_OK;
    limits = limits && e->lim.any && j->account && r->gpus_per_node;
    uint64_t need = dr_job_req_milli(r);
    dr_cluster_t w;
    int rc = dr_cluster_copy(&w, base, err);
    if (rc != DR_OK)
        return rc;
    if (e->lim.any)
        memcpy(e->lim.use, e->lim.base, base->naccounts * e->lim.w * sizeof *e->lim.use);
    dr_time_t t0 = from > e->now ? from : e->now;
    dr_place_opts_t po = {.strategy = DR_PLACE_BEST_FIT};
    size_t applied = 0; /* events with t <= the candidate, booked in w */
    for (size_t k = 0;; k++) {
        /* candidates: t0, then each time something is given back */
        dr_time_t t = t0;
        if (k > 0) {
            while (applied < tl->nev && (tl->ev[applied].take || tl->ev[applied].t <= t0))
                if (ev_apply(&w, &e->lim, base, &tl->ev[applied++]) != DR_OK)
                    goto inconsistent;
            if (applied == tl->nev)
                break;
            t = tl->ev[applied].t;
        }
        while (applied < tl->nev && tl->ev[applied].t <= t)
            if (ev_apply(&w, &e->lim, base, &tl->ev[applied++]) != DR_OK)
                goto inconsistent;
        dr_typemask_t mask = allowed;
        if (limits && !(mask &= lim_room(base, &e->lim, e->lim.use, j->account, need)))
            continue; /* its account has no room for it yet */
        dr_alloc_t a;
        rc = dr_place(&w, r, mask, &po, &a);
        if (rc == DR_ENOSPC)
            continue;
        if (rc != DR_OK)
            goto out;
        /* does every take before its end still book on top of it? */
        dr_time_t end = j->limit > 0 ? dr_time_add(t, j->limit) : DR_TIME_NEVER;
        size_t to = applied;
        while (to < tl->nev && tl->ev[to].t < end)
            to++;
        bool ok = win_ok(&e->win, &w, &a, tl->ev, applied, to) &&
                  (!limits || lim_ok(e, j->account, &a, applied, to));
        dr_cluster_give(&w, &a);
        if (ok) {
            *at = t;
            *got = a;
            break;
        }
        dr_alloc_free(&a);
    }
    rc = DR_OK;
    goto out;
inconsistent:
    rc = dr_err_set(err, DR_EINVAL,
                    "start estimate: the running allocations do not match the "
                    "cluster's ledger");
out:
    dr_cluster_free(&w);
    return rc;
}

/* Book job ahead i's reservation [at, at + limit) on the timeline. */
static int reserve(est_t *e, size_t i, dr_time_t at, dr_alloc_t *a)
{
    tl_t *tl = &e->tl;
    const dr_est_job_t *j = &e->ahead[i];
    dr_alloc_t *own = malloc(sizeof *own);
    if (!own || DR_PUSH(tl->owned, tl->nowned, tl->owned_cap, own) != 0) {
        free(own);
        dr_alloc_free(a);
        return DR_ENOMEM;
    }
    *own = *a;
    memset(a, 0, sizeof *a);
    ev_t x = {.t = at, .take = true, .who = (int32_t)i, .account = j->account, .alloc = own};
    if (tl_insert(tl, x) != DR_OK)
        return DR_ENOMEM;
    x.t = j->limit > 0 ? dr_time_add(at, j->limit) : DR_TIME_NEVER;
    x.take = false;
    if (x.t != DR_TIME_NEVER && tl_insert(tl, x) != DR_OK)
        return DR_ENOMEM;
    return DR_OK;
}

/* --- dependencies --- */
enum { DEP_AT, DEP_WAIT, DEP_NEVER };

/* The job ahead with this id, or -1. */
static ptrdiff_t ahead_of(const est_t *e, uint64_t id)
{
    for (size_t i = 0; i < e->nahead; i++)
        if (e->ahead[i].id == id)
            return (ptrdiff_t)i;
    return -1;
}

/* When one ref holds: DEP_AT (*t), DEP_WAIT (a job ahead not planned
 * yet), DEP_NEVER. */
static int ref_time(const est_t *e, const dr_est_dep_t *d, dr_time_t *t)
{
    *t = d->at;
    if (!d->job)
        return d->at == DR_TIME_NEVER ? DEP_NEVER : DEP_AT;
    for (size_t i = 0; i < e->nrun; i++)
        if (e->run[i].id == d->job) {
            *t = d->on_start ? e->now : e->run[i].end;
            return *t == DR_TIME_NEVER ? DEP_NEVER : DEP_AT;
        }
    ptrdiff_t i = ahead_of(e, d->job);
    if (i < 0)
        return DEP_NEVER; /* not planned */
    if (e->st[i] == AH_OPEN)
        return DEP_WAIT;
    if (e->st[i] != AH_PLACED)
        return DEP_NEVER;
    dr_time_t lim = e->ahead[i].limit;
    *t = d->on_start ? e->at[i] : lim > 0 ? dr_time_add(e->at[i], lim) : DR_TIME_NEVER;
    return *t == DR_TIME_NEVER ? DEP_NEVER : DEP_AT;
}

/* When j's dependencies hold: DEP_AT with *t (now when it has none) and
 * *on the job whose start or end that is (0: none, or they hold already);
 * DEP_WAIT while a job ahead they need is not planned yet; DEP_NEVER when
 * they do not hold within the estimate (*on: a job named that never
 * starts or is not planned; 0: one the caller knows never holds).  The
 * refs of one term are together. */
static int dep_time(const est_t *e, const dr_est_job_t *j, dr_time_t *t, uint64_t *on)
{
    *t = e->now;
    *on = 0;
    if (!j->ndeps)
        return DEP_AT;
    bool wait = false, never = false, some = false;
    dr_time_t best = j->dep_any ? DR_TIME_NEVER : e->now;
    uint64_t best_on = 0, never_on = 0;
    for (size_t i = 0; i < j->ndeps;) {
        int ts = DEP_AT;
        dr_time_t tt = e->now;
        uint64_t tt_on = 0;
        size_t k = i;
        for (; k < j->ndeps && j->deps[k].term == j->deps[i].term; k++) {
            dr_time_t rt;
            int rs = ref_time(e, &j->deps[k], &rt);
            if (rs == DEP_NEVER && ts != DEP_NEVER) {
                ts = DEP_NEVER;
                tt_on = j->deps[k].job;
            } else if (rs == DEP_WAIT && ts == DEP_AT) {
                ts = DEP_WAIT;
            } else if (rs == DEP_AT && ts == DEP_AT && rt > tt) {
                tt = rt;
                tt_on = j->deps[k].job;
            }
        }
        i = k;
        if (ts == DEP_WAIT) {
            wait = true;
        } else if (ts == DEP_NEVER) {
            never = true;
            if (!never_on)
                never_on = tt_on;
        } else if (j->dep_any ? tt < best : tt > best) {
            some = true;
            best = tt;
            best_on = tt_on;
        } else {
            some = true;
        }
    }
    if (!j->dep_any) {
        if (never) {
            *on = never_on;
            return DEP_NEVER;
        }
        if (wait)
            return DEP_WAIT;
    } else {
        if (wait && !(some && best <= e->now))
            return DEP_WAIT; /* one still unknown may hold sooner */
        if (!some) {
            *on = never_on;
            return DEP_NEVER;
        }
    }
    *t = best;
    *on = best_on;
    return DEP_AT;
}

/* Plan job ahead i, unless it waits for a job ahead not planned yet
 * (*done false). */
static int decide(est_t *e, size_t i, dr_start_est_t *out, bool *done, dr_err_t *err)
{
    const dr_est_job_t *j = &e->ahead[i];
    *done = true;
    if (j->held) {
        e->st[i] = AH_HELD;
        out->ahead_held++;
        return DR_OK;
    }
    if (dr_cluster_req_possible(e->c, j->req, NULL) != DR_OK) {
        e->st[i] = AH_NONE; /* a job that can never run holds nothing */
        return DR_OK;
    }
    dr_time_t from;
    uint64_t on;
    int ds = dep_time(e, j, &from, &on);
    if (ds == DEP_WAIT) {
        *done = false;
        return DR_OK;
    }
    if (ds == DEP_NEVER) {
        e->st[i] = AH_WAITING;
        out->ahead_waiting++;
        return DR_OK;
    }
    dr_time_t at;
    dr_alloc_t a;
    int rc = earliest(e, j, from, true, &at, &a, err);
    if (rc != DR_OK)
        return rc;
    if (at == DR_TIME_NEVER) {
        e->st[i] = AH_NONE;
        return DR_OK;
    }
    e->st[i] = AH_PLACED;
    e->at[i] = at;
    e->dep[i] = from;
    e->dep_on[i] = on;
    out->ahead_placed++;
    return reserve(e, i, at, &a);
}

/* Plan the jobs ahead in order, each one waiting for a job ahead not
 * planned yet right after that one. */
static int plan_ahead(est_t *e, dr_start_est_t *out, dr_err_t *err)
{
    size_t *open = malloc((e->nahead ? e->nahead : 1) * sizeof *open), nopen = 0;
    if (!open)
        return DR_ENOMEM;
    int rc = DR_OK;
    for (size_t i = 0; i < e->nahead && rc == DR_OK; i++) {
        bool done;
        rc = decide(e, i, out, &done, err);
        if (!done) {
            open[nopen++] = i;
            continue;
        }
        for (size_t k = 0; k < nopen && rc == DR_OK;) {
            rc = decide(e, open[k], out, &done, err);
            if (!done) {
                k++;
                continue;
            }
            memmove(open + k, open + k + 1, (nopen - k - 1) * sizeof *open);
            nopen--;
            k = 0; /* what waited for it may go now */
        }
    }
    for (size_t k = 0; k < nopen && rc == DR_OK; k++) { /* a cycle */
        e->st[open[k]] = AH_WAITING;
        out->ahead_waiting++;
    }
    free(open);
    return rc;
}

/* Why job `on` (named by a dependency) gives no time. */
static const char *never_why(const est_t *e, uint64_t on)
{
    if (!on)
        return "can never hold";
    for (size_t i = 0; i < e->nrun; i++)
        if (e->run[i].id == on)
            return "runs without a time limit";
    ptrdiff_t i = ahead_of(e, on);
    if (i < 0)
        return "is not among the jobs planned (held, waiting itself, or not queued)";
    switch (e->st[i]) {
    case AH_HELD: return "is held";
    case AH_WAITING: return "waits for a dependency that does not hold within the estimate";
    case AH_PLACED: return "has no time limit";
    default: return "has no start time";
    }
}

static void why_add(dr_start_est_t *out, const char *fmt, ...) DR_PRINTF(2, 3);

/* Append one cause to out->why ("; " between causes). */
static void why_add(dr_start_est_t *out, const char *fmt, ...)
{
    size_t n = strlen(out->why);
    if (n && n + 2 < sizeof out->why) {
        memcpy(out->why + n, "; ", 3);
        n += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(out->why + n, sizeof out->why - n, fmt, ap);
    va_end(ap);
}

/* The limit of j's account that keeps it from starting now: its
 * MaxRunningGpus in all, else on a type that could host it; with what its
 * running jobs hold. */
static void why_limit(const est_t *e, const dr_est_job_t *j, dr_start_est_t *out)
{
    const dr_cluster_t *c = e->c;
    const dr_account_t *ac = &c->accounts[j->account - 1];
    const uint64_t *u = &e->lim.base[(j->account - 1) * e->lim.w];
    uint64_t need = dr_job_req_milli(j->req);
    if (u[e->lim.w - 1] + need > lim_milli(ac->max_running_gpus)) {
        why_add(out, "account %s is at its limit MaxRunningGpus=%lld (its running jobs hold %g)",
                ac->name, (long long)ac->max_running_gpus, (double)u[e->lim.w - 1] / 1000.0);
        return;
    }
    dr_typemask_t host = dr_cluster_hostable_types(c, j->req);
    for (size_t t = 0; t < c->ntypes; t++)
        if ((host >> t & 1) && u[t] + need > lim_milli(ac->max_running_gpus_type[t])) {
            why_add(out,
                    "account %s is at its limit MaxRunningGpus[%s]=%lld (its running jobs hold "
                    "%g)",
                    ac->name, c->types[t].name, (long long)ac->max_running_gpus_type[t],
                    (double)u[t] / 1000.0);
            return;
        }
    why_add(out,
            "account %s's MaxRunningGpus leave it no room before then (its jobs ahead are "
            "counted)",
            ac->name);
}

/* The new job's own estimate, behind the jobs ahead as planned. */
static int estimate_job(est_t *e, const dr_est_job_t *job, dr_start_est_t *out, dr_err_t *err)
{
    if (job->held) {
        snprintf(out->reason, sizeof out->reason,
                 "no start time: it is held, and starts only once released");
        return DR_OK;
    }
    dr_time_t from;
    uint64_t on;
    int ds = dep_time(e, job, &from, &on);
    if (ds != DEP_AT) {
        if (on)
            snprintf(out->reason, sizeof out->reason,
                     "no start time: it depends on job %llu, which %s", (unsigned long long)on,
                     never_why(e, on));
        else
            snprintf(out->reason, sizeof out->reason,
                     "no start time: its dependency can never hold");
        return DR_OK;
    }
    int rc = earliest(e, job, from, true, &out->start, &out->alloc, err);
    if (rc != DR_OK || out->start == DR_TIME_NEVER) {
        if (rc == DR_OK)
            snprintf(out->reason, sizeof out->reason,
                     "no start time: what it needs is held by jobs without a time limit or on "
                     "nodes that are down or drained");
        return rc;
    }
    if (out->start <= e->now)
        return DR_OK;
    if (on && out->start == from)
        why_add(out, "after its dependency on job %llu", (unsigned long long)on);
    /* behind a job ahead that waited for its dependency: one whose
     * reservation it starts at the end of */
    for (size_t i = 0; i < e->tl.nev; i++) {
        const ev_t *x = &e->tl.ev[i];
        if (x->t < out->start || x->take || x->who < 0)
            continue;
        if (x->t > out->start)
            break;
        size_t w = (size_t)x->who;
        if (e->dep_on[w] && e->dep[w] > e->now && e->at[w] == e->dep[w]) {
            why_add(out, "behind job %llu's dependency on job %llu",
                    (unsigned long long)e->ahead[w].id, (unsigned long long)e->dep_on[w]);
            break;
        }
    }
    /* its account's limit, if it would start sooner without it */
    if (e->lim.any && job->account && job->account <= e->c->naccounts && job->req->gpus_per_node) {
        dr_time_t free_at;
        dr_alloc_t a;
        rc = earliest(e, job, from, false, &free_at, &a, err);
        dr_alloc_free(&a);
        if (rc != DR_OK)
            return rc;
        if (free_at < out->start)
            why_limit(e, job, out);
    }
    return DR_OK;
}

int dr_start_estimate(const dr_cluster_t *c, dr_time_t now, const dr_est_running_t *run,
                      size_t nrun, const dr_est_job_t *ahead, size_t nahead,
                      const dr_est_job_t *job, dr_start_est_t *out, dr_err_t *err)
{
    memset(out, 0, sizeof *out);
    out->start = DR_TIME_NEVER;
    dr_err_t why = {0};
    if (dr_cluster_req_possible(c, job->req, &why) != DR_OK) {
        snprintf(out->reason, sizeof out->reason, "%s", why.msg);
        return DR_OK;
    }
    est_t e = {.c = c, .now = now, .run = run, .nrun = nrun, .ahead = ahead, .nahead = nahead};
    size_t na = nahead ? nahead : 1;
    e.st = calloc(na, sizeof *e.st);
    e.at = calloc(na, sizeof *e.at);
    e.dep = calloc(na, sizeof *e.dep);
    e.dep_on = calloc(na, sizeof *e.dep_on);
    int rc = e.st && e.at && e.dep && e.dep_on ? win_init(&e.win, c) : DR_ENOMEM;
    if (rc == DR_OK)
        rc = lim_init(&e.lim, c, run, nrun);
    /* the running jobs' ends, sorted once (inserting each would be quadratic) */
    for (size_t i = 0; i < nrun && rc == DR_OK; i++)
        if (run[i].end != DR_TIME_NEVER)
            rc = DR_PUSH(e.tl.ev, e.tl.nev, e.tl.cap,
                         ((ev_t){.t = run[i].end,
                                 .take = false,
                                 .who = -1,
                                 .account = run[i].account,
                                 .alloc = run[i].alloc}));
    if (rc == DR_OK && e.tl.nev > 1)
        qsort(e.tl.ev, e.tl.nev, sizeof *e.tl.ev, ev_cmp);
    if (rc == DR_OK)
        rc = plan_ahead(&e, out, err);
    if (rc == DR_OK)
        rc = estimate_job(&e, job, out, err);
    tl_free(&e.tl);
    win_free(&e.win);
    lim_free(&e.lim);
    free(e.st);
    free(e.at);
    free(e.dep);
    free(e.dep_on);
    if (rc != DR_OK)
        dr_alloc_free(&out->alloc);
    if (rc != DR_OK && rc != DR_ENOMEM)
        return rc;
    if (rc == DR_ENOMEM)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    return DR_OK;
}
