/* test_prom.c - the Prometheus text format (src/ctld/prom.c): histogram
 * buckets (an observation equal to a bound counts in it, cumulative
 * output, +Inf, NaN ignored), sample values and escaped labels, HELP
 * escaping; and the GPU states of the controller's snapshot (metrics.c)
 * on a small cluster. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "ctld/ctld.h"
#include "ctld/metrics.h"
#include "ctld/prom.h"

/* The buffer's text, NUL-terminated (malloc'd), and the buffer emptied. */
static char *text_of(struct evbuffer *b)
{
    size_t n = evbuffer_get_length(b);
    char *s = malloc(n + 1);
    assert_non_null(s);
    evbuffer_remove(b, s, n);
    s[n] = '\0';
    return s;
}

static void test_histogram(void **state)
{
    (void)state;
    static const double le[] = {0.1, 1, 10};
    ctld_hist_t h;
    ctld_hist_init(&h, le, 3);
    const double obs[] = {0.05, 0.1, 0.5, 1, 3, 10, 11, 1e9, NAN};
    for (size_t i = 0; i < sizeof obs / sizeof *obs; i++)
        ctld_hist_observe(&h, obs[i]);
    assert_int_equal(h.count, 8);     /* NaN is not an observation */
    assert_int_equal(h.bucket[0], 2); /* 0.05, 0.1: le is "less than or equal" */
    assert_int_equal(h.bucket[1], 2); /* 0.5, 1 */
    assert_int_equal(h.bucket[2], 2); /* 3, 10 */
    assert_int_equal(h.bucket[3], 2); /* 11, 1e9: above every bound */
    struct evbuffer *b = evbuffer_new();
    ctld_prom_family(b, "x_seconds", "histogram", "How long x takes.");
    ctld_prom_hist(b, "x_seconds", &h);
    char *s = text_of(b);
    assert_string_equal(s, "# HELP x_seconds How long x takes.\n"
                           "# TYPE x_seconds histogram\n"
                           "x_seconds_bucket{le=\"0.1\"} 2\n"
                           "x_seconds_bucket{le=\"1\"} 4\n"
                           "x_seconds_bucket{le=\"10\"} 6\n"
                           "x_seconds_bucket{le=\"+Inf\"} 8\n"
                           "x_seconds_sum 1000000025.65\n"
                           "x_seconds_count 8\n");
    free(s);
    /* an empty one still renders every bucket, at 0 */
    ctld_hist_init(&h, le, 3);
    ctld_prom_hist(b, "y", &h);
    s = text_of(b);
    assert_string_equal(s, "y_bucket{le=\"0.1\"} 0\ny_bucket{le=\"1\"} 0\ny_bucket{le=\"10\"} 0\n"
                           "y_bucket{le=\"+Inf\"} 0\ny_sum 0\ny_count 0\n");
    free(s);
    evbuffer_free(b);
}

static void test_samples(void **state)
{
    (void)state;
    struct evbuffer *b = evbuffer_new();
    ctld_prom_sample(b, "a_total", 42, 0);
    ctld_prom_sample(b, "b", 0.25, 2, "node", "n1", "type", "H100");
    ctld_prom_sample(b, "c", NAN, 1, "v", "a\"b\\c\nd"); /* quote, backslash, line feed */
    ctld_prom_sample(b, "d", INFINITY, 0);
    ctld_prom_sample(b, "e", -INFINITY, 0);
    ctld_prom_sample(b, "f", 1e300, 0);
    ctld_prom_sample(b, "g", -3, 1, "k", "");
    ctld_prom_family(b, "h", "gauge", "a \\ and\na new line");
    char *s = text_of(b);
    assert_string_equal(s, "a_total 42\n"
                           "b{node=\"n1\",type=\"H100\"} 0.25\n"
                           "c{v=\"a\\\"b\\\\c\\nd\"} NaN\n"
                           "d +Inf\n"
                           "e -Inf\n"
                           "f 1e+300\n"
                           "g{k=\"\"} -3\n"
                           "# HELP h a \\\\ and\\na new line\n"
                           "# TYPE h gauge\n");
    free(s);
    evbuffer_free(b);
}

static void test_snapshot_gpus(void **state)
{
    (void)state;
    dr_ctld_t c;
    memset(&c, 0, sizeof c);
    tu_cluster(&c.cl, "NodeName=n1 Gpus=H100:4 Cpus=8 MemGB=64\n"
                      "NodeName=n2 Gpus=H100:4 Cpus=8 MemGB=64\n"
                      "NodeName=n3 Gpus=A100:2 Cpus=8 MemGB=64\n");
    ctld_node_t nodes[3];
    memset(nodes, 0, sizeof nodes);
    c.nodes = nodes;
    ctld_agent_t *connected = (ctld_agent_t *)&c; /* any non-NULL agent: it only is tested */
    nodes[0].agent = connected;
    nodes[2].agent = connected;
    /* n1: one GPU whole, one half taken; n2: no agent (down), one GPU taken;
     * n3: drained, nothing taken */
    const dr_node_t *n1 = &c.cl.nodes[0], *n2 = &c.cl.nodes[1];
    c.cl.gpu_free[n1->gpu_base] = 0;
    c.cl.gpu_free[n1->gpu_base + 1] = 500;
    c.cl.gpu_free[n2->gpu_base + 3] = 0;
    dr_cluster_set_state(&c.cl, 2, DR_NODE_DRAIN);
    uint32_t a, i, d;
    ctld_node_gpu_states(&c, 0, &a, &i, &d);
    assert_true(a == 2 && i == 2 && d == 0);
    ctld_node_gpu_states(&c, 1, &a, &i, &d);
    assert_true(a == 1 && i == 0 && d == 3);
    ctld_node_gpu_states(&c, 2, &a, &i, &d);
    assert_true(a == 0 && i == 0 && d == 2);
    ctld_snap_t s;
    ctld_snapshot(&c, &s);
    const ctld_snap_type_t *h = &s.type[n1->type], *x = &s.type[c.cl.nodes[2].type];
    assert_true(h->total == 8 && h->allocated == 3 && h->idle == 2 && h->down == 3);
    assert_true(x->total == 2 && x->allocated == 0 && x->idle == 0 && x->down == 2);
    assert_true(s.pending == 0 && s.running == 0 && s.usd_per_hour == 0);
    dr_cluster_free(&c.cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_samples),
        cmocka_unit_test(test_snapshot_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
