/* test_topology.c - placement beyond one node: NVLink domains, the switch
 * tree, whole-node protection, data shards (holders first, round-robin
 * otherwise, hits counted by the simulator) and the locality an allocation
 * records, with the cross-node slowdown that reads it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/config.h"
#include "drover/placement.h"
#include "drover/sim.h"
#include "drover/workload.h"
#include "testutil.h"

static void parse(dr_cluster_t *c, const char *conf)
{
    dr_err_t err;
    dr_cluster_init(c);
    if (dr_config_parse(c, NULL, "topo.conf", conf, strlen(conf), &err) != DR_OK)
        fail_msg("config: %s", err.msg);
}

static int node(const dr_cluster_t *c, const char *name)
{
    int i = dr_cluster_find_node(c, name);
    if (i < 0)
        fail_msg("no node %s", name);
    return i;
}

static dr_job_req_t req(uint32_t nodes, uint32_t gpn)
{
    dr_job_req_t r = {.nodes = nodes, .gpus_per_node = gpn, .gpu_milli = 1000};
    return r;
}

static const dr_place_opts_t BF = {.strategy = DR_PLACE_BEST_FIT};

/* Book `gpus` GPUs on node `name` (best-fit cannot be steered, so the
 * tests lay out busy GPUs by hand). */
static void occupy(dr_cluster_t *c, const char *name, uint16_t first, uint16_t gpus, dr_alloc_t *a)
{
    memset(a, 0, sizeof *a);
    a->slots = calloc(gpus, sizeof *a->slots);
    for (uint16_t g = 0; g < gpus; g++)
        a->slots[g] = (dr_slot_t){(uint32_t)node(c, name), (uint16_t)(first + g), 1000};
    a->nslots = gpus;
    a->nnodes = 1;
    a->type = c->nodes[node(c, name)].type;
    assert_int_equal(dr_cluster_take(c, a, NULL), DR_OK);
}

static bool on(const dr_cluster_t *c, const dr_alloc_t *a, const char *prefix)
{
    for (uint32_t i = 0; i < a->nslots; i++)
        if (strncmp(c->nodes[a->slots[i].node].name, prefix, strlen(prefix)) != 0)
            return false;
    return true;
}

/* Two GB200 NVL racks (4 GPUs per node) under one leaf: a gang stays in
 * one rack even when the plain best-fit order would mix them. */
static void test_nvlink_domain_preferred(void **st)
{
    (void)st;
    dr_cluster_t c;
    parse(&c, "NodeName=ra[1-4] Gpus=gb200:4 Cpus=72 MemGB=480 NvlinkDomain=rack-a Switch=leaf1\n"
              "NodeName=rb[1-4] Gpus=gb200:4 Cpus=72 MemGB=480 NvlinkDomain=rack-b Switch=leaf1\n");
    dr_alloc_t busy[3], a, b, x;
    occupy(&c, "ra1", 0, 4, &busy[0]);
    occupy(&c, "ra2", 0, 4, &busy[1]);
    occupy(&c, "ra3", 0, 4, &busy[2]);
    /* rack-a has one free node (ra4), rack-b four: a 2x4 gang goes to rack-b */
    dr_job_req_t g = req(2, 4);
    assert_int_equal(dr_place(&c, &g, 1, &BF, &a), DR_OK);
    assert_true(on(&c, &a, "rb"));
    assert_int_equal(a.nnodes, 2);
    assert_int_equal(a.locality, DR_LOC_NVLINK);
    assert_int_equal(dr_alloc_nleaves(&c, &a), 1);
    /* --gpus=8 (no single node has 8): also one rack, the two nodes left */
    dr_job_req_t f = req(0, 8);
    assert_int_equal(dr_place(&c, &f, 1, &BF, &b), DR_OK);
    assert_true(on(&c, &b, "rb"));
    assert_int_equal(b.locality, DR_LOC_NVLINK);
    /* now no rack has two free nodes: the next gang spans the racks under
     * the leaf (ra4 and nothing else is free: it cannot fit) */
    assert_int_equal(dr_place(&c, &g, 1, &BF, &x), DR_ENOSPC);
    dr_cluster_give(&c, &busy[0]);
    assert_int_equal(dr_place(&c, &g, 1, &BF, &x), DR_OK);
    assert_true(on(&c, &x, "ra"));
    assert_int_equal(x.locality, DR_LOC_NVLINK);
    dr_alloc_free(&x);
    dr_alloc_free(&a);
    dr_alloc_free(&b);
    for (int i = 0; i < 3; i++)
        dr_alloc_free(&busy[i]);
    dr_cluster_free(&c);
}

