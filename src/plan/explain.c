/* explain.c - the planner's prose: the paragraph on the top choice
 * (training, serving, arrays), the range, the batch, failures and
 * checkpoints, FP8 and --offload alternatives (re-planned here), the stated
 * assumptions, the network in words, and the verdict line printed first.
 * Writes into the result's fixed buffers; prints nothing. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "drover/resilience.h"
#include "drover/time.h"
#include "plan/plan_priv.h"

void dr_plan_human_usd(double v, char *buf, size_t n)
{
    if (!isfinite(v))
        snprintf(buf, n, "unknown cost (no price in the catalog)");
    else if (v >= 1e6)
        snprintf(buf, n, "$%.2fM", v / 1e6);
    else if (v >= 1e4)
        snprintf(buf, n, "$%.0fk", v / 1e3);
    else
        snprintf(buf, n, "$%.2f", v);
}

static const char *netkind_prose(dr_perfmodel_netkind_t k)
{
    switch (k) {
    case DR_NET_IB: return "InfiniBand";
    case DR_NET_ROCE: return "RoCE";
    case DR_NET_ETH: return "Ethernet";
    case DR_NET_NKINDS: break;
    }
    return "?";
}

/* The network option o was planned on, after "network: " (g its type, NULL
 * if not in the catalog).  "the cluster's (4 x L40S-48GB per node, PCIe,
 * Ethernet 100 Gbit/s per GPU)". */
static void net_words(const dr_plan_req_t *r, const dr_gpu_spec_t *g, const dr_plan_option_t *o,
                      char *b, size_t cap)
{
    const dr_perfmodel_net_t *n = &o->net;
    const dr_plan_site_net_t *s = dr_plan_site_net(r, g);
    b[0] = '\0';
    bool sxm = g && g->link[0] && strncasecmp(g->link, "PCIe", 4) != 0; /* NVLink by design */
    char between[96];
    snprintf(between, sizeof between, "%s %.0f Gbit/s per GPU%s", netkind_prose(n->kind),
             n->inter_gbit, r->net_set ? " (given)" : "");
    char link[48]; /* a domain spanning several nodes (an NVL72 rack) named as such */
    if (n->intra_nvlink && n->node_gpus > o->node_gpus)
        snprintf(link, sizeof link, "NVLink domains of %u GPUs", n->node_gpus);
    else
        snprintf(link, sizeof link, "%s", n->intra_nvlink ? "NVLink" : "PCIe");
    switch (s ? s->from : DR_PLAN_NET_REFERENCE) {
    case DR_PLAN_NET_CLUSTER: {
        /* what the config leaves undeclared is the type's reference system's,
         * said as such */
        bool no_nvl = sxm && !s->nvlink_declared;
        bool no_links = !r->net_set && !s->links_declared;
        dr_plan_cat(b, cap, "the cluster's (%u x %s per node, %s, %s", o->node_gpus, o->gpu, link,
                    between);
        if (no_nvl || no_links)
            dr_plan_cat(b, cap, "; the config declares no %s%s%s: the type's reference system's",
                        no_nvl ? "NvlinkDomain=" : "", no_nvl && no_links ? " and no " : "",
                        no_links ? "switch LinkGbps=" : "");
        dr_plan_cat(b, cap, ")");
        break;
    }
    case DR_PLAN_NET_NODE_GPUS:
        dr_plan_cat(
            b, cap,
            "the cluster's %u x %s per node, with the type's reference system for the rest (%s, "
            "%s; the cluster does not report its links)",
            o->node_gpus, o->gpu, link, between);
        break;
    case DR_PLAN_NET_REFERENCE:
        if (r->net_set)
            dr_plan_cat(b, cap, "%s between %s's reference nodes of %u%s", between, o->gpu,
                        o->node_gpus, dr_plan_site_types(r) ? " (the cluster has none)" : "");
        else
            dr_plan_cat(b, cap, "%s's reference system (%u per node, %s, %s%s; --net)", o->gpu,
                        o->node_gpus, link, between,
                        dr_plan_site_types(r) ? "; the cluster has none" : "");
        break;
    }
}

