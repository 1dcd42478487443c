/* srun.c - `srun` inside a drover job: start a job step, one task per rank.
 *
 * The agent puts bin/srun (the drover binary under that name) first on a
 * job's PATH and names its socket in DROVER_STEP_SOCKET.  srun reads
 * Slurm's step options, sends one STEP_REQ with the job's id, generation
 * and step key (from its environment) to the agent, and waits: the
 * controller lays the step out over the job's allocation, the agents start
 * the tasks, and the answer that the step is done carries the highest exit
 * status of its tasks (128 + N for a task killed by signal N), which srun
 * exits with.  SIGINT, SIGTERM or SIGHUP to srun stops the step's tasks.
 * The tasks write to srun's stdout and stderr when those are files (by
 * path: the tasks on other nodes reach them through the shared file
 * system the job's output is on), else to the job's output files; srun
 * does not stream output (docs/slurm.md, "srun"). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "drover/proto.h"
#include "drover/util.h"

extern char **environ;

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    unsigned char b = (unsigned char)sig;
    int e = errno;
    ssize_t w = write(sig_pipe[1], &b, 1);
    (void)w;
    errno = e;
}

static int srun_fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "srun: error: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return 1;
}

static void srun_usage(FILE *f)
{
    fprintf(f, "usage: srun [-n N] [-N N] [--ntasks-per-node=N] [--gpus-per-task=N] [-c N]\n"
               "            [-K[0|1]] [-v] CMD [ARGS...]\n"
               "  inside a drover job: run CMD as one task per rank of a job step\n"
               "  (docs/slurm.md, \"srun\")\n");
}

/* "N" (or Slurm's "N-N") as a count >= 1. */
static int count_arg(const char *opt, const char *v, uint32_t *out)
{
    uint64_t x, y;
    const char *dash = strchr(v, '-');
    char head[32];
    if (dash && (size_t)(dash - v) < sizeof head) {
        snprintf(head, sizeof head, "%.*s", (int)(dash - v), v);
        if (dr_parse_u64(head, &x) != 0 || dr_parse_u64(dash + 1, &y) != 0 || x != y) {
            fprintf(stderr, "srun: error: %s %s: a range is not supported, give one number\n", opt,
                    v);
            return -1;
        }
    } else if (dr_parse_u64(v, &x) != 0) {
        x = 0;
    }
    if (x < 1 || x > 1000000) {
        fprintf(stderr, "srun: error: %s %s: want a number from 1\n", opt, v);
        return -1;
    }
    *out = (uint32_t)x;
    return 0;
}

/* Short option -xV / -x V, long --name=V / --name V. */
static int opt_val(int argc, char **argv, int *i, const char *s, const char *l, const char **v)
{
    const char *a = argv[*i];
    size_t ll = l ? strlen(l) : 0;
    if (s && a[0] == '-' && a[1] == s[0] && a[1] && a[2]) {
        *v = a + 2;
        return 1;
    }
    if ((s && a[0] == '-' && a[1] == s[0] && !a[2]) || (l && strcmp(a, l) == 0)) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "srun: error: %s needs a value\n", a);
            return -1;
        }
        *v = argv[++*i];
        return 1;
    }
    if (l && strncmp(a, l, ll) == 0 && a[ll] == '=') {
        *v = a + ll + 1;
        return 1;
    }
    return 0;
}

/* The file a standard stream is, when it is one (absolute path), else "". */
static void stream_path(int fd, char *out, size_t len)
{
    struct stat st;
    char link[64];
    out[0] = '\0';
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, len - 1);
    if (n <= 0 || out[0] != '/') {
        out[0] = '\0';
        return;
    }
    out[n] = '\0';
    if (strstr(out, " (deleted)"))
        out[0] = '\0';
}

/* Options that change nothing drover does (binding, MPI plumbing, output
 * buffering) are taken quietly; ones that would change the result are
 * refused or noted. */
static bool quiet_opt(const char *a)
{
    static const char *const ok[] = {"--mpi",        "--cpu-bind",    "--cpu_bind", "--gpu-bind",
                                     "--unbuffered", "--overlap",     "--exact",    "--exclusive",
                                     "--export=ALL", "--wait",        "--quiet",    "--mem-bind",
                                     "--hint",       "--distribution"};
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        size_t n = strlen(ok[k]);
        if (strncmp(a, ok[k], n) == 0 && (a[n] == '\0' || a[n] == '='))
            return true;
    }
    return strcmp(a, "-u") == 0 || strcmp(a, "-Q") == 0 || strncmp(a, "-m", 2) == 0;
}

