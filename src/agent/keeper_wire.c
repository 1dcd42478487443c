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
    case DR_KEEP_SPAWN: return 1; /* its plan: dr_keep_plan_unpack */
    default: return 0;
    }
}

int dr_keep_encode(const dr_keep_msg_t *m, uint8_t **out, size_t *outlen)
{
    size_t n = fixed_len(m->type);
    if (m->type == DR_KEEP_FAILED)
        n += m->text_len;
    else if (m->type == DR_KEEP_SPAWN)
        n = m->text_len;
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
    case DR_KEEP_SPAWN:
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
    if (type < DR_KEEP_STARTED || type > DR_KEEP_SPAWN)
        return bad(err, type, "unknown type");
    size_t fixed = fixed_len(type);
    size_t max = type == DR_KEEP_ADOPT || type == DR_KEEP_SPAWN ? DR_KEEP_MAX_BODY
                 : type == DR_KEEP_FAILED                       ? DR_KEEP_MAX_DETAIL
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
    case DR_KEEP_SPAWN:
        m->text = (const char *)p;
        m->text_len = n;
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

/* ---- SPAWN: a rank's plan, from the agent to a keeper ----
 *
 * u64 job, u32 gen, u32 rank, u32 uid, u32 gid, i64 grace_ns, u8
 * change_ids, u32 ngroups, u32 argc, u32 nenv, u32 json_len, the groups
 * (u32 each), then NUL-ended strings: cwd, out, err, cgroup, argv0, argv[],
 * envp[]; then the LAUNCH's JSON (what a later agent takes the rank over
 * from). */
#define PLAN_FIXED   (8 + 4 * 4 + 8 + 1 + 4 * 4)
#define PLAN_MAX_GRP 65536

static size_t str_size(const char *s)
{
    return (s ? strlen(s) : 0) + 1;
}

static void put_str(uint8_t **p, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n)
        memcpy(*p, s, n);
    (*p)[n] = '\0';
    *p += n + 1;
}

int dr_keep_plan_pack(const dr_agent_plan_t *pl, uint8_t **out, size_t *outlen)
{
    size_t argc = 0, nenv = 0, n = PLAN_FIXED + (size_t)pl->ngroups * 4 + pl->json_len;
    const char *fixed[] = {pl->cwd, pl->out, pl->err, pl->cgroup, pl->argv0};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        n += str_size(fixed[i]);
    for (; pl->argv[argc]; argc++)
        n += str_size(pl->argv[argc]);
    for (; pl->envp[nenv]; nenv++)
        n += str_size(pl->envp[nenv]);
    if (n > DR_KEEP_MAX_BODY)
        return DR_ELIMIT;
    uint8_t *b = malloc(DR_KEEP_HDR + n);
    if (!b)
        return DR_ENOMEM;
    put_u32be(b, (uint32_t)n);
    b[4] = DR_KEEP_SPAWN;
    uint8_t *p = b + DR_KEEP_HDR;
    put_le(&p, pl->job, 8);
    put_le(&p, pl->gen, 4);
    put_le(&p, pl->rank, 4);
    put_le(&p, pl->uid, 4);
    put_le(&p, pl->gid, 4);
    put_le(&p, (uint64_t)pl->grace_ns, 8);
    put_le(&p, pl->change_ids, 1);
    put_le(&p, pl->ngroups, 4);
    put_le(&p, argc, 4);
    put_le(&p, nenv, 4);
    put_le(&p, pl->json_len, 4);
    for (uint32_t i = 0; i < pl->ngroups; i++)
        put_le(&p, pl->groups[i], 4);
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        put_str(&p, fixed[i]);
    for (size_t i = 0; i < argc; i++)
        put_str(&p, pl->argv[i]);
    for (size_t i = 0; i < nenv; i++)
        put_str(&p, pl->envp[i]);
    if (pl->json_len)
        memcpy(p, pl->json, pl->json_len);
    *out = b;
    *outlen = DR_KEEP_HDR + n;
    return 0;
}

