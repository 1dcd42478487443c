/* jobfield.c - the table of job fields and the one parser per kind of value.
 *
 * Every way a job is described (CLI options, #DROVER/#SBATCH directives,
 * the API's JSON, trace columns) names its fields through dr_jobfield_find
 * and turns text into values through dr_jobspec_set, so a field's spelling,
 * units, range and error text exist once, here. */
#include <ctype.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/jobspec_priv.h"
#include "drover/perf_prior.h"
#include "drover/text.h"
#include "drover/util.h"

#define OFF(m) offsetof(dr_jobspec_t, m)

static const jf_def_t defs[DR_JF_N] = {
    [DR_JF_NAME] = {{"name", "job-name", 'J', true, "job-name",
                     "job name (default: the command's or the script's file name)", DR_JF_NAME},
                    JF_STR,
                    JF_P_STRING,
                    OFF(name),
                    JF_MAX_NAME},
    [DR_JF_KIND] = {{"kind", "kind", 0, true, NULL,
                     "batch, train, serve or array (default batch; array with --array)",
                     DR_JF_KIND},
                    JF_KIND,
                    JF_P_KIND,
                    OFF(kind),
                    0},
    [DR_JF_NODES] = {{"nodes", "nodes", 'N', true, "nodes",
                      "nodes, N (or Slurm's N-N); default 1, or as few as hold --gpus",
                      DR_JF_NODES},
                     JF_U32,
                     JF_P_NODES,
                     OFF(nodes),
                     JF_MAX_NODES},
    [DR_JF_GPUS_PER_NODE] = {{"gpus_per_node", "gpus-per-node", 0, true, "gpus-per-node",
                              "GPUs on each node, [TYPE:]N (default: no GPUs)",
                              DR_JF_GPUS_PER_NODE},
                             JF_U32,
                             JF_P_GPUS,
                             OFF(gpus_per_node),
                             JF_MAX_GPN},
    [DR_JF_GPUS] = {{"gpus", "gpus", 'G', true, "gpus",
                     "GPUs in all, [TYPE:]N, on as few nodes as hold them (or spread over -N)",
                     DR_JF_GPUS},
                    JF_U32,
                    JF_P_GPUS,
                    OFF(gpus),
                    JF_MAX_GPUS},
    [DR_JF_GPU_TYPE] = {{"gpu_type", "gpu-type", 0, true, NULL,
                         "allowed GPU types in order of preference, comma-separated, or any "
                         "(default any)",
                         DR_JF_GPU_TYPE},
                        JF_STR,
                        JF_P_TYPES,
                        OFF(gpu_type),
                        0},
    [DR_JF_CPUS_PER_NODE] = {{"cpus_per_node", "cpus-per-node", 'c', true, "cpus-per-task",
                              "whole CPUs on each node (default 1)", DR_JF_CPUS_PER_NODE},
                             JF_U32,
                             JF_P_COUNT,
                             OFF(cpus_per_node),
                             JF_MAX_CPUS},
    [DR_JF_MEM] = {{"mem", "mem", 0, true, "mem",
                    "memory on each node: MB, or with a unit 512M, 16G, 1T (default: none)",
                    DR_JF_MEM},
                   JF_U64,
                   JF_P_MEM,
                   OFF(mem_mb),
                   JF_MAX_MEM_MB},
    [DR_JF_TIME_LIMIT] = {{"time_limit", "time", 't', true, "time",
                           "walltime limit: minutes, MM:SS, [D-]HH:MM:SS, D-HH, 90s, 2h, 3d; "
                           "0 = none",
                           DR_JF_TIME_LIMIT},
                          JF_TIME,
                          JF_P_TIME,
                          OFF(time_limit),
                          0},
    [DR_JF_DEADLINE] = {{"deadline", "deadline", 0, true, NULL,
                         "finish within this long of submission (as --time); 0 = none",
                         DR_JF_DEADLINE},
                        JF_TIME,
                        JF_P_TIME,
                        OFF(deadline),
                        0},
    [DR_JF_CHECKPOINT_EVERY] = {{"checkpoint_every", "checkpoint-every", 0, true, NULL,
                                 "the job saves its progress this often (as --time); 0 = never",
                                 DR_JF_CHECKPOINT_EVERY},
                                JF_TIME,
                                JF_P_TIME,
                                OFF(ckpt_every),
                                0},
    [DR_JF_ARRAY] = {{"array", "array", 'a', true, "array",
                      "array task indices: 0-99, 1,3,5-7, 0-999:4; %N = at most N at once",
                      DR_JF_ARRAY},
                     JF_STR,
                     JF_P_ARRAY,
                     OFF(array),
                     JF_MAX_ARRAY},
    [DR_JF_OUTPUT] = {{"output", "output", 'o', true, "output",
                       "stdout file: %j job id, %A array job id, %a task index, %x name, %u user",
                       DR_JF_OUTPUT},
                      JF_STR,
                      JF_P_PATH,
                      OFF(out_path),
                      JF_MAX_PATH},
    [DR_JF_ERROR] = {{"error", "error", 'e', true, "error",
                      "stderr file, as --output (default: with stdout)", DR_JF_ERROR},
                     JF_STR,
                     JF_P_PATH,
                     OFF(err_path),
                     JF_MAX_PATH},
    [DR_JF_CHDIR] = {{"chdir", "chdir", 'D', true, "chdir", "working directory (absolute)",
                      DR_JF_CHDIR},
                     JF_STR,
                     JF_P_PATH,
                     OFF(cwd),
                     JF_MAX_PATH},
    [DR_JF_ACCOUNT] = {{"account", "account", 'A', true, "account", "account to charge",
                        DR_JF_ACCOUNT},
                       JF_STR,
                       JF_P_STRING,
                       OFF(account),
                       JF_MAX_NAME},
    [DR_JF_PRIORITY] = {{"priority", "priority", 0, true, "priority",
                         "priority, higher runs first (default 0)", DR_JF_PRIORITY},
                        JF_I32,
                        JF_P_INT,
                        OFF(priority),
                        0},
    [DR_JF_NTASKS] = {{"ntasks", "ntasks", 'n', true, "ntasks",
                       "tasks (processes) in all; with --ntasks-per-node sets -N", DR_JF_NTASKS},
                      JF_U32,
                      JF_P_COUNT,
                      OFF(ntasks),
                      JF_MAX_CPUS},
    [DR_JF_NTASKS_PER_NODE] = {{"ntasks_per_node", "ntasks-per-node", 0, true, "ntasks-per-node",
                                "tasks on each node", DR_JF_NTASKS_PER_NODE},
                               JF_U32,
                               JF_P_COUNT,
                               OFF(ntasks_per_node),
                               JF_MAX_CPUS},
    [DR_JF_GPUS_PER_TASK] = {{"gpus_per_task", "gpus-per-task", 0, true, "gpus-per-task",
                              "GPUs for each task, [TYPE:]N (needs --ntasks or --ntasks-per-node)",
                              DR_JF_GPUS_PER_TASK},
                             JF_U32,
                             JF_P_GPUS,
                             OFF(gpus_per_task),
                             JF_MAX_GPN},
    [DR_JF_MEM_PER_GPU] = {{"mem_per_gpu", "mem-per-gpu", 0, true, "mem-per-gpu",
                            "memory for each GPU, as --mem (not with --mem)", DR_JF_MEM_PER_GPU},
                           JF_U64,
                           JF_P_MEM,
                           OFF(mem_per_gpu_mb),
                           JF_MAX_MEM_MB},
    [DR_JF_SIGNAL] = {{"signal", "signal", 0, true, "signal",
                       "[B:]SIG[@SECS]: send SIG (USR1, TERM, 10 ...) SECS (default 60) before "
                       "the time limit",
                       DR_JF_SIGNAL},
                      JF_SIGNAL,
                      JF_P_SIGNAL,
                      OFF(signal_num),
                      0},
    [DR_JF_REQUEUE] = {{"requeue", "requeue", 0, false, "requeue",
                        "put the job back in the queue after a node failure or preemption "
                        "(--no-requeue: do not)",
                        DR_JF_REQUEUE},
                       JF_FLAG,
                       JF_P_FLAG,
                       OFF(requeue),
                       0},
    [DR_JF_DEPENDENCY] = {{"dependency", "dependency", 'd', true, "dependency",
                           "afterok:ID[:ID...], afterany, afternotok, after, singleton; ',' all "
                           "of, '?' any of; ID or ID_TASK",
                           DR_JF_DEPENDENCY},
                          JF_DEP,
                          JF_P_DEP,
                          OFF(deps),
                          JF_MAX_TEXT},
    [DR_JF_PARTITION] = {{"partition", "partition", 'p', true, "partition",
                          "partition(s), comma-separated, as the cluster's config maps them",
                          DR_JF_PARTITION},
                         JF_STR,
                         JF_P_STRING,
                         OFF(partition),
                         JF_MAX_NAME},
    [DR_JF_QOS] = {{"qos", "qos", 'q', true, "qos", "quality of service (kept, not enforced)",
                    DR_JF_QOS},
                   JF_STR,
                   JF_P_STRING,
                   OFF(qos),
                   JF_MAX_NAME},
    [DR_JF_CONSTRAINT] = {{"constraint", "constraint", 'C', true, "constraint",
                           "node features, Slurm's syntax (kept, not matched)", DR_JF_CONSTRAINT},
                          JF_STR,
                          JF_P_STRING,
                          OFF(constraint),
                          JF_MAX_TEXT},
    [DR_JF_EXCLUSIVE] = {{"exclusive", "exclusive", 0, false, "exclusive",
                          "no other job on the job's nodes (docs/slurm.md)", DR_JF_EXCLUSIVE},
                         JF_FLAG,
                         JF_P_FLAG,
                         OFF(exclusive),
                         0},
    [DR_JF_EXPORT] = {{"export", "export", 0, true, "export",
                       "environment: ALL, NONE, or [ALL,]VAR[=VALUE],... (default ALL)",
                       DR_JF_EXPORT},
                      JF_STR,
                      JF_P_EXPORT,
                      OFF(export_env),
                      JF_MAX_TEXT},
    [DR_JF_LAUNCHER] = {{"launcher", "launcher", 0, true, NULL,
                         "how a gang starts: none (drover starts each rank) or torchrun (one "
                         "torchrun per node)",
                         DR_JF_LAUNCHER},
                        JF_STR,
                        JF_P_STRING,
                        OFF(launcher),
                        JF_MAX_NAME},
    [DR_JF_SHARD] = {{"shard", "shard", 0, true, NULL,
                      "input shard the job reads (a file name; %a = task index, %Na "
                      "zero-padded); placed where an agent's cache holds it",
                      DR_JF_SHARD},
                     JF_STR,
                     JF_P_SHARD,
                     OFF(shard),
                     DR_SHARD_NAME_MAX},
    [DR_JF_SHARD_LIST] = {{"shard_list", "shard-list", 0, true, NULL,
                           "one input shard per array task, in task order (the CLI's and "
                           "#DROVER's value is a file of names, one per line)",
                           DR_JF_SHARD_LIST},
                          JF_STR,
                          JF_P_SHARDLIST,
                          OFF(shard_list),
                          JF_MAX_SHARDLIST},
    [DR_JF_REPLICAS] = {{"replicas", "replicas", 0, true, NULL,
                         "a service's replicas, each with its own DROVER_PORT (makes the job "
                         "kind serve)",
                         DR_JF_REPLICAS},
                        JF_U32,
                        JF_P_COUNT,
                        OFF(replicas),
                        JF_MAX_REPLICAS},
    [DR_JF_READY] = {{"ready", "ready", 0, true, NULL,
                      "when a service replica is ready: tcp (its port accepts; the default), "
                      "http:/PATH (GET answers 2xx/3xx) or none",
                      DR_JF_READY},
                     JF_STR,
                     JF_P_READY,
                     OFF(ready),
                     JF_MAX_PATH},
    [DR_JF_HOLD] = {{"hold", "hold", 'H', false, "hold",
                     "submit held: the job waits until drover release", DR_JF_HOLD},
                    JF_FLAG,
                    JF_P_FLAG,
                    OFF(hold),
                    0},
    [DR_JF_TEST_ONLY] = {{"test_only", "test-only", 0, false, "test-only",
                          "only say when and where it would start (the queue as it is, running "
                          "jobs ending at their limits); nothing is submitted",
                          DR_JF_TEST_ONLY},
                         JF_FLAG,
                         JF_P_FLAG,
                         OFF(test_only),
                         0},
    [DR_JF_GPU_MEM] = {{"gpu_mem", "gpu-mem", 0, true, NULL,
                        "each GPU's own memory at least this, as --mem (80G): only the GPU "
                        "types that have it (--mem-per-gpu is host memory)",
                        DR_JF_GPU_MEM},
                       JF_U64,
                       JF_P_MEM,
                       OFF(gpu_mem_mb),
                       JF_MAX_MEM_MB},
    [DR_JF_SPEEDS] = {{"speeds", "speeds", 0, true, NULL,
                       "relative speed on each GPU type, H100=1,A100=0.45 (0 = cannot run "
                       "there; types not named: the catalog's ratios)",
                       DR_JF_SPEEDS},
                      JF_STR,
                      JF_P_SPEEDS,
                      OFF(speeds),
                      JF_MAX_TEXT},
    [DR_JF_CLASS] = {{"class", "class", 0, true, NULL,
                      "jobs alike share a class: drover learns its speed on each GPU type from "
                      "their run times",
                      DR_JF_CLASS},
                     JF_STR,
                     JF_P_STRING,
                     OFF(perf_class),
                     JF_MAX_NAME},
    [DR_JF_ESTIMATE] = {{"estimate", "estimate", 0, true, NULL,
                         "expected run time at speed 1 (--speeds) or on the fastest type, as "
                         "--time; an estimate, not a limit",
                         DR_JF_ESTIMATE},
                        JF_TIME,
                        JF_P_TIME,
                        OFF(estimate),
                        0},
    [DR_JF_MODEL] = {{"model", "model", 0, true, NULL,
                      "the model it trains (drover plan's presets: llama-3-8b; or params=13B): "
                      "its speed on each GPU type from the performance model",
                      DR_JF_MODEL},
                     JF_STR,
                     JF_P_STRING,
                     OFF(model),
                     JF_MAX_NAME},
    [DR_JF_TOKENS] = {{"tokens", "tokens", 0, true, NULL,
                       "with --model: the tokens it trains on (500B, 2T): its work", DR_JF_TOKENS},
                      JF_STR,
                      JF_P_STRING,
                      OFF(tokens),
                      64},
};

