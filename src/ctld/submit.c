/* submit.c - a checked job enters the queue (or an array its list of
 * parents to feed), with the reason a pending job shows. */
#include <stdio.h>
#include <string.h>

#include "ctld/ctld.h"
#include "ctld/arrays.h"
#include "ctld/shards.h"
#include "ctld/submit.h"
#include "ctld/turn.h"

/* What a pending job waits for, in the user's words. */
void ctld_pending_reason(dr_ctld_t *c, ctld_job_t *cj)
{
    const dr_job_req_t *r = &cj->j.req;
    const dr_jobspec_t *sp = ctld_job_spec(cj);
    uint32_t g = r->nodes ? r->nodes * r->gpus_per_node : r->gpus_per_node;
    const char *types = sp->gpu_type && strcmp(sp->gpu_type, "any") != 0 ? sp->gpu_type : NULL;
    if (!g)
        snprintf(cj->reason, sizeof cj->reason, "waiting for %u node%s", r->nodes ? r->nodes : 1,
                 r->nodes > 1 ? "s" : "");
    else if (r->nodes > 1)
        snprintf(cj->reason, sizeof cj->reason, "waiting for %u nodes x %u GPUs%s%s%s", r->nodes,
                 r->gpus_per_node, types ? " (" : "", types ? types : "", types ? ")" : "");
    else
        snprintf(cj->reason, sizeof cj->reason, "waiting for %u GPU%s%s%s%s", g, g > 1 ? "s" : "",
                 types ? " (" : "", types ? types : "", types ? ")" : "");
    (void)c;
}

int ctld_submit(dr_ctld_t *c, ctld_job_t *cj, dr_err_t *err)
{
    dr_time_t now = ctld_now(c);
    if (cj->array && !cj->j.array_parent) {
        cj->j.state = DR_JOB_PENDING;
        if (ctld_arrays_add(c, cj) != DR_OK)
            return dr_err_set(err, DR_ENOMEM, "out of memory");
        ctld_job_dirty(c, cj);
        return DR_OK;
    }
    ctld_shard_bind(c, cj);
    int rc = dr_sched_submit(c->sched, &cj->j, now, err);
    if (rc != DR_OK)
        return rc;
    cj->in_sched = true;
    ctld_pending_reason(c, cj);
    c->st.submits++;
    ctld_job_dirty(c, cj);
    ctld_want_pass(c);
    return DR_OK;
}
