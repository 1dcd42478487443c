/* perf_prior.c - a job's relative speed on each GPU type before any of its
 * runs was seen: the user's declared speeds, else the catalog's figures.
 *
 * Why the catalog and not "every type is equal": with equal rates a policy
 * cannot tell an L4 from an H100, so a cost-aware one sends every job to the
 * type cheapest per hour and a speed-aware one to whichever type a config
 * lists first.  Peak throughput ratios are rough (a job reaches a different
 * share of peak on each type) but of the right order; perf_learn.c replaces
 * them with what runs show. */
#include "drover/perf_prior.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drover/perfmodel.h"
#include "drover/util.h"

const char *dr_prior_src_name(dr_prior_src_t s)
{
    switch (s) {
    case DR_PRIOR_NONE: return "cannot run";
    case DR_PRIOR_CATALOG: return "catalog";
    case DR_PRIOR_DECLARED: return "declared";
    case DR_PRIOR_SCALED: return "catalog, scaled to the declared";
    case DR_PRIOR_UNKNOWN: return "unknown (median)";
    case DR_PRIOR_MODEL: return "performance model";
    }
    return "?";
}

static bool name_char(int ch)
{
    return isalnum(ch) || ch == '.' || ch == '_' || ch == '-';
}

int dr_speeds_parse(const char *text, dr_speeds_t *out, dr_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return dr_err_set(err, DR_EINVAL,
                          "speeds: empty (write TYPE=SPEED,..., e.g. H100=1,A100=0.45)");
    const char *p = text;
    bool any = false;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq || eq == p)
            return dr_err_set(err, DR_EINVAL, "speeds: '%.*s' is not TYPE=SPEED",
                              (int)(len > 64 ? 64 : len), p);
        size_t nl = (size_t)(eq - p);
        for (size_t i = 0; i < nl; i++)
            if (!name_char((unsigned char)p[i]))
                return dr_err_set(err, DR_EINVAL,
                                  "speeds: '%.*s': a GPU type's name has letters, digits, "
                                  "'.', '_' and '-' only",
                                  (int)(nl > 64 ? 64 : nl), p);
        if (nl >= DR_GPU_NAME_MAX)
            return dr_err_set(err, DR_EINVAL,
                              "speeds: '%.*s...': a GPU type's name is shorter than %d", 24, p,
                              DR_GPU_NAME_MAX);
        if (out->n == DR_SPEEDS_MAX)
            return dr_err_set(err, DR_EINVAL, "speeds: more than %d types", DR_SPEEDS_MAX);
        char num[48];
        size_t vl = len - nl - 1;
        if (vl == 0 || vl >= sizeof num)
            return dr_err_set(err, DR_EINVAL, "speeds: '%.*s': the speed must be a number",
                              (int)(len > 64 ? 64 : len), p);
        memcpy(num, eq + 1, vl);
        num[vl] = '\0';
        double x;
        if (dr_parse_double(num, &x) != 0 || !isfinite(x))
            return dr_err_set(err, DR_EINVAL, "speeds: '%.*s': the speed must be a number",
                              (int)(len > 64 ? 64 : len), p);
        if (x < 0 || x > DR_SPEED_LIMIT)
            return dr_err_set(err, DR_EINVAL, "speeds: '%.*s': the speed must be from 0 to %g",
                              (int)(len > 64 ? 64 : len), p, DR_SPEED_LIMIT);
        memcpy(out->name[out->n], p, nl);
        out->name[out->n][nl] = '\0';
        for (size_t i = 0; i < out->n; i++)
            if (dr_streq_ci(out->name[i], out->name[out->n]))
                return dr_err_set(err, DR_EINVAL, "speeds: %s is named twice", out->name[i]);
        out->speed[out->n++] = x;
        any |= x > 0;
        p += len;
        if (*p == ',') {
            p++;
            if (!*p)
                return dr_err_set(err, DR_EINVAL, "speeds: ends with ','");
        }
    }
    if (!any)
        return dr_err_set(err, DR_EINVAL, "speeds: every speed is 0: the job could run nowhere");
    return DR_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void dr_perf_prior_catalog(const dr_cluster_t *c, dr_job_kind_t kind, dr_precision_t prec,
                           double *rates, uint8_t *src)
{
    size_t n = c->ntypes < DR_MAX_GPU_TYPES ? c->ntypes : DR_MAX_GPU_TYPES;
    double known[DR_MAX_GPU_TYPES], best = 0;
    size_t nk = 0;
    if (prec == DR_PREC_UNSET)
        prec = DR_PREC_BF16;
    for (size_t t = 0; t < n; t++) {
        const dr_gpu_spec_t *g = &c->types[t];
        double x = kind == DR_KIND_SERVE ? g->hbm_tbs : dr_perfmodel_peak_tflops(g, prec, NULL);
        rates[t] = isfinite(x) && x > 0 ? x : NAN;
        if (!isnan(rates[t])) {
            known[nk++] = rates[t];
            if (rates[t] > best)
                best = rates[t];
        }
    }
    double median = 1;
    if (nk) {
        qsort(known, nk, sizeof *known, cmp_double);
        median = nk % 2 ? known[nk / 2] : sqrt(known[nk / 2 - 1] * known[nk / 2]);
    } else {
        best = 1;
    }
    for (size_t t = 0; t < n; t++) {
        bool unknown = isnan(rates[t]);
        rates[t] = (unknown ? median : rates[t]) / best;
        if (src)
            src[t] = unknown ? DR_PRIOR_UNKNOWN : DR_PRIOR_CATALOG;
    }
}

