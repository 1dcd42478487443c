/* output.c - GET /v1/jobs/ID/output answered by the node that ran the job.
 *
 * A job's -o/-e paths are paths a user named; droverd (root) never opens,
 * stats or reads them (docs/design.md, "Paths users name"): the output is
 * on the node that wrote it, which may be another machine, and a path
 * opened by root could be /etc/shadow or a FIFO that blocks the event loop.
 * The controller sends OUTPUT_REQ to that node's agent, which reads the
 * bytes as the job's user (src/agent/output.c), and holds the HTTP request
 * until the OUTPUT answer, the node's loss or OUTPUT_TIMEOUT_S. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "ctld/ctld.h"
#include "ctld/agent_link.h"
#include "ctld/http.h"
#include "ctld/output.h"

#define OUTPUT_TIMEOUT_S 10

typedef struct pending {
    dr_ctld_t *c;
    uint64_t id;
    int node;
    uint64_t job, offset;
    char state[32];
    struct evhttp_request *req;
    struct evhttp_connection *conn;
    struct event *timer;
    struct pending *next;
} pending_t;

struct ctld_outputs {
    pending_t *head;
    uint64_t next_id;
};

static void destroy_pending(pending_t *p)
{
    if (p->timer)
        event_free(p->timer);
    if (p->conn)
        evhttp_connection_set_closecb(p->conn, NULL, NULL);
    free(p);
}

static void unlink_pending(pending_t *p)
{
    for (pending_t **q = &p->c->outputs->head; *q; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            break;
        }
    destroy_pending(p);
}

/* The client went away first: evhttp frees its request. */
static void on_close(struct evhttp_connection *conn, void *arg)
{
    pending_t *p = arg;
    p->conn = NULL;
    unlink_pending(p);
}

static void fail(pending_t *p, int status, const char *msg)
{
    struct evhttp_request *req = p->req;
    unlink_pending(p);
    ctld_reply_error(req, status, NULL, "%s", msg);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    pending_t *p = arg;
    char msg[160];
    snprintf(msg, sizeof msg, "job %llu: node %s did not send the output in %d s",
             (unsigned long long)p->job, p->c->cl.nodes[p->node].name, OUTPUT_TIMEOUT_S);
    fail(p, 504, msg);
}

void ctld_output_request(dr_ctld_t *c, struct evhttp_request *req, int node, dr_msg_output_req_t *m,
                         const char *job_state)
{
    const char *name = c->cl.nodes[node].name;
    ctld_agent_t *a = c->nodes[node].agent;
    if (!a || !a->registered) {
        ctld_reply_error(req, 503, NULL,
                         "job %llu: its output is on node %s, whose agent is not connected",
                         (unsigned long long)m->job, name);
        return;
    }
    if (!c->outputs && !(c->outputs = calloc(1, sizeof *c->outputs))) {
        ctld_reply_error(req, 503, NULL, "out of memory");
        return;
    }
    pending_t *p = calloc(1, sizeof *p);
    char *json = NULL;
    size_t len = 0;
    dr_err_t err = {0};
    m->req = ++c->outputs->next_id;
    if (!p || dr_msg_output_req_encode(m, &json, &len, &err) != DR_OK ||
        ctld_agent_send(a, DR_MSG_OUTPUT_REQ, json) != DR_OK) {
        free(p);
        free(json);
        ctld_reply_error(req, 503, NULL, "job %llu: cannot ask node %s for the output: %s",
                         (unsigned long long)m->job, name, err.msg[0] ? err.msg : "send failed");
        return;
    }
    free(json);
    *p = (pending_t){.c = c,
                     .id = m->req,
                     .node = node,
                     .job = m->job,
                     .offset = m->offset,
                     .req = req,
                     .conn = evhttp_request_get_connection(req)};
    snprintf(p->state, sizeof p->state, "%s", job_state);
    p->next = c->outputs->head;
    c->outputs->head = p;
    struct timeval tv = {OUTPUT_TIMEOUT_S, 0};
    p->timer = evtimer_new(c->base, on_timeout, p);
    if (p->timer)
        evtimer_add(p->timer, &tv);
    if (p->conn)
        evhttp_connection_set_closecb(p->conn, on_close, p);
}

static void reply_bytes(pending_t *p, const dr_msg_output_t *m)
{
    struct evhttp_request *req = p->req;
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    char next[32], size[32];
    snprintf(next, sizeof next, "%llu", (unsigned long long)p->offset + m->ndata);
    snprintf(size, sizeof size, "%llu", (unsigned long long)m->size);
    evhttp_add_header(h, "Content-Type", "text/plain; charset=utf-8");
    evhttp_add_header(h, "X-Drover-Offset-Next", next);
    evhttp_add_header(h, "X-Drover-Output-Size", size);
    evhttp_add_header(h, "X-Drover-Job-State", p->state);
    struct evbuffer *b = evbuffer_new();
    if (b && m->ndata)
        evbuffer_add(b, m->data, m->ndata);
    unlink_pending(p);
    evhttp_send_reply(req, 200, "OK", b);
    if (b)
        evbuffer_free(b);
}

void ctld_output_answer(dr_ctld_t *c, int node, const dr_msg_output_t *m)
{
    pending_t *p = c->outputs ? c->outputs->head : NULL;
    while (p && p->id != m->req)
        p = p->next;
    if (!p || p->node != node) {
        /* late (timed out, client gone) or not this node's to answer */
        ctld_log("node %s: OUTPUT for request %llu it was not asked for; ignored",
                 c->cl.nodes[node].name, (unsigned long long)m->req);
        return;
    }
    char msg[600];
    const char *name = c->cl.nodes[node].name;
    switch (m->status) {
    case DR_OUTPUT_OK: reply_bytes(p, m); return;
    case DR_OUTPUT_MISSING:
        snprintf(msg, sizeof msg, "job %llu: no output yet on node %s (%s)",
                 (unsigned long long)p->job, name, m->detail);
        fail(p, 404, msg);
        return;
    case DR_OUTPUT_DENIED:
        snprintf(msg, sizeof msg, "job %llu: the job's user may not read its output on node %s: %s",
                 (unsigned long long)p->job, name, m->detail);
        fail(p, 403, msg);
        return;
    case DR_OUTPUT_BUSY:
        snprintf(msg, sizeof msg, "job %llu: node %s is busy reading other output: %s",
                 (unsigned long long)p->job, name, m->detail);
        fail(p, 503, msg);
        return;
    default:
        snprintf(msg, sizeof msg, "job %llu: reading the output on node %s failed: %s",
                 (unsigned long long)p->job, name, m->detail);
        fail(p, 502, msg);
        return;
    }
}

void ctld_output_node_gone(dr_ctld_t *c, int node)
{
    pending_t *p = c->outputs ? c->outputs->head : NULL;
    while (p) {
        pending_t *next = p->next;
        if (p->node == node) {
            char msg[160];
            snprintf(msg, sizeof msg, "job %llu: node %s went away before sending the output",
                     (unsigned long long)p->job, c->cl.nodes[node].name);
            fail(p, 503, msg);
        }
        p = next;
    }
}

void ctld_output_free(dr_ctld_t *c)
{
    if (!c->outputs)
        return;
    while (c->outputs->head) {
        pending_t *p = c->outputs->head;
        struct evhttp_request *req = p->req;
        c->outputs->head = p->next;
        destroy_pending(p);
        ctld_reply_error(req, 503, NULL, "the controller is stopping");
    }
    free(c->outputs);
    c->outputs = NULL;
}
