/* store.c - droverd's durable state in SQLite (WAL mode).
 *
 * One row per job (array parents are one row however many tasks they
 * have; a task gets its row when it is materialised), one per event, the
 * controller's counters in meta, bearer tokens as SHA-256 hashes.  A row
 * holds the job's spec (canonical jobspec JSON), its runtime state as JSON
 * (rt) and, once terminal, the API's JOB object (final), so a finished job
 * can leave memory and still be shown.  The driver writes a turn's changes
 * in one transaction and acknowledges nothing before COMMIT returns; with
 * synchronous=FULL that means it is on disk. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>
#include <sqlite3.h>

#include "ctld/ctld.h"
#include "ctld/holds.h"
#include "ctld/arrays.h"
#include "ctld/notes.h"
#include "ctld/services.h"
#include "ctld/steps.h"
#include "ctld/store.h"
#include "ctld/store_check.h"
#include "drover/util.h"

static const char *const schema =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS jobs(id INTEGER PRIMARY KEY, user TEXT NOT NULL,"
    " uid INTEGER NOT NULL, gid INTEGER NOT NULL, parent INTEGER NOT NULL,"
    " array_index INTEGER NOT NULL, terminal INTEGER NOT NULL, spec TEXT NOT NULL,"
    " rt TEXT NOT NULL, final TEXT);"
    "CREATE INDEX IF NOT EXISTS jobs_terminal ON jobs(terminal, id);"
    "CREATE INDEX IF NOT EXISTS jobs_parent ON jobs(parent, id);"
    "CREATE TABLE IF NOT EXISTS events(seq INTEGER PRIMARY KEY, job INTEGER NOT NULL,"
    " t REAL NOT NULL, what TEXT NOT NULL, from_s TEXT NOT NULL, to_s TEXT NOT NULL,"
    " detail TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS events_job ON events(job, seq);"
    "CREATE TABLE IF NOT EXISTS tokens(hash TEXT PRIMARY KEY, user TEXT NOT NULL,"
    " role TEXT NOT NULL);"
    /* fair-share usage per account ('' = jobs with no declared account):
     * GPU-seconds raw and decayed as of as_of (ns, the controller's clock) */
    "CREATE TABLE IF NOT EXISTS fairshare(account TEXT PRIMARY KEY, raw REAL NOT NULL,"
    " decayed REAL NOT NULL, as_of INTEGER NOT NULL);"
    /* drained nodes (drover nodes drain, NodeFailDrain=): they stay drained
     * across a restart until resumed */
    "CREATE TABLE IF NOT EXISTS drains(node TEXT PRIMARY KEY, reason TEXT NOT NULL,"
    " auto INTEGER NOT NULL);"
    /* revoked nodes (drover nodes revoke): their agents are refused, even
     * with the right node key, until unrevoked */
    "CREATE TABLE IF NOT EXISTS revoked(node TEXT PRIMARY KEY, by TEXT NOT NULL,"
    " at INTEGER NOT NULL);"
    /* node key generations past 0 (drover nodes rekey): a node's older keys
     * are refused for good */
    "CREATE TABLE IF NOT EXISTS nodekeys(node TEXT PRIMARY KEY, gen INTEGER NOT NULL);"
    /* job classes (classes.c): what their completed runs taught of their
     * speed on each GPU type, and what the prior was */
    "CREATE TABLE IF NOT EXISTS classes(name TEXT PRIMARY KEY, owner TEXT NOT NULL,"
    " kind INTEGER NOT NULL, prec INTEGER NOT NULL, speeds TEXT, runs TEXT NOT NULL);"
    /* account budgets (accounts.c): what ended runs spent in the current
     * UTC day and calendar month, which began at day_start / month_start */
    "CREATE TABLE IF NOT EXISTS budgets(account TEXT PRIMARY KEY, day_start REAL NOT NULL,"
    " day_usd REAL NOT NULL, month_start REAL NOT NULL, month_usd REAL NOT NULL);";

/* Columns added after the first release, for the accounting filters of GET
 * /v1/history: the end time (Unix seconds), the account and the state name
 * of a row, written by ctld_store_put_job.  Added by ALTER TABLE when an
 * older database lacks them (the CREATE above stays as first shipped, so
 * both paths end with the same table). */
static const char *const hist_cols[][2] = {
    {"end_t", "REAL"}, {"account", "TEXT"}, {"state", "TEXT"}};

/* Node events (GET /v1/events) share the events table, so that one
 * sequence orders them with the jobs': job 0 and the node's name in this
 * column (NULL in a job's row), added by ALTER TABLE like hist_cols. */
static int migrate_events(dr_ctld_t *c, dr_err_t *err);

/* A store found malformed while it is read (past quick_check: a page
 * damaged since, or damage quick_check cannot see) is refused with the same
 * recovery steps at start (ctld_store_advise). */
static void note_damage(dr_ctld_t *c)
{
    int e = sqlite3_errcode(c->db);
    if (e == SQLITE_CORRUPT || e == SQLITE_NOTADB)
        c->store_refused = CTLD_STORE_DAMAGED;
}

/* Tokens got a creation time, an expiry (Unix seconds) and who minted
 * them (for `drover token list` and the impersonation log), added by ALTER
 * TABLE like hist_cols; tokens from before expire TokenTtl= after the
 * upgrade (they were minted without one). */
static int migrate_tokens(dr_ctld_t *c, dr_err_t *err);

static int db_fail(dr_ctld_t *c, dr_err_t *err, const char *what)
{
    note_damage(c);
    return dr_err_set(err, DR_EIO, "store: %s: %s", what, sqlite3_errmsg(c->db));
}

