/* report_format.c - reports as text: a side-by-side fixed-width table for
 * people (blocks that share the column widths, rows only where some report
 * has the figure, and a legend of what the figures mean) and pretty-printed
 * JSON (jansson) for tools.  Also the small string buffer the formatters
 * share (report_priv.h). */
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

/* A table being built: one column per report, every section with the
 * same widths (the label column, then each policy's). */
typedef struct dr_report_tbl {
    dr_report_buf_t b;
    const dr_report_t *r;
    size_t n;
    int *width;
    char (*cells)[DR_TABLE_CELL];
} dr_report_tbl_t;

static void dr_report_fmt_count(char *out, size_t cap, uint64_t v)
{
    snprintf(out, cap, "%llu", (unsigned long long)v);
}

/* "a/b", or "-" when b is 0 */
static void dr_report_fmt_frac(char *out, size_t cap, uint64_t a, uint64_t b)
{
    if (b == 0)
        snprintf(out, cap, "-");
    else
        snprintf(out, cap, "%llu/%llu", (unsigned long long)a, (unsigned long long)b);
}

static void dr_report_fmt_pct(char *out, size_t cap, double frac)
{
    dr_report_fmt_num(out, cap, "%.1f %%", frac * 100, false);
}

typedef enum {
    /* job outcomes and the figures every run has */
    ROW_JOBS,
    ROW_COMPLETED,
    ROW_UNFINISHED,
    ROW_FAILED,
    ROW_REJECTED,
    ROW_CANCELLED,
    ROW_TIMEOUT,
    ROW_DL_MET,
    ROW_DL_MISSED,
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
    ROW_GPU_HOURS,
    ROW_COST,
    ROW_ENERGY,
    ROW_PREEMPTIONS,
    ROW_REQUEUES,
    ROW_NODE_FAILURES,
    ROW_LOCALITY,
    /* against the lower bound (r->sim.bound) */
    ROW_B_MEASURED,
    ROW_B_UNFINISHED,
    ROW_B_NOBOUND,
    ROW_B_AVG_JCT,
    ROW_B_LB,
    ROW_B_RATIO,
    ROW_B_AVG_SD,
    ROW_B_P99_SD,
    ROW_B_MAX_SD,
    ROW_B_AVG_FTF,
    ROW_B_MAX_FTF,
    /* elastic pools (r->pools; figures from the simulator, r->sim) */
    ROW_C_PROVISIONED,
    ROW_C_BILLED,
    ROW_C_BUSY,
    ROW_C_UTIL,
    ROW_C_SPOT,
    ROW_C_COST,
    ROW_C_TOTAL,
} dr_report_row_t;

