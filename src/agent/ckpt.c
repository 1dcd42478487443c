/* ckpt.c - before a job with a checkpoint directory starts, find the
 * checkpoint it resumes from: the newest whose manifest verifies, every
 * byte read (src/ckpt), falling back to older ones; then launch it with
 * DROVER_RESTART_FROM set (left unset when none verifies), and tell the
 * controller which one and why the newer ones were passed over.
 *
 * Reading a large checkpoint takes long, so it happens in a child
 * process whose answer arrives on a pipe: the event loop goes on
 * meanwhile.  The child makes the job's directory for its first run (as
 * root under a root-owned parent such as CheckpointDir, else as the job's
 * user; 0700, the user's, with an owner record and nonce), refuses one
 * that someone else made (issue 21: a directory planted for the next job
 * id), and reads as the job's user (only what the job could), resuming
 * only from a checkpoint whose manifest names this job's record.  One child per
 * job generation on this node: the ranks launched here while it reads
 * wait for the same answer.  A KILL meanwhile ends them unstarted. */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
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

/* The user's own part of the path (the working directory's .drover/ckpt):
 * made as the user. */
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

static _Noreturn void fail(int fd, const char *fmt, ...) DR_PRINTF(2, 3);
static _Noreturn void fail(int fd, const char *fmt, ...)
{
    char msg[DR_ERR_MSG_MAX + 600], line[sizeof msg + 16];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)
        if (*c == '\n')
            *c = ' ';
    snprintf(line, sizeof line, "error %s\nend\n", msg);
    out(fd, line);
    _exit(1);
}

static void become(int fd, uid_t uid, gid_t gid)
{
    if (setgroups(1, &gid) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
        fail(fd, "cannot become uid %u: %s", (unsigned)uid, strerror(errno));
}

/* The parent of a job's checkpoint directory, opened component by
 * component without following a link, when every component is root's and
 * no one else can replace it (not writable by others, or sticky as /tmp):
 * then the agent (root) makes the job's directory in it, as CheckpointDir
 * (root's, 0755) needs.  -1 otherwise: a path some user controls is
 * worked on as the job's user only, so that a link planted there makes
 * the agent create nothing anywhere as root. */
static int root_parent(const char *parent)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", parent) >= (int)sizeof p || p[0] != '/')
        return -1;
    int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (char *save = NULL, *c = strtok_r(p, "/", &save); fd >= 0; c = strtok_r(NULL, "/", &save)) {
        struct stat st;
        if (fstat(fd, &st) != 0 || st.st_uid != 0 ||
            ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
            close(fd);
            return -1;
        }
        if (!c)
            return fd;
        if (strcmp(c, "..") == 0) {
            close(fd);
            return -1;
        }
        int n = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = n;
    }
    return -1;
}

/* The job's checkpoint directory `leaf` in pfd, opened (not following a
 * link), and its owner record.  Made for the job's first run: 0700, the
 * job user's, with a fresh .drover-job (job, uid, a random nonce).  Found
 * there: used only when it is the job user's, no one else may write in
 * it, and its record names this job - else it was made by someone else
 * (planted for a job id to come) or before the job, and the launch fails
 * saying so. */
