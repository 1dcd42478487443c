/* catalog.h - the GPU catalog: what each GPU type can do and what it costs.
 *
 * Loaded from data/gpus.csv (embedded in libdrover at build time, so the
 * binaries need no data files; a site can load its own with --catalog).
 * Unknown figures are NAN, never 0: a missing FP8 rate or price must not
 * look like a free or useless GPU. */
#ifndef DROVER_CATALOG_H
#define DROVER_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "drover/error.h"

#define DR_GPU_NAME_MAX 40

typedef struct dr_gpu_spec {
    char name[DR_GPU_NAME_MAX]; /* canonical, e.g. "H100-SXM-80GB" */
    char vendor[24];
    char aliases[128];  /* '|'-separated short names: "H100|H100-SXM" */
    char link[24];      /* intra-node link name: "NVLink4", "PCIe4x16" */
    double bf16_tflops; /* dense; NAN = unknown/unsupported */
    double fp8_tflops;
    double fp16_tflops;
    double mem_gb;
    double hbm_tbs; /* memory bandwidth, TB/s */
    double tdp_w;
    double link_gbs;          /* intra-node GPU-GPU bandwidth, GB/s */
    double price_hr;          /* on-demand USD per GPU-hour */
    double price_neocloud_hr; /* second price column: neocloud USD per GPU-hour */
    char *source;             /* owned; where the figures come from */
} dr_gpu_spec_t;

typedef struct dr_catalog {
    dr_gpu_spec_t *gpus;
    size_t n, cap;
} dr_catalog_t;

/* Parse a catalog CSV from memory.  `name` is used in messages
 * ("gpus.csv:7: mem_gb: 'eighty' is not a number").  Required columns:
 * name, vendor, mem_gb; the others may be absent or empty (unknown). */
int dr_catalog_parse(dr_catalog_t *cat, const char *name, const char *buf, size_t len,
                     dr_err_t *err);
int dr_catalog_load(dr_catalog_t *cat, const char *path, dr_err_t *err);
/* The catalog compiled into the library (data/gpus.csv). */
int dr_catalog_builtin(dr_catalog_t *cat, dr_err_t *err);
void dr_catalog_free(dr_catalog_t *cat);

/* Look a GPU up by canonical name or alias, case-insensitively
 * ("h100", "H100-SXM", "H100-SXM-80GB" all find the same row).  NULL if none. */
const dr_gpu_spec_t *dr_catalog_find(const dr_catalog_t *cat, const char *name);

/* Copy a spec (deep: the source string is duplicated). */
int dr_gpu_spec_copy(dr_gpu_spec_t *dst, const dr_gpu_spec_t *src);
void dr_gpu_spec_free(dr_gpu_spec_t *s);
/* A spec with only a name and every figure unknown. */
void dr_gpu_spec_unknown(dr_gpu_spec_t *s, const char *name);

/* The catalog GPU type (canonical name, e.g. "H100-SXM-80GB") for a driver's
 * product name ("NVIDIA H100 80GB HBM3"), matched on the model token and
 * checked against the memory size and form factor the name states (an
 * "H100 PCIe" is not the catalog's SXM H100).  0, DR_ENOENT when no
 * catalog type fits, DR_EINVAL when type[n] is too small.  The _cat form
 * uses the given catalog; the other loads the built-in one each call. */
int dr_gpu_type_from_product(const char *product, char *type, size_t n);
int dr_gpu_type_from_product_cat(const dr_catalog_t *cat, const char *product, char *type,
                                 size_t n);

#endif