static void explain_train(const dr_plan_req_t *r, dr_plan_result_t *res)
{
    char *x = res->explanation;
    size_t cap = sizeof res->explanation;
    const dr_perfmodel_arch_t *a = &res->arch;
    x[0] = '\0';
    if (dr_perfmodel_arch_moe(a))
        dr_plan_cat(
            x, cap,
            "Training %s (%.3g parameters, %.3g active: %u experts, %u per token%s) on %.3g "
            "tokens takes 6*N*D = %.2e FLOPs with N the active parameters.",
            a->name, a->params, dr_perfmodel_arch_active(a), a->experts, a->top_k,
            a->shared_experts ? " + shared" : "", r->train.tokens, res->train_flops);
    else
        dr_plan_cat(x, cap,
                    "Training %s (%.3g parameters) on %.3g tokens takes 6*N*D = %.2e FLOPs.",
                    a->name, a->params, r->train.tokens, res->train_flops);
    const dr_plan_option_t *top = NULL, *fastest = NULL;
    if (res->n && res->opts[0].exact && !res->opts[0].fits)
        dr_plan_cat(x, cap, " The requested %u x %s cannot run it: %s.", res->opts[0].gpus,
                    res->opts[0].gpu, res->opts[0].note);
    for (size_t i = 0; i < res->n; i++) {
        const dr_plan_option_t *o = &res->opts[i];
        if (!o->fits)
            continue;
        if (!top && (o->meets || !res->any_meets))
            top = o;
        if (!fastest || o->wall_s < fastest->wall_s)
            fastest = o;
    }
    if (!top) {
        dr_plan_cat(x, cap, " No GPU type can run it.");
        return;
    }
    const dr_perfmodel_train_est_t *e = &top->train;
    char w[32], c[48];
    dr_duration_format(top->wall_s, DR_DURATION_WORDS, w, sizeof w);
    dr_plan_human_usd(top->cost_usd, c, sizeof c);
    if (top->exact && !res->any_meets && r->deadline_s > 0)
        dr_plan_cat(x, cap, " The requested configuration misses the deadline.");
    char xp[96] = "";
    if (e->layout.cp > 1)
        snprintf(xp, sizeof xp, " x context parallel %u", e->layout.cp);
    if (e->layout.ep > 1)
        snprintf(xp + strlen(xp), sizeof xp - strlen(xp), " (experts spread over %u of them)",
                 e->layout.ep);
    dr_plan_cat(
        x, cap,
        " %s: %u x %s (%s, %u node%s), tensor parallel %u x pipeline %u x data parallel %u%s, "
        "ZeRO-%d, %s activation recomputation, micro-batch %u; %.1f of %.0f GB per GPU. It "
        "runs at about "
        "%.0f%% MFU (%.0f TFLOP/s per GPU in %s) and finishes in %s: %.3g GPU-hours, %s",
        top->exact        ? "Requested"
        : !res->any_meets ? "Fastest possible"
        : r->deadline_s <= 0 && !r->max_gpus
            ? "Recommended (the fastest option within 10% of the cheapest's cost)"
            : "Cheapest choice",
        top->gpus, top->gpu, dr_plan_verdict_name(top->verdict), top->nodes,
        top->nodes == 1 ? "" : "s", e->layout.tp, e->layout.pp, e->layout.dp, xp,
        e->layout.zero_stage,
        e->layout.recompute == DR_RECOMPUTE_NONE ? "no"
                                                 : dr_perfmodel_recompute_name(e->layout.recompute),
        e->layout.micro_batch, e->mem.total / 1073741824.0, e->mem.capacity / 1073741824.0,
        e->mfu * 100, e->achieved_tflops_per_gpu, dr_precision_name(e->precision), w,
        top->gpu_hours, c);
    if (isfinite(top->price_hr))
        dr_plan_cat(x, cap, " at $%.2f per GPU-hour", top->price_hr);
    if (isfinite(top->energy_kwh))
        dr_plan_cat(x, cap, ", %.3g MWh of GPU energy", top->energy_kwh / 1000);
    dr_plan_cat(x, cap, ".");
    double step_other = e->tp_comm_s + e->pp_comm_s + e->bubble_s + e->dp_comm_s + e->optim_s +
                        e->ep_comm_s + e->cp_comm_s;
    if (e->step_s > 0 && step_other / e->step_s > 0.05) {
        dr_plan_cat(x, cap,
                    " Of each %.2f s step, %.0f%% is communication, pipeline bubble and optimizer "
                    "(TP %.2f s, pipeline %.2f s, DP %.2f s",
                    e->step_s, step_other / e->step_s * 100, e->tp_comm_s,
                    e->bubble_s + e->pp_comm_s, e->dp_comm_s);
        if (e->ep_comm_s > 0)
            dr_plan_cat(x, cap, ", expert all-to-all %.2f s", e->ep_comm_s);
        if (e->cp_comm_s > 0)
            dr_plan_cat(x, cap, ", context ring %.2f s", e->cp_comm_s);
        dr_plan_cat(x, cap, ").");
    }
    if (top->gpus > 1 && !top->exact) {
        double state = 16 * a->params / 1073741824.0, one = NAN;
        for (size_t i = 0; i < top->ncurve; i++)
            if (top->curve[i].gpus == 1)
                one = top->curve[i].wall_s;
        if (state > e->mem.capacity / 1073741824.0) {
            dr_plan_cat(x, cap,
                        " It needs more than one GPU: mixed-precision Adam alone keeps %.0f GB of "
                        "model state (16 bytes per parameter).",
                        state);
        } else if (isfinite(one)) {
            char w1[32];
            dr_duration_format(one, DR_DURATION_WORDS, w1, sizeof w1);
            dr_plan_cat(x, cap, " One GPU would take %s.", w1);
        }
    }
    if (fastest && fastest != top && fastest->wall_s < top->wall_s * 0.9) {
        char fw[32], fc[48];
        dr_duration_format(fastest->wall_s, DR_DURATION_WORDS, fw, sizeof fw);
        dr_plan_human_usd(fastest->cost_usd, fc, sizeof fc);
        dr_plan_cat(x, cap, " The fastest option, %u x %s, takes %s for %s.", fastest->gpus,
                    fastest->gpu, fw, fc);
    }
}

