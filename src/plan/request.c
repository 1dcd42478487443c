/* request.c - the request and the result (initialisers, verdict names),
 * and what a request says about one GPU type: its price column, the GPUs
 * it may use, the site's nodes and network it is planned on, and the
 * accounting of an option's GPU-hours, cost and energy.  Shared by the
 * training, serving and array planners (train.c, serve.c, array.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/util.h"
#include "plan/plan_priv.h"

void dr_plan_req_init(dr_plan_req_t *r, dr_plan_kind_t kind)
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    dr_perfmodel_train_init(&r->train);
    dr_perfmodel_serve_init(&r->serve);
    r->task_precision = DR_PREC_BF16;
    r->pue = 1.0;
    r->net_kind = DR_NET_IB;
}

const char *dr_plan_verdict_name(dr_plan_verdict_t v)
{
    switch (v) {
    case DR_VERDICT_NONE: return "does not fit";
    case DR_VERDICT_SINGLE_GPU: return "single GPU";
    case DR_VERDICT_SINGLE_NODE: return "single node";
    case DR_VERDICT_MULTI_NODE: return "multi-node cluster";
    }
    return "?";
}

void dr_plan_result_free(dr_plan_result_t *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->n; i++)
        free(res->opts[i].curve);
    free(res->opts);
    memset(res, 0, sizeof *res);
}

/* ---- helpers ---- */

double dr_plan_price_of(const dr_plan_req_t *r, const dr_gpu_spec_t *g)
{
    double p = r->neocloud ? g->price_neocloud_hr : g->price_hr;
    return isfinite(p) && p > 0 ? p : NAN;
}

dr_plan_verdict_t dr_plan_verdict_of(uint32_t gpus, uint32_t node)
{
    if (gpus == 0)
        return DR_VERDICT_NONE;
    if (gpus == 1)
        return DR_VERDICT_SINGLE_GPU;
    return gpus <= node ? DR_VERDICT_SINGLE_NODE : DR_VERDICT_MULTI_NODE;
}

/* GPUs per host for the "nodes" column: the type's host size, at most the
 * NVLink domain the network model uses (a TPU pod slice of 256 chips spans
 * 32 hosts of 8). */
static uint32_t host_gpus(const dr_gpu_spec_t *g, uint32_t domain)
{
    uint32_t h = g ? dr_perfmodel_host_gpus(g) : 0;
    if (domain == 0)
        domain = 1;
    return h == 0 || h > domain ? domain : h;
}

/* Does the request's types[i] name g (by its name or an alias)? */
static bool names_type(const dr_plan_req_t *r, size_t i, const dr_gpu_spec_t *g)
{
    dr_catalog_t one = {.gpus = (dr_gpu_spec_t *)g, .n = 1, .cap = 1};
    return dr_catalog_find(&one, r->types[i]) != NULL;
}

/* The site's nodes of type g (beside it in types[], as its cap is), or
 * NULL: the type plans on its reference system. */
const dr_plan_site_net_t *dr_plan_site_net(const dr_plan_req_t *r, const dr_gpu_spec_t *g)
{
    if (!g)
        return NULL;
    for (size_t i = 0; i < r->ntypes; i++)
        if (r->type_net[i].from != DR_PLAN_NET_REFERENCE && names_type(r, i, g))
            return &r->type_net[i];
    return NULL;
}

/* The network type g is planned on: the site's nodes of it where the
 * request has them (from a cluster config the GPUs per node and what the
 * config declares: its NvlinkDomain= and its switch links; from a
 * controller the GPUs per node alone), else - and for what a config leaves
 * undeclared, as a slurm.conf always does - the type's reference system;
 * --net gives the network between nodes over either. */
void dr_plan_net_for(const dr_plan_req_t *r, const dr_gpu_spec_t *g, dr_perfmodel_net_t *n)
{
    dr_perfmodel_net_default(n, g);
    const dr_plan_site_net_t *s = dr_plan_site_net(r, g);
    if (s && s->from == DR_PLAN_NET_CLUSTER) {
        n->node_gpus = s->net.node_gpus;
        if (s->nvlink_declared || !n->intra_nvlink) {
            n->intra_nvlink = s->net.intra_nvlink;
            n->intra_gbs = s->net.intra_gbs;
        }
        if (s->links_declared) {
            n->kind = s->net.kind;
            n->inter_gbit = s->net.inter_gbit;
        }
    } else if (s && s->from == DR_PLAN_NET_NODE_GPUS && s->net.node_gpus) {
        n->node_gpus = s->net.node_gpus;
    }
    if (r->net_set) {
        n->kind = r->net_kind;
        n->inter_gbit = r->net_gbit;
    }
}

