/* perfmodel.h - the analytic performance model: how fast a transformer job
 * runs on a GPU type, a GPU count and a parallel layout, and whether it fits.
 *
 * One implementation serves the schedulers (rates for jobs that carry model
 * hints instead of a measured throughput) and the planner (`drover plan`).
 * Everything is derived from the catalog's figures (peak FLOPS per precision,
 * memory, HBM bandwidth, intra-node link) plus the interconnect, with a
 * handful of constants whose sources are listed in docs/planner.md:
 *
 *   memory   weights + gradients + optimizer states per ZeRO stage (Rajbhandari
 *            et al. 2019), activations per layer (Korthikanti et al. 2022) with
 *            the chosen recomputation, KV cache for inference;
 *   time     GEMM FLOPs at the GPU's measured maximum achievable matmul rate,
 *            attention, memory-bound element-wise traffic at HBM speed, tensor-
 *            parallel all-reduces over NVLink or PCIe, pipeline bubble
 *            (p-1)/(v m) and point-to-point sends, data-parallel gradient
 *            reduction over the slowest link crossed (NVLink, InfiniBand,
 *            RoCE or TCP Ethernet), the optimizer step, and what failures and
 *            checkpoints cost a run (resilience.h).
 *
 * Pure: no I/O, no clocks.  Not fitting is not an error: the estimate says
 * fits = false, throughput 0 and why.  Errors (DR_EINVAL) are for inputs that
 * make no sense (zero layers, a layout whose product is not the GPU count). */
#ifndef DROVER_PERFMODEL_H
#define DROVER_PERFMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/job.h"
#include "drover/perf.h"
#include "drover/resilience.h"

#define DR_PERFMODEL_REASON_MAX 256

/* A decoder-only transformer.  Give either params, or the shape (layers,
 * hidden, heads ...), or both (then params is the published count used for
 * the 6·N·D figure and the shape drives per-layer costs).
 * dr_perfmodel_arch_complete() fills what is missing.
 *
 * A mixture of experts (experts > 0, or active_params below params): each
 * layer's MLP is `experts` routed experts of width expert_ffn, of which a
 * token passes top_k, plus `shared_experts` every token passes.  Then `ffn`
 * is the width a token passes through, (top_k + shared_experts) x
 * expert_ffn: the FLOPs and activations follow it, the memory follows all
 * the experts.  Sizes given as params + active_params get the shape of a
 * dense model of active_params with its MLP cut into top_k experts (8
 * unless given: DeepSeek-V3, Qwen3 and Kimi K2 route 8) and as many
 * experts as the total needs. */
typedef struct dr_perfmodel_arch {
    char name[48];
    double params;       /* total parameters (0 = from the shape) */
    uint32_t layers;     /* 0 = from params */
    uint32_t hidden;     /* model width h */
    uint32_t heads;      /* attention (query) heads a */
    uint32_t kv_heads;   /* key/value heads (GQA); 0 = heads */
    uint32_t ffn;        /* MLP inner width; 0 = 4h (GeLU) or 8h/3 rounded (GLU) */
    uint32_t vocab;      /* 0 = 51200 */
    uint32_t seq_len;    /* default sequence length; 0 = 2048 */
    bool glu;            /* gated MLP (SwiGLU: three matrices) */
    bool untied;         /* separate output embedding (LLaMA) */
    bool dropout;        /* dropout layers present (GPT-3 style); affects activation memory */
    double batch_tokens; /* published global batch in tokens; 0 = the size rule */
    /* mixture of experts (all 0: dense) */
    uint32_t experts;        /* routed experts per layer */
    uint32_t top_k;          /* routed experts per token */
    uint32_t shared_experts; /* experts every token passes (DeepSeek, Llama 4) */
    uint32_t expert_ffn;     /* inner width of one expert */
    double active_params;    /* parameters per token (published; 0 = from the shape) */
} dr_perfmodel_arch_t;

/* Fill missing shape fields from params (GPT-3 family aspect ratios, see
 * docs/planner.md) or params from the shape; check the result.  Errors name
 * the field ("hidden: 100 is not a multiple of heads 64"). */
