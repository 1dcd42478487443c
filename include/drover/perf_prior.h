/* perf_prior.h - how fast a job runs on each GPU type before any run of it
 * has been seen: what its user declared (--speeds H100=1,A100=0.45) or,
 * failing that, the catalog's figures - never "every type is equal".
 *
 * Rates here are relative speeds: a job whose work takes W seconds at speed
 * 1 takes W / rate seconds on a type.  The catalog prior puts the cluster's
 * fastest type at 1; declared speeds keep the user's scale. */
#ifndef DROVER_PERF_PRIOR_H
#define DROVER_PERF_PRIOR_H

#include <stddef.h>
#include <stdint.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/job.h"

#define DR_SPEEDS_MAX  64
#define DR_SPEED_LIMIT 1e6 /* the largest speed one may declare */

/* Declared speeds, as written: "H100=1,A100=0.45,L4=0" (0: cannot run
 * there). */
typedef struct dr_speeds {
    size_t n;
    char name[DR_SPEEDS_MAX][DR_GPU_NAME_MAX];
    double speed[DR_SPEEDS_MAX];
} dr_speeds_t;

/* Parse "NAME=X[,NAME=X]...": names of letters, digits, '.', '_' and '-',
 * each once; X a number from 0 to DR_SPEED_LIMIT; at least one above 0.
 * Errors name the part that is wrong ("speeds: 'A100=fast': the speed must
 * be a number"). */
int dr_speeds_parse(const char *text, dr_speeds_t *out, dr_err_t *err);

/* Where a type's prior comes from. */
typedef enum dr_prior_src {
    DR_PRIOR_NONE = 0, /* the job cannot run there */
    DR_PRIOR_CATALOG,  /* the catalog's throughput (or bandwidth) ratio */
    DR_PRIOR_DECLARED, /* the user's --speeds */
    DR_PRIOR_SCALED,   /* not declared: the catalog ratio, scaled to the declared types */
    DR_PRIOR_UNKNOWN,  /* no figure in the catalog: the median of the known types */
    DR_PRIOR_MODEL     /* the performance model, from the declared model (--model) */
} dr_prior_src_t;
const char *dr_prior_src_name(dr_prior_src_t s);

/* The catalog prior of a job of this kind and precision on each of c's
 * types (rates[c->ntypes], src likewise): peak dense tensor throughput at
 * the job's precision (bf16 when unset; perfmodel.h's fallbacks) for
 * training, batch and array work, memory bandwidth for services (decoding
 * is bound by it); relative to the fastest type (1).  A type without the
 * figure gets the median of those with it; with none known, every type 1. */
void dr_perf_prior_catalog(const dr_cluster_t *c, dr_job_kind_t kind, dr_precision_t prec,
                           double *rates, uint8_t *src);

/* Declared speeds on c's types: a named type gets its speed; a type not
 * named gets its catalog prior (`catalog`, as dr_perf_prior_catalog gives
 * it) scaled by the geometric mean of speed / prior over the named types.
 * Names are matched as dr_cluster_find_type does; a name that is not a type
 * of c but one of the catalog's GPUs is passed over (a script may serve
 * several clusters); any other name is refused, as is a declaration that
 * names no type of c or leaves no type of c above 0. */
int dr_perf_prior_declared(const dr_cluster_t *c, const dr_catalog_t *cat, const dr_speeds_t *s,
                           const double *catalog, double *rates, uint8_t *src, dr_err_t *err);

#endif
