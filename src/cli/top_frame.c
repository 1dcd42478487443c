/* top_frame.c - `drover top`'s frame from the controller's replies (see
 * top_frame.h).  Pure: everything it shows comes from its input, so that a
 * frame printed with --once and one drawn on a terminal are the same text,
 * and the unit tests can pin both the figures and the cutting to size. */
#include "cli/top_frame.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/format.h"
#include "drover/error.h"

#define BAR_CELLS 20

/* --- the summary: per GPU type, cost rate, job counts --- */

static long long int_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        return (long long)json_integer_value(v);
    if (json_is_real(v) && fabs(json_real_value(v)) < 9e18)
        return (long long)json_real_value(v);
    return 0;
}

static cli_top_type_t *type_get(cli_top_summary_t *s, const char *name, size_t *cap)
{
    for (size_t i = 0; i < s->ntypes; i++)
        if (strcmp(s->types[i].name, name) == 0)
            return &s->types[i];
    if (s->ntypes == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        cli_top_type_t *t = realloc(s->types, nc * sizeof *t);
        if (!t)
            return NULL;
        s->types = t;
        *cap = nc;
    }
    cli_top_type_t *t = &s->types[s->ntypes++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->usd_per_gpu_hour = NAN;
    return t;
}

/* an array parent (its tasks are counted, not it) or a service (its
 * replica runs are the jobs) */
static bool is_summary_row(const json_t *j)
{
    return json_is_object(json_object_get(j, "tasks")) ||
           json_is_object(json_object_get(j, "service"));
}

static void count_jobs(const json_t *running, const json_t *pending, cli_top_summary_t *s)
{
    size_t k;
    const json_t *j;
    json_array_foreach(json_object_get(running, "jobs"), k, j)
    {
        const json_t *tasks = json_object_get(j, "tasks");
        if (json_is_object(tasks))
            s->pending += int_of(tasks, "pending");
        else if (!is_summary_row(j))
            s->running++;
    }
    json_array_foreach(json_object_get(pending, "jobs"), k, j)
    {
        const json_t *tasks = json_object_get(j, "tasks");
        long long n = json_is_object(tasks) ? int_of(tasks, "pending") : 1;
        if (json_is_object(json_object_get(j, "service")))
            n = 0;
        /* held ones apart, as GET /v1/stats counts them */
        *(json_is_string(json_object_get(j, "hold")) ? &s->held : &s->pending) += n;
    }
}

int cli_top_summarise(const json_t *stats, const json_t *nodes, const json_t *running,
                      const json_t *pending, const dr_catalog_t *cat, cli_top_summary_t *s)
{
    memset(s, 0, sizeof *s);
    s->cost_usd_per_hour = NAN;
    size_t cap = 0, k;
    const json_t *v;
    const json_t *types = json_object_get(stats, "types");
    if (stats && json_is_array(types)) {
        s->from_stats = true;
        json_array_foreach(types, k, v)
        {
            cli_top_type_t *t = type_get(s, cli_json_str(v, "type", "?"), &cap);
            if (!t)
                return DR_ENOMEM;
            t->total += int_of(v, "total");
            t->allocated += int_of(v, "allocated");
            t->idle += int_of(v, "idle");
            t->down += int_of(v, "down");
            t->usd_per_gpu_hour = cli_json_num(v, "usd_per_gpu_hour");
        }
        s->cost_usd_per_hour = cli_json_num(stats, "cost_usd_per_hour");
    } else {
        json_array_foreach(json_object_get(nodes, "nodes"), k, v)
        {
            const char *type = cli_json_str(v, "gpu_type", "");
            long long gpus = int_of(v, "gpus"), alloc = int_of(v, "gpus_alloc");
            if (!*type || gpus <= 0)
                continue;
            if (alloc > gpus)
                alloc = gpus;
            cli_top_type_t *t = type_get(s, type, &cap);
            if (!t)
                return DR_ENOMEM;
            t->total += gpus;
            t->allocated += alloc;
            if (strcmp(cli_json_str(v, "state", ""), "up") == 0)
                t->idle += gpus - alloc;
            else
                t->down += gpus - alloc; /* drained, down, unreachable: nothing new starts */
        }
        double rate = 0;
        for (size_t i = 0; i < s->ntypes; i++) {
            cli_top_type_t *t = &s->types[i];
            const dr_gpu_spec_t *g = cat ? dr_catalog_find(cat, t->name) : NULL;
            t->usd_per_gpu_hour = g ? g->price_hr : NAN;
            if (isfinite(t->usd_per_gpu_hour))
                rate += (double)t->allocated * t->usd_per_gpu_hour;
            else if (t->allocated > 0)
                s->cost_partial = true;
        }
        s->cost_usd_per_hour = rate;
    }
    const json_t *jobs = json_object_get(stats, "jobs");
    if (json_is_object(jobs)) {
        s->running = int_of(jobs, "running");
        s->pending = int_of(jobs, "pending");
        s->held = int_of(jobs, "held");
    } else {
        count_jobs(running, pending, s);
    }
    return DR_OK;
}

void cli_top_summary_free(cli_top_summary_t *s)
{
    free(s->types);
    memset(s, 0, sizeof *s);
}

char *cli_top_bar(long long allocated, long long idle, long long down, int width, char *buf,
                  size_t n)
{
    if (width < 1)
        width = 1;
    if ((size_t)width + 3 > n) {
        if (n)
            buf[0] = '\0';
        return buf;
    }
    long long total = allocated + idle + down;
    int ca = 0, cd = 0;
    if (total > 0) {
        ca = (int)llround((double)allocated * width / (double)total);
        cd = (int)llround((double)down * width / (double)total);
        if (allocated > 0 && ca == 0)
            ca = 1;
        if (down > 0 && cd == 0)
            cd = 1;
        while (ca + cd > width) /* the minimums pushed it over: take from the larger */
            *(ca >= cd ? &ca : &cd) -= 1;
        if (idle > 0 && ca + cd == width && width > 1) /* idle GPUs show too */
            *(ca >= cd ? &ca : &cd) -= 1;
    }
    int ci = total > 0 ? width - ca - cd : width;
    size_t p = 0;
    buf[p++] = '[';
    for (int i = 0; i < ca; i++)
        buf[p++] = '#';
    for (int i = 0; i < ci; i++)
        buf[p++] = '-';
    for (int i = 0; i < cd; i++)
        buf[p++] = 'x';
    buf[p++] = ']';
    buf[p] = '\0';
    return buf;
}

/* --- the frame's text --- */

typedef struct frame {
    char *s;
    size_t len, cap;
    int lines, width, height;
    bool oom;
} frame_t;

static bool frame_full(const frame_t *f)
{
    return f->height > 0 && f->lines >= f->height;
}

/* One line (without its '\n'; a '\n' inside ends it), cut to the width in
 * characters (UTF-8: continuation bytes take no column). */
static void frame_line(frame_t *f, const char *line)
{
    if (f->oom || frame_full(f))
        return;
    size_t n = strcspn(line, "\n");
    if (f->width > 0) {
        int cols = 0;
        size_t i = 0;
        for (; i < n; i++) {
            if (((unsigned char)line[i] & 0xC0) == 0x80)
                continue;
            if (cols == f->width)
                break;
            cols++;
        }
        n = i;
    }
    while (n > 0 && line[n - 1] == ' ') /* cut cells leave no trailing blanks */
        n--;
    if (f->len + n + 2 > f->cap) {
        size_t nc = f->cap ? f->cap * 2 : 4096;
        while (nc < f->len + n + 2)
            nc *= 2;
        char *p = realloc(f->s, nc);
        if (!p) {
            f->oom = true;
            return;
        }
        f->s = p;
        f->cap = nc;
    }
    /* what the controller sent (a policy name, an error) cannot drive the
     * terminal: control characters show as '?', as in tables */
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)line[i];
        f->s[f->len++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    f->s[f->len++] = '\n';
    f->s[f->len] = '\0';
    f->lines++;
}

static void frame_printf(frame_t *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void frame_printf(frame_t *f, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    frame_line(f, buf);
}

/* A table's rendered text, line by line. */
static void frame_table(frame_t *f, cli_table_t *t)
{
    char *text = cli_table_render(t);
    if (!text) {
        f->oom = true;
        return;
    }
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        frame_line(f, p);
        p = nl ? nl + 1 : p + strlen(p);
    }
    free(text);
}

static char *fmt_usd(double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "?");
    else if (v > 0 && v < 0.005)
        snprintf(buf, n, "<$0.01");
    else
        snprintf(buf, n, "$%.2f", v);
    return buf;
}

