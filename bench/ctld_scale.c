/* ctld_scale.c - one real droverd against thousands of simulated agents.
 *
 *   ctld_scale [--nodes N] [--jobs N] [--array N] [--policy P] [--runtime S|A-B]
 *              [--duration S] [--idle S] [--kill-node] [--json] [--quick] ...
 *
 * Starts a real droverd (its SQLite store, synchronous=FULL, its HTTP API on
 * a Unix socket, its agent port on loopback) with a generated cluster of N
 * nodes x 8 H100 and a fresh key, then opens N agent connections from this
 * one process and one libevent loop.  Each simulated agent has its own
 * socket, nonce and HMAC sequence numbers and speaks the real wire protocol
 * through src/proto (HELLO, REGISTER, HEARTBEAT at the period WELCOME gives,
 * JOB_STATE started / ended, KILL, ACK).  What is simulated: the jobs' run
 * times (no process runs: a LAUNCH of `sleep S` is answered "started" at
 * once and "ended, exit 0" S seconds later) and the GPUs (declared).  What
 * is real: everything droverd does.
 *
 * Phases: connect and register the agents (in windows of --connect-batch
 * handshakes); idle (droverd's CPU per heartbeat); submit --jobs jobs of a
 * mixed shape through the API from --clients child processes, then the
 * --array array as one submit; steady state for --duration seconds
 * (droverd's GET /v1/ping stats sampled every second: pass and commit time);
 * --kill-node: one agent running jobs falls silent, and the time until the
 * controller closes it, declares the node lost and has its jobs launched
 * elsewhere is measured.  Every process started here is stopped at the end,
 * also on failure, SIGINT or SIGTERM (and droverd dies with this process:
 * PR_SET_PDEATHSIG). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <jansson.h>

#include "cli/client.h"
#include "drover/proto.h"
#include "drover/time.h"
#include "drover/util.h"

#define GPUS_PER_NODE 8
#define MAX_SECS      36000 /* per-second launch histogram */
#define MAX_WATCH     64    /* jobs of the killed node followed */

/* ---- options and global state ---- */

typedef struct opts {
    uint32_t nodes, jobs, array, clients, connect_batch;
    const char *policy, *droverd, *min_pass, *heartbeat, *agent_timeout;
    double rt_lo, rt_hi; /* simulated run time, uniform in [lo, hi] */
    double duration, idle;
    bool kill_node, json, keep, quick, check;
} opts_t;

enum { A_CONNECTING, A_HELLO, A_UP, A_CLOSED };

typedef struct srank {
    struct sagent *a;
    uint64_t job;
    uint32_t gen, rank;
    bool ended;
    struct event *ev;
    struct srank *next;
} srank_t;

typedef struct sagent {
    uint32_t idx;
    int state;
    bool silent; /* --kill-node: sends nothing any more */
    struct bufferevent *bev;
    dr_proto_session_t s;
    struct event *hb;
    srank_t *ranks;
    uint32_t nrun;
} sagent_t;

typedef struct pstats { /* GET /v1/ping's stats, and /proc */
    double t;
    double turns, passes, commits, launches, pass_s, commit_s, in_mem;
    double cpu_s;
    double rss_mb, hwm_mb;
    bool ok;
} pstats_t;

static struct {
    opts_t o;
    char dir[64], sock[128], conf[128], key[128];
    pid_t droverd;
    pid_t sub[64];
    int nsub;
    int agent_port;
    uint8_t keyb[DR_PROTO_KEY];
    struct event_base *base;
    sagent_t *agents;
    uint32_t next_connect, handshaking, up, lost_conns;
    double t0;
    /* counters from the frames */
    uint64_t hb_sent, launches, job_launches, started_sent, ends_sent, kills, kill_ranks, acks;
    uint64_t frames_in, frames_dropped, bad_body;
    uint32_t per_sec[MAX_SECS]; /* rank-0 LAUNCHes received per second since t0 */
    /* array: tasks are the launched jobs with ids above the parent's */
    uint64_t array_parent;
    uint64_t array_launched;
    double array_submit_t, array_first_t, array_fill_t, array_all_t;
    /* kill-node */
    sagent_t *victim;
    uint64_t watch[MAX_WATCH];
    bool watch_back[MAX_WATCH];
    int nwatch, nback;
    double kill_t, closed_t, first_back_t, all_back_t;
    /* failures */
    int failed;
    char fail_msg[256];
} g;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void say(const char *fmt, ...) DR_PRINTF(1, 2);
static void say(const char *fmt, ...)
{
    if (g.o.json)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

static void fail(const char *fmt, ...) DR_PRINTF(1, 2);
static void fail(const char *fmt, ...)
{
    if (g.failed)
        return;
    g.failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g.fail_msg, sizeof g.fail_msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "ctld_scale: %s\n", g.fail_msg);
    if (g.base)
        event_base_loopbreak(g.base);
}

/* ---- processes: droverd, the submitters; all stopped in cleanup() ---- */

static void stop_pid(pid_t p)
{
    if (p <= 0)
        return;
    kill(p, SIGTERM);
    for (int i = 0; i < 50; i++) {
        if (waitpid(p, NULL, WNOHANG) == p)
            return;
        usleep(100000);
    }
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
}

static void cleanup(void)
{
    for (int i = 0; i < g.nsub; i++)
        stop_pid(g.sub[i]);
    g.nsub = 0;
    stop_pid(g.droverd);
    g.droverd = 0;
    if (g.dir[0] && !g.o.keep) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g.dir);
        if (system(cmd) != 0)
            fprintf(stderr, "ctld_scale: could not remove %s\n", g.dir);
    } else if (g.dir[0]) {
        fprintf(stderr, "ctld_scale: kept %s\n", g.dir);
    }
    g.dir[0] = '\0';
}

static volatile sig_atomic_t got_signal;

/* SIGINT/SIGTERM: stop the children at once (kill is async-signal-safe);
 * the loop sees the flag within 20 ms and the run ends through cleanup(). */
static void on_fatal_signal(int sig)
{
    got_signal = sig;
    if (g.droverd > 0)
        kill(g.droverd, SIGTERM);
    for (int i = 0; i < g.nsub; i++)
        if (g.sub[i] > 0)
            kill(g.sub[i], SIGTERM);
}

static int write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    size_t n = strlen(text);
    ssize_t w = write(fd, text, n);
    close(fd);
    return w == (ssize_t)n ? 0 : -1;
}

