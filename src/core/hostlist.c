/* hostlist.c - Slurm host range expressions: expansion ("h[01-03]" -> h01
 * h02 h03, bracket groups multiply, top-level commas separate terms) and the
 * reverse compression that groups names by prefix, suffix and width. */
#include "drover/hostlist.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds longer than this are rejected (they would overflow 64 bits). */
#define HL_MAX_DIGITS 18

typedef struct hl_range {
    uint64_t lo, hi;
    int width; /* digits of the lower bound: zero padding */
} hl_range_t;

/* A term is literal text and bracket groups; a group is a list of ranges. */
typedef struct hl_seg {
    const char *lit; /* literal text before the group (or the tail) */
    size_t litlen;
    size_t r0, nr; /* ranges [r0, r0+nr) of the term's range table; nr=0: tail */
    uint64_t count;
} hl_seg_t;

static int hl_err(dr_err_t *err, int code, const char *expr, const char *fmt, ...) DR_PRINTF(4, 5);

/* "hostlist 'EXPR': what" (a long expression is shortened). */
static int hl_err(dr_err_t *err, int code, const char *expr, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t n = strlen(expr);
    return dr_err_set(err, code, "hostlist '%.*s%s': %s", (int)(n > 120 ? 117 : n), expr,
                      n > 120 ? "..." : "", what);
}

/* Parse a bound of [s, s+n): 1..HL_MAX_DIGITS decimal digits. */
static int hl_bound(const char *expr, const char *s, size_t n, uint64_t *v, dr_err_t *err)
{
    if (n == 0)
        return hl_err(err, DR_EINVAL, expr, "empty range bound");
    if (n > HL_MAX_DIGITS) {
        for (size_t i = 0; i < n; i++)
            if (!isdigit((unsigned char)s[i]))
                return hl_err(err, DR_EINVAL, expr, "'%.*s' is not a number",
                              (int)(n > 40 ? 40 : n), s);
        return hl_err(err, DR_EINVAL, expr, "'%.*s' has more than %d digits",
                      (int)(n > 40 ? 40 : n), s, HL_MAX_DIGITS);
    }
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return hl_err(err, DR_EINVAL, expr, "'%.*s' is not a number", (int)n, s);
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    *v = x;
    return DR_OK;
}

/* Parse one bracket body [s, s+n) ("001-016,020") into ranges. */
static int hl_group(const char *expr, const char *s, size_t n, hl_range_t **rs, size_t *nrs,
                    size_t *caprs, uint64_t *count, dr_err_t *err)
{
    if (n == 0)
        return hl_err(err, DR_EINVAL, expr, "empty range '[]'");
    uint64_t total = 0;
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < n && s[j] != ',')
            j++;
        const char *item = s + i;
        size_t ilen = j - i;
        if (ilen == 0)
            return hl_err(err, DR_EINVAL, expr, "empty range in '[%.*s]'", (int)n, s);
        const char *dash = memchr(item, '-', ilen);
        hl_range_t r = {0, 0, 0};
        int rc;
        if (dash) {
            size_t llen = (size_t)(dash - item);
            if ((rc = hl_bound(expr, item, llen, &r.lo, err)) != 0)
                return rc;
            if ((rc = hl_bound(expr, dash + 1, ilen - llen - 1, &r.hi, err)) != 0)
                return rc;
            r.width = (int)llen;
            if (r.hi < r.lo)
                return hl_err(err, DR_EINVAL, expr, "range %.*s is descending", (int)ilen, item);
        } else {
            if ((rc = hl_bound(expr, item, ilen, &r.lo, err)) != 0)
                return rc;
            r.hi = r.lo;
            r.width = (int)ilen;
        }
        uint64_t c = r.hi - r.lo + 1;
        if (c > DR_HOSTLIST_MAX || total + c > DR_HOSTLIST_MAX)
            total = DR_HOSTLIST_MAX + 1; /* saturate; reported by the caller */
        else
            total += c;
        if (DR_PUSH(*rs, *nrs, *caprs, r) != 0)
            return dr_err_set(err, DR_ENOMEM, "hostlist: out of memory");
        if (j == n)
            break;
        i = j + 1;
    }
    *count = total;
    return DR_OK;
}

