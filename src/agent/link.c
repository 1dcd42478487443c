/* link.c - the agent's connection to the controller.
 *
 * The agent connects out (so that nodes behind NAT work), answers the
 * controller's CHALLENGE with HELLO (its fresh nonce and a proof that it
 * holds this node's key; every later frame is sealed with keys derived from
 * it), and on WELCOME registers what it has: GPUs and topology
 * (discovered once, on the first WELCOME, because the declared fallback
 * comes from it) and every rank it holds, running or ended but not yet
 * ACKed.  A lost connection never touches the jobs: the link reconnects
 * with exponential backoff and a new session (new nonce), and the next
 * REGISTER tells the controller what happened meanwhile.
 *
 * Frames the decoder drops (bad tag, replay) are counted and logged at a
 * bounded rate, never acted on; an unusable stream (bad header) closes the
 * connection. */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>

#define LINK_BACKOFF_MIN_MS 100
#define LINK_BACKOFF_MAX_MS 5000
#define LINK_HANDSHAKE_S    10 /* connect + WELCOME must take less */
#define LINK_DROP_LOG_NS    (10 * 1000000000LL)
#define LINK_IN_MAX         (DR_PROTO_HDR + DR_PROTO_MAX_BODY + DR_PROTO_TAG)
#define LINK_HB_RING        16 /* heartbeats whose LEASE answer may still come */
#define LINK_BUSY_RETRY_MS  100

enum link_state { LINK_DOWN, LINK_CONNECTING, LINK_HELLO, LINK_UP, LINK_CLOSED };

typedef struct dr_agent_link {
    dr_agent_t *a;
    char *host, *port;
    uint8_t key[DR_PROTO_KEY];
    char *nvml_path, *rocm_path;
    struct evdns_base *dns;
    struct bufferevent *bev;
    dr_proto_session_t s;
    int state;
    uint32_t heartbeat_ms;
    struct event *retry_ev, *hb_ev;
    uint32_t backoff_ms;
    dr_rng_t rng; /* backoff jitter */
    uint64_t sessions;
    /* node facts, discovered on the first WELCOME */
    bool have_node;
    dr_gpu_list_t gpus;
    dr_topo_t topo;
    char hostname[256];
    /* rate-limited logging of dropped frames */
    int64_t drop_log_ns;
    uint64_t drops_logged;
    /* the shards last reported (cache.c), and whether a scan failed or cut
     * the list (logged once per change) */
    dr_strvec_t shards;
    bool cache_warned;
    /* the lease (lease.c): when this session's HELLO and its recent
     * heartbeats were sent (CLOCK_BOOTTIME), by frame sequence number */
    int64_t hello_at;
    struct {
        uint64_t seq;
        int64_t at;
    } sent[LINK_HB_RING];
} dr_agent_link_t;

static void link_connect(dr_agent_link_t *l);
static void link_lost(dr_agent_link_t *l, const char *why);

/* ---- helpers: key file, address ---- */

int dr_agent_key_load(const char *path, uint8_t key[DR_PROTO_KEY], dr_err_t *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return dr_err_set(err, DR_EIO, "key file %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return dr_err_set(err, DR_EINVAL, "key file %s: not a regular file", path);
    }
    if (st.st_mode & 077) {
        close(fd);
        return dr_err_set(err, DR_EINVAL,
                          "key file %s: mode %04o lets group or others read or change it; "
                          "chmod 600 %s",
                          path, (unsigned)(st.st_mode & 07777), path);
    }
    if (st.st_uid != geteuid()) {
        close(fd);
        return dr_err_set(err, DR_EINVAL,
                          "key file %s: owned by uid %u, not by this agent's uid %u (another "
                          "user could replace it); chown %u %s and chmod 600 %s",
                          path, (unsigned)st.st_uid, (unsigned)geteuid(), (unsigned)geteuid(), path,
                          path);
    }
    char text[512];
    ssize_t n = read(fd, text, sizeof text);
    int e = errno;
    close(fd);
    if (n < 0)
        return dr_err_set(err, DR_EIO, "key file %s: %s", path, strerror(e));
    int rc = dr_proto_key_parse(text, (size_t)n, key, err);
    explicit_bzero(text, sizeof text);
    if (rc != 0)
        dr_err_prefix(err, "key file %s: ", path);
    return rc;
}

int dr_agent_split_hostport(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
                            dr_err_t *err)
{
    const char *h = s, *colon;
    size_t hl;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':')
            return dr_err_set(err, DR_EINVAL, "controller '%s': want [ADDRESS]:PORT", s);
        h = s + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            return dr_err_set(err, DR_EINVAL, "controller '%s': want HOST:PORT", s);
        if (memchr(s, ':', (size_t)(colon - s)))
            return dr_err_set(err, DR_EINVAL, "controller '%s': write IPv6 as [ADDRESS]:PORT", s);
        hl = (size_t)(colon - s);
    }
    uint64_t p;
    if (hl == 0 || hl >= hostlen)
        return dr_err_set(err, DR_EINVAL, "controller '%s': bad host", s);
    if (dr_parse_u64(colon + 1, &p) != 0 || p == 0 || p > 65535 || strlen(colon + 1) >= portlen)
        return dr_err_set(err, DR_EINVAL, "controller '%s': port must be 1-65535", s);
    memcpy(host, h, hl);
    host[hl] = '\0';
    snprintf(port, portlen, "%u", (unsigned)p);
    return 0;
}

