/* test_ctld_store.c - the controller's memory and store: the job table by
 * id (insert, find, remove with backward shift, against a reference), and
 * a job's runtime state surviving a write and a reload from SQLite; tokens
 * of a store from before expiries gaining one, expiry, list and revoke. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ctld/ctld.h"
#include "ctld/auth.h"
#include "ctld/http.h"
#include "ctld/store.h"
#include "drover/util.h"

static ctld_job_t *mkjob(uint64_t id)
{
    ctld_job_t *cj = calloc(1, sizeof *cj);
    dr_job_init(&cj->j);
    dr_jobspec_init(&cj->spec);
    cj->j.id = id;
    cj->got_type = -1;
    return cj;
}

static void test_table_against_reference(void **state)
{
    (void)state;
    dr_ctld_t c;
    memset(&c, 0, sizeof c);
    enum { N = 5000 };
    static ctld_job_t *ref[N];
    dr_rng_t r;
    dr_rng_seed(&r, 7);
    for (int step = 0; step < 40000; step++) {
        uint64_t id = 1 + dr_rng_below(&r, N - 1);
        ctld_job_t *got = ctld_job_find(&c, id);
        assert_ptr_equal(got, ref[id]);
        if (ref[id] && dr_rng_below(&r, 2)) {
            ctld_job_remove(&c, ref[id]);
            ctld_job_free(ref[id]);
            ref[id] = NULL;
        } else if (!ref[id]) {
            ref[id] = mkjob(id);
            assert_int_equal(ctld_job_insert(&c, ref[id]), DR_OK);
        }
    }
    size_t live = 0;
    for (int i = 0; i < N; i++) {
        assert_ptr_equal(ctld_job_find(&c, (uint64_t)i), ref[i]);
        live += ref[i] != NULL;
    }
    assert_int_equal(c.tab_n, live);
    for (size_t i = 0; i < c.tab_cap; i++)
        ctld_job_free(c.tab[i]);
    free(c.tab);
}

static int reload_cb(dr_ctld_t *c, ctld_job_t *cj, dr_err_t *err)
{
    (void)err;
    return ctld_job_insert(c, cj);
}

static void test_runtime_state_round_trip(void **state)
{
    (void)state;
    char dir[] = "/tmp/drover-store-XXXXXX";
    assert_non_null(mkdtemp(dir));
    dr_ctld_t c;
    memset(&c, 0, sizeof c);
    c.o.state_dir = dir;
    c.o.sync_full = true;
    tu_cluster(&c.cl, "NodeName=n[1-2] Gpus=H100-SXM:8 Cpus=8 MemGB=64\n");
    dr_err_t err = {0};
    assert_int_equal(ctld_store_open(&c, &err), DR_OK);

    ctld_job_t *cj = mkjob(42);
    const char *js = "{\"argv\":[\"sleep\",\"9\"],\"nodes\":2,\"gpus_per_node\":2}";
    assert_int_equal(dr_jobspec_from_json(&cj->spec, js, strlen(js), &err), DR_OK);
    cj->user = dr_strdup("alice");
    cj->uid = 1000;
    cj->gid = 100;
    cj->j.state = DR_JOB_RUNNING;
    cj->j.submit = 5 * DR_NSEC_PER_SEC;
    cj->j.first_start = cj->j.start = 6 * DR_NSEC_PER_SEC;
    cj->j.nstarts = 1;
    cj->gen = 3;
    cj->got_type = 0;
    cj->got_gpus = 4;
    dr_slot_t slots[4] = {{0, 0, 1000}, {0, 1, 1000}, {1, 0, 1000}, {1, 1, 1000}};
    cj->j.alloc.slots = malloc(sizeof slots);
    memcpy(cj->j.alloc.slots, slots, sizeof slots);
    cj->j.alloc.nslots = 4;
    cj->j.alloc.nnodes = 2;
    cj->nranks = 2;
    cj->ranks = calloc(2, sizeof *cj->ranks);
    cj->ranks[0] = (ctld_rank_t){.node = 0, .started = true};
    cj->ranks[1] = (ctld_rank_t){.node = 1, .started = true, .ended = true, .exit_code = 0};
    snprintf(cj->reason, sizeof cj->reason, "a reason with \"quotes\"");
    assert_int_equal(ctld_store_begin(&c, &err), DR_OK);
    assert_int_equal(ctld_store_put_job(&c, cj, &err), DR_OK);
    assert_int_equal(ctld_store_put_meta(&c, "next_id", 43, &err), DR_OK);
    assert_int_equal(ctld_store_commit(&c, &err), DR_OK);
    ctld_store_close(&c);

    dr_ctld_t d;
    memset(&d, 0, sizeof d);
    d.o = c.o;
    assert_int_equal(ctld_store_open(&d, &err), DR_OK);
    uint64_t v = 0;
    assert_int_equal(ctld_store_get_meta(&d, "next_id", &v), DR_OK);
    assert_int_equal(v, 43);
    assert_int_equal(ctld_store_load(&d, reload_cb, &err), DR_OK);
    ctld_job_t *back = ctld_job_find(&d, 42);
    assert_non_null(back);
    assert_string_equal(back->user, "alice");
    assert_int_equal(back->uid, 1000);
    assert_int_equal(back->j.state, DR_JOB_RUNNING);
    assert_int_equal(back->gen, 3);
    assert_int_equal(back->j.start, 6 * DR_NSEC_PER_SEC);
    assert_int_equal(back->j.alloc.nslots, 4);
    assert_int_equal(back->j.alloc.slots[2].node, 1);
    assert_int_equal(back->nranks, 2);
    assert_true(back->ranks[1].ended);
    assert_false(back->ranks[0].ended);
    assert_int_equal(back->got_gpus, 4);
    assert_string_equal(back->reason, cj->reason);
    assert_int_equal(back->spec.nodes, 2);
    assert_string_equal(back->spec.argv[1], "9");
    /* a terminal job leaves the live set and is served from its final JSON */
    back->j.state = DR_JOB_COMPLETED;
    back->has_exit = true;
    d.cl = c.cl;
    assert_int_equal(ctld_store_put_job(&d, back, &err), DR_OK);
    char *owner = NULL;
    char *fin = ctld_store_job_json(&d, 42, &owner);
    assert_non_null(fin);
    assert_string_equal(owner, "alice");
    tu_assert_contains(fin, "\"state\":\"completed\"");
    tu_assert_contains(fin, "\"nodelist\":\"n[1-2]\"");
    free(fin);
    free(owner);
    ctld_store_close(&d);
    for (size_t i = 0; i < d.tab_cap; i++)
        ctld_job_free(d.tab[i]);
    free(d.tab);
    ctld_job_free(cj);
    dr_cluster_free(&c.cl);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void count_row(void *ud, const ctld_token_row_t *t)
{
    (void)t;
    (*(int *)ud)++;
}

