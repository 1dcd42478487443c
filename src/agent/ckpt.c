/* ckpt.c - before a job with a checkpoint directory starts, find the
 * checkpoint it resumes from: the newest whose manifest verifies, every
 * byte read (src/ckpt), falling back to older ones; then launch it with
 * DROVER_RESTART_FROM set (left unset when none verifies), and tell the
 * controller which one and why the newer ones were passed over.
 *
 * Reading a large checkpoint takes long, so it happens in a child
 * process whose answer arrives on a pipe: the event loop goes on
 * meanwhile.  The child runs as the job's user (it reads only what the
 * job could) and makes the directory when it is missing.  One child per
 * job generation on this node: the ranks launched here while it reads
 * wait for the same answer.  A KILL meanwhile ends them unstarted. */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "ckpt/ckpt.h"

struct dr_agent_verif {
    dr_agent_t *a;
    uint64_t job;
    uint32_t gen;
    char *dir;
    dr_strvec_t launches; /* the waiting LAUNCHes, as JSON (their own copies) */
    uint32_t *ranks;
    size_t nranks;
    pid_t pid;
    int fd;
    struct event *ev;
    char *buf;
    size_t len, cap;
    struct dr_agent_verif *next;
};

/* ---- the child ---- */

static int mkdirs(const char *dir)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return ENAMETOOLONG;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s)
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST)
            return errno;
        if (!c)
            break;
        *s = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno;
    return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

static void out(int fd, const char *s)
{
    (void)dr_agent_write_all(fd, s, strlen(s)); /* the reader sees no "end" if it fails */
}

/* The answer, one line each: "error MSG", or "from NAME SEQ" (or "none")
 * and then "rejected NAME: WHY" lines; "end" last, so that a child that
 * died half-way is told from one that answered. */
static void child_run(const dr_msg_launch_t *l, int fd)
{
    char line[DR_ERR_MSG_MAX + 600];
    if (geteuid() == 0 && l->uid != 0) {
        gid_t g = (gid_t)l->gid;
        if (setgroups(1, &g) != 0 || setgid(g) != 0 || setuid((uid_t)l->uid) != 0) {
            snprintf(line, sizeof line, "error cannot become uid %u: %s\nend\n", l->uid,
                     strerror(errno));
            out(fd, line);
            _exit(1);
        }
    }
    int e = mkdirs(l->ckpt_dir);
    if (e != 0) {
        snprintf(line, sizeof line, "error %s: %s\nend\n", l->ckpt_dir, strerror(e));
        out(fd, line);
        _exit(1);
    }
    dr_ckpt_list_t list;
    dr_err_t err = {0};
    if (dr_ckpt_list(l->ckpt_dir, &list, &err) != DR_OK) {
        snprintf(line, sizeof line, "error %s\nend\n", err.msg);
        out(fd, line);
        _exit(1);
    }
    long k = dr_ckpt_pick_for(l->ckpt_dir, &list, l->gen);
    if (k >= 0)
        snprintf(line, sizeof line, "from %s %llu\n", list.e[k].name,
                 (unsigned long long)list.e[k].seq);
    else
        snprintf(line, sizeof line, "none\n");
    out(fd, line);
    /* newer ones passed over (rejected, torn); not those older than the pick */
    size_t nrej = 0;
    for (size_t i = 0; i < list.n && nrej < DR_MSG_MAX_CKPT_REJECTS; i++) {
        dr_ckpt_entry_t *x = &list.e[i];
        if (x->state != DR_CKPT_REJECTED && x->state != DR_CKPT_TORN)
            continue;
        for (char *c = x->why; *c; c++)
            if (*c == '\n')
                *c = ' ';
        snprintf(line, sizeof line, "rejected %s: %s\n", x->name, x->why);
        out(fd, line);
        nrej++;
    }
    out(fd, "end\n");
    _exit(0);
}

/* ---- the agent's side ---- */

static void verif_free(dr_agent_verif_t *v)
{
    if (v->ev)
        event_free(v->ev);
    if (v->fd >= 0)
        close(v->fd);
    dr_strvec_free(&v->launches);
    free(v->ranks);
    free(v->buf);
    free(v->dir);
    free(v);
}

static void verif_unlink(dr_agent_t *a, dr_agent_verif_t *v)
{
    for (dr_agent_verif_t **p = &a->verifs; *p; p = &(*p)->next)
        if (*p == v) {
            *p = v->next;
            return;
        }
}

/* The child's answer, parsed: from (a name, "" = none), seq, error. */
typedef struct answer {
    char from[256];
    unsigned long long seq;
    char error[DR_MSG_MAX_STR];
    dr_strvec_t rejected;
} answer_t;

