/* accounts.c - the cluster's accounts (Account= lines) in the controller.
 *
 * A job's account id for the scheduler core is 1 + the cluster's index of
 * its -A name (0: an account the config does not declare, which has no
 * limits).  The core enforces the running-GPU limits at every start
 * (sched.h); MaxQueuedJobs is checked here, at submit, against the jobs of
 * the account still pending (an array's tasks not started count one
 * each), so a submit beyond it is refused before anything is stored. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld/ctld.h"
#include "ctld/accounts.h"
#include "ctld/store.h"

int ctld_accounts_bind(dr_ctld_t *c, dr_err_t *err)
{
    for (size_t i = 0; i < c->cl.naccounts; i++) {
        int rc = dr_sched_bind_account(c->sched, (uint32_t)i + 1, c->cl.accounts[i].name, err);
        if (rc != DR_OK)
            return rc;
    }
    return DR_OK;
}

uint32_t ctld_account_id(const dr_ctld_t *c, const dr_jobspec_t *sp)
{
    return (uint32_t)(dr_cluster_find_account(&c->cl, sp->account) + 1);
}

/* Pending jobs of cluster account `a` (array tasks not started each). */
static uint64_t queued(const dr_ctld_t *c, int a)
{
    uint64_t n = 0;
    for (size_t i = 0; i < c->tab_cap; i++) {
        const ctld_job_t *cj = c->tab[i];
        if (!cj || ctld_job_terminal(cj))
            continue;
        const dr_jobspec_t *sp = cj->parent ? &cj->parent->spec : &cj->spec;
        if (dr_cluster_find_account(&c->cl, sp->account) != a)
            continue;
        if (cj->array)
            n += cj->array->nidx - cj->array->next;
        else
            n += cj->j.state == DR_JOB_PENDING;
    }
    return n;
}

int ctld_account_admit(const dr_ctld_t *c, const dr_jobspec_t *sp, uint64_t njobs, dr_err_t *err)
{
    int a = dr_cluster_find_account(&c->cl, sp->account);
    if (a < 0 || c->cl.accounts[a].max_queued_jobs == DR_ACCT_NO_LIMIT)
        return DR_OK;
    uint64_t lim = (uint64_t)c->cl.accounts[a].max_queued_jobs, have = queued(c, a);
    if (have + njobs <= lim)
        return DR_OK;
    return dr_err_set(err, DR_ELIMIT,
                      "account: %s has %llu jobs queued; %llu more would pass its MaxQueuedJobs "
                      "limit of %llu",
                      sp->account, (unsigned long long)have, (unsigned long long)njobs,
                      (unsigned long long)lim);
}

/* What j's GPUs cost an hour on the cheapest (*lo) and the dearest (*hi)
 * type it may use that has a price; both 0 when none has (an unpriced type
 * costs nothing against a budget or a cap, as in the core). */
static void price_range(const dr_ctld_t *c, const dr_job_t *j, double *lo, double *hi)
{
    dr_typemask_t m = dr_cluster_hostable_types(&c->cl, &j->req);
    double g = (double)dr_job_req_milli(&j->req) / 1000.0;
    *lo = INFINITY;
    *hi = 0;
    for (size_t t = 0; t < c->cl.ntypes; t++) {
        double p = c->cl.types[t].price_hr;
        if (!(m >> t & 1) || !isfinite(p) || p <= 0)
            continue;
        *lo = g * p < *lo ? g * p : *lo;
        *hi = g * p > *hi ? g * p : *hi;
    }
    if (isinf(*lo))
        *lo = 0;
}

int ctld_account_budget_admit(const dr_ctld_t *c, const ctld_job_t *cj, dr_err_t *err)
{
    const dr_jobspec_t *sp = ctld_job_spec(cj);
    double cap = c->cl.site.max_user_cost_hr, r = 0, hi = 0;
    if (cj->j.req.gpus_per_node)
        price_range(c, &cj->j, &r, &hi);
    if (cap > 0 && r > cap * (1 + 1e-12))
        return dr_err_set(err, DR_EINVAL,
                          "gpus: this job's GPUs cost $%.2f an hour even on its cheapest type, "
                          "more than the $%.2f a user's running jobs may cost together "
                          "(MaxUserCostPerHour=): it could never start",
                          r, cap);
    int a = dr_cluster_find_account(&c->cl, sp->account);
    if (a < 0 || !cj->j.req.gpus_per_node)
        return DR_OK;
    const dr_account_t *ac = &c->cl.accounts[a];
    double budget = ac->max_cost_day < ac->max_cost_month ? ac->max_cost_day : ac->max_cost_month;
    if (isinf(budget))
        return DR_OK;
    const char *per = ac->max_cost_day <= ac->max_cost_month ? "MaxCostPerDay" : "MaxCostPerMonth";
    if (cj->j.time_limit <= 0)
        return dr_err_set(err, DR_EINVAL,
                          "time_limit: account %s has a budget (%s=%.2f): give the job a --time, "
                          "so that what it may cost is bounded",
                          ac->name, per, budget);
    double cheapest = r * dr_time_to_s(cj->j.time_limit) / 3600.0; /* its whole limit */
    if (cheapest > budget)
        return dr_err_set(err, DR_EINVAL,
                          "account: %s's budget is $%.2f (%s); this job may cost $%.2f even on "
                          "its cheapest type (its GPUs for its whole --time): it could never start",
                          ac->name, budget, per, cheapest);
    return DR_OK;
}

