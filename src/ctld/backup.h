/* backup.h - an online copy of the store (backup.c). */
#ifndef DROVER_CTLD_BACKUP_H
#define DROVER_CTLD_BACKUP_H

#include "ctld/ctld.h"

typedef struct ctld_backup ctld_backup_t;
/* A backup in progress is answered 503 (before evhttp is freed). */
void ctld_backup_free(dr_ctld_t *c);
/* At start: the temporary copies a droverd killed during a backup left. */
void ctld_backup_sweep(dr_ctld_t *c);

#endif
