/* main.c - droverd, the drover controller: options, key, signals, loop.
 *
 *   droverd -c cluster.conf --state DIR [--listen HOST:PORT] [--socket PATH]
 *           [--tls [--tls-cert FILE --tls-key FILE] [--tls-san NAMES]]
 *           [--agent-listen HOST:PORT] [--key FILE] [--policy NAME] ...
 *   droverd --gen-key FILE
 *   droverd --check-store --state DIR
 *   droverd --enroll NODE [--key MASTER] [--out FILE]
 *
 * Foreground, logs to stderr; --daemon detaches.  docs/operations.md says
 * how to run it on a real cluster. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "ctld/ctld.h"
#include "ctld/prom.h"
#include "ctld/store_check.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: droverd -c cluster.conf --state DIR [options]\n"
        "       droverd --gen-key FILE\n"
        "       droverd --check-store --state DIR\n"
        "       droverd --enroll NODE [--generation N] [--key FILE] [--out FILE]\n"
        "\n"
        "  -c, --config FILE         cluster configuration (docs/config.md)\n"
        "  --state DIR               state directory (SQLite store, Unix socket)\n"
        "  --listen HOST:PORT        HTTP API on TCP (default 127.0.0.1:6817); an address\n"
        "                            that is not loopback needs --tls (or --plain-http)\n"
        "  --tls                     HTTPS on --listen (the Unix socket stays plain); without\n"
        "                            --tls-cert: a self-signed pair made in DIR on the first\n"
        "                            start, its SHA-256 fingerprint in the log\n"
        "  --tls-cert FILE           the certificate (PEM, chain after it); implies --tls\n"
        "  --tls-key FILE            its private key (PEM, mode 0600, owned by droverd's user)\n"
        "  --tls-san NAME[,NAME]     more names or addresses for the self-signed certificate\n"
        "                            (besides localhost, this host's name, 127.0.0.1, ::1)\n"
        "  --plain-http              plain HTTP on a --listen address that is not loopback:\n"
        "                            tokens and jobs cross the network in clear text\n"
        "  --socket PATH             HTTP API on a Unix socket (default DIR/droverd.sock)\n"
        "  --agent-listen HOST:PORT  agent connections (default: the --listen host, port+1)\n"
        "  --key FILE                the master key: each node's key is derived from it\n"
        "                            (default /etc/drover/cluster.key; never on a node)\n"
        "  --policy NAME[:OPTS]      scheduling policy (default drover; 'drover sim\n"
        "                            --list-policies' lists them)\n"
        "  --operator USER[,USER]    users with the operator role (root always has it)\n"
        "  --min-pass-interval DUR   at most one scheduling pass per DUR (default 5ms)\n"
        "  --agent-timeout DUR       an agent silent this long: its node is unreachable,\n"
        "                            nothing new starts there (default 5s)\n"
        "  --lease DUR               an agent cut off this long stops its jobs; they are\n"
        "                            requeued after it (default 30s or --agent-timeout,\n"
        "                            the longer; at least --agent-timeout)\n"
        "  --heartbeat DUR           agents' heartbeat period (default 1s)\n"
        "  --haproxy-socket PATH     keep HAProxy's backends at the services' ready replicas\n"
        "                            through its runtime API (docs/services.md)\n"
        "  --service-drain DUR       a replica stopped on purpose leaves the load balancer\n"
        "                            this long before it is stopped (default 2s)\n"
        "  --no-fsync                synchronous=NORMAL: faster, a power cut may lose the\n"
        "                            last acknowledged submits (a crash of droverd does not)\n"
        "  --submit-rate N           at most N submits a second per user (token bucket;\n"
        "                            default 0: no limit); over it: 429 and Retry-After\n"
        "  --submit-burst N          the bucket's size (default 2 x --submit-rate, at least 1)\n"
        "  --metrics-public          GET /metrics without a token (for a Prometheus that\n"
        "                            sends none; the rest of the API still needs one)\n"
        "  --stats-interval DUR      GET /v1/stats keeps a sample this often, 24 h of them\n"
        "                            (default 10s, at least 1s)\n"
        "  --init                    start a new store where the store file is empty, or\n"
        "                            missing while droverd.seq says one existed (a first\n"
        "                            start where there is nothing needs no --init)\n"
        "  --check-store             check the store (PRAGMA integrity_check, read-only,\n"
        "                            also while droverd runs) and exit: 0 whole, 1 not\n"
        "  --daemon                  detach from the terminal\n"
        "  --gen-key FILE            write a new random master key (mode 0600) and exit\n"
        "  --enroll NODE             write NODE's key (from --key) to --out FILE (mode\n"
        "                            0600; stdout without --out) and exit: install it on\n"
        "                            that node as its agent's --key\n"
        "  --generation N            with --enroll: the node's key generation (drover\n"
        "                            nodes rekey says it; default 0)\n"
        "  --test-crash-at NAME[:N]  tests only: SIGKILL the N-th time a named crash\n"
        "                            point is reached (tests/integration/test_cluster_crash.sh)\n");
}

/* Write key to a new file path (mode 0600); opt names the option in errors. */
static int write_key(const char *path, const uint8_t key[DR_PROTO_KEY], const char *opt)
{
    char hex[66];
    dr_proto_key_format(key, hex);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "droverd: %s %s: %s\n", opt, path, strerror(errno));
        return 1;
    }
    size_t len = strlen(hex);
    if (write(fd, hex, len) != (ssize_t)len || fsync(fd) != 0) {
        fprintf(stderr, "droverd: %s %s: %s\n", opt, path, strerror(errno));
        close(fd);
        return 1;
    }
    close(fd);
    explicit_bzero(hex, sizeof hex);
    return 0;
}

