/* driver.c - the controller's turns: the only caller of dr_sched_*.
 *
 * Facts arrive from the edges (a submit, a cancel, an agent's report) and
 * change memory at once; each marks the job dirty and asks for a turn.  A
 * turn runs after the callbacks of one loop iteration: it feeds arrays,
 * runs at most one scheduling pass (on events, never more often than
 * --min-pass-interval; a timer covers the rest), writes every dirty job and
 * every new event in one transaction, and only after COMMIT sends the
 * replies and the agents' frames it queued.  So many requests arriving
 * together share one fsync (group commit), and nothing is acknowledged or
 * launched before it is durable. */
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/output.h"
#include "drover/config.h"
#include "drover/hostlist.h"
#include "drover/util.h"

#define KILL_GRACE_NS (10 * DR_NSEC_PER_SEC)

void ctld_log(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "droverd: %s\n", buf);
}

/* Wall-clock time, never going backwards (the event log is time-ordered). */
dr_time_t ctld_now(dr_ctld_t *c)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    dr_time_t t = (dr_time_t)ts.tv_sec * DR_NSEC_PER_SEC + ts.tv_nsec;
    if (t < c->last_now)
        t = c->last_now;
    c->last_now = t;
    return t;
}

static ctld_job_t *of(dr_job_t *j)
{
    return (ctld_job_t *)j; /* dr_job_t is ctld_job_t's first member */
}

/* ---- history records beside the scheduler's ---- */

/* Queue a note (committed with the next turn's records); NULL when memory
 * ran out, which loses the note and nothing else. */
static ctld_note_t *note_push(dr_ctld_t *c, const char *what, const char *fmt, va_list ap)
    DR_PRINTF(3, 0);
static ctld_note_t *note_push(dr_ctld_t *c, const char *what, const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    char *d = dr_strdup(buf);
    if (!d || dr_grow((void **)&c->notes, &c->notes_cap, c->nnotes + 1, sizeof *c->notes) != 0) {
        free(d);
        return NULL;
    }
    ctld_note_t *n = &c->notes[c->nnotes++];
    *n = (ctld_note_t){.job = 0, .node = -1, .t = ctld_now(c), .detail = d};
    snprintf(n->what, sizeof n->what, "%s", what);
    ctld_turn_schedule(c);
    return n;
}

void ctld_note(dr_ctld_t *c, uint64_t job, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ctld_note_t *n = note_push(c, what, fmt, ap);
    va_end(ap);
    if (n)
        n->job = job;
}

void ctld_node_note(dr_ctld_t *c, uint32_t node, const char *what, const char *from,
                    const char *fmt, ...)
{
    if (c->stopping)
        return; /* the agents' connections closing on our way out change nothing */
    va_list ap;
    va_start(ap, fmt);
    ctld_note_t *n = note_push(c, what, fmt, ap);
    va_end(ap);
    if (!n)
        return;
    n->node = (int32_t)node;
    snprintf(n->from, sizeof n->from, "%s", from);
    snprintf(n->to, sizeof n->to, "%s", ctld_node_state(c, node));
}

static void notes_clear(dr_ctld_t *c)
{
    for (size_t i = 0; i < c->nnotes; i++)
        free(c->notes[i].detail);
    c->nnotes = 0;
}

/* ---- outbox ---- */

static void out_push(dr_ctld_t *c, ctld_out_t *o)
{
    o->next = NULL;
    *c->out_tail = o;
    c->out_tail = &o->next;
    ctld_turn_schedule(c);
}

void ctld_out_http(dr_ctld_t *c, struct evhttp_request *req, int status, char *body, uint64_t job)
{
    ctld_out_t *o = calloc(1, sizeof *o);
    if (!o) {
        ctld_reply_error(req, 503, NULL, "out of memory");
        free(body);
        return;
    }
    *o = (ctld_out_t){.kind = OUT_HTTP, .req = req, .status = status, .body = body, .job = job};
    out_push(c, o);
}

void ctld_out_frame_job(dr_ctld_t *c, int node, int type, char *json, uint64_t job)
{
    ctld_out_t *o = calloc(1, sizeof *o);
    if (!o || !json) {
        free(o);
        free(json);
        return;
    }
    *o = (ctld_out_t){.kind = OUT_FRAME, .node = node, .type = type, .body = json, .job = job};
    out_push(c, o);
}

void ctld_out_frame(dr_ctld_t *c, int node, int type, char *json)
{
    ctld_out_frame_job(c, node, type, json, 0);
}

/* Is job `id` one of the submits a failed commit took back (undo_submits)? */
static bool undone(const dr_ctld_t *c, uint64_t id)
{
    if (!id)
        return false;
    for (const ctld_out_t *o = c->out_head; o; o = o->next)
        if (o->kind == OUT_HTTP && o->job == id)
            return true;
    return false;
}

/* After the commit: replies and frames go out.  After a failed commit the
 * replies say 507 with the store's error; the frames (launches, kills,
 * ACKs of what agents reported) wait for the next commit that works, but
 * those of submits taken back are dropped. */
static void out_flush(dr_ctld_t *c, bool committed)
{
    ctld_out_t *o = c->out_head, *keep = NULL, **keep_tail = &keep;
    if (!committed && !c->stopping)
        for (ctld_out_t *x = o; x; x = x->next)
            if (x->kind == OUT_FRAME && x->job && undone(c, x->job))
                x->job = UINT64_MAX; /* marked: dropped below */
    c->out_head = NULL;
    c->out_tail = &c->out_head;
    uint64_t sent_job = 0; /* the last LAUNCH sent: its job and node */
    int sent_node = -1;
    while (o) {
        ctld_out_t *next = o->next;
        if (ctld_crash_at && committed && o->kind == OUT_FRAME && o->type == DR_MSG_LAUNCH) {
            /* a gang's LAUNCHes sent to some of its nodes, not all */
            if (o->job == sent_job && o->node != sent_node && ctld_crash_due("dispatch-mid-gang"))
                ctld_crash_now(c, "dispatch-mid-gang");
            sent_job = o->job;
            sent_node = o->node;
        }
        if (!committed && !c->stopping && o->kind == OUT_FRAME && o->job != UINT64_MAX) {
            o->next = NULL;
            *keep_tail = o;
            keep_tail = &o->next;
            o = next;
            continue;
        }
        if (o->kind == OUT_HTTP) {
            if (committed && o->job && o->status == 201)
                ctld_metrics_submitted(c, o->job); /* acknowledged */
            if (committed)
                ctld_reply_json(o->req, o->status, o->body);
            else
                ctld_reply_error(o->req, 507, NULL,
                                 "the controller could not commit to its store (%s); nothing "
                                 "was changed, try again once the state directory has space",
                                 c->store_fail[0] ? c->store_fail : "stopping");
        } else if (committed && o->node >= 0 && c->nodes[o->node].agent &&
                   c->nodes[o->node].agent->registered) {
            if (ctld_agent_send(c->nodes[o->node].agent, o->type, o->body) != DR_OK)
                ctld_agent_close(c->nodes[o->node].agent, "send failed");
        }
        free(o->body);
        free(o);
        o = next;
    }
    if (keep) {
        c->out_head = keep;
        c->out_tail = keep_tail;
    }
}

/* ---- launching ---- */

static const dr_jobspec_t *spec_of(const ctld_job_t *cj)
{
    return cj->parent ? &cj->parent->spec : &cj->spec;
}

/* Default output file, as Slurm's slurm-%j.out in the submit directory. */
static void set_paths(dr_ctld_t *c, ctld_job_t *cj)
{
    const dr_jobspec_t *sp = spec_of(cj);
    const char *name = sp->name ? sp->name : sp->script_name ? sp->script_name : "job";
    char dflt[4096];
    const char *cwd = sp->cwd ? sp->cwd : "/tmp";
    snprintf(dflt, sizeof dflt, "%s/%s", cwd,
             cj->j.array_parent ? "drover-%A_%a.out" : "drover-%j.out");
    const char *o = sp->out_path ? sp->out_path : dflt;
    free(cj->out_path);
    free(cj->err_path);
    /* %N: the first node, where a batch script runs */
    const char *node = cj->nranks ? c->cl.nodes[cj->ranks[0].node].name : NULL;
    cj->out_path = dr_jobspec_expand_path(o, cj->j.id, cj->j.array_parent, cj->j.array_index, name,
                                          cj->user, node);
    cj->err_path = sp->err_path ? dr_jobspec_expand_path(sp->err_path, cj->j.id, cj->j.array_parent,
                                                         cj->j.array_index, name, cj->user, node)
                                : dr_strdup(cj->out_path);
}

uint32_t ctld_job_gpus(const ctld_job_t *cj, uint32_t node, uint32_t *gpus)
{
    const dr_job_t *j = &cj->j;
    uint32_t ng = 0;
    for (uint32_t i = 0; i < j->alloc.nslots; i++) {
        const dr_slot_t *s = &j->alloc.slots[i];
        if (s->node != node || s->gpu == DR_NO_GPU)
            continue;
        bool dup = false;
        for (uint32_t k = 0; k < ng; k++)
            dup |= gpus[k] == s->gpu;
        if (!dup && ng < DR_MAX_GPUS_PER_NODE)
            gpus[ng++] = s->gpu;
    }
    return ng;
}

