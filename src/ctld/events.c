/* events.c - GET /v1/events: the event log (the jobs' and the nodes'
 * records, one id sequence) as a page of JSON, or followed as a stream of
 * Server-Sent Events.
 *
 * Only committed rows are ever sent: a stream reads what it replays from
 * the store (a SELECT between turns sees only committed rows), and the
 * live rows are read back from the store after the commit that wrote them
 * (ctld_events_committed, called by turn.c's turn).  A stream first
 * replays the stored rows after its start id in bounded steps (one step
 * per loop iteration, a bounded range of ids each, so that a huge backlog
 * does not stall the loop), and is live once it has reached the newest
 * committed id; from then on each commit's rows are pushed to it.  So a
 * stream sees every matching id once, in order.
 *
 * A stream costs one connection and its unsent output: streams are
 * bounded in number, per user (MaxEventStreams=, so that one user cannot
 * take them all: 429) and in all (503), and one whose reader lets its
 * output grow past a bound is dropped (it reconnects with Last-Event-ID
 * and replays).  A
 * comment line every 15 s keeps proxies (and the reader's timeout) happy;
 * the connection has no read timeout while it streams (http.c's 60 s would
 * cut it), only a write timeout: a reader that takes nothing for that long
 * is gone. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/events.h"
#include "ctld/http.h"
#include "ctld/store.h"

#define EV_MAX_STREAMS   256
#define EV_STEP_ROWS     256        /* rows a replay step sends at most */
#define EV_STEP_IDS      20000      /* ids a replay step scans at most, whatever the filters */
#define EV_MAX_OUT       (4u << 20) /* a stream's unsent output beyond which it is dropped */
#define EV_KEEPALIVE_S   15
#define EV_WRITE_TIMEOUT 60 /* s: a reader that takes nothing this long is gone */
#define EV_LIST_DEFAULT  1000
#define EV_LIST_MAX      10000
#define EV_LIVE_ROWS     1024 /* rows read back per query after a commit */

typedef struct ctld_sub {
    struct ctld_events *ev;
    struct evhttp_request *req;
    struct evhttp_connection *conn;
    uint64_t cursor;          /* every id up to this one has been sent or skipped */
    uint64_t job;             /* filter: this job and its tasks (0 = any) */
    char *node;               /* filter: this node's events (NULL = any) */
    char user[64];            /* who opened it: MaxEventStreams= is per user */
    bool live;                /* caught up: gets each commit's rows */
    bool drop;                /* over its output bound: dropped after the push */
    struct evbuffer *pending; /* records of this push, sent as one chunk */
    struct event *step;       /* the next replay step */
    struct ctld_sub *prev, *next;
} ctld_sub_t;

struct ctld_events {
    dr_ctld_t *c;
    ctld_sub_t *subs;
    size_t nsubs;
    uint64_t max_id; /* the newest committed id (exact while a stream is open) */
    struct event *keepalive;
};

/* ---- one row as JSON ---- */

static char *row_json(const ctld_event_row_t *r)
{
    json_t *o;
    if (r->node)
        o = json_pack("{s:I,s:f,s:s,s:s,s:s,s:s,s:s,s:s}", "id", (json_int_t)r->id, "t", r->t,
                      "kind", "node", "node", r->node, "what", r->what, "from", r->from, "to",
                      r->to, "detail", r->detail);
    else
        o = json_pack("{s:I,s:f,s:s,s:I,s:s,s:s,s:s,s:s}", "id", (json_int_t)r->id, "t", r->t,
                      "kind", "job", "job", (json_int_t)r->job, "what", r->what, "from", r->from,
                      "to", r->to, "detail", r->detail);
    if (o && !r->node && r->parent)
        json_object_set_new(o, "parent", json_integer((json_int_t)r->parent));
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(o);
    return s;
}

/* The SSE record: id, event type, the JSON on one data line (json_dumps
 * escapes every newline inside strings). */
static void add_record(struct evbuffer *b, const ctld_event_row_t *r, const char *json)
{
    evbuffer_add_printf(b, "id: %" PRIu64 "\nevent: %s\ndata: %s\n\n", r->id,
                        r->node ? "node" : "job", json);
}

