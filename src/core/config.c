/* config.c - the cluster configuration file (Slurm idiom: NodeName=,
 * SwitchName=, GpuType=, Pool=, PartitionName= lines of KEY=VALUE words)
 * read into a dr_cluster_t, and the built-in cluster presets.  A site's
 * slurm.conf reads too: Slurm's node keys (CPUs=, RealMemory=, Gres=gpu:..,
 * Features=, the socket layout), partitions, DEFAULT lines, and the
 * parameters drover does not act on, which become notes for the caller
 * (config_slurm.c knows their names) while drover's own keys stay strict. */
#include "drover/config.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/config_priv.h"
#include "core/embed.h"
#include "drover/hostlist.h"
#include "drover/partition.h"
#include "drover/time.h"
#include "drover/util.h"

/* --- keys --- */

enum {
    K_NODENAME,
    K_SWITCHNAME,
    K_GPUTYPE,
    K_POOL,
    K_POLICY,
    K_PARTNAME,
    K_ACCOUNT,
    K_FSHALF,
    K_PGRACE,
    K_PNOCKPT,
    K_REQUEUE,
    K_FAILDRAIN,
    K_CKPTDIR,
    K_CKPTKEEP,
    K_NKINDS = K_CKPTKEEP + 1, /* the keys above start a line */
    K_GPUS = K_NKINDS,
    K_CPUS,
    K_MEMGB,
    K_MEMMB,
    K_NVLINK,
    K_SWITCH,
    K_STATE,
    K_NODES,
    K_SWITCHES,
    K_LINKGBPS,
    K_TDPW,
    K_BF16,
    K_FP16,
    K_FP8,
    K_PRICE,
    K_VENDOR,
    K_MAXNODES,
    K_DELAY,
    K_SPOT,
    K_SHARDS,
    K_FEATURES,
    K_REALMEM,
    K_GRES,
    K_BOARDS,
    K_SPB,
    K_SOCKETS,
    K_CORES,
    K_THREADS,
    K_DEFAULT,
    K_MAXTIME,
    K_DEFTIME,
    K_MAXRUNGPUS,
    K_MAXRUNGPUS_T, /* MaxRunningGpus[TYPE] */
    K_MAXQUEUED,
    K_SHARES,
    K_MAXCOSTDAY,
    K_MAXCOSTMONTH,
    K_N
};
_Static_assert(K_N <= 64, "kind_keys holds a bit per key");

static const char *const key_names[K_N] = {"NodeName",
                                           "SwitchName",
                                           "GpuType",
                                           "Pool",
                                           "SchedulerPolicy",
                                           "PartitionName",
                                           "Account",
                                           "FairShareHalfLife",
                                           "PreemptGrace",
                                           "PreemptWithoutCheckpoint",
                                           "RequeueDefault",
                                           "NodeFailDrain",
                                           "CheckpointDir",
                                           "CheckpointKeep",
                                           "Gpus",
                                           "Cpus",
                                           "MemGB",
                                           "MemMB",
                                           "NvlinkDomain",
                                           "Switch",
                                           "State",
                                           "Nodes",
                                           "Switches",
                                           "LinkGbps",
                                           "TdpW",
                                           "Bf16Tflops",
                                           "Fp16Tflops",
                                           "Fp8Tflops",
                                           "PricePerGpuHour",
                                           "Vendor",
                                           "MaxNodes",
                                           "ProvisionDelay",
                                           "SpotInterruptRate",
                                           "Shards",
                                           "Features",
                                           "RealMemory",
                                           "Gres",
                                           "Boards",
                                           "SocketsPerBoard",
                                           "Sockets",
                                           "CoresPerSocket",
                                           "ThreadsPerCore",
                                           "Default",
                                           "MaxTime",
                                           "DefaultTime",
                                           "MaxRunningGpus",
                                           "MaxRunningGpus[TYPE]",
                                           "MaxQueuedJobs",
                                           "Shares",
                                           "MaxCostPerDay",
                                           "MaxCostPerMonth"};

#define KB(k) ((uint64_t)1 << (k))
/* Keys allowed on each line kind (indexed by the kind's own key). */
static const uint64_t kind_keys[K_NKINDS] = {
    [K_NODENAME] = KB(K_NODENAME) | KB(K_GPUS) | KB(K_CPUS) | KB(K_MEMGB) | KB(K_MEMMB) |
                   KB(K_NVLINK) | KB(K_SWITCH) | KB(K_STATE) | KB(K_SHARDS) | KB(K_FEATURES) |
                   KB(K_REALMEM) | KB(K_GRES) | KB(K_BOARDS) | KB(K_SPB) | KB(K_SOCKETS) |
                   KB(K_CORES) | KB(K_THREADS),
    [K_SWITCHNAME] = KB(K_SWITCHNAME) | KB(K_NODES) | KB(K_SWITCHES) | KB(K_LINKGBPS),
    [K_GPUTYPE] = KB(K_GPUTYPE) | KB(K_MEMGB) | KB(K_TDPW) | KB(K_BF16) | KB(K_FP16) | KB(K_FP8) |
                  KB(K_PRICE) | KB(K_VENDOR),
    [K_POOL] = KB(K_POOL) | KB(K_GPUS) | KB(K_MAXNODES) | KB(K_CPUS) | KB(K_MEMGB) | KB(K_MEMMB) |
               KB(K_PRICE) | KB(K_DELAY) | KB(K_SPOT) | KB(K_NVLINK),
    [K_POLICY] = KB(K_POLICY),
    [K_PARTNAME] =
        KB(K_PARTNAME) | KB(K_NODES) | KB(K_DEFAULT) | KB(K_MAXTIME) | KB(K_DEFTIME) | KB(K_STATE),
    [K_ACCOUNT] = KB(K_ACCOUNT) | KB(K_MAXRUNGPUS) | KB(K_MAXRUNGPUS_T) | KB(K_MAXQUEUED) |
                  KB(K_SHARES) | KB(K_MAXCOSTDAY) | KB(K_MAXCOSTMONTH),
    [K_FSHALF] = KB(K_FSHALF),
    [K_PGRACE] = KB(K_PGRACE),
    [K_PNOCKPT] = KB(K_PNOCKPT),
    [K_REQUEUE] = KB(K_REQUEUE),
    [K_FAILDRAIN] = KB(K_FAILDRAIN),
    [K_CKPTDIR] = KB(K_CKPTDIR),
    [K_CKPTKEEP] = KB(K_CKPTKEEP),
};

static int key_lookup(const char *k)
{
    /* MaxRunningGpus[TYPE]: the one key with a part of its own */
    size_t n = strlen(k), pre = strlen("MaxRunningGpus[");
    if (n > pre + 1 && k[n - 1] == ']' && strncasecmp(k, "MaxRunningGpus[", pre) == 0)
        return K_MAXRUNGPUS_T;
    for (int i = 0; i < K_N; i++)
        if (dr_streq_ci(k, key_names[i]))
            return i;
    /* Slurm's other spellings */
    if (dr_streq_ci(k, "Feature") || dr_streq_ci(k, "AvailableFeatures"))
        return K_FEATURES;
    if (dr_streq_ci(k, "Procs"))
        return K_CPUS;
    return -1;
}

/* --- parser state --- */

typedef struct cf_tok {
    char *key, *val;
    size_t line;
    int k; /* K_*, or -1 */
} cf_tok_t;

typedef struct cf_decl { /* a GpuType= declaration */
    dr_gpu_spec_t spec;
    size_t line;
} cf_decl_t;

typedef struct cf_sw { /* what this parse knows of each switch */
    bool has_nodes, has_children;
} cf_sw_t;

typedef struct cf_part { /* a PartitionName= line; its nodes are resolved at the end */
    dr_partition_t p;
    char *nodes; /* Nodes= (NULL = none) */
    size_t line, nodes_line;
} cf_part_t;

typedef struct cf_defs { /* a kind's NodeName=DEFAULT / PartitionName=DEFAULT keys */
    cf_tok_t *t;
    size_t n, cap;
} cf_defs_t;

typedef struct cf {
    dr_cluster_t *c;
    const dr_catalog_t *cat;
    const char *name;
    dr_err_t *err;
    cf_tok_t *toks;
    size_t ntoks, captoks;
    const cf_tok_t *by_key[K_N]; /* the current statement's tokens by key */
    cf_decl_t *decls;
    size_t ndecls, capdecls;
    size_t node_base; /* nodes before this parse started */
    size_t *node_line;
    size_t nnode_line, capnode_line;
    size_t pool_base;
    size_t *pool_line;
    size_t npool_line, cappool_line;
    cf_sw_t *sw;
    size_t capsw;
    uint64_t ngpus;     /* GPUs defined so far */
    uint64_t nholds;    /* Shards= (node, shard) pairs so far */
    dr_strvec_t *notes; /* "FILE:LINE: KEY: ignored" for the caller; NULL = not wanted */
    cf_defs_t defs[2];  /* DEFAULT lines: [0] NodeName, [1] PartitionName */
    cf_part_t *parts;
    size_t nparts, capparts;
} cf_t;

static int cf_err(cf_t *p, int code, size_t line, const char *key, const char *fmt, ...)
    DR_PRINTF(5, 6);

/* "FILE:LINE: KEY: what is wrong" */
static int cf_err(cf_t *p, int code, size_t line, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dr_err_vset(p->err, code, fmt, ap);
    va_end(ap);
    dr_err_prefix(p->err, "%s:%zu: %.64s: ", p->name, line, key);
    return code;
}

/* Error about token t (named by its canonical key when it has one). */
#define TOK_ERR(p, t, ...)                                                                         \
    cf_err((p), DR_EINVAL, (t)->line, (t)->k >= 0 ? key_names[(t)->k] : (t)->key, __VA_ARGS__)

/* Prefix an error set by a lower layer with "FILE:LINE: KEY: ". */
static int cf_wrap(cf_t *p, int rc, const cf_tok_t *t)
{
    dr_err_prefix(p->err, "%s:%zu: %s: ", p->name, t->line, t->k >= 0 ? key_names[t->k] : t->key);
    return rc;
}

static int cf_oom(cf_t *p)
{
    return dr_err_set(p->err, DR_ENOMEM, "%s: out of memory", p->name);
}

