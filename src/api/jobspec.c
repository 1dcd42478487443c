/* jobspec.c - a job spec's life: init and free, the whole-spec checks that
 * no single field can make, the scheduler's view of a spec on a cluster
 * (dr_job_t), and the %j/%A/%a/%x/%u output path templates. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jobspec_priv.h"
#include "drover/partition.h"
#include "drover/util.h"

void dr_jobspec_init(dr_jobspec_t *s)
{
    memset(s, 0, sizeof *s);
    s->kind = DR_KIND_BATCH;
    s->requeue = -1;
    s->exclusive = -1;
    s->hold = -1;
    s->test_only = -1;
}

void dr_jobspec_free(dr_jobspec_t *s)
{
    for (int i = 0; i < DR_JF_N; i++) {
        const jf_def_t *d = jf_def(i);
        if (d->store == JF_STR)
            free(*(char **)((char *)s + d->off));
    }
    jf_vec_free(&s->argv, &s->argc);
    jf_vec_free(&s->env, &s->nenv);
    jf_vec_free(&s->ignored, &s->nignored);
    jf_deps_free(s);
    free(s->script);
    free(s->script_name);
    dr_jobspec_init(s);
}

static int check_strings(const char *what, char *const *v, uint32_t n, uint32_t max, bool env,
                         dr_err_t *err)
{
    if (n > max)
        return dr_err_set(err, DR_ELIMIT, "%s: more than %u entries", what, max);
    if (n && !v)
        return dr_err_set(err, DR_EINVAL, "%s: %u entries but no array", what, n);
    for (uint32_t i = 0; i < n; i++) {
        if (!v[i])
            return dr_err_set(err, DR_EINVAL, "%s: entry %u is missing", what, i);
        if (!jf_utf8_ok(v[i], strlen(v[i])))
            return dr_err_set(err, DR_EINVAL, "%s: entry %u is not valid UTF-8", what, i);
        const char *eq = env ? strchr(v[i], '=') : NULL;
        if (env && (!eq || eq == v[i]))
            return dr_err_set(err, DR_EINVAL, "%s: '%.64s' is not KEY=VALUE", what, v[i]);
    }
    return DR_OK;
}

/* The Slurm task and sharing fields: ranges (for values set in the struct
 * directly) and what they must agree on, as sbatch checks it. */
