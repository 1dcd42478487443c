/* test_jobspec_shard.c - the shard field: its spellings (--shard, JSON,
 * #DROVER), the values it refuses (paths, bad '%' sequences, %a without an
 * array), the JSON round trip and the expansion of a task's shard name. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "drover/jobspec.h"

static void test_find(void **state)
{
    (void)state;
    const dr_jobfield_t *f = dr_jobfield_find("--shard");
    assert_non_null(f);
    assert_int_equal(f->id, DR_JF_SHARD);
    assert_string_equal(f->name, "shard");
    assert_ptr_equal(dr_jobfield_find("shard"), f);
    assert_null(dr_jobfield_find("-s"));
}

static void test_set(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    dr_err_t err = {0};
    assert_int_equal(dr_jobspec_set(&s, "--shard", "video-%4a.mp4", &err), DR_OK);
    assert_string_equal(s.shard, "video-%4a.mp4");
    assert_true(s.set & (DR_JF_BIT(DR_JF_SHARD)));
    assert_int_equal(dr_jobspec_set(&s, "shard", "  plain  ", &err), DR_OK);
    assert_string_equal(s.shard, "plain"); /* trimmed, as other fields */
    assert_int_equal(dr_jobspec_set(&s, "shard", "100%%", &err), DR_OK);

    static const struct {
        const char *v, *msg;
    } bad[] = {
        {"a/b", "shard: 'a/b' contains '/' (a shard is a name, not a path)"},
        {"..", "shard: '..' is not a file name"},
        {".", "shard: '.' is not a file name"},
        {"x%b", "shard: 'x%b': '%' must start %a, %Na (N = 1..9) or %%"},
        {"x%", "shard: 'x%': '%' must start %a, %Na (N = 1..9) or %%"},
        {"x%0a", "shard: 'x%0a': '%' must start %a, %Na (N = 1..9) or %%"},
        {"a\tb", "shard: 'a\tb' contains a control character"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dr_err_t e = {0};
        assert_int_equal(dr_jobspec_set(&s, "shard", bad[i].v, &e), DR_EINVAL);
        assert_string_equal(e.msg, bad[i].msg);
    }
    char longname[300];
    memset(longname, 'x', 256);
    longname[256] = '\0';
    assert_int_equal(dr_jobspec_set(&s, "shard", longname, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "is longer than 255 bytes");
    longname[255] = '\0';
    assert_int_equal(dr_jobspec_set(&s, "shard", longname, &err), DR_OK);
    dr_jobspec_free(&s);
}

static void test_validate(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    dr_err_t err = {0};
    assert_int_equal(dr_jobspec_set(&s, "shard", "s%a", &err), DR_OK);
    char *argv[] = {(char *)"true", NULL};
    s.argv = argv;
    s.argc = 1;
    assert_int_equal(dr_jobspec_validate(&s, &err), DR_EINVAL);
    assert_string_equal(err.msg, "shard: 's%a': %a needs --array");
    assert_int_equal(dr_jobspec_set(&s, "array", "0-3", &err), DR_OK);
    assert_int_equal(dr_jobspec_validate(&s, &err), DR_OK);
    /* without %a a plain job may name a shard; %% is not an index */
    assert_int_equal(dr_jobspec_set(&s, "shard", "s%%a", &err), DR_OK);
    free(s.array);
    s.array = NULL;
    s.set &= ~(DR_JF_BIT(DR_JF_ARRAY));
    assert_int_equal(dr_jobspec_validate(&s, &err), DR_OK);
    s.argv = NULL;
    s.argc = 0;
    dr_jobspec_free(&s);
}

static void test_json(void **state)
{
    (void)state;
    dr_jobspec_t s, t;
    dr_jobspec_init(&s);
    dr_jobspec_init(&t);
    dr_err_t err = {0};
    const char *in = "{\"argv\":[\"true\"],\"array\":\"0-9\",\"shard\":\"seg-%3a\"}";
    assert_int_equal(dr_jobspec_from_json(&s, in, strlen(in), &err), DR_OK);
    assert_string_equal(s.shard, "seg-%3a");
    char *out = dr_jobspec_to_json(&s);
    assert_non_null(out);
    tu_assert_contains(out, "\"shard\":\"seg-%3a\"");
    assert_int_equal(dr_jobspec_from_json(&t, out, strlen(out), &err), DR_OK);
    assert_string_equal(t.shard, "seg-%3a");
    free(out);
    const char *bad = "{\"argv\":[\"true\"],\"shard\":\"../etc\"}";
    assert_int_equal(dr_jobspec_from_json(&t, bad, strlen(bad), &err), DR_EINVAL);
    tu_assert_contains(err.msg, "shard: '../etc' contains '/'");
    const char *num = "{\"argv\":[\"true\"],\"shard\":7}";
    assert_int_equal(dr_jobspec_from_json(&t, num, strlen(num), &err), DR_EINVAL);
    assert_string_equal(err.msg, "shard: must be a string");
    dr_jobspec_free(&s);
    dr_jobspec_free(&t);
}

static void test_script(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    dr_err_t err = {0};
    /* the command line wins over the directive */
    static const char script[] = "#!/bin/sh\n#DROVER --shard s%a --array 0-4\necho\n";
    assert_int_equal(dr_jobspec_parse_script(&s, "job.sh", script, strlen(script), &err), DR_OK);
    assert_string_equal(s.shard, "s%a");
    dr_jobspec_free(&s);
    dr_jobspec_init(&s);
    assert_int_equal(dr_jobspec_set(&s, "--shard", "cli", &err), DR_OK);
    assert_int_equal(dr_jobspec_parse_script(&s, "job.sh", script, strlen(script), &err), DR_OK);
    assert_string_equal(s.shard, "cli");
    dr_jobspec_free(&s);
}

static void test_expand(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    assert_null(dr_jobspec_shard_for(&s, 3));
    assert_null(dr_jobspec_shard_for(NULL, 3));
    static const struct {
        const char *tmpl;
        uint32_t idx;
        const char *want;
    } cases[] = {
        {"s%a", 17, "s17"},     {"v%4a.mp4", 7, "v0007.mp4"}, {"v%2a", 12345, "v12345"},
        {"%a-%a", 3, "3-3"},    {"100%%", 9, "100%"},         {"%%a", 5, "%a"},
        {"plain", 42, "plain"}, {"%9a", 1, "000000001"},      {"x%1a", 0, "x0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        s.shard = (char *)cases[i].tmpl;
        char *got = dr_jobspec_shard_for(&s, cases[i].idx);
        assert_non_null(got);
        assert_string_equal(got, cases[i].want);
        free(got);
    }
    s.shard = NULL;
}

/* --shard-list: task i (in the order --array lists them) reads line i. */
static void test_list(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    dr_err_t err = {0};
    assert_int_equal(dr_jobspec_set(&s, "array", "10,3,20-28:4%2", &err), DR_OK);
    assert_int_equal(dr_jobspec_set(&s, "shard_list", "a.bin\nb.bin\nc.bin\nd.bin\ne.bin", &err),
                     DR_OK);
    static const struct {
        uint32_t idx;
        const char *want;
    } cases[] = {{10, "a.bin"}, {3, "b.bin"}, {20, "c.bin"}, {24, "d.bin"}, {28, "e.bin"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = dr_jobspec_shard_for(&s, cases[i].idx);
        assert_non_null(got);
        assert_string_equal(got, cases[i].want);
        free(got);
    }
    assert_null(dr_jobspec_shard_for(&s, 21)); /* not a task of the array */
    assert_null(dr_jobspec_shard_for(&s, 4));
    dr_jobspec_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find), cmocka_unit_test(test_set),    cmocka_unit_test(test_validate),
        cmocka_unit_test(test_json), cmocka_unit_test(test_script), cmocka_unit_test(test_expand),
        cmocka_unit_test(test_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
