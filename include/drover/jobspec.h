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
    /* Which fields were given: bit (1u << DR_JF_*) for each field set by
     * dr_jobspec_set or from_json (a field is also taken as given when it
     * holds a non-default value), so that a script's directives do not
     * override the command line. */
    uint32_t set;
    /* --launcher: how a gang's processes start.  NULL or "none": drover
     * starts the ranks itself (a training job: one process per GPU; any
     * other: one per node) with the rank variables torchrun would set;
     * "torchrun": one `torchrun --nnodes --node_rank --nproc_per_node
     * --rdzv_endpoint ...` per node, which starts the processes. */
    char *launcher;
} dr_jobspec_t;

void dr_jobspec_init(dr_jobspec_t *s);
void dr_jobspec_free(dr_jobspec_t *s);

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
    DR_JF_LAUNCHER,
    DR_JF_N
} dr_jobfield_id_t;

/* One field of the vocabulary. */
typedef struct dr_jobfield {
    const char *name;   /* canonical (JSON key, trace column): "gpus_per_node" */
    const char *opt;    /* long option without dashes: "gpus-per-node" */
    char shopt;         /* short option ('N'), 0 if none */
    bool takes_value;   /* false for flags */
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

/* Parse Slurm/drover time limits: "MM", "MM:SS", "HH:MM:SS", "D-HH",
 * "D-HH:MM", "D-HH:MM:SS" (a bare number is minutes, as in Slurm) and
 * "90s", "15m", "2h", "3d"; "0", "UNLIMITED", "infinite" = none (0). */
int dr_time_limit_parse(const char *s, dr_time_t *out, dr_err_t *err);

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
 * --gpus-per-node; array spec well-formed; sizes in range. */
int dr_jobspec_validate(const dr_jobspec_t *s, dr_err_t *err);

/* The scheduler's view of the spec on cluster c: j->req (nodes, GPUs,
 * types mask from gpu_type, CPUs, memory), kind, priority, time_limit,
 * deadline (submit + relative), ckpt_every.  j must have been initialised
 * with dr_job_init; ids, user and submit are the caller's.  Unknown GPU
 * types are errors naming them ("gpu_type: no GPU type 'H10' in this
 * cluster (has A100, H100)"); so is a request that can never fit
 * (dr_cluster_req_possible). */
int dr_jobspec_to_job(const dr_jobspec_t *s, const dr_cluster_t *c, dr_time_t submit, dr_job_t *j,
                      dr_err_t *err);

/* Expand %j (job id), %A (array parent id), %a (array index), %x (job
 * name), %u (user name), %% in an output path template; malloc'd. */
char *dr_jobspec_expand_path(const char *tmpl, uint64_t job, uint64_t array_parent,
                             uint32_t array_index, const char *name, const char *user);

#endif
