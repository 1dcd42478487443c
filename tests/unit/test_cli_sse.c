/* test_cli_sse.c - the CLI's event-stream reading: the SSE parser (records,
 * multi-line data, comments, CR LF, any split, the strict errors and the
 * bound) and a chunked event-stream body consumed as it comes, so that the
 * HTTP parser's body bound applies to what is unconsumed, not the stream. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/http_parse.h"
#include "cli/sse.h"

typedef struct got {
    char text[4096]; /* "id|type|data;" per record */
    int n;
} got_t;

static int collect(void *ud, const cli_sse_event_t *e)
{
    got_t *g = ud;
    size_t l = strlen(g->text);
    snprintf(g->text + l, sizeof g->text - l, "%s%llu|%s|%s;", e->has_id ? "" : "-",
             (unsigned long long)e->id, e->type, e->data);
    g->n++;
    return 0;
}

/* The whole input at once, then byte by byte: the same records. */
static void feed_both(const char *in, const char *want)
{
    for (int split = 0; split < 2; split++) {
        cli_sse_t s;
        cli_sse_init(&s);
        got_t g = {{0}, 0};
        dr_err_t err = {0};
        size_t n = strlen(in);
        if (split == 0)
            assert_int_equal(cli_sse_feed(&s, in, n, collect, &g, &err), DR_OK);
        else
            for (size_t i = 0; i < n; i++)
                assert_int_equal(cli_sse_feed(&s, in + i, 1, collect, &g, &err), DR_OK);
        assert_string_equal(g.text, want);
        cli_sse_free(&s);
    }
}

static void test_records(void **state)
{
    (void)state;
    feed_both(": drover events from id 0\n\n"
              "id: 7\nevent: job\ndata: {\"id\":7}\n\n"
              ": keepalive\n\n"
              "id: 8\r\nevent: node\r\ndata: {\"id\":8}\r\n\r\n",
              "7|job|{\"id\":7};8|node|{\"id\":8};");
    /* several data lines join with LF; no event: is "message"; unknown fields
     * and retry: are ignored; "data" without a colon is an empty line of data */
    feed_both("data:a\ndata: b\nretry: 10\nfoo: bar\n\ndata\n\n", "-0|message|a\nb;-0|message|;");
    /* a record without data is not dispatched; an unfinished one neither */
    feed_both("id: 3\n\nid: 4\ndata: x", "");
}

static void fails(const char *in, int code, const char *msg)
{
    cli_sse_t s;
    cli_sse_init(&s);
    got_t g = {{0}, 0};
    dr_err_t err = {0};
    assert_int_equal(cli_sse_feed(&s, in, strlen(in), collect, &g, &err), code);
    tu_assert_contains(err.msg, msg);
    /* sticky */
    assert_int_equal(cli_sse_feed(&s, "\n", 1, collect, &g, &err), code);
    cli_sse_free(&s);
}

static void test_strict(void **state)
{
    (void)state;
    fails("id: 12x\ndata: a\n\n", DR_EINVAL, "decimal id");
    fails("id:\n", DR_EINVAL, "decimal id");
    fails("id: 123456789012345678901\n", DR_EINVAL, "decimal id");
    fails("event: \n", DR_EINVAL, "event:");
    fails("event: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", DR_EINVAL, "overlong");
    fails("data: a\rdata: b\n", DR_EINVAL, "CR not followed by LF");
    cli_sse_t s;
    cli_sse_init(&s);
    dr_err_t err = {0};
    got_t g = {{0}, 0};
    assert_int_equal(cli_sse_feed(&s, "data: a\0b\n", 10, collect, &g, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "NUL");
    cli_sse_free(&s);
    /* the bound: a line, and a record's data over several lines */
    char *big = malloc(CLI_SSE_MAX_RECORD + 16);
    assert_non_null(big);
    memset(big, 'x', CLI_SSE_MAX_RECORD + 8);
    big[CLI_SSE_MAX_RECORD + 8] = '\0';
    fails(big, DR_ELIMIT, "exceeds 1 MiB");
    cli_sse_init(&s);
    /* two data lines of 600 KiB: each under the bound, together over */
    size_t half = 600u << 10;
    memcpy(big, "data: ", 6);
    big[half] = '\n';
    assert_int_equal(cli_sse_feed(&s, big, half + 1, collect, &g, &err), DR_OK);
    assert_int_equal(cli_sse_feed(&s, big, half + 1, collect, &g, &err), DR_ELIMIT);
    tu_assert_contains(err.msg, "data exceeds 1 MiB");
    cli_sse_free(&s);
    free(big);
}

/* A chunked body longer than the parser's bound goes through when it is
 * consumed as it comes; the head is known before the body ends. */
static void test_streamed_body(void **state)
{
    (void)state;
    cli_http_parser_t p;
    cli_http_parser_init(&p, 64, false);
    dr_err_t err = {0};
    const char *head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    size_t used;
    assert_int_equal(cli_http_parser_feed(&p, head, strlen(head), &used, &err), DR_OK);
    assert_true(cli_http_parser_head_done(&p));
    assert_false(cli_http_parser_done(&p));
    assert_string_equal(cli_http_resp_header(&p.resp, "content-type"), "text/event-stream");
    cli_sse_t s;
    cli_sse_init(&s);
    got_t g = {{0}, 0};
    for (int k = 0; k < 100; k++) { /* 100 records of ~30 bytes: far over 64 */
        char rec[64], chunk[96];
        int rl = snprintf(rec, sizeof rec, "id: %d\nevent: job\ndata: %d\n\n", k + 1, k);
        int cl = snprintf(chunk, sizeof chunk, "%x\r\n%s\r\n", rl, rec);
        assert_int_equal(cli_http_parser_feed(&p, chunk, (size_t)cl, &used, &err), DR_OK);
        assert_int_equal(cli_sse_feed(&s, p.resp.body, p.resp.body_len, collect, &g, &err), DR_OK);
        cli_http_parser_consume(&p, p.resp.body_len);
        assert_int_equal(p.resp.body_len, 0);
    }
    assert_int_equal(g.n, 100);
    assert_non_null(strstr(g.text, "100|job|99;"));
    assert_int_equal(cli_http_parser_feed(&p, "0\r\n\r\n", 5, &used, &err), DR_OK);
    assert_true(cli_http_parser_done(&p));
    cli_sse_free(&s);
    cli_http_parser_free(&p);

    /* unconsumed, the same stream hits the bound */
    cli_http_parser_init(&p, 64, false);
    assert_int_equal(cli_http_parser_feed(&p, head, strlen(head), &used, &err), DR_OK);
    int rc = DR_OK;
    for (int k = 0; k < 10 && rc == DR_OK; k++)
        rc = cli_http_parser_feed(&p, "10\r\n0123456789abcdef\r\n", 22, &used, &err);
    assert_int_equal(rc, DR_ELIMIT);
    cli_http_parser_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records),
        cmocka_unit_test(test_strict),
        cmocka_unit_test(test_streamed_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
