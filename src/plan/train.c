/* train.c - planning a training run on one GPU type: the start-up
 * overheads, the bound on what a layout promises and the typical run
 * below it (docs/planner.md, "Optimism"), the candidate global batches
 * (DeepSeek LLM's B_opt), and the sweep over GPU counts that picks the
 * cheapest within the deadline, the fastest within the budget, or the
 * knee of the cost/time curve. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "drover/resilience.h"
#include "drover/time.h"
#include "plan/plan_priv.h"

/* ---- training ---- */

/* Start-up and per-job overheads (docs/planner.md, "Small jobs"): the launch
 * (resilience.h: process start, distributed initialisation), then the
 * weights in bf16 (2 bytes per parameter) read by every node, and the final
 * weights written once, at 2 GB/s per node (one NVMe drive or a parallel-
 * filesystem client's share; NFS is slower). */
#define STARTUP_STORAGE_BPS (DR_RES_NODE_GBS * 1e9)

double dr_plan_startup_s(double params, uint32_t gpus, uint32_t nodes)
{
    double io = 2 * 2.0 * params / STARTUP_STORAGE_BPS; /* read, then the final save */
    return dr_res_launch_s(gpus, nodes) + io;
}

double dr_plan_best_mfu(const dr_gpu_spec_t *g, dr_precision_t p, uint32_t nodes)
{
    double f = PLAN_BEST_F0 - PLAN_BEST_PER_DOUBLING * log2(nodes > 1 ? nodes : 1);
    return dr_perfmodel_matmul_eff(g, p) * fmax(0.3, fmin(PLAN_BEST_MAX, f));
}

/* Did the planner choose everything of the run?  A batch or layout the
 * user pinned describes their run: the plan gives the model's own number
 * for it (what bench/plan_validation checks with each paper's batch and
 * layout); the typical discount is for a run the planner chose. */
bool dr_plan_planner_chose(const dr_perfmodel_train_t *t)
{
    return !t->tp && !t->pp && !t->cp && !t->micro_batch && !t->interleave && t->global_batch <= 0;
}

/* Is the plan for a typical run: the planner chose everything and the user
 * did not say the stack is a record-class one (--stack record)? */
bool dr_plan_typical_run(const dr_plan_req_t *r)
{
    return dr_plan_planner_chose(&r->train) && !r->stack_record;
}

/* The model's estimate -> the plan's: capped at the bound, then typical
 * when `chosen` (planner_chose of the request). */
void dr_plan_temper(const dr_plan_req_t *r, const dr_gpu_spec_t *g, dr_perfmodel_train_est_t *e,
                    span_t *sp, bool chosen)
{
    sp->ceiling = dr_plan_best_mfu(g, e->precision, e->nodes);
    sp->capped = e->mfu > sp->ceiling;
    double hi = e->tokens_per_s * (sp->capped ? sp->ceiling / e->mfu : 1.0);
    double pt = hi * (chosen ? PLAN_TYPICAL : 1.0), k = pt / e->tokens_per_s;
    e->tokens_per_s = pt;
    e->samples_per_s *= k;
    e->achieved_tflops_per_gpu *= k;
    e->mfu *= k;
    e->hfu *= k;
    e->step_s /= k;
    if (e->res.interval_s > 0)
        e->res.interval_steps = fmax(1, ceil(e->res.interval_s / e->step_s - 1e-9));
    sp->fast_s = sp->slow_s = 0;
    sp->empirical = chosen;
    if (r->train.tokens > 0) {
        e->wall_s = r->train.tokens / pt / e->goodput;
        sp->fast_s = chosen ? e->wall_s * PLAN_RANGE_FAST : r->train.tokens / hi / e->goodput;
        sp->slow_s =
            chosen ? e->wall_s * PLAN_RANGE_SLOW : r->train.tokens / (hi * PLAN_SLOW) / e->goodput;
    }
}

