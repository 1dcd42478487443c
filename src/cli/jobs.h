/* jobs.h - what the job verbs of the live cluster share (jobs.c): submit.c,
 * queue.c, show.c, control.c, wait.c and logs.c are thin clients of the
 * controller's API (docs/api.md). */
#ifndef DROVER_CLI_JOBS_H
#define DROVER_CLI_JOBS_H

#include "cli/client.h"
#include "drover/error.h"

/* Consecutive seconds of an unreachable controller that `wait` and `logs
 * -f` ride out (a controller restart), before giving up. */
#define CLI_RETRY_UNREACHABLE_S 60
/* Polling, between looks at a job: from this, growing by half to that. */
#define CLI_POLL_MIN_MS 100
#define CLI_POLL_MAX_MS 1000

/* The client for `server` (the verb's --server; NULL: drover's own
 * --server, $DROVER_SERVER, the defaults): 0, or the exit status after a
 * message (c freed). */
int cli_job_client_open(cli_client_t *c, const char *server);

/* The option of every job verb, --server: 1 consumed, 0 not it, -1 usage
 * error printed. */
int cli_server_opt(int argc, char **argv, int *i, const char **server);

/* "drover: MSG" on stderr; exit status 1. */
int cli_fail_msg(const char *msg);

/* A job as users name it: "42", or "42_7" for task 7 of array 42 (looked
 * up among the array's started tasks). */
int cli_job_resolve(cli_client_t *c, const char *arg, long long *id, dr_err_t *err);

#endif
