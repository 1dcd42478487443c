/* ui.h - the dashboard's files (ui.c). */
#ifndef DROVER_CTLD_UI_H
#define DROVER_CTLD_UI_H

#include <stdbool.h>

struct evhttp_request;
/* ui.c: the dashboard's files at / and /ui/...; false if path is not one */
bool ctld_ui_serve(struct evhttp_request *req, const char *path);

#endif