static int exec(dr_ctld_t *c, const char *sql, dr_err_t *err)
{
    char *msg = NULL;
    if (sqlite3_exec(c->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        note_damage(c);
        int rc = dr_err_set(err, DR_EIO, "store: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return rc;
    }
    return DR_OK;
}

static bool has_column(dr_ctld_t *c, const char *table, const char *col)
{
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
    sqlite3_stmt *st = NULL;
    bool found = false;
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK)
        return false;
    while (!found && sqlite3_step(st) == SQLITE_ROW)
        found = strcmp((const char *)sqlite3_column_text(st, 1), col) == 0;
    sqlite3_finalize(st);
    return found;
}

/* Idempotent: adds what is missing, fills it in from the rows' final JOB
 * objects (so jobs that ended before the upgrade are found by the filters
 * too), then makes sure of the index. */
static int migrate_hist(dr_ctld_t *c, dr_err_t *err)
{
    bool added = false;
    for (size_t i = 0; i < sizeof hist_cols / sizeof *hist_cols; i++) {
        if (has_column(c, "jobs", hist_cols[i][0]))
            continue;
        char sql[128];
        snprintf(sql, sizeof sql, "ALTER TABLE jobs ADD COLUMN %s %s;", hist_cols[i][0],
                 hist_cols[i][1]);
        int rc = exec(c, sql, err);
        if (rc != DR_OK)
            return rc;
        added = true;
    }
    if (added) {
        int rc = exec(c,
                      "UPDATE jobs SET end_t = json_extract(final, '$.end_time'),"
                      " account = json_extract(final, '$.account'),"
                      " state = json_extract(final, '$.state') WHERE final IS NOT NULL;",
                      err);
        if (rc != DR_OK)
            return rc;
    }
    return exec(c, "CREATE INDEX IF NOT EXISTS jobs_end ON jobs(terminal, end_t);", err);
}

static int migrate_events(dr_ctld_t *c, dr_err_t *err)
{
    if (!has_column(c, "events", "node")) {
        int rc = exec(c, "ALTER TABLE events ADD COLUMN node TEXT;", err);
        if (rc != DR_OK)
            return rc;
    }
    /* partial: job rows (the many) are not in it; `node = ?` implies it */
    return exec(c,
                "CREATE INDEX IF NOT EXISTS events_node ON events(node, seq)"
                " WHERE node IS NOT NULL;",
                err);
}

static int migrate_tokens(dr_ctld_t *c, dr_err_t *err)
{
    static const char *const cols[][2] = {
        {"created", "REAL"}, {"expires", "REAL"}, {"minted_by", "TEXT"}};
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) {
        if (has_column(c, "tokens", cols[i][0]))
            continue;
        char sql[128];
        snprintf(sql, sizeof sql, "ALTER TABLE tokens ADD COLUMN %s %s;", cols[i][0], cols[i][1]);
        int rc = exec(c, sql, err);
        if (rc != DR_OK)
            return rc;
    }
    char sql[256];
    double now = dr_time_to_s(ctld_now(c));
    snprintf(sql, sizeof sql,
             "UPDATE tokens SET created = %.3f, expires = %.3f, minted_by = user"
             " WHERE expires IS NULL;",
             now, now + dr_time_to_s(c->cl.site.token_ttl));
    return exec(c, sql, err);
}

int ctld_store_open(dr_ctld_t *c, dr_err_t *err)
{
    char path[4096];
    if (mkdir(c->o.state_dir, 0700) != 0) {
        struct stat st;
        if (stat(c->o.state_dir, &st) != 0 || !S_ISDIR(st.st_mode))
            return dr_err_set(err, DR_EIO, "--state %s: cannot create the directory",
                              c->o.state_dir);
    }
    snprintf(path, sizeof path, "%s/droverd.db", c->o.state_dir);
    /* a store that is missing, emptied, foreign or damaged is refused
     * before anything is written to it (store_check.c) */
    bool fresh = false;
    int rc = ctld_store_vet_path(c, path, &fresh, err);
    if (rc != DR_OK)
        return rc;
    if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK)
        return dr_err_set(err, DR_EIO, "store: open %s: %s", path,
                          c->db ? sqlite3_errmsg(c->db) : "out of memory");
    sqlite3_busy_timeout(c->db, 5000);
    if (!fresh && (rc = ctld_store_vet_db(c, path, err)) != DR_OK)
        return rc;
    rc = exec(c, "PRAGMA journal_mode=WAL;", err);
    if (rc == DR_OK)
        rc = exec(c, c->o.sync_full ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;",
                  err);
    if (rc == DR_OK)
        rc = exec(c, schema, err);
    if (rc == DR_OK)
        rc = migrate_hist(c, err);
    if (rc == DR_OK)
        rc = migrate_events(c, err);
    if (rc == DR_OK)
        rc = migrate_tokens(c, err);
    if (rc != DR_OK)
        dr_err_prefix(err, "%s: ", path);
    return rc;
}

void ctld_store_checkpoint(dr_ctld_t *c)
{
    if (sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK)
        ctld_log("store: checkpoint: %s", sqlite3_errmsg(c->db));
}

void ctld_store_close(dr_ctld_t *c)
{
    for (size_t i = 0; i < sizeof c->stmts / sizeof *c->stmts; i++)
        if (c->stmts[i])
            sqlite3_finalize(c->stmts[i]);
    if (c->db)
        sqlite3_close(c->db);
    c->db = NULL;
}

int ctld_store_begin(dr_ctld_t *c, dr_err_t *err)
{
    return exec(c, "BEGIN IMMEDIATE;", err);
}

int ctld_store_commit(dr_ctld_t *c, dr_err_t *err)
{
    return exec(c, "COMMIT;", err);
}

void ctld_store_rollback(dr_ctld_t *c)
{
    sqlite3_exec(c->db, "ROLLBACK;", NULL, NULL, NULL);
}

static sqlite3_stmt *prep(dr_ctld_t *c, const char *sql, dr_err_t *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) {
        db_fail(c, err, "prepare");
        return NULL;
    }
    return st;
}

static int step_done(dr_ctld_t *c, sqlite3_stmt *st, const char *what, dr_err_t *err)
{
    int rc = sqlite3_step(st) == SQLITE_DONE ? DR_OK : db_fail(c, err, what);
    sqlite3_finalize(st);
    return rc;
}

/* The statements of every turn, prepared once. */
enum { ST_JOB, ST_EVENT, ST_META, ST_SHARE, ST_CLASS };
static sqlite3_stmt *cached(dr_ctld_t *c, int slot, const char *sql, dr_err_t *err)
{
    if (!c->stmts[slot])
        c->stmts[slot] = prep(c, sql, err);
    return c->stmts[slot];
}

static int step_reset(dr_ctld_t *c, sqlite3_stmt *st, const char *what, dr_err_t *err)
{
    int rc = sqlite3_step(st) == SQLITE_DONE ? DR_OK : db_fail(c, err, what);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}

int ctld_store_put_meta(dr_ctld_t *c, const char *key, uint64_t v, dr_err_t *err)
{
    sqlite3_stmt *st =
        cached(c, ST_META, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", err);
    if (!st)
        return DR_EIO;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)v);
    return step_reset(c, st, "write meta", err);
}

