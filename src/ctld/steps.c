/* steps.c - srun inside a job: the controller's side of job steps.
 *
 * A batch script runs once, on the job's first node (Slurm's batch step);
 * `srun CMD` in it asks its node's agent for a step, and the agent
 * forwards the request here (STEP_REQ, with the uid it read from the
 * socket's peer credentials).  The request is checked against the job -
 * running, this generation, the generation's step key, its owner, a node
 * of its allocation - and laid out on the allocation's nodes; then the
 * step's tasks become ranks of the job's generation (after its own
 * processes) and are launched like ranks, through the outbox, so they go
 * out only after the turn that records them has committed.  The agents
 * supervise them and report their ends as ranks; when every task of a
 * step has ended the agent that asked hears the step's exit status
 * (STEP_STATE), and srun exits with it.  One task failing stops the
 * others when the step asked for it (srun's --kill-on-bad-exit, drover's
 * default); the job goes on, and the script decides what a failed step
 * means, as under Slurm. */
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld/ctld.h"
#include "ctld/kill.h"
#include "ctld/launch.h"
#include "ctld/launch_env.h"
#include "ctld/notes.h"
#include "ctld/outbox.h"
#include "ctld/settle.h"
#include "ctld/shards.h"
#include "ctld/steps.h"
#include "drover/hostlist.h"

#define STEP_MAX_TASKS 4096       /* tasks of one step */
#define STEP_MAX_STEPS 100000     /* steps of one generation */
#define STEP_MAX_RANKS (1u << 20) /* ranks of one generation, steps' tasks included */

static void state_out(dr_ctld_t *c, int node, uint64_t job, uint32_t gen, uint64_t req,
                      uint32_t state, const ctld_step_t *st, const char *detail)
{
    dr_msg_step_state_t m = {.job = job,
                             .gen = gen,
                             .req = req,
                             .state = state,
                             .step = st ? st->id : 0,
                             .ntasks = st ? st->n : 0,
                             .nnodes = st ? st->nnodes : 0,
                             .status = st ? st->status : 0,
                             .detail = (char *)(detail ? detail : "")};
    char *json = NULL;
    size_t len;
    dr_err_t err = {0};
    if (dr_msg_step_state_encode(&m, &json, &len, &err) != DR_OK)
        ctld_log("job %llu: step state: %s", (unsigned long long)job, err.msg);
    else
        ctld_out_frame(c, node, DR_MSG_STEP_STATE, json);
}

static void refuse(dr_ctld_t *c, int node, const dr_msg_step_req_t *m, const char *fmt, ...)
    DR_PRINTF(4, 5);
static void refuse(dr_ctld_t *c, int node, const dr_msg_step_req_t *m, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    ctld_log("job %llu: step refused (from %s): %s", (unsigned long long)m->job,
             c->cl.nodes[node].name, why);
    state_out(c, node, m->job, m->gen, m->req, DR_STEP_REFUSED, NULL, why);
}

