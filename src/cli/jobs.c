/* jobs.c - the job verbs of the live cluster: submit, queue, show, cancel,
 * wait, events, logs.  Each is a thin client of the controller's API
 * (docs/api.md): the options of `submit` come from the job-field vocabulary
 * (include/drover/jobspec.h), so a field added there is an option here with
 * no change to this file; everything else turns JOB objects into text. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/follow.h"
#include "cli/format.h"
#include "drover/joblist.h"
#include "drover/jobspec.h"
#include "drover/util.h"

extern char **environ;

/* Consecutive seconds of an unreachable controller that `wait` and `logs
 * -f` ride out (a controller restart), before giving up. */
#define CLI_RETRY_UNREACHABLE_S 60
#define CLI_POLL_MIN_MS         100
#define CLI_POLL_MAX_MS         1000
#define CLI_WAIT_RECHECK_MS     15000 /* wait on the event stream: a look this often anyway */
#define CLI_LOG_CHUNK           (1u << 20)

static int open_client(cli_client_t *c, const char *server)
{
    dr_err_t err = {0};
    if (cli_client_init(c, server ? server : cli_server_arg, &err) != DR_OK) {
        cli_client_free(c);
        return cli_usage_error("%s", err.msg);
    }
    return 0;
}

/* Common options of the verbs: --server (and --json where it applies).
 * 1 consumed, 0 not ours, -1 usage error printed. */
static int common_opt(int argc, char **argv, int *i, const char **server)
{
    return cli_opt_value(argc, argv, i, "--server", server);
}

static int fail_msg(const char *msg)
{
    fprintf(stderr, "drover: %s\n", msg);
    return 1;
}

/* A job as users name it: "42", or "42_7" for task 7 of array 42 (looked
 * up among the array's started tasks). */
static int resolve_job(cli_client_t *c, const char *arg, long long *id, dr_err_t *err)
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

/* ------------------------------------------------------------------ submit */

static void submit_usage(FILE *f)
{
    fprintf(f, "usage: drover submit [--parsable] [--json] [OPTIONS] -- COMMAND [ARGS...]\n"
               "       drover submit [--parsable] [--json] [OPTIONS] SCRIPT\n"
               "\n"
               "Run COMMAND, or the batch script SCRIPT ('-' reads it from stdin), on the\n"
               "cluster.  A script's '#DROVER' and '#SBATCH' lines set the same options;\n"
               "the command line wins.  Slurm's --gres=gpu[:TYPE]:N is read as --gpus-per-node.\n"
               "\njob options:\n");
    for (const dr_jobfield_t *const *p = dr_jobfield_list(); *p; p++) {
        const dr_jobfield_t *f2 = *p;
        char left[64];
        if (f2->shopt)
            snprintf(left, sizeof left, "-%c, --%s%s", f2->shopt, f2->opt,
                     f2->takes_value ? "=VALUE" : "");
        else
            snprintf(left, sizeof left, "    --%s%s", f2->opt, f2->takes_value ? "=VALUE" : "");
        fprintf(f, "  %-30s %s", left, f2->doc ? f2->doc : "");
        if (f2->sbatch && strcmp(f2->sbatch, f2->opt) != 0)
            fprintf(f, " (Slurm: --%s)", f2->sbatch);
        fputc('\n', f);
    }
    fprintf(f,
            "\nother options:\n"
            "  %-30s print only the job id\n"
            "  %-30s print the controller's reply as JSON\n"
            "  %-30s the controller (default: $DROVER_SERVER, %s,\n"
            "  %-30s then %s)\n",
            "    --parsable", "    --json", "    --server=URL|SOCKET", CLI_DEFAULT_SOCKET, "",
            CLI_DEFAULT_URL);
}

/* The vocabulary field for a short option letter, or NULL. */
static const dr_jobfield_t *field_by_short(char c)
{
    for (const dr_jobfield_t *const *p = dr_jobfield_list(); *p; p++)
        if ((*p)->shopt == c)
            return *p;
    return NULL;
}

