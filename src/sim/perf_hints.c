/* perf_hints.c - turns the model-hint jobs of a whole workload into perf
 * classes (include/drover/workload.h), one job at a time through the core's
 * dr_perf_hint_class.  What is the simulator's own here is which jobs to
 * convert: the truth (a trace's own duration) decides whether a job's work
 * becomes its token count. */
#include <math.h>

#include "drover/perfmodel.h"
#include "drover/workload.h"

int dr_perf_add_hint_classes(dr_workload_t *wl, const dr_cluster_t *c, bool tokens_replace_duration,
                             dr_err_t *err)
{
    if (!wl || !c)
        return dr_err_set(err, DR_EINVAL, "hint classes: no workload or cluster");
    dr_perf_table_t *p = &wl->perf;
    /* the columns and their binding are checked even if no job converts */
    int rc = dr_perf_hint_columns(p, c, err);
    int map[DR_MAX_GPU_TYPES];
    if (rc || (rc = dr_perf_bind(p, c, map, err)) != 0)
        return rc;
    int converted = 0;
    for (size_t i = 0; i < wl->njobs; i++) {
        dr_job_t *j = &wl->jobs[i];
        if (!(j->hint_params > 0) || !isfinite(j->hint_params) || j->perf_class != 0)
            continue;
        bool has_work = wl->work[i] > 0;
        bool has_tokens = j->hint_tokens > 0 && isfinite(j->hint_tokens);
        if ((has_work && !(tokens_replace_duration && has_tokens)) || (!has_work && !has_tokens))
            continue;
        if (j->req.gpus_per_node == 0)
            continue; /* CPU-only: nothing to model */
        uint32_t cls;
        if ((rc = dr_perf_hint_class(p, c, j, &cls, err)) != DR_OK)
            return rc;
        j->perf_class = cls;
        wl->work[i] = j->hint_tokens;
        j->work_done = 0;
        converted++;
    }
    return converted;
}
