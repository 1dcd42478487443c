/* metrics.c - GET /metrics: the controller's state and history as
 * Prometheus metrics (docs/api.md lists each one), and the snapshot of the
 * cluster that /metrics and GET /v1/stats (stats.c) share.
 *
 * Gauges are computed from memory when scraped (jobs, queue, GPUs, nodes);
 * counters and histograms are bumped by hooks where things happen (a
 * request completes, a pass or a commit ends, a submit is acknowledged, a
 * job ends) or, for preemptions, requeues and node failures, from the
 * scheduler's event log once it is committed.  Cost, energy and GPU time
 * accrue once a second from what the running jobs hold.  Every counter
 * starts at 0 when droverd starts (Prometheus' rate() and increase() take
 * resets in their stride); the store keeps the per-job totals
 * (GET /v1/history).  Labels stay bounded: GPU types and accounts come
 * from the config, routes are templates, no label names a job. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "ctld/ctld.h"
#include "ctld/api.h"
#include "ctld/deps.h"
#include "ctld/fence.h"
#include "ctld/http.h"
#include "ctld/metrics.h"
#include "ctld/prom.h"
#include "drover/eventlog.h"

/* Route templates for the request counter: a raw path would make a series
 * per job id.  Routes other helpers serve (events, session, dashboard) are
 * named here so their requests are counted too. */
static const char *const routes[] = {"/v1/ping",
                                     "/v1/tokens",
                                     "/v1/jobs",
                                     "/v1/jobs/{id}",
                                     "/v1/jobs/{id}/output",
                                     "/v1/jobs/{id}/events",
                                     "/v1/jobs/{id}/{action}",
                                     "/v1/nodes",
                                     "/v1/nodes/{name}",
                                     "/v1/nodes/{name}/{action}",
                                     "/v1/history",
                                     "/v1/share",
                                     "/v1/stats",
                                     "/v1/events",
                                     "/v1/session",
                                     "/metrics",
                                     "/ui",
                                     "other"};
#define NROUTES (sizeof routes / sizeof *routes)
static const char *const methods[] = {"GET", "POST", "DELETE", "PATCH", "other"};
#define NMETHODS (sizeof methods / sizeof *methods)
static const int codes[] = {200, 201, 204, 304, 400, 401, 403, 404,
                            405, 409, 413, 429, 500, 503, 507};
#define NCODES (sizeof codes / sizeof *codes) /* [NCODES]: any other code */

static const double pass_le[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                 0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};
static const double commit_le[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                   0.1,    0.25,  0.5,    1,     2.5,  5};
static const double start_le[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,  1,     2.5,
                                  5,     10,   30,    60,   300, 900,  3600, 14400, 86400};
#define NLE(a) ((uint32_t)(sizeof(a) / sizeof(*(a))))

struct ctld_metrics {
    uint64_t http[NROUTES][NMETHODS][NCODES + 1];
    uint64_t submitted[DR_KIND_NKINDS];
    uint64_t ended[DR_JOB_NSTATES][DR_KIND_NKINDS];       /* jobs as submitted */
    uint64_t tasks_ended[DR_JOB_NSTATES][DR_KIND_NKINDS]; /* array tasks, replica runs */
    uint64_t preemptions, requeues, node_failures;
    ctld_hist_t pass, commit, start;
    /* by [type * nacct + account]: account 0 = none, else 1 + cluster index */
    size_t nacct;
    double *usd, *kwh, *gpu_s;
    int64_t accrued_at; /* CLOCK_MONOTONIC ns of the last accrual */
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * DR_NSEC_PER_SEC + ts.tv_nsec;
}

int ctld_metrics_init(dr_ctld_t *c, dr_err_t *err)
{
    struct ctld_metrics *m = calloc(1, sizeof *m);
    if (!m)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    ctld_hist_init(&m->pass, pass_le, NLE(pass_le));
    ctld_hist_init(&m->commit, commit_le, NLE(commit_le));
    ctld_hist_init(&m->start, start_le, NLE(start_le));
    m->nacct = c->cl.naccounts + 1;
    size_t n = (c->cl.ntypes ? c->cl.ntypes : 1) * m->nacct;
    m->usd = calloc(n, sizeof *m->usd);
    m->kwh = calloc(n, sizeof *m->kwh);
    m->gpu_s = calloc(n, sizeof *m->gpu_s);
    m->accrued_at = mono_ns();
    c->metrics = m;
    if (!m->usd || !m->kwh || !m->gpu_s)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    return DR_OK;
}