#define L(i) &defs[i].pub
static const dr_jobfield_t *const list[DR_JF_N + 1] = {
    L(0),  L(1),  L(2),  L(3),  L(4),  L(5),  L(6),  L(7),  L(8),  L(9),  L(10),
    L(11), L(12), L(13), L(14), L(15), L(16), L(17), L(18), L(19), L(20), L(21),
    L(22), L(23), L(24), L(25), L(26), L(27), L(28), L(29), L(30), L(31), L(32),
    L(33), L(34), L(35), L(36), L(37), L(38), L(39), L(40), L(41), NULL};
#undef L
_Static_assert(DR_JF_N == 42, "list[] names every field");
_Static_assert(DR_JF_N <= 64, "dr_jobspec_t.set has a bit per field");

const dr_jobfield_t *const *dr_jobfield_list(void)
{
    return list;
}

const jf_def_t *jf_def(int id)
{
    return id >= 0 && id < DR_JF_N ? &defs[id] : NULL;
}

const jf_def_t *jf_lookup(const char *name, uint8_t *how)
{
    *how = JF_HOW_PLAIN;
    if (!name || !*name)
        return NULL;
    if (name[0] == '-' && name[1] && name[1] != '-' && !name[2]) { /* "-N" */
        for (int i = 0; i < DR_JF_N; i++)
            if (defs[i].pub.shopt && defs[i].pub.shopt == name[1])
                return &defs[i];
        return NULL;
    }
    bool dashed = name[0] == '-' && name[1] == '-';
    const char *n = dashed ? name + 2 : name;
    if (!*n)
        return NULL;
    for (int i = 0; i < DR_JF_N && !dashed; i++) /* canonical names, as trace headers: any case */
        if (dr_streq_ci(n, defs[i].pub.name))
            return &defs[i];
    for (int i = 0; i < DR_JF_N; i++)
        if (strcmp(n, defs[i].pub.opt) == 0 ||
            (defs[i].pub.sbatch && !strcmp(n, defs[i].pub.sbatch)))
            return &defs[i];
    if (strcmp(n, "gres") == 0) { /* Slurm's --gres=gpu[:TYPE][:N] */
        *how = JF_HOW_GRES;
        return &defs[DR_JF_GPUS_PER_NODE];
    }
    if (strcmp(n, "no-requeue") == 0) {
        *how = JF_HOW_NEG;
        return &defs[DR_JF_REQUEUE];
    }
    return NULL;
}

