/* test_gavel.c - Gavel's FIFO (gavel_fifo) never binds a job to a GPU type
 * it cannot run on.  Gavel's FIFOPolicy assigns a stale loop variable (the
 * last type in sorted order with room) instead of the type it draws, and
 * hands the type of a job that ended to the head of the queue without asking
 * whether the head can run there; drover reproduces both, because Gavel's
 * published FIFO figures measured them, but a job bound to a type whose
 * nodes cannot hold it or where it runs at rate 0 never starts and the
 * simulator spins empty 360 s rounds for ever (13 jobs on 5 of Gavel's msr
 * traces, 25.6 million passes each).  Each scenario runs with a 30-day
 * horizon so that a regression fails instead of spinning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/cluster.h"
#include "drover/sim.h"
#include "drover/workload.h"
#include "testutil.h"

/* Parse a Gavel trace (no walltime limits) and bind it to c. */
static void gavel_jobs(dr_workload_t *wl, const dr_cluster_t *c, const char *text)
{
    dr_trace_opts_t to;
    dr_trace_opts_default(&to);
    dr_workload_init(wl);
    dr_err_t err;
    if (dr_trace_parse(DR_TRACE_GAVEL, "t.trace", text, strlen(text), &to, wl, &err) != DR_OK ||
        dr_workload_bind(wl, c, false, &err) != DR_OK)
        fail_msg("%s", err.msg);
}

/* policy on wl, ledger audited, stopped at 30 days at the latest. */
static void run_policy(const char *policy, const dr_cluster_t *c, const dr_workload_t *wl,
                       dr_sim_result_t *r)
{
    dr_sim_opts_t o;
    dr_sim_opts_default(&o);
    o.policy = policy;
    o.audit = true;
    o.horizon = dr_time_from_s(30 * 86400.0);
    dr_err_t err;
    if (dr_sim_run(c, wl, &o, r, &err) != DR_OK)
        fail_msg("%s: %s", policy, err.msg);
}

static void run_fifo(const dr_cluster_t *c, const dr_workload_t *wl, dr_sim_result_t *r)
{
    run_policy("gavel_fifo", c, wl, r);
}

/* The GPU type job `id` held on its first start (-1 if it never started). */
static int start_type(const dr_sim_result_t *r, uint64_t id)
{
    for (size_t i = 0; i < r->log.n; i++) {
        const dr_event_t *e = &r->log.ev[i];
        if (e->job == id && e->to == DR_JOB_STARTING)
            return e->type;
    }
    return -1;
}

static void assert_completed(const dr_sim_result_t *r, uint64_t id)
{
    const dr_job_t *j = tu_job(r, id);
    if (j->state != DR_JOB_COMPLETED)
        fail_msg("job %llu ended %s after %llu passes", (unsigned long long)id,
                 dr_job_state_name(j->state), (unsigned long long)r->stats.passes);
}

/* The stale type cannot hold the job: one V100 server and two P100 servers
 * (one GPU each, as in Gavel's cluster).  A 2-GPU job finds the V100 last
 * in sorted order with one GPU free, and the P100s the only type with room
 * for it.  Gavel binds it to the V100, where it could never run; it must
 * get the drawn type, the P100s.  The 1-GPU job behind it keeps Gavel's
 * binding, the V100. */
