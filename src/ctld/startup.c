/* startup.c - droverd's start-up and shutdown: the configuration, the
 * store's reload (every job back where it was), the event loop's parts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/accounts.h"
#include "ctld/agent_link.h"
#include "ctld/arrays.h"
#include "ctld/classes.h"
#include "ctld/backup.h"
#include "ctld/crashpoint.h"
#include "ctld/deps.h"
#include "ctld/events.h"
#include "ctld/fence.h"
#include "ctld/holds.h"
#include "ctld/http.h"
#include "ctld/launch.h"
#include "ctld/launch_env.h"
#include "ctld/lb.h"
#include "ctld/metrics.h"
#include "ctld/notes.h"
#include "ctld/outbox.h"
#include "ctld/output.h"
#include "ctld/ratelimit.h"
#include "ctld/seq.h"
#include "ctld/services.h"
#include "ctld/settle.h"
#include "ctld/shards.h"
#include "ctld/stats.h"
#include "ctld/stop.h"
#include "ctld/store.h"
#include "ctld/turn.h"
#include "drover/config.h"

/* ---- start-up ---- */

/* A job reloaded from the store goes back where it was. */
static int reload_job(dr_ctld_t *c, ctld_job_t *cj, dr_err_t *err)
{
    if (cj->j.array_parent) {
        cj->parent = ctld_job_find(c, cj->j.array_parent);
        if (!cj->parent || !cj->parent->array)
            return dr_err_set(err, DR_EIO, "store: task %llu: its array %llu is missing",
                              (unsigned long long)cj->j.id, (unsigned long long)cj->j.array_parent);
    }
    if (cj->array) {
        int rc = ctld_job_insert(c, cj);
        if (rc == DR_OK && cj->spec.ndeps && cj->j.state == DR_JOB_PENDING && !cj->array->next) {
            rc = ctld_deps_hold(c, cj); /* still waiting for its dependencies */
            if (cj->hold)
                ctld_hold_reason(cj);
            return rc;
        }
        if (rc == DR_OK && !ctld_job_terminal(cj))
            rc = ctld_arrays_add(c, cj);
        return rc;
    }
    dr_job_t saved = cj->j;
    int rc = dr_jobspec_to_job(ctld_job_spec(cj), &c->cl, saved.submit, &cj->j, err);
    if (rc != DR_OK)
        return dr_err_prefix(err, "store: job %llu: ", (unsigned long long)saved.id);
    cj->j.id = saved.id;
    cj->j.submit = saved.submit;
    cj->j.account = ctld_account_id(c, ctld_job_spec(cj));
    cj->j.user = cj->uid;
    cj->j.state = saved.state;
    cj->j.first_start = saved.first_start;
    cj->j.start = saved.start;
    cj->j.end = saved.end;
    cj->j.nstarts = saved.nstarts;
    cj->j.attained_gpu_s = saved.attained_gpu_s;
    cj->j.array_parent = saved.array_parent;
    cj->j.array_index = saved.array_index;
    ctld_shard_bind(c, cj);
    if (cj->parent && cj->parent->array->svc) {
        cj->j.kind = DR_KIND_SERVE;
    } else if (cj->parent) {
        cj->j.kind = DR_KIND_ARRAY;
        cj->j.array_throttle = cj->parent->array->throttle;
    }
    if (ctld_classes_assign(c, cj, cj->user, false, err) != DR_OK)
        return dr_err_prefix(err, "store: job %llu: ", (unsigned long long)saved.id);
    dr_alloc_t alloc = saved.alloc;
    memset(&cj->j.alloc, 0, sizeof cj->j.alloc);
    ctld_job_set_paths(c, cj);
    rc = ctld_job_insert(c, cj);
    if (rc != DR_OK)
        return rc;
    if (cj->parent) {
        ctld_array_t *a = cj->parent->array;
        if (dr_grow((void **)&a->live, &a->live_cap, a->active + 1, sizeof *a->live) != 0)
            return DR_ENOMEM;
        a->live[a->active++] = cj;
        if (a->svc)
            ctld_service_run_reloaded(c, cj);
    }
    switch (cj->j.state) {
    case DR_JOB_STARTING:
    case DR_JOB_RUNNING:
    case DR_JOB_COMPLETING:
        if (cj->j.state == DR_JOB_COMPLETING)
            cj->j.state = DR_JOB_RUNNING;
        cj->got_type = alloc.type;
        if (dr_alloc_copy(&cj->run_alloc, &alloc) != DR_OK)
            memset(&cj->run_alloc, 0, sizeof cj->run_alloc); /* stopped at once */
        if (cj->master_port && cj->nranks)
            ctld_port_mark(c, cj->ranks[0].node, cj->master_port);
        rc = dr_sched_adopt(c->sched, &cj->j, &alloc, ctld_now(c), err);
        dr_alloc_free(&alloc);
        if (rc != DR_OK)
            return dr_err_prefix(err, "store: job %llu: ", (unsigned long long)cj->j.id);
        cj->in_sched = true;
        break;
    default:
        dr_alloc_free(&alloc);
        cj->j.state = DR_JOB_PENDING;
        if (cj->stopping && ctld_stop_reloaded(c, cj))
            return DR_OK; /* preempted, its ranks not yet over: they stop first */
        if (ctld_job_spec(cj)->ndeps && !cj->parent) {
            rc = ctld_deps_hold(c, cj); /* looked at again in the first turn */
            if (cj->hold)
                ctld_hold_reason(cj);
            return rc;
        }
        if (cj->nnodes && cj->j.nstarts && !cj->parent) {
            /* it ran before: where, its next launch waits for (restart.c) */
            cj->prev_nodes = malloc(cj->nnodes * sizeof *cj->prev_nodes);
            if (!cj->prev_nodes)
                return dr_err_set(err, DR_ENOMEM, "out of memory");
            memcpy(cj->prev_nodes, cj->nodes, cj->nnodes * sizeof *cj->prev_nodes);
            cj->nprev_nodes = cj->nnodes;
        }
        if (cj->hold)
            return DR_OK; /* held (holds.c): out of the queue until released */
        rc = dr_sched_restore(c->sched, &cj->j, ctld_now(c), err);
        if (rc != DR_OK)
            return rc;
        cj->in_sched = true;
        if (ctld_job_terminal(cj)) { /* refused: it can no longer fit this cluster */
            ctld_job_dirty(c, cj);
            ctld_job_finished(c, cj);
        }
        break;
    }
    return DR_OK;
}

