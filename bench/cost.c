/* cost.c - benchmark: dollars spent and deadlines met by the cost-aware
 * policy against heterogeneity-agnostic FIFO, "always the fastest GPU" and
 * "always the cheapest GPU that fits" (issue #3, proof item 3).
 *
 * Workload (one per seed, drawn with drover's RNG): over --days days,
 * Poisson arrivals of
 *  - training jobs: a Llama-family model (1B..70B) on a GPU count that suits
 *    it, its throughput on every GPU type of the cluster from the analytic
 *    performance model (dr_perf_add_hint_classes), a token count that makes
 *    it run 1-72 h on its fastest type (log-uniform), and - for all but
 *    --best-effort of them - a deadline 1.2-3x that time after submission;
 *  - inference services: a model, a tensor-parallel width and an SLO on the
 *    time per output token at 32 requests in flight (20-80 ms); the GPU
 *    types whose modelled TPOT meets it (dr_perfmodel_serve_eval) are the
 *    service's allowed types.  A service runs 12 h - 7 d (declared).
 * Cost = on-prem GPU-hours x the catalog price of the type + the cloud
 * bill (pool nodes billed from provisioning to release at the pool price).
 *
 * usage: cost [--cluster NAME|FILE] [--seeds 0-4] [--days D] [--train N/day]
 *             [--serve N/day] [--best-effort F] [--policy SPEC]...
 *             [--prices on-demand|neocloud] [--rate-noise SIGMA] [--per-seed]
 * --rate-noise: the policies plan with rates off by a log-normal factor per
 * job class and GPU type (a performance model that is only that good); the
 * jobs run at the true ones (dr_sim_opts_t.rate_noise). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drover/config.h"
#include "drover/declare.h"
#include "drover/perfmodel.h"
#include "drover/report.h"
#include "drover/sim.h"
#include "drover/util.h"
#include "drover/workload.h"

#define MAXP 12

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const dr_err_t *err)
{
    fprintf(stderr, "cost: %s\n", err->msg);
    exit(1);
}

typedef struct opts {
    const char *cluster;
    uint64_t seed_lo, seed_hi;
    double days, train_per_day, serve_per_day, best_effort;
    const char *policies[MAXP];
    size_t np;
    bool per_seed;
    bool neocloud;          /* price on-prem GPUs at the catalog's neocloud column */
    double rate_noise;      /* policies plan with rates off by e^(N(0, this^2)) (--rate-noise) */
    dr_declare_opts_t decl; /* what users declare (--size-estimate) */
} opts_t;

/* Model families: Llama-style sizes and the GPU counts they are run on. */
static const struct {
    double params;
    double weight;
    uint32_t gpus[3];
} TRAIN[] = {{1e9, 0.25, {1, 2, 4}},    {3e9, 0.20, {2, 4, 8}},     {8e9, 0.25, {4, 8, 16}},
             {13e9, 0.15, {8, 16, 16}}, {34e9, 0.10, {16, 32, 32}}, {70e9, 0.05, {32, 64, 64}}};

static const struct {
    double params;
    double weight;
    uint32_t tp[2];
} SERVE[] = {{1e9, 0.2, {1, 1}},
             {8e9, 0.3, {1, 2}},
             {13e9, 0.2, {1, 2}},
             {34e9, 0.15, {2, 4}},
             {70e9, 0.15, {4, 8}}};

static const double SLO_MS[] = {20, 35, 50, 80};

static double log_uniform(dr_rng_t *r, double lo, double hi)
{
    return exp(log(lo) + dr_rng_uniform(r) * (log(hi) - log(lo)));
}

/* GPU types of c whose modelled time per output token for this service
 * meets slo_s, '|'-separated into buf; the best type alone if none does. */
