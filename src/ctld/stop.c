/* stop.c - --signal=[B:]SIG[@SECS] in the controller: the warning a job gets
 * before drover stops it, and the wait for the job to act on it.
 *
 * The agents send the signal by themselves before a time limit and at each
 * checkpoint round (src/agent/warn.c) and report it; here those reports
 * become one event per round per job, however many ranks sent them.  The
 * controller itself asks for the signal (SIGNAL) before a preemption and
 * when one of the job's nodes is drained.
 *
 * A preemption with a signal is graceful: the pass has already given the
 * victim's GPUs to the jobs it started (so no later pass can book them
 * twice), but their LAUNCHes are held (launch_wait) while the victim runs
 * on: it is signalled, kept out of the scheduler (withdrawn, so that it
 * cannot start a second copy elsewhere while the first still runs), and
 * killed when its lead - SECS, capped by PreemptGrace= - is over, unless it
 * ended first, or committed a checkpoint: the SIGNAL names the job's
 * checkpoint directory to its first node's agent, which reports a
 * checkpoint committed since (verified byte for byte), and the job is
 * stopped then (ctld_stop_ckpt) - its next run resumes from it.  Once all of its ranks have ended
 * it goes back in the queue (the next run is a new generation) and the held LAUNCHes go out.  If
 * its agent is lost, the wait ends once that agent's lease is surely over (it has stopped the rank
 * by itself then); an agent kills a generation it holds that is no longer current.
 *
 * A preemption without a signal (or with PreemptGrace=0) stops the job at
 * once, but the same way (ctld_stop_now): killed, withdrawn, its slots held
 * and the launches onto them held, until its agents have reported every
 * rank over.  Before, it went back in the queue with the KILL, so its next
 * run - or the preemptor, on its GPUs - started while the old run still
 * lived out its SIGTERM grace (issue 21: two runs of one job writing the
 * same files).  No rank is given up while its agent is connected; one whose
 * agent is gone is over once that agent's lease surely is (fence.c's rule:
 * the agent has stopped it by itself), and one an agent registers without
 * holding runs nowhere. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld/ctld.h"
#include "ctld/agent_link.h"
#include "ctld/ckpt.h"
#include "ctld/crashpoint.h"
#include "ctld/fence.h"
#include "ctld/holds.h"
#include "ctld/kill.h"
#include "ctld/launch.h"
#include "ctld/notes.h"
#include "ctld/outbox.h"
#include "ctld/restart.h"
#include "ctld/settle.h"
#include "ctld/stop.h"
#include "ctld/turn.h"
#include "drover/jobspec.h"

/* Preempted jobs stopping, and the launches waiting for their GPUs. */
struct ctld_stops {
    ctld_job_t **stops;
    size_t nstops, stops_cap;
    ctld_job_t **waits;
    size_t nwaits, waits_cap;
};

static const char *sig_text(int sig, char *buf, size_t n)
{
    const char *name = dr_signal_name(sig);
    if (name)
        return name;
    snprintf(buf, n, "%d", sig);
    return buf;
}

static dr_time_t preempt_grace(const dr_ctld_t *c)
{
    return c->cl.preempt_grace_set ? c->cl.preempt_grace : DR_PREEMPT_GRACE_DEFAULT;
}

static bool ranks_over(const ctld_job_t *cj)
{
    for (uint32_t r = 0; r < cj->nranks; r++)
        if (!cj->ranks[r].ended)
            return false;
    return true;
}

/* May rank r of the stopping generation still run?  Yes until its agent
 * reports its end, or - its agent gone - until that agent's lease is
 * surely over (measured as fence.c does, on CLOCK_BOOTTIME). */
static bool rank_may_run(const dr_ctld_t *c, const ctld_job_t *cj, uint32_t r, int64_t boot)
{
    const ctld_rank_t *k = &cj->ranks[r];
    if (k->ended || k->node >= c->cl.nnodes)
        return false;
    const ctld_node_t *n = &c->nodes[k->node];
    if ((n->agent && n->agent->registered) || !n->gone_boot)
        return true;
    return boot - n->gone_boot <= ctld_requeue_after(c);
}

static bool stop_over(const dr_ctld_t *c, const ctld_job_t *cj)
{
    int64_t boot = ctld_boot_ns();
    for (uint32_t r = 0; r < cj->nranks; r++)
        if (rank_may_run(c, cj, r, boot))
            return false;
    return true;
}

/* A job preempted while its launch was held (it waited for another stopping
 * job): the LAUNCHes never went out, so those ranks end here - no agent
 * would ever report them. */
