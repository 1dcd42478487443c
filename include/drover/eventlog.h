/* eventlog.h - the append-only job event log.
 *
 * Every state change of every job is one record (time, job, from, to, GPU
 * type, milli-GPUs held, detail).  Accounting, reports and replay are all
 * computed from this log; nothing else is trusted.  Records are appended in
 * time order by the scheduler core and never modified. */
#ifndef DROVER_EVENTLOG_H
#define DROVER_EVENTLOG_H

#include <stddef.h>
#include <stdint.h>

#include "drover/error.h"
#include "drover/job.h"
#include "drover/time.h"
#include "drover/util.h"

typedef struct dr_event {
    dr_time_t t;
    uint64_t job;
    uint8_t from, to; /* dr_job_state_t; from == to == PENDING for submit */
    uint16_t type;    /* GPU type held (when milli > 0) */
    uint32_t milli;   /* milli-GPUs held by the job in state `to` */
    uint32_t detail;  /* 0 = none, else 1 + id in details */
    uint32_t nodes;   /* nodes held in state `to` */
} dr_event_t;

typedef struct dr_eventlog {
    dr_event_t *ev;
    size_t n, cap;
    dr_strtab_t details;
} dr_eventlog_t;

void dr_eventlog_init(dr_eventlog_t *l);
void dr_eventlog_free(dr_eventlog_t *l);
/* Make room for `more` records (a simulator knows roughly how many). */
int dr_eventlog_reserve(dr_eventlog_t *l, size_t more);
/* Append; detail may be NULL.  Fails with DR_EINVAL if t is earlier than
 * the last record (the log is time-ordered by construction). */
int dr_eventlog_append(dr_eventlog_t *l, dr_time_t t, const dr_job_t *j, dr_job_state_t from,
                       dr_job_state_t to, const char *detail);
const char *dr_eventlog_detail(const dr_eventlog_t *l, const dr_event_t *e);
/* Name of what happened: "submit", "start", "run", "complete", "preempt"... */
const char *dr_event_name(const dr_event_t *e);

#endif
