/* report.h - what a run achieved, computed from the event log alone.
 *
 * JCT = end - submit of completed jobs; queueing delay = first start -
 * submit; utilisation = milli-GPU-seconds held / (GPUs x makespan); cost =
 * GPU-hours x the type's on-demand price; energy = TDP x GPU busy time.
 * Output as a text table, JSON (jansson) and SVG charts, all as strings:
 * the caller writes them where it wants. */
#ifndef DROVER_REPORT_H
#define DROVER_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/eventlog.h"
#include "drover/job.h"

typedef struct dr_report_type {
    char name[DR_GPU_NAME_MAX];
    uint64_t gpus;
    double util;
    double gpu_hours;
    double cost_usd;   /* NAN if the price is unknown */
    double energy_kwh; /* NAN if the TDP is unknown */
} dr_report_type_t;

typedef struct dr_series {
    double *t; /* seconds */
    double *v;
    size_t n;
} dr_series_t;

typedef struct dr_report {
    char policy[64];
    size_t jobs, completed, failed, cancelled, timeout, unfinished;
    size_t rejected; /* subset of failed: could never fit the cluster */
    uint64_t preemptions, requeues;
    double avg_jct_s, p50_jct_s, p95_jct_s, p99_jct_s, max_jct_s;
    double avg_queue_s, p50_queue_s, p95_queue_s, p99_queue_s;
    double makespan_s; /* first submit to last end */
    double gpu_util;   /* 0..1 */
    double gpu_hours;
    double cost_usd;      /* sum over types with known prices */
    bool cost_incomplete; /* some used type had no price */
    double energy_kwh;
    bool energy_incomplete;
    dr_report_type_t types[DR_MAX_GPU_TYPES];
    size_t ntypes;
    dr_series_t util_series;  /* fraction of GPUs busy over time */
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

/* Human table comparing reports side by side (malloc'd). */
char *dr_report_table(const dr_report_t *r, size_t n);
/* {"policies":[{...},...]} (malloc'd, pretty-printed). */
char *dr_report_json(const dr_report_t *r, size_t n);
/* SVG charts (malloc'd). */
char *dr_report_svg_util(const dr_report_t *r, size_t n);
char *dr_report_svg_queue(const dr_report_t *r, size_t n);
char *dr_report_svg_jct_cdf(const dr_report_t *r, size_t n);

#endif