/* The next NUL-ended string at *p (before end), or NULL. */
static const char *take_str(const uint8_t **p, const uint8_t *end)
{
    if (*p >= end)
        return NULL;
    const uint8_t *z = memchr(*p, '\0', (size_t)(end - *p));
    if (!z)
        return NULL;
    const char *s = (const char *)*p;
    *p = z + 1;
    return s;
}

void dr_keep_plan_free(dr_agent_plan_t *pl)
{
    free(pl->groups);
    free(pl->argv);
    free(pl->envp);
    free(pl->buf);
    memset(pl, 0, sizeof *pl);
}

int dr_keep_plan_unpack(const char *body, size_t n, dr_agent_plan_t *pl, dr_err_t *err)
{
    memset(pl, 0, sizeof *pl);
    if (n < PLAN_FIXED)
        return dr_err_set(err, DR_EINVAL, "spawn plan: %zu bytes, fewer than its fixed part", n);
    pl->buf = malloc(n);
    if (!pl->buf)
        return dr_err_set(err, DR_ENOMEM, "spawn plan: out of memory");
    memcpy(pl->buf, body, n);
    const uint8_t *p = pl->buf, *end = pl->buf + n;
    pl->job = get_le(&p, 8);
    pl->gen = (uint32_t)get_le(&p, 4);
    pl->rank = (uint32_t)get_le(&p, 4);
    pl->uid = (uint32_t)get_le(&p, 4);
    pl->gid = (uint32_t)get_le(&p, 4);
    pl->grace_ns = (int64_t)get_le(&p, 8);
    uint64_t ch = get_le(&p, 1);
    pl->ngroups = (uint32_t)get_le(&p, 4);
    uint64_t argc = get_le(&p, 4), nenv = get_le(&p, 4);
    pl->json_len = (size_t)get_le(&p, 4);
    const char *why = NULL;
    if (ch > 1)
        why = "change_ids is not 0 or 1";
    else if (pl->grace_ns < 0)
        why = "negative grace";
    else if (pl->ngroups > PLAN_MAX_GRP || (size_t)pl->ngroups * 4 > (size_t)(end - p))
        why = "groups overrun the plan";
    else if (argc < 1 || argc > (size_t)(end - p) || nenv > (size_t)(end - p))
        why = "argv/env counts out of range";
    else if (pl->json_len > (size_t)(end - p) - (size_t)pl->ngroups * 4)
        why = "LAUNCH overruns the plan";
    if (why) {
        dr_keep_plan_free(pl);
        return dr_err_set(err, DR_EINVAL, "spawn plan: %s", why);
    }
    pl->change_ids = ch == 1;
    pl->groups = calloc(pl->ngroups ? pl->ngroups : 1, sizeof *pl->groups);
    pl->argv = calloc((size_t)argc + 1, sizeof *pl->argv);
    pl->envp = calloc((size_t)nenv + 1, sizeof *pl->envp);
    if (!pl->groups || !pl->argv || !pl->envp) {
        dr_keep_plan_free(pl);
        return dr_err_set(err, DR_ENOMEM, "spawn plan: out of memory");
    }
    for (uint32_t i = 0; i < pl->ngroups; i++)
        pl->groups[i] = (uint32_t)get_le(&p, 4);
    const uint8_t *strend = end - pl->json_len;
    const char **fixed[] = {&pl->cwd, &pl->out, &pl->err, &pl->cgroup, &pl->argv0};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] && !why; i++)
        if (!(*fixed[i] = take_str(&p, strend)))
            why = "a path is not NUL-ended";
    for (size_t i = 0; i < argc && !why; i++)
        if (!(pl->argv[i] = (char *)take_str(&p, strend)))
            why = "argv is not NUL-ended";
    for (size_t i = 0; i < nenv && !why; i++)
        if (!(pl->envp[i] = (char *)take_str(&p, strend)))
            why = "env is not NUL-ended";
    if (!why && p != strend)
        why = "bytes between the strings and the LAUNCH";
    else if (!why && !pl->argv[0][0])
        why = "empty argv[0]";
    if (why) {
        dr_keep_plan_free(pl);
        return dr_err_set(err, DR_EINVAL, "spawn plan: %s", why);
    }
    pl->json = (const char *)strend;
    return 0;
}
