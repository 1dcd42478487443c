/* api_history.c - GET /v1/history: the accounting view of finished jobs,
 * like Slurm's sacct (docs/api.md).
 *
 * Rows come from the store's terminal jobs (their final JOB objects), so a
 * job that left memory long ago is still accounted.  Each row adds
 * gpu_hours (GPUs x elapsed hours) and energy_kwh (those GPU-hours at the
 * GPU type's TDP from the catalog; null when the catalog has no TDP: an
 * unknown figure must not read as free).  An array's tasks (a service's
 * replica runs) are rows of their own; its parent is a summary row
 * (array_tasks = how many it sums) that the totals skip, so no GPU-hour is
 * counted twice.  Everyone
 * may read everyone's history, as with GET /v1/jobs. */
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
#include "ctld/http.h"
#include "ctld/store.h"
#include "drover/datetime.h"
#include "drover/util.h"

#define HIST_LIMIT_DEFAULT 10000
#define HIST_LIMIT_MAX     1000000

/* The CSV columns, in order; also the JSON row's members. */
static const char *const cols[] = {
    "id",        "array_parent", "array_index", "array_tasks", "name",     "user",
    "account",   "kind",         "state",       "exit_code",   "gpu_type", "nodelist",
    "nnodes",    "gpus",         "submit_time", "start_time",  "end_time", "elapsed",
    "gpu_hours", "cost_usd",     "energy_kwh"};
#define NCOLS (sizeof cols / sizeof *cols)

static double r6(double x)
{
    return round(x * 1e6) / 1e6;
}

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : 0;
}

/* TDP in watts of the GPU type named `name`; NAN when unknown. */
static double tdp_of(const dr_ctld_t *c, const char *name)
{
    if (!name)
        return NAN;
    for (size_t t = 0; t < c->cl.ntypes; t++)
        if (strcmp(c->cl.types[t].name, name) == 0)
            return isfinite(c->cl.types[t].tdp_w) && c->cl.types[t].tdp_w > 0 ? c->cl.types[t].tdp_w
                                                                              : NAN;
    return NAN;
}

/* gpu_hours and energy of one ran (or never-ran) job: energy NAN = unknown */
static void account_job(const dr_ctld_t *c, const json_t *job, double *gh, double *kwh)
{
    *gh = num(job, "gpus") * num(job, "elapsed") / 3600.0;
    *kwh =
        *gh == 0 ? 0 : *gh * tdp_of(c, json_string_value(json_object_get(job, "gpu_type"))) / 1e3;
}

typedef struct rows {
    json_t *jobs; /* the stored JOB objects, oldest first */
} rows_t;

static void add_row(void *ud, const char *text)
{
    rows_t *r = ud;
    json_t *j = json_loads(text, 0, NULL);
    if (json_is_object(j))
        json_array_append_new(r->jobs, j);
    else
        json_decref(j);
}

typedef struct task_sum {
    const dr_ctld_t *c;
    size_t n;
    double gh, cost, kwh; /* kwh NAN once one task's is unknown */
} task_sum_t;

static void add_task(void *ud, const char *text)
{
    task_sum_t *s = ud;
    json_t *j = json_loads(text, 0, NULL);
    if (!json_is_object(j)) {
        json_decref(j);
        return;
    }
    double gh, kwh;
    account_job(s->c, j, &gh, &kwh);
    s->n++;
    s->gh += gh;
    s->kwh += kwh;
    s->cost += num(j, "cost_usd");
    json_decref(j);
}

