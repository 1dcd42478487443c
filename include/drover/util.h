/* util.h - small containers the core shares: growable arrays, a string
 * interning table, a deterministic RNG and a CSV line splitter.  No I/O. */
#ifndef DROVER_UTIL_H
#define DROVER_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/error.h"

/* Grow *arr (element size sz) so it can hold at least need elements.
 * Returns 0 or DR_ENOMEM; *cap is updated. */
int dr_grow(void **arr, size_t *cap, size_t need, size_t sz);

#define DR_PUSH(arr, n, cap, item)                                                                 \
    (((n) < (cap) || dr_grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr))) == 0)               \
         ? ((arr)[(n)++] = (item), 0)                                                              \
         : DR_ENOMEM)

char *dr_strdup(const char *s);
char *dr_strndup(const char *s, size_t n);
bool dr_streq_ci(const char *a, const char *b);
/* Is name one of the comma-separated names in list ("ann,bob")?  An empty
 * name or a NULL list is never. */
bool dr_name_in_list(const char *list, const char *name);

/* A growable vector of owned strings. */
typedef struct dr_strvec {
    char **v;
    size_t n, cap;
} dr_strvec_t;

int dr_strvec_push(dr_strvec_t *sv, const char *s);
int dr_strvec_push_owned(dr_strvec_t *sv, char *s);
void dr_strvec_free(dr_strvec_t *sv);

/* String interning: each distinct string gets a dense id (0, 1, 2 ...).
 * Used for users, accounts and event-log details so jobs hold 32-bit ids. */
typedef struct dr_strtab {
    char **strs;
    size_t n, cap;
    uint32_t *slots; /* open addressing: id+1, 0 = empty */
    size_t nslots;
} dr_strtab_t;

/* Returns the id, or -1 on allocation failure. */
int64_t dr_strtab_intern(dr_strtab_t *t, const char *s);
/* Returns the id or -1 if absent. */
int64_t dr_strtab_find(const dr_strtab_t *t, const char *s);
const char *dr_strtab_get(const dr_strtab_t *t, uint32_t id);
void dr_strtab_free(dr_strtab_t *t);
int dr_strtab_copy(dr_strtab_t *dst, const dr_strtab_t *src);

/* xoshiro256** seeded through splitmix64: fast, deterministic for a seed
 * on every platform. */
typedef struct dr_rng {
    uint64_t s[4];
} dr_rng_t;

void dr_rng_seed(dr_rng_t *r, uint64_t seed);
uint64_t dr_rng_next(dr_rng_t *r);
double dr_rng_uniform(dr_rng_t *r);             /* [0,1) */
uint64_t dr_rng_below(dr_rng_t *r, uint64_t n); /* [0,n), unbiased */
double dr_rng_exp(dr_rng_t *r, double rate);    /* exponential, mean 1/rate */

/* CSV: split one record of buf starting at *pos into fields (RFC 4180
 * quoting: "a,b" and "" escapes).  Fields are copied into `scratch` (which
 * grows) and pointed to by fields[].  Returns the number of fields (>=1), 0 at
 * end of input, or DR_EINVAL for an unterminated quote / DR_ENOMEM.  *line is
 * advanced by the number of newlines consumed.  delim is ',' or '\t'. */
typedef struct dr_csv {
    const char *buf;
    size_t len, pos;
    size_t line;      /* 1-based line number of the record just read */
    size_t next_line; /* line where the next record starts */
    char delim;
    char *scratch;
    size_t scratch_cap;
    char **fields;
    size_t nfields, fields_cap;
} dr_csv_t;

void dr_csv_init(dr_csv_t *c, const char *buf, size_t len, char delim);
int dr_csv_next(dr_csv_t *c);
void dr_csv_free(dr_csv_t *c);
/* Index of a header name in the current record, or -1. */
int dr_csv_col(const dr_csv_t *c, const char *name);

/* Strict number parsing: the whole string must be a number (leading and
 * trailing blanks allowed).  Return 0 or DR_EINVAL. */
int dr_parse_double(const char *s, double *out);
int dr_parse_i64(const char *s, int64_t *out);
int dr_parse_u64(const char *s, uint64_t *out);
bool dr_is_blank(const char *s);

/* Read a whole file into a NUL-terminated malloc'd buffer.  This is the one
 * file-reading helper the trace/config/catalog loaders use; parsers
 * themselves work on memory so they can be fuzzed. */
int dr_read_file(const char *path, char **buf, size_t *len, dr_err_t *err);

#endif
