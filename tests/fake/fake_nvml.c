/* fake_nvml.c - a stand-in libnvidia-ml.so.1 for the agent's tests.
 *
 * It exports the NVML entry points drover calls, with NVML's prototypes,
 * return codes and struct layouts, and reports the GPUs an environment
 * variable describes, so that the dlopen path runs on machines without an
 * NVIDIA driver:
 *   FAKE_NVML_GPUS="NAME:MEM_MIB:PCI;..."  e.g.
 *       "NVIDIA H100 80GB HBM3:81559:0000:17:00.0;NVIDIA H100 80GB HBM3:81559:0000:2a:00.0"
 *   FAKE_NVML_FAIL="CALL[=CODE],..."  makes CALL return CODE (default
 *       NVML_ERROR_UNKNOWN, 999), e.g. "nvmlInit_v2" or "nvmlDeviceGetUUID=3".
 * Like NVML, every call but nvmlInit_v2 and nvmlErrorString answers
 * NVML_ERROR_UNINITIALIZED before init.  fake_nvml_refcount() (not NVML)
 * lets a test check that every init was matched by a shutdown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
#define NVML_SUCCESS                 0
#define NVML_ERROR_UNINITIALIZED     1
#define NVML_ERROR_INVALID_ARGUMENT  2
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_UNKNOWN           999

typedef struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

#define FAKE_MAX 16
struct nvmlDevice_st {
    char name[96];
    unsigned long long mem_mib;
    unsigned int domain, bus, dev;
};
typedef struct nvmlDevice_st *nvmlDevice_t;

static struct nvmlDevice_st devs[FAKE_MAX];
static unsigned int ndevs;
static int refcount;

/* Exported prototypes (no NVML header here to declare them). */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *dev);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int len);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned int len);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t dev, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *mem);
const char *nvmlErrorString(nvmlReturn_t rc);
int fake_nvml_refcount(void);

/* The code FAKE_NVML_FAIL assigns to `call`, or NVML_SUCCESS. */
static nvmlReturn_t injected(const char *call)
{
    const char *spec = getenv("FAKE_NVML_FAIL");
    size_t n = strlen(call);
    while (spec && *spec) {
        size_t len = strcspn(spec, ",");
        if (len >= n && !strncmp(spec, call, n) && (len == n || spec[n] == '='))
            return len == n ? NVML_ERROR_UNKNOWN : (nvmlReturn_t)atoi(spec + n + 1);
        spec += len + (spec[len] == ',');
    }
    return NVML_SUCCESS;
}

static void load_devices(void)
{
    ndevs = 0;
    const char *s = getenv("FAKE_NVML_GPUS");
    while (s && *s && ndevs < FAKE_MAX) {
        size_t len = strcspn(s, ";");
        char one[256];
        snprintf(one, sizeof one, "%.*s", (int)len, s);
        s += len + (s[len] == ';');
        char *colon = strchr(one, ':');
        if (!colon)
            continue;
        *colon = '\0';
        struct nvmlDevice_st *d = &devs[ndevs];
        memset(d, 0, sizeof *d);
        snprintf(d->name, sizeof d->name, "%.*s", (int)sizeof d->name - 1, one);
        unsigned fn = 0;
        if (sscanf(colon + 1, "%llu:%x:%x:%x.%x", &d->mem_mib, &d->domain, &d->bus, &d->dev, &fn) ==
            5)
            ndevs++;
    }
}

static int valid(nvmlDevice_t dev)
{
    for (unsigned int i = 0; i < ndevs; i++)
        if (dev == &devs[i])
            return 1;
    return 0;
}

#define ENTER(call)                                                                                \
    do {                                                                                           \
        nvmlReturn_t inj_ = injected(call);                                                        \
        if (inj_ != NVML_SUCCESS)                                                                  \
            return inj_;                                                                           \
        if (refcount == 0)                                                                         \
            return NVML_ERROR_UNINITIALIZED;                                                       \
    } while (0)

nvmlReturn_t nvmlInit_v2(void)
{
    nvmlReturn_t rc = injected("nvmlInit_v2");
    if (rc != NVML_SUCCESS)
        return rc;
    if (refcount++ == 0)
        load_devices();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    ENTER("nvmlShutdown");
    refcount--;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
    ENTER("nvmlDeviceGetCount_v2");
    if (!n)
        return NVML_ERROR_INVALID_ARGUMENT;
    *n = ndevs;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *dev)
{
    ENTER("nvmlDeviceGetHandleByIndex_v2");
    if (!dev || i >= ndevs)
        return NVML_ERROR_INVALID_ARGUMENT;
    *dev = &devs[i];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int len)
{
    ENTER("nvmlDeviceGetName");
    if (!valid(dev) || !name)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(dev->name) >= len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(name, dev->name, strlen(dev->name) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned int len)
{
    ENTER("nvmlDeviceGetUUID");
    if (!valid(dev) || !uuid)
        return NVML_ERROR_INVALID_ARGUMENT;
    char buf[96];
    snprintf(buf, sizeof buf, "GPU-fa4e0000-0000-4000-8000-%012x", (unsigned)(dev - devs));
    if (strlen(buf) >= len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(uuid, buf, strlen(buf) + 1);
    return NVML_SUCCESS;
}

static nvmlReturn_t fill_pci(nvmlDevice_t dev, nvmlPciInfo_t *pci)
{
    if (!valid(dev) || !pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    /* NVML's spelling: upper-case hex, busId with an 8-digit domain. */
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", dev->domain & 0xffffu,
             dev->bus, dev->dev);
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", dev->domain, dev->bus, dev->dev);
    pci->domain = dev->domain;
    pci->bus = dev->bus;
    pci->device = dev->dev;
    pci->pciDeviceId = 0x233010deu; /* H100 SXM5: device 0x2330, vendor 0x10de */
    pci->pciSubSystemId = 0x16c110deu;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t *pci)
{
    ENTER("nvmlDeviceGetPciInfo_v3");
    return fill_pci(dev, pci);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t dev, nvmlPciInfo_t *pci)
{
    ENTER("nvmlDeviceGetPciInfo_v2");
    return fill_pci(dev, pci);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *mem)
{
    ENTER("nvmlDeviceGetMemoryInfo");
    if (!valid(dev) || !mem)
        return NVML_ERROR_INVALID_ARGUMENT;
    mem->total = dev->mem_mib * 1024ull * 1024ull;
    mem->used = 4ull * 1024 * 1024; /* what the driver reserves on an idle GPU */
    mem->free = mem->total - mem->used;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t rc)
{
    switch (rc) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 7: return "Insufficient Size";
    case 9: return "Driver Not Loaded";
    case 13: return "Function Not Found";
    case 15: return "GPU is lost";
    default: return "Unknown Error";
    }
}

int fake_nvml_refcount(void)
{
    return refcount;
}
