/* plan.c - the planner behind `drover plan` (include/drover/plan.h): checks
 * the request, plans every GPU type considered (train.c, serve.c,
 * array.c), ranks the options (the exact configuration first, then those
 * that meet the targets by cost, the knee of the cost/time curve first when
 * nothing bounds the run), and has explain.c say why.  Impossible inputs
 * get an error that names the cause.
 *
 * Why in the library and not in the CLI: the same answers are wanted by
 * the controller (admission checks, "will this job meet its deadline on
 * this cluster") and by tests, so the logic is pure library code and the
 * CLI only parses and prints.  Every number comes from perfmodel.c.  The
 * planner may use src/core; src/core never includes it (scripts/lint). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_priv.h"

static double cost_key(const dr_plan_option_t *o)
{
    return isfinite(o->cost_usd) ? o->cost_usd : o->gpu_hours * 1e6; /* unknown prices last */
}

static int rank_cmp(const void *pa, const void *pb)
{
    const dr_plan_option_t *a = pa, *b = pb;
    if (a->exact != b->exact)
        return a->exact ? -1 : 1;
    int ca = a->fits ? (a->meets ? 0 : 1) : 2, cb = b->fits ? (b->meets ? 0 : 1) : 2;
    if (ca != cb)
        return ca - cb;
    double ka = 0, kb = 0;
    if (ca == 0) { /* meets: cheapest first, then fastest */
        ka = cost_key(a);
        kb = cost_key(b);
        if (ka == kb) {
            ka = isfinite(a->wall_s) ? a->wall_s : 0;
            kb = isfinite(b->wall_s) ? b->wall_s : 0;
        }
    } else if (ca == 1) { /* misses: closest to the target first */
        ka = isfinite(a->wall_s) ? a->wall_s : -a->replicas * a->serve.requests_per_s;
        kb = isfinite(b->wall_s) ? b->wall_s : -b->replicas * b->serve.requests_per_s;
    }
    if (ka != kb)
        return ka < kb ? -1 : 1;
    return strcmp(a->gpu, b->gpu);
}

static int check_train(const dr_plan_req_t *r, dr_err_t *err)
{
    if (!isfinite(r->train.tokens) || r->train.tokens <= 0)
        return dr_err_set(err, DR_EINVAL,
                          "tokens: %g - a training run needs a positive number of tokens "
                          "(e.g. --tokens 300B)",
                          r->train.tokens);
    if (r->train.global_batch < 0 || !isfinite(r->train.global_batch))
        return dr_err_set(err, DR_EINVAL, "global batch: %g must be positive",
                          r->train.global_batch);
    /* pinned layout parts: name the real cause, not the search's failure */
    const dr_perfmodel_arch_t *a = &r->train.arch;
    uint32_t seq = r->train.seq_len ? r->train.seq_len : a->seq_len;
    if (r->train.tp && a->heads && a->heads % r->train.tp)
        return dr_err_set(err, DR_EINVAL,
                          "--tp %u: must divide the model's %u attention heads (e.g. 1, 2, 4, 8)",
                          r->train.tp, a->heads);
    if (r->train.tp && r->train.tp > DR_PLAN_MAX_GPUS)
        return dr_err_set(err, DR_EINVAL, "--tp %u: more than the %u GPUs considered", r->train.tp,
                          DR_PLAN_MAX_GPUS);
    if (r->train.cp && seq && seq % r->train.cp)
        return dr_err_set(err, DR_EINVAL,
                          "--cp %u: must divide the %u-token sequence (context parallelism "
                          "splits each sequence)",
                          r->train.cp, seq);
    if (r->train.cp > DR_PLAN_MAX_GPUS)
        return dr_err_set(err, DR_EINVAL, "--cp %u: more than the %u GPUs considered", r->train.cp,
                          DR_PLAN_MAX_GPUS);
    if (r->train.pp && a->layers && r->train.pp > a->layers)
        return dr_err_set(err, DR_EINVAL, "--pp %u: more stages than the model's %u layers",
                          r->train.pp, a->layers);
    if (r->train.seq_len > DR_PLAN_MAX_SEQ)
        return dr_err_set(err, DR_EINVAL,
                          "--seq %u: longer than the %u tokens the planner models (published "
                          "training contexts reach about 1M; %s's own is %u)",
                          r->train.seq_len, DR_PLAN_MAX_SEQ, a->name, a->seq_len);
    if (seq && r->train.tokens < seq && r->train.seq_len)
        return dr_err_set(err, DR_EINVAL,
                          "--seq %u: longer than the whole training set of %.0f tokens", seq,
                          r->train.tokens);
    double batch =
        r->train.global_batch > 0 ? r->train.global_batch : dr_perfmodel_default_batch(a, seq);
    if (r->train.micro_batch && r->train.micro_batch > batch)
        return dr_err_set(err, DR_EINVAL,
                          "--micro-batch %u: more sequences than the global batch of %.0f",
                          r->train.micro_batch, batch);
    return DR_OK;
}

