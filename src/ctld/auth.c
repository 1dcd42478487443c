/* auth.c - who is asking: Unix-socket peer credentials, or a bearer token.
 *
 * Over the Unix socket the kernel says who the peer is (SO_PEERCRED), so
 * no secret is needed.  Over TCP a request carries `Authorization: Bearer
 * TOKEN`; the store keeps only the token's SHA-256, so a copy of the state
 * directory does not hand out tokens.  Operators are root, the user the
 * controller runs as, and the users named with --operator or given an
 * operator token. */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/http.h>
#include <openssl/sha.h>

#include "ctld/ctld.h"

void ctld_sha256_hex(const char *s, char out[65])
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)s, strlen(s), md);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void who_from_user(ctld_who_t *who, const char *user)
{
    snprintf(who->user, sizeof who->user, "%s", user);
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwnam_r(user, &pw, buf, sizeof buf, &res) == 0 && res) {
        who->uid = pw.pw_uid;
        who->gid = pw.pw_gid;
    } else {
        who->uid = who->gid = 65534; /* no local account: run as nobody */
    }
}

static bool is_operator_name(const dr_ctld_t *c, const char *user)
{
    const char *ops = c->o.operators;
    if (!ops)
        return false;
    size_t n = strlen(user);
    for (const char *p = ops; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, user, n) == 0)
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

int ctld_auth(dr_ctld_t *c, struct evhttp_request *req, ctld_who_t *who)
{
    memset(who, 0, sizeof *who);
    struct evhttp_connection *conn = evhttp_request_get_connection(req);
    struct bufferevent *bev = conn ? evhttp_connection_get_bufferevent(conn) : NULL;
    int fd = bev ? (int)bufferevent_getfd(bev) : -1;
    struct sockaddr_storage ss = {0};
    socklen_t sl = sizeof ss;
    if (fd >= 0 && getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_UNIX) {
        struct ucred cr = {0};
        socklen_t cl = sizeof cr;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0)
            return DR_EINVAL;
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwuid_r(cr.uid, &pw, buf, sizeof buf, &res) == 0 && res)
            snprintf(who->user, sizeof who->user, "%s", pw.pw_name);
        else
            snprintf(who->user, sizeof who->user, "uid%u", (unsigned)cr.uid);
        who->uid = cr.uid;
        who->gid = cr.gid;
        who->via_socket = true;
        who->operator_ = cr.uid == 0 || cr.uid == geteuid() || is_operator_name(c, who->user);
        return DR_OK;
    }
    const char *h = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7) != 0 || strlen(h + 7) > 256)
        return DR_EINVAL;
    char hash[65], user[64], role[16];
    ctld_sha256_hex(h + 7, hash);
    if (ctld_store_find_token(c, hash, user, sizeof user, role, sizeof role) != DR_OK)
        return DR_ENOENT;
    who_from_user(who, user);
    who->operator_ = strcmp(role, "operator") == 0 || is_operator_name(c, user);
    return DR_OK;
}

/* Tokens are written at once, in their own transaction (turns open and
 * commit theirs within one callback, so the two never interleave). */
int ctld_token_create(dr_ctld_t *c, const char *user, const char *role, char *out, size_t n,
                      dr_err_t *err)
{
    unsigned char raw[24];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return dr_err_set(err, DR_EIO, "no randomness for a token");
    char tok[8 + 2 * sizeof raw + 1] = "drv_";
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(tok + 4 + 2 * i, 3, "%02x", raw[i]);
    char hash[65];
    ctld_sha256_hex(tok, hash);
    int rc = ctld_store_put_token(c, hash, user, role, err);
    if (rc != DR_OK)
        return rc;
    snprintf(out, n, "%s", tok);
    return DR_OK;
}
