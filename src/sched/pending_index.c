/* pending_index.c - drover's index of pending jobs (pending_index.h). */
#include "sched/pending_index.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drover/error.h"
#include "drover/util.h"

/* A branch-and-bound item: a subtree (node) or a valued record (node ==
 * DR_PIDX_NONE). */
typedef struct dr_pidx_item {
    double v;
    uint32_t t, node, rec;
} item_t;

static const dr_pidx_agg_t EMPTY = {INFINITY, INFINITY, 0, 0};

/* Bounds are computed with other roundings than the exact priority; this
 * slack keeps them above it. */
#define SLACK (1 + 1e-7)

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

bool dr_pidx_queue_before(const dr_job_t *a, const dr_job_t *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    if (a->submit != b->submit)
        return a->submit < b->submit;
    return a->id < b->id;
}

int dr_pidx_hit_cmp(const void *pa, const void *pb)
{
    const dr_pidx_hit_t *a = pa, *b = pb;
    if (a->v != b->v)
        return a->v > b->v ? -1 : 1;
    if (a->j == b->j)
        return 0;
    return dr_pidx_queue_before(a->j, b->j) ? -1 : 1;
}

size_t dr_pidx_hit_select(dr_pidx_hit_t *h, size_t n, double want)
{
    size_t lo = 0, hi = n;
    double acc = 0; /* GPUs of h[0..lo), all ahead of h[lo..n) */
    while (lo < hi) {
        /* Lomuto partition of h[lo..hi) around its middle element */
        size_t p = lo + (hi - lo) / 2, store = lo;
        dr_pidx_hit_t t = h[p];
        h[p] = h[hi - 1];
        h[hi - 1] = t;
        double wl = 0;
        for (size_t i = lo; i + 1 < hi; i++)
            if (dr_pidx_hit_cmp(&h[i], &h[hi - 1]) < 0) {
                wl += h[i].g;
                t = h[i];
                h[i] = h[store];
                h[store++] = t;
            }
        t = h[store];
        h[store] = h[hi - 1];
        h[hi - 1] = t;
        if (acc + wl >= want) {
            hi = store; /* the answer ends before the pivot */
        } else if (acc + wl + h[store].g >= want) {
            return store + 1;
        } else {
            acc += wl + h[store].g;
            lo = store + 1;
        }
    }
    return lo;
}

void dr_pidx_init(dr_pidx_t *x, double alpha, double age)
{
    memset(x, 0, sizeof *x);
    x->alpha = alpha;
    x->age = age;
    x->free_rec = DR_PIDX_NONE;
}

static void tree_release(dr_pidx_tree_t *t)
{
    free(t->a);
    free(t->who);
    memset(t, 0, sizeof *t);
}

void dr_pidx_free(dr_pidx_t *x)
{
    for (size_t i = 0; i < x->ntree; i++)
        tree_release(&x->tree[i]);
    free(x->tree);
    free(x->rec);
    free(x->jkey);
    free(x->jval);
    free(x->tkey);
    free(x->tval);
    free(x->heap);
    free(x->stack);
    memset(x, 0, sizeof *x);
    x->free_rec = DR_PIDX_NONE;
}

/* --- job -> record map --- */

uint32_t dr_pidx_find(const dr_pidx_t *x, const dr_job_t *j)
{
    if (!x->jcap)
        return DR_PIDX_NONE;
    size_t m = x->jcap - 1;
    uintptr_t k = (uintptr_t)j;
    for (size_t i = mix64(k) & m;; i = (i + 1) & m) {
        if (x->jkey[i] == k)
            return x->jval[i];
        if (!x->jkey[i])
            return DR_PIDX_NONE;
    }
}

static void jmap_put_nogrow(uintptr_t *key, uint32_t *val, size_t cap, uintptr_t k, uint32_t v)
{
    size_t m = cap - 1, i = mix64(k) & m;
    while (key[i] && key[i] != k)
        i = (i + 1) & m;
    key[i] = k;
    val[i] = v;
}

