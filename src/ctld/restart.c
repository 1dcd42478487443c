/* restart.c - a restarted controller does not start a job again while its
 * last generation may still run.
 *
 * A job that had run and was waiting to run again when the controller died
 * (requeued, or preempted and still stopping: that stop lives in memory
 * only) may have ranks of its old generation on nodes whose agents have
 * not registered with this controller yet; an agent that has registered
 * was sent a SIGKILL for them (a stale generation) but may not have
 * reported their end.  Its next launch waits, as a launch held for a
 * preempted job does (stop.c), until every node of its last run has
 * registered and no killed old rank is still running - or until the lease
 * since this controller's start is over (an agent that never came back
 * has stopped its jobs by then), plus one more lease for the reports of
 * old ranks that were killed. */
#include <stdlib.h>

#include "ctld/ctld.h"

static void restart_release(ctld_job_t *cj)
{
    free(cj->prev_nodes);
    cj->prev_nodes = NULL;
    cj->nprev_nodes = 0;
    cj->stale_running = 0;
}

bool ctld_restart_holds(dr_ctld_t *c, ctld_job_t *cj)
{
    if (!cj->prev_nodes)
        return false;
    int64_t since = ctld_boot_ns() - c->start_boot, after = ctld_requeue_after(c);
    bool all = true;
    for (uint32_t i = 0; i < cj->nprev_nodes && all; i++)
        all = cj->prev_nodes[i] < c->cl.nnodes && c->nodes[cj->prev_nodes[i]].registered;
    if (((all || since > after) && !cj->stale_running) || since > 2 * after) {
        restart_release(cj);
        return false;
    }
    if (!cj->launch_wait) {
        if (DR_PUSH(c->waits, c->nwaits, c->waits_cap, cj) != 0) {
            restart_release(cj); /* out of memory: it launches now, as before */
            return false;
        }
        cj->launch_wait = true;
    }
    return true;
}

void ctld_restart_stale(dr_ctld_t *c, uint64_t job, bool running)
{
    ctld_job_t *cj = ctld_job_find(c, job);
    if (!cj || !cj->prev_nodes)
        return;
    if (running)
        cj->stale_running++;
    else if (cj->stale_running)
        cj->stale_running--;
    ctld_want_pass(c);
}