static void cf_note(cf_t *p, size_t line, const char *key, const char *fmt, ...) DR_PRINTF(4, 5);

/* A note "FILE:LINE: KEY: text" for the caller (what a slurm.conf asks that
 * drover does not do).  Notes are best effort: out of memory drops one. */
static void cf_note(cf_t *p, size_t line, const char *key, const char *fmt, ...)
{
    if (!p->notes)
        return;
    char text[DR_ERR_MSG_MAX], msg[DR_ERR_MSG_MAX + 160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "%s:%zu: %.64s: %s", p->name, line, key, text);
    (void)dr_strvec_push(p->notes, msg);
}

static void cf_clear_toks(cf_t *p)
{
    for (size_t i = 0; i < p->ntoks; i++) {
        free(p->toks[i].key);
        free(p->toks[i].val);
    }
    p->ntoks = 0;
}

/* --- values --- */

static int cf_u64(cf_t *p, const cf_tok_t *t, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t v;
    if (dr_parse_u64(t->val, &v) != 0)
        return TOK_ERR(p, t, "'%.64s' is not a whole number", t->val);
    if (v < lo || v > hi)
        return TOK_ERR(p, t, "%llu is out of range (%llu..%llu)", (unsigned long long)v,
                       (unsigned long long)lo, (unsigned long long)hi);
    *out = v;
    return DR_OK;
}

static int cf_num(cf_t *p, const cf_tok_t *t, double hi, double *out)
{
    double v;
    if (dr_parse_double(t->val, &v) != 0)
        return TOK_ERR(p, t, "'%.64s' is not a number", t->val);
    if (v < 0)
        return TOK_ERR(p, t, "'%.64s' must not be negative", t->val);
    if (v > hi)
        return TOK_ERR(p, t, "'%.64s' is too large (at most %g)", t->val, hi);
    *out = v;
    return DR_OK;
}

/* Cpus= (required): whole CPUs, returned x1000. */
static int cf_cpus(cf_t *p, int kind, uint32_t *cpu_milli)
{
    const cf_tok_t *t = p->by_key[K_CPUS];
    if (!t)
        return TOK_ERR(p, p->by_key[kind], "Cpus= is missing");
    uint64_t v = 0;
    int rc = cf_u64(p, t, 0, UINT32_MAX / 1000, &v);
    if (rc == 0)
        *cpu_milli = (uint32_t)(v * 1000);
    return rc;
}

/* MemGB=, MemMB= or Slurm's RealMemory= (MB): one is required. */
static int cf_mem(cf_t *p, int kind, uint64_t *mem_mb)
{
    const cf_tok_t *gb = p->by_key[K_MEMGB], *mb = p->by_key[K_MEMMB];
    const cf_tok_t *rm = p->by_key[K_REALMEM];
    if (gb && mb)
        return TOK_ERR(p, mb, "give MemGB or MemMB, not both");
    if (rm && (gb || mb))
        return TOK_ERR(p, rm, "give RealMemory or %s, not both", gb ? "MemGB" : "MemMB");
    if (rm)
        mb = rm;
    if (!gb && !mb)
        return TOK_ERR(p, p->by_key[kind], "MemGB= (or MemMB=%s) is missing",
                       kind == K_NODENAME ? ", RealMemory=" : "");
    if (mb)
        return cf_u64(p, mb, 0, (uint64_t)1 << 50, mem_mb);
    double v = 0;
    int rc = cf_num(p, gb, 1e9, &v);
    if (rc == 0)
        *mem_mb = (uint64_t)llround(v * 1024);
    return rc;
}

/* Levenshtein distance, case-insensitive, on at most 63 characters. */
static size_t edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    size_t row[64], prev;
    na = na > 63 ? 63 : na;
    nb = nb > 63 ? 63 : nb;
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t cur = row[j];
            size_t sub =
                prev + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            size_t best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            prev = cur;
        }
    }
    return row[nb];
}

typedef struct cf_suggest {
    const char *best;
    size_t blen, dist;
} cf_suggest_t;

static void suggest_one(cf_suggest_t *s, const char *want, const char *cand, size_t clen)
{
    if (clen == 0)
        return;
    size_t d = edit_distance(want, strlen(want), cand, clen);
    if (d < s->dist) {
        s->dist = d;
        s->best = cand;
        s->blen = clen;
    }
}

static void suggest_list(cf_suggest_t *s, const char *want, const char *list)
{
    while (*list) {
        const char *e = strchr(list, '|');
        size_t n = e ? (size_t)(e - list) : strlen(list);
        suggest_one(s, want, list, n);
        if (!e)
            break;
        list = e + 1;
    }
}

/* A type's figures: a GpuType= declaration of that name, else the
 * catalog's (by name or alias) - with the site's price when a GpuType= line
 * set one for that catalog type (cf_gputype). */
static const dr_gpu_spec_t *cf_spec_find(const cf_t *p, const char *tname)
{
    for (size_t i = 0; i < p->ndecls; i++)
        if (dr_streq_ci(p->decls[i].spec.name, tname))
            return &p->decls[i].spec;
    const dr_gpu_spec_t *cat = dr_catalog_find(p->cat, tname);
    for (size_t i = 0; cat && i < p->ndecls; i++)
        if (dr_streq_ci(p->decls[i].spec.name, cat->name))
            return &p->decls[i].spec;
    return cat;
}

/* Look a GPU type name up: the cluster's types, then GpuType= declarations,
 * then the catalog.  Adds it to the cluster on first use.  1 when found, 0
 * when not, or an error. */
static int cf_type_find(cf_t *p, const cf_tok_t *t, const char *tname, int *type)
{
    int idx = dr_cluster_find_type(p->c, tname);
    if (idx >= 0) {
        *type = idx;
        return 1;
    }
    const dr_gpu_spec_t *spec = cf_spec_find(p, tname);
    if (!spec)
        return 0;
    idx = dr_cluster_add_type(p->c, spec, p->err);
    if (idx < 0)
        return cf_wrap(p, idx, t);
    *type = idx;
    return 1;
}

static int cf_type(cf_t *p, const cf_tok_t *t, const char *tname, int *type)
{
    int idx = dr_cluster_find_type(p->c, tname);
    if (idx >= 0) {
        *type = idx;
        return DR_OK;
    }
    const dr_gpu_spec_t *spec = cf_spec_find(p, tname);
    if (spec) {
        idx = dr_cluster_add_type(p->c, spec, p->err);
        if (idx < 0)
            return cf_wrap(p, idx, t);
        *type = idx;
        return DR_OK;
    }
    cf_suggest_t s = {NULL, 0, SIZE_MAX};
    for (size_t i = 0; p->cat && i < p->cat->n; i++) {
        suggest_one(&s, tname, p->cat->gpus[i].name, strlen(p->cat->gpus[i].name));
        suggest_list(&s, tname, p->cat->gpus[i].aliases);
    }
    for (size_t i = 0; p->decls && i < p->ndecls; i++)
        suggest_one(&s, tname, p->decls[i].spec.name, strlen(p->decls[i].spec.name));
    for (size_t i = 0; i < p->c->ntypes; i++)
        suggest_one(&s, tname, p->c->types[i].name, strlen(p->c->types[i].name));
    size_t n = strlen(tname);
    if (s.best && s.dist <= 2 && s.dist < n)
        return TOK_ERR(p, t, "unknown GPU type '%.64s' (did you mean '%.*s'?)", tname, (int)s.blen,
                       s.best);
    return TOK_ERR(p, t, "unknown GPU type '%.64s' (not in the catalog; declare it with GpuType=)",
                   tname);
}

/* Gpus=TYPE:COUNT */
static int cf_gpus(cf_t *p, const cf_tok_t *t, int *type, uint16_t *count)
{
    const char *colon = strrchr(t->val, ':');
    if (!colon || colon == t->val)
        return TOK_ERR(p, t, "expected TYPE:COUNT, got '%.64s'", t->val);
    uint64_t n;
    if (dr_parse_u64(colon + 1, &n) != 0)
        return TOK_ERR(p, t, "count '%.64s' is not a whole number", colon + 1);
    if (n < 1 || n > DR_MAX_GPUS_PER_NODE)
        return TOK_ERR(p, t, "count %llu is out of range (1..%d)", (unsigned long long)n,
                       DR_MAX_GPUS_PER_NODE);
    char *tname = dr_strndup(t->val, (size_t)(colon - t->val));
    if (!tname)
        return cf_oom(p);
    int rc = cf_type(p, t, tname, type);
    free(tname);
    *count = (uint16_t)n;
    return rc;
}

/* NvlinkDomain=node|none|NAME: returns 0 none, 1 per node, 2 shared. */
static int cf_nvlink(cf_t *p, const cf_tok_t *t, int *mode)
{
    *mode = 0;
    if (!t)
        return DR_OK;
    if (dr_is_blank(t->val))
        return TOK_ERR(p, t, "empty (use node, none or a domain name)");
    *mode = dr_streq_ci(t->val, "none") ? 0 : dr_streq_ci(t->val, "node") ? 1 : 2;
    return DR_OK;
}

static int cf_set_nvlink(cf_t *p, const cf_tok_t *t, int mode, const char *node, uint32_t idx)
{
    if (mode == 0)
        return DR_OK;
    int d = dr_cluster_nvl_domain(p->c, mode == 1 ? node : t->val, p->err);
    if (d < 0)
        return cf_wrap(p, d, t);
    p->c->nodes[idx].nvl_domain = d;
    return DR_OK;
}

static int cf_expand(cf_t *p, const cf_tok_t *t, dr_strvec_t *out)
{
    int rc = dr_hostlist_expand(t->val, out, p->err);
    return rc != 0 ? cf_wrap(p, rc, t) : DR_OK;
}

/* Make room in the per-switch bookkeeping for switch index s. */
static int cf_sw_room(cf_t *p, size_t s)
{
    size_t old = p->capsw;
    if (dr_grow((void **)&p->sw, &p->capsw, s + 1, sizeof *p->sw) != 0)
        return cf_oom(p);
    memset(p->sw + old, 0, (p->capsw - old) * sizeof *p->sw);
    return DR_OK;
}

