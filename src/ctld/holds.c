/* holds.c - holds and priority changes of jobs that have not started.
 *
 * A held job (submitted with -H, or held by `drover hold`) stays PENDING
 * but is out of the scheduler, as Slurm keeps it at priority 0: it is
 * withdrawn from the queue (dr_sched_withdraw) and put back on release
 * with its submit time, so it keeps its place.  A hold placed by an
 * operator (JobHeldAdmin) can be released only by an operator.  A job
 * still waiting for its dependencies keeps waiting there (deps.c skips a
 * held one).  An array's parent holds the tasks not yet started: none is
 * materialised while it is held, and the pending live ones are held with
 * it.  The hold is in the job's runtime state, so it survives a restart. */
#include <stdio.h>
#include <string.h>

#include "ctld/ctld.h"
#include "ctld/deps.h"
#include "ctld/holds.h"
#include "ctld/submit.h"
#include "ctld/turn.h"

const char *ctld_hold_name(uint8_t hold)
{
    return hold == CTLD_HOLD_USER ? "user" : hold == CTLD_HOLD_ADMIN ? "admin" : NULL;
}

void ctld_hold_reason(ctld_job_t *cj)
{
    snprintf(cj->reason, sizeof cj->reason, "%s",
             cj->hold == CTLD_HOLD_ADMIN ? "JobHeldAdmin" : "JobHeldUser");
}

/* Hold one pending job (or task). */
static int hold_one(dr_ctld_t *c, ctld_job_t *cj, uint8_t kind, dr_err_t *err)
{
    if (cj->in_sched) {
        char why[64];
        snprintf(why, sizeof why, "held (%s)", ctld_hold_name(kind));
        int rc = dr_sched_withdraw(c->sched, &cj->j, ctld_now(c), why, err);
        if (rc != DR_OK)
            return rc;
        cj->in_sched = false;
    }
    if (cj->hold < kind)
        cj->hold = kind; /* an operator's hold outranks the owner's */
    ctld_hold_reason(cj);
    ctld_job_dirty(c, cj);
    return DR_OK;
}

int ctld_hold(dr_ctld_t *c, ctld_job_t *cj, bool admin, dr_err_t *err)
{
    uint8_t kind = admin ? CTLD_HOLD_ADMIN : CTLD_HOLD_USER;
    unsigned long long id = (unsigned long long)cj->j.id;
    if (ctld_job_terminal(cj))
        return dr_err_set(err, DR_ESTATE, "job %llu has already ended", id);
    if (cj->array) {
        ctld_array_t *a = cj->array;
        uint32_t pending = a->nidx - a->next;
        for (uint32_t i = 0; i < a->active; i++)
            pending += a->live[i]->j.state == DR_JOB_PENDING;
        if (!pending)
            return dr_err_set(err, DR_ESTATE,
                              "array %llu: every task has started; only pending tasks can be held",
                              id);
        for (uint32_t i = 0; i < a->active; i++)
            if (a->live[i]->j.state == DR_JOB_PENDING &&
                hold_one(c, a->live[i], kind, err) != DR_OK)
                return err->code;
        if (cj->hold < kind)
            cj->hold = kind;
        ctld_hold_reason(cj);
        ctld_job_dirty(c, cj);
        return DR_OK;
    }
    if (cj->j.state != DR_JOB_PENDING)
        return dr_err_set(err, DR_ESTATE, "job %llu is %s: only a pending job can be held", id,
                          ctld_job_state_name(cj));
    return hold_one(c, cj, kind, err);
}

/* Put a released job back where it waits: its dependencies, else the
 * queue (restored, keeping its submit time and what it has shown). */
