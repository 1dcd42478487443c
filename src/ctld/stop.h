/* stop.h - graceful and immediate stops of preempted jobs (stop.c). */
#ifndef DROVER_CTLD_STOP_H
#define DROVER_CTLD_STOP_H

#include "ctld/ctld.h"

/* A job the pass preempted: with a signal (and PreemptGrace= not 0),
 * signal it, keep it out of the scheduler and stop it after its lead;
 * true then.  false: stop it at once as before. */
bool ctld_stop_gracefully(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now);
/* A job the pass preempted without a graceful stop: kill its ranks now,
 * keep it out of the scheduler, its GPUs held, until every rank is
 * confirmed over; true then.  false (out of memory): as before. */
bool ctld_stop_now(dr_ctld_t *c, ctld_job_t *cj, dr_time_t now);
/* A job the pass preempted and started again elsewhere (a move to another
 * GPU type): back in the queue, not launched, so that it is stopped as
 * any preempted job and starts again only once its old run is over. */
void ctld_stop_unstart(dr_ctld_t *c, ctld_job_t *cj);
/* An agent registered without holding rank r of stopping job cj on its
 * node: that rank runs nowhere. */
void ctld_stop_not_held(dr_ctld_t *c, ctld_job_t *cj, uint32_t r);
/* A job the pass started on GPUs a stopping job still holds: its LAUNCHes
 * wait (true).  Call before ctld_launch_job. */
bool ctld_stop_blocks(dr_ctld_t *c, ctld_job_t *cj);
/* Each turn: kill what is due, put what stopped back in the queue, launch
 * what no longer waits. */
void ctld_stops_turn(dr_ctld_t *c, dr_time_t now);
bool ctld_stops_due(const dr_ctld_t *c, dr_time_t now); /* a turn has work */
/* An agent's report of rank `rank` of a stopping job (job, gen) on node:
 * the job, or NULL when it is no such rank. */
ctld_job_t *ctld_stop_rank(dr_ctld_t *c, int node, uint64_t job, uint32_t gen, uint32_t rank);
/* Send the job's signal to its ranks now (why: DR_SIG_PREEMPT, DR_SIG_DRAIN)
 * and record it; false when it has none. */
bool ctld_signal_job(dr_ctld_t *c, ctld_job_t *cj, uint32_t why, const char *detail);
/* Node `node` is being drained: its jobs with a signal get it. */
void ctld_drain_signal(dr_ctld_t *c, uint32_t node);
/* An agent's SIGNALED: recorded once per round per job. */
void ctld_job_warned(dr_ctld_t *c, ctld_job_t *cj, const dr_msg_signal_t *m);
/* A stopping job's agent reports a checkpoint committed (and verified)
 * since the preemption signal: stop it now instead of after its lead. */
void ctld_stop_ckpt(dr_ctld_t *c, ctld_job_t *cj, int node, const dr_msg_ckpt_t *m);
/* Reload: a preempted job stored while stopping, whose ranks have not all
 * ended, stops again (at once: the signal's lead is not kept across a
 * restart) before it is queued; true then.  And, once every job is back,
 * the launches it blocks wait for it again. */
bool ctld_stop_reloaded(dr_ctld_t *c, ctld_job_t *cj);
void ctld_stop_reload_waits(dr_ctld_t *c);
/* A cancel of a job that is stopping or waiting to launch. */
void ctld_stop_cancel(dr_ctld_t *c, ctld_job_t *cj);
/* The stopping jobs and the launches waiting for them (stop.c owns both). */
int ctld_stops_init(dr_ctld_t *c);
void ctld_stops_free(dr_ctld_t *c);
/* A launch that waits (restart.c: its last run may still be alive). */
int ctld_stop_wait_add(dr_ctld_t *c, ctld_job_t *cj);

#endif
