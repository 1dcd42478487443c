/* proto.h - the wire protocol between droverd and its agents.
 *
 * Pure: no sockets, clocks or printing.  Callers hand in bytes read from a
 * stream and get frames out; they hand in messages and get bytes to write.
 *
 * A frame, all integers big-endian:
 *
 *   offset size  field
 *   0      4     magic "DRV1"
 *   4      1     version (DR_PROTO_VERSION)
 *   5      1     type (dr_msg_type_t)
 *   6      2     flags (0; reserved)
 *   8      4     body length (<= DR_PROTO_MAX_BODY; <= DR_PROTO_MAX_PREAUTH
 *                before the session is open)
 *   12     8     sequence number (per direction, strictly increasing from 1;
 *                0 on CHALLENGE and HELLO)
 *   20     16    session nonce: the nonce the *receiver* chose (zero on
 *                CHALLENGE and HELLO)
 *   36     len   body: one JSON object (UTF-8), AES-256-GCM ciphertext once
 *                the session is open
 *   36+len 16    the GCM tag (header as associated data); zero on CHALLENGE
 *                and HELLO
 *
 * Keys (version 2): the controller holds a master key; each node holds only
 * its own node key, HMAC-SHA256(master, "drover-node-key\0" || name), which
 * `droverd --enroll NODE` prints.  A node key lets its holder register as
 * that one node and read the frames sent to it, nothing else.
 *
 * Session set-up: the agent connects; the controller sends CHALLENGE (in
 * clear) with its fresh nonce Nc; the agent answers HELLO (in clear) with
 * its name, its fresh nonce Na and proof = HMAC-SHA256(node key,
 * "drover-hello\0" || Nc || Na || name).  The controller derives the
 * node key from the name, checks the proof, and from then on both ends
 * seal every frame: per direction key = HKDF-SHA256(node key, salt =
 * sender's nonce || receiver's nonce, info "drover-frame-v2"), GCM nonce =
 * 4 zero bytes || sequence number.  The first sealed frame is WELCOME, which
 * also proves to the agent that it talks to the holder of the master key.
 * A proof is good for one Nc only (replaying a HELLO gets nothing); a frame
 * recorded in another session fails its tag (other keys); one replayed or
 * reordered within a session has a sequence number not above the last; a
 * forged or corrupted one fails its tag.  All three are dropped and
 * counted (dr_proto_stats_t), never acted on. */
#ifndef DROVER_PROTO_H
#define DROVER_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/error.h"

#define DR_PROTO_VERSION     2
#define DR_PROTO_HDR         36
#define DR_PROTO_TAG         16 /* AES-256-GCM tag */
#define DR_PROTO_NONCE       16
#define DR_PROTO_KEY         32
#define DR_PROTO_PROOF       32          /* HELLO's HMAC-SHA256 proof */
#define DR_PROTO_MAX_BODY    (8u << 20)  /* a LAUNCH with a 4 MiB script and its environment */
#define DR_PROTO_MAX_PREAUTH (64u << 10) /* CHALLENGE and HELLO: before anyone is known */

typedef enum dr_msg_type {
    DR_MSG_HELLO = 1,     /* agent -> ctld: name, nonce, version, proof (in clear) */
    DR_MSG_WELCOME = 2,   /* ctld -> agent: nonce, epoch, heartbeat period, declared node */
    DR_MSG_REGISTER = 3,  /* agent -> ctld: GPUs, topology, jobs it holds */
    DR_MSG_HEARTBEAT = 4, /* agent -> ctld */
    DR_MSG_LAUNCH = 5,    /* ctld -> agent: start one rank/task of a job */
    DR_MSG_KILL = 6,      /* ctld -> agent: stop a job's processes */
    DR_MSG_JOB_STATE = 7, /* agent -> ctld: a job's processes started / ended */
    DR_MSG_ACK = 8,       /* ctld -> agent: a JOB_STATE end report is committed */
    DR_MSG_REJECT = 9,    /* ctld -> agent: registration refused (reason), then close */
    /* srun inside a job (docs/slurm.md): srun -> its agent on the local
     * socket, then agent -> ctld on the link */
    DR_MSG_STEP_REQ = 10,    /* start a job step: one task per rank */
    DR_MSG_STEP_CANCEL = 11, /* stop a step (srun got SIGINT/SIGTERM or went away) */
    DR_MSG_STEP_STATE = 12,  /* ctld -> agent -> srun: accepted, refused, done */
    /* --signal (docs/jobspec.md): the job's warning signal */
    DR_MSG_SIGNAL = 13,   /* ctld -> agent: send it now (preemption, drain) */
    DR_MSG_SIGNALED = 14, /* agent -> ctld: it sent it by itself (time limit, checkpoint round) */
    DR_MSG_LEASE = 15,    /* ctld -> agent: a heartbeat was heard (renews the lease) */
    DR_MSG_CKPT = 16,     /* agent -> ctld: the checkpoint a launch resumes from */
    /* a job's output, read where it was written (issue 21: never by droverd) */
    DR_MSG_OUTPUT_REQ = 17, /* ctld -> agent: read part of a job's output file as its user */
    DR_MSG_OUTPUT = 18,     /* agent -> ctld: those bytes, or why not */
    DR_MSG_CHALLENGE = 19,  /* ctld -> agent, first frame (in clear): version, nonce */
    DR_MSG_NTYPES
} dr_msg_type_t;

