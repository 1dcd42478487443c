/* openb.c - benchmark: the openb GPU-packing benchmark (FGD paper, ATC'23)
 * for every variant of the published table x policies x seeds, next to the
 * published figures.  The headline is the GPU allocation (% of the cluster's
 * GPUs) when the arrived GPU demand reaches 100% of capacity, mean over the
 * seeds (the paper: seeds 42..51).
 *
 * Reads the trace and the published results from the shared data directory
 * (../shared next to the repository, or --shared DIR).  Runs the replays in
 * -j worker processes (default 2).
 *
 * usage: openb [--shared DIR] [--variants a,b] [--policy SPEC]... [--seeds 42-51]
 *              [-j N] [--curve] */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/config.h"
#include "drover/openb.h"
#include "drover/util.h"
#include "drover/workload.h"

#define MAXV 32
#define MAXP 16

static const char *const VARIANTS[] = {"default",    "cpu050",     "cpu100",    "cpu200",
                                       "gpushare40", "gpushare60", "gpuspec10", "gpuspec20",
                                       "multigpu20", "multigpu30", NULL};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const dr_err_t *err)
{
    fprintf(stderr, "openb: %s: %s\n", what, err ? err->msg : strerror(errno));
    exit(1);
}

/* published alloc_at_100 for (variant, "BestFit"|"FGD"); NAN if absent */
static double published(const char *shared, const char *variant, const char *policy)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/data/reference/published/fgd_openb_alloc_summary.csv", shared);
    char *buf;
    size_t len;
    dr_err_t err;
    if (dr_read_file(path, &buf, &len, &err) != 0)
        return 0.0 / 0.0;
    double v = 0.0 / 0.0;
    char want[128];
    snprintf(want, sizeof want, "openb_pod_list_%s,", variant);
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, want, strlen(want)) != 0)
            continue;
        char *pol = line + strlen(want), *comma = strchr(pol, ',');
        if (!comma)
            continue;
        const char *dash = strchr(pol, '-');
        if (!dash || (size_t)(comma - dash - 1) != strlen(policy) ||
            strncmp(dash + 1, policy, strlen(policy)) != 0)
            continue;
        /* workload,policy,seeds,alloc_at_80,alloc_at_90,alloc_at_100,... */
        char *f = comma;
        for (int k = 0; k < 3 && f; k++)
            f = strchr(f + 1, ',');
        if (f)
            v = strtod(f + 1, NULL);
    }
    free(buf);
    return v;
}

typedef struct job {
    int v, p;
    uint64_t seed;
} job_t;

typedef struct ctx {
    const char *shared;
    const char *variants[MAXV];
    int nv;
    const char *policies[MAXP];
    int np;
    uint64_t seed_lo, seed_hi;
    dr_openb_pods_t trace[MAXV];
    dr_cluster_t proto; /* the cluster, idle */
    bool curve;
} ctx_t;

static void run_job(const ctx_t *x, const job_t *j, double *head, double *c90, double *c130,
                    double *secs, size_t *failed)
{
    double t0 = now_s();
    dr_err_t err;
    dr_cluster_t c;
    if (dr_cluster_copy(&c, &x->proto, &err) != 0)
        die("cluster", &err);
    dr_openb_pods_t seq;
    dr_openb_pods_init(&seq);
    uint64_t cap = dr_cluster_total_gpus(&c, -1) * 1000;
    if (dr_openb_sequence_generate(&seq, &x->trace[j->v], cap, 1.3, j->seed, &err) != 0)
        die("sequence", &err);
    uint32_t *rank = malloc(c.nnodes * sizeof *rank);
    if (!rank)
        die("rank", NULL);
    dr_openb_ranks(rank, c.nnodes, j->seed);
    dr_openb_opts_t o = {.policy = x->policies[j->p], .seed = j->seed, .rank = rank};
    dr_openb_result_t res;
    if (dr_openb_replay(&c, &seq, &o, &res, &err) != 0)
        die("replay", &err);
    *head = *c90 = *c130 = 0.0 / 0.0;
    dr_openb_curve_at(&res, 100, head);
    dr_openb_curve_at(&res, 90, c90);
    dr_openb_curve_at(&res, 130, c130);
    *failed = res.failed;
    dr_openb_result_free(&res);
    dr_openb_pods_free(&seq);
    free(rank);
    dr_cluster_free(&c);
    *secs = now_s() - t0;
}