/* ---- sending ---- */

static void link_send(dr_agent_link_t *l, int type, const void *m)
{
    if (!l->bev)
        return;
    uint8_t *out = NULL;
    size_t outlen = 0;
    dr_err_t err = {0};
    if (dr_proto_send_msg(&l->s, type, m, &out, &outlen, &err) != 0) {
        dr_agent_log(l->a, "cannot send %s: %s", dr_msg_type_name(type), err.msg);
        return;
    }
    if (bufferevent_write(l->bev, out, outlen) != 0)
        dr_agent_log(l->a, "cannot queue %s (%zu bytes)", dr_msg_type_name(type), outlen);
    free(out);
}

static void link_send_state(dr_agent_link_t *l, const dr_agent_job_t *j, bool started)
{
    dr_msg_job_state_t m = {
        .job = j->job,
        .gen = j->gen,
        .rank = j->rank,
        .started = started,
        .pid = (int32_t)j->pid,
        .exit_code = started ? 0 : j->exit_code,
        .signal = started ? 0 : j->signal,
        .why = started ? DR_END_EXIT : j->why,
        .t_ns = started ? j->start_ns : j->end_ns,
        .detail = started ? "" : j->detail,
    };
    link_send(l, DR_MSG_JOB_STATE, &m);
}

/* A replica's readiness: a JOB_STATE with started = true and ready set. */
static void link_send_ready(dr_agent_link_t *l, const dr_agent_job_t *j)
{
    dr_msg_job_state_t m = {.job = j->job,
                            .gen = j->gen,
                            .rank = j->rank,
                            .started = true,
                            .pid = (int32_t)j->pid,
                            .why = DR_END_EXIT,
                            .t_ns = dr_agent_now_ns(),
                            .detail = "",
                            .ready = j->ready};
    link_send(l, DR_MSG_JOB_STATE, &m);
}

static void link_notify_ready(dr_agent_t *a, const dr_agent_job_t *j)
{
    dr_agent_link_t *l = a->link;
    if (l && l->state == LINK_UP && j->running)
        link_send_ready(l, j);
}

void dr_agent_link_drop(dr_agent_t *a, const char *why)
{
    dr_agent_link_t *l = a->link;
    if (l && l->state != LINK_CLOSED && l->bev)
        link_lost(l, why);
}

int dr_agent_link_send(dr_agent_t *a, int type, const void *m)
{
    dr_agent_link_t *l = a->link;
    if (!l || l->state != LINK_UP || !l->bev)
        return -1;
    link_send(l, type, m);
    return 0;
}

/* launch.c and supervise.c tell us; only a registered session hears it
 * (otherwise the next REGISTER's held[] carries it). */
static void link_notify(dr_agent_t *a, const dr_agent_job_t *j, bool started)
{
    dr_agent_link_t *l = a->link;
    if (l && l->state == LINK_UP)
        link_send_state(l, j, started);
}

/* A warning signal the agent sent by itself (warn.c): for the job's events. */
static void link_notify_warned(dr_agent_t *a, const dr_agent_job_t *j, uint32_t why, int64_t t_ns)
{
    dr_agent_link_t *l = a->link;
    if (!l || l->state != LINK_UP)
        return; /* a report for the event log only: nothing depends on it */
    dr_msg_signal_t m = {.job = j->job,
                         .gen = j->gen,
                         .rank = j->rank,
                         .signal = j->warn_sig,
                         .why = why,
                         .t_ns = t_ns};
    link_send(l, DR_MSG_SIGNALED, &m);
}

/* ckpt.c checked a launch's checkpoints: the controller writes it to the
 * job's events (a report made while the link is down is only logged). */
static void link_notify_ckpt(dr_agent_t *a, const dr_msg_ckpt_t *m)
{
    dr_agent_link_t *l = a->link;
    if (l && l->state == LINK_UP)
        link_send(l, DR_MSG_CKPT, m);
}

/* Read the cache directory into *now; a failure is logged once (until a
 * scan works again) and reads as an empty cache. */
