/* test_perf.c - the perf table: class 0, building, copying, binding columns
 * to cluster types (name, alias, prefix), and the rate queries. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/perf.h"

static void test_init_uniform(void **state)
{
    (void)state;
    dr_perf_table_t p;
    dr_perf_init(&p);
    assert_int_equal(p.nclasses, 1);
    assert_int_equal(p.ntypes, 0);
    assert_string_equal(p.class_names[0], "uniform");
    assert_int_equal(dr_perf_find_class(&p, "uniform"), 0);
    assert_true(dr_perf_find_class(&p, "nope") < 0);
    dr_perf_free(&p);
    dr_perf_free(&p); /* freeing twice is harmless: free leaves an empty table */
    assert_int_equal(p.nclasses, 1);

    /* class 0 runs at rate 1 with or without columns */
    dr_job_t j;
    dr_job_init(&j);
    dr_perf_view_t v = {.table = &p};
    for (int i = 0; i < DR_MAX_GPU_TYPES; i++)
        v.map[i] = -1;
    assert_true(dr_perf_rate(&v, &j, 0) == 1.0);
    assert_true(dr_perf_rate(NULL, &j, 5) == 1.0);
}

static dr_perf_table_t make_table(void)
{
    dr_perf_table_t p;
    dr_perf_init(&p);
    const char *cols[] = {"k80", "p100", "v100"};
    assert_int_equal(dr_perf_set_types(&p, cols, 3), 0);
    double a[] = {1.0, 4.0, 8.0}, b[] = {0.0, 2.5, 5.0};
    assert_int_equal(dr_perf_add_class(&p, "A x1", a), 1);
    assert_int_equal(dr_perf_add_class(&p, "B x2", b), 2);
    return p;
}

static void test_build(void **state)
{
    (void)state;
    dr_perf_table_t p = make_table();
    assert_int_equal(p.nclasses, 3);
    assert_int_equal(p.ntypes, 3);
    assert_string_equal(p.type_names[1], "p100");
    assert_int_equal(dr_perf_find_class(&p, "B x2"), 2);
    /* class 0 is 1 on every column */
    for (int c = 0; c < 3; c++)
        assert_true(p.rate[c] == 1.0);
    assert_true(p.rate[2 * 3 + 2] == 5.0);
    /* errors: duplicate, bad rates, columns after classes */
    double r[] = {1, 1, 1}, neg[] = {1, -1, 1}, nan3[] = {1, NAN, 1};
    assert_int_equal(dr_perf_add_class(&p, "A x1", r), DR_EINVAL);
    assert_int_equal(dr_perf_add_class(&p, "uniform", r), DR_EINVAL);
    assert_int_equal(dr_perf_add_class(&p, "C", neg), DR_EINVAL);
    assert_int_equal(dr_perf_add_class(&p, "C", nan3), DR_EINVAL);
    assert_int_equal(dr_perf_add_class(&p, "", r), DR_EINVAL);
    const char *cols[] = {"x"};
    assert_int_equal(dr_perf_set_types(&p, cols, 1), DR_ESTATE);
    /* many classes (growth) */
    char name[32];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "grow %d", i);
        assert_int_equal(dr_perf_add_class(&p, name, r), 3 + i);
    }
    assert_int_equal(dr_perf_find_class(&p, "grow 99"), 102);
    assert_true(p.rate[1 * 3 + 2] == 8.0);
    dr_perf_free(&p);
}

static void test_copy(void **state)
{
    (void)state;
    dr_perf_table_t p = make_table(), q;
    dr_perf_init(&q); /* copying over an initialised table must not leak */
    assert_int_equal(dr_perf_copy(&q, &p), 0);
    dr_perf_free(&p);
    assert_int_equal(q.nclasses, 3);
    assert_string_equal(q.class_names[2], "B x2");
    assert_string_equal(q.type_names[2], "v100");
    assert_true(q.rate[1 * 3 + 1] == 4.0);
    double r[] = {9, 9, 9};
    assert_int_equal(dr_perf_add_class(&q, "D", r), 3);
    dr_perf_free(&q);

    dr_perf_table_t e, f;
    dr_perf_init(&e);
    assert_int_equal(dr_perf_copy(&f, &e), 0);
    assert_int_equal(f.nclasses, 1);
    dr_perf_free(&f);
}

/* A cluster whose types come from the built-in catalog (plus two declared
 * types without catalog entries). */
static void make_cluster(dr_cluster_t *c, const char *const *names, size_t n)
{
    dr_catalog_t cat = {0};
    dr_err_t err = {0};
    assert_int_equal(dr_catalog_builtin(&cat, &err), 0);
    dr_cluster_init(c);
    for (size_t i = 0; i < n; i++) {
        const dr_gpu_spec_t *s = dr_catalog_find(&cat, names[i]);
        dr_gpu_spec_t u;
        if (!s) {
            dr_gpu_spec_unknown(&u, names[i]);
            s = &u;
        }
        assert_int_equal(dr_cluster_add_type(c, s, &err), (int)i);
        if (s == &u)
            dr_gpu_spec_free(&u);
    }
    dr_catalog_free(&cat);
}

