/* api_nodes.c - the /v1/nodes endpoints: nodes as the controller sees them
 * (config, ledger, agent), and an operator's drain and resume.  A drain is
 * stored (it holds across a restart until resumed) and answered after its
 * commit.  An operator's revoke refuses the node's key from then on (its
 * agent is disconnected at once) until unrevoke; it is stored at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/agent_link.h"
#include "ctld/api.h"
#include "ctld/fence.h"
#include "ctld/http.h"
#include "ctld/notes.h"
#include "ctld/outbox.h"
#include "ctld/stop.h"
#include "ctld/store.h"
#include "ctld/turn.h"

const char *ctld_node_state(const dr_ctld_t *c, uint32_t i)
{
    const ctld_node_t *n = &c->nodes[i];
    const dr_node_t *cn = &c->cl.nodes[i];
    if (cn->state == DR_NODE_DRAIN && !n->admin_drain && !n->agent)
        return n->registered ? "unreachable" : "unknown"; /* drained only for want of an agent */
    return dr_node_state_name((dr_node_state_t)cn->state);
}

char *ctld_node_json(dr_ctld_t *c, uint32_t i)
{
    const ctld_node_t *n = &c->nodes[i];
    const dr_node_t *cn = &c->cl.nodes[i];
    uint32_t idle_milli = 0;
    for (uint32_t g = 0; g < cn->ngpus; g++)
        idle_milli += c->cl.gpu_free[cn->gpu_base + g];
    uint32_t alloc = cn->ngpus - (idle_milli + 999) / 1000;
    json_t *jobs = json_array();
    for (size_t k = 0; k < c->tab_cap; k++) {
        const ctld_job_t *cj = c->tab[k];
        if (!cj || cj->array || ctld_job_terminal(cj) || cj->j.state == DR_JOB_PENDING)
            continue;
        for (uint32_t r = 0; r < cj->nnodes; r++) /* its allocation: a batch job's too */
            if (cj->nodes[r] == i) {
                json_array_append_new(jobs, json_integer((json_int_t)cj->j.id));
                break;
            }
    }
    json_t *agent = json_pack(
        "{s:b,s:o,s:s,s:i,s:s}", "connected", n->agent && n->agent->registered, "last_heartbeat",
        n->last_heartbeat ? json_real(dr_time_to_s(n->last_heartbeat)) : json_null(), "source",
        n->source, "gpus_found", (json_int_t)n->disc_gpus, "addr", n->addr);
    json_t *o =
        json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:I,s:o,s:o,s:b,s:I}", "name", cn->name, "state",
                  ctld_node_state(c, i), "reason", n->reason, "gpu_type",
                  cn->ngpus ? c->cl.types[cn->type].name : "", "gpus", (json_int_t)cn->ngpus,
                  "gpus_alloc", (json_int_t)alloc, "cpus", (json_int_t)(cn->cpu_milli / 1000),
                  "mem_mb", (json_int_t)cn->mem_mb, "agent", agent, "jobs", jobs, "revoked",
                  n->revoked, "key_gen", (json_int_t)n->key_gen);
    /* what its GPU-hour costs and where that price comes from: the site's
     * GpuType= line, the catalog's list price, or a type the site declared */
    double price = cn->ngpus ? ctld_price_hr(c, cn->type) : 0;
    const char *src = NULL;
    if (o && price > 0) {
        const dr_gpu_spec_t *g = &c->cl.types[cn->type];
        src = g->source && !strncmp(g->source, "price set by GpuType=", 21) ? "site"
              : dr_catalog_find(&c->cat, g->name)                           ? "catalog"
                                                                            : "declared";
    }
    json_object_set_new(o, "price_per_gpu_hour", src ? json_real(price) : json_null());
    json_object_set_new(o, "price_source", src ? json_string(src) : json_null());
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(o);
    return s;
}

void ctld_node_drain_changed(dr_ctld_t *c, uint32_t node)
{
    c->nodes[node].drain_dirty = true;
    c->drains_dirty = true;
    ctld_turn_schedule(c);
}

static void drain(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who, uint32_t i,
                  bool on)
{
    if (!who->operator_) {
        ctld_reply_error(req, 403, NULL, "only an operator may drain or resume nodes");
        return;
    }
    ctld_node_t *n = &c->nodes[i];
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    json_t *o = len ? json_loadb((const char *)evbuffer_pullup(in, -1), len, 0, NULL) : NULL;
    const char *reason = json_string_value(json_object_get(o, "reason"));
    if (on && (!reason || !*reason)) {
        json_decref(o);
        ctld_reply_error(req, 400, "reason", "a drain needs a reason (--reason TEXT)");
        return;
    }
    char from[16];
    snprintf(from, sizeof from, "%s", ctld_node_state(c, i));
    n->admin_drain = on;
    n->auto_drain = false;
    memset(n->fail_job, 0, sizeof n->fail_job); /* a resumed node starts counting afresh */
    if (on)
        snprintf(n->reason, sizeof n->reason, "drained by %s: %s", who->user, reason);
    else if (!n->agent)
        snprintf(n->reason, sizeof n->reason, "agent not connected");
    else
        n->reason[0] = '\0';
    json_decref(o);
    ctld_node_drain_changed(c, i);
    dr_node_state_t want = on ? DR_NODE_DRAIN : n->agent ? DR_NODE_UP : DR_NODE_DRAIN;
    dr_err_t err = {0};
    bool was_up = c->cl.nodes[i].state == DR_NODE_UP;
    if (c->cl.nodes[i].state != want &&
        dr_sched_node_set_state(c->sched, i, want, ctld_now(c), &err) != DR_OK) {
        ctld_reply_error(req, 409, NULL, "%s", err.msg);
        return;
    }
    if (on)
        ctld_node_note(c, i, "drain", from, "%s", n->reason);
    else
        ctld_node_note(c, i, "resume", from, "resumed by %s", who->user);
    if (on && was_up) /* its jobs with --signal are warned; the drain waits for their ends */
        ctld_drain_signal(c, i);
    ctld_want_pass(c);
    ctld_out_http(c, req, 200, ctld_node_json(c, i), 0); /* after the drain is stored */
}

