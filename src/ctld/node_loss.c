/* node_loss.c - what a node's loss does to the jobs on it (their other
 * ranks stopped; requeued, or failed per --requeue) and what its agent's
 * return does. */

#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/agent_link.h"
#include "ctld/crashpoint.h"
#include "ctld/kill.h"
#include "ctld/node_loss.h"
#include "ctld/notes.h"
#include "ctld/services.h"
#include "ctld/settle.h"
#include "ctld/turn.h"

bool ctld_job_holds_node(const ctld_job_t *cj, uint32_t node)
{
    for (uint32_t i = 0; i < cj->nnodes; i++)
        if (cj->nodes[i] == node)
            return true;
    for (uint32_t r = 0; r < cj->nranks; r++)
        if (cj->ranks[r].node == node)
            return true;
    return false;
}

/* Jobs holding node (the running set is small next to the job table). */
static void each_job_on(dr_ctld_t *c, uint32_t node, void (*fn)(dr_ctld_t *, ctld_job_t *, void *),
                        void *ud)
{
    size_t n = 0, cap = 0;
    ctld_job_t **hit = NULL;
    for (size_t i = 0; i < c->tab_cap; i++) {
        ctld_job_t *cj = c->tab[i];
        if (!cj || cj->array || ctld_job_terminal(cj) || cj->j.state == DR_JOB_PENDING)
            continue;
        if (ctld_job_holds_node(cj, node) && dr_grow((void **)&hit, &cap, n + 1, sizeof *hit) == 0)
            hit[n++] = cj;
    }
    for (size_t i = 0; i < n; i++)
        fn(c, hit[i], ud);
    free(hit);
}

static void stop_other_ranks(dr_ctld_t *c, ctld_job_t *cj, void *ud)
{
    const char *why = ud;
    ctld_kill_ranks(c, cj, why);
    ctld_job_dirty(c, cj);
}

bool ctld_job_requeues(const dr_ctld_t *c, const ctld_job_t *cj)
{
    const dr_jobspec_t *sp = ctld_job_spec(cj);
    if (sp->requeue >= 0)
        return sp->requeue != 0;
    if (cj->j.kind == DR_KIND_TRAIN || cj->j.kind == DR_KIND_SERVE)
        return true; /* a training job resumes from its checkpoint; a replica must run */
    return c->cl.requeue_default >= 0; /* batch and array tasks: RequeueDefault= (yes) */
}

/* Was the job being cancelled when its node was lost?  It ends there
 * (cancelled), it is not requeued. */
static bool cancelling(const ctld_job_t *cj)
{
    return cj->kill_sent && cj->kill_final == DR_JOB_CANCELLED;
}

/* A job that does not requeue ends with its lost node: failed (or
 * cancelled, when a cancel was stopping it). */
static void fail_lost(dr_ctld_t *c, ctld_job_t *cj, uint32_t node)
{
    dr_time_t now = ctld_now(c);
    dr_err_t err = {0};
    bool cancel = cancelling(cj);
    if (cj->j.state == DR_JOB_STARTING)
        dr_sched_job_running(c->sched, &cj->j, now, &err);
    ctld_run_over(c, cj, now);
    if (!cancel)
        snprintf(cj->reason, sizeof cj->reason, "node %s lost (not requeued: %s)",
                 c->cl.nodes[node].name,
                 ctld_job_spec(cj)->requeue == 0 ? "--no-requeue" : "RequeueDefault=NO");
    cj->has_exit = true;
    cj->exit_code = -1;
    cj->signal = 0;
    if (dr_sched_job_ended(c->sched, &cj->j, cancel ? DR_JOB_CANCELLED : DR_JOB_FAILED, now,
                           cj->reason, &err) != DR_OK)
        ctld_log("job %llu: %s", (unsigned long long)cj->j.id, err.msg);
    ctld_job_finished(c, cj);
}

