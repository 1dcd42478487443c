/* lp.h - a thin wrapper over GLPK for the policies that solve linear
 * programs (Gavel's max-min fairness, drover's allocation).  Columns and
 * rows are 0-based here; GLPK's 1-based indexing stays inside lp.c. */
#ifndef DROVER_SCHED_LP_H
#define DROVER_SCHED_LP_H

#include <stdbool.h>
#include <stddef.h>

#include "drover/error.h"

typedef struct dr_lp dr_lp_t;

/* ncols variables, each in [lo, hi] (use -INFINITY / INFINITY for none). */
dr_lp_t *dr_lp_new(size_t ncols, bool maximize);
void dr_lp_free(dr_lp_t *lp);
void dr_lp_bounds(dr_lp_t *lp, size_t col, double lo, double hi);
void dr_lp_obj(dr_lp_t *lp, size_t col, double coef);
/* lo <= sum(vals[i] * x[cols[i]]) <= hi */
int dr_lp_row(dr_lp_t *lp, size_t nnz, const int *cols, const double *vals, double lo, double hi);
/* Solve with the simplex method; x gets ncols values. */
int dr_lp_solve(dr_lp_t *lp, double *x, double *objective, dr_err_t *err);

#endif