int ctld_store_put_share(dr_ctld_t *c, const char *account, double raw, double decayed,
                         dr_time_t as_of, dr_err_t *err)
{
    sqlite3_stmt *st = cached(c, ST_SHARE,
                              "INSERT OR REPLACE INTO fairshare(account, raw, decayed, as_of) "
                              "VALUES(?, ?, ?, ?)",
                              err);
    if (!st)
        return DR_EIO;
    sqlite3_bind_text(st, 1, account, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 2, raw);
    sqlite3_bind_double(st, 3, decayed);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)as_of);
    return step_reset(c, st, "write fair-share usage", err);
}

int ctld_store_load_shares(dr_ctld_t *c,
                           int (*cb)(dr_ctld_t *, const char *, double, double, dr_time_t,
                                     dr_err_t *),
                           dr_err_t *err)
{
    sqlite3_stmt *st =
        prep(c, "SELECT account, raw, decayed, as_of FROM fairshare ORDER BY account", err);
    if (!st)
        return DR_EIO;
    int rc = DR_OK;
    while (rc == DR_OK && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        rc = cb(c, name ? name : "", sqlite3_column_double(st, 1), sqlite3_column_double(st, 2),
                (dr_time_t)sqlite3_column_int64(st, 3), err);
    }
    sqlite3_finalize(st);
    return rc;
}

int ctld_store_put_class(dr_ctld_t *c, const ctld_class_row_t *r, dr_err_t *err)
{
    sqlite3_stmt *st =
        cached(c, ST_CLASS,
               "INSERT OR REPLACE INTO classes(name, owner, kind, prec, speeds, runs) "
               "VALUES(?, ?, ?, ?, ?, ?)",
               err);
    if (!st)
        return DR_EIO;
    sqlite3_bind_text(st, 1, r->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r->owner, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, r->kind);
    sqlite3_bind_int(st, 4, r->prec);
    if (r->speeds)
        sqlite3_bind_text(st, 5, r->speeds, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 5);
    sqlite3_bind_text(st, 6, r->runs, -1, SQLITE_STATIC);
    return step_reset(c, st, "write a job class", err);
}

int ctld_store_load_classes(dr_ctld_t *c,
                            int (*cb)(dr_ctld_t *, const ctld_class_row_t *, dr_err_t *),
                            dr_err_t *err)
{
    sqlite3_stmt *st =
        prep(c, "SELECT name, owner, kind, prec, speeds, runs FROM classes ORDER BY name", err);
    if (!st)
        return DR_EIO;
    int rc = DR_OK;
    while (rc == DR_OK && sqlite3_step(st) == SQLITE_ROW) {
        ctld_class_row_t r = {
            .name = (const char *)sqlite3_column_text(st, 0),
            .owner = (const char *)sqlite3_column_text(st, 1),
            .kind = sqlite3_column_int(st, 2),
            .prec = sqlite3_column_int(st, 3),
            .speeds = (const char *)sqlite3_column_text(st, 4),
            .runs = (const char *)sqlite3_column_text(st, 5),
        };
        if (r.name && r.owner && r.runs)
            rc = cb(c, &r, err);
    }
    sqlite3_finalize(st);
    return rc;
}

int ctld_store_put_budget(dr_ctld_t *c, const char *account, const double v[4], dr_err_t *err)
{
    sqlite3_stmt *st = prep(c,
                            "INSERT OR REPLACE INTO budgets(account, day_start, day_usd, "
                            "month_start, month_usd) VALUES(?, ?, ?, ?, ?)",
                            err);
    if (!st)
        return DR_EIO;
    sqlite3_bind_text(st, 1, account, -1, SQLITE_STATIC);
    for (int i = 0; i < 4; i++)
        sqlite3_bind_double(st, 2 + i, v[i]);
    return step_done(c, st, "write a budget", err);
}

int ctld_store_load_budgets(dr_ctld_t *c, void (*cb)(dr_ctld_t *, const char *, const double[4]),
                            dr_err_t *err)
{
    sqlite3_stmt *st =
        prep(c, "SELECT account, day_start, day_usd, month_start, month_usd FROM budgets", err);
    if (!st)
        return DR_EIO;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *a = (const char *)sqlite3_column_text(st, 0);
        double v[4];
        for (int i = 0; i < 4; i++)
            v[i] = sqlite3_column_double(st, 1 + i);
        if (a)
            cb(c, a, v);
    }
    sqlite3_finalize(st);
    return DR_OK;
}

int ctld_store_put_drain(dr_ctld_t *c, const char *node, bool on, const char *reason, bool is_auto,
                         dr_err_t *err)
{
    sqlite3_stmt *st = prep(c,
                            on ? "INSERT OR REPLACE INTO drains(node, reason, auto) VALUES(?, ?, ?)"
                               : "DELETE FROM drains WHERE node = ?",
                            err);
    if (!st)
        return DR_EIO;
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    if (on) {
        sqlite3_bind_text(st, 2, reason, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 3, is_auto);
    }
    int rc = step_done(c, st, "write a node's drain", err);
    return rc;
}

int ctld_store_load_drains(dr_ctld_t *c, void (*cb)(dr_ctld_t *, const char *, const char *, bool),
                           dr_err_t *err)
{
    sqlite3_stmt *st = prep(c, "SELECT node, reason, auto FROM drains ORDER BY node", err);
    if (!st)
        return DR_EIO;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *node = (const char *)sqlite3_column_text(st, 0);
        const char *reason = (const char *)sqlite3_column_text(st, 1);
        cb(c, node ? node : "", reason ? reason : "", sqlite3_column_int(st, 2) != 0);
    }
    sqlite3_finalize(st);
    return DR_OK;
}

int ctld_store_put_revoked(dr_ctld_t *c, const char *node, bool on, const char *by, dr_err_t *err)
{
    sqlite3_stmt *st = prep(c,
                            on ? "INSERT OR REPLACE INTO revoked(node, by, at) VALUES(?, ?, ?)"
                               : "DELETE FROM revoked WHERE node = ?",
                            err);
    if (!st)
        return DR_EIO;
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    if (on) {
        sqlite3_bind_text(st, 2, by, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)(ctld_now(c) / DR_NSEC_PER_SEC));
    }
    return step_done(c, st, "write a node's revocation", err);
}