static int start_droverd(void)
{
    char conf[256], listen[64], agent[64], log[128];
    /* one user (often root) submits the whole load: the site's per-user
     * limits are not what this measures */
    snprintf(conf, sizeof conf,
             "NodeName=s[00001-%05u] Gpus=H100-SXM:%d Cpus=64 MemGB=512\n"
             "AllowRootJobs=YES MaxUserPendingJobs=0 MaxUserStoreBytes=0 MaxEventStreams=0\n",
             g.o.nodes, GPUS_PER_NODE);
    if (write_file(g.conf, conf, 0644) != 0)
        return -1;
    uint8_t key[DR_PROTO_KEY];
    if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key)
        return -1;
    memcpy(g.keyb, key, sizeof key);
    char hex[66];
    dr_proto_key_format(key, hex);
    if (write_file(g.key, hex, 0600) != 0)
        return -1;
    int port = 30000 + (int)(getpid() % 1000) * 2;
    g.agent_port = port + 1;
    snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
    snprintf(agent, sizeof agent, "127.0.0.1:%d", g.agent_port);
    snprintf(log, sizeof log, "%s/droverd.log", g.dir);
    char state[96];
    snprintf(state, sizeof state, "%s/state", g.dir);
    const char *argv[32];
    int n = 0;
    argv[n++] = g.o.droverd;
    argv[n++] = "-c";
    argv[n++] = g.conf;
    argv[n++] = "--state";
    argv[n++] = state;
    argv[n++] = "--key";
    argv[n++] = g.key;
    argv[n++] = "--listen";
    argv[n++] = listen;
    argv[n++] = "--agent-listen";
    argv[n++] = agent;
    argv[n++] = "--policy";
    argv[n++] = g.o.policy;
    argv[n++] = "--agent-timeout";
    argv[n++] = g.o.agent_timeout;
    /* the simulated agents hold no lease: a lost node's jobs are requeued
     * one timeout after it went silent, as the run measures */
    argv[n++] = "--lease";
    argv[n++] = g.o.agent_timeout;
    if (g.o.heartbeat) {
        argv[n++] = "--heartbeat";
        argv[n++] = g.o.heartbeat;
    }
    if (g.o.min_pass) {
        argv[n++] = "--min-pass-interval";
        argv[n++] = g.o.min_pass;
    }
    argv[n] = NULL;
    pid_t p = fork();
    if (p < 0)
        return -1;
    if (p == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 2);
            close(fd);
        }
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    g.droverd = p;
    snprintf(g.sock, sizeof g.sock, "%s/droverd.sock", state);
    return 0;
}

/* ---- the API (blocking: one request per connection, as the CLI) ---- */

static json_t *api(const char *method, const char *path, json_t *body, dr_err_t *err)
{
    cli_client_t c;
    json_t *reply = NULL;
    if (cli_client_init(&c, g.sock, err) != DR_OK ||
        cli_client_json(&c, method, path, body, &reply, err) != DR_OK) {
        json_decref(reply);
        reply = NULL;
    }
    cli_client_free(&c);
    return reply;
}

static double proc_field_mb(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtod(p + strlen(key), NULL) / 1024.0 : 0;
}

static pstats_t sample(void)
{
    pstats_t s = {.t = now_s()};
    dr_err_t err = {0};
    json_t *r = api("GET", "/v1/ping", NULL, &err);
    json_t *st = r ? json_object_get(r, "stats") : NULL;
    if (st) {
        s.ok = true;
        s.turns = json_number_value(json_object_get(st, "turns"));
        s.passes = json_number_value(json_object_get(st, "passes"));
        s.commits = json_number_value(json_object_get(st, "commits"));
        s.launches = json_number_value(json_object_get(st, "launches"));
        s.pass_s = json_number_value(json_object_get(st, "pass_seconds"));
        s.commit_s = json_number_value(json_object_get(st, "commit_seconds"));
        s.in_mem = json_number_value(json_object_get(r, "jobs_in_memory"));
    }
    json_decref(r);
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)g.droverd);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
        /* fields after the command's closing paren: 3 state ... 14 utime 15 stime */
        char *p = strrchr(buf, ')');
        unsigned long ut = 0, stt = 0;
        if (p &&
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &stt) == 2)
            s.cpu_s = (double)(ut + stt) / (double)sysconf(_SC_CLK_TCK);
    }
    snprintf(path, sizeof path, "/proc/%d/status", (int)g.droverd);
    f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
        s.rss_mb = proc_field_mb(buf, "VmRSS:");
        s.hwm_mb = proc_field_mb(buf, "VmHWM:");
    }
    return s;
}

/* ---- the simulated agents ---- */

static void agent_send(sagent_t *a, int type, const void *m)
{
    if (!a->bev || a->silent)
        return;
    uint8_t *out = NULL;
    size_t len = 0;
    dr_err_t err = {0};
    if (dr_proto_send_msg(&a->s, type, m, &out, &len, &err) != DR_OK) {
        fail("agent s%05u: cannot frame %s: %s", a->idx + 1, dr_msg_type_name(type), err.msg);
        return;
    }
    bufferevent_write(a->bev, out, len);
    free(out);
}

static void send_state(sagent_t *a, srank_t *r, bool started, int32_t code, int32_t sig,
                       uint8_t why)
{
    dr_msg_job_state_t m = {.job = r->job,
                            .gen = r->gen,
                            .rank = r->rank,
                            .started = started,
                            .pid = (int32_t)(100000 + (r->job % 1000000)),
                            .exit_code = code,
                            .signal = sig,
                            .why = why,
                            .t_ns = wall_ns(),
                            .detail = ""};
    agent_send(a, DR_MSG_JOB_STATE, &m);
}

static void on_hb(evutil_socket_t fd, short what, void *arg)
{
    sagent_t *a = arg;
    if (a->state != A_UP || a->silent)
        return;
    dr_msg_heartbeat_t hb = {.now_ns = wall_ns(), .running = a->nrun};
    agent_send(a, DR_MSG_HEARTBEAT, &hb);
    g.hb_sent++;
}

static void on_rank_end(evutil_socket_t fd, short what, void *arg)
{
    srank_t *r = arg;
    if (r->ended)
        return;
    r->ended = true;
    r->a->nrun--;
    send_state(r->a, r, false, 0, 0, DR_END_EXIT);
    g.ends_sent++;
}

static void connect_more(void);

static void agent_close(sagent_t *a)
{
    if (a->state == A_CLOSED)
        return;
    if (a->state != A_UP)
        g.handshaking--;
    a->state = A_CLOSED;
    if (a->hb)
        event_del(a->hb);
    for (srank_t *r = a->ranks; r; r = r->next)
        if (r->ev)
            event_del(r->ev);
    if (a->bev) {
        bufferevent_free(a->bev);
        a->bev = NULL;
    }
}

