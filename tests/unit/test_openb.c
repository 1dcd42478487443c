/* test_openb.c - the openb packing benchmark: arrival sequences (determinism,
 * the 130% stop rule, clone names, the removal path), feasibility (CPU-only
 * pods strand GPUs, k-GPU pods need idle GPUs, gpu_spec restricts), the
 * placement CSV, the curve on a cluster with known numbers, BestFit's and
 * FGD's choices where the answer is worked out by hand, the ledger audit
 * under every policy, the file readers, and dr_place's packing strategies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/config.h"
#include "drover/openb.h"
#include "drover/pack.h"
#include "drover/placement.h"
#include "drover/util.h"
#include "drover/workload.h"
#include "testutil.h"

static void add_type(dr_cluster_t *c, const char *name)
{
    dr_gpu_spec_t s;
    dr_gpu_spec_unknown(&s, name);
    assert_true(dr_cluster_add_type(c, &s, NULL) >= 0);
    dr_gpu_spec_free(&s);
}

/* types X (0) and Y (1); nodes given as "name:type:gpus:cpu_cores:mem_gib" */
static void build(dr_cluster_t *c, const char *const *nodes, size_t n)
{
    dr_cluster_init(c);
    add_type(c, "X");
    add_type(c, "Y");
    for (size_t i = 0; i < n; i++) {
        char name[32];
        int type, gpus, cpu, mem;
        assert_int_equal(sscanf(nodes[i], "%31[^:]:%d:%d:%d:%d", name, &type, &gpus, &cpu, &mem),
                         5);
        assert_true(dr_cluster_add_node(c, name, type, (uint16_t)gpus, (uint32_t)cpu * 1000,
                                        (uint64_t)mem * 1024, NULL) >= 0);
    }
    assert_int_equal(dr_cluster_finalize(c, NULL), DR_OK);
}

static void parse_seq(dr_openb_pods_t *p, const char *text)
{
    dr_err_t err = {0};
    dr_openb_pods_init(p);
    if (dr_openb_sequence_parse(p, "t.csv", text, strlen(text), &err) != DR_OK)
        fail_msg("sequence: %s", err.msg);
}

static void parse_trace(dr_openb_pods_t *p, const char *text)
{
    dr_err_t err = {0};
    dr_openb_pods_init(p);
    if (dr_openb_pods_parse(p, "pods.csv", text, strlen(text), &err) != DR_OK)
        fail_msg("pods: %s", err.msg);
}

static const char *pname(const dr_openb_pods_t *p, size_t i)
{
    return dr_strtab_get(&p->names, p->v[i].name);
}

static const char *bname(const dr_openb_pods_t *p, size_t i)
{
    return dr_strtab_get(&p->names, p->v[i].base);
}

static char *replay_csv(dr_cluster_t *c, const dr_openb_pods_t *seq, const char *policy,
                        dr_openb_result_t *res)
{
    dr_err_t err = {0};
    dr_openb_opts_t o = {.policy = policy};
    if (dr_openb_replay(c, seq, &o, res, &err) != DR_OK)
        fail_msg("replay: %s", err.msg);
    char *csv;
    assert_int_equal(dr_openb_placements_format(res, seq, c, &csv, NULL, &err), DR_OK);
    return csv;
}

/* --- sequences --- */

static const char *TRACE = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n"
                           "p-c,1000,1024,1,1000,,LS\n"
                           "p-a,1000,1024,1,1000,,LS\n"
                           "p-e,1000,1024,1,1000,,BE\n"
                           "p-b,1000,1024,1,1000,,LS\n"
                           "p-d,1000,1024,1,1000,,LS\n";

static void test_inflate_exact(void **st)
{
    (void)st;
    dr_openb_pods_t tr, seq, again;
    parse_trace(&tr, TRACE);
    dr_openb_pods_init(&seq);
    dr_openb_pods_init(&again);
    /* 10 GPUs: target 13000 milli; 5 one-GPU pods give 5000, so exactly 8
     * clones, stopping when one more would pass 13000 */
    assert_int_equal(dr_openb_sequence_generate(&seq, &tr, 10000, 1.3, 42, NULL), DR_OK);
    assert_int_equal(seq.n, 13);
    assert_int_equal(dr_openb_pods_demand(&seq), 13000);
    /* the first five are the trace, shuffled, each once */
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(strncmp(pname(&seq, i), "p-", 2), 0);
        assert_null(strstr(pname(&seq, i), "-tuned-"));
        assert_string_equal(pname(&seq, i), bname(&seq, i));
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(pname(&seq, i), pname(&seq, j));
    }
    /* then the clones, <base>-tuned-<i> in order */
    for (size_t i = 5; i < 13; i++) {
        char want[64];
        snprintf(want, sizeof want, "%s-tuned-%zu", bname(&seq, i), i - 5);
        assert_string_equal(pname(&seq, i), want);
        assert_int_equal(seq.v[i].num_gpu, 1);
        assert_int_equal(seq.v[i].gpu_milli, 1000);
    }
    /* deterministic for a seed */
    assert_int_equal(dr_openb_sequence_generate(&again, &tr, 10000, 1.3, 42, NULL), DR_OK);
    assert_int_equal(again.n, seq.n);
    for (size_t i = 0; i < seq.n; i++)
        assert_string_equal(pname(&seq, i), pname(&again, i));
    /* another seed, another order (the first 5 or the clones' bases) */
    dr_openb_pods_free(&again);
    dr_openb_pods_init(&again);
    assert_int_equal(dr_openb_sequence_generate(&again, &tr, 10000, 1.3, 7, NULL), DR_OK);
    bool differs = false;
    for (size_t i = 0; i < seq.n && !differs; i++)
        differs = strcmp(pname(&seq, i), pname(&again, i)) != 0;
    assert_true(differs);
    dr_openb_pods_free(&seq);
    dr_openb_pods_free(&again);
    dr_openb_pods_free(&tr);
}

