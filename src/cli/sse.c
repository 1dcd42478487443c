/* sse.c - the Server-Sent Events parser (sse.h): lines are collected
 * (bounded), each is a field of the record being built, a blank line
 * dispatches it. */
#include "cli/sse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/util.h"

void cli_sse_init(cli_sse_t *s)
{
    memset(s, 0, sizeof *s);
}

void cli_sse_free(cli_sse_t *s)
{
    free(s->line);
    free(s->data);
    memset(s, 0, sizeof *s);
}

static int fail(cli_sse_t *s, dr_err_t *err, int code, const char *what)
{
    s->error = code;
    return dr_err_set(err, code, "event stream: after %llu records: %s",
                      (unsigned long long)s->records, what);
}

static int grow(char **b, size_t *cap, size_t need)
{
    if (need <= *cap)
        return DR_OK;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    char *n = realloc(*b, c);
    if (!n)
        return DR_ENOMEM;
    *b = n;
    *cap = c;
    return DR_OK;
}

static void reset_record(cli_sse_t *s)
{
    s->data_len = 0;
    s->has_data = s->has_id = false;
    s->id = 0;
    s->type[0] = '\0';
}

/* One complete line (without its end). */
static int on_line(cli_sse_t *s, const char *l, size_t n,
                   int (*cb)(void *, const cli_sse_event_t *), void *ud, dr_err_t *err)
{
    if (n == 0) { /* dispatch */
        int rc = 0;
        if (s->has_data) {
            cli_sse_event_t e = {.has_id = s->has_id, .id = s->id, .data_len = s->data_len};
            snprintf(e.type, sizeof e.type, "%s", s->type[0] ? s->type : "message");
            if (grow(&s->data, &s->data_cap, s->data_len + 1) != DR_OK)
                return fail(s, err, DR_ENOMEM, "out of memory");
            s->data[s->data_len] = '\0';
            e.data = s->data;
            s->records++;
            rc = cb(ud, &e);
        }
        reset_record(s);
        return rc;
    }
    if (l[0] == ':')
        return 0; /* a comment (keepalive) */
    size_t c = 0;
    while (c < n && l[c] != ':')
        c++;
    const char *v = c < n ? l + c + 1 : l + n;
    size_t vn = c < n ? n - c - 1 : 0;
    if (vn && v[0] == ' ') {
        v++;
        vn--;
    }
    if (c == 4 && memcmp(l, "data", 4) == 0) {
        size_t need = s->data_len + (s->has_data ? 1 : 0) + vn;
        if (need > CLI_SSE_MAX_RECORD)
            return fail(s, err, DR_ELIMIT, "a record's data exceeds 1 MiB");
        if (grow(&s->data, &s->data_cap, need + 1) != DR_OK)
            return fail(s, err, DR_ENOMEM, "out of memory");
        if (s->has_data)
            s->data[s->data_len++] = '\n';
        memcpy(s->data + s->data_len, v, vn);
        s->data_len += vn;
        s->has_data = true;
    } else if (c == 2 && memcmp(l, "id", 2) == 0) {
        uint64_t id = 0;
        if (vn == 0 || vn > 19)
            return fail(s, err, DR_EINVAL, "an id: line without a decimal id");
        for (size_t i = 0; i < vn; i++) {
            if (v[i] < '0' || v[i] > '9')
                return fail(s, err, DR_EINVAL, "an id: line without a decimal id");
            id = id * 10 + (uint64_t)(v[i] - '0');
        }
        s->id = id;
        s->has_id = true;
    } else if (c == 5 && memcmp(l, "event", 5) == 0) {
        if (vn == 0 || vn >= sizeof s->type)
            return fail(s, err, DR_EINVAL, "an event: line with an empty or overlong type");
        memcpy(s->type, v, vn);
        s->type[vn] = '\0';
    } /* retry: and unknown fields: ignored */
    return 0;
}

int cli_sse_feed(cli_sse_t *s, const char *d, size_t len,
                 int (*cb)(void *ud, const cli_sse_event_t *e), void *ud, dr_err_t *err)
{
    if (s->error)
        return dr_err_set(err, s->error, "event stream: parser already failed");
    for (size_t i = 0; i < len; i++) {
        char ch = d[i];
        if (s->cr && ch != '\n')
            return fail(s, err, DR_EINVAL, "a CR not followed by LF");
        if (ch == '\0')
            return fail(s, err, DR_EINVAL, "a NUL byte");
        if (ch == '\r') {
            s->cr = true;
            continue;
        }
        if (ch == '\n') {
            s->cr = false;
            size_t n = s->line_len;
            s->line_len = 0;
            int rc = on_line(s, s->line ? s->line : "", n, cb, ud, err);
            if (rc != 0)
                return rc;
            continue;
        }
        if (s->line_len >= CLI_SSE_MAX_RECORD)
            return fail(s, err, DR_ELIMIT, "a line exceeds 1 MiB");
        if (grow(&s->line, &s->line_cap, s->line_len + 1) != DR_OK || !s->line)
            return fail(s, err, DR_ENOMEM, "out of memory");
        s->line[s->line_len++] = ch;
    }
    return 0;
}
