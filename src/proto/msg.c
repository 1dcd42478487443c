/* msg.c - the bodies of protocol frames: each message struct to compact
 * JSON and back.
 *
 * Every message is described once, as a table of its fields (JSON key = C
 * field name, kind, offset), and one generic encoder, parser and freer walk
 * the tables.  So the encoder and the parser cannot disagree about a field,
 * and every field gets the same strict checks: right JSON type, integer in
 * range of its C type, bounded strings without NUL, bounded arrays.  The
 * bodies come from the network (authenticated, but a buggy or compromised
 * peer holds the key too), so nothing in them is trusted. */
#include "drover/proto.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum fkind {
    F_U32,   /* uint32_t */
    F_U64,   /* uint64_t, <= INT64_MAX (jansson's integers are long long) */
    F_I32,   /* int32_t */
    F_I64,   /* int64_t */
    F_WHY,   /* uint8_t, < DR_END_NWHY */
    F_READY, /* uint8_t, DR_READY_NONE .. DR_READY_NO */
    F_BOOL,  /* bool */
    F_STR,   /* char *, <= DR_MSG_MAX_STR bytes; NULL encodes as "" */
    F_TEXT,  /* char *, <= DR_MSG_MAX_TEXT bytes, optional: NULL is left out */
    F_NONCE, /* uint8_t[DR_PROTO_NONCE], as 32 hex digits */
    F_PROOF, /* uint8_t[DR_PROTO_PROOF], as 64 hex digits */
    F_STRV,  /* char **, count at cnt */
    F_U32V,  /* uint32_t *, count at cnt */
    F_OBJV,  /* array of sub structs, count at cnt */
    F_BYTES, /* uint8_t *, count at cnt, <= max bytes, base64 on the wire */
    F_NAMEV  /* char **, count at cnt, optional (absent = empty; a bool at flag, if any,
                says it was given), each <= DR_MSG_MAX_SHARD_NAME bytes */
} fkind_t;

typedef struct msgdesc msgdesc_t;

typedef struct field {
    const char *name;
    fkind_t kind;
    size_t off;
    size_t cnt;           /* arrays: offset of the uint32_t count */
    uint32_t min;         /* arrays: fewest elements */
    uint32_t max;         /* arrays: most elements */
    const msgdesc_t *sub; /* F_OBJV: element description */
    size_t flag;          /* F_NAMEV: offset of its "given" bool, 0 = none */
} field_t;

struct msgdesc {
    const char *name;
    size_t size;
    const field_t *f;
    size_t nf;
};

typedef uint8_t nonce_t[DR_PROTO_NONCE];
typedef uint8_t proof_t[DR_PROTO_PROOF];

/* One table row.  The sizeof term adds nothing to the offset: it makes the
 * compiler check that the member has the C type the kind says (comparing
 * distinct pointer types is an error under -Werror), so a table row cannot
 * silently read a uint32_t as a uint64_t. */
