/* plan.c - `drover plan train|serve|array`: parse the options into a
 * dr_plan_req_t, run the planner (src/plan/) and print its answer as a
 * table, JSON (--json) and/or an SVG chart (--plot).  Thin on purpose: every
 * number and every explanation comes from libdrover. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "drover/plan.h"
#include "drover/time.h"

static void plan_usage(FILE *f)
{
    fprintf(
        f, "usage: drover plan train --model NAME|SPEC | --params N  --tokens N  [options]\n"
           "       drover plan serve --model NAME|SPEC --rate RPS --prompt N --output N "
           "[options]\n"
           "       drover plan array --tasks N --task-time DUR --ref-gpu TYPE [options]\n"
           "\n"
           "model (train, serve):\n"
           "  --model NAME|SPEC   a preset (--list-models) or key=value shape, e.g.\n"
           "                      llama-3-70b, llama-2-7b,seq=8192, layers=80,hidden=8192,...\n"
           "  --params N          parameter count alone (7B, 70e9); the shape follows GPT-3\n"
           "  --active-params N   with --params: a mixture of experts with N parameters per\n"
           "                      token (37B of 671B); or --model ...,active=N,experts=E,top_k=K\n"
           "  --precision P       bf16 (default), fp8, fp16, fp32\n"
           "train:\n"
           "  --tokens N          training tokens (300B, 2T)\n"
           "  --flops N           or the compute budget instead (1e23): tokens = N / (6 x params)\n"
           "  --seq N             sequence length (default: the model's)\n"
           "  --batch N           global batch in sequences (default: published or GPT-3 rule)\n"
           "  --batch-tokens N    global batch in tokens\n"
           "  --zero S            ZeRO stage 0-3 (default: the cheapest that fits)\n"
           "  --offload           optimizer states in host memory (ZeRO-Offload)\n"
           "  --recompute R       none, selective, full, auto (default)\n"
           "  --no-flash          explicit attention (no FlashAttention)\n"
           "  --tp N --pp N --micro-batch N   pin parts of the layout\n"
           "  --stack typical|record  what the estimate is for: a typical run (default) or a\n"
           "                      record-class stack (MLPerf, NeMo recipes): no typical discount\n"
           "  --cp N              context parallelism: GPUs one sequence is split over\n"
           "                      (default: the search's, for sequences of 8K tokens or more)\n"
           "  --storage-gbs N     checkpoint write bandwidth, all nodes together (default 2 per\n"
           "                      node up to 2000)\n"
           "  --gpu-mtbf H        GPU-hours between interruptions (default 50700, Llama 3)\n"
           "serve:\n"
           "  --rate RPS          requests per second to sustain (required)\n"
           "  --prompt N --output N   tokens per request (default 1024 / 256)\n"
           "  --ttft DUR --tpot DUR --latency DUR   latency targets (200ms, 1.5s)\n"
           "  --kv-precision P    KV cache precision (default fp8 with fp8 weights, else bf16)\n"
           "  --max-batch N       engine cap on requests in flight (default 2048)\n"
           "array:\n"
           "  --tasks N --task-time DUR --ref-gpu TYPE   N tasks of DUR GPU time on TYPE\n"
           "  --task-mem GB       GPU memory per task\n"
           "  --bound compute|memory   how task time scales across GPU types (default compute)\n"
           "all:\n"
           "  --deadline DUR      finish within (36h, 30d, 4w, 18mo); ranks by cost among those\n"
           "                      that meet it\n"
           "  --max-gpus N        GPU budget\n"
           "  --gpu TYPE [--gpus N]  evaluate this configuration first\n"
           "  --types A,B,...     GPU types to consider (default: the whole catalog)\n"
           "  --neocloud          use the neocloud price column instead of on-demand\n"
           "  --power-price USD   electricity price per kWh (adds a power cost)\n"
           "  --pue F             facility overhead on GPU energy (default 1.0 = GPUs only)\n"
           "  --net KIND:GBIT     inter-node network per GPU: ib:400, roce:200, eth:100\n"
           "                      (default: each GPU's reference system, or the cluster's)\n"
           "  --catalog FILE      GPU catalog CSV (default: built in)\n"
           "  --cluster FILE      only the GPU types of this cluster config (drover's or a\n"
           "                      slurm.conf), each at most as many GPUs as it has, on its\n"
           "                      nodes (GPUs per node, NVLink or PCIe, switch links)\n"
           "  --controller        the same from the live controller's up nodes (GPUs per\n"
           "                      node; links: the reference system's) ($DROVER_SERVER),\n"
           "                      and when the top choice would start there\n"
           "  --json              print JSON (schema in docs/cli.md)\n"
           "  --plot FILE.svg     write cost vs time per GPU type\n"
           "  --all               show every option (default: the best 8 and the requested one)\n"
           "  --list-models       list model presets\n");
}

static int parse_prec(const char *s, dr_precision_t *out)
{
    if (dr_precision_parse(s, out) != 0 || *out == DR_PREC_UNSET)
        return cli_usage_error("--precision: '%s' (bf16, fp8, fp16, fp32)", s);
    return 0;
}

static int parse_count_opt(const char *opt, const char *s, double *out)
{
    if (dr_plan_parse_count(s, out) != 0)
        return cli_usage_error("%s: '%s' is not a number (7B, 300e9, 2T)", opt, s);
    return 0;
}

static int parse_u32_opt(const char *opt, const char *s, uint32_t *out)
{
    double d;
    if (dr_plan_parse_count(s, &d) != 0 || d != floor(d) || d > 4294967295.0)
        return cli_usage_error("%s: '%s' is not a whole number", opt, s);
    *out = (uint32_t)d;
    return 0;
}

static int parse_dur_opt(const char *opt, const char *s, double *out)
{
    dr_time_t t;
    dr_err_t err;
    if (dr_duration_parse_err(s, &t, &err) != 0)
        return cli_usage_error("%s: '%s' is not a duration (200ms, 90s, 36h, 30d, 4w, 18mo): %s",
                               opt, s, err.msg);
    *out = dr_time_to_s(t);
    return 0;
}

static void list_models(void)
{
    size_t n;
    const dr_plan_preset_t *p = dr_plan_presets(&n);
    printf("%-18s %8s %6s %6s %5s %4s %7s %7s  %s\n", "preset", "params", "layers", "hidden",
           "heads", "kv", "ffn", "vocab", "source");
    for (size_t i = 0; i < n; i++)
        printf("%-18s %7.3gB %6u %6u %5u %4u %7u %7u  %s\n", p[i].name, p[i].arch.params / 1e9,
               p[i].arch.layers, p[i].arch.hidden, p[i].arch.heads, p[i].arch.kv_heads,
               p[i].arch.ffn, p[i].arch.vocab, p[i].source);
}

static void fmt_num(double v, char *b, size_t n)
{
    if (!isfinite(v))
        snprintf(b, n, "-");
    else if (v >= 1e9)
        snprintf(b, n, "%.2fG", v / 1e9);
    else if (v >= 1e6)
        snprintf(b, n, "%.2fM", v / 1e6);
    else if (v >= 1e4)
        snprintf(b, n, "%.1fk", v / 1e3);
    else
        snprintf(b, n, "%.3g", v);
}

static void fmt_usd(double v, char *b, size_t n)
{
    if (!isfinite(v)) {
        snprintf(b, n, "?");
        return;
    }
    char t[32];
    fmt_num(v, t, sizeof t);
    snprintf(b, n, "$%s", t);
}

/* Print a paragraph wrapped at 100 columns. */
static void print_wrapped(const char *s)
{
    size_t col = 0;
    while (*s) {
        const char *sp = strchr(s, ' ');
        size_t w = sp ? (size_t)(sp - s) : strlen(s);
        if (col && col + 1 + w > 100) {
            putchar('\n');
            col = 0;
        } else if (col) {
            putchar(' ');
            col++;
        }
        fwrite(s, 1, w, stdout);
        col += w;
        s += w;
        while (*s == ' ')
            s++;
    }
    putchar('\n');
}