void ctld_metrics_free(dr_ctld_t *c)
{
    struct ctld_metrics *m = c->metrics;
    if (!m)
        return;
    free(m->usd);
    free(m->kwh);
    free(m->gpu_s);
    free(m);
    c->metrics = NULL;
}

/* ---- the snapshot ---- */

/* Does cj's run hold GPUs now?  (A preempted job stopping still does.) */
static bool holds_gpus(const ctld_job_t *cj)
{
    if (cj->array)
        return false;
    uint8_t s = cj->j.state;
    return s == DR_JOB_STARTING || s == DR_JOB_RUNNING || s == DR_JOB_COMPLETING || cj->stopping;
}

/* What a job is, as the jobs gauge labels it (NULL: terminal, not counted). */
static const char *job_state(const ctld_job_t *cj)
{
    switch (cj->j.state) {
    case DR_JOB_PENDING:
        if (cj->stopping)
            return "stopping"; /* preempted, its processes not yet over (stop.c) */
        if (cj->hold || (!cj->in_sched && !cj->array))
            return "held"; /* -H, drover hold, or waiting for its dependencies */
        return "pending";
    case DR_JOB_STARTING: return "starting";
    case DR_JOB_RUNNING: return "running";
    case DR_JOB_COMPLETING: return "completing";
    default: return NULL;
    }
}

/* Are an array's (a service's) tasks held: the parent by -H or drover
 * hold, or waiting for its dependencies (deps.c keeps it out of the queue until
 * its first task may be made)? */
static bool parent_held(const dr_ctld_t *c, const ctld_job_t *cj)
{
    if (cj->hold)
        return true;
    if (!cj->spec.ndeps || cj->array->next)
        return false;
    return ctld_deps_waiting(c, cj);
}

static double tdp_kw(const dr_ctld_t *c, int t)
{
    if (t < 0 || (size_t)t >= c->cl.ntypes)
        return 0;
    double w = c->cl.types[t].tdp_w;
    return isfinite(w) && w > 0 ? w / 1e3 : 0;
}

void ctld_node_gpu_states(const dr_ctld_t *c, uint32_t i, uint32_t *alloc, uint32_t *idle,
                          uint32_t *down)
{
    const dr_node_t *cn = &c->cl.nodes[i];
    uint32_t used = 0;
    for (uint32_t g = 0; g < cn->ngpus; g++)
        used += c->cl.gpu_free[cn->gpu_base + g] < 1000;
    *alloc = used;
    bool usable = cn->state == DR_NODE_UP && c->nodes && c->nodes[i].agent;
    *idle = usable ? cn->ngpus - used : 0;
    *down = usable ? 0 : cn->ngpus - used;
}

void ctld_snapshot(const dr_ctld_t *c, ctld_snap_t *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < c->cl.nnodes; i++) {
        const dr_node_t *cn = &c->cl.nodes[i];
        if (!cn->ngpus || cn->type >= DR_MAX_GPU_TYPES)
            continue;
        uint32_t a, idle, d;
        ctld_node_gpu_states(c, (uint32_t)i, &a, &idle, &d);
        ctld_snap_type_t *t = &s->type[cn->type];
        t->total += cn->ngpus;
        t->allocated += a;
        t->idle += idle;
        t->down += d;
    }
    for (size_t k = 0; k < c->tab_cap; k++) {
        const ctld_job_t *cj = c->tab[k];
        if (!cj)
            continue;
        if (cj->array) { /* its tasks not yet materialised wait with it */
            if (!ctld_job_terminal(cj))
                *(parent_held(c, cj) ? &s->held : &s->pending) += cj->array->nidx - cj->array->next;
            continue;
        }
        const char *st = job_state(cj);
        if (!st)
            continue;
        if (holds_gpus(cj)) {
            s->running += !cj->stopping;
            s->usd_per_hour += cj->got_gpus * ctld_price_hr(c, cj->got_type);
            s->kw += cj->got_gpus * tdp_kw(c, cj->got_type);
        } else if (strcmp(st, "held") == 0) {
            s->held++;
        } else if (strcmp(st, "pending") == 0) {
            s->pending++;
        }
    }
}

