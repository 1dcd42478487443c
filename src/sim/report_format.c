/* report_format.c - reports as text: a side-by-side fixed-width table for
 * people and pretty-printed JSON (jansson) for tools.  Also the small string
 * buffer the formatters share (report_priv.h). */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/report.h"
#include "drover/util.h"
#include "sim/report_priv.h"

/* --- string buffer --- */

static bool dr_report_buf_reserve(dr_report_buf_t *b, size_t extra)
{
    if (b->oom)
        return false;
    if (dr_grow((void **)&b->s, &b->cap, b->n + extra + 1, 1) != 0) {
        b->oom = true;
        return false;
    }
    return true;
}

void dr_report_buf_puts(dr_report_buf_t *b, const char *s)
{
    size_t len = strlen(s);
    if (!dr_report_buf_reserve(b, len))
        return;
    memcpy(b->s + b->n, s, len + 1);
    b->n += len;
}

void dr_report_buf_printf(dr_report_buf_t *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (len < 0) {
        b->oom = true;
        return;
    }
    if ((size_t)len < sizeof tmp) {
        dr_report_buf_puts(b, tmp);
        return;
    }
    /* Longer than the scratch buffer: format again straight into the buffer. */
    if (!dr_report_buf_reserve(b, (size_t)len))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)len + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)len;
}

char *dr_report_buf_take(dr_report_buf_t *b)
{
    if (!b->oom && !b->s)
        dr_report_buf_reserve(b, 0);
    if (b->oom) {
        free(b->s);
        b->s = NULL;
        return NULL;
    }
    b->s[b->n] = '\0';
    char *s = b->s;
    b->s = NULL;
    b->n = b->cap = 0;
    return s;
}

/* --- text table --- */

#define DR_TABLE_LABEL_W 24
#define DR_TABLE_CELL    48

/* A duration in the largest sensible unit: "12 s", "45 m", "3.2 h", "4.1 d". */
static void dr_report_fmt_dur(char *out, size_t cap, double s)
{
    if (!isfinite(s)) {
        snprintf(out, cap, "-");
    } else if (s < 60) {
        snprintf(out, cap, s < 10 ? "%.1f s" : "%.0f s", s);
    } else if (s < 3600) {
        snprintf(out, cap, s < 600 ? "%.1f m" : "%.0f m", s / 60);
    } else if (s < 2 * 86400) {
        snprintf(out, cap, "%.1f h", s / 3600);
    } else {
        snprintf(out, cap, "%.1f d", s / 86400);
    }
}

static void dr_report_fmt_num(char *out, size_t cap, const char *fmt, double v, bool star)
{
    if (!isfinite(v))
        snprintf(out, cap, "-");
    else
        snprintf(out, cap, fmt, v);
    if (star)
        strncat(out, "*", cap - strlen(out) - 1);
}

typedef enum {
    ROW_JOBS,
    ROW_COMPLETED,
    ROW_UNFINISHED,
    ROW_FAILED,
    ROW_REJECTED,
    ROW_CANCELLED,
    ROW_TIMEOUT,
    ROW_AVG_JCT,
    ROW_P50_JCT,
    ROW_P95_JCT,
    ROW_P99_JCT,
    ROW_AVG_Q,
    ROW_P50_Q,
    ROW_P95_Q,
    ROW_P99_Q,
    ROW_MAKESPAN,
    ROW_UTIL,
    ROW_TYPES, /* one row per GPU type name */
    ROW_GPU_HOURS,
    ROW_COST,
    ROW_ENERGY,
    ROW_PREEMPTIONS,
    ROW_N
} dr_report_row_t;

static const char *const dr_report_row_label[ROW_N] = {
    "jobs",         "completed",       "unfinished",   "failed",       "  rejected",
    "cancelled",    "timeout",         "JCT avg",      "JCT p50",      "JCT p95",
    "JCT p99",      "queueing avg",    "queueing p50", "queueing p95", "queueing p99",
    "makespan",     "GPU utilisation", NULL,           "GPU-hours",    "cost (USD)",
    "energy (kWh)", "preemptions",
};

