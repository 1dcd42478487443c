/* launch_env.c - what a rank's environment says about its job.
 *
 * The variables distributed training launchers read (torchrun's MASTER_ADDR,
 * MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK, NODE_RANK, GROUP_RANK,
 * LOCAL_WORLD_SIZE; DeepSpeed and Megatron read the same), drover's own
 * DROVER_* names for them, and the SLURM_* variables batch scripts commonly
 * read, so a script written for Slurm finds what it looks for.  Also the
 * hosts of the gang (DROVER_HOSTS, which the agent writes out as a
 * `deepspeed --hostfile` / `mpirun -hostfile` file).  The submitter's own
 * environment comes first; these come after it and win.  One function
 * serves a command's ranks, a batch script (Slurm's batch step: task 0 of
 * the job, no torchrun ranks) and the tasks of srun's steps; where each
 * sits is a ctld_task_pos_t. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld/ctld.h"
#include "ctld/launch.h"
#include "ctld/launch_env.h"
#include "drover/hostlist.h"

static void put(dr_strvec_t *env, const char *k, const char *fmt, ...) DR_PRINTF(3, 4);
static void put(dr_strvec_t *env, const char *k, const char *fmt, ...)
{
    char v[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    size_t n = strlen(k) + strlen(v) + 2;
    char *s = malloc(n);
    if (!s)
        return;
    snprintf(s, n, "%s=%s", k, v);
    if (dr_strvec_push_owned(env, s) != 0)
        free(s);
}

/* The address ranks use to reach a node: its agent's, as this controller
 * sees it (the node's name when no agent has said). */
const char *ctld_node_addr(const dr_ctld_t *c, uint32_t node)
{
    return c->nodes[node].ip[0] ? c->nodes[node].ip : c->cl.nodes[node].name;
}

/* "2(x3),1": Slurm's tasks per node, runs compressed. */
static void tasks_per_node_str(const uint32_t *per, uint32_t n, char *out, size_t len)
{
    size_t o = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < n && o < len - 32;) {
        uint32_t k = i;
        while (k + 1 < n && per[k + 1] == per[i])
            k++;
        uint32_t run = k - i + 1;
        o += (size_t)(run > 1 ? snprintf(out + o, len - o, "%s%u(x%u)", i ? "," : "", per[i], run)
                              : snprintf(out + o, len - o, "%s%u", i ? "," : "", per[i]));
        i = k + 1;
    }
}

/* Compressed names of nodes[0, n). */
static char *nodelist_of(const dr_ctld_t *c, const uint32_t *nodes, uint32_t n)
{
    const char *names[1024];
    uint32_t nn = n < 1024 ? n : 1024;
    for (uint32_t i = 0; i < nn; i++)
        names[i] = c->cl.nodes[nodes[i]].name;
    return dr_hostlist_compress(names, nn);
}