/* Single GPU fits? Use it: when the top choice needs several GPUs only for
 * the optimizer state, say whether ZeRO-Offload would fit one of them (the
 * usual way a 7B model is fine-tuned on one 80 GB GPU). */
static void offload_hint(const dr_plan_req_t *r, const dr_catalog_t *cat, dr_plan_result_t *res)
{
    /* the GPUs the user asked for, when they cannot hold it; else one GPU
     * of the top choice's type when the plan needs several */
    const dr_plan_option_t *top = NULL, *asked = NULL;
    for (size_t i = 0; i < res->n; i++) {
        if (res->opts[i].exact && !res->opts[i].fits && strstr(res->opts[i].note, "GB per GPU"))
            asked = &res->opts[i];
        if (!top && res->opts[i].fits && (res->opts[i].meets || !res->any_meets))
            top = &res->opts[i];
    }
    if (r->train.cpu_offload)
        return;
    const char *type = NULL;
    uint32_t n = 1;
    if (asked) {
        type = asked->gpu;
        n = asked->gpus ? asked->gpus : 1;
    } else if (top && top->gpus > 1 && !r->gpus) {
        type = top->gpu;
    } else {
        return;
    }
    const dr_gpu_spec_t *g = dr_catalog_find(cat, type);
    if (!g)
        return;
    dr_perfmodel_net_t net;
    dr_plan_net_for(r, g, &net);
    dr_perfmodel_train_t job = r->train;
    job.cpu_offload = true;
    if (top && job.global_batch <= 0)
        job.global_batch = top->train.global_batch; /* the batch the plan chose */
    dr_perfmodel_train_est_t e;
    dr_err_t err;
    if (dr_perfmodel_train_best(&job, g, n, &net, &e, &err) != 0 || !e.fits)
        return;
    span_t sp;
    dr_plan_temper(r, g, &e, &sp, dr_plan_typical_run(r)); /* a run of the table's kind */
    uint32_t node =
        dr_plan_node_size(r, g, net.node_gpus ? net.node_gpus : 1); /* the site's, if any */
    double wall = e.wall_s + dr_plan_startup_s(r->train.arch.params, n, (n + node - 1) / node);
    if (r->deadline_s > 0 && wall > r->deadline_s)
        return;
    res->offload_gpus = n;
    snprintf(res->offload_gpu, sizeof res->offload_gpu, "%s", g->name);
    res->offload_wall_s = wall;
    char w[32];
    dr_duration_format(wall, DR_DURATION_WORDS, w, sizeof w);
    dr_plan_cat(res->explanation, sizeof res->explanation,
                " With --offload (optimizer states in host memory, ZeRO-Offload) it fits %s%u x %s "
                "and takes %s.",
                asked ? "the requested " : "", n, g->name, w);
    /* and the fewest GPUs of the requested type that hold it as it is */
    if (asked)
        for (size_t i = 0; i < res->n; i++) {
            const dr_plan_option_t *o = &res->opts[i];
            if (o->exact || !o->fits || strcmp(o->gpu, asked->gpu) != 0)
                continue;
            const dr_plan_point_t *best = NULL;
            for (size_t k = 0; k < o->ncurve; k++)
                if (isfinite(o->curve[k].wall_s) && (!best || o->curve[k].gpus < best->gpus))
                    best = &o->curve[k];
            if (best) {
                dr_duration_format(best->wall_s, DR_DURATION_WORDS, w, sizeof w);
                dr_plan_cat(res->explanation, sizeof res->explanation,
                            " Without it, the fewest %s that run it are %u: %s.", asked->gpu,
                            best->gpus, w);
            }
            break;
        }
}

