/* ledger.c - the resource ledger: what is free on every node and GPU, and
 * the index that finds room for a job.
 *
 * The ledger keeps free milli per GPU and free CPU and memory per node, and
 * per GPU type a max-segment-tree over that type's nodes (largest idle-GPU
 * count, largest free share on one GPU, most free CPU) and buckets of nodes
 * by idle-GPU count (plus the topology groups' histograms, cluster_topo.c).
 * First-fit descends the tree and best-fit walks the buckets, so finding
 * room for a job costs O(log nodes) instead of a scan: that is what lets one
 * scheduling pass stay linear in the queue length on a 10,000-node cluster.
 * A tree over all nodes serves CPU-only requests.
 *
 * This file is the ledger's one home: booking and giving back (the path
 * placement, the packers and the scheduler's adoption of running jobs all
 * take), node state and visibility, the index's upkeep, and the queries
 * placement and the policies make of it (cluster.h, "the ledger").  Nothing
 * outside src/core sees the index's structures (core/cluster_index.h). */
#include <stdlib.h>
#include <string.h>

#include "core/cluster_index.h"
#include "drover/partition.h"
#include "drover/cluster.h"
#include "drover/util.h"

/* --- the index --- */

/* Bucket key.  Hidden nodes stay in their bucket (placement skips them
 * with dr_node_fits): hiding is a temporary, per-pass thing, and moving
 * nodes between buckets would reorder them and make placement depend on
 * how often a policy hid and unhid its reservations. */
static inline uint16_t eff_idle(const dr_node_t *n)
{
    return n->state == DR_NODE_UP ? n->gpus_idle : 0;
}

static inline dr_seg_t eff_seg(const dr_node_t *n)
{
    dr_seg_t s = {0, 0, 0, 0, 0};
    if (dr_node_usable(n)) {
        s.idle = n->gpus_idle;
        s.milli = n->max_milli;
        s.part = n->max_part;
        s.pidle = n->gpus_idle < n->ngpus ? n->gpus_idle : 0;
        s.cpu = n->cpu_free;
    }
    return s;
}

static inline dr_seg_t seg_max(dr_seg_t a, dr_seg_t b)
{
    dr_seg_t r;
    r.idle = a.idle > b.idle ? a.idle : b.idle;
    r.milli = a.milli > b.milli ? a.milli : b.milli;
    r.part = a.part > b.part ? a.part : b.part;
    r.pidle = a.pidle > b.pidle ? a.pidle : b.pidle;
    r.cpu = a.cpu > b.cpu ? a.cpu : b.cpu;
    return r;
}

static void seg_set(dr_segtree_t *t, size_t pos, dr_seg_t v)
{
    size_t i = pos + t->size;
    t->seg[i] = v;
    for (i >>= 1; i >= 1; i >>= 1)
        t->seg[i] = seg_max(t->seg[2 * i], t->seg[2 * i + 1]);
}

static int tree_build(dr_segtree_t *t, const dr_cluster_t *c, int type)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nnodes; i++)
        if (type < 0 || (c->nodes[i].ngpus > 0 && c->nodes[i].type == type))
            n++;
    t->n = n;
    t->size = 1;
    while (t->size < n)
        t->size <<= 1;
    t->pos2node = malloc((n ? n : 1) * sizeof *t->pos2node);
    t->seg = calloc(2 * t->size, sizeof *t->seg);
    if (!t->pos2node || !t->seg)
        return DR_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        if (type < 0 || (c->nodes[i].ngpus > 0 && c->nodes[i].type == type)) {
            t->pos2node[k] = (uint32_t)i;
            if (type < 0)
                c->index->node_allpos[i] = (uint32_t)k;
            else
                c->index->node_pos[i] = (uint32_t)k;
            t->seg[t->size + k] = eff_seg(&c->nodes[i]);
            k++;
        }
    }
    for (size_t i = t->size - 1; i >= 1; i--)
        t->seg[i] = seg_max(t->seg[2 * i], t->seg[2 * i + 1]);
    return DR_OK;
}

