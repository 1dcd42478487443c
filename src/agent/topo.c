/* topo.c - the node's CPUs, memory and NUMA nodes, and which NUMA node
 * each GPU hangs off, from hwloc.
 *
 * The NUMA node of a GPU is that of the first non-I/O object above its PCI
 * device (the package or group the host bridge is attached to), when that
 * object spans exactly one node.  If hwloc cannot load a topology the agent
 * still has to register, so sysconf, /proc/meminfo and sysfs stand in and
 * the note says so. */
#include "agent/gpu.h"

#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/gpu_priv.h"

#define MIB (1024ull * 1024ull)

/* MemTotal from /proc/meminfo in MiB, 0 if unreadable. */
static uint64_t meminfo_mb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return kb / 1024ull;
}

/* Number of /sys/devices/system/node/nodeN directories, 0 if none. */
static uint32_t sysfs_numa_nodes(void)
{
    DIR *d = opendir("/sys/devices/system/node");
    if (!d)
        return 0;
    uint32_t n = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        unsigned id;
        char tail;
        if (sscanf(e->d_name, "node%u%c", &id, &tail) == 1)
            n++;
    }
    closedir(d);
    return n;
}

/* The kernel's idea of a PCI device's NUMA node, -1 if unknown.  Bus ids
 * come from drivers: only hex digits, ':' and '.' are let into the path. */
static int32_t sysfs_pci_numa(const char *pci)
{
    if (!pci[0] || strspn(pci, "0123456789abcdefABCDEF:.") != strlen(pci))
        return -1;
    char path[96];
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", pci);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int node = -1;
    if (fscanf(f, "%d", &node) != 1)
        node = -1;
    fclose(f);
    return node >= 0 ? node : -1;
}

static int topo_fallback(dr_topo_t *t, dr_gpu_list_t *gpus, const char *why, dr_err_t *err)
{
    snprintf(t->note, sizeof t->note, "hwloc: %s; CPUs and memory from sysconf and /proc", why);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t mem = meminfo_mb();
    if (n <= 0 || mem == 0)
        return dr_err_set(err, DR_EIO, "topo: hwloc: %s, and %s", why,
                          n <= 0 ? "sysconf(_SC_NPROCESSORS_ONLN) failed"
                                 : "/proc/meminfo has no MemTotal");
    t->cpus = (uint32_t)n;
    t->mem_mb = mem;
    t->numa_nodes = sysfs_numa_nodes();
    if (t->numa_nodes == 0)
        t->numa_nodes = 1;
    for (size_t i = 0; gpus && i < gpus->n; i++)
        gpus->gpus[i].numa = sysfs_pci_numa(gpus->gpus[i].pci);
    return DR_OK;
}

/* The NUMA node of the GPU at bus id pci, -1 if hwloc does not know the
 * device or its locality spans several nodes. */
static int32_t hwloc_pci_numa(hwloc_topology_t topo, const char *pci)
{
    hwloc_obj_t dev = hwloc_get_pcidev_by_busidstring(topo, pci);
    if (!dev)
        return -1;
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, dev);
    if (!anc || !anc->nodeset || hwloc_bitmap_weight(anc->nodeset) != 1)
        return -1;
    return hwloc_bitmap_first(anc->nodeset); /* nodesets hold OS indexes */
}

int dr_topo_fill(dr_topo_t *t, dr_gpu_list_t *gpus, dr_err_t *err)
{
    memset(t, 0, sizeof *t);
    bool want_pci = false;
    for (size_t i = 0; gpus && i < gpus->n; i++) {
        gpus->gpus[i].numa = -1;
        if (gpus->gpus[i].pci[0])
            want_pci = true;
    }
    /* hwloc 2.x keeps its ABI within a major version (hwloc.h). */
    if ((hwloc_get_api_version() >> 16) != (HWLOC_API_VERSION >> 16)) {
        char why[96];
        snprintf(why, sizeof why, "library API 0x%x, built for 0x%x", hwloc_get_api_version(),
                 (unsigned)HWLOC_API_VERSION);
        return topo_fallback(t, gpus, why, err);
    }
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return topo_fallback(t, gpus, "hwloc_topology_init failed", err);
    /* PCI devices are dropped by default; GPUs are needed by bus id. */
    if (want_pci && hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL) != 0) {
        hwloc_topology_destroy(topo);
        return topo_fallback(t, gpus, "hwloc_topology_set_io_types_filter failed", err);
    }
    errno = 0;
    if (hwloc_topology_load(topo) != 0) {
        char why[96];
        snprintf(why, sizeof why, "hwloc_topology_load: %s", errno ? strerror(errno) : "failed");
        hwloc_topology_destroy(topo);
        return topo_fallback(t, gpus, why, err);
    }
    int cpus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (cpus <= 0)
        cpus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (cpus <= 0) {
        hwloc_topology_destroy(topo);
        return topo_fallback(t, gpus, "no PU or core in the topology", err);
    }
    t->cpus = (uint32_t)cpus;
    int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    t->numa_nodes = numa > 0 ? (uint32_t)numa : 1;
    t->mem_mb = hwloc_get_root_obj(topo)->total_memory / MIB;
    if (t->mem_mb == 0) {
        t->mem_mb = meminfo_mb();
        snprintf(t->note, sizeof t->note, "hwloc: no memory size; memory from /proc/meminfo");
    }
    for (size_t i = 0; gpus && i < gpus->n; i++)
        if (gpus->gpus[i].pci[0])
            gpus->gpus[i].numa = hwloc_pci_numa(topo, gpus->gpus[i].pci);
    hwloc_topology_destroy(topo);
    if (t->mem_mb == 0)
        return dr_err_set(err, DR_EIO,
                          "topo: neither hwloc nor /proc/meminfo gives the memory size");
    return DR_OK;
}
