/* jobs.c - the controller's jobs in memory: a table by id, the dirty list
 * the next turn writes, and the API's JOB object.
 *
 * Memory holds the jobs that are not finished (and finished ones until
 * their row is written and the scheduler has seen them end); the store
 * holds everything, so a finished job leaves memory and is still shown. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/classes.h"
#include "ctld/accounts.h"
#include "ctld/ckpt.h"
#include "ctld/holds.h"
#include "ctld/services.h"
#include "ctld/shards.h"
#include "ctld/steps.h"
#include "ctld/turn.h"
#include "drover/hostlist.h"
#include "drover/joblist.h"
#include "drover/util.h"

static size_t slot_of(uint64_t id, size_t cap)
{
    uint64_t h = id * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

ctld_job_t *ctld_job_find(dr_ctld_t *c, uint64_t id)
{
    if (!c->tab_cap)
        return NULL;
    for (size_t i = slot_of(id, c->tab_cap);; i = (i + 1) & (c->tab_cap - 1)) {
        ctld_job_t *cj = c->tab[i];
        if (!cj)
            return NULL;
        if (cj->j.id == id)
            return cj;
    }
}

static void tab_put(ctld_job_t **tab, size_t cap, ctld_job_t *cj)
{
    size_t i = slot_of(cj->j.id, cap);
    while (tab[i])
        i = (i + 1) & (cap - 1);
    tab[i] = cj;
}

int ctld_job_insert(dr_ctld_t *c, ctld_job_t *cj)
{
    if ((c->tab_n + 1) * 2 > c->tab_cap) {
        size_t cap = c->tab_cap ? c->tab_cap * 2 : 1024;
        ctld_job_t **t = calloc(cap, sizeof *t);
        if (!t)
            return DR_ENOMEM;
        for (size_t i = 0; i < c->tab_cap; i++)
            if (c->tab[i])
                tab_put(t, cap, c->tab[i]);
        free(c->tab);
        c->tab = t;
        c->tab_cap = cap;
    }
    tab_put(c->tab, c->tab_cap, cj);
    c->tab_n++;
    return DR_OK;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
void ctld_job_remove(dr_ctld_t *c, ctld_job_t *cj)
{
    size_t mask = c->tab_cap - 1, i = slot_of(cj->j.id, c->tab_cap);
    while (c->tab[i] != cj) {
        if (!c->tab[i])
            return;
        i = (i + 1) & mask;
    }
    c->tab[i] = NULL;
    c->tab_n--;
    for (size_t j = (i + 1) & mask; c->tab[j]; j = (j + 1) & mask) {
        ctld_job_t *x = c->tab[j];
        size_t home = slot_of(x->j.id, c->tab_cap);
        /* x may stay at j unless its home lies cyclically in (i, j] */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            c->tab[i] = x;
            c->tab[j] = NULL;
            i = j;
        }
    }
}

void ctld_job_free(ctld_job_t *cj)
{
    if (!cj)
        return;
    dr_alloc_free(&cj->j.alloc);
    dr_alloc_free(&cj->run_alloc);
    dr_jobspec_free(&cj->spec);
    free(cj->user);
    free(cj->ranks);
    free(cj->nodes);
    free(cj->prev_nodes);
    free(cj->stale);
    ctld_steps_free(cj);
    free(cj->out_path);
    free(cj->err_path);
    if (cj->array) {
        if (cj->array->svc)
            free(cj->array->svc->slot);
        free(cj->array->svc);
        free(cj->array->idx);
        free(cj->array->live);
    }
    free(cj->array);
    free(cj);
}

void ctld_job_dirty(dr_ctld_t *c, ctld_job_t *cj)
{
    cj->dirty = true;
    if (cj->dirty_listed)
        return;
    if (dr_grow((void **)&c->dirty, &c->dirty_cap, c->ndirty + 1, sizeof *c->dirty) != 0)
        return; /* stays dirty; listed again on its next change */
    c->dirty[c->ndirty++] = cj;
    cj->dirty_listed = true;
    ctld_turn_schedule(c);
}

bool ctld_job_terminal(const ctld_job_t *cj)
{
    return dr_job_state_terminal((dr_job_state_t)cj->j.state);
}

const char *ctld_job_state_name(const ctld_job_t *cj)
{
    return dr_job_state_name((dr_job_state_t)cj->j.state);
}

