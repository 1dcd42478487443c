/* jobspec.h - the one vocabulary of job fields.
 *
 * A job as a user asks for it: what to run, on what, for how long.  The
 * same table of fields (names, units, validation, error texts) serves the
 * HTTP API's JSON, the CLI's options, `#DROVER` / `#SBATCH` lines in batch
 * scripts and the native trace format, so a field is written once.
 *
 * Pure: works on memory; errors name the field ("gpus_per_node: must be an
 * integer from 0 to 1024, not 'x'"), and directive errors add the place
 * ("job.sh:3: time: ..."). */
#ifndef DROVER_JOBSPEC_H
#define DROVER_JOBSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/job.h"
#include "drover/time.h"

#define DR_JOBSPEC_MAX_ARGS   4096
#define DR_JOBSPEC_MAX_ENV    4096
#define DR_JOBSPEC_MAX_SCRIPT (4u << 20)
#define DR_JOBSPEC_MAX_DEPS   1024 /* job references in --dependency, all kinds together */

/* Slurm's --dependency kinds. */
typedef enum dr_dep_kind {
    DR_DEP_AFTER = 0,  /* after:ID  - once ID has started (or was cancelled) */
    DR_DEP_AFTEROK,    /* afterok:ID - once ID completed with exit 0 */
    DR_DEP_AFTERANY,   /* afterany:ID - once ID ended, however */
    DR_DEP_AFTERNOTOK, /* afternotok:ID - once ID failed, timed out or was cancelled */
    DR_DEP_SINGLETON,  /* singleton - after every earlier job of this name and user ended */
    DR_DEP_NKINDS
} dr_dep_kind_t;

/* One job a dependency names: a job, or one task of an array ("ID_IDX"). */
typedef struct dr_dep_ref {
    uint64_t job;
    int64_t task; /* -1: the whole job (every task of an array); else the array index */
} dr_dep_ref_t;

/* One "kind:ID[:ID...]" term (singleton: no refs). */
typedef struct dr_dep {
    uint8_t kind; /* dr_dep_kind_t */
    uint32_t nrefs;
    dr_dep_ref_t *refs; /* owned */
} dr_dep_t;

