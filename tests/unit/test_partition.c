/* test_partition.c - partitions, node features and --constraint
 * (partition.h): a site's slurm.conf read with its notes, the restriction
 * a job gets from -p and -C, placement and "could it ever fit" honouring
 * it under every strategy, and the job-field vocabulary's MaxTime rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/config.h"
#include "drover/jobspec.h"
#include "drover/partition.h"
#include "drover/placement.h"
#include "drover/util.h"
#include "testutil.h"

#define S(x) ((dr_time_t)(x)*DR_NSEC_PER_SEC)

static bool has_note(const dr_strvec_t *n, const char *want)
{
    for (size_t i = 0; i < n->n; i++)
        if (strstr(n->v[i], want))
            return true;
    return false;
}

static int load_site(dr_cluster_t *c, dr_strvec_t *notes)
{
    dr_cluster_init(c);
    dr_err_t err = {0};
    int rc =
        dr_config_load_notes(c, NULL, tu_src_path("tests/data/slurm/site-slurm.conf"), notes, &err);
    if (rc != DR_OK)
        fail_msg("site-slurm.conf: %s", err.msg);
    return rc;
}

static const dr_node_t *node(const dr_cluster_t *c, const char *name)
{
    int i = dr_cluster_find_node(c, name);
    assert_true(i >= 0);
    return &c->nodes[i];
}

static void test_site_slurm_conf(void **state)
{
    (void)state;
    dr_cluster_t c;
    dr_strvec_t notes = {0};
    load_site(&c, &notes);
    assert_int_equal(c.nnodes, 11);
    /* Gres types mapped to the catalog: h100, a100_80g (the product matcher), mi300x */
    assert_int_equal(c.ntypes, 3);
    assert_string_equal(c.types[node(&c, "h100-01")->type].name, "H100-SXM-80GB");
    assert_string_equal(c.types[node(&c, "a100-02")->type].name, "A100-80GB-SXM");
    assert_string_equal(c.types[node(&c, "mi300-01")->type].name, "MI300X-192GB");
    assert_int_equal(dr_cluster_find_type(&c, "a100_80g"), node(&c, "a100-01")->type);
    assert_int_equal(node(&c, "h100-03")->ngpus, 8);
    assert_int_equal(node(&c, "a100-01")->ngpus, 4);
    /* CPUs= wins; else Sockets x CoresPerSocket x ThreadsPerCore (2 from DEFAULT) */
    assert_int_equal(node(&c, "h100-01")->cpu_milli, 224000);
    assert_int_equal(node(&c, "a100-01")->cpu_milli, 128000);
    assert_int_equal(node(&c, "h100-01")->mem_mb, 2000000); /* RealMemory is MB */
    assert_int_equal(node(&c, "cpu-003")->ngpus, 0);
    assert_int_equal(node(&c, "cpu-003")->state, DR_NODE_DRAIN);
    assert_int_equal(node(&c, "mi300-01")->state, DR_NODE_UP); /* UNKNOWN from DEFAULT */
    int ib = dr_cluster_find_feature(&c, "ib");
    assert_true(ib >= 0);
    assert_true(
        dr_node_has_feature(&c, (uint32_t)dr_cluster_find_node(&c, "mi300-01"), (uint32_t)ib));
    assert_false(
        dr_node_has_feature(&c, (uint32_t)dr_cluster_find_node(&c, "cpu-001"), (uint32_t)ib));
    /* partitions, with PartitionName=DEFAULT's MaxTime and State */
    assert_int_equal(dr_cluster_npartitions(&c), 6);
    const dr_partition_t *gpu =
        dr_cluster_partition(&c, (size_t)dr_cluster_find_partition(&c, "gpu"));
    assert_true(gpu->is_default);
    assert_int_equal(gpu->max_time, S(2 * 86400));
    assert_int_equal(gpu->default_time, S(4 * 3600));
    assert_int_equal(dr_nodeset_count(&c, gpu->nodeset), 7);
    const dr_partition_t *dbg =
        dr_cluster_partition(&c, (size_t)dr_cluster_find_partition(&c, "debug"));
    assert_int_equal(dbg->max_time, S(30 * 60));              /* a bare number is minutes */
    assert_int_equal(dr_nodeset_count(&c, dbg->nodeset), 11); /* Nodes=ALL */
    const dr_partition_t *cpu =
        dr_cluster_partition(&c, (size_t)dr_cluster_find_partition(&c, "cpu"));
    assert_int_equal(cpu->max_time, 0); /* INFINITE */
    assert_int_equal(dr_cluster_partition(&c, (size_t)dr_cluster_find_partition(&c, "old"))->state,
                     DR_PART_INACTIVE);
    /* what is not acted on is said, with its line */
    assert_true(has_note(&notes, "site-slurm.conf:4: ClusterName: ignored"));
    assert_true(has_note(&notes, "site-slurm.conf:32: SelectType: ignored"));
    assert_true(has_note(&notes, ": Weight: ignored"));
    assert_true(has_note(&notes, "Gres: 'nvme:1' ignored (only GPUs are scheduled)"));
    assert_true(has_note(&notes, ": PriorityTier: ignored"));
    assert_true(has_note(&notes, ": Boards: ignored (CPUs= gives the node's CPUs)"));
    assert_false(has_note(&notes, "RealMemory"));
    assert_false(has_note(&notes, "Features"));
    dr_strvec_free(&notes);
    dr_cluster_free(&c);
}

