/* pack_frag.h - FGD's fragmentation measure, shared by the fgd and drover
 * packing policies.
 *
 * The target workload is the histogram of request shapes seen so far (CPU,
 * per-GPU milli, GPU count, allowed GPU types; memory too when use_mem).
 * Its "typical" part is the most frequent shapes that together make up
 * `threshold` of the requests, renormalised.  A node's fragmentation is the
 * GPU milli it is expected to leave unusable to a request drawn from that
 * distribution (Weng et al., ATC'23, Sec. 4):
 *
 *   F(node) = sum_p freq_p * (L - [p fits the node] * S_{>= milli_p})
 *
 * where L is the node's free GPU milli and S_{>= m} the free milli on its
 * GPUs with at least m free: a request that fits can use only the GPUs with
 * room for it, one that cannot (GPU count, CPU, type) leaves all of L idle. */
#ifndef DROVER_SCHED_PACK_FRAG_H
#define DROVER_SCHED_PACK_FRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/pack.h"

typedef struct dr_frag_shape {
    uint32_t cpu;
    uint32_t milli; /* per GPU; 0 for CPU-only */
    uint32_t num;
    uint64_t mem; /* 0 unless use_mem */
    dr_typemask_t allowed;
    uint64_t count;
} dr_frag_shape_t;

/* One typical GPU shape as seen from one GPU type. */
typedef struct dr_frag_term {
    uint32_t cpu;
    uint32_t milli;
    uint32_t num;
    uint64_t mem;
    double w; /* frequency (x weight) */
} dr_frag_term_t;

typedef struct dr_frag_model {
    /* options (set before the first observe) */
    double threshold;      /* popularity threshold 0 < t <= 1 (FGD: 0.95) */
    bool cpu_pods;         /* CPU-only shapes are part of the target (FGD: yes) */
    bool use_mem;          /* memory is part of a shape and of "fits" (FGD: no) */
    double gpu_weight;     /* weight a shape by 1 + gpu_weight * its GPUs (FGD: 0) */
    uint64_t mem_round_mb; /* memory of shapes rounded up to this (use_mem) */

    /* the histogram */
    dr_frag_shape_t *shapes;
    size_t nshapes, cap;
    uint32_t *order; /* shape indices, most frequent first */
    uint32_t *slot;  /* open addressing: shape index + 1, 0 = empty */
    size_t nslots;
    uint64_t total; /* requests counted (CPU-only ones only when cpu_pods) */

    /* built by dr_frag_prepare: per GPU type, its typical terms sorted by
     * milli, largest first, and the weight of all typical shapes */
    dr_frag_term_t *terms[DR_MAX_GPU_TYPES];
    size_t nterms[DR_MAX_GPU_TYPES], terms_cap[DR_MAX_GPU_TYPES];
    double wall;
    size_t ntypical;
} dr_frag_model_t;

void dr_frag_init(dr_frag_model_t *m); /* FGD's defaults */
void dr_frag_free(dr_frag_model_t *m);
/* Count one request in the histogram. */
int dr_frag_observe(dr_frag_model_t *m, const dr_pack_req_t *r);
/* Rebuild the typical set and the per-type terms for cluster c. */
int dr_frag_prepare(dr_frag_model_t *m, const dr_cluster_t *c);

/* A node's state as the measure sees it. */
typedef struct dr_frag_node {
    int type; /* GPU type, -1 for a node without GPUs */
    uint32_t cpu_left;
    uint64_t mem_left;
    uint16_t ngpus;
    const uint16_t *left; /* free milli per GPU */
} dr_frag_node_t;

/* F(node) as above. */
double dr_frag_eval(const dr_frag_model_t *m, const dr_frag_node_t *n);

/* Results per node state for one choice: on a large cluster many nodes are
 * in the same state (idle ones above all), and a state's score needs to be
 * computed once.  Reset for every request. */
typedef struct dr_frag_memo {
    uint64_t (*key)[4];
    double *score;
    uint16_t *value; /* free milli of the GPU a share takes (-> its lowest index) */
    uint32_t *stamp;
    size_t cap;
    uint32_t gen;
} dr_frag_memo_t;

void dr_frag_memo_free(dr_frag_memo_t *mo);

/* How a frag-based policy scores one candidate (node, GPU): d is the
 * decrease of F when the request lands there, term the node-level part
 * (node_term's value for that node, 0 without one).  Higher is better. */
typedef struct dr_frag_scorer {
    double (*score)(const void *ud, double d, double term);
    double (*node_term)(const void *ud, const dr_cluster_t *c, const dr_node_t *n,
                        const dr_pack_req_t *r); /* NULL = none */
    const void *ud;
} dr_frag_scorer_t;

/* The frag policies' choice: every node that fits, every GPU with room for
 * a share (the lowest index among equal scores) or the lowest idle GPUs,
 * the best score, ties to the lowest rank.  m must be prepared. */
int dr_frag_choose(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                   const dr_frag_model_t *m, dr_frag_memo_t *memo, const dr_frag_scorer_t *sc,
                   int32_t *node, int32_t *gpu);

#endif