static void link_scan_cache(dr_agent_link_t *l, dr_strvec_t *now)
{
    dr_err_t err = {0};
    size_t skipped = 0;
    if (dr_agent_cache_scan(l->a->cache_dir, now, &skipped, &err) != DR_OK) {
        if (!l->cache_warned)
            dr_agent_log(l->a, "%s; reporting no shards", err.msg);
        l->cache_warned = true;
        return;
    }
    if (skipped && !l->cache_warned)
        dr_agent_log(l->a,
                     "cache %s: %zu entries not reported (names over %d bytes, or more than %d "
                     "names or %u bytes in all)",
                     l->a->cache_dir, skipped, DR_MSG_MAX_SHARD_NAME, DR_MSG_MAX_SHARDS,
                     DR_MSG_MAX_SHARD_BYTES);
    l->cache_warned = skipped != 0;
}

static void link_on_heartbeat(evutil_socket_t fd, short what, void *arg)
{
    dr_agent_link_t *l = arg;
    if (l->state == LINK_UP)
        dr_agent_lease_check(l->a); /* may end the session */
    if (l->state != LINK_UP)
        return;
    dr_msg_heartbeat_t hb = {.now_ns = dr_agent_now_ns(),
                             .running = (uint32_t)dr_agent_running(l->a)};
    dr_strvec_t now = {0};
    if (l->a->cache_dir) {
        link_scan_cache(l, &now);
        if (!dr_agent_cache_same(&now, &l->shards)) {
            dr_strvec_free(&l->shards);
            l->shards = now;
            now = (dr_strvec_t){0};
            hb.shards = l->shards.v;
            hb.nshards = (uint32_t)l->shards.n;
            hb.shards_given = true;
            dr_agent_debug(l->a, "cache: now %zu shards", l->shards.n);
        }
    }
    int64_t at = dr_agent_boot_ns();
    link_send(l, DR_MSG_HEARTBEAT, &hb);
    l->sent[l->s.tx_seq % LINK_HB_RING].seq = l->s.tx_seq;
    l->sent[l->s.tx_seq % LINK_HB_RING].at = at;
    dr_strvec_free(&now);
}

/* ---- connection life cycle ---- */

static void link_on_retry(evutil_socket_t fd, short what, void *arg)
{
    link_connect(arg);
}

static void link_close(dr_agent_link_t *l)
{
    if (l->bev) {
        bufferevent_free(l->bev);
        l->bev = NULL;
    }
    if (l->hb_ev)
        event_del(l->hb_ev);
    if (l->state != LINK_CLOSED)
        l->state = LINK_DOWN;
}

/* The connection is gone: jobs keep running; try again later. */
static void link_lost(dr_agent_link_t *l, const char *why)
{
    bool was_up = l->state == LINK_UP;
    link_close(l);
    if (was_up)
        dr_agent_steps_link_down(l->a);
    if (l->state == LINK_CLOSED)
        return;
    uint32_t d = l->backoff_ms;
    uint32_t delay = d / 2 + (uint32_t)dr_rng_below(&l->rng, d / 2 + 1); /* jitter */
    l->backoff_ms = d * 2 > LINK_BACKOFF_MAX_MS ? LINK_BACKOFF_MAX_MS : d * 2;
    dr_agent_log(l->a, "controller %s:%s: %s%s; reconnecting in %u ms", l->host, l->port, why,
                 was_up && !l->a->lease_lapsed ? " (jobs keep running)" : "", delay);
    struct timeval tv = {(time_t)(delay / 1000), (suseconds_t)(delay % 1000) * 1000};
    evtimer_add(l->retry_ev, &tv);
}

static void link_note_drop(dr_agent_link_t *l)
{
    const dr_proto_stats_t *st = &l->s.stats;
    uint64_t total = st->bad_mac + st->replayed;
    int64_t now = dr_agent_now_ns();
    if (l->drop_log_ns && now - l->drop_log_ns < LINK_DROP_LOG_NS)
        return;
    dr_agent_log(l->a,
                 "dropped %llu frame(s) from the controller since the last note "
                 "(this session: %llu bad MAC, %llu replayed)",
                 (unsigned long long)(total - l->drops_logged), (unsigned long long)st->bad_mac,
                 (unsigned long long)st->replayed);
    l->drops_logged = total;
    l->drop_log_ns = now;
}

