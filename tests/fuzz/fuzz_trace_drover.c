/* fuzz_trace_drover.c - libFuzzer target: drover's native CSV reader on arbitrary
 * bytes (fuzz_trace.h). */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_trace(DR_TRACE_DROVER, NULL, data, size);
    return 0;
}
