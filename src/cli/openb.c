/* openb.c - `drover sim --openb`: the openb GPU-packing benchmark (the FGD
 * paper's protocol) for one packing policy, on one seed, a range of seeds or
 * an explicit sequence file.  Thin: it reads the files, calls the replay in
 * libdrover (openb.h) and prints the allocation curve. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "drover/config.h"
#include "drover/openb.h"
#include "drover/pack.h"
#include "drover/workload.h"

#define CURVE_LO 50
#define CURVE_HI 130
#define NCURVE   (CURVE_HI - CURVE_LO + 1)

static void openb_usage(FILE *f)
{
    fprintf(
        f, "usage: drover sim --openb --nodes NODES.csv --pods PODS.csv --seed N --policy NAME\n"
           "       drover sim --openb --nodes NODES.csv --pods PODS.csv --seeds A-B --policy NAME\n"
           "       drover sim --openb --nodes NODES.csv --sequence SEQ.csv [--seed N] --policy "
           "NAME\n"
           "\n"
           "  --nodes FILE        openb node list (sn,cpu_milli,memory_mib,gpu,model), or the\n"
           "                      preset 'openb'\n"
           "  --pods FILE         openb pod list (openb_pod_list_<variant>.csv)\n"
           "  --seed N            arrival sequence and node tie-break ranks for seed N; with\n"
           "                      --sequence only the ranks (default: node order)\n"
           "  --seeds A-B         every seed from A to B; prints each headline and the mean\n"
           "  --sequence FILE     replay this sequence (pod,base,cpu_milli,memory_mib,num_gpu,\n"
           "                      gpu_milli,gpu_spec) instead of generating one\n"
           "  --policy NAME       packing policy, NAME or NAME:key=val,...; see --list-policies\n"
           "  --ratio R           inflate the pods to R x the GPU capacity (default 1.3)\n"
           "  --placements FILE   write pod,node,gpus for every pod\n"
           "  --write-sequence FILE  write the sequence replayed\n"
           "  --step N            print the curve every N points (default 5)\n"
           "  --catalog FILE      GPU catalog CSV (default: built in)\n"
           "  --json              print one JSON object instead of the table\n"
           "  --list-policies     list the packing policies and exit\n");
}

static int write_text(const char *path, const char *text, size_t len, dr_err_t *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return dr_err_set(err, DR_EIO, "%s: cannot write: %s", path, strerror(errno));
    bool ok = fwrite(text, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    return ok ? DR_OK : dr_err_set(err, DR_EIO, "%s: write failed", path);
}

/* "openb_pod_list_default.csv" -> "default"; otherwise the file name */
static void variant_of(const char *path, char *out, size_t n)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *pre = "openb_pod_list_";
    if (strncmp(b, pre, strlen(pre)) == 0)
        b += strlen(pre);
    snprintf(out, n, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot && strcmp(dot, ".csv") == 0)
        *dot = '\0';
}

static int load_nodes(dr_cluster_t *c, const char *catalog, const char *arg, dr_err_t *err)
{
    dr_catalog_t cat;
    int rc = cli_load_catalog(&cat, catalog, err);
    if (rc != DR_OK)
        return rc;
    dr_cluster_init(c);
    struct stat st;
    if (stat(arg, &st) != 0 && strcmp(arg, "openb") == 0) {
        rc = dr_cluster_preset(c, &cat, "openb", err);
    } else {
        char *buf;
        size_t len;
        rc = dr_read_file(arg, &buf, &len, err);
        if (rc == DR_OK) {
            rc = dr_openb_nodes_parse(c, &cat, arg, buf, len, err);
            free(buf);
        }
    }
    dr_catalog_free(&cat);
    return rc;
}

typedef struct run {
    uint64_t seed;
    double headline; /* NAN if undefined */
    double curve[NCURVE];
    size_t npods, failed, failed_gpu;
    double wall_s;
} run_t;

