/* placement_priv.h - what placement.c and placement_topo.c share: the list
 * of nodes one placement attempt picks, and the topology- and data-aware
 * pickers. */
#ifndef DROVER_SCHED_PLACEMENT_PRIV_H
#define DROVER_SCHED_PLACEMENT_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/job.h"
#include "drover/placement.h"

/* A growable list of chosen nodes for one attempt. */
typedef struct dr_pick {
    uint32_t *node;
    uint16_t *take; /* GPUs (or 1 share, or 0 for CPU-only) taken on that node */
    size_t n, cap;
} dr_pick_t;

int dr_pick_add(dr_pick_t *p, uint32_t node, uint16_t take);
void dr_pick_free(dr_pick_t *p);

/* The per-node share of r on type t (t < 0: CPU-only) with `gpus` GPUs. */
dr_job_req_t dr_place_node_share(const dr_job_req_t *r, int t, uint32_t gpus);

/* Topology-aware multi-node picks on type t (best-fit): one multi-node
 * NVLink domain, else one leaf switch, else the lowest common switch.
 * DR_OK with p filled, DR_ENOENT when topology gives no answer (the caller
 * falls back to the plain path), DR_ENOMEM. */
int dr_place_topo_gang(dr_cluster_t *c, const dr_job_req_t *r, int t, dr_pick_t *p);
int dr_place_topo_flex(dr_cluster_t *c, const dr_job_req_t *r, int t, dr_pick_t *p);

/* A single-node request naming a shard: a holder of the shard if one fits
 * (earliest type in the order, then tightest), else the next fitting node
 * after the type's round-robin cursor.  *t gets the type used (-1 for
 * CPU-only).  DR_OK, DR_ENOSPC, DR_ENOMEM. */
int dr_place_shard_pick(dr_cluster_t *c, const dr_job_req_t *r, dr_typemask_t allowed,
                        const dr_place_opts_t *o, int *t, dr_pick_t *p);

/* Fill a->locality and a->lca_level. */
void dr_alloc_describe(const dr_cluster_t *c, dr_alloc_t *a);

#endif
