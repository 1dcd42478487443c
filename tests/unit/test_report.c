/* test_report.c - the event log and the reports computed from it: every
 * figure of a hand-written log checked exactly, series, JSON, table, SVG, and
 * a million-record log. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/eventlog.h"
#include "drover/job.h"
#include "drover/report.h"
#include "drover/sim.h"
#include "sim/report_priv.h"
#include "testutil.h"

#define EPS 1e-9

static void assert_near(double got, double want, const char *what)
{
    if (!(fabs(got - want) <= EPS * fmax(1.0, fabs(want))))
        fail_msg("%s: got %.17g, want %.17g", what, got, want);
}
#define NEAR(got, want) assert_near((got), (want), #got)

/* Cluster: type 0 "TA" ($2/GPU-h, 400 W) x 4 GPUs, type 1 "TB" (no price,
 * 300 W) x 2 GPUs. */
static void make_cluster(dr_cluster_t *c)
{
    dr_err_t err = {0};
    dr_gpu_spec_t s;
    dr_cluster_init(c);
    dr_gpu_spec_unknown(&s, "TA");
    s.price_hr = 2.0;
    s.tdp_w = 400;
    s.mem_gb = 80;
    assert_int_equal(dr_cluster_add_type(c, &s, &err), 0);
    dr_gpu_spec_free(&s);
    dr_gpu_spec_unknown(&s, "TB");
    s.price_hr = NAN;
    s.tdp_w = 300;
    s.mem_gb = 24;
    assert_int_equal(dr_cluster_add_type(c, &s, &err), 1);
    dr_gpu_spec_free(&s);
    assert_true(dr_cluster_add_node(c, "a0", 0, 4, 64000, 512000, &err) >= 0);
    assert_true(dr_cluster_add_node(c, "b0", 1, 2, 32000, 256000, &err) >= 0);
    assert_int_equal(dr_cluster_finalize(c, &err), 0);
    assert_int_equal(dr_cluster_total_gpus(c, -1), 6);
}

/* The hand-written scenario.  Jobs (array order differs from id order): */
enum { J1, J2, J3, J4, J5, J6, J7, NJ };
static const uint64_t job_ids[NJ] = {10, 20, 35, 47, 1001, 7, 99};
static const double job_submit[NJ] = {0, 100, 200, 0, 1000, 300, 20000};

typedef struct fixture {
    dr_cluster_t c;
    dr_job_t jobs[NJ];
    dr_slot_t slots[NJ][4];
    dr_eventlog_t log;
} fixture_t;

static void hold(fixture_t *f, int j, uint16_t type, uint32_t ngpus, uint16_t milli)
{
    for (uint32_t i = 0; i < ngpus; i++)
        f->slots[j][i] = (dr_slot_t){.node = type, .gpu = (uint16_t)i, .milli = milli};
    f->jobs[j].alloc.slots = f->slots[j];
    f->jobs[j].alloc.nslots = ngpus;
    f->jobs[j].alloc.nnodes = 1;
    f->jobs[j].alloc.type = type;
}

static void ev(fixture_t *f, double t, int j, dr_job_state_t from, dr_job_state_t to,
               const char *detail)
{
    assert_int_equal(dr_eventlog_append(&f->log, dr_time_from_s(t), &f->jobs[j], from, to, detail),
                     0);
}

#define P  DR_JOB_PENDING
#define S  DR_JOB_STARTING
#define R  DR_JOB_RUNNING
#define CG DR_JOB_COMPLETING
#define CD DR_JOB_COMPLETED

/* J1: TA x2, requeued once, completed.  J2: failed, never started.
 * J3: cancelled while pending.  J4: TB x1, preempted, then completed.
 * J5: TA x4, still running at the end.  J6: TB 500 milli, completed.
 * J7: in the job array, never submitted (no records). */
static fixture_t *fixture_new(void)
{
    fixture_t *f = calloc(1, sizeof *f);
    assert_non_null(f);
    make_cluster(&f->c);
    for (int j = 0; j < NJ; j++) {
        dr_job_init(&f->jobs[j]);
        f->jobs[j].id = job_ids[j];
        f->jobs[j].submit = dr_time_from_s(job_submit[j]);
    }
    hold(f, J1, 0, 2, 1000);
    hold(f, J4, 1, 1, 1000);
    hold(f, J5, 0, 4, 1000);
    hold(f, J6, 1, 1, 500);
    dr_eventlog_init(&f->log);
    ev(f, 0, J4, P, P, NULL);
    ev(f, 0, J1, P, P, NULL);
    ev(f, 0, J4, P, S, NULL);
    ev(f, 0, J4, S, R, NULL);
    ev(f, 100, J2, P, P, NULL);
    ev(f, 100, J2, P, DR_JOB_FAILED, "needs 16 GPUs per node, the largest eligible node has 4");
    ev(f, 200, J3, P, P, NULL);
    ev(f, 300, J6, P, P, NULL);
    ev(f, 600, J1, P, S, NULL);
    ev(f, 600, J6, P, S, NULL);
    ev(f, 600, J6, S, R, NULL);
    ev(f, 660, J1, S, R, NULL);
    ev(f, 1000, J5, P, P, NULL);
    ev(f, 1200, J1, R, DR_JOB_REQUEUED, "node a0 failed");
    ev(f, 1200, J1, DR_JOB_REQUEUED, P, NULL);
    ev(f, 1500, J1, P, S, NULL);
    ev(f, 1500, J1, S, R, NULL);
    ev(f, 1800, J3, P, DR_JOB_CANCELLED, "by user");
    ev(f, 2400, J6, R, CG, NULL);
    ev(f, 2460, J6, CG, CD, NULL);
    ev(f, 3600, J4, R, DR_JOB_PREEMPTED, NULL);
    ev(f, 3600, J4, DR_JOB_PREEMPTED, P, NULL);
    ev(f, 4260, J1, R, CG, NULL);
    ev(f, 4320, J1, CG, CD, NULL);
    ev(f, 4320, J5, P, S, NULL);
    ev(f, 4320, J5, S, R, NULL);
    ev(f, 5400, J4, P, S, NULL);
    ev(f, 5400, J4, S, R, NULL);
    ev(f, 9000, J4, R, CD, NULL);
    return f;
}

