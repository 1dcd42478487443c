/* trace_drover.c - drover's native job CSV (docs/trace-format.md).
 *
 * A header names the columns (any order, case-insensitive; unknown or
 * repeated columns are errors); submit_s and duration_s are required, every
 * other column is optional and an empty cell means its default.  Lines whose
 * first field starts with '#' are comments.  An "array" cell (Slurm syntax,
 * "0-99%10") expands the row into one job per index.
 *
 * Ids: an explicit id is kept; rows without one (and the tasks of an array
 * after the first) take the smallest ids no row names explicitly, in row
 * order, so with no id column jobs are numbered 1..n in file order.  An
 * array's parent id is the id of its first task.
 *
 * A "shard" cell names the task's input shard; in an array row, "%a" (or
 * "%4a", zero-padded) stands for the task's index, so one row describes the
 * segments of a whole video.
 *
 * The columns that are job fields (account, kind, nodes, gpus_per_node,
 * gpu_type, time_limit, priority, array) take their names from the
 * job-field table (dr_jobfield_find) and their values from its parsers
 * (dr_jobspec_set), so that they mean in a trace what they mean on the
 * command line; the older spellings gpu_types and time_limit_s (whose bare
 * numbers are seconds, not Slurm's minutes) are still read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/jobspec.h"
#include "drover/text.h"
#include "drover/util.h"
#include "drover/workload.h"
#include "sim/trace_priv.h"

enum {
    D_ID,
    D_SUBMIT,
    D_DURATION,
    D_USER,
    D_ACCOUNT,
    D_KIND,
    D_NODES,
    D_GPN,
    D_MILLI,
    D_TYPES,
    D_MINMEM,
    D_CPUS,
    D_MEM,
    D_TLIMIT,
    D_DEADLINE,
    D_PRIO,
    D_ARRAY,
    D_PARAMS,
    D_TOKENS,
    D_PREC,
    D_SHARD,
    D_ESTIMATE,
    D_N
};
/* The trace's own columns; NULL where the column is a job field. */
static const char *const col_names[D_N] = {
    [D_ID] = "id",         [D_SUBMIT] = "submit_s",     [D_DURATION] = "duration_s",
    [D_USER] = "user",     [D_MILLI] = "gpu_milli",     [D_MINMEM] = "min_gpu_mem_gb",
    [D_CPUS] = "cpus",     [D_MEM] = "mem_gb",          [D_DEADLINE] = "deadline_s",
    [D_PARAMS] = "params", [D_TOKENS] = "tokens",       [D_PREC] = "precision",
    [D_SHARD] = "shard",   [D_ESTIMATE] = "estimate_s",
};

/* The columns that are job fields, by their canonical name. */
static const struct {
    int col;
    const char *field;
} field_cols[] = {
    {D_ACCOUNT, "account"},   {D_KIND, "kind"},      {D_NODES, "nodes"},
    {D_GPN, "gpus_per_node"}, {D_TYPES, "gpu_type"}, {D_TLIMIT, "time_limit"},
    {D_PRIO, "priority"},     {D_ARRAY, "array"},
};

/* Older spellings of field columns.  time_limit_s reads bare numbers as
 * seconds (dr_duration_parse, the parser under dr_time_limit_parse). */
static const struct {
    const char *name, *field;
    bool seconds;
} legacy_cols[] = {{"gpu_types", "gpu_type", false}, {"time_limit_s", "time_limit", true}};

/* How the header named each column (for messages) and whether the time
 * limit column is the seconds one. */
typedef struct cols {
    int col[D_N];
    const char *name[D_N];
    bool tlimit_s;
} cols_t;

/* Hands out the ids no row claims explicitly, smallest first. */
typedef struct id_pool {
    uint64_t *used; /* sorted explicit ids */
    size_t n, k;
    uint64_t next;
} id_pool_t;

