/* fuzz_joblist.c - libFuzzer target: read an arbitrary job listing
 * (GET /v1/jobs?format=tsv) as `drover queue` does, and abort() unless a
 * failure says why and every row read is whole (DR_JL_NCOLS fields) and
 * survives being written and read again: one line within its bound, the
 * strings unchanged (the escapes undone exactly), the same line again. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drover/joblist.h"

#define HL (sizeof DR_JOBLIST_HEADER - 1)

/* The row of parsed fields, written after the header into a new buffer
 * (*len: header and row). */
static char *write_row(char *const *f, size_t *len)
{
    dr_joblist_row_t r = {0};
    size_t k = strlen(f[DR_JL_ID]);
    if (k >= sizeof r.id)
        abort(); /* N or N_I, at most 20 digits each */
    memcpy(r.id, f[DR_JL_ID], k + 1);
    r.name = f[DR_JL_NAME];
    r.user = f[DR_JL_USER];
    r.kind = f[DR_JL_KIND];
    r.state = f[DR_JL_STATE];
    r.gpus = strtoull(f[DR_JL_GPUS], NULL, 10);
    r.gpu_type = f[DR_JL_TYPE];
    r.nodelist = f[DR_JL_NODES];
    r.time_s = strcmp(f[DR_JL_TIME], "-") == 0 ? NAN : strtod(f[DR_JL_TIME], NULL);
    r.reason = f[DR_JL_REASON];
    size_t max = dr_joblist_row_max(&r);
    char *out = malloc(HL + max);
    if (!out)
        abort();
    memcpy(out, DR_JOBLIST_HEADER, HL);
    size_t n = dr_joblist_row_write(&r, out + HL);
    if (n > max || n == 0 || memchr(out + HL, '\n', n) != out + HL + n - 1)
        abort(); /* one line, within the bound */
    *len = HL + n;
    return out;
}

typedef struct again {
    char *const *want; /* the fields first read */
    const char *line;  /* and written */
    size_t len, rows;
} again_t;

static int read_again(void *ud, char *const *f)
{
    again_t *a = ud;
    static const int strs[] = {DR_JL_ID,    DR_JL_NAME, DR_JL_USER,  DR_JL_KIND,
                               DR_JL_STATE, DR_JL_TYPE, DR_JL_NODES, DR_JL_REASON};
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
        if (strcmp(f[strs[i]], a->want[strs[i]]) != 0)
            abort();
    size_t len;
    char *again = write_row(f, &len);
    if (len != a->len || memcmp(again, a->line, len) != 0)
        abort();
    free(again);
    a->rows++;
    return 0;
}

static int check_row(void *ud, char *const *f)
{
    (void)ud;
    for (size_t k = 0; k < DR_JL_NCOLS; k++)
        if (!f[k])
            abort();
    size_t len;
    char *line = write_row(f, &len);
    char *copy = malloc(len);
    if (!copy)
        abort();
    memcpy(copy, line, len);
    again_t a = {f, line, len, 0};
    bool trunc = true;
    dr_err_t err = {0};
    if (dr_joblist_parse(copy, len, read_again, &a, &trunc, &err) != DR_OK || a.rows != 1 || trunc)
        abort();
    free(copy);
    free(line);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    bool trunc = false;
    dr_err_t err = {0};
    int rc = dr_joblist_parse(buf, size, check_row, NULL, &trunc, &err);
    if (rc != DR_OK && (rc != DR_EINVAL || err.msg[0] == '\0'))
        abort(); /* a malformed listing is refused, and says why */
    free(buf);
    return 0;
}
