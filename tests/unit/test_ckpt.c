/* test_ckpt.c - checkpoint manifests on real files: a commit verifies, and
 * each way a checkpoint goes bad afterwards (a truncated file, one changed
 * byte, a missing file, an extra file, a torn or edited manifest, a
 * symbolic link pointing out of the directory) is rejected with a reason
 * naming the file; a job directory's newest verified checkpoint is picked,
 * and pruning keeps the newest N. */
#include "testutil.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt/ckpt.h"

typedef struct fx {
    char root[64]; /* the job's checkpoint directory */
} fx_t;

static int setup(void **state)
{
    fx_t *fx = calloc(1, sizeof *fx);
    snprintf(fx->root, sizeof fx->root, "/tmp/drover-ckpt-XXXXXX");
    assert_non_null(mkdtemp(fx->root));
    *state = fx;
    return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    return remove(p);
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    nftw(fx->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(fx);
    return 0;
}

static void put(const char *dir, const char *rel, const char *text, size_t n)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    char *s = strrchr(p, '/');
    *s = '\0';
    mkdir(p, 0755);
    *s = '/';
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
}

/* A checkpoint of three files (one in a subdirectory), committed. */
static const char *make_ckpt(fx_t *fx, const char *name, int64_t t, bool sha)
{
    static char dir[256];
    snprintf(dir, sizeof dir, "%s/%s", fx->root, name);
    mkdir(dir, 0755);
    char big[300000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)(i * 7 + (size_t)t);
    put(dir, "model.pt", big, sizeof big);
    put(dir, "opt/state.json", "{\"lr\": 0.05}\n", 13);
    put(dir, "my step", "120\n", 4);
    dr_ckpt_commit_opts_t o = {.now_ns = t, .sha256 = sha};
    dr_ckpt_manifest_t m;
    dr_err_t err = {0};
    int rc = dr_ckpt_commit(dir, &o, &m, &err);
    if (rc != DR_OK)
        fail_msg("commit: %s", err.msg);
    assert_int_equal(m.nfiles, 3);
    assert_int_equal(dr_ckpt_manifest_bytes(&m), sizeof big + 13 + 4);
    dr_ckpt_manifest_free(&m);
    return dir;
}

static void expect_rejected(const char *dir, const char *why)
{
    dr_err_t err = {0};
    int rc = dr_ckpt_verify(dir, NULL, &err);
    if (rc == DR_OK)
        fail_msg("%s verified; expected it rejected (%s)", dir, why);
    tu_assert_contains(err.msg, why);
}

static void test_commit_verifies(void **state)
{
    fx_t *fx = *state;
    const char *dir = make_ckpt(fx, "step-1", 100, false);
    dr_ckpt_manifest_t m;
    dr_err_t err = {0};
    assert_int_equal(dr_ckpt_verify(dir, &m, &err), DR_OK);
    assert_int_equal(m.seq, 1);
    assert_int_equal(m.created_ns, 100);
    assert_string_equal(m.files[0].path, "model.pt");
    assert_string_equal(m.files[2].path, "opt/state.json");
    dr_ckpt_manifest_free(&m);
    /* the next checkpoint beside it comes after it */
    dir = make_ckpt(fx, "step-2", 200, true);
    assert_int_equal(dr_ckpt_verify(dir, &m, &err), DR_OK);
    assert_int_equal(m.seq, 2);
    assert_true(m.files[0].has_sha);
    dr_ckpt_manifest_free(&m);
    /* no temporary manifest left behind */
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, DR_CKPT_MANIFEST_TMP);
    assert_int_not_equal(access(p, F_OK), 0);
}

static void test_truncated(void **state)
{
    const char *dir = make_ckpt(*state, "c", 1, false);
    char p[600];
    snprintf(p, sizeof p, "%s/model.pt", dir);
    assert_int_equal(truncate(p, 1000), 0);
    expect_rejected(dir, "model.pt: 1000 bytes, the manifest says 300000 (truncated)");
}

static void flip_byte(const char *path, off_t at)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b;
    assert_int_equal(pread(fd, &b, 1, at), 1);
    b ^= 0x01;
    assert_int_equal(pwrite(fd, &b, 1, at), 1);
    close(fd);
}

static void test_changed_byte(void **state)
{
    const char *dir = make_ckpt(*state, "c", 1, false);
    char p[600];
    snprintf(p, sizeof p, "%s/model.pt", dir);
    flip_byte(p, 123456);
    expect_rejected(dir, "model.pt: XXH3-128 differs");
}

