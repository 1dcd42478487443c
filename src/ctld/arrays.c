/* arrays.c - job arrays as Slurm keeps them: one record until tasks start.
 *
 * An array of 50,000 tasks is one row and one parent in memory; its tasks
 * are handed to the scheduler a few at a time (at most the throttle, and
 * at most a window of pending tasks), each getting its own id, row and
 * scheduler entry only then.  The parent counts the tasks that ended. */
#include <stdlib.h>
#include <string.h>

#include "ctld/ctld.h"
#include "ctld/accounts.h"
#include "ctld/arrays.h"
#include "ctld/classes.h"
#include "ctld/crashpoint.h"
#include "ctld/services.h"
#include "ctld/submit.h"
#include "ctld/turn.h"
#include "drover/util.h"

/* Pending tasks of one array the scheduler sees at once: enough to fill
 * every free GPU of a large cluster in one pass, few enough that a 50,000
 * task array costs the queue nothing. */
#define ARRAY_WINDOW 256

int ctld_array_setup(dr_ctld_t *c, ctld_job_t *parent, dr_err_t *err)
{
    ctld_array_t *a = calloc(1, sizeof *a);
    if (!a)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    size_t n = 0;
    int rc = dr_array_parse(parent->spec.array, &a->idx, &n, &a->throttle, err);
    if (rc != DR_OK) {
        free(a);
        return dr_err_prefix(err, "array: ");
    }
    if (n == 0 || n > UINT32_MAX) {
        free(a->idx);
        free(a);
        return dr_err_set(err, DR_EINVAL, "array: no tasks");
    }
    a->nidx = (uint32_t)n;
    a->first_fail_exit = 0;
    parent->array = a;
    (void)c;
    return DR_OK;
}

static uint32_t array_queued(const ctld_array_t *a)
{
    uint32_t q = 0;
    for (uint32_t i = 0; i < a->active; i++)
        q += a->live[i]->j.state == DR_JOB_PENDING;
    return q;
}

ctld_job_t *ctld_child_new(dr_ctld_t *c, ctld_job_t *parent, uint32_t index, uint8_t kind,
                           dr_time_t submit, dr_err_t *err)
{
    ctld_array_t *a = parent->array;
    if (dr_grow((void **)&a->live, &a->live_cap, a->active + 1, sizeof *a->live) != 0) {
        dr_err_set(err, DR_ENOMEM, "out of memory");
        return NULL;
    }
    ctld_job_t *t = calloc(1, sizeof *t);
    if (!t) {
        dr_err_set(err, DR_ENOMEM, "out of memory");
        return NULL;
    }
    dr_job_init(&t->j);
    dr_jobspec_init(&t->spec);
    if (dr_jobspec_to_job(&parent->spec, &c->cl, parent->j.submit, &t->j, err) != DR_OK) {
        ctld_job_free(t); /* accepted once, so only a changed config can get here */
        err->code = DR_EINVAL;
        return NULL;
    }
    t->j.id = c->next_id++;
    t->j.user = parent->j.user;
    t->j.account = ctld_account_id(c, &parent->spec); /* its account's limits hold for it */
    t->j.submit = submit;
    t->j.kind = kind;
    t->j.array_parent = parent->j.id;
    t->j.array_index = index;
    t->j.array_throttle = a->throttle;
    t->parent = parent;
    t->user = dr_strdup(parent->user);
    t->uid = parent->uid;
    t->gid = parent->gid;
    t->got_type = -1;
    snprintf(t->reason, sizeof t->reason, "queued");
    if (ctld_classes_assign(c, t, t->user, false, err) != DR_OK) {
        ctld_job_free(t); /* only out of memory, or past the classes' most */
        return NULL;
    }
    ctld_classes_explore(c, t); /* a large array's first tasks measure the types */
    if (ctld_job_insert(c, t) != DR_OK || ctld_submit(c, t, err) != DR_OK) {
        ctld_job_remove(c, t);
        ctld_job_free(t);
        err->code = DR_ENOMEM;
        return NULL;
    }
    a->live[a->active++] = t;
    return t;
}

