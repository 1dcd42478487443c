/* hostlist.h - Slurm-style host range expressions.
 *
 *   "h100-[001-016,020]"  ->  h100-001 ... h100-016, h100-020
 *   "a[1-2]b[3-4]"        ->  a1b3 a1b4 a2b3 a2b4
 *   "n1,n2,gpu[7-8]"      ->  n1 n2 gpu7 gpu8
 *
 * Leading zeros are kept (the width of the lower bound), and compression
 * (the reverse) groups names with the same prefix/suffix and width. */
#ifndef DROVER_HOSTLIST_H
#define DROVER_HOSTLIST_H

#include <stddef.h>

#include "drover/error.h"
#include "drover/util.h"

/* Upper bound on the hosts one expression may produce. */
#define DR_HOSTLIST_MAX 1000000

/* Append the expansion of expr to out.  Errors name the offending part:
 * "hostlist 'h[3-1]': range 3-1 is descending". */
int dr_hostlist_expand(const char *expr, dr_strvec_t *out, dr_err_t *err);
/* Compress names into one expression; the result is malloc'd (NULL on OOM).
 * Names keep their order of first appearance per prefix group. */
char *dr_hostlist_compress(const char *const *names, size_t n);

#endif
