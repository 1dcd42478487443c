/* test_perf_learn.c - what a live scheduler knows of a job's speed on each
 * GPU type before and after its runs: the catalog prior (never all equal),
 * declared speeds (parsed, matched, the undeclared types scaled), and the
 * estimator that replaces the prior as runs come in (perf_learn.h). */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/perf_learn.h"
#include "drover/perf_prior.h"

static void make_cluster(dr_cluster_t *c, dr_catalog_t *cat)
{
    dr_err_t err = {0};
    assert_int_equal(dr_catalog_builtin(cat, &err), DR_OK);
    dr_cluster_init(c);
    const char *names[] = {"H100", "A100", "L4"};
    for (int i = 0; i < 3; i++) {
        int t = dr_cluster_add_type(c, dr_catalog_find(cat, names[i]), &err);
        assert_int_equal(t, i);
    }
}

static void test_speeds_parse(void **state)
{
    (void)state;
    dr_speeds_t s;
    dr_err_t err = {0};
    assert_int_equal(dr_speeds_parse("H100=1,A100=0.45,L4=0", &s, &err), DR_OK);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.name[1], "A100");
    assert_true(s.speed[1] == 0.45);
    const struct {
        const char *in, *msg;
    } bad[] = {
        {"", "speeds: empty"},
        {"H100", "'H100' is not TYPE=SPEED"},
        {"H100=fast", "'H100=fast': the speed must be a number"},
        {"H100=-1", "must be from 0 to"},
        {"H100=1,h100=2", "H100 is named twice"},
        {"H100=0", "every speed is 0"},
        {"H1 00=1", "letters, digits"},
        {"H100=1,", "ends with ','"},
        {"H100=inf", "the speed must be a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err = (dr_err_t){0};
        assert_int_equal(dr_speeds_parse(bad[i].in, &s, &err), DR_EINVAL);
        tu_assert_contains(err.msg, bad[i].msg);
    }
}

static void test_catalog_prior(void **state)
{
    (void)state;
    dr_cluster_t c;
    dr_catalog_t cat;
    make_cluster(&c, &cat);
    double r[3];
    uint8_t src[3];
    dr_perf_prior_catalog(&c, DR_KIND_BATCH, DR_PREC_UNSET, r, src);
    assert_true(r[0] == 1.0); /* H100 the fastest: 989 dense BF16 TFLOPS */
    assert_true(fabs(r[1] - 312.0 / 989) < 1e-9);
    assert_true(fabs(r[2] - 121.0 / 989) < 1e-9);
    assert_int_equal(src[2], DR_PRIOR_CATALOG);
    /* services: memory bandwidth (3.35, 2.039, 0.3 TB/s) */
    dr_perf_prior_catalog(&c, DR_KIND_SERVE, DR_PREC_UNSET, r, src);
    assert_true(fabs(r[1] - 2.039 / 3.35) < 1e-9);
    assert_true(fabs(r[2] - 0.3 / 3.35) < 1e-9);
    /* a type without figures gets the median of the known */
    dr_gpu_spec_t odd;
    dr_gpu_spec_unknown(&odd, "Mystery");
    dr_err_t err = {0};
    assert_int_equal(dr_cluster_add_type(&c, &odd, &err), 3);
    double r4[4];
    uint8_t s4[4];
    dr_perf_prior_catalog(&c, DR_KIND_BATCH, DR_PREC_BF16, r4, s4);
    assert_true(fabs(r4[3] - 312.0 / 989) < 1e-9);
    assert_int_equal(s4[3], DR_PRIOR_UNKNOWN);
    dr_gpu_spec_free(&odd);
    dr_cluster_free(&c);
    dr_catalog_free(&cat);
}

