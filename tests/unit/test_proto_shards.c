/* test_proto_shards.c - the optional shard lists of REGISTER and HEARTBEAT:
 * their round trips, that a body without them (an older agent's) still
 * parses, that a HEARTBEAT tells "no change" from "now empty", and the
 * refusals (a name too long, not a string, not a list). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/proto.h"

static void test_register_round_trip(void **state)
{
    (void)state;
    char *names[] = {(char *)"s0", (char *)"seg-0007.mp4", (char *)"é"};
    dr_msg_register_t m = {.source = (char *)"declared",
                           .hostname = (char *)"n1",
                           .cpus = 4,
                           .shards = names,
                           .nshards = 3};
    char *json = NULL;
    size_t len = 0;
    dr_err_t err = {0};
    assert_int_equal(dr_msg_register_encode(&m, &json, &len, &err), DR_OK);
    tu_assert_contains(json, "\"shards\":[\"s0\",\"seg-0007.mp4\",\"\xc3\xa9\"]");
    dr_msg_register_t r;
    assert_int_equal(dr_msg_register_parse(&r, json, len, &err), DR_OK);
    assert_int_equal(r.nshards, 3);
    assert_string_equal(r.shards[0], "s0");
    assert_string_equal(r.shards[1], "seg-0007.mp4");
    assert_string_equal(r.shards[2], "é");
    dr_msg_register_free(&r);
    free(json);
    /* none: the key is left out, so an old controller sees the old body */
    m.shards = NULL;
    m.nshards = 0;
    assert_int_equal(dr_msg_register_encode(&m, &json, &len, &err), DR_OK);
    assert_null(strstr(json, "shards"));
    free(json);
}

static void test_register_old_agent(void **state)
{
    (void)state;
    const char *old = "{\"source\":\"nvml\",\"gpus\":[],\"cpus\":8,\"mem_mb\":1024,"
                      "\"numa_nodes\":1,\"hostname\":\"h\",\"held\":[]}";
    dr_msg_register_t r;
    dr_err_t err = {0};
    assert_int_equal(dr_msg_register_parse(&r, old, strlen(old), &err), DR_OK);
    assert_int_equal(r.nshards, 0);
    assert_null(r.shards);
    assert_int_equal(r.cpus, 8);
    dr_msg_register_free(&r);
    const char *null_shards = "{\"source\":\"nvml\",\"gpus\":[],\"cpus\":8,\"mem_mb\":1024,"
                              "\"numa_nodes\":1,\"hostname\":\"h\",\"held\":[],\"shards\":null}";
    assert_int_equal(dr_msg_register_parse(&r, null_shards, strlen(null_shards), &err), DR_OK);
    assert_int_equal(r.nshards, 0);
    dr_msg_register_free(&r);
}

static void test_heartbeat_given(void **state)
{
    (void)state;
    dr_err_t err = {0};
    char *json = NULL;
    size_t len = 0;
    dr_msg_heartbeat_t h;
    /* nothing changed: no key, and the parser says not given */
    dr_msg_heartbeat_t m = {.now_ns = 5, .running = 1};
    assert_int_equal(dr_msg_heartbeat_encode(&m, &json, &len, &err), DR_OK);
    assert_string_equal(json, "{\"now_ns\":5,\"running\":1}");
    assert_int_equal(dr_msg_heartbeat_parse(&h, json, len, &err), DR_OK);
    assert_false(h.shards_given);
    assert_int_equal(h.nshards, 0);
    dr_msg_heartbeat_free(&h);
    free(json);
    /* the cache was emptied: an empty list, given */
    m.shards_given = true;
    assert_int_equal(dr_msg_heartbeat_encode(&m, &json, &len, &err), DR_OK);
    assert_string_equal(json, "{\"now_ns\":5,\"running\":1,\"shards\":[]}");
    assert_int_equal(dr_msg_heartbeat_parse(&h, json, len, &err), DR_OK);
    assert_true(h.shards_given);
    assert_int_equal(h.nshards, 0);
    dr_msg_heartbeat_free(&h);
    assert_false(h.shards_given); /* free clears */
    free(json);
    /* a new set */
    char *names[] = {(char *)"a", (char *)"b"};
    m.shards = names;
    m.nshards = 2;
    m.shards_given = false; /* a non-empty list is sent all the same */
    assert_int_equal(dr_msg_heartbeat_encode(&m, &json, &len, &err), DR_OK);
    assert_int_equal(dr_msg_heartbeat_parse(&h, json, len, &err), DR_OK);
    assert_true(h.shards_given);
    assert_int_equal(h.nshards, 2);
    assert_string_equal(h.shards[1], "b");
    dr_msg_heartbeat_free(&h);
    free(json);
}