/* --shard-list FILE: the field holds the file's names, one per line
 * ("FILE: shard_list: line 3: ..." on a bad one). */
static int shard_list_file(dr_jobspec_t *s, const char *path, dr_err_t *err)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = dr_read_file(path, &buf, &len, err);
    if (rc != DR_OK)
        return rc;
    if (memchr(buf, '\0', len)) {
        free(buf);
        return dr_err_set(err, DR_EINVAL, "%s: shard_list: not a text file", path);
    }
    dr_err_t e2 = {0};
    rc = dr_jobspec_set(s, "shard_list", buf, &e2);
    free(buf);
    if (rc != DR_OK)
        return dr_err_set(err, rc, "%s: %s", path, e2.msg);
    return DR_OK;
}

/* One job option at argv[*i] ("--opt V", "--opt=V", "-N 2", "-N2", a flag):
 * 1 set, 0 not a job option, -1 an error (printed; *rc is the exit code). */
static int job_option(dr_jobspec_t *s, int argc, char **argv, int *i, int *rc)
{
    const char *a = argv[*i];
    const dr_jobfield_t *f = NULL;
    const char *val = NULL;
    /* the option as typed, "--gres" or "-N": dr_jobspec_set reads some
     * spellings differently (Slurm's --gres=gpu:H100:4) */
    char name[128];
    if (a[0] == '-' && a[1] == '-') {
        size_t n = strcspn(a, "=");
        if (n <= 2 || n >= sizeof name)
            return 0;
        memcpy(name, a, n);
        name[n] = '\0';
        f = dr_jobfield_find(name);
        if (!f)
            return 0;
        if (a[n] == '=')
            val = a + n + 1;
    } else if (a[0] == '-' && a[1] && a[1] != '-') {
        f = field_by_short(a[1]);
        if (!f)
            return 0;
        if (a[2])
            val = a + 2;
        snprintf(name, sizeof name, "-%c", a[1]);
    } else {
        return 0;
    }
    if (!f->takes_value) {
        if (val) {
            *rc = cli_usage_error("submit: --%s takes no value", f->opt);
            return -1;
        }
        val = "1";
    } else if (!val) {
        if (*i + 1 >= argc) {
            *rc = cli_usage_error("submit: --%s needs a value", f->opt);
            return -1;
        }
        val = argv[++*i];
    }
    dr_err_t err = {0};
    if (f->id == DR_JF_SHARD_LIST) { /* the value is a file of names */
        if (shard_list_file(s, val, &err) != DR_OK) {
            *rc = cli_fail(&err);
            return -1;
        }
        return 1;
    }
    if (dr_jobspec_set(s, name, val, &err) != DR_OK) {
        *rc = cli_usage_error("%s", err.msg);
        return -1;
    }
    return 1;
}

static char **dup_argv(char **v, int n)
{
    char **out = calloc((size_t)n + 1, sizeof *out);
    if (!out)
        return NULL;
    for (int k = 0; k < n; k++)
        if (!(out[k] = dr_strdup(v[k]))) {
            while (k > 0)
                free(out[--k]);
            free(out);
            return NULL;
        }
    return out;
}

/* The submitter's environment, as Slurm exports it by default, less the
 * bearer token (a credential that must not reach the job's nodes). */
static int take_env(dr_jobspec_t *s)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    s->env = calloc(n + 1, sizeof *s->env);
    if (!s->env)
        return DR_ENOMEM;
    s->nenv = 0;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "DROVER_TOKEN=", 13) == 0 || !strchr(*e, '='))
            continue;
        if (!(s->env[s->nenv] = dr_strdup(*e)))
            return DR_ENOMEM;
        s->nenv++;
    }
    return DR_OK;
}

/* A relative -o/-e path is relative to where the user submitted from (the
 * job may start elsewhere). */
static int absolutise(char **path, const char *cwd)
{
    if (!*path || (*path)[0] == '/' || !(*path)[0])
        return DR_OK;
    size_t n = strlen(cwd) + strlen(*path) + 2;
    char *p = malloc(n);
    if (!p)
        return DR_ENOMEM;
    snprintf(p, n, "%s%s%s", cwd, cwd[strlen(cwd) - 1] == '/' ? "" : "/", *path);
    free(*path);
    *path = p;
    return DR_OK;
}

