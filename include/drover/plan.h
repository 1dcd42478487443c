/* plan.h - the planner behind `drover plan`: does a job fit one GPU, one
 * node, or does it need a cluster; of which GPU type, how many, for how long,
 * at what cost and energy.
 *
 * Three kinds of request: training (model, tokens, deadline or GPU budget),
 * serving (model, request rate, prompt and output lengths, latency targets)
 * and batch arrays (tasks x GPU-seconds on a reference GPU, memory, deadline).
 * Every estimate comes from the performance model (perfmodel.h), the same one
 * the schedulers use.  Pure: the CLI reads arguments and prints; this module
 * computes, ranks, explains and formats (JSON, SVG) into memory. */
#ifndef DROVER_PLAN_H
#define DROVER_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/catalog.h"
#include "drover/error.h"
#include "drover/perfmodel.h"

/* ---- model presets ---- */

typedef struct dr_plan_preset {
    const char *name;    /* canonical, e.g. "llama-3-70b" */
    const char *aliases; /* '|'-separated */
    dr_perfmodel_arch_t arch;
    const char *source;
} dr_plan_preset_t;

/* All presets (n set to their count). */
const dr_plan_preset_t *dr_plan_presets(size_t *n);
/* By name or alias, ignoring case and punctuation ("Llama-3.1-405B",
 * "llama3.1-405b").  NULL if none. */
const dr_plan_preset_t *dr_plan_preset_find(const char *name);

/* A model specification: a preset name, optionally followed by overrides,
 * or overrides alone: "llama-3-70b", "llama-2-7b,seq=8192",
 * "layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,vocab=128256,glu=1".
 * Keys: params, layers, hidden, heads, kv_heads, ffn, vocab, seq, glu,
 * untied, dropout, batch_tokens, name.  The result is completed
 * (dr_perfmodel_arch_complete). */
int dr_plan_model_parse(const char *spec, dr_perfmodel_arch_t *out, dr_err_t *err);

/* "7B", "7e9", "1.5T", "300M", "2k", "70b": a count with an optional
 * K/M/B/G/T/P suffix.  Must be finite and >= 0.  0 or DR_EINVAL. */
int dr_plan_parse_count(const char *s, double *out);
/* A duration in seconds: dr_duration_parse_err's forms ("90", "200ms",
 * "36h", "30d", "4w", "18mo", "2y", Slurm's "2-12:00:00").  0 or
 * DR_EINVAL. */
int dr_plan_parse_duration(const char *s, double *seconds);

/* ---- requests ---- */

typedef enum dr_plan_kind { DR_PLAN_TRAIN = 0, DR_PLAN_SERVE, DR_PLAN_ARRAY } dr_plan_kind_t;

#define DR_PLAN_MAX_TYPES 64

/* Where the network a GPU type is planned on comes from. */
typedef enum dr_plan_net_from {
    DR_PLAN_NET_REFERENCE = 0, /* the type's reference system (dr_perfmodel_net_default) */
    DR_PLAN_NET_CLUSTER,       /* a cluster config's nodes of the type: GPUs per node, NVLink or
                                  PCIe, the switch links (dr_perfmodel_net_from_cluster) */
    DR_PLAN_NET_NODE_GPUS      /* the site's GPUs per node only (a controller's nodes); the link
                                  and the network between nodes are the reference system's */
} dr_plan_net_from_t;

/* A site's network for one GPU type (drover plan --cluster / --controller). */
typedef struct dr_plan_site_net {
    dr_plan_net_from_t from; /* REFERENCE: none, the type plans on its reference system */
    dr_perfmodel_net_t net;  /* CLUSTER: all of it; NODE_GPUS: node_gpus alone is read */
    uint32_t host_gpus;      /* GPUs per node (server), the "nodes" column; 0 = net.node_gpus */
    bool nvlink_declared;    /* CLUSTER: some node of the type names an NvlinkDomain (else the
                                config's default, PCIe only) */
    bool links_declared;     /* CLUSTER: the network between nodes is from declared switch
                                links (else 100 Gbit/s Ethernet assumed) */
} dr_plan_site_net_t;

