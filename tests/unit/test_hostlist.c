/* test_hostlist.c - hostlist expansion, compression, errors and round trips. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/hostlist.h"
#include "drover/util.h"

/* Expand expr and compare with the space-separated names in want. */
static void expect_expand(const char *expr, const char *want)
{
    dr_strvec_t sv = {0};
    dr_err_t err = {0};
    int rc = dr_hostlist_expand(expr, &sv, &err);
    if (rc != 0)
        fail_msg("expand '%s' failed: %s", expr, err.msg);
    char got[4096] = "";
    size_t len = 0;
    for (size_t i = 0; i < sv.n; i++)
        len += (size_t)snprintf(got + len, sizeof got - len, "%s%s", i ? " " : "", sv.v[i]);
    assert_string_equal(got, want);
    dr_strvec_free(&sv);
}

static void expect_error(const char *expr, int code, const char *msg)
{
    dr_strvec_t sv = {0};
    dr_err_t err = {0};
    int rc = dr_hostlist_expand(expr, &sv, &err);
    if (rc != code)
        fail_msg("expand '%s': rc %d (want %d), msg '%s'", expr, rc, code, err.msg);
    assert_string_equal(err.msg, msg);
    assert_int_equal(sv.n, 0);
    dr_strvec_free(&sv);
}

static void test_expand_basic(void **state)
{
    (void)state;
    expect_expand("n1", "n1");
    expect_expand("n1,n2,gpu[7-8]", "n1 n2 gpu7 gpu8");
    expect_expand("h100-[001-003,020]", "h100-001 h100-002 h100-003 h100-020");
    expect_expand("a[1-2]b[3-4]", "a1b3 a1b4 a2b3 a2b4");
    expect_expand("n[1-3]-ib", "n1-ib n2-ib n3-ib");
    expect_expand("h[8-11]", "h8 h9 h10 h11");
    expect_expand("h[08-11]", "h08 h09 h10 h11");
    expect_expand("h[098-101]", "h098 h099 h100 h101");
    expect_expand("[1-3]", "1 2 3");
    expect_expand("x[0]", "x0");
    expect_expand("x[5,1-2]", "x5 x1 x2");
    expect_expand("x[1-2,01-02]", "x1 x2 x01 x02");
    expect_expand(" a , b[1-2] ", "a b1 b2");
    expect_expand("leaf[1-2],spine", "leaf1 leaf2 spine");
    expect_expand("r[1-2]n[01-02]", "r1n01 r1n02 r2n01 r2n02");
}

static void test_expand_appends(void **state)
{
    (void)state;
    dr_strvec_t sv = {0};
    dr_err_t err = {0};
    assert_int_equal(dr_hostlist_expand("a[1-2]", &sv, &err), 0);
    assert_int_equal(dr_hostlist_expand("b", &sv, &err), 0);
    assert_int_equal(sv.n, 3);
    assert_string_equal(sv.v[2], "b");
    /* a failing expansion leaves what was there */
    assert_int_equal(dr_hostlist_expand("c[2-1]", &sv, &err), DR_EINVAL);
    assert_int_equal(sv.n, 3);
    dr_strvec_free(&sv);
}

