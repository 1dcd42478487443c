/* policy_cost.c - the cost-aware policy: each job runs where it costs the
 * fewest dollars while still finishing by its deadline.
 *
 * Why: on a mixed fleet the fastest GPU is rarely the cheapest way to do a
 * job's work, and a job with a distant deadline gains nothing from finishing
 * early.  So the policy spends speed only where a deadline needs it, keeps
 * services (which pay by the hour whatever the GPU's speed) on the cheapest
 * type that meets their SLO, and rents elastic cloud nodes only when the
 * on-prem fleet cannot meet a deadline - giving them back as soon as they
 * idle.  Design and measurements: docs/scheduling.md, "Cost-aware policy".
 *
 * Every pass re-plans all waiting jobs (running ones keep their GPUs):
 *  - The fleet is a set of resources: the on-prem GPUs of each type, and
 *    each elastic pool.  Each resource is a list of GPU slots with the time
 *    each becomes free in the plan (now, the end of the job on it, or - for
 *    a pool node being provisioned - the time it will be up).
 *  - A job's price on a resource is USD/GPU-hour x GPUs x its remaining work
 *    / its rate there (the perf view).  On-prem GPUs are priced at the
 *    catalog's on-demand price: what the hour would fetch elsewhere, so the
 *    policy still prefers types that do the work cheaply.
 *  - Services (kind serve) go first and must start now: the cheapest type
 *    they may use (their allowed types are the ones meeting their SLO) with
 *    room, else room made by preempting jobs that can afford to wait, else
 *    cloud nodes (started as soon as they are up).
 *  - Jobs with a deadline go in deadline order (EDF).  Each takes the
 *    cheapest on-prem resource on which start (the slots it must wait for) +
 *    remaining time meets the deadline (with a safety margin when it has to
 *    wait); if none can, the cheapest pool that can, provisioning the nodes
 *    it needs now; if nothing can, the earliest finish on-prem or on nodes
 *    already provisioned (never new nodes for a lost cause).
 *  - Jobs without a deadline get a soft one: submit + soft x their time on
 *    their fastest type, and are placed by the same rule on-prem only.
 *  - Jobs planned to start now are placed; pool nodes that no planned job
 *    needs are released once idle for `idle` seconds.
 *
 * Options: soft=X (3; 0 = a deadline-less job takes the cheapest type with
 * room now), safety=X (0.1: fraction of the time left to a deadline kept in
 * reserve when a job waits for a cheaper type), idle=S (0: seconds a pool
 * node may idle before it is released), preempt=0|1 (1: services may
 * preempt), cloud=0|1 (1: use elastic pools). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/placement.h"
#include "drover/sched.h"
#include "drover/util.h"
#include "sched/policy_util.h"
#include "sched/size_estimate.h"

#define EPS_S 1e-6 /* "now", in seconds */

/* A distinct node shape of a resource, to tell whether a request could ever
 * be placed there. */
typedef struct cshape {
    uint32_t ngpus, cpu_milli, count;
    uint64_t mem_mb;
} cshape_t;

/* On-prem GPUs of one type, or one elastic pool. */
typedef struct cres {
    int type;
    int pool;     /* DR_NONE = on-prem */
    double price; /* USD per GPU-hour */
    /* free time of each GPU in the plan, seconds from now: a binary
     * min-heap, so that booking a job costs O(g log GPUs) and not the
     * O(GPUs) of the sorted array it was (37 ms a pass at 80,000 GPUs,
     * over 30 s with 100,000 pending jobs); only the g-th smallest value
     * is ever read (start_on), so the plan is the same multiset */
    double *slot;
    size_t nslot, slot_cap;
    size_t *frontier; /* start_on's scratch */
    size_t frontier_cap;
    cshape_t *shape;
    size_t nshape, shape_cap;
    /* pools */
    uint32_t gpn;        /* GPUs per pool node */
    double delay_s;      /* provision delay */
    uint32_t cloud_left; /* CLOUD nodes not yet claimed by this plan */
    uint32_t claim;      /* nodes to provision after planning */
    uint32_t need_nodes; /* nodes planned jobs not yet started need */
} cres_t;

typedef struct cpol {
    double soft, safety, gain, idle_s, q;
    bool preempt, cloud, late_cheap;
    cres_t res[2 * DR_MAX_GPU_TYPES];
    size_t nres;
    int onprem_of_type[DR_MAX_GPU_TYPES]; /* resource index, -1 */
    dr_job_t **run;                       /* running jobs at the start of the pass */
    size_t nrun, run_cap;
    dr_job_t **order;
    size_t order_cap;
    dr_job_t **late; /* deadline jobs that cannot make it any more (scratch) */
    size_t late_cap;
    dr_time_t *prov_at;    /* per node: when this policy asked to provision it */
    dr_time_t *idle_since; /* per node: pool node idle since (DR_TIME_NEVER = busy) */
    size_t nnodes;
    uint32_t *hidden;
    size_t nhidden, hidden_cap;
    struct cvic *vic; /* preemption candidates (scratch) */
    size_t vic_cap;
    bool preempted; /* this pass preempted jobs: re-plan them soon */
    dr_size_est_t est;
} cpol_t;