static void expect_conf_err(const char *conf, const char *want)
{
    dr_cluster_t c;
    dr_cluster_init(&c);
    dr_err_t err = {0};
    dr_strvec_t notes = {0};
    int rc = dr_config_parse_notes(&c, NULL, "slurm.conf", conf, strlen(conf), &notes, &err);
    if (rc == DR_OK)
        fail_msg("--- accepted:\n%s--- want: %s", conf, want);
    tu_assert_contains(err.msg, want);
    dr_strvec_free(&notes);
    dr_cluster_free(&c);
}

static void test_slurm_conf_errors(void **state)
{
    (void)state;
    expect_conf_err("NodeName=n1 CPUs=8 RealMemory=1000 Gres=gpu:h10x:8\n",
                    "slurm.conf:1: Gres: unknown GPU type 'h10x'");
    expect_conf_err("NodeName=n1 CPUs=8 RealMemory=1000 Gres=gpu:h100:4,gpu:a100:4\n",
                    "slurm.conf:1: Gres: GPUs of two types ('H100-SXM-80GB' and 'A100-80GB-SXM')");
    expect_conf_err("NodeName=n1 CPUs=8 RealMemory=1000 Gres=gpu:h100:many\n",
                    "slurm.conf:1: Gres: 'gpu:h100:many': the GPU count must be a whole number");
    expect_conf_err("Include /etc/slurm/nodes.conf\nNodeName=n1 CPUs=8 RealMemory=1000\n",
                    "slurm.conf:1: Include: not supported");
    /* drover's own keys stay strict; a misspelt Slurm key is not a Slurm key */
    expect_conf_err("ClusterNmae=x\nNodeName=n1 CPUs=8 RealMemory=1000\n",
                    "slurm.conf:1: ClusterNmae: unknown line kind");
    expect_conf_err("NodeName=n1 CPUs=8 RealMemory=1000 Wieght=3\n",
                    "slurm.conf:1: Wieght: unknown key");
    expect_conf_err("NodeName=n1 CPUs=8 RealMemory=1000 MemGB=1\n",
                    "RealMemory: give RealMemory or MemGB, not both");
    expect_conf_err("NodeName=n1 RealMemory=1000\n", "NodeName: Cpus= is missing");
    expect_conf_err("NodeName=n1 CPUs=8 RealMemory=1000\nPartitionName=p Nodes=n[1-2]\n",
                    "slurm.conf:2: Nodes: unknown node 'n2'");
    expect_conf_err("NodeName=n1 CPUs=8 RealMemory=1000\nPartitionName=a Nodes=n1 Default=YES\n"
                    "PartitionName=b Nodes=n1 Default=YES\n",
                    "slurm.conf:3: Default: partition 'a' (line 2) is already the default");
    expect_conf_err("NodeName=n1 CPUs=8 RealMemory=1000\nPartitionName=a MaxTime=soon\n",
                    "slurm.conf:2: MaxTime: 'soon' is not a time limit");
    expect_conf_err("NodeName=n1 CPUs=8 RealMemory=1000\nPartitionName=a State=OPEN\n",
                    "slurm.conf:2: State: 'OPEN' is not UP, DOWN, DRAIN or INACTIVE");
    expect_conf_err("NodeName=n1 CPUs=8 RealMemory=1000 Features=ib&x\n",
                    "Features: feature 'ib&x' may not contain");
    expect_conf_err(
        "NodeName=n1 CPUs=8 RealMemory=1000\nPartitionName=a\nPartitionName=a\n",
        "slurm.conf:3: PartitionName: partition 'a' is defined twice (first on line 2)");

    /* untyped GPUs: a type "gpu" of unknown figures, said in a note */
    const char *conf = "NodeName=DEFAULT CPUs=16 RealMemory=64000\nNodeName=u[1-2] Gres=gpu:4\n"
                       "PartitionName=all Nodes=ALL Default=YES\n";
    dr_cluster_t c;
    dr_cluster_init(&c);
    dr_strvec_t notes = {0};
    dr_err_t err = {0};
    assert_int_equal(
        dr_config_parse_notes(&c, NULL, "slurm.conf", conf, strlen(conf), &notes, &err), DR_OK);
    assert_int_equal(c.nnodes, 2);
    assert_string_equal(c.types[0].name, "gpu");
    assert_int_equal(c.nodes[1].ngpus, 4);
    assert_true(has_note(&notes, "slurm.conf:2: Gres: 'gpu:4' names no GPU type"));
    /* a partition of every node is no restriction at all */
    dr_job_req_t r = {.nodes = 1, .gpus_per_node = 1, .gpu_milli = 1000};
    dr_restrict_t out;
    assert_int_equal(dr_cluster_restrict(&c, NULL, NULL, &r, &out, &err), DR_OK);
    assert_int_equal(out.nodeset, 0);
    dr_strvec_free(&notes);
    dr_cluster_free(&c);
}