/* A time the API shows: Unix seconds, NaN for none (0 or never). */
static double time_s(dr_time_t t)
{
    return t > 0 && t != DR_TIME_NEVER ? dr_time_to_s(t) : NAN;
}

static json_t *time_or_null(dr_time_t t)
{
    double s = time_s(t);
    return isnan(s) ? json_null() : json_real(s);
}

/* Price of one GPU-hour of type t (0 when the catalog has none). */
double ctld_price_hr(const dr_ctld_t *c, int t)
{
    if (t < 0 || (size_t)t >= c->cl.ntypes)
        return 0;
    double p = c->cl.types[t].price_hr;
    return isfinite(p) ? p : 0;
}

const char *ctld_job_name(const ctld_job_t *cj, const char *fallback)
{
    const dr_jobspec_t *sp = cj->parent ? &cj->parent->spec : &cj->spec;
    return sp->name          ? sp->name
           : sp->script_name ? sp->script_name
           : sp->argc        ? sp->argv[0]
                             : fallback;
}

static bool job_live(const ctld_job_t *cj)
{
    uint8_t st = cj->j.state;
    return st == DR_JOB_STARTING || st == DR_JOB_RUNNING || st == DR_JOB_COMPLETING;
}

uint32_t ctld_job_ngpus(const ctld_job_t *cj)
{
    const dr_job_t *j = &cj->j;
    uint32_t gpus = cj->got_gpus;
    if (!gpus && !cj->array)
        gpus = j->req.nodes ? j->req.nodes * j->req.gpus_per_node : j->req.gpus_per_node;
    return gpus;
}

const char *ctld_job_got_type(const dr_ctld_t *c, const ctld_job_t *cj)
{
    return cj->got_type >= 0 && (size_t)cj->got_type < c->cl.ntypes ? c->cl.types[cj->got_type].name
                                                                    : NULL;
}

const char *ctld_job_req_type(const ctld_job_t *cj)
{
    const dr_jobspec_t *sp = cj->parent ? &cj->parent->spec : &cj->spec;
    return sp->gpu_type ? sp->gpu_type : "any";
}

double ctld_job_elapsed(const dr_ctld_t *c, const ctld_job_t *cj)
{
    const dr_job_t *j = &cj->j;
    if (j->first_start == DR_TIME_NEVER)
        return 0;
    dr_time_t until = job_live(cj) ? c->last_now : j->end;
    return until > j->start ? dr_time_to_s(until - j->start) : 0;
}

double ctld_job_cost(dr_ctld_t *c, const ctld_job_t *cj)
{
    double cost =
        cj->cost_usd; /* its finished runs (an array's, a service's: its ended children's) */
    if (job_live(cj))
        cost += ctld_job_elapsed(c, cj) / 3600.0 * cj->got_gpus * ctld_price_hr(c, cj->got_type);
    for (uint32_t i = 0; cj->array && i < cj->array->active; i++)
        cost += ctld_job_cost(c, cj->array->live[i]); /* and the children still running */
    return cost;
}

double ctld_round_ms(double s)
{
    return round(s * 1e3) / 1e3;
}

void ctld_array_tasks(const ctld_array_t *a, ctld_tasks_t *t)
{
    uint32_t done = a->count[DR_JOB_COMPLETED] + a->count[DR_JOB_FAILED] +
                    a->count[DR_JOB_CANCELLED] + a->count[DR_JOB_TIMEOUT];
    uint32_t running = 0;
    for (uint32_t i = 0; i < a->active; i++)
        running += a->live[i]->j.state != DR_JOB_PENDING;
    t->total = a->nidx;
    t->pending = a->nidx - done - running;
    t->running = running;
    t->completed = a->count[DR_JOB_COMPLETED];
    t->failed = a->count[DR_JOB_FAILED] + a->count[DR_JOB_TIMEOUT];
    t->cancelled = a->count[DR_JOB_CANCELLED];
    t->timeout = a->count[DR_JOB_TIMEOUT];
}

const char *ctld_job_reason(const dr_ctld_t *c, const ctld_job_t *cj)
{
    const char *limited = ctld_account_blocked_reason(c, cj);
    return limited ? limited : cj->reason;
}

/* The nodes of the current (or last) run as one expression, "n[1-4]";
 * malloc'd, NULL for none. */
