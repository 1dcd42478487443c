/* test_agent_link.c - the agent's controller link against a small fake
 * controller on loopback that speaks proto.h: handshake and registration,
 * heartbeats, LAUNCH/KILL/ACK, held ranks re-reported after a reconnect,
 * REJECT, forged and replayed frames, a broken stream, backoff while the
 * controller is down, the lease (jobs stopped when heartbeats go
 * unanswered); and the key file and address helpers. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "agent/agent.h"

#define FAKE_NVML DROVER_BINARY_DIR "/tests/fake/nvml/libnvidia-ml.so.1"
#define MAX_RX    512

typedef struct rx {
    int type;
    char *body;
    size_t len;
    int conn; /* which connection (1-based) */
} rx_t;

/* The fake controller. */
typedef struct ctld {
    struct event_base *base;
    struct evconnlistener *lis;
    int port;
    uint8_t key[DR_PROTO_KEY];
    struct bufferevent *bev;
    dr_proto_session_t s;
    int nconn;
    bool auto_welcome;
    uint64_t epoch;
    uint32_t heartbeat_ms;
    uint32_t lease_ms;      /* WELCOME's lease (0: none) */
    bool answer_heartbeats; /* LEASE for each HEARTBEAT */
    const char *gpu_type;
    uint32_t ngpus;
    rx_t rx[MAX_RX];
    int nrx;
    int count[DR_MSG_NTYPES];
    uint8_t hello_nonce[4][DR_PROTO_NONCE]; /* per connection */
    uint8_t last_frame[4096];               /* the last frame it sent, for replays */
    size_t last_frame_len;
} ctld_t;

typedef struct fx {
    struct event_base *base;
    dr_agent_t a;
    ctld_t c;
    char dir[64];
    bool timed_out;
} fx_t;

static const uint8_t test_key[DR_PROTO_KEY] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                               12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                               23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

/* ---- the fake controller ---- */

static void ctld_send(ctld_t *c, int type, const void *m)
{
    uint8_t *out = NULL;
    size_t len = 0;
    dr_err_t err = {0};
    if (dr_proto_send_msg(&c->s, type, m, &out, &len, &err) != 0)
        fail_msg("fake ctld: cannot send %s: %s", dr_msg_type_name(type), err.msg);
    if (len <= sizeof c->last_frame) {
        memcpy(c->last_frame, out, len);
        c->last_frame_len = len;
    }
    bufferevent_write(c->bev, out, len);
    free(out);
}

static void ctld_welcome(ctld_t *c)
{
    dr_msg_welcome_t w = {.epoch = c->epoch,
                          .heartbeat_ms = c->heartbeat_ms,
                          .lease_ms = c->lease_ms,
                          .gpu_type = (char *)c->gpu_type,
                          .ngpus = c->ngpus,
                          .cpus = 8,
                          .mem_mb = 32768};
    memcpy(w.nonce, c->s.my_nonce, DR_PROTO_NONCE);
    ctld_send(c, DR_MSG_WELCOME, &w);
}

static void ctld_on_read(struct bufferevent *bev, void *arg)
{
    ctld_t *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    for (;;) {
        size_t len = evbuffer_get_length(in);
        uint8_t *buf = evbuffer_pullup(in, -1);
        size_t used = 0;
        dr_frame_t f;
        dr_proto_rc_t rc = dr_proto_decode(&c->s, buf, len, &used, &f);
        if (rc == DR_PROTO_NEED || len == 0)
            return;
        if (rc != DR_PROTO_FRAME)
            fail_msg("fake ctld: decode rc %d (the agent sent a bad frame)", (int)rc);
        if (c->nrx < MAX_RX) {
            rx_t *r = &c->rx[c->nrx++];
            r->type = f.type;
            r->body = dr_strndup(f.body, f.len);
            r->len = f.len;
            r->conn = c->nconn;
        }
        c->count[f.type]++;
        if (f.type == DR_MSG_HELLO) {
            dr_msg_hello_t h;
            dr_err_t err = {0};
            if (dr_msg_hello_parse(&h, f.body, f.len, &err) != 0)
                fail_msg("fake ctld: bad HELLO: %s", err.msg);
            if (!dr_proto_hello_verify(c->key, c->s.my_nonce, h.nonce, h.name, h.proof))
                fail_msg("fake ctld: HELLO without a valid proof of the node key");
            dr_proto_session_set_peer_nonce(&c->s, h.nonce);
            if (c->nconn <= 4)
                memcpy(c->hello_nonce[c->nconn - 1], h.nonce, DR_PROTO_NONCE);
            dr_msg_hello_free(&h);
            if (c->auto_welcome)
                ctld_welcome(c);
        } else if (f.type == DR_MSG_HEARTBEAT && c->answer_heartbeats) {
            dr_msg_lease_t m = {.seq = f.seq};
            ctld_send(c, DR_MSG_LEASE, &m);
        }
        evbuffer_drain(in, used);
        event_base_loopbreak(c->base);
    }
}