/* Materialise the next tasks of `parent` the throttle and window allow. */
int ctld_array_feed(dr_ctld_t *c, ctld_job_t *parent, dr_time_t now)
{
    ctld_array_t *a = parent->array;
    if (parent->hold)
        return DR_OK; /* held: no task starts until it is released (holds.c) */
    if (a->svc) {
        ctld_service_feed(c, parent, now);
        return DR_OK;
    }
    uint32_t queued = array_queued(a), before = a->next;
    while (a->next < a->nidx && (!a->throttle || a->active < a->throttle) &&
           queued < ARRAY_WINDOW) {
        dr_err_t err = {0};
        uint32_t idx = a->idx[a->next];
        if (!ctld_child_new(c, parent, idx, DR_KIND_ARRAY, parent->j.submit, &err)) {
            ctld_log("array %llu: task %u%s: %s", (unsigned long long)parent->j.id, idx,
                     err.code == DR_EINVAL ? " can no longer be placed" : "", err.msg);
            if (err.code != DR_EINVAL)
                return DR_ENOMEM;
            a->count[DR_JOB_FAILED] += a->nidx - a->next;
            a->next = a->nidx;
            break;
        }
        a->next++;
        queued++;
        CTLD_CRASH_POINT(c, "array-expand"); /* some tasks made, none stored */
    }
    if (a->next != before)
        ctld_job_dirty(c, parent);
    (void)now;
    return DR_OK;
}

/* A task reached a terminal state: count it, drop it from the live set
 * and settle the parent once every task is done. */
void ctld_array_task_ended(dr_ctld_t *c, ctld_job_t *task)
{
    ctld_job_t *p = task->parent;
    ctld_array_t *a = p->array;
    if (a->svc) {
        ctld_service_run_ended(c, task);
        return;
    }
    for (uint32_t i = 0; i < a->active; i++)
        if (a->live[i] == task) {
            a->live[i] = a->live[--a->active];
            break;
        }
    a->count[task->j.state]++;
    if (task->j.state != DR_JOB_COMPLETED && !a->first_fail_exit)
        a->first_fail_exit = task->has_exit && task->exit_code > 0 ? task->exit_code : 1;
    if (p->j.state == DR_JOB_PENDING && task->j.first_start != DR_TIME_NEVER) {
        p->j.state = DR_JOB_RUNNING;
        p->j.first_start = p->j.start = task->j.first_start;
    }
    p->cost_usd += task->cost_usd;
    if (a->next >= a->nidx && a->active == 0) {
        /* all done: the parent ends in the worst state of its tasks */
        dr_job_state_t fin = DR_JOB_COMPLETED;
        if (a->count[DR_JOB_FAILED] || a->count[DR_JOB_TIMEOUT])
            fin = DR_JOB_FAILED;
        else if (a->count[DR_JOB_CANCELLED])
            fin = DR_JOB_CANCELLED;
        p->j.state = (uint8_t)fin;
        p->j.end = c->last_now;
        p->has_exit = true;
        p->exit_code = fin == DR_JOB_COMPLETED ? 0 : a->first_fail_exit;
        snprintf(p->reason, sizeof p->reason, "%u of %u tasks completed",
                 a->count[DR_JOB_COMPLETED], a->nidx);
        ctld_evict_later(c, p);
        ctld_arrays_drop(c, p);
    }
    ctld_job_dirty(c, p);
}

/* The parents with tasks left to feed (arrays) or slots to keep (services). */
struct ctld_arrays {
    ctld_job_t **v;
    size_t n, cap;
};

int ctld_arrays_init(dr_ctld_t *c)
{
    c->arrays = calloc(1, sizeof *c->arrays);
    return c->arrays ? DR_OK : DR_ENOMEM;
}

void ctld_arrays_free(dr_ctld_t *c)
{
    if (c->arrays)
        free(c->arrays->v);
    free(c->arrays);
    c->arrays = NULL;
}

int ctld_arrays_add(dr_ctld_t *c, ctld_job_t *parent)
{
    struct ctld_arrays *a = c->arrays;
    if (dr_grow((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v) != 0)
        return DR_ENOMEM;
    a->v[a->n++] = parent;
    return DR_OK;
}

void ctld_arrays_drop(dr_ctld_t *c, ctld_job_t *parent)
{
    struct ctld_arrays *a = c->arrays;
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i] == parent) {
            a->v[i] = a->v[--a->n];
            break;
        }
}

size_t ctld_arrays_list(const dr_ctld_t *c, ctld_job_t *const **v)
{
    *v = c->arrays->v;
    return c->arrays->n;
}

/* Each turn (a parent that ends in its feed leaves the list; the one moved
 * into its place waits for the next turn). */
void ctld_arrays_feed(dr_ctld_t *c, dr_time_t now)
{
    for (size_t i = 0; i < c->arrays->n; i++)
        ctld_array_feed(c, c->arrays->v[i], now);
}