static void test_refusals(void **state)
{
    (void)state;
    dr_err_t err = {0};
    dr_msg_heartbeat_t h;
    char body[600];
    char name[300];
    memset(name, 'x', 256);
    name[256] = '\0';
    snprintf(body, sizeof body, "{\"now_ns\":1,\"running\":0,\"shards\":[\"ok\",\"%s\"]}", name);
    assert_int_equal(dr_msg_heartbeat_parse(&h, body, strlen(body), &err), DR_EINVAL);
    assert_string_equal(err.msg, "heartbeat: shards[1]: longer than 255 bytes");
    name[255] = '\0';
    snprintf(body, sizeof body, "{\"now_ns\":1,\"running\":0,\"shards\":[\"%s\"]}", name);
    assert_int_equal(dr_msg_heartbeat_parse(&h, body, strlen(body), &err), DR_OK);
    dr_msg_heartbeat_free(&h);
    const char *notstr = "{\"now_ns\":1,\"running\":0,\"shards\":[\"a\",3]}";
    assert_int_equal(dr_msg_heartbeat_parse(&h, notstr, strlen(notstr), &err), DR_EINVAL);
    assert_string_equal(err.msg, "heartbeat: shards[1]: not a string");
    const char *notlist = "{\"now_ns\":1,\"running\":0,\"shards\":\"a\"}";
    assert_int_equal(dr_msg_heartbeat_parse(&h, notlist, strlen(notlist), &err), DR_EINVAL);
    assert_string_equal(err.msg, "heartbeat: shards: not an array");
    const char *nul = "{\"now_ns\":1,\"running\":0,\"shards\":[\"a\\u0000b\"]}";
    assert_int_equal(dr_msg_heartbeat_parse(&h, nul, strlen(nul), &err), DR_EINVAL);
    tu_assert_contains(err.msg, "heartbeat: invalid JSON"); /* jansson refuses NUL first */
    /* the encoder refuses what the parser would */
    char *names[] = {name};
    memset(name, 'y', 256);
    name[256] = '\0';
    dr_msg_register_t m = {
        .source = (char *)"x", .hostname = (char *)"h", .shards = names, .nshards = 1};
    char *json = NULL;
    size_t len;
    assert_int_equal(dr_msg_register_encode(&m, &json, &len, &err), DR_EINVAL);
    assert_string_equal(err.msg, "register: shards[0]: longer than 255 bytes");
    assert_null(json);
}

/* The most names a list may have, and one more. */
static void test_count_limit(void **state)
{
    (void)state;
    size_t cap = (size_t)(DR_MSG_MAX_SHARDS + 1) * 4 + 64;
    char *body = malloc(cap);
    assert_non_null(body);
    size_t n = (size_t)snprintf(body, cap, "{\"now_ns\":1,\"running\":0,\"shards\":[");
    for (uint32_t i = 0; i < DR_MSG_MAX_SHARDS; i++)
        n += (size_t)snprintf(body + n, cap - n, "%s\"\"", i ? "," : "");
    snprintf(body + n, cap - n, "]}");
    dr_msg_heartbeat_t h;
    dr_err_t err = {0};
    assert_int_equal(dr_msg_heartbeat_parse(&h, body, strlen(body), &err), DR_OK);
    assert_int_equal(h.nshards, DR_MSG_MAX_SHARDS);
    dr_msg_heartbeat_free(&h);
    snprintf(body + n, cap - n, ",\"\"]}");
    assert_int_equal(dr_msg_heartbeat_parse(&h, body, strlen(body), &err), DR_EINVAL);
    assert_string_equal(err.msg, "heartbeat: shards: more than 100000");
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register_round_trip), cmocka_unit_test(test_register_old_agent),
        cmocka_unit_test(test_heartbeat_given),     cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_count_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
