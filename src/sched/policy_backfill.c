/* policy_backfill.c - EASY backfilling (Lifka 1995; Slurm's sched/backfill
 * with one reservation).
 *
 * Jobs start in queue order until one does not fit: that job (the head)
 * gets a reservation - the earliest time its request fits if running jobs
 * end at their walltime limits (its "shadow time"), on the nodes that free
 * up first.  Jobs behind it may then start out of order if they fit now and
 * either end (by their limit) before the shadow time, or avoid the reserved
 * nodes.  So backfilling never delays the head, and the head never waits
 * for jobs behind it.
 *
 * Cost of a pass: the shadow walk visits running jobs in expected-end order
 * only until the head fits (the skip list in sched/endq.c), and each
 * candidate costs O(1) to reject when nothing of its shape is free (a quick
 * capacity check plus a per-pass memo of shapes that already failed), or
 * O(log nodes) to place.  So a pass is linear in the queue length.
 *
 * Options: depth=N  test at most N jobs behind the head (0 = all; Slurm's
 * bf_max_job_test). */
#include <stdlib.h>
#include <string.h>

#include "core/cluster_index.h"
#include "drover/placement.h"
#include "drover/sched.h"
#include "drover/util.h"
#include "sched/policy_util.h"

typedef struct bf {
    size_t depth;
    /* scratch sized to the cluster */
    size_t nnodes, ngpus;
    uint16_t *fut_gpu; /* future free milli per GPU (valid on touched nodes) */
    uint32_t *fut_cpu;
    uint64_t *fut_mem;
    uint8_t *touched, *ready;
    uint16_t *contrib; /* idle GPUs a ready node contributes (--gpus=N heads) */
    uint32_t *touched_list, *ready_list;
    size_t ntouched, nready;
    /* reservation */
    uint32_t *resv;
    size_t nresv, resv_cap;
    /* what the last pass left: the blocked head, its shadow time, and the
     * ledger generation; if nothing was freed since and the head is the
     * same, only newly queued jobs need a look */
    const dr_job_t *last_head;
    dr_time_t last_shadow;
    uint64_t last_gen;
    /* per-pass memo of request shapes that failed (open addressing) */
    uint64_t memo[1024];
    uint16_t memo_used[1024];
    size_t nmemo;
} bf_t;

static int bf_opt(void *ud, const char *k, const char *val, dr_err_t *err)
{
    bf_t *b = ud;
    if (dr_streq_ci(k, "depth")) {
        uint64_t d;
        if (dr_parse_u64(val, &d) != 0)
            return dr_err_set(err, DR_EINVAL, "depth: '%s' is not a count", val);
        b->depth = (size_t)d;
        return DR_OK;
    }
    return dr_err_set(err, DR_EINVAL, "unknown option '%s' (known: depth)", k);
}

static int bf_create(void **state, const char *opts, const dr_policy_env_t *env, dr_err_t *err)
{
    bf_t *b = calloc(1, sizeof *b);
    if (!b)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    int rc = dr_policy_opts_each(opts, bf_opt, b, err);
    if (rc != DR_OK) {
        free(b);
        return rc;
    }
    *state = b;
    return DR_OK;
}

static void bf_free_scratch(bf_t *b)
{
    free(b->fut_gpu);
    free(b->fut_cpu);
    free(b->fut_mem);
    free(b->touched);
    free(b->ready);
    free(b->touched_list);
    free(b->ready_list);
    free(b->contrib);
    b->contrib = NULL;
    b->fut_gpu = NULL;
    b->fut_cpu = NULL;
    b->fut_mem = NULL;
    b->touched = b->ready = NULL;
    b->touched_list = b->ready_list = NULL;
}

static void bf_destroy(void *state)
{
    bf_t *b = state;
    if (!b)
        return;
    bf_free_scratch(b);
    free(b->resv);
    free(b);
}

static int bf_size(bf_t *b, const dr_cluster_t *c)
{
    if (b->nnodes == c->nnodes && b->ngpus == c->ngpus && b->fut_gpu)
        return DR_OK;
    bf_free_scratch(b);
    size_t nn = c->nnodes ? c->nnodes : 1, ng = c->ngpus ? c->ngpus : 1;
    b->fut_gpu = malloc(ng * sizeof *b->fut_gpu);
    b->fut_cpu = malloc(nn * sizeof *b->fut_cpu);
    b->fut_mem = malloc(nn * sizeof *b->fut_mem);
    b->touched = calloc(nn, 1);
    b->ready = calloc(nn, 1);
    b->touched_list = calloc(nn, sizeof *b->touched_list);
    b->ready_list = calloc(nn, sizeof *b->ready_list);
    b->contrib = calloc(nn, sizeof *b->contrib);
    if (!b->contrib || !b->fut_gpu || !b->fut_cpu || !b->fut_mem || !b->touched || !b->ready ||
        !b->touched_list || !b->ready_list)
        return DR_ENOMEM;
    b->nnodes = c->nnodes;
    b->ngpus = c->ngpus;
    return DR_OK;
}