/* A batch script runs once, on the first node, as Slurm's batch step;
 * srun inside it starts the tasks.  Under --launcher torchrun the script
 * is torchrun's program, one per node. */
static bool is_batch(const ctld_job_t *cj)
{
    const dr_jobspec_t *sp = spec_of(cj);
    return sp->script && !(sp->launcher && strcmp(sp->launcher, "torchrun") == 0);
}

/* The LAUNCH message of one of the job's own processes. */
static char *launch_json(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank)
{
    const dr_jobspec_t *sp = spec_of(cj);
    const dr_job_t *j = &cj->j;
    uint32_t node = cj->ranks[rank].node;
    uint32_t gpus[DR_MAX_GPUS_PER_NODE];
    uint32_t ng = ctld_job_gpus(cj, node, gpus);
    uint32_t tpn = cj->tpn ? cj->tpn : 1;
    bool batch = is_batch(cj);
    /* ranks on one node share its GPUs out, in order; the batch script
     * sees all of the first node's, as Slurm's batch step does */
    uint32_t per = ng / tpn, first = cj->ranks[rank].local * per;
    if (tpn > 1 && !batch) {
        memmove(gpus, gpus + first, per * sizeof *gpus);
        ng = per;
    }
    uint32_t per_node[1024];
    uint32_t nn = cj->nnodes < 1024 ? cj->nnodes : 1024;
    for (uint32_t i = 0; i < nn; i++)
        per_node[i] = tpn;
    ctld_task_pos_t pos = {.procid = rank,
                           .localid = cj->ranks[rank].local,
                           .nodeid = rank / tpn,
                           .ntasks = cj->nown,
                           .nnodes = nn,
                           .per_node = per_node,
                           .ngpus = ng,
                           .ranks = true,
                           .step = -1};
    if (batch) { /* Slurm's batch step: task 0 of the job's tasks, no torchrun ranks */
        pos = (ctld_task_pos_t){
            .ntasks = cj->ntasks, .nnodes = nn, .per_node = per_node, .ngpus = ng, .step = -1};
    }
    dr_strvec_t env = {0};
    ctld_launch_env(c, cj, &pos, &env);
    ctld_shard_env(c, cj, &env);
    char ckdir[1200];
    bool ckpt = ctld_ckpt_dir(c, cj, ckdir, sizeof ckdir);
    if (ckpt)
        ctld_ckpt_env(c, cj, &env);

    dr_msg_launch_t m = {0};
    m.job = j->id;
    m.gen = cj->gen;
    m.epoch = c->epoch;
    m.rank = rank;
    m.nranks = cj->nown;
    /* a script runs with its name as argv[0] and its arguments after it;
     * under --launcher torchrun, torchrun runs the command, one per node */
    char **script_argv = NULL;
    bool torchrun = sp->launcher && strcmp(sp->launcher, "torchrun") == 0;
    char targ[6][160];
    if (torchrun && (script_argv = calloc((size_t)sp->argc + 8, sizeof *script_argv))) {
        const char *maddr = ctld_node_addr(c, cj->ranks[0].node);
        uint32_t nnodes = cj->nown / tpn;
        uint32_t nproc = c->cl.nodes[node].ngpus && j->req.gpus_per_node
                             ? (j->req.nodes ? j->req.gpus_per_node : ng)
                             : 1;
        snprintf(targ[0], sizeof targ[0], "--nnodes=%u", nnodes);
        snprintf(targ[1], sizeof targ[1], "--node_rank=%u", rank / tpn);
        snprintf(targ[2], sizeof targ[2], "--nproc_per_node=%u", nproc ? nproc : 1);
        snprintf(targ[3], sizeof targ[3], "--master_addr=%s", maddr);
        snprintf(targ[4], sizeof targ[4], "--master_port=%u", cj->master_port);
        snprintf(targ[5], sizeof targ[5], "--rdzv_id=%llu", (unsigned long long)j->id);
        script_argv[0] = "torchrun";
        for (int k = 0; k < 6; k++)
            script_argv[k + 1] = targ[k];
        for (uint32_t i = 0; i < sp->argc; i++)
            script_argv[i + 7] = sp->argv[i];
        m.argv = script_argv;
        m.argc = sp->argc + 7;
    } else if (!sp->script) {
        m.argv = sp->argv;
        m.argc = sp->argc;
    } else if ((script_argv = calloc((size_t)sp->argc + 2, sizeof *script_argv))) {
        script_argv[0] = sp->script_name ? sp->script_name : "script";
        for (uint32_t i = 0; i < sp->argc; i++)
            script_argv[i + 1] = sp->argv[i];
        m.argv = script_argv;
        m.argc = sp->argc + 1;
        m.script = sp->script;
    }
    m.env = env.v;
    m.nenv = (uint32_t)env.n;
    m.cwd = sp->cwd ? sp->cwd : "/";
    m.out_path = cj->out_path;
    m.err_path = cj->err_path && strcmp(cj->err_path, cj->out_path) != 0 ? cj->err_path : "";
    m.uid = cj->uid;
    m.gid = cj->gid;
    m.allow_root = c->cl.site.allow_root_jobs;
    m.gpus = gpus;
    m.ngpus = ng;
    m.time_limit_ns = cj->j.time_limit; /* --time, or its partition's DefaultTime / MaxTime */
    m.grace_ns = KILL_GRACE_NS;
    m.cpu_milli = j->alloc.cpu_milli_per_node;
    m.mem_mb = j->alloc.mem_mb_per_node;
    if (sp->signal_num) { /* --signal: before the time limit and at each checkpoint round */
        m.signal = sp->signal_num;
        m.signal_secs = sp->signal_secs;
        m.signal_batch = sp->signal_batch;
        m.ckpt_every_ns = j->ckpt_every;
    }
    if (j->kind == DR_KIND_SERVE && cj->parent) { /* a replica: its port and readiness check */
        m.port = cj->master_port;
        m.ready = sp->ready ? sp->ready : "tcp";
    }
    if (ckpt)
        m.ckpt_dir = ckdir; /* the agent verifies it and sets DROVER_RESTART_FROM */
    char *json = NULL;
    size_t len = 0;
    dr_err_t err = {0};
    if (dr_msg_launch_encode(&m, &json, &len, &err) != DR_OK)
        ctld_log("job %llu: cannot encode its launch: %s", (unsigned long long)j->id, err.msg);
    free(script_argv);
    dr_strvec_free(&env);
    return json;
}

int ctld_launch_rank(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank)
{
    if (rank >= cj->nown)
        return ctld_step_launch(c, cj, rank);
    char *json = launch_json(c, cj, rank);
    if (!json)
        return DR_ENOMEM;
    ctld_out_frame_job(c, (int)cj->ranks[rank].node, DR_MSG_LAUNCH, json, cj->j.id);
    c->st.launches++;
    return DR_OK;
}

/* Tasks per node: --ntasks-per-node (or -n spread evenly over the nodes);
 * else one per GPU for a training job that drover starts itself (as
 * torchrun --nproc_per_node would); else one per node (torchrun starts its
 * own processes).  A command runs that many ranks per node; a batch
 * script runs once and its steps start that many by default. */
static uint32_t tasks_per_node(const ctld_job_t *cj, uint32_t nnodes)
{
    const dr_jobspec_t *sp = spec_of(cj);
    const dr_job_t *j = &cj->j;
    if (sp->launcher && strcmp(sp->launcher, "torchrun") == 0)
        return 1;
    /* Slurm's task counts (-n, --ntasks-per-node), where they spread evenly */
    if (sp->ntasks_per_node)
        return sp->ntasks_per_node;
    if (sp->ntasks && nnodes && sp->ntasks % nnodes == 0)
        return sp->ntasks / nnodes;
    if (j->kind != DR_KIND_TRAIN || !j->req.gpus_per_node || sp->script)
        return 1;
    uint32_t g = j->req.nodes ? j->req.gpus_per_node
                              : (j->req.gpus_per_node + nnodes - 1) / (nnodes ? nnodes : 1);
    return g ? g : 1;
}

/* A fresh DROVER_STEP_KEY for a generation: what srun shows its agent. */
static void new_step_key(ctld_job_t *cj)
{
    uint8_t b[DR_MSG_STEP_KEY / 2];
    static const char hex[] = "0123456789abcdef";
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        cj->step_key[0] = '\0'; /* no key: no steps */
        return;
    }
    for (size_t i = 0; i < sizeof b; i++) {
        cj->step_key[2 * i] = hex[b[i] >> 4];
        cj->step_key[2 * i + 1] = hex[b[i] & 15];
    }
    cj->step_key[DR_MSG_STEP_KEY] = '\0';
}

/* A job the pass started: its processes on the nodes of its allocation -
 * tpn ranks on each node, or a batch script once, on the first. */