static bool shown(const dr_plan_result_t *res, size_t i, bool all)
{
    return all || i < 8 || res->opts[i].exact;
}

static void print_train(const dr_plan_result_t *res, bool all)
{
    const dr_perfmodel_arch_t *a = &res->arch;
    printf("model: %s, %.3g %s parameters (%u layers, hidden %u, %u heads, %u KV heads", a->name,
           a->params / (a->params >= 1e12 ? 1e12 : 1e9), a->params >= 1e12 ? "T" : "B", a->layers,
           a->hidden, a->heads, a->kv_heads);
    if (dr_perfmodel_arch_moe(a))
        printf("; mixture of experts: %.3g B active, %u experts of width %u, %u per token%s",
               dr_perfmodel_arch_active(a) / 1e9, a->experts, a->expert_ffn, a->top_k,
               a->shared_experts ? " + shared" : "");
    printf("); 6*N*D = %.3g FLOPs\n\n", res->train_flops);
    printf("%-3s %-18s %7s %6s %-19s %-20s %7s %5s %9s %9s %9s %9s  %s\n", "#", "GPU", "GPUs",
           "nodes", "verdict", "layout (tp.pp.dp z r)", "mem GB", "MFU", "wall", "GPU-h", "cost",
           "MWh", "note");
    for (size_t i = 0; i < res->n; i++) {
        if (!shown(res, i, all))
            continue;
        const dr_plan_option_t *o = &res->opts[i];
        const dr_perfmodel_train_est_t *e = &o->train;
        char lay[40], wall[16], gh[16], cost[40], mwh[16], mem[16], mfu[8];
        char xp[24] = "";
        if (e->layout.cp > 1)
            snprintf(xp, sizeof xp, " c%u", e->layout.cp);
        if (e->layout.ep > 1)
            snprintf(xp + strlen(xp), sizeof xp - strlen(xp), " e%u", e->layout.ep);
        snprintf(lay, sizeof lay, "%u.%u.%u%s z%d %s", e->layout.tp, e->layout.pp, e->layout.dp, xp,
                 e->layout.zero_stage, dr_perfmodel_recompute_name(e->layout.recompute));
        dr_duration_format(o->fits ? o->wall_s : NAN, DR_DURATION_SHORT, wall, sizeof wall);
        fmt_num(o->fits ? o->gpu_hours : NAN, gh, sizeof gh);
        fmt_usd(o->fits ? o->cost_usd : NAN, cost, sizeof cost);
        fmt_num(o->fits ? o->energy_kwh / 1000 : NAN, mwh, sizeof mwh);
        snprintf(mem, sizeof mem, "%.1f", e->mem.total / 1073741824.0);
        snprintf(mfu, sizeof mfu, o->fits ? "%.0f%%" : "-", e->mfu * 100);
        printf("%-3s %-18.18s %7u %6u %-19s %-20s %7s %5s %9s %9s %9s %9s  %s%s\n",
               o->exact ? "*" : "", o->gpu, o->gpus, o->nodes, dr_plan_verdict_name(o->verdict),
               o->fits ? lay : "-", e->mem.total > 0 ? mem : "-", mfu, wall, gh, cost, mwh,
               o->fits && !o->meets ? "MISSES DEADLINE " : "", o->note);
    }
}