static void on_welcome(sagent_t *a, const dr_frame_t *f)
{
    dr_msg_welcome_t w = {0};
    dr_err_t err = {0};
    if (dr_msg_welcome_parse(&w, f->body, f->len, &err) != DR_OK) {
        fail("agent s%05u: bad WELCOME: %s", a->idx + 1, err.msg);
        return;
    }
    dr_msg_gpu_t gpus[GPUS_PER_NODE];
    for (int i = 0; i < GPUS_PER_NODE; i++)
        gpus[i] = (dr_msg_gpu_t){(uint32_t)i, "NVIDIA H100 80GB HBM3", "", "", 81559, -1};
    char host[16];
    snprintf(host, sizeof host, "s%05u", a->idx + 1);
    dr_msg_register_t reg = {.source = "declared",
                             .gpus = gpus,
                             .ngpus = GPUS_PER_NODE,
                             .cpus = w.cpus,
                             .mem_mb = w.mem_mb,
                             .numa_nodes = 1,
                             .hostname = host};
    uint32_t hb_ms = w.heartbeat_ms ? w.heartbeat_ms : 1000;
    dr_msg_welcome_free(&w);
    a->state = A_UP;
    agent_send(a, DR_MSG_REGISTER, &reg);
    g.handshaking--;
    g.up++;
    a->hb = event_new(g.base, -1, EV_PERSIST, on_hb, a);
    struct timeval tv = {(time_t)(hb_ms / 1000), (suseconds_t)(hb_ms % 1000) * 1000};
    event_add(a->hb, &tv);
    connect_more();
}

static void watch_launch(sagent_t *a, uint64_t job)
{
    if (!g.victim || a == g.victim)
        return;
    for (int i = 0; i < g.nwatch; i++)
        if (g.watch[i] == job && !g.watch_back[i]) {
            g.watch_back[i] = true;
            double t = now_s();
            if (g.nback++ == 0)
                g.first_back_t = t;
            if (g.nback == g.nwatch)
                g.all_back_t = t;
        }
}

static void on_launch(sagent_t *a, const dr_frame_t *f)
{
    dr_msg_launch_t m = {0};
    dr_err_t err = {0};
    if (dr_msg_launch_parse(&m, f->body, f->len, &err) != DR_OK) {
        g.bad_body++;
        return;
    }
    double t = now_s();
    g.launches++;
    if (m.rank == 0) {
        g.job_launches++;
        size_t sec = (size_t)(t - g.t0);
        if (sec < MAX_SECS)
            g.per_sec[sec]++;
        if (g.array_parent && m.job > g.array_parent) {
            g.array_launched++;
            if (g.array_launched == 1)
                g.array_first_t = t;
            uint64_t fill = (uint64_t)g.o.nodes * GPUS_PER_NODE;
            if (g.array_launched == (fill < g.o.array ? fill : g.o.array))
                g.array_fill_t = t;
            if (g.array_launched == g.o.array)
                g.array_all_t = t;
        }
    }
    watch_launch(a, m.job);
    srank_t *r = calloc(1, sizeof *r);
    if (!r) {
        dr_msg_launch_free(&m);
        fail("out of memory");
        return;
    }
    *r = (srank_t){.a = a, .job = m.job, .gen = m.gen, .rank = m.rank, .next = a->ranks};
    a->ranks = r;
    a->nrun++;
    double rt = g.o.rt_lo;
    const char *base = m.argc ? strrchr(m.argv[0], '/') : NULL;
    base = base ? base + 1 : m.argc ? m.argv[0] : "";
    if (m.argc >= 2 && strcmp(base, "sleep") == 0)
        rt = strtod(m.argv[1], NULL);
    dr_msg_launch_free(&m);
    send_state(a, r, true, 0, 0, DR_END_EXIT);
    g.started_sent++;
    r->ev = evtimer_new(g.base, on_rank_end, r);
    struct timeval tv = {(time_t)rt, (suseconds_t)((rt - floor(rt)) * 1e6)};
    evtimer_add(r->ev, &tv);
}

static void on_kill(sagent_t *a, const dr_frame_t *f)
{
    dr_msg_kill_t m = {0};
    dr_err_t err = {0};
    if (dr_msg_kill_parse(&m, f->body, f->len, &err) != DR_OK) {
        g.bad_body++;
        return;
    }
    g.kills++;
    for (srank_t *r = a->ranks; r; r = r->next) {
        if (r->job != m.job || r->gen != m.gen || r->ended)
            continue;
        event_del(r->ev);
        r->ended = true;
        a->nrun--;
        send_state(a, r, false, -1, m.signal ? m.signal : 15, DR_END_KILLED);
        g.kill_ranks++;
    }
    dr_msg_kill_free(&m);
}

static void on_ack(sagent_t *a, const dr_frame_t *f)
{
    dr_msg_ack_t m = {0};
    dr_err_t err = {0};
    if (dr_msg_ack_parse(&m, f->body, f->len, &err) != DR_OK) {
        g.bad_body++;
        return;
    }
    g.acks++;
    for (srank_t **p = &a->ranks; *p; p = &(*p)->next) {
        srank_t *r = *p;
        if (r->job == m.job && r->gen == m.gen && r->rank == m.rank && r->ended) {
            *p = r->next;
            event_free(r->ev);
            free(r);
            break;
        }
    }
}

/* CHALLENGE: prove the node's key (derived here from the master key the
 * bench holds, as droverd --enroll would) and open the session. */
static void on_challenge(sagent_t *a, const dr_frame_t *f)
{
    dr_msg_challenge_t ch = {0};
    dr_err_t err = {0};
    if (dr_msg_challenge_parse(&ch, f->body, f->len, &err) != DR_OK) {
        fail("agent s%05u: bad CHALLENGE: %s", a->idx + 1, err.msg);
        return;
    }
    char name[16];
    snprintf(name, sizeof name, "s%05u", a->idx + 1);
    dr_msg_hello_t h = {.version = DR_PROTO_VERSION, .name = name};
    memcpy(h.nonce, a->s.my_nonce, sizeof h.nonce);
    if (dr_proto_hello_proof(a->s.key, ch.nonce, h.nonce, name, h.proof, &err) != DR_OK) {
        fail("agent s%05u: %s", a->idx + 1, err.msg);
        return;
    }
    agent_send(a, DR_MSG_HELLO, &h);
    dr_proto_session_set_peer_nonce(&a->s, ch.nonce);
}

static void on_frame(sagent_t *a, const dr_frame_t *f)
{
    g.frames_in++;
    if (a->silent)
        return; /* a dead node hears nothing */
    switch (f->type) {
    case DR_MSG_CHALLENGE: on_challenge(a, f); break;
    case DR_MSG_WELCOME: on_welcome(a, f); break;
    case DR_MSG_LAUNCH: on_launch(a, f); break;
    case DR_MSG_KILL: on_kill(a, f); break;
    case DR_MSG_ACK: on_ack(a, f); break;
    case DR_MSG_REJECT: {
        dr_msg_reject_t m = {0};
        dr_err_t err = {0};
        if (dr_msg_reject_parse(&m, f->body, f->len, &err) == DR_OK) {
            fail("agent s%05u rejected: %s", a->idx + 1, m.reason);
            dr_msg_reject_free(&m);
        } else {
            fail("agent s%05u rejected", a->idx + 1);
        }
        break;
    }
    default: break;
    }
}

