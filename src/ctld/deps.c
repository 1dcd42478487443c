/* deps.c - job dependencies (--dependency=afterok:ID,...), as Slurm has them.
 *
 * A job with dependencies is accepted and stored like any other but is not
 * handed to the scheduler until they hold: it waits here, in c->deps->held, and
 * every turn looks again (the jobs it waits on are few; their states come
 * from memory, or from the store once they have left it).  A dependency
 * that can never hold (afterok on a job that failed) ends the job as
 * failed with the reason, rather than leaving it pending for ever (Slurm's
 * kill_invalid_depend).  A term may name one task of an array ("ID_IDX"):
 * the task is found in its parent's live set, in the store once it ended,
 * or is known not to have started while the parent has not reached it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/deps.h"
#include "ctld/store.h"
#include "ctld/submit.h"
#include "ctld/turn.h"
#include "drover/util.h"

/* Jobs waiting for their dependencies, and whether to look at them again. */
struct ctld_deps {
    ctld_job_t **held;
    size_t n, cap;
    bool recheck;
};

/* What is known of a job a dependency names. */
typedef struct dep_state {
    bool exists, started, ended, ok;
} dep_state_t;

static dep_state_t of_job(const ctld_job_t *cj)
{
    dep_state_t d = {.exists = true};
    d.ended = ctld_job_terminal(cj);
    d.started = d.ended || cj->j.first_start != DR_TIME_NEVER || cj->j.state != DR_JOB_PENDING;
    d.ok = cj->j.state == DR_JOB_COMPLETED;
    return d;
}

/* A terminal job's stored JOB JSON (freed here). */
static dep_state_t of_json(char *js)
{
    dep_state_t d = {0};
    json_t *o = json_loads(js, 0, NULL);
    free(js);
    const char *st = json_string_value(json_object_get(o, "state"));
    d.exists = d.ended = true;
    d.started = !json_is_null(json_object_get(o, "start_time"));
    d.ok = st && strcmp(st, "completed") == 0;
    json_decref(o);
    return d;
}

static dep_state_t state_of(dr_ctld_t *c, uint64_t id)
{
    ctld_job_t *cj = ctld_job_find(c, id);
    if (cj)
        return of_job(cj);
    char *js = ctld_store_job_json(c, id, NULL);
    return js ? of_json(js) : (dep_state_t){0};
}

/* Task idx of array job: live, ended (the store; or still in memory before
 * its row is written), or not materialised yet (pending, not started). */
static dep_state_t task_state(dr_ctld_t *c, uint64_t job, uint32_t idx)
{
    ctld_job_t *p = ctld_job_find(c, job);
    const ctld_array_t *a = p ? p->array : NULL;
    for (uint32_t i = 0; a && i < a->active; i++)
        if (a->live[i]->j.array_index == idx)
            return of_job(a->live[i]);
    char *js = ctld_store_task_json(c, job, idx);
    if (js)
        return of_json(js);
    if (!a)
        return (dep_state_t){0};
    for (uint32_t k = a->next; k < a->nidx; k++)
        if (a->idx[k] == idx)
            return (dep_state_t){.exists = true};
    for (size_t i = 0; i < c->tab_cap; i++) {
        const ctld_job_t *o = c->tab[i];
        if (o && o->parent == p && o->j.array_index == idx)
            return of_job(o);
    }
    for (uint32_t k = 0; k < a->next; k++) /* never materialised (a changed config): failed */
        if (a->idx[k] == idx)
            return (dep_state_t){.exists = true, .started = true, .ended = true};
    return (dep_state_t){0};
}

static dep_state_t ref_state(dr_ctld_t *c, const dr_dep_ref_t *r)
{
    return r->task >= 0 ? task_state(c, r->job, (uint32_t)r->task) : state_of(c, r->job);
}

/* 1: the term holds; 0: not yet; -1: it never will. */
static int term(dr_ctld_t *c, const ctld_job_t *cj, const dr_dep_t *t)
{
    if (t->kind == DR_DEP_SINGLETON) {
        /* every other not-ended job of this name and user submitted before */
        const dr_jobspec_t *sp = &cj->spec;
        for (size_t i = 0; i < c->tab_cap; i++) {
            const ctld_job_t *o = c->tab[i];
            if (!o || o == cj || o->parent || ctld_job_terminal(o) || o->j.id > cj->j.id ||
                strcmp(o->user, cj->user) != 0)
                continue;
            const char *a = o->spec.name ? o->spec.name : "", *b = sp->name ? sp->name : "";
            if (strcmp(a, b) == 0)
                return 0;
        }
        return 1;
    }
    int all = 1;
    for (uint32_t k = 0; k < t->nrefs; k++) {
        dep_state_t d = ref_state(c, &t->refs[k]);
        if (!d.exists)
            return -1;
        switch (t->kind) {
        case DR_DEP_AFTER:
            if (!d.started)
                all = 0;
            break;
        case DR_DEP_AFTERANY:
            if (!d.ended)
                all = 0;
            break;
        case DR_DEP_AFTEROK:
            if (d.ended && !d.ok)
                return -1;
            if (!d.ended)
                all = 0;
            break;
        case DR_DEP_AFTERNOTOK:
            if (d.ended && d.ok)
                return -1;
            if (!d.ended)
                all = 0;
            break;
        default: return -1;
        }
    }
    return all;
}

