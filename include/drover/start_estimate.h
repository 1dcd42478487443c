/* start_estimate.h - when would a new job start? (`sbatch --test-only`)
 *
 * A pure estimate over a snapshot: the cluster as booked now, the running
 * jobs with the times their limits end, and the pending jobs ahead of the
 * new one in the queue's order.  Running jobs are assumed to end at their
 * limits (a scheduler knows only the limits, never true run times), and
 * each job ahead is given, in order, the earliest reservation that fits
 * around everything placed before it (conservative backfill), so the new
 * job's time is what it would get behind them.  What else holds a start
 * back is followed as the controller enforces it: a held job starts never
 * (until released) and reserves nothing; a job waiting for dependencies
 * starts no earlier than they hold, as the estimate dates the jobs they
 * name (a running one's limit, a planned one's reservation); a job whose
 * account is at its MaxRunningGpus limits (account.h) starts no earlier
 * than its account's running jobs and reservations leave room.  Nothing
 * here changes the caller's cluster. */
#ifndef DROVER_START_ESTIMATE_H
#define DROVER_START_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>

#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/job.h"
#include "drover/time.h"

/* A running job: what it holds (booked in the cluster given), when its
 * limit ends it (DR_TIME_NEVER: no limit, it holds its allocation for
 * good), its id (for dependencies on it; 0: none) and its account (1 + the
 * cluster's account index, 0: none), whose limits count what it holds. */
typedef struct dr_est_running {
    const dr_alloc_t *alloc;
    dr_time_t end;
    uint64_t id;
    uint32_t account;
} dr_est_running_t;

/* One job a waiting job depends on: job `job` (a running one or one of
 * the jobs ahead, by id) or, with job 0, a time the caller already knows
 * (`at`: at or before now for a dependency that holds already,
 * DR_TIME_NEVER for one that never will).  on_start: it holds once that
 * job has started (after:), else once it has ended (afterok, afterany,
 * afternotok, singleton: an estimate has every job run to its limit and
 * end as asked).  A job named that is neither running nor ahead is not
 * planned: the job waiting for it gets no start.  The refs of one term
 * (same `term`) must all hold; the terms must all hold, or with dep_any
 * any one of them. */
typedef struct dr_est_dep {
    uint64_t job;
    dr_time_t at;
    uint32_t term;
    bool on_start;
} dr_est_dep_t;

/* A job that waits: its request, its time limit (0: none), its id (for
 * dependencies on it; 0 for the new job), its account (as above), whether
 * it is held, and its dependencies (none: ndeps 0). */
typedef struct dr_est_job {
    const dr_job_req_t *req;
    dr_time_t limit;
    uint64_t id;
    uint32_t account;
    bool held;
    const dr_est_dep_t *deps;
    size_t ndeps;
    bool dep_any;
} dr_est_job_t;

typedef struct dr_start_est {
    dr_time_t start;     /* DR_TIME_NEVER: it never starts (reason says why) */
    dr_alloc_t alloc;    /* where (empty when never); free with dr_alloc_free */
    size_t ahead_placed; /* jobs ahead that got a reservation */
    size_t ahead_held;   /* held jobs ahead: nothing reserved */
    /* jobs ahead whose dependencies do not hold within the estimate (they
     * wait for a held job, one not planned, one that never starts): nothing
     * reserved */
    size_t ahead_waiting;
    char reason[512]; /* why never, "" otherwise (dr_err_t.msg fits) */
    /* What set a later start, when one of these did ("" otherwise): its
     * own dependency, a job ahead held back by its dependency whose
     * reservation it waits for, its account's limit; "; " between them. */
    char why[384];
} dr_start_est_t;

/* Estimate when `job` starts after the `ahead` jobs (in that order; a job
 * ahead waiting for one later in the order is planned once that one is).
 * c must be finalised, with every running job's allocation booked.  The
 * estimate is DR_TIME_NEVER when the request exceeds the cluster (reason
 * from dr_cluster_req_possible), when what it needs is held for good (jobs
 * without limits, nodes down or drained), when it is held, or when its
 * dependencies never hold within the estimate.  Returns DR_ENOMEM or
 * DR_EINVAL (a running allocation that does not match the cluster) in err;
 * DR_OK otherwise, never included. */
int dr_start_estimate(const dr_cluster_t *c, dr_time_t now, const dr_est_running_t *run,
                      size_t nrun, const dr_est_job_t *ahead, size_t nahead,
                      const dr_est_job_t *job, dr_start_est_t *out, dr_err_t *err);

#endif
