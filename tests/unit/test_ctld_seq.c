/* test_ctld_seq.c - the store droverd refuses and droverd.seq: a first
 * start where there is nothing creates the store; an empty file, a store
 * droverd.seq remembers but that is gone, another application's database
 * and damaged pages are refused (naming why); --init takes an empty or
 * missing store, never a foreign one; droverd.seq reads back what was
 * written, reserves ids in blocks and refuses to be guessed. */
#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ctld/ctld.h"
#include "ctld/seq.h"
#include "ctld/store.h"
#include "ctld/store_check.h"

static char dir[] = "/tmp/drover-seq-XXXXXX";

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/drover-seq-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

/* ctld_store_open on dir (after reading droverd.seq, as droverd does): its
 * result and why a refusal was made. */
static int open_store(bool init, int *why)
{
    dr_ctld_t c;
    memset(&c, 0, sizeof c);
    c.o.state_dir = dir;
    c.o.init = init;
    dr_err_t err = {0};
    int rc = ctld_seq_read(&c, &err);
    if (rc == DR_OK)
        rc = ctld_store_open(&c, &err);
    *why = c.store_refused;
    ctld_store_close(&c);
    return rc;
}

static void write_file(const char *name, const char *text)
{
    char p[300];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_seq_round_trip(void **state)
{
    (void)state;
    dr_ctld_t c;
    memset(&c, 0, sizeof c);
    c.o.state_dir = dir;
    dr_err_t err = {0};
    assert_int_equal(ctld_seq_read(&c, &err), DR_OK);
    assert_false(c.seq_found);
    assert_int_equal(ctld_seq_write(&c, 7, 1234, &err), DR_OK);
    memset(&c, 0, sizeof c);
    c.o.state_dir = dir;
    assert_int_equal(ctld_seq_read(&c, &err), DR_OK);
    assert_true(c.seq_found);
    assert_int_equal(c.seq_epoch, 7);
    assert_int_equal(c.seq_ids_below, 1234);
    /* ids within the block: nothing written; past it: a new block */
    c.epoch = 8;
    c.next_id = 1234;
    assert_int_equal(ctld_seq_reserve(&c, &err), DR_OK);
    assert_int_equal(c.seq_ids_below, 1234);
    c.next_id = 1235;
    assert_int_equal(ctld_seq_reserve(&c, &err), DR_OK);
    assert_int_equal(c.seq_ids_below, 1235 + CTLD_SEQ_BLOCK);
    memset(&c, 0, sizeof c);
    c.o.state_dir = dir;
    assert_int_equal(ctld_seq_read(&c, &err), DR_OK);
    assert_int_equal(c.seq_epoch, 8);
    assert_int_equal(c.seq_ids_below, 1235 + CTLD_SEQ_BLOCK);
    /* a damaged sidecar is not guessed at */
    write_file("droverd.seq", "drover-seq 1\nepoch x\n");
    assert_int_equal(ctld_seq_read(&c, &err), DR_EIO);
    tu_assert_contains(err.msg, "unreadable");
}

static void test_refusals(void **state)
{
    (void)state;
    int why = -1;
    /* nothing here: a first start creates the store */
    assert_int_equal(open_store(false, &why), DR_OK);
    assert_int_equal(why, CTLD_STORE_OK);
    /* a store again: taken */
    assert_int_equal(open_store(false, &why), DR_OK);
    char db[300], p2[300];
    path_of(db, sizeof db, "droverd.db");
    /* an emptied file: refused, taken with --init */
    write_file("droverd.db", "");
    assert_int_equal(open_store(false, &why), DR_EIO);
    assert_int_equal(why, CTLD_STORE_EMPTY);
    unlink(db);
    /* gone while droverd.seq remembers it: refused, taken with --init */
    write_file("droverd.seq", "drover-seq 1\nepoch 3\nids_below 2001\n");
    assert_int_equal(open_store(false, &why), DR_EIO);
    assert_int_equal(why, CTLD_STORE_MISSING);
    assert_int_equal(open_store(true, &why), DR_OK);
    /* another application's database: refused even with --init */
    unlink(db);
    sqlite3 *o = NULL;
    assert_int_equal(sqlite3_open(db, &o), SQLITE_OK);
    assert_int_equal(sqlite3_exec(o, "CREATE TABLE invoices(x);", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(o);
    assert_int_equal(open_store(true, &why), DR_EIO);
    assert_int_equal(why, CTLD_STORE_FOREIGN);
    /* a store with garbage over its middle pages: refused as damaged */
    unlink(db);
    assert_int_equal(open_store(true, &why), DR_OK);
    assert_int_equal(sqlite3_open(db, &o), SQLITE_OK);
    assert_int_equal(sqlite3_exec(o,
                                  "PRAGMA journal_mode=DELETE;"
                                  "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n "
                                  "WHERE i < 2000) INSERT INTO events(seq, job, t, what, from_s, "
                                  "to_s, detail) SELECT i, i, 0, 'submit', '', 'pending', "
                                  "printf('%0200d', i) FROM n;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(o);
    int fd = open(db, O_WRONLY);
    assert_true(fd >= 0);
    off_t size = lseek(fd, 0, SEEK_END);
    char junk[4 * 4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 7919 + 13);
    assert_int_equal(pwrite(fd, junk, sizeof junk, size / 2 / 4096 * 4096), (ssize_t)sizeof junk);
    close(fd);
    assert_int_equal(open_store(false, &why), DR_EIO);
    assert_int_equal(why, CTLD_STORE_DAMAGED);
    path_of(p2, sizeof p2, "");
    assert_int_equal(ctld_store_check_only(p2), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_seq_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
