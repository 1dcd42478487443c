/* pack_bestfit.c - BestFit as the FGD paper's simulator scores it: the node
 * left with the least CPU and GPU (each normalised by the largest node, 128
 * CPUs and 8 GPUs, weight 0.5 each), shares on the tightest GPU that fits.
 *
 * The score is truncated to an integer 0..100 before nodes are compared, as
 * the Kubernetes score plugin does; the many ties that leaves are what the
 * node rank breaks.  Keeping that coarseness is what makes our figures
 * comparable with the published ones. */
#include <stdint.h>

#include "sched/pack_priv.h"

#define MAX_SPEC_CPU 128000.0
#define MAX_SPEC_GPU 8000.0

static double bestfit_score(dr_packer_t *p, const dr_cluster_t *c, uint32_t node,
                            const dr_pack_req_t *r, int32_t *gpu)
{
    (void)p;
    const dr_node_t *n = &c->nodes[node];
    double cpu_left = (double)n->cpu_free, gpu_left = (double)dr_pack_milli_left(c, n);
    double req_gpu = (double)r->ngpus * (double)r->gpu_milli;
    /* the same operations in the same order as the original (float64) */
    double s = 0;
    s += (cpu_left - (double)r->cpu_milli) / MAX_SPEC_CPU * 0.5;
    s += (gpu_left - req_gpu) / MAX_SPEC_GPU * 0.5;
    s = (1.0 - s) * 100.0;
    if (dr_pack_is_share(r))
        *gpu = dr_pack_tightest_gpu(c, n, r->gpu_milli);
    /* int64 truncation; the plugin's min-max normalisation to 0..100 that
     * follows is strictly increasing on integer scores, so it changes no
     * comparison and is left out */
    return (double)(int64_t)s;
}

static int bestfit_choose(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                          dr_pack_pick_t *pick)
{
    return dr_pack_argmax(p, c, r, bestfit_score, pick);
}

const dr_pack_ops_t dr_pack_bestfit_ops = {
    .name = "bestfit",
    .doc = "BestFit (FGD paper baseline): node score 1 - [0.5 (cpuLeft - cpuReq) / 128000 + "
           "0.5 (gpuMilliLeft - podMilli) / 8000], truncated to an integer 0..100 as the "
           "simulator's score plugin does; a share goes on the tightest GPU that fits.",
    .choose = bestfit_choose,
};