static int validate_slurm(const dr_jobspec_t *s, dr_err_t *err)
{
    const struct {
        const char *name;
        uint64_t v, max;
    } counts[] = {{"ntasks", s->ntasks, JF_MAX_CPUS},
                  {"ntasks_per_node", s->ntasks_per_node, JF_MAX_CPUS},
                  {"gpus_per_task", s->gpus_per_task, JF_MAX_GPN},
                  {"mem_per_gpu", s->mem_per_gpu_mb, JF_MAX_MEM_MB}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (counts[i].v > counts[i].max)
            return dr_err_set(err, DR_EINVAL, "%s: %" PRIu64 " is more than %" PRIu64,
                              counts[i].name, counts[i].v, counts[i].max);
    if (s->signal_num < 0 || s->signal_num > 64 || s->signal_secs > 65535 ||
        (s->signal_num == 0 && (s->signal_secs || s->signal_batch)))
        return dr_err_set(err, DR_EINVAL,
                          "signal: %d@%u is not a signal from 1 to 64 and 0 to "
                          "65535 seconds",
                          (int)s->signal_num, (unsigned)s->signal_secs);
    if (s->requeue < -1 || s->requeue > 1)
        return dr_err_set(err, DR_EINVAL, "requeue: %d is not -1, 0 or 1", s->requeue);
    if (s->exclusive < -1 || s->exclusive > 1)
        return dr_err_set(err, DR_EINVAL, "exclusive: %d is not -1, 0 or 1", s->exclusive);
    if (s->hold < -1 || s->hold > 1)
        return dr_err_set(err, DR_EINVAL, "hold: %d is not -1, 0 or 1", s->hold);
    if (s->test_only < -1 || s->test_only > 1)
        return dr_err_set(err, DR_EINVAL, "test_only: %d is not -1, 0 or 1", s->test_only);
    if (s->ndeps && !s->deps)
        return dr_err_set(err, DR_EINVAL, "dependency: %u terms but no array", s->ndeps);
    uint64_t refs = 0;
    for (uint32_t i = 0; i < s->ndeps; i++) {
        const dr_dep_t *d = &s->deps[i];
        if (d->kind >= DR_DEP_NKINDS || (d->nrefs && !d->refs) ||
            (d->kind == DR_DEP_SINGLETON) != (d->nrefs == 0))
            return dr_err_set(err, DR_EINVAL, "dependency: term %u is malformed", i);
        for (uint32_t k = 0; k < d->nrefs; k++)
            if (d->refs[k].job == 0 || d->refs[k].task < -1)
                return dr_err_set(err, DR_EINVAL, "dependency: term %u names no job", i);
        refs += d->nrefs;
    }
    if (refs > DR_JOBSPEC_MAX_DEPS)
        return dr_err_set(err, DR_ELIMIT, "dependency: more than %u job ids", DR_JOBSPEC_MAX_DEPS);
    if (s->ntasks && s->ntasks_per_node && s->nodes &&
        (uint64_t)s->nodes * s->ntasks_per_node != s->ntasks)
        return dr_err_set(err, DR_EINVAL,
                          "ntasks: --ntasks=%u does not equal --nodes=%u x --ntasks-per-node=%u",
                          s->ntasks, s->nodes, s->ntasks_per_node);
    if (s->gpus_per_task && !s->ntasks && !s->ntasks_per_node)
        return dr_err_set(err, DR_EINVAL,
                          "gpus_per_task: --gpus-per-task needs --ntasks or --ntasks-per-node");
    if (s->gpus_per_task && (s->gpus || s->gpus_per_node))
        return dr_err_set(err, DR_EINVAL,
                          "gpus_per_task: --gpus-per-task and --%s cannot both "
                          "be given",
                          s->gpus ? "gpus" : "gpus-per-node");
    if (s->mem_per_gpu_mb && s->mem_mb)
        return dr_err_set(err, DR_EINVAL,
                          "mem_per_gpu: --mem and --mem-per-gpu cannot both be "
                          "given");
    if (s->mem_per_gpu_mb && !s->gpus && !s->gpus_per_node && !s->gpus_per_task)
        return dr_err_set(err, DR_EINVAL, "mem_per_gpu: --mem-per-gpu is given without GPUs");
    if (s->gpu_mem_mb && !s->gpus && !s->gpus_per_node && !s->gpus_per_task)
        return dr_err_set(err, DR_EINVAL, "gpu_mem: --gpu-mem is given without GPUs");
    return DR_OK;
}

/* Does a shard template name the array index (%a or %Na, not %%a)? */
static bool shard_uses_index(const char *t)
{
    for (; *t; t++) {
        if (*t != '%')
            continue;
        if (t[1] == '%') {
            t++;
            continue;
        }
        return true; /* p_shard let only %a and %Na through */
    }
    return false;
}

/* A service: --replicas and --ready belong to kind serve, not to arrays. */
static int validate_service(const dr_jobspec_t *s, dr_err_t *err)
{
    bool serve = s->kind_set ? s->kind == DR_KIND_SERVE : s->replicas > 0;
    if (s->replicas > JF_MAX_REPLICAS)
        return dr_err_set(err, DR_EINVAL, "replicas: %u is more than %u", s->replicas,
                          JF_MAX_REPLICAS);
    if (s->replicas && !serve)
        return dr_err_set(err, DR_EINVAL, "replicas: a %s job has no replicas (--kind serve)",
                          dr_job_kind_name((dr_job_kind_t)s->kind));
    if (serve && s->array)
        return dr_err_set(err, DR_EINVAL, "array: a service is not an array (use --replicas)");
    if (s->ready && !serve)
        return dr_err_set(err, DR_EINVAL,
                          "ready: only a service (--kind serve) has a readiness "
                          "check");
    return DR_OK;
}

/* --shard-list: with --array, not --shard, one name per task. */
static int validate_shard_list(const dr_jobspec_t *s, dr_err_t *err)
{
    if (!s->shard_list)
        return DR_OK;
    if (s->shard)
        return dr_err_set(err, DR_EINVAL, "shard_list: not with --shard (give one or the other)");
    if (!s->array)
        return dr_err_set(err, DR_EINVAL, "shard_list: needs --array (one shard per task)");
    uint32_t *idx = NULL, throttle;
    size_t ntasks = 0, names = 1;
    int rc = dr_array_parse(s->array, &idx, &ntasks, &throttle, err);
    free(idx);
    if (rc != 0)
        return rc;
    for (const char *p = s->shard_list; *p; p++)
        names += *p == '\n';
    if (names != ntasks)
        return dr_err_set(err, DR_EINVAL, "shard_list: names %zu shards for %zu array tasks", names,
                          ntasks);
    return DR_OK;
}

int dr_jobspec_validate(const dr_jobspec_t *s, dr_err_t *err)
{
    int rc;
    if (s->argc == 0 && !s->script)
        return dr_err_set(err, DR_EINVAL, "argv: a job needs a command or a script");
    if (s->launcher && strcmp(s->launcher, "none") != 0 && strcmp(s->launcher, "torchrun") != 0)
        return dr_err_set(err, DR_EINVAL, "launcher: '%.64s' is not none or torchrun", s->launcher);
    if (s->launcher && strcmp(s->launcher, "torchrun") == 0 && s->script)
        return dr_err_set(err, DR_EINVAL,
                          "launcher: torchrun runs a command (drover submit --launcher torchrun "
                          "-- train.py ...), not a batch script");
    if ((rc = check_strings("argv", s->argv, s->argc, DR_JOBSPEC_MAX_ARGS, false, err)) != 0 ||
        (rc = check_strings("env", s->env, s->nenv, DR_JOBSPEC_MAX_ENV, true, err)) != 0)
        return rc;
    if (s->script) {
        size_t n = strlen(s->script);
        if (n > DR_JOBSPEC_MAX_SCRIPT)
            return dr_err_set(err, DR_ELIMIT, "script: larger than %u bytes",
                              DR_JOBSPEC_MAX_SCRIPT);
        if (!jf_utf8_ok(s->script, n))
            return dr_err_set(err, DR_EINVAL, "script: not valid UTF-8");
    }
    if (s->script_name && !jf_utf8_ok(s->script_name, strlen(s->script_name)))
        return dr_err_set(err, DR_EINVAL, "script_name: not valid UTF-8");
    if (s->kind >= DR_KIND_NKINDS)
        return dr_err_set(err, DR_EINVAL, "kind: %u is not a kind", s->kind);
    if (s->nodes > JF_MAX_NODES)
        return dr_err_set(err, DR_EINVAL, "nodes: %u is more than %u", s->nodes, JF_MAX_NODES);
    if (s->gpus_per_node > JF_MAX_GPN)
        return dr_err_set(err, DR_EINVAL, "gpus_per_node: %u is more than %u", s->gpus_per_node,
                          JF_MAX_GPN);
    if (s->gpus > JF_MAX_GPUS)
        return dr_err_set(err, DR_EINVAL, "gpus: %u is more than %u", s->gpus, JF_MAX_GPUS);
    if (s->cpus_per_node > JF_MAX_CPUS)
        return dr_err_set(err, DR_EINVAL, "cpus_per_node: %u is more than %u", s->cpus_per_node,
                          JF_MAX_CPUS);
    if (s->mem_mb > JF_MAX_MEM_MB)
        return dr_err_set(err, DR_EINVAL, "mem: %" PRIu64 " MB is more than %" PRIu64 " MB",
                          s->mem_mb, JF_MAX_MEM_MB);
    const struct {
        const char *name;
        dr_time_t t;
    } times[] = {{"time_limit", s->time_limit},
                 {"deadline", s->deadline},
                 {"checkpoint_every", s->ckpt_every},
                 {"estimate", s->estimate}};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        if (times[i].t < 0 || times[i].t > JF_MAX_TIME_S * DR_NSEC_PER_SEC)
            return dr_err_set(err, DR_EINVAL, "%s: must be from 0 to %lld seconds", times[i].name,
                              JF_MAX_TIME_S);
    if (s->gpus && s->gpus_per_node)
        return dr_err_set(err, DR_EINVAL, "gpus: --gpus and --gpus-per-node cannot both be given");
    if (s->gpus && s->nodes > 1 && s->gpus % s->nodes)
        return dr_err_set(err, DR_EINVAL, "gpus: %u GPUs do not spread evenly over %u nodes",
                          s->gpus, s->nodes);
    if (s->gpu_type && !s->gpus && !s->gpus_per_node && !s->gpus_per_task)
        return dr_err_set(err, DR_EINVAL,
                          "gpu_type: '%.64s' is given without --gpus or --gpus-per-node",
                          s->gpu_type);
    if (s->array) {
        uint32_t *idx = NULL, throttle;
        size_t n = 0;
        rc = dr_array_parse(s->array, &idx, &n, &throttle, err);
        free(idx);
        if (rc != 0)
            return rc;
    } else if (s->kind_set && s->kind == DR_KIND_ARRAY) {
        return dr_err_set(err, DR_EINVAL, "kind: 'array' needs --array");
    }
    if (s->shard && !s->array && shard_uses_index(s->shard))
        return dr_err_set(err, DR_EINVAL, "shard: '%.64s': %%a needs --array", s->shard);
    if ((rc = validate_service(s, err)) != 0 || (rc = validate_shard_list(s, err)) != 0)
        return rc;
    if (s->cwd && s->cwd[0] != '/')
        return dr_err_set(err, DR_EINVAL, "chdir: '%.64s' is not an absolute path", s->cwd);
    if (s->constraint && (rc = dr_constraint_check(s->constraint, err)) != 0)
        return rc;
    return validate_slurm(s, err);
}

/* The mask of gpu_type's names on c, and with two or more of them their
 * order, the user's preference (pref, DR_TYPE_PREFS at most). */
static int types_mask(const char *list, const dr_cluster_t *c, dr_typemask_t *mask, uint8_t *pref,
                      dr_err_t *err)
{
    *mask = 0;
    unsigned npref = 0;
    memset(pref, 0, DR_TYPE_PREFS);
    for (const char *p = list; *p;) {
        const char *q = strchr(p, ',');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        char name[DR_GPU_NAME_MAX * 2];
        int t = -1;
        if (n < sizeof name) {
            memcpy(name, p, n);
            name[n] = '\0';
            t = dr_cluster_find_type(c, name);
        }
        if (t < 0 || t >= DR_MAX_GPU_TYPES) {
            char have[256];
            size_t len = 0;
            have[0] = '\0';
            for (size_t i = 0; i < c->ntypes && len < sizeof have; i++)
                len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", i ? ", " : "",
                                        c->types[i].name);
            return dr_err_set(err, DR_EINVAL, "gpu_type: no GPU type '%.*s' in this cluster (%s%s)",
                              (int)(n > 64 ? 64 : n), p, c->ntypes ? "has " : "it has no GPUs",
                              have);
        }
        if (!(*mask >> t & 1) && npref < DR_TYPE_PREFS && t < 255)
            pref[npref++] = (uint8_t)(t + 1);
        *mask |= (dr_typemask_t)1 << t;
        p = q ? q + 1 : p + n;
    }
    if (npref < 2)
        memset(pref, 0, DR_TYPE_PREFS); /* one type: nothing to prefer among */
    return DR_OK;
}

