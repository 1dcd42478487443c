/* http.c - droverd's HTTP/1.1 front door (libevent's evhttp) on TCP (HTTPS
 * with --tls: tls.c) and on a Unix socket: limits, authentication,
 * routing, and the reply helpers.
 *
 * evhttp answers what is oversized (413) or unparsable (400) itself, before
 * any of this runs; everything else is authenticated (auth.c), routed by
 * path, and answered as JSON.  Handlers that change state queue their reply
 * in the outbox (outbox.c) so it leaves only after the commit. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/agent_link.h"
#include "ctld/api.h"
#include "ctld/auth.h"
#include "ctld/events.h"
#include "ctld/http.h"
#include "ctld/metrics.h"
#include "ctld/prom.h"
#include "ctld/tls.h"
#include "ctld/ui.h"

#define MAX_BODY    (8u << 20) /* a job with a 4 MiB script and its environment */
#define MAX_HEADERS (64u << 10)

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 503: return "Service Unavailable";
    case 507: return "Insufficient Storage";
    default: return "Error";
    }
}

void ctld_reply_json(struct evhttp_request *req, int status, const char *json)
{
    struct evbuffer *b = evbuffer_new();
    if (!b) {
        evhttp_send_error(req, 503, NULL);
        return;
    }
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evbuffer_add(b, json, strlen(json));
    evbuffer_add(b, "\n", 1);
    evhttp_send_reply(req, status, reason_phrase(status), b);
    evbuffer_free(b);
}

void ctld_reply_buffer(struct evhttp_request *req, int status, const char *ctype,
                       struct evbuffer *body)
{
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", ctype);
    evhttp_send_reply(req, status, reason_phrase(status), body);
}

void ctld_reply_error(struct evhttp_request *req, int status, const char *field, const char *fmt,
                      ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *o = json_pack("{s:s}", "error", msg);
    if (field && *field)
        json_object_set_new(o, "field", json_string(field));
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(o);
    if (status == 401)
        evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate",
                          "Bearer realm=\"drover\"");
    ctld_reply_json(req, status, s ? s : "{\"error\":\"out of memory\"}");
    free(s);
}

static void on_ping(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who)
{
    json_t *o =
        json_pack("{s:b,s:s,s:I,s:s,s:s,s:s,s:I,s:{s:I,s:I,s:I,s:I,s:I,s:f,s:f}}", "ok", 1,
                  "version", CTLD_VERSION, "epoch", (json_int_t)c->epoch, "policy", c->policy,
                  "user", who->user, "role", who->operator_ ? "operator" : "user", "jobs_in_memory",
                  (json_int_t)c->tab_n, "stats", "turns", (json_int_t)c->st.turns, "passes",
                  (json_int_t)c->st.passes, "commits", (json_int_t)c->st.commits, "launches",
                  (json_int_t)c->st.launches, "frames_dropped", (json_int_t)c->st.frames_dropped,
                  "pass_seconds", c->st.pass_s_total, "commit_seconds", c->st.commit_s_total);
    /* a store that cannot be written (a full disk): submits get 507 meanwhile */
    json_object_set_new(json_object_get(o, "stats"), "commit_failures",
                        json_integer((json_int_t)c->st.commit_fail));
    json_object_set_new(o, "store_error",
                        c->store_fail[0] ? json_string(c->store_fail) : json_null());
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(o);
    ctld_reply_json(req, 200, s);
    free(s);
}

