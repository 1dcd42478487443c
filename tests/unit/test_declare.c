/* test_declare.c - what simulated users declare (dr_workload_declare):
 * each size mode, padded walltime limits, checkpoint intervals. */
#include <math.h>
#include <string.h>

#include "drover/declare.h"
#include "drover/workload.h"
#include "testutil.h"

#define N 4000

static void make(dr_workload_t *wl)
{
    dr_workload_init(wl);
    for (int i = 0; i < N; i++) {
        dr_job_t j;
        dr_job_init(&j);
        j.id = (uint64_t)i + 1;
        j.kind = i % 2 ? DR_KIND_TRAIN : DR_KIND_BATCH;
        if (i == 7)
            j.time_limit = dr_time_from_s(5); /* the trace's own limit */
        assert_int_equal(dr_workload_add(wl, &j, 100.0 * (1 + i % 50), NULL), DR_OK);
    }
}

static void test_modes(void **st)
{
    (void)st;
    dr_declare_opts_t o;
    dr_declare_opts_default(&o);
    assert_int_equal(o.mode, DR_SIZE_LOGNORMAL);
    assert_true(o.sigma == 1 && o.walltime_factor == 2);
    dr_err_t err;
    dr_workload_t wl;

    /* lognormal:0.5: ln(declared / true) has mean ~0 and s.d. ~0.5 */
    make(&wl);
    assert_int_equal(dr_size_mode_parse("lognormal:0.5", &o, &err), DR_OK);
    assert_int_equal(dr_workload_declare(&wl, &o, &err), DR_OK);
    double s1 = 0, s2 = 0;
    for (int i = 0; i < N; i++) {
        double l = log(wl.jobs[i].work_declared / wl.work[i]);
        s1 += l, s2 += l * l;
        if (i != 7) /* padded: never below factor x the run time (class 0: rate 1) */
            assert_true(dr_time_to_s(wl.jobs[i].time_limit) >= 2 * wl.work[i] - 1e-6);
        assert_true(wl.jobs[i].ckpt_every == (i % 2 ? dr_time_from_s(1800) : 0));
    }
    assert_true(fabs(s1 / N) < 0.03);
    assert_true(fabs(sqrt(s2 / N - (s1 / N) * (s1 / N)) - 0.5) < 0.03);
    assert_true(wl.jobs[7].time_limit == dr_time_from_s(5)); /* the trace's limit is kept */
    dr_workload_free(&wl);

    /* exact: the truth (a reference); none: nothing, not even limits */
    make(&wl);
    assert_int_equal(dr_size_mode_parse("exact", &o, &err), DR_OK);
    assert_int_equal(dr_workload_declare(&wl, &o, &err), DR_OK);
    for (int i = 0; i < N; i++)
        assert_true(wl.jobs[i].work_declared == wl.work[i]);
    dr_workload_free(&wl);
    make(&wl);
    assert_int_equal(dr_size_mode_parse("none", &o, &err), DR_OK);
    assert_int_equal(dr_workload_declare(&wl, &o, &err), DR_OK);
    for (int i = 0; i < N; i++) {
        assert_true(wl.jobs[i].work_declared == 0);
        assert_true(i == 7 || wl.jobs[i].time_limit == 0);
    }
    dr_workload_free(&wl);

    /* bad modes are named */
    assert_int_equal(dr_size_mode_parse("lognormal:abc", &o, &err), DR_EINVAL);
    assert_non_null(strstr(err.msg, "lognormal:S"));
    assert_int_equal(dr_size_mode_parse("guess", &o, &err), DR_EINVAL);
    assert_non_null(strstr(err.msg, "exact, lognormal:S, none, trace"));
    char b[32];
    o.mode = DR_SIZE_LOGNORMAL;
    o.sigma = 0.5;
    assert_string_equal(dr_size_mode_format(&o, b, sizeof b), "lognormal:0.5");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_modes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
