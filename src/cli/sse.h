/* sse.h - a parser of Server-Sent Events (text/event-stream) for the
 * CLI's followed streams (drover events -f, drover wait).
 *
 * Pure and incremental like http_parse.h: a stream's body bytes go in as
 * they arrive, in any split; each complete record comes out through a
 * callback.  Strict, since the stream is input from the network: lines end
 * in LF or CR LF (a lone CR, a NUL is an error), an id is decimal digits,
 * an event type is short, and a record is bounded.  Unknown fields are
 * ignored (as the SSE standard says), comments (": ...") too. */
#ifndef DROVER_CLI_SSE_H
#define DROVER_CLI_SSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/error.h"

#define CLI_SSE_MAX_RECORD (1u << 20) /* a record's data (and any one line) */

typedef struct cli_sse_event {
    bool has_id;
    uint64_t id;
    char type[32];    /* "message" when the record names none */
    const char *data; /* its data lines joined by LF, NUL-terminated */
    size_t data_len;
} cli_sse_event_t;

typedef struct cli_sse {
    int error; /* sticky */
    char *line;
    size_t line_len, line_cap;
    bool cr; /* the last byte was a CR: an LF must follow */
    char *data;
    size_t data_len, data_cap;
    bool has_data, has_id;
    uint64_t id;
    char type[32];
    uint64_t records; /* dispatched so far */
} cli_sse_t;

void cli_sse_init(cli_sse_t *s);
void cli_sse_free(cli_sse_t *s);
/* Consume len bytes; for each complete record cb is called (a nonzero
 * return stops the feed and is returned).  DR_EINVAL for a malformed
 * stream, DR_ELIMIT for a record over CLI_SSE_MAX_RECORD, DR_ENOMEM;
 * errors say where ("event stream: line 12: ..."). */
int cli_sse_feed(cli_sse_t *s, const char *d, size_t len,
                 int (*cb)(void *ud, const cli_sse_event_t *e), void *ud, dr_err_t *err);

#endif
