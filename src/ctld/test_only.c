/* test_only.c - POST /v1/jobs?test_only=1, sbatch's --test-only
 * (docs/api.md): when and where a job would start, nothing created.
 *
 * The submit path has parsed and checked the job exactly as for a real
 * submit; here the scheduler's running set and queue are handed, as they
 * are, to the core's estimate (sched/start_estimate.c): running jobs end
 * at their limits, the pending jobs ahead of it keep the earliest
 * reservations in order.  Ahead means before it in the queue's order
 * (dr_sched_queue_before: priority, then its account's fair share, then
 * submit time: a new job goes behind its equals), and besides the queue
 * the jobs that would take their places there once let in: those waiting
 * for their dependencies (with them, dated by the estimate) and held ones
 * (which reserve nothing, and give those waiting for them no time).  The
 * new job's own dependencies count as well; the jobs it waits for are
 * planned before it even where they come after it in the order.  Its
 * account's MaxRunningGpus limits are the core's (the estimate counts
 * what each account's running jobs and reservations hold).  It is a
 * snapshot answered at once, as Slurm's: no turn, no commit, no id. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/http.h>
#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/accounts.h"
#include "ctld/classes.h"
#include "ctld/deps.h"
#include "ctld/http.h"
#include "ctld/test_only.h"
#include "drover/start_estimate.h"
#include "drover/util.h"

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

/* A job ahead: in the queue (cj NULL), or out of it (waiting for its
 * dependencies, held), with what the estimate needs of it. */
typedef struct cand {
    const dr_job_t *j;
    const ctld_job_t *cj;
} cand_t;

typedef struct cands {
    cand_t *v;
    size_t n, cap;
} cands_t;

static bool listed(const cands_t *l, uint64_t id)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].j->id == id)
            return true;
    return false;
}

/* The pending jobs out of the queue that would come before probe once let
 * in (waiting for dependencies; held), in the queue's order. */
static int out_of_queue(dr_ctld_t *c, const dr_job_t *probe, cands_t *l)
{
    ctld_job_t *const *held = NULL;
    size_t nheld = ctld_deps_list(c, &held);
    for (size_t i = 0; i < nheld; i++) {
        const ctld_job_t *x = held[i];
        if (!x->array && x->j.state == DR_JOB_PENDING && !ctld_job_terminal(x) &&
            dr_sched_queue_before(c->sched, &x->j, probe) &&
            DR_PUSH(l->v, l->n, l->cap, ((cand_t){&x->j, x})) != 0)
            return DR_ENOMEM;
    }
    for (size_t i = 0; i < c->tab_cap; i++) {
        const ctld_job_t *x = c->tab[i];
        if (x && x->hold && !x->array && !x->in_sched && x->j.state == DR_JOB_PENDING &&
            dr_sched_queue_before(c->sched, &x->j, probe) && !ctld_deps_waiting(c, x) &&
            DR_PUSH(l->v, l->n, l->cap, ((cand_t){&x->j, x})) != 0)
            return DR_ENOMEM;
    }
    for (size_t i = 1; i < l->n; i++) /* few: insertion sort */
        for (size_t k = i; k > 0 && dr_sched_queue_before(c->sched, l->v[k].j, l->v[k - 1].j);
             k--) {
            cand_t t = l->v[k];
            l->v[k] = l->v[k - 1];
            l->v[k - 1] = t;
        }
    return DR_OK;
}

/* The jobs that would start before probe, in order: the queue's with the
 * others merged in, at most TEST_ONLY_MAX_AHEAD (*beyond: how many more). */
