/* test_agent_launch.c - the agent's environment building, launching and
 * supervision, run for real: children forked on a libevent loop, their
 * output files, exit codes, time limits, KILLs and the cleanup of whatever
 * a job leaves behind. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/agent.h"
#include "ckpt/ckpt.h"

typedef struct fx {
    struct event_base *base;
    dr_agent_t a;
    char dir[64];
    int nstarted, nended;
    pid_t pid; /* last started */
    int32_t exit_code, signal;
    uint8_t why;
    char detail[512];
    bool timed_out;
    int nwarned; /* warnings the agent sent by itself (warn.c) */
    uint32_t warn_why;
    int nckpt; /* checkpoint reports */
    char ckpt_from[256], ckpt_rej[1024], ckpt_error[512];
    char *logbuf;
    size_t loglen;
} fx_t;

static void fx_notify(dr_agent_t *a, const dr_agent_job_t *j, bool started)
{
    fx_t *fx = a->notify_ctx;
    if (started) {
        fx->nstarted++;
        fx->pid = j->pid;
    } else {
        fx->nended++;
        fx->exit_code = j->exit_code;
        fx->signal = j->signal;
        fx->why = j->why;
        snprintf(fx->detail, sizeof fx->detail, "%s", j->detail);
    }
    event_base_loopbreak(a->base);
}

static void fx_warned(dr_agent_t *a, const dr_agent_job_t *j, uint32_t why, int64_t t_ns)
{
    fx_t *fx = a->notify_ctx;
    (void)j, (void)t_ns;
    fx->nwarned++;
    fx->warn_why = why;
}