static void parse_answer(char *buf, size_t len, answer_t *ans)
{
    bool ended = false;
    buf[len] = '\0';
    for (char *l = buf, *nl; l && *l; l = nl) {
        nl = strchr(l, '\n');
        if (nl)
            *nl++ = '\0';
        char name[256];
        if (strncmp(l, "error ", 6) == 0)
            snprintf(ans->error, sizeof ans->error, "%s", l + 6);
        else if (sscanf(l, "from %255s %llu", name, &ans->seq) == 2)
            snprintf(ans->from, sizeof ans->from, "%s", name);
        else if (strncmp(l, "rejected ", 9) == 0 && ans->rejected.n < DR_MSG_MAX_CKPT_REJECTS)
            dr_strvec_push(&ans->rejected, l + 9);
        else if (strcmp(l, "end") == 0)
            ended = true;
    }
    if (!ended && !ans->error[0])
        snprintf(ans->error, sizeof ans->error, "the verifier died before it answered");
}

static void verif_done(dr_agent_verif_t *v)
{
    dr_agent_t *a = v->a;
    verif_unlink(a, v);
    answer_t ans = {0};
    parse_answer(v->buf, v->len, &ans);
    char from[PATH_MAX + 256] = "";
    if (ans.from[0])
        snprintf(from, sizeof from, "%s/%s", v->dir, ans.from);
    if (ans.error[0])
        dr_agent_log(a, "job %llu.%u: checkpoints in %s cannot be checked: %s",
                     (unsigned long long)v->job, v->gen, v->dir, ans.error);
    else
        dr_agent_log(a, "job %llu.%u: %s%s%s (%zu newer rejected)", (unsigned long long)v->job,
                     v->gen, ans.from[0] ? "resumes from " : "no verified checkpoint in ",
                     ans.from[0] ? from : v->dir, "", ans.rejected.n);
    if (a->notify_ckpt && v->nranks) {
        dr_msg_ckpt_t m = {.job = v->job,
                           .gen = v->gen,
                           .rank = v->ranks[0],
                           .from = ans.from,
                           .seq = ans.from[0] ? ans.seq : 0,
                           .error = ans.error,
                           .rejected = ans.rejected.v,
                           .nrejected = (uint32_t)ans.rejected.n};
        a->notify_ckpt(a, &m);
    }
    for (size_t i = 0; i < v->launches.n; i++) {
        dr_msg_launch_t l;
        dr_err_t err = {0};
        const char *js = v->launches.v[i];
        if (dr_msg_launch_parse(&l, js, strlen(js), &err) != DR_OK) {
            dr_agent_log(a, "job %llu.%u: launch lost: %s", (unsigned long long)v->job, v->gen,
                         err.msg);
            continue;
        }
        if (ans.error[0]) {
            /* starting afresh could overwrite good checkpoints the node
             * just cannot reach now: the launch fails, saying why */
            char d[DR_MSG_MAX_STR + 64];
            snprintf(d, sizeof d, "checkpoint directory: %s", ans.error);
            dr_agent_launch_fail(a, &l, DR_END_LAUNCH, d);
        } else if (a->stopping) {
            dr_agent_launch_fail(a, &l, DR_END_KILLED, "the agent is stopping");
        } else if (dr_agent_launch_now(a, &l, from[0] ? from : NULL, &err) < 0) {
            dr_agent_log(a, "job %llu.%u rank %u: launch: %s", (unsigned long long)l.job, l.gen,
                         l.rank, err.msg);
        }
        dr_msg_launch_free(&l);
    }
    dr_strvec_free(&ans.rejected);
    verif_free(v);
}