static void end_held_launches(dr_ctld_t *c, ctld_job_t *cj, bool report)
{
    if (!cj->launch_wait)
        return;
    cj->launch_wait = false;
    for (size_t i = 0; i < c->stops->nwaits; i++)
        if (c->stops->waits[i] == cj) {
            c->stops->waits[i] = c->stops->waits[--c->stops->nwaits];
            break;
        }
    for (uint32_t r = 0; r < cj->nown; r++) {
        if (cj->ranks[r].started || cj->ranks[r].ended)
            continue;
        if (report) {
            dr_msg_job_state_t js = {.exit_code = -1, .why = DR_END_KILLED, .detail = ""};
            ctld_rank_ended(c, cj, r, &js);
        } else {
            cj->ranks[r].ended = true;
        }
    }
}

/* One SIGNAL per node with a live rank of the generation.  A preemption's
 * to the first rank's node names the job's checkpoint directory: that
 * agent reports a checkpoint committed after it (ctld_stop_ckpt). */
static void send_signal(dr_ctld_t *c, ctld_job_t *cj, int sig, uint32_t why)
{
    char dir[1200];
    bool ckpt = why == DR_SIG_PREEMPT && ctld_ckpt_dir(c, cj, dir, sizeof dir);
    for (uint32_t r = 0; r < cj->nranks; r++) {
        bool sent = false;
        for (uint32_t q = 0; q < r && !sent; q++)
            sent = cj->ranks[q].node == cj->ranks[r].node && !cj->ranks[q].ended;
        if (cj->ranks[r].ended || sent)
            continue;
        dr_msg_signal_t m = {.job = cj->j.id, .gen = cj->gen, .signal = sig, .why = why};
        if (ckpt && cj->ranks[r].node == cj->ranks[0].node) {
            m.ckpt_dir = dir;
            m.uid = cj->uid;
            m.gid = cj->gid;
        }
        char *json = NULL;
        size_t len;
        if (dr_msg_signal_encode(&m, &json, &len, NULL) == DR_OK)
            ctld_out_frame(c, (int)cj->ranks[r].node, DR_MSG_SIGNAL, json);
    }
}

bool ctld_signal_job(dr_ctld_t *c, ctld_job_t *cj, uint32_t why, const char *detail)
{
    const dr_jobspec_t *sp = ctld_job_spec(cj);
    if (!sp->signal_num || ranks_over(cj))
        return false;
    send_signal(c, cj, sp->signal_num, why);
    char nb[16];
    ctld_note(c, cj->j.id, "signal", "signal %s sent: %s", sig_text(sp->signal_num, nb, sizeof nb),
              detail);
    return true;
}

bool ctld_stop_gracefully(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now)
{
    const dr_jobspec_t *sp = ctld_job_spec(cj);
    dr_time_t lead = (dr_time_t)sp->signal_secs * DR_NSEC_PER_SEC, cap = preempt_grace(c);
    if (lead > cap)
        lead = cap;
    if (!sp->signal_num || lead <= 0 || !cj->in_sched || cj->j.state != DR_JOB_PENDING ||
        !cj->run_alloc.nslots || ranks_over(cj))
        return false;
    if (DR_PUSH(c->stops->stops, c->stops->nstops, c->stops->stops_cap, cj) != 0)
        return false;
    now = ctld_now(c);
    char nb[16], why[128];
    const char *sig = sig_text(sp->signal_num, nb, sizeof nb);
    double secs = dr_time_to_s(lead);
    snprintf(why, sizeof why, "preempted: stopping (signal %s, stopped in %.0f s)", sig, secs);
    dr_err_t err = {0};
    if (dr_sched_withdraw(c->sched, &cj->j, now, why, &err) != DR_OK) {
        c->stops->nstops--;
        ctld_log("job %llu: stopped at once: %s", (unsigned long long)cj->j.id, err.msg);
        return false;
    }
    cj->in_sched = false;
    cj->stopping = true;
    cj->stop_at = now + lead;
    end_held_launches(c, cj, false);
    char detail[96];
    snprintf(detail, sizeof detail, "preempted; stopped in %.0f s unless it ends first", secs);
    ctld_signal_job(c, cj, DR_SIG_PREEMPT, detail);
    snprintf(cj->reason, sizeof cj->reason, "%s", why);
    ctld_job_dirty(c, cj);
    return true;
}

