/* steps.h - srun inside a job (steps.c). */
#ifndef DROVER_CTLD_STEPS_H
#define DROVER_CTLD_STEPS_H

#include "ctld/ctld.h"

struct json_t;
void ctld_step_request(dr_ctld_t *c, int node, dr_msg_step_req_t *m); /* may take m's contents */
void ctld_step_cancel(dr_ctld_t *c, int node, const dr_msg_step_cancel_t *m);
void ctld_step_task_ended(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank);
int ctld_step_launch(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank);
void ctld_steps_free(ctld_job_t *cj);
struct json_t *ctld_steps_json(const dr_ctld_t *c, const ctld_job_t *cj); /* the API's "steps" */
struct json_t *ctld_steps_rt(const ctld_job_t *cj);                       /* the store's */
int ctld_steps_load(ctld_job_t *cj, struct json_t *a);

#endif
