/* history.c - `drover history`: finished jobs with what they used, like
 * Slurm's sacct (GET /v1/history, docs/api.md): elapsed time, GPU-hours,
 * cost and energy per job and in total.
 *
 * As sacct shows the caller's own recent jobs unless asked otherwise, the
 * default is the caller's jobs that ended in the last 7 days; the caller's
 * name comes from the controller (GET /v1/ping), since over TCP it is the
 * token's user, not the local account.  Times are parsed here, in the
 * user's time zone, and sent as Unix seconds. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/history_plot.h"
#include "drover/datetime.h"
#include "drover/time.h"

#define DEFAULT_DAYS 7

static void usage(FILE *f)
{
    fprintf(f,
            "usage: drover history [--user U | --all-users] [--account A] [--since T]\n"
            "                      [--until T] [--state S[,S]] [--limit N] [--json | --csv]\n"
            "                      [--plot FILE.svg [--by day|hour] [--lines]]\n"
            "                      [--server URL|SOCKET]\n"
            "\n"
            "Finished jobs that ended in [--since, --until): elapsed time, GPU-hours, cost\n"
            "and energy (GPU-hours x the GPU type's TDP), with totals.  Default: your own\n"
            "jobs of the last %d days.  T is Unix seconds, a local YYYY-MM-DD[THH:MM[:SS]],\n"
            "or now-DURATION (now-2d, now-90m).  States: completed, failed, cancelled,\n"
            "timeout.  An array's tasks are rows of their own; the array itself is a\n"
            "summary row the totals do not count again.\n"
            "\n"
            "--plot FILE.svg writes a chart instead of the table: cost (USD) and GPU-hours\n"
            "per account over time, per local day (per hour when the jobs span under two\n"
            "days; --by chooses), as stacked bars (--lines: one line per account).  Each\n"
            "job's usage is spread over the time it ran.\n",
            DEFAULT_DAYS);
}

/* --since/--until: the forms of dr_datetime_parse, or "now-DURATION" */
static int parse_when(const char *opt, const char *v, double now, double *out)
{
    dr_err_t err = {0};
    if (strncmp(v, "now", 3) == 0 && (v[3] == '\0' || v[3] == '-')) {
        dr_time_t d = 0;
        if (v[3] && dr_duration_parse_err(v + 4, &d, &err) != DR_OK)
            return cli_usage_error("%s '%s': %s", opt, v, err.msg);
        *out = now - dr_time_to_s(d);
        return 0;
    }
    if (dr_datetime_parse(v, out, &err) != DR_OK)
        return cli_usage_error("%s: %s (or now-DURATION)", opt, err.msg);
    return 0;
}

/* "&key=escaped(value)" appended to q */
static void add_param(char *q, size_t n, const char *key, const char *val)
{
    char *esc = cli_url_escape(val);
    size_t len = strlen(q);
    snprintf(q + len, n - len, "%s%s=%s", len ? "&" : "?", key, esc ? esc : "");
    free(esc);
}

/* 2 decimals; "<0.01" for a small non-zero amount (a one-minute job), so
 * that it does not read as nothing */
static char *fmt_amount(const char *prefix, double v, const char *unit, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "?");
    else if (v > 0 && v < 0.005)
        snprintf(buf, n, "<%s0.01%s", prefix, unit);
    else
        snprintf(buf, n, "%s%.2f%s", prefix, v, unit);
    return buf;
}

