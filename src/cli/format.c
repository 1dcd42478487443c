/* format.c - durations, times, memory sizes, shell-quoted commands and
 * aligned tables for the live-cluster verbs, and the reading of JOB objects
 * they share (terminal states, wait's exit status, progress lines). */
#include "cli/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drover/joblist.h"
#include "drover/time.h"
#include "drover/util.h"

char *cli_fmt_duration(double secs, char *buf, size_t n)
{
    return dr_duration_format(secs, DR_DURATION_CLOCK, buf, n);
}

char *cli_fmt_age(double secs, char *buf, size_t n)
{
    if (isnan(secs)) {
        snprintf(buf, n, "-");
        return buf;
    }
    if (secs < 0)
        secs = 0; /* clocks a little apart */
    if (secs < 120)
        snprintf(buf, n, "%.0fs", floor(secs));
    else if (secs < 2 * 3600)
        snprintf(buf, n, "%.0fm", floor(secs / 60));
    else if (secs < 2 * 86400)
        snprintf(buf, n, "%.0fh", floor(secs / 3600));
    else
        snprintf(buf, n, "%.0fd", secs > 9e15 ? 9e15 / 86400 : floor(secs / 86400));
    return buf;
}

char *cli_fmt_time(double unix_s, char *buf, size_t n)
{
    struct tm tm;
    /* NaN or beyond year 9999 either way: nothing to show (and no cast of
     * an unrepresentable value) */
    if (!(unix_s > -6e10 && unix_s < 2.5e11)) {
        snprintf(buf, n, "-");
        return buf;
    }
    time_t t = (time_t)floor(unix_s);
    if (!localtime_r(&t, &tm) || strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(buf, n, "-");
    return buf;
}

char *cli_fmt_mem_mb(uint64_t mb, char *buf, size_t n)
{
    static const char units[] = "GTP";
    if (mb < 1024) {
        snprintf(buf, n, "%lluM", (unsigned long long)mb);
        return buf;
    }
    double v = (double)mb / 1024;
    int u = 0;
    while (v >= 1024 && u < 2) {
        v /= 1024;
        u++;
    }
    if (v == floor(v))
        snprintf(buf, n, "%.0f%c", v, units[u]);
    else
        snprintf(buf, n, "%.1f%c", v, units[u]);
    return buf;
}

static bool shell_safe(const char *w)
{
    if (!*w)
        return false;
    for (const char *p = w; *p; p++) {
        unsigned char c = (unsigned char)*p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr("_@%+=:,./-", c) != NULL;
        if (!ok)
            return false;
    }
    return true;
}

char *cli_fmt_argv(const char *const *argv, size_t argc)
{
    size_t len = 1;
    for (size_t i = 0; i < argc; i++)
        len += 4 * strlen(argv[i]) + 3; /* worst case: every char a quote ('\'') */
    char *out = malloc(len), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < argc; i++) {
        if (i)
            *o++ = ' ';
        const char *w = argv[i];
        if (shell_safe(w)) {
            size_t k = strlen(w);
            memcpy(o, w, k);
            o += k;
            continue;
        }
        *o++ = '\'';
        for (; *w; w++) {
            if (*w == '\'') {
                memcpy(o, "'\\''", 4);
                o += 4;
            } else {
                *o++ = *w;
            }
        }
        *o++ = '\'';
    }
    *o = '\0';
    return out;
}

/* --- tables --- */

int cli_table_init(cli_table_t *t, size_t ncols, const char *const *header)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->right = calloc(ncols ? ncols : 1, sizeof *t->right);
    t->width = calloc(ncols ? ncols : 1, sizeof *t->width);
    if (!t->right || !t->width) {
        cli_table_free(t);
        return DR_ENOMEM;
    }
    return cli_table_add(t, header);
}

void cli_table_right(cli_table_t *t, size_t col)
{
    if (col < t->ncols)
        t->right[col] = true;
}

/* Characters, not bytes: UTF-8 continuation bytes do not count. */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

/* s into out with control characters (C0, DEL, and C1 in UTF-8) as '?'
 * (out has room for strlen(s) + 1); the length written. */
static size_t clean_cell(const char *s, char *out)
{
    size_t o = 0;
    for (size_t i = 0; s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == 0xc2 && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9f) {
            out[o++] = '?';
            i++;
        } else {
            out[o++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
        }
    }
    out[o] = '\0';
    return o;
}

int cli_table_add(cli_table_t *t, const char *const *row)
{
    size_t need = (t->nrows + 1) * t->ncols, bytes = 0;
    if (need > t->cap && dr_grow((void **)&t->cells, &t->cap, need, sizeof *t->cells) != 0)
        return DR_ENOMEM;
    for (size_t i = 0; i < t->ncols; i++)
        bytes += (row[i] ? strlen(row[i]) : 0) + 1;
    if (dr_grow((void **)&t->text, &t->text_cap, t->text_len + bytes, 1) != 0)
        return DR_ENOMEM;
    size_t *r = t->cells + t->nrows * t->ncols;
    for (size_t i = 0; i < t->ncols; i++) {
        char *cell = t->text + t->text_len;
        r[i] = t->text_len;
        t->text_len += clean_cell(row[i] ? row[i] : "", cell) + 1;
        size_t w = text_width(cell);
        if (w > t->width[i])
            t->width[i] = w;
    }
    t->nrows++;
    return DR_OK;
}

