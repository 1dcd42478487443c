/* agent_msgs.c - what the controller does with an agent's messages.
 *
 * HELLO names the node and starts the session (WELCOME); REGISTER says what
 * the agent found and what it holds, which is reconciled with what the
 * store says should run there: a rank of an old generation is killed, an
 * end that happened while the controller was away is taken in, a launch
 * that never arrived is sent again.  JOB_STATE reports are applied to the
 * job and acknowledged after the turn's commit, so an agent keeps an end
 * report until it is durable here.  STEP_REQ and STEP_CANCEL come from
 * srun inside a job, through its node's agent (steps.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent.h>

#include "ctld/ctld.h"
#include "ctld/agent_link.h"
#include "ctld/ckpt.h"
#include "ctld/fence.h"
#include "ctld/kill.h"
#include "ctld/launch.h"
#include "ctld/node_loss.h"
#include "ctld/outbox.h"
#include "ctld/restart.h"
#include "ctld/services.h"
#include "ctld/settle.h"
#include "ctld/shards.h"
#include "ctld/steps.h"
#include "ctld/stop.h"
#include "ctld/turn.h"
#include "ctld/output.h"

/* Refuse an agent whose HELLO proved its node key (so the session is open
 * and the reason reaches it sealed); it stops and says why. */
static void reject(ctld_agent_t *a, const char *fmt, const char *arg)
{
    char reason[256];
    snprintf(reason, sizeof reason, fmt, arg);
    ctld_log_limited(&a->c->agent_log, "agent %s: rejected: %s", a->addr, reason);
    dr_msg_reject_t m = {.reason = reason};
    char *json = NULL;
    size_t len;
    if (a->sess.have_peer_nonce && dr_msg_reject_encode(&m, &json, &len, NULL) == DR_OK)
        ctld_agent_send(a, DR_MSG_REJECT, json);
    free(json);
    /* let the frames drain before the connection goes */
    a->closing = true;
    bufferevent_disable(a->bev, EV_READ);
    bufferevent_setwatermark(a->bev, EV_WRITE, 0, 0);
}

/* HELLO: the agent names its node and proves it holds that node's key
 * (derived here from the master key) by an HMAC over our CHALLENGE nonce,
 * its nonce and the name.  Without the proof nothing happens: the node's
 * present agent, if any, stays; the connection is closed. */
static void on_hello(ctld_agent_t *a, const dr_frame_t *f)
{
    dr_ctld_t *c = a->c;
    dr_msg_hello_t h = {0};
    dr_err_t err = {0};
    if (dr_msg_hello_parse(&h, f->body, f->len, &err) != DR_OK) {
        a->sess.stats.bad_body++;
        ctld_log_limited(&c->agent_log, "agent %s: bad HELLO: %s", a->addr, err.msg);
        ctld_agent_close(a, "bad HELLO");
        return;
    }
    char name[80]; /* for the log: the name as the peer sent it, cleaned */
    ctld_sanitize(name, sizeof name, h.name);
    uint8_t nk[DR_PROTO_KEY];
    int known = dr_cluster_find_node(&c->cl, h.name);
    uint32_t gen = known >= 0 ? c->nodes[known].key_gen : 0;
    bool proved = dr_proto_node_key_gen(c->key, h.name, gen, nk, NULL) == DR_OK &&
                  dr_proto_hello_verify(nk, a->sess.my_nonce, h.nonce, h.name, h.proof);
    if (proved) {
        dr_proto_session_set_key(&a->sess, nk);
        proved = dr_proto_session_set_peer_nonce(&a->sess, h.nonce) == DR_OK;
    }
    explicit_bzero(nk, sizeof nk);
    if (!proved) {
        dr_msg_hello_free(&h);
        ctld_log_limited(&c->agent_log,
                         "agent %s: refused: its HELLO for node '%s' does not prove that node's "
                         "key (not enrolled, another node's key, or an older generation)",
                         a->addr, name);
        ctld_agent_close(a, "HELLO without a valid proof");
        return;
    }
    ctld_agent_authed(a);
    int node = dr_cluster_find_node(&c->cl, h.name);
    dr_msg_hello_free(&h);
    if (node < 0) {
        reject(a, "no NodeName=%s in the controller's configuration", name);
        return;
    }
    ctld_node_t *n = &c->nodes[node];
    if (n->revoked) {
        reject(a, "node %s is revoked (drover nodes unrevoke NODE lets it in again)", name);
        return;
    }
    if (n->agent && n->agent != a)
        ctld_agent_close(n->agent, "replaced by a new connection");
    a->node = node;
    n->agent = a;
    snprintf(n->addr, sizeof n->addr, "%s", a->addr);
    /* the address ranks of a gang use to reach this node (MASTER_ADDR) */
    snprintf(n->ip, sizeof n->ip, "%.*s", (int)strcspn(a->addr, ":"), a->addr);
    const dr_node_t *cn = &c->cl.nodes[node];
    dr_msg_welcome_t w = {0};
    memcpy(w.nonce, a->sess.my_nonce, sizeof w.nonce);
    w.epoch = c->epoch;
    w.heartbeat_ms = c->o.heartbeat_ms;
    w.lease_ms = (uint32_t)(c->o.lease / 1000000);
    w.gpu_type = cn->ngpus ? c->cl.types[cn->type].name : "";
    w.ngpus = cn->ngpus;
    w.cpus = cn->cpu_milli / 1000;
    w.mem_mb = cn->mem_mb;
    char *json = NULL;
    size_t len;
    if (dr_msg_welcome_encode(&w, &json, &len, &err) != DR_OK ||
        ctld_agent_send(a, DR_MSG_WELCOME, json) != DR_OK) {
        free(json);
        ctld_agent_close(a, "cannot send WELCOME");
        return;
    }
    free(json);
    a->welcomed = true;
}

