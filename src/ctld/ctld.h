/* ctld.h - droverd's internal state, shared by the controller's files.
 *
 * The controller is the second driver of the scheduler core (the first is
 * src/sim): driver.c is the only caller of dr_sched_*.  Work happens in
 * turns (driver.c): HTTP handlers (api_*.c) and agent messages
 * (agent_msgs.c) change memory, mark jobs dirty and queue their replies
 * and frames in the outbox; the turn runs at most one scheduling pass,
 * writes every dirty record in one SQLite transaction (store.c) and only
 * after the commit sends what was queued.  Nothing is acknowledged before
 * it is durable. */
#ifndef DROVER_CTLD_H
#define DROVER_CTLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/jobspec.h"
#include "drover/proto.h"
#include "drover/sched.h"
#include "drover/start_estimate.h"
#include "drover/util.h"

struct sqlite3;
struct dr_ctld;

/* ---- jobs ---- */

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

/* ---- nodes ---- */

/* MASTER_PORTs drover hands out, per node: [DR_CTLD_PORT_BASE, +N) */
#define DR_CTLD_PORT_BASE 29500
#define DR_CTLD_PORT_N    500

typedef struct ctld_agent ctld_agent_t;

typedef struct ctld_node {
    uint32_t idx;        /* cluster node index */
    ctld_agent_t *agent; /* connected agent, NULL if none */
    bool registered;     /* an agent registered since the controller started */
    bool admin_drain;    /* drained by an operator */
    char reason[160];
    dr_time_t last_heartbeat; /* 0 = never */
    dr_time_t lost_at;        /* agent gone since (0 = connected or never seen) */
    /* the lease (fence.c), on CLOCK_BOOTTIME: last frame heard from the
     * agent, and since when it has been gone (0 = connected) */
    int64_t heard_boot, gone_boot;
    bool fencing; /* its lease is over: the ranks of its gangs elsewhere are being stopped */
    /* NodeFailDrain= (fence.c): the last jobs that failed here, and when */
    uint64_t fail_job[8];
    dr_time_t fail_t[8];
    bool auto_drain;                         /* drained for failing jobs (admin_drain is set too) */
    bool drain_dirty;                        /* its drain changed: written with the turn's commit */
    char source[16];                         /* "nvml", "rocm", "declared" */
    char ip[48];                             /* the agent's address as this controller sees it */
    uint8_t ports[(DR_CTLD_PORT_N + 7) / 8]; /* MASTER_PORTs handed out on this node */
    uint32_t disc_gpus;                      /* GPUs the agent discovered */
    bool revoked;     /* its node key is refused (drover nodes revoke; the store's revoked table) */
    uint32_t key_gen; /* its node key's generation (drover nodes rekey; the store's nodekeys) */
    char addr[64];
} ctld_node_t;

/* ---- agents (agent_link.c) ---- */

struct ctld_agent {
    struct dr_ctld *c;
    struct bufferevent *bev;
    dr_proto_session_t sess;
    int node;    /* cluster node index once HELLO named it, else -1 */
    bool authed; /* its HELLO proved the node key: its frames are sealed now */
    bool welcomed, registered;
    struct event *deadline; /* the handshake's: an agent not authed by then is closed */
    int64_t accepted_ns;    /* CLOCK_BOOTTIME when it connected (the oldest goes first) */
    bool closing;           /* rejected: close once the output has drained */
    char addr[64];
    struct ctld_agent *next;
};

/* A record for a job's history that the scheduler does not log (a step's
 * start and end): written with the turn's commit. */
typedef struct ctld_note {
    uint64_t job; /* 0 for a node's record */
    int32_t node; /* a node's record (ctld_node_note): its index; -1 for a job's */
    dr_time_t t;
    char what[16];
    char from[16], to[16]; /* a node's states before and after ("" for a job's note) */
    char *detail;
} ctld_note_t;

/* ---- outbox: what a turn sends after its commit ---- */

typedef enum ctld_out_kind { OUT_HTTP, OUT_FRAME } ctld_out_kind_t;
typedef struct ctld_out {
    ctld_out_kind_t kind;
    struct evhttp_request *req; /* OUT_HTTP */
    int status;
    char *body;   /* OUT_HTTP: JSON text; OUT_FRAME: message JSON */
    uint64_t job; /* OUT_HTTP: a submit's job id (undone if the commit fails);
                     OUT_FRAME: a launch's job (dropped with its undone submit) */
    int node;     /* OUT_FRAME: destination node */
    int type;     /* OUT_FRAME: message type */
    struct ctld_out *next;
} ctld_out_t;

/* ---- the controller ---- */

/* a SHA-256 fingerprint as AB:CD:...: 32 bytes, 3 characters each */
#define CTLD_TLS_FPR_LEN 97

typedef struct ctld_opts {
    const char *config;
    const char *state_dir;
    const char *listen;       /* API "HOST:PORT" */
    const char *agent_listen; /* agents "HOST:PORT" */
    const char *socket;       /* API Unix socket path */
    const char *key_file;
    const char *policy;    /* overrides the config */
    const char *operators; /* comma-separated user names with the operator role */
    dr_time_t min_pass_interval;
    dr_time_t agent_timeout; /* agent silent this long: node unreachable, nothing new starts */
    dr_time_t lease;         /* agents stop their jobs when cut off this long (WELCOME) */
    uint32_t heartbeat_ms;
    bool sync_full;      /* synchronous=FULL (durable acknowledgements) */
    dr_time_t drain;     /* a replica stopped on purpose leaves the load balancer this long first */
    const char *haproxy; /* HAProxy's runtime API socket (lb_haproxy.c); NULL = none */
    double submit_rate;  /* --submit-rate: per user per second, 0 = no limit (ratelimit.c) */
    double submit_burst; /* --submit-burst: the bucket's size */
    bool metrics_public; /* --metrics-public: GET /metrics without a token (metrics.c) */
    dr_time_t stats_interval; /* --stats-interval: GET /v1/stats samples this often (stats.c) */
    /* HTTPS on the TCP API (tls.c): --tls, the operator's --tls-cert and
     * --tls-key (else a self-signed pair in the state directory, for the
     * names in --tls-san besides localhost and the host's); --plain-http:
     * plain HTTP on a --listen address that is not loopback, asked for */
    bool tls;
    const char *tls_cert, *tls_key, *tls_san;
    bool plain_http;
    bool init; /* --init: an empty or missing store may start anew (store_check.c) */
} ctld_opts_t;

