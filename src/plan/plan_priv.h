/* plan_priv.h - what the planner's files share (src/plan): the constants
 * of its optimism, the candidate batches, what a request says about one GPU
 * type (request.c), the per-type planners (train.c, serve.c, array.c) and
 * the prose (explain.c).  Not part of the public API (drover/plan.h is). */
#ifndef DROVER_PLAN_PRIV_H
#define DROVER_PLAN_PRIV_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "drover/catalog.h"
#include "drover/error.h"
#include "drover/perfmodel.h"
#include "drover/plan.h"

/* The longest sequence the planner models (tokens). */
#define DR_PLAN_MAX_SEQ 1048576u

/* Optimism (docs/planner.md, "Optimism").
 *
 * The layout search finds the best layout the model knows of, and a search
 * over an imperfect model finds its errors.  So what it promises is bounded
 * by the best model-FLOPs utilisation published for the GPU generation at
 * that scale: the GPU's measured matmul efficiency times a fraction that
 * falls per doubling of nodes, through Korthikanti et al. 2022 (530B on
 * 2,240 A100s: 54.2% MFU) and Llama 3 (405B on 8,192 and 16,384 H100s: 43%
 * and 41%, Table 4), set to pass just above all three.  The plan's point
 * estimate is what such a run typically achieves: PLAN_TYPICAL of that
 * bound's throughput - the median, over 75 published training runs, of
 * bound time / reported time: the 41 of bench/plan_validation --size-only
 * and the 34 of bench/data/plan_validation_v2.csv, refitted on both once v2
 * had been evaluated (it was 0.74 on the 41 alone; ordinary stacks and
 * record runs together, no exclusions).  The range runs from the bound (the
 * fast end) to PLAN_SLOW of its throughput (the slow end: 90% of those runs
 * were faster).  Never fitted on bench/data/plan_validation_v3.csv.
 *
 * That range held only 26% of v3's runs when v3 was first evaluated (the
 * frozen model, 535f55d): published runs spread wider than the bound and
 * 0.59 of it.  So for a run the planner chose everything of, the printed
 * range is the empirical one: the 10th and 90th percentiles, over all 102
 * runs of the three sets (--size-only's 41, v2, v3), of reported time /
 * the plan's typical time - 80% of them took between PLAN_RANGE_FAST and
 * PLAN_RANGE_SLOW times the estimate.  A pinned run keeps the model's own
 * range (its figure at the bound, PLAN_SLOW of it). */
#define PLAN_BEST_F0           0.88
#define PLAN_BEST_PER_DOUBLING 0.03
#define PLAN_BEST_MAX          0.75
#define PLAN_TYPICAL           0.77
#define PLAN_SLOW              0.59
#define PLAN_RANGE_FAST        0.61
#define PLAN_RANGE_SLOW        1.49
#define PLAN_RANGE_RUNS        102 /* the runs the range was read from */

typedef struct span {
    double fast_s, slow_s; /* wall time at the bound and at the slow end */
    double ceiling;        /* the bound on MFU */
    bool capped;           /* the model's own estimate was above it */
    bool empirical;        /* the range is published runs' spread (planner_chose) */
} span_t;

/* The global batches a plan may choose from (sequences): DR_PLAN_BATCHES at
 * most, ascending; none when the user pinned the batch. */
#define DR_PLAN_BATCHES 12
typedef struct batch_set {
    double b[DR_PLAN_BATCHES];
    size_t n;
} batch_set_t;

/* ---- request.c: what the request says about GPU type g ---- */

/* The price column the request asked for; NAN when unknown. */
double dr_plan_price_of(const dr_plan_req_t *r, const dr_gpu_spec_t *g);
dr_plan_verdict_t dr_plan_verdict_of(uint32_t gpus, uint32_t node);
/* The site's nodes of type g (beside it in types[]), or NULL: the type
 * plans on its reference system. */