static int cpol_opt(void *ud, const char *k, const char *val, dr_err_t *err)
{
    cpol_t *d = ud;
    double x;
    if (dr_parse_double(val, &x) != 0 || !(x >= 0) || !isfinite(x))
        return dr_err_set(err, DR_EINVAL, "%s: '%s' must be a number >= 0", k, val);
    bool fraction = dr_streq_ci(k, "safety") || dr_streq_ci(k, "gain") || dr_streq_ci(k, "q");
    if (fraction && x >= 1)
        return dr_err_set(err, DR_EINVAL, "%s: '%s' must be below 1", k, val);
    if (dr_streq_ci(k, "soft"))
        d->soft = x;
    else if (dr_streq_ci(k, "safety"))
        d->safety = x;
    else if (dr_streq_ci(k, "gain"))
        d->gain = x;
    else if (dr_streq_ci(k, "q"))
        d->q = x;
    else if (dr_streq_ci(k, "idle"))
        d->idle_s = x;
    else if (dr_streq_ci(k, "preempt"))
        d->preempt = x != 0;
    else if (dr_streq_ci(k, "cloud"))
        d->cloud = x != 0;
    else if (dr_streq_ci(k, "late_cheap"))
        d->late_cheap = x != 0;
    else
        return dr_err_set(
            err, DR_EINVAL,
            "unknown option '%s' (known: soft, safety, gain, q, idle, preempt, cloud, "
            "late_cheap)",
            k);
    return DR_OK;
}

static int cpol_create(void **state, const char *opts, const dr_policy_env_t *env, dr_err_t *err)
{
    (void)env;
    cpol_t *d = calloc(1, sizeof *d);
    if (!d)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    d->soft = 3;
    d->safety = 0.1;
    d->gain = 0.1;
    d->idle_s = 0;
    d->q = 0.8;
    d->preempt = true;
    d->cloud = true;
    dr_size_est_init(&d->est);
    int rc = dr_policy_opts_each(opts, cpol_opt, d, err);
    if (rc != DR_OK) {
        free(d);
        return rc;
    }
    *state = d;
    return DR_OK;
}

static void cpol_destroy(void *state)
{
    cpol_t *d = state;
    if (!d)
        return;
    for (size_t r = 0; r < 2 * DR_MAX_GPU_TYPES; r++) {
        free(d->res[r].slot);
        free(d->res[r].frontier);
        free(d->res[r].shape);
    }
    free(d->run);
    free(d->order);
    free(d->late);
    free(d->prov_at);
    free(d->idle_since);
    free(d->hidden);
    free(d->vic);
    free(d);
}

/* GPUs a job occupies (a share counts as one). */
static uint32_t job_gpus(const dr_job_t *j)
{
    uint64_t g = (uint64_t)j->req.gpus_per_node * (j->req.nodes ? j->req.nodes : 1);
    return g == 0 ? 0 : g > UINT32_MAX ? UINT32_MAX : (uint32_t)g;
}

/* Estimated remaining work of j (size_estimate.h: from its declared size
 * or, without one, from the sizes of completed jobs, conditioned on its
 * progress).  A job whose progress outgrows its estimate is re-estimated,
 * and so re-planned, on every pass. */
static double remaining_work(const cpol_t *d, const dr_sched_view_t *v, const dr_job_t *j)
{
    double best = dr_perf_best_rate(v->perf, j, dr_perf_runnable(v->perf, v->cluster, j));
    /* a deadline is planned on a pessimistic estimate (the q-quantile), so
     * that it holds about that often whatever the declarations are worth */
    return j->deadline > 0 && d->q > 0 ? dr_size_est_remaining_work_q(&d->est, v, j, best, d->q)
                                       : dr_size_est_remaining_work(&d->est, v, j, best);
}

/* Seconds the remaining work w of j takes on type t, capped by its
 * walltime limit. */
static double time_on(const dr_sched_view_t *v, const dr_job_t *j, double w, unsigned t)
{
    double r = dr_perf_rate(v->perf, j, t);
    if (!(r > 0))
        return INFINITY;
    double sec = w / r;
    double left = dr_size_est_limit_left_s(v, j);
    if (sec > left)
        sec = left;
    return sec > 60 ? sec : 60;
}

/* Estimated remaining run time of j on type t in seconds. */
static double remaining_s(const cpol_t *d, const dr_sched_view_t *v, const dr_job_t *j, unsigned t)
{
    return time_on(v, j, remaining_work(d, v, j), t);
}

static double type_price(const dr_cluster_t *c, unsigned t)
{
    double p = c->types[t].price_hr;
    if (isfinite(p) && p >= 0)
        return p;
    /* unknown: as dear as the dearest known type, so it is used last */
    double mx = 0;
    for (size_t k = 0; k < c->ntypes; k++)
        if (isfinite(c->types[k].price_hr) && c->types[k].price_hr > mx)
            mx = c->types[k].price_hr;
    return mx > 0 ? mx : 1;
}

