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

/* How a field is stored in dr_jobspec_t. */
typedef enum jf_store { JF_STR, JF_U32, JF_U64, JF_TIME, JF_I32, JF_KIND } jf_store_t;

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
    JF_P_INT
} jf_parse_t;

typedef struct jf_def {
    dr_jobfield_t pub;
    uint8_t store; /* jf_store_t */
    uint8_t parse; /* jf_parse_t */
    size_t off;    /* of the value in dr_jobspec_t */
    uint64_t max;  /* counts: largest value; strings: longest text */
} jf_def_t;

/* The definition of field id (0 <= id < DR_JF_N). */
const jf_def_t *jf_def(int id);

/* Spellings: a field found by any name dr_jobfield_find accepts; *gres is
 * set when the spelling was Slurm's --gres (whose value is "gpu[:TYPE][:N]"). */
const jf_def_t *jf_lookup(const char *name, bool *gres);

/* Set field d of s from text (gres: the value is a --gres value). */
int jf_set(dr_jobspec_t *s, const jf_def_t *d, bool gres, const char *value, dr_err_t *err);

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
