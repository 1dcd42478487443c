/* pack_drover.c - drover's packing policy: FGD's expected fragmentation plus
 * the two things it cannot see on a real cluster.
 *
 * FGD (pack_fgd.c) scores a placement by how much it grows the GPU milli the
 * *next* request could not use.  Two losses escape that one-step view:
 *
 *  - stranding: a node's CPUs or memory run out before its GPUs.  A 32-core
 *    CPU-only pod on a 96-core, 8-GPU node changes nothing for the next
 *    request, yet the node can now feed only ~6 more GPU pods and 2 GPUs will
 *    idle for good.  The stranded milli of a node is estimated by a fluid
 *    model: S = max(0, L - min(C * g_c, M * g_m)), where L, C, M are its free
 *    GPU milli, CPU and memory and g_c, g_m the GPU milli per unit of CPU and
 *    of memory that the GPU requests seen so far ask for (per GPU type).
 *  - GPU models: requests restricted to a few models fail when those fill up
 *    with requests that could have run anywhere.  The price of type t is the
 *    fraction of its free milli the restricted requests are expected to
 *    claim: sum over restricted shapes p that may use t of phi_p * V / F(A_p)
 *    (phi_p = p's share of the GPU demand seen, V = free GPU milli in the
 *    cluster, F(A_p) = free milli on the types p may use).
 *
 * The gain of putting request r on node n (GPU g) is
 *
 *   gain = -dF - beta * dS - gamma * price(type) * milli(r)
 *
 * (dF, dS: growth of FGD's measure and of S on that node), compared in steps
 * of `bin` milli; within a step the lowest node rank wins, as with FGD's
 * integer score.  (For FGD's measure alone the coarse comparison is worth up
 * to 1.5 points; with stranding counted exact and stepped comparison agree
 * within 0.04: docs/scheduling.md, "openb packing", has the measurements.) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sched/pack_frag.h"
#include "sched/pack_priv.h"

typedef struct dv_state {
    dr_frag_model_t m;
    dr_frag_memo_t memo;
    double beta;  /* weight of stranding */
    double gamma; /* weight of the GPU-model price */
    double bin;   /* comparison step, milli */
    bool mem;     /* stranding counts memory as well as CPU */
    /* per GPU type, over the GPU requests seen that may use it */
    double cpu[DR_MAX_GPU_TYPES], memory[DR_MAX_GPU_TYPES], milli[DR_MAX_GPU_TYPES];
    double price[DR_MAX_GPU_TYPES];
} dv_state_t;

static int dv_init(dr_packer_t *p, dr_err_t *err)
{
    dv_state_t *s = calloc(1, sizeof *s);
    if (!s)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    dr_frag_init(&s->m);
    s->beta = 1;
    s->gamma = 0.5;
    s->bin = 40;
    s->mem = true;
    p->state = s;
    return DR_OK;
}

static void dv_fini(dr_packer_t *p)
{
    dv_state_t *s = p->state;
    if (s) {
        dr_frag_free(&s->m);
        dr_frag_memo_free(&s->memo);
    }
    free(s);
}

static int dv_option(dr_packer_t *p, const char *key, const char *val, dr_err_t *err)
{
    dv_state_t *s = p->state;
    if (strcmp(key, "beta") == 0)
        return dr_pack_opt_double("drover", key, val, 0, 100, &s->beta, err);
    if (strcmp(key, "gamma") == 0)
        return dr_pack_opt_double("drover", key, val, 0, 100, &s->gamma, err);
    if (strcmp(key, "bin") == 0)
        return dr_pack_opt_double("drover", key, val, 1e-9, 1e6, &s->bin, err);
    if (strcmp(key, "mem") == 0) {
        uint64_t u = 0;
        int rc = dr_pack_opt_u64("drover", key, val, 1, &u, err);
        if (rc == DR_OK)
            s->mem = u != 0;
        return rc;
    }
    return dr_err_set(err, DR_EINVAL, "drover: unknown option '%s' (beta, gamma, bin, mem)", key);
}

static int dv_observe(dr_packer_t *p, const dr_pack_req_t *r)
{
    dv_state_t *s = p->state;
    for (dr_typemask_t m = r->ngpus ? r->allowed : 0; m; m &= m - 1) {
        int t = __builtin_ctzll(m);
        s->cpu[t] += r->cpu_milli;
        s->memory[t] += (double)r->mem_mb;
        s->milli[t] += (double)r->ngpus * r->gpu_milli;
    }
    return dr_frag_observe(&s->m, r);
}