static void test_inflate_mixed(void **st)
{
    (void)st;
    /* shares, multi-GPU and CPU-only pods: the stop rule compares the
     * per-GPU milli of the drawn pod; CPU-only pods never stop it */
    dr_openb_pods_t tr;
    parse_trace(&tr, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                     "a,1000,1,0,0\n"
                     "b,2000,1,1,250\n"
                     "c,3000,1,8,1000\n"
                     "d,4000,1,1,700\n"
                     "e,5000,1,0,500\n"); /* CPU-only: its gpu_milli counts for nothing */
    assert_int_equal(tr.v[4].gpu_milli, 0);
    for (uint64_t seed = 1; seed <= 20; seed++) {
        dr_openb_pods_t seq;
        dr_openb_pods_init(&seq);
        uint64_t cap = 40000;
        double target = 1.3 * (double)cap;
        assert_int_equal(dr_openb_sequence_generate(&seq, &tr, cap, 1.3, seed, NULL), DR_OK);
        assert_true(seq.n > 5);
        uint64_t before_last = dr_openb_pods_demand(&seq);
        const dr_openb_pod_t *last = &seq.v[seq.n - 1];
        before_last -= (uint64_t)last->num_gpu * last->gpu_milli;
        /* the last clone passed the rule: demand before it + its per-GPU milli <= target */
        assert_true((double)(before_last + last->gpu_milli) <= target);
        /* so the demand can pass the target only by what the last clone added */
        assert_true((double)dr_openb_pods_demand(&seq) <= target + 7000);
        for (size_t i = 5; i < seq.n; i++) {
            const char *b = bname(&seq, i);
            int64_t t = dr_strtab_find(&tr.names, b);
            assert_true(t >= 0);
            assert_int_equal(seq.v[i].cpu_milli, tr.v[t].cpu_milli);
            assert_int_equal(seq.v[i].num_gpu, tr.v[t].num_gpu);
            assert_int_equal(seq.v[i].gpu_milli, tr.v[t].gpu_milli);
        }
        dr_openb_pods_free(&seq);
    }
    dr_openb_pods_free(&tr);
}

static void test_remove_path(void **st)
{
    (void)st;
    /* a trace asking for more than the target loses pods at random
     * positions until the demand is at most the target; no clones */
    char text[8192] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
    size_t n = strlen(text);
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "q%02d,1000,1,%d,1000\n", i, 1 + i % 3);
    dr_openb_pods_t tr, seq;
    parse_trace(&tr, text);
    uint64_t total = dr_openb_pods_demand(&tr); /* 79 GPUs */
    assert_int_equal(total, 79000);
    dr_openb_pods_init(&seq);
    /* capacity 40 GPUs: target 52 GPUs */
    assert_int_equal(dr_openb_sequence_generate(&seq, &tr, 40000, 1.3, 42, NULL), DR_OK);
    uint64_t d = dr_openb_pods_demand(&seq);
    assert_true(d <= 52000);
    assert_true(d > 52000 - 3000); /* the last removal took at most one pod's 3 GPUs */
    assert_true(seq.n < tr.n);
    for (size_t i = 0; i < seq.n; i++) {
        assert_null(strstr(pname(&seq, i), "-tuned-"));
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(pname(&seq, i), pname(&seq, j));
    }
    dr_openb_pods_free(&seq);
    dr_openb_pods_free(&tr);
}

static void test_ranks(void **st)
{
    (void)st;
    uint32_t a[50], b[50], c[50];
    dr_openb_ranks(a, 50, 42);
    dr_openb_ranks(b, 50, 42);
    dr_openb_ranks(c, 50, 43);
    bool seen[50] = {false}, differs = false;
    for (int i = 0; i < 50; i++) {
        assert_true(a[i] < 50);
        assert_false(seen[a[i]]);
        seen[a[i]] = true;
        assert_int_equal(a[i], b[i]);
        differs |= a[i] != c[i];
    }
    assert_true(differs);
}

/* --- feasibility --- */

static void test_cpu_only_strands(void **st)
{
    (void)st;
    static const char *const nodes[] = {"n0:0:2:8:64"};
    dr_cluster_t c;
    build(&c, nodes, 1);
    dr_openb_pods_t seq;
    parse_seq(&seq, "pod,base,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                    "cpu,cpu,8000,1024,0,0,\n"
                    "gpu,gpu,1000,1024,1,1000,\n");
    dr_openb_result_t res;
    char *csv = replay_csv(&c, &seq, "fgd", &res);
    /* the CPU-only pod takes every CPU: both GPUs idle, yet the GPU pod fails */
    assert_string_equal(csv, "pod,node,gpus\ncpu,n0,\ngpu,,\n");
    assert_int_equal(res.failed, 1);
    assert_int_equal(res.used[1], 0);
    assert_int_equal(c.nodes[0].gpus_idle, 2);
    free(csv);
    dr_openb_result_free(&res);
    dr_openb_pods_free(&seq);
    dr_cluster_free(&c);
}

