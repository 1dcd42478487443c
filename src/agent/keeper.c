/* keeper.c - one small process per running rank, between the agent and
 * the rank (Slurm's slurmstepd plays this part), so that a rank survives
 * its agent: `kill -9` of the agent, a crash, an upgrade.
 *
 * The agent forks the keeper (a copy of itself: nothing to exec, the
 * launch plan is already in its memory), and the keeper starts the rank
 * (launch.c's spawn) and is its parent: it reaps it, kills the rest of its
 * process group when the main process ends, and passes the agent's
 * signals on (so no signal can reach a reaped pid's successor).  It
 * reports the end over a socketpair and lives until the agent tells it the
 * end was reported (RELEASE), as the agent holds an ended rank until the
 * controller acknowledges it.
 *
 * When the agent goes away (EOF), the keeper listens on a socket in the
 * agent's state directory (keep/JOB.GEN.RANK.sock); the next agent
 * connects at its start and takes the rank over (ADOPT: pid, times, end,
 * the LAUNCH it was started from), and reports it in its REGISTER as
 * still running, so the controller does not run it again.
 *
 * The lease holds without the agent: the agent keeps it in a shared page
 * (the state directory's lease file, mapped by the agent and its keepers)
 * and each keeper enforces it.  Orphaned, a keeper freezes the lease's end
 * as it was (a new agent that does not take it over cannot extend it) and
 * stops the rank by then: SIGTERM its grace before (at most half the
 * lease), SIGKILL at the end - so a rank whose agent does not come back in
 * time is gone before the controller requeues it, and never runs in two
 * places.  Connected, it sends SIGKILL at the end of the lease in case the
 * agent cannot (stopped, hung); the agent's own lease.c does the rest.
 * Without a lease or a state directory nobody could take the rank over:
 * an orphaned keeper kills it at once. */
#include "agent/agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#define LEASE_MAGIC 0x64726c6561736531ULL /* "drlease1" */
#define LEASE_FILE  "lease"
#define KEEP_DIR    "keep"
/* An orphaned keeper whose rank ended waits this long past the lease for
 * an agent to collect the end, then gives up (the controller has long
 * requeued the run by then). */
#define ORPHAN_WAIT_NS (60 * 1000000000LL)
/* Idle keepers the agent keeps for the next ranks. */
#define KEEP_IDLE_MAX 16
/* SIGKILL rounds (10 ms apart) for what a rank left behind (sweep.c): a
 * bound, should a process not die (stuck in the kernel). */
#define KEEP_SWEEP_ROUNDS 300
/* How long an agent waits for a keeper's ADOPT, and a keeper to send it. */
#define ADOPT_TIMEOUT_S 5

typedef struct dr_agent_lease_page {
    uint64_t magic;
    int64_t end_boot_ns; /* the end of the lease, CLOCK_BOOTTIME; 0 = none */
    int64_t lease_ns;
} dr_agent_lease_page_t;

/* ---- the lease page ---- */

static dr_agent_lease_page_t *page_map(const char *dir, dr_err_t *err)
{
    size_t sz = (size_t)sysconf(_SC_PAGESIZE);
    void *m;
    if (!dir) {
        m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    } else {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, LEASE_FILE);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 ||
            ((size_t)st.st_size < sz && ftruncate(fd, (off_t)sz) != 0)) {
            dr_err_set(err, DR_EIO, "lease file %s: %s", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            return NULL;
        }
        m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
    }
    if (m == MAP_FAILED) {
        dr_err_set(err, DR_EIO, "lease page: mmap: %s", strerror(errno));
        return NULL;
    }
    dr_agent_lease_page_t *p = m;
    if (p->magic != LEASE_MAGIC) {
        memset(p, 0, sizeof *p);
        p->magic = LEASE_MAGIC;
    }
    return p;
}

int dr_agent_lease_page_init(dr_agent_t *a, dr_err_t *err)
{
    dr_agent_lease_page_t *p = page_map(a->state_dir, err);
    if (!p)
        return DR_EIO;
    dr_agent_lease_page_free(a);
    a->lease_page = p;
    return 0;
}

void dr_agent_lease_page_free(dr_agent_t *a)
{
    if (a->lease_page)
        munmap(a->lease_page, (size_t)sysconf(_SC_PAGESIZE));
    a->lease_page = NULL;
}

