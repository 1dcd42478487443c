/* settle.c - rank reports and settlement: a rank started, a rank ended,
 * and once every process of a run is over the job's end (or its next run):
 * charged, its port back, its parent and dependants told. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "ctld/ctld.h"
#include "ctld/arrays.h"
#include "ctld/classes.h"
#include "ctld/crashpoint.h"
#include "ctld/deps.h"
#include "ctld/fence.h"
#include "ctld/kill.h"
#include "ctld/launch_env.h"
#include "ctld/node_loss.h"
#include "ctld/notes.h"
#include "ctld/services.h"
#include "ctld/settle.h"
#include "ctld/steps.h"
#include "ctld/turn.h"

void ctld_job_finished(dr_ctld_t *c, ctld_job_t *cj)
{
    ctld_deps_recheck(c); /* afterok/afterany/afternotok/singleton may hold now */
    ctld_evict_later(c, cj);
    if (cj->parent)
        ctld_array_task_ended(c, cj);
    ctld_job_dirty(c, cj);
    ctld_want_pass(c);
}

/* The run is over: its MASTER_PORT may go to another job. */
static void release_port(dr_ctld_t *c, ctld_job_t *cj)
{
    if (cj->master_port && cj->nranks)
        ctld_port_give(c, cj->ranks[0].node, cj->master_port);
    cj->master_port = 0;
}

/* Charge the run that just ended. */
static void accrue(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now)
{
    if (cj->j.start > 0 && now > cj->j.start)
        cj->cost_usd += dr_time_to_s(now - cj->j.start) / 3600.0 * cj->got_gpus *
                        ctld_price_hr(c, cj->got_type);
}

void ctld_run_over(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now)
{
    accrue(c, cj, now);
    release_port(c, cj);
}

void ctld_rank_started(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank)
{
    if (rank >= cj->nranks || cj->ranks[rank].started)
        return;
    cj->ranks[rank].started = true;
    uint32_t n = 0;
    for (uint32_t r = 0; r < cj->nown; r++)
        n += cj->ranks[r].started;
    if (n == cj->nown && cj->j.state == DR_JOB_STARTING) {
        dr_err_t err = {0};
        if (dr_sched_job_running(c->sched, &cj->j, ctld_now(c), &err) != DR_OK)
            ctld_log("job %llu: %s", (unsigned long long)cj->j.id, err.msg);
        snprintf(cj->reason, sizeof cj->reason, "%s", "");
    }
    ctld_job_dirty(c, cj);
}

void ctld_rank_ended(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank, const dr_msg_job_state_t *m)
{
    if (rank >= cj->nranks || cj->ranks[rank].ended)
        return;
    ctld_rank_t *r = &cj->ranks[rank];
    r->ended = true;
    r->exit_code = m->exit_code;
    r->signal = m->signal;
    r->why = m->why;
    ctld_job_dirty(c, cj);
    if (r->step) {
        /* a step's task: its step (and srun) hear of it, the job goes on */
        ctld_step_task_ended(c, cj, rank);
        ctld_job_settle(c, cj);
        return;
    }
    if (m->why == DR_END_LEASE) {
        /* its agent was cut off past its lease and stopped it: the job has
         * lost a node; its other ranks stop, then it is requeued (or fails,
         * as --requeue says) in ctld_job_settle */
        const char *node = c->cl.nodes[r->node].name;
        ctld_log("job %llu: rank %u on %s was stopped by its agent (cut off from the controller "
                 "past its lease)",
                 (unsigned long long)cj->j.id, rank, node);
        if (!cj->lease_lost)
            ctld_note(c, cj->j.id, "lease", "rank %u on %s stopped by its agent: lease expired",
                      rank, node);
        cj->lease_lost = true;
        snprintf(cj->reason, sizeof cj->reason, "stopped on %s: its agent's lease expired", node);
        if (!cj->kill_sent)
            ctld_kill_ranks(c, cj, "another rank's node was cut off from the controller");
        ctld_job_settle(c, cj);
        return;
    }
    bool bad = m->why != DR_END_EXIT || m->exit_code != 0 || m->signal != 0;
    /* a flaky node fails the jobs it runs (NodeFailDrain=) */
    if (bad && m->why != DR_END_KILLED && m->why != DR_END_TIMEOUT && !cj->kill_sent)
        ctld_node_job_failed(c, r->node, cj->j.id);
    if (bad && !cj->has_exit) {
        cj->has_exit = true;
        cj->exit_code = m->exit_code;
        cj->signal = m->signal;
        const char *node = c->cl.nodes[r->node].name;
        if (m->why == DR_END_LAUNCH)
            snprintf(cj->reason, sizeof cj->reason, "launch failed on %s: %s", node,
                     m->detail ? m->detail : "");
        else if (m->why == DR_END_TIMEOUT)
            snprintf(cj->reason, sizeof cj->reason, "time limit reached on %s", node);
        else if (m->why == DR_END_EXIT && m->signal)
            snprintf(cj->reason, sizeof cj->reason, "killed by signal %d on %s", m->signal, node);
        else if (m->why == DR_END_EXIT)
            snprintf(cj->reason, sizeof cj->reason, "exit code %d on %s", m->exit_code, node);
    }
    /* one rank failing fails the gang: stop the others (and every step) */
    if (bad && !cj->kill_sent && m->why != DR_END_KILLED) {
        cj->kill_final = m->why == DR_END_TIMEOUT ? DR_JOB_TIMEOUT : DR_JOB_FAILED;
        ctld_kill_ranks(c, cj, "another rank of the job ended");
    }
    ctld_job_settle(c, cj);
}