static int jmap_put(dr_pidx_t *x, uintptr_t k, uint32_t v)
{
    if (2 * (x->jn + 1) > x->jcap) {
        size_t cap = x->jcap ? 2 * x->jcap : 64;
        uintptr_t *key = calloc(cap, sizeof *key);
        uint32_t *val = malloc(cap * sizeof *val);
        if (!key || !val) {
            free(key);
            free(val);
            return DR_ENOMEM;
        }
        for (size_t i = 0; i < x->jcap; i++)
            if (x->jkey[i])
                jmap_put_nogrow(key, val, cap, x->jkey[i], x->jval[i]);
        free(x->jkey);
        free(x->jval);
        x->jkey = key;
        x->jval = val;
        x->jcap = cap;
    }
    jmap_put_nogrow(x->jkey, x->jval, x->jcap, k, v);
    x->jn++;
    return DR_OK;
}

/* Linear probing without tombstones: later entries of the run that could
 * sit in the freed slot move back into it. */
static void jmap_del(dr_pidx_t *x, uintptr_t k)
{
    if (!x->jcap)
        return;
    size_t m = x->jcap - 1, i = mix64(k) & m;
    while (x->jkey[i] != k) {
        if (!x->jkey[i])
            return;
        i = (i + 1) & m;
    }
    x->jn--;
    for (;;) {
        x->jkey[i] = 0;
        size_t j = i;
        for (;;) {
            j = (j + 1) & m;
            if (!x->jkey[j])
                return;
            size_t h = mix64(x->jkey[j]) & m;
            bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
            if (!stays)
                break;
        }
        x->jkey[i] = x->jkey[j];
        x->jval[i] = x->jval[j];
        i = j;
    }
}

/* --- (g, parent, throttle) -> tree map --- */

static uint64_t tree_hash(double g, uint64_t parent, uint32_t throttle)
{
    uint64_t gb;
    memcpy(&gb, &g, sizeof gb);
    return mix64(gb ^ mix64(parent ^ mix64(throttle))) | 1;
}

static bool tree_is(const dr_pidx_tree_t *t, double g, uint64_t parent, uint32_t throttle)
{
    return t->inuse && t->g == g && t->parent == parent && t->throttle == throttle;
}

static uint32_t tmap_find(const dr_pidx_t *x, double g, uint64_t parent, uint32_t throttle)
{
    if (!x->tcap)
        return DR_PIDX_NONE;
    uint64_t h = tree_hash(g, parent, throttle);
    size_t m = x->tcap - 1;
    for (size_t i = h & m; x->tkey[i]; i = (i + 1) & m)
        if (x->tkey[i] == h && tree_is(&x->tree[x->tval[i]], g, parent, throttle))
            return x->tval[i];
    return DR_PIDX_NONE;
}

static int tmap_put(dr_pidx_t *x, uint64_t h, uint32_t v)
{
    if (2 * (x->tn + 1) > x->tcap) {
        size_t cap = x->tcap ? 2 * x->tcap : 16;
        uint64_t *key = calloc(cap, sizeof *key);
        uint32_t *val = malloc(cap * sizeof *val);
        if (!key || !val) {
            free(key);
            free(val);
            return DR_ENOMEM;
        }
        for (size_t i = 0; i < x->tcap; i++)
            if (x->tkey[i]) {
                size_t s = x->tkey[i] & (cap - 1);
                while (key[s])
                    s = (s + 1) & (cap - 1);
                key[s] = x->tkey[i];
                val[s] = x->tval[i];
            }
        free(x->tkey);
        free(x->tval);
        x->tkey = key;
        x->tval = val;
        x->tcap = cap;
    }
    size_t m = x->tcap - 1, i = h & m;
    while (x->tkey[i])
        i = (i + 1) & m;
    x->tkey[i] = h;
    x->tval[i] = v;
    x->tn++;
    return DR_OK;
}