/* Nodes (UP or not, pools included) that could hold r's per-node share,
 * and the most GPUs of one allowed type on such nodes. */
static uint64_t nodes_fitting(const dr_cluster_t *c, const dr_job_req_t *r, uint64_t *type_gpus)
{
    uint64_t n = 0, gpus[DR_MAX_GPU_TYPES] = {0};
    *type_gpus = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *nd = &c->nodes[i];
        if (!dr_nodeset_has(c, r->nodeset, (uint32_t)i))
            continue;
        if (nd->cpu_milli < r->cpu_milli_per_node || nd->mem_mb < r->mem_mb_per_node)
            continue;
        if (r->gpus_per_node) {
            if (nd->ngpus == 0 || nd->type >= DR_MAX_GPU_TYPES ||
                (r->types && !(r->types >> nd->type & 1)) ||
                (r->nodes && nd->ngpus < r->gpus_per_node))
                continue;
            gpus[nd->type] += nd->ngpus;
            if (gpus[nd->type] > *type_gpus)
                *type_gpus = gpus[nd->type];
        }
        n++;
    }
    return n;
}

/* Why r can never fit, named by the field to change: the GPUs if they do
 * not fit even on one node without CPUs and memory, the node count if one
 * node would do, else the CPUs or the memory (or both). */
