/* client.c - blocking HTTP/1.1 over a Unix socket or TCP (TLS for https://,
 * tls.c) for the CLI: find the controller (--server, $DROVER_SERVER, the
 * default socket, the default address), send one request per connection
 * (Connection: close: the verbs make few requests, and a fresh connection
 * survives a controller restart between polls), read the reply under a
 * timeout into http_parse.c. */
#include "cli/client.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/tls.h"
#include "drover/util.h"

#define CLI_DEFAULT_PORT "6817"

const char *cli_cacert_arg = NULL;

void cli_endpoint_free(cli_endpoint_t *ep)
{
    free(ep->path);
    free(ep->host);
    free(ep->port);
    free(ep->display);
    memset(ep, 0, sizeof *ep);
}

static int ep_unix(cli_endpoint_t *ep, const char *spec, const char *path, dr_err_t *err)
{
    if (!*path)
        return dr_err_set(err, DR_EINVAL, "--server '%s': empty socket path", spec);
    if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return dr_err_set(err, DR_EINVAL, "--server '%s': socket path longer than %zu bytes", spec,
                          sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
    ep->is_unix = true;
    ep->path = dr_strdup(path);
    ep->display = dr_strdup(path);
    return ep->path && ep->display ? DR_OK : DR_ENOMEM;
}

int cli_endpoint_parse(const char *spec, cli_endpoint_t *ep, dr_err_t *err)
{
    memset(ep, 0, sizeof *ep);
    if (!spec || !*spec)
        return dr_err_set(err, DR_EINVAL, "--server: empty");
    if (strncmp(spec, "unix:", 5) == 0)
        return ep_unix(ep, spec, spec + 5, err);
    const char *hp = spec;
    bool tls = strncmp(spec, "https://", 8) == 0;
    bool url = tls || strncmp(spec, "http://", 7) == 0;
    const char *scheme = strstr(spec, "://");
    if (url)
        hp = strstr(spec, "://") + 3;
    else if (scheme && scheme > spec &&
             strspn(spec, "abcdefghijklmnopqrstuvwxyz+.-") == (size_t)(scheme - spec))
        return dr_err_set(err, DR_EINVAL,
                          "--server '%s': unknown scheme (http://, https://, unix:PATH or a "
                          "socket path)",
                          spec);
    else if (strchr(spec, '/') || !strchr(spec, ':'))
        return ep_unix(ep, spec, spec, err);
    size_t n = strcspn(hp, "/");
    if (hp[n] == '/' && hp[n + 1] != '\0')
        return dr_err_set(err, DR_EINVAL,
                          "--server '%s': a path after the address is not supported", spec);
    char *hostport = dr_strndup(hp, n);
    if (!hostport)
        return DR_ENOMEM;
    char *host = hostport, *port = NULL;
    if (host[0] == '[') {
        char *close = strchr(host, ']');
        if (!close || (close[1] != '\0' && close[1] != ':')) {
            free(hostport);
            return dr_err_set(err, DR_EINVAL, "--server '%s': unbalanced '[' in the address", spec);
        }
        *close = '\0';
        host++;
        if (close[1] == ':')
            port = close + 2;
    } else {
        char *colon = strchr(host, ':');
        if (colon && strchr(colon + 1, ':')) {
            free(hostport);
            return dr_err_set(err, DR_EINVAL,
                              "--server '%s': write an IPv6 address in brackets ([::1]:6817)",
                              spec);
        }
        if (colon) {
            *colon = '\0';
            port = colon + 1;
        }
    }
    if (!*host) {
        free(hostport);
        return dr_err_set(err, DR_EINVAL, "--server '%s': no host", spec);
    }
    if (!port || !*port)
        port = (char *)CLI_DEFAULT_PORT;
    uint64_t pn;
    if (dr_parse_u64(port, &pn) != 0 || pn == 0 || pn > 65535 ||
        strspn(port, "0123456789") != strlen(port)) {
        int rc = dr_err_set(err, DR_EINVAL,
                            "--server '%s': port '%s' is not a number from 1 to 65535", spec, port);
        free(hostport);
        return rc;
    }
    ep->tls = tls;
    ep->host = dr_strdup(host);
    ep->port = dr_strdup(port);
    size_t dl = strlen(host) + strlen(port) + 16;
    ep->display = malloc(dl);
    if (ep->display)
        snprintf(ep->display, dl, strchr(host, ':') ? "%s://[%s]:%s" : "%s://%s:%s",
                 tls ? "https" : "http", host, port);
    free(hostport);
    if (!ep->host || !ep->port || !ep->display) {
        cli_endpoint_free(ep);
        return DR_ENOMEM;
    }
    return DR_OK;
}

int cli_client_init(cli_client_t *c, const char *server, dr_err_t *err)
{
    memset(c, 0, sizeof *c);
    c->connect_timeout_ms = CLI_CONNECT_TIMEOUT;
    c->read_timeout_ms = CLI_READ_TIMEOUT;
    c->max_body = CLI_HTTP_MAX_BODY;
    const char *ca = cli_cacert_arg && *cli_cacert_arg ? cli_cacert_arg : getenv("DROVER_CACERT");
    if (ca && *ca && !(c->cacert = dr_strdup(ca)))
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    const char *spec = server;
    if (!spec || !*spec)
        spec = getenv("DROVER_SERVER");
    if (spec && *spec)
        return cli_endpoint_parse(spec, &c->ep, err);
    int rc = cli_endpoint_parse(CLI_DEFAULT_SOCKET, &c->ep, err);
    if (rc == DR_OK)
        rc = cli_endpoint_parse(CLI_DEFAULT_URL, &c->alt, err);
    c->fallback = rc == DR_OK;
    return rc;
}

void cli_client_free(cli_client_t *c)
{
    cli_endpoint_free(&c->ep);
    cli_endpoint_free(&c->alt);
    free(c->token);
    free(c->cacert);
    memset(c, 0, sizeof *c);
}

char *cli_token_path(void)
{
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (!home || !*home)
        return NULL;
    size_t n = strlen(home) + 32;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/.config/drover/token", home);
    return p;
}

/* A token is sent in a header: only visible ASCII, no blanks. */
static char *token_clean(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strcspn(s, "\r\n");
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
            return NULL;
    return n ? dr_strndup(s, n) : NULL;
}

char *cli_token_load(void)
{
    const char *env = getenv("DROVER_TOKEN");
    if (env && *env)
        return token_clean(env);
    char *path = cli_token_path();
    if (!path)
        return NULL;
    FILE *f = fopen(path, "r");
    free(path);
    if (!f)
        return NULL;
    char line[1024];
    char *tok = fgets(line, sizeof line, f) ? token_clean(line) : NULL;
    fclose(f);
    return tok;
}

/* Non-blocking connect finished within the timeout: 0 or -errno. */
static int connect_wait(int fd, const struct sockaddr *sa, socklen_t len, int timeout_ms)
{
    if (connect(fd, sa, len) == 0)
        return 0;
    if (errno != EINPROGRESS && errno != EAGAIN && errno != EINTR)
        return -errno;
    int rc = cli_wait_fd(fd, POLLOUT, cli_mono_ms() + timeout_ms);
    if (rc != 0)
        return rc;
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
        return -errno;
    return soerr ? -soerr : 0;
}

/* A connected non-blocking socket, or -errno. */
static int ep_connect(const cli_endpoint_t *ep, int timeout_ms)
{
    if (ep->is_unix) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", ep->path);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            return -errno;
        int rc = connect_wait(fd, (struct sockaddr *)&sa, sizeof sa, timeout_ms);
        if (rc != 0) {
            close(fd);
            return rc;
        }
        return fd;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int g = getaddrinfo(ep->host, ep->port, &hints, &res);
    if (g != 0)
        return g == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
    int rc = -ECONNREFUSED;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        int fd =
            socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            rc = -errno;
            continue;
        }
        rc = connect_wait(fd, a->ai_addr, a->ai_addrlen, timeout_ms);
        if (rc == 0) {
            freeaddrinfo(res);
            return fd;
        }
        close(fd);
    }
    freeaddrinfo(res);
    return rc;
}

