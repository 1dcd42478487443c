/* perfmodel.c - the analytic performance and memory model of transformer
 * training and serving (include/drover/perfmodel.h), shared by the
 * schedulers (rates for jobs known only by model hints) and `drover plan`.
 *
 * Why analytic: a scheduler or planner needs an answer for GPU types and
 * scales nobody measured.  Every term below is a physical cost with its own
 * source (docs/planner.md lists them): FLOPs at the GPU's measured maximum
 * achievable matmul rate, bytes at its HBM bandwidth, collectives at the
 * bandwidth of the slowest link they cross.  One constant, PM_KERNEL_EFF,
 * is not derivable from datasheets; it is set from a single published
 * single-node measurement that is in neither validation set. */
#include "drover/perfmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- constants (sources: docs/planner.md, "Constants") ---- */

#define GIB 1073741824.0

/* Achievable fraction of datasheet HBM bandwidth: STREAM copy/triad on Azure
 * ND H100 v5 reach 2.90-2.97 of 3.35 TB/s, ND H200 v5 4.0-4.2 of 4.8 TB/s. */
#define PM_HBM_EFF 0.85
/* NCCL bus bandwidth as a fraction of the per-direction link rate
 * (nccl-tests all_reduce_perf: ~230 GB/s of NVLink3's 300 GB/s on DGX A100;
 * ~22 of 32 GB/s over PCIe 4.0 x16; ~45 of 50 GB/s on NDR InfiniBand). */
#define PM_NVLINK_EFF 0.78
#define PM_PCIE_EFF   0.70
/* Per-message latency of one collective step. */
#define PM_NVLINK_LAT_S 5e-6
#define PM_PCIE_LAT_S   10e-6
/* FlashAttention kernels run at this fraction of the GPU's large-matmul rate
 * (FlashAttention-2 paper: 50-73% of A100 peak forward, lower backward, i.e.
 * 0.57-0.84 of A100's MAMF; FlashAttention-3: 75% of H100 peak forward). */
#define PM_ATTN_REL 0.65
/* Transformer GEMMs at real shapes, with launch gaps and host overheads,
 * relative to the measured best-shape matmul rate (after the size curve
 * below).  The one calibrated constant: NeMo 24.07 runs Llama-2-7B on 8 H100
 * (FP8, TP1 PP1, GBS 128, seq 4096) at 16,934 tokens/s/GPU, and 0.716 makes
 * this model reproduce it (16,961).  That run is in neither validation set
 * (bench/plan_validation.c, docs/planner.md "Calibration"). */
#define PM_KERNEL_EFF 0.716
/* Communication hidden behind compute is not free: NCCL's kernels occupy
 * SMs (one per channel; 8-16 channels on a DGX-class node out of 108-132
 * SMs), so compute overlapped with a collective slows by about that share. */
#define PM_OVERLAP_TAX 0.12
/* Host-side memory the framework cannot use for tensors: CUDA context and
 * library workspaces (cuBLAS, NCCL buffers) plus allocator fragmentation. */
#define PM_MEM_FIXED_GIB 1.5
#define PM_MEM_FRAG      0.05
/* Mixed-precision Adam: fp32 master weights, momentum and variance. */
#define PM_ADAM_K 12.0
/* Bytes a fused Adam step touches per parameter (grad read, master, m and v
 * read and written, 16-bit weight written). */
#define PM_ADAM_BYTES 32.0
/* CPU offload: PCIe 4.0 x16 achievable host<->device bandwidth and the
 * effective host memory bandwidth of a CPU Adam step (ZeRO-Offload). */
#define PM_PCIE_HOST_GBS 25.0
#define PM_HOST_ADAM_GBS 50.0
/* At scale (docs/planner.md, "Optimism"): a collective across more nodes
 * gets less of each NIC's bandwidth (more switch hops and congestion, ring
 * and tree latencies growing with the rank count): the inter-node
 * bandwidth of a data-parallel reduction over n nodes is divided by
 * 1 + K log2(n).  And every synchronous step waits for its slowest node:
 * with a per-node step-time jitter of sigma (thermal throttling, OS noise,
 * a slow link), the expected maximum over n nodes is about
 * sigma sqrt(2 ln n) above the mean (Llama 3, sec. 3.3.4, names stragglers
 * as a cost at 16K GPUs).  Both reasoned, not fitted. */
/* Mixture of experts.  Tokens do not spread evenly over the experts: the
 * most loaded rank sets the pace.  Switch Transformers (Fedus et al. 2021,
 * sec. 2.2) train with a capacity factor of 1.0-1.25; with auxiliary-loss
 * or bias balancing (DeepSeek-V3, sec. 2.1.2) the load stays near the mean,
 * so the routed experts' compute is taken at 1.15 x the mean. */
#define PM_MOE_IMBALANCE   1.15
#define PM_NET_SCALE_K     0.03
#define PM_STRAGGLER_SIGMA 0.01
/* Inference engine cap on requests in flight (TensorRT-LLM default
 * max_batch_size) and the token budget of one engine step (max_num_tokens). */
#define PM_SERVE_MAX_BATCH  2048u
#define PM_SERVE_MAX_TOKENS 8192.0

/* ---- names ---- */

const char *dr_perfmodel_recompute_name(dr_perfmodel_recompute_t r)
{
    switch (r) {
    case DR_RECOMPUTE_NONE: return "none";
    case DR_RECOMPUTE_SELECTIVE: return "selective";
    case DR_RECOMPUTE_FULL: return "full";
    case DR_RECOMPUTE_AUTO: return "auto";
    }
    return "?";
}

int dr_perfmodel_recompute_parse(const char *s, dr_perfmodel_recompute_t *out)
{
    static const dr_perfmodel_recompute_t all[] = {DR_RECOMPUTE_NONE, DR_RECOMPUTE_SELECTIVE,
                                                   DR_RECOMPUTE_FULL, DR_RECOMPUTE_AUTO};
    for (size_t i = 0; s && i < sizeof all / sizeof *all; i++)
        if (strcasecmp(s, dr_perfmodel_recompute_name(all[i])) == 0) {
            *out = all[i];
            return DR_OK;
        }
    return DR_EINVAL;
}

const char *dr_perfmodel_netkind_name(dr_perfmodel_netkind_t k)
{
    switch (k) {
    case DR_NET_IB: return "infiniband";
    case DR_NET_ROCE: return "roce";
    case DR_NET_ETH: return "ethernet";
    case DR_NET_NKINDS: break;
    }
    return "?";
}

int dr_perfmodel_netkind_parse(const char *s, dr_perfmodel_netkind_t *out)
{
    if (!s)
        return DR_EINVAL;
    if (strcasecmp(s, "ib") == 0 || strcasecmp(s, "infiniband") == 0)
        *out = DR_NET_IB;
    else if (strcasecmp(s, "roce") == 0)
        *out = DR_NET_ROCE;
    else if (strcasecmp(s, "eth") == 0 || strcasecmp(s, "ethernet") == 0 ||
             strcasecmp(s, "tcp") == 0)
        *out = DR_NET_ETH;
    else
        return DR_EINVAL;
    return DR_OK;
}

/* Bus-bandwidth efficiency and step latency per network kind: RDMA fabrics
 * reach ~90% of line rate in nccl-tests; NCCL's TCP socket transport about
 * half, with tens of microseconds per message. */
static const struct {
    double eff, lat_s;
} netkind_props[DR_NET_NKINDS] = {
    [DR_NET_IB] = {0.90, 8e-6},
    [DR_NET_ROCE] = {0.85, 12e-6},
    [DR_NET_ETH] = {0.50, 50e-6},
};

/* Matmul efficiency falls for small matrices (tile and wave quantization,
 * launch latency).  Fitted to the cuBLASLt FP8 square-GEMM sweep published
 * for Azure ND H100 v5 (github.com/Azure/AI-benchmarking-guide,
 * Azure_Results/ND_H100_v5_results.md: 1011 / 1217 / 1290 / 1377 / 1382
 * TFLOPS at 2048 / 4096 / 8192 / 16384 / 32768): relative to the large-matrix
 * rate, r(d) = 1 / (1 + (d0/d)^k) with d the geometric mean of M, N, K,
 * d0 = 1025, k = 1.44 (0.73 at 2048, 0.88 at 4096, 0.95 at 8192). */
#define PM_GEMM_D0 1025.0
#define PM_GEMM_K  1.44

static double gemm_size_eff(double m, double n, double k)
{
    double d = cbrt(m * n * k);
    if (!(d > 0))
        return 1;
    return 1.0 / (1.0 + pow(PM_GEMM_D0 / d, PM_GEMM_K));
}

/* ---- GPU figures ---- */

static bool name_has(const dr_gpu_spec_t *g, const char *key)
{
    return g && strcasestr(g->name, key) != NULL;
}

double dr_perfmodel_peak_tflops(const dr_gpu_spec_t *gpu, dr_precision_t want, dr_precision_t *used)
{
    /* preference order per requested precision */
    static const dr_precision_t order[DR_PREC_NPREC][3] = {
        [DR_PREC_UNSET] = {DR_PREC_BF16, DR_PREC_FP16, DR_PREC_UNSET},
        [DR_PREC_FP32] = {DR_PREC_FP32, DR_PREC_UNSET, DR_PREC_UNSET},
        [DR_PREC_FP16] = {DR_PREC_FP16, DR_PREC_BF16, DR_PREC_UNSET},
        [DR_PREC_BF16] = {DR_PREC_BF16, DR_PREC_FP16, DR_PREC_UNSET},
        [DR_PREC_FP8] = {DR_PREC_FP8, DR_PREC_BF16, DR_PREC_FP16},
    };
    if (used)
        *used = DR_PREC_UNSET;
    if (!gpu || (unsigned)want >= DR_PREC_NPREC)
        return NAN;
    for (int i = 0; i < 3; i++) {
        dr_precision_t p = order[want][i];
        double v = NAN;
        switch (p) {
        case DR_PREC_FP8: v = gpu->fp8_tflops; break;
        case DR_PREC_BF16: v = gpu->bf16_tflops; break;
        case DR_PREC_FP16: v = gpu->fp16_tflops; break;
        case DR_PREC_FP32: {
            /* fp32 matmuls run as TF32 on tensor cores: half the 16-bit rate */
            double h = isfinite(gpu->bf16_tflops) && gpu->bf16_tflops > 0 ? gpu->bf16_tflops
                                                                          : gpu->fp16_tflops;
            v = h / 2;
            break;
        }
        case DR_PREC_UNSET:
        case DR_PREC_NPREC: continue;
        }
        if (isfinite(v) && v > 0) {
            if (used)
                *used = p;
            return v;
        }
    }
    return NAN;
}