static void tmap_del(dr_pidx_t *x, uint64_t h, uint32_t v)
{
    size_t m = x->tcap - 1, i = h & m;
    while (!(x->tkey[i] == h && x->tval[i] == v)) {
        if (!x->tkey[i])
            return;
        i = (i + 1) & m;
    }
    x->tn--;
    for (;;) {
        x->tkey[i] = 0;
        size_t j = i;
        for (;;) {
            j = (j + 1) & m;
            if (!x->tkey[j])
                return;
            size_t home = x->tkey[j] & m;
            bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
            if (!stays)
                break;
        }
        x->tkey[i] = x->tkey[j];
        x->tval[i] = x->tval[j];
        i = j;
    }
}

/* --- trees --- */

static dr_pidx_agg_t leaf_agg(const dr_pidx_t *x, const dr_pidx_rec_t *r)
{
    if (!(r->best < INFINITY))
        return (dr_pidx_agg_t){INFINITY, INFINITY, 0, 1};
    return (dr_pidx_agg_t){r->best + x->alpha * r->s, r->s, 1 / (r->best > 1 ? r->best : 1), 1};
}

static dr_pidx_agg_t combine(const dr_pidx_agg_t *a, const dr_pidx_agg_t *b)
{
    return (dr_pidx_agg_t){a->k < b->k ? a->k : b->k, a->s < b->s ? a->s : b->s,
                           a->ii > b->ii ? a->ii : b->ii, a->cnt + b->cnt};
}

static void tree_rebuild(dr_pidx_tree_t *t)
{
    for (size_t i = t->cap; i-- > 1;)
        t->a[i] = combine(&t->a[2 * i], &t->a[2 * i + 1]);
}

static void tree_fix(dr_pidx_tree_t *t, size_t leaf)
{
    for (size_t i = (t->cap + leaf) >> 1; i >= 1; i >>= 1)
        t->a[i] = combine(&t->a[2 * i], &t->a[2 * i + 1]);
}

/* Lay the tree's records out again on cap leaves, in their order. */
static int tree_relayout(dr_pidx_t *x, dr_pidx_tree_t *t, size_t cap)
{
    dr_pidx_agg_t *a = malloc(2 * cap * sizeof *a);
    uint32_t *who = malloc(cap * sizeof *who);
    if (!a || !who) {
        free(a);
        free(who);
        return DR_ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < t->used; i++)
        if (t->who[i] != DR_PIDX_NONE) {
            dr_pidx_rec_t *r = &x->rec[t->who[i]];
            who[n] = t->who[i];
            a[cap + n] = leaf_agg(x, r);
            r->leaf = (uint32_t)n;
            n++;
        }
    for (size_t i = n; i < cap; i++) {
        who[i] = DR_PIDX_NONE;
        a[cap + i] = EMPTY;
    }
    a[0] = EMPTY;
    free(t->a);
    free(t->who);
    t->a = a;
    t->who = who;
    t->cap = cap;
    t->used = n;
    tree_rebuild(t);
    return DR_OK;
}

static int tree_get(dr_pidx_t *x, double g, uint64_t parent, uint32_t throttle, uint32_t *out)
{
    uint32_t ti = tmap_find(x, g, parent, throttle);
    if (ti != DR_PIDX_NONE) {
        *out = ti;
        return DR_OK;
    }
    for (ti = 0; ti < x->ntree && x->tree[ti].inuse; ti++)
        ;
    if (ti == x->ntree) {
        if (dr_grow((void **)&x->tree, &x->tree_cap, x->ntree + 1, sizeof *x->tree) != 0)
            return DR_ENOMEM;
        memset(&x->tree[x->ntree], 0, sizeof *x->tree);
        x->ntree++;
    }
    dr_pidx_tree_t *t = &x->tree[ti];
    memset(t, 0, sizeof *t);
    t->g = g;
    t->parent = parent;
    t->throttle = throttle;
    if (tree_relayout(x, t, 16) != DR_OK)
        return DR_ENOMEM;
    t->inuse = true;
    if (tmap_put(x, tree_hash(g, parent, throttle), ti) != DR_OK) {
        tree_release(t);
        return DR_ENOMEM;
    }
    *out = ti;
    return DR_OK;
}

