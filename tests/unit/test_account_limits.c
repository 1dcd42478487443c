/* test_account_limits.c - per-account GPU limits in the scheduler core,
 * under every policy: a generic request from an account whose H100 limit
 * is 0 never lands on an idle H100 but does on an A100; a total limit
 * caps the account's running GPUs with GPUs idle; a limit freed when a job
 * ends lets the next job start; jobs of other accounts are not held back;
 * a blocked job says so (dr_sched_account_blocked); and the simulator,
 * binding its workload's account names, obeys the same limits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drover/cluster.h"
#include "drover/sched.h"
#include "drover/sim.h"
#include "drover/workload.h"
#include "testutil.h"

static const char *const pols[] = {"fifo",
                                   "backfill",
                                   "drover",
                                   "cost",
                                   "fastest",
                                   "cheapest",
                                   "gavel_fifo",
                                   "fifo_perf",
                                   "max_min_fairness",
                                   "max_min_fairness_perf"};

#define CONF                                                                                       \
    "NodeName=h1 Gpus=H100:4 Cpus=8 MemGB=64\n"                                                    \
    "NodeName=a1 Gpus=A100:4 Cpus=8 MemGB=64\n"                                                    \
    "Account=vision MaxRunningGpus[H100]=0\n"                                                      \
    "Account=capped MaxRunningGpus=2\n"

static void job(dr_job_t *j, uint64_t id, uint32_t acct, uint32_t gpus)
{
    dr_job_init(j);
    j->id = id;
    j->submit = (dr_time_t)id;
    j->account = acct;
    j->req.gpus_per_node = gpus;
    j->work_declared = 100;
    j->time_limit = 1000 * DR_NSEC_PER_SEC;
}

/* n passes 400 s apart (Gavel's rounds take a while); what they start is
 * marked running.  Returns how many jobs started. */
static size_t passes(dr_sched_t *s, dr_time_t *t, int n)
{
    dr_err_t err;
    dr_pass_result_t pr = {0};
    size_t started = 0;
    for (int k = 0; k < n; k++, *t += 400 * DR_NSEC_PER_SEC) {
        assert_int_equal(dr_sched_pass(s, *t, &pr, &err), DR_OK);
        for (size_t i = 0; i < pr.nstarted; i++)
            assert_int_equal(dr_sched_job_running(s, pr.started[i], *t, &err), DR_OK);
        started += pr.nstarted;
    }
    dr_pass_result_free(&pr);
    return started;
}

static bool runs(const dr_job_t *j)
{
    return j->state == DR_JOB_RUNNING;
}

