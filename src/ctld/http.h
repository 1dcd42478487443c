/* http.h - the HTTP API's server, who asks, and replies (http.c). */
#ifndef DROVER_CTLD_HTTP_H
#define DROVER_CTLD_HTTP_H

#include "ctld/ctld.h"

typedef struct ctld_who {
    char user[64];
    uint32_t uid, gid;
    bool operator_;
    bool via_socket;
    bool via_cookie;      /* the dashboard's session cookie: see ctld_auth_csrf_ok */
    bool no_account;      /* a token's name with no account on this host (uid/gid: nobody) */
    bool may_impersonate; /* root on this host, or named in Impersonators= */
    char token_id[16];    /* the bearer token's id ("" over the Unix socket) */
    double expires;       /* the bearer token's expiry (Unix seconds; 0 over the socket) */
} ctld_who_t;
int ctld_http_start(dr_ctld_t *c, dr_err_t *err);
void ctld_http_free(dr_ctld_t *c);
void ctld_reply_json(struct evhttp_request *req, int status, const char *json);
/* A reply of what body holds (taken from it, without a copy; the caller
 * still frees body). */
struct evbuffer;
void ctld_reply_buffer(struct evhttp_request *req, int status, const char *ctype,
                       struct evbuffer *body);
void ctld_reply_error(struct evhttp_request *req, int status, const char *field, const char *fmt,
                      ...) DR_PRINTF(4, 5);

#endif
