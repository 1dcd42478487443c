/* budget.c - an account's spending per UTC day and calendar month and its
 * running jobs' commitments (budget.h). */
#include "sched/budget.h"

#include <math.h>
#include <stdlib.h>

/* Days since 1970-01-01 of the first day of the month holding `days`
 * (Howard Hinnant's civil-from-days and days-from-civil, proleptic
 * Gregorian). */
static double month_first_day(double days)
{
    long z = (long)floor(days) + 719468;
    long era = (z >= 0 ? z : z - 146096) / 146097;
    long doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long y = yoe + era * 400;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    long m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    /* back: the 1st of (y, m) */
    long yy = y - (m <= 2);
    long era2 = (yy >= 0 ? yy : yy - 399) / 400;
    long yoe2 = yy - era2 * 400;
    long mm = m > 2 ? m - 3 : m + 9;
    long doy2 = (153 * mm + 2) / 5;
    long doe2 = yoe2 * 365 + yoe2 / 4 - yoe2 / 100 + doy2;
    return (double)(era2 * 146097 + doe2 - 719468);
}

double dr_budget_period_start(int period, double t)
{
    double day = floor(t / 86400.0);
    return (period == DR_BUDGET_DAY ? day : month_first_day(day)) * 86400.0;
}

void dr_budget_roll(dr_budget_t *b, double now)
{
    for (int p = 0; p < DR_BUDGET_NPERIODS; p++) {
        double st = dr_budget_period_start(p, now);
        if (st <= b->start[p])
            continue;
        b->start[p] = st;
        b->closed[p] = 0;
        b->since[p] = b->rate * st; /* every running job counts from the new start */
    }
}

void dr_budget_run(dr_budget_t *b, double rate, double start, double end, int d, double now)
{
    if (!(rate > 0) || !isfinite(rate))
        return;
    dr_budget_roll(b, now);
    if (end < start)
        end = start;
    for (int p = 0; p < DR_BUDGET_NPERIODS; p++) {
        double from = start > b->start[p] ? start : b->start[p];
        if (d < 0 && now > from)
            b->closed[p] += rate * (now - from); /* what this run spent in the period */
        b->since[p] += d * rate * from;
    }
    b->rate += d * rate;
    b->ends += d * rate * end;
    if (b->rate < 1e-12) { /* nothing runs: no rounding drift kept */
        b->rate = b->ends = 0;
        for (int p = 0; p < DR_BUDGET_NPERIODS; p++)
            b->since[p] = 0;
    }
}

double dr_budget_spent(const dr_budget_t *b, int period, double now)
{
    double st = dr_budget_period_start(period, now);
    if (st > b->start[period]) { /* a new period not rolled into yet: only what runs counts */
        double s = b->rate * (now - st);
        return s > 0 ? s : 0;
    }
    double s = b->closed[period] + b->rate * now - b->since[period];
    return s > 0 ? s : 0;
}

double dr_budget_committed(const dr_budget_t *b, double now)
{
    double c = b->ends - b->rate * now;
    return c > 0 ? c : 0;
}

static unsigned long ur_home(const dr_user_rates_t *m, unsigned long long k)
{
    return (unsigned long)((k * 0x9E3779B97F4A7C15ULL) >> 17) & (m->cap - 1);
}

static long ur_find(const dr_user_rates_t *m, unsigned long long k)
{
    if (!m->cap)
        return -1;
    for (unsigned long i = ur_home(m, k);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k)
            return (long)i;
        if (!m->key[i])
            return -1;
    }
}

/* Twice the slots, the entries moved over; -1 when out of memory (m as it was). */
static int ur_grow(dr_user_rates_t *m)
{
    unsigned long cap = m->cap ? m->cap * 2 : 64;
    unsigned long long *key = calloc(cap, sizeof *key);
    double *rate = calloc(cap, sizeof *rate);
    if (!key || !rate) {
        free(key);
        free(rate);
        return -1;
    }
    for (unsigned long j = 0; j < m->cap; j++) {
        if (!m->key[j])
            continue;
        unsigned long h = (unsigned long)((m->key[j] * 0x9E3779B97F4A7C15ULL) >> 17) & (cap - 1);
        while (key[h])
            h = (h + 1) & (cap - 1);
        key[h] = m->key[j];
        rate[h] = m->rate[j];
    }
    free(m->key);
    free(m->rate);
    m->key = key;
    m->rate = rate;
    m->cap = cap;
    return 0;
}

int dr_user_rate_add(dr_user_rates_t *m, unsigned user, double d)
{
    unsigned long long k = (unsigned long long)user + 1;
    long i = ur_find(m, k);
    if (i >= 0) {
        m->rate[i] += d;
        if (m->rate[i] < 1e-12)
            m->rate[i] = 0; /* kept: a slot is never emptied (no tombstones needed) */
        return 0;
    }
    if (d <= 0)
        return 0;
    if ((m->n + 1) * 2 > m->cap && ur_grow(m) != 0)
        return -1;
    unsigned long h = ur_home(m, k);
    while (m->key[h])
        h = (h + 1) & (m->cap - 1);
    m->key[h] = k;
    m->rate[h] = d;
    m->n++;
    return 0;
}

double dr_user_rate(const dr_user_rates_t *m, unsigned user)
{
    long i = ur_find(m, (unsigned long long)user + 1);
    return i >= 0 ? m->rate[i] : 0;
}

void dr_user_rates_free(dr_user_rates_t *m)
{
    free(m->key);
    free(m->rate);
    m->key = NULL;
    m->rate = NULL;
    m->cap = m->n = 0;
}
