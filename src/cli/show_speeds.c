/* show_speeds.c - the Speeds section of `drover show`: what the controller
 * knows of a job's speed on each GPU type it may use (its JOB's "speeds",
 * docs/api.md): its class, its work and what that rests on, and per type
 * the rate, the run time and cost that work takes there, whether it would
 * meet the job's deadline, and what the rate rests on. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/format.h"
#include "cli/speeds.h"
#include "drover/time.h"

/* "class: X (prior: catalog, 12 runs of the class); work: 10.5 min on REF
 * (from its --estimate)" */
static void speeds_line(FILE *f, const json_t *sp)
{
    const json_t *runs = json_object_get(sp, "class_runs");
    long long n = json_is_integer(runs) ? (long long)json_integer_value(runs) : 0;
    fprintf(f, "class: %s (prior: %s, %lld run%s of the class); ", cli_json_str(sp, "class", "?"),
            cli_json_str(sp, "prior", "?"), n, n == 1 ? "" : "s");
    double work = cli_json_num(sp, "work_s");
    if (!(work > 0)) {
        fprintf(f, "work: unknown (no --estimate, no run of its class yet)\n");
        return;
    }
    char d[32];
    fprintf(f, "work: %s on %s", dr_duration_format(work, DR_DURATION_SHORT, d, sizeof d),
            cli_json_str(sp, "reference", "?"));
    const char *from = cli_json_str(sp, "work_from", NULL);
    if (from)
        fprintf(f, " (from %s)", from);
    fputc('\n', f);
}

static char *fmt_usd(double usd, char *buf, size_t n)
{
    if (isnan(usd))
        snprintf(buf, n, "-");
    else if (usd > 0 && usd < 0.005)
        snprintf(buf, n, "<$0.01");
    else
        snprintf(buf, n, "$%.2f", usd);
    return buf;
}

int cli_job_speeds_print(FILE *f, const json_t *job)
{
    const json_t *sp = json_object_get(job, "speeds");
    if (!json_is_object(sp))
        return DR_OK;
    fprintf(f, "\nSpeeds\n");
    speeds_line(f, sp);
    static const char *const head[] = {"TYPE", "RATE", "RUN TIME", "COST", "DEADLINE", "BASIS"};
    cli_table_t t;
    if (cli_table_init(&t, 6, head) != DR_OK)
        return DR_ENOMEM;
    for (size_t col = 1; col < 4; col++)
        cli_table_right(&t, col);
    size_t i;
    json_t *ty;
    int rc = DR_OK;
    bool chosen = false;
    json_array_foreach(json_object_get(sp, "types"), i, ty)
    {
        char name[96], rate[32], run[32], usd[32];
        bool got = json_is_true(json_object_get(ty, "chosen"));
        chosen = chosen || got;
        snprintf(name, sizeof name, "%s%s", cli_json_str(ty, "type", "?"), got ? "*" : "");
        const json_t *meets = json_object_get(ty, "meets_deadline");
        const char *row[] = {
            name,
            cli_fmt_rate(cli_json_num(ty, "rate"), rate, sizeof rate),
            dr_duration_format(cli_json_num(ty, "run_s"), DR_DURATION_SHORT, run, sizeof run),
            fmt_usd(cli_json_num(ty, "usd"), usd, sizeof usd),
            json_is_boolean(meets) ? (json_is_true(meets) ? "yes" : "no") : "-",
            cli_json_str(ty, "basis", "-")};
        if ((rc = cli_table_add(&t, row)) != DR_OK)
            break;
    }
    if (rc == DR_OK)
        rc = cli_table_print(&t, f);
    cli_table_free(&t);
    if (rc == DR_OK && chosen)
        fprintf(f, "* the type it was given%s%s\n",
                json_is_string(json_object_get(sp, "why")) ? ": " : "",
                cli_json_str(sp, "why", ""));
    return rc != DR_OK ? rc : ferror(f) ? DR_EIO : DR_OK;
}