static void on_answer(evutil_socket_t fd, short what, void *arg)
{
    dr_agent_verif_t *v = arg;
    for (;;) {
        if (v->len + 4096 + 1 > v->cap) {
            if (v->cap >= (1u << 20) ||
                dr_grow((void **)&v->buf, &v->cap, v->len + 4096 + 1, 1) != 0) {
                break; /* more than any answer: take what came */
            }
        }
        ssize_t r = read(v->fd, v->buf + v->len, v->cap - v->len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return; /* more to come */
        if (r <= 0)
            break; /* EOF: the child is done */
        v->len += (size_t)r;
    }
    if (!v->buf && dr_grow((void **)&v->buf, &v->cap, 1, 1) != 0)
        return;
    verif_done(v);
}

bool dr_agent_ckpt_holds(const dr_agent_t *a, uint64_t job, uint32_t gen, uint32_t rank)
{
    for (const dr_agent_verif_t *v = a->verifs; v; v = v->next)
        if (v->job == job && v->gen == gen)
            for (size_t i = 0; i < v->nranks; i++)
                if (v->ranks[i] == rank)
                    return true;
    return false;
}

static int verif_add_launch(dr_agent_verif_t *v, const dr_msg_launch_t *l, dr_err_t *err)
{
    char *json = NULL;
    size_t len = 0;
    if (dr_msg_launch_encode(l, &json, &len, err) != DR_OK)
        return err ? err->code : DR_EINVAL;
    uint32_t *r = realloc(v->ranks, (v->nranks + 1) * sizeof *r);
    if (!r || dr_strvec_push_owned(&v->launches, json) != 0) {
        free(r ? NULL : json);
        if (r)
            v->ranks = r;
        return dr_err_set(err, DR_ENOMEM, "launch: out of memory");
    }
    v->ranks = r;
    v->ranks[v->nranks++] = l->rank;
    return DR_OK;
}

int dr_agent_ckpt_launch(dr_agent_t *a, const dr_msg_launch_t *l, dr_err_t *err)
{
    for (dr_agent_verif_t *v = a->verifs; v; v = v->next)
        if (v->job == l->job && v->gen == l->gen && strcmp(v->dir, l->ckpt_dir) == 0)
            return verif_add_launch(v, l, err) == DR_OK ? 0 : DR_ENOMEM;
    if (strlen(l->ckpt_dir) >= PATH_MAX - 256 || l->ckpt_dir[0] != '/')
        return dr_agent_launch_fail(a, l, DR_END_LAUNCH,
                                    "checkpoint directory: not an absolute path of at most "
                                    "3839 bytes");
    dr_agent_verif_t *v = calloc(1, sizeof *v);
    if (!v || !(v->dir = dr_strdup(l->ckpt_dir))) {
        free(v);
        return dr_err_set(err, DR_ENOMEM, "launch: out of memory");
    }
    v->a = a;
    v->job = l->job;
    v->gen = l->gen;
    v->fd = -1;
    if (verif_add_launch(v, l, err) != DR_OK) {
        verif_free(v);
        return DR_ENOMEM;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        char d[128];
        snprintf(d, sizeof d, "checkpoint verification: pipe: %s", strerror(errno));
        verif_free(v);
        return dr_agent_launch_fail(a, l, DR_END_LAUNCH, d);
    }
    /* as at a launch: no agent signal handler may run in the child */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    if (pid == 0) {
        dr_agent_child_signals_reset();
        if (a->lock_fd > 0) /* the state lock is the agent's alone */
            close(a->lock_fd);
        close(p[0]);
        child_run(l, p[1]);
    }
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        char d[128];
        snprintf(d, sizeof d, "checkpoint verification: fork: %s", strerror(fork_errno));
        verif_free(v);
        return dr_agent_launch_fail(a, l, DR_END_LAUNCH, d);
    }
    v->pid = pid;
    v->fd = p[0];
    (void)fcntl(v->fd, F_SETFL, O_NONBLOCK);
    v->ev = event_new(a->base, v->fd, EV_READ | EV_PERSIST, on_answer, v);
    if (!v->ev || event_add(v->ev, NULL) != 0) {
        kill(pid, SIGKILL);
        verif_free(v);
        return dr_agent_launch_fail(a, l, DR_END_LAUNCH, "checkpoint verification: no event");
    }
    v->next = a->verifs;
    a->verifs = v;
    dr_agent_log(a, "job %llu.%u rank %u: verifying the checkpoints in %s (pid %ld)",
                 (unsigned long long)l->job, l->gen, l->rank, l->ckpt_dir, (long)pid);
    return 0;
}

int dr_agent_ckpt_cancel(dr_agent_t *a, uint64_t job, uint32_t gen, bool all, bool report)
{
    int n = 0;
    if (all)
        dr_agent_ckpt_watch_stop(a); /* the agent stops: so do the watches */
    for (dr_agent_verif_t **p = &a->verifs; *p;) {
        dr_agent_verif_t *v = *p;
        if (!all && !(v->job == job && v->gen == gen)) {
            p = &v->next;
            continue;
        }
        *p = v->next;
        dr_agent_kill_child(v->pid, SIGKILL); /* reaped by the SIGCHLD handler */
        for (size_t i = 0; report && i < v->launches.n; i++) {
            dr_msg_launch_t l;
            const char *js = v->launches.v[i];
            if (dr_msg_launch_parse(&l, js, strlen(js), NULL) == DR_OK) {
                dr_agent_launch_fail(a, &l, DR_END_KILLED,
                                     "killed while its checkpoints were being verified");
                dr_msg_launch_free(&l);
                n++;
            }
        }
        verif_free(v);
    }
    return n;
}