static void ack(dr_ctld_t *c, int node, uint64_t job, uint32_t gen, uint32_t rank)
{
    dr_msg_ack_t m = {.job = job, .gen = gen, .rank = rank};
    char *json = NULL;
    size_t len;
    if (dr_msg_ack_encode(&m, &json, &len, NULL) == DR_OK)
        ctld_out_frame(c, node, DR_MSG_ACK, json);
}

static void kill_stale(dr_ctld_t *c, int node, uint64_t job, uint32_t gen, const char *why)
{
    dr_msg_kill_t m = {.job = job, .gen = gen, .signal = 9, .grace_ns = 0, .reason = (char *)why};
    char *json = NULL;
    size_t len;
    if (dr_msg_kill_encode(&m, &json, &len, NULL) == DR_OK)
        ctld_out_frame(c, node, DR_MSG_KILL, json);
}

/* The job's current generation runs rank `rank` on `node`? */
static ctld_job_t *current(dr_ctld_t *c, int node, uint64_t job, uint32_t gen, uint32_t rank)
{
    ctld_job_t *cj = ctld_job_find(c, job);
    if (!cj || cj->array || ctld_job_terminal(cj) || cj->j.state == DR_JOB_PENDING ||
        cj->gen != gen || rank >= cj->nranks || cj->ranks[rank].node != (uint32_t)node)
        return NULL;
    return cj;
}

