/* json.c - the plan as JSON, the document other tools read (its schema is
 * an interface, docs/cli.md "drover plan"): the model, then each option
 * with its network, its layout or replicas, and its cost/time curve.
 * Builds the string in memory; the CLI writes it. */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/plan.h"

#define GIB 1073741824.0

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *integer(uint64_t v)
{
    return json_integer((json_int_t)v);
}

/* json_object_set_new that remembers a failure */
static void put(json_t *o, const char *k, json_t *v, bool *bad)
{
    if (!v || json_object_set_new(o, k, v) != 0)
        *bad = true;
}

static json_t *model_json(const dr_perfmodel_arch_t *a, bool *bad)
{
    json_t *m = json_object();
    if (!m) {
        *bad = true;
        return NULL;
    }
    put(m, "name", json_string(a->name), bad);
    put(m, "params", num(a->params), bad);
    put(m, "layers", integer(a->layers), bad);
    put(m, "hidden", integer(a->hidden), bad);
    put(m, "heads", integer(a->heads), bad);
    put(m, "kv_heads", integer(a->kv_heads), bad);
    put(m, "ffn", integer(a->ffn), bad);
    put(m, "vocab", integer(a->vocab), bad);
    put(m, "seq_len", integer(a->seq_len), bad);
    put(m, "gated_mlp", json_boolean(a->glu), bad);
    if (dr_perfmodel_arch_moe(a)) {
        put(m, "active_params", num(dr_perfmodel_arch_active(a)), bad);
        put(m, "experts", integer(a->experts), bad);
        put(m, "top_k", integer(a->top_k), bad);
        put(m, "shared_experts", integer(a->shared_experts), bad);
        put(m, "expert_ffn", integer(a->expert_ffn), bad);
    }
    return m;
}

static json_t *curve_json(const dr_plan_option_t *o, bool *bad)
{
    json_t *arr = json_array();
    if (!arr) {
        *bad = true;
        return NULL;
    }
    for (size_t i = 0; i < o->ncurve; i++) {
        json_t *p = json_object();
        if (!p) {
            *bad = true;
            break;
        }
        put(p, "gpus", integer(o->curve[i].gpus), bad);
        put(p, "wall_time_s", num(o->curve[i].wall_s), bad);
        put(p, "cost_usd", num(o->curve[i].cost_usd), bad);
        if (json_array_append_new(arr, p) != 0)
            *bad = true;
    }
    return arr;
}

static void common_json(json_t *j, const dr_plan_option_t *o, bool *bad)
{
    put(j, "gpu", json_string(o->gpu), bad);
    put(j, "exact", json_boolean(o->exact), bad);
    put(j, "fits", json_boolean(o->fits), bad);
    put(j, "verdict", json_string(dr_plan_verdict_name(o->verdict)), bad);
    put(j, "gpus", integer(o->gpus), bad);
    put(j, "nodes", integer(o->nodes), bad);
    put(j, "gpus_per_node", integer(o->node_gpus), bad);
    put(j, "price_usd_per_gpu_hour", num(o->price_hr), bad);
    put(j, "note", o->note[0] ? json_string(o->note) : json_null(), bad);
}

/* The network an option was planned on: whence (the type's reference
 * system, the cluster's nodes, or only their GPUs per node), the NVLink or
 * PCIe domain and the network between nodes. */
static json_t *net_json(const dr_plan_option_t *o, bool *bad)
{
    static const char *const from[] = {"reference", "cluster", "cluster_gpus_per_node"};
    const dr_perfmodel_net_t *n = &o->net;
    json_t *j = json_object();
    if (!j) {
        *bad = true;
        return NULL;
    }
    put(j, "from", json_string(from[(unsigned)o->net_from < 3 ? o->net_from : 0]), bad);
    put(j, "kind", json_string(dr_perfmodel_netkind_name(n->kind)), bad);
    put(j, "inter_gbit", num(n->inter_gbit), bad);
    put(j, "intra_nvlink", json_boolean(n->intra_nvlink), bad);
    put(j, "intra_gbs", num(n->intra_gbs), bad);
    put(j, "domain_gpus", integer(n->node_gpus), bad);
    return j;
}

