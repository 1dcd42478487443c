/* test_cost.c - elastic cloud pools in the simulator and the cost-aware
 * policy (with its two reference points, `fastest` and `cheapest`).
 *
 * Simulator: a provisioned pool node comes up only after the pool's delay,
 * is billed from the request (provisioning included) until it is released,
 * is released only when idle, and a spot node lost to the provider requeues
 * its jobs and stops its bill.  Policy: the cheapest type when the deadline
 * allows, a faster one when it does not, waiting for a cheap type when the
 * slack allows, cloud nodes only when on-prem cannot meet a deadline,
 * services started at once on the cheapest type they may use, and the
 * universal invariants (audited ledger, legal log) on a random mix. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/cluster.h"
#include "drover/config.h"
#include "drover/sched.h"
#include "drover/sim.h"
#include "drover/workload.h"
#include "testutil.h"

#define L40S "L40S-48GB"
#define B200 "B200-HGX-180GB"
#define H100 "H100-SXM-80GB"

/* A workload whose perf table has columns L40S, B200, H100 and one class
 * per distinct rate triple added with rates(). */
static void wl_init(dr_workload_t *wl)
{
    dr_workload_init(wl);
    const char *names[] = {L40S, B200, H100};
    assert_int_equal(dr_perf_set_types(&wl->perf, names, 3), DR_OK);
}

static uint32_t rates(dr_workload_t *wl, double l40s, double b200, double h100)
{
    char name[64];
    snprintf(name, sizeof name, "r %g %g %g", l40s, b200, h100);
    int k = dr_perf_find_class(&wl->perf, name);
    if (k < 0) {
        double r[3] = {l40s, b200, h100};
        k = dr_perf_add_class(&wl->perf, name, r);
    }
    assert_true(k > 0);
    return (uint32_t)k;
}

/* Append a job of `gpus` GPUs on one node with `work` units in class cls
 * (0: seconds, also declared as its time limit), an absolute deadline in
 * seconds (0 = none). */
static dr_job_t *add(dr_workload_t *wl, uint64_t id, double submit, uint32_t gpus, uint32_t cls,
                     double work, double deadline)
{
    dr_job_t j;
    dr_job_init(&j);
    j.id = id;
    j.kind = DR_KIND_TRAIN;
    j.submit = dr_time_from_s(submit);
    j.req.nodes = 1;
    j.req.gpus_per_node = gpus;
    j.perf_class = cls;
    j.work_declared = work;
    if (cls == 0)
        j.time_limit = dr_time_from_s(work); /* declared run time: what the policy reads */
    j.deadline = deadline > 0 ? dr_time_from_s(deadline) : 0;
    assert_int_equal(dr_workload_add(wl, &j, j.work_declared, NULL), DR_OK);
    return &wl->jobs[wl->njobs - 1];
}

/* A deadline-less job restricted to `types`. */
static void add_typed(dr_workload_t *wl, uint64_t id, double submit, uint32_t cls, double work,
                      const char *types)
{
    dr_job_t j;
    dr_job_init(&j);
    j.id = id;
    j.submit = dr_time_from_s(submit);
    j.perf_class = cls;
    j.work_declared = work;
    assert_int_equal(dr_workload_add(wl, &j, j.work_declared, types), DR_OK);
}

/* A service: `gpus` GPUs for `secs` seconds (declared as its time limit),
 * restricted to the types in `types` ("" = any). */
static void add_service(dr_workload_t *wl, uint64_t id, double submit, uint32_t gpus, double secs,
                        const char *types)
{
    dr_job_t j;
    dr_job_init(&j);
    j.id = id;
    j.kind = DR_KIND_SERVE;
    j.submit = dr_time_from_s(submit);
    j.req.nodes = 1;
    j.req.gpus_per_node = gpus;
    j.work_declared = secs;
    j.time_limit = dr_time_from_s(secs * 1.5);
    assert_int_equal(dr_workload_add(wl, &j, j.work_declared, types), DR_OK);
}

