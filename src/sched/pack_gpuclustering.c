/* pack_gpuclustering.c - GpuClustering (FGD paper baseline): keep requests of
 * one kind ("share", "1-gpu", "2-gpu", ...) together.  A node already holding
 * only the request's kind scores highest, then nodes holding it among others,
 * then idle nodes, then nodes of other kinds; within a class, fuller nodes
 * first.  Shares best-fit; CPU-only requests score 0 everywhere.
 *
 * The kinds on a node are those of the requests this packer placed there
 * (the simulator reads them from the pods on the node). */
#include <stdint.h>
#include <stdlib.h>

#include "sched/pack_priv.h"

#define NTAGS 17 /* 0 = share, k = k whole GPUs (1..15), 16 = 16 or more */

typedef struct clus_state {
    uint32_t (*tags)[NTAGS]; /* [node][tag] requests of that kind placed */
} clus_state_t;

static int tag_of(const dr_pack_req_t *r)
{
    if (dr_pack_is_share(r))
        return 0;
    return r->ngpus < NTAGS - 1 ? (int)r->ngpus : NTAGS - 1;
}

static int clus_init(dr_packer_t *p, dr_err_t *err)
{
    clus_state_t *s = calloc(1, sizeof *s);
    if (s)
        s->tags = calloc(p->nnodes ? p->nnodes : 1, sizeof *s->tags);
    if (!s || !s->tags) {
        free(s);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    p->state = s;
    return DR_OK;
}

static void clus_fini(dr_packer_t *p)
{
    clus_state_t *s = p->state;
    if (s)
        free(s->tags);
    free(s);
}

static double clus_score(dr_packer_t *p, const dr_cluster_t *c, uint32_t node,
                         const dr_pack_req_t *r, int32_t *gpu)
{
    const clus_state_t *s = p->state;
    const dr_node_t *n = &c->nodes[node];
    if (r->ngpus == 0)
        return 0;
    if (dr_pack_is_share(r))
        *gpu = dr_pack_tightest_gpu(c, n, r->gpu_milli);
    int ntags = 0;
    for (int t = 0; t < NTAGS; t++)
        ntags += s->tags[node][t] > 0;
    /* integer arithmetic in the simulator's order: 25 * (8000 - left) / 8000 */
    int64_t fill = 25 * (8000 - (int64_t)dr_pack_milli_left(c, n)) / 8000;
    if (s->tags[node][tag_of(r)] > 0)
        return (double)(fill + (ntags == 1 ? 75 : 50));
    return (double)(fill + (ntags == 0 ? 25 : 0));
}

static int clus_choose(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                       dr_pack_pick_t *pick)
{
    return dr_pack_argmax(p, c, r, clus_score, pick);
}

static void clus_booked(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                        const dr_pack_pick_t *pick)
{
    (void)c;
    clus_state_t *s = p->state;
    if (r->ngpus > 0)
        s->tags[pick->node][tag_of(r)]++;
}

const dr_pack_ops_t dr_pack_gpuclustering_ops = {
    .name = "gpuclustering",
    .doc = "GpuClustering (FGD paper baseline): nodes holding only requests of the same kind "
           "(share, 1-GPU, 2-GPU, ...) first, then mixed nodes with that kind, then idle nodes, "
           "then others; fuller nodes first within a class; shares best-fit.",
    .init = clus_init,
    .fini = clus_fini,
    .choose = clus_choose,
    .booked = clus_booked,
};
