/* test_catalog.c - the GPU catalog: the built-in data, lookups, unknown
 * figures as NAN, every parse error, and a cross-check against the shared
 * reference catalog. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/catalog.h"
#include "drover/util.h"

static void test_builtin_has_required_types(void **state)
{
    (void)state;
    dr_catalog_t cat;
    dr_err_t err = {0};
    if (dr_catalog_builtin(&cat, &err) != 0)
        fail_msg("builtin catalog: %s", err.msg);
    static const char *const need[] = {"A100-80GB", "H100",    "H200",      "B200",     "GB200",
                                       "MI300X",    "MI325X",  "MI350X",    "MI355X",   "L40S",
                                       "L4",        "T4",      "V100",      "K80",      "P100",
                                       "TPU-v5e",   "TPU-v6e", "Trainium2", "Trainium3"};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++) {
        const dr_gpu_spec_t *g = dr_catalog_find(&cat, need[i]);
        if (!g)
            fail_msg("built-in catalog lacks %s", need[i]);
        assert_true(g->mem_gb > 0);
        assert_true(g->vendor[0] != '\0');
    }
    /* the openb models map onto catalog rows */
    static const char *const openb[] = {"T4", "P100", "V100M16", "V100M32", "A10"};
    for (size_t i = 0; i < sizeof openb / sizeof *openb; i++)
        assert_non_null(dr_catalog_find(&cat, openb[i]));
    assert_string_equal(dr_catalog_find(&cat, "V100M32")->name, "V100-SXM2-32GB");
    assert_string_equal(dr_catalog_find(&cat, "V100M16")->name, "V100-SXM2-16GB");
    dr_catalog_free(&cat);
    assert_int_equal(cat.n, 0);
    assert_null(cat.gpus);
}

static void test_builtin_values(void **state)
{
    (void)state;
    dr_catalog_t cat;
    dr_err_t err = {0};
    assert_int_equal(dr_catalog_builtin(&cat, &err), 0);
    const dr_gpu_spec_t *h = dr_catalog_find(&cat, "H100");
    assert_string_equal(h->name, "H100-SXM-80GB");
    assert_string_equal(h->vendor, "NVIDIA");
    assert_string_equal(h->link, "NVLink4");
    assert_true(h->bf16_tflops == 989);
    assert_true(h->fp8_tflops == 1979);
    assert_true(h->mem_gb == 80);
    assert_true(h->hbm_tbs == 3.35);
    assert_true(h->tdp_w == 700);
    assert_true(h->link_gbs == 900);
    assert_true(h->price_hr == 6.88);
    assert_true(h->price_neocloud_hr == 3.99);
    assert_non_null(h->source);
    tu_assert_contains(h->source, "glennklockwood");
    /* unknown is NAN, never 0 */
    const dr_gpu_spec_t *t4 = dr_catalog_find(&cat, "T4");
    assert_true(isnan(t4->bf16_tflops));
    assert_true(isnan(t4->fp8_tflops));
    assert_true(t4->fp16_tflops == 65);
    assert_true(isnan(t4->price_neocloud_hr));
    const dr_gpu_spec_t *mi = dr_catalog_find(&cat, "MI350X");
    assert_true(isnan(mi->price_hr));
    assert_true(isnan(mi->price_neocloud_hr));
    assert_true(mi->bf16_tflops == 2307);
    assert_true(isnan(dr_catalog_find(&cat, "K80")->fp16_tflops));
    assert_true(isnan(dr_catalog_find(&cat, "Trainium2")->tdp_w));
    assert_true(isnan(dr_catalog_find(&cat, "GB200")->price_hr));
    dr_catalog_free(&cat);
}

