/* test_proto.c - the wire protocol: keys (node keys, the HELLO proof),
 * frame layout, AES-256-GCM sealing and replay checks, the
 * CHALLENGE/HELLO/WELCOME handshake, every message's JSON round trip and
 * the parsers' refusals (exact messages), and the fuzz seed corpus (which
 * this file generates: DROVER_PROTO_CORPUS_OUT=dir writes it). */
#include "testutil.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/fuzz_proto.h"
#include "drover/proto.h"
#include "drover/util.h"

/* ---- helpers ---- */

static const uint8_t key_a[DR_PROTO_KEY] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                            12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                            23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t nonce_a[DR_PROTO_NONCE] = {0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
                                                0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf};
static const uint8_t nonce_b[DR_PROTO_NONCE] = {0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
                                                0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf};
static const uint8_t nonce_c[DR_PROTO_NONCE] = {0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
                                                0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf};

static bool all_zero(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

/* An agent and a controller session after the handshake. */
static void open_pair(dr_proto_session_t *agent, dr_proto_session_t *ctld)
{
    dr_proto_session_init(agent, key_a, nonce_a);
    dr_proto_session_set_peer_nonce(agent, nonce_c);
    dr_proto_session_init(ctld, key_a, nonce_c);
    dr_proto_session_set_peer_nonce(ctld, nonce_a);
}

static uint8_t *frame_of(dr_proto_session_t *s, int type, const char *body, size_t *n)
{
    uint8_t *f;
    dr_err_t err;
    if (dr_proto_encode(s, type, body, strlen(body), &f, n, &err) != DR_OK)
        fail_msg("encode: %s", err.msg);
    return f;
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* A frame built by hand, so that tests can make ones the encoder never
 * would (HELLO with a sequence number, bad flags): sealed as tx would seal
 * it (its tx_key; AES-256-GCM, the header as associated data, the sequence
 * number as the last 8 bytes of the 12-byte IV), or with a zero tag for
 * the two types in clear.  An implementation apart from frame.c's. */
static uint8_t *raw_frame(const dr_proto_session_t *tx, int type, uint64_t seq,
                          const uint8_t *nonce, const char *body, size_t *n)
{
    size_t len = strlen(body);
    uint8_t *f = malloc(DR_PROTO_HDR + len + DR_PROTO_TAG + 1);
    assert_non_null(f);
    static const uint8_t magic[4] = {'D', 'R', 'V', '1'};
    memcpy(f, magic, sizeof magic);
    f[4] = DR_PROTO_VERSION;
    f[5] = (uint8_t)type;
    put_be(f + 6, 0, 2);
    put_be(f + 8, len, 4);
    put_be(f + 12, seq, 8);
    memcpy(f + 20, nonce, DR_PROTO_NONCE);
    memcpy(f + DR_PROTO_HDR, body, len);
    memset(f + DR_PROTO_HDR + len, 0, DR_PROTO_TAG);
    *n = DR_PROTO_HDR + len + DR_PROTO_TAG;
    if (type == DR_MSG_HELLO || type == DR_MSG_CHALLENGE)
        return f;
    uint8_t iv[12] = {0};
    put_be(iv + 4, seq, 8);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int out = 0;
    assert_non_null(c);
    assert_true(EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, tx->tx_key, iv));
    assert_true(EVP_EncryptUpdate(c, NULL, &out, f, DR_PROTO_HDR));
    if (len)
        assert_true(EVP_EncryptUpdate(c, f + DR_PROTO_HDR, &out, f + DR_PROTO_HDR, (int)len));
    assert_true(EVP_EncryptFinal_ex(c, f + DR_PROTO_HDR + len, &out));
    assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, DR_PROTO_TAG, f + DR_PROTO_HDR + len));
    EVP_CIPHER_CTX_free(c);
    return f;
}

static dr_proto_rc_t decode(dr_proto_session_t *s, uint8_t *buf, size_t n, size_t *used,
                            dr_frame_t *f)
{
    *used = 12345;
    return dr_proto_decode(s, buf, n, used, f);
}

/* decode() on a copy of the frame: the decoder opens a sealed frame in
 * place, so a test that hands the same bytes in twice (a replay) or to two
 * sessions hands in copies, as the network would. */
static dr_proto_rc_t decode_copy(dr_proto_session_t *s, const uint8_t *buf, size_t n, size_t *used,
                                 dr_frame_t *f)
{
    static uint8_t copy[1 << 16];
    assert_true(n <= sizeof copy);
    memcpy(copy, buf, n);
    return decode(s, copy, n, used, f);
}

/* ---- sample messages: every field set, edge values where they matter ---- */

static char *launch_argv[] = {"/bin/sh", "-c", "echo \"h\\i\" \xc3\xbcn\xc3\xaf", ""};
static char *launch_env[] = {"PATH=/usr/bin", "CUDA_VISIBLE_DEVICES=0,3", "EMPTY="};
static uint32_t launch_gpus[] = {0, 3, UINT32_MAX};
static dr_msg_gpu_t reg_gpus[] = {
    {0, "NVIDIA H100 80GB HBM3", "GPU-4a1f-77", "0000:17:00.0", 81559, 0},
    {1, "AMD Instinct MI300X", "", "", 196592, -1},
};
static dr_msg_held_t reg_held[] = {
    {42, 3, 0, true, 0, 0, DR_END_EXIT, 0},
    {INT64_MAX, UINT32_MAX, 7, false, -1, 9, DR_END_TIMEOUT, INT64_MIN},
};

static dr_msg_hello_t s_hello(void)
{
    dr_msg_hello_t m = {DR_PROTO_VERSION, "gpu-node-07", {0}, {0}};
    memcpy(m.nonce, nonce_a, sizeof m.nonce);
    for (int i = 0; i < DR_PROTO_PROOF; i++)
        m.proof[i] = (uint8_t)(0xe0 + i);
    return m;
}

static dr_msg_welcome_t s_welcome(void)
{
    dr_msg_welcome_t m = {{0}, INT64_MAX, 5000, 30000, "H100", 8, 224, 2097152};
    memcpy(m.nonce, nonce_c, sizeof m.nonce);
    return m;
}

static dr_msg_register_t s_register(void)
{
    return (dr_msg_register_t){"nvml",   reg_gpus, 2,    224, 2097152, 2, "gpu-node-07.cluster",
                               reg_held, 2,        NULL, 0};
}

static dr_msg_heartbeat_t s_heartbeat(void)
{
    return (dr_msg_heartbeat_t){1733000000123456789LL, 3, NULL, 0, false};
}

static dr_msg_launch_t s_launch(void)
{
    return (dr_msg_launch_t){.job = 42,
                             .gen = 3,
                             .epoch = 7,
                             .rank = 1,
                             .nranks = 2,
                             .argv = launch_argv,
                             .argc = 4,
                             .env = launch_env,
                             .nenv = 3,
                             .cwd = "/home/u",
                             .out_path = "/tmp/o.txt",
                             .err_path = "",
                             .uid = 1000,
                             .gid = UINT32_MAX,
                             .gpus = launch_gpus,
                             .ngpus = 3,
                             .time_limit_ns = 3600000000000LL,
                             .grace_ns = 30000000000LL,
                             .cpu_milli = 4000,
                             .mem_mb = 65536,
                             .port = 29501,
                             .ready = "http:/healthz",
                             .step = 2,
                             .signal = 10,
                             .signal_secs = 120,
                             .signal_batch = true,
                             .ckpt_every_ns = 1800000000000LL,
                             .ckpt_next_ns = 600000000000LL,
                             .ckpt_dir = "/home/u/.drover/ckpt/42",
                             .allow_root = true};
}

static dr_msg_kill_t s_kill(void)
{
    return (dr_msg_kill_t){42, 3, 15, 30000000000LL, "preempted by job 77", 1};
}

static dr_msg_job_state_t s_job_state(void)
{
    return (dr_msg_job_state_t){
        42,           3, 1, false, INT32_MAX, -1, 9, DR_END_LAUNCH, INT64_MAX, "exec: No such file",
        DR_READY_NONE};
}

static dr_msg_ack_t s_ack(void)
{
    return (dr_msg_ack_t){42, 3, 1};
}

static dr_msg_reject_t s_reject(void)
{
    return (dr_msg_reject_t){"node 'gpu-node-07' is not in cluster.conf"};
}

static char *step_argv[] = {"python3", "train.py", "--epochs=3"};
static char *step_env[] = {"HOME=/home/u", "SLURM_JOB_ID=42"};

static dr_msg_step_req_t s_step_req(void)
{
    return (dr_msg_step_req_t){.job = 42,
                               .gen = 3,
                               .req = 9,
                               .key = "0123456789abcdef0123456789abcdef",
                               .uid = 1000,
                               .ntasks = 4,
                               .nodes = 2,
                               .ntasks_per_node = 2,
                               .gpus_per_task = 1,
                               .cpus_per_task = 8,
                               .kill_on_bad_exit = true,
                               .argv = step_argv,
                               .argc = 3,
                               .env = step_env,
                               .nenv = 2,
                               .cwd = "/home/u",
                               .out_path = "/home/u/out.txt",
                               .err_path = "/home/u/err.txt"};
}

static dr_msg_step_cancel_t s_step_cancel(void)
{
    return (dr_msg_step_cancel_t){42, 3, 9, 15};
}

static dr_msg_step_state_t s_step_state(void)
{
    return (dr_msg_step_state_t){42, 3, 9, DR_STEP_DONE, 1, 4, 2, 137, "task 3 on n2: signal 9"};
}

static dr_msg_signal_t s_signal(void)
{
    return (dr_msg_signal_t){42,         3,    1,   10, DR_SIG_PREEMPT, 1733000000123456789LL,
                             "/ckpt/42", 1000, 1000};
}

static dr_msg_lease_t s_lease(void)
{
    return (dr_msg_lease_t){(uint64_t)INT64_MAX - 1};
}

static char *ckpt_rejected[] = {
    "step-000300: model.pt: XXH3-128 differs (its contents changed)",
    "step-000200: opt.pt: 10 bytes, the manifest says 4096 (truncated)"};

static dr_msg_ckpt_t s_ckpt(void)
{
    return (dr_msg_ckpt_t){
        42, 3, 0, "step-000100", 1, "", ckpt_rejected, 2, true, 1733000000123456789LL};
}

