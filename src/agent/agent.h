/* agent.h - the node agent's internal state and the functions its parts
 * (agent.c, env.c, cgroup.c, launch.c, supervise.c, link.c, main.c) share.
 *
 * One process, one libevent loop.  The agent holds a table of job ranks it
 * has started: a rank stays in the table while it runs and, once it ended,
 * until the controller ACKs the end report, so that a report is never lost
 * across a reconnect (it goes out again in the next REGISTER's held[]).
 * launch.c and supervise.c know nothing of the wire: they tell whoever
 * listens through a_notify (the link, or a unit test). */
#ifndef DROVER_AGENT_AGENT_H
#define DROVER_AGENT_AGENT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "agent/gpu.h"
#include "drover/error.h"
#include "drover/proto.h"
#include "drover/util.h"

struct event_base;
struct event;
struct dr_agent;
struct dr_agent_link;

/* One rank of one job generation on this node. */
typedef struct dr_agent_job {
    struct dr_agent *a;
    uint64_t job;
    uint32_t gen, rank;
    uint32_t step;   /* 0: the job's own process; s: a task of step s - 1 (KILL selects by it) */
    uid_t uid;       /* who it runs as: the only user whose srun may ask for the job's steps */
    pid_t pid;       /* main process; also its process group (setsid); 0 if never started */
    bool running;    /* main process not yet reaped */
    bool killing;    /* the agent has signalled it (time limit, KILL, shutdown) */
    bool lease_stop; /* stopped (or hurried) because the lease ran out (lease.c) */
    uint8_t why;     /* dr_end_why_t: what the end report will say */
    int32_t exit_code, signal;
    int64_t start_ns, end_ns; /* Unix ns */
    char *detail;             /* launch failure text; "" otherwise */
    char *cgroup;             /* its cgroup directory, NULL when none */
    const char *script;       /* the batch script's file (shared_file.c's); NULL if none */
    const char *hostfile;     /* the gang's hostfile (shared_file.c's); NULL if none */
    int cg_tries;             /* rmdir attempts of an emptied cgroup */
    int64_t grace_ns;         /* SIGKILL this long after the first signal */
    struct event *limit_ev;   /* time limit */
    struct event *grace_ev;   /* SIGKILL after grace */
    struct event *cg_ev;      /* retry removing the cgroup */
    /* a service replica (ready.c): its port and readiness check */
    uint16_t port;             /* 0 = not a replica */
    char *ready_check;         /* "tcp", "http:/PATH"; NULL = none (ready once started) */
    uint8_t ready;             /* DR_READY_*: what was last reported */
    int ready_fails;           /* failed probes in a row */
    struct event *ready_ev;    /* next probe */
    struct bufferevent *probe; /* the probe in flight, NULL if none */
    /* --signal (warn.c): the warning signal (0 = none), B: (only a batch
     * shell's main process), the checkpoint interval (0 = none) */
    int warn_sig;
    bool warn_batch;
    int64_t warn_every_ns;
    uint32_t warn_rounds;  /* checkpoint rounds signalled so far */
    struct event *warn_ev; /* SECS before the time limit */
    struct event *ckpt_ev; /* the next checkpoint round */
    /* its keeper (keeper.c): the process that holds it across an agent
     * restart; keep_fd -1 when it has none (gone: the agent holds it) */
    int keep_fd;
    pid_t keep_pid;        /* 0 when adopted (not the agent's child) */
    bool adopted;          /* taken over from an earlier agent */
    int64_t start_boot_ns; /* CLOCK_BOOTTIME at the start */
    struct event *keep_ev; /* its frames */
    uint8_t keep_in[64];   /* a partial frame from it */
    size_t keep_n;
} dr_agent_job_t;

/* Called when a rank started (started=true) or ended (false). */
typedef void (*dr_agent_notify_fn)(struct dr_agent *a, const dr_agent_job_t *j, bool started);
/* Called when a replica's readiness changed (j->ready). */
typedef void (*dr_agent_ready_fn)(struct dr_agent *a, const dr_agent_job_t *j);
/* Called when the agent sent a rank its warning signal by itself (why:
 * DR_SIG_LIMIT or DR_SIG_CKPT). */
typedef void (*dr_agent_warned_fn)(struct dr_agent *a, const dr_agent_job_t *j, uint32_t why,
                                   int64_t t_ns);