/* The script text from a file, or stdin for "-". */
static int read_script(const char *path, char **buf, size_t *len, dr_err_t *err)
{
    if (strcmp(path, "-") != 0) {
        int rc = dr_read_file(path, buf, len, err);
        if (rc == DR_OK && *len > DR_JOBSPEC_MAX_SCRIPT) {
            free(*buf);
            *buf = NULL;
            return dr_err_set(err, DR_ELIMIT, "%s: script larger than %u bytes", path,
                              DR_JOBSPEC_MAX_SCRIPT);
        }
        return rc;
    }
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    if (!b)
        return DR_ENOMEM;
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = cap > DR_JOBSPEC_MAX_SCRIPT ? NULL : realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return dr_err_set(err, DR_ELIMIT, "stdin: script larger than %u bytes",
                                  DR_JOBSPEC_MAX_SCRIPT);
            }
            b = nb;
            cap *= 2;
        }
        size_t r = fread(b + n, 1, cap - n - 1, stdin);
        n += r;
        if (r == 0)
            break;
    }
    if (ferror(stdin)) {
        free(b);
        return dr_err_set(err, DR_EIO, "stdin: %s", strerror(errno));
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return DR_OK;
}

/* "in 45 s", "in 12.0 min", "in 3.5 h", "in 2.1 days". */
static void fmt_in(double s, char *out, size_t n)
{
    if (s < 90)
        snprintf(out, n, "in %.0f s", s < 0 ? 0 : s);
    else if (s < 90 * 60)
        snprintf(out, n, "in %.1f min", s / 60);
    else if (s < 36 * 3600)
        snprintf(out, n, "in %.1f h", s / 3600);
    else
        snprintf(out, n, "in %.1f days", s / 86400);
}

void cli_test_only_line(const json_t *reply, const char *what, char *out, size_t n)
{
    const char *at = json_string_value(json_object_get(reply, "start_at"));
    if (!at) {
        const char *why = json_string_value(json_object_get(reply, "reason"));
        snprintf(out, n, "%s would never start: %s", what, why ? why : "(no reason given)");
        return;
    }
    char in[32];
    fmt_in(json_number_value(json_object_get(reply, "start_in_s")), in, sizeof in);
    size_t k = (size_t)snprintf(out, n, "%s would start at %s (%s)", what, at, in);
    const json_t *nodes = json_object_get(reply, "nodes");
    for (size_t i = 0; i < json_array_size(nodes) && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s%s", i ? "," : " on ",
                              json_string_value(json_array_get(nodes, i)));
    /* and why then (held or waiting jobs ahead, dependencies, an account
     * at its limit), as the controller says it */
    const char *why = json_string_value(json_object_get(reply, "reason"));
    if (why && why[0] && k < n)
        snprintf(out + k, n - k, " - %s", why);
}

