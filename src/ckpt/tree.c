/* tree.c - what a checkpoint directory holds: its files (walked without
 * following symbolic links, so that a link cannot pull a file from outside
 * the checkpoint into it) and their checksums (XXH3-128, read in 1 MiB
 * blocks; SHA-256 through libcrypto when asked). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "ckpt/ckpt.h"

#define BLOCK     (1u << 20)
#define MAX_DEPTH 64

/* Walk the directory open at fd, whose path below the checkpoint is rel
 * ("" at the top). */
static int walk(int fd, const char *rel, int depth, dr_ckpt_manifest_t *out, dr_err_t *err)
{
    if (depth > MAX_DEPTH)
        return dr_err_set(err, DR_ELIMIT, "%s: nested more than %d deep", rel, MAX_DEPTH);
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return dr_err_set(err, DR_EIO, "%s: %s", rel[0] ? rel : ".", strerror(errno));
    }
    int rc = DR_OK;
    struct dirent *e;
    char path[DR_CKPT_MAX_PATH + 1];
    errno = 0;
    while (rc == DR_OK && (e = readdir(d))) {
        const char *nm = e->d_name;
        if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0)
            continue;
        if (!rel[0] && (strcmp(nm, DR_CKPT_MANIFEST) == 0 || strcmp(nm, DR_CKPT_MANIFEST_TMP) == 0))
            continue;
        int pl = snprintf(path, sizeof path, "%s%s%s", rel, rel[0] ? "/" : "", nm);
        if (pl < 0 || (size_t)pl >= sizeof path || !dr_ckpt_path_ok(path, (size_t)pl)) {
            rc = dr_err_set(err, DR_EINVAL, "%.200s: a name a manifest cannot hold", path);
            break;
        }
        struct stat st;
        if (fstatat(dirfd(d), nm, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = dr_err_set(err, DR_EIO, "%s: %s", path, strerror(errno));
            break;
        }
        if (S_ISREG(st.st_mode)) {
            rc = dr_ckpt_manifest_add(out, path, (uint64_t)st.st_size, err);
        } else if (S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd(d), nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0)
                rc = dr_err_set(err, DR_EIO, "%s: %s", path, strerror(errno));
            else
                rc = walk(sub, path, depth + 1, out, err);
        } else {
            rc = dr_err_set(err, DR_EINVAL,
                            "%s: a %s, not a regular file (a checkpoint holds regular files and "
                            "directories only)",
                            path, S_ISLNK(st.st_mode) ? "symbolic link" : "special file");
        }
        errno = 0;
    }
    if (rc == DR_OK && errno != 0)
        rc = dr_err_set(err, DR_EIO, "%s: %s", rel[0] ? rel : ".", strerror(errno));
    closedir(d);
    return rc;
}

int dr_ckpt_scan(const char *dir, dr_ckpt_manifest_t *out, dr_err_t *err)
{
    memset(out, 0, sizeof *out);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return dr_err_set(err, errno == ENOENT ? DR_ENOENT : DR_EIO, "%s: %s", dir,
                          strerror(errno));
    int rc = walk(fd, "", 0, out, err);
    if (rc == DR_OK)
        rc = dr_ckpt_manifest_sort(out, err);
    if (rc != DR_OK)
        dr_ckpt_manifest_free(out);
    return rc;
}

int dr_ckpt_hash_file(int dirfd, dr_ckpt_file_t *f, bool sha, bool sync, dr_err_t *err)
{
    int fd = openat(dirfd, f->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return dr_err_set(err, errno == ENOENT ? DR_ENOENT : DR_EIO, "%s: %s", f->path,
                          errno == ELOOP ? "a symbolic link, not a regular file" : strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return dr_err_set(err, DR_EINVAL, "%s: not a regular file", f->path);
    }
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    XXH3_state_t *x = XXH3_createState();
    EVP_MD_CTX *md = sha ? EVP_MD_CTX_new() : NULL;
    uint8_t *buf = malloc(BLOCK);
    int rc = DR_OK;
    if (!x || !buf || (sha && (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1))) {
        rc = dr_err_set(err, DR_ENOMEM, "%s: out of memory", f->path);
        goto out;
    }
    XXH3_128bits_reset(x);
    uint64_t total = 0;
    for (;;) {
        ssize_t r = read(fd, buf, BLOCK);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = dr_err_set(err, DR_EIO, "%s: read: %s", f->path, strerror(errno));
            goto out;
        }
        if (r == 0)
            break;
        total += (uint64_t)r;
        if (total > f->size)
            break; /* longer than it should be: no need to read the rest */
        XXH3_128bits_update(x, buf, (size_t)r);
        if (md)
            EVP_DigestUpdate(md, buf, (size_t)r);
    }
    if (total != f->size) {
        rc = dr_err_set(err, DR_EINVAL, "%s: %s%llu bytes, the manifest says %llu (%s)", f->path,
                        total > f->size ? "more than " : "", (unsigned long long)total,
                        (unsigned long long)f->size, total > f->size ? "grew" : "truncated");
        goto out;
    }
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(x));
    memcpy(f->xxh, c.digest, 16);
    if (md) {
        unsigned int n = 0;
        EVP_DigestFinal_ex(md, f->sha, &n);
        f->has_sha = n == 32;
    }
    if (sync && fsync(fd) != 0)
        rc = dr_err_set(err, DR_EIO, "%s: fsync: %s", f->path, strerror(errno));
out:
    free(buf);
    EVP_MD_CTX_free(md);
    XXH3_freeState(x);
    close(fd);
    return rc;
}
