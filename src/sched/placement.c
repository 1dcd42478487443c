/* placement.c - which GPUs on which nodes: shared by every policy.
 *
 * Three request shapes:
 *   - n nodes x k whole GPUs (a gang): n distinct nodes of one GPU type, each
 *     with k idle GPUs;
 *   - a share (k = 1, milli < 1000): one GPU with enough free milli per node;
 *   - "--gpus=G" (nodes = 0): G whole GPUs of one type on as few nodes as
 *     the strategy manages.
 * First-fit takes the lowest-numbered nodes (a segment-tree descent);
 * best-fit takes the nodes that will be left with the fewest idle GPUs (the
 * idle-count buckets) and puts shares on already-shared GPUs first, so whole
 * GPUs stay whole for the jobs that need them.  Best-fit also keeps whole
 * nodes whole across GPU types and for the last piece of a --gpus=G job,
 * and places multi-node jobs by topology (placement_topo.c: one NVLink
 * domain, else one leaf switch, else the lowest common switch), because a
 * gang spread over the network runs slower than one kept close.  A task
 * naming its input shard goes where the shard is, else round-robin.  The
 * packing strategies (FGD, drover-pack) hand single-node requests to a
 * packer (pack.h), which scores every node; gangs keep the paths below. */
#include "drover/placement.h"

#include <stdlib.h>
#include <string.h>

#include "drover/pack.h"
#include "drover/util.h"
#include "sched/placement_priv.h"

const char *dr_place_strategy_name(dr_place_strategy_t s)
{
    switch (s) {
    case DR_PLACE_BEST_FIT: return "best-fit";
    case DR_PLACE_FGD: return "fgd";
    case DR_PLACE_PACK: return "drover-pack";
    default: return "first-fit";
    }
}

int dr_place_strategy_parse(const char *s, dr_place_strategy_t *out)
{
    if (dr_streq_ci(s, "first-fit") || dr_streq_ci(s, "firstfit") || dr_streq_ci(s, "ff"))
        *out = DR_PLACE_FIRST_FIT;
    else if (dr_streq_ci(s, "best-fit") || dr_streq_ci(s, "bestfit") || dr_streq_ci(s, "bf"))
        *out = DR_PLACE_BEST_FIT;
    else if (dr_streq_ci(s, "fgd"))
        *out = DR_PLACE_FGD;
    else if (dr_streq_ci(s, "drover-pack"))
        *out = DR_PLACE_PACK;
    else
        return DR_EINVAL;
    return DR_OK;
}

int dr_pick_add(dr_pick_t *p, uint32_t node, uint16_t take)
{
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 16;
        uint32_t *a = realloc(p->node, nc * sizeof *a);
        if (!a)
            return DR_ENOMEM;
        p->node = a;
        uint16_t *b = realloc(p->take, nc * sizeof *b);
        if (!b)
            return DR_ENOMEM;
        p->take = b;
        p->cap = nc;
    }
    p->node[p->n] = node;
    p->take[p->n++] = take;
    return DR_OK;
}

void dr_pick_free(dr_pick_t *p)
{
    free(p->node);
    free(p->take);
}

/* The per-node share that must fit on each node used. */
dr_job_req_t dr_place_node_share(const dr_job_req_t *r, int t, uint32_t gpus)
{
    dr_job_req_t s = *r;
    s.nodes = 1;
    s.gpus_per_node = gpus;
    if (t >= 0)
        s.types = 1ULL << t;
    return s;
}

static bool picked(const dr_pick_t *p, uint32_t node)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->node[i] == node)
            return true;
    return false;
}

/* Best-fit: a node of type t, not picked yet, with the fewest idle GPUs
 * that is at least `want` and room for the per-node CPU and memory. */
static uint32_t tightest(const dr_cluster_t *c, int t, uint32_t want, const dr_job_req_t *r,
                         const dr_pick_t *p)
{
    dr_job_req_t one = dr_place_node_share(r, t, want);
    for (uint32_t f = want, maxg = dr_ledger_max_gpus(c, t); f <= maxg; f++)
        for (uint32_t nd = dr_ledger_bucket_first(c, t, f); nd != DR_LEDGER_NIL;
             nd = dr_ledger_bucket_next(c, nd))
            if (!picked(p, nd) && dr_node_fits(c, &c->nodes[nd], &one))
                return nd;
    return DR_LEDGER_NIL;
}

