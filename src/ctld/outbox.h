/* outbox.h - replies and frames a turn sends after its commit (outbox.c). */
#ifndef DROVER_CTLD_OUTBOX_H
#define DROVER_CTLD_OUTBOX_H

#include "ctld/ctld.h"

void ctld_out_http(dr_ctld_t *c, struct evhttp_request *req, int status, char *body, uint64_t job);
void ctld_out_frame(dr_ctld_t *c, int node, int type, char *json);
void ctld_out_frame_job(dr_ctld_t *c, int node, int type, char *json, uint64_t job);
/* After the commit (committed) or a failed one: send, answer 507, or keep. */
void ctld_out_flush(dr_ctld_t *c, bool committed);
/* Anything queued?  Must the turn commit now (a reply, or a frame other
 * than an ACK)? */
bool ctld_out_pending(const dr_ctld_t *c);
bool ctld_out_urgent(const dr_ctld_t *c);
/* The jobs of the submits waiting for their reply, in order (a failed
 * commit takes them back). */
void ctld_out_each_submit(dr_ctld_t *c, void (*fn)(dr_ctld_t *, uint64_t job));
int ctld_outbox_init(dr_ctld_t *c);
void ctld_outbox_free(dr_ctld_t *c);

#endif