/* Called when the checkpoints of a launch were checked (ckpt.c). */
typedef void (*dr_agent_ckpt_fn)(struct dr_agent *a, const dr_msg_ckpt_t *m);
typedef struct dr_agent_verif dr_agent_verif_t;
typedef struct dr_agent_ckwatch dr_agent_ckwatch_t;
typedef struct dr_agent_out_reader dr_agent_out_reader_t;

typedef struct dr_agent {
    char *name; /* node name (log prefix, DROVER_NODENAME) */
    struct event_base *base;
    FILE *log; /* stderr; tests may redirect */
    bool verbose;

    dr_agent_job_t **jobs;
    size_t njobs, jobs_cap;

    /* cgroup v2: probed once at the first launch */
    const char *cg_mount; /* "/sys/fs/cgroup"; tests may point it elsewhere */
    int cg_state;         /* 0 not probed, 1 usable, -1 unavailable */
    bool cg_limits;       /* memory/cpu controllers enabled for job cgroups */
    char cg_base[PATH_MAX];

    dr_agent_notify_fn notify;        /* may be NULL */
    dr_agent_ready_fn notify_ready;   /* may be NULL */
    dr_agent_warned_fn notify_warned; /* may be NULL */
    dr_agent_ckpt_fn notify_ckpt;     /* may be NULL */
    void *notify_ctx;

    struct event *sigchld_ev, *sigterm_ev, *sigint_ev, *sigusr2_ev, *stop_ev;
    bool stopping;        /* SIGTERM/SIGINT/REJECT: no new launches, jobs being killed */
    bool noted_not_root;  /* "jobs run as the agent's uid" was logged */
    bool allow_root_jobs; /* --allow-root-jobs: run uid-0 LAUNCHes without allow_root */
    int exit_code;        /* what the loop's owner should exit with */

    char *state_dir; /* --state DIR, NULL when none */
    int lock_fd;     /* STATE/agent.lock, flock'ed while the agent runs; 0 when none */
    /* The local end of the link to the controller: the address the
     * controller (and so a gang's other ranks) reach this node at, and its
     * interface (GLOO_SOCKET_IFNAME for jobs that do not choose one). */
    char local_addr[64];
    char local_ifname[32];
    uint64_t epoch; /* controller epoch of the current (last) session */

    /* the lease (lease.c): CLOCK_BOOTTIME ns */
    int64_t lease_ns;       /* from WELCOME; 0 = none */
    int64_t lease_from;     /* the send time of the last heartbeat the controller answered */
    bool lease_lapsed;      /* it ran out: jobs stopped, link down until they have ended */
    struct event *lease_ev; /* the next SIGTERM (or the end) due */

    struct dr_agent_link *link; /* NULL when the agent has no controller link */

    char *cache_dir; /* --cache-dir DIR (the shards it holds), NULL when none */

    /* srun's socket (stepd.c) */
    char *step_dir;     /* holds step.sock and bin/srun (0711) */
    bool step_dir_made; /* made by the agent: removed at exit */
    char *step_sock;    /* DROVER_STEP_SOCKET for jobs; NULL when none */
    char *srun_dir;     /* "<step_dir>/bin", first on jobs' PATH; NULL when no srun */
    struct evconnlistener *step_lst;
    struct dr_agent_srun *sruns; /* connected sruns */
    uint64_t next_req;           /* the last step request id handed out */

    /* files written for jobs, one per distinct content (shared_file.c) */
    struct dr_agent_file **files;
    size_t nfiles, files_cap;
    uint64_t file_tick;

    dr_agent_out_reader_t *out_readers; /* output reads in progress (output.c) */
    size_t out_nreaders;
    dr_agent_verif_t *verifs;      /* checkpoint verifications in progress (ckpt.c) */
    dr_agent_ckwatch_t *ckwatches; /* preempted jobs' checkpoint directories (ckpt_watch.c) */

    /* what the keepers read: the lease (keeper.c), shared memory - of the
     * state directory's lease file when there is one, so that it outlives
     * the agent */
    struct dr_agent_lease_page *lease_page;
    bool leave_jobs; /* exit without stopping the ranks: their keepers wait for the next agent */
    /* idle keepers, ready for the next rank (forking one per rank cost
     * more than the rank's own exec) */
    struct dr_agent_idle_keeper {
        pid_t pid;
        int fd;
    } * idle;
    size_t nidle, idle_cap;
} dr_agent_t;