static void service_types(const dr_cluster_t *c, double params, uint32_t tp, double slo_s,
                          char *buf, size_t cap)
{
    size_t n = 0;
    double best = INFINITY;
    int best_t = -1;
    buf[0] = '\0';
    for (size_t t = 0; t < c->ntypes; t++) {
        dr_perfmodel_net_t net;
        if (dr_perfmodel_net_from_cluster(&net, c, (unsigned)t, NULL) != DR_OK)
            continue;
        dr_perfmodel_serve_t s;
        dr_perfmodel_serve_init(&s);
        s.arch.params = params;
        s.prompt_tokens = 1024;
        s.output_tokens = 256;
        dr_perfmodel_serve_est_t e;
        if (dr_perfmodel_arch_complete(&s.arch, NULL) != DR_OK ||
            dr_perfmodel_serve_eval(&s, &c->types[t], tp, 32, &net, &e, NULL) != DR_OK || !e.fits)
            continue;
        if (e.tpot_s < best) {
            best = e.tpot_s;
            best_t = (int)t;
        }
        if (e.tpot_s <= slo_s)
            n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", n ? "|" : "",
                                  c->types[t].name);
    }
    if (n == 0 && best_t >= 0)
        snprintf(buf, cap, "%s", c->types[best_t].name);
}

/* The workload of one seed, bound to c, throughputs from the model. */
static void make_workload(dr_workload_t *wl, const dr_cluster_t *c, const opts_t *o, uint64_t seed)
{
    dr_err_t err;
    dr_rng_t rng;
    dr_rng_seed(&rng, seed * 7919 + 17);
    dr_workload_init(wl);
    double horizon = o->days * 86400;
    uint64_t id = 1;
    /* training jobs: the deadline factor is drawn now, applied once the
     * rates are known */
    double *factor = NULL, *hours = NULL;
    size_t nf = 0, fcap = 0, hcap = 0, nh = 0;
    double at = 0; /* arrival time, s */
    while (o->train_per_day > 0) {
        at += dr_rng_exp(&rng, o->train_per_day / 86400);
        if (at >= horizon)
            break;
        double u = dr_rng_uniform(&rng), acc = 0;
        size_t m = 0;
        for (; m + 1 < sizeof TRAIN / sizeof *TRAIN; m++)
            if (u < (acc += TRAIN[m].weight))
                break;
        dr_job_t j;
        dr_job_init(&j);
        j.id = id++;
        j.kind = DR_KIND_TRAIN;
        j.submit = dr_time_from_s(at);
        j.req.nodes = 0; /* --gpus=N: as few nodes as placement can manage */
        j.req.gpus_per_node = TRAIN[m].gpus[dr_rng_below(&rng, 3)];
        j.hint_params = TRAIN[m].params;
        j.hint_tokens = 1; /* set below from the rates */
        j.precision = DR_PREC_BF16;
        double f = dr_rng_uniform(&rng) < o->best_effort ? 0 : 1.2 + 1.8 * dr_rng_uniform(&rng);
        double h = log_uniform(&rng, 1, 72);
        if (dr_workload_add(wl, &j, 0 /* set below */, NULL) != 0 ||
            DR_PUSH(factor, nf, fcap, f) != 0 || DR_PUSH(hours, nh, hcap, h) != 0) {
            fprintf(stderr, "cost: out of memory\n");
            exit(1);
        }
    }
    size_t ntrain = wl->njobs;
    at = 0;
    while (o->serve_per_day > 0) {
        at += dr_rng_exp(&rng, o->serve_per_day / 86400);
        if (at >= horizon)
            break;
        double u = dr_rng_uniform(&rng), acc = 0;
        size_t m = 0;
        for (; m + 1 < sizeof SERVE / sizeof *SERVE; m++)
            if (u < (acc += SERVE[m].weight))
                break;
        uint32_t tp = SERVE[m].tp[dr_rng_below(&rng, 2)];
        double slo = SLO_MS[dr_rng_below(&rng, 4)] / 1000;
        char types[512];
        service_types(c, SERVE[m].params, tp, slo, types, sizeof types);
        dr_job_t j;
        dr_job_init(&j);
        j.id = id++;
        j.kind = DR_KIND_SERVE;
        j.submit = dr_time_from_s(at);
        j.req.nodes = 1;
        j.req.gpus_per_node = tp;
        double secs = 3600 * log_uniform(&rng, 12, 7 * 24);
        j.hint_params = 0;
        /* class 0: a service runs its time whatever the GPU; how long it
         * will be needed is declared like any size (dr_workload_declare) */
        if (dr_workload_add(wl, &j, secs, types) != 0) {
            fprintf(stderr, "cost: out of memory\n");
            exit(1);
        }
    }
    if (dr_perf_add_hint_classes(wl, c, true, &err) < 0)
        die(&err);
    /* tokens: hours on the job's fastest type; deadline: factor x that */
    int map[DR_MAX_GPU_TYPES];
    if (dr_perf_bind(&wl->perf, c, map, &err) != 0)
        die(&err);
    dr_perf_view_t pv = {.table = &wl->perf};
    memcpy(pv.map, map, sizeof map);
    for (size_t i = 0; i < ntrain && factor && hours; i++) {
        dr_job_t *j = &wl->jobs[i];
        double best = 0;
        for (size_t t = 0; t < c->ntypes; t++) {
            double r = dr_perf_rate(&pv, j, (unsigned)t);
            if (r > best)
                best = r;
        }
        wl->work[i] = j->hint_tokens = hours[i] * 3600 * best;
        if (factor[i] > 0)
            j->deadline = j->submit + dr_time_from_s(factor[i] * hours[i] * 3600);
    }
    free(factor);
    free(hours);
    if (dr_workload_finish(wl, &err) != 0 || dr_workload_bind(wl, c, false, &err) != 0)
        die(&err);
    dr_declare_opts_t d = o->decl;
    d.seed = seed;
    if (dr_workload_declare(wl, &d, &err) != 0)
        die(&err);
}

