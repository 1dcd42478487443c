/* sched.c - the scheduler core shared by the simulator and the controller.
 *
 * Owns the pending queue, the running set, the expected-end queue and the
 * event log; applies the policy's decisions through the checked job state
 * machine.  Every change of a job's state goes through set_state(), which
 * validates the transition and appends it to the log, so the log is complete
 * by construction. */
#include "drover/sched.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/util.h"
#include "sched/budget.h"
#include "sched/endq.h"
#include "sched/fairshare.h"
#include "sched/placement_priv.h"
#include "sched/policy_util.h"

/* Running tasks per array parent, for throttles (open addressing). */
typedef struct throttle_map {
    uint64_t *key;
    uint32_t *count;
    size_t cap, n;
} throttle_map_t;

/* The jobs the scheduler holds, by id (open addressing, linear probing,
 * deletion by backward shift so there are no tombstones). */
typedef struct id_slot {
    uint64_t id;
    dr_job_t *job; /* NULL = empty */
} id_slot_t;
typedef struct id_map {
    id_slot_t *slot;
    size_t cap, n; /* cap is 0 or a power of two */
} id_map_t;

struct dr_sched {
    dr_cluster_t *c;
    const dr_policy_ops_t *ops;
    void *pstate;
    dr_place_opts_t place;
    dr_perf_view_t perf;
    dr_eventlog_t log;
    /* pending queue: pq[head..tail) in queue order; entries whose state is
     * no longer PENDING are dropped by compact() (dirty_from = lowest such). */
    dr_job_t **pq;
    size_t head, tail, cap;
    size_t dirty_from; /* lowest queue index that left PENDING, CLEAN if none */
    size_t dirty_to;   /* one past the highest such index */
    size_t nremoved;   /* how many left since the last compaction */
    /* jobs queued since the last pass */
    dr_job_t **fresh;
    size_t nfresh, fresh_cap;
    bool fresh_overflow;
    /* jobs preempted during a pass re-enter the queue after it */
    dr_job_t **requeue;
    size_t nrequeue, requeue_cap;
    dr_job_t **run;
    size_t nrun, run_cap;
    /* jobs that reached a terminal state since the last pass */
    dr_job_t **ended;
    size_t nended, ended_cap;
    /* pending jobs withdrawn since the last pass (dr_sched_withdraw) */
    dr_job_t **withdrawn;
    size_t nwithdrawn, withdrawn_cap;
    const struct dr_truth *truth;
    dr_endq_t *endq;
    throttle_map_t thr;
    id_map_t ids;
    bool in_pass;
    dr_time_t now;
    dr_pass_result_t *res;
    bool audit;
    dr_sched_stats_t stats;
    double (*rate_factor)(const void *ud, const dr_job_t *j, const dr_alloc_t *a);
    const void *rate_factor_ud;
    /* accounts: a driver's account id -> cluster account (-1 none), and the
     * milli-GPUs each cluster account's running jobs hold, per type and
     * (last) in all: naccounts x (DR_MAX_GPU_TYPES + 1) */
    int32_t *acct_of;
    size_t nacct_of;
    uint64_t *acct_milli;
    /* what each cluster account spends (budget.h); NULL when no account has
     * a budget */
    dr_budget_t *acct_cost;
    /* what each user's running jobs cost (MaxUserCostPerHour=; site) */
    dr_user_rates_t urate;
    double ucap_s; /* the cap in USD per second; 0 = none */
    /* fair share: usage per account (the implicit one last) and the rank
     * of each account's factor, the queue's second key */
    dr_fs_t fs;
};

#define CLEAN SIZE_MAX

/* --- throttle map --- */
static uint32_t *thr_slot(throttle_map_t *m, uint64_t key, bool create)
{
    if (create && (m->n + 1) * 2 > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 64;
        uint64_t *k = calloc(nc, sizeof *k);
        uint32_t *c = calloc(nc, sizeof *c);
        if (!k || !c) {
            free(k);
            free(c);
            return NULL;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->key[i]) {
                size_t h = (m->key[i] * 0x9e3779b97f4a7c15ULL) & (nc - 1);
                while (k[h])
                    h = (h + 1) & (nc - 1);
                k[h] = m->key[i];
                c[h] = m->count[i];
            }
        free(m->key);
        free(m->count);
        m->key = k;
        m->count = c;
        m->cap = nc;
    }
    if (!m->cap)
        return NULL;
    size_t h = (key * 0x9e3779b97f4a7c15ULL) & (m->cap - 1);
    while (m->key[h] && m->key[h] != key)
        h = (h + 1) & (m->cap - 1);
    if (!m->key[h]) {
        if (!create)
            return NULL;
        m->key[h] = key;
        m->n++;
    }
    return &m->count[h];
}

bool dr_sched_throttled(const dr_sched_t *s, const dr_job_t *j)
{
    if (!j->array_parent || !j->array_throttle)
        return false;
    uint32_t *c = thr_slot((throttle_map_t *)&s->thr, j->array_parent, false);
    return c && *c >= j->array_throttle;
}

static void thr_adjust(dr_sched_t *s, const dr_job_t *j, int d)
{
    if (!j->array_parent || !j->array_throttle)
        return;
    uint32_t *c = thr_slot(&s->thr, j->array_parent, true);
    if (c)
        *c = (uint32_t)((int64_t)*c + d);
}

/* --- held jobs by id --- */
static size_t id_home(const id_map_t *m, uint64_t id)
{
    return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 17) & (m->cap - 1);
}

static id_slot_t *id_find(const id_map_t *m, uint64_t id)
{
    if (!m->cap)
        return NULL;
    for (size_t h = id_home(m, id);; h = (h + 1) & (m->cap - 1)) {
        id_slot_t *e = &m->slot[h];
        if (!e->job)
            return NULL;
        if (e->id == id)
            return e;
    }
}

static int id_insert(id_map_t *m, dr_job_t *j)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 256;
        id_slot_t *ns = calloc(nc, sizeof *ns);
        if (!ns)
            return DR_ENOMEM;
        id_map_t grown = {ns, nc, 0};
        for (size_t i = 0; i < m->cap; i++)
            if (m->slot[i].job) {
                size_t h = id_home(&grown, m->slot[i].id);
                while (ns[h].job)
                    h = (h + 1) & (nc - 1);
                ns[h] = m->slot[i];
            }
        free(m->slot);
        m->slot = ns;
        m->cap = nc;
    }
    size_t h = id_home(m, j->id);
    while (m->slot[h].job)
        h = (h + 1) & (m->cap - 1);
    m->slot[h] = (id_slot_t){j->id, j};
    m->n++;
    return DR_OK;
}

/* Forget j (only j itself: a refused duplicate never replaced it). */
static void id_remove(id_map_t *m, const dr_job_t *j)
{
    id_slot_t *e = id_find(m, j->id);
    if (!e || e->job != j)
        return;
    size_t i = (size_t)(e - m->slot), mask = m->cap - 1;
    m->slot[i].job = NULL;
    m->n--;
    /* shift back the entries of the run after i that may move closer to home */
    for (size_t k = (i + 1) & mask; m->slot[k].job; k = (k + 1) & mask) {
        size_t h = id_home(m, m->slot[k].id);
        /* the entry at k may fill the hole at i unless its home lies in (i, k] */
        bool stays = i <= k ? (i < h && h <= k) : (i < h || h <= k);
        if (stays)
            continue;
        m->slot[i] = m->slot[k];
        m->slot[k].job = NULL;
        i = k;
    }
}

static int id_refuse_held(const dr_sched_t *s, const dr_job_t *j, dr_err_t *err)
{
    if (!id_find(&s->ids, j->id))
        return DR_OK;
    return dr_err_set(err, DR_EINVAL, "job %llu: the scheduler already holds a job with this id",
                      (unsigned long long)j->id);
}

