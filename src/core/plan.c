/* plan.c - the planner behind `drover plan` (include/drover/plan.h): model
 * presets and the parsers for model specifications, counts and durations;
 * for each GPU type, the GPU count that best serves the request (cheapest
 * within the deadline, or the knee of the cost/time curve when there is
 * none); ranking, the one-paragraph explanation, and JSON output.
 *
 * Why here and not in the CLI: the same answers are wanted by the controller
 * (admission checks, "will this job meet its deadline on this cluster") and
 * by tests, so the logic is pure library code and the CLI only parses and
 * prints.  Every number comes from perfmodel.c. */
#include "drover/plan.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drover/resilience.h"
#include "drover/time.h"
#include "drover/util.h"

/* ---- presets (architecture numbers from each model's paper or card) ---- */

#define ARCH(nm, P, L, H, A, KV, F, V, S, GLU, UNT, DROP, BT)                                      \
    {                                                                                              \
        .name = (nm), .params = (P), .layers = (L), .hidden = (H), .heads = (A), .kv_heads = (KV), \
        .ffn = (F), .vocab = (V), .seq_len = (S), .glu = (GLU), .untied = (UNT),                   \
        .dropout = (DROP), .batch_tokens = (BT)                                                    \
    }

/* A mixture of experts: ARCH()'s fields (ffn is what a token passes,
 * (K + S) x FE), then E routed experts of width FE, K per token, S shared,
 * N active parameters (published). */
#define MOE(nm, P, L, H, A, KV, V, S_, BT, E, K, S, FE, N)                                         \
    {                                                                                              \
        .name = (nm), .params = (P), .layers = (L), .hidden = (H), .heads = (A), .kv_heads = (KV), \
        .ffn = ((K) + (S)) * (FE), .vocab = (V), .seq_len = (S_), .glu = true, .untied = true,     \
        .batch_tokens = (BT), .experts = (E), .top_k = (K), .shared_experts = (S),                 \
        .expert_ffn = (FE), .active_params = (N)                                                   \
    }

static const dr_plan_preset_t presets[] = {
    {"gpt-3-175b", "gpt3-175b|gpt-3|gpt3|davinci",
     ARCH("GPT-3 175B", 175e9, 96, 12288, 96, 96, 49152, 50257, 2048, false, false, true, 3.2e6),
     "Brown et al. 2020 (arXiv 2005.14165) Table 2.1: 96 layers, d_model 12288, 96 heads, "
     "context 2048, batch 3.2M tokens"},
    {"gpt-3-6.7b", "gpt3-6.7b|gpt-3-7b",
     ARCH("GPT-3 6.7B", 6.7e9, 32, 4096, 32, 32, 16384, 50257, 2048, false, false, true, 2e6),
     "Brown et al. 2020 Table 2.1: 32 layers, d_model 4096, 32 heads, batch 2M tokens"},
    {"gpt-3-2.7b", "gpt3-2.7b",
     ARCH("GPT-3 2.7B", 2.7e9, 32, 2560, 32, 32, 10240, 50257, 2048, false, false, true, 1e6),
     "Brown et al. 2020 Table 2.1: 32 layers, d_model 2560, 32 heads, batch 1M tokens"},
    {"gpt-3-1.3b", "gpt3-1.3b|gpt-3-xl",
     ARCH("GPT-3 1.3B", 1.3e9, 24, 2048, 16, 16, 8192, 50257, 2048, false, false, true, 1e6),
     "Brown et al. 2020 Table 2.1: 24 layers, d_model 2048, batch 1M tokens (heads 16 so that "
     "d_head = 128 divides d_model)"},
    {"opt-175b", "opt",
     ARCH("OPT-175B", 175e9, 96, 12288, 96, 96, 49152, 50272, 2048, false, false, true, 2e6),
     "Zhang et al. 2022 (arXiv 2205.01068) Table 1: 96 layers, 96 heads, width 12288, batch 2M "
     "tokens"},
    {"bloom-176b", "bloom",
     ARCH("BLOOM-176B", 176.2e9, 70, 14336, 112, 112, 57344, 250880, 2048, false, false, false,
          4194304),
     "BigScience 2022 (arXiv 2211.05100) Table 3: 70 layers, 112 heads, hidden 14336, vocab "
     "250,880, sequence 2048, batch 2048 sequences"},
    {"llama-7b", "llama1-7b|llama-1-7b",
     ARCH("LLaMA-7B", 6.7e9, 32, 4096, 32, 32, 11008, 32000, 2048, true, true, false, 4e6),
     "Touvron et al. 2023 (arXiv 2302.13971) Table 2: dimension 4096, 32 heads, 32 layers, batch "
     "4M tokens; SwiGLU 11008 and vocab 32,000 from the released config"},
    {"llama-13b", "llama1-13b|llama-1-13b",
     ARCH("LLaMA-13B", 13.0e9, 40, 5120, 40, 40, 13824, 32000, 2048, true, true, false, 4e6),
     "Touvron et al. 2023 Table 2: dimension 5120, 40 heads, 40 layers, batch 4M tokens"},
    {"llama-33b", "llama1-33b|llama-30b|llama-1-33b",
     ARCH("LLaMA-33B", 32.5e9, 60, 6656, 52, 52, 17920, 32000, 2048, true, true, false, 4e6),
     "Touvron et al. 2023 Table 2: dimension 6656, 52 heads, 60 layers, batch 4M tokens"},
    {"llama-65b", "llama1-65b|llama-1-65b",
     ARCH("LLaMA-65B", 65.2e9, 80, 8192, 64, 64, 22016, 32000, 2048, true, true, false, 4e6),
     "Touvron et al. 2023 Table 2: dimension 8192, 64 heads, 80 layers, batch 4M tokens"},
    {"llama-2-7b", "llama2-7b",
     ARCH("Llama-2-7B", 6.74e9, 32, 4096, 32, 32, 11008, 32000, 4096, true, true, false, 4e6),
     "Touvron et al. 2023 (arXiv 2307.09288) Table 1 and released config: LLaMA-7B shape, context "
     "4096, batch 4M tokens"},
    {"llama-2-13b", "llama2-13b",
     ARCH("Llama-2-13B", 13.0e9, 40, 5120, 40, 40, 13824, 32000, 4096, true, true, false, 4e6),
     "Llama 2 paper Table 1 and released config: 40 layers, 5120, 40 heads, context 4096"},
    {"llama-2-34b", "llama2-34b",
     ARCH("Llama-2-34B", 33.7e9, 48, 8192, 64, 8, 22016, 32000, 4096, true, true, false, 4e6),
     "Llama 2 paper Table 1 (GQA); shape as released for Code Llama 34B: 48 layers, 8192, 64 "
     "heads, 8 KV heads, SwiGLU 22016"},
    {"llama-2-70b", "llama2-70b",
     ARCH("Llama-2-70B", 69.0e9, 80, 8192, 64, 8, 28672, 32000, 4096, true, true, false, 4e6),
     "Llama 2 paper Table 1 and released config: 80 layers, 8192, 64 heads, 8 KV heads, SwiGLU "
     "28672"},
    {"llama-3-8b", "llama3-8b|llama-3.1-8b|llama3.1-8b",
     ARCH("Llama-3-8B", 8.03e9, 32, 4096, 32, 8, 14336, 128256, 8192, true, true, false, 0),
     "Dubey et al. 2024 (arXiv 2407.21783) Table 3 and released config: 32 layers, 4096, 32 "
     "heads, 8 KV heads, FFN 14336, vocab 128,256, context 8192"},
    {"llama-3-70b", "llama3-70b|llama-3.1-70b|llama3.1-70b",
     ARCH("Llama-3-70B", 70.6e9, 80, 8192, 64, 8, 28672, 128256, 8192, true, true, false, 0),
     "Llama 3 paper Table 3: 80 layers, 8192, 64 heads, 8 KV heads, FFN 28672"},
    {"llama-3.1-405b", "llama3-405b|llama-3-405b|llama3.1-405b|llama-405b",
     ARCH("Llama-3.1-405B", 405e9, 126, 16384, 128, 8, 53248, 128256, 8192, true, true, false,
          16e6),
     "Llama 3 paper Table 3: 126 layers, 16384, 128 heads, 8 KV heads, FFN 53248; sec. 3.4.1: "
     "final batch 16M tokens"},
    {"mistral-7b", "mistral",
     ARCH("Mistral-7B", 7.24e9, 32, 4096, 32, 8, 14336, 32000, 8192, true, true, false, 0),
     "Jiang et al. 2023 (arXiv 2310.06825) Table 1: 32 layers, 4096, 32 heads, 8 KV heads, "
     "hidden 14336, vocab 32,000"},
    /* mixtures of experts (gated MLPs, untied embeddings) */
    {"mixtral-8x7b", "mixtral",
     MOE("Mixtral-8x7B", 46.7e9, 32, 4096, 32, 8, 32000, 4096, 0, 8, 2, 0, 14336, 12.9e9),
     "Jiang et al. 2024 (arXiv 2401.04088) Table 1: 32 layers, 4096, 32 heads, 8 KV heads, 8 "
     "experts of 14336, top 2; 46.7B total, 12.9B active (sec. 2.1)"},
    {"mixtral-8x22b", "",
     MOE("Mixtral-8x22B", 141e9, 56, 6144, 48, 8, 32768, 4096, 0, 8, 2, 0, 16384, 39e9),
     "Mistral AI release (mistral.ai/news/mixtral-8x22b) and config: 56 layers, 6144, 48 heads, 8 "
     "KV heads, 8 experts of 16384, top 2; 141B total, 39B active"},
    {"dbrx", "dbrx-132b",
     MOE("DBRX", 132e9, 40, 6144, 48, 8, 100352, 4096, 0, 16, 4, 0, 10752, 36e9),
     "Databricks 2024 (databricks.com/blog/introducing-dbrx) and config: 40 layers, 6144, 48 "
     "heads, 8 KV heads, 16 experts of 10752, top 4; 132B total, 36B active"},
    {"deepseek-v3", "deepseek-v3-671b|deepseek-r1",
     MOE("DeepSeek-V3", 671e9, 61, 7168, 128, 128, 129280, 4096, 15.36e6, 256, 8, 1, 2048, 37e9),
     "DeepSeek-AI 2024 (arXiv 2412.19437) sec. 4.2: 61 layers, 7168, 128 heads, 256 routed "
     "experts of 2048 + 1 shared, 8 per token, 671B total, 37B active, batch 15360 x 4096 "
     "(MLA attention and the 3 dense first layers planned as ordinary layers)"},
    {"llama-4-scout", "llama4-scout",
     MOE("Llama-4-Scout", 109e9, 48, 5120, 40, 8, 202048, 8192, 0, 16, 1, 1, 8192, 17e9),
     "Meta 2025 Llama 4 model card and config: 48 layers, 5120, 40 heads, 8 KV heads, 16 experts "
     "of 8192 + 1 shared, 1 per token; 109B total, 17B active"},
    {"nemotron-4-340b", "nemotron-340b",
     ARCH("Nemotron-4-340B", 341e9, 96, 18432, 96, 8, 73728, 256000, 4096, false, true, false, 0),
     "NVIDIA 2024 (arXiv 2406.11704) Table 1: 96 layers, 18432, 96 heads, 8 KV heads, "
     "squared-ReLU MLP 73728, vocab 256,000"},
};
#define NPRESETS (sizeof presets / sizeof *presets)

const dr_plan_preset_t *dr_plan_presets(size_t *n)
{
    if (n)
        *n = NPRESETS;
    return presets;
}

/* Lower-case letters and digits, and '.' between digits ("3.1"). */
static void normalise(const char *s, size_t len, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < len && s[i] && k + 1 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (isalnum(ch))
            out[k++] = (char)tolower(ch);
        else if (ch == '.' && i > 0 && i + 1 < len && isdigit((unsigned char)s[i - 1]) &&
                 isdigit((unsigned char)s[i + 1]))
            out[k++] = '.';
    }
    out[k] = '\0';
}

