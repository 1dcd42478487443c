/* test_http_parse.c - the CLI's HTTP response parser: status lines,
 * headers, Content-Length, chunked and close-delimited bodies, interim
 * responses, truncation, the bounds, garbage, and that a response fed in
 * pieces parses exactly as in one piece. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/http_parse.h"

/* Parse text (one shot, EOF after it) and expect success. */
static void parse_ok(const char *text, size_t max_body, bool head, cli_http_resp_t *r)
{
    dr_err_t err = {0};
    int rc = cli_http_parse_response(text, strlen(text), max_body, head, r, NULL, &err);
    if (rc != DR_OK)
        fail_msg("parse failed (%d): %s\n--- input ---\n%s", rc, err.msg, text);
}

/* Parse text and expect the error code and a message containing `msg`. */
static void parse_fails(const char *text, size_t len, size_t max_body, int code, const char *msg)
{
    dr_err_t err = {0};
    cli_http_resp_t r;
    int rc = cli_http_parse_response(text, len, max_body, false, &r, NULL, &err);
    if (rc != code)
        fail_msg("rc %d (want %d), msg '%s'\n--- input ---\n%.300s", rc, code, err.msg, text);
    tu_assert_contains(err.msg, msg);
    assert_null(r.body);
    assert_int_equal(r.nheaders, 0);
}

static void test_status_and_headers(void **state)
{
    (void)state;
    cli_http_resp_t r;
    parse_ok("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
             "X-Drover-Offset-Next:   17  \r\ncontent-length: 9\r\n\r\n{\"id\":42}",
             0, false, &r);
    assert_int_equal(r.status, 201);
    assert_int_equal(r.minor, 1);
    assert_string_equal(r.reason, "Created");
    assert_int_equal(r.nheaders, 3);
    assert_string_equal(cli_http_resp_header(&r, "CONTENT-TYPE"), "application/json");
    assert_string_equal(cli_http_resp_header(&r, "x-drover-offset-next"), "17");
    assert_null(cli_http_resp_header(&r, "X-Missing"));
    assert_int_equal(r.body_len, 9);
    assert_string_equal(r.body, "{\"id\":42}");
    assert_false(r.chunked);
    cli_http_resp_free(&r);

    /* HTTP/1.0, no reason phrase, bare LF line ends, an empty header value */
    parse_ok("HTTP/1.0 404\nX-Empty:\nContent-Length: 2\n\nno", 0, false, &r);
    assert_int_equal(r.status, 404);
    assert_int_equal(r.minor, 0);
    assert_string_equal(r.reason, "");
    assert_string_equal(cli_http_resp_header(&r, "X-Empty"), "");
    assert_string_equal(r.body, "no");
    cli_http_resp_free(&r);

    /* a reason phrase with spaces; a repeated equal Content-Length */
    parse_ok("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 3, 3\r\nContent-Length: 3\r\n\r\n"
             "abc",
             0, false, &r);
    assert_string_equal(r.reason, "Service Unavailable");
    assert_string_equal(r.body, "abc");
    cli_http_resp_free(&r);
}

static void test_bodies_without_length(void **state)
{
    (void)state;
    cli_http_resp_t r;
    /* no Content-Length: the body runs to the end of the connection */
    parse_ok("HTTP/1.1 200 OK\r\n\r\nall of\r\nthis", 0, false, &r);
    assert_string_equal(r.body, "all of\r\nthis");
    assert_int_equal(r.body_len, 12);
    cli_http_resp_free(&r);
    /* 204 and 304 never have one; nor a reply to HEAD, whatever it declares */
    parse_ok("HTTP/1.1 204 No Content\r\n\r\n", 0, false, &r);
    assert_int_equal(r.body_len, 0);
    assert_non_null(r.body);
    assert_string_equal(r.body, "");
    cli_http_resp_free(&r);
    parse_ok("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", 0, true, &r);
    assert_int_equal(r.body_len, 0);
    cli_http_resp_free(&r);
    parse_ok("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, false, &r);
    assert_int_equal(r.body_len, 0);
    assert_string_equal(r.body, "");
    cli_http_resp_free(&r);
}

static void test_chunked(void **state)
{
    (void)state;
    cli_http_resp_t r;
    parse_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
             "5\r\nhello\r\n"
             "1;name=value\r\n \r\n"
             "A\r\n0123456789\r\n"
             "0\r\nX-Trailer: yes\r\n\r\n",
             0, false, &r);
    assert_true(r.chunked);
    assert_string_equal(r.body, "hello 0123456789");
    assert_int_equal(r.body_len, 16);
    /* trailers are read past, not merged */
    assert_null(cli_http_resp_header(&r, "X-Trailer"));
    cli_http_resp_free(&r);

    /* chunked wins over Content-Length; codings are case-insensitive */
    parse_ok("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: identity, CHUNKED\r\n\r\n"
             "3\r\nabc\r\n0\r\n\r\n",
             0, false, &r);
    assert_string_equal(r.body, "abc");
    cli_http_resp_free(&r);

    /* upper-case hex, an empty body */
    parse_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1F\r\n"
             "0123456789012345678901234567890\r\n0\r\n\r\n",
             0, false, &r);
    assert_int_equal(r.body_len, 31);
    cli_http_resp_free(&r);
    parse_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 0, false, &r);
    assert_int_equal(r.body_len, 0);
    assert_string_equal(r.body, "");
    cli_http_resp_free(&r);
}

