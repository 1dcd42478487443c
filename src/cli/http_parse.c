/* http_parse.c - incremental HTTP/1.x response parser (RFC 9112): status
 * line, header fields, and a body framed by Content-Length, by chunked
 * transfer coding or by the end of the connection.  A state machine over
 * bytes, so that a response split anywhere parses the same as in one piece
 * (the fuzz target checks exactly that). */
#include "cli/http_parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drover/util.h"

enum {
    ST_STATUS,     /* status line */
    ST_HEADER,     /* header lines until the blank one */
    ST_BODY_LEN,   /* Content-Length bytes */
    ST_BODY_CLOSE, /* everything until EOF */
    ST_CHUNK_SIZE, /* "1a;ext\r\n" */
    ST_CHUNK_DATA, /* chunk bytes */
    ST_CHUNK_END,  /* the CRLF after a chunk's data */
    ST_TRAILER,    /* trailer lines after the last chunk */
    ST_DONE
};

void cli_http_parser_init(cli_http_parser_t *p, size_t max_body, bool head_request)
{
    memset(p, 0, sizeof *p);
    p->state = ST_STATUS;
    p->head = head_request;
    p->max_body = max_body ? max_body : CLI_HTTP_MAX_BODY;
}

void cli_http_resp_free(cli_http_resp_t *r)
{
    for (size_t i = 0; i < r->nheaders; i++) {
        free(r->headers[i].name);
        free(r->headers[i].value);
    }
    free(r->headers);
    free(r->reason);
    free(r->body);
    memset(r, 0, sizeof *r);
}

void cli_http_parser_free(cli_http_parser_t *p)
{
    free(p->line);
    cli_http_resp_free(&p->resp);
    p->line = NULL;
    p->line_len = p->line_cap = 0;
}

bool cli_http_parser_done(const cli_http_parser_t *p)
{
    return p->state == ST_DONE && p->error == 0;
}

void cli_http_parser_take(cli_http_parser_t *p, cli_http_resp_t *out)
{
    *out = p->resp;
    memset(&p->resp, 0, sizeof p->resp);
}

const char *cli_http_resp_header(const cli_http_resp_t *r, const char *name)
{
    for (size_t i = 0; i < r->nheaders; i++)
        if (dr_streq_ci(r->headers[i].name, name))
            return r->headers[i].value;
    return NULL;
}

/* Record a failure; it sticks (a parser that has seen garbage stays failed). */
static int perr(cli_http_parser_t *p, dr_err_t *err, int code, const char *fmt, ...)
    DR_PRINTF(4, 5);

static int perr(cli_http_parser_t *p, dr_err_t *err, int code, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    p->error = code;
    return dr_err_set(err, code, "HTTP response: %s", what);
}

/* RFC 9110 tchar: the characters of a header name. */
static bool is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* Make room for n more body bytes plus the terminating NUL, growing
 * geometrically up to `want` (a declared length, when known) so that a
 * header claiming 64 MiB does not cost 64 MiB before any byte arrives. */
static int body_reserve(cli_http_resp_t *r, size_t n)
{
    size_t need = r->body_len + n + 1;
    if (need <= r->body_cap)
        return DR_OK;
    size_t cap = r->body_cap ? r->body_cap : 256;
    while (cap < need)
        cap *= 2;
    char *b = realloc(r->body, cap);
    if (!b)
        return DR_ENOMEM;
    r->body = b;
    r->body_cap = cap;
    return DR_OK;
}

static int body_append(cli_http_parser_t *p, const char *d, size_t n, dr_err_t *err)
{
    cli_http_resp_t *r = &p->resp;
    if (n > p->max_body - r->body_len)
        return perr(p, err, DR_ELIMIT, "body exceeds the limit of %zu bytes", p->max_body);
    if (body_reserve(r, n) != DR_OK)
        return perr(p, err, DR_ENOMEM, "out of memory for the body");
    memcpy(r->body + r->body_len, d, n);
    r->body_len += n;
    r->body[r->body_len] = '\0';
    return DR_OK;
}

