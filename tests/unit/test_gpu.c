/* test_gpu.c - GPU discovery: the NVML and ROCm SMI paths against the fake
 * libraries (tests/fake), injected failures of every call, missing
 * libraries and symbols, the order of the sources and the declared
 * fallback, hwloc topology (this machine, a two-socket XML topology and the
 * fallback when hwloc fails), and product names to catalog types. */
#include "testutil.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/gpu.h"
#include "drover/catalog.h"

#define FAKE_NVML DROVER_BINARY_DIR "/tests/fake/nvml/libnvidia-ml.so.1"
#define FAKE_ROCM DROVER_BINARY_DIR "/tests/fake/rocm/librocm_smi64.so"

#define H100       "NVIDIA H100 80GB HBM3"
#define MI300X     "AMD Instinct MI300X"
#define TWO_H100   H100 ":81559:0000:17:00.0;" H100 ":81559:0000:2a:00.0"
#define TWO_MI300X MI300X ":196592:0000:0c:00.0;" MI300X ":196592:0001:8f:1d.3"

/* The fakes stay loaded for the whole run (our dlclose then leaves them
 * mapped), so their init/shutdown balance can be read after each call. */
static void *nvml_h, *rocm_h;
static int (*nvml_refs)(void), (*rocm_refs)(void);

static int group_setup(void **state)
{
    (void)state;
    nvml_h = dlopen(FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
    rocm_h = dlopen(FAKE_ROCM, RTLD_NOW | RTLD_LOCAL);
    if (!nvml_h || !rocm_h) {
        fprintf(stderr, "test_gpu: cannot load the fake libraries: %s\n", dlerror());
        return -1;
    }
    nvml_refs = (int (*)(void))dlsym(nvml_h, "fake_nvml_refcount");
    rocm_refs = (int (*)(void))dlsym(rocm_h, "fake_rocm_refcount");
    return nvml_refs && rocm_refs ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    dlclose(nvml_h);
    dlclose(rocm_h);
    return 0;
}

static int env_reset(void **state)
{
    (void)state;
    unsetenv("FAKE_NVML_GPUS");
    unsetenv("FAKE_NVML_FAIL");
    unsetenv("FAKE_ROCM_GPUS");
    unsetenv("FAKE_ROCM_FAIL");
    unsetenv("HWLOC_XMLFILE");
    return 0;
}

static void expect_balanced(void)
{
    assert_int_equal(nvml_refs(), 0);
    assert_int_equal(rocm_refs(), 0);
}

static void test_nvml_two_gpus(void **state)
{
    (void)state;
    setenv("FAKE_NVML_GPUS", TWO_H100, 1);
    dr_gpu_list_t l;
    dr_err_t err = {0};
    int rc = dr_gpu_nvml_discover(FAKE_NVML, &l, &err);
    if (rc != DR_OK)
        fail_msg("nvml: %s", err.msg);
    assert_string_equal(l.source, "nvml");
    assert_int_equal(l.n, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(l.gpus[i].index, i);
        assert_string_equal(l.gpus[i].name, H100);
        assert_int_equal(l.gpus[i].mem_mb, 81559);
        assert_int_equal(l.gpus[i].numa, -1);
        assert_true(strncmp(l.gpus[i].uuid, "GPU-", 4) == 0);
    }
    assert_string_not_equal(l.gpus[0].uuid, l.gpus[1].uuid);
    /* 4-digit lower-case domain, as hwloc and sysfs spell bus ids */
    assert_string_equal(l.gpus[0].pci, "0000:17:00.0");
    assert_string_equal(l.gpus[1].pci, "0000:2a:00.0");
    dr_gpu_list_free(&l);
    assert_null(l.gpus);
    assert_int_equal(l.n, 0);
    expect_balanced();
}

/* Every call's failure is DR_EIO naming the call and NVML's string, with
 * nothing left in the list and NVML shut down again. */
static void test_nvml_each_call_fails(void **state)
{
    (void)state;
    static const char *const calls[] = {"nvmlInit_v2",
                                        "nvmlDeviceGetCount_v2",
                                        "nvmlDeviceGetHandleByIndex_v2",
                                        "nvmlDeviceGetName",
                                        "nvmlDeviceGetUUID",
                                        "nvmlDeviceGetPciInfo_v3",
                                        "nvmlDeviceGetMemoryInfo"};
    setenv("FAKE_NVML_GPUS", TWO_H100, 1);
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
        setenv("FAKE_NVML_FAIL", calls[i], 1);
        dr_gpu_list_t l;
        dr_err_t err = {0};
        int rc = dr_gpu_nvml_discover(FAKE_NVML, &l, &err);
        if (rc != DR_EIO)
            fail_msg("%s failing: rc %d (%s)", calls[i], rc, err.msg);
        tu_assert_contains(err.msg, calls[i]);
        tu_assert_contains(err.msg, "Unknown Error (999)");
        assert_int_equal(l.n, 0);
        assert_null(l.gpus);
        expect_balanced();
    }
    setenv("FAKE_NVML_FAIL", "nvmlDeviceGetName", 1);
    dr_gpu_list_t l;
    dr_err_t err = {0};
    assert_int_equal(dr_gpu_nvml_discover(FAKE_NVML, &l, &err), DR_EIO);
    assert_string_equal(err.msg, "nvml: nvmlDeviceGetName(0): Unknown Error (999)");
}