static void print_serve(const dr_plan_result_t *res, bool all)
{
    if (dr_perfmodel_arch_moe(&res->arch))
        printf("model: %s, %.3g B parameters (mixture of experts: %.3g B active, %u experts, %u "
               "per token)\n\n",
               res->arch.name, res->arch.params / 1e9, dr_perfmodel_arch_active(&res->arch) / 1e9,
               res->arch.experts, res->arch.top_k);
    else
        printf("model: %s, %.3g B parameters\n\n", res->arch.name, res->arch.params / 1e9);
    printf("%-3s %-18s %5s %8s %4s %-19s %6s %9s %9s %9s %9s %9s %9s  %s\n", "#", "GPU", "GPUs",
           "replicas", "tp", "verdict", "conc", "req/s/rep", "tok/s/rep", "TTFT", "TPOT", "$/hour",
           "$/Mtok", "note");
    for (size_t i = 0; i < res->n; i++) {
        if (!shown(res, i, all))
            continue;
        const dr_plan_option_t *o = &res->opts[i];
        const dr_perfmodel_serve_est_t *e = &o->serve;
        char rps[16], tps[16], ttft[16], tpot[16], ch[40], cm[40];
        fmt_num(o->fits ? e->requests_per_s : NAN, rps, sizeof rps);
        fmt_num(o->fits ? e->tokens_per_s : NAN, tps, sizeof tps);
        dr_duration_format(o->fits ? e->ttft_s : NAN, DR_DURATION_SHORT, ttft, sizeof ttft);
        dr_duration_format(o->fits ? e->tpot_s : NAN, DR_DURATION_SHORT, tpot, sizeof tpot);
        fmt_usd(o->fits ? o->cost_usd_hr : NAN, ch, sizeof ch);
        double mt = o->fits && e->tokens_per_s > 0
                        ? o->cost_usd_hr / (o->replicas * e->tokens_per_s * 3600) * 1e6
                        : NAN;
        fmt_usd(mt, cm, sizeof cm);
        printf("%-3s %-18.18s %5u %8u %4u %-19s %6u %9s %9s %9s %9s %9s %9s  %s%s\n",
               o->exact ? "*" : "", o->gpu, o->gpus, o->replicas, e->tp,
               dr_plan_verdict_name(o->verdict), e->concurrency, rps, tps, ttft, tpot, ch, cm,
               o->fits && !o->meets ? "BELOW RATE " : "", o->note);
    }
}

