/* output.c - `drover logs` on the node that ran the job: read part of a
 * job's output file for the controller (OUTPUT_REQ -> OUTPUT).
 *
 * The path is one a user named (-o, -e), so the agent, root, never opens
 * it itself: a child becomes the job's user (uid, gid and that user's
 * groups) and opens it with O_NOFOLLOW | O_NONBLOCK, regular files only,
 * reading at most the asked bytes.  What the job's user could not read,
 * this cannot either: /etc/shadow, another user's output, a symbolic link
 * to either.  A FIFO or a device is refused after the non-blocking open, so
 * nothing a user plants can make a read wait; the child is killed after
 * OUTPUT_TIMEOUT_S anyway (a hung network file system), and at most
 * OUTPUT_MAX_READERS run at once.  The event loop only reads the child's
 * pipe. */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#define OUTPUT_TIMEOUT_S   5
#define OUTPUT_MAX_READERS 8

/* What the child writes first on its pipe; then `n` bytes of the file. */
typedef struct out_head {
    uint32_t status; /* dr_output_status_t */
    int32_t err;     /* errno of what failed, 0 */
    uint32_t what;   /* which step failed (out_step_t) */
    uint32_t n;
    uint64_t size;
} out_head_t;

typedef enum out_step {
    OS_NONE,
    OS_USER,
    OS_RELATIVE,
    OS_OPEN,
    OS_STAT,
    OS_NOT_REGULAR,
    OS_READ
} out_step_t;

struct dr_agent_out_reader {
    dr_agent_t *a;
    uint64_t req;
    pid_t pid;
    int fd;
    struct event *ev, *timer;
    uint8_t *buf; /* the head and the bytes */
    size_t len, cap;
    struct dr_agent_out_reader *next;
};
typedef dr_agent_out_reader_t out_reader_t;

/* ---- the child ---- */