const dr_jobfield_t *dr_jobfield_find(const char *name)
{
    uint8_t how;
    const jf_def_t *d = jf_lookup(name, &how);
    return d ? &d->pub : NULL;
}

/* --- helpers --- */

bool jf_utf8_ok(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (n - i < len)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

int jf_vec_push(char ***v, uint32_t *n, const char *str)
{
    char *copy = dr_strdup(str);
    char **nv = copy ? realloc(*v, (*n + 2) * sizeof *nv) : NULL;
    if (!nv) {
        free(copy);
        return DR_ENOMEM;
    }
    nv[(*n)++] = copy;
    nv[*n] = NULL;
    *v = nv;
    return DR_OK;
}

void jf_vec_free(char ***v, uint32_t *n)
{
    for (uint32_t i = 0; *v && i < *n; i++)
        free((*v)[i]);
    free(*v);
    *v = NULL;
    *n = 0;
}

#define FIELD(s, d, type)  ((type *)((char *)(s) + (d)->off))
#define CFIELD(s, d, type) ((const type *)((const char *)(s) + (d)->off))

bool jf_given(const dr_jobspec_t *s, int id)
{
    const jf_def_t *d = &defs[id];
    if (s->set & (DR_JF_BIT(id)))
        return true;
    switch (d->store) {
    case JF_STR: return *CFIELD(s, d, char *) != NULL;
    case JF_U32: return *CFIELD(s, d, uint32_t) != 0;
    case JF_U64: return *CFIELD(s, d, uint64_t) != 0;
    case JF_TIME: return *CFIELD(s, d, dr_time_t) != 0;
    case JF_I32: return *CFIELD(s, d, int32_t) != 0;
    case JF_KIND: return s->kind_set;
    case JF_FLAG: return *CFIELD(s, d, int8_t) != -1;
    case JF_SIGNAL: return s->signal_num != 0;
    case JF_DEP: return s->ndeps != 0;
    }
    return false;
}

void jf_move(dr_jobspec_t *dst, dr_jobspec_t *src, int id)
{
    const jf_def_t *d = &defs[id];
    switch (d->store) {
    case JF_STR:
        free(*FIELD(dst, d, char *));
        *FIELD(dst, d, char *) = *FIELD(src, d, char *);
        *FIELD(src, d, char *) = NULL;
        break;
    case JF_U32: *FIELD(dst, d, uint32_t) = *FIELD(src, d, uint32_t); break;
    case JF_U64: *FIELD(dst, d, uint64_t) = *FIELD(src, d, uint64_t); break;
    case JF_TIME: *FIELD(dst, d, dr_time_t) = *FIELD(src, d, dr_time_t); break;
    case JF_I32: *FIELD(dst, d, int32_t) = *FIELD(src, d, int32_t); break;
    case JF_KIND:
        dst->kind = src->kind;
        dst->kind_set = true;
        break;
    case JF_FLAG: *FIELD(dst, d, int8_t) = *FIELD(src, d, int8_t); break;
    case JF_SIGNAL:
        dst->signal_num = src->signal_num;
        dst->signal_secs = src->signal_secs;
        dst->signal_batch = src->signal_batch;
        break;
    case JF_DEP:
        jf_deps_free(dst);
        dst->deps = src->deps;
        dst->ndeps = src->ndeps;
        dst->dep_any = src->dep_any;
        src->deps = NULL;
        src->ndeps = 0;
        break;
    }
    src->set &= ~(DR_JF_BIT(id));
    dst->set |= DR_JF_BIT(id);
}

/* A whole number in [0, max]: decimal digits, optionally followed by '.'
 * and zeros ("8.0", as spreadsheets write counts). */
static bool parse_count(const char *b, size_t n, uint64_t max, uint64_t *out)
{
    size_t i = 0;
    uint64_t v = 0;
    for (; i < n && isdigit((unsigned char)b[i]); i++) {
        uint64_t digit = (uint64_t)(b[i] - '0');
        if (v > max / 10 || digit > max - v * 10)
            return false;
        v = v * 10 + digit;
    }
    if (i == 0)
        return false;
    if (i < n && b[i] == '.')
        for (i++; i < n && b[i] == '0'; i++)
            ;
    if (i != n)
        return false;
    *out = v;
    return true;
}

/* A GPU type name as the config and the catalog write them. */
static bool type_name_ok(const char *b, size_t n)
{
    if (n == 0 || n >= DR_GPU_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)b[i]) && !strchr("-_.+", b[i]))
            return false;
    return true;
}

