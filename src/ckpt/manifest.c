/* manifest.c - a checkpoint's manifest as text and back (ckpt.h has the
 * format).  Pure: memory in, memory out, so the parser is fuzzed
 * (tests/fuzz/fuzz_ckpt_manifest.c).  A manifest comes from a directory
 * the job's user can write, so the parser trusts nothing in it: every
 * number is range-checked, every path must stay inside the checkpoint,
 * paths must be sorted and unique, and the closing checksum must match. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "ckpt/ckpt.h"

#define MAGIC "drover-checkpoint "

bool dr_ckpt_path_ok(const char *p, size_t n)
{
    if (n == 0 || n > DR_CKPT_MAX_PATH || p[0] == '/')
        return false;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && ((unsigned char)p[i] < 0x20 || p[i] == 0x7f))
            return false;
        if (i < n && p[i] != '/')
            continue;
        size_t len = i - start;
        if (len == 0 || (len == 1 && p[start] == '.') ||
            (len == 2 && p[start] == '.' && p[start + 1] == '.'))
            return false;
        start = i + 1;
    }
    return true;
}

void dr_ckpt_manifest_free(dr_ckpt_manifest_t *m)
{
    for (size_t i = 0; i < m->nfiles; i++)
        free(m->files[i].path);
    free(m->files);
    memset(m, 0, sizeof *m);
}

int dr_ckpt_manifest_add(dr_ckpt_manifest_t *m, const char *path, uint64_t size, dr_err_t *err)
{
    if (m->nfiles >= DR_CKPT_MAX_FILES)
        return dr_err_set(err, DR_ELIMIT, "more than %d files", DR_CKPT_MAX_FILES);
    if (dr_grow((void **)&m->files, &m->cap, m->nfiles + 1, sizeof *m->files) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    char *p = dr_strdup(path);
    if (!p)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    m->files[m->nfiles++] = (dr_ckpt_file_t){.path = p, .size = size};
    return DR_OK;
}

uint64_t dr_ckpt_manifest_bytes(const dr_ckpt_manifest_t *m)
{
    uint64_t b = 0;
    for (size_t i = 0; i < m->nfiles; i++)
        b += m->files[i].size;
    return b;
}

static int file_cmp(const void *a, const void *b)
{
    return strcmp(((const dr_ckpt_file_t *)a)->path, ((const dr_ckpt_file_t *)b)->path);
}

int dr_ckpt_manifest_sort(dr_ckpt_manifest_t *m, dr_err_t *err)
{
    if (m->nfiles > 1)
        qsort(m->files, m->nfiles, sizeof *m->files, file_cmp);
    for (size_t i = 1; i < m->nfiles; i++)
        if (strcmp(m->files[i - 1].path, m->files[i].path) == 0)
            return dr_err_set(err, DR_EINVAL, "%s: listed twice", m->files[i].path);
    return DR_OK;
}

static void hex(char *out, const uint8_t *b, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

static void sum_of(const char *text, size_t len, uint8_t out[16])
{
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(text, len));
    memcpy(out, c.digest, 16);
}

int dr_ckpt_manifest_format(const dr_ckpt_manifest_t *m, char **text, size_t *len, dr_err_t *err)
{
    *text = NULL;
    *len = 0;
    size_t cap = 256; /* the header lines: magic, seq, created, gen, owner, files */
    for (size_t i = 0; i < m->nfiles; i++) {
        const dr_ckpt_file_t *f = &m->files[i];
        size_t pl = strlen(f->path);
        if (!dr_ckpt_path_ok(f->path, pl))
            return dr_err_set(err, DR_EINVAL, "'%.200s': not a path a checkpoint may hold",
                              f->path);
        if (i > 0 && strcmp(m->files[i - 1].path, f->path) >= 0)
            return dr_err_set(err, DR_EINVAL, "%.200s: files not sorted or listed twice", f->path);
        cap += pl + 128;
    }
    if (cap > DR_CKPT_MAX_TEXT)
        return dr_err_set(err, DR_ELIMIT, "manifest over %u bytes", DR_CKPT_MAX_TEXT);
    char *b = malloc(cap);
    if (!b)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    size_t o = (size_t)snprintf(b, cap, MAGIC "%d\nseq %" PRIu64 "\ncreated %" PRId64 "\n",
                                DR_CKPT_VERSION, m->seq, m->created_ns);
    if (m->gen)
        o += (size_t)snprintf(b + o, cap - o, "gen %" PRIu32 "\n", m->gen);
    if (m->has_owner) {
        char nx[33];
        hex(nx, m->owner.nonce, 16);
        o += (size_t)snprintf(b + o, cap - o, "owner %" PRIu64 " %" PRIu32 " %s\n", m->owner.job,
                              m->owner.uid, nx);
    }
    o += (size_t)snprintf(b + o, cap - o, "files %zu\n", m->nfiles);
    for (size_t i = 0; i < m->nfiles; i++) {
        const dr_ckpt_file_t *f = &m->files[i];
        char x[33], s[65];
        hex(x, f->xxh, 16);
        if (f->has_sha)
            hex(s, f->sha, 32);
        else
            memcpy(s, "-", 2);
        o += (size_t)snprintf(b + o, cap - o, "f %" PRIu64 " %s %s %s\n", f->size, x, s, f->path);
    }
    uint8_t sum[16];
    char sx[33];
    sum_of(b, o, sum);
    hex(sx, sum, 16);
    o += (size_t)snprintf(b + o, cap - o, "end %s\n", sx);
    *text = b;
    *len = o;
    return DR_OK;
}