typedef struct dr_agent_file dr_agent_file_t;

/* ---- shared_file.c: files written for jobs, shared by the ranks using them ---- */

/* The file (in the state directory) holding `text`, of the given kind
 * (its name's suffix: a string constant) and mode, owned by uid:gid when
 * chown_to; counted for the caller; NULL with detail set when it cannot
 * be written. */
const char *dr_agent_file_get(dr_agent_t *a, const char *kind, mode_t mode, const char *text,
                              bool chown_to, uid_t uid, gid_t gid, char *detail, size_t dlen);
/* The caller's rank is done with a file dr_agent_file_get returned. */
void dr_agent_file_put(dr_agent_t *a, const char *path);
/* Remove every file (the agent's exit; with a->leave_jobs only the
 * records: ranks left to their keepers may still read the files). */
void dr_agent_file_clear(dr_agent_t *a);

/* ---- agent.c: life cycle, job table, log ---- */

/* Set up signal events (SIGCHLD, SIGTERM, SIGINT) on base; SIGPIPE is ignored
 * and the agent becomes its children's subreaper so that orphaned job
 * processes are reaped here too. */
int dr_agent_init(dr_agent_t *a, struct event_base *base, const char *name, dr_err_t *err);
/* Free the job table and events (not the link: dr_agent_link_free it first,
 * which keeps this file free of the wire protocol). */
void dr_agent_free(dr_agent_t *a);

void dr_agent_log(const dr_agent_t *a, const char *fmt, ...) DR_PRINTF(2, 3);
void dr_agent_debug(const dr_agent_t *a, const char *fmt, ...) DR_PRINTF(2, 3);

int64_t dr_agent_now_ns(void); /* CLOCK_REALTIME */
double dr_agent_boot_s(void);  /* CLOCK_BOOTTIME seconds: immune to clock steps */
/* In a child about to exec or run code of its own: default dispositions
 * for every signal and an empty mask (the agent's handlers are not its).
 * System calls only: safe after vfork. */
void dr_agent_child_signals_reset(void);
/* Signal pid only while it is still the agent's own unreaped, running
 * child (the SIGCHLD loop reaps every child: after that the pid may be
 * anyone's). */
void dr_agent_kill_child(pid_t pid, int sig);
/* Write all n bytes to fd, through EINTR and short writes: 0, or -1 with
 * errno set (a pipe or file the agent, a keeper or a child writes). */
int dr_agent_write_all(int fd, const void *buf, size_t n);

dr_agent_job_t *dr_agent_job_find(const dr_agent_t *a, uint64_t job, uint32_t gen, uint32_t rank);
dr_agent_job_t *dr_agent_job_by_pid(const dr_agent_t *a, pid_t pid);
dr_agent_job_t *dr_agent_job_add(dr_agent_t *a, uint64_t job, uint32_t gen, uint32_t rank);
/* Remove and free an ended rank (its end report was ACKed). */
void dr_agent_job_remove(dr_agent_t *a, dr_agent_job_t *j);
size_t dr_agent_running(const dr_agent_t *a);

/* Begin the agent's orderly exit with exit code `code`: no new launches,
 * every running rank gets SIGTERM, then SIGKILL after 2 s; the loop exits
 * once all are reaped. */
void dr_agent_stop(dr_agent_t *a, int code);

/* --state DIR: create it (0711: the job users reach their own job files in
 * DIR/jobs, nothing else) when missing, take its lock (DIR/agent.lock: a
 * second agent on the same directory is refused, naming the first) and
 * write DIR/agent.pid with this process's pid and the controller epoch. */
int dr_agent_state_init(dr_agent_t *a, const char *dir, dr_err_t *err);
int dr_agent_state_write(const dr_agent_t *a, dr_err_t *err);

/* ---- env.c: a launch's environment ---- */

/* Who the job runs as, for HOME/USER/LOGNAME/SHELL (NULL fields are left out). */
typedef struct dr_agent_user {
    const char *name, *home, *shell;
} dr_agent_user_t;

