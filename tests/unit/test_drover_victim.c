/* test_drover_victim.c - the drover policy's preemption victims: among
 * running jobs that checkpoint, a short job outbids the one that loses the
 * least work since its last checkpoint (dr_job_lost_s: from its start and
 * declared interval, what a real scheduler knows), not simply the one with
 * the most work left.
 *
 * Two one-GPU jobs fill a two-GPU node from t=0.  Job 1 (3700 s) saves
 * every 1000 s; job 2 (3600 s) every 450 s.  A 60 s job arrives at 905 s
 * and, once its wait has aged it past them, outbids one at 2705 s: a stop
 * then loses 705 s of job 1's work but 5 s of job 2's.  Without the lost
 * work the policy stopped job 1, which has slightly more work left. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/cluster.h"
#include "drover/sched.h"
#include "drover/sim.h"
#include "drover/workload.h"
#include "testutil.h"

static size_t preemptions_of(const dr_sim_result_t *r, uint64_t id)
{
    size_t n = 0;
    for (size_t i = 0; i < r->log.n; i++)
        n += r->log.ev[i].job == id && r->log.ev[i].to == DR_JOB_PREEMPTED;
    return n;
}

/* Job 3 started before either of the others ended (it preempted one). */
static bool started_first(const dr_sim_result_t *r)
{
    dr_time_t s = tu_job(r, 3)->first_start;
    return s < tu_job(r, 1)->end && s < tu_job(r, 2)->end;
}

static void run(double every1, double every2, dr_sim_result_t *r, dr_cluster_t *c,
                dr_workload_t *wl)
{
    tu_cluster(c, "NodeName=h1 Gpus=H100:2 Cpus=16 MemGB=128\n");
    dr_workload_init(wl);
    dr_job_t *j = tu_add_job(wl, 1, 0, 1, 1, 3700, 3700, 0, NULL);
    j->kind = DR_KIND_TRAIN;
    j->ckpt_every = dr_time_from_s(every1);
    j = tu_add_job(wl, 2, 0, 1, 1, 3600, 3600, 0, NULL);
    j->kind = DR_KIND_TRAIN;
    j->ckpt_every = dr_time_from_s(every2);
    tu_add_job(wl, 3, 905, 1, 1, 60, 60, 0, NULL);
    tu_workload_ready(wl, c);
    tu_sim(c, wl, "drover", r);
}

static void test_victim_loses_least(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_workload_t wl;
    dr_sim_result_t r;
    run(1000, 450, &r, &c, &wl);
    /* the short job starts while both run, on job 2's GPU: job 2 loses 5 s */
    assert_true(started_first(&r));
    assert_int_equal(preemptions_of(&r, 1), 0);
    assert_int_equal(preemptions_of(&r, 2), 1);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* The same jobs with the intervals swapped: now job 1 saved 5 s before,
 * and it is the one stopped - the choice follows the lost work. */
static void test_victim_follows_lost_work(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_workload_t wl;
    dr_sim_result_t r;
    run(450, 1000, &r, &c, &wl);
    assert_true(started_first(&r));
    assert_int_equal(preemptions_of(&r, 1), 1);
    assert_int_equal(preemptions_of(&r, 2), 0);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_victim_loses_least),
        cmocka_unit_test(test_victim_follows_lost_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