static int cf_switch(cf_t *p, const cf_tok_t *t, const char *name, int *out)
{
    int s = dr_cluster_find_switch(p->c, name);
    if (s < 0) {
        if (p->c->nswitches >= DR_CONFIG_MAX_NODES)
            return TOK_ERR(p, t, "more than %u switches", DR_CONFIG_MAX_NODES);
        s = dr_cluster_add_switch(p->c, name, p->err);
        if (s < 0)
            return cf_wrap(p, s, t);
    }
    *out = s;
    return cf_sw_room(p, (size_t)s);
}

/* The line a node of this parse was defined on (0 if defined before). */
static size_t cf_node_line(const cf_t *p, int id)
{
    size_t i = (size_t)id;
    return i >= p->node_base && i - p->node_base < p->nnode_line ? p->node_line[i - p->node_base]
                                                                 : 0;
}

static int cf_dup_node(cf_t *p, const cf_tok_t *t, const char *node)
{
    int id = dr_cluster_find_node(p->c, node);
    if (id < 0)
        return DR_OK;
    size_t l = cf_node_line(p, id);
    if (l)
        return TOK_ERR(p, t, "node '%.64s' is defined twice (first on line %zu)", node, l);
    return TOK_ERR(p, t, "node '%.64s' is already defined", node);
}

/* Add one node and note its line. */
static int cf_add_node(cf_t *p, const cf_tok_t *t, const char *node, int type, uint16_t ngpus,
                       uint32_t cpu_milli, uint64_t mem_mb, uint32_t *idx)
{
    int rc = cf_dup_node(p, t, node);
    if (rc != 0)
        return rc;
    int id = dr_cluster_add_node(p->c, node, ngpus ? type : 0, ngpus, cpu_milli, mem_mb, p->err);
    if (id < 0)
        return cf_wrap(p, id, t);
    if (DR_PUSH(p->node_line, p->nnode_line, p->capnode_line, t->line) != 0)
        return cf_oom(p);
    p->ngpus += ngpus;
    *idx = (uint32_t)id;
    return DR_OK;
}

/* Would n more nodes of g GPUs each stay within the limits? */
static int cf_room(cf_t *p, const cf_tok_t *t, const cf_tok_t *gt, uint64_t n, uint16_t g)
{
    if (n > DR_CONFIG_MAX_NODES || p->c->nnodes + n > DR_CONFIG_MAX_NODES)
        return TOK_ERR(p, t, "the cluster would have more than %u nodes", DR_CONFIG_MAX_NODES);
    if (n * g > DR_CONFIG_MAX_GPUS || p->ngpus + n * g > DR_CONFIG_MAX_GPUS)
        return TOK_ERR(p, gt, "the cluster would have more than %u GPUs", DR_CONFIG_MAX_GPUS);
    return DR_OK;
}

/* --- slurm.conf node keys --- */

typedef struct cf_ids { /* shard or feature ids of a line */
    uint32_t *ids;
    size_t n;
} cf_ids_t;

/* Slurm's name for a GPU type ("h100", "a100_80g", "mi300x") as a type of
 * the cluster: the name itself (catalog names and aliases, declared
 * types), with '_' read as '-', else the catalog's product-name matcher
 * (gpu_names.c) on its words.  The Slurm name becomes an alias of the
 * type, so jobs may say --gres=gpu:a100_80g:2 or -C a100_80g as they did. */
static int cf_slurm_type(cf_t *p, const cf_tok_t *t, const char *name, int *type)
{
    char alt[DR_GPU_NAME_MAX * 2], words[DR_GPU_NAME_MAX * 3];
    int rc = cf_type_find(p, t, name, type);
    if (rc == 0 && strlen(name) < sizeof alt) {
        memcpy(alt, name, strlen(name) + 1);
        for (char *q = alt; *q; q++)
            if (*q == '_')
                *q = '-';
        rc = cf_type_find(p, t, alt, type);
    }
    if (rc == 0) {
        char canon[DR_GPU_NAME_MAX];
        dr_slurm_gpu_words(name, words, sizeof words);
        if (dr_gpu_type_from_product_cat(p->cat, words, canon, sizeof canon) == DR_OK)
            rc = cf_type_find(p, t, canon, type);
    }
    if (rc < 0)
        return rc;
    if (rc == 0)
        return cf_type(p, t, name, type); /* the error, with a suggestion */
    dr_gpu_spec_t *g = &p->c->types[*type];
    size_t have = strlen(g->aliases), add = strlen(name);
    if (dr_cluster_find_type(p->c, name) != *type && have + add + 2 <= sizeof g->aliases &&
        !strpbrk(name, "|")) {
        if (have)
            g->aliases[have++] = '|';
        memcpy(g->aliases + have, name, add + 1);
    }
    return DR_OK;
}

/* Gres=gpu[:TYPE]:COUNT[(S:..)][,other:N...]: the node's GPUs.  Other GRES
 * are noted; GPUs of two types on one node are refused (a drover node has
 * one GPU type); an untyped gpu:N gets a type "gpu" whose figures are
 * unknown. */
static int cf_gres(cf_t *p, const cf_tok_t *t, int *type, uint16_t *count)
{
    char *v = dr_strdup(t->val);
    if (!v)
        return cf_oom(p);
    int rc = DR_OK, got = -1;
    uint64_t total = 0;
    char *item = v;
    while (item && rc == 0) {
        /* split at a comma outside parentheses */
        char *q = item;
        int depth = 0;
        for (; *q && !(*q == ',' && depth == 0); q++)
            depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
        char *next = *q ? q + 1 : NULL;
        *q = '\0';
        char *paren = strchr(item, '(');
        if (paren)
            *paren = '\0'; /* socket affinity: not used */
        char *c1 = strchr(item, ':');
        if (!c1 || strncasecmp(item, "gpu", 3) != 0 || c1 != item + 3) {
            if (*item)
                cf_note(p, t->line, "Gres", "'%.64s' ignored (only GPUs are scheduled)", item);
            item = next;
            continue;
        }
        char *c2 = strrchr(c1 + 1, ':');
        const char *cnt = c2 ? c2 + 1 : c1 + 1;
        uint64_t n;
        if (dr_parse_u64(cnt, &n) != 0 || n < 1 || n > DR_MAX_GPUS_PER_NODE) {
            rc = TOK_ERR(p, t, "'%.64s': the GPU count must be a whole number from 1 to %d", item,
                         DR_MAX_GPUS_PER_NODE);
            break;
        }
        int ty = 0;
        if (c2) {
            *c2 = '\0';
            if (strchr(c1 + 1, ':')) {
                rc = TOK_ERR(p, t, "'%.64s': expected gpu[:TYPE]:COUNT (flags are not supported)",
                             t->val);
                break;
            }
            rc = cf_slurm_type(p, t, c1 + 1, &ty);
        } else {
            ty = dr_cluster_find_type(p->c, "gpu");
            if (ty < 0) {
                dr_gpu_spec_t g;
                dr_gpu_spec_unknown(&g, "gpu");
                ty = dr_cluster_add_type(p->c, &g, p->err);
                dr_gpu_spec_free(&g);
                if (ty < 0)
                    rc = cf_wrap(p, ty, t);
            }
            if (rc == 0)
                cf_note(p, t->line, "Gres",
                        "'%.64s' names no GPU type: type 'gpu' with unknown figures (name one, "
                        "gpu:h100:%llu, for drover to know the GPU)",
                        item, (unsigned long long)n);
        }
        if (rc != 0)
            break;
        if (got >= 0 && got != ty)
            rc = TOK_ERR(p, t,
                         "GPUs of two types ('%s' and '%s') on one node: a drover node has one "
                         "GPU type; split the NodeName line",
                         p->c->types[got].name, p->c->types[ty].name);
        got = ty;
        total += n;
        item = next;
    }
    if (rc == 0 && total > DR_MAX_GPUS_PER_NODE)
        rc = TOK_ERR(p, t, "%llu GPUs on a node is more than %d", (unsigned long long)total,
                     DR_MAX_GPUS_PER_NODE);
    free(v);
    if (rc == 0) {
        *type = got < 0 ? 0 : got;
        *count = (uint16_t)total;
    }
    return rc;
}

/* Did t come from a DEFAULT line (whose notes are said once, there)? */
static bool cf_from_defaults(const cf_t *p, const cf_tok_t *t)
{
    for (size_t i = 0; i < 2; i++)
        if (p->defs[i].n && t >= p->defs[i].t && t < p->defs[i].t + p->defs[i].n)
            return true;
    return false;
}

/* Cpus= (CPUs=, Procs=), else Slurm's default: (Boards x SocketsPerBoard,
 * or Sockets) x CoresPerSocket x ThreadsPerCore.  With Cpus= the layout
 * keys are not acted on and noted. */
static int cf_node_cpus(cf_t *p, uint32_t *cpu_milli)
{
    static const int lay[] = {K_BOARDS, K_SPB, K_SOCKETS, K_CORES, K_THREADS};
    bool any = false;
    for (size_t i = 0; i < sizeof lay / sizeof *lay; i++)
        any = any || p->by_key[lay[i]];
    if (p->by_key[K_CPUS] || !any) {
        for (size_t i = 0; i < sizeof lay / sizeof *lay; i++)
            if (p->by_key[lay[i]] && !cf_from_defaults(p, p->by_key[lay[i]]))
                cf_note(p, p->by_key[lay[i]]->line, key_names[lay[i]],
                        "ignored (CPUs= gives the node's CPUs)");
        return cf_cpus(p, K_NODENAME, cpu_milli);
    }
    uint64_t v[5];
    for (size_t i = 0; i < 5; i++) {
        v[i] = 1;
        int rc;
        if (p->by_key[lay[i]] && (rc = cf_u64(p, p->by_key[lay[i]], 1, 65536, &v[i])) != 0)
            return rc;
    }
    uint64_t sockets = p->by_key[K_SOCKETS] ? v[2] : v[0] * v[1];
    uint64_t cpus = sockets * v[3] * v[4];
    if (cpus > UINT32_MAX / 1000)
        return TOK_ERR(p, p->by_key[K_NODENAME], "%llu CPUs is more than %u",
                       (unsigned long long)cpus, UINT32_MAX / 1000);
    *cpu_milli = (uint32_t)(cpus * 1000);
    return DR_OK;
}