const char *dr_msg_type_name(int type); /* "hello", ...; "unknown" */

/* ---- frames and sessions ---- */

typedef struct dr_proto_stats {
    uint64_t frames_in, frames_out;
    uint64_t bad_header; /* wrong magic/version/type/length: stream is unusable */
    uint64_t bad_mac;    /* forged or corrupted: GCM tag mismatch (or a non-zero trailer) */
    uint64_t replayed;   /* wrong session nonce or sequence number not increasing */
    uint64_t bad_body;   /* authentic but not a valid message of its type */
} dr_proto_stats_t;

/* One end of one connection. */
typedef struct dr_proto_session {
    uint8_t key[DR_PROTO_KEY];          /* the node key (the controller sets it on HELLO) */
    uint8_t my_nonce[DR_PROTO_NONCE];   /* expected on incoming frames */
    uint8_t peer_nonce[DR_PROTO_NONCE]; /* written on outgoing frames */
    bool have_peer_nonce;               /* the session is open: frames are sealed */
    uint8_t tx_key[DR_PROTO_KEY];       /* derived when the session opens */
    uint8_t rx_key[DR_PROTO_KEY];
    uint64_t tx_seq; /* last sequence number sent */
    uint64_t rx_seq; /* last sequence number accepted */
    dr_proto_stats_t stats;
} dr_proto_session_t;

/* key: DR_PROTO_KEY bytes (the node key; the controller passes zeros and
 * sets it with dr_proto_session_set_key once HELLO named the node);
 * my_nonce: DR_PROTO_NONCE fresh random bytes (the caller draws them: this
 * module has no randomness source). */
void dr_proto_session_init(dr_proto_session_t *s, const uint8_t *key, const uint8_t *my_nonce);
void dr_proto_session_set_key(dr_proto_session_t *s, const uint8_t *key);
/* Open the session: the peer's nonce is known, both direction keys are
 * derived from the key and the two nonces; every frame from now on is
 * sealed.  DR_EINVAL if the nonce is the session's own (a reflection),
 * DR_EIO if OpenSSL failed. */
int dr_proto_session_set_peer_nonce(dr_proto_session_t *s, const uint8_t *nonce);

/* Node keys and the HELLO proof (see the top of this file).  A node's key
 * generation (0 at first) is bumped when its old key must die for good
 * (drover nodes rekey): generation g > 0 is HMAC-SHA256(master,
 * "drover-node-key\0" || name || "\0" || g in decimal). */
int dr_proto_node_key(const uint8_t master[DR_PROTO_KEY], const char *name,
                      uint8_t out[DR_PROTO_KEY], dr_err_t *err);
int dr_proto_node_key_gen(const uint8_t master[DR_PROTO_KEY], const char *name, uint32_t gen,
                          uint8_t out[DR_PROTO_KEY], dr_err_t *err);
int dr_proto_hello_proof(const uint8_t key[DR_PROTO_KEY], const uint8_t ctld_nonce[DR_PROTO_NONCE],
                         const uint8_t agent_nonce[DR_PROTO_NONCE], const char *name,
                         uint8_t out[DR_PROTO_PROOF], dr_err_t *err);
/* The proof is right for that key, nonces and name (constant time). */
bool dr_proto_hello_verify(const uint8_t key[DR_PROTO_KEY],
                           const uint8_t ctld_nonce[DR_PROTO_NONCE],
                           const uint8_t agent_nonce[DR_PROTO_NONCE], const char *name,
                           const uint8_t proof[DR_PROTO_PROOF]);

