/* cluster_index.h - private structures of the cluster ledger's index,
 * shared by ledger.c (its upkeep and every query), cluster.c (building and
 * freeing it) and cluster_topo.c (the topology groups and shards).  Nothing
 * outside src/core includes it: placement and the policies go through the
 * ledger functions of cluster.h. */
#ifndef DROVER_CORE_CLUSTER_INDEX_H
#define DROVER_CORE_CLUSTER_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/util.h"

#define DR_NIL DR_LEDGER_NIL

/* Per position: the largest idle-GPU count, free share on one GPU, and free
 * CPU below it.  Each is an upper bound, so the conjunction prunes. */
typedef struct dr_seg {
    uint16_t idle;
    uint16_t milli;
    uint16_t part;  /* largest free share on a partly used GPU */
    uint16_t pidle; /* largest idle-GPU count on a node that is partly in use */
    uint32_t cpu;
} dr_seg_t;

typedef struct dr_segtree {
    size_t n, size; /* positions, leaves (power of two) */
    uint32_t *pos2node;
    dr_seg_t *seg; /* 1-based heap layout, leaves at [size, size+n) */
} dr_segtree_t;

typedef struct dr_buckets {
    uint16_t maxg;
    uint32_t *head;  /* [idle] -> first node, DR_NIL if empty */
    uint32_t *count; /* [idle] -> nodes in bucket */
    uint32_t nfree;  /* UP nodes with every GPU idle (whole-node protection) */
} dr_buckets_t;

/* Topology groups (cluster_topo.c): per GPU type, the nodes that share a
 * multi-node NVLink domain or a leaf switch, with a histogram of their
 * bucket keys kept current by dr_cluster_reindex, so a gang can tell which
 * domain or leaf has room without visiting nodes. */
enum { DR_GRP_NVL = DR_LEDGER_NVL, DR_GRP_LEAF = DR_LEDGER_LEAF };
typedef dr_ledger_grp_t dr_topo_grp_t; /* cluster.h: what placement reads of it */

/* Distinct node shapes with their counts: what dr_cluster_req_possible
 * checks, so a submit costs O(shapes), not O(nodes). */
typedef struct dr_node_shape {
    int32_t type; /* -1 for nodes without GPUs */
    uint16_t ngpus;
    uint32_t cpu_milli;
    uint64_t mem_mb;
    uint64_t count;
} dr_node_shape_t;

struct dr_cluster_index {
    bool built;
    dr_node_shape_t *shapes;
    size_t nshapes, shapes_cap;
    dr_strtab_t node_names, switch_names, nvl_names;
    dr_segtree_t tree[DR_MAX_GPU_TYPES + 1]; /* [ntypes..] unused; [DR_MAX_GPU_TYPES] = all nodes */
    dr_buckets_t buckets[DR_MAX_GPU_TYPES + 1];
    uint32_t *node_pos;    /* node -> position in its type's tree */
    uint32_t *node_allpos; /* node -> position in the all-node tree */
    uint32_t *bnext, *bprev;
    uint16_t *bkey; /* node -> bucket it is linked in */
    /* The packers dr_place keeps for DR_PLACE_FGD and DR_PLACE_PACK (they
     * remember the request shapes seen), made on first use by placement.c
     * and freed with the cluster through packer_free. */
    void *packers[DR_CLUSTER_NPACKERS];
    void (*packer_free)(void *packer);
    /* topology groups, sorted by (type, kind, id); empty without topology */
    dr_topo_grp_t *grps;
    size_t ngrps;
    uint32_t grp_range[DR_MAX_GPU_TYPES][2][2]; /* [type][kind] -> {first group, count} */
    uint32_t *grp_nodes;
    uint32_t *grp_hist;
    uint32_t *node_grp[2]; /* node -> its NVLink / leaf group, DR_NIL if none */
    /* data shards: names (ids = cluster->shards) and the round-robin cursor
     * (position in each type's tree) for tasks whose shard is not held */
    dr_strtab_t shard_names;
    uint32_t rr_pos[DR_MAX_GPU_TYPES + 1]; /* [DR_MAX_GPU_TYPES]: CPU-only tasks */
};

/* cluster_topo.c: build the groups (at finalize), free them, and follow a
 * node's bucket key from old to k. */
int dr_cluster_topo_build(dr_cluster_t *c);
void dr_cluster_topo_free(struct dr_cluster_index *ix);
static inline void dr_cluster_topo_move(struct dr_cluster_index *ix, uint32_t node, uint16_t old,
                                        uint16_t k)
{
    for (int kind = 0; kind < 2; kind++) {
        uint32_t g = ix->node_grp[kind][node];
        if (g == DR_NIL)
            continue;
        dr_topo_grp_t *gp = &ix->grps[g];
        ix->grp_hist[gp->hist + old]--;
        ix->grp_hist[gp->hist + k]++;
        gp->idle = gp->idle + k - old;
    }
}
/* Copy the shard holdings of src into dst (names and node sets). */
int dr_cluster_shards_copy(dr_cluster_t *dst, const dr_cluster_t *src);
void dr_cluster_shards_free(dr_cluster_t *c);

/* ledger.c: re-index one node after its ledger, state or hidden flag
 * changed; build the trees, buckets and groups (at finalize: DR_ENOMEM
 * leaves a partial index to free); free them. */
void dr_cluster_reindex(dr_cluster_t *c, uint32_t node);
int dr_ledger_index_build(dr_cluster_t *c);
void dr_ledger_index_free(struct dr_cluster_index *ix);
/* Create c->index (names only, nothing built) if it does not exist yet. */
int dr_cluster_index_alloc(dr_cluster_t *c);

#endif
