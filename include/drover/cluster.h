/* cluster.h - the cluster model and its resource ledger.
 *
 * A cluster is a table of GPU types (copied from the catalog or declared by
 * the site), nodes (each with GPUs of one type, CPUs, memory, a leaf switch
 * and an NVLink domain), a switch tree, and elastic pools.  The ledger part
 * tracks what is free: milli-GPUs per GPU, CPUs and memory per node, and keeps
 * per-type indexes so placement is O(log nodes), not O(nodes).  The ledger
 * has one home (src/core/ledger.c) and one interface, the "ledger" section
 * below: booking, node state, and the queries placement and the policies
 * make of the index (whose structures nothing outside src/core sees).
 *
 * Everything here is pure memory; config.h reads the admin's file. */
#ifndef DROVER_CLUSTER_H
#define DROVER_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/account.h"
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
struct dr_cluster_sets;

/* A site's security and resource settings: one-key lines of the cluster
 * config (docs/operations.md, "Site settings").  Byte and count limits: 0
 * means no limit.  dr_cluster_init sets the defaults below. */
typedef struct dr_site {
    bool allow_root_jobs;       /* AllowRootJobs=YES: jobs may run as uid 0 (default NO) */
    char impersonators[1024];   /* Impersonators=a,b: may mint tokens for others ("" none) */
    uint64_t max_script_bytes;  /* MaxScriptBytes= (default 1 MiB) */
    uint64_t max_env_bytes;     /* MaxEnvBytes= (default 256 KiB) */
    uint64_t max_argv_bytes;    /* MaxArgvBytes= (default 256 KiB) */
    uint64_t max_user_bytes;    /* MaxUserStoreBytes=: a user's unended jobs' specs (64 MiB) */
    uint64_t max_user_pending;  /* MaxUserPendingJobs= (default 10000) */
    uint32_t max_event_streams; /* MaxEventStreams=: per user (default 8) */
    /* MaxUserCostPerHour=: what one user's running jobs may cost per hour
     * together (USD, GPUs x their types' prices); 0 = no cap.  Enforced in
     * the scheduler core's placement gate (sched.c), as account budgets. */
    double max_user_cost_hr;
    dr_time_t token_ttl;     /* TokenTtl=: a token's life when none is asked (30 days) */
    dr_time_t token_max_ttl; /* TokenMaxTtl=: the longest one may ask for (365 days) */
    uint32_t given;          /* bit per key: "given twice" */
} dr_site_t;

#define DR_SITE_MAX_SCRIPT   (1ull << 20)
#define DR_SITE_MAX_ENV      (256ull << 10)
#define DR_SITE_MAX_ARGV     (256ull << 10)
#define DR_SITE_MAX_USER     (64ull << 20)
#define DR_SITE_MAX_PENDING  10000ull
#define DR_SITE_MAX_STREAMS  8u
#define DR_SITE_TOKEN_TTL    (30 * 86400 * DR_NSEC_PER_SEC)
#define DR_SITE_TOKEN_MAXTTL (365 * 86400 * DR_NSEC_PER_SEC)

/* The defaults; is `key` a site setting (case-insensitive); set one from
 * its value (DR_EINVAL with the reason in err, without the key). */
