/* budget.h - what an account spends on GPU time per UTC day and calendar
 * month, and what its running jobs may still spend up to their time limits:
 * the bookkeeping behind MaxCostPerDay= / MaxCostPerMonth= (account.h),
 * private to src/sched.  Times are seconds since the Unix epoch (the
 * controller's clock; the simulator's starts at 0, a Thursday in January).
 *
 * Running jobs are kept as sums, so that a start, a stop and a query cost
 * O(1) however many run: rate = their USD per second, ends = sum of rate x
 * (the second each reaches its limit), and per period since = sum of rate x
 * (its start, or the period's start if later); then what was spent is
 * closed (ended runs) + rate x now - since, and what they may still spend
 * is ends - rate x now. */
#ifndef DROVER_SCHED_BUDGET_H
#define DROVER_SCHED_BUDGET_H

enum { DR_BUDGET_DAY = 0, DR_BUDGET_MONTH = 1, DR_BUDGET_NPERIODS = 2 };

typedef struct dr_budget {
    double rate, ends;
    double start[DR_BUDGET_NPERIODS];  /* the current period's first second */
    double since[DR_BUDGET_NPERIODS];  /* of the running jobs */
    double closed[DR_BUDGET_NPERIODS]; /* USD spent by runs that ended in the period */
} dr_budget_t;

/* The first second of the UTC day or calendar month holding t. */
double dr_budget_period_start(int period, double t);
/* Move to the periods holding now (a new one starts with nothing spent). */
void dr_budget_roll(dr_budget_t *b, double now);
/* A run of `rate` USD/s that started at `start` and may run until `end`
 * starts being counted (d = +1, at now) or stops (d = -1, at now). */
void dr_budget_run(dr_budget_t *b, double rate, double start, double end, int d, double now);
/* Spent in the period holding now; what the running jobs may still spend. */
double dr_budget_spent(const dr_budget_t *b, int period, double now);
double dr_budget_committed(const dr_budget_t *b, double now);

/* What each user's running jobs cost per second (MaxUserCostPerHour=):
 * user id -> USD/s, open addressing (users are few; a lookup is O(1)). */
typedef struct dr_user_rates {
    unsigned long long *key; /* user + 1; 0 = empty */
    double *rate;
    unsigned long cap, n;
} dr_user_rates_t;
/* Add d (negative to remove) to user's rate; DR_ENOMEM-like -1 on failure. */
int dr_user_rate_add(dr_user_rates_t *m, unsigned user, double d);
double dr_user_rate(const dr_user_rates_t *m, unsigned user);
void dr_user_rates_free(dr_user_rates_t *m);

#endif
