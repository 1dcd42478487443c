/* job.c - the job model: names, the checked state machine, request
 * validation, work/progress accounting and Slurm array ranges. */
#include "drover/job.h"

#include <ctype.h>
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

/* "0-99", "1,3,5-7", "0-999:4", each optionally followed by "%N". */
int dr_array_parse(const char *spec, uint32_t **idx, size_t *n, uint32_t *throttle, dr_err_t *err)
{
    const char *p = spec;
    size_t cap = *n;
    *throttle = 0;
    if (!p || !*p)
        return dr_err_set(err, DR_EINVAL, "array: empty range");
    for (;;) {
        char *end;
        if (!isdigit((unsigned char)*p))
            return dr_err_set(err, DR_EINVAL, "array '%s': expected a number at '%s'", spec, p);
        unsigned long a = strtoul(p, &end, 10), b = a, step = 1;
        p = end;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p))
                return dr_err_set(err, DR_EINVAL, "array '%s': expected a number after '-'", spec);
            b = strtoul(p, &end, 10);
            p = end;
            if (*p == ':') {
                p++;
                if (!isdigit((unsigned char)*p))
                    return dr_err_set(err, DR_EINVAL, "array '%s': expected a step after ':'",
                                      spec);
                step = strtoul(p, &end, 10);
                p = end;
                if (step == 0)
                    return dr_err_set(err, DR_EINVAL, "array '%s': step must be >= 1", spec);
            }
        }
        if (b < a)
            return dr_err_set(err, DR_EINVAL, "array '%s': range %lu-%lu is descending", spec, a,
                              b);
        if (b > 10000000 || (b - a) / step + 1 + *n > 1000000)
            return dr_err_set(err, DR_ELIMIT, "array '%s': more than 1000000 tasks", spec);
        for (unsigned long i = a; i <= b; i += step)
            if (DR_PUSH(*idx, *n, cap, (uint32_t)i) != 0)
                return dr_err_set(err, DR_ENOMEM, "array: out of memory");
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '%') {
            p++;
            if (!isdigit((unsigned char)*p))
                return dr_err_set(err, DR_EINVAL, "array '%s': expected a number after '%%'", spec);
            unsigned long t = strtoul(p, &end, 10);
            p = end;
            if (t == 0 || t > UINT32_MAX)
                return dr_err_set(err, DR_EINVAL, "array '%s': throttle must be >= 1", spec);
            *throttle = (uint32_t)t;
        }
        if (*p)
            return dr_err_set(err, DR_EINVAL, "array '%s': unexpected '%s'", spec, p);
        return DR_OK;
    }
}
