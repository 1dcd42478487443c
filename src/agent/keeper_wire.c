/* keeper_wire.c - the frames between the agent and a rank's keeper.
 *
 * A keeper (keeper.c) is the small process that holds one running rank:
 * it is the rank's parent, so it reaps it, and it outlives the agent, so
 * that a restarted agent can take the rank over.  They talk over a Unix
 * stream socket: a socketpair made at the launch, or, after the agent went
 * away, the socket the keeper listens on in the agent's state directory.
 * A frame is [4-byte big-endian body length][1-byte type][body]; bodies
 * are fixed little-endian fields, and an ADOPT ends with the rank's LAUNCH
 * as the link's JSON (parsed by the link's strict parser).  Both ends are
 * the same program, but a keeper's socket file is reachable by whoever can
 * reach the state directory, so the decoder trusts nothing: a wrong type,
 * length or field is an error that closes the connection. */
#include "agent/agent.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void put_u32be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put_le(uint8_t **p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        (*p)[i] = (uint8_t)(v >> (8 * i));
    *p += n;
}

static uint64_t get_le(const uint8_t **p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)(*p)[i] << (8 * i);
    *p += n;
    return v;
}

/* The fixed part of each body (ADOPT, FAILED: at least). */
static size_t fixed_len(int type)
{
    switch (type) {
    case DR_KEEP_STARTED: return 24;
    case DR_KEEP_FAILED: return 0;
    case DR_KEEP_ENDED: return 16;
    case DR_KEEP_SIGNAL: return 5;
    case DR_KEEP_RELEASE: return 0;
    case DR_KEEP_ADOPT: return 24 + 1 + 4 + 4 + 8 + 1 + 4 + 2;
    default: return 0;
    }
}

int dr_keep_encode(const dr_keep_msg_t *m, uint8_t **out, size_t *outlen)
{
    size_t n = fixed_len(m->type);
    if (m->type == DR_KEEP_FAILED)
        n += m->text_len;
    else if (m->type == DR_KEEP_ADOPT)
        n += m->cgroup_len + m->text_len;
    uint8_t *b = malloc(DR_KEEP_HDR + n);
    if (!b)
        return DR_ENOMEM;
    put_u32be(b, (uint32_t)n);
    b[4] = m->type;
    uint8_t *p = b + DR_KEEP_HDR;
    switch (m->type) {
    case DR_KEEP_STARTED:
        put_le(&p, (uint64_t)m->pid, 8);
        put_le(&p, (uint64_t)m->start_ns, 8);
        put_le(&p, (uint64_t)m->start_boot_ns, 8);
        break;
    case DR_KEEP_FAILED:
        if (m->text_len)
            memcpy(p, m->text, m->text_len);
        break;
    case DR_KEEP_ENDED:
        put_le(&p, (uint32_t)m->exit_code, 4);
        put_le(&p, (uint32_t)m->signal, 4);
        put_le(&p, (uint64_t)m->end_ns, 8);
        break;
    case DR_KEEP_SIGNAL:
        put_le(&p, (uint32_t)m->sig, 4);
        put_le(&p, m->group, 1);
        break;
    case DR_KEEP_ADOPT:
        put_le(&p, (uint64_t)m->pid, 8);
        put_le(&p, (uint64_t)m->start_ns, 8);
        put_le(&p, (uint64_t)m->start_boot_ns, 8);
        put_le(&p, m->ended, 1);
        put_le(&p, (uint32_t)m->exit_code, 4);
        put_le(&p, (uint32_t)m->signal, 4);
        put_le(&p, (uint64_t)m->end_ns, 8);
        put_le(&p, m->why, 1);
        put_le(&p, m->uid, 4);
        put_le(&p, m->cgroup_len, 2);
        if (m->cgroup_len)
            memcpy(p, m->cgroup, m->cgroup_len);
        p += m->cgroup_len;
        memcpy(p, m->text, m->text_len);
        break;
    default: break;
    }
    *out = b;
    *outlen = DR_KEEP_HDR + n;
    return 0;
}

