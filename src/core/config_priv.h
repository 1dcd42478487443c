/* config_priv.h - limits shared by the cluster configuration readers
 * (config.c, config_openb.c).  Not part of the public API. */
#ifndef DROVER_CORE_CONFIG_PRIV_H
#define DROVER_CORE_CONFIG_PRIV_H

/* A configuration may define at most this many nodes (pool nodes included)
 * and this many GPUs; larger inputs are rejected before anything is added. */
#define DR_CONFIG_MAX_NODES 1000000u
#define DR_CONFIG_MAX_GPUS  (16u * 1024u * 1024u)
#define DR_CONFIG_MAX_HOLDS (16u * 1024u * 1024u) /* Shards= (node, shard) pairs */

#endif
