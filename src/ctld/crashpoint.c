/* crashpoint.c - named points where droverd kills itself, for the tests
 * that prove a controller crash loses no accepted job and runs none twice
 * (tests/integration/test_cluster_crash.sh).
 *
 * droverd --test-crash-at NAME[:N] arms one point (only that explicit
 * flag: no environment a production droverd inherits arms one): the N-th
 * time (default the first) the code reaches it, the process raises SIGKILL
 * - no clean-up, no flush, nothing written after it, as a real crash.  A
 * point "after the commit" (ctld_crash_after_commit) is reached where its
 * change is decided and fires right after the turn's COMMIT, before any
 * reply or frame of that turn has gone out.  Unarmed, a point costs one
 * pointer compare (CTLD_CRASH_POINT, crashpoint.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "ctld/ctld.h"
#include "ctld/agent_link.h"
#include "ctld/crashpoint.h"

const char *ctld_crash_at;       /* the armed point's name, NULL when none */
static char crash_name[64];      /* its storage */
static unsigned long crash_n;    /* fire on this reach */
static unsigned long crash_seen; /* reaches so far */
static bool crash_pending;       /* fire after the next commit */

int ctld_crash_init(const char *v, dr_err_t *err)
{
    if (!v || !v[0])
        return DR_OK;
    const char *colon = strchr(v, ':');
    size_t len = colon ? (size_t)(colon - v) : strlen(v);
    crash_n = 1;
    if (colon) {
        char *end = NULL;
        errno = 0;
        crash_n = strtoul(colon + 1, &end, 10);
        if (errno || !end || *end || crash_n == 0)
            return dr_err_set(err, DR_EINVAL, "--test-crash-at: N in NAME:N must be 1 or more");
    }
    if (len == 0 || len >= sizeof crash_name)
        return dr_err_set(err, DR_EINVAL, "--test-crash-at: a point's name of 1 to %zu characters",
                          sizeof crash_name - 1);
    memcpy(crash_name, v, len);
    crash_name[len] = '\0';
    ctld_crash_at = crash_name;
    ctld_log("test only: --test-crash-at armed: SIGKILL at crash point %s (reach %lu)", crash_name,
             crash_n);
    return DR_OK;
}

bool ctld_crash_due(const char *name)
{
    if (strcmp(name, crash_name) != 0)
        return false;
    return ++crash_seen == crash_n;
}

/* What is already written to an agent's socket buffer is sent (a crash
 * after some frames went out: the kernel has them). */
static void flush_agents(dr_ctld_t *c)
{
    for (ctld_agent_t *a = c ? c->agents : NULL; a; a = a->next) {
        struct evbuffer *out = a->bev ? bufferevent_get_output(a->bev) : NULL;
        evutil_socket_t fd = a->bev ? bufferevent_getfd(a->bev) : -1;
        while (out && fd >= 0 && evbuffer_get_length(out) > 0)
            if (evbuffer_write(out, fd) <= 0)
                break;
    }
}

void ctld_crash_now(dr_ctld_t *c, const char *name)
{
    flush_agents(c);
    /* one write(2): stderr is the test's evidence that the point was reached */
    char line[128];
    int n = snprintf(line, sizeof line, "droverd: crash point %s reached: SIGKILL\n", name);
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, line, (size_t)n);
        (void)w; /* nothing to do about a lost line: the kill comes all the same */
    }
    raise(SIGKILL);
    abort(); /* not reached */
}

void ctld_crash_after_commit(const char *name)
{
    if (ctld_crash_at && ctld_crash_due(name))
        crash_pending = true;
}

void ctld_crash_committed(dr_ctld_t *c)
{
    if (crash_pending)
        ctld_crash_now(c, crash_name);
}
