/* util.c - growable arrays, string interning, RNG, strict number parsing
 * and the CSV record splitter shared by every reader. */
#include "drover/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/embed.h"
#include "drover/time.h"

int dr_grow(void **arr, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return DR_OK;
    size_t nc = *cap ? *cap : 8;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / sz)
            return DR_ENOMEM;
        nc *= 2;
    }
    void *p = realloc(*arr, nc * sz);
    if (!p)
        return DR_ENOMEM;
    *arr = p;
    *cap = nc;
    return DR_OK;
}

char *dr_strndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *dr_strdup(const char *s)
{
    return s ? dr_strndup(s, strlen(s)) : NULL;
}

bool dr_streq_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

bool dr_name_in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list ? list : ""; n && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

int dr_strvec_push_owned(dr_strvec_t *sv, char *s)
{
    if (!s)
        return DR_ENOMEM;
    if (DR_PUSH(sv->v, sv->n, sv->cap, s) != 0) {
        free(s);
        return DR_ENOMEM;
    }
    return DR_OK;
}

int dr_strvec_push(dr_strvec_t *sv, const char *s)
{
    return dr_strvec_push_owned(sv, dr_strdup(s));
}

void dr_strvec_free(dr_strvec_t *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

/* --- string table: FNV-1a, open addressing, load <= 1/2 --- */
static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int strtab_rehash(dr_strtab_t *t, size_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return DR_ENOMEM;
    for (size_t i = 0; i < t->n; i++) {
        size_t k = hash_str(t->strs[i]) & (nslots - 1);
        while (slots[k])
            k = (k + 1) & (nslots - 1);
        slots[k] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return DR_OK;
}

int64_t dr_strtab_find(const dr_strtab_t *t, const char *s)
{
    if (!t->nslots)
        return -1;
    size_t k = hash_str(s) & (t->nslots - 1);
    while (t->slots[k]) {
        uint32_t id = t->slots[k] - 1;
        if (strcmp(t->strs[id], s) == 0)
            return id;
        k = (k + 1) & (t->nslots - 1);
    }
    return -1;
}

int64_t dr_strtab_intern(dr_strtab_t *t, const char *s)
{
    int64_t id = dr_strtab_find(t, s);
    if (id >= 0)
        return id;
    if (t->n >= UINT32_MAX - 1)
        return -1;
    if ((t->n + 1) * 2 > t->nslots && strtab_rehash(t, t->nslots ? t->nslots * 2 : 64) != 0)
        return -1;
    char *copy = dr_strdup(s);
    if (!copy || DR_PUSH(t->strs, t->n, t->cap, copy) != 0) {
        free(copy);
        return -1;
    }
    size_t k = hash_str(s) & (t->nslots - 1);
    while (t->slots[k])
        k = (k + 1) & (t->nslots - 1);
    t->slots[k] = (uint32_t)t->n;
    return (int64_t)t->n - 1;
}

const char *dr_strtab_get(const dr_strtab_t *t, uint32_t id)
{
    return id < t->n ? t->strs[id] : NULL;
}

void dr_strtab_free(dr_strtab_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

int dr_strtab_copy(dr_strtab_t *dst, const dr_strtab_t *src)
{
    memset(dst, 0, sizeof *dst);
    for (size_t i = 0; i < src->n; i++)
        if (dr_strtab_intern(dst, src->strs[i]) < 0) {
            dr_strtab_free(dst);
            return DR_ENOMEM;
        }
    return DR_OK;
}

/* --- RNG: xoshiro256** (Blackman & Vigna), seeded by splitmix64 --- */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void dr_rng_seed(dr_rng_t *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t dr_rng_next(dr_rng_t *r)
{
    uint64_t *s = r->s;
    uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return res;
}

double dr_rng_uniform(dr_rng_t *r)
{
    return (double)(dr_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t dr_rng_below(dr_rng_t *r, uint64_t n)
{
    if (n <= 1)
        return 0;
    uint64_t lim = UINT64_MAX - UINT64_MAX % n, x;
    do
        x = dr_rng_next(r);
    while (x >= lim);
    return x % n;
}

double dr_rng_exp(dr_rng_t *r, double rate)
{
    return -log(1.0 - dr_rng_uniform(r)) / rate;
}

/* --- strict numbers --- */
bool dr_is_blank(const char *s)
{
    for (; s && *s; s++)
        if (!isspace((unsigned char)*s))
            return false;
    return true;
}

int dr_parse_double(const char *s, double *out)
{
    if (!s || dr_is_blank(s))
        return DR_EINVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || !dr_is_blank(end) || errno == ERANGE || isnan(v) || isinf(v))
        return DR_EINVAL;
    *out = v;
    return DR_OK;
}

int dr_parse_i64(const char *s, int64_t *out)
{
    if (!s || dr_is_blank(s))
        return DR_EINVAL;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || !dr_is_blank(end) || errno == ERANGE)
        return DR_EINVAL;
    *out = v;
    return DR_OK;
}

int dr_parse_u64(const char *s, uint64_t *out)
{
    if (!s)
        return DR_EINVAL;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '-' || !*s)
        return DR_EINVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || !dr_is_blank(end) || errno == ERANGE)
        return DR_EINVAL;
    *out = v;
    return DR_OK;
}

/* --- CSV --- */
void dr_csv_init(dr_csv_t *c, const char *buf, size_t len, char delim)
{
    memset(c, 0, sizeof *c);
    c->buf = buf;
    c->len = len;
    c->delim = delim;
    c->next_line = 1;
}

void dr_csv_free(dr_csv_t *c)
{
    free(c->scratch);
    free(c->fields);
    c->scratch = NULL;
    c->fields = NULL;
}

static int csv_put(dr_csv_t *c, size_t *used, char ch)
{
    if (dr_grow((void **)&c->scratch, &c->scratch_cap, *used + 1, 1) != 0)
        return DR_ENOMEM;
    c->scratch[(*used)++] = ch;
    return DR_OK;
}

/* Fields are stored back to back in scratch, NUL-separated; offsets are
 * recorded first (scratch may move while growing) and turned into pointers
 * at the end. */
int dr_csv_next(dr_csv_t *c)
{
    while (c->pos < c->len && (c->buf[c->pos] == '\n' || c->buf[c->pos] == '\r')) {
        if (c->buf[c->pos] == '\n')
            c->next_line++;
        c->pos++;
    }
    if (c->pos >= c->len)
        return 0;
    c->line = c->next_line;
    size_t used = 0, *offs = NULL, noffs = 0, offs_cap = 0;
    bool field_start = true, in_quotes = false;
    int rc = DR_PUSH(offs, noffs, offs_cap, (size_t)0);
    while (rc == DR_OK) {
        if (c->pos >= c->len) {
            if (in_quotes)
                rc = DR_EINVAL; /* unterminated quote */
            break;
        }
        char ch = c->buf[c->pos++];
        if (in_quotes) {
            if (ch == '"') {
                if (c->pos < c->len && c->buf[c->pos] == '"')
                    rc = csv_put(c, &used, c->buf[c->pos++]); /* "" -> " */
                else
                    in_quotes = false;
                continue;
            }
            if (ch == '\n')
                c->next_line++;
            rc = csv_put(c, &used, ch);
        } else if (ch == '"' && field_start) {
            in_quotes = true;
            field_start = false;
        } else if (ch == '\n' || ch == '\r') {
            if (ch == '\r' && c->pos < c->len && c->buf[c->pos] == '\n')
                c->pos++;
            c->next_line++;
            break;
        } else if (ch == c->delim) {
            rc = csv_put(c, &used, '\0');
            if (rc == DR_OK)
                rc = DR_PUSH(offs, noffs, offs_cap, used);
            field_start = true;
        } else {
            field_start = false;
            rc = csv_put(c, &used, ch);
        }
    }
    if (rc == DR_OK)
        rc = csv_put(c, &used, '\0');
    if (rc == DR_OK)
        rc = dr_grow((void **)&c->fields, &c->fields_cap, noffs, sizeof *c->fields);
    if (rc == DR_OK) {
        for (size_t i = 0; i < noffs; i++)
            c->fields[i] = c->scratch + offs[i];
        c->nfields = noffs;
        rc = noffs > 0x7fffffff ? DR_ELIMIT : (int)noffs;
    }
    free(offs);
    return rc;
}

int dr_csv_col(const dr_csv_t *c, const char *name)
{
    for (size_t i = 0; i < c->nfields; i++) {
        const char *f = c->fields[i];
        while (isspace((unsigned char)*f))
            f++;
        size_t n = strlen(f);
        while (n && isspace((unsigned char)f[n - 1]))
            n--;
        if (n == strlen(name) && strncasecmp(f, name, n) == 0)
            return (int)i;
    }
    return -1;
}

int dr_read_file(const char *path, char **buf, size_t *len, dr_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return dr_err_set(err, DR_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *b = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (dr_grow((void **)&b, &cap, n + 65536 + 1, 1) != 0) {
            fclose(f);
            free(b);
            return dr_err_set(err, DR_ENOMEM, "%s: out of memory", path);
        }
        size_t r = fread(b + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(b);
        return dr_err_set(err, DR_EIO, "%s: read error", path);
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return DR_OK;
}

const struct dr_embedded *dr_embedded(const char *name)
{
    for (const struct dr_embedded *e = dr_embedded_files; e->name; e++)
        if (strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

/* The longest duration, in seconds (~285 years; dr_time_t spans ~292). */
#define DUR_MAX_S 9.0e9

/* One number of a duration, exactly [b, e), for the part named what:
 * decimal digits with an optional fraction ("5", "1.5", ".5") and, where
 * exp is set (the plain-seconds form), an exponent.  No sign, hex, "nan" or "inf", and at
 * most DUR_MAX_S, so that nothing non-finite reaches dr_time_from_s. */
static int dur_num(const char *b, const char *e, bool exp, const char *what, double *out,
                   dr_err_t *err)
{
    int len = (int)(e - b > 40 ? 40 : e - b);
    if (e == b)
        return dr_err_set(err, DR_EINVAL, "%s: missing", what);
    const char *q = b;
    size_t ndigits = 0;
    for (; q < e && isdigit((unsigned char)*q); q++)
        ndigits++;
    if (q < e && *q == '.')
        for (q++; q < e && isdigit((unsigned char)*q); q++)
            ndigits++;
    bool ok = ndigits > 0;
    if (ok && exp && q < e && (*q == 'e' || *q == 'E')) {
        if (++q < e && *q == '+')
            q++;
        const char *d = q;
        while (q < e && isdigit((unsigned char)*q))
            q++;
        ok = q > d;
    }
    if (!ok || q != e)
        return dr_err_set(err, DR_EINVAL, "%s: '%.*s' is not a number", what, len, b);
    /* a copy: strtod on b itself might read on ("0x1p3" from the span "0") */
    char buf[64], *end;
    if (e - b >= (ptrdiff_t)sizeof buf)
        return dr_err_set(err, DR_EINVAL, "%s: '%.*s...' is longer than %zu characters", what, len,
                          b, sizeof buf - 1);
    memcpy(buf, b, (size_t)(e - b));
    buf[e - b] = '\0';
    double v = strtod(buf, &end); /* overflow gives HUGE_VAL, caught below */
    if (*end || !isfinite(v) || v > DUR_MAX_S)
        return dr_err_set(err, DR_EINVAL, "%s: '%.*s' is too large", what, len, b);
    *out = v;
    return DR_OK;
}

/* Units of the plain form, case ignored: "m" is minutes, "mo" months.  A
 * month is a twelfth of a Julian year (30.4375 days), a year 365.25 days,
 * as the planner has always counted them. */
static const struct {
    const char *name;
    double s;
} dur_units[] = {
    {"us", 1e-6},
    {"ms", 1e-3},
    {"s", 1},
    {"m", 60},
    {"h", 3600},
    {"d", 86400},
    {"w", 7 * 86400.0},
    {"wk", 7 * 86400.0},
    {"weeks", 7 * 86400.0},
    {"mo", 30.4375 * 86400},
    {"month", 30.4375 * 86400},
    {"months", 30.4375 * 86400},
    {"y", 365.25 * 86400},
    {"yr", 365.25 * 86400},
};

/* Durations: "90", "90s", "200ms", "15m", "2h", "3d", "4w", "18mo", "2y",
 * "1:30:00", "2-12:00:00".  The one parser: dr_plan_parse_duration and
 * every option, config key and trace column that takes a duration use it. */
int dr_duration_parse_err(const char *s, dr_time_t *out, dr_err_t *err)
{
    if (!s || dr_is_blank(s))
        return dr_err_set(err, DR_EINVAL, "empty duration");
    while (isspace((unsigned char)*s))
        s++;
    const char *stop = s + strlen(s);
    while (isspace((unsigned char)stop[-1]))
        stop--;
    int len = (int)(stop - s > 40 ? 40 : stop - s), rc;
    if (*s == '-')
        return dr_err_set(err, DR_EINVAL, "'%.*s' is negative", len, s);
    const char *colon = memchr(s, ':', (size_t)(stop - s));
    const char *dash = memchr(s, '-', (size_t)((colon ? colon : stop) - s)); /* days come first */
    double secs = 0;
    if (dash || colon) {
        /* [days-]hh:mm:ss | mm:ss | days-hh[:mm[:ss]] */
        const char *p = s, *pb[3], *pe[3];
        if (dash) {
            double days = 0;
            if ((rc = dur_num(s, dash, false, "days", &days, err)) != 0)
                return rc;
            secs = days * 86400;
            p = dash + 1;
        }
        int np = 0;
        for (;;) {
            if (np == 3)
                return dr_err_set(err, DR_EINVAL, "'%.*s' has more than three ':' parts", len, s);
            pb[np] = p;
            while (p < stop && *p != ':')
                p++;
            pe[np++] = p;
            if (p == stop)
                break;
            p++;
        }
        static const char *const hms[] = {"hours", "minutes", "seconds"};
        static const double hms_s[] = {3600, 60, 1};
        int first = dash || np == 3 ? 0 : 1; /* without days, two parts are mm:ss */
        for (int i = 0; i < np; i++) {
            double v = 0;
            if ((rc = dur_num(pb[i], pe[i], false, hms[first + i], &v, err)) != 0)
                return rc;
            secs += v * hms_s[first + i];
        }
    } else {
        const char *e = s;
        while (e < stop && (isdigit((unsigned char)*e) || strchr(".eE+", *e)))
            e++;
        if (e == s)
            return dr_err_set(err, DR_EINVAL, "'%.*s' is not a number", len, s);
        double v = 0, mult = 1;
        if ((rc = dur_num(s, e, true, "value", &v, err)) != 0)
            return rc;
        if (e < stop) {
            size_t ulen = (size_t)(stop - e), u = 0, nu = sizeof dur_units / sizeof *dur_units;
            while (u < nu && !(strlen(dur_units[u].name) == ulen &&
                               strncasecmp(dur_units[u].name, e, ulen) == 0))
                u++;
            if (u == nu)
                return dr_err_set(err, DR_EINVAL,
                                  "unknown unit '%.*s' (ms, s, m, h, d, w, mo or y)",
                                  (int)(ulen > 40 ? 40 : ulen), e);
            mult = dur_units[u].s;
        }
        secs = v * mult;
    }
    if (!(secs <= DUR_MAX_S))
        return dr_err_set(err, DR_EINVAL, "'%.*s' is too long (at most %.0f seconds)", len, s,
                          DUR_MAX_S);
    *out = dr_time_from_s(secs);
    return DR_OK;
}

int dr_duration_parse(const char *s, dr_time_t *out)
{
    return dr_duration_parse_err(s, out, NULL);
}