int dr_perfmodel_arch_complete(dr_perfmodel_arch_t *a, dr_err_t *err);
/* Parameters implied by the shape (embeddings included). */
double dr_perfmodel_arch_shape_params(const dr_perfmodel_arch_t *a);
/* Parameters a token passes through: active_params when given, else from
 * the shape; params for a dense model. */
double dr_perfmodel_arch_active(const dr_perfmodel_arch_t *a);
static inline bool dr_perfmodel_arch_moe(const dr_perfmodel_arch_t *a)
{
    return a->experts > 0;
}
/* Default global batch in sequences for a model (its published batch, or the
 * GPT-3 paper's batch-size-by-model-size rule). */
double dr_perfmodel_default_batch(const dr_perfmodel_arch_t *a, uint32_t seq_len);

typedef enum dr_perfmodel_recompute {
    DR_RECOMPUTE_NONE = 0,
    DR_RECOMPUTE_SELECTIVE, /* recompute the attention core only (Korthikanti et al.) */
    DR_RECOMPUTE_FULL,      /* keep each layer's input, recompute the whole forward */
    DR_RECOMPUTE_AUTO       /* the layout search picks the cheapest that fits */
} dr_perfmodel_recompute_t;

const char *dr_perfmodel_recompute_name(dr_perfmodel_recompute_t r);
int dr_perfmodel_recompute_parse(const char *s, dr_perfmodel_recompute_t *out);

/* A training job. */
typedef struct dr_perfmodel_train {
    dr_perfmodel_arch_t arch;
    double tokens;            /* training tokens (0 = rates only) */
    uint32_t seq_len;         /* 0 = arch.seq_len */
    double global_batch;      /* sequences per optimizer step; 0 = default */
    dr_precision_t precision; /* UNSET = bf16 (or the best the GPU supports) */
    int zero_stage;           /* 0..3, or -1 = the search picks */
    bool cpu_offload;         /* ZeRO-Offload: optimizer states in host memory */
    dr_perfmodel_recompute_t recompute;
    bool flash_attention; /* false = explicit softmax (Megatron-LM 2021) */
    bool seq_parallel;    /* sequence parallelism with TP (Korthikanti et al.) */
    bool grad_fp32;       /* gradients reduced in fp32 (Megatron-LM with bf16) */
    bool tp_overlap;      /* TP collectives overlapped with GEMMs (Megatron-Core /
                             TransformerEngine since 2023); false = exposed (Megatron-LM
                             2021-22, most other stacks) */
    /* constraints for the layout search (0 = free): a published run's
     * tensor/pipeline degrees, micro-batch, interleaving */
    uint32_t tp, pp, micro_batch, interleave;
    uint32_t cp; /* context-parallel degree (0 = free: 1, or more for long sequences) */
    /* failures and checkpoints (resilience.h; 0 = its defaults) */
    double storage_gbs; /* aggregate checkpoint write bandwidth, GB/s */
    double gpu_mtbf_h;  /* GPU-hours between interruptions */
} dr_perfmodel_train_t;

/* Defaults: bf16, ZeRO and recomputation chosen by the search, FlashAttention,
 * sequence parallelism and TP overlap on, 16-bit gradient reduction. */
void dr_perfmodel_train_init(dr_perfmodel_train_t *t);

/* A parallel layout: tp x cp x pp x dp = GPUs.  TP stays inside an NVLink domain
 * when it can; PP and DP cross nodes.  0 in a field of a layout passed to
 * dr_perfmodel_train_eval means "1" (or, for zero_stage < 0 and recompute
 * AUTO, the job's setting). */
typedef struct dr_perfmodel_layout {
    uint32_t tp, pp, dp;
    uint32_t micro_batch; /* sequences per micro-batch */
    uint32_t interleave;  /* virtual pipeline stages per GPU (Megatron's interleaved 1F1B) */
    int zero_stage;
    dr_perfmodel_recompute_t recompute;
    uint32_t ep; /* expert parallelism: data-parallel ranks the experts are spread over
                    (a mixture of experts; 0 or 1 = every rank holds all) */
    uint32_t cp; /* context parallelism: GPUs one sequence is split over (ring
                    attention); tp x cp x pp x dp = GPUs; 0 = 1 */
} dr_perfmodel_layout_t;

