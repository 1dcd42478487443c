/* perf.c - the perf table (rate of each job class on each GPU column), its
 * binding to a cluster's GPU types, and the rate queries the schedulers use.
 *
 * Class 0 ("uniform") always exists and runs at rate 1 everywhere.  An
 * initialised table owns no memory: class_names points at a static one-entry
 * array until the first class is added (classes_cap == 0 marks that), so
 * dr_perf_init never fails and a table may be overwritten by dr_perf_copy or
 * dr_gavel_throughputs_parse straight after dr_perf_init without leaking. */
#include "drover/perf.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drover/util.h"

static char uniform_name[] = "uniform";
static char *uniform_names[1] = {uniform_name};

void dr_perf_init(dr_perf_table_t *p)
{
    memset(p, 0, sizeof *p);
    p->nclasses = 1;
    p->class_names = uniform_names;
}

void dr_perf_free(dr_perf_table_t *p)
{
    if (p->class_names && p->class_names != uniform_names) {
        for (size_t i = 1; i < p->nclasses; i++)
            free(p->class_names[i]);
        free(p->class_names);
    }
    if (p->type_names) {
        for (size_t i = 0; i < p->ntypes; i++)
            free(p->type_names[i]);
        free(p->type_names);
    }
    free(p->rate);
    dr_perf_init(p);
}

int dr_perf_set_types(dr_perf_table_t *p, const char *const *names, size_t n)
{
    if (p->nclasses > 1)
        return DR_ESTATE;
    if (n > 0 && !names)
        return DR_EINVAL;
    char **tn = n ? calloc(n, sizeof *tn) : NULL;
    double *rate = n ? malloc(n * sizeof *rate) : NULL;
    if (n && (!tn || !rate)) {
        free(tn);
        free(rate);
        return DR_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        tn[i] = dr_strdup(names[i] ? names[i] : "");
        rate[i] = 1.0;
        if (!tn[i]) {
            for (size_t k = 0; k < i; k++)
                free(tn[k]);
            free(tn);
            free(rate);
            return DR_ENOMEM;
        }
    }
    if (p->type_names) {
        for (size_t i = 0; i < p->ntypes; i++)
            free(p->type_names[i]);
        free(p->type_names);
    }
    free(p->rate);
    p->type_names = tn;
    p->rate = rate;
    p->ntypes = n;
    return DR_OK;
}

int dr_perf_find_class(const dr_perf_table_t *p, const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < p->nclasses; i++)
        if (strcmp(p->class_names[i], name) == 0)
            return (int)i;
    return -1;
}

/* Make room for one more class (class_names and rate rows). */
static int grow_classes(dr_perf_table_t *p)
{
    if (p->nclasses < p->classes_cap)
        return DR_OK;
    size_t nc = p->classes_cap ? p->classes_cap * 2 : 16;
    if (nc > (size_t)INT32_MAX)
        return DR_ELIMIT;
    char **names = malloc(nc * sizeof *names);
    if (!names)
        return DR_ENOMEM;
    double *rate = NULL;
    if (p->ntypes) {
        rate = realloc(p->rate, nc * p->ntypes * sizeof *rate);
        if (!rate) {
            free(names);
            return DR_ENOMEM;
        }
        p->rate = rate;
    }
    memcpy(names, p->class_names, p->nclasses * sizeof *names);
    if (p->class_names != uniform_names)
        free(p->class_names);
    p->class_names = names;
    p->classes_cap = nc;
    return DR_OK;
}

int dr_perf_add_class(dr_perf_table_t *p, const char *name, const double *rates)
{
    if (name && dr_perf_find_class(p, name) >= 0)
        return DR_EINVAL;
    return dr_perf_append_class(p, name, rates);
}

int dr_perf_append_class(dr_perf_table_t *p, const char *name, const double *rates)
{
    if (!name || !*name || (p->ntypes && !rates))
        return DR_EINVAL;
    for (size_t i = 0; i < p->ntypes; i++)
        if (!isfinite(rates[i]) || rates[i] < 0)
            return DR_EINVAL;
    int rc = grow_classes(p);
    if (rc != DR_OK)
        return rc;
    char *copy = dr_strdup(name);
    if (!copy)
        return DR_ENOMEM;
    size_t k = p->nclasses;
    p->class_names[k] = copy;
    if (p->ntypes)
        memcpy(p->rate + k * p->ntypes, rates, p->ntypes * sizeof *rates);
    p->nclasses++;
    return (int)k;
}

