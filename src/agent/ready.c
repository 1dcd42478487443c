/* ready.c - readiness checks of service replicas, run by the agent.
 *
 * A LAUNCH that carries a port and a check ("tcp", "http:/PATH") is a
 * service replica: while it runs, the agent probes that port on the node's
 * loopback every READY_PERIOD_MS and tells the controller when the replica
 * becomes ready and when it stops being ready (READY_FALL failed probes in a
 * row), through a_notify_ready.  The agent probes rather than the
 * controller because it is next to the process: one probe per replica
 * from one hop away, whatever the network between the controller and the
 * node.  A probe is non-blocking on the agent's loop (libevent), bounded by
 * READY_TIMEOUT_MS, and an HTTP check counts 2xx and 3xx answers. */
#include "agent/agent.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#define READY_FIRST_MS   200  /* first probe after the start */
#define READY_PERIOD_MS  500  /* then every */
#define READY_TIMEOUT_MS 1000 /* a probe that takes longer failed */
#define READY_FALL       2    /* failed probes in a row that make a ready replica unready */
#define READY_MAX_LINE   256  /* an HTTP status line longer than this is junk */

static void probe_arm(dr_agent_job_t *j, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(j->ready_ev, &tv);
}

static void report(dr_agent_t *a, dr_agent_job_t *j, uint8_t st)
{
    if (j->ready == st)
        return;
    j->ready = st;
    dr_agent_log(a, "job %llu.%u rank %u: %s (%s on port %u)", (unsigned long long)j->job, j->gen,
                 j->rank, st == DR_READY_YES ? "ready" : "not ready", j->ready_check,
                 (unsigned)j->port);
    if (a->notify_ready)
        a->notify_ready(a, j);
}

/* One probe's outcome. */
static void probe_done(dr_agent_job_t *j, bool ok)
{
    if (j->probe) {
        bufferevent_free(j->probe);
        j->probe = NULL;
    }
    if (ok) {
        j->ready_fails = 0;
        report(j->a, j, DR_READY_YES);
    } else if (++j->ready_fails >= READY_FALL && j->ready == DR_READY_YES) {
        report(j->a, j, DR_READY_NO);
    }
    if (j->running)
        probe_arm(j, READY_PERIOD_MS);
}

/* "HTTP/1.x NNN ..." with NNN in [200, 400)? */
static bool http_ok(const char *line, size_t n)
{
    if (n < 12 || strncmp(line, "HTTP/1.", 7) != 0 || line[8] != ' ')
        return false;
    int code = 0;
    for (int i = 9; i < 12; i++) {
        if (line[i] < '0' || line[i] > '9')
            return false;
        code = code * 10 + (line[i] - '0');
    }
    return code >= 200 && code < 400;
}

static void on_probe_read(struct bufferevent *bev, void *arg)
{
    dr_agent_job_t *j = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    struct evbuffer_ptr eol = evbuffer_search_eol(in, NULL, NULL, EVBUFFER_EOL_CRLF);
    if (eol.pos < 0) {
        if (evbuffer_get_length(in) > READY_MAX_LINE)
            probe_done(j, false);
        return;
    }
    char line[READY_MAX_LINE + 1];
    size_t n = (size_t)eol.pos < READY_MAX_LINE ? (size_t)eol.pos : READY_MAX_LINE;
    evbuffer_copyout(in, line, n);
    line[n] = '\0';
    probe_done(j, http_ok(line, n));
}

static void on_probe_event(struct bufferevent *bev, short what, void *arg)
{
    dr_agent_job_t *j = arg;
    if (!(what & BEV_EVENT_CONNECTED)) {
        probe_done(j, false); /* refused, reset, timed out, closed before a status line */
        return;
    }
    const char *path = strncmp(j->ready_check, "http:", 5) == 0 ? j->ready_check + 5 : NULL;
    if (!path) {
        probe_done(j, true); /* tcp: the connect is the check */
        return;
    }
    evbuffer_add_printf(bufferevent_get_output(bev),
                        "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%u\r\nUser-Agent: drover-agent\r\n"
                        "Connection: close\r\n\r\n",
                        path, (unsigned)j->port);
    bufferevent_enable(bev, EV_READ);
}

static void on_probe_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    dr_agent_job_t *j = arg;
    if (!j->running || j->probe)
        return;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(j->port)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    j->probe = bufferevent_socket_new(j->a->base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!j->probe) {
        probe_done(j, false);
        return;
    }
    struct timeval to = {READY_TIMEOUT_MS / 1000, (READY_TIMEOUT_MS % 1000) * 1000};
    bufferevent_set_timeouts(j->probe, &to, &to);
    bufferevent_setcb(j->probe, on_probe_read, NULL, on_probe_event, j);
    if (bufferevent_socket_connect(j->probe, (struct sockaddr *)&sin, sizeof sin) != 0)
        probe_done(j, false);
}

int dr_agent_ready_start(dr_agent_t *a, dr_agent_job_t *j, uint32_t port, const char *check)
{
    if (!port && (!check || !*check))
        return 0; /* not a service replica */
    j->port = (uint16_t)port;
    if (!check || !*check || strcmp(check, "none") == 0 || !port) {
        report(a, j, DR_READY_YES); /* started = ready */
        return 0;
    }
    j->ready_check = dr_strdup(check);
    j->ready_ev = evtimer_new(a->base, on_probe_timer, j);
    if (!j->ready_check || !j->ready_ev)
        return DR_ENOMEM;
    probe_arm(j, READY_FIRST_MS);
    return 0;
}

void dr_agent_ready_stop(dr_agent_job_t *j)
{
    if (j->probe) {
        bufferevent_free(j->probe);
        j->probe = NULL;
    }
    if (j->ready_ev) {
        event_free(j->ready_ev);
        j->ready_ev = NULL;
    }
}
