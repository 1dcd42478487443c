/* fuzz_sse.c - libFuzzer target: an arbitrary chunked event-stream
 * response through the CLI's path (http_parse.c's head and body, consumed
 * as it comes, into sse.c), in one piece and again in pieces; abort()
 * unless both give the same records and outcome (but for the one piece
 * holding more at once, below), no more body is held than one piece
 * brought, and a failure says why.  The first input byte picks
 * the piece size. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/http_parse.h"
#include "cli/sse.h"

typedef struct acc {
    uint64_t hash, n;
} acc_t;

static int on_rec(void *ud, const cli_sse_event_t *e)
{
    acc_t *a = ud;
    if (!e->data || e->data[e->data_len] != '\0' || e->data_len > CLI_SSE_MAX_RECORD ||
        strlen(e->type) >= sizeof e->type || !e->type[0])
        abort();
    uint64_t h = a->hash ^ (e->has_id ? e->id : 7);
    for (size_t i = 0; i < e->data_len; i++)
        h = (h ^ (unsigned char)e->data[i]) * 1099511628211ull;
    for (const char *t = e->type; *t; t++)
        h = (h ^ (unsigned char)*t) * 1099511628211ull;
    a->hash = h;
    a->n++;
    return 0;
}

static int run(const char *d, size_t n, size_t piece, size_t bound, acc_t *a)
{
    cli_http_parser_t p;
    cli_http_parser_init(&p, bound, false);
    cli_sse_t s;
    cli_sse_init(&s);
    dr_err_t err = {0};
    int rc = DR_OK;
    size_t pos = 0;
    while (pos < n && rc == DR_OK && !cli_http_parser_done(&p)) {
        size_t k = n - pos < piece ? n - pos : piece, used = 0;
        rc = cli_http_parser_feed(&p, d + pos, k, &used, &err);
        /* consumed as it comes: no more body is ever held than one feed
         * brought (the bound itself applies to declared chunk sizes too) */
        if (used > k || p.resp.body_len > bound || p.resp.body_len > k)
            abort();
        pos += used;
        if (rc == DR_OK && cli_http_parser_head_done(&p) && p.resp.body_len) {
            rc = cli_sse_feed(&s, p.resp.body, p.resp.body_len, on_rec, a, &err);
            cli_http_parser_consume(&p, p.resp.body_len);
        }
    }
    if (rc != DR_OK && (rc > 0 || !err.msg[0]))
        abort();
    cli_sse_free(&s);
    cli_http_parser_free(&p);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t piece = (size_t)(data[0] & 31) + 1;
    const char *d = (const char *)data + 1;
    size_t n = size - 1;
    acc_t a = {0, 0}, b = {0, 0};
    /* the same bound both ways (a declared chunk larger than the bound is
     * refused whatever the pieces); in pieces, what is held stays under one
     * piece */
    int ra = run(d, n, n ? n : 1, 1u << 20, &a), rb = run(d, n, piece, 1u << 20, &b);
    /* records dispatched before a failure may differ by where the pieces
     * end; a success must match exactly.  The bound is on what is
     * unconsumed (http_parse.h): in one piece, earlier chunks of the same
     * feed are still held when a later chunk's size is checked, so the one
     * piece may be refused (DR_ELIMIT) where the pieces, consumed between
     * feeds, fit; never the other way round. */
    bool held_more = ra == DR_ELIMIT && rb == DR_OK;
    if (((ra == DR_OK) != (rb == DR_OK) && !held_more) ||
        (ra == DR_OK && (a.hash != b.hash || a.n != b.n)))
        abort();
    return 0;
}