static void test_bind(void **state)
{
    (void)state;
    const char *names[] = {"V100", "P100", "K80", "A100-80GB-SXM", "A10", "G2", "P100-PCIE-12GB"};
    dr_cluster_t c;
    make_cluster(&c, names, 7);
    assert_string_equal(c.types[0].name, "V100-SXM2-16GB");

    dr_perf_table_t p;
    dr_perf_init(&p);
    const char *cols[] = {"k80", "P100", "v100", "a10", "V100-SXM2"};
    assert_int_equal(dr_perf_set_types(&p, cols, 5), 0);
    int map[DR_MAX_GPU_TYPES];
    dr_err_t err = {0};
    assert_int_equal(dr_perf_bind(&p, &c, map, &err), 0);
    assert_int_equal(map[0], 2);  /* "v100" is an alias: beats the prefix "V100-SXM2" */
    assert_int_equal(map[1], 1);  /* "P100" alias of P100-16GB */
    assert_int_equal(map[2], 0);  /* "k80" alias of K80-12GB */
    assert_int_equal(map[3], -1); /* "a10" is no word prefix of A100-80GB-SXM */
    assert_int_equal(map[4], 3);  /* "a10" alias of A10-24GB */
    assert_int_equal(map[5], -1); /* G2: no data */
    assert_int_equal(map[6], 1);  /* "P100" is a prefix of P100-PCIE-12GB */
    assert_int_equal(map[7], -1);
    assert_int_equal(map[DR_MAX_GPU_TYPES - 1], -1);

    /* longest prefix wins when only prefixes match */
    dr_perf_table_t q;
    dr_perf_init(&q);
    const char *cols2[] = {"v100", "v100-sxm2-16"};
    assert_int_equal(dr_perf_set_types(&q, cols2, 2), 0);
    dr_cluster_t c2;
    dr_cluster_init(&c2);
    dr_gpu_spec_t s;
    dr_gpu_spec_unknown(&s, "V100-SXM2-16-X");
    assert_int_equal(dr_cluster_add_type(&c2, &s, &err), 0);
    dr_gpu_spec_free(&s);
    assert_int_equal(dr_perf_bind(&q, &c2, map, &err), 0);
    assert_int_equal(map[0], 1);
    /* no table: nothing mapped */
    assert_int_equal(dr_perf_bind(NULL, &c2, map, &err), 0);
    assert_int_equal(map[0], -1);
    dr_cluster_free(&c2);
    dr_perf_free(&q);
    dr_perf_free(&p);
    dr_cluster_free(&c);
}

static void test_rates(void **state)
{
    (void)state;
    const char *names[] = {"V100", "P100", "K80", "G2"};
    dr_cluster_t c;
    make_cluster(&c, names, 4);
    /* one 8-GPU node per type: runnable also asks whether a node could hold
     * the job */
    for (int t = 0; t < 4; t++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", t);
        assert_true(dr_cluster_add_node(&c, name, t, 8, 64000, 512000, NULL) >= 0);
    }
    assert_int_equal(dr_cluster_finalize(&c, NULL), DR_OK);
    dr_perf_table_t p = make_table();
    dr_perf_view_t v = {.table = &p};
    dr_err_t err = {0};
    assert_int_equal(dr_perf_bind(&p, &c, v.map, &err), 0);

    dr_job_t j;
    dr_job_init(&j);
    /* class 0: rate 1 everywhere, runnable on every eligible type */
    assert_true(dr_perf_rate(&v, &j, 3) == 1.0);
    assert_true(dr_perf_runnable(&v, &c, &j) == 0xF);
    uint32_t gpn = j.req.gpus_per_node;
    j.req.gpus_per_node = 16; /* no node holds 16 */
    assert_true(dr_perf_runnable(&v, &c, &j) == 0);
    j.req.gpus_per_node = gpn;
    assert_true(dr_perf_best_rate(&v, &j, 0xF) == 1.0);
    assert_true(dr_perf_best_rate(&v, &j, 0) == 0.0);

    j.perf_class = 1; /* A x1: k80 1, p100 4, v100 8 */
    assert_true(dr_perf_rate(&v, &j, 0) == 8.0);
    assert_true(dr_perf_rate(&v, &j, 1) == 4.0);
    assert_true(dr_perf_rate(&v, &j, 2) == 1.0);
    assert_true(dr_perf_rate(&v, &j, 3) == 0.0); /* G2 has no column */
    assert_true(dr_perf_rate(&v, &j, 63) == 0.0);
    assert_true(dr_perf_runnable(&v, &c, &j) == 0x7);
    assert_true(dr_perf_best_rate(&v, &j, 0x6) == 4.0);
    assert_true(dr_perf_best_rate(&v, &j, 0xF) == 8.0);

    j.perf_class = 2; /* B x2: k80 0 */
    assert_true(dr_perf_runnable(&v, &c, &j) == 0x3);
    assert_true(dr_perf_best_rate(&v, &j, 0x4) == 0.0);
    /* eligibility: allowed types and GPU memory */
    j.req.types = 0x6;
    assert_true(dr_perf_runnable(&v, &c, &j) == 0x2);
    j.req.types = 0;
    j.req.min_gpu_mem_gb = 20; /* V100 16GB, P100 16GB: none qualifies */
    assert_true(dr_perf_runnable(&v, &c, &j) == 0);
    j.req.min_gpu_mem_gb = 0;
    /* a class beyond the table runs nowhere; no table = class 0 */
    j.perf_class = 7;
    assert_true(dr_perf_rate(&v, &j, 0) == 0.0);
    dr_perf_view_t none = {.table = NULL};
    assert_true(dr_perf_rate(&none, &j, 0) == 1.0);
    assert_true(dr_perf_runnable(&none, &c, &j) == 0xF);

    dr_perf_free(&p);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_uniform), cmocka_unit_test(test_build),
        cmocka_unit_test(test_copy),         cmocka_unit_test(test_bind),
        cmocka_unit_test(test_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