static int bad(dr_err_t *err, int type, const char *what)
{
    dr_err_set(err, DR_EINVAL, "keeper frame (type %d): %s", type, what);
    return -1;
}

int dr_keep_decode(const uint8_t *buf, size_t len, size_t *used, dr_keep_msg_t *m, dr_err_t *err)
{
    if (len < DR_KEEP_HDR)
        return 0;
    size_t n = (size_t)buf[0] << 24 | (size_t)buf[1] << 16 | (size_t)buf[2] << 8 | buf[3];
    int type = buf[4];
    if (type < DR_KEEP_STARTED || type > DR_KEEP_ADOPT)
        return bad(err, type, "unknown type");
    size_t fixed = fixed_len(type);
    size_t max = type == DR_KEEP_ADOPT    ? DR_KEEP_MAX_BODY
                 : type == DR_KEEP_FAILED ? DR_KEEP_MAX_DETAIL
                                          : fixed;
    if (n < fixed || n > max || (type == DR_KEEP_ADOPT && n == fixed))
        return bad(err, type, "wrong length");
    if (len < DR_KEEP_HDR + n)
        return 0;
    memset(m, 0, sizeof *m);
    m->type = (uint8_t)type;
    const uint8_t *p = buf + DR_KEEP_HDR, *end = p + n;
    switch (type) {
    case DR_KEEP_STARTED:
    case DR_KEEP_ADOPT:
        m->pid = (int64_t)get_le(&p, 8);
        m->start_ns = (int64_t)get_le(&p, 8);
        m->start_boot_ns = (int64_t)get_le(&p, 8);
        if (m->pid <= 0 || m->pid > INT32_MAX)
            return bad(err, type, "pid out of range");
        if (m->start_boot_ns < 0)
            return bad(err, type, "negative start time");
        if (type == DR_KEEP_STARTED)
            break;
        {
            uint64_t ended = get_le(&p, 1);
            m->exit_code = (int32_t)get_le(&p, 4);
            m->signal = (int32_t)get_le(&p, 4);
            m->end_ns = (int64_t)get_le(&p, 8);
            uint64_t why = get_le(&p, 1);
            m->uid = (uint32_t)get_le(&p, 4);
            m->cgroup_len = (size_t)get_le(&p, 2);
            if (ended > 1)
                return bad(err, type, "ended is not 0 or 1");
            m->ended = ended == 1;
            if (why >= DR_END_NWHY)
                return bad(err, type, "unknown end cause");
            m->why = (uint8_t)why;
            if (m->signal < 0 || m->signal >= NSIG)
                return bad(err, type, "signal out of range");
            if (m->cgroup_len >= PATH_MAX || m->cgroup_len >= (size_t)(end - p))
                return bad(err, type, "cgroup path overruns the frame");
            m->cgroup = (const char *)p;
            if (memchr(p, '\0', m->cgroup_len))
                return bad(err, type, "NUL in the cgroup path");
            p += m->cgroup_len;
            m->text = (const char *)p;
            m->text_len = (size_t)(end - p);
        }
        break;
    case DR_KEEP_FAILED:
        m->text = (const char *)p;
        m->text_len = n;
        if (memchr(p, '\0', n))
            return bad(err, type, "NUL in the detail");
        break;
    case DR_KEEP_ENDED:
        m->exit_code = (int32_t)get_le(&p, 4);
        m->signal = (int32_t)get_le(&p, 4);
        m->end_ns = (int64_t)get_le(&p, 8);
        if (m->signal < 0 || m->signal >= NSIG)
            return bad(err, type, "signal out of range");
        break;
    case DR_KEEP_SIGNAL: {
        m->sig = (int32_t)get_le(&p, 4);
        uint64_t g = get_le(&p, 1);
        if (m->sig <= 0 || m->sig >= NSIG)
            return bad(err, type, "signal out of range");
        if (g > 1)
            return bad(err, type, "group is not 0 or 1");
        m->group = g == 1;
        break;
    }
    default: break;
    }
    *used = DR_KEEP_HDR + n;
    return 1;
}
