/* kill.c - KILL frames (a job's processes or one step's tasks, again to
 * an agent that comes back still running them) and cancel. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/arrays.h"
#include "ctld/kill.h"
#include "ctld/outbox.h"
#include "ctld/settle.h"
#include "ctld/stop.h"
#include "ctld/turn.h"

static void kill_frame(dr_ctld_t *c, const ctld_job_t *cj, uint32_t node, uint32_t step, int sig,
                       const char *why)
{
    dr_msg_kill_t m = {.job = cj->j.id,
                       .gen = cj->gen,
                       .signal = sig,
                       .grace_ns = CTLD_KILL_GRACE_NS,
                       .reason = (char *)why,
                       .step = step};
    char *json = NULL;
    size_t len;
    if (dr_msg_kill_encode(&m, &json, &len, NULL) == DR_OK)
        ctld_out_frame(c, (int)node, DR_MSG_KILL, json);
}

void ctld_kill_again(dr_ctld_t *c, ctld_job_t *cj, uint32_t node)
{
    if (cj->stopping && !cj->stop_at) { /* preempted, its lead over (stop.c) */
        kill_frame(c, cj, node, 0, SIGTERM, "preempted");
        return;
    }
    if (cj->kill_sent) {
        kill_frame(c, cj, node, 0, SIGTERM, cj->reason[0] ? cj->reason : "stopped");
        return;
    }
    for (uint32_t s = 0; s < cj->nsteps; s++) {
        bool here = false;
        for (uint32_t r = 0; r < cj->nranks && !here; r++)
            here = cj->ranks[r].step == s + 1 && cj->ranks[r].node == node && !cj->ranks[r].ended;
        if (here && (cj->steps[s].kill_sent || cj->reap_sent))
            kill_frame(c, cj, node, s + 1, SIGTERM, "stopped");
    }
}

void ctld_send_kill(dr_ctld_t *c, ctld_job_t *cj, uint32_t step, int sig, const char *why)
{
    /* one KILL per node stops every rank of the generation (or of the step) there */
    for (uint32_t r = 0; r < cj->nranks; r++) {
        bool sent = false, mine = step == 0 || cj->ranks[r].step == step;
        for (uint32_t q = 0; q < r && !sent; q++)
            sent = cj->ranks[q].node == cj->ranks[r].node && !cj->ranks[q].ended &&
                   (step == 0 || cj->ranks[q].step == step);
        if (cj->ranks[r].ended || sent || !mine)
            continue;
        kill_frame(c, cj, cj->ranks[r].node, step, sig, why);
    }
}

void ctld_kill_ranks(dr_ctld_t *c, ctld_job_t *cj, const char *why)
{
    ctld_send_kill(c, cj, 0, SIGTERM, why);
    cj->kill_sent = true;
}

bool ctld_rank_stopped(const ctld_job_t *cj, uint32_t rank)
{
    const ctld_rank_t *r = &cj->ranks[rank];
    if (cj->kill_sent || (cj->reap_sent && r->step))
        return true;
    return r->step && r->step <= cj->nsteps && cj->steps[r->step - 1].kill_sent;
}

int ctld_cancel(dr_ctld_t *c, ctld_job_t *cj, const char *why, dr_err_t *err)
{
    dr_time_t now = ctld_now(c);
    if (ctld_job_terminal(cj))
        return dr_err_set(err, DR_ESTATE, "job %llu is already %s", (unsigned long long)cj->j.id,
                          ctld_job_state_name(cj));
    if (cj->array) {
        ctld_array_t *a = cj->array;
        if (a->svc)
            a->svc->stopping = true; /* no new runs; the last one to end settles it */
        a->count[DR_JOB_CANCELLED] += a->nidx - a->next;
        a->next = a->nidx;
        /* cancel the live tasks; the last one to end settles the parent */
        uint32_t n = a->active;
        ctld_job_t **live = malloc((n ? n : 1) * sizeof *live);
        if (!live)
            return dr_err_set(err, DR_ENOMEM, "out of memory");
        memcpy(live, a->live, n * sizeof *live);
        for (uint32_t i = 0; i < n; i++)
            if (!ctld_job_terminal(live[i]))
                ctld_cancel(c, live[i], why, NULL);
        free(live);
        if (a->active == 0) {
            /* nothing was live: settle now */
            a->active = 0;
            cj->j.state = DR_JOB_CANCELLED;
            cj->j.end = now;
            cj->has_exit = true;
            cj->exit_code = 1;
            snprintf(cj->reason, sizeof cj->reason, "%s", why);
            ctld_arrays_drop(c, cj);
            ctld_evict_later(c, cj);
        }
        ctld_job_dirty(c, cj);
        return DR_OK;
    }
    if (cj->j.state == DR_JOB_PENDING && !cj->in_sched) {
        /* waiting for its dependencies, or stopping (stop.c): the scheduler
         * does not hold it */
        ctld_stop_cancel(c, cj);
        cj->j.state = DR_JOB_CANCELLED;
        cj->j.end = now;
        cj->has_exit = true;
        cj->exit_code = 1;
        snprintf(cj->reason, sizeof cj->reason, "%s", why);
        ctld_job_finished(c, cj);
        return DR_OK;
    }
    if (cj->j.state == DR_JOB_PENDING) {
        int rc = dr_sched_cancel(c->sched, &cj->j, now, why, err);
        if (rc != DR_OK)
            return rc;
        snprintf(cj->reason, sizeof cj->reason, "%s", why);
        ctld_job_finished(c, cj);
        return DR_OK;
    }
    /* running: stop every rank; the job ends when they have */
    if (!cj->kill_sent) {
        cj->kill_final = DR_JOB_CANCELLED;
        snprintf(cj->reason, sizeof cj->reason, "%s", why);
        ctld_kill_ranks(c, cj, why);
        ctld_stop_cancel(c, cj); /* its LAUNCHes still held: it ends here */
        ctld_job_dirty(c, cj);
    }
    return DR_OK;
}
