/* token.c - `drover token`: ask the controller for a bearer token (POST
 * /v1/tokens) and keep it in ~/.config/drover/token (mode 0600), where the
 * client looks when it talks TCP.  The controller hands tokens out over its
 * Unix socket (the peer's uid proves who asks) or to operators. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/format.h"
#include "drover/util.h"

/* mkdir -p for the directories above `path` (0700: they hold a secret). */
static int make_parents(const char *path, dr_err_t *err)
{
    char *d = dr_strdup(path);
    if (!d)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    for (char *p = d + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(d, 0700) != 0 && errno != EEXIST) {
            int rc = dr_err_set(err, DR_EIO, "%s: cannot create directory: %s", d, strerror(errno));
            free(d);
            return rc;
        }
        *p = '/';
    }
    free(d);
    return DR_OK;
}

/* Write the token to a fresh 0600 file beside `path`, then rename it over
 * `path`, so that a reader never sees half a token nor a moment of wider
 * permissions. */
static int save_token(const char *path, const char *token, dr_err_t *err)
{
    int rc = make_parents(path, err);
    if (rc != DR_OK)
        return rc;
    size_t n = strlen(path) + 8;
    char *tmp = malloc(n);
    if (!tmp)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    snprintf(tmp, n, "%s.XXXXXX", path);
    int fd = mkstemp(tmp); /* 0600 */
    if (fd < 0) {
        rc = dr_err_set(err, DR_EIO, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return rc;
    }
    size_t len = strlen(token);
    bool ok = fchmod(fd, 0600) == 0 && write(fd, token, len) == (ssize_t)len &&
              write(fd, "\n", 1) == 1 && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        rc = dr_err_set(err, DR_EIO, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return rc;
    }
    free(tmp);
    return DR_OK;
}

int cli_token(int argc, char **argv)
{
    const char *server = NULL, *user = NULL, *role = NULL;
    bool print = false, as_json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: drover token [--print] [--json] [--user U [--role R]] "
                   "[--server URL|SOCKET]\n"
                   "Create a bearer token and save it in ~/.config/drover/token (--print,\n"
                   "--json or --user: print it instead).\n");
            return 0;
        }
        if (strcmp(a, "--print") == 0)
            print = true;
        else if (strcmp(a, "--json") == 0)
            as_json = true;
        else if ((m = cli_opt_value(argc, argv, &i, "--user", &user)) ||
                 (m = cli_opt_value(argc, argv, &i, "--role", &role)) ||
                 (m = cli_opt_value(argc, argv, &i, "--server", &server))) {
            if (m < 0)
                return 2;
        } else {
            return cli_usage_error("token: unknown argument '%s'", a);
        }
    }
    if (role && !user)
        return cli_usage_error("token: --role needs --user (a token for someone else)");
    cli_client_t c;
    dr_err_t err = {0};
    if (cli_client_init(&c, server ? server : cli_server_arg, &err) != DR_OK) {
        cli_client_free(&c);
        return cli_usage_error("%s", err.msg);
    }
    json_t *body = json_object();
    if (user)
        json_object_set_new(body, "user", json_string(user));
    if (role)
        json_object_set_new(body, "role", json_string(role));
    json_t *reply = NULL;
    int rc = cli_client_json(&c, "POST", "/v1/tokens", body, &reply, &err);
    json_decref(body);
    cli_client_free(&c);
    if (rc != DR_OK) {
        json_decref(reply);
        return cli_fail(&err);
    }
    const char *tok = cli_json_str(reply, "token", NULL);
    if (!tok || !*tok) {
        json_decref(reply);
        return cli_fail(&(dr_err_t){DR_EINVAL, "token: the controller's reply has no token"});
    }
    /* A token made for someone else is theirs to keep, not ours to use. */
    if (as_json) {
        cli_print_json(reply);
    } else if (print || user) {
        printf("%s\n", tok);
    } else {
        char *path = cli_token_path();
        if (!path)
            rc = cli_fail(&(dr_err_t){DR_ENOENT, "token: no home directory to keep it in "
                                                 "(use --print)"});
        else if ((rc = save_token(path, tok, &err)) != DR_OK)
            rc = cli_fail(&err);
        else
            printf("Token for %s saved in %s\n", cli_json_str(reply, "user", "you"), path);
        free(path);
    }
    json_decref(reply);
    return rc;
}
