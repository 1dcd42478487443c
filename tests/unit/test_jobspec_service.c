/* test_jobspec_service.c - the fields of services, holds and shard lists:
 * --replicas (makes a job a service, refused for other kinds and arrays),
 * --ready (tcp, none, http:/PATH), -H/--hold (a flag, #SBATCH --hold),
 * --shard-list (one name per task, counted against the array) and their
 * JSON round trip. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "drover/jobspec.h"

static void spec_cmd(dr_jobspec_t *s)
{
    dr_err_t err;
    dr_jobspec_init(s);
    const char *js = "{\"argv\":[\"sleep\",\"1\"]}";
    assert_int_equal(dr_jobspec_from_json(s, js, strlen(js), &err), 0);
}

static void test_replicas(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_err_t err;
    spec_cmd(&s);
    assert_int_equal(dr_jobspec_set(&s, "--replicas", "3", &err), 0);
    assert_int_equal(s.replicas, 3);
    assert_true(s.set & DR_JF_BIT(DR_JF_REPLICAS));
    assert_int_equal(dr_jobspec_validate(&s, &err), 0);
    dr_cluster_t c;
    tu_cluster(&c, "NodeName=h[1-2] Gpus=H100-SXM:8 Cpus=64 MemGB=512\n");
    dr_job_t j;
    dr_job_init(&j);
    assert_int_equal(dr_jobspec_to_job(&s, &c, 0, &j, &err), 0);
    assert_int_equal(j.kind, DR_KIND_SERVE); /* --replicas alone makes a service */
    dr_cluster_free(&c);

    assert_int_equal(dr_jobspec_set(&s, "kind", "batch", &err), 0);
    assert_int_not_equal(dr_jobspec_validate(&s, &err), 0);
    assert_non_null(strstr(err.msg, "replicas:"));
    assert_int_equal(dr_jobspec_set(&s, "kind", "serve", &err), 0);
    assert_int_equal(dr_jobspec_validate(&s, &err), 0);
    assert_int_equal(dr_jobspec_set(&s, "array", "0-3", &err), 0);
    assert_int_not_equal(dr_jobspec_validate(&s, &err), 0);
    assert_non_null(strstr(err.msg, "array:"));

    assert_int_not_equal(dr_jobspec_set(&s, "replicas", "1025", &err), 0);
    assert_non_null(strstr(err.msg, "replicas:"));
    assert_int_not_equal(dr_jobspec_set(&s, "replicas", "two", &err), 0);
    dr_jobspec_free(&s);
}

static void test_ready(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_err_t err;
    spec_cmd(&s);
    const char *good[] = {"tcp", "none", "http:/", "http:/healthz", "http:/v1/ready?x=1"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_int_equal(dr_jobspec_set(&s, "ready", good[i], &err), 0);
        assert_string_equal(s.ready, good[i]);
    }
    const char *bad[] = {"http", "http:healthz", "udp", "http:/a b", "TCP"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_not_equal(dr_jobspec_set(&s, "ready", bad[i], &err), 0);
        assert_non_null(strstr(err.msg, "ready:"));
    }
    /* a batch job has no readiness */
    assert_int_not_equal(dr_jobspec_validate(&s, &err), 0);
    assert_non_null(strstr(err.msg, "ready:"));
    assert_int_equal(dr_jobspec_set(&s, "kind", "serve", &err), 0);
    assert_int_equal(dr_jobspec_validate(&s, &err), 0);

    /* the JSON round trip keeps replicas and ready */
    assert_int_equal(dr_jobspec_set(&s, "replicas", "2", &err), 0);
    char *js = dr_jobspec_to_json(&s);
    assert_non_null(js);
    dr_jobspec_t t;
    dr_jobspec_init(&t);
    assert_int_equal(dr_jobspec_from_json(&t, js, strlen(js), &err), 0);
    assert_int_equal(t.replicas, 2);
    assert_string_equal(t.ready, s.ready);
    free(js);
    dr_jobspec_free(&t);
    dr_jobspec_free(&s);
}

