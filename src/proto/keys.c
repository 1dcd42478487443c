/* keys.c - the keys of the agent link: a node's key from the controller's
 * master key, the HELLO proof that an agent holds its node's key, and the
 * two per-direction frame keys of a session (HKDF-SHA256 of the node key
 * and both nonces).  Why per node: with one shared key every node could
 * register as any other and read every node's LAUNCH frames (their
 * environments hold users' secrets); a node key is good for one name.
 * Pure: bytes in, bytes out. */
#include "drover/proto.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <stdio.h>
#include <string.h>

/* Labels keep the three uses of HMAC-SHA256/HKDF apart: a HELLO proof can
 * never pass for a node key or a frame key. */
static const char node_label[] = "drover-node-key"; /* NUL included: sizeof */
static const char hello_label[] = "drover-hello";
static const char frame_info[] = "drover-frame-v2";

/* HMAC-SHA256 over the concatenation of up to four pieces. */
static bool hmac4(const uint8_t key[DR_PROTO_KEY], const void *p1, size_t n1, const void *p2,
                  size_t n2, const void *p3, size_t n3, const void *p4, size_t n4, uint8_t out[32])
{
    EVP_MAC *m = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *c = m ? EVP_MAC_CTX_new(m) : NULL;
    EVP_MAC_free(m); /* the context keeps its own reference */
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                           OSSL_PARAM_construct_end()};
    size_t len = 0;
    bool ok = c && EVP_MAC_init(c, key, DR_PROTO_KEY, params) && EVP_MAC_update(c, p1, n1) &&
              EVP_MAC_update(c, p2, n2) && EVP_MAC_update(c, p3, n3) && EVP_MAC_update(c, p4, n4) &&
              EVP_MAC_final(c, out, &len, 32) && len == 32;
    EVP_MAC_CTX_free(c);
    return ok;
}

int dr_proto_node_key(const uint8_t master[DR_PROTO_KEY], const char *name,
                      uint8_t out[DR_PROTO_KEY], dr_err_t *err)
{
    return dr_proto_node_key_gen(master, name, 0, out, err);
}

int dr_proto_node_key_gen(const uint8_t master[DR_PROTO_KEY], const char *name, uint32_t gen,
                          uint8_t out[DR_PROTO_KEY], dr_err_t *err)
{
    if (!name || !*name || strlen(name) > DR_MSG_MAX_STR)
        return dr_err_set(err, DR_EINVAL, "node key: a node name of 1 to %d bytes is needed",
                          DR_MSG_MAX_STR);
    /* generation 0 is the name alone; a later one adds "\0" and its number
     * (a name holds no NUL, so no two (name, generation) pairs collide) */
    char g[16] = "";
    size_t gl = 0;
    if (gen > 0)
        gl = (size_t)snprintf(g, sizeof g, "%c%u", '\0', gen);
    if (!hmac4(master, node_label, sizeof node_label, name, strlen(name), g, gl, NULL, 0, out))
        return dr_err_set(err, DR_EIO, "node key: HMAC-SHA256 failed");
    return DR_OK;
}

int dr_proto_hello_proof(const uint8_t key[DR_PROTO_KEY], const uint8_t ctld_nonce[DR_PROTO_NONCE],
                         const uint8_t agent_nonce[DR_PROTO_NONCE], const char *name,
                         uint8_t out[DR_PROTO_PROOF], dr_err_t *err)
{
    if (!hmac4(key, hello_label, sizeof hello_label, ctld_nonce, DR_PROTO_NONCE, agent_nonce,
               DR_PROTO_NONCE, name, strlen(name), out))
        return dr_err_set(err, DR_EIO, "hello proof: HMAC-SHA256 failed");
    return DR_OK;
}

bool dr_proto_hello_verify(const uint8_t key[DR_PROTO_KEY],
                           const uint8_t ctld_nonce[DR_PROTO_NONCE],
                           const uint8_t agent_nonce[DR_PROTO_NONCE], const char *name,
                           const uint8_t proof[DR_PROTO_PROOF])
{
    uint8_t want[DR_PROTO_PROOF];
    bool ok = dr_proto_hello_proof(key, ctld_nonce, agent_nonce, name, want, NULL) == DR_OK &&
              CRYPTO_memcmp(want, proof, DR_PROTO_PROOF) == 0;
    OPENSSL_cleanse(want, sizeof want);
    return ok;
}

/* HKDF-SHA256(key, salt = from || to, frame_info): the key of the frames
 * sent by the end whose nonce is `from`. */
static bool frame_key(const uint8_t key[DR_PROTO_KEY], const uint8_t *from, const uint8_t *to,
                      uint8_t out[DR_PROTO_KEY])
{
    uint8_t salt[2 * DR_PROTO_NONCE];
    memcpy(salt, from, DR_PROTO_NONCE);
    memcpy(salt + DR_PROTO_NONCE, to, DR_PROTO_NONCE);
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *c = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    EVP_KDF_free(kdf);
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, DR_PROTO_KEY),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt, sizeof salt),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)frame_info,
                                          sizeof frame_info - 1),
        OSSL_PARAM_construct_end()};
    bool ok = c && EVP_KDF_derive(c, out, DR_PROTO_KEY, params) > 0;
    EVP_KDF_CTX_free(c);
    return ok;
}

int dr_proto_session_set_peer_nonce(dr_proto_session_t *s, const uint8_t *nonce)
{
    if (CRYPTO_memcmp(nonce, s->my_nonce, DR_PROTO_NONCE) == 0)
        return dr_err_set(NULL, DR_EINVAL, "session: the peer's nonce is our own (a reflection)");
    if (!frame_key(s->key, s->my_nonce, nonce, s->tx_key) ||
        !frame_key(s->key, nonce, s->my_nonce, s->rx_key))
        return dr_err_set(NULL, DR_EIO, "session: HKDF-SHA256 failed");
    memcpy(s->peer_nonce, nonce, DR_PROTO_NONCE);
    s->have_peer_nonce = true;
    return DR_OK;
}
