/* show.c - one job's record: `drover show` (its fields, one per line, then
 * its speed on each GPU type: show_speeds.c) and `drover events` (its
 * history as a table, or -f: the live stream). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/follow.h"
#include "cli/format.h"
#include "cli/jobs.h"
#include "cli/speeds.h"
#include "drover/util.h"

static bool is_time_key(const char *k)
{
    size_t n = strlen(k);
    return (n > 5 && strcmp(k + n - 5, "_time") == 0) || strcmp(k, "deadline") == 0 ||
           strcmp(k, "last_heartbeat") == 0;
}

static bool is_duration_key(const char *k)
{
    return strcmp(k, "elapsed") == 0 || strcmp(k, "time_limit") == 0 ||
           strcmp(k, "checkpoint_every") == 0;
}

/* One JOB member as text (malloc'd). */
static char *show_value(const char *key, const json_t *v)
{
    char buf[256];
    if (json_is_null(v))
        return dr_strdup("-");
    if (json_is_string(v))
        return dr_strdup(json_string_value(v));
    if (json_is_boolean(v))
        return dr_strdup(json_is_true(v) ? "yes" : "no");
    if (json_is_number(v)) {
        double x = json_number_value(v);
        if (is_time_key(key))
            return dr_strdup(cli_fmt_time(x, buf, sizeof buf));
        if (is_duration_key(key)) {
            if (strcmp(key, "time_limit") == 0 && x <= 0)
                return dr_strdup("none");
            return dr_strdup(cli_fmt_duration(x, buf, sizeof buf));
        }
        if (strcmp(key, "cost_usd") == 0)
            snprintf(buf, sizeof buf, "%.2f", x);
        else if (json_is_integer(v))
            snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        else
            snprintf(buf, sizeof buf, "%g", x);
        return dr_strdup(buf);
    }
    if (json_is_array(v) && strcmp(key, "steps") == 0) {
        /* "0 completed, exit 0: 4 tasks on n[1-2]: hostname; 1 running: ..." */
        if (!json_array_size(v))
            return dr_strdup("-");
        size_t k, cap = 256 * json_array_size(v), o = 0;
        char *out = malloc(cap);
        json_t *st;
        if (!out)
            return NULL;
        out[0] = '\0';
        json_array_foreach(v, k, st)
        {
            json_t *ex = json_object_get(st, "exit_code");
            char exs[32] = "";
            if (json_is_integer(ex))
                snprintf(exs, sizeof exs, ", exit %lld", (long long)json_integer_value(ex));
            o += (size_t)snprintf(
                out + o, cap - o, "%s%lld %s%s: %lld task%s on %s: %s", k ? "; " : "",
                (long long)json_integer_value(json_object_get(st, "id")),
                cli_json_str(st, "state", "?"), exs,
                (long long)json_integer_value(json_object_get(st, "ntasks")),
                json_integer_value(json_object_get(st, "ntasks")) == 1 ? "" : "s",
                cli_json_str(st, "nodelist", "?"), cli_json_str(st, "command", ""));
            if (o >= cap)
                break;
        }
        return out;
    }
    if (json_is_array(v) && strcmp(key, "env") == 0) {
        snprintf(buf, sizeof buf, "%zu variables", json_array_size(v));
        return dr_strdup(buf);
    }
    if (json_is_array(v)) {
        size_t n = json_array_size(v), k;
        const char **words = calloc(n ? n : 1, sizeof *words);
        char **tmp = calloc(n ? n : 1, sizeof *tmp);
        json_t *x;
        if (!words || !tmp) {
            free(words);
            free(tmp);
            return NULL;
        }
        for (k = 0; k < n; k++)
            words[k] = "?";
        json_array_foreach(v, k, x)
        {
            if (json_is_string(x))
                words[k] = json_string_value(x);
            else
                words[k] = tmp[k] = json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT);
            if (!words[k])
                words[k] = "?";
        }
        char *out = NULL;
        if (strcmp(key, "argv") == 0) {
            out = cli_fmt_argv(words, n);
        } else {
            size_t len = 1;
            for (k = 0; k < n; k++)
                len += strlen(words[k]) + 1;
            out = malloc(len);
            if (out) { /* "a,b,c" */
                size_t o = 0;
                for (k = 0; k < n; k++) {
                    size_t wl = strlen(words[k]);
                    if (k)
                        out[o++] = ',';
                    memcpy(out + o, words[k], wl);
                    o += wl;
                }
                out[o] = '\0';
            }
        }
        for (k = 0; k < n; k++)
            free(tmp[k]);
        free(tmp);
        free(words);
        return out;
    }
    if (json_is_object(v)) { /* tasks: "1000 total, 900 pending, ..." */
        size_t len = 0;
        const char *k;
        json_t *x;
        buf[0] = '\0';
        json_object_foreach((json_t *)v, k, x)
        {
            char *s = json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT);
            len += (size_t)snprintf(buf + len, len < sizeof buf ? sizeof buf - len : 0, "%s%s %s",
                                    len ? ", " : "", s ? s : "?", k);
            free(s);
            if (len >= sizeof buf)
                break;
        }
        return dr_strdup(buf);
    }
    return dr_strdup("?");
}

/* Members the field list leaves out: "speeds" has its own section
 * (show_speeds.c), and a job without a deadline needs no "deadline: -". */
static bool hidden_field(const char *k, const json_t *v)
{
    return strcmp(k, "speeds") == 0 || (strcmp(k, "deadline") == 0 && json_is_null(v));
}

