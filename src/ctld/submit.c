/* submit.c - a job from a submit's body: made, checked against the
 * cluster and its limits, accepted (an id, the job table) and queued (or,
 * for an array, listed for the turn to feed), with the reason a pending
 * job shows.  api_jobs.c adds what is HTTP's (statuses, quotas, the reply);
 * the in-process tests call these steps directly. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld/ctld.h"
#include "ctld/accounts.h"
#include "ctld/arrays.h"
#include "ctld/classes.h"
#include "ctld/deps.h"
#include "ctld/holds.h"
#include "ctld/services.h"
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

int ctld_job_new(const char *body, size_t len, ctld_job_t **out, dr_err_t *err)
{
    ctld_job_t *cj = calloc(1, sizeof *cj);
    *out = cj;
    if (!cj)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    dr_jobspec_init(&cj->spec);
    dr_job_init(&cj->j);
    cj->got_type = -1;
    cj->spec_bytes = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
    return dr_jobspec_from_json(&cj->spec, body, len, err);
}

int ctld_job_check(dr_ctld_t *c, ctld_job_t *cj, const char *user, dr_time_t now, int *limit_status,
                   dr_err_t *err)
{
    int rc = dr_jobspec_validate(&cj->spec, err);
    if (rc == DR_OK)
        rc = dr_jobspec_to_job(&cj->spec, &c->cl, now, &cj->j, err);
    /* its speeds, its work, and whether any type can meet its deadline */
    if (rc == DR_OK)
        rc = ctld_classes_assign(c, cj, user, true, err);
    if (rc == DR_OK && cj->spec.array)
        rc = ctld_array_setup(c, cj, err);
    else if (rc == DR_OK && ctld_spec_is_service(&cj->spec))
        rc = ctld_service_setup(c, cj, err);
    if (rc == DR_OK && cj->spec.ndeps)
        rc = ctld_deps_check(c, &cj->spec, err);
    if (rc != DR_OK)
        return rc;
    if (rc == DR_OK) /* an array's tasks each as it */
        rc = ctld_account_budget_admit(c, cj, err);
    if (rc != DR_OK)
        return rc;
    /* a limit up to here is the request's own size (a script, a list):
     * 413; the account's queue is what others hold: 429 */
    *limit_status = 429;
    uint64_t njobs = cj->array ? (cj->array->svc ? cj->array->svc->want : cj->array->nidx) : 1;
    return ctld_account_admit(c, &cj->spec, njobs, err);
}

int ctld_job_accept(dr_ctld_t *c, ctld_job_t *cj, const char *user, uint32_t uid, uint32_t gid,
                    dr_time_t now, dr_err_t *err)
{
    cj->user = dr_strdup(user);
    cj->uid = uid;
    cj->gid = gid;
    cj->j.id = c->next_id++;
    cj->j.submit = now;
    cj->j.user = uid; /* the core's per-user cap (MaxUserCostPerHour=) counts by it */
    cj->j.account = ctld_account_id(c, &cj->spec);
    if (cj->array)
        cj->j.kind = cj->array->svc ? DR_KIND_SERVE : DR_KIND_ARRAY;
    snprintf(cj->reason, sizeof cj->reason, "queued");
    if (!cj->user || ctld_job_insert(c, cj) != DR_OK) {
        ctld_job_free(cj);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    if (cj->spec.hold == 1)
        cj->hold = CTLD_HOLD_USER; /* -H: held until released (holds.c) */
    int rc = cj->spec.ndeps           ? ctld_deps_hold(c, cj)
             : cj->hold && !cj->array ? DR_OK
                                      : ctld_submit(c, cj, err);
    if (rc == DR_OK && cj->hold) {
        ctld_hold_reason(cj);
        ctld_job_dirty(c, cj);
    }
    if (rc != DR_OK) {
        ctld_job_remove(c, cj);
        ctld_job_free(cj);
    }
    return rc;
}