static void test_changed_byte_sha(void **state)
{
    /* with SHA-256 too both are checked: XXH3 catches it first */
    const char *dir = make_ckpt(*state, "c", 1, true);
    char p[600];
    snprintf(p, sizeof p, "%s/opt/state.json", dir);
    flip_byte(p, 3);
    expect_rejected(dir, "opt/state.json: XXH3-128 differs");
}

static void test_missing_file(void **state)
{
    const char *dir = make_ckpt(*state, "c", 1, false);
    char p[600];
    snprintf(p, sizeof p, "%s/opt/state.json", dir);
    assert_int_equal(unlink(p), 0);
    expect_rejected(dir, "opt/state.json: missing");
}

static void test_extra_file(void **state)
{
    const char *dir = make_ckpt(*state, "c", 1, false);
    put(dir, "opt/extra.bin", "x", 1);
    expect_rejected(dir, "opt/extra.bin: not in the manifest");
}

static void test_torn_manifest(void **state)
{
    const char *dir = make_ckpt(*state, "c", 1, false);
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, DR_CKPT_MANIFEST);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    /* cut inside the last line, then at a line boundary: both torn */
    assert_int_equal(truncate(p, st.st_size - 5), 0);
    expect_rejected(dir, "torn");
    assert_int_equal(truncate(p, st.st_size - 38), 0); /* the whole end line gone */
    expect_rejected(dir, "torn");
}

static void test_edited_manifest(void **state)
{
    /* a manifest edited to match a changed file fails its own checksum */
    const char *dir = make_ckpt(*state, "c", 1, false);
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, DR_CKPT_MANIFEST);
    size_t n;
    char *t = tu_read(p, &n);
    char *s = strstr(t, "f 4 ");
    assert_non_null(s);
    s[2] = '5';
    FILE *f = fopen(p, "wb");
    fwrite(t, 1, n, f);
    fclose(f);
    free(t);
    expect_rejected(dir, "checksum does not match");
}

static void test_symlink_escape(void **state)
{
    fx_t *fx = *state;
    char outside[300], p[700], dir[300];
    snprintf(outside, sizeof outside, "%s/secret", fx->root);
    put(fx->root, "secret", "not the job's", 13);
    /* commit refuses a link */
    snprintf(dir, sizeof dir, "%s/linked", fx->root);
    mkdir(dir, 0755);
    put(dir, "a.bin", "a", 1);
    snprintf(p, sizeof p, "%s/b.bin", dir);
    assert_int_equal(symlink(outside, p), 0);
    dr_ckpt_commit_opts_t o = {.now_ns = 1};
    dr_err_t err = {0};
    assert_int_not_equal(dr_ckpt_commit(dir, &o, NULL, &err), DR_OK);
    tu_assert_contains(err.msg, "b.bin: a symbolic link");
    /* a committed file replaced by a link to a file of the same size is rejected */
    const char *c = make_ckpt(fx, "c", 1, false);
    snprintf(p, sizeof p, "%s/my step", c);
    unlink(p);
    put(fx->root, "four", "120\n", 4);
    snprintf(outside, sizeof outside, "%s/four", fx->root);
    assert_int_equal(symlink(outside, p), 0);
    expect_rejected(c, "my step: a symbolic link");
    /* a manifest naming a path outside the checkpoint does not parse */
    dr_ckpt_manifest_t m = {0};
    assert_int_equal(dr_ckpt_manifest_add(&m, "../secret", 13, &err), DR_OK);
    char *text;
    size_t len;
    assert_int_not_equal(dr_ckpt_manifest_format(&m, &text, &len, &err), DR_OK);
    dr_ckpt_manifest_free(&m);
    const char *evil = "drover-checkpoint 1\nseq 1\ncreated 1\nfiles 1\n"
                       "f 13 00000000000000000000000000000000 - ../secret\nend "
                       "00000000000000000000000000000000\n";
    assert_int_not_equal(dr_ckpt_manifest_parse(&m, evil, strlen(evil), &err), DR_OK);
    tu_assert_contains(err.msg, "path");
}