static int setup(void **state)
{
    fx_t *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->base = event_base_new();
    assert_non_null(fx->base);
    dr_err_t err = {0};
    assert_int_equal(dr_agent_init(&fx->a, fx->base, "n1", &err), 0);
    fx->a.notify = fx_notify;
    fx->a.notify_warned = fx_warned;
    fx->a.notify_ctx = fx;
    snprintf(fx->dir, sizeof fx->dir, "/tmp/test_agent_XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    /* where this machine has cgroup2 the agent would use it; the tests
     * exercise the process-group fallback everywhere, on a tmp dir */
    fx->a.cg_mount = fx->dir;
    *state = fx;
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    for (size_t i = 0; i < fx->a.njobs; i++)
        if (fx->a.jobs[i]->running)
            (void)dr_agent_job_kill(&fx->a, fx->a.jobs[i], SIGKILL, true);
    fx->a.notify = NULL;
    for (int i = 0; i < 100 && dr_agent_running(&fx->a); i++) {
        usleep(10000);
        dr_agent_reap(&fx->a);
        event_base_loop(fx->base, EVLOOP_NONBLOCK); /* the keepers' end reports */
    }
    if (fx->a.log != stderr)
        fclose(fx->a.log);
    free(fx->logbuf);
    dr_agent_free(&fx->a);
    event_base_free(fx->base);
    chmod(fx->dir, 0700);
    nftw(fx->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(fx);
    return 0;
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    fx_t *fx = arg;
    fx->timed_out = true;
    event_base_loopbreak(fx->base);
}

/* Run the loop until *counter reaches want (false on timeout). */
static bool fx_run_until(fx_t *fx, const int *counter, int want, int timeout_ms)
{
    fx->timed_out = false;
    struct event *t = evtimer_new(fx->base, on_timeout, fx);
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    evtimer_add(t, &tv);
    while (*counter < want && !fx->timed_out)
        event_base_dispatch(fx->base);
    event_free(t);
    return *counter >= want;
}

/* Run the loop for ms milliseconds. */
static void fx_spin(fx_t *fx, int ms)
{
    int never = 0;
    (void)fx_run_until(fx, &never, 1, ms);
}

/* Keep the loop running until kill(target, 0) fails with ESRCH. */
static bool fx_wait_gone(fx_t *fx, pid_t target, int timeout_ms)
{
    for (int t = 0; t < timeout_ms; t += 20) {
        if (kill(target, 0) != 0 && errno == ESRCH)
            return true;
        fx_spin(fx, 20);
    }
    return kill(target, 0) != 0 && errno == ESRCH;
}

static const char *fx_path(const fx_t *fx, const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", fx->dir, name);
    return buf[k];
}

/* Run the loop until DIR/name exists (a job says it is ready). */
static bool fx_wait_file(fx_t *fx, const char *name, int timeout_ms)
{
    struct stat st;
    for (int t = 0; t < timeout_ms; t += 10) {
        if (stat(fx_path(fx, name), &st) == 0)
            return true;
        fx_spin(fx, 10);
    }
    return false;
}

/* sh that ignores SIGTERM (and says so by creating DIR/name), then loops. */
static const char *term_proof(const fx_t *fx, const char *name)
{
    static char buf[2][512];
    static int k;
    k = (k + 1) % 2;
    snprintf(buf[k], sizeof buf[k], "trap '' TERM; touch %s; while :; do sleep 0.05; done",
             fx_path(fx, name));
    return buf[k];
}

/* A LAUNCH of `argv` (NULL-terminated) writing to DIR/out. */
static dr_msg_launch_t mk_launch(const fx_t *fx, uint64_t job, char **argv)
{
    dr_msg_launch_t l = {0};
    l.job = job;
    l.gen = 1;
    l.nranks = 1;
    l.argv = argv;
    while (argv[l.argc])
        l.argc++;
    l.cwd = (char *)fx->dir;
    l.out_path = (char *)fx_path(fx, "out");
    l.err_path = "";
    l.uid = (uint32_t)getuid();
    l.gid = (uint32_t)getgid();
    l.allow_root = true; /* run as root, the tests' jobs are the tester's */
    l.grace_ns = 1000000000LL;
    return l;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- environment ---- */

static void test_env_exact(void **state)
{
    (void)state;
    setenv("DROVER_TEST_LEAK", "1", 1);
    uint32_t gpus[] = {0, 2, 5};
    char *env[] = {"FOO=bar=baz", "PATH=/opt/x/bin", "CUDA_VISIBLE_DEVICES=7", "DROVER_GPUS=9"};
    dr_msg_launch_t l = {.rank = 1, .nranks = 4, .gpus = gpus, .ngpus = 3, .env = env, .nenv = 4};
    dr_agent_user_t u = {"alice", "/home/alice", "/bin/bash"};
    dr_strvec_t sv = {0};
    dr_err_t err = {0};
    assert_int_equal(dr_agent_env_build(&l, "gpu07", "10.0.0.7", "eth1", &u, &sv, &err), 0);
    static const char *const want[][2] = {
        {"PATH", "/opt/x/bin"},
        {"HOME", "/home/alice"},
        {"USER", "alice"},
        {"LOGNAME", "alice"},
        {"SHELL", "/bin/bash"},
        {"FOO", "bar=baz"},
        {"CUDA_VISIBLE_DEVICES", "0,2,5"},
        {"ROCR_VISIBLE_DEVICES", "0,2,5"},
        {"HIP_VISIBLE_DEVICES", "0,2,5"},
        {"DROVER_GPUS", "0,2,5"},
        {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
        {"DROVER_NODE_RANK", "1"},
        {"DROVER_NNODES", "4"},
        {"DROVER_NODENAME", "gpu07"},
        {"DROVER_NODE_ADDR", "10.0.0.7"},
        {"GLOO_SOCKET_IFNAME", "eth1"},
    };
    size_t nwant = sizeof want / sizeof want[0];
    for (size_t i = 0; i < nwant; i++) {
        const char *v = dr_agent_env_get(&sv, want[i][0]);
        if (!v || strcmp(v, want[i][1]) != 0)
            fail_msg("%s: got '%s', want '%s'", want[i][0], v ? v : "(unset)", want[i][1]);
    }
    /* nothing else: no duplicates, nothing of the agent's own environment */
    assert_int_equal(sv.n, nwant);
    assert_null(dr_agent_env_get(&sv, "DROVER_TEST_LEAK"));
    dr_strvec_free(&sv);
    unsetenv("DROVER_TEST_LEAK");
}

static void test_env_cpu_job(void **state)
{
    (void)state;
    dr_msg_launch_t l = {.rank = 0, .nranks = 1};
    dr_strvec_t sv = {0};
    dr_err_t err = {0};
    assert_int_equal(dr_agent_env_build(&l, "c1", NULL, NULL, NULL, &sv, &err), 0);
    /* present and empty: CUDA then hides every GPU */
    const char *vars[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                          "DROVER_GPUS"};
    for (size_t i = 0; i < 4; i++) {
        const char *v = dr_agent_env_get(&sv, vars[i]);
        assert_non_null(v);
        assert_string_equal(v, "");
    }
    assert_string_equal(dr_agent_env_get(&sv, "PATH"), "/usr/local/bin:/usr/bin:/bin");
    assert_string_equal(dr_agent_env_get(&sv, "DROVER_NODE_RANK"), "0");
    assert_string_equal(dr_agent_env_get(&sv, "DROVER_NNODES"), "1");
    assert_null(dr_agent_env_get(&sv, "HOME"));
    assert_null(dr_agent_env_get(&sv, "USER"));
    dr_strvec_free(&sv);
}

static void test_env_bad_entry(void **state)
{
    (void)state;
    char *env[] = {"A=1", "NOEQUALS"};
    dr_msg_launch_t l = {.nranks = 1, .env = env, .nenv = 2};
    dr_strvec_t sv = {0};
    dr_err_t err = {0};
    assert_int_equal(dr_agent_env_build(&l, "c1", NULL, NULL, NULL, &sv, &err), DR_EINVAL);
    assert_string_equal(err.msg, "env[1]: 'NOEQUALS' is not KEY=VALUE");
    assert_int_equal(sv.n, 0);
    char *env2[] = {"=x"};
    l.env = env2;
    l.nenv = 1;
    assert_int_equal(dr_agent_env_build(&l, "c1", NULL, NULL, NULL, &sv, &err), DR_EINVAL);
}

/* ---- launching ---- */

static void test_launch_exit_code(void **state)
{
    fx_t *fx = *state;
    char *argv[] = {"/bin/sh", "-c", "echo hi; echo oops >&2; exit 3", NULL};
    dr_msg_launch_t l = mk_launch(fx, 11, argv);
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_int_equal(fx->nstarted, 1);
    assert_true(fx->pid > 0);
    assert_true(fx_run_until(fx, &fx->nended, 1, 5000));
    assert_int_equal(fx->exit_code, 3);
    assert_int_equal(fx->signal, 0);
    assert_int_equal(fx->why, DR_END_EXIT);
    assert_string_equal(fx->detail, "");
    char *out = tu_read(fx_path(fx, "out"), NULL);
    assert_string_equal(out, "hi\noops\n"); /* err_path "" = stdout */
    free(out);
    /* the end report is kept until the controller ACKs it */
    dr_agent_job_t *j = dr_agent_job_find(&fx->a, 11, 1, 0);
    assert_non_null(j);
    assert_false(j->running);
    assert_true(j->end_ns >= j->start_ns && j->start_ns > 0);
    /* a second LAUNCH of the same rank is ignored, even once it ended */
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 1);
    assert_int_equal(fx->nstarted, 1);
    dr_agent_job_remove(&fx->a, j);
    assert_int_equal(fx->a.njobs, 0);
}

static void test_launch_env_and_files(void **state)
{
    fx_t *fx = *state;
    setenv("DROVER_TEST_LEAK", "leaked", 1);
    char *argv[] = {"sh", "-c", /* found on the job's PATH */
                    "echo \"$CUDA_VISIBLE_DEVICES|$DROVER_NODENAME|$DROVER_NODE_RANK|$JOBVAR|"
                    "${DROVER_TEST_LEAK-unset}|$(pwd)\"; echo to-err >&2; cat; echo end",
                    NULL};
    dr_msg_launch_t l = mk_launch(fx, 12, argv);
    uint32_t gpus[] = {1, 3};
    char *env[] = {"JOBVAR=x y"};
    l.gpus = gpus;
    l.ngpus = 2;
    l.env = env;
    l.nenv = 1;
    l.rank = 2;
    l.nranks = 3;
    l.err_path = (char *)fx_path(fx, "err");
    /* O_APPEND: an existing file is added to, not truncated */
    FILE *f = fopen(fx_path(fx, "out"), "w");
    fputs("old\n", f);
    fclose(f);
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_run_until(fx, &fx->nended, 1, 5000));
    assert_int_equal(fx->exit_code, 0);
    char want[512];
    snprintf(want, sizeof want, "old\n1,3|n1|2|x y|unset|%s\nend\n", fx->dir);
    char *out = tu_read(fx_path(fx, "out"), NULL);
    assert_string_equal(out, want); /* stdin is /dev/null: cat reads nothing */
    free(out);
    char *errs = tu_read(fx_path(fx, "err"), NULL);
    assert_string_equal(errs, "to-err\n");
    free(errs);
    struct stat st;
    assert_int_equal(stat(fx_path(fx, "err"), &st), 0);
    mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0640 & ~mask);
    unsetenv("DROVER_TEST_LEAK");
}

static void expect_launch_failure(fx_t *fx, dr_msg_launch_t *l, const char *detail)
{
    int ended = fx->nended, started = fx->nstarted;
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, l, &err), 0);
    /* reported at once, without the loop */
    assert_int_equal(fx->nended, ended + 1);
    assert_int_equal(fx->nstarted, started);
    assert_int_equal(fx->why, DR_END_LAUNCH);
    assert_string_equal(fx->detail, detail);
    dr_agent_job_t *j = dr_agent_job_find(&fx->a, l->job, l->gen, l->rank);
    assert_non_null(j);
    assert_false(j->running);
    assert_int_equal(dr_agent_running(&fx->a), 0);
}