static void test_limits_every_policy(void **st)
{
    (void)st;
    for (size_t p = 0; p < sizeof pols / sizeof *pols; p++) {
        dr_cluster_t c;
        tu_cluster(&c, CONF);
        int h100 = dr_cluster_find_type(&c, "H100"), a100 = dr_cluster_find_type(&c, "A100");
        dr_sched_t *s;
        dr_sched_opts_t so = {.policy = pols[p], .placement = DR_PLACE_BEST_FIT, .audit = true};
        dr_err_t err;
        assert_int_equal(dr_sched_create(&s, &c, &so, &err), DR_OK);
        /* ids 1 and 2: the accounts; 3 is one the config does not name */
        assert_int_equal(dr_sched_bind_account(s, 1, "vision", &err), DR_OK);
        assert_int_equal(dr_sched_bind_account(s, 2, "capped", &err), DR_OK);
        assert_int_equal(dr_sched_bind_account(s, 3, "other", &err), DR_OK);
        dr_job_t v[3];
        for (int i = 0; i < 3; i++) {
            job(&v[i], (uint64_t)i + 1, 1, 2); /* generic: any type */
            assert_int_equal(dr_sched_submit(s, &v[i], i, &err), DR_OK);
        }
        dr_time_t t = 10;
        /* two run, on the A100s; the third waits with 4 H100s idle, held
         * back by its account */
        passes(s, &t, 2);
        int n = runs(&v[0]) + runs(&v[1]) + runs(&v[2]);
        if (n != 2)
            fail_msg("%s: %d vision jobs run, want 2 (on the A100s)", pols[p], n);
        dr_job_t *third = NULL;
        for (int i = 0; i < 3; i++) {
            if (runs(&v[i]) && v[i].alloc.type != a100)
                fail_msg("%s: a generic vision job landed on %s", pols[p],
                         c.types[v[i].alloc.type].name);
            if (v[i].state == DR_JOB_PENDING)
                third = &v[i];
        }
        assert_non_null(third);
        assert_true(dr_sched_account_blocked(s, third));
        assert_int_equal(dr_sched_account_milli(s, 0, a100), 4000);
        assert_int_equal(dr_sched_account_milli(s, 0, h100), 0);
        passes(s, &t, 1);
        if (runs(&v[0]) + runs(&v[1]) + runs(&v[2]) > 2)
            fail_msg("%s: a third vision job runs past the H100 limit", pols[p]);
        for (int i = 0; i < 3; i++)
            if (v[i].state == DR_JOB_PENDING)
                third = &v[i]; /* time-sharing policies swap who runs */
        /* capped (2 GPUs in all): one of its two 2-GPU jobs runs, on the
         * idle H100s; the other account's job is not held back.  (Gavel's
         * rounds allocate types ahead of starts: a job whose account has
         * room when allocated but not when placed waits for the next
         * allocation, so there only the limit itself is checked.) */
        bool gavel =
            strstr(pols[p], "fifo_") || strstr(pols[p], "gavel") || strstr(pols[p], "fairness");
        dr_job_t k[2], o;
        for (int i = 0; i < 2; i++) {
            job(&k[i], 10 + (uint64_t)i, 2, 2);
            assert_int_equal(dr_sched_submit(s, &k[i], t, &err), DR_OK);
        }
        job(&o, 20, 3, 2);
        assert_int_equal(dr_sched_submit(s, &o, t, &err), DR_OK);
        passes(s, &t, 12);
        if (runs(&v[0]) + runs(&v[1]) + runs(&v[2]) > 2)
            fail_msg("%s: a blocked vision job started", pols[p]);
        for (int i = 0; i < 3; i++)
            if (runs(&v[i]) && v[i].alloc.type != a100)
                fail_msg("%s: vision job %d runs on %s", pols[p], i + 1,
                         c.types[v[i].alloc.type].name);
        if (runs(&k[0]) + runs(&k[1]) > 1 ||
            (!gavel && (runs(&k[0]) + runs(&k[1]) != 1 || !runs(&o))))
            fail_msg("%s: %d capped jobs and %d of the other account run, want 1 and 1", pols[p],
                     runs(&k[0]) + runs(&k[1]), runs(&o));
        assert_int_equal(dr_sched_account_milli(s, 1, -1), 1000 * 2 * (runs(&k[0]) + runs(&k[1])));
        /* a vision job ends: the waiting one takes its A100s */
        dr_job_t *done = runs(&v[0]) ? &v[0] : runs(&v[1]) ? &v[1] : &v[2];
        if (!runs(done) && gavel) {
            /* Gavel's rounds re-allocate by fair share: vision, which used
             * the most, may be waiting for the others' jobs now */
            for (int i = 0; i < 3; i++)
                dr_alloc_free(&v[i].alloc);
            for (int i = 0; i < 2; i++)
                dr_alloc_free(&k[i].alloc);
            dr_alloc_free(&o.alloc);
            dr_sched_destroy(s);
            dr_cluster_free(&c);
            continue;
        }
        if (!runs(done))
            fail_msg("%s: no vision job runs", pols[p]);
        assert_int_equal(dr_sched_job_ended(s, done, DR_JOB_COMPLETED, t, NULL, &err), DR_OK);
        assert_int_equal(dr_sched_account_milli(s, 0, a100), 2000);
        t += DR_NSEC_PER_SEC;
        passes(s, &t, 12);
        (void)third;
        /* (Gavel's FIFO hands a freed type to the head of its queue, which
         * fair share orders: there the other account's job, which has used
         * less than vision, may be the one that takes the A100s.) */
        bool o_took = gavel && runs(&o) && o.alloc.type == a100;
        for (int i = 0; i < 3 && !o_took; i++)
            if (&v[i] != done && (!runs(&v[i]) || v[i].alloc.type != a100))
                fail_msg("%s: vision job %d does not run on the freed A100s (%s)", pols[p], i + 1,
                         dr_job_state_name(v[i].state));
        for (int i = 0; i < 3; i++)
            dr_alloc_free(&v[i].alloc);
        for (int i = 0; i < 2; i++)
            dr_alloc_free(&k[i].alloc);
        dr_alloc_free(&o.alloc);
        dr_sched_destroy(s);
        dr_cluster_free(&c);
    }
}

/* The simulator binds its workload's account names: vision's generic jobs
 * run only on the A100s (one at a time: 4 GPUs each), the others anywhere. */