static void print_array(const dr_plan_result_t *res, bool all)
{
    printf("%-3s %-18s %7s %6s %-19s %9s %6s %9s %9s %9s %9s  %s\n", "#", "GPU", "GPUs", "nodes",
           "verdict", "task", "waves", "wall", "GPU-h", "cost", "MWh", "note");
    for (size_t i = 0; i < res->n; i++) {
        if (!shown(res, i, all))
            continue;
        const dr_plan_option_t *o = &res->opts[i];
        char task[16], wall[16], gh[16], cost[40], mwh[16];
        dr_duration_format(o->fits ? o->task_s : NAN, DR_DURATION_SHORT, task, sizeof task);
        dr_duration_format(o->fits ? o->wall_s : NAN, DR_DURATION_SHORT, wall, sizeof wall);
        fmt_num(o->fits ? o->gpu_hours : NAN, gh, sizeof gh);
        fmt_usd(o->fits ? o->cost_usd : NAN, cost, sizeof cost);
        fmt_num(o->fits ? o->energy_kwh / 1000 : NAN, mwh, sizeof mwh);
        printf("%-3s %-18.18s %7u %6u %-19s %9s %6u %9s %9s %9s %9s  %s%s\n", o->exact ? "*" : "",
               o->gpu, o->gpus, o->nodes, dr_plan_verdict_name(o->verdict), task, o->waves, wall,
               gh, cost, mwh, o->fits && !o->meets ? "MISSES DEADLINE " : "", o->note);
    }
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "drover: %s: cannot write\n", path);
        return 1;
    }
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n;
    ok = fclose(f) == 0 && ok;
    if (!ok) {
        fprintf(stderr, "drover: %s: write failed\n", path);
        return 1;
    }
    return 0;
}

enum {
    O_MODEL = 256,
    O_PARAMS,
    O_ACTIVE,
    O_TOKENS,
    O_FLOPS,
    O_SEQ,
    O_BATCH,
    O_BATCHTOK,
    O_PREC,
    O_ZERO,
    O_OFFLOAD,
    O_RECOMP,
    O_NOFLASH,
    O_TP,
    O_CP,
    O_PP,
    O_MB,
    O_RATE,
    O_PROMPT,
    O_OUTPUT,
    O_TTFT,
    O_TPOT,
    O_LATENCY,
    O_KVPREC,
    O_MAXBATCH,
    O_TASKS,
    O_TASKTIME,
    O_REFGPU,
    O_TASKMEM,
    O_BOUND,
    O_DEADLINE,
    O_MAXGPUS,
    O_GPU,
    O_GPUS,
    O_TYPES,
    O_NEOCLOUD,
    O_STACK,
    O_POWER,
    O_PUE,
    O_NET,
    O_STORAGE,
    O_MTBF,
    O_CATALOG,
    O_CLUSTER,
    O_CONTROLLER,
    O_JSON,
    O_PLOT,
    O_ALL,
    O_LIST,
    O_HELP
};

static const struct option plan_opts[] = {
    {"model", required_argument, 0, O_MODEL},
    {"params", required_argument, 0, O_PARAMS},
    {"active-params", required_argument, 0, O_ACTIVE},
    {"tokens", required_argument, 0, O_TOKENS},
    {"flops", required_argument, 0, O_FLOPS},
    {"seq", required_argument, 0, O_SEQ},
    {"batch", required_argument, 0, O_BATCH},
    {"batch-tokens", required_argument, 0, O_BATCHTOK},
    {"precision", required_argument, 0, O_PREC},
    {"zero", required_argument, 0, O_ZERO},
    {"offload", no_argument, 0, O_OFFLOAD},
    {"recompute", required_argument, 0, O_RECOMP},
    {"no-flash", no_argument, 0, O_NOFLASH},
    {"tp", required_argument, 0, O_TP},
    {"cp", required_argument, 0, O_CP},
    {"pp", required_argument, 0, O_PP},
    {"micro-batch", required_argument, 0, O_MB},
    {"rate", required_argument, 0, O_RATE},
    {"prompt", required_argument, 0, O_PROMPT},
    {"output", required_argument, 0, O_OUTPUT},
    {"ttft", required_argument, 0, O_TTFT},
    {"tpot", required_argument, 0, O_TPOT},
    {"latency", required_argument, 0, O_LATENCY},
    {"kv-precision", required_argument, 0, O_KVPREC},
    {"max-batch", required_argument, 0, O_MAXBATCH},
    {"tasks", required_argument, 0, O_TASKS},
    {"task-time", required_argument, 0, O_TASKTIME},
    {"ref-gpu", required_argument, 0, O_REFGPU},
    {"task-mem", required_argument, 0, O_TASKMEM},
    {"bound", required_argument, 0, O_BOUND},
    {"deadline", required_argument, 0, O_DEADLINE},
    {"max-gpus", required_argument, 0, O_MAXGPUS},
    {"gpu", required_argument, 0, O_GPU},
    {"gpus", required_argument, 0, O_GPUS},
    {"types", required_argument, 0, O_TYPES},
    {"neocloud", no_argument, 0, O_NEOCLOUD},
    {"stack", required_argument, 0, O_STACK},
    {"power-price", required_argument, 0, O_POWER},
    {"pue", required_argument, 0, O_PUE},
    {"net", required_argument, 0, O_NET},
    {"storage-gbs", required_argument, 0, O_STORAGE},
    {"gpu-mtbf", required_argument, 0, O_MTBF},
    {"catalog", required_argument, 0, O_CATALOG},
    {"cluster", required_argument, 0, O_CLUSTER},
    {"controller", no_argument, 0, O_CONTROLLER},
    {"json", no_argument, 0, O_JSON},
    {"plot", required_argument, 0, O_PLOT},
    {"all", no_argument, 0, O_ALL},
    {"list-models", no_argument, 0, O_LIST},
    {"help", no_argument, 0, O_HELP},
    {0, 0, 0, 0},
};