typedef struct figures {
    double total_usd, onprem_usd, cloud_usd, train_usd, serve_usd;
    double cloud_gpu_hours;
    double serve_share; /* services' share of the GPU-hours jobs held */
    size_t deadlines, met, services, served_at_once, unfinished;
    size_t trains, trains_done; /* training jobs, and those completed: train_jct_h is over them */
    double train_jct_h;
    double wall_s;
} figures_t;

/* Catalog-price dollars of the GPU time jobs of each kind held, from the
 * log (a record with milli > 0 holds until the job's next record). */
static void kind_dollars(const dr_sim_result_t *r, const dr_cluster_t *c, double *train,
                         double *serve, double *serve_gh, double *all_gh)
{
    *train = *serve = *serve_gh = *all_gh = 0;
    size_t n = r->njobs;
    dr_time_t *since = malloc(n * sizeof *since);
    uint32_t *milli = calloc(n, sizeof *milli);
    uint16_t *type = calloc(n, sizeof *type);
    size_t *at = malloc((n + 1) * sizeof *at); /* ids are 1..n: id -> index */
    if (!since || !milli || !type || !at) {
        fprintf(stderr, "cost: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        if (r->jobs[i].id <= n)
            at[r->jobs[i].id] = i;
    for (size_t i = 0; i < r->log.n; i++) {
        const dr_event_t *e = &r->log.ev[i];
        if (e->job == 0 || e->job > n)
            continue;
        size_t k = at[e->job];
        if (milli[k]) {
            double gh = dr_time_to_s(e->t - since[k]) / 3600 * milli[k] / 1000;
            double usd = gh * c->types[type[k]].price_hr;
            *all_gh += gh;
            if (r->jobs[k].kind == DR_KIND_SERVE) {
                *serve += usd;
                *serve_gh += gh;
            } else {
                *train += usd;
            }
        }
        milli[k] = e->milli;
        type[k] = e->type;
        since[k] = e->t;
    }
    free(since);
    free(milli);
    free(type);
    free(at);
}

/* The floor: every job alone on its cheapest type that can host it and -
 * for jobs with a deadline - meets the deadline when started at submit,
 * at catalog prices, never queued (capacity ignored). */
static void cost_floor(const dr_cluster_t *c, const dr_workload_t *wl, double *train, double *serve)
{
    dr_perf_view_t pv = {.table = &wl->perf};
    dr_err_t err;
    if (dr_perf_bind(&wl->perf, c, pv.map, &err) != 0)
        die(&err);
    *train = *serve = 0;
    for (size_t i = 0; i < wl->njobs; i++) {
        const dr_job_t *j = &wl->jobs[i];
        double g = (double)j->req.gpus_per_node * (j->req.nodes ? j->req.nodes : 1),
               best = INFINITY;
        dr_typemask_t run = dr_perf_runnable(&pv, c, j);
        for (unsigned t = 0; t < c->ntypes; t++) {
            dr_job_req_t one = j->req;
            one.types = 1ULL << t;
            if (!(run >> t & 1) || dr_cluster_req_possible(c, &one, NULL) != DR_OK)
                continue;
            double secs = wl->work[i] / dr_perf_rate(&pv, j, t);
            if (j->deadline > 0 && j->submit + dr_time_from_s(secs) > j->deadline)
                continue;
            double usd = c->types[t].price_hr * g * secs / 3600;
            if (usd < best)
                best = usd;
        }
        if (isfinite(best))
            *(j->kind == DR_KIND_SERVE ? serve : train) += best;
    }
}

static void run_one(const dr_cluster_t *c, const dr_workload_t *wl, const char *policy,
                    uint64_t seed, double rate_noise, figures_t *f)
{
    dr_sim_opts_t so;
    dr_sim_opts_default(&so);
    so.policy = policy;
    so.seed = seed;
    so.rate_noise = rate_noise; /* the same draw for every policy of a seed */
    so.rate_noise_seed = seed;
    so.restart_overhead_s = 300; /* 70B-class checkpoints: a restart costs 5 min */
    dr_sim_result_t r;
    dr_err_t err;
    double t0 = now_s();
    if (dr_sim_run(c, wl, &so, &r, &err) != 0)
        die(&err);
    memset(f, 0, sizeof *f);
    f->wall_s = now_s() - t0;
    dr_report_t rep;
    dr_report_opts_t ro = {.max_points = 16};
    if (dr_report_compute(&rep, policy, c, r.jobs, r.njobs, &r.log, &ro, &err) != 0)
        die(&err);
    f->onprem_usd = rep.cost_usd - r.cloud_busy_list_usd;
    f->cloud_usd = r.cloud_cost_usd;
    f->cloud_gpu_hours = r.cloud_gpu_hours;
    f->total_usd = f->onprem_usd + f->cloud_usd;
    double serve_gh, all_gh;
    kind_dollars(&r, c, &f->train_usd, &f->serve_usd, &serve_gh, &all_gh);
    f->serve_share = all_gh > 0 ? serve_gh / all_gh : 0;
    double jct = 0;
    size_t ntrain = 0;
    for (size_t i = 0; i < r.njobs; i++) {
        const dr_job_t *j = &r.jobs[i];
        bool done = j->state == DR_JOB_COMPLETED;
        f->unfinished += !done;
        if (j->kind == DR_KIND_SERVE) {
            f->services++;
            f->served_at_once +=
                j->first_start != DR_TIME_NEVER && dr_time_to_s(j->first_start - j->submit) <= 60;
            continue;
        }
        f->trains++;
        if (done) {
            jct += dr_time_to_s(j->end - j->submit);
            ntrain++;
        }
        if (j->deadline > 0) {
            f->deadlines++;
            f->met += done && j->end <= j->deadline;
        }
    }
    f->train_jct_h = ntrain ? jct / (double)ntrain / 3600 : NAN;
    f->trains_done = ntrain;
    dr_report_free(&rep);
    dr_sim_result_free(&r);
}

/* Figures of one configuration, per policy averaged over the seeds. */
typedef struct agg {
    figures_t m;  /* sums over seeds (counts) or means (dollars, hours) */
    double ratio; /* mean over seeds of total $ / the reference's */
    double wall;  /* slowest run */
} agg_t;

typedef struct floor_fig {
    double train, serve, ratio;
} floor_fig_t;

static void run_config(const dr_cluster_t *c, const opts_t *o, size_t ref, agg_t *agg,
                       floor_fig_t *fl)
{
    size_t ns = (size_t)(o->seed_hi - o->seed_lo + 1);
    figures_t *fig = calloc(ns * o->np, sizeof *fig);
    double *flr = calloc(ns, sizeof *flr);
    if (!fig || !flr) {
        fprintf(stderr, "cost: out of memory\n");
        exit(1);
    }
    memset(fl, 0, sizeof *fl);
    for (uint64_t s = o->seed_lo; s <= o->seed_hi; s++) {
        dr_workload_t wl;
        make_workload(&wl, c, o, s);
        double ft, fs;
        cost_floor(c, &wl, &ft, &fs);
        fl->train += ft / (double)ns;
        fl->serve += fs / (double)ns;
        flr[s - o->seed_lo] = ft + fs;
        for (size_t p = 0; p < o->np; p++) {
            figures_t *f = &fig[(s - o->seed_lo) * o->np + p];
            run_one(c, &wl, o->policies[p], s, o->rate_noise, f);
            if (o->per_seed)
                printf("seed %llu %-22s $%10.0f (cloud $%8.0f) deadlines %zu/%zu services at "
                       "once %zu/%zu  %.2f s\n",
                       (unsigned long long)s, o->policies[p], f->total_usd, f->cloud_usd, f->met,
                       f->deadlines, f->served_at_once, f->services, f->wall_s);
        }
        dr_workload_free(&wl);
    }
    for (size_t p = 0; p < o->np; p++) {
        agg_t *a = &agg[p];
        memset(a, 0, sizeof *a);
        figures_t *m = &a->m;
        for (size_t s = 0; s < ns; s++) {
            const figures_t *f = &fig[s * o->np + p];
            double w = 1.0 / (double)ns;
            m->total_usd += f->total_usd * w;
            m->train_usd += f->train_usd * w;
            m->serve_usd += f->serve_usd * w;
            m->cloud_usd += f->cloud_usd * w;
            m->cloud_gpu_hours += f->cloud_gpu_hours * w;
            m->train_jct_h += f->train_jct_h * w;
            m->serve_share += f->serve_share * w;
            m->met += f->met;
            m->deadlines += f->deadlines;
            m->served_at_once += f->served_at_once;
            m->services += f->services;
            m->unfinished += f->unfinished;
            m->trains += f->trains;
            m->trains_done += f->trains_done;
            a->ratio += f->total_usd / fig[s * o->np + ref].total_usd * w;
            if (f->wall_s > a->wall)
                a->wall = f->wall_s;
        }
    }
    for (size_t s = 0; s < ns; s++)
        fl->ratio += flr[s] / fig[s * o->np + ref].total_usd / (double)ns;
    free(fig);
    free(flr);
}

static double pct(size_t a, size_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0;
}

static void print_table(const opts_t *o, size_t ref, const agg_t *agg, const floor_fig_t *fl)
{
    printf("| policy | total $ (mean/seed) | vs %s | training $ | services $ | cloud $ (GPU-h) | "
           "deadlines met | services started at once | training JCT h (completed) | unfinished | "
           "wall s |\n",
           o->policies[ref]);
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t p = 0; p < o->np; p++) {
        const figures_t *m = &agg[p].m;
        printf("| %s | %.0f | %.3f | %.0f | %.0f | %.0f (%.0f) | %zu/%zu (%.1f%%) | %zu/%zu | "
               "%.1f (%zu/%zu) | %zu | %.2f |\n",
               o->policies[p], m->total_usd, agg[p].ratio, m->train_usd, m->serve_usd, m->cloud_usd,
               m->cloud_gpu_hours, m->met, m->deadlines, pct(m->met, m->deadlines),
               m->served_at_once, m->services, m->train_jct_h, m->trains_done, m->trains,
               m->unfinished, agg[p].wall);
    }
    printf("| floor: every job alone on its cheapest type that meets its deadline | %.0f | %.3f | "
           "%.0f | %.0f | - | - | - | - | - | - |\n",
           fl->train + fl->serve, fl->ratio, fl->train, fl->serve);
}

static int load_cluster(dr_cluster_t *c, const char *name, bool neocloud)
{
    dr_err_t err;
    dr_catalog_t cat;
    if (dr_catalog_builtin(&cat, &err) != 0)
        die(&err);
    dr_cluster_init(c);
    int rc = dr_cluster_preset(c, &cat, name, &err);
    if (rc == DR_ENOENT) {
        dr_cluster_free(c);
        dr_cluster_init(c);
        rc = dr_config_load(c, &cat, name, &err);
    }
    dr_catalog_free(&cat);
    if (rc != 0)
        die(&err);
    for (size_t t = 0; t < c->ntypes && neocloud; t++)
        c->types[t].price_hr = c->types[t].price_neocloud_hr;
    return DR_OK;
}

static void print_setup(const dr_cluster_t *c, const opts_t *o)
{
    printf("cluster %s: %llu on-prem GPUs", o->cluster,
           (unsigned long long)dr_cluster_total_gpus(c, -1));
    for (size_t p = 0; p < c->npools; p++)
        printf(", pool %s: up to %u x %u %s at $%.2f/GPU-h (%.0f min to provision)",
               c->pools[p].name, c->pools[p].max_nodes, c->pools[p].gpus_per_node,
               c->types[c->pools[p].type].name,
               isnan(c->pools[p].price_hr) ? c->types[c->pools[p].type].price_hr
                                           : c->pools[p].price_hr,
               dr_time_to_s(c->pools[p].provision_delay) / 60);
    char sm[32];
    printf("\nsize estimates: %s%s; ", dr_size_mode_format(&o->decl, sm, sizeof sm),
           o->decl.mode == DR_SIZE_EXACT ? " (REFERENCE ONLY: policies told true sizes)" : "");
    if (o->rate_noise > 0)
        printf("rates: the policies plan with every class's rate on every type off by "
               "e^(N(0, %.2f^2)) (drawn per class and type and seed), jobs run at the true ones; ",
               o->rate_noise);
    printf("prices: catalog %s column; workload: %.0f days, %.1f training jobs/day (%.0f%% "
           "without deadline), %.1f services/day; seeds %llu-%llu\n\n",
           o->neocloud ? "neocloud" : "on-demand", o->days, o->train_per_day, 100 * o->best_effort,
           o->serve_per_day, (unsigned long long)o->seed_lo, (unsigned long long)o->seed_hi);
}

/* The headline table over the load (training jobs and services per day)
 * and the two price columns: from a fleet where "fastest" meets most
 * deadlines to one where it misses four in ten. */
static void sweep(opts_t *o)
{
    static const char *const pols[] = {"fifo", "fastest", "cheapest", "cost"};
    static const double train[] = {6, 8, 10, 12, 16};
    static const double serve[] = {4, 6, 8, 10, 12};
    o->np = 4;
    for (size_t p = 0; p < 4; p++)
        o->policies[p] = pols[p];
    printf("| prices | training jobs/day | services/day | services' share of GPU-hours (cost) | "
           "fastest $ | cost $ | "
           "cost / fastest | floor / fastest | deadlines met: fifo / fastest / cheapest / cost | "
           "services at once: fastest / cost |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (int neo = 0; neo < 2; neo++)
        for (size_t k = 0; k < sizeof serve / sizeof *serve; k++) {
            o->neocloud = neo;
            o->train_per_day = train[k];
            o->serve_per_day = serve[k];
            dr_cluster_t c;
            load_cluster(&c, o->cluster, o->neocloud);
            agg_t agg[4];
            floor_fig_t fl;
            run_config(&c, o, 1, agg, &fl);
            printf(
                "| %s | %.0f | %.0f | %.0f%% | %.0f | %.0f | **%.3f** | %.3f | %.1f%% / %.1f%% / "
                "%.1f%% / **%.1f%%** | %zu/%zu / %zu/%zu |\n",
                neo ? "neocloud" : "on-demand", train[k], serve[k], 100 * agg[3].m.serve_share,
                agg[1].m.total_usd, agg[3].m.total_usd, agg[3].ratio, fl.ratio,
                pct(agg[0].m.met, agg[0].m.deadlines), pct(agg[1].m.met, agg[1].m.deadlines),
                pct(agg[2].m.met, agg[2].m.deadlines), pct(agg[3].m.met, agg[3].m.deadlines),
                agg[1].m.served_at_once, agg[1].m.services, agg[3].m.served_at_once,
                agg[3].m.services);
            dr_cluster_free(&c);
        }
}

int main(int argc, char **argv)
{
    opts_t o = {.cluster = "mixed-modern",
                .seed_lo = 0,
                .seed_hi = 4,
                .days = 14,
                .train_per_day = 10,
                .serve_per_day = 8,
                .best_effort = 0.2};
    dr_declare_opts_default(&o.decl);
    bool do_sweep = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--cluster") == 0 && v)
            o.cluster = argv[++i];
        else if (strcmp(a, "--seeds") == 0 && v) {
            char *e;
            o.seed_lo = o.seed_hi = strtoull(argv[++i], &e, 10);
            if (*e == '-')
                o.seed_hi = strtoull(e + 1, NULL, 10);
        } else if (strcmp(a, "--days") == 0 && v)
            o.days = atof(argv[++i]);
        else if (strcmp(a, "--train") == 0 && v)
            o.train_per_day = atof(argv[++i]);
        else if (strcmp(a, "--serve") == 0 && v)
            o.serve_per_day = atof(argv[++i]);
        else if (strcmp(a, "--best-effort") == 0 && v)
            o.best_effort = atof(argv[++i]);
        else if (strcmp(a, "--policy") == 0 && v && o.np < MAXP)
            o.policies[o.np++] = argv[++i];
        else if (strcmp(a, "--size-estimate") == 0 && v) {
            dr_err_t e;
            if (dr_size_mode_parse(argv[++i], &o.decl, &e) != 0) {
                fprintf(stderr, "cost: --size-estimate: %s\n", e.msg);
                return 2;
            }
        } else if (strcmp(a, "--rate-noise") == 0 && v) {
            o.rate_noise = atof(argv[++i]);
            if (!(o.rate_noise >= 0) || o.rate_noise > 5) {
                fprintf(stderr, "cost: --rate-noise: '%s' is not a sigma from 0 to 5\n", argv[i]);
                return 2;
            }
        } else if (strcmp(a, "--per-seed") == 0)
            o.per_seed = true;
        else if (strcmp(a, "--sweep") == 0)
            do_sweep = true;
        else if (strcmp(a, "--prices") == 0 && v) {
            o.neocloud = strcmp(argv[++i], "neocloud") == 0;
            if (!o.neocloud && strcmp(argv[i], "on-demand") != 0) {
                fprintf(stderr, "cost: --prices: '%s' is not on-demand or neocloud\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: cost [--cluster NAME|FILE] [--seeds 0-4] [--days D] "
                            "[--train N] [--serve N] [--best-effort F] [--policy SPEC]... "
                            "[--prices on-demand|neocloud] [--size-estimate MODE] "
                            "[--rate-noise SIGMA] [--per-seed] [--sweep]\n");
            return 2;
        }
    }
    if (o.seed_hi < o.seed_lo || !(o.days > 0) || o.train_per_day < 0 || o.serve_per_day < 0) {
        fprintf(stderr, "cost: bad --seeds, --days, --train or --serve\n");
        return 2;
    }
    double t0 = now_s();
    if (do_sweep) {
        dr_cluster_t c;
        load_cluster(&c, o.cluster, false);
        print_setup(&c, &o);
        dr_cluster_free(&c);
        sweep(&o);
        printf("\n(deadlines met: share of the training jobs with a deadline that completed by "
               "it; services at once: started within 60 s of submission; floor: every job alone "
               "on its cheapest type that meets its deadline, capacity ignored)\n");
        printf("total wall time %.1f s\n", now_s() - t0);
        return 0;
    }
    if (o.np == 0) {
        static const char *const def[] = {
            "fifo", "fastest", "cheapest", "cheapest:strict=1", "fastest:strict=1", "cost"};
        for (size_t i = 0; i < sizeof def / sizeof *def; i++)
            o.policies[o.np++] = def[i];
    }
    dr_cluster_t c;
    load_cluster(&c, o.cluster, o.neocloud);
    print_setup(&c, &o);
    /* the reference for the ratios: "fastest" if it runs, else the first */
    size_t ref = 0;
    for (size_t p = 0; p < o.np; p++)
        if (strcmp(o.policies[p], "fastest") == 0)
            ref = p;
    agg_t agg[MAXP];
    floor_fig_t fl;
    run_config(&c, &o, ref, agg, &fl);
    print_table(&o, ref, agg, &fl);
    printf("\n(training $ and services $: the jobs' GPU-hours at catalog prices, cloud nodes "
           "included; total = on-prem GPU-hours at catalog prices + the cloud bill; ratios: mean "
           "over seeds of each seed's ratio; deadlines met: training jobs with a deadline that "
           "completed by it; services at once: started within 60 s of submission; training JCT: "
           "mean over seeds of the mean over the completed training jobs, counted beside it over "
           "all seeds; unfinished: jobs of any kind not completed, all seeds)\n");
    printf("total wall time %.1f s\n", now_s() - t0);
    dr_cluster_free(&c);
    return 0;
}