void dr_site_defaults(dr_site_t *s);
bool dr_site_key(const char *key);
int dr_site_set(dr_site_t *s, const char *key, const char *val, dr_err_t *err);
/* Is user named in the Impersonators= list? */
bool dr_site_impersonator(const dr_site_t *s, const char *user);

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
    /* SchedulerPolicy= of the config file ("" = not given): the policy a
     * controller runs on this cluster. */
    char policy[128];
    /* Partitions, node features and the node sets jobs are restricted to
     * (partition.h); NULL when there are none. */
    struct dr_cluster_sets *sets;
    /* Account= lines (account.h): limits and shares per account. */
    dr_account_t *accounts;
    size_t naccounts, accounts_cap;
    /* FairShareHalfLife=: the half-life fair-share usage decays with
     * (0: not given, the core's default of 7 days; DR_TIME_NEVER: no
     * decay). */
    dr_time_t fairshare_half_life;
    /* PreemptGrace=: how long a preempted job with --signal may take to
     * stop by itself at most (its signal's lead, capped by this); 0 = no
     * wait.  preempt_grace_set false: DR_PREEMPT_GRACE_DEFAULT. */
    dr_time_t preempt_grace;
    bool preempt_grace_set;
    /* PreemptWithoutCheckpoint=: whether a job that declares no checkpoints
     * may be stopped for another job by the default policy (false: never;
     * the policy reads it from the view's cluster, live and simulated). */
    bool preempt_nockpt;
    bool preempt_nockpt_set;
    /* RequeueDefault=: a batch job's --requeue when it gives none (1 YES,
     * -1 NO, 0 not given: yes).  NodeFailDrain=N/DURATION: drain a node
     * after N failed jobs there within DURATION (n 0: not given; window
     * -1: NodeFailDrain=0, never). */
    int8_t requeue_default;
    uint32_t fail_drain_n;
    dr_time_t fail_drain_window;
    /* CheckpointDir= ("" = not given: each job's working directory's
     * .drover/ckpt) and CheckpointKeep= (0 = not given: 3): where jobs'
     * checkpoint directories are made, and how many each keeps. */
    char ckpt_dir[1024];
    uint32_t ckpt_keep;
    /* The site's security and resource settings (AllowRootJobs=,
     * Impersonators=, Max*Bytes=, ...): config_site.c. */
    dr_site_t site;
} dr_cluster_t;

#define DR_PREEMPT_GRACE_DEFAULT (120 * DR_NSEC_PER_SEC)

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

/* --- ledger (src/core/ledger.c) --- */
/* Book an allocation (every slot must fit; slots of one node contiguous,
 * the first carrying the node's CPU and memory) / give it back.  The one
 * path every booking takes: placement and the packers (pack.h), the
 * scheduler adopting a running job after a restart (dr_sched_adopt), a
 * policy trying what a preemption would free.  A failed take changes
 * nothing; DR_ENOSPC names the node that lacks room. */
int dr_cluster_take(dr_cluster_t *c, const dr_alloc_t *a, dr_err_t *err);
void dr_cluster_give(dr_cluster_t *c, const dr_alloc_t *a);
/* Drivers change node states through the scheduler
 * (dr_sched_node_set_state), which logs them; this is the ledger's part. */
void dr_cluster_set_state(dr_cluster_t *c, uint32_t node, dr_node_state_t st);
/* Hide/unhide a node from placement without changing its state. */
void dr_cluster_hide(dr_cluster_t *c, uint32_t node, bool hidden);
/* Could the node host `req`'s per-node share right now?  (A node outside
 * req's node set, partition.h, never can.) */
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

/* --- ledger queries (placement, policies) ---
 * Finalised clusters only.  A node's index entry bounds what it has free:
 * idle GPUs, the largest free share on one GPU, on one partly used GPU,
 * the idle GPUs of a node partly in use, and free CPU.  Nodes that are not
 * UP, or hidden, have no room in the trees; bucket keys count idle GPUs of
 * UP nodes (hidden ones included: placement skips those by dr_node_fits).
 * Every answer is an upper bound on what fits: the caller confirms a node
 * with dr_node_fits. */
#define DR_LEDGER_NIL UINT32_MAX /* no node */
#define DR_LEDGER_ALL (-1)       /* "type" of the tree over every node (CPU-only requests) */

typedef struct dr_ledger_q {
    uint16_t idle;  /* idle GPUs */
    uint16_t milli; /* free milli on one GPU */
    uint16_t part;  /* free milli on one partly used GPU (best-fit shares) */
    uint16_t pidle; /* idle GPUs on a node partly in use */
    uint32_t cpu;   /* free milli-CPU */
} dr_ledger_q_t;

bool dr_cluster_finalized(const dr_cluster_t *c);
/* Positions 0..npos-1: a GPU type's nodes in node order (DR_LEDGER_ALL:
 * every node). */
size_t dr_ledger_npos(const dr_cluster_t *c, int type);
/* The first node at position >= *from whose bound admits q (every field at
 * least q's), then *from is one past its position; DR_LEDGER_NIL (and
 * *from unchanged) if none.  O(log nodes).  Loop with the same *from to
 * visit the candidates in node order. */
