/* api.h - the API's routes, one file each (api_*.c), called by http.c. */
#ifndef DROVER_CTLD_API_H
#define DROVER_CTLD_API_H

#include "ctld/ctld.h"
#include "ctld/http.h"

void ctld_api_jobs(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                   const char *path);
void ctld_api_nodes(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                    const char *path);
char *ctld_node_json(dr_ctld_t *c, uint32_t idx);
/* api_history.c: GET /v1/history (accounting, like Slurm's sacct) */
void ctld_api_history(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who);
void ctld_api_share(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who);
/* api_classes.c: GET /v1/classes (what job classes taught of each type's speed) */
void ctld_api_classes(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who);
void ctld_api_admin(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                    const char *rest);
/* api_services.c: POST /v1/jobs/ID/scale and /restart; false if not one */
bool ctld_api_service_verb(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                           uint64_t id, const char *verb);
/* api_tokens.c: POST /v1/tokens (mint), GET /v1/tokens (list), DELETE
 * /v1/tokens/ID (revoke); rest: the path after /v1/tokens */
void ctld_api_tokens(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                     const char *rest);
/* api_session.c: POST/DELETE /v1/session (the dashboard's login) */
void ctld_api_session(dr_ctld_t *c, struct evhttp_request *req);
void ctld_api_metrics(dr_ctld_t *c, struct evhttp_request *req);
void ctld_api_stats(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who);

#endif
