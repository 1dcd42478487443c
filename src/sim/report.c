/* report.c - computes a dr_report_t from the event log alone (plus the job
 * array for ids and submit times, and the cluster for GPU counts, prices and
 * TDPs).  Two linear passes over the log; jobs are indexed by id in an
 * open-addressing hash table, so the cost is O(records + jobs log jobs) (the
 * log factor is sorting JCTs and queueing delays) and nothing is allocated
 * per record.
 *
 * Definitions:
 *  - jobs = njobs.  completed / failed / cancelled / timeout count the jobs
 *    whose LAST record enters that terminal state; unfinished = every other
 *    job (including jobs of the array that never appear in the log).
 *    rejected = failed jobs that never started (no ->STARTING record).
 *    preemptions / requeues = number of ->PREEMPTED / ->REQUEUED records.
 *  - A job "starts" at its first ->STARTING record (or ->RUNNING, should a
 *    log ever skip STARTING).  JCT (completed jobs only) = time of the
 *    ->COMPLETED record - job.submit.  Queueing delay (jobs that started at
 *    least once) = first start - job.submit.
 *  - avg / p50 / p95 / p99 / max over those values; percentiles use the
 *    nearest-rank method: with n values sorted ascending, the p-th
 *    percentile is x[ceil(p * n / 100) - 1] (computed in integers), i.e. the
 *    smallest value with at least p% of the values at or below it.  All are
 *    NAN when there are no values.
 *  - Busy time: every record with milli > 0 opens a segment that lasts until
 *    the job's next record (or, for a job still holding GPUs when the log
 *    ends, until the last record of the log); it counts milli / 1000
 *    GPU-seconds per second, attributed to the record's GPU type.  CPU-only
 *    jobs hold milli 0 and count nothing.
 *  - t0 = the earliest of the first record's time and the submit times of the
 *    jobs that appear in the log; t_end = the last record's time;
 *    makespan = t_end - t0 (0 if the log is empty).
 *  - GPUs of a type = the GPUs of that type on on-prem nodes (not in an
 *    elastic pool) that are UP or DRAIN; gpus = their sum.  gpu_util =
 *    on-prem busy GPU-s / (gpus x makespan), overall and per type, so it is
 *    at most 1 (0 when makespan is 0; NAN when a type with no on-prem GPUs
 *    was used on-prem).  On-prem busy = busy - the GPU-s jobs held on pool
 *    nodes, which only the simulator knows (dr_report_add_sim): until it is
 *    added, a cluster with pools has NAN gpu_util and NAN util for the
 *    pools' types; pools of several types leave those types NAN for good
 *    (the pool figure is a total).  pool_util = pool busy GPU-hours / pool
 *    GPU-hours billed.
 *  - deadlines: jobs with job.deadline > 0.  met = the ->COMPLETED record is
 *    at or before the deadline; missed = completed later, ended otherwise
 *    (failed, cancelled, timeout), or not ended when the log ends after the
 *    deadline.  The rest are open.
 *  - gpu_hours = busy GPU-s / 3600 (pool nodes included).  cost per type =
 *    gpu_hours x price_hr; a used type (gpu_hours > 0) with a NAN price has
 *    cost NAN and sets cost_incomplete; an unused type costs 0.  The total
 *    sums the known types.  Energy per type = tdp_w x busy GPU-hours / 1000 (kWh), with NAN
 *    and energy_incomplete likewise.
 *  - util_series: busy GPUs / (gpus + every pool at its MaxNodes), so pool
 *    nodes count in both and it stays at most 1 (without pools: the
 *    fraction of the on-prem GPUs busy), a step function changing at
 *    every record time; queue_series: the number of pending jobs, where a job
 *    is pending from its submit record, and after each ->PENDING record,
 *    until its next record that is not ->PENDING (->STARTING or a terminal
 *    state in a legal log).  Point i = (t_i, v_i) means "v_i from t_i until
 *    t_{i+1}"; times are absolute seconds (dr_time_to_s).  If the step
 *    function has at most max_points points (one per distinct record time,
 *    plus t0 when it precedes the first record) they are returned as is,
 *    with the value after all records at that time.  Otherwise [t0, t_end]
 *    is cut into max_points - 1 equal bins, each point is a bin's start with
 *    the time-weighted mean over the bin, and a last point at t_end holds the
 *    final value.
 *  - jct_sorted: the completed jobs' JCTs in ascending order. */