/* Clean base (PATH, the user's HOME/USER/LOGNAME/SHELL), then the LAUNCH's
 * env entries (which may override the base), then what the agent owns and
 * the job may not override: GPU visibility (CUDA_VISIBLE_DEVICES,
 * ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, DROVER_GPUS: the launch's GPU
 * indices, "" for none; CUDA_DEVICE_ORDER=PCI_BUS_ID so that CUDA numbers
 * GPUs as NVML does) and DROVER_NODE_RANK, DROVER_NNODES, DROVER_NODENAME. */
void dr_agent_note_local_addr(dr_agent_t *a, int fd);
/* addr, ifname: the node's address and interface toward the controller
 * (NULL or "" when unknown) */
int dr_agent_env_build(const dr_msg_launch_t *l, const char *node, const char *addr,
                       const char *ifname, const dr_agent_user_t *u, dr_strvec_t *env,
                       dr_err_t *err);
/* Set KEY=VALUE in env, replacing an existing KEY. */
int dr_agent_env_set(dr_strvec_t *env, const char *key, const char *value);
/* Remove KEY from env. */
void dr_agent_env_unset(dr_strvec_t *env, const char *key);
/* Value of KEY in env, or NULL. */
const char *dr_agent_env_get(const dr_strvec_t *env, const char *key);

/* ---- cgroup.c: cgroup v2 job containers ---- */

/* Probe once (logs the outcome once): 1 usable, 0 unavailable. */
int dr_agent_cg_probe(dr_agent_t *a);
/* Create the rank's cgroup with its limits; *procs_fd is an O_WRONLY fd of
 * its cgroup.procs for the child to write itself into.  Returns 0, or <0
 * when the cgroup cannot be made (the launch goes on without one). */
int dr_agent_cg_create(dr_agent_t *a, dr_agent_job_t *j, uint32_t cpu_milli, uint64_t mem_mb,
                       int *procs_fd, dr_err_t *err);
/* cgroup.kill (or SIGKILL to each member on kernels without it). */
void dr_agent_cg_kill(dr_agent_t *a, dr_agent_job_t *j);
/* sweep.c: root's descendants (found through /proc; the keeper is their
 * subreaper), for ranks that left their process group.  dr_agent_sweep
 * signals them once (but not those in process group skip_pgrp, if not 0); dr_agent_sweep_kill
 * SIGKILLs them round after round (at most `rounds`, 10 ms apart) until none is left, and returns
 * how many were still alive at the end.  Dead children of root are reaped, but never `keep` (the
 * rank's main process, whose status the keeper reads). */
size_t dr_agent_sweep(pid_t root, int sig, pid_t keep, pid_t skip_pgrp);
size_t dr_agent_sweep_kill(pid_t root, pid_t keep, int rounds);
/* rmdir; false while processes remain. */
bool dr_agent_cg_remove(dr_agent_t *a, dr_agent_job_t *j);
/* How many of the rank's processes the kernel OOM-killed (memory.events). */
uint64_t dr_agent_cg_oom_kills(const dr_agent_t *a, const dr_agent_job_t *j);

/* ---- launch.c ---- */

/* Start one rank.  Returns 0 when the LAUNCH was handled (the rank started,
 * or its failure became an end report with why=DR_END_LAUNCH), 1 when it
 * was ignored (already held, or the agent is stopping), <0 on an internal
 * error. */
int dr_agent_launch(dr_agent_t *a, const dr_msg_launch_t *l, dr_err_t *err);
/* Start it now (its checkpoints, if any, were checked): restart_from is
 * DROVER_RESTART_FROM, NULL for none. */
int dr_agent_launch_now(dr_agent_t *a, const dr_msg_launch_t *l, const char *restart_from,
                        dr_err_t *err);
/* A rank that will not start: it ends at once, reported with `why`
 * (DR_END_LAUNCH, DR_END_KILLED) and detail.  Returns 0. */
int dr_agent_launch_fail(dr_agent_t *a, const dr_msg_launch_t *l, uint8_t why, const char *detail);

/* ---- ckpt.c: the checkpoint a launch resumes from ---- */

/* A LAUNCH with a checkpoint directory: verify its checkpoints in a child
 * (sharing one with the generation's other ranks here), then launch. */
int dr_agent_ckpt_launch(dr_agent_t *a, const dr_msg_launch_t *l, dr_err_t *err);
/* Is (job, gen, rank) waiting for its verification? */
bool dr_agent_ckpt_holds(const dr_agent_t *a, uint64_t job, uint32_t gen, uint32_t rank);
/* Stop the verifications of (job, gen), or every one when all; with
 * report, their ranks end as killed.  Returns how many ranks ended. */