/* Gang of n nodes x k GPUs (or shares) on type t. */
static int pick_gang(dr_cluster_t *c, const dr_job_req_t *r, int t, dr_place_strategy_t st,
                     dr_pick_t *p)
{
    uint32_t n = r->nodes, k = r->gpus_per_node;
    bool share = r->gpu_milli < 1000;
    dr_job_req_t one = *r;
    one.types = 1ULL << t;
    uint32_t maxg = dr_ledger_max_gpus(c, t);
    if (st == DR_PLACE_BEST_FIT && !share) {
        if (n > 1 && dr_ledger_has_groups(c)) {
            int rc = dr_place_topo_gang(c, r, t, p);
            if (rc != DR_ENOENT)
                return rc;
            p->n = 0;
        }
        for (uint32_t f = k; f <= maxg && p->n < n; f++)
            for (uint32_t nd = dr_ledger_bucket_first(c, t, f); nd != DR_LEDGER_NIL && p->n < n;
                 nd = dr_ledger_bucket_next(c, nd))
                if (dr_node_fits(c, &c->nodes[nd], &one) && dr_pick_add(p, nd, (uint16_t)k) != 0)
                    return DR_ENOMEM;
        return p->n == n ? DR_OK : DR_ENOSPC;
    }
    if (st == DR_PLACE_BEST_FIT && share) {
        /* shares first go where a GPU is already shared */
        dr_ledger_q_t q = {
            .idle = 0, .milli = 0, .part = (uint16_t)r->gpu_milli, .cpu = r->cpu_milli_per_node};
        size_t from = 0;
        uint32_t nd;
        while (p->n < n && (nd = dr_ledger_find(c, t, &from, &q)) != DR_LEDGER_NIL)
            if (dr_node_fits(c, &c->nodes[nd], &one) && dr_pick_add(p, nd, 1) != 0)
                return DR_ENOMEM;
        if (p->n == n)
            return DR_OK;
        /* then on idle GPUs of the nodes with the fewest idle GPUs */
        for (uint32_t f = 1; f <= maxg && p->n < n; f++)
            for (nd = dr_ledger_bucket_first(c, t, f); nd != DR_LEDGER_NIL && p->n < n;
                 nd = dr_ledger_bucket_next(c, nd))
                if (!picked(p, nd) && dr_node_fits(c, &c->nodes[nd], &one) &&
                    dr_pick_add(p, nd, 1) != 0)
                    return DR_ENOMEM;
        return p->n == n ? DR_OK : DR_ENOSPC;
    }
    dr_ledger_q_t q = {.idle = share ? 0 : (uint16_t)k,
                       .milli = share ? (uint16_t)r->gpu_milli : 0,
                       .part = 0,
                       .cpu = r->cpu_milli_per_node};
    size_t from = 0;
    uint32_t nd;
    while (p->n < n && (nd = dr_ledger_find(c, t, &from, &q)) != DR_LEDGER_NIL)
        if (dr_node_fits(c, &c->nodes[nd], &one) &&
            dr_pick_add(p, nd, (uint16_t)(share ? 1 : k)) != 0)
            return DR_ENOMEM;
    return p->n == n ? DR_OK : DR_ENOSPC;
}

