/* gpu_nvml.c - NVIDIA GPUs through NVML, loaded at run time.
 *
 * libnvidia-ml.so.1 comes with the driver, not with drover: it is opened
 * with dlopen and reached through a table of function pointers, so the
 * agent builds and runs on nodes without it (the source then answers
 * DR_ENOENT and discovery moves on).  The library is closed again after
 * discovery; the agent has no use for NVML while jobs run. */
#include "agent/gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "agent/gpu_priv.h"

/* The part of NVML's ABI used here, declared by hand because drover builds
 * without NVML's headers.  Layouts and values from the NVML API reference
 * (docs.nvidia.com/deploy/nvml-api: "Device Structs" nvmlPciInfo_t and
 * nvmlMemory_t, "Error reporting" nvmlReturn_t) and nvml.h. */
typedef int nvmlReturn_t; /* an enum: int-sized in the C ABI */
#define NVML_SUCCESS                    0
#define NVML_ERROR_NOT_SUPPORTED        3
#define NVML_ERROR_DRIVER_NOT_LOADED    9
#define NVML_ERROR_FUNCTION_NOT_FOUND   13
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlPciInfo_st {
    char busIdLegacy[16]; /* NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE: "0000:17:00.0" */
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId; /* device id << 16 | vendor id */
    unsigned int pciSubSystemId;
    char busId[32]; /* NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE: "00000000:17:00.0" */
} nvmlPciInfo_t;    /* the same layout for nvmlDeviceGetPciInfo_v2 and _v3 */
typedef struct nvmlMemory_st {
    unsigned long long total; /* bytes */
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct nvml_api {
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    nvmlReturn_t (*count)(unsigned int *n);
    nvmlReturn_t (*handle)(unsigned int i, nvmlDevice_t *dev);
    nvmlReturn_t (*name)(nvmlDevice_t dev, char *buf, unsigned int len);
    nvmlReturn_t (*uuid)(nvmlDevice_t dev, char *buf, unsigned int len);
    nvmlReturn_t (*pci_v3)(nvmlDevice_t dev, nvmlPciInfo_t *pci); /* NULL if absent */
    nvmlReturn_t (*pci_v2)(nvmlDevice_t dev, nvmlPciInfo_t *pci); /* NULL if absent */
    nvmlReturn_t (*mem)(nvmlDevice_t dev, nvmlMemory_t *mem);
    const char *(*errstr)(nvmlReturn_t rc);
} nvml_api_t;

#define NVML_SONAME "libnvidia-ml.so.1"

/* dlsym into a function pointer (POSIX guarantees the conversion). */
#define NVML_SYM(h, api, field, sym) ((api)->field = (__typeof__((api)->field))dlsym(h, sym))

static int nvml_load(void *h, const char *lib, nvml_api_t *api, dr_err_t *err)
{
    memset(api, 0, sizeof *api);
    const char *missing = NULL;
    if (!NVML_SYM(h, api, init, "nvmlInit_v2"))
        missing = "nvmlInit_v2";
    else if (!NVML_SYM(h, api, shutdown, "nvmlShutdown"))
        missing = "nvmlShutdown";
    else if (!NVML_SYM(h, api, count, "nvmlDeviceGetCount_v2"))
        missing = "nvmlDeviceGetCount_v2";
    else if (!NVML_SYM(h, api, handle, "nvmlDeviceGetHandleByIndex_v2"))
        missing = "nvmlDeviceGetHandleByIndex_v2";
    else if (!NVML_SYM(h, api, name, "nvmlDeviceGetName"))
        missing = "nvmlDeviceGetName";
    else if (!NVML_SYM(h, api, uuid, "nvmlDeviceGetUUID"))
        missing = "nvmlDeviceGetUUID";
    else if (!NVML_SYM(h, api, mem, "nvmlDeviceGetMemoryInfo"))
        missing = "nvmlDeviceGetMemoryInfo";
    else if (!NVML_SYM(h, api, errstr, "nvmlErrorString"))
        missing = "nvmlErrorString";
    if (missing) {
        dr_err_set(err, DR_ENOENT, "nvml: %s has no %s", lib, missing);
        return DR_ENOENT;
    }
    /* _v3 since driver 510; older drivers only have _v2, same struct. */
    NVML_SYM(h, api, pci_v3, "nvmlDeviceGetPciInfo_v3");
    NVML_SYM(h, api, pci_v2, "nvmlDeviceGetPciInfo_v2");
    if (!api->pci_v3 && !api->pci_v2) {
        dr_err_set(err, DR_ENOENT, "nvml: %s has no nvmlDeviceGetPciInfo_v3 or _v2", lib);
        return DR_ENOENT;
    }
    return DR_OK;
}

static const char *nvml_str(const nvml_api_t *api, nvmlReturn_t rc)
{
    const char *s = api->errstr(rc);
    return s ? s : "?";
}

/* "nvml: CALL(i): Error String (rc)" as DR_EIO. */
static int nvml_fail(const nvml_api_t *api, dr_err_t *err, const char *call, long dev,
                     nvmlReturn_t rc)
{
    char where[24] = ""; /* "(" + any long + ")" */
    if (dev >= 0)
        snprintf(where, sizeof where, "(%ld)", dev);
    return dr_err_set(err, DR_EIO, "nvml: %s%s: %s (%d)", call, where, nvml_str(api, rc), rc);
}

static nvmlReturn_t nvml_pci(const nvml_api_t *api, nvmlDevice_t dev, nvmlPciInfo_t *pci)
{
    nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (api->pci_v3)
        rc = api->pci_v3(dev, pci);
    if (rc == NVML_ERROR_FUNCTION_NOT_FOUND && api->pci_v2)
        rc = api->pci_v2(dev, pci);
    return rc;
}

/* Fill one entry.  A property the device does not support (NOT_SUPPORTED)
 * is left unknown; any other failure is the driver's and fails discovery. */
static int nvml_device(const nvml_api_t *api, unsigned int i, dr_gpu_info_t *g, dr_err_t *err)
{
    nvmlDevice_t dev = NULL;
    nvmlReturn_t rc = api->handle(i, &dev);
    if (rc != NVML_SUCCESS)
        return nvml_fail(api, err, "nvmlDeviceGetHandleByIndex_v2", i, rc);

    char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "";
    rc = api->name(dev, buf, sizeof buf);
    if (rc != NVML_SUCCESS)
        return nvml_fail(api, err, "nvmlDeviceGetName", i, rc);
    buf[sizeof buf - 1] = '\0';
    dr_gpu_strcpy(g->name, sizeof g->name, buf);

    char ubuf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
    rc = api->uuid(dev, ubuf, sizeof ubuf);
    if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_SUPPORTED)
        return nvml_fail(api, err, "nvmlDeviceGetUUID", i, rc);
    ubuf[sizeof ubuf - 1] = '\0';
    dr_gpu_strcpy(g->uuid, sizeof g->uuid, rc == NVML_SUCCESS ? ubuf : "");

    nvmlPciInfo_t pci;
    memset(&pci, 0, sizeof pci);
    rc = nvml_pci(api, dev, &pci);
    if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_SUPPORTED)
        return nvml_fail(
            api, err, api->pci_v3 ? "nvmlDeviceGetPciInfo_v3" : "nvmlDeviceGetPciInfo_v2", i, rc);
    /* From the numbers, not busId: hwloc and sysfs spell a bus id with a
     * 4-digit lower-case domain; NVML pads busId's domain to 8 digits.  NVML
     * reports function 0 (it names devices, not functions). */
    if (rc == NVML_SUCCESS)
        snprintf(g->pci, sizeof g->pci, "%04x:%02x:%02x.0", pci.domain, pci.bus & 0xffu,
                 pci.device & 0x1fu);

    nvmlMemory_t mem;
    memset(&mem, 0, sizeof mem);
    rc = api->mem(dev, &mem);
    if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_SUPPORTED)
        return nvml_fail(api, err, "nvmlDeviceGetMemoryInfo", i, rc);
    g->mem_mb = rc == NVML_SUCCESS ? mem.total / (1024ull * 1024ull) : 0;
    return DR_OK;
}