/* State=: drover's UP, DOWN, DRAIN, and Slurm's UNKNOWN and IDLE (UP: the
 * agents say what is there), FUTURE and CLOUD (DOWN, noted). */
static int cf_node_state(cf_t *p, const cf_tok_t *st, uint8_t *state)
{
    *state = DR_NODE_UP;
    if (!st)
        return DR_OK;
    if (dr_streq_ci(st->val, "UP") || dr_streq_ci(st->val, "UNKNOWN") ||
        dr_streq_ci(st->val, "IDLE"))
        *state = DR_NODE_UP;
    else if (dr_streq_ci(st->val, "DOWN"))
        *state = DR_NODE_DOWN;
    else if (dr_streq_ci(st->val, "DRAIN"))
        *state = DR_NODE_DRAIN;
    else if (dr_streq_ci(st->val, "FUTURE") || dr_streq_ci(st->val, "CLOUD")) {
        *state = DR_NODE_DOWN;
        cf_note(p, st->line, "State", "%s: the nodes are DOWN in drover", st->val);
    } else
        return TOK_ERR(p, st, "'%.64s' is not UP, DOWN or DRAIN (or Slurm's UNKNOWN, IDLE, FUTURE)",
                       st->val);
    return DR_OK;
}

/* Features=a,b: feature ids into out (declared on first use). */
static int cf_features(cf_t *p, const cf_tok_t *t, cf_ids_t *out)
{
    size_t n = 1;
    for (const char *q = t->val; *q; q++)
        n += *q == ',';
    out->ids = malloc(n * sizeof *out->ids);
    if (!out->ids)
        return cf_oom(p);
    for (const char *q = t->val; *q;) {
        size_t len = strcspn(q, ",");
        char name[128];
        if (len == 0 || len >= sizeof name)
            return TOK_ERR(p, t, "'%.64s': feature names are 1 to 127 characters", t->val);
        memcpy(name, q, len);
        name[len] = '\0';
        if (strpbrk(name, "&|()[]*!\""))
            return TOK_ERR(p, t, "feature '%.64s' may not contain any of &|()[]*!", name);
        int f = dr_cluster_feature(p->c, name, p->err);
        if (f < 0)
            return cf_wrap(p, f, t);
        out->ids[out->n++] = (uint32_t)f;
        q += len + (q[len] == ',');
    }
    return DR_OK;
}

/* --- line kinds --- */

/* Shards=HOSTLIST on a line of nnodes nodes: the shard ids (declared on the
 * spot), within the limit on (node, shard) pairs. */

static int cf_shards(cf_t *p, const cf_tok_t *t, size_t nnodes, cf_ids_t *out)
{
    dr_strvec_t names = {0};
    int rc = cf_expand(p, t, &names);
    if (rc != 0)
        return rc;
    if (names.n > DR_CONFIG_MAX_HOLDS || (uint64_t)names.n * nnodes > DR_CONFIG_MAX_HOLDS ||
        p->nholds + (uint64_t)names.n * nnodes > DR_CONFIG_MAX_HOLDS) {
        rc = TOK_ERR(p, t, "the cluster would hold more than %u (node, shard) pairs",
                     DR_CONFIG_MAX_HOLDS);
        goto out;
    }
    out->ids = malloc((names.n ? names.n : 1) * sizeof *out->ids);
    if (!out->ids) {
        rc = cf_oom(p);
        goto out;
    }
    for (size_t i = 0; i < names.n; i++) {
        int id = dr_cluster_shard(p->c, names.v[i], p->err);
        if (id < 0) {
            rc = cf_wrap(p, id, t);
            goto out;
        }
        out->ids[out->n++] = (uint32_t)id;
    }
    p->nholds += (uint64_t)names.n * nnodes;
out:
    dr_strvec_free(&names);
    return rc;
}

static int cf_nodename(cf_t *p)
{
    const cf_tok_t *kt = p->by_key[K_NODENAME];
    dr_strvec_t names = {0};
    cf_ids_t shards = {NULL, 0}, feats = {NULL, 0};
    int type = 0, mode, rc, sw = DR_NONE;
    uint16_t ngpus = 0;
    uint32_t cpu = 0;
    uint64_t mem = 0;
    uint8_t state = DR_NODE_UP;
    const cf_tok_t *gt = p->by_key[K_GPUS] ? p->by_key[K_GPUS] : p->by_key[K_GRES];
    if ((rc = cf_expand(p, kt, &names)) != 0)
        goto out;
    if (p->by_key[K_GPUS] && p->by_key[K_GRES]) {
        rc = TOK_ERR(p, p->by_key[K_GRES], "give Gpus or Gres, not both");
        goto out;
    }
    if (p->by_key[K_GPUS] && (rc = cf_gpus(p, p->by_key[K_GPUS], &type, &ngpus)) != 0)
        goto out;
    if (p->by_key[K_GRES] && (rc = cf_gres(p, p->by_key[K_GRES], &type, &ngpus)) != 0)
        goto out;
    if ((rc = cf_node_cpus(p, &cpu)) != 0 || (rc = cf_mem(p, K_NODENAME, &mem)) != 0 ||
        (rc = cf_nvlink(p, p->by_key[K_NVLINK], &mode)) != 0 ||
        (rc = cf_node_state(p, p->by_key[K_STATE], &state)) != 0)
        goto out;
    if (p->by_key[K_FEATURES] && (rc = cf_features(p, p->by_key[K_FEATURES], &feats)) != 0)
        goto out;
    if ((rc = cf_room(p, kt, gt ? gt : kt, names.n, ngpus)) != 0)
        goto out;
    const cf_tok_t *swt = p->by_key[K_SWITCH];
    if (swt) {
        if (dr_is_blank(swt->val)) {
            rc = TOK_ERR(p, swt, "empty switch name");
            goto out;
        }
        if ((rc = cf_switch(p, swt, swt->val, &sw)) != 0)
            goto out;
        if (p->sw[sw].has_children) {
            rc = TOK_ERR(p, swt, "switch '%.64s' has child switches; nodes attach to leaf switches",
                         swt->val);
            goto out;
        }
        p->sw[sw].has_nodes = true;
    }
    const cf_tok_t *sht = p->by_key[K_SHARDS];
    if (sht && (rc = cf_shards(p, sht, names.n, &shards)) != 0)
        goto out;
    for (size_t i = 0; i < names.n; i++) {
        uint32_t idx;
        if ((rc = cf_add_node(p, kt, names.v[i], type, ngpus, cpu, mem, &idx)) != 0 ||
            (rc = cf_set_nvlink(p, p->by_key[K_NVLINK], mode, names.v[i], idx)) != 0)
            goto out;
        p->c->nodes[idx].switch_id = sw;
        p->c->nodes[idx].state = state;
        for (size_t k = 0; k < shards.n; k++)
            if ((rc = dr_cluster_node_add_shard(p->c, idx, shards.ids[k], p->err)) != 0) {
                rc = cf_wrap(p, rc, sht);
                goto out;
            }
        for (size_t k = 0; k < feats.n; k++)
            if ((rc = dr_cluster_node_add_feature(p->c, idx, feats.ids[k], p->err)) != 0) {
                rc = cf_wrap(p, rc, p->by_key[K_FEATURES]);
                goto out;
            }
    }
out:
    dr_strvec_free(&names);
    free(shards.ids);
    free(feats.ids);
    return rc;
}

static int cf_switchname(cf_t *p)
{
    const cf_tok_t *kt = p->by_key[K_SWITCHNAME], *nt = p->by_key[K_NODES],
                   *ct = p->by_key[K_SWITCHES], *lt = p->by_key[K_LINKGBPS];
    dr_strvec_t sws = {0}, nodes = {0}, kids = {0};
    int *node_ids = NULL, *kid_ids = NULL;
    double gbps = 0;
    int rc;
    if ((rc = cf_expand(p, kt, &sws)) != 0 || (nt && (rc = cf_expand(p, nt, &nodes)) != 0) ||
        (ct && (rc = cf_expand(p, ct, &kids)) != 0) ||
        (lt && (rc = cf_num(p, lt, 1e9, &gbps)) != 0))
        goto out;
    node_ids = malloc((nodes.n + 1) * sizeof *node_ids);
    kid_ids = malloc((kids.n + 1) * sizeof *kid_ids);
    if (!node_ids || !kid_ids) {
        rc = cf_oom(p);
        goto out;
    }
    for (size_t i = 0; i < nodes.n; i++)
        if ((node_ids[i] = dr_cluster_find_node(p->c, nodes.v[i])) < 0) {
            rc =
                TOK_ERR(p, nt, "unknown node '%.64s' (define it with NodeName= first)", nodes.v[i]);
            goto out;
        }
    for (size_t i = 0; i < kids.n; i++)
        if ((kid_ids[i] = dr_cluster_find_switch(p->c, kids.v[i])) < 0) {
            rc = TOK_ERR(p, ct, "unknown switch '%.64s' (declare it with SwitchName= first)",
                         kids.v[i]);
            goto out;
        }
    for (size_t i = 0; i < sws.n; i++) {
        int s;
        if ((rc = cf_switch(p, kt, sws.v[i], &s)) != 0)
            goto out;
        dr_switch_t *swp = &p->c->switches[s];
        if (lt)
            swp->link_gbs = gbps / 8; /* Gbit/s on the line, GB/s in the model */
        if (nodes.n && p->sw[s].has_children) {
            rc = TOK_ERR(p, nt, "switch '%.64s' has child switches; nodes attach to leaf switches",
                         swp->name);
            goto out;
        }
        for (size_t j = 0; j < nodes.n; j++) {
            dr_node_t *n = &p->c->nodes[node_ids[j]];
            if (n->switch_id != DR_NONE && n->switch_id != s) {
                rc = TOK_ERR(p, nt, "node '%.64s' is already on switch '%.64s'", n->name,
                             p->c->switches[n->switch_id].name);
                goto out;
            }
            n->switch_id = s;
            p->sw[s].has_nodes = true;
        }
        if (kids.n && p->sw[s].has_nodes) {
            rc = TOK_ERR(p, ct, "switch '%.64s' has nodes; it cannot also have child switches",
                         swp->name);
            goto out;
        }
        for (size_t j = 0; j < kids.n; j++) {
            int k = kid_ids[j];
            dr_switch_t *kid = &p->c->switches[k];
            if (k == s) {
                rc = TOK_ERR(p, ct, "switch '%.64s' cannot be its own child", kid->name);
                goto out;
            }
            if (kid->parent != DR_NONE && kid->parent != s) {
                rc = TOK_ERR(p, ct, "switch '%.64s' already has parent '%.64s'", kid->name,
                             p->c->switches[kid->parent].name);
                goto out;
            }
            /* walk up from s (bounded, should a caller have built a cycle) */
            size_t steps = 0;
            for (int32_t a = s; a != DR_NONE && steps++ <= p->c->nswitches;
                 a = p->c->switches[a].parent)
                if (a == k) {
                    rc = TOK_ERR(p, ct, "making '%.64s' the parent of '%.64s' would make a cycle",
                                 swp->name, kid->name);
                    goto out;
                }
            kid->parent = s;
            p->sw[s].has_children = true;
        }
    }
out:
    free(node_ids);
    free(kid_ids);
    dr_strvec_free(&sws);
    dr_strvec_free(&nodes);
    dr_strvec_free(&kids);
    return rc;
}