static void frame_types(frame_t *f, const cli_top_summary_t *s)
{
    static const char *const head[] = {"GPU_TYPE", "TOTAL", "ALLOC",   "IDLE",
                                       "DOWN",     "USED",  "$/GPU-H", "UTILISATION"};
    cli_table_t t;
    if (cli_table_init(&t, 8, head) != DR_OK) {
        f->oom = true;
        return;
    }
    for (size_t c = 1; c < 7; c++)
        cli_table_right(&t, c);
    long long sum[4] = {0, 0, 0, 0};
    for (size_t i = 0; i <= s->ntypes; i++) {
        const cli_top_type_t *ty = i < s->ntypes ? &s->types[i] : NULL;
        if (!ty && s->ntypes < 2)
            break; /* the "all" row only sums several types */
        long long v[4];
        if (ty) {
            v[0] = ty->total, v[1] = ty->allocated, v[2] = ty->idle, v[3] = ty->down;
            for (int k = 0; k < 4; k++)
                sum[k] += v[k];
        } else {
            memcpy(v, sum, sizeof v);
        }
        char c[4][24], pct[16], price[24], bar[BAR_CELLS + 4];
        for (int k = 0; k < 4; k++)
            snprintf(c[k], sizeof c[k], "%lld", v[k]);
        snprintf(pct, sizeof pct, "%.0f%%", v[0] > 0 ? 100.0 * (double)v[1] / (double)v[0] : 0.0);
        if (ty)
            fmt_usd(ty->usd_per_gpu_hour, price, sizeof price);
        else
            snprintf(price, sizeof price, " ");
        cli_top_bar(v[1], v[2], v[3], BAR_CELLS, bar, sizeof bar);
        const char *row[] = {ty ? ty->name : "all", c[0], c[1], c[2], c[3], pct, price, bar};
        if (cli_table_add(&t, row) != DR_OK)
            f->oom = true;
    }
    frame_table(f, &t);
    cli_table_free(&t);
}