static void test_launch_failures(void **state)
{
    fx_t *fx = *state;
    char *argv[] = {"/bin/does-not-exist", "x", NULL};
    dr_msg_launch_t l = mk_launch(fx, 21, argv);
    expect_launch_failure(fx, &l, "exec /bin/does-not-exist: No such file or directory");

    char *argv2[] = {"no-such-command-anywhere", NULL};
    l = mk_launch(fx, 22, argv2);
    expect_launch_failure(fx, &l, "exec no-such-command-anywhere: No such file or directory");

    char *argv3[] = {"/bin/true", NULL};
    l = mk_launch(fx, 23, argv3);
    l.cwd = "/nonexistent-dir";
    expect_launch_failure(fx, &l, "chdir /nonexistent-dir: No such file or directory");

    l = mk_launch(fx, 24, argv3);
    char out[256];
    snprintf(out, sizeof out, "%s/no/such/dir/out", fx->dir);
    l.out_path = out;
    char want[300];
    snprintf(want, sizeof want, "open %s: No such file or directory", out);
    expect_launch_failure(fx, &l, want);

    char *argv4[] = {"/bin/true", NULL};
    l = mk_launch(fx, 25, argv4);
    char *env[] = {"BROKEN"};
    l.env = env;
    l.nenv = 1;
    expect_launch_failure(fx, &l, "env[0]: 'BROKEN' is not KEY=VALUE");
    /* nothing was left to reap: every failed child was waited for */
    fx_spin(fx, 50);
    assert_int_equal(fx->nended, 5);
}

/* As root, a job runs as its user; its output file belongs to the user. */
static void test_launch_as_user(void **state)
{
    fx_t *fx = *state;
    if (geteuid() != 0)
        skip();
    chmod(fx->dir, 0711);
    char *argv[] = {"/bin/sh", "-c", "echo $(id -u):$(id -g):$USER", NULL};
    dr_msg_launch_t l = mk_launch(fx, 31, argv);
    l.uid = 65534;
    l.gid = 65534;
    /* the user may not write root's directory: the file is opened after setuid */
    char want[300];
    snprintf(want, sizeof want, "open %s: Permission denied", l.out_path);
    expect_launch_failure(fx, &l, want);

    const char *sub = fx_path(fx, "pub");
    assert_int_equal(mkdir(sub, 0777), 0);
    chmod(sub, 0777);
    char out[256];
    snprintf(out, sizeof out, "%s/out", sub);
    l = mk_launch(fx, 32, argv);
    l.uid = 65534;
    l.gid = 65534;
    l.cwd = (char *)sub;
    l.out_path = out;
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_run_until(fx, &fx->nended, fx->nended + 1, 5000));
    assert_int_equal(fx->exit_code, 0);
    char *text = tu_read(out, NULL);
    tu_assert_contains(text, "65534:65534:");
    free(text);
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    assert_int_equal(st.st_uid, 65534);
}

/* A root agent refuses a rank as uid 0 unless the LAUNCH says the site
 * allows it (AllowRootJobs=YES) or the agent was started with
 * --allow-root-jobs: a controller (or a holder of its key) cannot make a
 * node run a command as root by naming uid 0. */
static void test_launch_root_refused(void **state)
{
    fx_t *fx = *state;
    if (geteuid() != 0)
        skip();
    char *argv[] = {"/bin/sh", "-c", "touch ran", NULL};
    dr_msg_launch_t l = mk_launch(fx, 35, argv);
    l.uid = l.gid = 0;
    l.allow_root = false;
    expect_launch_failure(fx, &l,
                          "refused: the job would run as root (uid 0) and neither the site "
                          "(AllowRootJobs=YES) nor this agent (--allow-root-jobs) allows it");
    struct stat st;
    assert_int_not_equal(stat(fx_path(fx, "ran"), &st), 0);
    fx->a.allow_root_jobs = true;
    l = mk_launch(fx, 36, argv);
    l.uid = l.gid = 0;
    l.allow_root = false;
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_run_until(fx, &fx->nended, fx->nended + 1, 5000));
    assert_int_equal(fx->exit_code, 0);
    fx->a.allow_root_jobs = false;
}

/* ---- supervision ---- */

static void test_time_limit(void **state)
{
    fx_t *fx = *state;
    char *argv[] = {"sleep", "10", NULL};
    dr_msg_launch_t l = mk_launch(fx, 41, argv);
    l.time_limit_ns = 200 * 1000000LL;
    dr_err_t err = {0};
    double t0 = now_s();
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    pid_t pgid = fx->pid;
    assert_int_equal(getpgid(pgid), pgid); /* its own process group */
    assert_true(fx_run_until(fx, &fx->nended, 1, 5000));
    double dt = now_s() - t0;
    assert_true(dt >= 0.19 && dt < 2.0);
    assert_int_equal(fx->why, DR_END_TIMEOUT);
    assert_int_equal(fx->signal, SIGTERM);
    assert_int_equal(fx->exit_code, -1);
    errno = 0;
    assert_int_equal(kill(-pgid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

/* A job that ignores SIGTERM is killed when the grace period is over. */
static void test_time_limit_grace(void **state)
{
    fx_t *fx = *state;
    char *argv[] = {"/bin/sh", "-c", (char *)term_proof(fx, "ready"), NULL};
    dr_msg_launch_t l = mk_launch(fx, 42, argv);
    l.time_limit_ns = 400 * 1000000LL; /* time for sh to set its trap */
    l.grace_ns = 300 * 1000000LL;
    dr_err_t err = {0};
    double t0 = now_s();
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    pid_t pgid = fx->pid;
    assert_true(fx_wait_file(fx, "ready", 3000));
    assert_int_equal(fx->nended, 0);
    assert_true(fx_run_until(fx, &fx->nended, 1, 5000));
    double dt = now_s() - t0;
    assert_true(dt >= 0.69 && dt < 3.0);
    assert_int_equal(fx->why, DR_END_TIMEOUT);
    assert_int_equal(fx->signal, SIGKILL);
    assert_true(fx_wait_gone(fx, -pgid, 2000));
}

static void test_grandchild_killed(void **state)
{
    fx_t *fx = *state;
    char script[512];
    snprintf(script, sizeof script, "sleep 30 & echo $! > %s/bg.pid; exit 0", fx->dir);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    dr_msg_launch_t l = mk_launch(fx, 51, argv);
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_run_until(fx, &fx->nended, 1, 5000));
    assert_int_equal(fx->exit_code, 0);
    assert_int_equal(fx->why, DR_END_EXIT);
    char *text = tu_read(fx_path(fx, "bg.pid"), NULL);
    pid_t bg = (pid_t)atol(text);
    free(text);
    assert_true(bg > 1);
    assert_true(fx_wait_gone(fx, bg, 2000));
    assert_true(fx_wait_gone(fx, -fx->pid, 2000));
}

static void test_kill(void **state)
{
    fx_t *fx = *state;
    char *argv[] = {"sleep", "10", NULL};
    dr_msg_launch_t l = mk_launch(fx, 61, argv);
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    l.rank = 1;
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_int_equal(dr_agent_running(&fx->a), 2);
    /* another generation of the same job is not this one */
    dr_msg_kill_t k = {.job = 61, .gen = 2, .signal = SIGTERM, .grace_ns = 1000000000LL};
    assert_int_equal(dr_agent_kill(&fx->a, &k), 0);
    k.gen = 1;
    k.reason = "scancel";
    assert_int_equal(dr_agent_kill(&fx->a, &k), 2);
    assert_true(fx_run_until(fx, &fx->nended, 2, 5000));
    assert_int_equal(fx->why, DR_END_KILLED);
    assert_int_equal(fx->signal, SIGTERM);
    /* both reports are kept; a second KILL finds nothing to do */
    assert_int_equal(fx->a.njobs, 2);
    assert_int_equal(dr_agent_kill(&fx->a, &k), 0);
    dr_msg_kill_t unknown = {.job = 999, .gen = 1, .signal = SIGTERM};
    assert_int_equal(dr_agent_kill(&fx->a, &unknown), 0);
}

/* ---- --signal (warn.c) ---- */

/* sh that appends `tag` to DIR/name on SIGUSR1, says it is ready by
 * creating DIR/ready_name, then loops. */
static const char *usr1_trap(const fx_t *fx, const char *tag, const char *name,
                             const char *ready_name)
{
    static char buf[2][768];
    static int k;
    k = (k + 1) % 2;
    snprintf(buf[k], sizeof buf[k],
             "trap 'echo %s >> %s' USR1; touch %s; while :; do sleep 0.05; done", tag,
             fx_path(fx, name), fx_path(fx, ready_name));
    return buf[k];
}

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int n = 0, ch;
    while ((ch = fgetc(f)) != EOF)
        n += ch == '\n';
    fclose(f);
    return n;
}

/* --signal=USR1@1 with a 1.5 s limit: the trap runs about 0.5 s in, once,
 * and is reported as the limit's warning; the limit still ends it. */
static void test_warn_before_limit(void **state)
{
    fx_t *fx = *state;
    char *argv[] = {"/bin/sh", "-c", (char *)usr1_trap(fx, "w", "warned", "ready"), NULL};
    dr_msg_launch_t l = mk_launch(fx, 71, argv);
    l.time_limit_ns = 1500 * 1000000LL;
    l.signal = SIGUSR1;
    l.signal_secs = 1;
    dr_err_t err = {0};
    double t0 = now_s();
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_wait_file(fx, "ready", 3000));
    assert_true(fx_wait_file(fx, "warned", 3000));
    double dt = now_s() - t0;
    assert_true(dt >= 0.45 && dt < 1.4);
    assert_int_equal(fx->nwarned, 1);
    assert_int_equal(fx->warn_why, DR_SIG_LIMIT);
    assert_int_equal(fx->nended, 0);
    assert_true(fx_run_until(fx, &fx->nended, 1, 5000));
    assert_int_equal(fx->why, DR_END_TIMEOUT);
    assert_int_equal(count_lines(fx_path(fx, "warned")), 1);
    assert_int_equal(fx->nwarned, 1);
}

