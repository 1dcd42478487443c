/* clock.c - the controller's clock: wall time that never goes back (the
 * event log is time-ordered). */

#include <time.h>

#include "ctld/ctld.h"

/* Wall-clock time, never going backwards (the event log is time-ordered). */
dr_time_t ctld_now(dr_ctld_t *c)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    dr_time_t t = (dr_time_t)ts.tv_sec * DR_NSEC_PER_SEC + ts.tv_nsec;
    if (t < c->last_now)
        t = c->last_now;
    c->last_now = t;
    return t;
}