/* A name for a type or pool: non-empty, bounded, none of `bad`. */
static int cf_name_ok(cf_t *p, const cf_tok_t *t, size_t max, const char *bad)
{
    size_t n = strlen(t->val);
    if (dr_is_blank(t->val))
        return TOK_ERR(p, t, "empty name");
    if (n > max)
        return TOK_ERR(p, t, "'%.64s' is longer than %zu characters", t->val, max);
    for (size_t i = 0; i < n; i++)
        if (strchr(bad, t->val[i]) || isspace((unsigned char)t->val[i]))
            return TOK_ERR(p, t, "'%.64s' may not contain '%c'", t->val, t->val[i]);
    return DR_OK;
}

/* GpuType=NAME PricePerGpuHour=X for a type the catalog has: the site's
 * own price (owned hardware: amortised purchase, power and hosting; a
 * negotiated rate), which every cost figure and the cost-aware policies
 * use.  The type's other figures stay the catalog's. */
static int cf_site_price(cf_t *p, const cf_tok_t *kt, const dr_gpu_spec_t *known)
{
    for (int k = 0; k < K_N; k++)
        if (p->by_key[k] && k != K_GPUTYPE && k != K_PRICE)
            return TOK_ERR(p, p->by_key[k],
                           "'%s' is in the GPU catalog (as '%s'): only PricePerGpuHour= may be "
                           "set for it",
                           kt->val, known->name);
    if (!p->by_key[K_PRICE])
        return TOK_ERR(p, kt,
                       "'%s' is already in the GPU catalog (as '%s'); use that type, or give "
                       "PricePerGpuHour= to set the site's price for it",
                       kt->val, known->name);
    cf_decl_t d = {.line = kt->line};
    if (dr_gpu_spec_copy(&d.spec, known) != 0)
        return cf_oom(p);
    int rc = cf_num(p, p->by_key[K_PRICE], 1e12, &d.spec.price_hr);
    char src[DR_ERR_MSG_MAX];
    snprintf(src, sizeof src, "price set by GpuType= at %s:%zu; figures: %s", p->name, kt->line,
             known->source ? known->source : "the catalog");
    char *dup = rc == 0 ? dr_strdup(src) : NULL;
    if (rc == 0 && !dup)
        rc = cf_oom(p);
    if (rc == 0) {
        free(d.spec.source);
        d.spec.source = dup;
    }
    if (rc != 0 || DR_PUSH(p->decls, p->ndecls, p->capdecls, d) != 0) {
        dr_gpu_spec_free(&d.spec);
        return rc != 0 ? rc : cf_oom(p);
    }
    return DR_OK;
}

static int cf_gputype(cf_t *p)
{
    const cf_tok_t *kt = p->by_key[K_GPUTYPE];
    int rc = cf_name_ok(p, kt, DR_GPU_NAME_MAX - 1, ":|,[]");
    if (rc != 0)
        return rc;
    const dr_gpu_spec_t *known = dr_catalog_find(p->cat, kt->val);
    const char *name = known ? known->name : kt->val;
    for (size_t i = 0; i < p->ndecls; i++)
        if (dr_streq_ci(p->decls[i].spec.name, name))
            return TOK_ERR(p, kt, "'%s' is declared twice (first on line %zu)", kt->val,
                           p->decls[i].line);
    if (dr_cluster_find_type(p->c, name) >= 0)
        return TOK_ERR(p, kt,
                       "'%s' is already a GPU type of this cluster (a GpuType= line goes "
                       "before the nodes that use the type)",
                       kt->val);
    if (known)
        return cf_site_price(p, kt, known);
    cf_decl_t d = {.line = kt->line};
    dr_gpu_spec_unknown(&d.spec, kt->val);
    static const struct {
        int k;
        size_t off;
    } nums[] = {{K_MEMGB, offsetof(dr_gpu_spec_t, mem_gb)},
                {K_TDPW, offsetof(dr_gpu_spec_t, tdp_w)},
                {K_BF16, offsetof(dr_gpu_spec_t, bf16_tflops)},
                {K_FP16, offsetof(dr_gpu_spec_t, fp16_tflops)},
                {K_FP8, offsetof(dr_gpu_spec_t, fp8_tflops)},
                {K_PRICE, offsetof(dr_gpu_spec_t, price_hr)}};
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
        if (p->by_key[nums[i].k] && (rc = cf_num(p, p->by_key[nums[i].k], 1e12,
                                                 (double *)((char *)&d.spec + nums[i].off))) != 0)
            return rc;
    const cf_tok_t *vt = p->by_key[K_VENDOR];
    if (vt) {
        if (strlen(vt->val) >= sizeof d.spec.vendor)
            return TOK_ERR(p, vt, "'%.64s' is longer than %zu characters", vt->val,
                           sizeof d.spec.vendor - 1);
        memcpy(d.spec.vendor, vt->val, strlen(vt->val) + 1);
    }
    char src[DR_ERR_MSG_MAX];
    snprintf(src, sizeof src, "declared by GpuType= at %s:%zu", p->name, kt->line);
    if (!(d.spec.source = dr_strdup(src)))
        return cf_oom(p);
    if (DR_PUSH(p->decls, p->ndecls, p->capdecls, d) != 0) {
        dr_gpu_spec_free(&d.spec);
        return cf_oom(p);
    }
    return DR_OK;
}

static int cf_pool(cf_t *p)
{
    const cf_tok_t *kt = p->by_key[K_POOL], *gt = p->by_key[K_GPUS], *mt = p->by_key[K_MAXNODES];
    int rc = cf_name_ok(p, kt, 200, "[],:|=\"#");
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < p->c->npools; i++)
        if (strcmp(p->c->pools[i].name, kt->val) == 0) {
            size_t j = i - p->pool_base;
            if (i >= p->pool_base && j < p->npool_line)
                return TOK_ERR(p, kt, "pool '%s' is declared twice (first on line %zu)", kt->val,
                               p->pool_line[j]);
            return TOK_ERR(p, kt, "pool '%s' is already defined", kt->val);
        }
    if (!gt)
        return TOK_ERR(p, kt, "Gpus= is missing");
    if (!mt)
        return TOK_ERR(p, kt, "MaxNodes= is missing");
    dr_pool_t pool = {.name = kt->val, .price_hr = NAN, .provision_delay = 0};
    int type, mode;
    uint64_t maxn;
    if ((rc = cf_gpus(p, gt, &type, &pool.gpus_per_node)) != 0 ||
        (rc = cf_u64(p, mt, 1, DR_CONFIG_MAX_NODES, &maxn)) != 0 ||
        (rc = cf_cpus(p, K_POOL, &pool.cpu_milli)) != 0 ||
        (rc = cf_mem(p, K_POOL, &pool.mem_mb)) != 0 ||
        (rc = cf_nvlink(p, p->by_key[K_NVLINK], &mode)) != 0)
        return rc;
    pool.type = (uint16_t)type;
    pool.max_nodes = (uint32_t)maxn;
    if (p->by_key[K_PRICE] && (rc = cf_num(p, p->by_key[K_PRICE], 1e9, &pool.price_hr)) != 0)
        return rc;
    if (p->by_key[K_SPOT] &&
        (rc = cf_num(p, p->by_key[K_SPOT], 1e9, &pool.spot_interrupt_per_hr)) != 0)
        return rc;
    const cf_tok_t *dt = p->by_key[K_DELAY];
    if (dt && (dr_duration_parse(dt->val, &pool.provision_delay) != 0 || pool.provision_delay < 0))
        return TOK_ERR(p, dt, "'%.64s' is not a duration (such as 90s, 5m, 1h or 1:30:00)",
                       dt->val);
    if ((rc = cf_room(p, mt, gt, maxn, pool.gpus_per_node)) != 0)
        return rc;
    pool.first_node = (uint32_t)p->c->nnodes;
    int pi = dr_cluster_add_pool(p->c, &pool, p->err);
    if (pi < 0)
        return cf_wrap(p, pi, kt);
    if (DR_PUSH(p->pool_line, p->npool_line, p->cappool_line, kt->line) != 0)
        return cf_oom(p);
    size_t nlen = strlen(kt->val) + 16;
    char *node = malloc(nlen);
    if (!node)
        return cf_oom(p);
    for (uint64_t i = 1; i <= maxn && rc == 0; i++) {
        snprintf(node, nlen, "%s-%llu", kt->val, (unsigned long long)i);
        uint32_t idx;
        if ((rc = cf_add_node(p, kt, node, type, pool.gpus_per_node, pool.cpu_milli, pool.mem_mb,
                              &idx)) == 0 &&
            (rc = cf_set_nvlink(p, p->by_key[K_NVLINK], mode, node, idx)) == 0) {
            p->c->nodes[idx].state = DR_NODE_CLOUD;
            p->c->nodes[idx].pool = pi;
        }
    }
    free(node);
    return rc;
}

/* SchedulerPolicy=NAME[:key=val,...]: the policy the controller runs (the
 * simulator takes --policy instead).  The name is checked where the policy
 * is created: the core does not know the registry. */
