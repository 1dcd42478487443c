/* workload_gavel.c - Gavel's workload generator, reproduced draw for draw.
 *
 * Gavel's published results (OSDI 2020) come from jobs drawn by its
 * simulator with Python's random.Random.  drover replays CPython's Mersenne
 * Twister exactly (core/pyrandom.c) and follows Gavel's sampling code
 * (scheduler/utils.py generate_job, scheduler.py simulate) call for call, so
 * `--seed N` gives the very jobs Gavel's authors measured with seed N, and a
 * comparison with their numbers is about scheduling alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drover/pyrandom.h"
#include "drover/util.h"
#include "drover/workload.h"

/* scheduler/job_table.py, in order: rng.choice() indexes this list */
static const struct {
    const char *model;
    bool distributed;
} job_table[] = {
    {"ResNet-18 (batch size 16)", true},
    {"ResNet-18 (batch size 32)", true},
    {"ResNet-18 (batch size 64)", true},
    {"ResNet-18 (batch size 128)", true},
    {"ResNet-18 (batch size 256)", true},
    {"ResNet-50 (batch size 16)", true},
    {"ResNet-50 (batch size 32)", true},
    {"ResNet-50 (batch size 64)", true},
    {"ResNet-50 (batch size 128)", true},
    {"Transformer (batch size 16)", true},
    {"Transformer (batch size 32)", true},
    {"Transformer (batch size 64)", true},
    {"Transformer (batch size 128)", true},
    {"Transformer (batch size 256)", true},
    {"LM (batch size 5)", true},
    {"LM (batch size 10)", true},
    {"LM (batch size 20)", true},
    {"LM (batch size 40)", true},
    {"LM (batch size 80)", true},
    {"Recommendation (batch size 512)", false},
    {"Recommendation (batch size 1024)", false},
    {"Recommendation (batch size 2048)", false},
    {"Recommendation (batch size 4096)", false},
    {"Recommendation (batch size 8192)", false},
    {"A3C", false},
    {"CycleGAN", false},
};
#define NTABLE (sizeof job_table / sizeof *job_table)

/* utils.generate_job with always_generate_scale_factor (the default):
 * scale factor, then duration, then template - each from the job rng. */
static int gen_job(dr_workload_t *wl, dr_pyrand_t *r, bool multi, int refcol, uint64_t id,
                   double arrival, uint32_t *scale_out, dr_err_t *err)
{
    double u = dr_pyrand_uniform(r, 0, 1);
    uint32_t scale = 1;
    if (0.7 <= u && u <= 0.8)
        scale = 2;
    else if (0.8 <= u && u <= 0.95)
        scale = 4;
    else if (0.95 <= u)
        scale = 8;
    double run_time;
    if (dr_pyrand_random(r) >= 0.8)
        run_time = 60 * pow(10, dr_pyrand_uniform(r, 3, 4));
    else
        run_time = 60 * pow(10, dr_pyrand_uniform(r, 1.5, 3));
    if (!multi)
        scale = 1;
    size_t t;
    do
        t = dr_pyrand_below(r, (uint32_t)NTABLE);
    while (!(scale == 1 || job_table[t].distributed));
    char cname[128];
    snprintf(cname, sizeof cname, "%s x%u", job_table[t].model, scale);
    int k = dr_perf_find_class(&wl->perf, cname);
    if (k < 0)
        return dr_err_set(err, DR_EINVAL, "gavel workload: no throughput for '%s'", cname);
    double ref = wl->perf.rate[(size_t)k * wl->perf.ntypes + (size_t)refcol];
    dr_job_t j;
    dr_job_init(&j);
    j.id = id;
    j.kind = DR_KIND_TRAIN;
    j.submit = dr_time_from_s(arrival);
    j.req.nodes = 0; /* --gpus=scale: Gavel's workers may hold one GPU each */
    j.req.gpus_per_node = scale;
    j.perf_class = (uint32_t)k;
    *scale_out = scale;
    return dr_workload_add(wl, &j, run_time * ref /* steps */, NULL) == DR_OK
               ? DR_OK
               : dr_err_set(err, DR_ENOMEM, "out of memory");
}

int dr_workload_gavel(dr_workload_t *wl, const dr_gavel_gen_opts_t *o, dr_err_t *err)
{
    if (o->jobs_per_hr <= 0 || o->njobs == 0)
        return dr_err_set(err, DR_EINVAL, "gavel workload: need a rate > 0 and jobs > 0");
    if (wl->perf.nclasses > 1 || wl->perf.ntypes > 0)
        return dr_err_set(err, DR_ESTATE, "gavel workload: the workload already has a perf table");
    dr_perf_free(&wl->perf);
    int rc = o->throughputs ? (dr_perf_copy(&wl->perf, o->throughputs) == 0
                                   ? DR_OK
                                   : dr_err_set(err, DR_ENOMEM, "out of memory"))
                            : dr_gavel_throughputs_builtin(&wl->perf, err);
    if (rc != DR_OK)
        return rc;
    int refcol = -1;
    for (size_t i = 0; i < wl->perf.ntypes; i++)
        if (dr_streq_ci(wl->perf.type_names[i], "v100"))
            refcol = (int)i;
    if (refcol < 0)
        return dr_err_set(err, DR_EINVAL,
                          "gavel workload: the throughput table has no v100 column");
    if (dr_workload_reserve(wl, o->njobs) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    dr_pyrand_t job_rng, arrival_rng;
    dr_pyrand_seed(&job_rng, o->seed + 2); /* Scheduler._initialize_seeds */
    dr_pyrand_seed(&arrival_rng, o->seed + 3);
    uint64_t id = 1;
    uint32_t scale = 1;
    if (o->steady_state) {
        /* worker types in sorted order: k80, p100, v100 */
        for (int w = 0; w < 3 && rc == DR_OK; w++)
            for (int64_t left = o->steady_gpus[w]; left > 0 && rc == DR_OK && id <= o->njobs;
                 left -= scale)
                rc = gen_job(wl, &job_rng, o->multi_gpu, refcol, id++, 0.0, &scale, err);
    }
    /* simulate(): next arrival starts at 0; delta = -log(1 - U) / (1 / lam) */
    double lam = 3600.0 / o->jobs_per_hr, rate_parameter = 1.0 / lam, t = 0;
    while (rc == DR_OK && id <= o->njobs) {
        rc = gen_job(wl, &job_rng, o->multi_gpu, refcol, id++, t, &scale, err);
        t += -log(1.0 - dr_pyrand_random(&arrival_rng)) / rate_parameter;
    }
    return rc == DR_OK ? dr_workload_finish(wl, err) : rc;
}

void dr_gavel_steady_gpus(const dr_cluster_t *c, uint32_t steady_gpus[3])
{
    static const char *const worker[3] = {"k80", "p100", "v100"};
    for (int w = 0; w < 3; w++) {
        steady_gpus[w] = 0;
        for (size_t t = 0; t < c->ntypes; t++)
            if (strncasecmp(c->types[t].name, worker[w], strlen(worker[w])) == 0)
                steady_gpus[w] += (uint32_t)dr_cluster_total_gpus(c, (int)t);
    }
}
