/* ckpt.c - committing, verifying, choosing and pruning checkpoints (the
 * manifest's format is manifest.c's, the walking and hashing tree.c's).
 *
 * Durability: a commit fsyncs every file it hashed, writes the manifest
 * to a temporary name, fsyncs it, renames it into place and fsyncs the
 * directory and its parent, so after a crash either the old state or the
 * whole new manifest is there, and the data it vouches for is on disk. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt/ckpt.h"

const char *dr_ckpt_state_name(dr_ckpt_state_t s)
{
    switch (s) {
    case DR_CKPT_UNCOMMITTED: return "uncommitted";
    case DR_CKPT_TORN: return "torn";
    case DR_CKPT_COMMITTED: return "committed";
    case DR_CKPT_VERIFIED: return "verified";
    case DR_CKPT_REJECTED: return "rejected";
    }
    return "?";
}

static int fsync_path(const char *path, dr_err_t *err)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return dr_err_set(err, DR_EIO, "%s: %s", path, strerror(errno));
    int rc =
        fsync(fd) == 0 ? DR_OK : dr_err_set(err, DR_EIO, "%s: fsync: %s", path, strerror(errno));
    close(fd);
    return rc;
}

/* dir's parent ("." for a name without a slash). */
static void parent_of(const char *dir, char *out, size_t len)
{
    snprintf(out, len, "%s", dir);
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        out[--n] = '\0';
    char *s = strrchr(out, '/');
    if (!s)
        snprintf(out, len, ".");
    else if (s == out)
        out[1] = '\0';
    else
        *s = '\0';
}

static const char *base_of(const char *dir, char *buf, size_t len)
{
    snprintf(buf, len, "%s", dir);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    char *s = strrchr(buf, '/');
    return s ? s + 1 : buf;
}

