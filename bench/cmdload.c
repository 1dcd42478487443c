/* cmdload.c - timing for bench/vs_slurm: runs the same kind of commands
 * against drover and Slurm (their own command-line tools), so both sides are
 * measured by one harness the same way.
 *
 *   cmdload run N CONC [OPTS] -- CMD ARGS...
 *       run CMD N times (CONC workers, each one after another), every run
 *       must exit 0: acknowledged submits per second; with --drain, then
 *       poll until the cluster has no unfinished job: end to end (start of
 *       the first run -> first poll that sees none left)
 *   cmdload latency N DIR [OPTS] -- CMD ARGS...
 *       N times, on an idle cluster: run CMD (each "{out}" in its arguments
 *       replaced by DIR/lat-I.out, where the job writes `date +%s.%N`),
 *       wait for that file's time stamp, then for the cluster to drain:
 *       client's start of the submit -> the job's first output, p50/p99
 *   cmdload time REPS -- CMD ARGS...
 *       run CMD REPS times, stdout to /dev/null: median and minimum seconds
 *   cmdload spawn N CONC [PROG]
 *       the machine's limit: CONC loops that fork, exec and reap PROG
 *       (default /bin/true; N in all) as fast as they can
 *
 * OPTS: --drain SHELLCMD (prints the number of unfinished jobs), --poll MS
 * (default 50), --cap S (stop waiting S seconds after the start; the figure
 * is then marked capped, with the jobs left). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Run argv with stdout (and, when quiet, stderr) to /dev/null; its exit status or -1. */