/* Maximum achievable matmul TFLOPS (MAMF) measured by mamf-finder
 * (github.com/stas00/ml-engineering, compute/accelerator/README.md, "Maximum
 * Achievable Matmul FLOPS comparison table"), matched by catalog name.  The
 * efficiency is MAMF / the catalog's peak. */
static const struct {
    const char *key;
    double bf16, fp8; /* TFLOPS; 0 = not measured */
} mamf_table[] = {
    {"GB200", 1822.0, 3615.6}, {"B200", 1745.0, 3432.5}, {"H200", 794.5, 1453.4},
    {"H100", 794.5, 1402.6},   {"A100", 271.2, 0},       {"MI355X", 1565.0, 0},
    {"MI325X", 784.9, 0},      {"MI300X", 668.4, 0},
};
/* Where nothing is measured: the median efficiency of the table's entries
 * (BF16: 12 accelerators, median 78%; FP8: 8 accelerators, median 75%). */
#define PM_MAMF_DEFAULT_16 0.78
#define PM_MAMF_DEFAULT_8  0.75

double dr_perfmodel_matmul_eff(const dr_gpu_spec_t *gpu, dr_precision_t p)
{
    dr_precision_t used;
    double peak = dr_perfmodel_peak_tflops(gpu, p, &used);
    double def = used == DR_PREC_FP8 ? PM_MAMF_DEFAULT_8 : PM_MAMF_DEFAULT_16;
    if (!isfinite(peak))
        return def;
    for (size_t i = 0; i < sizeof mamf_table / sizeof *mamf_table; i++) {
        if (!name_has(gpu, mamf_table[i].key))
            continue;
        double m = used == DR_PREC_FP8 ? mamf_table[i].fp8 : mamf_table[i].bf16;
        if (m <= 0)
            return def;
        double e = m / peak;
        return e > 0.97 ? 0.97 : e;
    }
    return def;
}

uint32_t dr_perfmodel_node_gpus(const dr_gpu_spec_t *gpu)
{
    if (name_has(gpu, "NVL72"))
        return 72;
    if (name_has(gpu, "Trainium"))
        return 16; /* trn2.48xlarge: 16 chips on NeuronLink */
    if (name_has(gpu, "TPU"))
        return 256; /* one ICI pod slice */
    return 8;
}

uint32_t dr_perfmodel_host_gpus(const dr_gpu_spec_t *gpu)
{
    if (name_has(gpu, "TPU"))
        return 8; /* Cloud TPU v5e/v6e docs: 8 chips per host, 256 per pod */
    return dr_perfmodel_node_gpus(gpu);
}

void dr_perfmodel_net_default(dr_perfmodel_net_t *n, const dr_gpu_spec_t *gpu)
{
    memset(n, 0, sizeof *n);
    n->node_gpus = dr_perfmodel_node_gpus(gpu);
    if (!gpu) { /* nothing known: a PCIe host on Ethernet */
        n->intra_gbs = 64.0;
        n->kind = DR_NET_ETH;
        n->inter_gbit = 100.0 / 8.0;
        return;
    }
    const char *link = gpu->link;
    bool pcie = strncasecmp(link, "PCIe", 4) == 0 || !link[0];
    n->intra_nvlink = !pcie;
    n->intra_gbs = isfinite(gpu->link_gbs) && gpu->link_gbs > 0 ? gpu->link_gbs : 64.0;
    if (pcie) {
        /* cloud PCIe instances: 100 Gbit/s Ethernet per 8-GPU host */
        n->kind = DR_NET_ETH;
        n->inter_gbit = 100.0 / 8.0;
    } else if (strncasecmp(link, "NVLink3", 7) == 0) {
        n->kind = DR_NET_IB; /* DGX A100: 8 x 200 Gbit/s HDR */
        n->inter_gbit = 200.0;
    } else if (strncasecmp(link, "NVLink2", 7) == 0 || strncasecmp(link, "NVLink1", 7) == 0) {
        n->kind = DR_NET_IB; /* DGX-1/DGX-2 era: 4 x 100 Gbit/s EDR per 8 GPUs */
        n->inter_gbit = 50.0;
    } else if (strncasecmp(link, "Infinity", 8) == 0) {
        n->kind = DR_NET_ROCE; /* MI300X platforms: 8 x 400 Gbit/s RoCE NICs */
        n->inter_gbit = 400.0;
    } else {
        n->kind = DR_NET_IB; /* DGX H100/H200/B200, GB200: 400 Gbit/s per GPU */
        n->inter_gbit = 400.0;
    }
}

/* ---- architecture ---- */

/* Anchors for shapes from a parameter count: GPT-3 (Brown et al. 2020,
 * Table 2.1) and Megatron-LM's scaling series (Narayanan et al. 2021,
 * Table 1).  Width is interpolated in log(params). */
static const struct {
    double params;
    double hidden;
} shape_anchors[] = {
    {125e6, 768},     {350e6, 1024},    {760e6, 1536},   {1.3e9, 2048},   {2.7e9, 2560},
    {6.7e9, 4096},    {13e9, 5120},     {39.1e9, 8192},  {76.1e9, 10240}, {175e9, 12288},
    {310.1e9, 16384}, {529.6e9, 20480}, {1008e9, 25600},
};

/* Parameters of one layer a token passes through (attention, the MLP of
 * width ffn - for a mixture of experts its top-k and shared experts - and
 * the router). */
static double layer_active_params(const dr_perfmodel_arch_t *a)
{
    double h = a->hidden, hd = (double)a->hidden / a->heads;
    double hkv = (double)a->kv_heads * hd;
    double attn = h * (h + 2 * hkv) + h * h;
    double mlp = (a->glu ? 3.0 : 2.0) * h * a->ffn;
    double router = a->experts ? h * a->experts : 0;
    return attn + mlp + router + 4 * h; /* + norm scales and biases (small) */
}

/* n experts of one layer (their two or three matrices of hidden x expert_ffn). */
static double experts_params(const dr_perfmodel_arch_t *a, double n)
{
    return (a->glu ? 3.0 : 2.0) * a->hidden * a->expert_ffn * n;
}

/* The routed experts of one layer, all of them (0 for a dense model). */
static double layer_expert_params(const dr_perfmodel_arch_t *a)
{
    return a->experts ? experts_params(a, a->experts) : 0;
}

/* All parameters of one layer. */
static double layer_params(const dr_perfmodel_arch_t *a)
{
    double routed_active =
        a->experts ? experts_params(a, a->top_k < a->experts ? a->top_k : a->experts) : 0;
    return layer_active_params(a) - routed_active + layer_expert_params(a);
}

static double embed_params(const dr_perfmodel_arch_t *a)
{
    double e = (double)a->vocab * a->hidden;
    return a->untied ? 2 * e : e;
}

double dr_perfmodel_arch_shape_params(const dr_perfmodel_arch_t *a)
{
    if (!a->layers || !a->hidden || !a->heads)
        return 0;
    return a->layers * layer_params(a) + embed_params(a);
}

/* What a token passes, by the shape: active_params when published. */
static double shape_active(const dr_perfmodel_arch_t *a)
{
    if (a->active_params > 0)
        return a->active_params;
    if (!a->layers || !a->hidden || !a->heads)
        return 0;
    return a->layers * layer_active_params(a) + embed_params(a);
}

double dr_perfmodel_arch_active(const dr_perfmodel_arch_t *a)
{
    if (!a->experts)
        return a->params > 0 ? a->params : dr_perfmodel_arch_shape_params(a);
    return shape_active(a);
}

/* A mixture of experts: check the expert fields, derive what is missing
 * (docs/planner.md, "Mixtures of experts").  Called once the width and heads
 * are known; `dense_ffn` is the MLP width a dense model of that width gets. */
static bool moe_wanted(const dr_perfmodel_arch_t *a)
{
    return a->experts || a->top_k || a->expert_ffn || a->shared_experts ||
           (a->active_params > 0 && a->params > 0 && a->active_params < a->params);
}

static int moe_complete(dr_perfmodel_arch_t *a, uint32_t dense_ffn, dr_err_t *err)
{
    if (!moe_wanted(a))
        return DR_OK;
    if (!a->top_k)
        a->top_k = a->experts && a->experts < 16 ? 2 : 8;
    if (!a->expert_ffn) {
        /* the dense model's MLP cut into the experts a token passes */
        double fe = (a->ffn ? a->ffn : dense_ffn) / (double)(a->top_k + a->shared_experts);
        a->expert_ffn = (uint32_t)fmax(128, ceil(fe / 128) * 128);
    }
    a->ffn = (a->top_k + a->shared_experts) * a->expert_ffn;
    if (!a->layers) {
        double active = a->active_params > 0 ? a->active_params : 0;
        if (!(active > 0))
            return dr_err_set(err, DR_EINVAL,
                              "model: a mixture of experts needs its active parameters "
                              "(active=) or its layers");
        double n = (active - embed_params(a)) / layer_active_params(a);
        if (!(n < 100000))
            return dr_err_set(err, DR_EINVAL, "model: %.3g active parameters need %.3g layers",
                              active, n);
        a->layers = n < 1 ? 1 : (uint32_t)llround(n);
    }
    if (!a->experts) {
        if (!(a->params > 0))
            return dr_err_set(err, DR_EINVAL,
                              "model: a mixture of experts needs its total parameters or "
                              "its expert count (experts=)");
        double one = experts_params(a, 1) * a->layers;
        double inactive = a->params - shape_active(a);
        double e = round(inactive / one) + a->top_k;
        a->experts = e < a->top_k + 1 ? a->top_k + 1 : e > 100000 ? 100000 : (uint32_t)e;
    }
    if (a->top_k > a->experts)
        return dr_err_set(err, DR_EINVAL, "model: top_k %u is more than the %u experts", a->top_k,
                          a->experts);
    if (a->experts > 100000 || a->expert_ffn > 4000000)
        return dr_err_set(err, DR_EINVAL, "model: %u experts of width %u is out of range",
                          a->experts, a->expert_ffn);
    return DR_OK;
}