void ctld_launch_job(dr_ctld_t *c, ctld_job_t *cj)
{
    dr_job_t *j = &cj->j;
    cj->gen++;
    cj->warn_round = 0;
    cj->warn_limit = false;
    dr_alloc_free(&cj->run_alloc);
    /* kept for every job: a preempted one holds these slots until its ranks
     * have ended (stop.c) */
    if (dr_alloc_copy(&cj->run_alloc, &j->alloc) != DR_OK)
        memset(&cj->run_alloc, 0, sizeof cj->run_alloc); /* out of memory: stopped at once */
    free(cj->ranks);
    cj->ranks = NULL;
    cj->nranks = cj->nown = 0;
    ctld_steps_free(cj);
    cj->reap_sent = false;
    /* the nodes, in allocation order */
    free(cj->nodes);
    uint32_t nn = 0, *nodes = calloc(j->alloc.nnodes ? j->alloc.nnodes : 1, sizeof *nodes);
    for (uint32_t i = 0; nodes && i < j->alloc.nslots; i++) {
        uint32_t node = j->alloc.slots[i].node;
        bool seen = false;
        for (uint32_t k = 0; k < nn; k++)
            seen |= nodes[k] == node;
        if (!seen && nn < j->alloc.nnodes)
            nodes[nn++] = node;
    }
    cj->nodes = nodes;
    cj->nnodes = nodes ? nn : 0;
    cj->tpn = tasks_per_node(cj, nn);
    const dr_jobspec_t *sp = spec_of(cj);
    bool batch = is_batch(cj);
    cj->ntasks = batch && sp->ntasks ? sp->ntasks : nn * cj->tpn;
    uint32_t nown = batch ? (nn ? 1 : 0) : nn * cj->tpn;
    cj->ranks = nodes && nn ? calloc(nown, sizeof *cj->ranks) : NULL;
    for (uint32_t k = 0; cj->ranks && k < nn; k++)
        for (uint32_t l = 0; l < cj->tpn && cj->nranks < nown; l++)
            cj->ranks[cj->nranks++] = (ctld_rank_t){.node = nodes[k], .local = l};
    cj->nown = cj->nranks;
    new_step_key(cj);
    if (cj->ranks && cj->nranks &&
        (cj->ntasks > 1 || nn > 1 || j->kind == DR_KIND_TRAIN || j->kind == DR_KIND_SERVE))
        cj->master_port = ctld_port_take(c, cj->ranks[0].node, j->id); /* or DROVER_PORT */
    /* a new run: no kill sent to it, no lease of its lost (a run preempted
     * while one of its nodes was cut off went back to the queue through
     * stop.c with lease_lost still set, and this run's clean end was then
     * taken for a lost node's and requeued: chaos/short ran it twice) */
    cj->kill_sent = false;
    cj->lease_lost = false;
    cj->has_exit = false;
    cj->got_type = j->alloc.type;
    cj->got_gpus = 0;
    for (uint32_t i = 0; i < j->alloc.nslots; i++)
        cj->got_gpus += j->alloc.slots[i].gpu != DR_NO_GPU && j->alloc.slots[i].milli >= 1000;
    if (!cj->got_gpus && j->alloc.nslots && j->alloc.slots[0].gpu != DR_NO_GPU)
        cj->got_gpus = 1; /* a fractional share */
    if (!cj->ranks || !cj->nranks) {
        ctld_log("job %llu: out of memory launching it", (unsigned long long)j->id);
        return;
    }
    if (c->cl.nodes[cj->ranks[0].node].ngpus == 0)
        cj->got_type = -1;
    set_paths(c, cj);
    c->deps_recheck = true; /* after:ID holds once ID has started */
    snprintf(cj->reason, sizeof cj->reason, "launching");
    if (cj->parent && cj->parent->j.state == DR_JOB_PENDING) {
        cj->parent->j.state = DR_JOB_RUNNING;
        cj->parent->j.first_start = cj->parent->j.start = c->last_now;
        ctld_job_dirty(c, cj->parent);
    }
    if (cj->launch_wait) /* stop.c sends them once the jobs it displaces have stopped */
        snprintf(cj->reason, sizeof cj->reason, "waiting for a preempted job to stop");
    else if (ctld_restart_holds(c, cj))
        snprintf(cj->reason, sizeof cj->reason,
                 "waiting for the nodes of its last run to report (the controller restarted)");
    for (uint32_t r = 0; r < cj->nranks && !cj->launch_wait; r++)
        ctld_launch_rank(c, cj, r);
    ctld_job_dirty(c, cj);
    if (!cj->launch_wait) {
        CTLD_CRASH_POINT(c, "dispatch-before-commit");    /* the launch decided, not stored */
        ctld_crash_after_commit("dispatch-after-commit"); /* stored, no LAUNCH sent */
    }
}

static void kill_frame(dr_ctld_t *c, const ctld_job_t *cj, uint32_t node, uint32_t step, int sig,
                       const char *why)
{
    dr_msg_kill_t m = {.job = cj->j.id,
                       .gen = cj->gen,
                       .signal = sig,
                       .grace_ns = KILL_GRACE_NS,
                       .reason = (char *)why,
                       .step = step};
    char *json = NULL;
    size_t len;
    if (dr_msg_kill_encode(&m, &json, &len, NULL) == DR_OK)
        ctld_out_frame(c, (int)node, DR_MSG_KILL, json);
}

void ctld_kill_again(dr_ctld_t *c, ctld_job_t *cj, uint32_t node)
{
    if (cj->stopping && !cj->stop_at) { /* preempted, its lead over (stop.c) */
        kill_frame(c, cj, node, 0, SIGTERM, "preempted");
        return;
    }
    if (cj->kill_sent) {
        kill_frame(c, cj, node, 0, SIGTERM, cj->reason[0] ? cj->reason : "stopped");
        return;
    }
    for (uint32_t s = 0; s < cj->nsteps; s++) {
        bool here = false;
        for (uint32_t r = 0; r < cj->nranks && !here; r++)
            here = cj->ranks[r].step == s + 1 && cj->ranks[r].node == node && !cj->ranks[r].ended;
        if (here && (cj->steps[s].kill_sent || cj->reap_sent))
            kill_frame(c, cj, node, s + 1, SIGTERM, "stopped");
    }
}

void ctld_send_kill(dr_ctld_t *c, ctld_job_t *cj, uint32_t step, int sig, const char *why)
{
    /* one KILL per node stops every rank of the generation (or of the step) there */
    for (uint32_t r = 0; r < cj->nranks; r++) {
        bool sent = false, mine = step == 0 || cj->ranks[r].step == step;
        for (uint32_t q = 0; q < r && !sent; q++)
            sent = cj->ranks[q].node == cj->ranks[r].node && !cj->ranks[q].ended &&
                   (step == 0 || cj->ranks[q].step == step);
        if (cj->ranks[r].ended || sent || !mine)
            continue;
        kill_frame(c, cj, cj->ranks[r].node, step, sig, why);
    }
}

static void kill_ranks(dr_ctld_t *c, ctld_job_t *cj, const char *why)
{
    ctld_send_kill(c, cj, 0, SIGTERM, why);
    cj->kill_sent = true;
}

bool ctld_rank_stopped(const ctld_job_t *cj, uint32_t rank)
{
    const ctld_rank_t *r = &cj->ranks[rank];
    if (cj->kill_sent || (cj->reap_sent && r->step))
        return true;
    return r->step && r->step <= cj->nsteps && cj->steps[r->step - 1].kill_sent;
}

/* ---- facts ---- */

/* What a pending job waits for, in the user's words. */
void ctld_pending_reason(dr_ctld_t *c, ctld_job_t *cj)
{
    const dr_job_req_t *r = &cj->j.req;
    const dr_jobspec_t *sp = spec_of(cj);
    uint32_t g = r->nodes ? r->nodes * r->gpus_per_node : r->gpus_per_node;
    const char *types = sp->gpu_type && strcmp(sp->gpu_type, "any") != 0 ? sp->gpu_type : NULL;
    if (!g)
        snprintf(cj->reason, sizeof cj->reason, "waiting for %u node%s", r->nodes ? r->nodes : 1,
                 r->nodes > 1 ? "s" : "");
    else if (r->nodes > 1)
        snprintf(cj->reason, sizeof cj->reason, "waiting for %u nodes x %u GPUs%s%s%s", r->nodes,
                 r->gpus_per_node, types ? " (" : "", types ? types : "", types ? ")" : "");
    else
        snprintf(cj->reason, sizeof cj->reason, "waiting for %u GPU%s%s%s%s", g, g > 1 ? "s" : "",
                 types ? " (" : "", types ? types : "", types ? ")" : "");
    (void)c;
}

int ctld_submit(dr_ctld_t *c, ctld_job_t *cj, dr_err_t *err)
{
    dr_time_t now = ctld_now(c);
    if (cj->array && !cj->j.array_parent) {
        cj->j.state = DR_JOB_PENDING;
        if (dr_grow((void **)&c->arrays, &c->arrays_cap, c->narrays + 1, sizeof *c->arrays))
            return dr_err_set(err, DR_ENOMEM, "out of memory");
        c->arrays[c->narrays++] = cj;
        ctld_job_dirty(c, cj);
        return DR_OK;
    }
    ctld_shard_bind(c, cj);
    int rc = dr_sched_submit(c->sched, &cj->j, now, err);
    if (rc != DR_OK)
        return rc;
    cj->in_sched = true;
    ctld_pending_reason(c, cj);
    c->st.submits++;
    ctld_job_dirty(c, cj);
    ctld_want_pass(c);
    return DR_OK;
}

static void job_finished(dr_ctld_t *c, ctld_job_t *cj)
{
    c->deps_recheck = true; /* afterok/afterany/afternotok/singleton may hold now */
    ctld_evict_later(c, cj);
    if (cj->parent)
        ctld_array_task_ended(c, cj);
    ctld_job_dirty(c, cj);
    ctld_want_pass(c);
}