/* The body is complete: make sure it exists ("" when empty). */
static int finish(cli_http_parser_t *p, dr_err_t *err)
{
    if (body_reserve(&p->resp, 0) != DR_OK)
        return perr(p, err, DR_ENOMEM, "out of memory for the body");
    p->resp.body[p->resp.body_len] = '\0';
    p->state = ST_DONE;
    return DR_OK;
}

/* "HTTP/1.1 200 OK" */
static int parse_status(cli_http_parser_t *p, const char *l, size_t n, dr_err_t *err)
{
    if (n < 12 || memcmp(l, "HTTP/1.", 7) != 0 || l[7] < '0' || l[7] > '9' || l[8] != ' ')
        return perr(p, err, DR_EINVAL, "not an HTTP/1.x status line: '%.*s'",
                    (int)(n > 60 ? 60 : n), l);
    int st = 0;
    for (int i = 9; i < 12; i++) {
        if (l[i] < '0' || l[i] > '9')
            return perr(p, err, DR_EINVAL, "bad status code '%.3s'", l + 9);
        st = st * 10 + (l[i] - '0');
    }
    if (st < 100)
        return perr(p, err, DR_EINVAL, "bad status code %03d", st);
    if (n > 12 && l[12] != ' ')
        return perr(p, err, DR_EINVAL, "bad status code '%.*s'", (int)(n > 20 ? 8 : n - 9), l + 9);
    cli_http_resp_t *r = &p->resp;
    r->minor = l[7] - '0';
    r->status = st;
    free(r->reason);
    r->reason = n > 13 ? dr_strndup(l + 13, n - 13) : dr_strdup("");
    if (!r->reason)
        return perr(p, err, DR_ENOMEM, "out of memory");
    return DR_OK;
}

static int parse_header(cli_http_parser_t *p, const char *l, size_t n, dr_err_t *err)
{
    cli_http_resp_t *r = &p->resp;
    size_t lineno = r->nheaders + 1;
    if (is_ows(l[0]))
        return perr(p, err, DR_EINVAL, "header line %zu: folded header lines are not accepted",
                    lineno);
    size_t c = 0;
    while (c < n && is_tchar((unsigned char)l[c]))
        c++;
    if (c == n)
        return perr(p, err, DR_EINVAL, "header line %zu: no ':'", lineno);
    if (l[c] != ':' || c == 0)
        return perr(p, err, DR_EINVAL, "header line %zu: bad header name", lineno);
    size_t v0 = c + 1, v1 = n;
    while (v0 < v1 && is_ows(l[v0]))
        v0++;
    while (v1 > v0 && is_ows(l[v1 - 1]))
        v1--;
    for (size_t i = v0; i < v1; i++) {
        unsigned char ch = (unsigned char)l[i];
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return perr(p, err, DR_EINVAL, "header line %zu: control character in '%.*s'", lineno,
                        (int)c, l);
    }
    if (r->nheaders >= CLI_HTTP_MAX_HEADERS)
        return perr(p, err, DR_ELIMIT, "more than %d header fields", CLI_HTTP_MAX_HEADERS);
    if (r->nheaders == r->cap_headers &&
        dr_grow((void **)&r->headers, &r->cap_headers, r->nheaders + 1, sizeof *r->headers) != 0)
        return perr(p, err, DR_ENOMEM, "out of memory");
    char *name = dr_strndup(l, c), *value = dr_strndup(l + v0, v1 - v0);
    if (!name || !value) {
        free(name);
        free(value);
        return perr(p, err, DR_ENOMEM, "out of memory");
    }
    r->headers[r->nheaders].name = name;
    r->headers[r->nheaders].value = value;
    r->nheaders++;
    return DR_OK;
}

