/* account.h - accounts as the cluster config declares them (Account=
 * lines, docs/config.md): per-account limits that every policy obeys
 * (enforced by the scheduler core where a start is placed, sched.h) and
 * fair-share shares. */
#ifndef DROVER_ACCOUNT_H
#define DROVER_ACCOUNT_H

#include <stddef.h>
#include <math.h>
#include <stdint.h>

#define DR_ACCT_NO_LIMIT (-1)

typedef struct dr_account {
    char *name;
    double shares; /* Shares= (default 1) */
    /* MaxRunningGpus=: GPUs the account's running jobs may hold in all;
     * MaxRunningGpus[TYPE]=: on one GPU type (indexed by the cluster's
     * type), a generic request counted on the type it lands on.  A
     * fractional share counts as its fraction.  DR_ACCT_NO_LIMIT = none. */
    int64_t max_running_gpus;
    int64_t max_running_gpus_type[64];
    /* MaxQueuedJobs=: pending jobs (an array's tasks not started each
     * count), checked by the controller at submit. */
    int64_t max_queued_jobs;
    /* MaxCostPerDay=, MaxCostPerMonth=: US dollars its jobs may spend on GPU
     * time (GPU-hours x the type's price) per UTC day and calendar month.
     * A job starts only where what was spent in the period, what its running
     * jobs may still spend up to their time limits and what it may spend up
     * to its own leave the budget whole (sched.c); DR_ACCT_NO_COST = none. */
    double max_cost_day, max_cost_month;
} dr_account_t;

#define DR_ACCT_NO_COST INFINITY

struct dr_cluster;
/* The account of that name (exact), or -1. */
int dr_cluster_find_account(const struct dr_cluster *c, const char *name);

/* The GPU types (bit t of ntypes) on which account ac has room for `need`
 * more milli-GPUs while its running jobs hold used[t] on type t and `total`
 * in all: the scheduler core's placement gate (sched.c), also what the
 * start estimate follows along its timeline (start_estimate.c). */
uint64_t dr_account_room(const dr_account_t *ac, size_t ntypes, const uint64_t *used,
                         uint64_t total, uint64_t need);

#endif
