/* crashpoint.h - named crash points for tests (crashpoint.c). */
#ifndef DROVER_CTLD_CRASHPOINT_H
#define DROVER_CTLD_CRASHPOINT_H

#include "ctld/ctld.h"

/* droverd --test-crash-at NAME[:N] (tests only) - SIGKILL at a named point,
 * to prove a crash there loses nothing and runs nothing twice */
extern const char *ctld_crash_at;                     /* NULL: unarmed */
int ctld_crash_init(const char *spec, dr_err_t *err); /* at start: NAME[:N] or NULL */
bool ctld_crash_due(const char *name);                /* counts a reach of the armed point */
_Noreturn void ctld_crash_now(dr_ctld_t *c, const char *name); /* flush to agents, SIGKILL */
/* Reached now, fires after this turn's commit, before its replies and frames. */
void ctld_crash_after_commit(const char *name);
void ctld_crash_committed(dr_ctld_t *c);
#define CTLD_CRASH_POINT(c, name)                                                                  \
    do {                                                                                           \
        if (ctld_crash_at && ctld_crash_due(name))                                                 \
            ctld_crash_now(c, name);                                                               \
    } while (0)

#endif
