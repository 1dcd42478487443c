/* eventlog.c - the append-only job event log: one record per state change,
 * with the GPUs held in the new state and an interned free-text detail. */
#include "drover/eventlog.h"

#include <stdlib.h>
#include <string.h>

void dr_eventlog_init(dr_eventlog_t *l)
{
    memset(l, 0, sizeof *l);
}

void dr_eventlog_free(dr_eventlog_t *l)
{
    free(l->ev);
    free(l->node_ev);
    dr_strtab_free(&l->details);
    memset(l, 0, sizeof *l);
}

/* Does a job hold its allocation in state s? */
static int dr_eventlog_holds(dr_job_state_t s)
{
    return s == DR_JOB_STARTING || s == DR_JOB_RUNNING || s == DR_JOB_COMPLETING;
}

int dr_eventlog_reserve(dr_eventlog_t *l, size_t more)
{
    return dr_grow((void **)&l->ev, &l->cap, l->n + more, sizeof *l->ev);
}

int dr_eventlog_append(dr_eventlog_t *l, dr_time_t t, const dr_job_t *j, dr_job_state_t from,
                       dr_job_state_t to, const char *detail)
{
    if (!j || (unsigned)from >= DR_JOB_NSTATES || (unsigned)to >= DR_JOB_NSTATES)
        return DR_EINVAL;
    if (l->n > 0 && t < l->ev[l->n - 1].t)
        return DR_EINVAL;

    dr_event_t e;
    memset(&e, 0, sizeof e);
    e.t = t;
    e.job = j->id;
    e.from = (uint8_t)from;
    e.to = (uint8_t)to;
    e.type = j->alloc.type;
    if (dr_eventlog_holds(to)) {
        uint64_t m = dr_alloc_milli(&j->alloc);
        e.milli = m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
        e.nodes = j->alloc.nnodes;
    }
    if (detail) {
        int64_t id = dr_strtab_intern(&l->details, detail);
        if (id < 0 || id >= (int64_t)UINT32_MAX)
            return DR_ENOMEM;
        e.detail = (uint32_t)id + 1;
    }
    if (l->n == l->cap && dr_grow((void **)&l->ev, &l->cap, l->n + 1, sizeof *l->ev) != 0)
        return DR_ENOMEM;
    l->ev[l->n++] = e;
    return DR_OK;
}

const char *dr_eventlog_detail(const dr_eventlog_t *l, const dr_event_t *e)
{
    if (!e || e->detail == 0)
        return NULL;
    return dr_strtab_get(&l->details, e->detail - 1);
}

dr_time_t dr_eventlog_last_t(const dr_eventlog_t *l)
{
    dr_time_t t = INT64_MIN;
    if (l->n > 0)
        t = l->ev[l->n - 1].t;
    if (l->nnode > 0 && l->node_ev[l->nnode - 1].t > t)
        t = l->node_ev[l->nnode - 1].t;
    return t;
}

int dr_eventlog_append_node(dr_eventlog_t *l, dr_time_t t, uint32_t node, uint8_t from, uint8_t to,
                            const char *detail)
{
    if (t < dr_eventlog_last_t(l))
        return DR_EINVAL;
    dr_node_event_t e = {.t = t, .node = node, .from = from, .to = to, .detail = 0};
    if (detail) {
        int64_t id = dr_strtab_intern(&l->details, detail);
        if (id < 0 || id >= (int64_t)UINT32_MAX)
            return DR_ENOMEM;
        e.detail = (uint32_t)id + 1;
    }
    return DR_PUSH(l->node_ev, l->nnode, l->node_cap, e) == 0 ? DR_OK : DR_ENOMEM;
}

const char *dr_eventlog_node_detail(const dr_eventlog_t *l, const dr_node_event_t *e)
{
    if (!e || e->detail == 0)
        return NULL;
    return dr_strtab_get(&l->details, e->detail - 1);
}

const char *dr_event_name(const dr_event_t *e)
{
    switch ((dr_job_state_t)e->to) {
    case DR_JOB_PENDING: return e->from == DR_JOB_PENDING ? "submit" : "pending";
    case DR_JOB_STARTING: return "start";
    case DR_JOB_RUNNING: return "run";
    case DR_JOB_COMPLETING: return "completing";
    case DR_JOB_COMPLETED: return "complete";
    case DR_JOB_FAILED: return "fail";
    case DR_JOB_CANCELLED: return "cancel";
    case DR_JOB_PREEMPTED: return "preempt";
    case DR_JOB_REQUEUED: return "requeue";
    case DR_JOB_TIMEOUT: return "timeout";
    case DR_JOB_NSTATES: break;
    }
    return "unknown";
}
