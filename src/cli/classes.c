/* classes.c - `drover classes`: the job classes the controller learns
 * speeds from (GET /v1/classes, docs/api.md): a job's --class NAME, an
 * array's tasks.  Per class its runs, the GPU type its rates are relative
 * to, a run's size there and the run-to-run spread; per GPU type the rate,
 * the runs seen there, the mean run time, the estimate's spread and what
 * the rate rests on.  A user sees their own classes; an operator, with
 * --all, every user's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/speeds.h"
#include "drover/time.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: drover classes [--all] [--json] [--server URL|SOCKET]\n"
               "\n"
               "The job classes drover learns speeds from (jobs given --class NAME, and\n"
               "arrays): for each, its runs, the GPU type its rates are relative to (the\n"
               "reference), a run's size there and the run-to-run spread; then for each GPU\n"
               "type the rate (1 = as fast as on the reference), the runs seen there, the\n"
               "mean run time, the estimate's spread and what the rate rests on (observed,\n"
               "via the runs on other types, the catalog, declared speeds).\n"
               "\n"
               "  --all   every user's classes (operators); else your own\n"
               "  --json  the reply as the controller sent it\n");
}

char *cli_fmt_rate(double rate, char *buf, size_t n)
{
    if (isnan(rate))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.3g", rate);
    return buf;
}

char *cli_fmt_spread(double factor, char *buf, size_t n)
{
    if (isnan(factor) || !(factor > 1))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "±%.0f%%", (factor - 1) * 100);
    return buf;
}

/* "CLASS sim (alice): 12 runs, reference H100-SXM-80GB, size 10.5 min,
 * run-to-run spread 8%" */
static void class_header(FILE *f, const json_t *k)
{
    const json_t *runs = json_object_get(k, "runs");
    long long n = json_is_integer(runs) ? (long long)json_integer_value(runs) : 0;
    fprintf(f, "CLASS %s (%s): %lld run%s, reference %s", cli_json_str(k, "name", "?"),
            cli_json_str(k, "owner", "?"), n, n == 1 ? "" : "s", cli_json_str(k, "reference", "?"));
    double size = cli_json_num(k, "size_s");
    if (size > 0) {
        char d[32];
        fprintf(f, ", size %s", dr_duration_format(size, DR_DURATION_SHORT, d, sizeof d));
    }
    double sigma = cli_json_num(k, "sigma");
    if (!isnan(sigma))
        fprintf(f, ", run-to-run spread %.0f%%", (exp(sigma) - 1) * 100);
    fputc('\n', f);
}

static int class_table(FILE *f, const json_t *k)
{
    static const char *const head[] = {"TYPE", "RATE", "RUNS", "MEAN RUN", "SPREAD", "BASIS"};
    cli_table_t t;
    if (cli_table_init(&t, 6, head) != DR_OK)
        return DR_ENOMEM;
    for (size_t col = 1; col < 5; col++)
        cli_table_right(&t, col);
    size_t i;
    json_t *ty;
    int rc = DR_OK;
    json_array_foreach(json_object_get(k, "types"), i, ty)
    {
        char rate[32], runs[32], mean[32], spread[32];
        const json_t *r = json_object_get(ty, "runs");
        snprintf(runs, sizeof runs, "%lld",
                 json_is_integer(r) ? (long long)json_integer_value(r) : 0);
        const char *row[] = {cli_json_str(ty, "type", "?"),
                             cli_fmt_rate(cli_json_num(ty, "rate"), rate, sizeof rate),
                             runs,
                             dr_duration_format(cli_json_num(ty, "mean_run_s"), DR_DURATION_SHORT,
                                                mean, sizeof mean),
                             cli_fmt_spread(cli_json_num(ty, "spread"), spread, sizeof spread),
                             cli_json_str(ty, "basis", "-")};
        if ((rc = cli_table_add(&t, row)) != DR_OK)
            break;
    }
    if (rc == DR_OK)
        rc = cli_table_print(&t, f);
    cli_table_free(&t);
    return rc;
}

int cli_classes_print(FILE *f, const json_t *reply)
{
    const json_t *list = json_object_get(reply, "classes");
    if (!json_array_size(list)) {
        fprintf(f, "no classes yet: jobs given --class NAME, and arrays, teach drover their speed "
                   "on each GPU type\n");
        return ferror(f) ? DR_EIO : DR_OK;
    }
    size_t i;
    json_t *k;
    json_array_foreach(list, i, k)
    {
        if (i)
            fputc('\n', f);
        class_header(f, k);
        int rc = class_table(f, k);
        if (rc != DR_OK)
            return rc;
    }
    return ferror(f) ? DR_EIO : DR_OK;
}

int cli_classes(int argc, char **argv)
{
    const char *server = NULL;
    bool as_json = false, all = false;
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--json") == 0) {
            as_json = true;
        } else if (strcmp(argv[i], "--all") == 0) {
            all = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((m = cli_opt_value(argc, argv, &i, "--server", &server)) != 0) {
            if (m < 0)
                return 2;
        } else {
            return cli_usage_error("classes: unknown argument '%s' (see drover classes --help)",
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
    int rc =
        cli_client_json(&c, "GET", all ? "/v1/classes?all=1" : "/v1/classes", NULL, &reply, &err);
    cli_client_free(&c);
    if (rc != DR_OK) {
        json_decref(reply);
        return cli_fail(&err);
    }
    if (as_json) {
        cli_print_json(reply);
    } else if ((rc = cli_classes_print(stdout, reply)) != DR_OK) {
        rc = cli_fail(rc == DR_ENOMEM ? &(dr_err_t){DR_ENOMEM, "out of memory"}
                                      : &(dr_err_t){DR_EIO, "cannot write the table"});
    }
    json_decref(reply);
    return rc;
}