/* GPU type name of the job's last start (from the log). */
static const char *ran_on(const dr_sim_result_t *r, const dr_cluster_t *c, uint64_t id)
{
    int type = -1;
    for (size_t i = 0; i < r->log.n; i++)
        if (r->log.ev[i].job == id && r->log.ev[i].to == DR_JOB_STARTING)
            type = r->log.ev[i].type;
    if (type < 0)
        fail_msg("job %llu never started", (unsigned long long)id);
    return c->types[type].name;
}

static double start_s(const dr_sim_result_t *r, uint64_t id)
{
    return dr_time_to_s(tu_job(r, id)->first_start);
}

/* Legal log, every job ends once, none starts before its submit. */
static void check_log(const dr_sim_result_t *r)
{
    size_t n = r->njobs;
    dr_job_state_t *st = calloc(n, sizeof *st);
    bool *seen = calloc(n, sizeof *seen);
    int *terminal = calloc(n, sizeof *terminal);
    for (size_t i = 0; i < r->log.n; i++) {
        const dr_event_t *e = &r->log.ev[i];
        size_t k = 0;
        while (k < n && r->jobs[k].id != e->job)
            k++;
        assert_true(k < n);
        if (i > 0)
            assert_true(e->t >= r->log.ev[i - 1].t);
        if (!seen[k]) {
            assert_true(e->from == DR_JOB_PENDING && e->to == DR_JOB_PENDING);
            seen[k] = true;
            continue;
        }
        if (e->from != st[k] || !dr_job_transition_ok(e->from, e->to))
            fail_msg("job %llu: bad record %s -> %s", (unsigned long long)e->job,
                     dr_job_state_name(e->from), dr_job_state_name(e->to));
        if (e->to == DR_JOB_STARTING && e->t < r->jobs[k].submit)
            fail_msg("job %llu started before its submit", (unsigned long long)e->job);
        assert_int_equal(terminal[k], 0);
        terminal[k] += dr_job_state_terminal(e->to);
        st[k] = e->to;
    }
    for (size_t k = 0; k < n; k++)
        if (terminal[k] != 1 || r->jobs[k].state != DR_JOB_COMPLETED)
            fail_msg("job %llu did not complete (%s)", (unsigned long long)r->jobs[k].id,
                     dr_job_state_name(r->jobs[k].state));
    free(st);
    free(seen);
    free(terminal);
}

static const char *pool_conf = "NodeName=h1 Gpus=H100:8 Cpus=64 MemGB=512\n"
                               "Pool=cloud Gpus=H100:8 MaxNodes=2 Cpus=64 MemGB=512 "
                               "PricePerGpuHour=2 ProvisionDelay=10m\n";

/* A job whose deadline the busy on-prem node cannot meet gets a cloud node:
 * it starts when the node is up (10 minutes later), the node is billed
 * from the request until it is released at the job's end, and the jobs'
 * own GPU-hours on it are reported apart. */
