/* joblist.h - the compact job listing, GET /v1/jobs?format=tsv (docs/api.md):
 * one line per job with what `drover queue` shows of it, tab-separated.
 *
 * The controller writes the rows (from its jobs in memory, and from the
 * store's JOB objects of ended jobs through dr_joblist_from_json); the CLI
 * reads them back with dr_joblist_parse, and turns a JOB object into the
 * same row when an older controller answers JSON.  The TIME, GPU type and
 * tasks-summary rules exist once, here.  Pure: memory in, memory out. */
#ifndef DROVER_JOBLIST_H
#define DROVER_JOBLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "drover/error.h"

/* The columns, in the order the controller writes them; a reader finds
 * them by the header's names (columns may be added later). */
enum {
    DR_JL_ID,
    DR_JL_NAME,
    DR_JL_USER,
    DR_JL_KIND,
    DR_JL_STATE,
    DR_JL_GPUS,
    DR_JL_TYPE,
    DR_JL_NODES,
    DR_JL_TIME,
    DR_JL_REASON,
    DR_JL_NCOLS
};
/* "id", "name", "user", "kind", "state", "gpus", "gpu_type", "nodelist",
 * "time", "reason" */
extern const char *const dr_joblist_cols[DR_JL_NCOLS];

#define DR_JOBLIST_CTYPE "text/tab-separated-values; charset=utf-8"
/* The header line, '\n' included. */
#define DR_JOBLIST_HEADER "id\tname\tuser\tkind\tstate\tgpus\tgpu_type\tnodelist\ttime\treason\n"
/* The last line of a listing cut at its limit ('\n' included). */
#define DR_JOBLIST_TRUNCATED "#truncated\n"

/* One job's row.  The strings are borrowed (NULL is written empty). */
typedef struct dr_joblist_row {
    char id[48]; /* "42", or "42_3" for task 3 of array 42 */
    const char *name, *user, *kind, *state;
    uint64_t gpus;
    const char *gpu_type; /* dr_joblist_type */
    const char *nodelist; /* "" when it has no nodes */
    double time_s;        /* dr_joblist_time; NaN: unknown */
    const char *reason;   /* may point at summary */
    char summary[96];     /* an array's tasks summary, when reason is empty */
} dr_joblist_row_t;

/* TIME: while a job waits (pending or requeued, never started) the
 * seconds since submit (NaN without a submit time); otherwise its elapsed
 * time, or end (else now) minus start when elapsed is unknown, else 0.
 * NaN arguments are unknown values. */
double dr_joblist_time(const char *state, double submit, double start, double end, double elapsed,
                       double now);
/* The type the job got, else the one it asked for, else "any". */
const char *dr_joblist_type(const char *got, const char *requested);
/* An array's progress: "840/1000 done, 16 running". */
void dr_joblist_tasks_summary(char *buf, size_t n, long long done, long long total,
                              long long running);

/* The row of a JOB object (docs/api.md); r's strings point into job. */
void dr_joblist_from_json(const json_t *job, double now, dr_joblist_row_t *r);

/* At most this many bytes: what dr_joblist_row_write may write. */
size_t dr_joblist_row_max(const dr_joblist_row_t *r);
/* The row's line ('\n'-terminated, not NUL-terminated); its length.  Tab,
 * newline, CR and backslash in values are written \t \n \r \\; time is whole
 * seconds (truncated; negative as 0) or "-" when unknown. */
size_t dr_joblist_row_write(const dr_joblist_row_t *r, char *out);
/* s (n bytes) escaped as above into out (room for 2n); the end. */
char *dr_tsv_escape(char *out, const char *s, size_t n);

/* Read a listing in place (buf is changed: fields are unescaped and
 * NUL-terminated where they lie).  The header comes first and must name
 * every column of dr_joblist_cols (others are skipped); each row has as
 * many fields as the header, an id N or N_I, gpus a whole number and time
 * a whole number or "-"; every line ends in '\n'.  Lines starting with
 * '#' are notes: DR_JOBLIST_TRUNCATED sets *truncated, others are
 * skipped.  row() gets DR_JL_NCOLS fields in the order of the enum above;
 * a non-zero return stops the reading with that code.  DR_EINVAL with
 * "line N: ..." for a malformed listing. */
int dr_joblist_parse(char *buf, size_t len, int (*row)(void *ud, char *const *f), void *ud,
                     bool *truncated, dr_err_t *err);

#endif
