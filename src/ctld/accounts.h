/* accounts.h - the cluster's Account= lines and fair-share usage (accounts.c). */
#ifndef DROVER_CTLD_ACCOUNTS_H
#define DROVER_CTLD_ACCOUNTS_H

#include "ctld/ctld.h"

int ctld_accounts_bind(dr_ctld_t *c, dr_err_t *err);                  /* at start */
uint32_t ctld_account_id(const dr_ctld_t *c, const dr_jobspec_t *sp); /* dr_job_t.account */
/* MaxQueuedJobs: may njobs more pending jobs of sp's account be queued?
 * DR_ELIMIT naming the account and the limit. */
int ctld_account_admit(const dr_ctld_t *c, const dr_jobspec_t *sp, uint64_t njobs, dr_err_t *err);
/* "AccountLimit ..." when a pending job waits for its account's limits
 * alone, else NULL. */
const char *ctld_account_blocked_reason(const dr_ctld_t *c, const ctld_job_t *cj);
/* A job of an account with a budget (MaxCostPerDay=, MaxCostPerMonth=) is
 * refused at submit without a time limit (what it may cost is unbounded) or
 * when even its cheapest type for its whole limit costs more than the
 * budget (DR_EINVAL, naming the figures). */
int ctld_account_budget_admit(const dr_ctld_t *c, const ctld_job_t *cj, dr_err_t *err);
/* Pending jobs of cluster account a (-1: jobs with no declared account). */
uint64_t ctld_account_queued(const dr_ctld_t *c, int a);
/* Fair-share usage: set back from the store at start; written in a turn. */
int ctld_share_restore(dr_ctld_t *c, dr_err_t *err);
int ctld_share_save(dr_ctld_t *c, dr_time_t now, dr_err_t *err);

#endif