#define TYPED_OFF(T, name, ctype) (offsetof(T, name) + 0 * sizeof(&((T *)0)->name == (ctype *)0))
/* clang-format off */
#define FIELD(T, name, kind, ctype) {#name, kind, TYPED_OFF(T, name, ctype), 0, 0, 0, NULL, 0}
#define U32(T, name) FIELD(T, name, F_U32, uint32_t)
#define U64(T, name) FIELD(T, name, F_U64, uint64_t)
#define I32(T, name) FIELD(T, name, F_I32, int32_t)
#define I64(T, name) FIELD(T, name, F_I64, int64_t)
#define WHY(T, name) FIELD(T, name, F_WHY, uint8_t)
#define BOOL(T, name) FIELD(T, name, F_BOOL, bool)
#define STR(T, name) FIELD(T, name, F_STR, char *)
#define TEXT(T, name) FIELD(T, name, F_TEXT, char *)
#define NONCE(T, name) FIELD(T, name, F_NONCE, nonce_t)
#define PROOF(T, name) FIELD(T, name, F_PROOF, proof_t)
#define ARRAY(T, name, cnt, kind, ctype, lo, hi, sub) \
    {#name, kind, TYPED_OFF(T, name, ctype), TYPED_OFF(T, cnt, uint32_t), lo, hi, sub, 0}
/* an optional list of names; flag: its "given" bool (a member of T) */
#define NAMEV(T, name, cnt, hi) \
    {#name, F_NAMEV, TYPED_OFF(T, name, char **), TYPED_OFF(T, cnt, uint32_t), 0, hi, NULL, 0}
#define NAMEV_FLAG(T, name, cnt, hi, flag) \
    {#name, F_NAMEV, TYPED_OFF(T, name, char **), TYPED_OFF(T, cnt, uint32_t), 0, hi, NULL, \
     TYPED_OFF(T, flag, bool)}
#define STRV(T, name, cnt, lo, hi) ARRAY(T, name, cnt, F_STRV, char **, lo, hi, NULL)
#define BYTES(T, name, cnt, hi) ARRAY(T, name, cnt, F_BYTES, uint8_t *, 0, hi, NULL)
#define U32V(T, name, cnt, lo, hi) ARRAY(T, name, cnt, F_U32V, uint32_t *, lo, hi, NULL)
/* ET: the element type, a typedef name (a type cannot be parenthesised) */
/* NOLINTNEXTLINE(bugprone-macro-parentheses) */
#define OBJV(T, name, cnt, ET, lo, hi, sub) ARRAY(T, name, cnt, F_OBJV, ET *, lo, hi, sub)
#define DESC(T, label, fields) {label, sizeof(T), fields, sizeof(fields) / sizeof((fields)[0])}
/* clang-format on */

/* one field per line: each table reads as the message it describes */
/* clang-format off */
static const field_t hello_f[] = {
    U32(dr_msg_hello_t, version),
    STR(dr_msg_hello_t, name),
    NONCE(dr_msg_hello_t, nonce),
    PROOF(dr_msg_hello_t, proof),
};
static const field_t challenge_f[] = {
    U32(dr_msg_challenge_t, version),
    NONCE(dr_msg_challenge_t, nonce),
};
static const field_t welcome_f[] = {
    NONCE(dr_msg_welcome_t, nonce),      U64(dr_msg_welcome_t, epoch),
    U32(dr_msg_welcome_t, heartbeat_ms), U32(dr_msg_welcome_t, lease_ms),
    STR(dr_msg_welcome_t, gpu_type),     U32(dr_msg_welcome_t, ngpus),
    U32(dr_msg_welcome_t, cpus),         U64(dr_msg_welcome_t, mem_mb),
};
static const field_t gpu_f[] = {
    U32(dr_msg_gpu_t, index), STR(dr_msg_gpu_t, name),   STR(dr_msg_gpu_t, uuid),
    STR(dr_msg_gpu_t, pci),   U64(dr_msg_gpu_t, mem_mb), I32(dr_msg_gpu_t, numa),
};
static const field_t held_f[] = {
    U64(dr_msg_held_t, job),      U32(dr_msg_held_t, gen),       U32(dr_msg_held_t, rank),
    BOOL(dr_msg_held_t, running), I32(dr_msg_held_t, exit_code), I32(dr_msg_held_t, signal),
    WHY(dr_msg_held_t, why),      I64(dr_msg_held_t, end_ns),
};
static const msgdesc_t gpu_d = DESC(dr_msg_gpu_t, "gpu", gpu_f);
static const msgdesc_t held_d = DESC(dr_msg_held_t, "held", held_f);
static const field_t register_f[] = {
    STR(dr_msg_register_t, source),
    OBJV(dr_msg_register_t, gpus, ngpus, dr_msg_gpu_t, 0, DR_MSG_MAX_GPUS, &gpu_d),
    U32(dr_msg_register_t, cpus),
    U64(dr_msg_register_t, mem_mb),
    U32(dr_msg_register_t, numa_nodes),
    STR(dr_msg_register_t, hostname),
    OBJV(dr_msg_register_t, held, nheld, dr_msg_held_t, 0, DR_MSG_MAX_JOBS, &held_d),
    NAMEV(dr_msg_register_t, shards, nshards, DR_MSG_MAX_SHARDS),
};
static const field_t heartbeat_f[] = {
    I64(dr_msg_heartbeat_t, now_ns),
    U32(dr_msg_heartbeat_t, running),
    NAMEV_FLAG(dr_msg_heartbeat_t, shards, nshards, DR_MSG_MAX_SHARDS, shards_given),
};
static const field_t launch_f[] = {
    U64(dr_msg_launch_t, job),
    U32(dr_msg_launch_t, gen),
    U64(dr_msg_launch_t, epoch),
    U32(dr_msg_launch_t, rank),
    U32(dr_msg_launch_t, nranks),
    STRV(dr_msg_launch_t, argv, argc, 1, DR_MSG_MAX_ARGS),
    TEXT(dr_msg_launch_t, script),
    STRV(dr_msg_launch_t, env, nenv, 0, DR_MSG_MAX_ARGS),
    STR(dr_msg_launch_t, cwd),
    STR(dr_msg_launch_t, out_path),
    STR(dr_msg_launch_t, err_path),
    U32(dr_msg_launch_t, uid),
    U32(dr_msg_launch_t, gid),
    U32V(dr_msg_launch_t, gpus, ngpus, 0, DR_MSG_MAX_GPUS),
    I64(dr_msg_launch_t, time_limit_ns),
    I64(dr_msg_launch_t, grace_ns),
    U32(dr_msg_launch_t, cpu_milli),
    U64(dr_msg_launch_t, mem_mb),
    U32(dr_msg_launch_t, port),
    TEXT(dr_msg_launch_t, ready),
    U32(dr_msg_launch_t, step),
    I32(dr_msg_launch_t, signal),
    U32(dr_msg_launch_t, signal_secs),
    BOOL(dr_msg_launch_t, signal_batch),
    I64(dr_msg_launch_t, ckpt_every_ns),
    I64(dr_msg_launch_t, ckpt_next_ns),
    TEXT(dr_msg_launch_t, ckpt_dir),
    BOOL(dr_msg_launch_t, allow_root),
};
static const field_t kill_f[] = {
    U64(dr_msg_kill_t, job),      U32(dr_msg_kill_t, gen),    I32(dr_msg_kill_t, signal),
    I64(dr_msg_kill_t, grace_ns), STR(dr_msg_kill_t, reason),
    U32(dr_msg_kill_t, step),
};
static const field_t job_state_f[] = {
    U64(dr_msg_job_state_t, job),    U32(dr_msg_job_state_t, gen),
    U32(dr_msg_job_state_t, rank),   BOOL(dr_msg_job_state_t, started),
    I32(dr_msg_job_state_t, pid),    I32(dr_msg_job_state_t, exit_code),
    I32(dr_msg_job_state_t, signal), WHY(dr_msg_job_state_t, why),
    I64(dr_msg_job_state_t, t_ns),   STR(dr_msg_job_state_t, detail),
    FIELD(dr_msg_job_state_t, ready, F_READY, uint8_t),
};
static const field_t ack_f[] = {
    U64(dr_msg_ack_t, job),
    U32(dr_msg_ack_t, gen),
    U32(dr_msg_ack_t, rank),
};
static const field_t reject_f[] = {
    STR(dr_msg_reject_t, reason),
};
static const field_t step_req_f[] = {
    U64(dr_msg_step_req_t, job),
    U32(dr_msg_step_req_t, gen),
    U64(dr_msg_step_req_t, req),
    STR(dr_msg_step_req_t, key),
    U32(dr_msg_step_req_t, uid),
    U32(dr_msg_step_req_t, ntasks),
    U32(dr_msg_step_req_t, nodes),
    U32(dr_msg_step_req_t, ntasks_per_node),
    U32(dr_msg_step_req_t, gpus_per_task),
    U32(dr_msg_step_req_t, cpus_per_task),
    BOOL(dr_msg_step_req_t, kill_on_bad_exit),
    STRV(dr_msg_step_req_t, argv, argc, 1, DR_MSG_MAX_ARGS),
    STRV(dr_msg_step_req_t, env, nenv, 0, DR_MSG_MAX_ARGS),
    STR(dr_msg_step_req_t, cwd),
    STR(dr_msg_step_req_t, out_path),
    STR(dr_msg_step_req_t, err_path),
};
static const field_t step_cancel_f[] = {
    U64(dr_msg_step_cancel_t, job),
    U32(dr_msg_step_cancel_t, gen),
    U64(dr_msg_step_cancel_t, req),
    I32(dr_msg_step_cancel_t, signal),
};
static const field_t step_state_f[] = {
    U64(dr_msg_step_state_t, job),
    U32(dr_msg_step_state_t, gen),
    U64(dr_msg_step_state_t, req),
    U32(dr_msg_step_state_t, state),
    U32(dr_msg_step_state_t, step),
    U32(dr_msg_step_state_t, ntasks),
    U32(dr_msg_step_state_t, nnodes),
    I32(dr_msg_step_state_t, status),
    STR(dr_msg_step_state_t, detail),
};
static const field_t signal_f[] = {
    U64(dr_msg_signal_t, job),
    U32(dr_msg_signal_t, gen),
    U32(dr_msg_signal_t, rank),
    I32(dr_msg_signal_t, signal),
    U32(dr_msg_signal_t, why),
    I64(dr_msg_signal_t, t_ns),
    TEXT(dr_msg_signal_t, ckpt_dir),
    U32(dr_msg_signal_t, uid),
    U32(dr_msg_signal_t, gid),
};

static const field_t lease_f[] = {
    U64(dr_msg_lease_t, seq),
};

static const field_t ckpt_f[] = {
    U64(dr_msg_ckpt_t, job),
    U32(dr_msg_ckpt_t, gen),
    U32(dr_msg_ckpt_t, rank),
    STR(dr_msg_ckpt_t, from),
    U64(dr_msg_ckpt_t, seq),
    STR(dr_msg_ckpt_t, error),
    STRV(dr_msg_ckpt_t, rejected, nrejected, 0, DR_MSG_MAX_CKPT_REJECTS),
    BOOL(dr_msg_ckpt_t, committed),
    I64(dr_msg_ckpt_t, created_ns),
};

static const field_t output_req_f[] = {
    U64(dr_msg_output_req_t, req),
    U64(dr_msg_output_req_t, job),
    STR(dr_msg_output_req_t, path),
    U32(dr_msg_output_req_t, uid),
    U32(dr_msg_output_req_t, gid),
    U64(dr_msg_output_req_t, offset),
    U32(dr_msg_output_req_t, limit),
};
static const field_t output_f[] = {
    U64(dr_msg_output_t, req),
    U32(dr_msg_output_t, status),
    STR(dr_msg_output_t, detail),
    BYTES(dr_msg_output_t, data, ndata, DR_MSG_MAX_OUTPUT),
    U64(dr_msg_output_t, size),
};

static const msgdesc_t hello_d = DESC(dr_msg_hello_t, "hello", hello_f);
static const msgdesc_t welcome_d = DESC(dr_msg_welcome_t, "welcome", welcome_f);
static const msgdesc_t register_d = DESC(dr_msg_register_t, "register", register_f);
static const msgdesc_t heartbeat_d = DESC(dr_msg_heartbeat_t, "heartbeat", heartbeat_f);
static const msgdesc_t launch_d = DESC(dr_msg_launch_t, "launch", launch_f);
static const msgdesc_t kill_d = DESC(dr_msg_kill_t, "kill", kill_f);
static const msgdesc_t job_state_d = DESC(dr_msg_job_state_t, "job_state", job_state_f);
static const msgdesc_t ack_d = DESC(dr_msg_ack_t, "ack", ack_f);
static const msgdesc_t reject_d = DESC(dr_msg_reject_t, "reject", reject_f);
static const msgdesc_t step_req_d = DESC(dr_msg_step_req_t, "step_req", step_req_f);
static const msgdesc_t step_cancel_d = DESC(dr_msg_step_cancel_t, "step_cancel", step_cancel_f);
static const msgdesc_t step_state_d = DESC(dr_msg_step_state_t, "step_state", step_state_f);
static const msgdesc_t signal_d = DESC(dr_msg_signal_t, "signal", signal_f);
static const msgdesc_t lease_d = DESC(dr_msg_lease_t, "lease", lease_f);
static const msgdesc_t ckpt_d = DESC(dr_msg_ckpt_t, "ckpt", ckpt_f);
static const msgdesc_t output_req_d = DESC(dr_msg_output_req_t, "output_req", output_req_f);
static const msgdesc_t output_d = DESC(dr_msg_output_t, "output", output_f);
static const msgdesc_t challenge_d = DESC(dr_msg_challenge_t, "challenge", challenge_f);
/* clang-format on */

/* ---- errors: "launch: argv[3]: not a string" ---- */

/* Where in the message a field is: the message name and any enclosing
 * array elements ("register: gpus[2]."), then the field name. */
typedef struct path {
    char s[128];
} path_t;

/* The path of an element's fields: "register: " + "gpus[2]" + ".".  Paths
 * are short (one level of nesting); a longer one would only be cut. */
static void path_sub(path_t *sp, const path_t *p, const char *ename)
{
    if (snprintf(sp->s, sizeof sp->s, "%s%s.", p->s, ename) >= (int)sizeof sp->s)
        sp->s[sizeof sp->s - 2] = '.';
}

static int ferr(dr_err_t *err, int code, const path_t *p, const char *fname, const char *fmt, ...)
    DR_PRINTF(5, 6);

static int ferr(dr_err_t *err, int code, const path_t *p, const char *fname, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return dr_err_set(err, code, "%s%s: %s", p->s, fname, what);
}

static int too_few(dr_err_t *err, const path_t *p, const field_t *f, size_t n)
{
    if (n == 0)
        return ferr(err, DR_EINVAL, p, f->name, "empty");
    return ferr(err, DR_EINVAL, p, f->name, "fewer than %u", f->min);
}

#define FP(m, f)    ((void *)((char *)(m) + (f)->off))
#define FCP(m, f)   ((const void *)((const char *)(m) + (f)->off))
#define FCNT(m, f)  ((uint32_t *)((char *)(m) + (f)->cnt))
#define FCCNT(m, f) (*(const uint32_t *)((const char *)(m) + (f)->cnt))

/* ---- free ---- */

static void obj_free(const msgdesc_t *d, void *m)
{
    for (size_t i = 0; i < d->nf; i++) {
        const field_t *f = &d->f[i];
        switch (f->kind) {
        case F_STR:
        case F_TEXT: free(*(char **)FP(m, f)); break;
        case F_STRV:
        case F_NAMEV: {
            char **v = *(char ***)FP(m, f);
            for (uint32_t k = 0; v && k < *FCNT(m, f); k++)
                free(v[k]);
            free(v);
            break;
        }
        case F_U32V: free(*(uint32_t **)FP(m, f)); break;
        case F_BYTES: free(*(uint8_t **)FP(m, f)); break;
        case F_OBJV: {
            char *v = *(char **)FP(m, f);
            for (uint32_t k = 0; v && k < *FCNT(m, f); k++)
                obj_free(f->sub, v + k * f->sub->size);
            free(v);
            break;
        }
        default: break;
        }
    }
    memset(m, 0, d->size);
}

/* ---- encode ---- */

static int enc_obj(const msgdesc_t *d, const void *m, const path_t *p, json_t **out, dr_err_t *err);

static int enc_strn(const char *s, size_t max, const path_t *p, const char *fname, json_t **out,
                    dr_err_t *err)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    if (n > max)
        return ferr(err, DR_EINVAL, p, fname, "longer than %zu bytes", max);
    *out = json_stringn(s, n);
    if (!*out)
        return ferr(err, DR_EINVAL, p, fname, "not valid UTF-8");
    return DR_OK;
}

static int enc_str(const char *s, const path_t *p, const char *fname, json_t **out, dr_err_t *err)
{
    return enc_strn(s, DR_MSG_MAX_STR, p, fname, out, err);
}

/* base64 (RFC 4648, padded): bytes in JSON without escaping each one */
static int enc_bytes(const field_t *f, const void *m, const path_t *p, json_t **out, dr_err_t *err)
{
    uint32_t n = FCCNT(m, f);
    const uint8_t *b = *(const uint8_t *const *)FCP(m, f);
    if (n > f->max)
        return ferr(err, DR_EINVAL, p, f->name, "more than %u bytes", f->max);
    if (n > 0 && !b)
        return ferr(err, DR_EINVAL, p, f->name, "NULL with %u bytes", n);
    char *s = malloc(4 * ((size_t)n / 3 + 1) + 1);
    if (!s)
        return dr_err_set(err, DR_ENOMEM, "%s%s: out of memory", p->s, f->name);
    int len = n ? EVP_EncodeBlock((unsigned char *)s, b, (int)n) : 0;
    *out = json_stringn(s, (size_t)len);
    free(s);
    return *out ? DR_OK : dr_err_set(err, DR_ENOMEM, "%s%s: out of memory", p->s, f->name);
}

static int enc_field(const field_t *f, const void *m, const path_t *p, json_t **out, dr_err_t *err)
{
    const void *v = FCP(m, f);
    *out = NULL;
    switch (f->kind) {
    case F_U32: *out = json_integer(*(const uint32_t *)v); break;
    case F_U64: {
        uint64_t x = *(const uint64_t *)v;
        if (x > (uint64_t)INT64_MAX)
            return ferr(err, DR_EINVAL, p, f->name, "above %lld", (long long)INT64_MAX);
        *out = json_integer((json_int_t)x);
        break;
    }
    case F_I32: *out = json_integer(*(const int32_t *)v); break;
    case F_I64: *out = json_integer(*(const int64_t *)v); break;
    case F_WHY: {
        uint8_t x = *(const uint8_t *)v;
        if (x >= DR_END_NWHY)
            return ferr(err, DR_EINVAL, p, f->name, "%u is not a dr_end_why_t", x);
        *out = json_integer(x);
        break;
    }
    case F_READY: {
        uint8_t x = *(const uint8_t *)v;
        if (x > DR_READY_NO)
            return ferr(err, DR_EINVAL, p, f->name, "%u is not a readiness", x);
        *out = json_integer(x);
        break;
    }
    case F_BOOL: *out = json_boolean(*(const bool *)v); break;
    case F_STR: return enc_str(*(char *const *)v, p, f->name, out, err);
    case F_TEXT: return enc_strn(*(char *const *)v, DR_MSG_MAX_TEXT, p, f->name, out, err);
    case F_NONCE:
    case F_PROOF: {
        static const char hex[] = "0123456789abcdef";
        const uint8_t *b = v;
        size_t n = f->kind == F_NONCE ? DR_PROTO_NONCE : DR_PROTO_PROOF;
        char s[2 * DR_PROTO_PROOF];
        for (size_t i = 0; i < n; i++) {
            s[2 * i] = hex[b[i] >> 4];
            s[2 * i + 1] = hex[b[i] & 15];
        }
        *out = json_stringn(s, 2 * n);
        break;
    }
    case F_BYTES: return enc_bytes(f, m, p, out, err);
    case F_STRV:
    case F_NAMEV:
    case F_U32V:
    case F_OBJV: {
        uint32_t n = FCCNT(m, f);
        const void *arr = *(const void *const *)v;
        if (n > f->max)
            return ferr(err, DR_EINVAL, p, f->name, "more than %u", f->max);
        if (n < f->min)
            return too_few(err, p, f, n);
        if (n > 0 && !arr)
            return ferr(err, DR_EINVAL, p, f->name, "NULL with %u elements", n);
        json_t *a = json_array();
        if (!a)
            return dr_err_set(err, DR_ENOMEM, "%s%s: out of memory", p->s, f->name);
        for (uint32_t k = 0; k < n; k++) {
            json_t *e = NULL;
            char ename[64];
            snprintf(ename, sizeof ename, "%s[%u]", f->name, k);
            int rc = DR_OK;
            if (f->kind == F_STRV) {
                rc = enc_str(((char *const *)arr)[k], p, ename, &e, err);
            } else if (f->kind == F_NAMEV) {
                rc = enc_strn(((char *const *)arr)[k], DR_MSG_MAX_SHARD_NAME, p, ename, &e, err);
            } else if (f->kind == F_U32V) {
                e = json_integer(((const uint32_t *)arr)[k]);
            } else {
                path_t sp;
                path_sub(&sp, p, ename);
                rc = enc_obj(f->sub, (const char *)arr + k * f->sub->size, &sp, &e, err);
            }
            if (rc == DR_OK && (!e || json_array_append_new(a, e) != 0))
                rc = dr_err_set(err, DR_ENOMEM, "%s%s: out of memory", p->s, ename);
            if (rc != DR_OK) {
                json_decref(a);
                return rc;
            }
        }
        *out = a;
        break;
    }
    }
    if (!*out)
        return dr_err_set(err, DR_ENOMEM, "%s%s: out of memory", p->s, f->name);
    return DR_OK;
}

static int enc_obj(const msgdesc_t *d, const void *m, const path_t *p, json_t **out, dr_err_t *err)
{
    json_t *o = json_object();
    if (!o)
        return dr_err_set(err, DR_ENOMEM, "%s: out of memory", d->name);
    for (size_t i = 0; i < d->nf; i++) {
        json_t *v;
        if (d->f[i].kind == F_TEXT && !*(char *const *)FCP(m, &d->f[i]))
            continue; /* optional and absent */
        if (d->f[i].kind == F_NAMEV && FCCNT(m, &d->f[i]) == 0 &&
            !(d->f[i].flag && *(const bool *)((const char *)m + d->f[i].flag)))
            continue; /* optional, empty and not said to be given */
        int rc = enc_field(&d->f[i], m, p, &v, err);
        if (rc == DR_OK && json_object_set_new(o, d->f[i].name, v) != 0)
            rc = dr_err_set(err, DR_ENOMEM, "%s%s: out of memory", p->s, d->f[i].name);
        if (rc != DR_OK) {
            json_decref(o);
            return rc;
        }
    }
    *out = o;
    return DR_OK;
}

static int msg_encode(const msgdesc_t *d, const void *m, char **json, size_t *len, dr_err_t *err)
{
    *json = NULL;
    *len = 0;
    path_t p;
    snprintf(p.s, sizeof p.s, "%s: ", d->name);
    json_t *o = NULL;
    int rc = enc_obj(d, m, &p, &o, err);
    if (rc != DR_OK || !o)
        return rc != DR_OK ? rc : dr_err_set(err, DR_ENOMEM, "%s: out of memory", d->name);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!s)
        return dr_err_set(err, DR_ENOMEM, "%s: out of memory", d->name);
    *json = s;
    *len = strlen(s);
    return DR_OK;
}