int cli_submit(int argc, char **argv)
{
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    bool parsable = false, as_json = false, command = false;
    const char *server = NULL;
    int rc = 0, i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            command = true;
            i++;
            break;
        }
        if (a[0] != '-' || strcmp(a, "-") == 0)
            break; /* the script */
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            submit_usage(stdout);
            dr_jobspec_free(&s);
            return 0;
        }
        if (strcmp(a, "--parsable") == 0) {
            parsable = true;
            continue;
        }
        if (strcmp(a, "--json") == 0) {
            as_json = true;
            continue;
        }
        int m = common_opt(argc, argv, &i, &server);
        if (m == 0)
            m = job_option(&s, argc, argv, &i, &rc);
        if (m < 0) {
            dr_jobspec_free(&s);
            return rc ? rc : 2;
        }
        if (m == 0) {
            dr_jobspec_free(&s);
            return cli_usage_error("submit: unknown option '%s' (see 'drover submit --help')", a);
        }
    }
    if (i >= argc) {
        dr_jobspec_free(&s);
        return cli_usage_error(command ? "submit: nothing to run after '--'"
                                       : "submit: give a SCRIPT, or '--' and a COMMAND "
                                         "(see 'drover submit --help')");
    }

    dr_err_t err = {0};
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) {
        dr_jobspec_free(&s);
        return fail_msg("submit: cannot tell the current directory");
    }
    if (command) {
        s.argv = dup_argv(argv + i, argc - i);
        s.argc = (uint32_t)(argc - i);
    } else {
        const char *path = argv[i];
        if (i + 1 < argc) { /* the script's own arguments, as sbatch passes them */
            s.argv = dup_argv(argv + i + 1, argc - i - 1);
            s.argc = (uint32_t)(argc - i - 1);
            if (!s.argv) {
                dr_jobspec_free(&s);
                return fail_msg("out of memory");
            }
        }
        char *buf = NULL;
        size_t len = 0;
        bool list_given = s.shard_list != NULL;
        if ((rc = read_script(path, &buf, &len, &err)) == DR_OK)
            rc = dr_jobspec_parse_script(&s, strcmp(path, "-") == 0 ? "stdin" : path, buf, len,
                                         &err);
        free(buf);
        if (rc == DR_OK && !list_given && s.shard_list) {
            /* "#DROVER --shard-list FILE" named a file, as on the command line */
            char *file = s.shard_list;
            s.shard_list = NULL;
            rc = shard_list_file(&s, file, &err);
            free(file);
        }
        if (rc != DR_OK) {
            dr_jobspec_free(&s);
            return cli_fail(&err);
        }
        for (uint32_t k = 0; k < s.nignored; k++)
            fprintf(stderr, "drover: note: ignoring '%s' (not supported)\n", s.ignored[k]);
        /* messages named the path as typed; the job is named after the file */
        const char *base = strrchr(path, '/');
        if (base && base[1]) {
            char *b = dr_strdup(base + 1);
            if (b) {
                free(s.script_name);
                s.script_name = b;
            }
        }
    }
    /* The job runs where it was submitted from, unless --chdir says (a
     * relative --chdir, like relative -o/-e paths, is taken from here;
     * output paths are relative to the job's directory, as in Slurm). */
    bool oom = command && !s.argv;
    if (!s.cwd)
        oom = oom || !(s.cwd = dr_strdup(cwd));
    else
        oom = oom || absolutise(&s.cwd, cwd) != DR_OK;
    if (oom || take_env(&s) != DR_OK || absolutise(&s.out_path, s.cwd) != DR_OK ||
        absolutise(&s.err_path, s.cwd) != DR_OK) {
        dr_jobspec_free(&s);
        return fail_msg("out of memory");
    }
    if (dr_jobspec_validate(&s, &err) != DR_OK) {
        dr_jobspec_free(&s);
        return cli_fail(&err);
    }
    /* what the spec asks for that drover does not honour, said before it runs */
    char notes[2048];
    if (dr_jobspec_unsupported(&s, notes, sizeof notes))
        for (char *ln = notes, *nl; *ln && (nl = strchr(ln, '\n')); ln = nl + 1)
            fprintf(stderr, "drover: note: %.*s\n", (int)(nl - ln), ln);
    bool test_only = s.test_only == 1;
    char *text = dr_jobspec_to_json(&s);
    dr_jobspec_free(&s);
    json_error_t jerr;
    json_t *body = text ? json_loads(text, 0, &jerr) : NULL;
    free(text);
    if (!body)
        return fail_msg("submit: cannot encode the job");

    cli_client_t c;
    if ((rc = open_client(&c, server)) != 0) {
        json_decref(body);
        return rc;
    }
    json_t *reply = NULL;
    rc = cli_client_json(&c, "POST", test_only ? "/v1/jobs?test_only=1" : "/v1/jobs", body, &reply,
                         &err);
    json_decref(body);
    cli_client_free(&c);
    if (rc != DR_OK) {
        json_decref(reply);
        return cli_fail(&err);
    }
    if (test_only) { /* sbatch --test-only: an estimate, no job */
        if (!json_is_true(json_object_get(reply, "test_only"))) {
            json_decref(reply);
            return fail_msg("submit: the controller did not answer as --test-only (too old?)");
        }
        if (as_json) {
            cli_print_json(reply);
        } else {
            char line[1024];
            cli_test_only_line(reply, "job", line, sizeof line);
            printf("%s\n", line);
        }
        json_decref(reply);
        return 0;
    }
    const json_t *id = json_object_get(reply, "id");
    if (!json_is_integer(id)) {
        json_decref(reply);
        return fail_msg("submit: the controller's reply has no job id");
    }
    if (as_json) {
        cli_print_json(reply);
    } else if (parsable) {
        printf("%lld\n", (long long)json_integer_value(id));
    } else {
        const json_t *tasks = json_object_get(reply, "array_tasks");
        if (json_is_integer(tasks))
            printf("Submitted array job %lld (%lld tasks)\n", (long long)json_integer_value(id),
                   (long long)json_integer_value(tasks));
        else
            printf("Submitted job %lld\n", (long long)json_integer_value(id));
    }
    json_decref(reply);
    return 0;
}