static void test_fifo_stale_type_cannot_host(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=v0 Gpus=V100-SXM2-16GB:1 Cpus=8 MemGB=61\n"
                   "NodeName=p[1-2] Gpus=P100-16GB:1 Cpus=8 MemGB=61\n");
    int v100 = dr_cluster_find_type(&c, "V100-SXM2-16GB"),
        p100 = dr_cluster_find_type(&c, "P100-16GB");
    /* 600 s each: ResNet-18 x2 on the P100s, x1 on the V100 */
    dr_workload_t wl;
    gavel_jobs(&wl, &c,
               "ResNet-18 (batch size 16)\tcmd\t-n\t1\t36546.4\t0.000000\t2\n"
               "ResNet-18 (batch size 16)\tcmd\t-n\t1\t19412.0\t0.000000\t1\n");
    assert_int_equal(dr_cluster_hostable_types(&c, &wl.jobs[0].req), 1ULL << p100);
    dr_sim_result_t r;
    run_fifo(&c, &wl, &r);
    assert_completed(&r, 1);
    assert_completed(&r, 2);
    assert_int_equal(start_type(&r, 1), p100);
    assert_int_equal(start_type(&r, 2), v100);
    assert_int_equal(tu_job(&r, 1)->nstarts, 1);
    assert_true(tu_job(&r, 1)->end <= dr_time_from_s(720)); /* the second round at most */
    if (r.stats.passes > 50)
        fail_msg("%llu passes for two 600 s jobs", (unsigned long long)r.stats.passes);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* A job that ended on a K80 hands it to the head of the queue, a 2-GPU
 * ResNet-50 (batch size 128) that runs at rate 0 on K80s.  Two K80 and two
 * V100 servers; at t = 0 jobs 1 and 2 (5 h) take the V100s and job 3
 * (1,000 s) a K80 (with seed 0 the second draw drops the V100s from the
 * list), and job 4 finds no room.  At the first re-allocation (2,160 s)
 * job 3's K80 is freed: job 4 must not take it; it runs on the V100s once
 * jobs 1 and 2 end. */
static void test_fifo_freed_type_rate_zero(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=k[1-2] Gpus=K80-12GB:1 Cpus=4 MemGB=61\n"
                   "NodeName=v[1-2] Gpus=V100-SXM2-16GB:1 Cpus=8 MemGB=61\n");
    int k80 = dr_cluster_find_type(&c, "K80-12GB"),
        v100 = dr_cluster_find_type(&c, "V100-SXM2-16GB");
    dr_workload_t wl;
    gavel_jobs(&wl, &c,
               "ResNet-18 (batch size 16)\tcmd\t-n\t1\t582361.2\t0.000000\t1\n"
               "ResNet-18 (batch size 16)\tcmd\t-n\t1\t582361.2\t0.000000\t1\n"
               "ResNet-18 (batch size 16)\tcmd\t-n\t1\t4795.3\t0.000000\t1\n"
               "ResNet-50 (batch size 128)\tcmd\t-n\t1\t15202.8\t0.000000\t2\n");
    dr_sim_result_t r;
    run_fifo(&c, &wl, &r);
    for (uint64_t id = 1; id <= 4; id++)
        assert_completed(&r, id);
    /* the scenario: job 3 ran on a K80 and ended while job 4 waited */
    assert_int_equal(start_type(&r, 1), v100);
    assert_int_equal(start_type(&r, 2), v100);
    assert_int_equal(start_type(&r, 3), k80);
    assert_true(tu_job(&r, 4)->first_start > tu_job(&r, 3)->end);
    assert_int_equal(start_type(&r, 4), v100);
    assert_true(tu_job(&r, 4)->end < dr_time_from_s(8 * 3600.0));
    if (r.stats.passes > 200)
        fail_msg("%llu passes for a 6 h run", (unsigned long long)r.stats.passes);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* The head keeps its place when the freed type is one it cannot use: four
 * K80 and two V100 servers.  At t = 0 job 1 (4 GPUs, more than the V100s
 * have) takes the K80s and jobs 2 and 3 the V100s; job 4, the ResNet-50 x2,
 * waits.  All three end at 1,000 s, so the re-allocation at 2,160 s hands
 * out the K80s (job 1, the lowest id) first, then the V100s.  Had job 4
 * left the queue with the K80s, as a head does that does not fit, the
 * V100s would find nobody at the head and nothing would ever re-allocate
 * again: job 4 must take the V100s then. */