int ctld_store_load_revoked(dr_ctld_t *c, void (*cb)(dr_ctld_t *, const char *), dr_err_t *err)
{
    sqlite3_stmt *st = prep(c, "SELECT node FROM revoked ORDER BY node", err);
    if (!st)
        return DR_EIO;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *node = (const char *)sqlite3_column_text(st, 0);
        cb(c, node ? node : "");
    }
    sqlite3_finalize(st);
    return DR_OK;
}

int ctld_store_put_key_gen(dr_ctld_t *c, const char *node, uint32_t gen, dr_err_t *err)
{
    sqlite3_stmt *st = prep(c, "INSERT OR REPLACE INTO nodekeys(node, gen) VALUES(?, ?)", err);
    if (!st)
        return DR_EIO;
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, gen);
    return step_done(c, st, "write a node's key generation", err);
}

int ctld_store_load_key_gens(dr_ctld_t *c, void (*cb)(dr_ctld_t *, const char *, uint32_t),
                             dr_err_t *err)
{
    sqlite3_stmt *st = prep(c, "SELECT node, gen FROM nodekeys ORDER BY node", err);
    if (!st)
        return DR_EIO;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *node = (const char *)sqlite3_column_text(st, 0);
        sqlite3_int64 g = sqlite3_column_int64(st, 1);
        cb(c, node ? node : "", g < 0 || g > UINT32_MAX ? 0 : (uint32_t)g);
    }
    sqlite3_finalize(st);
    return DR_OK;
}

int ctld_store_get_meta(dr_ctld_t *c, const char *key, uint64_t *v)
{
    sqlite3_stmt *st = prep(c, "SELECT value FROM meta WHERE key = ?", NULL);
    if (!st)
        return DR_EIO;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int rc = DR_ENOENT;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *v = (uint64_t)sqlite3_column_int64(st, 0);
        rc = DR_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- a job's runtime state as JSON ---- */

static json_t *alloc_json(const dr_alloc_t *a)
{
    json_t *slots = json_array();
    for (uint32_t i = 0; i < a->nslots; i++)
        json_array_append_new(slots, json_pack("[iii]", (json_int_t)a->slots[i].node,
                                               (json_int_t)a->slots[i].gpu,
                                               (json_int_t)a->slots[i].milli));
    return json_pack("{s:i,s:i,s:i,s:i,s:I,s:o}", "type", (json_int_t)a->type, "nnodes",
                     (json_int_t)a->nnodes, "locality", (json_int_t)a->locality, "cpu",
                     (json_int_t)a->cpu_milli_per_node, "mem", (json_int_t)a->mem_mb_per_node,
                     "slots", slots);
}

static char *rt_json(const ctld_job_t *cj)
{
    const dr_job_t *j = &cj->j;
    json_t *o = json_pack("{s:i,s:i,s:I,s:I,s:I,s:I,s:i,s:i,s:i,s:b,s:s,s:f,s:b,s:i,s:f}", "state",
                          (json_int_t)j->state, "gen", (json_int_t)cj->gen, "submit",
                          (json_int_t)j->submit, "first_start", (json_int_t)j->first_start, "start",
                          (json_int_t)j->start, "end", (json_int_t)j->end, "nstarts",
                          (json_int_t)j->nstarts, "exit_code", (json_int_t)cj->exit_code, "signal",
                          (json_int_t)cj->signal, "has_exit", cj->has_exit, "reason", cj->reason,
                          "cost", cj->cost_usd, "kill_sent", cj->kill_sent, "kill_final",
                          (json_int_t)cj->kill_final, "attained", j->attained_gpu_s);
    json_object_set_new(o, "got_type", json_integer(cj->got_type));
    if (cj->hold)
        json_object_set_new(o, "hold", json_integer(cj->hold));
    if (cj->lease_lost) /* a node lost: requeued once every rank is over */
        json_object_set_new(o, "lease_lost", json_true());
    json_object_set_new(o, "got_gpus", json_integer(cj->got_gpus));
    if (cj->ckpt_gen)
        json_object_set_new(o, "ckpt_gen", json_integer(cj->ckpt_gen));
    if (j->state == DR_JOB_STARTING || j->state == DR_JOB_RUNNING || j->state == DR_JOB_COMPLETING)
        json_object_set_new(o, "alloc", alloc_json(&j->alloc));
    /* preempted and stopping (stop.c): what its ranks still hold, so that a
     * restarted controller keeps it stopping (and the jobs waiting for it) */
    if (cj->stopping && cj->run_alloc.nslots)
        json_object_set_new(o, "stop_alloc", alloc_json(&cj->run_alloc));
    if (cj->nnodes) {
        json_t *nodes = json_array();
        for (uint32_t i = 0; i < cj->nnodes; i++)
            json_array_append_new(nodes, json_integer(cj->nodes[i]));
        json_object_set_new(o, "nodes", nodes);
    }
    if (cj->nranks) {
        json_t *ranks = json_array();
        for (uint32_t i = 0; i < cj->nranks; i++) {
            const ctld_rank_t *r = &cj->ranks[i];
            json_t *ro = json_pack("{s:i,s:i,s:b,s:b,s:i,s:i,s:i}", "node", (json_int_t)r->node,
                                   "local", (json_int_t)r->local, "started", r->started, "ended",
                                   r->ended, "exit", (json_int_t)r->exit_code, "sig",
                                   (json_int_t)r->signal, "why", (json_int_t)r->why);
            if (r->step)
                json_object_set_new(ro, "step", json_integer(r->step));
            json_array_append_new(ranks, ro);
        }
        json_object_set_new(o, "ranks", ranks);
        json_object_set_new(o, "nown", json_integer(cj->nown));
        json_object_set_new(o, "ntasks", json_integer(cj->ntasks));
        json_object_set_new(o, "reap_sent", json_boolean(cj->reap_sent));
        json_object_set_new(o, "step_key", json_string(cj->step_key));
        if (cj->nsteps)
            json_object_set_new(o, "steps", ctld_steps_rt(cj));
        json_object_set_new(o, "tpn", json_integer(cj->tpn));
        json_object_set_new(o, "master_port", json_integer(cj->master_port));
    }
    json_t *svc = ctld_service_rt(cj);
    if (svc)
        json_object_set_new(o, "service", svc);
    if (cj->array) {
        const ctld_array_t *a = cj->array;
        json_t *cnt = json_array();
        for (int s = 0; s < DR_JOB_NSTATES; s++)
            json_array_append_new(cnt, json_integer(a->count[s]));
        json_object_set_new(o, "array",
                            json_pack("{s:i,s:i,s:o,s:i}", "next", (json_int_t)a->next, "active",
                                      (json_int_t)a->active, "count", cnt, "first_fail",
                                      (json_int_t)a->first_fail_exit));
    }
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static bool row_terminal(const ctld_job_t *cj)
{
    return ctld_job_terminal(cj);
}

int ctld_store_put_job(dr_ctld_t *c, const ctld_job_t *cj, dr_err_t *err)
{
    char *spec = dr_jobspec_to_json(&cj->spec);
    char *rt = rt_json(cj);
    char *fin = row_terminal(cj) ? ctld_job_json(c, cj) : NULL;
    if (!spec || !rt || (row_terminal(cj) && !fin)) {
        free(spec);
        free(rt);
        free(fin);
        return dr_err_set(err, DR_ENOMEM, "store: out of memory for job %llu",
                          (unsigned long long)cj->j.id);
    }
    sqlite3_stmt *st = cached(c, ST_JOB,
                              "INSERT OR REPLACE INTO jobs(id, user, uid, gid, parent,"
                              " array_index, terminal, spec, rt, final, end_t, account, state)"
                              " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                              err);
    if (!st) {
        free(spec);
        free(rt);
        free(fin);
        return DR_EIO;
    }
    sqlite3_bind_int64(st, 1, (sqlite3_int64)cj->j.id);
    sqlite3_bind_text(st, 2, cj->user, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, cj->uid);
    sqlite3_bind_int64(st, 4, cj->gid);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)cj->j.array_parent);
    sqlite3_bind_int64(st, 6, cj->j.array_parent ? (sqlite3_int64)cj->j.array_index : -1);
    sqlite3_bind_int(st, 7, row_terminal(cj));
    sqlite3_bind_text(st, 8, spec, -1, free);
    sqlite3_bind_text(st, 9, rt, -1, free);
    if (fin)
        sqlite3_bind_text(st, 10, fin, -1, free);
    else
        sqlite3_bind_null(st, 10);
    if (row_terminal(cj) && cj->j.end > 0 && cj->j.end != DR_TIME_NEVER)
        sqlite3_bind_double(st, 11, dr_time_to_s(cj->j.end));
    else
        sqlite3_bind_null(st, 11);
    const dr_jobspec_t *sp = cj->parent ? &cj->parent->spec : &cj->spec;
    sqlite3_bind_text(st, 12, sp->account ? sp->account : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 13, ctld_job_state_name(cj), -1, SQLITE_STATIC);
    return step_reset(c, st, "write job", err);
}

int ctld_store_put_event(dr_ctld_t *c, const dr_event_t *e, const char *detail, dr_err_t *err)
{
    sqlite3_stmt *st = cached(c, ST_EVENT,
                              "INSERT INTO events(job, t, what, from_s, to_s, detail)"
                              " VALUES(?,?,?,?,?,?)",
                              err);
    if (!st)
        return DR_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)e->job);
    sqlite3_bind_double(st, 2, dr_time_to_s(e->t));
    sqlite3_bind_text(st, 3, dr_event_name(e), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, dr_job_state_name(e->from), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, dr_job_state_name(e->to), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, detail ? detail : "", -1, SQLITE_TRANSIENT);
    return step_reset(c, st, "write event", err);
}

