/* fake_rocm.c - a stand-in librocm_smi64.so for the agent's tests.
 *
 * The ROCm SMI entry points drover calls, with ROCm SMI's prototypes and
 * status codes, reporting the GPUs an environment variable describes:
 *   FAKE_ROCM_GPUS="NAME:MEM_MIB:PCI;..."  e.g.
 *       "AMD Instinct MI300X:196592:0000:0c:00.0;AMD Instinct MI300X:196592:0000:22:00.0"
 *   FAKE_ROCM_FAIL="CALL[=CODE],..."  makes CALL return CODE (default
 *       RSMI_STATUS_UNKNOWN_ERROR, 0xFFFFFFFF), e.g. "rsmi_init".
 * Every call but rsmi_init and rsmi_status_string answers
 * RSMI_STATUS_INIT_ERROR before init, as the library's reference count
 * does.  fake_rocm_refcount() (not ROCm SMI) lets a test check that every
 * init was matched by a shut-down. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint32_t rsmi_status_t;
#define RSMI_STATUS_SUCCESS           0u
#define RSMI_STATUS_INVALID_ARGS      1u
#define RSMI_STATUS_INIT_ERROR        8u
#define RSMI_STATUS_INSUFFICIENT_SIZE 11u
#define RSMI_STATUS_UNKNOWN_ERROR     0xFFFFFFFFu
typedef int rsmi_memory_type_t;
#define RSMI_MEM_TYPE_VRAM 0

#define FAKE_MAX 16
typedef struct fake_dev {
    char name[96];
    unsigned long long mem_mib;
    unsigned int domain, bus, dev, fn;
} fake_dev_t;

static fake_dev_t devs[FAKE_MAX];
static uint32_t ndevs;
static int refcount;

rsmi_status_t rsmi_init(uint64_t flags);
rsmi_status_t rsmi_shut_down(void);
rsmi_status_t rsmi_num_monitor_devices(uint32_t *n);
rsmi_status_t rsmi_dev_name_get(uint32_t dv, char *name, size_t len);
rsmi_status_t rsmi_dev_unique_id_get(uint32_t dv, uint64_t *id);
rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv, uint64_t *bdfid);
rsmi_status_t rsmi_dev_memory_total_get(uint32_t dv, rsmi_memory_type_t type, uint64_t *total);
rsmi_status_t rsmi_status_string(rsmi_status_t st, const char **s);
int fake_rocm_refcount(void);

static rsmi_status_t injected(const char *call)
{
    const char *spec = getenv("FAKE_ROCM_FAIL");
    size_t n = strlen(call);
    while (spec && *spec) {
        size_t len = strcspn(spec, ",");
        if (len >= n && !strncmp(spec, call, n) && (len == n || spec[n] == '='))
            return len == n ? RSMI_STATUS_UNKNOWN_ERROR
                            : (rsmi_status_t)strtoul(spec + n + 1, NULL, 0);
        spec += len + (spec[len] == ',');
    }
    return RSMI_STATUS_SUCCESS;
}

static void load_devices(void)
{
    ndevs = 0;
    const char *s = getenv("FAKE_ROCM_GPUS");
    while (s && *s && ndevs < FAKE_MAX) {
        size_t len = strcspn(s, ";");
        char one[256];
        snprintf(one, sizeof one, "%.*s", (int)len, s);
        s += len + (s[len] == ';');
        char *colon = strchr(one, ':');
        if (!colon)
            continue;
        *colon = '\0';
        fake_dev_t *d = &devs[ndevs];
        memset(d, 0, sizeof *d);
        snprintf(d->name, sizeof d->name, "%.*s", (int)sizeof d->name - 1, one);
        if (sscanf(colon + 1, "%llu:%x:%x:%x.%x", &d->mem_mib, &d->domain, &d->bus, &d->dev,
                   &d->fn) == 5)
            ndevs++;
    }
}

#define ENTER(call)                                                                                \
    do {                                                                                           \
        rsmi_status_t inj_ = injected(call);                                                       \
        if (inj_ != RSMI_STATUS_SUCCESS)                                                           \
            return inj_;                                                                           \
        if (refcount == 0)                                                                         \
            return RSMI_STATUS_INIT_ERROR;                                                         \
    } while (0)

rsmi_status_t rsmi_init(uint64_t flags)
{
    (void)flags;
    rsmi_status_t st = injected("rsmi_init");
    if (st != RSMI_STATUS_SUCCESS)
        return st;
    if (refcount++ == 0)
        load_devices();
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_shut_down(void)
{
    ENTER("rsmi_shut_down");
    refcount--;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_num_monitor_devices(uint32_t *n)
{
    ENTER("rsmi_num_monitor_devices");
    if (!n)
        return RSMI_STATUS_INVALID_ARGS;
    *n = ndevs;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_name_get(uint32_t dv, char *name, size_t len)
{
    ENTER("rsmi_dev_name_get");
    if (dv >= ndevs || !name || len == 0)
        return RSMI_STATUS_INVALID_ARGS;
    /* As documented: at most len bytes are written when it is too short. */
    snprintf(name, len, "%s", devs[dv].name);
    return strlen(devs[dv].name) >= len ? RSMI_STATUS_INSUFFICIENT_SIZE : RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_unique_id_get(uint32_t dv, uint64_t *id)
{
    ENTER("rsmi_dev_unique_id_get");
    if (dv >= ndevs || !id)
        return RSMI_STATUS_INVALID_ARGS;
    *id = 0x5a1e000000000000ull | dv;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv, uint64_t *bdfid)
{
    ENTER("rsmi_dev_pci_id_get");
    if (dv >= ndevs || !bdfid)
        return RSMI_STATUS_INVALID_ARGS;
    const fake_dev_t *d = &devs[dv];
    /* BDFID = domain << 32 | partition << 28 | bus << 8 | device << 3 | function */
    *bdfid = ((uint64_t)d->domain << 32) | ((uint64_t)(d->bus & 0xffu) << 8) |
             ((uint64_t)(d->dev & 0x1fu) << 3) | (d->fn & 0x7u);
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_total_get(uint32_t dv, rsmi_memory_type_t type, uint64_t *total)
{
    ENTER("rsmi_dev_memory_total_get");
    if (dv >= ndevs || !total || type != RSMI_MEM_TYPE_VRAM)
        return RSMI_STATUS_INVALID_ARGS;
    *total = devs[dv].mem_mib * 1024ull * 1024ull;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_status_string(rsmi_status_t st, const char **s)
{
    if (!s)
        return RSMI_STATUS_INVALID_ARGS;
    switch (st) {
    case 0u: *s = "RSMI_STATUS_SUCCESS: The function has been executed successfully."; break;
    case 1u:
        *s = "RSMI_STATUS_INVALID_ARGS: The provided arguments do not meet the preconditions";
        break;
    case 2u:
        *s = "RSMI_STATUS_NOT_SUPPORTED: The requested information or action is not available";
        break;
    case 4u: *s = "RSMI_STATUS_PERMISSION: The user does not have permission"; break;
    case 8u: *s = "RSMI_STATUS_INIT_ERROR: An error occurred during initialization"; break;
    default: *s = "RSMI_STATUS_UNKNOWN_ERROR: An unknown error occurred"; break;
    }
    return RSMI_STATUS_SUCCESS;
}

int fake_rocm_refcount(void)
{
    return refcount;
}
