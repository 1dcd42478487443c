/* admit.c - who may submit, and how much one user may hold (the site
 * settings of config_site.c, applied at submit).
 *
 * A job runs with its owner's uid on every node it reaches, so a name
 * without an account on the controller host cannot own one, and uid 0
 * only where the site says AllowRootJobs=YES.  A submit's bytes are held
 * twice by the controller (in memory and in the store) until the job ends:
 * the request's script, environment and argv each have a size limit (413
 * naming it), and a user's unended jobs a total in bytes and a count of
 * pending ones (429 naming it), so that one user cannot exhaust the
 * controller's memory or disk while the others still submit.  Each check
 * answers the HTTP status to refuse with (0: admitted), its reason in err. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ctld/ctld.h"
#include "ctld/admit.h"
#include "ctld/http.h"

static int refuse(dr_err_t *err, int status, const char *fmt, ...) DR_PRINTF(3, 4);
static int refuse(dr_err_t *err, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dr_err_vset(err, status == 403 ? DR_EINVAL : DR_ELIMIT, fmt, ap);
    va_end(ap);
    return status;
}

int ctld_admit_user(const dr_ctld_t *c, const ctld_who_t *who, dr_err_t *err)
{
    if (who->no_account)
        return refuse(err, 403,
                      "user %s has no account on the controller host: a job runs as its "
                      "owner's uid, so a name without one cannot run jobs",
                      who->user);
    if (who->uid == 0 && !c->cl.site.allow_root_jobs)
        return refuse(err, 403,
                      "jobs may not run as root (uid 0) on this cluster: the site's "
                      "AllowRootJobs=NO (the default); submit as an ordinary user, or set "
                      "AllowRootJobs=YES in the cluster config");
    return 0;
}

static uint64_t strv_bytes(char *const *v, uint32_t n)
{
    uint64_t b = 0;
    for (uint32_t i = 0; i < n; i++)
        b += v[i] ? strlen(v[i]) + 1 : 0;
    return b;
}

static int over(dr_err_t *err, const char *what, const char *key, uint64_t have, uint64_t lim)
{
    return refuse(err, 413, "%s: %llu bytes, over the site's limit of %llu bytes (%s=)", what,
                  (unsigned long long)have, (unsigned long long)lim, key);
}

int ctld_admit_size(const dr_ctld_t *c, const dr_jobspec_t *sp, dr_err_t *err)
{
    const dr_site_t *s = &c->cl.site;
    uint64_t b = sp->script ? strlen(sp->script) : 0;
    if (s->max_script_bytes && b > s->max_script_bytes)
        return over(err, "script", "MaxScriptBytes", b, s->max_script_bytes);
    b = strv_bytes(sp->env, sp->nenv);
    if (s->max_env_bytes && b > s->max_env_bytes)
        return over(err, "env", "MaxEnvBytes", b, s->max_env_bytes);
    b = strv_bytes(sp->argv, sp->argc);
    if (s->max_argv_bytes && b > s->max_argv_bytes)
        return over(err, "argv", "MaxArgvBytes", b, s->max_argv_bytes);
    return 0;
}

int ctld_admit_quota(const dr_ctld_t *c, const char *user, uint64_t bytes, dr_err_t *err)
{
    const dr_site_t *s = &c->cl.site;
    if (!s->max_user_bytes && !s->max_user_pending)
        return 0;
    uint64_t held = 0, pending = 0;
    for (size_t i = 0; i < c->tab_cap; i++) {
        const ctld_job_t *cj = c->tab[i];
        if (!cj || cj->parent || ctld_job_terminal(cj) || !cj->user || strcmp(cj->user, user) != 0)
            continue;
        held += cj->spec_bytes;
        /* what waits in memory: an array is one record until its tasks
         * start (each started task is a job of its own, no longer pending) */
        pending += cj->array || cj->j.state == DR_JOB_PENDING;
    }
    if (s->max_user_bytes && held + bytes > s->max_user_bytes)
        return refuse(err, 429,
                      "user %s holds %llu bytes in unended jobs; %llu more would pass the "
                      "site's limit of %llu bytes (MaxUserStoreBytes=)",
                      user, (unsigned long long)held, (unsigned long long)bytes,
                      (unsigned long long)s->max_user_bytes);
    if (s->max_user_pending && pending + 1 > s->max_user_pending)
        return refuse(err, 429,
                      "user %s has %llu jobs pending; one more would pass the site's limit "
                      "of %llu (MaxUserPendingJobs=)",
                      user, (unsigned long long)pending, (unsigned long long)s->max_user_pending);
    return 0;
}
