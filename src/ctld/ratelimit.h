/* ratelimit.h - submit rate limits per user (ratelimit.c). */
#ifndef DROVER_CTLD_RATELIMIT_H
#define DROVER_CTLD_RATELIMIT_H

#include "ctld/ctld.h"

/* May user submit now (--submit-rate)?  DR_ELIMIT with the limit and the
 * seconds to wait in err and *retry_s when not. */
int ctld_rate_admit(dr_ctld_t *c, const char *user, dr_time_t now, double *retry_s, dr_err_t *err);
void ctld_rate_free(dr_ctld_t *c);

#endif
