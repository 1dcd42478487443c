/* fence.c - what the controller does when it loses an agent, and when a
 * node keeps failing jobs.
 *
 * An agent silent past --agent-timeout loses its connection, and its node
 * is drained at once: nothing new starts there, `drover nodes` shows it
 * unreachable with the reason.  Its jobs are left alone while the agent's
 * lease (--lease, sent in WELCOME) may still run there: an agent back
 * within it finds everything as it was.  Once the lease is surely over -
 * the last frame heard from the agent + the lease + a margin, measured on
 * CLOCK_BOOTTIME so that a step of the wall clock changes nothing - the
 * agent has stopped its jobs on its own (agent/lease.c).  Then the ranks of
 * its gangs on other nodes are stopped (SIGKILL: their gang has been broken
 * for a lease), and once they have ended the node is lost: its jobs are
 * requeued or failed as their --requeue says (ctld_node_lost).  So a job
 * never runs in two places: its new copy starts only after every process
 * of the old one was stopped, by its own agent or by the controller.
 *
 * NodeFailDrain=N/DURATION: a node where N different jobs failed within
 * DURATION is drained (a flaky GPU), with the reason shown. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctld/ctld.h"
#include "ctld/agent_link.h"
#include "ctld/fence.h"
#include "ctld/kill.h"
#include "ctld/node_loss.h"
#include "ctld/notes.h"
#include "ctld/services.h"
#include "ctld/settle.h"
#include "ctld/turn.h"

#define FENCE_WAIT_MAX (60 * DR_NSEC_PER_SEC)

int64_t ctld_boot_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (int64_t)ts.tv_sec * DR_NSEC_PER_SEC + ts.tv_nsec;
}

int64_t ctld_requeue_after(const dr_ctld_t *c)
{
    /* the agent's timers and its SIGKILL's delivery: half a second and a
     * heartbeat period */
    return c->o.lease + DR_NSEC_PER_SEC / 2 + (int64_t)c->o.heartbeat_ms * 1000000;
}

/* A rank of cj on another node than `node` may still run: it has not
 * ended, and its node's agent is there or its lease is not surely over. */
static bool live_elsewhere(const dr_ctld_t *c, const ctld_job_t *cj, uint32_t node, int64_t now)
{
    for (uint32_t r = 0; r < cj->nranks; r++) {
        const ctld_rank_t *k = &cj->ranks[r];
        if (k->node == node || k->ended)
            continue;
        const ctld_node_t *o = &c->nodes[k->node];
        if ((o->agent && o->agent->registered) || !o->gone_boot ||
            now - o->gone_boot <= ctld_requeue_after(c))
            return true;
    }
    return false;
}

/* The lease of node's agent is over: stop its gangs elsewhere, and lose
 * the node once they have ended. */
static void fence_node(dr_ctld_t *c, uint32_t node, int64_t now)
{
    ctld_node_t *n = &c->nodes[node];
    const char *name = c->cl.nodes[node].name;
    bool wait = false;
    for (size_t i = 0; i < c->tab_cap; i++) {
        ctld_job_t *cj = c->tab[i];
        if (!cj || cj->array || ctld_job_terminal(cj) || cj->j.state == DR_JOB_PENDING ||
            !ctld_job_holds_node(cj, node) || !live_elsewhere(c, cj, node, now))
            continue;
        wait = true;
        if (!n->fencing) {
            char why[160];
            snprintf(why, sizeof why, "node %s lost: the gang stops before it is requeued", name);
            /* stored with the kill: a controller restarted before the gang
             * has stopped must neither launch its missing ranks into this
             * generation nor fail it for the ranks it killed, but requeue
             * it once every rank is over (ctld_job_settle) */
            cj->kill_sent = true;
            cj->lease_lost = true;
            snprintf(cj->reason, sizeof cj->reason, "node %s lost", name);
            ctld_job_dirty(c, cj);
            ctld_send_kill(c, cj, 0, SIGKILL, why);
            ctld_log("job %llu: %s", (unsigned long long)cj->j.id, why);
        }
    }
    if (!n->fencing)
        ctld_log("node %s: its agent's lease is over (silent %.1f s)", name,
                 (double)(now - n->gone_boot) / 1e9);
    n->fencing = true;
    /* a rank whose agent never reports its end (a bug) must not hold the
     * node's other jobs forever: after another minute they go all the same */
    if (wait && now - n->gone_boot <= ctld_requeue_after(c) + FENCE_WAIT_MAX)
        return;
    if (wait)
        ctld_log("node %s: ranks of its gangs elsewhere did not report their end within %d s; "
                 "requeueing its jobs all the same",
                 name, (int)(FENCE_WAIT_MAX / DR_NSEC_PER_SEC));
    char why[200];
    snprintf(why, sizeof why, "%s; lease over after %.0f s",
             n->registered ? "agent lost" : "no agent has registered",
             (double)(now - n->gone_boot) / 1e9);
    ctld_node_lost(c, node, why);
}