void dr_agent_lease_page_set(dr_agent_t *a, int64_t end_boot_ns, int64_t lease_ns)
{
    if (!a->lease_page)
        return;
    __atomic_store_n(&a->lease_page->lease_ns, lease_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&a->lease_page->end_boot_ns, end_boot_ns, __ATOMIC_RELEASE);
}

static int64_t page_end(const dr_agent_t *a)
{
    return a->lease_page ? __atomic_load_n(&a->lease_page->end_boot_ns, __ATOMIC_ACQUIRE) : 0;
}

static int64_t page_lease(const dr_agent_t *a)
{
    return a->lease_page ? __atomic_load_n(&a->lease_page->lease_ns, __ATOMIC_RELAXED) : 0;
}

/* ---- shared by both ends ---- */

static int send_msg(int fd, const dr_keep_msg_t *m)
{
    uint8_t *b;
    size_t n;
    if (dr_keep_encode(m, &b, &n) != 0)
        return -1;
    int rc = dr_agent_write_all(fd, b, n);
    free(b);
    return rc;
}

/* Read one whole frame from a blocking socket into *buf (grown). */
static int read_msg(int fd, uint8_t **buf, size_t *cap, dr_keep_msg_t *m, dr_err_t *err)
{
    size_t have = 0;
    for (;;) {
        size_t used;
        int rc = dr_keep_decode(*buf, have, &used, m, err);
        if (rc != 0)
            return rc > 0 ? 0 : -1;
        size_t want = have < DR_KEEP_HDR
                          ? DR_KEEP_HDR
                          : DR_KEEP_HDR + ((size_t)(*buf)[0] << 24 | (size_t)(*buf)[1] << 16 |
                                           (size_t)(*buf)[2] << 8 | (*buf)[3]);
        if (want > *cap) {
            uint8_t *nb = realloc(*buf, want);
            if (!nb) {
                dr_err_set(err, DR_ENOMEM, "keeper frame: out of memory");
                return -1;
            }
            *buf = nb;
            *cap = want;
        }
        ssize_t r = read(fd, *buf + have, want - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            dr_err_set(err, DR_EIO, "keeper: %s", r == 0 ? "closed" : strerror(errno));
            return -1;
        }
        have += (size_t)r;
    }
}

/* ---- the keeper process ---- */

typedef struct keeper {
    dr_agent_t *a;
    dr_agent_job_t jj; /* what of the rank the keeper needs: ids, uid, grace, cgroup */
    dr_agent_plan_t pl;
    pid_t pid;
    int64_t start_ns, start_boot_ns;
    int sock, lst, sfd;
    bool orphan, ended, termed, killed, lease_stop, released;
    int32_t exit_code, signal;
    int64_t end_ns;
    int64_t frozen_end, frozen_lease, orphan_at;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    uint8_t in[64];
    size_t nin;
} keeper_t;

static void klog(const keeper_t *k, const char *fmt, ...) DR_PRINTF(2, 3);
static void klog(const keeper_t *k, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    dr_agent_log(k->a, "keeper %ld of job %llu.%u rank %u: %s", (long)getpid(),
                 (unsigned long long)k->jj.job, k->jj.gen, k->jj.rank, line);
}

/* What a rank that left its process group (setsid, setpgid) started is
 * still the keeper's descendant (the keeper is their subreaper): a stop
 * signals those too (sweep.c), not the group alone. */
static void kill_rank(keeper_t *k, int sig, bool group)
{
    if (k->ended)
        return;
    (void)(group ? killpg(k->pid, sig) : kill(k->pid, sig));
    if (group)
        (void)dr_agent_sweep(getpid(), sig, k->pid, k->pid); /* those killpg missed */
    if (sig == SIGKILL)
        dr_agent_cg_kill(k->a, &k->jj);
}

/* The rank's main process has ended: nothing it started may outlive it.
 * Every descendant is killed (and reaped) before the end is reported, so
 * the controller's "ended" means gone. */
static void sweep_rest(keeper_t *k)
{
    size_t left = dr_agent_sweep_kill(getpid(), 0, KEEP_SWEEP_ROUNDS);
    if (left)
        klog(k, "%zu of its processes still alive after %d SIGKILL rounds", left,
             KEEP_SWEEP_ROUNDS);
}