/* GPUs and topology, once: the declared fallback comes from WELCOME. */
static void link_discover(dr_agent_link_t *l, const dr_msg_welcome_t *w)
{
    dr_agent_t *a = l->a;
    dr_gpu_opts_t o = {.nvml_path = l->nvml_path,
                       .rocm_path = l->rocm_path,
                       .declared_type = w->gpu_type,
                       .declared_n = w->ngpus,
                       .declared_mem_mb = 0};
    char note[512] = "";
    dr_err_t err = {0};
    if (dr_gpu_discover(&o, &l->gpus, note, sizeof note, &err) != 0) {
        /* a driver that loaded but failed: its GPUs are not usable, and the
         * declaration must not pretend they are */
        dr_agent_log(a, "gpu discovery failed: %s; registering no GPUs", err.msg);
        memset(&l->gpus, 0, sizeof l->gpus);
        l->gpus.source = "declared";
    }
    if (note[0])
        dr_agent_log(a, "gpus: %s", note);
    dr_agent_log(a, "gpus: %zu from %s%s%s", l->gpus.n, l->gpus.source, l->gpus.n ? ", first " : "",
                 l->gpus.n ? l->gpus.gpus[0].name : "");
    dr_err_clear(&err);
    memset(&l->topo, 0, sizeof l->topo);
    if (dr_topo_fill(&l->topo, &l->gpus, &err) != 0)
        dr_agent_log(a, "topology: %s; using the declared cpus and memory", err.msg);
    else if (l->topo.note[0])
        dr_agent_log(a, "topology: %s", l->topo.note);
    if (l->topo.cpus == 0)
        l->topo.cpus = w->cpus;
    if (l->topo.mem_mb == 0)
        l->topo.mem_mb = w->mem_mb;
    if (l->topo.numa_nodes == 0)
        l->topo.numa_nodes = 1;
    if (gethostname(l->hostname, sizeof l->hostname - 1) != 0)
        l->hostname[0] = '\0';
    l->have_node = true;
}

static void link_register(dr_agent_link_t *l)
{
    dr_agent_t *a = l->a;
    dr_msg_gpu_t *gpus = calloc(l->gpus.n ? l->gpus.n : 1, sizeof *gpus);
    dr_msg_held_t *held = calloc(a->njobs ? a->njobs : 1, sizeof *held);
    if (!gpus || !held) {
        free(gpus);
        free(held);
        link_lost(l, "out of memory building REGISTER");
        return;
    }
    for (size_t i = 0; i < l->gpus.n; i++) {
        dr_gpu_info_t *g = &l->gpus.gpus[i];
        gpus[i] = (dr_msg_gpu_t){g->index, g->name, g->uuid, g->pci, g->mem_mb, g->numa};
    }
    size_t nrun = 0;
    for (size_t i = 0; i < a->njobs; i++) {
        const dr_agent_job_t *j = a->jobs[i];
        held[i] =
            (dr_msg_held_t){.job = j->job, .gen = j->gen, .rank = j->rank, .running = j->running};
        if (j->running) {
            nrun++;
            continue;
        }
        held[i].exit_code = j->exit_code;
        held[i].signal = j->signal;
        held[i].why = j->why;
        held[i].end_ns = j->end_ns;
    }
    dr_msg_register_t r = {
        .source = (char *)l->gpus.source,
        .gpus = gpus,
        .ngpus = (uint32_t)l->gpus.n,
        .cpus = l->topo.cpus,
        .mem_mb = l->topo.mem_mb,
        .numa_nodes = l->topo.numa_nodes,
        .hostname = l->hostname,
        .held = held,
        .nheld = (uint32_t)a->njobs,
    };
    if (a->cache_dir) { /* the whole set: a new session knows nothing of the old */
        link_scan_cache(l, &l->shards);
        r.shards = l->shards.v;
        r.nshards = (uint32_t)l->shards.n;
    }
    link_send(l, DR_MSG_REGISTER, &r);
    free(gpus);
    free(held);
    dr_agent_log(a,
                 "registered with %s:%s (epoch %llu, heartbeat %u ms): %zu GPUs (%s), %u cpus, "
                 "%llu MB, holding %zu running and %zu ended ranks",
                 l->host, l->port, (unsigned long long)a->epoch, l->heartbeat_ms, l->gpus.n,
                 l->gpus.source, l->topo.cpus, (unsigned long long)l->topo.mem_mb, nrun,
                 a->njobs - nrun);
}

static void link_on_welcome(dr_agent_link_t *l, const dr_frame_t *f)
{
    dr_agent_t *a = l->a;
    dr_msg_welcome_t w;
    dr_err_t err = {0};
    if (dr_msg_welcome_parse(&w, f->body, f->len, &err) != 0) {
        l->s.stats.bad_body++;
        dr_agent_log(a, "bad WELCOME: %s", err.msg);
        link_lost(l, "bad WELCOME");
        return;
    }
    if (memcmp(w.nonce, l->s.peer_nonce, sizeof w.nonce) != 0) {
        dr_msg_welcome_free(&w);
        link_lost(l, "WELCOME names another CHALLENGE's nonce");
        return;
    }
    if (a->epoch && w.epoch != a->epoch)
        dr_agent_log(a, "controller epoch %llu -> %llu (it restarted)",
                     (unsigned long long)a->epoch, (unsigned long long)w.epoch);
    a->epoch = w.epoch;
    dr_agent_lease_report(a); /* what a lapse stopped goes in the REGISTER below */
    dr_agent_lease_start(a, (int64_t)w.lease_ms * 1000000LL, l->hello_at);
    memset(l->sent, 0, sizeof l->sent);
    l->heartbeat_ms = w.heartbeat_ms ? w.heartbeat_ms : 1000;
    if (l->heartbeat_ms < 10)
        l->heartbeat_ms = 10;
    if (!l->have_node)
        link_discover(l, &w);
    dr_msg_welcome_free(&w);
    if (dr_agent_state_write(a, &err) != 0)
        dr_agent_log(a, "%s", err.msg);
    /* registered from here on: no more handshake timeout; a dead peer is
     * noticed by unacknowledged heartbeats */
    bufferevent_set_timeouts(l->bev, NULL, NULL);
    int fd = bufferevent_getfd(l->bev);
    unsigned ut = l->heartbeat_ms * 3 < 10000 ? 10000 : l->heartbeat_ms * 3;
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof ut);
    /* reports are small frames sent as they happen: without this, Nagle's
     * algorithm holds each one behind the unacknowledged previous one until
     * the controller's delayed ACK (measured: ~10 ms per start or end report
     * on a stream of short jobs, the largest wait of the whole path) */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    l->state = LINK_UP;
    l->sessions++;
    l->backoff_ms = LINK_BACKOFF_MIN_MS;
    link_register(l);
    /* a new session knows nothing of readiness: say it again */
    for (size_t i = 0; i < a->njobs; i++)
        if (a->jobs[i]->running && a->jobs[i]->ready != DR_READY_NONE)
            link_send_ready(l, a->jobs[i]);
    struct timeval tv = {(time_t)(l->heartbeat_ms / 1000),
                         (suseconds_t)(l->heartbeat_ms % 1000) * 1000};
    event_add(l->hb_ev, &tv);
}

