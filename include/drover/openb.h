/* openb.h - the openb GPU-packing benchmark, replayed exactly as the FGD
 * paper's protocol runs it (docs/scheduling.md, "openb packing").
 *
 * Pods arrive one at a time and never leave; each is placed at once by a
 * packing policy (pack.h) or fails for good.  The sequence for a seed is the
 * trace's pods sorted by name and shuffled, then inflated with clones (drawn
 * with replacement, named "<name>-tuned-<i>") until the GPU demand reaches
 * `ratio` (1.3) x the cluster's GPU capacity, or thinned at random positions
 * when the trace asks for more.  A sequence can also be read from (and
 * written to) a file, so two schedulers can be compared on the same one:
 *
 *   pod,base,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec
 *
 * (arrival order; gpu_milli is the effective per-GPU milli, 0 for CPU-only
 * pods; gpu_spec '|'-separated models, empty = any).
 *
 * The metric, after every pod: arrive% = 100 x arrived GPU milli / capacity
 * rounded half-to-even to an integer, alloc% = 100 x allocated milli /
 * capacity rounded half-to-even to 2 decimals.  The curve at X is the mean
 * alloc% of the events with arrive% = X (if none, X-1 <= arrive% <= X+1);
 * the headline is the curve at 100.
 *
 * Parsers work on memory (fuzzed); the _load functions are the only ones
 * that read files (dr_read_file).  Errors name "FILE:LINE: FIELD: reason". */
#ifndef DROVER_OPENB_H
#define DROVER_OPENB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/job.h"
#include "drover/util.h"

#define DR_OPENB_NOT_CLONE UINT32_MAX

typedef struct dr_openb_pod {
    uint32_t name; /* id in pods->names */
    uint32_t base; /* id in pods->names of the trace pod it copies (== name if none) */
    uint32_t spec; /* id in pods->specs; 0 = "" (any GPU model) */
    uint32_t cpu_milli;
    uint64_t mem_mib;
    uint32_t num_gpu;   /* 0 = CPU-only */
    uint32_t gpu_milli; /* per GPU, 1..1000 (0 for a CPU-only pod) */
} dr_openb_pod_t;

typedef struct dr_openb_pods {
    dr_openb_pod_t *v;
    size_t n, cap;
    dr_strtab_t names; /* pod names */
    dr_strtab_t specs; /* gpu_spec strings, id 0 = "" */
} dr_openb_pods_t;

void dr_openb_pods_init(dr_openb_pods_t *p);
void dr_openb_pods_free(dr_openb_pods_t *p);
/* GPU milli the pods ask for in total: sum of num_gpu x gpu_milli. */
uint64_t dr_openb_pods_demand(const dr_openb_pods_t *p);

/* An openb pod list (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,
 * ...]; other columns ignored).  gpu_milli is clamped to 0..1000; a pod with
 * GPUs and 0 milli, or a share on more than one GPU, is an error. */
int dr_openb_pods_parse(dr_openb_pods_t *p, const char *name, const char *buf, size_t len,
                        dr_err_t *err);
int dr_openb_pods_load(dr_openb_pods_t *p, const char *path, dr_err_t *err);

/* A sequence file (the header above, columns in any order). */
int dr_openb_sequence_parse(dr_openb_pods_t *p, const char *name, const char *buf, size_t len,
                            dr_err_t *err);
int dr_openb_sequence_load(dr_openb_pods_t *p, const char *path, dr_err_t *err);
/* Format a sequence file into a malloc'd NUL-terminated buffer. */
int dr_openb_sequence_format(const dr_openb_pods_t *p, char **out, size_t *len, dr_err_t *err);

/* The arrival sequence for a seed: trace pods sorted by name, shuffled,
 * then inflated (or thinned) to ratio x capacity_milli of GPU demand.  seq
 * must be initialised and empty. */
int dr_openb_sequence_generate(dr_openb_pods_t *seq, const dr_openb_pods_t *trace,
                               uint64_t capacity_milli, double ratio, uint64_t seed, dr_err_t *err);
/* The node tie-break ranks for a seed: a permutation of 0..n-1 (rank[node]),
 * from a random stream of its own (so it does not depend on the pods). */
void dr_openb_ranks(uint32_t *rank, size_t n, uint64_t seed);

/* The GPU types each spec allows on cluster c (masks[spec id]; all types for
 * spec 0).  Names the cluster lacks are ignored: a pod that names only such
 * models can never be placed.  *masks is malloc'd. */
int dr_openb_bind(const dr_openb_pods_t *p, const dr_cluster_t *c, dr_typemask_t **masks,
                  dr_err_t *err);

/* One replay. */
typedef struct dr_openb_result {
    size_t npods;
    dr_alloc_t *alloc; /* per pod; nslots == 0 if it failed */
    int32_t *node;     /* per pod: node index, -1 if it failed */
    uint64_t *arrived; /* per pod: GPU milli arrived up to and including it */
    uint64_t *used;    /* per pod: GPU milli allocated after it */
    size_t failed;     /* pods that fit nowhere */
    size_t failed_gpu; /* ... of which asked for GPUs */
    uint64_t capacity; /* cluster GPU milli */
} dr_openb_result_t;

typedef struct dr_openb_opts {
    const char *policy;   /* packing policy spec (pack.h), e.g. "fgd" */
    uint64_t seed;        /* for policies that draw */
    const uint32_t *rank; /* node tie-break ranks, NULL = node order */
} dr_openb_opts_t;

/* Replay pods on cluster c (finalised and idle; it is left holding the
 * placements).  res is filled (free with dr_openb_result_free). */
int dr_openb_replay(dr_cluster_t *c, const dr_openb_pods_t *pods, const dr_openb_opts_t *o,
                    dr_openb_result_t *res, dr_err_t *err);
void dr_openb_result_free(dr_openb_result_t *res);

/* The placement CSV (pod,node,gpus), a malloc'd NUL-terminated buffer. */
int dr_openb_placements_format(const dr_openb_result_t *res, const dr_openb_pods_t *pods,
                               const dr_cluster_t *c, char **out, size_t *len, dr_err_t *err);

/* The metric of one event, in integer units: arrive% and alloc% x 100. */
int dr_openb_arrive_pct(uint64_t arrived, uint64_t capacity);
int64_t dr_openb_alloc_centi(uint64_t used, uint64_t capacity);
/* The curve at arrive% = x; false if no event is within x +- 1. */
bool dr_openb_curve_at(const dr_openb_result_t *res, int x, double *alloc_pct);

#endif
