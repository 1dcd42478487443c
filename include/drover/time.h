/* time.h - drover's one representation of time.
 *
 * dr_time_t is a signed 64-bit count of nanoseconds.  In the simulator it is
 * time since the start of the trace; in the controller it is the Unix epoch.
 * The core never reads a clock: `now` is always passed in. */
#ifndef DROVER_TIME_H
#define DROVER_TIME_H

#include <stdint.h>

#include "drover/error.h"

typedef int64_t dr_time_t;

#define DR_NSEC_PER_SEC 1000000000LL
#define DR_TIME_NEVER   INT64_MAX

static inline dr_time_t dr_time_from_s(double s)
{
    if (s >= 9.2e9)
        return DR_TIME_NEVER;
    if (s <= -9.2e9)
        return -DR_TIME_NEVER;
    return (dr_time_t)(s * 1e9 + (s >= 0 ? 0.5 : -0.5));
}

/* t + d, saturating at +-DR_TIME_NEVER: a time past the end of the
 * representable range is "never", not a wrapped-around time in the past. */
static inline dr_time_t dr_time_add(dr_time_t t, dr_time_t d)
{
    if (d > 0 && t > DR_TIME_NEVER - d)
        return DR_TIME_NEVER;
    if (d < 0 && t < -DR_TIME_NEVER - d)
        return -DR_TIME_NEVER;
    return t + d;
}

static inline double dr_time_to_s(dr_time_t t)
{
    return (double)t / 1e9;
}

/* Parse a duration: a number with an optional unit - us, ms, s, m
 * (minutes), h, d, w (also wk, weeks), mo (months of 30.4375 days; also
 * month, months), y (365.25 days; also yr), case ignored - such as "90",
 * "200ms", "15m", "2h", "3d", "4w", "18mo", "2y", or Slurm's colon forms
 * "1:30:00", "30:00" (mm:ss), "2-12:00:00", "2-12" (days-hours[:mm[:ss]]).
 * Plain numbers are seconds.  Every part is a plain decimal number (no
 * sign, "nan", "inf" or hex) and the whole is at most 9e9 seconds (~285
 * years).  Returns 0 or DR_EINVAL; the _err form also says which part is
 * bad and why.  The one duration parser of the library
 * (dr_plan_parse_duration is a wrapper in seconds). */
int dr_duration_parse(const char *s, dr_time_t *out);
int dr_duration_parse_err(const char *s, dr_time_t *out, dr_err_t *err);

/* How dr_duration_format writes a duration. */
typedef enum dr_duration_style {
    /* the planner's prose: "250 ms", "12.5 s", "3.2 min", "10.5 h" (under 3
     * days), "4.2 days" (under 90), "8.4 months" (under 3 years), "3.1 years" */
    DR_DURATION_WORDS = 0,
    /* the same scale for table columns: "250 ms" ... "4.2 d", "8.4 mo", "3.1 y" */
    DR_DURATION_SHORT,
    /* Slurm's elapsed time, as the job tables show it: "M:SS", "H:MM:SS",
     * "D-HH:MM:SS" (whole seconds, rounded down; negative counts as 0) */
    DR_DURATION_CLOCK
} dr_duration_style_t;

/* Seconds written for people in `style`: NaN as "-" (unknown), and in the
 * human scales infinity as "never".  The library's one duration formatter
 * (the CLI's cli_fmt_duration is DR_DURATION_CLOCK).  Returns buf. */
char *dr_duration_format(double s, dr_duration_style_t style, char *buf, size_t n);

/* Parse Slurm/drover time limits: "MM", "MM:SS", "HH:MM:SS", "D-HH",
 * "D-HH:MM", "D-HH:MM:SS" (a bare number is minutes, as in Slurm) and
 * "90s", "15m", "2h", "3d"; "0", "UNLIMITED", "infinite" = none (0).  The
 * job-field vocabulary (--time) and the cluster config (MaxTime=,
 * DefaultTime=) share it (src/core/time_limit.c). */
int dr_time_limit_parse(const char *s, dr_time_t *out, dr_err_t *err);

#endif