/* A single node with NvlinkDomain=node is its own domain; one node is
 * always DR_LOC_NODE. */
static void test_single_node_locality(void **st)
{
    (void)st;
    dr_cluster_t c;
    parse(&c, "NodeName=h[1-2] Gpus=H100-SXM:8 Cpus=192 MemGB=2048 NvlinkDomain=node Switch=l1\n");
    dr_alloc_t a;
    dr_job_req_t r = req(1, 8);
    assert_int_equal(dr_place(&c, &r, 1, &BF, &a), DR_OK);
    assert_int_equal(a.locality, DR_LOC_NODE);
    assert_int_equal(a.lca_level, 0);
    assert_string_equal(dr_locality_name((dr_locality_t)a.locality), "node");
    dr_alloc_free(&a);
    dr_cluster_free(&c);
}

/* 8-GPU nodes on two leaves under a spine: a 16-GPU job takes the fewest
 * nodes under one leaf; when no leaf has room, the lowest common switch. */
#define TREE_CONF                                                                                  \
    "NodeName=a[1-4] Gpus=H100-SXM:8 Cpus=192 MemGB=2048 NvlinkDomain=node Switch=leaf1\n"         \
    "NodeName=b[1-4] Gpus=H100-SXM:8 Cpus=192 MemGB=2048 NvlinkDomain=node Switch=leaf2\n"         \
    "SwitchName=spine Switches=leaf[1-2]\n"

static void test_fewest_nodes_under_one_leaf(void **st)
{
    (void)st;
    dr_cluster_t c;
    parse(&c, TREE_CONF);
    dr_alloc_t busy[3], a, b;
    /* leaf1: a1 free, a2..a4 half used (4 idle each) = 20 idle GPUs;
     * leaf2: four free nodes */
    occupy(&c, "a2", 0, 4, &busy[0]);
    occupy(&c, "a3", 0, 4, &busy[1]);
    occupy(&c, "a4", 0, 4, &busy[2]);
    /* --gpus=16: leaf1 could do it with 3 nodes, leaf2 with 2 */
    dr_job_req_t f = req(0, 16);
    assert_int_equal(dr_place(&c, &f, 1, &BF, &a), DR_OK);
    assert_int_equal(a.nnodes, 2);
    assert_true(on(&c, &a, "b"));
    assert_int_equal(a.locality, DR_LOC_LEAF);
    assert_int_equal(dr_alloc_nleaves(&c, &a), 1);
    /* a 2x8 gang: leaf1 has one free node, leaf2 two: leaf2 again */
    dr_job_req_t g = req(2, 8);
    assert_int_equal(dr_place(&c, &g, 1, &BF, &b), DR_OK);
    assert_true(on(&c, &b, "b"));
    assert_int_equal(b.locality, DR_LOC_LEAF);
    dr_alloc_free(&b);
    dr_alloc_free(&a);
    for (int i = 0; i < 3; i++)
        dr_alloc_free(&busy[i]);
    dr_cluster_free(&c);
}

static void test_lowest_common_switch(void **st)
{
    (void)st;
    dr_cluster_t c;
    parse(&c, TREE_CONF);
    dr_alloc_t busy[6], a;
    const char *used[] = {"a1", "a2", "a3", "b1", "b2", "b3"};
    for (int i = 0; i < 6; i++)
        occupy(&c, used[i], 0, 8, &busy[i]);
    /* one free node per leaf: the gang spans both, under the spine */
    dr_job_req_t g = req(2, 8);
    assert_int_equal(dr_place(&c, &g, 1, &BF, &a), DR_OK);
    assert_int_equal(a.locality, DR_LOC_TREE);
    assert_int_equal(a.lca_level, 1);
    assert_int_equal(dr_alloc_nleaves(&c, &a), 2);
    assert_string_equal(dr_locality_name(DR_LOC_TREE), "tree");
    dr_alloc_free(&a);
    for (int i = 0; i < 6; i++)
        dr_alloc_free(&busy[i]);
    dr_cluster_free(&c);
}