static int cf_policy(cf_t *p)
{
    const cf_tok_t *t = p->by_key[K_POLICY];
    size_t n = strlen(t->val);
    if (n == 0 || n >= sizeof p->c->policy)
        return TOK_ERR(p, t, "a policy name of 1 to %zu characters", sizeof p->c->policy - 1);
    if (p->c->policy[0])
        return TOK_ERR(p, t, "given twice (already '%s')", p->c->policy);
    memcpy(p->c->policy, t->val, n + 1);
    return DR_OK;
}

/* FairShareHalfLife=TIME: the half-life of the usage fair share decays
 * (Slurm's PriorityDecayHalfLife, in its time format; 0 or UNLIMITED: no
 * decay).  Not given: 7 days, Slurm's default. */
static int cf_time(cf_t *p, const cf_tok_t *t, dr_time_t *out);
static int cf_fshalf(cf_t *p)
{
    const cf_tok_t *t = p->by_key[K_FSHALF];
    if (p->c->fairshare_half_life)
        return TOK_ERR(p, t, "given twice");
    dr_time_t h;
    int rc = cf_time(p, t, &h);
    if (rc != 0)
        return rc;
    p->c->fairshare_half_life = h > 0 ? h : DR_TIME_NEVER;
    return DR_OK;
}

/* PreemptGrace=DURATION: the longest a preempted job's --signal lead is
 * waited for before it is stopped (seconds, or with a unit: "2m"); 0: no
 * wait (preempted jobs are stopped at once, signal or not).  Not given:
 * DR_PREEMPT_GRACE_DEFAULT. */
static int cf_pgrace(cf_t *p)
{
    const cf_tok_t *t = p->by_key[K_PGRACE];
    if (p->c->preempt_grace_set)
        return TOK_ERR(p, t, "given twice");
    dr_err_t e = {0};
    dr_time_t g;
    if (dr_duration_parse_err(t->val, &g, &e) != 0)
        return TOK_ERR(p, t, "'%.64s' is not a duration (seconds, or with a unit: 90s, 2m)",
                       t->val);
    p->c->preempt_grace = g;
    p->c->preempt_grace_set = true;
    return DR_OK;
}

/* PreemptWithoutCheckpoint=YES|NO: whether the default policy may stop a
 * job that declares no checkpoints to give its GPUs to another (or to move
 * it to a faster type): such a job loses all its work, and
 * docs/scheduling.md promises it is not stopped.  NO by default. */
static int cf_pnockpt(cf_t *p)
{
    const cf_tok_t *t = p->by_key[K_PNOCKPT];
    if (p->c->preempt_nockpt_set)
        return TOK_ERR(p, t, "given twice");
    if (dr_streq_ci(t->val, "YES"))
        p->c->preempt_nockpt = true;
    else if (!dr_streq_ci(t->val, "NO"))
        return TOK_ERR(p, t, "'%.64s' is not YES or NO", t->val);
    p->c->preempt_nockpt_set = true;
    return DR_OK;
}

/* CheckpointDir=PATH: where jobs' checkpoint directories are made
 * (PATH/JOBID; shared or node-local storage the nodes mount at the same
 * path).  Absolute, as the agents see it. */
static int cf_ckptdir(cf_t *p)
{
    const cf_tok_t *t = p->by_key[K_CKPTDIR];
    size_t n = strlen(t->val);
    if (p->c->ckpt_dir[0])
        return TOK_ERR(p, t, "given twice (already '%s')", p->c->ckpt_dir);
    if (n < 2 || t->val[0] != '/' || n >= sizeof p->c->ckpt_dir)
        return TOK_ERR(p, t, "an absolute directory path of at most %zu characters",
                       sizeof p->c->ckpt_dir - 1);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)t->val[i] < 0x20)
            return TOK_ERR(p, t, "a path without control characters");
    memcpy(p->c->ckpt_dir, t->val, n + 1);
    while (n > 1 && p->c->ckpt_dir[n - 1] == '/')
        p->c->ckpt_dir[--n] = '\0';
    return DR_OK;
}

/* CheckpointKeep=N: how many committed checkpoints a job keeps (the
 * newest N; `drover ckpt commit` prunes the rest).  Not given: 3. */
static int cf_ckptkeep(cf_t *p)
{
    const cf_tok_t *t = p->by_key[K_CKPTKEEP];
    uint64_t v;
    if (p->c->ckpt_keep)
        return TOK_ERR(p, t, "given twice");
    if (dr_parse_u64(t->val, &v) != 0 || v < 1 || v > 1000000)
        return TOK_ERR(p, t, "'%.64s' is not a number of checkpoints from 1 to 1000000", t->val);
    p->c->ckpt_keep = (uint32_t)v;
    return DR_OK;
}

/* Slurm's time limits (MaxTime=, DefaultTime=): minutes, MM:SS, HH:MM:SS,
 * D-HH[:MM[:SS]], UNLIMITED / INFINITE (0), as the job-field vocabulary
 * reads --time. */
/* RequeueDefault=YES|NO: whether a batch job (or array task) that gives
 * neither --requeue nor --no-requeue goes back to the queue when its node
 * is lost (training jobs and service replicas always do).  Not given: YES,
 * as Slurm's JobRequeue=1. */
static int cf_requeue(cf_t *p)
{
    const cf_tok_t *t = p->by_key[K_REQUEUE];
    if (p->c->requeue_default != 0)
        return TOK_ERR(p, t, "given twice");
    if (dr_streq_ci(t->val, "YES"))
        p->c->requeue_default = 1;
    else if (dr_streq_ci(t->val, "NO"))
        p->c->requeue_default = -1;
    else
        return TOK_ERR(p, t, "'%.64s' is not YES or NO", t->val);
    return DR_OK;
}

/* NodeFailDrain=N/DURATION: a node on which N jobs failed (of N different
 * jobs, by a non-zero exit, a signal or a failed launch) within DURATION is
 * drained, with the reason shown; 0 or NO: never. */
static int cf_faildrain(cf_t *p)
{
    const cf_tok_t *t = p->by_key[K_FAILDRAIN];
    if (p->c->fail_drain_n || p->c->fail_drain_window)
        return TOK_ERR(p, t, "given twice");
    if (strcmp(t->val, "0") == 0 || dr_streq_ci(t->val, "NO")) {
        p->c->fail_drain_window = -1; /* said: never */
        return DR_OK;
    }
    const char *slash = strchr(t->val, '/');
    char num[24];
    uint64_t n = 0;
    dr_time_t w = 0;
    dr_err_t e = {0};
    if (!slash || (size_t)(slash - t->val) >= sizeof num)
        return TOK_ERR(p, t, "'%.64s' is not N/DURATION (e.g. 3/10m)", t->val);
    memcpy(num, t->val, (size_t)(slash - t->val));
    num[slash - t->val] = '\0';
    if (dr_parse_u64(num, &n) != 0 || n < 1 || n > 1000)
        return TOK_ERR(p, t, "'%.64s': the count must be 1 to 1000", t->val);
    if (dr_duration_parse_err(slash + 1, &w, &e) != DR_OK || w <= 0)
        return TOK_ERR(p, t, "'%.64s': the window is not a duration (e.g. 10m)", t->val);
    p->c->fail_drain_n = (uint32_t)n;
    p->c->fail_drain_window = w;
    return DR_OK;
}

static int cf_time(cf_t *p, const cf_tok_t *t, dr_time_t *out)
{
    dr_err_t e = {0};
    if (dr_time_limit_parse(t->val, out, &e) != 0)
        return TOK_ERR(p, t,
                       "'%.64s' is not a time limit (minutes, HH:MM:SS, D-HH:MM:SS or "
                       "UNLIMITED)",
                       t->val);
    return DR_OK;
}

/* PartitionName=NAME Nodes=HOSTLIST|ALL Default=YES|NO MaxTime= DefaultTime=
 * State=UP|DOWN|DRAIN|INACTIVE.  Nodes may also name pools (all of their
 * nodes); they are resolved once every line is read, as Slurm does. */
static int cf_partname(cf_t *p)
{
    const cf_tok_t *kt = p->by_key[K_PARTNAME];
    int rc = cf_name_ok(p, kt, 200, "[],:|=\"#&()*!");
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < p->nparts; i++)
        if (strcmp(p->parts[i].p.name, kt->val) == 0)
            return TOK_ERR(p, kt, "partition '%.64s' is defined twice (first on line %zu)", kt->val,
                           p->parts[i].line);
    cf_part_t cp = {.line = kt->line};
    const cf_tok_t *t;
    if ((t = p->by_key[K_DEFAULT])) {
        if (dr_streq_ci(t->val, "YES"))
            cp.p.is_default = true;
        else if (!dr_streq_ci(t->val, "NO"))
            return TOK_ERR(p, t, "'%.64s' is not YES or NO", t->val);
        for (size_t i = 0; cp.p.is_default && i < p->nparts; i++)
            if (p->parts[i].p.is_default)
                return TOK_ERR(p, t, "partition '%.64s' (line %zu) is already the default",
                               p->parts[i].p.name, p->parts[i].line);
    }
    if ((t = p->by_key[K_MAXTIME]) && (rc = cf_time(p, t, &cp.p.max_time)) != 0)
        return rc;
    if ((t = p->by_key[K_DEFTIME]) && (rc = cf_time(p, t, &cp.p.default_time)) != 0)
        return rc;
    if (cp.p.max_time && cp.p.default_time > cp.p.max_time)
        return TOK_ERR(p, p->by_key[K_DEFTIME] ? p->by_key[K_DEFTIME] : kt,
                       "DefaultTime is longer than MaxTime");
    if ((t = p->by_key[K_STATE])) {
        static const char *const st[] = {"UP", "DOWN", "DRAIN", "INACTIVE"};
        size_t k = 0;
        while (k < 4 && !dr_streq_ci(t->val, st[k]))
            k++;
        if (k == 4)
            return TOK_ERR(p, t, "'%.64s' is not UP, DOWN, DRAIN or INACTIVE", t->val);
        cp.p.state = (uint8_t)k;
    }
    if (!(cp.p.name = dr_strdup(kt->val)))
        return cf_oom(p);
    if ((t = p->by_key[K_NODES])) {
        cp.nodes_line = t->line;
        if (!(cp.nodes = dr_strdup(t->val))) {
            free(cp.p.name);
            return cf_oom(p);
        }
    }
    if (DR_PUSH(p->parts, p->nparts, p->capparts, cp) != 0) {
        free(cp.p.name);
        free(cp.nodes);
        return cf_oom(p);
    }
    return DR_OK;
}

