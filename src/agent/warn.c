/* warn.c - --signal=[B:]SIG[@SECS]: the warning a job gets before it is
 * stopped, so that it can write a checkpoint.
 *
 * The agent sends it by itself SECS before a rank's time limit (it enforces
 * the limit too, so the two cannot drift apart) and, when the job declares
 * --checkpoint-every, at every interval from the job's start; the
 * controller asks for it with SIGNAL before it preempts the job or drains
 * one of its nodes.  What the agent sent by itself is reported (SIGNALED)
 * for the job's event log.  Like Slurm, B: signals only the batch shell;
 * without it the rank's whole process group gets it (the shell and what it
 * runs; a step's tasks are ranks of their own and get it the same way). */
#include "agent/agent.h"

#include <signal.h>

#include <event2/event.h>

static struct timeval ns_tv(int64_t ns)
{
    if (ns < 0)
        ns = 0;
    struct timeval tv = {(time_t)(ns / 1000000000LL), (suseconds_t)(ns % 1000000000LL / 1000)};
    return tv;
}

bool dr_agent_warn_send(dr_agent_t *a, dr_agent_job_t *j, int sig)
{
    if (!j->running || j->killing || j->pid <= 0 || sig <= 0 || sig >= NSIG)
        return false;
    if (j->warn_batch && j->step != 0)
        return false; /* B: the batch shell alone, not the steps' tasks */
    int rc = dr_agent_job_kill(a, j, sig, !j->warn_batch);
    dr_agent_debug(a, "job %llu.%u rank %u: signal %d to %s %ld%s", (unsigned long long)j->job,
                   j->gen, j->rank, sig, j->warn_batch ? "process" : "process group", (long)j->pid,
                   rc == 0 ? "" : " failed");
    return rc == 0;
}

static void warned(dr_agent_job_t *j, uint32_t why)
{
    dr_agent_t *a = j->a;
    if (!dr_agent_warn_send(a, j, j->warn_sig))
        return;
    dr_agent_log(a, "job %llu.%u rank %u: signal %d sent: %s", (unsigned long long)j->job, j->gen,
                 j->rank, j->warn_sig,
                 why == DR_SIG_LIMIT ? "before its time limit" : "a checkpoint round");
    if (a->notify_warned)
        a->notify_warned(a, j, why, dr_agent_now_ns());
}

static void on_warn(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    warned(arg, DR_SIG_LIMIT);
}

static void on_ckpt(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    dr_agent_job_t *j = arg;
    j->warn_rounds++;
    struct timeval tv = ns_tv(j->warn_every_ns);
    evtimer_add(j->ckpt_ev, &tv); /* the next round, before this one's report */
    warned(j, DR_SIG_CKPT);
}

void dr_agent_warn_arm(dr_agent_t *a, dr_agent_job_t *j, const dr_msg_launch_t *l, int64_t ran_ns)
{
    if (l->signal <= 0 || l->signal >= NSIG)
        return;
    j->warn_sig = l->signal;
    j->warn_batch = l->signal_batch;
    if (l->time_limit_ns > 0) {
        int64_t lead = (int64_t)l->signal_secs * 1000000000LL;
        /* a limit shorter than the lead: at once, as Slurm does */
        struct timeval tv = ns_tv(l->time_limit_ns - lead - ran_ns);
        j->warn_ev = evtimer_new(a->base, on_warn, j);
        if (j->warn_ev)
            evtimer_add(j->warn_ev, &tv);
    }
    if (l->ckpt_every_ns > 0) {
        j->warn_every_ns = l->ckpt_every_ns;
        int64_t first = l->ckpt_next_ns > 0 ? l->ckpt_next_ns : l->ckpt_every_ns, next;
        if (ran_ns > first) { /* taken over: the rounds go on where they were */
            j->warn_rounds = (uint32_t)((ran_ns - first) / l->ckpt_every_ns + 1);
            next = l->ckpt_every_ns - (ran_ns - first) % l->ckpt_every_ns;
        } else {
            next = first - ran_ns;
        }
        struct timeval tv = ns_tv(next);
        j->ckpt_ev = evtimer_new(a->base, on_ckpt, j);
        if (j->ckpt_ev)
            evtimer_add(j->ckpt_ev, &tv);
    }
    if ((l->time_limit_ns > 0 && !j->warn_ev) || (l->ckpt_every_ns > 0 && !j->ckpt_ev))
        dr_agent_log(a, "job %llu.%u rank %u: out of memory: no warning signal",
                     (unsigned long long)j->job, j->gen, j->rank);
}

void dr_agent_warn_stop(dr_agent_job_t *j)
{
    if (j->warn_ev) {
        event_free(j->warn_ev);
        j->warn_ev = NULL;
    }
    if (j->ckpt_ev) {
        event_free(j->ckpt_ev);
        j->ckpt_ev = NULL;
    }
}

int dr_agent_signal(dr_agent_t *a, const dr_msg_signal_t *m)
{
    int n = 0;
    for (size_t i = 0; i < a->njobs; i++) {
        dr_agent_job_t *j = a->jobs[i];
        if (j->job != m->job || j->gen != m->gen || !j->running)
            continue;
        if (dr_agent_warn_send(a, j, m->signal))
            n++;
    }
    dr_agent_log(a, "job %llu.%u: signal %d (%s) to %d rank%s", (unsigned long long)m->job, m->gen,
                 m->signal, m->why == DR_SIG_PREEMPT ? "preemption" : "drain", n,
                 n == 1 ? "" : "s");
    return n;
}
