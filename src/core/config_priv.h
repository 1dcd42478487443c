/* config_priv.h - limits shared by the cluster configuration readers
 * (config.c, config_openb.c), and what config.c asks config_slurm.c of a
 * site's slurm.conf.  Not part of the public API. */
#ifndef DROVER_CORE_CONFIG_PRIV_H
#define DROVER_CORE_CONFIG_PRIV_H

/* A configuration may define at most this many nodes (pool nodes included)
 * and this many GPUs; larger inputs are rejected before anything is added. */
#define DR_CONFIG_MAX_NODES 1000000u
#define DR_CONFIG_MAX_GPUS  (16u * 1024u * 1024u)
#define DR_CONFIG_MAX_HOLDS (16u * 1024u * 1024u) /* Shards= (node, shard) pairs */

#include <stdbool.h>
#include <stddef.h>

/* Is key a slurm.conf parameter drover accepts and ignores: a global line,
 * a NodeName= key, a PartitionName= key (case-insensitive)? */
bool dr_slurm_global_key(const char *key);
bool dr_slurm_node_key(const char *key);
bool dr_slurm_part_key(const char *key);
/* A Slurm GPU type name as words for dr_gpu_type_from_product ("a100_80g"
 * -> "A100 80GB"), into out[n]. */
void dr_slurm_gpu_words(const char *type, char *out, size_t n);

#endif