/* POST /v1/nodes/NAME/revoke|unrevoke: a node whose key was stolen (or a
 * machine taken out for good) is refused from now on; its agent goes now. */
static void revoke(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who, uint32_t i,
                   bool on)
{
    if (!who->operator_) {
        ctld_reply_error(req, 403, NULL, "only an operator may revoke or unrevoke nodes");
        return;
    }
    const char *name = c->cl.nodes[i].name;
    dr_err_t err = {0};
    if (ctld_store_put_revoked(c, name, on, who->user, &err) != DR_OK) {
        ctld_reply_error(req, 507, NULL, "%s", err.msg);
        return;
    }
    ctld_node_t *n = &c->nodes[i];
    n->revoked = on;
    ctld_log("node %s: %s by %s", name, on ? "revoked" : "unrevoked", who->user);
    if (on && n->agent)
        ctld_agent_close(n->agent, "node revoked");
    char *s = ctld_node_json(c, i);
    ctld_reply_json(req, 200, s);
    free(s);
}

/* POST /v1/nodes/NAME/rekey: the node's key generation goes up, so every
 * key it held so far is refused for good (a stolen key stays useless after
 * an unrevoke); its agent goes now and needs the key `droverd --enroll NAME
 * --generation N` writes. */
static void rekey(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who, uint32_t i)
{
    if (!who->operator_) {
        ctld_reply_error(req, 403, NULL, "only an operator may re-key nodes");
        return;
    }
    const char *name = c->cl.nodes[i].name;
    ctld_node_t *n = &c->nodes[i];
    if (n->key_gen == UINT32_MAX) {
        ctld_reply_error(req, 409, NULL, "node %s: key generations exhausted", name);
        return;
    }
    dr_err_t err = {0};
    if (ctld_store_put_key_gen(c, name, n->key_gen + 1, &err) != DR_OK) {
        ctld_reply_error(req, 507, NULL, "%s", err.msg);
        return;
    }
    n->key_gen++;
    ctld_log("node %s: re-keyed by %s (key generation %u)", name, who->user, n->key_gen);
    if (n->agent)
        ctld_agent_close(n->agent, "node re-keyed");
    char *s = ctld_node_json(c, i);
    ctld_reply_json(req, 200, s);
    free(s);
}

void ctld_api_nodes(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                    const char *path)
{
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    if (*path == '\0' || strcmp(path, "/") == 0) {
        struct evbuffer *b = evbuffer_new();
        evbuffer_add_printf(b, "{\"nodes\":[");
        for (size_t i = 0; i < c->cl.nnodes; i++) {
            char *s = ctld_node_json(c, (uint32_t)i);
            evbuffer_add_printf(b, "%s%s", i ? "," : "", s ? s : "null");
            free(s);
        }
        evbuffer_add_printf(b, "]}\n");
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                          "application/json");
        evhttp_send_reply(req, 200, "OK", b);
        evbuffer_free(b);
        return;
    }
    char name[256];
    const char *slash = strchr(path + 1, '/');
    size_t len = slash ? (size_t)(slash - path - 1) : strlen(path + 1);
    if (len >= sizeof name) {
        ctld_reply_error(req, 404, NULL, "no such node");
        return;
    }
    memcpy(name, path + 1, len);
    name[len] = '\0';
    int i = dr_cluster_find_node(&c->cl, name);
    if (i < 0) {
        ctld_reply_error(req, 404, NULL, "node %s: no such node", name);
        return;
    }
    const char *verb = slash ? slash + 1 : "";
    if (!*verb && m == EVHTTP_REQ_GET) {
        char *s = ctld_node_json(c, (uint32_t)i);
        ctld_reply_json(req, 200, s);
        free(s);
    } else if (m == EVHTTP_REQ_POST &&
               (strcmp(verb, "drain") == 0 || strcmp(verb, "resume") == 0)) {
        drain(c, req, who, (uint32_t)i, strcmp(verb, "drain") == 0);
    } else if (m == EVHTTP_REQ_POST &&
               (strcmp(verb, "revoke") == 0 || strcmp(verb, "unrevoke") == 0)) {
        revoke(c, req, who, (uint32_t)i, strcmp(verb, "revoke") == 0);
    } else if (m == EVHTTP_REQ_POST && strcmp(verb, "rekey") == 0) {
        rekey(c, req, who, (uint32_t)i);
    } else {
        ctld_reply_error(req, 404, NULL, "/v1/nodes%s: no such endpoint for this method", path);
    }
}
