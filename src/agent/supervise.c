/* supervise.c - watch running ranks: reap them, enforce time limits and
 * KILLs, and make sure nothing a job started outlives its main process.
 *
 * A rank ends when its main process exits.  The reaper peeks at exited
 * children with waitid(WNOWAIT) first: while the main process is a zombie
 * its pid, which is also its process group id, cannot be reused, so
 * killpg(pid, SIGKILL) cannot hit a stranger.  Only then is it reaped.
 * Processes that left the group are caught by the rank's cgroup where
 * there is one. */
#include "agent/agent.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <event2/event.h>

/* An emptied cgroup is removed after its last process is gone: retry. */
#define CG_RETRY_MS    100
#define CG_RETRY_TRIES 100

static const char *why_name(uint8_t why)
{
    switch (why) {
    case DR_END_EXIT: return "exit";
    case DR_END_TIMEOUT: return "time limit";
    case DR_END_KILLED: return "killed";
    case DR_END_LAUNCH: return "launch failure";
    case DR_END_LEASE: return "stopped: the lease expired";
    default: return "?";
    }
}

static struct timeval ns_tv(int64_t ns)
{
    if (ns < 0)
        ns = 0;
    struct timeval tv = {(time_t)(ns / 1000000000LL), (suseconds_t)(ns % 1000000000LL / 1000)};
    return tv;
}

static void on_cg_retry(evutil_socket_t fd, short what, void *arg)
{
    dr_agent_job_t *j = arg;
    dr_agent_t *a = j->a;
    dr_agent_cg_kill(a, j);
    if (dr_agent_cg_remove(a, j))
        return;
    if (++j->cg_tries >= CG_RETRY_TRIES) {
        dr_agent_log(a, "job %llu.%u rank %u: cgroup %s still busy; left behind",
                     (unsigned long long)j->job, j->gen, j->rank, j->cgroup);
        return;
    }
    struct timeval tv = {0, CG_RETRY_MS * 1000};
    evtimer_add(j->cg_ev, &tv);
}

void dr_agent_job_ended(dr_agent_t *a, dr_agent_job_t *j)
{
    j->running = false;
    dr_agent_ready_stop(j);
    dr_agent_warn_stop(j);
    j->end_ns = dr_agent_now_ns();
    if (j->hostfile) {
        dr_agent_file_put(a, j->hostfile);
        j->hostfile = NULL;
    }
    if (j->script) {
        dr_agent_file_put(a, j->script);
        j->script = NULL;
    }
    if (j->limit_ev) {
        event_free(j->limit_ev);
        j->limit_ev = NULL;
    }
    if (j->grace_ev) {
        event_free(j->grace_ev);
        j->grace_ev = NULL;
    }
    if (j->cgroup && dr_agent_cg_oom_kills(a, j) && !j->detail[0]) {
        char *d = dr_strdup("out of memory: the kernel killed a process at the memory limit");
        if (d) {
            free(j->detail);
            j->detail = d;
        }
    }
    if (j->cgroup && !dr_agent_cg_remove(a, j)) {
        j->cg_ev = evtimer_new(a->base, on_cg_retry, j);
        struct timeval tv = {0, CG_RETRY_MS * 1000};
        if (j->cg_ev)
            evtimer_add(j->cg_ev, &tv);
    }
    if (j->why != DR_END_LAUNCH) {
        char how[64];
        if (j->signal)
            snprintf(how, sizeof how, "signal %d (%s)", j->signal, strsignal(j->signal));
        else
            snprintf(how, sizeof how, "exit %d", j->exit_code);
        dr_agent_log(a, "job %llu.%u rank %u: ended: %s, %s%s%s [boot %.3f]",
                     (unsigned long long)j->job, j->gen, j->rank, how, why_name(j->why),
                     j->detail[0] ? ": " : "", j->detail, dr_agent_boot_s());
    }
    if (a->notify)
        a->notify(a, j, false);
    if (a->stopping && dr_agent_running(a) == 0)
        event_base_loopexit(a->base, NULL);
}