bool ctld_stop_now(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now)
{
    if (!cj->in_sched || cj->j.state != DR_JOB_PENDING || !cj->run_alloc.nslots || ranks_over(cj))
        return false;
    if (DR_PUSH(c->stops->stops, c->stops->nstops, c->stops->stops_cap, cj) != 0)
        return false;
    now = ctld_now(c);
    const char *why = "preempted: stopping (requeued once every rank has ended)";
    dr_err_t err = {0};
    if (dr_sched_withdraw(c->sched, &cj->j, now, why, &err) != DR_OK) {
        c->stops->nstops--;
        ctld_log("job %llu: requeued at once: %s", (unsigned long long)cj->j.id, err.msg);
        return false;
    }
    cj->in_sched = false;
    cj->stopping = true;
    cj->stop_at = 0; /* the KILL goes now */
    end_held_launches(c, cj, false);
    ctld_send_kill(c, cj, 0, SIGTERM, "preempted");
    ctld_note(c, cj->j.id, "signal",
              "preempted: its ranks are stopped; it is requeued, and its GPUs go to other jobs, "
              "once every rank has ended");
    snprintf(cj->reason, sizeof cj->reason, "%s", why);
    ctld_job_dirty(c, cj);
    return true;
}

void ctld_stop_unstart(dr_ctld_t *c, ctld_job_t *cj)
{
    if (!cj->in_sched || cj->j.state != DR_JOB_STARTING || ranks_over(cj))
        return;
    dr_err_t err = {0};
    if (dr_sched_job_requeue(c->sched, &cj->j, ctld_now(c),
                             "moved: it starts again once its last run has stopped", &err) != DR_OK)
        ctld_log("job %llu: %s", (unsigned long long)cj->j.id, err.msg);
}

void ctld_stop_not_held(dr_ctld_t *c, ctld_job_t *cj, uint32_t r)
{
    if (!cj->stopping || r >= cj->nranks || cj->ranks[r].ended)
        return;
    cj->ranks[r].ended = true;
    ctld_turn_schedule(c);
}

/* Do two allocations share a GPU (or a node, where either holds no GPU:
 * its CPUs and memory)? */
static bool overlaps(const dr_alloc_t *a, const dr_alloc_t *b)
{
    for (uint32_t i = 0; i < a->nslots; i++)
        for (uint32_t k = 0; k < b->nslots; k++) {
            const dr_slot_t *x = &a->slots[i], *y = &b->slots[k];
            if (x->node == y->node &&
                (x->gpu == y->gpu || x->gpu == DR_NO_GPU || y->gpu == DR_NO_GPU))
                return true;
        }
    return false;
}

static const ctld_job_t *blocker(const dr_ctld_t *c, const ctld_job_t *cj)
{
    for (size_t i = 0; i < c->stops->nstops; i++)
        if (c->stops->stops[i]->stopping && overlaps(&cj->j.alloc, &c->stops->stops[i]->run_alloc))
            return c->stops->stops[i];
    return NULL;
}

bool ctld_stop_blocks(dr_ctld_t *c, ctld_job_t *cj)
{
    cj->launch_wait = false;
    if (!c->stops->nstops || !blocker(c, cj))
        return false;
    for (size_t i = 0; i < c->stops->nwaits; i++)
        if (c->stops->waits[i] == cj) {
            cj->launch_wait = true;
            return true;
        }
    if (DR_PUSH(c->stops->waits, c->stops->nwaits, c->stops->waits_cap, cj) != 0)
        return false; /* out of memory: it launches now, as before */
    cj->launch_wait = true;
    return true;
}

/* The stopping job's ranks are over (or will never report): it goes back
 * in the queue, unless it was cancelled or held meanwhile. */
static void stop_finish(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now)
{
    cj->stopping = false;
    cj->stop_at = 0;
    ctld_run_over(c, cj, now);
    if (!ctld_job_terminal(cj) && cj->j.state == DR_JOB_PENDING && !cj->in_sched) {
        if (cj->hold) {
            ctld_hold_reason(cj);
        } else {
            dr_err_t err = {0};
            if (dr_sched_restore(c->sched, &cj->j, now, &err) != DR_OK) {
                ctld_log("job %llu: cannot requeue it: %s", (unsigned long long)cj->j.id, err.msg);
            } else {
                cj->in_sched = true;
                snprintf(cj->reason, sizeof cj->reason, "preempted");
            }
        }
    }
    ctld_job_dirty(c, cj);
    ctld_want_pass(c);
}

