/* sim.c - the discrete-event simulator: one driver of the scheduler core.
 *
 * Time jumps from event to event.  Arrivals come from the workload (sorted
 * by submit time, read with a cursor, never all in the heap); job ends,
 * policy wake-ups and node failures/repairs live in a binary heap ordered by
 * (time, sequence number), so ties resolve in insertion order and a run is
 * deterministic.  After all events at one instant are applied, the
 * scheduler makes exactly one pass - the same dr_sched_pass() the
 * controller calls.  Launches are instantaneous here (STARTING -> RUNNING at
 * once); a job runs for remaining work / rate on the GPU type it got, or
 * until its walltime limit (TIMEOUT), whichever comes first.
 *
 * Elastic pools: a node the policy asks to provision is billed from that
 * moment and comes UP after its pool's provision delay; a released node goes
 * back to CLOUD and its bill stops.  A spot pool's nodes are lost at the
 * pool's interruption rate while up (their jobs are requeued with their
 * progress, as spot users checkpoint).  The bill is kept here, beside the
 * event log, because the log records jobs, not nodes. */
#include "drover/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/truth.h"
#include "drover/util.h"

enum ev_kind {
    EV_FINISH = 0,
    EV_TIMEOUT,
    EV_WAKE,
    EV_NODE_FAIL,
    EV_NODE_REPAIR,
    EV_PROVISIONED, /* a pool node finished provisioning (gen = its provision generation) */
    EV_SPOT_LOSS    /* a spot pool node is taken back by the provider */
};

typedef struct sim_ev {
    dr_time_t t;
    uint64_t seq;
    uint32_t kind;
    uint32_t gen; /* FINISH/TIMEOUT: the job's nstarts when scheduled */
    uint64_t idx; /* job index or node index */
} sim_ev_t;

typedef struct heap {
    sim_ev_t *a;
    size_t n, cap;
    uint64_t seq;
} heap_t;

static inline bool ev_less(const sim_ev_t *x, const sim_ev_t *y)
{
    return x->t != y->t ? x->t < y->t : x->seq < y->seq;
}

/* Queue an event at t.  An event at DR_TIME_NEVER never happens and is not
 * queued: callers compute t with dr_time_add(), so a delay that runs past
 * the end of representable time saturates to "never" instead of wrapping
 * into the past (which would replay the event before the log's last
 * record). */
static int heap_push(heap_t *h, dr_time_t t, uint32_t kind, uint64_t idx, uint32_t gen)
{
    if (t == DR_TIME_NEVER)
        return DR_OK;
    sim_ev_t e = {t, h->seq++, kind, gen, idx};
    if (DR_PUSH(h->a, h->n, h->cap, e) != 0)
        return DR_ENOMEM;
    size_t i = h->n - 1;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&h->a[i], &h->a[p]))
            break;
        sim_ev_t tmp = h->a[i];
        h->a[i] = h->a[p];
        h->a[p] = tmp;
        i = p;
    }
    return DR_OK;
}

static sim_ev_t heap_pop(heap_t *h)
{
    sim_ev_t top = h->a[0];
    h->a[0] = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && ev_less(&h->a[l], &h->a[m]))
            m = l;
        if (r < h->n && ev_less(&h->a[r], &h->a[m]))
            m = r;
        if (m == i)
            break;
        sim_ev_t tmp = h->a[i];
        h->a[i] = h->a[m];
        h->a[m] = tmp;
        i = m;
    }
    return top;
}

void dr_sim_opts_default(dr_sim_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->policy = "fifo";
    o->placement = DR_PLACE_BEST_FIT;
    o->node_repair_s = 3600;
    /* A restart is a process start, framework and CUDA initialisation and
     * a checkpoint load: tens of seconds for models of Gavel's size (tens to
     * hundreds of MB of state).  30 s is our stated assumption, not a
     * measurement; 0 makes preemption free, which favours policies that
     * preempt often (Gavel's rounds, drover's re-planning). */
    o->restart_overhead_s = 30;
    o->ckpt_write_s = 10;
}

void dr_sim_result_free(dr_sim_result_t *r)
{
    if (r->jobs)
        for (size_t i = 0; i < r->njobs; i++)
            dr_alloc_free(&r->jobs[i].alloc);
    free(r->jobs);
    dr_eventlog_free(&r->log);
    memset(r, 0, sizeof *r);
}

