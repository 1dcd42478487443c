/* fuzz_plan_model.c - libFuzzer target for the planner's parsers and the
 * performance model behind them.  Input: a model specification on the first
 * line, a count ("7B") on the second, a duration ("18mo") on the third.
 * Whatever parses is run through the training and serving estimates, and
 * abort() unless the results are consistent: an error always says why, a
 * fit has finite positive throughput within the GPU's memory, a non-fit has
 * zero throughput and a reason. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drover/catalog.h"
#include "drover/perfmodel.h"
#include "drover/plan.h"

static dr_catalog_t cat;
static bool have_cat;

/* Copy line k (0-based) of data into buf; false if absent. */
static bool line(const uint8_t *d, size_t n, int k, char *buf, size_t cap)
{
    size_t i = 0;
    for (int l = 0; l < k; l++) {
        while (i < n && d[i] != '\n')
            i++;
        if (i >= n)
            return false;
        i++;
    }
    size_t j = i;
    while (j < n && d[j] != '\n')
        j++;
    size_t len = j - i < cap - 1 ? j - i : cap - 1;
    memcpy(buf, d + i, len);
    buf[len] = '\0';
    return true;
}

static void check_train(const dr_perfmodel_arch_t *a, const char *gpu, uint32_t gpus)
{
    const dr_gpu_spec_t *g = dr_catalog_find(&cat, gpu);
    if (!g)
        abort();
    dr_perfmodel_train_t j;
    dr_perfmodel_train_init(&j);
    j.arch = *a;
    j.tokens = 1e9;
    dr_perfmodel_train_est_t e;
    dr_err_t err = {0};
    if (dr_perfmodel_train_best(&j, g, gpus, NULL, &e, &err) != 0) {
        if (!err.msg[0])
            abort();
        return;
    }
    if (e.fits) {
        if (!(e.tokens_per_s > 0) || !isfinite(e.tokens_per_s) || !(e.step_s > 0) ||
            e.mem.total > e.mem.capacity * (1 + 1e-9) ||
            (uint64_t)e.layout.tp * (e.layout.cp ? e.layout.cp : 1) * e.layout.pp * e.layout.dp !=
                gpus ||
            !(e.wall_s > 0))
            abort();
    } else if (e.tokens_per_s != 0 || !e.reason[0]) {
        abort();
    }
}

static void check_serve(const dr_perfmodel_arch_t *a)
{
    dr_perfmodel_serve_t s;
    dr_perfmodel_serve_init(&s);
    s.arch = *a;
    dr_perfmodel_serve_est_t e;
    dr_err_t err = {0};
    if (dr_perfmodel_serve_eval(&s, dr_catalog_find(&cat, "H100"), 1, 0, NULL, &e, &err) != 0) {
        if (!err.msg[0])
            abort();
        return;
    }
    if (e.fits && (!(e.tokens_per_s > 0) || !isfinite(e.latency_s) || e.concurrency < 1))
        abort();
    if (!e.fits && !e.reason[0])
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!have_cat) {
        dr_err_t err;
        if (dr_catalog_builtin(&cat, &err) != 0)
            abort();
        have_cat = true;
    }
    char buf[512];
    if (line(data, size, 0, buf, sizeof buf)) {
        dr_perfmodel_arch_t a;
        dr_err_t err = {0};
        if (dr_plan_model_parse(buf, &a, &err) == 0) {
            if (!a.layers || !a.hidden || !a.heads || !(a.params > 0))
                abort();
            /* keep the estimate cheap: the search is linear in the layers */
            if (a.layers <= 4096) {
                check_train(&a, "H100", 8);
                check_train(&a, "A100", 1);
                check_serve(&a);
            }
        } else if (!err.msg[0]) {
            abort();
        }
    }
    if (line(data, size, 1, buf, sizeof buf)) {
        double v;
        if (dr_plan_parse_count(buf, &v) == 0 && (!isfinite(v) || v < 0))
            abort();
    }
    if (line(data, size, 2, buf, sizeof buf)) {
        double v;
        if (dr_plan_parse_duration(buf, &v) == 0 && (!isfinite(v) || v < 0))
            abort();
    }
    return 0;
}