dr_job_t *dr_sched_find_job(const dr_sched_t *s, uint64_t id)
{
    const id_slot_t *e = id_find(&s->ids, id);
    return e ? e->job : NULL;
}

/* --- accounts --- */
#define ACCT_W (DR_MAX_GPU_TYPES + 1)

int dr_sched_account_of(const dr_sched_t *s, const dr_job_t *j)
{
    return j->account < s->nacct_of ? s->acct_of[j->account] : -1;
}

int dr_sched_bind_account(dr_sched_t *s, uint32_t id, const char *name, dr_err_t *err)
{
    if (id >= s->nacct_of) {
        size_t n = (size_t)id + 1 > s->nacct_of * 2 ? (size_t)id + 1 : s->nacct_of * 2;
        int32_t *a = realloc(s->acct_of, n * sizeof *a);
        if (!a)
            return dr_err_set(err, DR_ENOMEM, "out of memory");
        for (size_t i = s->nacct_of; i < n; i++)
            a[i] = -1;
        s->acct_of = a;
        s->nacct_of = n;
    }
    s->acct_of[id] = dr_cluster_find_account(s->c, name);
    return DR_OK;
}

uint64_t dr_sched_account_milli(const dr_sched_t *s, int acct, int t)
{
    if (acct < 0 || (size_t)acct >= s->c->naccounts || !s->acct_milli)
        return 0;
    return s->acct_milli[(size_t)acct * ACCT_W + (t < 0 ? DR_MAX_GPU_TYPES : (size_t)t)];
}

/* The types on which account `a` has room for `need` more milli-GPUs. */
/* USD per second a run of `milli` milli-GPUs costs on type t (0 when the
 * type has no price: it cannot be counted against a budget). */
static double cost_rate(const dr_cluster_t *c, uint64_t milli, int t)
{
    double p = t >= 0 && (size_t)t < c->ntypes ? c->types[t].price_hr : NAN;
    return isfinite(p) && p > 0 ? (double)milli / 1000.0 * p / 3600.0 : 0;
}

/* The most j may still spend on type t: its request for the rest of its
 * time limit (INFINITY without one). */
static double job_max_cost(const dr_sched_t *s, const dr_job_t *j, uint64_t need, int t)
{
    double r = cost_rate(s->c, need, t);
    if (r <= 0)
        return 0;
    return j->time_limit > 0 ? r * dr_time_to_s(j->time_limit) : INFINITY;
}

/* The types on which account a's budgets leave room for j (need milli-GPUs)
 * now, or (ever) with nothing spent or running. */
static dr_typemask_t budget_room(const dr_sched_t *s, int a, const dr_job_t *j, uint64_t need,
                                 bool ever)
{
    const dr_account_t *ac = &s->c->accounts[a];
    if (!s->acct_cost || (isinf(ac->max_cost_day) && isinf(ac->max_cost_month)))
        return ~0ULL;
    const dr_budget_t *b = &s->acct_cost[a];
    double now = dr_time_to_s(s->now);
    double room = INFINITY;
    const double lim[2] = {ac->max_cost_day, ac->max_cost_month};
    for (int p = 0; p < DR_BUDGET_NPERIODS; p++) {
        if (isinf(lim[p]))
            continue;
        double left =
            ever ? lim[p] : lim[p] - dr_budget_spent(b, p, now) - dr_budget_committed(b, now);
        if (left < room)
            room = left;
    }
    dr_typemask_t m = 0;
    for (size_t t = 0; t < s->c->ntypes; t++)
        if (job_max_cost(s, j, need, (int)t) <= room)
            m |= (dr_typemask_t)1 << t;
    return m;
}

/* The types on which j's user's running jobs leave room under the site's
 * MaxUserCostPerHour= for j (need milli-GPUs) now, or (ever) with nothing
 * running. */
static dr_typemask_t user_room(const dr_sched_t *s, const dr_job_t *j, uint64_t need, bool ever)
{
    if (!(s->ucap_s > 0))
        return ~0ULL;
    double used = ever ? 0 : dr_user_rate(&s->urate, j->user);
    dr_typemask_t m = 0;
    for (size_t t = 0; t < s->c->ntypes; t++)
        if (used + cost_rate(s->c, need, (int)t) <= s->ucap_s * (1 + 1e-12))
            m |= (dr_typemask_t)1 << t;
    return m;
}

static dr_typemask_t acct_room_of(const dr_sched_t *s, int a, const dr_job_t *j, uint64_t need,
                                  bool ever)
{
    if (a < 0 || !s->acct_milli)
        return user_room(s, j, need, ever);
    static const uint64_t none[ACCT_W];
    const uint64_t *used = ever ? none : &s->acct_milli[(size_t)a * ACCT_W];
    return dr_account_room(&s->c->accounts[a], s->c->ntypes, used, used[DR_MAX_GPU_TYPES], need) &
           budget_room(s, a, j, need, ever) & user_room(s, j, need, ever);
}

static dr_typemask_t acct_room(const dr_sched_t *s, int a, const dr_job_t *j, uint64_t need)
{
    return acct_room_of(s, a, j, need, false);
}

dr_typemask_t dr_sched_account_types_ever(const dr_sched_t *s, const dr_job_t *j)
{
    return j->req.gpus_per_node
               ? acct_room_of(s, dr_sched_account_of(s, j), j, dr_job_req_milli(&j->req), true)
               : ~0ULL;
}

/* The placement gate (dr_place_opts_t.gate): policies place a job with its
 * own request, &j->req (sched.h), so the job is the one holding it. */
static dr_typemask_t acct_gate(const void *ud, const dr_job_req_t *r)
{
    const dr_sched_t *s = ud;
    const dr_job_t *j = (const dr_job_t *)(const void *)((const char *)r - offsetof(dr_job_t, req));
    return acct_room(s, dr_sched_account_of(s, j), j, dr_job_req_milli(r));
}

dr_typemask_t dr_sched_account_types(const dr_sched_t *s, const dr_job_t *j)
{
    return j->req.gpus_per_node
               ? acct_room(s, dr_sched_account_of(s, j), j, dr_job_req_milli(&j->req))
               : ~0ULL;
}

bool dr_sched_budget(const dr_sched_t *s, int acct, dr_time_t now, dr_budget_info_t *out)
{
    memset(out, 0, sizeof *out);
    if (!s->acct_cost || acct < 0 || (size_t)acct >= s->c->naccounts)
        return false;
    const dr_budget_t *b = &s->acct_cost[acct];
    double t = dr_time_to_s(now);
    out->spent_day = dr_budget_spent(b, DR_BUDGET_DAY, t);
    out->spent_month = dr_budget_spent(b, DR_BUDGET_MONTH, t);
    out->committed = dr_budget_committed(b, t);
    out->day_start = b->start[DR_BUDGET_DAY];
    out->day_closed = b->closed[DR_BUDGET_DAY];
    out->month_start = b->start[DR_BUDGET_MONTH];
    out->month_closed = b->closed[DR_BUDGET_MONTH];
    return true;
}

void dr_sched_budget_restore(dr_sched_t *s, int acct, double day_start, double day_closed,
                             double month_start, double month_closed, dr_time_t now)
{
    if (!s->acct_cost || acct < 0 || (size_t)acct >= s->c->naccounts)
        return;
    dr_budget_t *b = &s->acct_cost[acct];
    double t = dr_time_to_s(now);
    dr_budget_roll(b, t);
    if (day_start == b->start[DR_BUDGET_DAY] && day_closed > 0)
        b->closed[DR_BUDGET_DAY] += day_closed;
    if (month_start == b->start[DR_BUDGET_MONTH] && month_closed > 0)
        b->closed[DR_BUDGET_MONTH] += month_closed;
}

double dr_sched_user_cost_hr(const dr_sched_t *s, uint32_t user)
{
    return dr_user_rate(&s->urate, user) * 3600.0;
}

