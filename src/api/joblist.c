/* joblist.c - the compact job listing (GET /v1/jobs?format=tsv): the rules
 * for a row's values (TIME, GPU type, an array's tasks summary), a JOB
 * object as a row, the writing of rows and their reading back.
 *
 * The writer escapes what would break a line or a column (tab, newline, CR)
 * and the escape character itself; the reader undoes it in place, so a
 * listing of 100,000 jobs is read without a copy or an allocation. */
#include "drover/joblist.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const dr_joblist_cols[DR_JL_NCOLS] = {"id",   "name",     "user",     "kind", "state",
                                                  "gpus", "gpu_type", "nodelist", "time", "reason"};

#define MAX_COLS 64 /* columns a header may have (ours and later additions) */

double dr_joblist_time(const char *state, double submit, double start, double end, double elapsed,
                       double now)
{
    if (!state)
        state = "";
    if (isnan(start) && (strcmp(state, "pending") == 0 || strcmp(state, "requeued") == 0))
        return isnan(submit) ? NAN : now - submit;
    double el = elapsed;
    if (isnan(el) && !isnan(start))
        el = (isnan(end) ? now : end) - start;
    return isnan(el) ? 0 : el;
}

const char *dr_joblist_type(const char *got, const char *requested)
{
    return got && *got ? got : requested ? requested : "any";
}

void dr_joblist_tasks_summary(char *buf, size_t n, long long done, long long total,
                              long long running)
{
    snprintf(buf, n, "%lld/%lld done, %lld running", done, total, running);
}

/* --- a JOB object as a row --- */