/* --gpus=G on type t: one node if any can take all G, else several. */
static int pick_flex(dr_cluster_t *c, const dr_job_req_t *r, int t, dr_place_strategy_t st,
                     dr_pick_t *p)
{
    uint32_t g = r->gpus_per_node, maxg = dr_ledger_max_gpus(c, t);
    if (dr_ledger_idle_gpus(c, t) < g)
        return DR_ENOSPC; /* an upper bound: CPU/memory may rule out more */
    if (g <= maxg) {
        /* single node */
        if (st == DR_PLACE_BEST_FIT) {
            uint32_t nd = tightest(c, t, g, r, p);
            if (nd != DR_LEDGER_NIL)
                return dr_pick_add(p, nd, (uint16_t)g);
        } else {
            dr_job_req_t whole = dr_place_node_share(r, t, g);
            dr_ledger_q_t q = {.idle = (uint16_t)g, .cpu = r->cpu_milli_per_node};
            size_t from = 0;
            uint32_t nd;
            while ((nd = dr_ledger_find(c, t, &from, &q)) != DR_LEDGER_NIL)
                if (dr_node_fits(c, &c->nodes[nd], &whole))
                    return dr_pick_add(p, nd, (uint16_t)g);
        }
    }
    if (st == DR_PLACE_BEST_FIT && dr_ledger_has_groups(c)) {
        int rc = dr_place_topo_flex(c, r, t, p);
        if (rc != DR_ENOENT)
            return rc;
        p->n = 0;
    }
    /* spread: best-fit takes the fullest-idle nodes first (fewest nodes)
     * and the last piece on the tightest node that takes it, so it does not
     * break a fully idle node a partly used one could spare; first-fit takes
     * nodes in order */
    uint32_t got = 0;
    dr_job_req_t any = dr_place_node_share(r, t, 1);
    if (st == DR_PLACE_BEST_FIT) {
        for (uint32_t f = maxg; f >= 1 && got < g; f--)
            for (uint32_t nd = dr_ledger_bucket_first(c, t, f); nd != DR_LEDGER_NIL && got < g;
                 nd = dr_ledger_bucket_next(c, nd)) {
                if (!dr_node_fits(c, &c->nodes[nd], &any))
                    continue;
                uint32_t rem = g - got;
                if (f >= rem) {
                    uint32_t tn = tightest(c, t, rem, r, p);
                    if (dr_pick_add(p, tn != DR_LEDGER_NIL ? tn : nd, (uint16_t)rem) != 0)
                        return DR_ENOMEM;
                    got = g;
                } else {
                    if (dr_pick_add(p, nd, (uint16_t)f) != 0)
                        return DR_ENOMEM;
                    got += f;
                }
            }
    } else {
        dr_ledger_q_t q = {.idle = 1, .cpu = r->cpu_milli_per_node};
        size_t from = 0;
        uint32_t nd;
        while (got < g && (nd = dr_ledger_find(c, t, &from, &q)) != DR_LEDGER_NIL)
            if (dr_node_fits(c, &c->nodes[nd], &any)) {
                uint32_t f = c->nodes[nd].gpus_idle;
                uint32_t take = f < g - got ? f : g - got;
                if (dr_pick_add(p, nd, (uint16_t)take) != 0)
                    return DR_ENOMEM;
                got += take;
            }
    }
    return got == g ? DR_OK : DR_ENOSPC;
}

/* CPU-only: n nodes (any type, with or without GPUs) with CPU and memory. */
static int pick_cpu(dr_cluster_t *c, const dr_job_req_t *r, dr_pick_t *p)
{
    uint32_t n = r->nodes ? r->nodes : 1;
    dr_ledger_q_t q = {.cpu = r->cpu_milli_per_node};
    size_t from = 0;
    uint32_t nd;
    dr_job_req_t one = dr_place_node_share(r, -1, 0);
    while (p->n < n && (nd = dr_ledger_find(c, DR_LEDGER_ALL, &from, &q)) != DR_LEDGER_NIL)
        if (dr_node_fits(c, &c->nodes[nd], &one) && dr_pick_add(p, nd, 0) != 0)
            return DR_ENOMEM;
    return p->n == n ? DR_OK : DR_ENOSPC;
}

/* Start of a run of `need` consecutive idle GPUs: the shortest run that is
 * long enough (best-fit, keeping long runs for wide jobs) or the first one;
 * -1 if none.  GPUs next to each other share a PCIe switch or NUMA node on
 * most servers, so a job's GPUs talk faster when kept together. */
static int gpu_run(const uint16_t *gf, uint16_t ngpus, uint16_t need, dr_place_strategy_t st)
{
    int best = -1, best_len = 0;
    for (int g = 0; g < ngpus;) {
        if (gf[g] != 1000) {
            g++;
            continue;
        }
        int s = g;
        while (g < ngpus && gf[g] == 1000)
            g++;
        int len = g - s;
        if (len >= need && (best < 0 || len < best_len)) {
            best = s;
            best_len = len;
            if (st == DR_PLACE_FIRST_FIT || len == need)
                break;
        }
    }
    return best;
}

/* Turn picked nodes into slots: whole GPUs in a run of consecutive idle
 * GPUs when there is one (else lowest-index idle first); a share goes on
 * the tightest GPU that fits (best-fit) or the first (first-fit). */