/* ---- parse ---- */

static int parse_obj(const msgdesc_t *d, void *m, json_t *o, const path_t *p, dr_err_t *err);

/* An integer in [lo, hi]; names the field otherwise. */
static int get_int(json_t *v, long long lo, long long hi, const path_t *p, const char *fname,
                   long long *out, dr_err_t *err)
{
    if (!json_is_integer(v))
        return ferr(err, DR_EINVAL, p, fname, "not an integer");
    long long x = json_integer_value(v);
    if (x < lo || x > hi)
        return ferr(err, DR_EINVAL, p, fname, "%lld out of range [%lld, %lld]", x, lo, hi);
    *out = x;
    return DR_OK;
}

static int get_strn(json_t *v, size_t max, const path_t *p, const char *fname, char **out,
                    dr_err_t *err)
{
    if (!json_is_string(v))
        return ferr(err, DR_EINVAL, p, fname, "not a string");
    size_t n = json_string_length(v);
    const char *s = json_string_value(v);
    if (n > max)
        return ferr(err, DR_EINVAL, p, fname, "longer than %zu bytes", max);
    if (memchr(s, '\0', n))
        return ferr(err, DR_EINVAL, p, fname, "contains a NUL byte");
    char *c = malloc(n + 1);
    if (!c)
        return dr_err_set(err, DR_ENOMEM, "%s%s: out of memory", p->s, fname);
    memcpy(c, s, n + 1);
    *out = c;
    return DR_OK;
}

