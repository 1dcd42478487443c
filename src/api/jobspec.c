/* jobspec.c - a job spec's life: init and free, the whole-spec checks that
 * no single field can make, the scheduler's view of a spec on a cluster
 * (dr_job_t), and the %j/%A/%a/%x/%u output path templates. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jobspec_priv.h"
#include "drover/util.h"

void dr_jobspec_init(dr_jobspec_t *s)
{
    memset(s, 0, sizeof *s);
    s->kind = DR_KIND_BATCH;
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
                 {"checkpoint_every", s->ckpt_every}};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        if (times[i].t < 0 || times[i].t > JF_MAX_TIME_S * DR_NSEC_PER_SEC)
            return dr_err_set(err, DR_EINVAL, "%s: must be from 0 to %lld seconds", times[i].name,
                              JF_MAX_TIME_S);
    if (s->gpus && s->gpus_per_node)
        return dr_err_set(err, DR_EINVAL, "gpus: --gpus and --gpus-per-node cannot both be given");
    if (s->gpus && s->nodes > 1 && s->gpus % s->nodes)
        return dr_err_set(err, DR_EINVAL, "gpus: %u GPUs do not spread evenly over %u nodes",
                          s->gpus, s->nodes);
    if (s->gpu_type && !s->gpus && !s->gpus_per_node)
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
    if (s->cwd && s->cwd[0] != '/')
        return dr_err_set(err, DR_EINVAL, "chdir: '%.64s' is not an absolute path", s->cwd);
    return DR_OK;
}

/* The mask of gpu_type's names on c. */
static int types_mask(const char *list, const dr_cluster_t *c, dr_typemask_t *mask, dr_err_t *err)
{
    *mask = 0;
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
        *mask |= (dr_typemask_t)1 << t;
        p = q ? q + 1 : p + n;
    }
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
                      " MB each; the cluster has %" PRIu64 " such nodes",
                      field, r->nodes, r->gpus_per_node, r->cpu_milli_per_node / 1000,
                      r->mem_mb_per_node, n);
}

int dr_jobspec_to_job(const dr_jobspec_t *s, const dr_cluster_t *c, dr_time_t submit, dr_job_t *j,
                      dr_err_t *err)
{
    int rc = dr_jobspec_validate(s, err);
    if (rc != 0)
        return rc;
    dr_job_req_t r = j->req;
    r.gpu_milli = 1000;
    r.min_gpu_mem_gb = 0;
    if (s->gpus) { /* --gpus N: as few nodes as hold them, or spread over -N */
        r.nodes = s->nodes;
        r.gpus_per_node = s->nodes ? s->gpus / s->nodes : s->gpus;
    } else {
        r.nodes = s->nodes ? s->nodes : 1;
        r.gpus_per_node = s->gpus_per_node; /* no GPUs unless asked, as in Slurm */
    }
    r.types = 0;
    if (s->gpu_type && (rc = types_mask(s->gpu_type, c, &r.types, err)) != 0)
        return rc;
    /* One CPU per node unless asked (so that CPU-only jobs cannot pile up on
     * a node without bound), and no memory: a request without CPU or memory
     * fits wherever its GPUs do.  On a cluster whose nodes declare no CPUs
     * the default drops to none, so that a default is never what fails. */
    r.cpu_milli_per_node = (s->cpus_per_node ? s->cpus_per_node : 1) * 1000u;
    r.mem_mb_per_node = s->mem_mb;
    if (!s->cpus_per_node && dr_cluster_req_possible(c, &r, NULL) != DR_OK) {
        dr_job_req_t none = r;
        none.cpu_milli_per_node = 0;
        if (dr_cluster_req_possible(c, &none, NULL) == DR_OK)
            r = none;
    }
    if ((rc = dr_job_req_validate(&r, err)) != 0)
        return rc;
    if ((rc = impossible(s, c, &r, err)) != 0)
        return rc;
    j->req = r;
    j->kind = (uint8_t)(s->kind_set ? s->kind : s->array ? DR_KIND_ARRAY : DR_KIND_BATCH);
    j->priority = s->priority;
    j->time_limit = s->time_limit;
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

/* Slurm's filename patterns: %j %A %a %x %u and %%, numbers zero-padded
 * to a width 1..9 given between '%' and the letter ("%4a").  Other
 * sequences are kept as they are (Slurm has more, such as %N). */
char *dr_jobspec_expand_path(const char *tmpl, uint64_t job, uint64_t array_parent,
                             uint32_t array_index, const char *name, const char *user)
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
