/* jobspec_script.c - the directives at the top of a batch script.
 *
 * As sbatch reads them: `#SBATCH` (or drover's own `#DROVER`) at the start
 * of a line, then options as on a command line ("--time=1:00:00",
 * "--nodes 2", "-N2", "-t 60"; double or single quotes group, '\' escapes,
 * an unquoted '#' starts a comment), several to a line; the first line that
 * is neither blank nor a comment ends them.  The directives of each prefix
 * are read into a spec of their own, then merged field by field: the
 * command line's fields (already in s) first, then #DROVER's, then
 * #SBATCH's, so that the script fills only what the user left open. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/jobspec_priv.h"
#include "drover/util.h"

#define MAX_TOKENS 256

/* Slurm options that take no value, so that the one after them is not
 * taken for theirs when they are listed as ignored. */
static const char *const slurm_flags[] = {"exclusive",
                                          "requeue",
                                          "no-requeue",
                                          "hold",
                                          "overcommit",
                                          "quiet",
                                          "verbose",
                                          "contiguous",
                                          "oversubscribe",
                                          "wait",
                                          "parsable",
                                          "use-min-nodes",
                                          "spread-job",
                                          "no-kill",
                                          "ignore-pbs",
                                          "get-user-env",
                                          "reboot",
                                          "H",
                                          "O",
                                          "Q",
                                          "s",
                                          "v",
                                          "W",
                                          "k",
                                          NULL};

/* Slurm options spelt like a drover one that mean something else: Slurm's
 * --deadline is a date, drover's a time after submission. */
static const char *const slurm_different[] = {"deadline", NULL};

static bool in_list(const char *const *l, const char *s, size_t n)
{
    for (; *l; l++)
        if (strlen(*l) == n && strncmp(*l, s, n) == 0)
            return true;
    return false;
}

/* Note "#SBATCH OPT [VALUE]" as ignored (whole: no cut inside a character). */
static int push_ignored(char ***v, uint32_t *n, const char *magic, const char *a, const char *b)
{
    size_t len = strlen(magic) + strlen(a) + (b ? strlen(b) + 1 : 0) + 2;
    char *text = malloc(len);
    if (!text)
        return DR_ENOMEM;
    snprintf(text, len, "%s %s%s%s", magic, a, b ? " " : "", b ? b : "");
    int rc = jf_vec_push(v, n, text);
    free(text);
    return rc;
}

typedef struct line_toks {
    char *buf; /* the unquoted tokens, NUL-separated */
    char *tok[MAX_TOKENS];
    size_t n;
} line_toks_t;

/* Split a directive's text [p, e) into tokens as sbatch does. */
static int tokenize(const char *p, const char *e, line_toks_t *t, const char **why)
{
    t->n = 0;
    t->buf = malloc((size_t)(e - p) + 1);
    if (!t->buf)
        return DR_ENOMEM;
    char *o = t->buf;
    for (;;) {
        while (p < e && isspace((unsigned char)*p))
            p++;
        if (p == e || *p == '#')
            return DR_OK;
        if (t->n == MAX_TOKENS) {
            *why = "too many words on one line";
            return DR_EINVAL;
        }
        t->tok[t->n++] = o;
        char quote = 0;
        for (; p < e && (quote || !isspace((unsigned char)*p)); p++) {
            if (quote && *p == quote) {
                quote = 0;
            } else if (!quote && (*p == '"' || *p == '\'')) {
                quote = *p;
            } else if (*p == '\\' && quote != '\'' && p + 1 < e) {
                *o++ = *++p;
            } else {
                *o++ = *p;
            }
        }
        if (quote) {
            *why = "unterminated quote";
            return DR_EINVAL;
        }
        *o++ = '\0';
    }
}

/* Read the options of one directive line into d (#DROVER: drover = true)
 * or, for options drover does not act on, into ignored. */
