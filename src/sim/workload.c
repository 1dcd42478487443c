/* workload.c - a set of jobs to replay: appending jobs with their GPU type
 * sets, the deterministic (submit, id) ordering with id assignment, and the
 * resolution of type-set names against a cluster. */
#include "drover/workload.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void dr_workload_init(dr_workload_t *wl)
{
    memset(wl, 0, sizeof *wl);
    dr_perf_init(&wl->perf);
}

void dr_workload_free(dr_workload_t *wl)
{
    for (size_t i = 0; i < wl->njobs; i++)
        dr_alloc_free(&wl->jobs[i].alloc);
    free(wl->jobs);
    free(wl->typeset);
    free(wl->work);
    dr_strtab_free(&wl->typesets);
    dr_perf_free(&wl->perf);
    dr_strtab_free(&wl->users);
    dr_strtab_free(&wl->accounts);
    dr_strtab_free(&wl->shards);
    dr_workload_init(wl);
}

int dr_workload_reserve(dr_workload_t *wl, size_t more)
{
    if (dr_grow((void **)&wl->jobs, &wl->cap, wl->njobs + more, sizeof *wl->jobs) != 0 ||
        dr_grow((void **)&wl->typeset, &wl->typeset_cap, wl->njobs + more, sizeof *wl->typeset) !=
            0 ||
        dr_grow((void **)&wl->work, &wl->work_cap, wl->njobs + more, sizeof *wl->work) != 0)
        return DR_ENOMEM;
    return DR_OK;
}

int dr_workload_add(dr_workload_t *wl, const dr_job_t *j, double work, const char *typeset)
{
    uint32_t ts = 0;
    if (typeset && !dr_is_blank(typeset)) {
        int64_t id = dr_strtab_intern(&wl->typesets, typeset);
        if (id < 0 || id >= UINT32_MAX - 1)
            return DR_ENOMEM;
        ts = (uint32_t)id + 1;
    }
    if (dr_grow((void **)&wl->typeset, &wl->typeset_cap, wl->njobs + 1, sizeof *wl->typeset) != 0 ||
        dr_grow((void **)&wl->work, &wl->work_cap, wl->njobs + 1, sizeof *wl->work) != 0)
        return DR_ENOMEM;
    dr_job_t copy = *j;
    memset(&copy.alloc, 0, sizeof copy.alloc); /* a workload's jobs hold no resources */
    size_t n = wl->njobs;
    if (DR_PUSH(wl->jobs, wl->njobs, wl->cap, copy) != 0)
        return DR_ENOMEM;
    wl->typeset[n] = ts;
    wl->work[n] = work;
    return DR_OK;
}

typedef struct sort_key {
    dr_time_t submit;
    uint64_t id;
    size_t idx;
} sort_key_t;

static int cmp_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* (submit, id, original position): a total order, so qsort is deterministic. */
static int cmp_key(const void *a, const void *b)
{
    const sort_key_t *x = a, *y = b;
    if (x->submit != y->submit)
        return x->submit < y->submit ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int dr_workload_finish(dr_workload_t *wl, dr_err_t *err)
{
    size_t n = wl->njobs;
    if (n == 0)
        return DR_OK;
    /* explicit ids, sorted, to find duplicates and the gaps auto ids fill */
    uint64_t *ids = malloc(n * sizeof *ids);
    sort_key_t *keys = malloc(n * sizeof *keys);
    dr_job_t *jobs = malloc(n * sizeof *jobs); /* untouched (no page faults) if in order */
    uint32_t *ts = malloc(n * sizeof *ts);
    double *work = malloc(n * sizeof *work);
    if (!ids || !keys || !jobs || !ts || !work) {
        free(ids);
        free(keys);
        free(jobs);
        free(ts);
        free(work);
        return dr_err_set(err, DR_ENOMEM, "workload: out of memory");
    }
    size_t nids = 0;
    for (size_t i = 0; i < n; i++)
        if (wl->jobs[i].id)
            ids[nids++] = wl->jobs[i].id;
    qsort(ids, nids, sizeof *ids, cmp_id);
    int rc = DR_OK;
    for (size_t i = 1; i < nids; i++)
        if (ids[i] == ids[i - 1]) {
            rc = dr_err_set(err, DR_EINVAL, "workload: duplicate job id %" PRIu64, ids[i]);
            break;
        }
    /* ids 0 get the smallest unused ids, in insertion order */
    uint64_t next = 1;
    size_t k = 0;
    for (size_t i = 0; rc == DR_OK && i < n; i++) {
        if (wl->jobs[i].id)
            continue;
        for (;;) {
            while (k < nids && ids[k] < next)
                k++;
            if (k < nids && ids[k] == next)
                next++;
            else
                break;
        }
        wl->jobs[i].id = next++;
    }
    if (rc == DR_OK) {
        for (size_t i = 0; i < n; i++)
            keys[i] = (sort_key_t){wl->jobs[i].submit, wl->jobs[i].id, i};
        qsort(keys, n, sizeof *keys, cmp_key);
        size_t moved = 0;
        for (size_t i = 0; i < n; i++)
            moved += keys[i].idx != i;
        for (size_t i = 0; moved && i < n; i++) {
            jobs[i] = wl->jobs[keys[i].idx];
            ts[i] = wl->typeset[keys[i].idx];
            work[i] = wl->work[keys[i].idx];
        }
        if (moved) { /* generators and most traces arrive in order already */
            memcpy(wl->jobs, jobs, n * sizeof *jobs);
            memcpy(wl->typeset, ts, n * sizeof *ts);
            memcpy(wl->work, work, n * sizeof *work);
        }
    }
    free(ids);
    free(keys);
    free(jobs);
    free(ts);
    free(work);
    return rc;
}

/* Resolve one '|'-separated type set.  *bad gets the first unknown name
 * (empty if all known). */
static int resolve_set(const dr_cluster_t *c, const char *set, dr_typemask_t *mask, char *bad,
                       size_t badsz)
{
    *mask = 0;
    bad[0] = '\0';
    const char *p = set;
    char name[DR_GPU_NAME_MAX * 2];
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        const char *s = p;
        while (n && isspace((unsigned char)*s))
            s++, n--;
        while (n && isspace((unsigned char)s[n - 1]))
            n--;
        if (n) {
            int t = -1;
            if (n < sizeof name) {
                memcpy(name, s, n);
                name[n] = '\0';
                t = dr_cluster_find_type(c, name);
            }
            if (t >= 0 && t < DR_MAX_GPU_TYPES)
                *mask |= (dr_typemask_t)1 << t;
            else if (!bad[0]) {
                size_t m = n < badsz - 1 ? n : badsz - 1;
                memcpy(bad, s, m);
                bad[m] = '\0';
            }
        }
        if (!bar)
            break;
        p = bar + 1;
    }
    return DR_OK;
}

