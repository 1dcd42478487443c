/* resilience.h - what failures and checkpoints cost a long training run at
 * scale: the interruption rate, the checkpoint size and write time, the
 * checkpoint interval that loses the least (Young-Daly), and the expected
 * fraction of wall time that is useful training.
 *
 * The planner prints these (and the --checkpoint-every it recommends, which
 * the controller then uses); the performance model divides a run's
 * failure-free time by the effective fraction.  Pure arithmetic, sources in
 * docs/planner.md ("Failures and checkpoints"). */
#ifndef DROVER_RESILIENCE_H
#define DROVER_RESILIENCE_H

#include <stdint.h>

/* Llama 3 (Dubey et al. 2024, sec. 3.3.4): 419 unexpected interruptions in
 * 54 days of pre-training on up to 16,384 H100s - one per ~50,700
 * GPU-hours (466 with the planned ones). */
#define DR_RES_GPU_MTBF_H 50700.0
/* What a checkpoint holds per parameter in mixed-precision Adam: bf16
 * weights (2), fp32 master weights (4), Adam's two moments (4 + 4).
 * Gradients are not saved. */
#define DR_RES_CKPT_BYTES_PER_PARAM 14.0
/* Storage write bandwidth: per node, one NVMe drive or a parallel
 * filesystem client's share (the same 2 GB/s the start-up model reads
 * weights at); in all, at most what Llama 3's Tectonic storage sustained
 * for checkpoints (2 TB/s, sec. 3.3.1).  --storage-gbs overrides both. */
#define DR_RES_NODE_GBS 2.0
#define DR_RES_MAX_GBS  2000.0
/* Time from a failure until the job computes again, before reloading: the
 * failure is noticed (a dead node by the controller's heartbeats within
 * 10 s; a hung collective only by NCCL's watchdog - PyTorch's default
 * timeout is 10 min, Llama 3 tuned it down), the job is requeued and
 * restarted.  The process start and distributed initialisation come from
 * the start-up model (dr_plan_startup_s) and the checkpoint read from the
 * storage bandwidth. */
#define DR_RES_DETECT_S 300.0
/* No interval below this: checkpointing every few seconds is what the
 * formula says for tiny checkpoints, but each one costs bookkeeping
 * (manifest, fsync, pruning) that the formula does not see. */
#define DR_RES_MIN_INTERVAL_S 300.0

typedef struct dr_res_in {
    double params;      /* parameters (checkpoint size) */
    uint32_t gpus;      /* GPUs in the job */
    uint32_t nodes;     /* nodes (each writes its shard) */
    double step_s;      /* seconds per optimizer step (the interval is a whole number of steps) */
    double restart_s;   /* process start + distributed initialisation (0 = none) */
    double storage_gbs; /* aggregate checkpoint bandwidth, GB/s (0 = the default above) */
    double gpu_mtbf_h;  /* GPU-hours between interruptions (0 = DR_RES_GPU_MTBF_H) */
    double ckpt_bytes;  /* checkpoint size (0 = params x DR_RES_CKPT_BYTES_PER_PARAM) */
} dr_res_in_t;

typedef struct dr_res {
    double ckpt_bytes;  /* one checkpoint */
    double storage_gbs; /* bandwidth it is written at */
    double write_s;     /* delta: the training pause to write one */
    double job_mtbf_s;  /* M: mean time between interruptions of this job */
    double restart_s;   /* R: failure to computing again (detect, restart, read the checkpoint) */
    double interval_s;  /* tau: Young-Daly sqrt(2 delta M), at least DR_RES_MIN_INTERVAL_S,
                           a whole number of steps */
    double interval_steps;
    double ckpt_frac; /* delta / tau: time spent writing checkpoints */
    double fail_frac; /* (R + tau/2) / M: restarts and recomputed work */
    double effective; /* 1 / (1 + ckpt_frac + fail_frac): useful share of wall time */
} dr_res_t;

/* Seconds from launch to the first step, without reading weights: the
 * process start (Python, `import torch`, CUDA context, model construction:
 * 20-60 s on one node), then torch.distributed rendezvous and NCCL
 * communicator set-up - a few rounds per doubling of nodes plus a per-rank
 * bootstrap exchange; no initialisation on one GPU.  Reasoned, not fitted
 * (docs/planner.md, "Small jobs"). */
#define DR_RES_PROC_S              30.0
#define DR_RES_INIT_S              5.0
#define DR_RES_INIT_PER_DOUBLING_S 5.0
#define DR_RES_INIT_PER_GPU_S      0.01
double dr_res_launch_s(uint32_t gpus, uint32_t nodes);

/* The checkpoint and failure budget of a run.  Inputs <= 0 take their
 * defaults; gpus 0 counts as 1. */
void dr_res_eval(const dr_res_in_t *in, dr_res_t *out);

#endif
