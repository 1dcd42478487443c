/* sim_scale.c - benchmark: replay 1,000,000 jobs on a 10,000-node x 8-GPU
 * heterogeneous cluster with FIFO and EASY backfill, and measure how the
 * cost of one scheduling pass grows with the pending queue.
 *
 * Each policy runs in its own child process so its peak RSS is its own.
 * Targets (issue #2): full replay < 20 s and < 2 GB peak RSS on a 2-core
 * machine; pass cost no worse than linear in the queue length.
 *
 * usage: sim_scale [--jobs N] [--nodes N] [--load X] [--seed N]
 *                  [--policies a,b] [--queues 1000,10000,100000] [--skip-replay]
 *                  [--leaf N]
 * --leaf N puts the nodes on a switch tree (leaves of N nodes, spines of 32
 * leaves, one core) to measure what topology-aware placement costs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drover/config.h"
#include "drover/sched.h"
#include "drover/sim.h"
#include "drover/workload.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *const TYPES[] = {"A100-80GB-SXM", "H100-SXM-80GB", "L40S-48GB", "MI300X-192GB"};
static const double SHARE[] = {0.4, 0.3, 0.2, 0.1};

static size_t leaf_size; /* --leaf: nodes per leaf switch, 0 = no topology */

/* The cluster as an admin would write it: one NodeName line per type (and
 * with --leaf, SwitchName lines for a leaf/spine/core tree). */
