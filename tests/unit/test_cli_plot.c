/* test_cli_plot.c - `drover history --plot`: the SVG writer (one bar per
 * non-zero value, stacked; one line and a point per bucket per series;
 * names escaped; nice axis steps) and the turning of GET /v1/history rows
 * into usage per account per local day or hour (spread over the time each
 * job ran, summary rows skipped, a DST day still one bucket). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/history_plot.h"
#include "cli/svg_plot.h"

#define has(hay, needle)                                                                           \
    do {                                                                                           \
        if (!strstr((hay), (needle)))                                                              \
            fail_msg("expected the SVG to contain \"%s\":\n%s", (needle), (hay));                  \
    } while (0)

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void set_tz(const char *tz)
{
    setenv("TZ", tz, 1);
    tzset();
}

static void test_nice_step(void **state)
{
    (void)state;
    assert_true(cli_plot_nice_step(6, 5) == 2);
    assert_true(fabs(cli_plot_nice_step(0.15, 5) - 0.05) < 1e-12);
    assert_true(cli_plot_nice_step(1000, 5) == 200);
    assert_true(cli_plot_nice_step(0, 5) == 1);
    assert_true(cli_plot_nice_step(NAN, 5) == 1);
}

static void test_svg_bars_and_lines(void **state)
{
    (void)state;
    const char *xl[] = {"d1", "d2", "d3"};
    const char *names[] = {"<a&b>", "plain"};
    /* series 0: 1, 0, 4; series 1: 2, 3, 0 -> stacks 3, 3, 4 */
    const double v[] = {1, 0, 4, 2, 3, NAN};
    cli_plot_panel_t pn = {"Cost (USD)", "USD", v};
    cli_plot_t p = {.title = "T & t",
                    .subtitle = "sub",
                    .nx = 3,
                    .xlabels = xl,
                    .nseries = 2,
                    .series = names,
                    .legend = "account",
                    .npanels = 1,
                    .panels = &pn};
    char *svg = cli_svg_plot(&p);
    assert_non_null(svg);
    assert_true(strncmp(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=", 49) == 0);
    assert_true(strcmp(svg + strlen(svg) - 7, "</svg>\n") == 0);
    assert_int_equal(count(svg, "<g"), count(svg, "</g>"));
    assert_int_equal(count(svg, "<rect class=\"bar\""), 4); /* the 0 and the NaN are not drawn */
    has(svg, "<title>T &amp; t</title>");
    has(svg, "data-series=\"&lt;a&amp;b&gt;\" data-x=\"d3\" data-value=\"4\"");
    has(svg, "data-series=\"plain\" data-x=\"d2\" data-value=\"3\"");
    assert_null(strstr(svg, "<a&b>"));
    /* y axis up to 4 by 1 (nice step of 4/5) */
    has(svg, "data-ymax=\"4\"");
    assert_int_equal(count(svg, "class=\"ytick\""), 5);
    assert_int_equal(count(svg, "class=\"xtick\""), 3);
    assert_int_equal(count(svg, "class=\"legend-entry\""), 2);
    /* stacked: series 1's bar on d1 sits on series 0's (its bottom is that top) */
    double y0 = 0, h0 = 0, y1 = 0, h1 = 0;
    const char *b0 = strstr(svg, "data-x=\"d1\" data-value=\"1\"");
    const char *b1 = strstr(svg, "data-series=\"plain\" data-x=\"d1\" data-value=\"2\"");
    assert_non_null(b0);
    assert_non_null(b1);
    assert_int_equal(
        sscanf(strstr(b0, " y=\""), " y=\"%lf\" width=\"%*f\" height=\"%lf\"", &y0, &h0), 2);
    assert_int_equal(
        sscanf(strstr(b1, " y=\""), " y=\"%lf\" width=\"%*f\" height=\"%lf\"", &y1, &h1), 2);
    assert_true(fabs(y1 + h1 - y0) < 0.02);
    assert_true(fabs(h1 - 2 * h0) < 0.02);
    free(svg);

    p.lines = true;
    svg = cli_svg_plot(&p);
    assert_non_null(svg);
    assert_int_equal(count(svg, "<polyline class=\"line\""), 2);
    assert_int_equal(count(svg, "<circle class=\"point\""), 6); /* zeros too: a line has them */
    assert_int_equal(count(svg, "<rect class=\"bar\""), 0);
    has(svg, "data-ymax=\"4\""); /* lines: the largest value, not a stack */
    free(svg);

    /* nothing to show: still a document, saying so */
    p.nx = 0;
    p.nseries = 0;
    svg = cli_svg_plot(&p);
    assert_non_null(svg);
    has(svg, "no finished jobs in this window");
    assert_int_equal(count(svg, "<g"), count(svg, "</g>"));
    free(svg);
}

static json_t *parse(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j)
        fail_msg("fixture: %s: %s", e.text, s);
    return j;
}

