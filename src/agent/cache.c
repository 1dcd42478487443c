/* cache.c - the node's data cache: the shards it holds.
 *
 * With --cache-dir DIR, every entry directly in DIR (a file or a directory,
 * whatever a job wrote there) is a shard this node holds, named by the
 * entry's name.  The agent reports the set in REGISTER and, when it
 * changed, in the next HEARTBEAT, so that the scheduler sends a task to the
 * node already holding its input.  Reading the directory on every
 * heartbeat tick is what keeps the report current without inotify; the
 * set is bounded (count, name length and bytes in all) so that one
 * message always carries it. */
#include "agent/agent.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

int dr_agent_cache_scan(const char *dir, dr_strvec_t *out, size_t *skipped, dr_err_t *err)
{
    *skipped = 0;
    dr_strvec_free(out);
    DIR *d = opendir(dir);
    if (!d)
        return dr_err_set(err, DR_EIO, "cache %s: %s", dir, strerror(errno));
    size_t bytes = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
            continue;
        if (n[0] == '.') { /* hidden: a job's partial copy ("cp x .x.tmp && mv") */
            continue;
        }
        size_t len = strlen(n);
        if (len > DR_MSG_MAX_SHARD_NAME || out->n >= DR_MSG_MAX_SHARDS ||
            bytes + len + 3 > DR_MSG_MAX_SHARD_BYTES) {
            ++*skipped;
            continue;
        }
        if (dr_strvec_push(out, n) != 0) {
            closedir(d);
            dr_strvec_free(out);
            return dr_err_set(err, DR_ENOMEM, "cache %s: out of memory", dir);
        }
        bytes += len + 3; /* "name", in JSON */
    }
    int rerr = errno;
    closedir(d);
    if (rerr) {
        dr_strvec_free(out);
        return dr_err_set(err, DR_EIO, "cache %s: %s", dir, strerror(rerr));
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, cmp_str);
    return DR_OK;
}

bool dr_agent_cache_same(const dr_strvec_t *a, const dr_strvec_t *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i], b->v[i]) != 0)
            return false;
    return true;
}