static void bucket_unlink(struct dr_cluster_index *ix, uint32_t node, int type)
{
    dr_buckets_t *b = &ix->buckets[type];
    uint16_t k = ix->bkey[node];
    uint32_t p = ix->bprev[node], nx = ix->bnext[node];
    if (p != DR_NIL)
        ix->bnext[p] = nx;
    else
        b->head[k] = nx;
    if (nx != DR_NIL)
        ix->bprev[nx] = p;
    b->count[k]--;
}

static void bucket_link(struct dr_cluster_index *ix, uint32_t node, int type, uint16_t k)
{
    dr_buckets_t *b = &ix->buckets[type];
    /* keep each bucket in ascending node order for determinism: insert at the
     * head if smaller than the head, else at the head's position is not
     * ordered - we accept LIFO order within a bucket; placement breaks ties
     * deterministically because the sequence of operations is deterministic. */
    ix->bkey[node] = k;
    ix->bprev[node] = DR_NIL;
    ix->bnext[node] = b->head[k];
    if (b->head[k] != DR_NIL)
        ix->bprev[b->head[k]] = node;
    b->head[k] = node;
    b->count[k]++;
}

/* Re-index one node after its ledger, state or hidden flag changed. */
void dr_cluster_reindex(dr_cluster_t *c, uint32_t node)
{
    struct dr_cluster_index *ix = c->index;
    if (!ix || !ix->built)
        return;
    dr_node_t *n = &c->nodes[node];
    dr_seg_t v = eff_seg(n);
    seg_set(&ix->tree[DR_MAX_GPU_TYPES], ix->node_allpos[node], v);
    if (n->ngpus) {
        seg_set(&ix->tree[n->type], ix->node_pos[node], v);
        uint16_t k = eff_idle(n), old = ix->bkey[node];
        if (k != old) {
            bucket_unlink(ix, node, n->type);
            bucket_link(ix, node, n->type, k);
            /* a key equal to the GPU count means UP with every GPU idle */
            ix->buckets[n->type].nfree += (k == n->ngpus) - (old == n->ngpus);
            if (ix->ngrps)
                dr_cluster_topo_move(ix, node, old, k);
        }
    }
}

void dr_ledger_index_free(struct dr_cluster_index *ix)
{
    for (size_t t = 0; t <= DR_MAX_GPU_TYPES; t++) {
        free(ix->tree[t].pos2node);
        free(ix->tree[t].seg);
        free(ix->buckets[t].head);
        free(ix->buckets[t].count);
    }
    memset(ix->tree, 0, sizeof ix->tree);
    memset(ix->buckets, 0, sizeof ix->buckets);
    free(ix->node_pos);
    free(ix->node_allpos);
    free(ix->bnext);
    free(ix->bprev);
    free(ix->bkey);
    ix->node_pos = ix->node_allpos = NULL;
    ix->bnext = ix->bprev = NULL;
    ix->bkey = NULL;
    dr_cluster_topo_free(ix);
    ix->built = false;
}

/* Build the trees, buckets and topology groups from the nodes' ledger and
 * recount the per-type totals.  DR_ENOMEM leaves a partial index for
 * dr_ledger_index_free. */
