/* stats.h - GET /v1/stats samples (stats.c). */
#ifndef DROVER_CTLD_STATS_H
#define DROVER_CTLD_STATS_H

#include "ctld/ctld.h"

int ctld_stats_init(dr_ctld_t *c, dr_err_t *err);
void ctld_stats_free(dr_ctld_t *c);
void ctld_stats_tick(dr_ctld_t *c); /* once a second: a sample when one is due */

#endif
