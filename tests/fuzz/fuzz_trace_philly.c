/* fuzz_trace_philly.c - libFuzzer target: the Philly job-list reader on arbitrary
 * bytes (fuzz_trace.h). */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_trace(DR_TRACE_PHILLY, NULL, data, size);
    return 0;
}
