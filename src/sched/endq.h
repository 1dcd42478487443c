/* endq.h - private interface of the running-jobs-by-end skip list. */
#ifndef DROVER_SCHED_ENDQ_H
#define DROVER_SCHED_ENDQ_H

#include "drover/sched.h"

dr_endq_t *dr_endq_create(void);
void dr_endq_destroy(dr_endq_t *q);
size_t dr_endq_size(const dr_endq_t *q);
int dr_endq_insert(dr_endq_t *q, dr_job_t *j, dr_time_t key);
int dr_endq_remove(dr_endq_t *q, const dr_job_t *j, dr_time_t key);

#endif