/* "value" in messages, shortened: user text can be long. */
#define VQ       "'%.*s%s'"
#define VA(b, n) (int)((n) > 64 ? 61 : (n)), (b), (n) > 64 ? "..." : ""

static int set_str(char **dst, const char *b, size_t n)
{
    char *copy = dr_strndup(b, n);
    if (!copy)
        return DR_ENOMEM;
    free(*dst);
    *dst = copy;
    return DR_OK;
}

/* --- the parsers, one per kind of value --- */

static int p_string(dr_jobspec_t *s, const jf_def_t *d, const char *v, dr_err_t *err)
{
    const char *f = d->pub.name;
    size_t n = strlen(v);
    if (n > d->max)
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is longer than %llu bytes", f, VA(v, n),
                          (unsigned long long)d->max);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
            return dr_err_set(err, DR_EINVAL, "%s: " VQ " contains a control character", f,
                              VA(v, n));
    if (!jf_utf8_ok(v, n))
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is not valid UTF-8", f, VA(v, n));
    if (set_str(FIELD(s, d, char *), v, n) != 0)
        return dr_err_set(err, DR_ENOMEM, "%s: out of memory", f);
    return DR_OK;
}

static int p_kind(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    char buf[16];
    dr_job_kind_t k;
    if (n >= sizeof buf || (memcpy(buf, b, n), buf[n] = '\0', dr_job_kind_parse(buf, &k) != 0))
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is not train, serve, batch or array",
                          d->pub.name, VA(b, n));
    s->kind = (uint8_t)k;
    s->kind_set = true;
    return DR_OK;
}

static int count_err(dr_err_t *err, const jf_def_t *d, const char *b, size_t n)
{
    return dr_err_set(err, DR_EINVAL, "%s: " VQ " is not a whole number from 0 to %llu",
                      d->pub.name, VA(b, n), (unsigned long long)d->max);
}

static int p_count(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    uint64_t v;
    if (!parse_count(b, n, d->max, &v))
        return count_err(err, d, b, n);
    *FIELD(s, d, uint32_t) = (uint32_t)v;
    return DR_OK;
}

/* Slurm's -N min[-max]: drover places a job on one number of nodes. */
static int p_nodes(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    const char *dash = memchr(b, '-', n);
    if (!dash)
        return p_count(s, d, b, n, err);
    uint64_t lo, hi;
    if (!parse_count(b, (size_t)(dash - b), d->max, &lo) ||
        !parse_count(dash + 1, n - (size_t)(dash - b) - 1, d->max, &hi))
        return count_err(err, d, b, n);
    if (lo != hi)
        return dr_err_set(err, DR_EINVAL,
                          "%s: " VQ ": a range of node counts is not supported, give one number",
                          d->pub.name, VA(b, n));
    *FIELD(s, d, uint32_t) = (uint32_t)lo;
    return DR_OK;
}

/* [gpu:][TYPE:]N, and --gres's gpu[:TYPE][:N] (N defaults to 1 there). */
static int p_gpus(dr_jobspec_t *s, const jf_def_t *d, bool gres, const char *b, size_t n,
                  dr_err_t *err)
{
    const char *part[4];
    size_t plen[4], np = 0;
    for (const char *p = b, *e = b + n;; np++) {
        const char *c = memchr(p, ':', (size_t)(e - p));
        if (np == 3)
            goto bad;
        part[np] = p;
        plen[np] = c ? (size_t)(c - p) : (size_t)(e - p);
        if (!c) {
            np++;
            break;
        }
        p = c + 1;
    }
    size_t k = 0;
    if (np > 0 && plen[0] == 3 && strncasecmp(part[0], "gpu", 3) == 0 && (gres || np > 1))
        k = 1;
    else if (gres)
        return dr_err_set(err, DR_EINVAL,
                          "%s: --gres " VQ " is not a GPU request (gpu:N or gpu:TYPE:N)",
                          d->pub.name, VA(b, n));
    uint64_t v = 1;
    const char *type = NULL;
    size_t tlen = 0;
    /* TYPE:N, or --gres's gpu:TYPE (one GPU) */
    if (np - k == 2 || (gres && np - k == 1 && !parse_count(part[k], plen[k], d->max, &v))) {
        type = part[k];
        tlen = plen[k];
        k++;
    } else if (np - k > 2) {
        goto bad;
    }
    if (k < np && !parse_count(part[k], plen[k], d->max, &v))
        goto bad;
    if (type && !(tlen == 3 && strncasecmp(type, "any", 3) == 0) && !type_name_ok(type, tlen))
        return dr_err_set(err, DR_EINVAL,
                          "%s: " VQ ": '%.*s' is not a GPU type name (letters, digits, - _ . +)",
                          d->pub.name, VA(b, n), (int)(tlen > 40 ? 40 : tlen), type);
    if (type) {
        char *t = NULL;
        if (!(tlen == 3 && strncasecmp(type, "any", 3) == 0) && !(t = dr_strndup(type, tlen)))
            return dr_err_set(err, DR_ENOMEM, "%s: out of memory", d->pub.name);
        free(s->gpu_type);
        s->gpu_type = t;
        s->set |= DR_JF_BIT(DR_JF_GPU_TYPE);
    }
    *FIELD(s, d, uint32_t) = (uint32_t)v;
    return DR_OK;
bad:
    return dr_err_set(err, DR_EINVAL,
                      "%s: " VQ " is not a GPU count ([TYPE:]N, N a whole number from 0 to %llu)",
                      d->pub.name, VA(b, n), (unsigned long long)d->max);
}