static void heap_down(double *h, size_t n, size_t i)
{
    double x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1] < h[c])
            c++;
        if (!(h[c] < x))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static void heap_up(double *h, size_t i)
{
    double x = h[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!(x < h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

static void heapify(double *h, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        heap_down(h, n, i);
}

/* Append n slots free at t (heap order restored by the caller: heapify
 * after building, heap_up after a claim). */
static int add_slots(cres_t *r, double t, size_t n)
{
    if (dr_grow((void **)&r->slot, &r->slot_cap, r->nslot + n, sizeof *r->slot) != 0)
        return DR_ENOMEM;
    for (size_t i = 0; i < n; i++)
        r->slot[r->nslot++] = t;
    return DR_OK;
}

static int add_shape(cres_t *r, const dr_node_t *n)
{
    for (size_t i = 0; i < r->nshape; i++) {
        cshape_t *s = &r->shape[i];
        if (s->ngpus == n->ngpus && s->cpu_milli == n->cpu_milli && s->mem_mb == n->mem_mb) {
            s->count++;
            return DR_OK;
        }
    }
    cshape_t s = {n->ngpus, n->cpu_milli, 1, n->mem_mb};
    return DR_PUSH(r->shape, r->nshape, r->shape_cap, s) == 0 ? DR_OK : DR_ENOMEM;
}

/* Could the resource ever host j (every node idle)? */
static bool shape_ok(const cres_t *r, const dr_job_t *j)
{
    const dr_job_req_t *q = &j->req;
    uint64_t nodes = 0, gpus = 0;
    for (size_t i = 0; i < r->nshape; i++) {
        const cshape_t *s = &r->shape[i];
        if (s->cpu_milli < q->cpu_milli_per_node || s->mem_mb < q->mem_mb_per_node)
            continue;
        gpus += (uint64_t)s->count * s->ngpus;
        if (s->ngpus >= q->gpus_per_node || q->gpu_milli < 1000)
            nodes += s->count;
    }
    return q->nodes == 0 ? gpus >= q->gpus_per_node : nodes >= q->nodes;
}

/* Pool nodes a job needs. */
static uint32_t pool_nodes_for(const cres_t *r, const dr_job_t *j)
{
    if (j->req.nodes)
        return j->req.nodes;
    uint32_t g = job_gpus(j);
    return r->gpn ? (g + r->gpn - 1) / r->gpn : 1;
}

/* Resource index of the node's owner (on-prem type or pool), -1 if none. */
static int res_of_node(const cpol_t *d, const dr_cluster_t *c, const dr_node_t *n)
{
    if (n->ngpus == 0)
        return -1;
    if (n->pool < 0)
        return d->onprem_of_type[n->type];
    return d->cloud ? (int)(d->nres - c->npools + (size_t)n->pool) : -1;
}

/* Build the resources from the ledger and the running jobs. */
static int build(cpol_t *d, const dr_sched_view_t *v)
{
    const dr_cluster_t *c = v->cluster;
    size_t avail[2 * DR_MAX_GPU_TYPES] = {0};
    d->nres = 0;
    for (size_t t = 0; t < DR_MAX_GPU_TYPES; t++)
        d->onprem_of_type[t] = -1;
    for (size_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *n = &c->nodes[i];
        if (n->ngpus == 0 || n->pool >= 0 || d->onprem_of_type[n->type] >= 0)
            continue;
        cres_t *r = &d->res[d->nres];
        r->type = n->type;
        r->pool = DR_NONE;
        r->price = type_price(c, n->type);
        d->onprem_of_type[n->type] = (int)d->nres++;
    }
    for (size_t p = 0; p < c->npools && d->cloud; p++) {
        const dr_pool_t *pl = &c->pools[p];
        cres_t *r = &d->res[d->nres++];
        r->type = pl->type;
        r->pool = (int)p;
        r->price = isfinite(pl->price_hr) ? pl->price_hr : type_price(c, pl->type);
        r->gpn = pl->gpus_per_node;
        r->delay_s = dr_time_to_s(pl->provision_delay);
    }
    for (size_t k = 0; k < d->nres; k++) {
        cres_t *r = &d->res[k];
        r->nslot = r->nshape = 0;
        r->cloud_left = r->claim = r->need_nodes = 0;
    }
    int rc = DR_OK;
    /* usable GPUs, nodes still provisioning (free when up), CLOUD nodes */
    for (size_t i = 0; i < c->nnodes && rc == DR_OK; i++) {
        const dr_node_t *n = &c->nodes[i];
        int k = res_of_node(d, c, n);
        if (k < 0)
            continue;
        cres_t *r = &d->res[k];
        rc = add_shape(r, n);
        if (dr_node_usable(n)) {
            avail[k] += n->ngpus;
        } else if (n->state == DR_NODE_PROVISIONING && rc == DR_OK) {
            double up = r->delay_s;
            if (d->prov_at[i] != DR_TIME_NEVER)
                up += dr_time_to_s(d->prov_at[i] - v->now);
            rc = add_slots(r, up > 0 ? up : 0, n->ngpus);
        } else if (n->state == DR_NODE_CLOUD) {
            r->cloud_left++;
        }
    }
    /* running jobs hold their GPUs until their expected end */
    for (size_t i = 0; i < d->nrun && rc == DR_OK; i++) {
        const dr_job_t *j = d->run[i];
        if (j->alloc.nslots == 0 || j->alloc.slots[0].gpu == DR_NO_GPU)
            continue;
        const dr_node_t *n = &c->nodes[j->alloc.slots[0].node];
        int k = dr_node_usable(n) ? res_of_node(d, c, n) : -1;
        if (k < 0)
            continue;
        size_t take = j->alloc.nslots < avail[k] ? j->alloc.nslots : avail[k];
        avail[k] -= take;
        double end = remaining_s(d, v, j, j->alloc.type);
        rc = add_slots(&d->res[k], isfinite(end) ? end : 1e18, take);
    }
    for (size_t k = 0; k < d->nres && rc == DR_OK; k++) {
        rc = add_slots(&d->res[k], 0, avail[k]);
        if (d->res[k].nslot > 1) /* an empty resource has no slot array at all */
            heapify(d->res[k].slot, d->res[k].nslot);
    }
    return rc;
}

/* Earliest start for g GPUs on r in the plan (INFINITY if too few): the
 * g-th smallest free time, found by walking the heap from its root with a
 * frontier of candidate nodes kept as a min-heap (O(g log g)). */
static double start_on(cres_t *r, uint32_t g)
{
    if (g == 0)
        return 0;
    if (r->nslot < g)
        return INFINITY;
    if (g == 1)
        return r->slot[0];
    if (dr_grow((void **)&r->frontier, &r->frontier_cap, (size_t)g + 1, sizeof *r->frontier) != 0)
        return INFINITY; /* out of memory: this type is not planned on this pass */
    const double *h = r->slot;
    size_t *f = r->frontier, nf = 1;
    f[0] = 0;
    double v = 0;
    for (uint32_t k = 0; k < g; k++) {
        size_t top = f[0];
        v = h[top];
        /* pop the frontier's minimum (sift the last entry down from the root) */
        f[0] = f[--nf];
        for (size_t i = 0;;) {
            size_t c = 2 * i + 1;
            if (c >= nf)
                break;
            if (c + 1 < nf && h[f[c + 1]] < h[f[c]])
                c++;
            if (!(h[f[c]] < h[f[i]]))
                break;
            size_t t = f[i];
            f[i] = f[c];
            f[c] = t;
            i = c;
        }
        /* push top's children (each sifted up) */
        for (size_t c = 2 * top + 1; c <= 2 * top + 2 && c < r->nslot; c++) {
            size_t i = nf++;
            f[i] = c;
            while (i > 0 && h[f[i]] < h[f[(i - 1) / 2]]) {
                size_t p = (i - 1) / 2, t = f[i];
                f[i] = f[p];
                f[p] = t;
                i = p;
            }
        }
    }
    return v;
}

/* Book the g earliest slots from start s to s + dur: they leave the plan
 * and g slots free at s + dur join it. */
static void book(cres_t *r, uint32_t g, double s, double dur)
{
    if (g == 0 || r->nslot < g)
        return;
    double end = s + dur;
    if (!isfinite(end))
        end = 1e18;
    for (uint32_t i = 0; i < g; i++) {
        r->slot[0] = r->slot[--r->nslot];
        heap_down(r->slot, r->nslot, 0);
    }
    for (uint32_t i = 0; i < g; i++) {
        r->slot[r->nslot] = end;
        heap_up(r->slot, r->nslot++);
    }
}

/* Hide node i for the placement at hand (restored by unhide_all). */
static int hide(cpol_t *d, dr_cluster_t *c, uint32_t i)
{
    if (DR_PUSH(d->hidden, d->nhidden, d->hidden_cap, i) != 0)
        return DR_ENOMEM;
    dr_cluster_hide(c, i, true);
    return DR_OK;
}

static void unhide_all(cpol_t *d, dr_cluster_t *c)
{
    for (size_t i = 0; i < d->nhidden; i++)
        dr_cluster_hide(c, d->hidden[i], false);
    d->nhidden = 0;
}

/* Place j on r now: usable nodes of r's type that belong to another owner
 * (on-prem vs a pool) are hidden for the call - for an on-prem placement
 * only the pools' nodes are visited, so the common case stays cheap.
 * DR_ENOSPC if it does not fit. */
static int place_on(cpol_t *d, const dr_sched_view_t *v, dr_job_t *j, const cres_t *r)
{
    dr_cluster_t *c = v->cluster;
    dr_typemask_t allowed = dr_perf_runnable(v->perf, c, j) & (1ULL << r->type);
    if (!allowed || !dr_place_fits_quick(c, &j->req, allowed))
        return DR_ENOSPC;
    int rc = DR_OK;
    d->nhidden = 0;
    if (r->pool < 0) {
        for (size_t p = 0; p < c->npools && rc == DR_OK; p++) {
            const dr_pool_t *pl = &c->pools[p];
            for (uint32_t q = 0; q < pl->max_nodes && rc == DR_OK && pl->type == r->type; q++)
                if (dr_node_usable(&c->nodes[pl->first_node + q]))
                    rc = hide(d, c, pl->first_node + q);
        }
    } else {
        for (size_t i = 0; i < c->nnodes && rc == DR_OK; i++) {
            const dr_node_t *n = &c->nodes[i];
            if (n->type == r->type && n->ngpus && n->pool != r->pool && dr_node_usable(n))
                rc = hide(d, c, (uint32_t)i);
        }
    }
    dr_alloc_t a;
    if (rc == DR_OK)
        rc = dr_place(c, &j->req, allowed, v->place, &a);
    unhide_all(d, c);
    if (rc != DR_OK)
        return rc;
    return dr_sched_decide_start(v->sched, j, &a);
}

/* May running job x make room for a service?  Jobs without a deadline may,
 * those that lose the least work first - the running time since their last
 * checkpoint (all of it for a job that declares none), in whole seconds -
 * then those with the most work left (a restart costs them least relative
 * to what remains); jobs with a deadline only while their slack is at
 * least twice their remaining time, after every job without one.  Returns
 * the eviction key (lower goes first), or -1. */
#define VICTIM_DEADLINE_KEY 2e9 /* above any lost time (capped at 1e9 s) */
static double victim_key(const cpol_t *d, const dr_sched_view_t *v, const dr_job_t *x)
{
    if (x->kind == DR_KIND_SERVE || x->state != DR_JOB_RUNNING)
        return -1;
    double rem = remaining_s(d, v, x, x->alloc.type);
    if (x->deadline <= 0) {
        double lost = dr_job_lost_s(x, v->now);
        return floor(lost < 1e9 ? lost : 1e9) + 1.0 / (1.0 + (isfinite(rem) ? rem : 1e18));
    }
    double slack = dr_time_to_s(x->deadline - v->now) - rem;
    if (!(slack >= 2 * rem))
        return -1;
    return VICTIM_DEADLINE_KEY + 1.0 / (1.0 + slack);
}

/* A possible victim's GPUs on one node. */
typedef struct cvic {
    uint32_t node, gpus;
    uint32_t run; /* index into d->run */
    double key;
} cvic_t;

static int cmp_vic(const void *a, const void *b)
{
    const cvic_t *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->run < y->run ? -1 : (x->run > y->run);
}

/* Make room for single-node service j on on-prem resource r: on the node
 * where the fewest GPUs' worth of victims (taken in key order) must go,
 * preempt them and place j.  DR_OK if j started, DR_ENOSPC if no node can
 * be cleared.  O(running log running). */
static int preempt_for(cpol_t *d, const dr_sched_view_t *v, dr_job_t *j, const cres_t *r)
{
    dr_cluster_t *c = v->cluster;
    const dr_job_req_t *q = &j->req;
    uint32_t g = job_gpus(j);
    if (q->nodes > 1 || q->gpu_milli < 1000 || g == 0)
        return DR_ENOSPC;
    /* victims' holdings per node of r (on-prem, usable, big enough) */
    size_t nv = 0;
    for (size_t k = 0; k < d->nrun; k++) {
        const dr_job_t *x = d->run[k];
        double key = victim_key(d, v, x);
        for (uint32_t s = 0; key >= 0 && s < x->alloc.nslots; s++) {
            uint32_t node = x->alloc.slots[s].node;
            const dr_node_t *n = &c->nodes[node];
            if (n->type != r->type || n->pool >= 0 || !dr_node_usable(n) || n->ngpus < g ||
                n->cpu_milli < q->cpu_milli_per_node || n->mem_mb < q->mem_mb_per_node)
                continue;
            if (nv > 0 && d->vic[nv - 1].run == k && d->vic[nv - 1].node == node) {
                d->vic[nv - 1].gpus += x->alloc.slots[s].gpu != DR_NO_GPU;
                continue;
            }
            cvic_t e = {node, x->alloc.slots[s].gpu != DR_NO_GPU, (uint32_t)k, key};
            if (DR_PUSH(d->vic, nv, d->vic_cap, e) != 0)
                return DR_ENOMEM;
        }
    }
    if (nv > 1)
        qsort(d->vic, nv, sizeof *d->vic, cmp_vic);
    size_t best_lo = 0, best_hi = 0;
    double best_cost = INFINITY;
    for (size_t lo = 0, hi; lo < nv; lo = hi) {
        const dr_node_t *n = &c->nodes[d->vic[lo].node];
        for (hi = lo; hi < nv && d->vic[hi].node == d->vic[lo].node; hi++)
            ;
        uint64_t free_g = n->gpus_idle, cpu = n->cpu_free, mem = n->mem_free;
        double cost = 0;
        size_t k = lo;
        for (; k < hi && (free_g < g || cpu < q->cpu_milli_per_node || mem < q->mem_mb_per_node);
             k++) {
            const dr_job_t *x = d->run[d->vic[k].run];
            free_g += d->vic[k].gpus;
            cpu += x->alloc.cpu_milli_per_node;
            mem += x->alloc.mem_mb_per_node;
            cost += x->alloc.nslots; /* a gang loses every node it holds */
        }
        if (free_g >= g && cpu >= q->cpu_milli_per_node && mem >= q->mem_mb_per_node &&
            cost < best_cost) {
            best_cost = cost;
            best_lo = lo;
            best_hi = k;
        }
    }
    if (!isfinite(best_cost))
        return DR_ENOSPC;
    int rc = DR_OK;
    for (size_t k = best_lo; k < best_hi && rc == DR_OK; k++) {
        rc = dr_sched_decide_preempt(v->sched, d->run[d->vic[k].run], "making room for a service");
        d->preempted = true;
    }
    return rc == DR_OK ? place_on(d, v, j, r) : rc;
}

/* Classes of waiting jobs, planned in this order. */
enum { C_SERVE = 0, C_DEADLINE, C_OTHER };

static int job_class(const dr_job_t *j)
{
    if (j->kind == DR_KIND_SERVE)
        return C_SERVE;
    return j->deadline > 0 ? C_DEADLINE : C_OTHER;
}

/* Services first (queue order), then deadlines (earliest first: a
 * deadline is a promise fair share does not reorder), then the rest (queue
 * order, which has fair share between accounts). */
static int cmp_order(const void *a, const void *b)
{
    const dr_job_t *x = *(dr_job_t *const *)a, *y = *(dr_job_t *const *)b;
    int cx = job_class(x), cy = job_class(y);
    if (cx != cy)
        return cx < cy ? -1 : 1;
    if (cx == C_DEADLINE && x->deadline != y->deadline)
        return x->deadline < y->deadline ? -1 : 1;
    /* then queue order: priority, fair share, submit, id (sched.h); every
     * job listed is pending, so sched_slot is its place in the queue */
    return x->sched_slot < y->sched_slot ? -1 : (x->sched_slot > y->sched_slot);
}

/* One option for a job: resource k, as it stands or on new pool nodes. */
typedef struct copt {
    int k;
    bool fresh; /* on nodes provisioned for it */
    double start, dur, cost;
    unsigned rank; /* where its type stands in the job's order of preference */
} copt_t;

/* Claim fresh pool nodes for j on pool resource r: their GPUs join the
 * plan at the provision delay. */
static int claim(cres_t *r, const dr_job_t *j)
{
    uint32_t nn = pool_nodes_for(r, j);
    r->claim += nn;
    r->cloud_left -= nn;
    size_t before = r->nslot;
    int rc = add_slots(r, r->delay_s, (size_t)nn * r->gpn);
    for (size_t i = before; rc == DR_OK && i < r->nslot; i++)
        heap_up(r->slot, i);
    return rc;
}

/* Is option o better than the best so far (b) for minimising cost, with
 * the earliest finish breaking ties? */
static bool cheaper(const copt_t *o, const copt_t *b)
{
    if (b->k < 0)
        return true;
    if (o->rank != b->rank) /* the user's order of preference first */
        return o->rank < b->rank;
    if (o->cost != b->cost)
        return o->cost < b->cost;
    return o->start + o->dur < b->start + b->dur;
}

static bool sooner(const copt_t *o, const copt_t *b)
{
    if (b->k < 0)
        return true;
    if (o->rank != b->rank)
        return o->rank < b->rank;
    double fo = o->start + o->dur, fb = b->start + b->dur;
    if (fo != fb)
        return fo < fb;
    return o->cost < b->cost;
}

/* Choose where j goes.  Returns the option (k < 0: nowhere, or - when
 * !late_ok - nowhere on time); *alt: the option that would start it now in
 * time when the one chosen waits for cheaper GPUs (k < 0 if none). */
static copt_t choose(cpol_t *d, const dr_sched_view_t *v, const dr_job_t *j, bool late_ok,
                     copt_t *alt)
{
    *alt = (copt_t){-1, false, 0, 0, 0, 0};
    const dr_cluster_t *c = v->cluster;
    uint32_t g = job_gpus(j);
    /* the types it runs on that its account's limits leave room on now */
    dr_typemask_t run = dr_perf_runnable(v->perf, c, j) & dr_sched_account_types(v->sched, j);
    copt_t opts[4 * DR_MAX_GPU_TYPES];
    size_t no = 0;
    bool onprem_possible = false;
    double fastest = INFINITY;
    double w = remaining_work(d, v, j); /* the same on every type: estimated once */
    for (size_t k = 0; k < d->nres; k++) {
        cres_t *r = &d->res[k];
        if (!(run >> r->type & 1) || !shape_ok(r, j))
            continue;
        double dur = time_on(v, j, w, (unsigned)r->type);
        if (!isfinite(dur))
            continue;
        if (dur < fastest)
            fastest = dur;
        double cost = r->price * g * dur / 3600.0;
        onprem_possible |= r->pool < 0;
        double s = start_on(r, g);
        unsigned rank = dr_req_pref_rank(&j->req, (unsigned)r->type);
        if (isfinite(s))
            opts[no++] = (copt_t){(int)k, false, s, dur, cost, rank};
        if (r->pool >= 0 && r->cloud_left >= pool_nodes_for(r, j))
            opts[no++] = (copt_t){(int)k, true, r->delay_s, dur, cost, rank};
    }
    copt_t best = {-1, false, 0, 0, 0, 0};
    int cls = job_class(j);
    if (cls == C_SERVE) {
        /* whatever comes first: services are started as soon as can be */
        for (size_t i = 0; i < no; i++)
            if (sooner(&opts[i], &best))
                best = opts[i];
        return best;
    }
    double horizon; /* seconds from now by which it should finish */
    if (cls == C_DEADLINE)
        horizon = dr_time_to_s(j->deadline - v->now);
    else if (j->req.pref[0])
        horizon = INFINITY; /* no deadline, an order of preference: the user's order decides */
    else if (d->soft > 0)
        horizon = dr_time_to_s(j->submit - v->now) + d->soft * fastest;
    else
        horizon = -1;
    /* deadline-less jobs stay on-prem unless only a pool can host them */
    bool cloud_ok = cls == C_DEADLINE || !onprem_possible;
    if (cls == C_OTHER && d->soft <= 0 && !j->req.pref[0]) {
        for (size_t i = 0; i < no; i++)
            if (d->res[opts[i].k].pool < 0 && opts[i].start <= EPS_S && cheaper(&opts[i], &best))
                best = opts[i];
        if (best.k < 0)
            for (size_t i = 0; i < no; i++)
                if ((d->res[opts[i].k].pool < 0 || cloud_ok) && !opts[i].fresh &&
                    (best.k < 0 || opts[i].start < best.start))
                    best = opts[i];
        return best;
    }
    /* on time: on-prem first, then nodes already provisioned, then new
     * ones.  In each tier the cheapest option that starts now, unless
     * waiting for a busy type saves at least `gain` of it: a few percent
     * are not worth the risk of being pushed back by later, more urgent
     * jobs (and the wait keeps the scarce type from them). */
    for (int tier = 0; tier < 3 && best.k < 0; tier++) {
        copt_t now = {-1, false, 0, 0, 0, 0}, later = {-1, false, 0, 0, 0, 0};
        for (size_t i = 0; i < no; i++) {
            const copt_t *o = &opts[i];
            bool pool = d->res[o->k].pool >= 0;
            if ((tier == 0 && pool) || (tier > 0 && (!pool || !cloud_ok)) ||
                (tier == 1 && o->fresh) || (tier == 2 && !o->fresh))
                continue;
            double f = o->start + o->dur;
            bool waits = o->start > EPS_S && !o->fresh;
            if (f > horizon || (waits && f > horizon * (1 - d->safety)))
                continue;
            copt_t *b = waits ? &later : &now;
            if (cheaper(o, b))
                *b = *o;
        }
        best = now;
        if (later.k >= 0 && (now.k < 0 || later.cost <= (1 - d->gain) * now.cost)) {
            best = later;
            *alt = now;
        }
    }
    if (best.k >= 0 || !late_ok)
        return best;
    /* late whatever it does: finish as soon as possible without renting
     * new nodes for it (unless nothing else can ever host it) */
    for (size_t i = 0; i < no; i++) {
        const copt_t *o = &opts[i];
        bool pool = d->res[o->k].pool >= 0;
        if ((pool && !cloud_ok) || (o->fresh && onprem_possible))
            continue;
        if (d->late_cheap ? cheaper(o, &best) : sooner(o, &best))
            best = *o;
    }
    return best;
}

/* A service starts now if it can: on the cheapest allowed on-prem type
 * with room, else on pool nodes already up, else where jobs that can wait
 * are preempted for it.  DR_OK with *started set accordingly. */
static int start_service(cpol_t *d, const dr_sched_view_t *v, dr_job_t *j, bool *started)
{
    dr_typemask_t run =
        dr_perf_runnable(v->perf, v->cluster, j) & dr_sched_account_types(v->sched, j);
    bool tried[2 * DR_MAX_GPU_TYPES] = {false};
    *started = false;
    for (int pass = 0; pass < 3; pass++) {
        for (;;) {
            int pick = -1;
            for (size_t k = 0; k < d->nres; k++) {
                const cres_t *r = &d->res[k];
                if (tried[k] || !(run >> r->type & 1) || !shape_ok(r, j) ||
                    (r->pool >= 0) != (pass == 1))
                    continue;
                /* the user's order of preference, then the price */
                if (pick >= 0) {
                    unsigned rk = dr_req_pref_rank(&j->req, (unsigned)r->type),
                             rp = dr_req_pref_rank(&j->req, (unsigned)d->res[pick].type);
                    if (rk > rp || (rk == rp && r->price >= d->res[pick].price))
                        continue;
                }
                pick = (int)k;
            }
            if (pick < 0)
                break;
            tried[pick] = true;
            cres_t *r = &d->res[pick];
            int rc = pass < 2 ? place_on(d, v, j, r) : preempt_for(d, v, j, r);
            if (rc == DR_OK) {
                book(r, job_gpus(j), 0, remaining_s(d, v, j, (unsigned)r->type));
                *started = true;
                return DR_OK;
            }
            if (rc != DR_ENOSPC)
                return rc;
        }
        memset(tried, 0, sizeof tried);
        if (pass == 1 && !d->preempt)
            break;
    }
    return DR_OK;
}

/* Plan one waiting job and start it if its plan says now.  A job with a
 * deadline it can no longer meet is set aside (*deferred) on the first
 * round, to be planned after the jobs that can still make theirs. */

/* Why j waits for the GPUs of option o although alt (if any) could start
 * it now, in the user's words (dr_sched_decide_wait). */
static int note_wait(cpol_t *d, const dr_sched_view_t *v, dr_job_t *j, const copt_t *o,
                     const copt_t *alt, double start_s)
{
    const dr_cluster_t *c = v->cluster;
    char why[DR_WAIT_NOTE_MAX];
    int n = snprintf(why, sizeof why, "waiting for %s (free in ~%.0f min)",
                     c->types[d->res[o->k].type].name, ceil(start_s / 60));
    if (alt->k >= 0 && n > 0 && (size_t)n < sizeof why)
        snprintf(why + n, sizeof why - (size_t)n, ": saves $%.2f against %s now",
                 alt->cost - o->cost, c->types[d->res[alt->k].type].name);
    else if (n > 0 && (size_t)n < sizeof why)
        snprintf(why + n, sizeof why - (size_t)n, ": the cheapest type that meets its %s",
                 j->deadline > 0 ? "deadline" : "soft deadline");
    return dr_sched_decide_wait(v->sched, j, why);
}

static int plan_job(cpol_t *d, const dr_sched_view_t *v, dr_job_t *j, bool late_ok, bool *deferred)
{
    *deferred = false;
    uint32_t g = job_gpus(j);
    if (g == 0) {
        int rc = dr_policy_try_start(v, j); /* CPU-only: nothing to price */
        return rc == DR_ENOSPC ? DR_OK : rc;
    }
    if (j->kind == DR_KIND_SERVE) {
        bool started;
        int rc = start_service(d, v, j, &started);
        if (rc != DR_OK || started)
            return rc;
    }
    copt_t alt;
    copt_t o = choose(d, v, j, late_ok, &alt);
    if (o.k < 0) {
        *deferred = !late_ok;
        return DR_OK;
    }
    cres_t *r = &d->res[o.k];
    int rc = o.fresh ? claim(r, j) : DR_OK;
    if (rc != DR_OK)
        return rc;
    double s = start_on(r, g);
    bool started = false;
    if (s <= EPS_S) {
        rc = place_on(d, v, j, r);
        started = rc == DR_OK;
        if (rc == DR_ENOSPC)
            rc = DR_OK;
    }
    book(r, g, s, o.dur);
    if (!started && r->pool >= 0)
        r->need_nodes += pool_nodes_for(r, j);
    if (rc == DR_OK && !started && s > EPS_S && !o.fresh)
        rc = note_wait(d, v, j, &o, &alt, s);
    return rc;
}

/* After planning: provision the nodes claimed, note when, and release pool
 * nodes no planned job needs (idle ones after `idle` seconds, nodes still
 * provisioning at once). */
static int settle_pools(cpol_t *d, const dr_sched_view_t *v, dr_time_t *wake_at)
{
    dr_cluster_t *c = v->cluster;
    for (size_t k = 0; k < d->nres; k++) {
        cres_t *r = &d->res[k];
        if (r->pool < 0)
            continue;
        const dr_pool_t *pl = &c->pools[r->pool];
        if (r->claim > 0) {
            int rc = dr_sched_decide_provision(v->sched, (uint32_t)r->pool, r->claim);
            if (rc != DR_OK)
                return rc;
        }
        uint32_t keep = r->need_nodes;
        /* idle nodes that are up serve the plan first, then those coming */
        for (int phase = 0; phase < 2; phase++)
            for (uint32_t q = 0; q < pl->max_nodes; q++) {
                uint32_t i = pl->first_node + q;
                const dr_node_t *n = &c->nodes[i];
                if (n->state != DR_NODE_PROVISIONING)
                    d->prov_at[i] = DR_TIME_NEVER;
                else if (d->prov_at[i] == DR_TIME_NEVER)
                    d->prov_at[i] = v->now;
                bool idle_up = n->state == DR_NODE_UP && n->njobs == 0;
                if (phase == 0 && !idle_up)
                    d->idle_since[i] = DR_TIME_NEVER;
                if ((phase == 0 && !idle_up) || (phase == 1 && n->state != DR_NODE_PROVISIONING))
                    continue;
                if (keep > 0) {
                    keep--;
                    if (phase == 0)
                        d->idle_since[i] = DR_TIME_NEVER;
                    continue;
                }
                if (phase == 0) {
                    if (d->idle_since[i] == DR_TIME_NEVER)
                        d->idle_since[i] = v->now;
                    dr_time_t due = d->idle_since[i] + dr_time_from_s(d->idle_s);
                    if (due > v->now) {
                        if (due < *wake_at)
                            *wake_at = due;
                        continue;
                    }
                }
                int rc = dr_sched_decide_release(v->sched, i);
                if (rc != DR_OK)
                    return rc;
                d->prov_at[i] = d->idle_since[i] = DR_TIME_NEVER;
            }
    }
    return DR_OK;
}

static int cpol_pass(void *state, const dr_sched_view_t *v, dr_time_t *wake_at, dr_err_t *err)
{
    cpol_t *d = state;
    const dr_cluster_t *c = v->cluster;
    *wake_at = DR_TIME_NEVER;
    d->preempted = false;
    dr_size_est_learn(&d->est, v);
    if (d->nnodes != c->nnodes) {
        dr_time_t *pa = realloc(d->prov_at, (c->nnodes ? c->nnodes : 1) * sizeof *pa);
        if (pa)
            d->prov_at = pa;
        dr_time_t *is =
            pa ? realloc(d->idle_since, (c->nnodes ? c->nnodes : 1) * sizeof *is) : NULL;
        if (is)
            d->idle_since = is;
        if (!pa || !is)
            return dr_err_set(err, DR_ENOMEM, "cost: out of memory");
        for (size_t i = d->nnodes; i < c->nnodes; i++)
            d->prov_at[i] = d->idle_since[i] = DR_TIME_NEVER;
        d->nnodes = c->nnodes;
    }
    /* the running set as it was before any decision of this pass */
    if (dr_grow((void **)&d->run, &d->run_cap, v->nrunning + 1, sizeof *d->run) != 0 ||
        dr_grow((void **)&d->order, &d->order_cap, v->npending + 1, sizeof *d->order) != 0 ||
        dr_grow((void **)&d->late, &d->late_cap, v->npending + 1, sizeof *d->late) != 0)
        return dr_err_set(err, DR_ENOMEM, "cost: out of memory");
    d->nrun = v->nrunning;
    if (v->nrunning)
        memcpy(d->run, v->running, v->nrunning * sizeof *d->run);
    int rc = build(d, v);
    size_t n = 0;
    for (size_t i = 0; i < v->npending; i++)
        if (!v->pending[i]->array_throttle || !dr_sched_throttled(v->sched, v->pending[i]))
            d->order[n++] = v->pending[i];
    if (n > 1)
        qsort(d->order, n, sizeof *d->order, cmp_order);
    /* a job far down the plan starts after all the GPUs there are have
     * been booked by the jobs before it: twice the GPUs bounds the work of
     * a pass on a long queue */
    uint64_t gpus = 0;
    for (size_t k = 0; k < d->nres; k++)
        gpus += d->res[k].nslot + (uint64_t)d->res[k].cloud_left * d->res[k].gpn;
    if (n > 2 * gpus + 64)
        n = 2 * gpus + 64;
    /* jobs that are late whatever they do are planned after the deadline
     * jobs that can still make it, before the deadline-less ones */
    size_t nlate = 0, i = 0;
    for (; i < n && rc == DR_OK; i++) {
        dr_job_t *j = d->order[i];
        if (job_class(j) == C_OTHER && nlate > 0)
            break;
        bool deferred = false;
        if (j->state == DR_JOB_PENDING)
            rc = plan_job(d, v, j, job_class(j) != C_DEADLINE, &deferred);
        if (deferred)
            d->late[nlate++] = j;
    }
    for (size_t k = 0; k < nlate && rc == DR_OK; k++) {
        bool deferred;
        rc = plan_job(d, v, d->late[k], true, &deferred);
    }
    for (; i < n && rc == DR_OK; i++) {
        bool deferred;
        if (d->order[i]->state == DR_JOB_PENDING)
            rc = plan_job(d, v, d->order[i], true, &deferred);
    }
    if (rc == DR_OK && d->cloud)
        rc = settle_pools(d, v, wake_at);
    dr_sched_count_considered(v->sched, n);
    dr_time_t replan = dr_time_add(v->now, DR_NSEC_PER_SEC);
    if (d->preempted && replan < *wake_at)
        *wake_at = replan; /* re-plan the jobs preempted */
    return rc == DR_OK
               ? DR_OK
               : dr_err_set(err, rc, "cost: applying decisions failed: %s", dr_strerror(rc));
}

const dr_policy_ops_t dr_policy_cost = {
    .name = "cost",
    .doc = "cost-aware: cheapest GPU type that meets each job's deadline or SLO, elastic cloud "
           "only for deadlines on-prem cannot meet; options soft=X, safety=X, idle=S, "
           "preempt=0|1, cloud=0|1",
    .oracle = false,
    .create = cpol_create,
    .pass = cpol_pass,
    .destroy = cpol_destroy,
};
