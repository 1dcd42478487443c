/* nodeset.c - the cluster's partitions, node features and interned node
 * sets (partition.h): their storage, copy and lookup.  Restrictions built
 * from them are constraint.c's; placement reads the sets through
 * dr_node_fits (ledger.c). */
#include <stdlib.h>
#include <string.h>

#include "core/nodeset_priv.h"
#include "drover/util.h"

static struct dr_cluster_sets *sets_of(dr_cluster_t *c)
{
    if (!c->sets)
        c->sets = calloc(1, sizeof *c->sets);
    return c->sets;
}

static void nodeset_free(dr_nodeset_t *s)
{
    free(s->bits);
    free(s->shapes);
}

void dr_cluster_sets_free(dr_cluster_t *c)
{
    struct dr_cluster_sets *S = c->sets;
    if (!S)
        return;
    for (size_t i = 0; i < S->nsets; i++)
        nodeset_free(&S->sets[i]);
    free(S->sets);
    for (size_t i = 0; i < S->nparts; i++)
        free(S->parts[i].name);
    free(S->parts);
    dr_strtab_free(&S->features);
    free(S->node_feat);
    for (size_t i = 0; i < DR_RESTRICT_CACHE; i++)
        free(S->cache[i].key);
    free(S);
    c->sets = NULL;
}

static int nodeset_copy(dr_nodeset_t *d, const dr_nodeset_t *s)
{
    *d = *s;
    d->bits = malloc((s->nwords ? s->nwords : 1) * sizeof *d->bits);
    d->shapes = malloc((s->nshapes ? s->nshapes : 1) * sizeof *d->shapes);
    if (!d->bits || !d->shapes) {
        nodeset_free(d);
        return DR_ENOMEM;
    }
    if (s->nwords)
        memcpy(d->bits, s->bits, s->nwords * sizeof *d->bits);
    if (s->nshapes)
        memcpy(d->shapes, s->shapes, s->nshapes * sizeof *d->shapes);
    return DR_OK;
}

/* The restriction cache is not copied: it refills on use. */
int dr_cluster_sets_copy(dr_cluster_t *dst, const dr_cluster_t *src)
{
    const struct dr_cluster_sets *S = src->sets;
    if (!S)
        return DR_OK;
    struct dr_cluster_sets *D = sets_of(dst);
    if (!D)
        return DR_ENOMEM;
    D->sets = calloc(S->nsets ? S->nsets : 1, sizeof *D->sets);
    D->parts = calloc(S->nparts ? S->nparts : 1, sizeof *D->parts);
    D->node_feat = calloc(S->node_feat_cap ? S->node_feat_cap : 1, sizeof *D->node_feat);
    if (!D->sets || !D->parts || !D->node_feat)
        return DR_ENOMEM;
    D->sets_cap = S->nsets ? S->nsets : 1;
    D->parts_cap = S->nparts ? S->nparts : 1;
    D->node_feat_cap = S->node_feat_cap ? S->node_feat_cap : 1;
    for (; D->nsets < S->nsets; D->nsets++)
        if (nodeset_copy(&D->sets[D->nsets], &S->sets[D->nsets]) != DR_OK)
            return DR_ENOMEM;
    for (; D->nparts < S->nparts; D->nparts++) {
        D->parts[D->nparts] = S->parts[D->nparts];
        if (!(D->parts[D->nparts].name = dr_strdup(S->parts[D->nparts].name)))
            return DR_ENOMEM;
    }
    if (S->node_feat_cap)
        memcpy(D->node_feat, S->node_feat, S->node_feat_cap * sizeof *D->node_feat);
    return dr_strtab_copy(&D->features, &S->features) != 0 ? DR_ENOMEM : DR_OK;
}

/* --- node sets --- */

int dr_cluster_nodeset_intern(dr_cluster_t *c, const uint64_t *bits, dr_err_t *err)
{
    struct dr_cluster_sets *S = sets_of(c);
    if (!S)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    size_t nw = (c->nnodes + 63) / 64;
    for (size_t i = 0; i < S->nsets; i++)
        if (S->sets[i].nwords == nw &&
            (nw == 0 || memcmp(S->sets[i].bits, bits, nw * sizeof *bits) == 0))
            return (int)i + 1;
    if (S->nsets >= DR_MAX_NODESETS)
        return dr_err_set(err, DR_ELIMIT,
                          "more than %d distinct node sets (partition and constraint "
                          "combinations) on this cluster",
                          DR_MAX_NODESETS);
    dr_nodeset_t s = {0};
    s.nwords = nw;
    s.bits = malloc((nw ? nw : 1) * sizeof *s.bits);
    if (!s.bits)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    if (nw)
        memcpy(s.bits, bits, nw * sizeof *bits);
    size_t cap = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        if (!dr_nodeset_bit(&s, (uint32_t)i))
            continue;
        const dr_node_t *n = &c->nodes[i];
        s.count++;
        if (n->ngpus && n->type < DR_MAX_GPU_TYPES)
            s.types |= (dr_typemask_t)1 << n->type;
        dr_node_shape_t sh = {n->ngpus ? n->type : -1, n->ngpus, n->cpu_milli, n->mem_mb, 1};
        size_t k = 0;
        while (k < s.nshapes &&
               !(s.shapes[k].type == sh.type && s.shapes[k].ngpus == sh.ngpus &&
                 s.shapes[k].cpu_milli == sh.cpu_milli && s.shapes[k].mem_mb == sh.mem_mb))
            k++;
        if (k < s.nshapes)
            s.shapes[k].count++;
        else if (DR_PUSH(s.shapes, s.nshapes, cap, sh) != 0)
            goto oom;
    }
    if (DR_PUSH(S->sets, S->nsets, S->sets_cap, s) != 0)
        goto oom;
    return (int)S->nsets;