/* "H100,A100" (or '|'-separated, as trace cells) or "any"; kept as
 * comma-separated names, NULL for any. */
static int p_types(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    const char *f = d->pub.name;
    if (n == 3 && strncasecmp(b, "any", 3) == 0) {
        free(s->gpu_type);
        s->gpu_type = NULL;
        return DR_OK;
    }
    char *out = malloc(n + 1);
    if (!out)
        return dr_err_set(err, DR_ENOMEM, "%s: out of memory", f);
    size_t len = 0, count = 0;
    for (const char *p = b, *e = b + n; p <= e;) {
        const char *q = p;
        while (q < e && *q != ',' && *q != '|')
            q++;
        /* blanks around a name are allowed ("H100, A100") */
        const char *tb = p;
        size_t tn = (size_t)(q - p);
        for (; tn && isspace((unsigned char)*tb); tb++, tn--)
            ;
        while (tn && isspace((unsigned char)tb[tn - 1]))
            tn--;
        int rc = DR_OK;
        if (tn == 0)
            rc = dr_err_set(err, DR_EINVAL, "%s: " VQ " has an empty type name", f, VA(b, n));
        else if (tn == 3 && strncasecmp(tb, "any", 3) == 0)
            rc = dr_err_set(err, DR_EINVAL, "%s: " VQ ": 'any' cannot be combined with names", f,
                            VA(b, n));
        else if (!type_name_ok(tb, tn))
            rc = dr_err_set(err, DR_EINVAL,
                            "%s: '%.*s' is not a GPU type name (letters, digits, - _ . +)", f,
                            (int)(tn > 40 ? 40 : tn), tb);
        else if (++count > JF_MAX_GPU_TYPES)
            rc = dr_err_set(err, DR_EINVAL, "%s: more than %u type names", f, JF_MAX_GPU_TYPES);
        if (rc != DR_OK) {
            free(out);
            return rc;
        }
        if (len)
            out[len++] = ',';
        memcpy(out + len, tb, tn);
        len += tn;
        p = q + 1;
    }
    out[len] = '\0';
    free(s->gpu_type);
    s->gpu_type = out;
    return DR_OK;
}

/* Whole seconds, rounded up, so that "0.5s" is a limit and not "none". */
static int p_time(dr_jobspec_t *s, const jf_def_t *d, const char *v, dr_err_t *err)
{
    dr_time_t t = 0;
    int rc = dr_time_limit_parse(v, &t, err);
    if (rc != 0) {
        dr_err_prefix(err, "%s: ", d->pub.name);
        return rc;
    }
    *FIELD(s, d, dr_time_t) = (t + DR_NSEC_PER_SEC - 1) / DR_NSEC_PER_SEC * DR_NSEC_PER_SEC;
    return DR_OK;
}

/* Slurm's --mem: MB, or K, M, G, T suffixes (K rounds up to a whole MB). */
static int p_mem(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    static const char units[] = "KkMmGgTt";
    const char *u = n && b[n - 1] ? strchr(units, b[n - 1]) : NULL;
    size_t digits = u ? n - 1 : n;
    uint64_t v;
    if (!parse_count(b, digits, UINT64_MAX / 10, &v) || memchr(b, '.', digits))
        return dr_err_set(err, DR_EINVAL,
                          "%s: " VQ " is not a size (whole MB, or with a unit: 512M, 16G, 1T)",
                          d->pub.name, VA(b, n));
    uint64_t mb = v;
    int shift = u ? (int)((u - units) / 2) * 10 - 10 : 0; /* K -10, M 0, G 10, T 20 */
    if (shift < 0)
        mb = v / 1024 + (v % 1024 != 0);
    else if (shift > 0)
        mb = v > (d->max >> shift) ? d->max + 1 : v << shift;
    if (mb > d->max)
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is too large (at most %llu MB)", d->pub.name,
                          VA(b, n), (unsigned long long)d->max);
    *FIELD(s, d, uint64_t) = mb;
    return DR_OK;
}

static int p_int(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (b[i] == '-' || b[i] == '+'))
        neg = b[i++] == '-';
    uint64_t v;
    if (!parse_count(b + i, n - i, (uint64_t)INT32_MAX + neg, &v) || memchr(b, '.', n))
        return dr_err_set(err, DR_EINVAL,
                          "%s: " VQ " is not a whole number from -2147483648 to 2147483647",
                          d->pub.name, VA(b, n));
    *FIELD(s, d, int32_t) = neg ? (int32_t)(-(int64_t)v) : (int32_t)v;
    return DR_OK;
}

/* A shard name template: a file name in an agent's cache directory (no
 * '/', not "." or "..", no control characters) whose only '%' sequences
 * are %a, %Na (N = 1..9) and %%, as the native trace's shard column. */
static int p_shard(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    const char *f = d->pub.name;
    if (n > d->max)
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is longer than %llu bytes", f, VA(b, n),
                          (unsigned long long)d->max);
    if ((n == 1 && b[0] == '.') || (n == 2 && b[0] == '.' && b[1] == '.'))
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is not a file name", f, VA(b, n));
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)b[i];
        if (ch < 0x20 || ch == 0x7f || ch == '/')
            return dr_err_set(err, DR_EINVAL, "%s: " VQ " contains %s", f, VA(b, n),
                              ch == '/' ? "'/' (a shard is a name, not a path)"
                                        : "a control character");
        if (ch != '%')
            continue;
        if (i + 1 < n && b[i + 1] == '%') {
            i++;
            continue;
        }
        size_t q = i + 1;
        if (q < n && b[q] >= '1' && b[q] <= '9')
            q++;
        if (q >= n || b[q] != 'a')
            return dr_err_set(err, DR_EINVAL,
                              "%s: " VQ ": '%%' must start %%a, %%Na (N = 1..9) or %%%%", f,
                              VA(b, n));
        i = q;
    }
    if (!jf_utf8_ok(b, n))
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is not valid UTF-8", f, VA(b, n));
    if (set_str(FIELD(s, d, char *), b, n) != 0)
        return dr_err_set(err, DR_ENOMEM, "%s: out of memory", f);
    return DR_OK;
}

/* Shard names, one per line (blank lines and a final newline allowed, a
 * '\r' before '\n' dropped): each a name p_shard would take, with no '%'
 * (a list names each task's shard itself).  Stored one per line. */