static void fixture_free(fixture_t *f)
{
    dr_eventlog_free(&f->log);
    dr_cluster_free(&f->c);
    free(f);
}

static void compute(dr_report_t *r, const char *name, fixture_t *f, size_t max_points)
{
    dr_err_t err = {0};
    dr_report_opts_t o = {.max_points = max_points};
    int rc = dr_report_compute(r, name, &f->c, f->jobs, NJ, &f->log, &o, &err);
    if (rc != 0)
        fail_msg("dr_report_compute: %s", err.msg);
}

/* --- event log --- */

static void test_eventlog_append(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    const dr_eventlog_t *l = &f->log;
    assert_int_equal(l->n, 29);
    /* milli and nodes only in holding states, with the alloc's type */
    assert_int_equal(l->ev[2].milli, 1000); /* J4 start */
    assert_int_equal(l->ev[2].type, 1);
    assert_int_equal(l->ev[2].nodes, 1);
    assert_int_equal(l->ev[2].job, 47);
    assert_int_equal(l->ev[9].milli, 500);  /* J6 start */
    assert_int_equal(l->ev[8].milli, 2000); /* J1 start */
    assert_int_equal(l->ev[8].type, 0);
    assert_int_equal(l->ev[18].milli, 500); /* J6 completing still holds */
    assert_int_equal(l->ev[19].milli, 0);   /* J6 completed */
    assert_int_equal(l->ev[19].nodes, 0);
    assert_int_equal(l->ev[20].milli, 0); /* J4 preempted */
    assert_int_equal(l->ev[0].milli, 0);  /* submit */

    /* going back in time is refused and leaves the log as it was */
    dr_time_t last = l->ev[l->n - 1].t;
    assert_int_equal(dr_eventlog_append(&f->log, last - 1, &f->jobs[J5], R, CG, NULL), DR_EINVAL);
    assert_int_equal(l->n, 29);
    /* the same time is fine */
    assert_int_equal(dr_eventlog_append(&f->log, last, &f->jobs[J5], R, CG, "x"), 0);
    assert_int_equal(l->n, 30);
    fixture_free(f);
}

static void test_eventlog_details(void **state)
{
    (void)state;
    dr_eventlog_t l;
    dr_job_t j;
    dr_eventlog_init(&l);
    dr_job_init(&j);
    j.id = 5;
    assert_int_equal(dr_eventlog_append(&l, 1, &j, P, P, NULL), 0);
    assert_int_equal(dr_eventlog_append(&l, 2, &j, P, S, "node n1"), 0);
    assert_int_equal(dr_eventlog_append(&l, 3, &j, S, DR_JOB_REQUEUED, "node n2 lost"), 0);
    assert_int_equal(dr_eventlog_append(&l, 4, &j, DR_JOB_REQUEUED, P, "node n1"), 0);
    assert_int_equal(l.ev[0].detail, 0);
    assert_null(dr_eventlog_detail(&l, &l.ev[0]));
    assert_int_not_equal(l.ev[1].detail, 0);
    assert_int_equal(l.ev[1].detail, l.ev[3].detail); /* interned once */
    assert_int_not_equal(l.ev[1].detail, l.ev[2].detail);
    assert_int_equal(l.details.n, 2);
    assert_string_equal(dr_eventlog_detail(&l, &l.ev[1]), "node n1");
    assert_string_equal(dr_eventlog_detail(&l, &l.ev[2]), "node n2 lost");
    assert_string_equal(dr_eventlog_detail(&l, &l.ev[3]), "node n1");
    /* a CPU-only job in a holding state records no milli */
    assert_int_equal(l.ev[1].milli, 0);
    dr_eventlog_free(&l);
    assert_int_equal(l.n, 0);
    assert_null(l.ev);
}