static dr_msg_output_req_t s_output_req(void)
{
    return (dr_msg_output_req_t){7, 42, "/home/u/drover-42.out", 1000, 1000, 4096, 65536};
}

/* bytes a string could not carry: NUL, high bytes, a lone '=' to pad */
static uint8_t output_bytes[] = {'o', 'k', '\n', 0, 0xff, 0x80, '='};

static dr_msg_output_t s_output(void)
{
    return (dr_msg_output_t){7, DR_OUTPUT_OK, "", output_bytes, sizeof output_bytes, 4103};
}

/* The sample of a type, in *any. */
static void sample(int type, fp_any_t *a)
{
    memset(a, 0, sizeof *a);
    switch (type) {
    case DR_MSG_HELLO: a->hello = s_hello(); break;
    case DR_MSG_WELCOME: a->welcome = s_welcome(); break;
    case DR_MSG_REGISTER: a->reg = s_register(); break;
    case DR_MSG_HEARTBEAT: a->heartbeat = s_heartbeat(); break;
    case DR_MSG_LAUNCH: a->launch = s_launch(); break;
    case DR_MSG_KILL: a->kill = s_kill(); break;
    case DR_MSG_JOB_STATE: a->job_state = s_job_state(); break;
    case DR_MSG_ACK: a->ack = s_ack(); break;
    case DR_MSG_REJECT: a->reject = s_reject(); break;
    case DR_MSG_STEP_REQ: a->step_req = s_step_req(); break;
    case DR_MSG_STEP_CANCEL: a->step_cancel = s_step_cancel(); break;
    case DR_MSG_STEP_STATE: a->step_state = s_step_state(); break;
    case DR_MSG_SIGNAL: a->signal = s_signal(); break;
    case DR_MSG_SIGNALED:
        a->signal = s_signal();
        a->signal.why = DR_SIG_CKPT;
        break;
    case DR_MSG_LEASE: a->lease = s_lease(); break;
    case DR_MSG_CKPT: a->ckpt = s_ckpt(); break;
    case DR_MSG_OUTPUT_REQ: a->output_req = s_output_req(); break;
    case DR_MSG_OUTPUT: a->output = s_output(); break;
    case DR_MSG_CHALLENGE:
        a->challenge = (dr_msg_challenge_t){.version = DR_PROTO_VERSION};
        memcpy(a->challenge.nonce, nonce_c, DR_PROTO_NONCE);
        break;
    default: fail_msg("no sample for type %d", type);
    }
}

static char *sample_json(int type)
{
    fp_any_t a;
    sample(type, &a);
    char *j;
    size_t n;
    dr_err_t err;
    if (fp_msgs[type].encode(&a, &j, &n, &err) != DR_OK)
        fail_msg("encode %s: %s", dr_msg_type_name(type), err.msg);
    assert_int_equal(n, strlen(j));
    return j;
}

