/* api_jobs.c - the /v1/jobs endpoints (docs/api.md).
 *
 * A submit is parsed with the shared job-field vocabulary (jobspec.h),
 * checked against the cluster, and acknowledged (201) only after the turn
 * that holds it has committed.  Errors name the field.  Everyone may list
 * and show jobs, as with Slurm's squeue; only the owner or an operator may
 * cancel a job or read its output. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <sys/queue.h>
#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/accounts.h"
#include "ctld/admit.h"
#include "ctld/api.h"
#include "ctld/arrays.h"
#include "ctld/crashpoint.h"
#include "ctld/deps.h"
#include "ctld/holds.h"
#include "ctld/http.h"
#include "ctld/kill.h"
#include "ctld/outbox.h"
#include "ctld/ratelimit.h"
#include "ctld/services.h"
#include "ctld/store.h"
#include "ctld/submit.h"
#include "ctld/test_only.h"
#include "ctld/output.h"
#include "drover/joblist.h"
#include "drover/util.h"

#define OUTPUT_CHUNK (1u << 20)

/* "field: reason" -> field (up to the first ':'), for the error object. */
static void field_of(const char *msg, char *out, size_t n)
{
    size_t k = strcspn(msg, ": ");
    if (k >= n || msg[k] != ':')
        k = 0;
    memcpy(out, msg, k);
    out[k] = '\0';
}

/* ?test_only=1 (or true): only the start estimate (test_only.c). */
static bool query_test_only(struct evhttp_request *req)
{
    const char *qs = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
    struct evkeyvalq q;
    TAILQ_INIT(&q);
    if (!qs || evhttp_parse_query_str(qs, &q) != 0)
        return false;
    const char *v = evhttp_find_header(&q, "test_only");
    bool on = v && (strcmp(v, "1") == 0 || dr_streq_ci(v, "true") || dr_streq_ci(v, "yes"));
    evhttp_clear_headers(&q);
    return on;
}

/* --submit-rate: 0, or -1 once the 429 with Retry-After has gone out. */
static int rate_admit(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who)
{
    double retry_s;
    dr_err_t rl = {0};
    if (ctld_rate_admit(c, who->user, ctld_now(c), &retry_s, &rl) == DR_OK)
        return 0;
    char ra[32]; /* whole seconds, rounded up (RFC 9110) */
    snprintf(ra, sizeof ra, "%.0f", retry_s < 1 ? 1 : retry_s + 0.5);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", ra);
    ctld_reply_error(req, 429, NULL, "%s", rl.msg);
    return -1;
}

