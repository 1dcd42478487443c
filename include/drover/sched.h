/* sched.h - the scheduler core shared by the simulator and the controller.
 *
 * dr_sched_t owns the cluster ledger, the pending queue, the set of running
 * jobs (ordered by expected end) and the event log.  Drivers tell it what
 * happened (submit, job exited, node lost) and ask it for a pass; the pass
 * calls the configured policy and applies its decisions.  Neither the
 * policy nor this module knows which driver is calling. */
#ifndef DROVER_SCHED_H
#define DROVER_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/error.h"
#include "drover/eventlog.h"
#include "drover/job.h"
#include "drover/perf.h"
#include "drover/placement.h"
#include "drover/time.h"

/* Running jobs ordered by expected end (start + time limit); a skip list so
 * that backfill can walk the earliest ends without sorting every pass. */
typedef struct dr_endq dr_endq_t;
typedef struct dr_endq_iter {
    const void *node;
} dr_endq_iter_t;
void dr_endq_first(const dr_endq_t *q, dr_endq_iter_t *it);
/* Returns the next job (in ascending expected end) or NULL at the end. */
dr_job_t *dr_endq_next(dr_endq_iter_t *it, dr_time_t *expected_end);

struct dr_truth; /* truth.h: the simulator's true job sizes */

/* What a policy sees.  The cluster is the live ledger: policies book
 * allocations through dr_place() and release preempted jobs through
 * dr_sched_decide_preempt().  Everything else is read-only.
 *
 * Of each job a policy may read what a real scheduler knows: what the user
 * declared (req, time_limit, deadline, work_declared, model hints), what
 * the job has shown (work_done via dr_job_work_done, attained_gpu_s,
 * npreempt, nstarts) and what history teaches (the ended jobs).  The work
 * a job will really do is not in dr_job_t at all: it is in `truth`, which
 * is NULL for every policy not flagged oracle. */
typedef struct dr_sched_view {
    dr_cluster_t *cluster;
    dr_job_t *const *pending; /* queue order: priority desc, fair share, submit asc, id asc */
    size_t npending;
    dr_job_t *const *running; /* STARTING and RUNNING jobs, unordered */
    size_t nrunning;
    /* Jobs that entered the queue since the last pass (arrivals, requeues),
     * in queue order: with cluster->freed_gen unchanged, they are the only
     * jobs whose chances changed. */
    dr_job_t *const *fresh;
    size_t nfresh;
    /* Jobs that reached a terminal state since the last pass (completed,
     * failed, cancelled, timed out): what history teaches, e.g. how far
     * declared sizes were off.  A completed job's work_done is the work it
     * really did - known once it is over. */
    dr_job_t *const *ended;
    size_t nended;
    /* Jobs a driver took out of the queue without ending them since the
     * last pass (dr_sched_withdraw: a hold, a priority change), still
     * PENDING: a policy that keeps pending jobs of its own drops them (one
     * that comes back is in `fresh` too, after this list). */
    dr_job_t *const *withdrawn;
    size_t nwithdrawn;
    const dr_endq_t *by_end;      /* running jobs by expected end */
    const struct dr_truth *truth; /* oracle policies only; NULL otherwise */
    const dr_perf_view_t *perf;
    const dr_place_opts_t *place;
    dr_time_t now;
    struct dr_sched *sched; /* for the decide_* calls below */
} dr_sched_view_t;

/* What a policy is told when it is created. */
typedef struct dr_policy_env {
    uint64_t seed; /* for policies that draw random numbers (reproducible runs) */
} dr_policy_env_t;

/* A policy: a named object with a pass function. */
typedef struct dr_policy_ops {
    const char *name;
    const char *doc; /* one line for `drover sim --list-policies` */
    bool oracle;     /* reads v->truth: true job sizes (simulation only) */
    int (*create)(void **state, const char *opts, const dr_policy_env_t *env, dr_err_t *err);
    /* Decide: call dr_sched_decide_start/preempt for each decision and set
     * *wake_at to the next time the policy wants a pass (DR_TIME_NEVER if
     * only events matter). */
    int (*pass)(void *state, const dr_sched_view_t *v, dr_time_t *wake_at, dr_err_t *err);
    void (*destroy)(void *state);
} dr_policy_ops_t;

const dr_policy_ops_t *dr_policy_find(const char *name);
/* NULL-terminated registry. */
const dr_policy_ops_t *const *dr_policy_list(void);