void dr_agent_reap(dr_agent_t *a)
{
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0) {
            if (errno == EINTR)
                continue;
            return; /* ECHILD: no children */
        }
        if (si.si_pid == 0)
            return;
        pid_t pid = si.si_pid;
        dr_agent_job_t *j = dr_agent_job_by_pid(a, pid);
        if (j) {
            /* the zombie still holds the group id: kill the rest now */
            (void)killpg(pid, SIGKILL);
            dr_agent_cg_kill(a, j);
        }
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (!j) {
            dr_agent_debug(a, "reaped pid %ld (a job's descendant)", (long)pid);
            continue;
        }
        if (WIFSIGNALED(st)) {
            j->exit_code = -1;
            j->signal = WTERMSIG(st);
        } else {
            j->exit_code = WEXITSTATUS(st);
            j->signal = 0;
        }
        dr_agent_job_ended(a, j);
    }
}

static void on_grace(evutil_socket_t fd, short what, void *arg)
{
    dr_agent_job_t *j = arg;
    if (!j->running)
        return;
    dr_agent_log(j->a, "job %llu.%u rank %u: grace over: SIGKILL", (unsigned long long)j->job,
                 j->gen, j->rank);
    (void)dr_agent_job_kill(j->a, j, SIGKILL, true);
    dr_agent_cg_kill(j->a, j);
}

void dr_agent_job_signal(dr_agent_t *a, dr_agent_job_t *j, int sig, int64_t grace_ns, uint8_t why)
{
    if (!j->running)
        return;
    if (!j->killing) {
        j->killing = true;
        j->why = why;
    }
    if (sig <= 0 || sig >= NSIG)
        sig = SIGTERM;
    (void)dr_agent_job_kill(a, j, sig, true);
    if (sig == SIGKILL) {
        dr_agent_cg_kill(a, j);
        return; /* nothing left to escalate to */
    }
    if (!j->grace_ev) {
        j->grace_ev = evtimer_new(a->base, on_grace, j);
        struct timeval tv = ns_tv(grace_ns);
        if (j->grace_ev)
            evtimer_add(j->grace_ev, &tv);
    }
}

static void on_limit(evutil_socket_t fd, short what, void *arg)
{
    dr_agent_job_t *j = arg;
    if (!j->running)
        return;
    dr_agent_log(j->a, "job %llu.%u rank %u: time limit reached: SIGTERM, SIGKILL in %.1f s",
                 (unsigned long long)j->job, j->gen, j->rank, (double)j->grace_ns / 1e9);
    dr_agent_job_signal(j->a, j, SIGTERM, j->grace_ns, DR_END_TIMEOUT);
}

void dr_agent_job_arm_limit(dr_agent_t *a, dr_agent_job_t *j, int64_t limit_ns)
{
    if (j->limit_ev)
        event_free(j->limit_ev);
    j->limit_ev = evtimer_new(a->base, on_limit, j);
    struct timeval tv = ns_tv(limit_ns);
    if (j->limit_ev)
        evtimer_add(j->limit_ev, &tv);
}

int dr_agent_kill(dr_agent_t *a, const dr_msg_kill_t *k)
{
    /* ranks still waiting for their checkpoints end unstarted */
    int n = k->step ? 0 : dr_agent_ckpt_cancel(a, k->job, k->gen, false, true);
    bool ended = false;
    for (size_t i = 0; i < a->njobs; i++) {
        dr_agent_job_t *j = a->jobs[i];
        if (j->job != k->job || j->gen != k->gen || (k->step && j->step != k->step))
            continue;
        if (!j->running) {
            ended = true;
            continue;
        }
        dr_agent_log(a, "job %llu.%u rank %u: kill (signal %d, grace %.1f s)%s%s",
                     (unsigned long long)j->job, j->gen, j->rank, k->signal,
                     (double)k->grace_ns / 1e9, k->reason && k->reason[0] ? ": " : "",
                     k->reason ? k->reason : "");
        dr_agent_job_signal(a, j, k->signal, k->grace_ns, DR_END_KILLED);
        n++;
    }
    if (n == 0 && !ended)
        dr_agent_log(a, "job %llu.%u: kill ignored: not held here", (unsigned long long)k->job,
                     k->gen);
    else if (n == 0)
        dr_agent_debug(a, "job %llu.%u: kill: already ended (report not yet acknowledged)",
                       (unsigned long long)k->job, k->gen);
    return n;
}
