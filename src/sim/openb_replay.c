/* openb_replay.c - the openb GPU-packing benchmark as the FGD paper runs it:
 * the arrival sequence for a seed, sequence files, the online replay and the
 * allocation curve (openb.h has the protocol).
 *
 * The replay books every placement through the packer into the ordinary
 * cluster ledger, so what it measures is the allocation the rest of drover
 * (scheduler, audit) sees, and dr_cluster_audit can check it.  Everything
 * here works on memory except the two _load functions. */
#include "drover/openb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/pack.h"
#include "drover/text.h"
#include "drover/util.h"

void dr_openb_pods_init(dr_openb_pods_t *p)
{
    memset(p, 0, sizeof *p);
}

void dr_openb_pods_free(dr_openb_pods_t *p)
{
    free(p->v);
    dr_strtab_free(&p->names);
    dr_strtab_free(&p->specs);
    memset(p, 0, sizeof *p);
}

uint64_t dr_openb_pods_demand(const dr_openb_pods_t *p)
{
    uint64_t d = 0;
    for (size_t i = 0; i < p->n; i++)
        d += (uint64_t)p->v[i].num_gpu * p->v[i].gpu_milli;
    return d;
}

static int pods_push(dr_openb_pods_t *p, const dr_openb_pod_t *pod)
{
    return DR_PUSH(p->v, p->n, p->cap, *pod);
}

/* id 0 of the spec table is always "" (any model) */
static int specs_ready(dr_openb_pods_t *p)
{
    return p->specs.n > 0 || dr_strtab_intern(&p->specs, "") == 0 ? DR_OK : DR_ENOMEM;
}

/* --- reading --- */

enum { C_NAME, C_BASE, C_CPU, C_MEM, C_NGPU, C_MILLI, C_SPEC, C_N };
static const char *const trace_cols[C_N] = {"name",    "",          "cpu_milli", "memory_mib",
                                            "num_gpu", "gpu_milli", "gpu_spec"};
static const char *const seq_cols[C_N] = {"pod",     "base",      "cpu_milli", "memory_mib",
                                          "num_gpu", "gpu_milli", "gpu_spec"};

typedef struct reader {
    const char *name;
    bool sequence; /* a sequence file (strict) rather than a trace pod list */
    dr_openb_pods_t *p;
    dr_err_t *err;
    int col[C_N];
    size_t ncols;
    size_t *lines; /* line of each pod, for duplicate messages */
} reader_t;

static int field_uint(reader_t *rd, size_t line, const char *col, char *f, uint64_t max,
                      uint64_t *out)
{
    f = dr_trim(f);
    if (dr_parse_u64(f, out) != 0)
        return dr_err_set(rd->err, DR_EINVAL, "%s:%zu: %s: '%.64s' is not a whole number", rd->name,
                          line, col, f);
    if (*out > max)
        return dr_err_set(rd->err, DR_EINVAL, "%s:%zu: %s: %s is too large (at most %llu)",
                          rd->name, line, col, f, (unsigned long long)max);
    return DR_OK;
}

static int read_header(reader_t *rd, const dr_csv_t *csv)
{
    const char *const *cols = rd->sequence ? seq_cols : trace_cols;
    rd->ncols = csv->nfields;
    for (int k = 0; k < C_N; k++) {
        rd->col[k] = *cols[k] ? dr_csv_col(csv, cols[k]) : -1;
        bool optional = !*cols[k] || (!rd->sequence && k == C_SPEC);
        if (rd->col[k] < 0 && !optional)
            return dr_err_set(rd->err, DR_EINVAL, "%s:%zu: header: missing column '%s'", rd->name,
                              csv->line, cols[k]);
    }
    return DR_OK;
}