/* Account=NAME MaxRunningGpus=N MaxRunningGpus[TYPE]=N MaxQueuedJobs=N
 * Shares=X MaxCostPerDay=USD MaxCostPerMonth=USD: an account's limits,
 * budgets and fair-share shares (account.h). */
static int cf_account(cf_t *p)
{
    const cf_tok_t *kt = p->by_key[K_ACCOUNT];
    int rc = cf_name_ok(p, kt, 200, "[],:|=\"#");
    if (rc != 0)
        return rc;
    if (dr_cluster_find_account(p->c, kt->val) >= 0)
        return TOK_ERR(p, kt, "account '%s' is declared twice", kt->val);
    dr_account_t a = {
        .shares = 1, .max_running_gpus = DR_ACCT_NO_LIMIT, .max_queued_jobs = DR_ACCT_NO_LIMIT};
    for (size_t t = 0; t < DR_MAX_GPU_TYPES; t++)
        a.max_running_gpus_type[t] = DR_ACCT_NO_LIMIT;
    uint64_t v;
    if (p->by_key[K_MAXRUNGPUS] &&
        (rc = cf_u64(p, p->by_key[K_MAXRUNGPUS], 0, DR_CONFIG_MAX_GPUS, &v)) != 0)
        return rc;
    if (p->by_key[K_MAXRUNGPUS])
        a.max_running_gpus = (int64_t)v;
    if (p->by_key[K_MAXQUEUED] && (rc = cf_u64(p, p->by_key[K_MAXQUEUED], 0, UINT32_MAX, &v)) != 0)
        return rc;
    if (p->by_key[K_MAXQUEUED])
        a.max_queued_jobs = (int64_t)v;
    if (p->by_key[K_SHARES]) {
        if ((rc = cf_num(p, p->by_key[K_SHARES], 1e9, &a.shares)) != 0)
            return rc;
        if (!(a.shares > 0))
            return TOK_ERR(p, p->by_key[K_SHARES], "must be more than 0");
    }
    /* budgets: US dollars of GPU time per UTC day / calendar month */
    const int bk[2] = {K_MAXCOSTDAY, K_MAXCOSTMONTH};
    double *bv[2] = {&a.max_cost_day, &a.max_cost_month};
    for (int i = 0; i < 2; i++) {
        *bv[i] = DR_ACCT_NO_COST;
        if (!p->by_key[bk[i]])
            continue;
        if ((rc = cf_num(p, p->by_key[bk[i]], 1e12, bv[i])) != 0)
            return rc;
        if (!(*bv[i] > 0))
            return TOK_ERR(p, p->by_key[bk[i]], "must be more than 0 (dollars)");
    }
    for (size_t i = 0; i < p->ntoks; i++) {
        const cf_tok_t *t = &p->toks[i];
        if (t->k != K_MAXRUNGPUS_T)
            continue;
        char tn[DR_GPU_NAME_MAX + 8];
        size_t pre = strlen("MaxRunningGpus["), n = strlen(t->key) - pre - 1;
        snprintf(tn, sizeof tn, "%.*s", (int)(n < sizeof tn - 1 ? n : sizeof tn - 1), t->key + pre);
        int ty = dr_cluster_find_type(p->c, tn);
        if (ty < 0)
            return cf_err(p, DR_EINVAL, t->line, t->key,
                          "'%s' is not a GPU type of this cluster (Account= lines come after "
                          "the nodes)",
                          tn);
        if (a.max_running_gpus_type[ty] != DR_ACCT_NO_LIMIT)
            return cf_err(p, DR_EINVAL, t->line, t->key, "given twice for %s",
                          p->c->types[ty].name);
        if ((rc = cf_u64(p, t, 0, DR_CONFIG_MAX_GPUS, &v)) != 0)
            return rc;
        a.max_running_gpus_type[ty] = (int64_t)v;
    }
    if (!(a.name = dr_strdup(kt->val)))
        return cf_oom(p);
    if (DR_PUSH(p->c->accounts, p->c->naccounts, p->c->accounts_cap, a) != 0) {
        free(a.name);
        return cf_oom(p);
    }
    return DR_OK;
}

/* Once every line is read: each partition's nodes (names, pools, ALL). */
static int cf_parts_resolve(cf_t *p)
{
    int rc = DR_OK;
    uint32_t *ids = NULL;
    for (size_t i = 0; i < p->nparts && rc == 0; i++) {
        cf_part_t *cp = &p->parts[i];
        dr_strvec_t names = {0};
        size_t n = 0, cap = 0;
        cf_tok_t nt = {
            .key = (char *)"Nodes", .val = cp->nodes, .line = cp->nodes_line, .k = K_NODES};
        if (cp->nodes && (rc = cf_expand(p, &nt, &names)) != 0)
            break;
        for (size_t k = 0; k < names.n && rc == 0; k++) {
            const char *nm = names.v[k];
            int id = dr_cluster_find_node(p->c, nm);
            size_t first = 0, count = 0;
            if (id >= 0) {
                first = (size_t)id;
                count = 1;
            } else if (dr_streq_ci(nm, "ALL")) {
                count = p->c->nnodes;
            } else {
                size_t q = 0;
                while (q < p->c->npools && strcmp(p->c->pools[q].name, nm) != 0)
                    q++;
                if (q == p->c->npools) {
                    rc = TOK_ERR(p, &nt,
                                 "unknown node '%.64s' (not a NodeName= node, a Pool= or ALL; "
                                 "NodeSet= lines are not read)",
                                 nm);
                    break;
                }
                first = p->c->pools[q].first_node;
                count = p->c->pools[q].max_nodes;
            }
            if (dr_grow((void **)&ids, &cap, n + count, sizeof *ids) != 0) {
                rc = cf_oom(p);
                break;
            }
            for (size_t j = 0; j < count; j++)
                ids[n++] = (uint32_t)(first + j);
        }
        dr_strvec_free(&names);
        if (rc != 0)
            break;
        if (n == 0)
            cf_note(p, cp->line, "PartitionName", "'%s' has no nodes: jobs naming it are refused",
                    cp->p.name);
        int k = dr_cluster_add_partition(p->c, &cp->p, ids, n, p->err);
        if (k < 0) {
            rc = k;
            dr_err_prefix(p->err, "%s:%zu: PartitionName: ", p->name, cp->line);
        }
        free(ids);
        ids = NULL;
    }
    free(ids);
    return rc;
}

/* A slurm.conf key drover accepts and does not act on, on a line of `kind`. */
static bool cf_slurm_ignored(int kind, const char *key)
{
    if (kind == K_NODENAME)
        return dr_slurm_node_key(key);
    if (kind == K_PARTNAME)
        return dr_slurm_part_key(key);
    return false;
}

/* NodeName=DEFAULT / PartitionName=DEFAULT: keep the line's keys (a later
 * DEFAULT line replaces a key) for the lines of that kind below it. */
static int cf_defaults(cf_t *p, int kind)
{
    cf_defs_t *d = &p->defs[kind == K_NODENAME ? 0 : 1];
    for (size_t i = 1; i < K_N; i++) {
        const cf_tok_t *t = p->by_key[i];
        if (!t || (int)i == kind)
            continue;
        size_t k = 0;
        while (k < d->n && d->t[k].k != t->k)
            k++;
        char *key = dr_strdup(t->key), *val = dr_strdup(t->val);
        if (!key || !val) {
            free(key);
            free(val);
            return cf_oom(p);
        }
        if (k == d->n) {
            cf_tok_t c = {.key = key, .val = val, .line = t->line, .k = t->k};
            if (DR_PUSH(d->t, d->n, d->cap, c) != 0) {
                free(key);
                free(val);
                return cf_oom(p);
            }
            continue;
        }
        char *ok = d->t[k].key, *ov = d->t[k].val;
        d->t[k].key = key;
        d->t[k].val = val;
        d->t[k].line = t->line;
        free(ok);
        free(ov);
    }
    return DR_OK;
}

/* A line of site settings (config_site.c): every key on it is one. */
static int cf_site(cf_t *p)
{
    for (size_t i = 0; i < p->ntoks; i++) {
        const cf_tok_t *t = &p->toks[i];
        if (!dr_site_key(t->key))
            return TOK_ERR(p, t,
                           "not a site setting (a line of AllowRootJobs=, Max...= keys "
                           "holds only those)");
        if (dr_site_set(&p->c->site, t->key, t->val, p->err) != DR_OK)
            return cf_wrap(p, DR_EINVAL, t);
    }
    return DR_OK;
}