/* A node revoked before the restart stays revoked. */
static void reload_revoked(dr_ctld_t *c, const char *name)
{
    int i = dr_cluster_find_node(&c->cl, name);
    if (i >= 0)
        c->nodes[i].revoked = true;
}

/* A node re-keyed before the restart keeps its key generation. */
static void reload_key_gen(dr_ctld_t *c, const char *name, uint32_t gen)
{
    int i = dr_cluster_find_node(&c->cl, name);
    if (i >= 0)
        c->nodes[i].key_gen = gen;
}

/* A drain stored before the restart holds until resumed. */
static void reload_drain(dr_ctld_t *c, const char *name, const char *reason, bool is_auto)
{
    int i = dr_cluster_find_node(&c->cl, name);
    if (i < 0) {
        ctld_log("store: drained node %s is not in the configuration any more", name);
        return;
    }
    c->nodes[i].admin_drain = true;
    c->nodes[i].auto_drain = is_auto;
    snprintf(c->nodes[i].reason, sizeof c->nodes[i].reason, "%s", reason);
}

static int load_key(dr_ctld_t *c, dr_err_t *err)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = dr_read_file(c->o.key_file, &buf, &len, err);
    if (rc != DR_OK)
        return dr_err_prefix(err, "--key: ");
    rc = dr_proto_key_parse(buf, len, c->key, err);
    free(buf);
    if (rc != DR_OK)
        dr_err_prefix(err, "%s: ", c->o.key_file);
    return rc;
}