static void test_provision_delay_and_billing(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, pool_conf);
    dr_workload_t wl;
    wl_init(&wl);
    add(&wl, 1, 0, 8, 0, 3600, 0);            /* fills h1 for an hour */
    add(&wl, 2, 10, 8, 0, 1800, 10 + 2500.0); /* on h1 it would end at 5400 */
    tu_workload_ready(&wl, &c);
    dr_sim_result_t r;
    tu_sim(&c, &wl, "cost", &r);
    check_log(&r);
    assert_true(fabs(start_s(&r, 1)) < 1e-9);
    assert_true(fabs(start_s(&r, 2) - 610) < 1e-6); /* up after the delay, not before */
    assert_true(fabs(dr_time_to_s(tu_job(&r, 2)->end) - 2410) < 1e-6);
    assert_true(tu_job(&r, 2)->end <= tu_job(&r, 2)->deadline);
    assert_int_equal(r.provisions, 1);
    assert_int_equal(r.releases, 1);
    /* billed 10 s .. 2410 s for 8 GPUs at $2 */
    assert_true(fabs(r.cloud_gpu_hours - 2400.0 * 8 / 3600) < 1e-6);
    assert_true(fabs(r.cloud_cost_usd - 2400.0 * 8 / 3600 * 2) < 1e-6);
    assert_true(fabs(r.cloud_busy_gpu_hours - 1800.0 * 8 / 3600) < 1e-6);
    assert_true(fabs(r.cloud_busy_list_usd - 4.0 * c.types[0].price_hr) < 1e-6);
    dr_sim_result_free(&r);

    /* a deadline on-prem can meet: no cloud at all */
    dr_workload_free(&wl);
    wl_init(&wl);
    add(&wl, 1, 0, 8, 0, 3600, 0);
    add(&wl, 2, 10, 8, 0, 1800, 6000);
    tu_workload_ready(&wl, &c);
    tu_sim(&c, &wl, "cost", &r);
    check_log(&r);
    assert_true(fabs(start_s(&r, 2) - 3600) < 1e-6);
    assert_int_equal(r.provisions, 0);
    assert_true(r.cloud_gpu_hours == 0 && r.cloud_cost_usd == 0);
    dr_sim_result_free(&r);

    /* the references never rent nodes: the job waits and misses */
    tu_sim(&c, &wl, "fastest", &r);
    assert_int_equal(r.provisions, 0);
    assert_true(fabs(start_s(&r, 2) - 3600) < 1e-6);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* A pool node is kept while it runs a job and while a planned job still
 * needs it, and only given back idle; `idle=S` keeps it S seconds longer
 * (billed) so that a job arriving meanwhile can use it at once. */
static void test_release_only_when_idle(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, pool_conf);
    dr_workload_t wl;
    wl_init(&wl);
    add(&wl, 1, 0, 8, 0, 36000, 0);    /* h1 busy for 10 hours */
    add(&wl, 2, 10, 4, 0, 1800, 3000); /* cloud node up at 610, ends 2410 */
    add(&wl, 3, 20, 4, 0, 3600, 5000); /* shares the node: ends 4210 */
    add(&wl, 4, 4300, 8, 0, 600, 6000);
    tu_workload_ready(&wl, &c);
    dr_sim_result_t r;
    tu_sim(&c, &wl, "cost", &r);
    check_log(&r);
    assert_true(fabs(start_s(&r, 2) - 610) < 1e-6);
    assert_true(fabs(start_s(&r, 3) - 610) < 1e-6);
    /* one node for both (one request; released when the second ended),
     * then a new one for job 4 */
    assert_int_equal(r.provisions, 2);
    assert_int_equal(r.releases, 2);
    double billed = (4210.0 - 10) * 8 + (5500.0 - 4300) * 8;
    assert_true(fabs(r.cloud_gpu_hours - billed / 3600) < 1e-6);
    dr_sim_result_free(&r);

    /* keep idle nodes an hour: job 4 finds the node still up */
    tu_sim(&c, &wl, "cost:idle=3600", &r);
    check_log(&r);
    assert_int_equal(r.provisions, 1);
    assert_true(fabs(start_s(&r, 4) - 4300) < 1e-6);
    /* up from 10 s until an hour after job 4 ended at 4900 s */
    assert_true(fabs(r.cloud_gpu_hours - (4900.0 + 3600 - 10) * 8 / 3600) < 1e-6);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* Work 3600 units; rate 1 on an L40S ($1.86/h), 4 on a B200 ($14.24/h):
 * 1 h on the L40S costs $1.86, 15 min on the B200 $3.56.  The policy takes
 * the L40S when the deadline allows and the B200 when it does not; it waits
 * for a busy L40S when the slack allows, not when it does not. */