static void test_parse_round_trip(void **state)
{
    dr_ckpt_manifest_t m = {.seq = 7, .created_ns = 1764608456123456789};
    dr_err_t err = {0};
    assert_int_equal(dr_ckpt_manifest_add(&m, "b/with space", 5, &err), DR_OK);
    assert_int_equal(dr_ckpt_manifest_add(&m, "a", 0, &err), DR_OK);
    m.files[0].xxh[0] = 0xab;
    m.files[0].has_sha = true;
    m.files[0].sha[31] = 0xcd;
    assert_int_equal(dr_ckpt_manifest_sort(&m, &err), DR_OK);
    char *text;
    size_t len;
    assert_int_equal(dr_ckpt_manifest_format(&m, &text, &len, &err), DR_OK);
    dr_ckpt_manifest_t back;
    assert_int_equal(dr_ckpt_manifest_parse(&back, text, len, &err), DR_OK);
    assert_int_equal(back.seq, 7);
    assert_int_equal(back.created_ns, 1764608456123456789);
    assert_int_equal(back.nfiles, 2);
    assert_string_equal(back.files[1].path, "b/with space");
    assert_int_equal(back.files[1].xxh[0], 0xab);
    assert_true(back.files[1].has_sha && !back.files[0].has_sha);
    assert_int_equal(back.files[1].sha[31], 0xcd);
    dr_ckpt_manifest_free(&back);
    /* a duplicate is refused when sorting */
    assert_int_equal(dr_ckpt_manifest_add(&m, "a", 1, &err), DR_OK);
    assert_int_not_equal(dr_ckpt_manifest_sort(&m, &err), DR_OK);
    tu_assert_contains(err.msg, "a: listed twice");
    dr_ckpt_manifest_free(&m);
    free(text);
}

/* The generation that committed a checkpoint is kept (and round-trips);
 * a launch of generation G resumes only from one an earlier generation
 * committed, so a gang's late rank never picks what its own generation's
 * first rank wrote meanwhile (found by the chaos suite, seed 3007). */
/* The owner line and record: canonical, and parse errors say why. */
static void test_owner(void **state)
{
    (void)state;
    dr_ckpt_manifest_t m = {.seq = 2, .created_ns = 5, .gen = 1, .has_owner = true};
    m.owner = (dr_ckpt_owner_t){.job = 42, .uid = 1001, .nonce = {0xab, 1}};
    char *text = NULL;
    size_t len = 0;
    dr_err_t err = {0};
    assert_int_equal(dr_ckpt_manifest_format(&m, &text, &len, &err), DR_OK);
    tu_assert_contains(text, "gen 1\nowner 42 1001 ab010000000000000000000000000000\nfiles 0\n");
    dr_ckpt_manifest_t back;
    assert_int_equal(dr_ckpt_manifest_parse(&back, text, len, &err), DR_OK);
    assert_true(back.has_owner);
    assert_true(dr_ckpt_owner_same(&back.owner, &m.owner));
    dr_ckpt_manifest_free(&back);
    free(text);
    char rec[160];
    dr_ckpt_owner_format(&m.owner, rec, sizeof rec);
    assert_string_equal(rec,
                        "drover-job 1\njob 42\nuid 1001\nnonce ab010000000000000000000000000000\n");
    dr_ckpt_owner_t o;
    assert_int_equal(dr_ckpt_owner_parse(&o, rec, strlen(rec), &err), DR_OK);
    assert_true(dr_ckpt_owner_same(&o, &m.owner));
    const char *bad = "drover-job 1\njob 42\nuid 1001\nnonce AB\n";
    assert_int_equal(dr_ckpt_owner_parse(&o, bad, strlen(bad), &err), DR_EINVAL);
    tu_assert_contains(err.msg, "nonce");
}

static void test_generation(void **state)
{
    fx_t *fx = *state;
    dr_ckpt_manifest_t m = {.seq = 1, .created_ns = 5, .gen = 3};
    dr_err_t err = {0};
    char *text;
    size_t len;
    assert_int_equal(dr_ckpt_manifest_format(&m, &text, &len, &err), DR_OK);
    tu_assert_contains(text, "\ngen 3\nfiles 0\n");
    dr_ckpt_manifest_t back;
    assert_int_equal(dr_ckpt_manifest_parse(&back, text, len, &err), DR_OK);
    assert_int_equal(back.gen, 3);
    dr_ckpt_manifest_free(&back);
    free(text);
    m.gen = 0; /* not known: no line at all */
    assert_int_equal(dr_ckpt_manifest_format(&m, &text, &len, &err), DR_OK);
    assert_null(strstr(text, "gen "));
    free(text);
    const char *g0 = "drover-checkpoint 1\nseq 1\ncreated 5\ngen 0\nfiles 0\nend "
                     "00000000000000000000000000000000\n";
    assert_int_not_equal(dr_ckpt_manifest_parse(&back, g0, strlen(g0), &err), DR_OK);
    tu_assert_contains(err.msg, "gen 0");
    /* step-1 by generation 1, step-2 by generation 2 */
    for (uint32_t g = 1; g <= 2; g++) {
        char name[16], p[600];
        snprintf(name, sizeof name, "step-%u", g);
        snprintf(p, sizeof p, "%s/%s", fx->root, name);
        mkdir(p, 0755);
        put(p, "model.pt", "weights", 7);
        dr_ckpt_commit_opts_t o = {.now_ns = g * 100, .gen = g};
        assert_int_equal(dr_ckpt_commit(p, &o, NULL, &err), DR_OK);
    }
    dr_ckpt_list_t l;
    assert_int_equal(dr_ckpt_list(fx->root, &l, &err), DR_OK);
    long k = dr_ckpt_pick_for(fx->root, &l, 2); /* a rank of generation 2 */
    assert_true(k >= 0);
    assert_string_equal(l.e[k].name, "step-1");
    assert_int_equal(l.e[0].state, DR_CKPT_REJECTED);
    tu_assert_contains(l.e[0].why, "committed by generation 2");
    dr_ckpt_list_free(&l);
    assert_int_equal(dr_ckpt_list(fx->root, &l, &err), DR_OK);
    k = dr_ckpt_pick_for(fx->root, &l, 3); /* the next generation takes the newest */
    assert_string_equal(l.e[k].name, "step-2");
    dr_ckpt_list_free(&l);
}

