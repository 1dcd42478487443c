/* control.c - the verbs that change a job: `drover cancel`, `hold`,
 * `release` (one POST /v1/jobs/ID/ACTION per job named) and `update`
 * (PATCH /v1/jobs/ID). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/jobs.h"

/* What a per-job POST's answer means to one verb: its exit status (0 ok). */
typedef int (*job_reply_fn)(cli_client_t *c, const char *arg, long long id, int rc, json_t *reply,
                            dr_err_t *err, void *ud);

/* POST /v1/jobs/ID/ACTION for every job argument (the options were checked
 * by the verb): the last failing status, and no more tries once the
 * controller is unreachable. */
static int post_each_job(int argc, char **argv, const char *server, const char *action,
                         job_reply_fn on_reply, void *ud)
{
    cli_client_t c;
    int rc = cli_job_client_open(&c, server), status = 0;
    if (rc != 0)
        return rc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--server") == 0) {
            i++;
            continue;
        }
        if (argv[i][0] == '-')
            continue;
        dr_err_t err = {0};
        long long id = 0;
        json_t *reply = NULL;
        if ((rc = cli_job_resolve(&c, argv[i], &id, &err)) == DR_OK) {
            char target[96];
            snprintf(target, sizeof target, "/v1/jobs/%lld/%s", id, action);
            rc = cli_client_json(&c, "POST", target, NULL, &reply, &err);
        }
        int st = on_reply(&c, argv[i], id, rc, reply, &err, ud);
        if (st)
            status = st;
        json_decref(reply);
        if (rc != DR_OK && c.unreachable)
            break; /* no point trying the others */
    }
    cli_client_free(&c);
    return status;
}

static int cancel_reply(cli_client_t *c, const char *arg, long long id, int rc, json_t *reply,
                        dr_err_t *err, void *ud)
{
    (void)id;
    (void)ud;
    if (rc == DR_ESTATE && c->last_status == 409 && cli_json_str(reply, "state", NULL)) {
        fprintf(stderr, "drover: job %s has already ended (%s)\n", arg,
                cli_json_str(reply, "state", ""));
        return 1;
    }
    return rc == DR_OK ? 0 : cli_fail(err);
}

static int hold_reply(cli_client_t *c, const char *arg, long long id, int rc, json_t *reply,
                      dr_err_t *err, void *ud)
{
    (void)c;
    (void)arg;
    if (rc != DR_OK)
        return cli_fail(err);
    if (*(bool *)ud)
        cli_print_json(reply);
    else
        printf("%lld %s (%s)\n", id, cli_json_str(reply, "state", "?"),
               cli_json_str(reply, "reason", ""));
    return 0;
}

/* ------------------------------------------------------------------ cancel */

int cli_cancel(int argc, char **argv)
{
    const char *server = NULL;
    int njobs = 0;
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: drover cancel JOB... [--server URL|SOCKET]\n");
            return 0;
        }
        if ((m = cli_server_opt(argc, argv, &i, &server)) != 0) {
            if (m < 0)
                return 2;
        } else if (argv[i][0] == '-') {
            return cli_usage_error("cancel: unknown option '%s'", argv[i]);
        } else {
            njobs++;
        }
    }
    if (njobs == 0)
        return cli_usage_error("cancel: which job? (drover cancel JOB...)");
    return post_each_job(argc, argv, server, "cancel", cancel_reply, NULL);
}

/* ------------------------------------------------------- hold, release */

/* `drover hold JOB...` / `drover release JOB...` (Slurm's scontrol hold /
 * release): POST /v1/jobs/ID/hold or /release for each; prints the
 * job's state and reason, as the controller answers them. */
static int hold_verb(int argc, char **argv, const char *verb)
{
    const char *server = NULL;
    bool json = false;
    int njobs = 0;
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: drover %s JOB... [--json] [--server URL|SOCKET]\n", verb);
            return 0;
        }
        if ((m = cli_server_opt(argc, argv, &i, &server)) != 0) {
            if (m < 0)
                return 2;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (argv[i][0] == '-') {
            return cli_usage_error("%s: unknown option '%s'", verb, argv[i]);
        } else {
            njobs++;
        }
    }
    if (njobs == 0)
        return cli_usage_error("%s: which job? (drover %s JOB...)", verb, verb);
    return post_each_job(argc, argv, server, verb, hold_reply, &json);
}

int cli_hold(int argc, char **argv)
{
    return hold_verb(argc, argv, "hold");
}

int cli_release(int argc, char **argv)
{
    return hold_verb(argc, argv, "release");
}

/* `drover update JOB priority=N` (Slurm's scontrol update): PATCH
 * /v1/jobs/ID.  Owners may lower a priority, operators set any. */
int cli_update(int argc, char **argv)
{
    const char *server = NULL, *job = NULL;
    json_t *body = json_object();
    bool json = false;
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: drover update JOB priority=N [--json] [--server URL|SOCKET]\n");
            json_decref(body);
            return 0;
        }
        if ((m = cli_server_opt(argc, argv, &i, &server)) != 0) {
            if (m < 0) {
                json_decref(body);
                return 2;
            }
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (argv[i][0] == '-') {
            json_decref(body);
            return cli_usage_error("update: unknown option '%s'", argv[i]);
        } else if (!job) {
            job = argv[i];
        } else {
            const char *eq = strchr(argv[i], '=');
            long long v = 0;
            char *end = NULL;
            if (eq) {
                errno = 0;
                v = strtoll(eq + 1, &end, 10);
            }
            if (!eq || strncmp(argv[i], "priority", (size_t)(eq - argv[i])) != 0 ||
                eq - argv[i] != 8) {
                json_decref(body);
                return cli_usage_error("update: '%s': only priority=N can be updated", argv[i]);
            }
            if (end == eq + 1 || *end || errno || v < INT32_MIN || v > INT32_MAX) {
                json_decref(body);
                return cli_usage_error("update: priority: '%s' is not a whole number", eq + 1);
            }
            json_object_set_new(body, "priority", json_integer(v));
        }
    }
    if (!job || !json_object_size(body)) {
        json_decref(body);
        return cli_usage_error("update: drover update JOB priority=N");
    }
    cli_client_t c;
    int rc = cli_job_client_open(&c, server), status = 0;
    if (rc != 0) {
        json_decref(body);
        return rc;
    }
    dr_err_t err = {0};
    long long id = 0;
    json_t *reply = NULL;
    if ((rc = cli_job_resolve(&c, job, &id, &err)) == DR_OK) {
        char target[96];
        snprintf(target, sizeof target, "/v1/jobs/%lld", id);
        rc = cli_client_json(&c, "PATCH", target, body, &reply, &err);
    }
    if (rc == DR_OK && json)
        cli_print_json(reply);
    else if (rc == DR_OK)
        printf("%lld priority %lld\n", id,
               (long long)json_integer_value(json_object_get(reply, "priority")));
    else
        status = cli_fail(&err);
    json_decref(reply);
    json_decref(body);
    cli_client_free(&c);
    return status;
}
