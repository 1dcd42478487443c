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
 * O(log nodes) to place.  So a pass is linear in the queue length.  The
 * scan reads a dense array of (job, limit, request class) entries that the
 * next full pass reuses for the jobs still queued, and answers the type
 * mask and memo key once per class, so rejecting a candidate touches 24
 * bytes rather than its job record (a cache miss each in a long queue).
 *
 * Options: depth=N  test at most N jobs behind the head (0 = all; Slurm's
 * bf_max_job_test). */
#include <stdlib.h>
#include <string.h>

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
    uint64_t last_head; /* id of the queue head at the last full pass, if have_head */
    bool have_head;
    dr_time_t last_shadow;
    uint64_t last_gen;
    /* per-pass memo of request shapes that failed (open addressing) */
    uint64_t memo[1024];
    uint16_t memo_used[1024];
    size_t nmemo;
    /* request classes: the request fields that shape_key() and
     * dr_perf_runnable() read, interned; what they answer is worked out
     * once per class per pass (the cluster and perf table stand still
     * within a pass) */
    struct rclass *cls;
    uint32_t *cls_slot; /* open addressing, class index + 1 (0 = empty) */
    size_t ncls;
    uint64_t pass;
    /* the candidates of the last full pass, dense (job, limit, class), in
     * queue order; the next full pass reuses the entries of jobs that stayed
     * queued, so a scan touches 24 bytes per job instead of its record */
    struct cand *cand, *prev;
    size_t ncand, nprev, cand_cap;
    /* jobs queued since the candidates were taken: an entry for one of
     * them (re-queued, or a new job at a reused address) is stale */
    const dr_job_t *queued[256];
    uint64_t queued_bloom[4];
    size_t nqueued;
    bool queued_overflow;
    struct cand *inc; /* candidates of an incremental pass */
    size_t inc_cap;
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
    free(b->cls);
    free(b->cls_slot);
    free(b->cand);
    free(b->prev);
    free(b->inc);
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
        dr_ledger_q_t q = {.cpu = r->cpu_milli_per_node};
        if (r->gpus_per_node && r->gpu_milli < 1000)
            q.milli = (uint16_t)r->gpu_milli;
        else if (r->gpus_per_node)
            q.idle = (uint16_t)(r->nodes == 0 ? 1 : r->gpus_per_node);
        size_t from = 0;
        uint32_t nd;
        int lt = ti == DR_MAX_GPU_TYPES ? DR_LEDGER_ALL : ti;
        while (!satisfied(r, &t, ti) && (nd = dr_ledger_find(c, lt, &from, &q)) != DR_LEDGER_NIL)
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
    uint64_t parts[8] = {
        r->nodes,           r->gpus_per_node, r->gpu_milli, allowed, r->cpu_milli_per_node,
        r->mem_mb_per_node, is_short,         r->nodeset};
    for (int i = 0; i < 8; i++)
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

static bool memo_add(bf_t *b, uint64_t k)
{
    if (b->nmemo >= 512)
        return false; /* memo full: just stop remembering */
    size_t i = k & 1023;
    while (b->memo[i])
        i = (i + 1) & 1023;
    b->memo[i] = k;
    b->memo_used[b->nmemo++] = (uint16_t)i;
    return true;
}

static void memo_clear(bf_t *b)
{
    for (size_t i = 0; i < b->nmemo; i++)
        b->memo[b->memo_used[i]] = 0;
    b->nmemo = 0;
}

/* --- request classes --- */
#define CLS_CAP  4096u
#define CLS_NONE UINT32_MAX

typedef struct rclass {
    uint32_t nodes, gpus_per_node, gpu_milli, cpu_milli_per_node, perf_class, nodeset;
    dr_typemask_t types;
    uint64_t min_gpu_mem_bits, mem_mb_per_node;
    uint64_t pass; /* allowed and key are from this pass */
    dr_typemask_t allowed;
    uint64_t key[2]; /* shape_key(..., is_short = false, true) */
    bool in_memo[2]; /* key[i] is in the memo (so stays there this pass) */
} rclass_t;

