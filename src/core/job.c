/* job.c - the job model: names, the checked state machine, request
 * validation, work/progress accounting and Slurm array ranges. */
#include "drover/job.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drover/util.h"

static const char *const state_names[DR_JOB_NSTATES] = {
    [DR_JOB_PENDING] = "pending",     [DR_JOB_STARTING] = "starting",
    [DR_JOB_RUNNING] = "running",     [DR_JOB_COMPLETING] = "completing",
    [DR_JOB_COMPLETED] = "completed", [DR_JOB_FAILED] = "failed",
    [DR_JOB_CANCELLED] = "cancelled", [DR_JOB_PREEMPTED] = "preempted",
    [DR_JOB_REQUEUED] = "requeued",   [DR_JOB_TIMEOUT] = "timeout",
};

static const char *const kind_names[DR_KIND_NKINDS] = {"train", "serve", "batch", "array"};
static const char *const prec_names[DR_PREC_NPREC] = {"unset", "fp32", "fp16", "bf16", "fp8"};

/* The state machine.  Why each edge exists:
 *  pending    -> starting   the scheduler allocated resources
 *  pending    -> cancelled  user cancel before start
 *  pending    -> failed     rejected: can never run on this cluster
 *  starting   -> running    launch confirmed by the agent
 *  starting   -> failed     launch failed
 *  starting   -> cancelled / requeued (node lost during launch) / preempted
 *  running    -> completing processes exited (any reason), cleanup begins
 *  running    -> preempted  stopped to make room
 *  running    -> requeued   node lost; the job must run again
 *  running    -> cancelled / failed / timeout: direct, when no cleanup phase is modelled
 *  completing -> completed / failed / timeout / cancelled: the final verdict
 *  preempted  -> pending, requeued -> pending: back in the queue
 *  preempted  -> cancelled, requeued -> cancelled: cancelled while stopped */
static bool edge(dr_job_state_t f, dr_job_state_t t)
{
    switch (f) {
    case DR_JOB_PENDING: return t == DR_JOB_STARTING || t == DR_JOB_CANCELLED || t == DR_JOB_FAILED;
    case DR_JOB_STARTING:
        return t == DR_JOB_RUNNING || t == DR_JOB_FAILED || t == DR_JOB_CANCELLED ||
               t == DR_JOB_REQUEUED || t == DR_JOB_PREEMPTED;
    case DR_JOB_RUNNING:
        return t == DR_JOB_COMPLETING || t == DR_JOB_PREEMPTED || t == DR_JOB_REQUEUED ||
               t == DR_JOB_CANCELLED || t == DR_JOB_FAILED || t == DR_JOB_TIMEOUT;
    case DR_JOB_COMPLETING:
        return t == DR_JOB_COMPLETED || t == DR_JOB_FAILED || t == DR_JOB_TIMEOUT ||
               t == DR_JOB_CANCELLED;
    case DR_JOB_PREEMPTED:
    case DR_JOB_REQUEUED: return t == DR_JOB_PENDING || t == DR_JOB_CANCELLED;
    default: return false; /* terminal states have no way out */
    }
}

bool dr_job_transition_ok(dr_job_state_t from, dr_job_state_t to)
{
    if ((unsigned)from >= DR_JOB_NSTATES || (unsigned)to >= DR_JOB_NSTATES)
        return false;
    return edge(from, to);
}

bool dr_job_state_terminal(dr_job_state_t s)
{
    return s == DR_JOB_COMPLETED || s == DR_JOB_FAILED || s == DR_JOB_CANCELLED ||
           s == DR_JOB_TIMEOUT;
}

static int parse_name(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (dr_streq_ci(s, names[i]))
            return i;
    return -1;
}

const char *dr_job_state_name(dr_job_state_t s)
{
    return (unsigned)s < DR_JOB_NSTATES ? state_names[s] : "?";
}

int dr_job_state_parse(const char *s, dr_job_state_t *out)
{
    int i = parse_name(s, state_names, DR_JOB_NSTATES);
    if (i < 0)
        return DR_EINVAL;
    *out = (dr_job_state_t)i;
    return DR_OK;
}

const char *dr_job_kind_name(dr_job_kind_t k)
{
    return (unsigned)k < DR_KIND_NKINDS ? kind_names[k] : "?";
}

int dr_job_kind_parse(const char *s, dr_job_kind_t *out)
{
    int i = parse_name(s, kind_names, DR_KIND_NKINDS);
    if (i < 0)
        return DR_EINVAL;
    *out = (dr_job_kind_t)i;
    return DR_OK;
}