typedef struct plan_args {
    const char *model, *catalog, *plot, *types, *cluster;
    double params, active, batch_tokens, flops;
    bool json, all, have_params, kv_set, have_tokens, have_flops, have_rate, controller;
    char types_buf[1024];
} plan_args_t;

static const char *opt_name(int c)
{
    for (const struct option *o = plan_opts; o->name; o++)
        if (o->val == c)
            return o->name;
    return "?";
}

/* Options that only make sense for one kind of plan. */
static bool opt_allowed(dr_plan_kind_t k, int c)
{
    bool train = c == O_TOKENS || c == O_FLOPS || c == O_SEQ || c == O_BATCH || c == O_BATCHTOK ||
                 c == O_ZERO || c == O_OFFLOAD || c == O_RECOMP || c == O_NOFLASH || c == O_TP ||
                 c == O_STACK || c == O_CP || c == O_PP || c == O_MB;
    bool serve = c == O_RATE || c == O_PROMPT || c == O_OUTPUT || c == O_TTFT || c == O_TPOT ||
                 c == O_LATENCY || c == O_KVPREC || c == O_MAXBATCH;
    bool array = c == O_TASKS || c == O_TASKTIME || c == O_REFGPU || c == O_TASKMEM || c == O_BOUND;
    bool model = c == O_MODEL || c == O_PARAMS;
    if (train)
        return k == DR_PLAN_TRAIN;
    if (serve)
        return k == DR_PLAN_SERVE;
    if (array)
        return k == DR_PLAN_ARRAY;
    if (model)
        return k != DR_PLAN_ARRAY;
    return true;
}