/* Without a switch tree nothing joins the nodes: DR_LOC_NETWORK. */
static void test_no_topology_is_network(void **st)
{
    (void)st;
    dr_cluster_t c;
    parse(&c, "NodeName=n[1-4] Gpus=H100-SXM:8 Cpus=192 MemGB=2048\n");
    dr_alloc_t a;
    dr_job_req_t g = req(3, 8);
    assert_int_equal(dr_place(&c, &g, 1, &BF, &a), DR_OK);
    assert_int_equal(a.locality, DR_LOC_NETWORK);
    assert_int_equal(dr_alloc_nleaves(&c, &a), 0);
    dr_alloc_free(&a);
    dr_cluster_free(&c);
}

/* Whole-node protection: a 1-GPU job does not break the last free 8-GPU
 * node when a partly used node can take it - within a type, across types
 * (without a type preference), and for the last piece of --gpus=N. */
static void test_whole_node_protection(void **st)
{
    (void)st;
    dr_cluster_t c;
    parse(&c, "NodeName=h1 Gpus=H100-SXM:8 Cpus=192 MemGB=2048\n"
              "NodeName=m1 Gpus=MI300X:8 Cpus=192 MemGB=2048\n");
    int th = c.nodes[node(&c, "h1")].type, tm = c.nodes[node(&c, "m1")].type;
    dr_typemask_t both = (1ULL << th) | (1ULL << tm);
    dr_alloc_t busy, a, b;
    occupy(&c, "m1", 0, 1, &busy); /* m1 partly used, h1 whole */
    dr_job_req_t one = req(1, 1);
    /* no type preference: the partly used MI300X node, not the whole H100 */
    assert_int_equal(dr_place(&c, &one, both, &BF, &a), DR_OK);
    assert_int_equal(a.slots[0].node, (uint32_t)node(&c, "m1"));
    dr_cluster_give(&c, &a);
    dr_alloc_free(&a);
    /* --gpus=2 likewise */
    dr_job_req_t two = req(0, 2);
    assert_int_equal(dr_place(&c, &two, both, &BF, &a), DR_OK);
    assert_int_equal(a.slots[0].node, (uint32_t)node(&c, "m1"));
    dr_cluster_give(&c, &a);
    dr_alloc_free(&a);
    /* a policy's type order is respected: H100 first breaks h1 */
    uint16_t order[] = {(uint16_t)th, (uint16_t)tm};
    dr_place_opts_t ordered = {
        .strategy = DR_PLACE_BEST_FIT, .type_order = order, .ntype_order = 2};
    assert_int_equal(dr_place(&c, &one, both, &ordered, &b), DR_OK);
    assert_int_equal(b.slots[0].node, (uint32_t)node(&c, "h1"));
    dr_alloc_free(&b);
    dr_alloc_free(&busy);
    dr_cluster_free(&c);

    /* --gpus=10 on 8-GPU nodes: 8 on a free node and the last 2 on the node
     * with 2 idle, not on the other free node */
    parse(&c, "NodeName=n[1-3] Gpus=H100-SXM:8 Cpus=192 MemGB=2048\n");
    occupy(&c, "n3", 0, 6, &busy);
    dr_job_req_t ten = req(0, 10);
    assert_int_equal(dr_place(&c, &ten, 1, &BF, &a), DR_OK);
    assert_int_equal(a.nnodes, 2);
    int whole = 0;
    for (int i = 0; i < 2; i++)
        whole += c.nodes[node(&c, i ? "n2" : "n1")].gpus_idle == 8;
    assert_int_equal(whole, 1);
    assert_int_equal(c.nodes[node(&c, "n3")].gpus_idle, 0);
    dr_alloc_free(&a);
    dr_alloc_free(&busy);
    dr_cluster_free(&c);
}

/* A node's GPUs are taken as a run of neighbours when one is long enough. */
static void test_contiguous_gpus(void **st)
{
    (void)st;
    dr_cluster_t c;
    parse(&c, "NodeName=n1 Gpus=H100-SXM:8 Cpus=192 MemGB=2048\n");
    dr_alloc_t b0, b2, a;
    occupy(&c, "n1", 0, 1, &b0); /* GPU 0 */
    occupy(&c, "n1", 2, 1, &b2); /* GPU 2: idle runs are {1} and {3..7} */
    dr_job_req_t two = req(1, 2);
    assert_int_equal(dr_place(&c, &two, 1, &BF, &a), DR_OK);
    assert_int_equal(a.slots[0].gpu, 3);
    assert_int_equal(a.slots[1].gpu, 4);
    dr_alloc_free(&a);
    dr_alloc_free(&b0);
    dr_alloc_free(&b2);
    dr_cluster_free(&c);
}

