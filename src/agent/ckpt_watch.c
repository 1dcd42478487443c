/* ckpt_watch.c - a preempted job's checkpoint, as soon as it is there.
 *
 * A preemption's SIGNAL names the job's checkpoint directory (to the agent
 * of its first rank).  The job is expected to save on the signal; the
 * controller keeps its GPUs for the grace period meanwhile.  Here the
 * agent looks, a few times a second, for a checkpoint committed since the
 * signal arrived (its manifest's time), verifies it byte for byte and
 * tells the controller (CKPT with committed set), which stops the job then
 * instead of waiting out the grace; the job's next run resumes from it (the
 * launch's own verification picks it).
 *
 * As at a launch (ckpt.c) the directory is read in a child process, as
 * the job's user, whose answer arrives on a pipe; one child at a time per
 * watch.  A watch ends with its report, or when the agent no longer runs
 * the rank. */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "ckpt/ckpt.h"

#define WATCH_EVERY_MS 250

struct dr_agent_ckwatch {
    dr_agent_t *a;
    uint64_t job;
    uint32_t gen, rank;
    uid_t uid;
    gid_t gid;
    char *dir;
    int64_t since_ns; /* the signal's arrival (Unix ns): what counts is newer */
    struct event *tick;
    pid_t pid; /* the child looking now, 0 when none */
    int fd;
    struct event *rd;
    char buf[1024];
    size_t len;
    struct dr_agent_ckwatch *next;
};

static int64_t unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void out(int fd, const char *s)
{
    (void)dr_agent_write_all(fd, s, strlen(s)); /* the reader sees no "end" if it fails */
}

/* The child: "from NAME SEQ CREATED" for the newest checkpoint committed
 * since the signal that verifies, "none" when there is none yet (or
 * "error ..."); "end" last. */
static void child_run(const dr_agent_ckwatch_t *w, int fd)
{
    char line[DR_ERR_MSG_MAX + 600];
    if (geteuid() == 0 && w->uid != 0) {
        if (setgroups(1, &w->gid) != 0 || setgid(w->gid) != 0 || setuid(w->uid) != 0) {
            snprintf(line, sizeof line, "error cannot become uid %u: %s\nend\n", (unsigned)w->uid,
                     strerror(errno));
            out(fd, line);
            _exit(1);
        }
    }
    dr_ckpt_list_t list;
    dr_err_t err = {0};
    if (dr_ckpt_list(w->dir, &list, &err) != DR_OK) {
        snprintf(line, sizeof line, "error %s\nend\n", err.msg);
        out(fd, line);
        _exit(1);
    }
    /* only what a restart would take: checkpoints naming the directory's
     * owner record (ckpt.c made it at the job's first run) */
    int dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    dr_ckpt_owner_t owner;
    if (dfd >= 0 && dr_ckpt_owner_read(dfd, &owner, &err) == DR_OK)
        dr_ckpt_reject_unowned(&list, &owner);
    if (dfd >= 0)
        close(dfd);
    for (size_t i = 0; i < list.n; i++) { /* newest first */
        const dr_ckpt_entry_t *e = &list.e[i];
        if (e->state != DR_CKPT_COMMITTED || e->created_ns < w->since_ns)
            continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", w->dir, e->name) >= (int)sizeof path)
            continue;
        dr_err_t verr = {0};
        if (dr_ckpt_verify(path, NULL, &verr) != DR_OK)
            continue; /* being rewritten, or bad: an older one may do */
        snprintf(line, sizeof line, "from %s %llu %lld\nend\n", e->name, (unsigned long long)e->seq,
                 (long long)e->created_ns);
        out(fd, line);
        _exit(0);
    }
    out(fd, "none\nend\n");
    _exit(0);
}

static void watch_free(dr_agent_ckwatch_t *w)
{
    if (w->pid > 0)
        dr_agent_kill_child(w->pid, SIGKILL); /* reaped by the SIGCHLD handler */
    if (w->rd)
        event_free(w->rd);
    if (w->fd >= 0)
        close(w->fd);
    if (w->tick)
        event_free(w->tick);
    free(w->dir);
    free(w);
}

static void watch_end(dr_agent_ckwatch_t *w)
{
    dr_agent_t *a = w->a;
    for (dr_agent_ckwatch_t **p = &a->ckwatches; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            break;
        }
    watch_free(w);
}

