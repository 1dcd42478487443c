/* live_load.c - load for a live droverd (bench/live.sh starts the cluster).
 *
 *   live_load SERVER submit N CONC   N one-GPU /bin/true jobs from CONC
 *                                    client processes: acknowledged
 *                                    (durable) submits per second, and the
 *                                    end-to-end time until the last ended
 *   live_load SERVER submit N CONC hold   the same, submitted held (they never
 *                                    start; bench/vs_slurm fills a queue):
 *                                    acknowledged submits per second only
 *   live_load SERVER latency N       N jobs one at a time on an idle
 *                                    cluster: submit -> process start, as
 *                                    the job's own clock (date) sees it
 *   live_load - spawn N              the machine's limit: fork, exec and
 *                                    reap /bin/true N times, as fast as
 *                                    one loop can
 *
 * Each submit is one HTTP request on its own connection (as the CLI does). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/client.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static json_t *call(const char *server, const char *method, const char *path, json_t *body)
{
    cli_client_t c;
    dr_err_t err = {0};
    json_t *reply = NULL;
    if (cli_client_init(&c, server, &err) != DR_OK ||
        cli_client_json(&c, method, path, body, &reply, &err) != DR_OK) {
        fprintf(stderr, "live_load: %s %s: %s\n", method, path, err.msg);
        json_decref(reply);
        reply = NULL;
    }
    cli_client_free(&c);
    return reply;
}

static int submit_some(const char *server, int n, json_t *job)
{
    for (int i = 0; i < n; i++) {
        json_t *r = call(server, "POST", "/v1/jobs", job);
        if (!r)
            return 1;
        json_decref(r);
    }
    return 0;
}

/* Jobs not ended yet. */
static long live_jobs(const char *server)
{
    json_t *r = call(server, "GET", "/v1/jobs?limit=1000000", NULL);
    long n = r ? (long)json_array_size(json_object_get(r, "jobs")) : -1;
    json_decref(r);
    return n;
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

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: live_load SERVER submit N CONC [hold] | SERVER latency N | - spawn N\n");
        return 2;
    }
    const char *server = argv[1], *mode = argv[2];
    int n = atoi(argv[3]);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return 1;
    if (strcmp(mode, "spawn") == 0) {
        double t0 = now_s();
        for (int i = 0; i < n; i++) {
            pid_t p = fork();
            if (p == 0) {
                execl("/bin/true", "true", (char *)NULL);
                _exit(127);
            }
            int st;
            waitpid(p, &st, 0);
        }
        double dt = now_s() - t0;
        printf("spawn_limit_per_s %.0f\n", n / dt);
        return 0;
    }
    if (strcmp(mode, "submit") == 0) {
        int conc = argc > 4 ? atoi(argv[4]) : 1;
        bool hold = argc > 5 && strcmp(argv[5], "hold") == 0;
        json_t *job = json_pack("{s:[s],s:i,s:s,s:s}", "argv", "/bin/true", "gpus_per_node", 1,
                                "chdir", cwd, "output", "/dev/null");
        if (hold)
            json_object_set_new(job, "hold", json_true());
        double t0 = now_s();
        for (int k = 0; k < conc; k++) {
            if (fork() == 0)
                _exit(submit_some(server, n / conc + (k < n % conc), job));
        }
        int bad = 0, st;
        for (int k = 0; k < conc; k++) {
            wait(&st);
            bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
        }
        double t_ack = now_s() - t0;
        if (hold) {
            json_decref(job);
            if (bad)
                return 1;
            printf("submits %d clients %d held ack_s %.3f submits_per_s %.0f\n", n, conc, t_ack,
                   n / t_ack);
            return 0;
        }
        long left;
        while ((left = live_jobs(server)) > 0)
            usleep(5000);
        double t_end = now_s() - t0;
        json_decref(job);
        if (bad || left < 0)
            return 1;
        printf("submits %d clients %d ack_s %.3f submits_per_s %.0f end_to_end_s %.3f "
               "jobs_per_s %.0f\n",
               n, conc, t_ack, n / t_ack, t_end, n / t_end);
        return 0;
    }
    if (strcmp(mode, "latency") == 0) {
        double *lat = calloc((size_t)n, sizeof *lat);
        for (int i = 0; i < n; i++) {
            char out[4200];
            snprintf(out, sizeof out, "%s/lat-%d.out", cwd, i);
            json_t *job = json_pack("{s:[s,s],s:i,s:s,s:s}", "argv", "/bin/date", "+%s.%N",
                                    "gpus_per_node", 1, "chdir", cwd, "output", out);
            json_t *r = call(server, "POST", "/v1/jobs", job);
            json_decref(job);
            if (!r) {
                free(lat);
                return 1;
            }
            char path[64];
            snprintf(path, sizeof path, "/v1/jobs/%lld",
                     (long long)json_integer_value(json_object_get(r, "id")));
            json_decref(r);
            double submit = 0;
            for (;;) {
                json_t *j = call(server, "GET", path, NULL);
                const char *st = j ? json_string_value(json_object_get(j, "state")) : NULL;
                bool done = !st || strcmp(st, "completed") == 0 || strcmp(st, "failed") == 0;
                submit = j ? json_real_value(json_object_get(j, "submit_time")) : 0;
                json_decref(j);
                if (done)
                    break;
                usleep(2000);
            }
            FILE *f = fopen(out, "r");
            double started = 0;
            if (!f || fscanf(f, "%lf", &started) != 1) {
                if (f)
                    fclose(f);
                free(lat);
                return 1;
            }
            fclose(f);
            unlink(out);
            lat[i] = (started - submit) * 1e3;
        }
        qsort(lat, (size_t)n, sizeof *lat, cmp_d);
        printf("latency_ms n %d p50 %.1f p99 %.1f max %.1f\n", n, pct(lat, n, 50), pct(lat, n, 99),
               lat[n - 1]);
        free(lat);
        return 0;
    }
    fprintf(stderr, "live_load: unknown mode %s\n", mode);
    return 2;
}
