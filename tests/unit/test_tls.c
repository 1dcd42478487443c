/* test_tls.c - HTTPS between the CLI and droverd (issue 21 item 8): the
 * self-signed pair droverd makes (names, key mode, the same pair on the next
 * start, refusals), and the CLI's handshake against it over a socketpair:
 * accepted with the certificate as --cacert, refused without it, refused
 * for a name the certificate lacks, each refusal naming what failed and
 * the fingerprint. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "cli/tls.h"
#include "ctld/ctld.h"
#include "ctld/tls.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/drover-tls-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A file in the test's directory (two buffers: rename takes two). */
static const char *path(const char *name)
{
    static char p[2][128];
    static int k;
    k = !k;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static void init_ctld(dr_ctld_t *c, const char *san)
{
    memset(c, 0, sizeof *c);
    c->o.tls = true;
    c->o.state_dir = dir;
    c->o.tls_san = san;
}

static X509 *read_cert(const char *p)
{
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(x);
    return x;
}

static void test_self_signed(void **state)
{
    (void)state;
    dr_ctld_t c;
    dr_err_t err = {0};
    /* a name that would be read as the list's syntax: refused, nothing written */
    init_ctld(&c, "ok.example,bad name");
    assert_int_equal(ctld_tls_init(&c, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "'bad name': not a host name or an IP address");
    assert_int_not_equal(access(path("tls-key.pem"), F_OK), 0);
    init_ctld(&c, "ok.example,DNS:evil.example");
    assert_int_equal(ctld_tls_init(&c, &err), DR_EINVAL);

    init_ctld(&c, "node7.example,10.9.8.7");
    assert_int_equal(ctld_tls_init(&c, &err), DR_OK);
    assert_non_null(c.tls_ctx);
    struct stat st;
    assert_int_equal(stat(path("tls-key.pem"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    X509 *x = read_cert(path("tls-cert.pem"));
    assert_int_equal(X509_check_host(x, "localhost", 0, 0, NULL), 1);
    assert_int_equal(X509_check_host(x, "node7.example", 0, 0, NULL), 1);
    assert_int_equal(X509_check_ip_asc(x, "127.0.0.1", 0), 1);
    assert_int_equal(X509_check_ip_asc(x, "10.9.8.7", 0), 1);
    assert_int_equal(X509_check_host(x, "other.example", 0, 0, NULL), 0);
    EVP_PKEY *pk = X509_get0_pubkey(x);
    assert_int_equal(EVP_PKEY_get_base_id(pk), EVP_PKEY_EC);
    char fpr[CTLD_TLS_FPR_LEN];
    ctld_tls_fingerprint(x, fpr);
    assert_string_equal(fpr, c.tls_fpr);
    assert_int_equal(strlen(fpr), 95);
    X509_free(x);
    char first[CTLD_TLS_FPR_LEN];
    snprintf(first, sizeof first, "%s", c.tls_fpr);
    ctld_tls_free(&c);

    /* the next start takes the same pair: the fingerprint users pinned holds
     * (a --tls-san name it lacks is only warned about) */
    init_ctld(&c, "node7.example,new.example");
    assert_int_equal(ctld_tls_init(&c, &err), DR_OK);
    assert_string_equal(c.tls_fpr, first);
    ctld_tls_free(&c);

    /* half a pair is not completed silently */
    assert_int_equal(rename(path("tls-key.pem"), path("k.saved")), 0);
    init_ctld(&c, NULL);
    assert_int_equal(ctld_tls_init(&c, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "exists without");
    assert_int_equal(rename(path("k.saved"), path("tls-key.pem")), 0);

    /* the operator's key: never one others can read */
    init_ctld(&c, NULL);
    c.o.tls_cert = path("tls-cert.pem");
    static char key[128];
    snprintf(key, sizeof key, "%s", path("tls-key.pem"));
    c.o.tls_key = key;
    assert_int_equal(chmod(key, 0640), 0);
    assert_int_equal(ctld_tls_init(&c, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "readable by group or others");
    assert_int_equal(chmod(key, 0600), 0);
    assert_int_equal(ctld_tls_init(&c, &err), DR_OK);
    assert_string_equal(c.tls_fpr, first);
    ctld_tls_free(&c);
}

/* A server on one end of a socketpair (a child: blocking SSL_accept, then
 * "hello"); the CLI's handshake on the other.  The result of
 * cli_tls_connect, and what was read when it succeeded. */
static int handshake(SSL_CTX *sctx, const char *host, const char *cacert, char *got, size_t n,
                     dr_err_t *err)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        SSL *s = SSL_new(sctx);
        SSL_set_fd(s, sv[1]);
        if (SSL_accept(s) == 1)
            SSL_write(s, "hello", 5);
        SSL_shutdown(s);
        _exit(0);
    }
    close(sv[1]);
    fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long deadline = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 5000;
    SSL *ssl = NULL;
    int rc = cli_tls_connect(sv[0], host, "6817", cacert, deadline, &ssl, err);
    got[0] = '\0';
    if (rc == DR_OK) {
        size_t k = 0;
        for (int tries = 0; tries < 500 && k < n - 1; tries++) {
            short want;
            ssize_t r = cli_tls_read(ssl, got + k, n - 1 - k, &want);
            if (r > 0)
                k += (size_t)r;
            else if (r == -EAGAIN)
                usleep(2000);
            else
                break;
        }
        got[k] = '\0';
        cli_tls_close(ssl);
    }
    close(sv[0]);
    waitpid(pid, NULL, 0);
    return rc;
}

static void test_cli_verifies(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN); /* the child server may be gone when we say goodbye */
    dr_ctld_t c;
    dr_err_t err = {0};
    init_ctld(&c, "node7.example");
    assert_int_equal(ctld_tls_init(&c, &err), DR_OK);
    char got[32];

    /* pinned: --cacert is the self-signed certificate */
    assert_int_equal(handshake(c.tls_ctx, "localhost", path("tls-cert.pem"), got, sizeof got, &err),
                     DR_OK);
    assert_string_equal(got, "hello");
    assert_int_equal(handshake(c.tls_ctx, "127.0.0.1", path("tls-cert.pem"), got, sizeof got, &err),
                     DR_OK);
    assert_int_equal(
        handshake(c.tls_ctx, "node7.example", path("tls-cert.pem"), got, sizeof got, &err), DR_OK);

    /* the system's CAs do not vouch for it: refused, saying so, with the
     * fingerprint droverd logged */
    memset(&err, 0, sizeof err);
    assert_int_equal(handshake(c.tls_ctx, "localhost", NULL, got, sizeof got, &err), DR_EIO);
    tu_assert_contains(err.msg, "certificate verification failed: self-signed certificate");
    tu_assert_contains(err.msg, c.tls_fpr);
    assert_string_equal(got, "");

    /* trusted, but not for the name dialled */
    memset(&err, 0, sizeof err);
    assert_int_equal(
        handshake(c.tls_ctx, "evil.example", path("tls-cert.pem"), got, sizeof got, &err), DR_EIO);
    tu_assert_contains(err.msg, "hostname mismatch: it is not a certificate for 'evil.example'");
    memset(&err, 0, sizeof err);
    assert_int_equal(handshake(c.tls_ctx, "10.1.1.1", path("tls-cert.pem"), got, sizeof got, &err),
                     DR_EIO);
    tu_assert_contains(err.msg, "IP address mismatch");

    /* a --cacert that cannot be read */
    memset(&err, 0, sizeof err);
    assert_int_equal(handshake(c.tls_ctx, "localhost", path("none.pem"), got, sizeof got, &err),
                     DR_EINVAL);
    tu_assert_contains(err.msg, "--cacert");
    ctld_tls_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_self_signed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_verifies, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
