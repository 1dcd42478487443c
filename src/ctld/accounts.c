/* accounts.c - the cluster's accounts (Account= lines) in the controller.
 *
 * A job's account id for the scheduler core is 1 + the cluster's index of
 * its -A name (0: an account the config does not declare, which has no
 * limits).  The core enforces the running-GPU limits at every start
 * (sched.h); MaxQueuedJobs is checked here, at submit, against the jobs of
 * the account still pending (an array's tasks not started count one
 * each), so a submit beyond it is refused before anything is stored. */
#include <stdio.h>
#include <string.h>

#include "ctld/ctld.h"

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

const char *ctld_account_blocked_reason(const dr_ctld_t *c, const ctld_job_t *cj)
{
    if (cj->j.state != DR_JOB_PENDING || !cj->in_sched || !c->sched ||
        !dr_sched_account_blocked(c->sched, &cj->j))
        return NULL;
    return "AccountLimit (its account's MaxRunningGpus leave no room for it)";
}
