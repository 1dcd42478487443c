/* launch.c - start one job rank: plan it, then (in the rank's keeper,
 * keeper.c, the process that holds it) vfork, set the child up, exec.
 *
 * Everything that can be decided without the child (environment, groups,
 * the cgroup) is prepared in the agent, so that the child between vfork
 * and exec only makes system calls.  The child reports a failed step
 * through a close-on-exec pipe: EOF means exec succeeded, a record means it
 * did not (which step, errno).  The parent waits for that answer, as
 * posix_spawn does; the steps are local system calls, so the wait is short.
 *
 * The child drops privileges before chdir and before opening the output
 * files, so that a job reaches only what its user may and its output files
 * belong to that user. */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum launch_step {
    STEP_SETSID = 1,
    STEP_CGROUP,
    STEP_STDIN,
    STEP_SETGROUPS,
    STEP_SETGID,
    STEP_SETUID,
    STEP_CHDIR,
    STEP_STDOUT,
    STEP_STDERR,
    STEP_EXEC
};

typedef struct launch_fail {
    int32_t step;
    int32_t err;
} launch_fail_t;

/* Everything the child needs, prepared by the parent. */
typedef struct launch_plan {
    const dr_msg_launch_t *l;                     /* the agent's side only */
    const char *cwd, *out, *err, *cgroup, *argv0; /* "" for none */
    char **argv, **envp;
    bool change_ids;
    uid_t uid;
    gid_t gid;
    gid_t *groups;
    int ngroups;
    char **cands; /* where argv[0] may be: the job's PATH searched, as execvp does */
    size_t ncands;
    char **sh_argv; /* "/bin/sh", a candidate, argv[1..]: for a file without #! */
    int procs_fd;   /* cgroup.procs of the rank's cgroup, or -1 */
    int fail_fd;    /* write end of the report pipe */
} launch_plan_t;

static void child_fail(const launch_plan_t *p, int step)
{
    launch_fail_t f = {step, errno};
    ssize_t w = write(p->fail_fd, &f, sizeof f);
    (void)w;
    _exit(127);
}

/* Open path as fd `target` (0, 1 or 2), not inheriting anything else.
 * Non-blocking, then blocking again: a FIFO a user names as -o without a
 * reader would hold this vfork child, and so its keeper, in open() for
 * ever; it fails with ENXIO instead. */
static int child_open_as(const char *path, int flags, int target)
{
    int fd = open(path, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0640);
    if (fd < 0)
        return -1;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        return -1;
    if (fd == target)
        return fcntl(fd, F_SETFD, 0);
    if (dup2(fd, target) < 0)
        return -1;
    close(fd);
    return 0;
}

/* execvp's search over the candidates the parent listed from the job's
 * PATH (glibc's execvpe would search the agent's PATH, and setting environ
 * would change the parent's memory: this is a vfork child).  Returns with
 * errno set when nothing could be run. */
static void child_exec(const launch_plan_t *p)
{
    bool denied = false;
    for (size_t i = 0; i < p->ncands; i++) {
        execve(p->cands[i], p->argv, p->envp);
        if (errno == ENOEXEC) { /* no #! line: a shell script, as execvp runs it */
            p->sh_argv[1] = p->cands[i];
            execve("/bin/sh", p->sh_argv, p->envp);
            return;
        }
        if (errno == EACCES)
            denied = true;
        else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ELOOP &&
                 errno != ENAMETOOLONG && errno != ENODEV && errno != ETIMEDOUT)
            return;
    }
    errno = denied ? EACCES : ENOENT;
}