/* --checkpoint-every 300 ms: a round every 300 ms from the start, each
 * reported; none after the end. */
static void test_warn_ckpt_rounds(void **state)
{
    fx_t *fx = *state;
    char *argv[] = {"/bin/sh", "-c", (char *)usr1_trap(fx, "c", "rounds", "ready"), NULL};
    dr_msg_launch_t l = mk_launch(fx, 72, argv);
    l.signal = SIGUSR1;
    l.signal_secs = 60; /* no time limit: no limit warning */
    l.ckpt_every_ns = 300 * 1000000LL;
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_wait_file(fx, "ready", 3000));
    fx_spin(fx, 1050);
    int n = fx->nwarned;
    assert_true(n >= 2 && n <= 4);
    assert_int_equal(fx->warn_why, DR_SIG_CKPT);
    dr_msg_kill_t k = {.job = 72, .gen = 1, .signal = SIGTERM, .grace_ns = 1000000000LL};
    assert_int_equal(dr_agent_kill(&fx->a, &k), 1);
    assert_true(fx_run_until(fx, &fx->nended, 1, 5000));
    fx_spin(fx, 400);
    assert_int_equal(fx->nwarned, n);                         /* the rounds stopped with the rank */
    assert_true(count_lines(fx_path(fx, "rounds")) >= n - 1); /* a trap may race the kill */
}

/* The controller's SIGNAL: without B: the whole process group gets it (a
 * child with a trap of its own too), with B: the main process alone;
 * another generation of the job gets nothing. */
static void test_warn_signal_batch(void **state)
{
    fx_t *fx = *state;
    char inner[2][768], outer[2][1800];
    for (int b = 0; b < 2; b++) {
        snprintf(inner[b], sizeof inner[b], "%s",
                 usr1_trap(fx, "child", b ? "gb" : "ga", b ? "cb" : "ca"));
        snprintf(outer[b], sizeof outer[b],
                 "trap 'echo main >> %s' USR1; /bin/sh -c \"%s\" & "
                 "while :; do sleep 0.05; done",
                 fx_path(fx, b ? "gb" : "ga"), inner[b]);
    }
    char *argv_a[] = {"/bin/sh", "-c", outer[0], NULL};
    char *argv_b[] = {"/bin/sh", "-c", outer[1], NULL};
    dr_msg_launch_t la = mk_launch(fx, 73, argv_a), lb = mk_launch(fx, 74, argv_b);
    la.signal = lb.signal = SIGUSR1;
    lb.signal_batch = true;
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &la, &err), 0);
    assert_int_equal(dr_agent_launch(&fx->a, &lb, &err), 0);
    assert_true(fx_wait_file(fx, "ca", 3000) && fx_wait_file(fx, "cb", 3000));
    fx_spin(fx, 100); /* the outer traps are set before the children start */
    dr_msg_signal_t m = {.job = 73, .gen = 2, .signal = SIGUSR1, .why = DR_SIG_PREEMPT};
    assert_int_equal(dr_agent_signal(&fx->a, &m), 0);
    m.gen = 1;
    assert_int_equal(dr_agent_signal(&fx->a, &m), 1);
    m.job = 74;
    m.why = DR_SIG_DRAIN;
    assert_int_equal(dr_agent_signal(&fx->a, &m), 1);
    fx_spin(fx, 400);
    char *ga = tu_read(fx_path(fx, "ga"), NULL), *gb = tu_read(fx_path(fx, "gb"), NULL);
    assert_true(strstr(ga, "main") && strstr(ga, "child"));
    assert_true(strstr(gb, "main") && !strstr(gb, "child"));
    free(ga);
    free(gb);
    assert_int_equal(fx->nwarned, 0); /* asked for: the controller records it itself */
}

/* The time limit and a KILL race: the first cause is what is reported. */
static void test_first_cause_sticks(void **state)
{
    fx_t *fx = *state;
    char *argv[] = {"/bin/sh", "-c", (char *)term_proof(fx, "ready"), NULL};
    dr_msg_launch_t l = mk_launch(fx, 62, argv);
    l.time_limit_ns = 300 * 1000000LL; /* time for sh to set its trap */
    l.grace_ns = 5 * 1000000000LL;
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_wait_file(fx, "ready", 3000));
    dr_agent_job_t *j = dr_agent_job_find(&fx->a, 62, 1, 0);
    for (int t = 0; t < 3000 && !j->killing; t += 10)
        fx_spin(fx, 10);
    /* the limit fired; TERM is ignored, the grace runs */
    assert_true(j->killing && j->running);
    assert_int_equal(fx->nended, 0);
    dr_msg_kill_t k = {.job = 62, .gen = 1, .signal = SIGKILL, .grace_ns = 0};
    assert_int_equal(dr_agent_kill(&fx->a, &k), 1);
    assert_true(fx_run_until(fx, &fx->nended, 1, 5000));
    assert_int_equal(fx->why, DR_END_TIMEOUT);
    assert_int_equal(fx->signal, SIGKILL);
}

