/* test_only.c - POST /v1/jobs?test_only=1, sbatch's --test-only
 * (docs/api.md): when and where a job would start, nothing created.
 *
 * The submit path has parsed and checked the job exactly as for a real
 * submit; here the scheduler's running set and queue are handed, as they
 * are, to the core's estimate (sched/start_estimate.c): running jobs end
 * at their limits, the pending jobs ahead of it (priority at least its
 * own: a new job goes behind its equals) keep the earliest reservations in
 * order.  It is a snapshot answered at once, as Slurm's: no turn, no
 * commit, no id. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/http.h>
#include <jansson.h>

#include "ctld/ctld.h"
#include "drover/start_estimate.h"

/* The jobs ahead given reservations, in queue order: the estimate runs in
 * the controller's event loop, and its cost grows with the jobs ahead times
 * the running jobs (a second or so at 500 ahead of 8,000 running on 1,000
 * nodes); jobs past it are left out, so the estimate can only be early. */
#define TEST_ONLY_MAX_AHEAD 500

/* RFC 3339 UTC, whole seconds. */
static void rfc3339(dr_time_t t, char *out, size_t n)
{
    time_t s = (time_t)(t / DR_NSEC_PER_SEC);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void reply(struct evhttp_request *req, json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(o);
    if (!s) {
        ctld_reply_error(req, 503, NULL, "out of memory");
        return;
    }
    ctld_reply_json(req, 200, s);
    free(s);
}

void ctld_test_only_never(struct evhttp_request *req, const char *why)
{
    reply(req, json_pack("{s:b,s:n,s:n,s:[],s:s}", "test_only", 1, "start_at", "start_in_s",
                         "nodes", "reason", why));
}

void ctld_test_only(dr_ctld_t *c, struct evhttp_request *req, const ctld_job_t *cj, dr_time_t now)
{
    size_t nrun = c->sched ? dr_sched_nrunning(c->sched) : 0, nq = 0, nahead = 0;
    dr_job_t *const *runs = c->sched ? dr_sched_running(c->sched) : NULL;
    dr_job_t *const *q = NULL;
    if (c->sched)
        nq = dr_sched_queue(c->sched, &q);
    dr_est_running_t *run = calloc(nrun ? nrun : 1, sizeof *run);
    dr_est_job_t *ahead = calloc(nq ? nq : 1, sizeof *ahead);
    if (!run || !ahead) {
        free(run);
        free(ahead);
        ctld_reply_error(req, 503, NULL, "out of memory");
        return;
    }
    for (size_t i = 0; i < nrun; i++)
        run[i] =
            (dr_est_running_t){.alloc = &runs[i]->alloc, .end = dr_sched_expected_end(runs[i])};
    size_t beyond = 0; /* jobs ahead past the bound, not planned */
    for (size_t i = 0; i < nq; i++) {
        if (q[i]->state != DR_JOB_PENDING || q[i]->priority < cj->j.priority)
            continue;
        if (nahead < TEST_ONLY_MAX_AHEAD)
            ahead[nahead++] = (dr_est_job_t){.req = &q[i]->req, .limit = q[i]->time_limit};
        else
            beyond++;
    }
    dr_est_job_t job = {.req = &cj->j.req, .limit = cj->j.time_limit};
    dr_start_est_t e;
    dr_err_t err = {0};
    int rc = dr_start_estimate(&c->cl, now, run, nrun, ahead, nahead, &job, &e, &err);
    free(run);
    free(ahead);
    if (rc != DR_OK) {
        ctld_reply_error(req, rc == DR_ENOMEM ? 503 : 500, NULL, "test-only: %s", err.msg);
        return;
    }
    json_t *o = json_pack("{s:b}", "test_only", 1);
    json_t *nodes = json_array();
    for (uint32_t s = 0; s < e.alloc.nslots; s++)
        if (s == 0 || e.alloc.slots[s].node != e.alloc.slots[s - 1].node)
            json_array_append_new(nodes, json_string(c->cl.nodes[e.alloc.slots[s].node].name));
    if (e.start == DR_TIME_NEVER) {
        json_object_set_new(o, "start_at", json_null());
        json_object_set_new(o, "start_in_s", json_null());
        json_object_set_new(o, "reason", json_string(e.reason));
    } else {
        char at[32];
        rfc3339(e.start, at, sizeof at);
        json_object_set_new(o, "start_at", json_string(at));
        json_object_set_new(o, "start_in_s", json_real(dr_time_to_s(e.start - now)));
        char why[160];
        if (e.start <= now)
            snprintf(why, sizeof why, "what it needs is free now");
        else if (nahead == 0)
            snprintf(why, sizeof why, "when running jobs reach their time limits");
        else
            snprintf(why, sizeof why,
                     "when running jobs reach their time limits, behind %zu pending job%s that "
                     "come%s first",
                     nahead, nahead == 1 ? "" : "s", nahead == 1 ? "s" : "");
        json_object_set_new(o, "reason", json_string(why));
        if (e.alloc.nslots && e.alloc.slots[0].gpu != DR_NO_GPU)
            json_object_set_new(o, "gpu_type", json_string(c->cl.types[e.alloc.type].name));
    }
    json_object_set_new(o, "nodes", nodes);
    json_object_set_new(o, "ahead", json_integer((json_int_t)nahead));
    if (beyond)
        json_object_set_new(o, "ahead_not_planned", json_integer((json_int_t)beyond));
    dr_alloc_free(&e.alloc);
    reply(req, o);
}
