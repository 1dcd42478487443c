/* truth.c - lookups in the simulator's table of true job sizes (truth.h). */
#include "drover/truth.h"

#include <math.h>

double dr_truth_work(const dr_truth_t *t, const dr_job_t *j)
{
    if (!t || !t->jobs || j < t->jobs || j >= t->jobs + t->n)
        return NAN;
    return t->work[j - t->jobs];
}

double dr_truth_remaining(const dr_truth_t *t, const dr_job_t *j, dr_time_t now)
{
    double w = dr_truth_work(t, j);
    if (isnan(w))
        return NAN;
    double rem = w - dr_job_work_done(j, now);
    return rem > 0 ? rem : 0;
}