static void test_stop_kills_everything(void **state)
{
    fx_t *fx = *state;
    char *argv[] = {"sleep", "30", NULL};
    char *argv2[] = {"/bin/sh", "-c", (char *)term_proof(fx, "ready"), NULL};
    dr_err_t err = {0};
    dr_msg_launch_t l = mk_launch(fx, 71, argv);
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    pid_t p1 = fx->pid;
    l = mk_launch(fx, 72, argv2);
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    pid_t p2 = fx->pid;
    assert_true(fx_wait_file(fx, "ready", 3000));
    fx->a.notify = NULL; /* the loop itself must end */
    double t0 = now_s();
    dr_agent_stop(&fx->a, 0);
    event_base_dispatch(fx->base);
    double dt = now_s() - t0;
    /* the TERM-ignoring one needs the 2 s grace */
    assert_true(dt >= 1.9 && dt < 4.0);
    assert_int_equal(dr_agent_running(&fx->a), 0);
    assert_int_equal(fx->a.exit_code, 0);
    for (size_t i = 0; i < fx->a.njobs; i++)
        assert_int_equal(fx->a.jobs[i]->why, DR_END_KILLED);
    errno = 0;
    assert_true(kill(-p1, 0) == -1 && errno == ESRCH);
    assert_true(fx_wait_gone(fx, -p2, 1000));
    /* stopping: launches are refused */
    l = mk_launch(fx, 73, argv);
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 1);
}

/* A rank already in a long KILL grace gets SIGKILL at the stop's 2 s. */
static void test_stop_shortens_grace(void **state)
{
    fx_t *fx = *state;
    char *argv[] = {"/bin/sh", "-c", (char *)term_proof(fx, "ready"), NULL};
    dr_err_t err = {0};
    dr_msg_launch_t l = mk_launch(fx, 74, argv);
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_wait_file(fx, "ready", 3000));
    dr_msg_kill_t k = {.job = 74, .gen = 1, .signal = SIGTERM, .grace_ns = 60 * 1000000000LL};
    assert_int_equal(dr_agent_kill(&fx->a, &k), 1);
    fx->a.notify = NULL;
    double t0 = now_s();
    dr_agent_stop(&fx->a, 0);
    event_base_dispatch(fx->base);
    double dt = now_s() - t0;
    assert_true(dt >= 1.9 && dt < 4.0);
    assert_int_equal(dr_agent_running(&fx->a), 0);
    assert_int_equal(fx->a.jobs[0]->signal, SIGKILL);
}

/* SIGTERM to the agent is wired to the orderly stop. */
static void test_sigterm_stops(void **state)
{
    fx_t *fx = *state;
    char *argv[] = {"sleep", "30", NULL};
    dr_err_t err = {0};
    dr_msg_launch_t l = mk_launch(fx, 75, argv);
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    pid_t pid = fx->pid;
    fx->a.notify = NULL;
    raise(SIGTERM); /* caught by the agent's signal event, not fatal */
    double t0 = now_s();
    event_base_dispatch(fx->base);
    assert_true(now_s() - t0 < 1.5);
    assert_true(fx->a.stopping);
    assert_int_equal(fx->a.exit_code, 0);
    assert_int_equal(dr_agent_running(&fx->a), 0);
    errno = 0;
    assert_true(kill(-pid, 0) == -1 && errno == ESRCH);
}

static void test_stop_with_nothing_running(void **state)
{
    fx_t *fx = *state;
    dr_agent_stop(&fx->a, 1);
    double t0 = now_s();
    event_base_dispatch(fx->base);
    assert_true(now_s() - t0 < 0.5);
    assert_int_equal(fx->a.exit_code, 1);
}

/* Without cgroup2 the agent says so once and still runs jobs. */
static void test_cgroups_unavailable_logged_once(void **state)
{
    fx_t *fx = *state;
    fx->a.log = open_memstream(&fx->logbuf, &fx->loglen);
    char *argv[] = {"/bin/true", NULL};
    dr_err_t err = {0};
    for (uint64_t id = 81; id <= 82; id++) {
        dr_msg_launch_t l = mk_launch(fx, id, argv);
        l.mem_mb = 1024;
        l.cpu_milli = 1500;
        assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
        assert_true(fx_run_until(fx, &fx->nended, (int)(id - 80), 5000));
        assert_int_equal(fx->exit_code, 0);
    }
    fflush(fx->a.log);
    char want[256];
    snprintf(want, sizeof want,
             "drover-agent[n1]: cgroups: unavailable (%s is not a cgroup2 mount); jobs run "
             "without limits, killed by process group\n",
             fx->dir);
    tu_assert_contains(fx->logbuf, want);
    assert_ptr_equal(strstr(strstr(fx->logbuf, "cgroups:") + 1, "cgroups:"), NULL);
    assert_int_equal(fx->a.cg_state, -1);
}

/* Opt-in (it changes the machine's cgroup tree): DROVER_TEST_CGROUP2=MOUNT
 * names a writable cgroup2 mount.  A grandchild that leaves the job's
 * process group with setsid is still killed, through the rank's cgroup,
 * and the cgroup is removed afterwards.  The test process moves itself
 * back and removes the agent's directories at the end. */
static void test_cgroup2_kills_escapees(void **state)
{
    fx_t *fx = *state;
    const char *mount = getenv("DROVER_TEST_CGROUP2");
    if (!mount || !mount[0])
        skip();
    char own[PATH_MAX] = "";
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[PATH_MAX - 8];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "0::", 3) == 0)
            snprintf(own, sizeof own, "%s", line + 3);
    if (f)
        fclose(f);
    own[strcspn(own, "\n")] = '\0';
    fx->a.cg_mount = mount;
    assert_int_equal(dr_agent_cg_probe(&fx->a), 1);
    char script[512];
    snprintf(script, sizeof script, "setsid sleep 30 & echo $! > %s/bg.pid; sleep 0.2; exit 0",
             fx->dir);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    dr_msg_launch_t l = mk_launch(fx, 91, argv);
    l.mem_mb = 512;
    l.cpu_milli = 500;
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    dr_agent_job_t *j = dr_agent_job_find(&fx->a, 91, 1, 0);
    assert_non_null(j->cgroup);
    char cg[PATH_MAX];
    snprintf(cg, sizeof cg, "%s", j->cgroup);
    assert_true(fx_run_until(fx, &fx->nended, 1, 5000));
    char *text = tu_read(fx_path(fx, "bg.pid"), NULL);
    pid_t bg = (pid_t)atol(text);
    free(text);
    assert_true(bg > 1);
    assert_true(getpgid(bg) != fx->pid || errno == ESRCH); /* it left the group */
    assert_true(fx_wait_gone(fx, bg, 3000));
    struct stat st;
    for (int t = 0; t < 3000 && stat(cg, &st) == 0; t += 20)
        fx_spin(fx, 20);
    assert_int_not_equal(stat(cg, &st), 0);
    /* put the test process back where it was */
    char back[PATH_MAX * 2], pid[32];
    snprintf(back, sizeof back, "%s%s/cgroup.procs", mount, strcmp(own, "/") ? own : "");
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    int fd = open(back, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, pid, strlen(pid)), (ssize_t)strlen(pid));
    close(fd);
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/agent", fx->a.cg_base);
    assert_int_equal(rmdir(dir), 0);
    assert_int_equal(rmdir(fx->a.cg_base), 0);
}