/* The version byte of a frame header that starts buf (magic matched and the
 * byte arrived), else -1: lets a caller whose decoder refused a stream say
 * "the peer speaks version N". */
int dr_proto_peer_version(const uint8_t *buf, size_t len);

/* Parse a cluster key file's contents: 64 hex digits (optionally followed
 * by whitespace).  Errors say what is wrong without echoing the key. */
int dr_proto_key_parse(const char *text, size_t len, uint8_t key[DR_PROTO_KEY], dr_err_t *err);
/* Format a key as 64 hex digits and a newline into out (66 bytes incl. NUL). */
void dr_proto_key_format(const uint8_t key[DR_PROTO_KEY], char out[66]);

/* Encode one frame: header, body (len bytes of JSON), tag.  CHALLENGE and
 * HELLO go in clear, with seq 0, a zero nonce and a zero tag, and only
 * before the session is open; every other type is sealed, takes ++tx_seq
 * and the peer's nonce (DR_ESTATE if the session is not open).  *out is
 * malloc'd. */
int dr_proto_encode(dr_proto_session_t *s, int type, const char *body, size_t len, uint8_t **out,
                    size_t *outlen, dr_err_t *err);

/* A decoded, authenticated frame.  body points into the caller's buffer
 * and is NOT NUL-terminated. */
typedef struct dr_frame {
    int type;
    uint64_t seq;
    const char *body;
    size_t len;
} dr_frame_t;

typedef enum dr_proto_rc {
    DR_PROTO_FRAME = 1,   /* a frame was taken: *used bytes consumed, f filled */
    DR_PROTO_NEED = 0,    /* need more bytes (nothing consumed) */
    DR_PROTO_DROPPED = 2, /* a whole frame was consumed and dropped (bad MAC,
                             replay): counted; the stream goes on */
    DR_PROTO_FATAL = -1   /* bad header: counted; close the connection */
} dr_proto_rc_t;

/* Try to take one frame from buf[0, len).  Checks, in order: header sanity
 * (fatal; checked on whatever part of the header has arrived, so garbage
 * is refused early: wrong magic, version, type, flags, or a length over
 * DR_PROTO_MAX_BODY; before the session is open, any type but CHALLENGE and
 * HELLO or a length over DR_PROTO_MAX_PREAUTH; after, CHALLENGE or HELLO),
 * completeness (need), then for a frame in clear: seq 0, zero nonce
 * (dropped, replayed) and zero tag (dropped, bad_mac); for a sealed one:
 * the tag (dropped, bad_mac), nonce and sequence (dropped, replayed).  A
 * sealed frame is decrypted IN PLACE (buf is written) and advances rx_seq.
 * Callers count bad_body themselves when an accepted frame's body fails its
 * parser. */
dr_proto_rc_t dr_proto_decode(dr_proto_session_t *s, uint8_t *buf, size_t len, size_t *used,
                              dr_frame_t *f);

/* ---- messages (bodies) ----
 *
 * Each message has a C struct, an encoder to a JSON string (malloc'd,
 * NUL-terminated) and a parser from a frame body that validates every field
 * (types, ranges, lengths, required keys; unknown keys are ignored for
 * forward compatibility) and names the bad field in err.  Parsed structs
 * own their strings; free them with the matching _free. */

#define DR_MSG_MAX_GPUS 1024
#define DR_MSG_MAX_ARGS 4096
#define DR_MSG_MAX_JOBS 100000
#define DR_MSG_MAX_STR  4096
#define DR_MSG_MAX_TEXT (4u << 20) /* a batch script (optional fields) */
/* Data shards a node holds (names of the entries of its cache directory):
 * at most this many, each at most this long.  A full list of long names
 * would not fit in one body (DR_PROTO_MAX_BODY), so the agent also stops
 * at DR_MSG_MAX_SHARD_BYTES of names in all. */
#define DR_MSG_MAX_SHARDS      100000
#define DR_MSG_MAX_SHARD_NAME  255
#define DR_MSG_MAX_SHARD_BYTES (6u << 20)

typedef struct dr_msg_hello {
    uint32_t version; /* DR_PROTO_VERSION of the agent */
    char *name;       /* node name */
    uint8_t nonce[DR_PROTO_NONCE];
    uint8_t proof[DR_PROTO_PROOF]; /* dr_proto_hello_proof(node key, Nc, nonce, name) */
} dr_msg_hello_t;