typedef struct ctld_bucket ctld_bucket_t;

typedef struct ctld_stats {
    uint64_t turns, passes, commits, commit_fail;
    uint64_t submits, launches, frames_dropped;
    double pass_s_total, commit_s_total;
} ctld_stats_t;

/* Rate-limited logging: a peer nobody knows yet can make the controller
 * refuse something thousands of times a second; the log gets the first
 * few lines of each window and then a count. */
typedef struct ctld_loglimit {
    int64_t window_ns; /* CLOCK_BOOTTIME when the window began */
    uint32_t lines;    /* lines written in it */
    uint64_t held;     /* lines held back in it */
} ctld_loglimit_t;

typedef struct dr_ctld {
    ctld_opts_t o;
    ctld_bucket_t *buckets; /* submit rate limit, per user (ratelimit.c) */
    size_t nbuckets, buckets_cap;
    struct event_base *base;
    struct evhttp *http;      /* the TCP API (HTTPS with --tls) */
    struct evhttp *http_unix; /* the Unix socket's: always plain (peer credentials) */
    struct ssl_ctx_st *tls_ctx;
    char tls_fpr[CTLD_TLS_FPR_LEN]; /* the certificate's SHA-256, for the log */
    struct evconnlistener *agent_lst;
    struct event *turn_ev, *tick_ev, *sig_int, *sig_term;
    struct event *pass_timer;   /* the next pass allowed by --min-pass-interval; retries */
    struct event *wake_timer;   /* the time the policy asked to be woken at */
    struct event *commit_timer; /* a deferred commit of agents' reports (driver.c) */
    bool commit_due;            /* the deferred commit's time has come */
    struct sqlite3 *db;
    struct sqlite3_stmt *stmts[5]; /* prepared once: the statements every turn runs */
    double *share_saved;           /* raw fair-share usage per slot as last stored */
    uint8_t key[DR_PROTO_KEY];
    uint64_t epoch;
    int64_t start_boot; /* CLOCK_BOOTTIME at start-up (restart.c) */
    uint64_t next_id;
    struct ctld_outputs *outputs; /* output requests waiting for their node (output.c) */
    /* droverd.seq (seq.c): every id below seq_ids_below may have been
     * handed out, epoch seq_epoch was used */
    bool seq_found;
    uint64_t seq_epoch, seq_ids_below;
    int store_refused; /* CTLD_STORE_*: why the store was refused (store_check.c) */
    dr_catalog_t cat;
    dr_cluster_t cl;
    dr_sched_t *sched;
    char policy[128];
    ctld_node_t *nodes; /* one per cluster node */
    ctld_agent_t *agents;
    /* jobs in memory, by id (open addressing) */
    ctld_job_t **tab;
    size_t tab_cap, tab_n;
    ctld_job_t **dirty;
    size_t ndirty, dirty_cap;
    ctld_job_t **held; /* jobs waiting for their dependencies (deps.c) */
    size_t nheld, held_cap;
    bool deps_recheck;   /* a job started, ended, was held or released: look at them again */
    ctld_job_t **arrays; /* array parents with tasks left to materialise */
    size_t narrays, arrays_cap;
    /* terminal jobs that leave memory once written and a pass has seen them
     * (driver.c's evict walks these, not the whole table) */
    ctld_job_t **evictq;
    size_t nevictq, evictq_cap;
    ctld_out_t *out_head, **out_tail;
    ctld_note_t *notes; /* this turn's history records (ctld_note) */
    size_t nnotes, notes_cap;
    bool turn_scheduled;
    bool pass_wanted;
    bool drains_dirty; /* some node's drain_dirty is set */
    /* the last commit failed (a full disk): why, and since when; submits
     * are refused with 507 until a commit works again */
    char store_fail[200];
    dr_time_t store_fail_since;
    dr_time_t last_pass, last_now;
    size_t ev_flushed; /* event-log records already written */
    ctld_stats_t st;
    uint64_t agent_closes;     /* ctld_agent_close calls: on_read's "is it still there?" test */
    uint32_t agents_unauthed;  /* connections whose HELLO has not proved a node key yet */
    ctld_loglimit_t agent_log; /* lines about the agent port's refusals (agent_link.c) */
    bool stopping;
    struct ctld_lb *lb; /* HAProxy runtime API client (lb_haproxy.c), NULL = none */
    /* graceful stops (stop.c): preempted jobs stopping, jobs waiting for them */
    ctld_job_t **stops;
    size_t nstops, stops_cap;
    ctld_job_t **waits;
    size_t nwaits, waits_cap;
    struct ctld_metrics *metrics; /* GET /metrics: counters, histograms (metrics.c) */
    struct ctld_series *series;   /* GET /v1/stats: the samples of the last 24 h (stats.c) */
    struct ctld_events *events;   /* GET /v1/events streams (events.c) */
    struct ctld_backup *backup;   /* a backup in progress (backup.c) */
} dr_ctld_t;

/* main/driver */
int dr_ctld_init(dr_ctld_t *c, const ctld_opts_t *o, dr_err_t *err);
void dr_ctld_free(dr_ctld_t *c);
dr_time_t ctld_now(dr_ctld_t *c);
void ctld_turn_schedule(dr_ctld_t *c); /* run a turn soon (after this callback) */
void ctld_want_pass(dr_ctld_t *c);

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
/* Does cj's current run hold node?  (Its allocation: a batch job's other
 * nodes run nothing until a step asks, and are held all the same.) */
bool ctld_job_holds_node(const ctld_job_t *cj, uint32_t node);
/* cj reached a terminal state: free it once written and past the next pass. */
void ctld_evict_later(dr_ctld_t *c, ctld_job_t *cj);

/* arrays.c */
/* A parent's new child (an array task, a service's run): its job from the
 * parent's spec, inserted, submitted and live.  NULL with err->code
 * DR_EINVAL when the spec no longer fits the cluster, else DR_ENOMEM. */
