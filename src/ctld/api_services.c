/* api_services.c - the HTTP verbs of services (docs/api.md):
 *   POST /v1/jobs/ID/scale    {"replicas": N}   how many replicas to keep
 *   POST /v1/jobs/ID/restart                    a rolling restart
 * The owner or an operator may; the change is committed before the reply
 * (the turn writes the service's record, then answers). */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/api.h"
#include "ctld/http.h"
#include "ctld/outbox.h"
#include "ctld/services.h"
#include "ctld/store.h"

static void reply(dr_ctld_t *c, struct evhttp_request *req, const ctld_job_t *cj)
{
    const ctld_service_t *s = cj->array->svc;
    json_t *o = json_pack("{s:I,s:i,s:b}", "id", (json_int_t)cj->j.id, "replicas",
                          (json_int_t)s->want, "rolling_restart", s->roll_mark != 0);
    char *txt = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    ctld_out_http(c, req, 200, txt, 0);
}

/* The body's "replicas": a whole number from 0 to 1024. */
static int want_of(struct evhttp_request *req, uint32_t *want)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    json_t *o = len ? json_loadb((const char *)evbuffer_pullup(in, -1), len, 0, NULL) : NULL;
    json_t *r = json_object_get(o, "replicas");
    int rc = -1;
    if (json_is_integer(r) && json_integer_value(r) >= 0 && json_integer_value(r) <= 1024) {
        *want = (uint32_t)json_integer_value(r);
        rc = 0;
    }
    json_decref(o);
    return rc;
}

bool ctld_api_service_verb(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                           uint64_t id, const char *verb)
{
    bool scale = strcmp(verb, "scale") == 0;
    if (!scale && strcmp(verb, "restart") != 0)
        return false;
    ctld_job_t *cj = ctld_job_find(c, id);
    if (!cj) {
        char *owner = NULL;
        char *js = ctld_store_job_json(c, id, &owner);
        if (js)
            ctld_reply_error(req, 409, NULL, "job %llu has already ended", (unsigned long long)id);
        else
            ctld_reply_error(req, 404, NULL, "job %llu: no such job", (unsigned long long)id);
        free(js);
        free(owner);
        return true;
    }
    if (cj->parent && cj->parent->array->svc)
        cj = cj->parent; /* a replica's run: its service */
    if (!cj->array || !cj->array->svc) {
        ctld_reply_error(req, 400, NULL, "job %llu is not a service (kind serve)",
                         (unsigned long long)id);
        return true;
    }
    if (!who->operator_ && strcmp(cj->user, who->user) != 0) {
        ctld_reply_error(req, 403, NULL, "job %llu belongs to %s; you are %s",
                         (unsigned long long)id, cj->user, who->user);
        return true;
    }
    dr_err_t err = {0};
    int rc;
    if (scale) {
        uint32_t want = 0;
        if (want_of(req, &want) != 0) {
            ctld_reply_error(req, 400, "replicas",
                             "replicas: the body must be {\"replicas\": N}, N from 0 to 1024");
            return true;
        }
        rc = ctld_service_scale(c, cj, want, &err);
    } else {
        rc = ctld_service_restart(c, cj, &err);
    }
    if (rc != DR_OK)
        ctld_reply_error(req, rc == DR_ESTATE ? 409 : 400, NULL, "%s", err.msg);
    else
        reply(c, req, cj);
    return true;
}