typedef struct dr_plan_req {
    dr_plan_kind_t kind;
    /* training */
    dr_perfmodel_train_t train;
    /* serving */
    dr_perfmodel_serve_t serve;
    double rate_rps;  /* requests per second to sustain */
    double ttft_s;    /* time-to-first-token target (0 = none) */
    double tpot_s;    /* time-per-output-token target (0 = none) */
    double latency_s; /* whole-request latency target (0 = none) */
    /* batch array */
    double tasks;      /* number of tasks */
    double task_gpu_s; /* GPU-seconds per task on the reference GPU */
    char ref_gpu[DR_GPU_NAME_MAX];
    double task_mem_gb; /* GPU memory a task needs (0 = any) */
    bool memory_bound;  /* tasks scale with HBM bandwidth, not FLOPS */
    dr_precision_t task_precision;
    /* all kinds */
    double deadline_s;                    /* 0 = none */
    uint32_t max_gpus;                    /* GPU budget (0 = none) */
    char gpu[DR_GPU_NAME_MAX];            /* an exact configuration to evaluate first */
    uint32_t gpus;                        /* its GPU count (0 = the planner's choice) */
    const char *types[DR_PLAN_MAX_TYPES]; /* GPU types to consider; none = whole catalog */
    size_t ntypes;
    /* beside types[]: at most this many GPUs of that type (a cluster's
     * count, drover plan --cluster); 0 = no cap but max_gpus */
    uint32_t type_max[DR_PLAN_MAX_TYPES];
    /* beside types[]: the site's nodes of that type, planned on instead of
     * the type's reference system; net_set (--net) still gives the network
     * between nodes */
    dr_plan_site_net_t type_net[DR_PLAN_MAX_TYPES];
    bool neocloud;        /* price column: neocloud instead of on-demand */
    double power_usd_kwh; /* electricity price (0 = not costed) */
    double pue;           /* facility overhead on GPU energy (0 = 1.0) */
    bool net_set;         /* use net_kind / net_gbit between nodes instead of the type's
                             reference network (or the site's) */
    dr_perfmodel_netkind_t net_kind;
    double net_gbit;
    /* training: the run is on a record-class stack (MLPerf submissions,
     * NVIDIA's NeMo recipes, MaxText's tables): the plan gives the model's
     * own figure, capped at the best published MFU, not a typical run
     * (docs/planner.md, "Optimism"; --stack record) */
    bool stack_record;
} dr_plan_req_t;

void dr_plan_req_init(dr_plan_req_t *r, dr_plan_kind_t kind);

/* ---- results ---- */

typedef enum dr_plan_verdict {
    DR_VERDICT_NONE = 0, /* does not fit / cannot run */
    DR_VERDICT_SINGLE_GPU,
    DR_VERDICT_SINGLE_NODE,
    DR_VERDICT_MULTI_NODE
} dr_plan_verdict_t;

const char *dr_plan_verdict_name(dr_plan_verdict_t v);

/* One point of a GPU type's cost-versus-time curve. */
typedef struct dr_plan_point {
    uint32_t gpus;
    double wall_s, cost_usd; /* cost NAN when the price is unknown */
} dr_plan_point_t;

typedef struct dr_plan_option {
    char gpu[DR_GPU_NAME_MAX];
    bool exact; /* the configuration the user asked for */
    bool fits;  /* runs at all */
    bool meets; /* meets the deadline / latency targets / rate */
    dr_plan_verdict_t verdict;
    char note[DR_PERFMODEL_REASON_MAX]; /* why not, or a caveat */
    uint32_t gpus, nodes, node_gpus;
    /* training and serving: the network the estimate used, and whence */
    dr_perfmodel_net_t net;
    dr_plan_net_from_t net_from;
    double price_hr, tdp_w;                                 /* NAN when unknown */
    double wall_s;                                          /* training/array: time to finish */
    double gpu_hours, cost_usd, energy_kwh, power_cost_usd; /* NAN when unknown */
    /* training */
    dr_perfmodel_train_est_t train;
    /* serving */
    dr_perfmodel_serve_est_t serve;
    uint32_t replicas;
    double cost_usd_hr, energy_kwh_hr;
    double startup_s; /* training: start-up and per-job overheads included in wall_s */
    /* training: wall_s is what such a run typically takes; the range is
     * where 80% of published runs planned the same way fell (range_empirical,
     * a run the planner chose everything of), or for a pinned run the
     * model's figure to the slow end (docs/planner.md, "Optimism");
     * mfu_ceiling is the best published MFU for the generation at this
     * scale, which caps the estimate */
    double wall_fast_s, wall_slow_s;
    double mfu_ceiling;
    bool capped; /* the model's own estimate was above the ceiling */
    bool range_empirical;
    /* array */
    double task_s; /* seconds per task on this GPU */
    uint32_t waves;
    /* the cost/time curve behind the choice (owned) */
    dr_plan_point_t *curve;
    size_t ncurve;
} dr_plan_option_t;

