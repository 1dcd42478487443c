/* test_perfmodel.c - the analytic performance model: ZeRO model-state memory
 * (the ZeRO paper's example), Korthikanti et al.'s activation formulas, KV
 * cache bytes (vLLM and Llama figures), fit / no-fit with reasons, precision
 * fallback, monotonicity (more GPUs, faster GPUs), the topology effect
 * (NVLink > InfiniBand > Ethernet), serving floors, networks read from a
 * cluster, hint-based perf classes for the schedulers, and mixtures of
 * experts (shape from total + active, FLOPs from the active parameters,
 * memory from all experts, expert parallelism) and context parallelism. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/config.h"
#include "drover/perfmodel.h"
#include "drover/plan.h"
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

static const dr_gpu_spec_t *gpu(const char *name)
{
    const dr_gpu_spec_t *g = dr_catalog_find(&cat, name);
    assert_non_null(g);
    return g;
}

static void assert_close(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want))) {
        print_error("got %.6g, want %.6g (+-%.2g%%)\n", got, want, rel * 100);
        fail();
    }
}

static dr_perfmodel_train_t job_of(const char *preset)
{
    dr_perfmodel_train_t j;
    dr_perfmodel_train_init(&j);
    const dr_plan_preset_t *p = dr_plan_preset_find(preset);
    assert_non_null(p);
    j.arch = p->arch;
    dr_err_t err;
    assert_int_equal(dr_perfmodel_arch_complete(&j.arch, &err), 0);
    j.tokens = 1e12;
    return j;
}

/* ZeRO (Rajbhandari et al. 2019), Figure 1: 7.5B parameters, Nd = 64, K = 12:
 * 120 GB baseline, 31.4 GB with P_os, 16.6 GB with P_os+g, 1.9 GB with
 * P_os+g+p. */
static void test_zero_paper(void **state)
{
    (void)state;
    assert_close(dr_perfmodel_zero_bytes(7.5e9, 0, 64, 12) / 1e9, 120.0, 0.001);
    assert_close(dr_perfmodel_zero_bytes(7.5e9, 1, 64, 12) / 1e9, 31.4, 0.002);
    assert_close(dr_perfmodel_zero_bytes(7.5e9, 2, 64, 12) / 1e9, 16.6, 0.003);
    assert_close(dr_perfmodel_zero_bytes(7.5e9, 3, 64, 12) / 1e9, 1.875, 0.001);
    /* one GPU: every stage is the baseline */
    for (int z = 0; z <= 3; z++)
        assert_close(dr_perfmodel_zero_bytes(1e9, z, 1, 12), 16e9, 1e-12);
}

/* Korthikanti et al. 2022, Table 2, for a GPT-3 block (GeLU 4h MLP, MHA,
 * dropout): per-layer activation bytes with and without tensor/sequence
 * parallelism and selective or full recomputation. */
static void test_activation_formulas(void **state)
{
    (void)state;
    dr_perfmodel_arch_t a = dr_plan_preset_find("gpt-3-175b")->arch;
    double s = 2048, b = 1, h = a.hidden, heads = a.heads, t = 8;
    double sbh = s * b * h, q = 5 * heads * s / h;
    bool noflash = false;
    assert_close(dr_perfmodel_activation_bytes(&a, 2048, 1, 1, false, DR_RECOMPUTE_NONE, noflash),
                 sbh * (34 + q), 1e-12);
    assert_close(dr_perfmodel_activation_bytes(&a, 2048, 1, 8, false, DR_RECOMPUTE_NONE, noflash),
                 sbh * (10 + 24 / t + q / t), 1e-12);
    assert_close(dr_perfmodel_activation_bytes(&a, 2048, 1, 8, true, DR_RECOMPUTE_NONE, noflash),
                 sbh * (34 / t + q / t), 1e-12);
    assert_close(
        dr_perfmodel_activation_bytes(&a, 2048, 1, 8, false, DR_RECOMPUTE_SELECTIVE, noflash),
        sbh * (10 + 24 / t), 1e-12);
    assert_close(
        dr_perfmodel_activation_bytes(&a, 2048, 1, 8, true, DR_RECOMPUTE_SELECTIVE, noflash),
        34 * sbh / t, 1e-12);
    assert_close(dr_perfmodel_activation_bytes(&a, 2048, 1, 8, false, DR_RECOMPUTE_FULL, noflash),
                 2 * sbh, 1e-12);
    assert_close(dr_perfmodel_activation_bytes(&a, 2048, 1, 8, true, DR_RECOMPUTE_FULL, noflash),
                 2 * sbh / t, 1e-12);
    /* FlashAttention keeps no s x s matrices: like selective recomputation */
    assert_close(dr_perfmodel_activation_bytes(&a, 2048, 1, 8, true, DR_RECOMPUTE_NONE, true),
                 34 * sbh / t, 1e-12);
    /* linear in the micro-batch */
    assert_close(dr_perfmodel_activation_bytes(&a, 2048, 4, 8, true, DR_RECOMPUTE_NONE, true),
                 4 * 34 * sbh / t, 1e-12);
    /* GPT-3 175B: 70% saving from SP + selective vs TP alone (paper: "70%") */
    double tp_only = dr_perfmodel_activation_bytes(&a, 2048, 1, 8, false, DR_RECOMPUTE_NONE, false);
    double both =
        dr_perfmodel_activation_bytes(&a, 2048, 1, 8, true, DR_RECOMPUTE_SELECTIVE, false);
    assert_true(1 - both / tp_only > 0.65 && 1 - both / tp_only < 0.85);
}

/* KV cache bytes per token (planner-formulas.md): vLLM's OPT-13B example and
 * the Llama family in bf16. */