static int unreachable(cli_client_t *c, dr_err_t *err, int e)
{
    c->unreachable = true;
    if (c->fallback)
        return dr_err_set(err, DR_EIO,
                          "cannot reach the controller at %s or %s: %s (set --server or "
                          "DROVER_SERVER)",
                          c->ep.display, c->alt.display, strerror(e));
    return dr_err_set(err, DR_EIO,
                      "cannot reach the controller at %s: %s (set --server or DROVER_SERVER)",
                      c->ep.display, strerror(e));
}

/* Connect to the endpoint, or to the default address when the default
 * socket fails (and keep using whichever answered). */
static int client_connect(cli_client_t *c, dr_err_t *err)
{
    int fd = ep_connect(&c->ep, c->connect_timeout_ms);
    if (fd < 0 && c->fallback) {
        int fd2 = ep_connect(&c->alt, c->connect_timeout_ms);
        if (fd2 < 0)
            return unreachable(c, err, -fd2);
        cli_endpoint_t t = c->ep;
        c->ep = c->alt;
        c->alt = t;
        c->fallback = false;
        return fd2;
    }
    if (fd < 0)
        return unreachable(c, err, -fd);
    if (c->fallback) /* the socket answered: stay on it */
        c->fallback = false;
    return fd;
}

/* The end of a connection: TLS's goodbye, then the socket. */
static void conn_close(int fd, struct ssl_st *ssl)
{
    cli_tls_close(ssl);
    close(fd);
}