static int parse_one(dr_plan_req_t *r, plan_args_t *pa, int c, const char *v)
{
    double d = 0;
    uint32_t u = 0;
    switch (c) {
    case O_MODEL: pa->model = v; return 0;
    case O_PARAMS: pa->have_params = true; return parse_count_opt("--params", v, &pa->params);
    case O_ACTIVE: return parse_count_opt("--active-params", v, &pa->active);
    case O_TOKENS: pa->have_tokens = true; return parse_count_opt("--tokens", v, &r->train.tokens);
    case O_FLOPS:
        pa->have_flops = true;
        if (parse_count_opt("--flops", v, &pa->flops))
            return 2;
        if (!(pa->flops > 0))
            return cli_usage_error("--flops: '%s' must be positive", v);
        return 0;
    case O_SEQ: return parse_u32_opt("--seq", v, &r->train.seq_len);
    case O_BATCH: return parse_count_opt("--batch", v, &r->train.global_batch);
    case O_BATCHTOK: return parse_count_opt("--batch-tokens", v, &pa->batch_tokens);
    case O_PREC:
        return r->kind == DR_PLAN_SERVE   ? parse_prec(v, &r->serve.precision)
               : r->kind == DR_PLAN_ARRAY ? parse_prec(v, &r->task_precision)
                                          : parse_prec(v, &r->train.precision);
    case O_ZERO:
        if (parse_u32_opt("--zero", v, &u) || u > 3)
            return cli_usage_error("--zero: '%s' (0, 1, 2 or 3)", v);
        r->train.zero_stage = (int)u;
        return 0;
    case O_OFFLOAD: r->train.cpu_offload = true; return 0;
    case O_RECOMP:
        if (dr_perfmodel_recompute_parse(v, &r->train.recompute) != 0)
            return cli_usage_error("--recompute: '%s' (none, selective, full, auto)", v);
        return 0;
    case O_NOFLASH: r->train.flash_attention = false; return 0;
    case O_TP: return parse_u32_opt("--tp", v, &r->train.tp);
    case O_CP: return parse_u32_opt("--cp", v, &r->train.cp);
    case O_PP: return parse_u32_opt("--pp", v, &r->train.pp);
    case O_MB: return parse_u32_opt("--micro-batch", v, &r->train.micro_batch);
    case O_RATE:
        pa->have_rate = true;
        if (parse_count_opt("--rate", v, &r->rate_rps))
            return 2;
        if (!(r->rate_rps > 0))
            return cli_usage_error("--rate: '%s' must be more than 0 requests/s", v);
        return 0;
    case O_PROMPT: return parse_count_opt("--prompt", v, &r->serve.prompt_tokens);
    case O_OUTPUT: return parse_count_opt("--output", v, &r->serve.output_tokens);
    case O_TTFT: return parse_dur_opt("--ttft", v, &r->ttft_s);
    case O_TPOT: return parse_dur_opt("--tpot", v, &r->tpot_s);
    case O_LATENCY: return parse_dur_opt("--latency", v, &r->latency_s);
    case O_KVPREC: pa->kv_set = true; return parse_prec(v, &r->serve.kv_precision);
    case O_MAXBATCH: return parse_u32_opt("--max-batch", v, &r->serve.max_batch);
    case O_TASKS: return parse_count_opt("--tasks", v, &r->tasks);
    case O_TASKTIME: return parse_dur_opt("--task-time", v, &r->task_gpu_s);
    case O_REFGPU: snprintf(r->ref_gpu, sizeof r->ref_gpu, "%s", v); return 0;
    case O_TASKMEM: return parse_count_opt("--task-mem", v, &r->task_mem_gb);
    case O_BOUND:
        if (strcmp(v, "compute") != 0 && strcmp(v, "memory") != 0)
            return cli_usage_error("--bound: '%s' (compute or memory)", v);
        r->memory_bound = strcmp(v, "memory") == 0;
        return 0;
    case O_DEADLINE:
        if (parse_dur_opt("--deadline", v, &r->deadline_s))
            return 2;
        if (r->deadline_s <= 0)
            return cli_usage_error("--deadline: '%s' must be longer than zero", v);
        return 0;
    case O_MAXGPUS:
        if (parse_u32_opt("--max-gpus", v, &r->max_gpus) || r->max_gpus == 0)
            return cli_usage_error("--max-gpus: '%s' must be a whole number >= 1", v);
        return 0;
    case O_GPU: snprintf(r->gpu, sizeof r->gpu, "%s", v); return 0;
    case O_GPUS:
        if (parse_u32_opt("--gpus", v, &r->gpus) || r->gpus == 0)
            return cli_usage_error("--gpus: '%s' must be a whole number >= 1", v);
        return 0;
    case O_TYPES: pa->types = v; return 0;
    case O_NEOCLOUD: r->neocloud = true; return 0;
    case O_STACK:
        if (strcmp(v, "record") == 0)
            r->stack_record = true;
        else if (strcmp(v, "typical") == 0)
            r->stack_record = false;
        else
            return cli_usage_error("--stack: '%s' is not typical or record", v);
        return 0;
    case O_POWER: return parse_count_opt("--power-price", v, &r->power_usd_kwh);
    case O_PUE:
        if (parse_count_opt("--pue", v, &r->pue) || r->pue < 1)
            return cli_usage_error("--pue: '%s' must be >= 1", v);
        return 0;
    case O_NET: {
        const char *colon = strchr(v, ':');
        char kind[16];
        size_t n = colon ? (size_t)(colon - v) : 0;
        if (!colon || n >= sizeof kind)
            return cli_usage_error("--net: '%s' (KIND:GBIT, e.g. ib:400 or eth:100)", v);
        memcpy(kind, v, n);
        kind[n] = '\0';
        if (dr_perfmodel_netkind_parse(kind, &r->net_kind) != 0)
            return cli_usage_error("--net: '%s': kind is ib, roce or eth", v);
        if (dr_plan_parse_count(colon + 1, &d) != 0 || d <= 0)
            return cli_usage_error("--net: '%s': bandwidth in Gbit/s per GPU", v);
        r->net_gbit = d;
        r->net_set = true;
        return 0;
    }
    case O_STORAGE:
        if (parse_count_opt("--storage-gbs", v, &r->train.storage_gbs) || r->train.storage_gbs <= 0)
            return cli_usage_error("--storage-gbs: '%s' must be a positive bandwidth in GB/s "
                                   "(all nodes together)",
                                   v);
        return 0;
    case O_MTBF:
        if (parse_count_opt("--gpu-mtbf", v, &r->train.gpu_mtbf_h) || r->train.gpu_mtbf_h <= 0)
            return cli_usage_error("--gpu-mtbf: '%s' must be positive GPU-hours between "
                                   "interruptions (Llama 3: 50700)",
                                   v);
        return 0;
    case O_CATALOG: pa->catalog = v; return 0;
    case O_CLUSTER: pa->cluster = v; return 0;
    case O_CONTROLLER: pa->controller = true; return 0;
    case O_JSON: pa->json = true; return 0;
    case O_PLOT: pa->plot = v; return 0;
    case O_ALL: pa->all = true; return 0;
    default: break;
    }
    return 2;
}

