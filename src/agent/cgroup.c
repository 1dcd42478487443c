/* cgroup.c - one cgroup v2 directory per job rank, for limits and for
 * killing everything a job started, even processes that left its process
 * group.
 *
 * Layout, under the agent's own cgroup <own> (from /proc/self/cgroup):
 *
 *   <own>/drover/agent                 the agent itself
 *   <own>/drover/job_<id>_<gen>_<rank> one per rank
 *
 * cgroup v2 forbids processes in a cgroup that hands controllers to its
 * children ("no internal processes"), so the agent first moves itself into
 * the leaf <own>/drover/agent; only then can <own> and <own>/drover enable
 * the memory and cpu controllers.  Run under systemd, the unit needs
 * Delegate=yes for <own> to be ours to split.  Every step is tried, never
 * assumed: where the hierarchy is not cgroup2 or not writable the agent logs
 * once and falls back to process groups (no limits). */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define CG_CPU_PERIOD_US 100000

/* Write a short string to dir/file; 0 or -errno. */
static int cg_write(const char *dir, const char *file, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t n = strlen(text);
    ssize_t w = write(fd, text, n);
    int e = w == (ssize_t)n ? 0 : (w < 0 ? -errno : -EIO);
    close(fd);
    return e;
}

/* The agent's cgroup path ("/..." relative to the mount) from /proc/self/cgroup. */
static int cg_own_path(char *out, size_t outlen)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return -errno;
    char line[PATH_MAX + 8];
    int rc = -ENOENT;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3) != 0)
            continue;
        line[strcspn(line, "\n")] = '\0';
        int n = snprintf(out, outlen, "%s", line + 3);
        rc = n >= 0 && (size_t)n < outlen ? 0 : -ENAMETOOLONG;
        break;
    }
    fclose(f);
    return rc;
}

static int cg_unavailable(dr_agent_t *a, const char *fmt, ...) DR_PRINTF(2, 3);

