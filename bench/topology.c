/* topology.c - benchmark: what topology-aware gang placement buys (issue #3).
 *
 * The cluster, written as an admin would: two GB200 NVL72 racks (18 nodes x
 * 4 GPUs, one NVLink domain per rack, one leaf switch per rack) and 64
 * 8-GPU H100 nodes on four leaf switches of 16, every leaf under one spine:
 * 656 GPUs.
 *
 * Workload (one per seed, drawn with drover's RNG): Poisson arrivals at the
 * offered load --load (GPU-seconds asked / GPU-seconds available, at the
 * nominal rate), run times log-uniform 10 min - 24 h, walltime limits 1.5-3x
 * the run time (above the slowest span factor, so no job times out for
 * being placed badly), job shapes by count:
 *  - 40% 1 GPU, 25% 4 GPUs, 20% 8 GPUs, each on one node;
 *  - 15% gangs of 16 (8%), 32 (5%) or 64 GPUs (2%): half ask whole 8-GPU
 *    nodes (--nodes=G/8 --gpus-per-node=8, so H100 only), half ask
 *    --gpus=G (any type, as few nodes as placement can manage).
 * Every job's work is its run time at rate 1 on any GPU (perf class 0), so
 * the only thing placement changes is where a job runs and - with the span
 * slowdown on (dr_span_slowdown_default: nvlink 1, leaf 0.9, tree 0.8,
 * network 0.7, stated assumptions, docs/scheduling.md) - how fast.
 *
 * The same workload is replayed with each policy under best-fit (the
 * topology-aware placement) and first-fit (lowest-numbered nodes, the plain
 * baseline).  Figures are means over the seeds; the span histogram comes
 * from dr_sched_stats_t.starts_by_locality and .leaves_spanned.
 *
 * usage: topology [--seeds 0-4] [--jobs 20000] [--load 0.8] [--policies a,b]
 *                 [--no-slowdown] [--per-seed] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drover/config.h"
#include "drover/sim.h"
#include "drover/util.h"
#include "drover/workload.h"

#define MAXP 8

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const dr_err_t *err)
{
    fprintf(stderr, "topology: %s: %s\n", what, err->msg);
    exit(1);
}

static const char CLUSTER[] =
    "# two GB200 NVL72 racks: 18 compute trays of 4 GPUs, one NVLink domain each\n"
    "NodeName=gb-r1-[01-18] Gpus=GB200:4 Cpus=72 MemGB=480 NvlinkDomain=rack1 Switch=gb-leaf1\n"
    "NodeName=gb-r2-[01-18] Gpus=GB200:4 Cpus=72 MemGB=480 NvlinkDomain=rack2 Switch=gb-leaf2\n"
    "# 64 HGX H100 servers, 16 per leaf switch\n"
    "NodeName=h100-[001-064] Gpus=H100-SXM:8 Cpus=192 MemGB=2048 NvlinkDomain=node\n"
    "SwitchName=leaf1 Nodes=h100-[001-016] LinkGbps=400\n"
    "SwitchName=leaf2 Nodes=h100-[017-032] LinkGbps=400\n"
    "SwitchName=leaf3 Nodes=h100-[033-048] LinkGbps=400\n"
    "SwitchName=leaf4 Nodes=h100-[049-064] LinkGbps=400\n"
    "SwitchName=spine Switches=gb-leaf[1-2],leaf[1-4] LinkGbps=800\n";

/* Job shapes by count: total GPUs, share; gangs >= 16 GPUs. */
static const struct {
    uint32_t gpus;
    double share;
} SHAPES[] = {{1, 0.40}, {4, 0.25}, {8, 0.20}, {16, 0.08}, {32, 0.05}, {64, 0.02}};
#define NSHAPES (sizeof SHAPES / sizeof *SHAPES)

static const double RUN_MIN_S = 600, RUN_MAX_S = 86400;

static double log_uniform(dr_rng_t *r, double lo, double hi)
{
    return exp(log(lo) + dr_rng_uniform(r) * (log(hi) - log(lo)));
}

static bool is_gang(const dr_job_t *j)
{
    return j->req.nodes != 1;
}