static int tree_append(dr_pidx_t *x, uint32_t ti, uint32_t ri)
{
    dr_pidx_tree_t *t = &x->tree[ti];
    if (t->used == t->cap) {
        /* half of the leaves dead: close the gaps; else double */
        size_t cap = 2 * (size_t)t->nrec <= t->used ? t->cap : 2 * t->cap;
        if (tree_relayout(x, t, cap) != DR_OK)
            return DR_ENOMEM;
    }
    size_t leaf = t->used++;
    t->who[leaf] = ri;
    x->rec[ri].tree = ti;
    x->rec[ri].leaf = (uint32_t)leaf;
    t->a[t->cap + leaf] = leaf_agg(x, &x->rec[ri]);
    tree_fix(t, leaf);
    t->nrec++;
    return DR_OK;
}

/* --- records --- */

static double gpus_of(const dr_job_t *j)
{
    double s = (double)j->req.gpus_per_node * (j->req.nodes ? j->req.nodes : 1);
    return s > 0 ? s : 1;
}

int dr_pidx_add(dr_pidx_t *x, dr_job_t *j, uint32_t *out)
{
    if (!x->have_origin) {
        x->origin = j->submit;
        x->have_origin = true;
    }
    uint32_t ri = x->free_rec;
    if (ri == DR_PIDX_NONE) {
        if (x->nslots >= DR_PIDX_NONE - 1 ||
            dr_grow((void **)&x->rec, &x->rec_cap, x->nslots + 1, sizeof *x->rec) != 0)
            return DR_ENOMEM;
        ri = (uint32_t)x->nslots++;
        x->rec[ri].gen = 0;
    } else {
        x->free_rec = x->rec[ri].leaf;
    }
    dr_pidx_rec_t *r = &x->rec[ri];
    uint32_t gen = r->gen;
    memset(r, 0, sizeof *r);
    r->gen = gen;
    r->j = j;
    r->g = gpus_of(j);
    r->s = dr_time_to_s(j->submit - x->origin);
    r->submit = j->submit;
    r->best = INFINITY;
    r->tree = r->leaf = DR_PIDX_NONE;
    bool own = j->array_parent && j->array_throttle;
    uint32_t ti;
    int rc = tree_get(x, r->g, own ? j->array_parent : 0, own ? j->array_throttle : 0, &ti);
    if (rc == DR_OK)
        rc = tree_append(x, ti, ri);
    if (rc == DR_OK)
        rc = jmap_put(x, (uintptr_t)j, ri);
    if (rc != DR_OK) {
        if (r->tree != DR_PIDX_NONE) {
            dr_pidx_tree_t *t = &x->tree[r->tree];
            t->who[r->leaf] = DR_PIDX_NONE;
            t->a[t->cap + r->leaf] = EMPTY;
            tree_fix(t, r->leaf);
            t->nrec--;
        }
        r->j = NULL;
        r->gen++;
        r->leaf = x->free_rec;
        x->free_rec = ri;
        return DR_ENOMEM;
    }
    x->nrec++;
    x->gpus += r->g;
    *out = ri;
    return DR_OK;
}

int dr_pidx_update(dr_pidx_t *x, uint32_t ri)
{
    dr_pidx_rec_t *r = &x->rec[ri];
    r->ver++;
    dr_pidx_tree_t *t = &x->tree[r->tree];
    t->a[t->cap + r->leaf] = leaf_agg(x, r);
    tree_fix(t, r->leaf);
    return DR_OK;
}

void dr_pidx_remove(dr_pidx_t *x, uint32_t ri)
{
    dr_pidx_rec_t *r = &x->rec[ri];
    if (!r->j)
        return;
    uint32_t ti = r->tree;
    dr_pidx_tree_t *t = &x->tree[ti];
    t->who[r->leaf] = DR_PIDX_NONE;
    t->a[t->cap + r->leaf] = EMPTY;
    tree_fix(t, r->leaf);
    t->nrec--;
    if (!t->nrec) {
        if (t->parent) { /* an array's tree goes with its last task */
            tmap_del(x, tree_hash(t->g, t->parent, t->throttle), ti);
            tree_release(t);
        } else {
            t->used = 0; /* every leaf is empty */
        }
    }
    jmap_del(x, (uintptr_t)r->j);
    x->nrec--;
    x->gpus -= r->g;
    r->j = NULL;
    r->gen++;
    r->leaf = x->free_rec;
    x->free_rec = ri;
}