/* local (TZ) time as Unix seconds */
static double at(int y, int mo, int d, int h, int mi)
{
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_isdst = -1};
    return (double)mktime(&tm);
}

static json_t *history(void)
{
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"jobs\":["
             /* 4 hours across midnight: 2 h on each day */
             "{\"id\":1,\"array_tasks\":null,\"account\":\"x\",\"start_time\":%.1f,"
             "\"end_time\":%.1f,\"cost_usd\":4.0,\"gpu_hours\":8.0},"
             /* no time run (cancelled while pending): all in its end's bucket */
             "{\"id\":2,\"array_tasks\":null,\"account\":\"\",\"start_time\":null,"
             "\"end_time\":%.1f,\"cost_usd\":1.0,\"gpu_hours\":0},"
             /* an array's summary row: not counted again */
             "{\"id\":3,\"array_tasks\":2,\"account\":\"x\",\"start_time\":%.1f,"
             "\"end_time\":%.1f,\"cost_usd\":50,\"gpu_hours\":50},"
             /* no end: nothing to place */
             "{\"id\":4,\"array_tasks\":null,\"account\":\"y\",\"start_time\":%.1f,"
             "\"end_time\":null,\"cost_usd\":7,\"gpu_hours\":7}]}",
             at(2026, 12, 1, 22, 0), at(2026, 12, 2, 2, 0), at(2026, 12, 3, 10, 0),
             at(2026, 12, 1, 22, 0), at(2026, 12, 2, 2, 0), at(2026, 12, 1, 22, 0));
    return parse(buf);
}