static void submit(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who)
{
    bool test_only = query_test_only(req);
    if (c->store_fail[0] && !test_only) {
        /* nothing new is taken while nothing can be made durable; what runs
         * runs on, and the store is retried every second */
        ctld_reply_error(req, 507, NULL,
                         "the controller cannot write its state directory (%s) for %.0f s; "
                         "submits are refused until it can (free space in --state %s)",
                         c->store_fail, dr_time_to_s(ctld_now(c) - c->store_fail_since),
                         c->o.state_dir);
        return;
    }
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    if (!len) {
        ctld_reply_error(req, 400, NULL, "body: a job (JSON object) is required");
        return;
    }
    dr_err_t err = {0};
    int status = ctld_admit_user(c, who, &err);
    if (status) {
        ctld_reply_error(req, status, "user", "%s", err.msg);
        return;
    }
    const char *body = (const char *)evbuffer_pullup(in, -1);
    dr_time_t now = ctld_now(c);
    ctld_job_t *cj = NULL;
    int rc = ctld_job_new(body, len, &cj, &err);
    if (rc == DR_OK && (status = ctld_admit_size(c, &cj->spec, &err)) != 0) {
        ctld_reply_error(req, status, NULL, "%s", err.msg);
        ctld_job_free(cj);
        return;
    }
    int limit_status = 413;
    if (rc == DR_OK)
        rc = ctld_job_check(c, cj, who->user, now, &limit_status, &err);
    if (rc == DR_ENOSPC && (test_only || cj->spec.test_only == 1)) {
        /* more than the cluster has: a test-only answer, never (a submit's 400) */
        ctld_test_only_never(req, err.msg);
        ctld_job_free(cj);
        return;
    }
    if (rc != DR_OK) {
        char field[64];
        field_of(err.msg, field, sizeof field);
        ctld_reply_error(req,
                         rc == DR_ENOMEM   ? 503
                         : rc == DR_ELIMIT ? limit_status
                                           : 400,
                         field, "%s", err.msg);
        ctld_job_free(cj);
        return;
    }
    /* a well-formed request only is charged to the submit rate: a
     * malformed one is a 400 however many come (and never a 429) */
    if ((status = ctld_admit_quota(c, who->user, cj->spec_bytes, &err)) != 0 ||
        (status = rate_admit(c, req, who)) != 0) {
        if (status != -1)
            ctld_reply_error(req, status, NULL, "%s", err.msg);
        ctld_job_free(cj);
        return;
    }
    if (test_only || cj->spec.test_only == 1) {
        /* checked as a submit would be; nothing is inserted or stored */
        cj->user = dr_strdup(who->user); /* its singleton dependency */
        ctld_test_only(c, req, cj, now);
        ctld_job_free(cj);
        return;
    }
    rc = ctld_job_accept(c, cj, who->user, who->uid, who->gid, now, &err);
    if (rc != DR_OK) {
        ctld_reply_error(req, rc == DR_ENOMEM ? 503 : 400, NULL, "%s", err.msg);
        return;
    }
    json_t *o = json_pack("{s:I,s:s}", "id", (json_int_t)cj->j.id, "state", "pending");
    if (cj->array && cj->array->svc)
        json_object_set_new(o, "replicas", json_integer(cj->array->svc->want));
    else if (cj->array)
        json_object_set_new(o, "array_tasks", json_integer(cj->array->nidx));
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(o);
    ctld_out_http(c, req, 201, s, cj->j.id);
    CTLD_CRASH_POINT(c, "submit-before-commit");    /* accepted in memory only */
    ctld_crash_after_commit("submit-after-commit"); /* stored, never answered */
}

/* ---- listing ---- */

