/* submit.h - a checked job enters the queue (submit.c). */
#ifndef DROVER_CTLD_SUBMIT_H
#define DROVER_CTLD_SUBMIT_H

#include "ctld/ctld.h"

int ctld_submit(dr_ctld_t *c, ctld_job_t *cj, dr_err_t *err);
/* What a pending job waits for, in the user's words (cj->reason). */
void ctld_pending_reason(dr_ctld_t *c, ctld_job_t *cj);

#endif