static void on_read(struct bufferevent *bev, void *arg)
{
    sagent_t *a = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    for (;;) {
        size_t len = evbuffer_get_length(in);
        uint8_t hdr[DR_PROTO_HDR];
        if (len < DR_PROTO_HDR)
            return;
        evbuffer_copyout(in, hdr, DR_PROTO_HDR);
        size_t blen = (size_t)hdr[8] << 24 | (size_t)hdr[9] << 16 | (size_t)hdr[10] << 8 | hdr[11];
        size_t need = DR_PROTO_HDR + blen + DR_PROTO_TAG;
        size_t used = 0;
        dr_frame_t f;
        dr_proto_rc_t rc;
        if (blen > DR_PROTO_MAX_BODY || len < need)
            rc = dr_proto_decode(&a->s, hdr, DR_PROTO_HDR, &used, &f); /* header checks only */
        else
            rc = dr_proto_decode(&a->s, evbuffer_pullup(in, (ev_ssize_t)need), need, &used, &f);
        if (rc == DR_PROTO_NEED)
            return;
        if (rc == DR_PROTO_FATAL) {
            fail("agent s%05u: bad frame header from droverd", a->idx + 1);
            agent_close(a);
            return;
        }
        if (rc == DR_PROTO_FRAME)
            on_frame(a, &f);
        else
            g.frames_dropped++;
        if (a->bev != bev)
            return;
        evbuffer_drain(in, used);
    }
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    sagent_t *a = arg;
    if (what & BEV_EVENT_CONNECTED) {
        uint8_t nonce[DR_PROTO_NONCE];
        if (getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce) {
            fail("getrandom");
            return;
        }
        char name[16];
        snprintf(name, sizeof name, "s%05u", a->idx + 1);
        uint8_t nk[DR_PROTO_KEY];
        if (dr_proto_node_key(g.keyb, name, nk, NULL) != DR_OK) {
            fail("node key");
            return;
        }
        dr_proto_session_init(&a->s, nk, nonce);
        a->state = A_HELLO; /* droverd speaks first: CHALLENGE */
        return;
    }
    if (a == g.victim && g.closed_t == 0)
        g.closed_t = now_s();
    else if (a->state == A_UP)
        g.lost_conns++;
    else
        fail("agent s%05u: connection failed during the handshake (%s)", a->idx + 1,
             what & BEV_EVENT_EOF ? "closed" : strerror(EVUTIL_SOCKET_ERROR()));
    agent_close(a);
}

/* Keep at most --connect-batch handshakes in flight (droverd's listen
 * backlog is 128). */
static void connect_more(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)g.agent_port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    while (g.next_connect < g.o.nodes && g.handshaking < g.o.connect_batch) {
        sagent_t *a = &g.agents[g.next_connect];
        a->idx = g.next_connect++;
        a->bev = bufferevent_socket_new(g.base, -1, BEV_OPT_CLOSE_ON_FREE);
        if (!a->bev) {
            fail("cannot create a socket for agent %u (ulimit -n?)", a->idx + 1);
            return;
        }
        a->state = A_CONNECTING;
        g.handshaking++;
        bufferevent_setcb(a->bev, on_read, NULL, on_event, a);
        bufferevent_enable(a->bev, EV_READ | EV_WRITE);
        if (bufferevent_socket_connect(a->bev, (struct sockaddr *)&sa, sizeof sa) != 0) {
            fail("connect for agent %u: %s", a->idx + 1, strerror(errno));
            return;
        }
    }
}

/* ---- the workload: a mix of shapes, run times drawn per job ---- */

static json_t *job_json(dr_rng_t *rng, const char *cwd)
{
    /* sim_scale's mix: 60% 1 GPU, 10% 2, 12% 4, 12% 8, 4% 2x8, 2% 4x8 */
    uint64_t u = dr_rng_below(rng, 100);
    int gpn = u < 60 ? 1 : u < 70 ? 2 : u < 82 ? 4 : 8;
    int nodes = u < 94 ? 1 : u < 98 ? 2 : 4;
    double rt = g.o.rt_lo + (g.o.rt_hi - g.o.rt_lo) * dr_rng_uniform(rng);
    double lim = ceil(rt * (1.0 + dr_rng_uniform(rng))) + 1; /* overestimates up to 2x */
    char rts[32], lims[32];
    snprintf(rts, sizeof rts, "%.3f", rt);
    snprintf(lims, sizeof lims, "%.0fs", lim);
    return json_pack("{s:[s,s],s:i,s:i,s:s,s:s,s:s}", "argv", "sleep", rts, "gpus_per_node", gpn,
                     "nodes", nodes, "time_limit", lims, "chdir", cwd, "output", "/dev/null");
}

/* A child process: jobs [lo, hi) of the backlog, one request each. */
static int submitter(uint32_t lo, uint32_t hi)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return 1;
    for (uint32_t i = lo; i < hi; i++) {
        dr_rng_t rng;
        dr_rng_seed(&rng, 0x5ca1eULL * (i + 1));
        json_t *j = job_json(&rng, cwd);
        dr_err_t err = {0};
        json_t *r = api("POST", "/v1/jobs", j, &err);
        json_decref(j);
        if (!r) {
            fprintf(stderr, "ctld_scale: submit %u: %s\n", i, err.msg);
            return 1;
        }
        json_decref(r);
    }
    return 0;
}

static int start_submitters(void)
{
    uint32_t k = g.o.clients, n = g.o.jobs;
    for (uint32_t c = 0; c < k; c++) {
        uint32_t lo = (uint32_t)((uint64_t)n * c / k), hi = (uint32_t)((uint64_t)n * (c + 1) / k);
        pid_t p = fork();
        if (p < 0)
            return -1;
        if (p == 0)
            _exit(submitter(lo, hi));
        g.sub[g.nsub++] = p;
    }
    return 0;
}

/* Submitters still running; a failed one fails the run. */
static int submitters_left(void)
{
    int left = 0;
    for (int i = 0; i < g.nsub; i++) {
        if (g.sub[i] <= 0)
            continue;
        int st;
        pid_t p = waitpid(g.sub[i], &st, WNOHANG);
        if (p == g.sub[i]) {
            g.sub[i] = 0;
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                fail("a submitter failed (see above)");
        } else {
            left++;
        }
    }
    return left;
}

static int submit_array(void)
{
    char cwd[4096], spec[32];
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    snprintf(spec, sizeof spec, "0-%u", g.o.array - 1);
    char rts[32];
    snprintf(rts, sizeof rts, "%.3f", g.o.rt_lo);
    json_t *j = json_pack("{s:[s,s],s:i,s:s,s:s,s:s,s:s}", "argv", "sleep", rts, "gpus_per_node", 1,
                          "array", spec, "time_limit", "1h", "chdir", cwd, "output", "/dev/null");
    dr_err_t err = {0};
    g.array_submit_t = now_s();
    json_t *r = api("POST", "/v1/jobs", j, &err);
    json_decref(j);
    if (!r) {
        fail("array submit: %s", err.msg);
        return -1;
    }
    g.array_parent = (uint64_t)json_integer_value(json_object_get(r, "id"));
    json_decref(r);
    return 0;
}