/* One candidate: its job and what the scan needs of it. */
enum { CAND_THROTTLE = 1 }; /* an array task with a throttle */
typedef struct cand {
    dr_job_t *job;
    dr_time_t limit;
    uint32_t cls; /* CLS_NONE: no class (table full), read the job */
    uint32_t flags;
} cand_t;

static bool cls_match(const rclass_t *e, const dr_job_t *j, uint64_t mb)
{
    const dr_job_req_t *r = &j->req;
    return e->nodes == r->nodes && e->gpus_per_node == r->gpus_per_node &&
           e->gpu_milli == r->gpu_milli && e->types == r->types && e->min_gpu_mem_bits == mb &&
           e->cpu_milli_per_node == r->cpu_milli_per_node &&
           e->mem_mb_per_node == r->mem_mb_per_node && e->perf_class == j->perf_class &&
           e->nodeset == r->nodeset;
}

/* The class of j's request, added if new; CLS_NONE if the table is full. */
static uint32_t cls_of(bf_t *b, const dr_job_t *j)
{
    if (!b->cls) {
        b->cls = malloc(CLS_CAP * sizeof *b->cls);
        b->cls_slot = calloc(2 * CLS_CAP, sizeof *b->cls_slot);
        if (!b->cls || !b->cls_slot) {
            free(b->cls);
            free(b->cls_slot);
            b->cls = NULL;
            b->cls_slot = NULL;
            return CLS_NONE;
        }
    }
    const dr_job_req_t *r = &j->req;
    uint64_t mb;
    memcpy(&mb, &r->min_gpu_mem_gb, sizeof mb);
    uint64_t parts[9] = {r->nodes,  r->gpus_per_node,      r->gpu_milli,       r->types,
                         mb,        r->cpu_milli_per_node, r->mem_mb_per_node, j->perf_class,
                         r->nodeset};
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 9; i++)
        h = (h ^ parts[i]) * 1099511628211ULL;
    size_t i = (h ^ h >> 29) & (2 * CLS_CAP - 1);
    for (; b->cls_slot[i]; i = (i + 1) & (2 * CLS_CAP - 1))
        if (cls_match(&b->cls[b->cls_slot[i] - 1], j, mb))
            return b->cls_slot[i] - 1;
    if (b->ncls == CLS_CAP)
        return CLS_NONE;
    b->cls[b->ncls] = (rclass_t){.nodes = r->nodes,
                                 .gpus_per_node = r->gpus_per_node,
                                 .gpu_milli = r->gpu_milli,
                                 .cpu_milli_per_node = r->cpu_milli_per_node,
                                 .perf_class = j->perf_class,
                                 .nodeset = r->nodeset,
                                 .types = r->types,
                                 .min_gpu_mem_bits = mb,
                                 .mem_mb_per_node = r->mem_mb_per_node};
    b->cls_slot[i] = (uint32_t)++b->ncls;
    return (uint32_t)(b->ncls - 1);
}

/* Forget every class (and so every candidate entry naming one). */
static void cls_reset(bf_t *b)
{
    if (b->cls_slot)
        memset(b->cls_slot, 0, 2 * CLS_CAP * sizeof *b->cls_slot);
    b->ncls = 0;
    b->nprev = b->ncand = 0;
}

static cand_t cand_of(bf_t *b, dr_job_t *j)
{
    return (cand_t){.job = j,
                    .limit = j->time_limit,
                    .cls = cls_of(b, j),
                    .flags = j->array_throttle ? CAND_THROTTLE : 0};
}

