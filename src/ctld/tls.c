/* tls.c - HTTPS on droverd's TCP API: the server's TLS context, a
 * self-signed certificate for a quick start, and the per-connection
 * bufferevent evhttp asks for.
 *
 * Over TCP a request carries a bearer token and a submit carries a job's
 * command line, script and environment: in plain HTTP anyone on the path
 * reads them (and replays the token).  With --tls the TCP listener speaks
 * TLS (libevent's bufferevent_openssl under evhttp); the Unix socket stays
 * plain, as its peer is named by the kernel and nothing crosses a network.
 *
 * Every file here is read or written at start-up only (ctld_tls_init runs
 * from ctld_http_start, before the event loop): the operator's certificate
 * and key, or the self-signed pair in the state directory.  Nothing a user
 * names is ever opened. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/http.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "ctld/ctld.h"
#include "ctld/http.h"
#include "ctld/tls.h"

#define SELF_CERT  "tls-cert.pem"
#define SELF_KEY   "tls-key.pem"
#define SELF_DAYS  (5 * 365)
#define SAN_MAX    2048
#define NAME_MAX_L 253 /* a DNS name's longest */

/* OpenSSL's last error as text (the queue is emptied). */
static const char *ssl_err(char *buf, size_t n)
{
    unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (!e)
        return "unknown error";
    /* the reason alone ("certificate verify failed", "No such file or
     * directory"): the library and code numbers say nothing to a user */
    const char *r = ERR_reason_error_string(e);
    if (r)
        return r;
    ERR_error_string_n(e, buf, n);
    return buf;
}

void ctld_tls_fingerprint(X509 *x, char out[CTLD_TLS_FPR_LEN])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    out[0] = '\0';
    if (!X509_digest(x, EVP_sha256(), md, &n))
        return;
    for (unsigned int i = 0; i < n && 3 * i + 3 <= CTLD_TLS_FPR_LEN; i++)
        snprintf(out + 3 * i, 4, i + 1 < n ? "%02X:" : "%02X", md[i]);
}

/* One --tls-san name or an implied one, into the subjectAltName text: an
 * IP address as IP:, else a DNS name of letters, digits, '-', '.' and a
 * leading '*.' (anything else would be read as the list's syntax). */
