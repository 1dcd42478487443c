/* datetime.h - points in time as people and scripts write them, for the
 * accounting filters (`drover history --since`, GET /v1/history?since=).
 *
 * One parser shared by the CLI and the controller, so that both accept the
 * same forms and reject them with the same words. */
#ifndef DROVER_DATETIME_H
#define DROVER_DATETIME_H

#include "drover/error.h"

/* Parse a point in time into Unix seconds: either Unix seconds ("1718000000",
 * "1718000000.5"; a plain non-negative decimal) or a local date and time
 * "YYYY-MM-DD", "YYYY-MM-DDTHH:MM" or "YYYY-MM-DDTHH:MM:SS" (a space may
 * stand for the 'T'; a date alone means its midnight).  Local means the
 * process's time zone (TZ), daylight saving time as it applied that day.
 * Fields are range-checked (no 2024-02-30, no 24:00).  Returns DR_OK or
 * DR_EINVAL with a message that quotes the input and says what is wrong;
 * callers prefix the parameter name. */
int dr_datetime_parse(const char *s, double *unix_s, dr_err_t *err);

#endif