static int requeue(dr_ctld_t *c, ctld_job_t *cj, dr_err_t *err)
{
    if (ctld_deps_waiting(c, cj)) {
        snprintf(cj->reason, sizeof cj->reason, "waiting for its dependencies");
        ctld_job_dirty(c, cj);
        return DR_OK;
    }
    if (cj->j.nstarts == 0 && cj->j.first_start == DR_TIME_NEVER)
        return ctld_submit(c, cj, err);
    int rc = dr_sched_restore(c->sched, &cj->j, ctld_now(c), err);
    if (rc != DR_OK)
        return rc;
    cj->in_sched = true;
    ctld_pending_reason(c, cj);
    ctld_job_dirty(c, cj);
    ctld_want_pass(c);
    return DR_OK;
}

static int release_one(dr_ctld_t *c, ctld_job_t *cj, dr_err_t *err)
{
    cj->hold = CTLD_HOLD_NONE;
    if (cj->j.state != DR_JOB_PENDING || cj->in_sched || cj->stopping)
        return DR_OK; /* a stopping job (stop.c) goes back in the queue once stopped */
    return requeue(c, cj, err);
}

int ctld_release(dr_ctld_t *c, ctld_job_t *cj, bool admin, dr_err_t *err)
{
    unsigned long long id = (unsigned long long)cj->j.id;
    if (ctld_job_terminal(cj))
        return dr_err_set(err, DR_ESTATE, "job %llu has already ended", id);
    if (!cj->hold)
        return dr_err_set(err, DR_ESTATE, "job %llu is not held", id);
    ctld_deps_recheck(c); /* a released job waiting for dependencies may go now */
    if (cj->hold == CTLD_HOLD_ADMIN && !admin)
        return dr_err_set(err, DR_EINVAL,
                          "job %llu was held by an operator (JobHeldAdmin): only an operator can "
                          "release it",
                          id);
    if (cj->array) {
        ctld_array_t *a = cj->array;
        for (uint32_t i = 0; i < a->active; i++)
            if (a->live[i]->hold && release_one(c, a->live[i], err) != DR_OK)
                return err->code;
        cj->hold = CTLD_HOLD_NONE;
        snprintf(cj->reason, sizeof cj->reason, "queued");
        ctld_job_dirty(c, cj);
        ctld_turn_schedule(c); /* the feed materialises its tasks again */
        return DR_OK;
    }
    return release_one(c, cj, err);
}

/* One job's priority; a pending one in the queue moves there now. */
static int prio_one(dr_ctld_t *c, ctld_job_t *cj, int32_t prio, dr_err_t *err)
{
    if (cj->j.priority == prio)
        return DR_OK;
    if (cj->in_sched && cj->j.state == DR_JOB_PENDING) {
        char why[64];
        snprintf(why, sizeof why, "priority %d", prio);
        dr_time_t now = ctld_now(c);
        int rc = dr_sched_withdraw(c->sched, &cj->j, now, why, err);
        if (rc != DR_OK)
            return rc;
        cj->j.priority = prio;
        rc = dr_sched_restore(c->sched, &cj->j, now, err);
        if (rc != DR_OK) {
            cj->in_sched = false;
            return rc;
        }
        ctld_want_pass(c);
    }
    cj->j.priority = prio;
    ctld_job_dirty(c, cj);
    return DR_OK;
}

int ctld_set_priority(dr_ctld_t *c, ctld_job_t *cj, int32_t prio, dr_err_t *err)
{
    if (cj->parent)
        cj = cj->parent; /* a task's priority is its array's (its spec) */
    if (ctld_job_terminal(cj))
        return dr_err_set(err, DR_ESTATE, "job %llu has already ended",
                          (unsigned long long)cj->j.id);
    cj->spec.priority = prio; /* stored with the spec: a reload keeps it */
    if (cj->array) {
        ctld_array_t *a = cj->array;
        for (uint32_t i = 0; i < a->active; i++)
            if (!ctld_job_terminal(a->live[i]) && prio_one(c, a->live[i], prio, err) != DR_OK)
                return err->code;
        cj->j.priority = prio;
        ctld_job_dirty(c, cj);
        return DR_OK;
    }
    return prio_one(c, cj, prio, err);
}