static void test_expand_errors(void **state)
{
    (void)state;
    expect_error("h[3-1]", DR_EINVAL, "hostlist 'h[3-1]': range 3-1 is descending");
    expect_error("h[1-3", DR_EINVAL, "hostlist 'h[1-3': unbalanced '['");
    expect_error("h1-3]", DR_EINVAL, "hostlist 'h1-3]': unbalanced ']'");
    expect_error("h[1-[2]]", DR_EINVAL, "hostlist 'h[1-[2]]': nested '['");
    expect_error("h[]", DR_EINVAL, "hostlist 'h[]': empty range '[]'");
    expect_error("h[1,,2]", DR_EINVAL, "hostlist 'h[1,,2]': empty range in '[1,,2]'");
    expect_error("h[1-]", DR_EINVAL, "hostlist 'h[1-]': empty range bound");
    expect_error("h[-2]", DR_EINVAL, "hostlist 'h[-2]': empty range bound");
    expect_error("h[a-b]", DR_EINVAL, "hostlist 'h[a-b]': 'a' is not a number");
    expect_error("h[1-2x]", DR_EINVAL, "hostlist 'h[1-2x]': '2x' is not a number");
    expect_error("r[1-2]n[a]", DR_EINVAL, "hostlist 'r[1-2]n[a]': 'a' is not a number");
    expect_error("h[1-2-3]", DR_EINVAL, "hostlist 'h[1-2-3]': '2-3' is not a number");
    expect_error("h[1234567890123456789]", DR_EINVAL,
                 "hostlist 'h[1234567890123456789]': '1234567890123456789' has more than 18 "
                 "digits");
    expect_error("", DR_EINVAL, "hostlist '': empty host list");
    expect_error("a,,b", DR_EINVAL, "hostlist 'a,,b': empty host name");
    expect_error("a,", DR_EINVAL, "hostlist 'a,': empty host name");
    expect_error("n[1-1000001]", DR_ELIMIT,
                 "hostlist 'n[1-1000001]': expands to more than 1000000 hosts");
    expect_error("n[1-1001][1-1000]", DR_ELIMIT,
                 "hostlist 'n[1-1001][1-1000]': expands to more than 1000000 hosts");
    expect_error("n[1-500000],m[1-500001]", DR_ELIMIT,
                 "hostlist 'n[1-500000],m[1-500001]': expands to more than 1000000 hosts");
    /* huge products must not overflow into a small count */
    expect_error("n[0-999999999999999999][0-999999999999999999][0-99]", DR_ELIMIT,
                 "hostlist 'n[0-999999999999999999][0-999999999999999999][0-99]': expands to "
                 "more than 1000000 hosts");
    /* the error is found before anything is expanded: a bad term after a big one */
    expect_error("n[1-900000],x[", DR_EINVAL, "hostlist 'n[1-900000],x[': unbalanced '['");
}

static void test_expand_max(void **state)
{
    (void)state;
    dr_strvec_t sv = {0};
    dr_err_t err = {0};
    assert_int_equal(dr_hostlist_expand("n[1-1000][1-1000]", &sv, &err), 0);
    assert_int_equal(sv.n, DR_HOSTLIST_MAX);
    assert_string_equal(sv.v[0], "n11");
    assert_string_equal(sv.v[DR_HOSTLIST_MAX - 1], "n10001000");
    dr_strvec_free(&sv);
}

static void test_expand_long_expr_message(void **state)
{
    (void)state;
    char expr[400];
    memset(expr, 'a', sizeof expr);
    strcpy(expr + 300, "[9-1]");
    dr_strvec_t sv = {0};
    dr_err_t err = {0};
    assert_int_equal(dr_hostlist_expand(expr, &sv, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "...': range 9-1 is descending");
    assert_true(strlen(err.msg) < 200);
}

static void expect_compress(const char *names, const char *want)
{
    dr_strvec_t sv = {0};
    char *copy = strdup(names);
    for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " "))
        assert_int_equal(dr_strvec_push(&sv, tok), 0);
    free(copy);
    char *got = dr_hostlist_compress((const char *const *)sv.v, sv.n);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
    dr_strvec_free(&sv);
}

static void test_compress(void **state)
{
    (void)state;
    expect_compress("", "");
    expect_compress("n1", "n1");
    expect_compress("login", "login");
    expect_compress("n1 n2 n3", "n[1-3]");
    expect_compress("n3 n1 n2", "n[1-3]");
    expect_compress("n1 n1 n2", "n[1-2]");
    expect_compress("h100-001 h100-002 h100-003 h100-004 h100-005 h100-006 h100-007 h100-008 "
                    "h100-009 h100-010 h100-011 h100-012 h100-013 h100-014 h100-015 h100-016 "
                    "h100-020",
                    "h100-[001-016,020]");
    expect_compress("n1-ib n2-ib n3-ib n7-ib", "n[1-3,7]-ib");
    expect_compress("a1b3 a1b4 a2b3 a2b4", "a1b[3-4],a2b[3-4]");
    expect_compress("h8 h9 h10 h11", "h[8-11]");
    expect_compress("h08 h09 h10 h11", "h[08-11]");
    expect_compress("h098 h099 h100 h101", "h[098-101]");
    expect_compress("h1 h01", "h1,h01");
    expect_compress("login n1 n2 gpu1 login", "login,n[1-2],gpu1");
    expect_compress("b2 a1 b1 a2", "b[1-2],a[1-2]");
    expect_compress("n1 m n2 m", "n[1-2],m");
    expect_compress("x0 x1", "x[0-1]");
    expect_compress("n12345678901234567890", "n12345678901234567890");
}

