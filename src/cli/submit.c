/* submit.c - `drover submit`: a job from the command line and a batch
 * script's #DROVER/#SBATCH lines, POSTed to /v1/jobs.  Its options come
 * from the job-field vocabulary (include/drover/jobspec.h), so a field
 * added there is an option here with no change to this file; the spec is
 * encoded once, as the API's JSON (dr_jobspec_to_json). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/jobs.h"
#include "cli/speeds.h"
#include "drover/jobspec.h"
#include "drover/util.h"

extern char **environ;

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
        int m = cli_server_opt(argc, argv, &i, &server);
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
        return cli_fail_msg("submit: cannot tell the current directory");
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
                return cli_fail_msg("out of memory");
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
        return cli_fail_msg("out of memory");
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
    char *body = dr_jobspec_to_json(&s); /* the request's body, sent as it is */
    dr_jobspec_free(&s);
    if (!body)
        return cli_fail_msg("submit: cannot encode the job");

    cli_client_t c;
    if ((rc = cli_job_client_open(&c, server)) != 0) {
        free(body);
        return rc;
    }
    json_t *reply = NULL;
    rc = cli_client_json_text(&c, "POST", test_only ? "/v1/jobs?test_only=1" : "/v1/jobs", body,
                              &reply, &err);
    free(body);
    cli_client_free(&c);
    if (rc != DR_OK) {
        json_decref(reply);
        return cli_fail(&err);
    }
    if (test_only) { /* sbatch --test-only: an estimate, no job */
        if (!json_is_true(json_object_get(reply, "test_only"))) {
            json_decref(reply);
            return cli_fail_msg("submit: the controller did not answer as --test-only (too old?)");
        }
        if (as_json) {
            cli_print_json(reply);
        } else {
            char line[1024];
            cli_test_only_line(reply, "job", line, sizeof line);
            printf("%s\n", line);
            cli_job_speeds_print(stdout, reply); /* every type: time, cost, deadline */
        }
        json_decref(reply);
        return 0;
    }
    const json_t *id = json_object_get(reply, "id");
    if (!json_is_integer(id)) {
        json_decref(reply);
        return cli_fail_msg("submit: the controller's reply has no job id");
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
