/* compare.c - several policies on one workload, side by side
 * (include/drover/compare.h): the policy list, each run's report, and the
 * comparison's JSON.  This was the domain logic inside `drover sim`; the
 * CLI now parses options and prints. */
#include "drover/compare.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/sched.h"
#include "drover/util.h"
#include "sim/report_priv.h"

void dr_compare_policies_free(char **specs, size_t n)
{
    for (size_t i = 0; specs && i < n; i++)
        free(specs[i]);
    free(specs);
}

/* Append word [w, w + len) to the last spec: ",word". */
static int continue_spec(char **spec, const char *w, size_t len)
{
    size_t l = strlen(*spec);
    char *m = realloc(*spec, l + len + 2);
    if (!m)
        return DR_ENOMEM;
    m[l] = ',';
    memcpy(m + l + 1, w, len);
    m[l + 1 + len] = '\0';
    *spec = m;
    return DR_OK;
}

int dr_compare_policies_split(const char *list, size_t max, char ***out, size_t *n, dr_err_t *err)
{
    *out = NULL;
    *n = 0;
    char **specs = calloc(max ? max : 1, sizeof *specs);
    if (!specs)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    size_t np = 0;
    int rc = DR_OK;
    for (const char *w = list ? list : ""; *w && rc == DR_OK;) {
        size_t len = strcspn(w, ",");
        if (len > 0) {
            /* the name: up to ':' (as dr_sched_create reads it) */
            size_t nl = strcspn(w, ":,");
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)nl, w);
            bool known = dr_policy_find(name) != NULL;
            if (np > 0 && !known && memchr(w, '=', len)) {
                rc = continue_spec(&specs[np - 1], w, len); /* the last policy's options */
                if (rc != DR_OK)
                    dr_err_set(err, rc, "out of memory");
            } else if (!known) {
                rc = dr_err_set(err, DR_ENOENT, "unknown policy '%s'", name);
            } else if (np == max) {
                rc = dr_err_set(err, DR_ELIMIT, "at most %zu policies", max);
            } else if (!(specs[np] = dr_strndup(w, len))) {
                rc = dr_err_set(err, DR_ENOMEM, "out of memory");
            } else {
                np++;
            }
        }
        w += len;
        if (*w == ',')
            w++;
    }
    if (rc == DR_OK && np == 0)
        rc = dr_err_set(err, DR_EINVAL, "empty list");
    if (rc != DR_OK) {
        dr_compare_policies_free(specs, np);
        return rc;
    }
    *out = specs;
    *n = np;
    return DR_OK;
}

int dr_compare_report(const dr_cluster_t *c, const dr_workload_t *wl, const dr_sim_opts_t *o,
                      const dr_sim_result_t *res, size_t max_points, dr_report_t *rep,
                      dr_window_stats_t *win, dr_err_t *err)
{
    dr_report_opts_t ro = {
        .max_points = max_points, .id_first = o->stop_first, .id_last = o->stop_last};
    int rc = dr_report_compute(rep, o->policy, c, res->jobs, res->njobs, &res->log, &ro, err);
    if (rc != DR_OK)
        return rc;
    rc = dr_window_stats(res, c, wl, o->stop_first, o->stop_last, win, err);
    if (rc != DR_OK) {
        dr_report_free(rep);
        return rc;
    }
    dr_report_add_sim(rep, c, res, win, o->stop_last > 0);
    return DR_OK;
}

