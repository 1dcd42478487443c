/* ckpt.c - the controller's part in checkpoints: where a job's checkpoint
 * directory is (CheckpointDir=/JOBID, else the job's working directory's
 * .drover/ckpt/JOBID: the same for every generation of the job), what its
 * launches say about it, and the agents' reports of which checkpoint a
 * restart resumes from and which were passed over, written to the job's
 * events.  The files themselves are only ever read on the nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt.h"
#include "ctld/ctld.h"
#include "ctld/ckpt.h"
#include "ctld/crashpoint.h"
#include "ctld/notes.h"

bool ctld_ckpt_dir(const dr_ctld_t *c, const ctld_job_t *cj, char *out, size_t len)
{
    const dr_jobspec_t *sp = cj->parent ? &cj->parent->spec : &cj->spec;
    if (cj->j.ckpt_every <= 0)
        return false; /* it declares no checkpoints */
    unsigned long long id = (unsigned long long)cj->j.id;
    int n;
    if (c->cl.ckpt_dir[0])
        n = snprintf(out, len, "%s/%llu", c->cl.ckpt_dir, id);
    else if (sp->cwd && sp->cwd[0] == '/')
        n = snprintf(out, len, "%s%s.drover/ckpt/%llu", sp->cwd,
                     sp->cwd[strlen(sp->cwd) - 1] == '/' ? "" : "/", id);
    else
        return false;
    return n > 0 && (size_t)n < len;
}

void ctld_ckpt_env(const dr_ctld_t *c, const ctld_job_t *cj, dr_strvec_t *env)
{
    char v[64];
    snprintf(v, sizeof v, "DROVER_CHECKPOINT_KEEP=%u",
             c->cl.ckpt_keep ? c->cl.ckpt_keep : DR_CKPT_KEEP_DEFAULT);
    dr_strvec_push(env, v);
    snprintf(v, sizeof v, "DROVER_CHECKPOINT_EVERY=%lld",
             (long long)(cj->j.ckpt_every / DR_NSEC_PER_SEC));
    dr_strvec_push(env, v);
}

void ctld_ckpt_report_lost(dr_ctld_t *c, ctld_job_t *cj, int node)
{
    char dir[1200];
    if (cj->ckpt_gen == cj->gen || !cj->nranks || cj->ranks[0].node != (uint32_t)node ||
        !ctld_ckpt_dir(c, cj, dir, sizeof dir))
        return;
    /* the agent verified before it started the rank, and reported once */
    cj->ckpt_gen = cj->gen;
    cj->ckpt_from[0] = '\0';
    ctld_note(c, cj->j.id, "checkpoint",
              "generation %u: the report of the checkpoint it resumed from was lost with the "
              "controller (crashed before storing it); %s's agent log names it",
              cj->gen, c->cl.nodes[node].name);
    ctld_job_dirty(c, cj);
}

void ctld_ckpt_report(dr_ctld_t *c, ctld_job_t *cj, int node, const dr_msg_ckpt_t *m)
{
    const char *nn = c->cl.nodes[node].name;
    char rej[768];
    size_t o = 0;
    rej[0] = '\0';
    for (uint32_t i = 0; i < m->nrejected && o < sizeof rej - 1; i++)
        o += (size_t)snprintf(rej + o, sizeof rej - o, "%s%s", i ? "; " : "", m->rejected[i]);
    if (o >= sizeof rej)
        o = sizeof rej - 1;
    /* every node of a gang checks (and on shared storage finds the same):
     * the first report of a generation is written, later ones only when
     * they disagree with it */
    bool first = cj->ckpt_gen != m->gen;
    if (!first && strcmp(cj->ckpt_from, m->from) == 0 && !m->error[0])
        return;
    if (first) {
        cj->ckpt_gen = m->gen;
        snprintf(cj->ckpt_from, sizeof cj->ckpt_from, "%s", m->from);
        ctld_job_dirty(c, cj); /* stored with the note: a restart knows it has it */
    }
    const char *who = first ? "" : "disagrees: ";
    if (m->error[0])
        ctld_note(c, cj->j.id, "checkpoint",
                  "%son %s: cannot use the checkpoint directory: %s; the run fails (it never "
                  "starts afresh in a directory it cannot trust or reach)",
                  who, nn, m->error);
    else if (m->from[0])
        ctld_note(c, cj->j.id, "checkpoint",
                  "%son %s: resumes from %s (checkpoint %llu, verified)%s%s", who, nn, m->from,
                  (unsigned long long)m->seq, o ? "; rejected " : "", rej);
    else
        ctld_note(c, cj->j.id, "checkpoint", "%son %s: no verified checkpoint: starts afresh%s%s",
                  who, nn, o ? "; rejected " : "", rej);
    CTLD_CRASH_POINT(c, "ckpt-before-commit"); /* the report taken in, not stored */
}
