/* eventlog.h - the append-only job event log.
 *
 * Every state change of every job is one record (time, job, from, to, GPU
 * type, milli-GPUs held, detail).  Accounting, reports and replay are all
 * computed from this log; nothing else is trusted.  Records are appended in
 * time order by the scheduler core and never modified.  Changes of a node's
 * state (drained, lost, back up, provisioned) are kept beside the job
 * records, in an array of their own, so that readers of the job records
 * (reports, replay) need not skip them. */
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

/* A node's state change (dr_node_state_t values, cluster.h). */
typedef struct dr_node_event {
    dr_time_t t;
    uint32_t node;    /* index in the cluster */
    uint8_t from, to; /* dr_node_state_t */
    uint32_t detail;  /* 0 = none, else 1 + id in details */
} dr_node_event_t;

typedef struct dr_eventlog {
    dr_event_t *ev;
    size_t n, cap;
    dr_node_event_t *node_ev; /* node records, in time order */
    size_t nnode, node_cap;
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
/* Append a node record; detail may be NULL.  DR_EINVAL if t is earlier than
 * the last record of either kind. */
int dr_eventlog_append_node(dr_eventlog_t *l, dr_time_t t, uint32_t node, uint8_t from, uint8_t to,
                            const char *detail);
const char *dr_eventlog_node_detail(const dr_eventlog_t *l, const dr_node_event_t *e);
/* Time of the last record of either kind; INT64_MIN when the log is empty. */
dr_time_t dr_eventlog_last_t(const dr_eventlog_t *l);
/* Name of what happened: "submit", "start", "run", "complete", "preempt"... */
const char *dr_event_name(const dr_event_t *e);

#endif
