/* follow.c - the CLI's readers of the controller's event stream (GET
 * /v1/events?follow=1, docs/api.md): `drover events -f` prints each event
 * as it is committed and reconnects from the last id it saw when the
 * controller restarts; `drover wait` sleeps on the stream instead of
 * polling (wait.c), so it wakes the moment one of its jobs has an event. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/follow.h"
#include "cli/sse.h"

#define FOLLOW_RETRIES    5     /* reconnects in a row before giving up */
#define FOLLOW_SILENCE_MS 45000 /* nothing, not even a keepalive (15 s): the link is gone */

typedef struct follow_ctx {
    long long job; /* 0: every event */
    bool as_json;
    char last[24]; /* the last id printed: where a reconnect resumes */
} follow_ctx_t;

/* One event as `drover events JOB` prints a row: time, state (or what
 * happened, for a record without one), detail; with no JOB, the job's id
 * or the node's name first. */
static int print_event(void *ud, const cli_sse_event_t *e)
{
    follow_ctx_t *f = ud;
    if (e->has_id)
        snprintf(f->last, sizeof f->last, "%llu", (unsigned long long)e->id);
    if (f->as_json) {
        printf("%s\n", e->data);
        fflush(stdout);
        return 0;
    }
    json_t *o = json_loadb(e->data, e->data_len, 0, NULL);
    if (!json_is_object(o)) {
        json_decref(o);
        fprintf(stderr, "drover: events: event %s is not a JSON object; skipped\n", f->last);
        return 0;
    }
    char tm[64];
    const char *kind = cli_json_str(o, "kind", "job");
    bool node = strcmp(kind, "node") == 0;
    const char *to = cli_json_str(o, "to", "");
    /* a node's: what happened (register, lost, down, drain, resume) */
    const char *st = node || !to[0] ? cli_json_str(o, "what", "") : to;
    cli_fmt_time(cli_json_num(o, "t"), tm, sizeof tm);
    const char *detail = cli_json_str(o, "detail", "");
    char who[80] = "";
    if (!f->job && node)
        snprintf(who, sizeof who, "node %s", cli_json_str(o, "node", "?"));
    else if (!f->job)
        snprintf(who, sizeof who, "job %lld",
                 (long long)json_integer_value(json_object_get(o, "job")));
    /* columns padded as the table pads them; no trailing blanks */
    printf("%-19s  ", tm);
    if (who[0])
        printf("%-12s  ", who);
    if (detail[0])
        printf("%-11s  %s\n", st, detail);
    else
        printf("%s\n", st);
    fflush(stdout);
    json_decref(o);
    return 0;
}

int cli_events_follow(cli_client_t *c, long long job, bool as_json)
{
    follow_ctx_t f = {.job = job, .as_json = as_json};
    int retries = 0, delay_ms = 500;
    for (;;) {
        char target[128];
        /* a job's whole history first; everything: from now on */
        if (job)
            snprintf(target, sizeof target, "/v1/events?follow=1&job=%lld%s", job,
                     f.last[0] ? "" : "&since=0");
        else
            snprintf(target, sizeof target, "/v1/events?follow=1");
        cli_stream_t s;
        dr_err_t err = {0};
        int rc = cli_stream_open(c, target, f.last[0] ? f.last : NULL, &s, &err);
        if (rc == DR_OK) {
            if (retries)
                fprintf(stderr, "drover: events: reconnected%s%s\n",
                        f.last[0] ? ", resuming after event " : "", f.last);
            retries = 0;
            delay_ms = 500;
            cli_sse_t sse;
            cli_sse_init(&sse);
            for (;;) {
                const char *d;
                size_t n;
                if (cli_stream_read(&s, FOLLOW_SILENCE_MS, &d, &n, &err) != DR_OK)
                    break;
                if (n == 0) { /* not even a keepalive: the link is gone */
                    c->unreachable = true;
                    dr_err_set(&err, DR_EIO, "nothing from the controller for %d s",
                               FOLLOW_SILENCE_MS / 1000);
                    break;
                }
                if (cli_sse_feed(&sse, d, n, print_event, &f, &err) != DR_OK) {
                    c->unreachable = false; /* a broken stream is not a restart */
                    break;
                }
            }
            cli_sse_free(&sse);
            cli_stream_close(&s);
        }
        if (!c->unreachable || ++retries > FOLLOW_RETRIES)
            return cli_fail(&err);
        fprintf(stderr, "drover: events: %s; reconnecting in %.1f s (try %d of %d)\n", err.msg,
                delay_ms / 1000.0, retries, FOLLOW_RETRIES);
        cli_sleep_ms(delay_ms);
        delay_ms = delay_ms * 2 > 8000 ? 8000 : delay_ms * 2;
    }
}

/* ---- drover wait ---- */

typedef struct wait_ctx {
    const long long *ids;
    size_t n;
    bool relevant; /* an event of one of the jobs (or of a task of one) came */
} wait_ctx_t;

static int wait_event(void *ud, const cli_sse_event_t *e)
{
    wait_ctx_t *w = ud;
    json_t *o = json_loadb(e->data, e->data_len, 0, NULL);
    long long job = (long long)json_integer_value(json_object_get(o, "job"));
    long long parent = (long long)json_integer_value(json_object_get(o, "parent"));
    json_decref(o);
    for (size_t k = 0; k < w->n; k++)
        if (w->ids[k] && (w->ids[k] == job || w->ids[k] == parent))
            w->relevant = true;
    return 0;
}

int cli_wait_stream_open(cli_client_t *c, const long long *ids, size_t n, cli_wait_stream_t *ws)
{
    memset(ws, 0, sizeof *ws);
    char target[96];
    if (n == 1)
        snprintf(target, sizeof target, "/v1/events?follow=1&job=%lld", ids[0]);
    else
        snprintf(target, sizeof target, "/v1/events?follow=1");
    dr_err_t err = {0};
    if (cli_stream_open(c, target, NULL, &ws->s, &err) != DR_OK)
        /* none now (a restart: try again later), or a controller without
         * event streams (an older one, 404): the caller polls */
        return c->unreachable || c->last_status >= 500 ? -1 : -2;
    cli_sse_init(&ws->sse);
    ws->open = true;
    return 0;
}

void cli_wait_stream_close(cli_wait_stream_t *ws)
{
    if (!ws->open)
        return;
    cli_stream_close(&ws->s);
    cli_sse_free(&ws->sse);
    ws->open = false;
}

int cli_wait_stream_next(cli_wait_stream_t *ws, const long long *ids, size_t n, int max_ms)
{
    wait_ctx_t w = {.ids = ids, .n = n};
    double until = cli_now_s() + max_ms / 1000.0;
    while (!w.relevant) {
        double left = until - cli_now_s();
        if (left <= 0)
            return 0;
        const char *d;
        size_t len;
        dr_err_t err = {0};
        if (cli_stream_read(&ws->s, (int)(left * 1000) + 1, &d, &len, &err) != DR_OK ||
            cli_sse_feed(&ws->sse, d, len, wait_event, &w, &err) != DR_OK) {
            cli_wait_stream_close(ws);
            return -1;
        }
    }
    return 1;
}