static int gen_key(const char *path)
{
    uint8_t key[DR_PROTO_KEY];
    if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key) {
        perror("droverd: getrandom");
        return 1;
    }
    int rc = write_key(path, key, "--gen-key");
    explicit_bzero(key, sizeof key);
    return rc;
}

static int key_file_ok(const char *path);

/* --enroll NODE: the node's key, derived from the master key, for the
 * operator to install on that node (docs/operations.md, "Node keys"). */
static int enroll(const char *node, uint32_t gen, const char *master_file, const char *out)
{
    if (!key_file_ok(master_file))
        return 1;
    char *buf = NULL;
    size_t len = 0;
    dr_err_t err = {0};
    uint8_t master[DR_PROTO_KEY], nk[DR_PROTO_KEY];
    int rc = dr_read_file(master_file, &buf, &len, &err);
    if (rc == DR_OK)
        rc = dr_proto_key_parse(buf, len, master, &err);
    free(buf);
    if (rc == DR_OK)
        rc = dr_proto_node_key_gen(master, node, gen, nk, &err);
    explicit_bzero(master, sizeof master);
    if (rc != DR_OK) {
        fprintf(stderr, "droverd: --enroll %s: %s: %s\n", node, master_file, err.msg);
        return 1;
    }
    if (out) {
        rc = write_key(out, nk, "--out");
    } else {
        char hex[66];
        dr_proto_key_format(nk, hex);
        rc = fputs(hex, stdout) < 0 || fflush(stdout) != 0;
        explicit_bzero(hex, sizeof hex);
    }
    explicit_bzero(nk, sizeof nk);
    return rc;
}

static int key_file_ok(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) != 0) {
        fprintf(stderr, "droverd: --key %s: %s (create one with 'droverd --gen-key %s')\n",
                path ? path : "", strerror(errno), path ? path : "FILE");
        return 0;
    }
    if (st.st_mode & 077) {
        fprintf(stderr, "droverd: --key %s: readable by group or others (mode %o); chmod 600 it\n",
                path, (unsigned)(st.st_mode & 0777));
        return 0;
    }
    if (st.st_uid != geteuid()) { /* its owner could replace the key: as trusted as droverd */
        fprintf(stderr,
                "droverd: --key %s: owned by uid %u, not by droverd's uid %u; chown %u %s and "
                "chmod 600 %s\n",
                path, (unsigned)st.st_uid, (unsigned)geteuid(), (unsigned)geteuid(), path, path);
        return 0;
    }
    return 1;
}