/* Become uid/gid with uid's supplementary groups (as its jobs run). */
static int become(uid_t uid, gid_t gid)
{
    if (geteuid() != 0 || uid == geteuid())
        return 0; /* not root: jobs ran as the agent's user, so does this */
    gid_t groups[256];
    int ng = 1;
    groups[0] = gid;
    struct passwd pw, *res = NULL;
    char pwbuf[4096];
    if (getpwuid_r(uid, &pw, pwbuf, sizeof pwbuf, &res) == 0 && res) {
        ng = (int)(sizeof groups / sizeof groups[0]);
        if (getgrouplist(pw.pw_name, gid, groups, &ng) < 0) {
            ng = 1;
            groups[0] = gid;
        }
    }
    if (setgroups((size_t)ng, groups) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
        return -1;
    return setuid(0) == 0 ? -1 : 0; /* no way back */
}

static void child_answer(int fd, out_head_t *h, const void *data)
{
    (void)dr_agent_write_all(fd, h, sizeof *h);
    if (h->n)
        (void)dr_agent_write_all(fd, data, h->n);
    _exit(0);
}

static void child_fail(int fd, uint32_t status, out_step_t what, int err)
{
    out_head_t h = {status, err, what, 0, 0};
    child_answer(fd, &h, NULL);
}

static void child_run(const dr_msg_output_req_t *m, int fd)
{
    dr_agent_child_signals_reset();
    if (become((uid_t)m->uid, (gid_t)m->gid) != 0)
        child_fail(fd, DR_OUTPUT_FAILED, OS_USER, errno);
    if (m->path[0] != '/')
        child_fail(fd, DR_OUTPUT_DENIED, OS_RELATIVE, 0);
    int f = open(m->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f < 0)
        child_fail(fd, errno == ENOENT || errno == ENOTDIR ? DR_OUTPUT_MISSING : DR_OUTPUT_DENIED,
                   OS_OPEN, errno);
    struct stat st;
    if (fstat(f, &st) != 0)
        child_fail(fd, DR_OUTPUT_FAILED, OS_STAT, errno);
    if (!S_ISREG(st.st_mode))
        child_fail(fd, DR_OUTPUT_DENIED, OS_NOT_REGULAR, 0);
    size_t lim = m->limit < DR_MSG_MAX_OUTPUT ? m->limit : DR_MSG_MAX_OUTPUT;
    char *buf = malloc(lim ? lim : 1);
    size_t n = 0;
    while (buf && n < lim) {
        ssize_t r = pread(f, buf + n, lim - n, (off_t)(m->offset + n));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            child_fail(fd, DR_OUTPUT_FAILED, OS_READ, errno);
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (!buf)
        child_fail(fd, DR_OUTPUT_FAILED, OS_READ, ENOMEM);
    out_head_t h = {DR_OUTPUT_OK, 0, OS_NONE, (uint32_t)n, (uint64_t)st.st_size};
    child_answer(fd, &h, buf);
}

/* ---- the agent's side ---- */

static void answer(dr_agent_t *a, uint64_t req, uint32_t status, const char *detail, uint8_t *data,
                   uint32_t n, uint64_t size)
{
    dr_msg_output_t o = {req, status, (char *)(detail ? detail : ""), data, n, size};
    if (dr_agent_link_send(a, DR_MSG_OUTPUT, &o) != 0)
        dr_agent_debug(a, "output request %llu: the link is down, no answer",
                       (unsigned long long)req);
}

static void reader_destroy(out_reader_t *r)
{
    if (r->pid > 0)
        dr_agent_kill_child(r->pid, SIGKILL); /* reaped by the SIGCHLD handler */
    if (r->ev)
        event_free(r->ev);
    if (r->timer)
        event_free(r->timer);
    if (r->fd >= 0)
        close(r->fd);
    free(r->buf);
    free(r);
}

static void reader_free(out_reader_t *r)
{
    for (out_reader_t **p = &r->a->out_readers; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            r->a->out_nreaders--;
            break;
        }
    reader_destroy(r);
}

static const char *step_name(uint32_t what)
{
    switch (what) {
    case OS_USER: return "cannot become the job's user";
    case OS_RELATIVE: return "not an absolute path";
    case OS_OPEN: return "open";
    case OS_STAT: return "stat";
    case OS_NOT_REGULAR: return "not a regular file";
    case OS_READ: return "read";
    default: return "failed";
    }
}

/* The child's whole answer has arrived (EOF): pass it on. */
static void reader_done(out_reader_t *r)
{
    out_head_t h;
    if (r->len < sizeof h) {
        answer(r->a, r->req, DR_OUTPUT_FAILED, "the reader died without an answer", NULL, 0, 0);
        return;
    }
    memcpy(&h, r->buf, sizeof h);
    if (h.status >= DR_OUTPUT_NSTATUS || h.n != r->len - sizeof h) {
        answer(r->a, r->req, DR_OUTPUT_FAILED, "the reader's answer was cut short", NULL, 0, 0);
        return;
    }
    char detail[160] = "";
    if (h.status != DR_OUTPUT_OK) {
        if (h.err)
            snprintf(detail, sizeof detail, "%s: %s", step_name(h.what),
                     h.err == ELOOP ? "a symbolic link (not followed)" : strerror(h.err));
        else
            snprintf(detail, sizeof detail, "%s", step_name(h.what));
    }
    answer(r->a, r->req, h.status, detail, r->buf + sizeof h, h.n, h.size);
}

static void on_pipe(evutil_socket_t fd, short what, void *arg)
{
    out_reader_t *r = arg;
    if (r->cap - r->len < 65536) {
        size_t cap = r->cap * 2;
        uint8_t *b = realloc(r->buf, cap);
        if (!b) {
            answer(r->a, r->req, DR_OUTPUT_FAILED, "the agent is out of memory", NULL, 0, 0);
            reader_free(r);
            return;
        }
        r->buf = b;
        r->cap = cap;
    }
    ssize_t n = read(fd, r->buf + r->len, r->cap - r->len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n > 0) {
        r->len += (size_t)n;
        if (r->len <= sizeof(out_head_t) + DR_MSG_MAX_OUTPUT)
            return;
        n = -1; /* more than any answer: a broken child */
    }
    if (n == 0) {
        r->pid = 0; /* it has written all and exits: the SIGCHLD handler reaps it */
        reader_done(r);
    } else {
        answer(r->a, r->req, DR_OUTPUT_FAILED, "reading the reader's answer failed", NULL, 0, 0);
    }
    reader_free(r);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    out_reader_t *r = arg;
    dr_agent_log(r->a, "output request %llu: no answer from the reader in %d s: killed",
                 (unsigned long long)r->req, OUTPUT_TIMEOUT_S);
    answer(r->a, r->req, DR_OUTPUT_FAILED, "the read did not finish in 5 s", NULL, 0, 0);
    reader_free(r);
}

void dr_agent_output_read(dr_agent_t *a, const dr_msg_output_req_t *m)
{
    if (a->out_nreaders >= OUTPUT_MAX_READERS) {
        answer(a, m->req, DR_OUTPUT_BUSY, "too many output reads at once on this node", NULL, 0, 0);
        return;
    }
    out_reader_t *r = calloc(1, sizeof *r);
    int p[2] = {-1, -1};
    if (!r || !(r->buf = malloc(65536 * 2)) || pipe2(p, O_CLOEXEC) != 0) {
        answer(a, m->req, DR_OUTPUT_FAILED, "the agent is out of resources", NULL, 0, 0);
        if (r)
            free(r->buf);
        free(r);
        return;
    }
    r->a = a;
    r->req = m->req;
    r->cap = 65536 * 2;
    r->fd = p[0];
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        child_run(m, p[1]);
        _exit(1);
    }
    close(p[1]);
    if (pid < 0) {
        r->pid = 0;
        answer(a, m->req, DR_OUTPUT_FAILED, "fork failed", NULL, 0, 0);
        reader_free(r);
        return;
    }
    r->pid = pid;
    r->next = a->out_readers;
    a->out_readers = r;
    a->out_nreaders++;
    r->ev = event_new(a->base, r->fd, EV_READ | EV_PERSIST, on_pipe, r);
    r->timer = evtimer_new(a->base, on_timeout, r);
    struct timeval tv = {OUTPUT_TIMEOUT_S, 0};
    if (!r->ev || !r->timer || event_add(r->ev, NULL) != 0 || evtimer_add(r->timer, &tv) != 0) {
        answer(a, m->req, DR_OUTPUT_FAILED, "the agent is out of resources", NULL, 0, 0);
        reader_free(r);
    }
}

void dr_agent_output_free(dr_agent_t *a)
{
    while (a->out_readers) {
        out_reader_t *r = a->out_readers;
        a->out_readers = r->next;
        a->out_nreaders--;
        reader_destroy(r);
    }
}
