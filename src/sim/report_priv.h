/* report_priv.h - a growable string buffer shared by the report formatters
 * (report_format.c, report_svg.c).  Not part of the public API. */
#ifndef DROVER_SIM_REPORT_PRIV_H
#define DROVER_SIM_REPORT_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "drover/error.h"

typedef struct dr_report_buf {
    char *s;
    size_t n, cap;
    bool oom; /* an append failed: the result is NULL */
} dr_report_buf_t;

void dr_report_buf_puts(dr_report_buf_t *b, const char *s);
void dr_report_buf_printf(dr_report_buf_t *b, const char *fmt, ...) DR_PRINTF(2, 3);
/* The string (caller frees), or NULL if any append failed. */
char *dr_report_buf_take(dr_report_buf_t *b);

#endif
