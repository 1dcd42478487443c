/* agent_link.c - the controller's end of the agent connections.
 *
 * Agents connect in (so a node behind NAT needs no open port).  Every byte
 * from an agent is hostile until dr_proto_decode has authenticated it:
 * forged, corrupted and replayed frames are dropped and counted; a stream
 * whose framing is broken is closed.  Authentic frames go to
 * agent_msgs.c.
 *
 * Before its HELLO has proved a node key, a connection is anyone's, so it
 * gets little: a CHALLENGE, CTLD_HANDSHAKE_S to answer it, a read buffer
 * of one small frame, and one of at most CTLD_MAX_UNAUTHED such places
 * (the oldest goes when more come); what it is refused for is logged at a
 * bounded rate (log.c). */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "ctld/ctld.h"
#include "ctld/agent_link.h"
#include "ctld/fence.h"
#include "ctld/output.h"

#define AGENT_MAX_BUF     (DR_PROTO_HDR + DR_PROTO_MAX_BODY + DR_PROTO_TAG)
#define AGENT_PREAUTH_BUF (DR_PROTO_HDR + DR_PROTO_MAX_PREAUTH + DR_PROTO_TAG)
/* 256: a restarted controller sees every agent of a large cluster connect
 * at once, and evicting real agents mid-handshake would slow that down;
 * 256 connections of at most one pre-auth frame each hold < 17 MiB. */
enum { CTLD_HANDSHAKE_S = 5, CTLD_MAX_UNAUTHED = 256 };

