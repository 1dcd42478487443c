/* gpu_priv.h - what the GPU discovery sources share: building a list and
 * copying driver strings into its fixed-size fields. */
#ifndef DROVER_AGENT_GPU_PRIV_H
#define DROVER_AGENT_GPU_PRIV_H

#include <stddef.h>

#include "agent/gpu.h"

/* n zeroed entries (index i, numa -1), source set; DR_ENOMEM on failure. */
int dr_gpu_list_alloc(dr_gpu_list_t *l, size_t n, const char *source, dr_err_t *err);
/* Copy src into dst[cap], truncating; dst is always terminated. */
void dr_gpu_strcpy(char *dst, size_t cap, const char *src);
/* Append "; "-separated text to note[cap] (note may be NULL). */
void dr_gpu_note(char *note, size_t cap, const char *fmt, ...) DR_PRINTF(3, 4);

#endif
