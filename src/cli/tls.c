/* tls.c - the CLI's TLS client (tls.h): OpenSSL over the socket client.c
 * connected.  Verification is never optional: a certificate that does not
 * chain to a trusted one, or that does not name the host the user dialled,
 * ends the connection before a byte of the request (its token, its job) is
 * sent, and the message says what failed and the certificate's SHA-256
 * fingerprint, so a user can compare it with the one droverd logged. */
#include "cli/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* What the verification callback saw first go wrong. */
typedef struct verify_info {
    bool failed;
    int code, depth;
    char subject[256];
    char fpr[97];
} verify_info_t;

long long cli_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void fingerprint(X509 *x, char out[97])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    out[0] = '\0';
    if (!x || !X509_digest(x, EVP_sha256(), md, &n))
        return;
    for (unsigned int i = 0; i < n && 3 * i + 3 <= 97; i++)
        snprintf(out + 3 * i, 4, i + 1 < n ? "%02X:" : "%02X", md[i]);
}

static int on_verify(int ok, X509_STORE_CTX *sx)
{
    if (ok)
        return 1;
    SSL *ssl = X509_STORE_CTX_get_ex_data(sx, SSL_get_ex_data_X509_STORE_CTX_idx());
    verify_info_t *v = ssl ? SSL_get_app_data(ssl) : NULL;
    if (v && !v->failed) {
        v->failed = true;
        v->code = X509_STORE_CTX_get_error(sx);
        v->depth = X509_STORE_CTX_get_error_depth(sx);
        /* the server's own certificate: the one a user compares */
        X509 *leaf = X509_STORE_CTX_get0_cert(sx);
        fingerprint(leaf, v->fpr);
        if (leaf)
            X509_NAME_oneline(X509_get_subject_name(leaf), v->subject, sizeof v->subject);
    }
    return 0;
}

static const char *ssl_err(char *buf, size_t n)
{
    unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (!e)
        return "the connection closed during the handshake";
    /* the reason alone ("certificate verify failed", "No such file or
     * directory"): the library and code numbers say nothing to a user */
    const char *r = ERR_reason_error_string(e);
    if (r)
        return r;
    ERR_error_string_n(e, buf, n);
    return buf;
}

int cli_wait_fd(int fd, short events, long long deadline)
{
    for (;;) {
        long long left = deadline - cli_mono_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
        if (r > 0)
            return 0;
        if (r == 0)
            return -ETIMEDOUT;
        if (errno != EINTR)
            return -errno;
    }
}

static int verify_failed(const verify_info_t *v, const char *host, const char *port,
                         const char *cacert, dr_err_t *err)
{
    const char *why = X509_verify_cert_error_string(v->code);
    bool mismatch =
        v->code == X509_V_ERR_HOSTNAME_MISMATCH || v->code == X509_V_ERR_IP_ADDRESS_MISMATCH;
    char extra[320] = "";
    if (mismatch)
        snprintf(extra, sizeof extra, ": it is not a certificate for '%s'", host);
    else if (v->code == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT ||
             v->code == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN ||
             v->code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY)
        snprintf(extra, sizeof extra, ": no certificate in %s vouches for it",
                 cacert ? cacert : "the system's CA store");
    return dr_err_set(err, DR_EIO,
                      "TLS: https://%s:%s: certificate verification failed: %s%s (certificate %s, "
                      "SHA-256 fingerprint %s); %s",
                      host, port, why, extra, v->subject[0] ? v->subject : "?",
                      v->fpr[0] ? v->fpr : "?",
                      mismatch ? "connect by a name it was made for (droverd --tls-san adds names "
                                 "to its self-signed one)"
                               : "if you trust it, pass it with --cacert FILE or DROVER_CACERT");
}

static SSL_CTX *client_ctx(const char *cacert, dr_err_t *err)
{
    char eb[256];
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        dr_err_set(err, DR_ENOMEM, "TLS: %s", ssl_err(eb, sizeof eb));
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* droverd closes after each reply without close_notify; HTTP's own
     * lengths (http_parse.c) say whether a reply came whole */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    /* --cacert: only what it holds is trusted (a pinned self-signed
     * certificate, a site's own CA), not the system's store besides */
    if (cacert && access(cacert, R_OK) != 0) {
        dr_err_set(err, DR_EINVAL, "--cacert %s: %s", cacert, strerror(errno));
        SSL_CTX_free(ctx);
        return NULL;
    }
    if (cacert ? SSL_CTX_load_verify_locations(ctx, cacert, NULL) != 1
               : SSL_CTX_set_default_verify_paths(ctx) != 1) {
        dr_err_set(err, DR_EINVAL, "%s%s: cannot load trusted certificates: %s",
                   cacert ? "--cacert " : "the system's CA store", cacert ? cacert : "",
                   ssl_err(eb, sizeof eb));
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, on_verify);
    return ctx;
}