static void launch_held(dr_ctld_t *c, ctld_job_t *cj)
{
    cj->launch_wait = false;
    for (uint32_t r = 0; r < cj->nown; r++)
        if (!cj->ranks[r].started && !cj->ranks[r].ended && !ctld_rank_stopped(cj, r))
            ctld_launch_rank(c, cj, r);
    snprintf(cj->reason, sizeof cj->reason, "launching");
    ctld_job_dirty(c, cj);
}

void ctld_stops_turn(dr_ctld_t *c, dr_time_t now)
{
    if (!c->stops->nstops && !c->stops->nwaits)
        return;
    size_t keep = 0;
    for (size_t i = 0; i < c->stops->nstops; i++) {
        ctld_job_t *cj = c->stops->stops[i];
        if (!cj->stopping)
            continue;
        bool over = ranks_over(cj);
        if (!over && cj->stop_at && now >= cj->stop_at) {
            ctld_send_kill(c, cj, 0, SIGTERM, "preempted: its signal's lead is over");
            cj->stop_at = 0;
            ctld_job_dirty(c, cj);
        }
        if (over || stop_over(c, cj)) {
            if (!over)
                ctld_log("job %llu: the agents of its unreported ranks are gone and their "
                         "leases over; requeued",
                         (unsigned long long)cj->j.id);
            stop_finish(c, cj, now);
            continue;
        }
        c->stops->stops[keep++] = cj;
    }
    c->stops->nstops = keep;
    keep = 0;
    for (size_t i = 0; i < c->stops->nwaits; i++) {
        ctld_job_t *cj = c->stops->waits[i];
        if (!cj->launch_wait)
            continue;
        if (cj->j.state != DR_JOB_STARTING) { /* requeued or cancelled meanwhile */
            cj->launch_wait = false;
            continue;
        }
        if (blocker(c, cj) || ctld_restart_holds(c, cj)) {
            c->stops->waits[keep++] = cj;
            continue;
        }
        launch_held(c, cj);
    }
    c->stops->nwaits = keep;
}

bool ctld_stops_due(const dr_ctld_t *c, dr_time_t now)
{
    if (c->stops->nwaits) /* held launches: looked at again each tick (restart.c) */
        return true;
    for (size_t i = 0; i < c->stops->nstops; i++) {
        const ctld_job_t *cj = c->stops->stops[i];
        if (cj->stop_at && now >= cj->stop_at)
            return true;
        /* a rank whose agent is gone: its lease may be over by now */
        for (uint32_t r = 0; r < cj->nranks; r++) {
            const ctld_node_t *n =
                cj->ranks[r].node < c->cl.nnodes ? &c->nodes[cj->ranks[r].node] : NULL;
            if (!cj->ranks[r].ended && n && !(n->agent && n->agent->registered))
                return true;
        }
    }
    return false;
}

ctld_job_t *ctld_stop_rank(dr_ctld_t *c, int node, uint64_t job, uint32_t gen, uint32_t rank)
{
    ctld_job_t *cj = ctld_job_find(c, job);
    if (!cj || !cj->stopping || cj->gen != gen || rank >= cj->nranks ||
        cj->ranks[rank].node != (uint32_t)node)
        return NULL;
    return cj;
}

bool ctld_stop_reloaded(dr_ctld_t *c, ctld_job_t *cj)
{
    if (ranks_over(cj) ||
        DR_PUSH(c->stops->stops, c->stops->nstops, c->stops->stops_cap, cj) != 0) {
        cj->stopping = false;
        dr_alloc_free(&cj->run_alloc);
        return false;
    }
    /* no KILL can reach an agent before it registers: it goes out then
     * (ctld_kill_again); an agent that never comes back has stopped the
     * rank by its lease */
    cj->in_sched = false;
    cj->stop_at = 0;
    snprintf(cj->reason, sizeof cj->reason, "preempted: stopping (the controller restarted)");
    ctld_note(c, cj->j.id, "signal",
              "the controller restarted while the job was stopping after a preemption: stopped "
              "now, requeued once its ranks have ended");
    ctld_job_dirty(c, cj);
    return true;
}

void ctld_stop_reload_waits(dr_ctld_t *c)
{
    if (!c->stops->nstops)
        return;
    for (size_t i = 0; i < c->tab_cap; i++) {
        ctld_job_t *cj = c->tab[i];
        if (!cj || cj->array || cj->j.state != DR_JOB_STARTING)
            continue;
        bool unstarted = false;
        for (uint32_t r = 0; r < cj->nown; r++)
            unstarted |= !cj->ranks[r].started && !cj->ranks[r].ended;
        if (unstarted && ctld_stop_blocks(c, cj))
            snprintf(cj->reason, sizeof cj->reason, "waiting for a preempted job to stop");
    }
}

