/* metrics.h - GET /metrics and the cluster's snapshot (metrics.c). */
#ifndef DROVER_CTLD_METRICS_H
#define DROVER_CTLD_METRICS_H

#include "ctld/ctld.h"
#include "ctld/prom.h"

/* metrics.c: what the cluster looks like now, shared by /metrics,
 * /v1/stats and its samples.  GPUs: allocated (any share of it held),
 * idle (free on a node that takes work), down (free on a node that does
 * not: down, drained, its agent not connected). */
typedef struct ctld_snap_type {
    uint32_t total, allocated, idle, down;
} ctld_snap_type_t;
typedef struct ctld_snap {
    ctld_snap_type_t type[DR_MAX_GPU_TYPES]; /* by cluster GPU type */
    uint64_t pending, running, held;         /* running: starting, running, completing */
    double usd_per_hour, kw;                 /* of the GPUs the running jobs hold */
} ctld_snap_t;
void ctld_snapshot(const dr_ctld_t *c, ctld_snap_t *s);
/* Node i's GPUs: allocated, idle and down, as ctld_snap_t counts them. */
void ctld_node_gpu_states(const dr_ctld_t *c, uint32_t i, uint32_t *alloc, uint32_t *idle,
                          uint32_t *down);
int ctld_metrics_init(dr_ctld_t *c, dr_err_t *err);
void ctld_metrics_free(dr_ctld_t *c);
/* hooks where things happen */
void ctld_metrics_request(dr_ctld_t *c, struct evhttp_request *req, const char *path);
void ctld_metrics_pass(dr_ctld_t *c, double seconds);
void ctld_metrics_commit(dr_ctld_t *c, double seconds, bool ok);
void ctld_metrics_started(dr_ctld_t *c, const ctld_job_t *cj,
                          dr_time_t now);                    /* a pass started it */
void ctld_metrics_submitted(dr_ctld_t *c, uint64_t job);     /* a submit's 201 has gone out */
void ctld_metrics_ended(dr_ctld_t *c, const ctld_job_t *cj); /* it reached a terminal state */
struct dr_eventlog;
void ctld_metrics_committed(dr_ctld_t *c,
                            const struct dr_eventlog *log); /* preempt, requeue, down */
void ctld_metrics_tick(dr_ctld_t *c); /* once a second: cost and energy accrue */

#endif
