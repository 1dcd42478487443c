/* queue.c - `drover queue`: the job listing as a table (GET
 * /v1/jobs?format=tsv, or JOB objects from an older controller), filtered
 * by state and user. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/jobs.h"
#include "drover/joblist.h"
#include "drover/util.h"

static const char *const job_states[] = {"pending",   "starting", "running",   "completing",
                                         "completed", "failed",   "cancelled", "preempted",
                                         "requeued",  "timeout",  NULL};

static bool known_state(const char *s, size_t n)
{
    for (const char *const *p = job_states; *p; p++)
        if (strlen(*p) == n && strncmp(*p, s, n) == 0)
            return true;
    return false;
}

/* Is `state` in the comma-separated list? */
static bool state_in(const char *list, const char *state)
{
    size_t n = strlen(state);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, ",");
        if (k == n && strncmp(p, state, n) == 0)
            return true;
        p += k;
        if (*p == ',')
            p++;
    }
    return false;
}

/* The table being filled, and the filters the rows must pass: the server
 * is asked to filter; this makes sure. */
typedef struct queue_ctx {
    cli_table_t t;
    const char *want, *user;
} queue_ctx_t;

static int queue_add(queue_ctx_t *q, const char *const *f, double time_s)
{
    if (q->want && !state_in(q->want, f[DR_JL_STATE]))
        return DR_OK;
    if (q->user && strcmp(f[DR_JL_USER], q->user) != 0)
        return DR_OK;
    char tm[32], reason[128]; /* a reason is shown up to 127 bytes */
    snprintf(reason, sizeof reason, "%s", f[DR_JL_REASON]);
    const char *nodes = f[DR_JL_NODES];
    const char *row[] = {
        f[DR_JL_ID],   f[DR_JL_NAME],        f[DR_JL_USER],
        f[DR_JL_KIND], f[DR_JL_STATE],       f[DR_JL_GPUS],
        f[DR_JL_TYPE], *nodes ? nodes : "-", cli_fmt_duration(time_s, tm, sizeof tm),
        reason};
    return cli_table_add(&q->t, row);
}

/* A row of GET /v1/jobs?format=tsv (dr_joblist_parse checked its numbers). */
static int queue_tsv_row(void *ud, char *const *f)
{
    const char *t = f[DR_JL_TIME];
    return queue_add(ud, (const char *const *)f, strcmp(t, "-") == 0 ? NAN : strtod(t, NULL));
}

/* A JOB object, from a controller that answers JSON to format=tsv (one
 * from before it): the same row. */
static int queue_json_row(queue_ctx_t *q, const json_t *j, double now)
{
    dr_joblist_row_t r;
    dr_joblist_from_json(j, now, &r);
    char gpus[32];
    snprintf(gpus, sizeof gpus, "%llu", (unsigned long long)r.gpus);
    const char *f[DR_JL_NCOLS] = {
        [DR_JL_ID] = r.id,         [DR_JL_NAME] = r.name,      [DR_JL_USER] = r.user,
        [DR_JL_KIND] = r.kind,     [DR_JL_STATE] = r.state,    [DR_JL_GPUS] = gpus,
        [DR_JL_TYPE] = r.gpu_type, [DR_JL_NODES] = r.nodelist, [DR_JL_REASON] = r.reason};
    return queue_add(q, f, r.time_s);
}

/* The reply to GET /v1/jobs?format=tsv into the table: rows, or JOB
 * objects from an older controller.  *truncated: the listing was cut. */
static int queue_fill(queue_ctx_t *q, cli_http_resp_t *r, bool *truncated, dr_err_t *err)
{
    const char *ct = cli_http_resp_header(r, "Content-Type");
    if (ct && strncasecmp(ct, "text/tab-separated-values", 25) == 0) {
        int rc = dr_joblist_parse(r->body, r->body_len, queue_tsv_row, q, truncated, err);
        if (rc != DR_OK && err && err->code == DR_EINVAL)
            dr_err_prefix(err, "the controller's job listing: ");
        return rc;
    }
    json_error_t je;
    json_t *reply = json_loadb(r->body, r->body_len, 0, &je);
    if (!reply)
        return dr_err_set(err, DR_EINVAL, "HTTP %d: the reply is not JSON: %s", r->status, je.text);
    double now = cli_wall_now();
    size_t k;
    json_t *j;
    int rc = DR_OK;
    json_array_foreach(json_object_get(reply, "jobs"), k, j)
    {
        if ((rc = queue_json_row(q, j, now)) != DR_OK)
            break;
    }
    *truncated = json_is_true(json_object_get(reply, "truncated"));
    json_decref(reply);
    return rc;
}