int dr_ctld_init(dr_ctld_t *c, const ctld_opts_t *o, dr_err_t *err)
{
    memset(c, 0, sizeof *c);
    c->o = *o;
    dr_cluster_init(&c->cl);
    if (ctld_turn_init(c) != DR_OK || ctld_outbox_init(c) != DR_OK || ctld_notes_init(c) != DR_OK ||
        ctld_deps_init(c) != DR_OK || ctld_arrays_init(c) != DR_OK || ctld_stops_init(c) != DR_OK)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    int rc = ctld_crash_init(o->crash_at, err);
    if (rc != DR_OK)
        return rc;
    rc = dr_catalog_builtin(&c->cat, err);
    dr_strvec_t notes = {0}; /* what a slurm.conf asks that drover does not do */
    if (rc == DR_OK)
        rc = dr_config_load_notes(&c->cl, &c->cat, o->config, &notes, err);
    for (size_t i = 0; i < notes.n; i++)
        ctld_log("config: %s", notes.v[i]);
    dr_strvec_free(&notes);
    if (rc == DR_OK)
        rc = load_key(c, err);
    if (rc != DR_OK)
        return rc;
    /* --policy, else the config's SchedulerPolicy=, else drover */
    snprintf(c->policy, sizeof c->policy, "%s",
             o->policy         ? o->policy
             : c->cl.policy[0] ? c->cl.policy
                               : "drover");
    /* how fast each job runs on each type: what policies read (classes.c) */
    if ((rc = ctld_classes_init(c, err)) != DR_OK)
        return rc;
    dr_sched_opts_t so = {.policy = c->policy,
                          .placement = DR_PLACE_BEST_FIT,
                          .seed = 1,
                          .perf = ctld_classes_view(c)};
    rc = dr_sched_create(&c->sched, &c->cl, &so, err);
    if (rc != DR_OK)
        return dr_err_prefix(err, "policy %s: ", c->policy);
    if ((rc = ctld_accounts_bind(c, err)) != DR_OK)
        return rc;
    c->nodes = calloc(c->cl.nnodes ? c->cl.nnodes : 1, sizeof *c->nodes);
    if (!c->nodes)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    if ((rc = ctld_seq_read(c, err)) != DR_OK || (rc = ctld_store_open(c, err)) != DR_OK)
        return rc;
    /* the store's counters, unless droverd.seq has seen more: then the
     * store lost its last commits (a WAL lost or damaged, a backup
     * restored) and the ids and epoch they used are not given again */
    uint64_t v = 0, st_epoch, st_next;
    st_epoch = ctld_store_get_meta(c, "epoch", &v) == DR_OK ? v : 0;
    st_next = ctld_store_get_meta(c, "next_id", &v) == DR_OK ? v : 1;
    c->epoch = (st_epoch > c->seq_epoch ? st_epoch : c->seq_epoch) + 1;
    c->next_id = st_next > c->seq_ids_below ? st_next : c->seq_ids_below;
    if (c->seq_found && st_epoch == 0)
        ctld_log("store: a new store (--init): ids go on from %llu, the epoch from %llu, as "
                 "droverd.seq says",
                 (unsigned long long)c->next_id, (unsigned long long)c->epoch);
    else if (c->seq_found &&
             (st_epoch < c->seq_epoch || st_next + CTLD_SEQ_BLOCK < c->seq_ids_below))
        ctld_log("store: behind droverd.seq (epoch %llu and next id %llu stored, droverd.seq "
                 "has epoch %llu and ids below %llu): its last commits were lost (a WAL removed "
                 "or damaged, or a backup restored); ids go on from %llu, none is reused",
                 (unsigned long long)st_epoch, (unsigned long long)st_next,
                 (unsigned long long)c->seq_epoch, (unsigned long long)c->seq_ids_below,
                 (unsigned long long)c->next_id);
    /* the new epoch and a block of ids are on disk before either leaves */
    if (ctld_seq_write(c, c->epoch, c->next_id + CTLD_SEQ_BLOCK, err) != DR_OK)
        return dr_err_prefix(err, "droverd.seq: ");
    if ((rc = ctld_store_begin(c, err)) != DR_OK ||
        (rc = ctld_store_put_meta(c, "epoch", c->epoch, err)) != DR_OK ||
        (rc = ctld_store_commit(c, err)) != DR_OK)
        return rc;
    /* what the last run left in the WAL goes into the database file now:
     * a WAL lost later costs only what comes after this start */
    ctld_store_checkpoint(c);
    ctld_backup_sweep(c);
    /* fair-share usage first: restored and adopted jobs queue by it */
    if ((rc = ctld_share_restore(c, err)) != DR_OK)
        return rc;
    /* the classes' runs before the jobs that belong to them */
    if ((rc = ctld_classes_restore(c, err)) != DR_OK)
        return rc;
    rc = ctld_store_load(c, reload_job, err);
    if (rc != DR_OK)
        return rc;
    dr_time_t now = ctld_now(c); /* after the reload's records: the log is time-ordered */
    /* until its agent registers, a node runs what it runs and starts nothing;
     * its jobs are requeued only once a lease its agent may have had from the
     * last controller is surely over */
    int64_t boot = ctld_boot_ns();
    c->start_boot = boot;
    for (size_t i = 0; i < c->cl.nnodes; i++) {
        c->nodes[i].idx = (uint32_t)i;
        c->nodes[i].lost_at = now;
        c->nodes[i].gone_boot = boot;
        snprintf(c->nodes[i].reason, sizeof c->nodes[i].reason, "agent not connected");
        if (c->cl.nodes[i].state == DR_NODE_UP &&
            (rc = dr_sched_node_set_state(c->sched, (uint32_t)i, DR_NODE_DRAIN, now, err)) != DR_OK)
            return rc;
    }
    if ((rc = ctld_store_load_drains(c, reload_drain, err)) != DR_OK)
        return rc;
    if ((rc = ctld_store_load_revoked(c, reload_revoked, err)) != DR_OK)
        return rc;
    if ((rc = ctld_store_load_key_gens(c, reload_key_gen, err)) != DR_OK)
        return rc;
    ctld_stop_reload_waits(c); /* launches on GPUs a stopping job still holds wait again */
    c->base = event_base_new();
    if (!c->base)
        return dr_err_set(err, DR_ENOMEM, "event_base_new failed");
    if ((rc = ctld_turn_start(c, err)) != DR_OK)
        return rc;
    if ((rc = ctld_metrics_init(c, err)) != DR_OK || (rc = ctld_stats_init(c, err)) != DR_OK)
        return rc;
    rc = o->embedded ? DR_OK : ctld_http_start(c, err);
    if (rc == DR_OK && !o->embedded)
        rc = ctld_events_start(c, err);
    if (rc == DR_OK && !o->embedded)
        rc = ctld_agents_start(c, err);
    if (rc == DR_OK && !o->embedded)
        rc = ctld_lb_start(c, err);
    if (rc == DR_OK)
        ctld_want_pass(c);
    ctld_log("epoch %llu, policy %s, %zu nodes, %zu jobs reloaded", (unsigned long long)c->epoch,
             c->policy, c->cl.nnodes, c->tab_n);
    return rc;
}