static void test_tokens(void **state)
{
    (void)state;
    char dir[] = "/tmp/drover-store-XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* a store from before tokens expired: made by droverd (a store of any
     * other shape is refused, store_check.c), its tokens table then put
     * back to the three columns it had */
    char path[128], hash[65];
    snprintf(path, sizeof path, "%s/droverd.db", dir);
    dr_ctld_t c;
    memset(&c, 0, sizeof c);
    c.o.state_dir = dir;
    tu_cluster(&c.cl, "NodeName=n1 Gpus=H100-SXM:8 Cpus=8 MemGB=64\n");
    dr_err_t err = {0};
    assert_int_equal(ctld_store_open(&c, &err), DR_OK);
    ctld_store_close(&c);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    ctld_sha256_hex("drv_old", hash);
    char sql[512];
    snprintf(sql, sizeof sql,
             "DROP TABLE tokens;"
             "CREATE TABLE tokens(hash TEXT PRIMARY KEY, user TEXT NOT NULL, role TEXT NOT NULL);"
             "INSERT INTO tokens VALUES('%s', 'root', 'user');",
             hash);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(ctld_store_open(&c, &err), DR_OK);
    ctld_who_t who;
    double now = dr_time_to_s(ctld_now(&c));
    assert_int_equal(ctld_auth_token(&c, "drv_old", &who), DR_OK);
    assert_string_equal(who.user, "root");
    /* the old token now expires TokenTtl= (30 days) from the upgrade */
    assert_true(who.expires > now + 29.9 * 86400 && who.expires < now + 30.1 * 86400);
    assert_int_equal(strlen(who.token_id), CTLD_TOKEN_ID);

    char tok[128], id[CTLD_TOKEN_ID + 1];
    assert_int_equal(ctld_token_create(&c, "root", "user", 0, "root", tok, sizeof tok, id, &err),
                     DR_OK);
    int n = 0;
    assert_int_equal(ctld_store_list_tokens(&c, "root", count_row, &n), DR_OK);
    assert_int_equal(n, 2);
    /* expired at once: refused, and its row is gone */
    assert_int_equal(ctld_auth_token(&c, tok, &who), DR_ENOENT);
    n = 0;
    assert_int_equal(ctld_store_list_tokens(&c, NULL, count_row, &n), DR_OK);
    assert_int_equal(n, 1);

    assert_int_equal(ctld_token_create(&c, "root", "user", 3600 * DR_NSEC_PER_SEC, "root", tok,
                                       sizeof tok, id, &err),
                     DR_OK);
    assert_int_equal(ctld_auth_token(&c, tok, &who), DR_OK);
    assert_string_equal(who.token_id, id);
    int gone = -1;
    /* another user's revoke finds nothing */
    assert_int_equal(ctld_store_delete_tokens(&c, id, NULL, "alice", &gone, &err), DR_OK);
    assert_int_equal(gone, 0);
    assert_int_equal(ctld_auth_token(&c, tok, &who), DR_OK);
    assert_int_equal(ctld_store_delete_tokens(&c, id, NULL, "root", &gone, &err), DR_OK);
    assert_int_equal(gone, 1);
    assert_int_equal(ctld_auth_token(&c, tok, &who), DR_ENOENT);
    /* neither id nor hash: nothing is deleted */
    assert_int_equal(ctld_store_delete_tokens(&c, NULL, NULL, NULL, &gone, &err), DR_OK);
    assert_int_equal(gone, 0);
    assert_int_equal(ctld_auth_token(&c, "drv_old", &who), DR_OK);

    ctld_store_close(&c);
    dr_cluster_free(&c.cl);
    snprintf(sql, sizeof sql, "rm -rf %s", dir);
    assert_int_equal(system(sql), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_against_reference),
        cmocka_unit_test(test_runtime_state_round_trip),
        cmocka_unit_test(test_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
