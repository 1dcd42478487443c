/* client.h - the CLI's blocking HTTP/1.1 client of the controller's API
 * (docs/api.md): one request per connection, over a Unix socket (the peer's
 * uid is the user; no token) or TCP (a bearer token; TLS for https://, with
 * the server's certificate verified: tls.c), with connect and read
 * timeouts and a bounded response.  No dependency beyond sockets and
 * OpenSSL: the response is parsed by http_parse.c. */
#ifndef DROVER_CLI_CLIENT_H
#define DROVER_CLI_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "cli/http_parse.h"
#include "drover/error.h"

#define CLI_DEFAULT_SOCKET  "/run/drover/droverd.sock"
#define CLI_DEFAULT_URL     "http://127.0.0.1:6817"
#define CLI_CONNECT_TIMEOUT 5000  /* ms */
#define CLI_READ_TIMEOUT    30000 /* ms without a byte from the server */

/* Where the controller is: a socket path or a TCP host and port. */
typedef struct cli_endpoint {
    bool is_unix;
    bool tls;          /* https:// */
    char *path;        /* Unix socket */
    char *host, *port; /* TCP (host without IPv6 brackets) */
    char *display;     /* for messages: the path, or "http[s]://HOST:PORT" */
} cli_endpoint_t;

/* "http://HOST:PORT[/]", "https://HOST:PORT[/]", "HOST:PORT", "[::1]:6817",
 * "unix:PATH" or a path (anything with a '/', or without a ':'; but no
 * other "SCHEME://").  Errors: "--server 'x': ...". */
int cli_endpoint_parse(const char *spec, cli_endpoint_t *ep, dr_err_t *err);
void cli_endpoint_free(cli_endpoint_t *ep);

typedef struct cli_client {
    cli_endpoint_t ep;
    /* No --server and no DROVER_SERVER: the default socket, then the default
     * TCP address when the socket is absent or refuses. */
    bool fallback;
    cli_endpoint_t alt;
    char *token;  /* for TCP; NULL = none found */
    char *cacert; /* https://: the trusted certificates (PEM); NULL = the system's */
    bool token_loaded;
    int connect_timeout_ms, read_timeout_ms;
    size_t max_body;
    /* Set by a request that failed before any reply (connect, send, read
     * timeout): the verbs that poll retry those. */
    bool unreachable;
    int last_status; /* HTTP status of the last reply, 0 if none */
} cli_client_t;

/* `drover --cacert FILE VERB`: the certificates an https:// server's must
 * chain to (NULL: $DROVER_CACERT, else the system's CA store). */
extern const char *cli_cacert_arg;

/* The server from `server` (--server; NULL = none), else $DROVER_SERVER,
 * else the defaults; the trusted certificates from cli_cacert_arg, else
 * $DROVER_CACERT.  Nothing is connected yet. */
int cli_client_init(cli_client_t *c, const char *server, dr_err_t *err);
void cli_client_free(cli_client_t *c);

/* The bearer token: $DROVER_TOKEN, else the first line of
 * $HOME/.config/drover/token; NULL if neither (malloc'd). */
char *cli_token_load(void);
/* $HOME/.config/drover/token (malloc'd), NULL if there is no home. */
char *cli_token_path(void);

/* One request.  `body` (may be NULL) is sent with `ctype`.  On DR_OK *resp
 * holds any status (the caller judges it); connection errors are DR_EIO
 * "cannot reach the controller at X: <strerror> (set --server or
 * DROVER_SERVER)". */
int cli_client_request(cli_client_t *c, const char *method, const char *target, const char *ctype,
                       const char *body, size_t body_len, cli_http_resp_t *resp, dr_err_t *err);

/* A JSON request (body NULL: none) expecting a JSON reply.  2xx: DR_OK.
 * Otherwise the server's "error" text goes to err (404 DR_ENOENT, 409
 * DR_ESTATE, 413 DR_ELIMIT, 503 DR_EIO, 507 DR_ENOSPC, others DR_EINVAL).
 * *reply (if not NULL) is the parsed JSON whenever there was any, also on
 * errors (a 409 to cancel says the state); the caller decrefs. */
int cli_client_json(cli_client_t *c, const char *method, const char *target, json_t *body,
                    json_t **reply, dr_err_t *err);
/* The same with a body already encoded as JSON text (NULL: none), sent as
 * it is (drover submit: the job as dr_jobspec_to_json wrote it). */
int cli_client_json_text(cli_client_t *c, const char *method, const char *target, const char *body,
                         json_t **reply, dr_err_t *err);

/* A GET whose reply need not be JSON (GET /v1/jobs?format=tsv): a 2xx reply
 * is left in *resp (the caller frees it, and judges its Content-Type);
 * anything else is an error as with cli_client_json. */
int cli_client_get(cli_client_t *c, const char *target, cli_http_resp_t *resp, dr_err_t *err);

/* A streamed GET (text/event-stream, GET /v1/events?follow=1): the reply's
 * body is read as it comes, without a bound on its total length (only on
 * what is not yet consumed). */
struct ssl_st;
typedef struct cli_stream {
    cli_client_t *c;
    int fd;
    struct ssl_st *ssl; /* https:// */
    cli_http_parser_t p;
    size_t taken; /* bytes the last cli_stream_read gave */
    bool ended;   /* the server ended the body (its last chunk) */
} cli_stream_t;
/* Send the request (with Last-Event-ID: last_id when not NULL) and read
 * the head: DR_OK for a 2xx event stream; an error reply's "error" text
 * in err as cli_client_json; connection errors set c->unreachable. */
int cli_stream_open(cli_client_t *c, const char *target, const char *last_id, cli_stream_t *s,
                    dr_err_t *err);
/* The body bytes that came (within wait_ms when none were waiting): DR_OK
 * with *len 0 when none came; the bytes stay valid until the next call.
 * Once the connection breaks or the server ends the stream: DR_EIO
 * (c->unreachable set: a controller restart, the caller may reconnect). */
int cli_stream_read(cli_stream_t *s, int wait_ms, const char **data, size_t *len, dr_err_t *err);
void cli_stream_close(cli_stream_t *s);

/* Percent-encode a query value (malloc'd). */
char *cli_url_escape(const char *s);

#endif
