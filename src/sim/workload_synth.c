/* workload_synth.c - synthetic workloads for benchmarks and tests.
 *
 * Shapes follow the mix seen in shared training clusters (Philly, Helios):
 * most jobs take one GPU, a tail takes whole nodes or gangs of nodes.  Run
 * times are log-uniform, so short and long jobs are both common.  Arrivals
 * are Poisson with the rate that makes the offered load what was asked,
 * which is what decides how long the queue gets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/util.h"
#include "drover/workload.h"

void dr_synth_opts_default(dr_synth_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->njobs = 10000;
    o->load = 0.9;
    o->cluster_gpus = 1024;
    o->min_runtime_s = 60;
    o->max_runtime_s = 24 * 3600;
    o->walltime_factor = 2;
    o->frac_restricted = 0.3;
    o->frac_share = 0.0;
    o->max_gpus_per_node = 8;
}

int dr_workload_synth(dr_workload_t *wl, const dr_synth_opts_t *o, dr_err_t *err)
{
    if (o->njobs == 0 || o->load <= 0 || o->cluster_gpus == 0 || o->min_runtime_s <= 0 ||
        o->max_runtime_s < o->min_runtime_s || o->walltime_factor < 1 || o->max_gpus_per_node == 0)
        return dr_err_set(err, DR_EINVAL,
                          "synthetic workload: need njobs > 0, load > 0, cluster_gpus > 0, "
                          "0 < min_runtime <= max_runtime, walltime_factor >= 1");
    dr_rng_t rng;
    dr_rng_seed(&rng, o->seed);
    uint32_t w = o->max_gpus_per_node;
    /* shape mix: {nodes, gpus per node, cumulative probability} */
    const struct {
        uint32_t nodes, gpn;
        double p;
    } mix[] = {{1, 1, 0.60}, {1, 2, 0.70}, {1, 4, 0.82}, {1, w, 0.94}, {2, w, 0.98}, {4, w, 1.00}};
    double lmin = log(o->min_runtime_s), lmax = log(o->max_runtime_s);
    double demand = 0;
    size_t first = wl->njobs;
    char ts[64];
    if (dr_workload_reserve(wl, o->njobs) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory for %zu jobs", o->njobs);
    for (size_t i = 0; i < o->njobs; i++) {
        dr_job_t j;
        dr_job_init(&j);
        j.id = (uint64_t)(first + i + 1);
        double u = dr_rng_uniform(&rng);
        size_t k = 0;
        while (k + 1 < sizeof mix / sizeof *mix && u > mix[k].p)
            k++;
        j.req.nodes = mix[k].nodes;
        j.req.gpus_per_node = mix[k].gpn < w ? mix[k].gpn : w;
        if (j.req.gpus_per_node == 1 && j.req.nodes == 1 && dr_rng_uniform(&rng) < o->frac_share)
            j.req.gpu_milli = (uint32_t)(100 * (1 + dr_rng_below(&rng, 9)));
        double rt = exp(lmin + (lmax - lmin) * dr_rng_uniform(&rng));
        j.time_limit = dr_time_from_s(rt * (1 + (o->walltime_factor - 1) * dr_rng_uniform(&rng)));
        j.kind = j.req.nodes > 1 ? DR_KIND_TRAIN : DR_KIND_BATCH;
        demand += rt * j.req.nodes * j.req.gpus_per_node * j.req.gpu_milli / 1000.0;
        const char *typeset = NULL;
        if (o->ntypes && dr_rng_uniform(&rng) < o->frac_restricted) {
            snprintf(ts, sizeof ts, "%s", o->type_names[dr_rng_below(&rng, o->ntypes)]);
            typeset = ts;
        }
        if (dr_workload_add(wl, &j, rt, typeset) != 0)
            return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    /* Poisson arrivals over the span that yields the requested load */
    double span = demand / (o->load * (double)o->cluster_gpus);
    double rate = (double)o->njobs / span, t = 0;
    for (size_t i = first; i < wl->njobs; i++) {
        wl->jobs[i].submit = dr_time_from_s(t);
        t += dr_rng_exp(&rng, rate);
    }
    return dr_workload_finish(wl, err);
}