static int impossible(const dr_jobspec_t *s, const dr_cluster_t *c, const dr_job_req_t *r,
                      dr_err_t *err)
{
    int rc = dr_cluster_req_possible(c, r, NULL);
    if (rc == DR_OK)
        return DR_OK;
    dr_job_req_t t = *r;
    t.cpu_milli_per_node = 0;
    t.mem_mb_per_node = 0;
    if (t.nodes > 1)
        t.nodes = 1;
    dr_err_t why = {0};
    if (r->gpus_per_node && dr_cluster_req_possible(c, &t, &why) != DR_OK)
        return dr_err_set(err, why.code, "%s: %s", s->gpus ? "gpus" : "gpus_per_node", why.msg);
    const char *field = "nodes";
    t = *r;
    t.nodes = r->nodes > 1 ? 1 : r->nodes;
    if (dr_cluster_req_possible(c, &t, NULL) != DR_OK) { /* not even one node: CPUs, memory */
        t.mem_mb_per_node = 0;
        bool cpu_bad = dr_cluster_req_possible(c, &t, NULL) != DR_OK;
        t.mem_mb_per_node = r->mem_mb_per_node;
        t.cpu_milli_per_node = 0;
        bool mem_bad = dr_cluster_req_possible(c, &t, NULL) != DR_OK;
        field = cpu_bad == mem_bad ? "cpus_per_node, mem" : cpu_bad ? "cpus_per_node" : "mem";
    }
    uint64_t type_gpus, n = nodes_fitting(c, r, &type_gpus);
    if (r->nodes == 0)
        return dr_err_set(err, rc,
                          "%s: needs %u GPUs of one type on nodes with %u CPUs and %" PRIu64
                          " MB each; the largest eligible type has %" PRIu64 " there",
                          field, r->gpus_per_node, r->cpu_milli_per_node / 1000, r->mem_mb_per_node,
                          type_gpus);
    return dr_err_set(err, rc,
                      "%s: needs %u nodes with %u GPUs, %u CPUs and %" PRIu64
                      " MB each; the %s has %" PRIu64 " such nodes",
                      field, r->nodes, r->gpus_per_node, r->cpu_milli_per_node / 1000,
                      r->mem_mb_per_node,
                      r->nodeset ? "job's partition (and constraint)" : "cluster", n);
}

