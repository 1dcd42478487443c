/* report_svg.c - dependency-free SVG 1.1 line charts of reports: GPU
 * utilisation and pending jobs over time, and the CDF of job completion
 * times.  All three are drawn by one generic line-chart routine
 * (dr_report_svg_chart); the public functions only turn reports into lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/report.h"
#include "sim/report_priv.h"

#define SVG_W      960
#define SVG_H      540
#define PLOT_L     80.0
#define PLOT_R     720.0
#define PLOT_T     50.0
#define PLOT_B     470.0
#define LEGEND_X   740.0
#define CDF_POINTS 500

typedef struct dr_chart_line {
    const char *name;
    double *x, *y; /* owned */
    size_t n;
} dr_chart_line_t;

typedef struct dr_chart {
    const char *title, *xlabel, *ylabel;
    bool xlog;         /* log10 x axis (x must be > 0; smaller values sit on the axis) */
    bool step;         /* draw as a step function: y[i] holds until x[i+1] */
    double ymin, ymax; /* fixed y range, or auto (0 .. nice max) when ymax <= ymin */
} dr_chart_t;

static const char *const dr_svg_colours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                             "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
#define NCOLOURS (sizeof dr_svg_colours / sizeof dr_svg_colours[0])

/* Append s escaped for XML text and attribute values.  Control characters
 * that XML 1.0 does not allow are dropped. */
static void dr_svg_escape(dr_report_buf_t *b, const char *s)
{
    char one[2] = {0, 0};
    for (; *s; s++) {
        switch (*s) {
        case '&': dr_report_buf_puts(b, "&amp;"); break;
        case '<': dr_report_buf_puts(b, "&lt;"); break;
        case '>': dr_report_buf_puts(b, "&gt;"); break;
        case '"': dr_report_buf_puts(b, "&quot;"); break;
        case '\'': dr_report_buf_puts(b, "&apos;"); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r')
                break;
            one[0] = *s;
            dr_report_buf_puts(b, one);
        }
    }
}

/* A "nice" tick step (1, 2 or 5 x 10^k) giving about `want` intervals. */
static double dr_svg_nice_step(double range, int want)
{
    if (!(range > 0) || !isfinite(range))
        return 1;
    double raw = range / want;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/* Label for a tick value on a linear axis with the given step. */
static void dr_svg_tick_label(char *out, size_t cap, double v, double step)
{
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (dec > 6)
        dec = 6;
    if (fabs(v) < step * 1e-9)
        v = 0;
    snprintf(out, cap, "%.*f", dec, v);
}

typedef struct dr_svg_axis {
    bool log;
    double lo, hi; /* in data units (log10 of them for a log axis) */
} dr_svg_axis_t;

static double dr_svg_map(const dr_svg_axis_t *a, double v, double p0, double p1)
{
    if (a->log)
        v = v > 0 ? log10(v) : a->lo;
    double f = (v - a->lo) / (a->hi - a->lo);
    if (f < 0)
        f = 0;
    if (f > 1)
        f = 1;
    return p0 + f * (p1 - p0);
}

static void dr_svg_range(const dr_chart_line_t *lines, size_t n, bool x, double *mn, double *mx,
                         bool positive_only)
{
    *mn = INFINITY;
    *mx = -INFINITY;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < lines[i].n; k++) {
            double v = x ? lines[i].x[k] : lines[i].y[k];
            if (!isfinite(v) || (positive_only && v <= 0))
                continue;
            if (v < *mn)
                *mn = v;
            if (v > *mx)
                *mx = v;
        }
}

/* Ticks of a linear axis from 0 (or a fixed minimum) to a nice maximum. */
static void dr_svg_linear_axis(dr_svg_axis_t *a, double dmin, double dmax, bool fixed, double *step)
{
    a->log = false;
    if (fixed) {
        a->lo = dmin;
        a->hi = dmax;
        *step = dr_svg_nice_step(a->hi - a->lo, 5);
        return;
    }
    a->lo = 0;
    double top = isfinite(dmax) && dmax > 0 ? dmax : 1;
    *step = dr_svg_nice_step(top, 5);
    a->hi = ceil(top / *step - 1e-9) * *step;
    if (a->hi <= a->lo)
        a->hi = a->lo + *step;
}

/* Grid lines and labelled ticks of one axis, every `step` from lo to hi
 * (in decades for a log axis). */