static void link_on_launch(dr_agent_link_t *l, const dr_frame_t *f)
{
    dr_agent_t *a = l->a;
    dr_msg_launch_t m;
    dr_err_t err = {0};
    if (dr_msg_launch_parse(&m, f->body, f->len, &err) != 0) {
        l->s.stats.bad_body++;
        dr_agent_log(a, "bad LAUNCH ignored: %s", err.msg);
        return;
    }
    if (m.epoch < a->epoch)
        dr_agent_log(a, "job %llu.%u rank %u: launch dropped: epoch %llu is older than %llu",
                     (unsigned long long)m.job, m.gen, m.rank, (unsigned long long)m.epoch,
                     (unsigned long long)a->epoch);
    else if (dr_agent_launch(a, &m, &err) < 0)
        dr_agent_log(a, "job %llu.%u rank %u: launch: %s", (unsigned long long)m.job, m.gen, m.rank,
                     err.msg);
    dr_msg_launch_free(&m);
}

static void link_on_kill(dr_agent_link_t *l, const dr_frame_t *f)
{
    dr_msg_kill_t m;
    dr_err_t err = {0};
    if (dr_msg_kill_parse(&m, f->body, f->len, &err) != 0) {
        l->s.stats.bad_body++;
        dr_agent_log(l->a, "bad KILL ignored: %s", err.msg);
        return;
    }
    (void)dr_agent_kill(l->a, &m);
    dr_msg_kill_free(&m);
}

static void link_on_signal(dr_agent_link_t *l, const dr_frame_t *f)
{
    dr_msg_signal_t m;
    dr_err_t err = {0};
    if (dr_msg_signal_parse(&m, f->body, f->len, &err) != 0 || m.signal <= 0 || m.signal > 64 ||
        (m.why != DR_SIG_PREEMPT && m.why != DR_SIG_DRAIN)) {
        l->s.stats.bad_body++;
        dr_agent_log(l->a, "bad SIGNAL ignored: %s",
                     err.msg[0] ? err.msg : "signal or why out of range");
        dr_msg_signal_free(&m);
        return;
    }
    (void)dr_agent_signal(l->a, &m);
    if (m.why == DR_SIG_PREEMPT && m.ckpt_dir)
        (void)dr_agent_ckpt_watch(l->a, &m); /* report its checkpoint as soon as it is there */
    dr_msg_signal_free(&m);
}

static void link_on_ack(dr_agent_link_t *l, const dr_frame_t *f)
{
    dr_agent_t *a = l->a;
    dr_msg_ack_t m;
    dr_err_t err = {0};
    if (dr_msg_ack_parse(&m, f->body, f->len, &err) != 0) {
        l->s.stats.bad_body++;
        dr_agent_log(a, "bad ACK ignored: %s", err.msg);
        return;
    }
    dr_agent_job_t *j = dr_agent_job_find(a, m.job, m.gen, m.rank);
    if (j && !j->running) {
        dr_agent_debug(a, "job %llu.%u rank %u: end report acknowledged", (unsigned long long)m.job,
                       m.gen, m.rank);
        dr_agent_job_remove(a, j);
    } else {
        dr_agent_log(a, "job %llu.%u rank %u: ACK ignored: %s", (unsigned long long)m.job, m.gen,
                     m.rank, j ? "still running" : "no such end report");
    }
    dr_msg_ack_free(&m);
}

/* The controller heard one of our heartbeats: the lease runs from when it
 * was sent. */