static void dr_report_cell(char *out, size_t cap, const dr_report_t *r, dr_report_row_t row)
{
    const dr_report_sim_t *s = &r->sim;
    if ((row >= ROW_B_MEASURED && row <= ROW_B_MAX_FTF && !s->bound) ||
        ((row >= ROW_C_PROVISIONED || row == ROW_NODE_FAILURES || row == ROW_LOCALITY) &&
         !s->set)) {
        snprintf(out, cap, "-");
        return;
    }
    switch (row) {
    case ROW_JOBS: dr_report_fmt_count(out, cap, r->jobs); break;
    case ROW_COMPLETED: dr_report_fmt_count(out, cap, r->completed); break;
    case ROW_UNFINISHED: dr_report_fmt_count(out, cap, r->unfinished); break;
    case ROW_FAILED: dr_report_fmt_count(out, cap, r->failed); break;
    case ROW_REJECTED: dr_report_fmt_count(out, cap, r->rejected); break;
    case ROW_CANCELLED: dr_report_fmt_count(out, cap, r->cancelled); break;
    case ROW_TIMEOUT: dr_report_fmt_count(out, cap, r->timeout); break;
    case ROW_DL_MET: dr_report_fmt_frac(out, cap, r->deadlines_met, r->deadlines); break;
    case ROW_DL_MISSED: dr_report_fmt_count(out, cap, r->deadlines_missed); break;
    case ROW_AVG_JCT: dr_report_fmt_dur(out, cap, r->avg_jct_s); break;
    case ROW_P50_JCT: dr_report_fmt_dur(out, cap, r->p50_jct_s); break;
    case ROW_P95_JCT: dr_report_fmt_dur(out, cap, r->p95_jct_s); break;
    case ROW_P99_JCT: dr_report_fmt_dur(out, cap, r->p99_jct_s); break;
    case ROW_AVG_Q: dr_report_fmt_dur(out, cap, r->avg_queue_s); break;
    case ROW_P50_Q: dr_report_fmt_dur(out, cap, r->p50_queue_s); break;
    case ROW_P95_Q: dr_report_fmt_dur(out, cap, r->p95_queue_s); break;
    case ROW_P99_Q: dr_report_fmt_dur(out, cap, r->p99_queue_s); break;
    case ROW_MAKESPAN: dr_report_fmt_dur(out, cap, r->makespan_s); break;
    case ROW_UTIL: dr_report_fmt_pct(out, cap, r->gpu_util); break;
    case ROW_GPU_HOURS: dr_report_fmt_num(out, cap, "%.1f", r->gpu_hours, false); break;
    case ROW_COST: dr_report_fmt_num(out, cap, "$%.2f", r->cost_usd, r->cost_incomplete); break;
    case ROW_ENERGY:
        dr_report_fmt_num(out, cap, "%.1f", r->energy_kwh, r->energy_incomplete);
        break;
    case ROW_PREEMPTIONS: dr_report_fmt_count(out, cap, r->preemptions); break;
    case ROW_REQUEUES: dr_report_fmt_count(out, cap, r->requeues); break;
    case ROW_NODE_FAILURES: dr_report_fmt_count(out, cap, s->node_failures); break;
    case ROW_LOCALITY:
        dr_report_fmt_frac(out, cap, s->locality_hits, s->shard_starts);
        if (s->shard_starts) {
            size_t len = strlen(out);
            snprintf(out + len, cap - len, " (%.0f%%)",
                     100.0 * (double)s->locality_hits / (double)s->shard_starts);
        }
        break;
    case ROW_B_MEASURED: dr_report_fmt_frac(out, cap, s->measured, s->jobs); break;
    case ROW_B_UNFINISHED: dr_report_fmt_count(out, cap, s->unfinished); break;
    case ROW_B_NOBOUND: dr_report_fmt_count(out, cap, s->completed - s->measured); break;
    case ROW_B_AVG_JCT: dr_report_fmt_dur(out, cap, s->avg_jct_s); break;
    case ROW_B_LB: dr_report_fmt_dur(out, cap, s->lower_bound_avg_jct_s); break;
    case ROW_B_RATIO:
        dr_report_fmt_num(out, cap, "%.3f", s->avg_jct_s / s->lower_bound_avg_jct_s, false);
        break;
    case ROW_B_AVG_SD: dr_report_fmt_num(out, cap, "%.2f", s->avg_slowdown, false); break;
    case ROW_B_P99_SD: dr_report_fmt_num(out, cap, "%.2f", s->p99_slowdown, false); break;
    case ROW_B_MAX_SD: dr_report_fmt_num(out, cap, "%.2f", s->max_slowdown, false); break;
    case ROW_B_AVG_FTF: dr_report_fmt_num(out, cap, "%.2f", s->avg_ftf, false); break;
    case ROW_B_MAX_FTF: dr_report_fmt_num(out, cap, "%.2f", s->max_ftf, false); break;
    case ROW_C_PROVISIONED: dr_report_fmt_count(out, cap, s->provisions); break;
    case ROW_C_BILLED: dr_report_fmt_num(out, cap, "%.1f", r->pool_billed_gpu_hours, false); break;
    case ROW_C_BUSY: dr_report_fmt_num(out, cap, "%.1f", r->pool_busy_gpu_hours, false); break;
    case ROW_C_UTIL: dr_report_fmt_pct(out, cap, r->pool_util); break;
    case ROW_C_SPOT: dr_report_fmt_count(out, cap, s->spot_losses); break;
    case ROW_C_COST: dr_report_fmt_num(out, cap, "$%.2f", s->cloud_cost_usd, false); break;
    case ROW_C_TOTAL:
        dr_report_fmt_num(out, cap, "$%.2f", s->total_cost_usd, r->cost_incomplete);
        break;
    }
}

