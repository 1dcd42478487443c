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
 * only if every later take before its own end still books on top of it -
 * the ledger's own refusal is the conflict test.  Fit is never re-derived
 * here. */
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

static void ev_undo(dr_cluster_t *w, const ev_t *e)
{
    if (e->take)
        dr_cluster_give(w, e->alloc);
    else
        (void)dr_cluster_take(w, e->alloc, NULL); /* it was held before: books again */
}

/* The earliest time r fits on the timeline (DR_TIME_NEVER if none), with
 * its allocation in *got.  base is the cluster as booked now. */
static int earliest(const dr_cluster_t *base, const tl_t *tl, dr_time_t now, const dr_est_job_t *j,
                    dr_time_t *at, dr_alloc_t *got, dr_err_t *err)
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
        size_t i = applied;
        bool ok = true;
        for (; i < tl->nev && tl->ev[i].t < end; i++)
            if (ev_apply(&w, &tl->ev[i]) != DR_OK) {
                ok = false;
                break;
            }
        while (i > applied)
            ev_undo(&w, &tl->ev[--i]);
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
    int rc = DR_OK;
    for (size_t i = 0; i < nrun && rc == DR_OK; i++)
        if (run[i].end != DR_TIME_NEVER)
            rc = tl_insert(&tl, (ev_t){.t = run[i].end, .take = false, .alloc = run[i].alloc});
    for (size_t i = 0; i < nahead && rc == DR_OK; i++) {
        if (dr_cluster_req_possible(c, ahead[i].req, NULL) != DR_OK)
            continue; /* a job that can never run holds nothing */
        dr_time_t at;
        dr_alloc_t a;
        rc = earliest(c, &tl, now, &ahead[i], &at, &a, err);
        if (rc == DR_OK && at != DR_TIME_NEVER) {
            rc = reserve(&tl, &ahead[i], at, &a);
            out->ahead_placed++;
        }
    }
    if (rc == DR_OK)
        rc = earliest(c, &tl, now, job, &out->start, &out->alloc, err);
    if (rc == DR_OK && out->start == DR_TIME_NEVER)
        snprintf(out->reason, sizeof out->reason,
                 "no start time: what it needs is held by jobs without a time limit or on "
                 "nodes that are down or drained");
    tl_free(&tl);
    if (rc != DR_OK && rc != DR_ENOMEM)
        return rc;
    if (rc == DR_ENOMEM)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    return DR_OK;
}