static int cg_unavailable(dr_agent_t *a, const char *fmt, ...)
{
    char why[PATH_MAX + 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    dr_agent_log(a, "cgroups: unavailable (%s); jobs run without limits, killed by process group",
                 why);
    a->cg_state = -1;
    return 0;
}

/* Enable +memory and +cpu for the children of dir; true if both took. */
static bool cg_enable(dr_agent_t *a, const char *dir)
{
    bool ok = true;
    static const char *const ctl[] = {"+memory", "+cpu"};
    for (size_t i = 0; i < 2; i++) {
        int e = cg_write(dir, "cgroup.subtree_control", ctl[i]);
        if (e) {
            dr_agent_log(a, "cgroups: %s/cgroup.subtree_control: cannot enable %s: %s", dir,
                         ctl[i] + 1, strerror(-e));
            ok = false;
        }
    }
    return ok;
}

int dr_agent_cg_probe(dr_agent_t *a)
{
    if (a->cg_state)
        return a->cg_state > 0;
    struct statfs sf;
    if (statfs(a->cg_mount, &sf) != 0)
        return cg_unavailable(a, "%s: %s", a->cg_mount, strerror(errno));
    if ((unsigned long)sf.f_type != CGROUP2_SUPER_MAGIC)
        return cg_unavailable(a, "%s is not a cgroup2 mount", a->cg_mount);
    char own[PATH_MAX];
    int e = cg_own_path(own, sizeof own);
    if (e)
        return cg_unavailable(a, "/proc/self/cgroup: %s",
                              e == -ENOENT ? "no cgroup2 entry" : strerror(-e));
    /* a restarted agent may still sit in the leaf an earlier one made */
    size_t ol = strlen(own);
    const char *leaf = "/drover/agent";
    if (ol >= strlen(leaf) && strcmp(own + ol - strlen(leaf), leaf) == 0)
        own[ol - strlen(leaf)] = '\0';
    if (strcmp(own, "/") == 0)
        own[0] = '\0';
    char owndir[PATH_MAX], agentdir[PATH_MAX + 16];
    snprintf(owndir, sizeof owndir, "%s%s", a->cg_mount, own);
    int n = snprintf(a->cg_base, sizeof a->cg_base, "%s/drover", owndir);
    if (n < 0 || (size_t)n >= sizeof a->cg_base - 64)
        return cg_unavailable(a, "cgroup path too long");
    if (mkdir(a->cg_base, 0755) != 0 && errno != EEXIST)
        return cg_unavailable(a, "mkdir %s: %s", a->cg_base, strerror(errno));
    snprintf(agentdir, sizeof agentdir, "%s/agent", a->cg_base);
    if (mkdir(agentdir, 0755) != 0 && errno != EEXIST)
        return cg_unavailable(a, "mkdir %s: %s", agentdir, strerror(errno));
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    e = cg_write(agentdir, "cgroup.procs", pid);
    if (e)
        return cg_unavailable(a, "moving the agent into %s: %s", agentdir, strerror(-e));
    a->cg_state = 1;
    /* limits need the controllers on the way down; job cgroups are still
     * worth having without them (kill everything a job started) */
    a->cg_limits = cg_enable(a, owndir) && cg_enable(a, a->cg_base);
    dr_agent_log(a, "cgroups: job ranks in %s/job_* (%s)", a->cg_base,
                 a->cg_limits ? "memory and cpu limits" : "no limits: controllers not enabled");
    return 1;
}

int dr_agent_cg_create(dr_agent_t *a, dr_agent_job_t *j, uint32_t cpu_milli, uint64_t mem_mb,
                       int *procs_fd, dr_err_t *err)
{
    *procs_fd = -1;
    if (!dr_agent_cg_probe(a))
        return DR_ENOENT;
    char dir[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s/job_%llu_%u_%u", a->cg_base, (unsigned long long)j->job,
                     j->gen, j->rank);
    if (n < 0 || (size_t)n >= sizeof dir)
        return dr_err_set(err, DR_EINVAL, "cgroup path too long");
    /* a leftover of an earlier incarnation is reused if it is empty */
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return dr_err_set(err, DR_EIO, "mkdir %s: %s", dir, strerror(errno));
    char val[64];
    if (!a->cg_limits)
        mem_mb = cpu_milli = 0; /* the probe said why, once */
    if (mem_mb) {
        snprintf(val, sizeof val, "%llu", (unsigned long long)mem_mb * 1024 * 1024);
        int e = cg_write(dir, "memory.max", val);
        if (e)
            dr_agent_log(a, "job %llu.%u rank %u: memory.max %s: %s (no memory limit)",
                         (unsigned long long)j->job, j->gen, j->rank, val, strerror(-e));
    }
    if (cpu_milli) {
        uint64_t quota = (uint64_t)cpu_milli * CG_CPU_PERIOD_US / 1000;
        if (quota < 1000)
            quota = 1000; /* the kernel's minimum */
        snprintf(val, sizeof val, "%llu %d", (unsigned long long)quota, CG_CPU_PERIOD_US);
        int e = cg_write(dir, "cpu.max", val);
        if (e)
            dr_agent_log(a, "job %llu.%u rank %u: cpu.max %s: %s (no cpu limit)",
                         (unsigned long long)j->job, j->gen, j->rank, val, strerror(-e));
    }
    char procs[PATH_MAX + 16];
    snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
    int fd = open(procs, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        rmdir(dir);
        return dr_err_set(err, DR_EIO, "open %s: %s", procs, strerror(e));
    }
    free(j->cgroup);
    j->cgroup = dr_strdup(dir);
    if (!j->cgroup) {
        close(fd);
        rmdir(dir);
        return dr_err_set(err, DR_ENOMEM, "cgroup: out of memory");
    }
    *procs_fd = fd;
    return 0;
}

void dr_agent_cg_kill(dr_agent_t *a, dr_agent_job_t *j)
{
    if (!j->cgroup)
        return;
    int e = cg_write(j->cgroup, "cgroup.kill", "1");
    if (e != -ENOENT)
        return;
    /* kernels before 5.14 have no cgroup.kill: signal each member */
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/cgroup.procs", j->cgroup);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    long pid;
    while (fscanf(f, "%ld", &pid) == 1)
        if (pid > 0)
            kill((pid_t)pid, SIGKILL);
    fclose(f);
}

bool dr_agent_cg_remove(dr_agent_t *a, dr_agent_job_t *j)
{
    if (!j->cgroup)
        return true;
    if (rmdir(j->cgroup) != 0 && errno != ENOENT)
        return false;
    free(j->cgroup);
    j->cgroup = NULL;
    return true;
}

uint64_t dr_agent_cg_oom_kills(const dr_agent_t *a, const dr_agent_job_t *j)
{
    if (!j->cgroup)
        return 0;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/memory.events", j->cgroup);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    char key[64];
    unsigned long long v, n = 0;
    while (fscanf(f, "%63s %llu", key, &v) == 2)
        if (strcmp(key, "oom_kill") == 0)
            n = v;
    fclose(f);
    return n;
}