static void test_state_dir(void **state)
{
    fx_t *fx = *state;
    const char *dir = fx_path(fx, "state");
    dr_err_t err = {0};
    fx->a.epoch = 42;
    assert_int_equal(dr_agent_state_init(&fx->a, dir, &err), 0);
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0711); /* users pass through to jobs/UID only */
    char *text = tu_read(fx_path(fx, "state/agent.pid"), NULL);
    char want[64];
    snprintf(want, sizeof want, "pid %ld\nepoch 42\n", (long)getpid());
    assert_string_equal(text, want);
    free(text);
    /* existing: fine; a file in the way: an error naming it */
    assert_int_equal(dr_agent_state_init(&fx->a, dir, &err), 0);
    /* a second agent on the same directory is refused, naming the first */
    dr_agent_t other;
    assert_int_equal(dr_agent_init(&other, fx->base, "n2", &err), 0);
    assert_int_equal(dr_agent_state_init(&other, dir, &err), DR_ESTATE);
    tu_assert_contains(err.msg, "in use by another drover-agent");
    snprintf(want, sizeof want, "(pid %ld)", (long)getpid());
    tu_assert_contains(err.msg, want);
    dr_agent_free(&other);
    const char *file = fx_path(fx, "out");
    FILE *f = fopen(file, "w");
    fclose(f);
    assert_int_equal(dr_agent_state_init(&fx->a, file, &err), DR_EIO);
    tu_assert_contains(err.msg, "not a directory");
}

/* ---- checkpoints (ckpt.c) ---- */

static void fx_notify_ckpt(dr_agent_t *a, const dr_msg_ckpt_t *m)
{
    fx_t *fx = a->notify_ctx;
    fx->nckpt++;
    snprintf(fx->ckpt_from, sizeof fx->ckpt_from, "%s", m->from);
    snprintf(fx->ckpt_error, sizeof fx->ckpt_error, "%s", m->error);
    fx->ckpt_rej[0] = '\0';
    for (uint32_t i = 0; i < m->nrejected; i++)
        snprintf(fx->ckpt_rej + strlen(fx->ckpt_rej), sizeof fx->ckpt_rej - strlen(fx->ckpt_rej),
                 "%s|", m->rejected[i]);
}

/* DIR/ckpt/NAME with one file, committed by job 7 (the record the agent
 * made at its first run: owner NULL for none, as a stranger's commit) */
static const dr_ckpt_owner_t fx_owner7 = {.job = 7, .nonce = {1, 2, 3}};
static void fx_commit_as(const fx_t *fx, const char *name, int64_t t, const dr_ckpt_owner_t *owner)
{
    char d[512], f[600];
    snprintf(d, sizeof d, "%s/ckpt", fx->dir);
    if (mkdir(d, 0700) == 0) {
        dr_ckpt_owner_t o = fx_owner7;
        o.uid = (uint32_t)getuid();
        char text[160];
        dr_ckpt_owner_format(&o, text, sizeof text);
        snprintf(f, sizeof f, "%s/" DR_CKPT_OWNER_FILE, d);
        FILE *fp = fopen(f, "w");
        assert_non_null(fp);
        fputs(text, fp);
        fclose(fp);
    }
    snprintf(d, sizeof d, "%s/ckpt/%s", fx->dir, name);
    assert_int_equal(mkdir(d, 0700), 0);
    snprintf(f, sizeof f, "%s/w.bin", d);
    FILE *fp = fopen(f, "w");
    assert_non_null(fp);
    fprintf(fp, "weights of %s\n", name);
    fclose(fp);
    dr_ckpt_commit_opts_t o = {.now_ns = t, .owner = owner};
    dr_err_t err = {0};
    if (dr_ckpt_commit(d, &o, NULL, &err) != DR_OK)
        fail_msg("commit %s: %s", d, err.msg);
}

static void fx_commit(const fx_t *fx, const char *name, int64_t t)
{
    dr_ckpt_owner_t o = fx_owner7;
    o.uid = (uint32_t)getuid();
    fx_commit_as(fx, name, t, &o);
}

/* Two ranks of a generation wait for one verification, then start with
 * DROVER_RESTART_FROM at the newest checkpoint that verifies; the report
 * names the rejected newer one. */
static void test_ckpt_restart_from(void **state)
{
    fx_t *fx = *state;
    fx->a.notify_ckpt = fx_notify_ckpt;
    fx_commit(fx, "step-1", 1);
    fx_commit(fx, "step-2", 2);
    /* newer, but not this job's: no owner (committed outside the job), and
     * another job's record (planted, or copied from another directory) */
    fx_commit_as(fx, "step-3", 3, NULL);
    dr_ckpt_owner_t other = {.job = 8, .uid = (uint32_t)getuid(), .nonce = {1, 2, 3}};
    fx_commit_as(fx, "step-4", 4, &other);
    other.job = 7;
    other.nonce[0] = 9;
    fx_commit_as(fx, "step-5", 5, &other);
    char f[300];
    snprintf(f, sizeof f, "%s/ckpt/step-2/w.bin", fx->dir);
    assert_int_equal(truncate(f, 3), 0);
    char dir[300];
    snprintf(dir, sizeof dir, "%s/ckpt", fx->dir);
    char *argv[] = {"sh", "-c", "echo \"$DROVER_CHECKPOINT_DIR ${DROVER_RESTART_FROM:-none}\"",
                    NULL};
    char *env[] = {"DROVER_RESTART_FROM=/forged"};
    dr_msg_launch_t l = mk_launch(fx, 7, argv);
    l.ckpt_dir = dir;
    l.env = env;
    l.nenv = 1;
    l.nranks = 2;
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    l.rank = 1;
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_int_equal(fx->nstarted, 0); /* not before the verification answered */
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 1); /* a repeated LAUNCH: ignored */
    assert_true(fx_run_until(fx, &fx->nended, 2, 10000));
    assert_int_equal(fx->nstarted, 2);
    assert_int_equal(fx->nckpt, 1); /* one verification for both ranks */
    assert_string_equal(fx->ckpt_from, "step-1");
    tu_assert_contains(fx->ckpt_rej, "step-2: w.bin: 3 bytes, the manifest says 18 (truncated)|");
    tu_assert_contains(fx->ckpt_rej,
                       "step-3: not committed by this job: its manifest names no owner");
    tu_assert_contains(fx->ckpt_rej, "step-4: not committed by this job: its manifest names job 8");
    tu_assert_contains(fx->ckpt_rej, "step-5: not committed by this job: its manifest's nonce");
    size_t n;
    char *out = tu_read(fx_path(fx, "out"), &n);
    char want[1300];
    snprintf(want, sizeof want, "%s %s/step-1\n%s %s/step-1\n", dir, dir, dir, dir);
    assert_string_equal(out, want);
    free(out);
}