int cli_tls_connect(int fd, const char *host, const char *port, const char *cacert,
                    long long deadline_ms, struct ssl_st **out, dr_err_t *err)
{
    char eb[256];
    *out = NULL;
    SSL_CTX *ctx = client_ctx(cacert, err);
    if (!ctx)
        return err ? err->code : DR_EINVAL;
    SSL *ssl = SSL_new(ctx);
    SSL_CTX_free(ctx); /* the SSL holds its own reference */
    if (!ssl)
        return dr_err_set(err, DR_ENOMEM, "TLS: %s", ssl_err(eb, sizeof eb));
    unsigned char addr[16];
    bool is_ip = inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1;
    /* the name the user dialled is what the certificate must name */
    int okp = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
                    : SSL_set1_host(ssl, host) && SSL_set_tlsext_host_name(ssl, host);
    if (okp != 1 || SSL_set_fd(ssl, fd) != 1) {
        SSL_free(ssl);
        return dr_err_set(err, DR_EINVAL, "TLS: %s: %s", host, ssl_err(eb, sizeof eb));
    }
    verify_info_t v = {0};
    SSL_set_app_data(ssl, &v);
    int rc = DR_OK;
    for (;;) {
        ERR_clear_error();
        int r = SSL_connect(ssl);
        if (r == 1)
            break;
        int e = SSL_get_error(ssl, r);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            int w = cli_wait_fd(fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline_ms);
            if (w == 0)
                continue;
            rc = dr_err_set(err, DR_EIO, "TLS: handshake with https://%s:%s: %s", host, port,
                            strerror(-w));
            break;
        }
        if (v.failed) {
            rc = verify_failed(&v, host, port, cacert, err);
            break;
        }
        const char *why = ssl_err(eb, sizeof eb);
        rc = dr_err_set(err, DR_EIO, "TLS: handshake with https://%s:%s failed: %s%s", host, port,
                        why,
                        strstr(why, "wrong version number")
                            ? " (does the server speak plain HTTP? then use http://)"
                            : "");
        break;
    }
    SSL_set_app_data(ssl, NULL);
    if (rc != DR_OK) {
        SSL_free(ssl);
        return rc;
    }
    *out = ssl;
    return DR_OK;
}

/* SSL_write() writes with write(2): a server gone would raise SIGPIPE and
 * kill the CLI.  Blocked around the call, a SIGPIPE it raised is taken
 * back (one that was pending before stays). */
typedef struct pipe_guard {
    sigset_t old;
    bool was_pending;
} pipe_guard_t;

static void pipe_block(pipe_guard_t *g)
{
    sigset_t set, pend;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigpending(&pend);
    g->was_pending = sigismember(&pend, SIGPIPE) == 1;
    sigprocmask(SIG_BLOCK, &set, &g->old);
}

static void pipe_restore(pipe_guard_t *g, bool epipe)
{
    if (epipe && !g->was_pending) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGPIPE);
        struct timespec zero = {0, 0};
        while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    sigprocmask(SIG_SETMASK, &g->old, NULL);
}

static ssize_t io_result(SSL *ssl, int r, size_t n, short *want)
{
    if (r == 1)
        return (ssize_t)n;
    switch (SSL_get_error(ssl, r)) {
    case SSL_ERROR_WANT_READ: *want = POLLIN; return -EAGAIN;
    case SSL_ERROR_WANT_WRITE: *want = POLLOUT; return -EAGAIN;
    case SSL_ERROR_ZERO_RETURN: return 0;
    case SSL_ERROR_SYSCALL: return errno ? -errno : -EPIPE;
    default: ERR_clear_error(); return -EPROTO;
    }
}

ssize_t cli_tls_read(struct ssl_st *ssl, char *buf, size_t cap, short *want)
{
    size_t n = 0;
    ERR_clear_error();
    errno = 0;
    int r = SSL_read_ex(ssl, buf, cap, &n);
    return io_result(ssl, r, n, want);
}

ssize_t cli_tls_write(struct ssl_st *ssl, const char *buf, size_t len, short *want)
{
    size_t n = 0;
    pipe_guard_t g;
    pipe_block(&g);
    ERR_clear_error();
    errno = 0;
    int r = SSL_write_ex(ssl, buf, len, &n);
    ssize_t rc = io_result(ssl, r, n, want);
    pipe_restore(&g, rc == -EPIPE || rc == -EPROTO || rc == -ECONNRESET);
    return rc;
}

void cli_tls_close(struct ssl_st *ssl)
{
    if (!ssl)
        return;
    pipe_guard_t g;
    pipe_block(&g);
    (void)SSL_shutdown(ssl); /* close_notify if it can go now; no wait for the reply */
    pipe_restore(&g, true);
    ERR_clear_error();
    SSL_free(ssl);
}
