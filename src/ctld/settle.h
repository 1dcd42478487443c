/* settle.h - rank reports and a job's end (settle.c). */
#ifndef DROVER_CTLD_SETTLE_H
#define DROVER_CTLD_SETTLE_H

#include "ctld/ctld.h"

void ctld_rank_started(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank);
void ctld_rank_ended(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank, const dr_msg_job_state_t *m);
/* The job's end once its own processes (and then its steps) are over. */
void ctld_job_settle(dr_ctld_t *c, ctld_job_t *cj);
/* The run of cj is over (charge it, give its MASTER_PORT back). */
void ctld_run_over(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now);
/* cj reached a terminal state: its dependants, parent and eviction. */
void ctld_job_finished(dr_ctld_t *c, ctld_job_t *cj);

#endif