/* ---- hooks ---- */

static size_t route_of(const char *path)
{
    static const struct {
        const char *prefix;
        size_t r; /* routes[] index of the collection; +1 an item, +2 .. its verbs */
    } coll[] = {{"/v1/jobs", 2}, {"/v1/nodes", 7}};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(coll[i].prefix);
        if (strncmp(path, coll[i].prefix, n) != 0 || (path[n] && path[n] != '/'))
            continue;
        const char *rest = path + n;
        if (!*rest || strcmp(rest, "/") == 0)
            return coll[i].r;
        const char *verb = strchr(rest + 1, '/');
        if (!verb || !verb[1])
            return coll[i].r + 1;
        if (i == 0 && strcmp(verb, "/output") == 0)
            return 4;
        if (i == 0 && strcmp(verb, "/events") == 0)
            return 5;
        return i == 0 ? 6 : 9;
    }
    if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0 ||
        strncmp(path, "/ui/", 4) == 0) /* the dashboard's files (ui.c) */
        return 16;
    for (size_t r = 0; r < NROUTES - 1; r++)
        if (!strchr(routes[r], '{') && strcmp(path, routes[r]) == 0)
            return r;
    return NROUTES - 1;
}

static size_t method_of(enum evhttp_cmd_type m)
{
    switch (m) {
    case EVHTTP_REQ_GET: return 0;
    case EVHTTP_REQ_POST: return 1;
    case EVHTTP_REQ_DELETE: return 2;
    case EVHTTP_REQ_PATCH: return 3;
    default: return 4;
    }
}

static void on_complete(struct evhttp_request *req, void *arg)
{
    uint64_t *counts = arg; /* the request's (route, method) row */
    int code = evhttp_request_get_response_code(req);
    size_t i = 0;
    while (i < NCODES && codes[i] != code)
        i++;
    counts[i]++;
}

void ctld_metrics_request(dr_ctld_t *c, struct evhttp_request *req, const char *path)
{
    if (!c->metrics)
        return;
    /* counted once the reply has gone out: a submit's 201 (or 507) comes
     * after the commit, from another callback */
    uint64_t *row = c->metrics->http[route_of(path)][method_of(evhttp_request_get_command(req))];
    evhttp_request_set_on_complete_cb(req, on_complete, row);
}

void ctld_metrics_pass(dr_ctld_t *c, double seconds)
{
    if (c->metrics)
        ctld_hist_observe(&c->metrics->pass, seconds);
}

void ctld_metrics_commit(dr_ctld_t *c, double seconds, bool ok)
{
    if (c->metrics && ok)
        ctld_hist_observe(&c->metrics->commit, seconds);
}

void ctld_metrics_started(dr_ctld_t *c, const ctld_job_t *cj, dr_time_t now)
{
    if (c->metrics && cj->j.nstarts == 1 && now >= cj->j.submit) /* its first start */
        ctld_hist_observe(&c->metrics->start, dr_time_to_s(now - cj->j.submit));
}

void ctld_metrics_submitted(dr_ctld_t *c, uint64_t job)
{
    const ctld_job_t *cj = ctld_job_find(c, job);
    if (c->metrics && cj && cj->j.kind < DR_KIND_NKINDS)
        c->metrics->submitted[cj->j.kind]++;
}

void ctld_metrics_ended(dr_ctld_t *c, const ctld_job_t *cj)
{
    if (!c->metrics || cj->j.state >= DR_JOB_NSTATES || cj->j.kind >= DR_KIND_NKINDS)
        return;
    if (cj->parent)
        c->metrics->tasks_ended[cj->j.state][cj->j.kind]++;
    else
        c->metrics->ended[cj->j.state][cj->j.kind]++;
}

