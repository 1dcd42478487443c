/* cluster.c - the cluster model: building it (types, nodes, switches,
 * pools), finalising it (the switch tree's levels, the node shapes, then the
 * ledger's index: ledger.c), copying it, and what could ever fit on it.
 * What is free now - the ledger - is ledger.c's. */
#include "drover/cluster.h"

#include <stdlib.h>
#include <string.h>

#include "core/cluster_index.h"
#include "core/nodeset_priv.h"
#include "drover/util.h"

static int index_alloc(dr_cluster_t *c)
{
    if (c->index)
        return DR_OK;
    c->index = calloc(1, sizeof *c->index);
    return c->index ? DR_OK : DR_ENOMEM;
}

int dr_cluster_index_alloc(dr_cluster_t *c)
{
    return index_alloc(c);
}

void dr_cluster_init(dr_cluster_t *c)
{
    memset(c, 0, sizeof *c);
    dr_site_defaults(&c->site);
}

static void index_free_trees(struct dr_cluster_index *ix)
{
    dr_ledger_index_free(ix);
    free(ix->shapes);
    ix->shapes = NULL;
    ix->nshapes = ix->shapes_cap = 0;
}

void dr_cluster_free(dr_cluster_t *c)
{
    for (size_t i = 0; i < c->ntypes; i++)
        dr_gpu_spec_free(&c->types[i]);
    free(c->nodes);
    free(c->gpu_free);
    free(c->switches);
    free(c->nvl_domains);
    for (size_t i = 0; i < c->npools; i++)
        free(c->pools[i].name);
    free(c->pools);
    for (size_t i = 0; c->accounts && i < c->naccounts; i++)
        free(c->accounts[i].name);
    free(c->accounts);
    dr_cluster_shards_free(c);
    dr_cluster_sets_free(c);
    if (c->index) {
        for (size_t i = 0; i < DR_CLUSTER_NPACKERS; i++)
            if (c->index->packers[i] && c->index->packer_free)
                c->index->packer_free(c->index->packers[i]);
        index_free_trees(c->index);
        dr_strtab_free(&c->index->node_names);
        dr_strtab_free(&c->index->switch_names);
        dr_strtab_free(&c->index->nvl_names);
        free(c->index);
    }
    memset(c, 0, sizeof *c);
}

/* --- building --- */

int dr_cluster_find_type(const dr_cluster_t *c, const char *name)
{
    for (size_t i = 0; i < c->ntypes; i++) {
        if (dr_streq_ci(c->types[i].name, name))
            return (int)i;
    }
    /* aliases: '|'-separated */
    for (size_t i = 0; i < c->ntypes; i++) {
        const char *a = c->types[i].aliases;
        while (*a) {
            const char *e = strchr(a, '|');
            size_t n = e ? (size_t)(e - a) : strlen(a);
            if (n == strlen(name) && strncasecmp(a, name, n) == 0)
                return (int)i;
            if (!e)
                break;
            a = e + 1;
        }
    }
    return -1;
}