static void on_register(ctld_agent_t *a, const dr_frame_t *f)
{
    dr_ctld_t *c = a->c;
    dr_msg_register_t m = {0};
    dr_err_t err = {0};
    if (dr_msg_register_parse(&m, f->body, f->len, &err) != DR_OK) {
        a->sess.stats.bad_body++;
        ctld_log("agent %s: bad REGISTER: %s", a->addr, err.msg);
        ctld_agent_close(a, "bad REGISTER");
        return;
    }
    ctld_node_t *n = &c->nodes[a->node];
    const dr_node_t *cn = &c->cl.nodes[a->node];
    snprintf(n->source, sizeof n->source, "%s", m.source);
    n->disc_gpus = m.ngpus;
    n->last_heartbeat = ctld_now(c);
    n->heard_boot = ctld_boot_ns();
    if (m.ngpus < cn->ngpus) {
        char src[32];
        ctld_sanitize(src, sizeof src, m.source);
        ctld_log("node %s: agent found %u GPUs (%s), the config declares %u; using %u", cn->name,
                 m.ngpus, src, cn->ngpus, cn->ngpus);
    }
    a->registered = true;
    /* ranks its lease stopped while it was cut off: said once, with the
     * node; each job takes its rank's end below (ctld_rank_ended) */
    uint32_t nlease = 0;
    for (uint32_t i = 0; i < m.nheld; i++)
        nlease += !m.held[i].running && m.held[i].why == DR_END_LEASE;
    if (nlease)
        ctld_log("node %s: its agent stopped %u rank%s when its lease expired (cut off from the "
                 "controller)",
                 cn->name, nlease, nlease == 1 ? "" : "s");
    /* reconcile what it holds with what should run there */
    uint64_t killed_again = 0; /* the last job whose KILL went out again */
    for (uint32_t i = 0; i < m.nheld; i++) {
        const dr_msg_held_t *h = &m.held[i];
        ctld_job_t *cj = current(c, a->node, h->job, h->gen, h->rank);
        ctld_job_t *sj = cj ? NULL : ctld_stop_rank(c, a->node, h->job, h->gen, h->rank);
        if (sj) { /* preempted and stopping (stop.c): it runs on until its lead is over */
            if (!h->running) {
                sj->ranks[h->rank].ended = true;
                ack(c, a->node, h->job, h->gen, h->rank);
                ctld_turn_schedule(c);
            } else if (!sj->stop_at && killed_again != sj->j.id) {
                ctld_kill_again(c, sj, (uint32_t)a->node); /* its KILL may not have arrived */
                killed_again = sj->j.id;
            }
            continue;
        }
        if (!cj) {
            if (h->running)
                kill_stale(c, a->node, h->job, h->gen, "stale generation");
            else
                ack(c, a->node, h->job, h->gen, h->rank);
            ctld_restart_stale(c, (uint32_t)a->node, h->job, h->gen, h->rank, h->running);
            continue;
        }
        if (h->running) {
            ctld_rank_started(c, cj, h->rank);
            if (ctld_rank_stopped(cj, h->rank) && killed_again != cj->j.id) {
                /* stopped before the crash: the KILL may never have left */
                ctld_kill_again(c, cj, (uint32_t)a->node);
                killed_again = cj->j.id;
            }
            ctld_ckpt_report_lost(c, cj, a->node);
        } else {
            dr_msg_job_state_t js = {.job = h->job,
                                     .gen = h->gen,
                                     .rank = h->rank,
                                     .exit_code = h->exit_code,
                                     .signal = h->signal,
                                     .why = h->why,
                                     .t_ns = h->end_ns,
                                     .detail = (char *)"ended while the controller was away"};
            ctld_rank_started(c, cj, h->rank);
            ctld_rank_ended(c, cj, h->rank, &js);
            ack(c, a->node, h->job, h->gen, h->rank);
        }
    }
    /* ranks that should be there but are not held */
    for (size_t i = 0; i < c->tab_cap; i++) {
        ctld_job_t *cj = c->tab[i];
        if (cj && !cj->array && cj->stopping) {
            /* preempted and stopping (stop.c): a rank the agent does not
             * hold runs nowhere - it is over */
            for (uint32_t r = 0; r < cj->nranks; r++) {
                bool held = false;
                for (uint32_t k = 0; k < m.nheld && !held; k++)
                    held = m.held[k].job == cj->j.id && m.held[k].gen == cj->gen &&
                           m.held[k].rank == r;
                if (cj->ranks[r].node == (uint32_t)a->node && !held)
                    ctld_stop_not_held(c, cj, r);
            }
            continue;
        }
        if (!cj || cj->array || ctld_job_terminal(cj) || cj->j.state == DR_JOB_PENDING)
            continue;
        for (uint32_t r = 0; r < cj->nranks; r++) {
            if (cj->ranks[r].node != (uint32_t)a->node || cj->ranks[r].ended)
                continue;
            bool held = false;
            for (uint32_t k = 0; k < m.nheld && !held; k++)
                held = m.held[k].job == cj->j.id && m.held[k].gen == cj->gen && m.held[k].rank == r;
            if (held)
                continue;
            if (!cj->ranks[r].started && ctld_rank_stopped(cj, r)) {
                /* cancelled before its launch arrived: it never ran there */
                dr_msg_job_state_t js = {.exit_code = -1, .why = DR_END_KILLED, .detail = ""};
                ctld_rank_ended(c, cj, r, &js);
            } else if (!cj->ranks[r].started) {
                if (!cj->launch_wait)           /* held for a stopping job (stop.c): not yet */
                    ctld_launch_rank(c, cj, r); /* the launch never arrived */
            } else {
                dr_msg_job_state_t js = {.exit_code = -1,
                                         .signal = 0,
                                         .why = DR_END_EXIT,
                                         .detail = (char *)"lost: the agent no longer holds it"};
                snprintf(cj->reason, sizeof cj->reason, "lost on %s: its agent no longer holds it",
                         cn->name);
                cj->has_exit = true;
                cj->exit_code = -1;
                ctld_rank_ended(c, cj, r, &js);
            }
            if (ctld_job_terminal(cj))
                break;
        }
    }
    ctld_node_shards(c, (uint32_t)a->node, m.shards, m.nshards);
    dr_msg_register_free(&m);
    ctld_log("node %s: agent %s registered (%u GPUs, %s)", cn->name, a->addr, n->disc_gpus,
             n->source);
    ctld_node_connected(c, (uint32_t)a->node);
}