static void on_request(struct evhttp_request *req, void *arg)
{
    dr_ctld_t *c = arg;
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
    if (!path) {
        ctld_reply_error(req, 400, NULL, "bad request URI");
        return;
    }
    ctld_metrics_request(c, req, path); /* counted by route once answered */
    /* the dashboard's files and its login need no credentials */
    if (ctld_ui_serve(req, path))
        return;
    /* Prometheus scrapes without drover's tokens unless told to send one
     * (authorization: credentials_file): --metrics-public lets it */
    if (strcmp(path, "/metrics") == 0 && c->o.metrics_public) {
        ctld_api_metrics(c, req);
        return;
    }
    if (strcmp(path, "/v1/session") == 0) {
        ctld_api_session(c, req);
        return;
    }
    ctld_who_t who;
    int rc = ctld_auth(c, req, &who);
    if (rc != DR_OK) {
        ctld_reply_error(req, 401, NULL,
                         rc == DR_ENOENT ? "unknown or revoked token"
                                         : "authentication required: send 'Authorization: "
                                           "Bearer TOKEN' (get one with 'drover token')");
        return;
    }
    if (!ctld_auth_csrf_ok(req, &who)) {
        ctld_reply_error(req, 403, "X-Drover-CSRF",
                         "X-Drover-CSRF: a request authenticated by the session cookie that "
                         "changes state needs the header 'X-Drover-CSRF: 1'");
        return;
    }
    if (strcmp(path, "/v1/ping") == 0) {
        on_ping(c, req, &who);
    } else if (strncmp(path, "/v1/tokens", 10) == 0 && (path[10] == '\0' || path[10] == '/')) {
        ctld_api_tokens(c, req, &who, path + 10);
    } else if (strncmp(path, "/v1/jobs", 8) == 0 && (path[8] == '\0' || path[8] == '/')) {
        ctld_api_jobs(c, req, &who, path + 8);
    } else if (strncmp(path, "/v1/nodes", 9) == 0 && (path[9] == '\0' || path[9] == '/')) {
        ctld_api_nodes(c, req, &who, path + 9);
    } else if (strcmp(path, "/v1/history") == 0) {
        ctld_api_history(c, req, &who);
    } else if (strcmp(path, "/v1/events") == 0) {
        ctld_api_events(c, req, &who);
    } else if (strcmp(path, "/v1/share") == 0) {
        ctld_api_share(c, req, &who);
    } else if (strcmp(path, "/v1/classes") == 0) {
        ctld_api_classes(c, req, &who);
    } else if (strncmp(path, "/v1/admin/", 10) == 0) {
        ctld_api_admin(c, req, &who, path + 9);
    } else if (strcmp(path, "/v1/stats") == 0) {
        ctld_api_stats(c, req, &who);
    } else if (strcmp(path, "/metrics") == 0) {
        ctld_api_metrics(c, req);
    } else {
        ctld_reply_error(req, 404, NULL, "%s: no such endpoint", path);
    }
}

static int bind_unix(dr_ctld_t *c, const char *path, dr_err_t *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return dr_err_set(err, DR_EINVAL, "--socket: path longer than %zu bytes",
                          sizeof sa.sun_path - 1);
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return dr_err_set(err, DR_EIO, "--socket: %s", strerror(errno));
    unlink(path); /* a stale socket of an earlier run */
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 128) != 0) {
        int e = errno;
        close(fd);
        return dr_err_set(err, DR_EIO, "--socket %s: %s", path, strerror(e));
    }
    /* anyone may connect: the peer's uid says who they are */
    chmod(path, 0666);
    struct evconnlistener *l =
        evconnlistener_new(c->base, NULL, NULL, LEV_OPT_CLOSE_ON_FREE, -1, fd);
    if (!l || !evhttp_bind_listener(c->http_unix, l)) {
        if (l)
            evconnlistener_free(l);
        else
            close(fd);
        return dr_err_set(err, DR_EIO, "--socket %s: cannot listen", path);
    }
    return DR_OK;
}

/* One evhttp with the API's limits and routing.  TCP and the Unix socket
 * each have their own: evhttp makes every connection's bufferevent with
 * one callback that is not told the listener, and only TCP speaks TLS. */
static struct evhttp *http_new(dr_ctld_t *c)
{
    struct evhttp *h = evhttp_new(c->base);
    if (!h)
        return NULL;
    evhttp_set_max_body_size(h, MAX_BODY);
    evhttp_set_max_headers_size(h, MAX_HEADERS);
    evhttp_set_timeout(h, 60);
    evhttp_set_allowed_methods(h, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_DELETE |
                                      EVHTTP_REQ_PATCH);
    evhttp_set_gencb(h, on_request, c);
    return h;
}

int ctld_http_start(dr_ctld_t *c, dr_err_t *err)
{
    c->http = http_new(c);
    c->http_unix = http_new(c);
    if (!c->http || !c->http_unix)
        return dr_err_set(err, DR_ENOMEM, "evhttp_new failed");
    int rc = ctld_tls_init(c, err);
    if (rc != DR_OK)
        return rc;
    if (c->tls_ctx)
        evhttp_set_bevcb(c->http, ctld_tls_bev, c);
    struct sockaddr_storage ss;
    int slen = 0;
    rc = ctld_parse_hostport(c->o.listen, &ss, &slen, err, "--listen");
    if (rc != DR_OK)
        return rc;
    struct evconnlistener *l =
        evconnlistener_new_bind(c->base, NULL, NULL, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 128,
                                (struct sockaddr *)&ss, slen);
    if (!l || !evhttp_bind_listener(c->http, l)) {
        if (l)
            evconnlistener_free(l);
        return dr_err_set(err, DR_EIO, "--listen %s: %s", c->o.listen, strerror(errno));
    }
    rc = bind_unix(c, c->o.socket, err);
    if (rc != DR_OK)
        return rc;
    ctld_log("API: listening on %s://%s and %s", c->tls_ctx ? "https" : "http", c->o.listen,
             c->o.socket);
    return DR_OK;
}

void ctld_http_free(dr_ctld_t *c)
{
    if (c->http)
        evhttp_free(c->http);
    if (c->http_unix)
        evhttp_free(c->http_unix);
    c->http = c->http_unix = NULL;
    ctld_tls_free(c); /* after the connections that use it */
}
