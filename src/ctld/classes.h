/* classes.h - how fast each job runs on each GPU type, as the controller
 * knows it (classes.c): the perf table the policy reads, filled from what
 * jobs declare (--speeds, --estimate), what the runs of their class showed
 * (--class; an array's tasks) and the catalog's figures. */
#ifndef DROVER_CTLD_CLASSES_H
#define DROVER_CTLD_CLASSES_H

#include "ctld/ctld.h"
#include "ctld/job.h"

/* At start, once the cluster is loaded and before the scheduler is made:
 * the table has the cluster's types as its columns. */
int ctld_classes_init(dr_ctld_t *c, dr_err_t *err);
void ctld_classes_free(dr_ctld_t *c);
/* The table bound to the cluster, for dr_sched_opts_t.perf. */
const dr_perf_view_t *ctld_classes_view(dr_ctld_t *c);
/* Give cj (its dr_job_t made from its spec, kind and array parent set) its
 * class and its work estimate; user: its owner.  With check_deadline, a job
 * that by the estimate cannot finish by its deadline on any type it may use
 * is refused (DR_EINVAL, naming its fastest type and the time it needs). */
int ctld_classes_assign(dr_ctld_t *c, ctld_job_t *cj, const char *user, bool check_deadline,
                        dr_err_t *err);
/* A large array explores (its class learns each type's rate from runs): a
 * task of an array of CLASSES_EXPLORE_MIN tasks or more (no shards, no
 * order of preference) is sent to a GPU type its class has no run on and
 * no task was sent to yet, one that has room for it now and (by the
 * estimate) meets its deadline: its request is narrowed to that type.
 * true when it was. */
bool ctld_classes_explore(dr_ctld_t *c, ctld_job_t *task);
/* A run of cj completed (exit 0, its first run): its class learns. */
void ctld_classes_observe(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now);
/* The classes that learned since the last commit, into the store (the
 * turn's transaction), and their reload at start. */
int ctld_classes_save(dr_ctld_t *c, dr_err_t *err);
int ctld_classes_restore(dr_ctld_t *c, dr_err_t *err);
/* The job's "speeds" object: its class, what its estimate rests on and,
 * for each type it may use, the rate, run time, cost and whether it meets
 * the deadline.  NULL for a job without GPUs or an array/service parent. */
struct json_t *ctld_classes_job_obj(dr_ctld_t *c, const ctld_job_t *cj);
/* GET /v1/classes: the named classes (a user's own; an operator's: all). */
struct json_t *ctld_classes_list(dr_ctld_t *c, const char *user, bool all);

#endif