static void node_rows(frame_t *f, const json_t *nodes, size_t show, double now)
{
    static const char *const head[] = {"NODE", "GPU_TYPE", "GPUS", "STATE", "HEARTBEAT", "REASON"};
    cli_table_t t;
    if (cli_table_init(&t, 6, head) != DR_OK) {
        f->oom = true;
        return;
    }
    cli_table_right(&t, 2);
    cli_table_right(&t, 4);
    size_t k;
    const json_t *nd;
    json_array_foreach(nodes, k, nd)
    {
        if (k >= show)
            break;
        char gpus[48], age[32];
        snprintf(gpus, sizeof gpus, "%lld/%lld", int_of(nd, "gpus_alloc"), int_of(nd, "gpus"));
        const json_t *ag = json_object_get(nd, "agent");
        double hb = cli_json_num(ag, "last_heartbeat");
        if (isnan(hb))
            snprintf(age, sizeof age, "-");
        else
            cli_fmt_age(now - hb, age, sizeof age);
        const char *type = cli_json_str(nd, "gpu_type", "");
        const char *row[] = {cli_json_str(nd, "name", "?"),
                             *type ? type : "-",
                             gpus,
                             cli_json_str(nd, "state", "?"),
                             age,
                             cli_json_str(nd, "reason", "")};
        if (cli_table_add(&t, row) != DR_OK)
            f->oom = true;
    }
    frame_table(f, &t);
    cli_table_free(&t);
}

/* The queue's rows: running jobs, then pending ones; `show` of them. */
static void job_rows(frame_t *f, const json_t *running, const json_t *pending, size_t show,
                     double now)
{
    static const char *const head[] = {"JOB",   "USER", "KIND", "GPU_TYPE", "NODES",
                                       "STATE", "TIME", "COST", "REASON"};
    cli_table_t t;
    if (cli_table_init(&t, 9, head) != DR_OK) {
        f->oom = true;
        return;
    }
    cli_table_right(&t, 6);
    cli_table_right(&t, 7);
    size_t shown = 0;
    const json_t *lists[2] = {running, pending};
    for (int l = 0; l < 2; l++) {
        size_t k;
        const json_t *j;
        json_array_foreach(lists[l], k, j)
        {
            if (shown >= show)
                break;
            char id[48], tm[32], cost[32], state[48], reason[160];
            cli_job_id(j, id, sizeof id);
            cli_job_time(j, now, tm, sizeof tm);
            fmt_usd(cli_json_num(j, "cost_usd"), cost, sizeof cost);
            const char *type = cli_json_str(j, "gpu_type", "");
            if (!*type)
                type = cli_json_str(j, "gpu_types_requested", "");
            const char *nl = cli_json_str(j, "nodelist", "");
            snprintf(state, sizeof state, "%s%s", cli_json_str(j, "state", "?"),
                     json_is_string(json_object_get(j, "hold")) ? " (held)" : "");
            const json_t *tasks = json_object_get(j, "tasks");
            snprintf(reason, sizeof reason, "%s", cli_json_str(j, "reason", ""));
            if (json_is_object(tasks)) /* an array's progress says more than its reason */
                snprintf(reason, sizeof reason, "%lld/%lld done, %lld running",
                         int_of(tasks, "completed") + int_of(tasks, "failed") +
                             int_of(tasks, "cancelled") + int_of(tasks, "timeout"),
                         int_of(tasks, "total"), int_of(tasks, "running"));
            const char *row[] = {id,
                                 cli_json_str(j, "user", "?"),
                                 cli_json_str(j, "kind", "?"),
                                 *type ? type : "any",
                                 *nl ? nl : "-",
                                 state,
                                 tm,
                                 cost,
                                 reason};
            if (cli_table_add(&t, row) != DR_OK)
                f->oom = true;
            shown++;
        }
    }
    frame_table(f, &t);
    cli_table_free(&t);
}