static void test_event_names(void **state)
{
    (void)state;
    static const struct {
        dr_job_state_t from, to;
        const char *name;
    } cases[] = {
        {P, P, "submit"},
        {P, S, "start"},
        {S, R, "run"},
        {R, CG, "completing"},
        {CG, CD, "complete"},
        {R, DR_JOB_FAILED, "fail"},
        {P, DR_JOB_CANCELLED, "cancel"},
        {R, DR_JOB_PREEMPTED, "preempt"},
        {R, DR_JOB_REQUEUED, "requeue"},
        {R, DR_JOB_TIMEOUT, "timeout"},
        {DR_JOB_PREEMPTED, P, "pending"},
        {DR_JOB_REQUEUED, P, "pending"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dr_event_t e = {.from = (uint8_t)cases[i].from, .to = (uint8_t)cases[i].to};
        assert_string_equal(dr_event_name(&e), cases[i].name);
    }
}

/* --- report figures --- */

static void test_report_figures(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    dr_report_t r;
    compute(&r, "fifo", f, 0);

    assert_string_equal(r.policy, "fifo");
    assert_int_equal(r.jobs, 7);
    assert_int_equal(r.completed, 3); /* J1 J4 J6 */
    assert_int_equal(r.failed, 1);    /* J2 */
    assert_int_equal(r.rejected, 1);
    assert_int_equal(r.cancelled, 1); /* J3 */
    assert_int_equal(r.timeout, 0);
    assert_int_equal(r.unfinished, 2); /* J5 running, J7 never submitted */
    assert_int_equal(r.preemptions, 1);
    assert_int_equal(r.requeues, 1);

    /* JCTs: J6 2460-300 = 2160, J1 4320, J4 9000 */
    assert_int_equal(r.njct, 3);
    NEAR(r.jct_sorted[0], 2160);
    NEAR(r.jct_sorted[1], 4320);
    NEAR(r.jct_sorted[2], 9000);
    NEAR(r.avg_jct_s, 5160);
    NEAR(r.p50_jct_s, 4320); /* rank ceil(1.5) = 2 */
    NEAR(r.p95_jct_s, 9000);
    NEAR(r.p99_jct_s, 9000);
    NEAR(r.max_jct_s, 9000);
    /* queueing: J4 0, J6 300, J1 600, J5 3320 */
    NEAR(r.avg_queue_s, 1055);
    NEAR(r.p50_queue_s, 300); /* rank 2 of 4 */
    NEAR(r.p95_queue_s, 3320);
    NEAR(r.p99_queue_s, 3320);

    NEAR(r.makespan_s, 9000);
    /* busy GPU-s: TA = J1 2*(600+2820) + J5 4*4680 = 25560;
     *             TB = J4 3600+3600 + J6 0.5*1860 = 8130 */
    assert_int_equal(r.ntypes, 2);
    assert_string_equal(r.types[0].name, "TA");
    assert_string_equal(r.types[1].name, "TB");
    assert_int_equal(r.types[0].gpus, 4);
    assert_int_equal(r.types[1].gpus, 2);
    NEAR(r.types[0].gpu_hours, 25560.0 / 3600);
    NEAR(r.types[1].gpu_hours, 8130.0 / 3600);
    NEAR(r.types[0].util, 25560.0 / (4 * 9000));
    NEAR(r.types[1].util, 8130.0 / (2 * 9000));
    NEAR(r.gpu_util, 33690.0 / (6 * 9000));
    NEAR(r.gpu_hours, 33690.0 / 3600);
    NEAR(r.types[0].cost_usd, 14.2);
    assert_true(isnan(r.types[1].cost_usd));
    NEAR(r.cost_usd, 14.2);
    assert_true(r.cost_incomplete);
    NEAR(r.types[0].energy_kwh, 400 * 7.1 / 1000);
    NEAR(r.types[1].energy_kwh, 300 * (8130.0 / 3600) / 1000);
    NEAR(r.energy_kwh, 2.84 + 0.6775);
    assert_false(r.energy_incomplete);

    /* series: 17 distinct record times <= 400 points, so one point per step */
    static const double ts[] = {0,    100,  200,  300,  600,  660,  1000, 1200, 1500,
                                1800, 2400, 2460, 3600, 4260, 4320, 5400, 9000};
    static const double busy[] = {1000, 1000, 1000, 1000, 3500, 3500, 3500, 1500, 3500,
                                  3500, 3500, 3000, 2000, 2000, 4000, 5000, 4000};
    static const double pend[] = {1, 1, 2, 3, 1, 1, 2, 3, 2, 1, 1, 1, 2, 2, 1, 0, 0};
    assert_int_equal(r.util_series.n, 17);
    assert_int_equal(r.queue_series.n, 17);
    for (size_t i = 0; i < 17; i++) {
        NEAR(r.util_series.t[i], ts[i]);
        NEAR(r.queue_series.t[i], ts[i]);
        NEAR(r.util_series.v[i], busy[i] / 6000);
        NEAR(r.queue_series.v[i], pend[i]);
    }
    dr_report_free(&r);
    assert_null(r.jct_sorted);
    assert_null(r.util_series.t);
    fixture_free(f);
}

static void test_report_downsampled(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    dr_report_t r;
    compute(&r, "fifo", f, 4); /* 3 bins of 3000 s + the final point */
    assert_int_equal(r.util_series.n, 4);
    assert_int_equal(r.queue_series.n, 4);
    static const double ts[] = {0, 3000, 6000, 9000};
    static const double busy[] = {2710, 3520, 5000, 4000}; /* time-weighted milli */
    static const double pend[] = {1.6, 1.04, 0, 0};        /* 4800 s, 3120 s pending-job time */
    for (size_t i = 0; i < 4; i++) {
        NEAR(r.util_series.t[i], ts[i]);
        NEAR(r.util_series.v[i], busy[i] / 6000);
        NEAR(r.queue_series.t[i], ts[i]);
        NEAR(r.queue_series.v[i], pend[i]);
    }
    /* the bins integrate to the busy time: mean of the 3 bins x 9000 s x 6 GPUs */
    NEAR((r.util_series.v[0] + r.util_series.v[1] + r.util_series.v[2]) * 3000 * 6, 33690);
    dr_report_free(&r);

    /* max_points = 17 keeps every step; 16 bins them */
    compute(&r, "fifo", f, 17);
    assert_int_equal(r.util_series.n, 17);
    dr_report_free(&r);
    compute(&r, "fifo", f, 16);
    assert_int_equal(r.util_series.n, 16);
    NEAR(r.util_series.t[15], 9000);
    dr_report_free(&r);
    fixture_free(f);
}

static void test_report_unknown_tdp(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    f->c.types[1].tdp_w = NAN;
    f->c.types[0].price_hr = 3.0;
    f->c.types[1].price_hr = 1.0;
    dr_report_t r;
    compute(&r, "x", f, 0);
    assert_true(isnan(r.types[1].energy_kwh));
    assert_true(r.energy_incomplete);
    NEAR(r.energy_kwh, 2.84);
    assert_false(r.cost_incomplete);
    NEAR(r.cost_usd, 7.1 * 3 + 8130.0 / 3600);
    dr_report_free(&r);
    fixture_free(f);
}

/* Nearest rank on 20 values 100..2000; CPU-only jobs count no GPU time. */
static void test_report_percentiles_cpu_only(void **state)
{
    (void)state;
    dr_cluster_t c;
    make_cluster(&c);
    c.types[1].price_hr = NAN;
    dr_job_t jobs[20];
    dr_eventlog_t l;
    dr_eventlog_init(&l);
    for (int i = 0; i < 20; i++) {
        dr_job_init(&jobs[i]);
        jobs[i].id = 1000 - (uint64_t)i * 3;
        jobs[i].submit = 0;
        jobs[i].req.gpus_per_node = 0;
    }
    for (int i = 0; i < 20; i++) {
        assert_int_equal(dr_eventlog_append(&l, 0, &jobs[i], P, P, NULL), 0);
        assert_int_equal(dr_eventlog_append(&l, 0, &jobs[i], P, S, NULL), 0);
        assert_int_equal(dr_eventlog_append(&l, 0, &jobs[i], S, R, NULL), 0);
    }
    for (int i = 19; i >= 0; i--) /* completes in reverse array order */
        assert_int_equal(
            dr_eventlog_append(&l, dr_time_from_s(100.0 * (20 - i)), &jobs[i], R, CD, NULL), 0);
    dr_report_t r;
    dr_err_t err = {0};
    assert_int_equal(dr_report_compute(&r, "cpu", &c, jobs, 20, &l, NULL, &err), 0);
    assert_int_equal(r.completed, 20);
    NEAR(r.p50_jct_s, 1000); /* rank 10 */
    NEAR(r.p95_jct_s, 1900); /* rank 19 */
    NEAR(r.p99_jct_s, 2000); /* rank 20 */
    NEAR(r.avg_jct_s, 1050);
    NEAR(r.max_jct_s, 2000);
    NEAR(r.p99_queue_s, 0);
    NEAR(r.gpu_hours, 0);
    NEAR(r.gpu_util, 0);
    NEAR(r.cost_usd, 0);
    assert_false(r.cost_incomplete); /* the unpriced type was never used */
    NEAR(r.types[1].cost_usd, 0);
    NEAR(r.makespan_s, 2000);
    dr_report_free(&r);
    dr_eventlog_free(&l);
    dr_cluster_free(&c);
}

static void test_report_empty_and_errors(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    dr_eventlog_t empty;
    dr_eventlog_init(&empty);
    dr_report_t r;
    dr_err_t err = {0};
    assert_int_equal(dr_report_compute(&r, "none", &f->c, f->jobs, NJ, &empty, NULL, &err), 0);
    assert_int_equal(r.jobs, NJ);
    assert_int_equal(r.unfinished, NJ);
    assert_int_equal(r.completed, 0);
    assert_true(isnan(r.avg_jct_s));
    assert_true(isnan(r.p50_jct_s));
    assert_true(isnan(r.max_jct_s));
    assert_true(isnan(r.avg_queue_s));
    NEAR(r.makespan_s, 0);
    NEAR(r.gpu_util, 0);
    assert_int_equal(r.util_series.n, 0);
    assert_int_equal(r.njct, 0);
    assert_null(r.jct_sorted);
    char *js = dr_report_json(&r, 1);
    assert_non_null(js);
    json_error_t jerr;
    json_t *root = json_loads(js, 0, &jerr);
    assert_non_null(root);
    json_t *p = json_array_get(json_object_get(root, "policies"), 0);
    assert_true(json_is_null(json_object_get(p, "avg_jct_s")));
    assert_true(json_is_null(json_object_get(p, "p99_queue_s")));
    json_decref(root);
    free(js);
    char *svg = dr_report_svg_jct_cdf(&r, 1);
    assert_non_null(svg);
    tu_assert_contains(svg, "no data");
    free(svg);
    dr_report_free(&r);

    /* a record of a job that is not in the array */
    assert_int_equal(dr_report_compute(&r, "bad", &f->c, f->jobs, NJ - 2, &f->log, NULL, &err),
                     DR_EINVAL);
    tu_assert_contains(err.msg, "unknown job");
    /* duplicate ids */
    f->jobs[J7].id = f->jobs[J1].id;
    assert_int_equal(dr_report_compute(&r, "bad", &f->c, f->jobs, NJ, &f->log, NULL, &err),
                     DR_EINVAL);
    tu_assert_contains(err.msg, "duplicate");
    fixture_free(f);
}

/* --- output --- */

static const char *const json_keys[] = {"name",
                                        "jobs",
                                        "completed",
                                        "unfinished",
                                        "failed",
                                        "cancelled",
                                        "timeout",
                                        "rejected",
                                        "preemptions",
                                        "requeues",
                                        "avg_jct_s",
                                        "p50_jct_s",
                                        "p95_jct_s",
                                        "p99_jct_s",
                                        "max_jct_s",
                                        "avg_queue_s",
                                        "p50_queue_s",
                                        "p95_queue_s",
                                        "p99_queue_s",
                                        "makespan_s",
                                        "gpu_util",
                                        "gpu_hours",
                                        "cost_usd",
                                        "cost_incomplete",
                                        "energy_kwh",
                                        "energy_incomplete",
                                        "deadlines",
                                        "deadlines_met",
                                        "deadlines_missed",
                                        "gpus",
                                        "pool_busy_gpu_hours",
                                        "pool_billed_gpu_hours",
                                        "pool_util",
                                        "per_type"};
static const char *const json_type_keys[] = {"name",      "gpus",     "util",
                                             "gpu_hours", "cost_usd", "energy_kwh"};

static void check_keys(json_t *o, const char *const *keys, size_t n)
{
    assert_true(json_is_object(o));
    assert_int_equal(json_object_size(o), n);
    size_t i = 0;
    for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it), i++)
        assert_string_equal(json_object_iter_key(it), keys[i]);
    assert_int_equal(i, n);
}

