/* fuzz_trace_openb.c - libFuzzer target: the openb pod-list reader on arbitrary
 * bytes (fuzz_trace.h). */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_trace(DR_TRACE_OPENB, NULL, data, size);
    return 0;
}