static void dr_svg_ticks(dr_report_buf_t *b, const dr_svg_axis_t *a, double step, bool xaxis)
{
    char lab[64];
    int nticks = (int)floor((a->hi - a->lo) / step + 1e-9) + 1;
    if (nticks > 100)
        nticks = 100;
    for (int k = 0; k < nticks; k++) {
        double v = a->lo + k * step;
        double f = (v - a->lo) / (a->hi - a->lo);
        if (a->log)
            snprintf(lab, sizeof lab, "%g", pow(10, v));
        else
            dr_svg_tick_label(lab, sizeof lab, v, step);
        if (xaxis) {
            double px = PLOT_L + f * (PLOT_R - PLOT_L);
            dr_report_buf_printf(b,
                                 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                 "stroke=\"#dddddd\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
                                 "text-anchor=\"middle\" fill=\"#333333\">%s</text>\n",
                                 px, PLOT_T, px, PLOT_B, px, PLOT_B + 18, lab);
        } else {
            double py = PLOT_B - f * (PLOT_B - PLOT_T);
            dr_report_buf_printf(b,
                                 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                 "stroke=\"#dddddd\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
                                 "text-anchor=\"end\" fill=\"#333333\">%s</text>\n",
                                 PLOT_L, py, PLOT_R, py, PLOT_L - 6, py + 4, lab);
        }
    }
}

/* The generic chart: title, axes with ticks and labels, one coloured line per
 * entry, a legend.  Returns a malloc'd standalone SVG document or NULL. */
static char *dr_report_svg_chart(const dr_chart_t *ch, const dr_chart_line_t *lines, size_t n)
{
    dr_report_buf_t b = {0};
    dr_svg_axis_t ax, ay;
    double xstep = 1, ystep = 1, mn, mx;
    bool any = false;
    for (size_t i = 0; i < n; i++)
        any |= lines[i].n > 0;

    if (ch->xlog) {
        dr_svg_range(lines, n, true, &mn, &mx, true);
        ax.log = true;
        ax.lo = isfinite(mn) ? floor(log10(mn)) : -2;
        ax.hi = isfinite(mx) ? ceil(log10(mx)) : 2;
        if (ax.hi <= ax.lo)
            ax.hi = ax.lo + 1;
        xstep = ceil((ax.hi - ax.lo) / 8); /* decades per tick */
    } else {
        dr_svg_range(lines, n, true, &mn, &mx, false);
        dr_svg_linear_axis(&ax, 0, mx, false, &xstep);
    }
    dr_svg_range(lines, n, false, &mn, &mx, false);
    dr_svg_linear_axis(&ay, ch->ymin, ch->ymax > ch->ymin ? ch->ymax : mx, ch->ymax > ch->ymin,
                       &ystep);

    dr_report_buf_printf(&b,
                         "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
                         "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
                         "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
                         "font-size=\"12\">\n<title>",
                         SVG_W, SVG_H, SVG_W, SVG_H);
    dr_svg_escape(&b, ch->title);
    dr_report_buf_printf(&b,
                         "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
                         "fill=\"#ffffff\"/>\n<text x=\"%.1f\" y=\"28\" text-anchor=\"middle\" "
                         "font-size=\"16\" font-weight=\"bold\">",
                         SVG_W, SVG_H, (PLOT_L + PLOT_R) / 2);
    dr_svg_escape(&b, ch->title);
    dr_report_buf_puts(&b, "</text>\n");

    /* Grid and tick labels. */
    dr_svg_ticks(&b, &ax, xstep, true);
    dr_svg_ticks(&b, &ay, ystep, false);

    /* Axes and their labels. */
    dr_report_buf_printf(&b,
                         "<path d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" stroke=\"#333333\" "
                         "stroke-width=\"1\"/>\n",
                         PLOT_L, PLOT_T, PLOT_B, PLOT_R);
    dr_report_buf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                         (PLOT_L + PLOT_R) / 2, PLOT_B + 42);
    dr_svg_escape(&b, ch->xlabel);
    dr_report_buf_printf(&b,
                         "</text>\n<text x=\"20\" y=\"%.1f\" text-anchor=\"middle\" "
                         "transform=\"rotate(-90 20 %.1f)\">",
                         (PLOT_T + PLOT_B) / 2, (PLOT_T + PLOT_B) / 2);
    dr_svg_escape(&b, ch->ylabel);
    dr_report_buf_puts(&b, "</text>\n");
    if (!any)
        dr_report_buf_printf(&b,
                             "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                             "fill=\"#888888\">no data</text>\n",
                             (PLOT_L + PLOT_R) / 2, (PLOT_T + PLOT_B) / 2);

    /* Lines and legend. */
    for (size_t i = 0; i < n; i++) {
        const dr_chart_line_t *l = &lines[i];
        const char *colour = dr_svg_colours[i % NCOLOURS];
        const char *dash = i / NCOLOURS % 2 ? " stroke-dasharray=\"6 3\"" : "";
        if (l->n > 0) {
            dr_report_buf_printf(&b,
                                 "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s "
                                 "points=\"",
                                 colour, dash);
            double prev_py = 0;
            bool first = true;
            for (size_t k = 0; k < l->n; k++) {
                if (!isfinite(l->x[k]) || !isfinite(l->y[k]))
                    continue;
                double px = dr_svg_map(&ax, l->x[k], PLOT_L, PLOT_R);
                double py = dr_svg_map(&ay, l->y[k], PLOT_B, PLOT_T);
                if (ch->step && !first)
                    dr_report_buf_printf(&b, " %.1f,%.1f", px, prev_py);
                dr_report_buf_printf(&b, "%s%.1f,%.1f", first ? "" : " ", px, py);
                prev_py = py;
                first = false;
            }
            dr_report_buf_puts(&b, "\"/>\n");
        }
        double ly = PLOT_T + 10 + 20.0 * (double)i;
        dr_report_buf_printf(&b,
                             "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                             "stroke=\"%s\" stroke-width=\"3\"%s/>\n<text x=\"%.1f\" y=\"%.1f\">",
                             LEGEND_X, ly, LEGEND_X + 24, ly, colour, dash, LEGEND_X + 30, ly + 4);
        dr_svg_escape(&b, l->name);
        dr_report_buf_puts(&b, "</text>\n");
    }
    dr_report_buf_puts(&b, "</svg>\n");
    return dr_report_buf_take(&b);
}

