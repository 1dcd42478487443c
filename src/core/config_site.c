/* config_site.c - a site's security and resource settings in the cluster
 * config: one-key lines such as `AllowRootJobs=NO` or `MaxScriptBytes=1M`
 * (several may share a line).  They are what a multi-user controller needs
 * decided once per site: whether jobs may run as root, who may mint tokens
 * for others, and the byte and count limits that keep one user from
 * exhausting the controller (docs/operations.md, "Site settings").  The
 * controller applies them; this file only reads and checks the values. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "drover/cluster.h"
#include "drover/util.h"

enum {
    S_ROOT,
    S_IMPERS,
    S_SCRIPT,
    S_ENV,
    S_ARGV,
    S_USERBYTES,
    S_PENDING,
    S_STREAMS,
    S_TTL,
    S_MAXTTL,
    S_USERCOST,
    S_N
};

static const char *const names[S_N] = {
    "AllowRootJobs", "Impersonators",     "MaxScriptBytes",     "MaxEnvBytes",
    "MaxArgvBytes",  "MaxUserStoreBytes", "MaxUserPendingJobs", "MaxEventStreams",
    "TokenTtl",      "TokenMaxTtl",       "MaxUserCostPerHour"};

void dr_site_defaults(dr_site_t *s)
{
    memset(s, 0, sizeof *s);
    s->max_script_bytes = DR_SITE_MAX_SCRIPT;
    s->max_env_bytes = DR_SITE_MAX_ENV;
    s->max_argv_bytes = DR_SITE_MAX_ARGV;
    s->max_user_bytes = DR_SITE_MAX_USER;
    s->max_user_pending = DR_SITE_MAX_PENDING;
    s->max_event_streams = DR_SITE_MAX_STREAMS;
    s->token_ttl = DR_SITE_TOKEN_TTL;
    s->token_max_ttl = DR_SITE_TOKEN_MAXTTL;
}

static int lookup(const char *key)
{
    for (int i = 0; i < S_N; i++)
        if (dr_streq_ci(key, names[i]))
            return i;
    return -1;
}

bool dr_site_key(const char *key)
{
    return lookup(key) >= 0;
}

/* N, NK, NM or NG (KiB multiples, case ignored); 0 = no limit. */
static int parse_bytes(const char *v, uint64_t *out)
{
    char num[32];
    size_t n = strlen(v);
    uint64_t mul = 1;
    if (n == 0 || n >= sizeof num)
        return -1;
    switch (toupper((unsigned char)v[n - 1])) {
    case 'K': mul = 1ull << 10; break;
    case 'M': mul = 1ull << 20; break;
    case 'G': mul = 1ull << 30; break;
    default: break;
    }
    if (mul > 1)
        n--;
    memcpy(num, v, n);
    num[n] = '\0';
    uint64_t x;
    if (dr_parse_u64(num, &x) != 0 || x > (1ull << 50) / mul)
        return -1;
    *out = x * mul;
    return 0;
}

/* A comma-separated list of user names (letters, digits, . _ -). */
static bool user_list_ok(const char *v)
{
    for (const char *p = v; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._-,$", *p))
            return false;
    return true;
}

int dr_site_set(dr_site_t *s, const char *key, const char *val, dr_err_t *err)
{
    int k = lookup(key);
    if (k < 0)
        return dr_err_set(err, DR_EINVAL, "not a site setting");
    if (s->given & (1u << k))
        return dr_err_set(err, DR_EINVAL, "given twice");
    uint64_t b = 0;
    dr_time_t d = 0;
    switch (k) {
    case S_ROOT:
        if (dr_streq_ci(val, "YES"))
            s->allow_root_jobs = true;
        else if (dr_streq_ci(val, "NO"))
            s->allow_root_jobs = false;
        else
            return dr_err_set(err, DR_EINVAL, "'%.64s' is not YES or NO", val);
        break;
    case S_IMPERS:
        if (strlen(val) >= sizeof s->impersonators || !user_list_ok(val))
            return dr_err_set(err, DR_EINVAL,
                              "a comma-separated list of user names (at most %zu characters)",
                              sizeof s->impersonators - 1);
        snprintf(s->impersonators, sizeof s->impersonators, "%s", val);
        break;
    case S_SCRIPT:
    case S_ENV:
    case S_ARGV:
    case S_USERBYTES:
        if (parse_bytes(val, &b) != 0)
            return dr_err_set(err, DR_EINVAL,
                              "'%.64s' is not a size in bytes (N, NK, NM or NG; 0: no limit)", val);
        *(k == S_SCRIPT ? &s->max_script_bytes
          : k == S_ENV  ? &s->max_env_bytes
          : k == S_ARGV ? &s->max_argv_bytes
                        : &s->max_user_bytes) = b;
        break;
    case S_PENDING:
    case S_STREAMS:
        if (dr_parse_u64(val, &b) != 0 || b > 100000000)
            return dr_err_set(err, DR_EINVAL, "'%.64s' is not a count from 0 (no limit) to 1e8",
                              val);
        if (k == S_PENDING)
            s->max_user_pending = b;
        else
            s->max_event_streams = (uint32_t)b;
        break;
    case S_USERCOST: {
        double x;
        if (dr_parse_double(val, &x) != 0 || !(x >= 0) || x > 1e9)
            return dr_err_set(err, DR_EINVAL,
                              "'%.64s' is not a number of dollars from 0 (no cap) to 1e9", val);
        s->max_user_cost_hr = x;
        break;
    }
    default: /* S_TTL, S_MAXTTL */
        if (dr_duration_parse_err(val, &d, err) != DR_OK || d < DR_NSEC_PER_SEC)
            return dr_err_set(err, DR_EINVAL, "'%.64s' is not a duration of at least 1 s (8h, 30d)",
                              val);
        *(k == S_TTL ? &s->token_ttl : &s->token_max_ttl) = d;
        break;
    }
    s->given |= 1u << k;
    uint32_t both = (1u << S_TTL) | (1u << S_MAXTTL);
    if ((s->given & both) == both && s->token_ttl > s->token_max_ttl)
        return dr_err_set(err, DR_EINVAL, "TokenTtl may not be longer than TokenMaxTtl");
    return DR_OK;
}

bool dr_site_impersonator(const dr_site_t *s, const char *user)
{
    return dr_name_in_list(s->impersonators, user);
}