static void child_run(const launch_plan_t *p)
{
    if (setsid() < 0)
        child_fail(p, STEP_SETSID);
    /* the agent's handlers, ignored signals and mask are not the job's */
    dr_agent_child_signals_reset();
    /* nothing of the agent's (sockets, event loop) survives exec */
    if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
        for (int fd = 3; fd < 1024; fd++)
            (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (p->procs_fd >= 0) {
        if (write(p->procs_fd, "0", 1) != 1)
            child_fail(p, STEP_CGROUP);
        close(p->procs_fd);
    }
    if (child_open_as("/dev/null", O_RDONLY, 0) != 0)
        child_fail(p, STEP_STDIN);
    if (p->change_ids) {
        if (setgroups((size_t)p->ngroups, p->groups) != 0)
            child_fail(p, STEP_SETGROUPS);
        if (setgid(p->gid) != 0)
            child_fail(p, STEP_SETGID);
        if (setuid(p->uid) != 0)
            child_fail(p, STEP_SETUID);
    }
    if (p->cwd[0] && chdir(p->cwd) != 0)
        child_fail(p, STEP_CHDIR);
    const char *out = p->out[0] ? p->out : "/dev/null";
    if (child_open_as(out, O_WRONLY | O_CREAT | O_APPEND, 1) != 0)
        child_fail(p, STEP_STDOUT);
    if (p->err[0]) {
        if (child_open_as(p->err, O_WRONLY | O_CREAT | O_APPEND, 2) != 0)
            child_fail(p, STEP_STDERR);
    } else if (dup2(1, 2) < 0) {
        child_fail(p, STEP_STDERR);
    }
    child_exec(p);
    child_fail(p, STEP_EXEC);
}

static void fail_detail(const launch_plan_t *p, const launch_fail_t *f, char *out, size_t len)
{
    const char *e = strerror(f->err);
    switch (f->step) {
    case STEP_SETSID: snprintf(out, len, "setsid: %s", e); break;
    case STEP_CGROUP: snprintf(out, len, "cgroup %s: %s", p->cgroup[0] ? p->cgroup : "?", e); break;
    case STEP_STDIN: snprintf(out, len, "open /dev/null: %s", e); break;
    case STEP_SETGROUPS: snprintf(out, len, "setgroups for uid %u: %s", (unsigned)p->uid, e); break;
    case STEP_SETGID: snprintf(out, len, "setgid %u: %s", (unsigned)p->gid, e); break;
    case STEP_SETUID: snprintf(out, len, "setuid %u: %s", (unsigned)p->uid, e); break;
    case STEP_CHDIR: snprintf(out, len, "chdir %s: %s", p->cwd, e); break;
    case STEP_STDOUT: snprintf(out, len, "open %s: %s", p->out, e); break;
    case STEP_STDERR: snprintf(out, len, "open %s: %s", p->err, e); break;
    case STEP_EXEC: snprintf(out, len, "exec %s: %s", p->argv0, e); break;
    default: snprintf(out, len, "child setup failed before exec"); break;
    }
}

/* The rank could not be started: it ends at once with why (DR_END_LAUNCH:
 * exit 127; DR_END_KILLED: killed before it started). */
static int launch_ended(dr_agent_t *a, dr_agent_job_t *j, uint8_t why, const char *detail)
{
    dr_agent_log(a, "job %llu.%u rank %u: %s: %s", (unsigned long long)j->job, j->gen, j->rank,
                 why == DR_END_LAUNCH ? "launch failed" : "not started", detail);
    char *d = dr_strdup(detail);
    if (d) {
        free(j->detail);
        j->detail = d;
    }
    j->why = why;
    j->exit_code = why == DR_END_LAUNCH ? 127 : -1;
    j->signal = why == DR_END_LAUNCH ? 0 : SIGKILL;
    (void)dr_agent_cg_remove(a, j);
    dr_agent_job_ended(a, j);
    return 0;
}

static int launch_failed(dr_agent_t *a, dr_agent_job_t *j, const char *detail)
{
    return launch_ended(a, j, DR_END_LAUNCH, detail);
}

int dr_agent_launch_fail(dr_agent_t *a, const dr_msg_launch_t *l, uint8_t why, const char *detail)
{
    if (dr_agent_job_find(a, l->job, l->gen, l->rank))
        return 0; /* already there (and reported) */
    dr_agent_job_t *j = dr_agent_job_add(a, l->job, l->gen, l->rank);
    if (!j)
        return DR_ENOMEM;
    j->step = l->step;
    return launch_ended(a, j, why, detail);
}

/* Who the job runs as, its passwd entry and supplementary groups. */
static int plan_identity(dr_agent_t *a, const dr_msg_launch_t *l, launch_plan_t *p,
                         struct passwd *pw, char *buf, size_t buflen, bool *have_pw)
{
    bool root = geteuid() == 0;
    p->uid = root ? (uid_t)l->uid : geteuid();
    p->gid = root ? (gid_t)l->gid : getegid();
    p->change_ids = root && l->uid != 0;
    if (!root && l->uid != (uint32_t)geteuid() && !a->noted_not_root) {
        dr_agent_log(a,
                     "not running as root: jobs run as uid %u, not as their users (first: "
                     "job %llu.%u, uid %u)",
                     (unsigned)p->uid, (unsigned long long)l->job, l->gen, l->uid);
        a->noted_not_root = true;
    }
    struct passwd *res = NULL;
    *have_pw = getpwuid_r(p->uid, pw, buf, buflen, &res) == 0 && res;
    if (!p->change_ids)
        return 0;
    int n = 16;
    for (int tries = 0; tries < 8; tries++) {
        gid_t *g = realloc(p->groups, sizeof *g * (size_t)n);
        if (!g)
            return DR_ENOMEM;
        p->groups = g;
        if (!*have_pw) {
            p->groups[0] = p->gid; /* no passwd entry: its own group only */
            p->ngroups = 1;
            return 0;
        }
        int got = n;
        if (getgrouplist(pw->pw_name, p->gid, p->groups, &got) >= 0) {
            p->ngroups = got;
            return 0;
        }
        n = got > n ? got : n * 2;
    }
    return DR_ENOMEM;
}

static void plan_free(launch_plan_t *p)
{
    free(p->argv);
    for (size_t i = 0; i < p->ncands; i++)
        free(p->cands[i]);
    free(p->cands);
    free(p->sh_argv);
    for (char **e = p->envp; e && *e; e++)
        free(*e);
    free(p->envp);
    free(p->groups);
    if (p->procs_fd >= 0)
        close(p->procs_fd);
}

/* A batch script: run from a file of the job's user that only it can read
 * (shared_file.c shares one file among the ranks running the same script), in
 * argv[0]'s place (through /bin/sh when it has no #! line). */
static int write_script(dr_agent_t *a, dr_agent_job_t *j, const dr_msg_launch_t *l,
                        launch_plan_t *p, char *detail, size_t dlen)
{
    j->script =
        dr_agent_file_get(a, "sh", 0700, l->script, p->change_ids, p->uid, p->gid, detail, dlen);
    if (!j->script)
        return -1;
    if (strncmp(l->script, "#!", 2) == 0) {
        p->argv[0] = (char *)j->script;
    } else {
        memmove(p->argv + 1, p->argv, (size_t)l->argc * sizeof *p->argv);
        p->argv[0] = "/bin/sh";
        p->argv[1] = (char *)j->script;
    }
    return 0;
}

/* DROVER_HOSTS ("addr:slots,...", from the controller) as the hostfile
 * `deepspeed --hostfile` and `mpirun -hostfile` read ("addr slots=N"),
 * named in DROVER_HOSTFILE. */
static int write_hostfile(dr_agent_t *a, dr_agent_job_t *j, const launch_plan_t *p,
                          dr_strvec_t *env, char *detail, size_t dlen)
{
    const char *hosts = dr_agent_env_get(env, "DROVER_HOSTS");
    if (!hosts || !*hosts)
        return 0;
    /* "addr slots=N\n" per entry: at most 7 more bytes than the entry */
    size_t cap = strlen(hosts) * 2 + 16, k = 0;
    char *text = malloc(cap);
    if (!text) {
        snprintf(detail, dlen, "hostfile: out of memory");
        return -1;
    }
    for (const char *h = hosts; *h && k + 1 < cap;) {
        const char *e = strchr(h, ',');
        size_t n = e ? (size_t)(e - h) : strlen(h);
        const char *colon = memchr(h, ':', n);
        int w = colon ? snprintf(text + k, cap - k, "%.*s slots=%.*s\n", (int)(colon - h), h,
                                 (int)(n - (size_t)(colon - h) - 1), colon + 1)
                      : snprintf(text + k, cap - k, "%.*s\n", (int)n, h);
        k += w > 0 ? (size_t)w : 0;
        h = e ? e + 1 : h + n;
    }
    text[k < cap ? k : cap - 1] = '\0';
    /* the user's, in the user's directory, as its script (shared_file.c) */
    j->hostfile =
        dr_agent_file_get(a, "hosts", 0644, text, p->change_ids, p->uid, p->gid, detail, dlen);
    free(text);
    if (!j->hostfile)
        return -1;
    if (dr_agent_env_set(env, "DROVER_HOSTFILE", j->hostfile) != 0) {
        snprintf(detail, dlen, "hostfile: out of memory");
        return -1;
    }
    return 0;
}

/* srun inside the job: its socket, and srun first on PATH (the agent's, so
 * after the LAUNCH's entries). */
static int plan_srun(dr_agent_t *a, dr_strvec_t *env)
{
    if (!a->step_sock)
        return 0;
    if (dr_agent_env_set(env, "DROVER_STEP_SOCKET", a->step_sock) != 0)
        return DR_ENOMEM;
    /* the interface this node chose for gloo: srun leaves it out of a
     * step's environment when the job kept it, so that each node's tasks
     * get their own node's */
    const char *gi = dr_agent_env_get(env, "GLOO_SOCKET_IFNAME");
    if (gi && a->local_ifname[0] && strcmp(gi, a->local_ifname) == 0 &&
        dr_agent_env_set(env, "DROVER_AGENT_GLOO_IFNAME", gi) != 0)
        return DR_ENOMEM;
    if (!a->srun_dir)
        return 0;
    const char *path = dr_agent_env_get(env, "PATH");
    size_t dl = strlen(a->srun_dir);
    if (path && strncmp(path, a->srun_dir, dl) == 0 && (path[dl] == ':' || !path[dl]))
        return 0; /* already first (a step's task has srun's PATH) */
    size_t n = dl + (path ? strlen(path) : 0) + 2;
    char *v = malloc(n);
    if (!v)
        return DR_ENOMEM;
    snprintf(v, n, "%s%s%s", a->srun_dir, path ? ":" : "", path ? path : "");
    int rc = dr_agent_env_set(env, "PATH", v);
    free(v);
    return rc;
}

/* The files argv[0] may be, in execvp's order: itself when it has a
 * slash, else each entry of the job's PATH (glibc's default when it has
 * none; an empty entry is the working directory). */
static int plan_search(launch_plan_t *p)
{
    if (!p->argv[0])
        return DR_EINVAL; /* unpacked plans have argv[0] (keeper_wire.c) */
    size_t argc = 0;
    while (p->argv[argc])
        argc++;
    p->sh_argv = calloc(argc + 2, sizeof *p->sh_argv);
    if (!p->sh_argv)
        return DR_ENOMEM;
    p->sh_argv[0] = "/bin/sh";
    for (size_t i = 1; i < argc; i++)
        p->sh_argv[i + 1] = p->argv[i];
    const char *file = p->argv[0];
    if (strchr(file, '/')) {
        p->cands = calloc(1, sizeof *p->cands);
        if (!p->cands || !(p->cands[0] = dr_strdup(file)))
            return DR_ENOMEM;
        p->ncands = 1;
        return 0;
    }
    const char *path = "/bin:/usr/bin";
    for (char **e = p->envp; *e; e++)
        if (strncmp(*e, "PATH=", 5) == 0)
            path = *e + 5;
    size_t n = 1;
    for (const char *c = path; *c; c++)
        n += *c == ':';
    p->cands = calloc(n, sizeof *p->cands);
    if (!p->cands)
        return DR_ENOMEM;
    for (const char *d = path;;) {
        size_t k = strcspn(d, ":");
        size_t len = (k ? k : 1) + 1 + strlen(file) + 1;
        char *c = malloc(len);
        if (!c)
            return DR_ENOMEM;
        snprintf(c, len, "%.*s/%s", k ? (int)k : 1, k ? d : ".", file);
        p->cands[p->ncands++] = c;
        if (!d[k])
            break;
        d += k + 1;
    }
    return 0;
}

/* The checkpoint directory and the checkpoint to resume from: the
 * agent's, so after the LAUNCH's entries (a DROVER_RESTART_FROM the
 * submitter exported is dropped: only a verified checkpoint is named).
 * Tasks of srun's steps carry no directory: they inherit both from the
 * batch script through srun. */
static int plan_ckpt(const dr_msg_launch_t *l, const char *restart_from, dr_strvec_t *env)
{
    if (!l->ckpt_dir || !l->ckpt_dir[0])
        return 0; /* a step's task keeps what its srun's environment says */
    dr_agent_env_unset(env, "DROVER_RESTART_FROM");
    if (dr_agent_env_set(env, "DROVER_CHECKPOINT_DIR", l->ckpt_dir) != 0)
        return DR_ENOMEM;
    if (restart_from && dr_agent_env_set(env, "DROVER_RESTART_FROM", restart_from) != 0)
        return DR_ENOMEM;
    return 0;
}

/* Build argv, envp, identity and the cgroup; on failure *detail says why. */
static int plan_prepare(dr_agent_t *a, dr_agent_job_t *j, const dr_msg_launch_t *l,
                        const char *restart_from, launch_plan_t *p, char *detail, size_t dlen)
{
    struct passwd pw;
    char pwbuf[4096];
    bool have_pw = false;
    if (l->argc < 1 || !l->argv || !l->argv[0] || !l->argv[0][0]) {
        snprintf(detail, dlen, "empty argv");
        return DR_EINVAL;
    }
    if (plan_identity(a, l, p, &pw, pwbuf, sizeof pwbuf, &have_pw) != 0) {
        snprintf(detail, dlen, "groups of uid %u: out of memory", (unsigned)p->uid);
        return DR_ENOMEM;
    }
    dr_agent_user_t u = {0};
    if (have_pw)
        u = (dr_agent_user_t){pw.pw_name, pw.pw_dir, pw.pw_shell};
    dr_strvec_t env = {0};
    dr_err_t err = {0};
    if (dr_agent_env_build(l, a->name, a->local_addr, a->local_ifname, &u, &env, &err) != 0) {
        snprintf(detail, dlen, "%s", err.msg);
        return DR_EINVAL;
    }
    if (write_hostfile(a, j, p, &env, detail, dlen) != 0) {
        dr_strvec_free(&env);
        return DR_EIO;
    }
    /* where the job finds (and leaves) its input shards; the agent's, so
     * after the LAUNCH's entries */
    if (a->cache_dir && dr_agent_env_set(&env, "DROVER_CACHE_DIR", a->cache_dir) != 0) {
        dr_strvec_free(&env);
        snprintf(detail, dlen, "env: out of memory");
        return DR_ENOMEM;
    }
    if (plan_srun(a, &env) != 0 || plan_ckpt(l, restart_from, &env) != 0) {
        dr_strvec_free(&env);
        snprintf(detail, dlen, "env: out of memory");
        return DR_ENOMEM;
    }
    p->envp = calloc(env.n + 1, sizeof *p->envp); /* NULL-terminated for exec */
    if (!p->envp) {
        dr_strvec_free(&env);
        snprintf(detail, dlen, "env: out of memory");
        return DR_ENOMEM;
    }
    memcpy(p->envp, env.v, env.n * sizeof *p->envp);
    free(env.v); /* the strings now belong to envp */
    p->argv = calloc((size_t)l->argc + 2, sizeof *p->argv);
    if (!p->argv) {
        snprintf(detail, dlen, "argv: out of memory");
        return DR_ENOMEM;
    }
    for (uint32_t i = 0; i < l->argc; i++)
        p->argv[i] = l->argv[i];
    if (l->script && write_script(a, j, l, p, detail, dlen) != 0)
        return DR_EIO;
    if (dr_agent_cg_probe(a)) {
        if (dr_agent_cg_create(a, j, l->cpu_milli, l->mem_mb, &p->procs_fd, &err) != 0)
            dr_agent_log(a, "job %llu.%u rank %u: no cgroup (%s); runs without limits",
                         (unsigned long long)j->job, j->gen, j->rank, err.msg);
    }
    return 0;
}

/* In the rank's keeper (keeper.c): vfork, the child's set-up, exec. */
pid_t dr_agent_plan_spawn(const dr_agent_plan_t *pl, char *detail, size_t dlen)
{
    launch_plan_t p = {.cwd = pl->cwd,
                       .out = pl->out,
                       .err = pl->err,
                       .cgroup = pl->cgroup,
                       .argv0 = pl->argv0,
                       .argv = pl->argv,
                       .envp = pl->envp,
                       .change_ids = pl->change_ids,
                       .uid = (uid_t)pl->uid,
                       .gid = (gid_t)pl->gid,
                       .groups = (gid_t *)pl->groups,
                       .ngroups = (int)pl->ngroups,
                       .procs_fd = -1,
                       .fail_fd = -1};
    _Static_assert(sizeof(gid_t) == sizeof(uint32_t), "gid_t is 32 bits");
    pid_t pid = -1;
    int pfd[2] = {-1, -1};
    if (plan_search(&p) != 0) {
        snprintf(detail, dlen, "argv: out of memory");
        goto out;
    }
    if (pl->cgroup[0]) {
        char procs[PATH_MAX + 16];
        snprintf(procs, sizeof procs, "%s/cgroup.procs", pl->cgroup);
        p.procs_fd = open(procs, O_WRONLY | O_CLOEXEC);
        if (p.procs_fd < 0) {
            snprintf(detail, dlen, "cgroup %s: %s", procs, strerror(errno));
            goto out;
        }
    }
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        snprintf(detail, dlen, "pipe: %s", strerror(errno));
        goto out;
    }
    p.fail_fd = pfd[1];
    /* vfork, not fork: the child only makes system calls on memory the
     * parent prepared and ends in exec or _exit, as vfork requires (the
     * parent waits until then).  The keeper installed no handler, and the
     * child resets dispositions and the mask before exec.  posix_spawn
     * cannot drop to the job's user and groups or join its cgroup, which
     * is why the child is ours (the analyzer's advice). */
    pid = vfork(); // NOLINT(clang-analyzer-security.insecureAPI.vfork)
    if (pid == 0)
        child_run(&p); // NOLINT(clang-analyzer-unix.Vfork): system calls only, then exec or _exit
    int fork_errno = errno;
    close(pfd[1]);
    if (pid < 0) {
        snprintf(detail, dlen, "fork: %s", strerror(fork_errno));
        goto out;
    }
    launch_fail_t f = {0};
    ssize_t r;
    do
        r = read(pfd[0], &f, sizeof f);
    while (r < 0 && errno == EINTR);
    if (r != 0) {
        /* the child reported a failed step and exits 127 */
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (r == (ssize_t)sizeof f)
            fail_detail(&p, &f, detail, dlen);
        else
            snprintf(detail, dlen, "child setup failed before exec");
        pid = -1;
    }
out:
    if (pfd[0] >= 0)
        close(pfd[0]);
    if (p.procs_fd >= 0)
        close(p.procs_fd);
    for (size_t i = 0; i < p.ncands; i++)
        free(p.cands[i]);
    free(p.cands);
    free(p.sh_argv);
    return pid;
}

