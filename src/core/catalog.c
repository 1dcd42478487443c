/* catalog.c - the GPU catalog: parses data/gpus.csv (or a site's own file)
 * into dr_gpu_spec_t rows, with columns found by header name and unknown
 * figures kept as NAN; looks GPUs up by name or alias. */
#include "drover/catalog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/embed.h"
#include "drover/text.h"
#include "drover/util.h"

/* Numeric columns: header name and where the value goes. */
static const struct {
    const char *col;
    size_t off;
} cat_nums[] = {
    {"bf16_dense_tflops", offsetof(dr_gpu_spec_t, bf16_tflops)},
    {"fp8_dense_tflops", offsetof(dr_gpu_spec_t, fp8_tflops)},
    {"fp16_dense_tflops", offsetof(dr_gpu_spec_t, fp16_tflops)},
    {"mem_gb", offsetof(dr_gpu_spec_t, mem_gb)},
    {"hbm_tb_s", offsetof(dr_gpu_spec_t, hbm_tbs)},
    {"tdp_w", offsetof(dr_gpu_spec_t, tdp_w)},
    {"link_gb_s", offsetof(dr_gpu_spec_t, link_gbs)},
    {"price_usd_hr", offsetof(dr_gpu_spec_t, price_hr)},
    {"price_neocloud_usd_hr", offsetof(dr_gpu_spec_t, price_neocloud_hr)},
};
#define CAT_NNUMS (sizeof cat_nums / sizeof *cat_nums)

/* Text columns with fixed-size destinations. */
static const struct {
    const char *col;
    size_t off, size;
} cat_strs[] = {
    {"name", offsetof(dr_gpu_spec_t, name), DR_GPU_NAME_MAX},
    {"vendor", offsetof(dr_gpu_spec_t, vendor), sizeof(((dr_gpu_spec_t *)0)->vendor)},
    {"aliases", offsetof(dr_gpu_spec_t, aliases), sizeof(((dr_gpu_spec_t *)0)->aliases)},
    {"link", offsetof(dr_gpu_spec_t, link), sizeof(((dr_gpu_spec_t *)0)->link)},
};
#define CAT_NSTRS (sizeof cat_strs / sizeof *cat_strs)

void dr_gpu_spec_unknown(dr_gpu_spec_t *s, const char *name)
{
    memset(s, 0, sizeof *s);
    if (name)
        snprintf(s->name, sizeof s->name, "%s", name);
    s->bf16_tflops = s->fp8_tflops = s->fp16_tflops = NAN;
    s->mem_gb = s->hbm_tbs = s->tdp_w = s->link_gbs = NAN;
    s->price_hr = s->price_neocloud_hr = NAN;
}

int dr_gpu_spec_copy(dr_gpu_spec_t *dst, const dr_gpu_spec_t *src)
{
    char *source = NULL;
    if (src->source && !(source = dr_strdup(src->source)))
        return DR_ENOMEM;
    if (dst != src)
        memcpy(dst, src, sizeof *dst);
    dst->source = source;
    return DR_OK;
}

void dr_gpu_spec_free(dr_gpu_spec_t *s)
{
    if (s) {
        free(s->source);
        s->source = NULL;
    }
}

void dr_catalog_free(dr_catalog_t *cat)
{
    if (!cat)
        return;
    for (size_t i = 0; i < cat->n; i++)
        dr_gpu_spec_free(&cat->gpus[i]);
    free(cat->gpus);
    memset(cat, 0, sizeof *cat);
}

/* Does `key` equal s (case-insensitive), or one of the '|'-separated
 * entries of the alias list a? */
static bool alias_has(const char *a, const char *key, size_t klen)
{
    while (*a) {
        const char *e = strchr(a, '|');
        size_t n = e ? (size_t)(e - a) : strlen(a);
        if (n == klen && n > 0 && strncasecmp(a, key, n) == 0)
            return true;
        if (!e)
            break;
        a = e + 1;
    }
    return false;
}

static const dr_gpu_spec_t *cat_find_n(const dr_catalog_t *cat, const char *key, size_t klen)
{
    if (!cat || klen == 0)
        return NULL;
    for (size_t i = 0; i < cat->n; i++)
        if (strlen(cat->gpus[i].name) == klen && strncasecmp(cat->gpus[i].name, key, klen) == 0)
            return &cat->gpus[i];
    for (size_t i = 0; i < cat->n; i++)
        if (alias_has(cat->gpus[i].aliases, key, klen))
            return &cat->gpus[i];
    return NULL;
}

const dr_gpu_spec_t *dr_catalog_find(const dr_catalog_t *cat, const char *name)
{
    return name ? cat_find_n(cat, name, strlen(name)) : NULL;
}

/* Is any key of row g (its name or an alias) already in cat->gpus[0..n)?
 * Returns the clashing key via key and klen and the earlier row. */
static const dr_gpu_spec_t *cat_clash(const dr_catalog_t *cat, const dr_gpu_spec_t *g,
                                      const char **key, size_t *klen)
{
    const char *k = g->name;
    size_t n = strlen(k);
    const dr_gpu_spec_t *o = cat_find_n(cat, k, n);
    if (o) {
        *key = k;
        *klen = n;
        return o;
    }
    for (const char *a = g->aliases; *a;) {
        const char *e = strchr(a, '|');
        n = e ? (size_t)(e - a) : strlen(a);
        if ((o = cat_find_n(cat, a, n))) {
            *key = a;
            *klen = n;
            return o;
        }
        if (!e)
            break;
        a = e + 1;
    }
    return NULL;
}

