/* gpu_rocm.c - AMD GPUs through ROCm SMI, loaded at run time.
 *
 * Like the NVML source: librocm_smi64 is opened with dlopen and reached
 * through a function table, so drover has no build-time dependency on ROCm
 * and a node without it answers DR_ENOENT. */
#include "agent/gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/gpu_priv.h"

/* The part of ROCm SMI's ABI used here, declared by hand because drover
 * builds without ROCm's headers.  From rocm_smi/rocm_smi.h (ROCm SMI
 * library API reference): rsmi_status_t is an enum whose last value is
 * 0xFFFFFFFF (RSMI_STATUS_UNKNOWN_ERROR), so it is 32-bit unsigned;
 * rsmi_memory_type_t is a small enum (RSMI_MEM_TYPE_VRAM = 0). */
typedef uint32_t rsmi_status_t;
#define RSMI_STATUS_SUCCESS       0u
#define RSMI_STATUS_NOT_SUPPORTED 2u
#define RSMI_STATUS_INIT_ERROR    8u /* rsmi_init without an amdgpu driver, among others */
typedef int rsmi_memory_type_t;
#define RSMI_MEM_TYPE_VRAM 0

typedef struct rocm_api {
    rsmi_status_t (*init)(uint64_t flags);
    rsmi_status_t (*shut_down)(void);
    rsmi_status_t (*count)(uint32_t *n);
    rsmi_status_t (*name)(uint32_t dv, char *buf, size_t len);
    rsmi_status_t (*unique_id)(uint32_t dv, uint64_t *id);
    rsmi_status_t (*pci_id)(uint32_t dv, uint64_t *bdfid);
    rsmi_status_t (*mem_total)(uint32_t dv, rsmi_memory_type_t type, uint64_t *total);
    rsmi_status_t (*status_string)(rsmi_status_t st, const char **s);
} rocm_api_t;

/* The unversioned name (the development symlink, or ld.so.conf set up by
 * the ROCm packages), the oldest soname, then ROCm's default prefix, which
 * its packages do not always add to the loader's path. */
static const char *const rocm_libs[] = {"librocm_smi64.so", "librocm_smi64.so.1",
                                        "/opt/rocm/lib/librocm_smi64.so"};

#define ROCM_SYM(h, api, field, sym) ((api)->field = (__typeof__((api)->field))dlsym(h, sym))

static int rocm_load(void *h, const char *lib, rocm_api_t *api, dr_err_t *err)
{
    memset(api, 0, sizeof *api);
    const char *missing = NULL;
    if (!ROCM_SYM(h, api, init, "rsmi_init"))
        missing = "rsmi_init";
    else if (!ROCM_SYM(h, api, shut_down, "rsmi_shut_down"))
        missing = "rsmi_shut_down";
    else if (!ROCM_SYM(h, api, count, "rsmi_num_monitor_devices"))
        missing = "rsmi_num_monitor_devices";
    else if (!ROCM_SYM(h, api, name, "rsmi_dev_name_get"))
        missing = "rsmi_dev_name_get";
    else if (!ROCM_SYM(h, api, unique_id, "rsmi_dev_unique_id_get"))
        missing = "rsmi_dev_unique_id_get";
    else if (!ROCM_SYM(h, api, pci_id, "rsmi_dev_pci_id_get"))
        missing = "rsmi_dev_pci_id_get";
    else if (!ROCM_SYM(h, api, mem_total, "rsmi_dev_memory_total_get"))
        missing = "rsmi_dev_memory_total_get";
    else if (!ROCM_SYM(h, api, status_string, "rsmi_status_string"))
        missing = "rsmi_status_string";
    if (missing) {
        dr_err_set(err, DR_ENOENT, "rocm: %s has no %s", lib, missing);
        return DR_ENOENT;
    }
    return DR_OK;
}

static int rocm_fail(const rocm_api_t *api, dr_err_t *err, const char *call, long dev,
                     rsmi_status_t st)
{
    const char *s = NULL;
    if (api->status_string(st, &s) != RSMI_STATUS_SUCCESS || !s)
        s = "unknown status";
    char where[24] = ""; /* "(" + any long + ")" */
    if (dev >= 0)
        snprintf(where, sizeof where, "(%ld)", dev);
    return dr_err_set(err, DR_EIO, "rocm: %s%s: %s (%u)", call, where, s, (unsigned)st);
}