static void test_fifo_head_keeps_place(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=k[1-4] Gpus=K80-12GB:1 Cpus=4 MemGB=61\n"
                   "NodeName=v[1-2] Gpus=V100-SXM2-16GB:1 Cpus=8 MemGB=61\n");
    int k80 = dr_cluster_find_type(&c, "K80-12GB"),
        v100 = dr_cluster_find_type(&c, "V100-SXM2-16GB");
    dr_workload_t wl;
    gavel_jobs(&wl, &c,
               "ResNet-18 (batch size 16)\tcmd\t-n\t1\t16121.3\t0.000000\t4\n"
               "ResNet-18 (batch size 16)\tcmd\t-n\t1\t32353.4\t0.000000\t1\n"
               "ResNet-18 (batch size 16)\tcmd\t-n\t1\t32353.4\t0.000000\t1\n"
               "ResNet-50 (batch size 128)\tcmd\t-n\t1\t15202.8\t0.000000\t2\n");
    dr_sim_result_t r;
    run_fifo(&c, &wl, &r);
    for (uint64_t id = 1; id <= 4; id++)
        assert_completed(&r, id);
    assert_int_equal(start_type(&r, 1), k80);
    assert_int_equal(start_type(&r, 2), v100);
    assert_int_equal(start_type(&r, 3), v100);
    assert_int_equal(start_type(&r, 4), v100);
    /* started at the 2,160 s re-allocation: 1 h on the V100s */
    assert_true(tu_job(&r, 4)->first_start <= dr_time_from_s(2160));
    assert_true(tu_job(&r, 4)->end < dr_time_from_s(2 * 3600.0));
    if (r.stats.passes > 100)
        fail_msg("%llu passes for a 2 h run", (unsigned long long)r.stats.passes);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* A job that arrives after the allocation was computed waits for the next
 * one, idle GPUs or not.  Gavel's _schedule_jobs_on_workers gives no
 * workers to a job that is not in self._allocation, and the allocation is
 * recomputed on arrivals at most every 1,920 s.  Two V100 servers: job 1
 * (10 h) arrives at t = 0, is allocated then and runs; job 2 (1,000 s)
 * arrives at 100 s.  At 360 s a V100 is free but job 2 has no allocation;
 * the first round 1,920 s or more after the reset at 0 is at 2,160 s: job 2
 * starts then (drover used to start it at 360 s, which made its
 * max_min_fairness_perf 0.2-0.3 h better than Gavel's published figures).
 * Every policy that schedules on allocations waits the same way. */
static void test_unallocated_job_waits(void **st)
{
    (void)st;
    static const char *const policies[] = {"max_min_fairness_perf", "max_min_fairness", "fifo_perf",
                                           "gavel_fifo"};
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=v[1-2] Gpus=V100-SXM2-16GB:1 Cpus=8 MemGB=61\n");
    dr_workload_t wl;
    gavel_jobs(&wl, &c,
               "ResNet-18 (batch size 16)\tcmd\t-n\t1\t1164722.4\t0.000000\t1\n"
               "ResNet-18 (batch size 16)\tcmd\t-n\t1\t32353.4\t100.000000\t1\n");
    for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
        dr_sim_result_t r;
        run_policy(policies[p], &c, &wl, &r);
        assert_completed(&r, 1);
        assert_completed(&r, 2);
        if (tu_job(&r, 1)->first_start != 0)
            fail_msg("%s: job 1 started at %.0f s", policies[p],
                     dr_time_to_s(tu_job(&r, 1)->first_start));
        if (tu_job(&r, 2)->first_start != dr_time_from_s(2160))
            fail_msg("%s: job 2 started at %.0f s, not at the 2,160 s re-allocation", policies[p],
                     dr_time_to_s(tu_job(&r, 2)->first_start));
        assert_int_equal(tu_job(&r, 1)->nstarts, 1); /* never preempted: a GPU each */
        dr_sim_result_free(&r);
    }
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_stale_type_cannot_host),
        cmocka_unit_test(test_fifo_freed_type_rate_zero),
        cmocka_unit_test(test_fifo_head_keeps_place),
        cmocka_unit_test(test_unallocated_job_waits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