static int get_str(json_t *v, const path_t *p, const char *fname, char **out, dr_err_t *err)
{
    return get_strn(v, DR_MSG_MAX_STR, p, fname, out, err);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int parse_array(const field_t *f, void *m, json_t *v, const path_t *p, dr_err_t *err)
{
    if (!json_is_array(v))
        return ferr(err, DR_EINVAL, p, f->name, "not an array");
    size_t n = json_array_size(v);
    if (n > f->max)
        return ferr(err, DR_EINVAL, p, f->name, "more than %u", f->max);
    if (n < f->min)
        return too_few(err, p, f, n);
    if (n == 0)
        return DR_OK;
    size_t esz = f->kind == F_STRV || f->kind == F_NAMEV ? sizeof(char *)
                 : f->kind == F_U32V                     ? sizeof(uint32_t)
                                                         : f->sub->size;
    char *arr = calloc(n, esz);
    if (!arr)
        return dr_err_set(err, DR_ENOMEM, "%s%s: out of memory", p->s, f->name);
    /* The count is set before the elements are filled so that obj_free
     * releases a half-parsed array (zeroed elements own nothing). */
    *(void **)FP(m, f) = arr;
    *FCNT(m, f) = (uint32_t)n;
    for (size_t k = 0; k < n; k++) {
        json_t *e = json_array_get(v, k);
        char ename[64];
        snprintf(ename, sizeof ename, "%s[%zu]", f->name, k);
        int rc;
        if (f->kind == F_STRV) {
            rc = get_str(e, p, ename, (char **)arr + k, err);
        } else if (f->kind == F_NAMEV) {
            rc = get_strn(e, DR_MSG_MAX_SHARD_NAME, p, ename, (char **)arr + k, err);
        } else if (f->kind == F_U32V) {
            long long x = 0;
            rc = get_int(e, 0, UINT32_MAX, p, ename, &x, err);
            if (rc == DR_OK)
                ((uint32_t *)arr)[k] = (uint32_t)x;
        } else {
            path_t sp;
            path_sub(&sp, p, ename);
            rc = json_is_object(e) ? parse_obj(f->sub, arr + k * esz, e, &sp, err)
                                   : ferr(err, DR_EINVAL, p, ename, "not an object");
        }
        if (rc != DR_OK)
            return rc;
    }
    return DR_OK;
}

static bool b64_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
}

