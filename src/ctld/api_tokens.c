/* api_tokens.c - bearer tokens: POST /v1/tokens mints one, GET /v1/tokens
 * lists them, DELETE /v1/tokens/ID revokes one (docs/api.md).
 *
 * Every token expires (TokenTtl= by default, at most TokenMaxTtl=): a
 * copied token is not good forever.  A user mints and lists its own;
 * operators list and revoke anyone's.  Minting a token for someone else is
 * impersonation, a right of its own apart from the operator role: root on
 * the controller host (which can read the store anyway) and the users the
 * site names in Impersonators= have it, and each use is logged with who
 * minted for whom.  A token is only for a name with an account on this
 * host, and one for root only where jobs may run as root (AllowRootJobs=):
 * otherwise an operator's mistake or a stolen operator token would run
 * commands as uid 0 on every node. */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/api.h"
#include "ctld/auth.h"
#include "ctld/http.h"
#include "ctld/store.h"

static void reply_obj(struct evhttp_request *req, int status, json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(o);
    ctld_reply_json(req, status, s ? s : "{}");
    free(s);
}

/* "ttl": a duration string ("8h", "30d") or seconds; *ttl the site's
 * default when absent.  false with the reply sent when it is not one. */
static bool ttl_of(const dr_ctld_t *c, struct evhttp_request *req, json_t *v, dr_time_t *ttl)
{
    const dr_site_t *s = &c->cl.site;
    *ttl = s->token_ttl < s->token_max_ttl ? s->token_ttl : s->token_max_ttl;
    if (!v)
        return true;
    dr_err_t e = {0};
    if (json_is_string(v)) {
        if (dr_duration_parse_err(json_string_value(v), ttl, &e) != DR_OK) {
            ctld_reply_error(req, 400, "ttl", "ttl: %s", e.msg);
            return false;
        }
    } else if (json_is_number(v) && json_number_value(v) >= 1 && json_number_value(v) < 1e10) {
        *ttl = (dr_time_t)(json_number_value(v) * (double)DR_NSEC_PER_SEC);
    } else {
        ctld_reply_error(req, 400, "ttl", "ttl: a duration (8h, 30d) or a number of seconds");
        return false;
    }
    if (*ttl < DR_NSEC_PER_SEC || *ttl > s->token_max_ttl) {
        ctld_reply_error(req, 400, "ttl", "ttl: from 1 s to the site's TokenMaxTtl= (%.0f s)",
                         dr_time_to_s(s->token_max_ttl));
        return false;
    }
    return true;
}

/* May `user` (who is to be named by a token) hold one here?  0, or the
 * status with the reply sent. */
static int holder_ok(const dr_ctld_t *c, struct evhttp_request *req, const char *user)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwnam_r(user, &pw, buf, sizeof buf, &res) != 0 || !res) {
        ctld_reply_error(req, 400, "user",
                         "user: '%s' has no account on the controller host (a token names a user "
                         "whose uid its jobs run as)",
                         user);
        return 400;
    }
    if (pw.pw_uid == 0 && !c->cl.site.allow_root_jobs) {
        ctld_reply_error(req, 403, "user",
                         "user: a token for %s (uid 0) would run jobs as root on every node: "
                         "refused under the site's AllowRootJobs=NO (the default); give "
                         "operators their own accounts (droverd --operator)",
                         user);
        return 403;
    }
    return 0;
}

