/* admit.h - the site's rules for a submit (admit.c). */
#ifndef DROVER_CTLD_ADMIT_H
#define DROVER_CTLD_ADMIT_H

#include "ctld/ctld.h"
#include "ctld/http.h"

/* admit.c: the site's rules for a submit, each answering the HTTP status
 * to refuse with (0: admitted) and why in err.  Who (403: no account,
 * root without AllowRootJobs=), the request's sizes (413: script, env,
 * argv) and what the user already holds (429: bytes in unended jobs,
 * pending jobs, an array one until its tasks start; bytes: the new
 * submit's). */
int ctld_admit_user(const dr_ctld_t *c, const ctld_who_t *who, dr_err_t *err);
int ctld_admit_size(const dr_ctld_t *c, const dr_jobspec_t *sp, dr_err_t *err);
int ctld_admit_quota(const dr_ctld_t *c, const char *user, uint64_t bytes, dr_err_t *err);

#endif