static int p_shardlist(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    const char *f = d->pub.name;
    if (n > d->max)
        return dr_err_set(err, DR_EINVAL, "%s: longer than %llu bytes", f,
                          (unsigned long long)d->max);
    char *out = malloc(n + 1);
    if (!out)
        return dr_err_set(err, DR_ENOMEM, "%s: out of memory", f);
    size_t len = 0, line = 0;
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && b[e] != '\n')
            e++;
        size_t k = e;
        line++;
        if (k > i && b[k - 1] == '\r')
            k--;
        const char *nb = b + i;
        size_t nn = k - i;
        i = e + 1;
        while (nn && isspace((unsigned char)*nb))
            nb++, nn--;
        while (nn && isspace((unsigned char)nb[nn - 1]))
            nn--;
        if (nn == 0)
            continue;
        int rc = DR_OK;
        if (nn > DR_SHARD_NAME_MAX)
            rc = dr_err_set(err, DR_EINVAL, "%s: line %zu: longer than %u bytes", f, line,
                            DR_SHARD_NAME_MAX);
        else if (memchr(nb, '%', nn))
            rc = dr_err_set(err, DR_EINVAL, "%s: line %zu: " VQ ": no '%%' in a listed name", f,
                            line, VA(nb, nn));
        else if ((nn == 1 && nb[0] == '.') || (nn == 2 && nb[0] == '.' && nb[1] == '.'))
            rc = dr_err_set(err, DR_EINVAL, "%s: line %zu: " VQ " is not a file name", f, line,
                            VA(nb, nn));
        for (size_t q = 0; q < nn && rc == DR_OK; q++) {
            unsigned char ch = (unsigned char)nb[q];
            if (ch < 0x20 || ch == 0x7f || ch == '/')
                rc = dr_err_set(
                    err, DR_EINVAL, "%s: line %zu: " VQ " contains %s", f, line, VA(nb, nn),
                    ch == '/' ? "'/' (a shard is a name, not a path)" : "a control character");
        }
        if (rc == DR_OK && !jf_utf8_ok(nb, nn))
            rc = dr_err_set(err, DR_EINVAL, "%s: line %zu: not valid UTF-8", f, line);
        if (rc != DR_OK) {
            free(out);
            return rc;
        }
        memcpy(out + len, nb, nn);
        len += nn;
        out[len++] = '\n';
    }
    if (len == 0) {
        free(out);
        return dr_err_set(err, DR_EINVAL, "%s: names no shard", f);
    }
    out[len - 1] = '\0';
    free(*FIELD(s, d, char *));
    *FIELD(s, d, char *) = out;
    return DR_OK;
}

/* A readiness check: tcp, none, or http:/PATH (PATH printable, no blanks). */
static int p_ready(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    const char *f = d->pub.name;
    bool ok = (n == 3 && !strncmp(b, "tcp", 3)) || (n == 4 && !strncmp(b, "none", 4));
    if (!ok && n > 6 && !strncmp(b, "http:/", 6) && n <= d->max) {
        ok = true;
        for (size_t i = 5; i < n && ok; i++)
            ok = (unsigned char)b[i] > 0x20 && (unsigned char)b[i] < 0x7f;
    } else if (!ok && n == 6 && !strncmp(b, "http:/", 6)) {
        ok = true;
    }
    if (!ok)
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is not tcp, none or http:/PATH", f, VA(b, n));
    if (set_str(FIELD(s, d, char *), b, n) != 0)
        return dr_err_set(err, DR_ENOMEM, "%s: out of memory", f);
    return DR_OK;
}

/* Declared speeds: their syntax here (dr_speeds_parse); the names are
 * matched to the cluster's types at submit. */
static int p_speeds(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    if (n > d->max)
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is longer than %llu bytes", d->pub.name,
                          VA(b, n), (unsigned long long)d->max);
    char *text = dr_strndup(b, n);
    if (!text)
        return dr_err_set(err, DR_ENOMEM, "%s: out of memory", d->pub.name);
    dr_speeds_t sp;
    int rc = strlen(text) != n ? dr_err_set(err, DR_EINVAL, "speeds: contains a NUL byte")
                               : dr_speeds_parse(text, &sp, err);
    if (rc == DR_OK && set_str(FIELD(s, d, char *), b, n) != 0)
        rc = dr_err_set(err, DR_ENOMEM, "%s: out of memory", d->pub.name);
    free(text);
    return rc;
}

/* Checked with dr_array_parse (whose messages name the field). */
static int p_array(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    if (n > d->max)
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is longer than %llu bytes", d->pub.name,
                          VA(b, n), (unsigned long long)d->max);
    char *spec = dr_strndup(b, n);
    if (!spec)
        return dr_err_set(err, DR_ENOMEM, "%s: out of memory", d->pub.name);
    uint32_t *idx = NULL, throttle;
    size_t count = 0;
    int rc = dr_array_parse(spec, &idx, &count, &throttle, err);
    free(idx);
    if (rc != 0) {
        free(spec);
        return rc;
    }
    free(s->array);
    s->array = spec;
    return DR_OK;
}

/* --- flags, signals, dependencies, --export --- */

/* A flag's value: "1" (what the CLI passes for "--exclusive"), true, yes,
 * on, and their opposites; a negated spelling ("--no-requeue") inverts. */
static int p_flag(dr_jobspec_t *s, const jf_def_t *d, uint8_t how, const char *b, size_t n,
                  dr_err_t *err)
{
    static const char *const yes[] = {"1", "true", "yes", "on", NULL};
    static const char *const no[] = {"0", "false", "no", "off", NULL};
    int v = -1;
    for (int i = 0; yes[i] && v < 0; i++) {
        if (strlen(yes[i]) == n && strncasecmp(b, yes[i], n) == 0)
            v = 1;
        else if (strlen(no[i]) == n && strncasecmp(b, no[i], n) == 0)
            v = 0;
    }
    if (v < 0)
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is not a flag value (give --%s alone)",
                          d->pub.name, VA(b, n), d->pub.opt);
    *FIELD(s, d, int8_t) = (int8_t)(how == JF_HOW_NEG ? !v : v);
    return DR_OK;
}

static const struct {
    const char *name;
    int sig;
} signals[] = {
    {"HUP", SIGHUP},       {"INT", SIGINT},   {"QUIT", SIGQUIT},   {"ILL", SIGILL},
    {"TRAP", SIGTRAP},     {"ABRT", SIGABRT}, {"BUS", SIGBUS},     {"FPE", SIGFPE},
    {"KILL", SIGKILL},     {"USR1", SIGUSR1}, {"SEGV", SIGSEGV},   {"USR2", SIGUSR2},
    {"PIPE", SIGPIPE},     {"ALRM", SIGALRM}, {"TERM", SIGTERM},   {"CHLD", SIGCHLD},
    {"CONT", SIGCONT},     {"STOP", SIGSTOP}, {"TSTP", SIGTSTP},   {"TTIN", SIGTTIN},
    {"TTOU", SIGTTOU},     {"URG", SIGURG},   {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ},
    {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"SYS", SIGSYS},
};
#define JF_MAX_SIGNAL 64

