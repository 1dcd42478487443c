/* jobs.c - what the job verbs of the live cluster share (jobs.h): the
 * client to the controller their --server names, and a job named as users
 * name it ("42", "42_7").  The verbs themselves: submit.c, queue.c, show.c
 * (show, events), control.c (cancel, hold, release, update), wait.c,
 * logs.c. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/jobs.h"
#include "cli/cli.h"

int cli_job_client_open(cli_client_t *c, const char *server)
{
    dr_err_t err = {0};
    if (cli_client_init(c, server ? server : cli_server_arg, &err) != DR_OK) {
        cli_client_free(c);
        return cli_usage_error("%s", err.msg);
    }
    return 0;
}

/* Common options of the verbs: --server (and --json where it applies, in
 * each verb). */
int cli_server_opt(int argc, char **argv, int *i, const char **server)
{
    return cli_opt_value(argc, argv, i, "--server", server);
}

int cli_fail_msg(const char *msg)
{
    fprintf(stderr, "drover: %s\n", msg);
    return 1;
}

/* "42_7": task 7 of array 42, found among the array's started tasks. */
int cli_job_resolve(cli_client_t *c, const char *arg, long long *id, dr_err_t *err)
{
    char *end;
    errno = 0;
    long long a = strtoll(arg, &end, 10);
    if (!isdigit((unsigned char)arg[0]) || errno || a <= 0 || (*end && *end != '_'))
        return dr_err_set(err, DR_EINVAL, "'%s' is not a job id (42, or 42_7 for an array task)",
                          arg);
    if (*end == '\0') {
        *id = a;
        return DR_OK;
    }
    const char *ix = end + 1;
    long long idx = strtoll(ix, &end, 10);
    if (!isdigit((unsigned char)ix[0]) || errno || *end)
        return dr_err_set(err, DR_EINVAL, "'%s' is not a job id (42, or 42_7 for an array task)",
                          arg);
    char target[96];
    snprintf(target, sizeof target, "/v1/jobs?array=%lld", a);
    json_t *reply = NULL;
    int rc = cli_client_json(c, "GET", target, NULL, &reply, err);
    if (rc != DR_OK) {
        json_decref(reply);
        return rc;
    }
    size_t k;
    json_t *j;
    rc = dr_err_set(err, DR_ENOENT,
                    "job %s: task %lld of array %lld has not started (or there is "
                    "no such task)",
                    arg, idx, a);
    json_array_foreach(json_object_get(reply, "jobs"), k, j)
    {
        const json_t *ai = json_object_get(j, "array_index");
        if (json_is_integer(ai) && json_integer_value(ai) == idx &&
            json_is_integer(json_object_get(j, "id"))) {
            *id = (long long)json_integer_value(json_object_get(j, "id"));
            dr_err_clear(err);
            rc = DR_OK;
            break;
        }
    }
    json_decref(reply);
    return rc;
}