static void test_usage_by_day_and_hour(void **state)
{
    (void)state;
    set_tz("UTC");
    json_t *h = history();
    cli_usage_t u;
    dr_err_t err = {0};
    assert_int_equal(cli_usage_from_history(h, CLI_PLOT_DAY, &u, &err), DR_OK);
    assert_false(u.hourly);
    assert_int_equal(u.jobs, 2);
    assert_int_equal(u.nx, 3);
    assert_string_equal(u.xlabels[0], "2026-12-01");
    assert_string_equal(u.xlabels[2], "2026-12-03");
    assert_int_equal(u.nacc, 2);
    assert_string_equal(u.accounts[0], "x"); /* the larger cost first */
    assert_string_equal(u.accounts[1], CLI_PLOT_NO_ACCOUNT);
    const double cx[] = {2, 2, 0}, gx[] = {4, 4, 0}, cn[] = {0, 0, 1};
    for (int x = 0; x < 3; x++) {
        assert_true(fabs(u.cost[x] - cx[x]) < 1e-9);
        assert_true(fabs(u.gpuh[x] - gx[x]) < 1e-9);
        assert_true(fabs(u.cost[3 + x] - cn[x]) < 1e-9);
    }
    assert_true(fabs(u.total_cost - 5) < 1e-9);
    assert_true(fabs(u.total_gpuh - 8) < 1e-9);
    char *svg = cli_usage_svg(&u, false, "all users");
    assert_non_null(svg);
    has(svg, "per account, per day</title>");
    has(svg, "all users; 2 jobs, $5.00, 8.00 GPU-hours");
    has(svg, "data-series=\"(none)\" data-x=\"2026-12-03\" data-value=\"1\"");
    assert_int_equal(count(svg, "<rect class=\"bar\""), 2 * 2 + 1); /* cost: 3 bars, GPU-h: 2 */
    free(svg);
    cli_usage_free(&u);

    /* auto: the jobs span 36 h, so hours: 22:00 on the 1st to 10:00 on the 3rd */
    assert_int_equal(cli_usage_from_history(h, CLI_PLOT_AUTO, &u, &err), DR_OK);
    assert_true(u.hourly);
    assert_int_equal(u.nx, 37);
    assert_string_equal(u.xlabels[0], "12-01 22:00");
    assert_string_equal(u.xlabels[36], "12-03 10:00");
    for (int x = 0; x < 4; x++)
        assert_true(fabs(u.cost[x] - 1) < 1e-9);
    assert_true(u.cost[4] == 0);
    assert_true(fabs(u.cost[37 + 36] - 1) < 1e-9);
    cli_usage_free(&u);
    json_decref(h);

    /* hours over 400 days: refused, naming the way out */
    char buf[256];
    snprintf(buf, sizeof buf,
             "{\"jobs\":[{\"account\":\"a\",\"start_time\":0,\"end_time\":1.0,\"cost_usd\":1},"
             "{\"account\":\"a\",\"start_time\":%.0f,\"end_time\":%.0f,\"cost_usd\":1}]}",
             400 * 86400.0, 400 * 86400.0 + 1);
    h = parse(buf);
    assert_int_equal(cli_usage_from_history(h, CLI_PLOT_HOUR, &u, &err), DR_EINVAL);
    if (!strstr(err.msg, "--by day"))
        fail_msg("message: %s", err.msg);
    assert_int_equal(cli_usage_from_history(h, CLI_PLOT_DAY, &u, &err), DR_OK);
    assert_int_equal(u.nx, 401);
    cli_usage_free(&u);
    json_decref(h);

    /* no rows: an empty usage, and a chart saying so */
    h = parse("{\"jobs\":[]}");
    assert_int_equal(cli_usage_from_history(h, CLI_PLOT_AUTO, &u, &err), DR_OK);
    assert_int_equal(u.nx, 0);
    svg = cli_usage_svg(&u, true, NULL);
    assert_non_null(svg);
    has(svg, "no finished jobs");
    free(svg);
    cli_usage_free(&u);
    json_decref(h);
}

static void test_usage_dst_day(void **state)
{
    (void)state;
    /* Central Europe: 2026-10-25 is 25 hours long */
    set_tz("CET-1CEST,M3.5.0,M10.5.0/3");
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"jobs\":[{\"account\":\"a\",\"start_time\":%.1f,\"end_time\":%.1f,\"cost_usd\":2},"
             "{\"account\":\"a\",\"start_time\":%.1f,\"end_time\":%.1f,\"cost_usd\":3}]}",
             at(2026, 10, 24, 12, 0), at(2026, 10, 24, 12, 0), at(2026, 10, 25, 23, 30),
             at(2026, 10, 25, 23, 30));
    json_t *h = parse(buf);
    cli_usage_t u;
    dr_err_t err = {0};
    assert_int_equal(cli_usage_from_history(h, CLI_PLOT_DAY, &u, &err), DR_OK);
    assert_int_equal(u.nx, 2);
    assert_string_equal(u.xlabels[1], "2026-10-25");
    assert_true(u.t0[2] - u.t0[1] == 25 * 3600.0);
    assert_true(u.cost[0] == 2 && u.cost[1] == 3);
    cli_usage_free(&u);
    json_decref(h);
    set_tz("UTC");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nice_step),
        cmocka_unit_test(test_svg_bars_and_lines),
        cmocka_unit_test(test_usage_by_day_and_hour),
        cmocka_unit_test(test_usage_dst_day),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
