/* ctld.h - droverd, the controller: its options and its state.
 *
 * The controller is the second driver of the scheduler core (the first is
 * src/sim).  Work happens in turns (turn.c): HTTP handlers (api_*.c) and
 * agent messages (agent_msgs.c) change memory, mark jobs dirty and queue
 * their replies and frames in the outbox (outbox.c); the turn runs at most
 * one scheduling pass, writes every dirty record in one SQLite transaction
 * (store.c) and only after the commit sends what was queued.  Nothing is
 * acknowledged before it is durable.
 *
 * One file per step of a job's life (submit.c, launch.c, settle.c, kill.c,
 * node_loss.c, stop.c, restart.c), each with its own header declaring what
 * the others may call; a module's own state sits behind an opaque pointer
 * here, as in flux-core's job-manager. */
#ifndef DROVER_CTLD_H
#define DROVER_CTLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "ctld/job.h"
#include "ctld/log.h"
#include "ctld/node.h"
#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/jobspec.h"
#include "drover/proto.h"
#include "drover/sched.h"
#include "drover/start_estimate.h"
#include "drover/util.h"

struct sqlite3;

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
    /* no listeners (API, agent port, HAProxy): the caller drives the
     * controller by function calls and c->base (the in-process tests) */
    bool embedded;
    const char *crash_at; /* --test-crash-at NAME[:N]: tests only (crashpoint.c) */
} ctld_opts_t;

typedef struct ctld_stats {
    uint64_t turns, passes, commits, commit_fail;
    uint64_t submits, launches, frames_dropped;
    double pass_s_total, commit_s_total;
} ctld_stats_t;

typedef struct dr_ctld {
    ctld_opts_t o;
    struct ctld_rates *rates; /* submit rate limit, per user (ratelimit.c) */
    struct event_base *base;
    struct evhttp *http;      /* the TCP API (HTTPS with --tls) */
    struct evhttp *http_unix; /* the Unix socket's: always plain (peer credentials) */
    struct ssl_ctx_st *tls_ctx;
    char tls_fpr[CTLD_TLS_FPR_LEN]; /* the certificate's SHA-256, for the log */
    struct evconnlistener *agent_lst;
    struct event *sig_int, *sig_term;
    struct sqlite3 *db;
    struct sqlite3_stmt *stmts[6]; /* prepared once: the statements every turn runs */
    double *share_saved;           /* raw fair-share usage per slot as last stored */
    double *budget_saved;          /* per account: the 4 budget figures as last stored */
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
    /* the modules' own state, each behind its file's functions */
    struct ctld_turn *turn;       /* timers, the eviction queue (turn.c) */
    struct ctld_outbox *outbox;   /* replies and frames waiting for the commit (outbox.c) */
    struct ctld_notes *notes;     /* this turn's history records (notes.c) */
    struct ctld_deps *deps;       /* jobs waiting for their dependencies (deps.c) */
    struct ctld_arrays *arrays;   /* array and service parents the turn feeds (arrays.c) */
    struct ctld_stops *stops;     /* preempted jobs stopping, launches waiting (stop.c) */
    struct ctld_classes *classes; /* each job's speed on each GPU type (classes.c) */
    bool drains_dirty;            /* some node's drain_dirty is set */
    /* the last commit failed (a full disk): why, and since when; submits
     * are refused with 507 until a commit works again */
    char store_fail[200];
    dr_time_t store_fail_since;
    dr_time_t last_now; /* ctld_now's last answer (clock.c) */
    size_t ev_flushed;  /* event-log records already written */
    ctld_stats_t st;
    uint64_t agent_closes;     /* ctld_agent_close calls: on_read's "is it still there?" test */
    uint32_t agents_unauthed;  /* connections whose HELLO has not proved a node key yet */
    ctld_loglimit_t agent_log; /* lines about the agent port's refusals (agent_link.c) */
    bool stopping;
    struct ctld_lb *lb;           /* HAProxy runtime API client (lb_haproxy.c), NULL = none */
    struct ctld_metrics *metrics; /* GET /metrics: counters, histograms (metrics.c) */
    struct ctld_series *series;   /* GET /v1/stats: the samples of the last 24 h (stats.c) */
    struct ctld_events *events;   /* GET /v1/events streams (events.c) */
    struct ctld_backup *backup;   /* a backup in progress (backup.c) */
} dr_ctld_t;

int dr_ctld_init(dr_ctld_t *c, const ctld_opts_t *o, dr_err_t *err);
void dr_ctld_free(dr_ctld_t *c);
dr_time_t ctld_now(dr_ctld_t *c);

#endif