/* One replay: generate (or take) the sequence, rank the nodes, replay. */
static int run_one(const dr_cluster_t *proto, const dr_openb_pods_t *trace,
                   const dr_openb_pods_t *given, const char *policy, double ratio, bool seeded,
                   uint64_t seed, const char *placements, const char *write_seq, run_t *out,
                   dr_err_t *err)
{
    double t0 = cli_now_s();
    dr_cluster_t c;
    int rc = dr_cluster_copy(&c, proto, err);
    if (rc != DR_OK)
        return rc;
    dr_openb_pods_t gen;
    dr_openb_pods_init(&gen);
    const dr_openb_pods_t *seq = given;
    uint64_t cap = dr_cluster_total_gpus(&c, -1) * 1000;
    if (!given) {
        rc = dr_openb_sequence_generate(&gen, trace, cap, ratio, seed, err);
        seq = &gen;
    }
    uint32_t *rank = NULL;
    if (rc == DR_OK && seeded) {
        rank = malloc((c.nnodes ? c.nnodes : 1) * sizeof *rank);
        if (!rank)
            rc = dr_err_set(err, DR_ENOMEM, "out of memory");
        else
            dr_openb_ranks(rank, c.nnodes, seed);
    }
    dr_openb_result_t res = {0};
    if (rc == DR_OK && write_seq) {
        char *text;
        size_t len;
        if ((rc = dr_openb_sequence_format(seq, &text, &len, err)) == DR_OK) {
            rc = write_text(write_seq, text, len, err);
            free(text);
        }
    }
    if (rc == DR_OK) {
        dr_openb_opts_t o = {.policy = policy, .seed = seed, .rank = rank};
        rc = dr_openb_replay(&c, seq, &o, &res, err);
    }
    if (rc == DR_OK && placements) {
        char *text;
        size_t len;
        if ((rc = dr_openb_placements_format(&res, seq, &c, &text, &len, err)) == DR_OK) {
            rc = write_text(placements, text, len, err);
            free(text);
        }
    }
    if (rc == DR_OK) {
        out->seed = seed;
        out->npods = res.npods;
        out->failed = res.failed;
        out->failed_gpu = res.failed_gpu;
        if (!dr_openb_curve_at(&res, 100, &out->headline))
            out->headline = NAN;
        for (int x = CURVE_LO; x <= CURVE_HI; x++)
            if (!dr_openb_curve_at(&res, x, &out->curve[x - CURVE_LO]))
                out->curve[x - CURVE_LO] = NAN;
        out->wall_s = cli_now_s() - t0;
    }
    dr_openb_result_free(&res);
    free(rank);
    dr_openb_pods_free(&gen);
    dr_cluster_free(&c);
    return rc;
}

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(round(v * 10000) / 10000) : json_null();
}

static json_t *jcurve(const double *curve)
{
    json_t *a = json_array();
    for (int x = CURVE_LO; x <= CURVE_HI; x++)
        json_array_append_new(a, json_pack("[io]", x, jnum(curve[x - CURVE_LO])));
    return a;
}

static int parse_seeds(const char *s, uint64_t *lo, uint64_t *hi)
{
    const char *dash = strchr(s, '-');
    char a[32];
    if (!dash || (size_t)(dash - s) >= sizeof a)
        return DR_EINVAL;
    memcpy(a, s, (size_t)(dash - s));
    a[dash - s] = '\0';
    if (dr_parse_u64(a, lo) != 0 || dr_parse_u64(dash + 1, hi) != 0 || *hi < *lo ||
        *hi - *lo >= 10000)
        return DR_EINVAL;
    return DR_OK;
}

