/* test_resilience.c - the failure and checkpoint model (resilience.h):
 * checkpoint size and write time, the Young-Daly interval where it is not
 * clamped, its floor and rounding to whole steps, the effective fraction
 * at Llama 3's scale (> 90% reported) and its fall with slow storage and
 * more GPUs. */
#include "testutil.h"

#include <math.h>

#include "drover/resilience.h"

static void test_llama3_scale(void **state)
{
    (void)state;
    dr_res_in_t in = {.params = 405e9, .gpus = 16384, .nodes = 2048, .step_s = 7.0};
    in.restart_s = dr_res_launch_s(in.gpus, in.nodes);
    dr_res_t r;
    dr_res_eval(&in, &r);
    /* 405e9 x 14 bytes = 5.67 TB at the 2 TB/s cap */
    assert_true(fabs(r.ckpt_bytes - 5.67e12) < 1e9);
    assert_true(fabs(r.storage_gbs - DR_RES_MAX_GBS) < 1e-9);
    assert_true(fabs(r.write_s - 2.835) < 0.01);
    /* one interruption per 50,700 GPU-hours: 16,384 GPUs fail every 3.09 h */
    assert_true(fabs(r.job_mtbf_s - 50700.0 * 3600 / 16384) < 1);
    /* Llama 3 kept more than 90% effective training time */
    assert_true(r.effective > 0.90 && r.effective < 0.96);
    /* the interval is a whole number of steps, at least the floor */
    assert_true(r.interval_s >= DR_RES_MIN_INTERVAL_S);
    assert_true(fabs(r.interval_s - r.interval_steps * 7.0) < 1e-6);
    assert_true(fabs(r.effective - 1 / (1 + r.ckpt_frac + r.fail_frac)) < 1e-12);
}

static void test_young_daly(void **state)
{
    (void)state;
    /* slow shared storage (the seed's "NFS was 40x slower"): 50 GB/s for a
     * 175B model on 1024 GPUs - the interval is Young's sqrt(2 delta M) */
    dr_res_in_t in = {.params = 175e9, .gpus = 1024, .nodes = 128, .storage_gbs = 50};
    dr_res_t r;
    dr_res_eval(&in, &r);
    double delta = 175e9 * 14 / 50e9, m = 50700.0 * 3600 / 1024;
    assert_true(fabs(r.write_s - delta) < 1e-9);
    assert_true(fabs(r.interval_s - sqrt(2 * delta * m)) < 1e-6);
    assert_true(r.interval_steps == 0); /* no step time given: not rounded */
    /* the optimum: a longer or shorter interval loses more */
    double best = r.ckpt_frac + r.fail_frac;
    for (double f = 0.5; f <= 2.0; f += 1.5) {
        double tau = r.interval_s * f;
        assert_true(delta / tau + (r.restart_s + tau / 2) / m > best);
    }
    /* slower storage and more GPUs both cost effective time */
    dr_res_t slow, big;
    in.storage_gbs = 5;
    dr_res_eval(&in, &slow);
    assert_true(slow.effective < r.effective);
    in.storage_gbs = 50;
    in.gpus = 8192;
    dr_res_eval(&in, &big);
    assert_true(big.effective < r.effective);
}

static void test_small_job(void **state)
{
    (void)state;
    /* one GPU, 7B: no launch initialisation, failures are rare, the floor
     * and defaults apply */
    dr_res_in_t in = {.params = 7e9};
    dr_res_t r;
    dr_res_eval(&in, &r);
    assert_true(fabs(r.storage_gbs - DR_RES_NODE_GBS) < 1e-9);
    assert_true(r.effective > 0.999);
    assert_true(dr_res_launch_s(1, 1) == DR_RES_PROC_S);
    assert_true(dr_res_launch_s(64, 8) > dr_res_launch_s(8, 1));
    /* a given checkpoint size and MTBF override the defaults */
    in.ckpt_bytes = 1e12;
    in.gpu_mtbf_h = 1000;
    dr_res_eval(&in, &r);
    assert_true(fabs(r.write_s - 500) < 1e-9);
    assert_true(fabs(r.job_mtbf_s - 3.6e6) < 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama3_scale),
        cmocka_unit_test(test_young_daly),
        cmocka_unit_test(test_small_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