/* What came within the deadline: > 0 bytes, 0 the end, -ETIMEDOUT, or
 * -errno (-EPROTO: TLS failed).  Through TLS, what it already holds is
 * taken before the socket is waited on. */
static ssize_t conn_read(int fd, struct ssl_st *ssl, char *buf, size_t cap, long long deadline)
{
    for (;;) {
        short want = POLLIN;
        if (ssl) {
            ssize_t r = cli_tls_read(ssl, buf, cap, &want);
            if (r != -EAGAIN)
                return r;
        }
        int w = cli_wait_fd(fd, want, deadline);
        if (w != 0)
            return w;
        if (ssl)
            continue;
        ssize_t r = recv(fd, buf, cap, 0);
        if (r >= 0)
            return r;
        if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            return -errno;
    }
}

static int send_all(int fd, struct ssl_st *ssl, const char *d, size_t n, int timeout_ms)
{
    while (n > 0 && ssl) {
        short want = POLLOUT;
        ssize_t w = cli_tls_write(ssl, d, n, &want);
        if (w > 0) {
            d += w;
            n -= (size_t)w;
            continue;
        }
        if (w != -EAGAIN)
            return w < 0 ? (int)w : -EPIPE;
        int rc = cli_wait_fd(fd, want, cli_mono_ms() + timeout_ms);
        if (rc != 0)
            return rc;
    }
    while (n > 0) {
        ssize_t w = send(fd, d, n, MSG_NOSIGNAL);
        if (w > 0) {
            d += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int rc = cli_wait_fd(fd, POLLOUT, cli_mono_ms() + timeout_ms);
            if (rc != 0)
                return rc;
            continue;
        }
        return w < 0 ? -errno : -EPIPE;
    }
    return 0;
}

/* Connect and send the request (`extra`: more header lines, each ending
 * in CR LF, or NULL): the socket (and *sslp for https://), or a negative
 * DR_ code.  An https:// server's certificate is verified before anything
 * is sent: a token never goes to a server that is not the one named. */