static void expect_restrict_err(dr_cluster_t *c, const char *p, const char *cons, uint32_t nodes,
                                const char *want)
{
    dr_job_req_t r = {.nodes = nodes, .gpus_per_node = 1, .gpu_milli = 1000};
    dr_restrict_t out;
    dr_err_t err = {0};
    assert_int_not_equal(dr_cluster_restrict(c, p, cons, &r, &out, &err), DR_OK);
    tu_assert_contains(err.msg, want);
}

static dr_restrict_t restrict_ok(dr_cluster_t *c, const char *p, const char *cons, uint32_t nodes,
                                 uint32_t gpus)
{
    dr_job_req_t r = {.nodes = nodes, .gpus_per_node = gpus, .gpu_milli = 1000};
    dr_restrict_t out;
    dr_err_t err = {0};
    if (dr_cluster_restrict(c, p, cons, &r, &out, &err) != DR_OK)
        fail_msg("-p '%s' -C '%s': %s", p ? p : "", cons ? cons : "", err.msg);
    return out;
}

/* the node names of a set, "a,b,c" */
static const char *set_names(const dr_cluster_t *c, uint32_t set)
{
    static char buf[512];
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->nnodes; i++)
        if (dr_nodeset_has(c, set, (uint32_t)i))
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? "," : "", c->nodes[i].name);
    return buf;
}

