/* format.h - how the live-cluster verbs show things: Slurm-style durations,
 * local times, aligned tables, and the reading of JOB objects that several
 * verbs share (is it over, what exit status does `wait` give, the progress
 * line).  Pure (the clock is passed in), so the unit tests pin the output. */
#ifndef DROVER_CLI_FORMAT_H
#define DROVER_CLI_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "drover/error.h"

/* Seconds as Slurm shows elapsed times: "M:SS", "H:MM:SS", "D-HH:MM:SS"
 * (truncated to whole seconds; negative counts as 0; NaN as "-"):
 * dr_duration_format's DR_DURATION_CLOCK (drover/time.h). */
char *cli_fmt_duration(double secs, char *buf, size_t n);
/* A short age for "heard from 5s ago": "5s", "3m", "2h", "4d" (whole
 * units, rounded down; under 2 of a unit stays in the smaller one). */
char *cli_fmt_age(double secs, char *buf, size_t n);
/* Unix seconds as local "YYYY-MM-DD HH:MM:SS". */
char *cli_fmt_time(double unix_s, char *buf, size_t n);
/* Megabytes as "512M", "500G", "1.5T" (one decimal unless whole). */
char *cli_fmt_mem_mb(uint64_t mb, char *buf, size_t n);
/* argv joined by spaces, each word quoted for a POSIX shell when it needs
 * it ("a b" -> 'a b'); malloc'd. */
char *cli_fmt_argv(const char *const *argv, size_t argc);

/* An aligned text table: columns separated by two spaces, left-aligned
 * unless marked right-aligned, the last column not padded, widths in
 * characters (UTF-8 aware).  Control characters in cells (a job name with a
 * newline or an escape sequence) are shown as '?', so a cell cannot break
 * the table or drive the terminal. */
typedef struct cli_table {
    size_t ncols;
    size_t *cells; /* row-major offsets into text; row 0 is the header */
    size_t nrows, cap;
    char *text; /* the cells as shown (cleaned), NUL-terminated, back to back */
    size_t text_len, text_cap;
    size_t *width; /* per column: its widest cell, in characters */
    bool *right;
} cli_table_t;

int cli_table_init(cli_table_t *t, size_t ncols, const char *const *header);
void cli_table_right(cli_table_t *t, size_t col);
/* ncols cells; NULL is shown empty. */
int cli_table_add(cli_table_t *t, const char *const *row);
/* The table as text, one line per row ending in '\n'; malloc'd (and its
 * length).  Linear in the table's size. */
char *cli_table_render(const cli_table_t *t);
char *cli_table_render_len(const cli_table_t *t, size_t *len);
/* The table written to f with one fwrite: DR_OK, DR_ENOMEM or DR_EIO. */
int cli_table_print(const cli_table_t *t, FILE *f);
void cli_table_free(cli_table_t *t);

/* --- JOB objects (docs/api.md) --- */

/* completed, failed, cancelled, timeout: the job will not run again. */
bool cli_state_terminal(const char *state);
/* The exit status `drover wait` gives for one ended job (docs/cli.md):
 * completed 0; failed with exit_code N > 0: N (N & 255 if that is not 0,
 * else 1); killed by signal S: 128 + S; failed otherwise: 1; cancelled: 1;
 * timeout: 124.  A job that has not ended: -1. */
int cli_job_exit_status(const json_t *job);
/* The job's id as users write it: "42", or "42_7" for task 7 of array 42. */
char *cli_job_id(const json_t *job, char *buf, size_t n);
/* TIME column: elapsed while it runs or after it ran, time since submission
 * while it waits. */
char *cli_job_time(const json_t *job, double now, char *buf, size_t n);
/* One line of `drover wait` progress: "job 42: running 0:12 on n1 (H100)",
 * "job 42: pending 0:05 (waiting for 8 GPUs)", "array 42: 840/1000 done,
 * 16 running". */
char *cli_job_progress(const json_t *job, double now, char *buf, size_t n);

/* Field accessors tolerant of absent or null members. */
const char *cli_json_str(const json_t *o, const char *key, const char *dflt);
/* Number (integer or real) or NaN. */
double cli_json_num(const json_t *o, const char *key);

#endif