static char *nodelist(const dr_ctld_t *c, const ctld_job_t *cj)
{
    if (!cj->nnodes)
        return NULL;
    /* the names on the stack for the usual few nodes */
    const char *few[64] = {0}, **names = cj->nnodes <= 64 ? few : calloc(cj->nnodes, sizeof *names);
    for (uint32_t i = 0; names && i < cj->nnodes; i++)
        names[i] = c->cl.nodes[cj->nodes[i]].name;
    char *nl = names ? dr_hostlist_compress(names, cj->nnodes) : NULL;
    if (names != few)
        free(names);
    return nl;
}

char *ctld_job_row(dr_ctld_t *c, const ctld_job_t *cj, double now, dr_joblist_row_t *r)
{
    const dr_job_t *j = &cj->j;
    if (j->array_parent)
        snprintf(r->id, sizeof r->id, "%llu_%u", (unsigned long long)j->array_parent,
                 (unsigned)j->array_index);
    else
        snprintf(r->id, sizeof r->id, "%llu", (unsigned long long)j->id);
    r->name = ctld_job_name(cj, "");
    r->user = cj->user ? cj->user : "";
    r->kind = dr_job_kind_name((dr_job_kind_t)j->kind);
    r->state = ctld_job_state_name(cj);
    r->gpus = ctld_job_ngpus(cj);
    r->gpu_type = dr_joblist_type(ctld_job_got_type(c, cj), ctld_job_req_type(cj));
    /* the values ctld_job_json gives start_time, end_time and elapsed */
    double start = j->first_start != DR_TIME_NEVER ? time_s(j->start) : NAN;
    double end = ctld_job_terminal(cj) ? time_s(j->end) : NAN;
    r->time_s = dr_joblist_time(r->state, time_s(j->submit), start, end,
                                ctld_round_ms(ctld_job_elapsed(c, cj)), now);
    r->reason = ctld_job_reason(c, cj);
    r->summary[0] = '\0';
    if (!*r->reason && cj->array && !cj->array->svc) {
        ctld_tasks_t t;
        ctld_array_tasks(cj->array, &t);
        dr_joblist_tasks_summary(r->summary, sizeof r->summary,
                                 (long long)t.completed + t.failed + t.cancelled, t.total,
                                 t.running);
        r->reason = r->summary;
    }
    char *nl = nodelist(c, cj);
    r->nodelist = nl ? nl : "";
    return nl;
}

