/* time_limit.c - Slurm's time limits ("90", "1:30:00", "2-12", "UNLIMITED")
 * as drover reads them (time.h): shared by the job-field vocabulary
 * (src/api: --time, #SBATCH --time) and the cluster config (core/config.c:
 * a partition's MaxTime= and DefaultTime=), so that both accept the same
 * forms with the same words.  Pure: works on the string it is given. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "drover/text.h"
#include "drover/time.h"
#include "drover/util.h"

#define TIME_LIMIT_MAX_S 9000000000LL /* as dr_duration_parse */

/* "value" in messages, shortened: user text can be long. */
#define VQ       "'%.*s%s'"
#define VA(b, n) (int)((n) > 64 ? 61 : (n)), (b), (n) > 64 ? "..." : ""

/* Slurm's forms and drover's unit forms; the parsing itself is
 * dr_duration_parse's, which reads both.  What differs is only the bare
 * number, which Slurm takes as minutes. */
int dr_time_limit_parse(const char *s, dr_time_t *out, dr_err_t *err)
{
    if (!s || dr_is_blank(s))
        return dr_err_set(err, DR_EINVAL, "empty time");
    size_t n;
    const char *b = dr_trim_span(s, &n); /* without blanks around it: [b, b + n) */
    if ((n == 9 && strncasecmp(b, "unlimited", 9) == 0) ||
        (n == 8 && strncasecmp(b, "infinite", 8) == 0)) {
        *out = 0;
        return DR_OK;
    }
    bool bare = !memchr(b, ':', n) && !memchr(b, '-', n) &&
                (isdigit((unsigned char)b[n - 1]) || b[n - 1] == '.');
    if (bare) {
        /* whole minutes: decimal digits only, at most TIME_LIMIT_MAX_S / 60 */
        const uint64_t max = (uint64_t)(TIME_LIMIT_MAX_S / 60);
        uint64_t min = 0;
        bool digits = true, fits = true;
        for (size_t i = 0; i < n; i++) {
            if (!isdigit((unsigned char)b[i])) {
                digits = false;
                break;
            }
            uint64_t digit = (uint64_t)(b[i] - '0');
            if (min > max / 10 || digit > max - min * 10)
                fits = false;
            else
                min = min * 10 + digit;
        }
        if (digits && !fits)
            return dr_err_set(err, DR_EINVAL, VQ " minutes is too long (at most %lld)", VA(b, n),
                              TIME_LIMIT_MAX_S / 60);
        if (!digits)
            return dr_err_set(err, DR_EINVAL,
                              VQ " is not a time: a number without a unit is whole minutes "
                                 "(as in Slurm); write 90s, 1.5h, 1:30:00 ...",
                              VA(b, n));
        *out = (dr_time_t)min * 60 * DR_NSEC_PER_SEC;
        return DR_OK;
    }
    dr_err_t why = {0};
    if (dr_duration_parse_err(s, out, &why) != 0)
        return dr_err_set(err, why.code,
                          VQ " is not a time (minutes, MM:SS, [D-]HH:MM:SS, D-HH[:MM], 90s, 15m, "
                             "2h, 3d): %s",
                          VA(b, n), why.msg);
    return DR_OK;
}