void ctld_metrics_committed(dr_ctld_t *c, const struct dr_eventlog *log)
{
    struct ctld_metrics *m = c->metrics;
    if (!m)
        return;
    for (size_t i = 0; i < log->n; i++) {
        m->preemptions += log->ev[i].to == DR_JOB_PREEMPTED;
        m->requeues += log->ev[i].to == DR_JOB_REQUEUED;
    }
    for (size_t i = 0; i < log->nnode; i++)
        m->node_failures +=
            log->node_ev[i].to == DR_NODE_DOWN && log->node_ev[i].from != DR_NODE_DOWN;
}

void ctld_metrics_tick(dr_ctld_t *c)
{
    struct ctld_metrics *m = c->metrics;
    if (!m || !c->cl.ntypes)
        return;
    int64_t now = mono_ns();
    double dt = (double)(now - m->accrued_at) / 1e9;
    m->accrued_at = now;
    if (dt <= 0)
        return;
    for (size_t k = 0; k < c->tab_cap; k++) {
        const ctld_job_t *cj = c->tab[k];
        if (!cj || !holds_gpus(cj) || cj->got_type < 0 || (size_t)cj->got_type >= c->cl.ntypes ||
            !cj->got_gpus)
            continue;
        size_t a = cj->j.account < m->nacct ? cj->j.account : 0;
        size_t at = (size_t)cj->got_type * m->nacct + a;
        double gs = dt * cj->got_gpus;
        m->gpu_s[at] += gs;
        m->usd[at] += gs / 3600.0 * ctld_price_hr(c, cj->got_type);
        m->kwh[at] += gs / 3600.0 * tdp_kw(c, cj->got_type);
    }
}

/* ---- GET /metrics ---- */

static const char *acct_name(const dr_ctld_t *c, size_t a)
{
    return a == 0 ? "none" : c->cl.accounts[a - 1].name;
}

/* The GPU types a pending job may take: "any", or the cluster's names
 * of its mask, comma-separated in the config's order. */
static void types_label(const dr_ctld_t *c, dr_typemask_t mask, char *out, size_t n)
{
    if (!mask) {
        snprintf(out, n, "any");
        return;
    }
    size_t len = 0;
    out[0] = '\0';
    for (size_t t = 0; t < c->cl.ntypes && len + 1 < n; t++)
        if (mask & ((dr_typemask_t)1 << t))
            len +=
                (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "", c->cl.types[t].name);
}

typedef struct queue_key {
    dr_typemask_t mask;
    uint32_t account;
    uint64_t n;
    dr_time_t oldest;
} queue_key_t;

#define MAX_QUEUE_KEYS 512 /* distinct (types, account) pairs; the rest fold into the last */

static void queue_add(queue_key_t *q, size_t *nq, dr_typemask_t mask, uint32_t account, uint64_t n,
                      dr_time_t submit)
{
    size_t i = 0;
    while (i < *nq && (q[i].mask != mask || q[i].account != account))
        i++;
    if (i == *nq) {
        if (*nq == MAX_QUEUE_KEYS)
            i = *nq - 1;
        else
            q[(*nq)++] = (queue_key_t){.mask = mask, .account = account, .oldest = submit};
    }
    q[i].n += n;
    if (submit < q[i].oldest)
        q[i].oldest = submit;
}