typedef struct sim {
    dr_cluster_t c;
    dr_sched_t *s;
    heap_t h;
    dr_job_t *jobs;
    size_t njobs;
    dr_truth_t truth; /* what each job really does (wl->work) */
    dr_rng_t rng;
    const dr_sim_opts_t *o;
    size_t finished;
    size_t window_left; /* window jobs not yet ended */
    /* The policy's one outstanding wake-up request: a new request replaces
     * it, so wake events do not pile up (only the latest generation
     * counts). */
    dr_time_t wake_t;
    uint32_t wake_gen;
    dr_sim_result_t *res;
    /* elastic pools, per node (NULL when the cluster has no pools): when
     * its bill started (DR_TIME_NEVER = not billed) and a generation that
     * makes provisioning and spot events of an earlier lease stale */
    dr_time_t *bill_since;
    uint32_t *pool_gen;
    double *pool_busy_milli; /* per pool: milli-GPUs held by jobs on its nodes */
    dr_time_t busy_t;        /* time pool_busy_milli was last integrated to */
} sim_t;

static bool in_window(const sim_t *sm, const dr_job_t *j)
{
    return sm->o->stop_last > 0 && j->id >= sm->o->stop_first && j->id <= sm->o->stop_last;
}

/* A job just started at now: schedule its end. */
static int schedule_end(sim_t *sm, dr_job_t *j, dr_time_t now)
{
    if (j->nstarts > 1 && sm->o->restart_overhead_s > 0 && j->work_rate > 0) {
        /* a restart first reloads its checkpoint: that time does no work.
         * Its progress starts that far below the checkpoint (below 0 for a
         * job restarted early), so the whole overhead is paid and a
         * preemption during the reload loses exactly the time spent. */
        j->work_done -= sm->o->restart_overhead_s * j->work_rate;
    }
    if (j->ckpt_every > 0 && sm->o->ckpt_write_s > 0 && j->work_rate > 0) {
        /* writing a checkpoint every ckpt_every pauses the job for ckpt_write_s */
        double every = dr_time_to_s(j->ckpt_every);
        dr_job_set_rate(j, now, j->work_rate * every / (every + sm->o->ckpt_write_s));
    }
    double rem = dr_truth_remaining(&sm->truth, j, now);
    dr_time_t end = DR_TIME_NEVER;
    if (j->work_rate > 0) {
        double secs = rem / j->work_rate;
        end = secs < 9.0e9 ? dr_time_add(now, dr_time_from_s(secs)) : DR_TIME_NEVER;
        if (end <= now && rem > 0 && end != DR_TIME_NEVER)
            end = now + 1; /* never finish "in zero time" unless no work left */
    }
    uint32_t kind = EV_FINISH;
    dr_time_t limit_at = dr_time_add(now, j->time_limit);
    if (j->time_limit > 0 && limit_at < end) {
        end = limit_at;
        kind = EV_TIMEOUT;
    }
    if (end == DR_TIME_NEVER)
        return DR_OK; /* rate 0: it would run forever; the horizon stops it */
    return heap_push(&sm->h, end, kind, (uint64_t)(j - sm->jobs), j->nstarts);
}

static void job_finished(sim_t *sm, const dr_job_t *j)
{
    sm->finished++;
    if (in_window(sm, j))
        sm->window_left--;
    if (sm->o->progress && sm->njobs >= 100 && sm->finished % (sm->njobs / 100) == 0)
        sm->o->progress(sm->o->progress_ud, (double)sm->finished / (double)sm->njobs);
}

/* Price per GPU-hour of a pool: its own, else the catalog's (may be NAN). */
static double pool_price(const dr_cluster_t *c, const dr_pool_t *p)
{
    return isnan(p->price_hr) ? c->types[p->type].price_hr : p->price_hr;
}

/* Stop billing pool node `node` at now. */
static void bill_close(sim_t *sm, uint32_t node, dr_time_t now)
{
    if (!sm->bill_since || sm->bill_since[node] == DR_TIME_NEVER)
        return;
    const dr_node_t *n = &sm->c.nodes[node];
    double gh = dr_time_to_s(now - sm->bill_since[node]) / 3600.0 * n->ngpus;
    sm->res->cloud_gpu_hours += gh;
    sm->res->cloud_cost_usd += gh * pool_price(&sm->c, &sm->c.pools[n->pool]);
    sm->bill_since[node] = DR_TIME_NEVER;
    sm->pool_gen[node]++;
}

