/* api_session.c - browser login for the dashboard: POST /v1/session trades a
 * bearer token (from `drover token`) for an HttpOnly cookie, DELETE /v1/session
 * clears it.
 *
 * The cookie holds a token of its own, minted at login for the same user
 * and role (it lives no longer than the token it was traded for, nor than
 * SESSION_TTL): auth.c accepts it as it accepts a Bearer header, and logout
 * deletes it from the store, so a copied cookie is dead once its session
 * ends, while the CLI's token the user typed in lives on.
 *
 * A cookie travels with every request the browser makes, also ones a
 * foreign page provokes, so requests it authenticates that change state must
 * carry `X-Drover-CSRF: 1` (a header no cross-site form or image can add, and
 * one a cross-site script could add only after a CORS preflight this server
 * never grants).  SameSite=Strict is the second fence.  Both endpoints need
 * that header themselves: logging a browser in under someone else's token is
 * also an attack. */
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
#include "ctld/tls.h"

#define COOKIE_ATTRS "HttpOnly; SameSite=Strict; Path=/"
/* Over HTTPS (--tls) the cookie is Secure: a browser never sends the token
 * it holds over plain HTTP, where anyone on the path would read it. */
#define COOKIE_SECURE(req) (ctld_req_tls(req) ? "; Secure" : "")
#define SESSION_TTL        (12 * 3600 * DR_NSEC_PER_SEC)

static void login(dr_ctld_t *c, struct evhttp_request *req)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    json_error_t je;
    json_t *o = len ? json_loadb((const char *)evbuffer_pullup(in, -1), len, 0, &je) : NULL;
    if (!json_is_object(o)) {
        json_decref(o);
        ctld_reply_error(req, 400, NULL, "body: not a JSON object: %s",
                         len ? je.text : "empty body");
        return;
    }
    const char *tok = json_string_value(json_object_get(o, "token"));
    if (!tok || !*tok || strlen(tok) > CTLD_TOKEN_MAX || strpbrk(tok, "; \t\r\n,\"\\")) {
        json_decref(o);
        ctld_reply_error(req, 400, "token", "token: a token from 'drover token' is required");
        return;
    }
    ctld_who_t who;
    if (ctld_auth_token(c, tok, &who) != DR_OK) {
        json_decref(o);
        ctld_reply_error(req, 401, "token", "token: unknown or revoked token");
        return;
    }
    json_decref(o);
    dr_time_t ttl = SESSION_TTL;
    double left = who.expires - dr_time_to_s(ctld_now(c));
    if (dr_time_to_s(ttl) > left)
        ttl = (dr_time_t)(left * (double)DR_NSEC_PER_SEC);
    char stok[128], id[CTLD_TOKEN_ID + 1], minted_by[96];
    dr_err_t err = {0};
    snprintf(minted_by, sizeof minted_by, "%s (dashboard login)", who.user);
    if (ctld_token_create(c, who.user, who.operator_ ? "operator" : "user", ttl, minted_by, stok,
                          sizeof stok, id, &err) != DR_OK) {
        ctld_reply_error(req, 507, NULL, "%s", err.msg);
        return;
    }
    char cookie[96 + CTLD_TOKEN_MAX];
    snprintf(cookie, sizeof cookie, "%s=%s; " COOKIE_ATTRS "%s", CTLD_SESSION_COOKIE, stok,
             COOKIE_SECURE(req));
    evhttp_add_header(evhttp_request_get_output_headers(req), "Set-Cookie", cookie);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Cache-Control", "no-store");
    json_t *out =
        json_pack("{s:s,s:s}", "user", who.user, "role", who.operator_ ? "operator" : "user");
    char *s = json_dumps(out, JSON_COMPACT);
    json_decref(out);
    ctld_reply_json(req, 200, s ? s : "{}");
    free(s);
}

void ctld_api_session(dr_ctld_t *c, struct evhttp_request *req)
{
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    if (m != EVHTTP_REQ_POST && m != EVHTTP_REQ_DELETE) {
        ctld_reply_error(req, 405, NULL, "/v1/session: use POST (log in) or DELETE (log out)");
        return;
    }
    if (!ctld_auth_csrf_header(req)) {
        ctld_reply_error(req, 403, "X-Drover-CSRF",
                         "X-Drover-CSRF: /v1/session needs the header 'X-Drover-CSRF: 1'");
        return;
    }
    if (m == EVHTTP_REQ_POST) {
        login(c, req);
        return;
    }
    /* the session's token dies here, not only the browser's copy of it */
    ctld_who_t who;
    if (ctld_auth(c, req, &who) == DR_OK && who.via_cookie && who.token_id[0]) {
        int n = 0;
        dr_err_t err = {0};
        if (ctld_store_delete_tokens(c, who.token_id, NULL, who.user, &n, &err) != DR_OK) {
            ctld_reply_error(req, 507, NULL, "%s", err.msg);
            return;
        }
        ctld_log("session: %s logged out (token %s revoked)", who.user, who.token_id);
    }
    char clear[128];
    snprintf(clear, sizeof clear, CTLD_SESSION_COOKIE "=; Max-Age=0; " COOKIE_ATTRS "%s",
             COOKIE_SECURE(req));
    evhttp_add_header(evhttp_request_get_output_headers(req), "Set-Cookie", clear);
    ctld_reply_json(req, 200, "{\"ok\":true}");
}
