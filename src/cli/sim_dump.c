/* sim_dump.c - `drover sim --dump-jobs FILE`: the generated or read jobs as
 * CSV, with both what was declared and what is true, so that a peer
 * simulator (Gavel's, for one) can replay bit for bit the same work.
 *
 * Columns: id, submit_s, kind, nodes (0 = --gpus style), gpus (per node, or
 * in all when nodes is 0), gpu_milli, perf_class (its name: Gavel's job type
 * and scale factor for Gavel workloads), true_work and declared_work (in the
 * class's work units: steps, or seconds for class 0; declared 0 = none),
 * time_limit_s and deadline_s (0 = none), then the job's rate on each GPU
 * type of the cluster (work units per second; 0 = cannot run there). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "drover/perf.h"
#include "drover/workload.h"

static void csv_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int cli_dump_jobs(const char *path, const struct dr_workload *wl, const dr_cluster_t *c,
                  dr_err_t *err)
{
    dr_perf_view_t pv = {.table = &wl->perf};
    if (dr_perf_bind(&wl->perf, c, pv.map, err) != DR_OK)
        return err->code;
    FILE *f = fopen(path, "w");
    if (!f)
        return dr_err_set(err, DR_EIO, "--dump-jobs: cannot write '%s': %s", path, strerror(errno));
    fprintf(f, "id,submit_s,kind,nodes,gpus,gpu_milli,perf_class,true_work,declared_work,"
               "time_limit_s,deadline_s");
    for (size_t t = 0; t < c->ntypes; t++)
        fprintf(f, ",rate_%s", c->types[t].name);
    fputc('\n', f);
    for (size_t i = 0; i < wl->njobs; i++) {
        const dr_job_t *j = &wl->jobs[i];
        const char *cls = j->perf_class < wl->perf.nclasses && wl->perf.class_names
                              ? wl->perf.class_names[j->perf_class]
                              : NULL;
        fprintf(f, "%" PRIu64 ",%.9g,%s,%u,%u,%u,", j->id, dr_time_to_s(j->submit),
                dr_job_kind_name((dr_job_kind_t)j->kind), j->req.nodes, j->req.gpus_per_node,
                j->req.gpu_milli);
        csv_str(f, cls ? cls : "uniform");
        fprintf(f, ",%.17g,%.17g,%.9g,%.9g", wl->work[i], j->work_declared,
                dr_time_to_s(j->time_limit), j->deadline ? dr_time_to_s(j->deadline) : 0.0);
        for (size_t t = 0; t < c->ntypes; t++)
            fprintf(f, ",%.9g", dr_perf_rate(&pv, j, (unsigned)t));
        fputc('\n', f);
    }
    if (fclose(f) != 0)
        return dr_err_set(err, DR_EIO, "--dump-jobs: writing '%s' failed", path);
    return DR_OK;
}
