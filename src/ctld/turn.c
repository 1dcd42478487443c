/* turn.c - the controller's turn.
 *
 * Facts arrive from the edges (a submit, a cancel, an agent's report) and
 * change memory at once; each marks the job dirty and asks for a turn.  A
 * turn runs after the callbacks of one loop iteration: it feeds arrays,
 * runs at most one scheduling pass (on events, never more often than
 * --min-pass-interval; a timer covers the rest), writes every dirty job and
 * every new event in one transaction, and only after COMMIT sends the
 * replies and the agents' frames it queued.  So many requests arriving
 * together share one fsync (group commit), and nothing is acknowledged or
 * launched before it is durable.  The pass (dr_sched_pass) runs here only;
 * the modules that own a fact change the scheduler's view of it themselves
 * (holds, stops, node states, fair-share usage). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "ctld/ctld.h"
#include "ctld/accounts.h"
#include "ctld/arrays.h"
#include "ctld/classes.h"
#include "ctld/crashpoint.h"
#include "ctld/deps.h"
#include "ctld/events.h"
#include "ctld/fence.h"
#include "ctld/kill.h"
#include "ctld/launch.h"
#include "ctld/lb.h"
#include "ctld/metrics.h"
#include "ctld/notes.h"
#include "ctld/outbox.h"
#include "ctld/seq.h"
#include "ctld/services.h"
#include "ctld/settle.h"
#include "ctld/stats.h"
#include "ctld/stop.h"
#include "ctld/store.h"
#include "ctld/submit.h"
#include "ctld/turn.h"

struct ctld_turn {
    struct event *ev;           /* the turn itself: active after this loop's callbacks */
    struct event *tick;         /* once a second */
    struct event *pass_timer;   /* the next pass allowed by --min-pass-interval; retries */
    struct event *wake_timer;   /* the time the policy asked to be woken at */
    struct event *commit_timer; /* a deferred commit of agents' reports */
    bool commit_due;            /* the deferred commit's time has come */
    bool scheduled, pass_wanted;
    dr_time_t last_pass;
    /* terminal jobs that leave memory once written and a pass has seen them
     * (evict walks these, not the whole table) */
    ctld_job_t **evictq;
    size_t nevictq, evictq_cap;
    /* pending jobs whose reason the last pass's policy wrote (it keeps them
     * waiting on purpose: dr_sched_decide_wait), by id */
    uint64_t *noted;
    size_t nnoted, noted_cap;
};

/* The policy's reasons for the jobs it keeps waiting; a job it no longer
 * notes gets back the plain "waiting for N GPUs". */
static void apply_waits(dr_ctld_t *c, const dr_pass_result_t *r)
{
    struct ctld_turn *t = c->turn;
    size_t nold = t->nnoted;
    for (size_t i = 0; i < nold; i++) {
        ctld_job_t *cj = ctld_job_find(c, t->noted[i]);
        if (cj)
            cj->wait_noted = false;
    }
    size_t keep = nold; /* the new list goes after the old one, then moves down */
    for (size_t i = 0; i < r->nwaits; i++) {
        ctld_job_t *cj = ctld_of(r->waits[i].job);
        if (cj->j.state != DR_JOB_PENDING || cj->hold)
            continue;
        snprintf(cj->reason, sizeof cj->reason, "%s", r->waits[i].why);
        if (!cj->wait_noted &&
            dr_grow((void **)&t->noted, &t->noted_cap, keep + 1, sizeof *t->noted) == 0) {
            t->noted[keep++] = cj->j.id;
            cj->wait_noted = true;
        }
    }
    for (size_t i = 0; i < nold; i++) {
        ctld_job_t *cj = ctld_job_find(c, t->noted[i]);
        if (cj && !cj->wait_noted && cj->j.state == DR_JOB_PENDING && !cj->hold)
            ctld_pending_reason(c, cj);
    }
    if (keep > nold) /* (no list yet: nothing to move) */
        memmove(t->noted, t->noted + nold, (keep - nold) * sizeof *t->noted);
    t->nnoted = keep - nold;
}

