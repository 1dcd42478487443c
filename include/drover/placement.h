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
    DR_PLACE_BEST_FIT,      /* nodes left with the fewest free GPUs (tightest) */
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
} dr_place_opts_t;

const char *dr_place_strategy_name(dr_place_strategy_t s);
int dr_place_strategy_parse(const char *s, dr_place_strategy_t *out);

/* Place req on GPU types in `allowed` (a mask; 0 = none allowed).  On success
 * fills *out (caller frees with dr_alloc_free), books it and returns DR_OK;
 * DR_ENOSPC if it does not fit now. */
int dr_place(dr_cluster_t *c, const dr_job_req_t *req, dr_typemask_t allowed,
             const dr_place_opts_t *o, dr_alloc_t *out);
/* Would it fit now on some allowed type?  (No booking; O(1) when not.) */
bool dr_place_fits_quick(const dr_cluster_t *c, const dr_job_req_t *req, dr_typemask_t allowed);

#endif