/* A heartbeat carries the node's shards only when they changed. */
static void on_heartbeat(ctld_agent_t *a, const dr_frame_t *f)
{
    dr_msg_heartbeat_t m = {0};
    dr_err_t err = {0};
    if (dr_msg_heartbeat_parse(&m, f->body, f->len, &err) != DR_OK) {
        a->sess.stats.bad_body++;
        ctld_log("agent %s: bad HEARTBEAT: %s", a->addr, err.msg);
        return;
    }
    if (m.shards_given)
        ctld_node_shards(a->c, (uint32_t)a->node, m.shards, m.nshards);
    dr_msg_heartbeat_free(&m);
    /* heard: the agent's lease runs on from when it sent this (no commit
     * to wait for: it says only that the link works) */
    dr_msg_lease_t l = {.seq = f->seq};
    char *json = NULL;
    size_t len;
    if (dr_msg_lease_encode(&l, &json, &len, NULL) == DR_OK)
        ctld_agent_send(a, DR_MSG_LEASE, json);
    free(json);
}

static void on_job_state(ctld_agent_t *a, const dr_frame_t *f)
{
    dr_ctld_t *c = a->c;
    dr_msg_job_state_t m = {0};
    dr_err_t err = {0};
    if (dr_msg_job_state_parse(&m, f->body, f->len, &err) != DR_OK) {
        a->sess.stats.bad_body++;
        ctld_log("agent %s: bad JOB_STATE: %s", a->addr, err.msg);
        return;
    }
    ctld_job_t *cj = current(c, a->node, m.job, m.gen, m.rank);
    ctld_job_t *sj = cj ? NULL : ctld_stop_rank(c, a->node, m.job, m.gen, m.rank);
    if (sj) { /* a rank of a job stopping after a preemption (stop.c) */
        if (!m.started) {
            sj->ranks[m.rank].ended = true;
            ack(c, a->node, m.job, m.gen, m.rank);
            ctld_turn_schedule(c);
        }
    } else if (!cj) {
        if (m.started)
            kill_stale(c, a->node, m.job, m.gen, "stale generation");
        else
            ack(c, a->node, m.job, m.gen, m.rank);
        ctld_restart_stale(c, (uint32_t)a->node, m.job, m.gen, m.rank, m.started);
    } else if (m.started && m.ready != DR_READY_NONE) {
        ctld_service_ready(c, cj, m.ready == DR_READY_YES);
    } else if (m.started) {
        ctld_rank_started(c, cj, m.rank);
    } else {
        ctld_rank_ended(c, cj, m.rank, &m);
        ack(c, a->node, m.job, m.gen, m.rank);
    }
    dr_msg_job_state_free(&m);
}

/* The agent sent a job's --signal by itself (before its time limit, at a
 * checkpoint round): for the job's events. */
static void on_signaled(ctld_agent_t *a, const dr_frame_t *f)
{
    dr_msg_signal_t m = {0};
    dr_err_t err = {0};
    if (dr_msg_signal_parse(&m, f->body, f->len, &err) != DR_OK || m.signal <= 0 || m.signal > 64 ||
        (m.why != DR_SIG_LIMIT && m.why != DR_SIG_CKPT)) {
        a->sess.stats.bad_body++;
        ctld_log("agent %s: bad SIGNALED: %s", a->addr,
                 err.msg[0] ? err.msg : "signal or why out of range");
        dr_msg_signal_free(&m);
        return;
    }
    ctld_job_t *cj = current(a->c, a->node, m.job, m.gen, m.rank);
    if (cj)
        ctld_job_warned(a->c, cj, &m);
    dr_msg_signal_free(&m);
}

/* srun on the agent's node asks for a step; the agent vouches for the
 * uid, the controller checks the rest (steps.c). */
