/* turn.h - the controller's turn: pass, commit, then replies and frames (turn.c). */
#ifndef DROVER_CTLD_TURN_H
#define DROVER_CTLD_TURN_H

#include "ctld/ctld.h"

void ctld_turn_schedule(dr_ctld_t *c); /* run a turn soon (after this callback) */
void ctld_want_pass(dr_ctld_t *c);
/* cj reached a terminal state: free it once written and past the next pass. */
void ctld_evict_later(dr_ctld_t *c, ctld_job_t *cj);
/* The turn's state (before the reload: it may ask for a pass), its events
 * once c->base exists, and their end. */
int ctld_turn_init(dr_ctld_t *c);
int ctld_turn_start(dr_ctld_t *c, dr_err_t *err);
void ctld_turn_free(dr_ctld_t *c);
/* Run a turn now, committing what is queued even if it could wait
 * (shutdown: what agents reported last is stored before we go; tests). */
void ctld_turn_now(dr_ctld_t *c);

#endif
