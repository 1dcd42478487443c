/* window_stats.c - JCT, slowdown and fairness over a window of job ids,
 * next to the physical lower bound.  This is how the Gavel benchmark is
 * scored: the lower bound (each job alone on its fastest GPU type, never
 * queued) says how much room any scheduler had left, and the slowdown
 * percentiles say whether speed was bought by starving long jobs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drover/sim.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_t(const void *a, const void *b)
{
    dr_time_t x = *(const dr_time_t *)a, y = *(const dr_time_t *)b;
    return x < y ? -1 : x > y;
}

/* nearest-rank percentile of sorted v[0..n) */
static double pct(const double *v, size_t n, double p)
{
    if (!n)
        return NAN;
    size_t k = (size_t)ceil(p / 100.0 * (double)n);
    return v[k ? k - 1 : 0];
}

/* how many of sorted t[0..n) are <= x */
static size_t count_le(const dr_time_t *t, size_t n, dr_time_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The work job i really did (the result's jobs are aligned with wl's). */
static double true_work(const dr_workload_t *wl, size_t i)
{
    return i < wl->njobs ? wl->work[i] : NAN;
}

int dr_window_stats(const dr_sim_result_t *r, const dr_cluster_t *c, const dr_workload_t *wl,
                    uint64_t first, uint64_t last, dr_window_stats_t *out, dr_err_t *err)
{
    memset(out, 0, sizeof *out);
    dr_perf_view_t pv = {.table = &wl->perf};
    int rc = dr_perf_bind(&wl->perf, c, pv.map, err);
    if (rc != DR_OK)
        return rc;
    size_t n = r->njobs;
    double *jct = malloc((n ? n : 1) * sizeof *jct);
    double *slow = malloc((n ? n : 1) * sizeof *slow);
    dr_time_t *subs = malloc((n ? n : 1) * sizeof *subs);
    dr_time_t *ends = malloc((n ? n : 1) * sizeof *ends);
    if (!jct || !slow || !subs || !ends) {
        rc = dr_err_set(err, DR_ENOMEM, "window stats: out of memory");
        goto out;
    }
    size_t nends = 0;
    for (size_t i = 0; i < n; i++) {
        subs[i] = r->jobs[i].submit;
        if (dr_job_state_terminal(r->jobs[i].state))
            ends[nends++] = r->jobs[i].end;
    }
    qsort(subs, n, sizeof *subs, cmp_t);
    qsort(ends, nends, sizeof *ends, cmp_t);
    double G = (double)dr_cluster_total_gpus(c, -1);
    dr_time_t t0 = DR_TIME_NEVER, t1 = 0;
    double sum_jct = 0, sum_lb = 0, sum_slow = 0, sum_ftf = 0;
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        const dr_job_t *j = &r->jobs[i];
        if (last && (j->id < first || j->id > last))
            continue;
        out->jobs++;
        if (j->submit < t0)
            t0 = j->submit;
        dr_typemask_t run = dr_perf_runnable(&pv, c, j);
        double best = dr_perf_best_rate(&pv, j, run);
        if (best <= 0)
            continue; /* can run nowhere: no lower bound */
        double lb = true_work(wl, i) / best;
        sum_lb += lb;
        if (j->state != DR_JOB_COMPLETED)
            continue;
        double t = dr_time_to_s(j->end - j->submit);
        if (j->end > t1)
            t1 = j->end;
        jct[nc] = t;
        slow[nc] = lb > 0 ? t / lb : 1;
        sum_jct += t;
        sum_slow += slow[nc];
        /* finish-time fairness against a 1/N share of the cluster */
        double mix = 0;
        for (size_t k = 0; k < c->ntypes; k++)
            if (run >> k & 1)
                mix += (double)dr_cluster_total_gpus(c, (int)k) / G *
                       dr_perf_rate(&pv, j, (unsigned)k);
        size_t active = count_le(subs, n, j->submit) - count_le(ends, nends, j->submit);
        double gpus = j->req.gpus_per_node * (j->req.nodes ? j->req.nodes : 1);
        double share = active ? G / ((double)active * (gpus > 0 ? gpus : 1)) : 1;
        if (share > 1)
            share = 1;
        double ftf = mix > 0 ? t / (true_work(wl, i) / (share * mix)) : NAN;
        sum_ftf += ftf;
        if (ftf > out->max_ftf)
            out->max_ftf = ftf;
        nc++;
    }
    out->completed = nc;
    if (nc) {
        qsort(jct, nc, sizeof *jct, cmp_d);
        qsort(slow, nc, sizeof *slow, cmp_d);
        out->avg_jct_s = sum_jct / (double)nc;
        out->p50_jct_s = pct(jct, nc, 50);
        out->p99_jct_s = pct(jct, nc, 99);
        out->avg_slowdown = sum_slow / (double)nc;
        out->p99_slowdown = pct(slow, nc, 99);
        out->max_slowdown = slow[nc - 1];
        out->avg_ftf = sum_ftf / (double)nc;
        out->makespan_s = dr_time_to_s(t1 - t0);
    } else {
        out->avg_jct_s = out->p50_jct_s = out->p99_jct_s = NAN;
        out->avg_slowdown = out->p99_slowdown = out->max_slowdown = NAN;
        out->avg_ftf = out->max_ftf = NAN;
    }
    out->lower_bound_avg_jct_s = out->jobs ? sum_lb / (double)out->jobs : NAN;
out:
    free(jct);
    free(slow);
    free(subs);
    free(ends);
    return rc;
}