static void reap_others(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

static _Noreturn void keeper_exit(keeper_t *k)
{
    if (k->pid > 0 && !k->ended)
        kill_rank(k, SIGKILL, true);
    if (k->pid > 0)
        (void)dr_agent_sweep_kill(getpid(), 0, KEEP_SWEEP_ROUNDS);
    reap_others();
    if (k->lst >= 0)
        unlink(k->path);
    _exit(0);
}

static void keeper_orphan(keeper_t *k);

static void keeper_send(keeper_t *k, const dr_keep_msg_t *m)
{
    if (k->sock >= 0 && send_msg(k->sock, m) != 0)
        keeper_orphan(k);
}

static void keeper_reap(keeper_t *k)
{
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        if (si.si_pid == 0)
            return;
        pid_t p = si.si_pid;
        if (p == k->pid && !k->ended) {
            /* the zombie still holds the group id: the rest dies now */
            (void)killpg(p, SIGKILL);
            dr_agent_cg_kill(k->a, &k->jj);
        }
        int st = 0;
        while (waitpid(p, &st, 0) < 0 && errno == EINTR)
            ;
        if (p != k->pid || k->ended)
            continue;
        sweep_rest(k);
        k->ended = true;
        k->end_ns = dr_agent_now_ns();
        k->exit_code = WIFSIGNALED(st) ? -1 : WEXITSTATUS(st);
        k->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        dr_keep_msg_t m = {.type = DR_KEEP_ENDED,
                           .exit_code = k->exit_code,
                           .signal = k->signal,
                           .end_ns = k->end_ns};
        keeper_send(k, &m);
        if (k->orphan) /* the agents' "ended" line, for whoever reads the logs as a timeline */
            klog(k, "ended: %s %d, while no agent held it [boot %.3f]",
                 k->signal ? "signal" : "exit", k->signal ? k->signal : k->exit_code,
                 (double)dr_agent_boot_ns() / 1e9);
    }
}

static void keeper_listen(keeper_t *k)
{
    const char *dir = k->a->state_dir;
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s/%s", dir, KEEP_DIR);
    if (mkdir(d, 0700) != 0 && errno != EEXIST) {
        klog(k, "%s: %s: no agent can take the rank over", d, strerror(errno));
        return;
    }
    int n = snprintf(k->path, sizeof k->path, "%s/%llu.%u.%u.sock", d,
                     (unsigned long long)k->jj.job, k->jj.gen, k->jj.rank);
    if (n < 0 || (size_t)n >= sizeof k->path) {
        klog(k, "%s: path too long for a socket: no agent can take the rank over", d);
        k->path[0] = '\0';
        return;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, k->path, (size_t)n + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    (void)unlink(k->path);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 4) != 0) {
        klog(k, "%s: %s: no agent can take the rank over", k->path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    k->lst = fd;
}

static void keeper_orphan(keeper_t *k)
{
    if (k->sock >= 0)
        close(k->sock);
    k->sock = -1;
    k->nin = 0;
    k->orphan = true;
    k->orphan_at = dr_agent_boot_ns();
    k->frozen_end = page_end(k->a);
    k->frozen_lease = page_lease(k->a);
    if (!k->ended) {
        if (!k->frozen_end || !k->a->state_dir) {
            klog(k, "the agent went away and %s: SIGKILL",
                 !k->frozen_end ? "there is no lease to wait out"
                                : "no other agent can take the rank over (no --state)");
            kill_rank(k, SIGKILL, true);
            k->killed = k->lease_stop = true;
        } else {
            klog(k,
                 "the agent went away: the rank runs on until its lease ends in %.1f s, unless "
                 "a new agent takes it over",
                 (double)(k->frozen_end - k->orphan_at) / 1e9);
        }
    }
    if (k->a->state_dir && k->lst < 0)
        keeper_listen(k);
}

static void keeper_adopted(keeper_t *k)
{
    int c = accept4(k->lst, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
        return;
    struct ucred cr;
    socklen_t cl = sizeof cr;
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 ||
        (cr.uid != 0 && cr.uid != geteuid())) {
        close(c);
        return;
    }
    struct timeval tv = {ADOPT_TIMEOUT_S, 0};
    (void)setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const char *cg = k->jj.cgroup ? k->jj.cgroup : "";
    dr_keep_msg_t m = {.type = DR_KEEP_ADOPT,
                       .pid = k->pid,
                       .start_ns = k->start_ns,
                       .start_boot_ns = k->start_boot_ns,
                       .ended = k->ended,
                       .exit_code = k->exit_code,
                       .signal = k->signal,
                       .end_ns = k->end_ns,
                       .why = k->lease_stop ? DR_END_LEASE : DR_END_EXIT,
                       .uid = (uint32_t)k->jj.uid,
                       .cgroup = cg,
                       .cgroup_len = strlen(cg),
                       .text = k->pl.json,
                       .text_len = k->pl.json_len};
    if (send_msg(c, &m) != 0) {
        close(c);
        return;
    }
    close(k->lst);
    unlink(k->path);
    k->lst = -1;
    k->sock = c;
    k->orphan = false;
    klog(k, "taken over by agent pid %ld", (long)cr.pid);
}

static void keeper_read(keeper_t *k)
{
    /* never past the end of this frame: after a RELEASE the next bytes
     * are the next SPAWN, read by the idle loop */
    size_t want = DR_KEEP_HDR;
    if (k->nin >= DR_KEEP_HDR) {
        size_t n =
            (size_t)k->in[0] << 24 | (size_t)k->in[1] << 16 | (size_t)k->in[2] << 8 | k->in[3];
        want = n <= sizeof k->in - DR_KEEP_HDR ? DR_KEEP_HDR + n : sizeof k->in;
    }
    ssize_t r = read(k->sock, k->in + k->nin, want - k->nin);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        keeper_orphan(k);
        return;
    }
    k->nin += (size_t)r;
    for (;;) {
        dr_keep_msg_t m;
        size_t used;
        dr_err_t err = {0};
        int rc = dr_keep_decode(k->in, k->nin, &used, &m, &err);
        if (rc == 0 && k->nin < sizeof k->in)
            return;
        if (rc <= 0 || (m.type != DR_KEEP_SIGNAL && m.type != DR_KEEP_RELEASE)) {
            klog(k, "bad frame from the agent (%s): dropping it", rc < 0 ? err.msg : "type");
            keeper_orphan(k);
            return;
        }
        memmove(k->in, k->in + used, k->nin - used);
        k->nin -= used;
        if (m.type == DR_KEEP_RELEASE) {
            k->released = true;
            return;
        }
        kill_rank(k, m.sig, m.group);
    }
}

