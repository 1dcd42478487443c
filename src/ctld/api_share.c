/* api_share.c - GET /v1/share: fair share per account, like Slurm's
 * sshare (docs/api.md).
 *
 * One row per account the config declares, in config order, then one for
 * jobs with no declared account (account null) once it has used GPUs or
 * has jobs waiting: raw and normalised shares, usage in GPU-hours (raw and
 * decayed over the half-life), effective usage (its part of all decayed
 * usage), the fair-share factor 2^(-effective / normalised shares) as of
 * now, running GPUs and pending jobs against the account's limits, and
 * where budgets are set what it spent today and this month and what its
 * running jobs may still spend.  The
 * figures are the scheduler core's (sched.h); everyone may read them, as
 * the jobs listing. */
#include <math.h>
#include <stdlib.h>

#include <event2/http.h>
#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/accounts.h"
#include "ctld/api.h"
#include "ctld/http.h"

static json_t *limit(int64_t v)
{
    return v == DR_ACCT_NO_LIMIT ? json_null() : json_integer((json_int_t)v);
}

void ctld_api_share(dr_ctld_t *c, struct evhttp_request *req, const ctld_who_t *who)
{
    (void)who;
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        ctld_reply_error(req, 405, NULL, "use GET");
        return;
    }
    size_t n = dr_sched_share_count(c->sched);
    dr_share_info_t *in = malloc(n * sizeof *in);
    json_t *rows = json_array();
    if (!in || !rows) {
        free(in);
        json_decref(rows);
        ctld_reply_error(req, 503, NULL, "out of memory");
        return;
    }
    dr_time_t now = ctld_now(c);
    dr_sched_share_all(c->sched, now, in);
    for (size_t k = 0; k < n; k++) {
        const dr_account_t *a = k < c->cl.naccounts ? &c->cl.accounts[k] : NULL;
        uint64_t queued = ctld_account_queued(c, a ? (int)k : -1);
        if (!a && !(in[k].norm_shares > 0) && !(in[k].raw_gpu_s > 0) && !queued &&
            !in[k].running_milli)
            continue; /* no job without an account has come yet */
        json_t *row = json_pack(
            "{s:o,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:o,s:I,s:o}", "account",
            a ? json_string(a->name) : json_null(), "shares", in[k].shares, "norm_shares",
            in[k].norm_shares, "raw_usage_gpu_hours", in[k].raw_gpu_s / 3600.0,
            "decayed_usage_gpu_hours", in[k].decayed_gpu_s / 3600.0, "effective_usage",
            in[k].effective, "fairshare", in[k].factor, "running_gpus",
            (double)in[k].running_milli / 1000.0, "max_running_gpus",
            a ? limit(a->max_running_gpus) : json_null(), "queued_jobs", (json_int_t)queued,
            "max_queued_jobs", a ? limit(a->max_queued_jobs) : json_null());
        dr_budget_info_t b;
        if (row && a && dr_sched_budget(c->sched, (int)k, now, &b)) {
            /* budgets: spent this UTC day / calendar month, what its running
             * jobs may still spend up to their limits */
            json_object_set_new(row, "cost_today_usd", json_real(round(b.spent_day * 1e4) / 1e4));
            json_object_set_new(row, "max_cost_per_day",
                                isinf(a->max_cost_day) ? json_null() : json_real(a->max_cost_day));
            json_object_set_new(row, "cost_month_usd", json_real(round(b.spent_month * 1e4) / 1e4));
            json_object_set_new(row, "max_cost_per_month",
                                isinf(a->max_cost_month) ? json_null()
                                                         : json_real(a->max_cost_month));
            json_object_set_new(row, "committed_usd", json_real(round(b.committed * 1e4) / 1e4));
        }
        if (row)
            json_array_append_new(rows, row);
    }
    free(in);
    double h = dr_sched_fairshare_half_life_s(c->sched);
    json_t *o =
        json_pack("{s:o,s:o}", "half_life_s", h > 0 ? json_real(h) : json_null(), "accounts", rows);
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(o);
    if (s)
        ctld_reply_json(req, 200, s);
    else
        ctld_reply_error(req, 503, NULL, "out of memory");
    free(s);
}