/* Jobs' GPU time on pool nodes: integrate the held milli up to now, then
 * (after == true) take the new level. */
static void pool_busy_step(sim_t *sm, dr_time_t now, bool after)
{
    if (!sm->pool_busy_milli)
        return;
    double dt_h = dr_time_to_s(now - sm->busy_t) / 3600.0;
    for (size_t p = 0; p < sm->c.npools && dt_h > 0; p++) {
        double gh = sm->pool_busy_milli[p] / 1000.0 * dt_h;
        sm->res->cloud_busy_gpu_hours += gh;
        sm->res->cloud_busy_list_usd += gh * sm->c.types[sm->c.pools[p].type].price_hr;
    }
    sm->busy_t = now;
    if (!after)
        return;
    for (size_t p = 0; p < sm->c.npools; p++) {
        const dr_pool_t *pl = &sm->c.pools[p];
        double m = 0;
        for (uint32_t k = 0; k < pl->max_nodes; k++) {
            const dr_node_t *n = &sm->c.nodes[pl->first_node + k];
            for (uint16_t g = 0; g < n->ngpus && n->njobs; g++)
                m += 1000 - sm->c.gpu_free[n->gpu_base + g];
        }
        sm->pool_busy_milli[p] = m;
    }
}

/* Act on the pool decisions of a pass. */
static int apply_pool_decisions(sim_t *sm, const dr_pass_result_t *pr, dr_time_t now)
{
    for (size_t i = 0; i < pr->nrelease; i++) {
        sm->res->releases++;
        bill_close(sm, pr->release[i], now);
    }
    for (size_t i = 0; i < pr->nprovision; i++) {
        uint32_t node = pr->provision[i];
        const dr_pool_t *p = &sm->c.pools[sm->c.nodes[node].pool];
        sm->res->provisions++;
        sm->bill_since[node] = now;
        int rc = heap_push(&sm->h, dr_time_add(now, p->provision_delay), EV_PROVISIONED, node,
                           ++sm->pool_gen[node]);
        if (rc != DR_OK)
            return rc;
    }
    return DR_OK;
}

/* Apply one event; *real is set when it changes anything (a stale wake-up
 * does not, and needs no scheduling pass). */
