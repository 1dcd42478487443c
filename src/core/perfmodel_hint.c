/* perfmodel_hint.c - turns a job's model hints (parameters, precision, GPU
 * count) into a perf class the schedulers understand, using the analytic
 * performance model.
 *
 * Why: a trace or a user may describe a training job by its model size and
 * token count instead of a measured throughput.  Converting such a job into
 * an ordinary perf-table row in tokens per second per cluster GPU type lets
 * the simulator, the controller and every policy run it without knowing
 * the model exists (one implementation: include/drover/perfmodel.h).  The
 * simulator converts a whole workload (dr_perf_add_hint_classes, src/sim);
 * the controller converts each job as it is submitted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "drover/perf.h"
#include "drover/perfmodel.h"

/* GPUs a request occupies (whole GPUs; a share counts as one). */
static uint32_t req_gpus(const dr_job_req_t *r)
{
    uint64_t g = r->nodes ? (uint64_t)r->nodes * r->gpus_per_node : r->gpus_per_node;
    return g > UINT32_MAX ? UINT32_MAX : (uint32_t)g;
}

int dr_perf_hint_columns(dr_perf_table_t *p, const dr_cluster_t *c, dr_err_t *err)
{
    if (p->ntypes > 0)
        return DR_OK;
    if (p->nclasses > 1)
        return dr_err_set(err, DR_ESTATE,
                          "hint classes: the perf table has classes but no GPU columns");
    const char *names[DR_MAX_GPU_TYPES];
    for (size_t t = 0; t < c->ntypes && t < DR_MAX_GPU_TYPES; t++)
        names[t] = c->types[t].name;
    int rc = dr_perf_set_types(p, names, c->ntypes);
    if (rc)
        return dr_err_set(err, rc, "hint classes: cannot set the perf table's columns");
    return DR_OK;
}

/* The rates of a new class: the model's throughput on each column's type. */
static int hint_rates(const dr_perf_table_t *p, const dr_cluster_t *c, double params,
                      dr_precision_t prec, uint32_t gpus, double share, double *rates,
                      dr_err_t *err)
{
    int map[DR_MAX_GPU_TYPES];
    int rc = dr_perf_bind(p, c, map, err);
    if (rc)
        return rc;
    for (size_t k = 0; k < p->ntypes; k++)
        rates[k] = 0;
    /* each column is described by the first cluster type bound to it */
    for (size_t t = 0; t < c->ntypes && t < DR_MAX_GPU_TYPES; t++) {
        int k = map[t];
        if (k < 0 || (size_t)k >= p->ntypes)
            continue;
        bool first = true;
        for (size_t u = 0; u < t && first; u++)
            first = map[u] != k;
        dr_perfmodel_net_t net;
        if (!first || dr_perfmodel_net_from_cluster(&net, c, (unsigned)t, NULL) != DR_OK)
            continue;
        double r = 0;
        if (dr_perfmodel_hint_rate(params, prec, gpus, &c->types[t], &net, &r, NULL, NULL) ==
                DR_OK &&
            isfinite(r) && r > 0)
            rates[k] = r * share; /* a fraction of one GPU: that share of its speed */
    }
    return DR_OK;
}

int dr_perf_hint_class(dr_perf_table_t *p, const dr_cluster_t *c, const dr_job_t *j,
                       uint32_t *klass, dr_err_t *err)
{
    if (!p || !c || !j)
        return dr_err_set(err, DR_EINVAL, "hint classes: no table, cluster or job");
    uint32_t gpus = req_gpus(&j->req);
    if (!(j->hint_params > 0) || !isfinite(j->hint_params) || gpus == 0)
        return dr_err_set(err, DR_EINVAL, "job %llu: no model hints to run by (params %g, %u GPUs)",
                          (unsigned long long)j->id, j->hint_params, gpus);
    int rc = dr_perf_hint_columns(p, c, err);
    if (rc)
        return rc;
    dr_precision_t prec = j->precision == DR_PREC_UNSET ? DR_PREC_BF16 : j->precision;
    double share = j->req.gpu_milli && j->req.gpu_milli < 1000 ? j->req.gpu_milli / 1000.0 : 1;
    char name[96];
    snprintf(name, sizeof name, "hint params=%.6g gpus=%u milli=%u %s", j->hint_params, gpus,
             (unsigned)(share * 1000), dr_precision_name(prec));
    int cls = dr_perf_find_class(p, name);
    if (cls < 0) {
        double *rates = calloc(p->ntypes ? p->ntypes : 1, sizeof *rates);
        if (!rates)
            return dr_err_set(err, DR_ENOMEM, "hint classes: out of memory");
        rc = hint_rates(p, c, j->hint_params, prec, gpus, share, rates, err);
        cls = rc ? rc : dr_perf_add_class(p, name, rates);
        free(rates);
        if (rc)
            return rc;
        if (cls < 0)
            return dr_err_set(err, cls, "hint classes: cannot add class '%s'", name);
    }
    *klass = (uint32_t)cls;
    return DR_OK;
}
