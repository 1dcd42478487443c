/* test_drover_index.c - the drover policy's index of pending jobs
 * (src/sched/pending_index.h) and what it is for:
 *   - its searches find exactly what scoring every record would find;
 *   - with estimates kept current (rekey=0) the policy decides exactly as
 *     when it scores the whole queue every pass (index=0);
 *   - a burst of n jobs costs about n times the candidates a pass plans
 *     for, not n^2: the regression test counts the jobs the policy scored
 *     (dr_sched_stats_t.jobs_considered), not time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/cluster.h"
#include "drover/sched.h"
#include "drover/sim.h"
#include "drover/workload.h"
#include "sched/pending_index.h"
#include "testutil.h"

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double unif(void)
{
    return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* --- the index against brute force --- */

#define ALPHA 5.0
#define AGE   1.5

typedef struct ctx {
    double t;
} ctx_t;

/* drover's priority shape (pending_index.h) over a record's cached fields */
static double value(void *ud, const dr_pidx_rec_t *r)
{
    const ctx_t *c = ud;
    if (!(r->best < INFINITY))
        return 0;
    double w = c->t - r->s;
    double eff = r->best - ALPHA * w;
    double p = 1.0 / ((eff > 60 ? eff : 60) * r->g);
    double sd = (w + r->best) / (r->best > 1 ? r->best : 1);
    if (sd > AGE) {
        double y = sd / AGE;
        p *= y * y * y * y;
    }
    return p;
}

static void set_estimate(dr_pidx_rec_t *r)
{
    double u = unif();
    if (u < 0.05) {
        r->best = INFINITY; /* cannot be placed */
        return;
    }
    /* a few exact ties, the rest spread over 1 min .. 3 days */
    r->best = u < 0.15 ? 3600 : 60 * exp(unif() * 8.4);
}

/* Every usable record, by (value desc, queue order). */
static size_t brute(const dr_pidx_t *x, const unsigned char *usable, ctx_t *c, dr_pidx_hit_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < x->nslots; i++) {
        const dr_pidx_rec_t *r = &x->rec[i];
        if (!r->j || !usable[r->tree])
            continue;
        double v = value(c, r);
        if (v > 0)
            out[n++] = (dr_pidx_hit_t){v, r->g, r->j, (uint32_t)i};
    }
    qsort(out, n, sizeof *out, dr_pidx_hit_cmp);
    return n;
}

