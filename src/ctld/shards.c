/* shards.c - data locality in the controller.
 *
 * Agents report the shards their cache directories hold (REGISTER: the
 * whole set; HEARTBEAT: the new set when it changed); the cluster's shard
 * holdings (dr_cluster_node_add_shard / _drop_shard) follow, and placement
 * reads them at once.  A job or array task naming a shard gets req.shard
 * bound to the cluster's id of that name, interned even when no node holds
 * it yet: the binding never goes stale, so a shard that becomes held later
 * (a task copied it into a cache) draws the next task to it without any
 * re-binding of pending jobs.  While no node holds it, placement spreads
 * such tasks round-robin. */
#include <stdlib.h>
#include <string.h>

#include "ctld/ctld.h"
#include "ctld/shards.h"
#include "ctld/turn.h"
#include "drover/util.h"

void ctld_node_shards(dr_ctld_t *c, uint32_t node, char *const *names, uint32_t n)
{
    if (node >= c->cl.nnodes)
        return;
    dr_err_t err = {0};
    uint32_t *ids = n ? malloc(n * sizeof *ids) : NULL;
    uint32_t nid = 0;
    if (n && !ids) {
        ctld_log("node %s: out of memory taking its %u shards", c->cl.nodes[node].name, n);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        int id = dr_cluster_shard(&c->cl, names[i], &err);
        if (id < 0) {
            ctld_log("node %s: shard '%.64s': %s", c->cl.nodes[node].name, names[i], err.msg);
            continue;
        }
        ids[nid++] = (uint32_t)id;
    }
    /* which shards the node holds from now: one bit each */
    size_t nsh = c->cl.nshards;
    uint8_t *keep = calloc(nsh / 8 + 1, 1);
    if (!keep) {
        free(ids);
        ctld_log("node %s: out of memory taking its shards", c->cl.nodes[node].name);
        return;
    }
    uint32_t added = 0, dropped = 0;
    for (uint32_t i = 0; i < nid; i++) {
        keep[ids[i] / 8] |= (uint8_t)(1u << (ids[i] % 8));
        if (dr_node_has_shard(&c->cl, node, ids[i]))
            continue;
        if (dr_cluster_node_add_shard(&c->cl, node, ids[i], &err) != DR_OK)
            ctld_log("node %s: %s", c->cl.nodes[node].name, err.msg);
        else
            added++;
    }
    /* the rest it no longer holds (one look at every shard: reports come
     * only when a cache changed) */
    for (uint32_t s = 0; s < nsh; s++)
        if (!(keep[s / 8] >> (s % 8) & 1) && dr_node_has_shard(&c->cl, node, s)) {
            dr_cluster_node_drop_shard(&c->cl, node, s);
            dropped++;
        }
    free(keep);
    free(ids);
    if (added || dropped) {
        ctld_log("node %s: holds %u shards (+%u, -%u)", c->cl.nodes[node].name, nid, added,
                 dropped);
        ctld_want_pass(c); /* a pending task may now have a better place */
    }
}

void ctld_shard_bind(dr_ctld_t *c, ctld_job_t *cj)
{
    dr_job_t *j = &cj->j;
    j->req.shard = 0;
    char *name = dr_jobspec_shard_for(ctld_job_spec(cj), j->array_parent ? j->array_index : 0);
    if (!name)
        return;
    dr_err_t err = {0};
    int id = dr_cluster_shard(&c->cl, name, &err);
    if (id < 0) {
        ctld_log("job %llu: shard '%.64s': %s; placed as if no node held it",
                 (unsigned long long)j->id, name, err.msg);
        j->req.shard = DR_SHARD_UNHELD;
    } else {
        j->req.shard = (uint32_t)id + 1;
    }
    free(name);
}

const char *ctld_job_shard(const dr_ctld_t *c, const ctld_job_t *cj)
{
    uint32_t s = cj->j.req.shard;
    if (s && s != DR_SHARD_UNHELD && s - 1 < c->cl.nshards)
        return c->cl.shards[s - 1].name;
    return NULL;
}

void ctld_shard_env(dr_ctld_t *c, const ctld_job_t *cj, dr_strvec_t *env)
{
    char *name = NULL;
    const char *bound = ctld_job_shard(c, cj);
    if (!bound) /* not interned (DR_SHARD_UNHELD): the name all the same */
        bound = name =
            dr_jobspec_shard_for(ctld_job_spec(cj), cj->j.array_parent ? cj->j.array_index : 0);
    if (bound) {
        size_t n = strlen(bound) + sizeof "DROVER_SHARD=";
        char *kv = malloc(n);
        if (kv) {
            memcpy(kv, "DROVER_SHARD=", sizeof "DROVER_SHARD=" - 1);
            memcpy(kv + sizeof "DROVER_SHARD=" - 1, bound, strlen(bound) + 1);
        }
        dr_strvec_push_owned(env, kv);
    }
    free(name);
}