/* The fastest layout on `gpus` GPUs over the candidate batches: among
 * those within 2% of the fastest, the smallest batch (the safer one for
 * convergence). */
static int train_best_batch(const dr_plan_req_t *r, const batch_set_t *bs, const dr_gpu_spec_t *g,
                            uint32_t gpus, const dr_perfmodel_net_t *net,
                            dr_perfmodel_train_est_t *out, dr_err_t *err)
{
    if (!bs || bs->n == 0)
        return dr_perfmodel_train_best(&r->train, g, gpus, net, out, err);
    dr_perfmodel_train_est_t ests[DR_PLAN_BATCHES];
    size_t best = SIZE_MAX, fail = 0;
    for (size_t i = 0; i < bs->n; i++) {
        dr_perfmodel_train_t job = r->train;
        job.global_batch = bs->b[i];
        int rc = dr_perfmodel_train_best(&job, g, gpus, net, &ests[i], err);
        if (rc)
            return rc;
        if (!ests[i].fits) {
            /* the informative failure: memory over "cannot keep busy" */
            if (!strstr(ests[i].reason, "cannot keep") || strstr(ests[fail].reason, "cannot keep"))
                fail = i;
            continue;
        }
        if (best == SIZE_MAX || ests[i].tokens_per_s > ests[best].tokens_per_s)
            best = i;
    }
    if (best == SIZE_MAX) {
        *out = ests[fail];
        return DR_OK;
    }
    for (size_t i = 0; i < best; i++)
        if (ests[i].fits && ests[i].tokens_per_s >= 0.98 * ests[best].tokens_per_s) {
            best = i;
            break;
        }
    *out = ests[best];
    return DR_OK;
}

/* Candidate GPU counts for a type: 1, 2, 4, then whole nodes doubling. */
static size_t gpu_counts(uint32_t node, uint32_t maxg, uint32_t *out, size_t cap)
{
    size_t n = 0;
    for (uint32_t g = 1; g < node && g <= maxg && n < cap; g *= 2)
        out[n++] = g;
    for (uint64_t g = node; g <= maxg && n < cap; g *= 2)
        out[n++] = (uint32_t)g;
    return n;
}

/* Evaluate one type: sweep GPU counts (or just `fixed`), keep the curve,
 * choose one count. */