static bool matches(const ctld_sub_t *s, const ctld_event_row_t *r)
{
    if (s->job && (r->node || (r->job != s->job && r->parent != s->job)))
        return false;
    if (s->node && (!r->node || strcmp(r->node, s->node) != 0))
        return false;
    return true;
}

/* ---- streams ---- */

static size_t out_len(const ctld_sub_t *s)
{
    struct bufferevent *bev = evhttp_connection_get_bufferevent(s->conn);
    return bev ? evbuffer_get_length(bufferevent_get_output(bev)) : 0;
}

static void sub_unlink(ctld_sub_t *s)
{
    struct ctld_events *ev = s->ev;
    if (s->prev)
        s->prev->next = s->next;
    else
        ev->subs = s->next;
    if (s->next)
        s->next->prev = s->prev;
    ev->nsubs--;
    if (s->step)
        event_free(s->step);
    if (s->pending)
        evbuffer_free(s->pending);
    free(s->node);
    free(s);
}

/* The client went away (or the write timed out): evhttp frees the
 * connection; a request it detached from it first is ours to free. */
static void on_close(struct evhttp_connection *conn, void *arg)
{
    (void)conn;
    ctld_sub_t *s = arg;
    if (!evhttp_request_get_connection(s->req))
        evhttp_send_reply_end(s->req); /* without a connection: frees it */
    sub_unlink(s);
}

/* End a stream on our side: cleanly (the last chunk, written now if the
 * socket takes it: the controller is stopping) or at once (a reader too
 * slow: a clean end would wait behind its backlog). */
