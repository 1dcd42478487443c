/* report.h - what a run achieved, computed from the event log alone.
 *
 * JCT = end - submit of completed jobs; queueing delay = first start -
 * submit; utilisation = GPU-time held on on-prem GPUs / (on-prem GPUs x
 * makespan), elastic pools reported apart (their busy / billed GPU-hours);
 * cost = GPU-hours x the type's on-demand price; energy = TDP x GPU busy
 * time.  Definitions in full: src/sim/report.c.  Output as a text table,
 * JSON (jansson) and SVG charts, all as strings: the caller writes them
 * where it wants. */
#ifndef DROVER_REPORT_H
#define DROVER_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/eventlog.h"
#include "drover/job.h"

struct dr_sim_result;
struct dr_window_stats;

typedef struct dr_report_type {
    char name[DR_GPU_NAME_MAX];
    uint64_t gpus;     /* on-prem GPUs of this type (UP/DRAIN nodes outside pools) */
    double util;       /* GPU-time held on them / (gpus x makespan); NAN if unknown */
    double gpu_hours;  /* GPU-hours jobs held on this type, pool nodes included */
    double cost_usd;   /* NAN if the price is unknown */
    double energy_kwh; /* NAN if the TDP is unknown */
} dr_report_type_t;

typedef struct dr_series {
    double *t; /* seconds */
    double *v;
    size_t n;
} dr_series_t;

/* What a simulator knows beyond the event log (dr_report_add_sim). */
typedef struct dr_report_sim {
    bool set;
    uint64_t node_failures, spot_losses;
    uint64_t shard_starts, locality_hits; /* data locality: tasks naming a shard, and
                                             those placed on a node holding it */
    /* elastic pools: nodes provisioned, the bill, and the whole bill
     * (on-prem GPU-hours at catalog prices + cloud_cost_usd) */
    uint64_t provisions;
    double cloud_cost_usd, total_cost_usd;
    /* the lower bound (dr_window_stats; bound false without one) */
    bool bound, window; /* window: over a window of job ids, not every job */
    size_t jobs, completed, unfinished, measured;
    double avg_jct_s, lower_bound_avg_jct_s;
    double avg_slowdown, p99_slowdown, max_slowdown, avg_ftf, max_ftf;
} dr_report_sim_t;

typedef struct dr_report {
    char policy[64];
    size_t jobs, completed, failed, cancelled, timeout, unfinished;
    size_t rejected; /* subset of failed: could never fit the cluster */
    uint64_t preemptions, requeues;
    double avg_jct_s, p50_jct_s, p95_jct_s, p99_jct_s, max_jct_s;
    double avg_queue_s, p50_queue_s, p95_queue_s, p99_queue_s;
    /* Jobs with a deadline: met = completed by it; missed = completed after
     * it, ended otherwise, or unfinished when the log ends past it; the
     * rest are still open (unfinished, deadline after the end of the log). */
    size_t deadlines, deadlines_met, deadlines_missed;
    double makespan_s;    /* first submit to last end */
    uint64_t gpus;        /* on-prem GPUs: the utilisation denominator */
    double gpu_util;      /* 0..1, on-prem GPUs only; NAN if unknown */
    double gpu_hours;     /* every GPU-hour jobs held, pool nodes included */
    double cost_usd;      /* sum over types with known prices */
    bool cost_incomplete; /* some used type had no price */
    double energy_kwh;
    bool energy_incomplete;
    dr_report_type_t types[DR_MAX_GPU_TYPES];
    size_t ntypes;
    /* Elastic pools (the cluster has Pool= lines): the GPU-hours jobs held
     * on pool nodes and the GPU-hours pool nodes were billed (provisioning
     * or up), and busy / billed.  The log does not say which nodes a job
     * held, so these come from the simulator (dr_report_add_sim): until
     * then they are NAN, and so are gpu_util and the util of the pools'
     * GPU types.  With pools of several GPU types the pool hours cannot be
     * split by type: those types' util stays NAN (gpu_util is exact). */
    bool pools;
    double pool_busy_gpu_hours, pool_billed_gpu_hours, pool_util;
    dr_report_sim_t sim;      /* zero unless dr_report_add_sim ran */
    dr_series_t util_series;  /* fraction of GPUs busy over time (report.c) */
    dr_series_t queue_series; /* pending jobs over time */
    double *jct_sorted;       /* completed jobs' JCTs, ascending (for CDFs) */
    size_t njct;
} dr_report_t;

typedef struct dr_report_opts {
    size_t max_points; /* series are downsampled to at most this many points */
    /* Job-outcome figures (counts, JCT, queueing) cover only jobs with
     * id_first <= id <= id_last when id_last > 0 (a measurement window);
     * utilisation, GPU-hours, cost and energy always cover the whole run. */
    uint64_t id_first, id_last;
} dr_report_opts_t;

int dr_report_compute(dr_report_t *r, const char *policy, const dr_cluster_t *c,
                      const dr_job_t *jobs, size_t njobs, const dr_eventlog_t *log,
                      const dr_report_opts_t *o, dr_err_t *err);
void dr_report_free(dr_report_t *r);

/* Add what a simulator run knows beyond its log: the elastic pools' busy
 * and billed GPU-hours (which completes the utilisation figures), node
 * failures, spot losses, data locality, the cloud bill and, when w is not
 * NULL, the lower-bound statistics (window: w covers a window of ids). */
void dr_report_add_sim(dr_report_t *r, const dr_cluster_t *c, const struct dr_sim_result *res,
                       const struct dr_window_stats *w, bool window);

/* Human table comparing reports side by side (malloc'd): one column per
 * report; rows for deadlines, requeues, node failures, data locality, the
 * lower bound and the cloud only when some report has them; a legend of
 * the figures shown under it. */
char *dr_report_table(const dr_report_t *r, size_t n);
/* {"policies":[{...},...]} (malloc'd, pretty-printed). */
char *dr_report_json(const dr_report_t *r, size_t n);
/* SVG charts (malloc'd). */
char *dr_report_svg_util(const dr_report_t *r, size_t n);
char *dr_report_svg_queue(const dr_report_t *r, size_t n);
char *dr_report_svg_jct_cdf(const dr_report_t *r, size_t n);

#endif
