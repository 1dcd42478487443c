/* placement_topo.c - where placement looks beyond one node: the network
 * tree, NVLink domains and the data a node holds.
 *
 * A multi-node job talks over whatever joins its nodes.  Inside a multi-node
 * NVLink domain (a GB200 NVL72 rack) that is as fast as inside one server;
 * under one leaf switch it is one network hop at full bisection; across
 * leaves it shares oversubscribed uplinks with everyone else.  So best-fit
 * places a multi-node job in one NVLink domain if one has room, else under
 * one leaf switch (the fewest nodes for a --gpus=G job), else under the
 * lowest switch whose subtree has room, using the fewest leaves.  Each
 * choice reads the ledger's topology groups (their idle-GPU counts, kept
 * current by the ledger), so it costs O(groups) rather than O(nodes), and
 * then visits only the chosen group's nodes.
 *
 * Sharded array tasks (video segments) read one input each: a task goes to
 * a node holding its shard when one fits, else round-robin over the nodes
 * that fit, so that remote reads spread over the cluster instead of
 * hammering the lowest-numbered nodes.  Round-robin still keeps the last
 * fully idle node of a type whole when a partly used node can take the task.
 *
 * The allocation records how close its nodes ended up (dr_alloc_t.locality),
 * which a driver may turn into a slowdown (dr_span_slowdown_factor). */
#include <stdlib.h>
#include <string.h>

#include "drover/placement.h"
#include "drover/util.h"
#include "sched/placement_priv.h"

/* --- candidates: sorted by (k1, k2, id) ascending --- */

typedef struct cand {
    uint64_t k1, k2;
    uint32_t id;
} cand_t;

static int cmp_cand(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->k1 != y->k1)
        return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2)
        return x->k2 < y->k2 ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* A node that fits and its idle-GPU count. */
typedef struct fit {
    uint32_t idle;
    uint32_t node;
} fit_t;