bool dr_sched_user_cost_blocked(const dr_sched_t *s, const dr_job_t *j)
{
    if (!(s->ucap_s > 0) || !j->req.gpus_per_node)
        return false;
    dr_typemask_t barred = dr_cluster_hostable_types(s->c, &j->req) &
                           ~user_room(s, j, dr_job_req_milli(&j->req), false);
    return barred && dr_place_fits_quick(s->c, &j->req, barred);
}

bool dr_sched_budget_blocked(const dr_sched_t *s, const dr_job_t *j)
{
    int a = dr_sched_account_of(s, j);
    if (a < 0 || !s->acct_cost || !j->req.gpus_per_node)
        return false;
    dr_typemask_t barred = dr_cluster_hostable_types(s->c, &j->req) &
                           ~budget_room(s, a, j, dr_job_req_milli(&j->req), false);
    return barred && dr_place_fits_quick(s->c, &j->req, barred);
}

bool dr_sched_account_blocked(const dr_sched_t *s, const dr_job_t *j)
{
    int a = dr_sched_account_of(s, j);
    if ((a < 0 && !(s->ucap_s > 0)) || !j->req.gpus_per_node)
        return false; /* (a user's cost cap holds jobs of no account too) */
    /* a type that could take it now, were it not for the limits */
    dr_typemask_t barred = dr_cluster_hostable_types(s->c, &j->req) & ~dr_sched_account_types(s, j);
    return barred && dr_place_fits_quick(s->c, &j->req, barred);
}

/* A run starts (+1) or stops (-1) holding its allocation's GPUs at now:
 * its account's limits count them, and its fair-share usage accrues at
 * the new rate from now on. */
static void acct_add(dr_sched_t *s, const dr_job_t *j, int d, dr_time_t now)
{
    int a = dr_sched_account_of(s, j);
    if (!j->alloc.nslots || j->alloc.slots[0].gpu == DR_NO_GPU)
        return;
    dr_fs_hold(&s->fs, dr_fs_slot(&s->fs, a), dr_alloc_milli(&j->alloc), d, now);
    if (s->ucap_s > 0) /* (only out of memory fails: then the cap counts it as not running) */
        (void)dr_user_rate_add(&s->urate, j->user,
                               d * cost_rate(s->c, dr_alloc_milli(&j->alloc), j->alloc.type));
    if (a >= 0 && s->acct_cost) {
        /* its spending, from its start (an adopted run's too) to its limit */
        double st = dr_time_to_s(j->start), lim = dr_time_to_s(j->time_limit);
        dr_budget_run(&s->acct_cost[a], cost_rate(s->c, dr_alloc_milli(&j->alloc), j->alloc.type),
                      st, j->time_limit > 0 ? st + lim : st, d, dr_time_to_s(now));
    }
    if (a < 0 || !s->acct_milli)
        return;
    uint64_t m = dr_alloc_milli(&j->alloc), *u = &s->acct_milli[(size_t)a * ACCT_W];
    if (d > 0) {
        u[j->alloc.type] += m;
        u[DR_MAX_GPU_TYPES] += m;
    } else {
        u[j->alloc.type] -= m;
        u[DR_MAX_GPU_TYPES] -= m;
    }
}

/* --- fair share --- */
static int fs_update(dr_sched_t *s, dr_time_t now);

size_t dr_sched_share_count(const dr_sched_t *s)
{
    return s->fs.n;
}

void dr_sched_share_all(const dr_sched_t *s, dr_time_t now, dr_share_info_t *out)
{
    const dr_fs_t *fs = &s->fs;
    double *u = malloc(fs->n * sizeof *u);
    double total = 0;
    for (size_t k = 0; k < fs->n; k++) {
        double dec, raw;
        dr_fs_usage_at(fs, k, now, &dec, &raw);
        out[k] = (dr_share_info_t){
            .name = k < s->c->naccounts ? s->c->accounts[k].name : NULL,
            .shares = fs->shares[k],
            .norm_shares = dr_fs_norm_shares(fs, k),
            .raw_gpu_s = raw,
            .decayed_gpu_s = dec,
            .running_milli = fs->milli[k],
        };
        if (u)
            u[k] = dec;
        total += dec;
    }
    for (size_t k = 0; k < fs->n; k++) {
        out[k].effective = total > 0 ? out[k].decayed_gpu_s / total : 0;
        /* without memory for the scratch array, the factors of the last pass */
        out[k].factor = u ? dr_fs_factor_of(fs, u, k) : fs->factor[k];
    }
    free(u);
}

int dr_sched_share_set_usage(dr_sched_t *s, size_t k, double raw_gpu_s, double decayed_gpu_s,
                             dr_time_t as_of, dr_err_t *err)
{
    if (k >= s->fs.n)
        return dr_err_set(err, DR_EINVAL, "fair share: account slot %zu of %zu", k, s->fs.n);
    if (s->in_pass)
        return dr_err_set(err, DR_ESTATE, "fair share: usage set during a pass");
    if (!(raw_gpu_s >= 0) || !(decayed_gpu_s >= 0) || !isfinite(raw_gpu_s) ||
        !isfinite(decayed_gpu_s))
        return dr_err_set(err, DR_EINVAL, "fair share: usage of %s must be finite and not negative",
                          k < s->c->naccounts ? s->c->accounts[k].name : "(no account)");
    dr_fs_advance(&s->fs, as_of); /* what ran until then is replaced, not added */
    s->fs.usage[k] = decayed_gpu_s;
    s->fs.raw[k] = raw_gpu_s;
    return fs_update(s, as_of) == DR_OK ? DR_OK : dr_err_set(err, DR_ENOMEM, "out of memory");
}

double dr_sched_fairshare_weight(const dr_sched_t *s, const dr_job_t *j)
{
    if (!s->fs.active || !(s->fs.fmax > 0))
        return 1.0;
    double w = s->fs.factor[dr_fs_slot(&s->fs, dr_sched_account_of(s, j))] / s->fs.fmax;
    return w < 1.0 ? w : 1.0; /* an uncounted account (nothing used) ranks with the first */
}

uint64_t dr_sched_fairshare_gen(const dr_sched_t *s)
{
    return s->fs.gen;
}

double dr_sched_fairshare_half_life_s(const dr_sched_t *s)
{
    return s->fs.half_life_s;
}

bool dr_sched_fairshare_active(const dr_sched_t *s)
{
    return s->fs.active;
}

/* --- state changes --- */
/* The log is in time order: a fact dated before its last record is refused
 * before anything changes (resources, queues, the job's state). */
static bool before_log(const dr_sched_t *s, dr_time_t now)
{
    return (s->log.n > 0 || s->log.nnode > 0) && now < dr_eventlog_last_t(&s->log);
}

static int time_refused(const dr_sched_t *s, const char *what, dr_time_t now, dr_err_t *err)
{
    return dr_err_set(err, DR_EINVAL,
                      "%s at t=%lld ns is before the event log's last record (t=%lld ns)", what,
                      (long long)now, (long long)dr_eventlog_last_t(&s->log));
}

static int set_state(dr_sched_t *s, dr_job_t *j, dr_job_state_t to, dr_time_t now,
                     const char *detail, dr_err_t *err)
{
    dr_job_state_t from = (dr_job_state_t)j->state;
    if (!dr_job_transition_ok(from, to))
        return dr_err_set(err, DR_ESTATE, "job %llu: invalid transition %s -> %s",
                          (unsigned long long)j->id, dr_job_state_name(from),
                          dr_job_state_name(to));
    /* Log first: a refused record leaves the job in its old state, never in
     * a state the log does not show (a job must not be lost).  The message
     * is only formatted on failure: this is the hot path. */
    if (before_log(s, now)) {
        char what[96];
        snprintf(what, sizeof what, "job %llu: %s -> %s", (unsigned long long)j->id,
                 dr_job_state_name(from), dr_job_state_name(to));
        return time_refused(s, what, now, err);
    }
    int rc = dr_eventlog_append(&s->log, now, j, from, to, detail);
    if (rc != DR_OK)
        return dr_err_set(err, rc, "job %llu: cannot append to the event log",
                          (unsigned long long)j->id);
    j->state = (uint8_t)to;
    if (dr_job_state_terminal(to)) {
        j->end = now;
        id_remove(&s->ids, j);
        /* history for the policies; if memory runs out they learn less */
        (void)DR_PUSH(s->ended, s->nended, s->ended_cap, j);
    }
    return DR_OK;
}

