/* constraint.c - a job's restriction to some nodes (partition.h): its
 * partitions and its Slurm --constraint expression, evaluated over the
 * cluster's nodes into one interned node set (or, for a constraint of GPU
 * types only, a type mask, which the typed policies read).
 *
 *   or   := and ('|' and)*
 *   and  := atom (('&' | ',') atom)*
 *   atom := NAME | '(' or ')' | '[' NAME ('|' NAME)* ']'
 *
 * '&' binds tighter than '|', as in Slurm.  Every name is checked against
 * the cluster's features and GPU types, so a typo is an error at submit
 * rather than a job that never runs. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/nodeset_priv.h"
#include "drover/util.h"

#define CX_DEPTH 64 /* nesting of ( and [ */

typedef struct cx {
    dr_cluster_t *c; /* NULL: syntax only */
    const char *s;
    size_t pos;
    size_t nw;
    bool multi; /* the job may span nodes */
    int depth;
    dr_err_t *err;
} cx_t;

typedef struct cval {
    uint64_t *bits;      /* nodes with it (NULL when checking syntax) */
    bool pure;           /* only GPU types joined by '|' */
    dr_typemask_t types; /* those types, when pure */
} cval_t;

static int cx_or(cx_t *x, cval_t *v, bool bracket);

/* "constraint: WHAT at position N of 'EXPR'" */
static int cx_err(cx_t *x, const char *what)
{
    return dr_err_set(x->err, DR_EINVAL, "constraint: %s at position %zu of '%.64s'", what,
                      x->pos + 1, x->s);
}

static void skip_blanks(cx_t *x)
{
    while (isspace((unsigned char)x->s[x->pos]))
        x->pos++;
}

static bool name_char(char ch)
{
    return ch && !isspace((unsigned char)ch) && !strchr("&|,()[]*!\"", ch);
}

static int val_alloc(cx_t *x, cval_t *v)
{
    memset(v, 0, sizeof *v);
    if (!x->c)
        return DR_OK;
    v->bits = calloc(x->nw ? x->nw : 1, sizeof *v->bits);
    return v->bits ? DR_OK : dr_err_set(x->err, DR_ENOMEM, "out of memory");
}

/* "known: ib, nvme; GPU types: H100-SXM-80GB, ..." into buf. */
static void known_names(const dr_cluster_t *c, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    size_t nf = dr_cluster_nfeatures(c);
    len += (size_t)snprintf(buf + len, n - len, "%s", nf ? "known: " : "no node features; ");
    for (size_t i = 0; i < nf && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "",
                                dr_cluster_feature_name(c, i));
    for (size_t t = 0; t < c->ntypes && len < n; t++)
        len +=
            (size_t)snprintf(buf + len, n - len, "%s%s",
                             t ? ", " : (nf ? "; GPU types: " : "GPU types: "), c->types[t].name);
}

static int cx_name(cx_t *x, cval_t *v)
{
    size_t b = x->pos;
    while (name_char(x->s[x->pos]))
        x->pos++;
    size_t n = x->pos - b;
    if (n == 0) {
        if (x->s[x->pos] == '!')
            return cx_err(x, "'!' (not) is not supported");
        return cx_err(x, x->s[x->pos] ? "a feature name is expected" : "the expression ends early");
    }
    char name[128];
    if (n >= sizeof name)
        return cx_err(x, "a feature name longer than 127 characters");
    memcpy(name, x->s + b, n);
    name[n] = '\0';
    if (x->s[x->pos] == '*')
        return dr_err_set(x->err, DR_EINVAL,
                          "constraint: counts ('%.64s*N') are not supported: drover restricts "
                          "every node of a job alike",
                          name);
    int rc = val_alloc(x, v);
    if (rc != 0 || !x->c)
        return rc;
    dr_cluster_t *c = x->c;
    int f = dr_cluster_find_feature(c, name);
    int t = f < 0 ? dr_cluster_find_type(c, name) : -1;
    if (f < 0 && (t < 0 || t >= DR_MAX_GPU_TYPES)) {
        char known[512];
        known_names(c, known, sizeof known);
        free(v->bits);
        v->bits = NULL;
        return dr_err_set(x->err, DR_EINVAL, "constraint: unknown feature '%.64s' (%s)", name,
                          known);
    }
    for (size_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *nd = &c->nodes[i];
        bool has =
            f >= 0 ? dr_node_has_feature(c, (uint32_t)i, (uint32_t)f) : nd->ngpus && nd->type == t;
        if (has)
            v->bits[i / 64] |= (uint64_t)1 << (i % 64);
    }
    v->pure = f < 0;
    v->types = f < 0 ? (dr_typemask_t)1 << t : 0;
    return DR_OK;
}