/* Content-Length: digits; a repeated header (or "5, 5") must agree. */
static int content_length(cli_http_parser_t *p, bool *have, uint64_t *len, dr_err_t *err)
{
    const cli_http_resp_t *r = &p->resp;
    *have = false;
    for (size_t i = 0; i < r->nheaders; i++) {
        if (!dr_streq_ci(r->headers[i].name, "Content-Length"))
            continue;
        const char *s = r->headers[i].value;
        for (;;) {
            uint64_t v = 0;
            int digits = 0;
            while (*s >= '0' && *s <= '9') {
                if (++digits > 19)
                    return perr(p, err, DR_EINVAL, "Content-Length '%s' is too large",
                                r->headers[i].value);
                v = v * 10 + (uint64_t)(*s++ - '0');
            }
            while (is_ows(*s))
                s++;
            if (digits == 0 || (*s != '\0' && *s != ','))
                return perr(p, err, DR_EINVAL, "bad Content-Length '%s'", r->headers[i].value);
            if (*have && v != *len)
                return perr(p, err, DR_EINVAL, "conflicting Content-Length values");
            *have = true;
            *len = v;
            if (*s == '\0')
                break;
            s++;
            while (is_ows(*s))
                s++;
        }
    }
    return DR_OK;
}

/* Transfer-Encoding: the client never asks for codings, so only "chunked"
 * (possibly after "identity") is accepted; *chunked says whether it is the
 * final coding. */
static int transfer_encoding(cli_http_parser_t *p, bool *present, bool *chunked, dr_err_t *err)
{
    const cli_http_resp_t *r = &p->resp;
    *present = *chunked = false;
    for (size_t i = 0; i < r->nheaders; i++) {
        if (!dr_streq_ci(r->headers[i].name, "Transfer-Encoding"))
            continue;
        *present = true;
        const char *s = r->headers[i].value;
        while (*s) {
            while (is_ows(*s) || *s == ',')
                s++;
            const char *t = s;
            while (*s && *s != ',' && !is_ows(*s))
                s++;
            size_t n = (size_t)(s - t);
            if (n == 0)
                continue;
            if (*chunked)
                return perr(p, err, DR_EINVAL,
                            "Transfer-Encoding: 'chunked' is not the last coding");
            if (n == 7 && strncasecmp(t, "chunked", 7) == 0)
                *chunked = true;
            else if (!(n == 8 && strncasecmp(t, "identity", 8) == 0))
                return perr(p, err, DR_EINVAL, "unsupported transfer coding '%.*s'",
                            (int)(n > 40 ? 40 : n), t);
        }
    }
    if (*present && !*chunked)
        return perr(p, err, DR_EINVAL, "Transfer-Encoding without 'chunked'");
    return DR_OK;
}

/* The blank line after the headers: decide how the body is framed. */
static int end_of_headers(cli_http_parser_t *p, dr_err_t *err)
{
    cli_http_resp_t *r = &p->resp;
    if (r->status == 101)
        return perr(p, err, DR_EINVAL, "unexpected 101 Switching Protocols");
    if (r->status < 200) {
        /* an interim response (100 Continue, 103 Early Hints): the real one follows */
        for (size_t i = 0; i < r->nheaders; i++) {
            free(r->headers[i].name);
            free(r->headers[i].value);
        }
        r->nheaders = 0;
        p->state = ST_STATUS;
        return DR_OK;
    }
    if (p->head || r->status == 204 || r->status == 304)
        return finish(p, err);
    bool te, chunked, have_len;
    uint64_t len = 0;
    int rc = transfer_encoding(p, &te, &chunked, err);
    if (rc != DR_OK)
        return rc;
    if (chunked) { /* it wins over Content-Length (RFC 9112 6.3) */
        r->chunked = true;
        p->state = ST_CHUNK_SIZE;
        return DR_OK;
    }
    if ((rc = content_length(p, &have_len, &len, err)) != DR_OK)
        return rc;
    if (!have_len) {
        p->state = ST_BODY_CLOSE;
        return DR_OK;
    }
    if (len > p->max_body)
        return perr(p, err, DR_ELIMIT, "body of %llu bytes exceeds the limit of %zu bytes",
                    (unsigned long long)len, p->max_body);
    p->remaining = p->declared = len;
    if (len == 0)
        return finish(p, err);
    p->state = ST_BODY_LEN;
    return DR_OK;
}