static const char *str(const json_t *o, const char *key, const char *dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static long long count(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

void dr_joblist_from_json(const json_t *job, double now, dr_joblist_row_t *r)
{
    const json_t *parent = json_object_get(job, "array_parent");
    const json_t *index = json_object_get(job, "array_index");
    if (json_is_integer(parent) && json_is_integer(index))
        snprintf(r->id, sizeof r->id, "%lld_%lld", (long long)json_integer_value(parent),
                 (long long)json_integer_value(index));
    else
        snprintf(r->id, sizeof r->id, "%lld",
                 (long long)json_integer_value(json_object_get(job, "id")));
    r->name = str(job, "name", "");
    r->user = str(job, "user", "");
    r->kind = str(job, "kind", "");
    r->state = str(job, "state", "?");
    long long g = count(job, "gpus");
    r->gpus = g > 0 ? (uint64_t)g : 0;
    r->gpu_type =
        dr_joblist_type(str(job, "gpu_type", NULL), str(job, "gpu_types_requested", "any"));
    r->nodelist = str(job, "nodelist", "");
    r->time_s =
        dr_joblist_time(str(job, "state", ""), num(job, "submit_time"), num(job, "start_time"),
                        num(job, "end_time"), num(job, "elapsed"), now);
    r->reason = str(job, "reason", "");
    r->summary[0] = '\0';
    const json_t *tasks = json_object_get(job, "tasks");
    if (!*r->reason && json_is_object(tasks)) {
        dr_joblist_tasks_summary(r->summary, sizeof r->summary,
                                 count(tasks, "completed") + count(tasks, "failed") +
                                     count(tasks, "cancelled"),
                                 count(tasks, "total"), count(tasks, "running"));
        r->reason = r->summary;
    }
}

/* --- writing --- */

static size_t slen(const char *s)
{
    return s ? strlen(s) : 0;
}

size_t dr_joblist_row_max(const dr_joblist_row_t *r)
{
    /* every string byte may double; two numbers of at most 20 digits; ten
     * separators and the newline */
    return 2 * (strlen(r->id) + slen(r->name) + slen(r->user) + slen(r->kind) + slen(r->state) +
                slen(r->gpu_type) + slen(r->nodelist) + slen(r->reason)) +
           2 * 20 + DR_JL_NCOLS;
}

char *dr_tsv_escape(char *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        switch (c) {
        case '\t': *out++ = '\\', *out++ = 't'; break;
        case '\n': *out++ = '\\', *out++ = 'n'; break;
        case '\r': *out++ = '\\', *out++ = 'r'; break;
        case '\\': *out++ = '\\', *out++ = '\\'; break;
        default: *out++ = c;
        }
    }
    return out;
}

static char *put_str(char *o, const char *s, char sep)
{
    if (s)
        o = dr_tsv_escape(o, s, strlen(s));
    *o++ = sep;
    return o;
}

/* A number's decimal digits, as snprintf("%llu") writes them. */
static char *put_u64(char *o, uint64_t v, char sep)
{
    char tmp[20];
    size_t k = 0;
    do {
        tmp[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k)
        *o++ = tmp[--k];
    *o++ = sep;
    return o;
}

size_t dr_joblist_row_write(const dr_joblist_row_t *r, char *out)
{
    char *o = out;
    o = put_str(o, r->id, '\t');
    o = put_str(o, r->name, '\t');
    o = put_str(o, r->user, '\t');
    o = put_str(o, r->kind, '\t');
    o = put_str(o, r->state, '\t');
    o = put_u64(o, r->gpus, '\t');
    o = put_str(o, r->gpu_type, '\t');
    o = put_str(o, r->nodelist, '\t');
    double t = r->time_s;
    if (isnan(t)) {
        *o++ = '-';
        *o++ = '\t';
    } else {
        /* as cli_fmt_duration shows it: whole seconds, 0 for negative */
        o = put_u64(o, t > 0 ? (uint64_t)(t > 9.2e15 ? 9.2e15 : t) : 0, '\t');
    }
    o = put_str(o, r->reason, '\n');
    return (size_t)(o - out);
}

/* --- reading --- */

/* Split the line [p, nl) at its tabs and unescape it in place; the fields
 * (at most max kept) and their count, or -1 with *why. */
static long split(char *p, char *nl, char **f, size_t max, const char **why)
{
    size_t n = 1;
    char *o = p;
    f[0] = o;
    for (char *s = p; s < nl; s++) {
        char ch = *s;
        if (ch == '\t') {
            *o++ = '\0';
            if (n < max)
                f[n] = o;
            n++;
            continue;
        }
        if (ch == '\\') {
            char e = s + 1 < nl ? *++s : '\0';
            ch = e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == '\\' ? '\\' : '\0';
            if (!ch) {
                *why = "a '\\' that is not one of \\t \\n \\r \\\\";
                return -1;
            }
        } else if (ch == '\0') {
            *why = "a NUL byte";
            return -1;
        }
        *o++ = ch;
    }
    *o = '\0';
    return (long)n;
}

/* 1 to 20 decimal digits, then the end (or stop). */
static bool digits_to(const char *s, char stop)
{
    size_t n = strspn(s, "0123456789");
    return n > 0 && n <= 20 && s[n] == stop;
}

static bool digits(const char *s)
{
    return digits_to(s, '\0');
}

/* "42", or "42_3" for an array's task */
static bool job_id(const char *s)
{
    return digits(s) || (digits_to(s, '_') && digits(s + strspn(s, "0123456789") + 1));
}

int dr_joblist_parse(char *buf, size_t len, int (*row)(void *ud, char *const *f), void *ud,
                     bool *truncated, dr_err_t *err)
{
    char *fields[MAX_COLS], *mine[DR_JL_NCOLS];
    size_t map[DR_JL_NCOLS], ncols = 0;
    char *p = buf, *end = buf + len;
    *truncated = false;
    if (len == 0)
        return dr_err_set(err, DR_EINVAL, "line 1: no header (an empty listing)");
    for (size_t line = 1; p < end; line++) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return dr_err_set(err, DR_EINVAL, "line %zu: does not end in a newline (cut short?)",
                              line);
        if (line > 1 && *p == '#') {
            if ((size_t)(nl - p) + 1 == sizeof DR_JOBLIST_TRUNCATED - 1 &&
                memcmp(p, DR_JOBLIST_TRUNCATED, sizeof DR_JOBLIST_TRUNCATED - 1) == 0)
                *truncated = true;
            p = nl + 1;
            continue;
        }
        const char *why = NULL;
        long n = split(p, nl, fields, MAX_COLS, &why);
        p = nl + 1;
        if (n < 0)
            return dr_err_set(err, DR_EINVAL, "line %zu: %s", line, why);
        if (line == 1) {
            if (n > MAX_COLS)
                return dr_err_set(err, DR_EINVAL, "line 1: more than %d columns", MAX_COLS);
            ncols = (size_t)n;
            for (size_t k = 0; k < DR_JL_NCOLS; k++) {
                size_t i = 0;
                while (i < ncols && strcmp(fields[i], dr_joblist_cols[k]) != 0)
                    i++;
                if (i == ncols)
                    return dr_err_set(err, DR_EINVAL, "line 1: the header has no column '%s'",
                                      dr_joblist_cols[k]);
                map[k] = i;
            }
            continue;
        }
        if ((size_t)n != ncols)
            return dr_err_set(err, DR_EINVAL, "line %zu: %ld fields, the header has %zu", line, n,
                              ncols);
        for (size_t k = 0; k < DR_JL_NCOLS; k++)
            mine[k] = fields[map[k]];
        if (!job_id(mine[DR_JL_ID]))
            return dr_err_set(err, DR_EINVAL, "line %zu: id '%.32s' is not N or N_I", line,
                              mine[DR_JL_ID]);
        if (!digits(mine[DR_JL_GPUS]))
            return dr_err_set(err, DR_EINVAL, "line %zu: gpus '%.32s' is not a whole number", line,
                              mine[DR_JL_GPUS]);
        if (strcmp(mine[DR_JL_TIME], "-") != 0 && !digits(mine[DR_JL_TIME]))
            return dr_err_set(err, DR_EINVAL, "line %zu: time '%.32s' is not whole seconds or '-'",
                              line, mine[DR_JL_TIME]);
        int rc = row(ud, mine);
        if (rc != 0)
            return rc;
    }
    return DR_OK;
}
