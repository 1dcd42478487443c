/* gpu.h - what GPUs this node has, asked of whichever driver answers.
 *
 * Three sources, tried in order: NVML (libnvidia-ml.so.1) and ROCm SMI
 * (librocm_smi64.so), each loaded with dlopen through a table of function
 * pointers so that drover has no build-time dependency on either, and the
 * GPUs the controller's config declares for this node when no driver
 * answers.  hwloc adds CPU, NUMA and PCI affinity (topo.c). */
#ifndef DROVER_AGENT_GPU_H
#define DROVER_AGENT_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "drover/catalog.h"
#include "drover/error.h"

typedef struct dr_gpu_info {
    uint32_t index;
    char name[96]; /* driver's product name, or the declared type */
    char uuid[96]; /* "" if unknown */
    char pci[32];  /* PCI bus id "0000:17:00.0", "" if unknown */
    uint64_t mem_mb;
    int32_t numa; /* NUMA node, -1 if unknown (filled by dr_topo_fill) */
} dr_gpu_info_t;

typedef struct dr_gpu_list {
    const char *source; /* "nvml", "rocm" or "declared" (static string) */
    dr_gpu_info_t *gpus;
    size_t n;
} dr_gpu_list_t;

void dr_gpu_list_free(dr_gpu_list_t *l);

/* Each driver source: DR_ENOENT when its library is absent or reports no
 * device (so the next source is tried), DR_EIO when it loaded but failed
 * (err says which call returned what).  lib_path NULL = the standard
 * soname, searched as dlopen does. */
int dr_gpu_nvml_discover(const char *lib_path, dr_gpu_list_t *out, dr_err_t *err);
int dr_gpu_rocm_discover(const char *lib_path, dr_gpu_list_t *out, dr_err_t *err);
/* The declared fallback: n GPUs of `type` with mem_mb each (0 = unknown). */
int dr_gpu_declared(const char *type, uint32_t n, uint64_t mem_mb, dr_gpu_list_t *out,
                    dr_err_t *err);

/* Discovery options: where to look (tests point them at fake libraries). */
typedef struct dr_gpu_opts {
    const char *nvml_path; /* NULL = default soname; "" = skip NVML */
    const char *rocm_path; /* NULL = default soname; "" = skip ROCm SMI */
    const char *declared_type;
    uint32_t declared_n;
    uint64_t declared_mem_mb;
} dr_gpu_opts_t;

/* NVML, then ROCm SMI, then the declaration.  Notes on why a driver was
 * skipped go to `note` (may be NULL) for the agent's log.  A driver that
 * loaded but failed (DR_EIO) ends discovery with its error: the declaration
 * stands in only where no driver is present.  No driver and nothing
 * declared is an empty list from "declared" (a CPU-only node), not an error. */
int dr_gpu_discover(const dr_gpu_opts_t *o, dr_gpu_list_t *out, char *note, size_t note_len,
                    dr_err_t *err);

/* Node topology from hwloc: CPUs, memory, NUMA nodes; fills each GPU's numa
 * from its PCI bus id where hwloc knows the device (gpus may be NULL).
 * Where hwloc fails, sysconf, /proc/meminfo and sysfs stand in and t->note
 * says why; DR_EIO only when those fail too. */
typedef struct dr_topo {
    uint32_t cpus;
    uint64_t mem_mb;
    uint32_t numa_nodes;
    char note[160]; /* why hwloc was not used (sysconf and /proc instead); "" if it was */
} dr_topo_t;
int dr_topo_fill(dr_topo_t *t, dr_gpu_list_t *gpus, dr_err_t *err);

/* dr_gpu_type_from_product (a driver's product name to a catalog type) is
 * in drover/catalog.h: the config reader maps Slurm GPU names with it too. */

#endif