ctld_job_t *ctld_child_new(dr_ctld_t *c, ctld_job_t *parent, uint32_t index, uint8_t kind,
                           dr_time_t submit, dr_err_t *err);
int ctld_array_feed(dr_ctld_t *c, ctld_job_t *parent, dr_time_t now);
void ctld_array_task_ended(dr_ctld_t *c, ctld_job_t *task);
int ctld_array_setup(dr_ctld_t *c, ctld_job_t *parent, dr_err_t *err);

/* driver.c: facts from the edges */
int ctld_submit(dr_ctld_t *c, ctld_job_t *cj, dr_err_t *err);
int ctld_cancel(dr_ctld_t *c, ctld_job_t *cj, const char *why, dr_err_t *err);
void ctld_rank_started(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank);
void ctld_rank_ended(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank, const dr_msg_job_state_t *m);
void ctld_node_connected(dr_ctld_t *c, uint32_t node);
void ctld_node_lost(dr_ctld_t *c, uint32_t node, const char *why);
/* Does the job go back to the queue when it loses a node (--requeue, else
 * its kind's default: training and services yes, batch RequeueDefault=)? */
bool ctld_job_requeues(const dr_ctld_t *c, const ctld_job_t *cj);

/* fence.c: node loss, the agents' lease, failing nodes */
int64_t ctld_boot_ns(void); /* CLOCK_BOOTTIME */
/* After how long without hearing from an agent its jobs may be requeued:
 * the lease it holds, plus a margin for its timers. */
int64_t ctld_requeue_after(const dr_ctld_t *c);
/* Once a second: silent agents lose their connection; nodes whose agent's
 * lease is surely over have their gangs stopped elsewhere, then are lost. */
void ctld_fence_tick(dr_ctld_t *c);
/* The agent's connection is gone: nothing new starts on the node. */
void ctld_node_gone(dr_ctld_t *c, uint32_t node, const char *why);
/* A job that ran on `node` failed (NodeFailDrain=). */
void ctld_node_job_failed(dr_ctld_t *c, uint32_t node, uint64_t job);
/* A node's drain (admin_drain, reason) changed: store it with the turn. */
void ctld_node_drain_changed(dr_ctld_t *c, uint32_t node);
int ctld_launch_rank(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank);
void ctld_pending_reason(dr_ctld_t *c, ctld_job_t *cj);
/* The job's GPUs on `node` (indices there, in allocation order) into gpus
 * (room for DR_MAX_GPUS_PER_NODE); returns how many. */
uint32_t ctld_job_gpus(const ctld_job_t *cj, uint32_t node, uint32_t *gpus);
/* KILL to every node with a live rank of the job's generation: all of its
 * processes (step 0) or step s - 1's tasks (s). */
void ctld_send_kill(dr_ctld_t *c, ctld_job_t *cj, uint32_t step, int sig, const char *why);
/* A rank that will not start: its KILL was sent before it did. */
bool ctld_rank_stopped(const ctld_job_t *cj, uint32_t rank);
/* The job's end once its own processes (and then its steps) are over. */
void ctld_job_settle(dr_ctld_t *c, ctld_job_t *cj);
/* The run of cj is over (charge it, give its MASTER_PORT back). */
void ctld_run_over(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now);
/* A registering agent still runs ranks on `node` that were told to stop
 * (a cancel, a failed rank, a step's end) before a controller crash may
 * have kept the KILL from going out: send it again. */
void ctld_kill_again(dr_ctld_t *c, ctld_job_t *cj, uint32_t node);
/* A job the pass started: set up its ranks and send their LAUNCHes
 * (held while cj->launch_wait is set, stop.c). */
void ctld_launch_job(dr_ctld_t *c, ctld_job_t *cj);
/* Add a history record (events) to this turn's commit. */
void ctld_note(dr_ctld_t *c, uint64_t job, const char *what, const char *fmt, ...) DR_PRINTF(4, 5);
/* A node's record in the same event log (one id sequence with the jobs'):
 * `what` happened (register, lost, down, drain, resume), the node went from
 * state `from` to its state now (ctld_node_state); written with the turn's
 * commit like a job's. */
void ctld_node_note(dr_ctld_t *c, uint32_t node, const char *what, const char *from,
                    const char *fmt, ...) DR_PRINTF(5, 6);
/* The node's state as the API shows it (up, drain, down, unreachable, unknown). */
const char *ctld_node_state(const dr_ctld_t *c, uint32_t node);

/* events.c: GET /v1/events, the event log as a list or a live SSE stream */
int ctld_events_start(dr_ctld_t *c, dr_err_t *err);
/* After a commit: the rows it wrote go to every open stream. */
void ctld_events_committed(dr_ctld_t *c);
/* Controller shutdown: every stream ends cleanly. */
void ctld_events_free(dr_ctld_t *c);
struct ctld_who;
void ctld_api_events(dr_ctld_t *c, struct evhttp_request *req, const struct ctld_who *who);

/* stop.c: --signal, the warning before a job is stopped */
/* A job the pass preempted: with a signal (and PreemptGrace= not 0),
 * signal it, keep it out of the scheduler and stop it after its lead;
 * true then.  false: stop it at once as before. */
bool ctld_stop_gracefully(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now);
/* A job the pass preempted without a graceful stop: kill its ranks now,
 * keep it out of the scheduler, its GPUs held, until every rank is
 * confirmed over; true then.  false (out of memory): as before. */
bool ctld_stop_now(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now);
/* A job the pass preempted and started again elsewhere (a move to another
 * GPU type): back in the queue, not launched, so that it is stopped as
 * any preempted job and starts again only once its old run is over. */
void ctld_stop_unstart(dr_ctld_t *c, ctld_job_t *cj);
/* An agent registered without holding rank r of stopping job cj on its
 * node: that rank runs nowhere. */
void ctld_stop_not_held(dr_ctld_t *c, ctld_job_t *cj, uint32_t r);
/* A job the pass started on GPUs a stopping job still holds: its LAUNCHes
 * wait (true).  Call before ctld_launch_job. */
bool ctld_stop_blocks(dr_ctld_t *c, ctld_job_t *cj);
/* Must cj, reloaded by a restarted controller after having run, wait before
 * its next launch, because its last generation may still run (restart.c)? */
