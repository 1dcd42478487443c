/* launch_env.h - a task's environment and the nodes' MASTER_PORTs (launch_env.c). */
#ifndef DROVER_CTLD_LAUNCH_ENV_H
#define DROVER_CTLD_LAUNCH_ENV_H

#include "ctld/ctld.h"

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

#endif
