/* fake_agent.c - a scripted agent for the integration tests: it speaks the
 * real wire protocol to a real droverd, and can also lie.
 *
 *   fake_agent HOST:PORT KEYFILE NODE MODE
 *
 * KEYFILE is NODE's key (droverd --enroll NODE).
 * MODE "attack": register as NODE holding nothing, wait for a LAUNCH, and
 * report it started; then send, in order, (1) a replay of that very frame,
 * (2) an "ended, exit 0" report sealed with a wrong key (forged), (3) a
 * genuine "ended, exit 0" frame with one body byte flipped (corrupted), and
 * print "attacked JOB" once they are on the wire.  It then waits for a line
 * on stdin and sends a genuine "ended, exit 7" report, waits for its ACK and
 * exits 0.  The test checks that the job ran on regardless of the three bad
 * frames and ended with exit code 7, and that droverd counted three drops. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "drover/proto.h"
#include "drover/util.h"

static int fd = -1;
static uint8_t inbuf[DR_PROTO_HDR + DR_PROTO_MAX_BODY + DR_PROTO_TAG];
static size_t inlen;

static void die(const char *m)
{
    fprintf(stderr, "fake_agent: %s\n", m);
    exit(1);
}

static void send_raw(const uint8_t *b, size_t n)
{
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w <= 0)
            die("write failed");
        b += w;
        n -= (size_t)w;
    }
}

static void send_msg(dr_proto_session_t *s, int type, const void *m, uint8_t **keep,
                     size_t *keeplen)
{
    uint8_t *b = NULL;
    size_t n = 0;
    dr_err_t err = {0};
    if (dr_proto_send_msg(s, type, m, &b, &n, &err) != DR_OK)
        die(err.msg);
    send_raw(b, n);
    if (keep) {
        *keep = b;
        *keeplen = n;
    } else {
        free(b);
    }
}

/* Next authentic frame of one of the wanted types (others are skipped). */
static dr_frame_t recv_frame(dr_proto_session_t *s, int want1, int want2)
{
    for (;;) {
        size_t used = 0;
        dr_frame_t f;
        dr_proto_rc_t rc = dr_proto_decode(s, inbuf, inlen, &used, &f);
        if (rc == DR_PROTO_FATAL)
            die("bad frame from the controller");
        if (rc == DR_PROTO_FRAME || rc == DR_PROTO_DROPPED) {
            static uint8_t body[DR_PROTO_MAX_BODY];
            dr_frame_t out = f;
            if (rc == DR_PROTO_FRAME) {
                memcpy(body, f.body, f.len);
                out.body = (const char *)body;
            }
            memmove(inbuf, inbuf + used, inlen - used);
            inlen -= used;
            if (rc == DR_PROTO_FRAME && (f.type == want1 || f.type == want2))
                return out;
            continue;
        }
        ssize_t r = read(fd, inbuf + inlen, sizeof inbuf - inlen);
        if (r <= 0)
            die("controller closed the connection");
        inlen += (size_t)r;
    }
}