/* The run is over: its MASTER_PORT may go to another job. */
static void release_port(dr_ctld_t *c, ctld_job_t *cj)
{
    if (cj->master_port && cj->nranks)
        ctld_port_give(c, cj->ranks[0].node, cj->master_port);
    cj->master_port = 0;
}

/* Charge the run that just ended. */
static void accrue(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now)
{
    if (cj->j.start > 0 && now > cj->j.start)
        cj->cost_usd += dr_time_to_s(now - cj->j.start) / 3600.0 * cj->got_gpus *
                        ctld_price_hr(c, cj->got_type);
}

void ctld_run_over(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now)
{
    accrue(c, cj, now);
    release_port(c, cj);
}

int ctld_cancel(dr_ctld_t *c, ctld_job_t *cj, const char *why, dr_err_t *err)
{
    dr_time_t now = ctld_now(c);
    if (ctld_job_terminal(cj))
        return dr_err_set(err, DR_ESTATE, "job %llu is already %s", (unsigned long long)cj->j.id,
                          ctld_job_state_name(cj));
    if (cj->array) {
        ctld_array_t *a = cj->array;
        if (a->svc)
            a->svc->stopping = true; /* no new runs; the last one to end settles it */
        a->count[DR_JOB_CANCELLED] += a->nidx - a->next;
        a->next = a->nidx;
        /* cancel the live tasks; the last one to end settles the parent */
        uint32_t n = a->active;
        ctld_job_t **live = malloc((n ? n : 1) * sizeof *live);
        if (!live)
            return dr_err_set(err, DR_ENOMEM, "out of memory");
        memcpy(live, a->live, n * sizeof *live);
        for (uint32_t i = 0; i < n; i++)
            if (!ctld_job_terminal(live[i]))
                ctld_cancel(c, live[i], why, NULL);
        free(live);
        if (a->active == 0) {
            /* nothing was live: settle now */
            a->active = 0;
            cj->j.state = DR_JOB_CANCELLED;
            cj->j.end = now;
            cj->has_exit = true;
            cj->exit_code = 1;
            snprintf(cj->reason, sizeof cj->reason, "%s", why);
            for (size_t i = 0; i < c->narrays; i++)
                if (c->arrays[i] == cj) {
                    c->arrays[i] = c->arrays[--c->narrays];
                    break;
                }
            ctld_evict_later(c, cj);
        }
        ctld_job_dirty(c, cj);
        return DR_OK;
    }
    if (cj->j.state == DR_JOB_PENDING && !cj->in_sched) {
        /* waiting for its dependencies, or stopping (stop.c): the scheduler
         * does not hold it */
        ctld_stop_cancel(c, cj);
        cj->j.state = DR_JOB_CANCELLED;
        cj->j.end = now;
        cj->has_exit = true;
        cj->exit_code = 1;
        snprintf(cj->reason, sizeof cj->reason, "%s", why);
        job_finished(c, cj);
        return DR_OK;
    }
    if (cj->j.state == DR_JOB_PENDING) {
        int rc = dr_sched_cancel(c->sched, &cj->j, now, why, err);
        if (rc != DR_OK)
            return rc;
        snprintf(cj->reason, sizeof cj->reason, "%s", why);
        job_finished(c, cj);
        return DR_OK;
    }
    /* running: stop every rank; the job ends when they have */
    if (!cj->kill_sent) {
        cj->kill_final = DR_JOB_CANCELLED;
        snprintf(cj->reason, sizeof cj->reason, "%s", why);
        kill_ranks(c, cj, why);
        ctld_stop_cancel(c, cj); /* its LAUNCHes still held: it ends here */
        ctld_job_dirty(c, cj);
    }
    return DR_OK;
}

void ctld_rank_started(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank)
{
    if (rank >= cj->nranks || cj->ranks[rank].started)
        return;
    cj->ranks[rank].started = true;
    uint32_t n = 0;
    for (uint32_t r = 0; r < cj->nown; r++)
        n += cj->ranks[r].started;
    if (n == cj->nown && cj->j.state == DR_JOB_STARTING) {
        dr_err_t err = {0};
        if (dr_sched_job_running(c->sched, &cj->j, ctld_now(c), &err) != DR_OK)
            ctld_log("job %llu: %s", (unsigned long long)cj->j.id, err.msg);
        snprintf(cj->reason, sizeof cj->reason, "%s", "");
    }
    ctld_job_dirty(c, cj);
}

void ctld_rank_ended(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank, const dr_msg_job_state_t *m)
{
    if (rank >= cj->nranks || cj->ranks[rank].ended)
        return;
    ctld_rank_t *r = &cj->ranks[rank];
    r->ended = true;
    r->exit_code = m->exit_code;
    r->signal = m->signal;
    r->why = m->why;
    ctld_job_dirty(c, cj);
    if (r->step) {
        /* a step's task: its step (and srun) hear of it, the job goes on */
        ctld_step_task_ended(c, cj, rank);
        ctld_job_settle(c, cj);
        return;
    }
    if (m->why == DR_END_LEASE) {
        /* its agent was cut off past its lease and stopped it: the job has
         * lost a node; its other ranks stop, then it is requeued (or fails,
         * as --requeue says) in ctld_job_settle */
        const char *node = c->cl.nodes[r->node].name;
        ctld_log("job %llu: rank %u on %s was stopped by its agent (cut off from the controller "
                 "past its lease)",
                 (unsigned long long)cj->j.id, rank, node);
        if (!cj->lease_lost)
            ctld_note(c, cj->j.id, "lease", "rank %u on %s stopped by its agent: lease expired",
                      rank, node);
        cj->lease_lost = true;
        snprintf(cj->reason, sizeof cj->reason, "stopped on %s: its agent's lease expired", node);
        if (!cj->kill_sent)
            kill_ranks(c, cj, "another rank's node was cut off from the controller");
        ctld_job_settle(c, cj);
        return;
    }
    bool bad = m->why != DR_END_EXIT || m->exit_code != 0 || m->signal != 0;
    /* a flaky node fails the jobs it runs (NodeFailDrain=) */
    if (bad && m->why != DR_END_KILLED && m->why != DR_END_TIMEOUT && !cj->kill_sent)
        ctld_node_job_failed(c, r->node, cj->j.id);
    if (bad && !cj->has_exit) {
        cj->has_exit = true;
        cj->exit_code = m->exit_code;
        cj->signal = m->signal;
        const char *node = c->cl.nodes[r->node].name;
        if (m->why == DR_END_LAUNCH)
            snprintf(cj->reason, sizeof cj->reason, "launch failed on %s: %s", node,
                     m->detail ? m->detail : "");
        else if (m->why == DR_END_TIMEOUT)
            snprintf(cj->reason, sizeof cj->reason, "time limit reached on %s", node);
        else if (m->why == DR_END_EXIT && m->signal)
            snprintf(cj->reason, sizeof cj->reason, "killed by signal %d on %s", m->signal, node);
        else if (m->why == DR_END_EXIT)
            snprintf(cj->reason, sizeof cj->reason, "exit code %d on %s", m->exit_code, node);
    }
    /* one rank failing fails the gang: stop the others (and every step) */
    if (bad && !cj->kill_sent && m->why != DR_END_KILLED) {
        cj->kill_final = m->why == DR_END_TIMEOUT ? DR_JOB_TIMEOUT : DR_JOB_FAILED;
        kill_ranks(c, cj, "another rank of the job ended");
    }
    ctld_job_settle(c, cj);
}

void ctld_job_settle(dr_ctld_t *c, ctld_job_t *cj)
{
    if (ctld_job_terminal(cj) || cj->j.state == DR_JOB_PENDING)
        return;
    uint32_t ended = 0, own = 0;
    for (uint32_t i = 0; i < cj->nranks; i++) {
        ended += cj->ranks[i].ended;
        own += i < cj->nown && cj->ranks[i].ended;
    }
    if (own < cj->nown)
        return;
    if (ended < cj->nranks) {
        /* the batch script is over: so are the steps it left running */
        if (!cj->kill_sent && !cj->reap_sent) {
            ctld_send_kill(c, cj, 0, SIGTERM, "the job's batch script ended");
            cj->reap_sent = true;
            ctld_job_dirty(c, cj);
        }
        return;
    }
    dr_time_t now = ctld_now(c);
    dr_err_t err = {0};
    if (cj->lease_lost && cj->kill_final != DR_JOB_CANCELLED && ctld_job_requeues(c, cj)) {
        /* every process of this run has stopped: it runs again elsewhere */
        if (cj->j.state == DR_JOB_STARTING)
            dr_sched_job_running(c->sched, &cj->j, now, &err);
        accrue(c, cj, now);
        release_port(c, cj);
        char why[sizeof cj->reason];
        snprintf(why, sizeof why, "requeued: %.*s", (int)sizeof why - 11, cj->reason);
        if (dr_sched_job_requeue(c->sched, &cj->j, now, why, &err) != DR_OK)
            ctld_log("job %llu: %s", (unsigned long long)cj->j.id, err.msg);
        memcpy(cj->reason, why, sizeof why);
        cj->kill_sent = false;
        cj->lease_lost = false;
        if (cj->parent)
            ctld_service_run_requeued(c, cj);
        ctld_job_dirty(c, cj);
        ctld_want_pass(c);
        CTLD_CRASH_POINT(c, "requeue-before-commit");
        ctld_crash_after_commit("requeue-after-commit");
        return;
    }
    /* a lease-stopped run of a job that does not requeue fails */
    bool lost = cj->lease_lost && cj->kill_final != DR_JOB_CANCELLED;
    dr_job_state_t fin = DR_JOB_COMPLETED;
    if (cj->kill_sent && !lost)
        fin = (dr_job_state_t)cj->kill_final;
    else if (cj->has_exit || lost)
        fin = DR_JOB_FAILED;
    for (uint32_t i = 0; i < cj->nown && fin != DR_JOB_CANCELLED; i++)
        if (cj->ranks[i].why == DR_END_TIMEOUT)
            fin = DR_JOB_TIMEOUT;
    if (!cj->has_exit) {
        cj->has_exit = true;
        cj->exit_code = fin == DR_JOB_COMPLETED ? 0 : -1;
        cj->signal = 0;
    }
    if (fin == DR_JOB_COMPLETED)
        snprintf(cj->reason, sizeof cj->reason, "%s", "");
    if (cj->j.state == DR_JOB_STARTING && fin != DR_JOB_CANCELLED)
        dr_sched_job_running(c->sched, &cj->j, now, &err);
    accrue(c, cj, now);
    release_port(c, cj);
    if (dr_sched_job_ended(c->sched, &cj->j, fin, now, cj->reason, &err) != DR_OK)
        ctld_log("job %llu: %s", (unsigned long long)cj->j.id, err.msg);
    ctld_job_dirty(c, cj);
    job_finished(c, cj);
}