/* 1: release the job; 0: keep it waiting; -1: it can never run. */
static int deps_hold(dr_ctld_t *c, const ctld_job_t *cj)
{
    const dr_jobspec_t *sp = &cj->spec;
    bool any_ok = false, any_pending = false;
    for (uint32_t i = 0; i < sp->ndeps; i++) {
        int r = term(c, cj, &sp->deps[i]);
        if (sp->dep_any) {
            any_ok |= r == 1;
            any_pending |= r == 0;
        } else if (r != 1) {
            return r;
        }
    }
    if (!sp->dep_any)
        return 1;
    return any_ok ? 1 : any_pending ? 0 : -1;
}

int ctld_deps_check(dr_ctld_t *c, const dr_jobspec_t *sp, dr_err_t *err)
{
    for (uint32_t i = 0; i < sp->ndeps; i++)
        for (uint32_t k = 0; k < sp->deps[i].nrefs; k++) {
            const dr_dep_ref_t *r = &sp->deps[i].refs[k];
            if (r->task >= 0 && !ref_state(c, r).exists) {
                ctld_job_t *p = ctld_job_find(c, r->job);
                bool job = p || state_of(c, r->job).exists;
                return dr_err_set(err, DR_EINVAL, "dependency: %llu_%lld: %s %llu%s",
                                  (unsigned long long)r->job, (long long)r->task,
                                  job ? (p && !p->array ? "job" : "array") : "no such job",
                                  (unsigned long long)r->job,
                                  !job             ? ""
                                  : p && !p->array ? " is not an array"
                                                   : " has no such task");
            }
            if (!state_of(c, r->job).exists)
                return dr_err_set(err, DR_EINVAL, "dependency: job %llu: no such job",
                                  (unsigned long long)r->job);
        }
    return DR_OK;
}

int ctld_deps_hold(dr_ctld_t *c, ctld_job_t *cj)
{
    if (dr_grow((void **)&c->deps->held, &c->deps->cap, c->deps->n + 1, sizeof *c->deps->held) != 0)
        return DR_ENOMEM;
    c->deps->held[c->deps->n++] = cj;
    c->deps->recheck = true;
    snprintf(cj->reason, sizeof cj->reason, "waiting for its dependencies");
    ctld_job_dirty(c, cj);
    return DR_OK;
}

/* Dependencies change only when jobs start or end (or one is held or
 * released): a turn without such a change does not walk the waiting jobs,
 * so a long chain costs nothing while a burst of submits goes on. */
void ctld_deps_turn(dr_ctld_t *c)
{
    if (!c->deps->recheck)
        return;
    c->deps->recheck = false;
    for (size_t i = 0; i < c->deps->n;) {
        ctld_job_t *cj = c->deps->held[i];
        /* a held job keeps waiting whatever its dependencies say (holds.c) */
        int r = ctld_job_terminal(cj) ? -2 : cj->hold ? 0 : deps_hold(c, cj);
        if (r == 0) {
            i++;
            continue;
        }
        c->deps->held[i] = c->deps->held[--c->deps->n];
        if (r == 1) {
            dr_err_t err = {0};
            if (ctld_submit(c, cj, &err) != DR_OK)
                ctld_log("job %llu: %s", (unsigned long long)cj->j.id, err.msg);
        } else if (r == -1) {
            cj->j.state = DR_JOB_FAILED;
            cj->j.end = c->last_now;
            cj->has_exit = true;
            cj->exit_code = 1;
            snprintf(cj->reason, sizeof cj->reason, "its dependency can never be satisfied");
            ctld_evict_later(c, cj);
            ctld_job_dirty(c, cj);
            c->deps->recheck = true; /* an afternotok on this one holds now */
        }
    }
}

/* --- for the start estimate (test_only.c) --- */
typedef struct est_deps {
    dr_est_dep_t *d;
    size_t n, cap;
    uint32_t term;
    dr_time_t now;
} est_deps_t;