int ctld_store_put_note(dr_ctld_t *c, const ctld_note_t *n, dr_err_t *err)
{
    if (n->node >= 0) { /* a node's: rare, not worth a cached statement */
        sqlite3_stmt *st = prep(c,
                                "INSERT INTO events(job, t, what, from_s, to_s, detail, node)"
                                " VALUES(0,?,?,?,?,?,?)",
                                err);
        if (!st)
            return DR_EIO;
        sqlite3_bind_double(st, 1, dr_time_to_s(n->t));
        sqlite3_bind_text(st, 2, n->what, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, n->from, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, n->to, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, n->detail ? n->detail : "", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, c->cl.nodes[n->node].name, -1, SQLITE_STATIC);
        return step_done(c, st, "write a node's event", err);
    }
    sqlite3_stmt *st = cached(c, ST_EVENT,
                              "INSERT INTO events(job, t, what, from_s, to_s, detail)"
                              " VALUES(?,?,?,?,?,?)",
                              err);
    if (!st)
        return DR_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)n->job);
    sqlite3_bind_double(st, 2, dr_time_to_s(n->t));
    sqlite3_bind_text(st, 3, n->what, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, n->detail ? n->detail : "", -1, SQLITE_TRANSIENT);
    return step_reset(c, st, "write event", err);
}

/* ---- reload ---- */

static int get_int(json_t *o, const char *k, json_int_t *v)
{
    json_t *x = json_object_get(o, k);
    if (!json_is_integer(x))
        return DR_EINVAL;
    *v = json_integer_value(x);
    return DR_OK;
}

static int load_alloc(json_t *a, dr_alloc_t *out)
{
    json_int_t type, nnodes, loc, cpu, mem;
    json_t *slots = json_object_get(a, "slots");
    if (get_int(a, "type", &type) || get_int(a, "nnodes", &nnodes) ||
        get_int(a, "locality", &loc) || get_int(a, "cpu", &cpu) || get_int(a, "mem", &mem) ||
        !json_is_array(slots))
        return DR_EINVAL;
    size_t n = json_array_size(slots);
    out->slots = calloc(n ? n : 1, sizeof *out->slots);
    if (!out->slots)
        return DR_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_int_t node, gpu, milli;
        if (json_unpack(json_array_get(slots, i), "[III]", &node, &gpu, &milli) != 0)
            return DR_EINVAL;
        out->slots[i] = (dr_slot_t){(uint32_t)node, (uint16_t)gpu, (uint16_t)milli};
    }
    out->nslots = (uint32_t)n;
    out->nnodes = (uint32_t)nnodes;
    out->type = (uint16_t)type;
    out->locality = (uint8_t)loc;
    out->cpu_milli_per_node = (uint32_t)cpu;
    out->mem_mb_per_node = (uint64_t)mem;
    return DR_OK;
}