bool ctld_job_holds_node(const ctld_job_t *cj, uint32_t node)
{
    for (uint32_t i = 0; i < cj->nnodes; i++)
        if (cj->nodes[i] == node)
            return true;
    for (uint32_t r = 0; r < cj->nranks; r++)
        if (cj->ranks[r].node == node)
            return true;
    return false;
}

/* Jobs holding node (the running set is small next to the job table). */
static void each_job_on(dr_ctld_t *c, uint32_t node, void (*fn)(dr_ctld_t *, ctld_job_t *, void *),
                        void *ud)
{
    size_t n = 0, cap = 0;
    ctld_job_t **hit = NULL;
    for (size_t i = 0; i < c->tab_cap; i++) {
        ctld_job_t *cj = c->tab[i];
        if (!cj || cj->array || ctld_job_terminal(cj) || cj->j.state == DR_JOB_PENDING)
            continue;
        if (ctld_job_holds_node(cj, node) && dr_grow((void **)&hit, &cap, n + 1, sizeof *hit) == 0)
            hit[n++] = cj;
    }
    for (size_t i = 0; i < n; i++)
        fn(c, hit[i], ud);
    free(hit);
}

static void stop_other_ranks(dr_ctld_t *c, ctld_job_t *cj, void *ud)
{
    const char *why = ud;
    kill_ranks(c, cj, why);
    ctld_job_dirty(c, cj);
}

bool ctld_job_requeues(const dr_ctld_t *c, const ctld_job_t *cj)
{
    const dr_jobspec_t *sp = spec_of(cj);
    if (sp->requeue >= 0)
        return sp->requeue != 0;
    if (cj->j.kind == DR_KIND_TRAIN || cj->j.kind == DR_KIND_SERVE)
        return true; /* a training job resumes from its checkpoint; a replica must run */
    return c->cl.requeue_default >= 0; /* batch and array tasks: RequeueDefault= (yes) */
}

/* Was the job being cancelled when its node was lost?  It ends there
 * (cancelled), it is not requeued. */
static bool cancelling(const ctld_job_t *cj)
{
    return cj->kill_sent && cj->kill_final == DR_JOB_CANCELLED;
}

/* A job that does not requeue ends with its lost node: failed (or
 * cancelled, when a cancel was stopping it). */
static void fail_lost(dr_ctld_t *c, ctld_job_t *cj, uint32_t node)
{
    dr_time_t now = ctld_now(c);
    dr_err_t err = {0};
    bool cancel = cancelling(cj);
    if (cj->j.state == DR_JOB_STARTING)
        dr_sched_job_running(c->sched, &cj->j, now, &err);
    accrue(c, cj, now);
    release_port(c, cj);
    if (!cancel)
        snprintf(cj->reason, sizeof cj->reason, "node %s lost (not requeued: %s)",
                 c->cl.nodes[node].name,
                 spec_of(cj)->requeue == 0 ? "--no-requeue" : "RequeueDefault=NO");
    cj->has_exit = true;
    cj->exit_code = -1;
    cj->signal = 0;
    if (dr_sched_job_ended(c->sched, &cj->j, cancel ? DR_JOB_CANCELLED : DR_JOB_FAILED, now,
                           cj->reason, &err) != DR_OK)
        ctld_log("job %llu: %s", (unsigned long long)cj->j.id, err.msg);
    job_finished(c, cj);
}

/* cj was requeued because `lost` (a node index) was lost */
static void after_requeue(dr_ctld_t *c, ctld_job_t *cj, uint32_t lost)
{
    cj->lease_lost = false;
    if (cj->j.state == DR_JOB_PENDING) {
        accrue(c, cj, c->last_now);
        release_port(c, cj);
        cj->kill_sent = false;
        snprintf(cj->reason, sizeof cj->reason, "requeued: node %s lost", c->cl.nodes[lost].name);
        if (cj->parent)
            ctld_service_run_requeued(c, cj);
    }
    ctld_job_dirty(c, cj);
}

void ctld_node_lost(dr_ctld_t *c, uint32_t node, const char *why)
{
    ctld_node_t *n = &c->nodes[node];
    snprintf(n->reason, sizeof n->reason, "%s", why);
    if (c->cl.nodes[node].state == DR_NODE_DOWN)
        return;
    ctld_log("node %s down: %s", c->cl.nodes[node].name, why);
    char from[16];
    snprintf(from, sizeof from, "%s", ctld_node_state(c, node));
    /* every rank of an affected gang on the surviving nodes stops first */
    each_job_on(c, node, stop_other_ranks, (void *)why);
    /* remember which jobs were there: the scheduler requeues them; those
     * that do not requeue fail first */
    size_t cap = 0, cnt = 0, fcap = 0, fcnt = 0;
    ctld_job_t **was = NULL, **fail = NULL;
    for (size_t i = 0; i < c->tab_cap; i++) {
        ctld_job_t *cj = c->tab[i];
        if (!cj || cj->array || ctld_job_terminal(cj) || cj->j.state == DR_JOB_PENDING ||
            !ctld_job_holds_node(cj, node))
            continue;
        if (!ctld_job_requeues(c, cj) || cancelling(cj)) {
            if (dr_grow((void **)&fail, &fcap, fcnt + 1, sizeof *fail) == 0)
                fail[fcnt++] = cj;
        } else if (dr_grow((void **)&was, &cap, cnt + 1, sizeof *was) == 0) {
            was[cnt++] = cj;
        }
    }
    /* after the walk: an array task's end may add tasks to the table */
    for (size_t i = 0; i < fcnt; i++)
        fail_lost(c, fail[i], node);
    free(fail);
    dr_err_t err = {0};
    if (dr_sched_node_set_state(c->sched, node, DR_NODE_DOWN, ctld_now(c), &err) != DR_OK)
        ctld_log("node %s: %s", c->cl.nodes[node].name, err.msg);
    ctld_node_note(c, node, "down", from, "%s", why);
    for (size_t i = 0; i < cnt; i++)
        after_requeue(c, was[i], node);
    free(was);
    if (cnt) {
        CTLD_CRASH_POINT(c, "requeue-before-commit");    /* decided, not stored */
        ctld_crash_after_commit("requeue-after-commit"); /* stored, nothing sent */
    }
    ctld_want_pass(c);
}

void ctld_node_connected(dr_ctld_t *c, uint32_t node)
{
    ctld_node_t *n = &c->nodes[node];
    /* its state before, as the API showed it while no agent was there */
    const dr_node_t *cn = &c->cl.nodes[node];
    const char *from = cn->state == DR_NODE_DRAIN && !n->admin_drain
                           ? (n->registered ? "unreachable" : "unknown")
                           : dr_node_state_name((dr_node_state_t)cn->state);
    n->registered = true;
    n->lost_at = 0;
    n->gone_boot = 0;
    n->fencing = false;
    dr_node_state_t want = n->admin_drain ? DR_NODE_DRAIN : DR_NODE_UP;
    if (c->cl.nodes[node].state != want) {
        dr_err_t err = {0};
        if (dr_sched_node_set_state(c->sched, node, want, ctld_now(c), &err) != DR_OK)
            ctld_log("node %s: %s", c->cl.nodes[node].name, err.msg);
    }
    if (!n->admin_drain)
        n->reason[0] = '\0';
    ctld_node_note(c, node, "register", from, "agent %s registered (%u GPUs, %s)",
                   n->agent ? n->agent->addr : "?", n->disc_gpus, n->source);
    ctld_want_pass(c);
}

/* ---- the turn ---- */

