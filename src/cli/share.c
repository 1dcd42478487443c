/* share.c - `drover share`: fair share per account, like Slurm's sshare
 * (GET /v1/share, docs/api.md): shares raw and normalised, usage in
 * GPU-hours (raw and decayed), effective usage, the fair-share factor, and
 * running GPUs and queued jobs against the account's limits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/format.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: drover share [--json] [--server URL|SOCKET]\n"
               "\n"
               "Fair share per account (Account= lines; (none) is jobs with no declared\n"
               "account): raw and normalised shares, GPU-hours used (raw, and decayed over\n"
               "the half-life), effective usage (its part of all decayed usage), the\n"
               "fair-share factor 2^(-effective/normalised shares) that orders the queue\n"
               "between accounts, running GPUs / MaxRunningGpus and queued jobs /\n"
               "MaxQueuedJobs.\n");
}

/* "N / LIMIT", or "N" without a limit */
static void of_limit(const json_t *row, const char *k, const char *lim, const char *fmt, char *buf,
                     size_t n)
{
    const json_t *l = json_object_get(row, lim);
    int len = snprintf(buf, n, fmt, cli_json_num(row, k));
    if (json_is_integer(l) && len >= 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, " / %lld", (long long)json_integer_value(l));
}

static int print_table(const json_t *reply)
{
    static const char *const head[] = {"ACCOUNT",   "SHARES",    "NORM_SHARES",
                                       "RAW_GPU_H", "DECAYED_H", "EFFECTIVE",
                                       "FAIRSHARE", "RUN_GPUS",  "QUEUED"};
    cli_table_t t;
    if (cli_table_init(&t, 9, head) != DR_OK)
        return cli_fail(&(dr_err_t){DR_ENOMEM, "out of memory"});
    for (size_t col = 1; col < 9; col++)
        cli_table_right(&t, col);
    size_t k;
    json_t *row;
    json_array_foreach(json_object_get(reply, "accounts"), k, row)
    {
        char sh[32], ns[32], raw[32], dec[32], eff[32], fs[32], run[48], q[48];
        snprintf(sh, sizeof sh, "%g", cli_json_num(row, "shares"));
        snprintf(ns, sizeof ns, "%.4f", cli_json_num(row, "norm_shares"));
        snprintf(raw, sizeof raw, "%.4f", cli_json_num(row, "raw_usage_gpu_hours"));
        snprintf(dec, sizeof dec, "%.4f", cli_json_num(row, "decayed_usage_gpu_hours"));
        snprintf(eff, sizeof eff, "%.4f", cli_json_num(row, "effective_usage"));
        snprintf(fs, sizeof fs, "%.6f", cli_json_num(row, "fairshare"));
        of_limit(row, "running_gpus", "max_running_gpus", "%g", run, sizeof run);
        of_limit(row, "queued_jobs", "max_queued_jobs", "%.0f", q, sizeof q);
        const char *name = cli_json_str(row, "account", NULL);
        const char *cells[] = {name ? name : "(none)", sh, ns, raw, dec, eff, fs, run, q};
        if (cli_table_add(&t, cells) != DR_OK)
            break;
    }
    char *out = cli_table_render(&t);
    if (out)
        fputs(out, stdout);
    free(out);
    cli_table_free(&t);
    const json_t *h = json_object_get(reply, "half_life_s");
    if (json_is_number(h)) {
        char d[32];
        cli_fmt_duration(json_number_value(h), d, sizeof d);
        printf("usage decays with a half-life of %s\n", d);
    } else {
        printf("usage does not decay\n");
    }
    /* budgets, where an account has one */
    json_array_foreach(json_object_get(reply, "accounts"), k, row)
    {
        const json_t *day = json_object_get(row, "max_cost_per_day"),
                     *month = json_object_get(row, "max_cost_per_month");
        if (!json_is_number(day) && !json_is_number(month))
            continue;
        printf("budget %s:", cli_json_str(row, "account", "?"));
        if (json_is_number(day))
            printf(" $%.2f of $%.2f today (UTC);", cli_json_num(row, "cost_today_usd"),
                   json_number_value(day));
        if (json_is_number(month))
            printf(" $%.2f of $%.2f this month;", cli_json_num(row, "cost_month_usd"),
                   json_number_value(month));
        printf(" its running jobs may spend $%.2f more\n", cli_json_num(row, "committed_usd"));
    }
    return 0;
}

int cli_share(int argc, char **argv)
{
    const char *server = NULL;
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--json") == 0) {
            as_json = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((m = cli_opt_value(argc, argv, &i, "--server", &server)) != 0) {
            if (m < 0)
                return 2;
        } else {
            return cli_usage_error("share: unknown argument '%s' (see drover share --help)",
                                   argv[i]);
        }
    }
    cli_client_t c;
    dr_err_t err = {0};
    if (cli_client_init(&c, server ? server : cli_server_arg, &err) != DR_OK) {
        cli_client_free(&c);
        return cli_usage_error("%s", err.msg);
    }
    json_t *reply = NULL;
    int rc = cli_client_json(&c, "GET", "/v1/share", NULL, &reply, &err);
    cli_client_free(&c);
    if (rc != DR_OK) {
        json_decref(reply);
        return cli_fail(&err);
    }
    if (as_json)
        cli_print_json(reply);
    else
        rc = print_table(reply);
    json_decref(reply);
    return rc;
}
