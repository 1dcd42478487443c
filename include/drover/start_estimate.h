/* start_estimate.h - when would a new job start? (`sbatch --test-only`)
 *
 * A pure estimate over a snapshot: the cluster as booked now, the running
 * jobs with the times their limits end, and the pending jobs ahead of the
 * new one in priority order.  Running jobs are assumed to end at their
 * limits (a scheduler knows only the limits, never true run times), and
 * each job ahead is given, in order, the earliest reservation that fits
 * around everything placed before it (conservative backfill), so the new
 * job's time is what it would get behind them.  Nothing here changes the
 * caller's cluster. */
#ifndef DROVER_START_ESTIMATE_H
#define DROVER_START_ESTIMATE_H

#include <stddef.h>

#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/job.h"
#include "drover/time.h"

/* A running job: what it holds (booked in the cluster given) and when its
 * limit ends it (DR_TIME_NEVER: no limit, it holds its allocation for good). */
typedef struct dr_est_running {
    const dr_alloc_t *alloc;
    dr_time_t end;
} dr_est_running_t;

/* A job that waits: its request and its time limit (0: none). */
typedef struct dr_est_job {
    const dr_job_req_t *req;
    dr_time_t limit;
} dr_est_job_t;

typedef struct dr_start_est {
    dr_time_t start;     /* DR_TIME_NEVER: it never starts (reason says why) */
    dr_alloc_t alloc;    /* where (empty when never); free with dr_alloc_free */
    size_t ahead_placed; /* jobs ahead that got a reservation */
    char reason[512];    /* why never, "" otherwise (dr_err_t.msg fits) */
} dr_start_est_t;

/* Estimate when `job` starts after the `ahead` jobs (in that order).  c must
 * be finalised, with every running job's allocation booked.  The estimate
 * is DR_TIME_NEVER when the request exceeds the cluster (reason from
 * dr_cluster_req_possible) or when what it needs is held for good (jobs
 * without limits, nodes down or drained).  Returns DR_ENOMEM or DR_EINVAL
 * (a running allocation that does not match the cluster) in err; DR_OK
 * otherwise, never included. */
int dr_start_estimate(const dr_cluster_t *c, dr_time_t now, const dr_est_running_t *run,
                      size_t nrun, const dr_est_job_t *ahead, size_t nahead,
                      const dr_est_job_t *job, dr_start_est_t *out, dr_err_t *err);

#endif