static void link_on_lease(dr_agent_link_t *l, const dr_frame_t *f)
{
    dr_msg_lease_t m;
    dr_err_t err = {0};
    if (dr_msg_lease_parse(&m, f->body, f->len, &err) != 0) {
        l->s.stats.bad_body++;
        dr_agent_log(l->a, "bad LEASE ignored: %s", err.msg);
        return;
    }
    if (m.seq && l->sent[m.seq % LINK_HB_RING].seq == m.seq)
        dr_agent_lease_renew(l->a, l->sent[m.seq % LINK_HB_RING].at);
    dr_msg_lease_free(&m);
}

static void link_on_step_state(dr_agent_link_t *l, const dr_frame_t *f)
{
    dr_msg_step_state_t m;
    dr_err_t err = {0};
    if (dr_msg_step_state_parse(&m, f->body, f->len, &err) != 0) {
        l->s.stats.bad_body++;
        dr_agent_log(l->a, "bad STEP_STATE ignored: %s", err.msg);
        return;
    }
    dr_agent_steps_on_state(l->a, &m);
    dr_msg_step_state_free(&m);
}

static void link_on_reject(dr_agent_link_t *l, const dr_frame_t *f)
{
    dr_msg_reject_t m;
    dr_err_t err = {0};
    if (dr_msg_reject_parse(&m, f->body, f->len, &err) != 0) {
        l->s.stats.bad_body++;
        dr_agent_log(l->a, "rejected by the controller (unreadable reason: %s)", err.msg);
    } else {
        dr_agent_log(l->a, "rejected by the controller: %s", m.reason);
        dr_msg_reject_free(&m);
    }
    l->state = LINK_CLOSED;
    link_close(l);
    dr_agent_stop(l->a, 1);
}

static void link_on_output_req(dr_agent_link_t *l, const dr_frame_t *f)
{
    dr_msg_output_req_t m;
    dr_err_t err = {0};
    if (dr_msg_output_req_parse(&m, f->body, f->len, &err) != 0) {
        l->s.stats.bad_body++;
        dr_agent_log(l->a, "bad OUTPUT_REQ ignored: %s", err.msg);
        return;
    }
    dr_agent_output_read(l->a, &m);
    dr_msg_output_req_free(&m);
}

/* CHALLENGE, in clear: answer it with HELLO, which proves this node's key
 * for this connection only, and open the sealed session. */
static void link_on_challenge(dr_agent_link_t *l, const dr_frame_t *f)
{
    dr_msg_challenge_t ch;
    dr_err_t err = {0};
    if (dr_msg_challenge_parse(&ch, f->body, f->len, &err) != 0) {
        l->s.stats.bad_body++;
        link_lost(l, "bad CHALLENGE");
        return;
    }
    dr_msg_hello_t h = {.version = DR_PROTO_VERSION, .name = l->a->name};
    memcpy(h.nonce, l->s.my_nonce, sizeof h.nonce);
    if (dr_proto_hello_proof(l->key, ch.nonce, h.nonce, h.name, h.proof, &err) != 0) {
        link_lost(l, err.msg);
        return;
    }
    l->hello_at = dr_agent_boot_ns(); /* a new session's lease runs from here */
    dr_agent_debug(l->a, "CHALLENGE; HELLO");
    link_send(l, DR_MSG_HELLO, &h);
    explicit_bzero(h.proof, sizeof h.proof);
    if (dr_proto_session_set_peer_nonce(&l->s, ch.nonce) != 0)
        link_lost(l, "cannot open the session (bad CHALLENGE nonce)");
}

/* One authenticated frame. */
static void link_on_frame(dr_agent_link_t *l, const dr_frame_t *f)
{
    dr_agent_debug(l->a, "<- %s seq %llu (%zu bytes)", dr_msg_type_name(f->type),
                   (unsigned long long)f->seq, f->len);
    if (f->type == DR_MSG_CHALLENGE) { /* the decoder takes it only before the session */
        link_on_challenge(l, f);
        return;
    }
    if (f->type == DR_MSG_REJECT) {
        link_on_reject(l, f);
        return;
    }
    if (l->state == LINK_HELLO) {
        if (f->type == DR_MSG_WELCOME)
            link_on_welcome(l, f);
        else
            dr_agent_log(l->a, "%s before WELCOME ignored", dr_msg_type_name(f->type));
        return;
    }
    switch (f->type) {
    case DR_MSG_LAUNCH: link_on_launch(l, f); break;
    case DR_MSG_KILL: link_on_kill(l, f); break;
    case DR_MSG_SIGNAL: link_on_signal(l, f); break;
    case DR_MSG_ACK: link_on_ack(l, f); break;
    case DR_MSG_STEP_STATE: link_on_step_state(l, f); break;
    case DR_MSG_LEASE: link_on_lease(l, f); break;
    case DR_MSG_OUTPUT_REQ: link_on_output_req(l, f); break;
    default: dr_agent_log(l->a, "unexpected %s ignored", dr_msg_type_name(f->type)); break;
    }
}