static void test_nvml_partial_support(void **state)
{
    (void)state;
    setenv("FAKE_NVML_GPUS", TWO_H100, 1);
    dr_gpu_list_t l;
    dr_err_t err = {0};

    /* an old driver's _v3 answers FUNCTION_NOT_FOUND: _v2 fills the same struct */
    setenv("FAKE_NVML_FAIL", "nvmlDeviceGetPciInfo_v3=13", 1);
    assert_int_equal(dr_gpu_nvml_discover(FAKE_NVML, &l, &err), DR_OK);
    assert_string_equal(l.gpus[1].pci, "0000:2a:00.0");
    dr_gpu_list_free(&l);

    /* ... but not when _v2 fails too */
    setenv("FAKE_NVML_FAIL", "nvmlDeviceGetPciInfo_v3=13,nvmlDeviceGetPciInfo_v2", 1);
    assert_int_equal(dr_gpu_nvml_discover(FAKE_NVML, &l, &err), DR_EIO);
    tu_assert_contains(err.msg, "nvmlDeviceGetPciInfo");

    /* properties a device does not support are left unknown */
    setenv("FAKE_NVML_FAIL",
           "nvmlDeviceGetUUID=3,nvmlDeviceGetPciInfo_v3=3,nvmlDeviceGetMemoryInfo=3", 1);
    assert_int_equal(dr_gpu_nvml_discover(FAKE_NVML, &l, &err), DR_OK);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.gpus[0].name, H100);
    assert_string_equal(l.gpus[0].uuid, "");
    assert_string_equal(l.gpus[0].pci, "");
    assert_int_equal(l.gpus[0].mem_mb, 0);
    dr_gpu_list_free(&l);
    expect_balanced();
}

static void test_nvml_absent(void **state)
{
    (void)state;
    dr_gpu_list_t l;
    dr_err_t err = {0};

    /* library present, no device */
    assert_int_equal(dr_gpu_nvml_discover(FAKE_NVML, &l, &err), DR_ENOENT);
    assert_string_equal(err.msg, "nvml: no devices");
    assert_int_equal(l.n, 0);

    /* user-space library without a kernel driver: no GPU, not a failure */
    setenv("FAKE_NVML_GPUS", TWO_H100, 1);
    setenv("FAKE_NVML_FAIL", "nvmlInit_v2=9", 1);
    assert_int_equal(dr_gpu_nvml_discover(FAKE_NVML, &l, &err), DR_ENOENT);
    tu_assert_contains(err.msg, "Driver Not Loaded");
    unsetenv("FAKE_NVML_FAIL");

    /* no library */
    assert_int_equal(dr_gpu_nvml_discover("/nonexistent/libnvidia-ml.so.1", &l, &err), DR_ENOENT);
    tu_assert_contains(err.msg, "nvml: cannot load /nonexistent/libnvidia-ml.so.1");

    /* a library without NVML's symbols */
    assert_int_equal(dr_gpu_nvml_discover(FAKE_ROCM, &l, &err), DR_ENOENT);
    tu_assert_contains(err.msg, "has no nvmlInit_v2");
    assert_int_equal(l.n, 0);
    expect_balanced();
}

