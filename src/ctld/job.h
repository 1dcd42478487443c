/* job.h - the controller's jobs: a job and its ranks, steps, array or service
 * records, the job table (jobs.c) and the API's view of a job. */
#ifndef DROVER_CTLD_JOB_H
#define DROVER_CTLD_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include "drover/jobspec.h"
#include "drover/proto.h"
#include "drover/sched.h"
#include "drover/util.h"

struct dr_ctld;
typedef struct dr_ctld dr_ctld_t;

/* Per node a job runs on: its rank and what the agent said. */
typedef struct ctld_rank {
    uint32_t node;  /* cluster node index */
    uint32_t local; /* its index among the job's ranks on that node */
    bool started;   /* agent reported the processes started */
    bool ended;     /* agent reported the end */
    int32_t exit_code, signal;
    uint8_t why;   /* dr_end_why_t */
    uint32_t step; /* 0: one of the job's own processes; s: a task of step s - 1 */
} ctld_rank_t;

/* One replica slot of a service (services.c). */
typedef struct ctld_replica {
    struct ctld_job *run; /* its current run (a child job), NULL when none */
    uint32_t restarts;    /* runs of this slot that ended and were replaced */
    uint32_t fails;       /* runs in a row that ended by themselves soon after starting */
    dr_time_t not_before; /* back-off: no new run before this */
    dr_time_t stop_at;    /* draining: stop the run at this time (0 = not draining) */
    bool ready;           /* the run passes its readiness check (the agent says) */
} ctld_replica_t;

/* A service: `want` replicas, each slot run by one child job at a time.
 * A run that ends is replaced (after a back-off when it crashed); one that
 * is stopped on purpose (scale down, rolling restart) is first taken out of
 * the load balancer and stopped `drain` later. */
typedef struct ctld_service {
    uint32_t want;   /* --replicas, then drover scale */
    uint32_t nslots; /* slots in use: >= want while scaling down */
    ctld_replica_t *slot;
    uint32_t restarts;  /* all slots' */
    uint64_t roll_mark; /* rolling restart: runs with a smaller id are old; 0 = none */
    bool stopping;      /* cancelled: no new runs; ends when the last one has */
} ctld_service_t;

/* A job step: `srun` inside the job (steps.c).  Its tasks are ranks of
 * the job's current generation, after the job's own processes, so the
 * agents start, supervise and report them as they do ranks. */
typedef struct ctld_step {
    uint32_t id;       /* Slurm's JOBID.id: 0, 1, ... per generation */
    uint32_t first, n; /* its tasks: ranks[first, first + n) */
    uint32_t nnodes;
    int32_t origin; /* the node whose srun asked: its agent hears how the step went */
    uint64_t req;   /* that agent's request id */
    bool kill_on_bad_exit;
    bool kill_sent;   /* KILL sent to its tasks (a task failed, or a cancel) */
    bool done;        /* every task ended; srun was told */
    int32_t status;   /* the highest exit status (128 + N for signal N) */
    char detail[160]; /* the first failing task, "" if none */
    char label[64];   /* its command's name (show, events) */
    dr_time_t start, end;
    /* what its tasks start with (argv, env, output, layout options); NULL
     * once the step is over, and after a controller restart */
    dr_msg_step_req_t *launch;
} ctld_step_t;

/* A parent of child jobs: an array's (one record however many tasks it
 * has; tasks are materialised a few at a time, arrays.c) or a service's
 * (svc != NULL: its replicas' runs, services.c). */
typedef struct ctld_array {
    uint32_t *idx; /* task indices, in order */
    uint32_t nidx;
    uint32_t next;          /* idx[next] is the next task to materialise */
    uint32_t throttle;      /* at most this many tasks active at once; 0 = no limit */
    uint32_t active;        /* materialised tasks not yet terminal */
    struct ctld_job **live; /* those tasks (active of them) */
    size_t live_cap;
    uint32_t count[DR_JOB_NSTATES]; /* terminal tasks by final state */
    int32_t first_fail_exit;        /* exit code of the first failed task (for wait) */
    ctld_service_t *svc;            /* a service's parent: its replicas; NULL for an array */
} ctld_array_t;

