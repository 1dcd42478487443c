/* fuzz_proto.h - what the protocol fuzz target and the seed generator in
 * tests/unit/test_proto.c share: the input format, the fixed key and
 * nonces, and a table that reaches each message type's encoder, parser
 * and freer by type number.
 *
 * Input: byte 0 % FP_NMODES picks the mode, byte 1 is a mode argument,
 * the rest is the payload.
 *   FP_MODE_STREAM   payload is a byte stream of frames under fp_key (the
 *                    node key), read by a session whose nonce is
 *                    fp_rx_nonce; arg bit 0: the session is already open
 *                    (its peer's nonce fp_tx_nonce); else a CHALLENGE, or a
 *                    HELLO whose proof holds, opens it.
 *   FP_MODE_BODY     payload is the body of message type
 *                    1 + arg % (DR_MSG_NTYPES - 1) (none for a number no
 *                    message has).
 *   FP_MODE_FRAMING  payload is records [type][len][len bytes], type
 *                    fp_sealed_type(byte): each is framed (sealed) and the
 *                    stream decoded in pieces of arg % 61 + 1
 *                    bytes (arg 0: all at once); what comes out must be what
 *                    went in.
 *   FP_MODE_LOCAL    payload is a byte stream of the local step socket
 *                    (srun <-> agent), read as the agent and srun read it:
 *                    each frame the decoder takes goes to its type's parser. */
#ifndef DROVER_FUZZ_PROTO_H
#define DROVER_FUZZ_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/proto.h"

enum {
    FP_MODE_STREAM = 0,
    FP_MODE_BODY = 1,
    FP_MODE_FRAMING = 2,
    FP_MODE_LOCAL = 3,
    FP_NMODES = 4
};

static const uint8_t fp_key[DR_PROTO_KEY] = {
    0x3c, 0x8a, 0x51, 0x07, 0xe2, 0x94, 0x1d, 0x6b, 0xf0, 0x25, 0xb7, 0x48, 0x9e, 0x03, 0xd6, 0x71,
    0x2f, 0xc4, 0x58, 0xa9, 0x13, 0x86, 0xeb, 0x3d, 0x60, 0xf7, 0x0a, 0x9c, 0x45, 0xbe, 0x27, 0xd2};
/* the reading session's own nonce, and its peer's */
static const uint8_t fp_rx_nonce[DR_PROTO_NONCE] = {0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
                                                    0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf};
static const uint8_t fp_tx_nonce[DR_PROTO_NONCE] = {0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
                                                    0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf};

/* Any message struct. */
typedef union fp_any {
    dr_msg_hello_t hello;
    dr_msg_welcome_t welcome;
    dr_msg_register_t reg;
    dr_msg_heartbeat_t heartbeat;
    dr_msg_launch_t launch;
    dr_msg_kill_t kill;
    dr_msg_job_state_t job_state;
    dr_msg_ack_t ack;
    dr_msg_reject_t reject;
    dr_msg_step_req_t step_req;
    dr_msg_step_cancel_t step_cancel;
    dr_msg_step_state_t step_state;
    dr_msg_signal_t signal;
    dr_msg_lease_t lease;
    dr_msg_ckpt_t ckpt;
    dr_msg_output_req_t output_req;
    dr_msg_output_t output;
    dr_msg_challenge_t challenge;
} fp_any_t;

typedef struct fp_msg {
    size_t size;
    int (*encode)(const void *m, char **json, size_t *len, dr_err_t *err);
    int (*parse)(void *m, const char *body, size_t len, dr_err_t *err);
    void (*free)(void *m);
} fp_msg_t;

#define FP_WRAP(name)                                                                              \
    static inline int fp_enc_##name(const void *m, char **j, size_t *l, dr_err_t *e)               \
    {                                                                                              \
        return dr_msg_##name##_encode(m, j, l, e);                                                 \
    }                                                                                              \
    static inline int fp_parse_##name(void *m, const char *b, size_t l, dr_err_t *e)               \
    {                                                                                              \
        return dr_msg_##name##_parse(m, b, l, e);                                                  \
    }                                                                                              \
    static inline void fp_free_##name(void *m)                                                     \
    {                                                                                              \
        dr_msg_##name##_free(m);                                                                   \
    }