static void test_declared(void **state)
{
    (void)state;
    dr_cluster_t c;
    dr_catalog_t cat;
    make_cluster(&c, &cat);
    double prior[3], r[3];
    uint8_t src[3];
    dr_perf_prior_catalog(&c, DR_KIND_BATCH, DR_PREC_UNSET, prior, src);
    dr_speeds_t s;
    dr_err_t err = {0};
    /* L4 not named: the catalog's ratio to the named ones, on their scale */
    assert_int_equal(dr_speeds_parse("H100=2,A100=1", &s, &err), DR_OK);
    assert_int_equal(dr_perf_prior_declared(&c, &cat, &s, prior, r, src, &err), DR_OK);
    assert_true(r[0] == 2 && r[1] == 1);
    double scale = sqrt(2.0 / prior[0] * 1.0 / prior[1]);
    assert_true(fabs(r[2] - prior[2] * scale) < 1e-9);
    assert_int_equal(src[0], DR_PRIOR_DECLARED);
    assert_int_equal(src[2], DR_PRIOR_SCALED);
    /* a catalog GPU this cluster lacks is passed over; 0 excludes a type */
    assert_int_equal(dr_speeds_parse("B200=4,H100=1,L4=0", &s, &err), DR_OK);
    assert_int_equal(dr_perf_prior_declared(&c, &cat, &s, prior, r, src, &err), DR_OK);
    assert_true(r[2] == 0);
    assert_int_equal(src[2], DR_PRIOR_NONE);
    /* a name nobody knows is refused; so is a declaration of no type here */
    assert_int_equal(dr_speeds_parse("H10O=1", &s, &err), DR_OK);
    assert_int_equal(dr_perf_prior_declared(&c, &cat, &s, prior, r, src, &err), DR_EINVAL);
    tu_assert_contains(err.msg,
                       "H10O is neither a GPU type of this cluster nor one drover's catalog");
    assert_int_equal(dr_speeds_parse("B200=1", &s, &err), DR_OK);
    assert_int_equal(dr_perf_prior_declared(&c, &cat, &s, prior, r, src, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "names no GPU type of this cluster");
    dr_cluster_free(&c);
    dr_catalog_free(&cat);
}

/* The estimator: the prior alone; one type's runs carried to the others by
 * the prior's ratios; a type's own runs taking over from a wrong prior. */
static void test_estimate(void **state)
{
    (void)state;
    double prior[3] = {1.0, 0.5, 0.25};
    dr_perf_obs_t obs[3] = {{0}};
    dr_perf_est_t e;
    dr_perf_estimate(prior, DR_PERF_TAU_CATALOG, obs, 3, &e);
    assert_int_equal(e.ref, 0);
    assert_true(e.rate[1] == 0.5 && e.size == 0 && e.runs == 0);
    assert_int_equal(e.basis[2], DR_PERF_PRIOR);
    /* 100 s runs on type 1: type 0 is predicted at 50 s, type 2 at 200 s */
    for (int i = 0; i < 4; i++)
        dr_perf_obs_add(&obs[1], 100);
    dr_perf_estimate(prior, DR_PERF_TAU_CATALOG, obs, 3, &e);
    assert_int_equal(e.basis[1], DR_PERF_OBSERVED);
    assert_int_equal(e.basis[0], DR_PERF_VIA);
    assert_true(fabs(e.run_s[1] - 100) < 1e-6);
    assert_true(fabs(e.run_s[0] - 50) < 1e-6);
    assert_true(fabs(e.run_s[2] - 200) < 1e-6);
    assert_true(fabs(e.size - 50) < 1e-6);  /* work in seconds on the reference */
    assert_true(e.spread[1] < e.spread[0]); /* its own runs are surer than the ratio */
    /* the truth: type 2 is as fast as type 1 (the prior was 2x off); its own
     * runs pull it there, more with each run */
    double prev = 1e9;
    for (int i = 1; i <= 8; i++) {
        dr_perf_obs_add(&obs[2], 100);
        dr_perf_estimate(prior, DR_PERF_TAU_CATALOG, obs, 3, &e);
        assert_true(e.run_s[2] < prev);
        prev = e.run_s[2];
    }
    assert_true(e.run_s[2] < 105); /* eight runs of its own: nearly 100 s */
    assert_true(fabs(e.rate[2] / e.rate[1] - 1) < 0.06);
    /* a type with prior 0 that has runs is estimated from them */
    double p0[2] = {1.0, 0.0};
    dr_perf_obs_t o2[2] = {{0}};
    dr_perf_obs_add(&o2[1], 10);
    dr_perf_estimate(p0, DR_PERF_TAU_DECLARED, o2, 2, &e);
    assert_true(fabs(e.run_s[1] - 10) < 1e-6);
    assert_int_equal(e.basis[0], DR_PERF_NONE);
    assert_int_equal(e.ref, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speeds_parse),
        cmocka_unit_test(test_catalog_prior),
        cmocka_unit_test(test_declared),
        cmocka_unit_test(test_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
