/* sweep.c - find and kill every process a rank left behind, without cgroups.
 *
 * A rank's keeper kills the rank's process group, but a process can leave
 * the group (setpgid) or the session (setsid) and double-fork so that its
 * parent is gone: without a cgroup nothing tied it to the rank, and it ran
 * on after cancel, the time limit or the lease (issue 21).  The keeper is a
 * child subreaper (PR_SET_CHILD_SUBREAPER, keeper.c), so such an orphan
 * becomes the keeper's child instead of init's: every process the rank ever
 * started is a descendant of the keeper, found here by walking /proc's
 * parent links.  (A process cannot leave that tree short of a setuid
 * helper or a new PID namespace; with cgroup v2 delegated the cgroup is
 * used as well.)
 *
 * dr_agent_sweep signals the descendants once (a SIGTERM for the grace);
 * dr_agent_sweep_kill SIGKILLs them and reaps, round after round (a fork
 * between rounds is caught by the next), until none is left or the bound
 * is reached. */
#include "agent/agent.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    pid_t pid, ppid, pgrp;
    bool zombie;
} pp_t;

/* The parent of a process from /proc/PID/stat ("pid (comm) state ppid ...";
 * comm may hold spaces and parentheses: the last ')' ends it); false if it
 * is gone. */
static bool parent_of(const char *name, pp_t *out)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", name);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *e = strrchr(buf, ')');
    char st;
    long pp, pg;
    if (!e || sscanf(e + 1, " %c %ld %ld", &st, &pp, &pg) != 3)
        return false;
    out->pid = (pid_t)atol(name);
    out->ppid = (pid_t)pp;
    out->pgrp = (pid_t)pg;
    out->zombie = st == 'Z' || st == 'X';
    return true;
}

static int by_pid(const void *a, const void *b)
{
    pid_t x = ((const pp_t *)a)->pid, y = ((const pp_t *)b)->pid;
    return (x > y) - (x < y);
}

/* Every process with its parent, sorted by pid; *n entries.  NULL when
 * /proc cannot be read (or out of memory). */
static pp_t *table(size_t *n)
{
    DIR *d = opendir("/proc");
    if (!d)
        return NULL;
    size_t cap = 256;
    pp_t *t = malloc(cap * sizeof *t);
    *n = 0;
    struct dirent *de;
    while (t && (de = readdir(d)) != NULL) {
        pp_t e;
        if (!isdigit((unsigned char)de->d_name[0]) || !parent_of(de->d_name, &e))
            continue;
        if (*n == cap) {
            pp_t *g = realloc(t, 2 * cap * sizeof *t);
            if (!g) {
                free(t);
                t = NULL;
                break;
            }
            t = g;
            cap *= 2;
        }
        t[(*n)++] = e;
    }
    closedir(d);
    if (t)
        qsort(t, *n, sizeof *t, by_pid);
    return t;
}

/* Is pid a descendant of root (its parent, or its parent's, ... is root)?
 * Bounded by the table's size: a cycle (pids reused while /proc was read)
 * cannot loop. */
static bool descends(const pp_t *t, size_t n, pid_t pid, pid_t root)
{
    for (size_t hops = 0; hops <= n && pid > 1; hops++) {
        pp_t key = {.pid = pid};
        const pp_t *e = bsearch(&key, t, n, sizeof *t, by_pid);
        if (!e)
            return false;
        if (e->ppid == root)
            return true;
        pid = e->ppid;
    }
    return false;
}

/* Signal root's descendants (not root itself, nor those in process group
 * `skip` when it is not 0: a killpg reached them already, and a trapped
 * signal must not arrive twice); reap those of them that are root's own
 * children and dead, but never `keep`.  Returns how many living ones were
 * signalled. */
static size_t sweep(pid_t root, int sig, pid_t keep, pid_t skip)
{
    size_t n = 0, hit = 0;
    pp_t *t = table(&n);
    if (!t)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].pid == root || !descends(t, n, t[i].pid, root))
            continue;
        if (!t[i].zombie && (!skip || t[i].pgrp != skip) && kill(t[i].pid, sig) == 0)
            hit++;
        if (t[i].ppid == root && t[i].pid != keep && root == getpid())
            (void)waitpid(t[i].pid, NULL, WNOHANG);
    }
    free(t);
    return hit;
}

size_t dr_agent_sweep(pid_t root, int sig, pid_t keep, pid_t skip_pgrp)
{
    return sweep(root, sig, keep, skip_pgrp);
}

size_t dr_agent_sweep_kill(pid_t root, pid_t keep, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        if (!sweep(root, SIGKILL, keep, 0))
            return 0;
        /* the killed die and are reparented to us (the subreaper): the
         * next round reaps them, and catches what forked meanwhile */
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return sweep(root, SIGKILL, keep, 0);
}