static int send_request(cli_client_t *c, const char *method, const char *target, const char *ctype,
                        const char *body, size_t body_len, const char *extra, struct ssl_st **sslp,
                        dr_err_t *err)
{
    c->unreachable = false;
    c->last_status = 0;
    *sslp = NULL;
    int fd = client_connect(c, err);
    if (fd < 0)
        return fd;
    struct ssl_st *ssl = NULL;
    if (c->ep.tls) {
        int trc = cli_tls_connect(fd, c->ep.host, c->ep.port, c->cacert,
                                  cli_mono_ms() + c->connect_timeout_ms, &ssl, err);
        if (trc != DR_OK) {
            close(fd);
            return trc;
        }
    }
    if (!c->ep.is_unix && !c->token_loaded) {
        c->token = cli_token_load();
        c->token_loaded = true;
    }
    const char *host = c->ep.is_unix ? "localhost" : strstr(c->ep.display, "://") + 3;
    size_t hl = strlen(method) + strlen(target) + strlen(host) + (c->token ? strlen(c->token) : 0) +
                (ctype ? strlen(ctype) : 0) + (extra ? strlen(extra) : 0) + 256;
    char *head = malloc(hl);
    if (!head) {
        conn_close(fd, ssl);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    int k = snprintf(head, hl,
                     "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: drover/0.1.0\r\n"
                     "Accept: application/json\r\nConnection: close\r\n",
                     method, target, host);
    if (c->token && !c->ep.is_unix)
        k += snprintf(head + k, hl - (size_t)k, "Authorization: Bearer %s\r\n", c->token);
    if (body)
        k += snprintf(head + k, hl - (size_t)k, "Content-Type: %s\r\nContent-Length: %zu\r\n",
                      ctype ? ctype : "application/json", body_len);
    else if (strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0)
        k += snprintf(head + k, hl - (size_t)k, "Content-Length: 0\r\n");
    if (extra)
        k += snprintf(head + k, hl - (size_t)k, "%s", extra);
    k += snprintf(head + k, hl - (size_t)k, "\r\n");
    int rc = send_all(fd, ssl, head, (size_t)k, c->read_timeout_ms);
    free(head);
    if (rc == 0 && body && body_len)
        rc = send_all(fd, ssl, body, body_len, c->read_timeout_ms);
    if (rc != 0) {
        conn_close(fd, ssl);
        c->unreachable = true;
        return dr_err_set(err, DR_EIO, "sending to the controller at %s: %s", c->ep.display,
                          strerror(-rc));
    }
    *sslp = ssl;
    return fd;
}

int cli_client_request(cli_client_t *c, const char *method, const char *target, const char *ctype,
                       const char *body, size_t body_len, cli_http_resp_t *resp, dr_err_t *err)
{
    memset(resp, 0, sizeof *resp);
    struct ssl_st *ssl;
    int fd = send_request(c, method, target, ctype, body, body_len, NULL, &ssl, err);
    if (fd < 0)
        return fd;
    int rc;

    cli_http_parser_t p;
    cli_http_parser_init(&p, c->max_body, strcmp(method, "HEAD") == 0);
    char *buf = malloc(64 << 10);
    if (!buf) {
        conn_close(fd, ssl);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    rc = DR_OK;
    while (!cli_http_parser_done(&p)) {
        /* the timeout is per read: a long body that keeps coming is fine */
        ssize_t r = conn_read(fd, ssl, buf, 64 << 10, cli_mono_ms() + c->read_timeout_ms);
        if (r < 0) {
            c->unreachable = true;
            if (r == -ETIMEDOUT)
                rc = dr_err_set(err, DR_EIO, "no reply from the controller at %s within %d s",
                                c->ep.display, c->read_timeout_ms / 1000);
            else
                rc = dr_err_set(err, DR_EIO, "reading from the controller at %s: %s", c->ep.display,
                                strerror((int)-r));
            break;
        }
        if (r == 0) {
            rc = cli_http_parser_eof(&p, err);
            if (rc != DR_OK && p.head_bytes == 0) {
                c->unreachable = true; /* closed without a word: a restart */
                /* or an HTTPS controller, which drops plain text unanswered */
                if (!c->ep.is_unix && !c->ep.tls && err) {
                    size_t n = strlen(err->msg);
                    snprintf(err->msg + n, sizeof err->msg - n,
                             " (if droverd runs with --tls, use https://)");
                }
            }
            break;
        }
        size_t used;
        if ((rc = cli_http_parser_feed(&p, buf, (size_t)r, &used, err)) != DR_OK)
            break;
    }
    free(buf);
    conn_close(fd, ssl);
    if (rc == DR_OK) {
        cli_http_parser_take(&p, resp);
        c->last_status = resp->status;
    } else {
        dr_err_prefix(err, "%s: ", c->ep.display);
    }
    cli_http_parser_free(&p);
    return rc;
}

/* {"error": "..."} -> the text, else NULL. */
static const char *error_text(const json_t *j)
{
    const json_t *e = json_object_get(j, "error");
    return json_is_string(e) && *json_string_value(e) ? json_string_value(e) : NULL;
}

static int status_code(int status)
{
    switch (status) {
    case 404: return DR_ENOENT;
    case 409: return DR_ESTATE;
    case 413: return DR_ELIMIT;
    case 503: return DR_EIO;
    case 507: return DR_ENOSPC;
    default: return DR_EINVAL;
    }
}

/* A reply that is not 2xx: its "error" text, else its status and first
 * line, into err. */
static int reply_error(const cli_client_t *c, const cli_http_resp_t *r, const json_t *j,
                       dr_err_t *err)
{
    const char *msg = error_text(j);
    int rc;
    if (msg) {
        rc = dr_err_set(err, status_code(r->status), "%s", msg);
    } else {
        size_t line = r->body ? strcspn(r->body, "\r\n") : 0;
        rc = dr_err_set(err, status_code(r->status), "HTTP %d %s from %s%s%.*s", r->status,
                        r->reason, c->ep.display, line ? ": " : "", (int)(line > 200 ? 200 : line),
                        r->body ? r->body : "");
    }
    if (r->status == 401 && !c->ep.is_unix && !c->token && err) {
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n,
                 " (no token: set DROVER_TOKEN, or run 'drover token' on the controller's "
                 "host)");
    }
    return rc;
}

int cli_client_get(cli_client_t *c, const char *target, cli_http_resp_t *resp, dr_err_t *err)
{
    int rc = cli_client_request(c, "GET", target, NULL, NULL, 0, resp, err);
    if (rc != DR_OK || (resp->status >= 200 && resp->status < 300))
        return rc;
    json_t *j = resp->body_len ? json_loadb(resp->body, resp->body_len, 0, NULL) : NULL;
    rc = reply_error(c, resp, j, err);
    json_decref(j);
    cli_http_resp_free(resp);
    return rc;
}

int cli_client_json(cli_client_t *c, const char *method, const char *target, json_t *body,
                    json_t **reply, dr_err_t *err)
{
    if (reply)
        *reply = NULL;
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (body && !text)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    int rc = cli_client_json_text(c, method, target, text, reply, err);
    free(text);
    return rc;
}

int cli_client_json_text(cli_client_t *c, const char *method, const char *target, const char *body,
                         json_t **reply, dr_err_t *err)
{
    if (reply)
        *reply = NULL;
    cli_http_resp_t r;
    int rc = cli_client_request(c, method, target, "application/json", body,
                                body ? strlen(body) : 0, &r, err);
    if (rc != DR_OK)
        return rc;
    json_error_t jerr;
    json_t *j = r.body_len ? json_loadb(r.body, r.body_len, 0, &jerr) : NULL;
    bool ok = r.status >= 200 && r.status < 300;
    if (ok && !j) {
        rc = dr_err_set(err, DR_EINVAL, "%s: HTTP %d: the reply is not JSON%s%s", c->ep.display,
                        r.status, r.body_len ? ": " : "", r.body_len ? jerr.text : " (empty)");
    } else if (!ok) {
        rc = reply_error(c, &r, j, err);
    }
    cli_http_resp_free(&r);
    if (reply)
        *reply = j;
    else
        json_decref(j);
    return rc;
}

char *cli_url_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = malloc(3 * strlen(s) + 1), *o = out;
    if (!out)
        return NULL;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            strchr("-._~,", ch)) {
            *o++ = (char)ch;
        } else {
            *o++ = '%';
            *o++ = hex[ch >> 4];
            *o++ = hex[ch & 15];
        }
    }
    *o = '\0';
    return out;
}