static void render_jobs(dr_ctld_t *c, struct evbuffer *b, dr_time_t now)
{
    static const char *const states[] = {"pending",  "held",    "stopping",
                                         "starting", "running", "completing"};
    uint64_t by[6][DR_KIND_NKINDS] = {{0}};
    queue_key_t *q = calloc(MAX_QUEUE_KEYS, sizeof *q);
    size_t nq = 0;
    size_t nacct = c->metrics->nacct;
    for (size_t k = 0; k < c->tab_cap; k++) {
        const ctld_job_t *cj = c->tab[k];
        if (!cj || ctld_job_terminal(cj) || cj->j.kind >= DR_KIND_NKINDS)
            continue;
        uint32_t acct = cj->j.account < nacct ? cj->j.account : 0;
        if (cj->array) {
            uint64_t left = cj->array->nidx - cj->array->next;
            bool held = parent_held(c, cj);
            by[held ? 1 : 0][cj->j.kind] += left;
            if (left && !held && q)
                queue_add(q, &nq, cj->j.req.types, acct, left, cj->j.submit);
            continue;
        }
        const char *st = job_state(cj);
        for (size_t s = 0; st && s < 6; s++)
            if (strcmp(st, states[s]) == 0)
                by[s][cj->j.kind]++;
        if (st && strcmp(st, "pending") == 0 && q)
            queue_add(q, &nq, cj->j.req.types, acct, 1, cj->j.submit);
    }
    ctld_prom_family(b, "drover_jobs", "gauge",
                     "Jobs in the controller's memory by state and kind (an array's tasks not yet "
                     "started count as pending or held; ended jobs are not counted).");
    for (size_t s = 0; s < 6; s++)
        for (int k = 0; k < DR_KIND_NKINDS; k++)
            ctld_prom_sample(b, "drover_jobs", (double)by[s][k], 2, "state", states[s], "kind",
                             dr_job_kind_name((dr_job_kind_t)k));
    ctld_prom_family(
        b, "drover_queue_jobs", "gauge",
        "Pending jobs waiting in the queue, by the GPU types they may take and account.");
    char tl[512];
    for (size_t i = 0; i < nq; i++) {
        types_label(c, q[i].mask, tl, sizeof tl);
        ctld_prom_sample(b, "drover_queue_jobs", (double)q[i].n, 2, "gpu_type", tl, "account",
                         acct_name(c, q[i].account));
    }
    ctld_prom_family(b, "drover_queue_oldest_pending_seconds", "gauge",
                     "Seconds the oldest pending job of the queue has waited since its submit, by "
                     "the GPU types it may take and account.");
    for (size_t i = 0; i < nq; i++) {
        types_label(c, q[i].mask, tl, sizeof tl);
        double age = now > q[i].oldest ? dr_time_to_s(now - q[i].oldest) : 0;
        ctld_prom_sample(b, "drover_queue_oldest_pending_seconds", age, 2, "gpu_type", tl,
                         "account", acct_name(c, q[i].account));
    }
    free(q);
}

static void render_nodes(dr_ctld_t *c, struct evbuffer *b)
{
    ctld_prom_family(b, "drover_gpus", "gauge",
                     "GPUs by type, node and state: allocated (any share held by a job), idle "
                     "(free on a node that takes work), down (free on a node that is down, drained "
                     "or without its agent).");
    for (size_t i = 0; i < c->cl.nnodes; i++) {
        const dr_node_t *cn = &c->cl.nodes[i];
        if (!cn->ngpus)
            continue;
        uint32_t a, idle, d;
        ctld_node_gpu_states(c, (uint32_t)i, &a, &idle, &d);
        const char *t = c->cl.types[cn->type].name;
        ctld_prom_sample(b, "drover_gpus", a, 3, "type", t, "node", cn->name, "state", "allocated");
        ctld_prom_sample(b, "drover_gpus", idle, 3, "type", t, "node", cn->name, "state", "idle");
        ctld_prom_sample(b, "drover_gpus", d, 3, "type", t, "node", cn->name, "state", "down");
    }
    ctld_prom_family(b, "drover_node_up", "gauge",
                     "1 when the node takes work (up, its agent connected), else 0.");
    for (size_t i = 0; i < c->cl.nnodes; i++)
        ctld_prom_sample(b, "drover_node_up",
                         c->cl.nodes[i].state == DR_NODE_UP && c->nodes[i].agent ? 1 : 0, 1, "node",
                         c->cl.nodes[i].name);
    ctld_prom_family(b, "drover_node_drained", "gauge",
                     "1 when an operator (or NodeFailDrain=) drained the node, else 0.");
    for (size_t i = 0; i < c->cl.nnodes; i++)
        ctld_prom_sample(b, "drover_node_drained", c->nodes[i].admin_drain ? 1 : 0, 1, "node",
                         c->cl.nodes[i].name);
    ctld_prom_family(b, "drover_node_heartbeat_age_seconds", "gauge",
                     "Seconds since the controller last heard the node's agent (absent until its "
                     "agent has been heard since the controller started).");
    int64_t boot = ctld_boot_ns();
    for (size_t i = 0; i < c->cl.nnodes; i++)
        if (c->nodes[i].heard_boot)
            ctld_prom_sample(b, "drover_node_heartbeat_age_seconds",
                             (double)(boot - c->nodes[i].heard_boot) / 1e9, 1, "node",
                             c->cl.nodes[i].name);
}