bool ctld_restart_holds(dr_ctld_t *c, ctld_job_t *cj);
/* An agent on `node` holds (running) or reported the end of (!running) a
 * rank of job `job` that is not current (an old generation: killed). */
void ctld_restart_stale(dr_ctld_t *c, uint32_t node, uint64_t job, uint32_t gen, uint32_t rank,
                        bool running);
/* Each turn: kill what is due, put what stopped back in the queue, launch
 * what no longer waits. */
void ctld_stops_turn(dr_ctld_t *c, dr_time_t now);
bool ctld_stops_due(const dr_ctld_t *c, dr_time_t now); /* a turn has work */
/* An agent's report of rank `rank` of a stopping job (job, gen) on node:
 * the job, or NULL when it is no such rank. */
ctld_job_t *ctld_stop_rank(dr_ctld_t *c, int node, uint64_t job, uint32_t gen, uint32_t rank);
/* Send the job's signal to its ranks now (why: DR_SIG_PREEMPT, DR_SIG_DRAIN)
 * and record it; false when it has none. */
bool ctld_signal_job(dr_ctld_t *c, ctld_job_t *cj, uint32_t why, const char *detail);
/* Node `node` is being drained: its jobs with a signal get it. */
void ctld_drain_signal(dr_ctld_t *c, uint32_t node);
/* An agent's SIGNALED: recorded once per round per job. */
void ctld_job_warned(dr_ctld_t *c, ctld_job_t *cj, const dr_msg_signal_t *m);
/* A stopping job's agent reports a checkpoint committed (and verified)
 * since the preemption signal: stop it now instead of after its lead. */
void ctld_stop_ckpt(dr_ctld_t *c, ctld_job_t *cj, int node, const dr_msg_ckpt_t *m);
/* Reload: a preempted job stored while stopping, whose ranks have not all
 * ended, stops again (at once: the signal's lead is not kept across a
 * restart) before it is queued; true then.  And, once every job is back,
 * the launches it blocks wait for it again. */
bool ctld_stop_reloaded(dr_ctld_t *c, ctld_job_t *cj);
void ctld_stop_reload_waits(dr_ctld_t *c);
/* A cancel of a job that is stopping or waiting to launch. */
void ctld_stop_cancel(dr_ctld_t *c, ctld_job_t *cj);

/* steps.c: srun inside a job */
void ctld_step_request(dr_ctld_t *c, int node, dr_msg_step_req_t *m); /* may take m's contents */
void ctld_step_cancel(dr_ctld_t *c, int node, const dr_msg_step_cancel_t *m);
void ctld_step_task_ended(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank);
int ctld_step_launch(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank);
void ctld_steps_free(ctld_job_t *cj);
struct json_t;
struct json_t *ctld_steps_json(const dr_ctld_t *c, const ctld_job_t *cj); /* the API's "steps" */
struct json_t *ctld_steps_rt(const ctld_job_t *cj);                       /* the store's */
int ctld_steps_load(ctld_job_t *cj, struct json_t *a);

/* services.c: kind serve, --replicas */
bool ctld_spec_is_service(const dr_jobspec_t *sp);
int ctld_service_setup(dr_ctld_t *c, ctld_job_t *parent, dr_err_t *err);
/* Start runs for empty slots, stop drained ones, advance a rolling restart. */
void ctld_service_feed(dr_ctld_t *c, ctld_job_t *parent, dr_time_t now);
void ctld_service_run_ended(dr_ctld_t *c, ctld_job_t *run);
void ctld_service_run_requeued(dr_ctld_t *c, ctld_job_t *run); /* its node was lost */
void ctld_service_run_reloaded(dr_ctld_t *c, ctld_job_t *run);
void ctld_service_ready(dr_ctld_t *c, ctld_job_t *run, bool ready); /* the agent's report */
int ctld_service_scale(dr_ctld_t *c, ctld_job_t *parent, uint32_t want, dr_err_t *err);
int ctld_service_restart(dr_ctld_t *c, ctld_job_t *parent, dr_err_t *err);
/* A service parent's or replica run's part of the JOB object. */
struct json_t;
void ctld_service_json(dr_ctld_t *c, const ctld_job_t *cj, struct json_t *o);
struct json_t *ctld_service_rt(const ctld_job_t *parent);       /* the store's */
int ctld_service_rt_load(ctld_job_t *parent, struct json_t *o); /* its reload */
bool ctld_service_timers_due(dr_ctld_t *c, dr_time_t now);      /* a turn has work */

/* lb_haproxy.c: keep HAProxy's backends at the services' ready replicas */
int ctld_lb_start(dr_ctld_t *c, dr_err_t *err);
void ctld_lb_free(dr_ctld_t *c);
/* Server `slot` of backend `backend` is addr:port and up, or out (maint). */
void ctld_lb_set(dr_ctld_t *c, const char *backend, uint32_t slot, const char *addr, uint16_t port,
                 bool up);
void ctld_lb_tick(dr_ctld_t *c); /* once a second: resend what is not confirmed */

/* deps.c: --dependency */
int ctld_deps_check(dr_ctld_t *c, const dr_jobspec_t *sp, dr_err_t *err); /* at submit */
int ctld_deps_hold(dr_ctld_t *c, ctld_job_t *cj); /* wait here instead of the queue */
void ctld_deps_turn(dr_ctld_t *c);                /* release what may run now */
/* cj's dependencies as the start estimate takes them (start_estimate.h):
 * each one already decided as a time (holds: now; never: DR_TIME_NEVER),
 * the others by the id of the job they wait for - a task by its own id,
 * an array by each of its tasks once all are queued, else by the array's
 * id, which the estimate does not plan.  id: cj's (a test-only job's
 * would-be id, for singleton).  *out is malloc'd (NULL with none). */
int ctld_deps_estimate(dr_ctld_t *c, const ctld_job_t *cj, uint64_t id, dr_time_t now,
                       dr_est_dep_t **out, size_t *n);