static void dr_svg_lines_free(dr_chart_line_t *lines, size_t n)
{
    for (size_t i = 0; lines && i < n; i++) {
        free(lines[i].x);
        free(lines[i].y);
    }
    free(lines);
}

/* Lines for a time series of each report: x in hours or days since the
 * earliest point of any report, y = v * yscale. */
static char *dr_svg_series_chart(const dr_report_t *r, size_t n, size_t which, double yscale,
                                 const char *title, const char *ylabel, double ymin, double ymax)
{
    dr_chart_line_t *lines = calloc(n ? n : 1, sizeof *lines);
    if (!lines)
        return NULL;
    double origin = INFINITY, end = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const dr_series_t *s = which ? &r[i].queue_series : &r[i].util_series;
        if (s->n) {
            origin = fmin(origin, s->t[0]);
            end = fmax(end, s->t[s->n - 1]);
        }
    }
    double span = isfinite(origin) ? end - origin : 0;
    bool days = span > 3 * 86400.0;
    double unit = days ? 86400.0 : 3600.0;
    for (size_t i = 0; i < n; i++) {
        const dr_series_t *s = which ? &r[i].queue_series : &r[i].util_series;
        lines[i].name = r[i].policy;
        if (!s->n)
            continue;
        lines[i].x = malloc(s->n * sizeof *lines[i].x);
        lines[i].y = malloc(s->n * sizeof *lines[i].y);
        if (!lines[i].x || !lines[i].y) {
            dr_svg_lines_free(lines, n);
            return NULL;
        }
        for (size_t k = 0; k < s->n; k++) {
            lines[i].x[k] = (s->t[k] - origin) / unit;
            lines[i].y[k] = s->v[k] * yscale;
        }
        lines[i].n = s->n;
    }
    dr_chart_t ch = {.title = title,
                     .xlabel = days ? "time since first submit (days)"
                                    : "time since first submit (hours)",
                     .ylabel = ylabel,
                     .step = true,
                     .ymin = ymin,
                     .ymax = ymax};
    char *svg = dr_report_svg_chart(&ch, lines, n);
    dr_svg_lines_free(lines, n);
    return svg;
}

char *dr_report_svg_util(const dr_report_t *r, size_t n)
{
    return dr_svg_series_chart(r, n, 0, 100.0, "GPU utilisation", "GPUs busy (%)", 0, 100);
}

char *dr_report_svg_queue(const dr_report_t *r, size_t n)
{
    return dr_svg_series_chart(r, n, 1, 1.0, "Pending jobs", "pending jobs", 0, 0);
}

char *dr_report_svg_jct_cdf(const dr_report_t *r, size_t n)
{
    dr_chart_line_t *lines = calloc(n ? n : 1, sizeof *lines);
    if (!lines)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t m = r[i].njct, np = m < CDF_POINTS ? m : CDF_POINTS;
        lines[i].name = r[i].policy;
        if (!np)
            continue;
        lines[i].x = malloc(np * sizeof *lines[i].x);
        lines[i].y = malloc(np * sizeof *lines[i].y);
        if (!lines[i].x || !lines[i].y) {
            dr_svg_lines_free(lines, n);
            return NULL;
        }
        for (size_t k = 0; k < np; k++) {
            /* Evenly spaced ranks, always including the first and the last. */
            size_t idx =
                np == m ? k : (size_t)((double)k * (double)(m - 1) / (double)(np - 1) + 0.5);
            lines[i].x[k] = r[i].jct_sorted[idx] / 3600.0;
            lines[i].y[k] = 100.0 * (double)(idx + 1) / (double)m;
        }
        lines[i].n = np;
    }
    dr_chart_t ch = {.title = "Job completion time CDF",
                     .xlabel = "job completion time (hours, log scale)",
                     .ylabel = "completed jobs (%)",
                     .xlog = true,
                     .ymin = 0,
                     .ymax = 100};
    char *svg = dr_report_svg_chart(&ch, lines, n);
    dr_svg_lines_free(lines, n);
    return svg;
}
