/* fence.h - the agents' lease, node loss by timeout, failing nodes (fence.c). */
#ifndef DROVER_CTLD_FENCE_H
#define DROVER_CTLD_FENCE_H

#include "ctld/ctld.h"

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

#endif
