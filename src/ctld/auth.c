/* auth.c - who is asking: Unix-socket peer credentials, or a bearer token.
 *
 * Over the Unix socket the kernel says who the peer is (SO_PEERCRED), so
 * no secret is needed.  Over TCP a request carries `Authorization: Bearer
 * TOKEN`; the store keeps only the token's SHA-256, so a copy of the state
 * directory does not hand out tokens.  Operators are root, the user the
 * controller runs as, and the users named with --operator or given an
 * operator token.  Tokens expire (the stored expiry is checked at each
 * use; an expired row is deleted then) and name a user whose account gives
 * the uid its jobs run as (who->no_account: none here, so no jobs).
 * Minting one for someone else is impersonation (api_tokens.c): root on
 * this host and the site's Impersonators= may.  A browser sends a token in
 * the dashboard's session cookie (api_session.c); what such a request
 * changes needs the X-Drover-CSRF header besides (ctld_auth_csrf_ok). */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/sha.h>

#include "ctld/ctld.h"
#include "ctld/auth.h"
#include "ctld/http.h"
#include "ctld/store.h"

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
        who->uid = who->gid = 65534; /* no local account: it may look, never run jobs */
        who->no_account = true;
    }
}

static bool is_operator_name(const dr_ctld_t *c, const char *user)
{
    return dr_name_in_list(c->o.operators, user);
}

/* The drover_session cookie's value in a Cookie header ("a=1; drover_session=T"),
 * false when there is none or it does not fit. */
static bool session_cookie(const char *hdr, char *out, size_t n)
{
    static const char name[] = CTLD_SESSION_COOKIE "=";
    for (const char *p = hdr; p && *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *e = strchr(p, ';');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > sizeof name - 1 && strncmp(p, name, sizeof name - 1) == 0) {
            size_t vl = len - (sizeof name - 1);
            if (vl >= n)
                return false;
            memcpy(out, p + sizeof name - 1, vl);
            out[vl] = '\0';
            return true;
        }
        p = e ? e + 1 : NULL;
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
        /* root on the controller host can read the store and the key: it
         * is trusted with everything, minting tokens for others too */
        who->may_impersonate =
            cr.uid == 0 || cr.uid == geteuid() || dr_site_impersonator(&c->cl.site, who->user);
        return DR_OK;
    }
    struct evkeyvalq *ih = evhttp_request_get_input_headers(req);
    const char *h = evhttp_find_header(ih, "Authorization");
    if (h && strncasecmp(h, "Bearer ", 7) == 0)
        return strlen(h + 7) > CTLD_TOKEN_MAX ? DR_EINVAL : ctld_auth_token(c, h + 7, who);
    char tok[CTLD_TOKEN_MAX + 1];
    if (!session_cookie(evhttp_find_header(ih, "Cookie"), tok, sizeof tok))
        return DR_EINVAL;
    int rc = ctld_auth_token(c, tok, who);
    who->via_cookie = rc == DR_OK;
    return rc;
}

int ctld_auth_token(dr_ctld_t *c, const char *token, ctld_who_t *who)
{
    memset(who, 0, sizeof *who);
    char hash[65], user[64], role[16];
    double expires = 0;
    ctld_sha256_hex(token, hash);
    if (ctld_store_find_token(c, hash, user, sizeof user, role, sizeof role, &expires) != DR_OK)
        return DR_ENOENT;
    if (expires <= dr_time_to_s(ctld_now(c))) {
        /* an expired token is gone for good: its row too */
        int n;
        (void)ctld_store_delete_tokens(c, NULL, hash, NULL, &n, NULL);
        return DR_ENOENT;
    }
    who_from_user(who, user);
    who->operator_ = strcmp(role, "operator") == 0 || is_operator_name(c, user);
    who->may_impersonate = dr_site_impersonator(&c->cl.site, user);
    snprintf(who->token_id, sizeof who->token_id, "%.*s", CTLD_TOKEN_ID, hash);
    who->expires = expires;
    return DR_OK;
}

bool ctld_auth_csrf_header(struct evhttp_request *req)
{
    const char *v = evhttp_find_header(evhttp_request_get_input_headers(req), "X-Drover-CSRF");
    return v && strcmp(v, "1") == 0;
}

/* A cookie is sent by the browser whoever made it send the request; a
 * header of our own only by the dashboard's script (see api_session.c). */
bool ctld_auth_csrf_ok(struct evhttp_request *req, const ctld_who_t *who)
{
    return !who->via_cookie || evhttp_request_get_command(req) == EVHTTP_REQ_GET ||
           ctld_auth_csrf_header(req);
}

/* Tokens are written at once, in their own transaction (turns open and
 * commit theirs within one callback, so the two never interleave). */
int ctld_token_create(dr_ctld_t *c, const char *user, const char *role, dr_time_t ttl,
                      const char *minted_by, char *out, size_t n, char *id, dr_err_t *err)
{
    unsigned char raw[24];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return dr_err_set(err, DR_EIO, "no randomness for a token");
    char tok[8 + 2 * sizeof raw + 1] = "drv_";
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(tok + 4 + 2 * i, 3, "%02x", raw[i]);
    char hash[65];
    ctld_sha256_hex(tok, hash);
    double now = dr_time_to_s(ctld_now(c));
    ctld_token_row_t row = {.hash = hash,
                            .user = user,
                            .role = role,
                            .minted_by = minted_by,
                            .created = now,
                            .expires = now + dr_time_to_s(ttl)};
    int rc = ctld_store_put_token(c, &row, err);
    if (rc != DR_OK)
        return rc;
    snprintf(out, n, "%s", tok);
    snprintf(id, CTLD_TOKEN_ID + 1, "%.*s", CTLD_TOKEN_ID, hash);
    return DR_OK;
}