/* ---- running the event loop until a condition holds ---- */

typedef bool (*cond_fn)(void);

static void on_poll(evutil_socket_t fd, short what, void *arg)
{
    cond_fn c = (cond_fn)arg;
    if (got_signal)
        fail("signal %d: stopping", (int)got_signal);
    if (g.failed || c())
        event_base_loopbreak(g.base);
}

/* Run the loop until cond() (checked every 20 ms) or `secs` pass; every
 * second `each` (if any) is called with the elapsed seconds. */
static bool run_until(cond_fn cond, double secs, void (*each)(double))
{
    double t0 = now_s(), next = t0 + 1;
    struct event *ev = event_new(g.base, -1, EV_PERSIST, on_poll, (void *)cond);
    struct timeval tv = {0, 20000};
    event_add(ev, &tv);
    bool ok = false;
    while (!g.failed) {
        if (got_signal) {
            fail("signal %d: stopping", (int)got_signal);
            break;
        }
        if (cond && cond()) {
            ok = true;
            break;
        }
        double t = now_s();
        if (t - t0 >= secs)
            break;
        if (each && t >= next) {
            each(t - t0);
            next += 1;
        }
        event_base_loop(g.base, EVLOOP_ONCE);
    }
    event_free(ev);
    return ok;
}

static bool never(void)
{
    return false;
}

static bool all_up(void)
{
    return g.up == g.o.nodes;
}

static bool subs_done(void)
{
    return submitters_left() == 0;
}

static bool array_done(void)
{
    return g.array_launched >= g.o.array;
}

static bool kill_done(void)
{
    return g.nwatch > 0 && g.nback == g.nwatch;
}

/* Nodes droverd counts as connected (one GET /v1/nodes). */
static long nodes_connected(void)
{
    dr_err_t err = {0};
    json_t *r = api("GET", "/v1/nodes", NULL, &err);
    json_t *ns = r ? json_object_get(r, "nodes") : NULL;
    long n = ns ? 0 : -1;
    size_t i;
    json_t *v;
    json_array_foreach(ns, i, v)
    {
        json_t *ag = json_object_get(v, "agent");
        n += json_is_true(json_object_get(ag, "connected"));
    }
    json_decref(r);
    return n;
}

/* ---- measuring ---- */

typedef struct window {
    pstats_t a, b;
    uint64_t hb0, hb1, jl0, jl1;
    double max_pass_ms; /* the worst one-second window's mean pass */
    double peak_rss;
} window_t;

static window_t *cur_win;

static void win_tick(double el)
{
    static pstats_t prev;
    pstats_t s = sample();
    if (!s.ok)
        return;
    if (cur_win) {
        if (prev.ok && prev.t >= cur_win->a.t && s.passes > prev.passes) {
            double ms = (s.pass_s - prev.pass_s) / (s.passes - prev.passes) * 1e3;
            if (ms > cur_win->max_pass_ms)
                cur_win->max_pass_ms = ms;
        }
        if (s.rss_mb > cur_win->peak_rss)
            cur_win->peak_rss = s.rss_mb;
    }
    prev = s;
    if (!g.o.json && el > 0 && (int)el % 10 == 0)
        say("  ... %3.0fs: %llu jobs launched, %.0f jobs in droverd's memory, RSS %.0f MB, %.0f "
            "passes, %.0f turns\n",
            el, (unsigned long long)g.job_launches, s.in_mem, s.rss_mb, s.passes, s.turns);
}

static void win_start(window_t *w)
{
    memset(w, 0, sizeof *w);
    w->a = sample();
    w->hb0 = g.hb_sent;
    w->jl0 = g.job_launches;
    w->peak_rss = w->a.rss_mb;
    cur_win = w;
}

static void win_end(window_t *w)
{
    w->b = sample();
    w->hb1 = g.hb_sent;
    w->jl1 = g.job_launches;
    if (w->b.rss_mb > w->peak_rss)
        w->peak_rss = w->b.rss_mb;
    cur_win = NULL;
}

static double wdt(const window_t *w)
{
    return w->b.t - w->a.t;
}

static double wpass_ms(const window_t *w)
{
    double n = w->b.passes - w->a.passes;
    return n > 0 ? (w->b.pass_s - w->a.pass_s) / n * 1e3 : 0;
}

static double wcommit_ms(const window_t *w)
{
    double n = w->b.commits - w->a.commits;
    return n > 0 ? (w->b.commit_s - w->a.commit_s) / n * 1e3 : 0;
}

static double wturn_ms(const window_t *w)
{
    double n = w->b.turns - w->a.turns;
    return n > 0 ? (w->b.cpu_s - w->a.cpu_s) / n * 1e3 : 0;
}

static json_t *win_json(const window_t *w)
{
    double dt = wdt(w);
    json_t *o = json_pack(
        "{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "seconds", dt, "passes",
        w->b.passes - w->a.passes, "pass_ms_mean", wpass_ms(w), "pass_ms_worst_1s", w->max_pass_ms,
        "pass_share", (w->b.pass_s - w->a.pass_s) / dt, "commits", w->b.commits - w->a.commits,
        "commit_ms_mean", wcommit_ms(w), "commit_share", (w->b.commit_s - w->a.commit_s) / dt,
        "jobs_started_per_s", (double)(w->jl1 - w->jl0) / dt, "droverd_cpu",
        (w->b.cpu_s - w->a.cpu_s) / dt, "rss_mb", w->b.rss_mb, "peak_rss_mb", w->peak_rss);
    json_object_set_new(o, "turns", json_real(w->b.turns - w->a.turns));
    json_object_set_new(o, "cpu_ms_per_turn", json_real(wturn_ms(w)));
    json_object_set_new(o, "jobs_in_memory", json_real(w->b.in_mem));
    return o;
}

static void win_say(const char *name, const window_t *w)
{
    double dt = wdt(w);
    say("%-8s %6.1fs  passes %7.0f  pass ms mean %8.3f worst-1s %8.3f (%4.1f%% of wall)  "
        "commits %7.0f  commit ms %6.3f (%4.1f%%)  jobs started/s %7.1f  droverd CPU %5.1f%%  "
        "RSS %6.0f MB\n",
        name, dt, w->b.passes - w->a.passes, wpass_ms(w), w->max_pass_ms,
        100 * (w->b.pass_s - w->a.pass_s) / dt, w->b.commits - w->a.commits, wcommit_ms(w),
        100 * (w->b.commit_s - w->a.commit_s) / dt, (double)(w->jl1 - w->jl0) / dt,
        100 * (w->b.cpu_s - w->a.cpu_s) / dt, w->b.rss_mb);
    say("%-8s          turns %7.0f  droverd CPU per turn %.3f ms  jobs in droverd's memory %.0f\n",
        "", w->b.turns - w->a.turns, wturn_ms(w), w->b.in_mem);
}