static void test_index_matches_brute_force(void **st)
{
    (void)st;
    enum { NJOBS = 6000 };
    dr_job_t *jobs = calloc(NJOBS, sizeof *jobs);
    bool *in = calloc(NJOBS, sizeof *in);
    dr_pidx_hit_t *want = malloc(NJOBS * sizeof *want);
    assert_non_null(jobs);
    assert_non_null(in);
    assert_non_null(want);
    static const uint32_t gpn[] = {1, 2, 4, 8};
    for (size_t i = 0; i < NJOBS; i++) {
        dr_job_t *j = &jobs[i];
        dr_job_init(j);
        j->id = i + 1;
        j->submit = dr_time_from_s((double)(rnd() % 20000)); /* not in id order */
        j->priority = rnd() % 10 == 0;                       /* a few above the rest */
        j->req.nodes = 1 + (rnd() % 8 == 0);
        j->req.gpus_per_node = gpn[rnd() % 4];
        if (rnd() % 6 == 0) { /* tasks of throttled arrays */
            j->array_parent = 1000000 + rnd() % 5;
            j->array_throttle = 3;
        }
    }
    dr_pidx_t x;
    dr_pidx_init(&x, ALPHA, AGE);
    dr_pidx_hit_t *got = NULL;
    size_t ngot = 0, gotcap = 0;
    unsigned char usable[256];
    for (int round = 0; round < 40; round++) {
        /* churn: add, remove, re-estimate */
        for (int k = 0; k < 400; k++) {
            size_t i = rnd() % NJOBS;
            uint32_t r = dr_pidx_find(&x, &jobs[i]);
            assert_true((r != DR_PIDX_NONE) == in[i]);
            if (!in[i]) {
                assert_int_equal(dr_pidx_add(&x, &jobs[i], &r), DR_OK);
                set_estimate(&x.rec[r]);
                dr_pidx_update(&x, r);
                in[i] = true;
            } else if (rnd() % 3) {
                dr_pidx_remove(&x, r);
                in[i] = false;
            } else {
                set_estimate(&x.rec[r]);
                dr_pidx_update(&x, r);
            }
        }
        size_t nin = 0;
        double gpus = 0;
        for (size_t i = 0; i < NJOBS; i++)
            if (in[i]) {
                nin++;
                gpus += jobs[i].req.gpus_per_node * (double)jobs[i].req.nodes;
            }
        assert_int_equal(x.nrec, nin);
        assert_true(fabs(x.gpus - gpus) < 0.5);
        assert_true(x.ntree < 256);
        for (size_t ti = 0; ti < x.ntree; ti++) {
            usable[ti] = x.tree[ti].parent == 0 || rnd() % 2; /* some arrays throttled */
            uint32_t any = dr_pidx_any(&x, ti);
            if (x.tree[ti].inuse && x.tree[ti].nrec)
                assert_true(any != DR_PIDX_NONE && x.rec[any].tree == ti);
        }
        ctx_t c = {.t = 20000 + 3000.0 * round};
        dr_pidx_query_t q = {.t = c.t, .usable = usable, .value = value, .ud = &c};
        size_t nw = brute(&x, usable, &c, want);
        assert_true(nw > 100);
        /* the best, in order, until they hold some GPUs */
        double wg = 50 + (double)(rnd() % 400);
        size_t nvalued = 0;
        ngot = 0;
        assert_int_equal(dr_pidx_top(&x, &q, wg, &got, &ngot, &gotcap, &nvalued), DR_OK);
        double sum = 0;
        size_t k = 0;
        while (k < nw && sum < wg)
            sum += want[k++].g;
        assert_int_equal(ngot, k);
        for (size_t i = 0; i < k; i++) {
            assert_ptr_equal(got[i].j, want[i].j);
            assert_true(got[i].v == want[i].v);
        }
        assert_true(nvalued < nin); /* it did not value everything */
        /* weighted selection agrees with the sorted prefix */
        size_t ks = dr_pidx_hit_select(got, ngot, wg / 2);
        sum = 0;
        size_t kk = 0;
        while (kk < k && sum < wg / 2)
            sum += want[kk++].g;
        assert_int_equal(ks, kk);
        qsort(got, ks, sizeof *got, dr_pidx_hit_cmp);
        for (size_t i = 0; i < ks; i++)
            assert_ptr_equal(got[i].j, want[i].j);
        /* everything at or above a threshold, exact ties included */
        double tau = want[k / 2].v;
        ngot = 0;
        nvalued = 0;
        assert_int_equal(dr_pidx_collect(&x, &q, tau, 1e18, &got, &ngot, &gotcap, &nvalued), DR_OK);
        size_t nabove = 0;
        while (nabove < nw && want[nabove].v >= tau)
            nabove++;
        assert_int_equal(ngot, nabove);
        qsort(got, ngot, sizeof *got, dr_pidx_hit_cmp);
        for (size_t i = 0; i < ngot; i++)
            assert_ptr_equal(got[i].j, want[i].j);
        /* and it gives up when they hold too many GPUs */
        ngot = 0;
        assert_int_equal(dr_pidx_collect(&x, &q, tau, 1, &got, &ngot, &gotcap, &nvalued),
                         DR_ELIMIT);
    }
    free(got);
    dr_pidx_free(&x);
    free(jobs);
    free(in);
    free(want);
}

/* --- the policy --- */

