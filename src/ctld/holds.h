/* holds.h - holds and priority changes (holds.c). */
#ifndef DROVER_CTLD_HOLDS_H
#define DROVER_CTLD_HOLDS_H

#include "ctld/ctld.h"

typedef enum ctld_hold { CTLD_HOLD_NONE = 0, CTLD_HOLD_USER, CTLD_HOLD_ADMIN } ctld_hold_t;
const char *ctld_hold_name(uint8_t hold); /* "user", "admin"; NULL for none */
void ctld_hold_reason(ctld_job_t *cj);    /* Slurm's JobHeldUser / JobHeldAdmin */
/* Hold a pending job (or the tasks not yet started of an array): DR_ESTATE
 * (409) when nothing is left to hold. */
int ctld_hold(dr_ctld_t *c, ctld_job_t *cj, bool admin, dr_err_t *err);
/* Release it: DR_ESTATE when not held, DR_EINVAL (403) for an operator's
 * hold released by someone who is not one. */
int ctld_release(dr_ctld_t *c, ctld_job_t *cj, bool admin, dr_err_t *err);
/* A job's (an array's: every task's) new priority; a pending job moves in
 * the queue at once. */
int ctld_set_priority(dr_ctld_t *c, ctld_job_t *cj, int32_t prio, dr_err_t *err);

#endif
