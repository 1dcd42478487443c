/* fuzz_trace_gavel.c - libFuzzer target: the Gavel .trace reader on arbitrary
 * bytes (fuzz_trace.h), and the same bytes as a throughput matrix.  The
 * built-in matrix is parsed once and kept (reachable until exit). */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static dr_perf_table_t builtin;
    static int have;
    if (!have) {
        dr_err_t berr = {0};
        if (dr_gavel_throughputs_builtin(&builtin, &berr) != 0)
            return 0;
        have = 1;
    }
    fuzz_trace(DR_TRACE_GAVEL, &builtin, data, size);
    dr_perf_table_t p;
    dr_err_t perr = {0};
    if (dr_gavel_throughputs_parse(&p, "fuzz.csv", (const char *)data, size, &perr) == 0)
        dr_perf_free(&p);
    return 0;
}