static int san_add(char *san, size_t cap, const char *name, size_t len, dr_err_t *err)
{
    char buf[NAME_MAX_L + 1];
    if (len == 0)
        return DR_OK;
    if (len > NAME_MAX_L)
        return dr_err_set(err, DR_EINVAL, "--tls-san: '%.*s...': longer than %d characters", 40,
                          name, NAME_MAX_L);
    memcpy(buf, name, len);
    buf[len] = '\0';
    unsigned char addr[16];
    const char *kind = "DNS";
    if (inet_pton(AF_INET, buf, addr) == 1 || inet_pton(AF_INET6, buf, addr) == 1) {
        kind = "IP";
    } else {
        for (size_t i = 0; i < len; i++) {
            char ch = buf[i];
            bool okc = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                       (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
                       (ch == '*' && i == 0 && buf[1] == '.');
            if (!okc)
                return dr_err_set(err, DR_EINVAL,
                                  "--tls-san: '%s': not a host name or an IP address", buf);
        }
    }
    /* the same name twice (the host name given again) is harmless but noisy */
    char item[NAME_MAX_L + 8];
    snprintf(item, sizeof item, "%s:%s", kind, buf);
    size_t il = strlen(item);
    for (const char *p = san; (p = strstr(p, item)) != NULL; p += il)
        if ((p == san || p[-1] == ',') && (p[il] == ',' || p[il] == '\0'))
            return DR_OK;
    size_t used = strlen(san);
    if (used + il + 2 > cap)
        return dr_err_set(err, DR_ELIMIT, "--tls-san: too many names");
    snprintf(san + used, cap - used, "%s%s", used ? "," : "", item);
    return DR_OK;
}

static int add_ext(X509 *x, int nid, const char *value, char *eb, size_t ebn, dr_err_t *err)
{
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    if (!e || !X509_add_ext(x, e, -1)) {
        X509_EXTENSION_free(e);
        return dr_err_set(err, DR_EINVAL, "TLS: certificate extension %s: %s", OBJ_nid2sn(nid),
                          ssl_err(eb, ebn));
    }
    X509_EXTENSION_free(e);
    return DR_OK;
}

/* A new EC P-256 key and a self-signed certificate for the names in san. */
static int self_signed(const char *cn, const char *san, EVP_PKEY **pkey, X509 **cert, dr_err_t *err)
{
    char eb[256];
    EVP_PKEY *pk = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    BIGNUM *serial = BN_new();
    int rc = DR_OK;
    if (!pk || !x || !serial || !BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) ||
        !BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x)) || !X509_set_version(x, 2) ||
        !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(x), (long)SELF_DAYS * 86400) ||
        !X509_set_pubkey(x, pk)) {
        rc = dr_err_set(err, DR_ENOMEM, "TLS: cannot make a key and certificate: %s",
                        ssl_err(eb, sizeof eb));
        goto out;
    }
    X509_NAME *nm = X509_get_subject_name(x);
    if (!X509_NAME_add_entry_by_txt(nm, "O", MBSTRING_ASC,
                                    (const unsigned char *)"drover (self-signed)", -1, -1, 0) ||
        !X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) ||
        !X509_set_issuer_name(x, nm)) {
        rc = dr_err_set(err, DR_EINVAL, "TLS: certificate name: %s", ssl_err(eb, sizeof eb));
        goto out;
    }
    /* a self-signed certificate is its own trust anchor (--cacert): CA:TRUE
     * lets every verifier take it as one; the names are what a client
     * checks the address it dialled against */
    if ((rc = add_ext(x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0", eb, sizeof eb,
                      err)) != DR_OK ||
        (rc = add_ext(x, NID_key_usage, "critical,digitalSignature,keyCertSign", eb, sizeof eb,
                      err)) != DR_OK ||
        (rc = add_ext(x, NID_ext_key_usage, "serverAuth", eb, sizeof eb, err)) != DR_OK ||
        (rc = add_ext(x, NID_subject_key_identifier, "hash", eb, sizeof eb, err)) != DR_OK ||
        (rc = add_ext(x, NID_subject_alt_name, san, eb, sizeof eb, err)) != DR_OK)
        goto out;
    if (!X509_sign(x, pk, EVP_sha256())) {
        rc = dr_err_set(err, DR_EINVAL, "TLS: signing the certificate: %s", ssl_err(eb, sizeof eb));
        goto out;
    }
out:
    BN_free(serial);
    if (rc != DR_OK) {
        X509_free(x);
        EVP_PKEY_free(pk);
        return rc;
    }
    *pkey = pk;
    *cert = x;
    return DR_OK;
}

/* Write a PEM file whole or not at all: a temporary name, then rename.
 * The key's mode is 0600 from its creation (no moment when others could
 * read it). */
static int write_pem(const char *path, mode_t mode, EVP_PKEY *pk, X509 *x, dr_err_t *err)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return dr_err_set(err, DR_EIO, "TLS: %s: %s", tmp, strerror(errno));
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return dr_err_set(err, DR_EIO, "TLS: %s: %s", tmp, strerror(errno));
    }
    bool ok = pk ? PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL) == 1
                 : PEM_write_X509(f, x) == 1;
    ok = fflush(f) == 0 && ok;
    ok = fsync(fileno(f)) == 0 && ok;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return dr_err_set(err, DR_EIO, "TLS: writing %s: %s", path, strerror(e));
    }
    return DR_OK;
}

/* The names a generated certificate is for: localhost, this host's name,
 * 127.0.0.1, ::1, and --tls-san's comma-separated list. */
