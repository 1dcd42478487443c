/* svg_plot.c - stacked-bar and line charts over time buckets as standalone
 * SVG (see svg_plot.h).  One routine lays out every panel; names and
 * labels are XML-escaped (and stripped of characters XML 1.0 forbids) so
 * that an account called `<a&b>` cannot break the document. */
#include "cli/svg_plot.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W           960.0
#define PLOT_L      80.0
#define PLOT_R      760.0
#define LEGEND_X    785.0
#define TOP         70.0  /* above the first panel: title, subtitle */
#define PANEL_H     240.0 /* a panel's plot area */
#define PANEL_GAP   75.0  /* between panels: the x labels and the next title */
#define MAX_XLABELS 8
#define MAX_BAR_W   60.0

static const char *const colours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
#define NCOLOURS (sizeof colours / sizeof colours[0])

typedef struct buf {
    char *s;
    size_t len, cap;
    bool oom;
} buf_t;

static void put(buf_t *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 16384;
        while (nc < b->len + n + 1)
            nc *= 2;
        char *p = realloc(b->s, nc);
        if (!p) {
            b->oom = true;
            return;
        }
        b->s = p;
        b->cap = nc;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void puts_(buf_t *b, const char *s)
{
    put(b, s, strlen(s));
}

static void pf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pf(buf_t *b, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* s escaped for XML text and attribute values; control characters XML 1.0
 * does not allow are dropped. */
static void esc(buf_t *b, const char *s)
{
    if (!s)
        return;
    for (; *s; s++) {
        switch (*s) {
        case '&': puts_(b, "&amp;"); break;
        case '<': puts_(b, "&lt;"); break;
        case '>': puts_(b, "&gt;"); break;
        case '"': puts_(b, "&quot;"); break;
        case '\'': puts_(b, "&apos;"); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\t')
                break;
            put(b, s, 1);
        }
    }
}

double cli_plot_nice_step(double max, int want)
{
    if (!(max > 0) || !isfinite(max) || want < 1)
        return 1;
    double raw = max / want;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static void tick_label(char *out, size_t cap, double v, double step)
{
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (dec > 6)
        dec = 6;
    if (fabs(v) < step * 1e-9)
        v = 0;
    snprintf(out, cap, "%.*f", dec, v);
}

static double val(const cli_plot_panel_t *pn, size_t nx, size_t s, size_t x)
{
    double v = pn->v[s * nx + x];
    return isfinite(v) && v > 0 ? v : 0;
}

static void panel(buf_t *b, const cli_plot_t *p, const cli_plot_panel_t *pn, double top)
{
    double bottom = top + PANEL_H, plotw = PLOT_R - PLOT_L;
    /* the y range: the tallest stack (bars) or the largest value (lines) */
    double max = 0;
    for (size_t x = 0; x < p->nx; x++) {
        double stack = 0;
        for (size_t s = 0; s < p->nseries; s++) {
            double v = val(pn, p->nx, s, x);
            stack += v;
            if (p->lines && v > max)
                max = v;
        }
        if (!p->lines && stack > max)
            max = stack;
    }
    double step = cli_plot_nice_step(max, 5);
    double ymax = max > 0 ? ceil(max / step - 1e-9) * step : step;
#define Y(v) (bottom - (v) / ymax * PANEL_H)
    puts_(b, "<g class=\"panel\" data-title=\"");
    esc(b, pn->title);
    pf(b, "\" data-ymax=\"%.9g\">\n", ymax);
    pf(b,
       "<text class=\"panel-title\" x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\">",
       PLOT_L, top - 10);
    esc(b, pn->title);
    puts_(b, "</text>\n");
    /* y grid and ticks */
    for (int k = 0; k * step <= ymax * (1 + 1e-9); k++) {
        double v = k * step, y = Y(v);
        char lab[64];
        tick_label(lab, sizeof lab, v, step);
        pf(b,
           "<g class=\"ytick\"><line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" "
           "stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%.2f\" text-anchor=\"end\">%s</text></g>\n",
           PLOT_L, y, PLOT_R, y, PLOT_L - 6, y + 4, lab);
    }
    /* the data */
    double bw = p->nx ? plotw / (double)p->nx : plotw;
    double barw = bw * 0.8 < MAX_BAR_W ? bw * 0.8 : MAX_BAR_W; /* one day is no wall */
    if (!p->lines) {
        double *base = calloc(p->nx ? p->nx : 1, sizeof *base);
        if (!base) {
            b->oom = true;
            return;
        }
        for (size_t s = 0; s < p->nseries; s++) {
            for (size_t x = 0; x < p->nx; x++) {
                double v = val(pn, p->nx, s, x);
                if (v <= 0)
                    continue;
                double y0 = Y(base[x]), y1 = Y(base[x] + v);
                base[x] += v;
                puts_(b, "<rect class=\"bar\" data-series=\"");
                esc(b, p->series[s]);
                puts_(b, "\" data-x=\"");
                esc(b, p->xlabels[x]);
                pf(b,
                   "\" data-value=\"%.9g\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                   "fill=\"%s\"><title>",
                   v, PLOT_L + bw * ((double)x + 0.5) - barw / 2, y1, barw, y0 - y1,
                   colours[s % NCOLOURS]);
                esc(b, p->series[s]);
                puts_(b, ", ");
                esc(b, p->xlabels[x]);
                pf(b, ": %.4g ", v);
                esc(b, pn->unit);
                puts_(b, "</title></rect>\n");
            }
        }
        free(base);
    } else {
        for (size_t s = 0; s < p->nseries; s++) {
            puts_(b, "<polyline class=\"line\" data-series=\"");
            esc(b, p->series[s]);
            pf(b, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
               colours[s % NCOLOURS]);
            for (size_t x = 0; x < p->nx; x++)
                pf(b, "%s%.2f,%.2f", x ? " " : "", PLOT_L + bw * ((double)x + 0.5),
                   Y(val(pn, p->nx, s, x)));
            puts_(b, "\"/>\n");
            for (size_t x = 0; x < p->nx; x++) {
                double v = val(pn, p->nx, s, x);
                puts_(b, "<circle class=\"point\" data-series=\"");
                esc(b, p->series[s]);
                puts_(b, "\" data-x=\"");
                esc(b, p->xlabels[x]);
                pf(b, "\" data-value=\"%.9g\" cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"><title>",
                   v, PLOT_L + bw * ((double)x + 0.5), Y(v), colours[s % NCOLOURS]);
                esc(b, p->series[s]);
                puts_(b, ", ");
                esc(b, p->xlabels[x]);
                pf(b, ": %.4g ", v);
                esc(b, pn->unit);
                puts_(b, "</title></circle>\n");
            }
        }
    }
    /* axes, then the x labels: at most MAX_XLABELS, evenly spaced */
    pf(b,
       "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n"
       "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
       PLOT_L, top, PLOT_L, bottom, PLOT_L, bottom, PLOT_R, bottom);
    size_t every = (p->nx + MAX_XLABELS - 1) / MAX_XLABELS;
    if (every < 1)
        every = 1;
    for (size_t x = 0; x < p->nx; x += every) {
        double cx = PLOT_L + bw * ((double)x + 0.5);
        pf(b,
           "<g class=\"xtick\"><line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
           "stroke=\"#333\"/><text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">",
           cx, bottom, cx, bottom + 5, cx, bottom + 18);
        esc(b, p->xlabels[x]);
        puts_(b, "</text></g>\n");
    }
    if (p->nx == 0)
        pf(b,
           "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#666\">no "
           "finished jobs in this window</text>\n",
           (PLOT_L + PLOT_R) / 2, top + PANEL_H / 2);
    puts_(b, "</g>\n");
#undef Y
}

char *cli_svg_plot(const cli_plot_t *p)
{
    buf_t b = {0};
    double h = TOP + (double)p->npanels * (PANEL_H + PANEL_GAP) + 10;
    double lh = 30 + 18.0 * (double)p->nseries; /* the legend may be taller */
    if (TOP + lh > h)
        h = TOP + lh;
    pf(&b,
       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
       "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
       "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
       W, h, W, h);
    puts_(&b, "<title>");
    esc(&b, p->title);
    puts_(&b, "</title>\n");
    pf(&b, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n", W, h);
    pf(&b, "<text class=\"title\" x=\"%.1f\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">",
       W / 2);
    esc(&b, p->title);
    puts_(&b, "</text>\n");
    if (p->subtitle) {
        pf(&b, "<text class=\"subtitle\" x=\"%.1f\" y=\"42\" text-anchor=\"middle\" fill=\"#555\">",
           W / 2);
        esc(&b, p->subtitle);
        puts_(&b, "</text>\n");
    }
    for (size_t i = 0; i < p->npanels; i++)
        panel(&b, p, &p->panels[i], TOP + 20 + (double)i * (PANEL_H + PANEL_GAP));
    /* the legend: one swatch per series, in the stacking order (bottom first) */
    pf(&b, "<g class=\"legend\">\n<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">", LEGEND_X,
       TOP + 20);
    esc(&b, p->legend);
    puts_(&b, "</text>\n");
    for (size_t s = 0; s < p->nseries; s++) {
        double y = TOP + 32 + 18.0 * (double)s;
        pf(&b,
           "<g class=\"legend-entry\"><rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" "
           "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">",
           LEGEND_X, y, colours[s % NCOLOURS], LEGEND_X + 18, y + 10);
        esc(&b, p->series[s]);
        puts_(&b, "</text></g>\n");
    }
    puts_(&b, "</g>\n</svg>\n");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
