/* perf.h - how fast a job runs on each GPU type.
 *
 * A perf table gives, for each job class and GPU type of a cluster, the rate
 * at which the class makes progress (work units per second: training steps,
 * or seconds-of-reference-work).  0 means the class cannot run there (does
 * not fit in memory, unsupported).  Class 0 is reserved: rate 1 everywhere,
 * so a job's work is simply its duration in seconds.
 *
 * Tables come from measurements (Gavel's throughput matrix, a site's CSV),
 * from model hints (perfmodel.h), and in the controller from what jobs
 * declare and what their runs showed (perf_prior.h, perf_learn.h). */
#ifndef DROVER_PERF_H
#define DROVER_PERF_H

#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/job.h"

typedef struct dr_perf_table {
    size_t nclasses;    /* including class 0 */
    size_t ntypes;      /* columns */
    char **type_names;  /* column GPU names */
    char **class_names; /* row names ("ResNet-18 (batch size 16) x1") */
    double *rate;       /* [class * ntypes + col] */
    size_t classes_cap;
} dr_perf_table_t;

void dr_perf_init(dr_perf_table_t *p);
void dr_perf_free(dr_perf_table_t *p);
int dr_perf_copy(dr_perf_table_t *dst, const dr_perf_table_t *src);
/* Set the column names (GPU types); must precede adding classes. */
int dr_perf_set_types(dr_perf_table_t *p, const char *const *names, size_t n);
/* Add a class with one rate per column; returns its index or an error. */
int dr_perf_add_class(dr_perf_table_t *p, const char *name, const double *rates);
int dr_perf_find_class(const dr_perf_table_t *p, const char *name);
/* dr_perf_add_class for a caller that knows the name is new (a controller
 * keeps its own index of names): no search of the table. */
int dr_perf_append_class(dr_perf_table_t *p, const char *name, const double *rates);
/* Replace the rates of class cls (> 0): a live controller's estimates move
 * as evidence comes in (perf_learn.h).  DR_EINVAL for class 0, an unknown
 * class or a rate that is negative or not finite. */
int dr_perf_set_rates(dr_perf_table_t *p, int cls, const double *rates);

/* Bind a table to a cluster: for each cluster type, which column describes
 * it (matched by name or catalog alias).  map[type] = column or -1 (no data:
 * the class cannot run there unless it is class 0). */
int dr_perf_bind(const dr_perf_table_t *p, const dr_cluster_t *c, int *map, dr_err_t *err);

/* A perf table bound to a cluster, as the schedulers see it. */
typedef struct dr_perf_view {
    const dr_perf_table_t *table; /* may be NULL: every job is class 0 */
    int map[DR_MAX_GPU_TYPES];
} dr_perf_view_t;

/* Rate of job j on cluster type `type` (1.0 for class 0). */
double dr_perf_rate(const dr_perf_view_t *v, const dr_job_t *j, unsigned type);
/* Types on which j could ever be placed (dr_cluster_hostable_types) and its rate is > 0. */
dr_typemask_t dr_perf_runnable(const dr_perf_view_t *v, const dr_cluster_t *c, const dr_job_t *j);
/* Best (largest) rate over the types in mask; 0 if none. */
double dr_perf_best_rate(const dr_perf_view_t *v, const dr_job_t *j, dr_typemask_t mask);

#endif
