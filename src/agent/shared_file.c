/* shared_file.c - the files the agent writes for jobs (batch scripts,
 * hostfiles), one per distinct content, shared by the ranks that use it.
 *
 * A LAUNCH carries a batch script's text; the job runs it from a file; a
 * gang's ranks get a hostfile.  Writing new files per rank made file
 * creation the agent's largest cost on a stream of short jobs (an array's
 * 10,000 tasks carry one script and the same one-line hostfile):
 * ext4's inode allocator scans recently deleted inodes, and a churned
 * state directory is full of them (perf: a quarter of the whole machine's
 * CPU in ext4_new_inode).  So the file is written once per (text, owner)
 * and shared by every rank that uses it, counted; an unused file stays
 * for the next job until the cache is full.
 *
 * The file belongs to the job's user (its shell reads it as that user), so
 * a job could change it.  Before a file is handed out again its identity
 * is checked against what was recorded after writing it: inode, size,
 * mode, owner and change time (every write, chmod or chown moves ctime
 * and no user can set it back).  A file that differs is never reused.
 *
 * Where: with --state, STATE/jobs/UID/ - STATE and STATE/jobs are 0711 and
 * the agent's (a user passes through, lists nothing), UID/ is 0700 and the
 * user's: the job's shell reaches its script there, and no other user can
 * read it (a script holds secrets; it is never on argv, where `ps` shows
 * it).  The directories and files are made through descriptors, never
 * following a link, so a user who owns UID/ can steer no write of the
 * agent's elsewhere.  Without --state: /tmp, each file made afresh
 * (O_EXCL) and its user's alone. */
#include "agent/agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* unused files kept for the next job (those in use are not counted) */
#define SHARED_KEEP 32

struct dr_agent_file {
    uint64_t hash;
    const char *kind; /* "sh", "hosts": the name's suffix */
    mode_t mode;
    char *text;
    size_t len;
    uid_t uid;
    gid_t gid;
    bool chowned;
    char *path;
    struct stat id; /* as written */
    unsigned refs;
    uint64_t used; /* a->file_tick at the last use */
    bool stale;    /* changed on disk or replaced: removed when unused */
};

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mode == b->st_mode && a->st_uid == b->st_uid && a->st_gid == b->st_gid &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static void file_drop(dr_agent_t *a, size_t i)
{
    dr_agent_file_t *s = a->files[i];
    if (!a->leave_jobs) /* ranks left to their keepers may still read it */
        unlink(s->path);
    free(s->path);
    free(s->text);
    free(s);
    a->files[i] = a->files[--a->nfiles];
}

/* The least recently used unused file goes once more than SHARED_KEEP are
 * unused; stale unused ones go at once. */
static void file_trim(dr_agent_t *a)
{
    size_t unused = 0;
    for (size_t i = 0; i < a->nfiles;) {
        if (!a->files[i]->refs && a->files[i]->stale) {
            file_drop(a, i);
            continue;
        }
        unused += !a->files[i]->refs;
        i++;
    }
    while (unused > SHARED_KEEP) {
        size_t old = SIZE_MAX;
        for (size_t i = 0; i < a->nfiles; i++)
            if (!a->files[i]->refs && (old == SIZE_MAX || a->files[i]->used < a->files[old]->used))
                old = i;
        file_drop(a, old);
        unused--;
    }
}

/* STATE/jobs/UID (made when missing, 0700, the user's), opened: its fd,
 * its path in dir; -1 with detail set. */
