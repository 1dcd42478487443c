/* log.c - droverd's log: one line to stderr (ctld_log), and the lines a
 * peer can cause, kept few and clean.
 *
 * Anyone who can reach the agent port can make the controller refuse
 * something (a forged frame, a bad HELLO) as fast as the network allows;
 * one line per refusal filled the log at 50,000 lines a second.  So such
 * lines go through a limiter: the first few of each window are written,
 * the rest counted in one line.  And whatever a peer named (a node name,
 * a GPU source) is cleaned of control bytes before it is logged, so that
 * a name holding a newline cannot write a forged line of its own. */

#include <stdarg.h>
#include <stdio.h>

#include "ctld/ctld.h"
#include "ctld/fence.h"

void ctld_log(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "droverd: %s\n", buf);
}

enum { LOG_WINDOW_S = 10, LOG_LINES_PER_WINDOW = 10 };

void ctld_log_limited(ctld_loglimit_t *l, const char *fmt, ...)
{
    int64_t now = ctld_boot_ns();
    if (now - l->window_ns >= (int64_t)LOG_WINDOW_S * 1000000000) {
        if (l->held)
            ctld_log("... and %llu more such lines held back in the last %d s",
                     (unsigned long long)l->held, LOG_WINDOW_S);
        l->window_ns = now;
        l->lines = 0;
        l->held = 0;
    }
    if (l->lines >= LOG_LINES_PER_WINDOW) {
        l->held++;
        return;
    }
    l->lines++;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ctld_log("%s", buf);
}

void ctld_sanitize(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < n; i++) {
        unsigned char ch = (unsigned char)src[i];
        dst[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    dst[i] = '\0';
}
