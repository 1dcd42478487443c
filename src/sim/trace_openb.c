/* trace_openb.c - Alibaba openb pod lists (cluster-trace-gpu-v2023):
 * name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,pod_phase,
 * creation_time,deletion_time,scheduled_time].
 *
 * Header required; columns by name (cpu_milli, memory_mib, num_gpu and
 * gpu_milli required; the multigpu* variants have only those and name).
 * Each pod is one batch job on one node: gpus_per_node = num_gpu, per-GPU
 * gpu_milli clamped to 0..1000 (and 1000 when a GPU pod says 0), CPU and
 * memory per node as given; num_gpu 0 is a CPU-only job.  gpu_spec ('|'-
 * separated models; empty or "nan" = any) is the job's type set.  Ids follow
 * the row order, which in these files is also the name order.
 *
 * Time rule (checked against every variant: no empty deletion_time where
 * the column exists; scheduled_time is empty exactly for Pending pods, 0 for
 * the one pod created at 0):
 *  - submit = creation_time (seconds; shifted so the first pod arrives at 0);
 *  - runtime = deletion_time - start, start = scheduled_time, or creation_time
 *    when scheduled_time is empty or 0.  A Pending pod thus asks for its
 *    resources from creation until it was deleted; a Running pod is cut at
 *    the snapshot's end (its deletion_time); Failed and Succeeded pods ran
 *    until deleted.  pod_phase and qos are not used.
 *  - no creation_time column/value: submit 0; no deletion_time column or an
 *    empty value: the pod never leaves (true work = INFINITY, no walltime
 *    limit), as in the FGD packing benchmark, where pods never depart.
 *  - deletion before start is an error.
 * true work = runtime (class 0: seconds on any GPU).  Limits and declared
 * sizes are set afterwards by dr_workload_declare (estimate.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drover/util.h"
#include "drover/workload.h"
#include "sim/trace_priv.h"

enum { C_CPU, C_MEM, C_NGPU, C_MILLI, C_SPEC, C_CREATE, C_DELETE, C_SCHED, C_N };
static const char *const col_names[C_N] = {"cpu_milli",     "memory_mib",    "num_gpu",
                                           "gpu_milli",     "gpu_spec",      "creation_time",
                                           "deletion_time", "scheduled_time"};

static const char *field(const dr_csv_t *csv, const int *col, int k)
{
    return col[k] >= 0 && (size_t)col[k] < csv->nfields ? csv->fields[col[k]] : NULL;
}

static int openb_row(dr_trace_ctx_t *t, dr_err_t *e, const dr_csv_t *csv, const int *col)
{
    size_t line = csv->line;
    int need = 0;
    for (int k = C_CPU; k <= C_MILLI; k++)
        if (col[k] + 1 > need)
            need = col[k] + 1;
    if ((size_t)need > csv->nfields)
        return dr_trace_ferr(e, t, line, NULL, DR_EINVAL, "expected at least %d fields, got %zu",
                             need, csv->nfields);
    uint64_t cpu, mem, ngpu;
    int rc;
    if ((rc = dr_trace_uint(e, t, line, "cpu_milli", field(csv, col, C_CPU), 0, UINT32_MAX, &cpu)) <
            0 ||
        (rc = dr_trace_uint(e, t, line, "memory_mib", field(csv, col, C_MEM), 0, (uint64_t)1 << 50,
                            &mem)) < 0 ||
        (rc = dr_trace_uint(e, t, line, "num_gpu", field(csv, col, C_NGPU), 0, DR_MAX_GPUS_PER_NODE,
                            &ngpu)) < 0)
        return rc;
    double milli;
    const char *ms = field(csv, col, C_MILLI);
    if ((rc = dr_trace_num(e, t, line, "gpu_milli", ms, -INFINITY, &milli)) < 0)
        return rc;
    if (milli < 0)
        milli = 0;
    if (milli > 1000)
        milli = 1000;
    uint32_t m = (uint32_t)lround(milli);
    if (ngpu >= 1 && m == 0)
        m = 1000;

    double create = 0, del = INFINITY, sched = 0;
    const char *cs = field(csv, col, C_CREATE), *ds = field(csv, col, C_DELETE),
               *ss = field(csv, col, C_SCHED);
    if (cs && !dr_is_blank(cs) &&
        (rc = dr_trace_num(e, t, line, "creation_time", cs, 0, &create)) < 0)
        return rc;
    if (ds && !dr_is_blank(ds) && (rc = dr_trace_num(e, t, line, "deletion_time", ds, 0, &del)) < 0)
        return rc;
    if (ss && !dr_is_blank(ss) &&
        (rc = dr_trace_num(e, t, line, "scheduled_time", ss, 0, &sched)) < 0)
        return rc;
    if (create > 9.0e9)
        return dr_trace_ferr(e, t, line, "creation_time", DR_EINVAL, "'%s' is too large", cs);
    double start = sched > 0 ? sched : create;
    if (del < start)
        return dr_trace_ferr(e, t, line, "deletion_time", DR_EINVAL, "'%s' is before %s '%s'", ds,
                             sched > 0 ? "scheduled_time" : "creation_time",
                             sched > 0 ? ss : (cs ? cs : "0"));
    double runtime = del - start; /* INFINITY without a deletion time */

    dr_job_t j;
    dr_job_init(&j);
    j.kind = DR_KIND_BATCH;
    j.submit = dr_time_from_s(create);
    j.perf_class = 0;
    j.req.nodes = 1;
    j.req.gpus_per_node = (uint32_t)ngpu;
    if (ngpu > 0)
        j.req.gpu_milli = m;
    j.req.cpu_milli_per_node = (uint32_t)cpu;
    j.req.mem_mb_per_node = mem;
    if ((rc = dr_trace_validate(e, t, line, &j.req)) < 0)
        return rc;
    int64_t u = dr_trace_intern(&t->wl->users, "");
    int64_t a = dr_trace_intern(&t->wl->accounts, "");
    if (u < 0 || a < 0)
        return dr_err_set(e, DR_ENOMEM, "%s: out of memory", t->name);
    j.user = (uint32_t)u;
    j.account = (uint32_t)a;
    const char *spec = field(csv, col, C_SPEC);
    if (spec && (dr_is_blank(spec) || dr_streq_ci(spec, "nan")))
        spec = NULL;
    if (ngpu == 0)
        spec = NULL; /* a CPU-only pod has no GPU model to choose */
    if (dr_workload_add(t->wl, &j, runtime, spec) != 0)
        return dr_err_set(e, DR_ENOMEM, "%s: out of memory", t->name);
    return DR_OK;
}