/* GPU milli of a node of type t that its CPU (memory) will not be able to
 * feed, if GPU requests keep their observed CPU (memory) per milli. */
static double stranded(const dv_state_t *s, int t, double left, double cpu, double mem)
{
    if (t < 0 || left <= 0 || s->milli[t] <= 0)
        return 0;
    double usable = s->cpu[t] > 0 ? cpu * s->milli[t] / s->cpu[t] : left;
    if (s->mem && s->memory[t] > 0) {
        double by_mem = mem * s->milli[t] / s->memory[t];
        if (by_mem < usable)
            usable = by_mem;
    }
    return left > usable ? left - usable : 0;
}

static void update_prices(dv_state_t *s, const dr_cluster_t *c)
{
    size_t nt = c->ntypes < DR_MAX_GPU_TYPES ? c->ntypes : DR_MAX_GPU_TYPES;
    dr_typemask_t all = nt >= 64 ? ~0ULL : (1ULL << nt) - 1;
    double free_all = 0, demand = 0;
    for (size_t t = 0; t < nt; t++) {
        free_all += (double)c->milli_free_of_type[t];
        s->price[t] = 0;
    }
    const dr_frag_model_t *m = &s->m;
    for (size_t i = 0; i < m->nshapes; i++)
        demand += (double)m->shapes[i].count * m->shapes[i].num * m->shapes[i].milli;
    if (demand <= 0 || free_all <= 0)
        return;
    for (size_t i = 0; i < m->nshapes; i++) {
        const dr_frag_shape_t *sh = &m->shapes[i];
        if (sh->num == 0 || (sh->allowed & all) == all)
            continue; /* only restricted GPU requests claim particular types */
        double free_a = 0;
        for (size_t t = 0; t < nt; t++)
            if (sh->allowed & (1ULL << t))
                free_a += (double)c->milli_free_of_type[t];
        double claim = (double)sh->count * sh->num * sh->milli / demand;
        claim = free_a > 0 ? claim * free_all / free_a : 1;
        for (size_t t = 0; t < nt; t++)
            if (sh->allowed & (1ULL << t))
                s->price[t] += claim;
    }
}

/* the node-level part of the gain: stranding avoided and the model's price */
static double dv_node_term(const void *ud, const dr_cluster_t *c, const dr_node_t *n,
                           const dr_pack_req_t *r)
{
    const dv_state_t *s = ud;
    int t = n->ngpus ? n->type : -1;
    double left = (double)dr_pack_milli_left(c, n), take = (double)r->ngpus * r->gpu_milli;
    double term = 0;
    if (s->beta > 0)
        term += s->beta * (stranded(s, t, left, n->cpu_free, (double)n->mem_free) -
                           stranded(s, t, left - take, (double)(n->cpu_free - r->cpu_milli),
                                    (double)(n->mem_free - r->mem_mb)));
    if (s->gamma > 0 && t >= 0)
        term -= s->gamma * s->price[t] * take;
    return term;
}

static double dv_score(const void *ud, double d, double term)
{
    const dv_state_t *s = ud;
    return floor((d + term) / s->bin);
}

static int dv_choose(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                     dr_pack_pick_t *pick)
{
    dv_state_t *s = p->state;
    if (dr_frag_prepare(&s->m, c) != DR_OK)
        return DR_ENOMEM;
    if (s->gamma > 0)
        update_prices(s, c);
    dr_frag_scorer_t sc = {dv_score, dv_node_term, s};
    int32_t node = -1, gpu = -1;
    int rc = dr_frag_choose(p, c, r, &s->m, &s->memo, &sc, &node, &gpu);
    pick->node = (uint32_t)node;
    pick->gpu = gpu;
    return rc;
}

const dr_pack_ops_t dr_pack_drover_ops = {
    .name = "drover",
    .doc = "drover's packing policy: FGD's expected fragmentation plus the GPU milli a node's "
           "CPU or memory will strand (a fluid estimate from the requests seen) and a price on "
           "GPU models that restricted requests will need; gains compared in steps, ties to "
           "the lowest rank. Options: beta=1 (stranding weight), gamma=0.5 (model price "
           "weight), bin=40 (step, milli), mem=1 (stranding counts memory).",
    .init = dv_init,
    .option = dv_option,
    .fini = dv_fini,
    .observe = dv_observe,
    .choose = dv_choose,
};