int dr_ledger_index_build(dr_cluster_t *c)
{
    struct dr_cluster_index *ix = c->index;
    size_t nn = c->nnodes ? c->nnodes : 1;
    ix->node_pos = calloc(nn, sizeof *ix->node_pos);
    ix->node_allpos = calloc(nn, sizeof *ix->node_allpos);
    ix->bnext = malloc(nn * sizeof *ix->bnext);
    ix->bprev = malloc(nn * sizeof *ix->bprev);
    ix->bkey = calloc(nn, sizeof *ix->bkey);
    if (!ix->node_pos || !ix->node_allpos || !ix->bnext || !ix->bprev || !ix->bkey)
        return DR_ENOMEM;
    for (size_t t = 0; t < c->ntypes; t++) {
        if (tree_build(&ix->tree[t], c, (int)t) != 0)
            return DR_ENOMEM;
        uint16_t maxg = 0;
        for (size_t i = 0; i < c->nnodes; i++)
            if (c->nodes[i].ngpus && c->nodes[i].type == t && c->nodes[i].ngpus > maxg)
                maxg = c->nodes[i].ngpus;
        ix->buckets[t].maxg = maxg;
        ix->buckets[t].head = malloc((maxg + 1u) * sizeof(uint32_t));
        ix->buckets[t].count = calloc(maxg + 1u, sizeof(uint32_t));
        if (!ix->buckets[t].head || !ix->buckets[t].count)
            return DR_ENOMEM;
        for (size_t k = 0; k <= maxg; k++)
            ix->buckets[t].head[k] = DR_NIL;
    }
    if (tree_build(&ix->tree[DR_MAX_GPU_TYPES], c, -1) != 0)
        return DR_ENOMEM;
    /* link nodes in descending order so each bucket starts ascending */
    for (size_t i = c->nnodes; i-- > 0;)
        if (c->nodes[i].ngpus) {
            uint16_t k = eff_idle(&c->nodes[i]);
            bucket_link(ix, (uint32_t)i, c->nodes[i].type, k);
            ix->buckets[c->nodes[i].type].nfree += k == c->nodes[i].ngpus;
        }
    if (dr_cluster_topo_build(c) != DR_OK)
        return DR_ENOMEM;
    memset(c->gpus_of_type, 0, sizeof c->gpus_of_type);
    memset(c->milli_free_of_type, 0, sizeof c->milli_free_of_type);
    for (size_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *n = &c->nodes[i];
        if (!n->ngpus)
            continue;
        if (n->state == DR_NODE_UP || n->state == DR_NODE_DRAIN)
            c->gpus_of_type[n->type] += n->ngpus;
        if (dr_node_usable(n))
            for (uint16_t g = 0; g < n->ngpus; g++)
                c->milli_free_of_type[n->type] += c->gpu_free[n->gpu_base + g];
    }
    return DR_OK;
}

/* --- queries --- */

bool dr_cluster_finalized(const dr_cluster_t *c)
{
    return c->index && c->index->built;
}

/* The tree of a GPU type, or of every node (DR_LEDGER_ALL). */
static inline const dr_segtree_t *tree_of(const dr_cluster_t *c, int type)
{
    return &c->index->tree[type < 0 || type >= DR_MAX_GPU_TYPES ? DR_MAX_GPU_TYPES : type];
}

static inline bool admits(const dr_seg_t *s, const dr_ledger_q_t *q)
{
    return s->idle >= q->idle && s->milli >= q->milli && s->part >= q->part &&
           s->pidle >= q->pidle && s->cpu >= q->cpu;
}

static uint32_t find_rec(const dr_segtree_t *t, size_t i, size_t lo, size_t hi, size_t from,
                         const dr_ledger_q_t *q)
{
    if (hi <= from || lo >= t->n || !admits(&t->seg[i], q))
        return DR_NIL;
    if (i >= t->size)
        return (uint32_t)lo;
    size_t mid = lo + (hi - lo) / 2;
    uint32_t r = find_rec(t, 2 * i, lo, mid, from, q);
    return r != DR_NIL ? r : find_rec(t, 2 * i + 1, mid, hi, from, q);
}

size_t dr_ledger_npos(const dr_cluster_t *c, int type)
{
    return tree_of(c, type)->n;
}