/* s with the first `from` replaced by `to` (malloc'd; fails if absent). */
static char *replace(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    if (!at) {
        fail_msg("'%s' not in '%s'", from, s);
        return NULL;
    }
    size_t size = strlen(s) - strlen(from) + strlen(to) + 1;
    char *r = malloc(size);
    assert_non_null(r);
    snprintf(r, size, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
    return r;
}

/* Parse body as `type` and expect a refusal with exactly msg (or, if msg
 * ends in '*', starting with it); the struct must come back zeroed. */
static void expect_refused_n(int type, const char *body, size_t len, const char *msg)
{
    fp_any_t a;
    memset(&a, 0x5a, sizeof a);
    dr_err_t err = {0};
    int rc = fp_msgs[type].parse(&a, body, len, &err);
    if (rc >= 0)
        fail_msg("%s parsed '%.200s' (want '%s')", dr_msg_type_name(type), body, msg);
    size_t ml = strlen(msg);
    if (ml && msg[ml - 1] == '*') {
        if (strncmp(err.msg, msg, ml - 1) != 0)
            fail_msg("got '%s', want '%s'", err.msg, msg);
    } else {
        assert_string_equal(err.msg, msg);
    }
    assert_true(all_zero(&a, fp_msgs[type].size));
}

static void expect_refused(int type, const char *body, const char *msg)
{
    expect_refused_n(type, body, strlen(body), msg);
}

/* The sample with one substitution must be refused with msg. */
static void expect_sample_refused(int type, const char *from, const char *to, const char *msg)
{
    char *j = sample_json(type);
    char *b = replace(j, from, to);
    expect_refused(type, b, msg);
    free(b);
    free(j);
}

static void expect_parses(int type, const char *body)
{
    fp_any_t a;
    dr_err_t err = {0};
    if (fp_msgs[type].parse(&a, body, strlen(body), &err) != DR_OK)
        fail_msg("%s: '%.200s': %s", dr_msg_type_name(type), body, err.msg);
    fp_msgs[type].free(&a);
    assert_true(all_zero(&a, fp_msgs[type].size));
}

/* ---- names and keys ---- */

static void test_type_names(void **state)
{
    (void)state;
    const char *want[] = {"unknown",  "hello",       "welcome",    "register", "heartbeat",
                          "launch",   "kill",        "job_state",  "ack",      "reject",
                          "step_req", "step_cancel", "step_state", "signal",   "signaled",
                          "lease",    "ckpt",        "output_req", "output",   "challenge"};
    for (int t = 0; t < (int)(sizeof want / sizeof want[0]); t++)
        assert_string_equal(dr_msg_type_name(t), want[t]);
    assert_string_equal(dr_msg_type_name(DR_MSG_CHALLENGE), "challenge");
    assert_string_equal(dr_msg_type_name(DR_MSG_NTYPES), "unknown");
    assert_string_equal(dr_msg_type_name(-1), "unknown");
}

static void test_key_parse(void **state)
{
    (void)state;
    const char *hex = "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F";
    uint8_t key[DR_PROTO_KEY];
    dr_err_t err = {0};
    assert_int_equal(dr_proto_key_parse(hex, 64, key, &err), DR_OK);
    for (int i = 0; i < DR_PROTO_KEY; i++)
        assert_int_equal(key[i], i);
    char text[80];
    snprintf(text, sizeof text, "%s \t\r\n\n", hex);
    memset(key, 0, sizeof key);
    assert_int_equal(dr_proto_key_parse(text, strlen(text), key, &err), DR_OK);
    assert_int_equal(key[31], 31);

    char out[66];
    dr_proto_key_format(key, out);
    assert_string_equal(out, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n");
    uint8_t back[DR_PROTO_KEY];
    assert_int_equal(dr_proto_key_parse(out, strlen(out), back, &err), DR_OK);
    assert_memory_equal(back, key, DR_PROTO_KEY);

    struct {
        const char *text;
        const char *msg;
    } bad[] = {
        {"", "key: 0 hex digits, expected 64"},
        {"\n", "key: 0 hex digits, expected 64"},
        {"0011223344\n", "key: 10 hex digits, expected 64"},
        {" 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
         "key: character 1 is not a hex digit"},
        {"000102030405060708090a0b0c0d0e0fX01112131415161718191a1b1c1d1e1f",
         "key: character 33 is not a hex digit"},
        {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f0",
         "key: more than 64 hex digits"},
        {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\nsecret",
         "key: character 66: only whitespace may follow the 64 hex digits"},
        {"0x0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
         "key: character 2 is not a hex digit"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dr_err_clear(&err);
        assert_int_equal(dr_proto_key_parse(bad[i].text, strlen(bad[i].text), key, &err),
                         DR_EINVAL);
        assert_string_equal(err.msg, bad[i].msg);
    }
    /* the length given is what counts: a NUL inside it is not whitespace */
    char nul[65];
    memcpy(nul, hex, 64);
    nul[64] = '\0';
    assert_int_equal(dr_proto_key_parse(nul, 65, key, &err), DR_EINVAL);
    assert_int_equal(dr_proto_key_parse(hex, 63, key, &err), DR_EINVAL);
    assert_string_equal(err.msg, "key: 63 hex digits, expected 64");
}

/* ---- frames ---- */

static void test_frame_layout(void **state)
{
    (void)state;
    dr_proto_session_t a, c;
    open_pair(&a, &c);
    a.tx_seq = 0x0102030405060707ULL;
    size_t n;
    uint8_t *f = frame_of(&a, DR_MSG_HEARTBEAT, "{\"x\":1}", &n);
    assert_int_equal(n, DR_PROTO_HDR + 7 + DR_PROTO_TAG);
    const uint8_t hdr[20] = {
        'D', 'R', 'V', '1', DR_PROTO_VERSION, DR_MSG_HEARTBEAT, 0, 0, 0, 0, 0, 7, 1, 2, 3, 4,
        5,   6,   7,   8};
    assert_memory_equal(f, hdr, sizeof hdr);
    assert_memory_equal(f + 20, nonce_c, DR_PROTO_NONCE);
    /* the body is sealed: not in clear on the wire */
    assert_memory_not_equal(f + DR_PROTO_HDR, "{\"x\":1}", 7);
    size_t rn;
    uint8_t *r = raw_frame(&a, DR_MSG_HEARTBEAT, 0x0102030405060708ULL, nonce_c, "{\"x\":1}", &rn);
    assert_int_equal(rn, n);
    assert_memory_equal(f, r, n); /* so it is AES-256-GCM with the header as associated data */
    assert_int_equal(a.tx_seq, 0x0102030405060708ULL);
    assert_int_equal(a.stats.frames_out, 1);
    free(r);
    free(f);

    /* HELLO: in clear, sequence 0, zero nonce and tag, no sequence number used up */
    dr_proto_session_t h;
    dr_proto_session_init(&h, key_a, nonce_a);
    f = frame_of(&h, DR_MSG_HELLO, "{}", &n);
    assert_int_equal(f[5], DR_MSG_HELLO);
    assert_true(all_zero(f + 12, 8 + DR_PROTO_NONCE));
    assert_memory_equal(f + DR_PROTO_HDR, "{}", 2);
    assert_true(all_zero(f + DR_PROTO_HDR + 2, DR_PROTO_TAG));
    assert_int_equal(h.tx_seq, 0);
    free(f);
}

static void test_frame_decode_good(void **state)
{
    (void)state;
    dr_proto_session_t a, c;
    open_pair(&a, &c);
    size_t n, used;
    uint8_t *f = frame_of(&a, DR_MSG_JOB_STATE, "{\"job\":1}", &n);
    dr_frame_t fr;
    assert_int_equal(decode(&c, f, n, &used, &fr), DR_PROTO_FRAME);
    assert_int_equal(used, n);
    assert_int_equal(fr.type, DR_MSG_JOB_STATE);
    assert_int_equal(fr.seq, 1);
    assert_int_equal(fr.len, 9);
    assert_ptr_equal(fr.body, (const char *)f + DR_PROTO_HDR);
    assert_memory_equal(fr.body, "{\"job\":1}", 9);
    assert_int_equal(c.rx_seq, 1);
    assert_int_equal(c.stats.frames_in, 1);
    assert_int_equal(c.stats.bad_mac + c.stats.replayed + c.stats.bad_header, 0);
    free(f);

    /* an empty body is a frame too */
    f = frame_of(&a, DR_MSG_ACK, "", &n);
    assert_int_equal(n, DR_PROTO_HDR + DR_PROTO_TAG);
    assert_int_equal(decode(&c, f, n, &used, &fr), DR_PROTO_FRAME);
    assert_int_equal(fr.len, 0);
    assert_int_equal(fr.seq, 2);
    free(f);
}

/* What the decoder must say about a frame whose bytes were changed. */
static dr_proto_rc_t expected_rc(const uint8_t *f, size_t n)
{
    size_t len = (size_t)f[8] << 24 | (size_t)f[9] << 16 | (size_t)f[10] << 8 | f[11];
    /* in an open session: a sealed type only */
    if (memcmp(f, "DRV1", 4) != 0 || f[4] != DR_PROTO_VERSION || !fp_sealed(f[5]) || f[6] || f[7] ||
        len > DR_PROTO_MAX_BODY)
        return DR_PROTO_FATAL;
    if (DR_PROTO_HDR + len + DR_PROTO_TAG > n)
        return DR_PROTO_NEED;
    return DR_PROTO_DROPPED;
}

static void test_frame_bit_flips(void **state)
{
    (void)state;
    dr_proto_session_t a, c;
    open_pair(&a, &c);
    size_t n, used;
    uint8_t *f = frame_of(&a, DR_MSG_HEARTBEAT, "{\"now_ns\":5,\"running\":2}", &n);
    uint8_t *g = malloc(n);
    assert_non_null(g);
    int fatal = 0, need = 0, dropped = 0;
    for (size_t i = 0; i < n; i++) {
        for (int b = 0; b < 8; b++) {
            memcpy(g, f, n);
            g[i] ^= (uint8_t)(1u << b);
            dr_proto_session_t s = c;
            dr_frame_t fr;
            dr_proto_rc_t want = expected_rc(g, n);
            dr_proto_rc_t rc = decode(&s, g, n, &used, &fr);
            if (rc != want || (i >= 12 && rc != DR_PROTO_DROPPED))
                fail_msg("byte %zu bit %d: rc %d, want %d", i, b, rc, want);
            assert_int_equal(s.stats.frames_in, 0);
            assert_int_equal(s.rx_seq, 0);
            if (rc == DR_PROTO_FATAL) {
                fatal++;
                assert_int_equal(s.stats.bad_header, 1);
                assert_int_equal(used, 0);
            } else if (rc == DR_PROTO_NEED) {
                need++;
                assert_int_equal(used, 0);
            } else {
                dropped++;
                assert_int_equal(s.stats.bad_mac, 1);
                assert_int_equal(s.stats.replayed, 0);
                assert_true(used <= n);
            }
        }
    }
    /* every bit past the sanity-checked first 12 bytes fails the tag; in
     * those 12, some make the header insane, some (a longer length) make
     * the frame look incomplete, the rest (another valid type, a shorter
     * length) fail the tag */
    assert_true(dropped > (int)(n - 12) * 8);
    assert_true(fatal > 0 && need > 0);
    /* the unchanged frame is still good */
    dr_frame_t fr;
    assert_int_equal(decode(&c, f, n, &used, &fr), DR_PROTO_FRAME);
    free(g);
    free(f);
}

static void test_frame_replay(void **state)
{
    (void)state;
    dr_proto_session_t a, c;
    open_pair(&a, &c);
    size_t n1, n2, used;
    uint8_t *f1 = frame_of(&a, DR_MSG_HEARTBEAT, "{}", &n1);
    uint8_t *f2 = frame_of(&a, DR_MSG_HEARTBEAT, "{}", &n2);
    dr_frame_t fr;
    assert_int_equal(decode_copy(&c, f1, n1, &used, &fr), DR_PROTO_FRAME);
    /* the same bytes again: consumed, dropped, counted */
    assert_int_equal(decode_copy(&c, f1, n1, &used, &fr), DR_PROTO_DROPPED);
    assert_int_equal(used, n1);
    assert_int_equal(c.stats.replayed, 1);
    assert_int_equal(decode_copy(&c, f2, n2, &used, &fr), DR_PROTO_FRAME);
    assert_int_equal(fr.seq, 2);
    /* an older frame after a newer one */
    assert_int_equal(decode_copy(&c, f1, n1, &used, &fr), DR_PROTO_DROPPED);
    assert_int_equal(c.stats.replayed, 2);
    assert_int_equal(c.stats.frames_in, 2);
    assert_int_equal(c.stats.bad_mac, 0);
    assert_int_equal(c.rx_seq, 2);

    /* a frame of another session (another controller nonce), same key:
     * other frame keys, so it fails its tag */
    dr_proto_session_t a2, c2;
    dr_proto_session_init(&c2, key_a, nonce_b); /* any nonce but nonce_c */
    dr_proto_session_set_peer_nonce(&c2, nonce_a);
    dr_proto_session_init(&a2, key_a, nonce_a);
    dr_proto_session_set_peer_nonce(&a2, nonce_c);
    size_t n3;
    uint8_t *f3 = frame_of(&a2, DR_MSG_HEARTBEAT, "{}", &n3);
    assert_int_equal(decode(&c2, f3, n3, &used, &fr), DR_PROTO_DROPPED);
    assert_int_equal(c2.stats.bad_mac, 1);
    /* and one sealed with the right keys but the other session's nonce in
     * its header is still refused */
    uint8_t *f4 = raw_frame(&a, DR_MSG_HEARTBEAT, 9, nonce_b, "{}", &n3);
    assert_int_equal(decode(&c, f4, n3, &used, &fr), DR_PROTO_DROPPED);
    assert_int_equal(c.stats.replayed, 3);
    free(f4);
    free(f1);
    free(f2);
    free(f3);
}

static void test_frame_wrong_key(void **state)
{
    (void)state;
    dr_proto_session_t a, c;
    open_pair(&a, &c);
    uint8_t other[DR_PROTO_KEY];
    memcpy(other, key_a, sizeof other);
    other[17] ^= 0x40;
    dr_proto_session_t w;
    dr_proto_session_init(&w, other, nonce_c);
    dr_proto_session_set_peer_nonce(&w, nonce_a);
    size_t n, used;
    uint8_t *f = frame_of(&a, DR_MSG_KILL, "{}", &n);
    dr_frame_t fr;
    assert_int_equal(decode_copy(&w, f, n, &used, &fr), DR_PROTO_DROPPED);
    assert_int_equal(used, n);
    assert_int_equal(w.stats.bad_mac, 1);
    assert_int_equal(w.rx_seq, 0);
    assert_int_equal(decode(&c, f, n, &used, &fr), DR_PROTO_FRAME);
    free(f);
}

static void test_frame_partial(void **state)
{
    (void)state;
    dr_proto_session_t a, c;
    open_pair(&a, &c);
    char *body = sample_json(DR_MSG_LAUNCH);
    size_t n, used;
    uint8_t *f = frame_of(&a, DR_MSG_LAUNCH, body, &n);
    dr_frame_t fr;
    for (size_t k = 0; k < n; k++) {
        dr_proto_session_t before = c;
        if (decode(&c, f, k, &used, &fr) != DR_PROTO_NEED)
            fail_msg("%zu of %zu bytes: not NEED", k, n);
        assert_int_equal(used, 0);
        assert_memory_equal(&before, &c, sizeof c);
    }
    assert_int_equal(decode(&c, f, n, &used, &fr), DR_PROTO_FRAME);
    assert_int_equal(used, n);
    assert_int_equal(fr.len, strlen(body));
    free(f);
    free(body);
}

static void test_frame_two_in_buffer(void **state)
{
    (void)state;
    dr_proto_session_t a, c;
    open_pair(&a, &c);
    size_t n1, n2, used;
    uint8_t *f1 = frame_of(&a, DR_MSG_HEARTBEAT, "{\"a\":1}", &n1);
    uint8_t *f2 = frame_of(&a, DR_MSG_JOB_STATE, "{\"bb\":22}", &n2);
    uint8_t *buf = malloc(n1 + n2);
    assert_non_null(buf);
    memcpy(buf, f1, n1);
    memcpy(buf + n1, f2, n2);
    dr_frame_t fr;
    /* the second frame cut short does not hold up the first */
    assert_int_equal(decode(&c, buf, n1 + n2 - 1, &used, &fr), DR_PROTO_FRAME);
    assert_int_equal(used, n1);
    assert_int_equal(fr.type, DR_MSG_HEARTBEAT);
    assert_int_equal(decode(&c, buf + n1, n2 - 1, &used, &fr), DR_PROTO_NEED);
    assert_int_equal(decode(&c, buf + n1, n2, &used, &fr), DR_PROTO_FRAME);
    assert_int_equal(used, n2);
    assert_int_equal(fr.type, DR_MSG_JOB_STATE);
    assert_int_equal(fr.seq, 2);
    assert_memory_equal(fr.body, "{\"bb\":22}", 9);
    assert_int_equal(c.stats.frames_in, 2);
    free(buf);
    free(f1);
    free(f2);
}

static void test_frame_bad_header(void **state)
{
    (void)state;
    dr_proto_session_t a, c;
    open_pair(&a, &c);
    size_t n, used;
    dr_frame_t fr;
    uint8_t *f = frame_of(&a, DR_MSG_ACK, "{}", &n);
    struct {
        size_t off;
        uint8_t val;
    } bad[] = {{0, 'X'},
               {3, '2'},
               {4, 1},
               {4, 0},
               {5, 0},
               {5, DR_MSG_NTYPES},
               {5, 0xff},
               {5, DR_MSG_HELLO},
               {5, DR_MSG_CHALLENGE},
               {6, 1},
               {7, 1},
               {8, 1},
               {9, 0x81}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t g[DR_PROTO_HDR];
        memcpy(g, f, sizeof g);
        g[bad[i].off] = bad[i].val;
        dr_proto_session_t s = c;
        /* garbage is refused as soon as the field that shows it is in */
        assert_int_equal(decode(&s, g, bad[i].off + 1, &used, &fr), DR_PROTO_FATAL);
        assert_int_equal(used, 0);
        assert_int_equal(decode(&s, g, sizeof g, &used, &fr), DR_PROTO_FATAL);
        assert_int_equal(s.stats.bad_header, 2);
    }
    /* length: DR_PROTO_MAX_BODY is allowed (the rest has not arrived), one more is fatal */
    uint8_t g[DR_PROTO_HDR];
    memcpy(g, f, sizeof g);
    put_be(g + 8, DR_PROTO_MAX_BODY, 4);
    assert_int_equal(decode(&c, g, sizeof g, &used, &fr), DR_PROTO_NEED);
    put_be(g + 8, DR_PROTO_MAX_BODY + 1, 4);
    assert_int_equal(decode(&c, g, 12, &used, &fr), DR_PROTO_FATAL);
    put_be(g + 8, UINT32_MAX, 4);
    assert_int_equal(decode(&c, g, sizeof g, &used, &fr), DR_PROTO_FATAL);
    assert_int_equal(c.stats.bad_header, 2);
    /* a prefix of a good header is just incomplete */
    for (size_t k = 0; k < DR_PROTO_HDR; k++)
        assert_int_equal(decode(&c, f, k, &used, &fr), DR_PROTO_NEED);
    free(f);
}

static void test_encode_errors(void **state)
{
    (void)state;
    dr_proto_session_t a, c;
    open_pair(&a, &c);
    uint8_t *f = (uint8_t *)1;
    size_t n = 7;
    dr_err_t err = {0};
    assert_int_equal(dr_proto_encode(&a, 0, "{}", 2, &f, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "frame: unknown message type 0");
    assert_null(f);
    assert_int_equal(n, 0);
    assert_int_equal(dr_proto_encode(&a, DR_MSG_NTYPES, "{}", 2, &f, &n, &err), DR_EINVAL);
    char *big = calloc(DR_PROTO_MAX_BODY + 1, 1);
    assert_non_null(big);
    assert_int_equal(dr_proto_encode(&a, DR_MSG_LAUNCH, big, DR_PROTO_MAX_BODY + 1, &f, &n, &err),
                     DR_ELIMIT);
    char want[96];
    snprintf(want, sizeof want, "frame: launch body of %u bytes exceeds %u", DR_PROTO_MAX_BODY + 1,
             DR_PROTO_MAX_BODY);
    assert_string_equal(err.msg, want);
    /* the largest body goes through, and back */
    memset(big, ' ', DR_PROTO_MAX_BODY);
    assert_int_equal(dr_proto_encode(&a, DR_MSG_LAUNCH, big, DR_PROTO_MAX_BODY, &f, &n, &err),
                     DR_OK);
    size_t used;
    dr_frame_t fr;
    assert_int_equal(decode(&c, f, n, &used, &fr), DR_PROTO_FRAME);
    assert_int_equal(fr.len, DR_PROTO_MAX_BODY);
    free(f);
    free(big);
    assert_int_equal(a.tx_seq, 1); /* refused frames used no sequence number */

    dr_proto_session_t fresh;
    dr_proto_session_init(&fresh, key_a, nonce_a);
    assert_int_equal(dr_proto_encode(&fresh, DR_MSG_REGISTER, "{}", 2, &f, &n, &err), DR_ESTATE);
    assert_string_equal(err.msg, "frame: cannot send register before the session is open");
    assert_int_equal(fresh.tx_seq, 0);
    assert_int_equal(fresh.stats.frames_out, 0);
}

static void test_hello_rules(void **state)
{
    (void)state;
    dr_proto_session_t agent, ctld;
    dr_proto_session_init(&agent, key_a, nonce_a);
    dr_proto_session_init(&ctld, key_a, nonce_c);
    size_t n, used;
    dr_frame_t fr;

    /* before the session opens, a sealed frame is not even a header */
    dr_proto_session_t open_agent = agent;
    dr_proto_session_set_peer_nonce(&open_agent, nonce_c);
    uint8_t *hb = frame_of(&open_agent, DR_MSG_HEARTBEAT, "{}", &n);
    assert_int_equal(decode(&ctld, hb, n, &used, &fr), DR_PROTO_FATAL);
    assert_int_equal(ctld.stats.bad_header, 1);
    free(hb);
    /* nor a frame in clear larger than DR_PROTO_MAX_PREAUTH: refused from its header */
    uint8_t big[DR_PROTO_HDR];
    hb = frame_of(&agent, DR_MSG_HELLO, "{}", &n);
    memcpy(big, hb, sizeof big);
    put_be(big + 8, DR_PROTO_MAX_PREAUTH, 4);
    assert_int_equal(decode(&ctld, big, sizeof big, &used, &fr), DR_PROTO_NEED);
    put_be(big + 8, DR_PROTO_MAX_PREAUTH + 1, 4);
    assert_int_equal(decode(&ctld, big, 12, &used, &fr), DR_PROTO_FATAL);
    free(hb);

    /* a HELLO with a sequence number, a nonce or a tag is not a HELLO */
    uint8_t *h = raw_frame(&agent, DR_MSG_HELLO, 1, (const uint8_t[DR_PROTO_NONCE]){0}, "{}", &n);
    assert_int_equal(decode(&ctld, h, n, &used, &fr), DR_PROTO_DROPPED);
    free(h);
    h = raw_frame(&agent, DR_MSG_HELLO, 0, nonce_c, "{}", &n);
    assert_int_equal(decode(&ctld, h, n, &used, &fr), DR_PROTO_DROPPED);
    assert_int_equal(ctld.stats.replayed, 2);
    h[n - 1] = 1;
    memset(h + 20, 0, DR_PROTO_NONCE);
    assert_int_equal(decode(&ctld, h, n, &used, &fr), DR_PROTO_DROPPED);
    assert_int_equal(ctld.stats.bad_mac, 1);
    free(h);

    h = frame_of(&agent, DR_MSG_HELLO, "{}", &n);
    assert_int_equal(decode(&ctld, h, n, &used, &fr), DR_PROTO_FRAME);
    assert_int_equal(fr.type, DR_MSG_HELLO);
    assert_int_equal(fr.seq, 0);
    assert_int_equal(dr_proto_session_set_peer_nonce(&ctld, nonce_a), DR_OK);
    /* once the session is open, HELLO (replayed or new) ends the stream */
    assert_int_equal(decode(&ctld, h, n, &used, &fr), DR_PROTO_FATAL);
    free(h);
    assert_int_equal(ctld.stats.frames_in, 1);

    /* the agent's side: CHALLENGE in clear opens it; after, it is fatal */
    uint8_t *c = frame_of(&open_agent, DR_MSG_ACK, "{}", &n); /* any sealed frame */
    free(c);
    dr_proto_session_t cs;
    dr_proto_session_init(&cs, key_a, nonce_c);
    c = frame_of(&cs, DR_MSG_CHALLENGE, "{}", &n);
    assert_int_equal(decode(&agent, c, n, &used, &fr), DR_PROTO_FRAME);
    assert_int_equal(fr.type, DR_MSG_CHALLENGE);
    assert_int_equal(dr_proto_session_set_peer_nonce(&agent, nonce_c), DR_OK);
    assert_int_equal(decode(&agent, c, n, &used, &fr), DR_PROTO_FATAL);
    free(c);
    /* a session cannot be opened on its own nonce (a reflection) */
    dr_proto_session_t r;
    dr_proto_session_init(&r, key_a, nonce_a);
    assert_int_equal(dr_proto_session_set_peer_nonce(&r, nonce_a), DR_EINVAL);
    assert_false(r.have_peer_nonce);
    /* the session goes on: WELCOME, sealed, then the rest */
    uint8_t *w = frame_of(&ctld, DR_MSG_WELCOME, "{}", &n);
    assert_int_equal(decode(&agent, w, n, &used, &fr), DR_PROTO_FRAME);
    free(w);
    w = frame_of(&ctld, DR_MSG_ACK, "{}", &n);
    assert_int_equal(decode(&agent, w, n, &used, &fr), DR_PROTO_FRAME);
    assert_int_equal(fr.seq, 2);
    free(w);
}

/* Node keys and the HELLO proof: a node key is good for its own name only,
 * a proof for one challenge only. */
static void test_node_keys(void **state)
{
    (void)state;
    uint8_t k1[DR_PROTO_KEY], k1b[DR_PROTO_KEY], k2[DR_PROTO_KEY], p[DR_PROTO_PROOF];
    dr_err_t err = {0};
    assert_int_equal(dr_proto_node_key(key_a, "n1", k1, &err), DR_OK);
    assert_int_equal(dr_proto_node_key(key_a, "n1", k1b, &err), DR_OK);
    assert_int_equal(dr_proto_node_key(key_a, "n2", k2, &err), DR_OK);
    assert_memory_equal(k1, k1b, sizeof k1);
    assert_memory_not_equal(k1, k2, sizeof k1);
    assert_memory_not_equal(k1, key_a, sizeof k1);
    /* HMAC-SHA256(master, "drover-node-key\0" || name), by OpenSSL's HMAC() */
    uint8_t msg[18] = "drover-node-key";
    memcpy(msg + 16, "n1", 2);
    uint8_t want[32];
    unsigned int wl = 0;
    assert_non_null(HMAC(EVP_sha256(), key_a, DR_PROTO_KEY, msg, sizeof msg, want, &wl));
    assert_memory_equal(k1, want, sizeof want);
    assert_int_equal(dr_proto_node_key(key_a, "", k1b, &err), DR_EINVAL);
    /* generations: 0 is the plain key; 1 is another, HMAC over name "\0" "1" */
    assert_int_equal(dr_proto_node_key_gen(key_a, "n1", 0, k1b, &err), DR_OK);
    assert_memory_equal(k1, k1b, sizeof k1);
    assert_int_equal(dr_proto_node_key_gen(key_a, "n1", 1, k1b, &err), DR_OK);
    assert_memory_not_equal(k1, k1b, sizeof k1);
    uint8_t msg1[20] = "drover-node-key";
    memcpy(msg1 + 16,
           "n1\0"
           "1",
           4);
    assert_non_null(HMAC(EVP_sha256(), key_a, DR_PROTO_KEY, msg1, sizeof msg1, want, &wl));
    assert_memory_equal(k1b, want, sizeof want);

    assert_int_equal(dr_proto_hello_proof(k1, nonce_c, nonce_a, "n1", p, &err), DR_OK);
    assert_true(dr_proto_hello_verify(k1, nonce_c, nonce_a, "n1", p));
    /* n2's key cannot prove n1, nor n1's proof pass for n2 */
    assert_false(dr_proto_hello_verify(k2, nonce_c, nonce_a, "n1", p));
    assert_false(dr_proto_hello_verify(k1, nonce_c, nonce_a, "n2", p));
    /* another challenge, another agent nonce: a replayed HELLO proves nothing */
    assert_false(dr_proto_hello_verify(k1, nonce_b, nonce_a, "n1", p));
    assert_false(dr_proto_hello_verify(k1, nonce_c, nonce_b, "n1", p));
    p[31] ^= 1;
    assert_false(dr_proto_hello_verify(k1, nonce_c, nonce_a, "n1", p));

    /* sessions under two different node keys cannot read each other */
    dr_proto_session_t a, c;
    dr_proto_session_init(&a, k2, nonce_a);
    dr_proto_session_set_peer_nonce(&a, nonce_c);
    dr_proto_session_init(&c, k1, nonce_c);
    dr_proto_session_set_peer_nonce(&c, nonce_a);
    size_t n, used;
    dr_frame_t fr;
    uint8_t *f = frame_of(&c, DR_MSG_LAUNCH, "{\"env\":[\"HF_TOKEN=secret123\"]}", &n);
    assert_null(memmem(f, n, "secret123", 9));
    assert_int_equal(decode(&a, f, n, &used, &fr), DR_PROTO_DROPPED);
    assert_int_equal(a.stats.bad_mac, 1);
    free(f);
}

/* Send m of type from one session, take it at the other, parse it into out. */
static void deliver(dr_proto_session_t *from, dr_proto_session_t *to, int type, const void *m,
                    fp_any_t *out)
{
    uint8_t *f;
    size_t n, used;
    dr_err_t err = {0};
    if (dr_proto_send_msg(from, type, m, &f, &n, &err) != DR_OK)
        fail_msg("send %s: %s", dr_msg_type_name(type), err.msg);
    dr_frame_t fr;
    assert_int_equal(decode(to, f, n, &used, &fr), DR_PROTO_FRAME);
    assert_int_equal(used, n);
    assert_int_equal(fr.type, type);
    if (fp_msgs[type].parse(out, fr.body, fr.len, &err) != DR_OK)
        fail_msg("parse %s: %s", dr_msg_type_name(type), err.msg);
    free(f);
}

static void test_handshake(void **state)
{
    (void)state;
    dr_proto_session_t agent, ctld;
    dr_proto_session_init(&agent, key_a, nonce_a);
    dr_proto_session_init(&ctld, key_a, nonce_c);
    fp_any_t got;

    dr_msg_challenge_t ch = {.version = DR_PROTO_VERSION};
    memcpy(ch.nonce, nonce_c, sizeof ch.nonce);
    deliver(&ctld, &agent, DR_MSG_CHALLENGE, &ch, &got);
    uint8_t nc[DR_PROTO_NONCE];
    memcpy(nc, got.challenge.nonce, sizeof nc);
    dr_msg_challenge_free(&got.challenge);

    dr_msg_hello_t hello = s_hello();
    dr_err_t perr = {0};
    assert_int_equal(dr_proto_hello_proof(key_a, nc, hello.nonce, hello.name, hello.proof, &perr),
                     DR_OK);
    deliver(&agent, &ctld, DR_MSG_HELLO, &hello, &got);
    assert_int_equal(dr_proto_session_set_peer_nonce(&agent, nc), DR_OK);
    assert_string_equal(got.hello.name, "gpu-node-07");
    assert_true(
        dr_proto_hello_verify(key_a, nonce_c, got.hello.nonce, got.hello.name, got.hello.proof));
    dr_proto_session_set_peer_nonce(&ctld, got.hello.nonce);
    dr_msg_hello_free(&got.hello);

    dr_msg_welcome_t welcome = s_welcome();
    deliver(&ctld, &agent, DR_MSG_WELCOME, &welcome, &got);
    assert_int_equal(got.welcome.epoch, INT64_MAX);
    dr_msg_welcome_free(&got.welcome);

    dr_msg_register_t reg = s_register();
    deliver(&agent, &ctld, DR_MSG_REGISTER, &reg, &got);
    assert_int_equal(got.reg.ngpus, 2);
    dr_msg_register_free(&got.reg);
    dr_msg_launch_t launch = s_launch();
    deliver(&ctld, &agent, DR_MSG_LAUNCH, &launch, &got);
    assert_string_equal(got.launch.argv[0], "/bin/sh");
    dr_msg_launch_free(&got.launch);
    dr_msg_job_state_t js = s_job_state();
    deliver(&agent, &ctld, DR_MSG_JOB_STATE, &js, &got);
    dr_msg_job_state_free(&got.job_state);
    dr_msg_ack_t ack = s_ack();
    deliver(&ctld, &agent, DR_MSG_ACK, &ack, &got);
    dr_msg_ack_free(&got.ack);
    dr_msg_heartbeat_t hb = s_heartbeat();
    deliver(&agent, &ctld, DR_MSG_HEARTBEAT, &hb, &got);
    dr_msg_heartbeat_free(&got.heartbeat);
    dr_msg_kill_t kill = s_kill();
    deliver(&ctld, &agent, DR_MSG_KILL, &kill, &got);
    dr_msg_kill_free(&got.kill);

    assert_int_equal(agent.stats.frames_out, 4);
    assert_int_equal(agent.stats.frames_in, 5);
    assert_int_equal(ctld.stats.frames_out, 5);
    assert_int_equal(ctld.stats.frames_in, 4);
    assert_int_equal(agent.tx_seq, 3); /* HELLO took none */
    assert_int_equal(ctld.tx_seq, 4);  /* nor CHALLENGE */
    assert_int_equal(ctld.rx_seq, 3);
    assert_int_equal(agent.rx_seq, 4);

    /* send_msg refuses what the encoder refuses, and an unknown type */
    uint8_t *f;
    size_t n;
    dr_err_t err = {0};
    launch.argc = 0;
    assert_int_equal(dr_proto_send_msg(&ctld, DR_MSG_LAUNCH, &launch, &f, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "launch: argv: empty");
    assert_int_equal(dr_proto_send_msg(&ctld, 0, &launch, &f, &n, &err), DR_EINVAL);
    assert_null(f);
    assert_int_equal(ctld.tx_seq, 4);
}

/* ---- messages ---- */

static void test_roundtrip_all(void **state)
{
    (void)state;
    for (int t = 1; t < DR_MSG_NTYPES; t++) {
        if (!fp_known(t))
            continue;
        const fp_msg_t *mt = &fp_msgs[t];
        char *j1 = sample_json(t);
        fp_any_t a;
        dr_err_t err = {0};
        if (mt->parse(&a, j1, strlen(j1), &err) != DR_OK)
            fail_msg("%s: %s: %s", dr_msg_type_name(t), j1, err.msg);
        char *j2;
        size_t n2;
        assert_int_equal(mt->encode(&a, &j2, &n2, &err), DR_OK);
        /* every sample field is set, so equal JSON means no field was lost */
        assert_string_equal(j1, j2);
        mt->free(&a);
        assert_true(all_zero(&a, mt->size));
        free(j1);
        free(j2);
    }
}

static void test_wire_format(void **state)
{
    (void)state;
    /* the JSON keys are the C field names, in struct order, compact */
    char *j = sample_json(DR_MSG_HELLO);
    assert_string_equal(
        j, "{\"version\":2,\"name\":\"gpu-node-07\","
           "\"nonce\":\"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\","
           "\"proof\":\"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff\"}");
    free(j);
    j = sample_json(DR_MSG_ACK);
    assert_string_equal(j, "{\"job\":42,\"gen\":3,\"rank\":1}");
    free(j);
    j = sample_json(DR_MSG_REGISTER);
    assert_string_equal(
        j, "{\"source\":\"nvml\",\"gpus\":[{\"index\":0,\"name\":\"NVIDIA H100 80GB HBM3\","
           "\"uuid\":\"GPU-4a1f-77\",\"pci\":\"0000:17:00.0\",\"mem_mb\":81559,\"numa\":0},"
           "{\"index\":1,\"name\":\"AMD Instinct MI300X\",\"uuid\":\"\",\"pci\":\"\","
           "\"mem_mb\":196592,\"numa\":-1}],\"cpus\":224,\"mem_mb\":2097152,\"numa_nodes\":2,"
           "\"hostname\":\"gpu-node-07.cluster\",\"held\":[{\"job\":42,\"gen\":3,\"rank\":0,"
           "\"running\":true,\"exit_code\":0,\"signal\":0,\"why\":0,\"end_ns\":0},"
           "{\"job\":9223372036854775807,\"gen\":4294967295,\"rank\":7,\"running\":false,"
           "\"exit_code\":-1,\"signal\":9,\"why\":1,\"end_ns\":-9223372036854775808}]}");
    free(j);
    j = sample_json(DR_MSG_LAUNCH);
    tu_assert_contains(j, "\"argv\":[\"/bin/sh\",\"-c\",\"echo \\\"h\\\\i\\\" \xc3\xbcn\xc3\xaf\","
                          "\"\"],\"env\":[\"PATH=/usr/bin\"");
    tu_assert_contains(j, "\"gpus\":[0,3,4294967295],\"time_limit_ns\":3600000000000,");
    tu_assert_contains(j, "\"signal\":10,\"signal_secs\":120,\"signal_batch\":true,"
                          "\"ckpt_every_ns\":1800000000000,\"ckpt_next_ns\":600000000000,"
                          "\"ckpt_dir\":\"/home/u/.drover/ckpt/42\",\"allow_root\":true}");
    free(j);
    /* SIGNAL and SIGNALED share one body */
    j = sample_json(DR_MSG_SIGNAL);
    assert_string_equal(j, "{\"job\":42,\"gen\":3,\"rank\":1,\"signal\":10,\"why\":2,"
                           "\"t_ns\":1733000000123456789,\"ckpt_dir\":\"/ckpt/42\",\"uid\":1000,"
                           "\"gid\":1000}");
    free(j);
    expect_sample_refused(DR_MSG_SIGNALED, "\"why\":1", "\"why\":-1",
                          "signal: why: -1 out of range [0, 4294967295]");
    expect_sample_refused(DR_MSG_LAUNCH, "\"signal_batch\":true", "\"signal_batch\":1",
                          "launch: signal_batch: not a boolean");
    expect_sample_refused(DR_MSG_LAUNCH, "\"allow_root\":true", "\"allow_root\":\"yes\"",
                          "launch: allow_root: not a boolean");
}

static void test_parse_fields(void **state)
{
    (void)state;
    /* values land in the right fields */
    dr_msg_launch_t l;
    dr_err_t err = {0};
    char *j = sample_json(DR_MSG_LAUNCH);
    assert_int_equal(dr_msg_launch_parse(&l, j, strlen(j), &err), DR_OK);
    assert_int_equal(l.job, 42);
    assert_int_equal(l.gen, 3);
    assert_int_equal(l.epoch, 7);
    assert_int_equal(l.rank, 1);
    assert_int_equal(l.nranks, 2);
    assert_int_equal(l.argc, 4);
    assert_string_equal(l.argv[2], launch_argv[2]);
    assert_string_equal(l.argv[3], "");
    assert_int_equal(l.nenv, 3);
    assert_string_equal(l.env[2], "EMPTY=");
    assert_string_equal(l.cwd, "/home/u");
    assert_string_equal(l.out_path, "/tmp/o.txt");
    assert_string_equal(l.err_path, "");
    assert_int_equal(l.uid, 1000);
    assert_int_equal(l.gid, UINT32_MAX);
    assert_int_equal(l.ngpus, 3);
    assert_int_equal(l.gpus[2], UINT32_MAX);
    assert_int_equal(l.time_limit_ns, 3600000000000LL);
    assert_int_equal(l.grace_ns, 30000000000LL);
    assert_int_equal(l.cpu_milli, 4000);
    assert_int_equal(l.mem_mb, 65536);
    dr_msg_launch_free(&l);
    assert_true(all_zero(&l, sizeof l));
    free(j);

    dr_msg_register_t r;
    j = sample_json(DR_MSG_REGISTER);
    assert_int_equal(dr_msg_register_parse(&r, j, strlen(j), &err), DR_OK);
    assert_int_equal(r.ngpus, 2);
    assert_string_equal(r.gpus[1].name, "AMD Instinct MI300X");
    assert_int_equal(r.gpus[1].numa, -1);
    assert_int_equal(r.gpus[0].mem_mb, 81559);
    assert_int_equal(r.nheld, 2);
    assert_true(r.held[0].running);
    assert_false(r.held[1].running);
    assert_int_equal(r.held[1].job, INT64_MAX);
    assert_int_equal(r.held[1].end_ns, INT64_MIN);
    assert_int_equal(r.held[1].why, DR_END_TIMEOUT);
    assert_string_equal(r.hostname, "gpu-node-07.cluster");
    dr_msg_register_free(&r);
    free(j);

    dr_msg_hello_t h;
    const char *up =
        "{\"version\":1,\"name\":\"n\",\"nonce\":\"A0A1A2A3A4A5A6A7A8A9AAABACADAEAF\","
        "\"proof\":\"E0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF\"}";
    assert_int_equal(dr_msg_hello_parse(&h, up, strlen(up), &err), DR_OK);
    assert_memory_equal(h.nonce, nonce_a, DR_PROTO_NONCE);
    dr_msg_hello_free(&h);

    /* NULL strings go out as "" */
    dr_msg_kill_t k = s_kill();
    k.reason = NULL;
    size_t n;
    assert_int_equal(dr_msg_kill_encode(&k, &j, &n, &err), DR_OK);
    tu_assert_contains(j, "\"reason\":\"\"");
    free(j);

    /* unknown keys are ignored, wherever they are */
    j = sample_json(DR_MSG_REGISTER);
    char *b = replace(j, "{\"source\"", "{\"future\":{\"x\":[1,2.5,null]},\"source\"");
    char *b2 = replace(b, "\"numa\":-1", "\"numa\":-1,\"bandwidth\":\"high\"");
    expect_parses(DR_MSG_REGISTER, b2);
    free(b2);
    free(b);
    free(j);
    /* whitespace around and inside is JSON */
    expect_parses(DR_MSG_ACK, " {\n\"job\" : 1 ,\"gen\":2,\"rank\":3}\r\n ");
    /* the limits themselves are allowed */
    expect_parses(DR_MSG_ACK, "{\"job\":9223372036854775807,\"gen\":4294967295,\"rank\":0}");
    expect_parses(DR_MSG_KILL,
                  "{\"job\":0,\"gen\":0,\"signal\":-2147483648,"
                  "\"grace_ns\":-9223372036854775808,\"reason\":\"\",\"step\":4294967295}");
}

static void test_parse_refusals(void **state)
{
    (void)state;
    /* OUTPUT's bytes: strict base64, bounded */
    {
        char *j = sample_json(DR_MSG_OUTPUT);
        assert_non_null(strstr(j, "\"data\":\"b2sKAP+APQ==\""));
        free(j);
    }
    expect_sample_refused(
        DR_MSG_OUTPUT, "b2sKAP+APQ==", "b2sKAP+APQ=", "output: data: not base64 (11 characters)");
    expect_sample_refused(DR_MSG_OUTPUT,
                          "b2sKAP+APQ==", "b2sKAP+A?Q==", "output: data: not base64 (character 8)");
    expect_sample_refused(DR_MSG_OUTPUT,
                          "b2sKAP+APQ==", "b2sKAP+A=Q==", "output: data: not base64 (character 8)");
    expect_sample_refused(DR_MSG_OUTPUT, "\"data\":\"b2sKAP+APQ==\"", "\"data\":7",
                          "output: data: not a string");
    {
        size_t n = 4 * ((size_t)DR_MSG_MAX_OUTPUT / 3 + 2);
        char *big = malloc(n + 1);
        assert_non_null(big);
        memset(big, 'A', n);
        big[n] = '\0';
        char *b =
            replace("{\"req\":1,\"status\":0,\"detail\":\"\",\"data\":\"X\",\"size\":0}", "X", big);
        expect_refused(DR_MSG_OUTPUT, b, "output: data: more than 1048576 bytes");
        free(b);
        free(big);
    }
    /* the ones the protocol's users will see most */
    expect_refused(DR_MSG_LAUNCH,
                   "{\"job\":1,\"gen\":0,\"epoch\":0,\"rank\":0,\"nranks\":1,"
                   "\"argv\":[\"a\",\"b\",\"c\",4]}",
                   "launch: argv[3]: not a string");
    expect_sample_refused(DR_MSG_LAUNCH, "\"argv\":[\"/bin/sh\",\"-c\",",
                          "\"argv\":[\"/bin/sh\",null,", "launch: argv[1]: not a string");
    expect_sample_refused(DR_MSG_LAUNCH, "\"cwd\":\"/home/u\",", "", "launch: cwd: missing");
    expect_sample_refused(DR_MSG_LAUNCH, "\"cwd\":\"/home/u\"", "\"cwd\":null",
                          "launch: cwd: not a string");
    expect_sample_refused(DR_MSG_LAUNCH, "\"uid\":1000", "\"uid\":-1",
                          "launch: uid: -1 out of range [0, 4294967295]");
    expect_sample_refused(DR_MSG_LAUNCH, "\"gid\":4294967295", "\"gid\":4294967296",
                          "launch: gid: 4294967296 out of range [0, 4294967295]");
    expect_sample_refused(DR_MSG_LAUNCH, "\"epoch\":7", "\"epoch\":7.0",
                          "launch: epoch: not an integer");
    expect_sample_refused(DR_MSG_LAUNCH, "\"epoch\":7", "\"epoch\":7e0",
                          "launch: epoch: not an integer");
    expect_sample_refused(DR_MSG_LAUNCH, "\"epoch\":7", "\"epoch\":\"7\"",
                          "launch: epoch: not an integer");
    expect_sample_refused(DR_MSG_LAUNCH, "\"epoch\":7", "\"epoch\":true",
                          "launch: epoch: not an integer");
    expect_sample_refused(DR_MSG_LAUNCH, "\"job\":42", "\"job\":-42",
                          "launch: job: -42 out of range [0, 9223372036854775807]");
    expect_sample_refused(DR_MSG_LAUNCH, "\"job\":42", "\"job\":9223372036854775808",
                          "launch: invalid JSON at byte *");
    expect_sample_refused(DR_MSG_LAUNCH, "\"gpus\":[0,3,", "\"gpus\":[0,-3,",
                          "launch: gpus[1]: -3 out of range [0, 4294967295]");
    expect_sample_refused(DR_MSG_LAUNCH, "\"gpus\":[0,3,", "\"gpus\":[0,[3],",
                          "launch: gpus[1]: not an integer");
    expect_sample_refused(DR_MSG_LAUNCH, "\"gpus\":[", "\"gpus\":{\"a\":1},\"x\":[",
                          "launch: gpus: not an array");
    expect_sample_refused(DR_MSG_LAUNCH, "\"argv\":[\"/bin/sh\",\"-c\",\"echo",
                          "\"argv\":[],\"zz\":[\"-c\",\"echo", "launch: argv: empty");
    expect_sample_refused(DR_MSG_LAUNCH, "\"EMPTY=\"", "\"EM\\u0000PTY=\"",
                          "launch: invalid JSON at byte *");
    expect_sample_refused(DR_MSG_LAUNCH, "\"cwd\":\"/home/u\"", "\"cwd\":\"\xff\"",
                          "launch: invalid JSON at byte *");
    expect_sample_refused(DR_MSG_LAUNCH, "\"uid\":1000", "\"uid\":1000,\"uid\":0",
                          "launch: invalid JSON at byte *");

    expect_refused(DR_MSG_HELLO, "{\"version\":1,\"nonce\":\"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\"}",
                   "hello: name: missing");
    expect_sample_refused(DR_MSG_HELLO, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\"", "a0a1\"",
                          "hello: nonce: not 32 hex digits");
    expect_sample_refused(DR_MSG_HELLO, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\"",
                          "a0a1a2a3a4a5a6a7a8a9aaabacadaeag\"", "hello: nonce: not 32 hex digits");
    expect_sample_refused(DR_MSG_HELLO, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\"",
                          "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf0\"", "hello: nonce: not 32 hex digits");
    expect_sample_refused(DR_MSG_HELLO, "\"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\"", "12",
                          "hello: nonce: not 32 hex digits");
    expect_sample_refused(DR_MSG_HELLO, "fcfdfeff\"", "fcfdfe\"",
                          "hello: proof: not 64 hex digits");
    expect_sample_refused(DR_MSG_HELLO, "fcfdfeff\"", "fcfdfefg\"",
                          "hello: proof: not 64 hex digits");
    expect_refused(DR_MSG_HELLO,
                   "{\"version\":2,\"name\":\"n\",\"nonce\":\"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\"}",
                   "hello: proof: missing");
    expect_sample_refused(DR_MSG_CHALLENGE, "\"c0c1c2c3c4c5c6c7c8c9cacbcccdcecf\"", "7",
                          "challenge: nonce: not 32 hex digits");
    expect_sample_refused(DR_MSG_JOB_STATE, "\"why\":3", "\"why\":5",
                          "job_state: why: 5 out of range [0, 4]");
    expect_sample_refused(DR_MSG_JOB_STATE, "\"started\":false", "\"started\":0",
                          "job_state: started: not a boolean");
    expect_sample_refused(DR_MSG_JOB_STATE, "\"pid\":2147483647", "\"pid\":2147483648",
                          "job_state: pid: 2147483648 out of range [-2147483648, 2147483647]");
    expect_sample_refused(DR_MSG_REGISTER, "\"numa\":-1", "\"numa\":-2147483649",
                          "register: gpus[1].numa: -2147483649 out of range [-2147483648, "
                          "2147483647]");
    expect_sample_refused(DR_MSG_REGISTER, "\"uuid\":\"\"", "\"uuid\":7",
                          "register: gpus[1].uuid: not a string");
    expect_sample_refused(DR_MSG_REGISTER, "\"held\":[{", "\"held\":[5,{",
                          "register: held[0]: not an object");
    expect_sample_refused(DR_MSG_REGISTER, "\"running\":false,", "",
                          "register: held[1].running: missing");
    expect_sample_refused(DR_MSG_REGISTER, "\"why\":1", "\"why\":-1",
                          "register: held[1].why: -1 out of range [0, 4]");

    /* arrays and strings past their limits */
    size_t cap = 64 + 2 * 2000;
    char *b = malloc(cap);
    assert_non_null(b);
    size_t n = (size_t)snprintf(b, cap, "{\"source\":\"nvml\",\"gpus\":[");
    for (int i = 0; i <= DR_MSG_MAX_GPUS; i++)
        n += (size_t)snprintf(b + n, cap - n, "%s0", i ? "," : "");
    snprintf(b + n, cap - n, "]}");
    expect_refused(DR_MSG_REGISTER, b, "register: gpus: more than 1024");
    free(b);
    cap = 64 + DR_MSG_MAX_STR + 1;
    b = malloc(cap);
    assert_non_null(b);
    for (int over = 0; over < 2; over++) {
        n = (size_t)snprintf(b, cap, "{\"reason\":\"");
        memset(b + n, 'x', DR_MSG_MAX_STR + (size_t)over);
        n += DR_MSG_MAX_STR + (size_t)over;
        snprintf(b + n, cap - n, "\"}");
        if (over)
            expect_refused(DR_MSG_REJECT, b, "reject: reason: longer than 4096 bytes");
        else
            expect_parses(DR_MSG_REJECT, b);
    }
    free(b);

    /* what is not one JSON object of exactly len bytes */
    expect_refused(DR_MSG_ACK, "", "ack: invalid JSON at byte *");
    expect_refused(DR_MSG_ACK, "[1,2]", "ack: not a JSON object");
    expect_refused(DR_MSG_ACK, "{\"job\":1,\"gen\":2,\"rank\":3} x", "ack: invalid JSON at byte *");
    expect_refused(DR_MSG_ACK, "{\"job\":1,\"gen\":2,\"rank\":3}{}", "ack: invalid JSON at byte *");
    expect_refused_n(DR_MSG_ACK, "{\"job\":1,\"gen\":2,\"rank\":3}", 20,
                     "ack: invalid JSON at byte *");
    /* the length, not a NUL, ends the body */
    expect_refused_n(DR_MSG_ACK, "{\"job\":1,\"gen\":2,\"rank\":3}\0", 27,
                     "ack: invalid JSON at byte *");
    expect_refused(DR_MSG_ACK, "{\"job\":1,\"gen\":2}", "ack: rank: missing");
    expect_refused(DR_MSG_ACK, "{\"job\":1,\"gen\":2,\"rank\":3.5}", "ack: rank: not an integer");
    /* a nesting bomb in an ignored key stops at jansson's depth limit */
    size_t depth = 5000;
    b = malloc(2 * depth + 64);
    assert_non_null(b);
    n = (size_t)sprintf(b, "{\"job\":1,\"gen\":2,\"rank\":3,\"x\":");
    memset(b + n, '[', depth);
    memset(b + n + depth, ']', depth);
    sprintf(b + n + 2 * depth, "}");
    expect_refused(DR_MSG_ACK, b, "ack: invalid JSON at byte *");
    free(b);
}

static void test_encode_refusals(void **state)
{
    (void)state;
    char *j = (char *)1;
    size_t n = 9;
    dr_err_t err = {0};
    dr_msg_launch_t l = s_launch();
    l.job = (uint64_t)INT64_MAX + 1;
    assert_int_equal(dr_msg_launch_encode(&l, &j, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "launch: job: above 9223372036854775807");
    assert_null(j);
    assert_int_equal(n, 0);
    l = s_launch();
    l.argc = 0;
    assert_int_equal(dr_msg_launch_encode(&l, &j, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "launch: argv: empty");
    l = s_launch();
    l.env = NULL;
    assert_int_equal(dr_msg_launch_encode(&l, &j, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "launch: env: NULL with 3 elements");
    l.nenv = 0;
    l.argc = DR_MSG_MAX_ARGS + 1;
    assert_int_equal(dr_msg_launch_encode(&l, &j, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "launch: argv: more than 4096");
    l = s_launch();
    char *bad_argv[] = {"ok", "\xff\xfe"};
    l.argv = bad_argv;
    l.argc = 2;
    assert_int_equal(dr_msg_launch_encode(&l, &j, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "launch: argv[1]: not valid UTF-8");

    dr_msg_job_state_t js = s_job_state();
    js.why = DR_END_NWHY;
    assert_int_equal(dr_msg_job_state_encode(&js, &j, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "job_state: why: 5 is not a dr_end_why_t");

    dr_msg_register_t r = s_register();
    r.ngpus = DR_MSG_MAX_GPUS + 1;
    assert_int_equal(dr_msg_register_encode(&r, &j, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "register: gpus: more than 1024");
    r = s_register();
    dr_msg_held_t held[2];
    memcpy(held, reg_held, sizeof held);
    held[1].why = 200;
    r.held = held;
    assert_int_equal(dr_msg_register_encode(&r, &j, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "register: held[1].why: 200 is not a dr_end_why_t");

    char *longs = malloc(DR_MSG_MAX_STR + 2);
    assert_non_null(longs);
    memset(longs, 'y', DR_MSG_MAX_STR + 1);
    longs[DR_MSG_MAX_STR + 1] = '\0';
    dr_msg_kill_t k = s_kill();
    k.reason = longs;
    assert_int_equal(dr_msg_kill_encode(&k, &j, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "kill: reason: longer than 4096 bytes");
    free(longs);
}

/* A message parsed partway is freed when a later field fails (the ASan
 * build's leak check is the assertion). */
static void test_partial_parse_frees(void **state)
{
    (void)state;
    expect_sample_refused(DR_MSG_LAUNCH, "\"mem_mb\":65536", "\"mem_mb\":-1",
                          "launch: mem_mb: -1 out of range [0, 9223372036854775807]");
    expect_sample_refused(DR_MSG_REGISTER, "\"hostname\":\"gpu-node-07.cluster\"", "\"hostname\":1",
                          "register: hostname: not a string");
    expect_sample_refused(DR_MSG_REGISTER, "\"end_ns\":-9223372036854775808", "\"end_ns\":[]",
                          "register: held[1].end_ns: not an integer");
    expect_sample_refused(DR_MSG_LAUNCH, "\"EMPTY=\"", "7", "launch: env[2]: not a string");
}

/* ---- the fuzz seed corpus ---- */

typedef struct seed {
    char name[128];
    uint8_t *data;
    size_t len;
    size_t cap;
} seed_t;

static void seed_add(seed_t *s, const void *p, size_t n)
{
    if (s->len + n > s->cap) {
        s->cap = (s->len + n) * 2;
        s->data = realloc(s->data, s->cap);
        assert_non_null(s->data);
    }
    memcpy(s->data + s->len, p, n);
    s->len += n;
}

static void seed_start(seed_t *s, const char *name, uint8_t mode, uint8_t arg)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    uint8_t h[2] = {mode, arg};
    seed_add(s, h, 2);
}

/* Frame the sample of `type` from tx onto the seed. */
static void seed_frame(seed_t *s, dr_proto_session_t *tx, int type, fp_any_t *m)
{
    fp_any_t a;
    if (!m) {
        sample(type, &a);
        m = &a;
    }
    uint8_t *f;
    size_t n;
    dr_err_t err;
    if (dr_proto_send_msg(tx, type, m, &f, &n, &err) != DR_OK)
        fail_msg("%s", err.msg);
    seed_add(s, f, n);
    free(f);
}

/* The seeds; each is checked against (or written to) the corpus. */
static void corpus_check(seed_t *s, const char *outdir)
{
    char path[4096];
    if (outdir) {
        snprintf(path, sizeof path, "%s/%s", outdir, s->name);
        FILE *fp = fopen(path, "wb");
        if (!fp || fwrite(s->data, 1, s->len, fp) != s->len || fclose(fp) != 0)
            fail_msg("cannot write %s", path);
    } else {
        size_t n = 0;
        char *have = NULL;
        dr_err_t err;
        if (dr_read_file(tu_src_path(s->name), &have, &n, &err) != DR_OK || n != s->len ||
            memcmp(have, s->data, n) != 0)
            fail_msg("%s is stale: regenerate the corpus with "
                     "DROVER_PROTO_CORPUS_OUT=tests/fuzz/corpus/fuzz_proto build/test_proto",
                     s->name);
        free(have);
    }
    free(s->data);
}

/* The srun <-> agent socket: step types only, bounded, whole frames. */
static void test_local_frames(void **state)
{
    (void)state;
    fp_any_t a;
    sample(DR_MSG_STEP_REQ, &a);
    uint8_t *fr;
    size_t n, used;
    dr_err_t err = {0};
    assert_int_equal(dr_proto_local_encode(DR_MSG_STEP_REQ, &a, &fr, &n, &err), DR_OK);
    char *j = sample_json(DR_MSG_STEP_REQ);
    assert_int_equal(n, DR_PROTO_LOCAL_HDR + strlen(j));
    assert_int_equal(fr[4], DR_MSG_STEP_REQ);
    assert_memory_equal(fr + DR_PROTO_LOCAL_HDR, j, strlen(j));
    dr_frame_t f;
    /* every prefix is incomplete, the whole is one frame */
    for (size_t k = 0; k < n; k++)
        assert_int_equal(dr_proto_local_decode(fr, k, &used, &f, &err), DR_PROTO_NEED);
    assert_int_equal(dr_proto_local_decode(fr, n, &used, &f, &err), DR_PROTO_FRAME);
    assert_int_equal(used, n);
    assert_int_equal(f.type, DR_MSG_STEP_REQ);
    assert_int_equal(f.len, strlen(j));
    dr_msg_step_req_t back;
    assert_int_equal(dr_msg_step_req_parse(&back, f.body, f.len, &err), DR_OK);
    assert_string_equal(back.argv[1], "train.py");
    assert_int_equal(back.ntasks_per_node, 2);
    dr_msg_step_req_free(&back);
    /* a type of the link is refused as soon as its byte arrives */
    fr[4] = DR_MSG_LAUNCH;
    assert_int_equal(dr_proto_local_decode(fr, 5, &used, &f, &err), DR_PROTO_FATAL);
    assert_string_equal(err.msg, "local frame: type 5 is not a step message");
    assert_int_equal(used, 0);
    /* so is a length over the bound */
    fr[4] = DR_MSG_STEP_STATE;
    fr[0] = 0x7f;
    fr[1] = fr[2] = fr[3] = 0;
    assert_int_equal(dr_proto_local_decode(fr, n, &used, &f, &err), DR_PROTO_FATAL);
    assert_string_equal(err.msg, "local frame: body of 2130706432 bytes exceeds 8388608");
    free(fr);
    free(j);
    assert_int_equal(dr_proto_local_encode(DR_MSG_LAUNCH, &a, &fr, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "local frame: launch is not a step message");
    /* the encoder's checks hold: an empty argv is refused */
    a.step_req.argc = 0;
    assert_int_equal(dr_proto_local_encode(DR_MSG_STEP_REQ, &a, &fr, &n, &err), DR_EINVAL);
    assert_string_equal(err.msg, "step_req: argv: empty");
}

static void test_fuzz_corpus(void **state)
{
    (void)state;
    const char *outdir = getenv("DROVER_PROTO_CORPUS_OUT");
    char name[128];
    seed_t s;
#define SEED_NAME(fmt, ...)                                                                        \
    (snprintf(name, sizeof name, "%s" fmt, outdir ? "" : "tests/fuzz/corpus/fuzz_proto/",          \
              __VA_ARGS__),                                                                        \
     name)

    /* body mode: every type's sample, and a refused one */
    for (int t = 1; t < DR_MSG_NTYPES; t++) {
        if (!fp_known(t))
            continue;
        seed_start(&s, SEED_NAME("body_%s", dr_msg_type_name(t)), FP_MODE_BODY, (uint8_t)(t - 1));
        char *j = sample_json(t);
        seed_add(&s, j, strlen(j));
        free(j);
        corpus_check(&s, outdir);
    }
    seed_start(&s, SEED_NAME("body_%s", "launch_bad"), FP_MODE_BODY, DR_MSG_LAUNCH - 1);
    const char *bad =
        "{\"job\":1,\"gen\":0,\"epoch\":0,\"rank\":0,\"nranks\":1,\"argv\":[\"a\",4]}";
    seed_add(&s, bad, strlen(bad));
    corpus_check(&s, outdir);

    /* stream mode, controller side: a HELLO that proves the key opens the
     * session, then the agent's traffic, then a replay */
    dr_proto_session_t tx;
    dr_proto_session_init(&tx, fp_key, fp_tx_nonce);
    seed_start(&s, SEED_NAME("stream_%s", "ctld"), FP_MODE_STREAM, 0);
    fp_any_t m;
    sample(DR_MSG_HELLO, &m);
    memcpy(m.hello.nonce, fp_tx_nonce, DR_PROTO_NONCE);
    dr_err_t perr = {0};
    assert_int_equal(
        dr_proto_hello_proof(fp_key, fp_rx_nonce, fp_tx_nonce, m.hello.name, m.hello.proof, &perr),
        DR_OK);
    seed_frame(&s, &tx, DR_MSG_HELLO, &m);
    dr_proto_session_set_peer_nonce(&tx, fp_rx_nonce);
    seed_frame(&s, &tx, DR_MSG_REGISTER, NULL);
    size_t mark = s.len;
    seed_frame(&s, &tx, DR_MSG_HEARTBEAT, NULL);
    size_t end = s.len;
    seed_frame(&s, &tx, DR_MSG_JOB_STATE, NULL);
    seed_frame(&s, &tx, DR_MSG_CKPT, NULL);
    uint8_t *again = malloc(end - mark);
    assert_non_null(again);
    memcpy(again, s.data + mark, end - mark);
    seed_add(&s, again, end - mark);
    free(again);
    corpus_check(&s, outdir);

    /* stream mode, agent side: CHALLENGE, WELCOME, then the controller's
     * traffic, a corrupted frame */
    dr_proto_session_init(&tx, fp_key, fp_tx_nonce);
    seed_start(&s, SEED_NAME("stream_%s", "agent"), FP_MODE_STREAM, 0);
    m.challenge = (dr_msg_challenge_t){.version = DR_PROTO_VERSION};
    memcpy(m.challenge.nonce, fp_tx_nonce, DR_PROTO_NONCE);
    seed_frame(&s, &tx, DR_MSG_CHALLENGE, &m);
    dr_proto_session_set_peer_nonce(&tx, fp_rx_nonce);
    sample(DR_MSG_WELCOME, &m);
    memcpy(m.welcome.nonce, fp_tx_nonce, DR_PROTO_NONCE);
    seed_frame(&s, &tx, DR_MSG_WELCOME, &m);
    seed_frame(&s, &tx, DR_MSG_LAUNCH, NULL);
    mark = s.len;
    seed_frame(&s, &tx, DR_MSG_KILL, NULL);
    s.data[mark + DR_PROTO_HDR + 3] ^= 1;
    seed_frame(&s, &tx, DR_MSG_ACK, NULL);
    seed_frame(&s, &tx, DR_MSG_REJECT, NULL);
    corpus_check(&s, outdir);

    /* stream mode, open session: every sealed type */
    dr_proto_session_init(&tx, fp_key, fp_tx_nonce);
    dr_proto_session_set_peer_nonce(&tx, fp_rx_nonce);
    seed_start(&s, SEED_NAME("stream_%s", "open"), FP_MODE_STREAM, 1);
    for (int t = 1; t < DR_MSG_NTYPES; t++)
        if (fp_sealed(t) && t != DR_MSG_REGISTER &&
            t != DR_MSG_LAUNCH) /* the large ones are in the others */
            seed_frame(&s, &tx, t, NULL);
    corpus_check(&s, outdir);

    /* framing mode: records of JSON bodies, read whole and 7 bytes at a time */
    for (int piece = 0; piece < 2; piece++) {
        seed_start(&s, SEED_NAME("framing_%d", piece), FP_MODE_FRAMING, piece ? 6 : 0);
        for (int t = DR_MSG_REGISTER; t < DR_MSG_NTYPES; t++) {
            if (!fp_sealed(t) || t == DR_MSG_REGISTER || t == DR_MSG_LAUNCH)
                continue;
            char *j = sample_json(t);
            size_t jl = strlen(j) < 255 ? strlen(j) : 255;
            uint8_t h[2] = {fp_sealed_index(t), (uint8_t)jl};
            seed_add(&s, h, 2);
            seed_add(&s, j, jl);
            free(j);
        }
        corpus_check(&s, outdir);
    }

    /* local mode: srun's request and cancel, the agent's answers */
    seed_start(&s, SEED_NAME("local_%s", "steps"), FP_MODE_LOCAL, 0);
    for (int t = DR_MSG_STEP_REQ; t <= DR_MSG_STEP_STATE; t++) {
        fp_any_t a;
        sample(t, &a);
        uint8_t *fr;
        size_t frlen;
        dr_err_t err;
        assert_int_equal(dr_proto_local_encode(t, &a, &fr, &frlen, &err), DR_OK);
        seed_add(&s, fr, frlen);
        free(fr);
    }
    corpus_check(&s, outdir);
#undef SEED_NAME
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_names),          cmocka_unit_test(test_key_parse),
        cmocka_unit_test(test_frame_layout),        cmocka_unit_test(test_frame_decode_good),
        cmocka_unit_test(test_frame_bit_flips),     cmocka_unit_test(test_frame_replay),
        cmocka_unit_test(test_frame_wrong_key),     cmocka_unit_test(test_frame_partial),
        cmocka_unit_test(test_frame_two_in_buffer), cmocka_unit_test(test_frame_bad_header),
        cmocka_unit_test(test_encode_errors),       cmocka_unit_test(test_hello_rules),
        cmocka_unit_test(test_node_keys),           cmocka_unit_test(test_handshake),
        cmocka_unit_test(test_roundtrip_all),       cmocka_unit_test(test_wire_format),
        cmocka_unit_test(test_parse_fields),        cmocka_unit_test(test_parse_refusals),
        cmocka_unit_test(test_encode_refusals),     cmocka_unit_test(test_partial_parse_frees),
        cmocka_unit_test(test_fuzz_corpus),         cmocka_unit_test(test_local_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