int dr_perfmodel_arch_complete(dr_perfmodel_arch_t *a, dr_err_t *err)
{
    if (!isfinite(a->params) || a->params < 0)
        return dr_err_set(err, DR_EINVAL, "model: parameters must be a positive number");
    if (a->params > 1e18)
        return dr_err_set(err, DR_EINVAL, "model: %.3g parameters is beyond any estimate",
                          a->params);
    if (!a->vocab)
        a->vocab = 51200;
    if (!a->seq_len)
        a->seq_len = 2048;
    bool moe = moe_wanted(a);
    if (!isfinite(a->active_params) || a->active_params < 0)
        return dr_err_set(err, DR_EINVAL, "model: active parameters must be a positive number");
    if (a->active_params > 0 && a->params > 0 && a->active_params > a->params)
        return dr_err_set(err, DR_EINVAL,
                          "model: active parameters %.3g are more than the total %.3g",
                          a->active_params, a->params);
    if (!a->hidden) {
        /* a mixture of experts is as wide as the dense model of its active size */
        double size = moe && a->active_params > 0 ? a->active_params : a->params;
        if (size <= 0)
            return dr_err_set(err, DR_EINVAL,
                              "model: give the parameter count or the shape (layers, hidden)");
        if (size < 1e6)
            return dr_err_set(err, DR_EINVAL,
                              "model: %.3g parameters is too small for a transformer estimate",
                              size);
        size_t n = sizeof shape_anchors / sizeof *shape_anchors;
        double lp = log(size), h;
        if (size <= shape_anchors[0].params) {
            h = shape_anchors[0].hidden;
        } else if (size >= shape_anchors[n - 1].params) {
            /* beyond 1T: keep Megatron's growth, width ~ params^(1/3) */
            h = shape_anchors[n - 1].hidden * cbrt(size / shape_anchors[n - 1].params);
        } else {
            size_t i = 1;
            while (shape_anchors[i].params < size)
                i++;
            double l0 = log(shape_anchors[i - 1].params), l1 = log(shape_anchors[i].params);
            double f = (lp - l0) / (l1 - l0);
            h = exp(log(shape_anchors[i - 1].hidden) * (1 - f) + log(shape_anchors[i].hidden) * f);
        }
        /* multiples of 128 (heads of 128), of 512 from 2048 and of 1024 from
         * 8192, so that the head count splits over 4 or 8 tensor-parallel GPUs */
        double q = h >= 8192 ? 1024 : h >= 2048 ? 512 : 128;
        uint32_t hi = (uint32_t)(round(h / q) * q);
        a->hidden = hi < 128 ? 128 : hi;
    }
    if (!a->heads)
        a->heads = a->hidden >= 128 && a->hidden % 128 == 0 ? a->hidden / 128 : 1;
    if (!a->kv_heads)
        a->kv_heads = a->heads;
    if (!a->ffn) {
        if (a->glu) /* LLaMA: 2/3 of 4h, rounded up to a multiple of 256 */
            a->ffn = (uint32_t)(ceil(8.0 * a->hidden / 3.0 / 256.0) * 256.0);
        else
            a->ffn = 4 * a->hidden;
    }
    if (a->hidden % a->heads != 0)
        return dr_err_set(err, DR_EINVAL, "model: hidden %u is not a multiple of heads %u",
                          a->hidden, a->heads);
    if (a->heads % a->kv_heads != 0)
        return dr_err_set(err, DR_EINVAL, "model: heads %u is not a multiple of kv_heads %u",
                          a->heads, a->kv_heads);
    int rc = moe_complete(a, a->ffn, err);
    if (rc)
        return rc;
    if (!a->layers) {
        double per = layer_params(a);
        double n = (a->params - embed_params(a)) / per;
        if (!(n < 100000))
            return dr_err_set(err, DR_EINVAL,
                              "model: %.3g parameters would need %.3g layers of width %u",
                              a->params, n, a->hidden);
        a->layers = n < 1 ? 1 : (uint32_t)llround(n);
    }
    if (a->layers > 100000 || a->hidden > 1000000 || a->ffn > 4000000 || a->vocab > 100000000 ||
        a->seq_len > 100000000)
        return dr_err_set(err, DR_EINVAL, "model: shape out of range (layers %u, hidden %u)",
                          a->layers, a->hidden);
    if (a->params <= 0)
        a->params = dr_perfmodel_arch_shape_params(a);
    return DR_OK;
}

double dr_perfmodel_default_batch(const dr_perfmodel_arch_t *a, uint32_t seq_len)
{
    if (!seq_len)
        seq_len = a->seq_len ? a->seq_len : 2048;
    double tok = a->batch_tokens;
    if (tok <= 0) { /* GPT-3 paper, Table 2.1: batch size by model size */
        double n = a->params;
        tok = n <= 0.8e9 ? 0.5e6 : n <= 3e9 ? 1e6 : n <= 20e9 ? 2e6 : 3.2e6;
    }
    double b = round(tok / seq_len);
    return b < 1 ? 1 : b;
}

/* ---- memory ---- */

double dr_perfmodel_zero_bytes(double params, int stage, uint32_t nd, double k)
{
    double d = nd ? nd : 1;
    switch (stage) {
    case 0: return (2 + 2 + k) * params;
    case 1: return 4 * params + k * params / d;
    case 2: return 2 * params + (2 + k) * params / d;
    default: return (2 + 2 + k) * params / d;
    }
}

/* Korthikanti et al. (2022) count activations per layer as s·b·h times
 * (34 + 5as/h) for a GPT block: 10 units replicated across tensor-parallel
 * ranks (two layer-norm inputs 4, QKV and MLP inputs 2 + 2, dropout masks 2)
 * and 24 split (Q, K 4, V 2, projection input 2, MLP 8 + 8), plus the s x s
 * softmax, its dropout mask and output (5as/h).  The same bookkeeping
 * generalises to GQA (K and V are kv/a of Q), gated MLPs (three ffn-wide
 * tensors) and models without dropout. */
double dr_perfmodel_activation_bytes(const dr_perfmodel_arch_t *a, uint32_t seq, uint32_t micro,
                                     uint32_t tp, bool seq_parallel, dr_perfmodel_recompute_t rc,
                                     bool flash)
{
    double s = seq, b = micro, h = a->hidden, t = tp ? tp : 1;
    double sbh = s * b * h;
    if (rc == DR_RECOMPUTE_FULL) /* only the layer input, sharded with SP */
        return 2 * sbh / (seq_parallel ? t : 1);
    double g = a->kv_heads ? (double)a->kv_heads / a->heads : 1.0;
    double fh = (double)a->ffn / h;
    double repl = 4 + 2 + 2 + (a->dropout ? 2 : 0);
    double split = 2 + 4 * g + 2 + (a->glu ? 6 : 4) * fh;
    double quad = 0;
    if (!flash && rc != DR_RECOMPUTE_SELECTIVE)
        quad = (a->dropout ? 5.0 : 2.0) * a->heads * s / h;
    if (seq_parallel)
        return sbh * ((repl + split) / t + quad / t);
    return sbh * (repl + split / t + quad / t);
}

double dr_perfmodel_kv_bytes_per_token(const dr_perfmodel_arch_t *a, double bytes_per_elem)
{
    double hd = (double)a->hidden / (a->heads ? a->heads : 1);
    return 2.0 * a->layers * (a->kv_heads ? a->kv_heads : a->heads) * hd * bytes_per_elem;
}

static double usable_bytes(const dr_gpu_spec_t *gpu)
{
    double cap = gpu->mem_gb * GIB;
    return cap * (1 - PM_MEM_FRAG) - PM_MEM_FIXED_GIB * GIB;
}

static double prec_bytes(dr_precision_t p)
{
    switch (p) {
    case DR_PREC_FP8: return 1;
    case DR_PREC_FP32: return 4;
    default: return 2;
    }
}

/* ---- collectives ---- */

/* Ring all-reduce of `bytes` over n ranks at `gbs` GB/s per direction, with
 * a log-depth latency term (NCCL switches to trees at scale). */
static double allreduce_s(double bytes, double n, double gbs, double lat)
{
    if (n <= 1 || bytes <= 0)
        return 0;
    return 2 * (n - 1) / n * bytes / (gbs * 1e9) + 2 * ceil(log2(n)) * lat;
}

typedef struct links {
    double intra_gbs, intra_lat; /* per direction, achievable */
    double inter_gbs, inter_lat;
    uint32_t node;
} links_t;

static links_t make_links(const dr_perfmodel_net_t *net)
{
    links_t l;
    l.node = net->node_gpus ? net->node_gpus : 1;
    double eff = net->intra_nvlink ? PM_NVLINK_EFF : PM_PCIE_EFF;
    l.intra_gbs = (net->intra_gbs > 0 ? net->intra_gbs : 64.0) / 2 * eff;
    l.intra_lat = net->intra_nvlink ? PM_NVLINK_LAT_S : PM_PCIE_LAT_S;
    dr_perfmodel_netkind_t k = (unsigned)net->kind < DR_NET_NKINDS ? net->kind : DR_NET_ETH;
    double gbit = net->inter_gbit > 0 ? net->inter_gbit : 100.0 / 8;
    l.inter_gbs = gbit / 8 * netkind_props[k].eff;
    l.inter_lat = netkind_props[k].lat_s;
    /* a network faster than the in-node link still goes through it */
    if (l.inter_gbs > l.intra_gbs)
        l.inter_gbs = l.intra_gbs;
    return l;
}

/* ---- training ---- */

void dr_perfmodel_train_init(dr_perfmodel_train_t *t)
{
    memset(t, 0, sizeof *t);
    t->precision = DR_PREC_BF16;
    t->zero_stage = -1;
    t->recompute = DR_RECOMPUTE_AUTO;
    t->flash_attention = true;
    t->seq_parallel = true;
    t->tp_overlap = true;
}