/* The agent running the most ranks (single-node jobs first). */
static sagent_t *pick_victim(void)
{
    sagent_t *best = NULL;
    for (uint32_t i = 0; i < g.o.nodes; i++) {
        sagent_t *a = &g.agents[i];
        if (a->state == A_UP && a->nrun && (!best || a->nrun > best->nrun))
            best = a;
    }
    return best;
}

/* ---- options ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ctld_scale [options]\n"
            "  --nodes N            simulated nodes of 8 H100 (default 1000)\n"
            "  --jobs N             backlog of mixed jobs submitted through the API (default "
            "10000)\n"
            "  --array N            one array of N one-GPU tasks, after the backlog (default 0)\n"
            "  --policy P           droverd --policy (default backfill)\n"
            "  --runtime S|A-B      simulated run time, fixed or uniform in [A,B] s (default "
            "30-120)\n"
            "  --duration S         steady-state window after the submits (default 30)\n"
            "  --idle S             idle window for the heartbeat cost (default 10)\n"
            "  --kill-node          silence one busy agent; time detection and reschedule\n"
            "  --clients N          submitting processes (default 4)\n"
            "  --connect-batch N    handshakes in flight (default 100)\n"
            "  --heartbeat DUR      droverd --heartbeat (default droverd's, 2s)\n"
            "  --agent-timeout DUR  droverd --agent-timeout (default 10s)\n"
            "  --min-pass-interval DUR  droverd --min-pass-interval (default droverd's, 5ms)\n"
            "  --droverd PATH       (default: ../droverd beside this tool)\n"
            "  --quick              500 nodes, 5000 jobs, 10 s windows, --kill-node\n"
            "  --check              exit 1 unless jobs kept starting in the steady window,\n"
            "                       every agent stayed connected, no frame was refused and\n"
            "                       (with --kill-node) the lost node's jobs all ran elsewhere\n"
            "  --json               one JSON object on stdout\n"
            "  --keep               keep the temporary directory (droverd.log, the store)\n");
}

static int parse_opts(int argc, char **argv, const char *self)
{
    opts_t *o = &g.o;
    *o = (opts_t){.nodes = 1000,
                  .jobs = 10000,
                  .clients = 4,
                  .connect_batch = 100,
                  .policy = "backfill",
                  .agent_timeout = "10s",
                  .rt_lo = 30,
                  .rt_hi = 120,
                  .duration = 30,
                  .idle = 10};
    static char dpath[4096];
    const char *slash = strrchr(self, '/');
    snprintf(dpath, sizeof dpath, "%.*s/../droverd", slash ? (int)(slash - self) : 1,
             slash ? self : ".");
    o->droverd = dpath;
    enum {
        O_NODES = 256,
        O_JOBS,
        O_ARRAY,
        O_POLICY,
        O_RT,
        O_DUR,
        O_IDLE,
        O_KILL,
        O_CLIENTS,
        O_BATCH,
        O_HB,
        O_AT,
        O_MINPASS,
        O_DROVERD,
        O_QUICK,
        O_CHECK,
        O_JSON,
        O_KEEP,
        O_HELP
    };
    static const struct option lo[] = {{"nodes", required_argument, NULL, O_NODES},
                                       {"jobs", required_argument, NULL, O_JOBS},
                                       {"array", required_argument, NULL, O_ARRAY},
                                       {"policy", required_argument, NULL, O_POLICY},
                                       {"runtime", required_argument, NULL, O_RT},
                                       {"duration", required_argument, NULL, O_DUR},
                                       {"idle", required_argument, NULL, O_IDLE},
                                       {"kill-node", no_argument, NULL, O_KILL},
                                       {"clients", required_argument, NULL, O_CLIENTS},
                                       {"connect-batch", required_argument, NULL, O_BATCH},
                                       {"heartbeat", required_argument, NULL, O_HB},
                                       {"agent-timeout", required_argument, NULL, O_AT},
                                       {"min-pass-interval", required_argument, NULL, O_MINPASS},
                                       {"droverd", required_argument, NULL, O_DROVERD},
                                       {"quick", no_argument, NULL, O_QUICK},
                                       {"check", no_argument, NULL, O_CHECK},
                                       {"json", no_argument, NULL, O_JSON},
                                       {"keep", no_argument, NULL, O_KEEP},
                                       {"help", no_argument, NULL, O_HELP},
                                       {NULL, 0, NULL, 0}};
    int ch;
    bool quick = false;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case O_NODES: o->nodes = (uint32_t)strtoul(optarg, NULL, 10); break;
        case O_JOBS: o->jobs = (uint32_t)strtoul(optarg, NULL, 10); break;
        case O_ARRAY: o->array = (uint32_t)strtoul(optarg, NULL, 10); break;
        case O_POLICY: o->policy = optarg; break;
        case O_RT: {
            char *end;
            o->rt_lo = o->rt_hi = strtod(optarg, &end);
            if (*end == '-')
                o->rt_hi = strtod(end + 1, &end);
            if (*end || o->rt_lo < 0 || o->rt_hi < o->rt_lo) {
                fprintf(stderr, "ctld_scale: --runtime: SECS or A-B\n");
                return 2;
            }
            break;
        }
        case O_DUR: o->duration = strtod(optarg, NULL); break;
        case O_IDLE: o->idle = strtod(optarg, NULL); break;
        case O_KILL: o->kill_node = true; break;
        case O_CLIENTS: o->clients = (uint32_t)strtoul(optarg, NULL, 10); break;
        case O_BATCH: o->connect_batch = (uint32_t)strtoul(optarg, NULL, 10); break;
        case O_HB: o->heartbeat = optarg; break;
        case O_AT: o->agent_timeout = optarg; break;
        case O_MINPASS: o->min_pass = optarg; break;
        case O_DROVERD: o->droverd = optarg; break;
        case O_QUICK: quick = true; break;
        case O_CHECK: o->check = true; break;
        case O_JSON: o->json = true; break;
        case O_KEEP: o->keep = true; break;
        case O_HELP: usage(stdout); exit(0);
        default: usage(stderr); return 2;
        }
    }
    if (quick) {
        o->quick = true;
        o->nodes = 500;
        o->jobs = 5000;
        o->duration = 10;
        o->idle = 5;
        o->kill_node = true;
        o->agent_timeout = "3s";
        o->rt_lo = 5;
        o->rt_hi = 20;
    }
    if (o->nodes == 0 || o->nodes > 99999 || o->clients == 0 || o->clients > 64 ||
        o->connect_batch == 0) {
        fprintf(stderr, "ctld_scale: --nodes 1-99999, --clients 1-64, --connect-batch >= 1\n");
        return 2;
    }
    return 0;
}

/* Room for N agent sockets here and N in droverd (which inherits it). */
static int raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return -1;
    rlim_t want = (rlim_t)g.o.nodes + 256;
    if (rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < want) {
        fprintf(stderr, "ctld_scale: %u nodes need %llu open files; the hard limit is %llu\n",
                g.o.nodes, (unsigned long long)want, (unsigned long long)rl.rlim_max);
        return -1;
    }
    return 0;
}

