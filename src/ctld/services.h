/* services.h - kind serve, --replicas (services.c). */
#ifndef DROVER_CTLD_SERVICES_H
#define DROVER_CTLD_SERVICES_H

#include "ctld/ctld.h"

struct json_t;
bool ctld_spec_is_service(const dr_jobspec_t *sp);
int ctld_service_setup(dr_ctld_t *c, ctld_job_t *parent, dr_err_t *err);
/* Start runs for empty slots, stop drained ones, advance a rolling restart. */
void ctld_service_feed(dr_ctld_t *c, ctld_job_t *parent, dr_time_t now);
void ctld_service_run_ended(dr_ctld_t *c, ctld_job_t *run);
void ctld_service_run_requeued(dr_ctld_t *c, ctld_job_t *run); /* its node was lost */
void ctld_service_run_reloaded(dr_ctld_t *c, ctld_job_t *run);
void ctld_service_ready(dr_ctld_t *c, ctld_job_t *run, bool ready); /* the agent's report */
int ctld_service_scale(dr_ctld_t *c, ctld_job_t *parent, uint32_t want, dr_err_t *err);
int ctld_service_restart(dr_ctld_t *c, ctld_job_t *parent, dr_err_t *err);
struct json_t;
void ctld_service_json(dr_ctld_t *c, const ctld_job_t *cj, struct json_t *o);
struct json_t *ctld_service_rt(const ctld_job_t *parent);       /* the store's */
int ctld_service_rt_load(ctld_job_t *parent, struct json_t *o); /* its reload */
bool ctld_service_timers_due(dr_ctld_t *c, dr_time_t now);      /* a turn has work */

#endif