/* holds.c: holds (-H, drover hold/release) and priority changes */
typedef enum ctld_hold { CTLD_HOLD_NONE = 0, CTLD_HOLD_USER, CTLD_HOLD_ADMIN } ctld_hold_t;
const char *ctld_hold_name(uint8_t hold); /* "user", "admin"; NULL for none */
void ctld_hold_reason(ctld_job_t *cj);    /* Slurm's JobHeldUser / JobHeldAdmin */
/* Hold a pending job (or the tasks not yet started of an array): DR_ESTATE
 * (409) when nothing is left to hold. */
int ctld_hold(dr_ctld_t *c, ctld_job_t *cj, bool admin, dr_err_t *err);
/* Release it: DR_ESTATE when not held, DR_EINVAL (403) for an operator's
 * hold released by someone who is not one. */
int ctld_release(dr_ctld_t *c, ctld_job_t *cj, bool admin, dr_err_t *err);
/* A job's (an array's: every task's) new priority; a pending job moves in
 * the queue at once. */
int ctld_set_priority(dr_ctld_t *c, ctld_job_t *cj, int32_t prio, dr_err_t *err);

/* accounts.c: the cluster's Account= lines */
int ctld_accounts_bind(dr_ctld_t *c, dr_err_t *err);                  /* at start */
uint32_t ctld_account_id(const dr_ctld_t *c, const dr_jobspec_t *sp); /* dr_job_t.account */
/* MaxQueuedJobs: may njobs more pending jobs of sp's account be queued?
 * DR_ELIMIT naming the account and the limit. */
int ctld_account_admit(const dr_ctld_t *c, const dr_jobspec_t *sp, uint64_t njobs, dr_err_t *err);
/* "AccountLimit ..." when a pending job waits for its account's limits
 * alone, else NULL. */
const char *ctld_account_blocked_reason(const dr_ctld_t *c, const ctld_job_t *cj);
/* Pending jobs of cluster account a (-1: jobs with no declared account). */
uint64_t ctld_account_queued(const dr_ctld_t *c, int a);
/* Fair-share usage: set back from the store at start; written in a turn. */
int ctld_share_restore(dr_ctld_t *c, dr_err_t *err);
int ctld_share_save(dr_ctld_t *c, dr_time_t now, dr_err_t *err);

/* launch_env.c */
/* Where one task sits: in the job (its own processes) or in a step. */
typedef struct ctld_task_pos {
    uint32_t procid, localid, nodeid; /* SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID */
    uint32_t ntasks;                  /* tasks of the job (or step) */
    uint32_t nnodes;                  /* its nodes: cj->nodes[0, nnodes) */
    const uint32_t *per_node;         /* tasks on each of them */
    uint32_t ngpus;                   /* GPUs this task sees */
    uint32_t cpus_per_task;           /* 0 = the node's CPUs / tasks there */
    bool ranks;                       /* torchrun's rank variables (RANK, WORLD_SIZE, ...) */
    int64_t step;                     /* its step's id, -1 when not in a step */
    char **base_env;                  /* srun's environment (a step's task), else NULL: */
    uint32_t nbase_env;               /* the submitter's, which it replaces */
} ctld_task_pos_t;
void ctld_launch_env(dr_ctld_t *c, const ctld_job_t *cj, const ctld_task_pos_t *t,
                     dr_strvec_t *env);
const char *ctld_node_addr(const dr_ctld_t *c, uint32_t node);
uint16_t ctld_port_take(dr_ctld_t *c, uint32_t node, uint64_t job);
void ctld_port_give(dr_ctld_t *c, uint32_t node, uint16_t port);
void ctld_port_mark(dr_ctld_t *c, uint32_t node, uint16_t port); /* a reloaded job's */

/* shards.c: data locality */
/* Node `node` now holds exactly these shards (an agent's report). */
void ctld_node_shards(dr_ctld_t *c, uint32_t node, char *const *names, uint32_t n);
/* cj->j.req.shard from its spec's shard (expanded for an array task):
 * 1 + the cluster's id of the name (interned if new), 0 for none. */
void ctld_shard_bind(dr_ctld_t *c, ctld_job_t *cj);
/* The name of cj's shard, NULL if none. */
const char *ctld_job_shard(const dr_ctld_t *c, const ctld_job_t *cj);
/* Append DROVER_SHARD=name to a LAUNCH's env when cj names a shard. */
void ctld_shard_env(dr_ctld_t *c, const ctld_job_t *cj, dr_strvec_t *env);

/* ckpt.c: checkpoint directories and the agents' restart reports */
/* The job's checkpoint directory into out; false when it has none (it
 * declares no --checkpoint-every, or has no absolute working directory). */
bool ctld_ckpt_dir(const dr_ctld_t *c, const ctld_job_t *cj, char *out, size_t len);
/* DROVER_CHECKPOINT_KEEP and DROVER_CHECKPOINT_EVERY (seconds). */
void ctld_ckpt_env(const dr_ctld_t *c, const ctld_job_t *cj, dr_strvec_t *env);
/* An agent's CKPT report for the job's current generation: to its events. */
void ctld_ckpt_report(dr_ctld_t *c, ctld_job_t *cj, int node, const dr_msg_ckpt_t *m);
/* The running job's first node registers and no report of its generation
 * was stored (sent, then lost with a crashed controller): say so. */
void ctld_ckpt_report_lost(dr_ctld_t *c, ctld_job_t *cj, int node);

/* crashpoint.c: DROVER_CRASH_AT=NAME[:N] (test only) - SIGKILL at a named
 * point, to prove a crash there loses nothing and runs nothing twice */
extern const char *ctld_crash_at;      /* NULL: unarmed */
int ctld_crash_init(dr_err_t *err);    /* at start: reads the environment */
bool ctld_crash_due(const char *name); /* counts a reach of the armed point */
_Noreturn void ctld_crash_now(dr_ctld_t *c, const char *name); /* flush to agents, SIGKILL */
/* Reached now, fires after this turn's commit, before its replies and frames. */
void ctld_crash_after_commit(const char *name);
void ctld_crash_committed(dr_ctld_t *c);
#define CTLD_CRASH_POINT(c, name)                                                                  \
    do {                                                                                           \
        if (ctld_crash_at && ctld_crash_due(name))                                                 \
            ctld_crash_now(c, name);                                                               \
    } while (0)