static int directive(dr_jobspec_t *d, bool drover, const char *name, size_t lineno, const char *p,
                     const char *e, char ***ignored, uint32_t *nignored, dr_err_t *err)
{
    const char *magic = drover ? "#DROVER" : "#SBATCH";
    line_toks_t t;
    const char *why = NULL;
    int rc = tokenize(p, e, &t, &why);
    if (rc != DR_OK) {
        free(t.buf);
        if (rc == DR_ENOMEM)
            return dr_err_set(err, rc, "%s: out of memory", name);
        return dr_err_set(err, rc, "%s:%zu: %s", name, lineno, why);
    }
    for (size_t i = 0; i < t.n && rc == DR_OK; i++) {
        char *tok = t.tok[i], *value = NULL;
        char opt[128];
        size_t olen;
        if (tok[0] == '-' && tok[1] == '-') {
            char *eq = strchr(tok, '=');
            olen = eq ? (size_t)(eq - tok) : strlen(tok);
            if (eq)
                value = eq + 1;
        } else if (tok[0] == '-' && tok[1]) {
            olen = 2;
            if (tok[2])
                value = tok + 2;
        } else { /* not an option: sbatch would take it for the script's argument */
            if (drover) {
                rc = dr_err_set(err, DR_EINVAL, "%s:%zu: '%.64s' is not an option", name, lineno,
                                tok);
                break;
            }
            if (push_ignored(ignored, nignored, magic, tok, NULL) != 0)
                rc = dr_err_set(err, DR_ENOMEM, "%s: out of memory", name);
            continue;
        }
        snprintf(opt, sizeof opt, "%.*s", (int)(olen < sizeof opt ? olen : sizeof opt - 1), tok);
        uint8_t how = JF_HOW_PLAIN;
        const jf_def_t *f = olen < sizeof opt ? jf_lookup(opt, &how) : NULL;
        bool gres = how == JF_HOW_GRES;
        const char *bare = opt + (opt[1] == '-' ? 2 : 1);
        if (f && !drover && !f->pub.sbatch && olen > 2 &&
            in_list(slurm_different, bare, strlen(bare)))
            f = NULL;
        if (!f) {
            if (drover) {
                rc =
                    dr_err_set(err, DR_EINVAL, "%s:%zu: unknown option '%.64s'", name, lineno, opt);
                break;
            }
            /* its value, if it has one: the next word unless that is an option */
            bool flag = in_list(slurm_flags, bare, strlen(bare));
            const char *arg = NULL;
            if (!value && !flag && i + 1 < t.n && t.tok[i + 1][0] != '-')
                arg = t.tok[++i];
            if (push_ignored(ignored, nignored, magic, tok, arg) != 0)
                rc = dr_err_set(err, DR_ENOMEM, "%s: out of memory", name);
            continue;
        }
        bool attached = value != NULL;
        if (!value && !f->pub.takes_value) { /* a flag: "--exclusive" */
            value = "1";
        } else if (!value) {
            if (i + 1 == t.n) {
                rc = dr_err_set(err, DR_EINVAL, "%s:%zu: %s: %s needs a value", name, lineno,
                                f->pub.name, opt);
                break;
            }
            value = t.tok[++i];
        }
        if (gres && !drover && strncasecmp(value, "gpu", 3) != 0) { /* not a GPU: a NIC, ... */
            if (push_ignored(ignored, nignored, magic, tok, attached ? NULL : value) != 0)
                rc = dr_err_set(err, DR_ENOMEM, "%s: out of memory", name);
            continue;
        }
        if ((rc = jf_set(d, f, how, value, err)) != DR_OK)
            dr_err_prefix(err, "%s:%zu: ", name, lineno);
    }
    free(t.buf);
    return rc;
}

/* Fields given together: a script's GPU count does not join the command
 * line's other GPU count (--gpus with --gpus-per-node would be an error). */