uint32_t dr_ledger_find(const dr_cluster_t *c, int type, size_t *from, const dr_ledger_q_t *q)
{
    const dr_segtree_t *t = tree_of(c, type);
    if (*from >= t->n)
        return DR_LEDGER_NIL;
    uint32_t pos = find_rec(t, 1, 0, t->size, *from, q);
    if (pos == DR_NIL)
        return DR_LEDGER_NIL;
    *from = (size_t)pos + 1;
    return t->pos2node[pos];
}

dr_ledger_q_t dr_ledger_max(const dr_cluster_t *c, int type)
{
    const dr_segtree_t *t = tree_of(c, type);
    dr_ledger_q_t m = {0, 0, 0, 0, 0};
    if (t->n == 0)
        return m;
    const dr_seg_t *r = &t->seg[1];
    m.idle = r->idle;
    m.milli = r->milli;
    m.part = r->part;
    m.pidle = r->pidle;
    m.cpu = r->cpu;
    return m;
}

/* The buckets of a GPU type (every accessor below takes type < ntypes). */
static inline const dr_buckets_t *buckets_of(const dr_cluster_t *c, int type)
{
    return &c->index->buckets[type];
}

uint16_t dr_ledger_max_gpus(const dr_cluster_t *c, int type)
{
    return buckets_of(c, type)->maxg;
}

uint32_t dr_ledger_bucket_count(const dr_cluster_t *c, int type, uint32_t idle)
{
    const dr_buckets_t *b = buckets_of(c, type);
    return idle <= b->maxg ? b->count[idle] : 0;
}

uint32_t dr_ledger_bucket_first(const dr_cluster_t *c, int type, uint32_t idle)
{
    const dr_buckets_t *b = buckets_of(c, type);
    return idle <= b->maxg ? b->head[idle] : DR_LEDGER_NIL;
}

uint32_t dr_ledger_bucket_next(const dr_cluster_t *c, uint32_t node)
{
    return c->index->bnext[node];
}

uint32_t dr_ledger_whole_nodes(const dr_cluster_t *c, int type)
{
    return buckets_of(c, type)->nfree;
}

uint64_t dr_ledger_idle_gpus(const dr_cluster_t *c, int type)
{
    const dr_buckets_t *b = buckets_of(c, type);
    uint64_t n = 0;
    for (uint32_t f = 1; f <= b->maxg; f++)
        n += (uint64_t)f * b->count[f];
    return n;
}

bool dr_ledger_has_groups(const dr_cluster_t *c)
{
    return c->index->ngrps > 0;
}

const dr_ledger_grp_t *dr_ledger_groups(const dr_cluster_t *c, int type, dr_ledger_grp_kind_t kind,
                                        uint32_t *first, uint32_t *count)
{
    const uint32_t *r = c->index->grp_range[type][kind];
    *first = r[0];
    *count = r[1];
    return r[1] ? &c->index->grps[r[0]] : NULL;
}

const dr_ledger_grp_t *dr_ledger_group(const dr_cluster_t *c, uint32_t g)
{
    return &c->index->grps[g];
}

const uint32_t *dr_ledger_group_nodes(const dr_cluster_t *c, uint32_t g)
{
    return &c->index->grp_nodes[c->index->grps[g].first];
}

void dr_ledger_groups_fit(const dr_cluster_t *c, uint32_t first, uint32_t n, uint32_t k,
                          uint64_t *out)
{
    const struct dr_cluster_index *ix = c->index;
    for (uint32_t i = 0; i < n; i++) {
        const dr_topo_grp_t *gp = &ix->grps[first + i];
        const uint32_t *h = &ix->grp_hist[gp->hist];
        uint64_t m = 0;
        for (uint32_t f = k; f <= gp->maxg; f++)
            m += h[f];
        out[i] = m;
    }
}