int dr_agent_ckpt_cancel(dr_agent_t *a, uint64_t job, uint32_t gen, bool all, bool report);

/* ---- output.c: a job's output, read as its user for the controller ---- */

/* OUTPUT_REQ: read the bytes in a child that runs as the job's user and
 * answer OUTPUT on the link (at once when it cannot: BUSY, FAILED). */
void dr_agent_output_read(dr_agent_t *a, const dr_msg_output_req_t *m);
/* Kill the reads in progress (their answers are never sent). */
void dr_agent_output_free(dr_agent_t *a);

/* ---- ckpt_watch.c: a preempted job's checkpoint, as soon as it is there ---- */

/* A preemption's SIGNAL naming the job's checkpoint directory: watch it
 * for a checkpoint committed from now on, and report it verified (CKPT,
 * committed).  0, or DR_ENOMEM. */
int dr_agent_ckpt_watch(dr_agent_t *a, const dr_msg_signal_t *m);
void dr_agent_ckpt_watch_stop(dr_agent_t *a); /* every watch (the agent stops) */

/* ---- supervise.c ---- */

/* Reap exited children: a rank's main process ends its job (the rest of
 * the process group and cgroup is killed) and is reported. */
void dr_agent_reap(dr_agent_t *a);
/* Signal a running rank's processes now and SIGKILL them after grace_ns;
 * the end is reported with `why` (the first cause sticks). */
void dr_agent_job_signal(dr_agent_t *a, dr_agent_job_t *j, int sig, int64_t grace_ns, uint8_t why);
/* Arm the time limit of a rank that just started. */
void dr_agent_job_arm_limit(dr_agent_t *a, dr_agent_job_t *j, int64_t limit_ns);
/* KILL (job, gen): every rank of it here.  Returns how many were signalled. */
int dr_agent_kill(dr_agent_t *a, const dr_msg_kill_t *k);
/* Mark a rank ended and report it. */
void dr_agent_job_ended(dr_agent_t *a, dr_agent_job_t *j);

/* ---- warn.c: --signal, the warning before a job is stopped ---- */

/* A rank started ran_ns ago (0: just now; more: taken over from its
 * keeper): arm its warning SECS before its time limit and its checkpoint
 * rounds, as its LAUNCH says (nothing without a signal). */
void dr_agent_warn_arm(dr_agent_t *a, dr_agent_job_t *j, const dr_msg_launch_t *l, int64_t ran_ns);
/* The rank ended: no more warnings. */
void dr_agent_warn_stop(dr_agent_job_t *j);
/* Send sig to one running rank as its LAUNCH said: B: its main process
 * alone (a step's task: nothing), else its process group.  true if sent. */
bool dr_agent_warn_send(dr_agent_t *a, dr_agent_job_t *j, int sig);
/* The controller's SIGNAL: every running rank of (job, gen) here.
 * Returns how many got it. */
int dr_agent_signal(dr_agent_t *a, const dr_msg_signal_t *m);

/* ---- ready.c: readiness checks of service replicas ---- */

struct bufferevent;
/* After a replica started: probe `check` on 127.0.0.1:port until it ends
 * ("none", or no check: ready at once).  Nothing for port 0 and no check. */
int dr_agent_ready_start(dr_agent_t *a, dr_agent_job_t *j, uint32_t port, const char *check);
/* The rank ended: no more probes. */
void dr_agent_ready_stop(dr_agent_job_t *j);

/* ---- stepd.c: srun inside a job ---- */

/* Make the step directory (dir, else a fresh /tmp/drover-agent-XXXXXX),
 * its socket, and bin/srun linked to `srun` (NULL: the drover binary
 * beside the agent's own executable; none found: jobs get no srun). */
int dr_agent_steps_start(dr_agent_t *a, const char *dir, const char *srun, dr_err_t *err);
void dr_agent_steps_free(dr_agent_t *a);
/* The controller's answer to a step request: to the srun that asked. */
void dr_agent_steps_on_state(dr_agent_t *a, const dr_msg_step_state_t *m);
/* The link went down: sruns waiting for their steps are told and exit. */
void dr_agent_steps_link_down(dr_agent_t *a);