static void test_whole_gpus_and_specs(void **st)
{
    (void)st;
    static const char *const nodes[] = {"x0:0:2:64:256", "y0:1:2:64:256"};
    dr_cluster_t c;
    build(&c, nodes, 2);
    dr_openb_pods_t seq;
    /* a share on each node, then whole-GPU pods: one idle GPU is left per
     * node, so 2-GPU pods fail, 1-GPU pods fit; a pod for model Y only goes
     * to y0, one for an unknown model never runs */
    parse_seq(&seq, "pod,base,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                    "s1,s1,1000,1,1,100,X\n"
                    "s2,s2,1000,1,1,100,Y\n"
                    "two,two,1000,1,2,1000,\n"
                    "big,big,1000,1,1,950,\n"
                    "w1,w1,1000,1,1,1000,Y\n"
                    "w2,w2,1000,1,1,1000,Z\n"
                    "w3,w3,1000,1,1,1000,X|Y\n"
                    "w4,w4,1000,1,1,1000,\n");
    dr_openb_result_t res;
    char *csv = replay_csv(&c, &seq, "bestfit", &res);
    assert_string_equal(csv, "pod,node,gpus\n"
                             "s1,x0,0:100\n"
                             "s2,y0,0:100\n"
                             "two,,\n"
                             "big,x0,1:950\n"
                             "w1,y0,1:1000\n"
                             "w2,,\n"
                             "w3,,\n"
                             "w4,,\n");
    dr_alloc_t *ap[8];
    for (size_t i = 0; i < res.npods; i++)
        ap[i] = &res.alloc[i];
    assert_int_equal(dr_cluster_audit(&c, (const dr_alloc_t *const *)ap, res.npods, NULL), DR_OK);
    free(csv);
    dr_openb_result_free(&res);
    dr_openb_pods_free(&seq);
    dr_cluster_free(&c);

    /* dr_pack_fits directly: k GPUs need k idle ones; a share needs room on one */
    build(&c, nodes, 2);
    dr_alloc_t a = {0};
    dr_slot_t sl = {0, 1, 400};
    a.slots = &sl;
    a.nslots = 1;
    a.nnodes = 1;
    assert_int_equal(dr_cluster_take(&c, &a, NULL), DR_OK);
    dr_pack_req_t two = {.cpu_milli = 1, .mem_mb = 1, .ngpus = 2, .gpu_milli = 1000, .allowed = 3};
    dr_pack_req_t one = two, share = two, cpu = {.cpu_milli = 64000, .mem_mb = 1};
    one.ngpus = 1;
    share.ngpus = 1;
    share.gpu_milli = 600;
    assert_false(dr_pack_fits(&c, &c.nodes[0], &two));
    assert_true(dr_pack_fits(&c, &c.nodes[1], &two));
    assert_true(dr_pack_fits(&c, &c.nodes[0], &one));
    assert_true(dr_pack_fits(&c, &c.nodes[0], &share));
    share.gpu_milli = 601;
    share.allowed = 1;                                  /* X only */
    assert_true(dr_pack_fits(&c, &c.nodes[0], &share)); /* GPU 0 is idle */
    assert_false(dr_pack_fits(&c, &c.nodes[1], &share));
    assert_true(dr_pack_fits(&c, &c.nodes[0], &cpu));
    cpu.cpu_milli = 64001;
    assert_false(dr_pack_fits(&c, &c.nodes[0], &cpu));
    one.mem_mb = 256 * 1024 + 1;
    assert_false(dr_pack_fits(&c, &c.nodes[1], &one));
    dr_cluster_free(&c);
}

/* --- the metric --- */

static void test_rounding(void **st)
{
    (void)st;
    assert_int_equal(dr_openb_arrive_pct(875, 1000), 88); /* 87.5 -> even */
    assert_int_equal(dr_openb_arrive_pct(625, 1000), 62); /* 62.5 -> even */
    assert_int_equal(dr_openb_arrive_pct(626, 1000), 63);
    assert_int_equal(dr_openb_arrive_pct(6212000, 6212000), 100);
    assert_int_equal(dr_openb_arrive_pct(6243060, 6212000), 100); /* 100.5 exactly */
    assert_int_equal(dr_openb_arrive_pct(6243061, 6212000), 101);
    assert_int_equal(dr_openb_alloc_centi(1, 20000), 0);       /* 0.005% -> 0.00 (even) */
    assert_int_equal(dr_openb_alloc_centi(3, 20000), 2);       /* 0.015% -> 0.02 (even) */
    assert_int_equal(dr_openb_alloc_centi(5915, 6212000), 10); /* 0.09522% */
    assert_int_equal(dr_openb_alloc_centi(6212000, 6212000), 10000);
}

