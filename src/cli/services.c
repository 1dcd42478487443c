/* services.c - the service verbs: `drover scale SERVICE N`, `drover
 * restart SERVICE` (a rolling restart), and the replica table `drover show`
 * prints for a service.  SERVICE is the service's job id, or one of its
 * replicas' (docs/services.md). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/format.h"

/* SERVICE [N] and --server / --json; -1 when --help was printed. */
static int svc_args(int argc, char **argv, const char *verb, bool want_n, long long *id,
                    long long *n, const char **server, bool *as_json)
{
    const char *usage = want_n ? "usage: drover scale SERVICE REPLICAS [--json] [--server URL]\n"
                               : "usage: drover restart SERVICE [--json] [--server URL]\n";
    int pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return -1;
        }
        if (strcmp(a, "--json") == 0) {
            *as_json = true;
            continue;
        }
        if ((m = cli_opt_value(argc, argv, &i, "--server", server)) != 0) {
            if (m < 0)
                return 2;
            continue;
        }
        if (a[0] == '-' && !(isdigit((unsigned char)a[1])))
            return cli_usage_error("%s: unknown option '%s'", verb, a);
        char *end;
        errno = 0;
        long long v = strtoll(a, &end, 10);
        if (!isdigit((unsigned char)a[0]) || *end || errno)
            return cli_usage_error("%s: '%s' is not %s", verb, a,
                                   pos == 0 ? "a job id" : "a number of replicas");
        if (pos == 0)
            *id = v;
        else if (pos == 1 && want_n)
            *n = v;
        else
            return cli_usage_error("%s: too many arguments ('%s')", verb, a);
        pos++;
    }
    if (pos < (want_n ? 2 : 1)) {
        fputs(usage, stderr);
        return 2;
    }
    if (want_n && (*n < 0 || *n > 1024))
        return cli_usage_error("%s: replicas: %lld is not from 0 to 1024", verb, *n);
    return 0;
}

static int svc_post(const char *server, const char *target, json_t *body, bool as_json)
{
    cli_client_t c;
    dr_err_t err = {0};
    if (cli_client_init(&c, server ? server : cli_server_arg, &err) != DR_OK) {
        cli_client_free(&c);
        json_decref(body);
        return cli_usage_error("%s", err.msg);
    }
    json_t *reply = NULL;
    int rc = cli_client_json(&c, "POST", target, body, &reply, &err);
    cli_client_free(&c);
    json_decref(body);
    if (rc != DR_OK) {
        json_decref(reply);
        return cli_fail(&err);
    }
    if (as_json)
        cli_print_json(reply);
    else if (json_is_true(json_object_get(reply, "rolling_restart")))
        printf("service %lld: rolling restart of %lld replicas started\n",
               (long long)json_integer_value(json_object_get(reply, "id")),
               (long long)json_integer_value(json_object_get(reply, "replicas")));
    else
        printf("service %lld: %lld replicas\n",
               (long long)json_integer_value(json_object_get(reply, "id")),
               (long long)json_integer_value(json_object_get(reply, "replicas")));
    json_decref(reply);
    return 0;
}

int cli_scale(int argc, char **argv)
{
    long long id = 0, n = 0;
    const char *server = NULL;
    bool as_json = false;
    int rc = svc_args(argc, argv, "scale", true, &id, &n, &server, &as_json);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    char target[96];
    snprintf(target, sizeof target, "/v1/jobs/%lld/scale", id);
    return svc_post(server, target, json_pack("{s:I}", "replicas", (json_int_t)n), as_json);
}

int cli_restart(int argc, char **argv)
{
    long long id = 0, n = 0;
    const char *server = NULL;
    bool as_json = false;
    int rc = svc_args(argc, argv, "restart", false, &id, &n, &server, &as_json);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    char target[96];
    snprintf(target, sizeof target, "/v1/jobs/%lld/restart", id);
    return svc_post(server, target, NULL, as_json);
}

int cli_print_service(const json_t *job)
{
    const json_t *s = json_object_get(job, "service");
    if (!json_is_object(s))
        return DR_OK;
    printf("\nreplicas: %lld wanted, %lld running, %lld ready (%s), %lld restarts%s\n",
           (long long)json_integer_value(json_object_get(s, "replicas")),
           (long long)json_integer_value(json_object_get(s, "running")),
           (long long)json_integer_value(json_object_get(s, "ready")),
           cli_json_str(s, "readiness", "tcp"),
           (long long)json_integer_value(json_object_get(s, "restarts")),
           json_is_true(json_object_get(s, "rolling_restart")) ? ", rolling restart" : "");
    static const char *const head[] = {"REPLICA",  "JOB",   "STATE",   "NODE",
                                       "ENDPOINT", "READY", "RESTARTS"};
    cli_table_t t;
    if (cli_table_init(&t, 7, head) != DR_OK)
        return DR_ENOMEM;
    size_t k;
    json_t *r;
    json_array_foreach(json_object_get(s, "replica_list"), k, r)
    {
        char idx[16], jid[24], ep[96], rs[16];
        snprintf(idx, sizeof idx, "%lld",
                 (long long)json_integer_value(json_object_get(r, "replica")));
        json_t *j = json_object_get(r, "job");
        snprintf(jid, sizeof jid, json_is_integer(j) ? "%lld" : "-",
                 (long long)json_integer_value(j));
        const char *addr = cli_json_str(r, "addr", NULL);
        if (addr)
            snprintf(ep, sizeof ep, "%s:%lld", addr,
                     (long long)json_integer_value(json_object_get(r, "port")));
        else
            snprintf(ep, sizeof ep, "-");
        snprintf(rs, sizeof rs, "%lld",
                 (long long)json_integer_value(json_object_get(r, "restarts")));
        const char *row[] = {idx,
                             jid,
                             cli_json_str(r, "state", "?"),
                             cli_json_str(r, "node", "-"),
                             ep,
                             json_is_true(json_object_get(r, "ready")) ? "yes" : "no",
                             rs};
        if (cli_table_add(&t, row) != DR_OK)
            break;
    }
    char *out = cli_table_render(&t);
    if (out)
        fputs(out, stdout);
    free(out);
    cli_table_free(&t);
    return DR_OK;
}
