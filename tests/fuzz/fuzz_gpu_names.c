/* fuzz_gpu_names.c - libFuzzer target: arbitrary bytes as a driver's GPU
 * product name, mapped to a catalog type.  The answer is a catalog row's
 * name or nothing, and does not depend on letter case. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/gpu.h"
#include "drover/catalog.h"

static dr_catalog_t cat;
static int loaded;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!loaded) {
        if (dr_catalog_builtin(&cat, NULL) != 0)
            abort();
        loaded = 1;
    }
    if (size > 512)
        return 0;
    char product[513], upper[513];
    memcpy(product, data, size);
    product[size] = '\0';
    for (size_t i = 0; i <= size; i++)
        upper[i] = (char)toupper((unsigned char)product[i]);

    char type[DR_GPU_NAME_MAX], type2[DR_GPU_NAME_MAX];
    int rc = dr_gpu_type_from_product_cat(&cat, product, type, sizeof type);
    int rc2 = dr_gpu_type_from_product_cat(&cat, upper, type2, sizeof type2);
    if (rc != rc2 || strcmp(type, type2) != 0)
        abort(); /* case must not matter */
    if (rc == DR_OK) {
        const dr_gpu_spec_t *g = dr_catalog_find(&cat, type);
        if (!g || strcmp(g->name, type) != 0)
            abort(); /* a canonical catalog name */
    } else if (rc != DR_ENOENT || type[0] != '\0') {
        abort();
    }
    char small[4];
    rc2 = dr_gpu_type_from_product_cat(&cat, product, small, sizeof small);
    if (rc == DR_OK ? rc2 != DR_EINVAL : rc2 != DR_ENOENT)
        abort(); /* no catalog name fits in 3 characters */
    return 0;
}