static int job_dir(int fd, int pfd, const char *dir, const char *leaf, const dr_msg_launch_t *l,
                   uid_t uid, gid_t gid, dr_ckpt_owner_t *owner)
{
    bool made = mkdirat(pfd, leaf, 0700) == 0;
    if (!made && errno != EEXIST)
        fail(fd, "%s: %s", dir, strerror(errno));
    int dfd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 && (errno == ELOOP || errno == ENOTDIR))
        fail(fd, "refused: %s is a link or not a directory (made by someone else; remove it)", dir);
    if (dfd < 0)
        fail(fd, "%s: %s", dir, strerror(errno));
    if (made) {
        owner->job = l->job;
        owner->uid = (uint32_t)uid;
        if (getrandom(owner->nonce, sizeof owner->nonce, 0) != (ssize_t)sizeof owner->nonce)
            fail(fd, "%s: getrandom: %s", dir, strerror(errno));
        char text[160];
        dr_ckpt_owner_format(owner, text, sizeof text);
        bool chown_to = geteuid() != uid;
        int mfd = openat(dfd, DR_CKPT_OWNER_FILE,
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if ((chown_to && fchown(dfd, uid, gid) != 0) || fchmod(dfd, 0700) != 0 || mfd < 0 ||
            dr_agent_write_all(mfd, text, strlen(text)) != 0 ||
            (chown_to && fchown(mfd, uid, gid) != 0))
            fail(fd, "%s: %s", dir, strerror(errno));
        close(mfd);
        return dfd;
    }
    /* made by another node of the gang a moment ago (shared storage):
     * wait for it to be handed to the user and recorded */
    struct stat st;
    dr_err_t err = {0};
    int rc = DR_ENOENT;
    for (int i = 0; i < 20; i++) {
        if (fstat(dfd, &st) != 0)
            fail(fd, "%s: %s", dir, strerror(errno));
        rc = dr_ckpt_owner_read(dfd, owner, &err);
        if ((st.st_uid == uid && rc != DR_ENOENT) || time(NULL) - st.st_ctim.tv_sec > 2)
            break;
        usleep(100000);
    }
    if (st.st_uid != uid)
        fail(fd,
             "%s belongs to uid %u, not to the job's user (uid %u): someone else made it before "
             "the job's first run; refused (remove it)",
             dir, (unsigned)st.st_uid, (unsigned)uid);
    if (st.st_mode & 022)
        fail(fd, "%s: mode %04o lets others write in it; refused (chmod 700 it)", dir,
             (unsigned)(st.st_mode & 07777));
    if (rc == DR_ENOENT)
        fail(fd,
             "%s has no " DR_CKPT_OWNER_FILE " record: it existed before the job's first run "
             "(made by hand or by an older drover); refused (remove it, or move its "
             "checkpoints elsewhere)",
             dir);
    if (rc != DR_OK)
        fail(fd, "%s/" DR_CKPT_OWNER_FILE ": %s", dir, err.msg);
    if (owner->job != l->job || owner->uid != (uint32_t)uid)
        fail(fd, "%s: its record names job %llu of uid %u, not job %llu of uid %u; refused", dir,
             (unsigned long long)owner->job, (unsigned)owner->uid, (unsigned long long)l->job,
             (unsigned)uid);
    return dfd;
}

/* The answer, one line each: "error MSG", or "from NAME SEQ" (or "none")
 * and then "rejected NAME: WHY" lines; "end" last, so that a child that
 * died half-way is told from one that answered. */
static void child_run(const dr_msg_launch_t *l, int fd)
{
    char line[DR_ERR_MSG_MAX + 600];
    bool root = geteuid() == 0;
    /* who the job runs as (a non-root agent runs every job as itself) */
    uid_t uid = root ? (uid_t)l->uid : geteuid();
    gid_t gid = root ? (gid_t)l->gid : getegid();
    char parent[PATH_MAX], leaf[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", l->ckpt_dir);
    char *slash = strrchr(parent, '/');
    if (!slash || !slash[1] || strcmp(slash + 1, "..") == 0 || strcmp(slash + 1, ".") == 0)
        fail(fd, "%s: not a directory path", l->ckpt_dir);
    snprintf(leaf, sizeof leaf, "%s", slash + 1);
    if (slash == parent)
        slash[1] = '\0';
    else
        *slash = '\0';
    int pfd = root && uid != 0 ? root_parent(parent) : -1;
    if (pfd < 0) {
        if (root && uid != 0)
            become(fd, uid, gid);
        int e = mkdirs(parent);
        if (e != 0)
            fail(fd, "%s: %s", parent, strerror(e));
        pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pfd < 0)
            fail(fd, "%s: %s", parent, strerror(errno));
    }
    dr_ckpt_owner_t owner;
    int dfd = job_dir(fd, pfd, l->ckpt_dir, leaf, l, uid, gid, &owner);
    close(pfd);
    if (geteuid() != uid)
        become(fd, uid, gid);
    /* read through the directory opened above: a path swapped meanwhile
     * is not followed */
    if (fchdir(dfd) != 0)
        fail(fd, "%s: %s", l->ckpt_dir, strerror(errno));
    close(dfd);
    dr_ckpt_list_t list;
    dr_err_t err = {0};
    if (dr_ckpt_list(".", &list, &err) != DR_OK)
        fail(fd, "%s: %s", l->ckpt_dir, err.msg);
    long k = dr_ckpt_pick_owned(".", &list, l->gen, &owner);
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