void ctld_fence_tick(dr_ctld_t *c)
{
    int64_t now = ctld_boot_ns(), after = ctld_requeue_after(c);
    for (size_t i = 0; i < c->cl.nnodes; i++) {
        ctld_node_t *n = &c->nodes[i];
        if (n->agent && n->agent->registered && now - n->heard_boot > c->o.agent_timeout) {
            char why[96];
            snprintf(why, sizeof why, "no heartbeat for %.1f s",
                     (double)(now - n->heard_boot) / 1e9);
            ctld_agent_close(n->agent, why);
        }
        if ((n->agent && n->agent->registered) || !n->gone_boot ||
            c->cl.nodes[i].state == DR_NODE_DOWN || now - n->gone_boot <= after)
            continue;
        fence_node(c, (uint32_t)i, now);
    }
}

void ctld_node_gone(dr_ctld_t *c, uint32_t node, const char *why)
{
    ctld_node_t *n = &c->nodes[node];
    if (c->stopping)
        return;
    int64_t now = ctld_boot_ns();
    /* silent since it was last heard: the lease runs from there */
    n->gone_boot = n->heard_boot && n->heard_boot < now ? n->heard_boot : now;
    n->fencing = false;
    if (c->cl.nodes[node].state == DR_NODE_DOWN)
        return;
    char from[16];
    snprintf(from, sizeof from, "%s", ctld_node_state(c, node));
    double left = (double)(n->gone_boot + ctld_requeue_after(c) - now) / 1e9;
    if (!n->admin_drain)
        snprintf(n->reason, sizeof n->reason,
                 "agent lost: %s; its jobs are requeued in %.0f s (its lease) unless it returns",
                 why, left > 0 ? left : 0);
    if (c->cl.nodes[node].state == DR_NODE_UP) {
        dr_err_t err = {0};
        if (dr_sched_node_set_state(c->sched, node, DR_NODE_DRAIN, ctld_now(c), &err) != DR_OK)
            ctld_log("node %s: %s", c->cl.nodes[node].name, err.msg);
        ctld_turn_schedule(c); /* the node record is written */
    }
    ctld_node_note(c, node, "lost", from, "agent lost: %s", why);
    /* its service replicas leave the load balancer until their agent says
     * again that they are ready */
    for (size_t i = 0; i < c->tab_cap; i++) {
        ctld_job_t *cj = c->tab[i];
        if (cj && !cj->array && cj->parent && cj->parent->array && cj->parent->array->svc &&
            !ctld_job_terminal(cj) && cj->j.state != DR_JOB_PENDING &&
            ctld_job_holds_node(cj, node))
            ctld_service_run_requeued(c, cj);
    }
}

void ctld_node_job_failed(dr_ctld_t *c, uint32_t node, uint64_t job)
{
    const dr_cluster_t *cl = &c->cl;
    ctld_node_t *n = &c->nodes[node];
    uint32_t want = cl->fail_drain_n;
    if (!want || cl->fail_drain_window <= 0 || n->admin_drain)
        return;
    if (want > sizeof n->fail_job / sizeof n->fail_job[0])
        want = sizeof n->fail_job / sizeof n->fail_job[0];
    dr_time_t now = ctld_now(c);
    const size_t cap = sizeof n->fail_job / sizeof n->fail_job[0];
    for (size_t k = 0; k < cap; k++)
        if (n->fail_job[k] == job)
            return; /* a job counts once, however many of its ranks failed */
    memmove(n->fail_job + 1, n->fail_job, (cap - 1) * sizeof n->fail_job[0]);
    memmove(n->fail_t + 1, n->fail_t, (cap - 1) * sizeof n->fail_t[0]);
    n->fail_job[0] = job;
    n->fail_t[0] = now;
    uint32_t recent = 0;
    for (size_t k = 0; k < cap; k++)
        recent += n->fail_job[k] && now - n->fail_t[k] <= cl->fail_drain_window;
    if (recent < want)
        return;
    char from[16];
    snprintf(from, sizeof from, "%s", ctld_node_state(c, node));
    n->admin_drain = true;
    n->auto_drain = true;
    char list[96] = "";
    for (uint32_t k = 0; k < want; k++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%llu", k ? ", " : "",
                 (unsigned long long)n->fail_job[want - 1 - k]);
    }
    snprintf(n->reason, sizeof n->reason,
             "drained by drover: %u jobs failed here within %.0f s (%s)", want,
             dr_time_to_s(cl->fail_drain_window), list);
    ctld_log("node %s: %s", cl->nodes[node].name, n->reason);
    ctld_node_drain_changed(c, node);
    if (cl->nodes[node].state == DR_NODE_UP) {
        dr_err_t err = {0};
        if (dr_sched_node_set_state(c->sched, node, DR_NODE_DRAIN, now, &err) != DR_OK)
            ctld_log("node %s: %s", cl->nodes[node].name, err.msg);
    }
    ctld_node_note(c, node, "drain", from, "%s", n->reason);
    ctld_want_pass(c);
}