void ctld_stop_ckpt(dr_ctld_t *c, ctld_job_t *cj, int node, const dr_msg_ckpt_t *m)
{
    if (!cj->stopping || !cj->stop_at)
        return; /* already being stopped */
    dr_time_t now = ctld_now(c), lead_left = cj->stop_at - now;
    ctld_note(c, cj->j.id, "checkpoint",
              "on %s: checkpoint %s (seq %llu) committed after the preemption signal, verified: "
              "stopped now, %.1f s before its grace was over",
              c->cl.nodes[node].name, m->from, (unsigned long long)m->seq,
              lead_left > 0 ? dr_time_to_s(lead_left) : 0.0);
    snprintf(cj->ckpt_from, sizeof cj->ckpt_from, "%s", m->from);
    ctld_send_kill(c, cj, 0, SIGTERM, "preempted: its checkpoint is committed");
    cj->stop_at = 0;
    ctld_job_dirty(c, cj);
    CTLD_CRASH_POINT(c, "preempt-ckpt-before-commit"); /* the stop decided, not stored or sent */
}

void ctld_stop_cancel(dr_ctld_t *c, ctld_job_t *cj)
{
    if (cj->stopping && cj->stop_at) { /* no more waiting for it */
        ctld_send_kill(c, cj, 0, SIGTERM, "cancelled");
        cj->stop_at = 0;
    }
    end_held_launches(c, cj, true); /* its LAUNCHes were never sent: its ranks end here */
}

void ctld_drain_signal(dr_ctld_t *c, uint32_t node)
{
    char detail[128];
    snprintf(detail, sizeof detail, "node %s is being drained", c->cl.nodes[node].name);
    for (size_t i = 0; i < c->tab_cap; i++) {
        ctld_job_t *cj = c->tab[i];
        if (!cj || cj->array || ctld_job_terminal(cj) ||
            (cj->j.state != DR_JOB_RUNNING && cj->j.state != DR_JOB_STARTING) ||
            !ctld_job_spec(cj)->signal_num)
            continue;
        for (uint32_t k = 0; k < cj->nnodes; k++)
            if (cj->nodes[k] == node) {
                ctld_signal_job(c, cj, DR_SIG_DRAIN, detail);
                break;
            }
    }
}

void ctld_job_warned(dr_ctld_t *c, ctld_job_t *cj, const dr_msg_signal_t *m)
{
    const dr_jobspec_t *sp = ctld_job_spec(cj);
    char nb[16];
    const char *sig = sig_text(m->signal, nb, sizeof nb);
    if (m->why == DR_SIG_LIMIT) {
        if (cj->warn_limit)
            return;
        cj->warn_limit = true;
        ctld_note(c, cj->j.id, "signal", "signal %s sent: %u s before the time limit", sig,
                  (unsigned)sp->signal_secs);
    } else if (m->why == DR_SIG_CKPT && cj->j.ckpt_every > 0) {
        /* the round from the job's start (an agent's clock may be off by
         * less than half an interval) */
        dr_time_t every = cj->j.ckpt_every, ran = m->t_ns - cj->j.start;
        int64_t round = ran > 0 ? (ran + every / 2) / every : 1;
        if (round < 1)
            round = 1;
        if (round <= (int64_t)cj->warn_round)
            return;
        cj->warn_round = (uint32_t)round;
        int64_t s = every / DR_NSEC_PER_SEC;
        ctld_note(c, cj->j.id, "signal", "signal %s sent: checkpoint round %lld (every %lld %s)",
                  sig, (long long)round, (long long)(s % 60 == 0 && s ? s / 60 : s),
                  s % 60 == 0 && s ? "min" : "s");
    }
}

int ctld_stops_init(dr_ctld_t *c)
{
    c->stops = calloc(1, sizeof *c->stops);
    return c->stops ? DR_OK : DR_ENOMEM;
}

void ctld_stops_free(dr_ctld_t *c)
{
    if (c->stops) {
        free(c->stops->stops);
        free(c->stops->waits);
    }
    free(c->stops);
    c->stops = NULL;
}

int ctld_stop_wait_add(dr_ctld_t *c, ctld_job_t *cj)
{
    int rc = DR_PUSH(c->stops->waits, c->stops->nwaits, c->stops->waits_cap, cj);
    return rc != 0 ? DR_ENOMEM : DR_OK;
}