static int cmp_fit_asc(const void *a, const void *b)
{
    const fit_t *x = a, *y = b;
    if (x->idle != y->idle)
        return x->idle < y->idle ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int cmp_fit_desc(const void *a, const void *b)
{
    const fit_t *x = a, *y = b;
    if (x->idle != y->idle)
        return x->idle > y->idle ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Nodes of a group that can host `one` (and are not picked yet), sorted.
 * Returns how many, or -1 when out of memory (*out is malloc'd). */
static long fits_of(const dr_cluster_t *c, uint32_t g, const dr_job_req_t *one, const dr_pick_t *p,
                    bool desc, fit_t **out)
{
    uint32_t gn = dr_ledger_group(c, g)->n;
    const uint32_t *nodes = dr_ledger_group_nodes(c, g);
    fit_t *f = malloc((gn ? gn : 1) * sizeof *f);
    if (!f)
        return -1;
    long n = 0;
    for (uint32_t i = 0; i < gn; i++) {
        uint32_t nd = nodes[i];
        bool dup = false;
        for (size_t k = 0; k < p->n && !dup; k++)
            dup = p->node[k] == nd;
        if (!dup && dr_node_fits(c, &c->nodes[nd], one))
            f[n++] = (fit_t){c->nodes[nd].gpus_idle, nd};
    }
    qsort(f, (size_t)n, sizeof *f, desc ? cmp_fit_desc : cmp_fit_asc);
    *out = f;
    return n;
}

/* Gang: up to `want` more nodes of group g, tightest first. */
static int gang_from(const dr_cluster_t *c, uint32_t g, const dr_job_req_t *one, uint32_t k,
                     uint32_t want, dr_pick_t *p)
{
    fit_t *f;
    long n = fits_of(c, g, one, p, false, &f);
    if (n < 0)
        return DR_ENOMEM;
    int rc = DR_OK;
    for (long i = 0; i < n && want > 0 && rc == DR_OK; i++, want--)
        rc = dr_pick_add(p, f[i].node, (uint16_t)k);
    free(f);
    return rc;
}

/* Flex: take up to *rem GPUs from group g, the largest nodes first and the
 * last piece on the tightest node that holds it. */
static int flex_from(const dr_cluster_t *c, uint32_t g, const dr_job_req_t *any, uint32_t *rem,
                     dr_pick_t *p)
{
    fit_t *f;
    long n = fits_of(c, g, any, p, true, &f);
    if (n < 0)
        return DR_ENOMEM;
    int rc = DR_OK;
    for (long i = 0; i<n && * rem> 0 && rc == DR_OK; i++) {
        if (f[i].idle >= *rem) {
            long j = i;
            while (j + 1 < n && f[j + 1].idle >= *rem)
                j++;
            while (j > i && f[j - 1].idle == f[j].idle) /* lowest node among equals */
                j--;
            rc = dr_pick_add(p, f[j].node, (uint16_t)*rem);
            *rem = 0;
        } else {
            rc = dr_pick_add(p, f[i].node, (uint16_t)f[i].idle);
            *rem -= f[i].idle;
        }
    }
    free(f);
    return rc;
}

/* Is switch s the leaf `leaf` or one of its ancestors? */
static bool under(const dr_cluster_t *c, int32_t leaf, int32_t s)
{
    for (int32_t a = leaf; a != DR_NONE; a = c->switches[a].parent)
        if (a == s)
            return true;
    return false;
}

/* What each group of a range can give the request: for a gang, its nodes
 * with k idle GPUs; for --gpus=G (flex), its idle GPUs, or (fewest = true)
 * the fewest of its nodes that hold them (UINT64_MAX: it cannot). */
static void groups_room(const dr_cluster_t *c, const dr_ledger_grp_t *gs, uint32_t first,
                        uint32_t n, const dr_job_req_t *r, bool fewest, uint64_t *room)
{
    if (r->nodes != 0)
        dr_ledger_groups_fit(c, first, n, r->gpus_per_node, room);
    else if (fewest)
        dr_ledger_groups_min_nodes(c, first, n, r->gpus_per_node, room);
    else
        for (uint32_t i = 0; i < n; i++)
            room[i] = gs[i].idle;
}

/* One group of `kind` (NVLink domain or leaf) that has room, best first. */
static int pick_in_groups(dr_cluster_t *c, const dr_job_req_t *r, int t, dr_ledger_grp_kind_t kind,
                          dr_pick_t *p)
{
    uint32_t first, ngrp;
    const dr_ledger_grp_t *gs = dr_ledger_groups(c, t, kind, &first, &ngrp);
    if (ngrp == 0)
        return DR_ENOENT;
    bool flex = r->nodes == 0;
    uint32_t n = r->nodes, k = r->gpus_per_node;
    /* one block: the candidates, then each group's room */
    cand_t *cs = malloc(ngrp * (sizeof *cs + sizeof(uint64_t)));
    if (!cs)
        return DR_ENOMEM;
    uint64_t *room = (uint64_t *)(cs + ngrp);
    groups_room(c, gs, first, ngrp, r, true, room);
    size_t nc = 0;
    for (uint32_t i = 0; i < ngrp; i++) {
        if (flex ? room[i] != UINT64_MAX : room[i] >= n) /* fewest nodes / tightest */
            cs[nc++] = (cand_t){room[i], gs[i].idle, first + i};
    }
    qsort(cs, nc, sizeof *cs, cmp_cand);
    dr_job_req_t one = dr_place_node_share(r, t, flex ? 1 : k);
    int rc = DR_ENOENT;
    for (size_t i = 0; i < nc && rc == DR_ENOENT; i++) {
        uint32_t g = cs[i].id;
        p->n = 0;
        uint32_t rem = k;
        int prc = flex ? flex_from(c, g, &one, &rem, p) : gang_from(c, g, &one, k, n, p);
        if (prc != DR_OK)
            rc = prc;
        else if (flex ? rem == 0 : p->n == n)
            rc = DR_OK;
    }
    if (rc != DR_OK)
        p->n = 0;
    free(cs);
    return rc;
}

/* The lowest switch whose subtree has room; its leaves with the most room
 * first, so the job spans as few leaves as it can. */
static int pick_in_tree(dr_cluster_t *c, const dr_job_req_t *r, int t, dr_pick_t *p)
{
    uint32_t first, ngrp;
    const dr_ledger_grp_t *gs = dr_ledger_groups(c, t, DR_LEDGER_LEAF, &first, &ngrp);
    if (ngrp == 0 || c->nswitches == 0)
        return DR_ENOENT;
    bool flex = r->nodes == 0;
    uint32_t n = r->nodes, k = r->gpus_per_node;
    uint64_t need = flex ? k : n;
    /* per leaf: its room; per switch: the room of the leaves under it */
    uint64_t *room = calloc((size_t)ngrp + c->nswitches, sizeof *room), *acc = room + ngrp;
    if (!room)
        return DR_ENOMEM;
    groups_room(c, gs, first, ngrp, r, false, room);
    for (uint32_t i = 0; i < ngrp; i++)
        if (room[i])
            for (int32_t a = c->switches[gs[i].id].parent; a != DR_NONE; a = c->switches[a].parent)
                acc[a] += room[i];
    size_t nsw = 0;
    for (size_t s = 0; s < c->nswitches; s++)
        nsw += acc[s] >= need;
    cand_t *cs = nsw ? malloc((nsw + ngrp) * sizeof *cs) : NULL; /* switches, then leaves */
    if (!cs) {
        free(room);
        return nsw == 0 ? DR_ENOENT : DR_ENOMEM;
    }
    cand_t *lv = cs + nsw;
    size_t nc = 0;
    for (size_t s = 0; s < c->nswitches; s++)
        if (acc[s] >= need) /* lowest level, then tightest */
            cs[nc++] = (cand_t){c->switches[s].level, acc[s], (uint32_t)s};
    qsort(cs, nc, sizeof *cs, cmp_cand);
    dr_job_req_t one = dr_place_node_share(r, t, flex ? 1 : k);
    int rc = DR_ENOENT;
    for (size_t i = 0; i < nc && rc == DR_ENOENT; i++) {
        size_t nl = 0;
        for (uint32_t gi = 0; gi < ngrp; gi++)
            if (room[gi] && under(c, gs[gi].id, (int32_t)cs[i].id))
                lv[nl++] = (cand_t){UINT64_MAX - room[gi], 0, first + gi}; /* most room first */
        qsort(lv, nl, sizeof *lv, cmp_cand);
        p->n = 0;
        uint32_t rem = k;
        int prc = DR_OK;
        for (size_t l = 0; l < nl && prc == DR_OK && (flex ? rem > 0 : p->n < n); l++) {
            uint32_t g = lv[l].id;
            prc = flex ? flex_from(c, g, &one, &rem, p)
                       : gang_from(c, g, &one, k, n - (uint32_t)p->n, p);
        }
        if (prc != DR_OK)
            rc = prc;
        else if (flex ? rem == 0 : p->n == n)
            rc = DR_OK;
    }
    if (rc != DR_OK)
        p->n = 0;
    free(room);
    free(cs);
    return rc;
}

static int topo_pick(dr_cluster_t *c, const dr_job_req_t *r, int t, dr_pick_t *p)
{
    int rc = pick_in_groups(c, r, t, DR_LEDGER_NVL, p);
    if (rc == DR_ENOENT)
        rc = pick_in_groups(c, r, t, DR_LEDGER_LEAF, p);
    if (rc == DR_ENOENT)
        rc = pick_in_tree(c, r, t, p);
    return rc;
}

int dr_place_topo_gang(dr_cluster_t *c, const dr_job_req_t *r, int t, dr_pick_t *p)
{
    return topo_pick(c, r, t, p);
}

int dr_place_topo_flex(dr_cluster_t *c, const dr_job_req_t *r, int t, dr_pick_t *p)
{
    return topo_pick(c, r, t, p);
}

/* --- data shards --- */

/* The next node after position `start` of type tt's tree (wrapping) that
 * admits q and fits `one`; *pos gets its position.  DR_LEDGER_NIL if none. */
static uint32_t rr_find(const dr_cluster_t *c, int tt, size_t start, const dr_ledger_q_t *q,
                        const dr_job_req_t *one, size_t *pos)
{
    size_t from = start;
    uint32_t nd;
    while ((nd = dr_ledger_find(c, tt, &from, q)) != DR_LEDGER_NIL)
        if (dr_node_fits(c, &c->nodes[nd], one)) {
            *pos = from - 1;
            return nd;
        }
    from = 0;
    while ((nd = dr_ledger_find(c, tt, &from, q)) != DR_LEDGER_NIL && from - 1 < start)
        if (dr_node_fits(c, &c->nodes[nd], one)) {
            *pos = from - 1;
            return nd;
        }
    return DR_LEDGER_NIL;
}

/* Round-robin on type t (t < 0: CPU-only over all nodes). */
static uint32_t rr_pick(dr_cluster_t *c, const dr_job_req_t *r, int t)
{
    int tt = t < 0 ? DR_LEDGER_ALL : t;
    size_t npos = dr_ledger_npos(c, tt);
    if (npos == 0)
        return DR_LEDGER_NIL;
    uint32_t cursor = dr_ledger_rr_cursor(c, tt);
    size_t start = cursor < npos ? cursor : 0, pos = 0;
    bool share = r->gpus_per_node && r->gpu_milli < 1000;
    uint16_t k = (uint16_t)r->gpus_per_node;
    dr_ledger_q_t q = {.idle = share ? 0 : k,
                       .milli = share ? (uint16_t)r->gpu_milli : 0,
                       .cpu = r->cpu_milli_per_node};
    dr_job_req_t one = dr_place_node_share(r, t, r->gpus_per_node);
    uint32_t nd = rr_find(c, tt, start, &q, &one, &pos);
    if (nd == DR_LEDGER_NIL)
        return DR_LEDGER_NIL;
    const dr_node_t *n = &c->nodes[nd];
    if (t >= 0 && n->gpus_idle == n->ngpus && (share || k < n->ngpus) &&
        dr_ledger_whole_nodes(c, t) <= 1) {
        /* the last fully idle node: a partly used node that fits, if any */
        dr_ledger_q_t q1 = q, q2 = q;
        if (share) {
            q1.part = (uint16_t)r->gpu_milli; /* an already shared GPU */
            q2.pidle = 1;                     /* an idle GPU on a used node */
        } else {
            q1.pidle = k;
        }
        size_t p1 = 0, p2 = 0;
        uint32_t n1 = rr_find(c, tt, start, &q1, &one, &p1);
        uint32_t n2 = share ? rr_find(c, tt, start, &q2, &one, &p2) : DR_LEDGER_NIL;
        size_t d1 = (p1 + npos - start) % npos, d2 = (p2 + npos - start) % npos;
        if (n1 != DR_LEDGER_NIL && (n2 == DR_LEDGER_NIL || d1 <= d2)) {
            nd = n1;
            pos = p1;
        } else if (n2 != DR_LEDGER_NIL) {
            nd = n2;
            pos = p2;
        }
    }
    dr_ledger_set_rr_cursor(c, tt, (uint32_t)(pos + 1 < npos ? pos + 1 : 0));
    return nd;
}

int dr_place_shard_pick(dr_cluster_t *c, const dr_job_req_t *r, dr_typemask_t allowed,
                        const dr_place_opts_t *o, int *t, dr_pick_t *p)
{
    bool gpu = r->gpus_per_node > 0;
    bool share = gpu && r->gpu_milli < 1000;
    uint16_t take = !gpu ? 0 : share ? 1 : (uint16_t)r->gpus_per_node;
    bool ff = o && o->strategy == DR_PLACE_FIRST_FIT;
    /* a type's rank: its place in the type order (all equal without one) */
    int rank[DR_MAX_GPU_TYPES];
    for (size_t i = 0; i < DR_MAX_GPU_TYPES; i++)
        rank[i] = o && o->type_order ? -1 : 0;
    for (size_t i = 0; o && o->type_order && i < o->ntype_order; i++) {
        int ty = o->type_order[i];
        if (ty >= 0 && ty < DR_MAX_GPU_TYPES && rank[ty] < 0)
            rank[ty] = (int)i;
    }
    /* 1. a node holding the shard */
    if (r->shard != DR_SHARD_UNHELD && r->shard - 1 < c->nshards) {
        const dr_shard_t *sh = &c->shards[r->shard - 1];
        uint32_t best = DR_LEDGER_NIL;
        uint64_t best_key[3] = {0, 0, 0};
        for (uint32_t i = 0; i < sh->n; i++) {
            uint32_t nd = sh->nodes[i];
            const dr_node_t *n = &c->nodes[nd];
            if (gpu && (!n->ngpus || !(allowed & (1ULL << n->type)) || rank[n->type] < 0))
                continue;
            dr_job_req_t one = dr_place_node_share(r, gpu ? n->type : -1, r->gpus_per_node);
            if (!dr_node_fits(c, n, &one))
                continue;
            bool breaks = gpu && n->gpus_idle == n->ngpus && (share || take < n->ngpus);
            uint64_t tight = !gpu    ? n->cpu_free
                             : share ? (n->max_part >= r->gpu_milli ? 0 : 1u << 16) + n->gpus_idle
                                     : n->gpus_idle;
            uint64_t key[3] = {gpu ? (uint64_t)rank[n->type] : 0, ff ? 0 : breaks, ff ? 0 : tight};
            if (best == DR_LEDGER_NIL || key[0] < best_key[0] ||
                (key[0] == best_key[0] &&
                 (key[1] < best_key[1] || (key[1] == best_key[1] && key[2] < best_key[2])))) {
                best = nd;
                memcpy(best_key, key, sizeof key);
            }
        }
        if (best != DR_LEDGER_NIL) {
            *t = gpu ? c->nodes[best].type : -1;
            return dr_pick_add(p, best, take);
        }
    }
    /* 2. round-robin over the nodes that fit, types in order */
    if (!gpu) {
        uint32_t nd = rr_pick(c, r, -1);
        *t = -1;
        return nd == DR_LEDGER_NIL ? DR_ENOSPC : dr_pick_add(p, nd, 0);
    }
    size_t nt = o && o->type_order ? o->ntype_order : c->ntypes;
    for (size_t i = 0; i < nt; i++) {
        int ty = o && o->type_order ? o->type_order[i] : (int)i;
        if (ty < 0 || (size_t)ty >= c->ntypes || !(allowed & (1ULL << ty)))
            continue;
        uint32_t nd = rr_pick(c, r, ty);
        if (nd != DR_LEDGER_NIL) {
            *t = ty;
            return dr_pick_add(p, nd, take);
        }
    }
    return DR_ENOSPC;
}

/* --- what an allocation spans --- */

const char *dr_locality_name(dr_locality_t l)
{
    switch (l) {
    case DR_LOC_NODE: return "node";
    case DR_LOC_NVLINK: return "nvlink";
    case DR_LOC_LEAF: return "leaf";
    case DR_LOC_TREE: return "tree";
    case DR_LOC_NETWORK: return "network";
    default: return "?";
    }
}

/* Walk the allocation's nodes once: common NVLink domain, whether every
 * node has a switch, distinct leaves and their lowest common ancestor. */
typedef struct span {
    bool same_nvl, all_sw;
    uint32_t nleaves;
    int32_t lca;
} span_t;

static span_t alloc_span(const dr_cluster_t *c, const dr_alloc_t *a)
{
    span_t sp = {false, true, 0, DR_NONE};
    if (a->nslots == 0)
        return sp;
    int32_t nvl = c->nodes[a->slots[0].node].nvl_domain;
    sp.same_nvl = nvl != DR_NONE;
    sp.lca = c->nodes[a->slots[0].node].switch_id;
    int32_t recent[32], last = DR_NONE;
    size_t nrecent = 0;
    for (uint32_t i = 0; i < a->nslots; i++) {
        uint32_t nd = a->slots[i].node;
        if (i > 0 && a->slots[i - 1].node == nd)
            continue;
        const dr_node_t *n = &c->nodes[nd];
        sp.same_nvl &= n->nvl_domain == nvl;
        if (n->switch_id == DR_NONE) {
            sp.all_sw = false;
            continue;
        }
        /* a leaf not met before: the last few leaves are remembered (a
         * job spans few), older ones found by looking back */
        bool seen = n->switch_id == last;
        for (size_t k = 0; k < nrecent && !seen; k++)
            seen = recent[k] == n->switch_id;
        for (uint32_t k = 0; k < i && !seen && sp.nleaves > nrecent; k++)
            seen = c->nodes[a->slots[k].node].switch_id == n->switch_id;
        last = n->switch_id;
        if (!seen) {
            if (nrecent < sizeof recent / sizeof *recent)
                recent[nrecent++] = n->switch_id;
            sp.nleaves++;
            while (sp.lca != DR_NONE && !under(c, n->switch_id, sp.lca))
                sp.lca = c->switches[sp.lca].parent;
        }
    }
    return sp;
}

uint32_t dr_alloc_nleaves(const dr_cluster_t *c, const dr_alloc_t *a)
{
    return alloc_span(c, a).nleaves;
}

bool dr_alloc_holds_shard(const dr_cluster_t *c, const dr_alloc_t *a, uint32_t req_shard)
{
    if (req_shard == 0 || req_shard == DR_SHARD_UNHELD)
        return false;
    for (uint32_t i = 0; i < a->nslots; i++)
        if ((i == 0 || a->slots[i - 1].node != a->slots[i].node) &&
            dr_node_has_shard(c, a->slots[i].node, req_shard - 1))
            return true;
    return false;
}

void dr_alloc_describe(const dr_cluster_t *c, dr_alloc_t *a)
{
    a->locality = DR_LOC_NODE;
    a->lca_level = 0;
    if (a->nnodes <= 1)
        return;
    span_t sp = alloc_span(c, a);
    if (sp.same_nvl)
        a->locality = DR_LOC_NVLINK;
    else if (!sp.all_sw || sp.lca == DR_NONE)
        a->locality = DR_LOC_NETWORK;
    else if (sp.nleaves == 1)
        a->locality = DR_LOC_LEAF;
    else {
        a->locality = DR_LOC_TREE;
        uint32_t lv = c->switches[sp.lca].level;
        a->lca_level = (uint8_t)(lv < 255 ? lv : 255);
    }
}

/* --- cross-node slowdown --- */

void dr_span_slowdown_default(dr_span_slowdown_t *s)
{
    memset(s, 0, sizeof *s);
    s->factor[DR_LOC_NODE] = 1;
    s->factor[DR_LOC_NVLINK] = 1;
    s->factor[DR_LOC_LEAF] = 0.9;
    s->factor[DR_LOC_TREE] = 0.8;
    s->factor[DR_LOC_NETWORK] = 0.7;
}

int dr_span_slowdown_parse(const char *spec, dr_span_slowdown_t *s, dr_err_t *err)
{
    dr_span_slowdown_default(s);
    if (!spec || dr_streq_ci(spec, "default"))
        return DR_OK;
    char *buf = dr_strdup(spec);
    if (!buf)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    int rc = DR_OK;
    for (char *w = buf, *next; w && rc == DR_OK; w = next) {
        next = strchr(w, ',');
        if (next)
            *next++ = '\0';
        char *eq = strchr(w, '=');
        double v = 0;
        int l = DR_LOC_NVLINK;
        if (eq)
            *eq = '\0';
        while (l < DR_LOC_N && !dr_streq_ci(w, dr_locality_name((dr_locality_t)l)))
            l++;
        if (!eq || l == DR_LOC_N)
            rc = dr_err_set(err, DR_EINVAL,
                            "span slowdown: '%.64s' is not nvlink=, leaf=, tree= or network=", w);
        else if (dr_parse_double(eq + 1, &v) != 0 || !(v > 0 && v <= 1))
            rc = dr_err_set(err, DR_EINVAL, "span slowdown: %s: '%.64s' is not a factor in (0, 1]",
                            w, eq + 1);
        else
            s->factor[l] = v;
    }
    free(buf);
    return rc;
}

double dr_span_slowdown_factor(const void *ud, const dr_job_t *j, const dr_alloc_t *a)
{
    const dr_span_slowdown_t *s = ud;
    if (!s || a->nnodes <= 1 || a->locality >= DR_LOC_N)
        return 1;
    if (s->measured && j->perf_class < s->nmeasured && s->measured[j->perf_class])
        return 1;
    return s->factor[a->locality];
}