#include "drover/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/sim.h"

#define DR_REPORT_DEFAULT_POINTS 400

enum { RP_SEEN = 1, RP_PENDING = 2, RP_STARTED = 4 };

/* Per-job state while walking the log. */
typedef struct rp_job {
    dr_time_t seg_t;       /* time of the job's latest record */
    dr_time_t first_start; /* first ->STARTING */
    uint32_t milli;        /* milli-GPUs held since seg_t */
    uint16_t type;
    uint8_t last_to;
    uint8_t flags;
} rp_job_t;

/* Job id -> index into the job array (open addressing, slot = index + 1). */
typedef struct rp_index {
    uint32_t *slots;
    size_t mask;
} rp_index_t;

static uint64_t dr_report_hash(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static int dr_report_index_build(rp_index_t *ix, const dr_job_t *jobs, size_t njobs, dr_err_t *err)
{
    if (njobs >= UINT32_MAX / 2)
        return dr_err_set(err, DR_ELIMIT, "report: %zu jobs is too many", njobs);
    size_t cap = 16;
    while (cap < njobs * 2)
        cap *= 2;
    ix->slots = calloc(cap, sizeof *ix->slots);
    if (!ix->slots)
        return dr_err_set(err, DR_ENOMEM, "report: out of memory");
    ix->mask = cap - 1;
    for (size_t k = 0; k < njobs; k++) {
        size_t h = dr_report_hash(jobs[k].id) & ix->mask;
        while (ix->slots[h]) {
            if (jobs[ix->slots[h] - 1].id == jobs[k].id)
                return dr_err_set(err, DR_EINVAL, "report: duplicate job id %llu",
                                  (unsigned long long)jobs[k].id);
            h = (h + 1) & ix->mask;
        }
        ix->slots[h] = (uint32_t)k + 1;
    }
    return DR_OK;
}

/* Index of the job with this id, or -1. */
static int64_t dr_report_index_find(const rp_index_t *ix, const dr_job_t *jobs, uint64_t id)
{
    size_t h = dr_report_hash(id) & ix->mask;
    while (ix->slots[h]) {
        uint32_t k = ix->slots[h] - 1;
        if (jobs[k].id == id)
            return k;
        h = (h + 1) & ix->mask;
    }
    return -1;
}

static int dr_report_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted x[0..n). */
static double dr_report_pct(const double *x, size_t n, size_t p)
{
    if (n == 0)
        return NAN;
    size_t rank = (p * n + 99) / 100;
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return x[rank - 1];
}

static double dr_report_mean(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s / (double)n;
}

/* --- series accumulation --- */

typedef struct rp_series {
    bool raw; /* one point per step, else time-weighted bins */
    dr_time_t t0, t_end;
    size_t nbins;
    double width; /* ns per bin */
    double *sum_u, *sum_q, *cov;
    dr_series_t *util, *queue;
} rp_series_t;

static void dr_report_series_push(rp_series_t *s, dr_time_t t, double u, double q)
{
    size_t i = s->util->n++;
    s->queue->n++;
    s->util->t[i] = s->queue->t[i] = dr_time_to_s(t);
    s->util->v[i] = u;
    s->queue->v[i] = q;
}

/* The step function holds (u, q) on [ta, tb). */
static void dr_report_series_step(rp_series_t *s, dr_time_t ta, dr_time_t tb, double u, double q)
{
    if (s->raw) {
        dr_report_series_push(s, ta, u, q);
        return;
    }
    if (tb <= ta)
        return;
    double xa = (double)(ta - s->t0), xb = (double)(tb - s->t0);
    size_t ia = (size_t)(xa / s->width), ib = (size_t)(xb / s->width);
    if (ia >= s->nbins)
        ia = s->nbins - 1;
    if (ib >= s->nbins)
        ib = s->nbins - 1;
    for (size_t i = ia; i <= ib; i++) {
        double lo = (double)i * s->width, hi = lo + s->width;
        if (i == s->nbins - 1)
            hi = (double)(s->t_end - s->t0);
        if (lo < xa)
            lo = xa;
        if (hi > xb)
            hi = xb;
        if (hi <= lo)
            continue;
        s->sum_u[i] += u * (hi - lo);
        s->sum_q[i] += q * (hi - lo);
        s->cov[i] += hi - lo;
    }
}

static int dr_report_series_alloc(dr_series_t *s, size_t n)
{
    s->n = 0;
    s->t = malloc(n * sizeof *s->t);
    s->v = malloc(n * sizeof *s->v);
    return s->t && s->v ? DR_OK : DR_ENOMEM;
}

static void dr_report_series_free(dr_series_t *s)
{
    free(s->t);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Second pass: rebuild the busy-milli and pending-count step functions. */
static int dr_report_series(dr_report_t *r, const dr_job_t *jobs, const dr_eventlog_t *log,
                            const rp_index_t *ix, rp_job_t *st, size_t njobs, dr_time_t t0,
                            size_t npoints_raw, size_t max_points, uint64_t total_gpus)
{
    rp_series_t s;
    memset(&s, 0, sizeof s);
    s.t0 = t0;
    s.t_end = log->ev[log->n - 1].t;
    s.util = &r->util_series;
    s.queue = &r->queue_series;
    s.raw = npoints_raw <= max_points;
    size_t npts = s.raw ? npoints_raw : max_points;
    if (dr_report_series_alloc(s.util, npts) != 0 || dr_report_series_alloc(s.queue, npts) != 0)
        return DR_ENOMEM;
    if (!s.raw) {
        s.nbins = max_points - 1;
        s.width = (double)(s.t_end - s.t0) / (double)s.nbins;
        s.sum_u = calloc(s.nbins, sizeof *s.sum_u);
        s.sum_q = calloc(s.nbins, sizeof *s.sum_q);
        s.cov = calloc(s.nbins, sizeof *s.cov);
        if (!s.sum_u || !s.sum_q || !s.cov) {
            free(s.sum_u);
            free(s.sum_q);
            free(s.cov);
            return DR_ENOMEM;
        }
    }
    memset(st, 0, njobs * sizeof *st);

    double scale = total_gpus ? 1.0 / (1000.0 * (double)total_gpus) : 0.0;
    uint64_t busy = 0;
    int64_t pending = 0;
    dr_time_t cur = t0;
    for (size_t i = 0; i < log->n; i++) {
        const dr_event_t *e = &log->ev[i];
        if (e->t != cur) {
            dr_report_series_step(&s, cur, e->t, (double)busy * scale, (double)pending);
            cur = e->t;
        }
        rp_job_t *j = &st[dr_report_index_find(ix, jobs, e->job)];
        busy = busy - j->milli + e->milli;
        j->milli = e->milli;
        if (e->to == DR_JOB_PENDING) {
            if (!(j->flags & RP_PENDING)) {
                j->flags |= RP_PENDING;
                pending++;
            }
        } else if (j->flags & RP_PENDING) {
            j->flags &= (uint8_t)~RP_PENDING;
            pending--;
        }
    }
    double u = (double)busy * scale, q = (double)pending;
    if (s.raw) {
        dr_report_series_push(&s, s.t_end, u, q);
    } else {
        for (size_t i = 0; i < s.nbins; i++) {
            double c = s.cov[i];
            dr_report_series_push(&s, s.t0 + (dr_time_t)((double)i * s.width),
                                  c > 0 ? s.sum_u[i] / c : u, c > 0 ? s.sum_q[i] / c : q);
        }
        dr_report_series_push(&s, s.t_end, u, q);
        free(s.sum_u);
        free(s.sum_q);
        free(s.cov);
    }
    return DR_OK;
}

/* --- the report --- */

/* busy GPU-s / (gpus x makespan), with the edge cases of the header */
static double dr_report_util_of(double busy_s, uint64_t gpus, double makespan_s)
{
    if (makespan_s <= 0)
        return 0;
    if (isnan(busy_s))
        return NAN;
    if (busy_s < 1e-6)
        busy_s = 0; /* rounding left over from subtracting the pool hours */
    if (gpus == 0)
        return busy_s > 0 ? NAN : 0;
    return busy_s / ((double)gpus * makespan_s);
}

/* Utilisation of the on-prem GPUs, overall and per type, from the busy
 * hours per type and r->pool_busy_gpu_hours (NAN = unknown). */
static void dr_report_util(dr_report_t *r, const dr_cluster_t *c)
{
    uint64_t pooled = 0; /* GPU types that elastic pools have */
    for (size_t p = 0; p < c->npools; p++)
        if (c->pools[p].type < DR_MAX_GPU_TYPES)
            pooled |= 1ULL << c->pools[p].type;
    bool one_type = pooled && !(pooled & (pooled - 1));
    double pool_s = r->pools ? r->pool_busy_gpu_hours * 3600.0 : 0;
    double busy_s = 0;
    for (size_t t = 0; t < r->ntypes; t++) {
        dr_report_type_t *rt = &r->types[t];
        double s = rt->gpu_hours * 3600.0;
        busy_s += s;
        /* on-prem busy of a pool type: all but the pool hours when the pools
         * have only this type; unknown with several (unless it was unused) */
        if ((pooled >> t & 1) && s > 0)
            s = one_type ? s - pool_s : NAN;
        rt->util = dr_report_util_of(s, rt->gpus, r->makespan_s);
    }
    r->gpu_util = dr_report_util_of(busy_s - pool_s, r->gpus, r->makespan_s);
    if (!r->pools)
        r->pool_util = 0;
    else if (r->pool_billed_gpu_hours > 0)
        r->pool_util = r->pool_busy_gpu_hours / r->pool_billed_gpu_hours;
    else /* nothing billed: idle pools, or (NAN) not known yet */
        r->pool_util = r->pool_busy_gpu_hours == 0 ? 0 : NAN;
}

/* On-prem GPUs (nodes outside pools, UP or DRAIN) of type t, or of all types if t < 0. */
static uint64_t dr_report_onprem_gpus(const dr_cluster_t *c, int t)
{
    if (!c->npools)
        return dr_cluster_total_gpus(c, t);
    uint64_t g = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *n = &c->nodes[i];
        if (n->pool < 0 && n->ngpus && (t < 0 || n->type == (unsigned)t) &&
            (n->state == DR_NODE_UP || n->state == DR_NODE_DRAIN))
            g += n->ngpus;
    }
    return g;
}

static void dr_report_types(dr_report_t *r, const dr_cluster_t *c, const double *busy_ms)
{
    double total_s = 0;
    r->ntypes = c->ntypes;
    r->pools = c->npools > 0;
    r->pool_busy_gpu_hours = r->pool_billed_gpu_hours = r->pools ? NAN : 0;
    for (size_t t = 0; t < c->ntypes; t++) {
        dr_report_type_t *rt = &r->types[t];
        const dr_gpu_spec_t *g = &c->types[t];
        double gpu_s = busy_ms[t] / 1000.0;
        snprintf(rt->name, sizeof rt->name, "%s", g->name);
        rt->gpus = dr_report_onprem_gpus(c, (int)t);
        r->gpus += rt->gpus;
        total_s += gpu_s;
        rt->gpu_hours = gpu_s / 3600.0;
        rt->cost_usd = 0;
        rt->energy_kwh = 0;
        if (rt->gpu_hours > 0) {
            rt->cost_usd = rt->gpu_hours * g->price_hr;
            rt->energy_kwh = g->tdp_w * rt->gpu_hours / 1000.0;
        }
        if (isnan(rt->cost_usd))
            r->cost_incomplete = true;
        else
            r->cost_usd += rt->cost_usd;
        if (isnan(rt->energy_kwh))
            r->energy_incomplete = true;
        else
            r->energy_kwh += rt->energy_kwh;
    }
    r->gpu_hours = total_s / 3600.0;
    dr_report_util(r, c);
}

int dr_report_compute(dr_report_t *r, const char *policy, const dr_cluster_t *c,
                      const dr_job_t *jobs, size_t njobs, const dr_eventlog_t *log,
                      const dr_report_opts_t *o, dr_err_t *err)
{
    memset(r, 0, sizeof *r);
    snprintf(r->policy, sizeof r->policy, "%s", policy ? policy : "");
    r->jobs = njobs;
    size_t max_points = o && o->max_points ? o->max_points : DR_REPORT_DEFAULT_POINTS;
    if (max_points < 2)
        max_points = 2;
    if (c->ntypes > DR_MAX_GPU_TYPES)
        return dr_err_set(err, DR_EINVAL, "report: cluster has %zu GPU types", c->ntypes);

    rp_index_t ix = {0};
    rp_job_t *st = NULL;
    double *jct = NULL, *qd = NULL;
    double busy_ms[DR_MAX_GPU_TYPES] = {0}; /* milli-GPU-seconds per type */
    int rc = dr_report_index_build(&ix, jobs, njobs, err);
    if (rc != 0)
        goto out;
    st = calloc(njobs ? njobs : 1, sizeof *st);
    jct = malloc((njobs ? njobs : 1) * sizeof *jct);
    qd = malloc((njobs ? njobs : 1) * sizeof *qd);
    if (!st || !jct || !qd) {
        rc = dr_err_set(err, DR_ENOMEM, "report: out of memory");
        goto out;
    }

    /* Pass 1: per-job outcome, starts, busy time. */
    dr_time_t t0 = log->n ? log->ev[0].t : 0, t_end = log->n ? log->ev[log->n - 1].t : 0;
    size_t ndistinct = 0;
    for (size_t i = 0; i < log->n; i++) {
        const dr_event_t *e = &log->ev[i];
        if (i > 0 && e->t < log->ev[i - 1].t) {
            rc = dr_err_set(err, DR_EINVAL, "report: event log record %zu goes back in time", i);
            goto out;
        }
        if (i == 0 || e->t != log->ev[i - 1].t)
            ndistinct++;
        int64_t k = dr_report_index_find(&ix, jobs, e->job);
        if (k < 0) {
            rc = dr_err_set(err, DR_EINVAL, "report: event log record %zu: unknown job %llu", i,
                            (unsigned long long)e->job);
            goto out;
        }
        if (e->to >= DR_JOB_NSTATES || (e->milli > 0 && e->type >= c->ntypes)) {
            rc = dr_err_set(err, DR_EINVAL, "report: event log record %zu (job %llu) is invalid", i,
                            (unsigned long long)e->job);
            goto out;
        }
        rp_job_t *j = &st[k];
        if (j->milli > 0)
            busy_ms[j->type] += (double)j->milli * dr_time_to_s(e->t - j->seg_t);
        if (!(j->flags & RP_SEEN)) {
            j->flags |= RP_SEEN;
            if (jobs[k].submit < t0)
                t0 = jobs[k].submit;
        }
        if (e->to == DR_JOB_PREEMPTED)
            r->preemptions++;
        else if (e->to == DR_JOB_REQUEUED)
            r->requeues++;
        if ((e->to == DR_JOB_STARTING || e->to == DR_JOB_RUNNING) && !(j->flags & RP_STARTED)) {
            j->flags |= RP_STARTED;
            j->first_start = e->t;
        }
        j->milli = e->milli;
        j->type = e->type;
        j->seg_t = e->t;
        j->last_to = e->to;
    }

    /* Per job: close open segments at the end of the log; outcomes. */
    size_t nq = 0;
    bool window = o && o->id_last > 0;
    if (window)
        r->jobs = 0;
    for (size_t k = 0; k < njobs; k++) {
        rp_job_t *j = &st[k];
        if (j->milli > 0)
            busy_ms[j->type] += (double)j->milli * dr_time_to_s(t_end - j->seg_t);
        if (window) {
            if (jobs[k].id < o->id_first || jobs[k].id > o->id_last)
                continue;
            r->jobs++;
        }
        if (j->flags & RP_STARTED)
            qd[nq++] = dr_time_to_s(j->first_start - jobs[k].submit);
        dr_job_state_t last = j->flags & RP_SEEN ? (dr_job_state_t)j->last_to : DR_JOB_PENDING;
        if (jobs[k].deadline > 0) {
            r->deadlines++;
            if (last == DR_JOB_COMPLETED && j->seg_t <= jobs[k].deadline)
                r->deadlines_met++;
            else if (dr_job_state_terminal(last) || (log->n && t_end > jobs[k].deadline))
                r->deadlines_missed++;
        }
        switch (last) {
        case DR_JOB_COMPLETED:
            r->completed++;
            jct[r->njct++] = dr_time_to_s(j->seg_t - jobs[k].submit);
            break;
        case DR_JOB_FAILED:
            r->failed++;
            if (!(j->flags & RP_STARTED))
                r->rejected++;
            break;
        case DR_JOB_CANCELLED: r->cancelled++; break;
        case DR_JOB_TIMEOUT: r->timeout++; break;
        default: r->unfinished++; break;
        }
    }

    qsort(jct, r->njct, sizeof *jct, dr_report_cmp_double);
    qsort(qd, nq, sizeof *qd, dr_report_cmp_double);
    r->avg_jct_s = dr_report_mean(jct, r->njct);
    r->p50_jct_s = dr_report_pct(jct, r->njct, 50);
    r->p95_jct_s = dr_report_pct(jct, r->njct, 95);
    r->p99_jct_s = dr_report_pct(jct, r->njct, 99);
    r->max_jct_s = r->njct ? jct[r->njct - 1] : NAN;
    r->avg_queue_s = dr_report_mean(qd, nq);
    r->p50_queue_s = dr_report_pct(qd, nq, 50);
    r->p95_queue_s = dr_report_pct(qd, nq, 95);
    r->p99_queue_s = dr_report_pct(qd, nq, 99);

    r->makespan_s = log->n ? dr_time_to_s(t_end - t0) : 0;
    dr_report_types(r, c, busy_ms);

    if (log->n) {
        uint64_t total_gpus = r->gpus; /* the on-prem GPUs and every pool at its largest */
        for (size_t p = 0; p < c->npools; p++)
            total_gpus += (uint64_t)c->pools[p].max_nodes * c->pools[p].gpus_per_node;
        size_t npoints_raw = ndistinct + (t0 < log->ev[0].t ? 1 : 0);
        if (dr_report_series(r, jobs, log, &ix, st, njobs, t0, npoints_raw, max_points,
                             total_gpus) != 0) {
            rc = dr_err_set(err, DR_ENOMEM, "report: out of memory");
            goto out;
        }
    }

    if (r->njct) {
        double *shrunk = realloc(jct, r->njct * sizeof *jct);
        r->jct_sorted = shrunk ? shrunk : jct;
        jct = NULL;
    }

out:
    free(ix.slots);
    free(st);
    free(jct);
    free(qd);
    if (rc != 0)
        dr_report_free(r);
    return rc;
}

void dr_report_free(dr_report_t *r)
{
    if (!r)
        return;
    dr_report_series_free(&r->util_series);
    dr_report_series_free(&r->queue_series);
    free(r->jct_sorted);
    r->jct_sorted = NULL;
    r->njct = 0;
}

void dr_report_add_sim(dr_report_t *r, const dr_cluster_t *c, const dr_sim_result_t *res,
                       const dr_window_stats_t *w, bool window)
{
    dr_report_sim_t *s = &r->sim;
    memset(s, 0, sizeof *s);
    s->set = true;
    s->node_failures = res->node_failures;
    s->spot_losses = res->spot_losses;
    s->shard_starts = res->stats.shard_starts;
    s->locality_hits = res->stats.locality_hits;
    s->provisions = res->provisions;
    s->cloud_cost_usd = res->cloud_cost_usd;
    /* cost_usd prices every job GPU-hour at catalog prices, pool nodes too */
    s->total_cost_usd = r->cost_usd - res->cloud_busy_list_usd + res->cloud_cost_usd;
    if (r->pools) {
        r->pool_busy_gpu_hours = res->cloud_busy_gpu_hours;
        r->pool_billed_gpu_hours = res->cloud_gpu_hours;
        dr_report_util(r, c);
    }
    if (w) {
        s->bound = true;
        s->window = window;
        s->jobs = w->jobs;
        s->completed = w->completed;
        s->unfinished = w->unfinished;
        s->measured = w->measured;
        s->avg_jct_s = w->avg_jct_s;
        s->lower_bound_avg_jct_s = w->lower_bound_avg_jct_s;
        s->avg_slowdown = w->avg_slowdown;
        s->p99_slowdown = w->p99_slowdown;
        s->max_slowdown = w->max_slowdown;
        s->avg_ftf = w->avg_ftf;
        s->max_ftf = w->max_ftf;
    }
}