static void test_pick_and_prune(void **state)
{
    fx_t *fx = *state;
    for (int i = 1; i <= 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "step-%d", i);
        make_ckpt(fx, name, i * 100, false);
    }
    char p[600];
    /* an uncommitted directory (a write in progress) is never picked */
    snprintf(p, sizeof p, "%s/step-6", fx->root);
    mkdir(p, 0755);
    put(p, "model.pt", "partial", 7);
    /* the newest committed one is corrupt, the next truncated: step-3 is used */
    snprintf(p, sizeof p, "%s/step-5/model.pt", fx->root);
    flip_byte(p, 5);
    snprintf(p, sizeof p, "%s/step-4/model.pt", fx->root);
    assert_int_equal(truncate(p, 10), 0);
    dr_ckpt_list_t l;
    dr_err_t err = {0};
    assert_int_equal(dr_ckpt_list(fx->root, &l, &err), DR_OK);
    assert_int_equal(l.n, 6);
    assert_string_equal(l.e[0].name, "step-5"); /* newest committed first */
    assert_int_equal(l.e[5].state, DR_CKPT_UNCOMMITTED);
    long k = dr_ckpt_pick(fx->root, &l, false);
    assert_true(k == 2);
    assert_string_equal(l.e[k].name, "step-3");
    assert_int_equal(l.e[0].state, DR_CKPT_REJECTED);
    tu_assert_contains(l.e[0].why, "model.pt: XXH3-128 differs");
    assert_int_equal(l.e[1].state, DR_CKPT_REJECTED);
    tu_assert_contains(l.e[1].why, "truncated");
    assert_int_equal(l.e[3].state, DR_CKPT_COMMITTED); /* older ones are not read */
    dr_ckpt_list_free(&l);
    /* no committed checkpoint at all: nothing to pick; a missing dir is empty */
    snprintf(p, sizeof p, "%s/nothing-here", fx->root);
    assert_int_equal(dr_ckpt_list(p, &l, &err), DR_OK);
    assert_int_equal(l.n, 0);
    assert_int_equal(dr_ckpt_pick(p, &l, false), -1);
    dr_ckpt_list_free(&l);
    /* a commit with keep 2 leaves the newest two: the new one and step-5 */
    snprintf(p, sizeof p, "%s/step-7", fx->root);
    mkdir(p, 0755);
    put(p, "model.pt", "seven", 5);
    dr_strvec_t pruned = {0};
    dr_ckpt_commit_opts_t o = {.now_ns = 700, .keep = 2, .pruned = &pruned};
    assert_int_equal(dr_ckpt_commit(p, &o, NULL, &err), DR_OK);
    assert_int_equal(pruned.n, 4); /* step-4 to 1; step-6 (uncommitted) is newer than step-5 */
    dr_strvec_free(&pruned);
    assert_int_equal(dr_ckpt_list(fx->root, &l, &err), DR_OK);
    char names[128] = "";
    for (size_t i = 0; i < l.n; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s ", l.e[i].name);
    assert_string_equal(names, "step-7 step-5 step-6 ");
    dr_ckpt_list_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_commit_verifies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_byte, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_byte_sha, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extra_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_manifest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edited_manifest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_escape, setup, teardown),
        cmocka_unit_test(test_parse_round_trip),
        cmocka_unit_test(test_owner),
        cmocka_unit_test_setup_teardown(test_pick_and_prune, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generation, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
