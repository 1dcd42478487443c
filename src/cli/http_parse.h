/* http_parse.h - an HTTP/1.1 response parser for the CLI's client.
 *
 * Pure and incremental: bytes go in as they arrive from the socket (in any
 * split), a complete response comes out (status, headers, body with
 * Content-Length, chunked transfer coding or up to the end of the
 * connection).  Everything is bounded (header section, header count, body),
 * so a broken or hostile server costs at most those bounds.  No I/O: the
 * client (client.c) owns the socket, the fuzz target and the unit tests feed
 * memory. */
#ifndef DROVER_CLI_HTTP_PARSE_H
#define DROVER_CLI_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/error.h"

#define CLI_HTTP_MAX_HEAD     (64u << 10) /* status line + headers (+ trailers) */
#define CLI_HTTP_MAX_HEADERS  128
#define CLI_HTTP_MAX_BODY     (64u << 20) /* the client's default body bound */
#define CLI_HTTP_MAX_CHUNK_LN 1024        /* a chunk-size line with its extensions */

typedef struct cli_http_header {
    char *name;  /* as sent */
    char *value; /* without surrounding blanks */
} cli_http_header_t;

typedef struct cli_http_resp {
    int status;   /* 100..999 */
    int minor;    /* HTTP/1.minor */
    char *reason; /* "OK"; "" when none */
    cli_http_header_t *headers;
    size_t nheaders, cap_headers;
    char *body; /* NUL-terminated (the NUL is not in body_len); never NULL once complete */
    size_t body_len, body_cap;
    bool chunked; /* the body came with chunked transfer coding */
} cli_http_resp_t;

typedef struct cli_http_parser {
    int state;
    int error; /* sticky: once a feed fails, every later call fails the same way */
    bool head; /* a response to HEAD: never a body */
    size_t max_body;
    char *line; /* the line being assembled (status, header, chunk size, trailer) */
    size_t line_len, line_cap;
    size_t head_bytes;  /* bytes of the header section so far, against CLI_HTTP_MAX_HEAD */
    uint64_t remaining; /* Content-Length or chunk bytes still to come */
    uint64_t declared;  /* Content-Length as declared, for the truncation message */
    cli_http_resp_t resp;
} cli_http_parser_t;

/* max_body 0 = CLI_HTTP_MAX_BODY; head_request: the request was HEAD. */
void cli_http_parser_init(cli_http_parser_t *p, size_t max_body, bool head_request);
void cli_http_parser_free(cli_http_parser_t *p);

/* Consume up to len bytes; *used says how many were taken (bytes after a
 * complete response are left, not an error).  Returns DR_OK (more may be
 * needed: see cli_http_parser_done), DR_EINVAL for a malformed response,
 * DR_ELIMIT when a bound is exceeded, DR_ENOMEM.  Errors say what and
 * where: "HTTP response: header line 3: no ':'". */
int cli_http_parser_feed(cli_http_parser_t *p, const char *data, size_t len, size_t *used,
                         dr_err_t *err);
bool cli_http_parser_done(const cli_http_parser_t *p);
/* A streamed body (text/event-stream): the head is complete (status and
 * headers in p->resp), the body's bytes so far are p->resp.body.  The
 * consumer takes them as they come with cli_http_parser_consume, so that
 * max_body bounds what is unconsumed, not the whole stream. */
bool cli_http_parser_head_done(const cli_http_parser_t *p);
void cli_http_parser_consume(cli_http_parser_t *p, size_t n); /* the first n body bytes */
/* The peer closed the connection: completes a body that runs to the end of
 * the connection; anything else unfinished is DR_EIO "truncated". */
int cli_http_parser_eof(cli_http_parser_t *p, dr_err_t *err);
/* Move the complete response out (the parser is then empty). */
void cli_http_parser_take(cli_http_parser_t *p, cli_http_resp_t *out);

void cli_http_resp_free(cli_http_resp_t *r);
/* Value of the first header named `name` (case-insensitive), or NULL. */
const char *cli_http_resp_header(const cli_http_resp_t *r, const char *name);

/* One shot: the whole connection's bytes, then EOF.  On success *used (if
 * not NULL) is the length of the response proper. */
int cli_http_parse_response(const char *buf, size_t len, size_t max_body, bool head_request,
                            cli_http_resp_t *out, size_t *used, dr_err_t *err);

#endif
