/* tls.h - the CLI's TLS client for `--server https://HOST:PORT`: a
 * handshake over a connected non-blocking socket that verifies the
 * server's certificate (the system's CAs, or only --cacert's /
 * $DROVER_CACERT's) and that it names HOST, then reads and writes through
 * it.  OpenSSL's SSL_* directly: no HTTP library. */
#ifndef DROVER_CLI_TLS_H
#define DROVER_CLI_TLS_H

#include <stddef.h>
#include <sys/types.h>

#include "drover/error.h"

struct ssl_st;

/* Handshake on fd (connected to host:port) before deadline_ms (monotonic
 * ms, as client.c counts): DR_OK and *out; otherwise the reason in err:
 * a certificate that fails verification names what failed, the
 * certificate's subject and its SHA-256 fingerprint.  cacert: a PEM file
 * of trusted certificates (NULL: the system's). */
int cli_tls_connect(int fd, const char *host, const char *port, const char *cacert,
                    long long deadline_ms, struct ssl_st **out, dr_err_t *err);

/* One read or write: > 0 bytes, 0 the end (read only), or a negative:
 * -EAGAIN with *want set to POLLIN or POLLOUT (wait for it, then call
 * again with the same arguments), -EPROTO (a TLS error), -errno. */
ssize_t cli_tls_read(struct ssl_st *ssl, char *buf, size_t cap, short *want);
ssize_t cli_tls_write(struct ssl_st *ssl, const char *buf, size_t n, short *want);

/* Say goodbye (close_notify, without waiting for the reply) and free. */
void cli_tls_close(struct ssl_st *ssl);

/* The monotonic clock in ms, and a wait for fd to be ready for `events`
 * (POLLIN, POLLOUT) until such a deadline: 0, -ETIMEDOUT or -errno.  The
 * client's plain and TLS transports share them. */
long long cli_mono_ms(void);
int cli_wait_fd(int fd, short events, long long deadline);

#endif