static bool group_given(const dr_jobspec_t *s, int id, bool bits_only)
{
    int other = id == DR_JF_GPUS            ? DR_JF_GPUS_PER_NODE
                : id == DR_JF_GPUS_PER_NODE ? DR_JF_GPUS
                                            : -1;
    if (bits_only)
        return (s->set >> id & 1) || (other >= 0 && (s->set >> other & 1));
    return jf_given(s, id) || (other >= 0 && jf_given(s, other));
}

int dr_jobspec_parse_script(dr_jobspec_t *s, const char *name, const char *buf, size_t len,
                            dr_err_t *err)
{
    if (!name)
        name = "script";
    if (len > DR_JOBSPEC_MAX_SCRIPT)
        return dr_err_set(err, DR_ELIMIT, "%s: larger than %u bytes", name, DR_JOBSPEC_MAX_SCRIPT);
    if (memchr(buf, '\0', len))
        return dr_err_set(err, DR_EINVAL, "%s: contains a NUL byte", name);
    size_t nlen = strlen(name);
    if (nlen > JF_MAX_PATH || !jf_utf8_ok(name, nlen)) /* it goes into the JSON */
        return dr_err_set(err, DR_EINVAL, "script name: longer than %u bytes or not UTF-8",
                          JF_MAX_PATH);
    dr_jobspec_t dv, sb; /* what #DROVER and #SBATCH say */
    dr_jobspec_init(&dv);
    dr_jobspec_init(&sb);
    char **ignored = NULL;
    uint32_t nignored = 0;
    int rc = DR_OK;
    bool directives = true;
    size_t lineno = 0;
    for (const char *p = buf, *end = buf + len; p < end && rc == DR_OK;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        lineno++;
        if (!jf_utf8_ok(p, (size_t)(e - p))) {
            rc = dr_err_set(err, DR_EINVAL, "%s:%zu: not valid UTF-8", name, lineno);
            break;
        }
        const char *le = e > p && e[-1] == '\r' ? e - 1 : e;
        if (directives) {
            bool dro = le - p >= 7 && strncmp(p, "#DROVER", 7) == 0;
            bool sba = le - p >= 7 && strncmp(p, "#SBATCH", 7) == 0;
            if ((dro || sba) && (le - p == 7 || isspace((unsigned char)p[7]))) {
                rc = directive(dro ? &dv : &sb, dro, name, lineno, p + 7, le, &ignored, &nignored,
                               err);
            } else {
                const char *q = p;
                while (q < le && isspace((unsigned char)*q))
                    q++;
                directives = q == le || *q == '#'; /* blank or a comment: go on */
            }
        }
        p = nl ? nl + 1 : end;
    }
    char *script = rc == DR_OK ? dr_strndup(buf, len) : NULL;
    char *sname = rc == DR_OK ? dr_strdup(name) : NULL;
    if (rc == DR_OK && (!script || !sname))
        rc = dr_err_set(err, DR_ENOMEM, "%s: out of memory", name);
    if (rc == DR_OK && (uint64_t)nignored + s->nignored > DR_JOBSPEC_MAX_ARGS)
        rc = dr_err_set(err, DR_ELIMIT, "%s: more than %u directives drover does not act on", name,
                        DR_JOBSPEC_MAX_ARGS);
    for (uint32_t i = 0; rc == DR_OK && i < nignored; i++)
        if (jf_vec_push(&s->ignored, &s->nignored, ignored[i]) != 0)
            rc = dr_err_set(err, DR_ENOMEM, "%s: out of memory", name);
    if (rc == DR_OK) {
        for (int id = 0; id < DR_JF_N; id++) {
            if (group_given(s, id, false))
                continue; /* the command line said */
            dr_jobspec_t *from = group_given(&dv, id, true) ? &dv : &sb;
            if (from->set >> id & 1)
                jf_move(s, from, id);
        }
        free(s->script);
        free(s->script_name);
        s->script = script;
        s->script_name = sname;
    } else {
        free(script);
        free(sname);
    }
    jf_vec_free(&ignored, &nignored);
    dr_jobspec_free(&dv);
    dr_jobspec_free(&sb);
    return rc;
}
