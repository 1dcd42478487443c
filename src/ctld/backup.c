/* backup.c - POST /v1/admin/backup: an online copy of the store, for
 * operators (`drover admin backup FILE`).
 *
 * SQLite's backup API copies the store into a temporary file in droverd's
 * own state directory, a few MB per step with the event loop running
 * between steps (a large store must not stall the agents' heartbeats: a
 * controller silent past the lease gets every job stopped).  The copy is
 * made through droverd's own connection, so whatever droverd commits
 * meanwhile is copied too: the result is the store as of the last step.
 * Its bytes are the reply's body, and the file is unlinked as soon as it
 * is open.  droverd never opens a path that a user named: the client
 * writes FILE itself, with its own rights, so a backup can neither
 * overwrite a file the operator could not write nor land anywhere as root.
 * The copy holds every user's jobs and the tokens' hashes: operators only,
 * one backup at a time. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <sqlite3.h>

#include "ctld/ctld.h"
#include "ctld/api.h"
#include "ctld/backup.h"
#include "ctld/http.h"

#define STEP_PAGES 2048 /* 8 MB of 4 KiB pages a step: a few ms */

struct ctld_backup {
    dr_ctld_t *c;
    struct evhttp_request *req; /* freed by evhttp once answered (also if its client left) */
    struct event *step;
    sqlite3 *dst;
    sqlite3_backup *b;
    char user[64];
    char tmp[4200];
    struct timespec t0;
};

static double since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Close the copy, the temporary file and the state; the request is
 * answered by the caller before. */
static void done(ctld_backup_t *k)
{
    if (k->b)
        sqlite3_backup_finish(k->b);
    if (k->dst)
        sqlite3_close(k->dst);
    unlink(k->tmp);
    if (k->step)
        event_free(k->step);
    k->c->backup = NULL;
    free(k);
}

static void fail(ctld_backup_t *k, int status, const char *msg)
{
    ctld_log("backup for %s failed: %s", k->user, msg);
    ctld_reply_error(k->req, status, NULL, "backup: %s", msg);
    done(k);
}

/* The copy is complete: its bytes go out from the file, unlinked now. */
static void send_copy(ctld_backup_t *k)
{
    sqlite3_backup_finish(k->b);
    k->b = NULL;
    int rc = sqlite3_close(k->dst);
    k->dst = NULL;
    if (rc != SQLITE_OK) {
        fail(k, 503, "closing the copy failed");
        return;
    }
    int fd = open(k->tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        char msg[320];
        snprintf(msg, sizeof msg, "%.200s: %s", k->tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
        fail(k, 503, msg);
        return;
    }
    struct evbuffer *body = evbuffer_new();
    /* the buffer owns fd from here (closed once sent) */
    if (!body || evbuffer_add_file(body, fd, 0, st.st_size) != 0) {
        if (body)
            evbuffer_free(body);
        else
            close(fd);
        fail(k, 503, "out of memory");
        return;
    }
    ctld_log("backup for %s: %lld bytes in %.3f s", k->user, (long long)st.st_size, since(&k->t0));
    ctld_reply_buffer(k->req, 200, "application/vnd.sqlite3", body);
    evbuffer_free(body);
    done(k);
}

static void on_step(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    ctld_backup_t *k = arg;
    int s = sqlite3_backup_step(k->b, STEP_PAGES);
    if (s == SQLITE_DONE) {
        send_copy(k);
    } else if (s == SQLITE_OK || s == SQLITE_BUSY || s == SQLITE_LOCKED) {
        struct timeval now = {0, 0}; /* after whatever else is due */
        event_add(k->step, &now);
    } else {
        fail(k, s == SQLITE_FULL ? 507 : 503, sqlite3_errmsg(k->dst));
    }
}

static void start(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who)
{
    ctld_backup_t *k = calloc(1, sizeof *k);
    if (!k) {
        ctld_reply_error(req, 503, NULL, "backup: out of memory");
        return;
    }
    k->c = c;
    k->req = req;
    c->backup = k;
    snprintf(k->user, sizeof k->user, "%s", who->user);
    clock_gettime(CLOCK_MONOTONIC, &k->t0);
    snprintf(k->tmp, sizeof k->tmp, "%s/droverd.backup.XXXXXX", c->o.state_dir);
    int fd = mkstemp(k->tmp); /* droverd's own directory, 0600 */
    if (fd < 0) {
        char msg[320];
        snprintf(msg, sizeof msg, "%.200s: %s", k->tmp, strerror(errno));
        k->tmp[0] = '\0';
        fail(k, 507, msg);
        return;
    }
    close(fd);
    if (sqlite3_open_v2(k->tmp, &k->dst, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        fail(k, 503, k->dst ? sqlite3_errmsg(k->dst) : "out of memory");
        return;
    }
    /* a scratch file: the client makes its own copy durable */
    sqlite3_exec(k->dst, "PRAGMA synchronous=OFF;", NULL, NULL, NULL);
    k->b = sqlite3_backup_init(k->dst, "main", c->db, "main");
    k->step = evtimer_new(c->base, on_step, k);
    if (!k->b || !k->step) {
        fail(k, 503, k->b ? "out of memory" : sqlite3_errmsg(k->dst));
        return;
    }
    ctld_log("backup for %s: started", k->user);
    on_step(-1, 0, k);
}

void ctld_backup_sweep(dr_ctld_t *c)
{
    DIR *d = opendir(c->o.state_dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "droverd.backup.", 15) != 0)
            continue;
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", c->o.state_dir, e->d_name);
        if (unlink(p) == 0)
            ctld_log("backup: removed %s, left by a droverd that stopped during a backup", p);
    }
    closedir(d);
}

void ctld_backup_free(dr_ctld_t *c)
{
    if (c->backup)
        fail(c->backup, 503, "the controller is stopping");
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
    if (c->backup) {
        ctld_reply_error(req, 409, NULL,
                         "a backup (for %s) is in progress: try again when it is "
                         "done",
                         c->backup->user);
        return;
    }
    start(c, req, who);
}