/* ---- main ---- */

int main(int argc, char **argv)
{
    int rc = parse_opts(argc, argv, argv[0]);
    if (rc)
        return rc;
    if (raise_fd_limit() != 0)
        return 1;
    if (access(g.o.droverd, X_OK) != 0) {
        fprintf(stderr, "ctld_scale: no droverd at %s (--droverd PATH)\n", g.o.droverd);
        return 1;
    }
    snprintf(g.dir, sizeof g.dir, "/tmp/drover-scale.XXXXXX");
    if (!mkdtemp(g.dir)) {
        g.dir[0] = '\0';
        perror("ctld_scale: mkdtemp");
        return 1;
    }
    atexit(cleanup);
    struct sigaction sa = {.sa_handler = on_fatal_signal}; /* no SA_RESTART: calls return */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    snprintf(g.conf, sizeof g.conf, "%s/cluster.conf", g.dir);
    snprintf(g.key, sizeof g.key, "%s/cluster.key", g.dir);
    g.agents = calloc(g.o.nodes, sizeof *g.agents);
    g.base = event_base_new();
    if (!g.agents || !g.base || start_droverd() != 0) {
        fprintf(stderr, "ctld_scale: cannot set up (memory, files or droverd)\n");
        return 1;
    }
    g.t0 = now_s();
    say("ctld_scale: droverd %s, policy %s, %u nodes x %d H100 (%u GPUs), backlog %u jobs, "
        "array %u, run times %.0f-%.0f s (simulated), agent timeout %s, machine %ld cores\n",
        g.o.droverd, g.o.policy, g.o.nodes, GPUS_PER_NODE, g.o.nodes * GPUS_PER_NODE, g.o.jobs,
        g.o.array, g.o.rt_lo, g.o.rt_hi, g.o.agent_timeout, sysconf(_SC_NPROCESSORS_ONLN));
    /* the API answers */
    pstats_t s0 = {0};
    for (int i = 0; i < 200 && !(s0 = sample()).ok; i++)
        usleep(50000);
    if (!s0.ok) {
        fprintf(stderr, "ctld_scale: droverd did not start (see %s/droverd.log)\n", g.dir);
        g.o.keep = true;
        return 1;
    }
    double rss_start = s0.rss_mb;

    /* 1. connect and register */
    double tc = now_s();
    connect_more();
    run_until(all_up, 600, NULL);
    double t_reg = now_s() - tc;
    long conn = -1;
    for (int i = 0; i < 100 && !g.failed; i++) {
        if ((conn = nodes_connected()) == (long)g.o.nodes)
            break;
        run_until(never, 0.2, NULL);
    }
    double t_conn = now_s() - tc;
    pstats_t s_reg = sample();
    if (g.failed || conn != (long)g.o.nodes) {
        fprintf(stderr, "ctld_scale: %ld of %u nodes connected after %.1f s\n", conn, g.o.nodes,
                t_conn);
        return 1;
    }
    say("connect  %u agents: all registered (REGISTER sent) in %.2f s = %.0f/s; droverd shows all "
        "connected after %.2f s; droverd CPU %.2f s, RSS %.0f -> %.0f MB\n",
        g.o.nodes, t_reg, g.o.nodes / t_reg, t_conn, s_reg.cpu_s - s0.cpu_s, rss_start,
        s_reg.rss_mb);

    /* 2. idle: heartbeat cost */
    static window_t idle;
    win_start(&idle);
    run_until(never, g.o.idle, win_tick);
    win_end(&idle);
    double hb = (double)(idle.hb1 - idle.hb0);
    double idle_cpu = idle.b.cpu_s - idle.a.cpu_s;
    say("idle     %.1fs: %.0f heartbeats (%.0f/s); droverd CPU %.3f s = %.1f%% of a core, %.1f µs "
        "per heartbeat (everything an idle droverd does, divided by the heartbeats)\n",
        wdt(&idle), hb, hb / wdt(&idle), idle_cpu, 100 * idle_cpu / wdt(&idle),
        hb > 0 ? idle_cpu / hb * 1e6 : 0);

    /* 3. the backlog, then the array */
    static window_t sub;
    win_start(&sub);
    double ts = now_s();
    if (g.o.jobs && start_submitters() != 0) {
        fail("fork");
        return 1;
    }
    run_until(subs_done, 3600, win_tick);
    double t_sub = now_s() - ts;
    win_end(&sub);
    if (g.failed)
        return 1;
    if (g.o.jobs) {
        say("submit   %u jobs from %u clients in %.2f s = %.0f durable submits/s\n", g.o.jobs,
            g.o.clients, t_sub, g.o.jobs / t_sub);
        win_say("submit", &sub);
    }
    static window_t arr;
    if (g.o.array) {
        win_start(&arr);
        if (submit_array() != 0)
            return 1;
        run_until(array_done, g.o.duration > 0 ? g.o.duration * 10 : 600, win_tick);
        win_end(&arr);
        uint64_t fill = (uint64_t)g.o.nodes * GPUS_PER_NODE;
        if (fill > g.o.array)
            fill = g.o.array;
        double tf = g.array_fill_t ? g.array_fill_t - g.array_submit_t : 0;
        double ta = g.array_all_t ? g.array_all_t - g.array_submit_t : 0;
        say("array    %u tasks: first launch %.3f s after the submit; first %llu (every GPU) "
            "launched in %.2f s = %.0f tasks/s; all %llu of %u launched in %.2f s = %.0f "
            "tasks/s\n",
            g.o.array, g.array_first_t ? g.array_first_t - g.array_submit_t : -1,
            (unsigned long long)fill, tf, tf > 0 ? fill / tf : 0,
            (unsigned long long)g.array_launched, g.o.array,
            ta > 0 ? ta : now_s() - g.array_submit_t, ta > 0 ? g.o.array / ta : 0);
        win_say("array", &arr);
    }

    /* 4. steady state */
    static window_t st;
    win_start(&st);
    run_until(never, g.o.duration, win_tick);
    win_end(&st);
    if (g.failed)
        return 1;
    win_say("steady", &st);
    /* what a Prometheus scrape of this controller costs (GET /metrics walks
     * the jobs in memory and the nodes): three in a row, timed end to end */
    double scrape_ms = 0, scrape_worst = 0;
    size_t scrape_bytes = 0;
    for (int k = 0; k < 3; k++) {
        cli_client_t cc;
        cli_http_resp_t resp;
        memset(&resp, 0, sizeof resp);
        dr_err_t err = {0};
        double t0 = now_s();
        int grc = cli_client_init(&cc, g.sock, &err);
        if (grc == DR_OK)
            grc = cli_client_get(&cc, "/metrics", &resp, &err);
        double ms = (now_s() - t0) * 1e3;
        cli_client_free(&cc);
        if (grc != DR_OK) {
            say("GET /metrics: %s", err.msg);
            break;
        }
        scrape_bytes = resp.body_len;
        cli_http_resp_free(&resp);
        scrape_ms += ms / 3;
        scrape_worst = ms > scrape_worst ? ms : scrape_worst;
    }
    say("GET /metrics: %zu bytes, %.1f ms mean, %.1f ms worst of 3\n", scrape_bytes, scrape_ms,
        scrape_worst);
    uint32_t peak = 0;
    for (size_t i = 0; i < MAX_SECS; i++)
        if (g.per_sec[i] > peak)
            peak = g.per_sec[i];

    /* 5. a lost node */
    double t_close = -1, t_first = -1, t_all = -1;
    int nwatch = 0;
    if (g.o.kill_node) {
        g.victim = pick_victim();
        if (!g.victim) {
            fail("--kill-node: no agent is running anything");
            return 1;
        }
        for (srank_t *r = g.victim->ranks; r && g.nwatch < MAX_WATCH; r = r->next) {
            bool dup = false;
            for (int i = 0; i < g.nwatch; i++)
                dup |= g.watch[i] == r->job;
            if (!r->ended && !dup)
                g.watch[g.nwatch++] = r->job;
        }
        g.kill_t = now_s();
        g.victim->silent = true;
        for (srank_t *r = g.victim->ranks; r; r = r->next)
            event_del(r->ev);
        dr_time_t at = 0;
        dr_err_t err = {0};
        if (dr_duration_parse_err(g.o.agent_timeout, &at, &err) != DR_OK)
            at = 30 * DR_NSEC_PER_SEC;
        double wait = 3.0 * (double)at / 1e9 + 120;
        run_until(kill_done, wait, win_tick);
        nwatch = g.nwatch;
        t_close = g.closed_t ? g.closed_t - g.kill_t : -1;
        t_first = g.first_back_t ? g.first_back_t - g.kill_t : -1;
        t_all = g.all_back_t ? g.all_back_t - g.kill_t : -1;
        say("killnode s%05u (%d jobs): silent at 0; droverd closed its connection at %.2f s; first "
            "job launched elsewhere at %.2f s; all %d of %d at %.2f s (agent timeout %s)\n",
            g.victim->idx + 1, nwatch, t_close, t_first, g.nback, nwatch, t_all, g.o.agent_timeout);
    }

    pstats_t fin = sample();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double self_cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    say("totals   jobs launched %llu (ranks %llu), ends sent %llu, KILLs %llu (%llu ranks), ACKs "
        "%llu, peak launches in one second %u; droverd CPU %.1f s, RSS %.0f MB (peak %.0f MB); "
        "this tool CPU %.1f s; connections lost %u; frames dropped here %llu, bad bodies %llu\n",
        (unsigned long long)g.job_launches, (unsigned long long)g.launches,
        (unsigned long long)g.ends_sent, (unsigned long long)g.kills,
        (unsigned long long)g.kill_ranks, (unsigned long long)g.acks, peak, fin.cpu_s, fin.rss_mb,
        fin.hwm_mb, self_cpu, g.lost_conns, (unsigned long long)g.frames_dropped,
        (unsigned long long)g.bad_body);
    if (g.o.json) {
        json_t *o = json_pack(
            "{s:s,s:i,s:i,s:i,s:i,s:f,s:f,s:{s:f,s:f,s:f},s:{s:f,s:f,s:f,s:f},s:o,s:o,s:o,s:o,"
            "s:f,s:i,s:{s:I,s:f,s:f}}",
            "policy", g.o.policy, "nodes", (int)g.o.nodes, "gpus", (int)(g.o.nodes * GPUS_PER_NODE),
            "jobs", (int)g.o.jobs, "array", (int)g.o.array, "runtime_lo", g.o.rt_lo, "runtime_hi",
            g.o.rt_hi, "connect", "register_s", t_reg, "all_connected_s", t_conn, "droverd_cpu_s",
            s_reg.cpu_s - s0.cpu_s, "idle", "seconds", wdt(&idle), "heartbeats", hb,
            "droverd_cpu_s", idle_cpu, "us_per_heartbeat", hb > 0 ? idle_cpu / hb * 1e6 : 0,
            "submit", win_json(&sub), "array_window", g.o.array ? win_json(&arr) : json_null(),
            "steady", win_json(&st), "totals",
            json_pack("{s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:i}", "jobs_launched",
                      (json_int_t)g.job_launches, "ranks_launched", (json_int_t)g.launches, "kills",
                      (json_int_t)g.kills, "acks", (json_int_t)g.acks, "droverd_cpu_s", fin.cpu_s,
                      "rss_mb", fin.rss_mb, "peak_rss_mb", fin.hwm_mb, "tool_cpu_s", self_cpu,
                      "lost_connections", (int)g.lost_conns),
            "submits_per_s", g.o.jobs && t_sub > 0 ? g.o.jobs / t_sub : 0.0, "peak_launch_1s",
            (int)peak, "metrics_scrape", "bytes", (json_int_t)scrape_bytes, "mean_ms", scrape_ms,
            "worst_ms", scrape_worst);
        if (g.o.array) {
            double tf = g.array_fill_t ? g.array_fill_t - g.array_submit_t : -1;
            double ta = g.array_all_t ? g.array_all_t - g.array_submit_t : -1;
            json_object_set_new(o, "array_dispatch",
                                json_pack("{s:I,s:f,s:f,s:I}", "launched",
                                          (json_int_t)g.array_launched, "fill_s", tf, "all_s", ta,
                                          "tasks", (json_int_t)g.o.array));
        }
        if (g.o.kill_node)
            json_object_set_new(o, "kill_node",
                                json_pack("{s:i,s:i,s:f,s:f,s:f}", "jobs", nwatch, "relaunched",
                                          g.nback, "closed_s", t_close, "first_relaunch_s", t_first,
                                          "all_relaunched_s", t_all));
        char *txt = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
        printf("%s\n", txt);
        free(txt);
        json_decref(o);
    }
    if (g.o.check) {
        /* the smoke test's claims (ctest bench/ctld_scale_quick) */
        if (st.jl1 == st.jl0)
            fail("--check: no job launched in the steady window (%llu in all)",
                 (unsigned long long)g.job_launches);
        if (g.lost_conns)
            fail("--check: %u agent connections lost", g.lost_conns);
        if (g.frames_dropped || g.bad_body)
            fail("--check: %llu frames dropped, %llu bad bodies",
                 (unsigned long long)g.frames_dropped, (unsigned long long)g.bad_body);
        if (g.o.kill_node && g.nback < nwatch)
            fail("--check: %d of the lost node's %d jobs ran elsewhere", g.nback, nwatch);
    }
    /* the agents go first: droverd sees them close, then stops */
    for (uint32_t i = 0; i < g.o.nodes; i++)
        agent_close(&g.agents[i]);
    cleanup();
    return g.failed ? 1 : 0;
}