typedef struct hl_term {
    hl_seg_t *segs;
    size_t nsegs, capsegs;
    hl_range_t *rs;
    size_t nrs, caprs;
    uint64_t count; /* hosts this term makes, saturated at DR_HOSTLIST_MAX+1 */
} hl_term_t;

static void hl_term_free(hl_term_t *t)
{
    free(t->segs);
    free(t->rs);
    memset(t, 0, sizeof *t);
}

/* Split a term [s, s+n) into segments and count its hosts. */
static int hl_term_parse(const char *expr, const char *s, size_t n, hl_term_t *t, dr_err_t *err)
{
    t->nsegs = t->nrs = 0;
    t->count = 1;
    size_t i = 0;
    while (i <= n) {
        size_t j = i;
        while (j < n && s[j] != '[' && s[j] != ']')
            j++;
        if (j < n && s[j] == ']')
            return hl_err(err, DR_EINVAL, expr, "unbalanced ']'");
        hl_seg_t seg = {s + i, j - i, t->nrs, 0, 1};
        if (j < n) { /* s[j] == '[' */
            size_t k = j + 1;
            while (k < n && s[k] != ']' && s[k] != '[')
                k++;
            if (k >= n)
                return hl_err(err, DR_EINVAL, expr, "unbalanced '['");
            if (s[k] == '[')
                return hl_err(err, DR_EINVAL, expr, "nested '['");
            int rc =
                hl_group(expr, s + j + 1, k - j - 1, &t->rs, &t->nrs, &t->caprs, &seg.count, err);
            if (rc != 0)
                return rc;
            seg.nr = t->nrs - seg.r0;
            if (seg.count > DR_HOSTLIST_MAX || t->count * seg.count > DR_HOSTLIST_MAX)
                t->count = DR_HOSTLIST_MAX + 1;
            else
                t->count *= seg.count;
            i = k + 1;
        } else {
            i = n + 1;
        }
        if (DR_PUSH(t->segs, t->nsegs, t->capsegs, seg) != 0)
            return dr_err_set(err, DR_ENOMEM, "hostlist: out of memory");
    }
    return DR_OK;
}

/* Emit the hosts of a parsed term (odometer over its groups). */
static int hl_term_emit(const hl_term_t *t, dr_strvec_t *out, dr_err_t *err)
{
    size_t maxlen = 1;
    for (size_t i = 0; i < t->nsegs; i++)
        maxlen += t->segs[i].litlen + (t->segs[i].nr ? HL_MAX_DIGITS + 1 : 0);
    size_t *ri = calloc(t->nsegs + 1, sizeof *ri);     /* range index per segment */
    uint64_t *val = calloc(t->nsegs + 1, sizeof *val); /* current value per segment */
    char *name = malloc(maxlen);
    int rc = DR_OK;
    if (!ri || !val || !name) {
        rc = dr_err_set(err, DR_ENOMEM, "hostlist: out of memory");
        goto out;
    }
    for (size_t i = 0; i < t->nsegs; i++)
        if (t->segs[i].nr)
            val[i] = t->rs[t->segs[i].r0].lo;
    for (;;) {
        size_t len = 0;
        for (size_t i = 0; i < t->nsegs; i++) {
            const hl_seg_t *sg = &t->segs[i];
            memcpy(name + len, sg->lit, sg->litlen);
            len += sg->litlen;
            if (sg->nr) {
                const hl_range_t *r = &t->rs[sg->r0 + ri[i]];
                len += (size_t)snprintf(name + len, maxlen - len, "%0*llu", r->width,
                                        (unsigned long long)val[i]);
            }
        }
        name[len] = '\0';
        if (dr_strvec_push(out, name) != 0) {
            rc = dr_err_set(err, DR_ENOMEM, "hostlist: out of memory");
            goto out;
        }
        /* advance the odometer: the last group varies fastest */
        size_t i = t->nsegs;
        for (; i > 0; i--) {
            const hl_seg_t *sg = &t->segs[i - 1];
            if (!sg->nr)
                continue;
            const hl_range_t *r = &t->rs[sg->r0 + ri[i - 1]];
            if (val[i - 1] < r->hi) {
                val[i - 1]++;
                break;
            }
            if (ri[i - 1] + 1 < sg->nr) {
                ri[i - 1]++;
                val[i - 1] = t->rs[sg->r0 + ri[i - 1]].lo;
                break;
            }
            ri[i - 1] = 0;
            val[i - 1] = t->rs[sg->r0].lo;
        }
        if (i == 0)
            break;
    }
out:
    free(ri);
    free(val);
    free(name);
    return rc;
}

