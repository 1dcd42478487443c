/* node_loss.h - what a node's loss and return do to its jobs (node_loss.c). */
#ifndef DROVER_CTLD_NODE_LOSS_H
#define DROVER_CTLD_NODE_LOSS_H

#include "ctld/ctld.h"

void ctld_node_connected(dr_ctld_t *c, uint32_t node);
void ctld_node_lost(dr_ctld_t *c, uint32_t node, const char *why);
/* Does the job go back to the queue when it loses a node (--requeue, else
 * its kind's default: training and services yes, batch RequeueDefault=)? */
bool ctld_job_requeues(const dr_ctld_t *c, const ctld_job_t *cj);
/* Does cj's current run hold node?  (Its allocation: a batch job's other
 * nodes run nothing until a step asks, and are held all the same.) */
bool ctld_job_holds_node(const ctld_job_t *cj, uint32_t node);

#endif