static void run_pass(dr_ctld_t *c, dr_time_t now)
{
    dr_pass_result_t r = {0};
    dr_err_t err = {0};
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (dr_sched_pass(c->sched, now, &r, &err) != DR_OK)
        ctld_log("scheduling pass: %s", err.msg);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    c->st.pass_s_total += secs;
    c->st.passes++;
    ctld_metrics_pass(c, secs);
    c->turn->last_pass = now;
    for (size_t i = 0; i < r.npreempted; i++) {
        ctld_job_t *cj = ctld_of(r.preempted[i]);
        ctld_stop_unstart(c, cj); /* moved to other GPUs: not before its old run stops */
        if (ctld_stop_gracefully(c, cj, now))
            continue; /* signalled; stopped after its lead (stop.c) */
        if (ctld_stop_now(c, cj, now))
            continue; /* killed; requeued once its agents report every rank over (stop.c) */
        ctld_run_over(c, cj, now); /* out of memory only: as before */
        ctld_kill_ranks(c, cj, "preempted");
        snprintf(cj->reason, sizeof cj->reason, "preempted");
        ctld_job_dirty(c, cj);
    }
    for (size_t i = 0; i < r.nstarted; i++) {
        if (ctld_of(r.started[i])->stopping)
            continue; /* preempted and moved by this pass: requeued once stopped (stop.c) */
        ctld_stop_blocks(c, ctld_of(r.started[i])); /* on a stopping job's GPUs: wait */
        ctld_launch_job(c, ctld_of(r.started[i]));
        ctld_metrics_started(c, ctld_of(r.started[i]), now);
    }
    apply_waits(c, &r);
    if (r.wake_at != DR_TIME_NEVER) {
        /* a wake-up already due comes after the minimum interval (no busy loop) */
        dr_time_t d = r.wake_at > now ? r.wake_at - now : c->o.min_pass_interval;
        struct timeval tv = {(time_t)(d / DR_NSEC_PER_SEC),
                             (suseconds_t)(d % DR_NSEC_PER_SEC / 1000)};
        evtimer_add(c->turn->wake_timer, &tv); /* the policy's own timer (aging) */
    }
    dr_pass_result_free(&r);
}

static int write_turn(dr_ctld_t *c, dr_err_t *err)
{
    int rc = ctld_store_begin(c, err);
    if (rc != DR_OK)
        return rc;
    for (size_t i = 0; i < c->ndirty && rc == DR_OK; i++)
        if (c->dirty[i]->dirty)
            rc = ctld_store_put_job(c, c->dirty[i], err);
    const dr_eventlog_t *log = dr_sched_log(c->sched);
    for (size_t i = c->ev_flushed; i < log->n && rc == DR_OK; i++)
        rc = ctld_store_put_event(c, &log->ev[i], dr_eventlog_detail(log, &log->ev[i]), err);
    if (rc == DR_OK)
        rc = ctld_notes_write(c, err);
    for (size_t i = 0; c->drains_dirty && i < c->cl.nnodes && rc == DR_OK; i++)
        if (c->nodes[i].drain_dirty)
            rc = ctld_store_put_drain(c, c->cl.nodes[i].name, c->nodes[i].admin_drain,
                                      c->nodes[i].reason, c->nodes[i].auto_drain, err);
    if (rc == DR_OK)
        rc = ctld_store_put_meta(c, "next_id", c->next_id, err);
    if (rc == DR_OK)
        rc = ctld_share_save(c, ctld_now(c), err);
    if (rc == DR_OK)
        rc = ctld_classes_save(c, err);
    /* the ids this commit acknowledges are reserved in droverd.seq first */
    if (rc == DR_OK)
        rc = ctld_seq_reserve(c, err);
    if (rc == DR_OK)
        rc = ctld_store_commit(c, err);
    if (rc != DR_OK)
        ctld_store_rollback(c);
    return rc;
}

/* A submit whose commit failed is taken back: it was never acknowledged. */
static void undo_submit(dr_ctld_t *c, uint64_t job)
{
    ctld_job_t *cj = ctld_job_find(c, job);
    if (!cj)
        return;
    /* listed for eviction first: a job never acknowledged is not counted
     * as ended (metrics.c) */
    ctld_evict_later(c, cj);
    /* a pass of the same turn may have started it: its launch is dropped
     * (ctld_out_flush) and its resources go back */
    if (cj->in_sched && !ctld_job_terminal(cj))
        dr_sched_cancel(c->sched, &cj->j, c->last_now, "not committed", NULL);
    cj->dirty = false;
    cj->j.state = DR_JOB_CANCELLED;
    snprintf(cj->reason, sizeof cj->reason, "not committed");
}