typedef struct dr_jobspec {
    char *name;   /* -J/--job-name; NULL = from argv[0] or script name */
    uint8_t kind; /* dr_job_kind_t; --kind; default batch (array with --array) */
    bool kind_set;
    uint32_t nodes;         /* -N/--nodes; 0 = not given (1, or as few as fit for --gpus) */
    uint32_t gpus_per_node; /* --gpus-per-node; 0 = not given */
    uint32_t gpus;          /* --gpus (total, spread over nodes); 0 = not given */
    char *gpu_type;         /* --gpu-type "H100,A100" or "any"; NULL = any */
    dr_time_t time_limit;   /* -t/--time; 0 = none */
    char *array;            /* --array "0-99%8"; NULL = not an array */
    char *out_path;         /* -o/--output; may hold %j %A %a %x; NULL = default */
    char *err_path;         /* -e/--error; NULL = with stdout */
    char *account;          /* -A/--account */
    int32_t priority;       /* --priority */
    uint32_t cpus_per_node; /* --cpus-per-node (whole CPUs); 0 = default */
    uint64_t mem_mb;        /* --mem per node, "16G", "512M"; 0 = default */
    dr_time_t ckpt_every;   /* --checkpoint-every; 0 = none */
    dr_time_t deadline;     /* --deadline, relative to submit; 0 = none */
    char **argv;            /* the command, or with a script its arguments; argv[argc] == NULL */
    uint32_t argc;
    char *script;      /* contents of a batch script (run with /bin/sh if no #!) */
    char *script_name; /* its file name, for messages and the default job name */
    char *cwd;         /* working directory (absolute); NULL = the user's home */
    char **env;        /* "KEY=VALUE" */
    uint32_t nenv;
    /* Directives read from a script that drover does not act on (e.g.
     * "#SBATCH --mail-type=END"), said to the user rather than silently
     * dropped. */
    char **ignored;
    uint32_t nignored;
    /* Which fields were given: bit DR_JF_BIT(DR_JF_*) for each field set by
     * dr_jobspec_set or from_json (a field is also taken as given when it
     * holds a non-default value), so that a script's directives do not
     * override the command line. */
    uint64_t set;

    /* Slurm's task and node-sharing options (docs/slurm.md). */
    uint32_t ntasks;          /* -n/--ntasks; 0 = not given */
    uint32_t ntasks_per_node; /* --ntasks-per-node; 0 = not given */
    uint32_t gpus_per_task;   /* --gpus-per-task [TYPE:]N; 0 = not given (a type sets gpu_type) */
    uint64_t mem_per_gpu_mb;  /* --mem-per-gpu, as --mem; 0 = not given */
    /* --gpu-mem: each GPU's own memory at least this (MB, as --mem writes
     * it: 80G), i.e. only the GPU types that have it; 0 = any.  Not
     * --mem-per-gpu, which is host memory (as in Slurm). */
    uint64_t gpu_mem_mb;
    /* --signal=[B:]SIG[@SECS]: send SIG SECS seconds before the time limit;
     * signal_num 0 = not given.  signal_batch: B:, only the batch shell. */
    int32_t signal_num;   /* 1..64 (SIGUSR1 ...); names are read as <signal.h> numbers them */
    uint32_t signal_secs; /* 0..65535; 60 when @SECS is not written (as Slurm) */
    bool signal_batch;    /* B: */
    int8_t requeue;       /* --requeue 1, --no-requeue 0; -1 = not given (the cluster's default) */
    /* --dependency: all terms must hold (',' in Slurm), or with dep_any any
     * one of them ('?'); ndeps 0 = none. */
    dr_dep_t *deps; /* owned */
    uint32_t ndeps;
    bool dep_any;
    char *partition;  /* -p/--partition "gpu" or "a,b" (partition.h); NULL = the default */
    char *qos;        /* --qos; kept, not enforced; NULL = none */
    char *constraint; /* -C/--constraint node features "a100&ib" (partition.h); NULL = none */
    int8_t exclusive; /* --exclusive 1; -1 = not given, 0 = explicitly shared */
    char *export_env; /* --export "ALL", "NONE", "A,B=1", "ALL,B=1"; NULL = not given (ALL) */
    /* --launcher: how a gang's processes start.  NULL or "none": drover
     * starts the ranks itself (a training job: one process per GPU; any
     * other: one per node) with the rank variables torchrun would set;
     * "torchrun": one `torchrun --nnodes --node_rank --nproc_per_node
     * --rdzv_endpoint ...` per node, which starts the processes. */
    char *launcher;
    /* --shard: the input shard the job (each array task) reads, a name where
     * %a (or %Na, zero-padded to N digits) stands for the array index and %%
     * for '%'; NULL = none.  The scheduler prefers nodes holding it. */
    char *shard;
    /* --shard-list: one shard name per array task, in task order (the i-th
     * task reads the i-th name), '\n'-separated; the CLI reads them from a
     * file.  NULL = none; not with --shard. */
    char *shard_list;
    /* Services (kind serve): --replicas N long-running processes, each with
     * a port drover hands out (DROVER_PORT), restarted when one exits or its
     * node is lost; 0 = not given (1).  Giving it makes the job a service. */
    uint32_t replicas;
    /* --ready: when a replica counts as ready: "tcp" (its port accepts a
     * connection), "http:/PATH" (GET PATH on its port answers 2xx or 3xx)
     * or "none" (started = ready); NULL = tcp for a service. */
    char *ready;
    int8_t hold; /* -H/--hold: submitted held until `drover release`; -1 = not given */
    /* --test-only (sbatch's): only say when and where the job would start;
     * nothing is created (POST /v1/jobs?test_only=1); -1 = not given */
    int8_t test_only;
    /* How fast the job runs on each GPU type (docs/scheduling.md, "How
     * drover knows how fast a job runs on each type"):
     * --speeds "H100=1,A100=0.45": relative speeds (perf_prior.h); NULL = not
     * declared (the catalog's figures, or what the class's runs taught). */
    char *speeds;
    /* --class NAME: jobs alike (one model, one input size): the controller
     * learns the class's speed on each type from its runs; NULL = none (an
     * array's tasks are a class of their own). */
    char *perf_class;
    /* --estimate: how long the job runs at speed 1 (with --speeds) or on the
     * cluster's fastest type; 0 = not given.  An estimate, not a limit. */
    dr_time_t estimate;
    /* --model SPEC (a training job): the planner's model presets and
     * overrides ("llama-3-8b", "params=13B"); its tokens per second on each
     * GPU type come from the performance model drover plan uses, and
     * --tokens N (with K/M/B/T) is its work.  Checked at submit. */
    char *model;
    char *tokens;
} dr_jobspec_t;