static int check_common(const dr_plan_req_t *r, dr_err_t *err)
{
    if (!isfinite(r->deadline_s) || r->deadline_s < 0)
        return dr_err_set(err, DR_EINVAL, "deadline: must be a positive duration");
    if (r->gpus > DR_PLAN_MAX_GPUS)
        return dr_err_set(err, DR_EINVAL,
                          "--gpus %u: more than the %u GPUs of the largest cluster the planner "
                          "considers",
                          r->gpus, DR_PLAN_MAX_GPUS);
    if (r->max_gpus && r->gpus > r->max_gpus)
        return dr_err_set(err, DR_EINVAL, "--gpus %u contradicts the GPU budget of %u", r->gpus,
                          r->max_gpus);
    if (!isfinite(r->power_usd_kwh) || r->power_usd_kwh < 0 || !isfinite(r->pue) || r->pue < 0)
        return dr_err_set(err, DR_EINVAL, "power price and PUE must be non-negative");
    if (r->net_set && (!isfinite(r->net_gbit) || r->net_gbit <= 0))
        return dr_err_set(err, DR_EINVAL, "network: bandwidth must be positive");
    return DR_OK;
}

/* Nothing fits anywhere: say how big the job is and what stopped each type. */
static int no_fit_error(const dr_plan_req_t *r, const dr_plan_result_t *res, dr_err_t *err)
{
    const dr_perfmodel_arch_t *a = &res->arch;
    const char *reason = res->n ? res->opts[0].note : "";
    for (size_t i = 0; i < res->n; i++) /* the largest-memory GPU's reason is the most telling */
        if (strstr(res->opts[i].gpu, "MI35") || strstr(res->opts[i].gpu, "B200"))
            reason = res->opts[i].note;
    uint32_t maxg = r->max_gpus ? r->max_gpus : DR_PLAN_MAX_GPUS;
    if (r->ntypes > 0 && r->kind != DR_PLAN_ARRAY) {
        /* the user chose the types: what stops each of them is the answer */
        char why[900] = "";
        for (size_t i = 0; i < res->n && i < 4; i++)
            dr_plan_cat(why, sizeof why, "%s%s: %.200s", i ? "; " : "", res->opts[i].gpu,
                        res->opts[i].note);
        return dr_err_set(err, DR_EINVAL, "--types: none of the GPU types given can %s %s: %s",
                          r->kind == DR_PLAN_TRAIN ? "train" : "serve", a->name, why);
    }
    if (r->kind == DR_PLAN_TRAIN) {
        double state = 16 * a->params, biggest = 0;
        const char *bg = "";
        for (size_t i = 0; i < res->n; i++) {
            double m = res->opts[i].train.mem.capacity;
            if (m > biggest) {
                biggest = m;
                bg = res->opts[i].gpu;
            }
        }
        if (biggest > 0 && state / maxg > biggest * 0.9)
            return dr_err_set(err, DR_EINVAL,
                              "%s (%.3g parameters) is larger than %s: mixed-precision Adam "
                              "needs %.3g TB of model state (16 bytes per parameter); even "
                              "sharded over %u GPUs that is %.0f GB per GPU before activations, "
                              "more than the largest GPU in the catalog (%s, %.0f GB)",
                              a->name, a->params,
                              r->max_gpus ? "the GPU budget allows"
                                          : "any cluster the planner considers",
                              state / 1e12, maxg, state / maxg / 1e9, bg, biggest / 1073741824.0);
        return dr_err_set(err, DR_EINVAL,
                          "%s (%.3g parameters) does not fit %s (up to %u GPUs of one catalog "
                          "type): %.3g TB of model state at 16 bytes per parameter, plus "
                          "activations; the closest: %.200s",
                          a->name, a->params,
                          r->max_gpus ? "within the GPU budget"
                                      : "any cluster the planner considers",
                          maxg, state / 1e12, reason);
    }
    return dr_err_set(err, DR_EINVAL,
                      "%s (%.3g parameters) cannot be served by any GPU type in the catalog: "
                      "%.300s",
                      a->name, a->params, reason);
}