static void test_cheapest_type_meeting_deadline(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=l1 Gpus=L40S:1 Cpus=16 MemGB=128\n"
                   "NodeName=b1 Gpus=B200:1 Cpus=16 MemGB=128\n");
    dr_workload_t wl;
    wl_init(&wl);
    uint32_t k = rates(&wl, 1, 4, 2);
    add(&wl, 1, 0, 1, k, 3600, 2 * 3600); /* loose: L40S */
    add(&wl, 2, 0, 1, k, 3600, 1800);     /* tight: only the B200 makes it */
    tu_workload_ready(&wl, &c);
    dr_sim_result_t r;
    /* planned on the expected size (q=0): with no history a declaration is
     * trusted to sigma = 1, whose 0.8-quantile (the default plan) is 2.3 h
     * and would send job 1 to the B200 as well */
    tu_sim(&c, &wl, "cost:q=0", &r);
    check_log(&r);
    assert_string_equal(ran_on(&r, &c, 1), L40S);
    assert_string_equal(ran_on(&r, &c, 2), B200);
    assert_true(start_s(&r, 1) == 0 && start_s(&r, 2) == 0);
    dr_sim_result_free(&r);
    tu_sim(&c, &wl, "cost", &r);
    assert_string_equal(ran_on(&r, &c, 1), B200);
    assert_string_equal(ran_on(&r, &c, 2), B200);
    dr_sim_result_free(&r);

    /* the references: fastest puts the first on the B200, cheapest puts the
     * second on the L40S after the first (missing its deadline) */
    tu_sim(&c, &wl, "fastest", &r);
    assert_string_equal(ran_on(&r, &c, 1), B200);
    dr_sim_result_free(&r);
    tu_sim(&c, &wl, "cheapest:strict=1", &r);
    assert_string_equal(ran_on(&r, &c, 1), L40S);
    assert_string_equal(ran_on(&r, &c, 2), L40S);
    assert_true(tu_job(&r, 2)->end > tu_job(&r, 2)->deadline);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);

    /* the L40S is busy for 10 minutes: a job with hours of slack waits for
     * it; one with 70 minutes left does not (10 + 60 min would leave less
     * than the 10% safety margin) */
    wl_init(&wl);
    k = rates(&wl, 1, 4, 2);
    add(&wl, 1, 0, 1, 0, 600, 0);
    add(&wl, 2, 1, 1, k, 3600, 4 * 3600);
    tu_workload_ready(&wl, &c);
    tu_sim(&c, &wl, "cost", &r);
    check_log(&r);
    assert_string_equal(ran_on(&r, &c, 1), L40S);
    assert_string_equal(ran_on(&r, &c, 2), L40S);
    assert_true(fabs(start_s(&r, 2) - 600) < 1e-6);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    wl_init(&wl);
    k = rates(&wl, 1, 4, 2);
    add(&wl, 1, 0, 1, 0, 600, 0);
    add(&wl, 2, 1, 1, k, 3600, 1 + 70 * 60);
    tu_workload_ready(&wl, &c);
    tu_sim(&c, &wl, "cost", &r);
    assert_string_equal(ran_on(&r, &c, 2), B200);
    assert_true(fabs(start_s(&r, 2) - 1) < 1e-6);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* Deadline-less jobs go cheapest-first: with both types free, the L40S; a
 * second one waits for it (soft deadline: 3x its fastest time) rather than
 * pay for the B200 - unless soft=0, which takes the cheapest type free now. */
static void test_no_deadline_cheapest_first(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=l1 Gpus=L40S:1 Cpus=16 MemGB=128\n"
                   "NodeName=b1 Gpus=B200:1 Cpus=16 MemGB=128\n");
    dr_workload_t wl;
    wl_init(&wl);
    uint32_t k = rates(&wl, 1, 1.2, 1.1);
    add(&wl, 1, 0, 1, k, 1200, 0);
    add(&wl, 2, 0, 1, k, 1200, 0);
    tu_workload_ready(&wl, &c);
    dr_sim_result_t r;
    tu_sim(&c, &wl, "cost", &r);
    check_log(&r);
    assert_string_equal(ran_on(&r, &c, 1), L40S);
    assert_string_equal(ran_on(&r, &c, 2), L40S);
    assert_true(fabs(start_s(&r, 2) - 1200) < 1e-6);
    dr_sim_result_free(&r);
    tu_sim(&c, &wl, "cost:soft=0", &r);
    assert_string_equal(ran_on(&r, &c, 1), L40S);
    assert_string_equal(ran_on(&r, &c, 2), B200);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* A service starts at its submit time on the cheapest type it may use,
 * even when every GPU is taken by deadline-less training (one is
 * preempted, and resumes later); a service restricted to the types that
 * meet its SLO takes the cheapest of those. */