/* The plan as a SPAWN frame for the keeper. */
static int plan_pack(const launch_plan_t *p, const dr_agent_job_t *j, const dr_msg_launch_t *l,
                     uint8_t **out, size_t *outlen, char *detail, size_t dlen)
{
    char *json = NULL;
    size_t jlen = 0;
    dr_err_t err = {0};
    if (dr_msg_launch_encode(l, &json, &jlen, &err) != 0) {
        snprintf(detail, dlen, "launch: %s", err.msg);
        return -1;
    }
    dr_agent_plan_t pl = {.job = j->job,
                          .gen = j->gen,
                          .rank = j->rank,
                          .uid = (uint32_t)p->uid,
                          .gid = (uint32_t)p->gid,
                          .grace_ns = j->grace_ns > 0 ? j->grace_ns : 0,
                          .change_ids = p->change_ids,
                          .ngroups = p->change_ids ? (uint32_t)p->ngroups : 0,
                          .groups = (uint32_t *)p->groups,
                          .argv = p->argv,
                          .envp = p->envp,
                          .cwd = l->cwd ? l->cwd : "",
                          .out = l->out_path ? l->out_path : "",
                          .err = l->err_path ? l->err_path : "",
                          .cgroup = j->cgroup ? j->cgroup : "",
                          .argv0 = l->argv[0],
                          .json = json,
                          .json_len = jlen};
    int rc = dr_keep_plan_pack(&pl, out, outlen);
    free(json);
    if (rc != 0)
        snprintf(detail, dlen, "launch: %s", rc == DR_ELIMIT ? "too large" : "out of memory");
    return rc == 0 ? 0 : -1;
}

