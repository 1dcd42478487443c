/* pack_frag.c - FGD's expected-fragmentation measure over the shapes seen so
 * far (see pack_frag.h for the formula).
 *
 * It is evaluated for every candidate node and GPU on every request, so it is
 * built for speed: the histogram keeps its shapes ordered by frequency (one
 * request moves one shape, so an insertion step keeps the order), the typical
 * set is cut into per-GPU-type term lists sorted by milli, and one evaluation
 * walks those terms once against the node's free milli sorted the same way:
 * O(terms + GPUs), no allocation. */
#include "sched/pack_frag.h"

#include <stdlib.h>
#include <string.h>

#include "drover/util.h"
#include "sched/pack_priv.h"

void dr_frag_init(dr_frag_model_t *m)
{
    memset(m, 0, sizeof *m);
    m->threshold = 0.95;
    m->cpu_pods = true;
    m->mem_round_mb = 1;
}

void dr_frag_free(dr_frag_model_t *m)
{
    free(m->shapes);
    free(m->order);
    free(m->slot);
    for (size_t t = 0; t < DR_MAX_GPU_TYPES; t++)
        free(m->terms[t]);
    memset(m, 0, sizeof *m);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dULL;
    return x ^ (x >> 33);
}

static uint64_t shape_hash(const dr_frag_shape_t *s)
{
    uint64_t h = mix(s->cpu ^ ((uint64_t)s->milli << 32));
    h = mix(h ^ s->num ^ ((uint64_t)s->allowed << 17));
    h = mix(h ^ (s->allowed >> 47) ^ s->mem);
    return h;
}

static bool shape_eq(const dr_frag_shape_t *a, const dr_frag_shape_t *b)
{
    return a->cpu == b->cpu && a->milli == b->milli && a->num == b->num && a->mem == b->mem &&
           a->allowed == b->allowed;
}

static int rehash(dr_frag_model_t *m, size_t nslots)
{
    uint32_t *s = calloc(nslots, sizeof *s);
    if (!s)
        return DR_ENOMEM;
    for (size_t i = 0; i < m->nshapes; i++) {
        size_t k = shape_hash(&m->shapes[i]) & (nslots - 1);
        while (s[k])
            k = (k + 1) & (nslots - 1);
        s[k] = (uint32_t)i + 1;
    }
    free(m->slot);
    m->slot = s;
    m->nslots = nslots;
    return DR_OK;
}

/* The weight a shape's requests carry in the target distribution. */
static double shape_weight(const dr_frag_model_t *m, const dr_frag_shape_t *s)
{
    double w = (double)s->count;
    if (m->gpu_weight > 0 && s->milli == 1000)
        w *= 1 + m->gpu_weight * s->num;
    return w;
}

/* Order: heavier first; equal weights by the larger shape first (the
 * simulator sorts its typical pods the same way, CPU, milli, GPUs). */
static bool before(const dr_frag_model_t *m, uint32_t a, uint32_t b)
{
    const dr_frag_shape_t *x = &m->shapes[a], *y = &m->shapes[b];
    double wx = shape_weight(m, x), wy = shape_weight(m, y);
    if (wx != wy)
        return wx > wy;
    if (x->cpu != y->cpu)
        return x->cpu > y->cpu;
    if (x->milli != y->milli)
        return x->milli > y->milli;
    if (x->num != y->num)
        return x->num > y->num;
    if (x->mem != y->mem)
        return x->mem > y->mem;
    return x->allowed < y->allowed;
}

int dr_frag_observe(dr_frag_model_t *m, const dr_pack_req_t *r)
{
    if (r->ngpus == 0 && !m->cpu_pods)
        return DR_OK;
    dr_frag_shape_t key = {.cpu = r->cpu_milli,
                           .milli = r->ngpus ? r->gpu_milli : 0,
                           .num = r->ngpus,
                           .allowed = r->ngpus ? r->allowed : 0};
    if (m->use_mem) {
        uint64_t q = m->mem_round_mb > 1 ? m->mem_round_mb : 1;
        key.mem = (r->mem_mb + q - 1) / q * q;
    }
    if (2 * (m->nshapes + 1) > m->nslots && rehash(m, m->nslots ? 2 * m->nslots : 64) != DR_OK)
        return DR_ENOMEM;
    size_t k = shape_hash(&key) & (m->nslots - 1);
    while (m->slot[k] && !shape_eq(&m->shapes[m->slot[k] - 1], &key))
        k = (k + 1) & (m->nslots - 1);
    uint32_t idx;
    size_t pos;
    if (m->slot[k]) {
        idx = m->slot[k] - 1;
        for (pos = 0; m->order[pos] != idx; pos++)
            ;
    } else {
        if (m->nshapes == m->cap) {
            size_t nc = m->cap ? 2 * m->cap : 64;
            dr_frag_shape_t *s = realloc(m->shapes, nc * sizeof *s);
            if (!s)
                return DR_ENOMEM;
            m->shapes = s;
            uint32_t *o = realloc(m->order, nc * sizeof *o);
            if (!o)
                return DR_ENOMEM;
            m->order = o;
            m->cap = nc;
        }
        idx = (uint32_t)m->nshapes++;
        m->shapes[idx] = key;
        m->slot[k] = idx + 1;
        pos = idx;
        m->order[pos] = idx;
    }
    m->shapes[idx].count++;
    m->total++;
    /* it only got heavier: move it up */
    while (pos > 0 && before(m, idx, m->order[pos - 1])) {
        m->order[pos] = m->order[pos - 1];
        pos--;
    }
    m->order[pos] = idx;
    return DR_OK;
}