int dr_ckpt_read_manifest(const char *dir, dr_ckpt_manifest_t *m, dr_err_t *err)
{
    memset(m, 0, sizeof *m);
    char path[DR_CKPT_MAX_PATH + 64];
    snprintf(path, sizeof path, "%s/%s", dir, DR_CKPT_MANIFEST);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        /* (the codes are returned as constants: the analyzer then knows
         * that *m is only used after a success) */
        int none = errno == ENOENT;
        dr_err_set(err, DR_EIO, "%s: %s", DR_CKPT_MANIFEST,
                   none ? "none (not committed)" : strerror(errno));
        if (err)
            err->code = none ? DR_ENOENT : DR_EIO;
        return none ? DR_ENOENT : DR_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)DR_CKPT_MAX_TEXT) {
        close(fd);
        dr_err_set(err, DR_EINVAL, "%s: not a regular file of at most %u bytes", DR_CKPT_MANIFEST,
                   DR_CKPT_MAX_TEXT);
        return DR_EINVAL;
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *b = malloc(n + 1);
    if (!b) {
        close(fd);
        dr_err_set(err, DR_ENOMEM, "%s: out of memory", DR_CKPT_MANIFEST);
        return DR_ENOMEM;
    }
    while (got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    int rc = dr_ckpt_manifest_parse(m, b, got, err);
    free(b);
    if (rc != DR_OK) {
        dr_ckpt_manifest_free(m);
        return DR_EINVAL;
    }
    return DR_OK;
}

/* The highest seq among the checkpoints beside dir (0 when none). */
static uint64_t sibling_seq(const char *parent, const char *self)
{
    dr_ckpt_list_t l = {0};
    dr_err_t e = {0};
    uint64_t max = 0;
    if (dr_ckpt_list(parent, &l, &e) == DR_OK)
        for (size_t i = 0; i < l.n; i++)
            if (l.e[i].state == DR_CKPT_COMMITTED && strcmp(l.e[i].name, self) != 0 &&
                l.e[i].seq > max)
                max = l.e[i].seq;
    dr_ckpt_list_free(&l);
    return max;
}

static int write_all(int fd, const char *b, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

int dr_ckpt_commit(const char *dir, const dr_ckpt_commit_opts_t *o, dr_ckpt_manifest_t *out,
                   dr_err_t *err)
{
    dr_ckpt_manifest_t m;
    int rc = dr_ckpt_scan(dir, &m, err);
    if (rc != DR_OK)
        return rc;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        dr_ckpt_manifest_free(&m);
        return dr_err_set(err, DR_EIO, "%s: %s", dir, strerror(errno));
    }
    for (size_t i = 0; i < m.nfiles && rc == DR_OK; i++)
        rc = dr_ckpt_hash_file(dfd, &m.files[i], o->sha256, true, err);
    /* the subdirectories' entries too (the top one is synced below) */
    for (size_t i = 0; i < m.nfiles && rc == DR_OK; i++) {
        const char *p = m.files[i].path, *s = strrchr(p, '/');
        if (!s || (i > 0 && strncmp(m.files[i - 1].path, p, (size_t)(s - p + 1)) == 0 &&
                   !strchr(m.files[i - 1].path + (s - p + 1), '/')))
            continue; /* at the top, or in the directory just synced */
        char sub[DR_CKPT_MAX_PATH + 1];
        snprintf(sub, sizeof sub, "%.*s", (int)(s - p), p);
        int fd = openat(dfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fsync(fd) != 0)
            rc = dr_err_set(err, DR_EIO, "%s/%s: fsync: %s", dir, sub, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    char parent[DR_CKPT_MAX_PATH], nb[DR_CKPT_MAX_PATH];
    parent_of(dir, parent, sizeof parent);
    const char *self = base_of(dir, nb, sizeof nb);
    char *text = NULL;
    size_t len = 0;
    if (rc == DR_OK) {
        m.seq = sibling_seq(parent, self) + 1;
        m.created_ns = o->now_ns;
        m.gen = o->gen;
        if (o->owner) {
            m.has_owner = true;
            m.owner = *o->owner;
        }
        rc = dr_ckpt_manifest_format(&m, &text, &len, err);
    }
    if (rc == DR_OK) {
        int fd = openat(dfd, DR_CKPT_MANIFEST_TMP,
                        O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 || write_all(fd, text, len) != 0 || fsync(fd) != 0)
            rc = dr_err_set(err, DR_EIO, "%s/%s: %s", dir, DR_CKPT_MANIFEST_TMP, strerror(errno));
        if (fd >= 0 && close(fd) != 0 && rc == DR_OK)
            rc = dr_err_set(err, DR_EIO, "%s/%s: %s", dir, DR_CKPT_MANIFEST_TMP, strerror(errno));
        if (rc == DR_OK && renameat(dfd, DR_CKPT_MANIFEST_TMP, dfd, DR_CKPT_MANIFEST) != 0)
            rc = dr_err_set(err, DR_EIO, "%s/%s: rename: %s", dir, DR_CKPT_MANIFEST,
                            strerror(errno));
        if (rc != DR_OK)
            (void)unlinkat(dfd, DR_CKPT_MANIFEST_TMP, 0);
        if (rc == DR_OK && fsync(dfd) != 0)
            rc = dr_err_set(err, DR_EIO, "%s: fsync: %s", dir, strerror(errno));
        if (rc == DR_OK)
            rc = fsync_path(parent, err);
    }
    free(text);
    close(dfd);
    if (rc == DR_OK && o->keep > 0)
        rc = dr_ckpt_prune(parent, o->keep, self, o->pruned, err);
    if (rc == DR_OK && out)
        *out = m;
    else
        dr_ckpt_manifest_free(&m);
    return rc;
}

int dr_ckpt_verify(const char *dir, dr_ckpt_manifest_t *mout, dr_err_t *err)
{
    dr_ckpt_manifest_t m, have;
    int rc = dr_ckpt_read_manifest(dir, &m, err);
    if (rc != DR_OK)
        return rc;
    if (m.nfiles > 0 && !m.files) /* cannot happen; says so to the analyzer */
        return dr_err_set(err, DR_EINVAL, "%s: manifest without its files", dir);
    /* what is there, by name and size first: a missing, extra or
     * truncated file is found without reading a byte */
    rc = dr_ckpt_scan(dir, &have, err);
    if (rc != DR_OK) {
        dr_ckpt_manifest_free(&m);
        return rc;
    }
    size_t i = 0, k = 0;
    while (rc == DR_OK && (i < m.nfiles || k < have.nfiles)) {
        const dr_ckpt_file_t *want = i < m.nfiles ? &m.files[i] : NULL;
        const dr_ckpt_file_t *got = k < have.nfiles ? &have.files[k] : NULL;
        int c = want && got ? strcmp(want->path, got->path) : want ? -1 : 1;
        if (c < 0 && want)
            rc = dr_err_set(err, DR_EINVAL, "%s: missing", want->path);
        else if (c > 0 && got)
            rc = dr_err_set(err, DR_EINVAL, "%s: not in the manifest (added after the commit)",
                            got->path);
        else if (want && got && want->size != got->size)
            rc = dr_err_set(err, DR_EINVAL, "%s: %llu bytes, the manifest says %llu (%s)",
                            want->path, (unsigned long long)got->size,
                            (unsigned long long)want->size,
                            got->size < want->size ? "truncated" : "grew");
        i++;
        k++;
    }
    dr_ckpt_manifest_free(&have);
    int dfd = rc == DR_OK ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (rc == DR_OK && dfd < 0)
        rc = dr_err_set(err, DR_EIO, "%s: %s", dir, strerror(errno));
    for (i = 0; rc == DR_OK && i < m.nfiles; i++) {
        dr_ckpt_file_t f = m.files[i];
        rc = dr_ckpt_hash_file(dfd, &f, m.files[i].has_sha, false, err);
        if (rc == DR_OK && memcmp(f.xxh, m.files[i].xxh, 16) != 0)
            rc = dr_err_set(err, DR_EINVAL, "%s: XXH3-128 differs (its contents changed)", f.path);
        if (rc == DR_OK && m.files[i].has_sha && memcmp(f.sha, m.files[i].sha, 32) != 0)
            rc = dr_err_set(err, DR_EINVAL, "%s: SHA-256 differs (its contents changed)", f.path);
    }
    if (dfd >= 0)
        close(dfd);
    if (rc == DR_OK && mout)
        *mout = m;
    else
        dr_ckpt_manifest_free(&m);
    return rc;
}

/* ---- the checkpoints of a job ---- */

void dr_ckpt_list_free(dr_ckpt_list_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->e[i].name);
    free(l->e);
    memset(l, 0, sizeof *l);
}

static int entry_cmp(const void *pa, const void *pb)
{
    const dr_ckpt_entry_t *a = pa, *b = pb;
    bool ca = a->state == DR_CKPT_COMMITTED, cb = b->state == DR_CKPT_COMMITTED;
    if (ca != cb)
        return ca ? -1 : 1;
    if (ca) {
        if (a->seq != b->seq)
            return a->seq > b->seq ? -1 : 1;
        if (a->created_ns != b->created_ns)
            return a->created_ns > b->created_ns ? -1 : 1;
    } else if (a->mtime_ns != b->mtime_ns) {
        return a->mtime_ns > b->mtime_ns ? -1 : 1;
    }
    return -strcmp(a->name, b->name);
}

int dr_ckpt_list(const char *jobdir, dr_ckpt_list_t *l, dr_err_t *err)
{
    memset(l, 0, sizeof *l);
    DIR *d = opendir(jobdir);
    if (!d) {
        if (errno == ENOENT)
            return DR_OK;
        return dr_err_set(err, DR_EIO, "%s: %s", jobdir, strerror(errno));
    }
    int rc = DR_OK;
    struct dirent *e;
    while (rc == DR_OK && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            continue; /* a checkpoint is a directory of its own, not a link to one */
        if (dr_grow((void **)&l->e, &l->cap, l->n + 1, sizeof *l->e) != 0) {
            rc = dr_err_set(err, DR_ENOMEM, "out of memory");
            break;
        }
        dr_ckpt_entry_t *x = &l->e[l->n];
        *x = (dr_ckpt_entry_t){.name = dr_strdup(e->d_name),
                               .mtime_ns =
                                   (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec};
        if (!x->name) {
            rc = dr_err_set(err, DR_ENOMEM, "out of memory");
            break;
        }
        l->n++;
        char path[DR_CKPT_MAX_PATH];
        snprintf(path, sizeof path, "%s/%s", jobdir, e->d_name);
        dr_ckpt_manifest_t m;
        dr_err_t me = {0};
        int mr = dr_ckpt_read_manifest(path, &m, &me);
        if (mr == DR_ENOENT) {
            x->state = DR_CKPT_UNCOMMITTED;
        } else if (mr != DR_OK) {
            x->state = DR_CKPT_TORN;
            snprintf(x->why, sizeof x->why, "%s", me.msg);
        } else {
            x->state = DR_CKPT_COMMITTED;
            x->seq = m.seq;
            x->created_ns = m.created_ns;
            x->gen = m.gen;
            x->has_owner = m.has_owner;
            x->owner = m.owner;
            x->nfiles = m.nfiles;
            x->bytes = dr_ckpt_manifest_bytes(&m);
            dr_ckpt_manifest_free(&m);
        }
    }
    closedir(d);
    if (rc != DR_OK) {
        dr_ckpt_list_free(l);
        return rc;
    }
    if (l->n > 1)
        qsort(l->e, l->n, sizeof *l->e, entry_cmp);
    return DR_OK;
}

long dr_ckpt_pick_for(const char *jobdir, dr_ckpt_list_t *l, uint32_t gen)
{
    for (size_t i = 0; gen && i < l->n; i++) {
        dr_ckpt_entry_t *x = &l->e[i];
        if (x->state == DR_CKPT_COMMITTED && x->gen >= gen) {
            x->state = DR_CKPT_REJECTED;
            snprintf(x->why, sizeof x->why,
                     "committed by generation %" PRIu32
                     ", not an earlier one than this launch's %" PRIu32,
                     x->gen, gen);
        }
    }
    return dr_ckpt_pick(jobdir, l, false);
}

void dr_ckpt_reject_unowned(dr_ckpt_list_t *l, const dr_ckpt_owner_t *owner)
{
    for (size_t i = 0; i < l->n; i++) {
        dr_ckpt_entry_t *x = &l->e[i];
        if (x->state != DR_CKPT_COMMITTED || (x->has_owner && dr_ckpt_owner_same(&x->owner, owner)))
            continue;
        x->state = DR_CKPT_REJECTED;
        if (!x->has_owner)
            snprintf(x->why, sizeof x->why,
                     "not committed by this job: its manifest names no owner (committed outside "
                     "the job's run, or by an older drover)");
        else if (x->owner.job != owner->job || x->owner.uid != owner->uid)
            snprintf(x->why, sizeof x->why,
                     "not committed by this job: its manifest names job %" PRIu64 " of uid %" PRIu32
                     ", not job %" PRIu64 " of uid %" PRIu32,
                     x->owner.job, x->owner.uid, owner->job, owner->uid);
        else
            snprintf(x->why, sizeof x->why,
                     "not committed by this job: its manifest's nonce is not this job "
                     "directory's (copied from elsewhere?)");
    }
}

long dr_ckpt_pick_owned(const char *jobdir, dr_ckpt_list_t *l, uint32_t gen,
                        const dr_ckpt_owner_t *owner)
{
    dr_ckpt_reject_unowned(l, owner);
    return dr_ckpt_pick_for(jobdir, l, gen);
}

int dr_ckpt_owner_read(int jobdirfd, dr_ckpt_owner_t *o, dr_err_t *err)
{
    int fd = openat(jobdirfd, DR_CKPT_OWNER_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT
                   ? DR_ENOENT
                   : dr_err_set(err, DR_EIO, DR_CKPT_OWNER_FILE ": %s", strerror(errno));
    struct stat st;
    char text[256];
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        n = read(fd, text, sizeof text);
    close(fd);
    if (n < 0 || n >= (ssize_t)sizeof text)
        return dr_err_set(err, DR_EINVAL,
                          DR_CKPT_OWNER_FILE ": not a regular file of a job record");
    return dr_ckpt_owner_parse(o, text, (size_t)n, err);
}

long dr_ckpt_pick(const char *jobdir, dr_ckpt_list_t *l, bool all)
{
    long pick = -1;
    for (size_t i = 0; i < l->n; i++) {
        dr_ckpt_entry_t *x = &l->e[i];
        if (x->state != DR_CKPT_COMMITTED)
            continue;
        if (pick >= 0 && !all)
            break;
        char path[DR_CKPT_MAX_PATH];
        snprintf(path, sizeof path, "%s/%s", jobdir, x->name);
        dr_err_t e = {0};
        if (dr_ckpt_verify(path, NULL, &e) == DR_OK) {
            x->state = DR_CKPT_VERIFIED;
            if (pick < 0)
                pick = (long)i;
        } else {
            x->state = DR_CKPT_REJECTED;
            snprintf(x->why, sizeof x->why, "%s", e.msg);
        }
    }
    return pick;
}

/* Remove the tree at pfd/name without following links. */
static int remove_tree(int pfd, const char *name, int depth)
{
    int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return unlinkat(pfd, name, 0) == 0 || errno == ENOENT ? 0 : -1;
    if (depth > 256) {
        close(fd);
        return -1;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN) {
            if (remove_tree(dirfd(d), e->d_name, depth + 1) != 0)
                rc = -1;
        } else if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT) {
            rc = -1;
        }
    }
    closedir(d);
    if (unlinkat(pfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        rc = -1;
    return rc;
}

int dr_ckpt_prune(const char *jobdir, unsigned keep, const char *keep_name, dr_strvec_t *removed,
                  dr_err_t *err)
{
    dr_ckpt_list_t l;
    int rc = dr_ckpt_list(jobdir, &l, err);
    if (rc != DR_OK)
        return rc;
    int jfd = open(jobdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (jfd < 0) {
        dr_ckpt_list_free(&l);
        return dr_err_set(err, DR_EIO, "%s: %s", jobdir, strerror(errno));
    }
    /* the list is newest first: committed ones, then the rest */
    unsigned kept = 0;
    int64_t oldest_kept = INT64_MAX;
    for (size_t i = 0; i < l.n && rc == DR_OK; i++) {
        dr_ckpt_entry_t *x = &l.e[i];
        bool mine = keep_name && strcmp(x->name, keep_name) == 0;
        if (x->state == DR_CKPT_COMMITTED && (kept < keep || mine)) {
            kept++;
            if (x->created_ns < oldest_kept)
                oldest_kept = x->created_ns;
            continue;
        }
        if (mine)
            continue;
        if (x->state != DR_CKPT_COMMITTED && (kept == 0 || x->mtime_ns >= oldest_kept))
            continue; /* perhaps still being written */
        int cfd = openat(jfd, x->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd >= 0) {
            /* the manifest goes first, durably: from then on it is not a checkpoint */
            if (unlinkat(cfd, DR_CKPT_MANIFEST, 0) == 0)
                (void)fsync(cfd);
            close(cfd);
        }
        if (remove_tree(jfd, x->name, 0) != 0)
            rc = dr_err_set(err, DR_EIO, "%s/%s: cannot remove it all: %s", jobdir, x->name,
                            strerror(errno));
        else if (removed)
            dr_strvec_push(removed, x->name);
    }
    (void)fsync(jfd);
    close(jfd);
    dr_ckpt_list_free(&l);
    return rc;
}