/* The decision framework, applied to the top choice and printed before the
 * table: "Single GPU fits? Use it. Fits one node? Maybe. Needs more than one
 * node? Cluster." */
static void verdict_text(dr_plan_result_t *res)
{
    const dr_plan_option_t *top = NULL;
    for (size_t i = 0; i < res->n && !top; i++)
        if (res->opts[i].fits && (res->opts[i].meets || !res->any_meets))
            top = &res->opts[i];
    char *x = res->verdict_text;
    size_t cap = sizeof res->verdict_text;
    x[0] = '\0';
    if (!top) {
        dr_plan_cat(x, cap, "Verdict: nothing considered can run it.");
        return;
    }
    char w[32] = "";
    if (isfinite(top->wall_s))
        dr_duration_format(top->wall_s, DR_DURATION_WORDS, w, sizeof w);
    switch (top->verdict) {
    case DR_VERDICT_SINGLE_GPU:
        dr_plan_cat(x, cap, "Verdict: ONE GPU - a single GPU fits, use it (1 x %s", top->gpu);
        break;
    case DR_VERDICT_SINGLE_NODE:
        dr_plan_cat(x, cap, "Verdict: ONE NODE - fits one node, maybe no cluster needed (%u x %s",
                    top->gpus, top->gpu);
        break;
    default:
        dr_plan_cat(x, cap, "Verdict: CLUSTER - needs more than one node (%u x %s in %u nodes",
                    top->gpus, top->gpu, top->nodes);
        break;
    }
    dr_plan_cat(x, cap, "%s%s).", w[0] ? ", " : "", w);
    if (top->gpus > 1 && res->offload_gpus == 1) {
        char ow[32];
        dr_duration_format(res->offload_wall_s, DR_DURATION_WORDS, ow, sizeof ow);
        dr_plan_cat(x, cap, " One GPU can do it with --offload (1 x %s, %s).", res->offload_gpu,
                    ow);
    }
    dr_plan_cat(x, cap,
                " Rule: single GPU fits? Use it. Fits one node? Maybe. Needs more than one "
                "node? Cluster.");
}