/* A latency target no GPU can meet: report the best floor. */
static int serve_floor_error(const dr_plan_req_t *r, const dr_gpu_spec_t *const *types, size_t nt,
                             dr_err_t *err)
{
    double best_ttft = INFINITY, best_tpot = INFINITY;
    const char *gt = "", *gp = "";
    uint32_t tt = 0, tpp = 0;
    for (size_t i = 0; i < nt; i++) {
        dr_perfmodel_net_t net;
        dr_plan_net_for(r, types[i], &net);
        for (uint32_t tp = 1; tp <= net.node_gpus && tp <= 64; tp *= 2) {
            if (r->serve.arch.heads % tp)
                continue;
            dr_perfmodel_serve_est_t e;
            if (dr_perfmodel_serve_eval(&r->serve, types[i], tp, 1, &net, &e, NULL) != 0 || !e.fits)
                continue;
            if (e.ttft_floor_s < best_ttft) {
                best_ttft = e.ttft_floor_s;
                gt = types[i]->name;
                tt = tp;
            }
            if (e.tpot_floor_s < best_tpot) {
                best_tpot = e.tpot_floor_s;
                gp = types[i]->name;
                tpp = tp;
            }
        }
    }
    if (!isfinite(best_ttft))
        return DR_OK;
    if (r->ttft_s > 0 && r->ttft_s < best_ttft)
        return dr_err_set(err, DR_EINVAL,
                          "--ttft %.3g s is below the physical floor: one forward pass over a "
                          "%.0f-token prompt of %s takes at least %.3g s even on %u x %s (the "
                          "fastest option in the catalog)",
                          r->ttft_s, r->serve.prompt_tokens, r->serve.arch.name, best_ttft, tt, gt);
    if (r->tpot_s > 0 && r->tpot_s < best_tpot)
        return dr_err_set(err, DR_EINVAL,
                          "--tpot %.3g s is below the physical floor: each output token of %s "
                          "reads all the weights, at least %.3g s even on %u x %s",
                          r->tpot_s, r->serve.arch.name, best_tpot, tpp, gp);
    /* the first output token comes from the prefill */
    double floor_lat = best_ttft + (r->serve.output_tokens - 1) * best_tpot;
    if (r->latency_s > 0 && r->latency_s < floor_lat)
        return dr_err_set(err, DR_EINVAL,
                          "--latency %.3g s is below the physical floor: the prompt's forward "
                          "pass (%.3g s) plus %.0f decode steps (%.3g s each) take at least "
                          "%.3g s on the fastest GPU in the catalog",
                          r->latency_s, best_ttft, r->serve.output_tokens - 1, best_tpot,
                          floor_lat);
    return DR_OK;
}

/* With neither a deadline nor a budget, cost alone would recommend a type
 * that is barely cheaper and many times slower (64 L40S for 3.6 years
 * over 64 B200s for 6 months at +6%): as within one type (the knee), the
 * fastest option costing at most 10% more than the cheapest goes first. */