const char *dr_precision_name(dr_precision_t p)
{
    return (unsigned)p < DR_PREC_NPREC ? prec_names[p] : "?";
}

int dr_precision_parse(const char *s, dr_precision_t *out)
{
    int i = parse_name(s, prec_names, DR_PREC_NPREC);
    if (i < 0)
        return DR_EINVAL;
    *out = (dr_precision_t)i;
    return DR_OK;
}

void dr_job_init(dr_job_t *j)
{
    memset(j, 0, sizeof *j);
    j->kind = DR_KIND_BATCH;
    j->state = DR_JOB_PENDING;
    j->req.nodes = 1;
    j->req.gpus_per_node = 1;
    j->req.gpu_milli = 1000;
    j->first_start = DR_TIME_NEVER;
    j->end = DR_TIME_NEVER;
}

int dr_job_req_validate(const dr_job_req_t *r, dr_err_t *err)
{
    if (r->nodes == 0 && r->gpus_per_node == 0)
        return dr_err_set(err, DR_EINVAL, "nodes: 0 (any number of nodes) needs gpus >= 1");
    if (r->nodes > 100000)
        return dr_err_set(err, DR_EINVAL, "nodes: %u is more than 100000", r->nodes);
    if (r->gpus_per_node > (r->nodes == 0 ? 1000000u : (unsigned)1024))
        return dr_err_set(err, DR_EINVAL, "gpus: %u is too many", r->gpus_per_node);
    if (r->gpus_per_node > 0 && (r->gpu_milli == 0 || r->gpu_milli > 1000))
        return dr_err_set(err, DR_EINVAL, "gpu_milli: %u must be 1..1000", r->gpu_milli);
    if (r->gpu_milli < 1000 && r->gpus_per_node > 1)
        return dr_err_set(err, DR_EINVAL,
                          "gpu_milli: a share of %u milli-GPU needs exactly one GPU, not %u",
                          r->gpu_milli, r->gpus_per_node);
    if (r->gpu_milli < 1000 && r->gpus_per_node == 1 && r->nodes == 0)
        return dr_err_set(err, DR_EINVAL, "gpu_milli: a share needs nodes >= 1");
    if (r->min_gpu_mem_gb < 0)
        return dr_err_set(err, DR_EINVAL, "min_gpu_mem_gb: %g must be >= 0", r->min_gpu_mem_gb);
    return DR_OK;
}

double dr_job_work_done(const dr_job_t *j, dr_time_t now)
{
    double done = j->work_done;
    if (j->work_rate > 0 && now > j->work_t)
        done += j->work_rate * dr_time_to_s(now - j->work_t);
    return done;
}

double dr_job_ckpt_progress(const dr_job_t *j, dr_time_t now)
{
    if (!(j->work_rate > 0) || now <= j->work_t || j->ckpt_every <= 0)
        return j->work_done;
    dr_time_t ran = now - j->work_t;
    dr_time_t saved = ran / j->ckpt_every * j->ckpt_every;
    return j->work_done + j->work_rate * dr_time_to_s(saved);
}

double dr_job_lost_s(const dr_job_t *j, dr_time_t now)
{
    if ((j->state != DR_JOB_RUNNING && j->state != DR_JOB_STARTING) || now <= j->start)
        return 0;
    dr_time_t ran = now - j->start;
    return dr_time_to_s(j->ckpt_every > 0 ? ran % j->ckpt_every : ran);
}

void dr_job_set_rate(dr_job_t *j, dr_time_t now, double rate)
{
    if (j->work_rate > 0 && now > j->work_t) {
        j->work_done += j->work_rate * dr_time_to_s(now - j->work_t);
    }
    j->work_t = now;
    j->work_rate = rate;
}

void dr_alloc_free(dr_alloc_t *a)
{
    free(a->slots);
    memset(a, 0, sizeof *a);
}

int dr_alloc_copy(dr_alloc_t *dst, const dr_alloc_t *src)
{
    *dst = *src;
    dst->slots = NULL;
    if (src->nslots) {
        dst->slots = malloc(src->nslots * sizeof *dst->slots);
        if (!dst->slots)
            return DR_ENOMEM;
        memcpy(dst->slots, src->slots, src->nslots * sizeof *dst->slots);
    }
    return DR_OK;
}

uint64_t dr_alloc_milli(const dr_alloc_t *a)
{
    uint64_t m = 0;
    for (uint32_t i = 0; i < a->nslots; i++)
        m += a->slots[i].milli;
    return m;
}

