/* outbox.c - what a turn sends after its commit: replies to clients and
 * frames to agents wait here until the store has what they acknowledge
 * (durability before acknowledgement), then go out in order. */
#include <stdlib.h>

#include "ctld/ctld.h"
#include "ctld/agent_link.h"
#include "ctld/crashpoint.h"
#include "ctld/http.h"
#include "ctld/metrics.h"
#include "ctld/outbox.h"
#include "ctld/turn.h"

typedef enum ctld_out_kind { OUT_HTTP, OUT_FRAME } ctld_out_kind_t;
typedef struct ctld_out {
    ctld_out_kind_t kind;
    struct evhttp_request *req; /* OUT_HTTP */
    int status;
    char *body;   /* OUT_HTTP: JSON text; OUT_FRAME: message JSON */
    uint64_t job; /* OUT_HTTP: a submit's job id (undone if the commit fails);
                     OUT_FRAME: a launch's job (dropped with its undone submit) */
    int node;     /* OUT_FRAME: destination node */
    int type;     /* OUT_FRAME: message type */
    struct ctld_out *next;
} ctld_out_t;

struct ctld_outbox {
    ctld_out_t *head, **tail;
};

int ctld_outbox_init(dr_ctld_t *c)
{
    c->outbox = calloc(1, sizeof *c->outbox);
    if (!c->outbox)
        return DR_ENOMEM;
    c->outbox->tail = &c->outbox->head;
    return DR_OK;
}

/* What is still queued at shutdown was never committed: answered 507 (a
 * reply) or dropped (a frame), as after a failed commit. */
void ctld_outbox_free(dr_ctld_t *c)
{
    if (!c->outbox)
        return;
    ctld_out_flush(c, false);
    for (ctld_out_t *o = c->outbox->head, *next; o; o = next) {
        next = o->next;
        free(o->body);
        free(o);
    }
    free(c->outbox);
    c->outbox = NULL;
}

bool ctld_out_pending(const dr_ctld_t *c)
{
    return c->outbox->head != NULL;
}

bool ctld_out_urgent(const dr_ctld_t *c)
{
    for (const ctld_out_t *o = c->outbox->head; o; o = o->next)
        if (o->kind == OUT_HTTP || o->type != DR_MSG_ACK)
            return true;
    return false;
}

void ctld_out_each_submit(dr_ctld_t *c, void (*fn)(dr_ctld_t *, uint64_t job))
{
    for (ctld_out_t *o = c->outbox->head; o; o = o->next)
        if (o->kind == OUT_HTTP && o->job)
            fn(c, o->job);
}

static void out_push(dr_ctld_t *c, ctld_out_t *o)
{
    o->next = NULL;
    *c->outbox->tail = o;
    c->outbox->tail = &o->next;
    ctld_turn_schedule(c);
}

void ctld_out_http(dr_ctld_t *c, struct evhttp_request *req, int status, char *body, uint64_t job)
{
    ctld_out_t *o = calloc(1, sizeof *o);
    if (!o) {
        ctld_reply_error(req, 503, NULL, "out of memory");
        free(body);
        return;
    }
    *o = (ctld_out_t){.kind = OUT_HTTP, .req = req, .status = status, .body = body, .job = job};
    out_push(c, o);
}

void ctld_out_frame_job(dr_ctld_t *c, int node, int type, char *json, uint64_t job)
{
    ctld_out_t *o = calloc(1, sizeof *o);
    if (!o || !json) {
        free(o);
        free(json);
        return;
    }
    *o = (ctld_out_t){.kind = OUT_FRAME, .node = node, .type = type, .body = json, .job = job};
    out_push(c, o);
}

void ctld_out_frame(dr_ctld_t *c, int node, int type, char *json)
{
    ctld_out_frame_job(c, node, type, json, 0);
}

/* Is job `id` one of the submits a failed commit took back (undo_submits)? */
static bool undone(const dr_ctld_t *c, uint64_t id)
{
    if (!id)
        return false;
    for (const ctld_out_t *o = c->outbox->head; o; o = o->next)
        if (o->kind == OUT_HTTP && o->job == id)
            return true;
    return false;
}

/* After the commit: replies and frames go out.  After a failed commit the
 * replies say 507 with the store's error; the frames (launches, kills,
 * ACKs of what agents reported) wait for the next commit that works, but
 * those of submits taken back are dropped. */
void ctld_out_flush(dr_ctld_t *c, bool committed)
{
    ctld_out_t *o = c->outbox->head, *keep = NULL, **keep_tail = &keep;
    if (!committed && !c->stopping)
        for (ctld_out_t *x = o; x; x = x->next)
            if (x->kind == OUT_FRAME && x->job && undone(c, x->job))
                x->job = UINT64_MAX; /* marked: dropped below */
    c->outbox->head = NULL;
    c->outbox->tail = &c->outbox->head;
    uint64_t sent_job = 0; /* the last LAUNCH sent: its job and node */
    int sent_node = -1;
    while (o) {
        ctld_out_t *next = o->next;
        if (ctld_crash_at && committed && o->kind == OUT_FRAME && o->type == DR_MSG_LAUNCH) {
            /* a gang's LAUNCHes sent to some of its nodes, not all */
            if (o->job == sent_job && o->node != sent_node && ctld_crash_due("dispatch-mid-gang"))
                ctld_crash_now(c, "dispatch-mid-gang");
            sent_job = o->job;
            sent_node = o->node;
        }
        if (!committed && !c->stopping && o->kind == OUT_FRAME && o->job != UINT64_MAX) {
            o->next = NULL;
            *keep_tail = o;
            keep_tail = &o->next;
            o = next;
            continue;
        }
        if (o->kind == OUT_HTTP) {
            if (committed && o->job && o->status == 201)
                ctld_metrics_submitted(c, o->job); /* acknowledged */
            if (committed)
                ctld_reply_json(o->req, o->status, o->body);
            else
                ctld_reply_error(o->req, 507, NULL,
                                 "the controller could not commit to its store (%s); nothing "
                                 "was changed, try again once the state directory has space",
                                 c->store_fail[0] ? c->store_fail : "stopping");
        } else if (committed && o->node >= 0 && c->nodes[o->node].agent &&
                   c->nodes[o->node].agent->registered) {
            if (ctld_agent_send(c->nodes[o->node].agent, o->type, o->body) != DR_OK)
                ctld_agent_close(c->nodes[o->node].agent, "send failed");
        }
        free(o->body);
        free(o);
        o = next;
    }
    if (keep) {
        c->outbox->head = keep;
        c->outbox->tail = keep_tail;
    }
}