static int ahead_of(dr_ctld_t *c, const dr_job_t *probe, cands_t *l, size_t *beyond)
{
    cands_t x = {0};
    int rc = out_of_queue(c, probe, &x);
    dr_job_t *const *q = NULL;
    size_t nq = rc == DR_OK ? dr_sched_queue(c->sched, &q) : 0, k = 0;
    *beyond = 0;
    for (size_t i = 0; rc == DR_OK && (i < nq || k < x.n); i++) {
        const dr_job_t *j = i < nq ? q[i] : NULL;
        if (j && (j->state != DR_JOB_PENDING || !dr_sched_queue_before(c->sched, j, probe)))
            continue;
        while (rc == DR_OK && k < x.n && (!j || dr_sched_queue_before(c->sched, x.v[k].j, j))) {
            if (l->n < TEST_ONLY_MAX_AHEAD)
                rc = DR_PUSH(l->v, l->n, l->cap, x.v[k]) == 0 ? DR_OK : DR_ENOMEM;
            else
                ++*beyond;
            k++;
        }
        if (!j || rc != DR_OK)
            continue;
        if (l->n < TEST_ONLY_MAX_AHEAD)
            rc = DR_PUSH(l->v, l->n, l->cap, ((cand_t){j, NULL})) == 0 ? DR_OK : DR_ENOMEM;
        else
            ++*beyond;
    }
    free(x.v);
    return rc;
}

/* The pending jobs the new job waits for (and those they wait for) that
 * are not ahead of it: planned last, before it, as it cannot start first. */
static int add_waited_for(dr_ctld_t *c, const dr_est_dep_t *d, size_t nd, cands_t *l)
{
    for (size_t i = 0; i < nd; i++) {
        if (!d[i].job || listed(l, d[i].job))
            continue;
        const ctld_job_t *x = ctld_job_find(c, d[i].job);
        if (!x || x->array || x->j.state != DR_JOB_PENDING || ctld_job_terminal(x))
            continue;
        if (DR_PUSH(l->v, l->n, l->cap, ((cand_t){&x->j, x->in_sched ? NULL : x})) != 0)
            return DR_ENOMEM;
    }
    return DR_OK;
}

/* The estimate's view of a job: account as the core binds it (1 + the
 * cluster's index), its dependencies (*deps, owned by the caller). */
static int est_job(dr_ctld_t *c, const dr_job_t *j, const ctld_job_t *cj, dr_time_t now,
                   dr_est_job_t *out, dr_est_dep_t **deps)
{
    *out = (dr_est_job_t){.req = &j->req,
                          .limit = j->time_limit,
                          .id = j->id,
                          .account = (uint32_t)(dr_sched_account_of(c->sched, j) + 1),
                          .held = cj && cj->hold};
    *deps = NULL;
    if (!cj || !cj->spec.ndeps)
        return DR_OK;
    int rc = ctld_deps_estimate(c, cj, j->id, now, deps, &out->ndeps);
    out->deps = *deps;
    out->dep_any = cj->spec.dep_any;
    return rc;
}