static int est_add(est_deps_t *o, uint64_t job, dr_time_t at, bool on_start)
{
    dr_est_dep_t d = {.job = job, .at = at, .term = o->term, .on_start = on_start};
    return DR_PUSH(o->d, o->n, o->cap, d) == 0 ? DR_OK : DR_ENOMEM;
}

/* Wait for job cj (not decided yet): itself, or an array by its tasks once
 * every one is queued (else by its own id, which nothing plans). */
static int est_job(est_deps_t *o, const ctld_job_t *cj, bool on_start)
{
    const ctld_array_t *a = cj->array;
    if (!a || a->next < a->nidx)
        return est_add(o, cj->j.id, 0, on_start);
    int rc = DR_OK;
    bool any = false;
    for (uint32_t i = 0; i < a->active && rc == DR_OK; i++)
        if (!ctld_job_terminal(a->live[i])) {
            rc = est_add(o, a->live[i]->j.id, 0, on_start);
            any = true;
        }
    return rc != DR_OK || any ? rc : est_add(o, 0, o->now, on_start);
}

/* One ref of a term of kind k. */
static int est_ref(dr_ctld_t *c, est_deps_t *o, uint8_t k, const dr_dep_ref_t *r)
{
    dep_state_t d = ref_state(c, r);
    bool on_start = k == DR_DEP_AFTER;
    if (!d.exists)
        return est_add(o, 0, DR_TIME_NEVER, on_start);
    if (on_start ? d.started : d.ended) {
        bool never = (k == DR_DEP_AFTEROK && !d.ok) || (k == DR_DEP_AFTERNOTOK && d.ok);
        return est_add(o, 0, never ? DR_TIME_NEVER : o->now, on_start);
    }
    ctld_job_t *p = ctld_job_find(c, r->job);
    if (r->task < 0)
        return p ? est_job(o, p, on_start) : est_add(o, r->job, 0, on_start);
    for (uint32_t i = 0; p && p->array && i < p->array->active; i++)
        if (p->array->live[i]->j.array_index == (uint32_t)r->task)
            return est_add(o, p->array->live[i]->j.id, 0, on_start);
    return est_add(o, r->job, 0, on_start); /* a task not queued yet: not planned */
}

int ctld_deps_estimate(dr_ctld_t *c, const ctld_job_t *cj, uint64_t id, dr_time_t now,
                       dr_est_dep_t **out, size_t *n)
{
    const dr_jobspec_t *sp = &cj->spec;
    est_deps_t o = {.now = now};
    int rc = DR_OK;
    for (uint32_t i = 0; i < sp->ndeps && rc == DR_OK; i++) {
        const dr_dep_t *t = &sp->deps[i];
        o.term = i;
        size_t had = o.n;
        if (t->kind == DR_DEP_SINGLETON) {
            /* every other not-ended job of this name and user submitted before */
            const char *b = sp->name ? sp->name : "";
            for (size_t k = 0; k < c->tab_cap && rc == DR_OK; k++) {
                const ctld_job_t *x = c->tab[k];
                if (!x || x == cj || x->parent || ctld_job_terminal(x) || x->j.id > id ||
                    !x->user || !cj->user || strcmp(x->user, cj->user) != 0)
                    continue;
                if (strcmp(x->spec.name ? x->spec.name : "", b) == 0)
                    rc = est_job(&o, x, false);
            }
        } else {
            for (uint32_t k = 0; k < t->nrefs && rc == DR_OK; k++)
                rc = est_ref(c, &o, t->kind, &t->refs[k]);
        }
        if (rc == DR_OK && o.n == had)
            rc = est_add(&o, 0, now, false); /* holds already */
    }
    if (rc != DR_OK) {
        free(o.d);
        o.d = NULL;
        o.n = 0;
    }
    *out = o.d;
    *n = o.n;
    return rc;
}

int ctld_deps_init(dr_ctld_t *c)
{
    c->deps = calloc(1, sizeof *c->deps);
    return c->deps ? DR_OK : DR_ENOMEM;
}

void ctld_deps_free(dr_ctld_t *c)
{
    if (c->deps)
        free(c->deps->held);
    free(c->deps);
    c->deps = NULL;
}

void ctld_deps_recheck(dr_ctld_t *c)
{
    c->deps->recheck = true;
}

bool ctld_deps_waiting(const dr_ctld_t *c, const ctld_job_t *cj)
{
    for (size_t i = 0; i < c->deps->n; i++)
        if (c->deps->held[i] == cj)
            return true;
    return false;
}

size_t ctld_deps_list(const dr_ctld_t *c, ctld_job_t *const **v)
{
    *v = c->deps->held;
    return c->deps->n;
}