/* The controller's first frame: its version and its nonce Nc. */
typedef struct dr_msg_challenge {
    uint32_t version;
    uint8_t nonce[DR_PROTO_NONCE];
} dr_msg_challenge_t;

typedef struct dr_msg_welcome {
    uint8_t nonce[DR_PROTO_NONCE];
    uint64_t epoch;        /* controller incarnation, bumped on each start */
    uint32_t heartbeat_ms; /* how often the agent must heartbeat */
    /* The agent's lease: cut off from the controller this long (no LEASE
     * answering one of its heartbeats), it stops its jobs on its own, so
     * that the controller may requeue them after the lease.  0: no lease
     * (jobs run on however long the link is down). */
    uint32_t lease_ms;
    /* what the config declares for this node (the agent's fallback) */
    char *gpu_type; /* "" for a CPU-only node */
    uint32_t ngpus;
    uint32_t cpus;
    uint64_t mem_mb;
} dr_msg_welcome_t;

typedef struct dr_msg_gpu {
    uint32_t index;
    char *name; /* as the driver reports it, e.g. "NVIDIA H100 80GB HBM3" */
    char *uuid; /* "" if unknown */
    char *pci;  /* bus id "0000:17:00.0", "" if unknown */
    uint64_t mem_mb;
    int32_t numa; /* -1 if unknown */
} dr_msg_gpu_t;

/* A job (rank) an agent holds, reported at registration so a restarted
 * controller can reconcile. */
typedef struct dr_msg_held {
    uint64_t job;
    uint32_t gen;
    uint32_t rank;
    bool running;      /* still running; else it ended while unreported */
    int32_t exit_code; /* if ended: exit status, or -1 if signalled */
    int32_t signal;    /* if ended by a signal: its number, else 0 */
    uint8_t why;       /* if ended: dr_end_why_t */
    int64_t end_ns;    /* if ended: when (Unix ns) */
} dr_msg_held_t;

typedef struct dr_msg_register {
    char *source; /* "nvml", "rocm" or "declared" */
    dr_msg_gpu_t *gpus;
    uint32_t ngpus;
    uint32_t cpus;
    uint64_t mem_mb;
    uint32_t numa_nodes;
    char *hostname;
    dr_msg_held_t *held;
    uint32_t nheld;
    /* Optional (an agent without a cache leaves the key out, as older
     * agents do): the shards the node holds, its whole set. */
    char **shards;
    uint32_t nshards;
} dr_msg_register_t;

typedef struct dr_msg_heartbeat {
    int64_t now_ns;   /* agent's clock, for skew display */
    uint32_t running; /* processes it supervises */
    /* Optional: sent only when the node's shards changed since the last
     * report.  shards_given says the key was there (the encoder sends it
     * when set, or when nshards > 0); then shards is the whole new set,
     * possibly empty.  Without it nothing changed. */
    char **shards;
    uint32_t nshards;
    bool shards_given;
} dr_msg_heartbeat_t;