/* outbox */
void ctld_out_http(dr_ctld_t *c, struct evhttp_request *req, int status, char *body, uint64_t job);
void ctld_out_frame(dr_ctld_t *c, int node, int type, char *json);
void ctld_out_frame_job(dr_ctld_t *c, int node, int type, char *json, uint64_t job);

int ctld_store_put_note(dr_ctld_t *c, const ctld_note_t *n, dr_err_t *err);
/* store.c */
int ctld_store_open(dr_ctld_t *c, dr_err_t *err);
/* store_check.c: a store droverd does not start on, and why */
enum {
    CTLD_STORE_OK,
    CTLD_STORE_DAMAGED,
    CTLD_STORE_EMPTY,
    CTLD_STORE_MISSING,
    CTLD_STORE_FOREIGN
};
/* Before opening: a missing store that droverd.seq says existed, an empty
 * file (both refused without --init); *fresh: nothing there, a first start. */
int ctld_store_vet_path(dr_ctld_t *c, const char *path, bool *fresh, dr_err_t *err);
/* Once open: PRAGMA quick_check, then a drover store, an empty one (refused
 * without --init) or another application's (always refused). */
int ctld_store_vet_db(dr_ctld_t *c, const char *path, dr_err_t *err);
/* The recovery steps for c->store_refused, for the operator. */
void ctld_store_advise(const dr_ctld_t *c, FILE *f);
/* droverd --check-store: PRAGMA integrity_check of DIR/droverd.db,
 * read-only; the exit status (0 whole, 1 not). */
int ctld_store_check_only(const char *state_dir);
/* seq.c: droverd.seq, so that no job id nor epoch is handed out twice */
#define CTLD_SEQ_BLOCK 1000 /* ids reserved per write of droverd.seq */
int ctld_seq_read(dr_ctld_t *c, dr_err_t *err);
int ctld_seq_write(dr_ctld_t *c, uint64_t epoch, uint64_t ids_below, dr_err_t *err);
/* Before a commit that may hand out ids up to c->next_id - 1: reserve a
 * new block when they pass the reserved one. */
int ctld_seq_reserve(dr_ctld_t *c, dr_err_t *err);
void ctld_store_close(dr_ctld_t *c);
/* Move the WAL into the database file (at start: a WAL lost later costs
 * only what came after). */
void ctld_store_checkpoint(dr_ctld_t *c);
int ctld_store_begin(dr_ctld_t *c, dr_err_t *err);
int ctld_store_commit(dr_ctld_t *c, dr_err_t *err);
void ctld_store_rollback(dr_ctld_t *c);
int ctld_store_put_job(dr_ctld_t *c, const ctld_job_t *cj, dr_err_t *err);
int ctld_store_put_event(dr_ctld_t *c, const dr_event_t *e, const char *detail, dr_err_t *err);
int ctld_store_put_meta(dr_ctld_t *c, const char *key, uint64_t v, dr_err_t *err);
int ctld_store_get_meta(dr_ctld_t *c, const char *key, uint64_t *v);
/* A node's drain (on) or its end (off), and their reload at start. */
int ctld_store_put_drain(dr_ctld_t *c, const char *node, bool on, const char *reason, bool is_auto,
                         dr_err_t *err);
int ctld_store_load_drains(dr_ctld_t *c, void (*cb)(dr_ctld_t *, const char *, const char *, bool),
                           dr_err_t *err);
/* Revoked nodes (api_nodes.c): written at once, read at start. */
int ctld_store_put_revoked(dr_ctld_t *c, const char *node, bool on, const char *by, dr_err_t *err);
int ctld_store_load_revoked(dr_ctld_t *c, void (*cb)(dr_ctld_t *, const char *), dr_err_t *err);
/* Node key generations (api_nodes.c, rekey): written at once, read at start. */
int ctld_store_put_key_gen(dr_ctld_t *c, const char *node, uint32_t gen, dr_err_t *err);
int ctld_store_load_key_gens(dr_ctld_t *c, void (*cb)(dr_ctld_t *, const char *, uint32_t),
                             dr_err_t *err);
/* Fair-share usage of one account ('' = no declared account), and the
 * reload of every stored row. */
int ctld_store_put_share(dr_ctld_t *c, const char *account, double raw, double decayed,
                         dr_time_t as_of, dr_err_t *err);
int ctld_store_load_shares(dr_ctld_t *c,
                           int (*cb)(dr_ctld_t *, const char *, double, double, dr_time_t,
                                     dr_err_t *),
                           dr_err_t *err);
/* Reload: calls back once per stored non-evicted job (in id order). */
int ctld_store_load(dr_ctld_t *c, int (*cb)(dr_ctld_t *, ctld_job_t *, dr_err_t *), dr_err_t *err);
/* A terminal job no longer in memory: its JOB JSON (malloc'd) or NULL. */
char *ctld_store_job_json(dr_ctld_t *c, uint64_t id, char **user);
/* A terminal array task's JOB JSON by (parent, index), or NULL. */
char *ctld_store_task_json(dr_ctld_t *c, uint64_t parent, uint32_t index);
/* Jobs listing from the store (terminal ones): appends JSON objects. */
int ctld_store_list_terminal(dr_ctld_t *c, const char *user, uint64_t array, size_t limit,
                             void (*cb)(void *, const char *json), void *ud);
/* GET /v1/history: terminal rows by owner, account, end time in [since,
 * until) (Unix seconds; NAN = open) and state (comma-separated names; NULL
 * = any); the newest `limit`, called back oldest first with their JOB JSON. */
typedef struct ctld_history_q {
    const char *user, *account, *states; /* NULL = any */
    double since, until;
    size_t limit;
} ctld_history_q_t;
int ctld_store_history(dr_ctld_t *c, const ctld_history_q_t *q,
                       void (*cb)(void *, const char *json), void *ud);
int ctld_store_events(dr_ctld_t *c, uint64_t job,
                      void (*cb)(void *, double t, const char *what, const char *from,
                                 const char *to, const char *detail),
                      void *ud);
/* A row of the event log (GET /v1/events): a job's (node NULL) or a
 * node's (job 0); parent: the job's array or service parent, 0 if none. */
