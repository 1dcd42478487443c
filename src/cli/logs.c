/* logs.c - `drover logs JOB [-f]`: the job's stdout or stderr, read in
 * chunks from the node that ran it (GET /v1/jobs/ID/output), and with -f
 * followed until the job ends, riding out a controller restart. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/jobs.h"
#include "drover/util.h"

#define CLI_LOG_CHUNK (1u << 20) /* bytes asked for at a time */

/* The job's state, asked directly (when the output reply did not say). */
static const char *job_state(cli_client_t *c, long long id, char *buf, size_t n, dr_err_t *err)
{
    char target[96];
    snprintf(target, sizeof target, "/v1/jobs/%lld", id);
    json_t *reply = NULL;
    if (cli_client_json(c, "GET", target, NULL, &reply, err) != DR_OK) {
        json_decref(reply);
        return NULL;
    }
    snprintf(buf, n, "%s", cli_json_str(reply, "state", "?"));
    json_decref(reply);
    return buf;
}

int cli_logs(int argc, char **argv)
{
    const char *job = NULL, *server = NULL;
    bool follow = false, err_stream = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: drover logs JOB [--stderr] [-f|--follow] [--server URL|SOCKET]\n");
            return 0;
        }
        if (strcmp(a, "-f") == 0 || strcmp(a, "--follow") == 0)
            follow = true;
        else if (strcmp(a, "--stderr") == 0)
            err_stream = true;
        else if ((m = cli_server_opt(argc, argv, &i, &server)) != 0) {
            if (m < 0)
                return 2;
        } else if (a[0] == '-')
            return cli_usage_error("logs: unknown option '%s'", a);
        else if (job)
            return cli_usage_error("logs: one job at a time ('%s', '%s')", job, a);
        else
            job = a;
    }
    if (!job)
        return cli_usage_error("logs: which job? (drover logs JOB)");
    cli_client_t c;
    int rc = cli_job_client_open(&c, server);
    if (rc != 0)
        return rc;
    dr_err_t err = {0};
    long long id = 0;
    if (cli_job_resolve(&c, job, &id, &err) != DR_OK) {
        cli_client_free(&c);
        return cli_fail(&err);
    }
    unsigned long long offset = 0;
    int interval = CLI_POLL_MIN_MS;
    double down_since = -1;
    for (;;) {
        char target[160];
        snprintf(target, sizeof target, "/v1/jobs/%lld/output?stream=%s&offset=%llu&limit=%u", id,
                 err_stream ? "stderr" : "stdout", offset, CLI_LOG_CHUNK);
        cli_http_resp_t r;
        rc = cli_client_request(&c, "GET", target, NULL, NULL, 0, &r, &err);
        if (rc != DR_OK) {
            if (follow && c.unreachable) {
                if (down_since < 0)
                    down_since = cli_now_s();
                if (cli_now_s() - down_since <= CLI_RETRY_UNREACHABLE_S) {
                    cli_sleep_ms(CLI_POLL_MAX_MS);
                    continue;
                }
            }
            rc = cli_fail(&err);
            break;
        }
        if (follow && r.status == 503) { /* the controller is starting: as if unreachable */
            cli_http_resp_free(&r);
            if (down_since < 0)
                down_since = cli_now_s();
            if (cli_now_s() - down_since <= CLI_RETRY_UNREACHABLE_S) {
                cli_sleep_ms(CLI_POLL_MAX_MS);
                continue;
            }
            rc = cli_fail_msg("logs: the controller stayed unavailable (503)");
            break;
        }
        down_since = -1;
        char state[32] = "";
        const char *hs = cli_http_resp_header(&r, "X-Drover-Job-State");
        if (hs)
            snprintf(state, sizeof state, "%s", hs);
        if (r.status == 404 && follow) {
            /* no output yet: fine while the job has not ended */
            cli_http_resp_free(&r);
            if (!hs && !job_state(&c, id, state, sizeof state, &err)) {
                rc = cli_fail(&err);
                break;
            }
            if (cli_state_terminal(state)) {
                rc = 0;
                break;
            }
            cli_sleep_ms(interval);
            interval = interval * 3 / 2 > CLI_POLL_MAX_MS ? CLI_POLL_MAX_MS : interval * 3 / 2;
            continue;
        }
        if (r.status != 200) {
            json_error_t jerr;
            json_t *j = json_loadb(r.body, r.body_len, 0, &jerr);
            const char *msg = cli_json_str(j, "error", NULL);
            if (msg)
                fprintf(stderr, "drover: %s\n", msg);
            else
                fprintf(stderr, "drover: HTTP %d %s from %s\n", r.status, r.reason, c.ep.display);
            json_decref(j);
            cli_http_resp_free(&r);
            rc = 1;
            break;
        }
        if (r.body_len && fwrite(r.body, 1, r.body_len, stdout) != r.body_len) {
            cli_http_resp_free(&r);
            rc = cli_fail_msg("logs: cannot write the output");
            break;
        }
        fflush(stdout);
        const char *next = cli_http_resp_header(&r, "X-Drover-Offset-Next");
        uint64_t nx;
        if (next && dr_parse_u64(next, &nx) == 0 && nx >= offset)
            offset = nx;
        else
            offset += r.body_len;
        size_t got = r.body_len;
        cli_http_resp_free(&r);
        if (got > 0) { /* more may be there: read until a reply is empty */
            interval = CLI_POLL_MIN_MS;
            continue;
        }
        if (!follow) {
            rc = 0;
            break;
        }
        if (!hs && !job_state(&c, id, state, sizeof state, &err)) {
            rc = cli_fail(&err);
            break;
        }
        if (cli_state_terminal(state)) {
            rc = 0;
            break;
        }
        cli_sleep_ms(interval);
        interval = interval * 3 / 2 > CLI_POLL_MAX_MS ? CLI_POLL_MAX_MS : interval * 3 / 2;
    }
    cli_client_free(&c);
    return rc;
}