static void dr_report_cell(char *out, size_t cap, const dr_report_t *r, dr_report_row_t row)
{
    switch (row) {
    case ROW_JOBS: snprintf(out, cap, "%zu", r->jobs); break;
    case ROW_COMPLETED: snprintf(out, cap, "%zu", r->completed); break;
    case ROW_UNFINISHED: snprintf(out, cap, "%zu", r->unfinished); break;
    case ROW_FAILED: snprintf(out, cap, "%zu", r->failed); break;
    case ROW_REJECTED: snprintf(out, cap, "%zu", r->rejected); break;
    case ROW_CANCELLED: snprintf(out, cap, "%zu", r->cancelled); break;
    case ROW_TIMEOUT: snprintf(out, cap, "%zu", r->timeout); break;
    case ROW_AVG_JCT: dr_report_fmt_dur(out, cap, r->avg_jct_s); break;
    case ROW_P50_JCT: dr_report_fmt_dur(out, cap, r->p50_jct_s); break;
    case ROW_P95_JCT: dr_report_fmt_dur(out, cap, r->p95_jct_s); break;
    case ROW_P99_JCT: dr_report_fmt_dur(out, cap, r->p99_jct_s); break;
    case ROW_AVG_Q: dr_report_fmt_dur(out, cap, r->avg_queue_s); break;
    case ROW_P50_Q: dr_report_fmt_dur(out, cap, r->p50_queue_s); break;
    case ROW_P95_Q: dr_report_fmt_dur(out, cap, r->p95_queue_s); break;
    case ROW_P99_Q: dr_report_fmt_dur(out, cap, r->p99_queue_s); break;
    case ROW_MAKESPAN: dr_report_fmt_dur(out, cap, r->makespan_s); break;
    case ROW_UTIL: dr_report_fmt_num(out, cap, "%.1f %%", r->gpu_util * 100, false); break;
    case ROW_GPU_HOURS: dr_report_fmt_num(out, cap, "%.1f", r->gpu_hours, false); break;
    case ROW_COST: dr_report_fmt_num(out, cap, "$%.2f", r->cost_usd, r->cost_incomplete); break;
    case ROW_ENERGY:
        dr_report_fmt_num(out, cap, "%.1f", r->energy_kwh, r->energy_incomplete);
        break;
    case ROW_PREEMPTIONS: snprintf(out, cap, "%llu", (unsigned long long)r->preemptions); break;
    case ROW_TYPES:
    case ROW_N: snprintf(out, cap, "-"); break;
    }
}

static void dr_report_table_line(dr_report_buf_t *b, const char *label, char cells[][DR_TABLE_CELL],
                                 const int *width, size_t n)
{
    dr_report_buf_printf(b, "%-*s", DR_TABLE_LABEL_W, label);
    for (size_t i = 0; i < n; i++)
        dr_report_buf_printf(b, "  %*s", width[i], cells[i]);
    dr_report_buf_puts(b, "\n");
}

char *dr_report_table(const dr_report_t *r, size_t n)
{
    dr_report_buf_t b = {0};
    int *width = calloc(n ? n : 1, sizeof *width);
    char(*cells)[DR_TABLE_CELL] = calloc(n ? n : 1, sizeof *cells);
    /* GPU type names over all reports, in order of first appearance. */
    const char *tnames[DR_MAX_GPU_TYPES];
    size_t ntn = 0;
    if (!width || !cells) {
        free(width);
        free(cells);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(r[i].policy);
        width[i] = (int)(len > 12 ? len : 12);
        for (size_t t = 0; t < r[i].ntypes; t++) {
            size_t k = 0;
            while (k < ntn && strcmp(tnames[k], r[i].types[t].name) != 0)
                k++;
            if (k == ntn && ntn < DR_MAX_GPU_TYPES)
                tnames[ntn++] = r[i].types[t].name;
        }
    }

    dr_report_buf_printf(&b, "%-*s", DR_TABLE_LABEL_W, "policy");
    for (size_t i = 0; i < n; i++)
        dr_report_buf_printf(&b, "  %*s", width[i], r[i].policy);
    dr_report_buf_puts(&b, "\n");
    dr_report_buf_printf(&b, "%.*s", DR_TABLE_LABEL_W,
                         "------------------------------------------------");
    for (size_t i = 0; i < n; i++) {
        dr_report_buf_puts(&b, "  ");
        for (int k = 0; k < width[i]; k++)
            dr_report_buf_puts(&b, "-");
    }
    dr_report_buf_puts(&b, "\n");

    bool cost_star = false, energy_star = false;
    for (size_t i = 0; i < n; i++) {
        cost_star |= r[i].cost_incomplete;
        energy_star |= r[i].energy_incomplete;
    }
    for (int row = 0; row < ROW_N; row++) {
        if (row != ROW_TYPES) {
            for (size_t i = 0; i < n; i++)
                dr_report_cell(cells[i], DR_TABLE_CELL, &r[i], (dr_report_row_t)row);
            dr_report_table_line(&b, dr_report_row_label[row], cells, width, n);
            continue;
        }
        for (size_t k = 0; k < ntn; k++) {
            char label[DR_TABLE_LABEL_W + 16];
            snprintf(label, sizeof label, "  util %s", tnames[k]);
            for (size_t i = 0; i < n; i++) {
                snprintf(cells[i], DR_TABLE_CELL, "-");
                for (size_t t = 0; t < r[i].ntypes; t++)
                    if (strcmp(r[i].types[t].name, tnames[k]) == 0)
                        dr_report_fmt_num(cells[i], DR_TABLE_CELL, "%.1f %%",
                                          r[i].types[t].util * 100, false);
            }
            dr_report_table_line(&b, label, cells, width, n);
        }
    }
    if (cost_star)
        dr_report_buf_puts(&b, "* cost excludes GPU types with no known price\n");
    if (energy_star)
        dr_report_buf_puts(&b, "* energy excludes GPU types with no known TDP\n");
    free(width);
    free(cells);
    return dr_report_buf_take(&b);
}

