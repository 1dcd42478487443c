/* deps.h - --dependency (deps.c). */
#ifndef DROVER_CTLD_DEPS_H
#define DROVER_CTLD_DEPS_H

#include "ctld/ctld.h"

int ctld_deps_check(dr_ctld_t *c, const dr_jobspec_t *sp, dr_err_t *err); /* at submit */
int ctld_deps_hold(dr_ctld_t *c, ctld_job_t *cj); /* wait here instead of the queue */
void ctld_deps_turn(dr_ctld_t *c);                /* release what may run now */
/* cj's dependencies as the start estimate takes them (start_estimate.h):
 * each one already decided as a time (holds: now; never: DR_TIME_NEVER),
 * the others by the id of the job they wait for - a task by its own id,
 * an array by each of its tasks once all are queued, else by the array's
 * id, which the estimate does not plan.  id: cj's (a test-only job's
 * would-be id, for singleton).  *out is malloc'd (NULL with none). */
int ctld_deps_estimate(dr_ctld_t *c, const ctld_job_t *cj, uint64_t id, dr_time_t now,
                       dr_est_dep_t **out, size_t *n);
/* The jobs waiting here for their dependencies (deps.c owns the list). */
int ctld_deps_init(dr_ctld_t *c);
void ctld_deps_free(dr_ctld_t *c);
/* A job started, ended, was held or released: look at the waiting again. */
void ctld_deps_recheck(dr_ctld_t *c);
bool ctld_deps_waiting(const dr_ctld_t *c, const ctld_job_t *cj);
size_t ctld_deps_list(const dr_ctld_t *c, ctld_job_t *const **v);

#endif