static void explain_serve(const dr_plan_req_t *r, dr_plan_result_t *res)
{
    char *x = res->explanation;
    size_t cap = sizeof res->explanation;
    x[0] = '\0';
    dr_plan_cat(x, cap, "Serving %s at %.3g requests/s (%.0f prompt + %.0f output tokens each).",
                res->arch.name, r->rate_rps, r->serve.prompt_tokens, r->serve.output_tokens);
    const dr_plan_option_t *top = NULL;
    for (size_t i = 0; i < res->n && !top; i++)
        if (res->opts[i].fits)
            top = &res->opts[i];
    if (!top) {
        dr_plan_cat(x, cap, " No GPU type can serve it.");
        return;
    }
    const dr_perfmodel_serve_est_t *e = &top->serve;
    char c[48];
    dr_plan_human_usd(top->cost_usd_hr, c, sizeof c);
    dr_plan_cat(
        x, cap,
        " %s: %u replica%s of %u x %s (%u GPUs, %s), each at %u requests in flight sustaining "
        "%.3g requests/s (%.0f output tokens/s), time to first token %.3g s, %.3g s per output "
        "token, %.3g s per request; %s per hour",
        top->exact ? "Requested" : "Cheapest choice", top->replicas, top->replicas == 1 ? "" : "s",
        e->tp, top->gpu, top->gpus, dr_plan_verdict_name(top->verdict), e->concurrency,
        e->requests_per_s, e->tokens_per_s, e->ttft_s, e->tpot_s, e->latency_s, c);
    if (isfinite(top->cost_usd_hr) && e->tokens_per_s > 0)
        dr_plan_cat(x, cap, " ($%.3g per million output tokens at full load)",
                    top->cost_usd_hr / (top->replicas * e->tokens_per_s * 3600) * 1e6);
    dr_plan_cat(
        x, cap,
        ". Physical floors on this GPU: one prompt's forward pass takes %.3g s and one decode "
        "step %.3g s.",
        e->ttft_floor_s, e->tpot_floor_s);
}

static void explain_array(const dr_plan_req_t *r, dr_plan_result_t *res)
{
    char *x = res->explanation;
    size_t cap = sizeof res->explanation;
    x[0] = '\0';
    dr_plan_cat(x, cap, "%.0f tasks of %.3g GPU-seconds each on %s (%s-bound).", r->tasks,
                r->task_gpu_s, r->ref_gpu, r->memory_bound ? "memory" : "compute");
    const dr_plan_option_t *top = NULL;
    for (size_t i = 0; i < res->n && !top; i++)
        if (res->opts[i].fits)
            top = &res->opts[i];
    if (!top) {
        dr_plan_cat(x, cap, " No GPU type can run the tasks.");
        return;
    }
    char w[32], c[48], t[32];
    dr_duration_format(top->wall_s, DR_DURATION_WORDS, w, sizeof w);
    dr_duration_format(top->task_s, DR_DURATION_WORDS, t, sizeof t);
    dr_plan_human_usd(top->cost_usd, c, sizeof c);
    dr_plan_cat(x, cap,
                " %s: %u x %s (%s): %s per task, %u wave%s, done in %s; %.3g GPU-hours rented, %s.",
                top->exact ? "Requested" : (top->meets ? "Cheapest choice" : "Fastest possible"),
                top->gpus, top->gpu, dr_plan_verdict_name(top->verdict), t, top->waves,
                top->waves == 1 ? "" : "s", w, top->gpu_hours, c);
}

static const dr_plan_option_t *top_of(const dr_plan_result_t *res)
{
    for (size_t i = 0; i < res->n; i++)
        if (res->opts[i].fits && (res->opts[i].meets || !res->any_meets))
            return &res->opts[i];
    return NULL;
}

/* The top choice re-planned on its own GPU type and count with one thing
 * changed (the batch or the precision): its wall time, NAN if it does not
 * fit. */
