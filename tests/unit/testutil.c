/* testutil.c - helpers shared by the unit tests. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "drover/config.h"
#include "drover/util.h"

const char *tu_src_path(const char *rel)
{
    static char buf[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", DROVER_SOURCE_DIR, rel);
    return buf[k];
}

const char *tu_shared_path(const char *rel)
{
    static char buf[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", DROVER_SHARED_DIR, rel);
    return buf[k];
}

bool tu_have_shared(void)
{
    struct stat st;
    return stat(DROVER_SHARED_DIR "/data", &st) == 0;
}

char *tu_read(const char *path, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    dr_err_t err = {0};
    if (dr_read_file(path, &buf, &n, &err) != 0)
        fail_msg("cannot read %s: %s", path, err.msg);
    if (len)
        *len = n;
    return buf;
}

void tu_assert_contains_(const char *hay, const char *needle, const char *file, int line)
{
    if (!hay || !strstr(hay, needle))
        _fail(file, line),
            print_error("expected \"%s\" to contain \"%s\"\n", hay ? hay : "(null)", needle);
}

void tu_cluster(dr_cluster_t *c, const char *conf)
{
    dr_catalog_t cat;
    dr_err_t err;
    assert_int_equal(dr_catalog_builtin(&cat, &err), DR_OK);
    dr_cluster_init(c);
    if (dr_config_parse(c, &cat, "test.conf", conf, strlen(conf), &err) != DR_OK)
        fail_msg("%s", err.msg);
    dr_catalog_free(&cat);
}

void tu_workload_ready(dr_workload_t *wl, const dr_cluster_t *c)
{
    dr_err_t err;
    if (dr_workload_finish(wl, &err) != DR_OK || dr_workload_bind(wl, c, false, &err) != DR_OK)
        fail_msg("%s", err.msg);
}

void tu_sim(const dr_cluster_t *c, const dr_workload_t *wl, const char *policy,
            dr_sim_result_t *res)
{
    dr_sim_opts_t o;
    dr_sim_opts_default(&o);
    o.policy = policy;
    o.audit = true;
    dr_err_t err;
    if (dr_sim_run(c, wl, &o, res, &err) != DR_OK)
        fail_msg("%s: %s", policy, err.msg);
}

dr_job_t *tu_add_job(dr_workload_t *wl, uint64_t id, double submit, uint32_t nodes, uint32_t gpn,
                     double run, double declared, double limit, const char *types)
{
    dr_job_t j;
    dr_job_init(&j);
    j.id = id;
    j.submit = dr_time_from_s(submit);
    j.req.nodes = nodes;
    j.req.gpus_per_node = gpn;
    j.work_declared = declared;
    j.time_limit = limit > 0 ? dr_time_from_s(limit) : 0;
    assert_int_equal(dr_workload_add(wl, &j, run, types), DR_OK);
    return &wl->jobs[wl->njobs - 1];
}

const dr_job_t *tu_job(const dr_sim_result_t *r, uint64_t id)
{
    for (size_t i = 0; i < r->njobs; i++)
        if (r->jobs[i].id == id)
            return &r->jobs[i];
    fail_msg("no job %llu", (unsigned long long)id);
    return NULL;
}

void tu_audit(const dr_cluster_t *c, const dr_alloc_t *live, size_t n, int step)
{
    const dr_alloc_t **all = malloc((n + 1) * sizeof *all);
    assert_non_null(all);
    for (size_t i = 0; i < n; i++)
        all[i] = &live[i];
    dr_err_t err;
    if (dr_cluster_audit(c, all, n, &err) != DR_OK)
        fail_msg("step %d: %s", step, err.msg);
    free(all);
}

void tu_give_all(dr_cluster_t *c, dr_alloc_t *live, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        dr_cluster_give(c, &live[i]);
        dr_alloc_free(&live[i]);
    }
    assert_int_equal(dr_cluster_free_milli(c, -1), dr_cluster_total_gpus(c, -1) * 1000);
}
