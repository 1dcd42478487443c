/* auth.h - who a request is: peer credentials, tokens, the session cookie (auth.c). */
#ifndef DROVER_CTLD_AUTH_H
#define DROVER_CTLD_AUTH_H

#include "ctld/ctld.h"
#include "ctld/http.h"

int ctld_auth(dr_ctld_t *c, struct evhttp_request *req, ctld_who_t *who);
/* A new token for user (role "user" or "operator") living ttl, minted by
 * minted_by: the token into out, its id into id (CTLD_TOKEN_ID + 1). */
int ctld_token_create(dr_ctld_t *c, const char *user, const char *role, dr_time_t ttl,
                      const char *minted_by, char *out, size_t n, char *id, dr_err_t *err);
void ctld_sha256_hex(const char *s, char out[65]);
#define CTLD_TOKEN_MAX      256
#define CTLD_SESSION_COOKIE "drover_session"
/* who a bearer token names; DR_ENOENT for an unknown or revoked one */
int ctld_auth_token(dr_ctld_t *c, const char *token, ctld_who_t *who);
/* does the request carry `X-Drover-CSRF: 1`?  and may it go on: not by
 * cookie, a GET, or with that header */
bool ctld_auth_csrf_header(struct evhttp_request *req);
bool ctld_auth_csrf_ok(struct evhttp_request *req, const ctld_who_t *who);

#endif