static void sim(const dr_cluster_t *c, const dr_workload_t *wl, const char *policy, bool audit,
                dr_sim_result_t *r)
{
    dr_sim_opts_t o;
    dr_sim_opts_default(&o);
    o.policy = policy;
    o.audit = audit;
    dr_err_t err;
    if (dr_sim_run(c, wl, &o, r, &err) != DR_OK)
        fail_msg("%s: %s", policy, err.msg);
}

static const char *const HETERO = "NodeName=h[1-2] Gpus=H100-SXM-80GB:4 Cpus=64 MemGB=512\n"
                                  "NodeName=a[1-2] Gpus=A100-80GB-SXM:4 Cpus=64 MemGB=512\n";

/* A queue far longer than the candidates of a pass (16 GPUs: 48 GPUs'
 * worth of candidates), with everything that shapes the index: gangs of
 * 1-8 GPUs and over two nodes, jobs held to one type, walltime limits,
 * sizes declared 0.3x-3x off or not at all, arrivals in waves, and a
 * throttled array.  Scoring every pending job every pass (index=0) and the
 * index with its estimates refreshed whenever the estimator moves
 * (rekey=0) must make the same decisions, record for record. */
static void build_long_queue(dr_workload_t *wl, const dr_cluster_t *c, size_t n)
{
    dr_workload_init(wl);
    static const uint32_t gpn[] = {1, 1, 1, 2, 4};
    for (size_t i = 0; i < n; i++) {
        double submit = floor((double)i / 100) * 4000 + (double)(rnd() % 600);
        double run = 120 + unif() * unif() * 20000;
        double declared = rnd() % 5 == 0 ? 0 : run * exp((unif() - 0.5) * 2.4);
        double limit = rnd() % 3 == 0 ? run * (1.5 + unif()) : 0;
        uint32_t nodes = rnd() % 20 == 0 ? 2 : 1;
        const char *types = rnd() % 7 == 0 ? "H100-SXM-80GB" : NULL;
        tu_add_job(wl, i + 1, submit, nodes, gpn[rnd() % 5], run, declared, limit, types);
    }
    for (size_t i = 0; i < 40; i++) { /* 40 short tasks, 2 at a time */
        tu_add_job(wl, 100000 + i, 100, 1, 1, 300, 300, 0, NULL);
        dr_job_t *j = &wl->jobs[wl->njobs - 1];
        j->array_parent = 99999;
        j->array_index = (uint32_t)i;
        j->array_throttle = 2;
    }
    tu_workload_ready(wl, c);
}

