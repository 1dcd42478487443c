/* lease.c - the agent's lease: cut off from its controller for longer than
 * the lease the controller gave it in WELCOME, the agent stops its jobs on
 * its own, so that the controller may requeue them elsewhere once the lease
 * is over without a job ever running in two places.
 *
 * The lease runs from the time the agent sent the last heartbeat the
 * controller answered (a LEASE message naming that heartbeat's sequence
 * number), on the agent's own clock.  The controller heard that heartbeat
 * after it was sent, so "last heard + lease" on the controller always comes
 * after the end of the lease here.  By the end of the lease every rank has
 * had SIGKILL: SIGTERM goes out min(the rank's grace, lease / 2) before it.
 * CLOCK_BOOTTIME, not CLOCK_MONOTONIC: a suspended machine's lease runs on
 * while it sleeps, as the controller's clock does.
 *
 * A stopped agent (SIGSTOP, a hung machine) cannot kill anything: when it
 * runs again the lease is checked before any frame from the controller is
 * handled (link.c calls dr_agent_lease_check first), so its jobs are
 * stopped before it does anything else.  Until the ranks it stopped have
 * ended the agent does not reconnect; then its REGISTER reports them
 * (why = lease) and the log says what was stopped and why. */
#include "agent/agent.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <event2/event.h>

int64_t dr_agent_boot_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* When the rank gets SIGTERM: its grace before the end of the lease, at
 * most half the lease. */
static int64_t term_at(const dr_agent_t *a, const dr_agent_job_t *j)
{
    int64_t g = j->grace_ns;
    if (g > a->lease_ns / 2)
        g = a->lease_ns / 2;
    if (g < 0)
        g = 0;
    return a->lease_from + a->lease_ns - g;
}

static void lease_arm(dr_agent_t *a);

static void on_lease_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    dr_agent_lease_check(arg);
}

/* The next time the lease needs looking at: the first SIGTERM due. */
static void lease_arm(dr_agent_t *a)
{
    if (!a->lease_ev)
        a->lease_ev = evtimer_new(a->base, on_lease_timer, a);
    if (!a->lease_ev)
        return;
    evtimer_del(a->lease_ev);
    if (!a->lease_ns)
        return;
    int64_t next = a->lease_from + a->lease_ns;
    for (size_t i = 0; i < a->njobs; i++) {
        const dr_agent_job_t *j = a->jobs[i];
        if (j->running && !j->lease_stop) {
            int64_t t = term_at(a, j);
            if (t < next)
                next = t;
        }
    }
    int64_t d = next - dr_agent_boot_ns();
    if (d < 0)
        d = 0;
    struct timeval tv = {(time_t)(d / 1000000000LL), (suseconds_t)(d % 1000000000LL / 1000) + 1};
    evtimer_add(a->lease_ev, &tv);
}

void dr_agent_lease_start(dr_agent_t *a, int64_t lease_ns, int64_t from)
{
    a->lease_ns = lease_ns > 0 ? lease_ns : 0;
    a->lease_from = from;
    dr_agent_lease_page_set(a, a->lease_ns ? from + a->lease_ns : 0, a->lease_ns);
    lease_arm(a);
}

void dr_agent_lease_renew(dr_agent_t *a, int64_t from)
{
    if (from <= a->lease_from || a->lease_lapsed)
        return;
    a->lease_from = from;
    dr_agent_lease_page_set(a, from + a->lease_ns, a->lease_ns);
    lease_arm(a);
}

bool dr_agent_lease_busy(const dr_agent_t *a)
{
    if (!a->lease_lapsed)
        return false;
    for (size_t i = 0; i < a->njobs; i++)
        if (a->jobs[i]->running)
            return true;
    return false;
}

/* Format Unix ns as an ISO 8601 UTC time with milliseconds. */
static void fmt_utc(int64_t ns, char *out, size_t n)
{
    time_t s = (time_t)(ns / 1000000000LL);
    struct tm tm;
    gmtime_r(&s, &tm);
    char b[32];
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, n, "%s.%03dZ", b, (int)(ns % 1000000000LL / 1000000));
}