/* Split --types into the request (pointers into pa->types_buf). */
static int split_types(dr_plan_req_t *r, plan_args_t *pa)
{
    if (!pa->types)
        return 0;
    snprintf(pa->types_buf, sizeof pa->types_buf, "%s", pa->types);
    char *save = NULL;
    for (char *t = strtok_r(pa->types_buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (r->ntypes >= DR_PLAN_MAX_TYPES)
            return cli_usage_error("--types: at most %d types", DR_PLAN_MAX_TYPES);
        r->types[r->ntypes++] = t;
    }
    if (r->ntypes == 0)
        return cli_usage_error("--types: empty list");
    return 0;
}

static int build_model(dr_plan_req_t *r, const plan_args_t *pa, dr_perfmodel_arch_t *arch)
{
    dr_err_t err;
    if (pa->model && pa->have_params)
        return cli_usage_error("give --model or --params, not both (a preset has its own size; "
                               "use --model NAME,params=N to override)");
    if (!pa->model && !pa->have_params)
        return cli_usage_error("a model is needed: --model NAME (see --list-models) or --params N");
    if (pa->have_params) {
        if (!(pa->params > 0))
            return cli_usage_error("--params: the parameter count must be positive");
        memset(arch, 0, sizeof *arch);
        arch->params = pa->params;
        if (pa->active > 0 && !(pa->active < pa->params))
            return cli_usage_error("--active-params: %.3g is not below --params %.3g (a "
                                   "mixture of experts passes each token through part of it)",
                                   pa->active, pa->params);
        arch->active_params = pa->active;
        const char *moe = pa->active > 0 ? " MoE" : "";
        if (pa->params >= 1e12)
            snprintf(arch->name, sizeof arch->name, "%.3gT-parameter%s model", pa->params / 1e12,
                     moe);
        else
            snprintf(arch->name, sizeof arch->name, "%.3gB-parameter%s model", pa->params / 1e9,
                     moe);
        if (dr_perfmodel_arch_complete(arch, &err) != 0)
            return cli_fail(&err);
    } else if (pa->active > 0) {
        return cli_usage_error("--active-params goes with --params; with --model, say "
                               "--model NAME,active=N");
    } else if (dr_plan_model_parse(pa->model, arch, &err) != 0) {
        return cli_fail(&err);
    }
    (void)r;
    return 0;
}

int cli_plan(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        plan_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--list-models") == 0) {
        list_models();
        return 0;
    }
    dr_plan_kind_t kind;
    if (strcmp(argv[1], "train") == 0)
        kind = DR_PLAN_TRAIN;
    else if (strcmp(argv[1], "serve") == 0)
        kind = DR_PLAN_SERVE;
    else if (strcmp(argv[1], "array") == 0)
        kind = DR_PLAN_ARRAY;
    else
        return cli_usage_error("plan: unknown kind '%s' (train, serve or array)", argv[1]);
    dr_plan_req_t r;
    dr_plan_req_init(&r, kind);
    plan_args_t pa;
    memset(&pa, 0, sizeof pa);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc - 1, argv + 1, "", plan_opts, NULL)) != -1) {
        if (c == O_HELP) {
            plan_usage(stdout);
            return 0;
        }
        if (c == O_LIST) {
            list_models();
            return 0;
        }
        if (c == '?' || c == ':')
            return cli_usage_error("plan %s: unknown option or missing value: %s", argv[1],
                                   argv[optind] ? argv[optind] : argv[argc - 1]);
        if (!opt_allowed(kind, c))
            return cli_usage_error("plan %s: option --%s does not apply", argv[1], opt_name(c));
        int rc = parse_one(&r, &pa, c, optarg);
        if (rc)
            return rc;
    }
    if (optind < argc - 1)
        return cli_usage_error("plan %s: unexpected argument '%s'", argv[1], argv[optind + 1]);
    int rc = split_types(&r, &pa);
    if (rc)
        return rc;
    if (kind != DR_PLAN_ARRAY) {
        dr_perfmodel_arch_t arch;
        memset(&arch, 0, sizeof arch);
        if ((rc = build_model(&r, &pa, &arch)))
            return rc;
        if (kind == DR_PLAN_TRAIN) {
            r.train.arch = arch;
            if (pa.have_tokens && pa.have_flops)
                return cli_usage_error("give --tokens or --flops, not both");
            if (pa.have_flops) /* the compute budget: 6 x N x D */
                r.train.tokens = pa.flops / (6 * dr_perfmodel_arch_active(&arch));
            if (pa.batch_tokens > 0) {
                if (r.train.global_batch > 0)
                    return cli_usage_error("give --batch or --batch-tokens, not both");
                uint32_t seq = r.train.seq_len ? r.train.seq_len : arch.seq_len;
                r.train.global_batch = round(pa.batch_tokens / seq);
                if (r.train.global_batch < 1)
                    return cli_usage_error("--batch-tokens: smaller than one %u-token sequence",
                                           seq);
            }
            if (r.train.global_batch < 0 || (r.train.global_batch > 0 && r.train.global_batch < 1))
                return cli_usage_error("--batch: at least one sequence");
        } else {
            r.serve.arch = arch;
            if (!pa.have_rate)
                return cli_usage_error("plan serve: --rate RPS is required (the requests per "
                                       "second to sustain, e.g. --rate 10)");
        }
    }
    dr_catalog_t cat;
    dr_err_t err;
    if (cli_load_catalog(&cat, pa.catalog, &err) != 0)
        return cli_fail(&err);
    if (pa.cluster && pa.controller) {
        dr_catalog_free(&cat);
        return cli_usage_error("plan %s: give --cluster FILE or --controller, not both", argv[1]);
    }
    static cli_site_t site; /* r.types point into it */
    if (pa.cluster || pa.controller) {
        rc = pa.cluster ? cli_site_from_file(&site, &cat, pa.cluster, &err)
                        : cli_site_from_controller(&site, &cat, &err);
        if (rc == DR_OK)
            rc = cli_site_apply(&site, &r, &cat, &err);
        if (rc != DR_OK) {
            dr_catalog_free(&cat);
            return cli_fail(&err);
        }
    }
    dr_plan_result_t res;
    if (dr_plan_run(&r, &cat, &res, &err) != 0) {
        dr_catalog_free(&cat);
        if (pa.cluster || pa.controller) /* the types were the cluster's, not --types alone */
            dr_err_prefix(&err, "on %s: ", site.what);
        return cli_fail(&err);
    }
    /* on a live cluster: when would the top choice start? */
    json_t *est = NULL;
    char est_what[160] = "", est_line[1200] = "";
    if (pa.controller) {
        dr_err_t e2 = {0};
        if (cli_site_estimate(&res, &est, est_what, sizeof est_what, &e2) == DR_OK)
            cli_test_only_line(est, est_what, est_line, sizeof est_line);
        else
            snprintf(est_line, sizeof est_line, "start on the controller: not known (%s)", e2.msg);
    }
    int status = 0;
    if (pa.plot) {
        char *svg = dr_plan_svg(&r, &res);
        status = svg ? write_text(pa.plot, svg) : 1;
        free(svg);
    }
    if (pa.json) {
        char *js = dr_plan_json(&r, &res);
        if (js && (pa.cluster || pa.controller)) {
            /* which cluster the plan is for, and the controller's estimate */
            json_t *o = json_loads(js, JSON_PRESERVE_ORDER, NULL);
            json_t *types = json_object(), *per = json_object();
            for (size_t i = 0; i < site.n; i++) {
                json_object_set_new(types, site.name[i], json_integer((json_int_t)site.count[i]));
                if (site.net[i].host_gpus)
                    json_object_set_new(per, site.name[i],
                                        json_integer((json_int_t)site.net[i].host_gpus));
            }
            json_object_set_new(
                o, "cluster",
                json_pack("{s:s,s:o,s:o}", "from", site.what, "gpus", types, "gpus_per_node", per));
            if (pa.controller)
                json_object_set_new(o, "start_estimate",
                                    est ? json_incref(est) : json_string(est_line));
            free(js);
            js = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8))
                   : NULL;
            json_decref(o);
        }
        if (!js) {
            fprintf(stderr, "drover: out of memory\n");
            status = 1;
        } else {
            printf("%s\n", js);
            free(js);
        }
    } else {
        print_wrapped(res.verdict_text); /* the answer first, where a user reads it */
        if (est_line[0])
            print_wrapped(est_line);
        if (pa.cluster || pa.controller) {
            printf("cluster (%s):", site.what);
            for (size_t i = 0; i < site.n; i++) {
                printf("%s %llu x %s", i ? "," : "", (unsigned long long)site.count[i],
                       site.name[i]);
                if (site.net[i].host_gpus) /* the node size the plan counts in */
                    printf(" (%u per node)", site.net[i].host_gpus);
            }
            printf("\n");
        }
        printf("\n");
        if (kind == DR_PLAN_TRAIN)
            print_train(&res, pa.all);
        else if (kind == DR_PLAN_SERVE)
            print_serve(&res, pa.all);
        else
            print_array(&res, pa.all);
        printf("\n");
        print_wrapped(res.explanation);
        if (kind == DR_PLAN_TRAIN && res.assumptions[0])
            print_wrapped(res.assumptions);
        if (!pa.all && res.n > 8)
            printf("(%zu more options: --all)\n", res.n - 8);
    }
    json_decref(est);
    dr_plan_result_free(&res);
    dr_catalog_free(&cat);
    return status;
}