static void render_counter_kinds(struct evbuffer *b, const char *name, const char *help,
                                 const uint64_t (*by)[DR_KIND_NKINDS])
{
    ctld_prom_family(b, name, "counter", help);
    for (int s = 0; s < DR_JOB_NSTATES; s++) {
        if (!dr_job_state_terminal((dr_job_state_t)s))
            continue;
        for (int k = 0; k < DR_KIND_NKINDS; k++)
            ctld_prom_sample(b, name, (double)by[s][k], 2, "state",
                             dr_job_state_name((dr_job_state_t)s), "kind",
                             dr_job_kind_name((dr_job_kind_t)k));
    }
}

static void render_accrued(dr_ctld_t *c, struct evbuffer *b, const char *name, const char *help,
                           const double *v)
{
    struct ctld_metrics *m = c->metrics;
    bool present[DR_MAX_GPU_TYPES] = {false}; /* the types this cluster's nodes have */
    for (size_t i = 0; i < c->cl.nnodes; i++)
        if (c->cl.nodes[i].ngpus && c->cl.nodes[i].type < DR_MAX_GPU_TYPES)
            present[c->cl.nodes[i].type] = true;
    ctld_prom_family(b, name, "counter", help);
    for (size_t t = 0; t < c->cl.ntypes && t < DR_MAX_GPU_TYPES; t++)
        for (size_t a = 0; present[t] && a < m->nacct; a++)
            ctld_prom_sample(b, name, v[t * m->nacct + a], 2, "gpu_type", c->cl.types[t].name,
                             "account", acct_name(c, a));
}

static void render_http(dr_ctld_t *c, struct evbuffer *b)
{
    struct ctld_metrics *m = c->metrics;
    ctld_prom_family(b, "drover_http_requests_total", "counter",
                     "HTTP requests answered, by route template, method and status code.");
    char code[8];
    for (size_t r = 0; r < NROUTES; r++)
        for (size_t k = 0; k < NMETHODS; k++)
            for (size_t i = 0; i <= NCODES; i++) {
                if (!m->http[r][k][i])
                    continue; /* only what happened: routes x methods x codes is mostly empty */
                if (i < NCODES)
                    snprintf(code, sizeof code, "%d", codes[i]);
                else
                    snprintf(code, sizeof code, "other");
                ctld_prom_sample(b, "drover_http_requests_total", (double)m->http[r][k][i], 3,
                                 "route", routes[r], "method", methods[k], "code", code);
            }
}

