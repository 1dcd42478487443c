/* nodes.c - `drover nodes`: the controller's nodes as a table (GET
 * /v1/nodes), with the GPUs in use, the agent's liveness and how long ago
 * it was last heard from; `drover nodes drain|resume|revoke|unrevoke NODE`
 * for operators. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/format.h"

static long long int_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

/* `drover nodes drain NODE --reason TEXT` / `drover nodes resume NODE`, and
 * `drover nodes revoke|unrevoke NODE` (the same request, another verb) */
static int drain_or_resume(int argc, char **argv)
{
    bool drain = strcmp(argv[1], "drain") == 0;
    const char *server = NULL, *reason = NULL, *node = NULL;
    for (int i = 2; i < argc; i++) {
        int m;
        if ((m = cli_opt_value(argc, argv, &i, "--server", &server)) != 0 ||
            (drain && (m = cli_opt_value(argc, argv, &i, "--reason", &reason)) != 0)) {
            if (m < 0)
                return 2;
        } else if (argv[i][0] == '-' || node) {
            return cli_usage_error("nodes %s: unexpected argument '%s'", argv[1], argv[i]);
        } else {
            node = argv[i];
        }
    }
    if (!node)
        return cli_usage_error("usage: drover nodes %s NODE%s", argv[1],
                               drain ? " --reason TEXT" : "");
    cli_client_t c;
    dr_err_t err = {0};
    if (cli_client_init(&c, server ? server : cli_server_arg, &err) != DR_OK) {
        cli_client_free(&c);
        return cli_usage_error("%s", err.msg);
    }
    char *esc = cli_url_escape(node);
    char path[1024];
    snprintf(path, sizeof path, "/v1/nodes/%s/%s", esc ? esc : node, argv[1]);
    free(esc);
    json_t *body = json_pack("{s:s}", "reason", reason ? reason : "");
    json_t *reply = NULL;
    int rc = cli_client_json(&c, "POST", path, body, &reply, &err);
    json_decref(body);
    cli_client_free(&c);
    if (rc != DR_OK) {
        json_decref(reply);
        return cli_fail(&err);
    }
    if (strcmp(argv[1], "rekey") == 0)
        printf("node %s: key generation %lld: its old keys are refused; install the key "
               "'droverd --enroll %s --generation %lld' writes\n",
               node, int_of(reply, "key_gen"), node, int_of(reply, "key_gen"));
    else if (json_is_true(json_object_get(reply, "revoked")))
        printf("node %s: revoked: its agent is refused until 'drover nodes unrevoke %s'\n", node,
               node);
    else
        printf("node %s: %s%s%s\n", node, cli_json_str(reply, "state", "?"),
               *cli_json_str(reply, "reason", "") ? " - " : "", cli_json_str(reply, "reason", ""));
    json_decref(reply);
    return 0;
}

int cli_nodes(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "drain") == 0 || strcmp(argv[1], "resume") == 0 ||
                     strcmp(argv[1], "revoke") == 0 || strcmp(argv[1], "unrevoke") == 0 ||
                     strcmp(argv[1], "rekey") == 0))
        return drain_or_resume(argc, argv);
    const char *server = NULL;
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--json") == 0) {
            as_json = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: drover nodes [--json] [--server URL|SOCKET]\n"
                   "       drover nodes drain NODE --reason TEXT   (operators)\n"
                   "       drover nodes resume NODE                (operators)\n"
                   "       drover nodes revoke|unrevoke NODE       (operators: refuse its key)\n"
                   "       drover nodes rekey NODE                 (operators: a new key "
                   "generation)\n");
            return 0;
        } else if ((m = cli_opt_value(argc, argv, &i, "--server", &server)) != 0) {
            if (m < 0)
                return 2;
        } else {
            return cli_usage_error("nodes: unknown argument '%s'", argv[i]);
        }
    }
    cli_client_t c;
    dr_err_t err = {0};
    if (cli_client_init(&c, server ? server : cli_server_arg, &err) != DR_OK) {
        cli_client_free(&c);
        return cli_usage_error("%s", err.msg);
    }
    json_t *reply = NULL;
    int rc = cli_client_json(&c, "GET", "/v1/nodes", NULL, &reply, &err);
    cli_client_free(&c);
    if (rc != DR_OK) {
        json_decref(reply);
        return cli_fail(&err);
    }
    if (as_json) {
        cli_print_json(reply);
        json_decref(reply);
        return 0;
    }
    static const char *const head[] = {"NAME", "STATE", "TYPE",  "PRICE", "GPUS",
                                       "CPUS", "MEM",   "AGENT", "REASON"};
    cli_table_t t;
    if (cli_table_init(&t, 9, head) != DR_OK) {
        json_decref(reply);
        return cli_fail(&(dr_err_t){DR_ENOMEM, "out of memory"});
    }
    cli_table_right(&t, 4);
    cli_table_right(&t, 5);
    cli_table_right(&t, 6);
    double now = cli_wall_now();
    size_t k;
    json_t *nd;
    json_array_foreach(json_object_get(reply, "nodes"), k, nd)
    {
        char gpus[48], cpus[24], mem[24], agent[48], age[32];
        snprintf(gpus, sizeof gpus, "%lld/%lld", int_of(nd, "gpus_alloc"), int_of(nd, "gpus"));
        snprintf(cpus, sizeof cpus, "%lld", int_of(nd, "cpus"));
        long long mb = int_of(nd, "mem_mb");
        cli_fmt_mem_mb(mb > 0 ? (uint64_t)mb : 0, mem, sizeof mem);
        const json_t *ag = json_object_get(nd, "agent");
        bool up = json_is_true(json_object_get(ag, "connected"));
        double hb = cli_json_num(ag, "last_heartbeat");
        if (isnan(hb))
            snprintf(agent, sizeof agent, "%s", up ? "up" : "down");
        else
            snprintf(agent, sizeof agent, "%s %s", up ? "up" : "down",
                     cli_fmt_age(now - hb, age, sizeof age));
        const char *type = cli_json_str(nd, "gpu_type", "");
        /* a GPU-hour's price and where it comes from (site, catalog, declared) */
        char price[48] = "-";
        double p = cli_json_num(nd, "price_per_gpu_hour");
        if (!isnan(p))
            snprintf(price, sizeof price, "$%.2f %s", p, cli_json_str(nd, "price_source", ""));
        const char *row[] = {cli_json_str(nd, "name", "?"),
                             cli_json_str(nd, "state", "?"),
                             *type ? type : "-",
                             price,
                             gpus,
                             cpus,
                             mem,
                             agent,
                             cli_json_str(nd, "reason", "")};
        if (cli_table_add(&t, row) != DR_OK)
            break;
    }
    char *out = cli_table_render(&t);
    if (out)
        fputs(out, stdout);
    free(out);
    cli_table_free(&t);
    json_decref(reply);
    return 0;
}
