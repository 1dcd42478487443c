/* history_plot.h - `drover history --plot`: the rows of GET /v1/history
 * turned into cost and GPU-hours per account per day (or hour), and that
 * drawn as an SVG chart (svg_plot.h).  Buckets are the caller's local days
 * and hours; nothing else here depends on the machine. */
#ifndef DROVER_CLI_HISTORY_PLOT_H
#define DROVER_CLI_HISTORY_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "drover/error.h"

typedef enum cli_plot_by { CLI_PLOT_AUTO, CLI_PLOT_DAY, CLI_PLOT_HOUR } cli_plot_by_t;

#define CLI_PLOT_MAX_BUCKETS 5000
#define CLI_PLOT_NO_ACCOUNT  "(none)" /* jobs that declared no account */

typedef struct cli_usage {
    bool hourly;
    size_t nx;
    double *t0;     /* nx + 1 bucket edges, Unix seconds (local midnights or hours) */
    char **xlabels; /* "2026-12-01" or "12-01 14:00" */
    size_t nacc;
    char **accounts;     /* by total cost, largest first (ties: GPU-hours, then name) */
    double *cost, *gpuh; /* nacc x nx, row-major */
    double total_cost, total_gpuh;
    size_t jobs; /* rows counted (summary rows of arrays and services are not) */
} cli_usage_t;

/* From a GET /v1/history reply: each job's cost and GPU-hours spread evenly
 * over [start_time, end_time] across the buckets it overlaps (all in its
 * end's bucket when it has no start or ran for no time).  AUTO is hourly
 * when the jobs span under two days.  DR_EINVAL when the span needs more
 * than CLI_PLOT_MAX_BUCKETS ("--by hour over 400 days ..."), DR_ENOMEM. */
int cli_usage_from_history(const json_t *reply, cli_plot_by_t by, cli_usage_t *u, dr_err_t *err);
void cli_usage_free(cli_usage_t *u);

/* The chart: two panels (cost in USD, GPU-hours) sharing the time axis,
 * stacked bars per account or one line per account (malloc'd; NULL on out
 * of memory).  `window` is shown under the title (may be NULL). */
char *cli_usage_svg(const cli_usage_t *u, bool lines, const char *window);

#endif
