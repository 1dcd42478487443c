/* report_priv.h - what the report formatters share (report_format.c,
 * report_svg.c, compare.c): a growable string buffer, and a report as a
 * JSON object.  Not part of the public API. */
#ifndef DROVER_SIM_REPORT_PRIV_H
#define DROVER_SIM_REPORT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "drover/error.h"
#include "drover/report.h"

typedef struct dr_report_buf {
    char *s;
    size_t n, cap;
    bool oom; /* an append failed: the result is NULL */
} dr_report_buf_t;

void dr_report_buf_puts(dr_report_buf_t *b, const char *s);
void dr_report_buf_printf(dr_report_buf_t *b, const char *fmt, ...) DR_PRINTF(2, 3);
/* The string (caller frees), or NULL if any append failed. */
char *dr_report_buf_take(dr_report_buf_t *b);

/* One report as dr_report_json writes it (a new reference; NULL when out
 * of memory). */
json_t *dr_report_json_object(const dr_report_t *r);
/* A number, or null when it is not finite (unknown). */
int dr_report_json_num(json_t *o, const char *key, double v);
int dr_report_json_int(json_t *o, const char *key, uint64_t v);

#endif