static void make_workload(dr_workload_t *wl, const dr_cluster_t *c, size_t njobs, double load,
                          uint64_t seed)
{
    dr_rng_t rng;
    dr_rng_seed(&rng, seed * 7919 + 23);
    double mean_gpus = 0;
    for (size_t k = 0; k < NSHAPES; k++)
        mean_gpus += SHAPES[k].share * SHAPES[k].gpus;
    double mean_run = (RUN_MAX_S - RUN_MIN_S) / log(RUN_MAX_S / RUN_MIN_S);
    double rate = load * (double)dr_cluster_total_gpus(c, -1) / (mean_gpus * mean_run);
    dr_workload_init(wl);
    if (dr_workload_reserve(wl, njobs) != 0) {
        fprintf(stderr, "topology: out of memory\n");
        exit(1);
    }
    double at = 0;
    for (size_t i = 0; i < njobs; i++) {
        at += dr_rng_exp(&rng, rate);
        double u = dr_rng_uniform(&rng), acc = 0;
        size_t k = 0;
        for (; k + 1 < NSHAPES; k++)
            if (u < (acc += SHAPES[k].share))
                break;
        dr_job_t j;
        dr_job_init(&j);
        j.id = i + 1;
        j.kind = DR_KIND_TRAIN;
        j.submit = dr_time_from_s(at);
        uint32_t g = SHAPES[k].gpus;
        if (g < 16) {
            j.req.nodes = 1;
            j.req.gpus_per_node = g;
        } else if (dr_rng_below(&rng, 2) == 0) {
            j.req.nodes = g / 8; /* whole 8-GPU nodes */
            j.req.gpus_per_node = 8;
        } else {
            j.req.nodes = 0; /* --gpus=G */
            j.req.gpus_per_node = g;
        }
        double run = log_uniform(&rng, RUN_MIN_S, RUN_MAX_S);
        j.work_declared = run;
        j.time_limit = dr_time_from_s(run * (1.5 + 1.5 * dr_rng_uniform(&rng)));
        if (dr_workload_add(wl, &j, j.work_declared, NULL) != 0) {
            fprintf(stderr, "topology: out of memory\n");
            exit(1);
        }
    }
    dr_err_t err;
    if (dr_workload_finish(wl, &err) != 0 || dr_workload_bind(wl, c, false, &err) != 0)
        die("workload", &err);
}

typedef struct figures {
    double gang_starts;
    double share[DR_LOC_N]; /* of multi-node starts */
    double leaves_per_gang;
    double gang_jct_h, all_jct_h, q8_h;
    double timeouts, unfinished;
    double wall_s;
} figures_t;

static void run_one(const dr_cluster_t *c, const dr_workload_t *wl, const char *policy,
                    dr_place_strategy_t placement, const dr_span_slowdown_t *slow, uint64_t seed,
                    figures_t *f)
{
    dr_sim_opts_t so;
    dr_sim_opts_default(&so);
    so.policy = policy;
    so.placement = placement;
    so.seed = seed;
    so.span_slowdown = slow;
    dr_sim_result_t r;
    dr_err_t err;
    double t0 = now_s();
    if (dr_sim_run(c, wl, &so, &r, &err) != 0)
        die(policy, &err);
    memset(f, 0, sizeof *f);
    f->wall_s = now_s() - t0;
    const dr_sched_stats_t *st = &r.stats;
    uint64_t multi = st->starts - st->starts_by_locality[DR_LOC_NODE];
    f->gang_starts = (double)multi;
    for (int l = 0; l < DR_LOC_N; l++)
        f->share[l] = multi ? (double)st->starts_by_locality[l] / (double)multi : 0;
    f->leaves_per_gang = multi ? (double)st->leaves_spanned / (double)multi : 0;
    double jct = 0, gjct = 0, q8 = 0;
    size_t n = 0, ng = 0, n8 = 0;
    for (size_t i = 0; i < r.njobs; i++) {
        const dr_job_t *j = &r.jobs[i];
        if (j->state == DR_JOB_TIMEOUT)
            f->timeouts++;
        if (!dr_job_state_terminal((dr_job_state_t)j->state))
            f->unfinished++;
        if (j->req.nodes == 1 && j->req.gpus_per_node == 8 && j->first_start != DR_TIME_NEVER) {
            q8 += dr_time_to_s(j->first_start - j->submit);
            n8++;
        }
        if (j->state != DR_JOB_COMPLETED)
            continue;
        double t = dr_time_to_s(j->end - j->submit);
        jct += t;
        n++;
        if (is_gang(j)) {
            gjct += t;
            ng++;
        }
    }
    f->all_jct_h = n ? jct / (double)n / 3600 : NAN;
    f->gang_jct_h = ng ? gjct / (double)ng / 3600 : NAN;
    f->q8_h = n8 ? q8 / (double)n8 / 3600 : NAN;
    dr_sim_result_free(&r);
}

static void add(figures_t *sum, const figures_t *f)
{
    sum->gang_starts += f->gang_starts;
    for (int l = 0; l < DR_LOC_N; l++)
        sum->share[l] += f->share[l];
    sum->leaves_per_gang += f->leaves_per_gang;
    sum->gang_jct_h += f->gang_jct_h;
    sum->all_jct_h += f->all_jct_h;
    sum->q8_h += f->q8_h;
    sum->timeouts += f->timeouts;
    sum->unfinished += f->unfinished;
    sum->wall_s += f->wall_s;
}

