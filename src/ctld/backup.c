/* backup.c - POST /v1/admin/backup: an online copy of the store, for
 * operators (`drover admin backup FILE`).
 *
 * SQLite's backup API copies the store, as of one consistent moment, into
 * a temporary file in droverd's own state directory; its bytes are the
 * reply's body and the file is unlinked as soon as it is open.  droverd
 * never opens a path that a user named: the client writes FILE itself,
 * with its own rights, so a backup can neither overwrite a file the
 * operator could not write nor land anywhere as root.  The copy holds every
 * user's jobs, environments and the tokens' hashes: operators only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <sqlite3.h>

#include "ctld/ctld.h"

/* The store copied into `tmp` (a new file): DR_OK or an error in err. */
static int copy_store(dr_ctld_t *c, const char *tmp, dr_err_t *err)
{
    sqlite3 *dst = NULL;
    if (sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        int rc = dr_err_set(err, DR_EIO, "open %s: %s", tmp,
                            dst ? sqlite3_errmsg(dst) : "out of memory");
        sqlite3_close(dst);
        return rc;
    }
    /* a scratch file: the client makes its own copy durable */
    sqlite3_exec(dst, "PRAGMA synchronous=OFF;", NULL, NULL, NULL);
    sqlite3_backup *b = sqlite3_backup_init(dst, "main", c->db, "main");
    int s = SQLITE_ERROR;
    if (b) {
        /* all pages in one step: one consistent snapshot, and no write of
         * this connection can come between steps */
        s = sqlite3_backup_step(b, -1);
        sqlite3_backup_finish(b);
    }
    int rc = DR_OK;
    if (s != SQLITE_DONE)
        rc = dr_err_set(err, s == SQLITE_FULL ? DR_ENOSPC : DR_EIO, "backup: %s",
                        sqlite3_errmsg(dst));
    if (sqlite3_close(dst) != SQLITE_OK && rc == DR_OK)
        rc = dr_err_set(err, DR_EIO, "backup: close: %s", sqlite3_errmsg(dst));
    return rc;
}

static void backup(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s/droverd.backup.XXXXXX", c->o.state_dir);
    int fd = mkstemp(tmp); /* droverd's own directory, 0600 */
    if (fd < 0) {
        ctld_reply_error(req, 507, NULL, "backup: %s: %s", tmp, strerror(errno));
        return;
    }
    close(fd);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    dr_err_t err = {0};
    int rc = copy_store(c, tmp, &err);
    fd = rc == DR_OK ? open(tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
    if (rc == DR_OK && fd < 0)
        rc = dr_err_set(&err, DR_EIO, "backup: %s: %s", tmp, strerror(errno));
    unlink(tmp);
    struct stat st;
    if (rc == DR_OK && fstat(fd, &st) != 0)
        rc = dr_err_set(&err, DR_EIO, "backup: %s", strerror(errno));
    if (rc != DR_OK) {
        if (fd >= 0)
            close(fd);
        ctld_log("backup for %s failed: %s", who->user, err.msg);
        ctld_reply_error(req, rc == DR_ENOSPC ? 507 : 503, NULL, "%s", err.msg);
        return;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    struct evbuffer *body = evbuffer_new();
    /* the buffer owns fd from here (closed once sent) */
    if (!body || evbuffer_add_file(body, fd, 0, st.st_size) != 0) {
        if (body)
            evbuffer_free(body);
        else
            close(fd);
        ctld_reply_error(req, 503, NULL, "backup: out of memory");
        return;
    }
    ctld_log("backup for %s: %lld bytes in %.3f s", who->user, (long long)st.st_size,
             (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    ctld_reply_buffer(req, 200, "application/vnd.sqlite3", body);
    evbuffer_free(body);
}

void ctld_api_admin(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                    const char *rest)
{
    if (strcmp(rest, "/backup") != 0) {
        ctld_reply_error(req, 404, NULL, "/v1/admin%s: no such endpoint", rest);
        return;
    }
    if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
        ctld_reply_error(req, 405, NULL, "use POST");
        return;
    }
    if (!who->operator_) {
        ctld_log("backup refused to %s: not an operator", who->user);
        ctld_reply_error(req, 403, NULL,
                         "only an operator may back up the store (it holds every user's jobs)");
        return;
    }
    backup(c, req, who);
}
