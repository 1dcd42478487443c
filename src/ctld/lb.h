/* lb.h - HAProxy's backends kept at the services' ready replicas (lb_haproxy.c). */
#ifndef DROVER_CTLD_LB_H
#define DROVER_CTLD_LB_H

#include "ctld/ctld.h"

int ctld_lb_start(dr_ctld_t *c, dr_err_t *err);
void ctld_lb_free(dr_ctld_t *c);
/* Server `slot` of backend `backend` is addr:port and up, or out (maint). */
void ctld_lb_set(dr_ctld_t *c, const char *backend, uint32_t slot, const char *addr, uint16_t port,
                 bool up);
void ctld_lb_tick(dr_ctld_t *c); /* once a second: resend what is not confirmed */

#endif
