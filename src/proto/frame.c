/* frame.c - frames of the controller/agent protocol: the fixed big-endian
 * header, HMAC-SHA256 under the cluster key, and the per-session nonce and
 * sequence checks that stop a recorded frame from being acted on twice.
 * Pure: bytes in, bytes out; the caller owns sockets and randomness. */
#include "drover/proto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdlib.h>
#include <string.h>

/* Header field offsets (see proto.h). */
enum { OFF_MAGIC = 0, OFF_VERSION = 4, OFF_TYPE = 5, OFF_FLAGS = 6, OFF_LEN = 8, OFF_SEQ = 12 };
enum { OFF_NONCE = 20 };

static const uint8_t magic[4] = {'D', 'R', 'V', '1'};
static const uint8_t zero_nonce[DR_PROTO_NONCE];

const char *dr_msg_type_name(int type)
{
    switch (type) {
    case DR_MSG_HELLO: return "hello";
    case DR_MSG_WELCOME: return "welcome";
    case DR_MSG_REGISTER: return "register";
    case DR_MSG_HEARTBEAT: return "heartbeat";
    case DR_MSG_LAUNCH: return "launch";
    case DR_MSG_KILL: return "kill";
    case DR_MSG_JOB_STATE: return "job_state";
    case DR_MSG_ACK: return "ack";
    case DR_MSG_REJECT: return "reject";
    case DR_MSG_STEP_REQ: return "step_req";
    case DR_MSG_STEP_CANCEL: return "step_cancel";
    case DR_MSG_STEP_STATE: return "step_state";
    case DR_MSG_SIGNAL: return "signal";
    case DR_MSG_SIGNALED: return "signaled";
    case DR_MSG_LEASE: return "lease";
    case DR_MSG_CKPT: return "ckpt";
    case DR_MSG_OUTPUT_REQ: return "output_req";
    case DR_MSG_OUTPUT: return "output";
    default: return "unknown";
    }
}

void dr_proto_session_init(dr_proto_session_t *s, const uint8_t *key, const uint8_t *my_nonce)
{
    memset(s, 0, sizeof *s);
    memcpy(s->key, key, DR_PROTO_KEY);
    memcpy(s->my_nonce, my_nonce, DR_PROTO_NONCE);
}

void dr_proto_session_set_peer_nonce(dr_proto_session_t *s, const uint8_t *nonce)
{
    memcpy(s->peer_nonce, nonce, DR_PROTO_NONCE);
    s->have_peer_nonce = true;
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int dr_proto_key_parse(const char *text, size_t len, uint8_t key[DR_PROTO_KEY], dr_err_t *err)
{
    /* Messages give positions and counts, never the characters: the text
     * is (nearly) a secret. */
    size_t ndig = 0;
    while (ndig < len && hexval((unsigned char)text[ndig]) >= 0)
        ndig++;
    size_t rest = ndig; /* first character after the digits that is not whitespace */
    while (rest < len && is_space((unsigned char)text[rest]))
        rest++;
    if (ndig < 2 * DR_PROTO_KEY) {
        if (rest < len)
            return dr_err_set(err, DR_EINVAL, "key: character %zu is not a hex digit", ndig + 1);
        return dr_err_set(err, DR_EINVAL, "key: %zu hex digits, expected %d", ndig,
                          2 * DR_PROTO_KEY);
    }
    if (ndig > 2 * DR_PROTO_KEY)
        return dr_err_set(err, DR_EINVAL, "key: more than %d hex digits", 2 * DR_PROTO_KEY);
    if (rest < len)
        return dr_err_set(err, DR_EINVAL,
                          "key: character %zu: only whitespace may follow the %d hex digits",
                          rest + 1, 2 * DR_PROTO_KEY);
    for (size_t i = 0; i < DR_PROTO_KEY; i++)
        key[i] = (uint8_t)(hexval((unsigned char)text[2 * i]) << 4 |
                           hexval((unsigned char)text[2 * i + 1]));
    return DR_OK;
}

void dr_proto_key_format(const uint8_t key[DR_PROTO_KEY], char out[66])
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < DR_PROTO_KEY; i++) {
        out[2 * i] = hex[key[i] >> 4];
        out[2 * i + 1] = hex[key[i] & 15];
    }
    out[2 * DR_PROTO_KEY] = '\n';
    out[2 * DR_PROTO_KEY + 1] = '\0';
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        p[i] = (uint8_t)(v & 0xff);
        v >>= 8;
    }
}

