/* trace_gavel.c - Gavel's .trace files and its isolated throughput matrix.
 *
 * A .trace line is one job, tab-separated, no header.  Three layouts exist
 * (counted on stanford-futuredata/gavel's own files and parse_trace()):
 *   7 fields  (traces/msr/seed=N/ files):
 *     job_type command num_steps_arg needs_data_dir total_steps arrival_time scale_factor
 *   9 fields  (older parse_trace):
 *     job_type command num_steps_arg needs_data_dir total_steps scale_factor
 *     priority_weight SLO arrival_time
 *  10 fields  (physical_cluster/ files, current parse_trace):
 *     job_type command working_directory num_steps_arg needs_data_dir total_steps
 *     scale_factor priority_weight SLO arrival_time
 * In the msr files the float column ("6.000000") is the arrival time and the
 * last one (1/2/4/8...) the scale factor.
 *
 * Each job is a train job of class "<job_type> x<scale_factor>" in the
 * throughput matrix, asking for scale_factor whole GPUs anywhere (nodes 0),
 * true work = total_steps.  Gavel measured only some scale factors (A3C,
 * CycleGAN and Recommendation only at x1; none at x16/x32/x64), yet the msr
 * traces use others: a missing "<T> xS" is derived from the measured class of
 * T with the largest scale S' <= S (else the smallest S' > S), its rates
 * scaled by S/S' (linear scaling; Gavel's steps/s count every worker's
 * steps).  An unknown job type is an error.
 *
 * priority_weight becomes the job priority (rounded); an SLO > 0 is a factor
 * of the isolated duration on the class's fastest GPU and becomes a deadline
 * of submit + SLO x that duration. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/embed.h"
#include "drover/text.h"
#include "drover/util.h"
#include "drover/workload.h"
#include "sim/trace_priv.h"

#define CLASS_NAME_MAX 256
#define MAX_SCALE      1000000

/* --- throughput matrix: job_type,scale_factor,<gpu>,<gpu>... --- */