static double replan_wall(const dr_plan_req_t *r, const dr_catalog_t *cat,
                          const dr_plan_option_t *top, double batch, dr_precision_t prec)
{
    const dr_gpu_spec_t *g = dr_catalog_find(cat, top->gpu);
    if (!g)
        return NAN;
    dr_plan_req_t q = *r;
    q.train.global_batch = batch;
    q.train.precision = prec;
    dr_perfmodel_net_t net;
    dr_plan_net_for(r, g, &net);
    dr_perfmodel_train_est_t e;
    dr_err_t err;
    if (dr_perfmodel_train_best(&q.train, g, top->gpus, &net, &e, &err) != 0 || !e.fits)
        return NAN;
    span_t sp;
    dr_plan_temper(&q, g, &e, &sp, dr_plan_typical_run(r)); /* the discount stays as for the top */
    return e.wall_s + top->startup_s;
}

static void explain_run(const dr_plan_req_t *r, const dr_catalog_t *cat, dr_plan_result_t *res)
{
    const dr_plan_option_t *top = top_of(res);
    char *x = res->explanation;
    size_t cap = sizeof res->explanation;
    res->alt_wall_s = NAN;
    if (!top)
        return;
    const dr_perfmodel_train_est_t *e = &top->train;
    char a[32], b[32], w[32];
    /* the range */
    if (top->wall_fast_s > 0 && top->wall_slow_s > 0) {
        dr_duration_format(top->wall_fast_s, DR_DURATION_WORDS, a, sizeof a);
        dr_duration_format(top->wall_slow_s, DR_DURATION_WORDS, b, sizeof b);
        if (top->range_empirical)
            dr_plan_cat(x, cap,
                        " Range: %s to %s - 80%% of %d published runs planned from their size, "
                        "tokens, GPU type and count took %.2f to %.2f times the plan's estimate, "
                        "which is what such runs typically achieve, at most the best MFU published "
                        "for this GPU generation at %u node%s (%.0f%%)",
                        a, b, PLAN_RANGE_RUNS, PLAN_RANGE_FAST, PLAN_RANGE_SLOW, top->nodes,
                        top->nodes == 1 ? "" : "s", top->mfu_ceiling * 100);
        else
            dr_plan_cat(x, cap,
                        " Range: %s to %s - the fast end at the model's figure for this layout, at "
                        "most the best MFU published for this GPU generation at %u node%s (%.0f%%)",
                        a, b, top->nodes, top->nodes == 1 ? "" : "s", top->mfu_ceiling * 100);
        if (top->capped)
            dr_plan_cat(x, cap, ", which caps what the layout search rated higher");
        dr_plan_cat(x, cap, ".");
    }
    /* the batch */
    if (r->train.global_batch <= 0 && res->default_batch > 0) {
        double seq = r->train.seq_len ? r->train.seq_len : res->arch.seq_len;
        double bt = e->global_batch * seq;
        dr_plan_cat(
            x, cap,
            " Batch: %.0f sequences (%.3g%s tokens) per step, chosen between the model's "
            "default of %.0f (%s) and DeepSeek LLM's loss-optimal B_opt(C) = %.0f for %.2e FLOPs",
            e->global_batch, bt >= 1e6 ? bt / 1e6 : bt / 1e3, bt >= 1e6 ? "M" : "k",
            res->default_batch,
            res->arch.batch_tokens > 0 ? "its published batch" : "the GPT-3 paper's rule",
            res->opt_batch, res->train_flops);
        if (res->planned_batch > 0)
            dr_plan_cat(x, cap, ", at most %.0f so that the run takes %d steps", res->planned_batch,
                        DR_PLAN_MIN_STEPS);
        /* what the smaller end would cost, when the plan chose more */
        double lo = fmin(res->default_batch, res->opt_batch);
        if (res->planned_batch > 0)
            lo = fmin(lo, res->planned_batch);
        if (lo < e->global_batch * 0.95) {
            res->alt_wall_s = replan_wall(r, cat, top, lo, r->train.precision);
            if (isfinite(res->alt_wall_s)) {
                dr_duration_format(res->alt_wall_s, DR_DURATION_WORDS, a, sizeof a);
                dr_plan_cat(x, cap, "; pinned at %.0f (--batch %.0f) it would take %s (%+.0f%%)",
                            lo, lo, a, (res->alt_wall_s / top->wall_s - 1) * 100);
            }
        }
        dr_plan_cat(x, cap, ".");
    }
    /* failures and checkpoints */
    const dr_res_t *q = &e->res;
    if (q->job_mtbf_s > 0 && isfinite(q->interval_s)) {
        char every[32], ck[32];
        dr_duration_format(q->job_mtbf_s, DR_DURATION_WORDS, a, sizeof a);
        dr_duration_format(q->interval_s, DR_DURATION_WORDS, ck, sizeof ck);
        double min = ceil(q->interval_s / 60);
        if (min < 120)
            snprintf(every, sizeof every, "%.0fm", min);
        else
            snprintf(every, sizeof every, "%.0fh", ceil(q->interval_s / 3600));
        dr_plan_cat(
            x, cap,
            " Failures and checkpoints: one interruption every %s is expected on %u GPUs (Llama "
            "3: one per %.0f GPU-hours); a checkpoint is %.3g GB (14 bytes per parameter), "
            "written in %.3g s at %.0f GB/s; ",
            a, top->gpus, r->train.gpu_mtbf_h > 0 ? r->train.gpu_mtbf_h : DR_RES_GPU_MTBF_H,
            q->ckpt_bytes / 1e9, q->write_s, q->storage_gbs);
        if (q->interval_s < top->wall_s)
            dr_plan_cat(x, cap, "the Young-Daly interval is %s: submit with --checkpoint-every %s.",
                        ck, every);
        else
            dr_plan_cat(
                x, cap,
                "the Young-Daly interval (%s) is longer than the run: no checkpoint during it "
                "pays for itself.",
                ck);
        dr_plan_cat(x, cap,
                    " Effective training time %.1f%% (writing checkpoints %.1f%%, restarts and "
                    "recomputed work %.1f%%), already in the wall time.",
                    q->effective * 100, q->ckpt_frac / (1 + q->ckpt_frac + q->fail_frac) * 100,
                    q->fail_frac / (1 + q->ckpt_frac + q->fail_frac) * 100);
    }
    /* FP8 */
    const dr_gpu_spec_t *g = dr_catalog_find(cat, top->gpu);
    dr_precision_t used;
    if (g && e->precision == DR_PREC_BF16 &&
        isfinite(dr_perfmodel_peak_tflops(g, DR_PREC_FP8, &used)) && used == DR_PREC_FP8) {
        double w8 = replan_wall(r, cat, top,
                                r->train.global_batch > 0 ? r->train.global_batch : e->global_batch,
                                DR_PREC_FP8);
        if (isfinite(w8)) {
            dr_duration_format(w8, DR_DURATION_WORDS, w, sizeof w);
            dr_plan_cat(
                x, cap,
                " In FP8 (--precision fp8; DeepSeek-V3 trained in FP8 on 2,048 H800s, Llama 3 "
                "405B stayed in BF16 at 16K GPUs) it would take %s (%+.0f%%).",
                w, (w8 / top->wall_s - 1) * 100);
        }
    }
}

