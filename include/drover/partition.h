/* partition.h - restricting a job to some of the cluster's nodes: Slurm's
 * partitions (PartitionName= lines), node features (Features= on NodeName
 * lines, plus each node's GPU type under its names and aliases) and
 * --constraint expressions over them.
 *
 * A restriction is a node set interned in the cluster: a job carries
 * dr_job_req_t.nodeset = 1 + the set's id (0 = every node), placement only
 * takes nodes of the set (dr_node_fits, dr_pack_fits) and what could ever
 * fit counts only them (dr_cluster_req_possible), so every policy honours
 * it without knowing of it.  Jobs with the same restriction share one set.
 * Pure memory, like cluster.h; config.h reads the lines. */
#ifndef DROVER_PARTITION_H
#define DROVER_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/job.h"
#include "drover/time.h"

#define DR_MAX_FEATURES   64   /* distinct node features of a cluster */
#define DR_MAX_NODESETS   4096 /* distinct node sets (restrictions) of a cluster */
#define DR_CONSTRAINT_MAX 1024 /* longest --constraint expression */

/* Slurm's partition states: UP takes and runs jobs; DOWN takes them but runs
 * none; DRAIN runs what it has but takes no more; INACTIVE neither. */
typedef enum dr_part_state {
    DR_PART_UP = 0,
    DR_PART_DOWN,
    DR_PART_DRAIN,
    DR_PART_INACTIVE
} dr_part_state_t;

typedef struct dr_partition {
    char *name;
    uint32_t nodeset;       /* 1 + node set id of its nodes; 0 if it has none */
    bool is_default;        /* Default=YES: jobs that name no partition */
    uint8_t state;          /* dr_part_state_t */
    dr_time_t max_time;     /* MaxTime; 0 = UNLIMITED */
    dr_time_t default_time; /* DefaultTime; 0 = MaxTime */
} dr_partition_t;

/* --- partitions --- */
/* Add a partition of the given nodes (p->nodeset is set here; p->name is
 * copied).  Names are unique; at most one is the default.  Returns its index. */
int dr_cluster_add_partition(dr_cluster_t *c, const dr_partition_t *p, const uint32_t *nodes,
                             size_t n, dr_err_t *err);
int dr_cluster_find_partition(const dr_cluster_t *c, const char *name); /* -1 */
size_t dr_cluster_npartitions(const dr_cluster_t *c);
const dr_partition_t *dr_cluster_partition(const dr_cluster_t *c, size_t i);
const char *dr_part_state_name(dr_part_state_t s);

/* --- features --- */
/* Find or add a feature by name (case-sensitive, as Slurm's): its id. */
int dr_cluster_feature(dr_cluster_t *c, const char *name, dr_err_t *err);
int dr_cluster_find_feature(const dr_cluster_t *c, const char *name); /* -1 */
size_t dr_cluster_nfeatures(const dr_cluster_t *c);
const char *dr_cluster_feature_name(const dr_cluster_t *c, size_t id);
int dr_cluster_node_add_feature(dr_cluster_t *c, uint32_t node, uint32_t feature, dr_err_t *err);
bool dr_node_has_feature(const dr_cluster_t *c, uint32_t node, uint32_t feature);

/* --- node sets --- */
/* Intern the set of nodes whose bits are set in bits[(nnodes + 63) / 64]:
 * 1 + its id (an identical set already interned is returned). */
int dr_cluster_nodeset_intern(dr_cluster_t *c, const uint64_t *bits, dr_err_t *err);
/* Is node in set (1 + id; 0 = every node)? */
bool dr_nodeset_has(const dr_cluster_t *c, uint32_t set, uint32_t node);
uint64_t dr_nodeset_count(const dr_cluster_t *c, uint32_t set);      /* nodes in it */
dr_typemask_t dr_nodeset_types(const dr_cluster_t *c, uint32_t set); /* GPU types of its nodes */

/* --- a job's restriction --- */
typedef struct dr_restrict {
    uint32_t nodeset;       /* 0 = every node */
    dr_typemask_t types;    /* GPU types allowed by it; 0 = any */
    dr_time_t max_time;     /* the smallest MaxTime of its partitions; 0 = none */
    dr_time_t default_time; /* the time limit of a job that gives none; 0 = none */
} dr_restrict_t;

/* The nodes a job may use: those of its partitions (`partition`, "a,b": the
 * union; NULL or "": the default partition, else every node; on a cluster
 * without partitions, every node whatever is named) that have the
 * features of `constraint` (NULL = any), for a job of request r (its node
 * and GPU counts): Slurm's "a&b" (and; ',' too), "a|b" (or), "[a|b]" (all
 * nodes alike: exact for GPU types, which a gang never mixes, and for
 * one-node jobs; refused for other features on a job that may span nodes),
 * parentheses; counts ("a*2") and "!" are refused.  A name is a node feature
 * or a GPU type of the cluster (any of its names or aliases).  A constraint
 * that is only GPU types joined by '|' becomes a type mask alone (typed
 * policies see it; not for a job without GPUs, which the mask does not
 * restrict); the types of a node set are its nodes' types.  Errors
 * name the field: "partition: unknown partition 'x' (known: a, b)",
 * "constraint: unknown feature 'x' (known: ...)", "constraint: no node ...". */
int dr_cluster_restrict(dr_cluster_t *c, const char *partition, const char *constraint,
                        const dr_job_req_t *r, dr_restrict_t *out, dr_err_t *err);

/* Check a constraint's syntax only (no cluster): for the fuzz target and
 * the job-field vocabulary. */
int dr_constraint_check(const char *expr, dr_err_t *err);

#endif