typedef struct ctld_job {
    dr_job_t j; /* the scheduler's job (unused for an array parent) */
    dr_jobspec_t spec;
    char *user;
    uint32_t uid, gid;
    uint32_t spec_bytes;     /* the bytes its submit holds (admit.c's per-user total) */
    struct ctld_job *parent; /* array task: its parent (stays in memory while tasks live) */
    ctld_array_t *array;     /* array parent: the tasks' bookkeeping */
    uint32_t gen;            /* generation: bumped on each launch (fencing) */
    ctld_rank_t *ranks;      /* own processes (tpn per node, node by node), then steps' tasks */
    uint32_t nranks;
    uint32_t nown;   /* ranks[0, nown): the job's own processes (a batch script: 1) */
    uint32_t tpn;    /* tasks per node of the current run (SLURM_NTASKS_PER_NODE) */
    uint32_t ntasks; /* the job's tasks (SLURM_NTASKS): a step's default */
    uint32_t *nodes; /* the allocation's nodes in order (current or last run) */
    uint32_t nnodes;
    char step_key[DR_MSG_STEP_KEY + 1]; /* DROVER_STEP_KEY of this generation ("" = none) */
    ctld_step_t *steps;                 /* this generation's steps */
    uint32_t nsteps;
    bool reap_sent;       /* own processes over: KILL sent to the steps still running */
    bool lease_lost;      /* a rank was stopped by its agent's lease: requeue (or fail) once over */
    uint16_t master_port; /* MASTER_PORT on the first node, or a replica's DROVER_PORT */
    bool kill_sent;       /* KILL sent to every rank of this generation */
    uint8_t kill_final;   /* state to end in once killed (CANCELLED, FAILED) */
    int32_t exit_code, signal; /* final, once ended (-1 / 0 when unknown) */
    bool has_exit;
    char reason[160];
    char *out_path, *err_path; /* expanded */
    double cost_usd;           /* accrued over finished runs */
    int32_t got_type;          /* GPU type of the last run, -1 if it never ran */
    uint32_t got_gpus;         /* GPUs held by the last run */
    uint64_t evict_after;      /* terminal: free once more passes than this have run */
    bool in_sched;             /* handed to the scheduler */
    bool wait_noted;           /* its reason is the policy's (turn.c, dr_sched_decide_wait) */
    uint8_t hold;              /* ctld_hold_t (holds.c): held jobs stay out of the scheduler */
    bool dirty;                /* to be written this turn */
    bool dirty_listed;
    bool evict;        /* terminal and written: may leave memory */
    bool evict_listed; /* in c->evictq */
    /* --signal (stop.c).  A preempted job with a signal is signalled and
     * stopped stop_at (its lead, capped by PreemptGrace=); until its ranks
     * have ended it stays out of the scheduler (stopping) and the jobs the
     * pass started on its GPUs wait (launch_wait: their LAUNCHes are held). */
    dr_alloc_t run_alloc; /* the current run's slots (a stopping job holds them) */
    bool stopping;
    bool launch_wait;
    /* reloaded after having run (restart.c): the nodes of its last run,
     * until each has registered with this controller or the lease since
     * its start is over, and ranks of an old generation an agent still
     * ran when it registered (killed, their end not yet reported) */
    uint32_t *prev_nodes;
    uint32_t nprev_nodes;
    struct ctld_stale_rank {
        uint32_t node, gen, rank;
    } * stale; /* each old rank once: a repeated end report must not release the hold */
    size_t nstale, stale_cap;
    dr_time_t stop_at;   /* KILL then; 0 once sent */
    uint32_t warn_round; /* the last checkpoint round in its events (this generation) */
    bool warn_limit;     /* the time-limit warning is in its events (this generation) */
    /* the generation whose checkpoint report was written, and what it
     * resumed from (ckpt.c: later nodes' reports only when they differ) */
    uint32_t ckpt_gen;
    char ckpt_from[128];
} ctld_job_t;

/* dr_job_t is ctld_job_t's first member: the scheduler's job back to ours. */
static inline ctld_job_t *ctld_of(dr_job_t *j)
{
    return (ctld_job_t *)j;
}

/* The spec a job runs: its own, or its array's or service's. */
static inline const dr_jobspec_t *ctld_job_spec(const ctld_job_t *cj)
{
    return cj->parent ? &cj->parent->spec : &cj->spec;
}

/* jobs.c */
ctld_job_t *ctld_job_find(dr_ctld_t *c, uint64_t id);
int ctld_job_insert(dr_ctld_t *c, ctld_job_t *cj);
void ctld_job_remove(dr_ctld_t *c, ctld_job_t *cj);
void ctld_job_free(ctld_job_t *cj);
void ctld_job_dirty(dr_ctld_t *c, ctld_job_t *cj);
/* How the API writes JSON (jansson's flags). */
#define CTLD_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15))
/* The API's JOB object (docs/api.md); malloc'd JSON text, or the object. */
char *ctld_job_json(dr_ctld_t *c, const ctld_job_t *cj);
struct json_t;
struct json_t *ctld_job_obj(dr_ctld_t *c, const ctld_job_t *cj);
/* The job's row of the compact listing (drover/joblist.h), with the values
 * its JOB object has; `now` (Unix seconds) for TIME while it waits.  The
 * row's nodelist is returned malloc'd (the caller frees it; NULL when the
 * job has no nodes). */
struct dr_joblist_row;
char *ctld_job_row(dr_ctld_t *c, const ctld_job_t *cj, double now, struct dr_joblist_row *r);
/* What the JOB object and the row share: GPUs (held, else asked for; 0 for
 * an array parent), the type got (NULL if it never ran) and asked for
 * ("any"), the elapsed time of the current or last run (seconds, before
 * ctld_round_ms), the reason (the account limit's, else cj->reason). */
uint32_t ctld_job_ngpus(const ctld_job_t *cj);
const char *ctld_job_got_type(const dr_ctld_t *c, const ctld_job_t *cj);
const char *ctld_job_req_type(const ctld_job_t *cj);
double ctld_job_elapsed(const dr_ctld_t *c, const ctld_job_t *cj);
double ctld_round_ms(double s); /* to the millisecond, as the API shows seconds */
/* What the job has cost so far (USD at the type's price): every run of it,
 * the current one up to now; an array's or a service's: all its children's. */
double ctld_job_cost(dr_ctld_t *c, const ctld_job_t *cj);
const char *ctld_job_reason(const dr_ctld_t *c, const ctld_job_t *cj);
/* An array's tasks by state (the JOB object's "tasks"; failed counts
 * timeouts too). */
typedef struct ctld_tasks {
    uint32_t total, pending, running, completed, failed, cancelled, timeout;
} ctld_tasks_t;
void ctld_array_tasks(const ctld_array_t *a, ctld_tasks_t *t);
const char *ctld_job_state_name(const ctld_job_t *cj);
/* -J, else the script's or the command's name, else fallback */
const char *ctld_job_name(const ctld_job_t *cj, const char *fallback);
double ctld_price_hr(const dr_ctld_t *c, int type); /* USD per GPU-hour, 0 if unknown */
bool ctld_job_terminal(const ctld_job_t *cj);

#endif
