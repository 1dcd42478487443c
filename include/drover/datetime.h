/* datetime.h - points in time as people and scripts write them, for the
 * accounting filters (`drover history --since`, GET /v1/history?since=).
 *
 * One parser shared by the CLI and the controller, so that both accept the
 * same forms and reject them with the same words.  Reading and checking the
 * text is pure (src/api/datetime.c); the last step of a local date, to Unix
 * seconds in the process's time zone (mktime), reads the zone, which the
 * pure library never does, so it is inline here and runs in the caller. */
#ifndef DROVER_DATETIME_H
#define DROVER_DATETIME_H

#include <stdbool.h>
#include <time.h>

#include "drover/error.h"

/* A point in time as written: Unix seconds, or a local date and time whose
 * fields are range-checked (no 2024-02-30, no 24:00). */
typedef struct dr_datetime {
    bool is_unix; /* Unix seconds were given: unix_s; else the fields */
    double unix_s;
    int year, month, day, hour, minute, second; /* local; month and day from 1 */
} dr_datetime_t;

/* Read a point in time: either Unix seconds ("1718000000", "1718000000.5";
 * a plain non-negative decimal) or a local date and time "YYYY-MM-DD",
 * "YYYY-MM-DDTHH:MM" or "YYYY-MM-DDTHH:MM:SS" (a space may stand for the
 * 'T'; a date alone means its midnight).  Returns DR_OK or DR_EINVAL with a
 * message that quotes the input and says what is wrong (*out untouched);
 * callers prefix the parameter name.  Pure: no time zone is read. */
int dr_datetime_read(const char *s, dr_datetime_t *out, dr_err_t *err);

/* Parse a point in time into Unix seconds: dr_datetime_read's forms, a
 * local date and time taken in the process's time zone (TZ), daylight
 * saving time as it applied that day.  Returns DR_OK or DR_EINVAL (*unix_s
 * untouched on error). */
static inline int dr_datetime_parse(const char *s, double *unix_s, dr_err_t *err)
{
    dr_datetime_t d;
    int rc = dr_datetime_read(s, &d, err);
    if (rc != DR_OK)
        return rc;
    if (d.is_unix) {
        *unix_s = d.unix_s;
        return DR_OK;
    }
    struct tm tm = {.tm_year = d.year - 1900,
                    .tm_mon = d.month - 1,
                    .tm_mday = d.day,
                    .tm_hour = d.hour,
                    .tm_min = d.minute,
                    .tm_sec = d.second,
                    .tm_isdst = -1};
    tzset();
    time_t t = mktime(&tm);
    if (t == (time_t)-1 && !(d.year == 1969 || (d.year == 1970 && d.month == 1 && d.day == 1)))
        return dr_err_set(err, DR_EINVAL, "'%s': not a representable local time", s);
    *unix_s = (double)t;
    return DR_OK;
}

#endif