void dr_ctld_free(dr_ctld_t *c)
{
    ctld_turn_now(c);   /* what agents reported last is stored before we go */
    c->stopping = true; /* the agents' connections close: their nodes are not lost */
    while (c->agents)
        ctld_agent_close(c->agents, "controller stopping");
    ctld_output_free(c); /* before the connections its requests are on */
    ctld_outbox_free(c); /* nothing was committed since: replies say 507 */
    ctld_lb_free(c);
    ctld_backup_free(c); /* its request is answered while evhttp lives */
    ctld_events_free(c); /* before the connections they are on */
    ctld_http_free(c);
    ctld_metrics_free(c); /* after evhttp: a request's completion counts into it */
    ctld_stats_free(c);
    if (c->agent_lst)
        evconnlistener_free(c->agent_lst);
    ctld_turn_free(c);
    if (c->sig_int)
        event_free(c->sig_int);
    if (c->sig_term)
        event_free(c->sig_term);
    if (c->sched)
        dr_sched_destroy(c->sched);
    for (size_t i = 0; i < c->tab_cap; i++)
        ctld_job_free(c->tab[i]);
    free(c->tab);
    free(c->dirty);
    ctld_stops_free(c);
    ctld_deps_free(c);
    ctld_arrays_free(c);
    ctld_notes_free(c);
    ctld_classes_free(c);
    free(c->nodes);
    free(c->share_saved);
    free(c->budget_saved);
    ctld_rate_free(c);
    ctld_store_close(c);
    /* a clean stop: droverd.seq says exactly what was used, so that the
     * next start goes on without a jump (after a crash it jumps up to a
     * block); only once this run wrote it itself */
    if (c->epoch && c->seq_found && c->seq_epoch == c->epoch) {
        dr_err_t serr = {0};
        if (ctld_seq_write(c, c->epoch, c->next_id, &serr) != DR_OK)
            ctld_log("droverd.seq: %s (the next start may skip up to %d ids)", serr.msg,
                     CTLD_SEQ_BLOCK);
    }
    dr_cluster_free(&c->cl);
    dr_catalog_free(&c->cat);
    if (c->base)
        event_base_free(c->base);
}
