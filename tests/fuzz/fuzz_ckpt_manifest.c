/* fuzz_ckpt_manifest.c - libFuzzer target: parse an arbitrary checkpoint
 * manifest; one that parses must hold only safe, sorted, unique paths and
 * format back to exactly the same bytes (the format is canonical), and a
 * failure must say why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dr_ckpt_manifest_t m;
    dr_err_t err = {0};
    if (dr_ckpt_manifest_parse(&m, (const char *)data, size, &err) != DR_OK) {
        if (err.msg[0] == '\0' || m.nfiles != 0 || m.files != NULL)
            abort(); /* a failure says why and leaves nothing behind */
        return 0;
    }
    for (size_t i = 0; i < m.nfiles; i++) {
        if (!dr_ckpt_path_ok(m.files[i].path, strlen(m.files[i].path)))
            abort();
        if (i > 0 && strcmp(m.files[i - 1].path, m.files[i].path) >= 0)
            abort();
    }
    char *text = NULL;
    size_t len = 0;
    if (dr_ckpt_manifest_format(&m, &text, &len, &err) != DR_OK)
        abort(); /* what parses formats */
    if (len != size || memcmp(text, data, size) != 0)
        abort(); /* ... to the same bytes */
    free(text);
    dr_ckpt_manifest_free(&m);
    return 0;
}