static void test_report_json(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    dr_report_t r[2];
    compute(&r[0], "fifo", f, 0);
    compute(&r[1], "a<b&c \"q\"", f, 0);
    char *js = dr_report_json(r, 2);
    assert_non_null(js);
    tu_assert_contains(js, "{\n  \"policies\": [\n    {\n      \"name\": \"fifo\",");
    json_error_t jerr;
    json_t *root = json_loads(js, 0, &jerr);
    if (!root)
        fail_msg("JSON does not parse: %s (line %d)", jerr.text, jerr.line);
    json_t *pol = json_object_get(root, "policies");
    assert_int_equal(json_array_size(pol), 2);
    for (size_t k = 0; k < 2; k++) {
        json_t *p = json_array_get(pol, k);
        check_keys(p, json_keys, sizeof json_keys / sizeof json_keys[0]);
        json_t *types = json_object_get(p, "per_type");
        assert_int_equal(json_array_size(types), 2);
        for (size_t t = 0; t < 2; t++)
            check_keys(json_array_get(types, t), json_type_keys, 6);
    }
    json_t *p = json_array_get(pol, 0);
    assert_string_equal(json_string_value(json_object_get(p, "name")), "fifo");
    assert_string_equal(json_string_value(json_object_get(json_array_get(pol, 1), "name")),
                        "a<b&c \"q\"");
    assert_int_equal(json_integer_value(json_object_get(p, "jobs")), 7);
    assert_int_equal(json_integer_value(json_object_get(p, "completed")), 3);
    assert_int_equal(json_integer_value(json_object_get(p, "unfinished")), 2);
    assert_int_equal(json_integer_value(json_object_get(p, "rejected")), 1);
    assert_int_equal(json_integer_value(json_object_get(p, "requeues")), 1);
    NEAR(json_number_value(json_object_get(p, "p50_jct_s")), 4320);
    NEAR(json_number_value(json_object_get(p, "avg_queue_s")), 1055);
    NEAR(json_number_value(json_object_get(p, "cost_usd")), 14.2);
    NEAR(json_number_value(json_object_get(p, "gpu_util")), 33690.0 / 54000);
    assert_int_equal(json_integer_value(json_object_get(p, "gpus")), 6);
    assert_int_equal(json_integer_value(json_object_get(p, "deadlines")), 0);
    NEAR(json_number_value(json_object_get(p, "pool_util")), 0); /* no pools */
    assert_true(json_is_true(json_object_get(p, "cost_incomplete")));
    assert_true(json_is_false(json_object_get(p, "energy_incomplete")));
    json_t *tb = json_array_get(json_object_get(p, "per_type"), 1);
    assert_string_equal(json_string_value(json_object_get(tb, "name")), "TB");
    assert_int_equal(json_integer_value(json_object_get(tb, "gpus")), 2);
    assert_true(json_is_null(json_object_get(tb, "cost_usd")));
    NEAR(json_number_value(json_object_get(tb, "gpu_hours")), 8130.0 / 3600);
    json_decref(root);
    free(js);
    dr_report_free(&r[0]);
    dr_report_free(&r[1]);
    fixture_free(f);
}