static void mint(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    const char *body = len ? (const char *)evbuffer_pullup(in, -1) : "{}";
    json_error_t je;
    json_t *o = json_loadb(body, len ? len : 2, 0, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        ctld_reply_error(req, 400, NULL, "body: not a JSON object: %s", je.text);
        return;
    }
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) if (strcmp(key, "user") != 0 && strcmp(key, "role") != 0 &&
                                       strcmp(key, "ttl") != 0)
    {
        ctld_reply_error(req, 400, key, "%s: unknown field (user, role, ttl)", key);
        json_decref(o);
        return;
    }
    const char *user = json_string_value(json_object_get(o, "user"));
    const char *role = json_string_value(json_object_get(o, "role"));
    char u[64], r[16];
    snprintf(u, sizeof u, "%s", user ? user : who->user);
    snprintf(r, sizeof r, "%s", role ? role : "user");
    dr_time_t ttl;
    bool ttl_ok = ttl_of(c, req, json_object_get(o, "ttl"), &ttl);
    json_decref(o);
    if (!ttl_ok)
        return;
    if (strcmp(r, "user") != 0 && strcmp(r, "operator") != 0) {
        ctld_reply_error(req, 400, "role", "role: must be 'user' or 'operator'");
        return;
    }
    bool other = strcmp(u, who->user) != 0;
    if (strcmp(r, "operator") == 0 && !who->operator_) {
        ctld_reply_error(req, 403, "role", "role: only an operator may create operator tokens");
        return;
    }
    if (other && !who->may_impersonate) {
        ctld_log("token: %s was refused a token for %s (not an impersonator)", who->user, u);
        ctld_reply_error(req, 403, "user",
                         "user: minting a token for another user is impersonation, a right of "
                         "its own: root on the controller host and the users named in the "
                         "site's Impersonators= have it (%s does not)",
                         who->user);
        return;
    }
    if (holder_ok(c, req, u) != 0)
        return;
    /* a token cannot outlive the one that asks for it (a stolen token
     * must not buy a longer life) */
    if (who->expires > 0) {
        double left = who->expires - dr_time_to_s(ctld_now(c));
        if (dr_time_to_s(ttl) > left)
            ttl = (dr_time_t)(left * (double)DR_NSEC_PER_SEC);
    }
    char tok[128], id[CTLD_TOKEN_ID + 1];
    dr_err_t err = {0};
    if (ctld_token_create(c, u, r, ttl, who->user, tok, sizeof tok, id, &err) != DR_OK) {
        ctld_reply_error(req, 507, NULL, "%s", err.msg);
        return;
    }
    if (other)
        ctld_log("token: impersonation: %s minted a %s token for %s (id %s, %.0f s)", who->user, r,
                 u, id, dr_time_to_s(ttl));
    else
        ctld_log("token: %s minted a %s token for itself (id %s, %.0f s)", who->user, r, id,
                 dr_time_to_s(ttl));
    double exp = dr_time_to_s(ctld_now(c)) + dr_time_to_s(ttl);
    reply_obj(req, 201,
              json_pack("{s:s,s:s,s:s,s:s,s:f}", "token", tok, "id", id, "user", u, "role", r,
                        "expires", exp));
}

typedef struct list_ctx {
    json_t *arr;
    const char *current;
} list_ctx_t;

static void list_row(void *ud, const ctld_token_row_t *t)
{
    list_ctx_t *l = ud;
    char id[CTLD_TOKEN_ID + 1];
    snprintf(id, sizeof id, "%.*s", CTLD_TOKEN_ID, t->hash);
    json_array_append_new(l->arr, json_pack("{s:s,s:s,s:s,s:f,s:f,s:s,s:b}", "id", id, "user",
                                            t->user, "role", t->role, "created", t->created,
                                            "expires", t->expires, "minted_by", t->minted_by,
                                            "current", strcmp(id, l->current) == 0));
}

static void list(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who)
{
    list_ctx_t l = {json_array(), who->token_id};
    if (ctld_store_list_tokens(c, who->operator_ ? NULL : who->user, list_row, &l) != DR_OK) {
        json_decref(l.arr);
        ctld_reply_error(req, 503, NULL, "store: cannot read the tokens");
        return;
    }
    reply_obj(req, 200, json_pack("{s:o}", "tokens", l.arr));
}

static void revoke(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who, const char *id)
{
    size_t n = strlen(id);
    if (n != CTLD_TOKEN_ID || strspn(id, "0123456789abcdef") != n) {
        ctld_reply_error(req, 400, "id", "id: a token id is %d hex digits ('drover token list')",
                         CTLD_TOKEN_ID);
        return;
    }
    int gone = 0;
    dr_err_t err = {0};
    if (ctld_store_delete_tokens(c, id, NULL, who->operator_ ? NULL : who->user, &gone, &err) !=
        DR_OK) {
        ctld_reply_error(req, 507, NULL, "%s", err.msg);
        return;
    }
    if (!gone) {
        ctld_reply_error(req, 404, "id", "id: no token %s of yours", id);
        return;
    }
    ctld_log("token: %s revoked token %s", who->user, id);
    reply_obj(req, 200, json_pack("{s:b,s:s}", "revoked", 1, "id", id));
}

void ctld_api_tokens(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                     const char *rest)
{
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    if (rest[0] == '/' && rest[1]) {
        if (m != EVHTTP_REQ_DELETE)
            ctld_reply_error(req, 405, NULL, "/v1/tokens/ID: use DELETE (revoke)");
        else
            revoke(c, req, who, rest + 1);
    } else if (m == EVHTTP_REQ_POST) {
        mint(c, req, who);
    } else if (m == EVHTTP_REQ_GET) {
        list(c, req, who);
    } else {
        ctld_reply_error(req, 405, NULL, "/v1/tokens: use POST (mint) or GET (list)");
    }
}
