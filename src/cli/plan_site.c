/* plan_site.c - `drover plan --cluster FILE` and `--controller`: plan for
 * the hardware one has.  The GPU types of a cluster config (drover's own
 * or a slurm.conf, read as droverd reads it) or of a live controller's up
 * nodes (GET /v1/nodes) become the plan's types, each capped at the count
 * the cluster has (dr_plan_req_t.type_max) and planned on the cluster's
 * nodes of it rather than the type's reference system
 * (dr_plan_req_t.type_net): from a config, its GPUs per node, NVLink or
 * PCIe and switch links (dr_perfmodel_net_from_cluster); from a
 * controller, which reports GPUs per node but no links, the GPUs per node
 * alone.  With a controller, the top choice is then asked of it as a
 * test-only submit (POST /v1/jobs?test_only=1), so the plan also says when
 * it would start. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "drover/config.h"

/* Two site networks of one catalog type (two cluster types, or nodes of a
 * controller, that are the same GPU): the larger node, and the slower of
 * everything else, as dr_perfmodel_net_from_cluster takes one type's. */
static void net_merge(dr_plan_site_net_t *a, const dr_plan_site_net_t *b)
{
    if (a->from == DR_PLAN_NET_REFERENCE) {
        *a = *b;
        return;
    }
    if (b->from == DR_PLAN_NET_REFERENCE)
        return;
    if (b->net.node_gpus > a->net.node_gpus)
        a->net.node_gpus = b->net.node_gpus;
    if (b->host_gpus > a->host_gpus)
        a->host_gpus = b->host_gpus;
    if (a->from != DR_PLAN_NET_CLUSTER || b->from != DR_PLAN_NET_CLUSTER)
        return;
    a->net.intra_nvlink = a->net.intra_nvlink && b->net.intra_nvlink;
    if (b->net.intra_gbs < a->net.intra_gbs)
        a->net.intra_gbs = b->net.intra_gbs;
    if (b->net.inter_gbit < a->net.inter_gbit) {
        a->net.inter_gbit = b->net.inter_gbit;
        a->net.kind = b->net.kind;
    }
    a->nvlink_declared = a->nvlink_declared && b->nvlink_declared;
    a->links_declared = a->links_declared && b->links_declared;
}

/* Add n GPUs of the catalog type named `name` (a cluster's type name) on
 * nodes whose network is `net`. */
static int site_add(cli_site_t *s, const dr_catalog_t *cat, const char *name, uint64_t n,
                    const dr_plan_site_net_t *net)
{
    const dr_gpu_spec_t *g = dr_catalog_find(cat, name);
    if (!g) { /* a type declared by the site alone: the planner has no figures for it */
        fprintf(stderr, "drover: note: GPU type '%s' is not in the catalog; not planned\n", name);
        return DR_OK;
    }
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->name[i], g->name) == 0) {
            s->count[i] += n;
            net_merge(&s->net[i], net);
            return DR_OK;
        }
    if (s->n == DR_PLAN_MAX_TYPES)
        return DR_OK;
    snprintf(s->name[s->n], sizeof s->name[s->n], "%s", g->name);
    s->net[s->n] = *net;
    s->count[s->n++] = n;
    return DR_OK;
}

/* The network of cluster type t's nodes, as droverd reads the config:
 * dr_perfmodel_net_from_cluster, and whether the config said it or its
 * defaults did (no NvlinkDomain: PCIe only; no switch links: 100 Gbit/s
 * Ethernet), so that the plan can say which. */
static void file_net(const dr_cluster_t *c, unsigned t, dr_plan_site_net_t *out)
{
    memset(out, 0, sizeof *out);
    if (dr_perfmodel_net_from_cluster(&out->net, c, t, NULL) != DR_OK)
        return; /* no nodes of it (a pool's, say): its reference system */
    out->from = DR_PLAN_NET_CLUSTER;
    for (size_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *nd = &c->nodes[i];
        if (nd->type != t || nd->ngpus == 0)
            continue;
        if (nd->ngpus > out->host_gpus)
            out->host_gpus = nd->ngpus;
        out->nvlink_declared |= nd->nvl_domain != DR_NONE;
        int depth = 0;
        for (int32_t sw = nd->switch_id; sw != DR_NONE && (size_t)sw < c->nswitches && depth++ < 64;
             sw = c->switches[sw].parent)
            out->links_declared |= c->switches[sw].link_gbs > 0;
    }
}

int cli_site_from_file(cli_site_t *s, const dr_catalog_t *cat, const char *path, dr_err_t *err)
{
    memset(s, 0, sizeof *s);
    snprintf(s->what, sizeof s->what, "%s", path);
    dr_cluster_t c;
    int rc = cli_load_cluster(&c, cat, path, err);
    if (rc != DR_OK)
        return rc;
    for (size_t t = 0; t < c.ntypes; t++) {
        uint64_t n = dr_cluster_total_gpus(&c, (int)t);
        dr_plan_site_net_t net;
        file_net(&c, (unsigned)t, &net);
        if (n)
            site_add(s, cat, c.types[t].name, n, &net);
    }
    dr_cluster_free(&c);
    if (s->n == 0)
        return dr_err_set(err, DR_EINVAL, "--cluster %s: no GPUs of a catalog type on its nodes",
                          path);
    return DR_OK;
}