/* The interconnect a job sees. */
typedef enum dr_perfmodel_netkind {
    DR_NET_IB = 0, /* InfiniBand (RDMA) */
    DR_NET_ROCE,   /* RDMA over converged Ethernet */
    DR_NET_ETH,    /* Ethernet without RDMA (NCCL over TCP sockets) */
    DR_NET_NKINDS
} dr_perfmodel_netkind_t;

typedef struct dr_perfmodel_net {
    uint32_t node_gpus; /* GPUs that share one NVLink (or PCIe) domain */
    bool intra_nvlink;  /* false: GPUs in a node talk over PCIe */
    double intra_gbs;   /* GPU-to-GPU bandwidth in the domain, GB/s, both directions
                           summed (as datasheets quote it) */
    dr_perfmodel_netkind_t kind;
    double inter_gbit; /* network bandwidth per GPU between nodes, Gbit/s per direction */
} dr_perfmodel_net_t;

const char *dr_perfmodel_netkind_name(dr_perfmodel_netkind_t k);
/* "ib", "infiniband", "roce", "eth", "ethernet"; returns 0 or DR_EINVAL. */
int dr_perfmodel_netkind_parse(const char *s, dr_perfmodel_netkind_t *out);
/* The reference system of a GPU generation: its NVLink domain and link from
 * the catalog, 8 GPUs per node (72 for GB200 NVL72, 16 for Trainium), and the
 * network its vendor reference design ships with (DGX A100: InfiniBand
 * 200 Gbit/s per GPU; Hopper/Blackwell/MI300-class: 400 Gbit/s; PCIe cards:
 * 100 Gbit/s Ethernet per 8-GPU node). */
void dr_perfmodel_net_default(dr_perfmodel_net_t *n, const dr_gpu_spec_t *gpu);
/* GPUs per NVLink domain of a type's reference system (see above). */
uint32_t dr_perfmodel_node_gpus(const dr_gpu_spec_t *gpu);
/* GPUs per host (server) of a type's reference system: the NVLink domain
 * except where a domain spans several hosts (TPU v5e/v6e: 8 chips per host,
 * 256 per ICI pod). */
uint32_t dr_perfmodel_host_gpus(const dr_gpu_spec_t *gpu);
/* The interconnect of cluster type `type`: GPUs per node (an NVLink domain
 * spanning several nodes counts them all), NVLink or PCIe from the nodes'
 * NvlinkDomain, and the slowest switch link between the type's nodes
 * (InfiniBand assumed; 100 Gbit/s Ethernet when the cluster declares no
 * topology).  Returns DR_EINVAL if the type has no nodes. */
int dr_perfmodel_net_from_cluster(dr_perfmodel_net_t *n, const dr_cluster_t *c, unsigned type,
                                  dr_err_t *err);

/* Peak dense TFLOPS of gpu in precision `want`, falling back to the best
 * precision it supports (fp8 -> bf16 -> fp16; bf16 <-> fp16; fp32 runs as
 * TF32 = half the 16-bit rate).  *used gets the precision that applies.
 * NAN when the GPU has no known tensor rate at all. */
double dr_perfmodel_peak_tflops(const dr_gpu_spec_t *gpu, dr_precision_t want,
                                dr_precision_t *used);
/* Fraction of peak that large matrix multiplies reach on this GPU in this
 * precision (measured "maximum achievable matmul FLOPS"; a documented default
 * where no measurement is published). */
double dr_perfmodel_matmul_eff(const dr_gpu_spec_t *gpu, dr_precision_t p);

/* Memory per GPU, bytes. */
typedef struct dr_perfmodel_mem {
    double weights, grads, optim; /* model states */
    double activations;           /* training activations, or inference workspace */
    double kv_cache;              /* inference */
    double overhead;              /* CUDA context, library workspaces, fragmentation */
    double total;
    double capacity; /* the GPU's memory */
} dr_perfmodel_mem_t;