static size_t arr_len(const json_t *reply, const char *key)
{
    return json_array_size(json_object_get(reply, key));
}

char *cli_top_frame(const cli_top_input_t *in)
{
    frame_t f = {.width = in->width, .height = in->height};
    cli_top_summary_t s;
    if (cli_top_summarise(in->stats, in->nodes, in->running, in->pending, in->cat, &s) != DR_OK) {
        cli_top_summary_free(&s);
        return NULL;
    }
    char when[48];
    cli_fmt_time(in->now, when, sizeof when);
    if (in->ping)
        frame_printf(&f, "drover top - %s  epoch %lld  policy %s  %s", in->controller,
                     int_of(in->ping, "epoch"), cli_json_str(in->ping, "policy", "?"), when);
    else
        frame_printf(&f, "drover top - %s  %s", in->controller, when);
    if (in->note && *in->note)
        frame_printf(&f, "! %s", in->note);
    frame_types(&f, &s);
    char rate[32], run[32], pend[32];
    fmt_usd(s.cost_usd_per_hour, rate, sizeof rate);
    /* a listing cut at its limit: what is counted is a floor */
    bool more_run = !s.from_stats && json_is_true(json_object_get(in->running, "truncated"));
    bool more_pend = !s.from_stats && json_is_true(json_object_get(in->pending, "truncated"));
    snprintf(run, sizeof run, "%lld%s", s.running, more_run ? "+" : "");
    snprintf(pend, sizeof pend, "%lld%s", s.pending, more_pend ? "+" : "");
    char held[48] = "";
    if (s.held)
        snprintf(held, sizeof held, ", %lld%s held", s.held, more_pend ? "+" : "");
    frame_printf(&f, "cost %s/h%s  jobs: %s running, %s pending%s", rate,
                 s.cost_partial ? " (+ GPUs of unknown price)" : "", run, pend, held);
    cli_top_summary_free(&s);

    /* what is left goes to the nodes and the queue: each a blank line and
     * a header, then rows; when both do not fit, the nodes get at most
     * half, and a cut section's last line says how many it left out */
    const json_t *nodes = json_object_get(in->nodes, "nodes");
    const json_t *running = json_object_get(in->running, "jobs");
    const json_t *pending = json_object_get(in->pending, "jobs");
    size_t nn = json_array_size(nodes);
    size_t nj = arr_len(in->running, "jobs") + arr_len(in->pending, "jobs");
    size_t show_n = nn, show_j = nj;
    if (in->height > 0) {
        long avail = (long)in->height - f.lines - 4; /* two blanks, two headers */
        if (avail < 0)
            avail = 0;
        if ((long)(nn + nj) > avail) {
            long half = avail / 2;
            long sn = (long)nn <= half          ? (long)nn
                      : (long)nj < avail - half ? avail - (long)nj
                                                : half;
            show_n = (size_t)sn;
            show_j = (size_t)(avail - sn) < nj ? (size_t)(avail - sn) : nj;
        }
        /* room for the "... more" line in a cut section */
        if (show_n < nn && show_n > 0)
            show_n--;
        if (show_j < nj && show_j > 0)
            show_j--;
    }
    frame_line(&f, "");
    node_rows(&f, nodes, show_n, in->now);
    if (show_n < nn)
        frame_printf(&f, "... %zu more node%s", nn - show_n, nn - show_n == 1 ? "" : "s");
    frame_line(&f, "");
    job_rows(&f, running, pending, show_j, in->now);
    if (show_j < nj)
        frame_printf(&f, "... %zu more job%s", nj - show_j, nj - show_j == 1 ? "" : "s");
    else if (nj == 0)
        frame_line(&f, "(no jobs running or pending)");
    if (f.oom) {
        free(f.s);
        return NULL;
    }
    if (!f.s)
        return calloc(1, 1);
    return f.s;
}