/* --exclusive: the whole node.  Which node a job gets is placement's
 * choice, so the request can take a whole node only when every node it may
 * use is alike (GPUs, CPUs, memory): then it asks for all of that node.
 * On a mixed set the request stands as it is (dr_jobspec_unsupported says
 * so). */
static void exclusive(const dr_cluster_t *c, dr_job_req_t *r)
{
    const dr_node_t *shape = NULL;
    for (size_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *nd = &c->nodes[i];
        if (!dr_nodeset_has(c, r->nodeset, (uint32_t)i))
            continue;
        if (nd->cpu_milli < r->cpu_milli_per_node || nd->mem_mb < r->mem_mb_per_node)
            continue;
        if (r->gpus_per_node && (nd->ngpus == 0 || nd->type >= DR_MAX_GPU_TYPES ||
                                 (r->types && !(r->types >> nd->type & 1)) ||
                                 (r->nodes && nd->ngpus < r->gpus_per_node)))
            continue;
        if (!shape) {
            shape = nd;
        } else if (nd->ngpus != shape->ngpus || nd->cpu_milli != shape->cpu_milli ||
                   nd->mem_mb != shape->mem_mb || (nd->ngpus && nd->type != shape->type)) {
            return; /* not alike */
        }
    }
    if (!shape)
        return;        /* nothing fits: impossible() says why */
    if (r->nodes == 0) /* --gpus N: whole nodes that hold them */
        r->nodes = shape->ngpus ? (r->gpus_per_node + shape->ngpus - 1) / shape->ngpus : 1;
    r->gpus_per_node = shape->ngpus;
    if (shape->ngpus && !r->types)
        r->types = (dr_typemask_t)1 << shape->type;
    r->cpu_milli_per_node = shape->cpu_milli;
    r->mem_mb_per_node = shape->mem_mb;
}

/* "1-02:03:04" for messages (Slurm's time format). */
static void fmt_limit(dr_time_t t, char *buf, size_t n)
{
    long long sec = (long long)(t / DR_NSEC_PER_SEC);
    if (sec >= 86400)
        snprintf(buf, n, "%lld-%02lld:%02lld:%02lld", sec / 86400, sec / 3600 % 24, sec / 60 % 60,
                 sec % 60);
    else
        snprintf(buf, n, "%02lld:%02lld:%02lld", sec / 3600, sec / 60 % 60, sec % 60);
}

/* The job's partitions and constraint (partition.h): r's node set, its
 * GPU types narrowed to those of the set, and its time limit against the
 * partitions' MaxTime: above it the job is refused, as Slurm does with
 * EnforcePartLimits (rather than left pending for ever); without one it
 * gets DefaultTime, else MaxTime. */
static int restrict_job(const dr_jobspec_t *s, dr_cluster_t *c, dr_job_req_t *r, dr_time_t *limit,
                        dr_err_t *err)
{
    dr_restrict_t lim;
    int rc = dr_cluster_restrict(c, s->partition, s->constraint, r, &lim, err);
    if (rc != 0)
        return rc;
    r->nodeset = lim.nodeset;
    if (lim.types && r->gpus_per_node) {
        if (r->types && !(r->types & lim.types))
            return dr_err_set(err, DR_EINVAL,
                              "gpu_type: '%.64s' is not among the GPUs of the job's %s",
                              s->gpu_type ? s->gpu_type : "?",
                              s->constraint ? "partition and constraint" : "partition");
        r->types = r->types ? r->types & lim.types : lim.types;
    }
    *limit = s->time_limit;
    if (lim.max_time && s->time_limit > lim.max_time) {
        char a[32], b[32];
        fmt_limit(s->time_limit, a, sizeof a);
        fmt_limit(lim.max_time, b, sizeof b);
        return dr_err_set(err, DR_EINVAL,
                          "time_limit: %s is more than the job's partition allows (MaxTime=%s)", a,
                          b);
    }
    if (!s->time_limit)
        *limit = lim.default_time;
    return DR_OK;
}

