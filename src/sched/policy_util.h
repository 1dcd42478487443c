/* policy_util.h - helpers the policies share (private to src/sched). */
#ifndef DROVER_SCHED_POLICY_UTIL_H
#define DROVER_SCHED_POLICY_UTIL_H

#include <stdbool.h>

#include "drover/sched.h"

/* An array task whose parent already runs `throttle` tasks must wait. */
bool dr_sched_throttled(const dr_sched_t *s, const dr_job_t *j);
void dr_sched_count_considered(dr_sched_t *s, size_t n);
/* "fifo, backfill, ..." for error messages. */
const char *dr_policy_names_joined(void);

/* Try to place and start j now; DR_OK if started, DR_ENOSPC if it does not
 * fit, other errors are real failures. */
int dr_policy_try_start(const dr_sched_view_t *v, dr_job_t *j);

/* Policy options: "key=val,key=val".  Calls fn for each pair; unknown keys
 * are the callback's to reject. */
int dr_policy_opts_each(const char *opts,
                        int (*fn)(void *ud, const char *k, const char *v, dr_err_t *err), void *ud,
                        dr_err_t *err);

#endif