static int push_term(dr_frag_model_t *m, size_t t, const dr_frag_term_t *term)
{
    if (m->nterms[t] == m->terms_cap[t]) {
        size_t nc = m->terms_cap[t] ? 2 * m->terms_cap[t] : 32;
        dr_frag_term_t *a = realloc(m->terms[t], nc * sizeof *a);
        if (!a)
            return DR_ENOMEM;
        m->terms[t] = a;
        m->terms_cap[t] = nc;
    }
    dr_frag_term_t *a = m->terms[t];
    size_t j = m->nterms[t]++;
    while (j > 0 && a[j - 1].milli < term->milli) { /* milli, largest first */
        a[j] = a[j - 1];
        j--;
    }
    a[j] = *term;
    return DR_OK;
}

int dr_frag_prepare(dr_frag_model_t *m, const dr_cluster_t *c)
{
    size_t nt = c->ntypes < DR_MAX_GPU_TYPES ? c->ntypes : DR_MAX_GPU_TYPES;
    for (size_t t = 0; t < DR_MAX_GPU_TYPES; t++)
        m->nterms[t] = 0;
    m->wall = 0;
    m->ntypical = 0;
    double total = 0;
    for (size_t i = 0; i < m->nshapes; i++)
        total += shape_weight(m, &m->shapes[i]);
    if (total <= 0)
        return DR_OK;
    /* the most frequent shapes until they make up the threshold */
    double want = m->threshold * total, cum = 0;
    size_t n = 0;
    while (n < m->nshapes && cum < want)
        cum += shape_weight(m, &m->shapes[m->order[n++]]);
    m->ntypical = n;
    for (size_t i = 0; i < n; i++) {
        const dr_frag_shape_t *s = &m->shapes[m->order[i]];
        dr_frag_term_t term = {s->cpu, s->milli, s->num, s->mem, shape_weight(m, s) / cum};
        m->wall += term.w;
        if (s->num == 0)
            continue; /* CPU-only: its frag is always all of L */
        for (size_t t = 0; t < nt; t++)
            if ((s->allowed & (1ULL << t)) && push_term(m, t, &term) != DR_OK)
                return DR_ENOMEM;
    }
    return DR_OK;
}

double dr_frag_eval(const dr_frag_model_t *m, const dr_frag_node_t *n)
{
    if (n->type < 0 || n->ngpus == 0)
        return 0;
    uint16_t s[DR_MAX_GPUS_PER_NODE];
    uint32_t ng = 0, total = 0;
    for (uint16_t g = 0; g < n->ngpus; g++) { /* free milli, largest first */
        uint16_t v = n->left[g];
        total += v;
        uint32_t j = ng++;
        while (j > 0 && s[j - 1] < v) {
            s[j] = s[j - 1];
            j--;
        }
        s[j] = v;
    }
    if (total == 0)
        return 0;
    const dr_frag_term_t *tm = m->terms[n->type];
    size_t nt = m->nterms[n->type];
    double sat = 0;
    uint32_t j = 0, prefix = 0; /* j GPUs have >= milli free, prefix milli on them */
    for (size_t i = 0; i < nt; i++) {
        const dr_frag_term_t *p = &tm[i];
        while (j < ng && s[j] >= p->milli)
            prefix += s[j++];
        if (p->num <= j && p->cpu <= n->cpu_left && (!m->use_mem || p->mem <= n->mem_left))
            sat += p->w * prefix;
    }
    return m->wall * total - sat;
}

/* --- the candidate loop --- */

void dr_frag_memo_free(dr_frag_memo_t *mo)
{
    free(mo->key);
    free(mo->score);
    free(mo->value);
    free(mo->stamp);
    memset(mo, 0, sizeof *mo);
}

static int memo_begin(dr_frag_memo_t *mo, size_t nnodes)
{
    size_t want = 64;
    while (want < 2 * nnodes)
        want *= 2;
    if (mo->cap < want) {
        dr_frag_memo_free(mo);
        mo->key = malloc(want * sizeof *mo->key);
        mo->score = malloc(want * sizeof *mo->score);
        mo->value = malloc(want * sizeof *mo->value);
        mo->stamp = calloc(want, sizeof *mo->stamp);
        if (!mo->key || !mo->score || !mo->value || !mo->stamp) {
            dr_frag_memo_free(mo);
            return DR_ENOMEM;
        }
        mo->cap = want;
    }
    if (++mo->gen == 0) { /* wrapped: forget every stamp */
        memset(mo->stamp, 0, mo->cap * sizeof *mo->stamp);
        mo->gen = 1;
    }
    return DR_OK;
}