/* req.shard of every job naming a shard, for cluster c. */
static int bind_shards(dr_workload_t *wl, const dr_cluster_t *c, dr_err_t *err)
{
    size_t n = wl->shards.n;
    if (n == 0)
        return DR_OK;
    uint32_t *map = malloc(n * sizeof *map);
    if (!map)
        return dr_err_set(err, DR_ENOMEM, "workload: out of memory");
    for (size_t s = 0; s < n; s++) {
        int id = dr_cluster_find_shard(c, wl->shards.strs[s]);
        map[s] = id >= 0 ? (uint32_t)id + 1 : DR_SHARD_UNHELD;
    }
    for (size_t i = 0; i < wl->njobs; i++) {
        dr_job_t *j = &wl->jobs[i];
        j->req.shard = j->shard && j->shard <= n ? map[j->shard - 1] : 0;
    }
    free(map);
    return DR_OK;
}

int dr_workload_bind(dr_workload_t *wl, const dr_cluster_t *c, bool lenient, dr_err_t *err)
{
    if (bind_shards(wl, c, err) != DR_OK)
        return DR_ENOMEM;
    size_t nsets = wl->typesets.n;
    if (nsets == 0)
        return DR_OK;
    dr_typemask_t *masks = calloc(nsets, sizeof *masks);
    char(*bad)[DR_GPU_NAME_MAX * 2] = calloc(nsets, sizeof *bad);
    if (!masks || !bad) {
        free(masks);
        free(bad);
        return dr_err_set(err, DR_ENOMEM, "workload: out of memory");
    }
    for (size_t s = 0; s < nsets; s++)
        resolve_set(c, wl->typesets.strs[s], &masks[s], bad[s], sizeof bad[s]);
    /* A lenient job left with no known type must never run, but a zero mask
     * means "any": give it a bit no cluster type has. */
    dr_typemask_t none = c->ntypes < DR_MAX_GPU_TYPES ? (dr_typemask_t)1 << 63 : 0;
    int rc = DR_OK;
    for (size_t i = 0; i < wl->njobs; i++) {
        uint32_t ts = wl->typeset[i];
        if (ts == 0 || ts > nsets)
            continue;
        dr_job_t *j = &wl->jobs[i];
        if (bad[ts - 1][0] && !lenient) {
            rc = dr_err_set(err, DR_EINVAL, "job %" PRIu64 ": gpu type '%s' is not in the cluster",
                            j->id, bad[ts - 1]);
            break;
        }
        if (masks[ts - 1]) {
            j->req.types = masks[ts - 1];
        } else if (none) {
            j->req.types = none;
        } else {
            rc = dr_err_set(err, DR_ELIMIT,
                            "job %" PRIu64 ": no gpu type of '%s' is in the cluster, and a "
                            "cluster of %d types leaves no way to mark it unrunnable",
                            j->id, wl->typesets.strs[ts - 1], DR_MAX_GPU_TYPES);
            break;
        }
    }
    free(masks);
    free(bad);
    return rc;
}
