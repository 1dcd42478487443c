/* workload.h - a set of jobs to replay, and the trace readers that make one.
 *
 * Readers parse from memory (so they can be fuzzed) behind one narrow
 * interface; dr_trace_load() is the only place that touches the file.
 * A malformed row stops the parse with "FILE:LINE: FIELD: reason", or with
 * opts.lenient is skipped and counted in wl->skipped. */
#ifndef DROVER_WORKLOAD_H
#define DROVER_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/job.h"
#include "drover/perf.h"
#include "drover/util.h"

typedef struct dr_workload {
    dr_job_t *jobs; /* sorted by (submit, id) once dr_workload_finish ran */
    size_t njobs, cap;
    /* The truth (truth.h): work[i] is the work jobs[i] really does before
     * it ends.  Only the simulator and oracle policies may read it; what a
     * policy sees is jobs[i].work_declared and time_limit. */
    double *work;
    size_t work_cap;
    /* Allowed GPU types per job, by name, resolved against a cluster by
     * dr_workload_bind: typeset[i] = 0 (any) or 1 + id in typesets, whose
     * strings are '|'-separated GPU names ("T4|V100M16"). */
    uint32_t *typeset;
    size_t typeset_cap;
    dr_strtab_t typesets;
    dr_perf_table_t perf;            /* class 0 = uniform; readers add classes */
    dr_strtab_t users;               /* job.user ids */
    dr_strtab_t accounts;            /* job.account ids */
    dr_strtab_t shards;              /* job.shard - 1 ids (input shard names) */
    size_t skipped;                  /* malformed rows skipped (lenient) */
    char first_skip[DR_ERR_MSG_MAX]; /* message for the first skipped row */
} dr_workload_t;

void dr_workload_init(dr_workload_t *wl); /* perf gets class 0 and no columns */
void dr_workload_free(dr_workload_t *wl);
/* Make room for `more` jobs (avoids repeated growth for big workloads). */
int dr_workload_reserve(dr_workload_t *wl, size_t more);
/* Append a job (copied), the work it really does (the truth) and an
 * optional type set ("" or NULL = any). */
int dr_workload_add(dr_workload_t *wl, const dr_job_t *j, double work, const char *typeset);
/* Sort by submit time and check ids are unique (assigning 1..n to jobs
 * whose id is 0). */
int dr_workload_finish(dr_workload_t *wl, dr_err_t *err);
/* Resolve type sets into each job's req.types for cluster c.  A name the
 * cluster does not know is an error naming the job, unless lenient (then
 * that name is ignored; a job left with no type can never run).  Input
 * shards are resolved into req.shard (a shard no node holds is not an
 * error: the task is placed round-robin). */
int dr_workload_bind(dr_workload_t *wl, const dr_cluster_t *c, bool lenient, dr_err_t *err);

typedef enum dr_trace_format {
    DR_TRACE_GAVEL = 0, /* Gavel .trace (tab-separated), with a throughput matrix */
    DR_TRACE_PHILLY,    /* Philly-derived job list: timestamp,duration,num_gpus,... */
    DR_TRACE_OPENB,     /* Alibaba openb pod list */
    DR_TRACE_DROVER,    /* drover's native CSV (docs/trace-format.md) */
    DR_TRACE_NFORMATS
} dr_trace_format_t;

typedef struct dr_trace_opts {
    bool lenient;
    /* Gavel: measured throughputs (steps/s per job type x scale x GPU).
     * NULL = the matrix built into libdrover. */
    const dr_perf_table_t *gavel_throughputs;
    size_t max_jobs; /* stop after this many jobs; 0 = all */
} dr_trace_opts_t;

/* lenient=false.  Readers set a job's time_limit and work_declared only
 * from the trace's own columns; dr_workload_declare (estimate.h) gives the
 * rest what a user would have declared. */
void dr_trace_opts_default(dr_trace_opts_t *o);
const char *dr_trace_format_name(dr_trace_format_t f);
int dr_trace_format_parse(const char *s, dr_trace_format_t *out);

int dr_trace_parse(dr_trace_format_t f, const char *name, const char *buf, size_t len,
                   const dr_trace_opts_t *o, dr_workload_t *wl, dr_err_t *err);