static void dr_report_row(dr_report_tbl_t *t, const char *label, dr_report_row_t row)
{
    dr_report_buf_printf(&t->b, "%-*s", DR_TABLE_LABEL_W, label);
    for (size_t i = 0; i < t->n; i++) {
        dr_report_cell(t->cells[i], DR_TABLE_CELL, &t->r[i], row);
        dr_report_buf_printf(&t->b, "  %*s", t->width[i], t->cells[i]);
    }
    dr_report_buf_puts(&t->b, "\n");
}

/* A section's first line: its title over the policy names. */
static void dr_report_header(dr_report_tbl_t *t, const char *title)
{
    dr_report_buf_printf(&t->b, "%-*s", DR_TABLE_LABEL_W, title);
    for (size_t i = 0; i < t->n; i++)
        dr_report_buf_printf(&t->b, "  %*s", t->width[i], t->r[i].policy);
    dr_report_buf_puts(&t->b, "\n");
}

/* Does any report have this?  (A row that applies to none is left out.) */
typedef struct dr_report_has {
    bool deadlines, requeues, failures, locality, bound, window, unfinished, nobound, pools, spot;
    bool cost_star, energy_star;
} dr_report_has_t;

static dr_report_has_t dr_report_has(const dr_report_t *r, size_t n)
{
    dr_report_has_t h = {0};
    for (size_t i = 0; i < n; i++) {
        const dr_report_sim_t *s = &r[i].sim;
        h.deadlines |= r[i].deadlines > 0;
        h.requeues |= r[i].requeues > 0 || s->node_failures > 0 || s->spot_losses > 0;
        h.failures |= s->node_failures > 0;
        h.locality |= s->shard_starts > 0;
        h.bound |= s->bound;
        h.window |= s->bound && s->window;
        h.unfinished |= s->bound && s->unfinished > 0;
        h.nobound |= s->bound && s->completed > s->measured;
        h.pools |= r[i].pools;
        h.spot |= s->spot_losses > 0;
        h.cost_star |= r[i].cost_incomplete;
        h.energy_star |= r[i].energy_incomplete;
    }
    return h;
}

/* The legend: what the figures shown mean (each line under 100 columns). */
static void dr_report_legend(dr_report_buf_t *b, const dr_report_has_t *h)
{
    dr_report_buf_puts(b, "\nJCT = completion time - submit time, over completed jobs; queueing = "
                          "first start - submit.\n");
    dr_report_buf_printf(b,
                         "%s = GPU-time held on on-prem GPUs / (on-prem GPUs x makespan); "
                         "makespan = first\n  submit to last event.\n",
                         h->pools ? "on-prem GPU util" : "GPU utilisation");
    if (h->deadlines)
        dr_report_buf_puts(b, "deadlines met = completed by the deadline / jobs with one; missed "
                              "= completed late,\n  ended otherwise, or unfinished past it.\n");
    if (h->requeues)
        dr_report_buf_puts(b, "requeues = runs restarted from scratch after their node failed or "
                              "was lost.\n");
    if (h->locality)
        dr_report_buf_puts(b, "data locality = starts of tasks naming an input shard placed on a "
                              "node holding it /\n  all such starts.\n");
    if (h->bound) {
        dr_report_buf_puts(b, "lower bound = every job alone on its fastest GPU type, never "
                              "queued; not achievable in\n  general.  measured = the completed "
                              "jobs with a lower bound: avg JCT, the lower\n  bound, slowdown "
                              "and FTF are all over them.\n");
        dr_report_buf_puts(b, "slowdown = a job's JCT / its own lower bound (1 = as fast as "
                              "possible).\n");
        dr_report_buf_puts(b, "finish-time fairness (FTF, Themis) = JCT / the job's time with a "
                              "1/N share of the\n  cluster, N = jobs in the system when it "
                              "arrived (docs/cli.md); below 1 beats a fair share.\n");
    }
    if (h->pools)
        dr_report_buf_puts(b, "cloud utilisation = GPU-hours jobs held on pool nodes / GPU-hours "
                              "billed (provisioning or\n  up).  GPU-hours and cost (USD) include "
                              "pool nodes at catalog prices; total cost =\n  on-prem GPU-hours "
                              "at catalog prices + the cloud bill.\n");
}