static void test_restrict(void **state)
{
    (void)state;
    dr_cluster_t c;
    dr_strvec_t notes = {0};
    load_site(&c, &notes);
    /* no -p: the default partition, its DefaultTime and MaxTime */
    dr_restrict_t r = restrict_ok(&c, NULL, NULL, 1, 1);
    assert_string_equal(set_names(&c, r.nodeset),
                        "h100-01,h100-02,h100-03,h100-04,a100-01,a100-02,mi300-01");
    assert_int_equal(r.max_time, S(2 * 86400));
    assert_int_equal(r.default_time, S(4 * 3600));
    /* a union of partitions; the smallest MaxTime */
    r = restrict_ok(&c, "hopper,amd", NULL, 1, 1);
    assert_string_equal(set_names(&c, r.nodeset), "h100-01,h100-02,h100-03,h100-04,mi300-01");
    assert_int_equal(r.max_time, S(86400));
    /* features and GPU types together: a node set */
    r = restrict_ok(&c, "debug", "ib&nvme", 1, 1);
    assert_string_equal(set_names(&c, r.nodeset), "h100-01,h100-02,h100-03,h100-04");
    assert_int_equal(r.types, 1ULL << node(&c, "h100-01")->type);
    r = restrict_ok(&c, "debug", "(ampere|rocm),ib", 1, 1);
    assert_string_equal(set_names(&c, r.nodeset), "a100-01,a100-02,mi300-01");
    r = restrict_ok(&c, "cpu", "cpu", 1, 0);
    assert_string_equal(set_names(&c, r.nodeset), "cpu-001,cpu-002,cpu-003,cpu-004");
    /* GPU types alone: a type mask over the partition's nodes */
    r = restrict_ok(&c, "debug", "h100|MI300X", 2, 8);
    assert_int_equal(r.nodeset, 0); /* debug is every node */
    assert_int_equal(r.types,
                     (1ULL << node(&c, "h100-01")->type) | (1ULL << node(&c, "mi300-01")->type));
    r = restrict_ok(&c, "debug", "[h100|a100_80g]", 2, 4); /* a gang is of one type anyway */
    assert_int_equal(r.types,
                     (1ULL << node(&c, "h100-01")->type) | (1ULL << node(&c, "a100-01")->type));
    /* a CPU-only job with a type constraint gets the nodes, not a mask */
    r = restrict_ok(&c, "debug", "mi300x", 1, 0);
    assert_string_equal(set_names(&c, r.nodeset), "mi300-01");

    expect_restrict_err(&c, "nope", NULL, 1,
                        "partition: unknown partition 'nope' (known: gpu, hopper, amd, cpu, debug, "
                        "old)");
    expect_restrict_err(&c, "gpu,", NULL, 1, "partition: unknown partition ''");
    expect_restrict_err(&c, "old", NULL, 1, "partition: 'old' is INACTIVE (it takes no new jobs)");
    expect_restrict_err(&c, NULL, "infiniband", 1,
                        "constraint: unknown feature 'infiniband' (known: ib, nvme, hopper, "
                        "ampere, rocm, cpu; GPU types: H100-SXM-80GB");
    expect_restrict_err(&c, "cpu", "h100", 1, "constraint: no node of partition 'cpu' has 'h100'");
    expect_restrict_err(&c, NULL, "ib*2", 2, "constraint: counts ('ib*N') are not supported");
    expect_restrict_err(&c, NULL, "!ib", 1, "constraint: '!' (not) is not supported");
    expect_restrict_err(&c, NULL, "ib&", 1, "constraint: the expression ends early");
    expect_restrict_err(&c, NULL, "(ib", 1, "constraint: ')' is expected");
    expect_restrict_err(&c, NULL, "[ib&nvme]", 1, "'[...]' takes names joined by '|'");
    expect_restrict_err(&c, NULL, "[ampere|rocm]", 2,
                        "'[a|b]' (every node with the same one) is supported for GPU types and "
                        "one-node jobs only");
    restrict_ok(&c, NULL, "[ampere|rocm]", 1, 1); /* one node: "the same one" holds */
    dr_strvec_free(&notes);
    dr_cluster_free(&c);

    /* a cluster without partitions: -p is not applied; -C still is */
    tu_cluster(&c, "NodeName=a[1-2] Gpus=A100:4 Cpus=32 MemGB=256 Features=ib\n"
                   "NodeName=h1 Gpus=H100:8 Cpus=64 MemGB=512\n");
    r = restrict_ok(&c, "gpu", NULL, 1, 1);
    assert_int_equal(r.nodeset, 0);
    r = restrict_ok(&c, NULL, "h100", 1, 1);
    assert_int_equal(r.nodeset, 0);
    assert_int_equal(r.types, 1ULL << dr_cluster_find_type(&c, "H100"));
    r = restrict_ok(&c, NULL, "ib", 1, 1);
    assert_string_equal(set_names(&c, r.nodeset), "a1,a2");
    assert_int_equal(dr_constraint_check("a&(b|[c|d])", NULL), DR_OK);
    assert_int_not_equal(dr_constraint_check("a&&b", NULL), DR_OK);
    dr_cluster_free(&c);
}

/* Every strategy places only on the set's nodes; a full set is ENOSPC even
 * with the rest of the cluster idle; what could ever fit counts the set. */