/* Does node nd host one per-node share of r in its future state? */
static bool fut_fits(const bf_t *b, const dr_cluster_t *c, uint32_t nd, const dr_job_req_t *r,
                     dr_typemask_t allowed)
{
    const dr_node_t *n = &c->nodes[nd];
    if (n->state != DR_NODE_UP)
        return false;
    if (!b->touched[nd])
        return dr_node_fits(c, n, r) && (!r->gpus_per_node || (allowed >> n->type & 1));
    if (b->fut_cpu[nd] < r->cpu_milli_per_node || b->fut_mem[nd] < r->mem_mb_per_node)
        return false;
    if (r->gpus_per_node == 0)
        return true;
    if (n->ngpus == 0 || !(allowed >> n->type & 1))
        return false;
    uint32_t idle = 0;
    for (uint16_t g = 0; g < n->ngpus; g++) {
        uint16_t f = b->fut_gpu[n->gpu_base + g];
        if (r->gpu_milli < 1000 && f >= r->gpu_milli)
            return true;
        idle += f == 1000;
    }
    if (r->gpu_milli < 1000)
        return false;
    return r->nodes == 0 ? idle >= 1 : idle >= r->gpus_per_node;
}

static uint32_t fut_idle(const bf_t *b, const dr_cluster_t *c, uint32_t nd)
{
    const dr_node_t *n = &c->nodes[nd];
    if (!b->touched[nd])
        return n->gpus_idle;
    uint32_t idle = 0;
    for (uint16_t g = 0; g < n->ngpus; g++)
        idle += b->fut_gpu[n->gpu_base + g] == 1000;
    return idle;
}

typedef struct tally {
    uint64_t have[DR_MAX_GPU_TYPES + 1]; /* nodes (or idle GPUs for --gpus=N) */
} tally_t;

/* Count node nd towards the head's request (again, if more of it freed up:
 * a --gpus=N head counts idle GPUs, so a node can contribute more later). */
static void mark_ready(bf_t *b, const dr_cluster_t *c, uint32_t nd, const dr_job_req_t *r,
                       tally_t *t)
{
    int ti = r->gpus_per_node ? c->nodes[nd].type : DR_MAX_GPU_TYPES;
    uint16_t worth = r->nodes == 0 ? (uint16_t)fut_idle(b, c, nd) : 1;
    if (!b->ready[nd]) {
        b->ready[nd] = 1;
        b->ready_list[b->nready++] = nd;
        b->contrib[nd] = 0;
    }
    t->have[ti] += worth - b->contrib[nd];
    b->contrib[nd] = worth;
}

static bool satisfied(const dr_job_req_t *r, const tally_t *t, int ti)
{
    return r->nodes == 0 ? t->have[ti] >= r->gpus_per_node : t->have[ti] >= r->nodes;
}

/* Reserve the ready nodes of type ti (in readiness order, currently-free
 * first) for the head. */
static int reserve(bf_t *b, const dr_cluster_t *c, const dr_job_req_t *r, int ti)
{
    b->nresv = 0;
    uint64_t need = r->nodes == 0 ? r->gpus_per_node : r->nodes, got = 0;
    for (size_t i = 0; i < b->nready && got < need; i++) {
        uint32_t nd = b->ready_list[i];
        int nt = r->gpus_per_node ? c->nodes[nd].type : DR_MAX_GPU_TYPES;
        if (nt != ti)
            continue;
        if (DR_PUSH(b->resv, b->nresv, b->resv_cap, nd) != 0)
            return DR_ENOMEM;
        got += r->nodes == 0 ? fut_idle(b, c, nd) : 1;
    }
    return DR_OK;
}