dr_plan_net_from_t dr_plan_net_from(const dr_plan_req_t *r, const dr_gpu_spec_t *g)
{
    const dr_plan_site_net_t *s = dr_plan_site_net(r, g);
    return s ? s->from : DR_PLAN_NET_REFERENCE;
}

/* GPUs per node for the "nodes" column and the verdict: the site's nodes
 * of g where the request has them, else the type's host size within the
 * NVLink domain `domain`. */
uint32_t dr_plan_node_size(const dr_plan_req_t *r, const dr_gpu_spec_t *g, uint32_t domain)
{
    const dr_plan_site_net_t *s = dr_plan_site_net(r, g);
    if (s && s->host_gpus)
        return s->host_gpus;
    return host_gpus(g, domain);
}

/* Fill gpu_hours, cost and energy from gpus x wall. */
void dr_plan_account(const dr_plan_req_t *r, dr_plan_option_t *o, const dr_gpu_spec_t *g,
                     double busy_gpu_s)
{
    o->price_hr = dr_plan_price_of(r, g);
    o->tdp_w = isfinite(g->tdp_w) && g->tdp_w > 0 ? g->tdp_w : NAN;
    o->gpu_hours = o->gpus * o->wall_s / 3600.0;
    o->cost_usd = o->gpu_hours * o->price_hr;
    double pue = r->pue > 0 ? r->pue : 1.0;
    double busy_h = busy_gpu_s > 0 ? busy_gpu_s / 3600.0 : o->gpu_hours;
    o->energy_kwh = busy_h * o->tdp_w / 1000.0 * pue;
    o->power_cost_usd = r->power_usd_kwh > 0 ? o->energy_kwh * r->power_usd_kwh : NAN;
}

/* The most GPUs of type g to plan: the budget, and the cap beside g in
 * types[] (a one-row catalog finds g by the name or alias given, as
 * types_of did). */
uint32_t dr_plan_type_max_gpus(const dr_plan_req_t *r, const dr_gpu_spec_t *g)
{
    uint32_t m = r->max_gpus ? r->max_gpus : DR_PLAN_MAX_GPUS;
    for (size_t i = 0; i < r->ntypes; i++)
        if (r->type_max[i] && r->type_max[i] < m && names_type(r, i, g))
            m = r->type_max[i];
    return m;
}

int dr_plan_push_point(dr_plan_option_t *o, size_t *cap, uint32_t gpus, double wall, double cost)
{
    dr_plan_point_t p = {gpus, wall, cost};
    return DR_PUSH(o->curve, o->ncurve, *cap, p);
}

const dr_gpu_spec_t *dr_plan_find_type(const dr_catalog_t *cat, const char *name, dr_err_t *err)
{
    const dr_gpu_spec_t *g = dr_catalog_find(cat, name);
    if (!g) {
        char names[700];
        size_t w = 0;
        for (size_t i = 0; i < cat->n && w < sizeof names; i++)
            w += (size_t)snprintf(names + w, sizeof names - w, "%s%s", i ? ", " : "",
                                  cat->gpus[i].name);
        dr_err_set(err, DR_EINVAL, "unknown GPU type '%.40s' (catalog: %s)", name, names);
    }
    return g;
}

/* The types a request considers. */
int dr_plan_types_of(const dr_plan_req_t *r, const dr_catalog_t *cat, const dr_gpu_spec_t **out,
                     size_t *n, dr_err_t *err)
{
    *n = 0;
    if (r->ntypes == 0) {
        for (size_t i = 0; i < cat->n && *n < DR_PLAN_MAX_TYPES; i++)
            out[(*n)++] = &cat->gpus[i];
        return DR_OK;
    }
    for (size_t i = 0; i < r->ntypes && *n < DR_PLAN_MAX_TYPES; i++) {
        const dr_gpu_spec_t *g = dr_plan_find_type(cat, r->types[i], err);
        if (!g)
            return DR_EINVAL;
        bool dup = false;
        for (size_t k = 0; k < *n; k++)
            dup |= out[k] == g;
        if (!dup)
            out[(*n)++] = g;
    }
    return DR_OK;
}

/* How many of the request's types plan on a site's nodes. */
size_t dr_plan_site_types(const dr_plan_req_t *r)
{
    size_t k = 0;
    for (size_t i = 0; i < r->ntypes; i++)
        k += r->type_net[i].from != DR_PLAN_NET_REFERENCE;
    return k;
}
