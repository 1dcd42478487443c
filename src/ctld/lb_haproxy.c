/* lb_haproxy.c - keep HAProxy's backends at the services' ready replicas.
 *
 * With --haproxy-socket PATH the controller drives HAProxy's runtime API
 * (the "stats socket PATH level admin" of haproxy.cfg): a service named
 * NAME is the backend NAME, whose servers r1..rN (a `server-template r
 * 1-N ...` line) stand for its replica slots 0..N-1.  A ready replica's
 * server gets its address and port and the state "ready"; any other slot
 * is put in "maint", so HAProxy sends it nothing new.  No reload: the
 * runtime API changes a running HAProxy in place, connections and all.
 *
 * What HAProxy should hold is kept here per (backend, slot); a change is
 * sent at once, and everything is sent again every RESYNC_NS, so a
 * restarted HAProxy (which forgets runtime changes) is back in step within
 * that time.  One connection at a time: the commands go as one line
 * separated by ';' (the socket's non-interactive mode), and HAProxy closes
 * the connection once it has answered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "ctld/ctld.h"
#include "ctld/lb.h"
#include "drover/util.h"

#define RESYNC_NS   (10 * DR_NSEC_PER_SEC)
#define BACKEND_MAX 128

typedef struct lb_entry {
    char backend[BACKEND_MAX];
    uint32_t slot;
    char addr[64];
    uint16_t port;
    bool up;
    uint64_t ver, sent_ver, batch_ver; /* changes, what HAProxy confirmed, what is in flight */
} lb_entry_t;

struct ctld_lb {
    dr_ctld_t *c;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    lb_entry_t *e;
    size_t n, cap;
    struct bufferevent *bev; /* the command in flight, NULL if none */
    struct event *kick;      /* send soon (after the current callback) */
    dr_time_t last_full;
    bool failing; /* the last attempt failed (logged once until one works) */
};

int ctld_lb_start(dr_ctld_t *c, dr_err_t *err)
{
    if (!c->o.haproxy)
        return DR_OK;
    struct ctld_lb *lb = calloc(1, sizeof *lb);
    if (!lb)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    if (strlen(c->o.haproxy) >= sizeof lb->path) {
        free(lb);
        return dr_err_set(err, DR_EINVAL, "--haproxy-socket: '%.64s' is too long for a socket",
                          c->o.haproxy);
    }
    snprintf(lb->path, sizeof lb->path, "%s", c->o.haproxy);
    lb->c = c;
    c->lb = lb;
    return DR_OK;
}

void ctld_lb_free(dr_ctld_t *c)
{
    struct ctld_lb *lb = c->lb;
    if (!lb)
        return;
    if (lb->bev)
        bufferevent_free(lb->bev);
    if (lb->kick)
        event_free(lb->kick);
    free(lb->e);
    free(lb);
    c->lb = NULL;
}

static void lb_send(struct ctld_lb *lb, bool all);

static void lb_done(struct ctld_lb *lb, bool ok, const char *why)
{
    for (size_t i = 0; i < lb->n; i++) {
        if (ok && lb->e[i].batch_ver > lb->e[i].sent_ver)
            lb->e[i].sent_ver = lb->e[i].batch_ver;
        lb->e[i].batch_ver = 0;
    }
    if (lb->bev) {
        bufferevent_free(lb->bev);
        lb->bev = NULL;
    }
    if (!ok && !lb->failing)
        ctld_log("haproxy %s: %s; retrying every second", lb->path, why);
    else if (ok && lb->failing)
        ctld_log("haproxy %s: in step again", lb->path);
    lb->failing = !ok;
    if (ok) /* what changed meanwhile goes now */
        lb_send(lb, false);
}

static void on_read(struct bufferevent *bev, void *arg)
{
    (void)arg;
    /* the answers: empty for a state change, a sentence for an address;
     * errors ("No such backend.", "No such server.") are logged */
    struct evbuffer *in = bufferevent_get_input(bev);
    char *line;
    size_t n;
    while ((line = evbuffer_readln(in, &n, EVBUFFER_EOL_LF))) {
        if (strstr(line, "No such") || strstr(line, "Unknown") || strstr(line, "Require") ||
            strstr(line, "ermission"))
            ctld_log("haproxy: %s", line);
        free(line);
    }
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    struct ctld_lb *lb = arg;
    if (what & BEV_EVENT_CONNECTED)
        return;
    on_read(bev, lb);
    if (what & BEV_EVENT_EOF)
        lb_done(lb, true, NULL);
    else
        lb_done(lb, false, what & BEV_EVENT_TIMEOUT ? "no answer" : "cannot connect or write");
}

