/* cluster_index.h - private structures of the cluster ledger's index,
 * shared by cluster.c (maintenance) and placement.c (queries). */
#ifndef DROVER_CORE_CLUSTER_INDEX_H
#define DROVER_CORE_CLUSTER_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/util.h"

#define DR_NIL UINT32_MAX

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
enum { DR_GRP_NVL = 0, DR_GRP_LEAF = 1 };
typedef struct dr_topo_grp {
    int32_t id; /* NVLink domain or leaf switch id */
    uint16_t type;
    uint16_t maxg;     /* most GPUs on one of its nodes */
    uint32_t first, n; /* its nodes: grp_nodes[first .. first + n), ascending */
    size_t hist;       /* its histogram: grp_hist[hist .. hist + maxg] by bucket key */
    uint64_t idle;     /* sum of its nodes' bucket keys */
} dr_topo_grp_t;

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
    void *packers[2];
    void (*packer_free)(void *packer);
    /* topology groups, sorted by (type, kind, id); empty without topology */
    dr_topo_grp_t *grps;
    size_t ngrps;
    uint32_t grp_range[DR_MAX_GPU_TYPES][2][2]; /* [type][kind] -> {first group, count} */
    uint32_t *grp_nodes;
    uint32_t *grp_hist;
    uint32_t *node_grp[2]; /* node -> its NVLink / leaf group, DR_NIL if none */
    uint64_t *sw_acc;      /* per switch: query scratch for placement */
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

void dr_cluster_reindex(dr_cluster_t *c, uint32_t node);
/* Create c->index (names only, nothing built) if it does not exist yet. */
int dr_cluster_index_alloc(dr_cluster_t *c);

/* First position >= from in tree t whose subtree bound admits (idle, milli,
 * cpu); returns the node index or DR_NIL.  *next_from is set past it. */
typedef struct dr_segq {
    uint16_t idle, milli, part, pidle;
    uint32_t cpu;
} dr_segq_t;
uint32_t dr_segtree_find(const dr_segtree_t *t, size_t from, const dr_segq_t *q, size_t *next_from);

#endif