static uint64_t get_be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* A keyed HMAC-SHA256 context for the key last used, copied for each
 * frame: keying OpenSSL's one-shot HMAC() for every frame cost 5 us, a
 * copy of a keyed context 1.3 us, and a controller checks and answers a
 * heartbeat (two MACs) from every node every second.  Process-wide: a
 * process holds one cluster key (another key, as in tests, re-keys it),
 * and no part of drover calls the codec from more than one thread. */
static EVP_MAC_CTX *mac_keyed;
static uint8_t mac_key[DR_PROTO_KEY];

static EVP_MAC_CTX *mac_for(const uint8_t *key)
{
    if (mac_keyed && CRYPTO_memcmp(mac_key, key, DR_PROTO_KEY) == 0)
        return mac_keyed;
    EVP_MAC *m = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *c = m ? EVP_MAC_CTX_new(m) : NULL;
    EVP_MAC_free(m); /* the context keeps its own reference */
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                           OSSL_PARAM_construct_end()};
    if (!c || !EVP_MAC_init(c, key, DR_PROTO_KEY, params)) {
        EVP_MAC_CTX_free(c);
        return NULL;
    }
    EVP_MAC_CTX_free(mac_keyed);
    mac_keyed = c;
    memcpy(mac_key, key, DR_PROTO_KEY);
    return c;
}

/* HMAC-SHA256 of data[0, n) under key into mac; false if OpenSSL failed. */
static bool frame_mac(const uint8_t *key, const uint8_t *data, size_t n, uint8_t mac[DR_PROTO_MAC])
{
    EVP_MAC_CTX *base = mac_for(key), *c = base ? EVP_MAC_CTX_dup(base) : NULL;
    size_t len = 0;
    bool ok = c && EVP_MAC_update(c, data, n) && EVP_MAC_final(c, mac, &len, DR_PROTO_MAC) &&
              len == DR_PROTO_MAC;
    EVP_MAC_CTX_free(c);
    return ok;
}

int dr_proto_encode(dr_proto_session_t *s, int type, const char *body, size_t len, uint8_t **out,
                    size_t *outlen, dr_err_t *err)
{
    *out = NULL;
    *outlen = 0;
    if (type <= 0 || type >= DR_MSG_NTYPES)
        return dr_err_set(err, DR_EINVAL, "frame: unknown message type %d", type);
    if (len > DR_PROTO_MAX_BODY)
        return dr_err_set(err, DR_ELIMIT, "frame: %s body of %zu bytes exceeds %u",
                          dr_msg_type_name(type), len, DR_PROTO_MAX_BODY);
    if (len > 0 && !body)
        return dr_err_set(err, DR_EINVAL, "frame: %s body is NULL", dr_msg_type_name(type));
    bool hello = type == DR_MSG_HELLO;
    if (!hello && !s->have_peer_nonce)
        return dr_err_set(err, DR_ESTATE, "frame: cannot send %s before the peer's nonce is known",
                          dr_msg_type_name(type));
    if (!hello && s->tx_seq == UINT64_MAX)
        return dr_err_set(err, DR_ELIMIT, "frame: sequence numbers exhausted");
    size_t n = DR_PROTO_HDR + len + DR_PROTO_MAC;
    uint8_t *f = malloc(n);
    if (!f)
        return dr_err_set(err, DR_ENOMEM, "frame: out of memory");
    uint64_t seq = hello ? 0 : s->tx_seq + 1;
    memcpy(f + OFF_MAGIC, magic, sizeof magic);
    f[OFF_VERSION] = DR_PROTO_VERSION;
    f[OFF_TYPE] = (uint8_t)type;
    put_be(f + OFF_FLAGS, 0, 2);
    put_be(f + OFF_LEN, len, 4);
    put_be(f + OFF_SEQ, seq, 8);
    memcpy(f + OFF_NONCE, hello ? zero_nonce : s->peer_nonce, DR_PROTO_NONCE);
    if (len > 0)
        memcpy(f + DR_PROTO_HDR, body, len);
    if (!frame_mac(s->key, f, DR_PROTO_HDR + len, f + DR_PROTO_HDR + len)) {
        free(f);
        return dr_err_set(err, DR_EIO, "frame: HMAC-SHA256 failed");
    }
    /* Only a frame actually produced uses up its sequence number. */
    if (!hello)
        s->tx_seq = seq;
    s->stats.frames_out++;
    *out = f;
    *outlen = n;
    return DR_OK;
}

