/* trace_philly.c - the Philly-derived job list (philly_jobs.csv:
 * timestamp,duration,num_gpus,gpu_time,cluster).
 *
 * Header required; columns are found by name (timestamp, duration and
 * num_gpus required; cluster, the virtual cluster, becomes the account;
 * gpu_time is ignored: it is duration x num_gpus).  The file is not in time
 * order, so every row is read first and submit = timestamp - the earliest
 * timestamp.  Timestamps are "YYYY-MM-DD HH:MM:SS" in UTC, converted with
 * days-from-civil arithmetic (no timegm/mktime, no time zone).
 *
 * A job runs duration seconds on any GPU (class 0, true work = duration),
 * as num_gpus whole GPUs anywhere (nodes 0), kind train; num_gpus 0 is an
 * error (the file has no CPU-only jobs).  With max_jobs, the earliest
 * max_jobs rows by time are kept. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drover/util.h"
#include "drover/workload.h"
#include "sim/trace_priv.h"

#define DR_ERANGE_YEAR 1 /* parse_timestamp: well formed, year out of range */

typedef struct philly_row {
    int64_t ts; /* seconds since 1970-01-01 UTC */
    double duration;
    uint32_t gpus;
    uint32_t account;
    size_t order; /* row index, for a stable sort */
} philly_row_t;

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static bool leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static bool digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* "YYYY-MM-DD HH:MM:SS" (or with 'T'), blanks around allowed. */
static int parse_timestamp(const char *s, int64_t *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n != 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' ||
        s[16] != ':')
        return DR_EINVAL;
    int y, mo, d, h, mi, se;
    if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) ||
        !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &se))
        return DR_EINVAL;
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap(y)) || h > 23 ||
        mi > 59 || se > 59)
        return DR_EINVAL;
    if (y < 1970 || y > 2199) /* keeps submit differences within dr_time_t */
        return DR_ERANGE_YEAR;
    *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    return DR_OK;
}

static int philly_row(dr_trace_ctx_t *t, dr_err_t *e, const dr_csv_t *csv, const int *col,
                      philly_row_t *r)
{
    size_t line = csv->line;
    int need = 0;
    for (int k = 0; k < 3; k++)
        if (col[k] + 1 > need)
            need = col[k] + 1;
    if ((size_t)need > csv->nfields)
        return dr_trace_ferr(e, t, line, NULL, DR_EINVAL, "expected at least %d fields, got %zu",
                             need, csv->nfields);
    const char *ts = csv->fields[col[0]];
    if (dr_is_blank(ts))
        return dr_trace_ferr(e, t, line, "timestamp", DR_EINVAL, "missing");
    int rc = parse_timestamp(ts, &r->ts);
    if (rc == DR_ERANGE_YEAR)
        return dr_trace_ferr(e, t, line, "timestamp", DR_EINVAL,
                             "'%s': the year must be 1970..2199", ts);
    if (rc != DR_OK)
        return dr_trace_ferr(e, t, line, "timestamp", DR_EINVAL, "'%s' is not YYYY-MM-DD HH:MM:SS",
                             ts);
    if ((rc = dr_trace_num(e, t, line, "duration", csv->fields[col[1]], 0, &r->duration)) < 0)
        return rc;
    if (r->duration > 9.0e9)
        return dr_trace_ferr(e, t, line, "duration", DR_EINVAL, "'%s' is too large",
                             csv->fields[col[1]]);
    uint64_t g;
    if ((rc = dr_trace_uint(e, t, line, "num_gpus", csv->fields[col[2]], 1, 1000000, &g)) < 0)
        return rc;
    r->gpus = (uint32_t)g;
    const char *vc = col[3] >= 0 && (size_t)col[3] < csv->nfields ? csv->fields[col[3]] : "";
    int64_t a = dr_trace_intern(&t->wl->accounts, vc);
    if (a < 0)
        return dr_err_set(e, DR_ENOMEM, "%s: out of memory", t->name);
    r->account = (uint32_t)a;
    return DR_OK;
}

static int cmp_row(const void *a, const void *b)
{
    const philly_row_t *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_order(const void *a, const void *b)
{
    const philly_row_t *x = a, *y = b;
    return x->order < y->order ? -1 : x->order > y->order;
}

int dr_trace_read_philly(dr_trace_ctx_t *t, const char *buf, size_t len)
{
    static const char *const names[4] = {"timestamp", "duration", "num_gpus", "cluster"};
    int col[4] = {-1, -1, -1, -1};
    bool header = false;
    philly_row_t *rows = NULL;
    size_t nrows = 0, cap = 0;
    dr_csv_t csv;
    dr_csv_init(&csv, buf, len, ',');
    int rc = DR_OK, nf;
    while ((nf = dr_csv_next(&csv)) != 0) {
        dr_err_t e = {0};
        if (nf < 0) {
            dr_trace_ferr(&e, t, csv.line, NULL, nf,
                          nf == DR_ENOMEM ? "out of memory" : "unterminated quote");
        } else if (dr_trace_skip_record((const char *const *)csv.fields, csv.nfields)) {
            continue;
        } else if (!header) {
            for (int k = 0; k < 4; k++)
                col[k] = dr_csv_col(&csv, names[k]);
            for (int k = 0; k < 3 && rc == DR_OK; k++)
                if (col[k] < 0)
                    rc = dr_trace_ferr(t->err, t, csv.line, "header", DR_EINVAL,
                                       "missing column '%s'", names[k]);
            if (rc < 0)
                break;
            header = true;
            continue;
        } else {
            philly_row_t r = {0};
            r.order = nrows;
            if (philly_row(t, &e, &csv, col, &r) == DR_OK && DR_PUSH(rows, nrows, cap, r) != 0)
                dr_err_set(&e, DR_ENOMEM, "%s: out of memory", t->name);
        }
        if (e.code < 0 && (rc = dr_trace_row_error(t, &e)) < 0)
            break;
    }
    dr_csv_free(&csv);
    if (rc == DR_OK && !header)
        rc = dr_err_set(t->err, DR_EINVAL, "%s: no header line", t->name);
    if (rc < 0) {
        free(rows);
        return rc;
    }

    /* keep the earliest max_jobs rows, then add in file order */
    size_t keep = nrows;
    if (t->o->max_jobs && t->o->max_jobs < nrows) {
        keep = t->o->max_jobs;
        qsort(rows, nrows, sizeof *rows, cmp_row);
        qsort(rows, keep, sizeof *rows, cmp_order);
    }
    int64_t t0 = 0;
    for (size_t i = 0; i < keep; i++)
        if (i == 0 || rows[i].ts < t0)
            t0 = rows[i].ts;
    int64_t u = dr_trace_intern(&t->wl->users, "");
    if (u < 0)
        rc = dr_err_set(t->err, DR_ENOMEM, "%s: out of memory", t->name);
    for (size_t i = 0; rc == DR_OK && i < keep; i++) {
        const philly_row_t *r = &rows[i];
        dr_job_t j;
        dr_job_init(&j);
        j.kind = DR_KIND_TRAIN;
        j.submit = (r->ts - t0) * DR_NSEC_PER_SEC;
        j.perf_class = 0;
        j.req.nodes = 0;
        j.req.gpus_per_node = r->gpus;
        j.req.gpu_milli = 1000;
        j.user = (uint32_t)u;
        j.account = r->account;
        if (dr_workload_add(t->wl, &j, r->duration, NULL) != 0)
            rc = dr_err_set(t->err, DR_ENOMEM, "%s: out of memory", t->name);
    }
    free(rows);
    return rc;
}
