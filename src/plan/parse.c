/* parse.c - what `drover plan` reads: counts with a K/M/B/T suffix,
 * durations (through dr_duration_parse, the library's one parser) and model
 * specifications - a preset name, key=value overrides of its shape, or
 * both. */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drover/plan.h"
#include "drover/text.h"
#include "drover/time.h"

int dr_plan_parse_count(const char *s, double *out)
{
    if (!s)
        return DR_EINVAL;
    while (isspace((unsigned char)*s))
        s++;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || v < 0)
        return DR_EINVAL;
    double mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mult = 1e3; break;
    case 'M': mult = 1e6; break;
    case 'B':
    case 'G': mult = 1e9; break;
    case 'T': mult = 1e12; break;
    case 'P': mult = 1e15; break;
    default: mult = 0; break;
    }
    if (mult > 0)
        end++;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return DR_EINVAL;
    v *= mult > 0 ? mult : 1;
    if (!isfinite(v))
        return DR_EINVAL;
    *out = v;
    return DR_OK;
}

int dr_plan_parse_duration(const char *s, double *seconds)
{
    dr_time_t t;
    if (dr_duration_parse(s, &t) != 0)
        return DR_EINVAL;
    *seconds = dr_time_to_s(t);
    return DR_OK;
}

static int parse_uint(const char *v, uint32_t *out)
{
    double d;
    if (dr_plan_parse_count(v, &d) != 0 || d != floor(d) || d > 4e9)
        return DR_EINVAL;
    *out = (uint32_t)d;
    return DR_OK;
}

static int parse_bool(const char *v, bool *out)
{
    if (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0)
        *out = true;
    else if (strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0 || strcasecmp(v, "no") == 0)
        *out = false;
    else
        return DR_EINVAL;
    return DR_OK;
}

/* Apply one key=value override. */
static int model_kv(dr_perfmodel_arch_t *a, const char *key, const char *val, dr_err_t *err)
{
    static const struct {
        const char *key;
        size_t off;
    } u32s[] = {
        {"layers", offsetof(dr_perfmodel_arch_t, layers)},
        {"hidden", offsetof(dr_perfmodel_arch_t, hidden)},
        {"heads", offsetof(dr_perfmodel_arch_t, heads)},
        {"kv_heads", offsetof(dr_perfmodel_arch_t, kv_heads)},
        {"ffn", offsetof(dr_perfmodel_arch_t, ffn)},
        {"vocab", offsetof(dr_perfmodel_arch_t, vocab)},
        {"seq", offsetof(dr_perfmodel_arch_t, seq_len)},
        {"experts", offsetof(dr_perfmodel_arch_t, experts)},
        {"top_k", offsetof(dr_perfmodel_arch_t, top_k)},
        {"shared_experts", offsetof(dr_perfmodel_arch_t, shared_experts)},
        {"expert_ffn", offsetof(dr_perfmodel_arch_t, expert_ffn)},
    };
    for (size_t i = 0; i < sizeof u32s / sizeof *u32s; i++) {
        if (strcasecmp(key, u32s[i].key) != 0)
            continue;
        uint32_t v;
        if (parse_uint(val, &v) != 0 || v == 0 || v > 100000000)
            return dr_err_set(err, DR_EINVAL, "model: %s: '%.40s' is not a positive whole number",
                              key, val);
        memcpy((char *)a + u32s[i].off, &v, sizeof v);
        return DR_OK;
    }
    if (strcasecmp(key, "params") == 0 || strcasecmp(key, "batch_tokens") == 0 ||
        strcasecmp(key, "active") == 0) {
        double v;
        if (dr_plan_parse_count(val, &v) != 0 || v <= 0)
            return dr_err_set(err, DR_EINVAL, "model: %s: '%.40s' is not a positive count", key,
                              val);
        if (strcasecmp(key, "params") == 0)
            a->params = v;
        else if (strcasecmp(key, "active") == 0)
            a->active_params = v;
        else
            a->batch_tokens = v;
        return DR_OK;
    }
    static const struct {
        const char *key;
        size_t off;
    } bools[] = {
        {"glu", offsetof(dr_perfmodel_arch_t, glu)},
        {"untied", offsetof(dr_perfmodel_arch_t, untied)},
        {"dropout", offsetof(dr_perfmodel_arch_t, dropout)},
    };
    for (size_t i = 0; i < sizeof bools / sizeof *bools; i++) {
        if (strcasecmp(key, bools[i].key) != 0)
            continue;
        bool b;
        if (parse_bool(val, &b) != 0)
            return dr_err_set(err, DR_EINVAL, "model: %s: '%.40s' is not 0/1/true/false", key, val);
        memcpy((char *)a + bools[i].off, &b, sizeof b);
        return DR_OK;
    }
    if (strcasecmp(key, "name") == 0) {
        snprintf(a->name, sizeof a->name, "%s", val);
        return DR_OK;
    }
    return dr_err_set(err, DR_EINVAL,
                      "model: unknown key '%.40s' (params, layers, hidden, heads, kv_heads, ffn, "
                      "vocab, seq, glu, untied, dropout, batch_tokens, name, active, experts, "
                      "top_k, shared_experts, expert_ffn)",
                      key);
}