/* The planner's default choices, stated in every training plan. */
static void assumptions(const dr_plan_req_t *r, const dr_catalog_t *cat, dr_plan_result_t *res)
{
    const dr_plan_option_t *top = top_of(res);
    char *x = res->assumptions;
    size_t cap = sizeof res->assumptions;
    x[0] = '\0';
    const dr_perfmodel_train_t *t = &r->train;
    dr_plan_cat(x, cap, "Assumed:");
    if (t->global_batch > 0)
        dr_plan_cat(x, cap, " batch %.0f sequences (given);", t->global_batch);
    else if (top)
        dr_plan_cat(x, cap, " batch %.0f sequences (the planner's choice, --batch to pin);",
                    top->train.global_batch);
    dr_plan_cat(x, cap, " precision %s%s;",
                dr_precision_name(t->precision == DR_PREC_UNSET ? DR_PREC_BF16 : t->precision),
                t->precision == DR_PREC_BF16 || t->precision == DR_PREC_UNSET
                    ? " (default, --precision)"
                    : " (given)");
    dr_plan_cat(x, cap,
                " layout%s searched (TP x PP x DP, ZeRO stage, recomputation, micro-batch%s);",
                t->tp || t->pp || t->micro_batch ? " partly" : "",
                t->tp || t->pp || t->micro_batch ? ": the rest as given"
                                                 : "; --tp --pp --zero --recompute");
    if (r->stack_record)
        dr_plan_cat(x, cap,
                    " a record-class stack (given: the model's figure, at most the best "
                    "published MFU);");
    else if (dr_plan_planner_chose(t))
        dr_plan_cat(
            x, cap,
            " a typical stack (%.2f of the best the model allows; --stack record for a tuned "
            "one);",
            PLAN_TYPICAL);
    else
        dr_plan_cat(x, cap,
                    " the model's figure for the pinned layout, at most the best published MFU;");
    dr_plan_cat(x, cap, " %s, %s;", t->flash_attention ? "FlashAttention" : "explicit attention",
                t->tp_overlap ? "TP overlapped with GEMMs (Megatron-Core/TransformerEngine)"
                              : "TP not overlapped");
    size_t nsite = dr_plan_site_types(r);
    if (top && nsite) { /* the cluster's nodes: say which network the top choice was planned on */
        char w[400];
        net_words(r, dr_catalog_find(cat, top->gpu), top, w, sizeof w);
        dr_plan_cat(x, cap, " network: %s%s;", w,
                    nsite > 1 ? "; each type on its own nodes (\"network\" in --json)" : "");
    } else if (r->net_set) {
        dr_plan_cat(x, cap, " network %s %.0f Gbit/s per GPU (given);",
                    dr_perfmodel_netkind_name(r->net_kind), r->net_gbit);
    } else {
        dr_plan_cat(x, cap, " network: each GPU type's reference system (--net);");
    }
    if (t->storage_gbs > 0)
        dr_plan_cat(x, cap, " checkpoint storage %.0f GB/s (given);", t->storage_gbs);
    else
        dr_plan_cat(x, cap,
                    " checkpoint storage %.0f GB/s per node up to %.0f GB/s (--storage-gbs);",
                    DR_RES_NODE_GBS, DR_RES_MAX_GBS);
    dr_plan_cat(x, cap, " one interruption per %.0f GPU-hours (%s).",
                t->gpu_mtbf_h > 0 ? t->gpu_mtbf_h : DR_RES_GPU_MTBF_H,
                t->gpu_mtbf_h > 0 ? "given" : "Llama 3; --gpu-mtbf");
}

