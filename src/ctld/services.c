/* services.c - inference services: N replicas kept running, ready and
 * behind a load balancer.
 *
 * A service (kind serve, --replicas N) is a parent record, like an array's
 * (ctld_array_t with svc set), that the scheduler never sees.  Each of its
 * N slots is run by one child job at a time - an ordinary one-node job the
 * policies place like any other, with a port drover hands out on its node
 * (DROVER_PORT) and a readiness check the node's agent runs against it
 * (ready.c).  The controller keeps the slots filled:
 *   - a run that ends by itself is replaced, after a back-off that doubles
 *     while runs keep dying young (1 s .. 30 s, as Kubernetes' crash loop);
 *   - a run whose node is lost is requeued by the scheduler and lands
 *     elsewhere (it keeps its slot);
 *   - a run stopped on purpose (scale down, rolling restart) is first taken
 *     out of the load balancer, then stopped `--service-drain` later, so
 *     that no request is sent to a process that is going away;
 *   - a rolling restart replaces old runs one at a time, and only while all
 *     the others are ready: at least N-1 replicas stay ready throughout.
 * Readiness is what the agents report; the load balancer (lb_haproxy.c)
 * gets every change at once. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/arrays.h"
#include "ctld/kill.h"
#include "ctld/launch_env.h"
#include "ctld/lb.h"
#include "ctld/services.h"
#include "ctld/turn.h"
#include "drover/util.h"

#define BACKOFF_MIN_NS (1 * DR_NSEC_PER_SEC)
#define BACKOFF_MAX_NS (30 * DR_NSEC_PER_SEC)
#define HEALTHY_AFTER_NS                                                                           \
    (30 * DR_NSEC_PER_SEC) /* a run that lived this long was not a crash loop */

bool ctld_spec_is_service(const dr_jobspec_t *sp)
{
    return sp->kind_set ? sp->kind == DR_KIND_SERVE : sp->replicas > 0;
}

static ctld_service_t *svc_of(const ctld_job_t *parent)
{
    return parent && parent->array ? parent->array->svc : NULL;
}

static int slots_grow(ctld_service_t *s, uint32_t n)
{
    if (n <= s->nslots)
        return DR_OK;
    ctld_replica_t *ns = realloc(s->slot, n * sizeof *ns);
    if (!ns)
        return DR_ENOMEM;
    memset(ns + s->nslots, 0, (n - s->nslots) * sizeof *ns);
    s->slot = ns;
    s->nslots = n;
    return DR_OK;
}

