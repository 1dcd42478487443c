/* svg.c - the plan's chart (drover plan --plot): cost versus wall time,
 * log-log, one line per GPU type, as an SVG document built in memory. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/plan.h"

/* ---- SVG: cost vs wall time, log-log, one line per GPU type ---- */

typedef struct sbuf {
    char *s;
    size_t n, cap;
    bool bad;
} sbuf_t;

static void sb_printf(sbuf_t *b, const char *fmt, ...) DR_PRINTF(2, 3);
static void sb_printf(sbuf_t *b, const char *fmt, ...)
{
    if (b->bad)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->bad = true;
            return;
        }
        if (b->s && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t nc = (b->cap ? b->cap * 2 : 4096) + (size_t)k;
        char *ns = realloc(b->s, nc);
        if (!ns) {
            b->bad = true;
            return;
        }
        b->s = ns;
        b->cap = nc;
    }
}

static void sb_text(sbuf_t *b, const char *t)
{
    for (; *t; t++) {
        switch (*t) {
        case '<': sb_printf(b, "&lt;"); break;
        case '>': sb_printf(b, "&gt;"); break;
        case '&': sb_printf(b, "&amp;"); break;
        case '"': sb_printf(b, "&quot;"); break;
        default:
            if ((unsigned char)*t >= 0x20 || *t == '\t')
                sb_printf(b, "%c", *t);
        }
    }
}

static const char *const colours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

