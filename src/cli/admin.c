/* admin.c - `drover admin`: operators' maintenance of the controller.
 *
 *   drover admin backup FILE   an online copy of the store (POST
 *                              /v1/admin/backup): droverd sends the bytes,
 *                              this process writes FILE with the rights of
 *                              whoever runs it (a new file, mode 0600: it
 *                              holds every user's jobs).
 *
 * The store is checked with `droverd --check-store` on the controller's
 * host (docs/operations.md, 'A damaged store'). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"

#define BACKUP_MAX ((size_t)64 << 30) /* a bound on the reply, far above any store */

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int backup(const char *server, const char *file)
{
    /* the file first: a name that exists (or a symlink) is never written
     * through, and nothing is asked of droverd if FILE cannot be made */
    int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "drover: admin backup: %s: %s%s\n", file, strerror(errno),
                errno == EEXIST ? " (a backup never overwrites a file: name a new one)" : "");
        return 1;
    }
    cli_client_t c;
    dr_err_t err = {0};
    int rc = cli_client_init(&c, server ? server : cli_server_arg, &err);
    cli_http_resp_t r = {0};
    if (rc == DR_OK) {
        c.max_body = BACKUP_MAX;
        c.read_timeout_ms = 10 * 60 * 1000; /* a large store takes a while to copy */
        rc = cli_client_request(&c, "POST", "/v1/admin/backup", "application/json", "{}", 2, &r,
                                &err);
    }
    if (rc == DR_OK && (r.status < 200 || r.status > 299)) {
        json_t *j = r.body_len ? json_loadb(r.body, r.body_len, 0, NULL) : NULL;
        const char *m = json_string_value(json_object_get(j, "error"));
        rc =
            dr_err_set(&err, DR_EINVAL, "%s (HTTP %d)", m ? m : "the controller refused", r.status);
        json_decref(j);
    }
    if (rc == DR_OK && (r.body_len < 100 || memcmp(r.body, "SQLite format 3", 16) != 0))
        rc =
            dr_err_set(&err, DR_EIO, "the reply is not an SQLite database (%zu bytes)", r.body_len);
    if (rc == DR_OK && (write_all(fd, r.body, r.body_len) != 0 || fsync(fd) != 0))
        rc = dr_err_set(&err, DR_EIO, "%s: %s", file, strerror(errno));
    if (close(fd) != 0 && rc == DR_OK)
        rc = dr_err_set(&err, DR_EIO, "%s: %s", file, strerror(errno));
    size_t n = r.body_len;
    cli_http_resp_free(&r);
    cli_client_free(&c);
    if (rc != DR_OK) {
        unlink(file); /* ours: made above with O_EXCL */
        fprintf(stderr, "drover: admin backup: %s\n", err.msg);
        return 1;
    }
    printf("backup: %s (%zu bytes)\n", file, n);
    return 0;
}

int cli_admin(int argc, char **argv)
{
    const char *server = NULL;
    const char *args[2];
    int nargs = 0;
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: drover admin backup FILE [--server URL|SOCKET]\n"
                   "An online copy of the controller's store into FILE (a new file, mode\n"
                   "0600, written by this process with your rights). Operators only.\n"
                   "Restore: docs/operations.md, 'Backup and restore'.\n");
            return 0;
        }
        if ((m = cli_opt_value(argc, argv, &i, "--server", &server))) {
            if (m < 0)
                return 2;
        } else if (nargs < 2) {
            args[nargs++] = argv[i];
        } else {
            return cli_usage_error("admin: unexpected argument '%s'", argv[i]);
        }
    }
    if (nargs == 2 && strcmp(args[0], "backup") == 0)
        return backup(server, args[1]);
    return cli_usage_error("admin: usage: drover admin backup FILE");
}