static int san_list(const char *extra, char *san, size_t cap, char *host, size_t hcap,
                    dr_err_t *err)
{
    san[0] = '\0';
    if (gethostname(host, hcap) != 0 || !host[0])
        snprintf(host, hcap, "localhost");
    host[hcap - 1] = '\0';
    int rc = DR_OK;
    const char *fixed[] = {"localhost", host, "127.0.0.1", "::1"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed && rc == DR_OK; i++)
        rc = san_add(san, cap, fixed[i], strlen(fixed[i]), err);
    for (const char *p = extra ? extra : ""; *p && rc == DR_OK;) {
        size_t n = strcspn(p, ",");
        rc = san_add(san, cap, p, n, err);
        p += n + (p[n] == ',');
    }
    return rc;
}

/* A pair made on an earlier start keeps its names: a --tls-san name it
 * lacks would make clients refuse that name, so say so now. */
static void warn_missing_names(X509 *x, const char *extra, const char *cert_path)
{
    for (const char *p = extra ? extra : ""; *p && x;) {
        size_t n = strcspn(p, ",");
        char name[NAME_MAX_L + 1];
        snprintf(name, sizeof name, "%.*s", (int)(n > NAME_MAX_L ? NAME_MAX_L : n), p);
        unsigned char addr[16];
        bool ip = inet_pton(AF_INET, name, addr) == 1 || inet_pton(AF_INET6, name, addr) == 1;
        if (name[0] &&
            (ip ? X509_check_ip_asc(x, name, 0) : X509_check_host(x, name, 0, 0, NULL)) != 1)
            ctld_log(
                "API: TLS: warning: %s, made on an earlier start, is not for '%s' (--tls-san): "
                "stop droverd, remove it and its key, and start again to make a new pair",
                cert_path, name);
        p += n + (p[n] == ',');
    }
}

/* The state directory's pair, made on the first start with --tls and no
 * --tls-cert; the same pair (and fingerprint) on every later start. */
static int load_or_make_self(dr_ctld_t *c, SSL_CTX *ctx, char *cert_path, size_t cp_cap, bool *made,
                             dr_err_t *err)
{
    char key_path[4200], eb[256];
    snprintf(cert_path, cp_cap, "%s/" SELF_CERT, c->o.state_dir);
    snprintf(key_path, sizeof key_path, "%s/" SELF_KEY, c->o.state_dir);
    struct stat sc, sk;
    bool have_c = stat(cert_path, &sc) == 0, have_k = stat(key_path, &sk) == 0;
    *made = false;
    if (have_c && have_k) {
        if (SSL_CTX_use_certificate_chain_file(ctx, cert_path) != 1 ||
            SSL_CTX_use_PrivateKey_file(ctx, key_path, SSL_FILETYPE_PEM) != 1)
            return dr_err_set(err, DR_EINVAL,
                              "TLS: the self-signed pair in %s: %s (remove %s and %s to make a "
                              "new one)",
                              c->o.state_dir, ssl_err(eb, sizeof eb), SELF_CERT, SELF_KEY);
        warn_missing_names(SSL_CTX_get0_certificate(ctx), c->o.tls_san, cert_path);
        return DR_OK;
    }
    if (have_c != have_k)
        return dr_err_set(err, DR_EINVAL,
                          "TLS: %s exists without %s: remove it to make a new pair, or give "
                          "--tls-cert and --tls-key",
                          have_c ? cert_path : key_path, have_c ? key_path : cert_path);
    char san[SAN_MAX], host[256];
    int rc = san_list(c->o.tls_san, san, sizeof san, host, sizeof host, err);
    if (rc != DR_OK)
        return rc;
    EVP_PKEY *pk = NULL;
    X509 *x = NULL;
    if ((rc = self_signed(host, san, &pk, &x, err)) != DR_OK)
        return rc;
    /* the key first: a certificate alone is never left to be taken */
    rc = write_pem(key_path, 0600, pk, NULL, err);
    if (rc == DR_OK)
        rc = write_pem(cert_path, 0644, NULL, x, err);
    if (rc == DR_OK &&
        (SSL_CTX_use_certificate(ctx, x) != 1 || SSL_CTX_use_PrivateKey(ctx, pk) != 1))
        rc = dr_err_set(err, DR_EINVAL, "TLS: %s", ssl_err(eb, sizeof eb));
    if (rc == DR_OK) {
        *made = true;
        ctld_log("API: TLS: made a self-signed certificate for %s", san);
    }
    X509_free(x);
    EVP_PKEY_free(pk);
    return rc;
}