/* One line of commands for the entries not yet confirmed (all with `all`). */
static void lb_send(struct ctld_lb *lb, bool all)
{
    if (lb->bev)
        return; /* one at a time; lb_done sends what is left */
    struct evbuffer *cmd = evbuffer_new();
    if (!cmd)
        return;
    for (size_t i = 0; i < lb->n; i++) {
        lb_entry_t *e = &lb->e[i];
        if (!all && e->sent_ver == e->ver)
            continue;
        e->batch_ver = e->ver;
        if (e->up)
            evbuffer_add_printf(cmd,
                                "%sset server %s/r%u addr %s port %u;set server %s/r%u state ready",
                                evbuffer_get_length(cmd) ? ";" : "", e->backend, e->slot + 1,
                                e->addr, (unsigned)e->port, e->backend, e->slot + 1);
        else
            evbuffer_add_printf(cmd, "%sset server %s/r%u state maint",
                                evbuffer_get_length(cmd) ? ";" : "", e->backend, e->slot + 1);
    }
    if (!evbuffer_get_length(cmd)) {
        evbuffer_free(cmd);
        return;
    }
    evbuffer_add(cmd, "\n", 1);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", lb->path);
    lb->bev = bufferevent_socket_new(lb->c->base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!lb->bev) {
        evbuffer_free(cmd);
        lb_done(lb, false, "out of memory");
        return;
    }
    struct timeval to = {2, 0};
    bufferevent_set_timeouts(lb->bev, &to, &to);
    bufferevent_setcb(lb->bev, on_read, NULL, on_event, lb);
    bufferevent_enable(lb->bev, EV_READ | EV_WRITE);
    evbuffer_add_buffer(bufferevent_get_output(lb->bev), cmd);
    evbuffer_free(cmd);
    if (bufferevent_socket_connect(lb->bev, (struct sockaddr *)&sun, sizeof sun) != 0)
        lb_done(lb, false, "cannot connect");
}

static void on_kick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    lb_send(arg, false);
}

/* A name HAProxy takes for a proxy (letters, digits, '-', '_', '.', ':'):
 * anything else could not be a backend, and a ';' or a blank in a job name
 * must never reach the command line. */
static bool backend_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= BACKEND_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_' || s[i] == '.' ||
              s[i] == ':'))
            return false;
    return true;
}

void ctld_lb_set(dr_ctld_t *c, const char *backend, uint32_t slot, const char *addr, uint16_t port,
                 bool up)
{
    struct ctld_lb *lb = c->lb;
    if (!lb)
        return;
    if (!backend_ok(backend)) {
        if (up)
            ctld_log("haproxy: service name '%.64s' is not a backend name (letters, digits, "
                     "- _ . :); not published",
                     backend);
        return;
    }
    lb_entry_t *e = NULL;
    for (size_t i = 0; i < lb->n && !e; i++)
        if (lb->e[i].slot == slot && strcmp(lb->e[i].backend, backend) == 0)
            e = &lb->e[i];
    if (!e) {
        if (!up)
            return; /* never published: HAProxy's own state (disabled) stands */
        if (dr_grow((void **)&lb->e, &lb->cap, lb->n + 1, sizeof *lb->e) != 0)
            return;
        e = &lb->e[lb->n++];
        memset(e, 0, sizeof *e);
        snprintf(e->backend, sizeof e->backend, "%s", backend);
        e->slot = slot;
    } else if (e->up == up && e->port == port && strcmp(e->addr, addr) == 0) {
        return;
    }
    snprintf(e->addr, sizeof e->addr, "%s", addr);
    e->port = port;
    e->up = up;
    e->ver++;
    if (!lb->kick)
        lb->kick = event_new(c->base, -1, 0, on_kick, lb);
    if (lb->kick)
        event_active(lb->kick, EV_TIMEOUT, 0);
}

void ctld_lb_tick(dr_ctld_t *c)
{
    struct ctld_lb *lb = c->lb;
    if (!lb || lb->bev)
        return;
    dr_time_t now = ctld_now(c);
    bool all = now - lb->last_full >= RESYNC_NS;
    if (all)
        lb->last_full = now;
    lb_send(lb, all);
}