static void test_services_start_at_once(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=l[1-2] Gpus=L40S:1 Cpus=16 MemGB=128\n"
                   "NodeName=h1 Gpus=H100:1 Cpus=16 MemGB=128\n"
                   "NodeName=b1 Gpus=B200:1 Cpus=16 MemGB=128\n");
    dr_workload_t wl;
    wl_init(&wl);
    uint32_t k = rates(&wl, 1, 1, 1);
    /* every GPU busy for 2 h */
    add_typed(&wl, 1, 0, k, 7200, L40S);
    add_typed(&wl, 2, 0, k, 7200, L40S);
    add_typed(&wl, 3, 0, k, 7200, H100);
    add_typed(&wl, 4, 0, k, 7200, B200);
    add_service(&wl, 10, 100, 1, 3600, "");
    add_service(&wl, 11, 200, 1, 3600, B200 "|" H100); /* SLO: H100 or better */
    tu_workload_ready(&wl, &c);
    dr_sim_result_t r;
    tu_sim(&c, &wl, "cost", &r);
    check_log(&r);
    assert_true(fabs(start_s(&r, 10) - 100) < 1e-6);
    assert_string_equal(ran_on(&r, &c, 10), L40S);
    assert_true(fabs(start_s(&r, 11) - 200) < 1e-6);
    assert_string_equal(ran_on(&r, &c, 11), H100);
    size_t preempted = 0;
    for (size_t i = 0; i < r.log.n; i++)
        preempted += r.log.ev[i].to == DR_JOB_PREEMPTED;
    assert_int_equal(preempted, 2);
    dr_sim_result_free(&r);
    /* preempt=0: the services wait like everyone else */
    tu_sim(&c, &wl, "cost:preempt=0", &r);
    check_log(&r);
    assert_true(start_s(&r, 10) >= 7200);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* A service needs one of two busy GPUs: the job that loses the least
 * work goes (the one that checkpointed 100 s ago), although the other has
 * more work left (what used to decide alone). */
