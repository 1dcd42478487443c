/* pack_priv.h - what a packing policy implements and the helpers it shares
 * with the others (pack.c): feasibility, the arg-max over nodes with the
 * rank tie-break, and the tightest-GPU rule. */
#ifndef DROVER_SCHED_PACK_PRIV_H
#define DROVER_SCHED_PACK_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "drover/pack.h"
#include "drover/util.h"

/* A choice: the node, and for a share the GPU on it.  Whole GPUs are always
 * the lowest-numbered idle ones (idle GPUs of a node are interchangeable). */
typedef struct dr_pack_pick {
    uint32_t node;
    int32_t gpu; /* share: GPU index on the node; otherwise -1 */
} dr_pack_pick_t;

typedef struct dr_pack_ops {
    const char *name;
    const char *doc;
    /* allocate p->state (NULL if the policy has none) */
    int (*init)(dr_packer_t *p, dr_err_t *err);
    /* one "key=val" option; NULL = the policy takes none */
    int (*option)(dr_packer_t *p, const char *key, const char *val, dr_err_t *err);
    void (*fini)(dr_packer_t *p);
    /* a request arrived (before choose; placed or not).  May be NULL. */
    int (*observe)(dr_packer_t *p, const dr_pack_req_t *r);
    /* DR_OK with *pick filled, or DR_ENOSPC */
    int (*choose)(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                  dr_pack_pick_t *pick);
    /* the choice was booked.  May be NULL. */
    void (*booked)(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                   const dr_pack_pick_t *pick);
} dr_pack_ops_t;

struct dr_packer {
    const dr_pack_ops_t *ops;
    void *state;
    uint32_t *rank; /* [node] tie-break rank, lowest wins */
    size_t nnodes;
    uint16_t maxg;    /* most GPUs on one node */
    bool placed_only; /* observe requests once placed, not on arrival */
    dr_rng_t rng;     /* for policies that draw (seeded from the packer seed) */
};

extern const dr_pack_ops_t dr_pack_random_ops, dr_pack_dotprod_ops, dr_pack_gpuclustering_ops,
    dr_pack_gpupacking_ops, dr_pack_bestfit_ops, dr_pack_fgd_ops, dr_pack_drover_ops;

static inline bool dr_pack_is_share(const dr_pack_req_t *r)
{
    return r->ngpus == 1 && r->gpu_milli < 1000;
}

/* Free milli left on the node's GPUs in total. */
uint32_t dr_pack_milli_left(const dr_cluster_t *c, const dr_node_t *n);

/* The share GPU best-fit takes: the one with the least free milli that is
 * still >= milli (lowest index on ties); -1 if none. */
int32_t dr_pack_tightest_gpu(const dr_cluster_t *c, const dr_node_t *n, uint32_t milli);

/* Score a node that fits (higher is better) and, for a share, the GPU. */
typedef double (*dr_pack_score_fn)(dr_packer_t *p, const dr_cluster_t *c, uint32_t node,
                                   const dr_pack_req_t *r, int32_t *gpu);
/* The best-scoring node that fits (ties to the lowest rank). */
int dr_pack_argmax(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                   dr_pack_score_fn score, dr_pack_pick_t *pick);

/* Parse a whole number / a real option value; errors name the option. */
int dr_pack_opt_u64(const char *policy, const char *key, const char *val, uint64_t max,
                    uint64_t *out, dr_err_t *err);
int dr_pack_opt_double(const char *policy, const char *key, const char *val, double lo, double hi,
                       double *out, dr_err_t *err);

#endif