/* The job's sequence length: its own, else the model's, else 2048. */
static uint32_t job_seq(const dr_perfmodel_train_t *job)
{
    return job->seq_len ? job->seq_len : job->arch.seq_len ? job->arch.seq_len : 2048;
}

/* Everything the step-time model needs, resolved once per evaluation. */
typedef struct ctx {
    const dr_perfmodel_train_t *job;
    const dr_perfmodel_arch_t *a;
    const dr_gpu_spec_t *gpu;
    links_t ln;
    double seq;
    double batch; /* sequences per step requested */
    dr_precision_t prec;
    double peak_lin, peak_16; /* FLOP/s */
    double eff_lin, eff_16;
    double hbm;          /* bytes/s achievable */
    double params_model; /* for model FLOPs (published count when given; active for MoE) */
    double params_total; /* what a checkpoint holds */
    double per_layer, emb;
    double per_layer_exp; /* of per_layer: the routed experts, spread over the EP ranks */
} ctx_t;

static int ctx_init(ctx_t *c, const dr_perfmodel_train_t *job, const dr_gpu_spec_t *gpu,
                    const dr_perfmodel_net_t *net, dr_err_t *err)
{
    memset(c, 0, sizeof *c);
    c->job = job;
    c->a = &job->arch;
    c->gpu = gpu;
    const dr_perfmodel_arch_t *a = c->a;
    if (!a->layers || !a->hidden || !a->heads || !a->ffn || !a->vocab)
        return dr_err_set(err, DR_EINVAL,
                          "model: shape incomplete (call dr_perfmodel_arch_complete)");
    c->seq = job_seq(job);
    c->batch =
        job->global_batch > 0 ? job->global_batch : dr_perfmodel_default_batch(a, (uint32_t)c->seq);
    if (!isfinite(c->batch) || c->batch < 1 || c->batch > 1e9)
        return dr_err_set(err, DR_EINVAL, "global batch: %g sequences is out of range",
                          job->global_batch);
    dr_precision_t want = job->precision == DR_PREC_UNSET ? DR_PREC_BF16 : job->precision;
    double pl = dr_perfmodel_peak_tflops(gpu, want, &c->prec);
    dr_precision_t p16;
    double p2 =
        dr_perfmodel_peak_tflops(gpu, c->prec == DR_PREC_FP32 ? DR_PREC_FP32 : DR_PREC_BF16, &p16);
    if (!isfinite(pl) || !isfinite(p2)) {
        c->prec = DR_PREC_UNSET;
        return DR_OK; /* the caller reports "no known FLOPS" as a non-fit */
    }
    c->peak_lin = pl * 1e12;
    c->peak_16 = p2 * 1e12;
    c->eff_lin = dr_perfmodel_matmul_eff(gpu, c->prec);
    c->eff_16 = dr_perfmodel_matmul_eff(gpu, p16);
    double bw = isfinite(gpu->hbm_tbs) && gpu->hbm_tbs > 0 ? gpu->hbm_tbs : 1.0;
    c->hbm = bw * 1e12 * PM_HBM_EFF;
    c->ln = make_links(net);
    c->per_layer = layer_params(a);
    c->per_layer_exp = layer_expert_params(a);
    c->emb = (double)a->vocab * a->hidden;
    c->params_total = a->params > 0 ? a->params : dr_perfmodel_arch_shape_params(a);
    c->params_model = dr_perfmodel_arch_active(a);
    return DR_OK;
}

/* Time of one layer (forward + backward, recomputation included) for one
 * micro-batch of T tokens on one GPU, split into compute and TP comm. */
typedef struct layer_cost {
    double compute_s, tp_s, ep_s, cp_s, hw_flops;
} layer_cost_t;

/* GEMM time per FLOP (relative) of the MLP's up (gate) and down
 * projections, weighted by their FLOPs.  For a mixture of experts the routed
 * experts run as one grouped GEMM per projection (Megatron-Core, DeepSpeed-
 * MoE, torchtitan): its size is all T x top_k tokens routed to the rank, and
 * an expert that gets fewer tokens than one 128-row tile (T x top_k x ep /
 * experts on average: each EP rank holds experts/ep of them and receives
 * from ep ranks) wastes the rest of the tile.  The shared experts see all T
 * tokens. */
static double mlp_time_per_flop(const ctx_t *c, double T, double t, uint32_t ep)
{
    const dr_perfmodel_arch_t *a = c->a;
    double h = a->hidden, gk = a->glu ? 2 : 1;
    if (!a->experts) {
        double f = a->ffn;
        return (gk * f / t / gemm_size_eff(T, gk * f / t, h) + f / t / gemm_size_eff(T, h, f / t)) /
               ((gk + 1) * f / t);
    }
    double fe = a->expert_ffn, k = a->top_k, sh = a->shared_experts;
    double me = T * k * (ep ? ep : 1) / a->experts, mk = T * k;
    double tile = me < 128 ? 128 / fmax(me, 1) : 1;
    double routed = (gk / gemm_size_eff(mk, gk * fe / t, h) + 1 / gemm_size_eff(mk, h, fe / t)) /
                    (gk + 1) * PM_MOE_IMBALANCE * tile;
    double shared =
        (gk / gemm_size_eff(T, gk * fe / t, h) + 1 / gemm_size_eff(T, h, fe / t)) / (gk + 1);
    return (k * routed + sh * shared) / (k + sh);
}

static layer_cost_t layer_time(const ctx_t *c, double mb, uint32_t tp, uint32_t ep, uint32_t cp,
                               dr_perfmodel_recompute_t rc)
{
    const dr_perfmodel_arch_t *a = c->a;
    const dr_perfmodel_train_t *job = c->job;
    /* with context parallelism each GPU holds T = mb x s / cp of the
     * tokens; its queries still attend over all s keys */
    double cpd = cp > 1 ? cp : 1;
    double t = tp, s = c->seq, T = mb * s / cpd, h = a->hidden;
    double hd = h / a->heads, hkv = a->kv_heads * hd, f = a->ffn;
    bool flash = job->flash_attention, sp = job->seq_parallel && tp > 1;
    bool full = rc == DR_RECOMPUTE_FULL, sel = rc == DR_RECOMPUTE_SELECTIVE;

    /* matmuls: forward 1, backward 2 (input and weight gradients), +1 forward
     * when the whole layer is recomputed */
    double f_lin = 2 * T * (h * (h + 2 * hkv) + h * h + (a->glu ? 3 : 2) * h * f) / t;
    double lin_passes = 3 + (full ? 1 : 0);
    /* each GEMM at the rate its shape allows (M = tokens, the TP-split side) */
    double rate = c->peak_lin * c->eff_lin * PM_KERNEL_EFF;
    double gk = a->glu ? 3 : 2;
    double t_lin =
        2 * T * lin_passes / rate *
        (h * (h + 2 * hkv) / t / gemm_size_eff(T, (h + 2 * hkv) / t, h) +
         h * h / t / gemm_size_eff(T, h, h / t) + gk * h * f / t * mlp_time_per_flop(c, T, t, ep));

    /* attention core: QK^T and AV, 4·T·s·h; FlashAttention skips the masked
     * half and recomputes the scores in its backward (2.5x forward) */
    double f_att = 4 * T * s * h / t * (flash ? 0.5 : 1.0);
    double att_passes = (flash ? 3.5 : 3.0) + (full || (sel && !flash) ? 1 : 0);
    double t_att;
    if (flash)
        t_att = f_att * att_passes / (c->peak_16 * c->eff_16 * PM_ATTN_REL);
    else
        t_att = f_att * att_passes / (c->peak_16 * c->eff_16 * PM_KERNEL_EFF);

    /* memory-bound element-wise kernels, bytes per token, forward: two
     * layer norms (read + write), two residual adds (two reads, one write,
     * a dropout mask), the activation function, the explicit softmax
     * (scores written, read, probabilities written, mask, dropout output,
     * read by AV), fp8 casts of the four GEMM inputs */
    double repl = 8 * h + 2 * (6 * h + (a->dropout ? h : 0));
    double split = (a->glu ? 6 : 4) * f;
    double soft = flash ? 0 : 11.0 * a->heads * s;
    double cast = c->prec == DR_PREC_FP8 ? 4 * (3 * h + f) : 0;
    double fwd = repl / (sp ? t : 1) + (split + soft + cast) / t;
    double ew = fwd * 3 + (full ? fwd : 0) + (sel && !flash ? soft / t : 0);
    double t_mem = T * ew / c->hbm;

    /* tensor parallel: two all-reduces (or reduce-scatter + all-gather pairs
     * with SP, the same volume) forward, two backward, two more when the
     * forward is recomputed.  Megatron does not overlap them with compute. */
    layer_cost_t lc = {0, 0, 0, 0, 0};
    if (cp > 1) {
        /* context parallelism (ring attention, Megatron-Core's CP): the K and
         * V of each GPU's chunk go round the cp ranks, cp - 1 sends of
         * T x 2 x kv width x 2 bytes (its TP share) in the forward, twice
         * that in the backward (K/V again and their gradients), once more
         * when the forward is recomputed; overlapped with the attention
         * compute, as Megatron-Core does */
        double chunk = T * 2 * hkv * 2 / t;
        bool in_node = (uint64_t)tp * cp <= c->ln.node;
        double gbs = in_node ? c->ln.intra_gbs : c->ln.inter_gbs;
        double lat = in_node ? c->ln.intra_lat : c->ln.inter_lat;
        double passes = 3 + (full ? 1 : 0);
        double ring = passes * (cpd - 1) * (chunk / (gbs * 1e9) + lat);
        lc.cp_s = fmax(0, ring - t_att) + PM_OVERLAP_TAX * fmin(ring, t_att);
    }
    if (a->experts && ep > 1) {
        /* expert parallelism: each token's hidden state goes to its top_k
         * experts and comes back (dispatch and combine, 16-bit), in the
         * forward and again in the backward (and the recomputed forward);
         * with sequence parallelism each TP rank sends its share.  What goes
         * to ranks in the node crosses NVLink, the rest each GPU's NIC.  Not
         * overlapped: DeepSeek-V3's DualPipe hides it, ordinary stacks do
         * not (docs/planner.md, "Mixtures of experts"). */
        double bytes = T / (sp ? t : 1) * a->top_k * h * 2;
        double local = c->ln.node / t;
        local = local < 1 ? 1 : local > ep ? ep : local;
        double on = (local - 1) / ep, off = (ep - local) / ep;
        double one = bytes * on / (c->ln.intra_gbs * 1e9) + bytes * off / (c->ln.inter_gbs * 1e9) +
                     (off > 0 ? c->ln.inter_lat : c->ln.intra_lat) * 2;
        lc.ep_s = (4 + (full ? 2 : 0)) * one;
    }
    if (tp > 1) {
        double bytes = T * h * 2;
        bool in_node = tp <= c->ln.node;
        double gbs = in_node ? c->ln.intra_gbs : c->ln.inter_gbs;
        double lat = in_node ? c->ln.intra_lat : c->ln.inter_lat;
        lc.tp_s = (4 + (full ? 2 : 0)) * allreduce_s(bytes, t, gbs, lat);
        /* TransformerEngine/Megatron-Core split the GEMMs and overlap the TP
         * collectives with them: only what the GEMMs cannot cover shows,
         * plus the SM share NCCL takes meanwhile */
        if (job->tp_overlap) {
            double cover = t_lin;
            lc.tp_s = fmax(0, lc.tp_s - cover) + PM_OVERLAP_TAX * fmin(lc.tp_s, cover);
        }
    }
    lc.compute_s = t_lin + t_att + t_mem;
    lc.hw_flops = f_lin * lin_passes + f_att / (flash ? 0.5 : 1.0) * (3 + (full || sel ? 1 : 0));
    return lc;
}

