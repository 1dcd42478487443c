/* jobspec_priv.h - what the job-field vocabulary's files (src/api/) share:
 * the table behind dr_jobfield_t (how each field is stored and parsed), the
 * spellings that are not a field's canonical name, option or Slurm name
 * (--gres), and the moves that let a script's directives fill only the
 * fields the command line left open. */
#ifndef DROVER_API_JOBSPEC_PRIV_H
#define DROVER_API_JOBSPEC_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/jobspec.h"

/* Limits of the values (the parsers and dr_jobspec_validate agree). */
#define JF_MAX_NODES     100000u
#define JF_MAX_GPN       DR_MAX_GPUS_PER_NODE
#define JF_MAX_GPUS      1000000u
#define JF_MAX_CPUS      1000000u
#define JF_MAX_MEM_MB    ((uint64_t)1 << 50) /* as the config's MemMB= */
#define JF_MAX_TIME_S    9000000000LL        /* as dr_duration_parse */
#define JF_MAX_NAME      255u                /* name, account */
#define JF_MAX_PATH      4095u               /* output, error, chdir */
#define JF_MAX_ARRAY     1024u               /* array spec text */
#define JF_MAX_GPU_TYPES 64u                 /* names in gpu_type */
#define JF_MAX_TEXT      4095u               /* constraint, export, dependency text */
#define JF_MAX_REPLICAS  1024u               /* a service's replicas */
#define JF_MAX_SHARDLIST (1u << 22)          /* shard_list text (4 MiB) */

/* How a field is stored in dr_jobspec_t. */
typedef enum jf_store {
    JF_STR,
    JF_U32,
    JF_U64,
    JF_TIME,
    JF_I32,
    JF_KIND,
    JF_FLAG,   /* int8_t: -1 not given, 0, 1 */
    JF_SIGNAL, /* signal_num, signal_secs, signal_batch */
    JF_DEP     /* deps, ndeps, dep_any */
} jf_store_t;

/* How a field's text is parsed. */
typedef enum jf_parse {
    JF_P_STRING, /* free text, one line */
    JF_P_PATH,   /* free text, one line, path length */
    JF_P_KIND,
    JF_P_NODES, /* a count, or Slurm's "min-max" with min == max */
    JF_P_GPUS,  /* [gpu:][TYPE:]N */
    JF_P_COUNT,
    JF_P_TYPES,
    JF_P_TIME,
    JF_P_MEM,
    JF_P_ARRAY,
    JF_P_INT,
    JF_P_FLAG,      /* 1/true/yes/on, 0/false/no/off */
    JF_P_SIGNAL,    /* [B:]SIG[@SECS] */
    JF_P_DEP,       /* KIND:ID[:ID...][,KIND...] or with '?' */
    JF_P_EXPORT,    /* ALL, NONE, or [ALL,|NONE,]VAR[=VAL][,...] */
    JF_P_SHARDLIST, /* shard names, one per line */
    JF_P_READY,     /* tcp, none, http:/PATH */
    JF_P_SHARD,     /* a file name template: %a, %Na, %% */
    JF_P_SPEEDS     /* TYPE=SPEED[,TYPE=SPEED...] (perf_prior.h) */
} jf_parse_t;

/* How a spelling found a field (jf_lookup). */
typedef enum jf_how {
    JF_HOW_PLAIN = 0,
    JF_HOW_GRES, /* Slurm's --gres: the value is "gpu[:TYPE][:N]" */
    JF_HOW_NEG   /* a flag's negation, "--no-requeue": the value is inverted */
} jf_how_t;

typedef struct jf_def {
    dr_jobfield_t pub;
    uint8_t store; /* jf_store_t */
    uint8_t parse; /* jf_parse_t */
    size_t off;    /* of the value in dr_jobspec_t */
    uint64_t max;  /* counts: largest value; strings: longest text */
} jf_def_t;

/* The definition of field id (0 <= id < DR_JF_N). */
const jf_def_t *jf_def(int id);

/* Spellings: a field found by any name dr_jobfield_find accepts; *how
 * (jf_how_t) says whether the spelling was Slurm's --gres or a negation. */
const jf_def_t *jf_lookup(const char *name, uint8_t *how);

/* Set field d of s from text, read as the spelling `how` (jf_how_t) asks. */
int jf_set(dr_jobspec_t *s, const jf_def_t *d, uint8_t how, const char *value, dr_err_t *err);

/* The canonical text of s's signal ("B:USR1@120") or dependency
 * ("afterok:1:2_3,singleton"), malloc'd; NULL on no memory. */
char *jf_signal_text(const dr_jobspec_t *s);
char *jf_dep_text(const dr_jobspec_t *s);
/* Free s's dependency list (ndeps 0 after). */
void jf_deps_free(dr_jobspec_t *s);

/* Was field id given in s: its bit, or a value other than the default. */
bool jf_given(const dr_jobspec_t *s, int id);
/* Move field id from src to dst (dst's old value is freed, src's cleared);
 * dst's bit is set. */
void jf_move(dr_jobspec_t *dst, dr_jobspec_t *src, int id);

/* Is [s, s+n) valid UTF-8 (no overlong forms, surrogates or code points
 * above U+10FFFF: what jansson accepts)? */
bool jf_utf8_ok(const char *s, size_t n);

/* Append a copy of str to a NULL-terminated vector of *n strings. */
int jf_vec_push(char ***v, uint32_t *n, const char *str);
void jf_vec_free(char ***v, uint32_t *n);

#endif