char *cli_table_render_len(const cli_table_t *t, size_t *len)
{
    /* every row is at most the sum of the widths (in characters), their
     * separators and the bytes beyond one per character in its cells */
    size_t line = 1;
    for (size_t c = 0; c < t->ncols; c++)
        line += t->width[c] + 2;
    size_t total = 1 + t->nrows * line + t->text_len;
    char *out = malloc(total), *o = out;
    if (!out)
        return NULL;
    for (size_t r = 0; r < t->nrows; r++) {
        char *start = o;
        for (size_t c = 0; c < t->ncols; c++) {
            const char *cell = t->text + t->cells[r * t->ncols + c];
            size_t len_c = strlen(cell), pad = t->width[c] - text_width(cell);
            if (c) {
                memcpy(o, "  ", 2);
                o += 2;
            }
            if (t->right[c]) {
                memset(o, ' ', pad);
                o += pad;
            }
            memcpy(o, cell, len_c);
            o += len_c;
            if (!t->right[c] && c + 1 < t->ncols) {
                memset(o, ' ', pad);
                o += pad;
            }
        }
        while (o > start && o[-1] == ' ')
            o--;
        *o++ = '\n';
    }
    *o = '\0';
    if (len)
        *len = (size_t)(o - out);
    return out;
}

char *cli_table_render(const cli_table_t *t)
{
    return cli_table_render_len(t, NULL);
}

int cli_table_print(const cli_table_t *t, FILE *f)
{
    size_t len;
    char *out = cli_table_render_len(t, &len);
    if (!out)
        return DR_ENOMEM;
    int rc = fwrite(out, 1, len, f) == len ? DR_OK : DR_EIO;
    free(out);
    return rc;
}

void cli_table_free(cli_table_t *t)
{
    free(t->cells);
    free(t->text);
    free(t->width);
    free(t->right);
    memset(t, 0, sizeof *t);
}

/* --- JOB objects --- */

const char *cli_json_str(const json_t *o, const char *key, const char *dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

double cli_json_num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

bool cli_state_terminal(const char *state)
{
    static const char *const ended[] = {"completed", "failed", "cancelled", "timeout"};
    if (!state)
        return false;
    for (size_t i = 0; i < sizeof ended / sizeof *ended; i++)
        if (strcmp(state, ended[i]) == 0)
            return true;
    return false;
}

int cli_job_exit_status(const json_t *job)
{
    const char *st = cli_json_str(job, "state", NULL);
    if (!cli_state_terminal(st))
        return -1;
    if (strcmp(st, "completed") == 0)
        return 0;
    if (strcmp(st, "timeout") == 0)
        return 124;
    if (strcmp(st, "cancelled") == 0)
        return 1;
    const json_t *sig = json_object_get(job, "signal");
    if (json_is_integer(sig) && json_integer_value(sig) > 0 && json_integer_value(sig) < 128)
        return 128 + (int)json_integer_value(sig);
    const json_t *ec = json_object_get(job, "exit_code");
    if (json_is_integer(ec) && json_integer_value(ec) > 0) {
        int code = (int)(json_integer_value(ec) & 255);
        return code ? code : 1;
    }
    return 1;
}

char *cli_job_id(const json_t *job, char *buf, size_t n)
{
    const json_t *parent = json_object_get(job, "array_parent");
    const json_t *index = json_object_get(job, "array_index");
    if (json_is_integer(parent) && json_is_integer(index))
        snprintf(buf, n, "%lld_%lld", (long long)json_integer_value(parent),
                 (long long)json_integer_value(index));
    else
        snprintf(buf, n, "%lld", (long long)json_integer_value(json_object_get(job, "id")));
    return buf;
}

char *cli_job_time(const json_t *job, double now, char *buf, size_t n)
{
    return cli_fmt_duration(
        dr_joblist_time(cli_json_str(job, "state", ""), cli_json_num(job, "submit_time"),
                        cli_json_num(job, "start_time"), cli_json_num(job, "end_time"),
                        cli_json_num(job, "elapsed"), now),
        buf, n);
}

static long long task_count(const json_t *tasks, const char *key)
{
    const json_t *v = json_object_get(tasks, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

char *cli_job_progress(const json_t *job, double now, char *buf, size_t n)
{
    char id[64], dur[32];
    cli_job_id(job, id, sizeof id);
    const json_t *tasks = json_object_get(job, "tasks");
    if (json_is_object(tasks)) {
        long long done = task_count(tasks, "completed") + task_count(tasks, "failed") +
                         task_count(tasks, "cancelled");
        long long failed = task_count(tasks, "failed");
        int k = snprintf(buf, n, "array %s: %lld/%lld done, %lld running", id, done,
                         task_count(tasks, "total"), task_count(tasks, "running"));
        if (failed && k > 0 && (size_t)k < n)
            snprintf(buf + k, n - (size_t)k, ", %lld failed", failed);
        return buf;
    }
    const char *st = cli_json_str(job, "state", "?");
    int k = snprintf(buf, n, "job %s: %s %s", id, st, cli_job_time(job, now, dur, sizeof dur));
    const char *where = cli_json_str(job, "nodelist", "");
    const char *type = cli_json_str(job, "gpu_type", "");
    const char *reason = cli_json_str(job, "reason", "");
    if (*where && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " on %s", where);
    if (*type && k > 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " (%s)", type);
    if (*reason && strcmp(st, "running") != 0 && k > 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, " (%s)", reason);
    return buf;
}