int dr_trace_read_openb(dr_trace_ctx_t *t, const char *buf, size_t len)
{
    int col[C_N];
    bool header = false;
    dr_csv_t csv;
    dr_csv_init(&csv, buf, len, ',');
    int rc = DR_OK, nf;
    while (!dr_trace_full(t) && (nf = dr_csv_next(&csv)) != 0) {
        dr_err_t e = {0};
        if (nf < 0) {
            dr_trace_ferr(&e, t, csv.line, NULL, nf,
                          nf == DR_ENOMEM ? "out of memory" : "unterminated quote");
        } else if (dr_trace_skip_record((const char *const *)csv.fields, csv.nfields)) {
            continue;
        } else if (!header) {
            for (int k = 0; k < C_N; k++)
                col[k] = dr_csv_col(&csv, col_names[k]);
            for (int k = C_CPU; k <= C_MILLI && rc == DR_OK; k++)
                if (col[k] < 0)
                    rc = dr_trace_ferr(t->err, t, csv.line, "header", DR_EINVAL,
                                       "missing column '%s'", col_names[k]);
            if (rc < 0)
                break;
            header = true;
            continue;
        } else {
            openb_row(t, &e, &csv, col);
        }
        if (e.code < 0 && (rc = dr_trace_row_error(t, &e)) < 0)
            break;
    }
    dr_csv_free(&csv);
    if (rc == DR_OK && !header)
        rc = dr_err_set(t->err, DR_EINVAL, "%s: no header line", t->name);
    if (rc < 0)
        return rc;
    dr_trace_shift_to_zero(t);
    return DR_OK;
}
