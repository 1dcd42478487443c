/* notes.h - history records beside the scheduler's (notes.c). */
#ifndef DROVER_CTLD_NOTES_H
#define DROVER_CTLD_NOTES_H

#include "ctld/ctld.h"

/* A record for a job's history that the scheduler does not log (a step's
 * start and end): written with the turn's commit. */
typedef struct ctld_note {
    uint64_t job; /* 0 for a node's record */
    int32_t node; /* a node's record (ctld_node_note): its index; -1 for a job's */
    dr_time_t t;
    char what[16];
    char from[16], to[16]; /* a node's states before and after ("" for a job's note) */
    char *detail;
} ctld_note_t;

/* Add a history record (events) to this turn's commit. */
void ctld_note(dr_ctld_t *c, uint64_t job, const char *what, const char *fmt, ...) DR_PRINTF(4, 5);
/* A node's record in the same event log (one id sequence with the jobs'):
 * `what` happened (register, lost, down, drain, resume), the node went from
 * state `from` to its state now (ctld_node_state); written with the turn's
 * commit like a job's. */
void ctld_node_note(dr_ctld_t *c, uint32_t node, const char *what, const char *from,
                    const char *fmt, ...) DR_PRINTF(5, 6);
/* The turn: this turn's notes into the open transaction; after the commit
 * they leave memory. */
int ctld_notes_write(dr_ctld_t *c, dr_err_t *err);
bool ctld_notes_pending(const dr_ctld_t *c);
void ctld_notes_clear(dr_ctld_t *c);
int ctld_notes_init(dr_ctld_t *c);
void ctld_notes_free(dr_ctld_t *c);

#endif