static int print_table(const json_t *reply)
{
    static const char *const head[] = {"ID",    "NAME",    "USER",  "ACCOUNT", "STATE", "GPU_TYPE",
                                       "NODES", "ELAPSED", "GPU_H", "COST",    "ENERGY"};
    cli_table_t t;
    if (cli_table_init(&t, 11, head) != DR_OK)
        return cli_fail(&(dr_err_t){DR_ENOMEM, "out of memory"});
    for (size_t col = 7; col < 11; col++)
        cli_table_right(&t, col);
    size_t k;
    json_t *j;
    json_array_foreach(json_object_get(reply, "jobs"), k, j)
    {
        char id[48], el[32], gh[32], cost[32], en[32];
        cli_job_id(j, id, sizeof id);
        cli_fmt_duration(cli_json_num(j, "elapsed"), el, sizeof el);
        fmt_amount("", cli_json_num(j, "gpu_hours"), "", gh, sizeof gh);
        fmt_amount("$", cli_json_num(j, "cost_usd"), "", cost, sizeof cost);
        fmt_amount("", cli_json_num(j, "energy_kwh"), " kWh", en, sizeof en);
        const char *acct = cli_json_str(j, "account", "");
        const char *type = cli_json_str(j, "gpu_type", "");
        const char *nl = cli_json_str(j, "nodelist", "");
        bool parent = json_is_integer(json_object_get(j, "array_tasks"));
        char name[300];
        snprintf(name, sizeof name, "%s%s", cli_json_str(j, "name", ""), parent ? " (array)" : "");
        const char *row[] = {id,
                             name,
                             cli_json_str(j, "user", ""),
                             *acct ? acct : "-",
                             cli_json_str(j, "state", "?"),
                             *type ? type : "-",
                             *nl ? nl : "-",
                             el,
                             gh,
                             cost,
                             en};
        if (cli_table_add(&t, row) != DR_OK)
            break;
    }
    char *out = cli_table_render(&t);
    if (out)
        fputs(out, stdout);
    free(out);
    cli_table_free(&t);
    const json_t *tot = json_object_get(reply, "totals");
    long long unknown = (long long)cli_json_num(tot, "energy_unknown");
    char gh[32], cost[32], en[32];
    printf("total: %lld job%s, %s GPU-hours, %s, %s", (long long)cli_json_num(tot, "jobs"),
           cli_json_num(tot, "jobs") == 1 ? "" : "s",
           fmt_amount("", cli_json_num(tot, "gpu_hours"), "", gh, sizeof gh),
           fmt_amount("$", cli_json_num(tot, "cost_usd"), "", cost, sizeof cost),
           fmt_amount("", cli_json_num(tot, "energy_kwh"), " kWh", en, sizeof en));
    if (unknown > 0)
        printf(" (+ %lld job%s of unknown TDP)", unknown, unknown == 1 ? "" : "s");
    printf("\n");
    return 0;
}

/* --plot FILE: the chart of the reply's rows, written whole or not at all
 * (a temporary file renamed over FILE) */
static int write_plot(const json_t *reply, const char *path, cli_plot_by_t by, bool lines,
                      const char *user, double since, double until)
{
    cli_usage_t u;
    dr_err_t err = {0};
    if (cli_usage_from_history(reply, by, &u, &err) != DR_OK)
        return cli_fail(&err);
    char a[48], b[48], window[400];
    cli_fmt_time(since, a, sizeof a);
    cli_fmt_time(until, b, sizeof b);
    snprintf(window, sizeof window, "%s%s, jobs that ended %s to %s", user ? "user " : "all users",
             user ? user : "", a, b);
    char *svg = cli_usage_svg(&u, lines, window);
    int rc = 0;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = svg ? fopen(tmp, "w") : NULL;
    if (!svg) {
        rc = cli_fail(&(dr_err_t){DR_ENOMEM, "out of memory"});
    } else if (!f) {
        fprintf(stderr, "drover: history: --plot '%s': cannot write: %s\n", path, strerror(errno));
        rc = 1;
    } else {
        size_t n = strlen(svg);
        bool ok = fwrite(svg, 1, n, f) == n;
        ok = fclose(f) == 0 && ok;
        if (!ok || rename(tmp, path) != 0) {
            fprintf(stderr, "drover: history: --plot '%s': write failed: %s\n", path,
                    strerror(errno));
            remove(tmp);
            rc = 1;
        } else {
            printf("wrote %s: %zu job%s, %zu account%s, %zu %s%s\n", path, u.jobs,
                   u.jobs == 1 ? "" : "s", u.nacc, u.nacc == 1 ? "" : "s", u.nx,
                   u.hourly ? "hour" : "day", u.nx == 1 ? "" : "s");
        }
    }
    free(svg);
    cli_usage_free(&u);
    return rc;
}

