/* perf_learn.h - how fast a class of jobs runs on each GPU type, learned
 * from the run times of its completed runs on top of a prior (perf_prior.h).
 *
 * A class is jobs alike in size and kind: the tasks of one array, or jobs a
 * user names alike (--class NAME).  The model: a run of the class on type t
 * takes T_t = S / speed_t seconds, with ln T_t = mu_t + e, e ~ N(0, sigma^2)
 * (run-to-run noise, pooled over the types).  The prior says how the
 * speeds compare (speed_t / speed_u, with a spread tau in ln units: 0.5 for
 * the catalog's peak ratios, 0.15 for declared speeds); it says nothing
 * about S.
 *
 * Each type's mu_t is estimated as a precision-weighted mean of two pieces
 * of evidence: the mean ln run time of its own n_t runs (variance
 * sigma^2 / n_t), and what the runs on the other types predict through the
 * prior's ratios (variance tau^2 + sigma^2 / n_others).  So a type's own
 * runs take over as they accumulate (with sigma 0.1 and the catalog prior,
 * one run of its own already weighs 25 times the prediction), a type never
 * run is placed by the ratio from where the class did run, and with no run
 * at all the rates are the prior's.  sigma is the pooled within-type
 * spread, starting from 0.3 worth two runs.  Rates are relative to the
 * class's reference type (its fastest by the prior), whose expected run
 * time is the class's size in work units. */
#ifndef DROVER_PERF_LEARN_H
#define DROVER_PERF_LEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"

/* Completed runs of a class on one type: count and sums of ln seconds. */
typedef struct dr_perf_obs {
    uint32_t n;
    double sum, sum2;
} dr_perf_obs_t;

/* Where an estimate of a type comes from. */
typedef enum dr_perf_basis {
    DR_PERF_NONE = 0, /* cannot run there */
    DR_PERF_PRIOR,    /* no run of the class anywhere: the prior alone */
    DR_PERF_VIA,      /* no run on this type: the others' runs through the prior's ratio */
    DR_PERF_OBSERVED  /* runs on this type (with the others' evidence) */
} dr_perf_basis_t;
const char *dr_perf_basis_name(dr_perf_basis_t b);

typedef struct dr_perf_est {
    size_t ntypes;
    unsigned ref;                   /* reference type: rate 1 */
    double rate[DR_MAX_GPU_TYPES];  /* relative to ref; 0 = cannot run */
    double run_s[DR_MAX_GPU_TYPES]; /* expected seconds of one run; 0 = unknown */
    /* the estimate's spread: a factor (1.2 = within 20% at one sigma); 0 = unknown */
    double spread[DR_MAX_GPU_TYPES];
    uint8_t basis[DR_MAX_GPU_TYPES]; /* dr_perf_basis_t */
    double size;                     /* one run's work (seconds on ref); 0 = no run seen */
    double sigma;                    /* run-to-run spread in use (ln units) */
    uint32_t runs;                   /* runs seen, all types */
} dr_perf_est_t;

#define DR_PERF_TAU_CATALOG  0.5
#define DR_PERF_TAU_DECLARED 0.15

/* Add one completed run of `seconds` (> 0) on type t. */
void dr_perf_obs_add(dr_perf_obs_t *o, double seconds);
/* Estimate a class on ntypes types from its prior (relative speeds, 0 =
 * cannot run; at least one above 0), its prior's spread tau and its runs
 * (obs[ntypes]).  A type with runs but a prior of 0 is estimated from its
 * runs alone. */
void dr_perf_estimate(const double *prior, double tau, const dr_perf_obs_t *obs, size_t ntypes,
                      dr_perf_est_t *out);

#endif