/* One history row from a stored JOB object. */
static json_t *hist_row(dr_ctld_t *c, const json_t *job)
{
    json_t *o = json_object();
    for (size_t i = 0; i < NCOLS; i++) {
        json_t *v = json_object_get(job, cols[i]);
        json_object_set(o, cols[i], v ? v : json_null());
    }
    double gh, kwh;
    json_t *tasks = json_object_get(job, "tasks");
    bool parent = json_is_object(tasks) || json_is_object(json_object_get(job, "service"));
    if (parent && json_is_null(json_object_get(job, "array_parent"))) {
        /* an array's or a service's parent: the sums of its (stored, ended)
         * tasks or replica runs, which are rows of their own */
        task_sum_t s = {c, 0, 0, 0, 0};
        ctld_store_list_terminal(c, NULL, (uint64_t)num(job, "id"), (size_t)INT64_MAX, add_task,
                                 &s);
        gh = s.gh;
        kwh = s.kwh;
        json_object_set_new(o, "array_tasks", json_integer((json_int_t)s.n));
        json_object_set_new(o, "cost_usd", json_real(r6(s.cost)));
    } else {
        account_job(c, job, &gh, &kwh);
        json_object_set_new(o, "array_tasks", json_null());
    }
    json_object_set_new(o, "gpu_hours", json_real(r6(gh)));
    json_object_set_new(o, "energy_kwh", isfinite(kwh) ? json_real(r6(kwh)) : json_null());
    return o;
}

/* RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
static void csv_field(struct evbuffer *b, const json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!s[strcspn(s, ",\"\r\n")]) {
            evbuffer_add(b, s, strlen(s));
            return;
        }
        evbuffer_add(b, "\"", 1);
        for (const char *p = s; *p; p++) {
            if (*p == '"')
                evbuffer_add(b, "\"", 1);
            evbuffer_add(b, p, 1);
        }
        evbuffer_add(b, "\"", 1);
    } else if (json_is_integer(v)) {
        evbuffer_add_printf(b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        evbuffer_add_printf(b, "%.15g", json_real_value(v)); /* as the JSON reply writes it */
    } else if (json_is_boolean(v)) {
        evbuffer_add_printf(b, "%s", json_is_true(v) ? "true" : "false");
    } /* null: empty */
}

static void reply_csv(struct evhttp_request *req, const json_t *rows)
{
    struct evbuffer *b = evbuffer_new();
    if (!b) {
        ctld_reply_error(req, 503, NULL, "out of memory");
        return;
    }
    for (size_t i = 0; i < NCOLS; i++)
        evbuffer_add_printf(b, "%s%s", i ? "," : "", cols[i]);
    evbuffer_add(b, "\r\n", 2);
    size_t k;
    json_t *r;
    json_array_foreach(rows, k, r)
    {
        for (size_t i = 0; i < NCOLS; i++) {
            if (i)
                evbuffer_add(b, ",", 1);
            csv_field(b, json_object_get(r, cols[i]));
        }
        evbuffer_add(b, "\r\n", 2);
    }
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/csv; charset=utf-8; header=present");
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

/* state=a,b: every name a terminal state; false names the first bad one */
static bool states_ok(const char *list, char *bad, size_t n)
{
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        bool found = false;
        for (int s = 0; s < DR_JOB_NSTATES && !found; s++) {
            const char *nm = dr_job_state_name((dr_job_state_t)s);
            found = dr_job_state_terminal((dr_job_state_t)s) && strlen(nm) == len &&
                    strncmp(p, nm, len) == 0;
        }
        if (!found) {
            snprintf(bad, n, "%.*s", (int)(len < 64 ? len : 64), p);
            return false;
        }
        if (!p[len])
            return true;
        p += len + 1;
    }
}

static bool parse_time(struct evhttp_request *req, const char *name, const char *v, double *out)
{
    *out = NAN;
    if (!v)
        return true;
    dr_err_t err = {0};
    if (dr_datetime_parse(v, out, &err) != DR_OK) {
        ctld_reply_error(req, 400, name, "%s: %s", name, err.msg);
        return false;
    }
    return true;
}