static int load_rt(ctld_job_t *cj, const char *text)
{
    json_t *o = json_loads(text, 0, NULL);
    if (!o)
        return DR_EINVAL;
    int rc = DR_EINVAL;
    json_int_t state, gen, submit, fs, start, end, nstarts, ex, sig, kf;
    int has_exit = 0, ks = 0;
    const char *reason = "";
    double cost = 0, attained = 0;
    if (json_unpack(o, "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:s,s:F,s:b,s:I,s:F}", "state",
                    &state, "gen", &gen, "submit", &submit, "first_start", &fs, "start", &start,
                    "end", &end, "nstarts", &nstarts, "exit_code", &ex, "signal", &sig, "has_exit",
                    &has_exit, "reason", &reason, "cost", &cost, "kill_sent", &ks, "kill_final",
                    &kf, "attained", &attained) != 0)
        goto out;
    if (state < 0 || state >= DR_JOB_NSTATES)
        goto out;
    cj->j.state = (uint8_t)state;
    cj->gen = (uint32_t)gen;
    cj->j.submit = submit;
    cj->j.first_start = fs;
    cj->j.start = start;
    cj->j.end = end;
    cj->j.nstarts = (uint32_t)nstarts;
    cj->exit_code = (int32_t)ex;
    cj->signal = (int32_t)sig;
    cj->has_exit = has_exit;
    snprintf(cj->reason, sizeof cj->reason, "%s", reason);
    cj->cost_usd = cost;
    cj->kill_sent = ks;
    cj->kill_final = (uint8_t)kf;
    cj->lease_lost = json_is_true(json_object_get(o, "lease_lost")); /* absent: false */
    cj->j.attained_gpu_s = attained;
    json_int_t gt = -1, gg = 0, hold = 0;
    get_int(o, "hold", &hold); /* absent in rows written before holds */
    cj->hold = hold == CTLD_HOLD_USER || hold == CTLD_HOLD_ADMIN ? (uint8_t)hold : 0;
    get_int(o, "got_type", &gt);
    get_int(o, "got_gpus", &gg);
    json_int_t cg = 0;
    get_int(o, "ckpt_gen", &cg); /* the generation whose checkpoint report is in the events */
    cj->ckpt_gen = (uint32_t)cg;
    cj->got_type = (int32_t)gt;
    cj->got_gpus = (uint32_t)gg;
    json_t *al = json_object_get(o, "alloc");
    if (al && load_alloc(al, &cj->j.alloc) != DR_OK)
        goto out;
    json_t *sa = json_object_get(o, "stop_alloc");
    if (sa && load_alloc(sa, &cj->run_alloc) != DR_OK)
        goto out;
    cj->stopping = sa != NULL;
    json_t *ranks = json_object_get(o, "ranks");
    if (json_is_array(ranks) && json_array_size(ranks)) {
        cj->nranks = (uint32_t)json_array_size(ranks);
        cj->ranks = calloc(cj->nranks, sizeof *cj->ranks);
        if (!cj->ranks)
            goto out;
        for (uint32_t i = 0; i < cj->nranks; i++) {
            json_int_t node, local, e2, s2, why;
            int started = 0, ended = 0;
            if (json_unpack(json_array_get(ranks, i), "{s:I,s:I,s:b,s:b,s:I,s:I,s:I}", "node",
                            &node, "local", &local, "started", &started, "ended", &ended, "exit",
                            &e2, "sig", &s2, "why", &why) != 0)
                goto out;
            json_int_t step = 0;
            get_int(json_array_get(ranks, i), "step", &step);
            cj->ranks[i] = (ctld_rank_t){.node = (uint32_t)node,
                                         .local = (uint32_t)local,
                                         .started = started,
                                         .ended = ended,
                                         .exit_code = (int32_t)e2,
                                         .signal = (int32_t)s2,
                                         .why = (uint8_t)why,
                                         .step = (uint32_t)step};
        }
        /* records from before steps: every rank is the job's own */
        json_int_t nown = cj->nranks, ntasks = cj->nranks;
        get_int(o, "nown", &nown);
        get_int(o, "ntasks", &ntasks);
        cj->nown = nown >= 0 && nown <= cj->nranks ? (uint32_t)nown : cj->nranks;
        cj->ntasks = (uint32_t)ntasks;
        cj->reap_sent = json_is_true(json_object_get(o, "reap_sent"));
        const char *key = json_string_value(json_object_get(o, "step_key"));
        snprintf(cj->step_key, sizeof cj->step_key, "%s", key ? key : "");
        json_t *steps = json_object_get(o, "steps");
        if (steps && ctld_steps_load(cj, steps) != DR_OK)
            goto out;
        json_int_t tpn = 1, port = 0;
        get_int(o, "tpn", &tpn);
        get_int(o, "master_port", &port);
        cj->tpn = (uint32_t)tpn;
        cj->master_port = (uint16_t)port;
    }
    json_t *nodes = json_object_get(o, "nodes");
    if (json_is_array(nodes) && json_array_size(nodes)) {
        cj->nnodes = (uint32_t)json_array_size(nodes);
        cj->nodes = calloc(cj->nnodes, sizeof *cj->nodes);
        if (!cj->nodes)
            goto out;
        for (uint32_t i = 0; i < cj->nnodes; i++)
            cj->nodes[i] = (uint32_t)json_integer_value(json_array_get(nodes, i));
    } else if (cj->nranks) { /* records from before: one node per tpn ranks */
        uint32_t tpn = cj->tpn ? cj->tpn : 1;
        cj->nnodes = cj->nranks / tpn;
        cj->nodes = calloc(cj->nnodes ? cj->nnodes : 1, sizeof *cj->nodes);
        if (!cj->nodes)
            goto out;
        for (uint32_t i = 0; i < cj->nnodes; i++)
            cj->nodes[i] = cj->ranks[i * tpn].node;
    }
    json_t *ar = json_object_get(o, "array");
    if (ar && cj->array) {
        json_int_t next, active, ff;
        json_t *cnt;
        if (json_unpack(ar, "{s:I,s:I,s:o,s:I}", "next", &next, "active", &active, "count", &cnt,
                        "first_fail", &ff) != 0)
            goto out;
        cj->array->next = (uint32_t)next;
        cj->array->active = 0; /* recounted as the tasks are reloaded */
        cj->array->first_fail_exit = (int32_t)ff;
        for (size_t s = 0; s < DR_JOB_NSTATES && s < json_array_size(cnt); s++)
            cj->array->count[s] = (uint32_t)json_integer_value(json_array_get(cnt, s));
    }
    json_t *sv = json_object_get(o, "service");
    if (cj->array && cj->array->svc && (!sv || ctld_service_rt_load(cj, sv) != DR_OK))
        goto out;
    rc = DR_OK;
out:
    json_decref(o);
    return rc;
}

