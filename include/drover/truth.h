/* truth.h - what a job will really do: the simulator's knowledge.
 *
 * A real scheduler never knows how much work a job will do before it ends
 * (it may end early: failure, early stop, cancellation); it knows what the
 * user declared (dr_job_t.work_declared, time_limit) and what the job has
 * shown (work_done, attained_gpu_s).  The truth therefore lives outside
 * dr_job_t, in a table the simulator owns.  The scheduler hands it only to
 * policies flagged oracle (dr_policy_ops_t.oracle), through
 * dr_sched_view_t.truth; every other policy sees NULL there, and
 * scripts/lint rejects this header in any src/sched file but the oracle
 * policies'. */
#ifndef DROVER_TRUTH_H
#define DROVER_TRUTH_H

#include <stddef.h>

#include "drover/job.h"
#include "drover/time.h"

typedef struct dr_truth {
    const dr_job_t *jobs; /* the array work[] is aligned with */
    const double *work;   /* work[i]: the total work jobs[i] really does */
    size_t n;
} dr_truth_t;

/* Total true work of j (NAN if j is not one of t->jobs). */
double dr_truth_work(const dr_truth_t *t, const dr_job_t *j);
/* True work left at now (0 once done; NAN if j is not in the table). */
double dr_truth_remaining(const dr_truth_t *t, const dr_job_t *j, dr_time_t now);

#endif