typedef struct ctld_event_row {
    uint64_t id, job, parent;
    double t;
    const char *node, *what, *from, *to, *detail;
} ctld_event_row_t;
/* The rows with an id in (after, upto], of job `job` or its tasks (0: any
 * job) and of node `node` (NULL: any), oldest first, at most `limit`: how
 * many were called back, or -1 when the store cannot be read. */
long ctld_store_event_rows(dr_ctld_t *c, uint64_t after, uint64_t upto, uint64_t job,
                           const char *node, size_t limit,
                           void (*cb)(void *, const ctld_event_row_t *), void *ud);
/* The newest event's id (0 when there is none). */
int ctld_store_event_max(dr_ctld_t *c, uint64_t *max);
/* tokens: stored as SHA-256 hashes; a token's id is its hash's first
 * CTLD_TOKEN_ID hex digits (shown and revoked by it, never usable as it) */
#define CTLD_TOKEN_ID 12
typedef struct ctld_token_row {
    const char *hash, *user, *role, *minted_by;
    double created, expires; /* Unix seconds */
} ctld_token_row_t;
int ctld_store_put_token(dr_ctld_t *c, const ctld_token_row_t *t, dr_err_t *err);
int ctld_store_find_token(dr_ctld_t *c, const char *hash_hex, char *user, size_t ulen, char *role,
                          size_t rlen, double *expires);
/* user NULL: every user's */
int ctld_store_list_tokens(dr_ctld_t *c, const char *user,
                           void (*cb)(void *, const ctld_token_row_t *), void *ud);
/* Delete by id or whole hash (one of them), only user's when user is not
 * NULL; *n: how many went. */
int ctld_store_delete_tokens(dr_ctld_t *c, const char *id, const char *hash, const char *user,
                             int *n, dr_err_t *err);

/* http.c / api_*.c */
typedef struct ctld_who {
    char user[64];
    uint32_t uid, gid;
    bool operator_;
    bool via_socket;
    bool via_cookie;      /* the dashboard's session cookie: see ctld_auth_csrf_ok */
    bool no_account;      /* a token's name with no account on this host (uid/gid: nobody) */
    bool may_impersonate; /* root on this host, or named in Impersonators= */
    char token_id[16];    /* the bearer token's id ("" over the Unix socket) */
    double expires;       /* the bearer token's expiry (Unix seconds; 0 over the socket) */
} ctld_who_t;
/* admit.c: the site's rules for a submit, each answering the HTTP status
 * to refuse with (0: admitted) and why in err.  Who (403: no account,
 * root without AllowRootJobs=), the request's sizes (413: script, env,
 * argv) and what the user already holds (429: bytes in unended jobs,
 * pending jobs, an array one until its tasks start; bytes: the new
 * submit's). */
int ctld_admit_user(const dr_ctld_t *c, const ctld_who_t *who, dr_err_t *err);
int ctld_admit_size(const dr_ctld_t *c, const dr_jobspec_t *sp, dr_err_t *err);
int ctld_admit_quota(const dr_ctld_t *c, const char *user, uint64_t bytes, dr_err_t *err);
int ctld_http_start(dr_ctld_t *c, dr_err_t *err);
void ctld_http_free(dr_ctld_t *c);
void ctld_reply_json(struct evhttp_request *req, int status, const char *json);
/* A reply of what body holds (taken from it, without a copy; the caller
 * still frees body). */
struct evbuffer;
void ctld_reply_buffer(struct evhttp_request *req, int status, const char *ctype,
                       struct evbuffer *body);
/* ---- ratelimit.c ---- */

/* May user submit now (--submit-rate)?  DR_ELIMIT with the limit and the
 * seconds to wait in err and *retry_s when not. */
int ctld_rate_admit(dr_ctld_t *c, const char *user, dr_time_t now, double *retry_s, dr_err_t *err);
void ctld_rate_free(dr_ctld_t *c);

void ctld_reply_error(struct evhttp_request *req, int status, const char *field, const char *fmt,
                      ...) DR_PRINTF(4, 5);
void ctld_api_jobs(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                   const char *path);
/* test_only.c: answer a checked, never-inserted submit with when and where
 * it would start (POST /v1/jobs?test_only=1); cj stays the caller's. */
void ctld_test_only(dr_ctld_t *c, struct evhttp_request *req, const ctld_job_t *cj, dr_time_t now);
/* The answer for a request the cluster can never hold (why: the check's
 * message). */
void ctld_test_only_never(struct evhttp_request *req, const char *why);
void ctld_api_nodes(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                    const char *path);
char *ctld_node_json(dr_ctld_t *c, uint32_t idx);
/* api_history.c: GET /v1/history (accounting, like Slurm's sacct) */
void ctld_api_history(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who);
void ctld_api_share(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who);
/* backup.c: POST /v1/admin/backup, an online copy of the store (operators) */
typedef struct ctld_backup ctld_backup_t;
void ctld_api_admin(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                    const char *rest);
/* A backup in progress is answered 503 (before evhttp is freed). */
void ctld_backup_free(dr_ctld_t *c);
/* At start: the temporary copies a droverd killed during a backup left. */
void ctld_backup_sweep(dr_ctld_t *c);
/* api_services.c: POST /v1/jobs/ID/scale and /restart; false if not one */
bool ctld_api_service_verb(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                           uint64_t id, const char *verb);

/* ---- metrics: GET /metrics (Prometheus) and GET /v1/stats ---- */

#define CTLD_VERSION "0.1.0"

/* prom.c: the text exposition format.  A histogram has fixed buckets
 * (upper bounds le[], ascending; +Inf is implied). */
#define CTLD_HIST_MAX 20
typedef struct ctld_hist {
    const double *le;
    uint32_t nle;
    uint64_t bucket[CTLD_HIST_MAX + 1]; /* per bucket, not cumulative; [nle]: above the last */
    uint64_t count;
    double sum;
} ctld_hist_t;
void ctld_hist_init(ctld_hist_t *h, const double *le, uint32_t nle);
void ctld_hist_observe(ctld_hist_t *h, double v); /* NaN is ignored */
struct evbuffer;
void ctld_prom_family(struct evbuffer *b, const char *name, const char *type, const char *help);
/* name{k="v",...} value: nlabels (key, value) string pairs follow; values escaped */
void ctld_prom_sample(struct evbuffer *b, const char *name, double v, int nlabels, ...);
void ctld_prom_hist(struct evbuffer *b, const char *name, const ctld_hist_t *h);
void ctld_prom_value(struct evbuffer *b, double v);