/* cj was requeued because `lost` (a node index) was lost */
static void after_requeue(dr_ctld_t *c, ctld_job_t *cj, uint32_t lost)
{
    cj->lease_lost = false;
    if (cj->j.state == DR_JOB_PENDING) {
        ctld_run_over(c, cj, c->last_now);
        cj->kill_sent = false;
        snprintf(cj->reason, sizeof cj->reason, "requeued: node %s lost", c->cl.nodes[lost].name);
        if (cj->parent)
            ctld_service_run_requeued(c, cj);
    }
    ctld_job_dirty(c, cj);
}

void ctld_node_lost(dr_ctld_t *c, uint32_t node, const char *why)
{
    ctld_node_t *n = &c->nodes[node];
    snprintf(n->reason, sizeof n->reason, "%s", why);
    if (c->cl.nodes[node].state == DR_NODE_DOWN)
        return;
    ctld_log("node %s down: %s", c->cl.nodes[node].name, why);
    char from[16];
    snprintf(from, sizeof from, "%s", ctld_node_state(c, node));
    /* every rank of an affected gang on the surviving nodes stops first */
    each_job_on(c, node, stop_other_ranks, (void *)why);
    /* remember which jobs were there: the scheduler requeues them; those
     * that do not requeue fail first */
    size_t cap = 0, cnt = 0, fcap = 0, fcnt = 0;
    ctld_job_t **was = NULL, **fail = NULL;
    for (size_t i = 0; i < c->tab_cap; i++) {
        ctld_job_t *cj = c->tab[i];
        if (!cj || cj->array || ctld_job_terminal(cj) || cj->j.state == DR_JOB_PENDING ||
            !ctld_job_holds_node(cj, node))
            continue;
        if (!ctld_job_requeues(c, cj) || cancelling(cj)) {
            if (dr_grow((void **)&fail, &fcap, fcnt + 1, sizeof *fail) == 0)
                fail[fcnt++] = cj;
        } else if (dr_grow((void **)&was, &cap, cnt + 1, sizeof *was) == 0) {
            was[cnt++] = cj;
        }
    }
    /* after the walk: an array task's end may add tasks to the table */
    for (size_t i = 0; i < fcnt; i++)
        fail_lost(c, fail[i], node);
    free(fail);
    dr_err_t err = {0};
    if (dr_sched_node_set_state(c->sched, node, DR_NODE_DOWN, ctld_now(c), &err) != DR_OK)
        ctld_log("node %s: %s", c->cl.nodes[node].name, err.msg);
    ctld_node_note(c, node, "down", from, "%s", why);
    for (size_t i = 0; i < cnt; i++)
        after_requeue(c, was[i], node);
    free(was);
    if (cnt) {
        CTLD_CRASH_POINT(c, "requeue-before-commit");    /* decided, not stored */
        ctld_crash_after_commit("requeue-after-commit"); /* stored, nothing sent */
    }
    ctld_want_pass(c);
}

void ctld_node_connected(dr_ctld_t *c, uint32_t node)
{
    ctld_node_t *n = &c->nodes[node];
    /* its state before, as the API showed it while no agent was there */
    const dr_node_t *cn = &c->cl.nodes[node];
    const char *from = cn->state == DR_NODE_DRAIN && !n->admin_drain
                           ? (n->registered ? "unreachable" : "unknown")
                           : dr_node_state_name((dr_node_state_t)cn->state);
    n->registered = true;
    n->lost_at = 0;
    n->gone_boot = 0;
    n->fencing = false;
    dr_node_state_t want = n->admin_drain ? DR_NODE_DRAIN : DR_NODE_UP;
    if (c->cl.nodes[node].state != want) {
        dr_err_t err = {0};
        if (dr_sched_node_set_state(c->sched, node, want, ctld_now(c), &err) != DR_OK)
            ctld_log("node %s: %s", c->cl.nodes[node].name, err.msg);
    }
    if (!n->admin_drain)
        n->reason[0] = '\0';
    ctld_node_note(c, node, "register", from, "agent %s registered (%u GPUs, %s)",
                   n->agent ? n->agent->addr : "?", n->disc_gpus, n->source);
    ctld_want_pass(c);
}
