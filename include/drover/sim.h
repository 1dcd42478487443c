/* sim.h - the discrete-event simulator.
 *
 * Replays a workload on a copy of a cluster with one policy, through the
 * same dr_sched_t the controller uses.  Deterministic: the same inputs and
 * seed give the same event log, bit for bit. */
#ifndef DROVER_SIM_H
#define DROVER_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/eventlog.h"
#include "drover/placement.h"
#include "drover/sched.h"
#include "drover/workload.h"

typedef struct dr_sim_opts {
    const char *policy; /* "name" or "name:key=val,..." */
    dr_place_strategy_t placement;
    uint64_t seed;     /* failure injection and tie-breaks */
    bool audit;        /* verify ledger + invariants every pass (slow) */
    dr_time_t horizon; /* stop at this simulated time; 0 = run to the end */
    /* Node failures: mean time between failures per on-prem node (0 =
     * none) and repair time.  Jobs on a failed node are requeued from their
     * last checkpoint (dr_job_t.ckpt_every; from their last start if they
     * declare none).  Elastic pool nodes fail by their pool's spot rate
     * instead. */
    double node_mtbf_s;
    double node_repair_s;
    /* Stop as soon as every job with stop_first <= id <= stop_last has
     * ended (0, 0 = run to the end).  Jobs outside the window keep arriving
     * and competing until then, as in Gavel's measurement window. */
    uint64_t stop_first, stop_last;
    /* Cost of every restart (after a preemption, migration or failure): the
     * job spends this long reloading its checkpoint and starting up before
     * it makes progress again.  Default 30 s (dr_sim_opts_default). */
    double restart_overhead_s;
    /* Time a job with checkpoints (ckpt_every > 0) spends writing each one;
     * it runs at every / (every + write) of its rate.  Default 10 s. */
    double ckpt_write_s;
    /* Cross-node slowdown for jobs whose perf class has no measured
     * multi-node rate (placement.h); NULL = none, the default, so measured
     * matrices such as Gavel's run exactly as measured. */
    const dr_span_slowdown_t *span_slowdown;
    /* What the policies believe of the rates.  0: the workload's perf table,
     * which jobs really run at.  > 0: a copy of it with every rate of a
     * class on a type multiplied by e^(rate_noise x Z), Z ~ N(0,1) drawn
     * per (class, type) from rate_noise_seed: the policies plan with that
     * (a performance model off by about that much), jobs still progress at
     * the true rates.  Class 0 (rate 1 everywhere) is left exact. */
    double rate_noise;
    uint64_t rate_noise_seed;
    /* Called about every 1% of jobs finished; frac in [0,1]. */
    void (*progress)(void *ud, double frac);
    void *progress_ud;
} dr_sim_opts_t;

void dr_sim_opts_default(dr_sim_opts_t *o);

typedef struct dr_sim_result {
    char policy[64];
    dr_job_t *jobs; /* final state of every job (allocs freed) */
    size_t njobs;
    dr_eventlog_t log;
    dr_sched_stats_t stats;
    uint64_t events; /* discrete events processed */
    uint64_t node_failures;
    dr_time_t end_time; /* simulated time of the last event */
    /* Elastic pools.  Billed: GPU-hours pool nodes were provisioning or up
     * (until released, lost or the end of the run) and their price at the
     * pool's rate (PricePerGpuHour, else the catalog's; NAN if neither is
     * known).  Busy: the GPU-hours jobs held on pool nodes and those hours
     * at catalog prices - already inside dr_report_t.cost_usd, which prices
     * every job GPU-hour, so on-prem cost = cost_usd - cloud_busy_list_usd
     * and the whole bill = that + cloud_cost_usd. */
    double cloud_gpu_hours, cloud_cost_usd;
    double cloud_busy_gpu_hours, cloud_busy_list_usd;
    uint64_t provisions, releases, spot_losses;
} dr_sim_result_t;

/* Run wl (already bound to `cluster`) with one policy.  The cluster is
 * copied; wl is not modified. */
int dr_sim_run(const dr_cluster_t *cluster, const dr_workload_t *wl, const dr_sim_opts_t *o,
               dr_sim_result_t *res, dr_err_t *err);
void dr_sim_result_free(dr_sim_result_t *r);

/* Figures over a window of job ids (Gavel measures jobs 4000-5000, or
 * 300-799 in short runs), beside the physical lower bound.
 *
 *  - JCT = completion time - submit time.
 *  - A job's lower bound = its true work / its best rate over the GPU types
 *    it can run on: the job alone on its fastest GPU type, never queued.
 *    Not achievable in general (jobs compete for the fastest type).
 *  - slowdown = JCT / the job's own lower bound (1 = as fast as possible).
 *  - Finish-time fairness (FTF; Themis, Mahajan et al. NSDI 2020): JCT over
 *    the time the job would take with a 1/N share of the cluster, N = jobs
 *    in the system when it arrived (itself included):
 *        FTF = JCT / (work / (s * sum_k (G_k / G) * rate_k)),
 *        s = min(1, G / (N * g)),
 *    G = the cluster's on-prem GPUs, G_k those of type k (k over the types
 *    the job can run on), g = the GPUs the job asks for: its share, spread
 *    over the types in proportion to their counts, never more than its own
 *    g GPUs.  Below 1 is better than a fair share.
 *
 * Every average, percentile and the lower bound are over the same jobs:
 * the `measured` ones, the window's completed jobs that have a lower bound
 * (all of them, unless one could run on no GPU type: a CPU-only job on a
 * cluster without GPUs, say).  FTF skips jobs with no on-prem share (they
 * can run only on elastic-pool types). */
typedef struct dr_window_stats {
    size_t jobs;       /* in the window */
    size_t completed;  /* of them, completed */
    size_t unfinished; /* not ended when the run stopped (jobs - completed - unfinished
                          ended otherwise: failed, cancelled, timed out) */
    size_t measured;   /* completed jobs with a lower bound: every figure below is over them */
    double avg_jct_s, p50_jct_s, p99_jct_s;
    double makespan_s;                               /* first window submit to last window end */
    double lower_bound_avg_jct_s;                    /* mean of lower bounds (measured jobs) */
    double avg_slowdown, p99_slowdown, max_slowdown; /* JCT / own lower bound */
    double avg_ftf, max_ftf;                         /* finish-time fairness */
} dr_window_stats_t;

/* Stats for jobs first <= id <= last (0, 0 = all jobs) of a finished run of
 * wl (r->jobs[i] is wl->jobs[i] after the run). */
int dr_window_stats(const dr_sim_result_t *r, const dr_cluster_t *c, const dr_workload_t *wl,
                    uint64_t first, uint64_t last, dr_window_stats_t *out, dr_err_t *err);

/* Every job's lower bound in seconds (above), lb[i] for wl->jobs[i]; NAN for
 * a job that can run on no GPU type. */
int dr_lower_bounds(const dr_cluster_t *c, const dr_workload_t *wl, double *lb, dr_err_t *err);

#endif