/* --- JSON --- */

static int dr_report_json_num(json_t *o, const char *key, double v)
{
    return json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
}

static int dr_report_json_int(json_t *o, const char *key, uint64_t v)
{
    return json_object_set_new(o, key, json_integer((json_int_t)v));
}

static json_t *dr_report_json_one(const dr_report_t *r)
{
    json_t *o = json_object();
    json_t *types = json_array();
    if (!o || !types) {
        json_decref(o);
        json_decref(types);
        return NULL;
    }
    int bad = 0;
    bad |= json_object_set_new(o, "name", json_string(r->policy));
    bad |= dr_report_json_int(o, "jobs", r->jobs);
    bad |= dr_report_json_int(o, "completed", r->completed);
    bad |= dr_report_json_int(o, "unfinished", r->unfinished);
    bad |= dr_report_json_int(o, "failed", r->failed);
    bad |= dr_report_json_int(o, "cancelled", r->cancelled);
    bad |= dr_report_json_int(o, "timeout", r->timeout);
    bad |= dr_report_json_int(o, "rejected", r->rejected);
    bad |= dr_report_json_int(o, "preemptions", r->preemptions);
    bad |= dr_report_json_int(o, "requeues", r->requeues);
    bad |= dr_report_json_num(o, "avg_jct_s", r->avg_jct_s);
    bad |= dr_report_json_num(o, "p50_jct_s", r->p50_jct_s);
    bad |= dr_report_json_num(o, "p95_jct_s", r->p95_jct_s);
    bad |= dr_report_json_num(o, "p99_jct_s", r->p99_jct_s);
    bad |= dr_report_json_num(o, "max_jct_s", r->max_jct_s);
    bad |= dr_report_json_num(o, "avg_queue_s", r->avg_queue_s);
    bad |= dr_report_json_num(o, "p50_queue_s", r->p50_queue_s);
    bad |= dr_report_json_num(o, "p95_queue_s", r->p95_queue_s);
    bad |= dr_report_json_num(o, "p99_queue_s", r->p99_queue_s);
    bad |= dr_report_json_num(o, "makespan_s", r->makespan_s);
    bad |= dr_report_json_num(o, "gpu_util", r->gpu_util);
    bad |= dr_report_json_num(o, "gpu_hours", r->gpu_hours);
    bad |= dr_report_json_num(o, "cost_usd", r->cost_usd);
    bad |= json_object_set_new(o, "cost_incomplete", json_boolean(r->cost_incomplete));
    bad |= dr_report_json_num(o, "energy_kwh", r->energy_kwh);
    bad |= json_object_set_new(o, "energy_incomplete", json_boolean(r->energy_incomplete));
    for (size_t t = 0; t < r->ntypes && !bad; t++) {
        const dr_report_type_t *rt = &r->types[t];
        json_t *to = json_object();
        if (!to || json_array_append_new(types, to) != 0) {
            bad = 1;
            break;
        }
        bad |= json_object_set_new(to, "name", json_string(rt->name));
        bad |= dr_report_json_int(to, "gpus", rt->gpus);
        bad |= dr_report_json_num(to, "util", rt->util);
        bad |= dr_report_json_num(to, "gpu_hours", rt->gpu_hours);
        bad |= dr_report_json_num(to, "cost_usd", rt->cost_usd);
        bad |= dr_report_json_num(to, "energy_kwh", rt->energy_kwh);
    }
    bad |= json_object_set_new(o, "per_type", types);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *dr_report_json(const dr_report_t *r, size_t n)
{
    json_t *root = json_object();
    json_t *arr = json_array();
    if (!root || !arr || json_object_set_new(root, "policies", arr) != 0) {
        json_decref(root);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *o = dr_report_json_one(&r[i]);
        if (!o || json_array_append_new(arr, o) != 0) {
            json_decref(root);
            return NULL;
        }
    }
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    json_decref(root);
    if (!s)
        return NULL;
    /* Re-own with malloc (jansson may use its own allocator) and end with a newline. */
    size_t len = strlen(s);
    char *out = malloc(len + 2);
    if (out) {
        memcpy(out, s, len);
        out[len] = '\n';
        out[len + 1] = '\0';
    }
    free(s);
    return out;
}
