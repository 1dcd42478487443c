/* pack.h - packing policies: where one single-node request goes, node and GPUs.
 *
 * A packer scores every node that can take a request right now and books the
 * best one in the cluster ledger (dr_cluster_take).  It is online: one
 * request at a time, nothing is ever moved, and it knows only the requests it
 * has been shown so far (FGD's "target workload" is the distribution of those
 * shapes).  Policies are registered by name:
 *
 *   random, dotprod, gpuclustering, gpupacking, bestfit, fgd  the baselines of
 *       the FGD paper (Weng et al., ATC'23), as its simulator defines them;
 *   drover  drover's own packing policy (docs/scheduling.md, "openb packing").
 *
 * A spec is "NAME" or "NAME:key=val,key=val" (options per policy, listed by
 * dr_pack_policy_doc).  Ties between nodes go to the lowest rank; ranks
 * default to the node index.  The openb replay (openb.h) and dr_place's
 * DR_PLACE_FGD / DR_PLACE_PACK strategies both use this interface. */
#ifndef DROVER_PACK_H
#define DROVER_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/job.h"

/* One request on one node. */
typedef struct dr_pack_req {
    uint32_t cpu_milli;
    uint64_t mem_mb;
    uint32_t ngpus;        /* 0 = CPU only (needs only CPU and memory) */
    uint32_t gpu_milli;    /* per GPU, 1..1000; < 1000 (a share) only with ngpus == 1 */
    dr_typemask_t allowed; /* GPU types it may use (ignored when ngpus == 0); 0 = none */
    uint32_t nodeset;      /* the nodes it may use (partition.h); 0 = any */
} dr_pack_req_t;

typedef struct dr_packer dr_packer_t;

/* Create a packer for cluster c (finalised).  seed feeds policies that draw
 * random numbers (random).  Errors name the unknown policy or option. */
int dr_packer_create(dr_packer_t **out, const char *spec, const dr_cluster_t *c, uint64_t seed,
                     dr_err_t *err);
void dr_packer_free(dr_packer_t *p);
const char *dr_packer_name(const dr_packer_t *p);
/* Node tie-break ranks (rank[node]; ties go to the lowest), n = c->nnodes. */
int dr_packer_set_ranks(dr_packer_t *p, const uint32_t *rank, size_t n, dr_err_t *err);
/* Record r as seen, choose a node and GPUs, book them and fill *out (free with
 * dr_alloc_free).  DR_ENOSPC (and *out empty) if no node can take r now. */
int dr_packer_place(dr_packer_t *p, dr_cluster_t *c, const dr_pack_req_t *r, dr_alloc_t *out);
/* Which requests make up "the shapes seen so far": all those shown to
 * dr_packer_place (the default, the openb protocol: each pod arrives once),
 * or only those it placed (for a scheduler, which retries a blocked job on
 * every pass and would otherwise count it once per pass). */
void dr_packer_count_placed_only(dr_packer_t *p, bool on);

/* Could node n take r right now?  CPU and memory fit; a GPU request needs
 * a node of an allowed type with ngpus fully free GPUs, or for a share one GPU
 * with gpu_milli free.  Down or hidden nodes never fit. */
bool dr_pack_fits(const dr_cluster_t *c, const dr_node_t *n, const dr_pack_req_t *r);
/* Is r well formed (ngpus, gpu_milli in range)?  err names the field. */
int dr_pack_req_validate(const dr_pack_req_t *r, dr_err_t *err);

/* NULL-terminated list of policy names, and a one-paragraph description
 * (options included) or NULL for an unknown name. */
const char *const *dr_pack_policy_names(void);
const char *dr_pack_policy_doc(const char *name);

#endif