static int run_cmd(char **argv, bool quiet)
{
    pid_t p = fork();
    if (p < 0)
        return -1;
    if (p == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            if (quiet)
                dup2(fd, 2);
            close(fd);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(p, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The number the drain command prints, or -1. */
static long unfinished(const char *drain)
{
    FILE *f = popen(drain, "r");
    if (!f)
        return -1;
    long n = -1;
    if (fscanf(f, "%ld", &n) != 1)
        n = -1;
    pclose(f);
    return n;
}

typedef struct {
    const char *drain;
    long poll_ms;
    double cap_s;
} opts_t;

/* Poll until the cluster drained or the cap passed; the jobs left (0 when drained). */
static long wait_drain(const opts_t *o, double t0)
{
    long left;
    int bad = 0;
    for (;;) {
        left = unfinished(o->drain);
        if (left == 0)
            return 0;
        if (left < 0 && ++bad > 20)
            return -1;
        if (o->cap_s > 0 && now_s() - t0 > o->cap_s)
            return left;
        sleep_ms(o->poll_ms);
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, int n, double p)
{
    int k = (int)ceil(p / 100.0 * n) - 1;
    return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

/* Options up to "--"; returns the index of the command after it, or -1. */
static int parse_opts(int argc, char **argv, int i, opts_t *o)
{
    o->drain = NULL;
    o->poll_ms = 50;
    o->cap_s = 0;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return i + 1 < argc ? i + 1 : -1;
        if (i + 1 >= argc)
            return -1;
        if (strcmp(argv[i], "--drain") == 0)
            o->drain = argv[++i];
        else if (strcmp(argv[i], "--poll") == 0)
            o->poll_ms = atol(argv[++i]);
        else if (strcmp(argv[i], "--cap") == 0)
            o->cap_s = atof(argv[++i]);
        else
            return -1;
    }
    return -1;
}

static int do_run(int n, int conc, const opts_t *o, char **cmd)
{
    double t0 = now_s();
    for (int k = 0; k < conc; k++) {
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0) {
            int mine = n / conc + (k < n % conc);
            for (int i = 0; i < mine; i++)
                if (run_cmd(cmd, false) != 0)
                    _exit(1);
            _exit(0);
        }
    }
    int bad = 0, st;
    for (int k = 0; k < conc; k++) {
        if (wait(&st) < 0)
            return 1;
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    double t_ack = now_s() - t0;
    if (bad) {
        fprintf(stderr, "cmdload: a run of %s failed\n", cmd[0]);
        return 1;
    }
    printf("runs %d clients %d ack_s %.3f per_s %.1f", n, conc, t_ack, n / t_ack);
    if (o->drain) {
        long left = wait_drain(o, t0);
        double t_end = now_s() - t0;
        if (left < 0) {
            printf("\n");
            fprintf(stderr, "cmdload: the drain command failed: %s\n", o->drain);
            return 1;
        }
        printf(" end_to_end_s %.3f left %ld%s", t_end, left, left ? " capped" : "");
    }
    printf("\n");
    return 0;
}

static int do_latency(int n, const char *dir, const opts_t *o, char **cmd, int ncmd)
{
    double *lat = calloc((size_t)n, sizeof *lat), *ack = calloc((size_t)n, sizeof *ack);
    char **argv = calloc((size_t)ncmd + 1, sizeof *argv);
    char out[4096];
    int rc = 1;
    if (!lat || !ack || !argv)
        goto done;
    for (int i = 0; i < n; i++) {
        snprintf(out, sizeof out, "%s/lat-%d.out", dir, i);
        unlink(out);
        for (int a = 0; a < ncmd; a++)
            argv[a] = strstr(cmd[a], "{out}") ? NULL : cmd[a];
        char bufs[8][4200];
        int nb = 0;
        for (int a = 0; a < ncmd; a++) {
            if (argv[a])
                continue;
            if (nb == 8)
                goto done;
            const char *at = strstr(cmd[a], "{out}");
            snprintf(bufs[nb], sizeof bufs[nb], "%.*s%s%s", (int)(at - cmd[a]), cmd[a], out,
                     at + 5);
            argv[a] = bufs[nb++];
        }
        double t0 = now_s();
        if (run_cmd(argv, false) != 0) {
            fprintf(stderr, "cmdload: submit %d failed\n", i);
            goto done;
        }
        ack[i] = (now_s() - t0) * 1e3;
        double started = 0;
        for (;;) {
            FILE *f = fopen(out, "r");
            bool got = f && fscanf(f, "%lf", &started) == 1;
            if (f)
                fclose(f);
            if (got)
                break;
            if (o->cap_s > 0 && now_s() - t0 > o->cap_s) {
                fprintf(stderr, "cmdload: job %d did not start within %.0f s\n", i, o->cap_s);
                goto done;
            }
            sleep_ms(1);
        }
        lat[i] = (started - t0) * 1e3;
        unlink(out);
        if (o->drain && wait_drain(o, now_s()) != 0) {
            fprintf(stderr, "cmdload: the cluster did not drain after job %d\n", i);
            goto done;
        }
    }
    qsort(lat, (size_t)n, sizeof *lat, cmp_d);
    qsort(ack, (size_t)n, sizeof *ack, cmp_d);
    printf("latency_ms n %d p50 %.1f p99 %.1f max %.1f submit_ack_p50 %.1f\n", n, pct(lat, n, 50),
           pct(lat, n, 99), lat[n - 1], pct(ack, n, 50));
    rc = 0;
done:
    free(lat);
    free(ack);
    free(argv);
    return rc;
}

static int do_time(int reps, char **cmd)
{
    double *t = calloc((size_t)reps, sizeof *t);
    if (!t)
        return 1;
    for (int i = 0; i < reps; i++) {
        double t0 = now_s();
        if (run_cmd(cmd, false) != 0) {
            fprintf(stderr, "cmdload: %s failed\n", cmd[0]);
            free(t);
            return 1;
        }
        t[i] = now_s() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_d);
    printf("time_s reps %d median %.3f min %.3f\n", reps, pct(t, reps, 50), t[0]);
    free(t);
    return 0;
}

static int do_spawn(int n, int conc, char *prog)
{
    char *argv[] = {prog, NULL};
    double t0 = now_s();
    for (int k = 0; k < conc; k++) {
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0) {
            int mine = n / conc + (k < n % conc);
            for (int i = 0; i < mine; i++)
                if (run_cmd(argv, true) != 0)
                    _exit(1);
            _exit(0);
        }
    }
    int bad = 0, st;
    for (int k = 0; k < conc; k++) {
        if (wait(&st) < 0)
            return 1;
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    double dt = now_s() - t0;
    if (bad)
        return 1;
    printf("spawn_limit loops %d prog %s per_s %.0f\n", conc, prog, n / dt);
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o;
    int c;
    if (argc >= 4 && strcmp(argv[1], "spawn") == 0)
        return do_spawn(atoi(argv[2]), atoi(argv[3]), argc > 4 ? argv[4] : "/bin/true");
    if (argc >= 5 && strcmp(argv[1], "run") == 0 && (c = parse_opts(argc, argv, 4, &o)) > 0 &&
        atoi(argv[2]) > 0 && atoi(argv[3]) > 0)
        return do_run(atoi(argv[2]), atoi(argv[3]), &o, argv + c);
    if (argc >= 5 && strcmp(argv[1], "latency") == 0 && (c = parse_opts(argc, argv, 4, &o)) > 0 &&
        atoi(argv[2]) > 0)
        return do_latency(atoi(argv[2]), argv[3], &o, argv + c, argc - c);
    if (argc >= 4 && strcmp(argv[1], "time") == 0 && strcmp(argv[3], "--") == 0 &&
        atoi(argv[2]) > 0)
        return do_time(atoi(argv[2]), argv + 4);
    fprintf(stderr, "usage: cmdload run N CONC [--drain CMD] [--poll MS] [--cap S] -- CMD...\n"
                    "       cmdload latency N DIR [OPTS] -- CMD... ({out}: the job's file)\n"
                    "       cmdload time REPS -- CMD...\n"
                    "       cmdload spawn N CONC [PROG]\n");
    return 2;
}
