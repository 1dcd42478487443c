/* test_config.c - the cluster configuration file: every line kind and key,
 * the built-in presets, the openb node list, and every error message. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/config.h"
#include "drover/workload.h"

static dr_catalog_t cat;

static int setup(void **state)
{
    (void)state;
    dr_err_t err = {0};
    return dr_catalog_builtin(&cat, &err);
}

static int teardown(void **state)
{
    (void)state;
    dr_catalog_free(&cat);
    return 0;
}

/* Parse text from an exactly-sized heap copy (no NUL after it). */
static int parse(dr_cluster_t *c, const char *text, dr_err_t *err)
{
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1);
    memcpy(copy, text, n);
    dr_cluster_init(c);
    int rc = dr_config_parse(c, &cat, "test.conf", copy, n, err);
    free(copy);
    return rc;
}

static void parse_ok(dr_cluster_t *c, const char *text)
{
    dr_err_t err = {0};
    if (parse(c, text, &err) != 0)
        fail_msg("parse failed: %s\n--- input:\n%s", err.msg, text);
}

static void expect_err(const char *text, int code, const char *msg)
{
    dr_cluster_t c;
    dr_err_t err = {0};
    int rc = parse(&c, text, &err);
    if (rc != code || strcmp(err.msg, msg) != 0)
        fail_msg("--- input:\n%s\n--- got rc %d: %s\n--- want rc %d: %s", text, rc, err.msg, code,
                 msg);
    dr_cluster_free(&c);
}

static int node(const dr_cluster_t *c, const char *name)
{
    int i = dr_cluster_find_node(c, name);
    if (i < 0)
        fail_msg("no node %s", name);
    return i;
}

static const char *type_of(const dr_cluster_t *c, const char *name)
{
    const dr_node_t *n = &c->nodes[node(c, name)];
    return n->ngpus ? c->types[n->type].name : "";
}

/* --- presets --- */

static void test_preset_gavel(void **state)
{
    (void)state;
    dr_cluster_t c;
    dr_err_t err = {0};
    dr_cluster_init(&c);
    assert_int_equal(dr_cluster_preset(&c, &cat, "gavel-36-36-36", &err), 0);
    assert_int_equal(c.nnodes, 108);
    assert_int_equal(c.ngpus, 108);
    assert_int_equal(c.ntypes, 3);
    assert_int_equal(dr_cluster_total_gpus(&c, -1), 108);
    for (size_t t = 0; t < 3; t++)
        assert_int_equal(dr_cluster_total_gpus(&c, (int)t), 36);
    assert_string_equal(type_of(&c, "v100-01"), "V100-SXM2-16GB");
    assert_string_equal(type_of(&c, "k80-36"), "K80-12GB");
    const dr_node_t *k = &c.nodes[node(&c, "k80-36")];
    assert_int_equal(k->cpu_milli, 4000);
    assert_int_equal(k->mem_mb, 61 * 1024);
    assert_int_equal(k->switch_id, DR_NONE);
    assert_int_equal(k->nvl_domain, DR_NONE);
    assert_int_equal(k->state, DR_NODE_UP);
    dr_cluster_free(&c);
}

