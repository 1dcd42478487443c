/* fuzz_trace_philly.c - libFuzzer target: the Philly job-list reader on arbitrary bytes, strict
 * and lenient, then binding the result to an empty cluster; everything is
 * freed (the ASan build checks for leaks). */
#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int lenient = 0; lenient < 2; lenient++) {
        dr_trace_opts_t o;
        dr_trace_opts_default(&o);
        o.lenient = lenient;
        o.max_jobs = 5000;
        o.walltime_factor = lenient ? 0 : 1.5;
        dr_workload_t wl;
        dr_workload_init(&wl);
        dr_err_t err = {0};
        if (dr_trace_parse(DR_TRACE_PHILLY, "fuzz", (const char *)data, size, &o, &wl, &err) == 0) {
            dr_cluster_t c;
            dr_cluster_init(&c);
            dr_workload_bind(&wl, &c, true, &err);
            dr_cluster_free(&c);
        }
        dr_workload_free(&wl);
    }
    return 0;
}