/* How many bytes the frame at the head of `in` takes, or 0 while its header
 * is incomplete.  Lets the reader make exactly one frame contiguous instead
 * of the whole buffer on every read. */
static size_t link_frame_size(struct evbuffer *in, uint8_t hdr[DR_PROTO_HDR], size_t *hlen)
{
    ev_ssize_t n = evbuffer_copyout(in, hdr, DR_PROTO_HDR);
    *hlen = n > 0 ? (size_t)n : 0;
    if (*hlen < DR_PROTO_HDR)
        return 0;
    uint32_t blen = (uint32_t)hdr[8] << 24 | (uint32_t)hdr[9] << 16 | (uint32_t)hdr[10] << 8 |
                    (uint32_t)hdr[11];
    return (size_t)DR_PROTO_HDR + blen + DR_PROTO_TAG;
}

static void link_on_read(struct bufferevent *bev, void *arg)
{
    dr_agent_link_t *l = arg;
    /* an agent that was stopped (SIGSTOP, a hung machine) looks at its
     * lease before it handles anything the controller sent meanwhile */
    if (l->state == LINK_UP) {
        dr_agent_lease_check(l->a);
        if (l->bev != bev)
            return; /* the lease ran out: the session is over */
    }
    struct evbuffer *in = bufferevent_get_input(bev);
    /* bounded by the read high-water mark: at most one maximal frame */
    for (;;) {
        size_t len = evbuffer_get_length(in);
        if (len == 0)
            return;
        uint8_t hdr[DR_PROTO_HDR];
        size_t hlen, used = 0;
        dr_frame_t f;
        size_t need = link_frame_size(in, hdr, &hlen);
        dr_proto_rc_t rc;
        if (need == 0 || len < need || need > LINK_IN_MAX)
            rc = dr_proto_decode(&l->s, hdr, hlen, &used, &f); /* header checks only */
        else
            rc = dr_proto_decode(&l->s, evbuffer_pullup(in, (ev_ssize_t)need), need, &used, &f);
        if (rc == DR_PROTO_NEED)
            return;
        if (rc == DR_PROTO_FATAL) {
            int v = dr_proto_peer_version(hdr, hlen);
            char why[160];
            if (v >= 0 && v != DR_PROTO_VERSION)
                snprintf(why, sizeof why,
                         "the controller speaks protocol version %d, this agent %d: upgrade "
                         "the two together (docs/operations.md)",
                         v, DR_PROTO_VERSION);
            else
                snprintf(why, sizeof why, "unusable stream (bad frame header)");
            link_lost(l, why);
            return;
        }
        if (rc == DR_PROTO_DROPPED) {
            evbuffer_drain(in, used);
            link_note_drop(l);
            continue;
        }
        link_on_frame(l, &f); /* f.body points into the input buffer */
        if (l->bev != bev)
            return; /* the handler closed the connection (and the buffer) */
        evbuffer_drain(in, used);
    }
}

static void link_on_event(struct bufferevent *bev, short what, void *arg)
{
    dr_agent_link_t *l = arg;
    if (l->state == LINK_UP) {
        dr_agent_lease_check(l->a); /* first, as link_on_read */
        if (l->bev != bev)
            return;
    }
    if (what & BEV_EVENT_CONNECTED) {
        uint8_t nonce[DR_PROTO_NONCE];
        if (getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce) {
            link_lost(l, "getrandom failed");
            return;
        }
        dr_proto_session_init(&l->s, l->key, nonce);
        dr_agent_note_local_addr(l->a, (int)bufferevent_getfd(bev));
        l->drop_log_ns = 0;
        l->drops_logged = 0;
        l->state = LINK_HELLO; /* the controller speaks first: CHALLENGE */
        dr_agent_debug(l->a, "connected to %s:%s; waiting for CHALLENGE", l->host, l->port);
        return;
    }
    char why[160];
    if ((what & BEV_EVENT_TIMEOUT) && l->state == LINK_HELLO && !l->s.have_peer_nonce)
        snprintf(why, sizeof why,
                 "handshake timed out: no CHALLENGE from the controller (one older than protocol "
                 "version %d waits for the agent to speak first: upgrade it)",
                 DR_PROTO_VERSION);
    else if (what & BEV_EVENT_TIMEOUT)
        snprintf(why, sizeof why, "%s timed out",
                 l->state == LINK_CONNECTING ? "connect" : "handshake");
    else if ((what & BEV_EVENT_EOF) && l->state == LINK_HELLO && l->s.have_peer_nonce)
        snprintf(why, sizeof why,
                 "connection closed after HELLO: the controller refused this node's key (is "
                 "--key the key 'droverd --enroll %s' wrote? is the node revoked?)",
                 l->a->name);
    else if (what & BEV_EVENT_EOF)
        snprintf(why, sizeof why, "connection closed");
    else {
        int dnserr = bufferevent_socket_get_dns_error(bev);
        int e = EVUTIL_SOCKET_ERROR();
        if (dnserr)
            snprintf(why, sizeof why, "cannot resolve host: %s", evutil_gai_strerror(dnserr));
        else
            snprintf(why, sizeof why, "%s", e ? strerror(e) : "connection error");
    }
    link_lost(l, why);
}