int dr_gavel_throughputs_parse(dr_perf_table_t *p, const char *name, const char *buf, size_t len,
                               dr_err_t *err)
{
    dr_perf_table_t t;
    dr_perf_init(&t);
    dr_perf_init(p);
    if (!name)
        name = "throughputs";
    if (!buf && len)
        return dr_err_set(err, DR_EINVAL, "%s: no buffer", name);
    dr_csv_t csv;
    dr_csv_init(&csv, buf ? buf : "", len, ',');
    double *rates = NULL;
    size_t ncols = 0;
    int rc = DR_OK, nf;
    bool header = false;
    while ((nf = dr_csv_next(&csv)) != 0) {
        if (nf < 0) {
            rc = dr_err_set(err, nf, "%s:%zu: %s", name, csv.line,
                            nf == DR_ENOMEM ? "out of memory" : "unterminated quote");
            break;
        }
        if (dr_trace_skip_record((const char *const *)csv.fields, csv.nfields))
            continue;
        for (size_t i = 0; i < csv.nfields; i++)
            csv.fields[i] = dr_trim(csv.fields[i]);
        if (!header) {
            if (csv.nfields < 3 || !dr_streq_ci(csv.fields[0], "job_type") ||
                !dr_streq_ci(csv.fields[1], "scale_factor")) {
                rc = dr_err_set(err, DR_EINVAL,
                                "%s:%zu: header: expected job_type,scale_factor,<gpu>...", name,
                                csv.line);
                break;
            }
            ncols = csv.nfields - 2;
            for (size_t i = 2; i < csv.nfields; i++)
                if (!csv.fields[i][0]) {
                    rc = dr_err_set(err, DR_EINVAL, "%s:%zu: header: column %zu has no name", name,
                                    csv.line, i + 1);
                    break;
                }
            if (rc == DR_OK)
                rc = dr_perf_set_types(&t, (const char *const *)csv.fields + 2, ncols);
            if (rc == DR_OK && !(rates = malloc(ncols * sizeof *rates)))
                rc = DR_ENOMEM;
            if (rc == DR_ENOMEM)
                dr_err_set(err, rc, "%s: out of memory", name);
            if (rc != DR_OK)
                break;
            header = true;
            continue;
        }
        if (csv.nfields != ncols + 2) {
            rc = dr_err_set(err, DR_EINVAL, "%s:%zu: expected %zu fields, got %zu", name, csv.line,
                            ncols + 2, csv.nfields);
            break;
        }
        const char *type = csv.fields[0];
        if (!type[0]) {
            rc = dr_err_set(err, DR_EINVAL, "%s:%zu: job_type: missing", name, csv.line);
            break;
        }
        double sf;
        if (dr_parse_double(csv.fields[1], &sf) != 0 || sf != floor(sf) || sf < 1 ||
            sf > MAX_SCALE) {
            rc =
                dr_err_set(err, DR_EINVAL, "%s:%zu: scale_factor: '%s' must be a whole number >= 1",
                           name, csv.line, csv.fields[1]);
            break;
        }
        for (size_t i = 0; rc == DR_OK && i < ncols; i++)
            if (dr_parse_double(csv.fields[i + 2], &rates[i]) != 0 || rates[i] < 0)
                rc = dr_err_set(err, DR_EINVAL, "%s:%zu: %s: '%s' must be a number >= 0", name,
                                csv.line, t.type_names[i], csv.fields[i + 2]);
        if (rc != DR_OK)
            break;
        char cname[CLASS_NAME_MAX];
        if ((size_t)snprintf(cname, sizeof cname, "%s x%.0f", type, sf) >= sizeof cname) {
            rc = dr_err_set(err, DR_EINVAL, "%s:%zu: job_type: name too long", name, csv.line);
            break;
        }
        if (dr_perf_find_class(&t, cname) >= 0) {
            rc = dr_err_set(err, DR_EINVAL, "%s:%zu: duplicate class '%s'", name, csv.line, cname);
            break;
        }
        int k = dr_perf_add_class(&t, cname, rates);
        if (k < 0) {
            rc = dr_err_set(err, k, "%s:%zu: cannot add class '%s'", name, csv.line, cname);
            break;
        }
    }
    if (rc == DR_OK && !header)
        rc = dr_err_set(err, DR_EINVAL, "%s: no header line", name);
    free(rates);
    dr_csv_free(&csv);
    if (rc != DR_OK) {
        dr_perf_free(&t);
        return rc;
    }
    *p = t;
    return DR_OK;
}

int dr_gavel_throughputs_builtin(dr_perf_table_t *p, dr_err_t *err)
{
    const struct dr_embedded *e = dr_embedded("gavel_throughputs");
    if (!e) {
        dr_perf_init(p);
        return dr_err_set(err, DR_ENOENT, "built-in gavel throughputs missing");
    }
    const char *base = strrchr(e->path, '/');
    return dr_gavel_throughputs_parse(p, base ? base + 1 : e->path, e->data, e->len, err);
}

/* --- the .trace reader --- */

/* Make the workload's perf table the throughput matrix (or check that the
 * one it already has uses the same GPU columns). */
static int adopt_table(dr_trace_ctx_t *t, const dr_perf_table_t *tp)
{
    dr_perf_table_t *wp = &t->wl->perf;
    if (wp->nclasses <= 1 && wp->ntypes == 0) {
        dr_perf_free(wp);
        if (dr_perf_copy(wp, tp) != 0)
            return dr_err_set(t->err, DR_ENOMEM, "%s: out of memory", t->name);
        return DR_OK;
    }
    bool same = wp->ntypes == tp->ntypes;
    for (size_t i = 0; same && i < wp->ntypes; i++)
        same = dr_streq_ci(wp->type_names[i], tp->type_names[i]);
    if (!same)
        return dr_err_set(t->err, DR_ESTATE,
                          "%s: the workload already has a perf table with other GPU columns",
                          t->name);
    for (size_t c = 1; c < tp->nclasses; c++)
        if (dr_perf_find_class(wp, tp->class_names[c]) < 0) {
            int k = dr_perf_add_class(wp, tp->class_names[c], tp->rate + c * tp->ntypes);
            if (k < 0)
                return dr_err_set(t->err, k, "%s: cannot add class '%s'", t->name,
                                  tp->class_names[c]);
        }
    return DR_OK;
}

