/* events.h - GET /v1/events, the event log as a list or a live SSE stream (events.c). */
#ifndef DROVER_CTLD_EVENTS_H
#define DROVER_CTLD_EVENTS_H

#include "ctld/ctld.h"
#include "ctld/http.h"

int ctld_events_start(dr_ctld_t *c, dr_err_t *err);
/* After a commit: the rows it wrote go to every open stream. */
void ctld_events_committed(dr_ctld_t *c);
/* Controller shutdown: every stream ends cleanly. */
void ctld_events_free(dr_ctld_t *c);
struct ctld_who;
void ctld_api_events(dr_ctld_t *c, struct evhttp_request *req, const struct ctld_who *who);

#endif