/* ---- a streamed reply (GET /v1/events?follow=1) ---- */

void cli_stream_close(cli_stream_t *s)
{
    if (s->fd >= 0)
        conn_close(s->fd, s->ssl);
    s->fd = -1;
    s->ssl = NULL;
    cli_http_parser_free(&s->p);
}

/* Bytes from the socket into the parser: 1 when some came, 0 when none
 * within wait_ms, else a negative DR_ code (the stream is over). */
static int stream_fill(cli_stream_t *s, int wait_ms, char *buf, size_t cap, dr_err_t *err)
{
    cli_client_t *c = s->c;
    ssize_t r = conn_read(s->fd, s->ssl, buf, cap, cli_mono_ms() + wait_ms);
    if (r == -ETIMEDOUT)
        return 0;
    if (r < 0) {
        c->unreachable = true;
        return dr_err_set(err, DR_EIO, "reading from the controller at %s: %s", c->ep.display,
                          strerror((int)-r));
    }
    if (r == 0) {
        s->ended = cli_http_parser_done(&s->p);
        int rc = cli_http_parser_eof(&s->p, err);
        c->unreachable = true; /* a controller stopping or gone: the caller may reconnect */
        return rc != DR_OK ? rc
                           : dr_err_set(err, DR_EIO, "the controller at %s ended the stream",
                                        c->ep.display);
    }
    size_t used = 0;
    int rc = cli_http_parser_feed(&s->p, buf, (size_t)r, &used, err);
    if (rc != DR_OK)
        return rc;
    if (cli_http_parser_done(&s->p)) /* the last chunk: the server ended it */
        s->ended = true;
    return 1;
}