void dr_ledger_groups_min_nodes(const dr_cluster_t *c, uint32_t first, uint32_t n, uint64_t gpus,
                                uint64_t *out)
{
    const struct dr_cluster_index *ix = c->index;
    for (uint32_t i = 0; i < n; i++) {
        const dr_topo_grp_t *gp = &ix->grps[first + i];
        out[i] = UINT64_MAX;
        if (gp->idle < gpus)
            continue;
        /* largest nodes first */
        uint64_t need = gpus, nodes = 0;
        for (uint32_t f = gp->maxg; f >= 1 && need; f--) {
            uint64_t h = ix->grp_hist[gp->hist + f];
            uint64_t k = (need + f - 1) / f;
            if (k > h)
                k = h;
            nodes += k;
            need = k * f >= need ? 0 : need - k * f;
        }
        out[i] = nodes;
    }
}

uint32_t dr_ledger_rr_cursor(const dr_cluster_t *c, int type)
{
    return c->index->rr_pos[type < 0 || type >= DR_MAX_GPU_TYPES ? DR_MAX_GPU_TYPES : type];
}

void dr_ledger_set_rr_cursor(dr_cluster_t *c, int type, uint32_t pos)
{
    c->index->rr_pos[type < 0 || type >= DR_MAX_GPU_TYPES ? DR_MAX_GPU_TYPES : type] = pos;
}

void *dr_cluster_packer(const dr_cluster_t *c, unsigned k)
{
    return c->index && k < DR_CLUSTER_NPACKERS ? c->index->packers[k] : NULL;
}

void dr_cluster_set_packer(dr_cluster_t *c, unsigned k, void *packer, void (*free_fn)(void *))
{
    if (!c->index || k >= DR_CLUSTER_NPACKERS)
        return;
    c->index->packers[k] = packer;
    c->index->packer_free = free_fn;
}

/* --- booking and node state --- */

bool dr_node_usable(const dr_node_t *n)
{
    return n->state == DR_NODE_UP && !n->hidden;
}

static void node_refresh(dr_cluster_t *c, dr_node_t *n)
{
    uint16_t idle = 0, mx = 0, part = 0;
    for (uint16_t g = 0; g < n->ngpus; g++) {
        uint16_t f = c->gpu_free[n->gpu_base + g];
        if (f == 1000)
            idle++;
        else if (f > part)
            part = f;
        if (f > mx)
            mx = f;
    }
    n->gpus_idle = idle;
    n->max_milli = mx;
    n->max_part = part;
}

/* Slots of one node must be contiguous (placement builds them that way);
 * the first slot of each node carries the node's CPU and memory. */
int dr_cluster_take(dr_cluster_t *c, const dr_alloc_t *a, dr_err_t *err)
{
    /* validate everything first so a failed take changes nothing */
    for (uint32_t i = 0, j; i < a->nslots; i = j) {
        uint32_t node = a->slots[i].node;
        for (j = i; j < a->nslots && a->slots[j].node == node; j++)
            ;
        if (node >= c->nnodes)
            return dr_err_set(err, DR_EINVAL, "allocation: node %u does not exist", node);
        for (uint32_t k = 0; k < i; k++)
            if (a->slots[k].node == node)
                return dr_err_set(err, DR_EINVAL, "allocation: slots of %s are not contiguous",
                                  c->nodes[node].name);
        const dr_node_t *n = &c->nodes[node];
        if (n->cpu_free < a->cpu_milli_per_node || n->mem_free < a->mem_mb_per_node)
            return dr_err_set(err, DR_ENOSPC, "allocation: %s lacks CPU or memory", n->name);
        for (uint32_t k = i; k < j; k++) {
            const dr_slot_t *s = &a->slots[k];
            if (s->gpu == DR_NO_GPU)
                continue;
            if (s->gpu >= n->ngpus)
                return dr_err_set(err, DR_EINVAL, "allocation: %s has no GPU %u", n->name, s->gpu);
            uint32_t want = 0;
            for (uint32_t q = i; q < j; q++)
                if (a->slots[q].gpu == s->gpu)
                    want += a->slots[q].milli;
            if (want > c->gpu_free[n->gpu_base + s->gpu])
                return dr_err_set(err, DR_ENOSPC,
                                  "allocation: %s GPU %u has %u milli free, needs %u", n->name,
                                  s->gpu, c->gpu_free[n->gpu_base + s->gpu], want);
        }
    }
    for (uint32_t i = 0; i < a->nslots; i++) {
        const dr_slot_t *s = &a->slots[i];
        dr_node_t *n = &c->nodes[s->node];
        if (i == 0 || a->slots[i - 1].node != s->node) {
            n->cpu_free -= a->cpu_milli_per_node;
            n->mem_free -= a->mem_mb_per_node;
            n->njobs++;
        }
        if (s->gpu != DR_NO_GPU) {
            c->gpu_free[n->gpu_base + s->gpu] -= s->milli;
            if (dr_node_usable(n))
                c->milli_free_of_type[n->type] -= s->milli;
        }
    }
    for (uint32_t i = 0; i < a->nslots; i++)
        if (i == 0 || a->slots[i].node != a->slots[i - 1].node) {
            node_refresh(c, &c->nodes[a->slots[i].node]);
            dr_cluster_reindex(c, a->slots[i].node);
        }
    return DR_OK;
}

