/* store.h - the SQLite store (store.c). */
#ifndef DROVER_CTLD_STORE_H
#define DROVER_CTLD_STORE_H

#include "ctld/ctld.h"
#include "ctld/notes.h"

int ctld_store_open(dr_ctld_t *c, dr_err_t *err);
void ctld_store_close(dr_ctld_t *c);
/* Move the WAL into the database file (at start: a WAL lost later costs
 * only what came after). */
void ctld_store_checkpoint(dr_ctld_t *c);
int ctld_store_begin(dr_ctld_t *c, dr_err_t *err);
int ctld_store_commit(dr_ctld_t *c, dr_err_t *err);
void ctld_store_rollback(dr_ctld_t *c);
int ctld_store_put_job(dr_ctld_t *c, const ctld_job_t *cj, dr_err_t *err);
int ctld_store_put_event(dr_ctld_t *c, const dr_event_t *e, const char *detail, dr_err_t *err);
int ctld_store_put_meta(dr_ctld_t *c, const char *key, uint64_t v, dr_err_t *err);
int ctld_store_get_meta(dr_ctld_t *c, const char *key, uint64_t *v);
/* A node's drain (on) or its end (off), and their reload at start. */
int ctld_store_put_drain(dr_ctld_t *c, const char *node, bool on, const char *reason, bool is_auto,
                         dr_err_t *err);
int ctld_store_load_drains(dr_ctld_t *c, void (*cb)(dr_ctld_t *, const char *, const char *, bool),
                           dr_err_t *err);
/* Revoked nodes (api_nodes.c): written at once, read at start. */
int ctld_store_put_revoked(dr_ctld_t *c, const char *node, bool on, const char *by, dr_err_t *err);
int ctld_store_load_revoked(dr_ctld_t *c, void (*cb)(dr_ctld_t *, const char *), dr_err_t *err);
/* Node key generations (api_nodes.c, rekey): written at once, read at start. */
int ctld_store_put_key_gen(dr_ctld_t *c, const char *node, uint32_t gen, dr_err_t *err);
int ctld_store_load_key_gens(dr_ctld_t *c, void (*cb)(dr_ctld_t *, const char *, uint32_t),
                             dr_err_t *err);
/* Fair-share usage of one account ('' = no declared account), and the
 * reload of every stored row. */
int ctld_store_put_share(dr_ctld_t *c, const char *account, double raw, double decayed,
                         dr_time_t as_of, dr_err_t *err);
int ctld_store_load_shares(dr_ctld_t *c,
                           int (*cb)(dr_ctld_t *, const char *, double, double, dr_time_t,
                                     dr_err_t *),
                           dr_err_t *err);
/* A job class (classes.c): its name, owner, the kind and precision its
 * catalog prior is for, its declared speeds (NULL = none) and its runs,
 * JSON {"TYPE": [n, sum, sum2], ...}. */
typedef struct ctld_class_row {
    const char *name, *owner, *speeds, *runs;
    int kind, prec;
} ctld_class_row_t;
int ctld_store_put_class(dr_ctld_t *c, const ctld_class_row_t *r, dr_err_t *err);
int ctld_store_load_classes(dr_ctld_t *c,
                            int (*cb)(dr_ctld_t *, const ctld_class_row_t *, dr_err_t *),
                            dr_err_t *err);
/* An account's budget bookkeeping (accounts.c): day_start, day_usd,
 * month_start, month_usd; and the reload of every row. */
int ctld_store_put_budget(dr_ctld_t *c, const char *account, const double v[4], dr_err_t *err);
int ctld_store_load_budgets(dr_ctld_t *c, void (*cb)(dr_ctld_t *, const char *, const double[4]),
                            dr_err_t *err);
/* Reload: calls back once per stored non-evicted job (in id order). */
int ctld_store_load(dr_ctld_t *c, int (*cb)(dr_ctld_t *, ctld_job_t *, dr_err_t *), dr_err_t *err);
/* A terminal job no longer in memory: its JOB JSON (malloc'd) or NULL. */
char *ctld_store_job_json(dr_ctld_t *c, uint64_t id, char **user);
/* A terminal array task's JOB JSON by (parent, index), or NULL. */
char *ctld_store_task_json(dr_ctld_t *c, uint64_t parent, uint32_t index);
/* Jobs listing from the store (terminal ones): appends JSON objects. */
int ctld_store_list_terminal(dr_ctld_t *c, const char *user, uint64_t array, size_t limit,
                             void (*cb)(void *, const char *json), void *ud);
/* GET /v1/history: terminal rows by owner, account, end time in [since,
 * until) (Unix seconds; NAN = open) and state (comma-separated names; NULL
 * = any); the newest `limit`, called back oldest first with their JOB JSON. */
typedef struct ctld_history_q {
    const char *user, *account, *states; /* NULL = any */
    double since, until;
    size_t limit;
} ctld_history_q_t;
int ctld_store_history(dr_ctld_t *c, const ctld_history_q_t *q,
                       void (*cb)(void *, const char *json), void *ud);
int ctld_store_events(dr_ctld_t *c, uint64_t job,
                      void (*cb)(void *, double t, const char *what, const char *from,
                                 const char *to, const char *detail),
                      void *ud);
/* A row of the event log (GET /v1/events): a job's (node NULL) or a
 * node's (job 0); parent: the job's array or service parent, 0 if none. */
typedef struct ctld_event_row {
    uint64_t id, job, parent;
    double t;
    const char *node, *what, *from, *to, *detail;
} ctld_event_row_t;
/* The rows with an id in (after, upto], of job `job` or its tasks (0: any
 * job) and of node `node` (NULL: any), oldest first, at most `limit`: how
 * many were called back, or -1 when the store cannot be read. */
long ctld_store_event_rows(dr_ctld_t *c, uint64_t after, uint64_t upto, uint64_t job,
                           const char *node, size_t limit,
                           void (*cb)(void *, const ctld_event_row_t *), void *ud);
/* The newest event's id (0 when there is none). */
int ctld_store_event_max(dr_ctld_t *c, uint64_t *max);
/* tokens: stored as SHA-256 hashes; a token's id is its hash's first
 * CTLD_TOKEN_ID hex digits (shown and revoked by it, never usable as it) */
#define CTLD_TOKEN_ID 12
typedef struct ctld_token_row {
    const char *hash, *user, *role, *minted_by;
    double created, expires; /* Unix seconds */
} ctld_token_row_t;
int ctld_store_put_token(dr_ctld_t *c, const ctld_token_row_t *t, dr_err_t *err);
int ctld_store_find_token(dr_ctld_t *c, const char *hash_hex, char *user, size_t ulen, char *role,
                          size_t rlen, double *expires);
/* user NULL: every user's */
int ctld_store_list_tokens(dr_ctld_t *c, const char *user,
                           void (*cb)(void *, const ctld_token_row_t *), void *ud);
/* Delete by id or whole hash (one of them), only user's when user is not
 * NULL; *n: how many went. */
int ctld_store_delete_tokens(dr_ctld_t *c, const char *id, const char *hash, const char *user,
                             int *n, dr_err_t *err);

int ctld_store_put_note(dr_ctld_t *c, const ctld_note_t *n, dr_err_t *err);

#endif
