/* arrays.h - array tasks and a parent's children (arrays.c). */
#ifndef DROVER_CTLD_ARRAYS_H
#define DROVER_CTLD_ARRAYS_H

#include "ctld/ctld.h"

/* A parent's new child (an array task, a service's run): its job from the
 * parent's spec, inserted, submitted and live.  NULL with err->code
 * DR_EINVAL when the spec no longer fits the cluster, else DR_ENOMEM. */
ctld_job_t *ctld_child_new(dr_ctld_t *c, ctld_job_t *parent, uint32_t index, uint8_t kind,
                           dr_time_t submit, dr_err_t *err);
int ctld_array_feed(dr_ctld_t *c, ctld_job_t *parent, dr_time_t now);
void ctld_array_task_ended(dr_ctld_t *c, ctld_job_t *task);
int ctld_array_setup(dr_ctld_t *c, ctld_job_t *parent, dr_err_t *err);
/* The parents the turn feeds (arrays.c owns the list). */
int ctld_arrays_init(dr_ctld_t *c);
void ctld_arrays_free(dr_ctld_t *c);
int ctld_arrays_add(dr_ctld_t *c, ctld_job_t *parent);
void ctld_arrays_drop(dr_ctld_t *c, ctld_job_t *parent);
size_t ctld_arrays_list(const dr_ctld_t *c, ctld_job_t *const **v);
void ctld_arrays_feed(dr_ctld_t *c, dr_time_t now);

#endif
