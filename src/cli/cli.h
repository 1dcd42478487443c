/* cli.h - verbs of the drover command and the helpers they share. */
#ifndef DROVER_CLI_H
#define DROVER_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/plan.h"

int cli_sim(int argc, char **argv);
/* `drover sim --openb`: the openb packing benchmark (openb.c) */
int cli_sim_openb(int argc, char **argv);
int cli_plan(int argc, char **argv);
/* plan_site.c: the GPU types and counts of the cluster a plan is for */
typedef struct cli_site {
    char name[DR_PLAN_MAX_TYPES][DR_GPU_NAME_MAX]; /* catalog names */
    uint64_t count[DR_PLAN_MAX_TYPES];
    dr_plan_site_net_t net[DR_PLAN_MAX_TYPES]; /* its nodes of that type (GPUs per node, link,
                                                  network: what the site tells) */
    size_t n;
    bool live;     /* from a controller */
    char what[96]; /* "FILE" or "the controller", for messages */
} cli_site_t;
/* From a cluster config (drover's or a slurm.conf; or a preset name). */
int cli_site_from_file(cli_site_t *s, const dr_catalog_t *cat, const char *path, dr_err_t *err);
/* From the controller's nodes that are up (GET /v1/nodes). */
int cli_site_from_controller(cli_site_t *s, const dr_catalog_t *cat, dr_err_t *err);
/* The plan's types := the site's (those of --types, if given), capped at its
 * counts, each planned on the site's nodes of it (dr_plan_req_t.type_net). */
int cli_site_apply(const cli_site_t *s, dr_plan_req_t *r, const dr_catalog_t *cat, dr_err_t *err);
/* Ask the controller when the plan's top choice would start (a test-only
 * submit); `what` gets "8 x A100-80GB-SXM". */
int cli_site_estimate(const dr_plan_result_t *res, json_t **reply, char *what, size_t wn,
                      dr_err_t *err);
int cli_config(int argc, char **argv); /* config.c: drover config check FILE */

/* Live-cluster verbs: clients of the controller's HTTP API (docs/api.md,
 * docs/cli.md "Live cluster").  The job verbs: submit.c, queue.c, show.c
 * (show, events), control.c (cancel, hold, release, update), wait.c,
 * logs.c (what they share: jobs.h); nodes.c, token.c. */
int cli_submit(int argc, char **argv);
int cli_queue(int argc, char **argv);
int cli_show(int argc, char **argv);
int cli_cancel(int argc, char **argv);
int cli_hold(int argc, char **argv);
int cli_release(int argc, char **argv);
int cli_update(int argc, char **argv);
int cli_wait(int argc, char **argv);
int cli_events(int argc, char **argv);
int cli_logs(int argc, char **argv);
int cli_nodes(int argc, char **argv);
int cli_token(int argc, char **argv);
int cli_history(int argc, char **argv); /* history.c */
int cli_share(int argc, char **argv);   /* share.c */
int cli_classes(int argc, char **argv); /* classes.c: each class's speed per GPU type */
int cli_top(int argc, char **argv);     /* top.c: the live full-screen view */
int cli_admin(int argc, char **argv);   /* admin.c: backup of the store (operators) */
int cli_scale(int argc, char **argv);   /* services.c */
int cli_restart(int argc, char **argv);
/* After `show`'s fields: a service's replica table (nothing for other jobs). */
int cli_print_service(const json_t *job);
/* A test-only reply (POST /v1/jobs?test_only=1) as one line: "job would
 * start at 2026-12-02T05:00:00Z (in 12.0 min) on n2,n3" or "job would never
 * start: REASON" (submit.c; drover submit --test-only, drover plan). */
void cli_test_only_line(const json_t *reply, const char *what, char *out, size_t n);
/* srun.c: `srun` inside a job (the binary run under that name, or `drover srun`) */
int cli_srun(int argc, char **argv);
/* ckpt.c: `drover ckpt commit|verify|list` (no controller: files only) */
int cli_ckpt(int argc, char **argv);

/* `drover --server X VERB ...`: the server named before the verb (NULL if
 * none); a verb's own --server wins. */
extern const char *cli_server_arg;

/* Option "--name VALUE" or "--name=VALUE" at argv[*i]: 1 and *val set (and
 * *i advanced past a separate value), 0 if argv[*i] is another option, -1
 * (after a usage message) if the value is missing. */
int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **val);
/* Print JSON as the server sent it, indented, to stdout. */
void cli_print_json(const json_t *j);
/* Wall-clock now, Unix seconds (for ages and pending times). */
double cli_wall_now(void);
/* Sleep this many milliseconds. */
void cli_sleep_ms(int ms);

/* Print "drover: <msg>" to stderr; returns exit code 1 (or 2 for usage). */
int cli_fail(const dr_err_t *err);
int cli_usage_error(const char *fmt, ...);

/* Catalog from --catalog FILE or the built-in one. */
int cli_load_catalog(dr_catalog_t *cat, const char *path, dr_err_t *err);
/* --cluster: an existing file is a config file, anything else a preset. */
int cli_load_cluster(dr_cluster_t *c, const dr_catalog_t *cat, const char *arg, dr_err_t *err);
/* Write a string to DIR/NAME, creating DIR. */
int cli_write_file(const char *dir, const char *name, const char *text, dr_err_t *err);
double cli_now_s(void);

struct dr_workload;
/* `drover sim --dump-jobs FILE`: the jobs as replayed, one CSV row each
 * (sim_dump.c), so that another simulator can replay exactly the same work. */
int cli_dump_jobs(const char *path, const struct dr_workload *wl, const dr_cluster_t *c,
                  dr_err_t *err);

#endif
