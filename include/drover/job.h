/* job.h - the job model: what a job asks for, its explicit state machine,
 * and the execution bookkeeping the schedulers and drivers share. */
#ifndef DROVER_JOB_H
#define DROVER_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/error.h"
#include "drover/time.h"

typedef uint64_t dr_typemask_t; /* bit i = GPU type i of the cluster; 0 = any */

typedef enum dr_job_state {
    DR_JOB_PENDING = 0,
    DR_JOB_STARTING, /* resources allocated, being launched */
    DR_JOB_RUNNING,
    DR_JOB_COMPLETING, /* processes exited, resources being cleaned up */
    DR_JOB_COMPLETED,  /* terminal: exit 0 */
    DR_JOB_FAILED,     /* terminal: non-zero exit, launch failure, node lost without requeue */
    DR_JOB_CANCELLED,  /* terminal: by user or admin */
    DR_JOB_PREEMPTED,  /* transient: stopped to make room, goes back to pending */
    DR_JOB_REQUEUED,   /* transient: node failure or admin requeue, goes back to pending */
    DR_JOB_TIMEOUT,    /* terminal: ran past its walltime limit */
    DR_JOB_NSTATES
} dr_job_state_t;

typedef enum dr_job_kind {
    DR_KIND_TRAIN = 0,
    DR_KIND_SERVE,
    DR_KIND_BATCH,
    DR_KIND_ARRAY,
    DR_KIND_NKINDS
} dr_job_kind_t;

typedef enum dr_precision {
    DR_PREC_UNSET = 0,
    DR_PREC_FP32,
    DR_PREC_FP16,
    DR_PREC_BF16,
    DR_PREC_FP8,
    DR_PREC_NPREC
} dr_precision_t;

/* What one job asks for.  A whole GPU is 1000 milli-GPUs; a fractional share
 * (gpu_milli < 1000) is taken from one GPU per requested GPU. */
#define DR_TYPE_PREFS 8 /* types a preference list may name */

typedef struct dr_job_req {
    /* nodes >= 1: exactly that many nodes, gpus_per_node on each.
     * nodes == 0: "--gpus=N" shape: gpus_per_node counts *all* GPUs, spread
     * over as few nodes as placement can manage (cpu/mem are per node used). */
    uint32_t nodes;
    uint32_t gpus_per_node; /* 0 = CPU-only job */
    uint32_t gpu_milli;     /* per GPU, 1..1000 */
    /* Input shard, bound to the cluster by dr_workload_bind: 0 = none,
     * DR_SHARD_UNHELD = one no node holds, else 1 + the cluster's shard id
     * (dr_cluster_shard).  Placement prefers nodes holding it. */
    uint32_t shard;
    dr_typemask_t types; /* allowed GPU types; 0 = any */
    /* The nodes it may use (partition, constraint): 0 = any, else 1 + a
     * node set of the cluster (partition.h); placement takes no other. */
    uint32_t nodeset;
    double min_gpu_mem_gb;       /* 0 = no minimum */
    uint32_t cpu_milli_per_node; /* CPUs x 1000 */
    uint64_t mem_mb_per_node;
    /* Types in the user's order of preference (--gpu-type H100,A100): type
     * index + 1, most preferred first, 0 ends the list; empty = no order
     * (the policy chooses among `types` by speed and cost). */
    uint8_t pref[DR_TYPE_PREFS];
} dr_job_req_t;

/* Where type t stands in r's preference: 0 the most preferred, npref for a
 * type not listed (or no list at all). */
static inline unsigned dr_req_pref_rank(const dr_job_req_t *r, unsigned t)
{
    unsigned k = 0;
    while (k < DR_TYPE_PREFS && r->pref[k] && r->pref[k] != t + 1)
        k++;
    return k < DR_TYPE_PREFS && r->pref[k] ? k : DR_TYPE_PREFS;
}

#define DR_SHARD_UNHELD UINT32_MAX

/* One placed GPU share: node index, GPU index on that node, milli taken.
 * A CPU-only job holds one slot per node with gpu = DR_NO_GPU, milli = 0. */
#define DR_NO_GPU 0xFFFFu
typedef struct dr_slot {
    uint32_t node;
    uint16_t gpu;
    uint16_t milli;
} dr_slot_t;

/* How close together an allocation's nodes are, nearest first (set by
 * placement; a slowdown model for jobs that span nodes reads it). */
typedef enum dr_locality {
    DR_LOC_NODE = 0, /* one node (or no nodes) */
    DR_LOC_NVLINK,   /* several nodes of one NVLink domain (an NVL72 rack) */
    DR_LOC_LEAF,     /* several nodes under one leaf switch */
    DR_LOC_TREE,     /* several leaf switches with a common ancestor (lca_level) */
    DR_LOC_NETWORK,  /* several nodes without a common switch (or no topology) */
    DR_LOC_N
} dr_locality_t;

typedef struct dr_alloc {
    dr_slot_t *slots; /* owned */
    uint32_t nslots;
    uint32_t nnodes;
    uint16_t type;     /* GPU type of every slot (gangs are homogeneous) */
    uint8_t locality;  /* dr_locality_t (set by placement) */
    uint8_t lca_level; /* DR_LOC_TREE: level of the lowest common switch (1 = above leaves) */
    uint32_t cpu_milli_per_node;
    uint64_t mem_mb_per_node;
} dr_alloc_t;