static void test_interim_responses(void **state)
{
    (void)state;
    cli_http_resp_t r;
    parse_ok("HTTP/1.1 100 Continue\r\nX-A: 1\r\n\r\n"
             "HTTP/1.1 103 Early Hints\r\n\r\n"
             "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
             0, false, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.nheaders, 1); /* the interim headers are gone */
    assert_null(cli_http_resp_header(&r, "X-A"));
    assert_string_equal(r.body, "ok");
    cli_http_resp_free(&r);
    /* one stray CRLF before the status line is tolerated */
    parse_ok("\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 0, false, &r);
    assert_string_equal(r.body, "x");
    cli_http_resp_free(&r);
}

static void test_truncated(void **state)
{
    (void)state;
    parse_fails("", 0, 0, DR_EIO, "connection closed before a response");
    parse_fails("HTTP/1.1 20", 11, 0, DR_EIO, "truncated in the status line");
    const char *h = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n";
    parse_fails(h, strlen(h), 0, DR_EIO, "truncated in the headers");
    const char *b = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
    parse_fails(b, strlen(b), 0, DR_EIO, "truncated body: 3 of 10 bytes");
    const char *c = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel";
    parse_fails(c, strlen(c), 0, DR_EIO, "truncated in chunked body after 3 bytes");
    const char *c2 = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
    parse_fails(c2, strlen(c2), 0, DR_EIO, "truncated in chunked body after 5 bytes");
    const char *c3 = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n";
    parse_fails(c3, strlen(c3), 0, DR_EIO, "truncated in chunked body");
}

static void test_oversized(void **state)
{
    (void)state;
    const char *cl = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n01234567890";
    parse_fails(cl, strlen(cl), 10, DR_ELIMIT, "body of 11 bytes exceeds the limit of 10 bytes");
    cli_http_resp_t r;
    parse_ok("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", 10, false, &r);
    cli_http_resp_free(&r);
    const char *closed = "HTTP/1.1 200 OK\r\n\r\n01234567890";
    parse_fails(closed, strlen(closed), 10, DR_ELIMIT, "body exceeds the limit of 10 bytes");
    const char *ch = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n"
                     "5\r\n67890\r\n0\r\n\r\n";
    parse_fails(ch, strlen(ch), 10, DR_ELIMIT, "body exceeds the limit of 10 bytes");
    const char *huge = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n";
    parse_fails(huge, strlen(huge), 0, DR_ELIMIT, "is too large");
    const char *big = "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n";
    parse_fails(big, strlen(big), 0, DR_EINVAL, "is too large");
    const char *declared = "HTTP/1.1 200 OK\r\nContent-Length: 67108865\r\n\r\n";
    parse_fails(declared, strlen(declared), 0, DR_ELIMIT, "exceeds the limit of 67108864 bytes");

    /* the header section: 64 KiB in all, 128 fields */
    size_t n = CLI_HTTP_MAX_HEAD + 100;
    char *buf = malloc(n + 1);
    assert_non_null(buf);
    int k = snprintf(buf, n, "HTTP/1.1 200 OK\r\nX-Long: ");
    memset(buf + k, 'a', n - (size_t)k);
    buf[n] = '\0';
    parse_fails(buf, n, 0, DR_ELIMIT, "header section exceeds 65536 bytes");
    size_t len = (size_t)snprintf(buf, n, "HTTP/1.1 200 OK\r\n");
    for (int i = 0; i < CLI_HTTP_MAX_HEADERS + 1; i++)
        len += (size_t)snprintf(buf + len, n - len, "X-%d: v\r\n", i);
    len += (size_t)snprintf(buf + len, n - len, "\r\n");
    parse_fails(buf, len, 0, DR_ELIMIT, "more than 128 header fields");
    /* a chunk-size line with endless extensions */
    len = (size_t)snprintf(buf, n, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;");
    memset(buf + len, 'x', 2000);
    len += 2000;
    parse_fails(buf, len, 0, DR_ELIMIT, "chunk size line exceeds 1024 bytes");
    free(buf);
}

static void test_garbage(void **state)
{
    (void)state;
#define GARBAGE(text, msg) parse_fails(text, sizeof(text) - 1, 0, DR_EINVAL, msg)
    GARBAGE("HTTP/2 200 OK\r\n\r\n", "not an HTTP/1.x status line");
    GARBAGE("SSH-2.0-OpenSSH_9.2\r\n", "not an HTTP/1.x status line: 'SSH-2.0-OpenSSH_9.2'");
    GARBAGE("HTTP/1.1 2x0 OK\r\n\r\n", "bad status code '2x0'");
    GARBAGE("HTTP/1.1 099 Low\r\n\r\n", "bad status code 099");
    GARBAGE("HTTP/1.1 2000 OK\r\n\r\n", "bad status code");
    GARBAGE("HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", "header line 1: no ':'");
    GARBAGE("HTTP/1.1 200 OK\r\nA: 1\r\nBad Name: x\r\n\r\n", "header line 2: bad header name");
    GARBAGE("HTTP/1.1 200 OK\r\n: x\r\n\r\n", "header line 1: bad header name");
    GARBAGE("HTTP/1.1 200 OK\r\nA: 1\r\n  folded\r\n\r\n", "folded header lines");
    GARBAGE("HTTP/1.1 200 OK\r\nA: x\x01y\r\n\r\n", "control character in 'A'");
    GARBAGE("HTTP/1.1 200 OK\r\nA: x\ry\r\n\r\n", "stray CR or NUL");
    GARBAGE("HTTP/1.1 200 OK\r\nA: x\0y\r\n\r\n", "stray CR or NUL");
    GARBAGE("HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n", "bad Content-Length '12a'");
    GARBAGE("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad Content-Length '-1'");
    GARBAGE("HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", "bad Content-Length ''");
    GARBAGE("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
            "conflicting Content-Length values");
    GARBAGE("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "unsupported transfer coding 'gzip'");
    GARBAGE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, identity\r\n\r\n",
            "'chunked' is not the last coding");
    GARBAGE("HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\n",
            "Transfer-Encoding without 'chunked'");
    GARBAGE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "bad chunk size line 'zz'");
    GARBAGE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 x\r\n",
            "bad chunk size line '5 x'");
    GARBAGE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
            "chunk data longer than its size");
    GARBAGE("HTTP/1.1 101 Switching Protocols\r\n\r\n", "unexpected 101");