static int apply_event(sim_t *sm, const sim_ev_t *e, bool *real, dr_err_t *err)
{
    *real = true;
    switch (e->kind) {
    case EV_FINISH:
    case EV_TIMEOUT: {
        dr_job_t *j = &sm->jobs[e->idx];
        if (j->state != DR_JOB_RUNNING || j->nstarts != e->gen) {
            *real = false;
            return DR_OK; /* stale: preempted or requeued since */
        }
        dr_job_state_t final = e->kind == EV_TIMEOUT ? DR_JOB_TIMEOUT : DR_JOB_COMPLETED;
        if (final == DR_JOB_COMPLETED) { /* exactly its work, not a rounding more */
            dr_job_set_rate(j, e->t, 0);
            j->work_done = sm->truth.work[e->idx];
        }
        int rc = dr_sched_job_ended(sm->s, j, final, e->t,
                                    final == DR_JOB_TIMEOUT ? "walltime limit reached" : NULL, err);
        if (rc == DR_OK)
            job_finished(sm, j);
        return rc;
    }
    case EV_WAKE:
        if (e->gen != sm->wake_gen)
            *real = false; /* replaced by a later request */
        else
            sm->wake_t = DR_TIME_NEVER;
        return DR_OK;
    case EV_NODE_FAIL: {
        sm->res->node_failures++;
        int rc = dr_sched_node_down(sm->s, (uint32_t)e->idx, e->t, false, err);
        if (rc == DR_OK)
            rc = heap_push(&sm->h, dr_time_add(e->t, dr_time_from_s(sm->o->node_repair_s)),
                           EV_NODE_REPAIR, e->idx, 0);
        return rc;
    }
    case EV_NODE_REPAIR: {
        int rc = dr_sched_node_up(sm->s, (uint32_t)e->idx, e->t, err);
        if (rc == DR_OK)
            rc = heap_push(
                &sm->h,
                dr_time_add(e->t, dr_time_from_s(dr_rng_exp(&sm->rng, 1.0 / sm->o->node_mtbf_s))),
                EV_NODE_FAIL, e->idx, 0);
        return rc;
    }
    case EV_PROVISIONED: {
        uint32_t node = (uint32_t)e->idx;
        if (sm->c.nodes[node].state != DR_NODE_PROVISIONING || sm->pool_gen[node] != e->gen) {
            *real = false; /* released while provisioning */
            return DR_OK;
        }
        int rc = dr_sched_node_up(sm->s, node, e->t, err);
        double rate = sm->c.pools[sm->c.nodes[node].pool].spot_interrupt_per_hr;
        if (rc == DR_OK && rate > 0)
            rc = heap_push(&sm->h,
                           dr_time_add(e->t, dr_time_from_s(dr_rng_exp(&sm->rng, rate / 3600.0))),
                           EV_SPOT_LOSS, node, e->gen);
        return rc;
    }
    case EV_SPOT_LOSS: {
        uint32_t node = (uint32_t)e->idx;
        if (sm->c.nodes[node].state != DR_NODE_UP || sm->pool_gen[node] != e->gen) {
            *real = false; /* released before the provider took it */
            return DR_OK;
        }
        sm->res->spot_losses++;
        int rc = dr_sched_node_down(sm->s, node, e->t, true, err);
        if (rc == DR_OK)
            rc = dr_sched_node_set_state(sm->s, node, DR_NODE_CLOUD, e->t, err);
        if (rc == DR_OK)
            bill_close(sm, node, e->t);
        return rc;
    }
    }
    return DR_OK;
}

static int sim_loop(sim_t *sm, dr_err_t *err)
{
    const dr_sim_opts_t *o = sm->o;
    size_t next = 0;
    dr_pass_result_t pr = {0};
    int rc = DR_OK;
    dr_time_t now = 0;
    while (rc == DR_OK) {
        dr_time_t ta = next < sm->njobs ? sm->jobs[next].submit : DR_TIME_NEVER;
        dr_time_t th = sm->h.n ? sm->h.a[0].t : DR_TIME_NEVER;
        /* node failures alone do not keep a finished simulation going */
        if (ta == DR_TIME_NEVER && sm->finished + 0 >= sm->njobs)
            break;
        dr_time_t t = ta < th ? ta : th;
        if (t == DR_TIME_NEVER)
            break; /* nothing can happen any more: pending jobs are stuck */
        if (o->horizon > 0 && t > o->horizon)
            break;
        if (o->stop_last > 0 && sm->window_left == 0)
            break;
        now = t;
        pool_busy_step(sm, now, false);
        bool real = false;
        while (rc == DR_OK && next < sm->njobs && sm->jobs[next].submit == now) {
            real = true;
            dr_job_t *j = &sm->jobs[next++];
            dr_err_t why;
            int src = dr_sched_submit(sm->s, j, now, &why);
            if (src == DR_ENOSPC)
                job_finished(sm, j); /* rejected: failed at once */
            else if (src != DR_OK)
                rc = dr_err_set(err, src, "%s", why.msg);
        }
        while (rc == DR_OK && sm->h.n && sm->h.a[0].t == now) {
            sim_ev_t e = heap_pop(&sm->h);
            bool r;
            rc = apply_event(sm, &e, &r, err);
            real |= r;
        }
        if (rc != DR_OK)
            break;
        if (!real)
            continue; /* only stale events at this instant: nothing to decide */
        sm->res->events++;
        rc = dr_sched_pass(sm->s, now, &pr, err);
        for (size_t i = 0; rc == DR_OK && i < pr.nstarted; i++) {
            dr_job_t *j = pr.started[i];
            rc = dr_sched_job_running(sm->s, j, now, err);
            if (rc == DR_OK)
                rc = schedule_end(sm, j, now);
        }
        if (rc == DR_OK && (pr.nprovision || pr.nrelease) &&
            (rc = apply_pool_decisions(sm, &pr, now)) != DR_OK)
            rc = dr_err_set(err, rc, "out of memory for pool events");
        pool_busy_step(sm, now, true);
        dr_time_t want = pr.wake_at > now ? pr.wake_at : DR_TIME_NEVER;
        if (rc == DR_OK && want != sm->wake_t) {
            sm->wake_gen++; /* any earlier request is now stale */
            sm->wake_t = want;
            if (want != DR_TIME_NEVER)
                rc = heap_push(&sm->h, want, EV_WAKE, 0, sm->wake_gen);
        }
    }
    sm->res->end_time = now;
    pool_busy_step(sm, now, false);
    for (size_t i = 0; sm->bill_since && i < sm->c.nnodes; i++)
        bill_close(sm, (uint32_t)i, now); /* nodes still up when the run ends */
    dr_pass_result_free(&pr);
    return rc;
}

