/* compare.h - several policies replayed on one workload and reported side
 * by side: what `drover sim` does, as library calls an API can make too.
 *
 * The driver loads the cluster and the workload, splits the policy list,
 * runs dr_sim_run once per policy (timing it: the library reads no clock),
 * turns each run into a report with dr_compare_report, and formats the
 * reports as a table (dr_report_table), SVG charts (report.h) or the JSON of
 * dr_compare_json.  Pure: no I/O. */
#ifndef DROVER_COMPARE_H
#define DROVER_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "drover/cluster.h"
#include "drover/declare.h"
#include "drover/error.h"
#include "drover/report.h"
#include "drover/sim.h"
#include "drover/workload.h"

/* A comma-separated list of policies, each "name" or "name:key=val,...".  A
 * policy's own options are separated by ',' too, so a new policy starts only
 * at a word naming one: "fifo,backfill:depth=5,drover:a=1,b=2" is fifo,
 * backfill:depth=5 and drover:a=1,b=2.  Empty words are skipped.  On
 * success *out holds *n malloc'd specs (free with dr_compare_policies_free).
 * Errors: DR_ENOENT for a word that names no policy ("unknown policy
 * 'lottery'"), DR_ELIMIT for more than max policies, DR_EINVAL for a list
 * with none. */
int dr_compare_policies_split(const char *list, size_t max, char ***out, size_t *n, dr_err_t *err);
void dr_compare_policies_free(char **specs, size_t n);

/* The report of one run (res, of wl on c with options o): dr_report_compute
 * over its log, job figures over the window o->stop_first..stop_last when
 * one is set, series of at most max_points points; the window's figures
 * beside the lower bound (dr_window_stats); and what the simulator knows
 * beyond its log (dr_report_add_sim).  rep is left freed on failure. */
int dr_compare_report(const dr_cluster_t *c, const dr_workload_t *wl, const dr_sim_opts_t *o,
                      const dr_sim_result_t *res, size_t max_points, dr_report_t *rep,
                      dr_window_stats_t *win, dr_err_t *err);

/* What the driver knows of the comparison as a whole. */
typedef struct dr_compare_info {
    size_t trace_rows_skipped;         /* malformed rows skipped (lenient) */
    const dr_declare_opts_t *declared; /* what users were said to declare */
    double restart_overhead_s;
} dr_compare_info_t;

/* {"policies": [...], ...} (malloc'd, ends with a newline): for each run,
 * dr_report_json's object of r[i] (completed by dr_compare_report)
 * followed by what the run knows beyond its log - wall_s[i] (the driver's
 * wall-clock seconds for it), scheduler passes, node failures and spot
 * losses, data locality and starts by locality, the window's figures
 * beside the lower bound (win[i]), the cloud bill and the whole bill
 * (r[i].sim.total_cost_usd) - then what the policies were told: the size
 * estimates (and whether they were the truth) and the restart overhead.
 * Numbers with 10 significant digits; NULL when out of memory. */
char *dr_compare_json(const dr_report_t *r, const dr_sim_result_t *res,
                      const dr_window_stats_t *win, const double *wall_s, size_t n,
                      const dr_compare_info_t *info);

#endif