void dr_jobspec_init(dr_jobspec_t *s);
void dr_jobspec_free(dr_jobspec_t *s);

#define DR_JF_BIT(id) ((uint64_t)1 << (id)) /* id's bit in dr_jobspec_t.set */

/* The fields, in --help order (dr_jobfield_t.id, bits of dr_jobspec_t.set). */
typedef enum dr_jobfield_id {
    DR_JF_NAME = 0,
    DR_JF_KIND,
    DR_JF_NODES,
    DR_JF_GPUS_PER_NODE,
    DR_JF_GPUS,
    DR_JF_GPU_TYPE,
    DR_JF_CPUS_PER_NODE,
    DR_JF_MEM,
    DR_JF_TIME_LIMIT,
    DR_JF_DEADLINE,
    DR_JF_CHECKPOINT_EVERY,
    DR_JF_ARRAY,
    DR_JF_OUTPUT,
    DR_JF_ERROR,
    DR_JF_CHDIR,
    DR_JF_ACCOUNT,
    DR_JF_PRIORITY,
    DR_JF_NTASKS,
    DR_JF_NTASKS_PER_NODE,
    DR_JF_GPUS_PER_TASK,
    DR_JF_MEM_PER_GPU,
    DR_JF_SIGNAL,
    DR_JF_REQUEUE, /* a flag; "--no-requeue" is its negation */
    DR_JF_DEPENDENCY,
    DR_JF_PARTITION,
    DR_JF_QOS,
    DR_JF_CONSTRAINT,
    DR_JF_EXCLUSIVE, /* a flag */
    DR_JF_EXPORT,
    DR_JF_LAUNCHER,
    DR_JF_SHARD,
    DR_JF_SHARD_LIST,
    DR_JF_REPLICAS,
    DR_JF_READY,
    DR_JF_HOLD,      /* a flag */
    DR_JF_TEST_ONLY, /* a flag */
    DR_JF_GPU_MEM,
    DR_JF_SPEEDS,
    DR_JF_CLASS,
    DR_JF_ESTIMATE,
    DR_JF_MODEL,
    DR_JF_TOKENS,
    DR_JF_N
} dr_jobfield_id_t;

/* One field of the vocabulary. */
typedef struct dr_jobfield {
    const char *name; /* canonical (JSON key, trace column): "gpus_per_node" */
    const char *opt;  /* long option without dashes: "gpus-per-node" */
    char shopt;       /* short option ('N'), 0 if none */
    bool takes_value; /* false for flags ("--exclusive"; set with the value "1", "true", "0" ...) */
    const char *sbatch; /* Slurm's long option if it means the same, else NULL */
    const char *doc;    /* one line for --help and docs */
    uint8_t id;         /* dr_jobfield_id_t */
} dr_jobfield_t;

/* NULL-terminated table, in --help order. */
const dr_jobfield_t *const *dr_jobfield_list(void);
/* Find by canonical name, long option ("gpus-per-node", "--gpus-per-node"),
 * short option ("-N") or Slurm spelling; NULL if none. */
const dr_jobfield_t *dr_jobfield_find(const char *name);

/* Set one field from text as a user typed it (CLI, directive, trace cell).
 * `field` is any spelling dr_jobfield_find accepts.  Errors:
 * "FIELD: reason". */
int dr_jobspec_set(dr_jobspec_t *s, const char *field, const char *value, dr_err_t *err);

/* Time limits (--time, #SBATCH --time) are read by dr_time_limit_parse
 * (drover/time.h), which the cluster config shares. */

/* Read the directives of a batch script: `#DROVER opt` and `#SBATCH opt`
 * lines from the top of the script (after the #! line) up to the first line
 * that is neither blank nor a comment, as Slurm does.  `#DROVER` wins over
 * `#SBATCH` for the same field; fields already set in s (from the command
 * line) win over both.  Options drover does not know are errors under
 * #DROVER and are listed in s->ignored under #SBATCH.  Errors:
 * "NAME:LINE: FIELD: reason".  Sets s->script and s->script_name. */