/* The output layer and loss on the last pipeline stage for one micro-batch:
 * logits GEMM forward and backward in 16 bit, fp32 softmax cross-entropy. */
static double head_time(const ctx_t *c, double mb, uint32_t tp, uint32_t cp)
{
    double T = mb * c->seq / (cp > 1 ? cp : 1), V = c->a->vocab, h = c->a->hidden;
    double flops = 2 * T * h * V / tp * 3;
    double bytes = T * 20 * V / tp;
    return flops / (c->peak_16 * c->eff_16 * PM_KERNEL_EFF) + bytes / c->hbm;
}

static uint32_t ceil_div(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}

static uint32_t microbatches(double batch, uint32_t dp, uint32_t mb)
{
    double m = round(batch / ((double)dp * mb));
    return m < 1 ? 1 : m > 1e9 ? 1000000000u : (uint32_t)m;
}

/* Does a layout run close enough to the requested global batch? */
static bool batch_ok(double batch, uint32_t dp, uint32_t mb)
{
    double eff = (double)microbatches(batch, dp, mb) * dp * mb;
    return eff >= 0.75 * batch && eff <= 1.25 * batch;
}

/* One layer's parameters held per TP rank: the dense part, and the routed
 * experts spread over ep ranks. */
static double layer_share(const ctx_t *c, double ep)
{
    return c->per_layer - c->per_layer_exp + c->per_layer_exp / ep;
}

/* The parameters of the most loaded pipeline stage held per GPU: the dense
 * part split by TP (first/last stage also hold an embedding, both when pp
 * is 1), and the routed experts also spread over the EP ranks. */
static void stage_params(const ctx_t *c, const dr_perfmodel_layout_t *l, double *dense,
                         double *experts)
{
    const dr_perfmodel_arch_t *a = c->a;
    double layers = l->pp == 1 ? a->layers : ceil_div(a->layers, l->pp);
    double emb = l->pp == 1 ? embed_params(a) : c->emb;
    *dense = (layers * (c->per_layer - c->per_layer_exp) + emb) / l->tp;
    *experts = layers * c->per_layer_exp / l->tp / (l->ep > 1 ? l->ep : 1);
}

/* Memory per GPU of a layout (the most loaded pipeline stage). */
static void train_memory(const ctx_t *c, const dr_perfmodel_layout_t *l, uint32_t m,
                         dr_perfmodel_mem_t *mem)
{
    const dr_perfmodel_arch_t *a = c->a;
    const dr_perfmodel_train_t *job = c->job;
    /* ZeRO shards over all the ranks that hold the same weights: dp x cp */
    double cpd = l->cp > 1 ? l->cp : 1;
    double t = l->tp, d = l->dp * cpd, e = l->ep > 1 ? l->ep : 1;
    uint32_t lp = ceil_div(a->layers, l->pp);
    /* ZeRO shards the experts' states over the dp / ep ranks that hold the
     * same experts */
    double psi, psi_e;
    stage_params(c, l, &psi, &psi_e);
    bool fp32 = c->prec == DR_PREC_FP32;
    double wb = fp32 ? 4 : 2, gb = fp32 || job->grad_fp32 ? 4 : 2, k = fp32 ? 8 : PM_ADAM_K;
    int z = l->zero_stage < 0 ? 0 : l->zero_stage;
    double de = d / e;
    memset(mem, 0, sizeof *mem);
    mem->weights = psi * wb / (z >= 3 ? d : 1) + psi_e * wb / (z >= 3 ? de : 1);
    mem->grads = psi * gb / (z >= 2 ? d : 1) + psi_e * gb / (z >= 2 ? de : 1);
    mem->optim = job->cpu_offload ? 0 : psi * k / (z >= 1 ? d : 1) + psi_e * k / (z >= 1 ? de : 1);
    if (z >= 3) /* gathered parameters of the layer in use and the next (prefetch) */
        mem->weights += 2 * layer_share(c, e) / t * wb;

    bool sp = job->seq_parallel && l->tp > 1;
    uint32_t seq_local = (uint32_t)(c->seq / cpd); /* context parallelism splits it */
    double act = dr_perfmodel_activation_bytes(a, seq_local, l->micro_batch, l->tp, sp,
                                               l->recompute, job->flash_attention);
    /* 1F1B: the first stage holds up to pp micro-batches in flight (more with
     * interleaving, Narayanan et al. 2021 sec. 2.2.2) */
    double inflight = l->pp < m ? l->pp : m;
    if (l->interleave > 1 && l->pp > 1)
        inflight *= 1 + (double)(l->pp - 1) / ((double)l->pp * l->interleave);
    double first = act * lp * inflight;
    /* one layer's full activations while recomputing: with explicit attention
     * (no FlashAttention) that includes its s x s scores and probabilities */
    if (l->recompute == DR_RECOMPUTE_FULL)
        first += dr_perfmodel_activation_bytes(a, seq_local, l->micro_batch, l->tp, sp,
                                               job->flash_attention ? DR_RECOMPUTE_SELECTIVE
                                                                    : DR_RECOMPUTE_NONE,
                                               job->flash_attention);
    /* last stage: one micro-batch plus fp32 logits and their gradient */
    double logits = 2 * 4.0 * seq_local * l->micro_batch * a->vocab / t;
    double last = act * lp + logits;
    if (l->pp == 1)
        first += logits;
    mem->activations = first > last ? first : last;
    double cap = c->gpu->mem_gb * GIB;
    mem->capacity = cap;
    mem->overhead = cap - usable_bytes(c->gpu);
    mem->total = mem->weights + mem->grads + mem->optim + mem->activations + mem->overhead;
}

static void fmt_gb(char *buf, size_t n, const dr_perfmodel_mem_t *m)
{
    snprintf(buf, n,
             "needs %.1f GB per GPU (weights %.1f, gradients %.1f, optimizer %.1f, "
             "activations %.1f, runtime %.1f) but the GPU has %.0f GB",
             m->total / GIB, m->weights / GIB, m->grads / GIB, m->optim / GIB, m->activations / GIB,
             m->overhead / GIB, m->capacity / GIB);
}

static int check_layout(const dr_perfmodel_train_t *job, uint32_t gpus,
                        const dr_perfmodel_layout_t *l, dr_err_t *err)
{
    if (!gpus)
        return dr_err_set(err, DR_EINVAL, "GPUs: must be at least 1");
    uint32_t cp = l->cp > 1 ? l->cp : 1;
    if ((uint64_t)l->tp * cp * l->pp * l->dp != gpus) {
        if (cp > 1)
            return dr_err_set(err, DR_EINVAL,
                              "layout: tp %u x cp %u x pp %u x dp %u is not %u GPUs", l->tp, cp,
                              l->pp, l->dp, gpus);
        return dr_err_set(err, DR_EINVAL, "layout: tp %u x pp %u x dp %u is not %u GPUs", l->tp,
                          l->pp, l->dp, gpus);
    }
    uint32_t seq = job_seq(job);
    if (cp > 1 && seq % cp)
        return dr_err_set(err, DR_EINVAL, "layout: cp %u does not divide the %u-token sequence", cp,
                          seq);
    if (job->arch.heads % l->tp != 0)
        return dr_err_set(err, DR_EINVAL, "layout: tp %u does not divide %u attention heads", l->tp,
                          job->arch.heads);
    if (l->pp > job->arch.layers)
        return dr_err_set(err, DR_EINVAL, "layout: pp %u is more than %u layers", l->pp,
                          job->arch.layers);
    if (l->zero_stage > 3)
        return dr_err_set(err, DR_EINVAL, "layout: ZeRO stage %d (0-3)", l->zero_stage);
    if (l->ep > 1 && (!job->arch.experts || l->dp % l->ep || job->arch.experts % l->ep))
        return dr_err_set(err, DR_EINVAL,
                          "layout: ep %u must divide dp %u and the model's %u experts", l->ep,
                          l->dp, job->arch.experts);
    return DR_OK;
}