static void test_rocm_two_gpus(void **state)
{
    (void)state;
    setenv("FAKE_ROCM_GPUS", TWO_MI300X, 1);
    dr_gpu_list_t l;
    dr_err_t err = {0};
    int rc = dr_gpu_rocm_discover(FAKE_ROCM, &l, &err);
    if (rc != DR_OK)
        fail_msg("rocm: %s", err.msg);
    assert_string_equal(l.source, "rocm");
    assert_int_equal(l.n, 2);
    assert_string_equal(l.gpus[0].name, MI300X);
    assert_int_equal(l.gpus[0].mem_mb, 196592);
    assert_int_equal(l.gpus[1].index, 1);
    /* the BDF id decoded: domain, bus, device and function */
    assert_string_equal(l.gpus[0].pci, "0000:0c:00.0");
    assert_string_equal(l.gpus[1].pci, "0001:8f:1d.3");
    assert_string_equal(l.gpus[0].uuid, "0x5a1e000000000000");
    assert_string_equal(l.gpus[1].uuid, "0x5a1e000000000001");
    assert_int_equal(l.gpus[1].numa, -1);
    dr_gpu_list_free(&l);
    expect_balanced();
}

/* The library without the kernel driver (rsmi_init's INIT_ERROR and no
 * amdgpu module): no AMD GPU, so discovery moves on, as NVML's "driver not
 * loaded"; the same status with the driver loaded is a failure. */
static void test_rocm_no_driver(void **state)
{
    (void)state;
    setenv("FAKE_ROCM_GPUS", TWO_MI300X, 1);
    setenv("FAKE_ROCM_FAIL", "rsmi_init=8", 1);
    dr_gpu_list_t l;
    dr_err_t err = {0};
    int rc = dr_gpu_rocm_discover(FAKE_ROCM, &l, &err);
    if (access("/sys/module/amdgpu", F_OK) != 0) {
        assert_int_equal(rc, DR_ENOENT);
        tu_assert_contains(err.msg, "rsmi_init");
        tu_assert_contains(err.msg, "no amdgpu driver is loaded");
    } else {
        assert_int_equal(rc, DR_EIO);
    }
    assert_null(l.gpus);
    expect_balanced();
    unsetenv("FAKE_ROCM_FAIL");
}