/* Split expr at top-level commas; call fn on each trimmed term. */
typedef int (*hl_term_fn)(const char *expr, const char *s, size_t n, void *ctx, dr_err_t *err);

static int hl_each_term(const char *expr, hl_term_fn fn, void *ctx, dr_err_t *err)
{
    size_t n = strlen(expr), i = 0;
    for (;;) {
        size_t j = i;
        int depth = 0;
        while (j < n && (depth > 0 || expr[j] != ',')) {
            if (expr[j] == '[')
                depth++;
            else if (expr[j] == ']' && depth > 0)
                depth--;
            j++;
        }
        size_t a = i, b = j;
        while (a < b && isspace((unsigned char)expr[a]))
            a++;
        while (b > a && isspace((unsigned char)expr[b - 1]))
            b--;
        if (a == b)
            return hl_err(err, DR_EINVAL, expr, n == 0 ? "empty host list" : "empty host name");
        int rc = fn(expr, expr + a, b - a, ctx, err);
        if (rc != 0)
            return rc;
        if (j >= n)
            return DR_OK;
        i = j + 1;
    }
}

typedef struct hl_ctx {
    hl_term_t term;
    uint64_t total;
    dr_strvec_t *out;
} hl_ctx_t;

static int hl_count_term(const char *expr, const char *s, size_t n, void *vctx, dr_err_t *err)
{
    hl_ctx_t *ctx = vctx;
    int rc = hl_term_parse(expr, s, n, &ctx->term, err);
    if (rc != 0)
        return rc;
    ctx->total += ctx->term.count;
    if (ctx->total > DR_HOSTLIST_MAX)
        return hl_err(err, DR_ELIMIT, expr, "expands to more than %d hosts", DR_HOSTLIST_MAX);
    return DR_OK;
}

static int hl_emit_term(const char *expr, const char *s, size_t n, void *vctx, dr_err_t *err)
{
    hl_ctx_t *ctx = vctx;
    int rc = hl_term_parse(expr, s, n, &ctx->term, err);
    return rc != 0 ? rc : hl_term_emit(&ctx->term, ctx->out, err);
}

int dr_hostlist_expand(const char *expr, dr_strvec_t *out, dr_err_t *err)
{
    if (!expr)
        return dr_err_set(err, DR_EINVAL, "hostlist: no expression");
    hl_ctx_t ctx = {.out = out};
    /* pass 1 validates and counts (nothing allocated per host), pass 2 emits */
    int rc = hl_each_term(expr, hl_count_term, &ctx, err);
    if (rc == 0 && dr_grow((void **)&out->v, &out->cap, out->n + ctx.total, sizeof *out->v) != 0)
        rc = dr_err_set(err, DR_ENOMEM, "hostlist: out of memory");
    if (rc == 0) {
        size_t n0 = out->n;
        rc = hl_each_term(expr, hl_emit_term, &ctx, err);
        if (rc != 0) { /* leave out as it was */
            while (out->n > n0)
                free(out->v[--out->n]);
        }
    }
    hl_term_free(&ctx.term);
    return rc;
}