void ctld_evict_later(dr_ctld_t *c, ctld_job_t *cj)
{
    cj->evict_after = c->st.passes;
    if (!cj->evict_listed && ctld_job_terminal(cj))
        ctld_metrics_ended(c, cj); /* once: it is listed from now on */
    if (cj->evict_listed || dr_grow((void **)&c->turn->evictq, &c->turn->evictq_cap,
                                    c->turn->nevictq + 1, sizeof *c->turn->evictq) != 0)
        return; /* out of memory: it stays in memory, nothing is lost */
    c->turn->evictq[c->turn->nevictq++] = cj;
    cj->evict_listed = true;
}

/* Free the terminal jobs the store has and a pass has seen (sched.h: the
 * core keeps no pointer to a job past the pass that lists it as ended).
 * Only the queued ones are looked at: a turn costs what ended, not what
 * is in memory. */
static void evict(dr_ctld_t *c)
{
    /* tasks before parents: a task points at its parent */
    for (int round = 0; round < 2; round++) {
        size_t keep = 0;
        for (size_t i = 0; i < c->turn->nevictq; i++) {
            ctld_job_t *cj = c->turn->evictq[i];
            bool due = !cj->dirty && ctld_job_terminal(cj) && c->st.passes > cj->evict_after &&
                       (round == 0) == (cj->array == NULL) && !cj->stopping && !cj->launch_wait;
            if (!due) {
                c->turn->evictq[keep++] = cj;
                continue;
            }
            ctld_job_remove(c, cj);
            ctld_job_free(cj);
        }
        c->turn->nevictq = keep;
    }
}

/* Must this turn commit now?  A client's reply and a message to an agent
 * (a launch, a kill) wait for the commit (durability before acknowledgement),
 * so they cannot wait longer.  What agents reported alone (a rank started or
 * ended: only ACKs go back) may: the agent keeps an ended rank and re-reports
 * it until the ACK, and a start is reconciled from the agent's report after
 * a restart, so nothing acknowledged rests on it.  Such a turn defers its
 * commit to the next pass (if one is waiting for --min-pass-interval) or to
 * the commit timer, one interval away: on a stream of short jobs the end
 * reports and the launches they free the GPUs for then share one commit
 * instead of one each (fdatasync dominates a turn). */
static bool commit_urgent(const dr_ctld_t *c)
{
    return c->turn->commit_due || ctld_out_urgent(c);
}

static void on_commit_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    dr_ctld_t *c = arg;
    c->turn->commit_due = true;
    ctld_turn_schedule(c);
}

static void turn(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    dr_ctld_t *c = arg;
    c->turn->scheduled = false;
    c->st.turns++;
    dr_time_t now = ctld_now(c);
    ctld_deps_turn(c);
    ctld_stops_turn(c, now);
    ctld_arrays_feed(c, now);
    now = ctld_now(c); /* after the feed's submits: the log is time-ordered */
    if (c->turn->pass_wanted) {
        if (now >= c->turn->last_pass + c->o.min_pass_interval) {
            c->turn->pass_wanted = false;
            run_pass(c, now);
        } else if (!evtimer_pending(c->turn->pass_timer, NULL)) {
            dr_time_t d = c->turn->last_pass + c->o.min_pass_interval - now;
            struct timeval tv = {(time_t)(d / DR_NSEC_PER_SEC),
                                 (suseconds_t)(d % DR_NSEC_PER_SEC / 1000)};
            evtimer_add(c->turn->pass_timer, &tv);
        }
    }
    const dr_eventlog_t *log = dr_sched_log(c->sched);
    if (!c->ndirty && log->n == c->ev_flushed && !ctld_out_pending(c) && !ctld_notes_pending(c) &&
        !c->drains_dirty)
        return;
    if (!commit_urgent(c)) {
        bool pass_soon = c->turn->pass_wanted && evtimer_pending(c->turn->pass_timer, NULL);
        if (!pass_soon && !evtimer_pending(c->turn->commit_timer, NULL)) {
            dr_time_t d = c->o.min_pass_interval;
            struct timeval tv = {(time_t)(d / DR_NSEC_PER_SEC),
                                 (suseconds_t)(d % DR_NSEC_PER_SEC / 1000)};
            evtimer_add(c->turn->commit_timer, &tv);
        }
        if (pass_soon || evtimer_pending(c->turn->commit_timer, NULL))
            return;
    }
    c->turn->commit_due = false;
    evtimer_del(c->turn->commit_timer);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    dr_err_t err = {0};
    bool changes = c->ndirty || log->n != c->ev_flushed || ctld_notes_pending(c) || c->drains_dirty;
    int rc = changes ? write_turn(c, &err) : DR_OK;
    clock_gettime(CLOCK_MONOTONIC, &b);
    double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    c->st.commit_s_total += secs;
    if (changes)
        ctld_metrics_commit(c, secs, rc == DR_OK);
    if (rc != DR_OK) {
        c->st.commit_fail++;
        if (!c->store_fail[0]) {
            c->store_fail_since = ctld_now(c);
            ctld_log("commit failed (%s); submits are refused with 507 until the store can be "
                     "written, the rest is retried every second",
                     err.msg);
        }
        snprintf(c->store_fail, sizeof c->store_fail, "%.*s", (int)sizeof c->store_fail - 1,
                 err.msg);
        ctld_out_each_submit(c, undo_submit);
        ctld_out_flush(c, false);
        /* retry the other changes soon */
        struct timeval tv = {1, 0};
        evtimer_add(c->turn->pass_timer, &tv);
        return;
    }
    c->st.commits++;
    if (c->store_fail[0]) {
        ctld_log("the store can be written again (after %.1f s): submits are taken again",
                 dr_time_to_s(ctld_now(c) - c->store_fail_since));
        c->store_fail[0] = '\0';
    }
    for (size_t i = 0; i < c->ndirty; i++) {
        c->dirty[i]->dirty = false;
        c->dirty[i]->dirty_listed = false;
    }
    c->ndirty = 0;
    for (size_t i = 0; c->drains_dirty && i < c->cl.nnodes; i++)
        c->nodes[i].drain_dirty = false;
    c->drains_dirty = false;
    ctld_notes_clear(c);
    /* the written events leave memory (the store has them) */
    dr_eventlog_t *ml = dr_sched_log_mut(c->sched);
    ctld_metrics_committed(c, ml);
    dr_eventlog_free(ml);
    dr_eventlog_init(ml);
    c->ev_flushed = 0;
    ctld_crash_committed(c);  /* a crash point after the commit, before anything is sent */
    ctld_events_committed(c); /* the rows just written, to the open streams */
    ctld_out_flush(c, true);
    evict(c);
}

