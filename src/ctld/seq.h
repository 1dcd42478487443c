/* seq.h - droverd.seq, so that no job id nor epoch is handed out twice (seq.c). */
#ifndef DROVER_CTLD_SEQ_H
#define DROVER_CTLD_SEQ_H

#include "ctld/ctld.h"

#define CTLD_SEQ_BLOCK 1000 /* ids reserved per write of droverd.seq */
int ctld_seq_read(dr_ctld_t *c, dr_err_t *err);
int ctld_seq_write(dr_ctld_t *c, uint64_t epoch, uint64_t ids_below, dr_err_t *err);
/* Before a commit that may hand out ids up to c->next_id - 1: reserve a
 * new block when they pass the reserved one. */
int ctld_seq_reserve(dr_ctld_t *c, dr_err_t *err);

#endif
