/* trace_priv.h - what the trace readers (trace_*.c) share: the parse
 * context, row-error handling (stop, or skip and count when lenient) and
 * field parsers that produce "NAME:LINE: FIELD: reason" messages. */
#ifndef DROVER_SIM_TRACE_PRIV_H
#define DROVER_SIM_TRACE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/error.h"
#include "drover/workload.h"

typedef struct dr_trace_ctx {
    const char *name; /* file name used in messages */
    const dr_trace_opts_t *o;
    dr_workload_t *wl;
    dr_err_t *err;
    size_t first_job; /* wl->njobs when this parse began */
} dr_trace_ctx_t;

/* The readers: append to t->wl (dr_trace_parse calls dr_workload_finish). */
int dr_trace_read_gavel(dr_trace_ctx_t *t, const char *buf, size_t len);
int dr_trace_read_philly(dr_trace_ctx_t *t, const char *buf, size_t len);
int dr_trace_read_openb(dr_trace_ctx_t *t, const char *buf, size_t len);
int dr_trace_read_drover(dr_trace_ctx_t *t, const char *buf, size_t len);

/* A malformed row (message in *row, already "NAME:LINE: ..."): when lenient,
 * count it, keep the first message and return DR_OK; otherwise copy it to
 * t->err and return its code.  DR_ENOMEM is never skipped. */
int dr_trace_row_error(dr_trace_ctx_t *t, const dr_err_t *row);

/* Fill e with "NAME:LINE: FIELD: <fmt>" and return code. */
int dr_trace_ferr(dr_err_t *e, const dr_trace_ctx_t *t, size_t line, const char *field, int code,
                  const char *fmt, ...) DR_PRINTF(6, 7);

/* Has the parse reached opts->max_jobs? */
bool dr_trace_full(const dr_trace_ctx_t *t);

/* A number >= min ("'x' is not a number", "'-5' must be >= 0"). */
int dr_trace_num(dr_err_t *e, const dr_trace_ctx_t *t, size_t line, const char *field,
                 const char *s, double min, double *out);
/* A whole number in [min, max]; "8" and "8.0" are both accepted. */
int dr_trace_uint(dr_err_t *e, const dr_trace_ctx_t *t, size_t line, const char *field,
                  const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Validate a request, prefixing the message with "NAME:LINE: ". */
int dr_trace_validate(dr_err_t *e, const dr_trace_ctx_t *t, size_t line, const dr_job_req_t *r);

/* Intern s (blank = "unknown") into tab; returns the id or DR_ENOMEM. */
int64_t dr_trace_intern(dr_strtab_t *tab, const char *s);

/* Shift the jobs added by this parse so the earliest arrives at 0
 * (deadlines move with them). */
void dr_trace_shift_to_zero(dr_trace_ctx_t *t);

/* a + b for non-negative times, saturating at DR_TIME_NEVER. */
static inline dr_time_t dr_trace_time_add(dr_time_t a, dr_time_t b)
{
    return b >= DR_TIME_NEVER - a ? DR_TIME_NEVER : a + b;
}

/* Is this record a comment ("#..." in its first field) or blank? */
bool dr_trace_skip_record(const char *const *fields, size_t n);

#endif