int dr_signal_parse(const char *name, size_t len)
{
    if (!name)
        return 0;
    if (len >= 3 && strncasecmp(name, "SIG", 3) == 0) {
        name += 3;
        len -= 3;
    }
    uint64_t v;
    if (len && isdigit((unsigned char)name[0])) {
        if (!memchr(name, '.', len) && parse_count(name, len, JF_MAX_SIGNAL, &v) && v > 0)
            return (int)v;
        return 0;
    }
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
        if (strlen(signals[i].name) == len && strncasecmp(name, signals[i].name, len) == 0)
            return signals[i].sig;
    return 0;
}

const char *dr_signal_name(int sig)
{
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
        if (signals[i].sig == sig)
            return signals[i].name;
    return NULL;
}

/* Slurm's --signal=[{R|B}:]SIG[@SECS]; R (also at a reservation's end) has
 * no meaning here. */
static int p_signal(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    const char *f = d->pub.name, *p = b, *e = b + n;
    bool batch = false;
    const char *colon = memchr(p, ':', n);
    if (colon) {
        for (const char *q = p; q < colon; q++) {
            if (*q == 'B' || *q == 'b')
                batch = true;
            else if (*q == 'R' || *q == 'r')
                return dr_err_set(err, DR_EINVAL,
                                  "%s: " VQ ": R: (a reservation's end) is not supported", f,
                                  VA(b, n));
            else
                goto bad;
        }
        p = colon + 1;
    }
    const char *at = memchr(p, '@', (size_t)(e - p));
    int sig = dr_signal_parse(p, (size_t)((at ? at : e) - p));
    uint64_t secs = 60;
    if (!sig)
        goto bad;
    if (at && (memchr(at + 1, '.', (size_t)(e - at - 1)) ||
               !parse_count(at + 1, (size_t)(e - at - 1), 65535, &secs)))
        goto bad;
    s->signal_num = sig;
    s->signal_secs = (uint32_t)secs;
    s->signal_batch = batch;
    return DR_OK;
bad:
    return dr_err_set(err, DR_EINVAL,
                      "%s: " VQ " is not [B:]SIG[@SECS] (SIG a name such as USR1 or a number from "
                      "1 to %d, SECS from 0 to 65535)",
                      f, VA(b, n), JF_MAX_SIGNAL);
}

char *jf_signal_text(const dr_jobspec_t *s)
{
    char buf[64], num[16];
    const char *name = dr_signal_name(s->signal_num);
    if (!name) {
        snprintf(num, sizeof num, "%d", (int)s->signal_num);
        name = num;
    }
    snprintf(buf, sizeof buf, "%s%s@%u", s->signal_batch ? "B:" : "", name,
             (unsigned)s->signal_secs);
    return dr_strdup(buf);
}

static const char *const dep_kinds[DR_DEP_NKINDS] = {"after", "afterok", "afterany", "afternotok",
                                                     "singleton"};

void jf_deps_free(dr_jobspec_t *s)
{
    for (uint32_t i = 0; s->deps && i < s->ndeps; i++)
        free(s->deps[i].refs);
    free(s->deps);
    s->deps = NULL;
    s->ndeps = 0;
    s->dep_any = false;
}

/* "ID" or "ID_TASK", ID 1.. and TASK an array index. */
static bool dep_ref(const char *b, size_t n, dr_dep_ref_t *r)
{
    const char *us = memchr(b, '_', n);
    size_t idn = us ? (size_t)(us - b) : n;
    uint64_t id, task = 0;
    if (memchr(b, '.', n) || !parse_count(b, idn, (uint64_t)INT64_MAX, &id) || id == 0)
        return false;
    if (us && !parse_count(us + 1, n - idn - 1, UINT32_MAX, &task))
        return false;
    r->job = id;
    r->task = us ? (int64_t)task : -1;
    return true;
}

/* Slurm's --dependency: terms "KIND:ID[:ID...]" (or "singleton") joined by
 * ',' (all must hold) or '?' (any one), not both. */
static int p_dep(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    const char *f = d->pub.name;
    if (n > d->max)
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is longer than %llu bytes", f, VA(b, n),
                          (unsigned long long)d->max);
    bool any = memchr(b, '?', n) != NULL;
    if (any && memchr(b, ',', n))
        return dr_err_set(err, DR_EINVAL,
                          "%s: " VQ ": ',' (all of) and '?' (any of) cannot be mixed", f, VA(b, n));
    char sep = any ? '?' : ',';
    dr_jobspec_t t; /* built aside: s changes only when the whole text is good */
    memset(&t, 0, sizeof t);
    uint32_t total = 0;
    int rc = DR_OK;
    for (const char *p = b, *e = b + n; p <= e && rc == DR_OK;) {
        const char *q = memchr(p, sep, (size_t)(e - p));
        if (!q)
            q = e;
        size_t tn = (size_t)(q - p);
        const char *colon = memchr(p, ':', tn);
        size_t kn = colon ? (size_t)(colon - p) : tn;
        int kind = -1;
        for (int k = 0; k < DR_DEP_NKINDS; k++)
            if (strlen(dep_kinds[k]) == kn && strncasecmp(p, dep_kinds[k], kn) == 0)
                kind = k;
        dr_dep_t *nd = NULL;
        if (tn == 0) {
            rc = dr_err_set(err, DR_EINVAL, "%s: " VQ " has an empty term", f, VA(b, n));
        } else if (kind < 0) {
            rc = dr_err_set(err, DR_EINVAL,
                            "%s: " VQ ": '%.*s' is not a dependency kind (after, afterok, "
                            "afterany, afternotok, singleton)",
                            f, VA(b, n), (int)(kn > 40 ? 40 : kn), p);
        } else if ((kind == DR_DEP_SINGLETON) != !colon) {
            rc = dr_err_set(
                err, DR_EINVAL, "%s: " VQ ": '%.*s' %s", f, VA(b, n), (int)(tn > 40 ? 40 : tn), p,
                kind == DR_DEP_SINGLETON ? "takes no job ids" : "needs job ids (KIND:ID[:ID...])");
        } else if (!(nd = realloc(t.deps, (t.ndeps + 1) * sizeof *t.deps))) {
            rc = dr_err_set(err, DR_ENOMEM, "%s: out of memory", f);
        } else {
            t.deps = nd;
            dr_dep_t *dep = &t.deps[t.ndeps++];
            dep->kind = (uint8_t)kind;
            dep->nrefs = 0;
            dep->refs = NULL;
            for (const char *r = colon ? colon + 1 : q; r <= q && colon && rc == DR_OK;) {
                const char *re = memchr(r, ':', (size_t)(q - r));
                if (!re)
                    re = q;
                dr_dep_ref_t ref;
                const char *plus = memchr(r, '+', (size_t)(re - r));
                dr_dep_ref_t *nr = NULL;
                if (plus)
                    rc = dr_err_set(err, DR_EINVAL,
                                    "%s: " VQ ": a delay after a job id ('%.*s') is not supported",
                                    f, VA(b, n), (int)(re - plus > 20 ? 20 : re - plus), plus);
                else if (!dep_ref(r, (size_t)(re - r), &ref))
                    rc = dr_err_set(err, DR_EINVAL,
                                    "%s: " VQ ": '%.*s' is not a job id (ID or ID_TASK)", f,
                                    VA(b, n), (int)(re - r > 40 ? 40 : re - r), r);
                else if (++total > DR_JOBSPEC_MAX_DEPS)
                    rc = dr_err_set(err, DR_ELIMIT, "%s: more than %u job ids", f,
                                    DR_JOBSPEC_MAX_DEPS);
                else if (!(nr = realloc(dep->refs, (dep->nrefs + 1) * sizeof *nr)))
                    rc = dr_err_set(err, DR_ENOMEM, "%s: out of memory", f);
                else {
                    dep->refs = nr;
                    dep->refs[dep->nrefs++] = ref;
                }
                r = re + 1;
            }
        }
        p = q + 1;
    }
    if (rc != DR_OK) {
        jf_deps_free(&t);
        return rc;
    }
    jf_deps_free(s);
    s->deps = t.deps;
    s->ndeps = t.ndeps;
    s->dep_any = any;
    return DR_OK;
}