int cli_queue(int argc, char **argv)
{
    bool as_json = false, all = false;
    const char *server = NULL, *states = NULL, *user = NULL, *limit = "0";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (strcmp(a, "--json") == 0) {
            as_json = true;
        } else if (strcmp(a, "--all") == 0 || strcmp(a, "-a") == 0) {
            all = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: drover queue [--json] [--state S[,S...]] [--user U] [--all] "
                   "[--limit N] [--server URL|SOCKET]\n");
            return 0;
        } else if ((m = cli_opt_value(argc, argv, &i, "--state", &states)) ||
                   (m = cli_opt_value(argc, argv, &i, "--user", &user)) ||
                   (m = cli_opt_value(argc, argv, &i, "--limit", &limit)) ||
                   (m = cli_server_opt(argc, argv, &i, &server))) {
            if (m < 0)
                return 2;
        } else {
            return cli_usage_error("queue: unknown option '%s'", a);
        }
    }
    uint64_t lim_v;
    if (dr_parse_u64(limit, &lim_v) != 0)
        return cli_usage_error("queue: --limit '%s': not a number of jobs (0 = all)", limit);
    if (states) {
        for (const char *p = states; *p;) {
            size_t k = strcspn(p, ",");
            if (!known_state(p, k))
                return cli_usage_error("queue: --state '%.*s': not a job state (pending, "
                                       "starting, running, completing, completed, failed, "
                                       "cancelled, preempted, requeued, timeout)",
                                       (int)k, p);
            p += k;
            if (*p == ',')
                p++;
        }
    }
    /* Without --state or --all: the jobs that are not over. */
    const char *want = states ? states
                       : all  ? NULL
                              : "pending,starting,running,completing,preempted,requeued";
    char *eu = user ? cli_url_escape(user) : NULL, *es = want ? cli_url_escape(want) : NULL;
    if ((user && !eu) || (want && !es)) {
        free(eu);
        free(es);
        return cli_fail_msg("out of memory");
    }
    /* the table asks for the compact listing (rows, not JOB objects) */
    size_t tl = 96 + (eu ? strlen(eu) : 0) + (es ? strlen(es) : 0);
    char *target = malloc(tl);
    if (target)
        snprintf(target, tl, "/v1/jobs?limit=%llu&%s%s%s%s%s%s", (unsigned long long)lim_v,
                 es ? "state=" : "all=1", es ? es : "", eu ? "&" : "", eu ? "user=" : "",
                 eu ? eu : "", as_json ? "" : "&format=tsv");
    free(eu);
    free(es);
    if (!target)
        return cli_fail_msg("out of memory");

    cli_client_t c;
    int rc = cli_job_client_open(&c, server);
    if (rc != 0) {
        free(target);
        return rc;
    }
    dr_err_t err = {0};
    if (as_json) {
        json_t *reply = NULL;
        rc = cli_client_json(&c, "GET", target, NULL, &reply, &err);
        cli_client_free(&c);
        free(target);
        if (rc != DR_OK) {
            json_decref(reply);
            return cli_fail(&err);
        }
        cli_print_json(reply);
        json_decref(reply);
        return 0;
    }
    cli_http_resp_t r;
    rc = cli_client_get(&c, target, &r, &err);
    cli_client_free(&c);
    free(target);
    if (rc != DR_OK)
        return cli_fail(&err);
    static const char *const head[] = {"ID",   "NAME", "USER",  "KIND", "STATE",
                                       "GPUS", "TYPE", "NODES", "TIME", "REASON"};
    queue_ctx_t q = {.want = want, .user = user};
    if (cli_table_init(&q.t, 10, head) != DR_OK) {
        cli_http_resp_free(&r);
        return cli_fail_msg("out of memory");
    }
    cli_table_right(&q.t, 0);
    cli_table_right(&q.t, 5);
    cli_table_right(&q.t, 8);
    bool truncated = false;
    rc = queue_fill(&q, &r, &truncated, &err);
    cli_http_resp_free(&r);
    if (rc == DR_OK && (rc = cli_table_print(&q.t, stdout)) == DR_EIO)
        dr_err_set(&err, DR_EIO, "writing the table: %s", strerror(errno));
    cli_table_free(&q.t);
    if (rc == DR_ENOMEM)
        return cli_fail_msg("out of memory");
    if (rc != DR_OK)
        return cli_fail(&err);
    if (truncated)
        fprintf(stderr, "drover: note: the first %llu jobs only (--limit 0 for all)\n",
                (unsigned long long)lim_v);
    return 0;
}