static int cx_atom(cx_t *x, cval_t *v, bool bracket)
{
    memset(v, 0, sizeof *v);
    skip_blanks(x);
    char ch = x->s[x->pos];
    if (ch != '(' && ch != '[')
        return cx_name(x, v);
    if (++x->depth > CX_DEPTH)
        return cx_err(x, "nested too deeply");
    x->pos++;
    bool br = ch == '[';
    if (bracket && br)
        return cx_err(x, "'[' inside '[...]'");
    int rc = cx_or(x, v, br);
    if (rc != 0)
        return rc;
    skip_blanks(x);
    if (x->s[x->pos] != (br ? ']' : ')')) {
        free(v->bits);
        v->bits = NULL;
        return cx_err(x, br ? "']' is expected" : "')' is expected");
    }
    x->pos++;
    x->depth--;
    if (br && !v->pure && x->multi && x->c) {
        free(v->bits);
        v->bits = NULL;
        return dr_err_set(x->err, DR_EINVAL,
                          "constraint: '[a|b]' (every node with the same one) is supported for "
                          "GPU types and one-node jobs only, not for features of a job that "
                          "may span nodes");
    }
    return DR_OK;
}

static int cx_and(cx_t *x, cval_t *v, bool bracket)
{
    int rc = cx_atom(x, v, bracket);
    for (;;) {
        if (rc != 0)
            return rc;
        skip_blanks(x);
        char op = x->s[x->pos];
        if (op != '&' && op != ',')
            return DR_OK;
        if (bracket) {
            free(v->bits);
            v->bits = NULL;
            return cx_err(x, "'[...]' takes names joined by '|' (counts are not supported)");
        }
        x->pos++;
        cval_t w = {0};
        if ((rc = cx_atom(x, &w, bracket)) != 0) {
            free(v->bits);
            v->bits = NULL;
            return rc;
        }
        for (size_t i = 0; v->bits && w.bits && i < x->nw; i++)
            v->bits[i] &= w.bits[i];
        free(w.bits);
        v->pure = false;
        v->types = 0;
    }
}

static int cx_or(cx_t *x, cval_t *v, bool bracket)
{
    int rc = cx_and(x, v, bracket);
    for (;;) {
        if (rc != 0)
            return rc;
        skip_blanks(x);
        if (x->s[x->pos] != '|')
            return DR_OK;
        x->pos++;
        cval_t w = {0};
        if ((rc = cx_and(x, &w, bracket)) != 0) {
            free(v->bits);
            v->bits = NULL;
            return rc;
        }
        for (size_t i = 0; v->bits && w.bits && i < x->nw; i++)
            v->bits[i] |= w.bits[i];
        free(w.bits);
        v->pure = v->pure && w.pure;
        v->types = v->pure ? v->types | w.types : 0;
    }
}

static int cx_run(cx_t *x, cval_t *v)
{
    if (strlen(x->s) > DR_CONSTRAINT_MAX)
        return dr_err_set(x->err, DR_EINVAL, "constraint: longer than %d characters",
                          DR_CONSTRAINT_MAX);
    int rc = cx_or(x, v, false);
    if (rc != 0)
        return rc;
    skip_blanks(x);
    if (x->s[x->pos]) {
        free(v->bits);
        v->bits = NULL;
        return cx_err(x, "unexpected text");
    }
    return DR_OK;
}

int dr_constraint_check(const char *expr, dr_err_t *err)
{
    cx_t x = {.c = NULL, .s = expr ? expr : "", .err = err};
    cval_t v = {0};
    return cx_run(&x, &v);
}

/* --- restrictions --- */

static void list_partitions(const dr_cluster_t *c, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < dr_cluster_npartitions(c) && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "",
                                dr_cluster_partition(c, i)->name);
    if (!len)
        snprintf(buf, n, "this cluster has no partitions");
}

static void or_set(uint64_t *bits, size_t nw, const dr_cluster_t *c, uint32_t set)
{
    const dr_nodeset_t *s = dr_nodeset_get(c, set);
    for (size_t i = 0; s && i < nw && i < s->nwords; i++)
        bits[i] |= s->bits[i];
}