typedef struct dr_msg_launch {
    uint64_t job;
    uint32_t gen;   /* job generation: bumped on each requeue (fencing) */
    uint64_t epoch; /* controller epoch */
    uint32_t rank;  /* node rank within the job (0 for single-node) */
    uint32_t nranks;
    char **argv; /* argc >= 1 */
    uint32_t argc;
    /* A batch script's text, or NULL: the agent writes it to a private
     * file and runs that file with argv[1..] as its arguments (argv[0] is
     * the script's name, for messages). */
    char *script;
    char **env; /* "KEY=VALUE", set on top of a clean base environment */
    uint32_t nenv;
    char *cwd;
    char *out_path; /* stdout file, absolute */
    char *err_path; /* stderr file, absolute ("" = same as stdout) */
    uint32_t uid, gid;
    uint32_t *gpus; /* GPU indices on this node */
    uint32_t ngpus;
    int64_t time_limit_ns; /* 0 = none; the agent signals, waits grace, kills */
    int64_t grace_ns;
    uint32_t cpu_milli; /* cgroup limits, 0 = none */
    uint64_t mem_mb;
    /* A service replica: the port drover handed it (DROVER_PORT; 0 = none)
     * and its readiness check, which the agent runs against that port on
     * the node's loopback: "tcp", "http:/PATH"; NULL or "none" = none (the
     * agent reports it ready once started). */
    uint32_t port;
    char *ready;
    /* 0: one of the job's own processes (a command's rank, a batch
     * script); s >= 1: a task of srun's step s - 1 (Slurm's JOBID.(s-1)).
     * Ranks are numbered across the job's generation, steps included, so
     * (job, gen, rank) still names one process. */
    uint32_t step;
    /* --signal=[B:]SIG[@SECS]: 0 = none.  The agent sends SIG itself
     * signal_secs before the time limit (when there is one) and, with
     * ckpt_every_ns > 0, every ckpt_every_ns, the first time ckpt_next_ns
     * after the start (a step's task joins the job's rounds); the
     * controller asks for it before a preemption or a drain (SIGNAL).
     * signal_batch (B:): only the batch shell's main process gets it (a
     * step's task: nothing), else the rank's whole process group. */
    int32_t signal;
    uint32_t signal_secs;
    bool signal_batch;
    int64_t ckpt_every_ns;
    int64_t ckpt_next_ns;
    /* The job's checkpoint directory (DROVER_CHECKPOINT_DIR), or NULL:
     * before it starts, the agent verifies the checkpoints there and
     * points DROVER_RESTART_FROM at the newest that verifies. */
    char *ckpt_dir;
    /* The site allows jobs as root (AllowRootJobs=YES): without it an agent
     * refuses a LAUNCH whose uid is 0 (defence in depth: the controller
     * refuses such a submit first). */
    bool allow_root;
} dr_msg_launch_t;

typedef struct dr_msg_kill {
    uint64_t job;
    uint32_t gen;
    int32_t signal; /* first signal (SIGTERM); SIGKILL follows after grace */
    int64_t grace_ns;
    char *reason;
    uint32_t step; /* 0: every process of (job, gen) here; s >= 1: only step s - 1's tasks */
} dr_msg_kill_t;

/* Why a rank ended, as the agent saw it. */
typedef enum dr_end_why {
    DR_END_EXIT = 0,    /* exited by itself (exit_code / signal say how) */
    DR_END_TIMEOUT = 1, /* killed by the agent at its time limit */
    DR_END_KILLED = 2,  /* killed on a KILL message */
    DR_END_LAUNCH = 3,  /* could not be started (detail says why) */
    DR_END_LEASE = 4, /* stopped by the agent itself: cut off from the controller past its lease */
    DR_END_NWHY
} dr_end_why_t;

/* Why a job got its warning signal (dr_msg_signal_t.why). */
typedef enum dr_sig_why {
    DR_SIG_LIMIT = 0,   /* signal_secs before its time limit (the agent's timer) */
    DR_SIG_CKPT = 1,    /* a checkpoint interval came round (the agent's timer) */
    DR_SIG_PREEMPT = 2, /* the controller stops it soon (preemption) */
    DR_SIG_DRAIN = 3,   /* one of its nodes is being drained */
    DR_SIG_NWHY
} dr_sig_why_t;

/* SIGNAL (ctld -> agent): send the warning signal to the ranks of (job,
 * gen) here now, each as its LAUNCH said (signal_batch); rank and t_ns are
 * 0.  SIGNALED (agent -> ctld): the agent sent it to rank `rank` at t_ns by
 * itself.  why: dr_sig_why_t, signal: 1..64 (the receiver checks both).
 * A preemption's SIGNAL of a job that checkpoints also names the job's
 * checkpoint directory and whose it is: the agent of its first rank
 * watches it for a checkpoint committed after the signal (a CKPT with
 * committed set), so that the controller need not wait out the grace. */
typedef struct dr_msg_signal {
    uint64_t job;
    uint32_t gen;
    uint32_t rank;
    int32_t signal;
    uint32_t why;
    int64_t t_ns;
    char *ckpt_dir; /* SIGNAL, DR_SIG_PREEMPT only; NULL = none */
    uint32_t uid, gid;
} dr_msg_signal_t;

typedef struct dr_msg_job_state {
    uint64_t job;
    uint32_t gen;
    uint32_t rank;
    bool started; /* true: processes started (pid); false: ended */
    int32_t pid;
    int32_t exit_code; /* ended: exit status, or -1 when signalled */
    int32_t signal;    /* ended by signal: its number */
    uint8_t why;       /* dr_end_why_t */
    int64_t t_ns;      /* when (agent clock, Unix ns) */
    char *detail;      /* "" or a reason (launch failure text) */
    /* started = true only: a readiness report (DR_READY_*), not a start */
    uint8_t ready;
} dr_msg_job_state_t;

