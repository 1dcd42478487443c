/* text.c - blanks trimmed from a value, a CSV file read as a table (the GPU
 * catalog, openb's node list and its pod lists share the loop), and
 * durations written for people (the planner's prose and tables, and the
 * job tables' Slurm-style elapsed times).  One implementation of each. */
#include "drover/text.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "drover/time.h"

const char *dr_trim_span(const char *s, size_t *n)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t len = strlen(s);
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    *n = len;
    return s;
}

char *dr_trim(char *s)
{
    size_t n;
    char *b = s + (dr_trim_span(s, &n) - s);
    b[n] = '\0';
    return b;
}

void dr_csv_open(dr_csv_t *c, const char *buf, size_t len)
{
    if (buf && len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) { /* a UTF-8 byte order mark */
        buf += 3;
        len -= 3;
    }
    dr_csv_init(c, buf, len, ',');
}

static int csv_next(dr_csv_t *c, const char *name, dr_err_t *err)
{
    int nf = dr_csv_next(c);
    if (nf < 0)
        return nf == DR_ENOMEM ? dr_err_set(err, nf, "%s: out of memory", name)
                               : dr_err_set(err, nf, "%s:%zu: unterminated quote", name, c->line);
    return nf;
}

int dr_csv_header(dr_csv_t *c, const char *name, dr_err_t *err)
{
    int nf = csv_next(c, name, err);
    if (nf == 0)
        return dr_err_set(err, DR_EINVAL, "%s: empty file (no header)", name);
    return nf;
}

int dr_csv_row(dr_csv_t *c, const char *name, size_t ncols, dr_err_t *err)
{
    for (;;) {
        int nf = csv_next(c, name, err);
        if (nf <= 0)
            return nf;
        if (c->nfields == 1 && dr_is_blank(c->fields[0]))
            continue; /* a line of blanks */
        if (ncols && c->nfields != ncols)
            return dr_err_set(err, DR_EINVAL, "%s:%zu: row has %zu fields, the header has %zu",
                              name, c->line, c->nfields, ncols);
        return nf;
    }
}

/* The human scale: the largest unit that keeps the number readable. */
static const struct {
    double below, unit;
    const char *word, *abbr;
} scale[] = {
    {1, 1e-3, "ms", "ms"},
    {120, 1, "s", "s"},
    {7200, 60, "min", "min"},
    {3 * 86400, 3600, "h", "h"},
    {90 * 86400, 86400, "days", "d"},
    {3 * 365.25 * 86400, 30.4375 * 86400, "months", "mo"},
    {INFINITY, 365.25 * 86400, "years", "y"},
};

char *dr_duration_format(double s, dr_duration_style_t style, char *buf, size_t n)
{
    if (isnan(s)) {
        snprintf(buf, n, "-");
        return buf;
    }
    if (style == DR_DURATION_CLOCK) {
        if (s < 0)
            s = 0;
        if (s > 9.2e15)
            s = 9.2e15;
        long long t = (long long)s;
        long long sec = t % 60, m = (t / 60) % 60, h = (t / 3600) % 24, d = t / 86400;
        if (d)
            snprintf(buf, n, "%lld-%02lld:%02lld:%02lld", d, h, m, sec);
        else if (h)
            snprintf(buf, n, "%lld:%02lld:%02lld", h, m, sec);
        else
            snprintf(buf, n, "%lld:%02lld", m, sec);
        return buf;
    }
    if (isinf(s)) {
        snprintf(buf, n, "never");
        return buf;
    }
    size_t i = 0;
    while (s >= scale[i].below)
        i++;
    snprintf(buf, n, i == 0 ? "%.0f %s" : "%.1f %s", s / scale[i].unit,
             style == DR_DURATION_WORDS ? scale[i].word : scale[i].abbr);
    return buf;
}