/* --tls-cert and --tls-key go together and imply --tls; plain HTTP leaves
 * the host (tokens, jobs' command lines and environments in clear text)
 * only when the operator says so with --plain-http. */
static int tls_opts_ok(ctld_opts_t *o)
{
    if (!o->tls_cert != !o->tls_key) {
        fprintf(stderr, "droverd: --tls-cert and --tls-key go together\n");
        return 0;
    }
    if (o->tls_cert)
        o->tls = true;
    if (o->tls_san && o->tls_cert)
        fprintf(stderr, "droverd: note: --tls-san names a self-signed certificate's names; "
                        "--tls-cert's certificate has its own\n");
    if (o->tls && o->plain_http) {
        fprintf(stderr, "droverd: --plain-http and --tls: choose one\n");
        return 0;
    }
    if (o->tls || o->plain_http)
        return 1;
    const char *colon = strrchr(o->listen, ':');
    char host[64];
    snprintf(host, sizeof host, "%.*s", colon ? (int)(colon - o->listen) : 0, o->listen);
    struct in_addr a;
    if (inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127)
        return 1;
    fprintf(stderr,
            "droverd: --listen %s: plain HTTP beyond this host would send tokens and jobs in "
            "clear text; add --tls (a self-signed certificate is made on the first start) or "
            "--tls-cert/--tls-key, or --plain-http to accept that\n",
            o->listen);
    return 0;
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    dr_ctld_t *c = arg;
    ctld_log("signal %d: stopping (jobs keep running on the agents)", (int)sig);
    c->stopping = true;
    event_base_loopexit(c->base, NULL);
}