static void on_step_req(ctld_agent_t *a, const dr_frame_t *f)
{
    dr_msg_step_req_t m = {0};
    dr_err_t err = {0};
    if (dr_msg_step_req_parse(&m, f->body, f->len, &err) != DR_OK) {
        a->sess.stats.bad_body++;
        ctld_log("agent %s: bad STEP_REQ: %s", a->addr, err.msg);
        return;
    }
    ctld_step_request(a->c, a->node, &m);
    dr_msg_step_req_free(&m);
}

static void on_step_cancel(ctld_agent_t *a, const dr_frame_t *f)
{
    dr_msg_step_cancel_t m = {0};
    dr_err_t err = {0};
    if (dr_msg_step_cancel_parse(&m, f->body, f->len, &err) != DR_OK) {
        a->sess.stats.bad_body++;
        ctld_log("agent %s: bad STEP_CANCEL: %s", a->addr, err.msg);
        return;
    }
    ctld_step_cancel(a->c, a->node, &m);
    dr_msg_step_cancel_free(&m);
}

/* Which checkpoint a launch resumes from (ckpt.c writes it down), or one
 * a preempted job committed on its signal (stop.c stops it then); a
 * report for another generation is stale and dropped. */
static void on_ckpt(ctld_agent_t *a, const dr_frame_t *f)
{
    dr_msg_ckpt_t m = {0};
    dr_err_t err = {0};
    if (dr_msg_ckpt_parse(&m, f->body, f->len, &err) != DR_OK) {
        a->sess.stats.bad_body++;
        ctld_log("agent %s: bad CKPT: %s", a->addr, err.msg);
        return;
    }
    ctld_job_t *cj = current(a->c, a->node, m.job, m.gen, m.rank);
    ctld_job_t *sj = cj ? NULL : ctld_stop_rank(a->c, a->node, m.job, m.gen, m.rank);
    if (m.committed && sj)
        ctld_stop_ckpt(a->c, sj, a->node, &m); /* saved on its preemption signal: stop it now */
    else if (cj && !m.committed)
        ctld_ckpt_report(a->c, cj, a->node, &m);
    dr_msg_ckpt_free(&m);
}

/* The bytes of a job's output the controller asked this node for. */
static void on_output(ctld_agent_t *a, const dr_frame_t *f)
{
    dr_msg_output_t m = {0};
    dr_err_t err = {0};
    if (dr_msg_output_parse(&m, f->body, f->len, &err) != DR_OK) {
        a->sess.stats.bad_body++;
        ctld_log("agent %s: bad OUTPUT: %s", a->addr, err.msg);
        return;
    }
    ctld_output_answer(a->c, a->node, &m);
    dr_msg_output_free(&m);
}

void ctld_agent_msg(ctld_agent_t *a, const dr_frame_t *f)
{
    dr_ctld_t *c = a->c;
    if (f->type == DR_MSG_HELLO) {
        on_hello(a, f);
        return;
    }
    if (f->type == DR_MSG_CHALLENGE) { /* the controller's frame, never an agent's */
        ctld_agent_close(a, "CHALLENGE from an agent");
        return;
    }
    if (!a->welcomed || a->node < 0) {
        ctld_agent_close(a, "message before HELLO");
        return;
    }
    c->nodes[a->node].last_heartbeat = ctld_now(c);
    c->nodes[a->node].heard_boot = ctld_boot_ns();
    switch (f->type) {
    case DR_MSG_REGISTER: on_register(a, f); break;
    case DR_MSG_HEARTBEAT:
        if (a->registered)
            on_heartbeat(a, f);
        break;
    case DR_MSG_JOB_STATE:
        if (a->registered)
            on_job_state(a, f);
        break;
    case DR_MSG_STEP_REQ:
        if (a->registered)
            on_step_req(a, f);
        break;
    case DR_MSG_SIGNALED:
        if (a->registered)
            on_signaled(a, f);
        break;
    case DR_MSG_STEP_CANCEL:
        if (a->registered)
            on_step_cancel(a, f);
        break;
    case DR_MSG_CKPT:
        if (a->registered)
            on_ckpt(a, f);
        break;
    case DR_MSG_OUTPUT:
        if (a->registered)
            on_output(a, f);
        break;
    default:
        ctld_log("agent %s: unexpected %s message; ignored", a->addr, dr_msg_type_name(f->type));
        break;
    }
}