void ctld_api_history(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who)
{
    (void)who; /* everyone may read it, as the jobs listing */
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
    static const char *const known[] = {"user",  "account", "since", "until",
                                        "state", "limit",   "format"};
    struct evkeyval *kv;
    TAILQ_FOREACH(kv, &q, next)
    {
        bool ok = false;
        for (size_t i = 0; i < sizeof known / sizeof *known && !ok; i++)
            ok = strcmp(kv->key, known[i]) == 0;
        if (!ok) {
            ctld_reply_error(req, 400, kv->key,
                             "%.64s: unknown parameter (user, account, since, until, state, "
                             "limit, format)",
                             kv->key);
            evhttp_clear_headers(&q);
            return;
        }
    }
    ctld_history_q_t hq = {.user = evhttp_find_header(&q, "user"),
                           .account = evhttp_find_header(&q, "account"),
                           .states = evhttp_find_header(&q, "state"),
                           .limit = HIST_LIMIT_DEFAULT};
    const char *lim = evhttp_find_header(&q, "limit");
    const char *fmt = evhttp_find_header(&q, "format");
    bool csv = fmt && strcmp(fmt, "csv") == 0;
    char bad[80];
    uint64_t limit = 0;
    if (!parse_time(req, "since", evhttp_find_header(&q, "since"), &hq.since) ||
        !parse_time(req, "until", evhttp_find_header(&q, "until"), &hq.until)) {
        evhttp_clear_headers(&q);
        return;
    }
    if (isfinite(hq.since) && isfinite(hq.until) && hq.until < hq.since) {
        ctld_reply_error(req, 400, "until", "until: %.0f is before since (%.0f)", hq.until,
                         hq.since);
    } else if (hq.states && !states_ok(hq.states, bad, sizeof bad)) {
        ctld_reply_error(req, 400, "state",
                         "state: '%s' is not a state of a finished job (completed, failed, "
                         "cancelled, timeout)",
                         bad);
    } else if (lim && (dr_parse_u64(lim, &limit) != 0 || limit < 1 || limit > HIST_LIMIT_MAX)) {
        ctld_reply_error(req, 400, "limit", "limit: '%.32s' is not a number from 1 to %d", lim,
                         HIST_LIMIT_MAX);
    } else if (fmt && !csv && strcmp(fmt, "json") != 0) {
        ctld_reply_error(req, 400, "format", "format: '%.32s': use json or csv", fmt);
    } else {
        if (lim)
            hq.limit = (size_t)limit;
        size_t want = hq.limit;
        hq.limit = want + 1; /* one more says whether there was more */
        rows_t r = {json_array()};
        if (ctld_store_history(c, &hq, add_row, &r) != DR_OK) {
            json_decref(r.jobs);
            ctld_reply_error(req, 503, NULL, "store: cannot read the history");
            evhttp_clear_headers(&q);
            return;
        }
        bool truncated = json_array_size(r.jobs) > want;
        if (truncated)
            json_array_remove(r.jobs, 0); /* the oldest: the newest `want` stay */
        json_t *rows = json_array();
        double gh = 0, cost = 0, kwh = 0;
        size_t n = 0, unknown = 0;
        size_t k;
        json_t *j;
        json_array_foreach(r.jobs, k, j)
        {
            json_t *row = hist_row(c, j);
            if (json_is_null(json_object_get(row, "array_tasks"))) {
                /* a job or an array task; parents only summarise these */
                n++;
                gh += num(row, "gpu_hours");
                cost += num(row, "cost_usd");
                if (json_is_number(json_object_get(row, "energy_kwh")))
                    kwh += num(row, "energy_kwh");
                else
                    unknown++;
            }
            json_array_append_new(rows, row);
        }
        json_decref(r.jobs);
        if (csv) {
            reply_csv(req, rows);
        } else {
            json_t *o = json_pack("{s:o,s:{s:I,s:f,s:f,s:f,s:I},s:b,s:o,s:o}", "jobs", rows,
                                  "totals", "jobs", (json_int_t)n, "gpu_hours", r6(gh), "cost_usd",
                                  r6(cost), "energy_kwh", r6(kwh), "energy_unknown",
                                  (json_int_t)unknown, "truncated", truncated, "since",
                                  isfinite(hq.since) ? json_real(hq.since) : json_null(), "until",
                                  isfinite(hq.until) ? json_real(hq.until) : json_null());
            rows = NULL;
            char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
            json_decref(o);
            if (s)
                ctld_reply_json(req, 200, s);
            else
                ctld_reply_error(req, 503, NULL, "out of memory");
            free(s);
        }
        json_decref(rows);
    }
    evhttp_clear_headers(&q);
}