char *dr_plan_svg(const dr_plan_req_t *req, const dr_plan_result_t *res)
{
    const double W = 960, H = 560, L = 90, R = 700, T = 50, B = 480;
    double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
    bool serve = res->kind == DR_PLAN_SERVE;
    for (size_t i = 0; i < res->n; i++)
        for (size_t k = 0; k < res->opts[i].ncurve; k++) {
            const dr_plan_point_t *p = &res->opts[i].curve[k];
            if (!(p->wall_s > 0) || !(p->cost_usd > 0))
                continue;
            xmin = fmin(xmin, p->wall_s);
            xmax = fmax(xmax, p->wall_s);
            ymin = fmin(ymin, p->cost_usd);
            ymax = fmax(ymax, p->cost_usd);
        }
    sbuf_t b = {0};
    sb_printf(&b,
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
              "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
              "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
              "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
              W, H, W, H);
    sb_printf(&b, "<text x=\"%.0f\" y=\"28\" font-size=\"16\">", L);
    sb_text(&b, serve ? "Serving: cost per hour vs request latency, per GPU type — "
                      : "Cost vs wall time per GPU type — ");
    sb_text(&b, res->arch.name[0] ? res->arch.name : "batch array");
    sb_printf(&b, "</text>\n");
    if (!(xmax > 0) || !(ymax > 0)) {
        sb_printf(&b, "<text x=\"%.0f\" y=\"%.0f\">no option with a known price to plot</text>\n",
                  L, (T + B) / 2);
        sb_printf(&b, "</svg>\n");
        return b.bad ? (free(b.s), NULL) : b.s;
    }
    /* decade-aligned log axes; time in the unit that suits the range */
    double unit = xmin >= 86400 ? 86400 : xmin >= 3600 ? 3600 : 1;
    const char *uname = unit == 86400 ? "d" : unit == 3600 ? "h" : "s";
    double lx0 = floor(log10(xmin / unit)), lx1 = ceil(log10(xmax / unit));
    double ly0 = floor(log10(ymin)), ly1 = ceil(log10(ymax));
    if (lx1 <= lx0)
        lx1 = lx0 + 1;
    if (ly1 <= ly0)
        ly1 = ly0 + 1;
#define PX(v) (L + (log10((v) / unit) - lx0) / (lx1 - lx0) * (R - L))
#define PY(v) (B - (log10(v) - ly0) / (ly1 - ly0) * (B - T))
    sb_printf(&b,
              "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
              "stroke=\"#333\"/>\n",
              L, T, R - L, B - T);
    for (int i = 0; i <= (int)(lx1 - lx0); i++) {
        double e = lx0 + i;
        double x = L + (e - lx0) / (lx1 - lx0) * (R - L);
        sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>\n",
                  x, T, x, B);
        sb_printf(&b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%g %s</text>\n", x,
                  B + 16, pow(10, e), uname);
    }
    for (int i = 0; i <= (int)(ly1 - ly0); i++) {
        double e = ly0 + i;
        double y = B - (e - ly0) / (ly1 - ly0) * (B - T), v = pow(10, e);
        sb_printf(&b, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                  L, y, R, y);
        if (v >= 1e9)
            sb_printf(&b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">$%gB</text>\n", L - 6,
                      y + 4, v / 1e9);
        else if (v >= 1e6)
            sb_printf(&b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">$%gM</text>\n", L - 6,
                      y + 4, v / 1e6);
        else if (v >= 1e3)
            sb_printf(&b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">$%gk</text>\n", L - 6,
                      y + 4, v / 1e3);
        else
            sb_printf(&b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">$%g</text>\n", L - 6,
                      y + 4, v);
    }
    sb_printf(&b, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n", (L + R) / 2,
              B + 40, serve ? "request latency (log)" : "wall time (log)");
    sb_printf(&b,
              "<text x=\"20\" y=\"%.0f\" text-anchor=\"middle\" transform=\"rotate(-90 20 %.0f)\">"
              "%s</text>\n",
              (T + B) / 2, (T + B) / 2, serve ? "USD per hour (log)" : "cost, USD (log)");
    size_t line = 0;
    for (size_t i = 0; i < res->n; i++) {
        const dr_plan_option_t *o = &res->opts[i];
        if (o->exact)
            continue;
        size_t npts = 0;
        for (size_t k = 0; k < o->ncurve; k++)
            npts += o->curve[k].wall_s > 0 && o->curve[k].cost_usd > 0;
        if (!npts)
            continue;
        size_t ncol = sizeof colours / sizeof *colours;
        const char *col = colours[line % ncol];
        sb_printf(&b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", col,
                  line >= ncol ? " stroke-dasharray=\"6 3\"" : "");
        for (size_t k = 0; k < o->ncurve; k++) {
            const dr_plan_point_t *p = &o->curve[k];
            if (p->wall_s > 0 && p->cost_usd > 0)
                sb_printf(&b, "%.1f,%.1f ", PX(p->wall_s), PY(p->cost_usd));
        }
        sb_printf(&b, "\"/>\n");
        for (size_t k = 0; k < o->ncurve; k++) {
            const dr_plan_point_t *p = &o->curve[k];
            if (!(p->wall_s > 0 && p->cost_usd > 0))
                continue;
            bool chosen = p->gpus == o->gpus && o->fits;
            sb_printf(&b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\">", PX(p->wall_s),
                      PY(p->cost_usd), chosen ? 6 : 3, col);
            sb_printf(&b, "<title>");
            sb_text(&b, o->gpu);
            sb_printf(&b, " x %u</title></circle>\n", p->gpus);
        }
        double ly = T + 10 + 18.0 * (double)line;
        sb_printf(&b,
                  "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"4\" fill=\"%s\"/>"
                  "<text x=\"%.0f\" y=\"%.0f\">",
                  R + 20, ly, col, R + 40, ly + 6);
        sb_text(&b, o->gpu);
        sb_printf(&b, "%s</text>\n", o->fits ? "" : " (no fit)");
        line++;
    }
    if (req->deadline_s > 0 && !serve && req->deadline_s / unit > pow(10, lx0) &&
        req->deadline_s / unit < pow(10, lx1)) {
        double x = PX(req->deadline_s);
        sb_printf(&b,
                  "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#c00\" "
                  "stroke-dasharray=\"6 4\"/><text x=\"%.1f\" y=\"%.0f\" fill=\"#c00\">deadline"
                  "</text>\n",
                  x, T, x, B, x + 4, T + 14);
    }
    sb_printf(&b,
              "<text x=\"%.0f\" y=\"%.0f\" fill=\"#555\">Each point is one GPU count (1, 2, 4, "
              "then whole nodes doubling); the large dot is the planner's choice.</text>\n",
              L, H - 20);
#undef PX
#undef PY
    sb_printf(&b, "</svg>\n");
    if (b.bad) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