/* The rank of j's account's fair-share factor (0: the highest). */
static inline uint32_t fs_rank(const dr_sched_t *s, const dr_job_t *j)
{
    return s->fs.rank[dr_fs_slot(&s->fs, dr_sched_account_of(s, j))];
}

/* Queue order: priority desc, fair-share factor desc (between accounts
 * whose factors differ), submit asc, id asc.  The user's priority comes
 * first, as an explicit order does (drover update priority=); fair share
 * then orders the accounts, and submit time the jobs of one account.  With
 * every factor equal (one account, or none used yet) this is the order of
 * priority, submit, id exactly. */
static inline bool before(const dr_sched_t *s, const dr_job_t *a, const dr_job_t *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    if (s->fs.active) {
        uint32_t ra = fs_rank(s, a), rb = fs_rank(s, b);
        if (ra != rb)
            return ra < rb;
    }
    if (a->submit != b->submit)
        return a->submit < b->submit;
    return a->id < b->id;
}

/* While pending, job->sched_slot is the job's absolute index in pq. */
#define NOT_QUEUED UINT32_MAX

static void mark_removed(dr_sched_t *s, const dr_job_t *j)
{
    if (j->sched_slot == NOT_QUEUED)
        return; /* a job preempted in this pass is not in the queue */
    if (j->sched_slot < s->dirty_from)
        s->dirty_from = j->sched_slot;
    if (j->sched_slot >= s->dirty_to)
        s->dirty_to = (size_t)j->sched_slot + 1;
    s->nremoved++;
}

static void reslot(dr_sched_t *s, size_t from)
{
    for (size_t i = from; i < s->tail; i++)
        s->pq[i]->sched_slot = (uint32_t)i;
}

/* Drop jobs that left PENDING (all of them in [dirty_from, dirty_to)).
 * FIFO-like passes start a prefix of the queue, which costs O(started);
 * otherwise the shorter side moves: the jobs before dirty_to shift towards
 * the tail (backfill starts jobs near the front of a long queue), or the
 * jobs after dirty_from shift towards the head.  Order is kept either way;
 * only the absolute slots differ. */
static void compact(dr_sched_t *s)
{
    if (s->dirty_from == CLEAN)
        return;
    size_t removed = 0;
    if (s->dirty_from <= s->head)
        while (s->head < s->tail && s->pq[s->head]->state != DR_JOB_PENDING) {
            s->head++;
            removed++;
        }
    size_t lo = s->dirty_from > s->head ? s->dirty_from : s->head;
    size_t hi = s->dirty_to < s->tail ? s->dirty_to : s->tail;
    if (removed < s->nremoved && lo < hi && hi - s->head <= s->tail - lo) {
        size_t w = hi;
        for (size_t r = hi; r-- > s->head;)
            if (s->pq[r]->state == DR_JOB_PENDING) {
                s->pq[--w] = s->pq[r];
                s->pq[w]->sched_slot = (uint32_t)w;
            }
        s->head = w;
    } else if (removed < s->nremoved) {
        size_t w = lo;
        for (size_t r = lo; r < s->tail; r++)
            if (s->pq[r]->state == DR_JOB_PENDING) {
                s->pq[w] = s->pq[r];
                s->pq[w]->sched_slot = (uint32_t)w;
                w++;
            }
        s->tail = w;
    }
    s->dirty_from = CLEAN;
    s->dirty_to = 0;
    s->nremoved = 0;
    /* reclaim the space before head once it dominates */
    if (s->head > 4096 && s->head > (s->tail - s->head)) {
        memmove(s->pq, s->pq + s->head, (s->tail - s->head) * sizeof *s->pq);
        s->tail -= s->head;
        s->head = 0;
        reslot(s, 0);
    }
}

static int pq_insert(dr_sched_t *s, dr_job_t *j)
{
    compact(s);
    if (s->tail == s->cap) {
        /* reuse the space before head only if there is enough of it, so the
         * O(queue) move happens at most once per queue/4 removals */
        if (s->head > 0 && s->head >= (s->tail - s->head) / 4) {
            memmove(s->pq, s->pq + s->head, (s->tail - s->head) * sizeof *s->pq);
            s->tail -= s->head;
            s->head = 0;
            reslot(s, 0);
        }
        if (s->tail == s->cap && dr_grow((void **)&s->pq, &s->cap, s->tail + 1, sizeof *s->pq))
            return DR_ENOMEM;
    }
    /* common case: arrivals come in order and go to the back */
    size_t pos = s->tail;
    if (s->tail > s->head && before(s, j, s->pq[s->tail - 1])) {
        size_t lo = s->head, hi = s->tail;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (before(s, j, s->pq[mid]))
                hi = mid;
            else
                lo = mid + 1;
        }
        pos = lo;
        memmove(s->pq + pos + 1, s->pq + pos, (s->tail - pos) * sizeof *s->pq);
    }
    s->pq[pos] = j;
    s->tail++;
    reslot(s, pos);
    if (!s->fresh_overflow && DR_PUSH(s->fresh, s->nfresh, s->fresh_cap, j) != 0)
        s->fresh_overflow = true; /* policies then see "everything is fresh" */
    return DR_OK;
}

/* A queue entry's sort key, self-contained (qsort has no context). */
typedef struct qkey {
    int32_t priority;
    uint32_t rank;
    dr_time_t submit;
    uint64_t id;
    dr_job_t *j;
} qkey_t;

static int qkey_cmp(const void *pa, const void *pb)
{
    const qkey_t *a = pa, *b = pb;
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->submit != b->submit)
        return a->submit < b->submit ? -1 : 1;
    return a->id < b->id ? -1 : (a->id > b->id);
}

/* Accrue usage to now and refresh the factors; when the accounts' ranks
 * changed, put the queue in its new order.  Every pending job then counts
 * as fresh, and the fair-share generation tells policies that keep state
 * (sched.h) that relative chances moved.  O(accounts) when nothing moved;
 * an O(queue log queue) sort when it did. */
static int fs_update(dr_sched_t *s, dr_time_t now)
{
    dr_fs_advance(&s->fs, now);
    if (!dr_fs_refresh(&s->fs))
        return DR_OK;
    compact(s);
    size_t n = s->tail - s->head;
    if (n < 2)
        return DR_OK;
    qkey_t *k = malloc(n * sizeof *k);
    if (!k)
        return DR_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        dr_job_t *j = s->pq[s->head + i];
        k[i] = (qkey_t){(int32_t)j->priority, fs_rank(s, j), j->submit, j->id, j};
    }
    qsort(k, n, sizeof *k, qkey_cmp);
    for (size_t i = 0; i < n; i++)
        s->pq[s->head + i] = k[i].j;
    free(k);
    reslot(s, s->head);
    s->fresh_overflow = true;
    return DR_OK;
}

static int cmp_slot(const void *a, const void *b)
{
    const dr_job_t *x = *(dr_job_t *const *)a, *y = *(dr_job_t *const *)b;
    return x->sched_slot < y->sched_slot ? -1 : x->sched_slot > y->sched_slot;
}

static int run_add(dr_sched_t *s, dr_job_t *j)
{
    if (DR_PUSH(s->run, s->nrun, s->run_cap, j) != 0)
        return DR_ENOMEM;
    j->sched_slot = (uint32_t)(s->nrun - 1);
    if (dr_endq_insert(s->endq, j, dr_sched_expected_end(j)) != 0) {
        s->nrun--;
        return DR_ENOMEM;
    }
    thr_adjust(s, j, +1);
    return DR_OK;
}