/* The operator's key: not readable by others, and the daemon's own. */
static int key_file_private(const char *path, dr_err_t *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return dr_err_set(err, DR_EIO, "--tls-key %s: %s", path, strerror(errno));
    if (st.st_mode & 077)
        return dr_err_set(err, DR_EINVAL,
                          "--tls-key %s: readable by group or others (mode %o); chmod 600 it", path,
                          (unsigned)(st.st_mode & 0777));
    if (st.st_uid != geteuid())
        return dr_err_set(err, DR_EINVAL, "--tls-key %s: owned by uid %u, not droverd's (%u)", path,
                          (unsigned)st.st_uid, (unsigned)geteuid());
    return DR_OK;
}

int ctld_tls_init(dr_ctld_t *c, dr_err_t *err)
{
    if (!c->o.tls)
        return DR_OK;
    char eb[256];
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx)
        return dr_err_set(err, DR_ENOMEM, "TLS: %s", ssl_err(eb, sizeof eb));
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    int rc = DR_OK;
    char path[4200];
    bool made = false;
    if (c->o.tls_cert) {
        snprintf(path, sizeof path, "%s", c->o.tls_cert);
        if ((rc = key_file_private(c->o.tls_key, err)) == DR_OK &&
            (SSL_CTX_use_certificate_chain_file(ctx, c->o.tls_cert) != 1 ||
             SSL_CTX_use_PrivateKey_file(ctx, c->o.tls_key, SSL_FILETYPE_PEM) != 1))
            rc = dr_err_set(err, DR_EINVAL, "--tls-cert %s / --tls-key %s: %s", c->o.tls_cert,
                            c->o.tls_key, ssl_err(eb, sizeof eb));
    } else {
        rc = load_or_make_self(c, ctx, path, sizeof path, &made, err);
    }
    if (rc == DR_OK && SSL_CTX_check_private_key(ctx) != 1)
        rc = dr_err_set(err, DR_EINVAL, "TLS: the key does not match the certificate %s", path);
    if (rc != DR_OK) {
        SSL_CTX_free(ctx);
        return rc;
    }
    ctld_tls_fingerprint(SSL_CTX_get0_certificate(ctx), c->tls_fpr);
    c->tls_ctx = ctx;
    /* the fingerprint is what users compare (or pin with --cacert) */
    ctld_log("API: TLS certificate %s%s, SHA-256 fingerprint %s", path,
             made ? " (self-signed, made now)" : "", c->tls_fpr);
    return DR_OK;
}

void ctld_tls_free(dr_ctld_t *c)
{
    SSL_CTX_free(c->tls_ctx);
    c->tls_ctx = NULL;
}

struct bufferevent *ctld_tls_bev(struct event_base *base, void *arg)
{
    dr_ctld_t *c = arg;
    SSL *ssl = SSL_new(c->tls_ctx);
    if (!ssl)
        return NULL;
    /* evhttp gives the socket afterwards (bufferevent_setfd) */
    struct bufferevent *bev = bufferevent_openssl_socket_new(
        base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
    if (!bev) {
        SSL_free(ssl);
        return NULL;
    }
    /* a client that closes without close_notify ends its connection, no
     * more: HTTP's own lengths say whether a message was whole */
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    return bev;
}

bool ctld_req_tls(struct evhttp_request *req)
{
    struct evhttp_connection *conn = req ? evhttp_request_get_connection(req) : NULL;
    struct bufferevent *bev = conn ? evhttp_connection_get_bufferevent(conn) : NULL;
    return bev && bufferevent_openssl_get_ssl(bev) != NULL;
}