static void test_curve(void **st)
{
    (void)st;
    static const char *const nodes[] = {"n0:0:4:64:256"};
    dr_cluster_t c;
    build(&c, nodes, 1);
    dr_openb_pods_t seq;
    /* capacity 4000 milli */
    parse_seq(&seq, "pod,base,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                    "a,a,1000,1,1,1000,\n" /* arrived 1000 (25%), used 1000 */
                    "b,b,1000,1,2,1000,\n" /* 3000 (75%), 3000 */
                    "c,c,1000,1,1,500,\n"  /* 3500 (87.5 -> 88%), 3500 */
                    "d,d,1000,1,1,530,\n"  /* 4030 (100.75 -> 101%), fails: 3500 */
                    "e,e,1000,1,1,510,\n"  /* 4540 (113.5 -> 114%), fails */
                    "f,f,1000,1,1,400,\n"  /* 4940 (123.5 -> 124%), 3900 */
                    "g,g,1000,1,0,0,\n");  /* 4940 (124%), 3900 */
    dr_openb_result_t res;
    char *csv = replay_csv(&c, &seq, "fgd", &res);
    assert_string_equal(csv, "pod,node,gpus\na,n0,0:1000\nb,n0,1:1000-2:1000\nc,n0,3:500\n"
                             "d,,\ne,,\nf,n0,3:400\ng,n0,\n");
    static const uint64_t arrived[] = {1000, 3000, 3500, 4030, 4540, 4940, 4940};
    static const uint64_t used[] = {1000, 3000, 3500, 3500, 3500, 3900, 3900};
    for (size_t i = 0; i < 7; i++) {
        assert_int_equal(res.arrived[i], arrived[i]);
        assert_int_equal(res.used[i], used[i]);
    }
    assert_int_equal(res.failed, 2);
    double v;
    assert_true(dr_openb_curve_at(&res, 25, &v));
    assert_true(v == 25.0);
    assert_true(dr_openb_curve_at(&res, 88, &v));
    assert_true(v == 87.5);
    /* no event at 100: the neighbours 99..101 (here only d, at 101) */
    assert_true(dr_openb_curve_at(&res, 100, &v));
    assert_true(v == 87.5);
    assert_true(dr_openb_curve_at(&res, 124, &v)); /* f and g: mean of 97.5, 97.5 */
    assert_true(v == 97.5);
    assert_true(dr_openb_curve_at(&res, 125, &v)); /* fallback to 124 */
    assert_true(v == 97.5);
    assert_false(dr_openb_curve_at(&res, 50, &v)); /* nothing within 49..51 */
    free(csv);
    dr_openb_result_free(&res);
    dr_openb_pods_free(&seq);
    dr_cluster_free(&c);
}

/* --- policies on hand-made cases --- */

/* A: 2 idle GPUs.  B: 4 GPUs with 1000, 600, 600, 600 free.  The shapes
 * seen: half 2-GPU pods, half 500-milli shares.  A 500 share on A breaks
 * A's two idle GPUs: F grows from 0 to 750.  On B it cannot hurt the 2-GPU
 * pods (B has only one idle GPU already): on the idle GPU F falls from 1400
 * to 1150, on a 600 GPU to 1200 (the 100 left is too small for a share).
 * So FGD takes B's idle GPU 0, BestFit the node with the least left: A. */
static void fgd_case(dr_cluster_t *c)
{
    static const char *const nodes[] = {"A:0:2:64:256", "B:0:4:64:256"};
    build(c, nodes, 2);
    dr_slot_t sl[3] = {{1, 1, 400}, {1, 2, 400}, {1, 3, 400}};
    dr_alloc_t a = {.slots = sl, .nslots = 3, .nnodes = 1};
    assert_int_equal(dr_cluster_take(c, &a, NULL), DR_OK);
}

static void test_fgd_vs_bestfit(void **st)
{
    (void)st;
    dr_cluster_t c, hist;
    fgd_case(&c);
    dr_pack_req_t two = {
        .cpu_milli = 1000, .mem_mb = 1, .ngpus = 2, .gpu_milli = 1000, .allowed = 1};
    dr_pack_req_t share = {
        .cpu_milli = 1000, .mem_mb = 1, .ngpus = 1, .gpu_milli = 500, .allowed = 1};
    const char *const pols[] = {"fgd", "fgd:quantize=0", "bestfit"};
    for (int k = 0; k < 3; k++) {
        dr_packer_t *p;
        assert_int_equal(dr_packer_create(&p, pols[k], &c, 1, NULL), DR_OK);
        /* the history: 5 x 2-GPU pods and 4 shares, shown on a scratch copy */
        assert_int_equal(dr_cluster_copy(&hist, &c, NULL), DR_OK);
        for (int i = 0; i < 9; i++) {
            dr_alloc_t a;
            int rc = dr_packer_place(p, &hist, i < 5 ? &two : &share, &a);
            assert_true(rc == DR_OK || rc == DR_ENOSPC);
            dr_alloc_free(&a);
        }
        dr_cluster_free(&hist);
        dr_alloc_t a;
        assert_int_equal(dr_packer_place(p, &c, &share, &a), DR_OK);
        assert_int_equal(a.nslots, 1);
        if (k < 2) {
            assert_int_equal(a.slots[0].node, 1);
            assert_int_equal(a.slots[0].gpu, 0);
        } else {
            assert_int_equal(a.slots[0].node, 0);
        }
        dr_cluster_give(&c, &a);
        dr_alloc_free(&a);
        dr_packer_free(p);
    }
    dr_cluster_free(&c);
}