/* Decisions, called by policies during a pass. */
/* Start j with alloc (already booked by dr_place); takes ownership of alloc. */
int dr_sched_decide_start(struct dr_sched *s, dr_job_t *j, dr_alloc_t *alloc);
/* Preempt running job j: its resources are released at once. */
int dr_sched_decide_preempt(struct dr_sched *s, dr_job_t *j, const char *why);
/* Elastic pools (cluster->pools).  Ask for `nodes` more nodes of pool
 * `pool`: the core picks that many of its CLOUD nodes (lowest index first),
 * marks them PROVISIONING and lists them in the pass result; the driver
 * brings each up (dr_sched_node_up) once the pool's provision delay has
 * passed, and bills it from now on.  DR_EINVAL for a pool that does not
 * exist, DR_ENOSPC when fewer than `nodes` CLOUD nodes are left (then
 * nothing is requested). */
int dr_sched_decide_provision(struct dr_sched *s, uint32_t pool, uint32_t nodes);
/* Give a pool node back: an UP node that holds no job, or one still
 * PROVISIONING.  It returns to CLOUD at once (placement no longer sees it)
 * and is listed in the pass result for the driver to stop it and its bill.
 * DR_EINVAL for a node outside every pool, DR_ESTATE when it still holds
 * jobs or is not provisioned. */
int dr_sched_decide_release(struct dr_sched *s, uint32_t node);

/* Say why pending job j waits although it could start now (on another
 * type, or for more money): "waiting for L40S-48GB (free in ~4 min): saves
 * $3.10 against H100-SXM-80GB now".  Listed in the pass result for the
 * driver to show; a job a pass does not note again waits for room as
 * usual.  The text is copied (at most DR_WAIT_NOTE_MAX - 1 bytes). */
#define DR_WAIT_NOTE_MAX 160
int dr_sched_decide_wait(struct dr_sched *s, dr_job_t *j, const char *why);

typedef struct dr_wait_note {
    dr_job_t *job;
    char why[DR_WAIT_NOTE_MAX];
} dr_wait_note_t;

/* What a pass did, for the driver to act on (launch, kill, set timers). */
typedef struct dr_pass_result {
    dr_job_t **started;
    size_t nstarted, started_cap;
    dr_job_t **preempted;
    size_t npreempted, preempted_cap;
    /* pool nodes to provision / release (node indices, in decision order) */
    uint32_t *provision;
    size_t nprovision, provision_cap;
    uint32_t *release;
    size_t nrelease, release_cap;
    /* pending jobs the policy keeps waiting on purpose, and why */
    dr_wait_note_t *waits;
    size_t nwaits, waits_cap;
    dr_time_t wake_at;
} dr_pass_result_t;
void dr_pass_result_free(dr_pass_result_t *r);

typedef struct dr_sched_opts {
    const char *policy; /* name, optionally "name:key=val,key=val" */
    dr_place_strategy_t placement;
    const dr_perf_view_t *perf; /* may be NULL */
    bool audit;                 /* check the ledger after every pass (slow; tests) */
    uint64_t seed;              /* handed to the policy (reproducible random choices) */
    /* Optional: a factor applied to a job's rate when it starts on an
     * allocation, e.g. dr_span_slowdown_factor (placement.h) to slow jobs
     * that span nodes.  NULL = 1 (rates exactly as the perf table says). */
    double (*rate_factor)(const void *ud, const dr_job_t *j, const dr_alloc_t *a);
    const void *rate_factor_ud;
    /* True job sizes, handed to oracle policies only (the simulator has
     * them; a controller does not, so an oracle policy cannot be created
     * there: dr_sched_create fails with DR_EINVAL). */
    const struct dr_truth *truth;
} dr_sched_opts_t;

typedef struct dr_sched dr_sched_t;

/* The scheduler uses (does not own) the cluster; it must be finalised. */
int dr_sched_create(dr_sched_t **out, dr_cluster_t *c, const dr_sched_opts_t *o, dr_err_t *err);
void dr_sched_destroy(dr_sched_t *s);

/* Driver calls.  Jobs are owned by the driver.  A job must stay valid
 * while the scheduler holds it and through the first pass after it reached
 * a terminal state (the pass that lists it in dr_sched_view_t.ended);
 * after that the driver may free it: neither the core nor any policy keeps
 * a pointer to a job past that pass (a controller cannot keep every job it
 * ever ran in memory; the simulator keeps them all anyway).  The
 * scheduler holds a job from its submit (or restore, or adoption) until it
 * reaches a terminal state; job ids must be unique among the jobs it holds
 * (a second job with a held id is refused with DR_EINVAL). */