int dr_plan_train_type(const dr_plan_req_t *r, const batch_set_t *bs, const dr_gpu_spec_t *g,
                       uint32_t fixed, dr_plan_option_t *o, dr_err_t *err)
{
    memset(o, 0, sizeof *o);
    snprintf(o->gpu, sizeof o->gpu, "%s", g->name);
    dr_perfmodel_net_t net;
    dr_plan_net_for(r, g, &net);
    if (net.node_gpus == 0)
        net.node_gpus = 1;
    o->node_gpus = dr_plan_node_size(r, g, net.node_gpus);
    o->net = net;
    o->net_from = dr_plan_net_from(r, g);
    uint32_t maxg = dr_plan_type_max_gpus(r, g);
    uint32_t counts[64];
    size_t nc = fixed ? 1 : gpu_counts(net.node_gpus, maxg, counts, 64);
    if (fixed)
        counts[0] = fixed;
    size_t ccap = 0;
    dr_perfmodel_train_est_t best_fail;
    memset(&best_fail, 0, sizeof best_fail);
    bool have_fail = false;
    /* all fitting estimates, to choose among */
    dr_perfmodel_train_est_t ests[64];
    span_t spans[64];
    size_t ne = 0;
    for (size_t i = 0; i < nc; i++) {
        dr_perfmodel_train_est_t e;
        int rc = train_best_batch(r, bs, g, counts[i], &net, &e, err);
        if (rc)
            return rc;
        if (!e.fits) {
            /* keep the most informative failure: the largest count tried,
             * but a real cause (memory) over "the batch cannot feed more
             * GPUs", which only follows from the smaller counts failing */
            bool told = !strstr(e.reason, "cannot keep") && e.mem.capacity > 0;
            bool had =
                have_fail && !strstr(best_fail.reason, "cannot keep") && best_fail.mem.capacity > 0;
            if (!have_fail || told || !had)
                best_fail = e;
            have_fail = true;
            if (strstr(e.reason, "cannot keep") && ne > 0)
                break; /* the batch cannot feed more GPUs */
            continue;
        }
        uint32_t nodes = (counts[i] + o->node_gpus - 1) / o->node_gpus;
        double up = dr_plan_startup_s(r->train.arch.params, counts[i], nodes);
        dr_plan_temper(r, g, &e, &spans[ne], dr_plan_typical_run(r));
        e.wall_s += up;
        spans[ne].fast_s += up;
        spans[ne].slow_s += up;
        ests[ne++] = e;
        double wall = e.wall_s;
        double price = dr_plan_price_of(r, g);
        if (dr_plan_push_point(o, &ccap, counts[i], wall, counts[i] * wall / 3600 * price) != 0)
            return dr_err_set(err, DR_ENOMEM, "plan: out of memory");
        if (ne > 1 && wall >= ests[ne - 2].wall_s)
            break; /* more GPUs no longer help: the work cannot use them */
    }
    if (ne == 0) {
        o->fits = false;
        o->gpus = fixed ? fixed : have_fail ? best_fail.gpus : 0;
        o->train = best_fail;
        snprintf(o->note, sizeof o->note, "%s",
                 have_fail ? best_fail.reason : "no GPU count fits within the budget");
        o->verdict = DR_VERDICT_NONE;
        o->price_hr = dr_plan_price_of(r, g);
        o->tdp_w = g->tdp_w;
        o->wall_s = o->gpu_hours = o->cost_usd = o->energy_kwh = o->power_cost_usd = NAN;
        return DR_OK;
    }
    size_t pick = 0;
    if (r->deadline_s > 0) {
        /* cheapest that meets the deadline, else the fastest */
        bool found = false;
        for (size_t i = 0; i < ne; i++) {
            if (ests[i].wall_s > r->deadline_s)
                continue;
            double ci = ests[i].gpus * ests[i].wall_s, cp = ests[pick].gpus * ests[pick].wall_s;
            if (!found || ci < cp * (1 - 1e-9)) {
                pick = i;
                found = true;
            }
        }
        if (!found)
            for (size_t i = 0; i < ne; i++)
                if (ests[i].wall_s < ests[pick].wall_s)
                    pick = i;
    } else if (r->max_gpus) {
        for (size_t i = 0; i < ne; i++) /* fastest within the budget */
            if (ests[i].wall_s < ests[pick].wall_s)
                pick = i;
    } else {
        /* the knee: the fastest option that costs at most 10% more GPU-hours
         * than the cheapest */
        double minc = INFINITY;
        for (size_t i = 0; i < ne; i++)
            minc = fmin(minc, ests[i].gpus * ests[i].wall_s);
        pick = 0;
        double bestw = INFINITY;
        for (size_t i = 0; i < ne; i++)
            if (ests[i].gpus * ests[i].wall_s <= 1.10 * minc && ests[i].wall_s < bestw) {
                bestw = ests[i].wall_s;
                pick = i;
            }
    }
    if (r->deadline_s <= 0 || ests[pick].wall_s <= r->deadline_s) {
        /* more hardware must buy a meaningful saving: the smallest count
         * within DR_PLAN_MIN_SAVING of the chosen time (and within the
         * deadline) wins */
        double lim = fmax(ests[pick].wall_s * (1 + DR_PLAN_MIN_SAVING),
                          ests[pick].wall_s + DR_PLAN_MIN_SAVING_S);
        for (size_t i = 0; i < ne; i++)
            if (ests[i].gpus < ests[pick].gpus && ests[i].wall_s <= lim &&
                (r->deadline_s <= 0 || ests[i].wall_s <= r->deadline_s)) {
                pick = i;
                break;
            }
    }
    const dr_perfmodel_train_est_t *e = &ests[pick];
    o->startup_s = dr_plan_startup_s(r->train.arch.params, e->gpus,
                                     (e->gpus + o->node_gpus - 1) / o->node_gpus);
    o->train = *e;
    o->wall_fast_s = spans[pick].fast_s;
    o->wall_slow_s = spans[pick].slow_s;
    o->mfu_ceiling = spans[pick].ceiling;
    o->capped = spans[pick].capped;
    o->range_empirical = spans[pick].empirical;
    o->fits = true;
    o->gpus = e->gpus;
    o->nodes = (e->gpus + o->node_gpus - 1) / o->node_gpus;
    o->wall_s = e->wall_s;
    o->verdict = dr_plan_verdict_of(o->gpus, o->node_gpus);
    o->meets = r->deadline_s <= 0 || e->wall_s <= r->deadline_s;
    dr_plan_account(r, o, g, 0);
    if (!o->meets) {
        char w[32], d[32];
        dr_duration_format(e->wall_s, DR_DURATION_WORDS, w, sizeof w);
        dr_duration_format(r->deadline_s, DR_DURATION_WORDS, d, sizeof d);
        snprintf(o->note, sizeof o->note,
                 "misses the deadline: the fastest configuration tried takes %s (deadline %s)", w,
                 d);
    } else if (e->precision != r->train.precision && r->train.precision != DR_PREC_UNSET) {
        snprintf(o->note, sizeof o->note, "%s has no %s: runs in %s", g->name,
                 dr_precision_name(r->train.precision), dr_precision_name(e->precision));
    }
    return DR_OK;
}

