/* pack.c - the packing-policy registry and the part every policy shares.
 *
 * A policy only decides *where* (node, and the GPU for a share); this file
 * parses the spec, checks feasibility the same way for all of them, breaks
 * ties by node rank and books the choice in the cluster ledger, so that two
 * policies compared on the same requests differ in their scores and nothing
 * else. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/pack.h"
#include "drover/partition.h"
#include "drover/util.h"
#include "sched/pack_priv.h"

static const dr_pack_ops_t *const registry[] = {
    &dr_pack_random_ops,  &dr_pack_dotprod_ops, &dr_pack_gpuclustering_ops, &dr_pack_gpupacking_ops,
    &dr_pack_bestfit_ops, &dr_pack_fgd_ops,     &dr_pack_drover_ops,        NULL};

const char *const *dr_pack_policy_names(void)
{
    static const char *names[sizeof registry / sizeof registry[0]];
    for (size_t i = 0; registry[i]; i++)
        names[i] = registry[i]->name;
    return names;
}

static const dr_pack_ops_t *find_ops(const char *name, size_t len)
{
    for (size_t i = 0; registry[i]; i++)
        if (strlen(registry[i]->name) == len && strncasecmp(registry[i]->name, name, len) == 0)
            return registry[i];
    return NULL;
}

const char *dr_pack_policy_doc(const char *name)
{
    const dr_pack_ops_t *o = find_ops(name, strlen(name));
    return o ? o->doc : NULL;
}

int dr_pack_req_validate(const dr_pack_req_t *r, dr_err_t *err)
{
    if (r->ngpus > DR_MAX_GPUS_PER_NODE)
        return dr_err_set(err, DR_EINVAL, "ngpus: %u is more than %d", r->ngpus,
                          DR_MAX_GPUS_PER_NODE);
    if (r->ngpus == 0)
        return DR_OK;
    if (r->gpu_milli == 0 || r->gpu_milli > 1000)
        return dr_err_set(err, DR_EINVAL, "gpu_milli: %u is not in 1..1000", r->gpu_milli);
    if (r->gpu_milli < 1000 && r->ngpus > 1)
        return dr_err_set(err, DR_EINVAL,
                          "gpu_milli: a share of a GPU (%u milli) is for one GPU, not %u",
                          r->gpu_milli, r->ngpus);
    return DR_OK;
}

int dr_pack_opt_u64(const char *policy, const char *key, const char *val, uint64_t max,
                    uint64_t *out, dr_err_t *err)
{
    if (dr_parse_u64(val, out) != 0 || *out > max)
        return dr_err_set(err, DR_EINVAL, "%s: option %s: '%s' is not a whole number in 0..%llu",
                          policy, key, val, (unsigned long long)max);
    return DR_OK;
}

int dr_pack_opt_double(const char *policy, const char *key, const char *val, double lo, double hi,
                       double *out, dr_err_t *err)
{
    if (dr_parse_double(val, out) != 0 || !(*out >= lo && *out <= hi))
        return dr_err_set(err, DR_EINVAL, "%s: option %s: '%s' is not a number in %g..%g", policy,
                          key, val, lo, hi);
    return DR_OK;
}

/* "k=v,k=v" after the ':' of a spec */
static int parse_options(dr_packer_t *p, const char *opts, dr_err_t *err)
{
    char *copy = dr_strdup(opts);
    if (!copy)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    int rc = DR_OK;
    char *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv && rc == DR_OK;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            rc = dr_err_set(err, DR_EINVAL, "%s: option '%s' is not key=value", p->ops->name, kv);
            break;
        }
        *eq = '\0';
        if (!p->ops->option)
            rc = dr_err_set(err, DR_EINVAL, "%s: takes no options (got '%s')", p->ops->name, kv);
        else
            rc = p->ops->option(p, kv, eq + 1, err);
    }
    free(copy);
    return rc;
}

int dr_packer_create(dr_packer_t **out, const char *spec, const dr_cluster_t *c, uint64_t seed,
                     dr_err_t *err)
{
    *out = NULL;
    if (!spec || !*spec)
        return dr_err_set(err, DR_EINVAL, "packing policy: empty name");
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    const dr_pack_ops_t *ops = find_ops(spec, nlen);
    if (!ops) {
        char names[256] = "";
        size_t n = 0;
        for (size_t i = 0; registry[i] && n < sizeof names; i++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "",
                                  registry[i]->name);
        return dr_err_set(err, DR_ENOENT, "unknown packing policy '%.*s' (known: %s)",
                          (int)(nlen > 64 ? 64 : nlen), spec, names);
    }
    dr_packer_t *p = calloc(1, sizeof *p);
    if (!p)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    p->ops = ops;
    p->nnodes = c->nnodes;
    p->rank = malloc((c->nnodes ? c->nnodes : 1) * sizeof *p->rank);
    if (!p->rank) {
        free(p);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < c->nnodes; i++) {
        p->rank[i] = (uint32_t)i;
        if (c->nodes[i].ngpus > p->maxg)
            p->maxg = c->nodes[i].ngpus;
    }
    /* a stream of its own, so a policy's draws never depend on other users
     * of the same seed */
    dr_rng_seed(&p->rng, seed ^ 0x7061636b65723a31ULL);
    int rc = ops->init ? ops->init(p, err) : DR_OK;
    if (rc == DR_OK && colon && colon[1])
        rc = parse_options(p, colon + 1, err);
    if (rc != DR_OK) {
        dr_packer_free(p);
        return rc;
    }
    *out = p;
    return DR_OK;
}

void dr_packer_free(dr_packer_t *p)
{
    if (!p)
        return;
    if (p->ops->fini)
        p->ops->fini(p);
    free(p->rank);
    free(p);
}