int dr_sched_submit(dr_sched_t *s, dr_job_t *j, dr_time_t now, dr_err_t *err);
/* Controller restart, for a job that is still PENDING: put it back in the
 * queue as dr_sched_submit does (the same checks; rejected as FAILED if it
 * can no longer fit), but keeping what it has already shown - j->submit
 * (so its place in the queue), first_start, nstarts, npreempt, work_done,
 * work_ckpt, attained_gpu_s - where dr_sched_submit starts a new job afresh
 * (first_start = never).  Logged as a submit record (PENDING -> PENDING)
 * with detail "restored", at `now`. */
int dr_sched_restore(dr_sched_t *s, dr_job_t *j, dr_time_t now, dr_err_t *err);
/* Take a PENDING job out of the queue without ending it (a hold, or a
 * priority change that re-queues it): the scheduler no longer holds it, no
 * pass can start it, and it stays PENDING.  dr_sched_restore puts it back
 * (keeping its submit time, so its place).  Logged as a record PENDING ->
 * PENDING with detail `why`.  The job must stay valid through the next
 * pass (it is listed in dr_sched_view_t.withdrawn).  DR_ESTATE for a job
 * that is not pending here or during a pass. */
int dr_sched_withdraw(dr_sched_t *s, dr_job_t *j, dr_time_t now, const char *why, dr_err_t *err);
/* Controller restart: put a job that is already running (per the store and
 * the agents) back into the running set with its allocation, booking the
 * ledger through the same path placement uses (dr_cluster_take).  j->state
 * must be DR_JOB_RUNNING or DR_JOB_STARTING, j->start/first_start/nstarts
 * set by the caller; alloc is copied (slots of one node contiguous, GPU
 * slots on nodes of alloc->type, nnodes = its distinct nodes).  work_done is
 * taken as of `now`; the job runs on at its perf rate from then.  Logged as
 * a record from its state to itself with detail "adopted".  DR_ENOSPC if
 * the allocation does not fit the ledger (the message names the node),
 * DR_ESTATE for other states (or during a pass), DR_EINVAL for an
 * allocation that names nothing or the wrong GPU type. */
int dr_sched_adopt(dr_sched_t *s, dr_job_t *j, const dr_alloc_t *alloc, dr_time_t now,
                   dr_err_t *err);
/* The job the scheduler holds (pending, starting, running, completing, or
 * preempted within a pass) with this id; NULL if none.  O(1) expected: a
 * hash of the held jobs by id, kept as they enter and reach a terminal
 * state. */
dr_job_t *dr_sched_find_job(const dr_sched_t *s, uint64_t id);
int dr_sched_pass(dr_sched_t *s, dr_time_t now, dr_pass_result_t *res, dr_err_t *err);
/* The launch of a STARTING job succeeded. */
int dr_sched_job_running(dr_sched_t *s, dr_job_t *j, dr_time_t now, dr_err_t *err);
/* A job's processes ended: final is COMPLETED, FAILED, TIMEOUT or CANCELLED.
 * Goes through COMPLETING, releases resources. */
int dr_sched_job_ended(dr_sched_t *s, dr_job_t *j, dr_job_state_t final, dr_time_t now,
                       const char *detail, dr_err_t *err);
/* Cancel a job in any non-terminal state. */
int dr_sched_cancel(dr_sched_t *s, dr_job_t *j, dr_time_t now, const char *why, dr_err_t *err);
/* A node went down: its jobs are requeued (REQUEUED -> PENDING), keeping
 * their progress up to `now` if keep_progress, else only what their last
 * checkpoint holds (dr_job_ckpt_progress: all of it for a job that was
 * preempted and restarted, nothing since its last start for a job that
 * declares no checkpoints). */
int dr_sched_node_down(dr_sched_t *s, uint32_t node, dr_time_t now, bool keep_progress,
                       dr_err_t *err);
int dr_sched_node_up(dr_sched_t *s, uint32_t node, dr_time_t now, dr_err_t *err);
/* One running (or starting) job back in the queue, as node_down does for
 * each of a lost node's jobs (REQUEUED -> PENDING, its resources released,
 * keeping what its last checkpoint holds): a job one of whose ranks was
 * stopped by its agent when cut off from the controller.  `detail` goes in
 * the REQUEUED record.  DR_ESTATE in other states or during a pass. */
int dr_sched_job_requeue(dr_sched_t *s, dr_job_t *j, dr_time_t now, const char *detail,
                         dr_err_t *err);