typedef struct dr_job {
    uint64_t id;
    uint32_t user, account; /* interned ids (dr_strtab_t of the workload) */
    uint8_t kind;           /* dr_job_kind_t */
    uint8_t state;          /* dr_job_state_t */
    uint8_t precision;      /* dr_precision_t */
    int32_t priority;       /* higher runs first */
    dr_job_req_t req;
    dr_time_t submit;
    dr_time_t time_limit; /* walltime limit; 0 = none */
    dr_time_t deadline;   /* absolute; 0 = none */

    /* Array task: parent id (0 = not a task), index, and the parent's
     * throttle (max tasks running at once, 0 = unlimited). */
    uint64_t array_parent;
    uint32_t array_index;
    uint32_t array_throttle;

    /* Model hints for the performance model (0 = unknown). */
    double hint_params;
    double hint_tokens;

    /* What the user declared about the job's size, beside time_limit: its
     * work in the units of its perf class (training steps, tokens, or
     * seconds at rate 1 for class 0); 0 = not declared.  Only an estimate:
     * the work the job really does is the simulator's truth (truth.h), which
     * no non-oracle policy can reach. */
    double work_declared;
    /* Checkpoints (declared): the job saves its progress every ckpt_every of
     * running time, so a failure loses at most that much; 0 = never. */
    dr_time_t ckpt_every;

    /* What a running job has shown (observed).  A job's rate depends on the
     * GPU type it runs on (perf_class indexes a dr_perf_table_t row; class 0
     * runs at rate 1 everywhere, i.e. work is seconds).  work_done is its
     * reported progress, exact as of work_t; while it runs it grows at
     * work_rate per second.  work_ckpt is the progress its last checkpoint
     * holds (what survives a failure). */
    uint32_t perf_class;
    /* Input shard by name: 0 = none, else 1 + its id in the workload's
     * shard table (dr_workload_t.shards); req.shard is its cluster binding. */
    uint32_t shard;
    double work_done;
    double work_ckpt;
    dr_time_t work_t;
    double work_rate;
    double attained_gpu_s; /* GPU-seconds held so far, all runs together */
    uint32_t npreempt;     /* times it was preempted */

    /* Run bookkeeping (set by the scheduler core). */
    dr_time_t first_start; /* DR_TIME_NEVER until first started */
    dr_time_t start;       /* start of the current/last run segment */
    dr_time_t end;         /* time it reached a terminal state */
    uint32_t nstarts;
    dr_alloc_t alloc;    /* valid while STARTING/RUNNING/COMPLETING */
    uint32_t sched_slot; /* scheduler-private index; do not touch */
} dr_job_t;

const char *dr_job_state_name(dr_job_state_t s);
int dr_job_state_parse(const char *s, dr_job_state_t *out);
const char *dr_job_kind_name(dr_job_kind_t k);
int dr_job_kind_parse(const char *s, dr_job_kind_t *out);
const char *dr_precision_name(dr_precision_t p);
int dr_precision_parse(const char *s, dr_precision_t *out);

bool dr_job_state_terminal(dr_job_state_t s);
/* Is from -> to a legal transition? */
bool dr_job_transition_ok(dr_job_state_t from, dr_job_state_t to);

/* Initialise a job with defaults: 1 node, 1 whole GPU, any type, pending,
 * first_start = DR_TIME_NEVER. */
void dr_job_init(dr_job_t *j);
/* Check a request is internally consistent (non-zero nodes, milli in range,
 * a share < 1000 only with one GPU per node ...).  Errors name the field. */
int dr_job_req_validate(const dr_job_req_t *r, dr_err_t *err);

/* Progress at time now (work_done plus what was done since work_t). */
double dr_job_work_done(const dr_job_t *j, dr_time_t now);
/* Progress its last checkpoint holds at now: what it had at its last start
 * (it restarted from a checkpoint, or from nothing) plus the progress of
 * every full ckpt_every of running since then. */
double dr_job_ckpt_progress(const dr_job_t *j, dr_time_t now);
/* Running time a stop at now would lose: since the last checkpoint, every
 * ckpt_every of running since the last start (since that start when it
 * declares none; 0 when it is not running).  What a policy weighs when it
 * chooses whom to preempt. */
double dr_job_lost_s(const dr_job_t *j, dr_time_t now);
/* Bring work_done up to date at now and set a new rate (0 = stopped). */
void dr_job_set_rate(dr_job_t *j, dr_time_t now, double rate);

void dr_alloc_free(dr_alloc_t *a);
int dr_alloc_copy(dr_alloc_t *dst, const dr_alloc_t *src);
/* Total milli-GPUs held (sum over slots). */
uint64_t dr_alloc_milli(const dr_alloc_t *a);
/* Milli-GPUs a request takes once placed (what account limits count). */
uint64_t dr_job_req_milli(const dr_job_req_t *r);

/* Array ranges in Slurm syntax: "0-99", "1,3,5-7", "0-999:4" (step), with an
 * optional "%N" throttle.  Indices are appended to *idx. */
int dr_array_parse(const char *spec, uint32_t **idx, size_t *n, uint32_t *throttle, dr_err_t *err);

#endif