/* --- jobs queued since the candidates were taken --- */
static uint64_t ptr_hash(const void *p)
{
    return ((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ULL) >> 56; /* 0..255 */
}

static void queued_add(bf_t *b, const dr_job_t *j)
{
    if (b->nqueued == sizeof b->queued / sizeof *b->queued) {
        b->queued_overflow = true;
        return;
    }
    b->queued[b->nqueued++] = j;
    uint64_t h = ptr_hash(j);
    b->queued_bloom[h >> 6] |= 1ULL << (h & 63);
}

static bool queued_has(const bf_t *b, const dr_job_t *j)
{
    uint64_t h = ptr_hash(j);
    if (!(b->queued_bloom[h >> 6] >> (h & 63) & 1))
        return false;
    for (size_t i = 0; i < b->nqueued; i++)
        if (b->queued[i] == j)
            return true;
    return false;
}

static void queued_clear(bf_t *b)
{
    b->nqueued = 0;
    b->queued_overflow = false;
    memset(b->queued_bloom, 0, sizeof b->queued_bloom);
}

/* Take the candidates jobs[0..n) into b->cand, in order, reusing the
 * previous full pass's entry for a job still queued since then (relative
 * queue order never changes, so one forward merge finds them). */
static int take_candidates(bf_t *b, dr_job_t *const *jobs, size_t n)
{
    if (b->queued_overflow || b->ncls > CLS_CAP / 2)
        cls_reset(b); /* start afresh: no entry is reused */
    cand_t *t = b->prev;
    b->prev = b->cand;
    b->cand = t;
    b->nprev = b->ncand;
    b->ncand = 0;
    if (n > b->cand_cap) {
        size_t cap = b->cand_cap ? b->cand_cap : 64;
        while (cap < n)
            cap *= 2;
        cand_t *c1 = realloc(b->cand, cap * sizeof *c1);
        if (c1)
            b->cand = c1;
        cand_t *c2 = c1 ? realloc(b->prev, cap * sizeof *c2) : NULL;
        if (c2)
            b->prev = c2;
        if (!c1 || !c2) {
            b->nprev = 0;
            return DR_ENOMEM;
        }
        b->cand_cap = cap;
    }
    const cand_t *prev = b->prev;
    size_t o = 0, np = b->nprev;
    for (size_t k = 0; k < n; k++) {
        dr_job_t *j = jobs[k];
        const cand_t *hit = NULL;
        if (o < np && !(b->nqueued && queued_has(b, j))) {
            size_t f = o;
            while (f < np && prev[f].job != j)
                f++;
            /* not among the previous candidates: neither is any later job
             * queued before them */
            o = f < np ? f + 1 : np;
            if (f < np)
                hit = &prev[f];
        }
        b->cand[k] = hit ? *hit : cand_of(b, j);
    }
    b->ncand = n;
    queued_clear(b);
    return DR_OK;
}

static void hide_resv(bf_t *b, dr_cluster_t *c, bool hide)
{
    for (size_t i = 0; i < b->nresv; i++)
        dr_cluster_hide(c, b->resv[i], hide);
}

/* What the scan needs of a candidate's request in this pass: the GPU types
 * it may run on (0 for a CPU-only job) and its memo key; false if it is a
 * GPU job no type can run. */
static bool cand_shape(bf_t *b, const dr_sched_view_t *v, const cand_t *cd, bool is_short,
                       dr_typemask_t *allowed, uint64_t *key, bool **in_memo)
{
    const dr_job_t *j = cd->job;
    *in_memo = NULL;
    if (cd->cls == CLS_NONE || !b->cls) {
        *allowed = j->req.gpus_per_node ? dr_perf_runnable(v->perf, v->cluster, j) : 0;
        *key = shape_key(&j->req, *allowed, is_short);
        return !j->req.gpus_per_node || *allowed;
    }
    rclass_t *e = &b->cls[cd->cls];
    if (e->pass != b->pass) { /* any job of the class answers for all of them */
        e->pass = b->pass;
        e->allowed = e->gpus_per_node ? dr_perf_runnable(v->perf, v->cluster, j) : 0;
        e->key[0] = shape_key(&j->req, e->allowed, false);
        e->key[1] = shape_key(&j->req, e->allowed, true);
        e->in_memo[0] = e->in_memo[1] = false;
    }
    *allowed = e->allowed;
    *key = e->key[is_short];
    *in_memo = &e->in_memo[is_short];
    return !e->gpus_per_node || e->allowed;
}

/* Try the candidates cands[0..n) (in queue order, behind the head) against
 * the reservation: a job that ends (by its limit) before the shadow time
 * cannot delay the head; any other job must stay off the reserved nodes. */
static int backfill(bf_t *b, const dr_sched_view_t *v, const cand_t *cands, size_t n, dr_time_t sh,
                    size_t *considered)
{
    bool hidden = false;
    int rc = DR_OK;
    b->pass++;
    for (size_t k = 0; k < n && rc == DR_OK; k++) {
        const cand_t *cd = &cands[k];
        dr_job_t *j = cd->job;
        ++*considered;
        if ((cd->flags & CAND_THROTTLE) && dr_sched_throttled(v->sched, j))
            continue;
        bool is_short =
            sh == DR_TIME_NEVER || (cd->limit > 0 && dr_time_add(v->now, cd->limit) <= sh);
        dr_typemask_t allowed;
        uint64_t key;
        bool *in_memo, dummy = false;
        if (!cand_shape(b, v, cd, is_short, &allowed, &key, &in_memo))
            continue;
        if (!in_memo)
            in_memo = &dummy;
        if (*in_memo || (*in_memo = memo_has(b, key)))
            continue;
        /* cheap filters first: hiding or unhiding the reserved nodes costs
         * O(reserved x log nodes), so toggle only for a real attempt (with
         * the nodes unhidden the quick check is a superset test) */
        if (!hidden && !dr_place_fits_quick(v->cluster, &j->req, allowed)) {
            *in_memo = memo_add(b, key);
            continue;
        }
        if (is_short == hidden)
            hide_resv(b, v->cluster, hidden = !is_short);
        if (hidden && !dr_place_fits_quick(v->cluster, &j->req, allowed)) {
            *in_memo = memo_add(b, key);
            continue;
        }
        rc = dr_policy_try_start(v, j);
        if (rc == DR_ENOSPC) {
            *in_memo = memo_add(b, key);
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
    for (size_t i = 0; i < v->nfresh && !b->queued_overflow; i++)
        queued_add(b, v->fresh[i]);
    if (v->npending && b->have_head && v->pending[0]->id == b->last_head &&
        v->cluster->freed_gen == b->last_gen) {
        /* Incremental pass.  Nothing was freed since the last pass, so the
         * head is still blocked, its reservation stands, and every job that
         * failed then fails now; only fresh jobs behind the head can start. */
        size_t base = v->pending[0]->sched_slot, from = 0, n = v->nfresh;
        while (from < n && v->fresh[from]->sched_slot <= base)
            from++;
        while (b->depth && n > from && v->fresh[n - 1]->sched_slot - base > b->depth)
            n--;
        if (n - from > b->inc_cap) {
            cand_t *c = realloc(b->inc, (n - from) * sizeof *c);
            if (!c)
                return dr_err_set(err, DR_ENOMEM, "backfill: out of memory");
            b->inc = c;
            b->inc_cap = n - from;
        }
        for (size_t k = from; k < n; k++)
            b->inc[k - from] = cand_of(b, v->fresh[k]);
        rc = backfill(b, v, b->inc, n - from, b->last_shadow, &considered);
    } else {
        size_t i = 0;
        b->have_head = false;
        for (; i < v->npending; i++) {
            dr_job_t *j = v->pending[i];
            considered++;
            if (dr_sched_throttled(v->sched, j))
                continue;
            rc = dr_policy_try_start(v, j);
            if (rc == DR_ENOSPC && dr_sched_account_blocked(v->sched, j))
                continue; /* its account's limits hold it: no reservation */
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
            if (take_candidates(b, v->pending + i + 1, end - (i + 1)) != DR_OK)
                return dr_err_set(err, DR_ENOMEM, "backfill: out of memory");
            rc = backfill(b, v, b->cand, b->ncand, sh, &considered);
            /* jobs before the head all started, so next pass it is first */
            b->last_head = v->pending[i]->id;
            b->have_head = true;
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