static void test_rocm_failures(void **state)
{
    (void)state;
    static const char *const calls[] = {"rsmi_init",           "rsmi_num_monitor_devices",
                                        "rsmi_dev_name_get",   "rsmi_dev_unique_id_get",
                                        "rsmi_dev_pci_id_get", "rsmi_dev_memory_total_get"};
    setenv("FAKE_ROCM_GPUS", TWO_MI300X, 1);
    dr_gpu_list_t l;
    dr_err_t err = {0};
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
        setenv("FAKE_ROCM_FAIL", calls[i], 1);
        int rc = dr_gpu_rocm_discover(FAKE_ROCM, &l, &err);
        if (rc != DR_EIO)
            fail_msg("%s failing: rc %d (%s)", calls[i], rc, err.msg);
        tu_assert_contains(err.msg, calls[i]);
        tu_assert_contains(err.msg, "unknown error occurred (4294967295)");
        assert_null(l.gpus);
        expect_balanced();
    }
    /* a consumer part has no unique id: left unknown */
    setenv("FAKE_ROCM_FAIL", "rsmi_dev_unique_id_get=2", 1);
    assert_int_equal(dr_gpu_rocm_discover(FAKE_ROCM, &l, &err), DR_OK);
    assert_string_equal(l.gpus[0].uuid, "");
    assert_string_equal(l.gpus[0].pci, "0000:0c:00.0");
    dr_gpu_list_free(&l);
    unsetenv("FAKE_ROCM_FAIL");

    unsetenv("FAKE_ROCM_GPUS");
    assert_int_equal(dr_gpu_rocm_discover(FAKE_ROCM, &l, &err), DR_ENOENT);
    assert_string_equal(err.msg, "rocm: no devices");
    assert_int_equal(dr_gpu_rocm_discover("/nonexistent/librocm_smi64.so", &l, &err), DR_ENOENT);
    tu_assert_contains(err.msg, "rocm: cannot load /nonexistent/librocm_smi64.so");
    assert_int_equal(dr_gpu_rocm_discover(FAKE_NVML, &l, &err), DR_ENOENT);
    tu_assert_contains(err.msg, "has no rsmi_init");
    expect_balanced();
}

static void test_discover_order(void **state)
{
    (void)state;
    setenv("FAKE_NVML_GPUS", TWO_H100, 1);
    setenv("FAKE_ROCM_GPUS", TWO_MI300X, 1);
    dr_gpu_opts_t o = {
        .nvml_path = FAKE_NVML, .rocm_path = FAKE_ROCM, .declared_type = "H100", .declared_n = 8};
    dr_gpu_list_t l;
    char note[512];
    dr_err_t err = {0};

    /* both answer: NVML wins */
    assert_int_equal(dr_gpu_discover(&o, &l, note, sizeof note, &err), DR_OK);
    assert_string_equal(l.source, "nvml");
    assert_int_equal(l.n, 2);
    assert_string_equal(note, "");
    dr_gpu_list_free(&l);

    /* NVML sees nothing: ROCm, with the reason NVML was passed over */
    unsetenv("FAKE_NVML_GPUS");
    assert_int_equal(dr_gpu_discover(&o, &l, note, sizeof note, &err), DR_OK);
    assert_string_equal(l.source, "rocm");
    assert_string_equal(l.gpus[0].name, MI300X);
    assert_string_equal(note, "nvml: no devices");
    dr_gpu_list_free(&l);

    /* NVML skipped by option */
    setenv("FAKE_NVML_GPUS", TWO_H100, 1);
    o.nvml_path = "";
    assert_int_equal(dr_gpu_discover(&o, &l, note, sizeof note, &err), DR_OK);
    assert_string_equal(l.source, "rocm");
    assert_string_equal(note, "nvml: skipped");
    dr_gpu_list_free(&l);

    /* neither library: the declaration */
    o.nvml_path = "/nonexistent/libnvidia-ml.so.1";
    o.rocm_path = "/nonexistent/librocm_smi64.so";
    o.declared_mem_mb = 81559;
    assert_int_equal(dr_gpu_discover(&o, &l, note, sizeof note, &err), DR_OK);
    assert_string_equal(l.source, "declared");
    assert_int_equal(l.n, 8);
    assert_string_equal(l.gpus[7].name, "H100");
    assert_int_equal(l.gpus[7].index, 7);
    assert_int_equal(l.gpus[7].mem_mb, 81559);
    assert_string_equal(l.gpus[7].pci, "");
    assert_int_equal(l.gpus[7].numa, -1);
    tu_assert_contains(note, "nvml: cannot load /nonexistent/libnvidia-ml.so.1");
    tu_assert_contains(note, "; rocm: cannot load /nonexistent/librocm_smi64.so");
    tu_assert_contains(note, "; no GPU driver answered: using the 8 declared H100");
    dr_gpu_list_free(&l);

    /* a driver that loaded but failed ends discovery: no fallback */
    o.nvml_path = FAKE_NVML;
    setenv("FAKE_NVML_FAIL", "nvmlDeviceGetCount_v2", 1);
    assert_int_equal(dr_gpu_discover(&o, &l, note, sizeof note, &err), DR_EIO);
    tu_assert_contains(err.msg, "nvml: nvmlDeviceGetCount_v2: Unknown Error");
    assert_int_equal(l.n, 0);
    assert_null(l.gpus);

    /* note may be NULL */
    unsetenv("FAKE_NVML_FAIL");
    assert_int_equal(dr_gpu_discover(&o, &l, NULL, 0, &err), DR_OK);
    assert_string_equal(l.source, "nvml");
    dr_gpu_list_free(&l);
    expect_balanced();
}