/* ------------------------------------------------------------------- queue */

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
                   (m = common_opt(argc, argv, &i, &server))) {
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
        return fail_msg("out of memory");
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
        return fail_msg("out of memory");

    cli_client_t c;
    int rc = open_client(&c, server);
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
        return fail_msg("out of memory");
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
        return fail_msg("out of memory");
    if (rc != DR_OK)
        return cli_fail(&err);
    if (truncated)
        fprintf(stderr, "drover: note: the first %llu jobs only (--limit 0 for all)\n",
                (unsigned long long)lim_v);
    return 0;
}

/* -------------------------------------------------------------------- show */

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
        } else if ((m = common_opt(argc, argv, &i, server)) != 0) {
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
    int rc = resolve_job(c, arg, &id, err);
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
    if ((rc = open_client(&c, server)) != 0)
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
    else if (print_fields(reply) != DR_OK || cli_print_service(reply) != DR_OK)
        rc = fail_msg("out of memory");
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
        else if ((m = common_opt(argc, argv, &i, &server)) != 0) {
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
    int rc = open_client(&c, server);
    if (rc != 0)
        return rc;
    dr_err_t err = {0};
    long long id = 0;
    if (job && resolve_job(&c, job, &id, &err) != DR_OK) {
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
    if ((rc = open_client(&c, server)) != 0)
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
        return fail_msg("out of memory");
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

/* ------------------------------------------------- one POST per job named */

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
    int rc = open_client(&c, server), status = 0;
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
        if ((rc = resolve_job(&c, argv[i], &id, &err)) == DR_OK) {
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
        if ((m = common_opt(argc, argv, &i, &server)) != 0) {
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
        if ((m = common_opt(argc, argv, &i, &server)) != 0) {
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
        if ((m = common_opt(argc, argv, &i, &server)) != 0) {
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
    int rc = open_client(&c, server), status = 0;
    if (rc != 0) {
        json_decref(body);
        return rc;
    }
    dr_err_t err = {0};
    long long id = 0;
    json_t *reply = NULL;
    if ((rc = resolve_job(&c, job, &id, &err)) == DR_OK) {
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

/* -------------------------------------------------------------------- wait */

typedef struct wait_job {
    const char *arg;
    long long id;
    json_t *last; /* the last JOB seen */
    int status;   /* exit status once ended, -1 before */
} wait_job_t;

/* Redraw the one-line progress on stderr (a terminal), cut to its width so
 * that \r returns to the start of the same line. */
static void progress(const char *line)
{
    struct winsize ws;
    int cols = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1 : 79;
    fprintf(stderr, "\r%.*s\033[K", cols, line);
    fflush(stderr);
}

static void wait_usage(FILE *f)
{
    fprintf(f, "usage: drover wait JOB... [--timeout DURATION] [--quiet] [--server URL|SOCKET]\n"
               "exit status: 0 if every job completed, else that of the first job (in the\n"
               "order given) that did not: its exit code, 128+N if killed by signal N,\n"
               "124 if it hit its time limit, 1 if it was cancelled or failed without a\n"
               "code; 125 if --timeout passed first.\n");
}

int cli_wait(int argc, char **argv)
{
    const char *server = NULL, *timeout = NULL;
    bool quiet = false;
    wait_job_t *jobs = calloc((size_t)argc, sizeof *jobs);
    size_t n = 0;
    if (!jobs)
        return fail_msg("out of memory");
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        int m;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            wait_usage(stdout);
            free(jobs);
            return 0;
        }
        if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)
            quiet = true;
        else if ((m = cli_opt_value(argc, argv, &i, "--timeout", &timeout)) ||
                 (m = common_opt(argc, argv, &i, &server)))
            rc = m < 0 ? 2 : 0;
        else if (a[0] == '-')
            rc = cli_usage_error("wait: unknown option '%s'", a);
        else
            jobs[n++] = (wait_job_t){.arg = a, .status = -1};
    }
    dr_time_t limit = 0;
    dr_err_t err = {0};
    if (rc == 0 && n == 0)
        rc = cli_usage_error("wait: which job? (drover wait JOB...)");
    if (rc == 0 && timeout && dr_duration_parse_err(timeout, &limit, &err) != 0)
        rc = cli_usage_error("wait: --timeout: %s", err.msg);
    cli_client_t c;
    if (rc == 0)
        rc = open_client(&c, server);
    if (rc != 0) {
        free(jobs);
        return rc;
    }
    for (size_t k = 0; k < n && rc == 0; k++)
        if (resolve_job(&c, jobs[k].arg, &jobs[k].id, &err) != DR_OK)
            rc = cli_fail(&err);

    bool tty = !quiet && isatty(STDERR_FILENO);
    double t0 = cli_now_s(), down_since = -1;
    int interval = CLI_POLL_MIN_MS, failed = 0;
    bool drawn = false;
    /* the event stream, opened before the first look at the jobs: each
     * event of one of them wakes the loop at once (polling only while the
     * controller has none, or is away) */
    long long *ids = calloc(n ? n : 1, sizeof *ids);
    cli_wait_stream_t ws = {0};
    if (!ids)
        rc = fail_msg("out of memory");
    for (size_t k = 0; ids && k < n; k++)
        ids[k] = jobs[k].id;
    bool no_stream = rc == 0 && cli_wait_stream_open(&c, ids, n, &ws) == -2;
    while (rc == 0) {
        size_t left = 0;
        const wait_job_t *shown = NULL;
        for (size_t k = 0; k < n && rc == 0; k++) {
            wait_job_t *w = &jobs[k];
            if (w->status >= 0)
                continue;
            char target[96];
            snprintf(target, sizeof target, "/v1/jobs/%lld", w->id);
            json_t *reply = NULL;
            int r = cli_client_json(&c, "GET", target, NULL, &reply, &err);
            if (r != DR_OK && (c.unreachable || c.last_status == 503)) {
                /* a controller restart: ride it out for a while */
                json_decref(reply);
                if (down_since < 0)
                    down_since = cli_now_s();
                if (cli_now_s() - down_since > CLI_RETRY_UNREACHABLE_S)
                    rc = failed = 1;
                left++;
                break;
            }
            if (r != DR_OK) {
                json_decref(reply);
                rc = failed = 1;
                break;
            }
            down_since = -1;
            json_decref(w->last);
            w->last = reply;
            w->status = cli_job_exit_status(reply);
            if (w->status < 0) {
                left++;
                if (!shown)
                    shown = w;
            }
        }
        if (rc != 0)
            break;
        if (tty && shown) {
            char line[512];
            cli_job_progress(shown->last, cli_wall_now(), line, sizeof line);
            if (left > 1) {
                size_t l = strlen(line);
                snprintf(line + l, sizeof line - l, " (+%zu more)", left - 1);
            }
            progress(line);
            drawn = true;
        } else if (tty && down_since >= 0) {
            progress("controller unreachable; retrying");
            drawn = true;
        }
        if (left == 0)
            break;
        if (limit > 0 && cli_now_s() - t0 >= dr_time_to_s(limit)) {
            if (drawn)
                fputs("\r\033[K", stderr);
            drawn = false;
            const wait_job_t *w = shown ? shown : &jobs[0];
            fprintf(stderr, "drover: wait: gave up after %s: job %s is still %s\n", timeout, w->arg,
                    w->last ? cli_json_str(w->last, "state", "?") : "unknown");
            rc = 125;
            break;
        }
        for (size_t k = 0; k < n; k++) /* ended jobs no longer wake the loop */
            ids[k] = jobs[k].status >= 0 ? 0 : jobs[k].id;
        if (!ws.open && !no_stream && down_since < 0) {
            int o = cli_wait_stream_open(&c, ids, n, &ws);
            no_stream = o == -2;
            if (o == 0)
                continue; /* back: look again, then sleep on the stream */
        }
        if (ws.open) {
            /* an event of one of the jobs, or a look every few seconds
             * anyway (each second on a terminal: its progress line) */
            int ms = tty ? 1000 : CLI_WAIT_RECHECK_MS;
            if (limit > 0) {
                double rest = dr_time_to_s(limit) - (cli_now_s() - t0);
                ms = rest * 1000 < ms ? (int)(rest * 1000) + 1 : ms;
            }
            cli_wait_stream_next(&ws, ids, n, ms); /* a broken stream closes: polling */
            continue;
        }
        cli_sleep_ms(interval);
        interval = interval * 3 / 2 > CLI_POLL_MAX_MS ? CLI_POLL_MAX_MS : interval * 3 / 2;
    }
    cli_wait_stream_close(&ws);
    free(ids);
    if (drawn)
        fputs("\r\033[K", stderr); /* a message or the final states replace the progress line */
    if (failed)
        cli_fail(&err);
    for (size_t k = 0; tty && k < n && rc == 0; k++) {
        char line[512];
        if (jobs[k].last)
            fprintf(stderr, "%s\n",
                    cli_job_progress(jobs[k].last, cli_wall_now(), line, sizeof line));
    }
    for (size_t k = 0; k < n && rc == 0; k++)
        if (jobs[k].status > 0) {
            rc = jobs[k].status;
            break;
        }
    for (size_t k = 0; k < n; k++)
        json_decref(jobs[k].last);
    free(jobs);
    cli_client_free(&c);
    return rc;
}

/* -------------------------------------------------------------------- logs */

/* The job's state, asked directly (when the output reply did not say). */
static const char *job_state(cli_client_t *c, long long id, char *buf, size_t n, dr_err_t *err)
{
    char target[96];
    snprintf(target, sizeof target, "/v1/jobs/%lld", id);
    json_t *reply = NULL;
    if (cli_client_json(c, "GET", target, NULL, &reply, err) != DR_OK) {
        json_decref(reply);
        return NULL;
    }
    snprintf(buf, n, "%s", cli_json_str(reply, "state", "?"));
    json_decref(reply);
    return buf;
}

int cli_logs(int argc, char **argv)
{
    const char *job = NULL, *server = NULL;
    bool follow = false, err_stream = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: drover logs JOB [--stderr] [-f|--follow] [--server URL|SOCKET]\n");
            return 0;
        }
        if (strcmp(a, "-f") == 0 || strcmp(a, "--follow") == 0)
            follow = true;
        else if (strcmp(a, "--stderr") == 0)
            err_stream = true;
        else if ((m = common_opt(argc, argv, &i, &server)) != 0) {
            if (m < 0)
                return 2;
        } else if (a[0] == '-')
            return cli_usage_error("logs: unknown option '%s'", a);
        else if (job)
            return cli_usage_error("logs: one job at a time ('%s', '%s')", job, a);
        else
            job = a;
    }
    if (!job)
        return cli_usage_error("logs: which job? (drover logs JOB)");
    cli_client_t c;
    int rc = open_client(&c, server);
    if (rc != 0)
        return rc;
    dr_err_t err = {0};
    long long id = 0;
    if (resolve_job(&c, job, &id, &err) != DR_OK) {
        cli_client_free(&c);
        return cli_fail(&err);
    }
    unsigned long long offset = 0;
    int interval = CLI_POLL_MIN_MS;
    double down_since = -1;
    for (;;) {
        char target[160];
        snprintf(target, sizeof target, "/v1/jobs/%lld/output?stream=%s&offset=%llu&limit=%u", id,
                 err_stream ? "stderr" : "stdout", offset, CLI_LOG_CHUNK);
        cli_http_resp_t r;
        rc = cli_client_request(&c, "GET", target, NULL, NULL, 0, &r, &err);
        if (rc != DR_OK) {
            if (follow && c.unreachable) {
                if (down_since < 0)
                    down_since = cli_now_s();
                if (cli_now_s() - down_since <= CLI_RETRY_UNREACHABLE_S) {
                    cli_sleep_ms(CLI_POLL_MAX_MS);
                    continue;
                }
            }
            rc = cli_fail(&err);
            break;
        }
        if (follow && r.status == 503) { /* the controller is starting: as if unreachable */
            cli_http_resp_free(&r);
            if (down_since < 0)
                down_since = cli_now_s();
            if (cli_now_s() - down_since <= CLI_RETRY_UNREACHABLE_S) {
                cli_sleep_ms(CLI_POLL_MAX_MS);
                continue;
            }
            rc = fail_msg("logs: the controller stayed unavailable (503)");
            break;
        }
        down_since = -1;
        char state[32] = "";
        const char *hs = cli_http_resp_header(&r, "X-Drover-Job-State");
        if (hs)
            snprintf(state, sizeof state, "%s", hs);
        if (r.status == 404 && follow) {
            /* no output yet: fine while the job has not ended */
            cli_http_resp_free(&r);
            if (!hs && !job_state(&c, id, state, sizeof state, &err)) {
                rc = cli_fail(&err);
                break;
            }
            if (cli_state_terminal(state)) {
                rc = 0;
                break;
            }
            cli_sleep_ms(interval);
            interval = interval * 3 / 2 > CLI_POLL_MAX_MS ? CLI_POLL_MAX_MS : interval * 3 / 2;
            continue;
        }
        if (r.status != 200) {
            json_error_t jerr;
            json_t *j = json_loadb(r.body, r.body_len, 0, &jerr);
            const char *msg = cli_json_str(j, "error", NULL);
            if (msg)
                fprintf(stderr, "drover: %s\n", msg);
            else
                fprintf(stderr, "drover: HTTP %d %s from %s\n", r.status, r.reason, c.ep.display);
            json_decref(j);
            cli_http_resp_free(&r);
            rc = 1;
            break;
        }
        if (r.body_len && fwrite(r.body, 1, r.body_len, stdout) != r.body_len) {
            cli_http_resp_free(&r);
            rc = fail_msg("logs: cannot write the output");
            break;
        }
        fflush(stdout);
        const char *next = cli_http_resp_header(&r, "X-Drover-Offset-Next");
        uint64_t nx;
        if (next && dr_parse_u64(next, &nx) == 0 && nx >= offset)
            offset = nx;
        else
            offset += r.body_len;
        size_t got = r.body_len;
        cli_http_resp_free(&r);
        if (got > 0) { /* more may be there: read until a reply is empty */
            interval = CLI_POLL_MIN_MS;
            continue;
        }
        if (!follow) {
            rc = 0;
            break;
        }
        if (!hs && !job_state(&c, id, state, sizeof state, &err)) {
            rc = cli_fail(&err);
            break;
        }
        if (cli_state_terminal(state)) {
            rc = 0;
            break;
        }
        cli_sleep_ms(interval);
        interval = interval * 3 / 2 > CLI_POLL_MAX_MS ? CLI_POLL_MAX_MS : interval * 3 / 2;
    }
    cli_client_free(&c);
    return rc;
}