/* t has the row: label, then one cell per column (columns of width w[i]),
 * exactly as the table lays them out. */
static void has_row(const char *t, const char *label, size_t n, const int *w,
                    const char *const *cells)
{
    char want[512];
    int len = snprintf(want, sizeof want, "\n%-24s", label);
    for (size_t i = 0; i < n; i++)
        len += snprintf(want + len, sizeof want - (size_t)len, "  %*s", w[i], cells[i]);
    snprintf(want + len, sizeof want - (size_t)len, "\n");
    tu_assert_contains(t, want);
}
#define ROW1(t, label, a) has_row(t, label, 1, (const int[]){12}, (const char *const[]){a})
#define ROW2(t, label, a, b)                                                                       \
    has_row(t, label, 2, (const int[]){21, 12}, (const char *const[]){a, b})

/* Every line of every section of a table has the header's width: the
 * cells of each column line up under its policy name.  Sections are
 * separated by an empty line; footnotes ("* ...") and the legend (from
 * "JCT = ...") follow the table. */
static void check_aligned(const char *t)
{
    size_t w = strcspn(t, "\n"), nlines = 0;
    const char *legend = strstr(t, "\nJCT = ");
    assert_non_null(legend);
    for (const char *line = t; line <= legend; line += strcspn(line, "\n") + 1) {
        size_t len = strcspn(line, "\n");
        if (len == 0 || line[0] == '*')
            continue;
        if (len != w)
            fail_msg("line %zu is %zu wide, the header %zu:\n%.*s\nin\n%s", nlines, len, w,
                     (int)len, line, t);
        nlines++;
    }
    assert_true(nlines > 20);
}

static void test_report_table(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    dr_report_t r[2];
    compute(&r[0], "fifo", f, 0);
    f->c.types[1].price_hr = 1.0;
    compute(&r[1], "backfill-long-policy-name", f, 0);
    char *t = dr_report_table(r, 2);
    assert_non_null(t);
    tu_assert_contains(t, "fifo");
    tu_assert_contains(t, "backfill-long-policy-name");
    tu_assert_contains(t, "completed");
    tu_assert_contains(t, "unfinished");
    tu_assert_contains(t, "1.4 h");   /* avg JCT 5160 s */
    tu_assert_contains(t, "1.2 h");   /* p50 JCT 4320 s */
    tu_assert_contains(t, "18 m");    /* avg queueing 1055 s */
    tu_assert_contains(t, "5.0 m");   /* p50 queueing 300 s */
    tu_assert_contains(t, "2.5 h");   /* makespan */
    tu_assert_contains(t, "62.4 %");  /* utilisation */
    tu_assert_contains(t, "util TA"); /* per-type rows */
    tu_assert_contains(t, "71.0 %");
    tu_assert_contains(t, "45.2 %");
    tu_assert_contains(t, "$14.20*");
    tu_assert_contains(t, "$16.46\n"); /* 14.2 + 2.258 at $1: complete, no star */
    tu_assert_contains(t, "* cost excludes GPU types with no known price");
    tu_assert_contains(t, "3.5");           /* energy kWh */
    tu_assert_contains(t, "\nrequeues   "); /* J1 was requeued */
    check_aligned(t);
    /* the legend defines what is shown, and only that */
    tu_assert_contains(t, "\nJCT = completion time - submit time");
    tu_assert_contains(t, "\nGPU utilisation = GPU-time held on on-prem GPUs / (on-prem GPUs x "
                          "makespan)");
    /* a plain run: no rows or blocks for what it does not have */
    assert_null(strstr(t, "deadlines"));
    assert_null(strstr(t, "node failures"));
    assert_null(strstr(t, "data locality"));
    assert_null(strstr(t, "lower bound"));
    assert_null(strstr(t, "slowdown"));
    assert_null(strstr(t, "cloud"));
    free(t);
    dr_report_free(&r[0]);
    dr_report_free(&r[1]);
    fixture_free(f);
}

/* --- deadlines --- */

