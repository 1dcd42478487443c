/* classes.c - how fast each job runs on each GPU type, as the controller
 * knows it: the perf table every policy reads (dr_sched_opts_t.perf), one row
 * per class of jobs.
 *
 * Why: without it droverd handed policies no speeds, dr_perf_rate answered
 * 1 for every type, and live type choice ignored speed (issue 23).  Each
 * row now rests on something real:
 *  - a job that declares nothing runs in a prior class of its kind: the
 *    catalog's throughput ratios (bandwidth for services), perf_prior.h;
 *  - --speeds H100=1,A100=0.45 makes a class of that declaration;
 *  - --class NAME (per user: another user cannot teach your class) and an
 *    array's tasks (a class per array) learn from their completed runs
 *    (perf_learn.h), on top of the declared or the catalog prior; what they
 *    learned is stored in the turn's commit and survives a restart.
 * A job's work (dr_job_t.work_declared, in seconds on its class's
 * reference type) is its --estimate, else its class's learned size, else
 * unknown (the policies' size estimator then uses what completed jobs
 * took).  Rows are never removed: a class lives as long as the controller;
 * past CLASSES_MAX, new jobs that would make a class run by the catalog's
 * prior instead (an array's class is not recycled when it ends). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld/classes.h"
#include "ctld/log.h"
#include "ctld/store.h"
#include "drover/perf_learn.h"
#include "drover/perf_prior.h"
#include "drover/perfmodel.h"
#include "drover/placement.h"
#include "drover/plan.h"
#include "drover/text.h"
#include "drover/util.h"

#define CLASSES_MAX 200000
/* arrays this large explore: one task to each type their class has not run
 * on (so at most a GPU type's share of 1/32 of the array) */
#define CLASSES_EXPLORE_MIN 32

typedef struct cls {
    char *owner; /* "" for the shared prior and declared-speed classes */
    char *label; /* as shown: the user's NAME, "array 12", "declared", "catalog" */
    uint8_t kind, prec;
    bool learns;        /* named and array classes: their runs teach */
    bool absolute;      /* a --model class: rates in tokens per second, as the model gives them */
    uint64_t exploring; /* types an array task was sent to for a first run there */
    bool dirty;
    char *speeds; /* the declared speeds its prior rests on; NULL = the catalog */
    double tau;
    double *prior;      /* [nt] relative speeds */
    uint8_t *prior_src; /* [nt] dr_prior_src_t */
    dr_perf_obs_t *obs; /* [nt] its completed runs */
    double size;        /* one run's work, seconds on its reference type; 0 = no run seen */
} cls_t;

struct ctld_classes {
    dr_perf_table_t table;
    dr_perf_view_t view;
    dr_strtab_t keys; /* key id k is row k + 1 */
    cls_t **v;        /* v[row - 1] */
    size_t n, cap;
    size_t nt;
    bool dirty;
};

static void cls_free(cls_t *k)
{
    if (!k)
        return;
    free(k->owner);
    free(k->label);
    free(k->speeds);
    free(k->prior);
    free(k->prior_src);
    free(k->obs);
    free(k);
}