/* With the library open and its table filled: init, list, shut down. */
static int nvml_query(const nvml_api_t *api, dr_gpu_list_t *out, dr_err_t *err)
{
    nvmlReturn_t rc = api->init();
    /* A driver package without a running kernel driver (a CPU node with
     * the user-space libraries installed) is "no NVIDIA GPU here". */
    if (rc == NVML_ERROR_DRIVER_NOT_LOADED)
        return dr_err_set(err, DR_ENOENT, "nvml: nvmlInit_v2: %s (%d)", nvml_str(api, rc), rc);
    if (rc != NVML_SUCCESS)
        return nvml_fail(api, err, "nvmlInit_v2", -1, rc);

    unsigned int n = 0;
    int ret = DR_OK;
    rc = api->count(&n);
    if (rc != NVML_SUCCESS)
        ret = nvml_fail(api, err, "nvmlDeviceGetCount_v2", -1, rc);
    else if (n == 0)
        ret = dr_err_set(err, DR_ENOENT, "nvml: no devices");
    else
        ret = dr_gpu_list_alloc(out, n, "nvml", err);
    for (unsigned int i = 0; ret == DR_OK && i < n; i++)
        ret = nvml_device(api, i, &out->gpus[i], err);
    if (ret != DR_OK)
        dr_gpu_list_free(out);
    api->shutdown();
    return ret;
}

int dr_gpu_nvml_discover(const char *lib_path, dr_gpu_list_t *out, dr_err_t *err)
{
    memset(out, 0, sizeof *out);
    const char *lib = lib_path ? lib_path : NVML_SONAME;
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        return dr_err_set(err, DR_ENOENT, "nvml: cannot load %s: %s", lib, why ? why : "?");
    }
    nvml_api_t api;
    int ret = nvml_load(h, lib, &api, err);
    if (ret == DR_OK)
        ret = nvml_query(&api, out, err);
    dlclose(h);
    return ret;
}