static json_t *train_opt(const dr_plan_option_t *o, bool *bad)
{
    json_t *j = json_object();
    if (!j) {
        *bad = true;
        return NULL;
    }
    const dr_perfmodel_train_est_t *e = &o->train;
    common_json(j, o, bad);
    put(j, "network", net_json(o, bad), bad);
    put(j, "meets_deadline", json_boolean(o->fits && o->meets), bad);
    put(j, "wall_time_s", num(o->fits ? o->wall_s : NAN), bad);
    put(j, "wall_time_days", num(o->fits ? o->wall_s / 86400 : NAN), bad);
    put(j, "startup_s", num(o->fits ? o->startup_s : NAN), bad);
    put(j, "gpu_hours", num(o->fits ? o->gpu_hours : NAN), bad);
    put(j, "cost_usd", num(o->fits ? o->cost_usd : NAN), bad);
    put(j, "energy_kwh", num(o->fits ? o->energy_kwh : NAN), bad);
    put(j, "power_cost_usd", num(o->fits ? o->power_cost_usd : NAN), bad);
    put(j, "achieved_tflops_per_gpu", num(o->fits ? e->achieved_tflops_per_gpu : NAN), bad);
    put(j, "mfu", num(o->fits ? e->mfu : NAN), bad);
    put(j, "hfu", num(o->fits ? e->hfu : NAN), bad);
    put(j, "tokens_per_s", num(o->fits ? e->tokens_per_s : NAN), bad);
    put(j, "tokens_per_s_per_gpu", num(o->fits && o->gpus ? e->tokens_per_s / o->gpus : NAN), bad);
    put(j, "precision", json_string(dr_precision_name(e->precision)), bad);
    put(j, "peak_tflops", num(e->peak_tflops > 0 ? e->peak_tflops : NAN), bad);
    put(j, "memory_per_gpu_gb", num(e->mem.total > 0 ? e->mem.total / GIB : NAN), bad);
    put(j, "memory_capacity_gb", num(e->mem.capacity > 0 ? e->mem.capacity / GIB : NAN), bad);
    json_t *mem = json_object();
    if (mem) {
        put(mem, "weights_gb", num(e->mem.weights / GIB), bad);
        put(mem, "gradients_gb", num(e->mem.grads / GIB), bad);
        put(mem, "optimizer_gb", num(e->mem.optim / GIB), bad);
        put(mem, "activations_gb", num(e->mem.activations / GIB), bad);
        put(mem, "runtime_gb", num(e->mem.overhead / GIB), bad);
    }
    put(j, "memory", mem, bad);
    json_t *l = json_object();
    if (l) {
        put(l, "tp", integer(e->layout.tp), bad);
        put(l, "pp", integer(e->layout.pp), bad);
        put(l, "dp", integer(e->layout.dp), bad);
        put(l, "ep", integer(e->layout.ep > 1 ? e->layout.ep : 1), bad);
        put(l, "cp", integer(e->layout.cp > 1 ? e->layout.cp : 1), bad);
        put(l, "micro_batch", integer(e->layout.micro_batch), bad);
        put(l, "interleave", integer(e->layout.interleave), bad);
        put(l, "zero_stage", json_integer(e->layout.zero_stage), bad);
        put(l, "recompute", json_string(dr_perfmodel_recompute_name(e->layout.recompute)), bad);
        put(l, "microbatches", integer(e->microbatches), bad);
        put(l, "global_batch", num(e->global_batch), bad);
    }
    put(j, "layout", l, bad);
    put(j, "step_time_s", num(o->fits ? e->step_s : NAN), bad);
    json_t *st = json_object();
    if (st) {
        put(st, "compute_s", num(e->compute_s), bad);
        put(st, "tp_comm_s", num(e->tp_comm_s), bad);
        put(st, "pp_comm_s", num(e->pp_comm_s), bad);
        put(st, "bubble_s", num(e->bubble_s), bad);
        put(st, "dp_comm_s", num(e->dp_comm_s), bad);
        put(st, "ep_comm_s", num(e->ep_comm_s), bad);
        put(st, "cp_comm_s", num(e->cp_comm_s), bad);
        put(st, "optimizer_s", num(e->optim_s), bad);
        put(st, "straggler_s", num(e->straggle_s), bad);
    }
    put(j, "step", st, bad);
    put(j, "goodput", num(o->fits ? e->goodput : NAN), bad);
    put(j, "wall_time_fast_s", num(o->fits && o->wall_fast_s > 0 ? o->wall_fast_s : NAN), bad);
    put(j, "wall_time_slow_s", num(o->fits && o->wall_slow_s > 0 ? o->wall_slow_s : NAN), bad);
    put(j, "mfu_ceiling", num(o->fits ? o->mfu_ceiling : NAN), bad);
    put(j, "capped", json_boolean(o->fits && o->capped), bad);
    json_t *rs = json_object();
    if (rs && o->fits) {
        const dr_res_t *q = &e->res;
        put(rs, "checkpoint_gb", num(q->ckpt_bytes / 1e9), bad);
        put(rs, "storage_gbs", num(q->storage_gbs), bad);
        put(rs, "checkpoint_write_s", num(q->write_s), bad);
        put(rs, "job_mtbf_s", num(q->job_mtbf_s), bad);
        put(rs, "restart_s", num(q->restart_s), bad);
        put(rs, "checkpoint_every_s", num(q->interval_s), bad);
        put(rs, "checkpoint_every_steps", num(q->interval_steps), bad);
        put(rs, "effective_fraction", num(q->effective), bad);
    }
    put(j, "resilience", rs, bad);
    put(j, "curve", curve_json(o, bad), bad);
    return j;
}

