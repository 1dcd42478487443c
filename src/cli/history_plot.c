/* history_plot.c - per-account usage over time from GET /v1/history rows
 * (see history_plot.h).  A job's cost and GPU-hours are spread over the
 * time it ran, not put on the day it ended, so that a three-day training
 * run shows on its three days; the buckets are local calendar days or
 * hours (mktime steps them, so a day with a DST change is still one day). */
#include "cli/history_plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/format.h"
#include "cli/svg_plot.h"

/* The start of the local day or hour holding t.  Hours by the UTC offset
 * in force at t (a zone may be off by half an hour); days by mktime. */
static double bucket_floor(double t, bool hourly)
{
    time_t tt = (time_t)floor(t);
    struct tm tm;
    localtime_r(&tt, &tm);
    if (hourly) {
        long long local = (long long)tt + tm.tm_gmtoff;
        long long r = ((local % 3600) + 3600) % 3600;
        return (double)((long long)tt - r);
    }
    tm.tm_sec = 0;
    tm.tm_min = 0;
    tm.tm_hour = 0;
    tm.tm_isdst = -1;
    return (double)mktime(&tm);
}

/* The start of the next local day or hour after the bucket starting at t
 * (always later: an ambiguous local time cannot step back). */
static double bucket_next(double t, bool hourly)
{
    if (hourly)
        return t + 3600;
    time_t tt = (time_t)t;
    struct tm tm;
    localtime_r(&tt, &tm);
    tm.tm_mday++;
    tm.tm_hour = 0;
    tm.tm_min = 0;
    tm.tm_sec = 0;
    tm.tm_isdst = -1;
    double next = (double)mktime(&tm);
    return next > t ? next : t + 86400;
}

static char *bucket_label(double t, bool hourly)
{
    time_t tt = (time_t)t;
    struct tm tm;
    localtime_r(&tt, &tm);
    char buf[32];
    strftime(buf, sizeof buf, hourly ? "%m-%d %H:00" : "%Y-%m-%d", &tm);
    return strdup(buf);
}

typedef struct row {
    double s, e, cost, gpuh;
    size_t acc;
} row_t;

static int find_acc(cli_usage_t *u, const char *name, size_t *cap, size_t *out)
{
    for (size_t i = 0; i < u->nacc; i++)
        if (strcmp(u->accounts[i], name) == 0) {
            *out = i;
            return DR_OK;
        }
    if (u->nacc == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        char **a = realloc(u->accounts, nc * sizeof *a);
        if (!a)
            return DR_ENOMEM;
        u->accounts = a;
        *cap = nc;
    }
    if (!(u->accounts[u->nacc] = strdup(name)))
        return DR_ENOMEM;
    *out = u->nacc++;
    return DR_OK;
}

static double num0(const json_t *o, const char *key)
{
    double v = cli_json_num(o, key);
    return isfinite(v) && v > 0 ? v : 0;
}

/* the accounts by total cost (then GPU-hours, then name), largest first */
static const cli_usage_t *sort_u;
static const double *sort_tc, *sort_tg;
static int cmp_acc(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (sort_tc[x] != sort_tc[y])
        return sort_tc[x] > sort_tc[y] ? -1 : 1;
    if (sort_tg[x] != sort_tg[y])
        return sort_tg[x] > sort_tg[y] ? -1 : 1;
    return strcmp(sort_u->accounts[x], sort_u->accounts[y]);
}

static int reorder(cli_usage_t *u)
{
    size_t na = u->nacc, nx = u->nx;
    if (na < 2)
        return DR_OK;
    double *tc = calloc(na, sizeof *tc), *tg = calloc(na, sizeof *tg);
    size_t *ord = malloc(na * sizeof *ord);
    double *c2 = malloc(na * nx * sizeof *c2), *g2 = malloc(na * nx * sizeof *g2);
    char **a2 = malloc(na * sizeof *a2);
    if (!tc || !tg || !ord || !c2 || !g2 || !a2) {
        free(tc), free(tg), free(ord), free(c2), free(g2), free(a2);
        return DR_ENOMEM;
    }
    for (size_t i = 0; i < na; i++) {
        ord[i] = i;
        for (size_t x = 0; x < nx; x++) {
            tc[i] += u->cost[i * nx + x];
            tg[i] += u->gpuh[i * nx + x];
        }
    }
    sort_u = u, sort_tc = tc, sort_tg = tg;
    qsort(ord, na, sizeof *ord, cmp_acc);
    for (size_t i = 0; i < na; i++) {
        a2[i] = u->accounts[ord[i]];
        memcpy(c2 + i * nx, u->cost + ord[i] * nx, nx * sizeof *c2);
        memcpy(g2 + i * nx, u->gpuh + ord[i] * nx, nx * sizeof *g2);
    }
    free(u->accounts), free(u->cost), free(u->gpuh);
    u->accounts = a2, u->cost = c2, u->gpuh = g2;
    free(tc), free(tg), free(ord);
    return DR_OK;
}