/* The lease: what is due now, and when the next thing is (INT64_MAX). */
static int64_t keeper_lease(keeper_t *k, int64_t now)
{
    int64_t end = k->orphan ? k->frozen_end : page_end(k->a);
    int64_t next = INT64_MAX;
    if (!k->ended && end > 0) {
        if (k->orphan && !k->termed) {
            int64_t lease = k->frozen_lease, g = k->jj.grace_ns;
            if (g > lease / 2)
                g = lease / 2;
            int64_t t = end - (g > 0 ? g : 0);
            if (now >= t) {
                klog(k,
                     "no agent took the rank over: SIGTERM, SIGKILL when the lease ends in %.1f s",
                     (double)(end - now) / 1e9);
                kill_rank(k, SIGTERM, true);
                k->termed = k->lease_stop = true;
            } else {
                next = t;
            }
        }
        if (!k->killed) {
            if (now >= end) {
                klog(k, "the lease ended %s: SIGKILL",
                     k->orphan ? "with no agent" : "and the agent has not stopped the rank");
                kill_rank(k, SIGKILL, true);
                k->killed = k->lease_stop = true;
            } else if (end < next) {
                next = end;
            }
        }
    }
    if (k->orphan && k->ended) {
        if (k->lst < 0)
            keeper_exit(k); /* nobody can collect the end */
        int64_t t = (end > k->orphan_at ? end : k->orphan_at) + ORPHAN_WAIT_NS;
        if (now >= t) {
            klog(k, "no agent collected the rank's end: exiting");
            keeper_exit(k);
        }
        if (t < next)
            next = t;
    }
    return next;
}

/* Hold one rank until the agent releases it. */
static void keeper_hold(keeper_t *k)
{
    while (!k->released) {
        keeper_reap(k);
        int64_t now = dr_agent_boot_ns(), next = keeper_lease(k, now);
        int timeout = -1;
        if (next != INT64_MAX) {
            int64_t ms = (next - now) / 1000000 + 1;
            timeout = ms > 3600000 ? 3600000 : (int)ms;
        }
        struct pollfd pf[2] = {{.fd = k->sfd, .events = POLLIN},
                               {.fd = k->sock >= 0 ? k->sock : k->lst, .events = POLLIN}};
        int rc = poll(pf, pf[1].fd >= 0 ? 2 : 1, timeout);
        if (rc < 0 && errno != EINTR)
            keeper_exit(k);
        if (rc <= 0)
            continue;
        if (pf[0].revents) {
            struct signalfd_siginfo si;
            while (read(k->sfd, &si, sizeof si) == (ssize_t)sizeof si)
                ;
        }
        if (pf[1].fd >= 0 && pf[1].revents) {
            if (k->sock >= 0)
                keeper_read(k);
            else if (k->lst >= 0)
                keeper_adopted(k);
        }
    }
    /* released: the end was reported (or the agent gave the rank up) */
    if (!k->ended)
        kill_rank(k, SIGKILL, true);
}