char *dr_report_table(const dr_report_t *r, size_t n)
{
    dr_report_tbl_t t = {.r = r, .n = n};
    t.width = calloc(n ? n : 1, sizeof *t.width);
    t.cells = calloc(n ? n : 1, sizeof *t.cells);
    /* GPU type names over all reports, in order of first appearance. */
    const char *tnames[DR_MAX_GPU_TYPES];
    size_t ntn = 0;
    if (!t.width || !t.cells) {
        free(t.width);
        free(t.cells);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(r[i].policy);
        t.width[i] = (int)(len > 12 ? len : 12);
        for (size_t k = 0; k < r[i].ntypes; k++) {
            size_t m = 0;
            while (m < ntn && strcmp(tnames[m], r[i].types[k].name) != 0)
                m++;
            if (m == ntn && ntn < DR_MAX_GPU_TYPES)
                tnames[ntn++] = r[i].types[k].name;
        }
    }
    dr_report_has_t h = dr_report_has(r, n);
    dr_report_buf_t *b = &t.b;

    dr_report_header(&t, "policy");
    dr_report_buf_printf(b, "%.*s", DR_TABLE_LABEL_W,
                         "------------------------------------------------");
    for (size_t i = 0; i < n; i++) {
        dr_report_buf_puts(b, "  ");
        for (int k = 0; k < t.width[i]; k++)
            dr_report_buf_puts(b, "-");
    }
    dr_report_buf_puts(b, "\n");
    dr_report_row(&t, "jobs", ROW_JOBS);
    dr_report_row(&t, "completed", ROW_COMPLETED);
    dr_report_row(&t, "unfinished", ROW_UNFINISHED);
    dr_report_row(&t, "failed", ROW_FAILED);
    dr_report_row(&t, "  rejected", ROW_REJECTED);
    dr_report_row(&t, "cancelled", ROW_CANCELLED);
    dr_report_row(&t, "timeout", ROW_TIMEOUT);
    if (h.deadlines) {
        dr_report_row(&t, "deadlines met", ROW_DL_MET);
        dr_report_row(&t, "deadlines missed", ROW_DL_MISSED);
    }
    dr_report_row(&t, "JCT avg", ROW_AVG_JCT);
    dr_report_row(&t, "JCT p50", ROW_P50_JCT);
    dr_report_row(&t, "JCT p95", ROW_P95_JCT);
    dr_report_row(&t, "JCT p99", ROW_P99_JCT);
    dr_report_row(&t, "queueing avg", ROW_AVG_Q);
    dr_report_row(&t, "queueing p50", ROW_P50_Q);
    dr_report_row(&t, "queueing p95", ROW_P95_Q);
    dr_report_row(&t, "queueing p99", ROW_P99_Q);
    dr_report_row(&t, "makespan", ROW_MAKESPAN);
    dr_report_row(&t, h.pools ? "on-prem GPU util" : "GPU utilisation", ROW_UTIL);
    for (size_t k = 0; k < ntn; k++) {
        char label[DR_TABLE_LABEL_W + 16];
        snprintf(label, sizeof label, "  util %s", tnames[k]);
        dr_report_buf_printf(b, "%-*s", DR_TABLE_LABEL_W, label);
        for (size_t i = 0; i < n; i++) {
            snprintf(t.cells[i], DR_TABLE_CELL, "-");
            for (size_t m = 0; m < r[i].ntypes; m++)
                if (strcmp(r[i].types[m].name, tnames[k]) == 0)
                    dr_report_fmt_pct(t.cells[i], DR_TABLE_CELL, r[i].types[m].util);
            dr_report_buf_printf(b, "  %*s", t.width[i], t.cells[i]);
        }
        dr_report_buf_puts(b, "\n");
    }
    dr_report_row(&t, "GPU-hours", ROW_GPU_HOURS);
    dr_report_row(&t, "cost (USD)", ROW_COST);
    dr_report_row(&t, "energy (kWh)", ROW_ENERGY);
    dr_report_row(&t, "preemptions", ROW_PREEMPTIONS);
    if (h.requeues)
        dr_report_row(&t, "requeues", ROW_REQUEUES);
    if (h.failures)
        dr_report_row(&t, "node failures", ROW_NODE_FAILURES);
    if (h.locality)
        dr_report_row(&t, "data locality", ROW_LOCALITY);

    if (h.bound) {
        dr_report_buf_puts(b, "\n");
        dr_report_header(&t, h.window ? "window (vs lower bound)" : "vs lower bound");
        dr_report_row(&t, "measured / jobs", ROW_B_MEASURED);
        if (h.unfinished)
            dr_report_row(&t, "  unfinished", ROW_B_UNFINISHED);
        if (h.nobound)
            dr_report_row(&t, "  no lower bound", ROW_B_NOBOUND);
        dr_report_row(&t, "avg JCT", ROW_B_AVG_JCT);
        dr_report_row(&t, "lower bound avg JCT", ROW_B_LB);
        dr_report_row(&t, "avg JCT / lower bound", ROW_B_RATIO);
        dr_report_row(&t, "slowdown avg", ROW_B_AVG_SD);
        dr_report_row(&t, "slowdown p99", ROW_B_P99_SD);
        dr_report_row(&t, "slowdown max", ROW_B_MAX_SD);
        dr_report_row(&t, "finish-time fairness avg", ROW_B_AVG_FTF);
        dr_report_row(&t, "finish-time fairness max", ROW_B_MAX_FTF);
    }
    if (h.pools) {
        dr_report_buf_puts(b, "\n");
        dr_report_header(&t, "cloud (elastic pools)");
        dr_report_row(&t, "nodes provisioned", ROW_C_PROVISIONED);
        dr_report_row(&t, "cloud GPU-hours billed", ROW_C_BILLED);
        dr_report_row(&t, "cloud GPU-hours busy", ROW_C_BUSY);
        dr_report_row(&t, "cloud utilisation", ROW_C_UTIL);
        if (h.spot)
            dr_report_row(&t, "spot interruptions", ROW_C_SPOT);
        dr_report_row(&t, "cloud cost", ROW_C_COST);
        dr_report_row(&t, "total cost", ROW_C_TOTAL);
    }
    if (h.cost_star || h.energy_star)
        dr_report_buf_puts(b, "\n");
    if (h.cost_star)
        dr_report_buf_puts(b, "* cost excludes GPU types with no known price\n");
    if (h.energy_star)
        dr_report_buf_puts(b, "* energy excludes GPU types with no known TDP\n");
    dr_report_legend(b, &h);
    free(t.width);
    free(t.cells);
    return dr_report_buf_take(b);
}

/* --- JSON --- */

int dr_report_json_num(json_t *o, const char *key, double v)
{
    return json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
}

int dr_report_json_int(json_t *o, const char *key, uint64_t v)
{
    return json_object_set_new(o, key, json_integer((json_int_t)v));
}

json_t *dr_report_json_object(const dr_report_t *r)
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
    bad |= dr_report_json_int(o, "deadlines", r->deadlines);
    bad |= dr_report_json_int(o, "deadlines_met", r->deadlines_met);
    bad |= dr_report_json_int(o, "deadlines_missed", r->deadlines_missed);
    bad |= dr_report_json_int(o, "gpus", r->gpus);
    bad |= dr_report_json_num(o, "pool_busy_gpu_hours", r->pool_busy_gpu_hours);
    bad |= dr_report_json_num(o, "pool_billed_gpu_hours", r->pool_billed_gpu_hours);
    bad |= dr_report_json_num(o, "pool_util", r->pool_util);
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
        json_t *o = dr_report_json_object(&r[i]);
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