static int user_dir(const dr_agent_t *a, const dr_agent_file_t *s, char *dir, size_t len,
                    char *detail, size_t dlen)
{
    uid_t uid = s->chowned ? s->uid : geteuid();
    snprintf(dir, len, "%s/jobs", a->state_dir);
    if (mkdir(dir, 0711) != 0 && errno != EEXIST) {
        snprintf(detail, dlen, "job files %s: %s", dir, strerror(errno));
        return -1;
    }
    int jfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (jfd < 0 || fstat(jfd, &st) != 0 || st.st_uid != geteuid()) {
        snprintf(detail, dlen, "job files %s: %s", dir,
                 jfd < 0 ? strerror(errno) : "not the agent's directory");
        if (jfd >= 0)
            close(jfd);
        return -1;
    }
    if ((st.st_mode & 07777) != 0711)
        (void)fchmod(jfd, 0711);
    char name[32];
    snprintf(name, sizeof name, "%u", (unsigned)uid);
    int ufd = -1;
    if (mkdirat(jfd, name, 0700) != 0 && errno != EEXIST)
        goto fail;
    /* only the agent makes entries in jobs/: this is the one it made */
    ufd = openat(jfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (ufd < 0)
        goto fail;
    if (s->chowned && fchown(ufd, s->uid, s->gid) != 0)
        goto fail;
    if (fchmod(ufd, 0700) != 0)
        goto fail;
    close(jfd);
    snprintf(dir + strlen(dir), len - strlen(dir), "/%s", name);
    return ufd;
fail:
    snprintf(detail, dlen, "job files %s/%s: %s", dir, name, strerror(errno));
    if (ufd >= 0)
        close(ufd);
    close(jfd);
    return -1;
}

static int file_write(dr_agent_t *a, dr_agent_file_t *s, char *detail, size_t dlen)
{
    char dir[PATH_MAX - 128], name[128], path[PATH_MAX];
    int dfd = AT_FDCWD;
    if (a->state_dir) {
        dfd = user_dir(a, s, dir, sizeof dir, detail, dlen);
        if (dfd < 0)
            return -1;
    } else {
        snprintf(dir, sizeof dir, "/tmp");
    }
    snprintf(name, sizeof name, "job-%ld-%016llx-%llu.%s", (long)getpid(),
             (unsigned long long)s->hash, (unsigned long long)++a->file_tick, s->kind);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (dfd != AT_FDCWD)
        (void)unlinkat(dfd, name, 0); /* a leftover of an earlier agent of the same pid */
    int fd = openat(dfd, dfd != AT_FDCWD ? name : path,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, s->mode);
    if (dfd != AT_FDCWD)
        close(dfd);
    if (fd < 0) {
        snprintf(detail, dlen, "%s %s: %s", s->kind, path, strerror(errno));
        return -1;
    }
    const char *why = NULL;
    if (dr_agent_write_all(fd, s->text, s->len) != 0)
        why = "write";
    if (!why && s->chowned && fchown(fd, s->uid, s->gid) != 0)
        why = "chown";
    if (!why && fstat(fd, &s->id) != 0)
        why = "stat";
    if (close(fd) != 0 && !why)
        why = "close";
    if (!why && !(s->path = dr_strdup(path)))
        why = "out of memory";
    if (why) {
        snprintf(detail, dlen, "%s %s: %s: %s", s->kind, path, why, strerror(errno));
        unlink(path);
        return -1;
    }
    return 0;
}

const char *dr_agent_file_get(dr_agent_t *a, const char *kind, mode_t mode, const char *text,
                              bool chown_to, uid_t uid, gid_t gid, char *detail, size_t dlen)
{
    size_t len = strlen(text);
    uint64_t h = XXH3_64bits(text, len);
    for (size_t i = 0; i < a->nfiles; i++) {
        dr_agent_file_t *s = a->files[i];
        if (s->stale || s->hash != h || s->len != len || strcmp(s->kind, kind) != 0 ||
            s->mode != mode || s->chowned != chown_to ||
            (chown_to && (s->uid != uid || s->gid != gid)) || memcmp(s->text, text, len) != 0)
            continue;
        struct stat now;
        if (lstat(s->path, &now) != 0 || !same_file(&now, &s->id)) {
            s->stale = true; /* changed since it was written: never again */
            break;
        }
        s->refs++;
        s->used = ++a->file_tick;
        return s->path;
    }
    dr_agent_file_t *s = calloc(1, sizeof *s);
    if (!s || !(s->text = malloc(len + 1)) || DR_PUSH(a->files, a->nfiles, a->files_cap, s) != 0) {
        if (s)
            free(s->text);
        free(s);
        snprintf(detail, dlen, "%s: out of memory", kind);
        return NULL;
    }
    memcpy(s->text, text, len + 1);
    s->hash = h;
    s->kind = kind;
    s->mode = mode;
    s->len = len;
    s->chowned = chown_to;
    s->uid = uid;
    s->gid = gid;
    if (file_write(a, s, detail, dlen) != 0) {
        a->nfiles--;
        free(s->text);
        free(s);
        return NULL;
    }
    s->refs = 1;
    s->used = ++a->file_tick;
    file_trim(a);
    return s->path;
}

void dr_agent_file_put(dr_agent_t *a, const char *path)
{
    for (size_t i = 0; i < a->nfiles; i++) {
        if (a->files[i]->path == path) {
            if (a->files[i]->refs)
                a->files[i]->refs--;
            file_trim(a);
            return;
        }
    }
}

void dr_agent_file_clear(dr_agent_t *a)
{
    /* with a->leave_jobs the records go, the files stay */
    while (a->nfiles)
        file_drop(a, a->nfiles - 1);
    free(a->files);
    a->files = NULL;
    a->files_cap = 0;
    if (a->leave_jobs || !a->state_dir)
        return;
    /* the users' directories, those now empty */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/jobs", a->state_dir);
    int jfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = jfd >= 0 ? fdopendir(jfd) : NULL;
    if (!d) {
        if (jfd >= 0)
            close(jfd);
        return;
    }
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            (void)unlinkat(jfd, e->d_name, AT_REMOVEDIR);
    closedir(d);
}