#define SHARD_CONF                                                                                 \
    "NodeName=v1 Gpus=L40S:8 Cpus=64 MemGB=512 Shards=seg-[000-004]\n"                             \
    "NodeName=v2 Gpus=L40S:8 Cpus=64 MemGB=512 Shards=seg-[005-009],seg-000\n"                     \
    "NodeName=v[3-4] Gpus=L40S:8 Cpus=64 MemGB=512\n"

static void test_shard_config(void **st)
{
    (void)st;
    dr_cluster_t c;
    parse(&c, SHARD_CONF);
    assert_int_equal(c.nshards, 10);
    int s0 = dr_cluster_find_shard(&c, "seg-000"), s7 = dr_cluster_find_shard(&c, "seg-007");
    assert_true(s0 >= 0 && s7 >= 0);
    assert_int_equal(c.shards[s0].n, 2);
    assert_true(dr_node_has_shard(&c, (uint32_t)node(&c, "v2"), (uint32_t)s7));
    assert_false(dr_node_has_shard(&c, (uint32_t)node(&c, "v1"), (uint32_t)s7));
    /* holdings change at run time (agents report them) */
    dr_cluster_node_drop_shard(&c, (uint32_t)node(&c, "v2"), (uint32_t)s7);
    assert_false(dr_node_has_shard(&c, (uint32_t)node(&c, "v2"), (uint32_t)s7));
    assert_int_equal(dr_cluster_node_add_shard(&c, (uint32_t)node(&c, "v3"), (uint32_t)s7, NULL),
                     DR_OK);
    assert_true(dr_node_has_shard(&c, (uint32_t)node(&c, "v3"), (uint32_t)s7));
    /* copies keep them */
    dr_cluster_t d;
    assert_int_equal(dr_cluster_copy(&d, &c, NULL), DR_OK);
    assert_int_equal(dr_cluster_find_shard(&d, "seg-007"), s7);
    assert_true(dr_node_has_shard(&d, (uint32_t)node(&d, "v3"), (uint32_t)s7));
    dr_cluster_free(&d);
    dr_cluster_free(&c);
    /* Shards= belongs on NodeName lines */
    dr_err_t err;
    dr_cluster_init(&c);
    const char *bad = "Pool=p Gpus=L40S:8 MaxNodes=2 Cpus=8 MemGB=64 Shards=x\n";
    assert_int_equal(dr_config_parse(&c, NULL, "bad.conf", bad, strlen(bad), &err), DR_EINVAL);
    tu_assert_contains(err.msg, "bad.conf:1: Shards: not allowed on a Pool line");
    dr_cluster_free(&c);
}

static void load_trace(dr_workload_t *wl, const char *csv)
{
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    dr_err_t err;
    dr_workload_init(wl);
    if (dr_trace_parse(DR_TRACE_DROVER, "shards.csv", csv, strlen(csv), &o, wl, &err) != DR_OK)
        fail_msg("trace: %s", err.msg);
}

/* Tasks whose shard a node holds go there; tasks whose shard nobody holds
 * are spread round-robin, where best-fit would stack them on one node. */