char *jf_dep_text(const dr_jobspec_t *s)
{
    size_t cap = 16, len = 0;
    for (uint32_t i = 0; i < s->ndeps; i++)
        cap += 12 + (size_t)s->deps[i].nrefs * 42;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = '\0';
    for (uint32_t i = 0; i < s->ndeps; i++) {
        const dr_dep_t *dep = &s->deps[i];
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? (s->dep_any ? "?" : ",") : "",
                                dep->kind < DR_DEP_NKINDS ? dep_kinds[dep->kind] : "after");
        for (uint32_t k = 0; k < dep->nrefs; k++) {
            len += (size_t)snprintf(out + len, cap - len, ":%" PRIu64, dep->refs[k].job);
            if (dep->refs[k].task >= 0)
                len += (size_t)snprintf(out + len, cap - len, "_%" PRId64, dep->refs[k].task);
        }
    }
    return out;
}

static bool env_name_ok(const char *b, size_t n)
{
    if (n == 0 || isdigit((unsigned char)b[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)b[i]) && b[i] != '_')
            return false;
    return true;
}

/* Slurm's --export: ALL, NONE (NIL), or names and NAME=VALUE after an
 * optional ALL or NONE, comma-separated.  Kept as written. */
static int p_export(dr_jobspec_t *s, const jf_def_t *d, const char *b, size_t n, dr_err_t *err)
{
    const char *f = d->pub.name;
    if (n > d->max)
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is longer than %llu bytes", f, VA(b, n),
                          (unsigned long long)d->max);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)b[i] < 0x20 || b[i] == 0x7f)
            return dr_err_set(err, DR_EINVAL, "%s: " VQ " contains a control character", f,
                              VA(b, n));
    if (!jf_utf8_ok(b, n))
        return dr_err_set(err, DR_EINVAL, "%s: " VQ " is not valid UTF-8", f, VA(b, n));
    size_t k = 0;
    for (const char *p = b, *e = b + n; p <= e; k++) {
        const char *q = memchr(p, ',', (size_t)(e - p));
        if (!q)
            q = e;
        const char *eq = memchr(p, '=', (size_t)(q - p));
        size_t nn = (size_t)((eq ? eq : q) - p);
        bool word = !eq && ((nn == 3 && (!strncmp(p, "ALL", 3) || !strncmp(p, "NIL", 3))) ||
                            (nn == 4 && !strncmp(p, "NONE", 4)));
        if (word ? k != 0 : !env_name_ok(p, nn))
            return dr_err_set(err, DR_EINVAL,
                              "%s: " VQ ": '%.*s' is not a variable name (ALL or NONE only "
                              "first)",
                              f, VA(b, n), (int)(nn > 40 ? 40 : nn), p);
        p = q + 1;
    }
    if (set_str(&s->export_env, b, n) != 0)
        return dr_err_set(err, DR_ENOMEM, "%s: out of memory", f);
    return DR_OK;
}

int jf_set(dr_jobspec_t *s, const jf_def_t *d, uint8_t how, const char *value, dr_err_t *err)
{
    const char *f = d->pub.name;
    if (!value)
        return dr_err_set(err, DR_EINVAL, "%s: missing value", f);
    if (dr_is_blank(value))
        return dr_err_set(err, DR_EINVAL, "%s: empty value", f);
    const char *b;
    size_t n;
    b = dr_trim_span(value, &n);
    int rc;
    switch (d->parse) {
    case JF_P_STRING:
    case JF_P_PATH: rc = p_string(s, d, value, err); break;
    case JF_P_KIND: rc = p_kind(s, d, b, n, err); break;
    case JF_P_NODES: rc = p_nodes(s, d, b, n, err); break;
    case JF_P_GPUS: rc = p_gpus(s, d, how == JF_HOW_GRES, b, n, err); break;
    case JF_P_COUNT: rc = p_count(s, d, b, n, err); break;
    case JF_P_TYPES: rc = p_types(s, d, b, n, err); break;
    case JF_P_TIME: rc = p_time(s, d, value, err); break;
    case JF_P_MEM: rc = p_mem(s, d, b, n, err); break;
    case JF_P_ARRAY: rc = p_array(s, d, b, n, err); break;
    case JF_P_INT: rc = p_int(s, d, b, n, err); break;
    case JF_P_FLAG: rc = p_flag(s, d, how, b, n, err); break;
    case JF_P_SIGNAL: rc = p_signal(s, d, b, n, err); break;
    case JF_P_DEP: rc = p_dep(s, d, b, n, err); break;
    case JF_P_EXPORT: rc = p_export(s, d, b, n, err); break;
    case JF_P_SHARD: rc = p_shard(s, d, b, n, err); break;
    case JF_P_SHARDLIST: rc = p_shardlist(s, d, b, n, err); break;
    case JF_P_READY: rc = p_ready(s, d, b, n, err); break;
    case JF_P_SPEEDS: rc = p_speeds(s, d, b, n, err); break;
    default: rc = dr_err_set(err, DR_EINVAL, "%s: cannot be set", f); break;
    }
    if (rc == DR_OK)
        s->set |= DR_JF_BIT(d->pub.id);
    return rc;
}

int dr_jobspec_set(dr_jobspec_t *s, const char *field, const char *value, dr_err_t *err)
{
    uint8_t how;
    const jf_def_t *d = jf_lookup(field, &how);
    if (!d)
        return dr_err_set(err, DR_EINVAL, "%.64s: unknown field", field ? field : "(null)");
    return jf_set(s, d, how, value, err);
}
