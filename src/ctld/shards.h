/* shards.h - data locality (shards.c). */
#ifndef DROVER_CTLD_SHARDS_H
#define DROVER_CTLD_SHARDS_H

#include "ctld/ctld.h"

/* Node `node` now holds exactly these shards (an agent's report). */
void ctld_node_shards(dr_ctld_t *c, uint32_t node, char *const *names, uint32_t n);
/* cj->j.req.shard from its spec's shard (expanded for an array task):
 * 1 + the cluster's id of the name (interned if new), 0 for none. */
void ctld_shard_bind(dr_ctld_t *c, ctld_job_t *cj);
/* The name of cj's shard, NULL if none. */
const char *ctld_job_shard(const dr_ctld_t *c, const ctld_job_t *cj);
/* Append DROVER_SHARD=name to a LAUNCH's env when cj names a shard. */
void ctld_shard_env(dr_ctld_t *c, const ctld_job_t *cj, dr_strvec_t *env);

#endif