int dr_agent_launch(dr_agent_t *a, const dr_msg_launch_t *l, dr_err_t *err)
{
    if (a->stopping || dr_agent_job_find(a, l->job, l->gen, l->rank) ||
        dr_agent_ckpt_holds(a, l->job, l->gen, l->rank) || !l->ckpt_dir || !l->ckpt_dir[0])
        return dr_agent_launch_now(a, l, NULL, err); /* which logs the first three */
    return dr_agent_ckpt_launch(a, l, err);
}

int dr_agent_launch_now(dr_agent_t *a, const dr_msg_launch_t *l, const char *restart_from,
                        dr_err_t *err)
{
    if (a->stopping) {
        dr_agent_log(a, "job %llu.%u rank %u: launch ignored: the agent is stopping",
                     (unsigned long long)l->job, l->gen, l->rank);
        return 1;
    }
    if (dr_agent_job_find(a, l->job, l->gen, l->rank) ||
        dr_agent_ckpt_holds(a, l->job, l->gen, l->rank)) {
        dr_agent_log(a, "job %llu.%u rank %u: launch ignored: already held",
                     (unsigned long long)l->job, l->gen, l->rank);
        return 1;
    }
    dr_agent_job_t *j = dr_agent_job_add(a, l->job, l->gen, l->rank);
    if (!j)
        return dr_err_set(err, DR_ENOMEM, "launch: out of memory");
    j->grace_ns = l->grace_ns;
    j->step = l->step;
    /* a root agent never runs a rank as root unless the site said so: a
     * controller (or whoever holds its key) cannot make this node run a
     * command with every right on it by naming uid 0 */
    if (geteuid() == 0 && l->uid == 0 && !l->allow_root && !a->allow_root_jobs)
        return launch_failed(a, j,
                             "refused: the job would run as root (uid 0) and neither the site "
                             "(AllowRootJobs=YES) nor this agent (--allow-root-jobs) allows it");
    launch_plan_t p = {.l = l, .procs_fd = -1, .fail_fd = -1};
    char detail[PATH_MAX + 128];
    if (plan_prepare(a, j, l, restart_from, &p, detail, sizeof detail) != 0) {
        plan_free(&p);
        return launch_failed(a, j, detail);
    }
    j->uid = p.uid;
    uint8_t *spawn = NULL;
    size_t slen = 0;
    int rc = plan_pack(&p, j, l, &spawn, &slen, detail, sizeof detail);
    plan_free(&p);
    if (rc == 0)
        rc = dr_agent_keeper_spawn(a, j, spawn, slen, detail, sizeof detail);
    free(spawn);
    if (rc != 0)
        return launch_failed(a, j, detail);
    j->running = true;
    dr_agent_log(a, "job %llu.%u rank %u/%u: started pid %ld: %s%s [boot %.3f]",
                 (unsigned long long)j->job, j->gen, j->rank, l->nranks, (long)j->pid, l->argv[0],
                 l->argc > 1 ? " ..." : "", (double)j->start_boot_ns / 1e9);
    if (l->time_limit_ns > 0)
        dr_agent_job_arm_limit(a, j, l->time_limit_ns);
    dr_agent_warn_arm(a, j, l, 0);
    if (a->notify)
        a->notify(a, j, true);
    if (dr_agent_ready_start(a, j, l->port, l->ready) != 0)
        dr_agent_log(a, "job %llu.%u rank %u: out of memory: no readiness check",
                     (unsigned long long)j->job, j->gen, j->rank);
    return 0;
}
