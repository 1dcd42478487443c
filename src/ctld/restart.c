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
#include "ctld/fence.h"
#include "ctld/restart.h"
#include "ctld/stop.h"
#include "ctld/turn.h"

static void restart_release(ctld_job_t *cj)
{
    free(cj->prev_nodes);
    cj->prev_nodes = NULL;
    cj->nprev_nodes = 0;
    free(cj->stale);
    cj->stale = NULL;
    cj->nstale = cj->stale_cap = 0;
}

bool ctld_restart_holds(dr_ctld_t *c, ctld_job_t *cj)
{
    if (!cj->prev_nodes)
        return false;
    int64_t since = ctld_boot_ns() - c->start_boot, after = ctld_requeue_after(c);
    bool all = true;
    for (uint32_t i = 0; i < cj->nprev_nodes && all; i++)
        all = cj->prev_nodes[i] < c->cl.nnodes && c->nodes[cj->prev_nodes[i]].registered;
    if (((all || since > after) && !cj->nstale) || since > 2 * after) {
        restart_release(cj);
        return false;
    }
    if (!cj->launch_wait) {
        if (ctld_stop_wait_add(c, cj) != DR_OK) {
            restart_release(cj); /* out of memory: it launches now, as before */
            return false;
        }
        cj->launch_wait = true;
    }
    return true;
}

void ctld_restart_stale(dr_ctld_t *c, uint32_t node, uint64_t job, uint32_t gen, uint32_t rank,
                        bool running)
{
    ctld_job_t *cj = ctld_job_find(c, job);
    if (!cj || !cj->prev_nodes)
        return;
    size_t i = 0;
    while (i < cj->nstale &&
           !(cj->stale[i].node == node && cj->stale[i].gen == gen && cj->stale[i].rank == rank))
        i++;
    /* a set, not a count: the same rank reported running twice (a REGISTER
     * and its JOB_STATE), or its end twice (resent until acknowledged), is
     * one rank - counting them let a duplicate end release the hold while
     * another node's old rank still ran (the chaos suite, seed 3009) */
    if (running && i == cj->nstale &&
        DR_PUSH(cj->stale, cj->nstale, cj->stale_cap,
                ((struct ctld_stale_rank){node, gen, rank})) != 0)
        return; /* out of memory: the hold ends with the lease instead */
    if (!running && i < cj->nstale)
        cj->stale[i] = cj->stale[--cj->nstale];
    ctld_want_pass(c);
}