int main(int argc, char **argv)
{
    if (argc != 5 || strcmp(argv[4], "attack") != 0)
        die("usage: fake_agent HOST:PORT KEYFILE NODE attack");
    char *kb = NULL;
    size_t kl = 0;
    uint8_t key[DR_PROTO_KEY], bad_key[DR_PROTO_KEY];
    dr_err_t err = {0};
    if (dr_read_file(argv[2], &kb, &kl, &err) != DR_OK ||
        dr_proto_key_parse(kb, kl, key, &err) != DR_OK)
        die(err.msg);
    free(kb);
    memcpy(bad_key, key, sizeof key);
    bad_key[0] ^= 0x5a;
    char host[256];
    const char *colon = strrchr(argv[1], ':');
    if (!colon)
        die("HOST:PORT");
    snprintf(host, sizeof host, "%.*s", (int)(colon - argv[1]), argv[1]);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    inet_pton(AF_INET, host, &sa.sin_addr);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        die("connect failed");

    uint8_t nonce[DR_PROTO_NONCE];
    if (getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce)
        die("getrandom");
    dr_proto_session_t s;
    dr_proto_session_init(&s, key, nonce);
    dr_frame_t f = recv_frame(&s, DR_MSG_CHALLENGE, DR_MSG_CHALLENGE);
    dr_msg_challenge_t ch = {0};
    if (dr_msg_challenge_parse(&ch, f.body, f.len, &err) != DR_OK)
        die(err.msg);
    dr_msg_hello_t h = {.version = DR_PROTO_VERSION, .name = argv[3]};
    memcpy(h.nonce, nonce, sizeof nonce);
    if (dr_proto_hello_proof(key, ch.nonce, nonce, h.name, h.proof, &err) != DR_OK)
        die(err.msg);
    send_msg(&s, DR_MSG_HELLO, &h, NULL, NULL);
    if (dr_proto_session_set_peer_nonce(&s, ch.nonce) != DR_OK)
        die("cannot open the session");
    f = recv_frame(&s, DR_MSG_WELCOME, DR_MSG_REJECT);
    if (f.type == DR_MSG_REJECT)
        die("rejected");
    dr_msg_welcome_t w = {0};
    if (dr_msg_welcome_parse(&w, f.body, f.len, &err) != DR_OK)
        die(err.msg);
    dr_msg_register_t reg = {
        .source = "declared", .cpus = w.cpus, .mem_mb = w.mem_mb, .hostname = "fake", .ngpus = 0};
    dr_msg_welcome_free(&w);
    send_msg(&s, DR_MSG_REGISTER, &reg, NULL, NULL);

    f = recv_frame(&s, DR_MSG_LAUNCH, DR_MSG_LAUNCH);
    dr_msg_launch_t l = {0};
    if (dr_msg_launch_parse(&l, f.body, f.len, &err) != DR_OK)
        die(err.msg);
    dr_msg_job_state_t st = {
        .job = l.job, .gen = l.gen, .rank = l.rank, .started = true, .pid = 4242, .detail = ""};
    uint8_t *started = NULL;
    size_t started_len = 0;
    send_msg(&s, DR_MSG_JOB_STATE, &st, &started, &started_len);
    /* (1) replayed */
    send_raw(started, started_len);
    free(started);
    /* (2) forged: a well-formed frame sealed under the wrong key */
    dr_msg_job_state_t fin = {.job = l.job,
                              .gen = l.gen,
                              .rank = l.rank,
                              .started = false,
                              .exit_code = 0,
                              .why = DR_END_EXIT,
                              .detail = ""};
    dr_proto_session_t forged = s;
    memcpy(forged.tx_key, bad_key, sizeof bad_key);
    send_msg(&forged, DR_MSG_JOB_STATE, &fin, NULL, NULL);
    /* (3) corrupted: genuine, then one body byte flipped in transit */
    dr_proto_session_t corr = s;
    uint8_t *cb = NULL;
    size_t cl = 0;
    if (dr_proto_send_msg(&corr, DR_MSG_JOB_STATE, &fin, &cb, &cl, &err) != DR_OK)
        die(err.msg);
    cb[DR_PROTO_HDR + 3] ^= 0x01;
    send_raw(cb, cl);
    free(cb);
    printf("attacked %llu\n", (unsigned long long)l.job);
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof line, stdin))
        die("stdin closed");
    /* the genuine end; s's sequence is still where the bad frames left it:
     * the forged and corrupted ones were never accepted */
    fin.exit_code = 7;
    send_msg(&s, DR_MSG_JOB_STATE, &fin, NULL, NULL);
    (void)recv_frame(&s, DR_MSG_ACK, DR_MSG_ACK);
    dr_msg_launch_free(&l);
    close(fd);
    return 0;
}
