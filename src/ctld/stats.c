/* stats.c - GET /v1/stats: the cluster now (GPUs by type and state, jobs,
 * the cost rate: metrics.c's snapshot) and its recent past, for the
 * dashboard's charts.  The past is an in-memory ring of samples, one every
 * --stats-interval (10 s), holding the last 24 hours; it starts empty when
 * droverd starts (the store keeps jobs, not samples). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <sys/queue.h>

#include "ctld/ctld.h"
#include "ctld/api.h"
#include "ctld/fence.h"
#include "ctld/http.h"
#include "ctld/metrics.h"
#include "ctld/stats.h"

#define SERIES_SPAN_S 86400.0

struct ctld_series {
    double interval_s;
    size_t cap, n, head; /* samples kept, in use, and the slot of the next one */
    size_t ntypes;
    double *t;
    uint32_t *pending, *running;
    uint32_t *alloc; /* [slot * ntypes + type] */
    int64_t next_at; /* CLOCK_BOOTTIME ns of the next sample */
};

static void sample(dr_ctld_t *c)
{
    struct ctld_series *s = c->series;
    ctld_snap_t snap;
    ctld_snapshot(c, &snap);
    size_t k = s->head;
    s->t[k] = dr_time_to_s(ctld_now(c));
    s->pending[k] = (uint32_t)(snap.pending > UINT32_MAX ? UINT32_MAX : snap.pending);
    s->running[k] = (uint32_t)(snap.running > UINT32_MAX ? UINT32_MAX : snap.running);
    for (size_t t = 0; t < s->ntypes; t++)
        s->alloc[k * s->ntypes + t] = snap.type[t].allocated;
    s->head = (k + 1) % s->cap;
    if (s->n < s->cap)
        s->n++;
}

int ctld_stats_init(dr_ctld_t *c, dr_err_t *err)
{
    struct ctld_series *s = calloc(1, sizeof *s);
    if (!s)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    c->series = s;
    s->interval_s = c->o.stats_interval > 0 ? dr_time_to_s(c->o.stats_interval) : 10;
    s->cap = (size_t)ceil(SERIES_SPAN_S / s->interval_s);
    if (s->cap < 1)
        s->cap = 1;
    s->ntypes = c->cl.ntypes < DR_MAX_GPU_TYPES ? c->cl.ntypes : DR_MAX_GPU_TYPES;
    s->t = calloc(s->cap, sizeof *s->t);
    s->pending = calloc(s->cap, sizeof *s->pending);
    s->running = calloc(s->cap, sizeof *s->running);
    s->alloc = calloc(s->cap * (s->ntypes ? s->ntypes : 1), sizeof *s->alloc);
    if (!s->t || !s->pending || !s->running || !s->alloc)
        return dr_err_set(err, DR_ENOMEM, "out of memory for --stats-interval's samples");
    s->next_at = ctld_boot_ns(); /* the first sample at the first tick */
    return DR_OK;
}

void ctld_stats_free(dr_ctld_t *c)
{
    struct ctld_series *s = c->series;
    if (!s)
        return;
    free(s->t);
    free(s->pending);
    free(s->running);
    free(s->alloc);
    free(s);
    c->series = NULL;
}

void ctld_stats_tick(dr_ctld_t *c)
{
    struct ctld_series *s = c->series;
    if (!s)
        return;
    int64_t now = ctld_boot_ns();
    if (now < s->next_at)
        return;
    sample(c);
    int64_t step = (int64_t)(s->interval_s * 1e9);
    s->next_at += step;
    if (s->next_at <= now) /* the loop was held up: no burst of samples to catch up */
        s->next_at = now + step;
}

/* the present types: those the cluster's nodes have */
static void present_types(const dr_ctld_t *c, bool *present)
{
    memset(present, 0, DR_MAX_GPU_TYPES * sizeof *present);
    for (size_t i = 0; i < c->cl.nnodes; i++)
        if (c->cl.nodes[i].ngpus && c->cl.nodes[i].type < DR_MAX_GPU_TYPES)
            present[c->cl.nodes[i].type] = true;
}