static void run_remove(dr_sched_t *s, dr_job_t *j)
{
    uint32_t k = j->sched_slot;
    if (k < s->nrun && s->run[k] == j) {
        s->run[k] = s->run[--s->nrun];
        s->run[k]->sched_slot = k;
    }
    dr_endq_remove(s->endq, j, dr_sched_expected_end(j));
    thr_adjust(s, j, -1);
}

dr_time_t dr_sched_expected_end(const dr_job_t *j)
{
    if (j->time_limit <= 0 || j->start > DR_TIME_NEVER - j->time_limit)
        return DR_TIME_NEVER;
    return j->start + j->time_limit;
}

/* --- lifecycle --- */
int dr_sched_create(dr_sched_t **out, dr_cluster_t *c, const dr_sched_opts_t *o, dr_err_t *err)
{
    *out = NULL;
    if (!dr_cluster_finalized(c))
        return dr_err_set(err, DR_ESTATE, "scheduler: cluster is not finalised");
    char name[64];
    const char *opts = "";
    const char *colon = strchr(o->policy ? o->policy : "", ':');
    snprintf(name, sizeof name, "%.*s", colon ? (int)(colon - o->policy) : 63,
             o->policy ? o->policy : "");
    if (colon)
        opts = colon + 1;
    const dr_policy_ops_t *ops = dr_policy_find(name);
    if (!ops)
        return dr_err_set(err, DR_ENOENT, "unknown policy '%s' (try: %s)", name,
                          dr_policy_names_joined());
    if (ops->oracle && !o->truth)
        return dr_err_set(err, DR_EINVAL,
                          "policy '%s' is an oracle: it reads true run times, which only the "
                          "simulator has",
                          name);
    dr_sched_t *s = calloc(1, sizeof *s);
    if (!s)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    s->c = c;
    s->ops = ops;
    s->place.strategy = o->placement;
    if (o->perf)
        s->perf = *o->perf;
    s->audit = o->audit;
    s->rate_factor = o->rate_factor;
    s->rate_factor_ud = o->rate_factor_ud;
    s->truth = ops->oracle ? o->truth : NULL;
    s->dirty_from = CLEAN;
    s->ucap_s = c->site.max_user_cost_hr > 0 ? c->site.max_user_cost_hr / 3600.0 : 0;
    if (s->ucap_s > 0) {
        s->place.gate = acct_gate;
        s->place.gate_ud = s;
    }
    if (c->naccounts) {
        s->acct_milli = calloc(c->naccounts * ACCT_W, sizeof *s->acct_milli);
        if (!s->acct_milli) {
            free(s);
            return dr_err_set(err, DR_ENOMEM, "out of memory");
        }
        s->place.gate = acct_gate;
        s->place.gate_ud = s;
        bool budgets = false;
        for (size_t a = 0; a < c->naccounts; a++)
            budgets |= !isinf(c->accounts[a].max_cost_day) || !isinf(c->accounts[a].max_cost_month);
        if (budgets && !(s->acct_cost = calloc(c->naccounts, sizeof *s->acct_cost))) {
            free(s->acct_milli);
            free(s);
            return dr_err_set(err, DR_ENOMEM, "out of memory");
        }
    }
    dr_eventlog_init(&s->log);
    s->endq = dr_endq_create();
    if (!s->endq || dr_fs_init(&s->fs, c) != 0) {
        dr_endq_destroy(s->endq);
        free(s->acct_milli);
        free(s->acct_cost);
        free(s);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    dr_policy_env_t env = {.seed = o->seed};
    if (ops->create(&s->pstate, opts, &env, err) != 0) {
        dr_endq_destroy(s->endq);
        dr_eventlog_free(&s->log);
        dr_fs_free(&s->fs);
        free(s->acct_milli);
        free(s->acct_cost);
        free(s);
        return dr_err_prefix(err, "policy %s: ", name);
    }
    *out = s;
    return DR_OK;
}

void dr_sched_destroy(dr_sched_t *s)
{
    if (!s)
        return;
    if (s->ops && s->ops->destroy)
        s->ops->destroy(s->pstate);
    free(s->pq);
    free(s->requeue);
    free(s->fresh);
    free(s->run);
    free(s->ended);
    free(s->withdrawn);
    free(s->acct_of);
    free(s->acct_milli);
    free(s->acct_cost);
    dr_user_rates_free(&s->urate);
    dr_fs_free(&s->fs);
    dr_endq_destroy(s->endq);
    free(s->thr.key);
    free(s->thr.count);
    free(s->ids.slot);
    dr_eventlog_free(&s->log);
    free(s);
}

/* Submit (restore = false) or restore a PENDING job: the same checks and
 * queue insertion; a restored job keeps what it has shown so far. */
static int enqueue(dr_sched_t *s, dr_job_t *j, dr_time_t now, bool restore, dr_err_t *err)
{
    if (j->state != DR_JOB_PENDING)
        return dr_err_set(err, DR_ESTATE, "job %llu: %s in state %s", (unsigned long long)j->id,
                          restore ? "restored" : "submitted", dr_job_state_name(j->state));
    int rc = id_refuse_held(s, j, err);
    if (rc != DR_OK)
        return rc;
    if (dr_eventlog_append(&s->log, now, j, DR_JOB_PENDING, DR_JOB_PENDING,
                           restore ? "restored" : NULL) != 0)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    if (!restore)
        j->first_start = DR_TIME_NEVER;
    j->end = DR_TIME_NEVER;
    j->work_rate = 0;
    j->work_t = now;
    dr_err_t why = {0};
    rc = dr_cluster_req_possible(s->c, &j->req, &why);
    if (rc == DR_OK && j->req.gpus_per_node && !dr_perf_runnable(&s->perf, s->c, j)) {
        rc = DR_ENOSPC;
        dr_err_set(&why, rc, "no GPU type in this cluster can run it (perf class '%s')",
                   s->perf.table && j->perf_class < s->perf.table->nclasses
                       ? s->perf.table->class_names[j->perf_class]
                       : "?");
    }
    if (rc != DR_OK) {
        char detail[DR_ERR_MSG_MAX + 32];
        snprintf(detail, sizeof detail, "rejected: %s", why.msg);
        int rc2 = set_state(s, j, DR_JOB_FAILED, now, detail, err);
        if (rc2 != DR_OK)
            return rc2;
        return dr_err_set(err, DR_ENOSPC, "job %llu can never run here: %s",
                          (unsigned long long)j->id, why.msg);
    }
    if (id_insert(&s->ids, j) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    if (pq_insert(s, j) != DR_OK) {
        id_remove(&s->ids, j);
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    return DR_OK;
}

int dr_sched_submit(dr_sched_t *s, dr_job_t *j, dr_time_t now, dr_err_t *err)
{
    return enqueue(s, j, now, false, err);
}

int dr_sched_restore(dr_sched_t *s, dr_job_t *j, dr_time_t now, dr_err_t *err)
{
    return enqueue(s, j, now, true, err);
}

int dr_sched_withdraw(dr_sched_t *s, dr_job_t *j, dr_time_t now, const char *why, dr_err_t *err)
{
    if (s->in_pass || j->state != DR_JOB_PENDING || dr_sched_find_job(s, j->id) != j ||
        j->sched_slot == NOT_QUEUED)
        return dr_err_set(err, DR_ESTATE, "job %llu: not pending in the queue",
                          (unsigned long long)j->id);
    if (before_log(s, now))
        return time_refused(s, "job withdrawal", now, err);
    if (DR_PUSH(s->withdrawn, s->nwithdrawn, s->withdrawn_cap, j) != 0 ||
        dr_eventlog_append(&s->log, now, j, DR_JOB_PENDING, DR_JOB_PENDING, why) != DR_OK) {
        if (s->nwithdrawn && s->withdrawn[s->nwithdrawn - 1] == j)
            s->nwithdrawn--;
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    }
    /* out of the queue now (rare: an O(queue) move is fine), and out of
     * the fresh list, so that no policy sees it as a candidate */
    compact(s);
    size_t k = j->sched_slot;
    memmove(s->pq + k, s->pq + k + 1, (s->tail - k - 1) * sizeof *s->pq);
    s->tail--;
    reslot(s, k);
    j->sched_slot = NOT_QUEUED;
    for (size_t i = 0; i < s->nfresh; i++)
        if (s->fresh[i] == j) {
            memmove(s->fresh + i, s->fresh + i + 1, (s->nfresh - i - 1) * sizeof *s->fresh);
            s->nfresh--;
            break;
        }
    id_remove(&s->ids, j);
    return DR_OK;
}

/* The rate j makes progress at on its allocation. */
static double start_rate(const dr_sched_t *s, const dr_job_t *j)
{
    double rate = dr_perf_rate(&s->perf, j, j->alloc.type);
    if (s->rate_factor)
        rate *= s->rate_factor(s->rate_factor_ud, j, &j->alloc);
    return rate;
}

/* An allocation handed in by a driver: something to book, every GPU slot
 * on a node of its type, nnodes = its runs of slots (one per node). */
static int alloc_check(const dr_sched_t *s, const dr_job_t *j, const dr_alloc_t *a, dr_err_t *err)
{
    unsigned long long id = (unsigned long long)j->id;
    if (a->nslots == 0 || !a->slots)
        return dr_err_set(err, DR_EINVAL, "job %llu: adopted with an empty allocation", id);
    uint32_t runs = 0;
    for (uint32_t i = 0; i < a->nslots; i++) {
        const dr_slot_t *sl = &a->slots[i];
        if (sl->node >= s->c->nnodes)
            return dr_err_set(err, DR_EINVAL, "job %llu: allocation: node %u does not exist", id,
                              sl->node);
        runs += i == 0 || a->slots[i - 1].node != sl->node;
        const dr_node_t *n = &s->c->nodes[sl->node];
        if (sl->gpu != DR_NO_GPU && (n->ngpus == 0 || n->type != a->type))
            return dr_err_set(err, DR_EINVAL,
                              "job %llu: allocation: %s has no GPUs of type %s (the allocation's)",
                              id, n->name,
                              a->type < s->c->ntypes ? s->c->types[a->type].name : "?");
    }
    if (runs != a->nnodes)
        return dr_err_set(err, DR_EINVAL,
                          "job %llu: allocation: nnodes is %u but its slots name %u nodes", id,
                          a->nnodes, runs);
    return DR_OK;
}

int dr_sched_adopt(dr_sched_t *s, dr_job_t *j, const dr_alloc_t *alloc, dr_time_t now,
                   dr_err_t *err)
{
    if (s->in_pass)
        return dr_err_set(err, DR_ESTATE, "job %llu: adopted during a pass",
                          (unsigned long long)j->id);
    if (j->state != DR_JOB_RUNNING && j->state != DR_JOB_STARTING)
        return dr_err_set(err, DR_ESTATE, "job %llu: adopted while %s (running or starting only)",
                          (unsigned long long)j->id, dr_job_state_name(j->state));
    if (before_log(s, now))
        return time_refused(s, "job adoption", now, err);
    int rc = id_refuse_held(s, j, err);
    if (rc == DR_OK)
        rc = alloc_check(s, j, alloc, err);
    if (rc != DR_OK)
        return rc;
    dr_alloc_t a;
    if (dr_alloc_copy(&a, alloc) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    if ((rc = dr_cluster_take(s->c, &a, err)) != DR_OK) {
        dr_alloc_free(&a);
        dr_err_prefix(err, "job %llu: ", (unsigned long long)j->id);
        return rc;
    }
    dr_alloc_describe(s->c, &a);
    j->alloc = a;
    j->end = DR_TIME_NEVER;
    j->work_rate = 0;
    j->work_t = now;
    dr_job_set_rate(j, now, start_rate(s, j));
    rc = dr_eventlog_append(&s->log, now, j, (dr_job_state_t)j->state, (dr_job_state_t)j->state,
                            "adopted");
    if (rc == DR_OK && (rc = run_add(s, j)) == DR_OK && (rc = id_insert(&s->ids, j)) != DR_OK)
        run_remove(s, j);
    if (rc == DR_OK)
        acct_add(s, j, +1, now); /* an adopted run counts against its account's limits */
    if (rc != DR_OK) {
        /* the log may hold the record; the job is not running here though */
        dr_job_set_rate(j, now, 0);
        dr_cluster_give(s->c, &j->alloc);
        dr_alloc_free(&j->alloc);
        return dr_err_set(err, rc, "job %llu: out of memory adopting it",
                          (unsigned long long)j->id);
    }
    return DR_OK;
}

int dr_sched_decide_start(dr_sched_t *s, dr_job_t *j, dr_alloc_t *alloc)
{
    int a = dr_sched_account_of(s, j);
    bool over = s->place.gate && alloc->nslots && alloc->slots[0].gpu != DR_NO_GPU &&
                !(acct_room(s, a, j, dr_alloc_milli(alloc)) >> alloc->type & 1);
    if (!s->in_pass || j->state != DR_JOB_PENDING || over) {
        dr_cluster_give(s->c, alloc);
        dr_alloc_free(alloc);
        return over ? DR_ELIMIT : DR_ESTATE;
    }
    mark_removed(s, j);
    j->alloc = *alloc;
    memset(alloc, 0, sizeof *alloc);
    j->start = s->now;
    if (j->first_start == DR_TIME_NEVER)
        j->first_start = s->now;
    j->nstarts++;
    dr_job_set_rate(j, s->now, start_rate(s, j));
    if (j->req.shard) {
        s->stats.shard_starts++;
        s->stats.locality_hits += dr_alloc_holds_shard(s->c, &j->alloc, j->req.shard);
    }
    unsigned loc = j->alloc.locality < DR_LOC_N ? j->alloc.locality : DR_LOC_NETWORK;
    s->stats.starts_by_locality[loc]++;
    if (j->alloc.nnodes > 1)
        s->stats.leaves_spanned += dr_alloc_nleaves(s->c, &j->alloc);
    int rc = set_state(s, j, DR_JOB_STARTING, s->now, NULL, NULL);
    if (rc == DR_OK)
        rc = run_add(s, j);
    if (rc == DR_OK)
        acct_add(s, j, +1, s->now);
    if (rc == DR_OK)
        rc = DR_PUSH(s->res->started, s->res->nstarted, s->res->started_cap, j);
    s->stats.starts++;
    return rc;
}

/* Stop a running job and give its resources back; the caller decides where
 * it goes next (preempted, requeued, ended). */
static void release(dr_sched_t *s, dr_job_t *j, dr_time_t now)
{
    if (now > j->start)
        j->attained_gpu_s +=
            dr_time_to_s(now - j->start) * (double)dr_alloc_milli(&j->alloc) / 1000.0;
    dr_job_set_rate(j, now, 0);
    run_remove(s, j);
    acct_add(s, j, -1, now);
    dr_cluster_give(s->c, &j->alloc);
}

int dr_sched_decide_preempt(dr_sched_t *s, dr_job_t *j, const char *why)
{
    if (!s->in_pass || (j->state != DR_JOB_RUNNING && j->state != DR_JOB_STARTING))
        return DR_ESTATE;
    release(s, j, s->now);
    /* a preempted job saves its state first (one stopped while it was
     * still reloading keeps the checkpoint it had) */
    if (j->work_done < j->work_ckpt)
        j->work_done = j->work_ckpt;
    j->work_ckpt = j->work_done;
    j->npreempt++;
    j->sched_slot = NOT_QUEUED; /* re-enters the queue after the pass */
    int rc = set_state(s, j, DR_JOB_PREEMPTED, s->now, why, NULL);
    dr_alloc_free(&j->alloc);
    if (rc == DR_OK)
        rc = set_state(s, j, DR_JOB_PENDING, s->now, NULL, NULL);
    if (rc == DR_OK)
        rc = DR_PUSH(s->requeue, s->nrequeue, s->requeue_cap, j);
    if (rc == DR_OK)
        rc = DR_PUSH(s->res->preempted, s->res->npreempted, s->res->preempted_cap, j);
    s->stats.preemptions++;
    return rc;
}

/* Every change of a node's state goes through here, so the log has a
 * record of each (as set_state does for jobs).  The caller has checked the
 * time. */
static int node_state(dr_sched_t *s, uint32_t node, dr_node_state_t st, dr_time_t now,
                      dr_err_t *err)
{
    dr_node_t *n = &s->c->nodes[node];
    if (n->state == st)
        return DR_OK;
    if (dr_eventlog_append_node(&s->log, now, node, n->state, (uint8_t)st, NULL) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "node %s: cannot append to the event log", n->name);
    dr_cluster_set_state(s->c, node, st);
    return DR_OK;
}

int dr_sched_decide_provision(dr_sched_t *s, uint32_t pool, uint32_t nodes)
{
    if (!s->in_pass)
        return DR_ESTATE;
    if (pool >= s->c->npools)
        return DR_EINVAL;
    const dr_pool_t *p = &s->c->pools[pool];
    uint32_t avail = 0;
    for (uint32_t k = 0; k < p->max_nodes; k++)
        avail += s->c->nodes[p->first_node + k].state == DR_NODE_CLOUD;
    if (avail < nodes)
        return DR_ENOSPC;
    for (uint32_t k = 0; k < p->max_nodes && nodes > 0; k++) {
        uint32_t n = p->first_node + k;
        if (s->c->nodes[n].state != DR_NODE_CLOUD)
            continue;
        if (DR_PUSH(s->res->provision, s->res->nprovision, s->res->provision_cap, n) != 0 ||
            node_state(s, n, DR_NODE_PROVISIONING, s->now, NULL) != DR_OK)
            return DR_ENOMEM;
        nodes--;
    }
    return DR_OK;
}

int dr_sched_decide_release(dr_sched_t *s, uint32_t node)
{
    if (!s->in_pass)
        return DR_ESTATE;
    if (node >= s->c->nnodes || s->c->nodes[node].pool < 0)
        return DR_EINVAL;
    const dr_node_t *n = &s->c->nodes[node];
    if (n->njobs > 0 || (n->state != DR_NODE_UP && n->state != DR_NODE_PROVISIONING))
        return DR_ESTATE;
    if (DR_PUSH(s->res->release, s->res->nrelease, s->res->release_cap, node) != 0)
        return DR_ENOMEM;
    return node_state(s, node, DR_NODE_CLOUD, s->now, NULL);
}

int dr_sched_decide_wait(dr_sched_t *s, dr_job_t *j, const char *why)
{
    if (!s->in_pass)
        return DR_ESTATE;
    if (!j || !why || j->state != DR_JOB_PENDING)
        return DR_EINVAL;
    dr_pass_result_t *r = s->res;
    if (dr_grow((void **)&r->waits, &r->waits_cap, r->nwaits + 1, sizeof *r->waits) != 0)
        return DR_ENOMEM;
    dr_wait_note_t *w = &r->waits[r->nwaits++];
    w->job = j;
    snprintf(w->why, sizeof w->why, "%s", why);
    return DR_OK;
}

int dr_sched_pass(dr_sched_t *s, dr_time_t now, dr_pass_result_t *res, dr_err_t *err)
{
    res->nstarted = res->npreempted = 0;
    res->nprovision = res->nrelease = 0;
    res->nwaits = 0;
    res->wake_at = DR_TIME_NEVER;
    compact(s);
    if (fs_update(s, now) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    s->in_pass = true;
    s->now = now;
    s->res = res;
    /* fresh jobs still pending, in queue order */
    size_t nf = 0;
    for (size_t i = 0; i < s->nfresh; i++)
        if (s->fresh[i]->state == DR_JOB_PENDING)
            s->fresh[nf++] = s->fresh[i];
    if (nf > 1)
        qsort(s->fresh, nf, sizeof *s->fresh, cmp_slot);
    dr_sched_view_t v = {
        .cluster = s->c,
        .pending = s->pq ? s->pq + s->head : NULL, /* no queue yet: NULL + 0 is UB */
        .npending = s->tail - s->head,
        .running = s->run,
        .nrunning = s->nrun,
        .fresh = s->fresh_overflow ? s->pq + s->head : s->fresh,
        .nfresh = s->fresh_overflow ? s->tail - s->head : nf,
        .ended = s->ended,
        .nended = s->nended,
        .withdrawn = s->withdrawn,
        .nwithdrawn = s->nwithdrawn,
        .by_end = s->endq,
        .truth = s->truth,
        .perf = &s->perf,
        .place = &s->place,
        .now = now,
        .sched = s,
    };
    /* the policy may start jobs (which changes s->run); it must read
     * v.running only before its first decision, as documented */
    dr_time_t wake = DR_TIME_NEVER;
    int rc = s->ops->pass(s->pstate, &v, &wake, err);
    s->in_pass = false;
    s->stats.passes++;
    s->nfresh = 0;
    s->nended = 0;
    s->nwithdrawn = 0;
    s->fresh_overflow = false;
    /* with budgets, a new day (or month) gives spending room back: jobs
     * waiting for it are planned again then, whatever the policy asked */
    if (s->acct_cost && dr_sched_npending(s) > 0) {
        dr_time_t day =
            dr_time_from_s(dr_budget_period_start(DR_BUDGET_DAY, dr_time_to_s(now)) + 86400.0);
        if (wake == DR_TIME_NEVER || day < wake)
            wake = day;
    }
    res->wake_at = wake;
    compact(s);
    for (size_t i = 0; i < s->nrequeue && rc == DR_OK; i++)
        if (s->requeue[i]->state == DR_JOB_PENDING && pq_insert(s, s->requeue[i]) != DR_OK)
            rc = dr_err_set(err, DR_ENOMEM, "out of memory");
    s->nrequeue = 0;
    if (rc == DR_OK && s->audit) {
        const dr_alloc_t **allocs = malloc((s->nrun ? s->nrun : 1) * sizeof *allocs);
        if (!allocs)
            return dr_err_set(err, DR_ENOMEM, "out of memory");
        for (size_t i = 0; i < s->nrun; i++)
            allocs[i] = &s->run[i]->alloc;
        rc = dr_cluster_audit(s->c, allocs, s->nrun, err);
        free(allocs);
    }
    return rc;
}

int dr_sched_job_running(dr_sched_t *s, dr_job_t *j, dr_time_t now, dr_err_t *err)
{
    return set_state(s, j, DR_JOB_RUNNING, now, NULL, err);
}

int dr_sched_job_ended(dr_sched_t *s, dr_job_t *j, dr_job_state_t final, dr_time_t now,
                       const char *detail, dr_err_t *err)
{
    if (!dr_job_state_terminal(final))
        return dr_err_set(err, DR_EINVAL, "job %llu: %s is not a final state",
                          (unsigned long long)j->id, dr_job_state_name(final));
    if (j->state != DR_JOB_RUNNING && j->state != DR_JOB_STARTING && j->state != DR_JOB_COMPLETING)
        return dr_err_set(err, DR_ESTATE, "job %llu: ended while %s", (unsigned long long)j->id,
                          dr_job_state_name(j->state));
    if (before_log(s, now))
        return time_refused(s, "job end", now, err);
    if (j->state != DR_JOB_COMPLETING) {
        release(s, j, now);
        if (j->state == DR_JOB_RUNNING) {
            int rc = set_state(s, j, DR_JOB_COMPLETING, now, NULL, err);
            if (rc != DR_OK)
                return rc;
        }
    }
    int rc = set_state(s, j, final, now, detail, err);
    dr_alloc_free(&j->alloc);
    return rc;
}

int dr_sched_cancel(dr_sched_t *s, dr_job_t *j, dr_time_t now, const char *why, dr_err_t *err)
{
    switch (j->state) {
    case DR_JOB_PENDING:
        /* it leaves the queue at the next compaction */
        mark_removed(s, j);
        return set_state(s, j, DR_JOB_CANCELLED, now, why, err);
    case DR_JOB_STARTING:
    case DR_JOB_RUNNING:
    case DR_JOB_COMPLETING: return dr_sched_job_ended(s, j, DR_JOB_CANCELLED, now, why, err);
    default:
        return dr_err_set(err, DR_ESTATE, "job %llu: cannot cancel a %s job",
                          (unsigned long long)j->id, dr_job_state_name(j->state));
    }
}

static bool alloc_uses(const dr_alloc_t *a, uint32_t node)
{
    for (uint32_t i = 0; i < a->nslots; i++)
        if (a->slots[i].node == node)
            return true;
    return false;
}

/* A running job back in the queue (REQUEUED -> PENDING): what node_down
 * does for each of its jobs. */
static int requeue_one(dr_sched_t *s, dr_job_t *j, dr_time_t now, bool keep_progress,
                       const char *detail, dr_err_t *err)
{
    double ckpt = dr_job_ckpt_progress(j, now);
    release(s, j, now);
    if (!keep_progress)
        j->work_done = ckpt > j->work_ckpt ? ckpt : j->work_ckpt;
    j->work_ckpt = j->work_done;
    int rc = set_state(s, j, DR_JOB_REQUEUED, now, detail, err);
    dr_alloc_free(&j->alloc);
    if (rc == DR_OK)
        rc = set_state(s, j, DR_JOB_PENDING, now, NULL, err);
    if (rc == DR_OK && pq_insert(s, j) != DR_OK)
        rc = dr_err_set(err, DR_ENOMEM, "out of memory");
    return rc;
}

int dr_sched_job_requeue(dr_sched_t *s, dr_job_t *j, dr_time_t now, const char *detail,
                         dr_err_t *err)
{
    if (s->in_pass)
        return dr_err_set(err, DR_ESTATE, "job %llu: requeued during a pass",
                          (unsigned long long)j->id);
    if (j->state != DR_JOB_RUNNING && j->state != DR_JOB_STARTING)
        return dr_err_set(err, DR_ESTATE, "job %llu: requeued while %s", (unsigned long long)j->id,
                          dr_job_state_name(j->state));
    if (before_log(s, now))
        return time_refused(s, "job requeue", now, err);
    return requeue_one(s, j, now, false, detail, err);
}

int dr_sched_node_down(dr_sched_t *s, uint32_t node, dr_time_t now, bool keep_progress,
                       dr_err_t *err)
{
    if (node >= s->c->nnodes)
        return dr_err_set(err, DR_EINVAL, "node %u does not exist", node);
    if (before_log(s, now)) {
        char what[96];
        snprintf(what, sizeof what, "node %s down", s->c->nodes[node].name);
        return time_refused(s, what, now, err);
    }
    int rc = node_state(s, node, DR_NODE_DOWN, now, err);
    if (rc != DR_OK)
        return rc;
    char detail[160];
    snprintf(detail, sizeof detail, "node %s down", s->c->nodes[node].name);
    for (size_t i = 0; i < s->nrun;) {
        dr_job_t *j = s->run[i];
        if (!alloc_uses(&j->alloc, node)) {
            i++;
            continue;
        }
        rc = requeue_one(s, j, now, keep_progress, detail, err); /* swaps another job into slot i */
        if (rc != DR_OK)
            return rc;
    }
    return DR_OK;
}

static int node_time_refused(const dr_sched_t *s, uint32_t node, dr_node_state_t st, dr_time_t now,
                             dr_err_t *err)
{
    char what[96];
    snprintf(what, sizeof what, "node %s %s", s->c->nodes[node].name, dr_node_state_name(st));
    return time_refused(s, what, now, err);
}

int dr_sched_node_up(dr_sched_t *s, uint32_t node, dr_time_t now, dr_err_t *err)
{
    if (node >= s->c->nnodes)
        return dr_err_set(err, DR_EINVAL, "node %u does not exist", node);
    if (before_log(s, now))
        return node_time_refused(s, node, DR_NODE_UP, now, err);
    return node_state(s, node, DR_NODE_UP, now, err);
}

int dr_sched_node_set_state(dr_sched_t *s, uint32_t node, dr_node_state_t st, dr_time_t now,
                            dr_err_t *err)
{
    if (node >= s->c->nnodes)
        return dr_err_set(err, DR_EINVAL, "node %u does not exist", node);
    const dr_node_t *n = &s->c->nodes[node];
    switch (st) {
    case DR_NODE_DOWN: return dr_sched_node_down(s, node, now, false, err);
    case DR_NODE_UP: return dr_sched_node_up(s, node, now, err);
    case DR_NODE_DRAIN:
        if (n->state == DR_NODE_CLOUD || n->state == DR_NODE_PROVISIONING)
            return dr_err_set(err, DR_ESTATE, "node %s is %s: only a provisioned node can drain",
                              n->name, dr_node_state_name(n->state));
        break;
    case DR_NODE_CLOUD:
        if (n->pool < 0)
            return dr_err_set(err, DR_EINVAL, "node %s is in no elastic pool", n->name);
        if (n->njobs > 0)
            return dr_err_set(err, DR_ESTATE, "node %s still holds %u jobs", n->name, n->njobs);
        break;
    default:
        return dr_err_set(err, DR_EINVAL,
                          "node %s: %s is not a state a driver sets (provisioning is the "
                          "policy's decision)",
                          n->name, dr_node_state_name(st));
    }
    if (before_log(s, now))
        return node_time_refused(s, node, st, now, err);
    return node_state(s, node, st, now, err);
}

size_t dr_sched_npending(const dr_sched_t *s)
{
    size_t n = 0;
    for (size_t i = s->head; i < s->tail; i++)
        n += s->pq[i]->state == DR_JOB_PENDING;
    return n + s->nrequeue;
}

size_t dr_sched_nrunning(const dr_sched_t *s)
{
    return s->nrun;
}

dr_job_t *const *dr_sched_pending(const dr_sched_t *s)
{
    return s->pq ? s->pq + s->head : NULL;
}

size_t dr_sched_queue(const dr_sched_t *s, dr_job_t *const **out)
{
    *out = s->pq ? s->pq + s->head : NULL;
    return s->pq ? s->tail - s->head : 0;
}

bool dr_sched_queue_before(const dr_sched_t *s, const dr_job_t *a, const dr_job_t *b)
{
    return before(s, a, b);
}

dr_job_t *const *dr_sched_running(const dr_sched_t *s)
{
    return s->run;
}

const dr_eventlog_t *dr_sched_log(const dr_sched_t *s)
{
    return &s->log;
}

dr_eventlog_t *dr_sched_log_mut(dr_sched_t *s)
{
    return &s->log;
}

dr_cluster_t *dr_sched_cluster(dr_sched_t *s)
{
    return s->c;
}

const dr_perf_view_t *dr_sched_perf(const dr_sched_t *s)
{
    return &s->perf;
}

const dr_sched_stats_t *dr_sched_stats(const dr_sched_t *s)
{
    return &s->stats;
}

void dr_sched_count_considered(dr_sched_t *s, size_t n)
{
    s->stats.jobs_considered += n;
}

void dr_pass_result_free(dr_pass_result_t *r)
{
    free(r->started);
    free(r->preempted);
    free(r->provision);
    free(r->release);
    free(r->waits);
    memset(r, 0, sizeof *r);
}
