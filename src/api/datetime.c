/* datetime.c - Unix seconds or a local "YYYY-MM-DD[THH:MM[:SS]]", read and
 * checked (datetime.h).  Pure: the one step that needs the time zone, a
 * local date to Unix seconds (mktime), is dr_datetime_parse's, inline in
 * datetime.h, so that it runs in the CLI and the controller that call it.
 *
 * Fields are read with fixed digit counts and checked here, because mktime
 * silently normalises what it is given (2024-02-30 would become March 1st)
 * and a filter that quietly means another day is worse than an error. */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "drover/datetime.h"

#define FORMS "Unix seconds or YYYY-MM-DD[THH:MM[:SS]]"

/* n decimal digits at s -> *v; false if any is not a digit. */
static bool digits(const char *s, int n, int *v)
{
    int x = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return true;
}

static int days_in_month(int y, int m)
{
    static const int d[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : d[m - 1];
}

static int parse_unix(const char *s, double *out, dr_err_t *err)
{
    size_t n = strspn(s, "0123456789");
    if (s[n] == '.')
        n += 1 + strspn(s + n + 1, "0123456789");
    if (s[n] != '\0' || n > 20)
        return dr_err_set(err, DR_EINVAL, "'%s' is not " FORMS, s);
    char *end = NULL;
    double v = strtod(s, &end);
    if (!end || *end || !isfinite(v) || v > 9.2e9)
        return dr_err_set(err, DR_EINVAL, "'%s' is not " FORMS, s);
    *out = v;
    return DR_OK;
}

int dr_datetime_read(const char *s, dr_datetime_t *out, dr_err_t *err)
{
    if (!s || !*s)
        return dr_err_set(err, DR_EINVAL, "empty: give " FORMS);
    size_t len = strlen(s);
    /* a date has its '-' at 4; Unix seconds never contain one */
    if (len < 10 || s[4] != '-') {
        double v = 0;
        int rc = parse_unix(s, &v, err);
        if (rc == DR_OK)
            *out = (dr_datetime_t){.is_unix = true, .unix_s = v};
        return rc;
    }
    int y, mo, d, h = 0, mi = 0, sec = 0;
    bool ok = digits(s, 4, &y) && s[4] == '-' && digits(s + 5, 2, &mo) && s[7] == '-' &&
              digits(s + 8, 2, &d);
    if (ok && len > 10) {
        ok = (s[10] == 'T' || s[10] == ' ') && len >= 16 && digits(s + 11, 2, &h) && s[13] == ':' &&
             digits(s + 14, 2, &mi);
        if (ok && len > 16)
            ok = len == 19 && s[16] == ':' && digits(s + 17, 2, &sec);
    }
    if (!ok)
        return dr_err_set(err, DR_EINVAL, "'%s' is not " FORMS, s);
    if (y < 1970 || y > 2200)
        return dr_err_set(err, DR_EINVAL, "'%s': year %d is out of range (1970-2200)", s, y);
    if (mo < 1 || mo > 12)
        return dr_err_set(err, DR_EINVAL, "'%s': month %02d is out of range", s, mo);
    if (d < 1 || d > days_in_month(y, mo))
        return dr_err_set(err, DR_EINVAL, "'%s': %04d-%02d has no day %02d", s, y, mo, d);
    if (h > 23 || mi > 59 || sec > 59)
        return dr_err_set(err, DR_EINVAL, "'%s': %02d:%02d:%02d is not a time of day", s, h, mi,
                          sec);
    *out =
        (dr_datetime_t){.year = y, .month = mo, .day = d, .hour = h, .minute = mi, .second = sec};
    return DR_OK;
}
