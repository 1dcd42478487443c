/* pack_gpupacking.c - GpuPacking (FGD paper baseline): prefer, in order,
 * already shared GPUs (the fuller the better), then idle GPUs on a node
 * already in use (the fewer the better), then an idle node (the smaller the
 * better); shares best-fit.  CPU-only requests score 0 everywhere, so the
 * node rank places them.  Integer scores as in the simulator. */
#include <stdint.h>

#include "sched/pack_priv.h"

static double gpupacking_score(dr_packer_t *p, const dr_cluster_t *c, uint32_t node,
                               const dr_pack_req_t *r, int32_t *gpu)
{
    (void)p;
    const dr_node_t *n = &c->nodes[node];
    if (r->ngpus == 0)
        return 0;
    if (dr_pack_is_share(r))
        *gpu = dr_pack_tightest_gpu(c, n, r->gpu_milli);
    int64_t idle = n->gpus_idle;
    if (idle == n->ngpus) { /* case 3: every GPU idle */
        int64_t s = 100 / 3 - idle;
        return (double)(s > idle ? s : idle);
    }
    /* the GPUs it would use: tightest first (ascending free milli) */
    const uint16_t *gf = &c->gpu_free[n->gpu_base];
    uint16_t order[DR_MAX_GPUS_PER_NODE];
    uint16_t k = 0;
    for (uint16_t g = 0; g < n->ngpus; g++) { /* stable insertion sort */
        uint16_t j = k++;
        while (j > 0 && gf[order[j - 1]] > gf[g]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = g;
    }
    int64_t need = r->ngpus, whole = 0, ratio = 0;
    for (uint16_t i = 0; i < k && need > 0; i++) {
        uint16_t f = gf[order[i]];
        if (f >= r->gpu_milli) {
            need--;
            if (f == 1000)
                whole++;
            ratio += (int64_t)f * 100 / 1000;
        }
    }
    if (whole > 0) { /* case 2: idle GPUs on a used node */
        int64_t s = 100 / 2 - whole;
        return (double)(s > 100 / 3 ? s : 100 / 3);
    }
    int64_t s = 100 - ratio / 10; /* case 1: shared GPUs */
    return (double)(s > 100 / 2 ? s : 100 / 2);
}

static int gpupacking_choose(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                             dr_pack_pick_t *pick)
{
    return dr_pack_argmax(p, c, r, gpupacking_score, pick);
}

const dr_pack_ops_t dr_pack_gpupacking_ops = {
    .name = "gpupacking",
    .doc = "GpuPacking (FGD paper baseline): shared GPUs first (fuller first), then idle GPUs "
           "of used nodes (fewest first), then idle nodes (smallest first); shares best-fit.",
    .choose = gpupacking_choose,
};
