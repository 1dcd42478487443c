/* frame.c - frames of the controller/agent protocol: the fixed big-endian
 * header, the two frames in clear that open a session (CHALLENGE, HELLO),
 * and AES-256-GCM sealing of every other frame under the session's
 * per-direction keys, with the sequence checks that stop a recorded frame
 * from being acted on twice.  Pure: bytes in, bytes out; the caller owns
 * sockets and randomness.  Keys and the HELLO proof: keys.c. */
#include "drover/proto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

/* Header field offsets (see proto.h). */
enum { OFF_MAGIC = 0, OFF_VERSION = 4, OFF_TYPE = 5, OFF_FLAGS = 6, OFF_LEN = 8, OFF_SEQ = 12 };
enum { OFF_NONCE = 20 };
enum { GCM_IV = 12 };

static const uint8_t magic[4] = {'D', 'R', 'V', '1'};
static const uint8_t zero_nonce[DR_PROTO_NONCE];
static const uint8_t zero_tag[DR_PROTO_TAG];

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
    case DR_MSG_CHALLENGE: return "challenge";
    default: return "unknown";
    }
}

void dr_proto_session_init(dr_proto_session_t *s, const uint8_t *key, const uint8_t *my_nonce)
{
    memset(s, 0, sizeof *s);
    memcpy(s->key, key, DR_PROTO_KEY);
    memcpy(s->my_nonce, my_nonce, DR_PROTO_NONCE);
}

void dr_proto_session_set_key(dr_proto_session_t *s, const uint8_t *key)
{
    memcpy(s->key, key, DR_PROTO_KEY);
}

/* A frame sent in clear: the two that open a session. */
static bool in_clear(int type)
{
    return type == DR_MSG_CHALLENGE || type == DR_MSG_HELLO;
}

static bool known_type(int type)
{
    return type > 0 && type < DR_MSG_NTYPES && strcmp(dr_msg_type_name(type), "unknown") != 0;
}

int dr_proto_peer_version(const uint8_t *buf, size_t len)
{
    if (len <= OFF_VERSION || memcmp(buf, magic, sizeof magic) != 0)
        return -1;
    return buf[OFF_VERSION];
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

/* AES-256-GCM, fetched once per process (the algorithm object is
 * read-only and no part of drover calls the codec from two threads). */
static EVP_CIPHER *gcm;

/* Seal (enc) or open body[0, n) in place under key, the header as
 * associated data, the sequence number as nonce (unique per key: each
 * direction has its own key and its numbers only grow).  Open checks tag;
 * seal writes it.  False if OpenSSL failed or the tag did not match. */
static bool gcm_crypt(bool enc, const uint8_t key[DR_PROTO_KEY], const uint8_t *hdr, uint64_t seq,
                      uint8_t *body, size_t n, uint8_t tag[DR_PROTO_TAG])
{
    if (!gcm)
        gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    EVP_CIPHER_CTX *c = gcm ? EVP_CIPHER_CTX_new() : NULL;
    if (!c)
        return false;
    uint8_t iv[GCM_IV] = {0};
    put_be(iv + 4, seq, 8);
    int out = 0;
    bool ok = EVP_CipherInit_ex2(c, gcm, key, iv, enc ? 1 : 0, NULL) &&
              EVP_CipherUpdate(c, NULL, &out, hdr, DR_PROTO_HDR);
    /* EVP lengths are int: a body is at most DR_PROTO_MAX_BODY */
    if (ok && n > 0)
        ok = EVP_CipherUpdate(c, body, &out, body, (int)n) && (size_t)out == n;
    if (ok && !enc)
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, DR_PROTO_TAG, tag) > 0;
    uint8_t fin[16];
    if (ok)
        ok = EVP_CipherFinal_ex(c, fin, &out) && out == 0;
    if (ok && enc)
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, DR_PROTO_TAG, tag) > 0;
    EVP_CIPHER_CTX_free(c);
    return ok;
}