static void test_preset_openb(void **state)
{
    (void)state;
    dr_cluster_t c;
    dr_err_t err = {0};
    dr_cluster_init(&c);
    if (dr_cluster_preset(&c, &cat, "openb", &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(c.nnodes, 1213);
    assert_int_equal(c.ngpus, 6212);
    assert_int_equal(c.ntypes, 7);
    assert_int_equal(dr_cluster_total_gpus(&c, -1), 6212);
    /* catalog models carry catalog specs, found by their openb names */
    int t4 = dr_cluster_find_type(&c, "T4");
    assert_true(t4 >= 0);
    assert_string_equal(c.types[t4].name, "T4-16GB");
    assert_true(c.types[t4].mem_gb == 16);
    assert_true(dr_cluster_find_type(&c, "V100M16") >= 0);
    assert_true(dr_cluster_find_type(&c, "V100M32") >= 0);
    assert_true(dr_cluster_find_type(&c, "A10") >= 0);
    assert_true(dr_cluster_find_type(&c, "P100") >= 0);
    /* the others are declared with unknown figures */
    int g2 = dr_cluster_find_type(&c, "G2");
    assert_true(g2 >= 0);
    assert_true(isnan(c.types[g2].mem_gb) && isnan(c.types[g2].bf16_tflops));
    assert_true(isnan(c.types[g2].price_hr));
    assert_true(dr_cluster_find_type(&c, "G3") >= 0);
    const dr_node_t *n0 = &c.nodes[node(&c, "openb-node-0000")];
    assert_int_equal(n0->cpu_milli, 64000);
    assert_int_equal(n0->mem_mb, 262144);
    assert_int_equal(n0->ngpus, 2);
    assert_string_equal(c.types[n0->type].name, "P100-16GB");
    dr_cluster_free(&c);
}

static void test_preset_philly_mixed(void **state)
{
    (void)state;
    dr_cluster_t c;
    dr_err_t err = {0};
    dr_cluster_init(&c);
    assert_int_equal(dr_cluster_preset(&c, NULL, "philly", &err), 0); /* NULL = built-in catalog */
    assert_int_equal(c.nnodes, 64);
    assert_int_equal(c.ngpus, 512);
    assert_int_equal(c.ntypes, 1);
    assert_int_equal(c.nswitches, 5);
    int core = dr_cluster_find_switch(&c, "core"), r4 = dr_cluster_find_switch(&c, "rack4");
    assert_true(core >= 0 && r4 >= 0);
    assert_int_equal(c.switches[r4].parent, core);
    assert_int_equal(c.switches[core].parent, DR_NONE);
    assert_int_equal(c.switches[core].level, 1);
    assert_int_equal(c.switches[r4].level, 0);
    assert_true(c.switches[r4].link_gbs == 100.0 / 8);
    assert_int_equal(c.nodes[node(&c, "philly-064")].switch_id, r4);
    assert_int_equal(c.nodes[node(&c, "philly-001")].switch_id,
                     dr_cluster_find_switch(&c, "rack1"));
    assert_int_equal(c.nnvl, 64); /* NvlinkDomain=node */
    dr_cluster_free(&c);

    dr_cluster_init(&c);
    assert_int_equal(dr_cluster_preset(&c, &cat, "Mixed-Modern", &err), 0);
    assert_int_equal(c.nnodes, 72 + 16);
    assert_int_equal(c.ngpus, 512 + 128);
    assert_int_equal(c.ntypes, 6);
    assert_int_equal(dr_cluster_total_gpus(&c, -1), 512); /* cloud nodes are not up */
    assert_int_equal(c.npools, 1);
    const dr_pool_t *p = &c.pools[0];
    assert_string_equal(p->name, "cloud-h100");
    assert_int_equal(p->first_node, 72);
    assert_int_equal(p->max_nodes, 16);
    assert_int_equal(p->gpus_per_node, 8);
    assert_string_equal(c.types[p->type].name, "H100-SXM-80GB");
    assert_true(p->price_hr == 3.99);
    assert_int_equal(p->provision_delay, 600 * DR_NSEC_PER_SEC);
    assert_true(p->spot_interrupt_per_hr == 0);
    const dr_node_t *cn = &c.nodes[node(&c, "cloud-h100-16")];
    assert_int_equal(cn->state, DR_NODE_CLOUD);
    assert_int_equal(cn->pool, 0);
    assert_int_equal(node(&c, "cloud-h100-1"), 72);
    int spine = dr_cluster_find_switch(&c, "spine");
    assert_int_equal(c.switches[dr_cluster_find_switch(&c, "leaf3")].parent, spine);
    assert_true(c.switches[spine].link_gbs == 100);
    assert_true(c.switches[dr_cluster_find_switch(&c, "leaf1")].link_gbs == 50);
    assert_int_equal(c.nodes[node(&c, "l40s-01")].nvl_domain, DR_NONE);
    assert_int_equal(c.nodes[node(&c, "b200-08")].switch_id, dr_cluster_find_switch(&c, "leaf3"));
    assert_true(c.nodes[node(&c, "b200-08")].nvl_domain >= 0);
    dr_cluster_free(&c);
}

static void test_preset_names(void **state)
{
    (void)state;
    const char *const *names = dr_cluster_preset_names();
    size_t n = 0;
    for (; names[n]; n++) {
        assert_non_null(dr_cluster_preset_doc(names[n]));
        dr_cluster_t c;
        dr_err_t err = {0};
        dr_cluster_init(&c);
        if (dr_cluster_preset(&c, &cat, names[n], &err) != 0)
            fail_msg("preset %s: %s", names[n], err.msg);
        dr_cluster_free(&c);
    }
    assert_int_equal(n, 4);
    assert_null(dr_cluster_preset_doc("nope"));
    tu_assert_contains(dr_cluster_preset_doc("gavel-36-36-36"), "36 V100");
    dr_cluster_t c;
    dr_err_t err = {0};
    dr_cluster_init(&c);
    assert_int_equal(dr_cluster_preset(&c, &cat, "nope", &err), DR_ENOENT);
    tu_assert_contains(err.msg, "unknown cluster preset 'nope' (known: gavel-36-36-36");
    dr_cluster_free(&c);
}

/* --- line kinds --- */

static void test_nodename(void **state)
{
    (void)state;
    dr_cluster_t c;
    parse_ok(&c, "# a comment\n"
                 "\n"
                 "   # an indented comment\n"
                 "NodeName=h100-[001-016] Gpus=H100-SXM:8 Cpus=192 MemGB=2048 NvlinkDomain=node "
                 "Switch=leaf1   # trailing comment\n"
                 "nodename=cpu[1-4] CPUS=64 memmb=262144\r\n"
                 "NodeName=gb[1-2] Gpus=gb200:4 Cpus=72 MemGB=480.5 NvlinkDomain=rack-a\n"
                 "NodeName=\"gb3\" Gpus=\"GB200-NVL72-186GB:4\" Cpus=72 MemGB=480 \\\n"
                 "    NvlinkDomain=rack-a \\\n"
                 "    State=drain\n"
                 "NodeName=dead Gpus=T4:1 Cpus=8 MemGB=32 State=DOWN NvlinkDomain=none\n");
    assert_int_equal(c.nnodes, 16 + 4 + 3 + 1);
    assert_int_equal(c.ntypes, 3);
    const dr_node_t *h = &c.nodes[node(&c, "h100-016")];
    assert_string_equal(c.types[h->type].name, "H100-SXM-80GB");
    assert_int_equal(h->ngpus, 8);
    assert_int_equal(h->cpu_milli, 192000);
    assert_int_equal(h->mem_mb, 2048 * 1024);
    assert_int_equal(h->switch_id, dr_cluster_find_switch(&c, "leaf1"));
    assert_string_equal(c.nvl_domains[h->nvl_domain], "h100-016");
    assert_true(c.nodes[node(&c, "h100-001")].nvl_domain != h->nvl_domain);
    const dr_node_t *cpu = &c.nodes[node(&c, "cpu4")];
    assert_int_equal(cpu->ngpus, 0);
    assert_int_equal(cpu->cpu_milli, 64000);
    assert_int_equal(cpu->mem_mb, 262144);
    assert_int_equal(cpu->nvl_domain, DR_NONE);
    assert_int_equal(cpu->switch_id, DR_NONE);
    const dr_node_t *gb1 = &c.nodes[node(&c, "gb1")], *gb3 = &c.nodes[node(&c, "gb3")];
    assert_int_equal(gb1->nvl_domain, gb3->nvl_domain);
    assert_string_equal(c.nvl_domains[gb3->nvl_domain], "rack-a");
    assert_int_equal(gb1->mem_mb, 492032); /* 480.5 GiB */
    assert_int_equal(gb1->state, DR_NODE_UP);
    assert_int_equal(gb3->state, DR_NODE_DRAIN);
    assert_string_equal(c.types[gb3->type].name, "GB200-NVL72-186GB");
    assert_int_equal(c.nodes[node(&c, "dead")].state, DR_NODE_DOWN);
    assert_int_equal(c.nodes[node(&c, "dead")].nvl_domain, DR_NONE);
    /* DOWN nodes do not count in the GPU totals; DRAIN ones do */
    assert_int_equal(dr_cluster_total_gpus(&c, -1), 16 * 8 + 3 * 4);
    dr_cluster_free(&c);
}

static void test_gputype(void **state)
{
    (void)state;
    dr_cluster_t c;
    parse_ok(&c, "GpuType=G2 MemGB=32 TdpW=250 PricePerGpuHour=1.1 Vendor=Alibaba\n"
                 "GpuType=Y Bf16Tflops=100 Fp16Tflops=100 Fp8Tflops=200\n"
                 "NodeName=g[1-2] Gpus=g2:8 Cpus=96 MemGB=512\n"
                 "NodeName=y1 Gpus=Y:4 Cpus=96 MemGB=512\n");
    assert_int_equal(c.ntypes, 2); /* only types in use join the cluster */
    int g2 = dr_cluster_find_type(&c, "G2");
    assert_true(g2 >= 0);
    const dr_gpu_spec_t *s = &c.types[g2];
    assert_true(s->mem_gb == 32 && s->tdp_w == 250 && s->price_hr == 1.1);
    assert_string_equal(s->vendor, "Alibaba");
    assert_true(isnan(s->bf16_tflops) && isnan(s->hbm_tbs) && isnan(s->price_neocloud_hr));
    assert_string_equal(s->source, "declared by GpuType= at test.conf:1");
    const dr_gpu_spec_t *y = &c.types[dr_cluster_find_type(&c, "y")];
    assert_true(y->bf16_tflops == 100 && y->fp8_tflops == 200 && y->fp16_tflops == 100);
    assert_true(isnan(y->mem_gb));
    dr_cluster_free(&c);
}

/* A site's own price for a catalog type (owned hardware, a negotiated
 * rate): found by the type's name or an alias, the other figures the
 * catalog's, and where the price comes from said in the type's source. */
static void test_site_price(void **state)
{
    (void)state;
    dr_cluster_t c;
    parse_ok(&c, "GpuType=H100 PricePerGpuHour=2.10\n"
                 "NodeName=h[1-2] Gpus=H100-SXM:8 Cpus=96 MemGB=512\n"
                 "NodeName=a1 Gpus=A100-80GB-SXM:8 Cpus=96 MemGB=512\n");
    int h = dr_cluster_find_type(&c, "H100-SXM-80GB"),
        a = dr_cluster_find_type(&c, "A100-80GB-SXM");
    assert_true(h >= 0 && a >= 0);
    const dr_gpu_spec_t *cat_h = dr_catalog_find(&cat, "H100-SXM-80GB");
    assert_true(c.types[h].price_hr == 2.10);
    assert_true(c.types[h].bf16_tflops == cat_h->bf16_tflops && c.types[h].mem_gb == cat_h->mem_gb);
    tu_assert_contains(c.types[h].source, "price set by GpuType= at test.conf:1");
    /* a type without a site price keeps the catalog's */
    assert_true(c.types[a].price_hr == dr_catalog_find(&cat, "A100-80GB-SXM")->price_hr);
    dr_cluster_free(&c);
}

static void test_switchname(void **state)
{
    (void)state;
    dr_cluster_t c;
    parse_ok(&c, "NodeName=n[1-8] Cpus=8 MemGB=64\n"
                 "NodeName=m1 Cpus=8 MemGB=64 Switch=leaf3\n"
                 "SwitchName=leaf1 Nodes=n[1-4] LinkGbps=400\n"
                 "SwitchName=leaf2 Nodes=n[5-8]\n"
                 "SwitchName=leaf2 Nodes=n8\n" /* the same leaf again is fine */
                 "SwitchName=spine[1-2] LinkGbps=800\n"
                 "SwitchName=spine1 Switches=leaf[1-2]\n"
                 "SwitchName=spine2 Switches=leaf3\n"
                 "SwitchName=core Switches=spine[1-2]\n");
    int l1 = dr_cluster_find_switch(&c, "leaf1"), s1 = dr_cluster_find_switch(&c, "spine1");
    int core = dr_cluster_find_switch(&c, "core"), l3 = dr_cluster_find_switch(&c, "leaf3");
    assert_int_equal(c.nswitches, 6);
    assert_int_equal(c.nodes[node(&c, "n4")].switch_id, l1);
    assert_int_equal(c.nodes[node(&c, "n5")].switch_id, dr_cluster_find_switch(&c, "leaf2"));
    assert_int_equal(c.nodes[node(&c, "m1")].switch_id, l3);
    assert_int_equal(c.switches[l1].parent, s1);
    assert_int_equal(c.switches[l3].parent, dr_cluster_find_switch(&c, "spine2"));
    assert_int_equal(c.switches[s1].parent, core);
    assert_int_equal(c.switches[core].level, 2);
    assert_true(c.switches[l1].link_gbs == 50);
    assert_true(c.switches[s1].link_gbs == 100);
    assert_true(c.switches[core].link_gbs == 0);
    dr_cluster_free(&c);
}

static void test_pool(void **state)
{
    (void)state;
    dr_cluster_t c;
    parse_ok(&c, "NodeName=a1 Gpus=A100:8 Cpus=128 MemGB=1024\n"
                 "Pool=spot-b200 Gpus=B200:8 MaxNodes=4 Cpus=224 MemMB=2097152 "
                 "SpotInterruptRate=0.05 ProvisionDelay=1:30 NvlinkDomain=node\n"
                 "Pool=cheap Gpus=L4:1 MaxNodes=2 Cpus=4 MemGB=16\n");
    assert_int_equal(c.npools, 2);
    const dr_pool_t *p = &c.pools[0];
    assert_string_equal(p->name, "spot-b200");
    assert_int_equal(p->first_node, 1);
    assert_int_equal(p->max_nodes, 4);
    assert_int_equal(p->cpu_milli, 224000);
    assert_int_equal(p->mem_mb, 2097152);
    assert_true(isnan(p->price_hr)); /* catalog price */
    assert_true(p->spot_interrupt_per_hr == 0.05);
    assert_int_equal(p->provision_delay, 90 * DR_NSEC_PER_SEC);
    assert_string_equal(c.types[p->type].name, "B200-HGX-180GB");
    for (int i = 1; i <= 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "spot-b200-%d", i);
        const dr_node_t *n = &c.nodes[node(&c, name)];
        assert_int_equal(n->state, DR_NODE_CLOUD);
        assert_int_equal(n->pool, 0);
        assert_int_equal(n->ngpus, 8);
        assert_string_equal(c.nvl_domains[n->nvl_domain], name);
        assert_int_equal(node(&c, name), 1 + i - 1);
    }
    const dr_pool_t *q = &c.pools[1];
    assert_int_equal(q->first_node, 5);
    assert_int_equal(q->provision_delay, 0);
    assert_true(q->spot_interrupt_per_hr == 0);
    assert_int_equal(c.nodes[node(&c, "cheap-2")].pool, 1);
    assert_int_equal(c.nodes[node(&c, "cheap-2")].nvl_domain, DR_NONE);
    assert_int_equal(c.nodes[node(&c, "a1")].pool, DR_NONE);
    assert_int_equal(dr_cluster_total_gpus(&c, -1), 8);
    dr_cluster_free(&c);
}

static void test_misc_syntax(void **state)
{
    (void)state;
    dr_cluster_t c;
    /* no final newline; continuation at the end of the input; tabs; a BOM */
    parse_ok(&c, "\xEF\xBB\xBFNodeName=a\tCpus=1 MemGB=1 \\");
    assert_int_equal(c.nnodes, 1);
    dr_cluster_free(&c);
    dr_err_t err = {0};
    dr_cluster_init(&c);
    const char *t = "NodeName=q Cpus=1 MemGB=1";
    assert_int_equal(dr_config_parse(&c, NULL, NULL, t, strlen(t), &err), 0);
    assert_int_equal(c.nnodes, 1);
    dr_cluster_free(&c);
}

static void test_quoted_names(void **state)
{
    (void)state;
    dr_cluster_t c;
    parse_ok(&c, "GpuType=\"Z#1\" Vendor=\"Big Co\"\n"
                 "NodeName=\"z1, z2\" Gpus=\"Z#1:2\" Cpus=1 MemGB=1\n");
    assert_int_equal(c.nnodes, 2);
    assert_string_equal(type_of(&c, "z2"), "Z#1");
    assert_string_equal(c.types[0].vendor, "Big Co");
    dr_cluster_free(&c);
}

static void test_load(void **state)
{
    (void)state;
    dr_cluster_t c;
    dr_err_t err = {0};
    dr_cluster_init(&c);
    if (dr_config_load(&c, &cat, tu_src_path("data/clusters/philly.conf"), &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(c.nnodes, 64);
    dr_cluster_free(&c);
    dr_cluster_init(&c);
    assert_int_equal(dr_config_load(&c, &cat, "/nonexistent.conf", &err), DR_EIO);
    tu_assert_contains(err.msg, "/nonexistent.conf");
    dr_cluster_free(&c);
}

/* --- errors --- */

#define N1 "NodeName=n[1-2] Cpus=8 MemGB=64\n"

/* Site settings (config_site.c): the defaults, values, and refusals. */
static void test_site(void **state)
{
    (void)state;
    dr_cluster_t c;
    parse_ok(&c, N1);
    assert_false(c.site.allow_root_jobs);
    assert_int_equal(c.site.max_script_bytes, 1u << 20);
    assert_int_equal(c.site.max_env_bytes, 256u << 10);
    assert_int_equal(c.site.max_user_pending, 10000);
    assert_int_equal(c.site.max_event_streams, 8);
    assert_false(dr_site_impersonator(&c.site, "root"));
    dr_cluster_free(&c);
    parse_ok(&c, N1 "AllowRootJobs=yes Impersonators=ann,bo_b\nMaxScriptBytes=2M MaxEnvBytes=0\n"
                    "MaxUserStoreBytes=1G MaxUserPendingJobs=5 MaxEventStreams=2 TokenTtl=8h\n");
    assert_true(c.site.allow_root_jobs);
    assert_true(dr_site_impersonator(&c.site, "ann"));
    assert_true(dr_site_impersonator(&c.site, "bo_b"));
    assert_false(dr_site_impersonator(&c.site, "an"));
    assert_int_equal(c.site.max_script_bytes, 2u << 20);
    assert_int_equal(c.site.max_env_bytes, 0);
    assert_int_equal(c.site.max_user_bytes, 1ull << 30);
    assert_int_equal(c.site.max_user_pending, 5);
    assert_int_equal(c.site.max_event_streams, 2);
    assert_true(c.site.token_ttl == 8 * 3600 * DR_NSEC_PER_SEC);
    dr_cluster_t d;
    assert_int_equal(dr_cluster_copy(&d, &c, NULL), 0);
    assert_true(d.site.allow_root_jobs && d.site.max_user_pending == 5);
    dr_cluster_free(&d);
    dr_cluster_free(&c);
    expect_err(N1 "AllowRootJobs=maybe\n", DR_EINVAL,
               "test.conf:2: AllowRootJobs: 'maybe' is not YES or NO");
    expect_err(N1 "MaxScriptBytes=1X\n", DR_EINVAL,
               "test.conf:2: MaxScriptBytes: '1X' is not a size in bytes (N, NK, NM or NG; 0: no "
               "limit)");
    expect_err(N1 "MaxEnvBytes=1K\nMaxEnvBytes=2K\n", DR_EINVAL,
               "test.conf:3: MaxEnvBytes: given twice");
    expect_err(N1 "MaxEventStreams=2 Cpus=3\n", DR_EINVAL,
               "test.conf:2: Cpus: not a site setting (a line of AllowRootJobs=, Max...= keys "
               "holds only those)");
    expect_err(N1 "Impersonators=a;b\n", DR_EINVAL,
               "test.conf:2: Impersonators: a comma-separated list of user names (at most 1023 "
               "characters)");
    expect_err(N1 "TokenMaxTtl=1h TokenTtl=2h\n", DR_EINVAL,
               "test.conf:2: TokenTtl: TokenTtl may not be longer than TokenMaxTtl");
}

static void test_errors_syntax(void **state)
{
    (void)state;
    expect_err("", DR_EINVAL, "test.conf: no nodes (add NodeName= or Pool= lines)");
    expect_err("# nothing\n\n", DR_EINVAL, "test.conf: no nodes (add NodeName= or Pool= lines)");
    expect_err(
        N1 "Color=red\n", DR_EINVAL,
        "test.conf:2: Color: unknown line kind (a line starts with NodeName=, "
        "SwitchName=, GpuType=, Pool=, PartitionName=, Account=, FairShareHalfLife=, "
        "PreemptGrace=, PreemptWithoutCheckpoint=, RequeueDefault=, NodeFailDrain=, "
        "CheckpointDir=, CheckpointKeep= or SchedulerPolicy=, or is a slurm.conf parameter)");
    expect_err(
        N1 "Cpus=8 NodeName=x\n", DR_EINVAL,
        "test.conf:2: Cpus: unknown line kind (a line starts with NodeName=, "
        "SwitchName=, GpuType=, Pool=, PartitionName=, Account=, FairShareHalfLife=, "
        "PreemptGrace=, PreemptWithoutCheckpoint=, RequeueDefault=, NodeFailDrain=, "
        "CheckpointDir=, CheckpointKeep= or SchedulerPolicy=, or is a slurm.conf parameter)");
    expect_err("NodeName=a Cpus=1 MemGB=1 Color=red\n", DR_EINVAL,
               "test.conf:1: Color: unknown key");
    expect_err("NodeName=a Cpus=1 MemGB=1 Pool=x\n", DR_EINVAL,
               "test.conf:1: Pool: not allowed on a NodeName line");
    expect_err("NodeName=a Cpus=1 MemGB=1 maxnodes=3\n", DR_EINVAL,
               "test.conf:1: MaxNodes: not allowed on a NodeName line");
    expect_err("SwitchName=s Cpus=1\n", DR_EINVAL,
               "test.conf:1: Cpus: not allowed on a SwitchName line");
    expect_err("GpuType=G Gpus=T4:1\n", DR_EINVAL,
               "test.conf:1: Gpus: not allowed on a GpuType line");
    expect_err("Pool=p State=UP\n", DR_EINVAL, "test.conf:1: State: not allowed on a Pool line");
    expect_err("NodeName=a Cpus=1 MemGB=1 cpus=2\n", DR_EINVAL, "test.conf:1: Cpus: given twice");
    expect_err("NodeName=a Cpus\n", DR_EINVAL,
               "test.conf:1: Cpus: missing '=' (expected KEY=VALUE)");
    expect_err("NodeName=a Cpus=1 MemGB=1 \\ Switch=s\n", DR_EINVAL,
               "test.conf:1: \\: missing '=' (expected KEY=VALUE)");
    expect_err("=a\n", DR_EINVAL, "test.conf:1: =: missing key before '='");
    expect_err("NodeName=\"a Cpus=1\n", DR_EINVAL, "test.conf:1: NodeName: unterminated quote");
    expect_err("NodeName=\"a\"b Cpus=1\n", DR_EINVAL,
               "test.conf:1: NodeName: text after the closing quote");
    expect_err(N1 "NodeName=x Cpus=1 \\\n  MemGB=lots\n", DR_EINVAL,
               "test.conf:3: MemGB: 'lots' is not a number");
    expect_err(
        N1 "NodeName=x Cpus=1 MemGB=1 \\\n\n  Bogus=1\n", DR_EINVAL,
        "test.conf:4: Bogus: unknown line kind (a line starts with NodeName=, "
        "SwitchName=, GpuType=, Pool=, PartitionName=, Account=, FairShareHalfLife=, "
        "PreemptGrace=, PreemptWithoutCheckpoint=, RequeueDefault=, NodeFailDrain=, "
        "CheckpointDir=, CheckpointKeep= or SchedulerPolicy=, or is a slurm.conf parameter)");
    /* unquoted, '#' starts a comment */
    expect_err("GpuType=\"Z#1\"\nNodeName=z1 Gpus=Z#1:2 Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:2: Gpus: expected TYPE:COUNT, got 'Z'");
    /* a NUL byte in the middle of the text */
    dr_cluster_t c;
    dr_err_t err = {0};
    dr_cluster_init(&c);
    const char text[] = "NodeName=a Cpus=1 MemGB=1\nNodeName=b\0 Cpus=1 MemGB=1\n";
    assert_int_equal(dr_config_parse(&c, &cat, "test.conf", text, sizeof text - 1, &err),
                     DR_EINVAL);
    assert_string_equal(err.msg, "test.conf:2: the line contains a NUL byte");
    dr_cluster_free(&c);
}

static void test_errors_nodename(void **state)
{
    (void)state;
    expect_err("NodeName=h[3-1] Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:1: NodeName: hostlist 'h[3-1]': range 3-1 is descending");
    expect_err("NodeName= Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:1: NodeName: hostlist '': empty host list");
    expect_err("NodeName=a MemGB=1\n", DR_EINVAL, "test.conf:1: NodeName: Cpus= is missing");
    expect_err("NodeName=a Cpus=1\n", DR_EINVAL,
               "test.conf:1: NodeName: MemGB= (or MemMB=, RealMemory=) is missing");
    expect_err("NodeName=a Cpus=1 MemGB=1 MemMB=1024\n", DR_EINVAL,
               "test.conf:1: MemMB: give MemGB or MemMB, not both");
    expect_err("NodeName=a Cpus=abc MemGB=1\n", DR_EINVAL,
               "test.conf:1: Cpus: 'abc' is not a whole number");
    expect_err("NodeName=a Cpus=1.5 MemGB=1\n", DR_EINVAL,
               "test.conf:1: Cpus: '1.5' is not a whole number");
    expect_err("NodeName=a Cpus=-1 MemGB=1\n", DR_EINVAL,
               "test.conf:1: Cpus: '-1' is not a whole number");
    expect_err("NodeName=a Cpus=5000000 MemGB=1\n", DR_EINVAL,
               "test.conf:1: Cpus: 5000000 is out of range (0..4294967)");
    expect_err("NodeName=a Cpus=1 MemGB=-1\n", DR_EINVAL,
               "test.conf:1: MemGB: '-1' must not be negative");
    expect_err("NodeName=a Cpus=1 MemGB=1e10\n", DR_EINVAL,
               "test.conf:1: MemGB: '1e10' is too large (at most 1e+09)");
    expect_err("NodeName=a Cpus=1 MemMB=1.5\n", DR_EINVAL,
               "test.conf:1: MemMB: '1.5' is not a whole number");
    expect_err("NodeName=a Cpus=1 MemGB=1 Gpus=H10:8\n", DR_EINVAL,
               "test.conf:1: Gpus: unknown GPU type 'H10' (did you mean 'H100'?)");
    expect_err("NodeName=a Cpus=1 MemGB=1 Gpus=Trainum2:8\n", DR_EINVAL,
               "test.conf:1: Gpus: unknown GPU type 'Trainum2' (did you mean 'Trainium2'?)");
    expect_err("NodeName=a Cpus=1 MemGB=1 Gpus=mi300:8\n", DR_OK, "");
    expect_err("NodeName=a Cpus=1 MemGB=1 Gpus=Quantum:8\n", DR_EINVAL,
               "test.conf:1: Gpus: unknown GPU type 'Quantum' (not in the catalog; declare it "
               "with GpuType=)");
    expect_err("NodeName=a Cpus=1 MemGB=1 Gpus=G2:8\nGpuType=G2\n", DR_EINVAL,
               "test.conf:1: Gpus: unknown GPU type 'G2' (not in the catalog; declare it with "
               "GpuType=)");
    expect_err("GpuType=G22\nNodeName=a Cpus=1 MemGB=1 Gpus=G2:8\n", DR_EINVAL,
               "test.conf:2: Gpus: unknown GPU type 'G2' (did you mean 'G22'?)");
    expect_err("NodeName=a Cpus=1 MemGB=1 Gpus=H100\n", DR_EINVAL,
               "test.conf:1: Gpus: expected TYPE:COUNT, got 'H100'");
    expect_err("NodeName=a Cpus=1 MemGB=1 Gpus=:8\n", DR_EINVAL,
               "test.conf:1: Gpus: expected TYPE:COUNT, got ':8'");
    expect_err("NodeName=a Cpus=1 MemGB=1 Gpus=H100:0\n", DR_EINVAL,
               "test.conf:1: Gpus: count 0 is out of range (1..1024)");
    expect_err("NodeName=a Cpus=1 MemGB=1 Gpus=H100:1025\n", DR_EINVAL,
               "test.conf:1: Gpus: count 1025 is out of range (1..1024)");
    expect_err("NodeName=a Cpus=1 MemGB=1 Gpus=H100:eight\n", DR_EINVAL,
               "test.conf:1: Gpus: count 'eight' is not a whole number");
    expect_err("NodeName=a Cpus=1 MemGB=1 Gpus=H100:\n", DR_EINVAL,
               "test.conf:1: Gpus: count '' is not a whole number");
    expect_err(N1 "NodeName=x,n2 Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:2: NodeName: node 'n2' is defined twice (first on line 1)");
    expect_err("NodeName=a,b,a Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:1: NodeName: node 'a' is defined twice (first on line 1)");
    expect_err("NodeName=a Cpus=1 MemGB=1 NvlinkDomain=\n", DR_EINVAL,
               "test.conf:1: NvlinkDomain: empty (use node, none or a domain name)");
    expect_err(
        "NodeName=a Cpus=1 MemGB=1 State=BROKEN\n", DR_EINVAL,
        "test.conf:1: State: 'BROKEN' is not UP, DOWN or DRAIN (or Slurm's UNKNOWN, IDLE, FUTURE)");
    expect_err("NodeName=a Cpus=1 MemGB=1 Switch=\n", DR_EINVAL,
               "test.conf:1: Switch: empty switch name");
    expect_err("NodeName=a Cpus=1 MemGB=1\nSwitchName=spine Switches=leaf1\n", DR_EINVAL,
               "test.conf:2: Switches: unknown switch 'leaf1' (declare it with SwitchName= "
               "first)");
    expect_err("NodeName=a Cpus=1 MemGB=1\nSwitchName=leaf1\nSwitchName=spine Switches=leaf1\n"
               "NodeName=b Cpus=1 MemGB=1 Switch=spine\n",
               DR_EINVAL,
               "test.conf:4: Switch: switch 'spine' has child switches; nodes attach to leaf "
               "switches");
}

static void test_errors_limits(void **state)
{
    (void)state;
    expect_err("NodeName=a[1-20000] Gpus=T4:1024 Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:1: Gpus: the cluster would have more than 16777216 GPUs");
    expect_err("NodeName=x Cpus=1 MemGB=1\nNodeName=a[1-1000][1-1000] Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:2: NodeName: the cluster would have more than 1000000 nodes");
    expect_err("NodeName=a[1-1001][1-1000] Cpus=1 MemGB=1\n", DR_ELIMIT,
               "test.conf:1: NodeName: hostlist 'a[1-1001][1-1000]': expands to more than "
               "1000000 hosts");
    expect_err("Pool=p Gpus=T4:1 MaxNodes=1000001 Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:1: MaxNodes: 1000001 is out of range (1..1000000)");
    /* the 65th GPU type does not fit (a cluster holds 64) */
    char *text = malloc(65 * 80);
    size_t len = 0;
    for (int i = 1; i <= 65; i++)
        len += (size_t)sprintf(text + len, "GpuType=Q%d\nNodeName=n%d Gpus=Q%d:1 Cpus=1 MemGB=1\n",
                               i, i, i);
    expect_err(text, DR_ELIMIT,
               "test.conf:130: Gpus: GPU type 'Q65': a cluster holds at most 64 GPU types");
    free(text);
}

static void test_errors_switchname(void **state)
{
    (void)state;
    expect_err(N1 "SwitchName=leaf[1-2 Nodes=n1\n", DR_EINVAL,
               "test.conf:2: SwitchName: hostlist 'leaf[1-2': unbalanced '['");
    expect_err(N1 "SwitchName=leaf1 Nodes=n[1-3]\n", DR_EINVAL,
               "test.conf:2: Nodes: unknown node 'n3' (define it with NodeName= first)");
    expect_err(N1 "SwitchName=leaf1 Nodes=n1\nSwitchName=leaf2 Nodes=n[1-2]\n", DR_EINVAL,
               "test.conf:3: Nodes: node 'n1' is already on switch 'leaf1'");
    expect_err(N1 "SwitchName=leaf[1-2] Nodes=n1\n", DR_EINVAL,
               "test.conf:2: Nodes: node 'n1' is already on switch 'leaf1'");
    expect_err("NodeName=n1 Cpus=1 MemGB=1 Switch=leaf1\nSwitchName=leaf2 Nodes=n1\n", DR_EINVAL,
               "test.conf:2: Nodes: node 'n1' is already on switch 'leaf1'");
    expect_err(N1 "SwitchName=leaf1 Switches=nope\n", DR_EINVAL,
               "test.conf:2: Switches: unknown switch 'nope' (declare it with SwitchName= "
               "first)");
    expect_err(N1 "SwitchName=a\nSwitchName=a Switches=a\n", DR_EINVAL,
               "test.conf:3: Switches: switch 'a' cannot be its own child");
    expect_err(N1 "SwitchName=a,b\nSwitchName=a Switches=b\nSwitchName=b Switches=a\n", DR_EINVAL,
               "test.conf:4: Switches: making 'b' the parent of 'a' would make a cycle");
    expect_err(N1 "SwitchName=a,b,c\nSwitchName=a Switches=b\nSwitchName=b Switches=c\n"
                  "SwitchName=c Switches=a\n",
               DR_EINVAL, "test.conf:5: Switches: making 'c' the parent of 'a' would make a cycle");
    expect_err(N1 "SwitchName=a,b,c\nSwitchName=a Switches=b\nSwitchName=c Switches=b\n", DR_EINVAL,
               "test.conf:4: Switches: switch 'b' already has parent 'a'");
    expect_err(N1 "SwitchName=a,b,c\nSwitchName=b Switches=c\nSwitchName=c Switches=a\n"
                  "SwitchName=a Switches=b\n",
               DR_EINVAL, "test.conf:5: Switches: making 'a' the parent of 'b' would make a cycle");
    expect_err(N1 "SwitchName=leaf Nodes=n1\nSwitchName=x\nSwitchName=leaf Switches=x\n", DR_EINVAL,
               "test.conf:4: Switches: switch 'leaf' has nodes; it cannot also have child "
               "switches");
    expect_err(N1 "SwitchName=x\nSwitchName=spine Switches=x\nSwitchName=spine Nodes=n1\n",
               DR_EINVAL,
               "test.conf:4: Nodes: switch 'spine' has child switches; nodes attach to leaf "
               "switches");
    expect_err(N1 "SwitchName=s LinkGbps=fast\n", DR_EINVAL,
               "test.conf:2: LinkGbps: 'fast' is not a number");
}

static void test_errors_gputype(void **state)
{
    (void)state;
    expect_err("GpuType=T4\n", DR_EINVAL,
               "test.conf:1: GpuType: 'T4' is already in the GPU catalog (as 'T4-16GB'); use "
               "that type, or give PricePerGpuHour= to set the site's price for it");
    /* a catalog type takes the site's price only: its figures are the catalog's */
    expect_err("GpuType=T4 PricePerGpuHour=0.2 MemGB=24\n", DR_EINVAL,
               "test.conf:1: MemGB: 'T4' is in the GPU catalog (as 'T4-16GB'): only "
               "PricePerGpuHour= may be set for it");
    expect_err("GpuType=T4 PricePerGpuHour=cheap\n", DR_EINVAL,
               "test.conf:1: PricePerGpuHour: 'cheap' is not a number");
    expect_err("GpuType=T4 PricePerGpuHour=0.3\nGpuType=T4-16GB PricePerGpuHour=0.2\n", DR_EINVAL,
               "test.conf:2: GpuType: 'T4-16GB' is declared twice (first on line 1)");
    expect_err("NodeName=a Cpus=1 MemGB=1 Gpus=T4:1\nGpuType=T4 PricePerGpuHour=0.2\n", DR_EINVAL,
               "test.conf:2: GpuType: 'T4' is already a GPU type of this cluster (a GpuType= line "
               "goes before the nodes that use the type)");
    expect_err("GpuType=G2\ngputype=g2\n", DR_EINVAL,
               "test.conf:2: GpuType: 'g2' is declared twice (first on line 1)");
    expect_err("GpuType=G:2\n", DR_EINVAL, "test.conf:1: GpuType: 'G:2' may not contain ':'");
    expect_err("GpuType=\"G 2\"\n", DR_EINVAL, "test.conf:1: GpuType: 'G 2' may not contain ' '");
    expect_err("GpuType=\n", DR_EINVAL, "test.conf:1: GpuType: empty name");
    expect_err("GpuType=ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJ\n", DR_EINVAL,
               "test.conf:1: GpuType: 'ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJ' is longer than "
               "39 characters");
    expect_err("GpuType=G MemGB=thirty\n", DR_EINVAL,
               "test.conf:1: MemGB: 'thirty' is not a number");
    expect_err("GpuType=G TdpW=-5\n", DR_EINVAL, "test.conf:1: TdpW: '-5' must not be negative");
    expect_err("GpuType=G PricePerGpuHour=$1\n", DR_EINVAL,
               "test.conf:1: PricePerGpuHour: '$1' is not a number");
    expect_err("GpuType=G Vendor=ABCDEFGHIJABCDEFGHIJABCDE\n", DR_EINVAL,
               "test.conf:1: Vendor: 'ABCDEFGHIJABCDEFGHIJABCDE' is longer than 23 characters");
}

static void test_errors_pool(void **state)
{
    (void)state;
    expect_err("Pool=p MaxNodes=2 Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:1: Pool: Gpus= is missing");
    expect_err("Pool=p Gpus=T4:1 Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:1: Pool: MaxNodes= is missing");
    expect_err("Pool=p Gpus=T4:1 MaxNodes=0 Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:1: MaxNodes: 0 is out of range (1..1000000)");
    expect_err("Pool=p Gpus=T4:1 MaxNodes=2 MemGB=1\n", DR_EINVAL,
               "test.conf:1: Pool: Cpus= is missing");
    expect_err("Pool=p Gpus=T4:1 MaxNodes=2 Cpus=1\n", DR_EINVAL,
               "test.conf:1: Pool: MemGB= (or MemMB=) is missing");
    expect_err("Pool=p Gpus=T44:1 MaxNodes=2 Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:1: Gpus: unknown GPU type 'T44' (did you mean 'T4'?)");
    expect_err("Pool=p Gpus=T4:1 MaxNodes=2 Cpus=1 MemGB=1 ProvisionDelay=soon\n", DR_EINVAL,
               "test.conf:1: ProvisionDelay: 'soon' is not a duration (such as 90s, 5m, 1h or "
               "1:30:00)");
    expect_err("Pool=p Gpus=T4:1 MaxNodes=2 Cpus=1 MemGB=1 SpotInterruptRate=-0.1\n", DR_EINVAL,
               "test.conf:1: SpotInterruptRate: '-0.1' must not be negative");
    expect_err("Pool=p Gpus=T4:1 MaxNodes=2 Cpus=1 MemGB=1 PricePerGpuHour=cheap\n", DR_EINVAL,
               "test.conf:1: PricePerGpuHour: 'cheap' is not a number");
    expect_err("Pool=p Gpus=T4:1 MaxNodes=2 Cpus=1 MemGB=1\nPool=p Gpus=T4:1 MaxNodes=2 Cpus=1 "
               "MemGB=1\n",
               DR_EINVAL, "test.conf:2: Pool: pool 'p' is declared twice (first on line 1)");
    expect_err("NodeName=p-2 Cpus=1 MemGB=1\nPool=p Gpus=T4:1 MaxNodes=2 Cpus=1 MemGB=1\n",
               DR_EINVAL, "test.conf:2: Pool: node 'p-2' is defined twice (first on line 1)");
    expect_err("Pool=p[1-2] Gpus=T4:1 MaxNodes=2 Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:1: Pool: 'p[1-2]' may not contain '['");
    expect_err("Pool= Gpus=T4:1 MaxNodes=2 Cpus=1 MemGB=1\n", DR_EINVAL,
               "test.conf:1: Pool: empty name");
}

/* --- openb node list --- */

static int parse_openb(dr_cluster_t *c, const char *text, dr_err_t *err)
{
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1);
    memcpy(copy, text, n);
    dr_cluster_init(c);
    int rc = dr_openb_nodes_parse(c, &cat, "nodes.csv", copy, n, err);
    free(copy);
    return rc;
}

static void test_openb_file(void **state)
{
    (void)state;
    size_t len;
    char *buf = tu_read(tu_src_path("data/openb/openb_node_list_gpu_node.csv"), &len);
    dr_cluster_t c;
    dr_err_t err = {0};
    dr_cluster_init(&c);
    if (dr_openb_nodes_parse(&c, &cat, "openb.csv", buf, len, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(c.nnodes, 1213);
    assert_int_equal(c.ngpus, 6212);
    assert_int_equal(c.ntypes, 7);
    free(buf);
    dr_cluster_free(&c);
}

static void test_openb_small(void **state)
{
    (void)state;
    dr_cluster_t c;
    dr_err_t err = {0};
    const char *csv = "model,gpu,sn,memory_mib,cpu_milli\r\n"
                      "T4,1,a,1024,8000\r\n"
                      ",0,cpu-only,2048,16000\r\n"
                      "\r\n"
                      "G9,4, b ,4096,32000\r\n"
                      "g9,2,c,4096,32000\r\n";
    if (parse_openb(&c, csv, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(c.nnodes, 4);
    assert_int_equal(c.ngpus, 7);
    assert_int_equal(c.ntypes, 2);
    const dr_node_t *n = &c.nodes[node(&c, "cpu-only")];
    assert_int_equal(n->ngpus, 0);
    assert_int_equal(n->cpu_milli, 16000);
    assert_int_equal(n->mem_mb, 2048);
    assert_string_equal(type_of(&c, "b"), "G9");
    assert_string_equal(type_of(&c, "c"), "G9");
    assert_string_equal(type_of(&c, "a"), "T4-16GB");
    assert_true(isnan(c.types[c.nodes[node(&c, "b")].type].mem_gb));
    dr_cluster_free(&c);
}

static void expect_openb_err(const char *csv, const char *msg)
{
    dr_cluster_t c;
    dr_err_t err = {0};
    int rc = parse_openb(&c, csv, &err);
    if (rc >= 0 || strcmp(err.msg, msg) != 0)
        fail_msg("--- input:\n%s\n--- got rc %d: %s\n--- want: %s", csv, rc, err.msg, msg);
    dr_cluster_free(&c);
}

#define OH "sn,cpu_milli,memory_mib,gpu,model\n"

static void test_openb_errors(void **state)
{
    (void)state;
    expect_openb_err("", "nodes.csv: empty file (no header)");
    expect_openb_err(OH, "nodes.csv: no nodes");
    expect_openb_err("sn,cpu_milli,memory_mib,model\n",
                     "nodes.csv:1: header: missing column 'gpu'");
    expect_openb_err(OH "a,8000,1024,1,T4\nb,lots,1024,1,T4\n",
                     "nodes.csv:3: cpu_milli: 'lots' is not a whole number");
    expect_openb_err(OH "a,-8000,1024,1,T4\n",
                     "nodes.csv:2: cpu_milli: '-8000' is not a whole number");
    expect_openb_err(OH "a,8000000000,1024,1,T4\n",
                     "nodes.csv:2: cpu_milli: 8000000000 is too large (at most 4294967295)");
    expect_openb_err(OH "a,8000,1.5,1,T4\n",
                     "nodes.csv:2: memory_mib: '1.5' is not a whole number");
    expect_openb_err(OH "a,8000,1024,x,T4\n", "nodes.csv:2: gpu: 'x' is not a whole number");
    expect_openb_err(OH "a,8000,1024,2000,T4\n",
                     "nodes.csv:2: gpu: 2000 is too large (at most 1024)");
    expect_openb_err(OH "a,8000,1024,2,\n", "nodes.csv:2: model: empty for a node with 2 GPUs");
    expect_openb_err(OH "a,8000,1024,2,ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJ\n",
                     "nodes.csv:2: model: 'ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJ' is longer "
                     "than 39 characters");
    expect_openb_err(OH "a,8000,1024,1,T4\n\na,8000,1024,1,T4\n",
                     "nodes.csv:4: sn: node 'a' is listed twice (first on line 2)");
    expect_openb_err(OH ",8000,1024,1,T4\n", "nodes.csv:2: sn: empty node name");
    expect_openb_err(OH "a,8000,1024,1\n", "nodes.csv:2: row has 4 fields, the header has 5");
    expect_openb_err(OH "a,8000,1024,1,\"T4\n", "nodes.csv:2: unterminated quote");
}

/* SchedulerPolicy= names the controller's policy, once. */
static void test_scheduler_policy(void **st)
{
    (void)st;
    dr_err_t err;
    dr_cluster_t c;
    dr_cluster_init(&c);
    const char *ok_conf = "SchedulerPolicy=cost:q=0.9\nNodeName=n1 Gpus=H100:8 Cpus=8 MemGB=64\n";
    assert_int_equal(dr_config_parse(&c, &cat, "p.conf", ok_conf, strlen(ok_conf), &err), DR_OK);
    assert_string_equal(c.policy, "cost:q=0.9");
    dr_cluster_t d;
    assert_int_equal(dr_cluster_copy(&d, &c, &err), DR_OK);
    assert_string_equal(d.policy, "cost:q=0.9");
    dr_cluster_free(&d);
    dr_cluster_free(&c);
    dr_cluster_init(&c);
    const char *twice = "SchedulerPolicy=cost\nSchedulerPolicy=fifo\nNodeName=n1 Cpus=8 MemGB=64\n";
    assert_int_equal(dr_config_parse(&c, &cat, "p.conf", twice, strlen(twice), &err), DR_EINVAL);
    assert_string_equal(err.msg, "p.conf:2: SchedulerPolicy: given twice (already 'cost')");
    dr_cluster_free(&c);
}

/* Account= lines: limits (total and per GPU type, by any of the type's
 * names) and shares, with defaults; errors name the key. */
static void test_accounts(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=h1 Gpus=H100:8 Cpus=8 MemGB=64\n"
                   "NodeName=a1 Gpus=A100:8 Cpus=8 MemGB=64\n"
                   "Account=vision MaxRunningGpus=16 MaxRunningGpus[h100]=8 MaxQueuedJobs=1000 "
                   "Shares=2\n"
                   "account=nlp maxrunninggpus[A100]=0\n");
    assert_int_equal(c.naccounts, 2);
    int v = dr_cluster_find_account(&c, "vision"), n = dr_cluster_find_account(&c, "nlp");
    int h = dr_cluster_find_type(&c, "H100"), a = dr_cluster_find_type(&c, "A100");
    assert_true(v == 0 && n == 1 && h >= 0 && a >= 0);
    assert_int_equal(dr_cluster_find_account(&c, "Vision"), -1);
    const dr_account_t *va = &c.accounts[v], *na = &c.accounts[n];
    assert_true(va->shares == 2 && va->max_running_gpus == 16 && va->max_queued_jobs == 1000);
    assert_int_equal(va->max_running_gpus_type[h], 8);
    assert_int_equal(va->max_running_gpus_type[a], DR_ACCT_NO_LIMIT);
    assert_true(na->shares == 1 && na->max_running_gpus == DR_ACCT_NO_LIMIT &&
                na->max_queued_jobs == DR_ACCT_NO_LIMIT);
    assert_int_equal(na->max_running_gpus_type[a], 0);
    dr_cluster_t cp;
    dr_err_t err;
    assert_int_equal(dr_cluster_copy(&cp, &c, &err), DR_OK);
    assert_int_equal(cp.naccounts, 2);
    assert_string_equal(cp.accounts[1].name, "nlp");
    assert_ptr_not_equal(cp.accounts[1].name, c.accounts[1].name);
    dr_cluster_free(&cp);
    dr_cluster_free(&c);
    expect_err(N1 "Account=x MaxRunningGpus[H200]=1\n", DR_EINVAL,
               "test.conf:2: MaxRunningGpus[H200]: 'H200' is not a GPU type of this cluster "
               "(Account= lines come after the nodes)");
    expect_err(N1 "Account=x MaxRunningGpus=-1\n", DR_EINVAL,
               "test.conf:2: MaxRunningGpus: '-1' is not a whole number");
    expect_err(N1 "Account=x Shares=0\n", DR_EINVAL, "test.conf:2: Shares: must be more than 0");
    expect_err(N1 "Account=x\nAccount=x\n", DR_EINVAL,
               "test.conf:3: Account: account 'x' is declared twice");
    expect_err(N1 "Account=x Cpus=3\n", DR_EINVAL,
               "test.conf:2: Cpus: not allowed on a Account line");
    expect_err(N1 "Account=x MaxQueuedJobs=1 maxqueuedjobs=2\n", DR_EINVAL,
               "test.conf:2: MaxQueuedJobs: given twice");
    /* budgets: dollars per UTC day and calendar month */
    tu_cluster(&c, N1 "Account=lab MaxCostPerDay=120.5 MaxCostPerMonth=3000\nAccount=free\n");
    assert_true(c.accounts[0].max_cost_day == 120.5 && c.accounts[0].max_cost_month == 3000);
    assert_true(isinf(c.accounts[1].max_cost_day) && isinf(c.accounts[1].max_cost_month));
    dr_cluster_free(&c);
    expect_err(N1 "Account=x MaxCostPerDay=0\n", DR_EINVAL,
               "test.conf:2: MaxCostPerDay: must be more than 0 (dollars)");
    expect_err(N1 "Account=x MaxCostPerMonth=lots\n", DR_EINVAL,
               "test.conf:2: MaxCostPerMonth: 'lots' is not a number");
}

/* FairShareHalfLife=: Slurm's time format; 0 or UNLIMITED = no decay; not
 * given = 0 (the core's 7 days). */
static void test_fairshare_half_life(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, N1 "FairShareHalfLife=1-12\n");
    assert_true(c.fairshare_half_life == (dr_time_t)36 * 3600 * DR_NSEC_PER_SEC);
    dr_cluster_free(&c);
    tu_cluster(&c, N1 "FairShareHalfLife=0\n");
    assert_true(c.fairshare_half_life == DR_TIME_NEVER);
    dr_cluster_free(&c);
    tu_cluster(&c, N1);
    assert_true(c.fairshare_half_life == 0);
    dr_cluster_free(&c);
    expect_err(N1 "FairShareHalfLife=2\nFairShareHalfLife=3\n", DR_EINVAL,
               "test.conf:3: FairShareHalfLife: given twice");
    expect_err(N1 "FairShareHalfLife=soon\n", DR_EINVAL,
               "test.conf:2: FairShareHalfLife: 'soon' is not a time limit (minutes, HH:MM:SS, "
               "D-HH:MM:SS or UNLIMITED)");
}

/* PreemptGrace=: a duration (plain numbers are seconds); 0 = no wait; not
 * given = the default (preempt_grace_set false). */
static void test_preempt_grace(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, N1 "PreemptGrace=45\n");
    assert_true(c.preempt_grace_set && c.preempt_grace == 45 * DR_NSEC_PER_SEC);
    dr_cluster_free(&c);
    tu_cluster(&c, N1 "PreemptGrace=2m\n");
    assert_true(c.preempt_grace == 120 * DR_NSEC_PER_SEC);
    dr_cluster_free(&c);
    tu_cluster(&c, N1 "PreemptGrace=0\n");
    assert_true(c.preempt_grace_set && c.preempt_grace == 0);
    dr_cluster_free(&c);
    tu_cluster(&c, N1);
    assert_false(c.preempt_grace_set);
    dr_cluster_free(&c);
    expect_err(N1 "PreemptGrace=1\nPreemptGrace=3\n", DR_EINVAL,
               "test.conf:3: PreemptGrace: given twice");
    expect_err(N1 "PreemptGrace=soon\n", DR_EINVAL,
               "test.conf:2: PreemptGrace: 'soon' is not a duration (seconds, or with a unit: "
               "90s, 2m)");
    expect_err(N1 "PreemptGrace=5 Cpus=2\n", DR_EINVAL,
               "test.conf:2: Cpus: not allowed on a PreemptGrace line");
}

/* PreemptWithoutCheckpoint=YES|NO: NO (false) unless given. */
static void test_preempt_nockpt(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, N1);
    assert_false(c.preempt_nockpt);
    dr_cluster_free(&c);
    tu_cluster(&c, N1 "PreemptWithoutCheckpoint=yes\n");
    assert_true(c.preempt_nockpt);
    dr_cluster_free(&c);
    tu_cluster(&c, N1 "PreemptWithoutCheckpoint=NO\n");
    assert_false(c.preempt_nockpt);
    dr_cluster_free(&c);
    expect_err(N1 "PreemptWithoutCheckpoint=NO\nPreemptWithoutCheckpoint=YES\n", DR_EINVAL,
               "test.conf:3: PreemptWithoutCheckpoint: given twice");
    expect_err(N1 "PreemptWithoutCheckpoint=maybe\n", DR_EINVAL,
               "test.conf:2: PreemptWithoutCheckpoint: 'maybe' is not YES or NO");
}

/* RequeueDefault=YES|NO and NodeFailDrain=N/DURATION (the controller's
 * node-loss and flaky-node rules); not given: 0. */
static void test_requeue_and_fail_drain(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, N1);
    assert_int_equal(c.requeue_default, 0);
    assert_int_equal(c.fail_drain_n, 0);
    assert_true(c.fail_drain_window == 0);
    dr_cluster_free(&c);
    tu_cluster(&c, N1 "RequeueDefault=no\nNodeFailDrain=3/10m\n");
    assert_int_equal(c.requeue_default, -1);
    assert_int_equal(c.fail_drain_n, 3);
    assert_true(c.fail_drain_window == (dr_time_t)600 * DR_NSEC_PER_SEC);
    dr_cluster_free(&c);
    tu_cluster(&c, N1 "RequeueDefault=YES\nNodeFailDrain=0\n");
    assert_int_equal(c.requeue_default, 1);
    assert_int_equal(c.fail_drain_n, 0);
    assert_true(c.fail_drain_window == -1);
    dr_cluster_free(&c);
    expect_err(N1 "RequeueDefault=maybe\n", DR_EINVAL,
               "test.conf:2: RequeueDefault: 'maybe' is not YES or NO");
    expect_err(N1 "RequeueDefault=yes\nRequeueDefault=no\n", DR_EINVAL,
               "test.conf:3: RequeueDefault: given twice");
    expect_err(N1 "NodeFailDrain=3\n", DR_EINVAL,
               "test.conf:2: NodeFailDrain: '3' is not N/DURATION (e.g. 3/10m)");
    expect_err(N1 "NodeFailDrain=0/10m\n", DR_EINVAL,
               "test.conf:2: NodeFailDrain: '0/10m': the count must be 1 to 1000");
    expect_err(N1 "NodeFailDrain=2/soon\n", DR_EINVAL,
               "test.conf:2: NodeFailDrain: '2/soon': the window is not a duration (e.g. 10m)");
    expect_err(N1 "NodeFailDrain=2/1m\nNodeFailDrain=3/1m\n", DR_EINVAL,
               "test.conf:3: NodeFailDrain: given twice");
}

/* CheckpointDir= (absolute; trailing slashes dropped) and CheckpointKeep=
 * (1 or more); not given: "" and 0 (the job's .drover/ckpt, keep 3). */
static void test_checkpoint_lines(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, N1 "CheckpointDir=/shared/ckpt//\nCheckpointKeep=5\n");
    assert_string_equal(c.ckpt_dir, "/shared/ckpt");
    assert_int_equal(c.ckpt_keep, 5);
    dr_cluster_free(&c);
    tu_cluster(&c, N1);
    assert_string_equal(c.ckpt_dir, "");
    assert_int_equal(c.ckpt_keep, 0);
    dr_cluster_free(&c);
    expect_err(N1 "CheckpointDir=ckpt\n", DR_EINVAL,
               "test.conf:2: CheckpointDir: an absolute directory path of at most 1023 characters");
    expect_err(N1 "CheckpointDir=/a\nCheckpointDir=/b\n", DR_EINVAL,
               "test.conf:3: CheckpointDir: given twice (already '/a')");
    expect_err(N1 "CheckpointKeep=0\n", DR_EINVAL,
               "test.conf:2: CheckpointKeep: '0' is not a number of checkpoints from 1 to 1000000");
    expect_err(N1 "CheckpointKeep=3 Nodes=x\n", DR_EINVAL,
               "test.conf:2: Nodes: not allowed on a CheckpointKeep line");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requeue_and_fail_drain),
        cmocka_unit_test(test_checkpoint_lines),
        cmocka_unit_test(test_scheduler_policy),
        cmocka_unit_test(test_preset_gavel),
        cmocka_unit_test(test_preset_openb),
        cmocka_unit_test(test_preset_philly_mixed),
        cmocka_unit_test(test_preset_names),
        cmocka_unit_test(test_nodename),
        cmocka_unit_test(test_gputype),
        cmocka_unit_test(test_site_price),
        cmocka_unit_test(test_switchname),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_misc_syntax),
        cmocka_unit_test(test_quoted_names),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_site),
        cmocka_unit_test(test_errors_syntax),
        cmocka_unit_test(test_errors_nodename),
        cmocka_unit_test(test_errors_limits),
        cmocka_unit_test(test_errors_switchname),
        cmocka_unit_test(test_errors_gputype),
        cmocka_unit_test(test_errors_pool),
        cmocka_unit_test(test_openb_file),
        cmocka_unit_test(test_openb_small),
        cmocka_unit_test(test_openb_errors),
        cmocka_unit_test(test_accounts),
        cmocka_unit_test(test_fairshare_half_life),
        cmocka_unit_test(test_preempt_grace),
        cmocka_unit_test(test_preempt_nockpt),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
