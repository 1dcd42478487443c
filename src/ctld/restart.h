/* restart.h - what a restarted controller holds back (restart.c). */
#ifndef DROVER_CTLD_RESTART_H
#define DROVER_CTLD_RESTART_H

#include "ctld/ctld.h"

/* Must cj, reloaded by a restarted controller after having run, wait before
 * its next launch, because its last generation may still run (restart.c)? */
bool ctld_restart_holds(dr_ctld_t *c, ctld_job_t *cj);
/* An agent on `node` holds (running) or reported the end of (!running) a
 * rank of job `job` that is not current (an old generation: killed). */
void ctld_restart_stale(dr_ctld_t *c, uint32_t node, uint64_t job, uint32_t gen, uint32_t rank,
                        bool running);

#endif