static void test_victim_least_lost(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=h1 Gpus=H100:2 Cpus=16 MemGB=128\n");
    dr_workload_t wl;
    wl_init(&wl);
    uint32_t k = rates(&wl, 1, 1, 1);
    dr_job_t *j = add(&wl, 1, 0, 1, k, 7200, 0);
    j->kind = DR_KIND_BATCH; /* no checkpoints: loses all 1100 s */
    j = add(&wl, 2, 0, 1, k, 3600, 0);
    j->ckpt_every = dr_time_from_s(1000); /* loses 100 s */
    add_service(&wl, 10, 1100, 1, 600, "");
    tu_workload_ready(&wl, &c);
    dr_sim_result_t r;
    tu_sim(&c, &wl, "cost", &r);
    check_log(&r);
    size_t pre[3] = {0};
    for (size_t i = 0; i < r.log.n; i++)
        if (r.log.ev[i].to == DR_JOB_PREEMPTED && r.log.ev[i].job < 3)
            pre[r.log.ev[i].job]++;
    assert_int_equal(pre[1], 0);
    assert_int_equal(pre[2], 1);
    assert_true(fabs(start_s(&r, 10) - 1100) < 1e-6);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* A spot node lost to the provider: its job is requeued with its progress
 * and finishes elsewhere, the bill stops at the loss. */
static void test_spot_interruption(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=h1 Gpus=H100:8 Cpus=64 MemGB=512\n"
                   "Pool=spot Gpus=H100:8 MaxNodes=4 Cpus=64 MemGB=512 "
                   "PricePerGpuHour=1 ProvisionDelay=1m SpotInterruptRate=2\n");
    dr_workload_t wl;
    wl_init(&wl);
    add(&wl, 1, 0, 8, 0, 10 * 3600, 0);
    for (uint64_t i = 2; i <= 9; i++)
        add(&wl, i, 10 * (double)i, 8, 0, 4 * 3600, 9 * 3600);
    tu_workload_ready(&wl, &c);
    dr_sim_result_t r;
    dr_sim_opts_t o;
    dr_sim_opts_default(&o);
    o.policy = "cost";
    o.audit = true;
    o.seed = 7;
    dr_err_t err;
    if (dr_sim_run(&c, &wl, &o, &r, &err) != DR_OK)
        fail_msg("%s", err.msg);
    check_log(&r);
    assert_true(r.spot_losses > 0);
    size_t requeued = 0;
    for (size_t i = 0; i < r.log.n; i++)
        requeued += r.log.ev[i].to == DR_JOB_REQUEUED;
    assert_true(requeued > 0);
    /* billed at most while provisioned; jobs used no more than that */
    assert_true(r.cloud_busy_gpu_hours <= r.cloud_gpu_hours + 1e-9);
    assert_true(fabs(r.cloud_cost_usd - r.cloud_gpu_hours) < 1e-6); /* $1 per GPU-hour */
    assert_int_equal(r.provisions, r.releases + r.spot_losses);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* Driver view: the pass result lists the nodes to provision; the node is
 * PROVISIONING (unusable) until the driver brings it up; releases are
 * refused outside a pass. */
static void test_driver_lists(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, pool_conf);
    dr_job_t j[2];
    for (int i = 0; i < 2; i++) {
        dr_job_init(&j[i]);
        j[i].id = (uint64_t)i + 1;
        j[i].req.gpus_per_node = 8;
        j[i].work_declared = 3600;
        j[i].time_limit = dr_time_from_s(3600);
    }
    j[1].deadline = dr_time_from_s(1800);
    dr_sched_opts_t so = {.policy = "cost", .placement = DR_PLACE_BEST_FIT, .audit = true};
    dr_sched_t *s;
    dr_err_t err;
    assert_int_equal(dr_sched_create(&s, &c, &so, &err), DR_OK);
    dr_pass_result_t pr = {0};
    assert_int_equal(dr_sched_submit(s, &j[0], 0, &err), DR_OK);
    assert_int_equal(dr_sched_pass(s, 0, &pr, &err), DR_OK);
    assert_int_equal(pr.nstarted, 1);
    assert_int_equal(dr_sched_job_running(s, &j[0], 0, &err), DR_OK);
    /* after job 1 on the busy node is too late, 10 min + 1 h in the cloud
     * too: a lost cause rents nothing */
    assert_int_equal(dr_sched_submit(s, &j[1], dr_time_from_s(1), &err), DR_OK);
    assert_int_equal(dr_sched_pass(s, dr_time_from_s(1), &pr, &err), DR_OK);
    assert_int_equal(pr.nprovision, 0);
    /* with 3 h, waiting for the on-prem node (2 h) is in time */
    j[1].deadline = dr_time_from_s(3 * 3600);
    assert_int_equal(dr_sched_pass(s, dr_time_from_s(2), &pr, &err), DR_OK);
    assert_int_equal(pr.nprovision, 0);
    /* with 2 h, only a cloud node (10 min + 1 h) is */
    j[1].deadline = dr_time_from_s(2 * 3600);
    assert_int_equal(dr_sched_pass(s, dr_time_from_s(3), &pr, &err), DR_OK);
    assert_int_equal(pr.nprovision, 1);
    uint32_t node = pr.provision[0];
    assert_int_equal(c.nodes[node].pool, 0);
    assert_int_equal(c.nodes[node].state, DR_NODE_PROVISIONING);
    assert_int_equal(pr.nstarted, 0);
    assert_int_equal(dr_sched_decide_release(s, node), DR_ESTATE); /* not in a pass */
    /* another pass before it is up: no second request, nothing starts */
    assert_int_equal(dr_sched_pass(s, dr_time_from_s(60), &pr, &err), DR_OK);
    assert_int_equal(pr.nprovision + pr.nstarted + pr.nrelease, 0);
    assert_int_equal(dr_sched_node_up(s, node, dr_time_from_s(603), &err), DR_OK);
    assert_int_equal(dr_sched_pass(s, dr_time_from_s(603), &pr, &err), DR_OK);
    assert_int_equal(pr.nstarted, 1);
    assert_true(pr.started[0] == &j[1] && j[1].alloc.slots[0].node == node);
    assert_int_equal(dr_sched_job_running(s, &j[1], dr_time_from_s(603), &err), DR_OK);
    assert_int_equal(
        dr_sched_job_ended(s, &j[1], DR_JOB_COMPLETED, dr_time_from_s(4203), NULL, &err), DR_OK);
    assert_int_equal(dr_sched_pass(s, dr_time_from_s(4203), &pr, &err), DR_OK);
    assert_int_equal(pr.nrelease, 1);
    assert_int_equal(pr.release[0], node);
    assert_int_equal(c.nodes[node].state, DR_NODE_CLOUD);
    dr_pass_result_free(&pr);
    dr_sched_destroy(s);
    for (int i = 0; i < 2; i++) /* job 1 still holds its on-prem node */
        dr_alloc_free(&j[i].alloc);
    dr_cluster_free(&c);
}

