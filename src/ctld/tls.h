/* tls.h - HTTPS on the TCP API (tls.c). */
#ifndef DROVER_CTLD_TLS_H
#define DROVER_CTLD_TLS_H

#include "ctld/ctld.h"

/* tls.c: HTTPS on the TCP API.  ctld_tls_init (start-up only) loads the
 * operator's pair or the state directory's self-signed one (made when
 * absent) into c->tls_ctx; ctld_tls_bev is evhttp's per-connection
 * bufferevent; ctld_req_tls: did this request come over TLS? */
int ctld_tls_init(dr_ctld_t *c, dr_err_t *err);
void ctld_tls_free(dr_ctld_t *c);
struct event_base;
struct bufferevent *ctld_tls_bev(struct event_base *base, void *arg);
bool ctld_req_tls(struct evhttp_request *req);
struct x509_st;
void ctld_tls_fingerprint(struct x509_st *x, char out[CTLD_TLS_FPR_LEN]);

#endif