int dr_perf_prior_declared(const dr_cluster_t *c, const dr_catalog_t *cat, const dr_speeds_t *s,
                           const double *catalog, double *rates, uint8_t *src, dr_err_t *err)
{
    size_t n = c->ntypes < DR_MAX_GPU_TYPES ? c->ntypes : DR_MAX_GPU_TYPES;
    bool named[DR_MAX_GPU_TYPES] = {false};
    size_t nmatched = 0;
    for (size_t i = 0; i < s->n; i++) {
        int t = dr_cluster_find_type(c, s->name[i]);
        if (t < 0 || (size_t)t >= n) {
            if (cat && dr_catalog_find(cat, s->name[i]))
                continue;
            return dr_err_set(err, DR_EINVAL,
                              "speeds: %s is neither a GPU type of this cluster nor "
                              "one drover's catalog knows",
                              s->name[i]);
        }
        if (named[t])
            return dr_err_set(err, DR_EINVAL, "speeds: %s is %s, named twice", s->name[i],
                              c->types[t].name);
        named[t] = true;
        rates[t] = s->speed[i];
        nmatched++;
    }
    if (!nmatched)
        return dr_err_set(err, DR_EINVAL, "speeds: names no GPU type of this cluster");
    /* the types not named: the catalog's ratios, on the user's scale */
    double lsum = 0;
    size_t nl = 0;
    for (size_t t = 0; t < n; t++)
        if (named[t] && rates[t] > 0 && catalog[t] > 0) {
            lsum += log(rates[t] / catalog[t]);
            nl++;
        }
    double scale = nl ? exp(lsum / (double)nl) : 0;
    bool any = false;
    for (size_t t = 0; t < n; t++) {
        if (!named[t])
            rates[t] = catalog[t] * scale;
        if (src)
            src[t] = named[t]       ? (rates[t] > 0 ? DR_PRIOR_DECLARED : DR_PRIOR_NONE)
                     : rates[t] > 0 ? DR_PRIOR_SCALED
                                    : DR_PRIOR_NONE;
        any |= rates[t] > 0;
    }
    if (!any)
        return dr_err_set(err, DR_EINVAL, "speeds: leaves no GPU type of this cluster above 0");
    return DR_OK;
}