static void render(dr_ctld_t *c, struct evbuffer *b)
{
    struct ctld_metrics *m = c->metrics;
    dr_time_t now = ctld_now(c);
    ctld_metrics_tick(c); /* what ran until now is in the counters */
    ctld_prom_family(b, "drover_build_info", "gauge", "1, labelled with droverd's version.");
    ctld_prom_sample(b, "drover_build_info", 1, 1, "version", CTLD_VERSION);
    ctld_prom_family(b, "drover_controller_epoch", "gauge",
                     "The controller's epoch: one more at each start of droverd on this store.");
    ctld_prom_sample(b, "drover_controller_epoch", (double)c->epoch, 0);
    ctld_prom_family(b, "drover_controller_start_time_seconds", "gauge",
                     "Unix time droverd started at (counters count from then).");
    ctld_prom_sample(b, "drover_controller_start_time_seconds",
                     dr_time_to_s(now) - (double)(ctld_boot_ns() - c->start_boot) / 1e9, 0);
    render_jobs(c, b, now);
    render_nodes(c, b);

    ctld_prom_family(b, "drover_jobs_submitted_total", "counter",
                     "Submits acknowledged (201 after the commit), by kind; an array or a service "
                     "counts once.");
    for (int k = 0; k < DR_KIND_NKINDS; k++)
        ctld_prom_sample(b, "drover_jobs_submitted_total", (double)m->submitted[k], 1, "kind",
                         dr_job_kind_name((dr_job_kind_t)k));
    render_counter_kinds(
        b, "drover_jobs_ended_total",
        "Submitted jobs that reached a final state, by state and kind (an array or "
        "a service once, when it ends).",
        (const uint64_t(*)[DR_KIND_NKINDS])m->ended);
    render_counter_kinds(b, "drover_tasks_ended_total",
                         "Array tasks and service replica runs that reached a final state.",
                         (const uint64_t(*)[DR_KIND_NKINDS])m->tasks_ended);
    ctld_prom_family(b, "drover_preemptions_total", "counter",
                     "Runs stopped by the scheduler to make room (preempted).");
    ctld_prom_sample(b, "drover_preemptions_total", (double)m->preemptions, 0);
    ctld_prom_family(b, "drover_requeues_total", "counter",
                     "Runs put back in the queue after losing a node.");
    ctld_prom_sample(b, "drover_requeues_total", (double)m->requeues, 0);
    ctld_prom_family(b, "drover_node_failures_total", "counter",
                     "Times a node was declared down (its agent lost past its lease).");
    ctld_prom_sample(b, "drover_node_failures_total", (double)m->node_failures, 0);
    ctld_prom_family(b, "drover_launches_total", "counter", "LAUNCH messages sent to agents.");
    ctld_prom_sample(b, "drover_launches_total", (double)c->st.launches, 0);
    ctld_prom_family(b, "drover_agent_frames_dropped_total", "counter",
                     "Agent frames dropped: forged, corrupted or replayed.");
    ctld_prom_sample(b, "drover_agent_frames_dropped_total", (double)c->st.frames_dropped, 0);
    ctld_prom_family(b, "drover_store_commit_failures_total", "counter",
                     "Turns whose commit to the store failed (a full disk: submits get 507).");
    ctld_prom_sample(b, "drover_store_commit_failures_total", (double)c->st.commit_fail, 0);

    ctld_prom_family(b, "drover_scheduling_pass_seconds", "histogram",
                     "Duration of the scheduling passes.");
    ctld_prom_hist(b, "drover_scheduling_pass_seconds", &m->pass);
    ctld_prom_family(b, "drover_store_commit_seconds", "histogram",
                     "Duration of the store's commits (one per turn that changed something).");
    ctld_prom_hist(b, "drover_store_commit_seconds", &m->commit);
    ctld_prom_family(b, "drover_job_start_latency_seconds", "histogram",
                     "Seconds from a job's submit to its first start (the pass that placed it).");
    ctld_prom_hist(b, "drover_job_start_latency_seconds", &m->start);

    render_accrued(c, b, "drover_gpu_seconds_total",
                   "GPU-seconds held by running jobs, by GPU type and account (since droverd "
                   "started).",
                   m->gpu_s);
    render_accrued(c, b, "drover_cost_dollars_total",
                   "Cost accrued by running jobs at the type's price per GPU-hour (the site's "
                   "PricePerGpuHour=, else the catalog's), in US dollars, by GPU type and account "
                   "(since droverd started).",
                   m->usd);
    render_accrued(c, b, "drover_energy_kwh_total",
                   "Energy of the GPUs running jobs hold at the catalog's TDP, in kWh, by GPU "
                   "type and account (since droverd started; 0 for a type of unknown TDP).",
                   m->kwh);
    ctld_snap_t s;
    ctld_snapshot(c, &s);
    ctld_prom_family(b, "drover_cost_dollars_per_hour", "gauge",
                     "US dollars per hour of the GPUs the running jobs hold now.");
    ctld_prom_sample(b, "drover_cost_dollars_per_hour", s.usd_per_hour, 0);
    render_http(c, b);
}

void ctld_api_metrics(dr_ctld_t *c, struct evhttp_request *req)
{
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        ctld_reply_error(req, 405, NULL, "use GET");
        return;
    }
    struct evbuffer *b = evbuffer_new();
    if (!b || !c->metrics) {
        if (b)
            evbuffer_free(b);
        ctld_reply_error(req, 503, NULL, "out of memory");
        return;
    }
    render(c, b);
    ctld_reply_buffer(req, 200, "text/plain; version=0.0.4; charset=utf-8", b);
    evbuffer_free(b);
}