/* "key: value" lines, keys aligned, in the order the server sent them. */
static int print_fields(const json_t *obj)
{
    size_t w = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (strlen(k) > w)
            w = strlen(k);
    }
    cli_table_t t;
    static const char *const none[] = {"", ""};
    if (cli_table_init(&t, 2, none) != DR_OK)
        return DR_ENOMEM;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (hidden_field(k, v))
            continue;
        char key[128];
        snprintf(key, sizeof key, "%s:", k);
        char *val = show_value(k, v);
        const char *row[] = {key, val ? val : "?"};
        int rc = cli_table_add(&t, row);
        free(val);
        if (rc != DR_OK) {
            cli_table_free(&t);
            return rc;
        }
    }
    char *out = cli_table_render(&t);
    /* skip the empty header line */
    if (out)
        fputs(out + strcspn(out, "\n") + 1, stdout);
    free(out);
    cli_table_free(&t);
    return out ? DR_OK : DR_ENOMEM;
}

/* `show`, `events`: one job argument and --json. */
static int one_job_args(int argc, char **argv, const char *verb, const char **job,
                        const char **server, bool *as_json)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (strcmp(a, "--json") == 0) {
            *as_json = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: drover %s JOB [--json] [--server URL|SOCKET]\n", verb);
            return -1;
        } else if ((m = cli_server_opt(argc, argv, &i, server)) != 0) {
            if (m < 0)
                return 2;
        } else if (a[0] == '-') {
            return cli_usage_error("%s: unknown option '%s'", verb, a);
        } else if (*job) {
            return cli_usage_error("%s: one job at a time ('%s', '%s')", verb, *job, a);
        } else {
            *job = a;
        }
    }
    if (!*job)
        return cli_usage_error("%s: which job? (drover %s JOB)", verb, verb);
    return 0;
}

/* GET /v1/jobs/ID[suffix] for the job named by `arg`. */
static int get_job_json(cli_client_t *c, const char *arg, const char *suffix, json_t **reply,
                        dr_err_t *err)
{
    long long id = 0;
    int rc = cli_job_resolve(c, arg, &id, err);
    if (rc != DR_OK)
        return rc;
    char target[96];
    snprintf(target, sizeof target, "/v1/jobs/%lld%s", id, suffix);
    return cli_client_json(c, "GET", target, NULL, reply, err);
}

int cli_show(int argc, char **argv)
{
    const char *job = NULL, *server = NULL;
    bool as_json = false;
    int rc = one_job_args(argc, argv, "show", &job, &server, &as_json);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    cli_client_t c;
    if ((rc = cli_job_client_open(&c, server)) != 0)
        return rc;
    dr_err_t err = {0};
    json_t *reply = NULL;
    rc = get_job_json(&c, job, "", &reply, &err);
    cli_client_free(&c);
    if (rc != DR_OK) {
        json_decref(reply);
        return cli_fail(&err);
    }
    if (as_json)
        cli_print_json(reply);
    else if (print_fields(reply) != DR_OK || cli_print_service(reply) != DR_OK ||
             cli_job_speeds_print(stdout, reply) != DR_OK)
        rc = cli_fail_msg("out of memory");
    json_decref(reply);
    return rc ? 1 : 0;
}

/* ------------------------------------------------------------------ events */

/* drover events -f [JOB]: the live stream (follow.c). */
static int events_follow(int argc, char **argv)
{
    const char *job = NULL, *server = NULL;
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (strcmp(a, "-f") == 0 || strcmp(a, "--follow") == 0)
            continue;
        if (strcmp(a, "--json") == 0)
            as_json = true;
        else if ((m = cli_server_opt(argc, argv, &i, &server)) != 0) {
            if (m < 0)
                return 2;
        } else if (a[0] == '-')
            return cli_usage_error("events: unknown option '%s'", a);
        else if (job)
            return cli_usage_error("events: one job at a time ('%s', '%s')", job, a);
        else
            job = a;
    }
    cli_client_t c;
    int rc = cli_job_client_open(&c, server);
    if (rc != 0)
        return rc;
    dr_err_t err = {0};
    long long id = 0;
    if (job && cli_job_resolve(&c, job, &id, &err) != DR_OK) {
        cli_client_free(&c);
        return cli_fail(&err);
    }
    rc = cli_events_follow(&c, id, as_json);
    cli_client_free(&c);
    return rc;
}

int cli_events(int argc, char **argv)
{
    const char *job = NULL, *server = NULL;
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--follow") == 0)
            return events_follow(argc, argv);
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: drover events JOB [--json] [--server URL|SOCKET]\n"
                   "       drover events -f [JOB] [--json] [--server URL|SOCKET]\n"
                   "  -f, --follow  print events as they happen (without JOB: every job's and\n"
                   "                node's); reconnects after a controller restart\n");
            return 0;
        }
    }
    int rc = one_job_args(argc, argv, "events", &job, &server, &as_json);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    cli_client_t c;
    if ((rc = cli_job_client_open(&c, server)) != 0)
        return rc;
    dr_err_t err = {0};
    json_t *reply = NULL;
    rc = get_job_json(&c, job, "/events", &reply, &err);
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
    static const char *const head[] = {"TIME", "STATE", "DETAIL"};
    cli_table_t t;
    if (cli_table_init(&t, 3, head) != DR_OK) {
        json_decref(reply);
        return cli_fail_msg("out of memory");
    }
    size_t k;
    json_t *e;
    json_array_foreach(json_object_get(reply, "events"), k, e)
    {
        char tm[64];
        /* a step's record has no state: its kind shows instead */
        const char *st = cli_json_str(e, "state", "");
        const char *row[] = {cli_fmt_time(cli_json_num(e, "t"), tm, sizeof tm),
                             st[0] ? st : cli_json_str(e, "what", ""),
                             cli_json_str(e, "detail", "")};
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