/* --- compression --- */

typedef struct hl_name {
    const char *s;
    size_t len;
    size_t plen;  /* prefix length: the name up to its last digit run */
    size_t dlen;  /* digits in that run (0: no number, the name stands alone) */
    uint64_t val; /* its value */
    int width;    /* 0 = natural (no zero padding), else padded width */
    size_t group; /* index of the group's representative name */
    size_t first; /* for a representative: first appearance of the group */
} hl_name_t;

static void hl_split(hl_name_t *h)
{
    size_t n = h->len, e = n;
    while (e > 0 && !isdigit((unsigned char)h->s[e - 1]))
        e--;
    size_t b = e;
    while (b > 0 && isdigit((unsigned char)h->s[b - 1]))
        b--;
    h->plen = b;
    h->dlen = e - b;
    h->width = 0;
    if (h->dlen == 0 || h->dlen > HL_MAX_DIGITS) {
        h->dlen = 0;
        return;
    }
    uint64_t v = 0;
    for (size_t i = b; i < e; i++)
        v = v * 10 + (uint64_t)(h->s[i] - '0');
    h->val = v;
    h->width = (h->dlen > 1 && h->s[b] == '0') ? (int)h->dlen : 0;
}

/* Same group: same prefix, suffix and width (names without a number: the
 * same name). */
static bool hl_same_group(const hl_name_t *a, const hl_name_t *b)
{
    if (!a->dlen || !b->dlen)
        return !a->dlen && !b->dlen && a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
    return a->width == b->width && a->plen == b->plen && memcmp(a->s, b->s, a->plen) == 0 &&
           a->len - a->plen - a->dlen == b->len - b->plen - b->dlen &&
           strcmp(a->s + a->plen + a->dlen, b->s + b->plen + b->dlen) == 0;
}

static uint64_t hl_hash(const hl_name_t *h)
{
    uint64_t x = 1469598103934665603ULL;
    for (size_t i = 0; i < h->len; i++) {
        if (h->dlen && i >= h->plen && i < h->plen + h->dlen)
            continue;
        x = (x ^ (unsigned char)h->s[i]) * 1099511628211ULL;
    }
    x = (x ^ (uint64_t)h->plen) * 1099511628211ULL;
    x = (x ^ (uint64_t)(h->dlen != 0)) * 1099511628211ULL;
    return (x ^ (uint64_t)(unsigned)h->width) * 1099511628211ULL;
}

/* Find h's group in the table; insert h as the representative if absent
 * and `insert`.  Returns the representative's index or SIZE_MAX. */
static size_t hl_lookup(hl_name_t *all, size_t *slots, size_t nslots, size_t i, bool insert)
{
    size_t k = (size_t)(hl_hash(&all[i]) & (nslots - 1));
    for (; slots[k]; k = (k + 1) & (nslots - 1))
        if (hl_same_group(&all[slots[k] - 1], &all[i]))
            return slots[k] - 1;
    if (!insert)
        return SIZE_MAX;
    slots[k] = i + 1;
    return i;
}

typedef struct hl_buf {
    char *s;
    size_t n, cap;
    bool oom;
} hl_buf_t;