FP_WRAP(hello)
FP_WRAP(welcome)
FP_WRAP(register)
FP_WRAP(heartbeat)
FP_WRAP(launch)
FP_WRAP(kill)
FP_WRAP(job_state)
FP_WRAP(ack)
FP_WRAP(reject)
FP_WRAP(step_req)
FP_WRAP(step_cancel)
FP_WRAP(step_state)
FP_WRAP(signal)
FP_WRAP(lease)
FP_WRAP(ckpt)
FP_WRAP(output_req)
FP_WRAP(output)
FP_WRAP(challenge)
#undef FP_WRAP

#define FP_ENTRY(T, name)                                                                          \
    {                                                                                              \
        sizeof(dr_msg_##name##_t), fp_enc_##name, fp_parse_##name, fp_free_##name                  \
    }
static const fp_msg_t fp_msgs[DR_MSG_NTYPES] = {
    [DR_MSG_HELLO] = FP_ENTRY(DR_MSG_HELLO, hello),
    [DR_MSG_WELCOME] = FP_ENTRY(DR_MSG_WELCOME, welcome),
    [DR_MSG_REGISTER] = FP_ENTRY(DR_MSG_REGISTER, register),
    [DR_MSG_HEARTBEAT] = FP_ENTRY(DR_MSG_HEARTBEAT, heartbeat),
    [DR_MSG_LAUNCH] = FP_ENTRY(DR_MSG_LAUNCH, launch),
    [DR_MSG_KILL] = FP_ENTRY(DR_MSG_KILL, kill),
    [DR_MSG_JOB_STATE] = FP_ENTRY(DR_MSG_JOB_STATE, job_state),
    [DR_MSG_ACK] = FP_ENTRY(DR_MSG_ACK, ack),
    [DR_MSG_REJECT] = FP_ENTRY(DR_MSG_REJECT, reject),
    [DR_MSG_STEP_REQ] = FP_ENTRY(DR_MSG_STEP_REQ, step_req),
    [DR_MSG_STEP_CANCEL] = FP_ENTRY(DR_MSG_STEP_CANCEL, step_cancel),
    [DR_MSG_STEP_STATE] = FP_ENTRY(DR_MSG_STEP_STATE, step_state),
    [DR_MSG_SIGNAL] = FP_ENTRY(DR_MSG_SIGNAL, signal),
    [DR_MSG_SIGNALED] = FP_ENTRY(DR_MSG_SIGNALED, signal),
    [DR_MSG_LEASE] = FP_ENTRY(DR_MSG_LEASE, lease),
    [DR_MSG_CKPT] = FP_ENTRY(DR_MSG_CKPT, ckpt),
    [DR_MSG_OUTPUT_REQ] = FP_ENTRY(DR_MSG_OUTPUT_REQ, output_req),
    [DR_MSG_OUTPUT] = FP_ENTRY(DR_MSG_OUTPUT, output),
    [DR_MSG_CHALLENGE] = FP_ENTRY(DR_MSG_CHALLENGE, challenge),
};
#undef FP_ENTRY

/* A type some message has (the numbering may have gaps). */
static inline bool fp_known(int t)
{
    return t > 0 && t < DR_MSG_NTYPES && fp_msgs[t].parse;
}

/* The types an open session carries (sealed): all but the two in clear. */
static inline bool fp_sealed(int t)
{
    return fp_known(t) && t != DR_MSG_HELLO && t != DR_MSG_CHALLENGE;
}

/* The b-th (mod their number) sealed type, and back. */
static inline int fp_sealed_type(uint8_t b)
{
    int n = 0;
    for (int t = 1; t < DR_MSG_NTYPES; t++)
        n += fp_sealed(t);
    int k = b % n;
    for (int t = 1; t < DR_MSG_NTYPES; t++)
        if (fp_sealed(t) && k-- == 0)
            return t;
    return DR_MSG_ACK;
}
static inline uint8_t fp_sealed_index(int type)
{
    uint8_t k = 0;
    for (int t = 1; t < type; t++)
        k += fp_sealed(t);
    return k;
}

#endif
