/* cluster_topo.c - the parts of the cluster index that describe where
 * nodes sit and what data they hold.
 *
 * Topology groups: for each GPU type, the nodes sharing a multi-node NVLink
 * domain and the nodes sharing a leaf switch, each group with a histogram
 * of its nodes' idle-GPU counts that dr_cluster_reindex keeps current in
 * O(1).  A multi-node job can then find a domain or leaf with room by
 * reading one small histogram per group, not by visiting every node: that
 * keeps topology-aware placement cheap on a 10,000-node cluster.  Clusters
 * without topology build no groups and pay nothing.
 *
 * Data shards: each shard keeps the sorted list of nodes holding a copy, so
 * a task naming its input finds the holders in O(holders). */
#include <stdlib.h>
#include <string.h>

#include "core/cluster_index.h"
#include "drover/cluster.h"
#include "drover/util.h"

/* --- topology groups --- */

void dr_cluster_topo_free(struct dr_cluster_index *ix)
{
    free(ix->grps);
    free(ix->grp_nodes);
    free(ix->grp_hist);
    free(ix->node_grp[0]);
    free(ix->node_grp[1]);
    ix->grps = NULL;
    ix->grp_nodes = ix->grp_hist = NULL;
    ix->node_grp[0] = ix->node_grp[1] = NULL;
    ix->ngrps = 0;
    memset(ix->grp_range, 0, sizeof ix->grp_range);
}

typedef struct member {
    uint16_t type;
    uint16_t kind;
    int32_t id;
    uint32_t node;
} member_t;

static int cmp_member(const void *a, const void *b)
{
    const member_t *x = a, *y = b;
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Build the groups from the nodes' switches and NVLink domains (bucket keys
 * must already be set).  A one-node NVLink domain makes no group: a job on
 * one node needs none. */
int dr_cluster_topo_build(dr_cluster_t *c)
{
    struct dr_cluster_index *ix = c->index;
    dr_cluster_topo_free(ix);
    if (c->nswitches == 0 && c->nnvl == 0)
        return DR_OK;
    member_t *m = malloc((2 * c->nnodes + 1) * sizeof *m);
    if (!m)
        return DR_ENOMEM;
    size_t nm = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *n = &c->nodes[i];
        if (!n->ngpus)
            continue;
        if (n->nvl_domain != DR_NONE)
            m[nm++] = (member_t){n->type, DR_GRP_NVL, n->nvl_domain, (uint32_t)i};
        if (n->switch_id != DR_NONE)
            m[nm++] = (member_t){n->type, DR_GRP_LEAF, n->switch_id, (uint32_t)i};
    }
    qsort(m, nm, sizeof *m, cmp_member);
    /* count groups and histogram room */
    size_t ngrps = 0, nhist = 0, nmembers = 0;
    for (size_t i = 0, j; i < nm; i = j) {
        uint16_t maxg = 0;
        for (j = i;
             j < nm && m[j].type == m[i].type && m[j].kind == m[i].kind && m[j].id == m[i].id; j++)
            if (c->nodes[m[j].node].ngpus > maxg)
                maxg = c->nodes[m[j].node].ngpus;
        if (m[i].kind == DR_GRP_NVL && j - i < 2)
            continue;
        ngrps++;
        nhist += maxg + 1u;
        nmembers += j - i;
    }
    int rc = DR_OK;
    if (ngrps == 0)
        goto out;
    size_t nn = c->nnodes ? c->nnodes : 1;
    ix->grps = calloc(ngrps, sizeof *ix->grps);
    ix->grp_nodes = malloc(nmembers * sizeof *ix->grp_nodes);
    ix->grp_hist = calloc(nhist, sizeof *ix->grp_hist);
    ix->node_grp[0] = malloc(nn * sizeof *ix->node_grp[0]);
    ix->node_grp[1] = malloc(nn * sizeof *ix->node_grp[1]);
    if (!ix->grps || !ix->grp_nodes || !ix->grp_hist || !ix->node_grp[0] || !ix->node_grp[1]) {
        dr_cluster_topo_free(ix);
        rc = DR_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < nn; i++)
        ix->node_grp[0][i] = ix->node_grp[1][i] = DR_NIL;
    size_t g = 0, k = 0, h = 0;
    for (size_t i = 0, j; i < nm; i = j) {
        for (j = i;
             j < nm && m[j].type == m[i].type && m[j].kind == m[i].kind && m[j].id == m[i].id; j++)
            ;
        if (m[i].kind == DR_GRP_NVL && j - i < 2)
            continue;
        dr_topo_grp_t *gp = &ix->grps[g];
        gp->id = m[i].id;
        gp->type = m[i].type;
        gp->first = (uint32_t)k;
        gp->n = (uint32_t)(j - i);
        for (size_t q = i; q < j; q++)
            if (c->nodes[m[q].node].ngpus > gp->maxg)
                gp->maxg = c->nodes[m[q].node].ngpus;
        gp->hist = h;
        h += gp->maxg + 1u;
        for (size_t q = i; q < j; q++) {
            uint32_t nd = m[q].node;
            uint16_t key = ix->bkey[nd];
            ix->grp_nodes[k++] = nd;
            ix->node_grp[m[i].kind][nd] = (uint32_t)g;
            ix->grp_hist[gp->hist + key]++;
            gp->idle += key;
        }
        uint32_t *r = ix->grp_range[m[i].type][m[i].kind];
        if (r[1] == 0)
            r[0] = (uint32_t)g;
        r[1]++;
        g++;
    }
    ix->ngrps = ngrps;