/* dr_msg_job_state_t.ready */
enum { DR_READY_NONE = 0, DR_READY_YES = 1, DR_READY_NO = 2 };

typedef struct dr_msg_ack {
    uint64_t job;
    uint32_t gen;
    uint32_t rank;
} dr_msg_ack_t;

typedef struct dr_msg_reject {
    char *reason;
} dr_msg_reject_t;

/* A job step (srun).  srun sends it to its node's agent over the local
 * socket with req = 0 and uid = 0; the agent fills in uid from the peer's
 * credentials (SO_PEERCRED) and its own request id, and forwards it.  The
 * controller checks key, uid and generation against the job. */
#define DR_MSG_STEP_KEY 32 /* hex digits of a job generation's step key */
typedef struct dr_msg_step_req {
    uint64_t job;
    uint32_t gen;
    uint64_t req; /* the asking agent's request id */
    char *key;    /* DROVER_STEP_KEY of the job generation */
    uint32_t uid;
    uint32_t ntasks;          /* -n; 0 = the job's */
    uint32_t nodes;           /* -N; 0 = as many as the tasks need (all when -n is not given) */
    uint32_t ntasks_per_node; /* --ntasks-per-node; 0 = not given */
    uint32_t gpus_per_task;   /* --gpus-per-task; 0 = each task sees the job's GPUs on its node */
    uint32_t cpus_per_task;   /* -c; 0 = the job's */
    bool kill_on_bad_exit;    /* one task failing stops the others */
    char **argv;              /* argc >= 1 */
    uint32_t argc;
    char **env; /* srun's environment ("KEY=VALUE"), the tasks' base */
    uint32_t nenv;
    char *cwd;
    char *out_path; /* tasks' stdout: a file srun's stdout is; "" = the job's output */
    char *err_path; /* tasks' stderr likewise; "" = the job's error file */
} dr_msg_step_req_t;

typedef struct dr_msg_step_cancel {
    uint64_t job;
    uint32_t gen;
    uint64_t req;   /* the request the step came from */
    int32_t signal; /* first signal to the tasks */
} dr_msg_step_cancel_t;

/* dr_msg_step_state_t.state */
enum { DR_STEP_ACCEPTED = 0, DR_STEP_DONE = 1, DR_STEP_REFUSED = 2, DR_STEP_NSTATES };

typedef struct dr_msg_step_state {
    uint64_t job;
    uint32_t gen;
    uint64_t req;
    uint32_t state;  /* DR_STEP_*; a parser's caller checks the range */
    uint32_t step;   /* the step's id (JOBID.step) */
    uint32_t ntasks; /* its tasks */
    uint32_t nnodes; /* and nodes */
    int32_t status;  /* DONE: the highest exit status; 128 + N for a task killed by signal N */
    char *detail;    /* REFUSED: why; DONE: the first failing task, "" if none */
} dr_msg_step_state_t;

/* The controller's answer to a HEARTBEAT: `seq` is that heartbeat frame's
 * sequence number.  The agent renews its lease from the time it sent that
 * heartbeat (its own monotonic clock), which is before the controller
 * heard it: so the lease on the agent always ends before the controller's
 * "last heard + lease" (docs/operations.md). */
typedef struct dr_msg_lease {
    uint64_t seq;
} dr_msg_lease_t;
/* What the verification before a launch found (once per job generation
 * on each node, for its first rank there): the checkpoint it resumes from
 * ("" = none verified: it starts afresh) and those it passed over, newest
 * first, each "NAME: why".  The controller writes it to the job's events.
 * With committed set: a checkpoint the job committed after a preemption's
 * SIGNAL, verified byte for byte (from, seq, created_ns: its manifest's
 * commit time on the agent's clock); the controller stops the job now. */
#define DR_MSG_MAX_CKPT_REJECTS 32
typedef struct dr_msg_ckpt {
    uint64_t job;
    uint32_t gen;
    uint32_t rank;
    char *from;      /* a subdirectory name of the job's checkpoint directory, or "" */
    uint64_t seq;    /* its manifest's seq (0 with from "") */
    char *error;     /* "" or why the directory could not be checked at all */
    char **rejected; /* "NAME: reason" */
    uint32_t nrejected;
    bool committed;     /* a commit after a preemption signal, not a launch's check */
    int64_t created_ns; /* committed: its manifest's time (Unix ns) */
} dr_msg_ckpt_t;