static int parse_dur(const char *opt, const char *s, dr_time_t *out)
{
    dr_err_t err = {0};
    if (dr_duration_parse_err(s, out, &err) != DR_OK) {
        fprintf(stderr, "droverd: %s: %s\n", opt, err.msg);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    ctld_opts_t o = {.listen = "127.0.0.1:6817",
                     .key_file = "/etc/drover/cluster.key",
                     .min_pass_interval = 5 * 1000 * 1000,
                     /* detected within 6 s (a tick after 5 s of silence, 5 missed
                      * heartbeats); requeued after the lease, long enough for
                      * the controller to restart without its agents stopping
                      * their jobs */
                     .agent_timeout = 5 * DR_NSEC_PER_SEC,
                     .lease = 30 * DR_NSEC_PER_SEC,
                     .heartbeat_ms = 1000,
                     .sync_full = true,
                     .drain = 2 * DR_NSEC_PER_SEC,
                     .stats_interval = 10 * DR_NSEC_PER_SEC};
    bool daemonize = false, lease_given = false, check_store = false;
    const char *enroll_node = NULL, *enroll_out = NULL;
    uint32_t enroll_gen = 0;
    char sock_default[4096], agent_default[300];
    dr_time_t hb = 1 * DR_NSEC_PER_SEC;
    enum {
        O_STATE = 256,
        O_LISTEN,
        O_SOCKET,
        O_AGENT,
        O_KEY,
        O_POLICY,
        O_OPER,
        O_MINPASS,
        O_ATIMEOUT,
        O_LEASE,
        O_HB,
        O_NOFSYNC,
        O_RATE,
        O_BURST,
        O_HAPROXY,
        O_DRAIN,
        O_METRICS_PUBLIC,
        O_STATS_INTERVAL,
        O_TLS,
        O_TLS_CERT,
        O_TLS_KEY,
        O_TLS_SAN,
        O_PLAIN_HTTP,
        O_DAEMON,
        O_INIT,
        O_CHECK,
        O_GENKEY,
        O_ENROLL,
        O_OUT,
        O_GEN,
        O_CRASH_AT,
        O_HELP,
        O_VERSION
    };
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"state", required_argument, NULL, O_STATE},
        {"listen", required_argument, NULL, O_LISTEN},
        {"socket", required_argument, NULL, O_SOCKET},
        {"agent-listen", required_argument, NULL, O_AGENT},
        {"key", required_argument, NULL, O_KEY},
        {"policy", required_argument, NULL, O_POLICY},
        {"operator", required_argument, NULL, O_OPER},
        {"min-pass-interval", required_argument, NULL, O_MINPASS},
        {"agent-timeout", required_argument, NULL, O_ATIMEOUT},
        {"lease", required_argument, NULL, O_LEASE},
        {"heartbeat", required_argument, NULL, O_HB},
        {"no-fsync", no_argument, NULL, O_NOFSYNC},
        {"submit-rate", required_argument, NULL, O_RATE},
        {"submit-burst", required_argument, NULL, O_BURST},
        {"haproxy-socket", required_argument, NULL, O_HAPROXY},
        {"service-drain", required_argument, NULL, O_DRAIN},
        {"metrics-public", no_argument, NULL, O_METRICS_PUBLIC},
        {"stats-interval", required_argument, NULL, O_STATS_INTERVAL},
        {"tls", no_argument, NULL, O_TLS},
        {"tls-cert", required_argument, NULL, O_TLS_CERT},
        {"tls-key", required_argument, NULL, O_TLS_KEY},
        {"tls-san", required_argument, NULL, O_TLS_SAN},
        {"plain-http", no_argument, NULL, O_PLAIN_HTTP},
        {"daemon", no_argument, NULL, O_DAEMON},
        {"init", no_argument, NULL, O_INIT},
        {"check-store", no_argument, NULL, O_CHECK},
        {"gen-key", required_argument, NULL, O_GENKEY},
        {"enroll", required_argument, NULL, O_ENROLL},
        {"out", required_argument, NULL, O_OUT},
        {"generation", required_argument, NULL, O_GEN},
        {"test-crash-at", required_argument, NULL, O_CRASH_AT},
        {"help", no_argument, NULL, O_HELP},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'c': o.config = optarg; break;
        case O_STATE: o.state_dir = optarg; break;
        case O_LISTEN: o.listen = optarg; break;
        case O_SOCKET: o.socket = optarg; break;
        case O_AGENT: o.agent_listen = optarg; break;
        case O_KEY: o.key_file = optarg; break;
        case O_POLICY: o.policy = optarg; break;
        case O_OPER: o.operators = optarg; break;
        case O_MINPASS:
            if (!parse_dur("--min-pass-interval", optarg, &o.min_pass_interval))
                return 2;
            break;
        case O_ATIMEOUT:
            if (!parse_dur("--agent-timeout", optarg, &o.agent_timeout))
                return 2;
            break;
        case O_LEASE:
            if (!parse_dur("--lease", optarg, &o.lease))
                return 2;
            lease_given = true;
            break;
        case O_HB:
            if (!parse_dur("--heartbeat", optarg, &hb))
                return 2;
            if (hb < 10 * 1000 * 1000) {
                fprintf(stderr, "droverd: --heartbeat: at least 0.01s\n");
                return 2;
            }
            break;
        case O_NOFSYNC: o.sync_full = false; break;
        case O_RATE:
        case O_BURST: {
            char *end;
            double v = strtod(optarg, &end);
            if (end == optarg || *end || !(v >= 0) || v > 1e6) {
                fprintf(stderr, "droverd: %s '%s': a number of submits from 0 to 1e6\n",
                        ch == O_RATE ? "--submit-rate" : "--submit-burst", optarg);
                return 2;
            }
            *(ch == O_RATE ? &o.submit_rate : &o.submit_burst) = v;
            break;
        }
        case O_HAPROXY: o.haproxy = optarg; break;
        case O_DRAIN:
            if (!parse_dur("--service-drain", optarg, &o.drain))
                return 2;
            break;
        case O_METRICS_PUBLIC: o.metrics_public = true; break;
        case O_STATS_INTERVAL:
            if (!parse_dur("--stats-interval", optarg, &o.stats_interval))
                return 2;
            if (o.stats_interval < DR_NSEC_PER_SEC) {
                fprintf(stderr, "droverd: --stats-interval: at least 1s\n");
                return 2;
            }
            break;
        case O_TLS: o.tls = true; break;
        case O_TLS_CERT: o.tls_cert = optarg; break;
        case O_TLS_KEY: o.tls_key = optarg; break;
        case O_TLS_SAN: o.tls_san = optarg; break;
        case O_PLAIN_HTTP: o.plain_http = true; break;
        case O_DAEMON: daemonize = true; break;
        case O_INIT: o.init = true; break;
        case O_CHECK: check_store = true; break;
        case O_GENKEY: return gen_key(optarg);
        case O_ENROLL: enroll_node = optarg; break;
        case O_OUT: enroll_out = optarg; break;
        case O_GEN: {
            char *end;
            unsigned long g = strtoul(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || g > UINT32_MAX) {
                fprintf(stderr, "droverd: --generation: '%s' is not a number\n", optarg);
                return 2;
            }
            enroll_gen = (uint32_t)g;
            break;
        }
        case O_CRASH_AT: o.crash_at = optarg; break;
        case O_VERSION: printf("droverd %s\n", CTLD_VERSION); return 0;
        case 'h':
        case O_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (check_store && optind == argc && o.state_dir)
        return ctld_store_check_only(o.state_dir);
    if (enroll_node && optind == argc)
        return enroll(enroll_node, enroll_gen, o.key_file, enroll_out);
    if (optind != argc || !o.config || !o.state_dir || !o.listen) {
        fprintf(stderr, "droverd: -c cluster.conf and --state DIR are required\n");
        usage(stderr);
        return 2;
    }
    o.heartbeat_ms = (uint32_t)(hb / 1000000);
    if (!lease_given && o.lease < o.agent_timeout)
        o.lease = o.agent_timeout; /* a long --agent-timeout alone stretches the lease */
    if (o.lease < o.agent_timeout || o.lease > (dr_time_t)UINT32_MAX * 1000000) {
        fprintf(stderr,
                "droverd: --lease must be at least --agent-timeout (an agent would stop its "
                "jobs before the controller misses it) and under 49 days\n");
        return 2;
    }
    if (o.agent_timeout <= hb) {
        fprintf(stderr, "droverd: --agent-timeout must be longer than --heartbeat\n");
        return 2;
    }
    if (o.submit_rate > 0 && o.submit_burst <= 0)
        o.submit_burst = o.submit_rate * 2 < 1 ? 1 : o.submit_rate * 2;
    /* every agent and every API client is a descriptor: take what the hard
     * limit allows (1,024 by default would refuse the 1,021st connection) */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &nofile);
    }
    if (!o.socket) {
        snprintf(sock_default, sizeof sock_default, "%s/droverd.sock", o.state_dir);
        o.socket = sock_default;
    }
    if (!o.agent_listen) {
        /* the --listen host, the next port */
        const char *colon = strrchr(o.listen, ':');
        if (!colon) {
            fprintf(stderr, "droverd: --listen %s: not HOST:PORT\n", o.listen);
            return 2;
        }
        snprintf(agent_default, sizeof agent_default, "%.*s:%d", (int)(colon - o.listen), o.listen,
                 atoi(colon + 1) + 1);
        o.agent_listen = agent_default;
    }
    if (!tls_opts_ok(&o))
        return 2;
    if (!key_file_ok(o.key_file))
        return 1;
    signal(SIGPIPE, SIG_IGN);
    if (daemonize && daemon(1, 1) != 0) {
        perror("droverd: daemon");
        return 1;
    }
    dr_ctld_t c;
    dr_err_t err = {0};
    if (dr_ctld_init(&c, &o, &err) != DR_OK) {
        fprintf(stderr, "droverd: %s\n", err.msg);
        ctld_store_advise(&c, stderr); /* a store refused: how to recover */
        dr_ctld_free(&c);
        return 1;
    }
    c.sig_int = evsignal_new(c.base, SIGINT, on_signal, &c);
    c.sig_term = evsignal_new(c.base, SIGTERM, on_signal, &c);
    evsignal_add(c.sig_int, NULL);
    evsignal_add(c.sig_term, NULL);
    event_base_dispatch(c.base);
    ctld_log("stopped after %llu turns, %llu passes (%.3f s), %llu commits (%.3f s)",
             (unsigned long long)c.st.turns, (unsigned long long)c.st.passes, c.st.pass_s_total,
             (unsigned long long)c.st.commits, c.st.commit_s_total);
    dr_ctld_free(&c);
    return 0;
}