/* Start the rank of a SPAWN and tell the agent. */
static bool keeper_start(keeper_t *k, const dr_keep_msg_t *m)
{
    dr_err_t err = {0};
    char detail[DR_KEEP_MAX_DETAIL];
    detail[0] = '\0';
    if (dr_keep_plan_unpack(m->text, m->text_len, &k->pl, &err) != 0) {
        snprintf(detail, sizeof detail, "%s", err.msg);
    } else {
        k->jj.job = k->pl.job;
        k->jj.gen = k->pl.gen;
        k->jj.rank = k->pl.rank;
        k->jj.uid = (uid_t)k->pl.uid;
        k->jj.grace_ns = k->pl.grace_ns;
        k->jj.cgroup = k->pl.cgroup[0] ? (char *)k->pl.cgroup : NULL;
        k->pid = dr_agent_plan_spawn(&k->pl, detail, sizeof detail);
    }
    if (k->pid <= 0) {
        dr_keep_msg_t f = {.type = DR_KEEP_FAILED, .text = detail, .text_len = strlen(detail)};
        if (send_msg(k->sock, &f) != 0)
            keeper_exit(k);
        return false;
    }
    k->start_ns = dr_agent_now_ns();
    k->start_boot_ns = dr_agent_boot_ns();
    dr_keep_msg_t st = {.type = DR_KEEP_STARTED,
                        .pid = k->pid,
                        .start_ns = k->start_ns,
                        .start_boot_ns = k->start_boot_ns};
    if (send_msg(k->sock, &st) != 0)
        keeper_orphan(k);
    return true;
}

/* Close every descriptor but stdio and keep (the agent's sockets must not
 * outlive it here: the controller has to see the agent's link close). */
static void close_others(int keep)
{
    if (keep > 3 && close_range(3, (unsigned)keep - 1, 0) != 0)
        for (int fd = 3; fd < keep; fd++)
            close(fd);
    if (close_range((unsigned)keep + 1, ~0U, 0) != 0)
        for (int fd = keep + 1; fd < 1024; fd++)
            close(fd);
}

/* Wait until the agent's socket is readable (or closed), reaping the
 * children that exit meanwhile (SIGCHLD, blocked, arrives on sfd). */
static void idle_wait(int sock, int sfd)
{
    for (;;) {
        struct pollfd p[2] = {{.fd = sock, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return; /* read_msg finds out what is wrong */
        }
        if (p[1].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
                ;
            reap_others();
        }
        if (p[0].revents)
            return;
    }
}

/* The keeper: idle until a SPAWN, then it holds that rank until RELEASE,
 * then idle again (the agent reuses it); an idle keeper whose agent went
 * away exits. */
static _Noreturn void keeper_main(dr_agent_t *a, int sock)
{
    /* every signal is still blocked (as the agent forked): defaults, then
     * SIGCHLD alone stays blocked for the signalfd */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        (void)sigaction(s, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_SETMASK, &chld, NULL);
    (void)setsid(); /* not in the agent's group or session: its signals are not ours */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    (void)prctl(PR_SET_NAME, "drover-keeper", 0, 0, 0);
    close_others(sock);
    int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0)
        _exit(1);
    uint8_t *buf = NULL;
    size_t cap = 0;
    for (;;) {
        reap_others();
        /* idle: a descendant of the last rank that left its group (setsid)
         * was re-parented here (a subreaper) and may exit any time; it is
         * reaped as it does, not at the next SPAWN, which may never come */
        idle_wait(sock, sfd);
        dr_keep_msg_t m;
        dr_err_t err = {0};
        if (read_msg(sock, &buf, &cap, &m, &err) != 0)
            _exit(0); /* the agent went away (or spoke nonsense) with nothing held */
        if (m.type != DR_KEEP_SPAWN)
            continue;
        keeper_t k = {.a = a, .sock = sock, .lst = -1, .sfd = sfd};
        if (keeper_start(&k, &m))
            keeper_hold(&k);
        if (k.sock != sock)
            keeper_exit(&k); /* orphaned (or taken over by a new agent): not reused */
        dr_keep_plan_free(&k.pl);
        if (cap > (1u << 20)) { /* a large script: give the memory back */
            free(buf);
            buf = NULL;
            cap = 0;
        }
    }
}