static void knee_first(dr_plan_result_t *res)
{
    size_t first = 0;
    while (first < res->n && res->opts[first].exact)
        first++;
    if (first >= res->n || !res->opts[first].fits || !res->opts[first].meets)
        return;
    double c0 = cost_key(&res->opts[first]);
    size_t best = first;
    for (size_t i = first + 1; i < res->n; i++) {
        const dr_plan_option_t *o = &res->opts[i];
        if (!o->fits || !o->meets || o->exact)
            break;
        if (cost_key(o) <= 1.10 * c0 && o->wall_s < res->opts[best].wall_s)
            best = i;
    }
    if (best == first)
        return;
    dr_plan_option_t b = res->opts[best];
    memmove(&res->opts[first + 1], &res->opts[first], (best - first) * sizeof *res->opts);
    res->opts[first] = b;
}

/* ---- the planner ---- */

int dr_plan_run(const dr_plan_req_t *r, const dr_catalog_t *cat, dr_plan_result_t *res,
                dr_err_t *err)
{
    memset(res, 0, sizeof *res);
    if (!r || !cat)
        return dr_err_set(err, DR_EINVAL, "plan: no request or catalog");
    batch_set_t batches = {{0}, 0}; /* training: the batches the plan chooses from */
    res->kind = r->kind;
    int rc = check_common(r, err);
    if (rc)
        return rc;
    const dr_gpu_spec_t *types[DR_PLAN_MAX_TYPES];
    size_t nt;
    if ((rc = dr_plan_types_of(r, cat, types, &nt, err)))
        return rc;
    if (nt == 0)
        return dr_err_set(err, DR_EINVAL, "plan: the catalog has no GPU types");
    const dr_gpu_spec_t *exact = NULL;
    if (r->gpu[0] && !(exact = dr_plan_find_type(cat, r->gpu, err)))
        return DR_EINVAL;
    const dr_gpu_spec_t *ref = NULL;

    switch (r->kind) {
    case DR_PLAN_TRAIN:
        if ((rc = check_train(r, err)))
            return rc;
        res->arch = r->train.arch;
        if (r->train.global_batch <= 0)
            dr_plan_batch_candidates(r, res, &batches);
        break;
    case DR_PLAN_SERVE:
        if (!isfinite(r->rate_rps) || r->rate_rps <= 0)
            return dr_err_set(err, DR_EINVAL,
                              "rate: %g requests/s - give the load to sustain, e.g. --rate 10",
                              r->rate_rps);
        if (r->serve.arch.seq_len && r->serve.prompt_tokens > r->serve.arch.seq_len)
            return dr_err_set(err, DR_EINVAL,
                              "--prompt %.0f tokens: longer than %s's context of %u tokens",
                              r->serve.prompt_tokens, r->serve.arch.name, r->serve.arch.seq_len);
        if (r->serve.arch.seq_len &&
            r->serve.prompt_tokens + r->serve.output_tokens > r->serve.arch.seq_len)
            return dr_err_set(err, DR_EINVAL,
                              "--prompt %.0f + --output %.0f tokens: longer than %s's context of "
                              "%u tokens",
                              r->serve.prompt_tokens, r->serve.output_tokens, r->serve.arch.name,
                              r->serve.arch.seq_len);
        if (r->ttft_s < 0 || r->tpot_s < 0 || r->latency_s < 0)
            return dr_err_set(err, DR_EINVAL, "latency targets must be positive");
        if (!(r->serve.prompt_tokens >= 1) || !(r->serve.output_tokens >= 1))
            return dr_err_set(err, DR_EINVAL,
                              "request: prompt and output lengths must be at least 1 token");
        res->arch = r->serve.arch;
        if ((rc = serve_floor_error(r, types, nt, err)))
            return rc;
        break;
    case DR_PLAN_ARRAY:
        if (!isfinite(r->tasks) || r->tasks < 1 || r->tasks > 1e12)
            return dr_err_set(err, DR_EINVAL, "tasks: %g must be at least 1", r->tasks);
        if (!isfinite(r->task_gpu_s) || r->task_gpu_s <= 0)
            return dr_err_set(err, DR_EINVAL, "task time: %g GPU-seconds per task must be positive",
                              r->task_gpu_s);
        if (!r->ref_gpu[0])
            return dr_err_set(err, DR_EINVAL,
                              "--ref-gpu: name the GPU the task time was measured on");
        if (!(ref = dr_plan_find_type(cat, r->ref_gpu, err)))
            return DR_EINVAL;
        if (r->task_mem_gb < 0 || !isfinite(r->task_mem_gb))
            return dr_err_set(err, DR_EINVAL, "task memory must be >= 0");
        break;
    }

    size_t cap = nt + 1;
    res->opts = calloc(cap, sizeof *res->opts);
    if (!res->opts)
        return dr_err_set(err, DR_ENOMEM, "plan: out of memory");
    for (size_t i = 0; i <= nt; i++) {
        const dr_gpu_spec_t *g = i < nt ? types[i] : exact;
        bool is_exact = i == nt;
        if (!g)
            continue;
        /* the requested type is also planned freely, as an alternative */
        uint32_t fixed = is_exact ? r->gpus : (exact ? 0 : r->gpus);
        dr_plan_option_t *o = &res->opts[res->n];
        switch (r->kind) {
        case DR_PLAN_TRAIN: rc = dr_plan_train_type(r, &batches, g, fixed, o, err); break;
        case DR_PLAN_SERVE: rc = dr_plan_serve_type(r, g, fixed, o, err); break;
        case DR_PLAN_ARRAY: rc = dr_plan_array_type(r, g, ref, fixed, o); break;
        }
        if (rc) {
            dr_plan_result_free(res);
            return rc == DR_ENOMEM ? dr_err_set(err, rc, "plan: out of memory") : rc;
        }
        o->exact = is_exact;
        res->n++;
    }
    bool any_fit = false;
    for (size_t i = 0; i < res->n; i++) {
        any_fit |= res->opts[i].fits;
        res->any_meets |= res->opts[i].fits && res->opts[i].meets && !res->opts[i].exact;
    }
    if (!any_fit) {
        rc = no_fit_error(r, res, err);
        if (r->kind == DR_PLAN_ARRAY) {
            bool mem = r->task_mem_gb > 0;
            rc = mem ? dr_err_set(err, DR_EINVAL,
                                  "a task needs %.1f GB of GPU memory; no GPU type considered "
                                  "has that much (or a known rate to scale the task time)",
                                  r->task_mem_gb)
                     : dr_err_set(err, DR_EINVAL,
                                  "no GPU type considered has a known rate to scale the task "
                                  "time from %s",
                                  r->ref_gpu);
        }
        dr_plan_result_free(res);
        return rc;
    }
    if (r->kind == DR_PLAN_ARRAY && r->deadline_s > 0 && !res->any_meets) {
        double best = INFINITY;
        char bg[DR_GPU_NAME_MAX] = "";
        for (size_t i = 0; i < res->n; i++)
            if (res->opts[i].fits && res->opts[i].task_s < best) {
                best = res->opts[i].task_s;
                snprintf(bg, sizeof bg, "%s", res->opts[i].gpu);
            }
        if (best > r->deadline_s) {
            dr_plan_result_free(res);
            return dr_err_set(err, DR_EINVAL,
                              "deadline %.3g s is shorter than one task: a task takes at least "
                              "%.3g s even on %s, the fastest GPU considered (tasks are not "
                              "split across GPUs)",
                              r->deadline_s, best, bg);
        }
    }
    qsort(res->opts, res->n, sizeof *res->opts, rank_cmp);
    if (r->kind == DR_PLAN_TRAIN && r->deadline_s <= 0 && !r->max_gpus)
        knee_first(res);
    if (r->kind == DR_PLAN_TRAIN) {
        const dr_perfmodel_arch_t *a = &res->arch;
        uint32_t seq = r->train.seq_len ? r->train.seq_len : a->seq_len;
        /* a mixture of experts: the FLOPs follow the parameters a token passes */
        double n = dr_perfmodel_arch_active(a);
        res->train_flops = 6 * n * r->train.tokens;
        res->model_flops = (6 * n + 12.0 * a->layers * a->hidden * seq) * r->train.tokens;
    }
    dr_plan_explain(r, cat, res);
    return DR_OK;
}
