/* array.c - planning a batch array on one GPU type: the task time scaled
 * from the reference GPU by tensor rate or memory bandwidth, the GPUs that
 * finish the tasks within the deadline, and the waves they run in. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "drover/time.h"
#include "plan/plan_priv.h"

/* Relative speed of g for a task measured on ref: effective matmul rate
 * (peak x measured matmul efficiency) or HBM bandwidth. */
static double array_speed(const dr_plan_req_t *r, const dr_gpu_spec_t *g)
{
    if (r->memory_bound)
        return isfinite(g->hbm_tbs) ? g->hbm_tbs : NAN;
    double p = dr_perfmodel_peak_tflops(g, r->task_precision, NULL);
    return p * dr_perfmodel_matmul_eff(g, r->task_precision);
}

int dr_plan_array_type(const dr_plan_req_t *r, const dr_gpu_spec_t *g, const dr_gpu_spec_t *ref,
                       uint32_t fixed, dr_plan_option_t *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->gpu, sizeof o->gpu, "%s", g->name);
    dr_perfmodel_net_t net; /* tasks do not talk: only the node size is read */
    dr_plan_net_for(r, g, &net);
    o->node_gpus = dr_plan_node_size(r, g, net.node_gpus);
    o->price_hr = dr_plan_price_of(r, g);
    o->tdp_w = g->tdp_w;
    o->wall_s = o->gpu_hours = o->cost_usd = o->energy_kwh = o->power_cost_usd = NAN;
    double sg = array_speed(r, g), sr = array_speed(r, ref);
    if (!isfinite(sg) || !isfinite(sr) || sg <= 0 || sr <= 0) {
        snprintf(o->note, sizeof o->note, "no known %s for %s to scale the task time",
                 r->memory_bound ? "memory bandwidth" : "tensor rate",
                 isfinite(sg) && sg > 0 ? ref->name : g->name);
        return DR_OK;
    }
    if (r->task_mem_gb > 0 && g->mem_gb < r->task_mem_gb) {
        snprintf(o->note, sizeof o->note, "a task needs %.1f GB, %s has %.0f GB", r->task_mem_gb,
                 g->name, g->mem_gb);
        return DR_OK;
    }
    o->task_s = r->task_gpu_s * sr / sg;
    double tasks = r->tasks;
    uint32_t maxg = dr_plan_type_max_gpus(r, g);
    double gpus;
    if (fixed) {
        gpus = fixed;
    } else if (r->deadline_s > 0 && o->task_s <= r->deadline_s) {
        double per_gpu = floor(r->deadline_s / o->task_s);
        gpus = ceil(tasks / per_gpu);
    } else {
        gpus = tasks; /* all at once: the same GPU-hours, the shortest wall time */
    }
    if (gpus > maxg)
        gpus = maxg;
    if (gpus > tasks)
        gpus = tasks;
    if (gpus < 1)
        gpus = 1;
    o->gpus = (uint32_t)gpus;
    o->waves = (uint32_t)ceil(tasks / gpus);
    o->wall_s = o->waves * o->task_s;
    o->fits = true;
    o->meets = r->deadline_s <= 0 || o->wall_s <= r->deadline_s;
    o->nodes = (o->gpus + o->node_gpus - 1) / o->node_gpus;
    o->verdict = dr_plan_verdict_of(o->gpus, o->node_gpus);
    dr_plan_account(r, o, g, tasks * o->task_s);
    if (!o->meets) {
        char w[32], d[32];
        dr_duration_format(o->wall_s, DR_DURATION_WORDS, w, sizeof w);
        dr_duration_format(r->deadline_s, DR_DURATION_WORDS, d, sizeof d);
        snprintf(o->note, sizeof o->note, "misses the deadline: %s with %u GPUs (deadline %s)", w,
                 o->gpus, d);
    }
    size_t ccap = 0;
    for (uint32_t k = 1; k <= maxg && k <= tasks; k *= 2) {
        double waves = ceil(tasks / k), wall = waves * o->task_s;
        if (dr_plan_push_point(o, &ccap, k, wall, k * wall / 3600 * o->price_hr) != 0)
            return DR_ENOMEM;
        if (k > (UINT32_MAX >> 1))
            break;
    }
    return DR_OK;
}