int dr_jobspec_parse_script(dr_jobspec_t *s, const char *name, const char *buf, size_t len,
                            dr_err_t *err);

/* The API's JSON object (docs/api.md): keys are canonical names; numbers or
 * strings where a unit applies ("time_limit": 3600 or "1:00:00"), argv and
 * env as arrays of strings.  Unknown keys are errors ("gpus_per_nod:
 * unknown field").  Errors "FIELD: reason". */
int dr_jobspec_from_json(dr_jobspec_t *s, const char *json, size_t len, dr_err_t *err);
/* Canonical JSON of s (all set fields; times in seconds), malloc'd;
 * from_json(to_json(s)) == s. */
char *dr_jobspec_to_json(const dr_jobspec_t *s);

/* Whole-spec consistency: a command or a script; not both --gpus and
 * --gpus-per-node; array spec well-formed; sizes in range; ntasks ==
 * nodes x ntasks_per_node when all three are given; gpus_per_task needs
 * ntasks or ntasks_per_node and excludes gpus/gpus_per_node; not both mem
 * and mem_per_gpu; mem_per_gpu only with GPUs. */
int dr_jobspec_validate(const dr_jobspec_t *s, dr_err_t *err);

/* The scheduler's view of the spec on cluster c: j->req (nodes, GPUs,
 * types mask from gpu_type, CPUs, memory), kind, priority, time_limit,
 * deadline (submit + relative), ckpt_every.  Slurm's task fields map as
 * docs/slurm.md says: gpus_per_task x tasks per node -> gpus_per_node,
 * mem_per_gpu x GPUs per node -> memory, -c x tasks per node -> CPUs,
 * exclusive -> the whole node where the eligible nodes are alike.  The
 * fields the controller acts on itself (signal, requeue, dependency,
 * qos, export) are not in j.  partition and constraint restrict j->req to
 * a node set of c (partition.h: interned in c, so c is not const; unknown
 * partitions and features are errors naming them) and the partitions'
 * MaxTime bounds time_limit (above it: an error; none given: DefaultTime,
 * else MaxTime).  j must have been initialised
 * with dr_job_init; ids, user and submit are the caller's.  Unknown GPU
 * types are errors naming them ("gpu_type: no GPU type 'H10' in this
 * cluster (has A100, H100)"); so is a request that can never fit
 * (dr_cluster_req_possible). */
int dr_jobspec_to_job(const dr_jobspec_t *s, dr_cluster_t *c, dr_time_t submit, dr_job_t *j,
                      dr_err_t *err);

/* What the spec asks for that drover does not honour (yet), for notes at
 * submission: one line each, '\n'-terminated, such as "--qos=high: not
 * enforced".  Writes at most len bytes into buf (NUL-terminated when len >
 * 0) and returns the length of the whole text, as snprintf does; 0 when
 * everything asked for is honoured. */
size_t dr_jobspec_unsupported(const dr_jobspec_t *s, char *buf, size_t len);

/* The signal number of a name ("USR1", "SIGUSR1", "usr1") or a number
 * ("10"); 0 if none.  dr_signal_name: "USR1" (no SIG), NULL if unnamed. */
int dr_signal_parse(const char *name, size_t len);
const char *dr_signal_name(int sig);

/* Expand %j (job id), %A (array parent id), %a (array index), %x (job
 * name), %u (user name), %N (the job's first node; kept as it is when node
 * is NULL), %% in an output path template; malloc'd. */
char *dr_jobspec_expand_path(const char *tmpl, uint64_t job, uint64_t array_parent,
                             uint32_t array_index, const char *name, const char *user,
                             const char *node);

/* The shard name of array task array_index (0 for a job that is not an
 * array): s->shard with %a / %Na / %% expanded, or with s->shard_list the
 * name on the line of the task's position in s->array (the i-th task, in
 * the order the spec lists them, reads line i); malloc'd, NULL when s
 * names no shard for it (or out of memory). */
char *dr_jobspec_shard_for(const dr_jobspec_t *s, uint32_t array_index);

/* Longest shard name, after expansion (a file name in an agent's cache). */
#define DR_SHARD_NAME_MAX 255

#endif