static uint64_t id_next(id_pool_t *p)
{
    for (;;) {
        while (p->k < p->n && p->used[p->k] < p->next)
            p->k++;
        if (p->k < p->n && p->used[p->k] == p->next)
            p->next++;
        else
            return p->next++;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static const char *cell(const dr_csv_t *csv, const int *col, int k)
{
    return col[k] >= 0 && (size_t)col[k] < csv->nfields ? csv->fields[col[k]] : "";
}

static void trim_copy(char *dst, size_t dsz, const char *s)
{
    size_t n;
    s = dr_trim_span(s, &n);
    if (n >= dsz)
        n = dsz - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* A count with an optional k/M/B(G)/T suffix: "7B" = 7e9. */
static int parse_scaled(const char *s, double *out)
{
    char b[64];
    trim_copy(b, sizeof b, s);
    size_t n = strlen(b);
    if (n == 0 || n >= sizeof b - 1)
        return DR_EINVAL;
    double mult = 1;
    switch (b[n - 1]) {
    case 'k':
    case 'K': mult = 1e3; break;
    case 'm':
    case 'M': mult = 1e6; break;
    case 'b':
    case 'B':
    case 'g':
    case 'G': mult = 1e9; break;
    case 't':
    case 'T': mult = 1e12; break;
    default: break;
    }
    if (mult != 1)
        b[n - 1] = '\0';
    double v;
    if (dr_parse_double(b, &v) != 0 || v < 0 || v * mult > 1e30)
        return DR_EINVAL;
    *out = v * mult;
    return DR_OK;
}

/* The column a header cell names: a trace column, or a job field the
 * format takes (by its canonical name, as dr_jobfield_find knows it, or an
 * older spelling); -1 if none.  *shown is the name for messages. */
static int column_of(const char *name, const char **shown, bool *seconds)
{
    *seconds = false;
    for (int k = 0; k < D_N; k++)
        if (col_names[k] && dr_streq_ci(name, col_names[k])) {
            *shown = col_names[k];
            return k;
        }
    const char *field = name;
    for (size_t i = 0; i < sizeof legacy_cols / sizeof legacy_cols[0]; i++)
        if (dr_streq_ci(name, legacy_cols[i].name)) {
            field = legacy_cols[i].field;
            *seconds = legacy_cols[i].seconds;
            *shown = legacy_cols[i].name;
        }
    const dr_jobfield_t *f = dr_jobfield_find(field);
    if (!f || !dr_streq_ci(field, f->name)) /* a header names fields canonically */
        return -1;
    for (size_t i = 0; i < sizeof field_cols / sizeof field_cols[0]; i++)
        if (strcmp(f->name, field_cols[i].field) == 0) {
            if (field == name)
                *shown = f->name;
            return field_cols[i].col;
        }
    return -1; /* a job field the trace format does not take */
}

/* Parse the header record into c. */
static int read_header(dr_trace_ctx_t *t, const dr_csv_t *csv, cols_t *c)
{
    for (int k = 0; k < D_N; k++) {
        c->col[k] = -1;
        c->name[k] = col_names[k];
    }
    c->tlimit_s = false;
    for (size_t i = 0; i < csv->nfields; i++) {
        char name[64];
        trim_copy(name, sizeof name, csv->fields[i]);
        const char *shown = NULL;
        bool seconds;
        int k = column_of(name, &shown, &seconds);
        if (k < 0)
            return dr_trace_ferr(t->err, t, csv->line, "header", DR_EINVAL, "unknown column '%s'",
                                 csv->fields[i]);
        if (c->col[k] >= 0)
            return dr_trace_ferr(t->err, t, csv->line, "header", DR_EINVAL,
                                 "column '%s' appears twice", c->name[k] ? c->name[k] : shown);
        c->col[k] = (int)i;
        c->name[k] = shown;
        if (k == D_TLIMIT)
            c->tlimit_s = seconds;
    }
    if (c->col[D_SUBMIT] < 0 || c->col[D_DURATION] < 0)
        return dr_trace_ferr(t->err, t, csv->line, "header", DR_EINVAL, "missing column '%s'",
                             c->col[D_SUBMIT] < 0 ? "submit_s" : "duration_s");
    return DR_OK;
}

/* A job-field cell into fs, with the field's own parser; the message names
 * the column as the header spells it. */
static int field_cell(dr_trace_ctx_t *t, dr_err_t *e, size_t line, const char *column,
                      dr_jobspec_t *fs, const char *field, const char *value)
{
    dr_err_t why = {0};
    int rc = dr_jobspec_set(fs, field, value, &why);
    if (rc == DR_OK)
        return DR_OK;
    const char *msg = why.msg;
    size_t n = strlen(field);
    if (strncmp(msg, field, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        msg += n + 2;
    return dr_trace_ferr(e, t, line, column, rc, "%s", msg);
}

/* Parse one row into *j (everything but id/array bookkeeping); *explicit_id
 * is 0 if the row has none. */
static int drover_row(dr_trace_ctx_t *t, dr_err_t *e, const dr_csv_t *csv, const cols_t *cs,
                      dr_jobspec_t *fs, dr_job_t *j, double *work, uint64_t *explicit_id,
                      const char **types)
{
    size_t line = csv->line;
    const int *col = cs->col;
    int rc;
    const char *s;
    dr_job_init(j);
    *explicit_id = 0;
    if (!dr_is_blank(s = cell(csv, col, D_ID)) &&
        (rc = dr_trace_uint(e, t, line, "id", s, 1, (uint64_t)1 << 53, explicit_id)) < 0)
        return rc;

    double submit, dur;
    if ((rc = dr_trace_num(e, t, line, "submit_s", cell(csv, col, D_SUBMIT), 0, &submit)) < 0)
        return rc;
    if (submit > 9.0e9)
        return dr_trace_ferr(e, t, line, "submit_s", DR_EINVAL, "'%s' is too large",
                             cell(csv, col, D_SUBMIT));
    if ((rc = dr_trace_num(e, t, line, "duration_s", cell(csv, col, D_DURATION), 0, &dur)) < 0)
        return rc;
    if (dur > 9.0e9)
        return dr_trace_ferr(e, t, line, "duration_s", DR_EINVAL, "'%s' is too large",
                             cell(csv, col, D_DURATION));
    j->submit = dr_time_from_s(submit);
    *work = dur;
    j->perf_class = 0;

    s = cell(csv, col, D_KIND);
    bool is_array = !dr_is_blank(cell(csv, col, D_ARRAY));
    if (!dr_is_blank(s)) {
        if ((rc = field_cell(t, e, line, cs->name[D_KIND], fs, "kind", s)) < 0)
            return rc;
        if (fs->kind == DR_KIND_ARRAY && !is_array)
            return dr_trace_ferr(e, t, line, cs->name[D_KIND], DR_EINVAL,
                                 "'array' needs an array range in column array");
        j->kind = fs->kind;
    } else if (is_array) {
        j->kind = DR_KIND_ARRAY;
    }

    bool nodes_given = !dr_is_blank(s = cell(csv, col, D_NODES));
    if (nodes_given) {
        if ((rc = field_cell(t, e, line, cs->name[D_NODES], fs, "nodes", s)) < 0)
            return rc;
        j->req.nodes = fs->nodes;
    }
    /* with nodes 0 the cell counts all the job's GPUs: the field gpus */
    if (!dr_is_blank(s = cell(csv, col, D_GPN))) {
        bool total = nodes_given && fs->nodes == 0;
        if ((rc = field_cell(t, e, line, cs->name[D_GPN], fs, total ? "gpus" : "gpus_per_node",
                             s)) < 0)
            return rc;
        j->req.gpus_per_node = total ? fs->gpus : fs->gpus_per_node;
    }
    uint64_t v;
    if (!dr_is_blank(s = cell(csv, col, D_MILLI))) {
        if ((rc = dr_trace_uint(e, t, line, "gpu_milli", s, 1, 1000, &v)) < 0)
            return rc;
        j->req.gpu_milli = (uint32_t)v;
    }
    double d;
    if (!dr_is_blank(s = cell(csv, col, D_MINMEM))) {
        if ((rc = dr_trace_num(e, t, line, "min_gpu_mem_gb", s, 0, &d)) < 0)
            return rc;
        j->req.min_gpu_mem_gb = d;
    }
    if (!dr_is_blank(s = cell(csv, col, D_CPUS))) {
        if ((rc = dr_trace_num(e, t, line, "cpus", s, 0, &d)) < 0)
            return rc;
        if (d * 1000 > UINT32_MAX)
            return dr_trace_ferr(e, t, line, "cpus", DR_EINVAL, "'%s' is too many", s);
        j->req.cpu_milli_per_node = (uint32_t)llround(d * 1000);
    }
    if (!dr_is_blank(s = cell(csv, col, D_MEM))) {
        if ((rc = dr_trace_num(e, t, line, "mem_gb", s, 0, &d)) < 0)
            return rc;
        if (d > 1e12)
            return dr_trace_ferr(e, t, line, "mem_gb", DR_EINVAL, "'%s' is too large", s);
        j->req.mem_mb_per_node = (uint64_t)llround(d * 1024);
    }
    if (!dr_is_blank(s = cell(csv, col, D_TYPES)) &&
        (rc = field_cell(t, e, line, cs->name[D_TYPES], fs, "gpu_type", s)) < 0)
        return rc;
    if (fs->gpu_type) /* the workload's type sets are '|'-separated */
        for (char *p = fs->gpu_type; (p = strchr(p, ','));)
            *p = '|';
    *types = fs->gpu_type;

    if (!dr_is_blank(s = cell(csv, col, D_TLIMIT))) {
        if (!cs->tlimit_s) {
            if ((rc = field_cell(t, e, line, cs->name[D_TLIMIT], fs, "time_limit", s)) < 0)
                return rc;
            j->time_limit = fs->time_limit;
        } else {
            dr_time_t tl;
            dr_err_t why = {0};
            if (dr_duration_parse_err(s, &tl, &why) != 0)
                return dr_trace_ferr(e, t, line, "time_limit_s", DR_EINVAL,
                                     "'%s' is not a duration (seconds, 90m, 2h, 1:30:00...): %s", s,
                                     why.msg);
            j->time_limit = tl;
        }
    }
    if (!dr_is_blank(s = cell(csv, col, D_ESTIMATE))) {
        if ((rc = dr_trace_num(e, t, line, "estimate_s", s, 0, &d)) < 0)
            return rc;
        if (d > 9.0e9)
            return dr_trace_ferr(e, t, line, "estimate_s", DR_EINVAL, "'%s' is too large", s);
        j->work_declared = d; /* the user's estimate of the run time (class 0: seconds) */
    }
    if (!dr_is_blank(s = cell(csv, col, D_DEADLINE))) {
        if ((rc = dr_trace_num(e, t, line, "deadline_s", s, 0, &d)) < 0)
            return rc;
        if (d > 9.0e9)
            return dr_trace_ferr(e, t, line, "deadline_s", DR_EINVAL, "'%s' is too large", s);
        if (d <= submit)
            return dr_trace_ferr(e, t, line, "deadline_s", DR_EINVAL,
                                 "'%s' must be after submit_s '%s'", s, cell(csv, col, D_SUBMIT));
        j->deadline = dr_time_from_s(d);
    }
    if (!dr_is_blank(s = cell(csv, col, D_PRIO))) {
        if ((rc = field_cell(t, e, line, cs->name[D_PRIO], fs, "priority", s)) < 0)
            return rc;
        j->priority = fs->priority;
    }
    if (!dr_is_blank(s = cell(csv, col, D_PARAMS)) && parse_scaled(s, &j->hint_params) != 0)
        return dr_trace_ferr(e, t, line, "params", DR_EINVAL, "'%s' is not a count (7e9, 7B, 350M)",
                             s);
    if (!dr_is_blank(s = cell(csv, col, D_TOKENS)) && parse_scaled(s, &j->hint_tokens) != 0)
        return dr_trace_ferr(e, t, line, "tokens", DR_EINVAL,
                             "'%s' is not a count (2e12, 2T, 300B)", s);
    if (!dr_is_blank(s = cell(csv, col, D_PREC))) {
        char b[32];
        trim_copy(b, sizeof b, s);
        dr_precision_t p;
        if (dr_precision_parse(b, &p) != 0)
            return dr_trace_ferr(e, t, line, "precision", DR_EINVAL,
                                 "'%s' is not fp32, fp16, bf16 or fp8", s);
        j->precision = (uint8_t)p;
    }
    if ((rc = dr_trace_validate(e, t, line, &j->req)) < 0)
        return rc;
    if (!dr_is_blank(s = cell(csv, col, D_ACCOUNT)) &&
        (rc = field_cell(t, e, line, cs->name[D_ACCOUNT], fs, "account", s)) < 0)
        return rc;
    int64_t u = dr_trace_intern(&t->wl->users, cell(csv, col, D_USER));
    int64_t a = dr_trace_intern(&t->wl->accounts, fs->account ? fs->account : "");
    if (u < 0 || a < 0)
        return dr_err_set(e, DR_ENOMEM, "%s: out of memory", t->name);
    j->user = (uint32_t)u;
    j->account = (uint32_t)a;
    return DR_OK;
}

#define SHARD_NAME_MAX 256

/* The shard name of a task: tmpl with "%a"/"%Na" replaced by idx (only in
 * an array row: idx >= 0) and "%%" by '%'. */
static int shard_name(dr_trace_ctx_t *t, dr_err_t *e, size_t line, const char *tmpl, int64_t idx,
                      char name[SHARD_NAME_MAX])
{
    size_t n = 0;
    for (const char *s = tmpl; *s; s++) {
        char piece[192]; /* %0*lld: gcc cannot bound width, so room for its worst case */
        const char *add = piece;
        if (*s != '%') {
            piece[0] = *s;
            piece[1] = '\0';
        } else if (s[1] == '%') {
            add = "%";
            s++;
        } else {
            int width = 0;
            const char *q = s + 1;
            if (*q >= '1' && *q <= '9')
                width = *q++ - '0';
            if (*q != 'a')
                return dr_trace_ferr(e, t, line, "shard", DR_EINVAL,
                                     "'%s': '%%' must start %%a, %%Na (N = 1..9) or %%%%", tmpl);
            if (idx < 0)
                return dr_trace_ferr(e, t, line, "shard", DR_EINVAL,
                                     "'%s': %%a needs an array range in column array", tmpl);
            snprintf(piece, sizeof piece, "%0*lld", width, (long long)idx);
            s = q;
        }
        size_t m = strlen(add);
        if (n + m >= SHARD_NAME_MAX)
            return dr_trace_ferr(e, t, line, "shard", DR_EINVAL, "'%.64s...' is longer than %d",
                                 tmpl, SHARD_NAME_MAX - 1);
        memcpy(name + n, add, m);
        n += m;
    }
    name[n] = '\0';
    return DR_OK;
}

/* j->shard: the interned id of the task's shard name. */
static int set_shard(dr_trace_ctx_t *t, dr_err_t *e, size_t line, const char *tmpl, int64_t idx,
                     dr_job_t *j)
{
    char name[SHARD_NAME_MAX];
    int rc = shard_name(t, e, line, tmpl, idx, name);
    if (rc < 0)
        return rc;
    int64_t id = dr_strtab_intern(&t->wl->shards, name);
    if (id < 0 || id >= UINT32_MAX - 1)
        return dr_err_set(e, DR_ENOMEM, "%s: out of memory", t->name);
    j->shard = (uint32_t)id + 1;
    return DR_OK;
}

/* add_row with fs, which holds the row's job-field cells until the jobs
 * are added (the type set is one of them). */
static int add_job_row(dr_trace_ctx_t *t, dr_err_t *e, const dr_csv_t *csv, const cols_t *cs,
                       dr_jobspec_t *fs, id_pool_t *ids)
{
    const int *col = cs->col;
    dr_job_t j;
    uint64_t explicit_id;
    double work = 0;
    const char *types = NULL;
    int rc = drover_row(t, e, csv, cs, fs, &j, &work, &explicit_id, &types);
    if (rc < 0)
        return rc;
    char shard[SHARD_NAME_MAX + 1];
    trim_copy(shard, sizeof shard, cell(csv, col, D_SHARD));
    if (strlen(shard) >= SHARD_NAME_MAX)
        return dr_trace_ferr(e, t, csv->line, "shard", DR_EINVAL, "'%.64s...' is longer than %d",
                             shard, SHARD_NAME_MAX - 1);
    const char *spec = cell(csv, col, D_ARRAY);
    if (dr_is_blank(spec)) {
        if (shard[0] && (rc = set_shard(t, e, csv->line, shard, -1, &j)) < 0)
            return rc;
        j.id = explicit_id ? explicit_id : id_next(ids);
        if (dr_workload_add(t->wl, &j, work, types) != 0)
            return dr_err_set(e, DR_ENOMEM, "%s: out of memory", t->name);
        return DR_OK;
    }
    char b[256];
    trim_copy(b, sizeof b, spec);
    uint32_t *idx = NULL, throttle = 0;
    size_t n = 0;
    rc = dr_array_parse(b, &idx, &n, &throttle, e);
    if (rc < 0) {
        free(idx);
        dr_err_prefix(e, "%s:%zu: ", t->name, csv->line);
        return rc;
    }
    if (shard[0]) { /* a bad name fails the row before any task is added */
        uint32_t widest = 0;
        for (size_t i = 0; i < n; i++)
            widest = idx[i] > widest ? idx[i] : widest;
        char name[SHARD_NAME_MAX];
        if ((rc = shard_name(t, e, csv->line, shard, widest, name)) < 0) {
            free(idx);
            return rc;
        }
    }
    uint64_t parent = 0;
    for (size_t i = 0; i < n && !dr_trace_full(t); i++) {
        j.id = i == 0 && explicit_id ? explicit_id : id_next(ids);
        if (i == 0)
            parent = j.id;
        j.array_parent = parent;
        j.array_index = idx[i];
        j.array_throttle = throttle;
        if (shard[0] && (rc = set_shard(t, e, csv->line, shard, idx[i], &j)) < 0) {
            free(idx);
            return rc;
        }
        if (dr_workload_add(t->wl, &j, work, types) != 0) {
            free(idx);
            return dr_err_set(e, DR_ENOMEM, "%s: out of memory", t->name);
        }
    }
    free(idx);
    return DR_OK;
}

/* Add the row's job, or one job per array index. */
static int add_row(dr_trace_ctx_t *t, dr_err_t *e, const dr_csv_t *csv, const cols_t *cs,
                   id_pool_t *ids)
{
    dr_jobspec_t fs; /* the row's job-field cells */
    dr_jobspec_init(&fs);
    int rc = add_job_row(t, e, csv, cs, &fs, ids);
    dr_jobspec_free(&fs);
    return rc;
}

/* First pass: the explicit ids, so that automatic ones avoid them. */
static int collect_ids(const char *buf, size_t len, int idcol, id_pool_t *p)
{
    size_t cap = 0;
    if (idcol < 0)
        return DR_OK;
    dr_csv_t csv;
    dr_csv_init(&csv, buf, len, ',');
    bool header = false;
    int nf, rc = DR_OK;
    while ((nf = dr_csv_next(&csv)) > 0) {
        if (dr_trace_skip_record((const char *const *)csv.fields, csv.nfields))
            continue;
        if (!header) {
            header = true;
            continue;
        }
        uint64_t id;
        if ((size_t)idcol < csv.nfields && dr_parse_u64(csv.fields[idcol], &id) == 0 && id &&
            DR_PUSH(p->used, p->n, cap, id) != 0) {
            rc = DR_ENOMEM;
            break;
        }
    }
    if (nf == DR_ENOMEM)
        rc = DR_ENOMEM;
    dr_csv_free(&csv);
    if (p->n)
        qsort(p->used, p->n, sizeof *p->used, cmp_u64);
    return rc;
}

int dr_trace_read_drover(dr_trace_ctx_t *t, const char *buf, size_t len)
{
    cols_t cs = {0};
    bool header = false;
    id_pool_t ids = {NULL, 0, 0, 1};
    dr_csv_t csv;
    dr_csv_init(&csv, buf, len, ',');
    int rc = DR_OK, nf;
    while (!dr_trace_full(t) && (nf = dr_csv_next(&csv)) != 0) {
        dr_err_t e = {0};
        if (nf < 0) {
            dr_trace_ferr(&e, t, csv.line, NULL, nf,
                          nf == DR_ENOMEM ? "out of memory" : "unterminated quote");
        } else if (dr_trace_skip_record((const char *const *)csv.fields, csv.nfields)) {
            continue;
        } else if (!header) {
            if ((rc = read_header(t, &csv, &cs)) < 0)
                break;
            if ((rc = collect_ids(buf, len, cs.col[D_ID], &ids)) < 0) {
                dr_err_set(t->err, rc, "%s: out of memory", t->name);
                break;
            }
            header = true;
            continue;
        } else {
            add_row(t, &e, &csv, &cs, &ids);
        }
        if (e.code < 0 && (rc = dr_trace_row_error(t, &e)) < 0)
            break;
    }
    dr_csv_free(&csv);
    free(ids.used);
    if (rc == DR_OK && !header)
        rc = dr_err_set(t->err, DR_EINVAL, "%s: no header line", t->name);
    return rc;
}