int ctld_classes_init(dr_ctld_t *c, dr_err_t *err)
{
    struct ctld_classes *cc = calloc(1, sizeof *cc);
    if (!cc)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    c->classes = cc;
    dr_perf_init(&cc->table);
    cc->nt = c->cl.ntypes < DR_MAX_GPU_TYPES ? c->cl.ntypes : DR_MAX_GPU_TYPES;
    const char *names[DR_MAX_GPU_TYPES];
    for (size_t t = 0; t < cc->nt; t++)
        names[t] = c->cl.types[t].name;
    if (dr_perf_set_types(&cc->table, names, cc->nt) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    cc->view.table = &cc->table;
    for (size_t t = 0; t < DR_MAX_GPU_TYPES; t++)
        cc->view.map[t] = t < cc->nt ? (int)t : -1; /* the columns are the cluster's types */
    return DR_OK;
}

void ctld_classes_free(dr_ctld_t *c)
{
    struct ctld_classes *cc = c->classes;
    if (!cc)
        return;
    for (size_t i = 0; i < cc->n; i++)
        cls_free(cc->v[i]);
    free(cc->v);
    dr_strtab_free(&cc->keys);
    dr_perf_free(&cc->table);
    free(cc);
    c->classes = NULL;
}

const dr_perf_view_t *ctld_classes_view(dr_ctld_t *c)
{
    return &c->classes->view;
}

/* The prior's kind: services are bound by memory bandwidth, the rest by
 * throughput. */
static uint8_t prior_kind(uint8_t kind)
{
    return kind == DR_KIND_SERVE ? DR_KIND_SERVE : DR_KIND_BATCH;
}

/* k's prior from its kind, precision and declared speeds. */
static int set_prior(dr_ctld_t *c, cls_t *k, const char *speeds, dr_err_t *err)
{
    struct ctld_classes *cc = c->classes;
    double cat[DR_MAX_GPU_TYPES];
    uint8_t src[DR_MAX_GPU_TYPES];
    dr_perf_prior_catalog(&c->cl, (dr_job_kind_t)k->kind, (dr_precision_t)k->prec, cat, src);
    double rates[DR_MAX_GPU_TYPES];
    if (speeds) {
        dr_speeds_t sp;
        int rc = dr_speeds_parse(speeds, &sp, err);
        if (rc == DR_OK)
            rc = dr_perf_prior_declared(&c->cl, &c->cat, &sp, cat, rates, src, err);
        if (rc != DR_OK)
            return rc;
    } else {
        memcpy(rates, cat, cc->nt * sizeof *rates);
    }
    char *dup = speeds ? dr_strdup(speeds) : NULL;
    if (speeds && !dup)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    free(k->speeds);
    k->speeds = dup;
    k->tau = speeds ? DR_PERF_TAU_DECLARED : DR_PERF_TAU_CATALOG;
    memcpy(k->prior, rates, cc->nt * sizeof *rates);
    memcpy(k->prior_src, src, cc->nt);
    return DR_OK;
}

static void estimate(const struct ctld_classes *cc, const cls_t *k, dr_perf_est_t *e)
{
    dr_perf_estimate(k->prior, k->tau, k->obs, cc->nt, e);
    if (k->absolute) /* the model's tokens per second, unscaled: the work is in tokens */
        for (size_t t = 0; t < cc->nt; t++)
            e->rate[t] = k->prior[t];
}

/* The table's row and the size from k's prior and runs. */
static void refresh(struct ctld_classes *cc, cls_t *k, int row)
{
    dr_perf_est_t e;
    estimate(cc, k, &e);
    k->size = e.size;
    dr_perf_set_rates(&cc->table, row, e.rate);
}

/* Find the class `key` or make it (rc: DR_ELIMIT past CLASSES_MAX). */
static int get_class(dr_ctld_t *c, const char *key, const char *owner, const char *label,
                     uint8_t kind, uint8_t prec, const char *speeds, bool learns, int *row,
                     dr_err_t *err)
{
    struct ctld_classes *cc = c->classes;
    int64_t id = dr_strtab_find(&cc->keys, key);
    if (id >= 0) {
        *row = (int)id + 1;
        return DR_OK;
    }
    if (cc->n >= CLASSES_MAX && strncmp(key, "prior:", 6) != 0)
        return dr_err_set(err, DR_ELIMIT, "class: the controller holds %d job classes, its most",
                          CLASSES_MAX);
    cls_t *k = calloc(1, sizeof *k);
    size_t nt = cc->nt ? cc->nt : 1;
    if (k) {
        k->owner = dr_strdup(owner);
        k->label = dr_strdup(label);
        k->prior = calloc(nt, sizeof *k->prior);
        k->prior_src = calloc(nt, 1);
        k->obs = calloc(nt, sizeof *k->obs);
    }
    if (!k || !k->owner || !k->label || !k->prior || !k->prior_src || !k->obs ||
        dr_grow((void **)&cc->v, &cc->cap, cc->n + 1, sizeof *cc->v) != 0) {
        cls_free(k);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    k->kind = prior_kind(kind);
    k->prec = prec;
    k->learns = learns;
    int rc = set_prior(c, k, speeds, err);
    if (rc != DR_OK) {
        cls_free(k);
        return rc;
    }
    dr_perf_est_t e;
    estimate(cc, k, &e);
    int r = dr_perf_append_class(&cc->table, key, e.rate);
    if (r < 0 || dr_strtab_intern(&cc->keys, key) != r - 1) {
        cls_free(k); /* (a failed intern leaves a row no job uses) */
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    k->size = e.size;
    cc->v[cc->n++] = k;
    *row = r;
    return DR_OK;
}

static cls_t *of_row(const dr_ctld_t *c, uint32_t row)
{
    const struct ctld_classes *cc = c->classes;
    return row >= 1 && row <= cc->n ? cc->v[row - 1] : NULL;
}

/* The request's GPUs in all (a share counts as one). */
static uint32_t req_gpus(const dr_job_req_t *r)
{
    return r->nodes ? r->nodes * r->gpus_per_node : r->gpus_per_node;
}

/* Work of j in its class's units: its --estimate at the prior's scale,
 * else the class's learned size, else 0. */
static double work_of(const dr_ctld_t *c, const cls_t *k, const dr_jobspec_t *sp)
{
    if (sp->estimate > 0) {
        double top = 0;
        for (size_t t = 0; t < c->classes->nt; t++)
            if (k->prior[t] > top)
                top = k->prior[t];
        return top > 0 ? dr_time_to_s(sp->estimate) / top : dr_time_to_s(sp->estimate);
    }
    return k->size;
}

static int check_deadline(dr_ctld_t *c, const ctld_job_t *cj, const dr_jobspec_t *sp,
                          const cls_t *k, dr_err_t *err)
{
    const dr_job_t *j = &cj->j;
    if (!sp->deadline || !(j->work_declared > 0))
        return DR_OK;
    dr_typemask_t m = dr_perf_runnable(&c->classes->view, &c->cl, j);
    double best = INFINITY;
    int bt = -1;
    for (size_t t = 0; t < c->classes->nt; t++) {
        double r = dr_perf_rate(&c->classes->view, j, (unsigned)t);
        if ((m >> t & 1) && r > 0 && j->work_declared / r < best) {
            best = j->work_declared / r;
            bt = (int)t;
        }
    }
    double left = dr_time_to_s(sp->deadline);
    if (bt < 0 || best <= left)
        return DR_OK;
    char need[32], have[32];
    dr_duration_format(best, DR_DURATION_WORDS, need, sizeof need);
    dr_duration_format(left, DR_DURATION_WORDS, have, sizeof have);
    return dr_err_set(err, DR_EINVAL,
                      "deadline: the job needs about %s even on its fastest type (%s, by %s) and "
                      "its deadline is %s away: give a later --deadline, or none",
                      need, c->cl.types[bt].name,
                      sp->estimate       ? "its --estimate"
                      : k && k->absolute ? "its --model and --tokens"
                      : k && k->learns   ? "its class's runs"
                                         : "its class",
                      have);
}

/* A job that declares its model (--model, --tokens): a class of that model
 * on its GPU count whose rates are the performance model's tokens per
 * second on each type (drover plan's model), its work the tokens. */
static int model_class(dr_ctld_t *c, ctld_job_t *cj, const dr_jobspec_t *sp, bool deadline,
                       dr_err_t *err)
{
    dr_job_t *j = &cj->j;
    if (sp->perf_class || sp->speeds)
        return dr_err_set(err, DR_EINVAL,
                          "model: give --model or --speeds, not both, and --class without "
                          "--model (a class learns from its own runs)");
    dr_perfmodel_arch_t arch;
    int rc = dr_plan_model_parse(sp->model, &arch, err);
    if (rc != DR_OK) /* its messages start "model: " */
        return rc;
    double tokens = 0;
    if (sp->tokens && (dr_plan_parse_count(sp->tokens, &tokens) != 0 || !(tokens > 0)))
        return dr_err_set(err, DR_EINVAL, "tokens: '%.64s' is not a count (500B, 2T, 1e12)",
                          sp->tokens);
    uint32_t g = req_gpus(&j->req);
    double share = j->req.gpu_milli && j->req.gpu_milli < 1000 ? j->req.gpu_milli / 1000.0 : 1;
    double rates[DR_MAX_GPU_TYPES] = {0};
    bool any = false;
    for (size_t t = 0; t < c->classes->nt; t++) {
        dr_perfmodel_net_t net;
        double r = 0;
        if (dr_perfmodel_net_from_cluster(&net, &c->cl, (unsigned)t, NULL) == DR_OK &&
            dr_perfmodel_hint_rate(arch.params, DR_PREC_BF16, g, &c->cl.types[t], &net, &r, NULL,
                                   NULL) == DR_OK &&
            isfinite(r) && r > 0)
            rates[t] = r * share;
        any |= rates[t] > 0;
    }
    if (!any)
        return dr_err_set(err, DR_EINVAL,
                          "model: a %.3g-parameter model fits no GPU type of this cluster on %u "
                          "GPU%s",
                          arch.params, g, g == 1 ? "" : "s");
    char key[128], label[128];
    snprintf(key, sizeof key, "model:%.6g:%u:%u", arch.params, g, (unsigned)(share * 1000));
    snprintf(label, sizeof label, "model %.64s on %u GPU%s", sp->model, g, g == 1 ? "" : "s");
    int row = 0;
    rc = get_class(c, key, "", label, DR_KIND_TRAIN, DR_PREC_BF16, NULL, false, &row, err);
    if (rc != DR_OK)
        return rc;
    cls_t *k = of_row(c, (uint32_t)row);
    if (!k->absolute) { /* new: the model's rates replace the catalog prior */
        k->absolute = true;
        memcpy(k->prior, rates, c->classes->nt * sizeof *rates);
        for (size_t t = 0; t < c->classes->nt; t++)
            k->prior_src[t] = rates[t] > 0 ? DR_PRIOR_MODEL : DR_PRIOR_NONE;
        refresh(c->classes, k, row);
    }
    j->perf_class = (uint32_t)row;
    j->hint_params = arch.params;
    j->work_declared = tokens;
    return deadline ? check_deadline(c, cj, sp, k, err) : DR_OK;
}

int ctld_classes_assign(dr_ctld_t *c, ctld_job_t *cj, const char *user, bool deadline,
                        dr_err_t *err)
{
    const dr_jobspec_t *sp = ctld_job_spec(cj);
    dr_job_t *j = &cj->j;
    j->perf_class = 0;
    j->work_declared = 0;
    if (!j->req.gpus_per_node)
        return DR_OK; /* no GPU: every type is the same to it */
    if (j->kind == DR_KIND_SERVE && !sp->speeds && !sp->perf_class)
        return DR_OK; /* a service runs as long on any type: it pays by the hour, its types are
                         the ones that serve it well enough (--gpu-type, --gpu-mem) */
    if (sp->model)
        return model_class(c, cj, sp, deadline, err);
    char key[512], label[320];
    const char *owner = "", *speeds = sp->speeds;
    bool learns = false;
    uint8_t pk = prior_kind(j->kind);
    if (sp->perf_class) {
        owner = user ? user : "";
        snprintf(key, sizeof key, "class:%s/%s", owner, sp->perf_class);
        snprintf(label, sizeof label, "%s", sp->perf_class);
        learns = true;
    } else if (j->array_parent && j->kind != DR_KIND_SERVE) {
        owner = user ? user : "";
        snprintf(key, sizeof key, "array:%llu", (unsigned long long)j->array_parent);
        snprintf(label, sizeof label, "array %llu", (unsigned long long)j->array_parent);
        learns = true;
    } else if (speeds) {
        snprintf(key, sizeof key, "speeds:%u:%u:%s", pk, j->precision, speeds);
        snprintf(label, sizeof label, "declared speeds");
    } else {
        snprintf(key, sizeof key, "prior:%u:%u", pk, j->precision);
        snprintf(label, sizeof label, "catalog");
    }
    int row = 0;
    int rc = get_class(c, key, owner, label, pk, j->precision, speeds, learns, &row, err);
    if (rc == DR_ELIMIT) {
        /* full (a user making classes without end must not stop others'
         * submits): the job runs by the catalog's prior, said in the log */
        ctld_log("job of %s: %s: it runs by the catalog's speeds", owner[0] ? owner : "?",
                 err->msg);
        snprintf(key, sizeof key, "prior:%u:%u", pk, j->precision);
        snprintf(label, sizeof label, "catalog");
        speeds = NULL;
        learns = false;
        rc = get_class(c, key, "", label, pk, j->precision, NULL, false, &row, err);
    }
    if (rc != DR_OK)
        return rc;
    cls_t *k = of_row(c, (uint32_t)row);
    /* a new declaration of a learning class's speeds replaces its prior */
    if (learns && speeds && (!k->speeds || strcmp(k->speeds, speeds) != 0)) {
        if ((rc = set_prior(c, k, speeds, err)) != DR_OK)
            return rc;
        refresh(c->classes, k, row);
        k->dirty = c->classes->dirty = true;
    }
    j->perf_class = (uint32_t)row;
    j->work_declared = work_of(c, k, sp);
    return deadline ? check_deadline(c, cj, sp, k, err) : DR_OK;
}

bool ctld_classes_explore(dr_ctld_t *c, ctld_job_t *task)
{
    const ctld_job_t *p = task->parent;
    const dr_jobspec_t *sp = ctld_job_spec(task);
    cls_t *k = of_row(c, task->j.perf_class);
    if (!p || !p->array || p->array->svc || p->array->nidx < CLASSES_EXPLORE_MIN || !k ||
        !k->learns || sp->shard || sp->shard_list || task->j.req.pref[0])
        return false; /* small arrays, services, data-bound or ordered tasks do not explore */
    dr_job_t *j = &task->j;
    dr_typemask_t run = dr_perf_runnable(&c->classes->view, &c->cl, j);
    dr_time_t now = ctld_now(c);
    for (size_t t = 0; t < c->classes->nt; t++) {
        dr_typemask_t bit = (dr_typemask_t)1 << t;
        if (!(run & bit) || k->obs[t].n || (k->exploring & bit) ||
            !dr_place_fits_quick(&c->cl, &j->req, bit))
            continue;
        /* not where it would miss its deadline by the estimate */
        double r = dr_perf_rate(&c->classes->view, j, (unsigned)t);
        if (j->deadline && j->work_declared > 0 && r > 0 &&
            now + dr_time_from_s(j->work_declared / r) > j->deadline)
            continue;
        j->req.types = bit;
        k->exploring |= bit;
        ctld_log("job %llu: task %u of array %llu explores %s (its class has no run there)",
                 (unsigned long long)j->id, j->array_index, (unsigned long long)p->j.id,
                 c->cl.types[t].name);
        return true;
    }
    return false;
}

void ctld_classes_observe(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now)
{
    cls_t *k = of_row(c, cj->j.perf_class);
    if (!k || !k->learns || cj->got_type < 0 || (size_t)cj->got_type >= c->classes->nt ||
        cj->j.nstarts != 1 || now <= cj->j.start)
        return; /* a run resumed from a checkpoint shows only part of the work */
    dr_perf_obs_add(&k->obs[cj->got_type], dr_time_to_s(now - cj->j.start));
    refresh(c->classes, k, (int)cj->j.perf_class);
    k->dirty = c->classes->dirty = true;
}

static json_t *runs_json(const dr_ctld_t *c, const cls_t *k)
{
    json_t *o = json_object();
    for (size_t t = 0; o && t < c->classes->nt; t++)
        if (k->obs[t].n)
            json_object_set_new(
                o, c->cl.types[t].name,
                json_pack("[I,f,f]", (json_int_t)k->obs[t].n, k->obs[t].sum, k->obs[t].sum2));
    return o;
}

int ctld_classes_save(dr_ctld_t *c, dr_err_t *err)
{
    struct ctld_classes *cc = c->classes;
    if (!cc || !cc->dirty)
        return DR_OK;
    int rc = DR_OK;
    for (size_t i = 0; i < cc->n && rc == DR_OK; i++) {
        cls_t *k = cc->v[i];
        if (!k->dirty || !k->learns)
            continue;
        json_t *o = runs_json(c, k);
        char *runs = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
        json_decref(o);
        if (!runs)
            return dr_err_set(err, DR_ENOMEM, "out of memory");
        ctld_class_row_t r = {.name = dr_strtab_get(&cc->keys, (uint32_t)i),
                              .owner = k->owner,
                              .speeds = k->speeds,
                              .runs = runs,
                              .kind = k->kind,
                              .prec = k->prec};
        rc = ctld_store_put_class(c, &r, err);
        free(runs);
    }
    /* flags fall only once the rows are written (a failed commit is retried
     * with the next turn's, which rewrites them) */
    for (size_t i = 0; i < cc->n && rc == DR_OK; i++)
        cc->v[i]->dirty = false;
    if (rc == DR_OK)
        cc->dirty = false;
    return rc;
}

static int restore_row(dr_ctld_t *c, const ctld_class_row_t *r, dr_err_t *err)
{
    const char *label = r->name;
    if (!strncmp(label, "class:", 6) && strchr(label, '/'))
        label = strchr(label, '/') + 1;
    char buf[64];
    if (!strncmp(r->name, "array:", 6)) {
        snprintf(buf, sizeof buf, "array %s", r->name + 6);
        label = buf;
    }
    int row = 0;
    dr_err_t e2 = {0};
    int rc = get_class(c, r->name, r->owner, label, (uint8_t)r->kind, (uint8_t)r->prec, r->speeds,
                       true, &row, &e2);
    if (rc == DR_EINVAL) { /* its declared speeds name types this cluster has no more */
        ctld_log("class %s: %s; its prior is the catalog's now", r->name, e2.msg);
        rc = get_class(c, r->name, r->owner, label, (uint8_t)r->kind, (uint8_t)r->prec, NULL, true,
                       &row, err);
    } else if (rc != DR_OK) {
        *err = e2;
    }
    if (rc != DR_OK)
        return rc;
    cls_t *k = of_row(c, (uint32_t)row);
    json_error_t je;
    json_t *o = json_loads(r->runs, 0, &je);
    const char *type;
    json_t *v;
    json_object_foreach(o, type, v)
    {
        int t = dr_cluster_find_type(&c->cl, type);
        json_int_t n = 0;
        double sum = 0, sum2 = 0;
        if (t < 0 || (size_t)t >= c->classes->nt ||
            json_unpack(v, "[I,F,F]", &n, &sum, &sum2) != 0 || n <= 0 || n > UINT32_MAX) {
            ctld_log("class %s: its runs on %s are not kept (not a type of this cluster, or "
                     "unreadable)",
                     r->name, type);
            continue;
        }
        k->obs[t].n = (uint32_t)n;
        k->obs[t].sum = sum;
        k->obs[t].sum2 = sum2;
    }
    json_decref(o);
    refresh(c->classes, k, row);
    return DR_OK;
}

int ctld_classes_restore(dr_ctld_t *c, dr_err_t *err)
{
    return ctld_store_load_classes(c, restore_row, err);
}

/* ---- what the API shows ---- */

static double r6(double x)
{
    return round(x * 1e6) / 1e6;
}

static const char *basis_text(const cls_t *k, const dr_perf_est_t *e, size_t t)
{
    switch ((dr_perf_basis_t)e->basis[t]) {
    case DR_PERF_OBSERVED: return "observed";
    case DR_PERF_VIA: return "via the runs on other types";
    case DR_PERF_PRIOR: return dr_prior_src_name((dr_prior_src_t)k->prior_src[t]);
    case DR_PERF_NONE: break;
    }
    return "cannot run";
}

static json_t *type_obj(const dr_ctld_t *c, const cls_t *k, const dr_perf_est_t *e, size_t t)
{
    json_t *o = json_pack("{s:s,s:f,s:s,s:I}", "type", c->cl.types[t].name, "rate", r6(e->rate[t]),
                          "basis", basis_text(k, e, t), "runs", (json_int_t)k->obs[t].n);
    if (o && e->run_s[t] > 0)
        json_object_set_new(o, "mean_run_s", json_real(r6(e->run_s[t])));
    if (o && e->spread[t] > 0)
        json_object_set_new(o, "spread", json_real(r6(e->spread[t])));
    return o;
}

/* Why the type its run got won, from the candidates' figures (types: the
 * "types" array ctld_classes_job_obj built): false when it never ran. */
static bool why_chosen(const dr_ctld_t *c, const ctld_job_t *cj, const json_t *types, char *out,
                       size_t n)
{
    const dr_job_t *j = &cj->j;
    if (cj->got_type < 0 || (size_t)cj->got_type >= c->cl.ntypes)
        return false;
    const char *got = c->cl.types[cj->got_type].name;
    if (j->req.pref[0]) {
        unsigned rank = dr_req_pref_rank(&j->req, (unsigned)cj->got_type);
        snprintf(out, n,
                 rank == 0 ? "%s is the first of the types it listed"
                           : "%s is the first of the types it listed that had room",
                 got);
        return true;
    }
    /* the cheapest in time and the fastest, by the figures shown */
    double cheap = INFINITY, fast = 0;
    const char *cheapest = NULL, *fastest = NULL;
    size_t i;
    json_t *ty;
    json_array_foreach(types, i, ty)
    {
        double rate = json_number_value(json_object_get(ty, "rate"));
        const json_t *usd = json_object_get(ty, "usd"), *dl = json_object_get(ty, "meets_deadline");
        const char *name = json_string_value(json_object_get(ty, "type"));
        if (rate > fast) {
            fast = rate;
            fastest = name;
        }
        if (usd && (!dl || json_is_true(dl)) && json_number_value(usd) < cheap) {
            cheap = json_number_value(usd);
            cheapest = name;
        }
    }
    if (j->deadline && cheapest && !strcmp(cheapest, got))
        snprintf(out, n, "%s does its work cheapest of the types that meet its deadline", got);
    else if (j->deadline && cheapest)
        snprintf(out, n,
                 "%s: the cheapest that meets its deadline (%s) was busy, or taken by jobs the "
                 "policy put first, when it started",
                 got, cheapest);
    else if (fastest && !strcmp(fastest, got))
        snprintf(out, n, "%s is its fastest type%s", got,
                 j->deadline ? "" : " (no deadline: its speed first, then the price)");
    else if (fastest)
        snprintf(out, n,
                 "%s: its fastest type (%s) was busy, or taken by jobs it served better, "
                 "when it started",
                 got, fastest);
    else
        return false;
    return true;
}

json_t *ctld_classes_job_obj(dr_ctld_t *c, const ctld_job_t *cj)
{
    const dr_job_t *j = &cj->j;
    cls_t *k = of_row(c, j->perf_class);
    if (!k || cj->array)
        return NULL;
    const dr_jobspec_t *sp = ctld_job_spec(cj);
    dr_perf_est_t e;
    estimate(c->classes, k, &e);
    const char *basis = sp->estimate > 0                      ? "its --estimate"
                        : k->absolute && j->work_declared > 0 ? "its --tokens"
                        : k->size > 0                         ? "its class's runs"
                                                              : NULL;
    json_t *o = json_pack("{s:s,s:s,s:I,s:s}", "class", k->label, "prior",
                          k->speeds ? "declared" : "catalog", "class_runs", (json_int_t)e.runs,
                          "reference", c->cl.types[e.ref].name);
    if (!o)
        return NULL;
    if (j->work_declared > 0)
        json_object_set_new(o, "work_s", json_real(r6(j->work_declared)));
    json_object_set_new(o, "work_from", basis ? json_string(basis) : json_null());
    json_t *types = json_array();
    dr_typemask_t m = dr_cluster_hostable_types(&c->cl, &j->req);
    uint32_t g = req_gpus(&j->req);
    double share = j->req.gpu_milli && j->req.gpu_milli < 1000 ? j->req.gpu_milli / 1000.0 : 1;
    for (size_t t = 0; types && t < c->classes->nt; t++) {
        if (!(m >> t & 1))
            continue;
        json_t *ty = type_obj(c, k, &e, t);
        double rate = dr_perf_rate(&c->classes->view, j, (unsigned)t);
        if (ty && rate > 0 && j->work_declared > 0) {
            double run = j->work_declared / rate;
            json_object_set_new(ty, "run_s", json_real(r6(run)));
            double price = ctld_price_hr(c, (int)t);
            if (price > 0)
                json_object_set_new(ty, "usd", json_real(r6(run / 3600.0 * g * share * price)));
            /* by its deadline: started now (a waiting job), or as it did */
            dr_time_t from = j->state == DR_JOB_PENDING ? ctld_now(c) : j->start;
            if (j->deadline)
                json_object_set_new(ty, "meets_deadline",
                                    json_boolean(from + dr_time_from_s(run) <= j->deadline));
        }
        if (ty && cj->got_type == (int)t)
            json_object_set_new(ty, "chosen", json_true());
        json_array_append_new(types, ty);
    }
    json_object_set_new(o, "types", types);
    char why[200];
    if (types && why_chosen(c, cj, types, why, sizeof why))
        json_object_set_new(o, "why", json_string(why));
    return o;
}

json_t *ctld_classes_list(dr_ctld_t *c, const char *user, bool all)
{
    struct ctld_classes *cc = c->classes;
    json_t *a = json_array();
    for (size_t i = 0; a && i < cc->n; i++) {
        cls_t *k = cc->v[i];
        if (!k->learns || (!all && (!user || strcmp(k->owner, user) != 0)))
            continue;
        dr_perf_est_t e;
        estimate(cc, k, &e);
        json_t *o =
            json_pack("{s:s,s:s,s:s,s:I,s:s,s:f}", "name", k->label, "owner", k->owner, "prior",
                      k->speeds ? k->speeds : "catalog", "runs", (json_int_t)e.runs, "reference",
                      c->cl.types[e.ref].name, "sigma", r6(e.sigma));
        json_t *types = json_array();
        for (size_t t = 0; o && types && t < cc->nt; t++)
            json_array_append_new(types, type_obj(c, k, &e, t));
        if (o) {
            if (e.size > 0)
                json_object_set_new(o, "size_s", json_real(r6(e.size)));
            json_object_set_new(o, "types", types);
            json_array_append_new(a, o);
        } else {
            json_decref(types);
        }
    }
    return a;
}