/* "1a" or "1a;name=value" (extensions are ignored). */
static int parse_chunk_size(cli_http_parser_t *p, const char *l, size_t n, dr_err_t *err)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < n; i++) {
        int d;
        char c = l[i];
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            break;
        if (i >= 15)
            return perr(p, err, DR_ELIMIT, "chunk size '%.*s' is too large", (int)(n > 40 ? 40 : n),
                        l);
        v = v * 16 + (uint64_t)d;
    }
    if (i == 0)
        return perr(p, err, DR_EINVAL, "bad chunk size line '%.*s'", (int)(n > 40 ? 40 : n), l);
    size_t j = i;
    while (j < n && is_ows(l[j]))
        j++;
    if (j < n && l[j] != ';')
        return perr(p, err, DR_EINVAL, "bad chunk size line '%.*s'", (int)(n > 40 ? 40 : n), l);
    if (v > p->max_body - p->resp.body_len)
        return perr(p, err, DR_ELIMIT, "body exceeds the limit of %zu bytes", p->max_body);
    if (v == 0) {
        p->state = ST_TRAILER;
        return DR_OK;
    }
    p->remaining = v;
    p->state = ST_CHUNK_DATA;
    return DR_OK;
}

/* A complete line [l, l+n) (without its CR LF) in the current state. */
static int on_line(cli_http_parser_t *p, const char *l, size_t n, dr_err_t *err)
{
    switch (p->state) {
    case ST_STATUS:
        if (n == 0 && p->resp.status == 0 && p->head_bytes <= 2)
            return DR_OK; /* tolerate one stray CRLF before the status line (RFC 9112 2.2) */
        return parse_status(p, l, n, err) == DR_OK ? (p->state = ST_HEADER, DR_OK) : p->error;
    case ST_HEADER: return n == 0 ? end_of_headers(p, err) : parse_header(p, l, n, err);
    case ST_CHUNK_SIZE: return parse_chunk_size(p, l, n, err);
    case ST_CHUNK_END:
        if (n != 0)
            return perr(p, err, DR_EINVAL, "chunk data longer than its size");
        p->state = ST_CHUNK_SIZE;
        return DR_OK;
    case ST_TRAILER:
        /* trailer fields are not used; the blank line ends the message */
        return n == 0 ? finish(p, err) : DR_OK;
    default: return perr(p, err, DR_EINVAL, "internal: line in state %d", p->state);
    }
}

static bool line_state(int st)
{
    return st == ST_STATUS || st == ST_HEADER || st == ST_CHUNK_SIZE || st == ST_CHUNK_END ||
           st == ST_TRAILER;
}

/* Collect bytes of a line; returns the bytes used, *complete when the LF
 * was seen.  Line length bounds: the header section as a whole for status,
 * headers and trailers, a short one for chunk lines. */
static int take_line(cli_http_parser_t *p, const char *d, size_t n, size_t *used, bool *complete,
                     dr_err_t *err)
{
    const char *lf = memchr(d, '\n', n);
    size_t take = lf ? (size_t)(lf - d) + 1 : n;
    bool in_head = p->state == ST_STATUS || p->state == ST_HEADER || p->state == ST_TRAILER;
    if (in_head) {
        if (take > CLI_HTTP_MAX_HEAD - p->head_bytes)
            return perr(p, err, DR_ELIMIT, "header section exceeds %u bytes", CLI_HTTP_MAX_HEAD);
        p->head_bytes += take;
    } else if (p->line_len + take > CLI_HTTP_MAX_CHUNK_LN) {
        return perr(p, err, DR_ELIMIT, "chunk size line exceeds %d bytes", CLI_HTTP_MAX_CHUNK_LN);
    }
    if (p->line_len + take + 1 > p->line_cap) {
        size_t cap = p->line_cap ? p->line_cap : 128;
        while (cap < p->line_len + take + 1)
            cap *= 2;
        char *b = realloc(p->line, cap);
        if (!b)
            return perr(p, err, DR_ENOMEM, "out of memory");
        p->line = b;
        p->line_cap = cap;
    }
    memcpy(p->line + p->line_len, d, take);
    p->line_len += take;
    *used = take;
    *complete = lf != NULL;
    return DR_OK;
}

