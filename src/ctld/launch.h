/* launch.h - a started job's ranks and LAUNCH frames (launch.c). */
#ifndef DROVER_CTLD_LAUNCH_H
#define DROVER_CTLD_LAUNCH_H

#include "ctld/ctld.h"

/* A job the pass started: set up its ranks and send their LAUNCHes
 * (held while cj->launch_wait is set, stop.c). */
void ctld_launch_job(dr_ctld_t *c, ctld_job_t *cj);
int ctld_launch_rank(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank);
/* The job's GPUs on `node` (indices there, in allocation order) into gpus
 * (room for DR_MAX_GPUS_PER_NODE); returns how many. */
uint32_t ctld_job_gpus(const ctld_job_t *cj, uint32_t node, uint32_t *gpus);
/* The job's output and error paths (-o/-e, else drover-%j.out in its
 * working directory), expanded for this run. */
void ctld_job_set_paths(dr_ctld_t *c, ctld_job_t *cj);

#endif