static int read_row(reader_t *rd, dr_csv_t *csv)
{
    size_t line = csv->line;
    const char *const *cols = rd->sequence ? seq_cols : trace_cols;
    dr_openb_pod_t pod = {0};
    char *name = dr_trim(csv->fields[rd->col[C_NAME]]);
    if (!*name)
        return dr_err_set(rd->err, DR_EINVAL, "%s:%zu: %s: empty pod name", rd->name, line,
                          cols[C_NAME]);
    int64_t dup = dr_strtab_find(&rd->p->names, name);
    if (dup >= 0) {
        size_t first = 0;
        for (size_t i = 0; i < rd->p->n; i++)
            if (rd->p->v[i].name == (uint32_t)dup && rd->lines)
                first = rd->lines[i];
        return dr_err_set(rd->err, DR_EINVAL,
                          "%s:%zu: %s: pod '%.64s' is listed twice (first on line %zu)", rd->name,
                          line, cols[C_NAME], name, first);
    }
    uint64_t cpu, mem, ngpu;
    int rc;
    if ((rc = field_uint(rd, line, "cpu_milli", csv->fields[rd->col[C_CPU]], UINT32_MAX, &cpu)) ||
        (rc = field_uint(rd, line, "memory_mib", csv->fields[rd->col[C_MEM]], (uint64_t)1 << 50,
                         &mem)) ||
        (rc = field_uint(rd, line, "num_gpu", csv->fields[rd->col[C_NGPU]], DR_MAX_GPUS_PER_NODE,
                         &ngpu)))
        return rc;
    char *ms = dr_trim(csv->fields[rd->col[C_MILLI]]);
    uint64_t milli;
    if (rd->sequence) {
        if ((rc = field_uint(rd, line, "gpu_milli", ms, 1000, &milli)) != DR_OK)
            return rc;
        if (ngpu == 0 && milli != 0)
            return dr_err_set(rd->err, DR_EINVAL,
                              "%s:%zu: gpu_milli: %s for a CPU-only pod (num_gpu 0); must be 0",
                              rd->name, line, ms);
    } else {
        double d;
        if (dr_parse_double(ms, &d) != 0 || isnan(d))
            return dr_err_set(rd->err, DR_EINVAL, "%s:%zu: gpu_milli: '%.64s' is not a number",
                              rd->name, line, ms);
        d = d < 0 ? 0 : d > 1000 ? 1000 : d; /* clamped to 0..1000 */
        milli = ngpu ? (uint64_t)llround(d) : 0;
    }
    if (ngpu > 0 && milli == 0)
        return dr_err_set(rd->err, DR_EINVAL, "%s:%zu: gpu_milli: 0 for a pod with %llu GPUs",
                          rd->name, line, (unsigned long long)ngpu);
    if (ngpu > 1 && milli < 1000)
        return dr_err_set(rd->err, DR_EINVAL,
                          "%s:%zu: gpu_milli: a share (%llu milli) is for one GPU, not %llu",
                          rd->name, line, (unsigned long long)milli, (unsigned long long)ngpu);
    const char *spec = "";
    if (rd->col[C_SPEC] >= 0) {
        char *s = dr_trim(csv->fields[rd->col[C_SPEC]]);
        if (*s && !dr_streq_ci(s, "nan"))
            spec = s;
    }
    if (ngpu == 0)
        spec = ""; /* a CPU-only pod has no GPU model to choose */
    if (strlen(spec) > 1024)
        return dr_err_set(rd->err, DR_EINVAL, "%s:%zu: gpu_spec: longer than 1024 characters",
                          rd->name, line);
    int64_t nid = dr_strtab_intern(&rd->p->names, name);
    int64_t sid = dr_strtab_intern(&rd->p->specs, spec);
    int64_t bid = nid;
    if (rd->sequence) {
        char *base = dr_trim(csv->fields[rd->col[C_BASE]]);
        bid = *base ? dr_strtab_intern(&rd->p->names, base) : nid;
    }
    if (nid < 0 || sid < 0 || bid < 0)
        return dr_err_set(rd->err, DR_ENOMEM, "%s: out of memory", rd->name);
    pod.name = (uint32_t)nid;
    pod.base = (uint32_t)bid;
    pod.spec = (uint32_t)sid;
    pod.cpu_milli = (uint32_t)cpu;
    pod.mem_mib = mem;
    pod.num_gpu = (uint32_t)ngpu;
    pod.gpu_milli = (uint32_t)milli;
    size_t lcap = rd->p->cap;
    if (pods_push(rd->p, &pod) != 0)
        return dr_err_set(rd->err, DR_ENOMEM, "%s: out of memory", rd->name);
    if (rd->p->cap != lcap || !rd->lines) {
        size_t *l = realloc(rd->lines, rd->p->cap * sizeof *l);
        if (!l)
            return dr_err_set(rd->err, DR_ENOMEM, "%s: out of memory", rd->name);
        rd->lines = l;
    }
    rd->lines[rd->p->n - 1] = line;
    return DR_OK;
}

