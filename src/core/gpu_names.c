/* gpu_names.c - from a GPU's product name to the catalog's GPU type.
 *
 * In the core because two readers need it: the agent (a driver's product
 * name) and the config reader (a slurm.conf Gres type, "a100_80g").
 *
 * Drivers name parts for people ("NVIDIA H100 80GB HBM3", "Tesla
 * V100-SXM2-32GB", "AMD Instinct MI300X"); the scheduler knows catalog
 * types ("H100-SXM-80GB").  Both are cut into upper-case alphanumeric
 * tokens.  A catalog row is a candidate when one of its model tokens (the
 * tokens of its name and aliases that are neither a memory size nor a form
 * factor) appears in the product name.  A candidate is ruled out when the
 * product states a memory size or a form factor that the row contradicts:
 * an "A100-SXM4-40GB" is not the 80 GB row, and an "H100 PCIe" (fewer
 * watts, HBM2e) is not the SXM row, so it gets no type rather than a wrong
 * one.  Among the rest the most specific match wins. */
#include "drover/catalog.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define TOK_MAX 24
#define TOK_LEN 32
#define FF_PCIE 1u /* PCIe cards, NVL (PCIe with NVLink bridges) */
#define FF_SXM  2u /* SXM, HGX boards, OAM, rack-scale NVLink (NVL72) */

typedef struct toks {
    char t[TOK_MAX][TOK_LEN];
    size_t n;
    double mem_gb; /* a "<N>GB" token, NAN if none */
    unsigned ff;   /* FF_* of form-factor tokens */
} toks_t;

/* A form-factor token's class, 0 if the token is not one. */
static unsigned ff_class(const char *t)
{
    size_t len = strlen(t);
    if (!strcmp(t, "PCIE") || !strcmp(t, "NVL"))
        return FF_PCIE;
    if (!strcmp(t, "HGX") || !strcmp(t, "OAM"))
        return FF_SXM;
    if (len >= 3 && !strncmp(t, "SXM", 3) && strspn(t + 3, "0123456789") == len - 3)
        return FF_SXM;
    if (len > 3 && !strncmp(t, "NVL", 3) && strspn(t + 3, "0123456789") == len - 3)
        return FF_SXM;
    return 0;
}

/* "80GB" -> 80, else NAN. */
static double mem_token(const char *t)
{
    size_t d = strspn(t, "0123456789");
    if (d == 0 || strcmp(t + d, "GB") != 0)
        return NAN;
    return strtod(t, NULL);
}

/* Append the tokens of s to k; memory and form-factor tokens are recorded
 * but not kept as model tokens. */
static void tokenize(toks_t *k, const char *s)
{
    while (*s) {
        while (*s && !isalnum((unsigned char)*s))
            s++;
        char tok[TOK_LEN];
        size_t len = 0;
        while (*s && isalnum((unsigned char)*s)) {
            if (len < sizeof tok - 1)
                tok[len++] = (char)toupper((unsigned char)*s);
            s++;
        }
        if (len == 0)
            continue;
        tok[len] = '\0';
        double mem = mem_token(tok);
        unsigned ff = ff_class(tok);
        if (!isnan(mem))
            k->mem_gb = mem;
        else if (ff)
            k->ff |= ff;
        else if (k->n < TOK_MAX)
            memcpy(k->t[k->n++], tok, len + 1);
    }
}

static bool has_tok(const toks_t *k, const char *t)
{
    for (size_t i = 0; i < k->n; i++)
        if (!strcmp(k->t[i], t))
            return true;
    return false;
}

/* s upper-cased with its separators dropped ("h100-sxm" -> "H100SXM"). */
static void squash(char *dst, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 1 < cap; s++)
        if (isalnum((unsigned char)*s))
            dst[n++] = (char)toupper((unsigned char)*s);
    dst[n] = '\0';
}

/* Is one of the row's names exactly the token t?  Such a row is the
 * catalog's default for a bare family name ("A100" is the 80 GB row). */
static bool row_named(const dr_gpu_spec_t *g, const char *t)
{
    char sq[TOK_LEN * 2];
    squash(sq, sizeof sq, g->name);
    if (!strcmp(sq, t))
        return true;
    const char *a = g->aliases;
    while (*a) {
        const char *end = strchr(a, '|');
        size_t len = end ? (size_t)(end - a) : strlen(a);
        char one[sizeof g->aliases];
        memcpy(one, a, len);
        one[len] = '\0';
        squash(sq, sizeof sq, one);
        if (!strcmp(sq, t))
            return true;
        a += len + (end ? 1 : 0);
    }
    return false;
}

/* The row's score against the product's tokens; -1 if it is no candidate
 * or the product contradicts it. */
static int row_score(const dr_gpu_spec_t *g, const toks_t *p)
{
    toks_t r = {.n = 0, .mem_gb = NAN, .ff = 0};
    tokenize(&r, g->name);
    char aliases[sizeof g->aliases];
    memcpy(aliases, g->aliases, sizeof aliases);
    aliases[sizeof aliases - 1] = '\0';
    for (char *a = aliases; *a;) {
        char *end = strchr(a, '|');
        if (end)
            *end = '\0';
        tokenize(&r, a);
        a = end ? end + 1 : a + strlen(a);
    }
    int hits = 0;
    bool is_default = false;
    for (size_t i = 0; i < p->n; i++)
        if (has_tok(&r, p->t[i])) {
            hits++;
            is_default = is_default || row_named(g, p->t[i]);
        }
    if (hits == 0)
        return -1;
    bool mem_known = !isnan(p->mem_gb) && !isnan(g->mem_gb) && g->mem_gb > 0;
    if (mem_known && fabs(g->mem_gb - p->mem_gb) > 0.05 * g->mem_gb)
        return -1;
    if (p->ff && r.ff && !(p->ff & r.ff))
        return -1;
    return 8 * hits + (mem_known ? 4 : 0) + (p->ff && r.ff ? 2 : 0) + (is_default ? 1 : 0);
}

int dr_gpu_type_from_product_cat(const dr_catalog_t *cat, const char *product, char *type, size_t n)
{
    if (type && n)
        type[0] = '\0';
    if (!product)
        return DR_ENOENT;
    toks_t p = {.n = 0, .mem_gb = NAN, .ff = 0};
    tokenize(&p, product);
    const dr_gpu_spec_t *best = NULL;
    int best_score = -1;
    for (size_t i = 0; i < cat->n; i++) {
        int s = row_score(&cat->gpus[i], &p);
        if (s > best_score) { /* ties: the earlier row, as the catalog lists them */
            best = &cat->gpus[i];
            best_score = s;
        }
    }
    if (!best)
        return DR_ENOENT;
    if (!type || strlen(best->name) >= n)
        return DR_EINVAL;
    memcpy(type, best->name, strlen(best->name) + 1);
    return DR_OK;
}

int dr_gpu_type_from_product(const char *product, char *type, size_t n)
{
    dr_catalog_t cat = {0};
    int rc = dr_catalog_builtin(&cat, NULL);
    if (rc == DR_OK)
        rc = dr_gpu_type_from_product_cat(&cat, product, type, n);
    dr_catalog_free(&cat);
    return rc;
}