bool dr_agent_lease_check(dr_agent_t *a)
{
    if (!a->lease_ns || a->stopping)
        return false;
    int64_t now = dr_agent_boot_ns(), end = a->lease_from + a->lease_ns;
    bool over = now >= end;
    size_t nterm = 0;
    for (size_t i = 0; i < a->njobs; i++) {
        dr_agent_job_t *j = a->jobs[i];
        if (!j->running)
            continue;
        int64_t t = term_at(a, j);
        if (now < t)
            continue;
        if (j->lease_stop) {
            if (over)
                (void)dr_agent_job_kill(a, j, SIGKILL, true); /* the grace ran out with the lease */
            continue;
        }
        if (!a->lease_lapsed) {
            char at[40];
            fmt_utc(dr_agent_now_ns() - (now - a->lease_from), at, sizeof at);
            dr_agent_log(a,
                         "lease: no answer from the controller since %s (%.1f s; lease %.1f s): "
                         "stopping every job here (the controller requeues them elsewhere)",
                         at, (double)(now - a->lease_from) / 1e9, (double)a->lease_ns / 1e9);
            a->lease_lapsed = true;
            dr_agent_link_drop(a, "lease expired");
        }
        int64_t grace = end - now > 0 ? end - now : 0;
        j->lease_stop = true;
        nterm++;
        if (j->killing) {
            /* already being stopped (a KILL, its time limit): that cause
             * stands, but SIGKILL comes by the end of the lease */
            dr_agent_log(a, "job %llu.%u rank %u: lease expired while it stops: SIGKILL in %.1f s",
                         (unsigned long long)j->job, j->gen, j->rank, (double)grace / 1e9);
            struct timeval at, tnow, left,
                g = {(time_t)(grace / 1000000000LL), (suseconds_t)(grace % 1000000000LL / 1000)};
            if (j->grace_ev && event_pending(j->grace_ev, EV_TIMEOUT, &at) &&
                event_base_gettimeofday_cached(a->base, &tnow) == 0) {
                timersub(&at, &tnow, &left);
                if (timercmp(&left, &g, >))
                    evtimer_add(j->grace_ev, &g);
            } else if (!grace) {
                (void)dr_agent_job_kill(a, j, SIGKILL, true);
            }
            continue;
        }
        dr_agent_log(a, "job %llu.%u rank %u: lease expired: SIGTERM, SIGKILL in %.1f s",
                     (unsigned long long)j->job, j->gen, j->rank, (double)grace / 1e9);
        dr_agent_job_signal(a, j, grace ? SIGTERM : SIGKILL, grace, DR_END_LEASE);
    }
    if (over && !a->lease_lapsed && a->link) {
        /* nothing to stop, but the session is as good as gone */
        dr_agent_log(a, "lease: no answer from the controller for %.1f s (lease %.1f s)",
                     (double)(now - a->lease_from) / 1e9, (double)a->lease_ns / 1e9);
        a->lease_lapsed = true;
        dr_agent_link_drop(a, "lease expired");
    }
    if (!over)
        lease_arm(a);
    return nterm > 0 || a->lease_lapsed;
}

void dr_agent_lease_report(dr_agent_t *a)
{
    if (!a->lease_lapsed)
        return;
    size_t n = 0;
    for (size_t i = 0; i < a->njobs; i++) {
        const dr_agent_job_t *j = a->jobs[i];
        if (!j->running && j->why == DR_END_LEASE) {
            char at[40];
            fmt_utc(j->end_ns, at, sizeof at);
            dr_agent_log(a,
                         "lease: job %llu.%u rank %u was stopped when the lease expired "
                         "(ended %s, %s %d)",
                         (unsigned long long)j->job, j->gen, j->rank, at,
                         j->signal ? "signal" : "exit", j->signal ? j->signal : j->exit_code);
            n++;
        }
    }
    dr_agent_log(a,
                 "lease: the controller answers again; %zu rank%s stopped while cut off %s "
                 "reported in this registration",
                 n, n == 1 ? "" : "s", n == 1 ? "is" : "are");
    a->lease_lapsed = false;
}

void dr_agent_lease_free(dr_agent_t *a)
{
    if (a->lease_ev)
        event_free(a->lease_ev);
    a->lease_ev = NULL;
}