int dr_trace_load(dr_trace_format_t f, const char *path, const dr_trace_opts_t *o,
                  dr_workload_t *wl, dr_err_t *err);

/* Gavel's isolated throughput CSV (job_type,scale_factor,k80,p100,v100):
 * one perf class per (job type, scale factor), named "<job type> x<scale>". */
int dr_gavel_throughputs_parse(dr_perf_table_t *p, const char *name, const char *buf, size_t len,
                               dr_err_t *err);
int dr_gavel_throughputs_builtin(dr_perf_table_t *p, dr_err_t *err);

/* Model-hint jobs for the schedulers.  For every job of wl with
 * hint_params > 0 and perf_class 0, give it the perf class of its hints
 * (dr_perf_hint_class, perfmodel.h: rates in tokens per second on each GPU
 * type of c, shared by jobs with the same hints) and make its work
 * hint_tokens.  A job whose trace already gave its work in seconds (its
 * true work > 0) keeps it unless tokens_replace_duration, and a job with
 * neither work nor tokens, or without GPUs, is left alone.  The table's
 * columns are the cluster's types when it has none yet.  Returns the number
 * of jobs converted, or a negative DR_E* code. */
int dr_perf_add_hint_classes(dr_workload_t *wl, const dr_cluster_t *c, bool tokens_replace_duration,
                             dr_err_t *err);

/* A synthetic workload for benchmarks and tests: job shapes drawn from a
 * training-cluster mix (1/2/4/8 GPUs, 2x8 and 4x8 gangs), log-uniform run
 * times, Poisson arrivals whose rate gives the requested offered load on a
 * cluster of `cluster_gpus` GPUs, and walltime limits that overestimate the
 * run time by a random factor in [1, walltime_factor]. */
typedef struct dr_synth_opts {
    size_t njobs;
    uint64_t seed;
    double load; /* offered load: demanded GPU-s / (GPUs x span) */
    uint64_t cluster_gpus;
    double min_runtime_s, max_runtime_s;
    double walltime_factor;     /* >= 1 */
    double frac_restricted;     /* jobs pinned to one GPU type (of type_names) */
    double frac_share;          /* 1-GPU jobs asking for a fraction of a GPU */
    uint32_t max_gpus_per_node; /* gang width (default 8) */
    const char *const *type_names;
    size_t ntypes;
} dr_synth_opts_t;

void dr_synth_opts_default(dr_synth_opts_t *o);
int dr_workload_synth(dr_workload_t *wl, const dr_synth_opts_t *o, dr_err_t *err);

/* Gavel's workload generator (Narayanan et al., OSDI 2020), reproduced
 * draw for draw: the same Python random streams (random.Random(seed + 2)
 * for jobs, seed + 3 for arrivals), the same job table order and the same
 * sampling code, so seed N gives exactly the jobs Gavel's own simulator
 * generates with seed N.  Job type uniform over Gavel's 26 templates;
 * duration on a V100 log-uniform 10^1.5..10^3 min (80%) or 10^3..10^4 min
 * (20%); with multi_gpu, scale factor 1 (70%), 2 (10%), 4 (15%), 8 (5%),
 * redrawing the template until it can run distributed; Poisson arrivals,
 * the first at t = 0.  With steady_state, as many jobs as there are GPUs
 * of each type are added at t = 0 first (Gavel's --simulate_steady_state).
 * Jobs get ids 1..njobs (Gavel numbers them from 0: its job k is our k+1). */
typedef struct dr_gavel_gen_opts {
    double jobs_per_hr;
    uint64_t seed;
    size_t njobs;
    bool multi_gpu;
    bool steady_state;
    /* GPUs per Gavel worker type, for steady_state ("k80","p100","v100") */
    uint32_t steady_gpus[3];
    const dr_perf_table_t *throughputs; /* NULL = built-in matrix */
} dr_gavel_gen_opts_t;

int dr_workload_gavel(dr_workload_t *wl, const dr_gavel_gen_opts_t *o, dr_err_t *err);
/* steady_gpus for cluster c: the GPUs of its types whose names begin with
 * each Gavel worker type's ("k80", "p100", "v100"; case ignored). */
void dr_gavel_steady_gpus(const dr_cluster_t *c, uint32_t steady_gpus[3]);

#endif