int dr_perf_copy(dr_perf_table_t *dst, const dr_perf_table_t *src)
{
    dr_perf_table_t t;
    dr_perf_init(&t);
    int rc = dr_perf_set_types(&t, (const char *const *)src->type_names, src->ntypes);
    for (size_t c = 1; rc == DR_OK && c < src->nclasses; c++) {
        int k = dr_perf_add_class(&t, src->class_names[c], src->rate + c * src->ntypes);
        rc = k < 0 ? k : DR_OK;
    }
    if (rc != DR_OK) {
        dr_perf_free(&t);
        dr_perf_init(dst);
        return rc;
    }
    *dst = t;
    return DR_OK;
}

/* Does column name `col` describe GPU type `s`?  2 = the type's name or one
 * of its aliases (case-insensitive), 1 = a case-insensitive prefix of the
 * type's name ending at a word boundary ("v100" ~ "V100-SXM2-16GB", but "a10"
 * is not "A100-80GB"), 0 = no. */
static int col_matches(const char *col, const dr_gpu_spec_t *s)
{
    if (!*col)
        return 0;
    if (dr_streq_ci(col, s->name))
        return 2;
    size_t cl = strlen(col);
    const char *a = s->aliases;
    while (*a) {
        const char *bar = strchr(a, '|');
        size_t n = bar ? (size_t)(bar - a) : strlen(a);
        if (n == cl && strncasecmp(a, col, n) == 0)
            return 2;
        a += n;
        if (*a == '|')
            a++;
    }
    size_t nl = strnlen(s->name, sizeof s->name);
    if (cl < nl && strncasecmp(s->name, col, cl) == 0 && !isalnum((unsigned char)s->name[cl]))
        return 1;
    return 0;
}

int dr_perf_bind(const dr_perf_table_t *p, const dr_cluster_t *c, int *map, dr_err_t *err)
{
    if (!c || !map)
        return dr_err_set(err, DR_EINVAL, "perf bind: no cluster or map");
    for (size_t t = 0; t < c->ntypes && t < DR_MAX_GPU_TYPES; t++) {
        int best = -1, best_score = 0;
        size_t best_len = 0;
        for (size_t k = 0; p && k < p->ntypes; k++) {
            int sc = col_matches(p->type_names[k], &c->types[t]);
            size_t len = strlen(p->type_names[k]);
            /* exact beats prefix; among prefixes the longest wins; ties go
             * to the first column */
            if (sc > best_score || (sc == 1 && best_score == 1 && len > best_len)) {
                best = (int)k;
                best_score = sc;
                best_len = len;
            }
        }
        map[t] = best;
    }
    for (size_t t = c->ntypes; t < DR_MAX_GPU_TYPES; t++)
        map[t] = -1;
    return DR_OK;
}

double dr_perf_rate(const dr_perf_view_t *v, const dr_job_t *j, unsigned type)
{
    if (j->perf_class == 0 || !v || !v->table)
        return 1.0;
    const dr_perf_table_t *p = v->table;
    if (j->perf_class >= p->nclasses || type >= DR_MAX_GPU_TYPES)
        return 0.0;
    int col = v->map[type];
    if (col < 0 || (size_t)col >= p->ntypes)
        return 0.0;
    return p->rate[(size_t)j->perf_class * p->ntypes + (size_t)col];
}

dr_typemask_t dr_perf_runnable(const dr_perf_view_t *v, const dr_cluster_t *c, const dr_job_t *j)
{
    dr_typemask_t elig = dr_cluster_hostable_types(c, &j->req);
    if (j->perf_class == 0 || !v || !v->table)
        return elig;
    dr_typemask_t out = 0;
    for (unsigned t = 0; t < c->ntypes && t < DR_MAX_GPU_TYPES; t++)
        if ((elig >> t & 1) && dr_perf_rate(v, j, t) > 0)
            out |= (dr_typemask_t)1 << t;
    return out;
}

double dr_perf_best_rate(const dr_perf_view_t *v, const dr_job_t *j, dr_typemask_t mask)
{
    double best = 0;
    for (unsigned t = 0; t < DR_MAX_GPU_TYPES; t++)
        if (mask >> t & 1) {
            double r = dr_perf_rate(v, j, t);
            if (r > best)
                best = r;
        }
    return best;
}

int dr_perf_set_rates(dr_perf_table_t *p, int cls, const double *rates)
{
    if (cls <= 0 || (size_t)cls >= p->nclasses || (p->ntypes && !rates))
        return DR_EINVAL;
    for (size_t i = 0; i < p->ntypes; i++)
        if (!isfinite(rates[i]) || rates[i] < 0)
            return DR_EINVAL;
    if (p->ntypes)
        memcpy(p->rate + (size_t)cls * p->ntypes, rates, p->ntypes * sizeof *rates);
    return DR_OK;
}