int cli_history(int argc, char **argv)
{
    const char *server = NULL, *user = NULL, *account = NULL, *since = NULL, *until = NULL;
    const char *state = NULL, *limit = NULL, *plot = NULL, *by = NULL;
    bool all_users = false, as_json = false, as_csv = false, lines = false;
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--json") == 0) {
            as_json = true;
        } else if (strcmp(argv[i], "--csv") == 0) {
            as_csv = true;
        } else if (strcmp(argv[i], "--lines") == 0) {
            lines = true;
        } else if (strcmp(argv[i], "--all-users") == 0 || strcmp(argv[i], "-a") == 0) {
            all_users = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((m = cli_opt_value(argc, argv, &i, "--server", &server)) != 0 ||
                   (m = cli_opt_value(argc, argv, &i, "--user", &user)) != 0 ||
                   (m = cli_opt_value(argc, argv, &i, "--account", &account)) != 0 ||
                   (m = cli_opt_value(argc, argv, &i, "--since", &since)) != 0 ||
                   (m = cli_opt_value(argc, argv, &i, "--until", &until)) != 0 ||
                   (m = cli_opt_value(argc, argv, &i, "--state", &state)) != 0 ||
                   (m = cli_opt_value(argc, argv, &i, "--limit", &limit)) != 0 ||
                   (m = cli_opt_value(argc, argv, &i, "--plot", &plot)) != 0 ||
                   (m = cli_opt_value(argc, argv, &i, "--by", &by)) != 0) {
            if (m < 0)
                return 2;
        } else {
            return cli_usage_error("history: unknown argument '%s' (see drover history --help)",
                                   argv[i]);
        }
    }
    if (as_json && as_csv)
        return cli_usage_error("history: --json and --csv exclude each other");
    if (user && all_users)
        return cli_usage_error("history: --user and --all-users exclude each other");
    if (plot && (as_json || as_csv))
        return cli_usage_error("history: --plot writes a chart; it excludes --json and --csv");
    if ((by || lines) && !plot)
        return cli_usage_error("history: %s shapes the chart of --plot FILE.svg",
                               by ? "--by" : "--lines");
    if (plot && !*plot)
        return cli_usage_error("history: --plot needs a file name");
    cli_plot_by_t plot_by = CLI_PLOT_AUTO;
    if (by && strcmp(by, "day") == 0)
        plot_by = CLI_PLOT_DAY;
    else if (by && strcmp(by, "hour") == 0)
        plot_by = CLI_PLOT_HOUR;
    else if (by)
        return cli_usage_error("history: --by '%s': day or hour", by);
    double now = cli_wall_now(), t_since = NAN, t_until = NAN;
    if (until && parse_when("--until", until, now, &t_until) != 0)
        return 2;
    if (since && parse_when("--since", since, now, &t_since) != 0)
        return 2;
    if (!since)
        t_since = (isnan(t_until) || t_until > now ? now : t_until) - DEFAULT_DAYS * 86400.0;

    cli_client_t c;
    dr_err_t err = {0};
    if (cli_client_init(&c, server ? server : cli_server_arg, &err) != DR_OK) {
        cli_client_free(&c);
        return cli_usage_error("%s", err.msg);
    }
    char me[128] = "";
    if (!user && !all_users) {
        json_t *ping = NULL;
        if (cli_client_json(&c, "GET", "/v1/ping", NULL, &ping, &err) != DR_OK) {
            json_decref(ping);
            cli_client_free(&c);
            return cli_fail(&err);
        }
        snprintf(me, sizeof me, "%s", cli_json_str(ping, "user", ""));
        json_decref(ping);
        user = me;
    }
    char q[2048] = "", num[64];
    if (user)
        add_param(q, sizeof q, "user", user);
    if (account)
        add_param(q, sizeof q, "account", account);
    snprintf(num, sizeof num, "%.3f", t_since);
    add_param(q, sizeof q, "since", num);
    if (!isnan(t_until)) {
        snprintf(num, sizeof num, "%.3f", t_until);
        add_param(q, sizeof q, "until", num);
    }
    if (state)
        add_param(q, sizeof q, "state", state);
    if (limit)
        add_param(q, sizeof q, "limit", limit);
    if (as_csv)
        add_param(q, sizeof q, "format", "csv");
    char target[2200];
    snprintf(target, sizeof target, "/v1/history%s", q);

    int rc = 0;
    if (as_csv) {
        cli_http_resp_t r;
        if (cli_client_request(&c, "GET", target, NULL, NULL, 0, &r, &err) != DR_OK) {
            cli_client_free(&c);
            return cli_fail(&err);
        }
        if (r.status == 200) {
            fwrite(r.body, 1, r.body_len, stdout);
        } else {
            json_t *j = json_loadb(r.body, r.body_len, 0, NULL);
            const char *msg = cli_json_str(j, "error", NULL);
            fprintf(stderr, "drover: %s\n", msg ? msg : "history: the controller refused");
            json_decref(j);
            rc = 1;
        }
        cli_http_resp_free(&r);
        cli_client_free(&c);
        return rc;
    }
    json_t *reply = NULL;
    rc = cli_client_json(&c, "GET", target, NULL, &reply, &err);
    cli_client_free(&c);
    if (rc != DR_OK) {
        json_decref(reply);
        return cli_fail(&err);
    }
    if (plot)
        rc = write_plot(reply, plot, plot_by, lines, user, t_since, isnan(t_until) ? now : t_until);
    else if (as_json)
        cli_print_json(reply);
    else
        rc = print_table(reply);
    if (json_is_true(json_object_get(reply, "truncated")))
        fprintf(stderr, "drover: history: more jobs match; showing the newest (raise --limit)\n");
    json_decref(reply);
    return rc;
}