/* Strict base64: whole quads of the alphabet, '=' only as the last one or
 * two characters, at most f->max bytes once decoded. */
static int parse_bytes(const field_t *f, void *m, json_t *v, const path_t *p, dr_err_t *err)
{
    if (!json_is_string(v))
        return ferr(err, DR_EINVAL, p, f->name, "not a string");
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (n % 4 != 0)
        return ferr(err, DR_EINVAL, p, f->name, "not base64 (%zu characters)", n);
    if (n / 4 * 3 > (size_t)f->max + 2)
        return ferr(err, DR_EINVAL, p, f->name, "more than %u bytes", f->max);
    size_t pad = n && s[n - 1] == '=' ? (s[n - 2] == '=' ? 2 : 1) : 0;
    for (size_t i = 0; i < n - pad; i++)
        if (!b64_char(s[i]))
            return ferr(err, DR_EINVAL, p, f->name, "not base64 (character %zu)", i);
    size_t bytes = n / 4 * 3 - pad;
    if (bytes > f->max)
        return ferr(err, DR_EINVAL, p, f->name, "more than %u bytes", f->max);
    if (n == 0)
        return DR_OK;
    uint8_t *b = malloc(n / 4 * 3);
    if (!b)
        return dr_err_set(err, DR_ENOMEM, "%s%s: out of memory", p->s, f->name);
    if (EVP_DecodeBlock(b, (const unsigned char *)s, (int)n) != (int)(n / 4 * 3)) {
        free(b);
        return ferr(err, DR_EINVAL, p, f->name, "not base64");
    }
    *(uint8_t **)FP(m, f) = b;
    *FCNT(m, f) = (uint32_t)bytes;
    return DR_OK;
}