static void test_shard_hits_and_round_robin(void **st)
{
    (void)st;
    dr_cluster_t c;
    parse(&c, SHARD_CONF);
    dr_workload_t wl;
    load_trace(&wl, "submit_s,duration_s,array,shard\n"
                    "0,100,0-9,seg-%3a\n"
                    "0,100,0-5,remote-%a\n");
    dr_err_t err;
    assert_int_equal(dr_workload_bind(&wl, &c, false, &err), DR_OK);
    assert_int_equal(wl.njobs, 16);
    assert_int_equal(wl.shards.n, 16);
    dr_alloc_t a[16];
    uint32_t per_node[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < wl.njobs; i++) {
        const dr_job_t *j = &wl.jobs[i];
        assert_int_equal(dr_place(&c, &j->req, 1, &BF, &a[i]), DR_OK);
        uint32_t nd = a[i].slots[0].node;
        const char *name = wl.shards.strs[j->shard - 1];
        if (strncmp(name, "seg-", 4) == 0) {
            assert_true(dr_alloc_holds_shard(&c, &a[i], j->req.shard));
        } else {
            assert_int_equal(j->req.shard, DR_SHARD_UNHELD);
            per_node[nd]++;
        }
    }
    /* six unheld tasks round-robin over v1, v2, v3 - and not v4: when the
     * cursor reaches it, it is the last fully idle node and v1 can take the
     * task (best-fit would have stacked all six on one node) */
    assert_int_equal(per_node[0], 2);
    assert_int_equal(per_node[1], 2);
    assert_int_equal(per_node[2], 2);
    assert_int_equal(per_node[3], 0);
    for (size_t i = 0; i < wl.njobs; i++)
        dr_alloc_free(&a[i]);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* Round-robin keeps the last whole node whole when a used one can take it. */
static void test_round_robin_protects_last_free_node(void **st)
{
    (void)st;
    dr_cluster_t c;
    parse(&c, "NodeName=v[1-2] Gpus=L40S:8 Cpus=64 MemGB=512\n");
    dr_alloc_t busy, a, b;
    occupy(&c, "v1", 0, 1, &busy); /* v2 is the last fully idle node */
    dr_job_req_t r = req(1, 1);
    r.shard = DR_SHARD_UNHELD;
    assert_int_equal(dr_place(&c, &r, 1, &BF, &a), DR_OK);
    assert_int_equal(a.slots[0].node, (uint32_t)node(&c, "v1"));
    assert_int_equal(dr_place(&c, &r, 1, &BF, &b), DR_OK);
    assert_int_equal(b.slots[0].node, (uint32_t)node(&c, "v1"));
    dr_alloc_free(&a);
    dr_alloc_free(&b);
    dr_alloc_free(&busy);
    dr_cluster_free(&c);
}

static void test_shard_trace_errors(void **st)
{
    (void)st;
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    dr_err_t err;
    dr_workload_t wl;
    const char *no_array = "submit_s,duration_s,shard\n0,10,seg-%a\n";
    dr_workload_init(&wl);
    assert_int_equal(
        dr_trace_parse(DR_TRACE_DROVER, "t.csv", no_array, strlen(no_array), &o, &wl, &err),
        DR_EINVAL);
    tu_assert_contains(err.msg, "t.csv:2: shard:");
    tu_assert_contains(err.msg, "needs an array range");
    dr_workload_free(&wl);
    const char *bad = "submit_s,duration_s,array,shard\n0,10,0-3,seg-%b\n";
    dr_workload_init(&wl);
    assert_int_equal(dr_trace_parse(DR_TRACE_DROVER, "t.csv", bad, strlen(bad), &o, &wl, &err),
                     DR_EINVAL);
    tu_assert_contains(err.msg, "%a, %Na");
    dr_workload_free(&wl);
    const char *ok = "submit_s,duration_s,array,shard\n0,10,8-10,v%%%2a\n";
    dr_workload_init(&wl);
    assert_int_equal(dr_trace_parse(DR_TRACE_DROVER, "t.csv", ok, strlen(ok), &o, &wl, &err),
                     DR_OK);
    assert_string_equal(wl.shards.strs[wl.jobs[0].shard - 1], "v%08");
    assert_string_equal(wl.shards.strs[wl.jobs[2].shard - 1], "v%10");
    dr_workload_free(&wl);
}

/* The simulator counts locality hits (and reports them as locality_hits). */
static void test_sim_counts_locality_hits(void **st)
{
    (void)st;
    dr_cluster_t c;
    parse(&c, SHARD_CONF);
    dr_workload_t wl;
    /* 10 tasks on held shards, 3 on a shard nobody holds, 2 with none */
    load_trace(&wl, "submit_s,duration_s,array,shard\n"
                    "0,100,0-9,seg-%3a\n"
                    "50,100,0-2,elsewhere\n"
                    "60,100,0-1,\n");
    dr_err_t err;
    assert_int_equal(dr_workload_bind(&wl, &c, false, &err), DR_OK);
    dr_sim_opts_t o;
    dr_sim_opts_default(&o);
    o.policy = "fifo";
    o.audit = true;
    dr_sim_result_t res;
    if (dr_sim_run(&c, &wl, &o, &res, &err) != DR_OK)
        fail_msg("sim: %s", err.msg);
    assert_int_equal(res.stats.shard_starts, 13);
    assert_int_equal(res.stats.locality_hits, 10);
    dr_sim_result_free(&res);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* The slowdown hook: off by default; with it a 2-node job on one leaf runs
 * at the leaf factor, a measured class at its own rate. */
static void test_span_slowdown(void **st)
{
    (void)st;
    dr_span_slowdown_t s;
    dr_err_t err;
    assert_int_equal(dr_span_slowdown_parse("default", &s, &err), DR_OK);
    assert_true(s.factor[DR_LOC_LEAF] == 0.9 && s.factor[DR_LOC_NVLINK] == 1);
    assert_int_equal(dr_span_slowdown_parse("leaf=0.5,network=0.25", &s, &err), DR_OK);
    assert_true(s.factor[DR_LOC_LEAF] == 0.5 && s.factor[DR_LOC_TREE] == 0.8);
    assert_int_equal(dr_span_slowdown_parse("leaf=1.5", &s, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "not a factor in (0, 1]");
    assert_int_equal(dr_span_slowdown_parse("rack=0.5", &s, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "'rack'");

    dr_cluster_t c;
    parse(&c, TREE_CONF);
    dr_workload_t wl;
    load_trace(&wl, "submit_s,duration_s,nodes,gpus_per_node,time_limit_s\n"
                    "0,100,2,8,0\n"
                    "0,100,1,8,0\n");
    assert_int_equal(dr_workload_bind(&wl, &c, false, &err), DR_OK);
    dr_sim_opts_t o;
    dr_sim_opts_default(&o);
    o.policy = "fifo";
    dr_sim_result_t plain, slow;
    assert_int_equal(dr_sim_run(&c, &wl, &o, &plain, &err), DR_OK);
    assert_int_equal(dr_span_slowdown_parse("leaf=0.5", &s, &err), DR_OK);
    o.span_slowdown = &s;
    assert_int_equal(dr_sim_run(&c, &wl, &o, &slow, &err), DR_OK);
    assert_int_equal(plain.jobs[0].end, dr_time_from_s(100));
    assert_int_equal(slow.jobs[0].end, dr_time_from_s(200)); /* the gang, on one leaf */
    assert_int_equal(slow.jobs[1].end, dr_time_from_s(100)); /* one node: no slowdown */
    /* the starts counted by locality: the gang on one leaf, the 8-GPU job on
     * one node; leaves_spanned counts the gang's one leaf */
    const dr_sched_stats_t *ss = &slow.stats;
    assert_int_equal(ss->starts, 2);
    assert_int_equal(ss->starts_by_locality[DR_LOC_LEAF], 1);
    assert_int_equal(ss->starts_by_locality[DR_LOC_NODE], 1);
    assert_int_equal(ss->starts_by_locality[DR_LOC_NVLINK] + ss->starts_by_locality[DR_LOC_TREE] +
                         ss->starts_by_locality[DR_LOC_NETWORK],
                     0);
    assert_int_equal(ss->leaves_spanned, 1);
    /* class 0 marked as measured: no slowdown */
    uint8_t measured[1] = {1};
    s.measured = measured;
    s.nmeasured = 1;
    dr_sim_result_t meas;
    assert_int_equal(dr_sim_run(&c, &wl, &o, &meas, &err), DR_OK);
    assert_int_equal(meas.jobs[0].end, dr_time_from_s(100));
    dr_sim_result_free(&plain);
    dr_sim_result_free(&slow);
    dr_sim_result_free(&meas);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* Randomised: gangs and --gpus=N on a three-level tree with NVLink racks,
 * placed and released at random; the ledger audit must hold, every
 * allocation's locality must match its nodes, and a refused gang must
 * really not fit (brute force). */
static void test_random_topology(void **st)
{
    (void)st;
    dr_cluster_t c;
    parse(&c, "NodeName=r[01-16] Gpus=gb200:4 Cpus=72 MemGB=480 NvlinkDomain=rack1 Switch=t1\n"
              "NodeName=s[01-16] Gpus=gb200:4 Cpus=72 MemGB=480 NvlinkDomain=rack2 Switch=t2\n"
              "NodeName=p[01-24] Gpus=gb200:4 Cpus=72 MemGB=480 Switch=t3\n"
              "NodeName=q[01-24] Gpus=gb200:4 Cpus=72 MemGB=480 Switch=t4\n"
              "NodeName=z[01-04] Gpus=gb200:4 Cpus=72 MemGB=480\n"
              "SwitchName=s12 Switches=t[1-2]\n"
              "SwitchName=s34 Switches=t[3-4]\n"
              "SwitchName=core Switches=s12,s34\n");
    dr_rng_t rng;
    dr_rng_seed(&rng, 11);
    enum { CAP = 512 };
    dr_alloc_t *live = calloc(CAP, sizeof *live);
    size_t nlive = 0;
    for (int step = 0; step < 6000; step++) {
        if (nlive && (dr_rng_below(&rng, 2) == 0 || nlive == CAP)) {
            size_t k = dr_rng_below(&rng, nlive);
            dr_cluster_give(&c, &live[k]);
            dr_alloc_free(&live[k]);
            live[k] = live[--nlive];
            continue;
        }
        dr_job_req_t r = dr_rng_below(&rng, 2) ? req((uint32_t)(1 + dr_rng_below(&rng, 6)),
                                                     (uint32_t)(1 + dr_rng_below(&rng, 4)))
                                               : req(0, (uint32_t)(1 + dr_rng_below(&rng, 24)));
        if (dr_rng_below(&rng, 4) == 0)
            r.cpu_milli_per_node = 60000;
        dr_alloc_t *a = &live[nlive];
        int rc = dr_place(&c, &r, 1, &BF, a);
        if (rc == DR_OK) {
            /* locality agrees with the nodes */
            bool one_nvl = true, one_leaf = true;
            int32_t nvl = c.nodes[a->slots[0].node].nvl_domain;
            int32_t leaf = c.nodes[a->slots[0].node].switch_id;
            for (uint32_t i = 0; i < a->nslots; i++) {
                one_nvl &= nvl != DR_NONE && c.nodes[a->slots[i].node].nvl_domain == nvl;
                one_leaf &= leaf != DR_NONE && c.nodes[a->slots[i].node].switch_id == leaf;
            }
            if (a->nnodes == 1)
                assert_int_equal(a->locality, DR_LOC_NODE);
            else if (one_nvl)
                assert_int_equal(a->locality, DR_LOC_NVLINK);
            else if (one_leaf)
                assert_int_equal(a->locality, DR_LOC_LEAF);
            else
                assert_true(a->locality == DR_LOC_TREE || a->locality == DR_LOC_NETWORK);
            uint64_t milli = dr_alloc_milli(a);
            uint64_t want = r.nodes ? (uint64_t)r.nodes * r.gpus_per_node * 1000
                                    : (uint64_t)r.gpus_per_node * 1000;
            assert_int_equal(milli, want);
            nlive++;
        } else if (r.nodes > 0) {
            uint32_t fit = 0;
            dr_job_req_t one = r;
            one.nodes = 1;
            for (size_t i = 0; i < c.nnodes; i++)
                fit += dr_node_fits(&c, &c.nodes[i], &one);
            if (fit >= r.nodes)
                fail_msg("step %d: %ux%u refused but %u nodes fit", step, r.nodes, r.gpus_per_node,
                         fit);
        }
        if (step % 500 == 0) {
            tu_audit(&c, live, nlive, step);
        }
    }
    tu_give_all(&c, live, nlive);
    free(live);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvlink_domain_preferred),
        cmocka_unit_test(test_single_node_locality),
        cmocka_unit_test(test_fewest_nodes_under_one_leaf),
        cmocka_unit_test(test_lowest_common_switch),
        cmocka_unit_test(test_no_topology_is_network),
        cmocka_unit_test(test_whole_node_protection),
        cmocka_unit_test(test_contiguous_gpus),
        cmocka_unit_test(test_shard_config),
        cmocka_unit_test(test_shard_hits_and_round_robin),
        cmocka_unit_test(test_round_robin_protects_last_free_node),
        cmocka_unit_test(test_shard_trace_errors),
        cmocka_unit_test(test_sim_counts_locality_hits),
        cmocka_unit_test(test_span_slowdown),
        cmocka_unit_test(test_random_topology),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
