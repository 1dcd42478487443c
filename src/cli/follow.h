/* follow.h - readers of the controller's event stream (follow.c). */
#ifndef DROVER_CLI_FOLLOW_H
#define DROVER_CLI_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/client.h"
#include "cli/sse.h"

/* `drover events -f [JOB]`: print events as they come (job 0: all, the
 * nodes' too) until interrupted; a lost controller is reconnected a few
 * times with backoff, resuming after the last event printed.  The exit
 * status once it gives up. */
int cli_events_follow(cli_client_t *c, long long job, bool as_json);

/* `drover wait`'s stream: opened before the jobs are first looked at, so
 * that no change after that look is missed. */
typedef struct cli_wait_stream {
    bool open;
    cli_stream_t s;
    cli_sse_t sse;
} cli_wait_stream_t;
/* 0 open; -1 not now (the controller is away); -2 it has no event stream. */
int cli_wait_stream_open(cli_client_t *c, const long long *ids, size_t n, cli_wait_stream_t *ws);
/* Sleep until an event of one of the jobs (or their tasks) arrives: 1;
 * 0 after max_ms without one; -1 when the stream broke (it is closed). */
int cli_wait_stream_next(cli_wait_stream_t *ws, const long long *ids, size_t n, int max_ms);
void cli_wait_stream_close(cli_wait_stream_t *ws);

#endif