static int parse_field(const field_t *f, void *m, json_t *v, const path_t *p, dr_err_t *err)
{
    void *dst = FP(m, f);
    long long x = 0;
    int rc;
    switch (f->kind) {
    case F_U32:
        if ((rc = get_int(v, 0, UINT32_MAX, p, f->name, &x, err)) == DR_OK)
            *(uint32_t *)dst = (uint32_t)x;
        return rc;
    case F_U64:
        if ((rc = get_int(v, 0, INT64_MAX, p, f->name, &x, err)) == DR_OK)
            *(uint64_t *)dst = (uint64_t)x;
        return rc;
    case F_I32:
        if ((rc = get_int(v, INT32_MIN, INT32_MAX, p, f->name, &x, err)) == DR_OK)
            *(int32_t *)dst = (int32_t)x;
        return rc;
    case F_I64:
        if ((rc = get_int(v, INT64_MIN, INT64_MAX, p, f->name, &x, err)) == DR_OK)
            *(int64_t *)dst = (int64_t)x;
        return rc;
    case F_WHY:
        if ((rc = get_int(v, 0, DR_END_NWHY - 1, p, f->name, &x, err)) == DR_OK)
            *(uint8_t *)dst = (uint8_t)x;
        return rc;
    case F_READY:
        if ((rc = get_int(v, 0, DR_READY_NO, p, f->name, &x, err)) == DR_OK)
            *(uint8_t *)dst = (uint8_t)x;
        return rc;
    case F_BOOL:
        if (!json_is_boolean(v))
            return ferr(err, DR_EINVAL, p, f->name, "not a boolean");
        *(bool *)dst = json_is_true(v);
        return DR_OK;
    case F_STR: return get_str(v, p, f->name, (char **)dst, err);
    case F_TEXT: return get_strn(v, DR_MSG_MAX_TEXT, p, f->name, (char **)dst, err);
    case F_NONCE:
    case F_PROOF: {
        const char *s = json_string_value(v);
        size_t n = f->kind == F_NONCE ? DR_PROTO_NONCE : DR_PROTO_PROOF;
        if (!s || json_string_length(v) != 2 * n)
            return ferr(err, DR_EINVAL, p, f->name, "not %zu hex digits", 2 * n);
        uint8_t *b = dst;
        for (size_t i = 0; i < n; i++) {
            int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
            if (hi < 0 || lo < 0)
                return ferr(err, DR_EINVAL, p, f->name, "not %zu hex digits", 2 * n);
            b[i] = (uint8_t)(hi << 4 | lo);
        }
        return DR_OK;
    }
    case F_NAMEV:
        if (f->flag)
            *(bool *)((char *)m + f->flag) = true;
        return parse_array(f, m, v, p, err);
    case F_STRV:
    case F_U32V:
    case F_OBJV: return parse_array(f, m, v, p, err);
    case F_BYTES: return parse_bytes(f, m, v, p, err);
    }
    return ferr(err, DR_EINVAL, p, f->name, "unknown field kind");
}