/* One logical line (its tokens are in p->toks). */
static int cf_statement(cf_t *p)
{
    const cf_tok_t *first = &p->toks[0];
    int kind = first->k;
    if (kind < 0 && dr_site_key(first->key))
        return cf_site(p);
    if (kind < 0 && dr_slurm_global_key(first->key)) {
        for (size_t i = 0; i < p->ntoks; i++)
            cf_note(p, p->toks[i].line, p->toks[i].key, "ignored");
        return DR_OK;
    }
    if (kind < 0 || kind >= K_NKINDS)
        return TOK_ERR(p, first,
                       "unknown line kind (a line starts with NodeName=, SwitchName=, GpuType=, "
                       "Pool=, PartitionName=, Account=, FairShareHalfLife=, PreemptGrace=, "
                       "PreemptWithoutCheckpoint=, "
                       "RequeueDefault=, NodeFailDrain=, CheckpointDir=, CheckpointKeep= or "
                       "SchedulerPolicy=, or is a slurm.conf parameter)");
    memset(p->by_key, 0, sizeof p->by_key);
    for (size_t i = 0; i < p->ntoks; i++) {
        const cf_tok_t *t = &p->toks[i];
        if (t->k < 0 && cf_slurm_ignored(kind, t->key)) {
            cf_note(p, t->line, t->key, "ignored");
            continue;
        }
        if (t->k < 0)
            return TOK_ERR(p, t, "unknown key");
        if (!(kind_keys[kind] & KB(t->k)))
            return TOK_ERR(p, t, "not allowed on a %s line", key_names[kind]);
        if (p->by_key[t->k] && t->k != K_MAXRUNGPUS_T) /* one per type: cf_account */
            return TOK_ERR(p, t, "given twice");
        p->by_key[t->k] = t;
    }
    if ((kind == K_NODENAME || kind == K_PARTNAME) && dr_streq_ci(first->val, "DEFAULT"))
        return cf_defaults(p, kind);
    if (kind == K_NODENAME || kind == K_PARTNAME) {
        const cf_defs_t *d = &p->defs[kind == K_NODENAME ? 0 : 1];
        for (size_t i = 0; i < d->n; i++)
            if (!p->by_key[d->t[i].k])
                p->by_key[d->t[i].k] = &d->t[i];
    }
    switch (kind) {
    case K_NODENAME: return cf_nodename(p);
    case K_SWITCHNAME: return cf_switchname(p);
    case K_GPUTYPE: return cf_gputype(p);
    case K_POLICY: return cf_policy(p);
    case K_PARTNAME: return cf_partname(p);
    case K_ACCOUNT: return cf_account(p);
    case K_FSHALF: return cf_fshalf(p);
    case K_PGRACE: return cf_pgrace(p);
    case K_PNOCKPT: return cf_pnockpt(p);
    case K_REQUEUE: return cf_requeue(p);
    case K_FAILDRAIN: return cf_faildrain(p);
    case K_CKPTDIR: return cf_ckptdir(p);
    case K_CKPTKEEP: return cf_ckptkeep(p);
    default: return cf_pool(p);
    }
}

/* Split one physical line (NUL-terminated, modifiable) into tokens appended
 * to p->toks; *cont is set when it ends with a backslash. */
static int cf_tokenize(cf_t *p, char *s, size_t line, bool *cont)
{
    size_t n = 0;
    bool inq = false;
    for (; s[n]; n++) {
        if (s[n] == '"')
            inq = !inq;
        else if (s[n] == '#' && !inq)
            break;
    }
    s[n] = '\0'; /* drop the comment */
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    *cont = n > 0 && s[n - 1] == '\\';
    const char *w = s;
    while (isspace((unsigned char)*w))
        w++;
    if (p->ntoks == 0 && strncasecmp(w, "include", 7) == 0 &&
        (isspace((unsigned char)w[7]) || !w[7]))
        return cf_err(p, DR_EINVAL, line, "Include",
                      "not supported: put the included file's lines in this file");
    if (*cont)
        s[--n] = '\0';
    char *q = s;
    for (;;) {
        while (isspace((unsigned char)*q))
            q++;
        if (!*q)
            return DR_OK;
        char *k = q;
        while (*q && *q != '=' && !isspace((unsigned char)*q))
            q++;
        if (*q != '=') {
            *q = '\0'; /* the word is the key in the message */
            return cf_err(p, DR_EINVAL, line, k, "missing '=' (expected KEY=VALUE)");
        }
        if (q == k)
            return cf_err(p, DR_EINVAL, line, "=", "missing key before '='");
        cf_tok_t t = {.line = line};
        t.key = dr_strndup(k, (size_t)(q - k));
        if (!t.key)
            return cf_oom(p);
        t.k = key_lookup(t.key);
        q++;
        char *v = q;
        if (*q == '"') {
            char *e = strchr(q + 1, '"');
            if (!e) {
                int rc = TOK_ERR(p, &t, "unterminated quote");
                free(t.key);
                return rc;
            }
            v = q + 1;
            q = e + 1;
            if (*q && !isspace((unsigned char)*q)) {
                int rc = TOK_ERR(p, &t, "text after the closing quote");
                free(t.key);
                return rc;
            }
            t.val = dr_strndup(v, (size_t)(e - v));
        } else {
            while (*q && !isspace((unsigned char)*q))
                q++;
            t.val = dr_strndup(v, (size_t)(q - v));
        }
        if (!t.val || DR_PUSH(p->toks, p->ntoks, p->captoks, t) != 0) {
            free(t.key);
            free(t.val);
            return cf_oom(p);
        }
    }
}

static int cf_run(cf_t *p, const char *buf, size_t len)
{
    size_t pos = 0, line = 0;
    bool cont = false;
    int rc = DR_OK;
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        pos = 3; /* a UTF-8 byte order mark */
    while (pos < len && rc == 0) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t e = nl ? (size_t)(nl - buf) : len;
        line++;
        if (memchr(buf + pos, '\0', e - pos))
            return dr_err_set(p->err, DR_EINVAL, "%s:%zu: the line contains a NUL byte", p->name,
                              line);
        char *s = dr_strndup(buf + pos, e - pos);
        if (!s)
            return cf_oom(p);
        size_t sl = e - pos;
        if (sl && s[sl - 1] == '\r')
            s[sl - 1] = '\0';
        pos = e + 1;
        rc = cf_tokenize(p, s, line, &cont);
        free(s);
        if (rc == 0 && !cont && p->ntoks) {
            rc = cf_statement(p);
            cf_clear_toks(p);
        }
    }
    if (rc == 0 && p->ntoks) /* a continuation at the very end */
        rc = cf_statement(p);
    return rc;
}

int dr_config_parse(dr_cluster_t *c, const dr_catalog_t *cat, const char *name, const char *buf,
                    size_t len, dr_err_t *err)
{
    return dr_config_parse_notes(c, cat, name, buf, len, NULL, err);
}

int dr_config_parse_notes(dr_cluster_t *c, const dr_catalog_t *cat, const char *name,
                          const char *buf, size_t len, dr_strvec_t *notes, dr_err_t *err)
{
    if (!name)
        name = "config";
    dr_catalog_t builtin = {0};
    if (!cat) {
        int rc = dr_catalog_builtin(&builtin, err);
        if (rc != 0)
            return rc;
        cat = &builtin;
    }
    cf_t p = {.c = c, .cat = cat, .name = name, .err = err, .notes = notes};
    p.node_base = c->nnodes;
    p.pool_base = c->npools;
    int rc = cf_sw_room(&p, c->nswitches);
    if (rc == 0)
        rc = cf_run(&p, buf, len);
    if (rc == 0)
        rc = cf_parts_resolve(&p);
    if (rc == 0 && c->nnodes == 0)
        rc = dr_err_set(err, DR_EINVAL, "%s: no nodes (add NodeName= or Pool= lines)", name);
    if (rc == 0 && (rc = dr_cluster_finalize(c, err)) != 0)
        dr_err_prefix(err, "%s: ", name);
    cf_clear_toks(&p);
    free(p.toks);
    for (size_t i = 0; i < p.ndecls; i++)
        dr_gpu_spec_free(&p.decls[i].spec);
    free(p.decls);
    free(p.node_line);
    free(p.pool_line);
    for (size_t i = 0; i < 2; i++) {
        for (size_t k = 0; k < p.defs[i].n; k++) {
            free(p.defs[i].t[k].key);
            free(p.defs[i].t[k].val);
        }
        free(p.defs[i].t);
    }
    for (size_t i = 0; i < p.nparts; i++) {
        free(p.parts[i].p.name);
        free(p.parts[i].nodes);
    }
    free(p.parts);
    free(p.sw);
    dr_catalog_free(&builtin);
    return rc;
}

int dr_config_load(dr_cluster_t *c, const dr_catalog_t *cat, const char *path, dr_err_t *err)
{
    return dr_config_load_notes(c, cat, path, NULL, err);
}

int dr_config_load_notes(dr_cluster_t *c, const dr_catalog_t *cat, const char *path,
                         dr_strvec_t *notes, dr_err_t *err)
{
    char *buf;
    size_t len;
    int rc = dr_read_file(path, &buf, &len, err);
    if (rc != 0)
        return rc;
    rc = dr_config_parse_notes(c, cat, path, buf, len, notes, err);
    free(buf);
    return rc;
}

/* --- presets --- */

static const struct {
    const char *name, *embed, *doc;
} presets[] = {
    {"gavel-36-36-36", "cluster_gavel",
     "Gavel's simulated cluster: 36 V100 + 36 P100 + 36 K80 servers, one GPU each"},
    {"openb", "openb_nodes",
     "Alibaba openb: 1,213 GPU nodes, 6,212 GPUs of 7 models (T4, P100, V100, A10, G2, G3)"},
    {"philly", "cluster_philly",
     "64 servers x 8 P100 (512 GPUs) in 4 racks, for the Philly-derived job list"},
    {"mixed-modern", "cluster_mixed",
     "A100/H100/H200/B200/MI300X/L40S fleet on a two-level tree, plus a 16-node cloud H100 pool"},
};
#define NPRESETS (sizeof presets / sizeof *presets)

const char *const *dr_cluster_preset_names(void)
{
    static const char *const names[] = {"gavel-36-36-36", "openb", "philly", "mixed-modern", NULL};
    return names;
}

const char *dr_cluster_preset_doc(const char *name)
{
    for (size_t i = 0; name && i < NPRESETS; i++)
        if (dr_streq_ci(presets[i].name, name))
            return presets[i].doc;
    return NULL;
}

int dr_cluster_preset(dr_cluster_t *c, const dr_catalog_t *cat, const char *name, dr_err_t *err)
{
    size_t i = 0;
    while (i < NPRESETS && !(name && dr_streq_ci(presets[i].name, name)))
        i++;
    if (i == NPRESETS)
        return dr_err_set(err, DR_ENOENT,
                          "unknown cluster preset '%.64s' (known: gavel-36-36-36, openb, philly, "
                          "mixed-modern)",
                          name ? name : "");
    const struct dr_embedded *e = dr_embedded(presets[i].embed);
    if (!e)
        return dr_err_set(err, DR_ENOENT, "cluster preset '%s': its data is not built in",
                          presets[i].name);
    if (strcmp(presets[i].embed, "openb_nodes") != 0)
        return dr_config_parse(c, cat, e->path, e->data, e->len, err);
    dr_catalog_t builtin = {0};
    int rc = DR_OK;
    if (!cat) {
        rc = dr_catalog_builtin(&builtin, err);
        cat = &builtin;
    }
    if (rc == 0)
        rc = dr_openb_nodes_parse(c, cat, e->path, e->data, e->len, err);
    dr_catalog_free(&builtin);
    return rc;
}