static void link_connect(dr_agent_link_t *l)
{
    if (l->state == LINK_CLOSED)
        return;
    if (dr_agent_lease_busy(l->a)) {
        /* the ranks the lease stopped end first: the next REGISTER reports them */
        struct timeval tv = {0, LINK_BUSY_RETRY_MS * 1000};
        evtimer_add(l->retry_ev, &tv);
        return;
    }
    l->bev = bufferevent_socket_new(l->a->base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!l->bev) {
        link_lost(l, "cannot create a socket");
        return;
    }
    l->state = LINK_CONNECTING;
    bufferevent_setcb(l->bev, link_on_read, NULL, link_on_event, l);
    bufferevent_setwatermark(l->bev, EV_READ, 0, LINK_IN_MAX);
    struct timeval hs = {LINK_HANDSHAKE_S, 0};
    bufferevent_set_timeouts(l->bev, &hs, &hs);
    bufferevent_enable(l->bev, EV_READ | EV_WRITE);
    dr_agent_debug(l->a, "connecting to %s:%s", l->host, l->port);
    if (bufferevent_socket_connect_hostname(l->bev, l->dns, AF_UNSPEC, l->host, atoi(l->port)) !=
        0) {
        if (l->bev) /* the callback may have run and closed it already */
            link_lost(l, "connect failed");
    }
}

int dr_agent_link_start(dr_agent_t *a, const dr_agent_link_opts_t *o, dr_err_t *err)
{
    dr_agent_link_t *l = calloc(1, sizeof *l);
    if (!l)
        return dr_err_set(err, DR_ENOMEM, "link: out of memory");
    l->a = a;
    a->link = l;
    l->host = dr_strdup(o->host);
    l->port = dr_strdup(o->port);
    l->nvml_path = o->nvml_path ? dr_strdup(o->nvml_path) : NULL;
    l->rocm_path = o->rocm_path ? dr_strdup(o->rocm_path) : NULL;
    memcpy(l->key, o->key, DR_PROTO_KEY);
    l->backoff_ms = LINK_BACKOFF_MIN_MS;
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
        seed = (uint64_t)dr_agent_now_ns() ^ (uint64_t)getpid();
    dr_rng_seed(&l->rng, seed);
    l->dns = evdns_base_new(a->base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
    if (!l->dns && (l->dns = evdns_base_new(a->base, 0)) != NULL)
        evdns_base_load_hosts(l->dns, NULL);
    l->retry_ev = evtimer_new(a->base, link_on_retry, l);
    l->hb_ev = event_new(a->base, -1, EV_PERSIST, link_on_heartbeat, l);
    if (!l->host || !l->port || (o->nvml_path && !l->nvml_path) ||
        (o->rocm_path && !l->rocm_path) || !l->dns || !l->retry_ev || !l->hb_ev) {
        dr_agent_link_free(a);
        return dr_err_set(err, DR_ENOMEM, "link: cannot set up (memory, DNS or events)");
    }
    a->notify = link_notify;
    a->notify_ready = link_notify_ready;
    a->notify_warned = link_notify_warned;
    a->notify_ckpt = link_notify_ckpt;
    link_connect(l);
    return 0;
}

void dr_agent_link_free(dr_agent_t *a)
{
    dr_agent_link_t *l = a->link;
    if (!l)
        return;
    l->state = LINK_CLOSED;
    link_close(l);
    if (l->retry_ev)
        event_free(l->retry_ev);
    if (l->hb_ev)
        event_free(l->hb_ev);
    if (l->dns)
        evdns_base_free(l->dns, 0);
    if (l->have_node)
        dr_gpu_list_free(&l->gpus);
    dr_strvec_free(&l->shards);
    explicit_bzero(l->key, sizeof l->key);
    explicit_bzero(&l->s, sizeof l->s);
    free(l->host);
    free(l->port);
    free(l->nvml_path);
    free(l->rocm_path);
    free(l);
    if (a->notify == link_notify)
        a->notify = NULL;
    if (a->notify_ready == link_notify_ready)
        a->notify_ready = NULL;
    if (a->notify_warned == link_notify_warned)
        a->notify_warned = NULL;
    if (a->notify_ckpt == link_notify_ckpt)
        a->notify_ckpt = NULL;
    a->link = NULL;
}

dr_proto_stats_t dr_agent_link_stats(const dr_agent_t *a)
{
    dr_proto_stats_t z = {0};
    return a->link ? a->link->s.stats : z;
}

uint64_t dr_agent_link_sessions(const dr_agent_t *a)
{
    return a->link ? a->link->sessions : 0;
}
