/* output.h - `drover logs` through the node that wrote the output (output.c). */
#ifndef DROVER_CTLD_OUTPUT_H
#define DROVER_CTLD_OUTPUT_H

#include <stdint.h>

#include "drover/proto.h"

struct dr_ctld;
struct evhttp_request;

/* Ask node `node`'s agent for part of a job's output (m: job, path, uid,
 * gid, offset, limit; its req is filled in here) and answer `req` when it
 * replies: 200 with the bytes, 403/404 as the agent found the file, 503
 * when the node is not connected or busy, 504 when no answer comes. */
void ctld_output_request(struct dr_ctld *c, struct evhttp_request *req, int node,
                         dr_msg_output_req_t *m, const char *job_state);
/* An agent's OUTPUT: only the node asked may answer its request. */
void ctld_output_answer(struct dr_ctld *c, int node, const dr_msg_output_t *m);
/* A node's agent went away: its pending requests are answered 503. */
void ctld_output_node_gone(struct dr_ctld *c, int node);
/* At exit: every pending request answered 503. */
void ctld_output_free(struct dr_ctld *c);

#endif