#undef GARBAGE
}

/* Feed a response in pieces of every size from 1 byte up: the result is
 * the one-shot result, and bytes after the response are left unconsumed. */
static void test_incremental(void **state)
{
    (void)state;
    const char *text =
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
        "X-Drover-Job-State: running\r\n\r\n4\r\nab\r\n\r\n3;x=y\r\ncde\r\n0\r\n"
        "T: 1\r\n\r\nNEXT RESPONSE";
    size_t len = strlen(text), rest = strlen("NEXT RESPONSE");
    for (size_t piece = 1; piece <= len; piece++) {
        cli_http_parser_t p;
        cli_http_parser_init(&p, 0, false);
        size_t pos = 0, used;
        dr_err_t err = {0};
        while (pos < len && !cli_http_parser_done(&p)) {
            size_t n = len - pos < piece ? len - pos : piece;
            if (cli_http_parser_feed(&p, text + pos, n, &used, &err) != DR_OK)
                fail_msg("piece %zu at %zu: %s", piece, pos, err.msg);
            pos += used;
        }
        assert_true(cli_http_parser_done(&p));
        assert_int_equal(pos, len - rest);
        cli_http_resp_t r;
        cli_http_parser_take(&p, &r);
        cli_http_parser_free(&p);
        assert_int_equal(r.status, 200);
        assert_string_equal(r.body, "ab\r\ncde");
        assert_string_equal(cli_http_resp_header(&r, "X-Drover-Job-State"), "running");
        cli_http_resp_free(&r);
    }
    /* the one-shot form says how much was the response */
    cli_http_resp_t r;
    size_t used = 0;
    dr_err_t err = {0};
    assert_int_equal(cli_http_parse_response(text, len, 0, false, &r, &used, &err), DR_OK);
    assert_int_equal(used, len - rest);
    cli_http_resp_free(&r);
}

static void test_sticky_error(void **state)
{
    (void)state;
    cli_http_parser_t p;
    cli_http_parser_init(&p, 0, false);
    dr_err_t err = {0};
    size_t used;
    assert_int_equal(cli_http_parser_feed(&p, "JUNK\r\n", 6, &used, &err), DR_EINVAL);
    assert_false(cli_http_parser_done(&p));
    assert_int_equal(cli_http_parser_feed(&p, "HTTP/1.1 200 OK\r\n\r\n", 19, &used, &err),
                     DR_EINVAL);
    assert_int_equal(used, 0);
    tu_assert_contains(err.msg, "already failed");
    assert_int_equal(cli_http_parser_eof(&p, &err), DR_EINVAL);
    cli_http_parser_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_and_headers),
        cmocka_unit_test(test_bodies_without_length),
        cmocka_unit_test(test_chunked),
        cmocka_unit_test(test_interim_responses),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_oversized),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_incremental),
        cmocka_unit_test(test_sticky_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