/* `drover logs`: the controller asks the node that ran the job for part of
 * its output file; the agent reads it in a child that runs as the job's
 * user (uid, gid), opening path with O_NOFOLLOW | O_NONBLOCK, regular files
 * only, at most `limit` bytes from `offset`.  The controller never opens
 * a path a user named (docs/design.md). */
#define DR_MSG_MAX_OUTPUT (1u << 20)
typedef struct dr_msg_output_req {
    uint64_t req; /* the controller's request id, echoed in the answer */
    uint64_t job;
    char *path; /* absolute, as the job's launch opened it */
    uint32_t uid, gid;
    uint64_t offset;
    uint32_t limit; /* <= DR_MSG_MAX_OUTPUT */
} dr_msg_output_req_t;
/* The answer's status */
typedef enum dr_output_status {
    DR_OUTPUT_OK = 0,
    DR_OUTPUT_MISSING, /* no such file (yet) */
    DR_OUTPUT_DENIED,  /* the job's user may not read it, or it is not a regular file */
    DR_OUTPUT_BUSY,    /* too many reads at once on this node: try again */
    DR_OUTPUT_FAILED,  /* the read failed or timed out (detail says why) */
    DR_OUTPUT_NSTATUS
} dr_output_status_t;
typedef struct dr_msg_output {
    uint64_t req;
    uint32_t status; /* dr_output_status_t */
    char *detail;    /* "" or what failed */
    uint8_t *data;   /* the bytes from offset (base64 on the wire) */
    uint32_t ndata;  /* <= DR_MSG_MAX_OUTPUT */
    uint64_t size;   /* the file's size when it was read */
} dr_msg_output_t;

#define DR_MSG_DECLARE(name)                                                                       \
    int dr_msg_##name##_encode(const dr_msg_##name##_t *m, char **json, size_t *len,               \
                               dr_err_t *err);                                                     \
    int dr_msg_##name##_parse(dr_msg_##name##_t *m, const char *body, size_t len, dr_err_t *err);  \
    void dr_msg_##name##_free(dr_msg_##name##_t *m);
DR_MSG_DECLARE(hello)
DR_MSG_DECLARE(welcome)
DR_MSG_DECLARE(register)
DR_MSG_DECLARE(heartbeat)
DR_MSG_DECLARE(launch)
DR_MSG_DECLARE(kill)
DR_MSG_DECLARE(job_state)
DR_MSG_DECLARE(ack)
DR_MSG_DECLARE(reject)
DR_MSG_DECLARE(step_req)
DR_MSG_DECLARE(step_cancel)
DR_MSG_DECLARE(step_state)
DR_MSG_DECLARE(signal)
DR_MSG_DECLARE(lease)
DR_MSG_DECLARE(ckpt)
DR_MSG_DECLARE(output_req)
DR_MSG_DECLARE(output)
DR_MSG_DECLARE(challenge)
#undef DR_MSG_DECLARE

/* Encode message m of `type` and frame it in one step (*out malloc'd). */
int dr_proto_send_msg(dr_proto_session_t *s, int type, const void *m, uint8_t **out, size_t *outlen,
                      dr_err_t *err);

/* ---- the local step socket (srun <-> its node's agent) ----
 *
 * A Unix socket on one machine: no sealing (the agent authenticates the peer
 * by SO_PEERCRED and the job's step key), but the same strict bodies.  A
 * local frame is [4-byte big-endian body length][1-byte type][body]; only
 * the step types travel there and a body is at most DR_PROTO_MAX_BODY. */
#define DR_PROTO_LOCAL_HDR 5
/* Frame message m of `type` (a step type) for the local socket. */
int dr_proto_local_encode(int type, const void *m, uint8_t **out, size_t *outlen, dr_err_t *err);
/* Take one local frame from buf[0, len): DR_PROTO_FRAME (f filled, *used
 * consumed), DR_PROTO_NEED, or DR_PROTO_FATAL (a wrong type or length:
 * close the connection; err says which). */
dr_proto_rc_t dr_proto_local_decode(const uint8_t *buf, size_t len, size_t *used, dr_frame_t *f,
                                    dr_err_t *err);

#endif
