/* window_stats.c - JCT, slowdown and fairness over a window of job ids,
 * next to the physical lower bound.  This is how the Gavel benchmark is
 * scored: the lower bound (each job alone on its fastest GPU type, never
 * queued) says how much room any scheduler had left, and the slowdown
 * percentiles say whether speed was bought by starving long jobs.  The
 * definitions are in drover/sim.h; every figure is over the same jobs (the
 * completed ones), the lower bound included. */
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

/* A job's true amount of work (work units of its perf class): the
 * simulator's truth, aligned with wl->jobs (and the result's jobs). */
static double true_work(const dr_workload_t *wl, size_t i)
{
    return i < wl->njobs ? wl->work[i] : NAN;
}

/* wl->jobs[i] alone on its fastest GPU type, never queued; NAN if it can
 * run on no type. */
static double lower_bound_s(const dr_perf_view_t *pv, const dr_cluster_t *c,
                            const dr_workload_t *wl, size_t i)
{
    const dr_job_t *j = &wl->jobs[i];
    double best = dr_perf_best_rate(pv, j, dr_perf_runnable(pv, c, j));
    return best > 0 ? true_work(wl, i) / best : NAN;
}

int dr_lower_bounds(const dr_cluster_t *c, const dr_workload_t *wl, double *lb, dr_err_t *err)
{
    dr_perf_view_t pv = {.table = &wl->perf};
    int rc = dr_perf_bind(&wl->perf, c, pv.map, err);
    if (rc != DR_OK)
        return rc;
    for (size_t i = 0; i < wl->njobs; i++)
        lb[i] = lower_bound_s(&pv, c, wl, i);
    return DR_OK;
}

int dr_window_stats(const dr_sim_result_t *r, const dr_cluster_t *c, const dr_workload_t *wl,
                    uint64_t first, uint64_t last, dr_window_stats_t *out, dr_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (r->njobs != wl->njobs)
        return dr_err_set(err, DR_EINVAL, "window stats: the run has %zu jobs, the workload %zu",
                          r->njobs, wl->njobs);
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
    size_t nc = 0, nftf = 0;
    for (size_t i = 0; i < n; i++) {
        const dr_job_t *j = &r->jobs[i];
        if (last && (j->id < first || j->id > last))
            continue;
        out->jobs++;
        if (j->submit < t0)
            t0 = j->submit;
        if (!dr_job_state_terminal(j->state))
            out->unfinished++;
        if (j->state != DR_JOB_COMPLETED)
            continue;
        out->completed++;
        /* the lower bound over exactly the jobs whose JCT is averaged */
        double lb = lower_bound_s(&pv, c, wl, i);
        if (isnan(lb))
            continue; /* can run on no GPU type: nothing to compare with */
        double t = dr_time_to_s(j->end - j->submit);
        if (j->end > t1)
            t1 = j->end;
        jct[nc] = t;
        slow[nc] = lb > 0 ? t / lb : 1;
        sum_jct += t;
        sum_lb += lb;
        sum_slow += slow[nc];
        nc++;
        /* finish-time fairness against a 1/N share of the cluster */
        dr_typemask_t run = dr_perf_runnable(&pv, c, j);
        double mix = 0;
        for (size_t k = 0; k < c->ntypes && G > 0; k++)
            if (run >> k & 1)
                mix += (double)dr_cluster_total_gpus(c, (int)k) / G *
                       dr_perf_rate(&pv, j, (unsigned)k);
        size_t active = count_le(subs, n, j->submit) - count_le(ends, nends, j->submit);
        double gpus = j->req.gpus_per_node * (j->req.nodes ? j->req.nodes : 1);
        double share = active ? G / ((double)active * (gpus > 0 ? gpus : 1)) : 1;
        if (share > 1)
            share = 1;
        double work = true_work(wl, i);
        if (!(mix > 0) || !(work > 0))
            continue; /* no on-prem share (pool-only types) or no work: no FTF */
        double ftf = t / (work / (share * mix));
        sum_ftf += ftf;
        nftf++;
        if (ftf > out->max_ftf)
            out->max_ftf = ftf;
    }
    out->measured = nc;
    if (nc) {
        out->makespan_s = dr_time_to_s(t1 - t0);
        qsort(jct, nc, sizeof *jct, cmp_d);
        qsort(slow, nc, sizeof *slow, cmp_d);
        out->avg_jct_s = sum_jct / (double)nc;
        out->p50_jct_s = pct(jct, nc, 50);
        out->p99_jct_s = pct(jct, nc, 99);
        out->lower_bound_avg_jct_s = sum_lb / (double)nc;
        out->avg_slowdown = sum_slow / (double)nc;
        out->p99_slowdown = pct(slow, nc, 99);
        out->max_slowdown = slow[nc - 1];
    } else {
        out->avg_jct_s = out->p50_jct_s = out->p99_jct_s = NAN;
        out->lower_bound_avg_jct_s = NAN;
        out->avg_slowdown = out->p99_slowdown = out->max_slowdown = NAN;
    }
    if (nftf) {
        out->avg_ftf = sum_ftf / (double)nftf;
    } else {
        out->avg_ftf = out->max_ftf = NAN;
    }
out:
    free(jct);
    free(slow);
    free(subs);
    free(ends);
    return rc;
}
