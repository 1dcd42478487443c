/* wait.c - `drover wait JOB...`: until every job named has ended (woken
 * by the controller's event stream, polling while it has none), with a
 * progress line on a terminal; the exit status says how the jobs ended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/follow.h"
#include "cli/format.h"
#include "cli/jobs.h"
#include "drover/time.h"

/* A look at the jobs this often anyway while waiting on the event stream. */
#define CLI_WAIT_RECHECK_MS 15000

typedef struct wait_job {
    const char *arg;
    long long id;
    json_t *last; /* the last JOB seen */
    int status;   /* exit status once ended, -1 before */
} wait_job_t;

/* Redraw the one-line progress on stderr (a terminal), cut to its width so
 * that \r returns to the start of the same line. */
static void progress(const char *line)
{
    struct winsize ws;
    int cols = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1 : 79;
    fprintf(stderr, "\r%.*s\033[K", cols, line);
    fflush(stderr);
}

static void wait_usage(FILE *f)
{
    fprintf(f, "usage: drover wait JOB... [--timeout DURATION] [--quiet] [--server URL|SOCKET]\n"
               "exit status: 0 if every job completed, else that of the first job (in the\n"
               "order given) that did not: its exit code, 128+N if killed by signal N,\n"
               "124 if it hit its time limit, 1 if it was cancelled or failed without a\n"
               "code; 125 if --timeout passed first.\n");
}

int cli_wait(int argc, char **argv)
{
    const char *server = NULL, *timeout = NULL;
    bool quiet = false;
    wait_job_t *jobs = calloc((size_t)argc, sizeof *jobs);
    size_t n = 0;
    if (!jobs)
        return cli_fail_msg("out of memory");
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        int m;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            wait_usage(stdout);
            free(jobs);
            return 0;
        }
        if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)
            quiet = true;
        else if ((m = cli_opt_value(argc, argv, &i, "--timeout", &timeout)) ||
                 (m = cli_server_opt(argc, argv, &i, &server)))
            rc = m < 0 ? 2 : 0;
        else if (a[0] == '-')
            rc = cli_usage_error("wait: unknown option '%s'", a);
        else
            jobs[n++] = (wait_job_t){.arg = a, .status = -1};
    }
    dr_time_t limit = 0;
    dr_err_t err = {0};
    if (rc == 0 && n == 0)
        rc = cli_usage_error("wait: which job? (drover wait JOB...)");
    if (rc == 0 && timeout && dr_duration_parse_err(timeout, &limit, &err) != 0)
        rc = cli_usage_error("wait: --timeout: %s", err.msg);
    cli_client_t c;
    if (rc == 0)
        rc = cli_job_client_open(&c, server);
    if (rc != 0) {
        free(jobs);
        return rc;
    }
    for (size_t k = 0; k < n && rc == 0; k++)
        if (cli_job_resolve(&c, jobs[k].arg, &jobs[k].id, &err) != DR_OK)
            rc = cli_fail(&err);

    bool tty = !quiet && isatty(STDERR_FILENO);
    double t0 = cli_now_s(), down_since = -1;
    int interval = CLI_POLL_MIN_MS, failed = 0;
    bool drawn = false;
    /* the event stream, opened before the first look at the jobs: each
     * event of one of them wakes the loop at once (polling only while the
     * controller has none, or is away) */
    long long *ids = calloc(n ? n : 1, sizeof *ids);
    cli_wait_stream_t ws = {0};
    if (!ids)
        rc = cli_fail_msg("out of memory");
    for (size_t k = 0; ids && k < n; k++)
        ids[k] = jobs[k].id;
    bool no_stream = rc == 0 && cli_wait_stream_open(&c, ids, n, &ws) == -2;
    while (rc == 0) {
        size_t left = 0;
        const wait_job_t *shown = NULL;
        for (size_t k = 0; k < n && rc == 0; k++) {
            wait_job_t *w = &jobs[k];
            if (w->status >= 0)
                continue;
            char target[96];
            snprintf(target, sizeof target, "/v1/jobs/%lld", w->id);
            json_t *reply = NULL;
            int r = cli_client_json(&c, "GET", target, NULL, &reply, &err);
            if (r != DR_OK && (c.unreachable || c.last_status == 503)) {
                /* a controller restart: ride it out for a while */
                json_decref(reply);
                if (down_since < 0)
                    down_since = cli_now_s();
                if (cli_now_s() - down_since > CLI_RETRY_UNREACHABLE_S)
                    rc = failed = 1;
                left++;
                break;
            }
            if (r != DR_OK) {
                json_decref(reply);
                rc = failed = 1;
                break;
            }
            down_since = -1;
            json_decref(w->last);
            w->last = reply;
            w->status = cli_job_exit_status(reply);
            if (w->status < 0) {
                left++;
                if (!shown)
                    shown = w;
            }
        }
        if (rc != 0)
            break;
        if (tty && shown) {
            char line[512];
            cli_job_progress(shown->last, cli_wall_now(), line, sizeof line);
            if (left > 1) {
                size_t l = strlen(line);
                snprintf(line + l, sizeof line - l, " (+%zu more)", left - 1);
            }
            progress(line);
            drawn = true;
        } else if (tty && down_since >= 0) {
            progress("controller unreachable; retrying");
            drawn = true;
        }
        if (left == 0)
            break;
        if (limit > 0 && cli_now_s() - t0 >= dr_time_to_s(limit)) {
            if (drawn)
                fputs("\r\033[K", stderr);
            drawn = false;
            const wait_job_t *w = shown ? shown : &jobs[0];
            fprintf(stderr, "drover: wait: gave up after %s: job %s is still %s\n", timeout, w->arg,
                    w->last ? cli_json_str(w->last, "state", "?") : "unknown");
            rc = 125;
            break;
        }
        for (size_t k = 0; k < n; k++) /* ended jobs no longer wake the loop */
            ids[k] = jobs[k].status >= 0 ? 0 : jobs[k].id;
        if (!ws.open && !no_stream && down_since < 0) {
            int o = cli_wait_stream_open(&c, ids, n, &ws);
            no_stream = o == -2;
            if (o == 0)
                continue; /* back: look again, then sleep on the stream */
        }
        if (ws.open) {
            /* an event of one of the jobs, or a look every few seconds
             * anyway (each second on a terminal: its progress line) */
            int ms = tty ? 1000 : CLI_WAIT_RECHECK_MS;
            if (limit > 0) {
                double rest = dr_time_to_s(limit) - (cli_now_s() - t0);
                ms = rest * 1000 < ms ? (int)(rest * 1000) + 1 : ms;
            }
            cli_wait_stream_next(&ws, ids, n, ms); /* a broken stream closes: polling */
            continue;
        }
        cli_sleep_ms(interval);
        interval = interval * 3 / 2 > CLI_POLL_MAX_MS ? CLI_POLL_MAX_MS : interval * 3 / 2;
    }
    cli_wait_stream_close(&ws);
    free(ids);
    if (drawn)
        fputs("\r\033[K", stderr); /* a message or the final states replace the progress line */
    if (failed)
        cli_fail(&err);
    for (size_t k = 0; tty && k < n && rc == 0; k++) {
        char line[512];
        if (jobs[k].last)
            fprintf(stderr, "%s\n",
                    cli_job_progress(jobs[k].last, cli_wall_now(), line, sizeof line));
    }
    for (size_t k = 0; k < n && rc == 0; k++)
        if (jobs[k].status > 0) {
            rc = jobs[k].status;
            break;
        }
    for (size_t k = 0; k < n; k++)
        json_decref(jobs[k].last);
    free(jobs);
    cli_client_free(&c);
    return rc;
}