/* ---- the agent's side ---- */

static void keeper_lost(dr_agent_t *a, dr_agent_job_t *j, const char *why)
{
    if (j->keep_ev)
        event_free(j->keep_ev);
    j->keep_ev = NULL;
    if (j->keep_fd >= 0)
        close(j->keep_fd);
    j->keep_fd = -1;
    j->keep_n = 0;
    if (!j->running)
        return;
    if (!j->adopted) {
        /* the rank is re-parented to the agent (a subreaper): reaped here */
        dr_agent_log(a,
                     "job %llu.%u rank %u: its keeper (pid %ld) went away (%s): the agent holds "
                     "the rank itself",
                     (unsigned long long)j->job, j->gen, j->rank, (long)j->keep_pid, why);
        return;
    }
    dr_agent_log(a, "job %llu.%u rank %u: its keeper went away (%s): SIGKILL",
                 (unsigned long long)j->job, j->gen, j->rank, why);
    (void)killpg(j->pid, SIGKILL);
    dr_agent_cg_kill(a, j);
    if (!j->killing)
        j->why = DR_END_KILLED;
    j->exit_code = -1;
    j->signal = SIGKILL;
    char *d = dr_strdup("its keeper went away");
    if (d) {
        free(j->detail);
        j->detail = d;
    }
    dr_agent_job_ended(a, j);
}

static void on_keeper(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    dr_agent_job_t *j = arg;
    dr_agent_t *a = j->a;
    ssize_t r;
    do
        r = read((int)fd, j->keep_in + j->keep_n, sizeof j->keep_in - j->keep_n);
    while (r < 0 && errno == EINTR);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (r <= 0) {
        keeper_lost(a, j, r == 0 ? "closed" : strerror(errno));
        return;
    }
    j->keep_n += (size_t)r;
    dr_keep_msg_t m;
    size_t used;
    dr_err_t err = {0};
    int rc = dr_keep_decode(j->keep_in, j->keep_n, &used, &m, &err);
    if (rc == 0 && j->keep_n < sizeof j->keep_in)
        return;
    if (rc <= 0 || m.type != DR_KEEP_ENDED) {
        keeper_lost(a, j, rc < 0 ? err.msg : "unexpected frame");
        return;
    }
    memmove(j->keep_in, j->keep_in + used, j->keep_n - used);
    j->keep_n -= used;
    if (!j->running)
        return;
    j->exit_code = m.exit_code;
    j->signal = m.signal;
    dr_agent_cg_kill(a, j);
    dr_agent_job_ended(a, j);
}

static int watch_keeper(dr_agent_t *a, dr_agent_job_t *j, int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
        return -1;
    j->keep_ev = event_new(a->base, fd, EV_READ | EV_PERSIST, on_keeper, j);
    if (!j->keep_ev || event_add(j->keep_ev, NULL) != 0)
        return -1;
    j->keep_fd = fd;
    return 0;
}