int dr_cluster_add_type(dr_cluster_t *c, const dr_gpu_spec_t *spec, dr_err_t *err)
{
    for (size_t i = 0; i < c->ntypes; i++)
        if (dr_streq_ci(c->types[i].name, spec->name))
            return (int)i;
    if (c->ntypes >= DR_MAX_GPU_TYPES)
        return dr_err_set(err, DR_ELIMIT, "GPU type '%s': a cluster holds at most %d GPU types",
                          spec->name, DR_MAX_GPU_TYPES);
    if (dr_gpu_spec_copy(&c->types[c->ntypes], spec) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    return (int)c->ntypes++;
}

int dr_cluster_find_switch(const dr_cluster_t *c, const char *name)
{
    return c->index ? (int)dr_strtab_find(&c->index->switch_names, name) : -1;
}

int dr_cluster_add_switch(dr_cluster_t *c, const char *name, dr_err_t *err)
{
    if (index_alloc(c) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    int64_t id = dr_strtab_find(&c->index->switch_names, name);
    if (id >= 0)
        return (int)id;
    id = dr_strtab_intern(&c->index->switch_names, name);
    dr_switch_t sw = {.name = NULL, .parent = DR_NONE, .level = 0, .link_gbs = 0};
    if (id < 0 || DR_PUSH(c->switches, c->nswitches, c->switches_cap, sw) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    c->switches[id].name = c->index->switch_names.strs[id];
    return (int)id;
}

int dr_cluster_nvl_domain(dr_cluster_t *c, const char *name, dr_err_t *err)
{
    if (index_alloc(c) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    int64_t id = dr_strtab_find(&c->index->nvl_names, name);
    if (id >= 0)
        return (int)id;
    id = dr_strtab_intern(&c->index->nvl_names, name);
    if (id < 0 || DR_PUSH(c->nvl_domains, c->nnvl, c->nvl_cap, (char *)NULL) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    /* domain names are the strtab's strings (stable: each is its own
     * allocation), so only the new one needs pointing at */
    c->nvl_domains[id] = c->index->nvl_names.strs[id];
    return (int)id;
}

int dr_cluster_find_node(const dr_cluster_t *c, const char *name)
{
    return c->index ? (int)dr_strtab_find(&c->index->node_names, name) : -1;
}

int dr_cluster_add_node(dr_cluster_t *c, const char *name, int type, uint16_t ngpus,
                        uint32_t cpu_milli, uint64_t mem_mb, dr_err_t *err)
{
    if (index_alloc(c) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    if (c->index->built)
        return dr_err_set(err, DR_ESTATE, "node '%s': cluster already finalised", name);
    if (dr_strtab_find(&c->index->node_names, name) >= 0)
        return dr_err_set(err, DR_EINVAL, "node '%s' is defined twice", name);
    if (ngpus > DR_MAX_GPUS_PER_NODE)
        return dr_err_set(err, DR_EINVAL, "node '%s': %u GPUs is more than %d", name, ngpus,
                          DR_MAX_GPUS_PER_NODE);
    if (ngpus > 0 && (type < 0 || (size_t)type >= c->ntypes))
        return dr_err_set(err, DR_EINVAL, "node '%s': unknown GPU type index %d", name, type);
    if (c->nnodes >= UINT32_MAX / 2)
        return dr_err_set(err, DR_ELIMIT, "too many nodes");
    int64_t id = dr_strtab_intern(&c->index->node_names, name);
    if (id < 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    dr_node_t n = {0};
    n.type = ngpus ? (uint16_t)type : 0;
    n.ngpus = ngpus;
    n.cpu_milli = n.cpu_free = cpu_milli;
    n.mem_mb = n.mem_free = mem_mb;
    n.switch_id = n.nvl_domain = n.pool = DR_NONE;
    n.gpu_base = (uint32_t)c->ngpus;
    n.state = DR_NODE_UP;
    n.gpus_idle = ngpus;
    n.max_milli = ngpus ? 1000 : 0;
    /* one spare element: gpu_free is never NULL, so &gpu_free[gpu_base] of a
     * node without GPUs is a valid (unread) pointer, not an offset of NULL */
    if (DR_PUSH(c->nodes, c->nnodes, c->nodes_cap, n) != 0 ||
        dr_grow((void **)&c->gpu_free, &c->gpu_cap, c->ngpus + ngpus + 1, sizeof *c->gpu_free) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    for (uint16_t g = 0; g < ngpus; g++)
        c->gpu_free[c->ngpus++] = 1000;
    /* the name is the strtab's copy (each string is its own allocation,
     * so it stays put when the table grows) */
    c->nodes[id].name = c->index->node_names.strs[id];
    return (int)id;
}

int dr_cluster_add_pool(dr_cluster_t *c, const dr_pool_t *p, dr_err_t *err)
{
    for (size_t i = 0; i < c->npools; i++)
        if (strcmp(c->pools[i].name, p->name) == 0)
            return dr_err_set(err, DR_EINVAL, "pool '%s' is defined twice", p->name);
    dr_pool_t q = *p;
    q.name = dr_strdup(p->name);
    if (!q.name || DR_PUSH(c->pools, c->npools, c->pools_cap, q) != 0) {
        free(q.name);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    return (int)c->npools - 1;
}

int dr_cluster_finalize(dr_cluster_t *c, dr_err_t *err)
{
    if (index_alloc(c) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    struct dr_cluster_index *ix = c->index;
    index_free_trees(ix);
    /* switch tree: no cycles; levels = height above the leaves */
    for (size_t s = 0; s < c->nswitches; s++) {
        size_t steps = 0;
        for (int32_t p = c->switches[s].parent; p != DR_NONE; p = c->switches[p].parent)
            if (++steps > c->nswitches)
                return dr_err_set(err, DR_EINVAL, "switch '%s': its parent chain has a cycle",
                                  c->switches[s].name);
    }
    for (size_t s = 0; s < c->nswitches; s++)
        c->switches[s].level = 0;
    for (size_t s = 0; s < c->nswitches; s++) {
        uint32_t lvl = 0;
        for (int32_t p = c->switches[s].parent; p != DR_NONE; p = c->switches[p].parent) {
            lvl++;
            if (c->switches[p].level < lvl)
                c->switches[p].level = lvl;
        }
    }
    for (size_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *n = &c->nodes[i];
        dr_node_shape_t sh = {n->ngpus ? n->type : -1, n->ngpus, n->cpu_milli, n->mem_mb, 1};
        size_t k = 0;
        while (k < ix->nshapes &&
               !(ix->shapes[k].type == sh.type && ix->shapes[k].ngpus == sh.ngpus &&
                 ix->shapes[k].cpu_milli == sh.cpu_milli && ix->shapes[k].mem_mb == sh.mem_mb))
            k++;
        if (k < ix->nshapes)
            ix->shapes[k].count++;
        else if (DR_PUSH(ix->shapes, ix->nshapes, ix->shapes_cap, sh) != 0)
            goto oom;
    }
    if (dr_ledger_index_build(c) != DR_OK)
        goto oom;
    ix->built = true;
    return DR_OK;
oom:
    index_free_trees(ix);
    return dr_err_set(err, DR_ENOMEM, "out of memory building the cluster index");
}

int dr_cluster_copy(dr_cluster_t *dst, const dr_cluster_t *src, dr_err_t *err)
{
    dr_cluster_init(dst);
    memcpy(dst->policy, src->policy, sizeof dst->policy);
    dst->fairshare_half_life = src->fairshare_half_life;
    dst->preempt_grace = src->preempt_grace;
    dst->preempt_grace_set = src->preempt_grace_set;
    dst->preempt_nockpt = src->preempt_nockpt;
    dst->preempt_nockpt_set = src->preempt_nockpt_set;
    dst->requeue_default = src->requeue_default;
    dst->fail_drain_n = src->fail_drain_n;
    dst->fail_drain_window = src->fail_drain_window;
    memcpy(dst->ckpt_dir, src->ckpt_dir, sizeof dst->ckpt_dir);
    dst->ckpt_keep = src->ckpt_keep;
    dst->site = src->site;
    for (size_t i = 0; i < src->ntypes; i++)
        if (dr_cluster_add_type(dst, &src->types[i], err) < 0)
            goto fail;
    if (index_alloc(dst) != 0)
        goto oom;
    if (!src->index && (src->nnodes || src->nswitches || src->nnvl)) {
        dr_err_set(err, DR_EINVAL, "cluster copy: source has nodes but no name index");
        goto fail;
    }
    if (src->index) {
        if (dr_strtab_copy(&dst->index->node_names, &src->index->node_names) != 0 ||
            dr_strtab_copy(&dst->index->switch_names, &src->index->switch_names) != 0 ||
            dr_strtab_copy(&dst->index->nvl_names, &src->index->nvl_names) != 0)
            goto oom;
    }
    dst->nnodes = dst->nodes_cap = src->nnodes;
    dst->nodes = malloc((src->nnodes ? src->nnodes : 1) * sizeof *dst->nodes);
    dst->ngpus = dst->gpu_cap = src->ngpus;
    dst->gpu_free = malloc((src->ngpus ? src->ngpus : 1) * sizeof *dst->gpu_free);
    dst->nswitches = dst->switches_cap = src->nswitches;
    dst->switches = malloc((src->nswitches ? src->nswitches : 1) * sizeof *dst->switches);
    dst->nnvl = dst->nvl_cap = src->nnvl;
    dst->nvl_domains = malloc((src->nnvl ? src->nnvl : 1) * sizeof *dst->nvl_domains);
    dst->npools = dst->pools_cap = src->npools;
    dst->pools = calloc(src->npools ? src->npools : 1, sizeof *dst->pools);
    if (!dst->nodes || !dst->gpu_free || !dst->switches || !dst->nvl_domains || !dst->pools)
        goto oom;
    /* memcpy from a NULL array is undefined even for 0 bytes */
    if (src->nnodes)
        memcpy(dst->nodes, src->nodes, src->nnodes * sizeof *dst->nodes);
    for (size_t i = 0; i < src->nnodes; i++)
        dst->nodes[i].name = dst->index->node_names.strs[i];
    if (src->ngpus)
        memcpy(dst->gpu_free, src->gpu_free, src->ngpus * sizeof *dst->gpu_free);
    if (src->nswitches)
        memcpy(dst->switches, src->switches, src->nswitches * sizeof *dst->switches);
    for (size_t i = 0; i < src->nswitches; i++)
        dst->switches[i].name = dst->index->switch_names.strs[i];
    for (size_t i = 0; i < src->nnvl; i++)
        dst->nvl_domains[i] = dst->index->nvl_names.strs[i];
    for (size_t i = 0; i < src->npools; i++) {
        dst->pools[i] = src->pools[i];
        dst->pools[i].name = dr_strdup(src->pools[i].name);
        if (!dst->pools[i].name)
            goto oom;
    }
    if (dr_cluster_shards_copy(dst, src) != DR_OK || dr_cluster_sets_copy(dst, src) != DR_OK)
        goto oom;
    if (src->naccounts) {
        dst->accounts = calloc(src->naccounts, sizeof *dst->accounts);
        if (!dst->accounts)
            goto oom;
        dst->naccounts = dst->accounts_cap = src->naccounts;
        for (size_t i = 0; i < src->naccounts; i++) {
            dst->accounts[i] = src->accounts[i];
            if (!(dst->accounts[i].name = dr_strdup(src->accounts[i].name)))
                goto oom;
        }
    }
    if (src->index && src->index->built) {
        int rc = dr_cluster_finalize(dst, err);
        if (rc == DR_OK && dst->index) /* round-robin continues where the source was */
            memcpy(dst->index->rr_pos, src->index->rr_pos, sizeof dst->index->rr_pos);
        return rc;
    }
    return DR_OK;
oom:
    dr_err_set(err, DR_ENOMEM, "out of memory copying the cluster");
fail:
    dr_cluster_free(dst);
    return err ? err->code : DR_ENOMEM;
}

int dr_cluster_find_account(const dr_cluster_t *c, const char *name)
{
    for (size_t i = 0; name && i < c->naccounts; i++)
        if (strcmp(c->accounts[i].name, name) == 0)
            return (int)i;
    return -1;
}

uint64_t dr_account_room(const dr_account_t *ac, size_t ntypes, const uint64_t *used,
                         uint64_t total, uint64_t need)
{
    if (ac->max_running_gpus != DR_ACCT_NO_LIMIT &&
        total + need > (uint64_t)ac->max_running_gpus * 1000)
        return 0;
    uint64_t m = 0;
    for (size_t t = 0; t < ntypes && t < 64; t++)
        if (ac->max_running_gpus_type[t] == DR_ACCT_NO_LIMIT ||
            used[t] + need <= (uint64_t)ac->max_running_gpus_type[t] * 1000)
            m |= 1ULL << t;
    return m;
}

dr_typemask_t dr_cluster_eligible_types(const dr_cluster_t *c, const dr_job_req_t *r)
{
    if (!r->types && r->min_gpu_mem_gb <= 0) /* the common case: any type */
        return c->ntypes >= 64 ? ~0ULL : (1ULL << c->ntypes) - 1;
    dr_typemask_t m = 0;
    for (size_t t = 0; t < c->ntypes; t++) {
        if (r->types && !(r->types & (1ULL << t)))
            continue;
        if (r->min_gpu_mem_gb > 0 &&
            !(c->types[t].mem_gb >= r->min_gpu_mem_gb)) /* NAN memory never qualifies */
            continue;
        m |= 1ULL << t;
    }
    return m;
}

/* What type t (t < 0: the whole cluster, for GPU-less requests) could hold
 * with every node UP and idle, counting node shapes (those of r's node set
 * when it has one), so whatever the nodes' state: nodes able to host the
 * per-node share, their GPUs, and the largest GPU count of a node that
 * meets the CPU and memory share. */
static void type_capacity(const dr_cluster_t *c, const dr_job_req_t *r, int t, uint64_t *nodes,
                          uint64_t *gpus, uint32_t *max_gpn)
{
    const struct dr_cluster_index *ix = c->index;
    const dr_node_shape_t *shapes = ix ? ix->shapes : NULL;
    size_t nshapes = ix ? ix->nshapes : 0;
    if (r->nodeset) {
        const dr_nodeset_t *set = dr_nodeset_get(c, r->nodeset);
        shapes = set ? set->shapes : NULL;
        nshapes = set ? set->nshapes : 0;
    }
    *nodes = *gpus = 0;
    for (size_t k = 0; k < nshapes; k++) {
        const dr_node_shape_t *sh = &shapes[k];
        if (t >= 0 && (sh->ngpus == 0 || sh->type != (int32_t)t))
            continue;
        if (sh->cpu_milli < r->cpu_milli_per_node || sh->mem_mb < r->mem_mb_per_node)
            continue;
        if (sh->ngpus > *max_gpn)
            *max_gpn = sh->ngpus;
        if (r->nodes > 0 && r->gpu_milli == 1000 && sh->ngpus < r->gpus_per_node)
            continue;
        *nodes += sh->count;
        *gpus += sh->count * sh->ngpus;
    }
}

static bool capacity_enough(const dr_job_req_t *r, uint64_t nodes, uint64_t gpus)
{
    return r->nodes == 0 ? gpus >= r->gpus_per_node : nodes >= r->nodes;
}

dr_typemask_t dr_cluster_hostable_types(const dr_cluster_t *c, const dr_job_req_t *r)
{
    dr_typemask_t elig = dr_cluster_eligible_types(c, r);
    if (!r->gpus_per_node)
        return elig;
    dr_typemask_t out = 0;
    for (size_t t = 0; t < c->ntypes && t < DR_MAX_GPU_TYPES; t++) {
        if (!(elig >> t & 1))
            continue;
        uint64_t nodes, gpus;
        uint32_t max_gpn = 0;
        type_capacity(c, r, (int)t, &nodes, &gpus, &max_gpn);
        if (capacity_enough(r, nodes, gpus))
            out |= (dr_typemask_t)1 << t;
    }
    return out;
}

int dr_cluster_req_possible(const dr_cluster_t *c, const dr_job_req_t *r, dr_err_t *err)
{
    if (dr_job_req_validate(r, err) != 0)
        return DR_EINVAL;
    dr_typemask_t elig = r->gpus_per_node ? dr_cluster_eligible_types(c, r) : ~0ULL;
    if (r->gpus_per_node && !elig) {
        if (r->min_gpu_mem_gb > 0)
            return dr_err_set(err, DR_ENOSPC,
                              "no GPU type of this cluster is allowed with >= %g GB",
                              r->min_gpu_mem_gb);
        return dr_err_set(err, DR_ENOSPC, "none of the allowed GPU types is in this cluster");
    }
    /* the type with the most room for it */
    uint64_t best_nodes = 0, best_gpus = 0;
    uint32_t max_gpn = 0;
    for (size_t t = 0; t < (r->gpus_per_node ? c->ntypes : 1); t++) {
        if (r->gpus_per_node && !(elig & (1ULL << t)))
            continue;
        uint64_t nodes, gpus;
        type_capacity(c, r, r->gpus_per_node ? (int)t : -1, &nodes, &gpus, &max_gpn);
        if (r->nodes == 0 ? gpus > best_gpus : nodes > best_nodes) {
            best_nodes = nodes;
            best_gpus = gpus;
        }
    }
    if (capacity_enough(r, best_nodes, best_gpus))
        return DR_OK;
    if (r->nodes == 0)
        return dr_err_set(err, DR_ENOSPC,
                          "needs %u GPUs of one type, the largest eligible type has %llu",
                          r->gpus_per_node, (unsigned long long)best_gpus);
    if (best_nodes == 0 && r->gpus_per_node > max_gpn && r->gpu_milli == 1000)
        return dr_err_set(err, DR_ENOSPC,
                          "needs %u GPUs per node, the largest eligible node has %u",
                          r->gpus_per_node, max_gpn);
    return dr_err_set(err, DR_ENOSPC,
                      "needs %u nodes with %u GPUs, %u milli-CPU and %llu MB each; the "
                      "cluster has %llu such nodes",
                      r->nodes, r->gpus_per_node, r->cpu_milli_per_node,
                      (unsigned long long)r->mem_mb_per_node, (unsigned long long)best_nodes);
}

const char *dr_node_state_name(dr_node_state_t s)
{
    switch (s) {
    case DR_NODE_UP: return "up";
    case DR_NODE_DOWN: return "down";
    case DR_NODE_DRAIN: return "drain";
    case DR_NODE_CLOUD: return "cloud";
    case DR_NODE_PROVISIONING: return "provisioning";
    }
    return "?";
}