/* Change a node's state through the scheduler (drivers never call
 * dr_cluster_set_state themselves):
 *   DR_NODE_DRAIN  running jobs finish, nothing new starts there (an UP,
 *                  DOWN or DRAIN node; DR_ESTATE for a pool node that is not
 *                  provisioned);
 *   DR_NODE_UP     resume a drained node, or back from down (= node_up);
 *   DR_NODE_DOWN   = dr_sched_node_down(keep_progress = false);
 *   DR_NODE_CLOUD  give a pool node back to its provider once it holds no
 *                  job (DR_EINVAL outside a pool, DR_ESTATE while it holds
 *                  jobs); the simulator's spot loss ends with this.
 * PROVISIONING is only reached through dr_sched_decide_provision
 * (DR_EINVAL here).  Every change of a node's state - these, node_down,
 * node_up and the pass's provision / release decisions - is one node record
 * in the event log (dr_eventlog_t.node_ev); setting the state a node is
 * already in records nothing.  Refused (DR_EINVAL) when dated before the
 * log's last record. */
int dr_sched_node_set_state(dr_sched_t *s, uint32_t node, dr_node_state_t st, dr_time_t now,
                            dr_err_t *err);

/* Accounts (account.h, the cluster's Account= lines).  A job's `account`
 * is a driver's id (the simulator's interned account names, the
 * controller's own); bind each id to the cluster account of that name
 * (an unknown name or NULL: no account, no limits).  With accounts
 * declared, every start obeys their MaxRunningGpus limits, whatever the
 * policy: placement (dr_place with v->place, which every policy passes,
 * and the job's own &j->req) only offers a job the GPU types where its
 * account has room for it, a generic request counted on the type it
 * lands on; dr_sched_decide_start refuses (DR_ELIMIT) a start beyond a
 * limit.  GPUs are counted as held by STARTING and RUNNING jobs. */
int dr_sched_bind_account(dr_sched_t *s, uint32_t id, const char *name, dr_err_t *err);
/* Cluster account index of a job (-1: none). */
int dr_sched_account_of(const dr_sched_t *s, const dr_job_t *j);
/* Milli-GPUs the running jobs of cluster account `acct` hold on type t
 * (t < 0: all types). */
uint64_t dr_sched_account_milli(const dr_sched_t *s, int acct, int t);
/* The GPU types on which j's account has room for it now (every type when
 * it has no limits): policies that pick a type before placing read it, so
 * that they do not plan a job onto a type its account may not use. */
dr_typemask_t dr_sched_account_types(const dr_sched_t *s, const dr_job_t *j);
/* The types its account's limits allow j at all (with nothing running):
 * for policies that bind a job to a type for a long time (Gavel). */
dr_typemask_t dr_sched_account_types_ever(const dr_sched_t *s, const dr_job_t *j);
/* Account budgets (MaxCostPerDay=, MaxCostPerMonth=; account.h): what
 * cluster account `acct` spent on GPU time in the UTC day and calendar month
 * holding now, what its running jobs may still spend up to their time
 * limits, and what ended runs spent in the periods that began at day_start
 * and month_start (Unix seconds) - the part a driver stores so that a
 * restart does not forget it (running jobs are counted again from their
 * starts when they are adopted).  false when no account has a budget. */
typedef struct dr_budget_info {
    double spent_day, spent_month, committed;
    double day_start, day_closed, month_start, month_closed;
} dr_budget_info_t;
bool dr_sched_budget(const dr_sched_t *s, int acct, dr_time_t now, dr_budget_info_t *out);
/* Give back what ended runs spent in the periods starting at day_start and
 * month_start (a period that is over by now counts nothing). */
void dr_sched_budget_restore(dr_sched_t *s, int acct, double day_start, double day_closed,
                             double month_start, double month_closed, dr_time_t now);
/* Is pending job j held back by its account's budget (MaxCostPerDay= or
 * MaxCostPerMonth=) on a type that could take it now? */
bool dr_sched_budget_blocked(const dr_sched_t *s, const dr_job_t *j);
/* What user's running jobs cost per hour now (USD; MaxUserCostPerHour=),
 * and whether pending job j is held back by that cap on a type that could
 * take it now. */
double dr_sched_user_cost_hr(const dr_sched_t *s, uint32_t user);
bool dr_sched_user_cost_blocked(const dr_sched_t *s, const dr_job_t *j);
/* Is a pending job held back by its account's limits alone (some type
 * could host it, none has room under the limits)? */
bool dr_sched_account_blocked(const dr_sched_t *s, const dr_job_t *j);

/* Fair share between accounts (docs/scheduling.md).  Each account's usage
 * is the GPU-seconds its running jobs hold (every GPU type alike, as
 * Slurm's TRES billing with weight 1), decayed with the cluster's
 * FairShareHalfLife (7 days by default); jobs with no account are one
 * implicit account.  Its factor is F = 2^(-U/S), U its share of all
 * decayed usage, S its normalised shares.  The pending queue is ordered
 * priority desc, then F desc (between accounts whose factors differ), then
 * submit asc, id asc; with every factor equal it is exactly priority,
 * submit, id.  Usage accrues at every event and pass (time is `now`). */
