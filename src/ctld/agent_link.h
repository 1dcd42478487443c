/* agent_link.h - the agents' connections (agent_link.c) and their messages
 * (agent_msgs.c). */
#ifndef DROVER_CTLD_AGENT_LINK_H
#define DROVER_CTLD_AGENT_LINK_H

#include "ctld/ctld.h"

struct ctld_agent {
    struct dr_ctld *c;
    struct bufferevent *bev;
    dr_proto_session_t sess;
    int node;    /* cluster node index once HELLO named it, else -1 */
    bool authed; /* its HELLO proved the node key: its frames are sealed now */
    bool welcomed, registered;
    struct event *deadline; /* the handshake's: an agent not authed by then is closed */
    int64_t accepted_ns;    /* CLOCK_BOOTTIME when it connected (the oldest goes first) */
    bool closing;           /* rejected: close once the output has drained */
    char addr[64];
    /* A link that is a function call (the in-process tests): what the
     * controller sends goes to tap as the message's JSON; no socket. */
    void (*tap)(void *ud, int type, const char *json);
    void *tap_ud;
    struct ctld_agent *next;
};

int ctld_agents_start(dr_ctld_t *c, dr_err_t *err);
struct sockaddr_storage;
int ctld_parse_hostport(const char *s, struct sockaddr_storage *ss, int *slen, dr_err_t *err,
                        const char *opt);
void ctld_agent_close(ctld_agent_t *a, const char *why);
int ctld_agent_send(ctld_agent_t *a, int type, const char *json);
void ctld_agent_msg(ctld_agent_t *a, const dr_frame_t *f);
/* The agent proved its node key (agent_msgs.c, HELLO): its handshake
 * deadline and pre-auth limits end. */
void ctld_agent_authed(ctld_agent_t *a);
/* An agent on node `node` linked by function calls (tests): authenticated
 * and welcomed as if its HELLO had proved the node key; frames go to tap,
 * and the test hands the agent's frames to ctld_agent_msg.  Closed with
 * ctld_agent_close like any other. */
ctld_agent_t *ctld_agent_attach(dr_ctld_t *c, uint32_t node,
                                void (*tap)(void *ud, int type, const char *json), void *ud);

#endif