/* ---- cache.c: the shards this node holds ---- */

/* The names of the entries directly in dir (not "." / "..", nor hidden
 * names: a copy in progress), sorted; at most DR_MSG_MAX_SHARDS names of at
 * most DR_MSG_MAX_SHARD_NAME bytes and DR_MSG_MAX_SHARD_BYTES in all, the
 * others counted in *skipped.  out's old contents are freed. */
int dr_agent_cache_scan(const char *dir, dr_strvec_t *out, size_t *skipped, dr_err_t *err);
/* Same names in the same order? */
bool dr_agent_cache_same(const dr_strvec_t *a, const dr_strvec_t *b);

/* ---- keeper_wire.c, keeper.c: the process that holds a rank ---- */

#define DR_KEEP_HDR        5
#define DR_KEEP_MAX_BODY   (DR_PROTO_MAX_BODY + PATH_MAX + 64)
#define DR_KEEP_MAX_DETAIL 4096
enum {
    DR_KEEP_STARTED = 1, /* keeper -> agent: the rank runs (pid, start) */
    DR_KEEP_FAILED,      /* keeper -> agent: it could not be started (detail) */
    DR_KEEP_ENDED,       /* keeper -> agent: its main process ended */
    DR_KEEP_SIGNAL,      /* agent -> keeper: signal it (its group, or the main process) */
    DR_KEEP_RELEASE,     /* agent -> keeper: its end is reported; exit */
    DR_KEEP_ADOPT,       /* keeper -> a new agent: everything about the rank */
    DR_KEEP_SPAWN        /* agent -> idle keeper: start this rank (its plan) */
};
typedef struct dr_keep_msg {
    uint8_t type;
    int64_t pid;               /* STARTED, ADOPT: the rank's main process */
    int64_t start_ns;          /* STARTED, ADOPT: Unix ns */
    int64_t start_boot_ns;     /* STARTED, ADOPT: CLOCK_BOOTTIME ns */
    bool ended;                /* ADOPT: it has ended (then exit_code .. why) */
    int32_t exit_code, signal; /* ENDED, ADOPT */
    int64_t end_ns;            /* ENDED, ADOPT */
    uint8_t why;               /* ADOPT: DR_END_LEASE when the keeper stopped it */
    uint32_t uid;              /* ADOPT */
    int32_t sig;               /* SIGNAL */
    bool group;                /* SIGNAL: its process group, else its main process */
    const char *cgroup;        /* ADOPT: its cgroup directory ("" none); not NUL-ended */
    size_t cgroup_len;
    const char *text; /* FAILED: detail; ADOPT: the LAUNCH's JSON body */
    size_t text_len;
} dr_keep_msg_t;
/* Frame m (*out malloc'd).  0 or DR_ENOMEM. */
int dr_keep_encode(const dr_keep_msg_t *m, uint8_t **out, size_t *outlen);
/* Take one frame from buf[0, len): 1 (m filled, pointing into buf; *used
 * consumed), 0 (need more), -1 (bad: err says what; close the socket). */
int dr_keep_decode(const uint8_t *buf, size_t len, size_t *used, dr_keep_msg_t *m, dr_err_t *err);

/* A rank's plan as a keeper gets it (SPAWN): everything the child needs,
 * made in the agent (launch.c), and the LAUNCH (JSON) for a later agent.
 * Unpacked, the strings point into buf; "" for none. */
typedef struct dr_agent_plan {
    uint64_t job;
    uint32_t gen, rank, uid, gid;
    int64_t grace_ns;
    bool change_ids;
    uint32_t ngroups;
    uint32_t *groups;
    char **argv, **envp; /* NULL-ended */
    const char *cwd, *out, *err, *cgroup, *argv0;
    const char *json;
    size_t json_len;
    uint8_t *buf;
} dr_agent_plan_t;
/* The SPAWN frame of a plan (*out malloc'd): 0, DR_ENOMEM, DR_ELIMIT. */
int dr_keep_plan_pack(const dr_agent_plan_t *pl, uint8_t **out, size_t *outlen);
/* A SPAWN body into pl (owning a copy): 0, or an error naming the field. */
int dr_keep_plan_unpack(const char *body, size_t n, dr_agent_plan_t *pl, dr_err_t *err);
void dr_keep_plan_free(dr_agent_plan_t *pl);
/* In a keeper: start the rank (vfork, the child's set-up, exec); its pid,
 * or -1 with detail set (launch.c). */
