/* config_openb.c - the Alibaba openb node list (sn,cpu_milli,memory_mib,gpu,
 * model) read into a cluster: catalog GPU models get catalog specs, the
 * others (G2, G3) become declared types whose figures are unknown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config_priv.h"
#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/config.h"
#include "drover/text.h"
#include "drover/util.h"

enum { OB_SN, OB_CPU, OB_MEM, OB_GPU, OB_MODEL, OB_NCOLS };
static const char *const ob_cols[OB_NCOLS] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};

/* The cluster type for an openb model name, added on first use. */
static int ob_type(dr_cluster_t *c, const dr_catalog_t *cat, const char *model, dr_err_t *err)
{
    int t = dr_cluster_find_type(c, model);
    if (t >= 0)
        return t;
    const dr_gpu_spec_t *spec = dr_catalog_find(cat, model);
    if (spec)
        return dr_cluster_add_type(c, spec, err);
    dr_gpu_spec_t u;
    dr_gpu_spec_unknown(&u, model);
    u.source = (char *)"openb node list: a model outside the GPU catalog, figures unknown";
    return dr_cluster_add_type(c, &u, err); /* copies, so the literal is never freed */
}

int dr_openb_nodes_parse(dr_cluster_t *c, const dr_catalog_t *cat, const char *name,
                         const char *buf, size_t len, dr_err_t *err)
{
    if (!name)
        name = "openb nodes";
    dr_csv_t csv;
    dr_csv_open(&csv, buf, len);
    int col[OB_NCOLS], rc = dr_csv_header(&csv, name, err);
    size_t ncols = csv.nfields, base = c->nnodes, *lines = NULL, nlines = 0, caplines = 0;
    uint64_t ngpus = c->ngpus;
    if (rc < 0)
        goto out;
    for (int i = 0; i < OB_NCOLS; i++)
        if ((col[i] = dr_csv_col(&csv, ob_cols[i])) < 0) {
            rc = dr_err_set(err, DR_EINVAL, "%s:%zu: header: missing column '%s'", name, csv.line,
                            ob_cols[i]);
            goto out;
        }
    for (;;) {
        int nf = dr_csv_row(&csv, name, ncols, err);
        if (nf == 0)
            break;
        if (nf < 0) {
            rc = nf;
            goto out;
        }
        size_t ln = csv.line;
        char *sn = dr_trim(csv.fields[col[OB_SN]]);
        char *model = dr_trim(csv.fields[col[OB_MODEL]]);
        if (!*sn) {
            rc = dr_err_set(err, DR_EINVAL, "%s:%zu: sn: empty node name", name, ln);
            goto out;
        }
        int dup = dr_cluster_find_node(c, sn);
        if (dup >= 0) {
            size_t d = (size_t)dup;
            if (d >= base && d - base < nlines)
                rc = dr_err_set(err, DR_EINVAL,
                                "%s:%zu: sn: node '%.64s' is listed twice (first on line %zu)",
                                name, ln, sn, lines[d - base]);
            else
                rc = dr_err_set(err, DR_EINVAL, "%s:%zu: sn: node '%.64s' is already defined", name,
                                ln, sn);
            goto out;
        }
        /* the numbers: cpu_milli, memory_mib, gpu */
        static const uint64_t max[3] = {UINT32_MAX, (uint64_t)1 << 50, DR_MAX_GPUS_PER_NODE};
        uint64_t v[3];
        for (int i = 0; i < 3; i++) {
            char *f = dr_trim(csv.fields[col[OB_CPU + i]]);
            if (dr_parse_u64(f, &v[i]) != 0) {
                rc = dr_err_set(err, DR_EINVAL, "%s:%zu: %s: '%.64s' is not a whole number", name,
                                ln, ob_cols[OB_CPU + i], f);
                goto out;
            }
            if (v[i] > max[i]) {
                rc = dr_err_set(err, DR_EINVAL, "%s:%zu: %s: %s is too large (at most %llu)", name,
                                ln, ob_cols[OB_CPU + i], f, (unsigned long long)max[i]);
                goto out;
            }
        }
        uint64_t gpu = v[2];
        int type = 0;
        if (gpu > 0) {
            if (!*model) {
                rc = dr_err_set(err, DR_EINVAL, "%s:%zu: model: empty for a node with %llu GPUs",
                                name, ln, (unsigned long long)gpu);
                goto out;
            }
            if (strlen(model) >= DR_GPU_NAME_MAX) {
                rc = dr_err_set(err, DR_EINVAL,
                                "%s:%zu: model: '%.64s' is longer than %d characters", name, ln,
                                model, DR_GPU_NAME_MAX - 1);
                goto out;
            }
            if ((type = ob_type(c, cat, model, err)) < 0) {
                dr_err_prefix(err, "%s:%zu: model: ", name, ln);
                rc = type;
                goto out;
            }
        }
        if (c->nnodes >= DR_CONFIG_MAX_NODES || ngpus + gpu > DR_CONFIG_MAX_GPUS) {
            rc = dr_err_set(err, DR_ELIMIT, "%s:%zu: sn: more than %u nodes or %u GPUs", name, ln,
                            DR_CONFIG_MAX_NODES, DR_CONFIG_MAX_GPUS);
            goto out;
        }
        int id = dr_cluster_add_node(c, sn, type, (uint16_t)gpu, (uint32_t)v[0], v[1], err);
        if (id < 0) {
            dr_err_prefix(err, "%s:%zu: sn: ", name, ln);
            rc = id;
            goto out;
        }
        ngpus += gpu;
        if (DR_PUSH(lines, nlines, caplines, ln) != 0) {
            rc = dr_err_set(err, DR_ENOMEM, "%s: out of memory", name);
            goto out;
        }
    }
    if (c->nnodes == base)
        rc = dr_err_set(err, DR_EINVAL, "%s: no nodes", name);
    else if ((rc = dr_cluster_finalize(c, err)) != 0)
        dr_err_prefix(err, "%s: ", name);
out:
    free(lines);
    dr_csv_free(&csv);
    return rc;
}