int ctld_service_setup(dr_ctld_t *c, ctld_job_t *parent, dr_err_t *err)
{
    (void)c;
    ctld_array_t *a = calloc(1, sizeof *a);
    ctld_service_t *s = a ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        free(a);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    a->svc = s;
    s->want = parent->spec.replicas ? parent->spec.replicas : 1;
    if (slots_grow(s, s->want) != DR_OK) {
        free(s);
        free(a);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    parent->array = a;
    parent->j.kind = DR_KIND_SERVE;
    return DR_OK;
}

/* The backend a service's replicas are published under: its name. */
static const char *backend_of(const ctld_job_t *parent)
{
    return ctld_job_name(parent, "service");
}

/* Tell the load balancer what slot i of parent is now. */
static void lb_update(dr_ctld_t *c, ctld_job_t *parent, uint32_t i)
{
    ctld_service_t *s = svc_of(parent);
    ctld_replica_t *r = &s->slot[i];
    ctld_job_t *run = r->run;
    bool up = run && r->ready && !r->stop_at && run->j.state == DR_JOB_RUNNING && run->nranks;
    ctld_lb_set(c, backend_of(parent), i, up ? ctld_node_addr(c, run->ranks[0].node) : "",
                up ? run->master_port : 0, up);
}

/* A new run of slot i. */
static int start_run(dr_ctld_t *c, ctld_job_t *parent, uint32_t i)
{
    ctld_service_t *s = parent->array->svc;
    dr_err_t err = {0};
    /* a replacement queues as of now */
    ctld_job_t *t = ctld_child_new(c, parent, i, DR_KIND_SERVE, c->last_now, &err);
    if (!t) {
        ctld_log("service %llu: replica %u%s: %s", (unsigned long long)parent->j.id, i,
                 err.code == DR_EINVAL ? " can no longer be placed" : "", err.msg);
        if (err.code == DR_EINVAL)
            s->slot[i].not_before = c->last_now + BACKOFF_MAX_NS;
        return err.code;
    }
    s->slot[i].run = t;
    s->slot[i].ready = false;
    s->slot[i].stop_at = 0;
    if (parent->j.state == DR_JOB_PENDING && parent->j.first_start == DR_TIME_NEVER)
        snprintf(parent->reason, sizeof parent->reason, "starting %u replicas", s->want);
    ctld_job_dirty(c, parent);
    return DR_OK;
}

/* Take slot i's run out of the load balancer; stop it once drained. */
static void drain(dr_ctld_t *c, ctld_job_t *parent, uint32_t i, const char *why)
{
    ctld_replica_t *r = &svc_of(parent)->slot[i];
    if (!r->run || r->stop_at)
        return;
    r->stop_at = c->last_now + (r->ready ? c->o.drain : 0);
    r->ready = false;
    lb_update(c, parent, i);
    ctld_log("service %llu: replica %u (job %llu): %s", (unsigned long long)parent->j.id, i,
             (unsigned long long)r->run->j.id, why);
}

void ctld_service_feed(dr_ctld_t *c, ctld_job_t *parent, dr_time_t now)
{
    ctld_service_t *s = svc_of(parent);
    if (!s || ctld_job_terminal(parent))
        return;
    /* drained runs: stop them now */
    for (uint32_t i = 0; i < s->nslots; i++) {
        ctld_replica_t *r = &s->slot[i];
        if (r->run && r->stop_at && now >= r->stop_at && !r->run->kill_sent &&
            !ctld_job_terminal(r->run))
            ctld_cancel(c, r->run,
                        i >= s->want ? "replica stopped: scaled down"
                                     : "replica stopped: rolling restart",
                        NULL);
    }
    if (s->stopping)
        return;
    /* scale down: the highest slots go */
    for (uint32_t i = s->want; i < s->nslots; i++)
        drain(c, parent, i, "scaled down");
    /* empty slots get a run */
    for (uint32_t i = 0; i < s->want; i++)
        if (!s->slot[i].run && now >= s->slot[i].not_before)
            start_run(c, parent, i);
    /* rolling restart: one old run at a time, while every other is ready */
    if (s->roll_mark) {
        uint32_t ready = 0, draining = 0, old = s->want;
        for (uint32_t i = 0; i < s->want; i++) {
            const ctld_replica_t *r = &s->slot[i];
            ready += r->run && r->ready && !r->stop_at;
            draining += r->run && r->stop_at;
            if (old == s->want && r->run && !r->stop_at && r->run->j.id < s->roll_mark)
                old = i;
        }
        if (old == s->want && !draining) {
            ctld_log("service %llu: rolling restart done", (unsigned long long)parent->j.id);
            s->roll_mark = 0;
            ctld_job_dirty(c, parent);
        } else if (old < s->want && !draining && ready == s->want) {
            drain(c, parent, old, "rolling restart");
        }
    }
}

/* The turn's feed comes back when a back-off or a drain is over. */
bool ctld_service_timers_due(dr_ctld_t *c, dr_time_t now)
{
    ctld_job_t *const *parents = NULL;
    size_t np = ctld_arrays_list(c, &parents);
    for (size_t k = 0; k < np; k++) {
        ctld_service_t *s = svc_of(parents[k]);
        for (uint32_t i = 0; s && i < s->nslots; i++) {
            const ctld_replica_t *r = &s->slot[i];
            if ((r->run && r->stop_at && now >= r->stop_at && !r->run->kill_sent) ||
                (!r->run && i < s->want && !s->stopping && now >= r->not_before))
                return true;
        }
    }
    return false;
}

static void settle(dr_ctld_t *c, ctld_job_t *parent)
{
    ctld_array_t *a = parent->array;
    parent->j.state = DR_JOB_CANCELLED;
    parent->j.end = c->last_now;
    parent->has_exit = true;
    parent->exit_code = 0;
    ctld_evict_later(c, parent);
    ctld_arrays_drop(c, parent);
    (void)a;
}

void ctld_service_run_ended(dr_ctld_t *c, ctld_job_t *run)
{
    ctld_job_t *p = run->parent;
    ctld_array_t *a = p->array;
    ctld_service_t *s = a->svc;
    for (uint32_t i = 0; i < a->active; i++)
        if (a->live[i] == run) {
            a->live[i] = a->live[--a->active];
            break;
        }
    a->count[run->j.state]++;
    p->cost_usd += run->cost_usd;
    uint32_t i = run->j.array_index;
    if (i < s->nslots && s->slot[i].run == run) {
        ctld_replica_t *r = &s->slot[i];
        bool on_purpose = r->stop_at != 0 || s->stopping;
        r->run = NULL;
        r->ready = false;
        r->stop_at = 0;
        lb_update(c, p, i);
        if (!on_purpose && i < s->want) {
            /* a crash: replace it, backing off while runs keep dying young */
            bool young = run->j.first_start == DR_TIME_NEVER ||
                         c->last_now - run->j.start < HEALTHY_AFTER_NS;
            r->fails = young ? r->fails + 1 : 0;
            dr_time_t d = BACKOFF_MIN_NS;
            for (uint32_t k = 1; k < r->fails && d < BACKOFF_MAX_NS; k++)
                d *= 2;
            r->not_before = c->last_now + (d < BACKOFF_MAX_NS ? d : BACKOFF_MAX_NS);
            r->restarts++;
            s->restarts++;
            ctld_log("service %llu: replica %u (job %llu) ended (%s); restart %u in %.0f s",
                     (unsigned long long)p->j.id, i, (unsigned long long)run->j.id,
                     run->reason[0] ? run->reason : ctld_job_state_name(run), r->restarts,
                     dr_time_to_s(r->not_before - c->last_now));
        } else {
            r->fails = 0;
            r->not_before = 0;
        }
    }
    /* slots above want that no run holds any more are gone */
    while (s->nslots > s->want && !s->slot[s->nslots - 1].run)
        s->nslots--;
    if (s->stopping && a->active == 0)
        settle(c, p);
    ctld_job_dirty(c, p);
    ctld_turn_schedule(c);
}

void ctld_service_run_requeued(dr_ctld_t *c, ctld_job_t *run)
{
    ctld_service_t *s = svc_of(run->parent);
    uint32_t i = run->j.array_index;
    if (!s || i >= s->nslots || s->slot[i].run != run)
        return;
    s->slot[i].ready = false;
    lb_update(c, run->parent, i);
}

void ctld_service_run_reloaded(dr_ctld_t *c, ctld_job_t *run)
{
    ctld_service_t *s = svc_of(run->parent);
    uint32_t i = run->j.array_index;
    if (!s || slots_grow(s, i + 1) != DR_OK)
        return;
    s->slot[i].run = run;
    s->slot[i].ready = false; /* until its agent says again */
    if (i >= s->want)
        s->slot[i].stop_at = c->last_now; /* it was being scaled away */
}

void ctld_service_ready(dr_ctld_t *c, ctld_job_t *run, bool ready)
{
    ctld_service_t *s = svc_of(run->parent);
    uint32_t i = run->j.array_index;
    if (!s || i >= s->nslots || s->slot[i].run != run || s->slot[i].stop_at)
        return;
    if (s->slot[i].ready == ready)
        return;
    s->slot[i].ready = ready;
    ctld_log("service %llu: replica %u (job %llu) %s", (unsigned long long)run->parent->j.id, i,
             (unsigned long long)run->j.id, ready ? "ready" : "not ready");
    lb_update(c, run->parent, i);
    ctld_turn_schedule(c); /* a rolling restart may go on */
}

int ctld_service_scale(dr_ctld_t *c, ctld_job_t *parent, uint32_t want, dr_err_t *err)
{
    ctld_service_t *s = svc_of(parent);
    if (!s)
        return dr_err_set(err, DR_EINVAL, "job %llu is not a service",
                          (unsigned long long)parent->j.id);
    if (ctld_job_terminal(parent) || s->stopping)
        return dr_err_set(err, DR_ESTATE, "service %llu has ended",
                          (unsigned long long)parent->j.id);
    if (want > 1024)
        return dr_err_set(err, DR_EINVAL, "replicas: %u is more than 1024", want);
    if (slots_grow(s, want) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < want && i < s->nslots; i++)
        if (s->slot[i].run && s->slot[i].stop_at && !s->slot[i].run->kill_sent && i >= s->want) {
            /* scaled back up before it was stopped: keep it */
            s->slot[i].stop_at = 0;
        }
    ctld_log("service %llu: scaled from %u to %u replicas", (unsigned long long)parent->j.id,
             s->want, want);
    s->want = want;
    parent->spec.replicas = want; /* what a reload starts from */
    ctld_job_dirty(c, parent);
    ctld_turn_schedule(c);
    return DR_OK;
}

int ctld_service_restart(dr_ctld_t *c, ctld_job_t *parent, dr_err_t *err)
{
    ctld_service_t *s = svc_of(parent);
    if (!s)
        return dr_err_set(err, DR_EINVAL, "job %llu is not a service",
                          (unsigned long long)parent->j.id);
    if (ctld_job_terminal(parent) || s->stopping)
        return dr_err_set(err, DR_ESTATE, "service %llu has ended",
                          (unsigned long long)parent->j.id);
    s->roll_mark = c->next_id; /* every run that exists now is old */
    ctld_log("service %llu: rolling restart of %u replicas", (unsigned long long)parent->j.id,
             s->want);
    ctld_job_dirty(c, parent);
    ctld_turn_schedule(c);
    return DR_OK;
}

/* ---- what the API shows and the store keeps ---- */

void ctld_service_json(dr_ctld_t *c, const ctld_job_t *cj, json_t *o)
{
    if (cj->parent && svc_of(cj->parent)) {
        const ctld_service_t *s = svc_of(cj->parent);
        uint32_t i = cj->j.array_index;
        bool ready = i < s->nslots && s->slot[i].run == cj && s->slot[i].ready;
        json_object_set_new(o, "replica", json_integer(i));
        json_object_set_new(o, "port",
                            cj->master_port && !ctld_job_terminal(cj)
                                ? json_integer(cj->master_port)
                                : json_null());
        json_object_set_new(o, "ready", json_boolean(ready));
        return;
    }
    const ctld_service_t *s = svc_of(cj);
    if (!s)
        return;
    json_t *reps = json_array(), *eps = json_array();
    uint32_t nready = 0, nrun = 0;
    for (uint32_t i = 0; i < s->nslots; i++) {
        const ctld_replica_t *r = &s->slot[i];
        const ctld_job_t *run = r->run;
        bool live = run && run->j.state == DR_JOB_RUNNING && run->nranks;
        const char *addr = live ? ctld_node_addr(c, run->ranks[0].node) : NULL;
        char ep[96] = "";
        if (live && r->ready && !r->stop_at) {
            snprintf(ep, sizeof ep, "%s:%u", addr, (unsigned)run->master_port);
            json_array_append_new(eps, json_string(ep));
            nready++;
        }
        nrun += live;
        json_t *x = json_object();
        json_object_set_new(x, "replica", json_integer(i));
        json_object_set_new(x, "job", run ? json_integer((json_int_t)run->j.id) : json_null());
        json_object_set_new(x, "state",
                            json_string(!run         ? "waiting"
                                        : r->stop_at ? "draining"
                                                     : ctld_job_state_name(run)));
        json_object_set_new(x, "node",
                            live ? json_string(c->cl.nodes[run->ranks[0].node].name) : json_null());
        json_object_set_new(x, "addr", live ? json_string(addr) : json_null());
        json_object_set_new(x, "port", live ? json_integer(run->master_port) : json_null());
        json_object_set_new(x, "ready", json_boolean(live && r->ready && !r->stop_at));
        json_object_set_new(x, "restarts", json_integer(r->restarts));
        json_array_append_new(reps, x);
    }
    const dr_jobspec_t *sp = &cj->spec;
    json_t *so = json_object();
    json_object_set_new(so, "replicas", json_integer(s->want));
    json_object_set_new(so, "running", json_integer(nrun));
    json_object_set_new(so, "ready", json_integer(nready));
    json_object_set_new(so, "restarts", json_integer(s->restarts));
    json_object_set_new(so, "rolling_restart", json_boolean(s->roll_mark != 0));
    json_object_set_new(so, "readiness", json_string(sp->ready ? sp->ready : "tcp"));
    json_object_set_new(so, "backend", json_string(backend_of(cj)));
    json_object_set_new(so, "endpoints", eps);
    json_object_set_new(so, "replica_list", reps);
    json_object_set_new(o, "service", so);
    if (!ctld_job_terminal(cj)) { /* the parent holds nothing itself: say what its runs do */
        uint32_t gpus = 0;
        for (uint32_t i = 0; i < s->nslots; i++)
            gpus += s->slot[i].run ? s->slot[i].run->got_gpus : 0;
        char why[96];
        snprintf(why, sizeof why, "%u of %u replicas ready%s", nready, s->want,
                 s->roll_mark ? ", rolling restart" : "");
        json_object_set_new(o, "reason", json_string(why));
        json_object_set_new(o, "gpus", json_integer(gpus));
    }
}

json_t *ctld_service_rt(const ctld_job_t *parent)
{
    const ctld_service_t *s = svc_of(parent);
    if (!s)
        return NULL;
    json_t *rs = json_array();
    for (uint32_t i = 0; i < s->nslots; i++)
        json_array_append_new(rs, json_integer(s->slot[i].restarts));
    return json_pack("{s:i,s:I,s:b,s:i,s:o}", "want", (json_int_t)s->want, "roll_mark",
                     (json_int_t)s->roll_mark, "stopping", s->stopping, "restarts",
                     (json_int_t)s->restarts, "slot_restarts", rs);
}

int ctld_service_rt_load(ctld_job_t *parent, json_t *o)
{
    ctld_service_t *s = svc_of(parent);
    json_int_t want, mark, total;
    int stopping;
    json_t *rs;
    if (!s ||
        json_unpack(o, "{s:I,s:I,s:b,s:I,s:o}", "want", &want, "roll_mark", &mark, "stopping",
                    &stopping, "restarts", &total, "slot_restarts", &rs) != 0 ||
        want < 0 || want > 1024 || !json_is_array(rs))
        return DR_EIO;
    s->want = (uint32_t)want;
    s->roll_mark = (uint64_t)mark;
    s->stopping = stopping;
    s->restarts = (uint32_t)total;
    if (slots_grow(s, s->want) != DR_OK)
        return DR_ENOMEM;
    for (uint32_t i = 0; i < s->nslots && i < json_array_size(rs); i++)
        s->slot[i].restarts = (uint32_t)json_integer_value(json_array_get(rs, i));
    return DR_OK;
}
