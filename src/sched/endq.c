/* endq.c - running jobs ordered by expected end time.
 *
 * A skip list keyed by (expected end, job id): O(log n) insert/remove and an
 * in-order walk, which is what EASY backfill needs to find when the job at
 * the head of the queue could start (its "shadow time") without sorting all
 * running jobs on every pass.  Levels come from a fixed-seed RNG, so the
 * structure (and everything downstream) is deterministic. */
#include "sched/endq.h"

#include <stdlib.h>
#include <string.h>

#define MAXLVL 24

typedef struct enode {
    dr_time_t key;
    uint64_t id;
    dr_job_t *job;
    int nlvl;
    struct enode *next[]; /* nlvl entries */
} enode_t;

struct dr_endq {
    enode_t *head; /* sentinel with MAXLVL links */
    int lvl;
    size_t n;
    dr_rng_t rng;
    enode_t *spare[MAXLVL + 1]; /* freed nodes by level count, reused (no malloc churn) */
};

static inline int cmp(dr_time_t k1, uint64_t i1, dr_time_t k2, uint64_t i2)
{
    if (k1 != k2)
        return k1 < k2 ? -1 : 1;
    return i1 < i2 ? -1 : (i1 > i2);
}

dr_endq_t *dr_endq_create(void)
{
    dr_endq_t *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->head = calloc(1, sizeof(enode_t) + MAXLVL * sizeof(enode_t *));
    if (!q->head) {
        free(q);
        return NULL;
    }
    q->head->nlvl = MAXLVL;
    q->lvl = 1;
    dr_rng_seed(&q->rng, 0x5eedULL);
    return q;
}

void dr_endq_destroy(dr_endq_t *q)
{
    if (!q)
        return;
    enode_t *e = q->head->next[0];
    while (e) {
        enode_t *nx = e->next[0];
        free(e);
        e = nx;
    }
    for (int l = 0; l <= MAXLVL; l++)
        for (e = q->spare[l]; e;) {
            enode_t *nx = e->next[0];
            free(e);
            e = nx;
        }
    free(q->head);
    free(q);
}

size_t dr_endq_size(const dr_endq_t *q)
{
    return q->n;
}

int dr_endq_insert(dr_endq_t *q, dr_job_t *j, dr_time_t key)
{
    enode_t *upd[MAXLVL];
    for (int i = 0; i < MAXLVL; i++)
        upd[i] = q->head;
    enode_t *x = q->head;
    for (int i = q->lvl - 1; i >= 0; i--) {
        while (x->next[i] && cmp(x->next[i]->key, x->next[i]->id, key, j->id) < 0)
            x = x->next[i];
        upd[i] = x;
    }
    int lvl = 1;
    uint64_t r = dr_rng_next(&q->rng);
    while (lvl < MAXLVL && (r & 3) == 0) { /* p = 1/4 */
        lvl++;
        r >>= 2;
    }
    if (lvl > q->lvl) {
        for (int i = q->lvl; i < lvl; i++)
            upd[i] = q->head;
        q->lvl = lvl;
    }
    enode_t *e = q->spare[lvl];
    if (e)
        q->spare[lvl] = e->next[0];
    else if (!(e = malloc(sizeof *e + (size_t)lvl * sizeof(enode_t *))))
        return DR_ENOMEM;
    e->key = key;
    e->id = j->id;
    e->job = j;
    e->nlvl = lvl;
    for (int i = 0; i < lvl; i++) {
        e->next[i] = upd[i]->next[i];
        upd[i]->next[i] = e;
    }
    q->n++;
    return DR_OK;
}

int dr_endq_remove(dr_endq_t *q, const dr_job_t *j, dr_time_t key)
{
    enode_t *upd[MAXLVL];
    for (int i = 0; i < MAXLVL; i++)
        upd[i] = q->head;
    enode_t *x = q->head;
    for (int i = q->lvl - 1; i >= 0; i--) {
        while (x->next[i] && cmp(x->next[i]->key, x->next[i]->id, key, j->id) < 0)
            x = x->next[i];
        upd[i] = x;
    }
    enode_t *e = x->next[0];
    if (!e || e->id != j->id || e->key != key)
        return DR_ENOENT;
    for (int i = 0; i < e->nlvl; i++)
        upd[i]->next[i] = e->next[i];
    e->next[0] = q->spare[e->nlvl];
    q->spare[e->nlvl] = e;
    while (q->lvl > 1 && !q->head->next[q->lvl - 1])
        q->lvl--;
    q->n--;
    return DR_OK;
}

void dr_endq_first(const dr_endq_t *q, dr_endq_iter_t *it)
{
    it->node = q->head->next[0];
}

dr_job_t *dr_endq_next(dr_endq_iter_t *it, dr_time_t *expected_end)
{
    const enode_t *e = it->node;
    if (!e)
        return NULL;
    it->node = e->next[0];
    if (expected_end)
        *expected_end = e->key;
    return e->job;
}
