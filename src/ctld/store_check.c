/* store_check.c - droverd does not take a store it cannot trust.
 *
 * Before droverd opens its store it asks three questions, each of which
 * used to be answered silently: is the file a drover store at all (not an
 * emptied file, not another application's database), is it whole (PRAGMA
 * quick_check: every page of every b-tree readable and well formed), and
 * did one exist here before (droverd.seq, seq.c, says so)?  A wrong answer
 * stops droverd with a message naming the file, what is wrong and how to
 * recover (ctld_store_advise); nothing is written first.  The rule for a
 * new store: droverd creates one only where there is nothing (no database
 * file and no droverd.seq), so a first start needs no option; an empty
 * file, or a missing one that droverd.seq says existed, needs --init; a
 * foreign database is never written into.
 *
 * droverd --check-store runs the full PRAGMA integrity_check (indexes
 * against their tables too), read-only, also while droverd runs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "ctld/ctld.h"
#include "ctld/store_check.h"

/* The first few lines a check reports, joined with "; " into out. */
static int run_check(sqlite3 *db, const char *pragma, char *out, size_t n)
{
    sqlite3_stmt *st = NULL;
    out[0] = '\0';
    if (sqlite3_prepare_v2(db, pragma, -1, &st, NULL) != SQLITE_OK) {
        snprintf(out, n, "%s", sqlite3_errmsg(db));
        return DR_EIO;
    }
    int s, lines = 0;
    bool ok = false;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *l = (const char *)sqlite3_column_text(st, 0);
        if (lines == 0 && l && strcmp(l, "ok") == 0) {
            ok = true;
            break;
        }
        size_t used = strlen(out);
        if (lines < 3 && used < n) {
            snprintf(out + used, n - used, "%s%s", lines ? "; " : "", l ? l : "?");
            for (char *p = out + used; *p; p++)
                if (*p == '\n') /* "*** in database main ***\nPage 13: ..." */
                    *p = ' ';
        } else if (lines == 3 && used < n)
            snprintf(out + used, n - used, "; ...");
        lines++;
    }
    if (!ok && s != SQLITE_ROW && s != SQLITE_DONE) {
        size_t used = strlen(out);
        snprintf(out + used, n - used, "%s%s", used ? "; " : "", sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    return ok ? DR_OK : DR_EIO;
}

/* The user tables of the database, comma-separated into out; -1 when the
 * schema cannot be read. */
static int list_tables(sqlite3 *db, char *out, size_t n, bool *drover)
{
    sqlite3_stmt *st = NULL;
    out[0] = '\0';
    *drover = false;
    if (sqlite3_prepare_v2(db,
                           "SELECT name FROM sqlite_master WHERE type = 'table'"
                           " AND name NOT LIKE 'sqlite_%' ORDER BY name",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int count = 0, s;
    bool meta = false, jobs = false;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name)
            continue;
        meta = meta || strcmp(name, "meta") == 0;
        jobs = jobs || strcmp(name, "jobs") == 0;
        size_t used = strlen(out);
        if (used < n)
            snprintf(out + used, n - used, "%s%s", count ? ", " : "", name);
        count++;
    }
    sqlite3_finalize(st);
    if (s != SQLITE_DONE)
        return -1;
    *drover = meta && jobs;
    return count;
}

static int refuse(dr_ctld_t *c, int kind, dr_err_t *err, const char *fmt, const char *a,
                  const char *b)
{
    c->store_refused = kind;
    return dr_err_set(err, DR_EIO, fmt, a, b);
}

int ctld_store_vet_path(dr_ctld_t *c, const char *path, bool *fresh, dr_err_t *err)
{
    struct stat st;
    *fresh = false;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT)
            return dr_err_set(err, DR_EIO, "store %s: %s", path, strerror(errno));
        if (c->seq_found && !c->o.init)
            return refuse(c, CTLD_STORE_MISSING, err,
                          "store %s does not exist, but %s/droverd.seq says a store was here", path,
                          c->o.state_dir);
        *fresh = true; /* nothing here: a first start */
        return DR_OK;
    }
    if (!S_ISREG(st.st_mode))
        return dr_err_set(err, DR_EIO, "store %s: not a regular file", path);
    if (st.st_size == 0 && !c->o.init)
        return refuse(c, CTLD_STORE_EMPTY, err, "store %s is an empty file (0 bytes)%s", path,
                      c->seq_found ? ", and droverd.seq says a store with data was here" : "");
    return DR_OK;
}

