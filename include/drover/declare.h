/* declare.h - what the users of a replayed workload declare about their jobs.
 *
 * A trace records what jobs really did; a scheduler only ever sees what
 * their users said beforehand.  dr_workload_declare() fills that in for a
 * simulation, per job and reproducibly (seeded): a size estimate
 * (work_declared), a walltime limit for jobs whose trace has none, and a
 * checkpoint interval for training jobs.
 *
 * Size modes (`drover sim --size-estimate`):
 *   exact        declared = truth.  A reference only: no user knows this;
 *                every report flags it.
 *   lognormal:S  declared = truth x e^{N(0,S^2)} per job (the default, S=1:
 *                half the jobs off by more than 2x).
 *   none         no size declared; generated walltime limits are not given
 *                either (a limit only where the trace has one).
 *   trace        what the trace itself carries (the native format's
 *                estimate_s and time_limit_s columns), nothing else.
 *
 * Walltime limits (jobs without one, modes exact and lognormal): users pad
 * them so that jobs are not killed, and the padding varies widely (Mu'alem
 * and Feitelson, IEEE TPDS 2001; Tsafrir et al., IEEE TPDS 2007: most jobs
 * use a small fraction of the time they ask for).  So a limit is the job's
 * true run time on the slowest GPU type it can use times factor x
 * e^{noise |N(0,1)|}: never below factor x the run time, median about
 * 3.9x with the defaults (factor 2, noise 1).  The draw is independent of
 * the size estimate's. */
#ifndef DROVER_DECLARE_H
#define DROVER_DECLARE_H

#include <stddef.h>
#include <stdint.h>

#include "drover/error.h"
#include "drover/time.h"
#include "drover/workload.h"

typedef enum dr_size_mode {
    DR_SIZE_LOGNORMAL = 0,
    DR_SIZE_EXACT,
    DR_SIZE_NONE,
    DR_SIZE_TRACE,
} dr_size_mode_t;

typedef struct dr_declare_opts {
    dr_size_mode_t mode;
    double sigma;           /* lognormal: S (>= 0) */
    double walltime_factor; /* >= 1; 0 = generate no limits */
    double walltime_noise;  /* >= 0 */
    /* checkpoint interval for training jobs that declare none; 0 = none */
    dr_time_t ckpt_every;
    uint64_t seed;
} dr_declare_opts_t;

/* lognormal:1.0, walltime factor 2 with noise 1, checkpoints every 30 min. */
void dr_declare_opts_default(dr_declare_opts_t *o);
/* "exact", "none", "trace", "lognormal" (S = 1) or "lognormal:S". */
int dr_size_mode_parse(const char *s, dr_declare_opts_t *o, dr_err_t *err);
/* "lognormal:1", "exact" ... into buf; returns buf. */
const char *dr_size_mode_format(const dr_declare_opts_t *o, char *buf, size_t n);

/* Set every job's declared fields from the workload's truth (wl->work). */
int dr_workload_declare(dr_workload_t *wl, const dr_declare_opts_t *o, dr_err_t *err);

#endif
