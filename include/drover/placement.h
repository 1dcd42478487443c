/* placement.h - which GPUs on which nodes a job gets.
 *
 * Policies decide *which job* runs next; placement decides *where*.  It is
 * shared by every policy.  A successful placement is booked in the cluster
 * ledger at once, so later placements in the same pass see it. */
#ifndef DROVER_PLACEMENT_H
#define DROVER_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/job.h"

typedef enum dr_place_strategy {
    DR_PLACE_FIRST_FIT = 0, /* lowest-numbered nodes/GPUs that fit */
    /* Nodes left with the fewest free GPUs (tightest), whole nodes kept
     * whole when a partly used node can take the job; multi-node jobs in one
     * NVLink domain, else one leaf switch, else the lowest common switch. */
    DR_PLACE_BEST_FIT,
    /* Packing policies (pack.h) for requests on one node (nodes == 1); other
     * shapes (gangs, --gpus=N) are placed best-fit. */
    DR_PLACE_FGD,  /* "fgd": Fragmentation Gradient Descent */
    DR_PLACE_PACK, /* "drover-pack": drover's packing policy */
    DR_PLACE_NSTRATEGIES
} dr_place_strategy_t;

struct dr_packer;

typedef struct dr_place_opts {
    dr_place_strategy_t strategy;
    /* Order in which GPU types are tried (NULL = cluster order; the packing
     * strategies score all allowed types at once and ignore it). */
    const uint16_t *type_order;
    size_t ntype_order;
    /* DR_PLACE_FGD / DR_PLACE_PACK: the packer, which holds the request
     * shapes seen so far.  NULL = one kept with the cluster (created on first
     * use, freed with it), counting the requests it placed. */
    struct dr_packer *packer;
    /* Optional gate (the scheduler's per-account limits, sched.h): the
     * types the job whose request this is may take it on now; dr_place
     * narrows `allowed` to them.  NULL = no gate. */
    dr_typemask_t (*gate)(const void *ud, const dr_job_req_t *req);
    const void *gate_ud;
} dr_place_opts_t;

const char *dr_place_strategy_name(dr_place_strategy_t s);
int dr_place_strategy_parse(const char *s, dr_place_strategy_t *out);

/* Place req on GPU types in `allowed` (a mask; 0 = none allowed).  On success
 * fills *out (caller frees with dr_alloc_free, out->locality says how close
 * its nodes are), books it and returns DR_OK; DR_ENOSPC if it does not fit
 * now.  A single-node request naming a shard (req->shard) goes, with any
 * strategy, to a node holding it if one fits, else round-robin. */
int dr_place(dr_cluster_t *c, const dr_job_req_t *req, dr_typemask_t allowed,
             const dr_place_opts_t *o, dr_alloc_t *out);
/* Would it fit now on some allowed type?  (No booking; O(1) when not.) */
bool dr_place_fits_quick(const dr_cluster_t *c, const dr_job_req_t *req, dr_typemask_t allowed);

/* "node", "nvlink", "leaf", "tree", "network". */
const char *dr_locality_name(dr_locality_t l);
/* Distinct leaf switches an allocation's nodes hang from (0 if none). */
uint32_t dr_alloc_nleaves(const dr_cluster_t *c, const dr_alloc_t *a);
/* Does a node of the allocation hold shard `req_shard` (a dr_job_req_t.shard
 * value)?  What the scheduler counts as a data-locality hit. */
bool dr_alloc_holds_shard(const dr_cluster_t *c, const dr_alloc_t *a, uint32_t req_shard);

/* Cross-node slowdown (docs/scheduling.md, "Placement: topology and
 * locality").  A perf table gives one rate per GPU type and count; when it
 * was not measured for the way a job was placed, a driver may multiply the
 * rate by factor[alloc.locality].  Classes marked in `measured` (class i is
 * measured if i < nmeasured and measured[i]) keep their rate: a measured
 * multi-GPU rate already includes its communication. */
typedef struct dr_span_slowdown {
    double factor[DR_LOC_N]; /* factor[DR_LOC_NODE] is not used (1) */
    const uint8_t *measured;
    size_t nmeasured;
} dr_span_slowdown_t;

/* The documented defaults: nvlink 1, leaf 0.9, tree 0.8, network 0.7. */
void dr_span_slowdown_default(dr_span_slowdown_t *s);
/* "default" or "leaf=0.9,tree=0.75,..." over the defaults (keys: the
 * locality names but "node"; factors in (0, 1]).  Errors name the word. */
int dr_span_slowdown_parse(const char *spec, dr_span_slowdown_t *s, dr_err_t *err);
/* The factor for job j on allocation a; ud is a const dr_span_slowdown_t *
 * (the signature of dr_sched_opts_t.rate_factor). */
double dr_span_slowdown_factor(const void *ud, const dr_job_t *j, const dr_alloc_t *a);

#endif