const dr_plan_site_net_t *dr_plan_site_net(const dr_plan_req_t *r, const dr_gpu_spec_t *g);
/* How many of the request's types plan on a site's nodes. */
size_t dr_plan_site_types(const dr_plan_req_t *r);
/* The network g is planned on, and whence. */
void dr_plan_net_for(const dr_plan_req_t *r, const dr_gpu_spec_t *g, dr_perfmodel_net_t *n);
dr_plan_net_from_t dr_plan_net_from(const dr_plan_req_t *r, const dr_gpu_spec_t *g);
/* GPUs per node for the "nodes" column and the verdict. */
uint32_t dr_plan_node_size(const dr_plan_req_t *r, const dr_gpu_spec_t *g, uint32_t domain);
/* Fill an option's gpu_hours, cost and energy from gpus x wall (energy
 * from busy_gpu_s when positive). */
void dr_plan_account(const dr_plan_req_t *r, dr_plan_option_t *o, const dr_gpu_spec_t *g,
                     double busy_gpu_s);
/* The most GPUs of type g to plan: the budget, and the cap beside g. */
uint32_t dr_plan_type_max_gpus(const dr_plan_req_t *r, const dr_gpu_spec_t *g);
/* Append a point to o's cost/time curve: 0 or DR_ENOMEM. */
int dr_plan_push_point(dr_plan_option_t *o, size_t *cap, uint32_t gpus, double wall, double cost);
/* A catalog type by name, or NULL with err naming the catalog's types. */
const dr_gpu_spec_t *dr_plan_find_type(const dr_catalog_t *cat, const char *name, dr_err_t *err);
/* The types a request considers (at most DR_PLAN_MAX_TYPES, no repeats). */
int dr_plan_types_of(const dr_plan_req_t *r, const dr_catalog_t *cat, const dr_gpu_spec_t **out,
                     size_t *n, dr_err_t *err);

/* ---- train.c, serve.c, array.c: one GPU type each ---- */

/* Did the planner choose everything of the run (no batch or layout
 * pinned)? */
bool dr_plan_planner_chose(const dr_perfmodel_train_t *t);
/* Is the plan for a typical run (planner_chose, and no --stack record)? */
bool dr_plan_typical_run(const dr_plan_req_t *r);
/* The model's estimate -> the plan's: capped at the bound, then typical
 * when `chosen`; the range into sp. */
void dr_plan_temper(const dr_plan_req_t *r, const dr_gpu_spec_t *g, dr_perfmodel_train_est_t *e,
                    span_t *sp, bool chosen);
/* The batches a plan may choose from when the user pinned none (and the
 * result's default, optimal and planned batches). */
void dr_plan_batch_candidates(const dr_plan_req_t *r, dr_plan_result_t *res, batch_set_t *bs);
int dr_plan_train_type(const dr_plan_req_t *r, const batch_set_t *bs, const dr_gpu_spec_t *g,
                       uint32_t fixed, dr_plan_option_t *o, dr_err_t *err);
int dr_plan_serve_type(const dr_plan_req_t *r, const dr_gpu_spec_t *g, uint32_t fixed_gpus,
                       dr_plan_option_t *o, dr_err_t *err);
int dr_plan_array_type(const dr_plan_req_t *r, const dr_gpu_spec_t *g, const dr_gpu_spec_t *ref,
                       uint32_t fixed, dr_plan_option_t *o);

/* ---- explain.c: the prose ---- */

/* A dollar amount in words ("$443k"); durations are dr_duration_format's
 * (DR_DURATION_WORDS). */
void dr_plan_human_usd(double v, char *buf, size_t n);
/* Append to a fixed, NUL-terminated buffer (truncating).  Inline: the
 * analyser then sees that it writes only into buf. */
static inline void dr_plan_cat(char *buf, size_t cap, const char *fmt, ...) DR_PRINTF(3, 4);
static inline void dr_plan_cat(char *buf, size_t cap, const char *fmt, ...)
{
    size_t len = strnlen(buf, cap);
    if (len + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}
/* The explanation, the assumptions and the verdict line of a ranked
 * result (re-plans the top choice for the FP8, batch and --offload
 * alternatives it states). */
void dr_plan_explain(const dr_plan_req_t *r, const dr_catalog_t *cat, dr_plan_result_t *res);

#endif