/* Constant time: the key is a secret. */
static bool key_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char d = la != lb || la != DR_MSG_STEP_KEY;
    for (size_t i = 0; i < DR_MSG_STEP_KEY && i < la && i < lb; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/* Tasks per node over the first *nnodes of the allocation (docs/slurm.md,
 * "srun"): per[i] for node i; why says what does not fit. */
static int layout(const ctld_job_t *cj, const dr_msg_step_req_t *m, uint32_t *per, uint32_t *nnodes,
                  uint32_t *ntasks, char *why, size_t wl)
{
    uint32_t avail = cj->nnodes, n = m->ntasks, nn = m->nodes, k = m->ntasks_per_node;
    if (nn > avail) {
        snprintf(why, wl, "-N %u: the job has %u node%s", nn, avail, avail == 1 ? "" : "s");
        return -1;
    }
    if (k) {
        if (!nn)
            nn = n ? (n + k - 1) / k : avail;
        if (nn > avail) {
            snprintf(why, wl, "--ntasks-per-node=%u: %u tasks need %u nodes, the job has %u", k, n,
                     nn, avail);
            return -1;
        }
        if (!n)
            n = nn * k;
        if (n > (uint64_t)nn * k || n <= (uint64_t)(nn - 1) * k) {
            snprintf(why, wl, "-n %u does not fill %u node%s of --ntasks-per-node=%u", n, nn,
                     nn == 1 ? "" : "s", k);
            return -1;
        }
        for (uint32_t i = 0; i < nn; i++)
            per[i] = n - i * k < k ? n - i * k : k;
    } else {
        if (!n && nn)
            n = nn * (cj->tpn ? cj->tpn : 1); /* -N alone: the job's tasks per node */
        if (!n)
            n = cj->ntasks ? cj->ntasks : avail;
        if (!nn)
            nn = n < avail ? n : avail;
        if (n < nn) {
            snprintf(why, wl, "-n %u is fewer than -N %u", n, nn);
            return -1;
        }
        for (uint32_t i = 0; i < nn; i++)
            per[i] = n / nn + (i < n % nn);
    }
    if (n > STEP_MAX_TASKS) {
        snprintf(why, wl, "-n %u: at most %u tasks in a step", n, STEP_MAX_TASKS);
        return -1;
    }
    *nnodes = nn;
    *ntasks = n;
    return 0;
}

/* GPUs per task: srun's --gpus-per-task, else the job's; 0 = each task
 * sees all of the job's GPUs on its node (Slurm's default). */
static uint32_t gpus_per_task(const ctld_job_t *cj, const dr_msg_step_req_t *l)
{
    return l && l->gpus_per_task ? l->gpus_per_task : ctld_job_spec(cj)->gpus_per_task;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s && s[1] ? s + 1 : p;
}

void ctld_step_request(dr_ctld_t *c, int node, dr_msg_step_req_t *m)
{
    ctld_job_t *cj = ctld_job_find(c, m->job);
    if (!cj || cj->array || (cj->j.state != DR_JOB_RUNNING && cj->j.state != DR_JOB_STARTING)) {
        refuse(c, node, m, "job %llu is not running", (unsigned long long)m->job);
        return;
    }
    if (!cj->step_key[0] || !key_equal(m->key, cj->step_key)) {
        refuse(c, node, m, "key: not the step key of job %llu", (unsigned long long)m->job);
        return;
    }
    if (m->gen != cj->gen) {
        refuse(c, node, m, "gen: run %u of job %llu is over (it runs %u now)", m->gen,
               (unsigned long long)m->job, cj->gen);
        return;
    }
    if (m->uid != 0 && m->uid != cj->uid) {
        refuse(c, node, m, "uid %u does not own job %llu", m->uid, (unsigned long long)m->job);
        return;
    }
    bool in = false;
    for (uint32_t i = 0; i < cj->nnodes && !in; i++)
        in = cj->nodes[i] == (uint32_t)node;
    if (!in) {
        refuse(c, node, m, "node %s is not in job %llu", c->cl.nodes[node].name,
               (unsigned long long)m->job);
        return;
    }
    if (cj->kill_sent || cj->reap_sent) {
        refuse(c, node, m, "job %llu is ending", (unsigned long long)m->job);
        return;
    }
    uint32_t *per = calloc(cj->nnodes ? cj->nnodes : 1, sizeof *per);
    uint32_t nn = 0, n = 0;
    char why[256];
    if (!per) {
        refuse(c, node, m, "out of memory");
        return;
    }
    if (layout(cj, m, per, &nn, &n, why, sizeof why) != 0) {
        refuse(c, node, m, "%s", why);
        free(per);
        return;
    }
    if (cj->nsteps >= STEP_MAX_STEPS || cj->nranks + n > STEP_MAX_RANKS) {
        refuse(c, node, m, "job %llu has run %u steps: no more in this run",
               (unsigned long long)m->job, cj->nsteps);
        free(per);
        return;
    }
    uint32_t g = gpus_per_task(cj, m);
    for (uint32_t i = 0; g && i < nn; i++) {
        uint32_t gpus[DR_MAX_GPUS_PER_NODE];
        uint32_t have = ctld_job_gpus(cj, cj->nodes[i], gpus);
        if ((uint64_t)per[i] * g > have) {
            refuse(c, node, m, "--gpus-per-task=%u: %u tasks on %s need %u GPUs, the job holds %u",
                   g, per[i], c->cl.nodes[cj->nodes[i]].name, per[i] * g, have);
            free(per);
            return;
        }
    }
    ctld_step_t *steps = realloc(cj->steps, (cj->nsteps + 1) * sizeof *steps);
    ctld_rank_t *ranks = steps ? realloc(cj->ranks, (cj->nranks + n) * sizeof *ranks) : NULL;
    dr_msg_step_req_t *keep = malloc(sizeof *keep);
    if (steps)
        cj->steps = steps;
    if (ranks)
        cj->ranks = ranks;
    if (!steps || !ranks || !keep) {
        free(keep);
        free(per);
        refuse(c, node, m, "out of memory");
        return;
    }
    *keep = *m; /* the step owns the request's strings now */
    memset(m, 0, sizeof *m);
    ctld_step_t *st = &cj->steps[cj->nsteps];
    *st = (ctld_step_t){.id = cj->nsteps,
                        .first = cj->nranks,
                        .n = n,
                        .nnodes = nn,
                        .origin = node,
                        .req = keep->req,
                        .kill_on_bad_exit = keep->kill_on_bad_exit,
                        .start = ctld_now(c),
                        .launch = keep};
    snprintf(st->label, sizeof st->label, "%s", base_name(keep->argv[0]));
    cj->nsteps++;
    for (uint32_t i = 0; i < nn; i++)
        for (uint32_t l = 0; l < per[i]; l++)
            cj->ranks[cj->nranks++] =
                (ctld_rank_t){.node = cj->nodes[i], .local = l, .step = st->id + 1};
    free(per);
    const char *names[1024];
    uint32_t nl = nn < 1024 ? nn : 1024;
    for (uint32_t i = 0; i < nl; i++)
        names[i] = c->cl.nodes[cj->nodes[i]].name;
    char *list = dr_hostlist_compress(names, nl);
    ctld_note(c, cj->j.id, "step", "step %u: %u task%s on %s: %s", st->id, n, n == 1 ? "" : "s",
              list ? list : "?", st->label);
    free(list);
    for (uint32_t r = st->first; r < st->first + n; r++)
        ctld_launch_rank(c, cj, r);
    state_out(c, node, cj->j.id, cj->gen, st->req, DR_STEP_ACCEPTED, st, "");
    ctld_job_dirty(c, cj);
}

/* The LAUNCH of one step task. */
int ctld_step_launch(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank)
{
    ctld_rank_t *r = &cj->ranks[rank];
    ctld_step_t *st = r->step && r->step <= cj->nsteps ? &cj->steps[r->step - 1] : NULL;
    if (!st || !st->launch) {
        /* its request did not survive a controller restart: it cannot start */
        dr_msg_job_state_t js = {.exit_code = 127,
                                 .why = DR_END_LAUNCH,
                                 .detail = "the step's request was lost in a controller restart"};
        r->started = true;
        ctld_rank_ended(c, cj, rank, &js);
        return DR_OK;
    }
    const dr_msg_step_req_t *l = st->launch;
    const dr_jobspec_t *sp = ctld_job_spec(cj);
    const dr_job_t *j = &cj->j;
    /* where it sits: the step's nodes are the allocation's first nnodes */
    uint32_t nodeid = 0;
    while (nodeid < st->nnodes && cj->nodes[nodeid] != r->node)
        nodeid++;
    uint32_t per_node[1024] = {0};
    for (uint32_t q = st->first; q < st->first + st->n; q++)
        for (uint32_t i = 0; i < st->nnodes && i < 1024; i++)
            if (cj->nodes[i] == cj->ranks[q].node) {
                per_node[i]++;
                break;
            }
    uint32_t gpus[DR_MAX_GPUS_PER_NODE];
    uint32_t ng = ctld_job_gpus(cj, r->node, gpus), g = gpus_per_task(cj, l);
    if (g && (r->local + 1) * g <= ng) { /* its own GPUs; else (checked at the request) all */
        memmove(gpus, gpus + r->local * g, g * sizeof *gpus);
        ng = g;
    }
    ctld_task_pos_t pos = {.procid = rank - st->first,
                           .localid = r->local,
                           .nodeid = nodeid,
                           .ntasks = st->n,
                           .nnodes = st->nnodes,
                           .per_node = per_node,
                           .ngpus = ng,
                           .cpus_per_task = l->cpus_per_task,
                           .ranks = true,
                           .step = st->id,
                           .base_env = l->env,
                           .nbase_env = l->nenv};
    dr_strvec_t env = {0};
    ctld_launch_env(c, cj, &pos, &env);
    ctld_shard_env(c, cj, &env);
    const char *out = l->out_path && l->out_path[0] ? l->out_path : cj->out_path;
    const char *err = l->err_path && l->err_path[0] ? l->err_path : cj->err_path;
    dr_time_t now = ctld_now(c), limit = 0;
    if (sp->time_limit) { /* what is left of the job's */
        limit = sp->time_limit - (j->start > 0 && now > j->start ? now - j->start : 0);
        if (limit < DR_NSEC_PER_SEC)
            limit = DR_NSEC_PER_SEC;
    }
    dr_msg_launch_t m = {.job = j->id,
                         .gen = cj->gen,
                         .epoch = c->epoch,
                         .rank = rank,
                         .nranks = st->n,
                         .argv = l->argv,
                         .argc = l->argc,
                         .env = env.v,
                         .nenv = (uint32_t)env.n,
                         .cwd = l->cwd && l->cwd[0] ? l->cwd
                                : sp->cwd           ? sp->cwd
                                                    : "/",
                         .out_path = (char *)(out ? out : ""),
                         .err_path = (char *)(err && out && strcmp(err, out) != 0 ? err : ""),
                         .uid = cj->uid,
                         .gid = cj->gid,
                         .allow_root = c->cl.site.allow_root_jobs,
                         .gpus = gpus,
                         .ngpus = ng,
                         .time_limit_ns = limit,
                         .grace_ns = 10 * DR_NSEC_PER_SEC,
                         .cpu_milli = j->alloc.cpu_milli_per_node,
                         .mem_mb = j->alloc.mem_mb_per_node,
                         .step = r->step};
    if (sp->signal_num) { /* --signal reaches the steps' tasks too (not with B:) */
        m.signal = sp->signal_num;
        m.signal_secs = sp->signal_secs;
        m.signal_batch = sp->signal_batch;
        if (j->ckpt_every > 0) { /* the job's checkpoint rounds, counted from its start */
            dr_time_t ran = j->start > 0 && now > j->start ? now - j->start : 0;
            m.ckpt_every_ns = j->ckpt_every;
            m.ckpt_next_ns = j->ckpt_every - ran % j->ckpt_every;
        }
    }
    char *json = NULL;
    size_t len = 0;
    dr_err_t e = {0};
    int rc = dr_msg_launch_encode(&m, &json, &len, &e);
    dr_strvec_free(&env);
    if (rc != DR_OK) {
        ctld_log("job %llu step %u: cannot encode a launch: %s", (unsigned long long)j->id, st->id,
                 e.msg);
        dr_msg_job_state_t js = {.exit_code = 127, .why = DR_END_LAUNCH, .detail = e.msg};
        r->started = true;
        ctld_rank_ended(c, cj, rank, &js);
        return rc;
    }
    ctld_out_frame(c, (int)r->node, DR_MSG_LAUNCH, json);
    c->st.launches++;
    return DR_OK;
}

/* A task's exit status as a shell reports it: 128 + N for signal N. */
static int32_t task_status(const ctld_rank_t *r)
{
    if (r->signal)
        return 128 + r->signal;
    if (r->exit_code < 0)
        return 255;
    return r->exit_code > 255 ? 255 : r->exit_code;
}

void ctld_step_task_ended(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank)
{
    const ctld_rank_t *r = &cj->ranks[rank];
    if (!r->step || r->step > cj->nsteps)
        return;
    ctld_step_t *st = &cj->steps[r->step - 1];
    if (st->done)
        return;
    int32_t s = task_status(r);
    bool self = r->why != DR_END_KILLED, bad = s != 0 || r->why != DR_END_EXIT;
    if (bad && self && !st->detail[0]) {
        const char *node = c->cl.nodes[r->node].name;
        uint32_t task = rank - st->first;
        if (r->why == DR_END_LAUNCH)
            snprintf(st->detail, sizeof st->detail, "task %u on %s: launch failed", task, node);
        else if (r->why == DR_END_TIMEOUT)
            snprintf(st->detail, sizeof st->detail, "task %u on %s: time limit", task, node);
        else if (r->signal)
            snprintf(st->detail, sizeof st->detail, "task %u on %s: signal %d", task, node,
                     r->signal);
        else
            snprintf(st->detail, sizeof st->detail, "task %u on %s: exit code %d", task, node,
                     r->exit_code);
    }
    if (bad && self && st->kill_on_bad_exit && !st->kill_sent) {
        ctld_send_kill(c, cj, r->step, SIGTERM, "another task of the step failed");
        st->kill_sent = true;
    }
    int32_t mx_self = 0, mx_killed = 0;
    for (uint32_t q = st->first; q < st->first + st->n; q++) {
        const ctld_rank_t *t = &cj->ranks[q];
        if (!t->ended)
            return;
        int32_t ts = task_status(t);
        if (t->why == DR_END_KILLED)
            mx_killed = ts > mx_killed ? ts : mx_killed;
        else
            mx_self = ts > mx_self ? ts : mx_self;
    }
    /* tasks stopped because another failed do not hide its status */
    st->status = mx_self ? mx_self : mx_killed;
    st->done = true;
    st->end = ctld_now(c);
    ctld_note(c, cj->j.id, "step", "step %u ended: exit %d%s%s", st->id, st->status,
              st->detail[0] ? ", " : "", st->detail);
    state_out(c, st->origin, cj->j.id, cj->gen, st->req, DR_STEP_DONE, st, st->detail);
    if (st->launch) {
        dr_msg_step_req_free(st->launch);
        free(st->launch);
        st->launch = NULL;
    }
    ctld_job_dirty(c, cj);
}

void ctld_step_cancel(dr_ctld_t *c, int node, const dr_msg_step_cancel_t *m)
{
    ctld_job_t *cj = ctld_job_find(c, m->job);
    if (!cj || cj->array || cj->gen != m->gen)
        return;
    for (uint32_t i = 0; i < cj->nsteps; i++) {
        ctld_step_t *st = &cj->steps[i];
        if (st->origin != node || st->req != m->req || st->done || st->kill_sent)
            continue;
        int sig = m->signal > 0 && m->signal < 65 ? m->signal : SIGTERM;
        ctld_send_kill(c, cj, st->id + 1, sig, "srun stopped the step");
        st->kill_sent = true;
        ctld_note(c, cj->j.id, "step", "step %u: cancelled by srun (signal %d)", st->id, sig);
        ctld_job_dirty(c, cj);
    }
}

void ctld_steps_free(ctld_job_t *cj)
{
    for (uint32_t i = 0; i < cj->nsteps; i++)
        if (cj->steps[i].launch) {
            dr_msg_step_req_free(cj->steps[i].launch);
            free(cj->steps[i].launch);
        }
    free(cj->steps);
    cj->steps = NULL;
    cj->nsteps = 0;
}

static json_t *time_or_null(dr_time_t t)
{
    return t > 0 ? json_real(dr_time_to_s(t)) : json_null();
}

static const char *step_state(const ctld_step_t *st)
{
    if (!st->done)
        return "running";
    if (st->status == 0)
        return "completed";
    return st->kill_sent && !st->detail[0] ? "cancelled" : "failed";
}

json_t *ctld_steps_json(const dr_ctld_t *c, const ctld_job_t *cj)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < cj->nsteps; i++) {
        const ctld_step_t *st = &cj->steps[i];
        const char *names[1024];
        uint32_t nl = st->nnodes < 1024 && st->nnodes <= cj->nnodes ? st->nnodes : 0;
        for (uint32_t k = 0; k < nl; k++)
            names[k] = c->cl.nodes[cj->nodes[k]].name;
        char *list = nl ? dr_hostlist_compress(names, nl) : NULL;
        json_array_append_new(
            a, json_pack("{s:i,s:s,s:s,s:i,s:i,s:s,s:o,s:s,s:o,s:o}", "id", (json_int_t)st->id,
                         "state", step_state(st), "command", st->label, "ntasks", (json_int_t)st->n,
                         "nnodes", (json_int_t)st->nnodes, "nodelist", list ? list : "",
                         "exit_code", st->done ? json_integer(st->status) : json_null(), "reason",
                         st->detail, "start_time", time_or_null(st->start), "end_time",
                         st->done ? time_or_null(st->end) : json_null()));
        free(list);
    }
    return a;
}