void dr_cluster_give(dr_cluster_t *c, const dr_alloc_t *a)
{
    c->freed_gen++;
    for (uint32_t i = 0; i < a->nslots; i++) {
        const dr_slot_t *s = &a->slots[i];
        dr_node_t *n = &c->nodes[s->node];
        bool first = i == 0 || a->slots[i - 1].node != s->node;
        if (first) {
            n->cpu_free += a->cpu_milli_per_node;
            n->mem_free += a->mem_mb_per_node;
            n->njobs--;
        }
        if (s->gpu != DR_NO_GPU) {
            c->gpu_free[n->gpu_base + s->gpu] += s->milli;
            if (dr_node_usable(n))
                c->milli_free_of_type[n->type] += s->milli;
        }
    }
    for (uint32_t i = 0; i < a->nslots; i++)
        if (i == 0 || a->slots[i].node != a->slots[i - 1].node) {
            node_refresh(c, &c->nodes[a->slots[i].node]);
            dr_cluster_reindex(c, a->slots[i].node);
        }
}

static void visibility_change(dr_cluster_t *c, dr_node_t *n, bool was_usable)
{
    bool now_usable = dr_node_usable(n);
    if (now_usable && !was_usable)
        c->freed_gen++;
    if (n->ngpus && was_usable != now_usable) {
        uint64_t m = 0;
        for (uint16_t g = 0; g < n->ngpus; g++)
            m += c->gpu_free[n->gpu_base + g];
        if (now_usable)
            c->milli_free_of_type[n->type] += m;
        else
            c->milli_free_of_type[n->type] -= m;
    }
}

void dr_cluster_set_state(dr_cluster_t *c, uint32_t node, dr_node_state_t st)
{
    dr_node_t *n = &c->nodes[node];
    bool was = dr_node_usable(n);
    bool counted = n->state == DR_NODE_UP || n->state == DR_NODE_DRAIN;
    n->state = (uint8_t)st;
    bool counts = st == DR_NODE_UP || st == DR_NODE_DRAIN;
    if (n->ngpus && counted != counts) {
        if (counts)
            c->gpus_of_type[n->type] += n->ngpus;
        else
            c->gpus_of_type[n->type] -= n->ngpus;
    }
    visibility_change(c, n, was);
    dr_cluster_reindex(c, node);
}

void dr_cluster_hide(dr_cluster_t *c, uint32_t node, bool hidden)
{
    dr_node_t *n = &c->nodes[node];
    if (n->hidden == hidden)
        return;
    bool was = dr_node_usable(n);
    n->hidden = hidden;
    visibility_change(c, n, was);
    dr_cluster_reindex(c, node);
}

