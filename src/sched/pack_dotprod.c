/* pack_dotprod.c - DotProd (FGD paper baseline, after Tetris): the node whose
 * free (CPU, GPU) vector, normalised by the largest node (128 CPUs, 8 GPUs),
 * has the smallest dot product with the request's; shares best-fit.
 *
 * As in the simulator ("merge" dimensions, "max" normalisation) the score is
 * 100 x (1 - dot/2) truncated to an integer, so the smaller the product the
 * better: it behaves as a best-fit weighted by the request's own shape. */
#include <stdint.h>

#include "sched/pack_priv.h"

static double dotprod_score(dr_packer_t *p, const dr_cluster_t *c, uint32_t node,
                            const dr_pack_req_t *r, int32_t *gpu)
{
    (void)p;
    const dr_node_t *n = &c->nodes[node];
    double nv0 = (double)n->cpu_free / 128000.0;
    double nv1 = (double)dr_pack_milli_left(c, n) / 8000.0;
    double pv0 = (double)r->cpu_milli / 128000.0;
    double pv1 = (double)r->ngpus * (double)r->gpu_milli / 8000.0;
    double dot = 0;
    dot += nv0 * pv0;
    dot += nv1 * pv1;
    double s = 1 - dot / 2.0;
    if (dr_pack_is_share(r))
        *gpu = dr_pack_tightest_gpu(c, n, r->gpu_milli);
    return (double)(int64_t)(100.0 * s);
}

static int dotprod_choose(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                          dr_pack_pick_t *pick)
{
    return dr_pack_argmax(p, c, r, dotprod_score, pick);
}

const dr_pack_ops_t dr_pack_dotprod_ops = {
    .name = "dotprod",
    .doc = "DotProd (FGD paper baseline, Tetris-style): score 100 (1 - <free, request>/2) with "
           "both vectors (CPU, GPU milli) divided by (128000, 8000), truncated to an integer; "
           "shares best-fit.",
    .choose = dotprod_choose,
};