uint32_t dr_ledger_find(const dr_cluster_t *c, int type, size_t *from, const dr_ledger_q_t *q);
/* The largest bound over a type's nodes (O(1)): nothing needing more fits. */
dr_ledger_q_t dr_ledger_max(const dr_cluster_t *c, int type);
/* Buckets of a GPU type's nodes by idle GPUs (0..max_gpus; 0 also for nodes
 * that are not UP).  Walk one with first / next until DR_LEDGER_NIL. */
uint16_t dr_ledger_max_gpus(const dr_cluster_t *c, int type); /* most GPUs on one node */
uint32_t dr_ledger_bucket_count(const dr_cluster_t *c, int type, uint32_t idle);
uint32_t dr_ledger_bucket_first(const dr_cluster_t *c, int type, uint32_t idle);
uint32_t dr_ledger_bucket_next(const dr_cluster_t *c, uint32_t node);
/* UP nodes of the type with every GPU idle; idle GPUs on its UP nodes. */
uint32_t dr_ledger_whole_nodes(const dr_cluster_t *c, int type);
uint64_t dr_ledger_idle_gpus(const dr_cluster_t *c, int type);

/* Topology groups: per GPU type, the nodes sharing a multi-node NVLink
 * domain, and those sharing a leaf switch, with counts of their idle GPUs
 * kept current, so a gang finds a group with room in O(groups).  A cluster
 * without topology has none. */
typedef enum dr_ledger_grp_kind { DR_LEDGER_NVL = 0, DR_LEDGER_LEAF = 1 } dr_ledger_grp_kind_t;
/* A group as the ledger keeps it (read it, never write it). */
typedef struct dr_ledger_grp {
    int32_t id; /* NVLink domain or leaf switch */
    uint16_t type;
    uint16_t maxg;     /* most GPUs on one of its nodes */
    uint32_t first, n; /* its nodes (dr_ledger_group_nodes), how many */
    size_t hist;       /* the ledger's own: where its idle-GPU histogram is */
    uint64_t idle;     /* idle GPUs of its UP nodes */
} dr_ledger_grp_t;
bool dr_ledger_has_groups(const dr_cluster_t *c);
/* The groups of a type and kind: ids first .. first + count - 1, and a
 * pointer to the first of them (they are contiguous). */
const dr_ledger_grp_t *dr_ledger_groups(const dr_cluster_t *c, int type, dr_ledger_grp_kind_t kind,
                                        uint32_t *first, uint32_t *count);
const dr_ledger_grp_t *dr_ledger_group(const dr_cluster_t *c, uint32_t g);
const uint32_t *dr_ledger_group_nodes(const dr_cluster_t *c, uint32_t g); /* n, ascending */
/* For groups first .. first + n - 1: out[i] = the group's nodes with at
 * least k idle GPUs (fit), or the fewest of its nodes that hold `gpus` idle
 * GPUs together, UINT64_MAX if it has fewer (min_nodes).  One call for a
 * whole range, since a gang reads every group of its type. */
void dr_ledger_groups_fit(const dr_cluster_t *c, uint32_t first, uint32_t n, uint32_t k,
                          uint64_t *out);
void dr_ledger_groups_min_nodes(const dr_cluster_t *c, uint32_t first, uint32_t n, uint64_t gpus,
                                uint64_t *out);

/* Placement's state kept with the cluster (copied and freed with it): the
 * round-robin cursor of tasks whose shard no node holds (a position in the
 * type's tree; DR_LEDGER_ALL for CPU-only tasks), and the packers of the
 * packing strategies (pack.h), made on first use. */
#define DR_CLUSTER_NPACKERS 2
uint32_t dr_ledger_rr_cursor(const dr_cluster_t *c, int type);
void dr_ledger_set_rr_cursor(dr_cluster_t *c, int type, uint32_t pos);
void *dr_cluster_packer(const dr_cluster_t *c, unsigned k);
/* Keep packer k (freed with the cluster by free_fn). */
void dr_cluster_set_packer(dr_cluster_t *c, unsigned k, void *packer, void (*free_fn)(void *));

/* Internal consistency check of the ledger against a set of allocations
 * (used by tests and by the simulator's --check mode): every GPU's free milli
 * equals 1000 minus the milli allocated on it, never negative. */
int dr_cluster_audit(const dr_cluster_t *c, const dr_alloc_t *const *allocs, size_t n,
                     dr_err_t *err);

#endif
