/* testutil.h - helpers shared by the unit tests. */
#ifndef DROVER_TESTUTIL_H
#define DROVER_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>

#include "drover/cluster.h"
#include "drover/sim.h"
#include "drover/workload.h"

/* Path under the source tree / the read-only shared data (static buffer). */
const char *tu_src_path(const char *rel);
const char *tu_shared_path(const char *rel);
/* True if the shared data directory is present (tests that need it skip otherwise). */
bool tu_have_shared(void);
/* Read a whole file (aborts the test on failure). */
char *tu_read(const char *path, size_t *len);
/* Assert that haystack contains needle, printing both when it does not. */
#define tu_assert_contains(hay, needle) tu_assert_contains_(hay, needle, __FILE__, __LINE__)
void tu_assert_contains_(const char *hay, const char *needle, const char *file, int line);

/* A cluster from config text, with the built-in catalog (fails the test on
 * a config error, naming it). */
void tu_cluster(dr_cluster_t *c, const char *conf);
/* Finish a workload built job by job and bind it to the cluster. */
void tu_workload_ready(dr_workload_t *wl, const dr_cluster_t *c);
/* Append a job of nodes x gpn GPUs (nodes 0: --gpus=gpn) that really runs
 * `run` seconds (class 0), declares `declared` and has a walltime limit of
 * `limit` seconds (0 = none), on the GPU types `types` (NULL = any). */
dr_job_t *tu_add_job(dr_workload_t *wl, uint64_t id, double submit, uint32_t nodes, uint32_t gpn,
                     double run, double declared, double limit, const char *types);
/* Simulate wl on c with one policy, the ledger audited after every pass. */
void tu_sim(const dr_cluster_t *c, const dr_workload_t *wl, const char *policy,
            dr_sim_result_t *res);
/* The job with this id in a result (fails the test if there is none). */
const dr_job_t *tu_job(const dr_sim_result_t *r, uint64_t id);

/* dr_cluster_audit over n live allocations (fails the test, naming the
 * step, when the ledger and the allocations disagree). */
void tu_audit(const dr_cluster_t *c, const dr_alloc_t *live, size_t n, int step);
/* Give every allocation back and check that every GPU is free again. */
void tu_give_all(dr_cluster_t *c, dr_alloc_t *live, size_t n);

#endif
