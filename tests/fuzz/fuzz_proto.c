/* fuzz_proto.c - libFuzzer target for the wire protocol (input format in
 * fuzz_proto.h).  Stream mode feeds hostile bytes to the frame decoder and
 * hands every authenticated frame to its type's parser, as the controller
 * and agent do (a CHALLENGE, or a HELLO whose proof holds, opens the
 * session); body mode checks that whatever a parser accepts encodes,
 * parses again and re-encodes to the same JSON, and that a refusal leaves
 * the struct zeroed with a message; framing mode checks that frames of any
 * bodies, read back in pieces of any size, come out as they went in;
 * local mode reads the srun <-> agent socket's frames as both ends do.
 * abort() marks a broken invariant; the ASan build also catches leaks. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool all_zero(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

static void fuzz_stream(uint8_t arg, const uint8_t *input, size_t n)
{
    /* the decoder opens sealed frames in place: a copy, not the const input */
    uint8_t *p = malloc(n ? n : 1);
    if (!p)
        abort();
    if (n)
        memcpy(p, input, n);
    dr_proto_session_t s;
    dr_proto_session_init(&s, fp_key, fp_rx_nonce);
    if (arg & 1)
        dr_proto_session_set_peer_nonce(&s, fp_tx_nonce);
    size_t off = 0;
    uint64_t taken = 0, dropped = 0;
    for (;;) {
        size_t used = 99;
        dr_frame_t f;
        dr_proto_rc_t rc = dr_proto_decode(&s, p + off, n - off, &used, &f);
        if (rc == DR_PROTO_NEED || rc == DR_PROTO_FATAL) {
            if (used != 0)
                abort();
            break;
        }
        if (used < DR_PROTO_HDR + DR_PROTO_TAG || used > n - off)
            abort();
        if (rc == DR_PROTO_FRAME) {
            taken++;
            if (!fp_known(f.type) || f.body != (const char *)p + off + DR_PROTO_HDR ||
                f.len + DR_PROTO_HDR + DR_PROTO_TAG != used ||
                (s.have_peer_nonce != fp_sealed(f.type)))
                abort();
            const fp_msg_t *mt = &fp_msgs[f.type];
            fp_any_t m;
            dr_err_t err;
            if (mt->parse(&m, f.body, f.len, &err) == DR_OK) {
                /* as the two ends do: a session opens on CHALLENGE (the
                 * agent) or on a HELLO that proves the key (the controller) */
                if (f.type == DR_MSG_HELLO &&
                    dr_proto_hello_verify(fp_key, s.my_nonce, m.hello.nonce, m.hello.name,
                                          m.hello.proof))
                    dr_proto_session_set_peer_nonce(&s, m.hello.nonce);
                else if (f.type == DR_MSG_CHALLENGE)
                    dr_proto_session_set_peer_nonce(&s, m.challenge.nonce);
                mt->free(&m);
            } else if (!all_zero(&m, mt->size)) {
                abort();
            }
        } else if (rc == DR_PROTO_DROPPED) {
            dropped++;
        } else {
            abort();
        }
        off += used;
    }
    if (s.stats.frames_in != taken || s.stats.bad_mac + s.stats.replayed != dropped)
        abort();
    free(p);
}

static void fuzz_body(uint8_t arg, const uint8_t *p, size_t n)
{
    int type = 1 + arg % (DR_MSG_NTYPES - 1);
    if (!fp_known(type))
        return;
    const fp_msg_t *mt = &fp_msgs[type];
    fp_any_t a, b;
    dr_err_t err = {0};
    int rc = mt->parse(&a, (const char *)p, n, &err);
    if (rc != DR_OK) {
        if (rc > 0 || err.msg[0] == '\0' || !all_zero(&a, mt->size))
            abort();
        return;
    }
    char *j1, *j2;
    size_t l1, l2;
    if (mt->encode(&a, &j1, &l1, &err) != DR_OK || strlen(j1) != l1)
        abort(); /* a parsed message must be encodable */
    if (mt->parse(&b, j1, l1, &err) != DR_OK)
        abort(); /* ...and what the encoder writes must parse */
    if (mt->encode(&b, &j2, &l2, &err) != DR_OK || l1 != l2 || memcmp(j1, j2, l1) != 0)
        abort(); /* ...to the same message */
    free(j1);
    free(j2);
    mt->free(&a);
    mt->free(&b);
    if (!all_zero(&a, mt->size))
        abort();
}

typedef struct rec {
    int type;
    const uint8_t *body;
    size_t len;
} rec_t;