static json_t *stats_json(dr_ctld_t *c, double since)
{
    struct ctld_series *s = c->series;
    ctld_snap_t snap;
    ctld_snapshot(c, &snap);
    bool present[DR_MAX_GPU_TYPES];
    present_types(c, present);
    json_t *types = json_array(), *totals = json_object(), *alloc = json_object();
    for (size_t t = 0; t < c->cl.ntypes && t < DR_MAX_GPU_TYPES; t++) {
        if (!present[t])
            continue;
        const ctld_snap_type_t *st = &snap.type[t];
        double p = c->cl.types[t].price_hr;
        json_array_append_new(
            types, json_pack("{s:s,s:i,s:i,s:i,s:i,s:o}", "type", c->cl.types[t].name, "total",
                             (int)st->total, "allocated", (int)st->allocated, "idle", (int)st->idle,
                             "down", (int)st->down, "usd_per_gpu_hour",
                             isfinite(p) ? json_real(p) : json_null()));
        json_object_set_new(totals, c->cl.types[t].name, json_integer(st->total));
        json_object_set_new(alloc, c->cl.types[t].name, json_array());
    }
    json_t *ts = json_array(), *pend = json_array(), *run = json_array();
    for (size_t i = 0; s && i < s->n; i++) {
        size_t k = (s->head + s->cap - s->n + i) % s->cap; /* oldest first */
        double t_ms = round(s->t[k] * 1e3) / 1e3;          /* as shown: since= is a shown time */
        if (!(t_ms > since))
            continue;
        json_array_append_new(ts, json_real(t_ms));
        json_array_append_new(pend, json_integer(s->pending[k]));
        json_array_append_new(run, json_integer(s->running[k]));
        for (size_t t = 0; t < s->ntypes; t++)
            if (present[t])
                json_array_append_new(json_object_get(alloc, c->cl.types[t].name),
                                      json_integer(s->alloc[k * s->ntypes + t]));
    }
    json_t *series =
        json_pack("{s:f,s:o,s:o,s:o,s:o,s:o}", "interval_s", s ? s->interval_s : 0.0, "t", ts,
                  "pending", pend, "running", run, "allocated", alloc, "total", totals);
    return json_pack("{s:f,s:o,s:f,s:{s:I,s:I,s:I},s:o}", "t", dr_time_to_s(ctld_now(c)), "types",
                     types, "cost_usd_per_hour", round(snap.usd_per_hour * 1e6) / 1e6, "jobs",
                     "pending", (json_int_t)snap.pending, "running", (json_int_t)snap.running,
                     "held", (json_int_t)snap.held, "series", series);
}

void ctld_api_stats(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who)
{
    (void)who; /* any authenticated user: it names no job and no user */
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        ctld_reply_error(req, 405, NULL, "use GET");
        return;
    }
    struct evkeyvalq q;
    TAILQ_INIT(&q);
    const char *qs = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
    if (qs && evhttp_parse_query_str(qs, &q) != 0) {
        ctld_reply_error(req, 400, NULL, "query: cannot parse '%s'", qs);
        return;
    }
    double since = -INFINITY;
    struct evkeyval *kv;
    TAILQ_FOREACH(kv, &q, next)
    {
        if (strcmp(kv->key, "since") != 0) {
            ctld_reply_error(req, 400, kv->key, "%.64s: unknown parameter (since)", kv->key);
            evhttp_clear_headers(&q);
            return;
        }
        if (dr_parse_double(kv->value, &since) != 0 || !isfinite(since)) {
            ctld_reply_error(req, 400, "since", "since: '%.32s' is not a Unix time in seconds",
                             kv->value);
            evhttp_clear_headers(&q);
            return;
        }
    }
    evhttp_clear_headers(&q);
    json_t *o = stats_json(c, since);
    char *s = o ? json_dumps(o, CTLD_JSON_FLAGS) : NULL;
    json_decref(o);
    if (s)
        ctld_reply_json(req, 200, s);
    else
        ctld_reply_error(req, 503, NULL, "out of memory");
    free(s);
}