/* Find the head's shadow time and the nodes to reserve for it. */
static int shadow(bf_t *b, const dr_sched_view_t *v, const dr_job_t *head, dr_time_t *out)
{
    dr_cluster_t *c = v->cluster;
    const dr_job_req_t *r = &head->req;
    dr_typemask_t allowed = r->gpus_per_node ? dr_perf_runnable(v->perf, c, head) : 0;
    tally_t t;
    memset(&t, 0, sizeof t);
    *out = DR_TIME_NEVER;
    b->nresv = 0;
    int rc = DR_OK, found = -1;
    /* nodes that fit now */
    for (size_t i = 0; i < c->ntypes + 1 && found < 0; i++) {
        int ti = i < c->ntypes ? (int)i : DR_MAX_GPU_TYPES;
        bool wanted = r->gpus_per_node ? ti != DR_MAX_GPU_TYPES && (allowed >> ti & 1)
                                       : ti == DR_MAX_GPU_TYPES;
        if (!wanted)
            continue;
        dr_segq_t q = {.cpu = r->cpu_milli_per_node};
        if (r->gpus_per_node && r->gpu_milli < 1000)
            q.milli = (uint16_t)r->gpu_milli;
        else if (r->gpus_per_node)
            q.idle = (uint16_t)(r->nodes == 0 ? 1 : r->gpus_per_node);
        size_t from = 0;
        uint32_t nd;
        while (!satisfied(r, &t, ti) &&
               (nd = dr_segtree_find(&c->index->tree[ti], from, &q, &from)) != DR_NIL)
            if (fut_fits(b, c, nd, r, allowed))
                mark_ready(b, c, nd, r, &t);
        if (satisfied(r, &t, ti)) {
            found = ti; /* fits now after all */
            *out = v->now;
        }
    }
    /* walk running jobs by expected end, freeing their resources */
    dr_endq_iter_t it;
    dr_endq_first(v->by_end, &it);
    dr_job_t *j;
    dr_time_t e;
    while (found < 0 && (j = dr_endq_next(&it, &e))) {
        const dr_alloc_t *a = &j->alloc;
        for (uint32_t s = 0; s < a->nslots; s++) {
            uint32_t nd = a->slots[s].node;
            const dr_node_t *n = &c->nodes[nd];
            bool first = s == 0 || a->slots[s - 1].node != nd;
            if (!b->touched[nd]) {
                b->touched[nd] = 1;
                b->touched_list[b->ntouched++] = nd;
                memcpy(&b->fut_gpu[n->gpu_base], &c->gpu_free[n->gpu_base],
                       n->ngpus * sizeof *b->fut_gpu);
                b->fut_cpu[nd] = n->cpu_free;
                b->fut_mem[nd] = n->mem_free;
            }
            if (first) {
                b->fut_cpu[nd] += a->cpu_milli_per_node;
                b->fut_mem[nd] += a->mem_mb_per_node;
            }
            if (a->slots[s].gpu != DR_NO_GPU)
                b->fut_gpu[n->gpu_base + a->slots[s].gpu] += a->slots[s].milli;
        }
        for (uint32_t s = 0; s < a->nslots && found < 0; s++) {
            uint32_t nd = a->slots[s].node;
            if (s > 0 && a->slots[s - 1].node == nd)
                continue;
            const dr_node_t *n = &c->nodes[nd];
            int ti = r->gpus_per_node ? n->type : DR_MAX_GPU_TYPES;
            if (b->ready[nd] && r->nodes != 0)
                continue; /* already counted; a gang node counts once */
            if (fut_fits(b, c, nd, r, allowed)) {
                mark_ready(b, c, nd, r, &t);
                if (satisfied(r, &t, ti)) {
                    found = ti;
                    *out = e < v->now ? v->now : e;
                }
            }
        }
    }
    if (found >= 0)
        rc = reserve(b, c, r, found);
    for (size_t i = 0; i < b->ntouched; i++)
        b->touched[b->touched_list[i]] = 0;
    for (size_t i = 0; i < b->nready; i++)
        b->ready[b->ready_list[i]] = 0;
    b->ntouched = b->nready = 0;
    return rc;
}

/* --- per-pass memo of shapes that did not fit --- */
static uint64_t shape_key(const dr_job_req_t *r, dr_typemask_t allowed, bool is_short)
{
    uint64_t h = 1469598103934665603ULL;
    uint64_t parts[7] = {r->nodes, r->gpus_per_node,      r->gpu_milli,
                         allowed,  r->cpu_milli_per_node, r->mem_mb_per_node,
                         is_short};
    for (int i = 0; i < 7; i++)
        h = (h ^ parts[i]) * 1099511628211ULL;
    return h | 1; /* 0 means empty */
}

static bool memo_has(const bf_t *b, uint64_t k)
{
    for (size_t i = k & 1023, n = 0; n < 1024; i = (i + 1) & 1023, n++) {
        if (b->memo[i] == k)
            return true;
        if (!b->memo[i])
            return false;
    }
    return false;
}

static void memo_add(bf_t *b, uint64_t k)
{
    if (b->nmemo >= 512)
        return; /* memo full: just stop remembering */
    size_t i = k & 1023;
    while (b->memo[i])
        i = (i + 1) & 1023;
    b->memo[i] = k;
    b->memo_used[b->nmemo++] = (uint16_t)i;
}

static void memo_clear(bf_t *b)
{
    for (size_t i = 0; i < b->nmemo; i++)
        b->memo[b->memo_used[i]] = 0;
    b->nmemo = 0;
}