static int parse_obj(const msgdesc_t *d, void *m, json_t *o, const path_t *p, dr_err_t *err)
{
    for (size_t i = 0; i < d->nf; i++) {
        json_t *v = json_object_get(o, d->f[i].name);
        if ((!v || json_is_null(v)) && (d->f[i].kind == F_TEXT || d->f[i].kind == F_NAMEV))
            continue; /* optional */
        if (!v)
            return ferr(err, DR_EINVAL, p, d->f[i].name, "missing");
        int rc = parse_field(&d->f[i], m, v, p, err);
        if (rc != DR_OK)
            return rc;
    }
    return DR_OK;
}

static int msg_parse(const msgdesc_t *d, void *m, const char *body, size_t len, dr_err_t *err)
{
    memset(m, 0, d->size);
    if (len > DR_PROTO_MAX_BODY)
        return dr_err_set(err, DR_ELIMIT, "%s: body of %zu bytes exceeds %u", d->name, len,
                          DR_PROTO_MAX_BODY);
    /* json_loadb: exactly len bytes (trailing garbage is an error), an
     * object or array at the top, nesting bounded by jansson's parser
     * (JSON_PARSER_MAX_DEPTH); a key given twice is ambiguous, so refused. */
    json_error_t je;
    json_t *o = json_loadb(body ? body : "", body ? len : 0, JSON_REJECT_DUPLICATES, &je);
    if (!o)
        return dr_err_set(err, DR_EINVAL, "%s: invalid JSON at byte %d: %s", d->name, je.position,
                          je.text);
    int rc;
    if (!json_is_object(o)) {
        rc = dr_err_set(err, DR_EINVAL, "%s: not a JSON object", d->name);
    } else {
        path_t p;
        snprintf(p.s, sizeof p.s, "%s: ", d->name);
        rc = parse_obj(d, m, o, &p, err);
    }
    json_decref(o);
    if (rc != DR_OK)
        obj_free(d, m);
    return rc;
}