int cli_http_parser_feed(cli_http_parser_t *p, const char *data, size_t len, size_t *used,
                         dr_err_t *err)
{
    size_t pos = 0;
    int rc = DR_OK;
    if (p->error) {
        *used = 0;
        return dr_err_set(err, p->error, "HTTP response: parser already failed");
    }
    while (pos < len && p->state != ST_DONE) {
        if (line_state(p->state)) {
            size_t u = 0;
            bool complete = false;
            if ((rc = take_line(p, data + pos, len - pos, &u, &complete, err)) != DR_OK)
                break;
            pos += u;
            if (!complete)
                continue;
            size_t n = p->line_len - 1; /* drop LF, then one CR */
            if (n > 0 && p->line[n - 1] == '\r')
                n--;
            p->line[n] = '\0';
            if (memchr(p->line, '\r', n) || memchr(p->line, '\0', n)) {
                rc = perr(p, err, DR_EINVAL, "stray CR or NUL inside a line");
                break;
            }
            p->line_len = 0;
            if ((rc = on_line(p, p->line, n, err)) != DR_OK)
                break;
        } else if (p->state == ST_BODY_CLOSE) {
            if ((rc = body_append(p, data + pos, len - pos, err)) != DR_OK)
                break;
            pos = len;
        } else { /* ST_BODY_LEN, ST_CHUNK_DATA */
            size_t n = len - pos;
            if (n > p->remaining)
                n = (size_t)p->remaining;
            if ((rc = body_append(p, data + pos, n, err)) != DR_OK)
                break;
            pos += n;
            p->remaining -= n;
            if (p->remaining == 0) {
                if (p->state == ST_CHUNK_DATA)
                    p->state = ST_CHUNK_END;
                else if ((rc = finish(p, err)) != DR_OK)
                    break;
            }
        }
    }
    *used = pos;
    return rc;
}

bool cli_http_parser_head_done(const cli_http_parser_t *p)
{
    return p->error == 0 && p->state != ST_STATUS && p->state != ST_HEADER;
}

void cli_http_parser_consume(cli_http_parser_t *p, size_t n)
{
    cli_http_resp_t *r = &p->resp;
    if (n > r->body_len)
        n = r->body_len;
    if (!n)
        return;
    memmove(r->body, r->body + n, r->body_len - n);
    r->body_len -= n;
    r->body[r->body_len] = '\0';
}

int cli_http_parser_eof(cli_http_parser_t *p, dr_err_t *err)
{
    if (p->error)
        return dr_err_set(err, p->error, "HTTP response: parser already failed");
    switch (p->state) {
    case ST_DONE: return DR_OK;
    case ST_BODY_CLOSE: return finish(p, err);
    case ST_STATUS:
        if (p->head_bytes == 0)
            return perr(p, err, DR_EIO, "connection closed before a response");
        return perr(p, err, DR_EIO, "truncated in the status line");
    case ST_HEADER: return perr(p, err, DR_EIO, "truncated in the headers");
    case ST_BODY_LEN:
        return perr(p, err, DR_EIO, "truncated body: %llu of %llu bytes",
                    (unsigned long long)(p->declared - p->remaining),
                    (unsigned long long)p->declared);
    default:
        return perr(p, err, DR_EIO, "truncated in chunked body after %zu bytes", p->resp.body_len);
    }
}

int cli_http_parse_response(const char *buf, size_t len, size_t max_body, bool head_request,
                            cli_http_resp_t *out, size_t *used, dr_err_t *err)
{
    cli_http_parser_t p;
    cli_http_parser_init(&p, max_body, head_request);
    memset(out, 0, sizeof *out);
    size_t u = 0;
    int rc = cli_http_parser_feed(&p, buf, len, &u, err);
    if (rc == DR_OK && !cli_http_parser_done(&p))
        rc = cli_http_parser_eof(&p, err);
    if (rc == DR_OK) {
        cli_http_parser_take(&p, out);
        if (used)
            *used = u;
    }
    cli_http_parser_free(&p);
    return rc;
}