static void test_declared_cpu_only(void **state)
{
    (void)state;
    dr_gpu_opts_t o = {.nvml_path = "", .rocm_path = "/nonexistent/librocm_smi64.so"};
    dr_gpu_list_t l;
    char note[256];
    dr_err_t err = {0};
    assert_int_equal(dr_gpu_discover(&o, &l, note, sizeof note, &err), DR_OK);
    assert_string_equal(l.source, "declared");
    assert_int_equal(l.n, 0);
    assert_null(l.gpus);
    tu_assert_contains(note, "nvml: skipped; rocm: cannot load");
    tu_assert_contains(note, "none declared: CPU-only node");
    dr_gpu_list_free(&l);

    assert_int_equal(dr_gpu_declared(NULL, 0, 0, &l, &err), DR_OK);
    assert_string_equal(l.source, "declared");
    assert_int_equal(l.n, 0);
    assert_int_equal(dr_gpu_declared(NULL, 2, 0, &l, &err), DR_EINVAL);
    assert_string_equal(err.msg, "gpu: 2 GPUs declared without a type");
    assert_int_equal(dr_gpu_declared("", 2, 0, &l, &err), DR_EINVAL);
    char longname[200];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(dr_gpu_declared(longname, 1, 0, &l, &err), DR_EINVAL);
    assert_int_equal(l.n, 0);
    assert_int_equal(dr_gpu_declared("MI300X-192GB", 4, 196608, &l, &err), DR_OK);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.gpus[3].name, "MI300X-192GB");
    assert_string_equal(l.gpus[3].uuid, "");
    dr_gpu_list_free(&l);
    dr_gpu_list_free(NULL);
}