static void test_report_deadlines(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    /* the log ends at 9000 */
    f->jobs[J1].deadline = dr_time_from_s(5000);   /* completed at 4320: met */
    f->jobs[J6].deadline = dr_time_from_s(2460);   /* completed at 2460, on the dot: met */
    f->jobs[J4].deadline = dr_time_from_s(8000);   /* completed at 9000: missed */
    f->jobs[J2].deadline = dr_time_from_s(50000);  /* failed: missed */
    f->jobs[J7].deadline = dr_time_from_s(5000);   /* never ran, log ends past it: missed */
    f->jobs[J5].deadline = dr_time_from_s(100000); /* still running, deadline ahead: open */
    dr_report_t r;
    compute(&r, "cost", f, 0);
    assert_int_equal(r.deadlines, 6);
    assert_int_equal(r.deadlines_met, 2);
    assert_int_equal(r.deadlines_missed, 3);
    char *t = dr_report_table(&r, 1);
    assert_non_null(t);
    ROW1(t, "deadlines met", "2/6");
    ROW1(t, "deadlines missed", "3");
    tu_assert_contains(t, "\ndeadlines met = completed by the deadline / jobs with one");
    check_aligned(t);
    free(t);
    char *js = dr_report_json(&r, 1);
    json_t *root = json_loads(js, 0, NULL);
    json_t *p = json_array_get(json_object_get(root, "policies"), 0);
    assert_int_equal(json_integer_value(json_object_get(p, "deadlines")), 6);
    assert_int_equal(json_integer_value(json_object_get(p, "deadlines_met")), 2);
    assert_int_equal(json_integer_value(json_object_get(p, "deadlines_missed")), 3);
    json_decref(root);
    free(js);
    dr_report_free(&r);
    fixture_free(f);
}

/* --- elastic pools: utilisation over on-prem GPUs, the pool apart --- */

/* Two jobs hold 4 H100s each from t = 0 to 100: one on the on-prem node
 * (4 GPUs), one on a pool node.  The log cannot tell them apart. */
static void pool_run(const char *conf, dr_report_t *r, dr_sim_result_t *res, dr_cluster_t *c)
{
    tu_cluster(c, conf);
    int h100 = dr_cluster_find_type(c, "H100-SXM-80GB");
    assert_true(h100 >= 0);
    dr_job_t jobs[2];
    dr_slot_t slots[2][4];
    dr_eventlog_t log;
    dr_eventlog_init(&log);
    for (int k = 0; k < 2; k++) {
        dr_job_init(&jobs[k]);
        jobs[k].id = (uint64_t)k + 1;
        assert_int_equal(dr_eventlog_append(&log, 0, &jobs[k], P, P, NULL), 0);
    }
    for (int k = 0; k < 2; k++) {
        for (uint16_t g = 0; g < 4; g++)
            slots[k][g] = (dr_slot_t){.node = (uint32_t)k, .gpu = g, .milli = 1000};
        jobs[k].alloc =
            (dr_alloc_t){.slots = slots[k], .nslots = 4, .nnodes = 1, .type = (uint16_t)h100};
        assert_int_equal(dr_eventlog_append(&log, 0, &jobs[k], P, S, NULL), 0);
        assert_int_equal(dr_eventlog_append(&log, 0, &jobs[k], S, R, NULL), 0);
    }
    for (int k = 0; k < 2; k++) {
        jobs[k].alloc = (dr_alloc_t){0};
        assert_int_equal(dr_eventlog_append(&log, dr_time_from_s(100), &jobs[k], R, CD, NULL), 0);
    }
    dr_err_t err = {0};
    assert_int_equal(dr_report_compute(r, "cost", c, jobs, 2, &log, NULL, &err), 0);
    dr_eventlog_free(&log);
    /* what the simulator measured: the pool job's 400 GPU-s, and the node
     * billed for 500 GPU-s (provisioning included) at $4/GPU-h */
    memset(res, 0, sizeof *res);
    res->cloud_busy_gpu_hours = 400.0 / 3600;
    res->cloud_gpu_hours = 500.0 / 3600;
    res->cloud_cost_usd = 500.0 / 3600 * 4;
    res->cloud_busy_list_usd = 400.0 / 3600 * c->types[h100].price_hr;
    res->provisions = 1;
}

static void test_report_pools(void **state)
{
    (void)state;
    static const char conf[] = "NodeName=a0 Gpus=H100-SXM-80GB:4 Cpus=64 MemGB=512\n"
                               "Pool=cloud Gpus=H100-SXM-80GB:4 MaxNodes=2 Cpus=64 MemGB=512 "
                               "PricePerGpuHour=4\n";
    dr_cluster_t c;
    dr_report_t r;
    dr_sim_result_t res;
    pool_run(conf, &r, &res, &c);
    int h100 = dr_cluster_find_type(&c, "H100-SXM-80GB");
    assert_true(r.pools);
    assert_int_equal(r.gpus, 4); /* on-prem only: pool nodes are not the denominator */
    assert_int_equal(r.types[h100].gpus, 4);
    NEAR(r.gpu_hours, 800.0 / 3600); /* every GPU-hour jobs held */
    /* from the log alone the split is unknown: not a made-up 200% */
    assert_true(isnan(r.gpu_util));
    assert_true(isnan(r.types[h100].util));
    assert_true(isnan(r.pool_util));
    /* the series counts pool nodes at their largest: 8 of 4 + 2 x 4 GPUs */
    NEAR(r.util_series.v[0], 8.0 / 12);

    dr_report_add_sim(&r, &c, &res, NULL, false);
    NEAR(r.pool_busy_gpu_hours, 400.0 / 3600);
    NEAR(r.pool_billed_gpu_hours, 500.0 / 3600);
    NEAR(r.gpu_util, 1.0); /* (800 - 400) GPU-s / (4 GPUs x 100 s); it was 2.0 */
    NEAR(r.types[h100].util, 1.0);
    NEAR(r.pool_util, 0.8); /* 400 busy / 500 billed */
    NEAR(r.sim.cloud_cost_usd, 500.0 / 3600 * 4);
    NEAR(r.sim.total_cost_usd, 400.0 / 3600 * c.types[h100].price_hr + 500.0 / 3600 * 4);
    char *t = dr_report_table(&r, 1);
    assert_non_null(t);
    ROW1(t, "on-prem GPU util", "100.0 %");
    ROW1(t, "  util H100-SXM-80GB", "100.0 %");
    ROW1(t, "cloud (elastic pools)", "cost");
    ROW1(t, "nodes provisioned", "1");
    ROW1(t, "cloud GPU-hours billed", "0.1");
    ROW1(t, "cloud GPU-hours busy", "0.1");
    ROW1(t, "cloud utilisation", "80.0 %");
    ROW1(t, "cloud cost", "$0.56");
    tu_assert_contains(t, "\ncloud utilisation = GPU-hours jobs held on pool nodes / GPU-hours");
    tu_assert_contains(t, "\non-prem GPU util = GPU-time held on on-prem GPUs");
    check_aligned(t);
    free(t);
    char *js = dr_report_json(&r, 1);
    json_t *root = json_loads(js, 0, NULL);
    json_t *p = json_array_get(json_object_get(root, "policies"), 0);
    NEAR(json_number_value(json_object_get(p, "gpu_util")), 1.0);
    NEAR(json_number_value(json_object_get(p, "pool_util")), 0.8);
    assert_int_equal(json_integer_value(json_object_get(p, "gpus")), 4);
    json_decref(root);
    free(js);
    dr_report_free(&r);
    dr_cluster_free(&c);
}