static int build_alloc(dr_cluster_t *c, const dr_job_req_t *r, int t, dr_place_strategy_t st,
                       const dr_pick_t *p, dr_alloc_t *out)
{
    uint32_t nslots = 0;
    for (size_t i = 0; i < p->n; i++)
        nslots += p->take[i] ? p->take[i] : 1;
    memset(out, 0, sizeof *out);
    out->slots = malloc((nslots ? nslots : 1) * sizeof *out->slots);
    if (!out->slots)
        return DR_ENOMEM;
    out->nnodes = (uint32_t)p->n;
    out->type = t >= 0 ? (uint16_t)t : 0;
    out->cpu_milli_per_node = r->cpu_milli_per_node;
    out->mem_mb_per_node = r->mem_mb_per_node;
    bool share = r->gpus_per_node > 0 && r->gpu_milli < 1000;
    for (size_t i = 0; i < p->n; i++) {
        const dr_node_t *n = &c->nodes[p->node[i]];
        const uint16_t *gf = &c->gpu_free[n->gpu_base];
        if (p->take[i] == 0) {
            out->slots[out->nslots++] = (dr_slot_t){p->node[i], DR_NO_GPU, 0};
        } else if (share) {
            int best = -1;
            for (uint16_t g = 0; g < n->ngpus; g++) {
                if (gf[g] < r->gpu_milli)
                    continue;
                if (best < 0) {
                    best = g;
                    if (st == DR_PLACE_FIRST_FIT)
                        break;
                } else if (gf[g] < gf[best]) {
                    best = g;
                }
            }
            if (best < 0)
                return DR_ENOSPC;
            out->slots[out->nslots++] =
                (dr_slot_t){p->node[i], (uint16_t)best, (uint16_t)r->gpu_milli};
        } else {
            uint16_t need = p->take[i];
            int run = need > 1 ? gpu_run(gf, n->ngpus, need, st) : -1;
            for (uint16_t g = run >= 0 ? (uint16_t)run : 0; g < n->ngpus && need; g++)
                if (gf[g] == 1000) {
                    out->slots[out->nslots++] = (dr_slot_t){p->node[i], g, 1000};
                    need--;
                }
            if (need)
                return DR_ENOSPC;
        }
    }
    return DR_OK;
}

bool dr_place_fits_quick(const dr_cluster_t *c, const dr_job_req_t *r, dr_typemask_t allowed)
{
    if (r->gpus_per_node == 0)
        return true;
    uint64_t need = r->nodes == 0 ? (uint64_t)r->gpus_per_node * 1000
                                  : (uint64_t)r->nodes * r->gpus_per_node * r->gpu_milli;
    for (size_t t = 0; t < c->ntypes; t++) {
        if (!(allowed & (1ULL << t)) || c->milli_free_of_type[t] < need)
            continue;
        dr_ledger_q_t root = dr_ledger_max(c, (int)t);
        if (r->nodes == 0 ? root.idle >= 1
                          : (r->gpu_milli < 1000 ? root.milli >= r->gpu_milli
                                                 : root.idle >= r->gpus_per_node))
            return true;
    }
    return false;
}

/* Build, book and describe the allocation of a pick. */
static int finish(dr_cluster_t *c, const dr_job_req_t *r, int t, dr_place_strategy_t st,
                  const dr_pick_t *p, dr_alloc_t *out)
{
    int rc = build_alloc(c, r, t, st, p, out);
    if (rc == DR_OK && dr_cluster_take(c, out, NULL) != DR_OK)
        rc = DR_ENOSPC;
    if (rc == DR_OK)
        dr_alloc_describe(c, out);
    else
        dr_alloc_free(out);
    return rc;
}

static int place_on(dr_cluster_t *c, const dr_job_req_t *r, int t, dr_place_strategy_t st,
                    dr_alloc_t *out)
{
    dr_pick_t p = {0};
    int rc;
    if (t < 0)
        rc = pick_cpu(c, r, &p);
    else if (r->nodes == 0)
        rc = pick_flex(c, r, t, st, &p);
    else
        rc = pick_gang(c, r, t, st, &p);
    if (rc == DR_OK)
        rc = finish(c, r, t, st, &p, out);
    dr_pick_free(&p);
    return rc;
}

static void free_packer(void *p)
{
    dr_packer_free(p);
}

/* A single-node request placed by a packing policy. */
static int place_packed(dr_cluster_t *c, const dr_job_req_t *r, dr_typemask_t allowed,
                        const dr_place_opts_t *o, dr_alloc_t *out)
{
    dr_packer_t *pk = o->packer;
    if (!pk) {
        unsigned k = o->strategy == DR_PLACE_FGD ? 0 : 1;
        pk = dr_cluster_packer(c, k);
        if (!pk) {
            if (dr_packer_create(&pk, k ? "drover" : "fgd", c, 0, NULL) != DR_OK)
                return DR_ENOMEM;
            dr_packer_count_placed_only(pk, true);
            dr_cluster_set_packer(c, k, pk, free_packer);
        }
    }
    dr_pack_req_t pr = {.cpu_milli = r->cpu_milli_per_node,
                        .mem_mb = r->mem_mb_per_node,
                        .ngpus = r->gpus_per_node,
                        .gpu_milli = r->gpus_per_node ? r->gpu_milli : 0,
                        .allowed = r->types ? allowed & r->types : allowed,
                        .nodeset = r->nodeset};
    int rc = dr_packer_place(pk, c, &pr, out);
    if (rc == DR_OK)
        dr_alloc_describe(c, out);
    return rc;
}