pid_t dr_agent_plan_spawn(const dr_agent_plan_t *pl, char *detail, size_t dlen);
/* Hand the plan (a SPAWN frame) to a keeper - an idle one, else a new one
 * - which starts the rank and holds it.  0: j->pid and the keeper are
 * set; -1: detail says why. */
int dr_agent_keeper_spawn(dr_agent_t *a, dr_agent_job_t *j, const uint8_t *spawn, size_t len,
                          char *detail, size_t dlen);
/* Send sig to a running rank: its process group, or its main process
 * alone (through its keeper, which knows whether it was reaped).  0, or
 * -1 with errno as kill(2). */
int dr_agent_job_kill(dr_agent_t *a, const dr_agent_job_t *j, int sig, bool group);
/* The rank leaves the table: its keeper goes idle for the next rank (or
 * exits; with a->leave_jobs, waits for the next agent). */
void dr_agent_keeper_release(dr_agent_t *a, dr_agent_job_t *j);
/* The agent's exit: idle keepers exit. */
void dr_agent_keeper_free(dr_agent_t *a);
/* At start: take over the ranks whose keepers an earlier agent left in
 * the state directory.  Returns how many. */
size_t dr_agent_keeper_adopt(dr_agent_t *a);
/* The lease page: set up (anonymous; the state directory's file once
 * there is one), and what the lease is now (0: none). */
int dr_agent_lease_page_init(dr_agent_t *a, dr_err_t *err);
void dr_agent_lease_page_set(dr_agent_t *a, int64_t end_boot_ns, int64_t lease_ns);
void dr_agent_lease_page_free(dr_agent_t *a);

/* ---- lease.c: stop the jobs when cut off from the controller too long ---- */

int64_t dr_agent_boot_ns(void); /* CLOCK_BOOTTIME: the lease's clock */
/* A session began (WELCOME): lease_ns from it (0: none), running from
 * `from`, the HELLO's send time. */
void dr_agent_lease_start(dr_agent_t *a, int64_t lease_ns, int64_t from);
/* The controller answered a heartbeat sent at `from`. */
void dr_agent_lease_renew(dr_agent_t *a, int64_t from);
/* Stop what the lease says must stop now (SIGTERM, SIGKILL at the end of
 * the lease); on the first such stop the link is dropped.  True when the
 * lease has run out (the caller handles no frame from the controller). */
bool dr_agent_lease_check(dr_agent_t *a);
/* Lapsed and ranks it stopped still running: do not reconnect yet. */
bool dr_agent_lease_busy(const dr_agent_t *a);
/* A new session after a lapse: log what was stopped and why (its end
 * reports go in the REGISTER), and start afresh. */
void dr_agent_lease_report(dr_agent_t *a);
void dr_agent_lease_free(dr_agent_t *a);

/* ---- link.c: the controller connection ---- */

typedef struct dr_agent_link_opts {
    const char *host;
    const char *port;
    const uint8_t *key;                /* DR_PROTO_KEY bytes */
    const char *nvml_path, *rocm_path; /* dr_gpu_opts_t semantics */
} dr_agent_link_opts_t;

/* Start connecting (the first attempt is immediate). */
int dr_agent_link_start(dr_agent_t *a, const dr_agent_link_opts_t *o, dr_err_t *err);
void dr_agent_link_free(dr_agent_t *a);
/* End the session now (the lease ran out): reconnect later. */
void dr_agent_link_drop(dr_agent_t *a, const char *why);
/* Send a message to the controller: 0, or -1 when the link is not up. */
int dr_agent_link_send(dr_agent_t *a, int type, const void *m);
/* The current session's decoder counters (zeros when not connected). */
dr_proto_stats_t dr_agent_link_stats(const dr_agent_t *a);
/* How many sessions reached WELCOME. */
uint64_t dr_agent_link_sessions(const dr_agent_t *a);

/* Read a node key file: it must not be readable or writable by group or
 * others; the contents are 64 hex digits. */
int dr_agent_key_load(const char *path, uint8_t key[DR_PROTO_KEY], dr_err_t *err);
/* Split "HOST:PORT" or "[V6]:PORT". */
int dr_agent_split_hostport(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
                            dr_err_t *err);

#endif