out:
    free(m);
    return rc;
}

/* --- data shards --- */

void dr_cluster_shards_free(dr_cluster_t *c)
{
    for (size_t i = 0; i < c->nshards; i++)
        free(c->shards[i].nodes);
    free(c->shards);
    c->shards = NULL;
    c->nshards = c->shards_cap = 0;
    if (c->index)
        dr_strtab_free(&c->index->shard_names);
}

int dr_cluster_find_shard(const dr_cluster_t *c, const char *name)
{
    return c->index ? (int)dr_strtab_find(&c->index->shard_names, name) : -1;
}

int dr_cluster_shard(dr_cluster_t *c, const char *name, dr_err_t *err)
{
    if (dr_cluster_index_alloc(c) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    int64_t id = dr_strtab_find(&c->index->shard_names, name);
    if (id >= 0)
        return (int)id;
    if (c->nshards >= INT32_MAX - 1)
        return dr_err_set(err, DR_ELIMIT, "shard '%.64s': too many shards", name);
    id = dr_strtab_intern(&c->index->shard_names, name);
    dr_shard_t sh = {NULL, NULL, 0, 0};
    if (id < 0 || DR_PUSH(c->shards, c->nshards, c->shards_cap, sh) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    c->shards[id].name = c->index->shard_names.strs[id];
    return (int)id;
}

/* First position in sh->nodes not below node. */
static uint32_t shard_lower(const dr_shard_t *sh, uint32_t node)
{
    uint32_t lo = 0, hi = sh->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sh->nodes[mid] < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int dr_cluster_node_add_shard(dr_cluster_t *c, uint32_t node, uint32_t shard, dr_err_t *err)
{
    if (node >= c->nnodes)
        return dr_err_set(err, DR_EINVAL, "node %u does not exist", node);
    if (shard >= c->nshards)
        return dr_err_set(err, DR_EINVAL, "shard %u does not exist", shard);
    dr_shard_t *sh = &c->shards[shard];
    uint32_t at = shard_lower(sh, node);
    if (at < sh->n && sh->nodes[at] == node)
        return DR_OK;
    if (sh->n == sh->cap) {
        uint32_t nc = sh->cap ? sh->cap * 2 : 4;
        uint32_t *a = realloc(sh->nodes, nc * sizeof *a);
        if (!a)
            return dr_err_set(err, DR_ENOMEM, "out of memory");
        sh->nodes = a;
        sh->cap = nc;
    }
    memmove(sh->nodes + at + 1, sh->nodes + at, (sh->n - at) * sizeof *sh->nodes);
    sh->nodes[at] = node;
    sh->n++;
    return DR_OK;
}

void dr_cluster_node_drop_shard(dr_cluster_t *c, uint32_t node, uint32_t shard)
{
    if (shard >= c->nshards)
        return;
    dr_shard_t *sh = &c->shards[shard];
    uint32_t at = shard_lower(sh, node);
    if (at >= sh->n || sh->nodes[at] != node)
        return;
    memmove(sh->nodes + at, sh->nodes + at + 1, (sh->n - at - 1) * sizeof *sh->nodes);
    sh->n--;
}

bool dr_node_has_shard(const dr_cluster_t *c, uint32_t node, uint32_t shard)
{
    if (shard >= c->nshards)
        return false;
    const dr_shard_t *sh = &c->shards[shard];
    uint32_t at = shard_lower(sh, node);
    return at < sh->n && sh->nodes[at] == node;
}

int dr_cluster_shards_copy(dr_cluster_t *dst, const dr_cluster_t *src)
{
    if (src->nshards == 0)
        return DR_OK;
    if (dr_cluster_index_alloc(dst) != DR_OK)
        return DR_ENOMEM;
    for (size_t i = 0; i < src->nshards; i++) {
        const dr_shard_t *s = &src->shards[i];
        if (dr_cluster_shard(dst, s->name, NULL) != (int)i)
            return DR_ENOMEM;
        dr_shard_t *d = &dst->shards[i];
        if (s->n) {
            d->nodes = malloc(s->n * sizeof *d->nodes);
            if (!d->nodes)
                return DR_ENOMEM;
            memcpy(d->nodes, s->nodes, s->n * sizeof *d->nodes);
        }
        d->n = d->cap = s->n;
    }
    return DR_OK;
}
