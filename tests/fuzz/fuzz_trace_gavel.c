/* fuzz_trace_gavel.c - libFuzzer target: the Gavel .trace reader on arbitrary
 * bytes, strict and lenient, then binding the result to an empty cluster, and
 * the same bytes as a throughput matrix.  Everything is freed (the ASan build
 * checks for leaks) except the built-in matrix, parsed once and kept. */
#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the built-in matrix, parsed once (reachable until exit, so not a leak) */
    static dr_perf_table_t builtin;
    static int have;
    if (!have) {
        dr_err_t berr = {0};
        if (dr_gavel_throughputs_builtin(&builtin, &berr) != 0)
            return 0;
        have = 1;
    }
    for (int lenient = 0; lenient < 2; lenient++) {
        dr_trace_opts_t o;
        dr_trace_opts_default(&o);
        o.lenient = lenient;
        o.max_jobs = 5000;
        o.walltime_factor = lenient ? 0 : 1.5;
        o.gavel_throughputs = &builtin;
        dr_workload_t wl;
        dr_workload_init(&wl);
        dr_err_t err = {0};
        if (dr_trace_parse(DR_TRACE_GAVEL, "fuzz", (const char *)data, size, &o, &wl, &err) == 0) {
            dr_cluster_t c;
            dr_cluster_init(&c);
            dr_workload_bind(&wl, &c, true, &err);
            dr_cluster_free(&c);
        }
        dr_workload_free(&wl);
    }
    /* the same bytes as a throughput matrix */
    dr_perf_table_t p;
    dr_err_t perr = {0};
    if (dr_gavel_throughputs_parse(&p, "fuzz.csv", (const char *)data, size, &perr) == 0)
        dr_perf_free(&p);
    return 0;
}