static json_t *serve_opt(const dr_plan_option_t *o, bool *bad)
{
    json_t *j = json_object();
    if (!j) {
        *bad = true;
        return NULL;
    }
    const dr_perfmodel_serve_est_t *e = &o->serve;
    bool f = o->fits;
    common_json(j, o, bad);
    put(j, "network", net_json(o, bad), bad);
    put(j, "meets_slo", json_boolean(f && o->meets), bad);
    put(j, "replicas", integer(o->replicas), bad);
    put(j, "gpus_per_replica", integer(e->tp), bad);
    json_t *l = json_object();
    if (l) {
        put(l, "tp", integer(e->tp), bad);
        put(l, "pp", integer(1), bad);
        put(l, "dp", integer(o->replicas), bad);
    }
    put(j, "layout", l, bad);
    put(j, "precision", json_string(dr_precision_name(e->precision)), bad);
    put(j, "concurrency_per_replica", integer(e->concurrency), bad);
    put(j, "max_concurrency_per_replica", integer(e->max_concurrency), bad);
    put(j, "requests_per_s_per_replica", num(f ? e->requests_per_s : NAN), bad);
    put(j, "tokens_per_s_per_replica", num(f ? e->tokens_per_s : NAN), bad);
    put(j, "capacity_requests_per_s", num(f ? o->replicas * e->requests_per_s : NAN), bad);
    put(j, "ttft_s", num(f ? e->ttft_s : NAN), bad);
    put(j, "tpot_s", num(f ? e->tpot_s : NAN), bad);
    put(j, "latency_s", num(f ? e->latency_s : NAN), bad);
    put(j, "ttft_floor_s", num(f ? e->ttft_floor_s : NAN), bad);
    put(j, "tpot_floor_s", num(f ? e->tpot_floor_s : NAN), bad);
    put(j, "memory_per_gpu_gb", num(e->mem.total > 0 ? e->mem.total / GIB : NAN), bad);
    put(j, "weights_per_gpu_gb", num(e->mem.weights / GIB), bad);
    put(j, "kv_cache_per_gpu_gb", num(e->mem.kv_cache / GIB), bad);
    put(j, "kv_bytes_per_request", num(e->kv_bytes_per_request), bad);
    put(j, "cost_usd_per_hour", num(f ? o->cost_usd_hr : NAN), bad);
    put(j, "cost_usd_per_month", num(f ? o->cost_usd_hr * 730 : NAN), bad);
    double tok_hr = f ? o->replicas * e->tokens_per_s * 3600 : NAN;
    put(j, "cost_usd_per_million_tokens",
        num(f && tok_hr > 0 ? o->cost_usd_hr / tok_hr * 1e6 : NAN), bad);
    put(j, "energy_kwh_per_hour", num(f ? o->energy_kwh_hr : NAN), bad);
    put(j, "gpu_hours_per_hour", num(f ? (double)o->gpus : NAN), bad);
    return j;
}

static json_t *array_opt(const dr_plan_option_t *o, bool *bad)
{
    json_t *j = json_object();
    if (!j) {
        *bad = true;
        return NULL;
    }
    bool f = o->fits;
    common_json(j, o, bad);
    put(j, "meets_deadline", json_boolean(f && o->meets), bad);
    put(j, "task_time_s", num(f ? o->task_s : NAN), bad);
    put(j, "waves", integer(o->waves), bad);
    put(j, "wall_time_s", num(f ? o->wall_s : NAN), bad);
    put(j, "gpu_hours", num(f ? o->gpu_hours : NAN), bad);
    put(j, "cost_usd", num(f ? o->cost_usd : NAN), bad);
    put(j, "energy_kwh", num(f ? o->energy_kwh : NAN), bad);
    put(j, "power_cost_usd", num(f ? o->power_cost_usd : NAN), bad);
    put(j, "curve", curve_json(o, bad), bad);
    return j;
}

static const char *kind_name(dr_plan_kind_t k)
{
    return k == DR_PLAN_TRAIN ? "train" : k == DR_PLAN_SERVE ? "serve" : "array";
}

