/* seq.c - droverd.seq, the sidecar that keeps job ids and the controller
 * epoch from ever being handed out twice.
 *
 * The store's own counters (meta.next_id, meta.epoch) live in the same WAL
 * as the jobs: a WAL that is lost or damaged after a crash takes the last
 * commits with it, and a restarted droverd would hand their ids (and an
 * epoch the agents already saw) out again.  This small file beside the
 * store says "every id below N may have been handed out, epoch E was used";
 * it is written (temporary file, fsync, rename, fsync of the directory)
 * before any of those ids or that epoch leaves droverd, ids reserved in
 * blocks so that it costs one write per CTLD_SEQ_BLOCK submits.  At start
 * the next id is the larger of the store's and the sidecar's: a jump after
 * a crash is fine, a reuse is not.  It also says a store existed, which is
 * how an emptied or deleted store is told from a first start (store_check.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctld/ctld.h"
#include "ctld/seq.h"

#define SEQ_MAGIC "drover-seq 1"

static void seq_path(const dr_ctld_t *c, char *out, size_t n, const char *suffix)
{
    snprintf(out, n, "%s/droverd.seq%s", c->o.state_dir, suffix);
}

int ctld_seq_read(dr_ctld_t *c, dr_err_t *err)
{
    char path[4200];
    seq_path(c, path, sizeof path, "");
    c->seq_found = false;
    FILE *f = fopen(path, "re");
    if (!f) {
        if (errno == ENOENT)
            return DR_OK;
        return dr_err_set(err, DR_EIO, "%s: %s", path, strerror(errno));
    }
    char magic[32] = "";
    unsigned long long epoch = 0, ids = 0;
    int n = fscanf(f, "%31[^\n]\nepoch %llu\nids_below %llu\n", magic, &epoch, &ids);
    fclose(f);
    if (n != 3 || strcmp(magic, SEQ_MAGIC) != 0 || ids == 0)
        return dr_err_set(err, DR_EIO,
                          "%s: unreadable (not '" SEQ_MAGIC "', 'epoch N', 'ids_below N'): "
                          "it keeps job ids from being reused; if it was damaged, write it "
                          "again with an epoch and ids_below above any ever used "
                          "(docs/operations.md, 'A damaged store')",
                          path);
    c->seq_found = true;
    c->seq_epoch = epoch;
    c->seq_ids_below = ids;
    return DR_OK;
}

int ctld_seq_write(dr_ctld_t *c, uint64_t epoch, uint64_t ids_below, dr_err_t *err)
{
    char path[4200], tmp[4200];
    seq_path(c, path, sizeof path, "");
    seq_path(c, tmp, sizeof tmp, ".tmp");
    char text[128];
    int len = snprintf(text, sizeof text, SEQ_MAGIC "\nepoch %" PRIu64 "\nids_below %" PRIu64 "\n",
                       epoch, ids_below);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return dr_err_set(err, DR_EIO, "%s: %s", tmp, strerror(errno));
    bool ok = write(fd, text, (size_t)len) == len && fsync(fd) == 0;
    int e = errno;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        e = ok ? errno : e;
        unlink(tmp);
        return dr_err_set(err, e == ENOSPC ? DR_ENOSPC : DR_EIO, "%s: %s", path, strerror(e));
    }
    /* the rename itself is durable only once the directory is */
    int dfd = open(c->o.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    c->seq_epoch = epoch;
    c->seq_ids_below = ids_below;
    c->seq_found = true;
    return DR_OK;
}

int ctld_seq_reserve(dr_ctld_t *c, dr_err_t *err)
{
    if (c->next_id <= c->seq_ids_below)
        return DR_OK;
    return ctld_seq_write(c, c->epoch, c->next_id + CTLD_SEQ_BLOCK, err);
}
