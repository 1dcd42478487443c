/* agent.c - the agent's life cycle: signal events, the job table, the log
 * and the orderly shutdown that leaves no job process behind.
 *
 * The --state directory holds only a pid/epoch file for now.  Adopting the
 * jobs of a previous agent incarnation (surviving an agent restart) is a
 * later issue: it will keep the job table there too. */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

/* How long job processes get between SIGTERM and SIGKILL at shutdown. */
#define AGENT_STOP_GRACE_NS (2 * 1000000000LL)

static void agent_vlog(const dr_agent_t *a, const char *fmt, va_list ap)
{
    FILE *f = a->log ? a->log : stderr;
    char line[2048];
    vsnprintf(line, sizeof line, fmt, ap);
    /* UTC with milliseconds: the agents' logs of a cluster read as one
     * timeline (what ran where, and when it was stopped) */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char at[32];
    strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(f, "%s.%03dZ drover-agent[%s]: %s\n", at, (int)(ts.tv_nsec / 1000000),
            a->name ? a->name : "?", line);
    fflush(f);
}

void dr_agent_log(const dr_agent_t *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    agent_vlog(a, fmt, ap);
    va_end(ap);
}

void dr_agent_debug(const dr_agent_t *a, const char *fmt, ...)
{
    if (!a->verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    agent_vlog(a, fmt, ap);
    va_end(ap);
}

void dr_agent_child_signals_reset(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        (void)sigaction(s, &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

int dr_agent_write_all(int fd, const void *buf, size_t n)
{
    const char *b = buf;
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

void dr_agent_kill_child(pid_t pid, int sig)
{
    if (pid <= 0)
        return;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    /* ECHILD: reaped already; si_pid set: a zombie, nothing left to signal */
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == pid)
        return;
    (void)kill(pid, sig);
}

int64_t dr_agent_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Comparable across the agents of one machine (tests, the chaos suite) and
 * not moved by a step of the wall clock (NTP, libfaketime). */
double dr_agent_boot_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void agent_on_sigchld(evutil_socket_t fd, short what, void *arg)
{
    dr_agent_reap(arg);
}

static void agent_on_sigterm(evutil_socket_t sig, short what, void *arg)
{
    dr_agent_t *a = arg;
    if (!a->stopping)
        dr_agent_log(a, "signal %d: stopping (killing %zu running job ranks)", (int)sig,
                     dr_agent_running(a));
    dr_agent_stop(a, 0);
}

/* SIGUSR2: exit now and leave every rank to its keeper, for the next
 * agent to take over (an upgrade, a restart with new options). */
static void agent_on_sigusr2(evutil_socket_t sig, short what, void *arg)
{
    dr_agent_t *a = arg;
    dr_agent_log(a, "signal %d: exiting, leaving %zu running job rank%s to their keepers", (int)sig,
                 dr_agent_running(a), dr_agent_running(a) == 1 ? "" : "s");
    a->leave_jobs = true;
    a->stopping = true;
    event_base_loopexit(a->base, NULL);
}

int dr_agent_init(dr_agent_t *a, struct event_base *base, const char *name, dr_err_t *err)
{
    memset(a, 0, sizeof *a);
    a->base = base;
    a->log = stderr;
    a->cg_mount = "/sys/fs/cgroup";
    a->name = dr_strdup(name);
    if (!a->name)
        return dr_err_set(err, DR_ENOMEM, "agent: out of memory");
    /* A closed controller socket must be an error on write, not a death. */
    signal(SIGPIPE, SIG_IGN);
    /* Job processes that daemonise are re-parented to us, not to init, so
     * that they are reaped here (and are still ours to account for). */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    a->sigchld_ev = evsignal_new(base, SIGCHLD, agent_on_sigchld, a);
    a->sigterm_ev = evsignal_new(base, SIGTERM, agent_on_sigterm, a);
    a->sigint_ev = evsignal_new(base, SIGINT, agent_on_sigterm, a);
    a->sigusr2_ev = evsignal_new(base, SIGUSR2, agent_on_sigusr2, a);
    if (!a->sigchld_ev || !a->sigterm_ev || !a->sigint_ev || !a->sigusr2_ev ||
        evsignal_add(a->sigchld_ev, NULL) || evsignal_add(a->sigterm_ev, NULL) ||
        evsignal_add(a->sigint_ev, NULL) || evsignal_add(a->sigusr2_ev, NULL)) {
        dr_agent_free(a);
        return dr_err_set(err, DR_EIO, "agent: cannot set up signal events");
    }
    /* the keepers' view of the lease (the state directory's file later) */
    if (dr_agent_lease_page_init(a, err) != 0) {
        dr_agent_free(a);
        return DR_EIO;
    }
    return 0;
}

static void job_free(dr_agent_t *a, dr_agent_job_t *j)
{
    dr_agent_keeper_release(a, j);
    if (j->limit_ev)
        event_free(j->limit_ev);
    if (j->grace_ev)
        event_free(j->grace_ev);
    if (j->cg_ev)
        event_free(j->cg_ev);
    if (j->hostfile) {
        dr_agent_file_put(a, j->hostfile);
        j->hostfile = NULL;
    }
    if (j->script)
        dr_agent_file_put(a, j->script);
    dr_agent_ready_stop(j);
    dr_agent_warn_stop(j);
    free(j->ready_check);
    free(j->detail);
    free(j->cgroup);
    free(j);
}

void dr_agent_free(dr_agent_t *a)
{
    dr_agent_ckpt_cancel(a, 0, 0, true, false);
    dr_agent_output_free(a);
    for (size_t i = 0; i < a->njobs; i++)
        job_free(a, a->jobs[i]);
    free(a->jobs);
    dr_agent_keeper_free(a);
    dr_agent_lease_free(a);
    dr_agent_lease_page_free(a);
    dr_agent_file_clear(a); /* the files stay with a->leave_jobs: the ranks may read them */
    struct event *evs[] = {a->sigchld_ev, a->sigterm_ev, a->sigint_ev, a->sigusr2_ev, a->stop_ev};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if (evs[i])
            event_free(evs[i]);
    free(a->name);
    free(a->state_dir);
    if (a->lock_fd > 0)
        close(a->lock_fd);
    memset(a, 0, sizeof *a);
}

dr_agent_job_t *dr_agent_job_find(const dr_agent_t *a, uint64_t job, uint32_t gen, uint32_t rank)
{
    for (size_t i = 0; i < a->njobs; i++) {
        dr_agent_job_t *j = a->jobs[i];
        if (j->job == job && j->gen == gen && j->rank == rank)
            return j;
    }
    return NULL;
}

dr_agent_job_t *dr_agent_job_by_pid(const dr_agent_t *a, pid_t pid)
{
    for (size_t i = 0; i < a->njobs; i++)
        if (a->jobs[i]->running && a->jobs[i]->pid == pid)
            return a->jobs[i];
    return NULL;
}

dr_agent_job_t *dr_agent_job_add(dr_agent_t *a, uint64_t job, uint32_t gen, uint32_t rank)
{
    dr_agent_job_t *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->a = a;
    j->job = job;
    j->gen = gen;
    j->rank = rank;
    j->keep_fd = -1;
    j->detail = dr_strdup("");
    if (!j->detail || DR_PUSH(a->jobs, a->njobs, a->jobs_cap, j) != 0) {
        free(j->detail);
        free(j);
        return NULL;
    }
    return j;
}

void dr_agent_job_remove(dr_agent_t *a, dr_agent_job_t *j)
{
    for (size_t i = 0; i < a->njobs; i++) {
        if (a->jobs[i] == j) {
            a->jobs[i] = a->jobs[--a->njobs];
            job_free(a, j);
            return;
        }
    }
}

size_t dr_agent_running(const dr_agent_t *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->njobs; i++)
        n += a->jobs[i]->running;
    return n;
}

static void agent_on_stop_tick(evutil_socket_t fd, short what, void *arg)
{
    dr_agent_t *a = arg;
    if (dr_agent_running(a) == 0) {
        event_base_loopexit(a->base, NULL);
        return;
    }
    /* still waiting: the per-rank grace timers send SIGKILL; reap in case a
     * SIGCHLD was coalesced */
    dr_agent_reap(a);
}

void dr_agent_stop(dr_agent_t *a, int code)
{
    if (!a->stopping) {
        a->stopping = true;
        a->exit_code = code;
    }
    /* launches still being verified never start */
    dr_agent_ckpt_cancel(a, 0, 0, true, false);
    struct timeval stop_grace = {AGENT_STOP_GRACE_NS / 1000000000LL, 0}, now, left;
    for (size_t i = 0; i < a->njobs; i++) {
        dr_agent_job_t *j = a->jobs[i];
        if (!j->running)
            continue;
        if (!j->killing) {
            dr_agent_job_signal(a, j, SIGTERM, AGENT_STOP_GRACE_NS, DR_END_KILLED);
            continue;
        }
        /* already being killed (KILL, time limit): with a longer grace it
         * would hold up the exit, so SIGKILL comes at 2 s at the latest */
        struct timeval at;
        if (j->grace_ev && event_pending(j->grace_ev, EV_TIMEOUT, &at) &&
            event_base_gettimeofday_cached(a->base, &now) == 0) {
            timersub(&at, &now, &left);
            if (timercmp(&left, &stop_grace, >))
                evtimer_add(j->grace_ev, &stop_grace);
        }
    }
    /* Poll for the table to drain: the loop exits once nothing runs. */
    if (!a->stop_ev) {
        a->stop_ev = event_new(a->base, -1, EV_PERSIST, agent_on_stop_tick, a);
        struct timeval tv = {0, 50000};
        if (a->stop_ev)
            event_add(a->stop_ev, &tv);
    }
    if (dr_agent_running(a) == 0)
        event_base_loopexit(a->base, NULL);
}

/* One agent per state directory: two would adopt the same keepers, share
 * one lease page and remove each other's job files.  The lock is a flock
 * on STATE/agent.lock, held by the open file until the process exits (the
 * kernel drops it at a kill -9 too); the keepers close it at their start,
 * so an agent that died leaves no lock behind. */
static int state_lock(dr_agent_t *a, const char *dir, dr_err_t *err)
{
    if (a->lock_fd > 0) { /* the same agent again (tests): its own lock */
        close(a->lock_fd);
        a->lock_fd = 0;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/agent.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return dr_err_set(err, DR_EIO, "state lock %s: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e != EWOULDBLOCK)
            return dr_err_set(err, DR_EIO, "state lock %s: %s", path, strerror(e));
        char pidf[PATH_MAX], text[128] = "";
        snprintf(pidf, sizeof pidf, "%s/agent.pid", dir);
        int pf = open(pidf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        long pid = 0;
        if (pf >= 0) {
            ssize_t n = read(pf, text, sizeof text - 1);
            text[n > 0 ? n : 0] = '\0';
            close(pf);
            (void)sscanf(text, "pid %ld", &pid);
        }
        return dr_err_set(err, DR_ESTATE,
                          "state dir %s is in use by another drover-agent (pid %ld): one agent "
                          "per state directory; stop that one or give this one its own --state",
                          dir, pid);
    }
    a->lock_fd = fd;
    return 0;
}

int dr_agent_state_init(dr_agent_t *a, const char *dir, dr_err_t *err)
{
    if (mkdir(dir, 0711) != 0 && errno != EEXIST)
        return dr_err_set(err, DR_EIO, "state dir %s: %s", dir, strerror(errno));
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return dr_err_set(err, DR_EIO, "state dir %s: not a directory", dir);
    if (st.st_uid != geteuid() || (st.st_mode & 022))
        return dr_err_set(err, DR_EIO,
                          "state dir %s: owned by uid %u, mode %04o: it must belong to the "
                          "agent's uid %u and be writable by it alone (chown %u %s; chmod 711 %s)",
                          dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
                          (unsigned)geteuid(), (unsigned)geteuid(), dir, dir);
    /* 0711: the job users pass through to their own directories under
     * STATE/jobs (batch scripts, hostfiles); they list nothing here and
     * every file of the agent's is 0600, every directory 0700 */
    if ((st.st_mode & 0777) != 0711 && chmod(dir, 0711) != 0)
        return dr_err_set(err, DR_EIO, "state dir %s: chmod 711: %s", dir, strerror(errno));
    int rc = state_lock(a, dir, err);
    if (rc != 0)
        return rc;
    free(a->state_dir);
    a->state_dir = dr_strdup(dir);
    if (!a->state_dir)
        return dr_err_set(err, DR_ENOMEM, "state dir: out of memory");
    if (dr_agent_lease_page_init(a, err) != 0)
        return DR_EIO;
    return dr_agent_state_write(a, err);
}

int dr_agent_state_write(const dr_agent_t *a, dr_err_t *err)
{
    if (!a->state_dir)
        return 0;
    char tmp[PATH_MAX], path[PATH_MAX];
    snprintf(path, sizeof path, "%s/agent.pid", a->state_dir);
    snprintf(tmp, sizeof tmp, "%s/.agent.pid.tmp", a->state_dir);
    char text[128];
    int n = snprintf(text, sizeof text, "pid %ld\nepoch %llu\n", (long)getpid(),
                     (unsigned long long)a->epoch);
    /* write then rename, so a reader never sees half a file */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return dr_err_set(err, DR_EIO, "state file %s: %s", tmp, strerror(errno));
    bool ok = write(fd, text, (size_t)n) == n;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return dr_err_set(err, DR_EIO, "state file %s: %s", path, strerror(e));
    }
    return 0;
}
