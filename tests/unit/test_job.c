/* test_job.c - the job state machine, request validation, progress
 * accounting and array ranges. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drover/job.h"
#include "drover/plan.h"
#include "drover/time.h"
#include "testutil.h"

static void test_transitions_table(void **st)
{
    (void)st;
    /* every legal edge, spelled out; everything else must be refused */
    static const struct {
        dr_job_state_t f, t;
    } legal[] = {
        {DR_JOB_PENDING, DR_JOB_STARTING},     {DR_JOB_PENDING, DR_JOB_CANCELLED},
        {DR_JOB_PENDING, DR_JOB_FAILED},       {DR_JOB_STARTING, DR_JOB_RUNNING},
        {DR_JOB_STARTING, DR_JOB_FAILED},      {DR_JOB_STARTING, DR_JOB_CANCELLED},
        {DR_JOB_STARTING, DR_JOB_REQUEUED},    {DR_JOB_STARTING, DR_JOB_PREEMPTED},
        {DR_JOB_RUNNING, DR_JOB_COMPLETING},   {DR_JOB_RUNNING, DR_JOB_PREEMPTED},
        {DR_JOB_RUNNING, DR_JOB_REQUEUED},     {DR_JOB_RUNNING, DR_JOB_CANCELLED},
        {DR_JOB_RUNNING, DR_JOB_FAILED},       {DR_JOB_RUNNING, DR_JOB_TIMEOUT},
        {DR_JOB_COMPLETING, DR_JOB_COMPLETED}, {DR_JOB_COMPLETING, DR_JOB_FAILED},
        {DR_JOB_COMPLETING, DR_JOB_TIMEOUT},   {DR_JOB_COMPLETING, DR_JOB_CANCELLED},
        {DR_JOB_PREEMPTED, DR_JOB_PENDING},    {DR_JOB_PREEMPTED, DR_JOB_CANCELLED},
        {DR_JOB_REQUEUED, DR_JOB_PENDING},     {DR_JOB_REQUEUED, DR_JOB_CANCELLED},
    };
    int nlegal = 0;
    for (int f = 0; f < DR_JOB_NSTATES; f++)
        for (int t = 0; t < DR_JOB_NSTATES; t++) {
            bool want = false;
            for (size_t k = 0; k < sizeof legal / sizeof *legal; k++)
                if (legal[k].f == (dr_job_state_t)f && legal[k].t == (dr_job_state_t)t)
                    want = true;
            if (dr_job_transition_ok(f, t) != want)
                fail_msg("%s -> %s: expected %s", dr_job_state_name(f), dr_job_state_name(t),
                         want ? "legal" : "illegal");
            nlegal += want;
        }
    assert_int_equal(nlegal, (int)(sizeof legal / sizeof *legal));
    /* terminal states have no way out */
    dr_job_state_t term[] = {DR_JOB_COMPLETED, DR_JOB_FAILED, DR_JOB_CANCELLED, DR_JOB_TIMEOUT};
    for (size_t i = 0; i < 4; i++) {
        assert_true(dr_job_state_terminal(term[i]));
        for (int t = 0; t < DR_JOB_NSTATES; t++)
            assert_false(dr_job_transition_ok(term[i], t));
    }
    assert_false(dr_job_state_terminal(DR_JOB_PREEMPTED));
    assert_false(dr_job_transition_ok(DR_JOB_NSTATES, DR_JOB_PENDING));
}

static void test_names(void **st)
{
    (void)st;
    for (int s = 0; s < DR_JOB_NSTATES; s++) {
        dr_job_state_t back;
        assert_int_equal(dr_job_state_parse(dr_job_state_name(s), &back), DR_OK);
        assert_int_equal(back, s);
    }
    dr_job_kind_t k;
    assert_int_equal(dr_job_kind_parse("TRAIN", &k), DR_OK);
    assert_int_equal(k, DR_KIND_TRAIN);
    assert_int_equal(dr_job_kind_parse("training", &k), DR_EINVAL);
    dr_precision_t p;
    assert_int_equal(dr_precision_parse("bf16", &p), DR_OK);
    assert_int_equal(p, DR_PREC_BF16);
    assert_string_equal(dr_job_state_name(DR_JOB_NSTATES), "?");
}

