/* cluster.h - the cluster model and its resource ledger.
 *
 * A cluster is a table of GPU types (copied from the catalog or declared by
 * the site), nodes (each with GPUs of one type, CPUs, memory, a leaf switch
 * and an NVLink domain), a switch tree, and elastic pools.  The ledger part
 * tracks what is free: milli-GPUs per GPU, CPUs and memory per node, and keeps
 * per-type indexes so placement is O(log nodes), not O(nodes).
 *
 * Everything here is pure memory; config.h reads the admin's file. */
#ifndef DROVER_CLUSTER_H
#define DROVER_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/catalog.h"
#include "drover/error.h"
#include "drover/job.h"
#include "drover/time.h"

#define DR_MAX_GPU_TYPES     64
#define DR_MAX_GPUS_PER_NODE 1024
#define DR_NONE              (-1)

typedef enum dr_node_state {
    DR_NODE_UP = 0,
    DR_NODE_DOWN,        /* lost or failed: nothing may run, running jobs are requeued */
    DR_NODE_DRAIN,       /* running jobs finish, nothing new starts */
    DR_NODE_CLOUD,       /* elastic pool node not provisioned yet */
    DR_NODE_PROVISIONING /* elastic pool node requested, not up yet (billed, not usable) */
} dr_node_state_t;

typedef struct dr_node {
    char *name;
    uint16_t type; /* index into cluster->types (meaningless if ngpus == 0) */
    uint16_t ngpus;
    uint32_t cpu_milli; /* CPUs x 1000 */
    uint64_t mem_mb;
    int32_t switch_id;  /* leaf switch, DR_NONE if no topology */
    int32_t nvl_domain; /* NVLink domain id, DR_NONE = PCIe only */
    int32_t pool;       /* elastic pool, DR_NONE = on-prem */
    uint32_t gpu_base;  /* first GPU in cluster->gpu_free */
    uint8_t state;      /* dr_node_state_t */
    bool hidden;        /* temporarily invisible to placement (reservations) */

    /* ledger */
    uint32_t cpu_free;
    uint64_t mem_free;
    uint16_t gpus_idle; /* GPUs with all 1000 milli free */
    uint16_t max_milli; /* largest free milli on any one GPU */
    uint16_t max_part;  /* largest free milli on a partly used GPU (0 if none) */
    uint32_t njobs;     /* allocations holding this node */
} dr_node_t;

typedef struct dr_switch {
    char *name;
    int32_t parent;  /* DR_NONE for a root */
    uint32_t level;  /* 0 = leaf (has nodes) */
    double link_gbs; /* 0 = unknown */
} dr_switch_t;

typedef struct dr_pool {
    char *name;
    uint16_t type;
    uint16_t gpus_per_node;
    uint32_t cpu_milli;
    uint64_t mem_mb;
    uint32_t max_nodes;
    double price_hr; /* USD per GPU-hour; NAN = catalog price */
    dr_time_t provision_delay;
    double spot_interrupt_per_hr; /* expected interruptions per node-hour; 0 = on-demand */
    uint32_t first_node;          /* pool nodes are nodes[first_node .. +max_nodes) */
} dr_pool_t;

/* A data shard (an input file set such as a video segment) and the nodes
 * holding a copy on local storage, so tasks reading it can go there. */
typedef struct dr_shard {
    char *name;
    uint32_t *nodes; /* ascending node indices */
    uint32_t n, cap;
} dr_shard_t;

struct dr_cluster_index;

typedef struct dr_cluster {
    dr_gpu_spec_t types[DR_MAX_GPU_TYPES];
    size_t ntypes;
    dr_node_t *nodes;
    size_t nnodes, nodes_cap;
    uint16_t *gpu_free; /* free milli per GPU, indexed by node->gpu_base + i */
    size_t ngpus, gpu_cap;
    dr_switch_t *switches;
    size_t nswitches, switches_cap;
    char **nvl_domains; /* names of NVLink domains */
    size_t nnvl, nvl_cap;
    dr_pool_t *pools;
    size_t npools, pools_cap;
    dr_shard_t *shards; /* names interned with the index, like switches */
    size_t nshards, shards_cap;

    /* totals, maintained by the ledger */
    uint64_t gpus_of_type[DR_MAX_GPU_TYPES];       /* GPUs on UP/DRAIN nodes */
    uint64_t milli_free_of_type[DR_MAX_GPU_TYPES]; /* free milli on UP nodes */
    struct dr_cluster_index *index;                /* built by dr_cluster_finalize */
    /* Bumped whenever resources become available (a release, a node coming
     * up or unhidden): a policy that saw the same value before knows that
     * nothing which failed to fit then can fit now. */
    uint64_t freed_gen;
} dr_cluster_t;