static void parse_list(const char *s, const char **out, int *n, int max)
{
    char *copy = dr_strdup(s);
    for (char *t = strtok(copy, ","); t && *n < max; t = strtok(NULL, ","))
        out[(*n)++] = t;
}

int main(int argc, char **argv)
{
    ctx_t x = {.shared = NULL, .seed_lo = 42, .seed_hi = 51};
    int jobs = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!a)
            break;
        if (strcmp(a, "--shared") == 0 && v)
            x.shared = argv[++i];
        else if (strcmp(a, "--variants") == 0 && v)
            parse_list(argv[++i], x.variants, &x.nv, MAXV);
        else if (strcmp(a, "--policy") == 0 && v && x.np < MAXP)
            x.policies[x.np++] = argv[++i];
        else if (strcmp(a, "--seeds") == 0 && v) {
            char *e;
            x.seed_lo = x.seed_hi = strtoull(argv[++i], &e, 10);
            if (*e == '-')
                x.seed_hi = strtoull(e + 1, NULL, 10);
        } else if (strcmp(a, "-j") == 0 && v)
            jobs = atoi(argv[++i]);
        else if (strcmp(a, "--curve") == 0)
            x.curve = true;
        else {
            fprintf(stderr, "usage: openb [--shared DIR] [--variants a,b] [--policy SPEC]... "
                            "[--seeds 42-51] [-j N] [--curve]\n");
            return 2;
        }
    }
    if (!x.shared) /* the repository's sibling, when run from the repository root */
        x.shared = "../shared";
    if (x.nv == 0)
        for (int i = 0; VARIANTS[i]; i++)
            x.variants[x.nv++] = VARIANTS[i];
    if (x.np == 0) {
        x.policies[x.np++] = "bestfit";
        x.policies[x.np++] = "fgd";
        x.policies[x.np++] = "drover";
    }
    if (jobs < 1)
        jobs = 1;
    dr_err_t err;
    dr_catalog_t cat;
    if (dr_catalog_builtin(&cat, &err) != 0)
        die("catalog", &err);
    char path[4096];
    snprintf(path, sizeof path, "%s/data/traces/openb/openb_node_list_gpu_node.csv", x.shared);
    char *buf;
    size_t len;
    if (dr_read_file(path, &buf, &len, &err) != 0)
        die("nodes (use --shared DIR)", &err);
    dr_cluster_init(&x.proto);
    if (dr_openb_nodes_parse(&x.proto, &cat, path, buf, len, &err) != 0)
        die("nodes", &err);
    free(buf);
    dr_catalog_free(&cat);
    for (int v = 0; v < x.nv; v++) {
        snprintf(path, sizeof path, "%s/data/traces/openb/openb_pod_list_%s.csv", x.shared,
                 x.variants[v]);
        dr_openb_pods_init(&x.trace[v]);
        if (dr_openb_pods_load(&x.trace[v], path, &err) != 0)
            die("pods", &err);
    }

    /* the jobs, spread over worker processes; results come back on a pipe */
    size_t nseeds = (size_t)(x.seed_hi - x.seed_lo + 1), njobs = (size_t)x.nv * x.np * nseeds;
    job_t *jl = calloc(njobs, sizeof *jl);
    double *head = calloc(njobs, sizeof *head), *c90 = calloc(njobs, sizeof *c90),
           *c130 = calloc(njobs, sizeof *c130), *secs = calloc(njobs, sizeof *secs);
    size_t *failed = calloc(njobs, sizeof *failed);
    if (!jl || !head || !c90 || !c130 || !secs || !failed)
        die("memory", NULL);
    size_t k = 0;
    for (int v = 0; v < x.nv; v++)
        for (int p = 0; p < x.np; p++)
            for (uint64_t s = x.seed_lo; s <= x.seed_hi; s++)
                jl[k++] = (job_t){v, p, s};
    double t0 = now_s();
    int fd[2];
    if (pipe(fd) != 0)
        die("pipe", NULL);
    for (int w = 0; w < jobs; w++) {
        pid_t pid = fork();
        if (pid < 0)
            die("fork", NULL);
        if (pid == 0) {
            close(fd[0]);
            FILE *out = fdopen(fd[1], "w");
            for (size_t i = (size_t)w; i < njobs; i += (size_t)jobs) {
                double h, a, b, t;
                size_t f;
                run_job(&x, &jl[i], &h, &a, &b, &t, &f);
                fprintf(out, "%zu %.17g %.17g %.17g %.6f %zu\n", i, h, a, b, t, f);
                fflush(out);
            }
            fclose(out);
            _exit(0);
        }
    }
    close(fd[1]);
    FILE *in = fdopen(fd[0], "r");
    size_t i, f;
    double h, a, b, t;
    while (fscanf(in, "%zu %lf %lf %lf %lf %zu", &i, &h, &a, &b, &t, &f) == 6 && i < njobs) {
        head[i] = h;
        c90[i] = a;
        c130[i] = b;
        secs[i] = t;
        failed[i] = f;
    }
    fclose(in);
    int status, bad = 0;
    while (wait(&status) > 0)
        bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    if (bad)
        die("a worker failed", NULL);
    double wall = now_s() - t0;

    /* per (variant, policy): means over the seeds */
    double mean[MAXV][MAXP], mean90[MAXV][MAXP], mean130[MAXV][MAXP], sd[MAXV][MAXP],
        cpu[MAXV][MAXP];
    for (int v = 0; v < x.nv; v++)
        for (int p = 0; p < x.np; p++) {
            double s = 0, s2 = 0, s90 = 0, s130 = 0, st = 0;
            for (size_t q = 0; q < nseeds; q++) {
                size_t id = ((size_t)v * x.np + p) * nseeds + q;
                s += head[id];
                s2 += head[id] * head[id];
                s90 += c90[id];
                s130 += c130[id];
                st += secs[id];
            }
            double n = (double)nseeds;
            mean[v][p] = s / n;
            mean90[v][p] = s90 / n;
            mean130[v][p] = s130 / n;
            sd[v][p] = nseeds > 1 ? sqrt((s2 - s * s / n) / (n - 1)) : 0;
            cpu[v][p] = st;
        }
    printf("openb packing benchmark: alloc%% at arrived = 100%%, mean of seeds %llu..%llu "
           "(sd over seeds in brackets)\n\n",
           (unsigned long long)x.seed_lo, (unsigned long long)x.seed_hi);
    int ibf = -1, ifgd = -1, idr = -1;
    for (int p = 0; p < x.np; p++) {
        if (strcmp(x.policies[p], "bestfit") == 0)
            ibf = p;
        else if (strcmp(x.policies[p], "fgd") == 0)
            ifgd = p;
        else if (strcmp(x.policies[p], "drover") == 0)
            idr = p;
    }
    if (ibf >= 0 && ifgd >= 0 && idr >= 0) {
        printf("| variant | published BestFit | ours BestFit | Δ | published FGD | ours FGD | Δ | "
               "drover | drover − published FGD | replay s |\n");
        printf("|---|---|---|---|---|---|---|---|---|---|\n");
        for (int v = 0; v < x.nv; v++) {
            double pb = published(x.shared, x.variants[v], "BestFit");
            double pf = published(x.shared, x.variants[v], "FGD");
            printf("| %s | %.2f | %.2f (%.2f) | %+.2f | %.2f | %.2f (%.2f) | %+.2f | %.2f (%.2f) "
                   "| **%+.2f** | %.1f |\n",
                   x.variants[v], pb, mean[v][ibf], sd[v][ibf], mean[v][ibf] - pb, pf,
                   mean[v][ifgd], sd[v][ifgd], mean[v][ifgd] - pf, mean[v][idr], sd[v][idr],
                   mean[v][idr] - pf, cpu[v][ibf] + cpu[v][ifgd] + cpu[v][idr]);
        }
        printf("\n");
    }
    printf("| variant | policy | alloc@90 | alloc@100 | sd | alloc@130 | CPU s |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (int v = 0; v < x.nv; v++)
        for (int p = 0; p < x.np; p++)
            printf("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.1f |\n", x.variants[v], x.policies[p],
                   mean90[v][p], mean[v][p], sd[v][p], mean130[v][p], cpu[v][p]);
    printf("\n%zu replays in %.1f s wall with %d workers\n", njobs, wall, jobs);
    (void)failed;
    for (int v = 0; v < x.nv; v++)
        dr_openb_pods_free(&x.trace[v]);
    dr_cluster_free(&x.proto);
    free(jl);
    free(head);
    free(c90);
    free(c130);
    free(secs);
    free(failed);
    return 0;
}