static void run_pass(dr_ctld_t *c, dr_time_t now)
{
    dr_pass_result_t r = {0};
    dr_err_t err = {0};
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (dr_sched_pass(c->sched, now, &r, &err) != DR_OK)
        ctld_log("scheduling pass: %s", err.msg);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    c->st.pass_s_total += secs;
    c->st.passes++;
    ctld_metrics_pass(c, secs);
    c->last_pass = now;
    for (size_t i = 0; i < r.npreempted; i++) {
        ctld_job_t *cj = of(r.preempted[i]);
        ctld_stop_unstart(c, cj); /* moved to other GPUs: not before its old run stops */
        if (ctld_stop_gracefully(c, cj, now))
            continue; /* signalled; stopped after its lead (stop.c) */
        if (ctld_stop_now(c, cj, now))
            continue;       /* killed; requeued once its agents report every rank over (stop.c) */
        accrue(c, cj, now); /* out of memory only: as before */
        release_port(c, cj);
        kill_ranks(c, cj, "preempted");
        snprintf(cj->reason, sizeof cj->reason, "preempted");
        ctld_job_dirty(c, cj);
    }
    for (size_t i = 0; i < r.nstarted; i++) {
        if (of(r.started[i])->stopping)
            continue; /* preempted and moved by this pass: requeued once stopped (stop.c) */
        ctld_stop_blocks(c, of(r.started[i])); /* on a stopping job's GPUs: wait */
        ctld_launch_job(c, of(r.started[i]));
        ctld_metrics_started(c, of(r.started[i]), now);
    }
    if (r.wake_at != DR_TIME_NEVER) {
        /* a wake-up already due comes after the minimum interval (no busy loop) */
        dr_time_t d = r.wake_at > now ? r.wake_at - now : c->o.min_pass_interval;
        struct timeval tv = {(time_t)(d / DR_NSEC_PER_SEC),
                             (suseconds_t)(d % DR_NSEC_PER_SEC / 1000)};
        evtimer_add(c->wake_timer, &tv); /* the policy's own timer (aging) */
    }
    dr_pass_result_free(&r);
}

static int write_turn(dr_ctld_t *c, dr_err_t *err)
{
    int rc = ctld_store_begin(c, err);
    if (rc != DR_OK)
        return rc;
    for (size_t i = 0; i < c->ndirty && rc == DR_OK; i++)
        if (c->dirty[i]->dirty)
            rc = ctld_store_put_job(c, c->dirty[i], err);
    const dr_eventlog_t *log = dr_sched_log(c->sched);
    for (size_t i = c->ev_flushed; i < log->n && rc == DR_OK; i++)
        rc = ctld_store_put_event(c, &log->ev[i], dr_eventlog_detail(log, &log->ev[i]), err);
    for (size_t i = 0; i < c->nnotes && rc == DR_OK; i++)
        rc = ctld_store_put_note(c, &c->notes[i], err);
    for (size_t i = 0; c->drains_dirty && i < c->cl.nnodes && rc == DR_OK; i++)
        if (c->nodes[i].drain_dirty)
            rc = ctld_store_put_drain(c, c->cl.nodes[i].name, c->nodes[i].admin_drain,
                                      c->nodes[i].reason, c->nodes[i].auto_drain, err);
    if (rc == DR_OK)
        rc = ctld_store_put_meta(c, "next_id", c->next_id, err);
    if (rc == DR_OK)
        rc = ctld_share_save(c, ctld_now(c), err);
    /* the ids this commit acknowledges are reserved in droverd.seq first */
    if (rc == DR_OK)
        rc = ctld_seq_reserve(c, err);
    if (rc == DR_OK)
        rc = ctld_store_commit(c, err);
    if (rc != DR_OK)
        ctld_store_rollback(c);
    return rc;
}

/* A submit whose commit failed is taken back: it was never acknowledged. */
static void undo_submits(dr_ctld_t *c)
{
    for (ctld_out_t *o = c->out_head; o; o = o->next) {
        if (o->kind != OUT_HTTP || !o->job)
            continue;
        ctld_job_t *cj = ctld_job_find(c, o->job);
        if (!cj)
            continue;
        /* listed for eviction first: a job never acknowledged is not
         * counted as ended (metrics.c) */
        ctld_evict_later(c, cj);
        /* a pass of the same turn may have started it: its launch is dropped
         * (out_flush) and its resources go back */
        if (cj->in_sched && !ctld_job_terminal(cj))
            dr_sched_cancel(c->sched, &cj->j, c->last_now, "not committed", NULL);
        cj->dirty = false;
        cj->j.state = DR_JOB_CANCELLED;
        snprintf(cj->reason, sizeof cj->reason, "not committed");
    }
}

void ctld_evict_later(dr_ctld_t *c, ctld_job_t *cj)
{
    cj->evict_after = c->st.passes;
    if (!cj->evict_listed && ctld_job_terminal(cj))
        ctld_metrics_ended(c, cj); /* once: it is listed from now on */
    if (cj->evict_listed ||
        dr_grow((void **)&c->evictq, &c->evictq_cap, c->nevictq + 1, sizeof *c->evictq) != 0)
        return; /* out of memory: it stays in memory, nothing is lost */
    c->evictq[c->nevictq++] = cj;
    cj->evict_listed = true;
}

/* Free the terminal jobs the store has and a pass has seen (sched.h: the
 * core keeps no pointer to a job past the pass that lists it as ended).
 * Only the queued ones are looked at: a turn costs what ended, not what
 * is in memory. */
static void evict(dr_ctld_t *c)
{
    /* tasks before parents: a task points at its parent */
    for (int round = 0; round < 2; round++) {
        size_t keep = 0;
        for (size_t i = 0; i < c->nevictq; i++) {
            ctld_job_t *cj = c->evictq[i];
            bool due = !cj->dirty && ctld_job_terminal(cj) && c->st.passes > cj->evict_after &&
                       (round == 0) == (cj->array == NULL) && !cj->stopping && !cj->launch_wait;
            if (!due) {
                c->evictq[keep++] = cj;
                continue;
            }
            ctld_job_remove(c, cj);
            ctld_job_free(cj);
        }
        c->nevictq = keep;
    }
}

/* Must this turn commit now?  A client's reply and a message to an agent
 * (a launch, a kill) wait for the commit (durability before acknowledgement),
 * so they cannot wait longer.  What agents reported alone (a rank started or
 * ended: only ACKs go back) may: the agent keeps an ended rank and re-reports
 * it until the ACK, and a start is reconciled from the agent's report after
 * a restart, so nothing acknowledged rests on it.  Such a turn defers its
 * commit to the next pass (if one is waiting for --min-pass-interval) or to
 * the commit timer, one interval away: on a stream of short jobs the end
 * reports and the launches they free the GPUs for then share one commit
 * instead of one each (fdatasync dominates a turn). */
static bool commit_urgent(const dr_ctld_t *c)
{
    if (c->commit_due)
        return true;
    for (const ctld_out_t *o = c->out_head; o; o = o->next)
        if (o->kind == OUT_HTTP || o->type != DR_MSG_ACK)
            return true;
    return false;
}

static void on_commit_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    dr_ctld_t *c = arg;
    c->commit_due = true;
    ctld_turn_schedule(c);
}

static void turn(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    dr_ctld_t *c = arg;
    c->turn_scheduled = false;
    c->st.turns++;
    dr_time_t now = ctld_now(c);
    ctld_deps_turn(c);
    ctld_stops_turn(c, now);
    for (size_t i = 0; i < c->narrays; i++)
        ctld_array_feed(c, c->arrays[i], now);
    now = ctld_now(c); /* after the feed's submits: the log is time-ordered */
    if (c->pass_wanted) {
        if (now >= c->last_pass + c->o.min_pass_interval) {
            c->pass_wanted = false;
            run_pass(c, now);
        } else if (!evtimer_pending(c->pass_timer, NULL)) {
            dr_time_t d = c->last_pass + c->o.min_pass_interval - now;
            struct timeval tv = {(time_t)(d / DR_NSEC_PER_SEC),
                                 (suseconds_t)(d % DR_NSEC_PER_SEC / 1000)};
            evtimer_add(c->pass_timer, &tv);
        }
    }
    const dr_eventlog_t *log = dr_sched_log(c->sched);
    if (!c->ndirty && log->n == c->ev_flushed && !c->out_head && !c->nnotes && !c->drains_dirty)
        return;
    if (!commit_urgent(c)) {
        bool pass_soon = c->pass_wanted && evtimer_pending(c->pass_timer, NULL);
        if (!pass_soon && !evtimer_pending(c->commit_timer, NULL)) {
            dr_time_t d = c->o.min_pass_interval;
            struct timeval tv = {(time_t)(d / DR_NSEC_PER_SEC),
                                 (suseconds_t)(d % DR_NSEC_PER_SEC / 1000)};
            evtimer_add(c->commit_timer, &tv);
        }
        if (pass_soon || evtimer_pending(c->commit_timer, NULL))
            return;
    }
    c->commit_due = false;
    evtimer_del(c->commit_timer);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    dr_err_t err = {0};
    bool changes = c->ndirty || log->n != c->ev_flushed || c->nnotes || c->drains_dirty;
    int rc = changes ? write_turn(c, &err) : DR_OK;
    clock_gettime(CLOCK_MONOTONIC, &b);
    double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    c->st.commit_s_total += secs;
    if (changes)
        ctld_metrics_commit(c, secs, rc == DR_OK);
    if (rc != DR_OK) {
        c->st.commit_fail++;
        if (!c->store_fail[0]) {
            c->store_fail_since = ctld_now(c);
            ctld_log("commit failed (%s); submits are refused with 507 until the store can be "
                     "written, the rest is retried every second",
                     err.msg);
        }
        snprintf(c->store_fail, sizeof c->store_fail, "%.*s", (int)sizeof c->store_fail - 1,
                 err.msg);
        undo_submits(c);
        out_flush(c, false);
        /* retry the other changes soon */
        struct timeval tv = {1, 0};
        evtimer_add(c->pass_timer, &tv);
        return;
    }
    c->st.commits++;
    if (c->store_fail[0]) {
        ctld_log("the store can be written again (after %.1f s): submits are taken again",
                 dr_time_to_s(ctld_now(c) - c->store_fail_since));
        c->store_fail[0] = '\0';
    }
    for (size_t i = 0; i < c->ndirty; i++) {
        c->dirty[i]->dirty = false;
        c->dirty[i]->dirty_listed = false;
    }
    c->ndirty = 0;
    for (size_t i = 0; c->drains_dirty && i < c->cl.nnodes; i++)
        c->nodes[i].drain_dirty = false;
    c->drains_dirty = false;
    notes_clear(c);
    /* the written events leave memory (the store has them) */
    dr_eventlog_t *ml = dr_sched_log_mut(c->sched);
    ctld_metrics_committed(c, ml);
    dr_eventlog_free(ml);
    dr_eventlog_init(ml);
    c->ev_flushed = 0;
    ctld_crash_committed(c);  /* a crash point after the commit, before anything is sent */
    ctld_events_committed(c); /* the rows just written, to the open streams */
    out_flush(c, true);
    evict(c);
}