int cli_site_from_controller(cli_site_t *s, const dr_catalog_t *cat, dr_err_t *err)
{
    memset(s, 0, sizeof *s);
    s->live = true;
    cli_client_t c;
    int rc = cli_client_init(&c, cli_server_arg, err);
    if (rc != DR_OK) {
        cli_client_free(&c);
        return rc;
    }
    json_t *reply = NULL;
    rc = cli_client_json(&c, "GET", "/v1/nodes", NULL, &reply, err);
    cli_client_free(&c);
    if (rc != DR_OK) {
        json_decref(reply);
        return rc;
    }
    snprintf(s->what, sizeof s->what, "the controller");
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(reply, "nodes"), i, n)
    {
        const char *st = json_string_value(json_object_get(n, "state"));
        const char *type = json_string_value(json_object_get(n, "gpu_type"));
        json_int_t g = json_integer_value(json_object_get(n, "gpus"));
        if (!st || strcmp(st, "up") != 0 || !type || !*type || g <= 0) /* only what can run now */
            continue;
        /* GPUs per node is all the controller reports of its nodes' shape:
         * the link and the network between nodes stay the type's reference
         * system's.  A node smaller than a rack-scale reference domain
         * (GB200 NVL72, a TPU pod) is one tray of it: the domain stays. */
        const dr_gpu_spec_t *spec = dr_catalog_find(cat, type);
        uint32_t per = g > UINT16_MAX ? UINT16_MAX : (uint32_t)g;
        uint32_t ref = spec ? dr_perfmodel_node_gpus(spec) : 8;
        dr_plan_site_net_t net = {.from = DR_PLAN_NET_NODE_GPUS, .host_gpus = per};
        net.net.node_gpus = ref > 8 && per < ref ? ref : per;
        site_add(s, cat, type, (uint64_t)g, &net);
    }
    json_decref(reply);
    if (s->n == 0)
        return dr_err_set(err, DR_EINVAL,
                          "--controller: no node that is up has GPUs of a catalog type");
    return DR_OK;
}

int cli_site_apply(const cli_site_t *s, dr_plan_req_t *r, const dr_catalog_t *cat, dr_err_t *err)
{
    /* with --types too: those of them the cluster has */
    const char *want[DR_PLAN_MAX_TYPES];
    size_t nwant = r->ntypes;
    memcpy(want, r->types, nwant * sizeof *want);
    r->ntypes = 0;
    for (size_t i = 0; i < s->n; i++) {
        const dr_gpu_spec_t *g = dr_catalog_find(cat, s->name[i]);
        bool wanted = nwant == 0;
        for (size_t k = 0; k < nwant && !wanted; k++)
            wanted = dr_catalog_find(cat, want[k]) == g;
        if (!wanted)
            continue;
        r->types[r->ntypes] = s->name[i];
        r->type_net[r->ntypes] = s->net[i];
        r->type_max[r->ntypes++] = s->count[i] > UINT32_MAX ? UINT32_MAX : (uint32_t)s->count[i];
    }
    if (r->ntypes == 0)
        return dr_err_set(err, DR_EINVAL, "--types: %s has none of these GPU types (it has %s%s%s)",
                          s->what, s->n ? s->name[0] : "none", s->n > 1 ? ", " : "",
                          s->n > 1 ? s->name[1] : "");
    return DR_OK;
}

/* The option the plan recommends: the first that fits (and meets the
 * targets, if any does). */
static const dr_plan_option_t *top_choice(const dr_plan_result_t *res)
{
    for (size_t i = 0; i < res->n; i++)
        if (res->opts[i].fits && res->opts[i].meets)
            return &res->opts[i];
    for (size_t i = 0; i < res->n; i++)
        if (res->opts[i].fits)
            return &res->opts[i];
    return NULL;
}

int cli_site_estimate(const dr_plan_result_t *res, json_t **reply, char *what, size_t wn,
                      dr_err_t *err)
{
    *reply = NULL;
    const dr_plan_option_t *o = top_choice(res);
    if (!o || o->gpus == 0)
        return dr_err_set(err, DR_EINVAL, "no option fits: nothing to ask the controller");
    /* a job of that many GPUs of that type, its limit the plan's wall time
     * (a service runs until stopped: no limit) */
    /* test_only in the body too: a controller that ignored the query would
     * refuse the field rather than run the job */
    json_t *body = json_pack("{s:[s],s:I,s:s,s:b}", "argv", "true", "gpus", (json_int_t)o->gpus,
                             "gpu_type", o->gpu, "test_only", 1);
    if (body && res->kind != DR_PLAN_SERVE && isfinite(o->wall_s) && o->wall_s > 0)
        json_object_set_new(body, "time_limit", json_integer((json_int_t)ceil(o->wall_s)));
    if (!body)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    snprintf(what, wn, "%u x %s", o->gpus, o->gpu);
    cli_client_t c;
    int rc = cli_client_init(&c, cli_server_arg, err);
    if (rc == DR_OK)
        rc = cli_client_json(&c, "POST", "/v1/jobs?test_only=1", body, reply, err);
    cli_client_free(&c);
    json_decref(body);
    if (rc == DR_OK && !json_is_true(json_object_get(*reply, "test_only")))
        rc = dr_err_set(err, DR_EINVAL, "the controller did not answer as a test-only submit");
    if (rc != DR_OK) {
        json_decref(*reply);
        *reply = NULL;
    }
    return rc;
}