/* A variable the agent set for the node srun runs on. */
static bool node_local(const char *e, const char *agent_gloo)
{
    static const char *const keys[] = {
        "DROVER_NODENAME=", "DROVER_NODE_ADDR=",   "DROVER_CACHE_DIR=",
        "DROVER_HOSTFILE=", "DROVER_STEP_SOCKET=", "DROVER_AGENT_GLOO_IFNAME="};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (strncmp(e, keys[k], strlen(keys[k])) == 0)
            return true;
    return agent_gloo && strncmp(e, "GLOO_SOCKET_IFNAME=", 19) == 0 &&
           strcmp(e + 19, agent_gloo) == 0;
}

static int read_full(int fd, uint8_t **buf, size_t *len, size_t *cap)
{
    if (*cap - *len < 65536) {
        size_t nc = *cap ? *cap * 2 : 65536;
        if (nc > DR_PROTO_LOCAL_HDR + DR_PROTO_MAX_BODY + 65536)
            return -1;
        uint8_t *b = realloc(*buf, nc);
        if (!b)
            return -1;
        *buf = b;
        *cap = nc;
    }
    ssize_t n = read(fd, *buf + *len, *cap - *len);
    if (n < 0 && errno == EINTR)
        return 1;
    if (n <= 0)
        return -1;
    *len += (size_t)n;
    return 1;
}

static bool write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* The job's --signal (DROVER_SIGNAL) is not for srun: the step's tasks get
 * it from their agents themselves, and srun, in the batch shell's process
 * group, would otherwise die of it (or cancel the step) at the warning
 * the tasks were meant to act on. */
static void ignore_job_signal(void)
{
    const char *s = getenv("DROVER_SIGNAL");
    uint64_t sig = 0;
    if (s && dr_parse_u64(s, &sig) == 0 && sig > 0 && sig < NSIG && sig != SIGKILL &&
        sig != SIGSTOP)
        signal((int)sig, SIG_IGN);
}

