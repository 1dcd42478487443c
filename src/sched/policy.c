/* policy.c - the policy registry and the helpers every policy uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/sched.h"
#include "drover/util.h"
#include "sched/policy_util.h"

extern const dr_policy_ops_t dr_policy_drover;
extern const dr_policy_ops_t dr_policy_fifo;
extern const dr_policy_ops_t dr_policy_backfill;
extern const dr_policy_ops_t dr_policy_sjf;
extern const dr_policy_ops_t dr_policy_srtf;
extern const dr_policy_ops_t dr_policy_gavel_fifo;
extern const dr_policy_ops_t dr_policy_gavel_fifo_perf;
extern const dr_policy_ops_t dr_policy_gavel_mmf;
extern const dr_policy_ops_t dr_policy_gavel_mmf_perf;
extern const dr_policy_ops_t dr_policy_cost;
extern const dr_policy_ops_t dr_policy_fastest;
extern const dr_policy_ops_t dr_policy_cheapest;

static const dr_policy_ops_t *const registry[] = {
    &dr_policy_drover,
    &dr_policy_fifo,
    &dr_policy_backfill,
    &dr_policy_sjf,
    &dr_policy_srtf,
    &dr_policy_gavel_fifo,
    &dr_policy_gavel_fifo_perf,
    &dr_policy_gavel_mmf,
    &dr_policy_gavel_mmf_perf,
    &dr_policy_cost,
    &dr_policy_fastest,
    &dr_policy_cheapest,
    NULL, /* keep one per line (clang-format: trailing comment) */
};

/* Other names users type for the same policies. */
static const struct {
    const char *alias, *name;
} aliases[] = {{"easy", "backfill"},
               {"easy_backfill", "backfill"},
               {"fcfs", "fifo"},
               {"las", "max_min_fairness"},
               {"las_perf", "max_min_fairness_perf"},
               {"gavel", "max_min_fairness_perf"}};

const dr_policy_ops_t *const *dr_policy_list(void)
{
    return registry;
}

const dr_policy_ops_t *dr_policy_find(const char *name)
{
    for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
        if (dr_streq_ci(name, aliases[i].alias))
            name = aliases[i].name;
    for (size_t i = 0; registry[i]; i++)
        if (dr_streq_ci(registry[i]->name, name))
            return registry[i];
    return NULL;
}

const char *dr_policy_names_joined(void)
{
    static char buf[512];
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; registry[i]; i++)
        n += (size_t)snprintf(buf + n, n < sizeof buf ? sizeof buf - n : 0, "%s%s", i ? ", " : "",
                              registry[i]->name);
    return buf;
}

int dr_policy_try_start(const dr_sched_view_t *v, dr_job_t *j)
{
    dr_typemask_t allowed = j->req.gpus_per_node ? dr_perf_runnable(v->perf, v->cluster, j) : 0;
    if (j->req.gpus_per_node && !allowed)
        return DR_ENOSPC;
    dr_alloc_t a;
    int rc = dr_place(v->cluster, &j->req, allowed, v->place, &a);
    if (rc != DR_OK)
        return rc;
    return dr_sched_decide_start(v->sched, j, &a);
}

int dr_policy_opts_each(const char *opts,
                        int (*fn)(void *ud, const char *k, const char *v, dr_err_t *err), void *ud,
                        dr_err_t *err)
{
    if (!opts || !*opts)
        return DR_OK;
    char *copy = dr_strdup(opts), *save = NULL;
    if (!copy)
        return dr_err_set(err, DR_ENOMEM, "out of memory");
    int rc = DR_OK;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == DR_OK;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            rc = dr_err_set(err, DR_EINVAL, "option '%s': expected key=value", tok);
            break;
        }
        *eq = '\0';
        rc = fn(ud, tok, eq + 1, err);
    }
    free(copy);
    return rc;
}