void dr_pidx_rekey(dr_pidx_t *x, void (*fn)(void *ud, dr_pidx_rec_t *r), void *ud)
{
    for (size_t i = 0; i < x->nslots; i++)
        if (x->rec[i].j) {
            fn(ud, &x->rec[i]);
            x->rec[i].ver++;
        }
    for (size_t ti = 0; ti < x->ntree; ti++) {
        dr_pidx_tree_t *t = &x->tree[ti];
        if (!t->inuse)
            continue;
        for (size_t l = 0; l < t->used; l++)
            if (t->who[l] != DR_PIDX_NONE)
                t->a[t->cap + l] = leaf_agg(x, &x->rec[t->who[l]]);
        tree_rebuild(t);
    }
}

uint32_t dr_pidx_any(const dr_pidx_t *x, size_t ti)
{
    const dr_pidx_tree_t *t = &x->tree[ti];
    if (!t->inuse || !t->a[1].cnt)
        return DR_PIDX_NONE;
    size_t i = 1;
    while (i < t->cap)
        i = t->a[2 * i].cnt ? 2 * i : 2 * i + 1;
    return t->who[i - t->cap];
}

/* --- searches --- */

/* Upper bound on the priority of every record under a. */
static double bound(const dr_pidx_t *x, const dr_pidx_agg_t *a, double g, double t)
{
    if (!a->cnt || !(a->k < INFINITY))
        return 0;
    double eff = a->k - x->alpha * t;
    double p = 1.0 / ((eff > 60 ? eff : 60) * g);
    if (x->age > 0) {
        double w = t - a->s;
        double sd = (w > 0 ? w : 0) * a->ii + 1;
        if (sd > x->age) {
            double y = sd / x->age;
            p *= y * y * y * y;
        }
    }
    return p * SLACK;
}

static bool tree_searched(const dr_pidx_t *x, const dr_pidx_query_t *q, size_t ti)
{
    const dr_pidx_tree_t *t = &x->tree[ti];
    return t->inuse && t->nrec && q->usable[ti];
}

static int push_hit(dr_pidx_hit_t **out, size_t *nout, size_t *outcap, double v,
                    const dr_pidx_rec_t *r, uint32_t rec)
{
    if (dr_grow((void **)out, outcap, *nout + 1, sizeof **out) != 0)
        return DR_ENOMEM;
    (*out)[(*nout)++] = (dr_pidx_hit_t){v, r->g, r->j, rec};
    return DR_OK;
}

int dr_pidx_collect(dr_pidx_t *x, const dr_pidx_query_t *q, double tau, double max_gpus,
                    dr_pidx_hit_t **out, size_t *nout, size_t *outcap, size_t *nvalued)
{
    size_t sp = 0;
    double gsum = 0;
    for (size_t ti = 0; ti < x->ntree; ti++) {
        if (!tree_searched(x, q, ti) || bound(x, &x->tree[ti].a[1], x->tree[ti].g, q->t) < tau)
            continue;
        if (dr_grow((void **)&x->stack, &x->stack_cap, sp + 1, sizeof *x->stack) != 0)
            return DR_ENOMEM;
        x->stack[sp++] = (uint64_t)ti << 32 | 1;
    }
    while (sp) {
        uint64_t e = x->stack[--sp];
        const dr_pidx_tree_t *t = &x->tree[e >> 32];
        size_t i = (uint32_t)e;
        if (i >= t->cap) {
            uint32_t ri = t->who[i - t->cap];
            if (ri == DR_PIDX_NONE)
                continue;
            const dr_pidx_rec_t *r = &x->rec[ri];
            double v = q->value(q->ud, r);
            ++*nvalued;
            if (!(v >= tau && v > 0))
                continue;
            if (push_hit(out, nout, outcap, v, r, ri) != DR_OK)
                return DR_ENOMEM;
            gsum += r->g;
            if (gsum > max_gpus)
                return DR_ELIMIT;
            continue;
        }
        if (dr_grow((void **)&x->stack, &x->stack_cap, sp + 2, sizeof *x->stack) != 0)
            return DR_ENOMEM;
        for (size_t ch = 2 * i; ch <= 2 * i + 1; ch++)
            if (bound(x, &t->a[ch], t->g, q->t) >= tau)
                x->stack[sp++] = (e & ~(uint64_t)UINT32_MAX) | ch;
    }
    return DR_OK;
}