/* What a run knows beyond its log, after the report's own fields. */
static int add_run(json_t *o, const dr_report_t *r, const dr_sim_result_t *res,
                   const dr_window_stats_t *win, double wall_s)
{
    int bad = 0;
    bad |= json_object_set_new(o, "sim_wall_s", json_real(wall_s));
    bad |= dr_report_json_int(o, "sched_passes", res->stats.passes);
    bad |= dr_report_json_int(o, "node_failures", res->node_failures);
    bad |= dr_report_json_int(o, "spot_losses", res->spot_losses);
    bad |= dr_report_json_int(o, "shard_starts", res->stats.shard_starts);
    bad |= dr_report_json_int(o, "locality_hits", res->stats.locality_hits);
    json_t *by_loc = json_object();
    for (int l = 0; by_loc && l < DR_LOC_N; l++)
        bad |= dr_report_json_int(by_loc, dr_locality_name((dr_locality_t)l),
                                  res->stats.starts_by_locality[l]);
    bad |= by_loc ? json_object_set_new(o, "starts_by_locality", by_loc) : -1;
    /* the lower bound and every figure beside it are over the same jobs:
     * the window's completed ones with a lower bound ("measured") */
    bad |= dr_report_json_int(o, "window_jobs", win->jobs);
    bad |= dr_report_json_int(o, "window_completed", win->completed);
    bad |= dr_report_json_int(o, "window_unfinished", win->unfinished);
    bad |= dr_report_json_int(o, "window_measured", win->measured);
    bad |= dr_report_json_num(o, "window_avg_jct_s", win->avg_jct_s);
    bad |= dr_report_json_num(o, "lower_bound_avg_jct_s", win->lower_bound_avg_jct_s);
    bad |= dr_report_json_num(o, "avg_slowdown", win->avg_slowdown);
    bad |= dr_report_json_num(o, "p99_slowdown", win->p99_slowdown);
    bad |= dr_report_json_num(o, "max_slowdown", win->max_slowdown);
    bad |= dr_report_json_num(o, "avg_ftf", win->avg_ftf);
    bad |= dr_report_json_num(o, "max_ftf", win->max_ftf);
    bad |= dr_report_json_num(o, "window_makespan_s", win->makespan_s);
    /* elastic pools: the bill, and the whole bill with on-prem GPU-hours at
     * catalog prices (report.c works it out once: dr_report_add_sim) */
    bad |= dr_report_json_num(o, "cloud_cost_usd", res->cloud_cost_usd);
    bad |= dr_report_json_num(o, "cloud_gpu_hours", res->cloud_gpu_hours);
    bad |= dr_report_json_int(o, "cloud_nodes_provisioned", res->provisions);
    bad |= dr_report_json_num(o, "total_cost_usd", r->sim.total_cost_usd);
    return bad ? DR_ENOMEM : DR_OK;
}

char *dr_compare_json(const dr_report_t *r, const dr_sim_result_t *res,
                      const dr_window_stats_t *win, const double *wall_s, size_t n,
                      const dr_compare_info_t *info)
{
    json_t *root = json_object();
    json_t *arr = json_array();
    if (!root || !arr || json_object_set_new(root, "policies", arr) != 0) {
        json_decref(root);
        return NULL;
    }
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        json_t *o = dr_report_json_object(&r[i]);
        bad = !o || json_array_append_new(arr, o) != 0 ||
              add_run(o, &r[i], &res[i], &win[i], wall_s[i]) != DR_OK;
    }
    /* what the policies were told: every report says it */
    char mode[32] = "";
    if (info->declared)
        dr_size_mode_format(info->declared, mode, sizeof mode);
    bad |= dr_report_json_int(root, "trace_rows_skipped", info->trace_rows_skipped);
    bad |= json_object_set_new(root, "size_estimate", json_string(mode));
    bad |=
        json_object_set_new(root, "size_estimate_is_oracle",
                            json_boolean(info->declared && info->declared->mode == DR_SIZE_EXACT));
    bad |= json_object_set_new(root, "restart_overhead_s", json_real(info->restart_overhead_s));
    char *s =
        bad ? NULL
            : json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (!s)
        return NULL;
    /* re-own with malloc (jansson may use its own allocator), with a newline */
    size_t len = strlen(s);
    char *out = malloc(len + 2);
    if (out) {
        memcpy(out, s, len);
        out[len] = '\n';
        out[len + 1] = '\0';
    }
    free(s);
    return out;
}
