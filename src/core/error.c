/* error.c - filling dr_err_t.  The core reports, callers decide. */
#include "drover/error.h"

#include <stdio.h>
#include <string.h>

int dr_err_vset(dr_err_t *err, int code, const char *fmt, va_list ap)
{
    if (err) {
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    }
    return code;
}

int dr_err_set(dr_err_t *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dr_err_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int dr_err_prefix(dr_err_t *err, const char *fmt, ...)
{
    if (!err)
        return DR_OK;
    char pre[DR_ERR_MSG_MAX], old[DR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    old[sizeof old - 1] = '\0';
    size_t np = strlen(pre), no = strlen(old);
    if (np > sizeof err->msg - 1)
        np = sizeof err->msg - 1;
    if (no > sizeof err->msg - 1 - np)
        no = sizeof err->msg - 1 - np;
    memcpy(err->msg, pre, np);
    memcpy(err->msg + np, old, no);
    err->msg[np + no] = '\0';
    return err->code;
}

void dr_err_clear(dr_err_t *err)
{
    if (err) {
        err->code = DR_OK;
        err->msg[0] = '\0';
    }
}

const char *dr_strerror(int code)
{
    switch (code) {
    case DR_OK: return "success";
    case DR_EINVAL: return "invalid input";
    case DR_ENOMEM: return "out of memory";
    case DR_EIO: return "I/O error";
    case DR_ENOENT: return "not found";
    case DR_ESTATE: return "not allowed in this state";
    case DR_ENOSPC: return "does not fit";
    case DR_ELIMIT: return "limit exceeded";
    default: return "unknown error";
    }
}