#define MSG_DEFINE(name)                                                                           \
    int dr_msg_##name##_encode(const dr_msg_##name##_t *m, char **json, size_t *len,               \
                               dr_err_t *err)                                                      \
    {                                                                                              \
        return msg_encode(&name##_d, m, json, len, err);                                           \
    }                                                                                              \
    int dr_msg_##name##_parse(dr_msg_##name##_t *m, const char *body, size_t len, dr_err_t *err)   \
    {                                                                                              \
        return msg_parse(&name##_d, m, body, len, err);                                            \
    }                                                                                              \
    void dr_msg_##name##_free(dr_msg_##name##_t *m)                                                \
    {                                                                                              \
        obj_free(&name##_d, m);                                                                    \
    }
MSG_DEFINE(hello)
MSG_DEFINE(welcome)
MSG_DEFINE(register)
MSG_DEFINE(heartbeat)
MSG_DEFINE(launch)
MSG_DEFINE(kill)
MSG_DEFINE(job_state)
MSG_DEFINE(ack)
MSG_DEFINE(reject)
MSG_DEFINE(step_req)
MSG_DEFINE(step_cancel)
MSG_DEFINE(step_state)
MSG_DEFINE(signal)
MSG_DEFINE(lease)
MSG_DEFINE(ckpt)
MSG_DEFINE(output_req)
MSG_DEFINE(output)
MSG_DEFINE(challenge)

static const msgdesc_t *desc_of(int type)
{
    switch (type) {
    case DR_MSG_HELLO: return &hello_d;
    case DR_MSG_WELCOME: return &welcome_d;
    case DR_MSG_REGISTER: return &register_d;
    case DR_MSG_HEARTBEAT: return &heartbeat_d;
    case DR_MSG_LAUNCH: return &launch_d;
    case DR_MSG_KILL: return &kill_d;
    case DR_MSG_JOB_STATE: return &job_state_d;
    case DR_MSG_ACK: return &ack_d;
    case DR_MSG_REJECT: return &reject_d;
    case DR_MSG_STEP_REQ: return &step_req_d;
    case DR_MSG_STEP_CANCEL: return &step_cancel_d;
    case DR_MSG_STEP_STATE: return &step_state_d;
    case DR_MSG_SIGNAL:
    case DR_MSG_SIGNALED: return &signal_d; /* one body, two directions */
    case DR_MSG_LEASE: return &lease_d;
    case DR_MSG_CKPT: return &ckpt_d;
    case DR_MSG_OUTPUT_REQ: return &output_req_d;
    case DR_MSG_OUTPUT: return &output_d;
    case DR_MSG_CHALLENGE: return &challenge_d;
    default: return NULL;
    }
}

int dr_proto_send_msg(dr_proto_session_t *s, int type, const void *m, uint8_t **out, size_t *outlen,
                      dr_err_t *err)
{
    *out = NULL;
    *outlen = 0;
    const msgdesc_t *d = desc_of(type);
    if (!d)
        return dr_err_set(err, DR_EINVAL, "frame: unknown message type %d", type);
    char *json;
    size_t len;
    int rc = msg_encode(d, m, &json, &len, err);
    if (rc != DR_OK)
        return rc;
    rc = dr_proto_encode(s, type, json, len, out, outlen, err);
    free(json);
    return rc;
}

/* ---- the local step socket ---- */

static bool local_type(int type)
{
    return type == DR_MSG_STEP_REQ || type == DR_MSG_STEP_CANCEL || type == DR_MSG_STEP_STATE;
}

int dr_proto_local_encode(int type, const void *m, uint8_t **out, size_t *outlen, dr_err_t *err)
{
    *out = NULL;
    *outlen = 0;
    if (!local_type(type))
        return dr_err_set(err, DR_EINVAL, "local frame: %s is not a step message",
                          dr_msg_type_name(type));
    char *json;
    size_t len;
    int rc = msg_encode(desc_of(type), m, &json, &len, err);
    if (rc != DR_OK || !json)
        return rc != DR_OK ? rc : dr_err_set(err, DR_ENOMEM, "local frame: out of memory");
    if (len > DR_PROTO_MAX_BODY) {
        free(json);
        return dr_err_set(err, DR_ELIMIT, "local frame: %s of %zu bytes exceeds %u",
                          dr_msg_type_name(type), len, DR_PROTO_MAX_BODY);
    }
    uint8_t *b = malloc(DR_PROTO_LOCAL_HDR + len);
    if (!b) {
        free(json);
        return dr_err_set(err, DR_ENOMEM, "local frame: out of memory");
    }
    b[0] = (uint8_t)(len >> 24);
    b[1] = (uint8_t)(len >> 16);
    b[2] = (uint8_t)(len >> 8);
    b[3] = (uint8_t)len;
    b[4] = (uint8_t)type;
    memcpy(b + DR_PROTO_LOCAL_HDR, json, len);
    free(json);
    *out = b;
    *outlen = DR_PROTO_LOCAL_HDR + len;
    return DR_OK;
}

dr_proto_rc_t dr_proto_local_decode(const uint8_t *buf, size_t len, size_t *used, dr_frame_t *f,
                                    dr_err_t *err)
{
    *used = 0;
    /* the type is checked as soon as it has arrived: garbage is refused early */
    if (len > 4 && !local_type(buf[4])) {
        dr_err_set(err, DR_EINVAL, "local frame: type %u is not a step message", buf[4]);
        return DR_PROTO_FATAL;
    }
    if (len < DR_PROTO_LOCAL_HDR)
        return DR_PROTO_NEED;
    uint32_t blen =
        (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | (uint32_t)buf[3];
    if (blen > DR_PROTO_MAX_BODY) {
        dr_err_set(err, DR_ELIMIT, "local frame: body of %u bytes exceeds %u", blen,
                   DR_PROTO_MAX_BODY);
        return DR_PROTO_FATAL;
    }
    if (len - DR_PROTO_LOCAL_HDR < blen)
        return DR_PROTO_NEED;
    f->type = buf[4];
    f->seq = 0;
    f->body = (const char *)buf + DR_PROTO_LOCAL_HDR;
    f->len = blen;
    *used = DR_PROTO_LOCAL_HDR + (size_t)blen;
    return DR_PROTO_FRAME;
}