static void test_bestfit_choices(void **st)
{
    (void)st;
    /* n0: 8 idle GPUs; n1: 2 GPUs, one with 300 free, one idle */
    static const char *const nodes[] = {"n0:0:8:64:256", "n1:0:2:64:256", "n2:0:4:64:256"};
    dr_cluster_t c;
    build(&c, nodes, 3);
    dr_slot_t sl = {1, 0, 700};
    dr_alloc_t pre = {.slots = &sl, .nslots = 1, .nnodes = 1};
    assert_int_equal(dr_cluster_take(&c, &pre, NULL), DR_OK);
    dr_packer_t *p;
    assert_int_equal(dr_packer_create(&p, "bestfit", &c, 0, NULL), DR_OK);
    /* a 1-GPU pod goes to the node left with the least: n1 */
    dr_pack_req_t one = {
        .cpu_milli = 1000, .mem_mb = 1, .ngpus = 1, .gpu_milli = 1000, .allowed = 1};
    dr_alloc_t a;
    assert_int_equal(dr_packer_place(p, &c, &one, &a), DR_OK);
    assert_int_equal(a.slots[0].node, 1);
    assert_int_equal(a.slots[0].gpu, 1);
    dr_alloc_free(&a);
    /* a 200 share: n1's GPU 0 (300 free) is the tightest anywhere */
    dr_pack_req_t sh = {.cpu_milli = 1000, .mem_mb = 1, .ngpus = 1, .gpu_milli = 200, .allowed = 1};
    assert_int_equal(dr_packer_place(p, &c, &sh, &a), DR_OK);
    assert_int_equal(a.slots[0].node, 1);
    assert_int_equal(a.slots[0].gpu, 0);
    assert_int_equal(a.slots[0].milli, 200);
    dr_alloc_free(&a);
    /* CPU-only: n1 (its GPUs full, so nothing to strand) scores best */
    dr_pack_req_t cpu = {.cpu_milli = 1000, .mem_mb = 1};
    assert_int_equal(dr_packer_place(p, &c, &cpu, &a), DR_OK);
    assert_int_equal(a.slots[0].node, 1);
    assert_int_equal(a.slots[0].gpu, DR_NO_GPU);
    dr_alloc_free(&a);
    dr_packer_free(p);
    dr_cluster_free(&c);
    /* equal scores go to the lowest rank */
    static const char *const twins[] = {"m0:0:4:64:256", "m1:0:4:64:256"};
    for (int k = 0; k < 2; k++) {
        build(&c, twins, 2);
        assert_int_equal(dr_packer_create(&p, "bestfit", &c, 0, NULL), DR_OK);
        uint32_t rank[2] = {(uint32_t)k, (uint32_t)(1 - k)};
        assert_int_equal(dr_packer_set_ranks(p, rank, 2, NULL), DR_OK);
        assert_int_equal(dr_packer_place(p, &c, &one, &a), DR_OK);
        assert_int_equal(a.slots[0].node, k); /* rank 0 is m0 first, then m1 */
        dr_alloc_free(&a);
        dr_packer_free(p);
        dr_cluster_free(&c);
    }
}

/* drover's two additions on cases FGD cannot tell apart.  Stranding: after
 * 1-GPU pods with 8 cores each, an 8-core CPU-only pod on the 16-core,
 * 2-GPU node n0 leaves CPU for one more GPU pod only (1000 milli stranded);
 * on the 64-core n1 it strands nothing.  FGD sees no change either way
 * (the next 8-core pod still fits), so the rank decides (n0).  Models: with
 * many pods seen that need type X, a pod that may use X or Y goes to Y. */
static void test_drover_choices(void **st)
{
    (void)st;
    static const char *const nodes[] = {"n0:0:2:16:256", "n1:0:2:64:256", "y0:1:2:64:256"};
    dr_cluster_t c, hist;
    build(&c, nodes, 3);
    dr_pack_req_t gpu = {
        .cpu_milli = 8000, .mem_mb = 1, .ngpus = 1, .gpu_milli = 1000, .allowed = 1};
    dr_pack_req_t cpu = {.cpu_milli = 8000, .mem_mb = 1};
    const char *const pols[] = {"fgd", "drover"};
    for (int k = 0; k < 2; k++) {
        dr_packer_t *p;
        assert_int_equal(dr_packer_create(&p, pols[k], &c, 1, NULL), DR_OK);
        assert_int_equal(dr_cluster_copy(&hist, &c, NULL), DR_OK);
        for (int i = 0; i < 6; i++) {
            dr_alloc_t a;
            int rc = dr_packer_place(p, &hist, &gpu, &a);
            assert_true(rc == DR_OK || rc == DR_ENOSPC);
            dr_alloc_free(&a);
        }
        dr_cluster_free(&hist);
        dr_alloc_t a;
        assert_int_equal(dr_packer_place(p, &c, &cpu, &a), DR_OK);
        assert_int_equal(a.slots[0].node, k == 0 ? 0 : 1);
        dr_cluster_give(&c, &a);
        dr_alloc_free(&a);
        dr_packer_free(p);
    }
    /* models: X-only pods seen; an X-or-Y pod is steered to y0 */
    dr_packer_t *p;
    assert_int_equal(dr_packer_create(&p, "drover:beta=0", &c, 1, NULL), DR_OK);
    assert_int_equal(dr_cluster_copy(&hist, &c, NULL), DR_OK);
    gpu.cpu_milli = 1000;
    for (int i = 0; i < 8; i++) {
        dr_alloc_t a;
        int rc = dr_packer_place(p, &hist, &gpu, &a);
        assert_true(rc == DR_OK || rc == DR_ENOSPC);
        dr_alloc_free(&a);
    }
    dr_cluster_free(&hist);
    dr_pack_req_t any = gpu;
    any.allowed = 3;
    dr_alloc_t a;
    assert_int_equal(dr_packer_place(p, &c, &any, &a), DR_OK);
    assert_int_equal(a.slots[0].node, 2);
    dr_alloc_free(&a);
    dr_packer_free(p);
    dr_cluster_free(&c);
}

/* every policy, random pods on a small random cluster: the ledger always
 * matches the allocations, no GPU ever holds more than 1000 milli */