/* The step model for a complete, valid layout. */
static void eval_layout(const ctx_t *c, uint32_t gpus, const dr_perfmodel_layout_t *l,
                        dr_perfmodel_train_est_t *o)
{
    const dr_perfmodel_arch_t *a = c->a;
    const dr_perfmodel_train_t *job = c->job;
    memset(o, 0, sizeof *o);
    o->layout = *l;
    o->gpus = gpus;
    o->precision = c->prec;
    o->peak_tflops = c->peak_lin / 1e12;
    o->nodes = ceil_div(gpus, c->ln.node);
    double seq = c->seq;
    /* micro-batches per step: the multiple of dp x micro-batch nearest the
     * requested global batch (the layout search keeps it within 25%) */
    uint32_t m = microbatches(c->batch, l->dp, l->micro_batch);
    o->microbatches = m;
    o->global_batch = (double)m * l->dp * l->micro_batch;
    train_memory(c, l, m, &o->mem);
    o->model_flops_per_token = 6 * c->params_model + 12.0 * a->layers * a->hidden * seq;
    if (o->mem.total > o->mem.capacity) {
        fmt_gb(o->reason, sizeof o->reason, &o->mem);
        return;
    }
    uint32_t lp = ceil_div(a->layers, l->pp);
    double cpd = l->cp > 1 ? l->cp : 1;
    layer_cost_t lc = layer_time(c, l->micro_batch, l->tp, l->ep, l->cp, l->recompute);
    double t_head = head_time(c, l->micro_batch, l->tp, l->cp);
    double stage_compute = lp * lc.compute_s + t_head;
    double stage_tp = lp * lc.tp_s, stage_ep = lp * lc.ep_s, stage_cp = lp * lc.cp_s;
    double stage = stage_compute + stage_tp + stage_ep + stage_cp;

    /* pipeline: 1F1B with (p-1)/v bubble; activations (and gradients) cross
     * each stage boundary once per micro-batch and virtual stage, split over
     * the TP ranks (Megatron's scatter/gather) */
    double p2p = 0, bubble = 0;
    if (l->pp > 1) {
        double v = l->interleave ? l->interleave : 1;
        bool in_node = (uint64_t)l->tp * (uint64_t)cpd * l->dp * l->pp <= c->ln.node;
        double gbs = in_node ? c->ln.intra_gbs : c->ln.inter_gbs;
        double lat = in_node ? c->ln.intra_lat : c->ln.inter_lat;
        double bytes = l->micro_batch * seq / cpd * a->hidden * 2 / l->tp;
        double msg = bytes / (gbs * 1e9) + lat;
        /* sends overlap the next micro-batch's compute in steady state; the
         * warm-up and cool-down chain of 2(p-1) sends is exposed */
        double all = m * v * 2 * msg, warm = 2.0 * (l->pp - 1) * msg;
        p2p = fmin(all, warm) + PM_OVERLAP_TAX * fmax(0, all - warm);
        bubble = (l->pp - 1) / v * stage;
    }

    /* data parallel: gradients reduced once per step (ZeRO 0-2; reduce-
     * scatter + all-gather has the all-reduce's volume), hierarchically: in
     * the node over NVLink, then across nodes over each GPU's own NIC */
    double dense, experts;
    stage_params(c, l, &dense, &experts);
    double stage_p = dense + experts;
    bool fp32 = c->prec == DR_PREC_FP32;
    double gbytes = stage_p * (fp32 || job->grad_fp32 ? 4 : 2);
    double dp_s = 0;
    /* the weights are replicated over dp x cp ranks: the gradients are
     * reduced (and ZeRO shards) over all of them */
    uint32_t dpx = l->dp * (uint32_t)cpd;
    if (dpx > 1) {
        uint32_t per_node = c->ln.node / l->tp;
        if (per_node < 1)
            per_node = 1;
        if (per_node > dpx)
            per_node = dpx;
        uint32_t nodes = ceil_div(dpx, per_node);
        double inter = c->ln.inter_gbs / (1 + PM_NET_SCALE_K * log2(nodes > 1 ? nodes : 1));
        double ar = allreduce_s(gbytes, per_node, c->ln.intra_gbs, c->ln.intra_lat) +
                    allreduce_s(gbytes / per_node, nodes, inter, c->ln.inter_lat);
        /* hidden behind the backward pass of the last micro-batch (ZeRO-3:
         * behind each micro-batch, whose parameters are gathered for the
         * forward and again for the backward); while hidden, NCCL's kernels
         * still take SMs from the compute they overlap */
        double window = stage_compute * 2.0 / 3.0;
        if (l->zero_stage >= 3) {
            /* per micro-batch: an all-gather of the parameters before the
             * forward, another before the backward, a reduce-scatter of the
             * gradients after it, each half the all-reduce's volume.  The
             * forward's gather can only hide behind the forward (1 of the 3
             * GEMM passes, 1 of 4 with full recomputation), the backward's
             * gather and reduce-scatter behind the backward */
            double ag = 0.5 * ar + lp * 2 * ceil(log2(dpx)) * c->ln.inter_lat;
            double fwd = stage_compute / (l->recompute == DR_RECOMPUTE_FULL ? 4.0 : 3.0);
            double bwd = stage_compute - fwd;
            dp_s = m * (fmax(0, ag - fwd) + PM_OVERLAP_TAX * fmin(ag, fwd) + fmax(0, 2 * ag - bwd) +
                        PM_OVERLAP_TAX * fmin(2 * ag, bwd));
        } else {
            dp_s = fmax(0, ar - window) + PM_OVERLAP_TAX * fmin(ar, window);
        }
    }

    int z = l->zero_stage < 0 ? 0 : l->zero_stage;
    double shard = stage_p / (z >= 1 ? dpx : 1);
    double opt = shard * PM_ADAM_BYTES / c->hbm;
    if (job->cpu_offload)
        opt = shard * (4 / (PM_PCIE_HOST_GBS * 1e9) + PM_ADAM_BYTES / (PM_HOST_ADAM_GBS * 1e9));

    o->compute_s = m * stage_compute;
    o->tp_comm_s = m * stage_tp;
    o->ep_comm_s = m * stage_ep;
    o->cp_comm_s = m * stage_cp;
    o->pp_comm_s = p2p;
    o->bubble_s = bubble;
    o->dp_comm_s = dp_s;
    o->optim_s = opt;
    double base = m * stage + p2p + bubble + dp_s + opt;
    o->straggle_s = o->nodes > 1 ? base * PM_STRAGGLER_SIGMA * sqrt(2 * log(o->nodes)) : 0;
    o->step_s = base + o->straggle_s;
    double tokens_step = o->global_batch * seq;
    o->tokens_per_s = tokens_step / o->step_s;
    o->samples_per_s = o->global_batch / o->step_s;
    o->achieved_tflops_per_gpu = o->tokens_per_s * o->model_flops_per_token / gpus / 1e12;
    o->mfu = o->achieved_tflops_per_gpu / o->peak_tflops;
    double hw_per_token =
        lc.hw_flops * l->tp * cpd * a->layers / (l->micro_batch * seq) + 6.0 * a->vocab * a->hidden;
    o->hfu = o->tokens_per_s * hw_per_token / gpus / c->peak_lin;
    /* failures and checkpoints: the checkpoint is the whole model state,
     * written by every node in parallel */
    dr_res_in_t ri = {.params = c->params_total,
                      .gpus = gpus,
                      .nodes = o->nodes,
                      .step_s = o->step_s,
                      .restart_s = dr_res_launch_s(gpus, o->nodes),
                      .storage_gbs = job->storage_gbs,
                      .gpu_mtbf_h = job->gpu_mtbf_h};
    dr_res_eval(&ri, &o->res);
    o->goodput = o->res.effective;
    if (job->tokens > 0)
        o->wall_s = job->tokens / o->tokens_per_s / o->goodput;
    o->fits = true;
}

static int validate_job(const dr_perfmodel_train_t *job, const dr_gpu_spec_t *gpu, dr_err_t *err)
{
    if (!job || !gpu)
        return dr_err_set(err, DR_EINVAL, "perfmodel: no job or GPU");
    if (!isfinite(job->tokens) || job->tokens < 0)
        return dr_err_set(err, DR_EINVAL, "tokens: %g must be a non-negative number", job->tokens);
    if (job->zero_stage > 3 || job->zero_stage < -1)
        return dr_err_set(err, DR_EINVAL, "ZeRO stage %d: must be 0, 1, 2 or 3", job->zero_stage);
    if (!isfinite(gpu->mem_gb) || gpu->mem_gb <= 0)
        return dr_err_set(err, DR_EINVAL, "%s: memory size unknown", gpu->name);
    if (!isfinite(job->storage_gbs) || job->storage_gbs < 0)
        return dr_err_set(err, DR_EINVAL, "storage bandwidth: %g GB/s must be positive",
                          job->storage_gbs);
    if (!isfinite(job->gpu_mtbf_h) || job->gpu_mtbf_h < 0)
        return dr_err_set(err, DR_EINVAL, "GPU MTBF: %g hours must be positive", job->gpu_mtbf_h);
    return DR_OK;
}

static void no_flops(dr_perfmodel_train_est_t *o, const dr_gpu_spec_t *gpu, uint32_t gpus)
{
    memset(o, 0, sizeof *o);
    o->gpus = gpus;
    snprintf(o->reason, sizeof o->reason,
             "%s has no known tensor-core rate (FP16/BF16/FP8 all unknown in the catalog)",
             gpu->name);
}

int dr_perfmodel_train_eval(const dr_perfmodel_train_t *job, const dr_gpu_spec_t *gpu,
                            uint32_t gpus, const dr_perfmodel_layout_t *layout,
                            const dr_perfmodel_net_t *net, dr_perfmodel_train_est_t *out,
                            dr_err_t *err)
{
    int rc = validate_job(job, gpu, err);
    if (rc)
        return rc;
    dr_perfmodel_net_t dn;
    if (!net) {
        dr_perfmodel_net_default(&dn, gpu);
        net = &dn;
    }
    dr_perfmodel_layout_t l = layout ? *layout : (dr_perfmodel_layout_t){0};
    if (!l.tp)
        l.tp = 1;
    if (!l.pp)
        l.pp = 1;
    if (!l.cp)
        l.cp = 1;
    if (!l.dp)
        l.dp = gpus / (l.tp * l.cp * l.pp) ? gpus / (l.tp * l.cp * l.pp) : 1;
    if (!l.micro_batch)
        l.micro_batch = 1;
    if (!l.interleave)
        l.interleave = 1;
    if (!l.ep)
        l.ep = 1;
    if (l.zero_stage < 0)
        l.zero_stage = job->zero_stage < 0 ? (l.dp > 1 ? 1 : 0) : job->zero_stage;
    if (l.recompute == DR_RECOMPUTE_AUTO)
        l.recompute = job->recompute == DR_RECOMPUTE_AUTO ? DR_RECOMPUTE_SELECTIVE : job->recompute;
    if ((rc = check_layout(job, gpus, &l, err)))
        return rc;
    ctx_t c;
    if ((rc = ctx_init(&c, job, gpu, net, err)))
        return rc;
    if (c.prec == DR_PREC_UNSET) {
        no_flops(out, gpu, gpus);
        out->layout = l;
        return DR_OK;
    }
    eval_layout(&c, gpus, &l, out);
    return DR_OK;
}