static void test_place_in_set(void **state)
{
    (void)state;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=n[1-6] Gpus=H100:8 Cpus=64 MemGB=512 Switch=leaf1\n"
                   "NodeName=cpu[1-2] Cpus=64 MemGB=512\n"
                   "SwitchName=leaf1 LinkGbps=400\n"
                   "PartitionName=p Nodes=n[4-5],cpu2\n");
    dr_job_req_t r = {.nodes = 1, .gpus_per_node = 1, .gpu_milli = 1000};
    dr_restrict_t lim;
    assert_int_equal(dr_cluster_restrict(&c, "p", NULL, &r, &lim, NULL), DR_OK);
    assert_string_equal(set_names(&c, lim.nodeset), "n4,n5,cpu2");
    dr_place_strategy_t st[] = {DR_PLACE_FIRST_FIT, DR_PLACE_BEST_FIT, DR_PLACE_FGD, DR_PLACE_PACK};
    for (size_t k = 0; k < 4; k++) {
        dr_cluster_t w;
        assert_int_equal(dr_cluster_copy(&w, &c, NULL), DR_OK); /* sets travel with a copy */
        dr_place_opts_t o = {.strategy = st[k]};
        dr_alloc_t a[20];
        size_t n = 0;
        dr_job_req_t one = {.nodes = 1,
                            .gpus_per_node = 1,
                            .gpu_milli = 1000,
                            .cpu_milli_per_node = 1000,
                            .nodeset = lim.nodeset};
        while (n < 20 && dr_place(&w, &one, ~0ULL, &o, &a[n]) == DR_OK) {
            const char *nm = w.nodes[a[n].slots[0].node].name;
            if (strcmp(nm, "n4") != 0 && strcmp(nm, "n5") != 0)
                fail_msg("%s placed on %s", dr_place_strategy_name(st[k]), nm);
            n++;
        }
        assert_int_equal(n, 16); /* 2 nodes x 8 GPUs, then full */
        for (size_t i = 0; i < n; i++) {
            dr_cluster_give(&w, &a[i]);
            dr_alloc_free(&a[i]);
        }
        /* a gang of the set's two nodes, topology-aware or not */
        dr_job_req_t gang = {
            .nodes = 2, .gpus_per_node = 8, .gpu_milli = 1000, .nodeset = lim.nodeset};
        assert_int_equal(dr_place(&w, &gang, ~0ULL, &o, &a[0]), DR_OK);
        assert_string_equal(w.nodes[a[0].slots[0].node].name, "n4");
        assert_string_equal(w.nodes[a[0].slots[8].node].name, "n5");
        dr_cluster_give(&w, &a[0]);
        dr_alloc_free(&a[0]);
        /* --gpus=12 spreads over the set only */
        dr_job_req_t flex = {
            .nodes = 0, .gpus_per_node = 12, .gpu_milli = 1000, .nodeset = lim.nodeset};
        assert_int_equal(dr_place(&w, &flex, ~0ULL, &o, &a[0]), DR_OK);
        for (uint32_t i = 0; i < a[0].nslots; i++)
            assert_true(dr_nodeset_has(&w, lim.nodeset, a[0].slots[i].node));
        dr_cluster_give(&w, &a[0]);
        dr_alloc_free(&a[0]);
        /* a CPU-only job: the set's CPU node or a GPU node of the set */
        dr_job_req_t cpu = {.nodes = 1,
                            .gpus_per_node = 0,
                            .gpu_milli = 1000,
                            .cpu_milli_per_node = 64000,
                            .nodeset = lim.nodeset};
        for (int i = 0; i < 3; i++) {
            assert_int_equal(dr_place(&w, &cpu, ~0ULL, &o, &a[i]), DR_OK);
            assert_true(dr_nodeset_has(&w, lim.nodeset, a[i].slots[0].node));
        }
        assert_int_equal(dr_place(&w, &cpu, ~0ULL, &o, &a[3]), DR_ENOSPC);
        for (int i = 0; i < 3; i++) {
            dr_cluster_give(&w, &a[i]);
            dr_alloc_free(&a[i]);
        }
        dr_cluster_free(&w);
    }
    /* could it ever fit: 3 nodes in a partition of 2 GPU nodes cannot */
    dr_job_req_t three = {
        .nodes = 3, .gpus_per_node = 8, .gpu_milli = 1000, .nodeset = lim.nodeset};
    dr_err_t err = {0};
    assert_int_equal(dr_cluster_req_possible(&c, &three, &err), DR_ENOSPC);
    three.nodeset = 0;
    assert_int_equal(dr_cluster_req_possible(&c, &three, NULL), DR_OK);
    dr_cluster_free(&c);
}

