/* fuzz_http_response.c - libFuzzer target: parse an arbitrary response in
 * one piece and again fed in pieces, and abort() unless both give the same
 * outcome (error code; or status, headers, body and bytes consumed), the
 * bounds hold, a success has a NUL-terminated body and a failure says why.
 * The first input byte picks the piece size, a small body bound (so the
 * limit paths run) and whether the request was HEAD. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/http_parse.h"

typedef struct outcome {
    int rc;
    size_t used;
    cli_http_resp_t r;
} outcome_t;

static void run(const char *d, size_t n, size_t piece, size_t max_body, bool head, outcome_t *o)
{
    cli_http_parser_t p;
    cli_http_parser_init(&p, max_body, head);
    dr_err_t err = {0};
    size_t pos = 0;
    o->rc = DR_OK;
    while (pos < n && !cli_http_parser_done(&p)) {
        size_t k = n - pos < piece ? n - pos : piece, used = 0;
        o->rc = cli_http_parser_feed(&p, d + pos, k, &used, &err);
        if (used > k)
            abort();
        pos += used;
        if (o->rc != DR_OK)
            break;
        if (used < k && !cli_http_parser_done(&p))
            abort(); /* bytes are left only after a complete response */
    }
    if (o->rc == DR_OK && !cli_http_parser_done(&p))
        o->rc = cli_http_parser_eof(&p, &err);
    o->used = pos;
    memset(&o->r, 0, sizeof o->r);
    if (o->rc == DR_OK) {
        cli_http_parser_take(&p, &o->r);
        if (!o->r.body || o->r.body[o->r.body_len] != '\0' || o->r.body_len > max_body)
            abort();
        if (o->r.status < 200 || o->r.status > 999 || o->r.nheaders > CLI_HTTP_MAX_HEADERS)
            abort(); /* interim (1xx) responses are never the result */
        for (size_t i = 0; i < o->r.nheaders; i++)
            if (!o->r.headers[i].name[0] || !cli_http_resp_header(&o->r, o->r.headers[i].name))
                abort();
    } else if (o->rc > 0 || err.msg[0] == '\0') {
        abort();
    }
    cli_http_parser_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t ctl = data[0];
    const char *d = (const char *)data + 1;
    size_t n = size - 1;
    size_t piece = (size_t)(ctl & 15) + 1;
    size_t max_body = (ctl & 16) ? 64 : CLI_HTTP_MAX_BODY;
    bool head = (ctl & 32) != 0;

    outcome_t a, b;
    run(d, n, n ? n : 1, max_body, head, &a);
    run(d, n, piece, max_body, head, &b);
    if (a.rc != b.rc)
        abort();
    if (a.rc == DR_OK) {
        if (a.used != b.used || a.r.status != b.r.status || a.r.minor != b.r.minor ||
            strcmp(a.r.reason, b.r.reason) != 0 || a.r.nheaders != b.r.nheaders ||
            a.r.body_len != b.r.body_len || memcmp(a.r.body, b.r.body, a.r.body_len) != 0 ||
            a.r.chunked != b.r.chunked)
            abort();
        for (size_t i = 0; i < a.r.nheaders; i++)
            if (strcmp(a.r.headers[i].name, b.r.headers[i].name) != 0 ||
                strcmp(a.r.headers[i].value, b.r.headers[i].value) != 0)
                abort();
    }
    cli_http_resp_free(&a.r);
    cli_http_resp_free(&b.r);
    return 0;
}