char *dr_plan_json(const dr_plan_req_t *req, const dr_plan_result_t *res)
{
    bool bad = false;
    json_t *root = json_object();
    if (!root)
        return NULL;
    put(root, "kind", json_string(kind_name(res->kind)), &bad);
    json_t *in = json_object();
    if (in) {
        put(in, "deadline_s", num(req->deadline_s > 0 ? req->deadline_s : NAN), &bad);
        put(in, "max_gpus", req->max_gpus ? integer(req->max_gpus) : json_null(), &bad);
        put(in, "price_column", json_string(req->neocloud ? "neocloud" : "on_demand"), &bad);
        put(in, "power_usd_per_kwh", num(req->power_usd_kwh > 0 ? req->power_usd_kwh : NAN), &bad);
        if (res->kind == DR_PLAN_TRAIN) {
            const dr_perfmodel_train_t *t = &req->train;
            put(in, "tokens", num(t->tokens), &bad);
            put(in, "seq_len", integer(t->seq_len ? t->seq_len : res->arch.seq_len), &bad);
            put(in, "global_batch",
                num(t->global_batch > 0
                        ? t->global_batch
                        : dr_perfmodel_default_batch(&res->arch,
                                                     t->seq_len ? t->seq_len : res->arch.seq_len)),
                &bad);
            put(in, "precision", json_string(dr_precision_name(t->precision)), &bad);
            put(in, "zero_stage", t->zero_stage >= 0 ? json_integer(t->zero_stage) : json_null(),
                &bad);
            put(in, "cpu_offload", json_boolean(t->cpu_offload), &bad);
            put(in, "recompute", json_string(dr_perfmodel_recompute_name(t->recompute)), &bad);
        } else if (res->kind == DR_PLAN_SERVE) {
            put(in, "rate_rps", num(req->rate_rps), &bad);
            put(in, "prompt_tokens", num(req->serve.prompt_tokens), &bad);
            put(in, "output_tokens", num(req->serve.output_tokens), &bad);
            put(in, "ttft_s", num(req->ttft_s > 0 ? req->ttft_s : NAN), &bad);
            put(in, "tpot_s", num(req->tpot_s > 0 ? req->tpot_s : NAN), &bad);
            put(in, "latency_s", num(req->latency_s > 0 ? req->latency_s : NAN), &bad);
            put(in, "precision", json_string(dr_precision_name(req->serve.precision)), &bad);
        } else {
            put(in, "tasks", num(req->tasks), &bad);
            put(in, "task_gpu_s", num(req->task_gpu_s), &bad);
            put(in, "ref_gpu", json_string(req->ref_gpu), &bad);
            put(in, "task_mem_gb", num(req->task_mem_gb), &bad);
            put(in, "bound", json_string(req->memory_bound ? "memory" : "compute"), &bad);
        }
    }
    put(root, "request", in, &bad);
    if (res->kind != DR_PLAN_ARRAY)
        put(root, "model", model_json(&res->arch, &bad), &bad);
    if (res->kind == DR_PLAN_TRAIN) {
        put(root, "train_flops", num(res->train_flops), &bad);
        put(root, "model_flops", num(res->model_flops), &bad);
    }
    json_t *opts = json_array();
    long rec = -1;
    for (size_t i = 0; opts && i < res->n; i++) {
        const dr_plan_option_t *o = &res->opts[i];
        json_t *j = res->kind == DR_PLAN_TRAIN   ? train_opt(o, &bad)
                    : res->kind == DR_PLAN_SERVE ? serve_opt(o, &bad)
                                                 : array_opt(o, &bad);
        if (!j || json_array_append_new(opts, j) != 0)
            bad = true;
        if (rec < 0 && o->fits && o->meets && !o->exact)
            rec = (long)i;
    }
    put(root, "options", opts, &bad);
    put(root, "recommended", rec >= 0 ? json_integer(rec) : json_null(), &bad);
    put(root, "explanation", json_string(res->explanation), &bad);
    put(root, "verdict_text", json_string(res->verdict_text), &bad);
    if (res->kind == DR_PLAN_TRAIN && res->planned_batch > 0)
        put(root, "planned_global_batch", json_real(res->planned_batch), &bad);
    if (res->kind == DR_PLAN_TRAIN) {
        put(root, "default_global_batch", num(res->default_batch > 0 ? res->default_batch : NAN),
            &bad);
        put(root, "opt_global_batch", num(res->opt_batch > 0 ? res->opt_batch : NAN), &bad);
        put(root, "default_batch_wall_time_s", num(res->alt_wall_s), &bad);
        put(root, "assumptions", json_string(res->assumptions), &bad);
    }
    char *out =
        bad ? NULL
            : json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8));
    json_decref(root);
    return out;
}
