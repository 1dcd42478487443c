/* node.h - a cluster node as the controller sees it: its agent, lease, drain and
 * MASTER_PORTs. */
#ifndef DROVER_CTLD_NODE_H
#define DROVER_CTLD_NODE_H

#include <stdbool.h>
#include <stdint.h>
#include "drover/util.h"

struct dr_ctld;
typedef struct dr_ctld dr_ctld_t;

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

/* The node's state as the API shows it (up, drain, down, unreachable, unknown). */
const char *ctld_node_state(const dr_ctld_t *c, uint32_t node);

#endif
