/* serve.c - planning an inference service on one GPU type: for each
 * tensor-parallel width, the most requests in flight that meet the latency
 * targets, the replicas that sustain the rate, and the cheapest of them. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plan/plan_priv.h"

/* Largest concurrency in [1, hi] meeting the latency targets (0 if none). */
static uint32_t serve_max_conc(const dr_plan_req_t *r, const dr_gpu_spec_t *g, uint32_t tp,
                               uint32_t hi, const dr_perfmodel_net_t *net,
                               dr_perfmodel_serve_est_t *best)
{
    uint32_t lo = 0;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        dr_perfmodel_serve_est_t e;
        if (dr_perfmodel_serve_eval(&r->serve, g, tp, mid, net, &e, NULL) != 0 || !e.fits)
            break;
        bool ok = (r->ttft_s <= 0 || e.ttft_s <= r->ttft_s) &&
                  (r->tpot_s <= 0 || e.tpot_s <= r->tpot_s) &&
                  (r->latency_s <= 0 || e.latency_s <= r->latency_s);
        if (ok) {
            lo = mid;
            *best = e;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

int dr_plan_serve_type(const dr_plan_req_t *r, const dr_gpu_spec_t *g, uint32_t fixed_gpus,
                       dr_plan_option_t *o, dr_err_t *err)
{
    memset(o, 0, sizeof *o);
    snprintf(o->gpu, sizeof o->gpu, "%s", g->name);
    dr_perfmodel_net_t net;
    dr_plan_net_for(r, g, &net);
    o->node_gpus = dr_plan_node_size(r, g, net.node_gpus);
    o->net = net;
    o->net_from = dr_plan_net_from(r, g);
    o->price_hr = dr_plan_price_of(r, g);
    o->tdp_w = isfinite(g->tdp_w) && g->tdp_w > 0 ? g->tdp_w : NAN;
    const dr_perfmodel_arch_t *a = &r->serve.arch;
    bool found = false;
    double best_cost = INFINITY;
    char why[DR_PERFMODEL_REASON_MAX] = "";
    size_t ccap = 0;
    for (uint32_t tp = 1; tp <= net.node_gpus && tp <= 64; tp *= 2) {
        if (a->heads % tp)
            continue;
        if (fixed_gpus && (tp > fixed_gpus || fixed_gpus % tp))
            continue;
        dr_perfmodel_serve_est_t full;
        int rc = dr_perfmodel_serve_eval(&r->serve, g, tp, 0, &net, &full, err);
        if (rc)
            return rc;
        if (!full.fits) {
            snprintf(why, sizeof why, "%s", full.reason);
            continue;
        }
        if (r->ttft_s > 0 && full.ttft_floor_s > r->ttft_s) {
            snprintf(why, sizeof why,
                     "time to first token is at least %.3g s with %u GPU(s) per replica (target "
                     "%.3g s)",
                     full.ttft_floor_s, tp, r->ttft_s);
            continue;
        }
        if (r->tpot_s > 0 && full.tpot_floor_s > r->tpot_s) {
            snprintf(why, sizeof why,
                     "time per output token is at least %.3g s with %u GPU(s) per replica "
                     "(target %.3g s)",
                     full.tpot_floor_s, tp, r->tpot_s);
            continue;
        }
        dr_perfmodel_serve_est_t e = full;
        uint32_t conc = serve_max_conc(r, g, tp, full.max_concurrency, &net, &e);
        if (conc == 0) {
            snprintf(why, sizeof why,
                     "no concurrency meets the latency targets with %u GPU(s) per replica", tp);
            continue;
        }
        double rps = e.requests_per_s;
        uint32_t replicas = r->rate_rps > 0 ? (uint32_t)ceil(r->rate_rps / rps - 1e-9) : 1;
        if (replicas < 1)
            replicas = 1;
        if (fixed_gpus)
            replicas = fixed_gpus / tp;
        uint64_t gpus = (uint64_t)replicas * tp;
        uint32_t maxg = dr_plan_type_max_gpus(r, g);
        if (gpus > DR_PLAN_MAX_GPUS || (maxg < DR_PLAN_MAX_GPUS && gpus > maxg && !fixed_gpus)) {
            snprintf(why, sizeof why, "needs %llu GPUs for the rate (budget %u)",
                     (unsigned long long)gpus, maxg);
            continue;
        }
        double cost = gpus * (isfinite(o->price_hr) ? o->price_hr : 1e6);
        if (dr_plan_push_point(o, &ccap, (uint32_t)gpus, e.latency_s, gpus * o->price_hr) != 0)
            return dr_err_set(err, DR_ENOMEM, "plan: out of memory");
        if (!found || cost < best_cost * (1 - 1e-9)) {
            found = true;
            best_cost = cost;
            o->serve = e;
            o->replicas = replicas;
            o->gpus = (uint32_t)gpus;
        }
    }
    if (!found) {
        o->fits = false;
        o->gpus = fixed_gpus;
        snprintf(o->note, sizeof o->note, "%s", why[0] ? why : "does not fit");
        o->wall_s = o->gpu_hours = o->cost_usd = o->energy_kwh = o->power_cost_usd = NAN;
        o->cost_usd_hr = o->energy_kwh_hr = NAN;
        return DR_OK;
    }
    o->fits = true;
    double capacity = o->replicas * o->serve.requests_per_s;
    o->meets = r->rate_rps <= 0 || capacity >= r->rate_rps * (1 - 1e-9);
    if (!o->meets)
        snprintf(o->note, sizeof o->note,
                 "%u replica(s) sustain %.3g requests/s, below the %.3g requested", o->replicas,
                 capacity, r->rate_rps);
    o->nodes = (o->gpus + o->node_gpus - 1) / o->node_gpus;
    o->verdict = o->replicas > 1 && o->gpus > o->node_gpus
                     ? DR_VERDICT_MULTI_NODE
                     : dr_plan_verdict_of(o->gpus, o->node_gpus);
    o->cost_usd_hr = o->gpus * o->price_hr;
    double pue = r->pue > 0 ? r->pue : 1.0;
    o->energy_kwh_hr = o->gpus * o->tdp_w / 1000.0 * pue;
    o->wall_s = NAN;
    o->gpu_hours = o->gpus; /* per hour of service */
    o->cost_usd = o->cost_usd_hr;
    o->energy_kwh = o->energy_kwh_hr;
    o->power_cost_usd = r->power_usd_kwh > 0 ? o->energy_kwh * r->power_usd_kwh : NAN;
    return DR_OK;
}
