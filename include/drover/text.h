/* text.h - the small text helpers the loaders share: blanks trimmed from a
 * value, and a CSV file read as a table (a header naming the columns, then
 * rows as wide as it).  Durations in words are in time.h
 * (dr_duration_format), beside their parser.  Pure. */
#ifndef DROVER_TEXT_H
#define DROVER_TEXT_H

#include <stddef.h>

#include "drover/error.h"
#include "drover/util.h"

/* s without its leading and trailing white space (isspace): the first
 * character that is not, and in *n the length up to the last one.  s is not
 * changed. */
const char *dr_trim_span(const char *s, size_t *n);
/* The same in place: s ends after its last non-blank character; returns the
 * first one (a pointer into s). */
char *dr_trim(char *s);

/* dr_csv_init(c, buf, len, ',') past a UTF-8 byte order mark, if any. */
void dr_csv_open(dr_csv_t *c, const char *buf, size_t len);
/* The first record of the file `name`, its header: its number of fields,
 * or DR_EINVAL / DR_ENOMEM with err set ("NAME: empty file (no header)",
 * "NAME:LINE: unterminated quote", "NAME: out of memory"). */
int dr_csv_header(dr_csv_t *c, const char *name, dr_err_t *err);
/* The next record that is not a line of blanks: its number of fields, 0 at
 * the end, or an error as dr_csv_header's.  With ncols > 0 (the header's
 * width) a record of another width is DR_EINVAL ("NAME:LINE: row has N
 * fields, the header has M"). */
int dr_csv_row(dr_csv_t *c, const char *name, size_t ncols, dr_err_t *err);

#endif
