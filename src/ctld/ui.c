/* ui.c - the web dashboard's static files (web/), compiled into droverd by
 * cmake/embed_ui.cmake: `/` is its page, `/ui/NAME` its scripts and styles.
 *
 * Loading them needs no authentication (they hold no data; the page asks the
 * API for everything, with the session cookie of api_session.c).  Each reply
 * carries a strict Content-Security-Policy - scripts, styles and connections
 * from this origin only, no inline script, no framing - so that a job name or
 * a drain reason shown in the page can never run as code. */
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "ctld/ctld.h"
#include "ctld/http.h"
#include "ctld/ui.h"

/* the table cmake/embed_ui.cmake writes (build/ui_files.c) */
struct ctld_ui_file {
    const char *path;
    const unsigned char *data;
    size_t len;
    const char *etag;
};
extern const struct ctld_ui_file ctld_ui_files[];

#define UI_CSP                                                                                     \
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "              \
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "                 \
    "frame-ancestors 'none'"

static const char *content_type(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot)
        return "application/octet-stream";
    if (strcmp(dot, ".html") == 0)
        return "text/html; charset=utf-8";
    if (strcmp(dot, ".js") == 0)
        return "text/javascript; charset=utf-8";
    if (strcmp(dot, ".css") == 0)
        return "text/css; charset=utf-8";
    if (strcmp(dot, ".svg") == 0)
        return "image/svg+xml";
    return "application/octet-stream";
}

static const struct ctld_ui_file *find(const char *path)
{
    for (const struct ctld_ui_file *f = ctld_ui_files; f->path; f++)
        if (strcmp(f->path, path) == 0)
            return f;
    return NULL;
}

bool ctld_ui_serve(struct evhttp_request *req, const char *path)
{
    if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0)
        path = "/ui/index.html";
    else if (strncmp(path, "/ui/", 4) != 0)
        return false;
    const struct ctld_ui_file *f = find(path);
    if (!f) {
        ctld_reply_error(req, 404, NULL, "%s: no such file in the dashboard", path);
        return true;
    }
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        evhttp_add_header(oh, "Allow", "GET");
        ctld_reply_error(req, 405, NULL, "%s: use GET", path);
        return true;
    }
    evhttp_add_header(oh, "Content-Security-Policy", UI_CSP);
    evhttp_add_header(oh, "X-Content-Type-Options", "nosniff");
    evhttp_add_header(oh, "X-Frame-Options", "DENY");
    evhttp_add_header(oh, "Referrer-Policy", "no-referrer");
    /* no-cache: the browser keeps the file but asks each time; the ETag
     * (the file's hash) makes that a 304 until droverd is rebuilt */
    evhttp_add_header(oh, "Cache-Control", "no-cache");
    evhttp_add_header(oh, "ETag", f->etag);
    const char *inm = evhttp_find_header(evhttp_request_get_input_headers(req), "If-None-Match");
    if (inm && strstr(inm, f->etag)) {
        evhttp_send_reply(req, 304, "Not Modified", NULL);
        return true;
    }
    struct evbuffer *b = evbuffer_new();
    if (!b) {
        evhttp_send_error(req, 503, NULL);
        return true;
    }
    /* the array lives as long as the binary: no copy */
    evbuffer_add_reference(b, f->data, f->len, NULL, NULL);
    ctld_reply_buffer(req, 200, content_type(f->path), b);
    evbuffer_free(b);
    return true;
}
