/* error.h - how libdrover reports failures.
 *
 * The core never prints and never exits: every function that can fail returns
 * a negative DR_E* code and, when the caller passed a dr_err_t, fills it with a
 * message that names the bad input ("cluster.conf:12: Gpus: unknown GPU type
 * 'H10'").  Callers decide whether to print, retry or skip. */
#ifndef DROVER_ERROR_H
#define DROVER_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    DR_OK = 0,
    DR_EINVAL = -1, /* bad input: syntax, range, unknown name */
    DR_ENOMEM = -2, /* allocation failed */
    DR_EIO = -3,    /* a file could not be read or written */
    DR_ENOENT = -4, /* a named thing does not exist */
    DR_ESTATE = -5, /* operation not allowed in the current state */
    DR_ENOSPC = -6, /* resources do not fit (placement) */
    DR_ELIMIT = -7  /* a configured limit was exceeded */
};

#define DR_ERR_MSG_MAX 512

typedef struct dr_err {
    int code;
    char msg[DR_ERR_MSG_MAX];
} dr_err_t;

#if defined(__GNUC__)
#define DR_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DR_PRINTF(a, b)
#endif

/* Fill err (if not NULL) and return code, so callers can write
 * `return dr_err_set(err, DR_EINVAL, "...")`. */
int dr_err_set(dr_err_t *err, int code, const char *fmt, ...) DR_PRINTF(3, 4);
int dr_err_vset(dr_err_t *err, int code, const char *fmt, va_list ap);
/* Prepend context ("file:line: ") to an existing message. */
int dr_err_prefix(dr_err_t *err, const char *fmt, ...) DR_PRINTF(2, 3);
void dr_err_clear(dr_err_t *err);
const char *dr_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
