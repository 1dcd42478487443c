/* lp.c - GLPK behind dr_lp_t.  GLPK's terminal output is switched off: the
 * core never prints. */
#include "sched/lp.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>

struct dr_lp {
    glp_prob *p;
    size_t ncols;
};

dr_lp_t *dr_lp_new(size_t ncols, bool maximize)
{
    dr_lp_t *lp = calloc(1, sizeof *lp);
    if (!lp)
        return NULL;
    glp_term_out(GLP_OFF);
    lp->p = glp_create_prob();
    lp->ncols = ncols;
    glp_set_obj_dir(lp->p, maximize ? GLP_MAX : GLP_MIN);
    if (ncols)
        glp_add_cols(lp->p, (int)ncols);
    for (size_t c = 0; c < ncols; c++)
        glp_set_col_bnds(lp->p, (int)c + 1, GLP_LO, 0.0, 0.0);
    return lp;
}

void dr_lp_free(dr_lp_t *lp)
{
    if (!lp)
        return;
    glp_delete_prob(lp->p);
    free(lp);
}

static int bnd_type(double lo, double hi)
{
    if (isinf(lo) && isinf(hi))
        return GLP_FR;
    if (isinf(hi))
        return GLP_LO;
    if (isinf(lo))
        return GLP_UP;
    return lo == hi ? GLP_FX : GLP_DB;
}

void dr_lp_bounds(dr_lp_t *lp, size_t col, double lo, double hi)
{
    glp_set_col_bnds(lp->p, (int)col + 1, bnd_type(lo, hi), isinf(lo) ? 0 : lo, isinf(hi) ? 0 : hi);
}

void dr_lp_obj(dr_lp_t *lp, size_t col, double coef)
{
    glp_set_obj_coef(lp->p, (int)col + 1, coef);
}

int dr_lp_row(dr_lp_t *lp, size_t nnz, const int *cols, const double *vals, double lo, double hi)
{
    int r = glp_add_rows(lp->p, 1);
    glp_set_row_bnds(lp->p, r, bnd_type(lo, hi), isinf(lo) ? 0 : lo, isinf(hi) ? 0 : hi);
    int *ind = malloc((nnz + 1) * sizeof *ind);
    double *val = malloc((nnz + 1) * sizeof *val);
    if (!ind || !val) {
        free(ind);
        free(val);
        return DR_ENOMEM;
    }
    for (size_t i = 0; i < nnz; i++) {
        ind[i + 1] = cols[i] + 1;
        val[i + 1] = vals[i];
    }
    glp_set_mat_row(lp->p, r, (int)nnz, ind, val);
    free(ind);
    free(val);
    return DR_OK;
}

int dr_lp_solve(dr_lp_t *lp, double *x, double *objective, dr_err_t *err)
{
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    int rc = glp_simplex(lp->p, &parm);
    if (rc != 0 && rc != GLP_ENOPFS && rc != GLP_ENODFS)
        return dr_err_set(err, DR_EINVAL, "LP solver failed (GLPK code %d)", rc);
    int st = glp_get_status(lp->p);
    if (st != GLP_OPT && st != GLP_FEAS)
        return dr_err_set(err, DR_EINVAL, "LP has no optimal solution (GLPK status %d)", st);
    for (size_t c = 0; c < lp->ncols; c++)
        x[c] = glp_get_col_prim(lp->p, (int)c + 1);
    if (objective)
        *objective = glp_get_obj_val(lp->p);
    return DR_OK;
}