void ctld_launch_env(dr_ctld_t *c, const ctld_job_t *cj, const ctld_task_pos_t *t, dr_strvec_t *env)
{
    const dr_jobspec_t *sp = cj->parent ? &cj->parent->spec : &cj->spec;
    const dr_job_t *j = &cj->j;
    uint32_t node = cj->nodes[t->nodeid];
    uint32_t here = t->per_node[t->nodeid];
    char *joblist = nodelist_of(c, cj->nodes, cj->nnodes);
    char *steplist = nodelist_of(c, cj->nodes, t->nnodes);
    const char *jl = joblist ? joblist : "", *nl = steplist ? steplist : "";
    const char *tname =
        j->alloc.nslots && c->cl.nodes[node].ngpus ? c->cl.types[j->alloc.type].name : "";
    const char *jname = ctld_job_name(cj, "job");
    const char *master = ctld_node_addr(c, cj->nodes[0]);
    unsigned long long id = (unsigned long long)j->id;
    uint32_t cpus = t->cpus_per_task ? t->cpus_per_task
                                     : j->alloc.cpu_milli_per_node / 1000 / (here ? here : 1);
    char tpn_s[256];
    tasks_per_node_str(t->per_node, t->nnodes, tpn_s, sizeof tpn_s);

    if (t->base_env)
        for (uint32_t i = 0; i < t->nbase_env; i++)
            dr_strvec_push(env, t->base_env[i]);
    else
        for (uint32_t i = 0; i < sp->nenv; i++)
            dr_strvec_push(env, sp->env[i]);
    /* drover's names */
    put(env, "DROVER_JOB_ID", "%llu", id);
    put(env, "DROVER_JOB_NAME", "%s", jname);
    put(env, "DROVER_JOB_USER", "%s", cj->user);
    put(env, "DROVER_NODELIST", "%s", jl);
    put(env, "DROVER_GPU_TYPE", "%s", tname);
    put(env, "DROVER_JOB_GENERATION", "%u", cj->gen);
    put(env, "DROVER_NNODES", "%u", t->nnodes);
    put(env, "DROVER_NODE_RANK", "%u", t->nodeid);
    put(env, "DROVER_RANK", "%u", t->procid);
    put(env, "DROVER_LOCAL_RANK", "%u", t->localid);
    put(env, "DROVER_WORLD_SIZE", "%u", t->ntasks);
    put(env, "DROVER_TASKS_PER_NODE", "%u", here);
    if (sp->signal_num) /* --signal's number: srun ignores it (its tasks get it themselves) */
        put(env, "DROVER_SIGNAL", "%d", (int)sp->signal_num);
    /* what srun inside the job shows its agent (docs/slurm.md) */
    if (cj->step_key[0])
        put(env, "DROVER_STEP_KEY", "%s", cj->step_key);
    if (sp->cwd)
        put(env, "DROVER_SUBMIT_DIR", "%s", sp->cwd);
    if (j->array_parent && j->kind != DR_KIND_SERVE) {
        put(env, "DROVER_ARRAY_JOB_ID", "%llu", (unsigned long long)j->array_parent);
        put(env, "DROVER_ARRAY_TASK_ID", "%u", j->array_index);
    }
    if (cj->master_port && j->kind == DR_KIND_SERVE) {
        /* a service replica: where to listen, and which one it is */
        put(env, "DROVER_PORT", "%u", cj->master_port);
        put(env, "DROVER_SERVICE", "%s", jname);
        put(env, "DROVER_REPLICA", "%u", j->array_index);
    } else if (cj->master_port) {
        put(env, "DROVER_MASTER_ADDR", "%s", master);
        put(env, "DROVER_MASTER_PORT", "%u", cj->master_port);
        /* torch.distributed's env:// and the launchers built on it */
        put(env, "MASTER_ADDR", "%s", master);
        put(env, "MASTER_PORT", "%u", cj->master_port);
    }
    if (cj->master_port && t->ranks) {
        put(env, "WORLD_SIZE", "%u", t->ntasks);
        put(env, "RANK", "%u", t->procid);
        put(env, "LOCAL_RANK", "%u", t->localid);
        put(env, "LOCAL_WORLD_SIZE", "%u", here);
        put(env, "NODE_RANK", "%u", t->nodeid);
        put(env, "GROUP_RANK", "%u", t->nodeid);
    }
    /* the job's hosts, one per node with its slots (the agent writes the file) */
    char hosts[4096];
    size_t hl = 0;
    hosts[0] = '\0';
    for (uint32_t i = 0; i < cj->nnodes && hl < sizeof hosts - 64; i++) {
        uint32_t g[DR_MAX_GPUS_PER_NODE];
        uint32_t ng = ctld_job_gpus(cj, cj->nodes[i], g);
        hl += (size_t)snprintf(hosts + hl, sizeof hosts - hl, "%s%s:%u", i ? "," : "",
                               ctld_node_addr(c, cj->nodes[i]),
                               ng        ? ng
                               : cj->tpn ? cj->tpn
                                         : 1);
    }
    put(env, "DROVER_HOSTS", "%s", hosts);
    /* what Slurm scripts read: the job's, then this task's */
    put(env, "SLURM_JOB_ID", "%llu", id);
    put(env, "SLURM_JOBID", "%llu", id);
    put(env, "SLURM_JOB_NAME", "%s", jname);
    put(env, "SLURM_JOB_USER", "%s", cj->user);
    put(env, "SLURM_JOB_NODELIST", "%s", jl);
    put(env, "SLURM_JOB_NUM_NODES", "%u", cj->nnodes);
    put(env, "SLURM_NODELIST", "%s", nl);
    put(env, "SLURM_NNODES", "%u", t->nnodes);
    put(env, "SLURM_NTASKS", "%u", t->ntasks);
    put(env, "SLURM_NPROCS", "%u", t->ntasks);
    put(env, "SLURM_NTASKS_PER_NODE", "%u", t->step >= 0 ? here : cj->tpn ? cj->tpn : 1);
    put(env, "SLURM_TASKS_PER_NODE", "%s", tpn_s);
    put(env, "SLURM_PROCID", "%u", t->procid);
    put(env, "SLURM_LOCALID", "%u", t->localid);
    put(env, "SLURM_NODEID", "%u", t->nodeid);
    put(env, "SLURM_CPUS_PER_TASK", "%u", cpus ? cpus : 1);
    put(env, "SLURM_GPUS_ON_NODE", "%u", t->ngpus);
    put(env, "SLURMD_NODENAME", "%s", c->cl.nodes[node].name);
    if (t->step >= 0) {
        put(env, "SLURM_STEP_ID", "%lld", (long long)t->step);
        put(env, "SLURM_STEPID", "%lld", (long long)t->step);
        put(env, "SLURM_STEP_NODELIST", "%s", nl);
        put(env, "SLURM_STEP_NUM_NODES", "%u", t->nnodes);
        put(env, "SLURM_STEP_NUM_TASKS", "%u", t->ntasks);
        put(env, "SLURM_STEP_TASKS_PER_NODE", "%s", tpn_s);
        put(env, "DROVER_STEP_ID", "%lld", (long long)t->step);
    }
    if (sp->cwd)
        put(env, "SLURM_SUBMIT_DIR", "%s", sp->cwd);
    if (sp->account)
        put(env, "SLURM_JOB_ACCOUNT", "%s", sp->account);
    if (j->array_parent && j->kind != DR_KIND_SERVE) {
        put(env, "SLURM_ARRAY_JOB_ID", "%llu", (unsigned long long)j->array_parent);
        put(env, "SLURM_ARRAY_TASK_ID", "%u", j->array_index);
    }
    free(joblist);
    free(steplist);
}

