/* prom.c - the Prometheus text exposition format (version 0.0.4): a
 * metric family's HELP and TYPE lines, one sample with escaped labels, and
 * a histogram with fixed buckets.  No clocks and no sockets: it writes into
 * an evbuffer, so a unit test renders it and checks the text
 * (tests/unit/test_prom.c); metrics.c says what is measured. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "ctld/ctld.h"
#include "ctld/prom.h"

void ctld_hist_init(ctld_hist_t *h, const double *le, uint32_t nle)
{
    memset(h, 0, sizeof *h);
    h->le = le;
    h->nle = nle < CTLD_HIST_MAX ? nle : CTLD_HIST_MAX;
}

void ctld_hist_observe(ctld_hist_t *h, double v)
{
    if (isnan(v))
        return;
    uint32_t i = 0;
    while (i < h->nle && v > h->le[i]) /* le: "less than or equal" */
        i++;
    h->bucket[i]++;
    h->count++;
    h->sum += v;
}

/* v as the format writes it (Go's float parsing reads it back): integers
 * without a fraction, NaN, +Inf, -Inf; returns its length. */
static size_t fmt_value(char *s, size_t n, double v)
{
    int len;
    if (isnan(v))
        len = snprintf(s, n, "NaN");
    else if (isinf(v))
        len = snprintf(s, n, "%sInf", v > 0 ? "+" : "-");
    else if (v == floor(v) && fabs(v) < 1e15)
        len = snprintf(s, n, "%.0f", v);
    else
        len = snprintf(s, n, "%.15g", v);
    return len > 0 && (size_t)len < n ? (size_t)len : 0;
}

void ctld_prom_value(struct evbuffer *b, double v)
{
    char s[40];
    evbuffer_add(b, s, fmt_value(s, sizeof s, v));
}

void ctld_prom_family(struct evbuffer *b, const char *name, const char *type, const char *help)
{
    /* HELP text: backslash and line feed escaped */
    evbuffer_add_printf(b, "# HELP %s ", name);
    for (const char *p = help; *p; p++) {
        if (*p == '\\')
            evbuffer_add(b, "\\\\", 2);
        else if (*p == '\n')
            evbuffer_add(b, "\\n", 2);
        else
            evbuffer_add(b, p, 1);
    }
    evbuffer_add_printf(b, "\n# TYPE %s %s\n", name, type);
}

/* Append s to line[*n] (room: cap), escaping a label value's backslash,
 * double quote and line feed when esc; false when it does not fit. */
static bool put(char *line, size_t *n, size_t cap, const char *s, bool esc)
{
    for (const char *p = s; *p; p++) {
        bool x = esc && (*p == '\\' || *p == '"' || *p == '\n');
        if (*n + 2 >= cap)
            return false;
        if (x)
            line[(*n)++] = '\\';
        line[(*n)++] = x && *p == '\n' ? 'n' : *p;
    }
    return true;
}

/* name{k1="v1",...} value: nlabels pairs of (key, value) strings follow.
 * A scrape of a big cluster is tens of thousands of these: each line is
 * built on the stack and added to the buffer once. */
void ctld_prom_sample(struct evbuffer *b, const char *name, double v, int nlabels, ...)
{
    char line[2048];
    size_t n = 0;
    bool fits = put(line, &n, sizeof line, name, false);
    va_list ap;
    va_start(ap, nlabels);
    for (int i = 0; i < nlabels && fits; i++) {
        const char *k = va_arg(ap, const char *);
        const char *lv = va_arg(ap, const char *);
        fits = put(line, &n, sizeof line, i ? "," : "{", false) &&
               put(line, &n, sizeof line, k, false) && put(line, &n, sizeof line, "=\"", false) &&
               put(line, &n, sizeof line, lv ? lv : "", true) &&
               put(line, &n, sizeof line, "\"", false);
    }
    va_end(ap);
    if (fits && nlabels)
        fits = put(line, &n, sizeof line, "}", false);
    if (!fits || n + 42 > sizeof line)
        return; /* a label over 2 KB: a config's name never is; the sample is left out */
    line[n++] = ' ';
    n += fmt_value(line + n, 40, v);
    line[n++] = '\n';
    evbuffer_add(b, line, n);
}

void ctld_prom_hist(struct evbuffer *b, const char *name, const ctld_hist_t *h)
{
    uint64_t cum = 0;
    char le[32];
    for (uint32_t i = 0; i <= h->nle; i++) {
        cum += h->bucket[i];
        if (i < h->nle)
            snprintf(le, sizeof le, "%.15g", h->le[i]);
        else
            snprintf(le, sizeof le, "+Inf");
        evbuffer_add_printf(b, "%s_bucket{le=\"%s\"} %llu\n", name, le, (unsigned long long)cum);
    }
    evbuffer_add_printf(b, "%s_sum ", name);
    ctld_prom_value(b, h->sum);
    evbuffer_add_printf(b, "\n%s_count %llu\n", name, (unsigned long long)h->count);
}