json_t *ctld_job_obj(dr_ctld_t *c, const ctld_job_t *cj)
{
    const dr_job_t *j = &cj->j;
    const dr_jobspec_t *sp = cj->parent ? &cj->parent->spec : &cj->spec;
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer((json_int_t)j->id));
    json_object_set_new(o, "name", json_string(ctld_job_name(cj, "")));
    json_object_set_new(o, "user", json_string(cj->user ? cj->user : ""));
    json_object_set_new(o, "uid", json_integer(cj->uid));
    json_object_set_new(o, "gid", json_integer(cj->gid));
    json_object_set_new(o, "account", json_string(sp->account ? sp->account : ""));
    json_object_set_new(o, "kind", json_string(dr_job_kind_name((dr_job_kind_t)j->kind)));
    json_object_set_new(o, "state", json_string(ctld_job_state_name(cj)));
    json_object_set_new(o, "reason", json_string(ctld_job_reason(c, cj)));
    json_object_set_new(o, "priority", json_integer(cj->array ? sp->priority : j->priority));
    const char *hold = ctld_hold_name(cj->hold);
    json_object_set_new(o, "hold", hold ? json_string(hold) : json_null());
    json_object_set_new(o, "exit_code", cj->has_exit ? json_integer(cj->exit_code) : json_null());
    json_object_set_new(o, "signal",
                        cj->has_exit && cj->signal ? json_integer(cj->signal) : json_null());
    const char *got = ctld_job_got_type(c, cj);
    json_object_set_new(o, "gpu_type", got ? json_string(got) : json_null());
    json_object_set_new(o, "gpu_types_requested", json_string(ctld_job_req_type(cj)));
    /* nodes: of the current (or last) run */
    json_t *nodes = json_array();
    uint32_t nn = cj->nnodes;
    for (uint32_t i = 0; i < nn; i++)
        json_array_append_new(nodes, json_string(c->cl.nodes[cj->nodes[i]].name));
    json_object_set_new(o, "nodes", nodes);
    char *nl = nodelist(c, cj);
    json_object_set_new(o, "nodelist", json_string(nl ? nl : ""));
    free(nl);
    json_object_set_new(o, "nnodes", json_integer(nn));
    json_object_set_new(o, "ntasks", json_integer(cj->nnodes ? cj->ntasks : 0));
    json_object_set_new(o, "steps", ctld_steps_json(c, cj));
    uint32_t gpus = ctld_job_ngpus(cj);
    json_object_set_new(o, "gpus", json_integer(gpus));
    json_object_set_new(o, "submit_time", time_or_null(j->submit));
    json_object_set_new(o, "start_time",
                        j->first_start != DR_TIME_NEVER ? time_or_null(j->start) : json_null());
    json_object_set_new(o, "end_time", ctld_job_terminal(cj) ? time_or_null(j->end) : json_null());
    json_object_set_new(o, "time_limit", /* the one enforced: --time or the partition's */
                        j->time_limit ? json_real(dr_time_to_s(j->time_limit)) : json_null());
    json_object_set_new(o, "deadline", j->deadline ? time_or_null(j->deadline) : json_null());
    json_t *speeds = ctld_classes_job_obj(c, cj); /* each type's speed, time and cost */
    json_object_set_new(o, "speeds", speeds ? speeds : json_null());
    double elapsed = ctld_job_elapsed(c, cj), cost = ctld_job_cost(c, cj);
    json_object_set_new(o, "elapsed", json_real(ctld_round_ms(elapsed)));
    json_object_set_new(o, "cost_usd", json_real(round(cost * 1e6) / 1e6));
    json_object_set_new(o, "array", sp->array ? json_string(sp->array) : json_null());
    json_object_set_new(o, "array_parent",
                        j->array_parent ? json_integer((json_int_t)j->array_parent) : json_null());
    json_object_set_new(o, "array_index",
                        j->array_parent ? json_integer(j->array_index) : json_null());
    const char *shard = ctld_job_shard(c, cj);
    json_object_set_new(o, "shard", shard ? json_string(shard) : json_null());
    ctld_service_json(c, cj, o);
    if (cj->array && !cj->array->svc) {
        ctld_tasks_t t;
        ctld_array_tasks(cj->array, &t);
        json_object_set_new(o, "tasks",
                            json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "total", (json_int_t)t.total,
                                      "pending", (json_int_t)t.pending, "running",
                                      (json_int_t)t.running, "completed", (json_int_t)t.completed,
                                      "failed", (json_int_t)t.failed, "cancelled",
                                      (json_int_t)t.cancelled, "timeout", (json_int_t)t.timeout));
    }
    json_t *argv = json_array();
    for (uint32_t i = 0; i < sp->argc; i++)
        json_array_append_new(argv, json_string(sp->argv[i]));
    json_object_set_new(o, "argv", argv);
    json_object_set_new(o, "out_path", json_string(cj->out_path ? cj->out_path : ""));
    json_object_set_new(o, "err_path", json_string(cj->err_path ? cj->err_path : ""));
    json_object_set_new(o, "generation", json_integer(cj->gen));
    char ckdir[1200];
    json_object_set_new(o, "checkpoint_dir",
                        !cj->array && ctld_ckpt_dir(c, cj, ckdir, sizeof ckdir) ? json_string(ckdir)
                                                                                : json_null());
    /* accounting (docs/api.md): from the rounded elapsed, as GET /v1/history
     * computes them; an array parent's are its tasks' (null here) */
    double rel = ctld_round_ms(elapsed), gh = gpus * rel / 3600.0;
    double tdp = got ? c->cl.types[cj->got_type].tdp_w : NAN;
    json_object_set_new(o, "gpu_hours", cj->array ? json_null() : json_real(round(gh * 1e6) / 1e6));
    json_object_set_new(o, "energy_kwh",
                        cj->array                  ? json_null()
                        : gh == 0                  ? json_real(0)
                        : isfinite(tdp) && tdp > 0 ? json_real(round(gh * tdp / 1e3 * 1e6) / 1e6)
                                                   : json_null());
    return o;
}

char *ctld_job_json(dr_ctld_t *c, const ctld_job_t *cj)
{
    json_t *o = ctld_job_obj(c, cj);
    char *s = o ? json_dumps(o, CTLD_JSON_FLAGS) : NULL;
    json_decref(o);
    return s;
}