int dr_catalog_parse(dr_catalog_t *cat, const char *name, const char *buf, size_t len,
                     dr_err_t *err)
{
    memset(cat, 0, sizeof *cat);
    if (!name)
        name = "catalog";
    dr_csv_t csv;
    dr_csv_open(&csv, buf, len);
    int rc = dr_csv_header(&csv, name, err);
    int num_col[CAT_NNUMS], str_col[CAT_NSTRS], src_col = -1;
    size_t *lines = NULL, lines_cap = 0, nlines = 0; /* line of each row */
    if (rc < 0)
        goto fail;
    size_t ncols = csv.nfields;
    for (size_t i = 0; i < CAT_NSTRS; i++)
        str_col[i] = dr_csv_col(&csv, cat_strs[i].col);
    for (size_t i = 0; i < CAT_NNUMS; i++)
        num_col[i] = dr_csv_col(&csv, cat_nums[i].col);
    src_col = dr_csv_col(&csv, "source");
    static const char *const required[] = {"name", "vendor", "mem_gb"};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (dr_csv_col(&csv, required[i]) < 0) {
            rc = dr_err_set(err, DR_EINVAL, "%s:%zu: header: missing column '%s'", name, csv.line,
                            required[i]);
            goto fail;
        }
    while ((rc = dr_csv_row(&csv, name, ncols, err)) != 0) {
        if (rc < 0)
            goto fail;
        size_t ln = csv.line;
        dr_gpu_spec_t g;
        dr_gpu_spec_unknown(&g, NULL);
        for (size_t i = 0; i < CAT_NSTRS; i++) {
            if (str_col[i] < 0)
                continue;
            char *v = dr_trim(csv.fields[str_col[i]]);
            if (strlen(v) >= cat_strs[i].size) {
                rc = dr_err_set(err, DR_EINVAL,
                                "%s:%zu: %s: '%.40s...' is longer than %zu characters", name, ln,
                                cat_strs[i].col, v, cat_strs[i].size - 1);
                goto fail;
            }
            memcpy((char *)&g + cat_strs[i].off, v, strlen(v) + 1);
        }
        if (!g.name[0]) {
            rc = dr_err_set(err, DR_EINVAL, "%s:%zu: name: empty", name, ln);
            goto fail;
        }
        if (strchr(g.name, '|')) {
            rc = dr_err_set(err, DR_EINVAL, "%s:%zu: name: '%s' contains '|'", name, ln, g.name);
            goto fail;
        }
        for (size_t i = 0; i < CAT_NNUMS; i++) {
            if (num_col[i] < 0)
                continue;
            const char *v = csv.fields[num_col[i]];
            double x = NAN;
            if (!dr_is_blank(v)) {
                if (dr_parse_double(v, &x) != 0) {
                    rc = dr_err_set(err, DR_EINVAL, "%s:%zu: %s: '%.60s' is not a number", name, ln,
                                    cat_nums[i].col, dr_trim(csv.fields[num_col[i]]));
                    goto fail;
                }
                if (x < 0) {
                    rc = dr_err_set(err, DR_EINVAL, "%s:%zu: %s: '%.60s' is negative", name, ln,
                                    cat_nums[i].col, dr_trim(csv.fields[num_col[i]]));
                    goto fail;
                }
            }
            *(double *)((char *)&g + cat_nums[i].off) = x;
        }
        if (isnan(g.mem_gb)) {
            rc = dr_err_set(err, DR_EINVAL, "%s:%zu: mem_gb: empty (the memory size is required)",
                            name, ln);
            goto fail;
        }
        const char *key;
        size_t klen;
        const dr_gpu_spec_t *o = cat_clash(cat, &g, &key, &klen);
        if (o) {
            rc = dr_err_set(err, DR_EINVAL, "%s:%zu: %s: '%.*s' is already used by '%s' (line %zu)",
                            name, ln, key == g.name ? "name" : "aliases", (int)klen, key, o->name,
                            lines[o - cat->gpus]);
            goto fail;
        }
        if (src_col >= 0 && !dr_is_blank(csv.fields[src_col]) &&
            !(g.source = dr_strdup(dr_trim(csv.fields[src_col])))) {
            rc = dr_err_set(err, DR_ENOMEM, "%s: out of memory", name);
            goto fail;
        }
        if (DR_PUSH(lines, nlines, lines_cap, ln) != 0 ||
            DR_PUSH(cat->gpus, cat->n, cat->cap, g) != 0) {
            dr_gpu_spec_free(&g);
            rc = dr_err_set(err, DR_ENOMEM, "%s: out of memory", name);
            goto fail;
        }
    }
    dr_csv_free(&csv);
    free(lines);
    return DR_OK;
fail:
    dr_csv_free(&csv);
    free(lines);
    dr_catalog_free(cat);
    return rc;
}

int dr_catalog_load(dr_catalog_t *cat, const char *path, dr_err_t *err)
{
    char *buf;
    size_t len;
    memset(cat, 0, sizeof *cat);
    int rc = dr_read_file(path, &buf, &len, err);
    if (rc != 0)
        return rc;
    rc = dr_catalog_parse(cat, path, buf, len, err);
    free(buf);
    return rc;
}

int dr_catalog_builtin(dr_catalog_t *cat, dr_err_t *err)
{
    memset(cat, 0, sizeof *cat);
    const struct dr_embedded *e = dr_embedded("gpus");
    if (!e)
        return dr_err_set(err, DR_ENOENT, "the built-in GPU catalog is missing");
    return dr_catalog_parse(cat, "gpus.csv", e->data, e->len, err);
}
