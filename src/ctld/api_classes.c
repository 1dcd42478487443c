/* api_classes.c - GET /v1/classes: the job classes the controller learns
 * from (classes.c), each with what it knows of its speed on every GPU type:
 * the runs seen there, the mean run time, the rate, what the figure rests on
 * and its spread.  A user sees the classes of their own jobs (their --class
 * names and their arrays); an operator sees every class (?all=1). */
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <sys/queue.h>

#include "ctld/ctld.h"
#include "ctld/api.h"
#include "ctld/classes.h"
#include "ctld/http.h"

void ctld_api_classes(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who)
{
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        ctld_reply_error(req, 405, NULL, "use GET");
        return;
    }
    struct evkeyvalq q;
    TAILQ_INIT(&q);
    const char *qs = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
    if (qs && evhttp_parse_query_str(qs, &q) != 0) {
        ctld_reply_error(req, 400, NULL, "query: cannot parse '%s'", qs);
        return;
    }
    const char *v = evhttp_find_header(&q, "all");
    bool all = v && strcmp(v, "0") != 0;
    evhttp_clear_headers(&q);
    if (all && !who->operator_) {
        ctld_reply_error(req, 403, "all", "all: only an operator sees every user's classes");
        return;
    }
    json_t *a = ctld_classes_list(c, who->user, all);
    json_t *o = a ? json_pack("{s:o}", "classes", a) : NULL;
    char *s = o ? json_dumps(o, CTLD_JSON_FLAGS) : NULL;
    json_decref(o);
    if (!s) {
        ctld_reply_error(req, 503, NULL, "out of memory");
        return;
    }
    ctld_reply_json(req, 200, s);
    free(s);
}