void dr_plan_explain(const dr_plan_req_t *r, const dr_catalog_t *cat, dr_plan_result_t *res)
{
    if (r->kind == DR_PLAN_TRAIN) {
        explain_train(r, res);
        if (res->planned_batch > 0)
            dr_plan_cat(
                res->explanation, sizeof res->explanation,
                " A run this short is planned with a global batch of %.0f sequences so that it "
                "takes at least %d optimizer steps (--batch to pin it).",
                res->planned_batch, DR_PLAN_MIN_STEPS);
        explain_run(r, cat, res);
        offload_hint(r, cat, res);
        assumptions(r, cat, res);
        if (res->n && res->opts[0].fits && isfinite(res->opts[0].startup_s))
            dr_plan_cat(res->explanation, sizeof res->explanation,
                        " Wall times include %.0f s of start-up and per-job overhead (process "
                        "start, loading and saving the weights, distributed initialisation).",
                        res->opts[0].startup_s);
    } else if (r->kind == DR_PLAN_SERVE) {
        explain_serve(r, res);
        const dr_plan_option_t *t = NULL; /* the option explain_serve describes */
        for (size_t i = 0; i < res->n && !t; i++)
            if (res->opts[i].fits)
                t = &res->opts[i];
        if (t && dr_plan_site_types(r)) { /* the replica's TP stays within the cluster's nodes */
            char w[400];
            net_words(r, dr_catalog_find(cat, t->gpu), t, w, sizeof w);
            dr_plan_cat(res->explanation, sizeof res->explanation, " Network: %s.", w);
        }
    } else {
        explain_array(r, res);
    }
    verdict_text(res);
}