/* ---- the batch ---- */

/* DeepSeek LLM (Bi et al. 2024, arXiv 2401.02954, sec. 3.1, eq. 1): the
 * loss-optimal global batch for a compute budget C (FLOPs), fitted over
 * 1e17-3e20 FLOPs and used by them for their 7B and 67B runs (9.4M and
 * 18.9M tokens; the formula gives 9.2M and 19M).  Beyond their range it is
 * an extrapolation, which is why the plan says what a smaller pinned batch
 * would cost. */
#define BOPT_K   0.2920
#define BOPT_EXP 0.3271

double dr_plan_batch_opt_tokens(double flops)
{
    return flops > 0 ? BOPT_K * pow(flops, BOPT_EXP) : 0;
}

/* The batches a plan may choose from when the user pinned none: from the
 * smaller to the larger of the model's default (its published batch, or
 * the GPT-3 paper's size rule) and B_opt(C) - convergence is shown for both
 * - doubling; never so large that the run takes fewer than
 * DR_PLAN_MIN_STEPS optimizer steps. */
void dr_plan_batch_candidates(const dr_plan_req_t *r, dr_plan_result_t *res, batch_set_t *bs)
{
    const dr_perfmodel_arch_t *a = &r->train.arch;
    uint32_t seq = r->train.seq_len ? r->train.seq_len : a->seq_len ? a->seq_len : 2048;
    double def = dr_perfmodel_default_batch(a, seq);
    double opt =
        fmax(1, round(dr_plan_batch_opt_tokens(6 * dr_perfmodel_arch_active(a) * r->train.tokens) /
                      seq));
    double most =
        fmax(fmax(1, r->train.micro_batch), floor(r->train.tokens / seq / DR_PLAN_MIN_STEPS));
    double lo = fmin(def, opt), hi = fmin(fmax(def, opt), most);
    lo = fmin(lo, hi);
    res->default_batch = def;
    res->opt_batch = opt;
    if (def > most)
        res->planned_batch = most; /* a short run: the batch shrinks for the steps */
    bs->n = 0;
    for (double b = lo; b < hi * (1 - 1e-9) && bs->n + 1 < DR_PLAN_BATCHES; b *= 2)
        bs->b[bs->n++] = round(b);
    bs->b[bs->n++] = round(hi);
}