static bool state_in(const char *states, const char *name)
{
    if (!states)
        return true;
    size_t n = strlen(name);
    for (const char *p = states; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

/* A listing being written: JOB objects (JSON) or rows (format=tsv,
 * drover/joblist.h), through a buffer here into the reply's evbuffer (one
 * evbuffer_add per 64 KiB, no allocation per job). */
typedef struct list_out {
    dr_ctld_t *c;
    struct evbuffer *b;
    bool tsv;
    const char *states; /* the query's, for the store's rows; NULL = any */
    double now;         /* Unix seconds: TIME of a waiting job */
    size_t n;           /* jobs written */
    size_t stored;      /* rows the store gave */
    size_t len;
    char buf[64u << 10];
} list_out_t;

static void out_flush(list_out_t *o)
{
    if (o->len)
        evbuffer_add(o->b, o->buf, o->len);
    o->len = 0;
}

static void out_put(list_out_t *o, const char *s, size_t n)
{
    if (n > sizeof o->buf - o->len) {
        out_flush(o);
        if (n > sizeof o->buf) {
            evbuffer_add(o->b, s, n);
            return;
        }
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static int out_dump(const char *s, size_t n, void *ud)
{
    out_put(ud, s, n);
    return 0;
}

static void out_row(list_out_t *o, const dr_joblist_row_t *r)
{
    size_t need = dr_joblist_row_max(r);
    if (need > sizeof o->buf - o->len) {
        out_flush(o);
        if (need > sizeof o->buf) { /* a row longer than the buffer: straight in */
            struct evbuffer_iovec v;
            if (evbuffer_reserve_space(o->b, (ev_ssize_t)need, &v, 1) < 1)
                return;
            v.iov_len = dr_joblist_row_write(r, v.iov_base);
            evbuffer_commit_space(o->b, &v, 1);
            return;
        }
    }
    o->len += dr_joblist_row_write(r, o->buf + o->len);
}

/* A job in memory. */
static void out_job(list_out_t *o, const ctld_job_t *cj)
{
    if (o->tsv) {
        dr_joblist_row_t r;
        char *nl = ctld_job_row(o->c, cj, o->now, &r);
        out_row(o, &r);
        free(nl);
    } else {
        json_t *j = ctld_job_obj(o->c, cj);
        if (!j)
            return;
        if (o->n)
            out_put(o, ",", 1);
        json_dump_callback(j, out_dump, o, CTLD_JSON_FLAGS);
        json_decref(j);
    }
    o->n++;
}

/* An ended job: the store's final JOB object, its state filtered here. */
static void out_stored(void *ud, const char *json)
{
    list_out_t *o = ud;
    o->stored++;
    json_t *v = json_loads(json, 0, NULL);
    const char *st = json_string_value(json_object_get(v, "state"));
    if (st && state_in(o->states, st)) {
        if (o->tsv) {
            dr_joblist_row_t r;
            dr_joblist_from_json(v, o->now, &r);
            out_row(o, &r);
        } else {
            if (o->n)
                out_put(o, ",", 1);
            out_put(o, json, strlen(json)); /* as it was stored: ctld_job_json's text */
        }
        o->n++;
    }
    json_decref(v);
}

static int cmp_id(const void *a, const void *b)
{
    uint64_t x = (*(ctld_job_t *const *)a)->j.id, y = (*(ctld_job_t *const *)b)->j.id;
    return x < y ? -1 : x > y;
}

static void list(dr_ctld_t *c, struct evhttp_request *req)
{
    struct evkeyvalq q;
    TAILQ_INIT(&q);
    const char *qs = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
    if (qs && evhttp_parse_query_str(qs, &q) != 0) {
        ctld_reply_error(req, 400, NULL, "query: cannot parse '%s'", qs);
        return;
    }
    const char *states = evhttp_find_header(&q, "state");
    const char *user = evhttp_find_header(&q, "user");
    const char *arr = evhttp_find_header(&q, "array");
    const char *all = evhttp_find_header(&q, "all");
    const char *lim = evhttp_find_header(&q, "limit");
    const char *fmt = evhttp_find_header(&q, "format");
    uint64_t array = 0, limit = 10000;
    if ((arr && dr_parse_u64(arr, &array) != 0) || (lim && dr_parse_u64(lim, &limit) != 0)) {
        ctld_reply_error(req, 400, arr ? "array" : "limit", "%s: not a number",
                         arr ? "array" : "limit");
        evhttp_clear_headers(&q);
        return;
    }
    if (fmt && strcmp(fmt, "json") != 0 && strcmp(fmt, "tsv") != 0) {
        ctld_reply_error(req, 400, "format", "format: '%.32s': use json or tsv", fmt);
        evhttp_clear_headers(&q);
        return;
    }
    if (limit == 0)
        limit = UINT64_MAX; /* limit=0: every job */
    bool terminal_wanted = (all && strcmp(all, "0") != 0);
    for (int s = 0; s < DR_JOB_NSTATES; s++)
        if (states && dr_job_state_terminal((dr_job_state_t)s) &&
            state_in(states, dr_job_state_name((dr_job_state_t)s)))
            terminal_wanted = true;
    size_t n = 0, cap = 0;
    ctld_job_t **hit = NULL;
    for (size_t i = 0; i < c->tab_cap; i++) {
        ctld_job_t *cj = c->tab[i];
        if (!cj || ctld_job_terminal(cj))
            continue;
        if (array ? cj->j.array_parent != array : (cj->parent && cj->j.state == DR_JOB_PENDING))
            continue; /* a pending task is counted in its parent */
        if (user && strcmp(user, cj->user) != 0)
            continue;
        if (!state_in(states, ctld_job_state_name(cj)))
            continue;
        if (dr_grow((void **)&hit, &cap, n + 1, sizeof *hit) == 0)
            hit[n++] = cj;
    }
    if (n)
        qsort(hit, n, sizeof *hit, cmp_id);
    list_out_t *o = malloc(sizeof *o);
    struct evbuffer *b = o ? evbuffer_new() : NULL;
    if (!b) {
        free(o);
        free(hit);
        evhttp_clear_headers(&q);
        ctld_reply_error(req, 503, NULL, "out of memory");
        return;
    }
    o->c = c;
    o->b = b;
    o->tsv = fmt && strcmp(fmt, "tsv") == 0;
    o->states = states;
    o->now = dr_time_to_s(ctld_now(c));
    o->n = o->stored = o->len = 0;
    if (o->tsv)
        out_put(o, DR_JOBLIST_HEADER, sizeof DR_JOBLIST_HEADER - 1);
    else
        out_put(o, "{\"jobs\":[", strlen("{\"jobs\":["));
    for (size_t i = 0; i < n && o->n < limit; i++)
        out_job(o, hit[i]);
    /* a listing cut at the limit says so: a client must not take it for all */
    bool truncated = n > limit;
    free(hit);
    if (terminal_wanted && o->n < limit) {
        size_t room = limit - o->n > SIZE_MAX ? SIZE_MAX : (size_t)(limit - o->n);
        ctld_store_list_terminal(c, user, array, room, out_stored, o);
        truncated |= o->stored >= room && room != SIZE_MAX;
    }
    const char *tail = o->tsv      ? (truncated ? DR_JOBLIST_TRUNCATED : "")
                       : truncated ? "],\"truncated\":true}\n"
                                   : "],\"truncated\":false}\n";
    out_put(o, tail, strlen(tail));
    out_flush(o);
    ctld_reply_buffer(req, 200, o->tsv ? DR_JOBLIST_CTYPE : "application/json", b);
    evbuffer_free(b);
    free(o);
    evhttp_clear_headers(&q);
}

/* ---- one job ---- */

static char *job_json_any(dr_ctld_t *c, uint64_t id, char **owner)
{
    ctld_job_t *cj = ctld_job_find(c, id);
    if (cj) {
        if (owner)
            *owner = dr_strdup(cj->user);
        return ctld_job_json(c, cj);
    }
    return ctld_store_job_json(c, id, owner);
}

static bool may_touch(const ctld_who_t *who, const char *owner)
{
    return who->operator_ || (owner && strcmp(owner, who->user) == 0);
}

/* GET /v1/jobs/ID/output: the bytes come from the node that ran the job,
 * read there by its agent as the job's user (output.c); droverd never
 * opens the path a user named. */
static void output(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who, uint64_t id)
{
    char *owner = NULL;
    char *js = job_json_any(c, id, &owner);
    if (!js) {
        ctld_reply_error(req, 404, NULL, "job %llu: no such job", (unsigned long long)id);
        return;
    }
    if (!may_touch(who, owner)) {
        ctld_reply_error(req, 403, NULL, "job %llu belongs to %s; you are %s",
                         (unsigned long long)id, owner, who->user);
        free(js);
        free(owner);
        return;
    }
    bool own = owner && strcmp(owner, who->user) == 0;
    free(owner);
    struct evkeyvalq q;
    TAILQ_INIT(&q);
    const char *qs = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
    if (qs)
        evhttp_parse_query_str(qs, &q);
    const char *stream = evhttp_find_header(&q, "stream");
    const char *off_s = evhttp_find_header(&q, "offset");
    const char *lim_s = evhttp_find_header(&q, "limit");
    uint64_t off = 0, lim = OUTPUT_CHUNK;
    bool bad =
        (off_s && dr_parse_u64(off_s, &off) != 0) || (lim_s && dr_parse_u64(lim_s, &lim) != 0);
    bool err_stream = stream && strcmp(stream, "stderr") == 0;
    json_t *o = bad ? NULL : json_loads(js, 0, NULL);
    free(js);
    if (bad || !o) {
        ctld_reply_error(req, bad ? 400 : 500, bad ? (off_s ? "offset" : "limit") : NULL, "%s",
                         bad ? (off_s ? "offset: not a number" : "limit: not a number")
                             : "the job's record is unreadable");
        evhttp_clear_headers(&q);
        json_decref(o);
        return;
    }
    evhttp_clear_headers(&q);
    const char *path = json_string_value(json_object_get(o, err_stream ? "err_path" : "out_path"));
    const char *state = json_string_value(json_object_get(o, "state"));
    const char *node = json_string_value(json_array_get(json_object_get(o, "nodes"), 0));
    json_t *uid = json_object_get(o, "uid"), *gid = json_object_get(o, "gid");
    int ni = node ? dr_cluster_find_node(&c->cl, node) : -1;
    if (!path || !*path || ni < 0) {
        ctld_reply_error(req, 404, NULL, "job %llu: no output yet (%s)", (unsigned long long)id,
                         ni < 0 ? "it has not run on any node" : "it has no output file");
    } else if ((!json_is_integer(uid) || !json_is_integer(gid)) && !own) {
        /* a record from before uid was kept: only its owner's ids are known */
        ctld_reply_error(req, 403, NULL,
                         "job %llu: only its owner may read this older job's output",
                         (unsigned long long)id);
    } else {
        dr_msg_output_req_t m = {
            .job = id,
            .path = (char *)path,
            .uid = json_is_integer(uid) ? (uint32_t)json_integer_value(uid) : who->uid,
            .gid = json_is_integer(gid) ? (uint32_t)json_integer_value(gid) : who->gid,
            .offset = off,
            .limit = (uint32_t)(lim > OUTPUT_CHUNK ? OUTPUT_CHUNK : lim),
        };
        ctld_output_request(c, req, ni, &m, state ? state : "");
    }
    json_decref(o);
}

typedef struct ev_ctx {
    json_t *a;
} ev_ctx_t;

static void ev_add(void *ud, double t, const char *what, const char *from, const char *to,
                   const char *detail)
{
    ev_ctx_t *e = ud;
    json_array_append_new(e->a, json_pack("{s:f,s:s,s:s,s:s,s:s}", "t", t, "what", what, "from",
                                          from, "state", to, "detail", detail ? detail : ""));
}

static void events(dr_ctld_t *c, struct evhttp_request *req, uint64_t id)
{
    char *js = job_json_any(c, id, NULL);
    if (!js) {
        ctld_reply_error(req, 404, NULL, "job %llu: no such job", (unsigned long long)id);
        return;
    }
    free(js);
    ev_ctx_t e = {json_array()};
    ctld_store_events(c, id, ev_add, &e);
    json_t *o = json_pack("{s:I,s:o}", "id", (json_int_t)id, "events", e.a);
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(o);
    ctld_reply_json(req, 200, s);
    free(s);
}

static void cancel(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who, uint64_t id)
{
    ctld_job_t *cj = ctld_job_find(c, id);
    if (!cj) {
        char *owner = NULL;
        char *js = ctld_store_job_json(c, id, &owner);
        if (!js) {
            ctld_reply_error(req, 404, NULL, "job %llu: no such job", (unsigned long long)id);
        } else if (!may_touch(who, owner)) {
            ctld_reply_error(req, 403, NULL, "job %llu belongs to %s; you are %s",
                             (unsigned long long)id, owner, who->user);
        } else {
            ctld_reply_error(req, 409, NULL, "job %llu has already ended", (unsigned long long)id);
        }
        free(js);
        free(owner);
        return;
    }
    ctld_job_t *target = cj; /* a task alone, or a whole array through its parent */
    if (!may_touch(who, target->user)) {
        ctld_reply_error(req, 403, NULL, "job %llu belongs to %s; you are %s",
                         (unsigned long long)id, target->user, who->user);
        return;
    }
    char why[128];
    snprintf(why, sizeof why, "cancelled by %s", who->user);
    dr_err_t err = {0};
    if (ctld_cancel(c, target, why, &err) != DR_OK) {
        ctld_reply_error(req, err.code == DR_ESTATE ? 409 : 400, NULL, "%s", err.msg);
        return;
    }
    json_t *o = json_pack("{s:I,s:s}", "id", (json_int_t)id, "state",
                          ctld_job_terminal(target) ? ctld_job_state_name(target) : "cancelling");
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(o);
    ctld_out_http(c, req, 200, s, 0);
    CTLD_CRASH_POINT(c, "cancel-before-commit");    /* decided, its KILLs not stored or sent */
    ctld_crash_after_commit("cancel-after-commit"); /* stored, KILLs and reply not sent */
}

/* A job in memory the caller may change; NULL after replying 404, 403, or
 * 409 for one that has ended (only the store has it then). */
static ctld_job_t *own_live_job(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                                uint64_t id)
{
    ctld_job_t *cj = ctld_job_find(c, id);
    char *owner = NULL, *js = cj ? NULL : ctld_store_job_json(c, id, &owner);
    const char *own = cj ? cj->user : owner;
    if (!cj && !js)
        ctld_reply_error(req, 404, NULL, "job %llu: no such job", (unsigned long long)id);
    else if (!may_touch(who, own))
        ctld_reply_error(req, 403, NULL, "job %llu belongs to %s; you are %s",
                         (unsigned long long)id, own, who->user);
    else if (!cj || ctld_job_terminal(cj))
        ctld_reply_error(req, 409, NULL, "job %llu has already ended", (unsigned long long)id);
    free(js);
    free(owner);
    return cj && may_touch(who, cj->user) && !ctld_job_terminal(cj) ? cj : NULL;
}

/* The job's id, state, hold and priority: what hold, release and update
 * answer (after the turn's commit). */
static void reply_job_brief(dr_ctld_t *c, struct evhttp_request *req, const ctld_job_t *cj)
{
    const char *hold = ctld_hold_name(cj->hold);
    json_t *o = json_pack("{s:I,s:s,s:o,s:i,s:s}", "id", (json_int_t)cj->j.id, "state",
                          ctld_job_state_name(cj), "hold", hold ? json_string(hold) : json_null(),
                          "priority", (json_int_t)(cj->array ? cj->spec.priority : cj->j.priority),
                          "reason", cj->reason);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    ctld_out_http(c, req, 200, s, 0);
}

/* POST /v1/jobs/ID/hold, /release: the owner or an operator; an
 * operator's hold is JobHeldAdmin, released only by an operator. */
static void hold_release(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                         uint64_t id, bool hold)
{
    ctld_job_t *cj = own_live_job(c, req, who, id);
    if (!cj)
        return;
    dr_err_t err = {0};
    int rc =
        hold ? ctld_hold(c, cj, who->operator_, &err) : ctld_release(c, cj, who->operator_, &err);
    if (rc != DR_OK) {
        ctld_reply_error(req,
                         rc == DR_ESTATE   ? 409
                         : rc == DR_EINVAL ? 403
                                           : 503,
                         NULL, "%s", err.msg);
        return;
    }
    reply_job_brief(c, req, cj);
}

/* PATCH /v1/jobs/ID {"priority": N}: an owner may lower the priority of
 * a job, an operator may set any (as Slurm's scontrol update). */
static void update(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who, uint64_t id)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    json_t *b = len ? json_loadb((const char *)evbuffer_pullup(in, -1), len, 0, NULL) : NULL;
    json_t *pv = json_object_get(b, "priority");
    const char *k;
    json_t *v;
    json_object_foreach(b, k, v)
    {
        if (strcmp(k, "priority") != 0) {
            ctld_reply_error(req, 400, k, "%s: not a field that can be updated (priority)", k);
            json_decref(b);
            return;
        }
    }
    if (!json_is_integer(pv) || json_integer_value(pv) < INT32_MIN ||
        json_integer_value(pv) > INT32_MAX) {
        ctld_reply_error(req, 400, "priority",
                         "priority: a whole number is required ({\"priority\": N})");
        json_decref(b);
        return;
    }
    int32_t prio = (int32_t)json_integer_value(pv);
    json_decref(b);
    ctld_job_t *cj = own_live_job(c, req, who, id);
    if (!cj)
        return;
    const ctld_job_t *owner = cj->parent ? cj->parent : cj;
    int32_t cur = owner->array ? owner->spec.priority : owner->j.priority;
    if (prio > cur && !who->operator_) {
        ctld_reply_error(req, 403, "priority",
                         "priority: only an operator may raise a job's priority (job %llu has "
                         "%d; you may set %d or lower)",
                         (unsigned long long)id, cur, cur);
        return;
    }
    dr_err_t err = {0};
    if (ctld_set_priority(c, cj, prio, &err) != DR_OK) {
        ctld_reply_error(req, err.code == DR_ESTATE ? 409 : 503, NULL, "%s", err.msg);
        return;
    }
    reply_job_brief(c, req, cj->parent ? cj->parent : cj);
}

void ctld_api_jobs(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                   const char *path)
{
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    if (*path == '\0' || strcmp(path, "/") == 0) {
        if (m == EVHTTP_REQ_POST)
            submit(c, req, who);
        else if (m == EVHTTP_REQ_GET)
            list(c, req);
        else
            ctld_reply_error(req, 405, NULL, "/v1/jobs: use GET or POST");
        return;
    }
    /* "/ID[/verb]" */
    char *end = NULL;
    errno = 0;
    unsigned long long id = strtoull(path + 1, &end, 10);
    if (end == path + 1 || errno || (*end && *end != '/')) {
        ctld_reply_error(req, 404, NULL, "/v1/jobs%s: not a job id", path);
        return;
    }
    const char *verb = *end ? end + 1 : "";
    if (*verb == '\0' && m == EVHTTP_REQ_GET) {
        char *js = job_json_any(c, id, NULL);
        if (js)
            ctld_reply_json(req, 200, js);
        else
            ctld_reply_error(req, 404, NULL, "job %llu: no such job", id);
        free(js);
    } else if ((*verb == '\0' && m == EVHTTP_REQ_DELETE) ||
               (strcmp(verb, "cancel") == 0 && m == EVHTTP_REQ_POST)) {
        cancel(c, req, who, id);
    } else if ((strcmp(verb, "hold") == 0 || strcmp(verb, "release") == 0) &&
               m == EVHTTP_REQ_POST) {
        hold_release(c, req, who, id, strcmp(verb, "hold") == 0);
    } else if (*verb == '\0' && m == EVHTTP_REQ_PATCH) {
        update(c, req, who, id);
    } else if (strcmp(verb, "output") == 0 && m == EVHTTP_REQ_GET) {
        output(c, req, who, id);
    } else if (strcmp(verb, "events") == 0 && m == EVHTTP_REQ_GET) {
        events(c, req, id);
    } else if (m == EVHTTP_REQ_POST && ctld_api_service_verb(c, req, who, id, verb)) {
        /* scale, restart */
    } else {
        ctld_reply_error(req, 404, NULL, "/v1/jobs%s: no such endpoint for this method", path);
    }
}