/* An idle keeper, or a new one (-1: fork failed, errno set). */
static int keeper_get(dr_agent_t *a, pid_t *pid)
{
    if (a->nidle) {
        a->nidle--;
        *pid = a->idle[a->nidle].pid;
        return a->idle[a->nidle].fd;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    /* no handler of the agent may run in the keeper: block everything
     * across fork (the keeper sets its own) */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t kp = fork();
    if (kp == 0) {
        close(sv[0]);
        keeper_main(a, sv[1]);
    }
    int e = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(sv[1]);
    if (kp < 0) {
        close(sv[0]);
        errno = e;
        return -1;
    }
    *pid = kp;
    return sv[0];
}

/* A keeper back from a rank (or a failed start): idle for the next one,
 * unless enough are (closed: it exits). */
static void keeper_put(dr_agent_t *a, pid_t pid, int fd)
{
    if (a->stopping || a->nidle >= KEEP_IDLE_MAX ||
        DR_PUSH(a->idle, a->nidle, a->idle_cap, ((struct dr_agent_idle_keeper){pid, fd})) != 0)
        close(fd);
}

int dr_agent_keeper_spawn(dr_agent_t *a, dr_agent_job_t *j, const uint8_t *spawn, size_t len,
                          char *detail, size_t dlen)
{
    dr_keep_msg_t m;
    dr_err_t err = {0};
    int rc = -1, fd = -1;
    pid_t kp = 0;
    uint8_t *buf = NULL;
    size_t cap = 0;
    /* an idle keeper may have died since: then once more with a new one */
    for (int tries = 0; tries < 2 && rc != 0; tries++) {
        bool fresh = a->nidle == 0;
        fd = keeper_get(a, &kp);
        if (fd < 0) {
            snprintf(detail, dlen, "keeper: fork: %s", strerror(errno));
            free(buf);
            return -1;
        }
        err.msg[0] = '\0';
        rc = dr_agent_write_all(fd, spawn, len) == 0 ? read_msg(fd, &buf, &cap, &m, &err) : -1;
        if (rc != 0) {
            snprintf(detail, dlen, "keeper %ld: %s", (long)kp, err.msg[0] ? err.msg : "gone");
            close(fd);
            if (fresh)
                break;
        }
    }
    if (rc != 0 || m.type != DR_KEEP_STARTED) {
        if (rc == 0 && m.type == DR_KEEP_FAILED) {
            snprintf(detail, dlen, "%.*s", (int)m.text_len, m.text);
            keeper_put(a, kp, fd);
        } else if (rc == 0) {
            snprintf(detail, dlen, "keeper %ld: unexpected answer", (long)kp);
            close(fd);
        }
        free(buf);
        return -1;
    }
    free(buf);
    j->pid = (pid_t)m.pid;
    j->keep_pid = kp;
    j->start_ns = m.start_ns;
    j->start_boot_ns = m.start_boot_ns;
    if (watch_keeper(a, j, fd) != 0) {
        /* the rank runs; without its keeper's reports it cannot be held */
        dr_agent_log(a, "job %llu.%u rank %u: out of memory watching its keeper: SIGKILL",
                     (unsigned long long)j->job, j->gen, j->rank);
        dr_keep_msg_t rel = {.type = DR_KEEP_RELEASE};
        (void)send_msg(fd, &rel);
        close(fd);
        snprintf(detail, dlen, "keeper: out of memory");
        return -1;
    }
    return 0;
}

int dr_agent_job_kill(dr_agent_t *a, const dr_agent_job_t *j, int sig, bool group)
{
    (void)a;
    if (j->pid <= 0) {
        errno = ESRCH;
        return -1;
    }
    if (j->keep_fd >= 0) {
        dr_keep_msg_t m = {.type = DR_KEEP_SIGNAL, .sig = sig, .group = group};
        if (send_msg(j->keep_fd, &m) == 0)
            return 0;
    }
    return group ? killpg(j->pid, sig) : kill(j->pid, sig);
}

/* Tell the keeper nothing more comes and wait (2 s at most) until it has
 * exited: its end of the socket closes with it. */
static void wait_gone(int fd)
{
    (void)shutdown(fd, SHUT_WR);
    struct timeval tv = {2, 0};
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    uint8_t b[64];
    while (read(fd, b, sizeof b) > 0)
        ;
}

void dr_agent_keeper_release(dr_agent_t *a, dr_agent_job_t *j)
{
    if (j->keep_ev)
        event_free(j->keep_ev);
    j->keep_ev = NULL;
    if (j->keep_fd < 0)
        return;
    int fd = j->keep_fd;
    j->keep_fd = -1;
    if (a->leave_jobs) {
        close(fd); /* the keeper waits for the next agent */
        return;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    dr_keep_msg_t m = {.type = DR_KEEP_RELEASE};
    bool sent = send_msg(fd, &m) == 0;
    if (sent && !j->adopted && !a->stopping && j->keep_pid > 0) {
        keeper_put(a, j->keep_pid, fd); /* ours: reused for the next rank */
        return;
    }
    if (sent && a->stopping) {
        wait_gone(fd); /* the agent is exiting: nothing of its jobs outlives it */
    }
    close(fd);
}

/* The agent's exit: idle keepers exit (and it waits, a little, until they
 * have, so that nothing of it outlives it). */
void dr_agent_keeper_free(dr_agent_t *a)
{
    for (size_t i = 0; i < a->nidle; i++) {
        wait_gone(a->idle[i].fd);
        close(a->idle[i].fd);
    }
    free(a->idle);
    a->idle = NULL;
    a->nidle = a->idle_cap = 0;
}

/* Take one keeper over: its ADOPT, then the rank in the table. */
static bool adopt_one(dr_agent_t *a, const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t plen = strlen(path);
    if (plen >= sizeof sa.sun_path)
        return false;
    memcpy(sa.sun_path, path, plen + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        /* its keeper is gone (the rank with it) */
        dr_agent_log(a, "keeper socket %s: %s: removed", path, strerror(errno));
        (void)unlink(path);
        close(fd);
        return false;
    }
    struct timeval tv = {ADOPT_TIMEOUT_S, 0};
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    uint8_t *buf = NULL;
    size_t cap = 0;
    dr_keep_msg_t m;
    dr_err_t err = {0};
    dr_msg_launch_t l;
    memset(&l, 0, sizeof l);
    bool ok = false;
    if (read_msg(fd, &buf, &cap, &m, &err) != 0 || m.type != DR_KEEP_ADOPT) {
        dr_agent_log(a, "keeper %s: %s", path, err.msg[0] ? err.msg : "not an ADOPT");
    } else if (dr_msg_launch_parse(&l, m.text, m.text_len, &err) != 0) {
        dr_agent_log(a, "keeper %s: its LAUNCH: %s", path, err.msg);
    } else if (dr_agent_job_find(a, l.job, l.gen, l.rank)) {
        dr_agent_log(a, "keeper %s: job %llu.%u rank %u is already held", path,
                     (unsigned long long)l.job, l.gen, l.rank);
    } else {
        ok = true;
    }
    dr_agent_job_t *j = ok ? dr_agent_job_add(a, l.job, l.gen, l.rank) : NULL;
    if (ok && (!j || watch_keeper(a, j, fd) != 0)) {
        dr_agent_log(a, "keeper %s: out of memory", path);
        if (j)
            dr_agent_job_remove(a, j);
        j = NULL;
    }
    if (!j) {
        close(fd);
        free(buf);
        dr_msg_launch_free(&l);
        return false;
    }
    j->adopted = true;
    j->pid = (pid_t)m.pid;
    j->uid = (uid_t)m.uid;
    j->step = l.step;
    j->grace_ns = l.grace_ns;
    j->start_ns = m.start_ns;
    j->start_boot_ns = m.start_boot_ns;
    if (m.cgroup_len)
        j->cgroup = dr_strndup(m.cgroup, m.cgroup_len);
    int64_t ran = dr_agent_boot_ns() - m.start_boot_ns;
    if (m.ended) {
        j->why = m.why;
        j->exit_code = m.exit_code;
        j->signal = m.signal;
        j->end_ns = m.end_ns;
        dr_agent_log(a,
                     "job %llu.%u rank %u: taken over from its keeper: ended (%s %d) while no "
                     "agent held it",
                     (unsigned long long)j->job, j->gen, j->rank, m.signal ? "signal" : "exit",
                     m.signal ? m.signal : m.exit_code);
    } else {
        j->running = true;
        if (l.time_limit_ns > 0)
            dr_agent_job_arm_limit(a, j, l.time_limit_ns - ran);
        dr_agent_warn_arm(a, j, &l, ran);
        if (dr_agent_ready_start(a, j, l.port, l.ready) != 0)
            dr_agent_log(a, "job %llu.%u rank %u: out of memory: no readiness check",
                         (unsigned long long)j->job, j->gen, j->rank);
        dr_agent_log(a,
                     "job %llu.%u rank %u: taken over from its keeper: pid %ld, running for "
                     "%.1f s",
                     (unsigned long long)j->job, j->gen, j->rank, (long)j->pid, (double)ran / 1e9);
    }
    free(buf);
    dr_msg_launch_free(&l);
    return true;
}

size_t dr_agent_keeper_adopt(dr_agent_t *a)
{
    if (!a->state_dir)
        return 0;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", a->state_dir, KEEP_DIR);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t k = strlen(e->d_name);
        if (k < 6 || strcmp(e->d_name + k - 5, ".sock") != 0)
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        n += adopt_one(a, path);
    }
    closedir(d);
    /* the lease the earlier agent held goes on until a controller renews
     * it: its ranks are stopped at its end as they would have been */
    int64_t end = page_end(a), lease = page_lease(a);
    if (n && end > 0 && lease > 0 && !a->lease_ns)
        dr_agent_lease_start(a, lease, end - lease);
    if (n)
        dr_agent_log(a, "took over %zu rank%s left by an earlier agent", n, n == 1 ? "" : "s");
    return n;
}