const char *ctld_account_blocked_reason(const dr_ctld_t *c, const ctld_job_t *cj)
{
    if (cj->j.state != DR_JOB_PENDING || !cj->in_sched || !c->sched)
        return NULL;
    static char why[256];  /* the controller is one thread; the caller copies it */
    double lo = 0, hi = 0; /* (priced only for a job held back by them) */
    if (dr_sched_user_cost_blocked(c->sched, &cj->j)) {
        price_range(c, &cj->j, &lo, &hi);
        snprintf(why, sizeof why,
                 "UserCostLimit (%s's running jobs cost $%.2f an hour of the $%.2f "
                 "MaxUserCostPerHour= allows; this job would add $%.2f or more)",
                 cj->user ? cj->user : "?", dr_sched_user_cost_hr(c->sched, cj->j.user),
                 c->cl.site.max_user_cost_hr, lo);
        return why;
    }
    if (dr_sched_budget_blocked(c->sched, &cj->j)) {
        int a = dr_cluster_find_account(&c->cl, ctld_job_spec(cj)->account);
        dr_budget_info_t b;
        if (a >= 0 && dr_sched_budget(c->sched, a, c->last_now, &b)) {
            const dr_account_t *ac = &c->cl.accounts[a];
            price_range(c, &cj->j, &lo, &hi);
            bool day = ac->max_cost_day - b.spent_day <= ac->max_cost_month - b.spent_month;
            snprintf(why, sizeof why,
                     "AccountBudget (%s spent $%.2f of its $%.2f this %s and its running jobs "
                     "may spend $%.2f more; this job may cost up to $%.2f)",
                     ac->name, day ? b.spent_day : b.spent_month,
                     day ? ac->max_cost_day : ac->max_cost_month, day ? "day (UTC)" : "month",
                     b.committed, hi * dr_time_to_s(cj->j.time_limit) / 3600.0);
            return why;
        }
    }
    if (!dr_sched_account_blocked(c->sched, &cj->j))
        return NULL;
    return "AccountLimit (its account's MaxRunningGpus leave no room for it)";
}

/* --- budgets across restarts --- */
static void budget_row(dr_ctld_t *c, const char *name, const double v[4])
{
    int a = dr_cluster_find_account(&c->cl, name);
    if (a >= 0)
        dr_sched_budget_restore(c->sched, a, v[0], v[1], v[2], v[3], ctld_now(c));
}

static int budgets_save(dr_ctld_t *c, dr_time_t now, dr_err_t *err)
{
    if (!c->budget_saved && c->cl.naccounts &&
        !(c->budget_saved = calloc(c->cl.naccounts * 4, sizeof *c->budget_saved)))
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    int rc = DR_OK;
    for (size_t a = 0; a < c->cl.naccounts && rc == DR_OK; a++) {
        dr_budget_info_t b;
        if (!dr_sched_budget(c->sched, (int)a, now, &b))
            return DR_OK; /* no account has a budget */
        double v[4] = {b.day_start, b.day_closed, b.month_start, b.month_closed};
        const double *was = c->budget_saved + a * 4;
        if (v[0] == was[0] && v[1] == was[1] && v[2] == was[2] && v[3] == was[3])
            continue;
        rc = ctld_store_put_budget(c, c->cl.accounts[a].name, v, err);
        if (rc == DR_OK)
            memcpy(c->budget_saved + a * 4, v, sizeof v);
    }
    return rc;
}

/* --- fair-share usage across restarts --- */
/* Store name of core slot k: the account's name, '' for the implicit one. */
static const char *slot_name(const dr_ctld_t *c, size_t k)
{
    return k < c->cl.naccounts ? c->cl.accounts[k].name : "";
}

static int share_row(dr_ctld_t *c, const char *name, double raw, double decayed, dr_time_t as_of,
                     dr_err_t *err)
{
    size_t n = dr_sched_share_count(c->sched);
    for (size_t k = 0; k < n; k++)
        if (strcmp(slot_name(c, k), name) == 0) {
            int rc = dr_sched_share_set_usage(c->sched, k, raw, decayed, as_of, err);
            if (rc == DR_OK && c->share_saved)
                c->share_saved[k] = raw;
            return rc;
        }
    return DR_OK; /* an account the config no longer declares: its usage is kept, unused */
}

int ctld_share_restore(dr_ctld_t *c, dr_err_t *err)
{
    size_t n = dr_sched_share_count(c->sched);
    c->share_saved = calloc(n, sizeof *c->share_saved);
    if (!c->share_saved)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    int rc = ctld_store_load_shares(c, share_row, err);
    return rc == DR_OK ? ctld_store_load_budgets(c, budget_row, err) : rc;
}

int ctld_share_save(dr_ctld_t *c, dr_time_t now, dr_err_t *err)
{
    size_t n = dr_sched_share_count(c->sched);
    dr_share_info_t *in = malloc(n * sizeof *in);
    if (!in)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    dr_sched_share_all(c->sched, now, in);
    int rc = DR_OK;
    /* raw usage only grows while something runs: rows whose account held
     * nothing since they were stored need no write (their decay follows
     * from as_of) */
    for (size_t k = 0; k < n && rc == DR_OK; k++)
        if (!c->share_saved || in[k].raw_gpu_s != c->share_saved[k]) {
            rc = ctld_store_put_share(c, slot_name(c, k), in[k].raw_gpu_s, in[k].decayed_gpu_s, now,
                                      err);
            if (rc == DR_OK && c->share_saved)
                c->share_saved[k] = in[k].raw_gpu_s;
        }
    free(in);
    return rc == DR_OK ? budgets_save(c, now, err) : rc;
}

uint64_t ctld_account_queued(const dr_ctld_t *c, int a)
{
    return queued(c, a);
}
