/* nodeset_priv.h - what the cluster keeps for partitions, node features
 * and node sets (partition.h), shared by nodeset.c (their storage),
 * constraint.c (restrictions), cluster.c (copy, free, what could fit) and
 * ledger.c (dr_node_fits).  Not part of the public API. */
#ifndef DROVER_CORE_NODESET_PRIV_H
#define DROVER_CORE_NODESET_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cluster_index.h"
#include "drover/partition.h"

/* One interned set: a bitmap over the nodes that existed when it was made,
 * and its distinct node shapes (what dr_cluster_req_possible counts). */
typedef struct dr_nodeset {
    uint64_t *bits;
    size_t nwords;
    uint64_t count;
    dr_typemask_t types;
    dr_node_shape_t *shapes;
    size_t nshapes;
} dr_nodeset_t;

#define DR_RESTRICT_CACHE 16

struct dr_cluster_sets {
    dr_nodeset_t *sets;
    size_t nsets, sets_cap;
    dr_partition_t *parts;
    size_t nparts, parts_cap;
    dr_strtab_t features;
    uint64_t *node_feat; /* per node: bit f = feature f */
    size_t node_feat_cap;
    /* the last restrictions computed (an array's tasks all ask the same) */
    struct {
        char *key;
        dr_restrict_t r;
    } cache[DR_RESTRICT_CACHE];
    unsigned cache_next;
};

/* The set behind id (1 + index), NULL for 0 or an unknown id. */
static inline const dr_nodeset_t *dr_nodeset_get(const dr_cluster_t *c, uint32_t set)
{
    return set && c->sets && set <= c->sets->nsets ? &c->sets->sets[set - 1] : NULL;
}

static inline bool dr_nodeset_bit(const dr_nodeset_t *s, uint32_t node)
{
    return (size_t)(node / 64) < s->nwords && (s->bits[node / 64] >> (node % 64) & 1);
}

int dr_cluster_sets_copy(dr_cluster_t *dst, const dr_cluster_t *src);
void dr_cluster_sets_free(dr_cluster_t *c);

#endif