void ctld_turn_schedule(dr_ctld_t *c)
{
    if (!c->turn || c->turn->scheduled || !c->turn->ev)
        return;
    c->turn->scheduled = true;
    event_active(c->turn->ev, EV_TIMEOUT, 0);
}

void ctld_want_pass(dr_ctld_t *c)
{
    if (!c->turn)
        return;
    c->turn->pass_wanted = true;
    ctld_turn_schedule(c);
}

static void on_pass_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    ctld_want_pass(arg);
}

/* Once a second: agents silent past the timeout lose their connection, and
 * their nodes once the lease is over (fence.c). */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    dr_ctld_t *c = arg;
    dr_time_t now = ctld_now(c);
    ctld_fence_tick(c);
    ctld_metrics_tick(c);
    ctld_stats_tick(c);
    if (ctld_service_timers_due(c, now) || ctld_stops_due(c, now))
        ctld_turn_schedule(c); /* a replica's back-off or drain, or a signal's lead, is over */
    ctld_lb_tick(c);
}

int ctld_turn_init(dr_ctld_t *c)
{
    c->turn = calloc(1, sizeof *c->turn);
    return c->turn ? DR_OK : DR_ENOMEM;
}

int ctld_turn_start(dr_ctld_t *c, dr_err_t *err)
{
    struct ctld_turn *t = c->turn;
    t->ev = event_new(c->base, -1, 0, turn, c);
    t->pass_timer = evtimer_new(c->base, on_pass_timer, c);
    t->wake_timer = evtimer_new(c->base, on_pass_timer, c);
    t->commit_timer = evtimer_new(c->base, on_commit_timer, c);
    t->tick = event_new(c->base, -1, EV_PERSIST, on_tick, c);
    if (!t->ev || !t->pass_timer || !t->wake_timer || !t->commit_timer || !t->tick)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    struct timeval sec = {1, 0};
    event_add(t->tick, &sec);
    return DR_OK;
}

void ctld_turn_now(dr_ctld_t *c)
{
    if (!c->turn || !c->turn->commit_timer || !c->db)
        return;
    c->turn->commit_due = true;
    turn(-1, 0, c);
}

void ctld_turn_free(dr_ctld_t *c)
{
    struct ctld_turn *t = c->turn;
    if (!t)
        return;
    struct event *evs[] = {t->ev, t->pass_timer, t->wake_timer, t->commit_timer, t->tick};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if (evs[i])
            event_free(evs[i]);
    free(t->evictq);
    free(t->noted);
    free(t);
    c->turn = NULL;
}