static void ctld_drop(ctld_t *c)
{
    if (c->bev) {
        bufferevent_free(c->bev);
        c->bev = NULL;
    }
}

static void ctld_on_event(struct bufferevent *bev, short what, void *arg)
{
    ctld_t *c = arg;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
        ctld_drop(c);
        event_base_loopbreak(c->base);
    }
}

static void ctld_on_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                           int salen, void *arg)
{
    ctld_t *c = arg;
    ctld_drop(c);
    c->bev = bufferevent_socket_new(c->base, fd, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(c->bev, ctld_on_read, NULL, ctld_on_event, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
    uint8_t nonce[DR_PROTO_NONCE];
    for (int i = 0; i < DR_PROTO_NONCE; i++)
        nonce[i] = (uint8_t)(0xc0 + i + c->nconn);
    dr_proto_session_init(&c->s, c->key, nonce);
    c->nconn++;
    dr_msg_challenge_t ch = {.version = DR_PROTO_VERSION};
    memcpy(ch.nonce, nonce, sizeof nonce);
    ctld_send(c, DR_MSG_CHALLENGE, &ch);
    event_base_loopbreak(c->base);
}

/* Listen on 127.0.0.1:port (0 = any free port). */
static void ctld_listen(ctld_t *c, int port)
{
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = htons((uint16_t)port);
    c->lis = evconnlistener_new_bind(c->base, ctld_on_accept, c,
                                     LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16,
                                     (struct sockaddr *)&sin, sizeof sin);
    assert_non_null(c->lis);
    socklen_t sl = sizeof sin;
    getsockname(evconnlistener_get_fd(c->lis), (struct sockaddr *)&sin, &sl);
    c->port = ntohs(sin.sin_port);
}

/* The i-th (0-based) received frame of `type`, or NULL. */
static const rx_t *ctld_rx(const ctld_t *c, int type, int i)
{
    for (int k = 0; k < c->nrx; k++)
        if (c->rx[k].type == type && i-- == 0)
            return &c->rx[k];
    return NULL;
}

/* ---- fixture ---- */

static int setup(void **state)
{
    fx_t *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->base = event_base_new();
    dr_err_t err = {0};
    assert_int_equal(dr_agent_init(&fx->a, fx->base, "n1", &err), 0);
    snprintf(fx->dir, sizeof fx->dir, "/tmp/test_agent_link_XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    fx->a.cg_mount = fx->dir; /* process groups only (see test_agent_launch) */
    ctld_t *c = &fx->c;
    c->base = fx->base;
    memcpy(c->key, test_key, sizeof test_key);
    c->auto_welcome = true;
    c->epoch = 7;
    c->heartbeat_ms = 50;
    c->gpu_type = "A100-SXM4-40GB";
    c->ngpus = 2;
    ctld_listen(c, 0);
    *state = fx;
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    for (size_t i = 0; i < fx->a.njobs; i++)
        if (fx->a.jobs[i]->running)
            (void)dr_agent_job_kill(&fx->a, fx->a.jobs[i], SIGKILL, true);
    for (int i = 0; i < 100 && dr_agent_running(&fx->a); i++) {
        usleep(10000);
        dr_agent_reap(&fx->a);
        event_base_loop(fx->base, EVLOOP_NONBLOCK); /* the keepers' end reports */
    }
    dr_agent_link_free(&fx->a);
    dr_agent_free(&fx->a);
    ctld_drop(&fx->c);
    if (fx->c.lis)
        evconnlistener_free(fx->c.lis);
    for (int i = 0; i < fx->c.nrx; i++)
        free(fx->c.rx[i].body);
    event_base_free(fx->base);
    nftw(fx->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(fx);
    return 0;
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    fx_t *fx = arg;
    fx->timed_out = true;
    event_base_loopbreak(fx->base);
}

/* Run the loop until *counter >= want or timeout. */
static bool run_until(fx_t *fx, const int *counter, int want, int timeout_ms)
{
    fx->timed_out = false;
    struct event *t = evtimer_new(fx->base, on_timeout, fx);
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    evtimer_add(t, &tv);
    while (*counter < want && !fx->timed_out)
        event_base_loop(fx->base, EVLOOP_ONCE);
    event_free(t);
    return *counter >= want;
}

static void spin(fx_t *fx, int ms)
{
    int never = 0;
    (void)run_until(fx, &never, 1, ms);
}

static void start_agent(fx_t *fx, int port, const char *nvml)
{
    char p[16];
    snprintf(p, sizeof p, "%d", port);
    dr_agent_link_opts_t o = {"127.0.0.1", p, test_key, nvml, ""};
    dr_err_t err = {0};
    assert_int_equal(dr_agent_link_start(&fx->a, &o, &err), 0);
}

/* Start the agent and wait for its REGISTER. */
static void connect_agent(fx_t *fx)
{
    start_agent(fx, fx->c.port, "");
    assert_true(run_until(fx, &fx->c.count[DR_MSG_REGISTER], 1, 5000));
}

static void parse_state(const rx_t *r, dr_msg_job_state_t *js)
{
    assert_non_null(r);
    dr_err_t err = {0};
    if (dr_msg_job_state_parse(js, r->body, r->len, &err) != 0)
        fail_msg("JOB_STATE: %s", err.msg);
}

static dr_msg_launch_t mk_launch(fx_t *fx, uint64_t job, char **argv)
{
    dr_msg_launch_t l = {0};
    l.job = job;
    l.gen = 1;
    l.epoch = fx->c.epoch;
    l.nranks = 1;
    l.argv = argv;
    while (argv[l.argc])
        l.argc++;
    l.cwd = fx->dir;
    static char out[256];
    snprintf(out, sizeof out, "%s/out", fx->dir);
    l.out_path = out;
    l.err_path = "";
    l.uid = (uint32_t)getuid();
    l.gid = (uint32_t)getgid();
    l.allow_root = true; /* run as root, the tests' jobs are the tester's */
    l.grace_ns = 1000000000LL;
    return l;
}

/* ---- tests ---- */

static void test_handshake_register_heartbeat(void **state)
{
    fx_t *fx = *state;
    connect_agent(fx);
    ctld_t *c = &fx->c;
    assert_int_equal(c->nconn, 1);
    /* HELLO first: version, name and a fresh (non-zero) nonce */
    assert_int_equal(c->rx[0].type, DR_MSG_HELLO);
    dr_msg_hello_t h;
    dr_err_t err = {0};
    assert_int_equal(dr_msg_hello_parse(&h, c->rx[0].body, c->rx[0].len, &err), 0);
    assert_int_equal(h.version, DR_PROTO_VERSION);
    assert_string_equal(h.name, "n1");
    static const uint8_t zero[DR_PROTO_NONCE];
    assert_memory_not_equal(h.nonce, zero, DR_PROTO_NONCE);
    dr_msg_hello_free(&h);
    /* then REGISTER: no driver here (--nvml "" --rocm ""): the declaration */
    assert_int_equal(c->rx[1].type, DR_MSG_REGISTER);
    dr_msg_register_t r;
    assert_int_equal(dr_msg_register_parse(&r, c->rx[1].body, c->rx[1].len, &err), 0);
    assert_string_equal(r.source, "declared");
    assert_int_equal(r.ngpus, 2);
    assert_int_equal(r.gpus[0].index, 0);
    assert_int_equal(r.gpus[1].index, 1);
    tu_assert_contains(r.gpus[0].name, "A100");
    assert_true(r.cpus > 0);
    assert_true(r.mem_mb > 0);
    assert_true(r.numa_nodes >= 1);
    assert_true(strlen(r.hostname) > 0);
    assert_int_equal(r.nheld, 0);
    dr_msg_register_free(&r);
    assert_int_equal(fx->a.epoch, 7);
    assert_int_equal(dr_agent_link_sessions(&fx->a), 1);
    /* heartbeats every 50 ms */
    assert_true(run_until(fx, &c->count[DR_MSG_HEARTBEAT], 3, 2000));
    const rx_t *hb = ctld_rx(c, DR_MSG_HEARTBEAT, 0);
    dr_msg_heartbeat_t m;
    assert_int_equal(dr_msg_heartbeat_parse(&m, hb->body, hb->len, &err), 0);
    assert_int_equal(m.running, 0);
    assert_true(m.now_ns > 0);
    dr_msg_heartbeat_free(&m);
}

static void test_register_nvml(void **state)
{
    fx_t *fx = *state;
    if (access(FAKE_NVML, R_OK) != 0)
        skip();
    setenv("FAKE_NVML_GPUS",
           "NVIDIA H100 80GB HBM3:81559:0000:17:00.0;NVIDIA H100 80GB HBM3:81559:0000:2a:00.0", 1);
    start_agent(fx, fx->c.port, FAKE_NVML);
    assert_true(run_until(fx, &fx->c.count[DR_MSG_REGISTER], 1, 5000));
    unsetenv("FAKE_NVML_GPUS");
    const rx_t *x = ctld_rx(&fx->c, DR_MSG_REGISTER, 0);
    dr_msg_register_t r;
    dr_err_t err = {0};
    assert_int_equal(dr_msg_register_parse(&r, x->body, x->len, &err), 0);
    assert_string_equal(r.source, "nvml");
    assert_int_equal(r.ngpus, 2);
    assert_string_equal(r.gpus[0].name, "NVIDIA H100 80GB HBM3");
    tu_assert_contains(r.gpus[1].pci, "2a:00.0");
    assert_true(r.gpus[0].mem_mb >= 80000);
    dr_msg_register_free(&r);
}

static void test_launch_ack_kill(void **state)
{
    fx_t *fx = *state;
    connect_agent(fx);
    ctld_t *c = &fx->c;
    char *argv[] = {"/bin/sh", "-c", "echo hi; exit 3", NULL};
    dr_msg_launch_t l = mk_launch(fx, 5, argv);
    ctld_send(c, DR_MSG_LAUNCH, &l);
    assert_true(run_until(fx, &c->count[DR_MSG_JOB_STATE], 2, 5000));
    dr_msg_job_state_t js;
    parse_state(ctld_rx(c, DR_MSG_JOB_STATE, 0), &js);
    assert_true(js.started);
    assert_int_equal(js.job, 5);
    assert_int_equal(js.gen, 1);
    assert_true(js.pid > 0);
    dr_msg_job_state_free(&js);
    parse_state(ctld_rx(c, DR_MSG_JOB_STATE, 1), &js);
    assert_false(js.started);
    assert_int_equal(js.exit_code, 3);
    assert_int_equal(js.signal, 0);
    assert_int_equal(js.why, DR_END_EXIT);
    assert_true(js.t_ns > 0);
    dr_msg_job_state_free(&js);
    char path[128];
    snprintf(path, sizeof path, "%s/out", fx->dir);
    char *out = tu_read(path, NULL);
    assert_string_equal(out, "hi\n");
    free(out);
    /* held until ACKed; a repeated LAUNCH of it is ignored meanwhile */
    assert_int_equal(fx->a.njobs, 1);
    ctld_send(c, DR_MSG_LAUNCH, &l);
    dr_msg_ack_t ack = {.job = 5, .gen = 1, .rank = 0};
    ctld_send(c, DR_MSG_ACK, &ack);
    for (int i = 0; i < 100 && fx->a.njobs; i++)
        spin(fx, 10);
    assert_int_equal(fx->a.njobs, 0);
    assert_int_equal(c->count[DR_MSG_JOB_STATE], 2);

    /* a LAUNCH from an older controller epoch is dropped */
    char *argv2[] = {"sleep", "30", NULL};
    dr_msg_launch_t old = mk_launch(fx, 6, argv2);
    old.epoch = 6;
    ctld_send(c, DR_MSG_LAUNCH, &old);
    spin(fx, 150);
    assert_int_equal(c->count[DR_MSG_JOB_STATE], 2);
    assert_int_equal(fx->a.njobs, 0);

    /* KILL: SIGTERM, reported as killed */
    dr_msg_launch_t l2 = mk_launch(fx, 6, argv2);
    ctld_send(c, DR_MSG_LAUNCH, &l2);
    assert_true(run_until(fx, &c->count[DR_MSG_JOB_STATE], 3, 5000));
    dr_msg_kill_t k = {
        .job = 6, .gen = 1, .signal = SIGTERM, .grace_ns = 1000000000LL, .reason = "test"};
    ctld_send(c, DR_MSG_KILL, &k);
    assert_true(run_until(fx, &c->count[DR_MSG_JOB_STATE], 4, 5000));
    parse_state(ctld_rx(c, DR_MSG_JOB_STATE, 3), &js);
    assert_false(js.started);
    assert_int_equal(js.job, 6);
    assert_int_equal(js.why, DR_END_KILLED);
    assert_int_equal(js.signal, SIGTERM);
    dr_msg_job_state_free(&js);
}

static void test_launch_failure_reported(void **state)
{
    fx_t *fx = *state;
    connect_agent(fx);
    char *argv[] = {"/bin/nope-not-here", NULL};
    dr_msg_launch_t l = mk_launch(fx, 8, argv);
    ctld_send(&fx->c, DR_MSG_LAUNCH, &l);
    assert_true(run_until(fx, &fx->c.count[DR_MSG_JOB_STATE], 1, 5000));
    dr_msg_job_state_t js;
    parse_state(ctld_rx(&fx->c, DR_MSG_JOB_STATE, 0), &js);
    assert_false(js.started);
    assert_int_equal(js.why, DR_END_LAUNCH);
    assert_string_equal(js.detail, "exec /bin/nope-not-here: No such file or directory");
    dr_msg_job_state_free(&js);
}

/* The connection drops: jobs run on; the next session's REGISTER holds
 * the running rank and the end report nobody ACKed, even one that ended
 * while no session was registered. */
static void test_reconnect_reports_held(void **state)
{
    fx_t *fx = *state;
    connect_agent(fx);
    ctld_t *c = &fx->c;
    char *run[] = {"sleep", "30", NULL};
    char *quick[] = {"/bin/sh", "-c", "exit 4", NULL};
    char *later[] = {"/bin/sh", "-c", "sleep 0.3; exit 5", NULL};
    dr_msg_launch_t l1 = mk_launch(fx, 1, run);
    dr_msg_launch_t l2 = mk_launch(fx, 2, quick);
    ctld_send(c, DR_MSG_LAUNCH, &l1);
    ctld_send(c, DR_MSG_LAUNCH, &l2);
    assert_true(run_until(fx, &c->count[DR_MSG_JOB_STATE], 3, 5000));
    dr_msg_launch_t l3 = mk_launch(fx, 3, later);
    ctld_send(c, DR_MSG_LAUNCH, &l3);
    assert_true(run_until(fx, &c->count[DR_MSG_JOB_STATE], 4, 5000));
    pid_t pid1 = fx->a.jobs[0]->pid;
    /* drop the connection; hold back WELCOME so job 3 ends unregistered */
    c->auto_welcome = false;
    ctld_drop(c);
    assert_true(run_until(fx, &c->count[DR_MSG_HELLO], 2, 5000));
    assert_int_equal(c->nconn, 2);
    assert_memory_not_equal(c->hello_nonce[0], c->hello_nonce[1], DR_PROTO_NONCE);
    for (int i = 0; i < 300; i++) {
        dr_agent_job_t *j3 = dr_agent_job_find(&fx->a, 3, 1, 0);
        if (j3 && !j3->running)
            break;
        spin(fx, 10);
    }
    assert_int_equal(c->count[DR_MSG_JOB_STATE], 4); /* not sent: no session */
    ctld_welcome(c);
    assert_true(run_until(fx, &c->count[DR_MSG_REGISTER], 2, 5000));
    assert_int_equal(kill(pid1, 0), 0); /* still running */
    const rx_t *x = ctld_rx(c, DR_MSG_REGISTER, 1);
    dr_msg_register_t r;
    dr_err_t err = {0};
    assert_int_equal(dr_msg_register_parse(&r, x->body, x->len, &err), 0);
    assert_int_equal(r.nheld, 3);
    bool seen[4] = {0};
    for (uint32_t i = 0; i < r.nheld; i++) {
        const dr_msg_held_t *h = &r.held[i];
        assert_true(h->job >= 1 && h->job <= 3);
        seen[h->job] = true;
        if (h->job == 1) {
            assert_true(h->running);
        } else {
            assert_false(h->running);
            assert_int_equal(h->exit_code, h->job == 2 ? 4 : 5);
            assert_int_equal(h->why, DR_END_EXIT);
            assert_true(h->end_ns > 0);
        }
    }
    assert_true(seen[1] && seen[2] && seen[3]);
    dr_msg_register_free(&r);
    assert_int_equal(dr_agent_link_sessions(&fx->a), 2);
    /* the new session works: ACK one report, KILL the runner */
    dr_msg_ack_t ack = {.job = 2, .gen = 1};
    ctld_send(c, DR_MSG_ACK, &ack);
    dr_msg_kill_t k = {.job = 1, .gen = 1, .signal = SIGKILL};
    ctld_send(c, DR_MSG_KILL, &k);
    assert_true(run_until(fx, &c->count[DR_MSG_JOB_STATE], 5, 5000));
    assert_null(dr_agent_job_find(&fx->a, 2, 1, 0));
}

/* The lease: renewed while heartbeats are answered; once they go
 * unanswered for longer than the lease the agent stops its job on its own
 * (SIGTERM half a lease before its end: the job's grace is longer), drops
 * the link, and reports the end (why = lease) in the next REGISTER. */
static void test_lease(void **state)
{
    fx_t *fx = *state;
    ctld_t *c = &fx->c;
    c->lease_ms = 400;
    c->answer_heartbeats = true;
    connect_agent(fx);
    char *run[] = {"sleep", "30", NULL};
    dr_msg_launch_t l = mk_launch(fx, 9, run);
    l.grace_ns = 10 * 1000000000LL;
    ctld_send(c, DR_MSG_LAUNCH, &l);
    assert_true(run_until(fx, &c->count[DR_MSG_JOB_STATE], 1, 5000));
    spin(fx, 1000); /* 2.5 leases, all answered */
    dr_agent_job_t *j = dr_agent_job_find(&fx->a, 9, 1, 0);
    assert_non_null(j);
    assert_true(j->running);
    assert_int_equal(dr_agent_link_sessions(&fx->a), 1);
    /* unanswered from now */
    c->answer_heartbeats = false;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 300 && j->running; i++)
        spin(fx, 10);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_false(j->running);
    assert_int_equal(j->why, DR_END_LEASE);
    assert_int_equal(j->signal, SIGTERM);
    /* SIGTERM at lease - lease / 2 from the last answered heartbeat (sent
     * at most one heartbeat, 50 ms, before t0) */
    if (dt < 0.1 || dt > 0.5)
        fail_msg("stopped %.3f s after the answers stopped (lease 0.4 s, SIGTERM at 0.2 s)", dt);
    assert_true(fx->a.lease_lapsed);
    /* the agent dropped the session and reconnects; its REGISTER says why */
    c->answer_heartbeats = true;
    assert_true(run_until(fx, &c->count[DR_MSG_REGISTER], 2, 5000));
    const rx_t *x = ctld_rx(c, DR_MSG_REGISTER, 1);
    dr_msg_register_t r;
    dr_err_t err = {0};
    assert_int_equal(dr_msg_register_parse(&r, x->body, x->len, &err), 0);
    assert_int_equal(r.nheld, 1);
    assert_false(r.held[0].running);
    assert_int_equal(r.held[0].why, DR_END_LEASE);
    assert_int_equal(r.held[0].signal, SIGTERM);
    dr_msg_register_free(&r);
    assert_false(fx->a.lease_lapsed);
    assert_int_equal(c->count[DR_MSG_JOB_STATE], 1); /* the end went in the REGISTER */
}

static void test_reject_exits_1(void **state)
{
    fx_t *fx = *state;
    connect_agent(fx);
    dr_msg_reject_t rj = {.reason = "node n1 is not in the config"};
    ctld_send(&fx->c, DR_MSG_REJECT, &rj);
    spin(fx, 300);
    assert_true(fx->a.stopping);
    assert_int_equal(fx->a.exit_code, 1);
    /* the loop was told to exit; and the link does not reconnect */
    spin(fx, 400);
    assert_int_equal(fx->c.nconn, 1);
}

/* Frames under the wrong key or replayed are counted and ignored; the
 * session goes on. */
static void test_forged_and_replayed_dropped(void **state)
{
    fx_t *fx = *state;
    connect_agent(fx);
    ctld_t *c = &fx->c;
    char *argv[] = {"/bin/true", NULL};
    dr_msg_launch_t l = mk_launch(fx, 9, argv);
    /* forged: same nonces and sequence, sealed under another key */
    dr_proto_session_t forger = c->s;
    memset(forger.tx_key, 0x55, sizeof forger.tx_key);
    uint8_t *out = NULL;
    size_t len = 0;
    dr_err_t err = {0};
    assert_int_equal(dr_proto_send_msg(&forger, DR_MSG_LAUNCH, &l, &out, &len, &err), 0);
    bufferevent_write(c->bev, out, len);
    free(out);
    spin(fx, 150);
    assert_int_equal(dr_agent_link_stats(&fx->a).bad_mac, 1);
    assert_int_equal(c->count[DR_MSG_JOB_STATE], 0);
    assert_int_equal(fx->a.njobs, 0);
    /* a genuine ACK (harmless), then that frame again: a replay */
    dr_msg_ack_t ack = {.job = 1234, .gen = 1};
    ctld_send(c, DR_MSG_ACK, &ack);
    spin(fx, 50);
    bufferevent_write(c->bev, c->last_frame, c->last_frame_len);
    spin(fx, 150);
    assert_int_equal(dr_agent_link_stats(&fx->a).replayed, 1);
    /* still the same session, and it still works */
    ctld_send(c, DR_MSG_LAUNCH, &l);
    assert_true(run_until(fx, &c->count[DR_MSG_JOB_STATE], 2, 5000));
    assert_int_equal(c->nconn, 1);
}

/* A large LAUNCH arriving in pieces is put together; two frames in one
 * write are both taken. */
static void test_fragmented_large_frame(void **state)
{
    fx_t *fx = *state;
    connect_agent(fx);
    ctld_t *c = &fx->c;
    /* 100 entries of 3000 bytes (a string may be at most 4096) */
    enum { NV = 100, VLEN = 3000 };
    char **env = calloc(NV, sizeof *env);
    for (int i = 0; i < NV; i++) {
        env[i] = malloc(VLEN + 16);
        int n = snprintf(env[i], 16, "B%d=", i);
        memset(env[i] + n, 'x', VLEN);
        env[i][n + VLEN] = '\0';
    }
    char *argv[] = {"/bin/sh", "-c", "echo $(env | grep -c '^B[0-9]*=') ${#B99}", NULL};
    dr_msg_launch_t l = mk_launch(fx, 10, argv);
    l.env = env;
    l.nenv = NV;
    uint8_t *frame = NULL;
    size_t len = 0;
    dr_err_t err = {0};
    assert_int_equal(dr_proto_send_msg(&c->s, DR_MSG_LAUNCH, &l, &frame, &len, &err), 0);
    for (int i = 0; i < NV; i++)
        free(env[i]);
    free(env);
    assert_true(len > NV * VLEN);
    size_t cut[] = {10, 36, 5000, len / 2, len - 1, len};
    size_t at = 0;
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        bufferevent_write(c->bev, frame + at, cut[i] - at);
        at = cut[i];
        spin(fx, 30);
        if (i < 5)
            assert_int_equal(c->count[DR_MSG_JOB_STATE], 0);
    }
    free(frame);
    assert_true(run_until(fx, &c->count[DR_MSG_JOB_STATE], 2, 5000));
    char path[128];
    snprintf(path, sizeof path, "%s/out", fx->dir);
    char *out = tu_read(path, NULL);
    assert_string_equal(out, "100 3000\n");
    free(out);
    /* an ACK and a KILL of nothing in one write: both read */
    uint8_t *a1 = NULL, *a2 = NULL;
    size_t n1 = 0, n2 = 0;
    dr_msg_ack_t ack = {.job = 10, .gen = 1};
    dr_msg_kill_t k = {.job = 77, .gen = 1, .signal = SIGTERM};
    assert_int_equal(dr_proto_send_msg(&c->s, DR_MSG_ACK, &ack, &a1, &n1, &err), 0);
    assert_int_equal(dr_proto_send_msg(&c->s, DR_MSG_KILL, &k, &a2, &n2, &err), 0);
    uint8_t both[2048];
    assert_true(n1 + n2 <= sizeof both);
    memcpy(both, a1, n1);
    memcpy(both + n1, a2, n2);
    bufferevent_write(c->bev, both, n1 + n2);
    free(a1);
    free(a2);
    for (int i = 0; i < 100 && fx->a.njobs; i++)
        spin(fx, 10);
    assert_int_equal(fx->a.njobs, 0);
    dr_proto_stats_t st = dr_agent_link_stats(&fx->a);
    assert_int_equal(st.bad_mac + st.replayed + st.bad_header + st.bad_body, 0);
    assert_int_equal(c->nconn, 1);
}

static void test_bad_header_reconnects(void **state)
{
    fx_t *fx = *state;
    connect_agent(fx);
    char junk[64];
    memset(junk, 'X', sizeof junk);
    bufferevent_write(fx->c.bev, junk, sizeof junk);
    assert_true(run_until(fx, &fx->c.count[DR_MSG_REGISTER], 2, 5000));
    assert_int_equal(fx->c.nconn, 2);
    assert_int_equal(dr_agent_link_sessions(&fx->a), 2);
}

/* The controller is down at first: the agent retries with backoff and
 * registers once it is up. */
static void test_controller_down_then_up(void **state)
{
    fx_t *fx = *state;
    ctld_t *c = &fx->c;
    int port = c->port;
    evconnlistener_free(c->lis);
    c->lis = NULL;
    start_agent(fx, port, "");
    spin(fx, 500); /* a few refused attempts: 100, 200 ms ... */
    assert_int_equal(c->nconn, 0);
    ctld_listen(c, port);
    /* the next attempt is at most 5 s away, usually < 1 s */
    assert_true(run_until(fx, &c->count[DR_MSG_REGISTER], 1, 7000));
    assert_int_equal(c->nconn, 1);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    chmod(path, mode);
}

static void test_key_file(void **state)
{
    fx_t *fx = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/cluster.key", fx->dir);
    char hex[66];
    dr_proto_key_format(test_key, hex);
    write_file(path, hex, 0600);
    uint8_t key[DR_PROTO_KEY];
    dr_err_t err = {0};
    assert_int_equal(dr_agent_key_load(path, key, &err), 0);
    assert_memory_equal(key, test_key, DR_PROTO_KEY);
    chmod(path, 0400);
    assert_int_equal(dr_agent_key_load(path, key, &err), 0);
    /* readable by others: refused, saying how to fix it */
    chmod(path, 0644);
    assert_int_equal(dr_agent_key_load(path, key, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "mode 0644");
    tu_assert_contains(err.msg, "chmod 600");
    chmod(path, 0640);
    assert_int_equal(dr_agent_key_load(path, key, &err), DR_EINVAL);
    /* bad contents: named, without echoing the key */
    write_file(path, "0123456789abcdef\n", 0600);
    assert_true(dr_agent_key_load(path, key, &err) < 0);
    tu_assert_contains(err.msg, path);
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none.key", fx->dir);
    assert_int_equal(dr_agent_key_load(missing, key, &err), DR_EIO);
    tu_assert_contains(err.msg, "No such file");
}

static void test_split_hostport(void **state)
{
    (void)state;
    char h[64], p[16];
    dr_err_t err = {0};
    assert_int_equal(dr_agent_split_hostport("ctl.example:6817", h, sizeof h, p, sizeof p, &err),
                     0);
    assert_string_equal(h, "ctl.example");
    assert_string_equal(p, "6817");
    assert_int_equal(dr_agent_split_hostport("[::1]:99", h, sizeof h, p, sizeof p, &err), 0);
    assert_string_equal(h, "::1");
    assert_string_equal(p, "99");
    const char *bad[] = {"host",       "host:",   ":80",    "host:0",
                         "host:65536", "host:8x", "::1:80", "[::1]80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (dr_agent_split_hostport(bad[i], h, sizeof h, p, sizeof p, &err) != DR_EINVAL)
            fail_msg("'%s' accepted", bad[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_handshake_register_heartbeat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_nvml, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_ack_kill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_failure_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconnect_reports_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lease, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reject_exits_1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged_and_replayed_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fragmented_large_frame, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_header_reconnects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_controller_down_then_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_file, setup, teardown),
        cmocka_unit_test(test_split_hostport),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