void dr_cluster_init(dr_cluster_t *c);
void dr_cluster_free(dr_cluster_t *c);
/* Deep copy (ledger state included); dst must not be initialised. */
int dr_cluster_copy(dr_cluster_t *dst, const dr_cluster_t *src, dr_err_t *err);

/* --- building --- */
/* Add (or find) a GPU type; returns its index or a negative error. */
int dr_cluster_add_type(dr_cluster_t *c, const dr_gpu_spec_t *spec, dr_err_t *err);
int dr_cluster_find_type(const dr_cluster_t *c, const char *name);           /* name or alias; -1 */
int dr_cluster_add_switch(dr_cluster_t *c, const char *name, dr_err_t *err); /* index */
int dr_cluster_find_switch(const dr_cluster_t *c, const char *name);
int dr_cluster_nvl_domain(dr_cluster_t *c, const char *name, dr_err_t *err); /* find or add */
/* Add a node; returns its index.  Names must be unique. */
int dr_cluster_add_node(dr_cluster_t *c, const char *name, int type, uint16_t ngpus,
                        uint32_t cpu_milli, uint64_t mem_mb, dr_err_t *err);
int dr_cluster_find_node(const dr_cluster_t *c, const char *name); /* -1 */
int dr_cluster_add_pool(dr_cluster_t *c, const dr_pool_t *p, dr_err_t *err);
/* Data shards: find or add one by name (returns its id), find one (-1),
 * and record that a node holds / no longer holds a copy.  Holdings may
 * change at any time (agents report them); placement reads them at once. */
int dr_cluster_shard(dr_cluster_t *c, const char *name, dr_err_t *err);
int dr_cluster_find_shard(const dr_cluster_t *c, const char *name);
int dr_cluster_node_add_shard(dr_cluster_t *c, uint32_t node, uint32_t shard, dr_err_t *err);
void dr_cluster_node_drop_shard(dr_cluster_t *c, uint32_t node, uint32_t shard);
bool dr_node_has_shard(const dr_cluster_t *c, uint32_t node, uint32_t shard);
/* Validate topology (no switch cycles, levels computed) and build the
 * placement index.  Must be called before placement or ledger use. */
int dr_cluster_finalize(dr_cluster_t *c, dr_err_t *err);

/* --- ledger --- */
/* Book an allocation (every slot must fit) / give it back. */
int dr_cluster_take(dr_cluster_t *c, const dr_alloc_t *a, dr_err_t *err);
void dr_cluster_give(dr_cluster_t *c, const dr_alloc_t *a);
void dr_cluster_set_state(dr_cluster_t *c, uint32_t node, dr_node_state_t st);
/* Hide/unhide a node from placement without changing its state. */
void dr_cluster_hide(dr_cluster_t *c, uint32_t node, bool hidden);
/* Could the node host `req`'s per-node share right now? */
bool dr_node_fits(const dr_cluster_t *c, const dr_node_t *n, const dr_job_req_t *r);
bool dr_node_usable(const dr_node_t *n); /* UP and not hidden */

/* Totals over UP nodes (all types if type < 0). */
uint64_t dr_cluster_total_gpus(const dr_cluster_t *c, int type);
uint64_t dr_cluster_free_milli(const dr_cluster_t *c, int type);
/* Mask of the types a request may use: allowed types that also satisfy
 * min_gpu_mem_gb.  Returns 0 if none. */
dr_typemask_t dr_cluster_eligible_types(const dr_cluster_t *c, const dr_job_req_t *r);
/* Mask of the eligible types on which req could ever be placed with all
 * their nodes UP and idle: enough nodes of the per-node shape (GPUs, CPUs,
 * memory), or, for a --gpus=N request, enough GPUs.  A policy that counts
 * GPUs per type must not plan an 8-GPU job onto 4-GPU nodes. */
dr_typemask_t dr_cluster_hostable_types(const dr_cluster_t *c, const dr_job_req_t *r);
/* Could req ever fit on this cluster with all nodes UP and idle (pools
 * included)?  err names the reason ("needs 16 GPUs per node, the largest
 * eligible node has 8"). */
int dr_cluster_req_possible(const dr_cluster_t *c, const dr_job_req_t *r, dr_err_t *err);

const char *dr_node_state_name(dr_node_state_t s);

/* Internal consistency check of the ledger against a set of allocations
 * (used by tests and by the simulator's --check mode): every GPU's free milli
 * equals 1000 minus the milli allocated on it, never negative. */
int dr_cluster_audit(const dr_cluster_t *c, const dr_alloc_t *const *allocs, size_t n,
                     dr_err_t *err);

#endif