static int parse(dr_openb_pods_t *p, bool sequence, const char *name, const char *buf, size_t len,
                 dr_err_t *err)
{
    if (!name)
        name = sequence ? "openb sequence" : "openb pods";
    if (p->n)
        return dr_err_set(err, DR_ESTATE, "%s: the pod list is not empty", name);
    reader_t rd = {.name = name, .sequence = sequence, .p = p, .err = err};
    if (specs_ready(p) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "%s: out of memory", name);
    dr_csv_t csv;
    dr_csv_open(&csv, buf, len);
    int rc = DR_OK;
    bool header = false;
    for (;;) {
        /* the header is the first line that is not blank; rows are as wide */
        int nf = dr_csv_row(&csv, name, header ? rd.ncols : 0, err);
        if (nf == 0)
            break;
        if (nf < 0) {
            rc = nf;
            break;
        }
        rc = header ? read_row(&rd, &csv) : read_header(&rd, &csv);
        header = true;
        if (rc != DR_OK)
            break;
    }
    if (rc == DR_OK && !header)
        rc = dr_err_set(err, DR_EINVAL, "%s: empty file (no header)", name);
    else if (rc == DR_OK && p->n == 0)
        rc = dr_err_set(err, DR_EINVAL, "%s: no pods", name);
    free(rd.lines);
    dr_csv_free(&csv);
    if (rc != DR_OK) {
        dr_openb_pods_free(p);
        dr_openb_pods_init(p);
    }
    return rc;
}

int dr_openb_pods_parse(dr_openb_pods_t *p, const char *name, const char *buf, size_t len,
                        dr_err_t *err)
{
    return parse(p, false, name, buf, len, err);
}

int dr_openb_sequence_parse(dr_openb_pods_t *p, const char *name, const char *buf, size_t len,
                            dr_err_t *err)
{
    return parse(p, true, name, buf, len, err);
}

static int load(dr_openb_pods_t *p, bool sequence, const char *path, dr_err_t *err)
{
    char *buf;
    size_t len;
    int rc = dr_read_file(path, &buf, &len, err);
    if (rc != DR_OK)
        return rc;
    rc = parse(p, sequence, path, buf, len, err);
    free(buf);
    return rc;
}

int dr_openb_pods_load(dr_openb_pods_t *p, const char *path, dr_err_t *err)
{
    return load(p, false, path, err);
}

int dr_openb_sequence_load(dr_openb_pods_t *p, const char *path, dr_err_t *err)
{
    return load(p, true, path, err);
}

/* --- writing --- */

typedef struct sbuf {
    char *s;
    size_t n, cap;
    bool oom;
} sbuf_t;

static void sb_put(sbuf_t *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->n + n + 1)
            nc *= 2;
        char *x = realloc(b->s, nc);
        if (!x) {
            b->oom = true;
            return;
        }
        b->s = x;
        b->cap = nc;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_str(sbuf_t *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

/* A CSV field, quoted only when it has to be. */
static void sb_field(sbuf_t *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        sb_str(b, s);
        return;
    }
    sb_put(b, "\"", 1);
    for (const char *q = s; *q; q++) {
        if (*q == '"')
            sb_put(b, "\"\"", 2); /* a quote inside is doubled */
        else
            sb_put(b, q, 1);
    }
    sb_put(b, "\"", 1);
}

static void sb_fmt(sbuf_t *b, const char *fmt, unsigned long long v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, fmt, v);
    sb_put(b, tmp, (size_t)n);
}

