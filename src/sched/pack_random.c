/* pack_random.c - Random (FGD paper baseline): a node drawn uniformly from
 * those that fit, and for a share a GPU drawn uniformly from those with room.
 * The floor every other packing policy is measured against. */
#include <stdint.h>

#include "sched/pack_priv.h"

static int random_choose(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                         dr_pack_pick_t *pick)
{
    /* reservoir sampling over the nodes that fit, in rank-independent node
     * order: one pass, no list */
    uint64_t seen = 0;
    for (uint32_t i = 0; i < c->nnodes; i++)
        if (dr_pack_fits(c, &c->nodes[i], r) && dr_rng_below(&p->rng, ++seen) == 0)
            pick->node = i;
    if (!seen)
        return DR_ENOSPC;
    pick->gpu = -1;
    if (dr_pack_is_share(r)) {
        const dr_node_t *n = &c->nodes[pick->node];
        uint64_t k = 0;
        for (uint16_t g = 0; g < n->ngpus; g++)
            if (c->gpu_free[n->gpu_base + g] >= r->gpu_milli && dr_rng_below(&p->rng, ++k) == 0)
                pick->gpu = g;
    }
    return DR_OK;
}

const dr_pack_ops_t dr_pack_random_ops = {
    .name = "random",
    .doc = "Random (FGD paper baseline): a node drawn uniformly among those that fit; a share "
           "on a GPU drawn uniformly among those with room.",
    .choose = random_choose,
};