int dr_jobspec_to_job(const dr_jobspec_t *s, dr_cluster_t *c, dr_time_t submit, dr_job_t *j,
                      dr_err_t *err)
{
    dr_time_t limit = 0;
    int rc = dr_jobspec_validate(s, err);
    if (rc != 0)
        return rc;
    dr_job_req_t r = j->req;
    r.gpu_milli = 1000;
    r.min_gpu_mem_gb = (double)s->gpu_mem_mb / 1024.0; /* the catalog's mem_gb: 80 for 80G */
    /* Slurm's -n with --ntasks-per-node and no -N: as many nodes as hold them */
    uint32_t nodes = s->nodes;
    if (!nodes && s->ntasks && s->ntasks_per_node)
        nodes = (s->ntasks + s->ntasks_per_node - 1) / s->ntasks_per_node;
    /* tasks on each node, 0 when no task count was given */
    uint32_t tpn = s->ntasks_per_node;
    if (!tpn && s->ntasks)
        tpn = (s->ntasks + (nodes ? nodes : 1) - 1) / (nodes ? nodes : 1);
    if (s->gpus) { /* --gpus N: as few nodes as hold them, or spread over -N */
        r.nodes = nodes;
        r.gpus_per_node = nodes ? s->gpus / nodes : s->gpus;
    } else if (s->gpus_per_task) {
        /* -n T --gpus-per-task g without -N: T x g GPUs on as few nodes as
         * hold them (as --gpus); else g for each task of a node */
        bool spread = !nodes && !s->ntasks_per_node;
        uint64_t g = (uint64_t)s->gpus_per_task * (spread ? s->ntasks : tpn);
        uint64_t max = spread ? JF_MAX_GPUS : JF_MAX_GPN;
        if (g > max)
            return dr_err_set(
                err, DR_EINVAL, "gpus_per_task: %u tasks x %u GPUs is more than %" PRIu64 " GPUs%s",
                spread ? s->ntasks : tpn, s->gpus_per_task, max, spread ? "" : " on a node");
        r.nodes = spread ? 0 : nodes ? nodes : 1;
        r.gpus_per_node = (uint32_t)g;
    } else {
        r.nodes = nodes ? nodes : 1;
        r.gpus_per_node = s->gpus_per_node; /* no GPUs unless asked, as in Slurm */
    }
    r.types = 0;
    if (s->gpu_type && (rc = types_mask(s->gpu_type, c, &r.types, r.pref, err)) != 0)
        return rc;
    if (r.min_gpu_mem_gb > 0 && r.gpus_per_node && !dr_cluster_eligible_types(c, &r)) {
        int most = -1; /* the allowed type with the most memory, for the message */
        for (size_t t = 0; t < c->ntypes && t < DR_MAX_GPU_TYPES; t++)
            if ((!r.types || (r.types >> t & 1)) && isfinite(c->types[t].mem_gb) &&
                (most < 0 || c->types[t].mem_gb > c->types[most].mem_gb))
                most = (int)t;
        if (most < 0)
            return dr_err_set(err, DR_ENOSPC,
                              "gpu_mem: no GPU type of this cluster has %g GB (none states its "
                              "memory)",
                              r.min_gpu_mem_gb);
        return dr_err_set(err, DR_ENOSPC,
                          "gpu_mem: no GPU type of this cluster has %g GB (the most: %s, %g GB)",
                          r.min_gpu_mem_gb, c->types[most].name, c->types[most].mem_gb);
    }
    if ((rc = restrict_job(s, c, &r, &limit, err)) != 0)
        return rc;
    /* One CPU per node unless asked (so that CPU-only jobs cannot pile up on
     * a node without bound), and no memory: a request without CPU or memory
     * fits wherever its GPUs do.  On a cluster whose nodes declare no CPUs
     * the default drops to none, so that a default is never what fails.
     * With tasks, -c counts per task, as Slurm's --cpus-per-task. */
    uint64_t cpus =
        (uint64_t)(s->cpus_per_node ? s->cpus_per_node : 1) * (tpn && r.nodes ? tpn : 1);
    if (cpus > JF_MAX_CPUS)
        return dr_err_set(err, DR_EINVAL, "cpus_per_node: %u tasks x %u CPUs is more than %u CPUs",
                          tpn, s->cpus_per_node ? s->cpus_per_node : 1, JF_MAX_CPUS);
    r.cpu_milli_per_node = (uint32_t)cpus * 1000u;
    r.mem_mb_per_node = s->mem_mb;
    if (s->mem_per_gpu_mb) { /* per GPU x the GPUs on a node (at most a node's worth) */
        uint64_t g = r.gpus_per_node;
        if (r.nodes == 0) {
            uint64_t most = 0;
            for (size_t i = 0; i < c->nnodes; i++)
                if (c->nodes[i].ngpus && c->nodes[i].type < DR_MAX_GPU_TYPES &&
                    dr_nodeset_has(c, r.nodeset, (uint32_t)i) &&
                    (!r.types || (r.types >> c->nodes[i].type & 1)) && c->nodes[i].ngpus > most)
                    most = c->nodes[i].ngpus;
            if (most && most < g)
                g = most;
        }
        if (g && s->mem_per_gpu_mb > JF_MAX_MEM_MB / g)
            return dr_err_set(err, DR_EINVAL,
                              "mem_per_gpu: %" PRIu64 " MB x %" PRIu64 " GPUs is more than %" PRIu64
                              " MB",
                              s->mem_per_gpu_mb, g, JF_MAX_MEM_MB);
        r.mem_mb_per_node = s->mem_per_gpu_mb * g;
    }
    if (!s->cpus_per_node && !tpn && dr_cluster_req_possible(c, &r, NULL) != DR_OK) {
        dr_job_req_t none = r;
        none.cpu_milli_per_node = 0;
        if (dr_cluster_req_possible(c, &none, NULL) == DR_OK)
            r = none;
    }
    if (s->exclusive > 0)
        exclusive(c, &r);
    if ((rc = dr_job_req_validate(&r, err)) != 0)
        return rc;
    if ((rc = impossible(s, c, &r, err)) != 0)
        return rc;
    j->req = r;
    j->kind = (uint8_t)(s->kind_set   ? s->kind
                        : s->replicas ? DR_KIND_SERVE
                        : s->array    ? DR_KIND_ARRAY
                                      : DR_KIND_BATCH);
    j->priority = s->priority;
    j->time_limit = limit;
    j->deadline = s->deadline ? dr_time_add(submit, s->deadline) : 0;
    j->ckpt_every = s->ckpt_every;
    if (s->array) {
        uint32_t *idx = NULL;
        size_t n = 0;
        rc = dr_array_parse(s->array, &idx, &n, &j->array_throttle, err);
        free(idx);
        if (rc != 0)
            return rc;
    }
    return DR_OK;
}