static void test_audit_all_policies(void **st)
{
    (void)st;
    dr_rng_t rng;
    dr_rng_seed(&rng, 99);
    for (const char *const *pol = dr_pack_policy_names(); *pol; pol++) {
        for (int round = 0; round < 3; round++) {
            dr_cluster_t c;
            dr_cluster_init(&c);
            add_type(&c, "X");
            add_type(&c, "Y");
            for (int i = 0; i < 12; i++) {
                char name[16];
                snprintf(name, sizeof name, "n%d", i);
                static const uint16_t g[] = {1, 2, 4, 8};
                assert_true(dr_cluster_add_node(&c, name, i % 2, g[dr_rng_below(&rng, 4)],
                                                (uint32_t)(8 + dr_rng_below(&rng, 64)) * 1000,
                                                (uint64_t)(16 + dr_rng_below(&rng, 200)) * 1024,
                                                NULL) >= 0);
            }
            assert_int_equal(dr_cluster_finalize(&c, NULL), DR_OK);
            char text[65536] = "pod,base,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";
            size_t n = strlen(text);
            for (int i = 0; i < 300; i++) {
                int kind = (int)dr_rng_below(&rng, 4);
                unsigned ng = kind == 0 ? 0 : kind == 1 ? 1 : 1u << dr_rng_below(&rng, 4);
                unsigned milli = kind == 0   ? 0
                                 : kind == 1 ? 50 + (unsigned)dr_rng_below(&rng, 950)
                                             : 1000;
                const char *spec = kind && dr_rng_below(&rng, 4) == 0 ? "Y" : "";
                n += (size_t)snprintf(text + n, sizeof text - n, "p%d,p%d,%u,%u,%u,%u,%s\n", i, i,
                                      (unsigned)(1 + dr_rng_below(&rng, 12)) * 1000,
                                      (unsigned)(1 + dr_rng_below(&rng, 32)) * 1024, ng, milli,
                                      spec);
            }
            dr_openb_pods_t seq;
            parse_seq(&seq, text);
            dr_openb_result_t res;
            dr_err_t err = {0};
            uint32_t rank[12];
            dr_openb_ranks(rank, 12, (uint64_t)round);
            dr_openb_opts_t o = {.policy = *pol, .seed = (uint64_t)round, .rank = rank};
            if (dr_openb_replay(&c, &seq, &o, &res, &err) != DR_OK)
                fail_msg("%s: %s", *pol, err.msg);
            const dr_alloc_t **ap = malloc(res.npods * sizeof *ap);
            size_t k = 0;
            for (size_t i = 0; i < res.npods; i++) {
                if (res.node[i] < 0) {
                    assert_int_equal(res.alloc[i].nslots, 0);
                    continue;
                }
                ap[k++] = &res.alloc[i];
                const dr_node_t *nd = &c.nodes[res.node[i]];
                const dr_openb_pod_t *q = &seq.v[i];
                if (q->num_gpu)
                    assert_int_equal(res.alloc[i].nslots, q->num_gpu);
                if (*dr_strtab_get(&seq.specs, q->spec) == 'Y')
                    assert_int_equal(nd->type, 1);
                if (i > 0)
                    assert_true(res.used[i] >= res.used[i - 1]);
            }
            if (dr_cluster_audit(&c, ap, k, &err) != DR_OK)
                fail_msg("%s: %s", *pol, err.msg);
            assert_true(res.failed > 0); /* 300 pods overfill 12 nodes */
            free(ap);
            dr_openb_result_free(&res);
            dr_openb_pods_free(&seq);
            dr_cluster_free(&c);
        }
    }
}

/* --- readers and writers --- */

static void expect_err(bool sequence, const char *text, const char *msg)
{
    dr_openb_pods_t p;
    dr_openb_pods_init(&p);
    dr_err_t err = {0};
    int rc = sequence ? dr_openb_sequence_parse(&p, "f.csv", text, strlen(text), &err)
                      : dr_openb_pods_parse(&p, "f.csv", text, strlen(text), &err);
    assert_int_not_equal(rc, DR_OK);
    tu_assert_contains(err.msg, msg);
    assert_int_equal(p.n, 0);
    dr_openb_pods_free(&p);
}

static void test_readers(void **st)
{
    (void)st;
    const char *h = "pod,base,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";
    char buf[512];
#define SEQ(rows) (snprintf(buf, sizeof buf, "%s%s", h, rows), buf)
    expect_err(true, "", "empty file");
    expect_err(true, h, "no pods");
    expect_err(true, "pod,base,cpu_milli\nx,x,1\n", "f.csv:1: header: missing column 'memory_mib'");
    expect_err(true, SEQ("a,a,1,1,1,1000\n"), "f.csv:2: row has 6 fields");
    expect_err(true, SEQ("a,a,x,1,1,1000,\n"), "f.csv:2: cpu_milli: 'x' is not a whole number");
    expect_err(true, SEQ("a,a,1,1,1,1001,\n"), "f.csv:2: gpu_milli: 1001 is too large");
    expect_err(true, SEQ("a,a,1,1,1,0,\n"), "f.csv:2: gpu_milli: 0 for a pod with 1 GPUs");
    expect_err(true, SEQ("a,a,1,1,0,5,\n"), "f.csv:2: gpu_milli: 5 for a CPU-only pod");
    expect_err(true, SEQ("a,a,1,1,2,500,\n"), "f.csv:2: gpu_milli: a share (500 milli)");
    expect_err(true, SEQ("a,a,1,1,1,500,\nb,b,1,1,1,5,\na,a,1,1,1,1,\n"),
               "f.csv:4: pod: pod 'a' is listed twice (first on line 2)");
    expect_err(true, SEQ(",a,1,1,1,500,\n"), "f.csv:2: pod: empty pod name");
    expect_err(true, SEQ("a,a,1,1,1,\"5\n"), "unterminated quote");
    expect_err(false, "name,cpu_milli,memory_mib,num_gpu\nx,1,1,1\n",
               "f.csv:1: header: missing column 'gpu_milli'");
    expect_err(false, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1,1,1,abc\n",
               "f.csv:2: gpu_milli: 'abc' is not a number");
    expect_err(false, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1,1,2000,1000\n",
               "f.csv:2: num_gpu: 2000 is too large");
#undef SEQ
    /* the trace reader clamps gpu_milli, ignores "nan" specs and the specs of
     * CPU-only pods, and skips blank lines */
    dr_openb_pods_t p;
    parse_trace(&p, "\xEF\xBB\xBFname,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                    "a,1,2,1,1500,nan\n\n"
                    "b,1,2,1,250.4,T4|P100\n"
                    "c,1,2,0,700,T4\n");
    assert_int_equal(p.n, 3);
    assert_int_equal(p.v[0].gpu_milli, 1000);
    assert_int_equal(p.v[0].spec, 0);
    assert_int_equal(p.v[1].gpu_milli, 250);
    assert_string_equal(dr_strtab_get(&p.specs, p.v[1].spec), "T4|P100");
    assert_int_equal(p.v[2].gpu_milli, 0);
    assert_int_equal(p.v[2].spec, 0);
    dr_openb_pods_free(&p);
}