/* A first generation: the directory is made, nothing to resume from, and
 * the user's own DROVER_RESTART_FROM does not get through. */
static void test_ckpt_first_generation(void **state)
{
    fx_t *fx = *state;
    fx->a.notify_ckpt = fx_notify_ckpt;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/a/b/7", fx->dir);
    char *argv[] = {"sh", "-c",
                    "echo \"${DROVER_RESTART_FROM:-none}\"; test -d \"$DROVER_CHECKPOINT_DIR\"",
                    NULL};
    char *env[] = {"DROVER_RESTART_FROM=/forged"};
    dr_msg_launch_t l = mk_launch(fx, 7, argv);
    l.ckpt_dir = dir;
    l.env = env;
    l.nenv = 1;
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_run_until(fx, &fx->nended, 1, 10000));
    assert_int_equal(fx->exit_code, 0);
    assert_int_equal(fx->nckpt, 1);
    assert_string_equal(fx->ckpt_from, "");
    size_t n;
    char *out = tu_read(fx_path(fx, "out"), &n);
    assert_string_equal(out, "none\n");
    free(out);
}

/* A KILL while the checkpoints are read: the rank ends unstarted. */
static void test_ckpt_killed_while_verifying(void **state)
{
    fx_t *fx = *state;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/ckpt", fx->dir);
    char *argv[] = {"sleep", "30", NULL};
    dr_msg_launch_t l = mk_launch(fx, 9, argv);
    l.ckpt_dir = dir;
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    dr_msg_kill_t k = {.job = 9, .gen = 1, .signal = SIGTERM, .grace_ns = 1000000000LL};
    assert_int_equal(dr_agent_kill(&fx->a, &k), 1);
    assert_int_equal(fx->nended, 1);
    assert_int_equal(fx->nstarted, 0);
    assert_int_equal(fx->why, DR_END_KILLED);
    tu_assert_contains(fx->detail, "killed while its checkpoints were being verified");
    fx_spin(fx, 100);
    assert_int_equal(fx->nstarted, 0); /* and the answer, when it comes, starts nothing */
}

/* A checkpoint directory that cannot be made: the launch fails, saying so
 * (starting afresh could overwrite checkpoints the node cannot reach). */
static void test_ckpt_dir_unusable(void **state)
{
    fx_t *fx = *state;
    fx->a.notify_ckpt = fx_notify_ckpt;
    char dir[300];
    FILE *f = fopen(fx_path(fx, "plain"), "w");
    fclose(f);
    snprintf(dir, sizeof dir, "%s/plain/ckpt", fx->dir);
    char *argv[] = {"true", NULL};
    dr_msg_launch_t l = mk_launch(fx, 11, argv);
    l.ckpt_dir = dir;
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_run_until(fx, &fx->nended, 1, 10000));
    assert_int_equal(fx->nstarted, 0);
    assert_int_equal(fx->why, DR_END_LAUNCH);
    tu_assert_contains(fx->detail, "checkpoint directory: ");
    tu_assert_contains(fx->detail, "Not a directory");
    tu_assert_contains(fx->ckpt_error, "Not a directory");
}

/* A checkpoint directory the agent did not make for the job (no owner
 * record, or another job's, or a link in its place) is never used: the
 * launch fails saying why, and nothing starts afresh there. */
static void test_ckpt_dir_not_the_jobs(void **state)
{
    fx_t *fx = *state;
    fx->a.notify_ckpt = fx_notify_ckpt;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/pre", fx->dir);
    assert_int_equal(mkdir(dir, 0700), 0); /* made before the job, by hand */
    char *argv[] = {"true", NULL};
    dr_msg_launch_t l = mk_launch(fx, 12, argv);
    l.ckpt_dir = dir;
    dr_err_t err = {0};
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_run_until(fx, &fx->nended, 1, 10000));
    assert_int_equal(fx->nstarted, 0);
    assert_int_equal(fx->why, DR_END_LAUNCH);
    tu_assert_contains(fx->detail,
                       "has no .drover-job record: it existed before the job's first run");
    /* another job's record */
    char rec[400];
    snprintf(rec, sizeof rec, "%s/" DR_CKPT_OWNER_FILE, dir);
    FILE *f = fopen(rec, "w");
    assert_non_null(f);
    fprintf(f, "drover-job 1\njob 99\nuid %u\nnonce 000102030405060708090a0b0c0d0e0f\n",
            (unsigned)getuid());
    fclose(f);
    l.gen = 2;
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_run_until(fx, &fx->nended, 2, 10000));
    tu_assert_contains(fx->detail, "its record names job 99");
    /* a link where the job's directory goes */
    char link[300];
    snprintf(link, sizeof link, "%s/ln", fx->dir);
    assert_int_equal(symlink(dir, link), 0);
    l.ckpt_dir = link;
    l.gen = 3;
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_run_until(fx, &fx->nended, 3, 10000));
    tu_assert_contains(fx->detail, "is a link or not a directory");
    assert_int_equal(fx->nstarted, 0);
}

/* ---- keepers (keeper.c): ranks outlive their agent ---- */

/* Each frame type survives encode and decode; what is malformed is
 * refused with a reason, and a partial frame asks for more. */
