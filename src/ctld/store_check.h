/* store_check.h - a store droverd does not start on, and why (store_check.c). */
#ifndef DROVER_CTLD_STORE_CHECK_H
#define DROVER_CTLD_STORE_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include "ctld/ctld.h"

enum {
    CTLD_STORE_OK,
    CTLD_STORE_DAMAGED,
    CTLD_STORE_EMPTY,
    CTLD_STORE_MISSING,
    CTLD_STORE_FOREIGN
};
/* Before opening: a missing store that droverd.seq says existed, an empty
 * file (both refused without --init); *fresh: nothing there, a first start. */
int ctld_store_vet_path(dr_ctld_t *c, const char *path, bool *fresh, dr_err_t *err);
/* Once open: PRAGMA quick_check, then a drover store, an empty one (refused
 * without --init) or another application's (always refused). */
int ctld_store_vet_db(dr_ctld_t *c, const char *path, dr_err_t *err);
/* The recovery steps for c->store_refused, for the operator. */
void ctld_store_advise(const dr_ctld_t *c, FILE *f);
/* droverd --check-store: PRAGMA integrity_check of DIR/droverd.db,
 * read-only; the exit status (0 whole, 1 not). */
int ctld_store_check_only(const char *state_dir);

#endif