void ctld_test_only(dr_ctld_t *c, struct evhttp_request *req, const ctld_job_t *cj, dr_time_t now)
{
    if (!c->sched) {
        ctld_reply_error(req, 503, NULL, "test-only: the scheduler is not running");
        return;
    }
    /* the new job as it would be queued */
    dr_job_t probe = cj->j;
    probe.id = c->next_id;
    probe.submit = now;
    probe.account = ctld_account_id(c, &cj->spec);
    size_t nrun = dr_sched_nrunning(c->sched), beyond = 0;
    dr_job_t *const *runs = dr_sched_running(c->sched);
    dr_est_running_t *run = calloc(nrun ? nrun : 1, sizeof *run);
    cands_t l = {0};
    dr_est_job_t job, *ahead = NULL;
    dr_est_dep_t **deps = NULL, *jdeps = NULL;
    size_t nahead = 0;
    int rc = run ? ahead_of(c, &probe, &l, &beyond) : DR_ENOMEM;
    for (size_t i = 0; i < nrun && rc == DR_OK; i++)
        run[i] =
            (dr_est_running_t){.alloc = &runs[i]->alloc,
                               .end = dr_sched_expected_end(runs[i]),
                               .id = runs[i]->id,
                               .account = (uint32_t)(dr_sched_account_of(c->sched, runs[i]) + 1)};
    if (rc == DR_OK) {
        ctld_job_t self = *cj; /* the would-be id, for its own singleton */
        self.j = probe;
        rc = est_job(c, &probe, &self, now, &job, &jdeps);
        job.id = 0;
        job.held = false; /* -H: it is the estimate for once it is released */
    }
    /* what it waits for, and what those wait for (the list grows as it is walked) */
    size_t first = l.n;
    if (rc == DR_OK)
        rc = add_waited_for(c, jdeps, job.ndeps, &l);
    for (size_t i = first; i < l.n && rc == DR_OK; i++) {
        if (!l.v[i].cj || !l.v[i].cj->spec.ndeps)
            continue;
        dr_est_dep_t *d;
        size_t nd;
        rc = ctld_deps_estimate(c, l.v[i].cj, l.v[i].j->id, now, &d, &nd);
        if (rc == DR_OK)
            rc = add_waited_for(c, d, nd, &l);
        free(d);
    }
    if (rc == DR_OK) {
        ahead = calloc(l.n ? l.n : 1, sizeof *ahead);
        deps = calloc(l.n ? l.n : 1, sizeof *deps);
        if (!ahead || !deps)
            rc = DR_ENOMEM;
    }
    for (size_t i = 0; i < l.n && rc == DR_OK; i++, nahead++)
        rc = est_job(c, l.v[i].j, l.v[i].cj, now, &ahead[i], &deps[i]);
    dr_start_est_t e;
    memset(&e, 0, sizeof e);
    dr_err_t err = {0};
    if (rc == DR_OK)
        rc = dr_start_estimate(&c->cl, now, run, nrun, ahead, nahead, &job, &e, &err);
    else
        dr_err_set(&err, rc, "out of memory");
    for (size_t i = 0; deps && i < nahead; i++)
        free(deps[i]);
    free(deps);
    free(jdeps);
    free(ahead);
    free(run);
    free(l.v);
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
        char why[1024];
        size_t n = e.ahead_placed, k;
        if (e.start <= now)
            k = (size_t)snprintf(why, sizeof why, "what it needs is free now");
        else if (e.why[0] && n == 0)
            k = (size_t)snprintf(why, sizeof why, "%s", e.why);
        else if (e.why[0])
            k = (size_t)snprintf(why, sizeof why, "%s; behind %zu pending job%s that come%s first",
                                 e.why, n, n == 1 ? "" : "s", n == 1 ? "s" : "");
        else if (n == 0)
            k = (size_t)snprintf(why, sizeof why, "when running jobs reach their time limits");
        else
            k = (size_t)snprintf(why, sizeof why,
                                 "when running jobs reach their time limits, behind %zu pending "
                                 "job%s that come%s first",
                                 n, n == 1 ? "" : "s", n == 1 ? "s" : "");
        if (e.ahead_held && k < sizeof why)
            k += (size_t)snprintf(why + k, sizeof why - k,
                                  "; %zu held job%s ahead reserve%s nothing", e.ahead_held,
                                  e.ahead_held == 1 ? "" : "s", e.ahead_held == 1 ? "s" : "");
        if (e.ahead_waiting && k < sizeof why)
            (void)snprintf(why + k, sizeof why - k,
                           "; %zu job%s ahead wait%s for dependencies that do not hold within the "
                           "estimate and reserve%s nothing",
                           e.ahead_waiting, e.ahead_waiting == 1 ? "" : "s",
                           e.ahead_waiting == 1 ? "s" : "", e.ahead_waiting == 1 ? "s" : "");
        json_object_set_new(o, "reason", json_string(why));
        if (e.alloc.nslots && e.alloc.slots[0].gpu != DR_NO_GPU)
            json_object_set_new(o, "gpu_type", json_string(c->cl.types[e.alloc.type].name));
    }
    json_object_set_new(o, "nodes", nodes);
    json_object_set_new(o, "ahead", json_integer((json_int_t)(nahead - e.ahead_held)));
    if (e.ahead_held)
        json_object_set_new(o, "ahead_held", json_integer((json_int_t)e.ahead_held));
    if (e.ahead_waiting)
        json_object_set_new(o, "ahead_waiting", json_integer((json_int_t)e.ahead_waiting));
    if (beyond)
        json_object_set_new(o, "ahead_not_planned", json_integer((json_int_t)beyond));
    /* every type it may use: its speed, time and cost there (classes.c) */
    json_t *speeds = ctld_classes_job_obj(c, cj);
    json_object_set_new(o, "speeds", speeds ? speeds : json_null());
    dr_alloc_free(&e.alloc);
    reply(req, o);
}