static void test_limits_in_sim(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, CONF);
    int a100 = dr_cluster_find_type(&c, "A100");
    dr_workload_t wl;
    dr_workload_init(&wl);
    int64_t vis = dr_strtab_intern(&wl.accounts, "vision");
    int64_t any = dr_strtab_intern(&wl.accounts, "");
    assert_true(vis >= 0 && any >= 0);
    for (uint64_t i = 1; i <= 8; i++) {
        dr_job_t *j = tu_add_job(&wl, i, (double)i, 1, 4, 100, 100, 1000, NULL);
        j->account = (uint32_t)(i <= 4 ? vis : any);
    }
    tu_workload_ready(&wl, &c);
    for (size_t p = 0; p < sizeof pols / sizeof *pols; p++) {
        dr_sim_result_t r;
        tu_sim(&c, &wl, pols[p], &r);
        for (size_t i = 0; i < r.njobs; i++) {
            const dr_job_t *j = &r.jobs[i];
            if (j->state != DR_JOB_COMPLETED)
                fail_msg("%s: job %llu ended %s", pols[p], (unsigned long long)j->id,
                         dr_job_state_name(j->state));
        }
        /* every start of a vision job is on the A100s */
        for (size_t e = 0; e < r.log.n; e++) {
            const dr_event_t *ev = &r.log.ev[e];
            if (ev->to != DR_JOB_STARTING || ev->job > 4)
                continue;
            if (ev->type != a100)
                fail_msg("%s: vision job %llu started on %s", pols[p], (unsigned long long)ev->job,
                         c.types[ev->type].name);
        }
        dr_sim_result_free(&r);
    }
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* MaxCostPerDay: a job starts only where what its account spent today,
 * what its running jobs may still spend up to their limits and what it may
 * spend up to its own stay within the budget.  $4/GPU-h H100s, $10 a day,
 * jobs of 1 GPU with a 1 h limit (up to $4) that run 30 min ($2): two
 * start at once ($8 committed), then one at each end while the day's
 * spending leaves room ($4 spent + $4 committed; $6 + $4), and the last
 * two only the next day - under every policy that places through the
 * core's gate. */
static void test_budget_per_day(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "GpuType=H100 PricePerGpuHour=4\n"
                   "NodeName=h1 Gpus=H100:8 Cpus=8 MemGB=64\n"
                   "Account=lab MaxCostPerDay=10\n");
    assert_true(c.accounts[0].max_cost_day == 10);
    assert_true(isinf(c.accounts[0].max_cost_month));
    dr_workload_t wl;
    dr_workload_init(&wl);
    int64_t lab = dr_strtab_intern(&wl.accounts, "lab");
    for (uint64_t i = 1; i <= 6; i++) {
        dr_job_t *j = tu_add_job(&wl, i, 0, 1, 1, 1800, 1800, 3600, NULL);
        j->account = (uint32_t)lab;
    }
    tu_workload_ready(&wl, &c);
    const char *budget_pols[] = {"fifo", "backfill", "drover", "cost", "fastest"};
    for (size_t p = 0; p < sizeof budget_pols / sizeof *budget_pols; p++) {
        dr_sim_result_t r;
        tu_sim(&c, &wl, budget_pols[p], &r);
        double starts[7] = {0};
        for (uint64_t i = 1; i <= 6; i++) {
            const dr_job_t *j = tu_job(&r, i);
            if (j->state != DR_JOB_COMPLETED)
                fail_msg("%s: job %llu ended %s", budget_pols[p], (unsigned long long)i,
                         dr_job_state_name(j->state));
            starts[i] = dr_time_to_s(j->first_start);
        }
        int today = 0, at_once = 0;
        for (uint64_t i = 1; i <= 6; i++) {
            today += starts[i] < 86400;
            at_once += starts[i] == 0;
        }
        if (at_once != 2 || today != 4)
            fail_msg("%s: %d started at once and %d on the first day (want 2 and 4)",
                     budget_pols[p], at_once, today);
        dr_sim_result_free(&r);
    }
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* MaxUserCostPerHour= in the simulator as in the controller: $4 H100s, a
 * $10/h cap: user 0's four 1-GPU jobs run two at a time, user 1's at once. */
static void test_user_cost_cap_sim(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "MaxUserCostPerHour=10\nGpuType=H100 PricePerGpuHour=4\n"
                   "NodeName=h1 Gpus=H100:8 Cpus=8 MemGB=64\n");
    dr_workload_t wl;
    dr_workload_init(&wl);
    for (uint64_t i = 1; i <= 5; i++) {
        dr_job_t *j = tu_add_job(&wl, i, 0, 1, 1, 1800, 1800, 3600, NULL);
        j->user = i == 5 ? 1 : 0;
    }
    tu_workload_ready(&wl, &c);
    const char *cap_pols[] = {"fifo", "drover", "cost"};
    for (size_t p = 0; p < sizeof cap_pols / sizeof *cap_pols; p++) {
        dr_sim_result_t r;
        tu_sim(&c, &wl, cap_pols[p], &r);
        int at0 = 0;
        for (uint64_t i = 1; i <= 4; i++)
            at0 += tu_job(&r, i)->first_start == 0;
        if (at0 != 2 || tu_job(&r, 5)->first_start != 0)
            fail_msg("%s: %d of user 0's jobs started at once (want 2); user 1's at %g s",
                     cap_pols[p], at0, dr_time_to_s(tu_job(&r, 5)->first_start));
        dr_sim_result_free(&r);
    }
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_user_cost_cap_sim),
        cmocka_unit_test(test_budget_per_day),
        cmocka_unit_test(test_limits_every_policy),
        cmocka_unit_test(test_limits_in_sim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