/* Rates the policies believe and rates jobs run at (dr_sim_opts_t.rate_noise):
 * the core sets a started job's rate from the policies' view times the
 * rate factor, so the factor is true / believed (times the span slowdown). */
typedef struct belief {
    const dr_perf_view_t *truth, *believed;
    const dr_span_slowdown_t *span;
} belief_t;

static double belief_factor(const void *ud, const dr_job_t *j, const dr_alloc_t *a)
{
    const belief_t *b = ud;
    double f = b->span ? dr_span_slowdown_factor(b->span, j, a) : 1.0;
    double bel = dr_perf_rate(b->believed, j, a->type);
    return bel > 0 ? f * dr_perf_rate(b->truth, j, a->type) / bel : f;
}

/* The believed table: wl's with every class's rates off by e^(sigma Z). */
static int perturb(const dr_perf_table_t *src, double sigma, uint64_t seed, dr_perf_table_t *out)
{
    dr_perf_init(out);
    int rc = dr_perf_copy(out, src);
    if (rc != DR_OK)
        return rc;
    dr_rng_t r;
    dr_rng_seed(&r, seed ^ 0x7261746573ULL); /* "rates": its own stream */
    for (size_t k = 1; k < out->nclasses; k++)
        for (size_t t = 0; t < out->ntypes; t++) {
            /* Box-Muller: one normal per (class, type), in table order */
            double u1 = dr_rng_uniform(&r), u2 = dr_rng_uniform(&r);
            double z = sqrt(-2.0 * log(u1 > 0 ? u1 : 1e-300)) * cos(2 * M_PI * u2);
            out->rate[k * out->ntypes + t] *= exp(sigma * z);
        }
    return DR_OK;
}