json_t *ctld_steps_rt(const ctld_job_t *cj)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < cj->nsteps; i++) {
        const ctld_step_t *st = &cj->steps[i];
        json_array_append_new(
            a, json_pack("{s:i,s:i,s:i,s:i,s:i,s:I,s:b,s:b,s:b,s:i,s:s,s:s,s:I,s:I}", "id",
                         (json_int_t)st->id, "first", (json_int_t)st->first, "n", (json_int_t)st->n,
                         "nnodes", (json_int_t)st->nnodes, "origin", (json_int_t)st->origin, "req",
                         (json_int_t)st->req, "kob", st->kill_on_bad_exit, "kill_sent",
                         st->kill_sent, "done", st->done, "status", (json_int_t)st->status,
                         "detail", st->detail, "label", st->label, "start", (json_int_t)st->start,
                         "end", (json_int_t)st->end));
    }
    return a;
}

int ctld_steps_load(ctld_job_t *cj, json_t *a)
{
    size_t n = json_array_size(a);
    if (!json_is_array(a))
        return DR_EINVAL;
    cj->steps = calloc(n ? n : 1, sizeof *cj->steps);
    if (!cj->steps)
        return DR_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_int_t id, first, cnt, nn, origin, req, status, start, end;
        int kob = 0, ks = 0, done = 0;
        const char *detail = "", *label = "";
        if (json_unpack(json_array_get(a, i),
                        "{s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:b,s:b,s:I,s:s,s:s,s:I,s:I}", "id", &id,
                        "first", &first, "n", &cnt, "nnodes", &nn, "origin", &origin, "req", &req,
                        "kob", &kob, "kill_sent", &ks, "done", &done, "status", &status, "detail",
                        &detail, "label", &label, "start", &start, "end", &end) != 0 ||
            first < 0 || cnt < 0 || (uint64_t)first + (uint64_t)cnt > cj->nranks)
            return DR_EINVAL;
        ctld_step_t *st = &cj->steps[cj->nsteps++];
        *st = (ctld_step_t){.id = (uint32_t)id,
                            .first = (uint32_t)first,
                            .n = (uint32_t)cnt,
                            .nnodes = (uint32_t)nn,
                            .origin = (int32_t)origin,
                            .req = (uint64_t)req,
                            .kill_on_bad_exit = kob,
                            .kill_sent = ks,
                            .done = done,
                            .status = (int32_t)status,
                            .start = start,
                            .end = end};
        snprintf(st->detail, sizeof st->detail, "%s", detail);
        snprintf(st->label, sizeof st->label, "%s", label);
    }
    return DR_OK;
}