/* A node's state as a key: type, GPU count, CPU and memory left, free milli
 * per GPU sorted (10 bits each).  Only for nodes of up to 8 GPUs. */
static bool memo_key(const dr_cluster_t *c, const dr_node_t *n, uint64_t key[4])
{
    if (n->ngpus > 8)
        return false;
    uint16_t s[8] = {0};
    for (uint16_t g = 0; g < n->ngpus; g++) {
        uint16_t v = c->gpu_free[n->gpu_base + g], j = g;
        while (j > 0 && s[j - 1] < v) {
            s[j] = s[j - 1];
            j--;
        }
        s[j] = v;
    }
    key[0] =
        ((uint64_t)(n->ngpus ? n->type : 0xff) << 56) | ((uint64_t)n->ngpus << 48) | n->cpu_free;
    key[1] = n->mem_free;
    key[2] = key[3] = 0;
    for (int g = 0; g < 8; g++)
        key[2 + g / 6] |= (uint64_t)s[g] << (10 * (g % 6));
    return true;
}

static size_t memo_slot(const dr_frag_memo_t *mo, const uint64_t key[4], bool *hit)
{
    uint64_t h = mix(key[0] ^ mix(key[1] ^ mix(key[2] ^ mix(key[3]))));
    size_t k = h & (mo->cap - 1);
    while (mo->stamp[k] == mo->gen) {
        if (memcmp(mo->key[k], key, sizeof mo->key[k]) == 0) {
            *hit = true;
            return k;
        }
        k = (k + 1) & (mo->cap - 1);
    }
    *hit = false;
    return k;
}

/* The best score of r on node n, and for a share the GPU (lowest index
 * among the best). */
static double best_on_node(const dr_frag_model_t *m, const dr_cluster_t *c, const dr_node_t *n,
                           const dr_pack_req_t *r, const dr_frag_scorer_t *sc, int32_t *gpu)
{
    uint16_t buf[DR_MAX_GPUS_PER_NODE];
    const uint16_t *gf = &c->gpu_free[n->gpu_base];
    dr_frag_node_t st = {n->ngpus ? n->type : -1, n->cpu_free, n->mem_free, n->ngpus, gf};
    double old = dr_frag_eval(m, &st);
    double term = sc->node_term ? sc->node_term(sc->ud, c, n, r) : 0;
    memcpy(buf, gf, n->ngpus * sizeof *buf);
    st.cpu_left -= r->cpu_milli;
    st.mem_left -= r->mem_mb;
    st.left = buf;
    *gpu = -1;
    if (!dr_pack_is_share(r)) {
        uint32_t need = r->ngpus;
        for (uint16_t g = 0; g < n->ngpus && need; g++)
            if (buf[g] == 1000) {
                buf[g] = 0;
                need--;
            }
        return sc->score(sc->ud, old - dr_frag_eval(m, &st), term);
    }
    double best = 0;
    for (uint16_t g = 0; g < n->ngpus; g++) {
        if (gf[g] < r->gpu_milli)
            continue;
        bool dup = false; /* an earlier GPU with the same free milli scores the same */
        for (uint16_t h = 0; h < g && !dup; h++)
            dup = gf[h] == gf[g];
        if (dup)
            continue;
        buf[g] = (uint16_t)(gf[g] - r->gpu_milli);
        double v = sc->score(sc->ud, old - dr_frag_eval(m, &st), term);
        buf[g] = gf[g];
        if (*gpu < 0 || v > best) {
            best = v;
            *gpu = g;
        }
    }
    return best;
}

int dr_frag_choose(dr_packer_t *p, const dr_cluster_t *c, const dr_pack_req_t *r,
                   const dr_frag_model_t *m, dr_frag_memo_t *memo, const dr_frag_scorer_t *sc,
                   int32_t *node, int32_t *gpu)
{
    bool memo_ok = memo_begin(memo, c->nnodes) == DR_OK, found = false;
    double best = 0;
    uint32_t best_rank = 0;
    for (uint32_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *n = &c->nodes[i];
        if (!dr_pack_fits(c, n, r))
            continue;
        uint64_t key[4];
        bool hit = false, keyed = memo_ok && memo_key(c, n, key);
        size_t k = keyed ? memo_slot(memo, key, &hit) : 0;
        double v;
        int32_t g = -1;
        const uint16_t *gf = &c->gpu_free[n->gpu_base];
        if (hit) {
            v = memo->score[k];
            if (dr_pack_is_share(r))
                for (uint16_t h = 0; h < n->ngpus && g < 0; h++)
                    if (gf[h] == memo->value[k])
                        g = h;
        } else {
            v = best_on_node(m, c, n, r, sc, &g);
            if (keyed) {
                memcpy(memo->key[k], key, sizeof memo->key[k]);
                memo->score[k] = v;
                memo->value[k] = g >= 0 ? gf[g] : 0;
                memo->stamp[k] = memo->gen;
            }
        }
        if (!found || v > best || (v == best && p->rank[i] < best_rank)) {
            found = true;
            best = v;
            best_rank = p->rank[i];
            *node = (int32_t)i;
            *gpu = g;
        }
    }
    return found ? DR_OK : DR_ENOSPC;
}