int cli_sim_openb(int argc, char **argv)
{
    const char *nodes = NULL, *pods_path = NULL, *seq_path = NULL, *policy = NULL;
    const char *placements = NULL, *write_seq = NULL, *catalog = NULL, *seed_arg = NULL,
               *seeds_arg = NULL;
    double ratio = 1.3;
    int step = 5;
    bool json = false;
    enum {
        O_OPENB = 256,
        O_NODES,
        O_PODS,
        O_SEEDS,
        O_SEQ,
        O_PLACE,
        O_WSEQ,
        O_RATIO,
        O_STEP,
        O_CATALOG,
        O_LIST
    };
    static const struct option opts[] = {{"openb", no_argument, 0, O_OPENB},
                                         {"nodes", required_argument, 0, O_NODES},
                                         {"pods", required_argument, 0, O_PODS},
                                         {"seed", required_argument, 0, 's'},
                                         {"seeds", required_argument, 0, O_SEEDS},
                                         {"sequence", required_argument, 0, O_SEQ},
                                         {"policy", required_argument, 0, 'p'},
                                         {"placements", required_argument, 0, O_PLACE},
                                         {"write-sequence", required_argument, 0, O_WSEQ},
                                         {"ratio", required_argument, 0, O_RATIO},
                                         {"step", required_argument, 0, O_STEP},
                                         {"catalog", required_argument, 0, O_CATALOG},
                                         {"json", no_argument, 0, 'j'},
                                         {"list-policies", no_argument, 0, O_LIST},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":s:p:jh", opts, NULL)) != -1) {
        switch (ch) {
        case O_OPENB: break;
        case O_NODES: nodes = optarg; break;
        case O_PODS: pods_path = optarg; break;
        case 's': seed_arg = optarg; break;
        case O_SEEDS: seeds_arg = optarg; break;
        case O_SEQ: seq_path = optarg; break;
        case 'p': policy = optarg; break;
        case O_PLACE: placements = optarg; break;
        case O_WSEQ: write_seq = optarg; break;
        case O_CATALOG: catalog = optarg; break;
        case 'j': json = true; break;
        case O_RATIO:
            if (dr_parse_double(optarg, &ratio) != 0 || !(ratio > 0) || ratio > 1000)
                return cli_usage_error("sim --openb: --ratio '%s' is not a number in (0, 1000]",
                                       optarg);
            break;
        case O_STEP: {
            uint64_t v;
            if (dr_parse_u64(optarg, &v) != 0 || v < 1 || v > 80)
                return cli_usage_error("sim --openb: --step '%s' is not a whole number in 1..80",
                                       optarg);
            step = (int)v;
            break;
        }
        case O_LIST:
            for (const char *const *n = dr_pack_policy_names(); *n; n++)
                printf("%-14s %s\n", *n, dr_pack_policy_doc(*n));
            return 0;
        case 'h': openb_usage(stdout); return 0;
        case ':': return cli_usage_error("sim --openb: %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("sim --openb: unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("sim --openb: unexpected argument '%s'", argv[optind]);
    if (!nodes || !policy)
        return cli_usage_error("sim --openb: --nodes and --policy are required (see --help)");
    if (!seq_path && !pods_path)
        return cli_usage_error("sim --openb: give --pods with --seed or --seeds, or --sequence");
    if (!seq_path && !seed_arg && !seeds_arg)
        return cli_usage_error("sim --openb: --pods needs --seed N or --seeds A-B");
    if (seed_arg && seeds_arg)
        return cli_usage_error("sim --openb: --seed and --seeds exclude each other");
    if (seq_path && seeds_arg)
        return cli_usage_error("sim --openb: --sequence replays one sequence; --seeds does not "
                               "apply");
    if (seeds_arg && (placements || write_seq))
        return cli_usage_error("sim --openb: --placements and --write-sequence need one --seed");
    uint64_t lo = 0, hi = 0;
    if (seed_arg && dr_parse_u64(seed_arg, &lo) != 0)
        return cli_usage_error("sim --openb: --seed '%s' is not a whole number", seed_arg);
    hi = lo;
    if (seeds_arg && parse_seeds(seeds_arg, &lo, &hi) != DR_OK)
        return cli_usage_error("sim --openb: --seeds '%s' is not a range A-B (A <= B)", seeds_arg);

    dr_err_t err = {0};
    dr_cluster_t c;
    dr_openb_pods_t trace, given;
    dr_openb_pods_init(&trace);
    dr_openb_pods_init(&given);
    int rc = load_nodes(&c, catalog, nodes, &err);
    /* the policy name is checked before any replay, so a typo fails fast */
    if (rc == DR_OK) {
        dr_packer_t *pk;
        if ((rc = dr_packer_create(&pk, policy, &c, 0, &err)) == DR_OK)
            dr_packer_free(pk);
    }
    if (rc == DR_OK && seq_path)
        rc = dr_openb_sequence_load(&given, seq_path, &err);
    else if (rc == DR_OK)
        rc = dr_openb_pods_load(&trace, pods_path, &err);
    size_t nruns = (size_t)(hi - lo + 1);
    run_t *runs = rc == DR_OK ? calloc(nruns, sizeof *runs) : NULL;
    if (rc == DR_OK && !runs)
        rc = dr_err_set(&err, DR_ENOMEM, "out of memory");
    for (size_t i = 0; i < nruns && rc == DR_OK; i++)
        rc = run_one(&c, &trace, seq_path ? &given : NULL, policy, ratio,
                     seed_arg != NULL || seeds_arg != NULL, lo + i, placements, write_seq, &runs[i],
                     &err);
    if (rc != DR_OK || !runs) {
        free(runs);
        dr_openb_pods_free(&trace);
        dr_openb_pods_free(&given);
        dr_cluster_free(&c);
        return cli_fail(&err);
    }

    /* means over the runs (a single run is its own mean) */
    double mean[NCURVE], head = 0, wall = 0;
    size_t nhead = 0, failed = 0, failed_gpu = 0;
    for (int k = 0; k < NCURVE; k++) {
        double s = 0;
        size_t n = 0;
        for (size_t i = 0; i < nruns; i++)
            if (isfinite(runs[i].curve[k])) {
                s += runs[i].curve[k];
                n++;
            }
        mean[k] = n ? s / (double)n : NAN;
    }
    for (size_t i = 0; i < nruns; i++) {
        if (isfinite(runs[i].headline)) {
            head += runs[i].headline;
            nhead++;
        }
        failed += runs[i].failed;
        failed_gpu += runs[i].failed_gpu;
        wall += runs[i].wall_s;
    }
    head = nhead ? head / (double)nhead : NAN;
    char variant[256];
    variant_of(seq_path ? seq_path : pods_path, variant, sizeof variant);
    uint64_t gpus = dr_cluster_total_gpus(&c, -1);

    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "policy", json_string(policy));
        json_object_set_new(o, "variant", json_string(variant));
        if (seq_path)
            json_object_set_new(o, "sequence", json_string(seq_path));
        if (seeds_arg) {
            json_object_set_new(o, "seeds", json_pack("[II]", (json_int_t)lo, (json_int_t)hi));
            json_t *per = json_array();
            for (size_t i = 0; i < nruns; i++)
                json_array_append_new(
                    per, json_pack("{s:I,s:o,s:I,s:I,s:f}", "seed", (json_int_t)runs[i].seed,
                                   "alloc_at_100", jnum(runs[i].headline), "pods",
                                   (json_int_t)runs[i].npods, "failed_pods",
                                   (json_int_t)runs[i].failed, "wall_s", runs[i].wall_s));
            json_object_set_new(o, "runs", per);
        } else {
            json_object_set_new(o, "seed", seed_arg ? json_integer((json_int_t)lo) : json_null());
        }
        json_object_set_new(o, "gpus", json_integer((json_int_t)gpus));
        json_object_set_new(o, "pods", json_integer((json_int_t)runs[0].npods));
        json_object_set_new(o, "alloc_at_100", jnum(head));
        json_object_set_new(o, "curve", jcurve(mean));
        json_object_set_new(o, "failed_pods", json_integer((json_int_t)failed));
        json_object_set_new(o, "failed_gpu_pods", json_integer((json_int_t)failed_gpu));
        json_object_set_new(o, "wall_s", json_real(wall));
        char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        if (s)
            printf("%s\n", s);
        free(s);
        json_decref(o);
    } else {
        printf("openb packing: policy %s, %s", policy, variant);
        if (seeds_arg)
            printf(", seeds %llu-%llu", (unsigned long long)lo, (unsigned long long)hi);
        else if (!seq_path)
            printf(", seed %llu, %zu pods", (unsigned long long)lo, runs[0].npods);
        else if (seed_arg)
            printf(" (sequence), ranks from seed %llu, %zu pods", (unsigned long long)lo,
                   runs[0].npods);
        else
            printf(" (sequence), node order, %zu pods", runs[0].npods);
        printf(", %llu GPUs\n", (unsigned long long)gpus);
        if (seeds_arg) {
            printf("\n%6s  %10s  %7s\n", "seed", "alloc@100%", "failed");
            for (size_t i = 0; i < nruns; i++)
                printf("%6llu  %10.2f  %7zu\n", (unsigned long long)runs[i].seed, runs[i].headline,
                       runs[i].failed);
        }
        printf("\n%8s  %7s\n", "arrive%", "alloc%");
        for (int x = CURVE_LO; x <= CURVE_HI; x += step)
            printf("%8d  %7.2f\n", x, mean[x - CURVE_LO]);
        printf("\nalloc at arrived 100%%: %.2f%%%s (failed pods: %zu, %zu of them with GPUs; "
               "%.2f s)\n",
               head, seeds_arg ? " (mean)" : "", failed, failed_gpu, wall);
    }
    free(runs);
    dr_openb_pods_free(&trace);
    dr_openb_pods_free(&given);
    dr_cluster_free(&c);
    return 0;
}