typedef struct dr_share_info {
    const char *name;   /* the cluster account; NULL for the implicit one */
    double shares;      /* Shares= (the implicit account: 1) */
    double norm_shares; /* shares / all counted shares (0: not counted) */
    double raw_gpu_s;   /* GPU-seconds held, undecayed */
    double decayed_gpu_s;
    double effective; /* decayed usage / all decayed usage */
    double factor;    /* F at the time asked */
    uint64_t running_milli;
} dr_share_info_t;
/* Slots: the cluster's accounts in config order, then the implicit one. */
size_t dr_sched_share_count(const dr_sched_t *s);
/* Every slot as of `now` (usage projected, nothing changed): out has
 * dr_sched_share_count entries. */
void dr_sched_share_all(const dr_sched_t *s, dr_time_t now, dr_share_info_t *out);
/* Controller restart: slot k's usage as it was at as_of (what the store
 * kept); it decays from then on.  Outside a pass. */
int dr_sched_share_set_usage(dr_sched_t *s, size_t k, double raw_gpu_s, double decayed_gpu_s,
                             dr_time_t as_of, dr_err_t *err);
/* j's account's factor over the highest factor, as of the last pass: 1.0
 * exactly while every factor is equal, else in (0, 1].  Policies with
 * rankings of their own multiply by it (drover, Gavel). */
double dr_sched_fairshare_weight(const dr_sched_t *s, const dr_job_t *j);
/* Bumped when the accounts' order by factor changes (the queue is then
 * re-sorted and every pending job is fresh): a policy that skips work
 * while nothing changed compares it too. */
uint64_t dr_sched_fairshare_gen(const dr_sched_t *s);
/* The half-life usage decays with, in seconds (0: no decay). */
double dr_sched_fairshare_half_life_s(const dr_sched_t *s);
/* Do the factors differ between accounts (as of the last pass)? */
bool dr_sched_fairshare_active(const dr_sched_t *s);

size_t dr_sched_npending(const dr_sched_t *s);
size_t dr_sched_nrunning(const dr_sched_t *s);
dr_job_t *const *dr_sched_pending(const dr_sched_t *s);
/* The queue in order (the last pass's order, jobs queued since after it):
 * *out gets the returned number of entries, of which those no longer
 * PENDING leave at the next pass (skip them).  And the running (and
 * starting) jobs, dr_sched_nrunning of them, in no order.  For a
 * controller's start estimate (start_estimate.h). */
size_t dr_sched_queue(const dr_sched_t *s, dr_job_t *const **out);
/* Does a come before b in the queue's order (priority desc, fair share as
 * of the last pass, submit asc, id asc)?  Either may be out of the queue (a
 * job not yet submitted, a held one): where it would go.  What a start
 * estimate takes as the order in which jobs start (start_estimate.h). */
bool dr_sched_queue_before(const dr_sched_t *s, const dr_job_t *a, const dr_job_t *b);
dr_job_t *const *dr_sched_running(const dr_sched_t *s);
const dr_eventlog_t *dr_sched_log(const dr_sched_t *s);
dr_eventlog_t *dr_sched_log_mut(dr_sched_t *s);
dr_cluster_t *dr_sched_cluster(dr_sched_t *s);
const dr_perf_view_t *dr_sched_perf(const dr_sched_t *s);
/* Expected end of a running job as the scheduler sees it (start + limit). */
dr_time_t dr_sched_expected_end(const dr_job_t *j);

/* Pass statistics (for benchmarks). */
typedef struct dr_sched_stats {
    uint64_t passes;
    uint64_t jobs_considered;
    uint64_t starts, preemptions;
    /* starts of tasks naming an input shard, and those placed on a node
     * holding it (data locality) */
    uint64_t shard_starts, locality_hits;
    /* starts by how close the allocation's nodes are (dr_alloc_t.locality,
     * indexed by dr_locality_t): one node, one NVLink domain, one leaf
     * switch, several leaves, no common switch.  Sums to `starts`. */
    uint64_t starts_by_locality[DR_LOC_N];
    /* over starts on several nodes: the leaf switches each spans
     * (dr_alloc_nleaves), summed; / (starts - starts_by_locality[NODE]) is
     * the mean */
    uint64_t leaves_spanned;
} dr_sched_stats_t;
const dr_sched_stats_t *dr_sched_stats(const dr_sched_t *s);

#endif