/* Heap order: higher value first; at equal values subtrees before records
 * (one may hold a record of that value that comes first in the queue),
 * records in queue order. */
static bool item_before(const dr_pidx_t *x, const item_t *a, const item_t *b)
{
    if (a->v != b->v)
        return a->v > b->v;
    bool af = a->node == DR_PIDX_NONE, bf = b->node == DR_PIDX_NONE;
    if (af != bf)
        return bf;
    if (!af)
        return false;
    return dr_pidx_queue_before(x->rec[a->rec].j, x->rec[b->rec].j);
}

static int heap_push(dr_pidx_t *x, size_t *n, item_t it)
{
    if (dr_grow((void **)&x->heap, &x->heap_cap, *n + 1, sizeof *x->heap) != 0)
        return DR_ENOMEM;
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!item_before(x, &it, &x->heap[p]))
            break;
        x->heap[i] = x->heap[p];
        i = p;
    }
    x->heap[i] = it;
    return DR_OK;
}

static item_t heap_pop(dr_pidx_t *x, size_t *n)
{
    item_t top = x->heap[0], last = x->heap[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && item_before(x, &x->heap[c + 1], &x->heap[c]))
            c++;
        if (!item_before(x, &x->heap[c], &last))
            break;
        x->heap[i] = x->heap[c];
        i = c;
    }
    if (*n)
        x->heap[i] = last;
    return top;
}

int dr_pidx_top(dr_pidx_t *x, const dr_pidx_query_t *q, double want_gpus, dr_pidx_hit_t **out,
                size_t *nout, size_t *outcap, size_t *nvalued)
{
    size_t n = 0;
    double gsum = 0;
    for (size_t ti = 0; ti < x->ntree; ti++) {
        if (!tree_searched(x, q, ti))
            continue;
        double b = bound(x, &x->tree[ti].a[1], x->tree[ti].g, q->t);
        if (b > 0 && heap_push(x, &n, (item_t){b, (uint32_t)ti, 1, DR_PIDX_NONE}) != DR_OK)
            return DR_ENOMEM;
    }
    while (n && gsum < want_gpus) {
        item_t it = heap_pop(x, &n);
        if (it.node == DR_PIDX_NONE) {
            const dr_pidx_rec_t *r = &x->rec[it.rec];
            if (push_hit(out, nout, outcap, it.v, r, it.rec) != DR_OK)
                return DR_ENOMEM;
            gsum += r->g;
            continue;
        }
        const dr_pidx_tree_t *t = &x->tree[it.t];
        if (it.node >= t->cap) {
            uint32_t ri = t->who[it.node - t->cap];
            if (ri == DR_PIDX_NONE)
                continue;
            double v = q->value(q->ud, &x->rec[ri]);
            ++*nvalued;
            if (v > 0 && heap_push(x, &n, (item_t){v, it.t, DR_PIDX_NONE, ri}) != DR_OK)
                return DR_ENOMEM;
            continue;
        }
        for (uint32_t ch = 2 * it.node; ch <= 2 * it.node + 1; ch++) {
            double b = bound(x, &t->a[ch], t->g, q->t);
            if (b > 0 && heap_push(x, &n, (item_t){b, it.t, ch, DR_PIDX_NONE}) != DR_OK)
                return DR_ENOMEM;
        }
    }
    return DR_OK;
}