static void test_kv_cache(void **state)
{
    (void)state;
    dr_perfmodel_arch_t opt13 = {.layers = 40, .hidden = 5120, .heads = 40};
    double kv = dr_perfmodel_kv_bytes_per_token(&opt13, 2);
    assert_close(kv, 800 * 1024.0, 1e-12);                /* 800 KB per token */
    assert_close(kv * 2048 / 1073741824.0, 1.5625, 1e-9); /* 1.6 GB per 2048-token request */
    struct {
        const char *preset;
        double kib;
    } want[] = {{"llama-2-7b", 512},  {"llama-2-13b", 800}, {"llama-2-70b", 320},
                {"llama-3-70b", 320}, {"llama-3-8b", 128},  {"llama-3.1-405b", 504}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const dr_plan_preset_t *p = dr_plan_preset_find(want[i].preset);
        assert_non_null(p);
        assert_close(dr_perfmodel_kv_bytes_per_token(&p->arch, 2), want[i].kib * 1024, 1e-12);
    }
    /* fp8 halves it */
    const dr_plan_preset_t *p = dr_plan_preset_find("llama-3-8b");
    assert_close(dr_perfmodel_kv_bytes_per_token(&p->arch, 1), 64 * 1024.0, 1e-12);
}

static void test_fit(void **state)
{
    (void)state;
    dr_err_t err;
    dr_perfmodel_train_est_t e;
    /* 7B with Adam needs ~108 GB of model state: not on one 80 GB GPU */
    dr_perfmodel_train_t j = job_of("llama-2-7b");
    assert_int_equal(dr_perfmodel_train_best(&j, gpu("H100"), 1, NULL, &e, &err), 0);
    assert_false(e.fits);
    assert_true(e.tokens_per_s == 0 && e.wall_s == 0);
    tu_assert_contains(e.reason, "GB per GPU");
    tu_assert_contains(e.reason, "80 GB");
    /* ... but on 8 with ZeRO */
    assert_int_equal(dr_perfmodel_train_best(&j, gpu("H100"), 8, NULL, &e, &err), 0);
    assert_true(e.fits);
    assert_true(e.mem.total <= e.mem.capacity);
    assert_true(e.tokens_per_s > 0 && e.wall_s > 0 && e.step_s > 0);
    assert_true(e.mfu > 0.2 && e.mfu < 0.8);
    assert_true(e.layout.tp * e.layout.pp * e.layout.dp == 8);
    /* with the optimizer offloaded to the host, one H100 holds it */
    j.cpu_offload = true;
    assert_int_equal(dr_perfmodel_train_best(&j, gpu("H100"), 1, NULL, &e, &err), 0);
    if (!e.fits)
        print_error("%s\n", e.reason);
    assert_true(e.fits);
    assert_true(e.mem.optim == 0);
    /* 405B does not fit one node of H100s */
    dr_perfmodel_train_t big = job_of("llama-3.1-405b");
    assert_int_equal(dr_perfmodel_train_best(&big, gpu("H100"), 8, NULL, &e, &err), 0);
    assert_false(e.fits);
    tu_assert_contains(e.reason, "does not fit on 8 x H100-SXM-80GB");
    /* a layout that does not multiply out is an input error */
    dr_perfmodel_layout_t l = {.tp = 2, .pp = 2, .dp = 3};
    assert_int_equal(dr_perfmodel_train_eval(&j, gpu("H100"), 8, &l, NULL, &e, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "is not 8 GPUs");
    /* a fixed layout reports its memory even when it does not fit */
    dr_perfmodel_layout_t one = {.tp = 1, .pp = 1, .dp = 1, .zero_stage = 0};
    j.cpu_offload = false;
    assert_int_equal(dr_perfmodel_train_eval(&j, gpu("A100"), 1, &one, NULL, &e, &err), 0);
    assert_false(e.fits);
    assert_true(e.mem.weights + e.mem.grads + e.mem.optim > 100e9);
    /* too many GPUs for the batch */
    dr_perfmodel_train_t small = job_of("llama-2-7b");
    small.global_batch = 1; /* at most tp 8 x pp 32 GPUs can share one sequence */
    assert_int_equal(dr_perfmodel_train_best(&small, gpu("H100"), 4096, NULL, &e, &err), 0);
    assert_false(e.fits);
    tu_assert_contains(e.reason, "cannot keep 4096 GPUs busy");
}

static void test_precision(void **state)
{
    (void)state;
    dr_precision_t used;
    /* V100 and T4 have FP16 only */
    assert_close(dr_perfmodel_peak_tflops(gpu("V100"), DR_PREC_BF16, &used), 125, 1e-12);
    assert_int_equal(used, DR_PREC_FP16);
    assert_close(dr_perfmodel_peak_tflops(gpu("T4"), DR_PREC_FP8, &used), 65, 1e-12);
    assert_int_equal(used, DR_PREC_FP16);
    /* A100 has no FP8: bf16 */
    assert_close(dr_perfmodel_peak_tflops(gpu("A100"), DR_PREC_FP8, &used), 312, 1e-12);
    assert_int_equal(used, DR_PREC_BF16);
    assert_close(dr_perfmodel_peak_tflops(gpu("H100"), DR_PREC_FP8, &used), 1979, 1e-12);
    assert_int_equal(used, DR_PREC_FP8);
    /* fp32 runs as TF32 */
    assert_close(dr_perfmodel_peak_tflops(gpu("A100"), DR_PREC_FP32, &used), 156, 1e-12);
    /* K80: nothing known */
    assert_true(isnan(dr_perfmodel_peak_tflops(gpu("K80"), DR_PREC_BF16, &used)));
    dr_perfmodel_train_t j = job_of("gpt-3-1.3b");
    dr_perfmodel_train_est_t e;
    dr_err_t err;
    assert_int_equal(dr_perfmodel_train_best(&j, gpu("K80"), 8, NULL, &e, &err), 0);
    assert_false(e.fits);
    tu_assert_contains(e.reason, "no known tensor-core rate");
    /* fp8 on H100 beats bf16; on A100 it falls back and equals bf16 */
    dr_perfmodel_train_t j8 = job_of("llama-2-7b"), j16 = job_of("llama-2-7b");
    j8.precision = DR_PREC_FP8;
    dr_perfmodel_train_est_t e8, e16;
    assert_int_equal(dr_perfmodel_train_best(&j8, gpu("H100"), 8, NULL, &e8, &err), 0);
    assert_int_equal(dr_perfmodel_train_best(&j16, gpu("H100"), 8, NULL, &e16, &err), 0);
    assert_true(e8.tokens_per_s > 1.2 * e16.tokens_per_s);
    assert_int_equal(dr_perfmodel_train_best(&j8, gpu("A100"), 8, NULL, &e8, &err), 0);
    assert_int_equal(dr_perfmodel_train_best(&j16, gpu("A100"), 8, NULL, &e16, &err), 0);
    assert_int_equal(e8.precision, DR_PREC_BF16);
    assert_close(e8.tokens_per_s, e16.tokens_per_s, 1e-9);
}

/* More GPUs never make the job slower (within the batch's reach), and a
 * faster GPU is never slower. */
static void test_monotonic(void **state)
{
    (void)state;
    dr_err_t err;
    const char *models[] = {"llama-2-7b", "llama-2-13b", "llama-2-70b"};
    const char *gpus[] = {"A100", "H100", "B200", "MI300X"};
    for (size_t m = 0; m < 3; m++) {
        dr_perfmodel_train_t j = job_of(models[m]);
        for (size_t g = 0; g < 4; g++) {
            double prev = 0;
            for (uint32_t n = 8; n <= 1024; n *= 2) {
                dr_perfmodel_train_est_t e;
                assert_int_equal(dr_perfmodel_train_best(&j, gpu(gpus[g]), n, NULL, &e, &err), 0);
                if (!e.fits)
                    continue;
                if (e.tokens_per_s < prev * 0.999) {
                    print_error("%s on %u x %s: %.0f tokens/s, fewer than %.0f on %u\n", models[m],
                                n, gpus[g], e.tokens_per_s, prev, n / 2);
                    fail();
                }
                prev = e.tokens_per_s;
            }
        }
    }
    /* faster GPU >= slower GPU, same job and count */
    const char *ladder[] = {"V100-32GB", "A100", "H100", "B200"};
    dr_perfmodel_train_t j = job_of("llama-2-7b");
    double prev = 0;
    for (size_t i = 0; i < 4; i++) {
        dr_perfmodel_train_est_t e;
        assert_int_equal(dr_perfmodel_train_best(&j, gpu(ladder[i]), 64, NULL, &e, &err), 0);
        assert_true(e.fits);
        assert_true(e.tokens_per_s > prev);
        prev = e.tokens_per_s;
    }
    /* H200 (more, faster memory) is at least as fast as H100 */
    dr_perfmodel_train_est_t h100, h200;
    j = job_of("llama-2-70b");
    assert_int_equal(dr_perfmodel_train_best(&j, gpu("H100"), 64, NULL, &h100, &err), 0);
    assert_int_equal(dr_perfmodel_train_best(&j, gpu("H200"), 64, NULL, &h200, &err), 0);
    assert_true(h200.tokens_per_s >= h100.tokens_per_s);
}

/* The same 8-GPU job: one NVLink node > two nodes over InfiniBand > two
 * nodes over Ethernet. */
static void test_topology(void **state)
{
    (void)state;
    dr_err_t err;
    const char *models[] = {"llama-2-13b", "gpt-3-6.7b"};
    for (size_t m = 0; m < 2; m++) {
        dr_perfmodel_train_t j = job_of(models[m]);
        dr_perfmodel_net_t nvl, ib, eth;
        dr_perfmodel_net_default(&nvl, gpu("H100"));
        ib = nvl;
        ib.node_gpus = 4;
        ib.kind = DR_NET_IB;
        ib.inter_gbit = 400;
        eth = ib;
        eth.kind = DR_NET_ETH;
        eth.inter_gbit = 100;
        dr_perfmodel_train_est_t a, b, c;
        assert_int_equal(dr_perfmodel_train_best(&j, gpu("H100"), 8, &nvl, &a, &err), 0);
        assert_int_equal(dr_perfmodel_train_best(&j, gpu("H100"), 8, &ib, &b, &err), 0);
        assert_int_equal(dr_perfmodel_train_best(&j, gpu("H100"), 8, &eth, &c, &err), 0);
        assert_true(a.fits && b.fits && c.fits);
        assert_int_equal(a.nodes, 1);
        assert_int_equal(b.nodes, 2);
        if (!(a.tokens_per_s > b.tokens_per_s && b.tokens_per_s > c.tokens_per_s)) {
            print_error("%s: NVLink %.0f, IB %.0f, Ethernet %.0f tokens/s\n", models[m],
                        a.tokens_per_s, b.tokens_per_s, c.tokens_per_s);
            fail();
        }
        /* the difference is communication, not compute */
        assert_true(c.dp_comm_s + c.tp_comm_s + c.pp_comm_s > a.dp_comm_s + a.tp_comm_s);
    }
    /* a fixed layout that spans nodes: TP over the network is far slower */
    dr_perfmodel_train_t j = job_of("llama-2-13b");
    dr_perfmodel_layout_t l = {.tp = 8, .pp = 1, .dp = 1, .micro_batch = 1};
    dr_perfmodel_net_t one, two;
    dr_perfmodel_net_default(&one, gpu("H100"));
    two = one;
    two.node_gpus = 4;
    dr_perfmodel_train_est_t a, b;
    assert_int_equal(dr_perfmodel_train_eval(&j, gpu("H100"), 8, &l, &one, &a, &err), 0);
    assert_int_equal(dr_perfmodel_train_eval(&j, gpu("H100"), 8, &l, &two, &b, &err), 0);
    assert_true(a.tp_comm_s < b.tp_comm_s);
    assert_true(a.tokens_per_s > b.tokens_per_s);
}

static void test_arch(void **state)
{
    (void)state;
    dr_err_t err;
    dr_perfmodel_arch_t a = {.params = 7e9};
    assert_int_equal(dr_perfmodel_arch_complete(&a, &err), 0);
    assert_int_equal(a.hidden, 4096);
    assert_true(a.layers >= 28 && a.layers <= 36);
    assert_close(dr_perfmodel_arch_shape_params(&a), 7e9, 0.1);
    /* the preset shapes reproduce the published counts */
    size_t n;
    const dr_plan_preset_t *p = dr_plan_presets(&n);
    for (size_t i = 0; i < n; i++) {
        dr_perfmodel_arch_t x = p[i].arch;
        assert_int_equal(dr_perfmodel_arch_complete(&x, &err), 0);
        double sp = dr_perfmodel_arch_shape_params(&x);
        /* 5%; 6% for DeepSeek-V3, whose 3 dense first layers and MLA
         * attention are planned as ordinary MoE layers (+5%) */
        if (fabs(sp - x.params) > (x.experts ? 0.06 : 0.05) * x.params) {
            print_error("%s: shape gives %.4g parameters, card says %.4g\n", p[i].name, sp,
                        x.params);
            fail();
        }
    }
    /* errors name the field */
    dr_perfmodel_arch_t bad = {.layers = 2, .hidden = 100, .heads = 64};
    assert_int_equal(dr_perfmodel_arch_complete(&bad, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "hidden 100 is not a multiple of heads 64");
    dr_perfmodel_arch_t none = {0};
    assert_int_equal(dr_perfmodel_arch_complete(&none, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "parameter count or the shape");
    /* batch rule (GPT-3 Table 2.1) and published batches */
    dr_perfmodel_arch_t b = {.params = 1.3e9, .seq_len = 2048};
    assert_close(dr_perfmodel_default_batch(&b, 2048), 488, 0.01);
    assert_close(dr_perfmodel_default_batch(&dr_plan_preset_find("llama-2-7b")->arch, 4096), 977,
                 0.01);
}

static void test_serve(void **state)
{
    (void)state;
    dr_err_t err;
    dr_perfmodel_serve_t s;
    dr_perfmodel_serve_init(&s);
    s.arch = dr_plan_preset_find("llama-3-70b")->arch;
    s.prompt_tokens = 2048;
    s.output_tokens = 256;
    dr_perfmodel_serve_est_t e;
    /* 70B in bf16 (141 GB) does not fit one H100 */
    assert_int_equal(dr_perfmodel_serve_eval(&s, gpu("H100"), 1, 0, NULL, &e, &err), 0);
    assert_false(e.fits);
    tu_assert_contains(e.reason, "for one request");
    /* four do, and throughput grows with concurrency while latency grows too */
    dr_perfmodel_serve_est_t lo, hi;
    assert_int_equal(dr_perfmodel_serve_eval(&s, gpu("H100"), 4, 1, NULL, &lo, &err), 0);
    assert_int_equal(dr_perfmodel_serve_eval(&s, gpu("H100"), 4, 64, NULL, &hi, &err), 0);
    assert_true(lo.fits && hi.fits);
    assert_true(hi.tokens_per_s > 10 * lo.tokens_per_s);
    assert_true(hi.tpot_s > lo.tpot_s);
    /* floors: one decode step reads the weights at least once */
    double weights = 70.6e9 * 2 / 4;
    assert_true(lo.tpot_floor_s > weights / (gpu("H100")->hbm_tbs * 1e12));
    assert_true(lo.ttft_floor_s > lo.tpot_floor_s);
    assert_true(lo.max_concurrency >= 64);
    /* the KV cache bounds concurrency: fp8 KV holds about twice as many */
    dr_perfmodel_serve_est_t k16, k8;
    s.precision = DR_PREC_FP8;
    s.kv_precision = DR_PREC_BF16;
    assert_int_equal(dr_perfmodel_serve_eval(&s, gpu("H100"), 4, 0, NULL, &k16, &err), 0);
    s.kv_precision = DR_PREC_FP8;
    assert_int_equal(dr_perfmodel_serve_eval(&s, gpu("H100"), 4, 0, NULL, &k8, &err), 0);
    assert_true(k8.max_concurrency > 1.8 * k16.max_concurrency);
    /* bad request */
    s.prompt_tokens = 0;
    assert_int_equal(dr_perfmodel_serve_eval(&s, gpu("H100"), 4, 0, NULL, &e, &err), DR_EINVAL);
}

static void test_net_from_cluster(void **state)
{
    (void)state;
    dr_err_t err;
    dr_cluster_t c;
    dr_cluster_init(&c);
    assert_int_equal(dr_cluster_preset(&c, &cat, "mixed-modern", &err), 0);
    int h100 = dr_cluster_find_type(&c, "H100");
    int l40s = dr_cluster_find_type(&c, "L40S");
    assert_true(h100 >= 0 && l40s >= 0);
    dr_perfmodel_net_t n;
    assert_int_equal(dr_perfmodel_net_from_cluster(&n, &c, (unsigned)h100, &err), 0);
    assert_int_equal(n.node_gpus, 8);
    assert_true(n.intra_nvlink);
    assert_int_equal(n.kind, DR_NET_IB);
    assert_close(n.inter_gbit, 400, 1e-9);
    assert_int_equal(dr_perfmodel_net_from_cluster(&n, &c, (unsigned)l40s, &err), 0);
    assert_int_equal(n.node_gpus, 4);
    assert_false(n.intra_nvlink);
    dr_cluster_free(&c);
    /* no topology declared: Ethernet */
    dr_cluster_init(&c);
    const char *conf = "NodeName=n[1-2] Gpus=A100:8 Cpus=64 MemGB=512 NvlinkDomain=node\n";
    assert_int_equal(dr_config_parse(&c, &cat, "t.conf", conf, strlen(conf), &err), 0);
    assert_int_equal(dr_perfmodel_net_from_cluster(&n, &c, 0, &err), 0);
    assert_int_equal(n.kind, DR_NET_ETH);
    assert_int_equal(dr_perfmodel_net_from_cluster(&n, &c, 7, &err), DR_EINVAL);
    dr_cluster_free(&c);
    /* an NVLink domain spanning nodes counts all of their GPUs (of its
     * type), the largest domain wins, and one-node domains stay per node */
    dr_cluster_init(&c);
    conf = "NodeName=r[01-18] Gpus=GB200:4 Cpus=72 MemGB=480 NvlinkDomain=rack-a\n"
           "NodeName=s[01-02] Gpus=GB200:4 Cpus=72 MemGB=480 NvlinkDomain=rack-b\n"
           "NodeName=h[1-3] Gpus=H100:8 Cpus=64 MemGB=512 NvlinkDomain=node\n"
           "NodeName=x1 Gpus=H100:8 Cpus=64 MemGB=512 NvlinkDomain=rack-b\n";
    assert_int_equal(dr_config_parse(&c, &cat, "t.conf", conf, strlen(conf), &err), 0);
    assert_int_equal(dr_perfmodel_net_from_cluster(&n, &c, 0, &err), 0);
    assert_int_equal(n.node_gpus, 72);
    assert_true(n.intra_nvlink);
    assert_int_equal(dr_perfmodel_net_from_cluster(&n, &c, 1, &err), 0);
    assert_int_equal(n.node_gpus, 8); /* x1 shares rack-b with GB200s: only its own 8 count */
    dr_cluster_free(&c);
}

static void test_hint_classes(void **state)
{
    (void)state;
    dr_err_t err;
    dr_cluster_t c;
    dr_cluster_init(&c);
    assert_int_equal(dr_cluster_preset(&c, &cat, "mixed-modern", &err), 0);
    dr_workload_t wl;
    dr_workload_init(&wl);
    dr_job_t j;
    dr_job_init(&j);
    j.req.gpus_per_node = 8;
    j.hint_params = 7e9;
    j.hint_tokens = 1e10;
    j.work_declared = 0;
    j.id = 1;
    assert_int_equal(dr_workload_add(&wl, &j, j.work_declared, NULL), 0);
    j.id = 2; /* same shape: shares the class */
    assert_int_equal(dr_workload_add(&wl, &j, j.work_declared, NULL), 0);
    j.id = 3; /* a duration from the trace: kept unless asked */
    j.work_declared = 3600;
    assert_int_equal(dr_workload_add(&wl, &j, j.work_declared, NULL), 0);
    j.id = 4; /* no hints: untouched */
    j.hint_params = 0;
    assert_int_equal(dr_workload_add(&wl, &j, j.work_declared, NULL), 0);
    assert_int_equal(dr_perf_add_hint_classes(&wl, &c, false, &err), 2);
    assert_int_equal(wl.perf.nclasses, 2);
    assert_int_equal(wl.perf.ntypes, c.ntypes);
    assert_int_equal(wl.jobs[0].perf_class, 1);
    assert_int_equal(wl.jobs[1].perf_class, 1);
    assert_int_equal(wl.jobs[2].perf_class, 0);
    assert_int_equal(wl.jobs[3].perf_class, 0);
    assert_close(wl.work[0], 1e10, 1e-12);
    /* rates in tokens/s: H100 faster than A100, B200 faster than H100 */
    dr_perf_view_t v = {.table = &wl.perf};
    assert_int_equal(dr_perf_bind(&wl.perf, &c, v.map, &err), 0);
    double a100 = dr_perf_rate(&v, &wl.jobs[0], (unsigned)dr_cluster_find_type(&c, "A100"));
    double h100 = dr_perf_rate(&v, &wl.jobs[0], (unsigned)dr_cluster_find_type(&c, "H100"));
    double b200 = dr_perf_rate(&v, &wl.jobs[0], (unsigned)dr_cluster_find_type(&c, "B200"));
    assert_true(a100 > 1000 && h100 > a100 && b200 > h100);
    /* the L40S nodes have 4 GPUs and PCIe: an 8-GPU 7B job spans two of them */
    double l40s = dr_perf_rate(&v, &wl.jobs[0], (unsigned)dr_cluster_find_type(&c, "L40S"));
    assert_true(l40s > 0 && l40s < a100);
    /* with the flag, tokens replace the trace's duration */
    assert_int_equal(dr_perf_add_hint_classes(&wl, &c, true, &err), 1);
    assert_int_equal(wl.jobs[2].perf_class, 1);
    assert_close(wl.work[2], 1e10, 1e-12);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* One job's hints at a time (what the controller does at submit): the same
 * classes and rates as converting the workload, a share at that share of
 * the speed, no class for a job without hints. */
static void test_hint_class_per_job(void **state)
{
    (void)state;
    dr_err_t err;
    dr_cluster_t c;
    dr_cluster_init(&c);
    assert_int_equal(dr_cluster_preset(&c, &cat, "mixed-modern", &err), 0);
    dr_job_t j;
    dr_job_init(&j);
    j.id = 1;
    j.req.gpus_per_node = 8;
    j.hint_params = 7e9;
    j.hint_tokens = 1e10;
    dr_perf_table_t p;
    dr_perf_init(&p);
    uint32_t k = 0, k2 = 0;
    assert_int_equal(dr_perf_hint_class(&p, &c, &j, &k, &err), DR_OK);
    assert_int_equal(k, 1);
    assert_int_equal(p.ntypes, c.ntypes); /* columns: the cluster's types */
    assert_string_equal(p.class_names[1], "hint params=7e+09 gpus=8 milli=1000 bf16");
    assert_int_equal(dr_perf_hint_class(&p, &c, &j, &k2, &err), DR_OK);
    assert_int_equal(k2, 1); /* found, not added again */
    assert_int_equal(p.nclasses, 2);
    /* the workload conversion gives the same row */
    dr_workload_t wl;
    dr_workload_init(&wl);
    assert_int_equal(dr_workload_add(&wl, &j, 0, NULL), 0);
    assert_int_equal(dr_perf_add_hint_classes(&wl, &c, false, &err), 1);
    assert_int_equal(wl.perf.nclasses, 2);
    assert_int_equal(wl.perf.ntypes, p.ntypes);
    for (size_t t = 0; t < p.ntypes; t++)
        assert_true(wl.perf.rate[1 * p.ntypes + t] == p.rate[1 * p.ntypes + t]);
    /* a quarter of one GPU: a class of its own at a quarter of one GPU's
     * speed (a 1B model, which fits on one GPU) */
    j.req.gpus_per_node = 1;
    j.hint_params = 1e9;
    assert_int_equal(dr_perf_hint_class(&p, &c, &j, &k, &err), DR_OK);
    j.req.gpu_milli = 250;
    assert_int_equal(dr_perf_hint_class(&p, &c, &j, &k2, &err), DR_OK);
    assert_int_equal(k, 2);
    assert_int_equal(k2, 3);
    int h100 = dr_cluster_find_type(&c, "H100");
    assert_true(p.rate[2 * p.ntypes + (size_t)h100] > 0);
    assert_close(p.rate[3 * p.ntypes + (size_t)h100], p.rate[2 * p.ntypes + (size_t)h100] / 4,
                 1e-12);
    /* fp8 is another class */
    j.precision = DR_PREC_FP8;
    assert_int_equal(dr_perf_hint_class(&p, &c, &j, &k, &err), DR_OK);
    assert_int_equal(k, 4);
    /* no hints, no GPUs */
    j.hint_params = 0;
    assert_int_equal(dr_perf_hint_class(&p, &c, &j, &k, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "job 1: no model hints");
    j.hint_params = NAN;
    assert_int_equal(dr_perf_hint_class(&p, &c, &j, &k, &err), DR_EINVAL);
    j.hint_params = 7e9;
    j.req.gpus_per_node = 0;
    assert_int_equal(dr_perf_hint_class(&p, &c, &j, &k, &err), DR_EINVAL);
    assert_int_equal(p.nclasses, 5);
    dr_perf_free(&p);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* The model's own numbers for a few well-known runs stay in a sane band
 * (the accuracy proof is bench/plan_validation, bench/RESULTS.md). */
/* A mixture of experts: the shape follows total + active, the FLOPs the
 * active parameters, the memory all the experts; expert parallelism trades
 * memory for all-to-all time. */
static void test_moe(void **state)
{
    (void)state;
    dr_err_t err;
    /* the MoE presets reproduce their published active counts too */
    size_t n;
    const dr_plan_preset_t *p = dr_plan_presets(&n);
    size_t moes = 0;
    for (size_t i = 0; i < n; i++) {
        dr_perfmodel_arch_t x = p[i].arch;
        if (!x.experts)
            continue;
        moes++;
        assert_int_equal(dr_perfmodel_arch_complete(&x, &err), 0);
        x.active_params = 0; /* the shape's own count */
        double act = dr_perfmodel_arch_active(&x);
        if (fabs(act - p[i].arch.active_params) > 0.08 * p[i].arch.active_params) {
            print_error("%s: shape gives %.4g active, card says %.4g\n", p[i].name, act,
                        p[i].arch.active_params);
            fail();
        }
    }
    assert_true(moes >= 4);
    /* total + active alone: a dense shape of the active size, cut into 8
     * experts per token, as many experts as the total needs */
    dr_perfmodel_arch_t a = {.params = 671e9, .active_params = 37e9};
    assert_int_equal(dr_perfmodel_arch_complete(&a, &err), 0);
    assert_true(dr_perfmodel_arch_moe(&a));
    assert_int_equal(a.top_k, 8);
    assert_true(a.experts > 100 && a.experts < 400);
    assert_close(dr_perfmodel_arch_shape_params(&a), 671e9, 0.05);
    assert_close(dr_perfmodel_arch_active(&a), 37e9, 1e-9);
    a.active_params = 0;
    assert_close(dr_perfmodel_arch_active(&a), 37e9, 0.08);
    /* bad sizes name the cause */
    dr_perfmodel_arch_t over = {.params = 10e9, .active_params = 20e9};
    assert_int_equal(dr_perfmodel_arch_complete(&over, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "more than the total");
    dr_perfmodel_arch_t k = {.params = 10e9, .active_params = 2e9, .experts = 4, .top_k = 8};
    assert_int_equal(dr_perfmodel_arch_complete(&k, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "top_k 8 is more than the 4 experts");

    /* FLOPs follow the active parameters; memory the total */
    dr_perfmodel_train_t moe = job_of("mixtral-8x7b"), dense;
    dr_perfmodel_train_init(&dense);
    dense.arch = moe.arch;
    dense.arch.experts = dense.arch.top_k = dense.arch.expert_ffn = 0;
    dense.arch.shared_experts = 0;
    dense.arch.active_params = 0;
    dense.arch.params = 12.9e9;
    dense.arch.ffn = 2 * 14336; /* the width a Mixtral token passes */
    assert_int_equal(dr_perfmodel_arch_complete(&dense.arch, &err), 0);
    dr_perfmodel_train_est_t em, ed;
    assert_int_equal(dr_perfmodel_train_best(&moe, gpu("H100"), 64, NULL, &em, &err), 0);
    assert_int_equal(dr_perfmodel_train_best(&dense, gpu("H100"), 64, NULL, &ed, &err), 0);
    assert_true(em.fits && ed.fits);
    assert_close(em.model_flops_per_token, ed.model_flops_per_token, 0.02);
    assert_close(em.model_flops_per_token / (6 * 12.9e9), 1.0, 0.15);
    /* routing costs something (imbalance, all-to-all), never less than dense */
    assert_true(em.tokens_per_s < ed.tokens_per_s);
    assert_true(em.tokens_per_s > 0.4 * ed.tokens_per_s);
    /* the checkpoint is the whole model (46.7B against 12.9B) */
    assert_true(em.res.write_s > 0 && em.res.write_s > 3 * ed.res.write_s);
    /* the 46.7B of experts do not fit where the 12.9B dense model does: one
     * GPU of 80 GB with ZeRO off */
    dr_perfmodel_layout_t one = {.tp = 1, .pp = 1, .dp = 1, .zero_stage = 0};
    assert_int_equal(dr_perfmodel_train_eval(&moe, gpu("H100"), 1, &one, NULL, &em, &err), 0);
    assert_true(em.mem.weights > 2 * 40e9); /* 46.7B x 2 bytes */
    assert_int_equal(dr_perfmodel_train_eval(&dense, gpu("H100"), 1, &one, NULL, &ed, &err), 0);
    assert_true(ed.mem.weights < 2 * 14e9);

    /* expert parallelism: ep 8 holds an eighth of the experts per GPU and
     * pays for all-to-alls; ep must divide dp and the experts */
    dr_perfmodel_layout_t e1 = {.tp = 1, .pp = 1, .dp = 16, .micro_batch = 1, .zero_stage = 1},
                          e8 = e1;
    e8.ep = 8;
    dr_perfmodel_train_est_t r1, r8;
    assert_int_equal(dr_perfmodel_train_eval(&moe, gpu("H100"), 16, &e1, NULL, &r1, &err), 0);
    assert_int_equal(dr_perfmodel_train_eval(&moe, gpu("H100"), 16, &e8, NULL, &r8, &err), 0);
    assert_true(r8.mem.weights < 0.4 * r1.mem.weights);
    /* (ZeRO-3 shards the states as finely either way: there ep only adds
     * all-to-alls) */
    dr_perfmodel_layout_t z1 = {.tp = 1, .pp = 1, .dp = 64, .micro_batch = 1, .zero_stage = 3},
                          z8 = z1;
    z8.ep = 8;
    assert_int_equal(dr_perfmodel_train_eval(&moe, gpu("H100"), 64, &z1, NULL, &r1, &err), 0);
    assert_int_equal(dr_perfmodel_train_eval(&moe, gpu("H100"), 64, &z8, NULL, &r8, &err), 0);
    assert_true(r1.fits && r8.fits);
    assert_true(r1.ep_comm_s == 0 && r8.ep_comm_s > 0);
    assert_close(r8.mem.optim, r1.mem.optim, 0.01);
    dr_perfmodel_layout_t bad = e1;
    bad.ep = 3;
    assert_int_equal(dr_perfmodel_train_eval(&moe, gpu("H100"), 16, &bad, NULL, &r1, &err),
                     DR_EINVAL);
    tu_assert_contains(err.msg, "ep 3 must divide dp 16");
    /* serving: the weights held are all the experts, the FLOPs and the
     * weights a small batch reads only the experts it passes, so a MoE
     * decodes between a dense model of its active size and one of its total */
    dr_perfmodel_serve_t sm, sa, st;
    dr_perfmodel_serve_init(&sm);
    sm.arch = moe.arch;
    sm.prompt_tokens = 1024;
    sm.output_tokens = 256;
    sa = sm;
    sa.arch = dense.arch;
    st = sm;
    st.arch = dense.arch;
    st.arch.params = 0;
    st.arch.layers = 0;
    st.arch.ffn = 0;
    st.arch.params = 46.7e9;
    assert_int_equal(dr_perfmodel_arch_complete(&st.arch, &err), 0);
    dr_perfmodel_serve_est_t om, oa, ot;
    assert_int_equal(dr_perfmodel_serve_eval(&sm, gpu("H100"), 2, 64, NULL, &om, &err), 0);
    assert_int_equal(dr_perfmodel_serve_eval(&sa, gpu("H100"), 2, 64, NULL, &oa, &err), 0);
    assert_int_equal(dr_perfmodel_serve_eval(&st, gpu("H100"), 2, 64, NULL, &ot, &err), 0);
    assert_true(om.fits && oa.fits && ot.fits);
    assert_true(om.mem.weights > 3 * oa.mem.weights);
    assert_close(om.mem.weights, ot.mem.weights, 0.1);
    assert_true(om.tpot_floor_s < ot.tpot_floor_s && om.tpot_floor_s > oa.tpot_floor_s);
    assert_true(om.prefill_s < 0.6 * ot.prefill_s);
    /* a dense model has no experts to spread */
    bad.ep = 2;
    assert_int_equal(dr_perfmodel_train_eval(&dense, gpu("H100"), 16, &bad, NULL, &r1, &err),
                     DR_EINVAL);
}

/* Context parallelism: a 128K-token sequence split over cp GPUs (ring
 * attention) lets a small batch of long sequences use many GPUs without a
 * pipeline bubble, and divides the activations. */
static void test_context_parallel(void **state)
{
    (void)state;
    dr_err_t err;
    dr_perfmodel_train_t j = job_of("llama-3-70b");
    j.seq_len = 131072;
    j.global_batch = 16; /* 2M tokens: too few sequences for 512 GPUs without CP */
    dr_perfmodel_train_est_t fr, one;
    assert_int_equal(dr_perfmodel_train_best(&j, gpu("H100"), 512, NULL, &fr, &err), 0);
    assert_true(fr.fits && fr.layout.cp > 1);
    assert_true(fr.layout.tp * fr.layout.cp * fr.layout.pp * fr.layout.dp == 512);
    assert_true(fr.cp_comm_s > 0);
    j.cp = 1;
    assert_int_equal(dr_perfmodel_train_best(&j, gpu("H100"), 512, NULL, &one, &err), 0);
    assert_true(one.fits && one.layout.cp == 1 && one.cp_comm_s == 0);
    assert_true(fr.tokens_per_s > 2 * one.tokens_per_s);
    /* the same layout with cp 2 instead of a second pipeline stage... and
     * directly: activations per GPU fall with cp */
    dr_perfmodel_layout_t a = {.tp = 8,
                               .pp = 1,
                               .dp = 2,
                               .micro_batch = 1,
                               .zero_stage = 3,
                               .recompute = DR_RECOMPUTE_NONE,
                               .cp = 2},
                          b = a;
    b.cp = 4;
    b.dp = 1;
    dr_perfmodel_train_est_t ea, eb;
    j.cp = 0;
    assert_int_equal(dr_perfmodel_train_eval(&j, gpu("H100"), 32, &a, NULL, &ea, &err), 0);
    assert_int_equal(dr_perfmodel_train_eval(&j, gpu("H100"), 32, &b, NULL, &eb, &err), 0);
    assert_close(eb.mem.activations / ea.mem.activations, 0.5, 0.05);
    /* FLOPs per token do not depend on how the sequence is split */
    assert_close(ea.model_flops_per_token, eb.model_flops_per_token, 1e-9);
    /* cp must divide the sequence and multiply out to the GPUs */
    dr_perfmodel_layout_t bad = a;
    bad.cp = 3;
    bad.dp = 1;
    assert_int_equal(dr_perfmodel_train_eval(&j, gpu("H100"), 24, &bad, NULL, &ea, &err),
                     DR_EINVAL);
    tu_assert_contains(err.msg, "cp 3 does not divide the 131072-token sequence");
    bad.cp = 2;
    assert_int_equal(dr_perfmodel_train_eval(&j, gpu("H100"), 32, &bad, NULL, &ea, &err),
                     DR_EINVAL);
    tu_assert_contains(err.msg, "tp 8 x cp 2 x pp 1 x dp 1 is not 32 GPUs");
    /* short sequences never get it from the search */
    dr_perfmodel_train_t s = job_of("llama-2-7b");
    assert_int_equal(dr_perfmodel_train_best(&s, gpu("H100"), 64, NULL, &fr, &err), 0);
    assert_true(fr.fits && fr.layout.cp == 1);
}

static void test_sanity(void **state)
{
    (void)state;
    dr_err_t err;
    dr_perfmodel_train_t j = job_of("llama-2-70b");
    dr_perfmodel_train_est_t e;
    assert_int_equal(dr_perfmodel_train_best(&j, gpu("H100"), 1024, NULL, &e, &err), 0);
    assert_true(e.fits);
    assert_true(e.mfu > 0.3 && e.mfu < 0.65);
    assert_true(e.hfu >= e.mfu * 0.99);
    assert_true(e.goodput > 0.95 && e.goodput <= 1);
    /* the step's parts add up */
    double parts = e.compute_s + e.tp_comm_s + e.pp_comm_s + e.bubble_s + e.dp_comm_s + e.optim_s +
                   e.straggle_s;
    assert_close(parts, e.step_s, 1e-9);
    /* goodput falls at 16K GPUs (Llama 3: > 90% effective training time) */
    dr_perfmodel_train_t big = job_of("llama-3.1-405b");
    assert_int_equal(dr_perfmodel_train_best(&big, gpu("H100"), 16384, NULL, &e, &err), 0);
    assert_true(e.fits);
    assert_true(e.goodput > 0.90 && e.goodput < 0.95);
    assert_true(e.res.interval_s >= DR_RES_MIN_INTERVAL_S && e.res.write_s > 0);
    /* hint rate helper */
    double r;
    assert_int_equal(
        dr_perfmodel_hint_rate(7e9, DR_PREC_BF16, 8, gpu("H100"), NULL, &r, NULL, &err), 0);
    assert_true(r > 10000 && r < 200000);
    assert_int_equal(dr_perfmodel_hint_rate(-1, DR_PREC_BF16, 8, gpu("H100"), NULL, &r, NULL, &err),
                     DR_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_paper),
        cmocka_unit_test(test_activation_formulas),
        cmocka_unit_test(test_kv_cache),
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_precision),
        cmocka_unit_test(test_monotonic),
        cmocka_unit_test(test_topology),
        cmocka_unit_test(test_arch),
        cmocka_unit_test(test_serve),
        cmocka_unit_test(test_net_from_cluster),
        cmocka_unit_test(test_hint_classes),
        cmocka_unit_test(test_hint_class_per_job),
        cmocka_unit_test(test_sanity),
        cmocka_unit_test(test_moe),
        cmocka_unit_test(test_context_parallel),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