int ctld_store_load(dr_ctld_t *c, int (*cb)(dr_ctld_t *, ctld_job_t *, dr_err_t *), dr_err_t *err)
{
    sqlite3_stmt *st = prep(c,
                            "SELECT id, user, uid, gid, parent, array_index, spec, rt FROM jobs"
                            " WHERE terminal = 0 ORDER BY id",
                            err);
    if (!st)
        return DR_EIO;
    int rc = DR_OK, s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        ctld_job_t *cj = calloc(1, sizeof *cj);
        if (!cj) {
            rc = dr_err_set(err, DR_ENOMEM, "store: out of memory");
            break;
        }
        dr_job_init(&cj->j);
        dr_jobspec_init(&cj->spec);
        cj->j.id = (uint64_t)sqlite3_column_int64(st, 0);
        cj->user = dr_strdup((const char *)sqlite3_column_text(st, 1));
        cj->uid = (uint32_t)sqlite3_column_int64(st, 2);
        cj->gid = (uint32_t)sqlite3_column_int64(st, 3);
        cj->j.array_parent = (uint64_t)sqlite3_column_int64(st, 4);
        int64_t ai = sqlite3_column_int64(st, 5);
        cj->j.array_index = ai >= 0 ? (uint32_t)ai : 0;
        const char *spec = (const char *)sqlite3_column_text(st, 6);
        const char *rt = (const char *)sqlite3_column_text(st, 7);
        size_t sl = strlen(spec);
        cj->spec_bytes = sl > UINT32_MAX ? UINT32_MAX : (uint32_t)sl;
        rc = dr_jobspec_from_json(&cj->spec, spec, strlen(spec), err);
        if (rc == DR_OK && cj->spec.array && !cj->j.array_parent)
            rc = ctld_array_setup(c, cj, err);
        else if (rc == DR_OK && ctld_spec_is_service(&cj->spec) && !cj->j.array_parent)
            rc = ctld_service_setup(c, cj, err);
        if (rc == DR_OK && load_rt(cj, rt) != DR_OK)
            rc = dr_err_set(err, DR_EIO, "store: job %llu: unreadable runtime state",
                            (unsigned long long)cj->j.id);
        if (rc == DR_OK)
            rc = cb(c, cj, err);
        if (rc != DR_OK) {
            ctld_job_free(cj);
            break;
        }
    }
    if (rc == DR_OK && s != SQLITE_DONE)
        rc = db_fail(c, err, "load jobs");
    sqlite3_finalize(st);
    return rc;
}

char *ctld_store_job_json(dr_ctld_t *c, uint64_t id, char **user)
{
    sqlite3_stmt *st = prep(c, "SELECT final, user FROM jobs WHERE id = ? AND terminal = 1", NULL);
    if (!st)
        return NULL;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
    char *out = NULL;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
        out = dr_strdup((const char *)sqlite3_column_text(st, 0));
        if (user)
            *user = dr_strdup((const char *)sqlite3_column_text(st, 1));
    }
    sqlite3_finalize(st);
    return out;
}

char *ctld_store_task_json(dr_ctld_t *c, uint64_t parent, uint32_t index)
{
    sqlite3_stmt *st = prep(c,
                            "SELECT final FROM jobs WHERE parent = ? AND array_index = ?"
                            " AND terminal = 1",
                            NULL);
    if (!st)
        return NULL;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)parent);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)index);
    char *out = NULL;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        out = dr_strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
}

int ctld_store_list_terminal(dr_ctld_t *c, const char *user, uint64_t array, size_t limit,
                             void (*cb)(void *, const char *json), void *ud)
{
    sqlite3_stmt *st =
        prep(c,
             "SELECT final FROM jobs WHERE terminal = 1 AND (?1 IS NULL OR user = ?1)"
             " AND (?2 = 0 OR parent = ?2) ORDER BY id DESC LIMIT ?3",
             NULL);
    if (!st)
        return DR_EIO;
    if (user)
        sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 1);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)array);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)limit);
    while (sqlite3_step(st) == SQLITE_ROW)
        if (sqlite3_column_text(st, 0))
            cb(ud, (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return DR_OK;
}

int ctld_store_history(dr_ctld_t *c, const ctld_history_q_t *q,
                       void (*cb)(void *, const char *json), void *ud)
{
    /* the newest `limit` rows that match, given oldest first (as sacct
     * lists them), an array parent after its last task (they end at the
     * same time); instr() over ",a,b," matches a state in the list */
    sqlite3_stmt *st = prep(c,
                            "SELECT final FROM (SELECT id, end_t, final FROM jobs"
                            " WHERE terminal = 1 AND final IS NOT NULL"
                            " AND (?1 IS NULL OR user = ?1) AND (?2 IS NULL OR account = ?2)"
                            " AND (?3 IS NULL OR end_t >= ?3) AND (?4 IS NULL OR end_t < ?4)"
                            " AND (?5 IS NULL OR instr(',' || ?5 || ',', ',' || state || ',') > 0)"
                            " ORDER BY end_t DESC, id DESC LIMIT ?6)"
                            " ORDER BY end_t, json_extract(final, '$.tasks') IS NOT NULL, id",
                            NULL);
    if (!st)
        return DR_EIO;
    if (q->user)
        sqlite3_bind_text(st, 1, q->user, -1, SQLITE_STATIC);
    if (q->account)
        sqlite3_bind_text(st, 2, q->account, -1, SQLITE_STATIC);
    if (isfinite(q->since))
        sqlite3_bind_double(st, 3, q->since);
    if (isfinite(q->until))
        sqlite3_bind_double(st, 4, q->until);
    if (q->states)
        sqlite3_bind_text(st, 5, q->states, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, q->limit > INT64_MAX ? INT64_MAX : (sqlite3_int64)q->limit);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW)
        if (sqlite3_column_text(st, 0))
            cb(ud, (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return s == SQLITE_DONE ? DR_OK : DR_EIO;
}

int ctld_store_events(dr_ctld_t *c, uint64_t job,
                      void (*cb)(void *, double t, const char *what, const char *from,
                                 const char *to, const char *detail),
                      void *ud)
{
    sqlite3_stmt *st = prep(
        c, "SELECT t, what, from_s, to_s, detail FROM events WHERE job = ? ORDER BY seq", NULL);
    if (!st)
        return DR_EIO;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)job);
    while (sqlite3_step(st) == SQLITE_ROW)
        cb(ud, sqlite3_column_double(st, 0), (const char *)sqlite3_column_text(st, 1),
           (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
           (const char *)sqlite3_column_text(st, 4));
    sqlite3_finalize(st);
    return DR_OK;
}

long ctld_store_event_rows(dr_ctld_t *c, uint64_t after, uint64_t upto, uint64_t job,
                           const char *node, size_t limit,
                           void (*cb)(void *, const ctld_event_row_t *), void *ud)
{
    /* a range of the rowid first (bounded work whatever the filters), each
     * row's parent from its job's row (array tasks and service runs) */
    sqlite3_stmt *st = prep(c,
                            "SELECT e.seq, e.t, e.job, e.what, e.from_s, e.to_s, e.detail, e.node,"
                            " COALESCE(j.parent, 0) FROM events e"
                            " LEFT JOIN jobs j ON e.job != 0 AND j.id = e.job"
                            " WHERE e.seq > ?1 AND e.seq <= ?2"
                            " AND (?3 = 0 OR e.job = ?3 OR j.parent = ?3)"
                            " AND (?4 IS NULL OR e.node = ?4)"
                            " ORDER BY e.seq LIMIT ?5",
                            NULL);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, after > INT64_MAX ? INT64_MAX : (sqlite3_int64)after);
    sqlite3_bind_int64(st, 2, upto > INT64_MAX ? INT64_MAX : (sqlite3_int64)upto);
    sqlite3_bind_int64(st, 3, job > INT64_MAX ? -1 : (sqlite3_int64)job);
    if (node)
        sqlite3_bind_text(st, 4, node, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, limit > INT64_MAX ? INT64_MAX : (sqlite3_int64)limit);
    long n = 0;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *txt[5];
        for (int k = 0; k < 4; k++) {
            txt[k] = (const char *)sqlite3_column_text(st, 3 + k);
            if (!txt[k])
                txt[k] = "";
        }
        txt[4] = (const char *)sqlite3_column_text(st, 7); /* NULL: a job's */
        ctld_event_row_t r = {.id = (uint64_t)sqlite3_column_int64(st, 0),
                              .t = sqlite3_column_double(st, 1),
                              .job = (uint64_t)sqlite3_column_int64(st, 2),
                              .parent = (uint64_t)sqlite3_column_int64(st, 8),
                              .what = txt[0],
                              .from = txt[1],
                              .to = txt[2],
                              .detail = txt[3],
                              .node = txt[4]};
        cb(ud, &r);
        n++;
    }
    sqlite3_finalize(st);
    return s == SQLITE_DONE ? n : -1;
}