static void test_validate(void **st)
{
    (void)st;
    dr_job_t j;
    dr_job_init(&j);
    dr_err_t err;
    assert_int_equal(dr_job_req_validate(&j.req, &err), DR_OK);
    j.req.gpu_milli = 0;
    assert_int_equal(dr_job_req_validate(&j.req, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "gpu_milli");
    j.req.gpu_milli = 500;
    j.req.gpus_per_node = 2;
    assert_int_equal(dr_job_req_validate(&j.req, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "exactly one GPU");
    j.req.gpus_per_node = 1;
    assert_int_equal(dr_job_req_validate(&j.req, &err), DR_OK);
    j.req.nodes = 0;
    assert_int_equal(dr_job_req_validate(&j.req, &err), DR_EINVAL);
    j.req.gpu_milli = 1000;
    j.req.gpus_per_node = 0;
    assert_int_equal(dr_job_req_validate(&j.req, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "nodes");
    j.req.gpus_per_node = 64;
    assert_int_equal(dr_job_req_validate(&j.req, &err), DR_OK);
    j.req.min_gpu_mem_gb = -1;
    assert_int_equal(dr_job_req_validate(&j.req, &err), DR_EINVAL);
}

static void test_progress(void **st)
{
    (void)st;
    dr_job_t j;
    dr_job_init(&j);
    dr_job_set_rate(&j, 0, 2.0); /* 2 units/s */
    assert_true(dr_job_work_done(&j, dr_time_from_s(10)) == 20.0);
    dr_job_set_rate(&j, dr_time_from_s(10), 0); /* stop: progress is banked */
    assert_true(j.work_done == 20.0);
    assert_true(dr_job_work_done(&j, dr_time_from_s(1000)) == 20.0);
    dr_job_set_rate(&j, dr_time_from_s(1000), 4.0);
    assert_true(dr_job_work_done(&j, dr_time_from_s(1020)) == 100.0);
}

/* What a checkpoint holds: progress at the last start plus every full
 * interval run since. */
static void test_ckpt_progress(void **st)
{
    (void)st;
    dr_job_t j;
    dr_job_init(&j);
    j.work_done = 50; /* restarted from a checkpoint holding 50 */
    dr_job_set_rate(&j, dr_time_from_s(100), 1.0);
    assert_true(dr_job_ckpt_progress(&j, dr_time_from_s(1000)) == 50.0); /* no checkpoints */
    j.ckpt_every = dr_time_from_s(300);
    assert_true(dr_job_ckpt_progress(&j, dr_time_from_s(399)) == 50.0);
    assert_true(dr_job_ckpt_progress(&j, dr_time_from_s(400)) == 350.0);
    assert_true(dr_job_ckpt_progress(&j, dr_time_from_s(1000)) == 50.0 + 900.0);
    dr_job_set_rate(&j, dr_time_from_s(1000), 0); /* stopped: all of it is saved */
    assert_true(dr_job_ckpt_progress(&j, dr_time_from_s(2000)) == 950.0);
}

/* What a stop would lose: the running time since the last checkpoint
 * (since the start without checkpoints); nothing when not running. */
static void test_lost_s(void **st)
{
    (void)st;
    dr_job_t j;
    dr_job_init(&j);
    j.start = dr_time_from_s(100);
    assert_true(dr_job_lost_s(&j, dr_time_from_s(1000)) == 0.0); /* pending */
    j.state = DR_JOB_RUNNING;
    assert_true(dr_job_lost_s(&j, dr_time_from_s(1000)) == 900.0);
    assert_true(dr_job_lost_s(&j, dr_time_from_s(50)) == 0.0);
    j.ckpt_every = dr_time_from_s(300);
    assert_true(dr_job_lost_s(&j, dr_time_from_s(399)) == 299.0);
    assert_true(dr_job_lost_s(&j, dr_time_from_s(400)) == 0.0);
    assert_true(dr_job_lost_s(&j, dr_time_from_s(1000)) == 0.0);
    assert_true(dr_job_lost_s(&j, dr_time_from_s(1060)) == 60.0);
}

static void test_array(void **st)
{
    (void)st;
    uint32_t *idx = NULL, thr = 0;
    size_t n = 0;
    dr_err_t err;
    assert_int_equal(dr_array_parse("0-3,7,10-14:2%5", &idx, &n, &thr, &err), DR_OK);
    uint32_t want[] = {0, 1, 2, 3, 7, 10, 12, 14};
    assert_int_equal(n, 8);
    assert_memory_equal(idx, want, sizeof want);
    assert_int_equal(thr, 5);
    free(idx);
    idx = NULL;
    n = 0;
    const char *bad[] = {"", "a", "3-1", "1-", "1-4:0", "1%0", "1,", "1-2x", "0-20000000"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_not_equal(dr_array_parse(bad[i], &idx, &n, &thr, &err), DR_OK);
        assert_true(strlen(err.msg) > 0);
    }
    free(idx);
}

/* Range arithmetic cannot wrap: a step as large as 2^64-1 once made
 * "100-100:18446744073709551615" count down 100, 99 ... 0 (101 extra tasks,
 * past the task limit); a huge step now gives the start alone.  Numbers
 * over 64 bits and a step of 0 are errors that name the part. */
static void test_array_overflow(void **st)
{
    (void)st;
    uint32_t *idx = NULL, thr = 0;
    size_t n = 0;
    dr_err_t err;
    assert_int_equal(dr_array_parse("0,10,100-100:18446744073709551615", &idx, &n, &thr, &err),
                     DR_OK);
    uint32_t want3[] = {0, 10, 100};
    assert_int_equal(n, 3);
    assert_memory_equal(idx, want3, sizeof want3);
    free(idx);
    idx = NULL, n = 0;
    assert_int_equal(dr_array_parse("7-10000000:18446744073709551615", &idx, &n, &thr, &err),
                     DR_OK);
    assert_int_equal(n, 1);
    assert_int_equal(idx[0], 7);
    free(idx);
    idx = NULL, n = 0;
    /* the last index is reached exactly, and a step just past it stops */
    assert_int_equal(dr_array_parse("0-10000000:5000000,3-9:7", &idx, &n, &thr, &err), DR_OK);
    uint32_t want4[] = {0, 5000000, 10000000, 3};
    assert_int_equal(n, 4);
    assert_memory_equal(idx, want4, sizeof want4);
    free(idx);
    idx = NULL, n = 0;

    struct {
        const char *spec;
        int rc;
        const char *want;
    } bad[] = {
        {"0-9:18446744073709551616", DR_EINVAL, "step '18446744073709551616' is too large"},
        {"0-9:99999999999999999999", DR_EINVAL, "step '99999999999999999999' is too large"},
        {"18446744073709551616", DR_EINVAL, "range start '18446744073709551616' is too large"},
        {"1-18446744073709551616", DR_EINVAL, "range end '18446744073709551616' is too large"},
        {"1%18446744073709551616", DR_EINVAL, "throttle '18446744073709551616' is too large"},
        {"1%4294967296", DR_EINVAL, "throttle 4294967296 is above 4294967295"},
        {"0-4:0", DR_EINVAL, "step must be >= 1"},
        {"0-4:", DR_EINVAL, "expected a number for the step at the end"},
        {"0-:2", DR_EINVAL, "expected a number for the range end at ':2'"},
        {"10000001", DR_ELIMIT, "index 10000001 is above the limit 10000000"},
        {"18446744073709551615", DR_ELIMIT, "index 18446744073709551615 is above the limit"},
        {"0-1000000", DR_ELIMIT, "more than 1000000 tasks"},
        {"0-999999,5,6", DR_ELIMIT, "more than 1000000 tasks"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        idx = NULL, n = 0;
        assert_int_equal(dr_array_parse(bad[i].spec, &idx, &n, &thr, &err), bad[i].rc);
        tu_assert_contains(err.msg, bad[i].want);
        tu_assert_contains(err.msg, bad[i].spec);
        free(idx);
    }
    /* the limit is checked before allocating: nothing is appended */
    idx = NULL, n = 0;
    assert_int_equal(dr_array_parse("0-10000000", &idx, &n, &thr, &err), DR_ELIMIT);
    assert_null(idx);
    assert_int_equal(n, 0);
}

static void test_duration(void **st)
{
    (void)st;
    dr_time_t t;
    assert_int_equal(dr_duration_parse("90", &t), DR_OK);
    assert_true(t == 90 * DR_NSEC_PER_SEC);
    assert_int_equal(dr_duration_parse("15m", &t), DR_OK);
    assert_true(t == 900 * DR_NSEC_PER_SEC);
    assert_int_equal(dr_duration_parse("1:30:00", &t), DR_OK);
    assert_true(t == 5400 * DR_NSEC_PER_SEC);
    assert_int_equal(dr_duration_parse("2-12:00:00", &t), DR_OK);
    assert_true(t == (2 * 86400 + 12 * 3600) * DR_NSEC_PER_SEC);
    assert_int_equal(dr_duration_parse("1.5h", &t), DR_OK);
    assert_true(t == 5400 * DR_NSEC_PER_SEC);
    const char *bad[] = {"", "x", "-5", "5q", "1:2:3:4", "::", "1-", "1e300"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(dr_duration_parse(bad[i], &t), DR_EINVAL);
}

/* One parser for every duration (options, config, traces, the planner):
 * the union of the units the planner and the rest once accepted apart -
 * us, ms, s, m, h, d, w, mo, y and their long forms, case ignored - with
 * "m" minutes and "mo" months, beside Slurm's colon forms. */
static void test_duration_units(void **st)
{
    (void)st;
    struct {
        const char *s;
        long long ns;
    } ok[] = {
        {"250us", 250000LL},
        {"200ms", 200000000LL},
        {"1500MS", 1500000000LL},
        {"90s", 90 * DR_NSEC_PER_SEC},
        {"15m", 900 * DR_NSEC_PER_SEC},
        {"15M", 900 * DR_NSEC_PER_SEC},
        {"2h", 7200 * DR_NSEC_PER_SEC},
        {"3d", 3 * 86400 * DR_NSEC_PER_SEC},
        {"2w", 14 * 86400 * DR_NSEC_PER_SEC},
        {"2wk", 14 * 86400 * DR_NSEC_PER_SEC},
        {"1weeks", 7 * 86400 * DR_NSEC_PER_SEC},
        {"4mo", 4 * 2629800 * DR_NSEC_PER_SEC}, /* 30.4375 days each */
        {"1Month", 2629800 * DR_NSEC_PER_SEC},
        {"18months", 18 * 2629800 * DR_NSEC_PER_SEC},
        {"1y", 31557600 * DR_NSEC_PER_SEC}, /* 365.25 days */
        {"2yr", 2 * 31557600 * DR_NSEC_PER_SEC},
        {"0.5w", 302400 * DR_NSEC_PER_SEC},
        {"1e2y", 3155760000LL * DR_NSEC_PER_SEC},
        {" 2w ", 14 * 86400 * DR_NSEC_PER_SEC},
        {"30:00", 1800 * DR_NSEC_PER_SEC},
        {"2-12", (2 * 86400 + 12 * 3600) * DR_NSEC_PER_SEC},
        {"1-00:30", (86400 + 1800) * DR_NSEC_PER_SEC},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        dr_time_t t = -1;
        dr_err_t err = {0};
        if (dr_duration_parse_err(ok[i].s, &t, &err) != DR_OK)
            fail_msg("'%s' refused: %s", ok[i].s, err.msg);
        if (t != ok[i].ns)
            fail_msg("'%s' is %lld ns, not %lld", ok[i].s, (long long)t, ok[i].ns);
        /* the planner's parser is the same one, in seconds */
        double sec = -1;
        assert_int_equal(dr_plan_parse_duration(ok[i].s, &sec), DR_OK);
        assert_true(fabs(sec - dr_time_to_s(t)) <= 1e-12 * (sec > 1 ? sec : 1));
    }
    struct {
        const char *s, *want;
    } bad[] = {
        {"5mm", "unknown unit 'mm' (ms, s, m, h, d, w, mo or y)"},
        {"5mos", "unknown unit 'mos'"},
        {"2 w", "unknown unit ' w'"},
        {"3min", "unknown unit 'min'"},
        {"1ys", "unknown unit 'ys'"},
        {"300y", "is too long"},
        {"-2w", "is negative"},
        {"w", "is not a number"},
        {"2w:00", "minutes: '2w' is not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        dr_time_t t = 0;
        dr_err_t err = {0};
        if (dr_duration_parse_err(bad[i].s, &t, &err) != DR_EINVAL)
            fail_msg("'%s' was accepted (%lld ns)", bad[i].s, (long long)t);
        tu_assert_contains(err.msg, bad[i].want);
        double sec;
        assert_int_equal(dr_plan_parse_duration(bad[i].s, &sec), DR_EINVAL);
    }
}

/* Every part of a duration is a finite, non-negative decimal number: "nan"
 * as the days of "nan-01:00:00" once went through strtod into an int64
 * conversion (undefined; in practice "no limit"), "inf" and "1e400" meant
 * no limit, and "0x10:00" was 16 minutes. */
static void test_duration_strict(void **st)
{
    (void)st;
    dr_time_t t = 0;
    dr_err_t err;
    struct {
        const char *s, *want;
    } bad[] = {
        {"nan-01:00:00", "days: 'nan' is not a number"},
        {"inf-01:00:00", "days: 'inf' is not a number"},
        {"NaN-1", "days: 'NaN' is not a number"},
        {"1-nan", "hours: 'nan' is not a number"},
        {"1-inf:00", "hours: 'inf' is not a number"},
        {"nan:00", "minutes: 'nan' is not a number"},
        {"1:nan", "seconds: 'nan' is not a number"},
        {"1:30:nan", "seconds: 'nan' is not a number"},
        {"1:00:-5", "seconds: '-5' is not a number"},
        {"0x10:00", "minutes: '0x10' is not a number"},
        {"1e400:00", "minutes: '1e400' is not a number"},
        {"1:00:1e400", "seconds: '1e400' is not a number"},
        {"99999999999-00:00:00", "days: '99999999999' is too large"},
        {"1:99999999999:00", "minutes: '99999999999' is too large"},
        {"0-2500000:00:01", "is too long (at most 9000000000 seconds)"},
        {"104167-00:00:00", "is too long"},
        {"-01:00:00", "'-01:00:00' is negative"},
        {"-0", "is negative"},
        {"nan", "'nan' is not a number"},
        {"inf", "'inf' is not a number"},
        {"infinity", "'infinity' is not a number"},
        {"1e400", "value: '1e400' is too large"},
        {"1e10", "value: '1e10' is too large"},
        {"0x1p3", "unknown unit 'x1p3'"},
        {"+5", "value: '+5' is not a number"},
        {"2600000h", "is too long"},
        {"5q", "unknown unit 'q'"},
        {"1:2:3:4", "more than three ':' parts"},
        {"1-", "hours: missing"},
        {"", "empty duration"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&err, 0, sizeof err);
        if (dr_duration_parse_err(bad[i].s, &t, &err) != DR_EINVAL)
            fail_msg("'%s' was accepted (%lld ns)", bad[i].s, (long long)t);
        tu_assert_contains(err.msg, bad[i].want);
        assert_int_equal(dr_duration_parse(bad[i].s, &t), DR_EINVAL);
    }
    /* what is still accepted: fractions, exponents in the plain form, the
     * largest duration exactly, surrounding blanks */
    assert_int_equal(dr_duration_parse_err("1:30.5", &t, &err), DR_OK);
    assert_true(t == 90500000000LL);
    assert_int_equal(dr_duration_parse_err("1.5-00:00", &t, &err), DR_OK);
    assert_true(t == 129600 * DR_NSEC_PER_SEC);
    assert_int_equal(dr_duration_parse_err(".5h", &t, &err), DR_OK);
    assert_true(t == 1800 * DR_NSEC_PER_SEC);
    assert_int_equal(dr_duration_parse_err("1e3", &t, &err), DR_OK);
    assert_true(t == 1000 * DR_NSEC_PER_SEC);
    assert_int_equal(dr_duration_parse_err("0-2500000:00:00", &t, &err), DR_OK);
    assert_true(t == 9000000000LL * DR_NSEC_PER_SEC);
    assert_int_equal(dr_duration_parse_err(" 2-12 ", &t, &err), DR_OK);
    assert_true(t == (2 * 86400 + 12 * 3600) * DR_NSEC_PER_SEC);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transitions_table),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_ckpt_progress),
        cmocka_unit_test(test_lost_s),
        cmocka_unit_test(test_array),
        cmocka_unit_test(test_array_overflow),
        cmocka_unit_test(test_duration_strict),
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_duration_units),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
