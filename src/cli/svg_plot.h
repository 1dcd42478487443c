/* svg_plot.h - a dependency-free SVG 1.1 chart writer for the CLI
 * (`drover history --plot`): series over categorical time buckets, drawn
 * as stacked bars or one line per series, in one or more panels that share
 * the x axis, with axes, tick labels, a legend and a title.  Pure: it
 * returns text.  Every drawn value carries data-series, data-x and
 * data-value attributes, so that a test (or a script) can read the chart's
 * numbers back from the SVG. */
#ifndef DROVER_CLI_SVG_PLOT_H
#define DROVER_CLI_SVG_PLOT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cli_plot_panel {
    const char *title; /* "Cost (USD)" */
    const char *unit;  /* in tooltips: "USD" */
    const double *v;   /* nseries x nx values, row-major: v[s * nx + x]; NaN counts as 0 */
} cli_plot_panel_t;

typedef struct cli_plot {
    const char *title;
    const char *subtitle; /* may be NULL */
    size_t nx;
    const char *const *xlabels; /* nx bucket labels */
    size_t nseries;
    const char *const *series; /* nseries names (escaped here: any text is safe) */
    const char *legend;        /* the legend's heading ("account"); may be NULL */
    size_t npanels;
    const cli_plot_panel_t *panels;
    bool lines; /* one line per series (else stacked bars) */
} cli_plot_t;

/* The chart as a standalone SVG document (malloc'd), NULL on out of
 * memory.  Bars of value 0 are not drawn; lines have a point per bucket.
 * nx == 0 gives a chart saying there is nothing to show. */
char *cli_svg_plot(const cli_plot_t *p);

/* A "nice" axis step (1, 2 or 5 x 10^k) giving about `want` intervals over
 * [0, max]. */
double cli_plot_nice_step(double max, int want);

#endif