static int sb_done(sbuf_t *b, char **out, size_t *len, dr_err_t *err)
{
    if (b->oom || !b->s) {
        free(b->s);
        *out = NULL;
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    *out = b->s;
    if (len)
        *len = b->n;
    return DR_OK;
}

int dr_openb_sequence_format(const dr_openb_pods_t *p, char **out, size_t *len, dr_err_t *err)
{
    sbuf_t b = {0};
    sb_str(&b, "pod,base,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n");
    for (size_t i = 0; i < p->n; i++) {
        const dr_openb_pod_t *q = &p->v[i];
        sb_field(&b, dr_strtab_get(&p->names, q->name));
        sb_put(&b, ",", 1);
        sb_field(&b, dr_strtab_get(&p->names, q->base));
        sb_fmt(&b, ",%llu", q->cpu_milli);
        sb_fmt(&b, ",%llu", q->mem_mib);
        sb_fmt(&b, ",%llu", q->num_gpu);
        sb_fmt(&b, ",%llu,", q->gpu_milli);
        sb_field(&b, q->spec < p->specs.n ? dr_strtab_get(&p->specs, q->spec) : "");
        sb_put(&b, "\n", 1);
    }
    return sb_done(&b, out, len, err);
}

/* --- the arrival sequence --- */

static const dr_openb_pods_t *sort_ctx;

static int by_name(const void *a, const void *b)
{
    const dr_openb_pod_t *x = &sort_ctx->v[*(const uint32_t *)a];
    const dr_openb_pod_t *y = &sort_ctx->v[*(const uint32_t *)b];
    return strcmp(dr_strtab_get(&sort_ctx->names, x->name),
                  dr_strtab_get(&sort_ctx->names, y->name));
}

/* Copy trace pod t into seq under a new name (NULL = its own). */
static int copy_pod(dr_openb_pods_t *seq, const dr_openb_pods_t *trace, const dr_openb_pod_t *t,
                    const char *name)
{
    const char *own = dr_strtab_get(&trace->names, t->name);
    int64_t nid = dr_strtab_intern(&seq->names, name ? name : own);
    int64_t bid = dr_strtab_intern(&seq->names, own);
    int64_t sid = dr_strtab_intern(&seq->specs, dr_strtab_get(&trace->specs, t->spec));
    if (nid < 0 || bid < 0 || sid < 0)
        return DR_ENOMEM;
    dr_openb_pod_t q = *t;
    q.name = (uint32_t)nid;
    q.base = (uint32_t)bid;
    q.spec = (uint32_t)sid;
    return pods_push(seq, &q) == 0 ? DR_OK : DR_ENOMEM;
}

#define MAX_CLONES 50000000u

int dr_openb_sequence_generate(dr_openb_pods_t *seq, const dr_openb_pods_t *trace,
                               uint64_t capacity_milli, double ratio, uint64_t seed, dr_err_t *err)
{
    if (seq->n)
        return dr_err_set(err, DR_ESTATE, "openb sequence: the output is not empty");
    if (trace->n == 0)
        return dr_err_set(err, DR_EINVAL, "openb sequence: the trace has no pods");
    if (!(ratio > 0) || ratio > 1000)
        return dr_err_set(err, DR_EINVAL, "openb sequence: ratio %g is not in (0, 1000]", ratio);
    uint32_t *order = malloc(trace->n * sizeof *order);
    if (!order || specs_ready(seq) != DR_OK) {
        free(order);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < trace->n; i++)
        order[i] = (uint32_t)i;
    sort_ctx = trace;
    qsort(order, trace->n, sizeof *order, by_name);
    sort_ctx = NULL;
    int rc = DR_OK;
    for (size_t i = 0; i < trace->n && rc == DR_OK; i++)
        rc = copy_pod(seq, trace, &trace->v[order[i]], NULL);
    /* 1. shuffle (Fisher-Yates, from the end) */
    dr_rng_t rng;
    dr_rng_seed(&rng, seed);
    for (size_t i = seq->n; rc == DR_OK && i-- > 1;) {
        size_t j = (size_t)dr_rng_below(&rng, i + 1);
        dr_openb_pod_t t = seq->v[i];
        seq->v[i] = seq->v[j];
        seq->v[j] = t;
    }
    /* 2. inflate with clones drawn from the name-sorted list, or thin out */
    uint64_t d = dr_openb_pods_demand(seq);
    double target = ratio * (double)capacity_milli;
    if (rc == DR_OK && (double)d < target) {
        if (d == 0 && dr_openb_pods_demand(trace) == 0)
            rc = dr_err_set(err, DR_EINVAL,
                            "openb sequence: the trace asks for no GPUs; cannot inflate it");
        for (uint32_t i = 0; rc == DR_OK; i++) {
            if (i >= MAX_CLONES) {
                rc = dr_err_set(err, DR_ELIMIT, "openb sequence: more than %u clones needed",
                                MAX_CLONES);
                break;
            }
            const dr_openb_pod_t *t = &trace->v[order[dr_rng_below(&rng, trace->n)]];
            if ((double)(d + t->gpu_milli) > target) /* the stop rule: per-GPU milli */
                break;
            char name[DR_ERR_MSG_MAX];
            snprintf(name, sizeof name, "%s-tuned-%u", dr_strtab_get(&trace->names, t->name), i);
            if (copy_pod(seq, trace, t, name) != DR_OK)
                rc = dr_err_set(err, DR_ENOMEM, "out of memory");
            d += (uint64_t)t->num_gpu * t->gpu_milli;
        }
    } else if (rc == DR_OK) {
        while ((double)d > target && seq->n > 0) {
            size_t k = (size_t)dr_rng_below(&rng, seq->n);
            d -= (uint64_t)seq->v[k].num_gpu * seq->v[k].gpu_milli;
            memmove(&seq->v[k], &seq->v[k + 1], (seq->n - k - 1) * sizeof *seq->v);
            seq->n--;
        }
    } else {
        dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    free(order);
    return rc;
}

void dr_openb_ranks(uint32_t *rank, size_t n, uint64_t seed)
{
    dr_rng_t rng;
    dr_rng_seed(&rng, seed ^ 0x6f70656e622d726bULL); /* "openb-rk": a stream of its own */
    for (size_t i = 0; i < n; i++)
        rank[i] = (uint32_t)i;
    for (size_t i = n; i-- > 1;) {
        size_t j = (size_t)dr_rng_below(&rng, i + 1);
        uint32_t t = rank[i];
        rank[i] = rank[j];
        rank[j] = t;
    }
}

int dr_openb_bind(const dr_openb_pods_t *p, const dr_cluster_t *c, dr_typemask_t **masks,
                  dr_err_t *err)
{
    size_t n = p->specs.n ? p->specs.n : 1;
    dr_typemask_t *m = calloc(n, sizeof *m);
    if (!m)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    dr_typemask_t all = c->ntypes >= 64 ? ~0ULL : (1ULL << c->ntypes) - 1;
    m[0] = all;
    for (size_t s = 1; s < p->specs.n; s++) {
        const char *spec = dr_strtab_get(&p->specs, (uint32_t)s);
        while (*spec) {
            const char *e = strchr(spec, '|');
            size_t len = e ? (size_t)(e - spec) : strlen(spec);
            char name[DR_GPU_NAME_MAX];
            if (len > 0 && len < sizeof name) {
                memcpy(name, spec, len);
                name[len] = '\0';
                int t = dr_cluster_find_type(c, dr_trim(name));
                if (t >= 0)
                    m[s] |= 1ULL << t;
            }
            if (!e)
                break;
            spec = e + 1;
        }
    }
    *masks = m;
    return DR_OK;
}

/* --- the replay --- */

void dr_openb_result_free(dr_openb_result_t *res)
{
    if (res->alloc)
        for (size_t i = 0; i < res->npods; i++)
            dr_alloc_free(&res->alloc[i]);
    free(res->alloc);
    free(res->node);
    free(res->arrived);
    free(res->used);
    memset(res, 0, sizeof *res);
}

int dr_openb_replay(dr_cluster_t *c, const dr_openb_pods_t *pods, const dr_openb_opts_t *o,
                    dr_openb_result_t *res, dr_err_t *err)
{
    memset(res, 0, sizeof *res);
    if (!dr_cluster_finalized(c))
        return dr_err_set(err, DR_ESTATE, "openb replay: the cluster is not finalised");
    uint64_t cap = dr_cluster_total_gpus(c, -1) * 1000;
    if (cap == 0)
        return dr_err_set(err, DR_EINVAL, "openb replay: the cluster has no GPUs");
    dr_typemask_t *masks = NULL;
    dr_packer_t *pk = NULL;
    int rc = dr_openb_bind(pods, c, &masks, err);
    if (rc == DR_OK)
        rc = dr_packer_create(&pk, o && o->policy ? o->policy : "fgd", c, o ? o->seed : 0, err);
    if (rc == DR_OK && o && o->rank)
        rc = dr_packer_set_ranks(pk, o->rank, c->nnodes, err);
    size_t n = pods->n ? pods->n : 1;
    res->capacity = cap;
    res->npods = pods->n;
    if (rc == DR_OK) {
        res->alloc = calloc(n, sizeof *res->alloc);
        res->node = malloc(n * sizeof *res->node);
        res->arrived = malloc(n * sizeof *res->arrived);
        res->used = malloc(n * sizeof *res->used);
    }
    dr_alloc_t *alloc = res->alloc;
    int32_t *node = res->node;
    uint64_t *arr = res->arrived, *used = res->used, arrived = 0;
    if (rc == DR_OK && (!masks || !pk || !alloc || !node || !arr || !used))
        rc = dr_err_set(err, DR_ENOMEM, "out of memory");
    for (size_t i = 0; rc == DR_OK && masks && alloc && node && arr && used && i < pods->n; i++) {
        const dr_openb_pod_t *q = &pods->v[i];
        dr_pack_req_t r = {.cpu_milli = q->cpu_milli,
                           .mem_mb = q->mem_mib,
                           .ngpus = q->num_gpu,
                           .gpu_milli = q->num_gpu ? q->gpu_milli : 0,
                           .allowed = q->num_gpu && q->spec < pods->specs.n ? masks[q->spec] : 0};
        int prc = dr_packer_place(pk, c, &r, &alloc[i]);
        const dr_slot_t *first = alloc[i].slots;
        if (prc == DR_OK && first) {
            node[i] = (int32_t)first->node;
        } else if (prc == DR_ENOSPC) {
            node[i] = -1;
            res->failed++;
            res->failed_gpu += q->num_gpu > 0;
        } else {
            rc = dr_err_set(
                err, prc == DR_OK ? DR_ESTATE : prc, "openb replay: pod '%s': %s (policy %s)",
                dr_strtab_get(&pods->names, q->name),
                prc == DR_EINVAL ? "malformed request" : dr_strerror(prc), dr_packer_name(pk));
            res->npods = i + 1;
            node[i] = -1;
            break;
        }
        arrived += (uint64_t)q->num_gpu * q->gpu_milli;
        arr[i] = arrived;
        used[i] = cap - dr_cluster_free_milli(c, -1);
    }
    dr_packer_free(pk);
    free(masks);
    if (rc != DR_OK)
        dr_openb_result_free(res);
    return rc;
}

int dr_openb_placements_format(const dr_openb_result_t *res, const dr_openb_pods_t *pods,
                               const dr_cluster_t *c, char **out, size_t *len, dr_err_t *err)
{
    sbuf_t b = {0};
    sb_str(&b, "pod,node,gpus\n");
    for (size_t i = 0; i < res->npods && i < pods->n; i++) {
        sb_field(&b, dr_strtab_get(&pods->names, pods->v[i].name));
        sb_put(&b, ",", 1);
        if (res->node[i] >= 0 && (size_t)res->node[i] < c->nnodes) {
            sb_field(&b, c->nodes[res->node[i]].name);
            sb_put(&b, ",", 1);
            const dr_alloc_t *a = &res->alloc[i];
            bool first = true;
            for (uint32_t k = 0; k < a->nslots; k++) {
                if (a->slots[k].gpu == DR_NO_GPU)
                    continue;
                sb_fmt(&b, first ? "%llu" : "-%llu", a->slots[k].gpu);
                sb_fmt(&b, ":%llu", a->slots[k].milli);
                first = false;
            }
        } else {
            sb_put(&b, ",", 1);
        }
        sb_put(&b, "\n", 1);
    }
    return sb_done(&b, out, len, err);
}

/* --- the metric --- */

/* num / den rounded to an integer, ties to even */
static int64_t div_half_even(uint64_t num, uint64_t den)
{
    uint64_t q = num / den, r = num % den;
    if (2 * r > den || (2 * r == den && (q & 1)))
        q++;
    return (int64_t)q;
}

int dr_openb_arrive_pct(uint64_t arrived, uint64_t capacity)
{
    return capacity ? (int)div_half_even(100 * arrived, capacity) : 0;
}

int64_t dr_openb_alloc_centi(uint64_t used, uint64_t capacity)
{
    return capacity ? div_half_even(10000 * used, capacity) : 0;
}

bool dr_openb_curve_at(const dr_openb_result_t *res, int x, double *alloc_pct)
{
    for (int width = 0; width <= 1; width++) {
        int64_t sum = 0;
        size_t k = 0;
        for (size_t i = 0; i < res->npods; i++) {
            int a = dr_openb_arrive_pct(res->arrived[i], res->capacity);
            if (a >= x - width && a <= x + width) {
                sum += dr_openb_alloc_centi(res->used[i], res->capacity);
                k++;
            }
        }
        if (k) {
            *alloc_pct = (double)sum / (double)k / 100.0;
            return true;
        }
    }
    return false;
}