static void test_find(void **state)
{
    (void)state;
    dr_catalog_t cat;
    dr_err_t err = {0};
    assert_int_equal(dr_catalog_builtin(&cat, &err), 0);
    const dr_gpu_spec_t *h = dr_catalog_find(&cat, "H100-SXM-80GB");
    assert_non_null(h);
    assert_ptr_equal(dr_catalog_find(&cat, "h100"), h);
    assert_ptr_equal(dr_catalog_find(&cat, "H100-SXM"), h);
    assert_ptr_equal(dr_catalog_find(&cat, "h100-sxm-80gb"), h);
    assert_ptr_equal(dr_catalog_find(&cat, "H800"), h);
    assert_null(dr_catalog_find(&cat, "H10"));
    assert_null(dr_catalog_find(&cat, "H100-SX"));
    assert_null(dr_catalog_find(&cat, ""));
    assert_null(dr_catalog_find(&cat, "|"));
    assert_null(dr_catalog_find(&cat, NULL));
    assert_null(dr_catalog_find(NULL, "H100"));
    /* a name wins over an alias of an earlier row */
    assert_string_equal(dr_catalog_find(&cat, "A100-40GB-SXM")->name, "A100-40GB-SXM");
    assert_string_equal(dr_catalog_find(&cat, "v6e")->name, "TPU-v6e-Trillium");
    dr_catalog_free(&cat);
}

static void test_load_file(void **state)
{
    (void)state;
    dr_catalog_t a, b;
    dr_err_t err = {0};
    assert_int_equal(dr_catalog_builtin(&a, &err), 0);
    if (dr_catalog_load(&b, tu_src_path("data/gpus.csv"), &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        assert_string_equal(a.gpus[i].name, b.gpus[i].name);
        assert_string_equal(a.gpus[i].source, b.gpus[i].source);
    }
    dr_catalog_free(&a);
    dr_catalog_free(&b);
    assert_int_equal(dr_catalog_load(&b, "/nonexistent/gpus.csv", &err), DR_EIO);
    tu_assert_contains(err.msg, "/nonexistent/gpus.csv");
    assert_int_equal(b.n, 0);
    dr_catalog_free(&b);
}

/* Parse from an exactly-sized heap copy (no NUL after the data), so a read
 * past the end shows up under ASan. */
static int parse(dr_catalog_t *cat, const char *text, dr_err_t *err)
{
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1);
    memcpy(copy, text, n);
    int rc = dr_catalog_parse(cat, "gpus.csv", copy, n, err);
    free(copy);
    return rc;
}

