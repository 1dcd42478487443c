/* fuzz_catalog.c - libFuzzer target: parse arbitrary bytes as a GPU catalog
 * CSV (the buffer is not NUL-terminated) and look every row up again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drover/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dr_catalog_t cat;
    dr_err_t err;
    if (dr_catalog_parse(&cat, "fuzz.csv", (const char *)data, size, &err) == 0) {
        for (size_t i = 0; i < cat.n; i++) {
            const dr_gpu_spec_t *g = dr_catalog_find(&cat, cat.gpus[i].name);
            if (g != &cat.gpus[i])
                abort(); /* names are unique, so each finds its own row */
            dr_gpu_spec_t copy;
            if (dr_gpu_spec_copy(&copy, g) == 0)
                dr_gpu_spec_free(&copy);
        }
    } else if (cat.n != 0 || cat.gpus != NULL || err.msg[0] == '\0') {
        abort(); /* a failed parse leaves an empty catalog and a message */
    }
    dr_catalog_free(&cat);
    return 0;
}