int dr_proto_encode(dr_proto_session_t *s, int type, const char *body, size_t len, uint8_t **out,
                    size_t *outlen, dr_err_t *err)
{
    *out = NULL;
    *outlen = 0;
    if (!known_type(type))
        return dr_err_set(err, DR_EINVAL, "frame: unknown message type %d", type);
    bool clear = in_clear(type);
    size_t max = clear ? DR_PROTO_MAX_PREAUTH : DR_PROTO_MAX_BODY;
    if (len > max)
        return dr_err_set(err, DR_ELIMIT, "frame: %s body of %zu bytes exceeds %zu",
                          dr_msg_type_name(type), len, max);
    if (len > 0 && !body)
        return dr_err_set(err, DR_EINVAL, "frame: %s body is NULL", dr_msg_type_name(type));
    if (clear && s->have_peer_nonce)
        return dr_err_set(err, DR_ESTATE, "frame: %s only opens a session", dr_msg_type_name(type));
    if (!clear && !s->have_peer_nonce)
        return dr_err_set(err, DR_ESTATE, "frame: cannot send %s before the session is open",
                          dr_msg_type_name(type));
    if (!clear && s->tx_seq == UINT64_MAX)
        return dr_err_set(err, DR_ELIMIT, "frame: sequence numbers exhausted");
    size_t n = DR_PROTO_HDR + len + DR_PROTO_TAG;
    uint8_t *f = malloc(n);
    if (!f)
        return dr_err_set(err, DR_ENOMEM, "frame: out of memory");
    uint64_t seq = clear ? 0 : s->tx_seq + 1;
    memcpy(f + OFF_MAGIC, magic, sizeof magic);
    f[OFF_VERSION] = DR_PROTO_VERSION;
    f[OFF_TYPE] = (uint8_t)type;
    put_be(f + OFF_FLAGS, 0, 2);
    put_be(f + OFF_LEN, len, 4);
    put_be(f + OFF_SEQ, seq, 8);
    memcpy(f + OFF_NONCE, clear ? zero_nonce : s->peer_nonce, DR_PROTO_NONCE);
    if (len > 0)
        memcpy(f + DR_PROTO_HDR, body, len);
    uint8_t *tag = f + DR_PROTO_HDR + len;
    if (clear) {
        memset(tag, 0, DR_PROTO_TAG);
    } else if (!gcm_crypt(true, s->tx_key, f, seq, f + DR_PROTO_HDR, len, tag)) {
        free(f);
        return dr_err_set(err, DR_EIO, "frame: AES-256-GCM failed");
    }
    /* Only a frame actually produced uses up its sequence number. */
    if (!clear)
        s->tx_seq = seq;
    s->stats.frames_out++;
    *out = f;
    *outlen = n;
    return DR_OK;
}

/* Check what of the header has arrived in buf[0, len): a stream that
 * starts with garbage is refused as soon as the garbage shows, not once
 * 36 bytes have come (a peer speaking another protocol may never send
 * that many).  Before the session is open only the two frames in clear
 * may come, and small: a peer nobody knows yet gets no more than
 * DR_PROTO_MAX_PREAUTH bytes of buffer. */
static bool header_sane(const dr_proto_session_t *s, const uint8_t *buf, size_t len)
{
    if (len == 0)
        return true;
    size_t m = len < sizeof magic ? len : sizeof magic;
    if (memcmp(buf, magic, m) != 0)
        return false;
    if (len > OFF_VERSION && buf[OFF_VERSION] != DR_PROTO_VERSION)
        return false;
    if (len > OFF_TYPE &&
        (!known_type(buf[OFF_TYPE]) || in_clear(buf[OFF_TYPE]) == s->have_peer_nonce))
        return false;
    for (size_t i = OFF_FLAGS; i < OFF_FLAGS + 2 && i < len; i++)
        if (buf[i] != 0)
            return false;
    /* the smallest length the bytes so far allow (the rest taken as 0) */
    uint64_t blen = 0;
    for (size_t i = OFF_LEN; i < OFF_LEN + 4; i++)
        blen = blen << 8 | (i < len ? buf[i] : 0);
    uint64_t max = s->have_peer_nonce ? DR_PROTO_MAX_BODY : DR_PROTO_MAX_PREAUTH;
    return len <= OFF_LEN || blen <= max;
}

dr_proto_rc_t dr_proto_decode(dr_proto_session_t *s, uint8_t *buf, size_t len, size_t *used,
                              dr_frame_t *f)
{
    *used = 0;
    if (!header_sane(s, buf, len)) {
        s->stats.bad_header++;
        return DR_PROTO_FATAL;
    }
    if (len < DR_PROTO_HDR)
        return DR_PROTO_NEED;
    size_t blen = (size_t)get_be(buf + OFF_LEN, 4);
    size_t total = DR_PROTO_HDR + blen + DR_PROTO_TAG;
    if (len < total)
        return DR_PROTO_NEED;

    *used = total;
    int type = buf[OFF_TYPE];
    uint64_t seq = get_be(buf + OFF_SEQ, 8);
    const uint8_t *nonce = buf + OFF_NONCE;
    uint8_t *tag = buf + DR_PROTO_HDR + blen;
    bool fresh;
    if (in_clear(type)) {
        /* Opens a session: only once (header_sane), seq 0, no nonce yet. */
        if (CRYPTO_memcmp(tag, zero_tag, DR_PROTO_TAG) != 0) {
            s->stats.bad_mac++;
            return DR_PROTO_DROPPED;
        }
        fresh = seq == 0 && memcmp(nonce, zero_nonce, DR_PROTO_NONCE) == 0;
    } else {
        /* An OpenSSL failure cannot be told from a forgery here; both drop.
         * The body is decrypted in place. */
        if (!gcm_crypt(false, s->rx_key, buf, seq, buf + DR_PROTO_HDR, blen, tag)) {
            s->stats.bad_mac++;
            return DR_PROTO_DROPPED;
        }
        fresh = seq > s->rx_seq && memcmp(nonce, s->my_nonce, DR_PROTO_NONCE) == 0;
    }
    if (!fresh) {
        s->stats.replayed++;
        return DR_PROTO_DROPPED;
    }
    if (!in_clear(type))
        s->rx_seq = seq;
    s->stats.frames_in++;
    f->type = type;
    f->seq = seq;
    f->body = (const char *)buf + DR_PROTO_HDR;
    f->len = blen;
    return DR_PROTO_FRAME;
}