static int to_job(dr_cluster_t *c, dr_job_t *j, dr_err_t *err, const char *const *kv)
{
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    s.argv = calloc(2, sizeof *s.argv);
    assert_non_null(s.argv);
    s.argv[0] = dr_strdup("true");
    s.argc = 1;
    for (; kv && kv[0]; kv += 2)
        if (dr_jobspec_set(&s, kv[0], kv[1], err) != DR_OK)
            fail_msg("%s=%s: %s", kv[0], kv[1], err->msg);
    dr_job_init(j);
    memset(err, 0, sizeof *err);
    int rc = dr_jobspec_to_job(&s, c, S(1000), j, err);
    dr_jobspec_free(&s);
    return rc;
}

static void test_jobspec_partition(void **state)
{
    (void)state;
    dr_cluster_t c;
    dr_strvec_t notes = {0};
    load_site(&c, &notes);
    dr_job_t j;
    dr_err_t err;
    /* no --time in the default partition: its DefaultTime */
    const char *a[] = {"gpus-per-node", "2", NULL};
    assert_int_equal(to_job(&c, &j, &err, a), DR_OK);
    assert_int_equal(j.time_limit, S(4 * 3600));
    assert_true(j.req.nodeset != 0);
    assert_int_equal(dr_nodeset_count(&c, j.req.nodeset), 7);
    /* MaxTime refuses a longer --time, naming the field */
    const char *b[] = {"partition", "hopper", "time", "2-00:00:00", "gpus-per-node", "8", NULL};
    assert_int_equal(to_job(&c, &j, &err, b), DR_EINVAL);
    assert_string_equal(err.msg, "time_limit: 2-00:00:00 is more than the job's partition allows "
                                 "(MaxTime=1-00:00:00)");
    const char *b2[] = {"partition", "hopper", "time", "12:00:00", "gpus-per-node", "8", NULL};
    assert_int_equal(to_job(&c, &j, &err, b2), DR_OK);
    assert_int_equal(j.time_limit, S(12 * 3600));
    assert_int_equal(j.req.types, 1ULL << node(&c, "h100-01")->type);
    /* a GPU type outside the partition */
    const char *d[] = {"partition", "hopper", "gpus-per-node", "4", "gpu-type", "a100", NULL};
    assert_int_equal(to_job(&c, &j, &err, d), DR_EINVAL);
    tu_assert_contains(err.msg, "gpu_type: 'a100' is not among the GPUs of the job's partition");
    /* more nodes than the partition has: never fits, said at submit */
    const char *e[] = {"partition", "amd", "nodes", "2", "gpus-per-node", "8", NULL};
    assert_int_equal(to_job(&c, &j, &err, e), DR_ENOSPC);
    tu_assert_contains(err.msg, "the job's partition (and constraint) has 1 such nodes");
    /* -C of GPU types: the mask, for the typed policies */
    const char *f[] = {"constraint", "mi300x|a100_80g", "gpus-per-node", "4", NULL};
    assert_int_equal(to_job(&c, &j, &err, f), DR_OK);
    assert_int_equal(j.req.types,
                     (1ULL << node(&c, "mi300-01")->type) | (1ULL << node(&c, "a100-01")->type));
    /* a syntax error is caught before the cluster is asked */
    const char *g[] = {"constraint", "ib||nvme", NULL};
    assert_int_not_equal(to_job(&c, &j, &err, g), DR_OK);
    tu_assert_contains(err.msg, "constraint: a feature name is expected at position 4");
    dr_strvec_free(&notes);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_site_slurm_conf),   cmocka_unit_test(test_slurm_conf_errors),
        cmocka_unit_test(test_restrict),          cmocka_unit_test(test_place_in_set),
        cmocka_unit_test(test_jobspec_partition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
