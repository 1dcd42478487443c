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
 * Cost: per job, one cluster copy, the events up to its start booked in
 * the ledger, and for each time tried a placement and a walk of the events
 * in its window; about a second for 500 jobs ahead of 8,000 running on
 * 1,000 nodes (the controller bounds the jobs ahead it passes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/placement.h"
#include "drover/start_estimate.h"
#include "drover/util.h"

typedef struct ev {
    dr_time_t t;
    bool take;               /* else a give */
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

static int ev_apply(dr_cluster_t *w, const ev_t *e)
{
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

/* The earliest time r fits on the timeline (DR_TIME_NEVER if none), with
 * its allocation in *got.  base is the cluster as booked now. */
static int earliest(const dr_cluster_t *base, const tl_t *tl, win_t *v, dr_time_t now,
                    const dr_est_job_t *j, dr_time_t *at, dr_alloc_t *got, dr_err_t *err)
{
    *at = DR_TIME_NEVER;
    memset(got, 0, sizeof *got);
    const dr_job_req_t *r = j->req;
    dr_typemask_t allowed = r->gpus_per_node ? dr_cluster_hostable_types(base, r) : 0;
    if (r->gpus_per_node && !allowed)
        return DR_OK;
    dr_cluster_t w;
    int rc = dr_cluster_copy(&w, base, err);
    if (rc != DR_OK)
        return rc;
    dr_place_opts_t po = {.strategy = DR_PLACE_BEST_FIT};
    size_t applied = 0; /* events with t <= the candidate, booked in w */
    for (size_t k = 0;; k++) {
        /* candidates: now, then each time something is given back */
        dr_time_t t = now;
        if (k > 0) {
            while (applied < tl->nev && (tl->ev[applied].take || tl->ev[applied].t <= now))
                if (ev_apply(&w, &tl->ev[applied++]) != DR_OK)
                    goto inconsistent;
            if (applied == tl->nev)
                break;
            t = tl->ev[applied].t;
        }
        while (applied < tl->nev && tl->ev[applied].t <= t)
            if (ev_apply(&w, &tl->ev[applied++]) != DR_OK)
                goto inconsistent;
        dr_alloc_t a;
        rc = dr_place(&w, r, allowed, &po, &a);
        if (rc == DR_ENOSPC)
            continue;
        if (rc != DR_OK)
            goto out;
        /* does every take before its end still book on top of it? */
        dr_time_t end = j->limit > 0 ? dr_time_add(t, j->limit) : DR_TIME_NEVER;
        size_t to = applied;
        while (to < tl->nev && tl->ev[to].t < end)
            to++;
        bool ok = win_ok(v, &w, &a, tl->ev, applied, to);
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

/* Book j's reservation [at, at + limit) on the timeline. */
static int reserve(tl_t *tl, const dr_est_job_t *j, dr_time_t at, dr_alloc_t *a)
{
    dr_alloc_t *own = malloc(sizeof *own);
    if (!own || DR_PUSH(tl->owned, tl->nowned, tl->owned_cap, own) != 0) {
        free(own);
        dr_alloc_free(a);
        return DR_ENOMEM;
    }
    *own = *a;
    memset(a, 0, sizeof *a);
    if (tl_insert(tl, (ev_t){.t = at, .take = true, .alloc = own}) != DR_OK)
        return DR_ENOMEM;
    if (j->limit > 0 && dr_time_add(at, j->limit) != DR_TIME_NEVER &&
        tl_insert(tl, (ev_t){.t = dr_time_add(at, j->limit), .take = false, .alloc = own}) != DR_OK)
        return DR_ENOMEM;
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
    tl_t tl = {0};
    win_t win = {0};
    int rc = win_init(&win, c);
    /* the running jobs' ends, sorted once (inserting each would be quadratic) */
    for (size_t i = 0; i < nrun && rc == DR_OK; i++)
        if (run[i].end != DR_TIME_NEVER)
            rc = DR_PUSH(tl.ev, tl.nev, tl.cap,
                         ((ev_t){.t = run[i].end, .take = false, .alloc = run[i].alloc}));
    if (rc == DR_OK && tl.nev > 1)
        qsort(tl.ev, tl.nev, sizeof *tl.ev, ev_cmp);
    for (size_t i = 0; i < nahead && rc == DR_OK; i++) {
        if (dr_cluster_req_possible(c, ahead[i].req, NULL) != DR_OK)
            continue; /* a job that can never run holds nothing */
        dr_time_t at;
        dr_alloc_t a;
        rc = earliest(c, &tl, &win, now, &ahead[i], &at, &a, err);
        if (rc == DR_OK && at != DR_TIME_NEVER) {
            rc = reserve(&tl, &ahead[i], at, &a);
            out->ahead_placed++;
        }
    }
    if (rc == DR_OK)
        rc = earliest(c, &tl, &win, now, job, &out->start, &out->alloc, err);
    if (rc == DR_OK && out->start == DR_TIME_NEVER)
        snprintf(out->reason, sizeof out->reason,
                 "no start time: what it needs is held by jobs without a time limit or on "
                 "nodes that are down or drained");
    tl_free(&tl);
    win_free(&win);
    if (rc != DR_OK && rc != DR_ENOMEM)
        return rc;
    if (rc == DR_ENOMEM)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    return DR_OK;
}