static void hl_put(hl_buf_t *b, const char *s, size_t n)
{
    if (b->oom || dr_grow((void **)&b->s, &b->cap, b->n + n + 1, 1) != 0) {
        b->oom = true;
        return;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void hl_put_num(hl_buf_t *b, uint64_t v, int width)
{
    char tmp[32];
    int k = snprintf(tmp, sizeof tmp, "%0*llu", width, (unsigned long long)v);
    hl_put(b, tmp, (size_t)k);
}

/* Sort key for numbered names: (first appearance of the group, value). */
typedef struct hl_key {
    size_t first, i;
    uint64_t val;
} hl_key_t;

static int hl_cmp(const void *pa, const void *pb)
{
    const hl_key_t *a = pa, *b = pb;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return a->val < b->val ? -1 : a->val > b->val;
}

static void hl_emit_group(hl_buf_t *out, const hl_name_t *h, const hl_key_t *k, size_t m)
{
    const hl_name_t *r = &h[k[0].i];
    hl_put(out, r->s, r->plen);
    /* distinct values, ascending */
    size_t u = 0;
    for (size_t j = 0; j < m; j++)
        if (j == 0 || k[j].val != k[j - 1].val)
            u++;
    if (u == 1) {
        hl_put(out, r->s + r->plen, r->dlen);
    } else {
        hl_put(out, "[", 1);
        bool firstr = true;
        for (size_t j = 0; j < m;) {
            uint64_t lo = k[j].val, hi = lo;
            size_t e = j + 1;
            while (e < m && (k[e].val == hi || k[e].val == hi + 1))
                hi = k[e++].val;
            if (!firstr)
                hl_put(out, ",", 1);
            firstr = false;
            hl_put_num(out, lo, r->width);
            if (hi > lo) {
                hl_put(out, "-", 1);
                hl_put_num(out, hi, r->width);
            }
            j = e;
        }
        hl_put(out, "]", 1);
    }
    hl_put(out, r->s + r->plen + r->dlen, r->len - r->plen - r->dlen);
}

char *dr_hostlist_compress(const char *const *names, size_t n)
{
    hl_buf_t out = {0};
    hl_put(&out, "", 0);
    if (n == 0 || out.oom)
        return out.s;
    size_t nslots = 16;
    while (nslots < 2 * n)
        nslots *= 2;
    hl_name_t *h = calloc(n, sizeof *h);
    size_t *slots = calloc(nslots, sizeof *slots); /* index+1 of a group's representative */
    hl_key_t *keys = malloc(n * sizeof *keys);     /* numbered names sorted by group */
    if (!h || !slots || !keys) {
        out.oom = true;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        h[i].s = names[i];
        h[i].len = strlen(names[i]);
        hl_split(&h[i]);
    }
    /* Padded names and names without a number group directly.  A natural
     * number of d digits prints the same when padded to d, so it joins a
     * padded group of width d when there is one. */
    for (size_t i = 0; i < n; i++)
        if (!h[i].dlen || h[i].width)
            h[i].group = hl_lookup(h, slots, nslots, i, true);
    for (size_t i = 0; i < n; i++) {
        if (!h[i].dlen || h[i].width)
            continue;
        h[i].width = (int)h[i].dlen;
        size_t g = hl_lookup(h, slots, nslots, i, false);
        if (g == SIZE_MAX) {
            h[i].width = 0;
            g = hl_lookup(h, slots, nslots, i, true);
        }
        h[i].group = g;
    }
    for (size_t i = 0; i < n; i++)
        h[i].first = SIZE_MAX;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (h[h[i].group].first == SIZE_MAX)
            h[h[i].group].first = i;
        if (h[i].dlen)
            keys[m++] = (hl_key_t){h[h[i].group].first, i, h[i].val};
    }
    qsort(keys, m, sizeof *keys, hl_cmp);
    /* Emit in order of first appearance; the sorted numbered names are
     * consumed group by group in that same order. */
    size_t pos = 0, nout = 0;
    for (size_t i = 0; i < n && !out.oom; i++) {
        if (h[h[i].group].first != i)
            continue; /* not the group's first appearance */
        if (nout++)
            hl_put(&out, ",", 1);
        if (!h[i].dlen) {
            hl_put(&out, h[i].s, h[i].len);
            continue;
        }
        size_t e = pos;
        while (e < m && keys[e].first == i)
            e++;
        hl_emit_group(&out, h, keys + pos, e - pos);
        pos = e;
    }
done:
    free(h);
    free(slots);
    free(keys);
    if (out.oom) {
        free(out.s);
        return NULL;
    }
    return out.s;
}