int cli_stream_open(cli_client_t *c, const char *target, const char *last_id, cli_stream_t *s,
                    dr_err_t *err)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->c = c;
    char extra[96] = "";
    if (last_id)
        snprintf(extra, sizeof extra, "Last-Event-ID: %.40s\r\n", last_id);
    int fd = send_request(c, "GET", target, NULL, NULL, 0, extra[0] ? extra : NULL, &s->ssl, err);
    if (fd < 0)
        return fd;
    s->fd = fd;
    /* what is not yet consumed is bounded: one SSE record, with room */
    cli_http_parser_init(&s->p, 2 * (1u << 20) + 4096, false);
    char buf[16384];
    int rc = DR_OK;
    while (!cli_http_parser_head_done(&s->p) && rc == DR_OK) {
        int r = stream_fill(s, c->read_timeout_ms, buf, sizeof buf, err);
        if (r == 0)
            rc = dr_err_set(err, DR_EIO, "no reply from the controller at %s within %d s",
                            c->ep.display, c->read_timeout_ms / 1000);
        else if (r < 0)
            rc = r;
    }
    if (rc == DR_OK && s->p.resp.status / 100 != 2) {
        /* an error reply: read it whole, its "error" text to err */
        c->last_status = s->p.resp.status;
        while (!cli_http_parser_done(&s->p) && rc == DR_OK) {
            int r = stream_fill(s, c->read_timeout_ms, buf, sizeof buf, err);
            if (r == 0)
                rc = dr_err_set(err, DR_EIO, "no reply from the controller at %s within %d s",
                                c->ep.display, c->read_timeout_ms / 1000);
            else if (r < 0 && !cli_http_parser_done(&s->p))
                rc = r;
        }
        if (cli_http_parser_done(&s->p) || rc == DR_OK) {
            cli_http_resp_t *resp = &s->p.resp;
            json_t *j = resp->body_len ? json_loadb(resp->body, resp->body_len, 0, NULL) : NULL;
            c->unreachable = false;
            rc = reply_error(c, resp, j, err);
            json_decref(j);
        }
    } else if (rc == DR_OK) {
        c->last_status = s->p.resp.status;
        const char *ct = cli_http_resp_header(&s->p.resp, "Content-Type");
        if (!ct || strncmp(ct, "text/event-stream", 17) != 0)
            rc = dr_err_set(err, DR_EINVAL, "%s: the reply is not an event stream (%s)",
                            c->ep.display, ct ? ct : "no Content-Type");
    }
    if (rc != DR_OK)
        cli_stream_close(s);
    return rc;
}

int cli_stream_read(cli_stream_t *s, int wait_ms, const char **data, size_t *len, dr_err_t *err)
{
    *data = NULL;
    *len = 0;
    if (s->fd < 0)
        return dr_err_set(err, DR_EIO, "the stream is closed");
    if (s->taken) { /* what the last call gave is consumed now */
        cli_http_parser_consume(&s->p, s->taken);
        s->taken = 0;
    }
    if (s->p.resp.body_len == 0 && !s->ended) {
        char buf[16384];
        int r = stream_fill(s, wait_ms, buf, sizeof buf, err);
        if (r < 0)
            return r;
    }
    if (s->p.resp.body_len == 0 && s->ended) {
        s->c->unreachable = true; /* a controller stopping: the caller may reconnect */
        return dr_err_set(err, DR_EIO, "the controller at %s ended the stream", s->c->ep.display);
    }
    *data = s->p.resp.body;
    *len = s->taken = s->p.resp.body_len;
    return DR_OK;
}
