/* token.c - `drover token`: ask the controller for a bearer token (POST
 * /v1/tokens) and keep it in ~/.config/drover/token (mode 0600), where the
 * client looks when it talks TCP.  The controller hands tokens out over its
 * Unix socket (the peer's uid proves who asks) or to a token's holder; a
 * token for someone else needs the impersonation right.  Every token
 * expires (--ttl); `drover token list` shows them (GET /v1/tokens) and
 * `drover token revoke ID` ends one (DELETE /v1/tokens/ID). */
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

/* `drover token list` / `drover token revoke ID` */
static int token_admin(int argc, char **argv)
{
    bool is_list = strcmp(argv[1], "list") == 0, as_json = false;
    const char *server = NULL, *id = NULL;
    for (int i = 2; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--json") == 0 && is_list)
            as_json = true;
        else if ((m = cli_opt_value(argc, argv, &i, "--server", &server))) {
            if (m < 0)
                return 2;
        } else if (!is_list && !id && argv[i][0] != '-')
            id = argv[i];
        else
            return cli_usage_error("token %s: unknown argument '%s'", argv[1], argv[i]);
    }
    if (!is_list && !id)
        return cli_usage_error("token revoke: which token? (an ID from 'drover token list')");
    cli_client_t c;
    dr_err_t err = {0};
    if (cli_client_init(&c, server ? server : cli_server_arg, &err) != DR_OK) {
        cli_client_free(&c);
        return cli_usage_error("%s", err.msg);
    }
    char target[64];
    snprintf(target, sizeof target, "/v1/tokens/%.40s", id ? id : "");
    json_t *reply = NULL;
    int rc = cli_client_json(&c, is_list ? "GET" : "DELETE", is_list ? "/v1/tokens" : target, NULL,
                             &reply, &err);
    cli_client_free(&c);
    if (rc != DR_OK) {
        json_decref(reply);
        return cli_fail(&err);
    }
    if (!is_list) {
        printf("Token %s revoked\n", id);
    } else if (as_json) {
        cli_print_json(reply);
    } else {
        printf("%-12s  %-16s  %-8s  %-19s  %-19s  %s\n", "ID", "USER", "ROLE", "CREATED", "EXPIRES",
               "MINTED BY");
        size_t i;
        json_t *t;
        json_array_foreach(json_object_get(reply, "tokens"), i, t)
        {
            char cb[32], eb[32];
            printf("%-12s  %-16s  %-8s  %-19s  %-19s  %s%s\n", cli_json_str(t, "id", ""),
                   cli_json_str(t, "user", ""), cli_json_str(t, "role", ""),
                   cli_fmt_time(json_number_value(json_object_get(t, "created")), cb, sizeof cb),
                   cli_fmt_time(json_number_value(json_object_get(t, "expires")), eb, sizeof eb),
                   cli_json_str(t, "minted_by", ""),
                   json_is_true(json_object_get(t, "current")) ? " (this one)" : "");
        }
    }
    json_decref(reply);
    return 0;
}

int cli_token(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "list") == 0 || strcmp(argv[1], "revoke") == 0))
        return token_admin(argc, argv);
    const char *server = NULL, *user = NULL, *role = NULL, *ttl = NULL;
    bool print = false, as_json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: drover token [--print] [--json] [--ttl DUR] [--user U [--role R]] "
                   "[--server URL|SOCKET]\n"
                   "       drover token list [--json]\n"
                   "       drover token revoke ID\n"
                   "Create a bearer token and save it in ~/.config/drover/token (--print,\n"
                   "--json or --user: print it instead).  It expires after --ttl (8h, 30d;\n"
                   "default: the site's TokenTtl=, 30 days).  --user: a token for another\n"
                   "user (the impersonation right).  list: your tokens (an operator's: all);\n"
                   "revoke: end one by its ID.\n");
            return 0;
        }
        if (strcmp(a, "--print") == 0)
            print = true;
        else if (strcmp(a, "--json") == 0)
            as_json = true;
        else if ((m = cli_opt_value(argc, argv, &i, "--user", &user)) ||
                 (m = cli_opt_value(argc, argv, &i, "--role", &role)) ||
                 (m = cli_opt_value(argc, argv, &i, "--ttl", &ttl)) ||
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
    if (ttl)
        json_object_set_new(body, "ttl", json_string(ttl));
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
