/* pending_index.h - the pending jobs of the drover policy, indexed so that
 * a pass finds the few with the highest priority without scoring the whole
 * queue (private to src/sched; used by policy_drover.c).
 *
 * Each pending job has a record holding what the policy knows of it for
 * good (runnable types, rate on the fastest) and its estimate, cached: run
 * time on its best type, remaining work, walltime left.
 * For a waiting job the estimate changes only when the size estimator's
 * parameters do (the policy then re-keys), and its priority at time t,
 * drover's shape (policy_drover.c, priority_of),
 *
 *   p(t) = 1 / (g * max(60, best - alpha * (t - s)))
 *          * max(1, ((t - s) / best + 1) / age)^4
 *
 * (g its GPUs, s its submit time, best at least 1) depends on t only
 * through its wait t - s.  It falls as best + alpha * s and s grow and as
 * 1/best falls, so over a set of jobs of g GPUs it is at most the same
 * expression over the minimum of best + alpha*s and of s and the maximum
 * of 1/best.  Records live in one tree per
 * group (the jobs of g GPUs; the tasks of a throttled array, apart, so that
 * the array is skipped whole while throttled), leaves in arrival order,
 * every node holding those three extremes over its leaves, and a count.  A
 * search descends only into subtrees whose bound reaches what it looks
 * for.  Where the extremes of a subtree come from the same few jobs (jobs
 * that arrived together, or a burst) the bound is tight and a search costs
 * about what it finds times the depth, log n; jobs of very different waits
 * and sizes side by side loosen it.
 *
 * Cost: finding, adding and removing a record O(log n) (a hash map from the
 * job, a path of the tree); re-keying every record O(n); the searches as
 * above.  Trees grow by doubling and close gaps left by removed records
 * when they are half empty. */
#ifndef DROVER_SCHED_PENDING_INDEX_H
#define DROVER_SCHED_PENDING_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/job.h"
#include "drover/perf.h"
#include "drover/time.h"

#define DR_PIDX_NONE UINT32_MAX

typedef struct dr_pidx_rec {
    dr_job_t *j;   /* NULL: a free record */
    uint32_t gen;  /* bumped when the record is freed (stale handles) */
    uint32_t ver;  /* bumped when its estimate is put into the index */
    uint32_t tree; /* its group's tree and its leaf there */
    uint32_t leaf;
    double g;         /* GPUs */
    double s;         /* submit, seconds after the index's origin */
    dr_time_t submit; /* (copies of the job's, to spare a cache miss) */
    /* what the policy knows of the job for good (its runnable types, its
     * rate on the fastest) and its cached estimate (best = INFINITY: not
     * schedulable) */
    dr_typemask_t runm;
    double rate;
    double best, remw, left;
} dr_pidx_rec_t;

/* Extremes over a subtree: min(best + alpha*s), min(s), max(1/best), and
 * the number of records (schedulable or not). */
typedef struct dr_pidx_agg {
    double k, s, ii;
    uint32_t cnt;
} dr_pidx_agg_t;

typedef struct dr_pidx_tree {
    double g;          /* GPUs of every job in it */
    uint64_t parent;   /* array parent, 0 unless the array has a throttle */
    uint32_t throttle; /* its throttle, 0 for the others */
    uint32_t nrec;     /* records in it */
    size_t cap, used;  /* leaves: power of two; assigned so far */
    dr_pidx_agg_t *a;  /* 2*cap nodes: root 1, leaves cap.. */
    uint32_t *who;     /* leaf -> record, DR_PIDX_NONE */
    bool inuse;
} dr_pidx_tree_t;

/* A search result: the job's priority now, its GPUs, the job, its record. */
typedef struct dr_pidx_hit {
    double v, g;
    dr_job_t *j;
    uint32_t rec;
} dr_pidx_hit_t;

/* What a search needs: the time (s after the origin), which trees may
 * supply candidates this pass, and the exact priority of a record (0 if it
 * is no candidate); bounds use alpha and age. */
typedef struct dr_pidx_query {
    double t;
    const unsigned char *usable; /* per tree */
    double (*value)(void *ud, const dr_pidx_rec_t *r);
    void *ud;
} dr_pidx_query_t;

typedef struct dr_pidx {
    double alpha, age;
    dr_time_t origin;
    bool have_origin;
    dr_pidx_rec_t *rec;
    size_t nslots, rec_cap; /* records allocated (free ones chained by leaf) */
    uint32_t free_rec;
    size_t nrec; /* live records */
    double gpus; /* their GPUs, summed */
    dr_pidx_tree_t *tree;
    size_t ntree, tree_cap;
    /* job pointer -> record, (g, parent, throttle) -> tree: linear probing */
    uintptr_t *jkey;
    uint32_t *jval;
    size_t jcap, jn;
    uint64_t *tkey;
    uint32_t *tval;
    size_t tcap, tn;
    /* search scratch */
    struct dr_pidx_item *heap;
    size_t heap_cap;
    uint64_t *stack;
    size_t stack_cap;
} dr_pidx_t;

void dr_pidx_init(dr_pidx_t *x, double alpha, double age);
void dr_pidx_free(dr_pidx_t *x);
/* Queue order, as the scheduler keeps it: priority desc, submit asc, id asc. */
bool dr_pidx_queue_before(const dr_job_t *a, const dr_job_t *b);

/* The record of j, or DR_PIDX_NONE. */
uint32_t dr_pidx_find(const dr_pidx_t *x, const dr_job_t *j);
/* A new record for j (not yet in the index): set its estimate, then
 * dr_pidx_update.  DR_ENOMEM. */
int dr_pidx_add(dr_pidx_t *x, dr_job_t *j, uint32_t *rec);
/* Put the record's (new) estimate into its tree: O(log n). */
int dr_pidx_update(dr_pidx_t *x, uint32_t rec);
void dr_pidx_remove(dr_pidx_t *x, uint32_t rec);
/* Set every record's estimate with fn, then rebuild the trees: O(n). */
void dr_pidx_rekey(dr_pidx_t *x, void (*fn)(void *ud, dr_pidx_rec_t *r), void *ud);
/* A record of tree t (any; DR_PIDX_NONE when empty). */
uint32_t dr_pidx_any(const dr_pidx_t *x, size_t t);

/* Every record with value >= tau > 0 (unordered), into *out.  Gives up
 * with DR_ELIMIT once they hold more than max_gpus GPUs.  *nvalued counts
 * the records valued. */
int dr_pidx_collect(dr_pidx_t *x, const dr_pidx_query_t *q, double tau, double max_gpus,
                    dr_pidx_hit_t **out, size_t *nout, size_t *outcap, size_t *nvalued);
/* The records of highest value, in order (value desc, then queue order),
 * until they hold want_gpus GPUs or none is left (branch and bound). */
int dr_pidx_top(dr_pidx_t *x, const dr_pidx_query_t *q, double want_gpus, dr_pidx_hit_t **out,
                size_t *nout, size_t *outcap, size_t *nvalued);
/* qsort comparator for hits: value desc, then queue order. */
int dr_pidx_hit_cmp(const void *a, const void *b);
/* Reorder h[0..n) so that h[0..k) are the first hits in that order whose
 * GPUs reach want (all n if they never do), and return k: expected O(n). */
size_t dr_pidx_hit_select(dr_pidx_hit_t *h, size_t n, double want);

#endif