int ctld_store_event_max(dr_ctld_t *c, uint64_t *max)
{
    sqlite3_stmt *st = prep(c, "SELECT COALESCE(MAX(seq), 0) FROM events", NULL);
    if (!st)
        return DR_EIO;
    int rc = sqlite3_step(st) == SQLITE_ROW ? DR_OK : DR_EIO;
    if (rc == DR_OK)
        *max = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc;
}

int ctld_store_put_token(dr_ctld_t *c, const ctld_token_row_t *t, dr_err_t *err)
{
    sqlite3_stmt *st = prep(c,
                            "INSERT OR REPLACE INTO tokens(hash, user, role, created, expires,"
                            " minted_by) VALUES(?,?,?,?,?,?)",
                            err);
    if (!st)
        return DR_EIO;
    sqlite3_bind_text(st, 1, t->hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, t->user, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, t->role, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 4, t->created);
    sqlite3_bind_double(st, 5, t->expires);
    sqlite3_bind_text(st, 6, t->minted_by, -1, SQLITE_STATIC);
    return step_done(c, st, "write token", err);
}

int ctld_store_find_token(dr_ctld_t *c, const char *hash_hex, char *user, size_t ulen, char *role,
                          size_t rlen, double *expires)
{
    sqlite3_stmt *st =
        prep(c, "SELECT user, role, COALESCE(expires, 0) FROM tokens WHERE hash = ?", NULL);
    if (!st)
        return DR_EIO;
    sqlite3_bind_text(st, 1, hash_hex, -1, SQLITE_STATIC);
    int rc = DR_ENOENT;
    if (sqlite3_step(st) == SQLITE_ROW) {
        snprintf(user, ulen, "%s", (const char *)sqlite3_column_text(st, 0));
        snprintf(role, rlen, "%s", (const char *)sqlite3_column_text(st, 1));
        *expires = sqlite3_column_double(st, 2);
        rc = DR_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

int ctld_store_list_tokens(dr_ctld_t *c, const char *user,
                           void (*cb)(void *, const ctld_token_row_t *), void *ud)
{
    sqlite3_stmt *st = prep(c,
                            "SELECT hash, user, role, COALESCE(created, 0), COALESCE(expires, 0),"
                            " COALESCE(minted_by, '') FROM tokens"
                            " WHERE ?1 IS NULL OR user = ?1 ORDER BY created, hash",
                            NULL);
    if (!st)
        return DR_EIO;
    if (user)
        sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 1);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        ctld_token_row_t r = {.hash = (const char *)sqlite3_column_text(st, 0),
                              .user = (const char *)sqlite3_column_text(st, 1),
                              .role = (const char *)sqlite3_column_text(st, 2),
                              .created = sqlite3_column_double(st, 3),
                              .expires = sqlite3_column_double(st, 4),
                              .minted_by = (const char *)sqlite3_column_text(st, 5)};
        cb(ud, &r);
    }
    sqlite3_finalize(st);
    return s == SQLITE_DONE ? DR_OK : DR_EIO;
}

int ctld_store_delete_tokens(dr_ctld_t *c, const char *id, const char *hash, const char *user,
                             int *n, dr_err_t *err)
{
    /* by id (the hash's first CTLD_TOKEN_ID hex digits) or by whole hash;
     * user non-NULL: only that user's */
    sqlite3_stmt *st = prep(c,
                            "DELETE FROM tokens WHERE (?1 IS NULL OR substr(hash, 1, ?4) = ?1)"
                            " AND (?2 IS NULL OR hash = ?2) AND (?3 IS NULL OR user = ?3)"
                            " AND (?1 IS NOT NULL OR ?2 IS NOT NULL)",
                            err);
    if (!st)
        return DR_EIO;
    const char *v[3] = {id, hash, user};
    for (int i = 0; i < 3; i++)
        if (v[i])
            sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, i + 1);
    sqlite3_bind_int(st, 4, CTLD_TOKEN_ID);
    int rc = step_done(c, st, "delete token", err);
    *n = rc == DR_OK ? sqlite3_changes(c->db) : 0;
    return rc;
}
