/* perf_hints.c - turns model hints (parameters, tokens, precision) into perf
 * classes the schedulers understand, using the analytic performance model.
 *
 * Why: a trace or a user may describe a training job by its model size and
 * token count instead of a measured throughput.  Converting such jobs once,
 * into ordinary perf-table rows in tokens per second per cluster GPU type,
 * lets the simulator and every policy run them without knowing the model
 * exists (one implementation: include/drover/perfmodel.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/perfmodel.h"
#include "drover/workload.h"

/* GPUs a request occupies (whole GPUs; a share counts as one). */
static uint32_t req_gpus(const dr_job_req_t *r)
{
    uint64_t g = r->nodes ? (uint64_t)r->nodes * r->gpus_per_node : r->gpus_per_node;
    return g > UINT32_MAX ? UINT32_MAX : (uint32_t)g;
}

int dr_perf_add_hint_classes(struct dr_workload *wl, const dr_cluster_t *c,
                             bool tokens_replace_duration, dr_err_t *err)
{
    if (!wl || !c)
        return dr_err_set(err, DR_EINVAL, "hint classes: no workload or cluster");
    dr_perf_table_t *p = &wl->perf;
    if (p->ntypes == 0) {
        if (p->nclasses > 1)
            return dr_err_set(err, DR_ESTATE,
                              "hint classes: the perf table has classes but no GPU columns");
        const char *names[DR_MAX_GPU_TYPES];
        for (size_t t = 0; t < c->ntypes && t < DR_MAX_GPU_TYPES; t++)
            names[t] = c->types[t].name;
        int rc = dr_perf_set_types(p, names, c->ntypes);
        if (rc)
            return dr_err_set(err, rc, "hint classes: cannot set the perf table's columns");
    }
    int map[DR_MAX_GPU_TYPES];
    int rc = dr_perf_bind(p, c, map, err);
    if (rc)
        return rc;
    /* for each column, the cluster type it describes, and that type's network */
    const size_t ncols = p->ntypes;
    int *col_type = malloc((ncols ? ncols : 1) * sizeof *col_type);
    double *rates = calloc(ncols ? ncols : 1, sizeof *rates);
    dr_perfmodel_net_t nets[DR_MAX_GPU_TYPES];
    bool have_net[DR_MAX_GPU_TYPES] = {false};
    if (!col_type || !rates) {
        free(col_type);
        free(rates);
        return dr_err_set(err, DR_ENOMEM, "hint classes: out of memory");
    }
    for (size_t k = 0; k < ncols; k++)
        col_type[k] = -1;
    for (size_t t = 0; t < c->ntypes && t < DR_MAX_GPU_TYPES; t++) {
        if (map[t] >= 0 && (size_t)map[t] < ncols && col_type[map[t]] < 0)
            col_type[map[t]] = (int)t;
        have_net[t] = dr_perfmodel_net_from_cluster(&nets[t], c, (unsigned)t, NULL) == DR_OK;
    }
    int converted = 0;
    for (size_t i = 0; i < wl->njobs; i++) {
        dr_job_t *j = &wl->jobs[i];
        if (!(j->hint_params > 0) || !isfinite(j->hint_params) || j->perf_class != 0)
            continue;
        bool has_work = wl->work[i] > 0;
        bool has_tokens = j->hint_tokens > 0 && isfinite(j->hint_tokens);
        if ((has_work && !(tokens_replace_duration && has_tokens)) || (!has_work && !has_tokens))
            continue;
        uint32_t gpus = req_gpus(&j->req);
        if (gpus == 0)
            continue;
        dr_precision_t prec = j->precision == DR_PREC_UNSET ? DR_PREC_BF16 : j->precision;
        double share = j->req.gpu_milli && j->req.gpu_milli < 1000 ? j->req.gpu_milli / 1000.0 : 1;
        char name[96];
        snprintf(name, sizeof name, "hint params=%.6g gpus=%u milli=%u %s", j->hint_params, gpus,
                 (unsigned)(share * 1000), dr_precision_name(prec));
        int cls = dr_perf_find_class(p, name);
        if (cls < 0) {
            for (size_t k = 0; k < ncols; k++) {
                int t = col_type[k];
                rates[k] = 0;
                if (t < 0 || !have_net[t])
                    continue;
                double r = 0;
                if (dr_perfmodel_hint_rate(j->hint_params, prec, gpus, &c->types[t], &nets[t], &r,
                                           NULL, NULL) == DR_OK &&
                    isfinite(r) && r > 0)
                    rates[k] = r * share; /* a fraction of one GPU: that share of its speed */
            }
            cls = dr_perf_add_class(p, name, rates);
            if (cls < 0) {
                free(col_type);
                free(rates);
                return dr_err_set(err, cls, "hint classes: cannot add class '%s'", name);
            }
        }
        j->perf_class = (uint32_t)cls;
        wl->work[i] = j->hint_tokens;
        j->work_done = 0;
        converted++;
    }
    free(col_type);
    free(rates);
    return converted;
}