static void test_keeper_wire(void **state)
{
    (void)state;
    const char *json = "{\"job\":1}";
    dr_keep_msg_t in[] = {
        {.type = DR_KEEP_STARTED, .pid = 4242, .start_ns = 17, .start_boot_ns = 5},
        {.type = DR_KEEP_FAILED, .text = "exec x: No such file", .text_len = 20},
        {.type = DR_KEEP_ENDED, .exit_code = -1, .signal = SIGKILL, .end_ns = 99},
        {.type = DR_KEEP_SIGNAL, .sig = SIGUSR1, .group = true},
        {.type = DR_KEEP_RELEASE},
        {.type = DR_KEEP_ADOPT,
         .pid = 7,
         .start_ns = 1,
         .start_boot_ns = 2,
         .ended = true,
         .exit_code = 3,
         .signal = 0,
         .end_ns = 4,
         .why = DR_END_LEASE,
         .uid = 1000,
         .cgroup = "/sys/fs/cgroup/x",
         .cgroup_len = 16,
         .text = json,
         .text_len = strlen(json)},
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        uint8_t *b;
        size_t n, used = 0;
        assert_int_equal(dr_keep_encode(&in[i], &b, &n), 0);
        dr_keep_msg_t m;
        dr_err_t err = {0};
        assert_int_equal(dr_keep_decode(b, n - 1, &used, &m, &err), 0); /* partial */
        assert_int_equal(dr_keep_decode(b, n, &used, &m, &err), 1);
        assert_int_equal(used, n);
        assert_int_equal(m.type, in[i].type);
        assert_int_equal(m.pid, in[i].pid);
        assert_int_equal(m.start_boot_ns, in[i].start_boot_ns);
        assert_int_equal(m.exit_code, in[i].exit_code);
        assert_int_equal(m.signal, in[i].signal);
        assert_int_equal(m.end_ns, in[i].end_ns);
        assert_int_equal(m.sig, in[i].sig);
        assert_int_equal(m.group, in[i].group);
        assert_int_equal(m.ended, in[i].ended);
        assert_int_equal(m.why, in[i].why);
        assert_int_equal(m.uid, in[i].uid);
        assert_int_equal(m.cgroup_len, in[i].cgroup_len);
        assert_int_equal(m.text_len, in[i].text_len);
        if (m.text_len)
            assert_memory_equal(m.text, in[i].text, m.text_len);
        if (m.cgroup_len)
            assert_memory_equal(m.cgroup, in[i].cgroup, m.cgroup_len);
        /* one field out of range at a time */
        if (in[i].type == DR_KEEP_SIGNAL) {
            b[DR_KEEP_HDR] = 0; /* signal 0 */
            assert_int_equal(dr_keep_decode(b, n, &used, &m, &err), -1);
            assert_non_null(strstr(err.msg, "signal out of range"));
        }
        if (in[i].type == DR_KEEP_ENDED) {
            b[0] = 1; /* a 16 MiB body for a fixed 16-byte one */
            assert_int_equal(dr_keep_decode(b, n, &used, &m, &err), -1);
            assert_non_null(strstr(err.msg, "wrong length"));
        }
        if (in[i].type == DR_KEEP_ADOPT) {
            b[DR_KEEP_HDR + 24 + 1 + 4 + 4 + 8 + 1 + 4 + 2 + 3] = '\0'; /* NUL in the cgroup path */
            assert_int_equal(dr_keep_decode(b, n, &used, &m, &err), -1);
            assert_non_null(strstr(err.msg, "NUL"));
        }
        b[4] = 42;
        assert_int_equal(dr_keep_decode(b, n, &used, &m, &err), -1);
        assert_non_null(strstr(err.msg, "unknown type"));
        free(b);
    }
}

/* The agent goes away without releasing its keepers (as after kill -9):
 * the rank runs on; a new agent on the same state directory takes it over
 * (same pid, still running, its LAUNCH back), can stop it, and gets its
 * end through the keeper. */
static void test_keeper_adopt(void **state)
{
    fx_t *fx = *state;
    dr_err_t err = {0};
    char sd[128];
    snprintf(sd, sizeof sd, "%s/state", fx->dir);
    assert_int_equal(dr_agent_state_init(&fx->a, sd, &err), 0);
    /* a lease the keeper waits out (without one it would kill the rank at once) */
    dr_agent_lease_start(&fx->a, 30000000000LL, dr_agent_boot_ns());
    char *argv[] = {"sh", "-c", (char *)term_proof(fx, "ready"), NULL};
    dr_msg_launch_t l = mk_launch(fx, 71, argv);
    l.time_limit_ns = 60000000000LL;
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_wait_file(fx, "ready", 5000));
    dr_agent_job_t *j = dr_agent_job_find(&fx->a, 71, 1, 0);
    assert_non_null(j);
    pid_t pid = j->pid, kp = j->keep_pid;
    assert_true(kp > 0 && kp != pid);
    /* the first agent ends, leaving the rank (its keeper is its child:
     * reaped here later) */
    fx->a.leave_jobs = true;
    dr_agent_free(&fx->a);
    assert_int_equal(dr_agent_init(&fx->a, fx->base, "n1", &err), 0);
    fx->a.notify = fx_notify;
    fx->a.notify_ctx = fx;
    fx->a.cg_mount = fx->dir;
    assert_int_equal(kill(pid, 0), 0); /* still running */
    assert_int_equal(dr_agent_state_init(&fx->a, sd, &err), 0);
    struct stat st;
    char sock[256];
    snprintf(sock, sizeof sock, "%s/keep/71.1.0.sock", sd);
    for (int i = 0; i < 200 && stat(sock, &st) != 0; i++)
        usleep(10000);
    assert_int_equal(stat(sock, &st), 0); /* the keeper waits to be taken over */
    assert_int_equal(dr_agent_keeper_adopt(&fx->a), 1);
    j = dr_agent_job_find(&fx->a, 71, 1, 0);
    assert_non_null(j);
    assert_true(j->running && j->adopted);
    assert_int_equal(j->pid, pid);
    assert_non_null(j->limit_ev);    /* its time limit goes on */
    assert_true(fx->a.lease_ns > 0); /* and so does the lease */
    for (int i = 0; i < 200 && stat(sock, &st) == 0; i++)
        usleep(10000);
    assert_int_not_equal(stat(sock, &st), 0); /* taken: the socket is gone */
    /* stopped through its keeper: the rank ignores SIGTERM, SIGKILL after grace */
    dr_agent_job_signal(&fx->a, j, SIGTERM, 200000000LL, DR_END_KILLED);
    assert_true(fx_run_until(fx, &fx->nended, 1, 5000));
    assert_int_equal(fx->signal, SIGKILL);
    assert_int_equal(fx->why, DR_END_KILLED);
    /* released, the keeper exits (reaped here: it was our child) */
    dr_agent_job_remove(&fx->a, j);
    assert_true(fx_wait_gone(fx, kp, 3000));
}

/* No state directory: nobody could take the rank over, so a keeper whose
 * agent went away kills it at once. */
static void test_keeper_orphan_no_state(void **state)
{
    fx_t *fx = *state;
    dr_err_t err = {0};
    dr_agent_lease_start(&fx->a, 30000000000LL, dr_agent_boot_ns());
    char *argv[] = {"sh", "-c", (char *)term_proof(fx, "ready"), NULL};
    dr_msg_launch_t l = mk_launch(fx, 72, argv);
    assert_int_equal(dr_agent_launch(&fx->a, &l, &err), 0);
    assert_true(fx_wait_file(fx, "ready", 5000));
    dr_agent_job_t *j = dr_agent_job_find(&fx->a, 72, 1, 0);
    pid_t pid = j->pid, kp = j->keep_pid;
    fx->a.leave_jobs = true;
    dr_agent_free(&fx->a);
    assert_int_equal(dr_agent_init(&fx->a, fx->base, "n1", &err), 0);
    assert_true(fx_wait_gone(fx, pid, 3000));
    assert_true(fx_wait_gone(fx, kp, 3000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_exact),
        cmocka_unit_test(test_keeper_wire),
        cmocka_unit_test_setup_teardown(test_keeper_adopt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keeper_orphan_no_state, setup, teardown),
        cmocka_unit_test(test_env_cpu_job),
        cmocka_unit_test(test_env_bad_entry),
        cmocka_unit_test_setup_teardown(test_launch_exit_code, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_env_and_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_as_user, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_root_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_limit_grace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grandchild_killed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_warn_before_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_warn_ckpt_rounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_warn_signal_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_cause_sticks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_kills_everything, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_shortens_grace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_with_nothing_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cgroups_unavailable_logged_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cgroup2_kills_escapees, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ckpt_restart_from, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ckpt_first_generation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ckpt_dir_not_the_jobs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ckpt_killed_while_verifying, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ckpt_dir_unusable, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