static void print_header(void)
{
    printf("| policy | placement | gang starts | 1 NVLink domain | 1 leaf | several leaves | "
           "network | leaves/gang | gang JCT h | all JCT h | 8-GPU queue h | timeouts | "
           "sim wall s |\n");
    printf("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
}

static void print_row(const char *policy, dr_place_strategy_t pl, const figures_t *s, double n)
{
    printf("| %s | %s | %.1f | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.2f | %.2f | %.2f | %.2f | "
           "%.1f | %.3f |\n",
           policy, dr_place_strategy_name(pl), s->gang_starts / n,
           100 * s->share[DR_LOC_NVLINK] / n, 100 * s->share[DR_LOC_LEAF] / n,
           100 * s->share[DR_LOC_TREE] / n, 100 * s->share[DR_LOC_NETWORK] / n,
           s->leaves_per_gang / n, s->gang_jct_h / n, s->all_jct_h / n, s->q8_h / n,
           s->timeouts / n, s->wall_s / n);
}

int main(int argc, char **argv)
{
    uint64_t seed_lo = 0, seed_hi = 4;
    size_t njobs = 20000;
    double load = 0.8;
    bool slowdown = true, per_seed = false;
    const char *policies[MAXP] = {"fifo", "backfill", "drover"};
    size_t np = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
            char *end;
            seed_lo = seed_hi = strtoull(argv[++i], &end, 10);
            if (*end == '-')
                seed_hi = strtoull(end + 1, NULL, 10);
        } else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
            njobs = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--load") && i + 1 < argc) {
            load = strtod(argv[++i], NULL);
        } else if (!strcmp(argv[i], "--policies") && i + 1 < argc) {
            np = 0;
            for (char *p = strtok(argv[++i], ","); p && np < MAXP; p = strtok(NULL, ","))
                policies[np++] = p;
        } else if (!strcmp(argv[i], "--no-slowdown")) {
            slowdown = false;
        } else if (!strcmp(argv[i], "--per-seed")) {
            per_seed = true;
        } else {
            fprintf(stderr, "usage: topology [--seeds 0-4] [--jobs N] [--load X] "
                            "[--policies a,b] [--no-slowdown] [--per-seed]\n");
            return 2;
        }
    }
    if (np == 0)
        np = 3;
    if (seed_hi < seed_lo || njobs == 0 || !(load > 0)) {
        fprintf(stderr, "topology: bad --seeds, --jobs or --load\n");
        return 2;
    }
    dr_catalog_t cat;
    dr_err_t err;
    if (dr_catalog_builtin(&cat, &err) != 0)
        die("catalog", &err);
    dr_cluster_t c;
    dr_cluster_init(&c);
    if (dr_config_parse(&c, &cat, "topology.conf", CLUSTER, strlen(CLUSTER), &err) != 0)
        die("cluster", &err);
    dr_catalog_free(&cat);
    dr_span_slowdown_t slow;
    dr_span_slowdown_default(&slow);

    const dr_place_strategy_t PL[2] = {DR_PLACE_BEST_FIT, DR_PLACE_FIRST_FIT};
    figures_t sum[MAXP][2];
    memset(sum, 0, sizeof sum);
    double nseeds = (double)(seed_hi - seed_lo + 1), t0 = now_s();
    printf("# topology: %zu nodes, %llu GPUs (2 GB200 NVL72 racks + 64 x 8 H100 on 4 leaves, one "
           "spine); %zu jobs per seed, offered load %.2f, seeds %llu-%llu; span slowdown %s\n\n",
           c.nnodes, (unsigned long long)dr_cluster_total_gpus(&c, -1), njobs, load,
           (unsigned long long)seed_lo, (unsigned long long)seed_hi,
           slowdown ? "nvlink 1, leaf 0.9, tree 0.8, network 0.7" : "off");
    if (per_seed)
        print_header();
    for (uint64_t seed = seed_lo; seed <= seed_hi; seed++) {
        dr_workload_t wl;
        make_workload(&wl, &c, njobs, load, seed);
        for (size_t p = 0; p < np; p++)
            for (int k = 0; k < 2; k++) {
                figures_t f;
                run_one(&c, &wl, policies[p], PL[k], slowdown ? &slow : NULL, seed, &f);
                add(&sum[p][k], &f);
                if (per_seed) {
                    char name[80];
                    snprintf(name, sizeof name, "%s (seed %llu)", policies[p],
                             (unsigned long long)seed);
                    print_row(name, PL[k], &f, 1);
                }
            }
        dr_workload_free(&wl);
    }
    if (per_seed)
        printf("\n");
    printf("Means over %.0f seeds; shares are of the starts on several nodes (gangs).\n\n", nseeds);
    print_header();
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < 2; k++)
            print_row(policies[p], PL[k], &sum[p][k], nseeds);
    double unfinished = 0;
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < 2; k++)
            unfinished += sum[p][k].unfinished;
    printf("\n%.0f jobs left unfinished in all runs; total wall %.2f s\n", unfinished,
           now_s() - t0);
    dr_cluster_free(&c);
    return 0;
}
