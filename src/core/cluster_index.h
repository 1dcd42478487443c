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
    uint16_t part; /* largest free share on a partly used GPU */
    uint16_t pad;
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
} dr_buckets_t;

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
};

void dr_cluster_reindex(dr_cluster_t *c, uint32_t node);

/* First position >= from in tree t whose subtree bound admits (idle, milli,
 * cpu); returns the node index or DR_NIL.  *next_from is set past it. */
typedef struct dr_segq {
    uint16_t idle, milli, part;
    uint32_t cpu;
} dr_segq_t;
uint32_t dr_segtree_find(const dr_segtree_t *t, size_t from, const dr_segq_t *q, size_t *next_from);

#endif