bool dr_node_fits(const dr_cluster_t *c, const dr_node_t *n, const dr_job_req_t *r)
{
    if (!dr_node_usable(n))
        return false;
    if (r->nodeset && !dr_nodeset_has(c, r->nodeset, (uint32_t)(n - c->nodes)))
        return false;
    if (n->cpu_free < r->cpu_milli_per_node || n->mem_free < r->mem_mb_per_node)
        return false;
    if (r->gpus_per_node == 0)
        return true;
    if (n->ngpus == 0)
        return false;
    if (r->types && !(r->types & (1ULL << n->type)))
        return false;
    if (r->gpu_milli < 1000)
        return n->max_milli >= r->gpu_milli;
    if (r->nodes == 0)
        return n->gpus_idle >= 1;
    return n->gpus_idle >= r->gpus_per_node;
}

uint64_t dr_cluster_total_gpus(const dr_cluster_t *c, int type)
{
    if (type >= 0)
        return (size_t)type < c->ntypes ? c->gpus_of_type[type] : 0;
    uint64_t s = 0;
    for (size_t t = 0; t < c->ntypes; t++)
        s += c->gpus_of_type[t];
    return s;
}

uint64_t dr_cluster_free_milli(const dr_cluster_t *c, int type)
{
    if (type >= 0)
        return (size_t)type < c->ntypes ? c->milli_free_of_type[type] : 0;
    uint64_t s = 0;
    for (size_t t = 0; t < c->ntypes; t++)
        s += c->milli_free_of_type[t];
    return s;
}

int dr_cluster_audit(const dr_cluster_t *c, const dr_alloc_t *const *allocs, size_t n,
                     dr_err_t *err)
{
    uint32_t *used = calloc(c->ngpus ? c->ngpus : 1, sizeof *used);
    uint64_t *cpu = calloc(c->nnodes ? c->nnodes : 1, sizeof *cpu);
    uint64_t *mem = calloc(c->nnodes ? c->nnodes : 1, sizeof *mem);
    int rc = DR_OK;
    if (!used || !cpu || !mem) {
        rc = dr_err_set(err, DR_ENOMEM, "audit: out of memory");
        goto out;
    }
    for (size_t k = 0; k < n; k++) {
        const dr_alloc_t *a = allocs[k];
        for (uint32_t i = 0; i < a->nslots; i++) {
            const dr_slot_t *s = &a->slots[i];
            if (s->node >= c->nnodes) {
                rc = dr_err_set(err, DR_ESTATE, "audit: allocation %zu names node %u", k, s->node);
                goto out;
            }
            if (i == 0 || a->slots[i - 1].node != s->node) {
                cpu[s->node] += a->cpu_milli_per_node;
                mem[s->node] += a->mem_mb_per_node;
            }
            if (s->gpu != DR_NO_GPU)
                used[c->nodes[s->node].gpu_base + s->gpu] += s->milli;
        }
    }
    for (size_t i = 0; i < c->nnodes && rc == DR_OK; i++) {
        const dr_node_t *nd = &c->nodes[i];
        if (cpu[i] + nd->cpu_free != nd->cpu_milli || mem[i] + nd->mem_free != nd->mem_mb)
            rc = dr_err_set(err, DR_ESTATE, "audit: %s CPU/memory ledger disagrees", nd->name);
        for (uint16_t g = 0; g < nd->ngpus && rc == DR_OK; g++) {
            uint32_t u = used[nd->gpu_base + g];
            if (u > 1000)
                rc = dr_err_set(err, DR_ESTATE, "audit: %s GPU %u is allocated %u milli (> 1000)",
                                nd->name, g, u);
            else if (u + c->gpu_free[nd->gpu_base + g] != 1000)
                rc = dr_err_set(err, DR_ESTATE, "audit: %s GPU %u: %u milli allocated but %u free",
                                nd->name, g, u, c->gpu_free[nd->gpu_base + g]);
        }
    }
out:
    free(used);
    free(cpu);
    free(mem);
    return rc;
}