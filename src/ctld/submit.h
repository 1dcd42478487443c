/* submit.h - a checked job enters the queue (submit.c). */
#ifndef DROVER_CTLD_SUBMIT_H
#define DROVER_CTLD_SUBMIT_H

#include "ctld/ctld.h"

/* The steps of a submit, in order.  A new job from the API's JSON body
 * (*out is set even on error, for ctld_job_free).  Checked: valid, fits the
 * cluster, its array or service set up, its dependencies and account's
 * MaxQueuedJobs (DR_ELIMIT: *limit_status is 413 for the request's own
 * size, 429 for the account's queue; DR_ENOSPC: more than the cluster
 * has).  Accepted: owned by user, given an id, in the job table, and held,
 * waiting for dependencies or queued (ctld_submit); freed on error.  The
 * turn then commits it before the reply goes out. */
int ctld_job_new(const char *body, size_t len, ctld_job_t **out, dr_err_t *err);
int ctld_job_check(dr_ctld_t *c, ctld_job_t *cj, const char *user, dr_time_t now, int *limit_status,
                   dr_err_t *err);
int ctld_job_accept(dr_ctld_t *c, ctld_job_t *cj, const char *user, uint32_t uid, uint32_t gid,
                    dr_time_t now, dr_err_t *err);
/* Into the scheduler's queue (an array: the turn's list of parents). */
int ctld_submit(dr_ctld_t *c, ctld_job_t *cj, dr_err_t *err);
/* What a pending job waits for, in the user's words (cj->reason). */
void ctld_pending_reason(dr_ctld_t *c, ctld_job_t *cj);

#endif
