/* ckpt.h - checkpoint directories and the agents' restart reports (ckpt.c). */
#ifndef DROVER_CTLD_CKPT_H
#define DROVER_CTLD_CKPT_H

#include "ctld/ctld.h"

/* The job's checkpoint directory into out; false when it has none (it
 * declares no --checkpoint-every, or has no absolute working directory). */
bool ctld_ckpt_dir(const dr_ctld_t *c, const ctld_job_t *cj, char *out, size_t len);
/* DROVER_CHECKPOINT_KEEP and DROVER_CHECKPOINT_EVERY (seconds). */
void ctld_ckpt_env(const dr_ctld_t *c, const ctld_job_t *cj, dr_strvec_t *env);
/* An agent's CKPT report for the job's current generation: to its events. */
void ctld_ckpt_report(dr_ctld_t *c, ctld_job_t *cj, int node, const dr_msg_ckpt_t *m);
/* The running job's first node registers and no report of its generation
 * was stored (sent, then lost with a crashed controller): say so. */
void ctld_ckpt_report_lost(dr_ctld_t *c, ctld_job_t *cj, int node);

#endif