int dr_sim_run(const dr_cluster_t *cluster, const dr_workload_t *wl, const dr_sim_opts_t *o,
               dr_sim_result_t *res, dr_err_t *err)
{
    dr_perf_table_t believed;
    dr_perf_init(&believed);
    memset(res, 0, sizeof *res);
    snprintf(res->policy, sizeof res->policy, "%s", o->policy ? o->policy : "?");
    sim_t sm = {0};
    sm.o = o;
    sm.res = res;
    sm.wake_t = DR_TIME_NEVER;
    dr_rng_seed(&sm.rng, o->seed);
    int rc = dr_cluster_copy(&sm.c, cluster, err);
    if (rc != DR_OK)
        return rc;
    dr_perf_view_t pv = {.table = &wl->perf};
    rc = dr_perf_bind(&wl->perf, &sm.c, pv.map, err);
    if (rc != DR_OK)
        goto out;
    sm.njobs = wl->njobs;
    sm.jobs = malloc((wl->njobs ? wl->njobs : 1) * sizeof *sm.jobs);
    if (!sm.jobs) {
        rc = dr_err_set(err, DR_ENOMEM, "out of memory for %zu jobs", wl->njobs);
        goto out;
    }
    if (wl->njobs)
        memcpy(sm.jobs, wl->jobs, wl->njobs * sizeof *sm.jobs);
    sm.truth = (dr_truth_t){sm.jobs, wl->work, wl->njobs};
    for (size_t i = 0; i < sm.njobs; i++) {
        dr_job_t *j = &sm.jobs[i];
        memset(&j->alloc, 0, sizeof j->alloc);
        j->state = DR_JOB_PENDING;
        j->work_done = j->work_ckpt = 0;
        j->work_rate = 0;
        j->attained_gpu_s = 0;
        j->nstarts = j->npreempt = 0;
        if (in_window(&sm, j))
            sm.window_left++;
        if (i > 0 && j->submit < sm.jobs[i - 1].submit) {
            rc = dr_err_set(err, DR_EINVAL, "workload is not sorted by submit time at job %llu",
                            (unsigned long long)j->id);
            goto out;
        }
    }
    dr_sched_opts_t so = {.policy = o->policy,
                          .placement = o->placement,
                          .perf = &pv,
                          .audit = o->audit,
                          .seed = o->seed,
                          .rate_factor = o->span_slowdown ? dr_span_slowdown_factor : NULL,
                          .rate_factor_ud = o->span_slowdown,
                          .truth = &sm.truth};
    dr_perf_view_t bv = pv;
    belief_t bel = {&pv, &bv, o->span_slowdown};
    if (o->rate_noise > 0) {
        if ((rc = perturb(&wl->perf, o->rate_noise, o->rate_noise_seed, &believed)) != DR_OK) {
            rc = dr_err_set(err, rc, "out of memory for the believed rates");
            goto out;
        }
        bv.table = &believed; /* the same columns: pv's binding holds */
        so.perf = &bv;
        so.rate_factor = belief_factor;
        so.rate_factor_ud = &bel;
    }
    rc = dr_sched_create(&sm.s, &sm.c, &so, err);
    if (rc != DR_OK)
        goto out;
    /* the workload's accounts are the cluster's Account= lines by name */
    for (size_t i = 0; sm.c.naccounts && i < wl->accounts.n && rc == DR_OK; i++)
        rc = dr_sched_bind_account(sm.s, (uint32_t)i, wl->accounts.strs[i], err);
    if (rc != DR_OK)
        goto out;
    /* submit, start, run, completing, end: five records per job */
    if (dr_eventlog_reserve(dr_sched_log_mut(sm.s), 5 * sm.njobs) != 0) {
        rc = dr_err_set(err, DR_ENOMEM, "out of memory for the event log");
        goto out;
    }
    if (sm.c.npools) {
        sm.bill_since = malloc(sm.c.nnodes * sizeof *sm.bill_since);
        sm.pool_gen = calloc(sm.c.nnodes, sizeof *sm.pool_gen);
        sm.pool_busy_milli = calloc(sm.c.npools, sizeof *sm.pool_busy_milli);
        if (!sm.bill_since || !sm.pool_gen || !sm.pool_busy_milli) {
            rc = dr_err_set(err, DR_ENOMEM, "out of memory for %zu pool nodes", sm.c.nnodes);
            goto out;
        }
        for (size_t i = 0; i < sm.c.nnodes; i++)
            sm.bill_since[i] = DR_TIME_NEVER;
    }
    /* failures hit on-prem nodes; pool nodes have their spot rate instead */
    if (o->node_mtbf_s > 0)
        for (size_t i = 0; i < sm.c.nnodes && rc == DR_OK; i++)
            if (sm.c.nodes[i].pool < 0)
                rc = heap_push(&sm.h, dr_time_from_s(dr_rng_exp(&sm.rng, 1.0 / o->node_mtbf_s)),
                               EV_NODE_FAIL, i, 0);
    if (rc == DR_OK)
        rc = sim_loop(&sm, err);
    if (rc == DR_OK) {
        res->stats = *dr_sched_stats(sm.s);
        /* hand the log over without copying */
        dr_eventlog_t *log = dr_sched_log_mut(sm.s);
        res->log = *log;
        dr_eventlog_init(log);
        res->jobs = sm.jobs;
        res->njobs = sm.njobs;
        sm.jobs = NULL;
        for (size_t i = 0; i < res->njobs; i++)
            dr_alloc_free(&res->jobs[i].alloc);
        if (o->progress)
            o->progress(o->progress_ud, 1.0);
    }
out:
    dr_sched_destroy(sm.s);
    if (sm.jobs)
        for (size_t i = 0; i < sm.njobs; i++)
            dr_alloc_free(&sm.jobs[i].alloc);
    free(sm.jobs);
    free(sm.h.a);
    free(sm.bill_since);
    free(sm.pool_gen);
    free(sm.pool_busy_milli);
    dr_cluster_free(&sm.c);
    dr_perf_free(&believed);
    return rc;
}
