/* kill.h - KILL frames and cancel (kill.c). */
#ifndef DROVER_CTLD_KILL_H
#define DROVER_CTLD_KILL_H

#include "ctld/ctld.h"

/* How long a killed rank's processes have after SIGTERM before SIGKILL. */
#define CTLD_KILL_GRACE_NS (10 * DR_NSEC_PER_SEC)

/* KILL to every node with a live rank of the job's generation: all of its
 * processes (step 0) or step s - 1's tasks (s). */
void ctld_send_kill(dr_ctld_t *c, ctld_job_t *cj, uint32_t step, int sig, const char *why);
/* A rank that will not start: its KILL was sent before it did. */
bool ctld_rank_stopped(const ctld_job_t *cj, uint32_t rank);
/* A registering agent still runs ranks on `node` that were told to stop
 * (a cancel, a failed rank, a step's end) before a controller crash may
 * have kept the KILL from going out: send it again. */
void ctld_kill_again(dr_ctld_t *c, ctld_job_t *cj, uint32_t node);
/* KILL to every live rank of the job (step 0), why in its reason. */
void ctld_kill_ranks(dr_ctld_t *c, ctld_job_t *cj, const char *why);
int ctld_cancel(dr_ctld_t *c, ctld_job_t *cj, const char *why, dr_err_t *err);

#endif