/* Check what of the header has arrived in buf[0, len): a stream that
 * starts with garbage is refused as soon as the garbage shows, not once
 * 36 bytes have come (a peer speaking another protocol may never send
 * that many). */
static bool header_sane(const uint8_t *buf, size_t len)
{
    if (len == 0)
        return true;
    size_t m = len < sizeof magic ? len : sizeof magic;
    if (memcmp(buf, magic, m) != 0)
        return false;
    if (len > OFF_VERSION && buf[OFF_VERSION] != DR_PROTO_VERSION)
        return false;
    if (len > OFF_TYPE && (buf[OFF_TYPE] == 0 || buf[OFF_TYPE] >= DR_MSG_NTYPES))
        return false;
    for (size_t i = OFF_FLAGS; i < OFF_FLAGS + 2 && i < len; i++)
        if (buf[i] != 0)
            return false;
    /* the smallest length the bytes so far allow (the rest taken as 0) */
    uint64_t blen = 0;
    for (size_t i = OFF_LEN; i < OFF_LEN + 4; i++)
        blen = blen << 8 | (i < len ? buf[i] : 0);
    return len <= OFF_LEN || blen <= DR_PROTO_MAX_BODY;
}

dr_proto_rc_t dr_proto_decode(dr_proto_session_t *s, const uint8_t *buf, size_t len, size_t *used,
                              dr_frame_t *f)
{
    *used = 0;
    if (!header_sane(buf, len)) {
        s->stats.bad_header++;
        return DR_PROTO_FATAL;
    }
    if (len < DR_PROTO_HDR)
        return DR_PROTO_NEED;
    size_t blen = (size_t)get_be(buf + OFF_LEN, 4);
    size_t total = DR_PROTO_HDR + blen + DR_PROTO_MAC;
    if (len < total)
        return DR_PROTO_NEED;

    uint8_t mac[DR_PROTO_MAC];
    /* An OpenSSL failure cannot be told from a forgery here; both drop. */
    *used = total;
    if (!frame_mac(s->key, buf, DR_PROTO_HDR + blen, mac) ||
        CRYPTO_memcmp(mac, buf + DR_PROTO_HDR + blen, DR_PROTO_MAC) != 0) {
        s->stats.bad_mac++;
        return DR_PROTO_DROPPED;
    }

    int type = buf[OFF_TYPE];
    uint64_t seq = get_be(buf + OFF_SEQ, 8);
    const uint8_t *nonce = buf + OFF_NONCE;
    bool fresh;
    if (type == DR_MSG_HELLO) {
        /* Opens a session: only once, and never inside one. */
        fresh = !s->have_peer_nonce && seq == 0 && memcmp(nonce, zero_nonce, DR_PROTO_NONCE) == 0;
    } else {
        /* WELCOME is the one frame that arrives before its receiver knows
         * the peer's nonce (it carries it in the body); every other type
         * needs the session set up, and WELCOME cannot come twice. */
        bool state_ok = type == DR_MSG_WELCOME ? !s->have_peer_nonce : s->have_peer_nonce;
        fresh = state_ok && seq > s->rx_seq && memcmp(nonce, s->my_nonce, DR_PROTO_NONCE) == 0;
    }
    if (!fresh) {
        s->stats.replayed++;
        return DR_PROTO_DROPPED;
    }
    s->rx_seq = seq;
    s->stats.frames_in++;
    f->type = type;
    f->seq = seq;
    f->body = (const char *)buf + DR_PROTO_HDR;
    f->len = blen;
    return DR_PROTO_FRAME;
}