/* ---- parsing ---- */

typedef struct rd {
    const char *s;
    size_t len, pos, line;
    dr_err_t *err;
} rd_t;

static int bad(rd_t *r, const char *fmt, const char *what)
{
    dr_err_set(r->err, DR_EINVAL, "manifest line %zu: ", r->line);
    size_t n = strlen(r->err->msg);
    snprintf(r->err->msg + n, sizeof r->err->msg - n, fmt, what);
    return DR_EINVAL;
}

/* The next line (without its '\n'); a last line without '\n' is torn. */
static int next_line(rd_t *r, const char **l, size_t *n)
{
    r->line++;
    if (r->pos >= r->len)
        return bad(r, "%s", "missing (the manifest ends early: torn)");
    const char *nl = memchr(r->s + r->pos, '\n', r->len - r->pos);
    if (!nl)
        return bad(r, "%s", "no newline at its end (torn)");
    *l = r->s + r->pos;
    *n = (size_t)(nl - *l);
    r->pos += *n + 1;
    if (memchr(*l, '\0', *n))
        return bad(r, "%s", "holds a NUL byte");
    return DR_OK;
}

/* Decimal without sign or leading zeros (but "0"), at most max. */
static int num(rd_t *r, const char *p, size_t n, uint64_t max, uint64_t *out, const char *what)
{
    if (n == 0 || n > 20 || (n > 1 && p[0] == '0'))
        return bad(r, "%s: not a number", what);
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return bad(r, "%s: not a number", what);
        uint64_t d = (uint64_t)(p[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return bad(r, "%s: out of range", what);
        v = v * 10 + d;
    }
    if (v > max)
        return bad(r, "%s: out of range", what);
    *out = v;
    return DR_OK;
}

static int unhex(rd_t *r, const char *p, size_t n, uint8_t *out, size_t bytes, const char *what)
{
    if (n != 2 * bytes)
        return bad(r, "%s: wrong length", what);
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            return bad(r, "%s: not lower-case hex", what);
        if (i % 2 == 0)
            out[i / 2] = (uint8_t)(v << 4);
        else
            out[i / 2] |= (uint8_t)v;
    }
    return DR_OK;
}

/* "KEY VALUE" where VALUE is a number. */
static int keyed(rd_t *r, const char *key, uint64_t max, uint64_t *out)
{
    const char *l;
    size_t n, kl = strlen(key);
    int rc = next_line(r, &l, &n);
    if (rc)
        return rc;
    if (n <= kl || strncmp(l, key, kl) != 0 || l[kl] != ' ')
        return bad(r, "expected '%s N'", key);
    return num(r, l + kl + 1, n - kl - 1, max, out, key);
}

