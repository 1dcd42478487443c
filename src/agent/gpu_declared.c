/* gpu_declared.c - the declared fallback and the order of the sources.
 *
 * Discovery asks NVML, then ROCm SMI; a source that is absent or sees no
 * device (DR_ENOENT) hands over to the next, with the reason kept as a note
 * for the agent's log.  A source that loaded but failed (DR_EIO) ends
 * discovery: a broken driver must not be papered over by the declaration,
 * or the controller would place jobs on GPUs nobody can use.  When no
 * driver answers, the GPUs the config declares for the node stand in; with
 * none declared the node is CPU-only, which is not an error. */
#include "agent/gpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/gpu_priv.h"

int dr_gpu_list_alloc(dr_gpu_list_t *l, size_t n, const char *source, dr_err_t *err)
{
    memset(l, 0, sizeof *l);
    l->source = source;
    if (n == 0)
        return DR_OK;
    l->gpus = calloc(n, sizeof *l->gpus);
    if (!l->gpus) {
        dr_err_set(err, DR_ENOMEM, "gpu: out of memory for %zu GPUs", n);
        return DR_ENOMEM;
    }
    l->n = n;
    for (size_t i = 0; i < n; i++) {
        l->gpus[i].index = (uint32_t)i;
        l->gpus[i].numa = -1;
    }
    return DR_OK;
}

void dr_gpu_strcpy(char *dst, size_t cap, const char *src)
{
    if (cap == 0)
        return;
    size_t n = strlen(src);
    if (n > cap - 1)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void dr_gpu_note(char *note, size_t cap, const char *fmt, ...)
{
    if (!note || cap == 0)
        return;
    size_t len = strnlen(note, cap - 1);
    note[len] = '\0';
    if (len > 0 && len + 2 < cap) {
        memcpy(note + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note + len, cap - len, fmt, ap);
    va_end(ap);
}

void dr_gpu_list_free(dr_gpu_list_t *l)
{
    if (!l)
        return;
    free(l->gpus);
    l->gpus = NULL;
    l->n = 0;
}

int dr_gpu_declared(const char *type, uint32_t n, uint64_t mem_mb, dr_gpu_list_t *out,
                    dr_err_t *err)
{
    memset(out, 0, sizeof *out);
    out->source = "declared";
    if (n == 0)
        return DR_OK;
    if (!type || !type[0])
        return dr_err_set(err, DR_EINVAL, "gpu: %u GPUs declared without a type", n);
    if (strlen(type) >= sizeof out->gpus[0].name)
        return dr_err_set(err, DR_EINVAL, "gpu: declared type '%.40s...' is too long", type);
    int rc = dr_gpu_list_alloc(out, n, "declared", err);
    if (rc != DR_OK)
        return rc;
    for (uint32_t i = 0; i < n; i++) {
        dr_gpu_strcpy(out->gpus[i].name, sizeof out->gpus[i].name, type);
        out->gpus[i].mem_mb = mem_mb;
    }
    return DR_OK;
}

typedef int (*gpu_source_fn)(const char *lib_path, dr_gpu_list_t *out, dr_err_t *err);

/* Try one driver: DR_OK (found), DR_ENOENT (try the next, noted) or the
 * source's error. */
static int try_source(const char *name, gpu_source_fn fn, const char *path, dr_gpu_list_t *out,
                      char *note, size_t note_len, dr_err_t *err)
{
    if (path && !path[0]) {
        dr_gpu_note(note, note_len, "%s: skipped", name);
        return DR_ENOENT;
    }
    dr_err_t e = {0};
    int rc = fn(path, out, &e);
    if (rc == DR_ENOENT)
        dr_gpu_note(note, note_len, "%s", e.msg);
    else if (rc != DR_OK)
        dr_err_set(err, rc, "%s", e.msg);
    return rc;
}

int dr_gpu_discover(const dr_gpu_opts_t *o, dr_gpu_list_t *out, char *note, size_t note_len,
                    dr_err_t *err)
{
    static const dr_gpu_opts_t defaults = {0};
    if (!o)
        o = &defaults;
    memset(out, 0, sizeof *out);
    if (note && note_len)
        note[0] = '\0';

    int rc = try_source("nvml", dr_gpu_nvml_discover, o->nvml_path, out, note, note_len, err);
    if (rc != DR_ENOENT)
        return rc;
    rc = try_source("rocm", dr_gpu_rocm_discover, o->rocm_path, out, note, note_len, err);
    if (rc != DR_ENOENT)
        return rc;

    rc = dr_gpu_declared(o->declared_type, o->declared_n, o->declared_mem_mb, out, err);
    if (rc != DR_OK)
        return rc;
    if (o->declared_n > 0)
        dr_gpu_note(note, note_len, "no GPU driver answered: using the %u declared %s",
                    o->declared_n, o->declared_type);
    else
        dr_gpu_note(note, note_len, "no GPU driver answered and none declared: CPU-only node");
    return DR_OK;
}