static void test_index_decides_like_a_full_scan(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, HETERO);
    dr_workload_t wl;
    build_long_queue(&wl, &c, 1200);
    dr_sim_result_t full, idx, def;
    sim(&c, &wl, "drover:index=0", true, &full);
    sim(&c, &wl, "drover:rekey=0", true, &idx);
    sim(&c, &wl, "drover", true, &def);
    assert_int_equal(full.log.n, idx.log.n);
    for (size_t i = 0; i < full.log.n; i++) {
        const dr_event_t *a = &full.log.ev[i], *b = &idx.log.ev[i];
        if (a->t != b->t || a->job != b->job || a->from != b->from || a->to != b->to ||
            a->type != b->type || a->milli != b->milli || a->nodes != b->nodes)
            fail_msg("record %zu: full scan: job %llu %s->%s at %lld; index: job %llu %s->%s at "
                     "%lld",
                     i, (unsigned long long)a->job, dr_job_state_name(a->from),
                     dr_job_state_name(a->to), (long long)a->t, (unsigned long long)b->job,
                     dr_job_state_name(b->from), dr_job_state_name(b->to), (long long)b->t);
    }
    /* by default (estimates re-keyed lazily) it scores far fewer jobs than
     * the scan, which scores every pending job on every pass */
    printf("long queue: %llu jobs scored by the scan, %llu by the index re-keyed at every "
           "change, %llu by default\n",
           (unsigned long long)full.stats.jobs_considered,
           (unsigned long long)idx.stats.jobs_considered,
           (unsigned long long)def.stats.jobs_considered);
    assert_true(def.stats.jobs_considered < full.stats.jobs_considered);
    /* with the default lazy re-keying every job still completes or times
     * out (none is left behind in the queue) */
    for (size_t i = 0; i < def.njobs; i++) {
        const dr_job_t *j = &def.jobs[i];
        if (j->state != DR_JOB_COMPLETED && j->state != DR_JOB_TIMEOUT)
            fail_msg("job %llu ended %s", (unsigned long long)j->id, dr_job_state_name(j->state));
    }
    /* the array never runs more than its throttle (2) at once, even when a
     * pass plans several of its tasks */
    const dr_sim_result_t *runs[] = {&full, &idx, &def};
    for (size_t k = 0; k < 3; k++) {
        int running = 0, most = 0;
        for (size_t i = 0; i < runs[k]->log.n; i++) {
            const dr_event_t *e = &runs[k]->log.ev[i];
            if (e->job < 100000)
                continue;
            if (e->to == DR_JOB_STARTING)
                running++;
            else if ((e->from == DR_JOB_STARTING || e->from == DR_JOB_RUNNING) &&
                     e->to != DR_JOB_RUNNING)
                running--;
            most = running > most ? running : most;
        }
        if (most != 2)
            fail_msg("run %zu: the array ran %d tasks at once (throttle 2)", k, most);
    }
    dr_sim_result_free(&full);
    dr_sim_result_free(&idx);
    dr_sim_result_free(&def);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* A burst of 20,000 jobs at once on 64 GPUs (gangs of 8, 4 and 2).
 * Scoring every pending job on every pass (what the policy did: each job
 * end frees GPUs and forced a full re-plan) is about n^2/2 jobs scored:
 * 2.3e8 here, the passes the preemptions add included (measured).  A pass
 * now values the running jobs, the candidates it plans for (at most
 * 2 x GPUs + 16) and about as many index records around them, plus every
 * queued job again a bounded number of times when the size estimator
 * moves: some 800 per job here.  The bound, 12 x (2 x GPUs + 16) per job
 * (3.5e7), is well above that and far below the scan. */
static void test_burst_scores_linearly(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=h[1-4] Gpus=H100-SXM-80GB:8 Cpus=64 MemGB=512\n"
                   "NodeName=a[1-4] Gpus=A100-80GB-SXM:8 Cpus=64 MemGB=512\n");
    enum { N = 20000 };
    dr_workload_t wl;
    dr_workload_init(&wl);
    assert_int_equal(dr_workload_reserve(&wl, N), DR_OK);
    static const uint32_t gpn[] = {8, 8, 4, 2};
    for (size_t i = 0; i < N; i++) {
        double run = 600 + (double)(rnd() % 35400);
        tu_add_job(&wl, i + 1, 0, 1, gpn[i % 4], run, run * exp((unif() - 0.5) * 2), 0, NULL);
    }
    tu_workload_ready(&wl, &c);
    dr_sim_result_t r;
    sim(&c, &wl, "drover", false, &r);
    for (size_t i = 0; i < r.njobs; i++)
        assert_int_equal(r.jobs[i].state, DR_JOB_COMPLETED);
    double n = N, considered = (double)r.stats.jobs_considered;
    double bound = 12 * n * (2 * 64 + 16);
    printf("burst of %d jobs: %llu passes, %.0f jobs scored (%.0f per job; bound %.0f; a scan "
           "of the queue every pass: ~%.0f)\n",
           N, (unsigned long long)r.stats.passes, considered, considered / n, bound, n * n / 2);
    assert_true(considered < bound);
    assert_true(considered > n); /* it did score them */
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_matches_brute_force),
        cmocka_unit_test(test_index_decides_like_a_full_scan),
        cmocka_unit_test(test_burst_scores_linearly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