void ctld_job_settle(dr_ctld_t *c, ctld_job_t *cj)
{
    if (ctld_job_terminal(cj) || cj->j.state == DR_JOB_PENDING)
        return;
    uint32_t ended = 0, own = 0;
    for (uint32_t i = 0; i < cj->nranks; i++) {
        ended += cj->ranks[i].ended;
        own += i < cj->nown && cj->ranks[i].ended;
    }
    if (own < cj->nown)
        return;
    if (ended < cj->nranks) {
        /* the batch script is over: so are the steps it left running */
        if (!cj->kill_sent && !cj->reap_sent) {
            ctld_send_kill(c, cj, 0, SIGTERM, "the job's batch script ended");
            cj->reap_sent = true;
            ctld_job_dirty(c, cj);
        }
        return;
    }
    dr_time_t now = ctld_now(c);
    dr_err_t err = {0};
    if (cj->lease_lost && cj->kill_final != DR_JOB_CANCELLED && ctld_job_requeues(c, cj)) {
        /* every process of this run has stopped: it runs again elsewhere */
        if (cj->j.state == DR_JOB_STARTING)
            dr_sched_job_running(c->sched, &cj->j, now, &err);
        ctld_run_over(c, cj, now);
        char why[sizeof cj->reason];
        snprintf(why, sizeof why, "requeued: %.*s", (int)sizeof why - 11, cj->reason);
        if (dr_sched_job_requeue(c->sched, &cj->j, now, why, &err) != DR_OK)
            ctld_log("job %llu: %s", (unsigned long long)cj->j.id, err.msg);
        memcpy(cj->reason, why, sizeof why);
        cj->kill_sent = false;
        cj->lease_lost = false;
        if (cj->parent)
            ctld_service_run_requeued(c, cj);
        ctld_job_dirty(c, cj);
        ctld_want_pass(c);
        CTLD_CRASH_POINT(c, "requeue-before-commit");
        ctld_crash_after_commit("requeue-after-commit");
        return;
    }
    /* a lease-stopped run of a job that does not requeue fails */
    bool lost = cj->lease_lost && cj->kill_final != DR_JOB_CANCELLED;
    dr_job_state_t fin = DR_JOB_COMPLETED;
    if (cj->kill_sent && !lost)
        fin = (dr_job_state_t)cj->kill_final;
    else if (cj->has_exit || lost)
        fin = DR_JOB_FAILED;
    for (uint32_t i = 0; i < cj->nown && fin != DR_JOB_CANCELLED; i++)
        if (cj->ranks[i].why == DR_END_TIMEOUT)
            fin = DR_JOB_TIMEOUT;
    if (!cj->has_exit) {
        cj->has_exit = true;
        cj->exit_code = fin == DR_JOB_COMPLETED ? 0 : -1;
        cj->signal = 0;
    }
    if (fin == DR_JOB_COMPLETED)
        snprintf(cj->reason, sizeof cj->reason, "%s", "");
    if (cj->j.state == DR_JOB_STARTING && fin != DR_JOB_CANCELLED)
        dr_sched_job_running(c->sched, &cj->j, now, &err);
    if (fin == DR_JOB_COMPLETED)
        ctld_classes_observe(c, cj, now); /* its class learns from its run time */
    ctld_run_over(c, cj, now);
    if (dr_sched_job_ended(c->sched, &cj->j, fin, now, cj->reason, &err) != DR_OK)
        ctld_log("job %llu: %s", (unsigned long long)cj->j.id, err.msg);
    ctld_job_dirty(c, cj);
    ctld_job_finished(c, cj);
}