int cli_srun(int argc, char **argv)
{
    ignore_job_signal();
    dr_msg_step_req_t m = {.kill_on_bad_exit = true};
    bool verbose = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *a = argv[i], *v = NULL;
        int r;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            srun_usage(stdout);
            return 0;
        }
        if ((r = opt_val(argc, argv, &i, "n", "--ntasks", &v)) != 0) {
            if (r < 0 || count_arg("--ntasks", v, &m.ntasks) != 0)
                return 1;
        } else if ((r = opt_val(argc, argv, &i, "N", "--nodes", &v)) != 0) {
            if (r < 0 || count_arg("--nodes", v, &m.nodes) != 0)
                return 1;
        } else if ((r = opt_val(argc, argv, &i, NULL, "--ntasks-per-node", &v)) != 0) {
            if (r < 0 || count_arg("--ntasks-per-node", v, &m.ntasks_per_node) != 0)
                return 1;
        } else if ((r = opt_val(argc, argv, &i, NULL, "--gpus-per-task", &v)) != 0) {
            if (r < 0 || count_arg("--gpus-per-task", v, &m.gpus_per_task) != 0)
                return 1;
        } else if ((r = opt_val(argc, argv, &i, "c", "--cpus-per-task", &v)) != 0) {
            if (r < 0 || count_arg("--cpus-per-task", v, &m.cpus_per_task) != 0)
                return 1;
        } else if (strcmp(a, "-K") == 0 || strcmp(a, "-K1") == 0 ||
                   strcmp(a, "--kill-on-bad-exit") == 0 || strcmp(a, "--kill-on-bad-exit=1") == 0) {
            m.kill_on_bad_exit = true;
        } else if (strcmp(a, "-K0") == 0 || strcmp(a, "--kill-on-bad-exit=0") == 0) {
            m.kill_on_bad_exit = false;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            verbose = true;
        } else if ((r = opt_val(argc, argv, &i, "J", "--job-name", &v)) != 0) {
            if (r < 0)
                return 1; /* a step's name: shown nowhere in drover */
        } else if (strcmp(a, "-l") == 0 || strcmp(a, "--label") == 0) {
            fprintf(stderr, "srun: note: %s is not supported: task output is not prefixed\n", a);
        } else if (quiet_opt(a)) {
            continue;
        } else if (strncmp(a, "--jobid", 7) == 0 || strcmp(a, "--pty") == 0 ||
                   strncmp(a, "--export", 8) == 0) {
            return srun_fail("%s is not supported by drover's srun", a);
        } else {
            fprintf(stderr, "srun: error: unrecognized option '%s'\n", a);
            srun_usage(stderr);
            return 1;
        }
    }
    if (i >= argc) {
        srun_usage(stderr);
        return 1;
    }
    const char *sock = getenv("DROVER_STEP_SOCKET"), *job = getenv("DROVER_JOB_ID");
    const char *gen = getenv("DROVER_JOB_GENERATION"), *key = getenv("DROVER_STEP_KEY");
    uint64_t jid = 0, g = 0;
    if (!sock || !*sock || !job || !gen || !key)
        return srun_fail("%s", "not inside a drover job (DROVER_STEP_SOCKET, DROVER_JOB_ID, "
                               "DROVER_STEP_KEY are not all set)");
    if (dr_parse_u64(job, &jid) != 0 || dr_parse_u64(gen, &g) != 0 || g > UINT32_MAX)
        return srun_fail("DROVER_JOB_ID / DROVER_JOB_GENERATION: '%s' is not a job", job);
    m.job = jid;
    m.gen = (uint32_t)g;
    m.key = (char *)key;
    m.argv = argv + i;
    m.argc = (uint32_t)(argc - i);
    /* the tasks' environment is srun's, as Slurm's --export=ALL, less what
     * this node's agent set for this node (each node's agent sets its own) */
    dr_strvec_t env = {0};
    const char *agent_gloo = getenv("DROVER_AGENT_GLOO_IFNAME");
    for (char **e = environ; e && *e && env.n < DR_MSG_MAX_ARGS; e++)
        if (node_local(*e, agent_gloo))
            continue;
        else if (strlen(*e) <= DR_MSG_MAX_STR)
            dr_strvec_push(&env, *e);
        else
            fprintf(stderr, "srun: note: %.40s...: over %d bytes, not passed to the tasks\n", *e,
                    DR_MSG_MAX_STR);
    m.env = env.v;
    m.nenv = (uint32_t)env.n;
    char cwd[PATH_MAX], out[PATH_MAX], err_path[PATH_MAX];
    m.cwd = getcwd(cwd, sizeof cwd) ? cwd : "";
    stream_path(1, out, sizeof out);
    stream_path(2, err_path, sizeof err_path);
    m.out_path = out;
    m.err_path = err_path;

    uint8_t *frame = NULL;
    size_t flen = 0;
    dr_err_t err = {0};
    int rc = dr_proto_local_encode(DR_MSG_STEP_REQ, &m, &frame, &flen, &err);
    dr_strvec_free(&env);
    if (rc != DR_OK)
        return srun_fail("%s", err.msg);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", sock);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
        free(frame);
        if (fd >= 0)
            close(fd);
        return srun_fail("cannot reach the node's agent at %s", sock);
    }
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        free(frame);
        close(fd);
        return srun_fail("%s", "pipe failed");
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    ignore_job_signal(); /* even when it is one of those */
    bool sent = write_all(fd, frame, flen);
    free(frame);
    if (!sent) {
        close(fd);
        return srun_fail("%s", "the agent closed the connection");
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    int status = -1;
    while (status < 0) {
        struct pollfd p[2] = {{fd, POLLIN, 0}, {sig_pipe[0], POLLIN, 0}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents & POLLIN) {
            unsigned char s;
            while (read(sig_pipe[0], &s, 1) == 1) {
                fprintf(stderr, "srun: signal %d: stopping the step's tasks\n", s);
                dr_msg_step_cancel_t c = {.job = m.job, .gen = m.gen, .signal = s};
                uint8_t *cf;
                size_t cl;
                if (dr_proto_local_encode(DR_MSG_STEP_CANCEL, &c, &cf, &cl, &err) == DR_OK) {
                    write_all(fd, cf, cl);
                    free(cf);
                }
            }
        }
        if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        if (read_full(fd, &buf, &len, &cap) < 0) {
            fprintf(stderr, "srun: error: lost the node's agent before the step ended\n");
            status = 1;
            break;
        }
        for (;;) {
            size_t used = 0;
            dr_frame_t f;
            dr_proto_rc_t r = dr_proto_local_decode(buf, len, &used, &f, &err);
            if (r == DR_PROTO_NEED)
                break;
            if (r != DR_PROTO_FRAME) {
                fprintf(stderr, "srun: error: the agent: %s\n", err.msg);
                status = 1;
                break;
            }
            dr_msg_step_state_t st;
            if (f.type == DR_MSG_STEP_STATE &&
                dr_msg_step_state_parse(&st, f.body, f.len, &err) == DR_OK) {
                if (st.state == DR_STEP_ACCEPTED && verbose)
                    fprintf(stderr, "srun: step %llu.%u: %u task%s on %u node%s\n",
                            (unsigned long long)st.job, st.step, st.ntasks,
                            st.ntasks == 1 ? "" : "s", st.nnodes, st.nnodes == 1 ? "" : "s");
                if (st.state == DR_STEP_REFUSED) {
                    fprintf(stderr, "srun: error: %s\n", st.detail);
                    status = 1;
                } else if (st.state == DR_STEP_DONE) {
                    if (st.status)
                        fprintf(stderr, "srun: error: step %llu.%u: exit %d%s%s\n",
                                (unsigned long long)st.job, st.step, st.status,
                                st.detail[0] ? ": " : "", st.detail);
                    status = st.status > 255 ? 255 : st.status;
                }
                dr_msg_step_state_free(&st);
            }
            memmove(buf, buf + used, len - used);
            len -= used;
            if (status >= 0)
                break;
        }
    }
    free(buf);
    close(fd);
    return status < 0 ? 1 : status;
}