/* Every policy of this family on a random mix of deadline jobs, services
 * and deadline-less jobs on a cluster with a pool: ledger audited after
 * every pass, legal log, everything completes, the bill covers the use. */
static void test_invariants_random(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=l[1-4] Gpus=L40S:4 Cpus=64 MemGB=512\n"
                   "NodeName=b[1-2] Gpus=B200:8 Cpus=128 MemGB=1024\n"
                   "NodeName=h[1-2] Gpus=H100:8 Cpus=128 MemGB=1024\n"
                   "Pool=cloud Gpus=H100:8 MaxNodes=3 Cpus=128 MemGB=1024 ProvisionDelay=5m "
                   "SpotInterruptRate=0.05\n");
    dr_workload_t wl;
    wl_init(&wl);
    dr_rng_t rng;
    dr_rng_seed(&rng, 11);
    uint32_t cls[3] = {rates(&wl, 1, 5, 2.5), rates(&wl, 0, 3, 1.5), rates(&wl, 2, 4, 3)};
    double t = 0;
    for (uint64_t id = 1; id <= 300; id++) {
        t += dr_rng_exp(&rng, 1.0 / 600);
        double u = dr_rng_uniform(&rng);
        uint32_t g = (uint32_t[]){1, 2, 4, 8}[dr_rng_below(&rng, 4)];
        if (u < 0.15) {
            add_service(&wl, id, t, g > 4 ? 4 : g, 3600 * (1 + 5 * dr_rng_uniform(&rng)),
                        dr_rng_uniform(&rng) < 0.5 ? "" : B200 "|" H100);
            continue;
        }
        uint32_t k = cls[dr_rng_below(&rng, 3)];
        double work = 3600 * (0.5 + 8 * dr_rng_uniform(&rng));
        double dl = u < 0.7 ? t + work / 5 * (1.2 + 2 * dr_rng_uniform(&rng)) : 0;
        add(&wl, id, t, g, k, work, dl);
    }
    tu_workload_ready(&wl, &c);
    const char *pols[] = {"cost",     "cost:soft=0,idle=600", "cost:cloud=0",    "fastest",
                          "cheapest", "cheapest:strict=1",    "fastest:strict=1"};
    for (size_t p = 0; p < sizeof pols / sizeof *pols; p++) {
        dr_sim_result_t r;
        dr_sim_opts_t o;
        dr_sim_opts_default(&o);
        o.policy = pols[p];
        o.audit = true;
        o.seed = 5;
        o.restart_overhead_s = 60;
        dr_err_t err;
        if (dr_sim_run(&c, &wl, &o, &r, &err) != DR_OK)
            fail_msg("%s: %s", pols[p], err.msg);
        check_log(&r);
        assert_true(r.cloud_busy_gpu_hours <= r.cloud_gpu_hours + 1e-9);
        assert_true(r.provisions >= r.releases);
        if (strncmp(pols[p], "cost", 4) != 0 || strstr(pols[p], "cloud=0"))
            assert_int_equal(r.provisions, 0);
        dr_sim_result_free(&r);
    }
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* rate_noise: the policy plans with rates off by a log-normal factor per
 * class and type; the job still runs at its true rate.  With a large sigma
 * "fastest" is misled onto a slower type on some seeds, and wherever it
 * runs the job takes its true time there. */