void ctld_turn_schedule(dr_ctld_t *c)
{
    if (c->turn_scheduled || !c->turn_ev)
        return;
    c->turn_scheduled = true;
    event_active(c->turn_ev, EV_TIMEOUT, 0);
}

void ctld_want_pass(dr_ctld_t *c)
{
    c->pass_wanted = true;
    ctld_turn_schedule(c);
}

static void on_pass_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    ctld_want_pass(arg);
}

/* Once a second: agents silent past the timeout lose their connection, and
 * their nodes once the lease is over (fence.c). */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    dr_ctld_t *c = arg;
    dr_time_t now = ctld_now(c);
    ctld_fence_tick(c);
    ctld_metrics_tick(c);
    ctld_stats_tick(c);
    if (ctld_service_timers_due(c, now) || ctld_stops_due(c, now))
        ctld_turn_schedule(c); /* a replica's back-off or drain, or a signal's lead, is over */
    ctld_lb_tick(c);
}

/* ---- start-up ---- */

/* A job reloaded from the store goes back where it was. */
static int reload_job(dr_ctld_t *c, ctld_job_t *cj, dr_err_t *err)
{
    if (cj->j.array_parent) {
        cj->parent = ctld_job_find(c, cj->j.array_parent);
        if (!cj->parent || !cj->parent->array)
            return dr_err_set(err, DR_EIO, "store: task %llu: its array %llu is missing",
                              (unsigned long long)cj->j.id, (unsigned long long)cj->j.array_parent);
    }
    if (cj->array) {
        int rc = ctld_job_insert(c, cj);
        if (rc == DR_OK && cj->spec.ndeps && cj->j.state == DR_JOB_PENDING && !cj->array->next) {
            rc = ctld_deps_hold(c, cj); /* still waiting for its dependencies */
            if (cj->hold)
                ctld_hold_reason(cj);
            return rc;
        }
        if (rc == DR_OK && !ctld_job_terminal(cj))
            rc = dr_grow((void **)&c->arrays, &c->arrays_cap, c->narrays + 1, sizeof *c->arrays);
        if (rc == DR_OK)
            c->arrays[c->narrays++] = cj;
        return rc;
    }
    dr_job_t saved = cj->j;
    int rc = dr_jobspec_to_job(spec_of(cj), &c->cl, saved.submit, &cj->j, err);
    if (rc != DR_OK)
        return dr_err_prefix(err, "store: job %llu: ", (unsigned long long)saved.id);
    cj->j.id = saved.id;
    cj->j.submit = saved.submit;
    cj->j.account = ctld_account_id(c, spec_of(cj));
    cj->j.state = saved.state;
    cj->j.first_start = saved.first_start;
    cj->j.start = saved.start;
    cj->j.end = saved.end;
    cj->j.nstarts = saved.nstarts;
    cj->j.attained_gpu_s = saved.attained_gpu_s;
    cj->j.array_parent = saved.array_parent;
    cj->j.array_index = saved.array_index;
    ctld_shard_bind(c, cj);
    if (cj->parent && cj->parent->array->svc) {
        cj->j.kind = DR_KIND_SERVE;
    } else if (cj->parent) {
        cj->j.kind = DR_KIND_ARRAY;
        cj->j.array_throttle = cj->parent->array->throttle;
    }
    dr_alloc_t alloc = saved.alloc;
    memset(&cj->j.alloc, 0, sizeof cj->j.alloc);
    set_paths(c, cj);
    rc = ctld_job_insert(c, cj);
    if (rc != DR_OK)
        return rc;
    if (cj->parent) {
        ctld_array_t *a = cj->parent->array;
        if (dr_grow((void **)&a->live, &a->live_cap, a->active + 1, sizeof *a->live) != 0)
            return DR_ENOMEM;
        a->live[a->active++] = cj;
        if (a->svc)
            ctld_service_run_reloaded(c, cj);
    }
    switch (cj->j.state) {
    case DR_JOB_STARTING:
    case DR_JOB_RUNNING:
    case DR_JOB_COMPLETING:
        if (cj->j.state == DR_JOB_COMPLETING)
            cj->j.state = DR_JOB_RUNNING;
        cj->got_type = alloc.type;
        if (dr_alloc_copy(&cj->run_alloc, &alloc) != DR_OK)
            memset(&cj->run_alloc, 0, sizeof cj->run_alloc); /* stopped at once */
        if (cj->master_port && cj->nranks)
            ctld_port_mark(c, cj->ranks[0].node, cj->master_port);
        rc = dr_sched_adopt(c->sched, &cj->j, &alloc, ctld_now(c), err);
        dr_alloc_free(&alloc);
        if (rc != DR_OK)
            return dr_err_prefix(err, "store: job %llu: ", (unsigned long long)cj->j.id);
        cj->in_sched = true;
        break;
    default:
        dr_alloc_free(&alloc);
        cj->j.state = DR_JOB_PENDING;
        if (cj->stopping && ctld_stop_reloaded(c, cj))
            return DR_OK; /* preempted, its ranks not yet over: they stop first */
        if (spec_of(cj)->ndeps && !cj->parent) {
            rc = ctld_deps_hold(c, cj); /* looked at again in the first turn */
            if (cj->hold)
                ctld_hold_reason(cj);
            return rc;
        }
        if (cj->nnodes && cj->j.nstarts && !cj->parent) {
            /* it ran before: where, its next launch waits for (restart.c) */
            cj->prev_nodes = malloc(cj->nnodes * sizeof *cj->prev_nodes);
            if (!cj->prev_nodes)
                return dr_err_set(err, DR_ENOMEM, "out of memory");
            memcpy(cj->prev_nodes, cj->nodes, cj->nnodes * sizeof *cj->prev_nodes);
            cj->nprev_nodes = cj->nnodes;
        }
        if (cj->hold)
            return DR_OK; /* held (holds.c): out of the queue until released */
        rc = dr_sched_restore(c->sched, &cj->j, ctld_now(c), err);
        if (rc != DR_OK)
            return rc;
        cj->in_sched = true;
        if (ctld_job_terminal(cj)) { /* refused: it can no longer fit this cluster */
            ctld_job_dirty(c, cj);
            job_finished(c, cj);
        }
        break;
    }
    return DR_OK;
}

/* A node revoked before the restart stays revoked. */
static void reload_revoked(dr_ctld_t *c, const char *name)
{
    int i = dr_cluster_find_node(&c->cl, name);
    if (i >= 0)
        c->nodes[i].revoked = true;
}

/* A node re-keyed before the restart keeps its key generation. */
static void reload_key_gen(dr_ctld_t *c, const char *name, uint32_t gen)
{
    int i = dr_cluster_find_node(&c->cl, name);
    if (i >= 0)
        c->nodes[i].key_gen = gen;
}

/* A drain stored before the restart holds until resumed. */
static void reload_drain(dr_ctld_t *c, const char *name, const char *reason, bool is_auto)
{
    int i = dr_cluster_find_node(&c->cl, name);
    if (i < 0) {
        ctld_log("store: drained node %s is not in the configuration any more", name);
        return;
    }
    c->nodes[i].admin_drain = true;
    c->nodes[i].auto_drain = is_auto;
    snprintf(c->nodes[i].reason, sizeof c->nodes[i].reason, "%s", reason);
}

static int load_key(dr_ctld_t *c, dr_err_t *err)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = dr_read_file(c->o.key_file, &buf, &len, err);
    if (rc != DR_OK)
        return dr_err_prefix(err, "--key: ");
    rc = dr_proto_key_parse(buf, len, c->key, err);
    free(buf);
    if (rc != DR_OK)
        dr_err_prefix(err, "%s: ", c->o.key_file);
    return rc;
}