const char *dr_packer_name(const dr_packer_t *p)
{
    return p->ops->name;
}

int dr_packer_set_ranks(dr_packer_t *p, const uint32_t *rank, size_t n, dr_err_t *err)
{
    if (n != p->nnodes)
        return dr_err_set(err, DR_EINVAL, "node ranks: %zu given for %zu nodes", n, p->nnodes);
    memcpy(p->rank, rank, n * sizeof *rank);
    return DR_OK;
}

uint32_t dr_pack_milli_left(const dr_cluster_t *c, const dr_node_t *n)
{
    uint32_t s = 0;
    for (uint16_t g = 0; g < n->ngpus; g++)
        s += c->gpu_free[n->gpu_base + g];
    return s;
}

bool dr_pack_fits(const dr_cluster_t *c, const dr_node_t *n, const dr_pack_req_t *r)
{
    if (!dr_node_usable(n) || n->cpu_free < r->cpu_milli || n->mem_free < r->mem_mb)
        return false;
    if (r->nodeset && !dr_nodeset_has(c, r->nodeset, (uint32_t)(n - c->nodes)))
        return false;
    if (r->ngpus == 0)
        return true;
    if (n->ngpus == 0 || !(r->allowed & (1ULL << n->type)))
        return false;
    if (dr_pack_is_share(r))
        return n->max_milli >= r->gpu_milli;
    return n->gpus_idle >= r->ngpus;
}

int32_t dr_pack_tightest_gpu(const dr_cluster_t *c, const dr_node_t *n, uint32_t milli)
{
    const uint16_t *gf = &c->gpu_free[n->gpu_base];
    int32_t best = -1;
    for (uint16_t g = 0; g < n->ngpus; g++)
        if (gf[g] >= milli && (best < 0 || gf[g] < gf[best]))
            best = g;
    return best;
}

int dr_pack_argmax(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                   dr_pack_score_fn score, dr_pack_pick_t *pick)
{
    bool found = false;
    double best = 0;
    uint32_t best_rank = 0;
    for (uint32_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *n = &c->nodes[i];
        if (!dr_pack_fits(c, n, r))
            continue;
        int32_t gpu = -1;
        double s = score(p, c, i, r, &gpu);
        if (!found || s > best || (s == best && p->rank[i] < best_rank)) {
            found = true;
            best = s;
            best_rank = p->rank[i];
            pick->node = i;
            pick->gpu = gpu;
        }
    }
    return found ? DR_OK : DR_ENOSPC;
}

/* The slots of a choice: one per GPU (lowest idle ones for whole GPUs), or
 * one without a GPU for a CPU-only request (it still holds CPU and memory). */
static int build(const dr_cluster_t *c, const dr_pack_req_t *r, const dr_pack_pick_t *pk,
                 dr_alloc_t *out)
{
    const dr_node_t *n = &c->nodes[pk->node];
    uint32_t ns = r->ngpus ? r->ngpus : 1;
    memset(out, 0, sizeof *out);
    out->slots = malloc(ns * sizeof *out->slots);
    if (!out->slots)
        return DR_ENOMEM;
    out->nnodes = 1;
    out->type = n->ngpus ? n->type : 0;
    out->cpu_milli_per_node = r->cpu_milli;
    out->mem_mb_per_node = r->mem_mb;
    if (r->ngpus == 0) {
        out->slots[out->nslots++] = (dr_slot_t){pk->node, DR_NO_GPU, 0};
    } else if (dr_pack_is_share(r)) {
        if (pk->gpu < 0 || pk->gpu >= n->ngpus)
            return DR_ENOSPC;
        out->slots[out->nslots++] =
            (dr_slot_t){pk->node, (uint16_t)pk->gpu, (uint16_t)r->gpu_milli};
    } else {
        const uint16_t *gf = &c->gpu_free[n->gpu_base];
        for (uint16_t g = 0; g < n->ngpus && out->nslots < r->ngpus; g++)
            if (gf[g] == 1000)
                out->slots[out->nslots++] = (dr_slot_t){pk->node, g, 1000};
        if (out->nslots < r->ngpus)
            return DR_ENOSPC;
    }
    return DR_OK;
}

void dr_packer_count_placed_only(dr_packer_t *p, bool on)
{
    p->placed_only = on;
}

int dr_packer_place(dr_packer_t *p, dr_cluster_t *c, const dr_pack_req_t *r, dr_alloc_t *out)
{
    memset(out, 0, sizeof *out);
    if (dr_pack_req_validate(r, NULL) != DR_OK)
        return DR_EINVAL;
    if (c->nnodes != p->nnodes)
        return DR_ESTATE;
    int rc = p->ops->observe && !p->placed_only ? p->ops->observe(p, r) : DR_OK;
    if (rc != DR_OK)
        return rc;
    dr_pack_pick_t pick = {0, -1};
    if ((rc = p->ops->choose(p, c, r, &pick)) != DR_OK)
        return rc;
    if (pick.node >= c->nnodes || !dr_pack_fits(c, &c->nodes[pick.node], r))
        return DR_ESTATE; /* a policy chose a node that cannot take r: a bug */
    if ((rc = build(c, r, &pick, out)) == DR_OK)
        rc = dr_cluster_take(c, out, NULL);
    if (rc != DR_OK) {
        dr_alloc_free(out);
        return rc == DR_ENOSPC ? DR_ESTATE : rc;
    }
    if (p->ops->booked)
        p->ops->booked(p, c, r, &pick);
    if (p->ops->observe && p->placed_only)
        (void)p->ops->observe(p, r); /* out of memory only leaves it uncounted: it is booked */
    return DR_OK;
}