static void test_believed_rates(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=l1 Gpus=L40S:1 Cpus=16 MemGB=128\n"
                   "NodeName=b1 Gpus=B200:1 Cpus=16 MemGB=128\n"
                   "NodeName=h1 Gpus=H100:1 Cpus=16 MemGB=128\n");
    dr_workload_t wl;
    wl_init(&wl);
    uint32_t k = rates(&wl, 1, 4, 2);
    add(&wl, 1, 0, 1, k, 3600, 0);
    tu_workload_ready(&wl, &c);
    int misled = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        dr_sim_opts_t o;
        dr_sim_opts_default(&o);
        o.policy = "fastest";
        o.rate_noise = seed == 1 ? 0 : 2.0;
        o.rate_noise_seed = seed;
        dr_sim_result_t r;
        dr_err_t err = {0};
        assert_int_equal(dr_sim_run(&c, &wl, &o, &r, &err), DR_OK);
        const char *on = ran_on(&r, &c, 1);
        double truth = strcmp(on, L40S) == 0 ? 1 : strcmp(on, B200) == 0 ? 4 : 2;
        const dr_job_t *j = tu_job(&r, 1);
        assert_true(fabs(dr_time_to_s(j->end - j->first_start) - 3600 / truth) < 1e-3);
        if (seed == 1)
            assert_string_equal(on, B200); /* exact rates: the fastest */
        misled += strcmp(on, B200) != 0;
        dr_sim_result_free(&r);
    }
    assert_true(misled > 0);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

static void test_options(void **st)
{
    (void)st;
    dr_cluster_t c;
    tu_cluster(&c, pool_conf);
    dr_err_t err;
    dr_sched_t *s;
    struct {
        const char *policy, *msg;
    } bad[] = {{"cost:soft=x", "soft: 'x'"},
               {"cost:safety=1", "safety: '1' must be below 1"},
               {"cost:speed=2", "unknown option 'speed'"},
               {"fastest:strict=2", "strict: '2'"},
               {"cheapest:depth=1", "unknown option 'depth'"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        dr_sched_opts_t so = {.policy = bad[i].policy};
        assert_int_equal(dr_sched_create(&s, &c, &so, &err), DR_EINVAL);
        tu_assert_contains(err.msg, bad[i].msg);
    }
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_provision_delay_and_billing),
        cmocka_unit_test(test_release_only_when_idle),
        cmocka_unit_test(test_cheapest_type_meeting_deadline),
        cmocka_unit_test(test_no_deadline_cheapest_first),
        cmocka_unit_test(test_services_start_at_once),
        cmocka_unit_test(test_victim_least_lost),
        cmocka_unit_test(test_spot_interruption),
        cmocka_unit_test(test_driver_lists),
        cmocka_unit_test(test_invariants_random),
        cmocka_unit_test(test_believed_rates),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