/* Per-GPU model-state bytes under ZeRO stage 0..3 for `params` parameters
 * data-parallel over nd GPUs, with k bytes/param of optimizer state
 * (mixed-precision Adam: 12).  ZeRO paper, Figure 1. */
double dr_perfmodel_zero_bytes(double params, int stage, uint32_t nd, double k);

/* Activation bytes of one transformer layer for one micro-batch
 * (Korthikanti et al. 2022, 16-bit activations, 1-byte dropout masks), with
 * tensor-parallel degree tp, sequence parallelism, recomputation and
 * FlashAttention (which, like selective recomputation, keeps no s x s
 * matrices). */
double dr_perfmodel_activation_bytes(const dr_perfmodel_arch_t *a, uint32_t seq, uint32_t micro,
                                     uint32_t tp, bool seq_parallel, dr_perfmodel_recompute_t rc,
                                     bool flash);

/* KV-cache bytes per token: 2 x layers x kv_heads x head_dim x bytes. */
double dr_perfmodel_kv_bytes_per_token(const dr_perfmodel_arch_t *a, double bytes_per_elem);

/* Where a training step's time goes, and what comes out. */
typedef struct dr_perfmodel_train_est {
    bool fits;
    char reason[DR_PERFMODEL_REASON_MAX]; /* why it does not fit / cannot run */
    dr_perfmodel_layout_t layout;
    uint32_t gpus;
    uint32_t nodes; /* nodes (NVLink domains) spanned */
    uint32_t microbatches;
    double global_batch;      /* sequences per step as run (a multiple of dp x micro-batch) */
    dr_precision_t precision; /* precision the peak refers to */
    double peak_tflops;
    dr_perfmodel_mem_t mem;
    /* seconds per optimizer step and its parts */
    double step_s;
    double compute_s;             /* GEMMs, attention and element-wise kernels, all micro-batches */
    double tp_comm_s;             /* tensor-parallel collectives (exposed) */
    double pp_comm_s;             /* pipeline sends (exposed) */
    double bubble_s;              /* pipeline fill and drain */
    double dp_comm_s;             /* data-parallel / ZeRO collectives not hidden behind compute */
    double ep_comm_s;             /* expert-parallel all-to-alls (dispatch and combine) */
    double cp_comm_s;             /* context-parallel K/V ring exchange not hidden by attention */
    double optim_s;               /* optimizer step */
    double straggle_s;            /* waiting for the slowest node */
    double tokens_per_s;          /* whole job */
    double samples_per_s;         /* sequences per second */
    double model_flops_per_token; /* 6N + 12·L·h·s (PaLM appendix B); N active for MoE */
    double achieved_tflops_per_gpu; /* model FLOPs/s per GPU */
    double mfu;                     /* achieved / peak */
    double hfu;                     /* including recomputation */
    double goodput; /* expected fraction of wall time that is useful training (res.effective) */
    dr_res_t res;   /* checkpoints, failures, the Young-Daly interval */
    double wall_s;  /* tokens / tokens_per_s / goodput (0 if tokens is 0) */
} dr_perfmodel_train_est_t;

/* Evaluate one layout.  DR_EINVAL when the inputs make no sense (the message
 * names them); a layout that does not fit returns DR_OK with fits = false. */
int dr_perfmodel_train_eval(const dr_perfmodel_train_t *job, const dr_gpu_spec_t *gpu,
                            uint32_t gpus, const dr_perfmodel_layout_t *layout,
                            const dr_perfmodel_net_t *net, dr_perfmodel_train_est_t *out,
                            dr_err_t *err);
/* The fastest layout on exactly `gpus` GPUs (TP within a node, PP dividing
 * the layers, micro-batch, interleaving, ZeRO stage and recomputation as the
 * job allows).  When nothing fits, fits = false and the reason describes the
 * layout that came closest. */
int dr_perfmodel_train_best(const dr_perfmodel_train_t *job, const dr_gpu_spec_t *gpu,
                            uint32_t gpus, const dr_perfmodel_net_t *net,
                            dr_perfmodel_train_est_t *out, dr_err_t *err);