static void hide_resv(bf_t *b, dr_cluster_t *c, bool hide)
{
    for (size_t i = 0; i < b->nresv; i++)
        dr_cluster_hide(c, b->resv[i], hide);
}

/* Try the candidates jobs[0..n) (in queue order, behind the head) against
 * the reservation: a job that ends (by its limit) before the shadow time
 * cannot delay the head; any other job must stay off the reserved nodes. */
static int backfill(bf_t *b, const dr_sched_view_t *v, dr_job_t *const *jobs, size_t n,
                    dr_time_t sh, size_t *considered)
{
    bool hidden = false;
    int rc = DR_OK;
    for (size_t k = 0; k < n && rc == DR_OK; k++) {
        dr_job_t *j = jobs[k];
        ++*considered;
        if (j->array_throttle && dr_sched_throttled(v->sched, j))
            continue;
        bool is_short = sh == DR_TIME_NEVER || (j->time_limit > 0 && v->now + j->time_limit <= sh);
        dr_typemask_t allowed = j->req.gpus_per_node ? dr_perf_runnable(v->perf, v->cluster, j) : 0;
        if (j->req.gpus_per_node && !allowed)
            continue;
        uint64_t key = shape_key(&j->req, allowed, is_short);
        if (memo_has(b, key))
            continue;
        /* cheap filters first: hiding or unhiding the reserved nodes costs
         * O(reserved x log nodes), so toggle only for a real attempt (with
         * the nodes unhidden the quick check is a superset test) */
        if (!hidden && !dr_place_fits_quick(v->cluster, &j->req, allowed)) {
            memo_add(b, key);
            continue;
        }
        if (is_short == hidden)
            hide_resv(b, v->cluster, hidden = !is_short);
        if (hidden && !dr_place_fits_quick(v->cluster, &j->req, allowed)) {
            memo_add(b, key);
            continue;
        }
        rc = dr_policy_try_start(v, j);
        if (rc == DR_ENOSPC) {
            memo_add(b, key);
            rc = DR_OK;
        }
    }
    if (hidden)
        hide_resv(b, v->cluster, false);
    memo_clear(b);
    return rc;
}

static int bf_pass(void *state, const dr_sched_view_t *v, dr_time_t *wake_at, dr_err_t *err)
{
    bf_t *b = state;
    *wake_at = DR_TIME_NEVER;
    if (bf_size(b, v->cluster) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "backfill: out of memory");
    size_t considered = 0;
    int rc = DR_OK;
    if (v->npending && v->pending[0] == b->last_head && v->cluster->freed_gen == b->last_gen) {
        /* Incremental pass.  Nothing was freed since the last pass, so the
         * head is still blocked, its reservation stands, and every job that
         * failed then fails now; only fresh jobs behind the head can start. */
        size_t base = v->pending[0]->sched_slot, from = 0, n = v->nfresh;
        while (from < n && v->fresh[from]->sched_slot <= base)
            from++;
        while (b->depth && n > from && v->fresh[n - 1]->sched_slot - base > b->depth)
            n--;
        rc = backfill(b, v, v->fresh + from, n - from, b->last_shadow, &considered);
    } else {
        size_t i = 0;
        b->last_head = NULL;
        for (; i < v->npending; i++) {
            dr_job_t *j = v->pending[i];
            considered++;
            if (dr_sched_throttled(v->sched, j))
                continue;
            rc = dr_policy_try_start(v, j);
            if (rc == DR_ENOSPC)
                break;
            if (rc != DR_OK)
                return dr_err_set(err, rc, "backfill: starting job %llu failed",
                                  (unsigned long long)j->id);
        }
        rc = DR_OK;
        if (i < v->npending) {
            dr_time_t sh;
            if (shadow(b, v, v->pending[i], &sh) != DR_OK)
                return dr_err_set(err, DR_ENOMEM, "backfill: out of memory");
            size_t end = v->npending;
            if (b->depth && i + 1 + b->depth < end)
                end = i + 1 + b->depth;
            rc = backfill(b, v, v->pending + i + 1, end - (i + 1), sh, &considered);
            /* jobs before the head all started, so next pass it is first */
            b->last_head = v->pending[i];
            b->last_shadow = sh;
        }
    }
    b->last_gen = v->cluster->freed_gen; /* after our own unhiding */
    dr_sched_count_considered(v->sched, considered);
    if (rc != DR_OK)
        return dr_err_set(err, rc, "backfill: starting a job failed");
    return DR_OK;
}

const dr_policy_ops_t dr_policy_backfill = {
    .name = "backfill",
    .doc = "EASY backfill: queue order, and later jobs jump ahead if they cannot delay the "
           "first blocked job (uses walltime limits); option depth=N",
    .oracle = false,
    .create = bf_create,
    .pass = bf_pass,
    .destroy = bf_destroy,
};