uint64_t dr_job_req_milli(const dr_job_req_t *r)
{
    return r->nodes ? (uint64_t)r->nodes * r->gpus_per_node * r->gpu_milli
                    : (uint64_t)r->gpus_per_node * 1000;
}

/* Array limits: the largest index, and the most tasks one spec makes. */
#define ARRAY_MAX_INDEX 10000000
#define ARRAY_MAX_TASKS 1000000

/* A decimal number at *p for the part of the spec named what ("range
 * start", "step"...): digits only, and it must fit in 64 bits. */
static int array_num(const char *spec, const char **p, const char *what, uint64_t *out,
                     dr_err_t *err)
{
    const char *s = *p;
    if (!isdigit((unsigned char)*s))
        return *s ? dr_err_set(err, DR_EINVAL, "array '%s': expected a number for the %s at '%s'",
                               spec, what, s)
                  : dr_err_set(err, DR_EINVAL,
                               "array '%s': expected a number for the %s at the end", spec, what);
    uint64_t v = 0;
    for (; isdigit((unsigned char)*s); s++) {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) {
            size_t len = 0;
            while (isdigit((unsigned char)(*p)[len]))
                len++;
            return dr_err_set(err, DR_EINVAL, "array '%s': %s '%.*s' is too large (over 64 bits)",
                              spec, what, (int)(len > 40 ? 40 : len), *p);
        }
        v = v * 10 + d;
    }
    *p = s;
    *out = v;
    return DR_OK;
}

/* "0-99", "1,3,5-7", "0-999:4", each optionally followed by "%N".  The
 * arithmetic cannot wrap: a range's task count is (end - start) / step + 1
 * with end bounded, checked against the task limit before anything is
 * allocated, and a step past the end gives the start alone. */
int dr_array_parse(const char *spec, uint32_t **idx, size_t *n, uint32_t *throttle, dr_err_t *err)
{
    const char *p = spec;
    size_t cap = *n;
    int rc;
    *throttle = 0;
    if (!p || !*p)
        return dr_err_set(err, DR_EINVAL, "array: empty range");
    for (;;) {
        uint64_t a = 0, b, step = 1;
        if ((rc = array_num(spec, &p, "range start", &a, err)) != 0)
            return rc;
        b = a;
        if (*p == '-') {
            p++;
            if ((rc = array_num(spec, &p, "range end", &b, err)) != 0)
                return rc;
            if (*p == ':') {
                p++;
                if ((rc = array_num(spec, &p, "step", &step, err)) != 0)
                    return rc;
                if (step == 0)
                    return dr_err_set(err, DR_EINVAL, "array '%s': step must be >= 1", spec);
            }
        }
        if (b < a)
            return dr_err_set(err, DR_EINVAL, "array '%s': range %llu-%llu is descending", spec,
                              (unsigned long long)a, (unsigned long long)b);
        if (b > ARRAY_MAX_INDEX)
            return dr_err_set(err, DR_ELIMIT, "array '%s': index %llu is above the limit %d", spec,
                              (unsigned long long)b, ARRAY_MAX_INDEX);
        uint64_t count = (b - a) / step + 1; /* b - a <= ARRAY_MAX_INDEX, step >= 1 */
        if (*n > ARRAY_MAX_TASKS || count > ARRAY_MAX_TASKS - *n)
            return dr_err_set(err, DR_ELIMIT, "array '%s': more than %d tasks", spec,
                              ARRAY_MAX_TASKS);
        if (dr_grow((void **)idx, &cap, *n + (size_t)count, sizeof **idx) != 0)
            return dr_err_set(err, DR_ENOMEM, "array: out of memory");
        for (uint64_t k = 0; k < count; k++) /* k * step <= b - a: no overflow */
            (*idx)[(*n)++] = (uint32_t)(a + k * step);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '%') {
            p++;
            uint64_t t = 0;
            if ((rc = array_num(spec, &p, "throttle", &t, err)) != 0)
                return rc;
            if (t == 0)
                return dr_err_set(err, DR_EINVAL, "array '%s': throttle must be >= 1", spec);
            if (t > UINT32_MAX)
                return dr_err_set(err, DR_EINVAL, "array '%s': throttle %llu is above %lu", spec,
                                  (unsigned long long)t, (unsigned long)UINT32_MAX);
            *throttle = (uint32_t)t;
        }
        if (*p)
            return dr_err_set(err, DR_EINVAL, "array '%s': unexpected '%s'", spec, p);
        return DR_OK;
    }
}