static dr_time_t min_limit(dr_time_t a, dr_time_t b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

/* The partitions' nodes into bits (all nodes when none applies); *named
 * says whether a partition applies. */
static int part_bits(dr_cluster_t *c, const char *partition, uint64_t *bits, size_t nw,
                     dr_restrict_t *out, const char **named, dr_err_t *err)
{
    *named = NULL;
    /* a cluster that defines no partitions is one partition of every node
     * (a drover config of its own; -p from a Slurm script is not applied) */
    if (!partition || !*partition || !dr_cluster_npartitions(c)) {
        for (size_t i = 0; i < dr_cluster_npartitions(c); i++) {
            const dr_partition_t *p = dr_cluster_partition(c, i);
            if (!p->is_default)
                continue;
            if (p->state != DR_PART_UP)
                return dr_err_set(err, DR_EINVAL,
                                  "partition: the default partition '%.64s' is %s; name "
                                  "another with --partition",
                                  p->name, dr_part_state_name((dr_part_state_t)p->state));
            or_set(bits, nw, c, p->nodeset);
            out->max_time = p->max_time;
            out->default_time = p->default_time ? p->default_time : p->max_time;
            *named = p->name;
            return DR_OK;
        }
        for (size_t i = 0; i < c->nnodes; i++)
            bits[i / 64] |= (uint64_t)1 << (i % 64);
        return DR_OK;
    }
    for (const char *q = partition;; q++) { /* every item, so "a," names an empty one */
        size_t n = strcspn(q, ",");
        char name[256];
        int k = -1;
        if (n && n < sizeof name) {
            memcpy(name, q, n);
            name[n] = '\0';
            k = dr_cluster_find_partition(c, name);
        }
        if (k < 0) {
            char known[512];
            list_partitions(c, known, sizeof known);
            return dr_err_set(err, DR_EINVAL, "partition: unknown partition '%.*s' (%s%s)",
                              (int)(n > 64 ? 64 : n), q, dr_cluster_npartitions(c) ? "known: " : "",
                              known);
        }
        const dr_partition_t *p = dr_cluster_partition(c, (size_t)k);
        if (p->state != DR_PART_UP)
            return dr_err_set(err, DR_EINVAL, "partition: '%.64s' is %s (it %s)", p->name,
                              dr_part_state_name((dr_part_state_t)p->state),
                              p->state == DR_PART_DOWN ? "runs no jobs" : "takes no new jobs");
        or_set(bits, nw, c, p->nodeset);
        out->max_time = min_limit(out->max_time, p->max_time);
        out->default_time =
            min_limit(out->default_time, p->default_time ? p->default_time : p->max_time);
        *named = p->name;
        q += n;
        if (!*q)
            break;
    }
    return DR_OK;
}

static char *cache_key(const char *partition, const char *constraint, const dr_job_req_t *r)
{
    size_t n = (partition ? strlen(partition) : 0) + (constraint ? strlen(constraint) : 0) + 8;
    char *k = malloc(n);
    if (k)
        snprintf(k, n, "%s\x1f%s\x1f%d%d", partition ? partition : "", constraint ? constraint : "",
                 r->nodes != 1, r->gpus_per_node == 0);
    return k;
}

int dr_cluster_restrict(dr_cluster_t *c, const char *partition, const char *constraint,
                        const dr_job_req_t *r, dr_restrict_t *out, dr_err_t *err)
{
    memset(out, 0, sizeof *out);
    bool has_c = constraint && !dr_is_blank(constraint);
    if (!has_c && (!partition || !*partition) && !dr_cluster_npartitions(c))
        return DR_OK; /* the common case: nothing to restrict */
    char *key = cache_key(partition, constraint, r);
    if (!key)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    for (size_t i = 0; c->sets && i < DR_RESTRICT_CACHE; i++)
        if (c->sets->cache[i].key && strcmp(c->sets->cache[i].key, key) == 0) {
            *out = c->sets->cache[i].r;
            free(key);
            return DR_OK;
        }
    size_t nw = (c->nnodes + 63) / 64;
    uint64_t *bits = calloc(nw ? nw : 1, sizeof *bits);
    cval_t v = {0};
    const char *named = NULL;
    int rc = DR_ENOMEM;
    if (!bits) {
        dr_err_set(err, DR_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = part_bits(c, partition, bits, nw, out, &named, err)) != 0)
        goto out;
    if (has_c) {
        cx_t x = {.c = c, .s = constraint, .nw = nw, .multi = r->nodes != 1, .err = err};
        if ((rc = cx_run(&x, &v)) != 0)
            goto out;
    }
    uint64_t count = 0, all = 0;
    for (size_t i = 0; i < nw; i++) {
        all += (uint64_t)__builtin_popcountll(bits[i]);
        count += (uint64_t)__builtin_popcountll(v.bits ? bits[i] & v.bits[i] : bits[i]);
    }
    if (count == 0) {
        rc = has_c ? dr_err_set(err, DR_EINVAL, "constraint: no node%s%.64s%s has '%.64s'",
                                named ? " of partition '" : "", named ? named : "",
                                named ? "'" : "", constraint)
                   : dr_err_set(err, DR_EINVAL, "partition: '%.64s' has no nodes",
                                named ? named : partition);
        goto out;
    }
    /* a constraint of GPU types alone is a type mask for a GPU job */
    bool as_mask = v.bits && v.pure && r->gpus_per_node > 0;
    if (v.bits && !as_mask) {
        for (size_t i = 0; i < nw; i++)
            bits[i] &= v.bits[i];
        all = count;
    }
    if (all < c->nnodes) {
        int set = dr_cluster_nodeset_intern(c, bits, err);
        if (set < 0) {
            rc = set;
            goto out;
        }
        out->nodeset = (uint32_t)set;
        out->types = dr_nodeset_types(c, out->nodeset);
    }
    if (as_mask)
        out->types = out->types ? out->types & v.types : v.types;
    if (c->sets) {
        unsigned k = c->sets->cache_next++ % DR_RESTRICT_CACHE;
        free(c->sets->cache[k].key);
        c->sets->cache[k].key = key;
        c->sets->cache[k].r = *out;
        key = NULL;
    }
out:
    free(key);
    free(bits);
    free(v.bits);
    return rc;
}