/* Find "<type> x<sf>", deriving it from a measured class (index < nmeasured)
 * of the same type if needed.  Returns the class, -1 if the job type is
 * unknown, or a negative error (< -1) on failure to add. */
static int class_for(dr_perf_table_t *p, size_t nmeasured, const char *type, uint64_t sf)
{
    char cname[CLASS_NAME_MAX];
    if ((size_t)snprintf(cname, sizeof cname, "%s x%" PRIu64, type, sf) >= sizeof cname)
        return -1;
    int k = dr_perf_find_class(p, cname);
    if (k >= 0)
        return k;
    size_t plen = strlen(type);
    int below = -1, above = -1;
    uint64_t sb = 0, sa = 0;
    for (size_t c = 1; c < nmeasured && c < p->nclasses; c++) {
        const char *n = p->class_names[c];
        if (strncmp(n, type, plen) != 0 || n[plen] != ' ' || n[plen + 1] != 'x')
            continue;
        uint64_t s;
        if (dr_parse_u64(n + plen + 2, &s) != 0 || s == 0)
            continue;
        if (s <= sf && (below < 0 || s > sb))
            below = (int)c, sb = s;
        if (s > sf && (above < 0 || s < sa))
            above = (int)c, sa = s;
    }
    int base = below >= 0 ? below : above;
    uint64_t s = below >= 0 ? sb : sa;
    if (base < 0)
        return -1;
    double *r = malloc((p->ntypes ? p->ntypes : 1) * sizeof *r);
    if (!r)
        return DR_ENOMEM;
    for (size_t i = 0; i < p->ntypes; i++)
        r[i] = p->rate[(size_t)base * p->ntypes + i] * ((double)sf / (double)s);
    k = dr_perf_add_class(p, cname, r);
    free(r);
    return k < 0 ? (k == -1 ? DR_ENOMEM : k) : k;
}