static void sub_end(ctld_sub_t *s, const char *why, bool clean)
{
    struct evhttp_connection *conn = s->conn;
    evhttp_connection_set_closecb(conn, NULL, NULL);
    if (clean) {
        struct evbuffer *b = evbuffer_new();
        if (b) {
            evbuffer_add_printf(b, ": %s\n\n", why);
            evhttp_send_reply_chunk(s->req, b);
            evbuffer_free(b);
        }
        evhttp_send_reply_end(s->req);
        struct bufferevent *bev = evhttp_connection_get_bufferevent(conn);
        if (bev) { /* best effort: the socket takes it or the client sees a cut */
            struct evbuffer *out = bufferevent_get_output(bev);
            size_t n = evbuffer_get_length(out);
            const unsigned char *p = n ? evbuffer_pullup(out, -1) : NULL;
            if (p && send(bufferevent_getfd(bev), p, n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                ctld_log("events: ending a stream: %s", strerror(errno));
        }
    } else {
        ctld_log("events: a stream from %s dropped: %s",
                 evhttp_request_get_host(s->req) ? evhttp_request_get_host(s->req) : "?", why);
    }
    sub_unlink(s);
    evhttp_connection_free(conn); /* and the request on it */
}

static void send_pending(ctld_sub_t *s)
{
    if (evbuffer_get_length(s->pending))
        evhttp_send_reply_chunk(s->req, s->pending); /* moves the bytes */
    if (out_len(s) > EV_MAX_OUT)
        s->drop = true;
}

static void replay_cb(void *ud, const ctld_event_row_t *r)
{
    ctld_sub_t *s = ud;
    char *json = row_json(r);
    if (json)
        add_record(s->pending, r, json);
    free(json);
    s->cursor = r->id;
}

static void step_later(ctld_sub_t *s, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(s->step, &tv);
}

/* One replay step: at most EV_STEP_ROWS rows out of at most EV_STEP_IDS
 * ids, then the loop runs again; live once the newest committed id is
 * reached.  A reader that has not taken the last steps' output yet is
 * waited for (replaying into its buffer would only get it dropped). */
static void on_step(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    ctld_sub_t *s = arg;
    struct ctld_events *ev = s->ev;
    if (out_len(s) > EV_MAX_OUT / 4) {
        step_later(s, 50);
        return;
    }
    uint64_t upto = ev->max_id - s->cursor > EV_STEP_IDS ? s->cursor + EV_STEP_IDS : ev->max_id;
    if (s->cursor >= ev->max_id)
        upto = s->cursor;
    long n = upto > s->cursor ? ctld_store_event_rows(ev->c, s->cursor, upto, s->job, s->node,
                                                      EV_STEP_ROWS, replay_cb, s)
                              : 0;
    if (n < 0) {
        sub_end(s, "the store cannot be read", false);
        return;
    }
    if (n < EV_STEP_ROWS)
        s->cursor = upto > s->cursor ? upto : s->cursor;
    send_pending(s);
    if (s->drop) {
        sub_end(s, "its reader is too slow (over 4 MiB unsent)", false);
        return;
    }
    if (s->cursor >= ev->max_id)
        s->live = true;
    else
        step_later(s, 0);
}

/* A row a commit wrote: to each live stream it matches (its JSON made
 * once), and the newest id moves on. */
static void live_cb(void *ud, const ctld_event_row_t *r)
{
    struct ctld_events *ev = ud;
    char *json = NULL;
    for (ctld_sub_t *s = ev->subs; s; s = s->next) {
        /* a start id past the newest (a client of an older store): only
         * ids after it */
        if (!s->live || s->drop || r->id <= s->cursor || !matches(s, r))
            continue;
        if (!json && !(json = row_json(r)))
            break;
        add_record(s->pending, r, json);
    }
    free(json);
    ev->max_id = r->id;
}

void ctld_events_committed(dr_ctld_t *c)
{
    struct ctld_events *ev = c->events;
    if (!ev || !ev->subs)
        return; /* max_id is read again when a stream opens */
    long n;
    do
        n = ctld_store_event_rows(c, ev->max_id, INT64_MAX, 0, NULL, EV_LIVE_ROWS, live_cb, ev);
    while (n == EV_LIVE_ROWS);
    if (n < 0)
        ctld_log("events: cannot read the events just committed back from the store");
    ctld_sub_t *next;
    for (ctld_sub_t *s = ev->subs; s; s = s->next)
        if (s->live) {
            if (s->cursor < ev->max_id)
                s->cursor = ev->max_id;
            send_pending(s);
        }
    for (ctld_sub_t *s = ev->subs; s; s = next) {
        next = s->next;
        if (s->drop)
            sub_end(s, "its reader is too slow (over 4 MiB unsent)", false);
    }
}

static void on_keepalive(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct ctld_events *ev = arg;
    ctld_sub_t *next;
    for (ctld_sub_t *s = ev->subs; s; s = next) {
        next = s->next;
        evbuffer_add_printf(s->pending, ": keepalive\n\n");
        send_pending(s);
        if (s->drop)
            sub_end(s, "its reader is too slow (over 4 MiB unsent)", false);
    }
}

int ctld_events_start(dr_ctld_t *c, dr_err_t *err)
{
    struct ctld_events *ev = calloc(1, sizeof *ev);
    if (!ev)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    ev->c = c;
    ev->keepalive = event_new(c->base, -1, EV_PERSIST, on_keepalive, ev);
    if (!ev->keepalive) {
        free(ev);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    struct timeval tv = {EV_KEEPALIVE_S, 0};
    event_add(ev->keepalive, &tv);
    c->events = ev;
    return DR_OK;
}

void ctld_events_free(dr_ctld_t *c)
{
    struct ctld_events *ev = c->events;
    if (!ev)
        return;
    ctld_sub_t *next;
    for (ctld_sub_t *s = ev->subs; s; s = next) {
        next = s->next;
        sub_end(s, "the controller is stopping", true);
    }
    event_free(ev->keepalive);
    free(ev);
    c->events = NULL;
}

/* ---- the request ---- */

typedef struct ev_query {
    uint64_t since, job, limit;
    bool have_since, follow;
    const char *node;
} ev_query_t;

static bool parse_u64(const char *s, uint64_t *v)
{
    return s && *s && strspn(s, "0123456789") == strlen(s) && strlen(s) <= 19 &&
           dr_parse_u64(s, v) == 0;
}

/* since=, job=, node=, limit=, follow= and Last-Event-ID: 400 naming the
 * field when one is wrong (the reply is sent here; false then). */
static bool parse_query(dr_ctld_t *c, struct evhttp_request *req, struct evkeyvalq *q,
                        ev_query_t *out)
{
    *out = (ev_query_t){.limit = EV_LIST_DEFAULT};
    const char *v;
    if ((v = evhttp_find_header(q, "since"))) {
        if (!parse_u64(v, &out->since)) {
            ctld_reply_error(req, 400, "since", "since: '%.40s' is not an event id", v);
            return false;
        }
        out->have_since = true;
    } else if ((v = evhttp_find_header(evhttp_request_get_input_headers(req), "Last-Event-ID"))) {
        if (!parse_u64(v, &out->since)) {
            ctld_reply_error(req, 400, "Last-Event-ID", "Last-Event-ID: '%.40s' is not an event id",
                             v);
            return false;
        }
        out->have_since = true;
    }
    if ((v = evhttp_find_header(q, "job")) && (!parse_u64(v, &out->job) || out->job == 0)) {
        ctld_reply_error(req, 400, "job", "job: '%.40s' is not a job id", v);
        return false;
    }
    if ((v = evhttp_find_header(q, "node"))) {
        if (dr_cluster_find_node(&c->cl, v) < 0) {
            ctld_reply_error(req, 404, "node", "node %.64s: no such node", v);
            return false;
        }
        out->node = v;
    }
    if (out->job && out->node) {
        ctld_reply_error(req, 400, "node", "job and node: give one of them");
        return false;
    }
    if ((v = evhttp_find_header(q, "limit")) &&
        (!parse_u64(v, &out->limit) || out->limit == 0 || out->limit > EV_LIST_MAX)) {
        ctld_reply_error(req, 400, "limit", "limit: '%.40s' is not a number from 1 to %d", v,
                         EV_LIST_MAX);
        return false;
    }
    if ((v = evhttp_find_header(q, "follow"))) {
        if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
            out->follow = true;
        else if (strcmp(v, "0") != 0 && strcmp(v, "false") != 0) {
            ctld_reply_error(req, 400, "follow", "follow: '%.40s' is not 0 or 1", v);
            return false;
        }
    }
    return true;
}

typedef struct list_ctx {
    struct evbuffer *b;
    size_t n;
    uint64_t last;
} list_ctx_t;

static void list_cb(void *ud, const ctld_event_row_t *r)
{
    list_ctx_t *l = ud;
    char *json = row_json(r);
    if (!json)
        return;
    evbuffer_add_printf(l->b, "%s%s", l->n++ ? "," : "", json);
    free(json);
    l->last = r->id;
}

/* One page: the `limit` oldest matching events after `since`; last_id is
 * where the next page starts (the newest id looked at). */
static void list(dr_ctld_t *c, struct evhttp_request *req, const ev_query_t *q)
{
    uint64_t max = 0;
    if (ctld_store_event_max(c, &max) != DR_OK) {
        ctld_reply_error(req, 503, NULL, "the store cannot be read");
        return;
    }
    list_ctx_t l = {.b = evbuffer_new()};
    if (!l.b) {
        ctld_reply_error(req, 503, NULL, "out of memory");
        return;
    }
    evbuffer_add_printf(l.b, "{\"events\":[");
    long n = q->since < max
                 ? ctld_store_event_rows(c, q->since, max, q->job, q->node, q->limit, list_cb, &l)
                 : 0;
    if (n < 0) {
        evbuffer_free(l.b);
        ctld_reply_error(req, 503, NULL, "the store cannot be read");
        return;
    }
    uint64_t last = (uint64_t)n == q->limit ? l.last : max;
    evbuffer_add_printf(l.b, "],\"last_id\":%" PRIu64 "}\n", last);
    ctld_reply_buffer(req, 200, "application/json", l.b);
    evbuffer_free(l.b);
}

static void follow(dr_ctld_t *c, struct evhttp_request *req, const ev_query_t *q, const char *user)
{
    struct ctld_events *ev = c->events;
    if (!ev) {
        ctld_reply_error(req, 503, NULL, "event streams are not available");
        return;
    }
    /* one user's streams cannot take all EV_MAX_STREAMS from the others */
    uint32_t mine = 0, cap = c->cl.site.max_event_streams;
    for (const ctld_sub_t *o = ev->subs; cap && o; o = o->next)
        mine += strcmp(o->user, user) == 0;
    if (cap && mine >= cap) {
        ctld_reply_error(req, 429, NULL,
                         "user %s has %u event streams open: the site's limit is %u per user "
                         "(MaxEventStreams=); close one, or read pages of GET /v1/events?since=ID",
                         user, mine, cap);
        return;
    }
    if (ev->nsubs >= EV_MAX_STREAMS) {
        ctld_reply_error(req, 503, NULL,
                         "too many event streams open (%d): try again later, or read pages of "
                         "GET /v1/events?since=ID",
                         EV_MAX_STREAMS);
        return;
    }
    struct evhttp_connection *conn = evhttp_request_get_connection(req);
    struct bufferevent *bev = conn ? evhttp_connection_get_bufferevent(conn) : NULL;
    uint64_t max = 0;
    if (!bev || ctld_store_event_max(c, &max) != DR_OK) {
        ctld_reply_error(req, 503, NULL, "the store cannot be read");
        return;
    }
    ctld_sub_t *s = calloc(1, sizeof *s);
    if (s) {
        s->pending = evbuffer_new();
        s->step = evtimer_new(c->base, on_step, s);
        s->node = q->node ? dr_strdup(q->node) : NULL;
    }
    if (!s || !s->pending || !s->step || (q->node && !s->node)) {
        if (s) {
            if (s->pending)
                evbuffer_free(s->pending);
            if (s->step)
                event_free(s->step);
            free(s->node);
            free(s);
        }
        ctld_reply_error(req, 503, NULL, "out of memory");
        return;
    }
    ev->max_id = max; /* exact from here on: each commit moves it */
    s->ev = ev;
    snprintf(s->user, sizeof s->user, "%s", user);
    s->req = req;
    s->conn = conn;
    s->job = q->job;
    /* no start id: from now on */
    s->cursor = q->have_since ? q->since : max;
    s->next = ev->subs;
    if (ev->subs)
        ev->subs->prev = s;
    ev->subs = s;
    ev->nsubs++;
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Content-Type", "text/event-stream");
    evhttp_add_header(h, "Cache-Control", "no-cache");
    evhttp_add_header(h, "X-Accel-Buffering", "no"); /* a proxy in front must not buffer it */
    evhttp_send_reply_start(req, 200, "OK");
    evhttp_connection_set_closecb(conn, on_close, s);
    /* no read timeout while streaming (the client sends nothing more); a
     * write timeout drops a reader that takes nothing */
    struct timeval wt = {EV_WRITE_TIMEOUT, 0};
    bufferevent_set_timeouts(bev, NULL, &wt);
    /* whatever it sends meanwhile is not read: bounded, not buffered */
    bufferevent_setwatermark(bev, EV_READ, 0, 4096);
    /* the comment reaches the client at once: it knows the stream is open */
    evbuffer_add_printf(s->pending, ": drover events from id %" PRIu64 "\n\n", s->cursor);
    send_pending(s);
    step_later(s, 0);
}

void ctld_api_events(dr_ctld_t *c, struct evhttp_request *req, const struct ctld_who *who)
{
    /* any authenticated user reads the event log, as GET /v1/jobs */
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        ctld_reply_error(req, 405, NULL, "use GET");
        return;
    }
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *qs = uri ? evhttp_uri_get_query(uri) : NULL;
    struct evkeyvalq q;
    TAILQ_INIT(&q);
    if (qs && evhttp_parse_query_str(qs, &q) != 0) {
        ctld_reply_error(req, 400, NULL, "bad query string");
        return;
    }
    ev_query_t eq;
    if (parse_query(c, req, &q, &eq)) {
        if (eq.follow)
            follow(c, req, &eq, who->user);
        else
            list(c, req, &eq);
    }
    evhttp_clear_headers(&q);
}