oom:
    nodeset_free(&s);
    return dr_err_set(err, DR_ENOMEM, "out of memory");
}

bool dr_nodeset_has(const dr_cluster_t *c, uint32_t set, uint32_t node)
{
    if (!set)
        return true;
    const dr_nodeset_t *s = dr_nodeset_get(c, set);
    return s && dr_nodeset_bit(s, node);
}

uint64_t dr_nodeset_count(const dr_cluster_t *c, uint32_t set)
{
    const dr_nodeset_t *s = dr_nodeset_get(c, set);
    return set == 0 ? c->nnodes : s ? s->count : 0;
}

dr_typemask_t dr_nodeset_types(const dr_cluster_t *c, uint32_t set)
{
    const dr_nodeset_t *s = dr_nodeset_get(c, set);
    return s ? s->types : 0;
}

/* --- partitions --- */

const char *dr_part_state_name(dr_part_state_t s)
{
    switch (s) {
    case DR_PART_UP: return "UP";
    case DR_PART_DOWN: return "DOWN";
    case DR_PART_DRAIN: return "DRAIN";
    case DR_PART_INACTIVE: return "INACTIVE";
    }
    return "?";
}

int dr_cluster_find_partition(const dr_cluster_t *c, const char *name)
{
    for (size_t i = 0; c->sets && i < c->sets->nparts; i++)
        if (strcmp(c->sets->parts[i].name, name) == 0)
            return (int)i;
    return -1;
}

size_t dr_cluster_npartitions(const dr_cluster_t *c)
{
    return c->sets ? c->sets->nparts : 0;
}

const dr_partition_t *dr_cluster_partition(const dr_cluster_t *c, size_t i)
{
    return c->sets && i < c->sets->nparts ? &c->sets->parts[i] : NULL;
}

int dr_cluster_add_partition(dr_cluster_t *c, const dr_partition_t *p, const uint32_t *nodes,
                             size_t n, dr_err_t *err)
{
    if (dr_cluster_find_partition(c, p->name) >= 0)
        return dr_err_set(err, DR_EINVAL, "partition '%.64s' is defined twice", p->name);
    for (size_t i = 0; p->is_default && c->sets && i < c->sets->nparts; i++)
        if (c->sets->parts[i].is_default)
            return dr_err_set(err, DR_EINVAL,
                              "partition '%.64s': '%.64s' is already the default partition",
                              p->name, c->sets->parts[i].name);
    struct dr_cluster_sets *S = sets_of(c);
    uint64_t *bits = calloc((c->nnodes + 63) / 64 + 1, sizeof *bits);
    if (!S || !bits) {
        free(bits);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        if (nodes[i] < c->nnodes)
            bits[nodes[i] / 64] |= (uint64_t)1 << (nodes[i] % 64);
    int set = n ? dr_cluster_nodeset_intern(c, bits, err) : 0;
    free(bits);
    if (set < 0)
        return set;
    dr_partition_t q = *p;
    q.nodeset = (uint32_t)set;
    if (!(q.name = dr_strdup(p->name)) || DR_PUSH(S->parts, S->nparts, S->parts_cap, q) != 0) {
        free(q.name);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    return (int)S->nparts - 1;
}

/* --- features --- */

int dr_cluster_feature(dr_cluster_t *c, const char *name, dr_err_t *err)
{
    struct dr_cluster_sets *S = sets_of(c);
    if (!S)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    int64_t id = dr_strtab_find(&S->features, name);
    if (id >= 0)
        return (int)id;
    if (S->features.n >= DR_MAX_FEATURES)
        return dr_err_set(err, DR_ELIMIT, "feature '%.64s': a cluster has at most %d features",
                          name, DR_MAX_FEATURES);
    id = dr_strtab_intern(&S->features, name);
    return id < 0 ? dr_err_set(err, DR_ENOMEM, "out of memory") : (int)id;
}

int dr_cluster_find_feature(const dr_cluster_t *c, const char *name)
{
    return c->sets ? (int)dr_strtab_find(&c->sets->features, name) : -1;
}

size_t dr_cluster_nfeatures(const dr_cluster_t *c)
{
    return c->sets ? c->sets->features.n : 0;
}

const char *dr_cluster_feature_name(const dr_cluster_t *c, size_t id)
{
    return c->sets && id < c->sets->features.n ? dr_strtab_get(&c->sets->features, (uint32_t)id)
                                               : NULL;
}

int dr_cluster_node_add_feature(dr_cluster_t *c, uint32_t node, uint32_t feature, dr_err_t *err)
{
    struct dr_cluster_sets *S = sets_of(c);
    if (!S || node >= c->nnodes || feature >= DR_MAX_FEATURES)
        return dr_err_set(err, S ? DR_EINVAL : DR_ENOMEM, "feature: no node %u or feature %u", node,
                          feature);
    size_t old = S->node_feat_cap;
    if (dr_grow((void **)&S->node_feat, &S->node_feat_cap, node + 1, sizeof *S->node_feat) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    memset(S->node_feat + old, 0, (S->node_feat_cap - old) * sizeof *S->node_feat);
    S->node_feat[node] |= (uint64_t)1 << feature;
    return DR_OK;
}

bool dr_node_has_feature(const dr_cluster_t *c, uint32_t node, uint32_t feature)
{
    return c->sets && node < c->sets->node_feat_cap && feature < DR_MAX_FEATURES &&
           (c->sets->node_feat[node] >> feature & 1);
}