/* --- output paths --- */

typedef struct strbuf {
    char *p;
    size_t n, cap;
    bool oom;
} strbuf_t;

static void sb_add(strbuf_t *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

/* Slurm's filename patterns: %j %A %a %x %u %N and %%, numbers
 * zero-padded to a width 1..9 given between '%' and the letter ("%4a").
 * Other sequences are kept as they are (Slurm has more, such as %s). */
char *dr_jobspec_expand_path(const char *tmpl, uint64_t job, uint64_t array_parent,
                             uint32_t array_index, const char *name, const char *user,
                             const char *node)
{
    if (!tmpl)
        return NULL;
    strbuf_t b = {NULL, 0, 0, false};
    sb_add(&b, "", 0);
    for (const char *s = tmpl; *s;) {
        const char *pct = strchr(s, '%');
        if (!pct) {
            sb_add(&b, s, strlen(s));
            break;
        }
        sb_add(&b, s, (size_t)(pct - s));
        const char *q = pct + 1;
        int width = 0;
        if (*q >= '1' && *q <= '9')
            width = *q++ - '0';
        char num[32];
        const char *add = num;
        switch (*q) {
        case '%': add = width ? NULL : "%"; break;
        case 'j': snprintf(num, sizeof num, "%0*" PRIu64, width, job); break;
        case 'A':
            snprintf(num, sizeof num, "%0*" PRIu64, width, array_parent ? array_parent : job);
            break;
        case 'a':
            snprintf(num, sizeof num, "%0*" PRIu32, width, array_parent ? array_index : 0);
            break;
        case 'x': add = name ? name : ""; break;
        case 'u': add = user ? user : ""; break;
        case 'N': add = node; break; /* NULL: not known, kept */
        default: add = NULL; break;
        }
        if (add) {
            sb_add(&b, add, strlen(add));
            s = q + 1;
        } else { /* not a pattern: keep the '%' and go on after it */
            sb_add(&b, "%", 1);
            s = pct + 1;
        }
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* --- what is not honoured --- */

typedef struct notes {
    char *buf;
    size_t len, n;
} notes_t;

static void note(notes_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(notes_t *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *at = o->n < o->len ? o->buf + o->n : NULL;
    int k = vsnprintf(at, at ? o->len - o->n : 0, fmt, ap);
    va_end(ap);
    if (k > 0)
        o->n += (size_t)k;
}

size_t dr_jobspec_unsupported(const dr_jobspec_t *s, char *buf, size_t len)
{
    notes_t o = {buf, len, 0};
    if (buf && len)
        buf[0] = '\0';
    if (s->qos)
        note(&o, "--qos=%.255s: not enforced\n", s->qos);
    if (s->export_env && strcmp(s->export_env, "ALL") != 0)
        note(&o,
             "--export=%.255s: not applied; the job gets the environment it was submitted "
             "with\n",
             s->export_env);
    if (s->signal_num) {
        const char *name = dr_signal_name(s->signal_num);
        char num[16];
        if (!name) {
            snprintf(num, sizeof num, "%d", (int)s->signal_num);
            name = num;
        }
        /* B: is honoured (docs/jobspec.md); without a time limit (here or
         * from the partition) nor a checkpoint interval it is sent only
         * before a preemption or a drain */
        if (!s->time_limit && !s->ckpt_every)
            note(&o,
                 "--signal=%s%s@%u: the job has no time limit here (its partition may give "
                 "one) and no --checkpoint-every, so it is sent only before a preemption or a "
                 "drain\n",
                 s->signal_batch ? "B:" : "", name, (unsigned)s->signal_secs);
    }
    if (s->exclusive > 0)
        note(&o, "--exclusive: whole nodes only where all the nodes the job may use are alike; "
                 "otherwise its nodes may be shared\n");
    return o.n;
}

/* --- shard names --- */

/* The position of index idx among an --array spec's tasks ("1,5-9:2%4":
 * 1 is at 0, 7 at 2), counted range by range without expanding them; -1
 * if the spec does not hold it.  Ranges were checked by dr_array_parse. */
static int64_t array_pos(const char *spec, uint32_t idx)
{
    int64_t pos = 0;
    for (const char *p = spec; *p && *p != '%';) {
        char *e;
        unsigned long long a = strtoull(p, &e, 10), b = a, step = 1;
        if (e == p)
            return -1;
        if (*e == '-')
            b = strtoull(e + 1, &e, 10);
        if (*e == ':')
            step = strtoull(e + 1, &e, 10);
        if (step == 0 || b < a)
            return -1;
        if (idx >= a && idx <= b && (idx - a) % step == 0)
            return pos + (int64_t)((idx - a) / step);
        pos += (int64_t)((b - a) / step + 1);
        p = *e == ',' ? e + 1 : e;
        if (*e && *e != ',' && *e != '%')
            return -1;
    }
    return -1;
}

/* --shard-list: the name on the line of the task's position. */
static char *shard_from_list(const dr_jobspec_t *s, uint32_t array_index)
{
    int64_t pos = s->array ? array_pos(s->array, array_index) : -1;
    if (pos < 0)
        return NULL;
    const char *l = s->shard_list;
    for (int64_t i = 0; i < pos && l; i++) {
        l = strchr(l, '\n');
        if (l)
            l++;
    }
    if (!l)
        return NULL;
    size_t n = strcspn(l, "\n");
    return n ? dr_strndup(l, n) : NULL;
}

/* As the native trace's shard column: %a and %Na the index, %% a '%';
 * or with --shard-list the task's own line. */
char *dr_jobspec_shard_for(const dr_jobspec_t *s, uint32_t array_index)
{
    if (s && s->shard_list)
        return shard_from_list(s, array_index);
    if (!s || !s->shard)
        return NULL;
    strbuf_t b = {NULL, 0, 0, false};
    sb_add(&b, "", 0);
    for (const char *t = s->shard; *t; t++) {
        if (*t != '%') {
            sb_add(&b, t, 1);
            continue;
        }
        if (t[1] == '%') {
            sb_add(&b, "%", 1);
            t++;
            continue;
        }
        const char *q = t + 1;
        int width = 0;
        if (*q >= '1' && *q <= '9')
            width = *q++ - '0';
        if (*q != 'a') { /* not a pattern (only a hand-made spec gets here): kept */
            sb_add(&b, "%", 1);
            continue;
        }
        char num[32];
        int n = snprintf(num, sizeof num, "%0*" PRIu32, width, array_index);
        sb_add(&b, num, (size_t)n);
        t = q;
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