/* Split off the next space-separated word of [*p, end). */
static bool word(const char **p, const char *end, const char **w, size_t *wn)
{
    const char *sp = memchr(*p, ' ', (size_t)(end - *p));
    if (!sp)
        return false;
    *w = *p;
    *wn = (size_t)(sp - *p);
    *p = sp + 1;
    return true;
}

static int file_line(rd_t *r, dr_ckpt_manifest_t *m)
{
    const char *l, *w;
    size_t n, wn;
    int rc = next_line(r, &l, &n);
    if (rc)
        return rc;
    const char *p = l, *end = l + n;
    if (!word(&p, end, &w, &wn) || wn != 1 || w[0] != 'f')
        return bad(r, "%s", "expected a file line ('f SIZE XXH3 SHA256|- PATH')");
    uint64_t size;
    if (!word(&p, end, &w, &wn))
        return bad(r, "%s", "file line: no size");
    if ((rc = num(r, w, wn, INT64_MAX, &size, "size")))
        return rc;
    dr_ckpt_file_t f = {.size = size};
    if (!word(&p, end, &w, &wn))
        return bad(r, "%s", "file line: no checksum");
    if ((rc = unhex(r, w, wn, f.xxh, 16, "xxh3-128")))
        return rc;
    if (!word(&p, end, &w, &wn))
        return bad(r, "%s", "file line: no sha-256 field");
    if (!(wn == 1 && w[0] == '-')) {
        if ((rc = unhex(r, w, wn, f.sha, 32, "sha-256")))
            return rc;
        f.has_sha = true;
    }
    size_t pl = (size_t)(end - p);
    if (!dr_ckpt_path_ok(p, pl))
        return bad(r, "%s",
                   "path: empty, absolute, with '.', '..' or control characters, or "
                   "too long");
    if (m->nfiles > 0) {
        const char *prev = m->files[m->nfiles - 1].path;
        size_t ql = strlen(prev), k = ql < pl ? ql : pl;
        int c = memcmp(prev, p, k);
        if (c > 0 || (c == 0 && ql >= pl))
            return bad(r, "%s", "path: not after the previous one (files are sorted, once each)");
    }
    if (dr_grow((void **)&m->files, &m->cap, m->nfiles + 1, sizeof *m->files) != 0 ||
        !(f.path = dr_strndup(p, pl)))
        return dr_err_set(r->err, DR_ENOMEM, "manifest: out of memory");
    m->files[m->nfiles++] = f;
    return DR_OK;
}

/* "owner JOB UID NONCE" */
static int owner_line(rd_t *r, dr_ckpt_manifest_t *m)
{
    const char *l, *w;
    size_t n, wn;
    uint64_t job, uid;
    int rc = next_line(r, &l, &n);
    if (rc)
        return rc;
    const char *p = l + 6, *end = l + n;
    if (!word(&p, end, &w, &wn) || (rc = num(r, w, wn, INT64_MAX, &job, "owner job")))
        return rc ? rc : bad(r, "%s", "owner: no job");
    if (!word(&p, end, &w, &wn) || (rc = num(r, w, wn, UINT32_MAX, &uid, "owner uid")))
        return rc ? rc : bad(r, "%s", "owner: no uid");
    /* the nonce: the rest of the line */
    if ((rc = unhex(r, p, (size_t)(end - p), m->owner.nonce, 16, "owner nonce")))
        return rc;
    m->owner.job = job;
    m->owner.uid = (uint32_t)uid;
    m->has_owner = true;
    return DR_OK;
}

void dr_ckpt_owner_format(const dr_ckpt_owner_t *o, char *buf, size_t len)
{
    char nx[33];
    hex(nx, o->nonce, 16);
    snprintf(buf, len, "drover-job 1\njob %" PRIu64 "\nuid %" PRIu32 "\nnonce %s\n", o->job, o->uid,
             nx);
}

