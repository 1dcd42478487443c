/* fairshare.h - per-account usage decayed over a half-life and the
 * fair-share factor it gives (Slurm's classic multifactor formula), kept by
 * the scheduler core (private to src/sched). */
#ifndef DROVER_SCHED_FAIRSHARE_H
#define DROVER_SCHED_FAIRSHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/time.h"

struct dr_cluster;

/* Slot k < naccounts is the cluster's account k; the last slot is the
 * implicit account of jobs with no (or an unknown) account. */
typedef struct dr_fs {
    size_t n;           /* cluster accounts + 1 */
    double *shares;     /* Shares= (the implicit account: 1) */
    double *usage;      /* GPU-seconds, decayed, as of t */
    double *raw;        /* GPU-seconds, undecayed, as of t */
    uint64_t *milli;    /* milli-GPUs held now by running jobs */
    double *factor;     /* F = 2^(-U/S) as of the last refresh */
    uint32_t *rank;     /* 0 = the highest factor; equal factors, equal rank */
    uint32_t *order;    /* scratch: slots by factor */
    double fmax;        /* the highest factor at the last refresh */
    dr_time_t t;        /* usage is as of t (set once started) */
    bool started;       /* t is meaningful */
    double half_life_s; /* 0: no decay */
    bool active;        /* the factors differ (more than one rank) */
    uint64_t gen;       /* bumped each time the ranks change */
} dr_fs_t;

int dr_fs_init(dr_fs_t *fs, const struct dr_cluster *c);
void dr_fs_free(dr_fs_t *fs);
/* Slot of a cluster account index (-1: the implicit account). */
static inline size_t dr_fs_slot(const dr_fs_t *fs, int acct)
{
    return acct < 0 ? fs->n - 1 : (size_t)acct;
}
/* Accrue usage up to `now` at the GPUs held since t (exact for a constant
 * rate: U(t+dt) = U d + r h/ln2 (1 - d), d = 2^(-dt/h)); a time before t
 * accrues nothing. */
void dr_fs_advance(dr_fs_t *fs, dr_time_t now);
/* Slot k's running jobs start (d > 0) or stop holding m milli-GPUs at now. */
void dr_fs_hold(dr_fs_t *fs, size_t k, uint64_t m, int d, dr_time_t now);
/* Usage of slot k at `now` (without accruing): decayed and raw. */
void dr_fs_usage_at(const dr_fs_t *fs, size_t k, dr_time_t now, double *decayed, double *raw);
/* Does slot k take part in the normalisation?  Every declared account
 * does; the implicit one only once it has been used or when no account is
 * declared, so that declaring accounts does not dilute their shares. */
bool dr_fs_counts(const dr_fs_t *fs, size_t k);
/* Normalised shares S of slot k (0 for one that does not count). */
double dr_fs_norm_shares(const dr_fs_t *fs, size_t k);
/* F = 2^(-U/S) for the given decayed usages (one per slot); U is the
 * slot's share of their sum (0 when nothing was used).  The exponent is
 * capped at 64 so that F never underflows to 0. */
double dr_fs_factor_of(const dr_fs_t *fs, const double *usage, size_t k);
/* Recompute the factors and ranks from the usage as of t; true when the
 * ranks changed (gen was bumped). */
bool dr_fs_refresh(dr_fs_t *fs);

#endif