static void fuzz_framing(uint8_t arg, const uint8_t *p, size_t n)
{
    dr_proto_session_t tx, rx;
    dr_proto_session_init(&tx, fp_key, fp_tx_nonce);
    dr_proto_session_set_peer_nonce(&tx, fp_rx_nonce);
    dr_proto_session_init(&rx, fp_key, fp_rx_nonce);
    dr_proto_session_set_peer_nonce(&rx, fp_tx_nonce);
    rec_t recs[64];
    size_t nrec = 0, total = 0;
    uint8_t *stream = NULL;
    for (size_t off = 0; off + 2 <= n && nrec < 64; nrec++) {
        /* CHALLENGE and HELLO open a session: not in an open one */
        rec_t *r = &recs[nrec];
        r->type = fp_sealed_type(p[off]);
        size_t want = p[off + 1];
        r->len = want < n - off - 2 ? want : n - off - 2;
        r->body = p + off + 2;
        off += 2 + r->len;
        uint8_t *fr;
        size_t frlen;
        dr_err_t err;
        if (dr_proto_encode(&tx, r->type, (const char *)r->body, r->len, &fr, &frlen, &err) != 0)
            abort();
        uint8_t *grown = realloc(stream, total + frlen);
        if (!grown)
            abort();
        stream = grown;
        memcpy(stream + total, fr, frlen);
        total += frlen;
        free(fr);
    }
    if (nrec == 0)
        return;
    size_t piece = arg ? (size_t)(arg % 61 + 1) : total;
    size_t avail = piece < total ? piece : total, done = 0, k = 0;
    for (;;) {
        size_t used;
        dr_frame_t f;
        dr_proto_rc_t rc = dr_proto_decode(&rx, stream + done, avail - done, &used, &f);
        if (rc == DR_PROTO_FRAME) {
            if (k >= nrec || f.type != recs[k].type || f.len != recs[k].len || f.seq != k + 1 ||
                (f.len && memcmp(f.body, recs[k].body, f.len) != 0))
                abort();
            k++;
            done += used;
        } else if (rc == DR_PROTO_NEED && avail < total) {
            avail = avail + piece < total ? avail + piece : total;
        } else if (rc == DR_PROTO_NEED) {
            break;
        } else {
            abort();
        }
    }
    if (k != nrec || done != total || rx.stats.frames_in != nrec || tx.stats.frames_out != nrec)
        abort();
    free(stream);
}

/* The local step socket: the agent reads srun's frames (and srun the
 * agent's) with dr_proto_local_decode, then parses the body by its type. */
static void fuzz_local(const uint8_t *p, size_t n)
{
    size_t off = 0;
    for (;;) {
        size_t used = 99;
        dr_frame_t f;
        dr_err_t err = {0};
        dr_proto_rc_t rc = dr_proto_local_decode(p + off, n - off, &used, &f, &err);
        if (rc == DR_PROTO_NEED || rc == DR_PROTO_FATAL) {
            if (used != 0 || (rc == DR_PROTO_FATAL && err.msg[0] == '\0'))
                abort();
            break;
        }
        if (rc != DR_PROTO_FRAME || used != DR_PROTO_LOCAL_HDR + f.len || used > n - off ||
            (f.type != DR_MSG_STEP_REQ && f.type != DR_MSG_STEP_CANCEL &&
             f.type != DR_MSG_STEP_STATE))
            abort();
        const fp_msg_t *mt = &fp_msgs[f.type];
        fp_any_t m;
        if (mt->parse(&m, f.body, f.len, &err) == DR_OK) {
            /* what was taken frames again to the same bytes */
            uint8_t *again;
            size_t alen;
            if (dr_proto_local_encode(f.type, &m, &again, &alen, &err) != DR_OK)
                abort();
            dr_frame_t g;
            size_t gused;
            if (dr_proto_local_decode(again, alen, &gused, &g, &err) != DR_PROTO_FRAME ||
                gused != alen || g.type != f.type)
                abort();
            free(again);
            mt->free(&m);
        } else if (!all_zero(&m, mt->size)) {
            abort();
        }
        off += used;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    switch (data[0] % FP_NMODES) {
    case FP_MODE_STREAM: fuzz_stream(data[1], data + 2, size - 2); break;
    case FP_MODE_BODY: fuzz_body(data[1], data + 2, size - 2); break;
    case FP_MODE_LOCAL: fuzz_local(data + 2, size - 2); break;
    default: fuzz_framing(data[1], data + 2, size - 2); break;
    }
    return 0;
}