static void test_sequence_round_trip(void **st)
{
    (void)st;
    dr_openb_pods_t tr, seq, back;
    parse_trace(&tr, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                     "a,1000,2048,1,500,X|Y\n"
                     "\"b,c\",2000,4096,2,1000,\n"
                     "d,3000,1,0,0,\n");
    dr_openb_pods_init(&seq);
    assert_int_equal(dr_openb_sequence_generate(&seq, &tr, 3000, 1.3, 5, NULL), DR_OK);
    char *text;
    size_t len;
    assert_int_equal(dr_openb_sequence_format(&seq, &text, &len, NULL), DR_OK);
    assert_int_equal(strlen(text), len);
    tu_assert_contains(text, "pod,base,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n");
    tu_assert_contains(text, "\"b,c\",\"b,c\",2000,4096,2,1000,\n");
    dr_openb_pods_init(&back);
    assert_int_equal(dr_openb_sequence_parse(&back, "s", text, len, NULL), DR_OK);
    assert_int_equal(back.n, seq.n);
    for (size_t i = 0; i < seq.n; i++) {
        assert_string_equal(pname(&seq, i), pname(&back, i));
        assert_string_equal(bname(&seq, i), bname(&back, i));
        assert_string_equal(dr_strtab_get(&seq.specs, seq.v[i].spec),
                            dr_strtab_get(&back.specs, back.v[i].spec));
        assert_int_equal(seq.v[i].cpu_milli, back.v[i].cpu_milli);
        assert_int_equal(seq.v[i].mem_mib, back.v[i].mem_mib);
        assert_int_equal(seq.v[i].num_gpu, back.v[i].num_gpu);
        assert_int_equal(seq.v[i].gpu_milli, back.v[i].gpu_milli);
    }
    free(text);
    dr_openb_pods_free(&back);
    dr_openb_pods_free(&seq);
    dr_openb_pods_free(&tr);
}