static int rocm_device(const rocm_api_t *api, uint32_t i, dr_gpu_info_t *g, dr_err_t *err)
{
    char buf[sizeof g->name] = "";
    rsmi_status_t st = api->name(i, buf, sizeof buf);
    if (st != RSMI_STATUS_SUCCESS)
        return rocm_fail(api, err, "rsmi_dev_name_get", i, st);
    buf[sizeof buf - 1] = '\0';
    dr_gpu_strcpy(g->name, sizeof g->name, buf);

    /* Consumer parts have no unique id (NOT_SUPPORTED): left unknown. */
    uint64_t id = 0;
    st = api->unique_id(i, &id);
    if (st != RSMI_STATUS_SUCCESS && st != RSMI_STATUS_NOT_SUPPORTED)
        return rocm_fail(api, err, "rsmi_dev_unique_id_get", i, st);
    if (st == RSMI_STATUS_SUCCESS)
        snprintf(g->uuid, sizeof g->uuid, "0x%016llx", (unsigned long long)id);

    /* BDFID = domain << 32 | partition << 28 | bus << 8 | device << 3 |
     * function (rsmi_dev_pci_id_get; bits 27-16 reserved, the partition
     * nibble is 0 on a whole GPU). */
    uint64_t bdf = 0;
    st = api->pci_id(i, &bdf);
    if (st != RSMI_STATUS_SUCCESS && st != RSMI_STATUS_NOT_SUPPORTED)
        return rocm_fail(api, err, "rsmi_dev_pci_id_get", i, st);
    if (st == RSMI_STATUS_SUCCESS)
        snprintf(g->pci, sizeof g->pci, "%04x:%02x:%02x.%x", (unsigned)(bdf >> 32),
                 (unsigned)(bdf >> 8) & 0xffu, (unsigned)(bdf >> 3) & 0x1fu, (unsigned)bdf & 0x7u);

    uint64_t total = 0;
    st = api->mem_total(i, RSMI_MEM_TYPE_VRAM, &total);
    if (st != RSMI_STATUS_SUCCESS && st != RSMI_STATUS_NOT_SUPPORTED)
        return rocm_fail(api, err, "rsmi_dev_memory_total_get", i, st);
    g->mem_mb = st == RSMI_STATUS_SUCCESS ? total / (1024ull * 1024ull) : 0;
    return DR_OK;
}

static int rocm_query(const rocm_api_t *api, dr_gpu_list_t *out, dr_err_t *err)
{
    rsmi_status_t st = api->init(0);
    if (st == RSMI_STATUS_INIT_ERROR && access("/sys/module/amdgpu", F_OK) != 0) {
        /* the library without the kernel driver (Debian's slurm packages
         * install it on any node): no AMD GPU here, not a failed one -
         * as NVML's "driver not loaded" */
        dr_err_t e = {0};
        rocm_fail(api, &e, "rsmi_init", -1, st);
        return dr_err_set(err, DR_ENOENT, "%s, and no amdgpu driver is loaded", e.msg);
    }
    if (st != RSMI_STATUS_SUCCESS)
        return rocm_fail(api, err, "rsmi_init", -1, st);
    uint32_t n = 0;
    int ret = DR_OK;
    st = api->count(&n);
    if (st != RSMI_STATUS_SUCCESS)
        ret = rocm_fail(api, err, "rsmi_num_monitor_devices", -1, st);
    else if (n == 0)
        ret = dr_err_set(err, DR_ENOENT, "rocm: no devices");
    else
        ret = dr_gpu_list_alloc(out, n, "rocm", err);
    for (uint32_t i = 0; ret == DR_OK && i < n; i++)
        ret = rocm_device(api, i, &out->gpus[i], err);
    if (ret != DR_OK)
        dr_gpu_list_free(out);
    api->shut_down();
    return ret;
}

int dr_gpu_rocm_discover(const char *lib_path, dr_gpu_list_t *out, dr_err_t *err)
{
    memset(out, 0, sizeof *out);
    void *h = NULL;
    const char *lib = lib_path;
    char why[256] = "";
    if (lib_path) {
        h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            dr_gpu_strcpy(why, sizeof why, e ? e : "?");
        }
    } else {
        for (size_t k = 0; !h && k < sizeof rocm_libs / sizeof rocm_libs[0]; k++) {
            lib = rocm_libs[k];
            h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
            /* Keep the first reason: the later names are fallbacks. */
            const char *e = h ? NULL : dlerror();
            if (e && !why[0])
                dr_gpu_strcpy(why, sizeof why, e);
        }
    }
    if (!h)
        return dr_err_set(err, DR_ENOENT, "rocm: cannot load %s: %s",
                          lib_path ? lib_path : rocm_libs[0], why);
    rocm_api_t api;
    int ret = rocm_load(h, lib, &api, err);
    if (ret == DR_OK)
        ret = rocm_query(&api, out, err);
    dlclose(h);
    return ret;
}
