/* sim.c - `drover sim`: replay a trace on a simulated cluster with one or
 * more policies and report side by side (table, JSON, SVG charts). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "drover/compare.h"
#include "drover/config.h"
#include "drover/declare.h"
#include "drover/report.h"
#include "drover/sched.h"
#include "drover/sim.h"
#include "drover/workload.h"

#define MAX_POLICIES 16

static void sim_usage(FILE *f)
{
    fprintf(f,
            "usage: drover sim --cluster FILE|PRESET --trace FORMAT:PATH --policy NAME[,NAME...]\n"
            "                  [options]\n"
            "\n"
            "  --cluster FILE|PRESET  cluster config file, or a preset:");
    for (const char *const *p = dr_cluster_preset_names(); *p; p++)
        fprintf(f, " %s", *p);
    fprintf(
        f,
        "\n"
        "  --trace FORMAT:PATH    FORMAT: gavel, philly, openb, drover\n"
        "  --workload gavel       instead of a trace, Gavel's workload generator:\n"
        "      --rate JOBS_PER_HR   Poisson arrival rate (required)\n"
        "      --jobs N             jobs to generate (default: enough to outlast the window)\n"
        "      --multi-gpu          scale factors 1/2/4/8 (70/10/15/5%%) instead of all 1\n"
        "      --steady-state       first fill the cluster with jobs at t=0 (Gavel's option)\n"
        "      (Gavel's own random streams: --seed N gives the jobs Gavel draws with seed N)\n"
        "  --window FIRST:LAST    measure jobs FIRST..LAST (Gavel's 0-based job numbers) and\n"
        "                         stop when they are done; adds lower_bound_avg_jct_s,\n"
        "                         slowdown and finish-time fairness to the report\n"
        "  --size-estimate MODE   what users declare about job sizes: lognormal:S\n"
        "                         (declared = true size x e^N(0,S^2), default S=1),\n"
        "                         exact (= true size: a reference only), none, or trace\n"
        "                         (the trace's estimate_s / time_limit_s columns)\n"
        "  --walltime-factor F    walltime limit for jobs without one: true run time on\n"
        "                         the slowest usable GPU x F x e^(noise |N(0,1)|)\n"
        "                         (default 2; 0 = none; never with --size-estimate none)\n"
        "  --walltime-noise S     spread of that over-estimate (default 1)\n"
        "  --ckpt-every DUR       checkpoint interval of training jobs (default 30m; 0 = none):\n"
        "                         a node failure loses the progress since the last one\n"
        "  --ckpt-write DUR       time each checkpoint costs (default 10s)\n"
        "  --restart-overhead DUR time every restart spends reloading (default 30s)\n"
        "  --rate-noise S         the policies plan with every class's rate on every type\n"
        "                         off by e^(N(0,S^2)); jobs run at the true rates\n"
        "  --dump-jobs FILE       write the jobs replayed (arrival, shape, declared and\n"
        "                         true size) as CSV, for replay by another simulator\n"
        "  --policy A,B,...       policies to compare (NAME or NAME:key=val,...); see\n"
        "                         --list-policies\n"
        "  --placement S          best-fit (default) or first-fit\n"
        "  --span-slowdown SPEC   slow jobs spanning nodes: 'default' (nvlink=1,leaf=0.9,\n"
        "                         tree=0.8,network=0.7) or KEY=FACTOR,... over it (off\n"
        "                         by default; see docs/scheduling.md)\n"
        "  --seed N               seed for failure injection (default 0)\n"
        "  --json                 print {\"policies\": [...]} instead of a table\n"
        "  --plot DIR             write utilisation, queue and JCT-CDF charts (SVG) to DIR\n"
        "  --lenient              skip malformed trace rows (counted in the report)\n"
        "  --throughputs FILE     Gavel throughput CSV (default: built in)\n"
        "  --catalog FILE         GPU catalog CSV (default: built in)\n"
        "  --max-jobs N           replay only the first N jobs\n"
        "  --horizon DUR          stop at this simulated time (e.g. 30d)\n"
        "  --node-mtbf DUR        inject node failures with this mean time between\n"
        "                         failures per node; --node-repair DUR (default 1h)\n"
        "  --audit                check the resource ledger after every pass (slow)\n"
        "  --quiet                no progress bar\n"
        "  --list-policies        list policies and exit\n");
}

typedef struct progress {
    const char *policy;
    int last;
} progress_t;

static void show_progress(void *ud, double frac)
{
    progress_t *p = ud;
    int pct = (int)(frac * 100 + 0.5);
    if (pct == p->last)
        return;
    p->last = pct;
    int w = 30, fill = pct * w / 100;
    fprintf(stderr, "\r  %-16.16s [", p->policy);
    for (int i = 0; i < w; i++)
        fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %3d%%", pct);
    if (pct >= 100)
        fputc('\n', stderr);
    fflush(stderr);
}

int cli_sim(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--openb") == 0)
            return cli_sim_openb(argc, argv);
    const char *cluster_arg = NULL, *trace_arg = NULL, *policy_arg = NULL, *plot_dir = NULL;
    const char *catalog_path = NULL, *tput_path = NULL;
    dr_sim_opts_t so;
    dr_sim_opts_default(&so);
    dr_trace_opts_t to;
    dr_trace_opts_default(&to);
    dr_declare_opts_t dopt;
    dr_declare_opts_default(&dopt);
    const char *dump_path = NULL;
    bool json = false, quiet = false;
    dr_span_slowdown_t span;
    enum {
        O_PLACEMENT = 256,
        O_LENIENT,
        O_WALLF,
        O_TPUT,
        O_CATALOG,
        O_MAXJOBS,
        O_HORIZON,
        O_MTBF,
        O_REPAIR,
        O_AUDIT,
        O_QUIET,
        O_LISTP,
        O_WORKLOAD,
        O_RATE,
        O_JOBS,
        O_WINDOW,
        O_MULTI,
        O_RESTART,
        O_RATE_NOISE,
        O_STEADY,
        O_SPAN,
        O_SIZE,
        O_WNOISE,
        O_CKPT,
        O_CKPTW,
        O_DUMP
    };
    const char *workload = NULL;
    double rate = 0;
    size_t gen_jobs = 0;
    uint64_t win_first = 0, win_last = 0;
    bool have_window = false, multi_gpu = false, steady = false;
    static const struct option opts[] = {
        {"cluster", required_argument, 0, 'c'},
        {"trace", required_argument, 0, 't'},
        {"policy", required_argument, 0, 'p'},
        {"seed", required_argument, 0, 's'},
        {"json", no_argument, 0, 'j'},
        {"plot", required_argument, 0, 'o'},
        {"placement", required_argument, 0, O_PLACEMENT},
        {"lenient", no_argument, 0, O_LENIENT},
        {"walltime-factor", required_argument, 0, O_WALLF},
        {"throughputs", required_argument, 0, O_TPUT},
        {"catalog", required_argument, 0, O_CATALOG},
        {"max-jobs", required_argument, 0, O_MAXJOBS},
        {"horizon", required_argument, 0, O_HORIZON},
        {"node-mtbf", required_argument, 0, O_MTBF},
        {"node-repair", required_argument, 0, O_REPAIR},
        {"audit", no_argument, 0, O_AUDIT},
        {"quiet", no_argument, 0, O_QUIET},
        {"list-policies", no_argument, 0, O_LISTP},
        {"workload", required_argument, 0, O_WORKLOAD},
        {"rate", required_argument, 0, O_RATE},
        {"jobs", required_argument, 0, O_JOBS},
        {"window", required_argument, 0, O_WINDOW},
        {"multi-gpu", no_argument, 0, O_MULTI},
        {"steady-state", no_argument, 0, O_STEADY},
        {"restart-overhead", required_argument, 0, O_RESTART},
        {"rate-noise", required_argument, 0, O_RATE_NOISE},
        {"span-slowdown", required_argument, 0, O_SPAN},
        {"size-estimate", required_argument, 0, O_SIZE},
        {"walltime-noise", required_argument, 0, O_WNOISE},
        {"ckpt-every", required_argument, 0, O_CKPT},
        {"ckpt-write", required_argument, 0, O_CKPTW},
        {"dump-jobs", required_argument, 0, O_DUMP},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "c:t:p:s:jo:h", opts, NULL)) != -1) {
        dr_time_t d;
        uint64_t u;
        switch (ch) {
        case 'c': cluster_arg = optarg; break;
        case 't': trace_arg = optarg; break;
        case 'p': policy_arg = optarg; break;
        case 's':
            if (dr_parse_u64(optarg, &u) != 0)
                return cli_usage_error("--seed: '%s' is not a non-negative integer", optarg);
            so.seed = u;
            break;
        case 'j': json = true; break;
        case 'o': plot_dir = optarg; break;
        case O_PLACEMENT:
            if (dr_place_strategy_parse(optarg, &so.placement) != 0)
                return cli_usage_error("--placement: '%s' is not best-fit or first-fit", optarg);
            break;
        case O_LENIENT: to.lenient = true; break;
        case O_WALLF:
            if (dr_parse_double(optarg, &dopt.walltime_factor) != 0 ||
                !(dopt.walltime_factor == 0 || dopt.walltime_factor >= 1) ||
                !isfinite(dopt.walltime_factor))
                return cli_usage_error("--walltime-factor: '%s' must be 0 or a number >= 1",
                                       optarg);
            break;
        case O_WNOISE:
            if (dr_parse_double(optarg, &dopt.walltime_noise) != 0 || !(dopt.walltime_noise >= 0) ||
                dopt.walltime_noise > 10)
                return cli_usage_error("--walltime-noise: '%s' must be a number in [0, 10]",
                                       optarg);
            break;
        case O_SIZE: {
            dr_err_t serr;
            if (dr_size_mode_parse(optarg, &dopt, &serr) != 0)
                return cli_usage_error("--size-estimate: %s", serr.msg);
            break;
        }
        case O_CKPT:
            if (dr_duration_parse(optarg, &d) != 0 || d < 0)
                return cli_usage_error("--ckpt-every: '%s' is not a duration", optarg);
            dopt.ckpt_every = d;
            break;
        case O_CKPTW:
            if (dr_duration_parse(optarg, &d) != 0 || d < 0)
                return cli_usage_error("--ckpt-write: '%s' is not a duration", optarg);
            so.ckpt_write_s = dr_time_to_s(d);
            break;
        case O_DUMP: dump_path = optarg; break;
        case O_TPUT: tput_path = optarg; break;
        case O_CATALOG: catalog_path = optarg; break;
        case O_MAXJOBS:
            if (dr_parse_u64(optarg, &u) != 0 || u == 0)
                return cli_usage_error("--max-jobs: '%s' must be a positive integer", optarg);
            to.max_jobs = (size_t)u;
            break;
        case O_HORIZON:
            if (dr_duration_parse(optarg, &d) != 0 || d <= 0)
                return cli_usage_error("--horizon: '%s' is not a duration (e.g. 90s, 2h, 30d)",
                                       optarg);
            so.horizon = d;
            break;
        case O_MTBF:
            if (dr_duration_parse(optarg, &d) != 0 || d <= 0)
                return cli_usage_error("--node-mtbf: '%s' is not a duration", optarg);
            so.node_mtbf_s = dr_time_to_s(d);
            break;
        case O_REPAIR:
            if (dr_duration_parse(optarg, &d) != 0 || d <= 0)
                return cli_usage_error("--node-repair: '%s' is not a duration", optarg);
            so.node_repair_s = dr_time_to_s(d);
            break;
        case O_AUDIT: so.audit = true; break;
        case O_WORKLOAD:
            if (!dr_streq_ci(optarg, "gavel"))
                return cli_usage_error("--workload: unknown generator '%s' (known: gavel)", optarg);
            workload = optarg;
            break;
        case O_RATE:
            if (dr_parse_double(optarg, &rate) != 0 || rate <= 0)
                return cli_usage_error("--rate: '%s' must be a number of jobs per hour > 0",
                                       optarg);
            break;
        case O_JOBS:
            if (dr_parse_u64(optarg, &u) != 0 || u == 0 || u > 100000000)
                return cli_usage_error("--jobs: '%s' must be a positive integer", optarg);
            gen_jobs = (size_t)u;
            break;
        case O_WINDOW: {
            const char *c = strchr(optarg, ':');
            char a[32];
            if (!c || (size_t)(c - optarg) >= sizeof a)
                return cli_usage_error("--window: '%s' is not FIRST:LAST", optarg);
            snprintf(a, sizeof a, "%.*s", (int)(c - optarg), optarg);
            if (dr_parse_u64(a, &win_first) != 0 || dr_parse_u64(c + 1, &win_last) != 0 ||
                win_last < win_first)
                return cli_usage_error("--window: '%s' is not FIRST:LAST with FIRST <= LAST",
                                       optarg);
            have_window = true;
            break;
        }
        case O_MULTI: multi_gpu = true; break;
        case O_STEADY: steady = true; break;
        case O_RESTART:
            if (dr_duration_parse(optarg, &d) != 0)
                return cli_usage_error("--restart-overhead: '%s' is not a duration", optarg);
            so.restart_overhead_s = dr_time_to_s(d);
            break;
        case O_RATE_NOISE: {
            double x;
            if (dr_parse_double(optarg, &x) != 0 || !(x >= 0) || x > 5)
                return cli_usage_error("--rate-noise: '%s' is not a sigma from 0 to 5", optarg);
            so.rate_noise = x;
            so.rate_noise_seed = 1;
            break;
        }
        case O_SPAN: {
            dr_err_t serr;
            if (dr_span_slowdown_parse(optarg, &span, &serr) != 0)
                return cli_usage_error("--span-slowdown: %s", serr.msg);
            so.span_slowdown = &span;
            break;
        }
        case O_QUIET: quiet = true; break;
        case O_LISTP:
            for (const dr_policy_ops_t *const *p = dr_policy_list(); *p; p++)
                printf("%-10s %s\n", (*p)->name, (*p)->doc);
            return 0;
        case 'h': sim_usage(stdout); return 0;
        default: sim_usage(stderr); return 2;
        }
    }
    if (optind < argc)
        return cli_usage_error("sim: unexpected argument '%s'", argv[optind]);
    if (!cluster_arg || (!trace_arg && !workload) || !policy_arg) {
        sim_usage(stderr);
        return cli_usage_error("sim: --cluster, --trace (or --workload) and --policy are required");
    }
    if (trace_arg && workload)
        return cli_usage_error("sim: give --trace or --workload, not both");
    if (workload && rate <= 0)
        return cli_usage_error("--workload gavel needs --rate JOBS_PER_HR");
    if (!workload && (rate > 0 || gen_jobs || multi_gpu))
        return cli_usage_error("--rate, --jobs and --multi-gpu go with --workload");
    const char *colon = trace_arg ? strchr(trace_arg, ':') : NULL;
    dr_trace_format_t fmt = DR_TRACE_DROVER;
    if (trace_arg) {
        if (!colon)
            return cli_usage_error(
                "--trace '%s': expected FORMAT:PATH (gavel, philly, openb, drover)", trace_arg);
        char fmtname[32];
        snprintf(fmtname, sizeof fmtname, "%.*s", (int)(colon - trace_arg), trace_arg);
        if (dr_trace_format_parse(fmtname, &fmt) != 0)
            return cli_usage_error("--trace: unknown format '%s' (gavel, philly, openb, drover)",
                                   fmtname);
    }
    /* Gavel numbers jobs from 0; drover's ids start at 1 */
    if (have_window) {
        so.stop_first = win_first + 1;
        so.stop_last = win_last + 1;
    }
    if (workload && !gen_jobs) {
        /* jobs keep arriving while the window drains: generate plenty */
        gen_jobs = have_window ? (size_t)(win_last + 1) * 4 + 2000 : 1000;
    }
    char **pols = NULL;
    size_t np = 0;
    dr_err_t perr;
    if (dr_compare_policies_split(policy_arg, MAX_POLICIES, &pols, &np, &perr) != 0)
        return cli_usage_error("--policy: %s%s", perr.msg,
                               perr.code == DR_ENOENT ? " (see --list-policies)" : "");

    int rc = 1;
    dr_err_t err = {0};
    dr_catalog_t cat = {0};
    dr_cluster_t cluster;
    dr_cluster_init(&cluster);
    dr_workload_t wl;
    dr_workload_init(&wl);
    dr_perf_table_t tput;
    dr_perf_init(&tput);
    dr_report_t reps[MAX_POLICIES];
    dr_sim_result_t res[MAX_POLICIES];
    double wall[MAX_POLICIES];
    dr_window_stats_t win[MAX_POLICIES];
    memset(win, 0, sizeof win);
    size_t nrep = 0;
    memset(reps, 0, sizeof reps);
    memset(res, 0, sizeof res);

    if (cli_load_catalog(&cat, catalog_path, &err) != 0 ||
        cli_load_cluster(&cluster, &cat, cluster_arg, &err) != 0)
        goto fail;
    if (tput_path) {
        char *buf;
        size_t len;
        if (dr_read_file(tput_path, &buf, &len, &err) != 0)
            goto fail;
        int prc = dr_gavel_throughputs_parse(&tput, tput_path, buf, len, &err);
        free(buf);
        if (prc != 0)
            goto fail;
        to.gavel_throughputs = &tput;
    }
    double t0 = cli_now_s();
    if (workload) {
        dr_gavel_gen_opts_t go = {.jobs_per_hr = rate,
                                  .seed = so.seed,
                                  .njobs = gen_jobs,
                                  .multi_gpu = multi_gpu,
                                  .steady_state = steady,
                                  .throughputs = to.gavel_throughputs};
        dr_gavel_steady_gpus(&cluster, go.steady_gpus); /* what steady state fills */
        if (dr_workload_gavel(&wl, &go, &err) != 0)
            goto fail;
    } else if (dr_trace_load(fmt, colon + 1, &to, &wl, &err) != 0) {
        goto fail;
    }
    if (dr_workload_bind(&wl, &cluster, to.lenient, &err) != 0)
        goto fail;
    dopt.seed = so.seed;
    if (dr_workload_declare(&wl, &dopt, &err) != 0)
        goto fail;
    if (dump_path && cli_dump_jobs(dump_path, &wl, &cluster, &err) != 0)
        goto fail;
    if (!quiet)
        fprintf(stderr,
                "drover sim: %zu jobs from %s (%.2f s to read)%s; cluster %s: %zu nodes, "
                "%llu GPUs\n",
                wl.njobs, workload ? "gavel's generator" : colon + 1, cli_now_s() - t0,
                wl.skipped ? " - malformed rows skipped" : "", cluster_arg, cluster.nnodes,
                (unsigned long long)dr_cluster_total_gpus(&cluster, -1));
    if (wl.skipped && !quiet)
        fprintf(stderr, "drover sim: skipped %zu rows; first: %s\n", wl.skipped, wl.first_skip);
    bool tty = !quiet && isatty(2);
    for (size_t i = 0; i < np; i++) {
        dr_sim_opts_t o = so;
        o.policy = pols[i];
        progress_t pg = {pols[i], -1};
        if (tty) {
            o.progress = show_progress;
            o.progress_ud = &pg;
        }
        double ts = cli_now_s();
        if (dr_sim_run(&cluster, &wl, &o, &res[i], &err) != 0) {
            if (tty)
                fputc('\n', stderr);
            dr_err_prefix(&err, "policy %s: ", pols[i]);
            goto fail;
        }
        wall[i] = cli_now_s() - ts;
        if (dr_compare_report(&cluster, &wl, &o, &res[i], 400, &reps[i], &win[i], &err) != 0)
            goto fail;
        nrep = i + 1;
        if (!quiet)
            fprintf(stderr, "drover sim: %s: %.2f s wall, %llu scheduling passes\n", pols[i],
                    wall[i], (unsigned long long)res[i].stats.passes);
    }
    if (json) {
        dr_compare_info_t info = {.trace_rows_skipped = wl.skipped,
                                  .declared = &dopt,
                                  .restart_overhead_s = so.restart_overhead_s};
        char *j = dr_compare_json(reps, res, win, wall, nrep, &info);
        if (!j) {
            dr_err_set(&err, DR_ENOMEM, "cannot format JSON");
            goto fail;
        }
        fputs(j, stdout);
        free(j);
    } else {
        char size_mode[32];
        printf("size estimates: %s%s; restart overhead %g s",
               dr_size_mode_format(&dopt, size_mode, sizeof size_mode),
               dopt.mode == DR_SIZE_EXACT
                   ? " (REFERENCE ONLY: the policies were told every job's true size)"
                   : "",
               so.restart_overhead_s);
        if (so.rate_noise > 0)
            printf("; the policies' rates off by e^(N(0, %g^2)) per class and type", so.rate_noise);
        printf("\n");
        char *t = dr_report_table(reps, nrep);
        if (t)
            fputs(t, stdout);
        free(t);
        if (wl.skipped)
            printf("\n%zu malformed trace rows were skipped (--lenient).\n", wl.skipped);
    }
    if (plot_dir) {
        struct {
            const char *name;
            char *(*fn)(const dr_report_t *, size_t);
        } charts[] = {{"utilisation.svg", dr_report_svg_util},
                      {"queue.svg", dr_report_svg_queue},
                      {"jct_cdf.svg", dr_report_svg_jct_cdf}};
        for (size_t k = 0; k < 3; k++) {
            char *svg = charts[k].fn(reps, nrep);
            int wrc = svg ? cli_write_file(plot_dir, charts[k].name, svg, &err) : DR_ENOMEM;
            free(svg);
            if (wrc != 0)
                goto fail;
        }
        if (!quiet)
            fprintf(stderr, "drover sim: charts written to %s/\n", plot_dir);
    }
    rc = 0;
fail:
    if (rc != 0)
        cli_fail(&err);
    for (size_t i = 0; i < np; i++) {
        dr_report_free(&reps[i]);
        dr_sim_result_free(&res[i]);
    }
    dr_compare_policies_free(pols, np);
    dr_perf_free(&tput);
    dr_workload_free(&wl);
    dr_cluster_free(&cluster);
    dr_catalog_free(&cat);
    return rc;
}