/* ---- MASTER_PORTs: drover's own range on each node ---- */

uint16_t ctld_port_take(dr_ctld_t *c, uint32_t node, uint64_t job)
{
    uint8_t *bits = c->nodes[node].ports;
    for (uint32_t k = 0; k < DR_CTLD_PORT_N; k++) {
        uint32_t i = (uint32_t)((job + k) % DR_CTLD_PORT_N); /* spread by job id */
        if (!(bits[i / 8] >> (i % 8) & 1)) {
            bits[i / 8] |= (uint8_t)(1u << (i % 8));
            return (uint16_t)(DR_CTLD_PORT_BASE + i);
        }
    }
    return 0;
}

void ctld_port_give(dr_ctld_t *c, uint32_t node, uint16_t port)
{
    if (port < DR_CTLD_PORT_BASE || port >= DR_CTLD_PORT_BASE + DR_CTLD_PORT_N)
        return;
    uint32_t i = port - DR_CTLD_PORT_BASE;
    c->nodes[node].ports[i / 8] &= (uint8_t) ~(1u << (i % 8));
}

void ctld_port_mark(dr_ctld_t *c, uint32_t node, uint16_t port)
{
    if (port < DR_CTLD_PORT_BASE || port >= DR_CTLD_PORT_BASE + DR_CTLD_PORT_N)
        return;
    uint32_t i = port - DR_CTLD_PORT_BASE;
    c->nodes[node].ports[i / 8] |= (uint8_t)(1u << (i % 8));
}
