/* api_session.c - browser login for the dashboard: POST /v1/session trades a
 * bearer token (from `drover token`) for an HttpOnly cookie, DELETE /v1/session
 * clears it.
 *
 * The cookie holds the token itself (tokens are stored hashed, so there is no
 * session table to keep or expire); auth.c accepts it as it accepts a Bearer
 * header.  A cookie travels with every request the browser makes, also ones a
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

#define COOKIE_ATTRS "HttpOnly; SameSite=Strict; Path=/"
/* Over HTTPS (--tls) the cookie is Secure: a browser never sends the token
 * it holds over plain HTTP, where anyone on the path would read it. */
#define COOKIE_SECURE(req) (ctld_req_tls(req) ? "; Secure" : "")

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
    char cookie[96 + CTLD_TOKEN_MAX];
    snprintf(cookie, sizeof cookie, "%s=%s; " COOKIE_ATTRS "%s", CTLD_SESSION_COOKIE, tok,
             COOKIE_SECURE(req));
    json_decref(o);
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
    char clear[128];
    snprintf(clear, sizeof clear, CTLD_SESSION_COOKIE "=; Max-Age=0; " COOKIE_ATTRS "%s",
             COOKIE_SECURE(req));
    evhttp_add_header(evhttp_request_get_output_headers(req), "Set-Cookie", clear);
    ctld_reply_json(req, 200, "{\"ok\":true}");
}