int cli_usage_from_history(const json_t *reply, cli_plot_by_t by, cli_usage_t *u, dr_err_t *err)
{
    memset(u, 0, sizeof *u);
    const json_t *jobs = json_object_get(reply, "jobs");
    size_t n = json_array_size(jobs), nr = 0, acap = 0;
    row_t *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    double lo = INFINITY, hi = -INFINITY;
    size_t k;
    const json_t *j;
    json_array_foreach(jobs, k, j)
    {
        /* an array's or a service's own row sums its runs' rows */
        if (json_is_integer(json_object_get(j, "array_tasks")))
            continue;
        double e = cli_json_num(j, "end_time"), s = cli_json_num(j, "start_time");
        if (!(fabs(e) < 1e11)) /* no end (or none a calendar holds) */
            continue;
        if (!(s <= e && s > e - 1e10))
            s = e;
        row_t *r = &rows[nr];
        const char *acc = cli_json_str(j, "account", "");
        if (find_acc(u, *acc ? acc : CLI_PLOT_NO_ACCOUNT, &acap, &r->acc) != DR_OK) {
            free(rows);
            cli_usage_free(u);
            return dr_err_set(err, DR_ENOMEM, "out of memory");
        }
        r->s = s, r->e = e;
        r->cost = num0(j, "cost_usd");
        r->gpuh = num0(j, "gpu_hours");
        lo = s < lo ? s : lo;
        hi = e > hi ? e : hi;
        nr++;
    }
    u->jobs = nr;
    u->hourly = by == CLI_PLOT_HOUR || (by == CLI_PLOT_AUTO && nr && hi - lo < 2 * 86400.0);
    if (nr) {
        /* the edges: from the first job's bucket to past the last end */
        size_t cap = 0;
        for (double t = bucket_floor(lo, u->hourly);; t = bucket_next(t, u->hourly)) {
            if (u->nx + 1 > CLI_PLOT_MAX_BUCKETS) {
                free(rows);
                cli_usage_free(u);
                return dr_err_set(err, DR_EINVAL,
                                  "--plot: the jobs span %.0f days: more than %d %s (use --by "
                                  "day, or --since/--until)",
                                  (hi - lo) / 86400, CLI_PLOT_MAX_BUCKETS,
                                  by == CLI_PLOT_HOUR ? "hours" : "buckets");
            }
            if (u->nx + 1 >= cap) {
                cap = cap ? cap * 2 : 64;
                double *p = realloc(u->t0, cap * sizeof *p);
                if (!p)
                    goto oom;
                u->t0 = p;
            }
            u->t0[u->nx] = t;
            if (t > hi)
                break;
            u->nx++;
        }
        u->xlabels = calloc(u->nx, sizeof *u->xlabels);
        if (!u->xlabels)
            goto oom;
        for (size_t x = 0; x < u->nx; x++)
            if (!(u->xlabels[x] = bucket_label(u->t0[x], u->hourly)))
                goto oom;
    }
    u->cost = calloc(u->nacc * u->nx + 1, sizeof *u->cost);
    u->gpuh = calloc(u->nacc * u->nx + 1, sizeof *u->gpuh);
    if (!u->cost || !u->gpuh)
        goto oom;
    for (size_t i = 0; i < nr; i++) {
        const row_t *r = &rows[i];
        /* the first bucket the job touches: the last edge <= its start */
        size_t a = 0, b = u->nx;
        while (b - a > 1) {
            size_t m = (a + b) / 2;
            if (u->t0[m] <= r->s)
                a = m;
            else
                b = m;
        }
        double len = r->e - r->s;
        for (size_t x = a; x < u->nx; x++) {
            double f;
            if (len <= 0) {
                if (!(r->e >= u->t0[x] && r->e < u->t0[x + 1]))
                    continue;
                f = 1;
            } else {
                double ov = fmin(r->e, u->t0[x + 1]) - fmax(r->s, u->t0[x]);
                if (u->t0[x] >= r->e)
                    break;
                if (ov <= 0)
                    continue;
                f = ov / len;
            }
            u->cost[r->acc * u->nx + x] += r->cost * f;
            u->gpuh[r->acc * u->nx + x] += r->gpuh * f;
        }
        u->total_cost += r->cost;
        u->total_gpuh += r->gpuh;
    }
    free(rows);
    if (reorder(u) != DR_OK) {
        cli_usage_free(u);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    return DR_OK;
oom:
    free(rows);
    cli_usage_free(u);
    return dr_err_set(err, DR_ENOMEM, "out of memory");
}

void cli_usage_free(cli_usage_t *u)
{
    for (size_t i = 0; i < u->nacc; i++)
        free(u->accounts[i]);
    free(u->accounts);
    if (u->xlabels)
        for (size_t x = 0; x < u->nx; x++)
            free(u->xlabels[x]);
    free(u->xlabels);
    free(u->t0);
    free(u->cost);
    free(u->gpuh);
    memset(u, 0, sizeof *u);
}

char *cli_usage_svg(const cli_usage_t *u, bool lines, const char *window)
{
    cli_plot_panel_t panels[2] = {{"Cost (USD)", "USD", u->cost},
                                  {"GPU-hours", "GPU-hours", u->gpuh}};
    char title[160], sub[400];
    snprintf(title, sizeof title, "drover: cost and GPU-hours per account, per %s",
             u->hourly ? "hour" : "day");
    snprintf(sub, sizeof sub, "%s%s%zu job%s, $%.2f, %.2f GPU-hours (local time)",
             window ? window : "", window ? "; " : "", u->jobs, u->jobs == 1 ? "" : "s",
             u->total_cost, u->total_gpuh);
    cli_plot_t p = {.title = title,
                    .subtitle = sub,
                    .nx = u->nx,
                    .xlabels = (const char *const *)u->xlabels,
                    .nseries = u->nacc,
                    .series = (const char *const *)u->accounts,
                    .legend = "account",
                    .npanels = 2,
                    .panels = panels,
                    .lines = lines};
    return cli_svg_plot(&p);
}
