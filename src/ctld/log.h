/* log.h - droverd's log: a line, a rate-limited line, a peer's string made safe. */
#ifndef DROVER_CTLD_LOG_H
#define DROVER_CTLD_LOG_H

#include <stdint.h>
#include "drover/util.h"

/* Rate-limited logging: a peer nobody knows yet can make the controller
 * refuse something thousands of times a second; the log gets the first
 * few lines of each window and then a count. */
typedef struct ctld_loglimit {
    int64_t window_ns; /* CLOCK_BOOTTIME when the window began */
    uint32_t lines;    /* lines written in it */
    uint64_t held;     /* lines held back in it */
} ctld_loglimit_t;

void ctld_log(const char *fmt, ...) DR_PRINTF(1, 2);
/* ctld_log, at most a few lines per 10 s window of l; the lines held back
 * are counted in one line when the next window opens. */
void ctld_log_limited(ctld_loglimit_t *l, const char *fmt, ...) DR_PRINTF(2, 3);
/* A peer's string made safe for one log line: control bytes and DEL become
 * '?', and it is cut to fit dst (n > 0). */
void ctld_sanitize(char *dst, size_t n, const char *src);

#endif