int ctld_store_vet_db(dr_ctld_t *c, const char *path, dr_err_t *err)
{
    char what[400];
    /* quick_check reads every page of every table and index: O(store),
     * about a second per GB; integrity_check (--check-store) also checks
     * the indexes against their tables */
    if (run_check(c->db, "PRAGMA quick_check", what, sizeof what) != DR_OK)
        return refuse(c, CTLD_STORE_DAMAGED, err, "store %s is damaged: %s", path, what);
    bool drover = false;
    char tables[300];
    int n = list_tables(c->db, tables, sizeof tables, &drover);
    if (n < 0)
        return refuse(c, CTLD_STORE_DAMAGED, err, "store %s is damaged: %s", path,
                      sqlite3_errmsg(c->db));
    if (n > 0 && !drover)
        return refuse(c, CTLD_STORE_FOREIGN, err,
                      "store %s is not a drover store: a database of another application "
                      "(tables: %s)",
                      path, tables);
    if (n == 0 && !c->o.init)
        return refuse(c, CTLD_STORE_EMPTY, err, "store %s is an empty database (no tables)%s", path,
                      c->seq_found ? ", and droverd.seq says a store with data was here" : "");
    return DR_OK;
}

void ctld_store_advise(const dr_ctld_t *c, FILE *f)
{
    const char *d = c->o.state_dir;
    switch (c->store_refused) {
    case CTLD_STORE_DAMAGED:
        fprintf(f,
                "droverd: nothing was changed. Recover the store with droverd stopped, either:\n"
                "  1. restore the last backup ('drover admin backup FILE' made it):\n"
                "       mv %s/droverd.db %s/droverd.db.damaged\n"
                "       rm -f %s/droverd.db-wal %s/droverd.db-shm\n"
                "       cp BACKUP %s/droverd.db\n"
                "  2. or keep what SQLite can still read:\n"
                "       sqlite3 %s/droverd.db .recover | sqlite3 %s/droverd.db.recovered\n"
                "       mv %s/droverd.db %s/droverd.db.damaged\n"
                "       rm -f %s/droverd.db-wal %s/droverd.db-shm\n"
                "       mv %s/droverd.db.recovered %s/droverd.db\n"
                "  then 'droverd --check-store --state %s', and start droverd: job ids go on\n"
                "  after droverd.seq's, none is handed out twice. docs/operations.md, 'A damaged "
                "store'.\n",
                d, d, d, d, d, d, d, d, d, d, d, d, d, d);
        break;
    case CTLD_STORE_EMPTY:
    case CTLD_STORE_MISSING:
        fprintf(f,
                "droverd: an emptied store is not started over silently (its jobs, and the\n"
                "  epoch the agents know, would be gone). Either restore the last backup\n"
                "  ('drover admin backup FILE' made it) to %s/droverd.db (with no droverd.db-wal\n"
                "  or droverd.db-shm beside it), or start a new, empty store with --init",
                d);
        if (c->seq_found)
            fprintf(f, " (job ids go on from %llu, the epoch from %llu, as droverd.seq says)",
                    (unsigned long long)c->seq_ids_below, (unsigned long long)c->seq_epoch + 1);
        fprintf(f, ". docs/operations.md, 'A damaged store'.\n");
        break;
    case CTLD_STORE_FOREIGN:
        fprintf(f, "droverd: droverd does not write into another application's database: check\n"
                   "  --state, or move the file away to start a new store there.\n");
        break;
    default: break;
    }
}

int ctld_store_check_only(const char *state_dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/droverd.db", state_dir);
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "droverd: --check-store: %s: %s\n", path, strerror(errno));
        return 1;
    }
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "droverd: --check-store: %s: %s\n", path,
                db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return 1;
    }
    sqlite3_busy_timeout(db, 5000);
    char what[400], tables[300];
    bool drover = false;
    int rc = 0;
    if (run_check(db, "PRAGMA integrity_check", what, sizeof what) != DR_OK) {
        fprintf(stderr, "droverd: store %s is damaged: %s\n", path, what);
        rc = 1;
    } else if (list_tables(db, tables, sizeof tables, &drover) < 0 || !drover) {
        fprintf(stderr, "droverd: %s is whole but not a drover store (tables: %s)\n", path,
                tables[0] ? tables : "none");
        rc = 1;
    } else {
        long long jobs = -1, epoch = -1, next = -1;
        sqlite3_stmt *q = NULL;
        if (sqlite3_prepare_v2(db,
                               "SELECT (SELECT COUNT(*) FROM jobs),"
                               " (SELECT value FROM meta WHERE key = 'epoch'),"
                               " (SELECT value FROM meta WHERE key = 'next_id')",
                               -1, &q, NULL) == SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW) {
            jobs = sqlite3_column_int64(q, 0);
            epoch = sqlite3_column_int64(q, 1);
            next = sqlite3_column_int64(q, 2);
        }
        sqlite3_finalize(q);
        printf("store %s: ok (integrity_check), %lld job rows, epoch %lld, next id %lld\n", path,
               jobs, epoch, next);
    }
    sqlite3_close(db);
    if (rc) {
        dr_ctld_t c = {.o.state_dir = state_dir, .store_refused = CTLD_STORE_DAMAGED};
        if (!drover && what[0] == '\0')
            c.store_refused = CTLD_STORE_FOREIGN;
        ctld_store_advise(&c, stderr);
    }
    return rc;
}