static void child_done(dr_agent_ckwatch_t *w)
{
    event_free(w->rd);
    w->rd = NULL;
    close(w->fd);
    w->fd = -1;
    w->pid = 0;
    w->buf[w->len] = '\0';
    char name[256];
    unsigned long long seq = 0;
    long long created = 0;
    if (sscanf(w->buf, "from %255s %llu %lld", name, &seq, &created) != 3 ||
        !strstr(w->buf, "\nend\n")) {
        if (strncmp(w->buf, "error ", 6) == 0)
            dr_agent_log(w->a, "job %llu.%u: watching %s: %.*s", (unsigned long long)w->job, w->gen,
                         w->dir, (int)strcspn(w->buf + 6, "\n"), w->buf + 6);
        w->len = 0;
        return; /* not yet: the next tick looks again */
    }
    dr_agent_t *a = w->a;
    dr_agent_log(a,
                 "job %llu.%u: checkpoint %s (seq %llu) committed %.1f s after the preemption "
                 "signal, verified",
                 (unsigned long long)w->job, w->gen, name, seq,
                 (double)(created - w->since_ns) / 1e9);
    if (a->notify_ckpt) {
        dr_msg_ckpt_t m = {.job = w->job,
                           .gen = w->gen,
                           .rank = w->rank,
                           .from = name,
                           .seq = seq,
                           .error = "",
                           .committed = true,
                           .created_ns = created};
        a->notify_ckpt(a, &m);
    }
    watch_end(w);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    dr_agent_ckwatch_t *w = arg;
    for (;;) {
        if (w->len >= sizeof w->buf - 1) {
            child_done(w);
            return;
        }
        ssize_t r = read(fd, w->buf + w->len, sizeof w->buf - 1 - w->len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return;
        if (r <= 0)
            break;
        w->len += (size_t)r;
    }
    child_done(w);
}

static bool still_runs(const dr_agent_ckwatch_t *w)
{
    const dr_agent_job_t *j = dr_agent_job_find(w->a, w->job, w->gen, w->rank);
    return j && j->running && !w->a->stopping;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    dr_agent_ckwatch_t *w = arg;
    if (!still_runs(w)) {
        watch_end(w);
        return;
    }
    struct timeval tv = {0, WATCH_EVERY_MS * 1000};
    evtimer_add(w->tick, &tv);
    if (w->pid > 0)
        return; /* the last look is not over */
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return;
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    if (pid == 0) {
        dr_agent_child_signals_reset();
        if (w->a->lock_fd > 0) /* the state lock is the agent's alone */
            close(w->a->lock_fd);
        close(p[0]);
        child_run(w, p[1]);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return;
    }
    w->pid = pid;
    w->fd = p[0];
    w->len = 0;
    (void)fcntl(w->fd, F_SETFL, O_NONBLOCK);
    w->rd = event_new(w->a->base, w->fd, EV_READ | EV_PERSIST, on_read, w);
    if (!w->rd || event_add(w->rd, NULL) != 0) {
        (void)kill(pid, SIGKILL);
        if (w->rd)
            event_free(w->rd);
        w->rd = NULL;
        close(w->fd);
        w->fd = -1;
        w->pid = 0;
    }
}

int dr_agent_ckpt_watch(dr_agent_t *a, const dr_msg_signal_t *m)
{
    if (!m->ckpt_dir || m->ckpt_dir[0] != '/' || strlen(m->ckpt_dir) >= PATH_MAX - 256)
        return 0;
    /* the first of the job's ranks here that runs, as the user it runs as */
    const dr_agent_job_t *j = NULL;
    for (size_t i = 0; i < a->njobs; i++) {
        const dr_agent_job_t *x = a->jobs[i];
        if (x->job == m->job && x->gen == m->gen && x->running && x->step == 0 &&
            (!j || x->rank < j->rank))
            j = x;
    }
    if (!j)
        return 0;
    if (j->uid != (uid_t)m->uid) {
        dr_agent_log(a, "job %llu.%u: SIGNAL names uid %u, the job runs as %u: not watched",
                     (unsigned long long)m->job, m->gen, m->uid, (unsigned)j->uid);
        return 0;
    }
    for (dr_agent_ckwatch_t *w = a->ckwatches; w; w = w->next)
        if (w->job == m->job && w->gen == m->gen)
            return 0; /* a second signal: the first watch goes on */
    dr_agent_ckwatch_t *w = calloc(1, sizeof *w);
    if (!w || !(w->dir = dr_strdup(m->ckpt_dir))) {
        free(w);
        return DR_ENOMEM;
    }
    *w = (dr_agent_ckwatch_t){.a = a,
                              .job = m->job,
                              .gen = m->gen,
                              .rank = j->rank,
                              .uid = j->uid,
                              .gid = (gid_t)m->gid,
                              .dir = w->dir,
                              .since_ns = unix_ns(),
                              .fd = -1};
    w->tick = evtimer_new(a->base, on_tick, w);
    struct timeval tv = {0, WATCH_EVERY_MS * 1000};
    if (!w->tick || evtimer_add(w->tick, &tv) != 0) {
        watch_free(w);
        return DR_ENOMEM;
    }
    w->next = a->ckwatches;
    a->ckwatches = w;
    dr_agent_log(a,
                 "job %llu.%u: watching %s for a checkpoint committed after the preemption "
                 "signal",
                 (unsigned long long)m->job, m->gen, m->ckpt_dir);
    return 0;
}

void dr_agent_ckpt_watch_stop(dr_agent_t *a)
{
    dr_agent_ckwatch_t *w = a->ckwatches;
    a->ckwatches = NULL;
    while (w) {
        dr_agent_ckwatch_t *next = w->next;
        watch_free(w);
        w = next;
    }
}