/* Pools of two GPU types: the pool hours are a total, so the per-type
 * split of a pool type that was used is unknown; the overall figure is
 * exact and an unused pool type is plainly idle. */
static void test_report_pools_two_types(void **state)
{
    (void)state;
    static const char conf[] = "NodeName=a0 Gpus=H100-SXM-80GB:4 Cpus=64 MemGB=512\n"
                               "Pool=cloud Gpus=H100-SXM-80GB:4 MaxNodes=2 Cpus=64 MemGB=512\n"
                               "Pool=cheap Gpus=L40S-48GB:4 MaxNodes=1 Cpus=64 MemGB=512\n";
    dr_cluster_t c;
    dr_report_t r;
    dr_sim_result_t res;
    pool_run(conf, &r, &res, &c);
    dr_report_add_sim(&r, &c, &res, NULL, false);
    int h100 = dr_cluster_find_type(&c, "H100-SXM-80GB");
    int l40s = dr_cluster_find_type(&c, "L40S-48GB");
    assert_true(l40s >= 0);
    assert_int_equal(r.gpus, 4);
    NEAR(r.gpu_util, 1.0);
    assert_true(isnan(r.types[h100].util));
    NEAR(r.types[l40s].util, 0);
    NEAR(r.util_series.v[0], 8.0 / 16);
    dr_report_free(&r);
    dr_cluster_free(&c);
}

/* --- what the simulator adds: lower bound, failures, locality --- */