int dr_ctld_init(dr_ctld_t *c, const ctld_opts_t *o, dr_err_t *err)
{
    memset(c, 0, sizeof *c);
    c->o = *o;
    c->out_tail = &c->out_head;
    dr_cluster_init(&c->cl);
    int rc = ctld_crash_init(err);
    if (rc != DR_OK)
        return rc;
    rc = dr_catalog_builtin(&c->cat, err);
    dr_strvec_t notes = {0}; /* what a slurm.conf asks that drover does not do */
    if (rc == DR_OK)
        rc = dr_config_load_notes(&c->cl, &c->cat, o->config, &notes, err);
    for (size_t i = 0; i < notes.n; i++)
        ctld_log("config: %s", notes.v[i]);
    dr_strvec_free(&notes);
    if (rc == DR_OK)
        rc = load_key(c, err);
    if (rc != DR_OK)
        return rc;
    /* --policy, else the config's SchedulerPolicy=, else drover */
    snprintf(c->policy, sizeof c->policy, "%s",
             o->policy         ? o->policy
             : c->cl.policy[0] ? c->cl.policy
                               : "drover");
    dr_sched_opts_t so = {.policy = c->policy, .placement = DR_PLACE_BEST_FIT, .seed = 1};
    rc = dr_sched_create(&c->sched, &c->cl, &so, err);
    if (rc != DR_OK)
        return dr_err_prefix(err, "policy %s: ", c->policy);
    if ((rc = ctld_accounts_bind(c, err)) != DR_OK)
        return rc;
    c->nodes = calloc(c->cl.nnodes ? c->cl.nnodes : 1, sizeof *c->nodes);
    if (!c->nodes)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    if ((rc = ctld_seq_read(c, err)) != DR_OK || (rc = ctld_store_open(c, err)) != DR_OK)
        return rc;
    /* the store's counters, unless droverd.seq has seen more: then the
     * store lost its last commits (a WAL lost or damaged, a backup
     * restored) and the ids and epoch they used are not given again */
    uint64_t v = 0, st_epoch, st_next;
    st_epoch = ctld_store_get_meta(c, "epoch", &v) == DR_OK ? v : 0;
    st_next = ctld_store_get_meta(c, "next_id", &v) == DR_OK ? v : 1;
    c->epoch = (st_epoch > c->seq_epoch ? st_epoch : c->seq_epoch) + 1;
    c->next_id = st_next > c->seq_ids_below ? st_next : c->seq_ids_below;
    if (c->seq_found && st_epoch == 0)
        ctld_log("store: a new store (--init): ids go on from %llu, the epoch from %llu, as "
                 "droverd.seq says",
                 (unsigned long long)c->next_id, (unsigned long long)c->epoch);
    else if (c->seq_found &&
             (st_epoch < c->seq_epoch || st_next + CTLD_SEQ_BLOCK < c->seq_ids_below))
        ctld_log("store: behind droverd.seq (epoch %llu and next id %llu stored, droverd.seq "
                 "has epoch %llu and ids below %llu): its last commits were lost (a WAL removed "
                 "or damaged, or a backup restored); ids go on from %llu, none is reused",
                 (unsigned long long)st_epoch, (unsigned long long)st_next,
                 (unsigned long long)c->seq_epoch, (unsigned long long)c->seq_ids_below,
                 (unsigned long long)c->next_id);
    /* the new epoch and a block of ids are on disk before either leaves */
    if (ctld_seq_write(c, c->epoch, c->next_id + CTLD_SEQ_BLOCK, err) != DR_OK)
        return dr_err_prefix(err, "droverd.seq: ");
    if ((rc = ctld_store_begin(c, err)) != DR_OK ||
        (rc = ctld_store_put_meta(c, "epoch", c->epoch, err)) != DR_OK ||
        (rc = ctld_store_commit(c, err)) != DR_OK)
        return rc;
    /* what the last run left in the WAL goes into the database file now:
     * a WAL lost later costs only what comes after this start */
    ctld_store_checkpoint(c);
    ctld_backup_sweep(c);
    /* fair-share usage first: restored and adopted jobs queue by it */
    if ((rc = ctld_share_restore(c, err)) != DR_OK)
        return rc;
    rc = ctld_store_load(c, reload_job, err);
    if (rc != DR_OK)
        return rc;
    dr_time_t now = ctld_now(c); /* after the reload's records: the log is time-ordered */
    /* until its agent registers, a node runs what it runs and starts nothing;
     * its jobs are requeued only once a lease its agent may have had from the
     * last controller is surely over */
    int64_t boot = ctld_boot_ns();
    c->start_boot = boot;
    for (size_t i = 0; i < c->cl.nnodes; i++) {
        c->nodes[i].idx = (uint32_t)i;
        c->nodes[i].lost_at = now;
        c->nodes[i].gone_boot = boot;
        snprintf(c->nodes[i].reason, sizeof c->nodes[i].reason, "agent not connected");
        if (c->cl.nodes[i].state == DR_NODE_UP &&
            (rc = dr_sched_node_set_state(c->sched, (uint32_t)i, DR_NODE_DRAIN, now, err)) != DR_OK)
            return rc;
    }
    if ((rc = ctld_store_load_drains(c, reload_drain, err)) != DR_OK)
        return rc;
    if ((rc = ctld_store_load_revoked(c, reload_revoked, err)) != DR_OK)
        return rc;
    if ((rc = ctld_store_load_key_gens(c, reload_key_gen, err)) != DR_OK)
        return rc;
    ctld_stop_reload_waits(c); /* launches on GPUs a stopping job still holds wait again */
    c->base = event_base_new();
    if (!c->base)
        return dr_err_set(err, DR_ENOMEM, "event_base_new failed");
    c->turn_ev = event_new(c->base, -1, 0, turn, c);
    c->pass_timer = evtimer_new(c->base, on_pass_timer, c);
    c->wake_timer = evtimer_new(c->base, on_pass_timer, c);
    c->commit_timer = evtimer_new(c->base, on_commit_timer, c);
    c->tick_ev = event_new(c->base, -1, EV_PERSIST, on_tick, c);
    struct timeval sec = {1, 0};
    event_add(c->tick_ev, &sec);
    if ((rc = ctld_metrics_init(c, err)) != DR_OK || (rc = ctld_stats_init(c, err)) != DR_OK)
        return rc;
    rc = ctld_http_start(c, err);
    if (rc == DR_OK)
        rc = ctld_events_start(c, err);
    if (rc == DR_OK)
        rc = ctld_agents_start(c, err);
    if (rc == DR_OK)
        rc = ctld_lb_start(c, err);
    if (rc == DR_OK)
        ctld_want_pass(c);
    ctld_log("epoch %llu, policy %s, %zu nodes, %zu jobs reloaded", (unsigned long long)c->epoch,
             c->policy, c->cl.nnodes, c->tab_n);
    return rc;
}

void dr_ctld_free(dr_ctld_t *c)
{
    if (c->commit_timer && c->db) {
        c->commit_due = true; /* what agents reported last is stored before we go */
        turn(-1, 0, c);
    }
    c->stopping = true; /* the agents' connections close: their nodes are not lost */
    while (c->agents)
        ctld_agent_close(c->agents, "controller stopping");
    ctld_output_free(c); /* before the connections its requests are on */
    out_flush(c, false);
    ctld_lb_free(c);
    ctld_backup_free(c); /* its request is answered while evhttp lives */
    ctld_events_free(c); /* before the connections they are on */
    ctld_http_free(c);
    ctld_metrics_free(c); /* after evhttp: a request's completion counts into it */
    ctld_stats_free(c);
    if (c->agent_lst)
        evconnlistener_free(c->agent_lst);
    if (c->turn_ev)
        event_free(c->turn_ev);
    if (c->pass_timer)
        event_free(c->pass_timer);
    if (c->wake_timer)
        event_free(c->wake_timer);
    if (c->commit_timer)
        event_free(c->commit_timer);
    if (c->tick_ev)
        event_free(c->tick_ev);
    if (c->sig_int)
        event_free(c->sig_int);
    if (c->sig_term)
        event_free(c->sig_term);
    if (c->sched)
        dr_sched_destroy(c->sched);
    for (size_t i = 0; i < c->tab_cap; i++)
        ctld_job_free(c->tab[i]);
    free(c->tab);
    free(c->dirty);
    free(c->stops);
    free(c->waits);
    free(c->held);
    free(c->arrays);
    free(c->evictq);
    notes_clear(c);
    free(c->notes);
    free(c->nodes);
    free(c->share_saved);
    ctld_rate_free(c);
    ctld_store_close(c);
    /* a clean stop: droverd.seq says exactly what was used, so that the
     * next start goes on without a jump (after a crash it jumps up to a
     * block); only once this run wrote it itself */
    if (c->epoch && c->seq_found && c->seq_epoch == c->epoch) {
        dr_err_t serr = {0};
        if (ctld_seq_write(c, c->epoch, c->next_id, &serr) != DR_OK)
            ctld_log("droverd.seq: %s (the next start may skip up to %d ids)", serr.msg,
                     CTLD_SEQ_BLOCK);
    }
    dr_cluster_free(&c->cl);
    dr_catalog_free(&c->cat);
    if (c->base)
        event_base_free(c->base);
}