static void build_cluster(dr_cluster_t *c, size_t nodes)
{
    dr_catalog_t cat;
    dr_err_t err;
    if (dr_catalog_builtin(&cat, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    size_t nleaves = leaf_size ? (nodes + leaf_size - 1) / leaf_size : 0;
    size_t cap = 2048 + 96 * (nleaves + nleaves / 32 + 2);
    char *conf = malloc(cap);
    size_t n = 0, first = 1;
    for (size_t t = 0; t < 4; t++) {
        size_t k = t == 3 ? nodes - (first - 1) : (size_t)(SHARE[t] * (double)nodes);
        n += (size_t)snprintf(conf + n, cap - n,
                              "NodeName=g[%06zu-%06zu] Gpus=%s:8 Cpus=128 MemGB=1024\n", first,
                              first + k - 1, TYPES[t]);
        first += k;
    }
    for (size_t l = 0; l < nleaves; l++) {
        size_t last = (l + 1) * leaf_size < nodes ? (l + 1) * leaf_size : nodes;
        n += (size_t)snprintf(conf + n, cap - n, "SwitchName=leaf%zu Nodes=g[%06zu-%06zu]\n", l,
                              l * leaf_size + 1, last);
    }
    for (size_t s = 0; s * 32 < nleaves; s++) {
        size_t last = s * 32 + 31 < nleaves ? s * 32 + 31 : nleaves - 1;
        n += (size_t)snprintf(conf + n, cap - n, "SwitchName=spine%zu Switches=leaf[%zu-%zu]\n", s,
                              s * 32, last);
    }
    if (nleaves)
        n += (size_t)snprintf(conf + n, cap - n, "SwitchName=core Switches=spine[0-%zu]\n",
                              (nleaves - 1) / 32);
    dr_cluster_init(c);
    if (dr_config_parse(c, &cat, "sim_scale.conf", conf, n, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    free(conf);
    dr_catalog_free(&cat);
}

static void make_workload(dr_workload_t *wl, const dr_cluster_t *c, size_t njobs, double load,
                          uint64_t seed)
{
    dr_synth_opts_t so;
    dr_synth_opts_default(&so);
    so.njobs = njobs;
    so.seed = seed;
    so.load = load;
    so.cluster_gpus = dr_cluster_total_gpus(c, -1);
    so.type_names = TYPES;
    so.ntypes = 4;
    dr_err_t err;
    dr_workload_init(wl);
    if (dr_workload_synth(wl, &so, &err) != 0 || dr_workload_bind(wl, c, false, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
}

/* Child: generate, replay, print one result line. */
static void replay(const char *policy, size_t nodes, size_t njobs, double load, uint64_t seed)
{
    double t0 = now_s();
    dr_cluster_t c;
    build_cluster(&c, nodes);
    dr_workload_t wl;
    make_workload(&wl, &c, njobs, load, seed);
    double tgen = now_s() - t0;
    dr_sim_opts_t o;
    dr_sim_opts_default(&o);
    o.policy = policy;
    dr_sim_result_t r;
    dr_err_t err;
    double t1 = now_s();
    if (dr_sim_run(&c, &wl, &o, &r, &err) != 0) {
        fprintf(stderr, "%s: %s\n", policy, err.msg);
        exit(1);
    }
    double tsim = now_s() - t1;
    size_t done = 0;
    double wait = 0;
    for (size_t i = 0; i < r.njobs; i++)
        if (r.jobs[i].state == DR_JOB_COMPLETED) {
            done++;
            wait += dr_time_to_s(r.jobs[i].first_start - r.jobs[i].submit);
        }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("| %-9s | %9zu | %9zu | %7.2f | %7.2f | %8.2f | %7.0f | %9llu | %10llu | %8.0f |\n",
           policy, r.njobs, done, tgen, tsim, tgen + tsim, (double)ru.ru_maxrss / 1024.0,
           (unsigned long long)r.stats.passes, (unsigned long long)r.events,
           done ? wait / (double)done : 0);
    fflush(stdout);
    dr_sim_result_free(&r);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

/* Time one pass with `queue` jobs pending on a full cluster. */
static void pass_cost(const char *policy, size_t nodes, size_t queue, uint64_t seed)
{
    dr_cluster_t c;
    build_cluster(&c, nodes);
    dr_sched_t *s;
    dr_sched_opts_t so = {.policy = policy, .placement = DR_PLACE_BEST_FIT};
    dr_err_t err;
    if (dr_sched_create(&s, &c, &so, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    /* fill the cluster with one-GPU jobs of varied limits, then end the
     * ones on GPU 7 of every 8th node: free GPUs exist but are scattered,
     * so candidates really are tried and fail */
    size_t nfill = dr_cluster_total_gpus(&c, -1);
    dr_job_t *fill = calloc(nfill, sizeof *fill);
    for (size_t i = 0; i < nfill; i++) {
        dr_job_init(&fill[i]);
        fill[i].id = i + 1;
        fill[i].time_limit = dr_time_from_s(3600 + (double)(i % 977) * 60);
        /* declared nearly done: no policy preempts them for the queue */
        fill[i].work_declared = 1;
        dr_sched_submit(s, &fill[i], 0, &err);
    }
    dr_pass_result_t pr = {0};
    dr_sched_pass(s, 0, &pr, &err);
    for (size_t i = 0; i < nfill; i++) {
        dr_sched_job_running(s, &fill[i], 0, &err);
        if (fill[i].alloc.slots[0].node % 8 == 0 && fill[i].alloc.slots[0].gpu == 7)
            dr_sched_job_ended(s, &fill[i], DR_JOB_COMPLETED, 0, NULL, &err);
    }
    size_t ngpus = nfill;
    /* the queue: a mix of shapes that mostly do not fit */
    dr_workload_t wl;
    dr_synth_opts_t sy;
    dr_synth_opts_default(&sy);
    sy.njobs = queue;
    sy.seed = seed;
    sy.cluster_gpus = ngpus;
    sy.type_names = TYPES;
    sy.ntypes = 4;
    dr_workload_init(&wl);
    dr_workload_synth(&wl, &sy, &err);
    dr_workload_bind(&wl, &c, false, &err);
    for (size_t i = 0; i < wl.njobs; i++) {
        wl.jobs[i].id += nfill;
        wl.jobs[i].submit = 1;
        if (wl.jobs[i].req.gpus_per_node < 2)
            wl.jobs[i].req.gpus_per_node = 2; /* nothing fits a scattered free GPU */
        dr_sched_submit(s, &wl.jobs[i], 1, &err);
    }
    /* median of 7 of each kind of pass (nothing fits, so every pass of a
     * kind does the same work):
     *  - full: a node returned to service just before, so resources were
     *    freed and the policy must look at the whole queue;
     *  - incremental: only one job arrived since the last pass. */
    double tf[7], ti[7];
    uint64_t considered0 = dr_sched_stats(s)->jobs_considered;
    dr_job_t extra[7];
    for (int k = 0; k < 7; k++) {
        dr_sched_node_set_state(s, (uint32_t)k, DR_NODE_DRAIN, 2 + 2 * k, &err);
        dr_sched_node_up(s, (uint32_t)k, 2 + 2 * k, &err);
        double t0 = now_s();
        dr_sched_pass(s, 2 + 2 * k, &pr, &err);
        tf[k] = now_s() - t0;
        dr_job_init(&extra[k]);
        extra[k] = wl.jobs[k];
        extra[k].id = nfill + wl.njobs + 1 + (uint64_t)k;
        extra[k].state = DR_JOB_PENDING;
        dr_sched_submit(s, &extra[k], 3 + 2 * k, &err);
        t0 = now_s();
        dr_sched_pass(s, 3 + 2 * k, &pr, &err);
        ti[k] = now_s() - t0;
        if (pr.nstarted) {
            fprintf(stderr, "pass_cost: unexpected start\n");
            exit(1);
        }
    }
    for (int a = 0; a < 7; a++)
        for (int b = a + 1; b < 7; b++) {
            if (tf[b] < tf[a]) {
                double x = tf[a];
                tf[a] = tf[b];
                tf[b] = x;
            }
            if (ti[b] < ti[a]) {
                double x = ti[a];
                ti[a] = ti[b];
                ti[b] = x;
            }
        }
    const dr_sched_stats_t *st = dr_sched_stats(s);
    printf("| %-9s | %7zu | %12.3f | %10.1f | %18.1f | %19llu |\n", policy, queue, tf[3] * 1e3,
           tf[3] * 1e9 / (double)queue, ti[3] * 1e6,
           (unsigned long long)((st->jobs_considered - considered0) / 14));
    fflush(stdout);
    dr_pass_result_free(&pr);
    dr_sched_destroy(s);
    dr_workload_free(&wl);
    free(fill);
    dr_cluster_free(&c);
}

static int run_child(void (*fn)(void *), void *arg, double *wall, long *maxrss_kb)
{
    fflush(stdout);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        fn(arg);
        fflush(stdout);
        _exit(0);
    }
    int status;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    *wall = now_s() - t0;
    *maxrss_kb = ru.ru_maxrss;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

typedef struct args {
    const char *policy;
    size_t nodes, jobs, queue;
    double load;
    uint64_t seed;
} args_t;

static void do_replay(void *p)
{
    args_t *a = p;
    replay(a->policy, a->nodes, a->jobs, a->load, a->seed);
}

static void do_pass(void *p)
{
    args_t *a = p;
    pass_cost(a->policy, a->nodes, a->queue, a->seed);
}

int main(int argc, char **argv)
{
    size_t nodes = 10000, jobs = 1000000;
    double load = 0.9;
    uint64_t seed = 1;
    char policies[256] = "fifo,backfill", queues[256] = "1000,10000,100000";
    int skip_replay = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
            jobs = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            nodes = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--load") && i + 1 < argc)
            load = strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--policies") && i + 1 < argc)
            snprintf(policies, sizeof policies, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--queues") && i + 1 < argc)
            snprintf(queues, sizeof queues, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--skip-replay"))
            skip_replay = 1;
        else if (!strcmp(argv[i], "--leaf") && i + 1 < argc)
            leaf_size = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: sim_scale [--jobs N] [--nodes N] [--load X] [--seed N] "
                            "[--policies a,b] [--queues 1000,10000] [--skip-replay] "
                            "[--leaf N]\n");
            return 2;
        }
    }
    printf("# sim_scale: %zu jobs, %zu nodes x 8 GPUs (40%% A100, 30%% H100, 20%% L40S, 10%% "
           "MI300X), offered load %.2f, seed %llu\n",
           jobs, nodes, load, (unsigned long long)seed);
    if (leaf_size)
        printf("# switch tree: leaves of %zu nodes, spines of 32 leaves, one core\n", leaf_size);
    printf("\n");
    int rc = 0;
    if (!skip_replay) {
        printf("## Full replay (each policy in its own process; target < 20 s, < 2048 MB)\n\n");
        printf("| policy    |      jobs | completed | gen s   | sim s   | total s  | RSS MB  "
               "|    passes |     events | avg wait s |\n");
        printf("|-----------|-----------|-----------|---------|---------|----------|---------|"
               "-----------|------------|----------|\n");
        char buf[256];
        snprintf(buf, sizeof buf, "%s", policies);
        for (char *p = strtok(buf, ","); p; p = strtok(NULL, ",")) {
            args_t a = {.policy = p, .nodes = nodes, .jobs = jobs, .load = load, .seed = seed};
            double wall;
            long rss;
            rc |= run_child(do_replay, &a, &wall, &rss);
            printf("|           | wall %.2f s, peak RSS %.0f MB: %s |\n", wall, (double)rss / 1024,
                   wall < 20 && rss < 2048 * 1024 ? "within target" : "MISSES TARGET");
        }
    }
    printf("\n## One scheduling pass vs pending queue length (full cluster, %zu nodes; median of "
           "7)\n\nA full pass follows a release of resources; after an arrival alone only the "
           "new job is looked at.\n\n",
           nodes);
    printf("| policy    |   queue | full pass ms | ns per job | after 1 arrival us | jobs looked "
           "at/pass |\n");
    printf("|-----------|---------|--------------|------------|--------------------|---------------"
           "------|\n");
    char pbuf[256];
    snprintf(pbuf, sizeof pbuf, "%s", policies);
    for (char *p = strtok(pbuf, ","); p; p = strtok(NULL, ",")) {
        char qbuf[256];
        snprintf(qbuf, sizeof qbuf, "%s", queues);
        char *save;
        for (char *q = strtok_r(qbuf, ",", &save); q; q = strtok_r(NULL, ",", &save)) {
            args_t a = {.policy = p, .nodes = nodes, .queue = strtoull(q, NULL, 10), .seed = seed};
            double wall;
            long rss;
            rc |= run_child(do_pass, &a, &wall, &rss);
        }
    }
    return rc;
}
