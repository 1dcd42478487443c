/* preset.c - the model presets of `drover plan --model` (architecture
 * numbers from each model's paper or card) and their lookup by name or
 * alias, ignoring case and punctuation. */
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "drover/plan.h"

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
