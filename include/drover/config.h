/* config.h - the cluster configuration file, in the Slurm admin's idiom.
 *
 *   # comments and blank lines are ignored; a trailing '\' continues a line
 *   GpuType=G2 MemGB=32 TdpW=250 PricePerGpuHour=1.1     # a type not in the catalog
 *   NodeName=h100-[001-016] Gpus=H100-SXM:8 Cpus=192 MemGB=2048 NvlinkDomain=node Switch=leaf1
 *   NodeName=g2-[1-4] Gpus=G2:4 Cpus=64 MemGB=256
 *   NodeName=cpu[1-4] Cpus=64 MemGB=256                  # CPU-only nodes
 *   SwitchName=leaf2 Nodes=g2-[1-4],cpu[1-4] LinkGbps=400
 *   SwitchName=spine Switches=leaf[1-2]
 *   Pool=cloud-h100 Gpus=H100-SXM:8 MaxNodes=32 Cpus=192 MemGB=2048
 *        PricePerGpuHour=4.10 ProvisionDelay=5m SpotInterruptRate=0.02
 *
 * Things are declared before they are used (a GpuType before its nodes,
 * nodes before a switch lists them, child switches before their parent).
 * Cpus= and MemGB= are required on nodes.  LinkGbps is Gbit/s.  Keys are
 * case-insensitive.  Errors read "FILE:LINE: KEY: what is wrong";
 * docs/config.md is the full reference. */
#ifndef DROVER_CONFIG_H
#define DROVER_CONFIG_H

#include <stddef.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/util.h"

/* Parse a configuration held in memory into c (which must be initialised
 * with dr_cluster_init; it is finalised on success).  GPU types are looked
 * up in cat; `name` is the file name used in messages. */
int dr_config_parse(dr_cluster_t *c, const dr_catalog_t *cat, const char *name, const char *buf,
                    size_t len, dr_err_t *err);
int dr_config_load(dr_cluster_t *c, const dr_catalog_t *cat, const char *path, dr_err_t *err);
/* The same, also reading a site's slurm.conf (NodeName= with CPUs=,
 * RealMemory=, Gres=gpu:TYPE:N, Features=; PartitionName=; DEFAULT lines;
 * global parameters): what drover accepts but does not act on is appended
 * to notes (when not NULL) as "FILE:LINE: KEY: ignored" lines, never an
 * error.  docs/config.md lists what is read. */
int dr_config_parse_notes(dr_cluster_t *c, const dr_catalog_t *cat, const char *name,
                          const char *buf, size_t len, dr_strvec_t *notes, dr_err_t *err);
int dr_config_load_notes(dr_cluster_t *c, const dr_catalog_t *cat, const char *path,
                         dr_strvec_t *notes, dr_err_t *err);

/* The Alibaba openb node list (sn,cpu_milli,memory_mib,gpu,model) into c
 * (initialised; finalised on success), one node per row.  GPU models
 * missing from cat become declared types whose figures are unknown.  The
 * "openb" preset is this list (docs/config.md). */
int dr_openb_nodes_parse(dr_cluster_t *c, const dr_catalog_t *cat, const char *name,
                         const char *buf, size_t len, dr_err_t *err);

/* Built-in cluster presets ("gavel-36-36-36", "openb", "philly", "mixed-modern",
 * ...).  Returns DR_ENOENT for an unknown name. */
int dr_cluster_preset(dr_cluster_t *c, const dr_catalog_t *cat, const char *name, dr_err_t *err);
/* NULL-terminated list of preset names and one-line descriptions. */
const char *const *dr_cluster_preset_names(void);
const char *dr_cluster_preset_doc(const char *name);

#endif