/* expand(compress(expand(x))) == expand(x) as sets. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_roundtrip(const char *expr)
{
    dr_strvec_t a = {0}, b = {0};
    dr_err_t err = {0};
    if (dr_hostlist_expand(expr, &a, &err) != 0)
        fail_msg("expand '%s': %s", expr, err.msg);
    char *c = dr_hostlist_compress((const char *const *)a.v, a.n);
    assert_non_null(c);
    if (dr_hostlist_expand(c, &b, &err) != 0)
        fail_msg("expand of compressed '%s' (from '%s'): %s", c, expr, err.msg);
    qsort(a.v, a.n, sizeof *a.v, cmp_str);
    qsort(b.v, b.n, sizeof *b.v, cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < a.n; i++)
        if (u == 0 || strcmp(a.v[i], a.v[u - 1]) != 0)
            a.v[u++] = a.v[i];
        else
            free(a.v[i]);
    a.n = u;
    if (a.n != b.n)
        fail_msg("round trip of '%s' via '%s': %zu names, then %zu", expr, c, a.n, b.n);
    for (size_t i = 0; i < a.n; i++)
        assert_string_equal(a.v[i], b.v[i]);
    free(c);
    dr_strvec_free(&a);
    dr_strvec_free(&b);
}

static void test_roundtrip(void **state)
{
    (void)state;
    const char *cases[] = {"h100-[001-016,020]",
                           "a[1-2]b[3-4]",
                           "n1,n2,gpu[7-8]",
                           "n[1-3]-ib",
                           "h[8-11],h[08-11],h[0008-0011]",
                           "x[1,1,1],x1",
                           "a[1-3]0b,a[1-3]00b",
                           "r[0-9][0-9]",
                           "n[998-1002],n[0998-1002]",
                           "plain,name,plain",
                           "[1-20],[01-20]",
                           "a[1-100]b[1-3]c",
                           "x999999999999999999,x[999999999999999998]"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_roundtrip(cases[i]);
}

static void test_roundtrip_random(void **state)
{
    (void)state;
    dr_rng_t rng;
    dr_rng_seed(&rng, 42);
    const char *prefixes[] = {"n", "gpu-", "h100-", "", "r1n", "x-"};
    const char *suffixes[] = {"", "-ib", "b", "0"};
    for (int iter = 0; iter < 300; iter++) {
        char expr[1024];
        size_t len = 0;
        int terms = 1 + (int)dr_rng_below(&rng, 4);
        for (int t = 0; t < terms; t++) {
            int w = (int)dr_rng_below(&rng, 4);
            uint64_t lo = dr_rng_below(&rng, 120), hi = lo + dr_rng_below(&rng, 30);
            len += (size_t)snprintf(
                expr + len, sizeof expr - len, "%s%s[%0*llu-%llu,%llu]%s", t ? "," : "",
                prefixes[dr_rng_below(&rng, 6)], w, (unsigned long long)lo, (unsigned long long)hi,
                (unsigned long long)(hi + dr_rng_below(&rng, 5)), suffixes[dr_rng_below(&rng, 4)]);
        }
        check_roundtrip(expr);
    }
}

static void test_compress_large(void **state)
{
    (void)state;
    dr_strvec_t a = {0};
    dr_err_t err = {0};
    assert_int_equal(dr_hostlist_expand("n[1-1000]m[1-1000]", &a, &err), 0);
    char *c = dr_hostlist_compress((const char *const *)a.v, a.n);
    assert_non_null(c);
    assert_memory_equal(c, "n1m[1-1000],n2m[1-1000],", 24);
    free(c);
    dr_strvec_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand_basic),
        cmocka_unit_test(test_expand_appends),
        cmocka_unit_test(test_expand_errors),
        cmocka_unit_test(test_expand_max),
        cmocka_unit_test(test_expand_long_expr_message),
        cmocka_unit_test(test_compress),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_roundtrip_random),
        cmocka_unit_test(test_compress_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