static void test_column_order_free(void **state)
{
    (void)state;
    dr_catalog_t cat;
    dr_err_t err = {0};
    const char *csv = "mem_gb, Vendor ,price_usd_hr,NAME,extra\r\n"
                      "16,Acme,,X1,whatever\r\n"
                      "\r\n"
                      "32.5,Acme,1.25,\"X2\",\"a, b\"\r\n";
    if (parse(&cat, csv, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(cat.n, 2);
    const dr_gpu_spec_t *x1 = dr_catalog_find(&cat, "x1");
    assert_non_null(x1);
    assert_string_equal(x1->vendor, "Acme");
    assert_true(x1->mem_gb == 16);
    assert_true(isnan(x1->price_hr));
    assert_true(isnan(x1->bf16_tflops)); /* absent column = unknown */
    assert_string_equal(x1->aliases, "");
    assert_null(x1->source);
    const dr_gpu_spec_t *x2 = dr_catalog_find(&cat, "X2");
    assert_true(x2->mem_gb == 32.5);
    assert_true(x2->price_hr == 1.25);
    dr_catalog_free(&cat);
    /* header only: an empty catalog */
    assert_int_equal(parse(&cat, "name,vendor,mem_gb\n", &err), 0);
    assert_int_equal(cat.n, 0);
    dr_catalog_free(&cat);
    /* a UTF-8 byte order mark is skipped */
    assert_int_equal(parse(&cat, "\xEF\xBB\xBFname,vendor,mem_gb\nA,B,1", &err), 0);
    assert_non_null(dr_catalog_find(&cat, "A"));
    dr_catalog_free(&cat);
}

static void expect_err(const char *csv, const char *msg)
{
    dr_catalog_t cat;
    dr_err_t err = {0};
    int rc = parse(&cat, csv, &err);
    if (rc != DR_EINVAL)
        fail_msg("rc %d for:\n%s\n(msg '%s')", rc, csv, err.msg);
    assert_string_equal(err.msg, msg);
    assert_int_equal(cat.n, 0);
    assert_null(cat.gpus);
    dr_catalog_free(&cat);
}

#define HDR "name,vendor,aliases,bf16_dense_tflops,mem_gb,price_usd_hr\n"

static void test_errors(void **state)
{
    (void)state;
    expect_err("", "gpus.csv: empty file (no header)");
    expect_err("\n\n", "gpus.csv: empty file (no header)");
    expect_err("name,vendor\nA,B\n", "gpus.csv:1: header: missing column 'mem_gb'");
    expect_err("vendor,mem_gb\n", "gpus.csv:1: header: missing column 'name'");
    expect_err("name,mem_gb\n", "gpus.csv:1: header: missing column 'vendor'");
    expect_err(HDR "A,V,,1,80,1\nB,V,,2,eighty,1\n",
               "gpus.csv:3: mem_gb: 'eighty' is not a number");
    expect_err(HDR "A,V,,1,80,1\n\nB,V,,x,80,1\n",
               "gpus.csv:4: bf16_dense_tflops: 'x' is not a number");
    expect_err(HDR "A,V,,1,80,-1\n", "gpus.csv:2: price_usd_hr: '-1' is negative");
    expect_err(HDR "A,V,,nan,80,1\n", "gpus.csv:2: bf16_dense_tflops: 'nan' is not a number");
    expect_err(HDR "A,V,,inf,80,1\n", "gpus.csv:2: bf16_dense_tflops: 'inf' is not a number");
    expect_err(HDR "A,V,,1,,1\n", "gpus.csv:2: mem_gb: empty (the memory size is required)");
    expect_err(HDR "A,V,,1, ,1\n", "gpus.csv:2: mem_gb: empty (the memory size is required)");
    expect_err(HDR ",V,,1,80,1\n", "gpus.csv:2: name: empty");
    expect_err(HDR "A|B,V,,1,80,1\n", "gpus.csv:2: name: 'A|B' contains '|'");
    expect_err(HDR "A,V,,1,80\n", "gpus.csv:2: row has 5 fields, the header has 6");
    expect_err(HDR "A,V,,1,80,1,7\n", "gpus.csv:2: row has 7 fields, the header has 6");
    expect_err(HDR "A,V,,1,80,1\nB,V,\"x,1,80,1\n", "gpus.csv:3: unterminated quote");
    expect_err("name,vendor,\"mem_gb\n", "gpus.csv:1: unterminated quote");
    /* duplicates across rows, by name or alias, case-insensitively */
    expect_err(HDR "A,V,X|Y,1,80,1\nB,V,,1,80,1\na,V,,1,80,1\n",
               "gpus.csv:4: name: 'a' is already used by 'A' (line 2)");
    expect_err(HDR "A,V,X|Y,1,80,1\nB,V,Z|y,1,80,1\n",
               "gpus.csv:3: aliases: 'y' is already used by 'A' (line 2)");
    expect_err(HDR "A,V,X|Y,1,80,1\nx,V,,1,80,1\n",
               "gpus.csv:3: name: 'x' is already used by 'A' (line 2)");
    expect_err(HDR "A,V,X|Y,1,80,1\nB,V,a,1,80,1\n",
               "gpus.csv:3: aliases: 'a' is already used by 'A' (line 2)");
    /* fixed-size text fields */
    expect_err(HDR "ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJ,V,,1,80,1\n",
               "gpus.csv:2: name: 'ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJ...' is longer than "
               "39 characters");
    expect_err(HDR "A,VVVVVVVVVVVVVVVVVVVVVVVVV,,1,80,1\n",
               "gpus.csv:2: vendor: 'VVVVVVVVVVVVVVVVVVVVVVVVV...' is longer than 23 characters");
}

static void test_spec_helpers(void **state)
{
    (void)state;
    dr_gpu_spec_t u;
    dr_gpu_spec_unknown(&u, "G2");
    assert_string_equal(u.name, "G2");
    assert_true(isnan(u.mem_gb) && isnan(u.bf16_tflops) && isnan(u.price_hr));
    assert_true(isnan(u.tdp_w) && isnan(u.link_gbs) && isnan(u.hbm_tbs));
    assert_null(u.source);
    dr_gpu_spec_unknown(&u, "a-very-long-name-that-does-not-fit-in-forty-characters");
    assert_int_equal(strlen(u.name), DR_GPU_NAME_MAX - 1);

    dr_catalog_t cat;
    dr_err_t err = {0};
    assert_int_equal(dr_catalog_builtin(&cat, &err), 0);
    dr_gpu_spec_t c;
    assert_int_equal(dr_gpu_spec_copy(&c, dr_catalog_find(&cat, "B200")), 0);
    dr_catalog_free(&cat); /* the copy owns its own source string */
    assert_string_equal(c.name, "B200-HGX-180GB");
    tu_assert_contains(c.source, "B200");
    dr_gpu_spec_free(&c);
    assert_null(c.source);
    dr_gpu_spec_free(&c); /* twice is harmless */
    dr_gpu_spec_t d;
    assert_int_equal(dr_gpu_spec_copy(&d, &u), 0);
    assert_null(d.source);
}

/* --- cross-check against shared/data/reference/gpu_catalog.csv --- */
static void expect_same(const char *gpu, const char *col, double ours, const char *theirs)
{
    double t;
    if (dr_parse_double(theirs, &t) != 0)
        fail_msg("reference %s %s: '%s' is not a number", gpu, col, theirs);
    bool same = (t == 0 && isnan(ours)) || (!isnan(ours) && fabs(ours - t) < 1e-9);
    if (!same)
        fail_msg("%s %s: ours %g, reference %s", gpu, col, ours, theirs);
}

static void test_crosscheck_shared(void **state)
{
    (void)state;
    if (!tu_have_shared())
        skip();
    size_t len;
    char *ref = tu_read(tu_shared_path("data/reference/gpu_catalog.csv"), &len);
    dr_catalog_t cat;
    dr_err_t err = {0};
    assert_int_equal(dr_catalog_builtin(&cat, &err), 0);
    dr_csv_t csv;
    dr_csv_init(&csv, ref, len, ',');
    assert_true(dr_csv_next(&csv) > 0);
    const char *cols[] = {"bf16_dense_tflops",
                          "fp8_dense_tflops",
                          "mem_gb",
                          "hbm_tb_s",
                          "tdp_w",
                          "link_gb_s",
                          "name",
                          "link"};
    int idx[8];
    for (int i = 0; i < 8; i++) {
        idx[i] = dr_csv_col(&csv, cols[i]);
        assert_true(idx[i] >= 0);
    }
    size_t rows = 0;
    while (dr_csv_next(&csv) > 0) {
        const char *name = csv.fields[idx[6]];
        const dr_gpu_spec_t *g = NULL;
        for (size_t i = 0; i < cat.n; i++)
            if (strcmp(cat.gpus[i].name, name) == 0)
                g = &cat.gpus[i];
        if (!g)
            fail_msg("reference GPU %s is missing from data/gpus.csv", name);
        expect_same(name, cols[0], g->bf16_tflops, csv.fields[idx[0]]);
        expect_same(name, cols[1], g->fp8_tflops, csv.fields[idx[1]]);
        expect_same(name, cols[2], g->mem_gb, csv.fields[idx[2]]);
        expect_same(name, cols[3], g->hbm_tbs, csv.fields[idx[3]]);
        expect_same(name, cols[4], g->tdp_w, csv.fields[idx[4]]);
        expect_same(name, cols[5], g->link_gbs, csv.fields[idx[5]]);
        assert_string_equal(g->link, csv.fields[idx[7]]);
        rows++;
    }
    assert_true(rows >= 17);
    dr_csv_free(&csv);
    dr_catalog_free(&cat);
    free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_has_required_types),
        cmocka_unit_test(test_builtin_values),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_column_order_free),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_spec_helpers),
        cmocka_unit_test(test_crosscheck_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