/* Is candidate x better than the best so far? Faster wins; at equal speed,
 * less memory. */
static bool better(const dr_perfmodel_train_est_t *x, const dr_perfmodel_train_est_t *best)
{
    if (!best->fits)
        return true;
    if (x->tokens_per_s > best->tokens_per_s * (1 + 1e-9))
        return true;
    if (x->tokens_per_s < best->tokens_per_s * (1 - 1e-9))
        return false;
    return x->mem.total < best->mem.total;
}

int dr_perfmodel_train_best(const dr_perfmodel_train_t *job, const dr_gpu_spec_t *gpu,
                            uint32_t gpus, const dr_perfmodel_net_t *net,
                            dr_perfmodel_train_est_t *out, dr_err_t *err)
{
    int rc = validate_job(job, gpu, err);
    if (rc)
        return rc;
    if (!gpus)
        return dr_err_set(err, DR_EINVAL, "GPUs: must be at least 1");
    dr_perfmodel_net_t dn;
    if (!net) {
        dr_perfmodel_net_default(&dn, gpu);
        net = &dn;
    }
    ctx_t c;
    if ((rc = ctx_init(&c, job, gpu, net, err)))
        return rc;
    memset(out, 0, sizeof *out);
    out->gpus = gpus;
    if (c.prec == DR_PREC_UNSET) {
        no_flops(out, gpu, gpus);
        return DR_OK;
    }
    const dr_perfmodel_arch_t *a = &job->arch;
    static const dr_perfmodel_recompute_t rcs[] = {DR_RECOMPUTE_NONE, DR_RECOMPUTE_SELECTIVE,
                                                   DR_RECOMPUTE_FULL};
    dr_perfmodel_train_est_t best, cand, closest;
    memset(&best, 0, sizeof best);
    memset(&closest, 0, sizeof closest);
    double closest_ratio = INFINITY;
    bool any_shape = false;
    uint32_t tmax = c.ln.node < a->heads ? c.ln.node : a->heads;
    if (job->tp)
        tmax = job->tp;
    for (uint32_t tp = job->tp ? job->tp : 1; tp <= tmax && tp <= gpus; tp *= 2) {
        if (a->heads % tp || gpus % tp)
            continue;
        /* context parallelism: for long sequences only (each GPU keeps at
         * least 4,096 tokens of one), powers of two up to 32 */
        for (uint32_t cp = job->cp ? job->cp : 1;
             cp <= (job->cp ? job->cp : 32u) && (uint64_t)tp * cp <= gpus; cp *= 2) {
            if (job->cp ? (uint32_t)c.seq % cp || (gpus / tp) % cp
                        : cp > 1 &&
                              ((uint32_t)c.seq % (2 * cp) || c.seq / cp < 4096 || (gpus / tp) % cp))
                break;
            uint32_t rest = gpus / tp / cp;
            for (uint32_t pp = job->pp ? job->pp : 1; pp <= rest && pp <= a->layers; pp++) {
                if (rest % pp || (job->pp && pp != job->pp))
                    continue;
                uint32_t dp = rest / pp;
                if ((double)dp > c.batch * 1.25)
                    continue; /* fewer sequences than data-parallel replicas */
                any_shape = true;
                for (uint32_t mb = job->micro_batch ? job->micro_batch : 1; mb <= 16; mb *= 2) {
                    if (((double)dp * mb > c.batch * 1.25 && mb > 1) ||
                        (job->micro_batch && mb != job->micro_batch))
                        break;
                    if (!batch_ok(c.batch, dp, mb))
                        continue;
                    uint32_t m = microbatches(c.batch, dp, mb);
                    uint32_t lp = ceil_div(a->layers, pp);
                    uint32_t vmax = job->interleave > 8 ? job->interleave : 8;
                    for (uint32_t v = job->interleave ? job->interleave : 1; v <= vmax; v++) {
                        if (v > 1 && (pp == 1 || m < pp))
                            break;
                        if (job->interleave && v != job->interleave)
                            break;
                        if (v > 1 && lp % v)
                            continue;
                        /* the cheapest recomputation, then the lowest ZeRO stage, that fits */
                        bool placed = false;
                        for (size_t r = 0; r < 3 && !placed; r++) {
                            if (job->recompute != DR_RECOMPUTE_AUTO && job->recompute != rcs[r])
                                continue;
                            int z0 = job->zero_stage >= 0 ? job->zero_stage : dp > 1 ? 1 : 0;
                            int z1 = job->zero_stage >= 0 ? job->zero_stage : dp > 1 ? 3 : 0;
                            for (int z = z0; z <= z1 && !placed; z++) {
                                /* expert parallelism: powers of two dividing dp and
                                 * the experts (1 only for a dense model) */
                                for (uint32_t ep = 1; ep <= dp; ep *= 2) {
                                    if (dp % ep || (ep > 1 && (!a->experts || a->experts % ep)))
                                        break;
                                    dr_perfmodel_layout_t l = {tp, pp,     dp, mb, v,
                                                               z,  rcs[r], ep, cp};
                                    eval_layout(&c, gpus, &l, &cand);
                                    if (cand.fits) {
                                        placed = true;
                                        if (better(&cand, &best))
                                            best = cand;
                                    } else {
                                        double ratio = cand.mem.total / cand.mem.capacity;
                                        if (ratio < closest_ratio) {
                                            closest_ratio = ratio;
                                            closest = cand;
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if (best.fits) {
        *out = best;
        return DR_OK;
    }
    if (!any_shape) {
        out->layout = (dr_perfmodel_layout_t){1, 1, gpus, 1, 1, 0, DR_RECOMPUTE_NONE, 1, 1};
        snprintf(out->reason, sizeof out->reason,
                 "a global batch of %.0f sequences cannot keep %u GPUs busy (too few sequences "
                 "per step for that many data-parallel replicas)",
                 c.batch, gpus);
        return DR_OK;
    }
    *out = closest;
    int k = snprintf(out->reason, sizeof out->reason, "does not fit on %u x %s: the best layout ",
                     gpus, gpu->name);
    if (k > 0 && (size_t)k < sizeof out->reason)
        fmt_gb(out->reason + k, sizeof out->reason - (size_t)k, &closest.mem);
    out->fits = false;
    out->tokens_per_s = out->samples_per_s = out->achieved_tflops_per_gpu = out->mfu = 0;
    out->wall_s = 0;
    return DR_OK;
}

/* ---- inference ---- */

void dr_perfmodel_serve_init(dr_perfmodel_serve_t *s)
{
    memset(s, 0, sizeof *s);
    s->precision = DR_PREC_BF16;
    s->prompt_tokens = 1024;
    s->output_tokens = 256;
}

/* The matmul weights a decode step of B tokens reads: the dense part and
 * the share of the routed experts (n_exp of n_body) its tokens touch, each
 * passing top_k of them at random: 1 - (1 - k/E)^B (all for a dense model). */
static double weights_read(const dr_perfmodel_arch_t *a, double n_body, double n_exp, double b)
{
    double share = 1;
    if (a->experts && a->top_k < a->experts)
        share = 1 - pow(1 - (double)a->top_k / a->experts, b);
    return n_body - n_exp + n_exp * share;
}

int dr_perfmodel_serve_eval(const dr_perfmodel_serve_t *s, const dr_gpu_spec_t *gpu, uint32_t tp,
                            uint32_t concurrency, const dr_perfmodel_net_t *net,
                            dr_perfmodel_serve_est_t *o, dr_err_t *err)
{
    if (!s || !gpu || !o)
        return dr_err_set(err, DR_EINVAL, "perfmodel: no service or GPU");
    const dr_perfmodel_arch_t *a = &s->arch;
    if (!a->layers || !a->hidden || !a->heads || !a->ffn)
        return dr_err_set(err, DR_EINVAL, "model: shape incomplete");
    if (!tp)
        return dr_err_set(err, DR_EINVAL, "tp: must be at least 1");
    if (!isfinite(s->prompt_tokens) || !isfinite(s->output_tokens) || s->prompt_tokens < 1 ||
        s->output_tokens < 1)
        return dr_err_set(err, DR_EINVAL,
                          "request: prompt and output lengths must be at least 1 token");
    if (!isfinite(gpu->mem_gb) || gpu->mem_gb <= 0)
        return dr_err_set(err, DR_EINVAL, "%s: memory size unknown", gpu->name);
    dr_perfmodel_net_t dn;
    if (!net) {
        dr_perfmodel_net_default(&dn, gpu);
        net = &dn;
    }
    memset(o, 0, sizeof *o);
    o->tp = tp;
    dr_precision_t want = s->precision == DR_PREC_UNSET ? DR_PREC_BF16 : s->precision;
    dr_precision_t used, u16;
    double peak = dr_perfmodel_peak_tflops(gpu, want, &used);
    double peak16 = dr_perfmodel_peak_tflops(gpu, DR_PREC_BF16, &u16);
    if (!isfinite(peak) || !isfinite(peak16)) {
        snprintf(o->reason, sizeof o->reason, "%s has no known tensor-core rate", gpu->name);
        return DR_OK;
    }
    o->precision = used;
    double pl = peak * 1e12 * dr_perfmodel_matmul_eff(gpu, used) * PM_KERNEL_EFF;
    double pa = peak16 * 1e12 * dr_perfmodel_matmul_eff(gpu, u16) * PM_ATTN_REL;
    double hbm =
        (isfinite(gpu->hbm_tbs) && gpu->hbm_tbs > 0 ? gpu->hbm_tbs : 1.0) * 1e12 * PM_HBM_EFF;
    links_t ln = make_links(net);
    bool in_node = tp <= ln.node;
    double tp_gbs = in_node ? ln.intra_gbs : ln.inter_gbs;
    double tp_lat = in_node ? ln.intra_lat : ln.inter_lat;

    double t = tp, h = a->hidden, L = a->layers, V = a->vocab;
    double wbytes = prec_bytes(used);
    dr_precision_t kvp = s->kv_precision != DR_PREC_UNSET ? s->kv_precision
                         : used == DR_PREC_FP8            ? DR_PREC_FP8
                                                          : DR_PREC_BF16;
    double kvb = dr_perfmodel_kv_bytes_per_token(a, prec_bytes(kvp));
    double n_body = a->layers * layer_params(a); /* matmul weights */
    /* a mixture of experts: a token's FLOPs follow the weights it passes
     * (n_act); a decode step reads the dense weights and the routed experts
     * its batch touches (weights_read) */
    double n_act = a->layers * layer_active_params(a), n_exp = a->layers * layer_expert_params(a);
    /* embeddings and the LM head stay in 16 bit (tied: one copy) */
    double w_gpu = n_body * wbytes / t + embed_params(a) * 2 / t;
    double isl = s->prompt_tokens, osl = s->output_tokens;
    double ctx_max = isl + osl;
    o->kv_bytes_per_request = ctx_max * kvb;

    /* memory: weights, a prefill workspace of max_num_tokens activations,
     * logits of the batch, then the KV pool (each request reserves its whole
     * prompt + output, TensorRT-LLM's default GUARANTEED_NO_EVICT policy) */
    uint32_t cap_b = s->max_batch ? s->max_batch : PM_SERVE_MAX_BATCH;
    double work = PM_SERVE_MAX_TOKENS * (4 * h + 3.0 * a->ffn) * 2 / t + cap_b * V * 4.0 / t;
    double avail = usable_bytes(gpu) - w_gpu - work;
    o->mem.weights = w_gpu;
    o->mem.activations = work;
    o->mem.capacity = gpu->mem_gb * GIB;
    o->mem.overhead = o->mem.capacity - usable_bytes(gpu);
    double per_req_gpu = o->kv_bytes_per_request / t;
    if (avail < per_req_gpu) {
        o->mem.kv_cache = per_req_gpu;
        o->mem.total = w_gpu + work + per_req_gpu + o->mem.overhead;
        snprintf(o->reason, sizeof o->reason,
                 "needs %.1f GB per GPU for one request (weights %.1f, workspace %.1f, KV cache "
                 "%.2f) but %u x %s has %.0f GB each",
                 o->mem.total / GIB, w_gpu / GIB, work / GIB, per_req_gpu / GIB, tp, gpu->name,
                 gpu->mem_gb);
        return DR_OK;
    }
    double bmax = floor(avail / per_req_gpu);
    if (bmax > cap_b)
        bmax = cap_b;
    o->max_concurrency = (uint32_t)bmax;
    double b = concurrency ? concurrency : bmax;
    if (b > bmax)
        b = bmax;
    o->concurrency = (uint32_t)b;
    o->mem.kv_cache = b * per_req_gpu;
    o->mem.total = w_gpu + work + o->mem.kv_cache + o->mem.overhead;

    /* one decode step at batch B with mean context c: each matmul is bound
     * by reading its weights or by its FLOPs, attention by reading the KV
     * cache; the LM head and sampling over the vocabulary; two TP
     * all-reduces per layer */
    double cmean = isl + osl / 2;
    double body_bytes = n_body * wbytes / t;
    double step_bytes = weights_read(a, n_body, n_exp, b) * wbytes / t;
    double lin = fmax(step_bytes / hbm, 2 * n_act * b / t / pl);
    double att = fmax(b * cmean * kvb / t / hbm, 4 * b * cmean * h * L / t / pa);
    double head = fmax(V * h * 2 / t / hbm, 2 * V * h * b / t / pl) + b * V * 12 / t / hbm;
    double comm = tp > 1 ? 2 * L * allreduce_s(b * h * 2, t, tp_gbs, tp_lat) : 0;
    o->decode_step_s = lin + att + head + comm;
    double d1 = fmax(weights_read(a, n_body, n_exp, 1) * wbytes / t / hbm, 2 * n_act / t / pl) +
                fmax(cmean * kvb / t / hbm, 4 * cmean * h * L / t / pa) + V * h * 2 / t / hbm +
                (tp > 1 ? 2 * L * allreduce_s(h * 2, t, tp_gbs, tp_lat) : 0);
    o->tpot_floor_s = d1;

    /* one prompt: matmuls over isl tokens (compute-bound), causal attention
     * 2·s²·h per layer, TP all-reduces of the prompt's activations */
    double pf = fmax(body_bytes / hbm, 2 * n_act * isl / t / pl) + 2 * isl * isl * h * L / t / pa +
                2 * V * h / t / pl +
                (tp > 1 ? 2 * L * allreduce_s(isl * h * 2, t, tp_gbs, tp_lat) : 0);
    o->prefill_s = pf;
    o->ttft_floor_s = pf;

    /* continuous batching: B requests complete every osl decode steps plus
     * their B prefills */
    /* the first output token comes from the prefill: osl - 1 decode steps */
    double dec = osl > 1 ? osl - 1 : 0;
    double cycle = dec * o->decode_step_s + b * pf;
    o->tokens_per_s = b * osl / cycle;
    o->requests_per_s = b / cycle;
    o->tpot_s = dec > 0 ? cycle / dec : o->decode_step_s;
    o->ttft_s = pf + (b > 1 ? o->decode_step_s : 0); /* its prefill shares a step with decodes */
    o->latency_s = o->ttft_s + dec * o->tpot_s;
    o->fits = true;
    return DR_OK;
}

/* ---- hints ---- */

int dr_perfmodel_hint_rate(double params, dr_precision_t prec, uint32_t gpus,
                           const dr_gpu_spec_t *gpu, const dr_perfmodel_net_t *net,
                           double *tokens_per_s, dr_perfmodel_train_est_t *est, dr_err_t *err)
{
    *tokens_per_s = 0;
    if (!isfinite(params) || params <= 0)
        return dr_err_set(err, DR_EINVAL, "params: %g must be positive", params);
    dr_perfmodel_train_t job;
    dr_perfmodel_train_init(&job);
    job.arch.params = params;
    job.precision = prec == DR_PREC_UNSET ? DR_PREC_BF16 : prec;
    int rc = dr_perfmodel_arch_complete(&job.arch, err);
    if (rc)
        return rc;
    dr_perfmodel_train_est_t e;
    if ((rc = dr_perfmodel_train_best(&job, gpu, gpus, net, &e, err)))
        return rc;
    if (e.fits)
        *tokens_per_s = e.tokens_per_s;
    if (est)
        *est = e;
    return DR_OK;
}

/* ---- clusters ---- */

int dr_perfmodel_net_from_cluster(dr_perfmodel_net_t *n, const dr_cluster_t *c, unsigned type,
                                  dr_err_t *err)
{
    if (!c || type >= c->ntypes)
        return dr_err_set(err, DR_EINVAL, "cluster type %u: no such type", type);
    dr_perfmodel_net_default(n, &c->types[type]);
    uint32_t node_gpus = 0;
    bool any = false, nvlink = false;
    int32_t leaf = DR_NONE;
    bool one_leaf = true;
    /* a domain spanning several nodes (an NVL72 rack) counts them all: the
     * type's GPUs per domain, summed in one pass (domain ids are dense) */
    uint32_t *dom_gpus = c->nnvl ? calloc(c->nnvl, sizeof *dom_gpus) : NULL;
    for (size_t i = 0; dom_gpus && i < c->nnodes; i++) {
        const dr_node_t *nd = &c->nodes[i];
        if (nd->type == type && nd->nvl_domain >= 0 && (size_t)nd->nvl_domain < c->nnvl)
            dom_gpus[nd->nvl_domain] += nd->ngpus;
    }
    for (size_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *nd = &c->nodes[i];
        if (nd->ngpus == 0 || nd->type != type)
            continue;
        uint32_t g = nd->ngpus;
        if (nd->nvl_domain != DR_NONE) {
            nvlink = true;
            uint32_t dom = 0;
            if (dom_gpus && nd->nvl_domain >= 0 && (size_t)nd->nvl_domain < c->nnvl)
                dom = dom_gpus[nd->nvl_domain];
            else /* out of memory (or a stray id): count by scanning */
                for (size_t k = 0; k < c->nnodes; k++)
                    if (c->nodes[k].nvl_domain == nd->nvl_domain && c->nodes[k].type == type)
                        dom += c->nodes[k].ngpus;
            if (dom > g)
                g = dom;
        }
        if (g > node_gpus)
            node_gpus = g;
        if (!any)
            leaf = nd->switch_id;
        else if (nd->switch_id != leaf)
            one_leaf = false;
        any = true;
    }
    free(dom_gpus);
    if (!any)
        return dr_err_set(err, DR_EINVAL, "cluster type %s has no nodes", c->types[type].name);
    n->node_gpus = node_gpus;
    n->intra_nvlink = nvlink && n->intra_nvlink;
    if (!n->intra_nvlink)
        n->intra_gbs = 64.0; /* PCIe 4.0 x16, both directions */
    if (leaf == DR_NONE || (size_t)leaf >= c->nswitches) {
        n->kind = DR_NET_ETH; /* no topology declared: assume commodity Ethernet */
        n->inter_gbit = 100.0;
        return DR_OK;
    }
    /* the slowest link a job of this type may cross: its leaf, and when the
     * type spans several leaves, every switch up to the root */
    double gbs = INFINITY;
    for (size_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *nd = &c->nodes[i];
        if (nd->ngpus == 0 || nd->type != type || nd->switch_id == DR_NONE)
            continue;
        int32_t sw = nd->switch_id;
        int depth = 0;
        while (sw != DR_NONE && (size_t)sw < c->nswitches && depth++ < 64) {
            double l = c->switches[sw].link_gbs;
            if (l > 0 && l < gbs)
                gbs = l;
            if (one_leaf)
                break;
            sw = c->switches[sw].parent;
        }
    }
    n->kind = DR_NET_IB;
    n->inter_gbit = isfinite(gbs) ? gbs * 8 : 100.0;
    if (!isfinite(gbs))
        n->kind = DR_NET_ETH;
    return DR_OK;
}