int dr_ckpt_owner_parse(dr_ckpt_owner_t *o, const char *text, size_t len, dr_err_t *err)
{
    memset(o, 0, sizeof *o);
    rd_t r = {.s = text, .len = len, .err = err};
    const char *l, *w;
    size_t n, wn;
    uint64_t v;
    int rc = next_line(&r, &l, &n);
    if (rc)
        return rc;
    if (n != 12 || strncmp(l, "drover-job 1", 12) != 0)
        return bad(&r, "%s", "not a drover job record (drover-job 1)");
    if ((rc = keyed(&r, "job", INT64_MAX, &o->job)) || (rc = keyed(&r, "uid", UINT32_MAX, &v)))
        return rc;
    o->uid = (uint32_t)v;
    if ((rc = next_line(&r, &l, &n)))
        return rc;
    const char *p = l, *end = l + n;
    if (!word(&p, end, &w, &wn) || wn != 5 || strncmp(w, "nonce", 5) != 0)
        return bad(&r, "%s", "expected 'nonce HEX'");
    if ((rc = unhex(&r, p, (size_t)(end - p), o->nonce, 16, "nonce")))
        return rc;
    if (r.pos != len)
        return bad(&r, "%s", "text after the nonce");
    return DR_OK;
}

bool dr_ckpt_owner_same(const dr_ckpt_owner_t *a, const dr_ckpt_owner_t *b)
{
    return a->job == b->job && a->uid == b->uid && memcmp(a->nonce, b->nonce, 16) == 0;
}

int dr_ckpt_manifest_parse(dr_ckpt_manifest_t *m, const char *text, size_t len, dr_err_t *err)
{
    memset(m, 0, sizeof *m);
    rd_t r = {.s = text, .len = len, .err = err};
    if (len > DR_CKPT_MAX_TEXT)
        return dr_err_set(err, DR_ELIMIT, "manifest over %u bytes", DR_CKPT_MAX_TEXT);
    const char *l;
    size_t n;
    uint64_t v, created, nfiles;
    int rc = next_line(&r, &l, &n);
    if (rc)
        goto fail;
    if (n <= strlen(MAGIC) || strncmp(l, MAGIC, strlen(MAGIC)) != 0) {
        rc = bad(&r, "%s", "not a drover checkpoint manifest");
        goto fail;
    }
    if ((rc = num(&r, l + strlen(MAGIC), n - strlen(MAGIC), UINT32_MAX, &v, "version")))
        goto fail;
    if (v != DR_CKPT_VERSION) {
        rc = dr_err_set(err, DR_EINVAL, "manifest version %" PRIu64 " (this drover reads %d)", v,
                        DR_CKPT_VERSION);
        goto fail;
    }
    if ((rc = keyed(&r, "seq", INT64_MAX, &m->seq)) ||
        (rc = keyed(&r, "created", INT64_MAX, &created)))
        goto fail;
    m->created_ns = (int64_t)created;
    /* "gen G" is there only when the committer knew its generation (>= 1):
     * a "gen 0" line would not format back the same */
    if (r.len - r.pos > 4 && strncmp(r.s + r.pos, "gen ", 4) == 0) {
        if ((rc = keyed(&r, "gen", UINT32_MAX, &v)))
            goto fail;
        if (v == 0) {
            rc = bad(&r, "%s", "gen 0 (a generation is at least 1; leave the line out)");
            goto fail;
        }
        m->gen = (uint32_t)v;
    }
    if (r.len - r.pos > 6 && strncmp(r.s + r.pos, "owner ", 6) == 0 && (rc = owner_line(&r, m)))
        goto fail;
    if ((rc = keyed(&r, "files", DR_CKPT_MAX_FILES, &nfiles)))
        goto fail;
    for (uint64_t i = 0; i < nfiles; i++)
        if ((rc = file_line(&r, m)))
            goto fail;
    size_t body = r.pos;
    if ((rc = next_line(&r, &l, &n)))
        goto fail;
    uint8_t want[16], got[16];
    if (n != 4 + 32 || strncmp(l, "end ", 4) != 0) {
        rc = bad(&r, "%s", "expected 'end CHECKSUM' after the files");
        goto fail;
    }
    if ((rc = unhex(&r, l + 4, 32, want, 16, "end")))
        goto fail;
    sum_of(text, body, got);
    if (memcmp(want, got, 16) != 0) {
        rc = dr_err_set(err, DR_EINVAL, "manifest: its checksum does not match (edited or torn)");
        goto fail;
    }
    if (r.pos != len) {
        rc = bad(&r, "%s", "text after the end line");
        goto fail;
    }
    return DR_OK;
fail:
    dr_ckpt_manifest_free(m);
    return rc;
}
