/* fairshare.c - fair share between accounts: GPU-seconds held by each
 * account's running jobs, decayed over a half-life, and the factor
 * F = 2^(-U/S) of Slurm's classic multifactor priority (U the account's
 * share of all decayed usage, S its normalised shares).  The scheduler
 * core orders its pending queue with it (sched.c); the accrual is exact
 * between events, since the GPUs an account holds only change at events,
 * so a run gives the same figures however often it is sampled. */
#include "sched/fairshare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drover/cluster.h"

#define DEFAULT_HALF_LIFE_S (7.0 * 86400.0) /* Slurm's PriorityDecayHalfLife */
#define MAX_EXPONENT        64.0

int dr_fs_init(dr_fs_t *fs, const dr_cluster_t *c)
{
    memset(fs, 0, sizeof *fs);
    fs->n = c->naccounts + 1;
    fs->shares = calloc(fs->n, sizeof *fs->shares);
    fs->usage = calloc(fs->n, sizeof *fs->usage);
    fs->raw = calloc(fs->n, sizeof *fs->raw);
    fs->milli = calloc(fs->n, sizeof *fs->milli);
    fs->factor = calloc(fs->n, sizeof *fs->factor);
    fs->rank = calloc(fs->n, sizeof *fs->rank);
    fs->order = calloc(fs->n, sizeof *fs->order);
    if (!fs->shares || !fs->usage || !fs->raw || !fs->milli || !fs->factor || !fs->rank ||
        !fs->order) {
        dr_fs_free(fs);
        return -1;
    }
    for (size_t k = 0; k < fs->n; k++) {
        fs->shares[k] = k < c->naccounts ? c->accounts[k].shares : 1.0;
        fs->factor[k] = 1.0;
    }
    fs->fmax = 1.0;
    if (c->fairshare_half_life == DR_TIME_NEVER)
        fs->half_life_s = 0;
    else if (c->fairshare_half_life > 0)
        fs->half_life_s = dr_time_to_s(c->fairshare_half_life);
    else
        fs->half_life_s = DEFAULT_HALF_LIFE_S;
    return 0;
}

void dr_fs_free(dr_fs_t *fs)
{
    free(fs->shares);
    free(fs->usage);
    free(fs->raw);
    free(fs->milli);
    free(fs->factor);
    free(fs->rank);
    free(fs->order);
    memset(fs, 0, sizeof *fs);
}

/* Decayed and raw usage of slot k, dt seconds after t. */
static void accrue(const dr_fs_t *fs, size_t k, double dt, double *u, double *raw)
{
    double gpus = (double)fs->milli[k] / 1000.0;
    *u = fs->usage[k];
    *raw = fs->raw[k];
    if (!(dt > 0))
        return;
    *raw += gpus * dt;
    if (fs->half_life_s <= 0) {
        *u += gpus * dt;
        return;
    }
    /* d = 2^(-dt/h); 1 - d through expm1, exact for short steps */
    double x = -dt * M_LN2 / fs->half_life_s, one_minus_d = -expm1(x);
    *u = *u * exp(x) + gpus * (fs->half_life_s / M_LN2) * one_minus_d;
}

void dr_fs_advance(dr_fs_t *fs, dr_time_t now)
{
    if (!fs->started) {
        fs->started = true;
        fs->t = now;
        return;
    }
    if (now <= fs->t)
        return;
    double dt = dr_time_to_s(now - fs->t);
    for (size_t k = 0; k < fs->n; k++)
        accrue(fs, k, dt, &fs->usage[k], &fs->raw[k]);
    fs->t = now;
}

void dr_fs_hold(dr_fs_t *fs, size_t k, uint64_t m, int d, dr_time_t now)
{
    dr_fs_advance(fs, now);
    if (d > 0)
        fs->milli[k] += m;
    else
        fs->milli[k] = fs->milli[k] >= m ? fs->milli[k] - m : 0;
}

void dr_fs_usage_at(const dr_fs_t *fs, size_t k, dr_time_t now, double *decayed, double *raw)
{
    double dt = fs->started && now > fs->t ? dr_time_to_s(now - fs->t) : 0;
    accrue(fs, k, dt, decayed, raw);
}

bool dr_fs_counts(const dr_fs_t *fs, size_t k)
{
    return k + 1 < fs->n || fs->n == 1 || fs->raw[k] > 0 || fs->milli[k] > 0;
}

double dr_fs_norm_shares(const dr_fs_t *fs, size_t k)
{
    double total = 0;
    for (size_t i = 0; i < fs->n; i++)
        if (dr_fs_counts(fs, i))
            total += fs->shares[i];
    return dr_fs_counts(fs, k) && total > 0 ? fs->shares[k] / total : 0;
}

double dr_fs_factor_of(const dr_fs_t *fs, const double *usage, size_t k)
{
    double total = 0;
    for (size_t i = 0; i < fs->n; i++)
        total += usage[i];
    double u = total > 0 ? usage[k] / total : 0;
    if (!(u > 0))
        return 1.0; /* nothing used: whatever its shares */
    double s = dr_fs_norm_shares(fs, k);
    double e = s > 0 ? u / s : MAX_EXPONENT;
    return exp2(-(e < MAX_EXPONENT ? e : MAX_EXPONENT));
}

/* Insertion sort of fs->order by factor desc, slot asc: accounts are few
 * and qsort has no context argument in C17; stable, so ties stay in slot
 * order. */
static void sort_by_factor(dr_fs_t *fs, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t x = fs->order[i];
        size_t j = i;
        while (j > 0 && fs->factor[fs->order[j - 1]] < fs->factor[x]) {
            fs->order[j] = fs->order[j - 1];
            j--;
        }
        fs->order[j] = x;
    }
}

bool dr_fs_refresh(dr_fs_t *fs)
{
    /* Only counted slots take part: the implicit account before it has
     * used anything (factor 1) would otherwise make one declared account's
     * factor differ from "the highest", and fair share would move where
     * there is only one account to share between. */
    fs->fmax = 0;
    size_t n = 0;
    for (size_t k = 0; k < fs->n; k++) {
        fs->factor[k] = dr_fs_factor_of(fs, fs->usage, k);
        if (!dr_fs_counts(fs, k))
            continue;
        fs->order[n++] = (uint32_t)k;
        if (fs->factor[k] > fs->fmax)
            fs->fmax = fs->factor[k];
    }
    /* rank = how many distinct factors are higher: sort the counted slots
     * by factor (then slot, for a deterministic order) */
    sort_by_factor(fs, n);
    bool changed = false, active = false;
    uint32_t r = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = fs->order[i];
        if (i > 0 && fs->factor[k] != fs->factor[fs->order[i - 1]])
            r++;
        active |= r > 0;
        changed |= fs->rank[k] != r;
        fs->rank[k] = r;
    }
    for (size_t k = 0; k < fs->n; k++)
        if (!dr_fs_counts(fs, k)) {
            changed |= fs->rank[k] != 0;
            fs->rank[k] = 0; /* unused, uncounted: with the first */
        }
    if (changed)
        fs->gen++;
    fs->active = active;
    return changed;
}
