/* test_only.h - POST /v1/jobs?test_only=1 (test_only.c). */
#ifndef DROVER_CTLD_TEST_ONLY_H
#define DROVER_CTLD_TEST_ONLY_H

#include "ctld/ctld.h"

/* test_only.c: answer a checked, never-inserted submit with when and where
 * it would start (POST /v1/jobs?test_only=1); cj stays the caller's. */
void ctld_test_only(dr_ctld_t *c, struct evhttp_request *req, const ctld_job_t *cj, dr_time_t now);
/* The answer for a request the cluster can never hold (why: the check's
 * message). */
void ctld_test_only_never(struct evhttp_request *req, const char *why);

#endif