static void test_hold(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_err_t err;
    spec_cmd(&s);
    assert_int_equal(s.hold, -1);
    assert_ptr_equal(dr_jobfield_find("-H"), dr_jobfield_find("hold"));
    assert_int_equal(dr_jobspec_set(&s, "-H", "1", &err), 0);
    assert_int_equal(s.hold, 1);
    const char script[] = "#!/bin/sh\n#SBATCH --hold\necho hi\n";
    dr_jobspec_t t;
    dr_jobspec_init(&t);
    assert_int_equal(dr_jobspec_parse_script(&t, "job.sh", script, sizeof script - 1, &err), 0);
    assert_int_equal(t.hold, 1);
    assert_int_equal(t.nignored, 0);
    dr_jobspec_free(&t);
    dr_jobspec_free(&s);
}

/* --test-only, and #SBATCH --test-only meaning the same (it was an
 * ignored Slurm flag), and "test_only": true in the API's JSON */
static void test_test_only(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_err_t err;
    spec_cmd(&s);
    assert_int_equal(s.test_only, -1);
    assert_int_equal(dr_jobspec_set(&s, "--test-only", "1", &err), 0);
    assert_int_equal(s.test_only, 1);
    const char script[] = "#!/bin/sh\n#SBATCH --test-only -N 1\necho hi\n";
    dr_jobspec_t t;
    dr_jobspec_init(&t);
    assert_int_equal(dr_jobspec_parse_script(&t, "job.sh", script, sizeof script - 1, &err), 0);
    assert_int_equal(t.test_only, 1);
    assert_int_equal(t.nodes, 1);
    assert_int_equal(t.nignored, 0);
    dr_jobspec_free(&t);
    dr_jobspec_init(&t);
    const char js[] = "{\"argv\":[\"true\"],\"test_only\":true}";
    assert_int_equal(dr_jobspec_from_json(&t, js, sizeof js - 1, &err), 0);
    assert_int_equal(t.test_only, 1);
    dr_jobspec_free(&t);
    dr_jobspec_free(&s);
}

static void test_shard_list(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_err_t err;
    spec_cmd(&s);
    assert_int_equal(dr_jobspec_set(&s, "shard_list", "a.mp4\r\n\n  b.mp4 \nc.mp4\n", &err), 0);
    assert_string_equal(s.shard_list, "a.mp4\nb.mp4\nc.mp4");
    /* needs an array with as many tasks */
    assert_int_not_equal(dr_jobspec_validate(&s, &err), 0);
    assert_non_null(strstr(err.msg, "needs --array"));
    assert_int_equal(dr_jobspec_set(&s, "array", "0-3", &err), 0);
    assert_int_not_equal(dr_jobspec_validate(&s, &err), 0);
    assert_non_null(strstr(err.msg, "names 3 shards for 4 array tasks"));
    assert_int_equal(dr_jobspec_set(&s, "array", "10-12", &err), 0);
    assert_int_equal(dr_jobspec_validate(&s, &err), 0);
    assert_int_equal(dr_jobspec_set(&s, "shard", "x%a", &err), 0);
    assert_int_not_equal(dr_jobspec_validate(&s, &err), 0);
    assert_non_null(strstr(err.msg, "not with --shard"));

    const char *bad[] = {"a\nb/c\n", "a\nx%a\n", "\n\n", "..\n"};
    const char *why[] = {"line 2", "line 2", "empty value", "line 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_not_equal(dr_jobspec_set(&s, "shard_list", bad[i], &err), 0);
        assert_non_null(strstr(err.msg, "shard_list:"));
        assert_non_null(strstr(err.msg, why[i]));
    }
    dr_jobspec_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas),   cmocka_unit_test(test_ready),
        cmocka_unit_test(test_hold),       cmocka_unit_test(test_test_only),
        cmocka_unit_test(test_shard_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
