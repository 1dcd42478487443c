/* trace.c - the trace front door: format names, default options, dispatch
 * to the per-format readers (trace_gavel.c, trace_philly.c, trace_openb.c,
 * trace_drover.c), file loading, and the helpers those readers share. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/util.h"
#include "drover/workload.h"
#include "sim/trace_priv.h"

static const char *const format_names[DR_TRACE_NFORMATS] = {
    [DR_TRACE_GAVEL] = "gavel",
    [DR_TRACE_PHILLY] = "philly",
    [DR_TRACE_OPENB] = "openb",
    [DR_TRACE_DROVER] = "drover",
};

void dr_trace_opts_default(dr_trace_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->lenient = false;
    o->gavel_throughputs = NULL;
    o->max_jobs = 0;
}

const char *dr_trace_format_name(dr_trace_format_t f)
{
    return (unsigned)f < DR_TRACE_NFORMATS ? format_names[f] : "?";
}

int dr_trace_format_parse(const char *s, dr_trace_format_t *out)
{
    if (!s)
        return DR_EINVAL;
    for (int i = 0; i < DR_TRACE_NFORMATS; i++)
        if (dr_streq_ci(s, format_names[i])) {
            *out = (dr_trace_format_t)i;
            return DR_OK;
        }
    if (dr_streq_ci(s, "native")) {
        *out = DR_TRACE_DROVER;
        return DR_OK;
    }
    return DR_EINVAL;
}

int dr_trace_parse(dr_trace_format_t f, const char *name, const char *buf, size_t len,
                   const dr_trace_opts_t *o, dr_workload_t *wl, dr_err_t *err)
{
    dr_trace_opts_t def;
    if (!o) {
        dr_trace_opts_default(&def);
        o = &def;
    }
    if (!name)
        name = "trace";
    if (!wl || (!buf && len))
        return dr_err_set(err, DR_EINVAL, "%s: no buffer or workload", name);
    if (!buf)
        buf = "";
    dr_trace_ctx_t t = {name, o, wl, err, wl->njobs};
    int rc;
    switch (f) {
    case DR_TRACE_GAVEL: rc = dr_trace_read_gavel(&t, buf, len); break;
    case DR_TRACE_PHILLY: rc = dr_trace_read_philly(&t, buf, len); break;
    case DR_TRACE_OPENB: rc = dr_trace_read_openb(&t, buf, len); break;
    case DR_TRACE_DROVER: rc = dr_trace_read_drover(&t, buf, len); break;
    default: return dr_err_set(err, DR_EINVAL, "%s: unknown trace format %d", name, (int)f);
    }
    if (rc < 0)
        return rc;
    return dr_workload_finish(wl, err);
}

int dr_trace_load(dr_trace_format_t f, const char *path, const dr_trace_opts_t *o,
                  dr_workload_t *wl, dr_err_t *err)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = dr_read_file(path, &buf, &len, err);
    if (rc < 0)
        return rc;
    rc = dr_trace_parse(f, path, buf, len, o, wl, err);
    free(buf);
    return rc;
}

/* --- helpers shared by the readers --- */

int dr_trace_row_error(dr_trace_ctx_t *t, const dr_err_t *row)
{
    if (t->o->lenient && row->code != DR_ENOMEM) {
        if (t->wl->skipped++ == 0)
            snprintf(t->wl->first_skip, sizeof t->wl->first_skip, "%s", row->msg);
        return DR_OK;
    }
    if (t->err) {
        t->err->code = row->code;
        memcpy(t->err->msg, row->msg, sizeof t->err->msg);
    }
    return row->code;
}

int dr_trace_ferr(dr_err_t *e, const dr_trace_ctx_t *t, size_t line, const char *field, int code,
                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dr_err_vset(e, code, fmt, ap);
    va_end(ap);
    if (field)
        dr_err_prefix(e, "%s:%zu: %s: ", t->name, line, field);
    else
        dr_err_prefix(e, "%s:%zu: ", t->name, line);
    return code;
}

bool dr_trace_full(const dr_trace_ctx_t *t)
{
    return t->o->max_jobs && t->wl->njobs - t->first_job >= t->o->max_jobs;
}

int dr_trace_num(dr_err_t *e, const dr_trace_ctx_t *t, size_t line, const char *field,
                 const char *s, double min, double *out)
{
    double v;
    if (dr_is_blank(s))
        return dr_trace_ferr(e, t, line, field, DR_EINVAL, "missing");
    if (dr_parse_double(s, &v) != 0)
        return dr_trace_ferr(e, t, line, field, DR_EINVAL, "'%s' is not a number", s);
    if (v < min)
        return dr_trace_ferr(e, t, line, field, DR_EINVAL, "'%s' must be >= %g", s, min);
    *out = v;
    return DR_OK;
}

int dr_trace_uint(dr_err_t *e, const dr_trace_ctx_t *t, size_t line, const char *field,
                  const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    double v;
    if (dr_is_blank(s))
        return dr_trace_ferr(e, t, line, field, DR_EINVAL, "missing");
    if (dr_parse_double(s, &v) != 0)
        return dr_trace_ferr(e, t, line, field, DR_EINVAL, "'%s' is not a number", s);
    if (v != floor(v))
        return dr_trace_ferr(e, t, line, field, DR_EINVAL, "'%s' is not a whole number", s);
    if (v < (double)min)
        return dr_trace_ferr(e, t, line, field, DR_EINVAL, "'%s' must be >= %llu", s,
                             (unsigned long long)min);
    if (v > (double)max)
        return dr_trace_ferr(e, t, line, field, DR_EINVAL, "'%s' must be <= %llu", s,
                             (unsigned long long)max);
    *out = (uint64_t)v;
    return DR_OK;
}

int dr_trace_validate(dr_err_t *e, const dr_trace_ctx_t *t, size_t line, const dr_job_req_t *r)
{
    int rc = dr_job_req_validate(r, e);
    if (rc < 0)
        dr_err_prefix(e, "%s:%zu: ", t->name, line);
    return rc;
}

int64_t dr_trace_intern(dr_strtab_t *tab, const char *s)
{
    int64_t id = dr_strtab_intern(tab, dr_is_blank(s) ? "unknown" : s);
    return id < 0 || id > UINT32_MAX ? DR_ENOMEM : id;
}

void dr_trace_shift_to_zero(dr_trace_ctx_t *t)
{
    dr_workload_t *wl = t->wl;
    if (wl->njobs <= t->first_job)
        return;
    dr_time_t min = wl->jobs[t->first_job].submit;
    for (size_t i = t->first_job; i < wl->njobs; i++)
        if (wl->jobs[i].submit < min)
            min = wl->jobs[i].submit;
    if (min == 0)
        return;
    for (size_t i = t->first_job; i < wl->njobs; i++) {
        wl->jobs[i].submit -= min;
        if (wl->jobs[i].deadline && wl->jobs[i].deadline != DR_TIME_NEVER)
            wl->jobs[i].deadline -= min;
    }
}

bool dr_trace_skip_record(const char *const *fields, size_t n)
{
    if (n == 0)
        return true;
    const char *f = fields[0];
    while (*f == ' ' || *f == '\t')
        f++;
    if (*f == '#')
        return true;
    for (size_t i = 0; i < n; i++)
        if (!dr_is_blank(fields[i]))
            return false;
    return true;
}