static void test_policy_specs(void **st)
{
    (void)st;
    static const char *const nodes[] = {"n0:0:1:8:8"};
    dr_cluster_t c;
    build(&c, nodes, 1);
    dr_packer_t *p = NULL;
    dr_err_t err = {0};
    assert_int_equal(dr_packer_create(&p, "nope", &c, 0, &err), DR_ENOENT);
    tu_assert_contains(err.msg, "unknown packing policy 'nope' (known: random, dotprod");
    assert_int_equal(dr_packer_create(&p, "fgd:bogus=1", &c, 0, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "fgd: unknown option 'bogus'");
    assert_int_equal(dr_packer_create(&p, "drover:beta=x", &c, 0, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "drover: option beta: 'x' is not a number");
    assert_int_equal(dr_packer_create(&p, "bestfit:a=1", &c, 0, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "bestfit: takes no options");
    assert_int_equal(dr_packer_create(&p, "drover:beta=2,gamma=0,bin=10,mem=0", &c, 0, &err),
                     DR_OK);
    assert_string_equal(dr_packer_name(p), "drover");
    uint32_t r2[2] = {0, 1};
    assert_int_equal(dr_packer_set_ranks(p, r2, 2, &err), DR_EINVAL);
    dr_packer_free(p);
    for (const char *const *n = dr_pack_policy_names(); *n; n++)
        assert_non_null(dr_pack_policy_doc(*n));
    assert_null(dr_pack_policy_doc("nope"));
    dr_pack_req_t bad = {.ngpus = 2, .gpu_milli = 500, .allowed = 1};
    assert_int_equal(dr_pack_req_validate(&bad, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "is for one GPU");
    dr_cluster_free(&c);
}

/* --- dr_place's packing strategies --- */

static void test_place_strategies(void **st)
{
    (void)st;
    dr_place_strategy_t s;
    assert_int_equal(dr_place_strategy_parse("fgd", &s), DR_OK);
    assert_int_equal(s, DR_PLACE_FGD);
    assert_string_equal(dr_place_strategy_name(s), "fgd");
    assert_int_equal(dr_place_strategy_parse("drover-pack", &s), DR_OK);
    assert_int_equal(s, DR_PLACE_PACK);
    assert_string_equal(dr_place_strategy_name(s), "drover-pack");

    static const char *const nodes[] = {"a0:0:8:64:256", "a1:0:8:64:256", "b0:1:2:32:128"};
    const dr_place_strategy_t strat[] = {DR_PLACE_FGD, DR_PLACE_PACK};
    for (int k = 0; k < 2; k++) {
        dr_cluster_t c;
        build(&c, nodes, 3);
        dr_place_opts_t o = {.strategy = strat[k]};
        dr_alloc_t a[6];
        /* single-node requests go to the packer (and are booked) */
        dr_job_req_t one = {.nodes = 1,
                            .gpus_per_node = 1,
                            .gpu_milli = 300,
                            .cpu_milli_per_node = 1000,
                            .mem_mb_per_node = 1};
        assert_int_equal(dr_place(&c, &one, 3, &o, &a[0]), DR_OK);
        assert_int_equal(a[0].nslots, 1);
        assert_int_equal(a[0].slots[0].milli, 300);
        /* restricted to type 1 (b0) by the allowed mask */
        assert_int_equal(dr_place(&c, &one, 2, &o, &a[1]), DR_OK);
        assert_int_equal(a[1].slots[0].node, 2);
        /* CPU-only */
        dr_job_req_t cpu = {.nodes = 1, .cpu_milli_per_node = 2000, .mem_mb_per_node = 1};
        assert_int_equal(dr_place(&c, &cpu, 3, &o, &a[2]), DR_OK);
        assert_int_equal(a[2].slots[0].gpu, DR_NO_GPU);
        /* a gang of 2 x 8 takes the best-fit path: both a-nodes need 8 idle GPUs */
        dr_job_req_t gang = {.nodes = 2,
                             .gpus_per_node = 8,
                             .gpu_milli = 1000,
                             .cpu_milli_per_node = 1000,
                             .mem_mb_per_node = 1};
        dr_alloc_t g;
        int rc = dr_place(&c, &gang, 1, &o, &g);
        /* one a-node now holds the 300 share (or not, if the packer chose b0 for it) */
        if (a[0].slots[0].node == 2) {
            assert_int_equal(rc, DR_OK);
            dr_cluster_give(&c, &g);
            dr_alloc_free(&g);
        } else {
            assert_int_equal(rc, DR_ENOSPC);
        }
        /* too big anywhere */
        dr_job_req_t huge = one;
        huge.gpus_per_node = 9;
        huge.gpu_milli = 1000;
        assert_int_equal(dr_place(&c, &huge, 3, &o, &a[3]), DR_ENOSPC);
        const dr_alloc_t *ap[3] = {&a[0], &a[1], &a[2]};
        assert_int_equal(dr_cluster_audit(&c, ap, 3, NULL), DR_OK);
        for (int i = 0; i < 3; i++)
            dr_alloc_free(&a[i]);
        dr_cluster_free(&c); /* frees the packer kept with the cluster */
    }
}

/* --- the real trace, when the shared data is there --- */

static void test_real_trace(void **st)
{
    (void)st;
    if (!tu_have_shared())
        skip();
    dr_catalog_t cat;
    assert_int_equal(dr_catalog_builtin(&cat, NULL), DR_OK);
    dr_cluster_t c;
    dr_cluster_init(&c);
    size_t len;
    char *buf = tu_read(tu_shared_path("data/traces/openb/openb_node_list_gpu_node.csv"), &len);
    assert_int_equal(dr_openb_nodes_parse(&c, &cat, "nodes", buf, len, NULL), DR_OK);
    free(buf);
    dr_catalog_free(&cat);
    assert_int_equal(dr_cluster_total_gpus(&c, -1), 6212);
    dr_openb_pods_t tr, seq;
    dr_openb_pods_init(&tr);
    dr_openb_pods_init(&seq);
    dr_err_t err = {0};
    if (dr_openb_pods_load(&tr, tu_shared_path("data/traces/openb/openb_pod_list_default.csv"),
                           &err) != DR_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(tr.n, 8152);
    assert_int_equal(dr_openb_sequence_generate(&seq, &tr, 6212000, 1.3, 42, NULL), DR_OK);
    uint64_t d = dr_openb_pods_demand(&seq);
    assert_true(d <= 8075600 + 8000 && d > 8075600 - 1000);
    uint32_t *rank = malloc(c.nnodes * sizeof *rank);
    dr_openb_ranks(rank, c.nnodes, 42);
    dr_openb_opts_t o = {.policy = "bestfit", .seed = 42, .rank = rank};
    dr_openb_result_t res;
    assert_int_equal(dr_openb_replay(&c, &seq, &o, &res, &err), DR_OK);
    double h;
    assert_true(dr_openb_curve_at(&res, 100, &h));
    assert_true(h > 90 && h < 96); /* published mean 92.86 */
    const dr_alloc_t **ap = malloc(res.npods * sizeof *ap);
    for (size_t i = 0; i < res.npods; i++)
        ap[i] = &res.alloc[i];
    assert_int_equal(dr_cluster_audit(&c, ap, res.npods, NULL), DR_OK);
    free(ap);
    free(rank);
    dr_openb_result_free(&res);
    dr_openb_pods_free(&seq);
    dr_openb_pods_free(&tr);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inflate_exact),    cmocka_unit_test(test_inflate_mixed),
        cmocka_unit_test(test_remove_path),      cmocka_unit_test(test_ranks),
        cmocka_unit_test(test_cpu_only_strands), cmocka_unit_test(test_whole_gpus_and_specs),
        cmocka_unit_test(test_rounding),         cmocka_unit_test(test_curve),
        cmocka_unit_test(test_fgd_vs_bestfit),   cmocka_unit_test(test_bestfit_choices),
        cmocka_unit_test(test_drover_choices),   cmocka_unit_test(test_audit_all_policies),
        cmocka_unit_test(test_readers),          cmocka_unit_test(test_sequence_round_trip),
        cmocka_unit_test(test_policy_specs),     cmocka_unit_test(test_place_strategies),
        cmocka_unit_test(test_real_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