int dr_plan_model_parse(const char *spec, dr_perfmodel_arch_t *out, dr_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (!spec)
        return dr_err_set(err, DR_EINVAL, "model: empty specification");
    const char *p = spec;
    bool first = true, shape = false, params_set = false;
    char base[64] = "";
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char item[256];
        if (n >= sizeof item)
            return dr_err_set(err, DR_EINVAL, "model: '%.40s...' is too long", p);
        memcpy(item, p, n);
        item[n] = '\0';
        char *s = dr_trim(item);
        char *eq = strchr(s, '=');
        if (!*s) {
            return dr_err_set(err, DR_EINVAL, "model: empty item in '%.80s'", spec);
        } else if (eq) {
            *eq = '\0';
            int rc = model_kv(out, s, eq + 1, err);
            if (rc)
                return rc;
            if (strcasecmp(s, "params") == 0)
                params_set = true;
            else if (strcasecmp(s, "seq") != 0 && strcasecmp(s, "batch_tokens") != 0 &&
                     strcasecmp(s, "name") != 0 && strcasecmp(s, "dropout") != 0 &&
                     strcasecmp(s, "active") != 0)
                shape = true; /* only these change the parameter count */
        } else if (first) {
            const dr_plan_preset_t *pr = dr_plan_preset_find(s);
            if (!pr) {
                double v;
                if (dr_plan_parse_count(s, &v) == 0 && v > 0) {
                    out->params = v; /* "70B": a size alone */
                } else {
                    char names[512];
                    size_t w = 0, np;
                    const dr_plan_preset_t *presets = dr_plan_presets(&np);
                    for (size_t i = 0; i < np && w < sizeof names; i++)
                        w += (size_t)snprintf(names + w, sizeof names - w, "%s%s", i ? ", " : "",
                                              presets[i].name);
                    return dr_err_set(err, DR_EINVAL, "model: unknown model '%.40s' (presets: %s)",
                                      s, names);
                }
            } else {
                *out = pr->arch;
                snprintf(base, sizeof base, "%s", pr->name);
            }
        } else {
            return dr_err_set(err, DR_EINVAL, "model: '%.40s' is not key=value", s);
        }
        first = false;
        if (!comma)
            break;
        p = comma + 1;
        if (!*p)
            return dr_err_set(err, DR_EINVAL, "model: trailing ',' in '%.80s'", spec);
    }
    if (shape && out->layers && out->hidden && !out->name[0])
        snprintf(out->name, sizeof out->name, "custom %ux%u", out->layers, out->hidden);
    if (!out->name[0] && out->params > 0)
        snprintf(out->name, sizeof out->name, "%.3g%s-parameter model",
                 out->params >= 1e12 ? out->params / 1e12 : out->params / 1e9,
                 out->params >= 1e12 ? "T" : "B");
    /* A changed shape invalidates the published parameter count; an explicit
     * params= that the shape contradicts is refused rather than silently
     * replaced by the shape's count (the FLOPs and memory come from the
     * shape, so planning "13B" on a 7B shape would report the wrong model). */
    if (out->params > 0 && out->layers && out->hidden && out->heads) {
        double sp = dr_perfmodel_arch_shape_params(out);
        bool off = sp > 0 && fabs(sp - out->params) / out->params > 0.1;
        if (off && params_set)
            return dr_err_set(err, DR_EINVAL,
                              "model: params=%.3g contradicts the shape%s%s (%u layers, hidden "
                              "%u: %.3g parameters); give the shape too (layers=, hidden=, "
                              "heads=, ffn=) or --params %.3g alone for a GPT-3-shaped model",
                              out->params, base[0] ? " of " : "", base, out->layers, out->hidden,
                              sp, out->params);
        if (off && shape)
            out->params = 0;
    }
    return dr_perfmodel_arch_complete(out, err);
}