/* A single-node task naming its input shard (any strategy). */
static int place_shard(dr_cluster_t *c, const dr_job_req_t *r, dr_typemask_t allowed,
                       const dr_place_opts_t *o, dr_place_strategy_t st, dr_alloc_t *out)
{
    if (r->gpus_per_node && !dr_place_fits_quick(c, r, allowed))
        return DR_ENOSPC;
    dr_pick_t p = {0};
    int t = -1;
    int rc = dr_place_shard_pick(c, r, allowed, o, &t, &p);
    if (rc == DR_OK)
        rc = finish(c, r, t, st == DR_PLACE_FIRST_FIT ? st : DR_PLACE_BEST_FIT, &p, out);
    dr_pick_free(&p);
    return rc;
}

/* Could type t take k whole GPUs on one node without breaking a fully idle
 * node (a partly used node with k idle, or a node of exactly k GPUs)?  An
 * upper bound: CPU, memory and hidden nodes are not looked at. */
static bool fits_unbroken(const dr_cluster_t *c, int t, uint32_t k)
{
    return k >= 1 && k <= dr_ledger_max_gpus(c, t) &&
           (dr_ledger_max(c, t).pidle >= k || dr_ledger_bucket_count(c, t, k) > 0);
}

int dr_place(dr_cluster_t *c, const dr_job_req_t *r, dr_typemask_t allowed,
             const dr_place_opts_t *o, dr_alloc_t *out)
{
    dr_place_strategy_t st = o ? o->strategy : DR_PLACE_FIRST_FIT;
    memset(out, 0, sizeof *out);
    if (!dr_cluster_finalized(c))
        return DR_ESTATE;
    if (o && o->gate && r->gpus_per_node && !(allowed &= o->gate(o->gate_ud, r)))
        return DR_ENOSPC; /* no type has room under the job's account limits */
    if (r->shard && r->nodes == 1)
        return place_shard(c, r, allowed, o, st, out);
    if (st == DR_PLACE_FGD || st == DR_PLACE_PACK) {
        if (r->nodes == 1)
            return place_packed(c, r, allowed, o, out);
        st = DR_PLACE_BEST_FIT; /* gangs and --gpus=N */
    }
    if (r->gpus_per_node == 0)
        return place_on(c, r, -1, st, out);
    if (!dr_place_fits_quick(c, r, allowed))
        return DR_ENOSPC;
    dr_typemask_t tried = 0;
    dr_typemask_t present = c->ntypes >= 64 ? ~0ULL : (1ULL << c->ntypes) - 1;
    /* the user's order of preference first (--gpu-type H100,A100) */
    for (unsigned k = 0; k < DR_TYPE_PREFS && r->pref[k]; k++) {
        unsigned t = r->pref[k] - 1u;
        if (t >= c->ntypes || !(allowed >> t & 1) || (tried >> t & 1))
            continue;
        tried |= 1ULL << t;
        int rc = place_on(c, r, (int)t, st, out);
        if (rc != DR_ENOSPC)
            return rc;
    }
    dr_typemask_t cand = allowed & present & ~tried;
    if (st == DR_PLACE_BEST_FIT && !(o && o->type_order) && r->gpu_milli == 1000 && r->nodes <= 1 &&
        (cand & (cand - 1))) {
        /* whole-node protection across types: with no type preference, a
         * type where the job fits without breaking a fully idle node first */
        for (size_t t = 0; t < c->ntypes; t++) {
            if (!(cand & (1ULL << t)) || !fits_unbroken(c, (int)t, r->gpus_per_node))
                continue;
            tried |= 1ULL << t;
            int rc = place_on(c, r, (int)t, st, out);
            if (rc != DR_ENOSPC)
                return rc;
        }
    }
    size_t nt = o && o->type_order ? o->ntype_order : c->ntypes;
    for (size_t i = 0; i < nt; i++) {
        int t = o && o->type_order ? o->type_order[i] : (int)i;
        if (t < 0 || (size_t)t >= c->ntypes || !(allowed & (1ULL << t)) || (tried & (1ULL << t)))
            continue;
        int rc = place_on(c, r, t, st, out);
        if (rc != DR_ENOSPC)
            return rc;
    }
    return DR_ENOSPC;
}