/* The machine the test runs on, through hwloc. */
static void test_topo_this_machine(void **state)
{
    (void)state;
    dr_topo_t t;
    dr_err_t err = {0};
    if (dr_topo_fill(&t, NULL, &err) != DR_OK)
        fail_msg("topo: %s", err.msg);
    assert_true(t.cpus > 0);
    assert_true(t.mem_mb > 0);
    assert_true(t.numa_nodes >= 1);
    assert_string_equal(t.note, "");

    /* A real PCI device of this machine stands in for a GPU: on a single
     * node machine its NUMA node is 0. */
    dr_gpu_list_t l;
    assert_int_equal(dr_gpu_declared("H100", 2, 0, &l, &err), DR_OK);
    char dev[32] = "";
    DIR *d = opendir("/sys/bus/pci/devices");
    const struct dirent *e;
    while (d && !dev[0] && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            snprintf(dev, sizeof dev, "%.31s", e->d_name);
    if (d)
        closedir(d);
    snprintf(l.gpus[0].pci, sizeof l.gpus[0].pci, "%s", dev);
    l.gpus[1].numa = 5; /* no bus id: reset to unknown */
    assert_int_equal(dr_topo_fill(&t, &l, &err), DR_OK);
    if (dev[0] && t.numa_nodes == 1)
        assert_int_equal(l.gpus[0].numa, 0);
    assert_int_equal(l.gpus[1].numa, -1);
    dr_gpu_list_free(&l);
}

/* A two-socket topology from XML: one GPU per socket. */
static void test_topo_two_sockets(void **state)
{
    (void)state;
    setenv("HWLOC_XMLFILE", tu_src_path("tests/data/topo-2numa.xml"), 1);
    dr_gpu_list_t l;
    dr_err_t err = {0};
    assert_int_equal(dr_gpu_declared("H100", 4, 0, &l, &err), DR_OK);
    snprintf(l.gpus[0].pci, sizeof l.gpus[0].pci, "0000:17:00.0");
    snprintf(l.gpus[1].pci, sizeof l.gpus[1].pci, "0000:ca:00.0");
    snprintf(l.gpus[2].pci, sizeof l.gpus[2].pci, "0000:fe:1f.7"); /* not in the topology */
    dr_topo_t t;
    if (dr_topo_fill(&t, &l, &err) != DR_OK)
        fail_msg("topo: %s", err.msg);
    assert_string_equal(t.note, "");
    assert_int_equal(t.cpus, 4);
    assert_int_equal(t.numa_nodes, 2);
    assert_int_equal(t.mem_mb, 65536);
    assert_int_equal(l.gpus[0].numa, 0);
    assert_int_equal(l.gpus[1].numa, 1);
    assert_int_equal(l.gpus[2].numa, -1);
    assert_int_equal(l.gpus[3].numa, -1);
    dr_gpu_list_free(&l);
}

/* hwloc cannot load a topology: sysconf and /proc stand in, noted. */
static void test_topo_fallback(void **state)
{
    (void)state;
    char path[] = "/tmp/test_gpu_topoXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "not a topology\n", 15), 15);
    close(fd);
    setenv("HWLOC_XMLFILE", path, 1);
    dr_topo_t t;
    dr_err_t err = {0};
    int rc = dr_topo_fill(&t, NULL, &err);
    unlink(path);
    if (rc != DR_OK)
        fail_msg("topo: %s", err.msg);
    tu_assert_contains(t.note, "hwloc: hwloc_topology_load");
    tu_assert_contains(t.note, "CPUs and memory from sysconf and /proc");
    assert_int_equal(t.cpus, sysconf(_SC_NPROCESSORS_ONLN));
    assert_true(t.mem_mb > 0);
    assert_true(t.numa_nodes >= 1);
}

static void expect_type(const dr_catalog_t *cat, const char *product, const char *want)
{
    char type[DR_GPU_NAME_MAX];
    int rc = dr_gpu_type_from_product_cat(cat, product, type, sizeof type);
    if (want == NULL) {
        if (rc != DR_ENOENT)
            fail_msg("'%s': rc %d, type '%s' (want no type)", product, rc, type);
        assert_string_equal(type, "");
        return;
    }
    if (rc != DR_OK)
        fail_msg("'%s': rc %d (want %s)", product, rc, want);
    if (strcmp(type, want) != 0)
        fail_msg("'%s' -> '%s' (want %s)", product, type, want);
}

/* Product names as nvidia-smi / NVML and rocm-smi report them. */
static void test_type_from_product(void **state)
{
    (void)state;
    dr_catalog_t cat;
    dr_err_t err = {0};
    if (dr_catalog_builtin(&cat, &err) != DR_OK)
        fail_msg("catalog: %s", err.msg);
    static const struct {
        const char *product, *type;
    } table[] = {
        {"NVIDIA H100 80GB HBM3", "H100-SXM-80GB"},
        {"NVIDIA H800", "H100-SXM-80GB"}, /* the catalog's alias */
        {"NVIDIA H200", "H200-SXM-141GB"},
        {"NVIDIA B200", "B200-HGX-180GB"},
        {"NVIDIA GB200", "GB200-NVL72-186GB"},
        {"NVIDIA A100-SXM4-80GB", "A100-80GB-SXM"},
        {"NVIDIA A100-SXM4-40GB", "A100-40GB-SXM"},
        {"NVIDIA L40S", "L40S-48GB"},
        {"NVIDIA L4", "L4-24GB"},
        {"NVIDIA A10", "A10-24GB"},
        {"Tesla T4", "T4-16GB"},
        {"Tesla V100-SXM2-32GB", "V100-SXM2-32GB"},
        {"Tesla V100-SXM2-16GB", "V100-SXM2-16GB"},
        {"Tesla P100-SXM2-16GB", "P100-16GB"},
        {"Tesla K80", "K80-12GB"},
        {"AMD Instinct MI300X", "MI300X-192GB"},
        {"AMD Instinct MI300X VF", "MI300X-192GB"},
        {"AMD Instinct MI325X", "MI325X-256GB"},
        {"AMD Instinct MI355X", "MI355X-288GB"},
        /* ROCm shows each GCD of an MI250X (or MI250: 208 of its 220 CUs, the
         * same string) as one GPU of 64 GB */
        {"AMD Instinct MI250X/MI250", "MI250X-GCD-64GB"},
        /* declared names and aliases normalise to the canonical name */
        {"H100-SXM-80GB", "H100-SXM-80GB"},
        {"h100", "H100-SXM-80GB"},
        {"A100", "A100-80GB-SXM"},
        {"MI300X", "MI300X-192GB"},
        {"TPU-v5e", "TPU-v5e"},
        {"TPU-v4", "TPU-v4"},
        /* a form factor or size the catalog does not have: no type, not a wrong one */
        {"NVIDIA H100 PCIe", NULL},
        {"NVIDIA H100 NVL", NULL},
        {"NVIDIA H200 NVL", NULL},
        {"NVIDIA A100-PCIE-40GB", NULL},
        {"NVIDIA A100 80GB PCIe", NULL},
        {"Tesla V100-PCIE-16GB", NULL},
        {"NVIDIA A100-SXM4-64GB", NULL},
        /* models the catalog lacks */
        {"NVIDIA A10G", NULL},
        {"NVIDIA L40", NULL},
        {"NVIDIA H20", NULL},
        {"NVIDIA GH200 480GB", NULL},
        {"AMD Instinct MI300A", NULL},
        {"NVIDIA GeForce RTX 4090", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        expect_type(&cat, table[i].product, table[i].type);

    char small[8];
    assert_int_equal(
        dr_gpu_type_from_product_cat(&cat, "NVIDIA H100 80GB HBM3", small, sizeof small),
        DR_EINVAL);
    assert_int_equal(dr_gpu_type_from_product_cat(&cat, NULL, small, sizeof small), DR_ENOENT);
    dr_catalog_free(&cat);

    /* the built-in catalog form */
    char type[DR_GPU_NAME_MAX];
    assert_int_equal(dr_gpu_type_from_product("AMD Instinct MI300X", type, sizeof type), DR_OK);
    assert_string_equal(type, "MI300X-192GB");
    assert_int_equal(dr_gpu_type_from_product("NVIDIA H20", type, sizeof type), DR_ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_nvml_two_gpus, env_reset),
        cmocka_unit_test_setup(test_nvml_each_call_fails, env_reset),
        cmocka_unit_test_setup(test_nvml_partial_support, env_reset),
        cmocka_unit_test_setup(test_nvml_absent, env_reset),
        cmocka_unit_test_setup(test_rocm_two_gpus, env_reset),
        cmocka_unit_test_setup(test_rocm_no_driver, env_reset),
        cmocka_unit_test_setup(test_rocm_failures, env_reset),
        cmocka_unit_test_setup(test_discover_order, env_reset),
        cmocka_unit_test_setup(test_declared_cpu_only, env_reset),
        cmocka_unit_test_setup(test_topo_this_machine, env_reset),
        cmocka_unit_test_setup(test_topo_two_sockets, env_reset),
        cmocka_unit_test_setup(test_topo_fallback, env_reset),
        cmocka_unit_test_setup(test_type_from_product, env_reset),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