/* The end column of `name` in the line of t that starts with `label`. */
static size_t column_end(const char *t, const char *label, const char *name)
{
    const char *line = t;
    while (line && strncmp(line, label, strlen(label)) != 0) {
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    if (!line)
        fail_msg("no line '%s' in\n%s", label, t);
    size_t len = strcspn(line, "\n");
    for (size_t k = strlen(label); k + strlen(name) <= len; k++)
        if (strncmp(line + k, name, strlen(name)) == 0 &&
            (k + strlen(name) == len || line[k + strlen(name)] == ' '))
            return k + strlen(name);
    fail_msg("no '%s' in line '%.*s'", name, (int)len, line);
    return 0;
}

static void test_report_table_sim(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    dr_report_t r[2];
    compute(&r[0], "max_min_fairness_perf", f, 0); /* longer than a default column */
    compute(&r[1], "drover", f, 0);
    dr_sim_result_t res = {0};
    res.node_failures = 2;
    res.stats.shard_starts = 4;
    res.stats.locality_hits = 3;
    dr_window_stats_t w = {.jobs = 7, .completed = 3, .unfinished = 2, .measured = 3};
    w.avg_jct_s = 5160;
    w.lower_bound_avg_jct_s = 2580;
    w.avg_slowdown = 2.25;
    w.p99_slowdown = 4.5;
    w.max_slowdown = 4.5;
    w.avg_ftf = 0.75;
    w.max_ftf = 1.25;
    dr_report_add_sim(&r[0], &f->c, &res, &w, true);
    res.node_failures = 0;
    w.lower_bound_avg_jct_s = 5160; /* ratio 1 */
    w.max_ftf = 0.5;
    dr_report_add_sim(&r[1], &f->c, &res, &w, true);
    char *t = dr_report_table(r, 2);
    assert_non_null(t);
    check_aligned(t);
    ROW2(t, "node failures", "2", "0");
    ROW2(t, "data locality", "3/4 (75%)", "3/4 (75%)");
    ROW2(t, "window (vs lower bound)", "max_min_fairness_perf", "drover");
    ROW2(t, "measured / jobs", "3/7", "3/7");
    ROW2(t, "  unfinished", "2", "2");
    ROW2(t, "avg JCT", "1.4 h", "1.4 h");
    ROW2(t, "lower bound avg JCT", "43 m", "1.4 h");
    ROW2(t, "avg JCT / lower bound", "2.000", "1.000");
    ROW2(t, "slowdown avg", "2.25", "2.25");
    ROW2(t, "slowdown p99", "4.50", "4.50");
    ROW2(t, "slowdown max", "4.50", "4.50");
    ROW2(t, "finish-time fairness avg", "0.75", "0.75");
    ROW2(t, "finish-time fairness max", "1.25", "0.50");
    /* each value ends where its policy's name ends, in every block (the
     * old block printed 12-wide cells under a 21-wide name) */
    size_t e0 = column_end(t, "policy", "max_min_fairness_perf");
    size_t e1 = column_end(t, "policy", "drover");
    assert_int_equal(column_end(t, "window (vs lower bound)", "max_min_fairness_perf"), e0);
    assert_int_equal(column_end(t, "window (vs lower bound)", "drover"), e1);
    assert_int_equal(column_end(t, "avg JCT / lower bound", "2.000"), e0);
    assert_int_equal(column_end(t, "avg JCT / lower bound", "1.000"), e1);
    assert_int_equal(column_end(t, "finish-time fairness max", "1.25"), e0);
    assert_int_equal(column_end(t, "finish-time fairness max", "0.50"), e1);
    /* the legend says what they mean */
    tu_assert_contains(t, "\nlower bound = every job alone on its fastest GPU type, never queued; "
                          "not achievable in\n");
    tu_assert_contains(t, "\nslowdown = a job's JCT / its own lower bound");
    tu_assert_contains(t, "\nfinish-time fairness (FTF, Themis) = JCT / the job's time with a "
                          "1/N share");
    tu_assert_contains(t, "\ndata locality = starts of tasks naming an input shard");
    tu_assert_contains(t, "\nrequeues = runs restarted");
    free(t);
    dr_report_free(&r[0]);
    dr_report_free(&r[1]);
    fixture_free(f);
}

static void check_svg(char *svg, const char *title)
{
    assert_non_null(svg);
    assert_true(strncmp(svg, "<?xml", 5) == 0);
    tu_assert_contains(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"");
    tu_assert_contains(svg, "</svg>");
    tu_assert_contains(svg, title);
    tu_assert_contains(svg, ">fifo</text>");
    tu_assert_contains(svg, ">a&lt;b&amp;c &apos;x&apos;</text>");
    tu_assert_contains(svg, "<polyline");
    assert_null(strstr(svg, "a<b&c"));
    /* the two lines have different colours */
    tu_assert_contains(svg, "stroke=\"#4e79a7\"");
    tu_assert_contains(svg, "stroke=\"#f28e2b\"");
    free(svg);
}

static void test_report_svg(void **state)
{
    (void)state;
    fixture_t *f = fixture_new();
    dr_report_t r[2];
    compute(&r[0], "fifo", f, 0);
    compute(&r[1], "a<b&c 'x'", f, 0);
    check_svg(dr_report_svg_util(r, 2), "GPU utilisation");
    check_svg(dr_report_svg_queue(r, 2), "Pending jobs");
    char *cdf = dr_report_svg_jct_cdf(r, 2);
    tu_assert_contains(cdf, "log scale");
    tu_assert_contains(cdf, ">0.1</text>"); /* decade ticks: JCTs 0.6 h .. 2.5 h */
    tu_assert_contains(cdf, ">10</text>");
    check_svg(cdf, "Job completion time CDF");
    char *util = dr_report_svg_util(r, 2);
    tu_assert_contains(util, "(hours)");
    tu_assert_contains(util, "GPUs busy (%)");
    free(util);
    dr_report_free(&r[0]);
    dr_report_free(&r[1]);
    fixture_free(f);
}

/* The formatters' string buffer, short and long appends. */
static void test_report_buf(void **state)
{
    (void)state;
    dr_report_buf_t b = {0};
    char *empty = dr_report_buf_take(&b);
    assert_string_equal(empty, "");
    free(empty);
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    dr_report_buf_printf(&b, "<%d>", 42);
    dr_report_buf_printf(&b, "[%s]", big);
    dr_report_buf_puts(&b, "end");
    char *s = dr_report_buf_take(&b);
    assert_non_null(s);
    assert_int_equal(strlen(s), 4 + 2 + 2999 + 3);
    assert_true(strncmp(s, "<42>[xxx", 8) == 0);
    assert_string_equal(s + strlen(s) - 5, "x]end");
    free(s);
}

/* --- scale --- */

static void test_report_million(void **state)
{
    (void)state;
    enum { NJOBS = 200000 };
    dr_cluster_t c;
    make_cluster(&c);
    dr_job_t *jobs = calloc(NJOBS, sizeof *jobs);
    dr_slot_t slot = {.node = 0, .gpu = 0, .milli = 1000};
    assert_non_null(jobs);
    dr_eventlog_t l;
    dr_eventlog_init(&l);
    for (size_t i = 0; i < NJOBS; i++) {
        dr_job_t *j = &jobs[i];
        dr_job_init(j);
        j->id = 3 + 7 * (uint64_t)(NJOBS - i);
        dr_time_t t = dr_time_from_s(10.0 * (double)i);
        j->submit = t;
        if (i % 5) { /* every fifth job is CPU-only */
            j->alloc.slots = &slot;
            j->alloc.nslots = 1;
            j->alloc.nnodes = 1;
            j->alloc.type = (uint16_t)(i % 2);
        }
        const dr_time_t s = DR_NSEC_PER_SEC;
        assert_int_equal(dr_eventlog_append(&l, t, j, P, P, NULL), 0);
        assert_int_equal(dr_eventlog_append(&l, t + s, j, P, S, NULL), 0);
        assert_int_equal(dr_eventlog_append(&l, t + 2 * s, j, S, R, NULL), 0);
        assert_int_equal(dr_eventlog_append(&l, t + 8 * s, j, R, CG, NULL), 0);
        assert_int_equal(dr_eventlog_append(&l, t + 9 * s, j, CG, CD, NULL), 0);
        j->alloc.slots = NULL;
        j->alloc.nslots = 0;
    }
    assert_int_equal(l.n, 1000000);
    dr_report_t r;
    dr_err_t err = {0};
    assert_int_equal(dr_report_compute(&r, "big", &c, jobs, NJOBS, &l, NULL, &err), 0);
    assert_int_equal(r.completed, NJOBS);
    assert_int_equal(r.njct, NJOBS);
    NEAR(r.p50_jct_s, 9);
    NEAR(r.p50_queue_s, 1);
    NEAR(r.gpu_hours, 160000.0 * 8 / 3600); /* 8 s per GPU job */
    assert_int_equal(r.util_series.n, 400);
    assert_int_equal(r.queue_series.n, 400);
    char *s = dr_report_svg_jct_cdf(&r, 1);
    assert_non_null(s);
    free(s);
    s = dr_report_svg_util(&r, 1);
    assert_non_null(s);
    free(s);
    dr_report_free(&r);
    dr_eventlog_free(&l);
    free(jobs);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eventlog_append),
        cmocka_unit_test(test_eventlog_details),
        cmocka_unit_test(test_event_names),
        cmocka_unit_test(test_report_figures),
        cmocka_unit_test(test_report_downsampled),
        cmocka_unit_test(test_report_unknown_tdp),
        cmocka_unit_test(test_report_percentiles_cpu_only),
        cmocka_unit_test(test_report_empty_and_errors),
        cmocka_unit_test(test_report_json),
        cmocka_unit_test(test_report_table),
        cmocka_unit_test(test_report_deadlines),
        cmocka_unit_test(test_report_pools),
        cmocka_unit_test(test_report_pools_two_types),
        cmocka_unit_test(test_report_table_sim),
        cmocka_unit_test(test_report_svg),
        cmocka_unit_test(test_report_buf),
        cmocka_unit_test(test_report_million),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