static int gavel_row(dr_trace_ctx_t *t, dr_err_t *e, size_t line, char **f, size_t nf,
                     size_t nmeasured)
{
    size_t i_steps, i_arr, i_sf, i_prio = 0, i_slo = 0;
    if (nf == 7)
        i_steps = 4, i_arr = 5, i_sf = 6;
    else if (nf == 9)
        i_steps = 4, i_sf = 5, i_prio = 6, i_slo = 7, i_arr = 8;
    else if (nf == 10)
        i_steps = 5, i_sf = 6, i_prio = 7, i_slo = 8, i_arr = 9;
    else
        return dr_trace_ferr(e, t, line, NULL, DR_EINVAL,
                             "expected 7, 9 or 10 tab-separated fields, got %zu", nf);
    const char *type = f[0];
    if (dr_is_blank(type))
        return dr_trace_ferr(e, t, line, "job_type", DR_EINVAL, "missing");
    double steps, arrival, prio = 0, slo = -1;
    uint64_t sf;
    int rc;
    if ((rc = dr_trace_num(e, t, line, "total_steps", f[i_steps], 0, &steps)) < 0)
        return rc;
    if (steps <= 0)
        return dr_trace_ferr(e, t, line, "total_steps", DR_EINVAL, "'%s' must be > 0", f[i_steps]);
    if ((rc = dr_trace_num(e, t, line, "arrival_time", f[i_arr], 0, &arrival)) < 0)
        return rc;
    if (arrival > 9.0e9)
        return dr_trace_ferr(e, t, line, "arrival_time", DR_EINVAL, "'%s' is too large", f[i_arr]);
    if ((rc = dr_trace_uint(e, t, line, "scale_factor", f[i_sf], 1, MAX_SCALE, &sf)) < 0)
        return rc;
    if (i_prio) {
        if ((rc = dr_trace_num(e, t, line, "priority_weight", f[i_prio], 0, &prio)) < 0)
            return rc;
        if (prio >= (double)INT32_MAX)
            return dr_trace_ferr(e, t, line, "priority_weight", DR_EINVAL, "'%s' is too large",
                                 f[i_prio]);
        if ((rc = dr_trace_num(e, t, line, "SLO", f[i_slo], -INFINITY, &slo)) < 0)
            return rc;
    }

    dr_perf_table_t *p = &t->wl->perf;
    int k = class_for(p, nmeasured, type, sf);
    if (k == -1)
        return dr_trace_ferr(e, t, line, "job_type", DR_EINVAL,
                             "unknown job type '%s' (not in the throughput matrix)", type);
    if (k < 0)
        return dr_err_set(e, k, "%s: out of memory", t->name);
    double maxr = 0;
    for (size_t c = 0; c < p->ntypes; c++) {
        double r = p->rate[(size_t)k * p->ntypes + c];
        if (r > maxr)
            maxr = r;
    }
    if (maxr <= 0)
        return dr_trace_ferr(e, t, line, "job_type", DR_EINVAL,
                             "'%s' x%" PRIu64 " runs on no GPU (every rate is 0)", type, sf);

    dr_job_t j;
    dr_job_init(&j);
    j.kind = DR_KIND_TRAIN;
    j.submit = dr_time_from_s(arrival);
    j.perf_class = (uint32_t)k;
    j.req.nodes = 0;
    j.req.gpus_per_node = (uint32_t)sf;
    j.req.gpu_milli = 1000;
    j.priority = (int32_t)lround(prio);
    if (slo > 0)
        j.deadline = dr_trace_time_add(j.submit, dr_time_from_s(slo * steps / maxr));
    if ((rc = dr_trace_validate(e, t, line, &j.req)) < 0)
        return rc;
    int64_t u = dr_trace_intern(&t->wl->users, "");
    int64_t a = dr_trace_intern(&t->wl->accounts, "");
    if (u < 0 || a < 0)
        return dr_err_set(e, DR_ENOMEM, "%s: out of memory", t->name);
    j.user = (uint32_t)u;
    j.account = (uint32_t)a;
    if (dr_workload_add(t->wl, &j, steps, NULL) != 0)
        return dr_err_set(e, DR_ENOMEM, "%s: out of memory", t->name);
    return DR_OK;
}

int dr_trace_read_gavel(dr_trace_ctx_t *t, const char *buf, size_t len)
{
    dr_perf_table_t builtin;
    const dr_perf_table_t *tp = t->o->gavel_throughputs;
    int rc;
    if (!tp) {
        if ((rc = dr_gavel_throughputs_builtin(&builtin, t->err)) < 0)
            return rc;
        tp = &builtin;
    }
    rc = adopt_table(t, tp);
    if (tp == &builtin)
        dr_perf_free(&builtin);
    if (rc < 0)
        return rc;
    size_t nmeasured = t->wl->perf.nclasses;

    dr_csv_t csv;
    dr_csv_init(&csv, buf, len, '\t');
    int nf;
    while (!dr_trace_full(t) && (nf = dr_csv_next(&csv)) != 0) {
        dr_err_t e = {0};
        if (nf < 0)
            dr_trace_ferr(&e, t, csv.line, NULL, nf,
                          nf == DR_ENOMEM ? "out of memory" : "unterminated quote");
        else if (dr_trace_skip_record((const char *const *)csv.fields, csv.nfields))
            continue;
        else
            gavel_row(t, &e, csv.line, csv.fields, csv.nfields, nmeasured);
        if (e.code < 0 && (rc = dr_trace_row_error(t, &e)) < 0)
            break;
        rc = DR_OK;
    }
    dr_csv_free(&csv);
    if (rc < 0)
        return rc;
    dr_trace_shift_to_zero(t);
    return DR_OK;
}
