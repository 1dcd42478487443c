/* policy_fifo.c - strict first-in first-out.
 *
 * Jobs start in queue order (priority, then submit time); the first job
 * that does not fit blocks everything behind it.  The reference every
 * other policy is measured against, and what a naive cluster does. */
#include "drover/sched.h"
#include "sched/policy_util.h"

static int fifo_create(void **state, const char *opts, const dr_policy_env_t *env, dr_err_t *err)
{
    *state = NULL;
    if (opts && *opts)
        return dr_err_set(err, DR_EINVAL, "fifo takes no options (got '%s')", opts);
    return DR_OK;
}

static int fifo_pass(void *state, const dr_sched_view_t *v, dr_time_t *wake_at, dr_err_t *err)
{
    (void)state;
    size_t i = 0;
    for (; i < v->npending; i++) {
        dr_job_t *j = v->pending[i];
        if (dr_sched_throttled(v->sched, j))
            continue; /* throttled array tasks wait without blocking others */
        int rc = dr_policy_try_start(v, j);
        if (rc == DR_ENOSPC && dr_sched_account_blocked(v->sched, j))
            continue; /* held back by its account's limits: not a queue blocker */
        if (rc == DR_ENOSPC)
            break;
        if (rc != DR_OK) {
            dr_sched_count_considered(v->sched, i + 1);
            return dr_err_set(err, rc, "fifo: starting job %llu failed", (unsigned long long)j->id);
        }
    }
    dr_sched_count_considered(v->sched, i < v->npending ? i + 1 : i);
    *wake_at = DR_TIME_NEVER;
    return DR_OK;
}

static void fifo_destroy(void *state)
{
    (void)state;
}

const dr_policy_ops_t dr_policy_fifo = {
    .name = "fifo",
    .doc = "strict first-come first-served; the first job that does not fit blocks the queue",
    .oracle = false,
    .create = fifo_create,
    .pass = fifo_pass,
    .destroy = fifo_destroy,
};
