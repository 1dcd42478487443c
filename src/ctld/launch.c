/* launch.c - a job the pass started: its ranks, their nodes and tasks, its
 * output paths, and the LAUNCH frame each rank's agent gets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/ckpt.h"
#include "ctld/crashpoint.h"
#include "ctld/deps.h"
#include "ctld/kill.h"
#include "ctld/launch.h"
#include "ctld/launch_env.h"
#include "ctld/outbox.h"
#include "ctld/restart.h"
#include "ctld/shards.h"
#include "ctld/steps.h"

/* Default output file, as Slurm's slurm-%j.out in the submit directory. */
void ctld_job_set_paths(dr_ctld_t *c, ctld_job_t *cj)
{
    const dr_jobspec_t *sp = ctld_job_spec(cj);
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
    const dr_jobspec_t *sp = ctld_job_spec(cj);
    return sp->script && !(sp->launcher && strcmp(sp->launcher, "torchrun") == 0);
}

/* The LAUNCH message of one of the job's own processes. */
static char *launch_json(dr_ctld_t *c, ctld_job_t *cj, uint32_t rank)
{
    const dr_jobspec_t *sp = ctld_job_spec(cj);
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
    m.grace_ns = CTLD_KILL_GRACE_NS;
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
    const dr_jobspec_t *sp = ctld_job_spec(cj);
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
    const dr_jobspec_t *sp = ctld_job_spec(cj);
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
    ctld_job_set_paths(c, cj);
    ctld_deps_recheck(c); /* after:ID holds once ID has started */
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