typedef struct dr_plan_result {
    dr_plan_kind_t kind;
    dr_perfmodel_arch_t arch; /* the model as completed */
    double train_flops;       /* 6·N·D */
    double model_flops;       /* (6N + 12·L·h·s)·D, FLOPs the MFU counts */
    dr_plan_option_t *opts;   /* ranked: the exact configuration first, then by cost */
    size_t n;
    char explanation[4096]; /* one paragraph on the top choice */
    char assumptions[1024]; /* training: the planner's default choices, stated (printed in
                               every plan) */
    char verdict_text[512]; /* the decision rule applied to the top choice, printed first */
    double planned_batch;   /* training: a short run's batch cap (sequences), 0 = none */
    double default_batch;   /* training: the model's default batch (published or GPT-3 rule) */
    double opt_batch;       /* training: DeepSeek LLM's B_opt(6ND) in sequences */
    /* training: one GPU with the optimizer in host memory (--offload) when
     * the plan itself needs more, or the requested GPUs cannot hold it
     * (offload_gpus 0: no such option) */
    uint32_t offload_gpus;
    char offload_gpu[DR_GPU_NAME_MAX];
    double offload_wall_s;
    double alt_wall_s; /* training: the top choice's wall time at default_batch (NAN if
                          not computed or the same batch) */
    bool any_meets;
} dr_plan_result_t;

/* Plan a request against a catalog.  Impossible or contradictory inputs
 * (zero tokens, a model no GPU type can hold even on the largest cluster, a
 * latency target below one forward pass, ...) return DR_EINVAL with an
 * explanation in err; otherwise every considered GPU type gets an option. */
int dr_plan_run(const dr_plan_req_t *req, const dr_catalog_t *cat, dr_plan_result_t *res,
                dr_err_t *err);
void dr_plan_result_free(dr_plan_result_t *res);

/* The result as JSON (malloc'd; NULL on allocation failure).  Schema in
 * docs/cli.md ("drover plan"). */
char *dr_plan_json(const dr_plan_req_t *req, const dr_plan_result_t *res);
/* Cost versus wall time, one line per GPU type, as an SVG document
 * (malloc'd; NULL on allocation failure). */
char *dr_plan_svg(const dr_plan_req_t *req, const dr_plan_result_t *res);

/* Small runs (docs/planner.md, "Small jobs"): a run takes at least this
 * many optimizer steps, so an unpinned global batch shrinks for short runs
 * and no more data-parallel ranks are offered than the work can use. */
#define DR_PLAN_MIN_STEPS 100
/* A larger configuration is preferred only when it saves this fraction of
 * the wall time and at least DR_PLAN_MIN_SAVING_S seconds (half an hour is
 * not worth a bigger allocation's queue wait and failure exposure). */
#define DR_PLAN_MIN_SAVING   0.05
#define DR_PLAN_MIN_SAVING_S 1800.0
/* Start-up and per-job overheads of a training job on `gpus` GPUs in
 * `nodes` nodes of a model with `params` parameters (seconds). */
double dr_plan_startup_s(double params, uint32_t gpus, uint32_t nodes);

/* The best model-FLOPs utilisation published for g's generation in
 * precision p on `nodes` nodes: the bound on what a plan promises. */
double dr_plan_best_mfu(const dr_gpu_spec_t *g, dr_precision_t p, uint32_t nodes);

/* DeepSeek LLM's loss-optimal global batch (tokens) for `flops` of
 * training compute: 0.292 x C^0.3271 (docs/planner.md, "The batch"). */
double dr_plan_batch_opt_tokens(double flops);

/* The largest cluster the planner considers for one job (GPUs). */
#define DR_PLAN_MAX_GPUS 65536u

#endif