/* metrics.c: what the cluster looks like now, shared by /metrics,
 * /v1/stats and its samples.  GPUs: allocated (any share of it held),
 * idle (free on a node that takes work), down (free on a node that does
 * not: down, drained, its agent not connected). */
typedef struct ctld_snap_type {
    uint32_t total, allocated, idle, down;
} ctld_snap_type_t;
typedef struct ctld_snap {
    ctld_snap_type_t type[DR_MAX_GPU_TYPES]; /* by cluster GPU type */
    uint64_t pending, running, held;         /* running: starting, running, completing */
    double usd_per_hour, kw;                 /* of the GPUs the running jobs hold */
} ctld_snap_t;
void ctld_snapshot(const dr_ctld_t *c, ctld_snap_t *s);
/* Node i's GPUs: allocated, idle and down, as ctld_snap_t counts them. */
void ctld_node_gpu_states(const dr_ctld_t *c, uint32_t i, uint32_t *alloc, uint32_t *idle,
                          uint32_t *down);
int ctld_metrics_init(dr_ctld_t *c, dr_err_t *err);
void ctld_metrics_free(dr_ctld_t *c);
/* hooks where things happen */
void ctld_metrics_request(dr_ctld_t *c, struct evhttp_request *req, const char *path);
void ctld_metrics_pass(dr_ctld_t *c, double seconds);
void ctld_metrics_commit(dr_ctld_t *c, double seconds, bool ok);
void ctld_metrics_started(dr_ctld_t *c, const ctld_job_t *cj,
                          dr_time_t now);                    /* a pass started it */
void ctld_metrics_submitted(dr_ctld_t *c, uint64_t job);     /* a submit's 201 has gone out */
void ctld_metrics_ended(dr_ctld_t *c, const ctld_job_t *cj); /* it reached a terminal state */
struct dr_eventlog;
void ctld_metrics_committed(dr_ctld_t *c,
                            const struct dr_eventlog *log); /* preempt, requeue, down */
void ctld_metrics_tick(dr_ctld_t *c); /* once a second: cost and energy accrue */
void ctld_api_metrics(dr_ctld_t *c, struct evhttp_request *req);
/* stats.c: GET /v1/stats */
int ctld_stats_init(dr_ctld_t *c, dr_err_t *err);
void ctld_stats_free(dr_ctld_t *c);
void ctld_stats_tick(dr_ctld_t *c); /* once a second: a sample when one is due */
void ctld_api_stats(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who);

/* auth.c */
int ctld_auth(dr_ctld_t *c, struct evhttp_request *req, ctld_who_t *who);
/* A new token for user (role "user" or "operator") living ttl, minted by
 * minted_by: the token into out, its id into id (CTLD_TOKEN_ID + 1). */
int ctld_token_create(dr_ctld_t *c, const char *user, const char *role, dr_time_t ttl,
                      const char *minted_by, char *out, size_t n, char *id, dr_err_t *err);
/* api_tokens.c: POST /v1/tokens (mint), GET /v1/tokens (list), DELETE
 * /v1/tokens/ID (revoke); rest: the path after /v1/tokens */
void ctld_api_tokens(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who,
                     const char *rest);
void ctld_sha256_hex(const char *s, char out[65]);
#define CTLD_TOKEN_MAX      256
#define CTLD_SESSION_COOKIE "drover_session"
/* who a bearer token names; DR_ENOENT for an unknown or revoked one */
int ctld_auth_token(dr_ctld_t *c, const char *token, ctld_who_t *who);
/* does the request carry `X-Drover-CSRF: 1`?  and may it go on: not by
 * cookie, a GET, or with that header */
bool ctld_auth_csrf_header(struct evhttp_request *req);
bool ctld_auth_csrf_ok(struct evhttp_request *req, const ctld_who_t *who);
/* api_session.c: POST/DELETE /v1/session (the dashboard's login) */
void ctld_api_session(dr_ctld_t *c, struct evhttp_request *req);
/* ui.c: the dashboard's files at / and /ui/...; false if path is not one */
bool ctld_ui_serve(struct evhttp_request *req, const char *path);

/* tls.c: HTTPS on the TCP API.  ctld_tls_init (start-up only) loads the
 * operator's pair or the state directory's self-signed one (made when
 * absent) into c->tls_ctx; ctld_tls_bev is evhttp's per-connection
 * bufferevent; ctld_req_tls: did this request come over TLS? */
int ctld_tls_init(dr_ctld_t *c, dr_err_t *err);
void ctld_tls_free(dr_ctld_t *c);
struct event_base;
struct bufferevent *ctld_tls_bev(struct event_base *base, void *arg);
bool ctld_req_tls(struct evhttp_request *req);
struct x509_st;
void ctld_tls_fingerprint(struct x509_st *x, char out[CTLD_TLS_FPR_LEN]);

/* agent_link.c / agent_msgs.c */
int ctld_agents_start(dr_ctld_t *c, dr_err_t *err);
struct sockaddr_storage;
int ctld_parse_hostport(const char *s, struct sockaddr_storage *ss, int *slen, dr_err_t *err,
                        const char *opt);
void ctld_agent_close(ctld_agent_t *a, const char *why);
int ctld_agent_send(ctld_agent_t *a, int type, const char *json);
void ctld_agent_msg(ctld_agent_t *a, const dr_frame_t *f);
void ctld_log(const char *fmt, ...) DR_PRINTF(1, 2);
/* ctld_log, at most a few lines per 10 s window of l; the lines held back
 * are counted in one line when the next window opens. */
void ctld_log_limited(ctld_loglimit_t *l, const char *fmt, ...) DR_PRINTF(2, 3);
/* A peer's string made safe for one log line: control bytes and DEL become
 * '?', and it is cut to fit dst (n > 0). */
void ctld_sanitize(char *dst, size_t n, const char *src);
/* The agent proved its node key (agent_msgs.c, HELLO): its handshake
 * deadline and pre-auth limits end. */
void ctld_agent_authed(ctld_agent_t *a);

#endif