int ctld_agent_send(ctld_agent_t *a, int type, const char *json)
{
    if (a->tap) {
        a->tap(a->tap_ud, type, json);
        return DR_OK;
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    dr_err_t err = {0};
    int rc = dr_proto_encode(&a->sess, type, json, strlen(json), &buf, &len, &err);
    if (rc != DR_OK) {
        ctld_log("agent %s: cannot frame %s: %s", a->addr, dr_msg_type_name(type), err.msg);
        return rc;
    }
    rc = bufferevent_write(a->bev, buf, len) == 0 ? DR_OK : DR_EIO;
    free(buf);
    return rc;
}

void ctld_agent_close(ctld_agent_t *a, const char *why)
{
    dr_ctld_t *c = a->c;
    c->agent_closes++;
    for (ctld_agent_t **p = &c->agents; *p; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            break;
        }
    if (!a->authed)
        c->agents_unauthed--;
    if (a->deadline)
        event_free(a->deadline);
    if (a->node >= 0 && c->nodes[a->node].agent == a) {
        ctld_node_t *n = &c->nodes[a->node];
        n->agent = NULL;
        /* silent since its last heartbeat: closing a connection for having
         * been silent must not start the timeout over (the node would be
         * lost after two timeouts instead of one) */
        dr_time_t now = ctld_now(c);
        n->lost_at = n->last_heartbeat && n->last_heartbeat < now ? n->last_heartbeat : now;
        if (!n->admin_drain) /* an operator's reason stands */
            snprintf(n->reason, sizeof n->reason, "agent disconnected: %s", why);
        ctld_log("node %s: agent %s disconnected (%s)", c->cl.nodes[a->node].name, a->addr, why);
        if (a->registered)
            ctld_node_gone(c, (uint32_t)a->node, why); /* nothing new starts there */
        ctld_output_node_gone(c, a->node);
    }
    if (a->bev)
        bufferevent_free(a->bev);
    free(a);
}

ctld_agent_t *ctld_agent_attach(dr_ctld_t *c, uint32_t node,
                                void (*tap)(void *ud, int type, const char *json), void *ud)
{
    if (node >= c->cl.nnodes || c->nodes[node].agent)
        return NULL;
    ctld_agent_t *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->c = c;
    a->node = (int)node;
    a->authed = a->welcomed = true;
    a->accepted_ns = ctld_boot_ns();
    a->tap = tap;
    a->tap_ud = ud;
    snprintf(a->addr, sizeof a->addr, "in-process");
    snprintf(c->nodes[node].ip, sizeof c->nodes[node].ip, "127.0.0.1");
    a->next = c->agents;
    c->agents = a;
    c->nodes[node].agent = a;
    return a;
}

static void on_read(struct bufferevent *bev, void *arg)
{
    ctld_agent_t *a = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    for (;;) {
        size_t avail = evbuffer_get_length(in);
        if (avail < DR_PROTO_HDR)
            return;
        uint8_t *p = evbuffer_pullup(in, -1);
        size_t used = 0;
        dr_frame_t f;
        dr_proto_rc_t rc = dr_proto_decode(&a->sess, p, avail, &used, &f);
        if (rc == DR_PROTO_NEED) {
            if (avail >= (a->authed ? AGENT_MAX_BUF : AGENT_PREAUTH_BUF))
                ctld_agent_close(a, "frame too large");
            return;
        }
        if (rc == DR_PROTO_FATAL) {
            int v = dr_proto_peer_version(p, avail);
            if (v >= 0 && v != DR_PROTO_VERSION)
                ctld_log_limited(&a->c->agent_log,
                                 "agent %s: speaks protocol version %d, this controller %d: "
                                 "upgrade drover-agent there and give it its node key "
                                 "(droverd --enroll NODE; docs/operations.md); closing",
                                 a->addr, v, DR_PROTO_VERSION);
            else
                ctld_log_limited(&a->c->agent_log, "agent %s: malformed frame header%s; closing",
                                 a->addr, a->authed ? "" : " before its HELLO");
            a->c->st.frames_dropped++;
            ctld_agent_close(a, "malformed frame");
            return;
        }
        if (rc == DR_PROTO_DROPPED) {
            a->c->st.frames_dropped++;
            ctld_log_limited(&a->c->agent_log,
                             "agent %s: dropped a frame (bad tag %llu, replayed %llu)", a->addr,
                             (unsigned long long)a->sess.stats.bad_mac,
                             (unsigned long long)a->sess.stats.replayed);
            evbuffer_drain(in, used);
            continue;
        }
        /* the body points into the buffer: handle it before draining; the
         * handler may close the agent (REJECT, protocol error) */
        dr_ctld_t *c = a->c;
        uint64_t closes = c->agent_closes;
        ctld_agent_msg(a, &f);
        /* walk the agent list only when some agent was closed: the walk is
         * O(agents) and this runs for every frame */
        bool still = closes == c->agent_closes;
        for (ctld_agent_t *x = c->agents; x && !still; x = x->next)
            still |= x == a;
        if (!still || a->closing)
            return;
        evbuffer_drain(in, used);
    }
}

static void on_write(struct bufferevent *bev, void *arg)
{
    ctld_agent_t *a = arg;
    if (a->closing && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
        ctld_agent_close(a, "rejected");
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    ctld_agent_t *a = arg;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        ctld_agent_close(a, what & BEV_EVENT_EOF ? "connection closed" : strerror(errno));
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    ctld_agent_t *a = arg;
    if (a->authed)
        return;
    ctld_log_limited(&a->c->agent_log, "agent %s: no valid HELLO within %d s; closing", a->addr,
                     CTLD_HANDSHAKE_S);
    ctld_agent_close(a, "handshake timed out");
}

void ctld_agent_authed(ctld_agent_t *a)
{
    if (a->authed)
        return;
    a->authed = true;
    a->c->agents_unauthed--;
    event_del(a->deadline);
    bufferevent_setwatermark(a->bev, EV_READ, 0, AGENT_MAX_BUF);
}

/* Room for one more connection nobody knows yet: at the cap the oldest
 * goes (a flood of idle connections then cannot keep a real agent out
 * for longer than it takes to open CTLD_MAX_UNAUTHED more). */
static void unauthed_room(dr_ctld_t *c)
{
    if (c->agents_unauthed < CTLD_MAX_UNAUTHED)
        return;
    ctld_agent_t *old = NULL;
    for (ctld_agent_t *x = c->agents; x; x = x->next)
        if (!x->authed && !x->closing && (!old || x->accepted_ns <= old->accepted_ns))
            old = x;
    if (!old)
        return;
    ctld_log_limited(&c->agent_log,
                     "agents: %u connections without a valid HELLO; closing the oldest (%s)",
                     c->agents_unauthed, old->addr);
    ctld_agent_close(old, "too many connections without a valid HELLO");
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int slen,
                      void *arg)
{
    (void)l;
    (void)slen;
    dr_ctld_t *c = arg;
    unauthed_room(c);
    ctld_agent_t *a = calloc(1, sizeof *a);
    if (!a) {
        evutil_closesocket(fd);
        return;
    }
    a->c = c;
    a->node = -1;
    a->accepted_ns = ctld_boot_ns();
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        char ip[INET_ADDRSTRLEN];
        evutil_inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
        snprintf(a->addr, sizeof a->addr, "%s:%u", ip, ntohs(in->sin_port));
    } else {
        snprintf(a->addr, sizeof a->addr, "?");
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    uint8_t nonce[DR_PROTO_NONCE];
    static const uint8_t no_key[DR_PROTO_KEY]; /* the node key comes with the HELLO */
    if (getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce) {
        free(a);
        evutil_closesocket(fd);
        return;
    }
    dr_proto_session_init(&a->sess, no_key, nonce);
    a->bev = bufferevent_socket_new(c->base, fd, BEV_OPT_CLOSE_ON_FREE);
    a->deadline = evtimer_new(c->base, on_deadline, a);
    if (!a->bev || !a->deadline) {
        if (a->deadline)
            event_free(a->deadline);
        if (a->bev)
            bufferevent_free(a->bev);
        else
            evutil_closesocket(fd);
        free(a);
        return;
    }
    bufferevent_setcb(a->bev, on_read, on_write, on_event, a);
    bufferevent_setwatermark(a->bev, EV_READ, 0, AGENT_PREAUTH_BUF);
    bufferevent_enable(a->bev, EV_READ | EV_WRITE);
    a->next = c->agents;
    c->agents = a;
    c->agents_unauthed++;
    struct timeval tv = {CTLD_HANDSHAKE_S, 0};
    evtimer_add(a->deadline, &tv);
    /* the challenge its HELLO must answer */
    dr_msg_challenge_t ch = {.version = DR_PROTO_VERSION};
    memcpy(ch.nonce, nonce, sizeof nonce);
    char *json = NULL;
    size_t len;
    if (dr_msg_challenge_encode(&ch, &json, &len, NULL) != DR_OK ||
        ctld_agent_send(a, DR_MSG_CHALLENGE, json) != DR_OK)
        ctld_agent_close(a, "cannot send CHALLENGE");
    free(json);
}

int ctld_parse_hostport(const char *s, struct sockaddr_storage *ss, int *slen, dr_err_t *err,
                        const char *opt)
{
    char host[256];
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= sizeof host)
        return dr_err_set(err, DR_EINVAL, "%s: '%s' is not HOST:PORT", opt, s);
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535)
        return dr_err_set(err, DR_EINVAL, "%s: '%s': bad port", opt, s);
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    memset(ss, 0, sizeof *ss);
    in->sin_family = AF_INET;
    in->sin_port = htons((uint16_t)port);
    if (evutil_inet_pton(AF_INET, strcmp(host, "*") == 0 ? "0.0.0.0" : host, &in->sin_addr) != 1)
        return dr_err_set(err, DR_EINVAL, "%s: '%s': not an IPv4 address", opt, host);
    *slen = sizeof *in;
    return DR_OK;
}

int ctld_agents_start(dr_ctld_t *c, dr_err_t *err)
{
    struct sockaddr_storage ss;
    int slen = 0;
    int rc = ctld_parse_hostport(c->o.agent_listen, &ss, &slen, err, "--agent-listen");
    if (rc != DR_OK)
        return rc;
    c->agent_lst =
        evconnlistener_new_bind(c->base, on_accept, c, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE,
                                128, (struct sockaddr *)&ss, slen);
    if (!c->agent_lst)
        return dr_err_set(err, DR_EIO, "--agent-listen %s: %s", c->o.agent_listen, strerror(errno));
    ctld_log("agents: listening on %s", c->o.agent_listen);
    return DR_OK;
}