static const dr_plan_preset_t *preset_find_n(const char *name, size_t len)
{
    char key[96], cand[96];
    normalise(name, len, key, sizeof key);
    if (!key[0])
        return NULL;
    for (size_t i = 0; i < NPRESETS; i++) {
        normalise(presets[i].name, strlen(presets[i].name), cand, sizeof cand);
        if (strcmp(cand, key) == 0)
            return &presets[i];
        for (const char *a = presets[i].aliases; *a;) {
            const char *bar = strchr(a, '|');
            size_t n = bar ? (size_t)(bar - a) : strlen(a);
            normalise(a, n, cand, sizeof cand);
            if (strcmp(cand, key) == 0)
                return &presets[i];
            a += n;
            if (*a == '|')
                a++;
        }
    }
    return NULL;
}

const dr_plan_preset_t *dr_plan_preset_find(const char *name)
{
    return name ? preset_find_n(name, strlen(name)) : NULL;
}

/* ---- parsers ---- */

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
        char *s = item;
        while (isspace((unsigned char)*s))
            s++;
        size_t k = strlen(s);
        while (k && isspace((unsigned char)s[k - 1]))
            s[--k] = '\0';
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
                    size_t w = 0;
                    for (size_t i = 0; i < NPRESETS && w < sizeof names; i++)
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

/* ---- requests and results ---- */

void dr_plan_req_init(dr_plan_req_t *r, dr_plan_kind_t kind)
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    dr_perfmodel_train_init(&r->train);
    dr_perfmodel_serve_init(&r->serve);
    r->task_precision = DR_PREC_BF16;
    r->pue = 1.0;
    r->net_kind = DR_NET_IB;
}

const char *dr_plan_verdict_name(dr_plan_verdict_t v)
{
    switch (v) {
    case DR_VERDICT_NONE: return "does not fit";
    case DR_VERDICT_SINGLE_GPU: return "single GPU";
    case DR_VERDICT_SINGLE_NODE: return "single node";
    case DR_VERDICT_MULTI_NODE: return "multi-node cluster";
    }
    return "?";
}

void dr_plan_result_free(dr_plan_result_t *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->n; i++)
        free(res->opts[i].curve);
    free(res->opts);
    memset(res, 0, sizeof *res);
}

/* ---- helpers ---- */

static double price_of(const dr_plan_req_t *r, const dr_gpu_spec_t *g)
{
    double p = r->neocloud ? g->price_neocloud_hr : g->price_hr;
    return isfinite(p) && p > 0 ? p : NAN;
}

static dr_plan_verdict_t verdict_of(uint32_t gpus, uint32_t node)
{
    if (gpus == 0)
        return DR_VERDICT_NONE;
    if (gpus == 1)
        return DR_VERDICT_SINGLE_GPU;
    return gpus <= node ? DR_VERDICT_SINGLE_NODE : DR_VERDICT_MULTI_NODE;
}

/* GPUs per host for the "nodes" column: the type's host size, at most the
 * NVLink domain the network model uses (a TPU pod slice of 256 chips spans
 * 32 hosts of 8). */
static uint32_t host_gpus(const dr_gpu_spec_t *g, uint32_t domain)
{
    uint32_t h = g ? dr_perfmodel_host_gpus(g) : 0;
    if (domain == 0)
        domain = 1;
    return h == 0 || h > domain ? domain : h;
}

/* Does the request's types[i] name g (by its name or an alias)? */
static bool names_type(const dr_plan_req_t *r, size_t i, const dr_gpu_spec_t *g)
{
    dr_catalog_t one = {.gpus = (dr_gpu_spec_t *)g, .n = 1, .cap = 1};
    return dr_catalog_find(&one, r->types[i]) != NULL;
}

/* The site's nodes of type g (beside it in types[], as its cap is), or
 * NULL: the type plans on its reference system. */
static const dr_plan_site_net_t *site_net(const dr_plan_req_t *r, const dr_gpu_spec_t *g)
{
    if (!g)
        return NULL;
    for (size_t i = 0; i < r->ntypes; i++)
        if (r->type_net[i].from != DR_PLAN_NET_REFERENCE && names_type(r, i, g))
            return &r->type_net[i];
    return NULL;
}

/* The network type g is planned on: the site's nodes of it where the
 * request has them (from a cluster config the GPUs per node and what the
 * config declares: its NvlinkDomain= and its switch links; from a
 * controller the GPUs per node alone), else - and for what a config leaves
 * undeclared, as a slurm.conf always does - the type's reference system;
 * --net gives the network between nodes over either. */
static void net_for(const dr_plan_req_t *r, const dr_gpu_spec_t *g, dr_perfmodel_net_t *n)
{
    dr_perfmodel_net_default(n, g);
    const dr_plan_site_net_t *s = site_net(r, g);
    if (s && s->from == DR_PLAN_NET_CLUSTER) {
        n->node_gpus = s->net.node_gpus;
        if (s->nvlink_declared || !n->intra_nvlink) {
            n->intra_nvlink = s->net.intra_nvlink;
            n->intra_gbs = s->net.intra_gbs;
        }
        if (s->links_declared) {
            n->kind = s->net.kind;
            n->inter_gbit = s->net.inter_gbit;
        }
    } else if (s && s->from == DR_PLAN_NET_NODE_GPUS && s->net.node_gpus) {
        n->node_gpus = s->net.node_gpus;
    }
    if (r->net_set) {
        n->kind = r->net_kind;
        n->inter_gbit = r->net_gbit;
    }
}

static dr_plan_net_from_t net_from(const dr_plan_req_t *r, const dr_gpu_spec_t *g)
{
    const dr_plan_site_net_t *s = site_net(r, g);
    return s ? s->from : DR_PLAN_NET_REFERENCE;
}

/* GPUs per node for the "nodes" column and the verdict: the site's nodes
 * of g where the request has them, else the type's host size within the
 * NVLink domain `domain`. */
static uint32_t node_size(const dr_plan_req_t *r, const dr_gpu_spec_t *g, uint32_t domain)
{
    const dr_plan_site_net_t *s = site_net(r, g);
    if (s && s->host_gpus)
        return s->host_gpus;
    return host_gpus(g, domain);
}

/* Fill gpu_hours, cost and energy from gpus x wall. */
static void account(const dr_plan_req_t *r, dr_plan_option_t *o, const dr_gpu_spec_t *g,
                    double busy_gpu_s)
{
    o->price_hr = price_of(r, g);
    o->tdp_w = isfinite(g->tdp_w) && g->tdp_w > 0 ? g->tdp_w : NAN;
    o->gpu_hours = o->gpus * o->wall_s / 3600.0;
    o->cost_usd = o->gpu_hours * o->price_hr;
    double pue = r->pue > 0 ? r->pue : 1.0;
    double busy_h = busy_gpu_s > 0 ? busy_gpu_s / 3600.0 : o->gpu_hours;
    o->energy_kwh = busy_h * o->tdp_w / 1000.0 * pue;
    o->power_cost_usd = r->power_usd_kwh > 0 ? o->energy_kwh * r->power_usd_kwh : NAN;
}

/* Candidate GPU counts for a type: 1, 2, 4, then whole nodes doubling. */
static size_t gpu_counts(uint32_t node, uint32_t maxg, uint32_t *out, size_t cap)
{
    size_t n = 0;
    for (uint32_t g = 1; g < node && g <= maxg && n < cap; g *= 2)
        out[n++] = g;
    for (uint64_t g = node; g <= maxg && n < cap; g *= 2)
        out[n++] = (uint32_t)g;
    return n;
}

/* The most GPUs of type g to plan: the budget, and the cap beside g in
 * types[] (a one-row catalog finds g by the name or alias given, as
 * types_of did). */
static uint32_t type_max_gpus(const dr_plan_req_t *r, const dr_gpu_spec_t *g)
{
    uint32_t m = r->max_gpus ? r->max_gpus : DR_PLAN_MAX_GPUS;
    for (size_t i = 0; i < r->ntypes; i++)
        if (r->type_max[i] && r->type_max[i] < m && names_type(r, i, g))
            m = r->type_max[i];
    return m;
}

static int push_point(dr_plan_option_t *o, size_t *cap, uint32_t gpus, double wall, double cost)
{
    dr_plan_point_t p = {gpus, wall, cost};
    return DR_PUSH(o->curve, o->ncurve, *cap, p);
}

static const dr_gpu_spec_t *find_type(const dr_catalog_t *cat, const char *name, dr_err_t *err)
{
    const dr_gpu_spec_t *g = dr_catalog_find(cat, name);
    if (!g) {
        char names[700];
        size_t w = 0;
        for (size_t i = 0; i < cat->n && w < sizeof names; i++)
            w += (size_t)snprintf(names + w, sizeof names - w, "%s%s", i ? ", " : "",
                                  cat->gpus[i].name);
        dr_err_set(err, DR_EINVAL, "unknown GPU type '%.40s' (catalog: %s)", name, names);
    }
    return g;
}

/* The types a request considers. */
static int types_of(const dr_plan_req_t *r, const dr_catalog_t *cat, const dr_gpu_spec_t **out,
                    size_t *n, dr_err_t *err)
{
    *n = 0;
    if (r->ntypes == 0) {
        for (size_t i = 0; i < cat->n && *n < DR_PLAN_MAX_TYPES; i++)
            out[(*n)++] = &cat->gpus[i];
        return DR_OK;
    }
    for (size_t i = 0; i < r->ntypes && *n < DR_PLAN_MAX_TYPES; i++) {
        const dr_gpu_spec_t *g = find_type(cat, r->types[i], err);
        if (!g)
            return DR_EINVAL;
        bool dup = false;
        for (size_t k = 0; k < *n; k++)
            dup |= out[k] == g;
        if (!dup)
            out[(*n)++] = g;
    }
    return DR_OK;
}

static void human_s(double s, char *buf, size_t n)
{
    if (!isfinite(s))
        snprintf(buf, n, "never");
    else if (s < 120)
        snprintf(buf, n, "%.1f s", s);
    else if (s < 7200)
        snprintf(buf, n, "%.1f min", s / 60);
    else if (s < 3 * 86400)
        snprintf(buf, n, "%.1f h", s / 3600);
    else if (s < 90 * 86400)
        snprintf(buf, n, "%.1f days", s / 86400);
    else if (s < 3 * 365.25 * 86400)
        snprintf(buf, n, "%.1f months", s / (30.4375 * 86400));
    else
        snprintf(buf, n, "%.1f years", s / (365.25 * 86400));
}

static void human_usd(double v, char *buf, size_t n)
{
    if (!isfinite(v))
        snprintf(buf, n, "unknown cost (no price in the catalog)");
    else if (v >= 1e6)
        snprintf(buf, n, "$%.2fM", v / 1e6);
    else if (v >= 1e4)
        snprintf(buf, n, "$%.0fk", v / 1e3);
    else
        snprintf(buf, n, "$%.2f", v);
}