/* An inference service. */
typedef struct dr_perfmodel_serve {
    dr_perfmodel_arch_t arch;
    dr_precision_t precision;    /* weights and matmuls; UNSET = bf16 */
    dr_precision_t kv_precision; /* UNSET = fp8 with fp8 weights, else bf16 */
    double prompt_tokens;        /* input sequence length per request */
    double output_tokens;        /* generated tokens per request */
    uint32_t max_batch;          /* engine cap on concurrent requests; 0 = 2048 */
} dr_perfmodel_serve_t;

void dr_perfmodel_serve_init(dr_perfmodel_serve_t *s);

typedef struct dr_perfmodel_serve_est {
    bool fits;
    char reason[DR_PERFMODEL_REASON_MAX];
    uint32_t tp;              /* GPUs per replica (tensor parallel) */
    uint32_t concurrency;     /* requests in flight */
    uint32_t max_concurrency; /* most that fit the KV cache (and the engine cap) */
    dr_precision_t precision;
    dr_perfmodel_mem_t mem;      /* per GPU, at max_concurrency */
    double kv_bytes_per_request; /* prompt + output, whole replica */
    double prefill_s;            /* one request's prompt, alone on the replica */
    double decode_step_s;        /* one decode iteration at this concurrency */
    double tpot_s;       /* time per output token seen by a request, prefills of others included */
    double ttft_s;       /* time to first token at this concurrency (no queueing) */
    double latency_s;    /* whole request: ttft + output x tpot */
    double tokens_per_s; /* output tokens per second, per replica */
    double requests_per_s;
    double ttft_floor_s; /* physical floor: one prompt forward pass, alone */
    double tpot_floor_s; /* physical floor: one decode step at batch 1 */
} dr_perfmodel_serve_est_t;

/* A replica of `tp` GPUs at `concurrency` requests in flight (0 = as many as
 * fit).  Throughput at concurrency B: B requests finish every
 * output_tokens x decode_step(B) + B x prefill seconds. */
int dr_perfmodel_serve_eval(const dr_perfmodel_serve_t *s, const dr_gpu_spec_t *gpu, uint32_t tp,
                            uint32_t concurrency, const dr_perfmodel_net_t *net,
                            dr_perfmodel_serve_est_t *out, dr_err_t *err);

/* Throughput of a job known only by its hints (parameters, precision) on
 * `gpus` GPUs of one type: tokens per second for the whole job at the best
 * layout, 0 when it does not fit (reason in est if given). */
int dr_perfmodel_hint_rate(double params, dr_precision_t prec, uint32_t gpus,
                           const dr_gpu_spec_t *gpu, const dr_perfmodel_net_t *net,
                           double *tokens_per_s, dr_perfmodel_train_est_t *est, dr_err_t *err);

/* Model-hint jobs for the schedulers (src/core/perfmodel_hint.c).  A job
 * may describe itself by its model (hint_params, precision) instead of a
 * measured throughput; it then runs in a perf class of its own hints, whose
 * work is in tokens.
 *
 * The perf class of job j's hints in table p: found by name ("hint
 * params=7e+09 gpus=8 milli=1000 bf16": the parameters, the GPUs its request
 * occupies - a share counts as one GPU at that share of its speed - and the
 * precision, bf16 when unset) or added, with the rate in each column = this
 * model's tokens per second for the whole job on that column's GPU type of
 * cluster c, over that type's nodes and network (0 where it does not fit,
 * or no cluster type matches the column).  Jobs with the same hints share
 * a class.  p gets c's types as columns first if it has none
 * (dr_perf_hint_columns); existing columns are matched to cluster types as
 * dr_perf_bind does.  Adding a class costs O(GPU types x nodes); finding
 * one, a name lookup.  DR_EINVAL for a job without usable hints
 * (hint_params not a positive finite number, or no GPUs). */
int dr_perf_hint_class(dr_perf_table_t *p, const dr_cluster_t *c, const dr_job_t *j,
                       uint32_t *klass, dr_err_t *err);
/* Give p the cluster's GPU types as its columns if it has none yet
 * (DR_ESTATE if it has classes beyond class 0 but no columns). */
int dr_perf_hint_columns(dr_perf_table_t *p, const dr_cluster_t *c, dr_err_t *err);

#endif
