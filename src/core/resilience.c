/* resilience.c - failures, checkpoints and the Young-Daly interval
 * (include/drover/resilience.h).
 *
 * The model is first order, as Daly (2006) derives it: a job of MTBF M
 * checkpoints every tau seconds of work, each checkpoint pausing training
 * for delta; a failure costs the restart R plus, on average, half an
 * interval of recomputed work.  Per unit of useful time the overheads are
 * delta/tau (writing) and (R + tau/2)/M (failures); tau = sqrt(2 delta M)
 * (Young 1974) minimises their sum.  Valid while delta << M, which holds
 * for every run the planner considers (a 405B checkpoint of 5.7 TB at
 * 2 TB/s takes 3 s; 16,384 GPUs fail every ~3 h). */
#include "drover/resilience.h"

#include <math.h>

void dr_res_eval(const dr_res_in_t *in, dr_res_t *o)
{
    double gpus = in->gpus ? in->gpus : 1;
    double nodes = in->nodes ? in->nodes : 1;
    double mtbf_h = in->gpu_mtbf_h > 0 ? in->gpu_mtbf_h : DR_RES_GPU_MTBF_H;
    o->ckpt_bytes =
        in->ckpt_bytes > 0 ? in->ckpt_bytes : fmax(0, in->params) * DR_RES_CKPT_BYTES_PER_PARAM;
    o->storage_gbs =
        in->storage_gbs > 0 ? in->storage_gbs : fmin(DR_RES_MAX_GBS, nodes * DR_RES_NODE_GBS);
    o->write_s = o->ckpt_bytes / (o->storage_gbs * 1e9);
    o->job_mtbf_s = mtbf_h * 3600.0 / gpus;
    /* the restart reads the checkpoint back at the same bandwidth */
    o->restart_s = DR_RES_DETECT_S + fmax(0, in->restart_s) + o->write_s;
    double tau = sqrt(2 * o->write_s * o->job_mtbf_s);
    tau = fmax(tau, DR_RES_MIN_INTERVAL_S);
    if (in->step_s > 0) {
        o->interval_steps = fmax(1, ceil(tau / in->step_s - 1e-9)); /* the optimum is flat */
        tau = o->interval_steps * in->step_s;
    } else {
        o->interval_steps = 0;
    }
    o->interval_s = tau;
    o->ckpt_frac = o->write_s / tau;
    o->fail_frac = (o->restart_s + tau / 2) / o->job_mtbf_s;
    o->effective = 1.0 / (1.0 + o->ckpt_frac + o->fail_frac);
}

double dr_res_launch_s(uint32_t gpus, uint32_t nodes)
{
    double init = 0;
    if (gpus > 1)
        init = DR_RES_INIT_S + DR_RES_INIT_PER_DOUBLING_S * log2(nodes > 1 ? nodes : 1) +
               DR_RES_INIT_PER_GPU_S * gpus;
    return DR_RES_PROC_S + init;
}
