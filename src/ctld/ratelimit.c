/* ratelimit.c - per-user submit rate limit (droverd --submit-rate).
 *
 * A token bucket per user: `rate` submits a second refill it, up to
 * `burst`; a submit takes one token (an array or a service is one submit,
 * as one sbatch is).  A user out of tokens gets 429 with the limit and the
 * time to wait, and nothing of the request is kept.  Slurm's rl_enable
 * works the same way (per-user bucket, refill rate, bucket size); off by
 * default, as there.  The buckets live in memory only: a restart refills
 * them, which costs at most one burst. */
#include "ctld/ctld.h"
#include "ctld/ratelimit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ctld_bucket {
    char *user;
    double tokens;
    dr_time_t at; /* when tokens was computed */
} ctld_bucket_t;

/* One bucket per user who submitted (made at their first submit). */
struct ctld_rates {
    ctld_bucket_t *v;
    size_t n, cap;
};

static ctld_bucket_t *bucket_of(dr_ctld_t *c, const char *user)
{
    if (!c->rates && !(c->rates = calloc(1, sizeof *c->rates)))
        return NULL;
    struct ctld_rates *r = c->rates;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->v[i].user, user) == 0)
            return &r->v[i];
    char *u = dr_strdup(user);
    if (!u || dr_grow((void **)&r->v, &r->cap, r->n + 1, sizeof *r->v) != 0) {
        free(u);
        return NULL;
    }
    ctld_bucket_t *b = &r->v[r->n++];
    *b = (ctld_bucket_t){u, c->o.submit_burst, DR_TIME_NEVER};
    return b;
}

int ctld_rate_admit(dr_ctld_t *c, const char *user, dr_time_t now, double *retry_s, dr_err_t *err)
{
    *retry_s = 0;
    if (c->o.submit_rate <= 0)
        return DR_OK;
    ctld_bucket_t *b = bucket_of(c, user);
    if (!b)
        return DR_OK; /* out of memory: not a reason to refuse work */
    if (b->at != DR_TIME_NEVER && now > b->at)
        b->tokens += dr_time_to_s(now - b->at) * c->o.submit_rate;
    if (b->tokens > c->o.submit_burst)
        b->tokens = c->o.submit_burst;
    b->at = now;
    if (b->tokens >= 1) {
        b->tokens -= 1;
        return DR_OK;
    }
    *retry_s = (1 - b->tokens) / c->o.submit_rate;
    return dr_err_set(err, DR_ELIMIT,
                      "submit rate limit: user %s may submit %g jobs a second (bursts of %g); "
                      "retry in %.2f s",
                      user, c->o.submit_rate, c->o.submit_burst, *retry_s);
}

void ctld_rate_free(dr_ctld_t *c)
{
    if (!c->rates)
        return;
    for (size_t i = 0; i < c->rates->n; i++)
        free(c->rates->v[i].user);
    free(c->rates->v);
    free(c->rates);
    c->rates = NULL;
}
