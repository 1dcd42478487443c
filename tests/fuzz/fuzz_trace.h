/* fuzz_trace.h - the body every trace-reader fuzz target shares: parse the
 * bytes as format f, strict and lenient, bind what parsed to an empty
 * cluster, derive declarations, and free everything (the ASan build checks for leaks). */
#ifndef DROVER_FUZZ_TRACE_H
#define DROVER_FUZZ_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "drover/cluster.h"
#include "drover/declare.h"
#include "drover/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* gavel: the throughput matrix Gavel traces need (NULL for other formats) */
static inline void fuzz_trace(dr_trace_format_t f, const dr_perf_table_t *gavel,
                              const uint8_t *data, size_t size)
{
    for (int lenient = 0; lenient < 2; lenient++) {
        dr_trace_opts_t o;
        dr_trace_opts_default(&o);
        o.lenient = lenient;
        o.max_jobs = 5000;
        o.gavel_throughputs = gavel;
        dr_workload_t wl;
        dr_workload_init(&wl);
        dr_err_t err = {0};
        if (dr_trace_parse(f, "fuzz", (const char *)data, size, &o, &wl, &err) == 0) {
            dr_cluster_t c;
            dr_cluster_init(&c);
            dr_workload_bind(&wl, &c, true, &err);
            /* what a user would declare, from whatever sizes parsed */
            dr_declare_opts_t d;
            dr_declare_opts_default(&d);
            d.mode = lenient ? DR_SIZE_LOGNORMAL : DR_SIZE_TRACE;
            dr_workload_declare(&wl, &d, &err);
            dr_cluster_free(&c);
        }
        dr_workload_free(&wl);
    }
}

#endif