/* Append to a fixed buffer. */
static void cat_f(char *buf, size_t cap, const char *fmt, ...) DR_PRINTF(3, 4);
static void cat_f(char *buf, size_t cap, const char *fmt, ...)
{
    size_t len = strnlen(buf, cap);
    if (len + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

/* ---- the network, in words ---- */

static const char *netkind_prose(dr_perfmodel_netkind_t k)
{
    switch (k) {
    case DR_NET_IB: return "InfiniBand";
    case DR_NET_ROCE: return "RoCE";
    case DR_NET_ETH: return "Ethernet";
    case DR_NET_NKINDS: break;
    }
    return "?";
}

/* How many of the request's types plan on a site's nodes. */
static size_t site_types(const dr_plan_req_t *r)
{
    size_t k = 0;
    for (size_t i = 0; i < r->ntypes; i++)
        k += r->type_net[i].from != DR_PLAN_NET_REFERENCE;
    return k;
}

/* The network option o was planned on, after "network: " (g its type, NULL
 * if not in the catalog).  "the cluster's (4 x L40S-48GB per node, PCIe,
 * Ethernet 100 Gbit/s per GPU)". */
static void net_words(const dr_plan_req_t *r, const dr_gpu_spec_t *g, const dr_plan_option_t *o,
                      char *b, size_t cap)
{
    const dr_perfmodel_net_t *n = &o->net;
    const dr_plan_site_net_t *s = site_net(r, g);
    b[0] = '\0';
    bool sxm = g && g->link[0] && strncasecmp(g->link, "PCIe", 4) != 0; /* NVLink by design */
    char between[96];
    snprintf(between, sizeof between, "%s %.0f Gbit/s per GPU%s", netkind_prose(n->kind),
             n->inter_gbit, r->net_set ? " (given)" : "");
    char link[48]; /* a domain spanning several nodes (an NVL72 rack) named as such */
    if (n->intra_nvlink && n->node_gpus > o->node_gpus)
        snprintf(link, sizeof link, "NVLink domains of %u GPUs", n->node_gpus);
    else
        snprintf(link, sizeof link, "%s", n->intra_nvlink ? "NVLink" : "PCIe");
    switch (s ? s->from : DR_PLAN_NET_REFERENCE) {
    case DR_PLAN_NET_CLUSTER: {
        /* what the config leaves undeclared is the type's reference system's,
         * said as such */
        bool no_nvl = sxm && !s->nvlink_declared;
        bool no_links = !r->net_set && !s->links_declared;
        cat_f(b, cap, "the cluster's (%u x %s per node, %s, %s", o->node_gpus, o->gpu, link,
              between);
        if (no_nvl || no_links)
            cat_f(b, cap, "; the config declares no %s%s%s: the type's reference system's",
                  no_nvl ? "NvlinkDomain=" : "", no_nvl && no_links ? " and no " : "",
                  no_links ? "switch LinkGbps=" : "");
        cat_f(b, cap, ")");
        break;
    }
    case DR_PLAN_NET_NODE_GPUS:
        cat_f(b, cap,
              "the cluster's %u x %s per node, with the type's reference system for the rest (%s, "
              "%s; the cluster does not report its links)",
              o->node_gpus, o->gpu, link, between);
        break;
    case DR_PLAN_NET_REFERENCE:
        if (r->net_set)
            cat_f(b, cap, "%s between %s's reference nodes of %u%s", between, o->gpu, o->node_gpus,
                  site_types(r) ? " (the cluster has none)" : "");
        else
            cat_f(b, cap, "%s's reference system (%u per node, %s, %s%s; --net)", o->gpu,
                  o->node_gpus, link, between, site_types(r) ? "; the cluster has none" : "");
        break;
    }
}

/* ---- training ---- */

/* Start-up and per-job overheads (docs/planner.md, "Small jobs"): the launch
 * (resilience.h: process start, distributed initialisation), then the
 * weights in bf16 (2 bytes per parameter) read by every node, and the final
 * weights written once, at 2 GB/s per node (one NVMe drive or a parallel-
 * filesystem client's share; NFS is slower). */
#define DR_PLAN_MAX_SEQ     1048576u
#define STARTUP_STORAGE_BPS (DR_RES_NODE_GBS * 1e9)

double dr_plan_startup_s(double params, uint32_t gpus, uint32_t nodes)
{
    double io = 2 * 2.0 * params / STARTUP_STORAGE_BPS; /* read, then the final save */
    return dr_res_launch_s(gpus, nodes) + io;
}

static double cost_key(const dr_plan_option_t *o)
{
    return isfinite(o->cost_usd) ? o->cost_usd : o->gpu_hours * 1e6; /* unknown prices last */
}

/* ---- optimism (docs/planner.md, "Optimism") ----
 *
 * The layout search finds the best layout the model knows of, and a search
 * over an imperfect model finds its errors.  So what it promises is bounded
 * by the best model-FLOPs utilisation published for the GPU generation at
 * that scale: the GPU's measured matmul efficiency times a fraction that
 * falls per doubling of nodes, through Korthikanti et al. 2022 (530B on
 * 2,240 A100s: 54.2% MFU) and Llama 3 (405B on 8,192 and 16,384 H100s: 43%
 * and 41%, Table 4), set to pass just above all three.  The plan's point
 * estimate is what such a run typically achieves: PLAN_TYPICAL of that
 * bound's throughput - the median, over 75 published training runs, of
 * bound time / reported time: the 41 of bench/plan_validation --size-only
 * and the 34 of bench/data/plan_validation_v2.csv, refitted on both once v2
 * had been evaluated (it was 0.74 on the 41 alone; ordinary stacks and
 * record runs together, no exclusions).  The range runs from the bound (the
 * fast end) to PLAN_SLOW of its throughput (the slow end: 90% of those runs
 * were faster).  Never fitted on bench/data/plan_validation_v3.csv.
 *
 * That range held only 26% of v3's runs when v3 was first evaluated (the
 * frozen model, 535f55d): published runs spread wider than the bound and
 * 0.59 of it.  So for a run the planner chose everything of, the printed
 * range is the empirical one: the 10th and 90th percentiles, over all 102
 * runs of the three sets (--size-only's 41, v2, v3), of reported time /
 * the plan's typical time - 80% of them took between PLAN_RANGE_FAST and
 * PLAN_RANGE_SLOW times the estimate.  A pinned run keeps the model's own
 * range (its figure at the bound, PLAN_SLOW of it). */
#define PLAN_BEST_F0           0.88
#define PLAN_BEST_PER_DOUBLING 0.03
#define PLAN_BEST_MAX          0.75
#define PLAN_TYPICAL           0.77
#define PLAN_SLOW              0.59
#define PLAN_RANGE_FAST        0.61
#define PLAN_RANGE_SLOW        1.49
#define PLAN_RANGE_RUNS        102 /* the runs the range was read from */

double dr_plan_best_mfu(const dr_gpu_spec_t *g, dr_precision_t p, uint32_t nodes)
{
    double f = PLAN_BEST_F0 - PLAN_BEST_PER_DOUBLING * log2(nodes > 1 ? nodes : 1);
    return dr_perfmodel_matmul_eff(g, p) * fmax(0.3, fmin(PLAN_BEST_MAX, f));
}

typedef struct span {
    double fast_s, slow_s; /* wall time at the bound and at the slow end */
    double ceiling;        /* the bound on MFU */
    bool capped;           /* the model's own estimate was above it */
    bool empirical;        /* the range is published runs' spread (planner_chose) */
} span_t;

/* Did the planner choose everything of the run?  A batch or layout the
 * user pinned describes their run: the plan gives the model's own number
 * for it (what bench/plan_validation checks with each paper's batch and
 * layout); the typical discount is for a run the planner chose. */
static bool planner_chose(const dr_perfmodel_train_t *t)
{
    return !t->tp && !t->pp && !t->cp && !t->micro_batch && !t->interleave && t->global_batch <= 0;
}

/* Is the plan for a typical run: the planner chose everything and the user
 * did not say the stack is a record-class one (--stack record)? */
static bool typical_run(const dr_plan_req_t *r)
{
    return planner_chose(&r->train) && !r->stack_record;
}

/* The model's estimate -> the plan's: capped at the bound, then typical
 * when `chosen` (planner_chose of the request). */
static void temper(const dr_plan_req_t *r, const dr_gpu_spec_t *g, dr_perfmodel_train_est_t *e,
                   span_t *sp, bool chosen)
{
    sp->ceiling = dr_plan_best_mfu(g, e->precision, e->nodes);
    sp->capped = e->mfu > sp->ceiling;
    double hi = e->tokens_per_s * (sp->capped ? sp->ceiling / e->mfu : 1.0);
    double pt = hi * (chosen ? PLAN_TYPICAL : 1.0), k = pt / e->tokens_per_s;
    e->tokens_per_s = pt;
    e->samples_per_s *= k;
    e->achieved_tflops_per_gpu *= k;
    e->mfu *= k;
    e->hfu *= k;
    e->step_s /= k;
    if (e->res.interval_s > 0)
        e->res.interval_steps = fmax(1, ceil(e->res.interval_s / e->step_s - 1e-9));
    sp->fast_s = sp->slow_s = 0;
    sp->empirical = chosen;
    if (r->train.tokens > 0) {
        e->wall_s = r->train.tokens / pt / e->goodput;
        sp->fast_s = chosen ? e->wall_s * PLAN_RANGE_FAST : r->train.tokens / hi / e->goodput;
        sp->slow_s =
            chosen ? e->wall_s * PLAN_RANGE_SLOW : r->train.tokens / (hi * PLAN_SLOW) / e->goodput;
    }
}

/* The global batches a plan may choose from (sequences): DR_PLAN_BATCHES at
 * most, ascending; none when the user pinned the batch. */
#define DR_PLAN_BATCHES 12
typedef struct batch_set {
    double b[DR_PLAN_BATCHES];
    size_t n;
} batch_set_t;

/* The fastest layout on `gpus` GPUs over the candidate batches: among
 * those within 2% of the fastest, the smallest batch (the safer one for
 * convergence). */
static int train_best_batch(const dr_plan_req_t *r, const batch_set_t *bs, const dr_gpu_spec_t *g,
                            uint32_t gpus, const dr_perfmodel_net_t *net,
                            dr_perfmodel_train_est_t *out, dr_err_t *err)
{
    if (!bs || bs->n == 0)
        return dr_perfmodel_train_best(&r->train, g, gpus, net, out, err);
    dr_perfmodel_train_est_t ests[DR_PLAN_BATCHES];
    size_t best = SIZE_MAX, fail = 0;
    for (size_t i = 0; i < bs->n; i++) {
        dr_perfmodel_train_t job = r->train;
        job.global_batch = bs->b[i];
        int rc = dr_perfmodel_train_best(&job, g, gpus, net, &ests[i], err);
        if (rc)
            return rc;
        if (!ests[i].fits) {
            /* the informative failure: memory over "cannot keep busy" */
            if (!strstr(ests[i].reason, "cannot keep") || strstr(ests[fail].reason, "cannot keep"))
                fail = i;
            continue;
        }
        if (best == SIZE_MAX || ests[i].tokens_per_s > ests[best].tokens_per_s)
            best = i;
    }
    if (best == SIZE_MAX) {
        *out = ests[fail];
        return DR_OK;
    }
    for (size_t i = 0; i < best; i++)
        if (ests[i].fits && ests[i].tokens_per_s >= 0.98 * ests[best].tokens_per_s) {
            best = i;
            break;
        }
    *out = ests[best];
    return DR_OK;
}

/* Evaluate one type: sweep GPU counts (or just `fixed`), keep the curve,
 * choose one count. */
static int plan_train_type(const dr_plan_req_t *r, const batch_set_t *bs, const dr_gpu_spec_t *g,
                           uint32_t fixed, dr_plan_option_t *o, dr_err_t *err)
{
    memset(o, 0, sizeof *o);
    snprintf(o->gpu, sizeof o->gpu, "%s", g->name);
    dr_perfmodel_net_t net;
    net_for(r, g, &net);
    if (net.node_gpus == 0)
        net.node_gpus = 1;
    o->node_gpus = node_size(r, g, net.node_gpus);
    o->net = net;
    o->net_from = net_from(r, g);
    uint32_t maxg = type_max_gpus(r, g);
    uint32_t counts[64];
    size_t nc = fixed ? 1 : gpu_counts(net.node_gpus, maxg, counts, 64);
    if (fixed)
        counts[0] = fixed;
    size_t ccap = 0;
    dr_perfmodel_train_est_t best_fail;
    memset(&best_fail, 0, sizeof best_fail);
    bool have_fail = false;
    /* all fitting estimates, to choose among */
    dr_perfmodel_train_est_t ests[64];
    span_t spans[64];
    size_t ne = 0;
    for (size_t i = 0; i < nc; i++) {
        dr_perfmodel_train_est_t e;
        int rc = train_best_batch(r, bs, g, counts[i], &net, &e, err);
        if (rc)
            return rc;
        if (!e.fits) {
            /* keep the most informative failure: the largest count tried,
             * but a real cause (memory) over "the batch cannot feed more
             * GPUs", which only follows from the smaller counts failing */
            bool told = !strstr(e.reason, "cannot keep") && e.mem.capacity > 0;
            bool had =
                have_fail && !strstr(best_fail.reason, "cannot keep") && best_fail.mem.capacity > 0;
            if (!have_fail || told || !had)
                best_fail = e;
            have_fail = true;
            if (strstr(e.reason, "cannot keep") && ne > 0)
                break; /* the batch cannot feed more GPUs */
            continue;
        }
        uint32_t nodes = (counts[i] + o->node_gpus - 1) / o->node_gpus;
        double up = dr_plan_startup_s(r->train.arch.params, counts[i], nodes);
        temper(r, g, &e, &spans[ne], typical_run(r));
        e.wall_s += up;
        spans[ne].fast_s += up;
        spans[ne].slow_s += up;
        ests[ne++] = e;
        double wall = e.wall_s;
        double price = price_of(r, g);
        if (push_point(o, &ccap, counts[i], wall, counts[i] * wall / 3600 * price) != 0)
            return dr_err_set(err, DR_ENOMEM, "plan: out of memory");
        if (ne > 1 && wall >= ests[ne - 2].wall_s)
            break; /* more GPUs no longer help: the work cannot use them */
    }
    if (ne == 0) {
        o->fits = false;
        o->gpus = fixed ? fixed : have_fail ? best_fail.gpus : 0;
        o->train = best_fail;
        snprintf(o->note, sizeof o->note, "%s",
                 have_fail ? best_fail.reason : "no GPU count fits within the budget");
        o->verdict = DR_VERDICT_NONE;
        o->price_hr = price_of(r, g);
        o->tdp_w = g->tdp_w;
        o->wall_s = o->gpu_hours = o->cost_usd = o->energy_kwh = o->power_cost_usd = NAN;
        return DR_OK;
    }
    size_t pick = 0;
    if (r->deadline_s > 0) {
        /* cheapest that meets the deadline, else the fastest */
        bool found = false;
        for (size_t i = 0; i < ne; i++) {
            if (ests[i].wall_s > r->deadline_s)
                continue;
            double ci = ests[i].gpus * ests[i].wall_s, cp = ests[pick].gpus * ests[pick].wall_s;
            if (!found || ci < cp * (1 - 1e-9)) {
                pick = i;
                found = true;
            }
        }
        if (!found)
            for (size_t i = 0; i < ne; i++)
                if (ests[i].wall_s < ests[pick].wall_s)
                    pick = i;
    } else if (r->max_gpus) {
        for (size_t i = 0; i < ne; i++) /* fastest within the budget */
            if (ests[i].wall_s < ests[pick].wall_s)
                pick = i;
    } else {
        /* the knee: the fastest option that costs at most 10% more GPU-hours
         * than the cheapest */
        double minc = INFINITY;
        for (size_t i = 0; i < ne; i++)
            minc = fmin(minc, ests[i].gpus * ests[i].wall_s);
        pick = 0;
        double bestw = INFINITY;
        for (size_t i = 0; i < ne; i++)
            if (ests[i].gpus * ests[i].wall_s <= 1.10 * minc && ests[i].wall_s < bestw) {
                bestw = ests[i].wall_s;
                pick = i;
            }
    }
    if (r->deadline_s <= 0 || ests[pick].wall_s <= r->deadline_s) {
        /* more hardware must buy a meaningful saving: the smallest count
         * within DR_PLAN_MIN_SAVING of the chosen time (and within the
         * deadline) wins */
        double lim = fmax(ests[pick].wall_s * (1 + DR_PLAN_MIN_SAVING),
                          ests[pick].wall_s + DR_PLAN_MIN_SAVING_S);
        for (size_t i = 0; i < ne; i++)
            if (ests[i].gpus < ests[pick].gpus && ests[i].wall_s <= lim &&
                (r->deadline_s <= 0 || ests[i].wall_s <= r->deadline_s)) {
                pick = i;
                break;
            }
    }
    const dr_perfmodel_train_est_t *e = &ests[pick];
    o->startup_s = dr_plan_startup_s(r->train.arch.params, e->gpus,
                                     (e->gpus + o->node_gpus - 1) / o->node_gpus);
    o->train = *e;
    o->wall_fast_s = spans[pick].fast_s;
    o->wall_slow_s = spans[pick].slow_s;
    o->mfu_ceiling = spans[pick].ceiling;
    o->capped = spans[pick].capped;
    o->range_empirical = spans[pick].empirical;
    o->fits = true;
    o->gpus = e->gpus;
    o->nodes = (e->gpus + o->node_gpus - 1) / o->node_gpus;
    o->wall_s = e->wall_s;
    o->verdict = verdict_of(o->gpus, o->node_gpus);
    o->meets = r->deadline_s <= 0 || e->wall_s <= r->deadline_s;
    account(r, o, g, 0);
    if (!o->meets) {
        char w[32], d[32];
        human_s(e->wall_s, w, sizeof w);
        human_s(r->deadline_s, d, sizeof d);
        snprintf(o->note, sizeof o->note,
                 "misses the deadline: the fastest configuration tried takes %s (deadline %s)", w,
                 d);
    } else if (e->precision != r->train.precision && r->train.precision != DR_PREC_UNSET) {
        snprintf(o->note, sizeof o->note, "%s has no %s: runs in %s", g->name,
                 dr_precision_name(r->train.precision), dr_precision_name(e->precision));
    }
    return DR_OK;
}

/* ---- serving ---- */

/* Largest concurrency in [1, hi] meeting the latency targets (0 if none). */
static uint32_t serve_max_conc(const dr_plan_req_t *r, const dr_gpu_spec_t *g, uint32_t tp,
                               uint32_t hi, const dr_perfmodel_net_t *net,
                               dr_perfmodel_serve_est_t *best)
{
    uint32_t lo = 0;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        dr_perfmodel_serve_est_t e;
        if (dr_perfmodel_serve_eval(&r->serve, g, tp, mid, net, &e, NULL) != 0 || !e.fits)
            break;
        bool ok = (r->ttft_s <= 0 || e.ttft_s <= r->ttft_s) &&
                  (r->tpot_s <= 0 || e.tpot_s <= r->tpot_s) &&
                  (r->latency_s <= 0 || e.latency_s <= r->latency_s);
        if (ok) {
            lo = mid;
            *best = e;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

static int plan_serve_type(const dr_plan_req_t *r, const dr_gpu_spec_t *g, uint32_t fixed_gpus,
                           dr_plan_option_t *o, dr_err_t *err)
{
    memset(o, 0, sizeof *o);
    snprintf(o->gpu, sizeof o->gpu, "%s", g->name);
    dr_perfmodel_net_t net;
    net_for(r, g, &net);
    o->node_gpus = node_size(r, g, net.node_gpus);
    o->net = net;
    o->net_from = net_from(r, g);
    o->price_hr = price_of(r, g);
    o->tdp_w = isfinite(g->tdp_w) && g->tdp_w > 0 ? g->tdp_w : NAN;
    const dr_perfmodel_arch_t *a = &r->serve.arch;
    bool found = false;
    double best_cost = INFINITY;
    char why[DR_PERFMODEL_REASON_MAX] = "";
    size_t ccap = 0;
    for (uint32_t tp = 1; tp <= net.node_gpus && tp <= 64; tp *= 2) {
        if (a->heads % tp)
            continue;
        if (fixed_gpus && (tp > fixed_gpus || fixed_gpus % tp))
            continue;
        dr_perfmodel_serve_est_t full;
        int rc = dr_perfmodel_serve_eval(&r->serve, g, tp, 0, &net, &full, err);
        if (rc)
            return rc;
        if (!full.fits) {
            snprintf(why, sizeof why, "%s", full.reason);
            continue;
        }
        if (r->ttft_s > 0 && full.ttft_floor_s > r->ttft_s) {
            snprintf(why, sizeof why,
                     "time to first token is at least %.3g s with %u GPU(s) per replica (target "
                     "%.3g s)",
                     full.ttft_floor_s, tp, r->ttft_s);
            continue;
        }
        if (r->tpot_s > 0 && full.tpot_floor_s > r->tpot_s) {
            snprintf(why, sizeof why,
                     "time per output token is at least %.3g s with %u GPU(s) per replica "
                     "(target %.3g s)",
                     full.tpot_floor_s, tp, r->tpot_s);
            continue;
        }
        dr_perfmodel_serve_est_t e = full;
        uint32_t conc = serve_max_conc(r, g, tp, full.max_concurrency, &net, &e);
        if (conc == 0) {
            snprintf(why, sizeof why,
                     "no concurrency meets the latency targets with %u GPU(s) per replica", tp);
            continue;
        }
        double rps = e.requests_per_s;
        uint32_t replicas = r->rate_rps > 0 ? (uint32_t)ceil(r->rate_rps / rps - 1e-9) : 1;
        if (replicas < 1)
            replicas = 1;
        if (fixed_gpus)
            replicas = fixed_gpus / tp;
        uint64_t gpus = (uint64_t)replicas * tp;
        uint32_t maxg = type_max_gpus(r, g);
        if (gpus > DR_PLAN_MAX_GPUS || (maxg < DR_PLAN_MAX_GPUS && gpus > maxg && !fixed_gpus)) {
            snprintf(why, sizeof why, "needs %llu GPUs for the rate (budget %u)",
                     (unsigned long long)gpus, maxg);
            continue;
        }
        double cost = gpus * (isfinite(o->price_hr) ? o->price_hr : 1e6);
        if (push_point(o, &ccap, (uint32_t)gpus, e.latency_s, gpus * o->price_hr) != 0)
            return dr_err_set(err, DR_ENOMEM, "plan: out of memory");
        if (!found || cost < best_cost * (1 - 1e-9)) {
            found = true;
            best_cost = cost;
            o->serve = e;
            o->replicas = replicas;
            o->gpus = (uint32_t)gpus;
        }
    }
    if (!found) {
        o->fits = false;
        o->gpus = fixed_gpus;
        snprintf(o->note, sizeof o->note, "%s", why[0] ? why : "does not fit");
        o->wall_s = o->gpu_hours = o->cost_usd = o->energy_kwh = o->power_cost_usd = NAN;
        o->cost_usd_hr = o->energy_kwh_hr = NAN;
        return DR_OK;
    }
    o->fits = true;
    double capacity = o->replicas * o->serve.requests_per_s;
    o->meets = r->rate_rps <= 0 || capacity >= r->rate_rps * (1 - 1e-9);
    if (!o->meets)
        snprintf(o->note, sizeof o->note,
                 "%u replica(s) sustain %.3g requests/s, below the %.3g requested", o->replicas,
                 capacity, r->rate_rps);
    o->nodes = (o->gpus + o->node_gpus - 1) / o->node_gpus;
    o->verdict = o->replicas > 1 && o->gpus > o->node_gpus ? DR_VERDICT_MULTI_NODE
                                                           : verdict_of(o->gpus, o->node_gpus);
    o->cost_usd_hr = o->gpus * o->price_hr;
    double pue = r->pue > 0 ? r->pue : 1.0;
    o->energy_kwh_hr = o->gpus * o->tdp_w / 1000.0 * pue;
    o->wall_s = NAN;
    o->gpu_hours = o->gpus; /* per hour of service */
    o->cost_usd = o->cost_usd_hr;
    o->energy_kwh = o->energy_kwh_hr;
    o->power_cost_usd = r->power_usd_kwh > 0 ? o->energy_kwh * r->power_usd_kwh : NAN;
    return DR_OK;
}

/* ---- batch arrays ---- */

/* Relative speed of g for a task measured on ref: effective matmul rate
 * (peak x measured matmul efficiency) or HBM bandwidth. */
static double array_speed(const dr_plan_req_t *r, const dr_gpu_spec_t *g)
{
    if (r->memory_bound)
        return isfinite(g->hbm_tbs) ? g->hbm_tbs : NAN;
    double p = dr_perfmodel_peak_tflops(g, r->task_precision, NULL);
    return p * dr_perfmodel_matmul_eff(g, r->task_precision);
}

static int plan_array_type(const dr_plan_req_t *r, const dr_gpu_spec_t *g, const dr_gpu_spec_t *ref,
                           uint32_t fixed, dr_plan_option_t *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->gpu, sizeof o->gpu, "%s", g->name);
    dr_perfmodel_net_t net; /* tasks do not talk: only the node size is read */
    net_for(r, g, &net);
    o->node_gpus = node_size(r, g, net.node_gpus);
    o->price_hr = price_of(r, g);
    o->tdp_w = g->tdp_w;
    o->wall_s = o->gpu_hours = o->cost_usd = o->energy_kwh = o->power_cost_usd = NAN;
    double sg = array_speed(r, g), sr = array_speed(r, ref);
    if (!isfinite(sg) || !isfinite(sr) || sg <= 0 || sr <= 0) {
        snprintf(o->note, sizeof o->note, "no known %s for %s to scale the task time",
                 r->memory_bound ? "memory bandwidth" : "tensor rate",
                 isfinite(sg) && sg > 0 ? ref->name : g->name);
        return DR_OK;
    }
    if (r->task_mem_gb > 0 && g->mem_gb < r->task_mem_gb) {
        snprintf(o->note, sizeof o->note, "a task needs %.1f GB, %s has %.0f GB", r->task_mem_gb,
                 g->name, g->mem_gb);
        return DR_OK;
    }
    o->task_s = r->task_gpu_s * sr / sg;
    double tasks = r->tasks;
    uint32_t maxg = type_max_gpus(r, g);
    double gpus;
    if (fixed) {
        gpus = fixed;
    } else if (r->deadline_s > 0 && o->task_s <= r->deadline_s) {
        double per_gpu = floor(r->deadline_s / o->task_s);
        gpus = ceil(tasks / per_gpu);
    } else {
        gpus = tasks; /* all at once: the same GPU-hours, the shortest wall time */
    }
    if (gpus > maxg)
        gpus = maxg;
    if (gpus > tasks)
        gpus = tasks;
    if (gpus < 1)
        gpus = 1;
    o->gpus = (uint32_t)gpus;
    o->waves = (uint32_t)ceil(tasks / gpus);
    o->wall_s = o->waves * o->task_s;
    o->fits = true;
    o->meets = r->deadline_s <= 0 || o->wall_s <= r->deadline_s;
    o->nodes = (o->gpus + o->node_gpus - 1) / o->node_gpus;
    o->verdict = verdict_of(o->gpus, o->node_gpus);
    account(r, o, g, tasks * o->task_s);
    if (!o->meets) {
        char w[32], d[32];
        human_s(o->wall_s, w, sizeof w);
        human_s(r->deadline_s, d, sizeof d);
        snprintf(o->note, sizeof o->note, "misses the deadline: %s with %u GPUs (deadline %s)", w,
                 o->gpus, d);
    }
    size_t ccap = 0;
    for (uint32_t k = 1; k <= maxg && k <= tasks; k *= 2) {
        double waves = ceil(tasks / k), wall = waves * o->task_s;
        if (push_point(o, &ccap, k, wall, k * wall / 3600 * o->price_hr) != 0)
            return DR_ENOMEM;
        if (k > (UINT32_MAX >> 1))
            break;
    }
    return DR_OK;
}

/* ---- ranking and explanation ---- */

static int rank_cmp(const void *pa, const void *pb)
{
    const dr_plan_option_t *a = pa, *b = pb;
    if (a->exact != b->exact)
        return a->exact ? -1 : 1;
    int ca = a->fits ? (a->meets ? 0 : 1) : 2, cb = b->fits ? (b->meets ? 0 : 1) : 2;
    if (ca != cb)
        return ca - cb;
    double ka = 0, kb = 0;
    if (ca == 0) { /* meets: cheapest first, then fastest */
        ka = cost_key(a);
        kb = cost_key(b);
        if (ka == kb) {
            ka = isfinite(a->wall_s) ? a->wall_s : 0;
            kb = isfinite(b->wall_s) ? b->wall_s : 0;
        }
    } else if (ca == 1) { /* misses: closest to the target first */
        ka = isfinite(a->wall_s) ? a->wall_s : -a->replicas * a->serve.requests_per_s;
        kb = isfinite(b->wall_s) ? b->wall_s : -b->replicas * b->serve.requests_per_s;
    }
    if (ka != kb)
        return ka < kb ? -1 : 1;
    return strcmp(a->gpu, b->gpu);
}

static void explain_train(const dr_plan_req_t *r, dr_plan_result_t *res)
{
    char *x = res->explanation;
    size_t cap = sizeof res->explanation;
    const dr_perfmodel_arch_t *a = &res->arch;
    x[0] = '\0';
    if (dr_perfmodel_arch_moe(a))
        cat_f(x, cap,
              "Training %s (%.3g parameters, %.3g active: %u experts, %u per token%s) on %.3g "
              "tokens takes 6*N*D = %.2e FLOPs with N the active parameters.",
              a->name, a->params, dr_perfmodel_arch_active(a), a->experts, a->top_k,
              a->shared_experts ? " + shared" : "", r->train.tokens, res->train_flops);
    else
        cat_f(x, cap, "Training %s (%.3g parameters) on %.3g tokens takes 6*N*D = %.2e FLOPs.",
              a->name, a->params, r->train.tokens, res->train_flops);
    const dr_plan_option_t *top = NULL, *fastest = NULL;
    if (res->n && res->opts[0].exact && !res->opts[0].fits)
        cat_f(x, cap, " The requested %u x %s cannot run it: %s.", res->opts[0].gpus,
              res->opts[0].gpu, res->opts[0].note);
    for (size_t i = 0; i < res->n; i++) {
        const dr_plan_option_t *o = &res->opts[i];
        if (!o->fits)
            continue;
        if (!top && (o->meets || !res->any_meets))
            top = o;
        if (!fastest || o->wall_s < fastest->wall_s)
            fastest = o;
    }
    if (!top) {
        cat_f(x, cap, " No GPU type can run it.");
        return;
    }
    const dr_perfmodel_train_est_t *e = &top->train;
    char w[32], c[48];
    human_s(top->wall_s, w, sizeof w);
    human_usd(top->cost_usd, c, sizeof c);
    if (top->exact && !res->any_meets && r->deadline_s > 0)
        cat_f(x, cap, " The requested configuration misses the deadline.");
    char xp[96] = "";
    if (e->layout.cp > 1)
        snprintf(xp, sizeof xp, " x context parallel %u", e->layout.cp);
    if (e->layout.ep > 1)
        snprintf(xp + strlen(xp), sizeof xp - strlen(xp), " (experts spread over %u of them)",
                 e->layout.ep);
    cat_f(x, cap,
          " %s: %u x %s (%s, %u node%s), tensor parallel %u x pipeline %u x data parallel %u%s, "
          "ZeRO-%d, %s activation recomputation, micro-batch %u; %.1f of %.0f GB per GPU. It "
          "runs at about "
          "%.0f%% MFU (%.0f TFLOP/s per GPU in %s) and finishes in %s: %.3g GPU-hours, %s",
          top->exact        ? "Requested"
          : !res->any_meets ? "Fastest possible"
          : r->deadline_s <= 0 && !r->max_gpus
              ? "Recommended (the fastest option within 10% of the cheapest's cost)"
              : "Cheapest choice",
          top->gpus, top->gpu, dr_plan_verdict_name(top->verdict), top->nodes,
          top->nodes == 1 ? "" : "s", e->layout.tp, e->layout.pp, e->layout.dp, xp,
          e->layout.zero_stage,
          e->layout.recompute == DR_RECOMPUTE_NONE
              ? "no"
              : dr_perfmodel_recompute_name(e->layout.recompute),
          e->layout.micro_batch, e->mem.total / 1073741824.0, e->mem.capacity / 1073741824.0,
          e->mfu * 100, e->achieved_tflops_per_gpu, dr_precision_name(e->precision), w,
          top->gpu_hours, c);
    if (isfinite(top->price_hr))
        cat_f(x, cap, " at $%.2f per GPU-hour", top->price_hr);
    if (isfinite(top->energy_kwh))
        cat_f(x, cap, ", %.3g MWh of GPU energy", top->energy_kwh / 1000);
    cat_f(x, cap, ".");
    double step_other = e->tp_comm_s + e->pp_comm_s + e->bubble_s + e->dp_comm_s + e->optim_s +
                        e->ep_comm_s + e->cp_comm_s;
    if (e->step_s > 0 && step_other / e->step_s > 0.05) {
        cat_f(x, cap,
              " Of each %.2f s step, %.0f%% is communication, pipeline bubble and optimizer "
              "(TP %.2f s, pipeline %.2f s, DP %.2f s",
              e->step_s, step_other / e->step_s * 100, e->tp_comm_s, e->bubble_s + e->pp_comm_s,
              e->dp_comm_s);
        if (e->ep_comm_s > 0)
            cat_f(x, cap, ", expert all-to-all %.2f s", e->ep_comm_s);
        if (e->cp_comm_s > 0)
            cat_f(x, cap, ", context ring %.2f s", e->cp_comm_s);
        cat_f(x, cap, ").");
    }
    if (top->gpus > 1 && !top->exact) {
        double state = 16 * a->params / 1073741824.0, one = NAN;
        for (size_t i = 0; i < top->ncurve; i++)
            if (top->curve[i].gpus == 1)
                one = top->curve[i].wall_s;
        if (state > e->mem.capacity / 1073741824.0) {
            cat_f(x, cap,
                  " It needs more than one GPU: mixed-precision Adam alone keeps %.0f GB of "
                  "model state (16 bytes per parameter).",
                  state);
        } else if (isfinite(one)) {
            char w1[32];
            human_s(one, w1, sizeof w1);
            cat_f(x, cap, " One GPU would take %s.", w1);
        }
    }
    if (fastest && fastest != top && fastest->wall_s < top->wall_s * 0.9) {
        char fw[32], fc[48];
        human_s(fastest->wall_s, fw, sizeof fw);
        human_usd(fastest->cost_usd, fc, sizeof fc);
        cat_f(x, cap, " The fastest option, %u x %s, takes %s for %s.", fastest->gpus, fastest->gpu,
              fw, fc);
    }
}

/* Single GPU fits? Use it: when the top choice needs several GPUs only for
 * the optimizer state, say whether ZeRO-Offload would fit one of them (the
 * usual way a 7B model is fine-tuned on one 80 GB GPU). */
static void offload_hint(const dr_plan_req_t *r, const dr_catalog_t *cat, dr_plan_result_t *res)
{
    /* the GPUs the user asked for, when they cannot hold it; else one GPU
     * of the top choice's type when the plan needs several */
    const dr_plan_option_t *top = NULL, *asked = NULL;
    for (size_t i = 0; i < res->n; i++) {
        if (res->opts[i].exact && !res->opts[i].fits && strstr(res->opts[i].note, "GB per GPU"))
            asked = &res->opts[i];
        if (!top && res->opts[i].fits && (res->opts[i].meets || !res->any_meets))
            top = &res->opts[i];
    }
    if (r->train.cpu_offload)
        return;
    const char *type = NULL;
    uint32_t n = 1;
    if (asked) {
        type = asked->gpu;
        n = asked->gpus ? asked->gpus : 1;
    } else if (top && top->gpus > 1 && !r->gpus) {
        type = top->gpu;
    } else {
        return;
    }
    const dr_gpu_spec_t *g = dr_catalog_find(cat, type);
    if (!g)
        return;
    dr_perfmodel_net_t net;
    net_for(r, g, &net);
    dr_perfmodel_train_t job = r->train;
    job.cpu_offload = true;
    if (top && job.global_batch <= 0)
        job.global_batch = top->train.global_batch; /* the batch the plan chose */
    dr_perfmodel_train_est_t e;
    dr_err_t err;
    if (dr_perfmodel_train_best(&job, g, n, &net, &e, &err) != 0 || !e.fits)
        return;
    span_t sp;
    temper(r, g, &e, &sp, typical_run(r)); /* a run of the table's kind */
    uint32_t node = node_size(r, g, net.node_gpus ? net.node_gpus : 1); /* the site's, if any */
    double wall = e.wall_s + dr_plan_startup_s(r->train.arch.params, n, (n + node - 1) / node);
    if (r->deadline_s > 0 && wall > r->deadline_s)
        return;
    res->offload_gpus = n;
    snprintf(res->offload_gpu, sizeof res->offload_gpu, "%s", g->name);
    res->offload_wall_s = wall;
    char w[32];
    human_s(wall, w, sizeof w);
    cat_f(res->explanation, sizeof res->explanation,
          " With --offload (optimizer states in host memory, ZeRO-Offload) it fits %s%u x %s "
          "and takes %s.",
          asked ? "the requested " : "", n, g->name, w);
    /* and the fewest GPUs of the requested type that hold it as it is */
    if (asked)
        for (size_t i = 0; i < res->n; i++) {
            const dr_plan_option_t *o = &res->opts[i];
            if (o->exact || !o->fits || strcmp(o->gpu, asked->gpu) != 0)
                continue;
            const dr_plan_point_t *best = NULL;
            for (size_t k = 0; k < o->ncurve; k++)
                if (isfinite(o->curve[k].wall_s) && (!best || o->curve[k].gpus < best->gpus))
                    best = &o->curve[k];
            if (best) {
                human_s(best->wall_s, w, sizeof w);
                cat_f(res->explanation, sizeof res->explanation,
                      " Without it, the fewest %s that run it are %u: %s.", asked->gpu, best->gpus,
                      w);
            }
            break;
        }
}

/* The decision framework, applied to the top choice and printed before the
 * table: "Single GPU fits? Use it. Fits one node? Maybe. Needs more than one
 * node? Cluster." */
static void verdict_text(dr_plan_result_t *res)
{
    const dr_plan_option_t *top = NULL;
    for (size_t i = 0; i < res->n && !top; i++)
        if (res->opts[i].fits && (res->opts[i].meets || !res->any_meets))
            top = &res->opts[i];
    char *x = res->verdict_text;
    size_t cap = sizeof res->verdict_text;
    x[0] = '\0';
    if (!top) {
        cat_f(x, cap, "Verdict: nothing considered can run it.");
        return;
    }
    char w[32] = "";
    if (isfinite(top->wall_s))
        human_s(top->wall_s, w, sizeof w);
    switch (top->verdict) {
    case DR_VERDICT_SINGLE_GPU:
        cat_f(x, cap, "Verdict: ONE GPU - a single GPU fits, use it (1 x %s", top->gpu);
        break;
    case DR_VERDICT_SINGLE_NODE:
        cat_f(x, cap, "Verdict: ONE NODE - fits one node, maybe no cluster needed (%u x %s",
              top->gpus, top->gpu);
        break;
    default:
        cat_f(x, cap, "Verdict: CLUSTER - needs more than one node (%u x %s in %u nodes", top->gpus,
              top->gpu, top->nodes);
        break;
    }
    cat_f(x, cap, "%s%s).", w[0] ? ", " : "", w);
    if (top->gpus > 1 && res->offload_gpus == 1) {
        char ow[32];
        human_s(res->offload_wall_s, ow, sizeof ow);
        cat_f(x, cap, " One GPU can do it with --offload (1 x %s, %s).", res->offload_gpu, ow);
    }
    cat_f(x, cap,
          " Rule: single GPU fits? Use it. Fits one node? Maybe. Needs more than one "
          "node? Cluster.");
}

static void explain_serve(const dr_plan_req_t *r, dr_plan_result_t *res)
{
    char *x = res->explanation;
    size_t cap = sizeof res->explanation;
    x[0] = '\0';
    cat_f(x, cap, "Serving %s at %.3g requests/s (%.0f prompt + %.0f output tokens each).",
          res->arch.name, r->rate_rps, r->serve.prompt_tokens, r->serve.output_tokens);
    const dr_plan_option_t *top = NULL;
    for (size_t i = 0; i < res->n && !top; i++)
        if (res->opts[i].fits)
            top = &res->opts[i];
    if (!top) {
        cat_f(x, cap, " No GPU type can serve it.");
        return;
    }
    const dr_perfmodel_serve_est_t *e = &top->serve;
    char c[48];
    human_usd(top->cost_usd_hr, c, sizeof c);
    cat_f(x, cap,
          " %s: %u replica%s of %u x %s (%u GPUs, %s), each at %u requests in flight sustaining "
          "%.3g requests/s (%.0f output tokens/s), time to first token %.3g s, %.3g s per output "
          "token, %.3g s per request; %s per hour",
          top->exact ? "Requested" : "Cheapest choice", top->replicas,
          top->replicas == 1 ? "" : "s", e->tp, top->gpu, top->gpus,
          dr_plan_verdict_name(top->verdict), e->concurrency, e->requests_per_s, e->tokens_per_s,
          e->ttft_s, e->tpot_s, e->latency_s, c);
    if (isfinite(top->cost_usd_hr) && e->tokens_per_s > 0)
        cat_f(x, cap, " ($%.3g per million output tokens at full load)",
              top->cost_usd_hr / (top->replicas * e->tokens_per_s * 3600) * 1e6);
    cat_f(x, cap,
          ". Physical floors on this GPU: one prompt's forward pass takes %.3g s and one decode "
          "step %.3g s.",
          e->ttft_floor_s, e->tpot_floor_s);
}

static void explain_array(const dr_plan_req_t *r, dr_plan_result_t *res)
{
    char *x = res->explanation;
    size_t cap = sizeof res->explanation;
    x[0] = '\0';
    cat_f(x, cap, "%.0f tasks of %.3g GPU-seconds each on %s (%s-bound).", r->tasks, r->task_gpu_s,
          r->ref_gpu, r->memory_bound ? "memory" : "compute");
    const dr_plan_option_t *top = NULL;
    for (size_t i = 0; i < res->n && !top; i++)
        if (res->opts[i].fits)
            top = &res->opts[i];
    if (!top) {
        cat_f(x, cap, " No GPU type can run the tasks.");
        return;
    }
    char w[32], c[48], t[32];
    human_s(top->wall_s, w, sizeof w);
    human_s(top->task_s, t, sizeof t);
    human_usd(top->cost_usd, c, sizeof c);
    cat_f(x, cap,
          " %s: %u x %s (%s): %s per task, %u wave%s, done in %s; %.3g GPU-hours rented, %s.",
          top->exact ? "Requested" : (top->meets ? "Cheapest choice" : "Fastest possible"),
          top->gpus, top->gpu, dr_plan_verdict_name(top->verdict), t, top->waves,
          top->waves == 1 ? "" : "s", w, top->gpu_hours, c);
}

/* ---- bad input ---- */

static int check_train(const dr_plan_req_t *r, dr_err_t *err)
{
    if (!isfinite(r->train.tokens) || r->train.tokens <= 0)
        return dr_err_set(err, DR_EINVAL,
                          "tokens: %g - a training run needs a positive number of tokens "
                          "(e.g. --tokens 300B)",
                          r->train.tokens);
    if (r->train.global_batch < 0 || !isfinite(r->train.global_batch))
        return dr_err_set(err, DR_EINVAL, "global batch: %g must be positive",
                          r->train.global_batch);
    /* pinned layout parts: name the real cause, not the search's failure */
    const dr_perfmodel_arch_t *a = &r->train.arch;
    uint32_t seq = r->train.seq_len ? r->train.seq_len : a->seq_len;
    if (r->train.tp && a->heads && a->heads % r->train.tp)
        return dr_err_set(err, DR_EINVAL,
                          "--tp %u: must divide the model's %u attention heads (e.g. 1, 2, 4, 8)",
                          r->train.tp, a->heads);
    if (r->train.tp && r->train.tp > DR_PLAN_MAX_GPUS)
        return dr_err_set(err, DR_EINVAL, "--tp %u: more than the %u GPUs considered", r->train.tp,
                          DR_PLAN_MAX_GPUS);
    if (r->train.cp && seq && seq % r->train.cp)
        return dr_err_set(err, DR_EINVAL,
                          "--cp %u: must divide the %u-token sequence (context parallelism "
                          "splits each sequence)",
                          r->train.cp, seq);
    if (r->train.cp > DR_PLAN_MAX_GPUS)
        return dr_err_set(err, DR_EINVAL, "--cp %u: more than the %u GPUs considered", r->train.cp,
                          DR_PLAN_MAX_GPUS);
    if (r->train.pp && a->layers && r->train.pp > a->layers)
        return dr_err_set(err, DR_EINVAL, "--pp %u: more stages than the model's %u layers",
                          r->train.pp, a->layers);
    if (r->train.seq_len > DR_PLAN_MAX_SEQ)
        return dr_err_set(err, DR_EINVAL,
                          "--seq %u: longer than the %u tokens the planner models (published "
                          "training contexts reach about 1M; %s's own is %u)",
                          r->train.seq_len, DR_PLAN_MAX_SEQ, a->name, a->seq_len);
    if (seq && r->train.tokens < seq && r->train.seq_len)
        return dr_err_set(err, DR_EINVAL,
                          "--seq %u: longer than the whole training set of %.0f tokens", seq,
                          r->train.tokens);
    double batch =
        r->train.global_batch > 0 ? r->train.global_batch : dr_perfmodel_default_batch(a, seq);
    if (r->train.micro_batch && r->train.micro_batch > batch)
        return dr_err_set(err, DR_EINVAL,
                          "--micro-batch %u: more sequences than the global batch of %.0f",
                          r->train.micro_batch, batch);
    return DR_OK;
}

static int check_common(const dr_plan_req_t *r, dr_err_t *err)
{
    if (!isfinite(r->deadline_s) || r->deadline_s < 0)
        return dr_err_set(err, DR_EINVAL, "deadline: must be a positive duration");
    if (r->gpus > DR_PLAN_MAX_GPUS)
        return dr_err_set(err, DR_EINVAL,
                          "--gpus %u: more than the %u GPUs of the largest cluster the planner "
                          "considers",
                          r->gpus, DR_PLAN_MAX_GPUS);
    if (r->max_gpus && r->gpus > r->max_gpus)
        return dr_err_set(err, DR_EINVAL, "--gpus %u contradicts the GPU budget of %u", r->gpus,
                          r->max_gpus);
    if (!isfinite(r->power_usd_kwh) || r->power_usd_kwh < 0 || !isfinite(r->pue) || r->pue < 0)
        return dr_err_set(err, DR_EINVAL, "power price and PUE must be non-negative");
    if (r->net_set && (!isfinite(r->net_gbit) || r->net_gbit <= 0))
        return dr_err_set(err, DR_EINVAL, "network: bandwidth must be positive");
    return DR_OK;
}

/* Nothing fits anywhere: say how big the job is and what stopped each type. */
static int no_fit_error(const dr_plan_req_t *r, const dr_plan_result_t *res, dr_err_t *err)
{
    const dr_perfmodel_arch_t *a = &res->arch;
    const char *reason = res->n ? res->opts[0].note : "";
    for (size_t i = 0; i < res->n; i++) /* the largest-memory GPU's reason is the most telling */
        if (strstr(res->opts[i].gpu, "MI35") || strstr(res->opts[i].gpu, "B200"))
            reason = res->opts[i].note;
    uint32_t maxg = r->max_gpus ? r->max_gpus : DR_PLAN_MAX_GPUS;
    if (r->ntypes > 0 && r->kind != DR_PLAN_ARRAY) {
        /* the user chose the types: what stops each of them is the answer */
        char why[900] = "";
        for (size_t i = 0; i < res->n && i < 4; i++)
            cat_f(why, sizeof why, "%s%s: %.200s", i ? "; " : "", res->opts[i].gpu,
                  res->opts[i].note);
        return dr_err_set(err, DR_EINVAL, "--types: none of the GPU types given can %s %s: %s",
                          r->kind == DR_PLAN_TRAIN ? "train" : "serve", a->name, why);
    }
    if (r->kind == DR_PLAN_TRAIN) {
        double state = 16 * a->params, biggest = 0;
        const char *bg = "";
        for (size_t i = 0; i < res->n; i++) {
            double m = res->opts[i].train.mem.capacity;
            if (m > biggest) {
                biggest = m;
                bg = res->opts[i].gpu;
            }
        }
        if (biggest > 0 && state / maxg > biggest * 0.9)
            return dr_err_set(err, DR_EINVAL,
                              "%s (%.3g parameters) is larger than %s: mixed-precision Adam "
                              "needs %.3g TB of model state (16 bytes per parameter); even "
                              "sharded over %u GPUs that is %.0f GB per GPU before activations, "
                              "more than the largest GPU in the catalog (%s, %.0f GB)",
                              a->name, a->params,
                              r->max_gpus ? "the GPU budget allows"
                                          : "any cluster the planner considers",
                              state / 1e12, maxg, state / maxg / 1e9, bg, biggest / 1073741824.0);
        return dr_err_set(err, DR_EINVAL,
                          "%s (%.3g parameters) does not fit %s (up to %u GPUs of one catalog "
                          "type): %.3g TB of model state at 16 bytes per parameter, plus "
                          "activations; the closest: %.200s",
                          a->name, a->params,
                          r->max_gpus ? "within the GPU budget"
                                      : "any cluster the planner considers",
                          maxg, state / 1e12, reason);
    }
    return dr_err_set(err, DR_EINVAL,
                      "%s (%.3g parameters) cannot be served by any GPU type in the catalog: "
                      "%.300s",
                      a->name, a->params, reason);
}

/* A latency target no GPU can meet: report the best floor. */
static int serve_floor_error(const dr_plan_req_t *r, const dr_gpu_spec_t *const *types, size_t nt,
                             dr_err_t *err)
{
    double best_ttft = INFINITY, best_tpot = INFINITY;
    const char *gt = "", *gp = "";
    uint32_t tt = 0, tpp = 0;
    for (size_t i = 0; i < nt; i++) {
        dr_perfmodel_net_t net;
        net_for(r, types[i], &net);
        for (uint32_t tp = 1; tp <= net.node_gpus && tp <= 64; tp *= 2) {
            if (r->serve.arch.heads % tp)
                continue;
            dr_perfmodel_serve_est_t e;
            if (dr_perfmodel_serve_eval(&r->serve, types[i], tp, 1, &net, &e, NULL) != 0 || !e.fits)
                continue;
            if (e.ttft_floor_s < best_ttft) {
                best_ttft = e.ttft_floor_s;
                gt = types[i]->name;
                tt = tp;
            }
            if (e.tpot_floor_s < best_tpot) {
                best_tpot = e.tpot_floor_s;
                gp = types[i]->name;
                tpp = tp;
            }
        }
    }
    if (!isfinite(best_ttft))
        return DR_OK;
    if (r->ttft_s > 0 && r->ttft_s < best_ttft)
        return dr_err_set(err, DR_EINVAL,
                          "--ttft %.3g s is below the physical floor: one forward pass over a "
                          "%.0f-token prompt of %s takes at least %.3g s even on %u x %s (the "
                          "fastest option in the catalog)",
                          r->ttft_s, r->serve.prompt_tokens, r->serve.arch.name, best_ttft, tt, gt);
    if (r->tpot_s > 0 && r->tpot_s < best_tpot)
        return dr_err_set(err, DR_EINVAL,
                          "--tpot %.3g s is below the physical floor: each output token of %s "
                          "reads all the weights, at least %.3g s even on %u x %s",
                          r->tpot_s, r->serve.arch.name, best_tpot, tpp, gp);
    /* the first output token comes from the prefill */
    double floor_lat = best_ttft + (r->serve.output_tokens - 1) * best_tpot;
    if (r->latency_s > 0 && r->latency_s < floor_lat)
        return dr_err_set(err, DR_EINVAL,
                          "--latency %.3g s is below the physical floor: the prompt's forward "
                          "pass (%.3g s) plus %.0f decode steps (%.3g s each) take at least "
                          "%.3g s on the fastest GPU in the catalog",
                          r->latency_s, best_ttft, r->serve.output_tokens - 1, best_tpot,
                          floor_lat);
    return DR_OK;
}

/* With neither a deadline nor a budget, cost alone would recommend a type
 * that is barely cheaper and many times slower (64 L40S for 3.6 years
 * over 64 B200s for 6 months at +6%): as within one type (the knee), the
 * fastest option costing at most 10% more than the cheapest goes first. */
static void knee_first(dr_plan_result_t *res)
{
    size_t first = 0;
    while (first < res->n && res->opts[first].exact)
        first++;
    if (first >= res->n || !res->opts[first].fits || !res->opts[first].meets)
        return;
    double c0 = cost_key(&res->opts[first]);
    size_t best = first;
    for (size_t i = first + 1; i < res->n; i++) {
        const dr_plan_option_t *o = &res->opts[i];
        if (!o->fits || !o->meets || o->exact)
            break;
        if (cost_key(o) <= 1.10 * c0 && o->wall_s < res->opts[best].wall_s)
            best = i;
    }
    if (best == first)
        return;
    dr_plan_option_t b = res->opts[best];
    memmove(&res->opts[first + 1], &res->opts[first], (best - first) * sizeof *res->opts);
    res->opts[first] = b;
}

/* ---- the batch ---- */

/* DeepSeek LLM (Bi et al. 2024, arXiv 2401.02954, sec. 3.1, eq. 1): the
 * loss-optimal global batch for a compute budget C (FLOPs), fitted over
 * 1e17-3e20 FLOPs and used by them for their 7B and 67B runs (9.4M and
 * 18.9M tokens; the formula gives 9.2M and 19M).  Beyond their range it is
 * an extrapolation, which is why the plan says what a smaller pinned batch
 * would cost. */
#define BOPT_K   0.2920
#define BOPT_EXP 0.3271

double dr_plan_batch_opt_tokens(double flops)
{
    return flops > 0 ? BOPT_K * pow(flops, BOPT_EXP) : 0;
}

/* The batches a plan may choose from when the user pinned none: from the
 * smaller to the larger of the model's default (its published batch, or
 * the GPT-3 paper's size rule) and B_opt(C) - convergence is shown for both
 * - doubling; never so large that the run takes fewer than
 * DR_PLAN_MIN_STEPS optimizer steps. */
static void batch_candidates(const dr_plan_req_t *r, dr_plan_result_t *res, batch_set_t *bs)
{
    const dr_perfmodel_arch_t *a = &r->train.arch;
    uint32_t seq = r->train.seq_len ? r->train.seq_len : a->seq_len ? a->seq_len : 2048;
    double def = dr_perfmodel_default_batch(a, seq);
    double opt =
        fmax(1, round(dr_plan_batch_opt_tokens(6 * dr_perfmodel_arch_active(a) * r->train.tokens) /
                      seq));
    double most =
        fmax(fmax(1, r->train.micro_batch), floor(r->train.tokens / seq / DR_PLAN_MIN_STEPS));
    double lo = fmin(def, opt), hi = fmin(fmax(def, opt), most);
    lo = fmin(lo, hi);
    res->default_batch = def;
    res->opt_batch = opt;
    if (def > most)
        res->planned_batch = most; /* a short run: the batch shrinks for the steps */
    bs->n = 0;
    for (double b = lo; b < hi * (1 - 1e-9) && bs->n + 1 < DR_PLAN_BATCHES; b *= 2)
        bs->b[bs->n++] = round(b);
    bs->b[bs->n++] = round(hi);
}

/* ---- the whole run: range, batch, failures, precision, defaults ---- */

static const dr_plan_option_t *top_of(const dr_plan_result_t *res)
{
    for (size_t i = 0; i < res->n; i++)
        if (res->opts[i].fits && (res->opts[i].meets || !res->any_meets))
            return &res->opts[i];
    return NULL;
}

/* The top choice re-planned on its own GPU type and count with one thing
 * changed (the batch or the precision): its wall time, NAN if it does not
 * fit. */
static double replan_wall(const dr_plan_req_t *r, const dr_catalog_t *cat,
                          const dr_plan_option_t *top, double batch, dr_precision_t prec)
{
    const dr_gpu_spec_t *g = dr_catalog_find(cat, top->gpu);
    if (!g)
        return NAN;
    dr_plan_req_t q = *r;
    q.train.global_batch = batch;
    q.train.precision = prec;
    dr_perfmodel_net_t net;
    net_for(r, g, &net);
    dr_perfmodel_train_est_t e;
    dr_err_t err;
    if (dr_perfmodel_train_best(&q.train, g, top->gpus, &net, &e, &err) != 0 || !e.fits)
        return NAN;
    span_t sp;
    temper(&q, g, &e, &sp, typical_run(r)); /* the discount stays as for the top */
    return e.wall_s + top->startup_s;
}

static void explain_run(const dr_plan_req_t *r, const dr_catalog_t *cat, dr_plan_result_t *res)
{
    const dr_plan_option_t *top = top_of(res);
    char *x = res->explanation;
    size_t cap = sizeof res->explanation;
    res->alt_wall_s = NAN;
    if (!top)
        return;
    const dr_perfmodel_train_est_t *e = &top->train;
    char a[32], b[32], w[32];
    /* the range */
    if (top->wall_fast_s > 0 && top->wall_slow_s > 0) {
        human_s(top->wall_fast_s, a, sizeof a);
        human_s(top->wall_slow_s, b, sizeof b);
        if (top->range_empirical)
            cat_f(x, cap,
                  " Range: %s to %s - 80%% of %d published runs planned from their size, "
                  "tokens, GPU type and count took %.2f to %.2f times the plan's estimate, "
                  "which is what such runs typically achieve, at most the best MFU published "
                  "for this GPU generation at %u node%s (%.0f%%)",
                  a, b, PLAN_RANGE_RUNS, PLAN_RANGE_FAST, PLAN_RANGE_SLOW, top->nodes,
                  top->nodes == 1 ? "" : "s", top->mfu_ceiling * 100);
        else
            cat_f(x, cap,
                  " Range: %s to %s - the fast end at the model's figure for this layout, at "
                  "most the best MFU published for this GPU generation at %u node%s (%.0f%%)",
                  a, b, top->nodes, top->nodes == 1 ? "" : "s", top->mfu_ceiling * 100);
        if (top->capped)
            cat_f(x, cap, ", which caps what the layout search rated higher");
        cat_f(x, cap, ".");
    }
    /* the batch */
    if (r->train.global_batch <= 0 && res->default_batch > 0) {
        double seq = r->train.seq_len ? r->train.seq_len : res->arch.seq_len;
        double bt = e->global_batch * seq;
        cat_f(x, cap,
              " Batch: %.0f sequences (%.3g%s tokens) per step, chosen between the model's "
              "default of %.0f (%s) and DeepSeek LLM's loss-optimal B_opt(C) = %.0f for %.2e FLOPs",
              e->global_batch, bt >= 1e6 ? bt / 1e6 : bt / 1e3, bt >= 1e6 ? "M" : "k",
              res->default_batch,
              res->arch.batch_tokens > 0 ? "its published batch" : "the GPT-3 paper's rule",
              res->opt_batch, res->train_flops);
        if (res->planned_batch > 0)
            cat_f(x, cap, ", at most %.0f so that the run takes %d steps", res->planned_batch,
                  DR_PLAN_MIN_STEPS);
        /* what the smaller end would cost, when the plan chose more */
        double lo = fmin(res->default_batch, res->opt_batch);
        if (res->planned_batch > 0)
            lo = fmin(lo, res->planned_batch);
        if (lo < e->global_batch * 0.95) {
            res->alt_wall_s = replan_wall(r, cat, top, lo, r->train.precision);
            if (isfinite(res->alt_wall_s)) {
                human_s(res->alt_wall_s, a, sizeof a);
                cat_f(x, cap, "; pinned at %.0f (--batch %.0f) it would take %s (%+.0f%%)", lo, lo,
                      a, (res->alt_wall_s / top->wall_s - 1) * 100);
            }
        }
        cat_f(x, cap, ".");
    }
    /* failures and checkpoints */
    const dr_res_t *q = &e->res;
    if (q->job_mtbf_s > 0 && isfinite(q->interval_s)) {
        char every[32], ck[32];
        human_s(q->job_mtbf_s, a, sizeof a);
        human_s(q->interval_s, ck, sizeof ck);
        double min = ceil(q->interval_s / 60);
        if (min < 120)
            snprintf(every, sizeof every, "%.0fm", min);
        else
            snprintf(every, sizeof every, "%.0fh", ceil(q->interval_s / 3600));
        cat_f(x, cap,
              " Failures and checkpoints: one interruption every %s is expected on %u GPUs (Llama "
              "3: one per %.0f GPU-hours); a checkpoint is %.3g GB (14 bytes per parameter), "
              "written in %.3g s at %.0f GB/s; ",
              a, top->gpus, r->train.gpu_mtbf_h > 0 ? r->train.gpu_mtbf_h : DR_RES_GPU_MTBF_H,
              q->ckpt_bytes / 1e9, q->write_s, q->storage_gbs);
        if (q->interval_s < top->wall_s)
            cat_f(x, cap, "the Young-Daly interval is %s: submit with --checkpoint-every %s.", ck,
                  every);
        else
            cat_f(x, cap,
                  "the Young-Daly interval (%s) is longer than the run: no checkpoint during it "
                  "pays for itself.",
                  ck);
        cat_f(x, cap,
              " Effective training time %.1f%% (writing checkpoints %.1f%%, restarts and "
              "recomputed work %.1f%%), already in the wall time.",
              q->effective * 100, q->ckpt_frac / (1 + q->ckpt_frac + q->fail_frac) * 100,
              q->fail_frac / (1 + q->ckpt_frac + q->fail_frac) * 100);
    }
    /* FP8 */
    const dr_gpu_spec_t *g = dr_catalog_find(cat, top->gpu);
    dr_precision_t used;
    if (g && e->precision == DR_PREC_BF16 &&
        isfinite(dr_perfmodel_peak_tflops(g, DR_PREC_FP8, &used)) && used == DR_PREC_FP8) {
        double w8 = replan_wall(r, cat, top,
                                r->train.global_batch > 0 ? r->train.global_batch : e->global_batch,
                                DR_PREC_FP8);
        if (isfinite(w8)) {
            human_s(w8, w, sizeof w);
            cat_f(x, cap,
                  " In FP8 (--precision fp8; DeepSeek-V3 trained in FP8 on 2,048 H800s, Llama 3 "
                  "405B stayed in BF16 at 16K GPUs) it would take %s (%+.0f%%).",
                  w, (w8 / top->wall_s - 1) * 100);
        }
    }
}

/* The planner's default choices, stated in every training plan. */
static void assumptions(const dr_plan_req_t *r, const dr_catalog_t *cat, dr_plan_result_t *res)
{
    const dr_plan_option_t *top = top_of(res);
    char *x = res->assumptions;
    size_t cap = sizeof res->assumptions;
    x[0] = '\0';
    const dr_perfmodel_train_t *t = &r->train;
    cat_f(x, cap, "Assumed:");
    if (t->global_batch > 0)
        cat_f(x, cap, " batch %.0f sequences (given);", t->global_batch);
    else if (top)
        cat_f(x, cap, " batch %.0f sequences (the planner's choice, --batch to pin);",
              top->train.global_batch);
    cat_f(x, cap, " precision %s%s;",
          dr_precision_name(t->precision == DR_PREC_UNSET ? DR_PREC_BF16 : t->precision),
          t->precision == DR_PREC_BF16 || t->precision == DR_PREC_UNSET ? " (default, --precision)"
                                                                        : " (given)");
    cat_f(x, cap, " layout%s searched (TP x PP x DP, ZeRO stage, recomputation, micro-batch%s);",
          t->tp || t->pp || t->micro_batch ? " partly" : "",
          t->tp || t->pp || t->micro_batch ? ": the rest as given"
                                           : "; --tp --pp --zero --recompute");
    if (r->stack_record)
        cat_f(x, cap,
              " a record-class stack (given: the model's figure, at most the best "
              "published MFU);");
    else if (planner_chose(t))
        cat_f(x, cap,
              " a typical stack (%.2f of the best the model allows; --stack record for a tuned "
              "one);",
              PLAN_TYPICAL);
    else
        cat_f(x, cap, " the model's figure for the pinned layout, at most the best published MFU;");
    cat_f(x, cap, " %s, %s;", t->flash_attention ? "FlashAttention" : "explicit attention",
          t->tp_overlap ? "TP overlapped with GEMMs (Megatron-Core/TransformerEngine)"
                        : "TP not overlapped");
    size_t nsite = site_types(r);
    if (top && nsite) { /* the cluster's nodes: say which network the top choice was planned on */
        char w[400];
        net_words(r, dr_catalog_find(cat, top->gpu), top, w, sizeof w);
        cat_f(x, cap, " network: %s%s;", w,
              nsite > 1 ? "; each type on its own nodes (\"network\" in --json)" : "");
    } else if (r->net_set) {
        cat_f(x, cap, " network %s %.0f Gbit/s per GPU (given);",
              dr_perfmodel_netkind_name(r->net_kind), r->net_gbit);
    } else {
        cat_f(x, cap, " network: each GPU type's reference system (--net);");
    }
    if (t->storage_gbs > 0)
        cat_f(x, cap, " checkpoint storage %.0f GB/s (given);", t->storage_gbs);
    else
        cat_f(x, cap, " checkpoint storage %.0f GB/s per node up to %.0f GB/s (--storage-gbs);",
              DR_RES_NODE_GBS, DR_RES_MAX_GBS);
    cat_f(x, cap, " one interruption per %.0f GPU-hours (%s).",
          t->gpu_mtbf_h > 0 ? t->gpu_mtbf_h : DR_RES_GPU_MTBF_H,
          t->gpu_mtbf_h > 0 ? "given" : "Llama 3; --gpu-mtbf");
}

/* ---- the planner ---- */

int dr_plan_run(const dr_plan_req_t *r, const dr_catalog_t *cat, dr_plan_result_t *res,
                dr_err_t *err)
{
    memset(res, 0, sizeof *res);
    if (!r || !cat)
        return dr_err_set(err, DR_EINVAL, "plan: no request or catalog");
    batch_set_t batches = {{0}, 0}; /* training: the batches the plan chooses from */
    res->kind = r->kind;
    int rc = check_common(r, err);
    if (rc)
        return rc;
    const dr_gpu_spec_t *types[DR_PLAN_MAX_TYPES];
    size_t nt;
    if ((rc = types_of(r, cat, types, &nt, err)))
        return rc;
    if (nt == 0)
        return dr_err_set(err, DR_EINVAL, "plan: the catalog has no GPU types");
    const dr_gpu_spec_t *exact = NULL;
    if (r->gpu[0] && !(exact = find_type(cat, r->gpu, err)))
        return DR_EINVAL;
    const dr_gpu_spec_t *ref = NULL;

    switch (r->kind) {
    case DR_PLAN_TRAIN:
        if ((rc = check_train(r, err)))
            return rc;
        res->arch = r->train.arch;
        if (r->train.global_batch <= 0)
            batch_candidates(r, res, &batches);
        break;
    case DR_PLAN_SERVE:
        if (!isfinite(r->rate_rps) || r->rate_rps <= 0)
            return dr_err_set(err, DR_EINVAL,
                              "rate: %g requests/s - give the load to sustain, e.g. --rate 10",
                              r->rate_rps);
        if (r->serve.arch.seq_len && r->serve.prompt_tokens > r->serve.arch.seq_len)
            return dr_err_set(err, DR_EINVAL,
                              "--prompt %.0f tokens: longer than %s's context of %u tokens",
                              r->serve.prompt_tokens, r->serve.arch.name, r->serve.arch.seq_len);
        if (r->serve.arch.seq_len &&
            r->serve.prompt_tokens + r->serve.output_tokens > r->serve.arch.seq_len)
            return dr_err_set(err, DR_EINVAL,
                              "--prompt %.0f + --output %.0f tokens: longer than %s's context of "
                              "%u tokens",
                              r->serve.prompt_tokens, r->serve.output_tokens, r->serve.arch.name,
                              r->serve.arch.seq_len);
        if (r->ttft_s < 0 || r->tpot_s < 0 || r->latency_s < 0)
            return dr_err_set(err, DR_EINVAL, "latency targets must be positive");
        if (!(r->serve.prompt_tokens >= 1) || !(r->serve.output_tokens >= 1))
            return dr_err_set(err, DR_EINVAL,
                              "request: prompt and output lengths must be at least 1 token");
        res->arch = r->serve.arch;
        if ((rc = serve_floor_error(r, types, nt, err)))
            return rc;
        break;
    case DR_PLAN_ARRAY:
        if (!isfinite(r->tasks) || r->tasks < 1 || r->tasks > 1e12)
            return dr_err_set(err, DR_EINVAL, "tasks: %g must be at least 1", r->tasks);
        if (!isfinite(r->task_gpu_s) || r->task_gpu_s <= 0)
            return dr_err_set(err, DR_EINVAL, "task time: %g GPU-seconds per task must be positive",
                              r->task_gpu_s);
        if (!r->ref_gpu[0])
            return dr_err_set(err, DR_EINVAL,
                              "--ref-gpu: name the GPU the task time was measured on");
        if (!(ref = find_type(cat, r->ref_gpu, err)))
            return DR_EINVAL;
        if (r->task_mem_gb < 0 || !isfinite(r->task_mem_gb))
            return dr_err_set(err, DR_EINVAL, "task memory must be >= 0");
        break;
    }

    size_t cap = nt + 1;
    res->opts = calloc(cap, sizeof *res->opts);
    if (!res->opts)
        return dr_err_set(err, DR_ENOMEM, "plan: out of memory");
    for (size_t i = 0; i <= nt; i++) {
        const dr_gpu_spec_t *g = i < nt ? types[i] : exact;
        bool is_exact = i == nt;
        if (!g)
            continue;
        /* the requested type is also planned freely, as an alternative */
        uint32_t fixed = is_exact ? r->gpus : (exact ? 0 : r->gpus);
        dr_plan_option_t *o = &res->opts[res->n];
        switch (r->kind) {
        case DR_PLAN_TRAIN: rc = plan_train_type(r, &batches, g, fixed, o, err); break;
        case DR_PLAN_SERVE: rc = plan_serve_type(r, g, fixed, o, err); break;
        case DR_PLAN_ARRAY: rc = plan_array_type(r, g, ref, fixed, o); break;
        }
        if (rc) {
            dr_plan_result_free(res);
            return rc == DR_ENOMEM ? dr_err_set(err, rc, "plan: out of memory") : rc;
        }
        o->exact = is_exact;
        res->n++;
    }
    bool any_fit = false;
    for (size_t i = 0; i < res->n; i++) {
        any_fit |= res->opts[i].fits;
        res->any_meets |= res->opts[i].fits && res->opts[i].meets && !res->opts[i].exact;
    }
    if (!any_fit) {
        rc = no_fit_error(r, res, err);
        if (r->kind == DR_PLAN_ARRAY) {
            bool mem = r->task_mem_gb > 0;
            rc = mem ? dr_err_set(err, DR_EINVAL,
                                  "a task needs %.1f GB of GPU memory; no GPU type considered "
                                  "has that much (or a known rate to scale the task time)",
                                  r->task_mem_gb)
                     : dr_err_set(err, DR_EINVAL,
                                  "no GPU type considered has a known rate to scale the task "
                                  "time from %s",
                                  r->ref_gpu);
        }
        dr_plan_result_free(res);
        return rc;
    }
    if (r->kind == DR_PLAN_ARRAY && r->deadline_s > 0 && !res->any_meets) {
        double best = INFINITY;
        char bg[DR_GPU_NAME_MAX] = "";
        for (size_t i = 0; i < res->n; i++)
            if (res->opts[i].fits && res->opts[i].task_s < best) {
                best = res->opts[i].task_s;
                snprintf(bg, sizeof bg, "%s", res->opts[i].gpu);
            }
        if (best > r->deadline_s) {
            dr_plan_result_free(res);
            return dr_err_set(err, DR_EINVAL,
                              "deadline %.3g s is shorter than one task: a task takes at least "
                              "%.3g s even on %s, the fastest GPU considered (tasks are not "
                              "split across GPUs)",
                              r->deadline_s, best, bg);
        }
    }
    qsort(res->opts, res->n, sizeof *res->opts, rank_cmp);
    if (r->kind == DR_PLAN_TRAIN && r->deadline_s <= 0 && !r->max_gpus)
        knee_first(res);
    if (r->kind == DR_PLAN_TRAIN) {
        const dr_perfmodel_arch_t *a = &res->arch;
        uint32_t seq = r->train.seq_len ? r->train.seq_len : a->seq_len;
        /* a mixture of experts: the FLOPs follow the parameters a token passes */
        double n = dr_perfmodel_arch_active(a);
        res->train_flops = 6 * n * r->train.tokens;
        res->model_flops = (6 * n + 12.0 * a->layers * a->hidden * seq) * r->train.tokens;
        explain_train(r, res);
        if (res->planned_batch > 0)
            cat_f(res->explanation, sizeof res->explanation,
                  " A run this short is planned with a global batch of %.0f sequences so that it "
                  "takes at least %d optimizer steps (--batch to pin it).",
                  res->planned_batch, DR_PLAN_MIN_STEPS);
        explain_run(r, cat, res);
        offload_hint(r, cat, res);
        assumptions(r, cat, res);
        const dr_plan_option_t *t = res->n ? &res->opts[0] : NULL;
        if (t && t->fits && isfinite(t->startup_s))
            cat_f(res->explanation, sizeof res->explanation,
                  " Wall times include %.0f s of start-up and per-job overhead (process start, "
                  "loading and saving the weights, distributed initialisation).",
                  t->startup_s);
    } else if (r->kind == DR_PLAN_SERVE) {
        explain_serve(r, res);
        const dr_plan_option_t *t = NULL; /* the option explain_serve describes */
        for (size_t i = 0; i < res->n && !t; i++)
            if (res->opts[i].fits)
                t = &res->opts[i];
        if (t && site_types(r)) { /* the replica's TP stays within the cluster's nodes */
            char w[400];
            net_words(r, dr_catalog_find(cat, t->gpu), t, w, sizeof w);
            cat_f(res->explanation, sizeof res->explanation, " Network: %s.", w);
        }
    } else {
        explain_array(r, res);
    }
    verdict_text(res);
    return DR_OK;
}
