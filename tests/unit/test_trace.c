/* test_trace.c - the workload container and the four trace readers (Gavel,
 * Philly, openb, drover CSV): exact fields on hand-written buffers, every
 * error message, lenient skipping, and the real traces under shared/. */
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/config.h"
#include "drover/declare.h"
#include "drover/workload.h"

#define S(x) dr_time_from_s(x)

/* Parse text from an exact-size heap copy (no NUL after it, so ASan sees any
 * read past the end).  wl is initialised here. */
/* What a user would declare if they knew everything: exact sizes, and
 * walltime limits of factor x the run time on the slowest GPU (no noise). */
static void declare_exact(dr_workload_t *wl, double factor)
{
    dr_declare_opts_t d;
    dr_declare_opts_default(&d);
    d.mode = DR_SIZE_EXACT;
    d.walltime_factor = factor;
    d.walltime_noise = 0;
    dr_err_t err;
    assert_int_equal(dr_workload_declare(wl, &d, &err), DR_OK);
}

static int parse_opts(dr_trace_format_t f, const char *name, const char *text,
                      const dr_trace_opts_t *o, dr_workload_t *wl, dr_err_t *err)
{
    size_t len = strlen(text);
    char *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    memcpy(buf, text, len);
    dr_workload_init(wl);
    memset(err, 0, sizeof *err);
    int rc = dr_trace_parse(f, name, buf, len, o, wl, err);
    free(buf);
    return rc;
}

static int parse(dr_trace_format_t f, const char *name, const char *text, dr_workload_t *wl,
                 dr_err_t *err)
{
    return parse_opts(f, name, text, NULL, wl, err);
}

/* The parse must fail with a message containing `want`. */
static void expect_error(dr_trace_format_t f, const char *name, const char *text, const char *want)
{
    dr_workload_t wl;
    dr_err_t err;
    int rc = parse(f, name, text, &wl, &err);
    if (rc >= 0)
        fail_msg("expected an error containing \"%s\", parse succeeded", want);
    assert_int_equal(err.code, rc);
    tu_assert_contains(err.msg, want);
    dr_workload_free(&wl);
}

static const char *typeset_of(const dr_workload_t *wl, size_t i)
{
    return wl->typeset[i] ? wl->typesets.strs[wl->typeset[i] - 1] : NULL;
}

/* ------------------------------------------------------------------ */
/* workload                                                            */

static void test_workload_finish(void **state)
{
    (void)state;
    dr_workload_t wl;
    dr_workload_init(&wl);
    assert_int_equal(wl.perf.nclasses, 1);
    dr_job_t j;
    /* submit times 5,1,5,1 with ids 0,0,2,0: ids 0 get 1,3,4 in insertion order */
    const double sub[] = {5, 1, 5, 1};
    const uint64_t id[] = {0, 0, 2, 0};
    const char *ts[] = {"T4", NULL, "", "T4|V100"};
    for (int i = 0; i < 4; i++) {
        dr_job_init(&j);
        j.submit = S(sub[i]);
        j.id = id[i];
        assert_int_equal(dr_workload_add(&wl, &j, j.work_declared, ts[i]), 0);
    }
    dr_err_t err = {0};
    assert_int_equal(dr_workload_finish(&wl, &err), 0);
    const uint64_t want_id[] = {3, 4, 1, 2};
    for (int i = 0; i < 4; i++)
        assert_int_equal(wl.jobs[i].id, want_id[i]);
    assert_null(typeset_of(&wl, 0));
    assert_string_equal(typeset_of(&wl, 1), "T4|V100");
    assert_string_equal(typeset_of(&wl, 2), "T4");
    assert_null(typeset_of(&wl, 3));
    assert_int_equal(wl.typesets.n, 2);
    /* idempotent */
    assert_int_equal(dr_workload_finish(&wl, &err), 0);
    assert_int_equal(wl.jobs[0].id, 3);
    /* duplicate ids */
    dr_job_init(&j);
    j.id = 4;
    assert_int_equal(dr_workload_add(&wl, &j, j.work_declared, NULL), 0);
    assert_int_equal(dr_workload_finish(&wl, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "duplicate job id 4");
    dr_workload_free(&wl);
    dr_workload_free(&wl);
}

static void make_cluster(dr_cluster_t *c, const char *const *names, size_t n)
{
    dr_catalog_t cat = {0};
    dr_err_t err = {0};
    assert_int_equal(dr_catalog_builtin(&cat, &err), 0);
    dr_cluster_init(c);
    for (size_t i = 0; i < n; i++) {
        const dr_gpu_spec_t *s = dr_catalog_find(&cat, names[i]);
        dr_gpu_spec_t u;
        if (!s) {
            dr_gpu_spec_unknown(&u, names[i]);
            s = &u;
        }
        assert_true(dr_cluster_add_type(c, s, &err) >= 0);
        if (s == &u)
            dr_gpu_spec_free(&u);
    }
    dr_catalog_free(&cat);
}

static void test_workload_bind(void **state)
{
    (void)state;
    const char *names[] = {"T4", "V100M16", "G2"};
    dr_cluster_t c;
    make_cluster(&c, names, 3);
    dr_workload_t wl;
    dr_workload_init(&wl);
    dr_job_t j;
    const char *ts[] = {"t4 | G2", NULL, "V100-SXM2-16GB", "H100|T4", "H100"};
    for (int i = 0; i < 5; i++) {
        dr_job_init(&j);
        j.id = (uint64_t)(10 + i);
        assert_int_equal(dr_workload_add(&wl, &j, j.work_declared, ts[i]), 0);
    }
    dr_err_t err = {0};
    assert_int_equal(dr_workload_finish(&wl, &err), 0);
    assert_int_equal(dr_workload_bind(&wl, &c, false, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "job 13: gpu type 'H100' is not in the cluster");

    assert_int_equal(dr_workload_bind(&wl, &c, true, &err), 0);
    assert_true(wl.jobs[0].req.types == 0x5);
    assert_true(wl.jobs[1].req.types == 0);
    assert_true(wl.jobs[2].req.types == 0x2);
    assert_true(wl.jobs[3].req.types == 0x1);
    /* nothing known: a mask no cluster type matches (never runnable) */
    assert_true(wl.jobs[4].req.types != 0);
    assert_true(dr_cluster_eligible_types(&c, &wl.jobs[4].req) == 0);
    dr_workload_free(&wl);
    dr_cluster_free(&c);
}

static void test_formats(void **state)
{
    (void)state;
    dr_trace_format_t f;
    const char *names[] = {"gavel", "philly", "openb", "drover"};
    for (int i = 0; i < DR_TRACE_NFORMATS; i++) {
        assert_string_equal(dr_trace_format_name((dr_trace_format_t)i), names[i]);
        assert_int_equal(dr_trace_format_parse(names[i], &f), 0);
        assert_int_equal(f, i);
    }
    assert_int_equal(dr_trace_format_parse("GAVEL", &f), 0);
    assert_int_equal(f, DR_TRACE_GAVEL);
    assert_int_equal(dr_trace_format_parse("swf", &f), DR_EINVAL);
    assert_string_equal(dr_trace_format_name(DR_TRACE_NFORMATS), "?");
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    assert_false(o.lenient);
    assert_null(o.gavel_throughputs);
    assert_int_equal(o.max_jobs, 0);

    dr_workload_t wl;
    dr_workload_init(&wl);
    dr_err_t err;
    assert_int_equal(dr_trace_load(DR_TRACE_DROVER, "/nonexistent/x.csv", NULL, &wl, &err), DR_EIO);
    dr_workload_free(&wl);
}

/* ------------------------------------------------------------------ */
/* Gavel                                                               */

static void test_gavel_throughputs(void **state)
{
    (void)state;
    dr_perf_table_t p;
    dr_err_t err = {0};
    assert_int_equal(dr_gavel_throughputs_builtin(&p, &err), 0);
    assert_int_equal(p.ntypes, 3);
    assert_string_equal(p.type_names[0], "k80");
    assert_string_equal(p.type_names[1], "p100");
    assert_string_equal(p.type_names[2], "v100");
    assert_int_equal(p.nclasses, 84); /* 83 rows + class 0 */
    int k = dr_perf_find_class(&p, "ResNet-50 (batch size 128) x2");
    assert_true(k > 0);
    assert_true(p.rate[k * 3 + 0] == 0.0);
    assert_true(p.rate[k * 3 + 2] == 4.223);
    dr_perf_free(&p);

    const char *good = "job_type,scale_factor,a,b\n\"X, y\",1,1.5,0\nX,2,3,0.5\n";
    assert_int_equal(dr_gavel_throughputs_parse(&p, "t.csv", good, strlen(good), &err), 0);
    assert_int_equal(dr_perf_find_class(&p, "X, y x1"), 1);
    assert_true(p.rate[2 * 2 + 1] == 0.5);
    dr_perf_free(&p);

    struct {
        const char *text, *want;
    } bad[] = {
        {"", "t.csv: no header line"},
        {"type,scale,a\n", "t.csv:1: header: expected job_type,scale_factor"},
        {"job_type,scale_factor,a\nX,1,-2\n", "t.csv:2: a: '-2' must be a number >= 0"},
        {"job_type,scale_factor,a\nX,0,2\n", "t.csv:2: scale_factor: '0' must be a whole number"},
        {"job_type,scale_factor,a\nX,1,2\nX,1,3\n", "t.csv:3: duplicate class 'X x1'"},
        {"job_type,scale_factor,a\nX,1\n", "t.csv:2: expected 3 fields, got 2"},
        {"job_type,scale_factor,a\n,1,2\n", "t.csv:2: job_type: missing"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        assert_int_equal(
            dr_gavel_throughputs_parse(&p, "t.csv", bad[i].text, strlen(bad[i].text), &err),
            DR_EINVAL);
        tu_assert_contains(err.msg, bad[i].want);
        assert_int_equal(p.nclasses, 1); /* left empty */
        dr_perf_free(&p);
    }
}

static double class_rate(const dr_workload_t *wl, uint32_t k, int col)
{
    return wl->perf.rate[(size_t)k * wl->perf.ntypes + (size_t)col];
}

static void test_gavel_basic(void **state)
{
    (void)state;
    const char *text =
        "ResNet-18 (batch size 16)\tpython3 main.py\t--num_steps\t1\t1000\t10.000000\t1\n"
        "LM (batch size 5)\tcmd\t--steps\t1\t500\t0.000000\t4\n"
        "\n"
        "A3C\tcmd\t--max-steps\t0\t700.0\t25.5\t4\n";
    dr_workload_t wl;
    dr_err_t err;
    assert_int_equal(parse(DR_TRACE_GAVEL, "x.trace", text, &wl, &err), 0);
    assert_int_equal(wl.njobs, 3);
    assert_int_equal(wl.perf.ntypes, 3);

    const dr_job_t *lm = &wl.jobs[0], *rn = &wl.jobs[1], *a3 = &wl.jobs[2];
    assert_int_equal(lm->id, 2);
    assert_int_equal(rn->id, 1);
    assert_int_equal(a3->id, 3);
    assert_int_equal(lm->submit, 0);
    assert_int_equal(rn->submit, S(10));
    assert_int_equal(a3->submit, S(25.5));
    assert_int_equal(rn->perf_class, dr_perf_find_class(&wl.perf, "ResNet-18 (batch size 16) x1"));
    assert_int_equal(lm->perf_class, dr_perf_find_class(&wl.perf, "LM (batch size 5) x4"));
    assert_true(wl.work[rn - wl.jobs] == 1000);
    assert_true(wl.work[lm - wl.jobs] == 500);
    assert_int_equal(rn->req.nodes, 0);
    assert_int_equal(rn->req.gpus_per_node, 1);
    assert_int_equal(lm->req.gpus_per_node, 4);
    assert_int_equal(lm->req.gpu_milli, 1000);
    assert_int_equal(rn->kind, DR_KIND_TRAIN);
    assert_int_equal(rn->priority, 0);
    assert_int_equal(rn->deadline, 0);
    /* readers declare nothing; a walltime of factor 1 x steps / slowest
     * positive rate (K80 4.7953 steps/s) is what dr_workload_declare gives */
    assert_int_equal(rn->time_limit, 0);
    declare_exact(&wl, 1);
    assert_int_equal(rn->time_limit, S(1000 / 4.7953));
    assert_int_equal(lm->time_limit, S(500 / 44.0895));

    /* A3C was measured at x1 only: x4 is derived by linear scaling */
    int k1 = dr_perf_find_class(&wl.perf, "A3C x1"), k4 = dr_perf_find_class(&wl.perf, "A3C x4");
    assert_true(k1 > 0 && k4 > 0);
    assert_int_equal(a3->perf_class, k4);
    for (int c = 0; c < 3; c++)
        assert_true(fabs(class_rate(&wl, (uint32_t)k4, c) - 4 * class_rate(&wl, (uint32_t)k1, c)) <
                    1e-12);
    assert_true(class_rate(&wl, (uint32_t)k4, 2) == 4 * 7.1758);
    assert_int_equal(wl.users.n, 1);
    assert_string_equal(dr_strtab_get(&wl.users, rn->user), "unknown");
    dr_workload_free(&wl);
}

static void test_gavel_layouts(void **state)
{
    (void)state;
    /* 10 fields (physical cluster), 9 fields (older parse_trace) */
    const char *text =
        "Transformer (batch size 16)\tcmd\ttranslation\t-step\t1\t11005\t2\t5\t1.2\t30\n"
        "A3C\tcmd\t--max-steps\t0\t1000\t1\t1\t-1.000000\t5\n";
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    dr_workload_t wl;
    dr_err_t err;
    assert_int_equal(parse_opts(DR_TRACE_GAVEL, "p.trace", text, &o, &wl, &err), 0);
    declare_exact(&wl, 2.5);
    assert_int_equal(wl.njobs, 2);
    const dr_job_t *a3 = &wl.jobs[0], *tr = &wl.jobs[1];
    assert_int_equal(a3->submit, 0); /* 5 s shifted to the first arrival */
    assert_int_equal(tr->submit, S(25));
    assert_int_equal(a3->priority, 1);
    assert_int_equal(a3->deadline, 0);
    assert_int_equal(a3->req.gpus_per_node, 1);
    assert_int_equal(a3->time_limit, S(2.5 * 1000 / 3.4388));
    assert_int_equal(tr->priority, 5);
    assert_int_equal(tr->req.gpus_per_node, 2);
    assert_true(wl.work[tr - wl.jobs] == 11005);
    /* SLO 1.2 x the isolated duration on the fastest GPU (P100 14.3053) */
    assert_int_equal(tr->deadline, tr->submit + S(1.2 * 11005 / 14.3053));
    assert_int_equal(tr->time_limit, S(2.5 * 11005 / 7.0475));
    dr_workload_free(&wl);

    /* max_jobs */
    o.max_jobs = 1;
    assert_int_equal(parse_opts(DR_TRACE_GAVEL, "p.trace", text, &o, &wl, &err), 0);
    assert_int_equal(wl.njobs, 1);
    assert_true(wl.work[0] == 11005);
    dr_workload_free(&wl);

    /* a throughput table of one's own; columns are kept as given */
    dr_perf_table_t tp;
    const char *csv = "job_type,scale_factor,A100,H100\nfoo,1,2,4\n";
    assert_int_equal(dr_gavel_throughputs_parse(&tp, "tp.csv", csv, strlen(csv), &err), 0);
    dr_trace_opts_default(&o);
    o.gavel_throughputs = &tp;
    assert_int_equal(
        parse_opts(DR_TRACE_GAVEL, "f.trace", "foo\tc\t-n\t1\t40\t0\t2\n", &o, &wl, &err), 0);
    assert_string_equal(wl.perf.type_names[1], "H100");
    assert_string_equal(wl.perf.class_names[wl.jobs[0].perf_class], "foo x2");
    assert_true(class_rate(&wl, wl.jobs[0].perf_class, 1) == 8);
    assert_int_equal(wl.jobs[0].time_limit, 0);
    /* appending a trace with other columns to this workload is refused */
    memset(&err, 0, sizeof err);
    const char *t2 = "A3C\tc\t-n\t1\t40\t0\t1\n";
    assert_int_equal(dr_trace_parse(DR_TRACE_GAVEL, "g.trace", t2, strlen(t2), NULL, &wl, &err),
                     DR_ESTATE);
    tu_assert_contains(err.msg, "g.trace: the workload already has a perf table");
    dr_workload_free(&wl);
    dr_perf_free(&tp);
}

static void test_gavel_errors(void **state)
{
    (void)state;
    const char *ok = "A3C\tc\t-n\t1\t100\t0\t1\n";
    char text[1024];
    struct {
        const char *line, *want;
    } bad[] = {
        {"A3C\tc\t-n\t1\tabc\t0\t1\n", "x.trace:3: total_steps: 'abc' is not a number"},
        {"A3C\tc\t-n\t1\t0\t0\t1\n", "x.trace:3: total_steps: '0' must be > 0"},
        {"A3C\tc\t-n\t1\t-4\t0\t1\n", "x.trace:3: total_steps: '-4' must be >= 0"},
        {"A3C\tc\t-n\t1\t\t0\t1\n", "x.trace:3: total_steps: missing"},
        {"A3C\tc\t-n\t1\t10\t-1\t1\n", "x.trace:3: arrival_time: '-1' must be >= 0"},
        {"A3C\tc\t-n\t1\t10\t0\t0\n", "x.trace:3: scale_factor: '0' must be >= 1"},
        {"A3C\tc\t-n\t1\t10\t0\t1.5\n", "x.trace:3: scale_factor: '1.5' is not a whole number"},
        {"Foo (batch size 1)\tc\t-n\t1\t10\t0\t1\n",
         "x.trace:3: job_type: unknown job type 'Foo (batch size 1)'"},
        {"\tc\t-n\t1\t10\t0\t1\n", "x.trace:3: job_type: missing"},
        {"A3C\tc\t-n\t1\t10\n", "x.trace:3: expected 7, 9 or 10 tab-separated fields, got 5"},
        {"A3C\tc\t-n\t1\t10\t1\t-1\t-1\t0\n", "x.trace:3: priority_weight: '-1' must be >= 0"},
        {"A3C\tc\t-n\t1\t10\t1\t1\tx\t0\n", "x.trace:3: SLO: 'x' is not a number"},
        {"A3C\tc\t-n\t1\t10\t\"0\t1\n", "x.trace:3: unterminated quote"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s%s", ok, ok, bad[i].line);
        expect_error(DR_TRACE_GAVEL, "x.trace", text, bad[i].want);
    }
    /* a class every GPU of which has rate 0 */
    dr_perf_table_t tp;
    dr_err_t err;
    const char *csv = "job_type,scale_factor,a\nzero,1,0\n";
    assert_int_equal(dr_gavel_throughputs_parse(&tp, "tp.csv", csv, strlen(csv), &err), 0);
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    o.gavel_throughputs = &tp;
    dr_workload_t wl;
    assert_int_equal(
        parse_opts(DR_TRACE_GAVEL, "z.trace", "zero\tc\t-n\t1\t4\t0\t1\n", &o, &wl, &err),
        DR_EINVAL);
    tu_assert_contains(err.msg, "z.trace:1: job_type: 'zero' x1 runs on no GPU");
    dr_workload_free(&wl);
    dr_perf_free(&tp);
}

static void test_gavel_lenient(void **state)
{
    (void)state;
    const char *text = "A3C\tc\t-n\t1\t100\t0\t1\n"
                       "A3C\tc\t-n\t1\tx\t0\t1\n"
                       "Nope\tc\t-n\t1\t100\t0\t1\n"
                       "A3C\tc\t-n\t1\t100\t3\t2\n"
                       "short\n";
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    o.lenient = true;
    dr_workload_t wl;
    dr_err_t err;
    assert_int_equal(parse_opts(DR_TRACE_GAVEL, "l.trace", text, &o, &wl, &err), 0);
    assert_int_equal(wl.njobs, 2);
    assert_int_equal(wl.skipped, 3);
    assert_string_equal(wl.first_skip, "l.trace:2: total_steps: 'x' is not a number");
    assert_int_equal(wl.jobs[1].submit, S(3));
    dr_workload_free(&wl);
}

static size_t count_lines(const char *path)
{
    size_t len, n = 0;
    char *b = tu_read(path, &len);
    for (size_t i = 0; i < len; i++)
        n += b[i] == '\n';
    if (len && b[len - 1] != '\n')
        n++;
    free(b);
    return n;
}

static void check_sorted(const dr_workload_t *wl)
{
    for (size_t i = 1; i < wl->njobs; i++) {
        assert_true(wl->jobs[i - 1].submit <= wl->jobs[i].submit);
        if (wl->jobs[i - 1].submit == wl->jobs[i].submit)
            assert_true(wl->jobs[i - 1].id < wl->jobs[i].id);
    }
}

static void test_gavel_real(void **state)
{
    (void)state;
    if (!tu_have_shared())
        skip();
    const char *dirs[] = {"data/traces/gavel/msr/seed=0", "data/traces/gavel/physical_cluster"};
    size_t nfiles = 0;
    for (int d = 0; d < 2; d++) {
        DIR *dir = opendir(tu_shared_path(dirs[d]));
        assert_non_null(dir);
        struct dirent *e;
        while ((e = readdir(dir))) {
            size_t n = strlen(e->d_name);
            if (n < 7 || strcmp(e->d_name + n - 6, ".trace") != 0)
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", tu_shared_path(dirs[d]), e->d_name);
            dr_workload_t wl;
            dr_err_t err = {0};
            dr_workload_init(&wl);
            int rc = dr_trace_load(DR_TRACE_GAVEL, path, NULL, &wl, &err);
            if (rc != 0)
                fail_msg("%s: %s", path, err.msg);
            assert_int_equal(wl.njobs, count_lines(path));
            assert_int_equal(wl.skipped, 0);
            assert_int_equal(wl.jobs[0].submit, 0);
            check_sorted(&wl);
            for (size_t i = 0; i < wl.njobs; i++) {
                assert_true(wl.jobs[i].perf_class > 0);
                assert_true(wl.work[i] > 0);
                assert_true(wl.jobs[i].time_limit == 0); /* declared later, not read */
            }
            dr_workload_free(&wl);
            nfiles += d == 0;
        }
        closedir(dir);
    }
    assert_int_equal(nfiles, 15);

    /* the throughput columns bind to Gavel's cluster: v100, p100, k80 */
    dr_catalog_t cat = {0};
    dr_err_t cerr = {0};
    assert_int_equal(dr_catalog_builtin(&cat, &cerr), 0);
    dr_cluster_t c;
    dr_cluster_init(&c);
    assert_int_equal(dr_cluster_preset(&c, &cat, "gavel-36-36-36", &cerr), 0);
    dr_perf_table_t tp;
    assert_int_equal(dr_gavel_throughputs_builtin(&tp, &cerr), 0);
    int map[DR_MAX_GPU_TYPES];
    assert_int_equal(dr_perf_bind(&tp, &c, map, &cerr), 0);
    for (size_t t = 0; t < c.ntypes; t++) {
        assert_true(map[t] >= 0);
        /* "V100-SXM2-16GB" -> "v100" etc. */
        assert_true(strncasecmp(c.types[t].name, tp.type_names[map[t]], 3) == 0);
    }
    assert_int_equal(c.ntypes, 3);
    dr_perf_free(&tp);
    dr_cluster_free(&c);
    dr_catalog_free(&cat);

    /* the copy shipped in data/ for the demo */
    dr_workload_t wl;
    dr_err_t err = {0};
    dr_workload_init(&wl);
    assert_int_equal(dr_trace_load(DR_TRACE_GAVEL,
                                   tu_src_path("data/traces/gavel-msr-seed0-b436b2.trace"), NULL,
                                   &wl, &err),
                     0);
    assert_int_equal(wl.njobs, 2000);
    dr_workload_free(&wl);
}

/* ------------------------------------------------------------------ */
/* Philly                                                              */

static void test_philly_basic(void **state)
{
    (void)state;
    const char *text = "timestamp,duration,num_gpus,gpu_time,cluster\n"
                       "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
                       "2016-02-28 23:59:59,10,2,20,vcB\n"
                       "2016-03-01 00:00:00,5.5,8,44,11cb48\n"
                       "\n";
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    dr_workload_t wl;
    dr_err_t err;
    assert_int_equal(parse_opts(DR_TRACE_PHILLY, "philly.csv", text, &o, &wl, &err), 0);
    declare_exact(&wl, 2);
    assert_int_equal(wl.njobs, 3);
    const dr_job_t *a = &wl.jobs[0], *b = &wl.jobs[1], *c = &wl.jobs[2];
    assert_int_equal(a->id, 2);
    assert_int_equal(b->id, 3);
    assert_int_equal(c->id, 1);
    assert_int_equal(a->submit, 0);
    assert_int_equal(b->submit, S(86401)); /* 2016 is a leap year */
    assert_int_equal(c->submit, S(50828516));
    assert_true(wl.work[a - wl.jobs] == 10);
    assert_true(wl.work[b - wl.jobs] == 5.5);
    assert_int_equal(a->time_limit, S(20));
    assert_int_equal(b->time_limit, S(11));
    assert_int_equal(a->perf_class, 0);
    assert_int_equal(a->req.nodes, 0);
    assert_int_equal(a->req.gpus_per_node, 2);
    assert_int_equal(b->req.gpus_per_node, 8);
    assert_int_equal(a->req.gpu_milli, 1000);
    assert_int_equal(a->kind, DR_KIND_TRAIN);
    assert_string_equal(dr_strtab_get(&wl.accounts, a->account), "vcB");
    assert_string_equal(dr_strtab_get(&wl.accounts, b->account), "11cb48");
    assert_int_equal(b->account, c->account);
    assert_string_equal(dr_strtab_get(&wl.users, a->user), "unknown");
    dr_workload_free(&wl);

    /* max_jobs keeps the earliest rows; columns found by name in any order */
    const char *t2 = "num_gpus,timestamp,duration\n"
                     "1,2017-01-01 00:00:10,5\n"
                     "2,2016-12-31 23:59:59,6\n"
                     "4,2017-01-01 00:00:00,7\n";
    o.max_jobs = 2;
    assert_int_equal(parse_opts(DR_TRACE_PHILLY, "p.csv", t2, &o, &wl, &err), 0);
    assert_int_equal(wl.njobs, 2);
    assert_int_equal(wl.jobs[0].req.gpus_per_node, 2);
    assert_int_equal(wl.jobs[1].req.gpus_per_node, 4);
    assert_int_equal(wl.jobs[1].submit, S(1)); /* across the year boundary */
    assert_int_equal(wl.jobs[1].time_limit, 0);
    assert_string_equal(dr_strtab_get(&wl.accounts, wl.jobs[0].account), "unknown");
    dr_workload_free(&wl);
}

static void test_philly_errors(void **state)
{
    (void)state;
    const char *hdr = "timestamp,duration,num_gpus,gpu_time,cluster\n"
                      "2017-10-09 07:01:55,66.0,1,66.0,vc\n";
    char text[1024];
    struct {
        const char *line, *want;
    } bad[] = {
        {"2017-10-09 07:01:55,-5,1,0,vc\n", "philly.csv:3: duration: '-5' must be >= 0"},
        {"2017-10-09 07:01:55,abc,1,0,vc\n", "philly.csv:3: duration: 'abc' is not a number"},
        {"2017-10-09 07:01:55,5,0,0,vc\n", "philly.csv:3: num_gpus: '0' must be >= 1"},
        {"2017-10-09 07:01:55,5,1.5,0,vc\n", "philly.csv:3: num_gpus: '1.5' is not a whole number"},
        {"2017-13-09 07:01:55,5,1,0,vc\n",
         "philly.csv:3: timestamp: '2017-13-09 07:01:55' is not YYYY-MM-DD HH:MM:SS"},
        {"2017-02-29 07:01:55,5,1,0,vc\n", "philly.csv:3: timestamp: '2017-02-29 07:01:55'"},
        {"2017-10-09 24:00:00,5,1,0,vc\n", "philly.csv:3: timestamp"},
        {"2017/10/09 07:01:55,5,1,0,vc\n", "philly.csv:3: timestamp"},
        {"1969-12-31 23:59:59,5,1,0,vc\n",
         "philly.csv:3: timestamp: '1969-12-31 23:59:59': the year must be 1970..2199"},
        {",5,1,0,vc\n", "philly.csv:3: timestamp: missing"},
        {"2017-10-09 07:01:55,5\n", "philly.csv:3: expected at least 3 fields, got 2"},
        {"2017-10-09 07:01:55,5,\"1,0,vc\n", "philly.csv:3: unterminated quote"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s", hdr, bad[i].line);
        expect_error(DR_TRACE_PHILLY, "philly.csv", text, bad[i].want);
    }
    expect_error(DR_TRACE_PHILLY, "philly.csv", "timestamp,num_gpus\n2017-10-09 07:01:55,1\n",
                 "philly.csv:1: header: missing column 'duration'");
    expect_error(DR_TRACE_PHILLY, "philly.csv", "", "philly.csv: no header line");

    /* lenient */
    snprintf(text, sizeof text, "%s%s%s%s", hdr, bad[0].line, bad[2].line,
             "2017-10-09 08:01:55,60,2,120,vc\n");
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    o.lenient = true;
    dr_workload_t wl;
    dr_err_t err;
    assert_int_equal(parse_opts(DR_TRACE_PHILLY, "philly.csv", text, &o, &wl, &err), 0);
    assert_int_equal(wl.njobs, 2);
    assert_int_equal(wl.skipped, 2);
    assert_string_equal(wl.first_skip, "philly.csv:3: duration: '-5' must be >= 0");
    assert_int_equal(wl.jobs[1].submit, S(3600));
    dr_workload_free(&wl);
}

static void test_philly_real(void **state)
{
    (void)state;
    if (!tu_have_shared())
        skip();
    dr_workload_t wl;
    dr_err_t err = {0};
    dr_workload_init(&wl);
    int rc = dr_trace_load(DR_TRACE_PHILLY, tu_shared_path("data/traces/philly/philly_jobs.csv"),
                           NULL, &wl, &err);
    if (rc != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(wl.njobs, 82247);
    assert_int_equal(wl.skipped, 0);
    assert_int_equal(wl.jobs[0].submit, 0);
    check_sorted(&wl);
    assert_int_equal(wl.accounts.n, 15); /* virtual clusters */
    uint64_t gpus = 0;
    for (size_t i = 0; i < wl.njobs; i++) {
        assert_true(wl.jobs[i].req.gpus_per_node >= 1);
        assert_true(wl.jobs[i].time_limit == 0); /* declared later, not read */
        gpus += wl.jobs[i].req.gpus_per_node;
    }
    assert_int_equal(gpus, 76627 + 2 * 1818 + 4 * 1870 + 8 * 1643 + 12 * 7 + 16 * 199 + 24 * 7 +
                               32 * 67 + 64 * 6 + 128 * 3);
    /* the last arrival: 2017-12-?? minus 2017-09-?? - roughly 3 months */
    assert_true(wl.jobs[wl.njobs - 1].submit > S(80 * 86400));
    assert_true(wl.jobs[wl.njobs - 1].submit < S(120 * 86400));
    dr_workload_free(&wl);
}

/* ------------------------------------------------------------------ */
/* openb                                                               */

#define OPENB_HDR                                                                                  \
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"            \
    "deletion_time,scheduled_time\n"

static void test_openb_basic(void **state)
{
    (void)state;
    const char *text = OPENB_HDR "p0,12000,16384,1,1000,,LS,Running,100,1000,100\n"
                                 "p1,6000,12288,1,460,T4|V100M16,LS,Pending,50,80,\n"
                                 "p2,4000,8192,0,0,nan,BE,Succeeded,200,260,210\n"
                                 "p3,8000,8192,2,1500,,LS,Running,300,400,0\n"
                                 "p4,8000,8192,1,0,G2,LS,Running,300,400,310\n";
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    dr_workload_t wl;
    dr_err_t err;
    assert_int_equal(parse_opts(DR_TRACE_OPENB, "pods.csv", text, &o, &wl, &err), 0);
    declare_exact(&wl, 3);
    assert_int_equal(wl.njobs, 5);
    const dr_job_t *p1 = &wl.jobs[0], *p0 = &wl.jobs[1], *p2 = &wl.jobs[2], *p3 = &wl.jobs[3],
                   *p4 = &wl.jobs[4];
    assert_int_equal(p0->id, 1);
    assert_int_equal(p1->id, 2);
    assert_int_equal(p4->id, 5);
    /* submit: creation, shifted so the first pod arrives at 0 */
    assert_int_equal(p1->submit, 0);
    assert_int_equal(p0->submit, S(50));
    assert_int_equal(p2->submit, S(150));
    assert_int_equal(p3->submit, S(250));
    /* runtime: deletion - scheduled (creation when scheduled is empty or 0) */
    assert_true(wl.work[p0 - wl.jobs] == 900);
    assert_true(wl.work[p1 - wl.jobs] == 30);
    assert_true(wl.work[p2 - wl.jobs] == 50);
    assert_true(wl.work[p3 - wl.jobs] == 100);
    assert_true(wl.work[p4 - wl.jobs] == 90);
    assert_int_equal(p1->time_limit, S(90));
    /* shape */
    assert_int_equal(p0->req.nodes, 1);
    assert_int_equal(p0->req.gpus_per_node, 1);
    assert_int_equal(p0->req.gpu_milli, 1000);
    assert_int_equal(p0->req.cpu_milli_per_node, 12000);
    assert_int_equal(p0->req.mem_mb_per_node, 16384);
    assert_int_equal(p1->req.gpu_milli, 460);
    assert_int_equal(p2->req.gpus_per_node, 0);
    assert_int_equal(p3->req.gpus_per_node, 2);
    assert_int_equal(p3->req.gpu_milli, 1000); /* 1500 clamped */
    assert_int_equal(p4->req.gpu_milli, 1000); /* 0 on a GPU pod = whole */
    assert_int_equal(p0->kind, DR_KIND_BATCH);
    assert_int_equal(p0->perf_class, 0);
    /* type sets */
    assert_string_equal(typeset_of(&wl, 0), "T4|V100M16");
    assert_null(typeset_of(&wl, 1));
    assert_null(typeset_of(&wl, 2)); /* "nan" */
    assert_string_equal(typeset_of(&wl, 4), "G2");
    dr_workload_free(&wl);

    /* multigpu variants: no time columns, pods never leave */
    const char *t2 = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                     "a,1000,100,1,500\n"
                     "b,2000,200,8,1000\n";
    assert_int_equal(parse(DR_TRACE_OPENB, "m.csv", t2, &wl, &err), 0);
    assert_int_equal(wl.njobs, 2);
    assert_int_equal(wl.jobs[0].submit, 0);
    assert_int_equal(wl.jobs[1].submit, 0);
    assert_int_equal(wl.jobs[0].id, 1);
    assert_true(isinf(wl.work[0]));
    assert_int_equal(wl.jobs[0].time_limit, 0);
    assert_int_equal(wl.jobs[0].req.gpu_milli, 500);
    assert_int_equal(wl.jobs[1].req.gpus_per_node, 8);
    dr_workload_free(&wl);
}

static void test_openb_errors(void **state)
{
    (void)state;
    const char *ok = "p0,12000,16384,1,1000,,LS,Running,100,1000,100\n";
    char text[1024];
    struct {
        const char *line, *want;
    } bad[] = {
        {"p1,12000,16384,1,1000,,LS,Running,100,90,100\n",
         "pods.csv:3: deletion_time: '90' is before scheduled_time '100'"},
        {"p1,12000,16384,1,1000,,LS,Pending,100,90,\n",
         "pods.csv:3: deletion_time: '90' is before creation_time '100'"},
        {"p1,-1,16384,1,1000,,LS,Running,100,200,100\n",
         "pods.csv:3: cpu_milli: '-1' must be >= 0"},
        {"p1,1000,lots,1,1000,,LS,Running,100,200,100\n",
         "pods.csv:3: memory_mib: 'lots' is not a number"},
        {"p1,1000,10,2000,1000,,LS,Running,100,200,100\n",
         "pods.csv:3: num_gpu: '2000' must be <= 1024"},
        {"p1,1000,10,2,500,,LS,Running,100,200,100\n",
         "pods.csv:3: gpu_milli: a share of 500 milli-GPU needs exactly one GPU"},
        {"p1,1000,10,1,x,,LS,Running,100,200,100\n", "pods.csv:3: gpu_milli: 'x' is not a number"},
        {"p1,1000,10,1,500,,LS,Running,-3,200,100\n",
         "pods.csv:3: creation_time: '-3' must be >= 0"},
        {"p1,1000,10\n", "pods.csv:3: expected at least 5 fields, got 3"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s%s", OPENB_HDR, ok, bad[i].line);
        expect_error(DR_TRACE_OPENB, "pods.csv", text, bad[i].want);
    }
    expect_error(DR_TRACE_OPENB, "pods.csv", "name,cpu_milli,memory_mib,gpu_milli\n",
                 "pods.csv:1: header: missing column 'num_gpu'");
    expect_error(DR_TRACE_OPENB, "pods.csv", "\n\n", "pods.csv: no header line");

    snprintf(text, sizeof text, "%s%s%s%s", OPENB_HDR, bad[0].line, ok, bad[2].line);
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    o.lenient = true;
    dr_workload_t wl;
    dr_err_t err;
    assert_int_equal(parse_opts(DR_TRACE_OPENB, "pods.csv", text, &o, &wl, &err), 0);
    assert_int_equal(wl.njobs, 1);
    assert_int_equal(wl.skipped, 2);
    tu_assert_contains(wl.first_skip, "pods.csv:2: deletion_time");
    dr_workload_free(&wl);
}

static void test_openb_real(void **state)
{
    (void)state;
    if (!tu_have_shared())
        skip();
    dr_workload_t wl;
    dr_err_t err = {0};
    dr_workload_init(&wl);
    int rc = dr_trace_load(DR_TRACE_OPENB,
                           tu_shared_path("data/traces/openb/openb_pod_list_default.csv"), NULL,
                           &wl, &err);
    if (rc != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(wl.njobs, 8152);
    assert_int_equal(wl.skipped, 0);
    check_sorted(&wl);
    size_t cpu_only = 0, share = 0;
    for (size_t i = 0; i < wl.njobs; i++) {
        const dr_job_req_t *r = &wl.jobs[i].req;
        assert_true(r->gpu_milli >= 1 && r->gpu_milli <= 1000);
        assert_true(wl.work[i] >= 0 && isfinite(wl.work[i]));
        cpu_only += r->gpus_per_node == 0;
        share += r->gpus_per_node == 1 && r->gpu_milli < 1000;
        /* arrival order is the file order here (creation times ascend) */
        assert_int_equal(wl.jobs[i].id, i + 1);
    }
    assert_int_equal(cpu_only, 1088);
    assert_true(share > 2000);
    dr_workload_free(&wl);

    /* the multigpu variants have no time columns */
    dr_workload_init(&wl);
    assert_int_equal(
        dr_trace_load(DR_TRACE_OPENB,
                      tu_shared_path("data/traces/openb/openb_pod_list_multigpu20.csv"), NULL, &wl,
                      &err),
        0);
    assert_int_equal(wl.njobs, 8324);
    dr_workload_free(&wl);

    /* every GPU model named by the gpuspec variants exists in the openb cluster */
    dr_catalog_t cat = {0};
    assert_int_equal(dr_catalog_builtin(&cat, &err), 0);
    dr_cluster_t c;
    dr_cluster_init(&c);
    rc = dr_cluster_preset(&c, &cat, "openb", &err);
    if (rc != 0)
        fail_msg("openb preset: %s", err.msg);
    const char *variants[] = {"gpuspec05", "gpuspec10", "gpuspec20", "default"};
    for (int v = 0; v < 4; v++) {
        char rel[256];
        snprintf(rel, sizeof rel, "data/traces/openb/openb_pod_list_%s.csv", variants[v]);
        dr_workload_init(&wl);
        assert_int_equal(dr_trace_load(DR_TRACE_OPENB, tu_shared_path(rel), NULL, &wl, &err), 0);
        assert_int_equal(wl.njobs, 8152);
        assert_true(v == 3 || wl.typesets.n > 5);
        rc = dr_workload_bind(&wl, &c, false, &err);
        if (rc != 0)
            fail_msg("%s: %s", variants[v], err.msg);
        for (size_t i = 0; i < wl.njobs; i++)
            if (wl.typeset[i])
                assert_true(dr_cluster_eligible_types(&c, &wl.jobs[i].req) != 0);
        dr_workload_free(&wl);
    }
    dr_cluster_free(&c);
    dr_catalog_free(&cat);
}

/* ------------------------------------------------------------------ */
/* drover CSV                                                          */

static void test_drover_basic(void **state)
{
    (void)state;
    const char *text =
        "# a comment\n"
        "submit_s,duration_s,user,account,kind,nodes,gpus_per_node,gpu_milli,gpu_types,"
        "min_gpu_mem_gb,cpus,mem_gb,time_limit_s,deadline_s,priority,params,tokens,precision\n"
        "10,3600,alice,nlp,train,2,8,,H100|H200,40,96.5,1024,4h,20000,7,7B,1.4e11,bf16\n"
        "# another\n"
        "5,60.5,bob,,,,,250,any,,,,,,,,,\n"
        "7,0,alice,nlp,serve,0,16,,,,,,,,,,,\n";
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    dr_workload_t wl;
    dr_err_t err;
    assert_int_equal(parse_opts(DR_TRACE_DROVER, "w.csv", text, &o, &wl, &err), 0);
    declare_exact(&wl, 2);
    assert_int_equal(wl.njobs, 3);
    const dr_job_t *b = &wl.jobs[0], *c = &wl.jobs[1], *a = &wl.jobs[2];
    assert_int_equal(a->id, 1);
    assert_int_equal(b->id, 2);
    assert_int_equal(c->id, 3);
    assert_int_equal(a->submit, S(10)); /* not shifted: times are from trace start */
    assert_int_equal(b->submit, S(5));
    assert_true(wl.work[a - wl.jobs] == 3600);
    assert_int_equal(a->perf_class, 0);
    assert_int_equal(a->kind, DR_KIND_TRAIN);
    assert_int_equal(a->req.nodes, 2);
    assert_int_equal(a->req.gpus_per_node, 8);
    assert_int_equal(a->req.gpu_milli, 1000);
    assert_true(a->req.min_gpu_mem_gb == 40);
    assert_int_equal(a->req.cpu_milli_per_node, 96500);
    assert_int_equal(a->req.mem_mb_per_node, 1024 * 1024);
    assert_int_equal(a->time_limit, S(4 * 3600));
    assert_int_equal(a->deadline, S(20000));
    assert_int_equal(a->priority, 7);
    assert_true(a->hint_params == 7e9);
    assert_true(a->hint_tokens == 1.4e11);
    assert_int_equal(a->precision, DR_PREC_BF16);
    assert_string_equal(typeset_of(&wl, 2), "H100|H200");
    assert_string_equal(dr_strtab_get(&wl.users, a->user), "alice");
    assert_string_equal(dr_strtab_get(&wl.accounts, a->account), "nlp");
    /* defaults */
    assert_int_equal(b->kind, DR_KIND_BATCH);
    assert_int_equal(b->req.nodes, 1);
    assert_int_equal(b->req.gpus_per_node, 1);
    assert_int_equal(b->req.gpu_milli, 250);
    assert_int_equal(b->time_limit, S(121));
    assert_int_equal(b->deadline, 0);
    assert_int_equal(b->priority, 0);
    assert_int_equal(b->precision, DR_PREC_UNSET);
    assert_null(typeset_of(&wl, 0)); /* "any" */
    assert_string_equal(dr_strtab_get(&wl.accounts, b->account), "unknown");
    assert_int_equal(c->kind, DR_KIND_SERVE);
    assert_int_equal(c->req.nodes, 0);
    assert_int_equal(c->req.gpus_per_node, 16);
    assert_int_equal(c->user, a->user);
    dr_workload_free(&wl);
}

static void test_drover_arrays(void **state)
{
    (void)state;
    const char *text = "id,submit_s,duration_s,array,kind\n"
                       ",0,10,,\n"
                       "3,0,10,0-4:2%2,\n"
                       ",1,10,\"7,9\",train\n"
                       "50,1,10,,\n"
                       ",2,10,,\n";
    dr_workload_t wl;
    dr_err_t err;
    int rc = parse(DR_TRACE_DROVER, "a.csv", text, &wl, &err);
    if (rc != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(wl.njobs, 1 + 3 + 2 + 1 + 1);
    /* sorted by (submit, id): 1, 2, 3, 4 | 5, 6, 50 | 7 */
    const uint64_t ids[] = {1, 2, 3, 4, 5, 6, 50, 7};
    for (int i = 0; i < 8; i++)
        assert_int_equal(wl.jobs[i].id, ids[i]);
    /* row 1 is plain */
    assert_int_equal(wl.jobs[0].array_parent, 0);
    assert_int_equal(wl.jobs[0].kind, DR_KIND_BATCH);
    /* row 2: explicit id 3 for the first task, the others take free ids */
    const dr_job_t *t0 = &wl.jobs[2], *t1 = &wl.jobs[1], *t2 = &wl.jobs[3];
    assert_int_equal(t0->array_parent, 3);
    assert_int_equal(t0->array_index, 0);
    assert_int_equal(t1->array_parent, 3);
    assert_int_equal(t1->array_index, 2);
    assert_int_equal(t2->array_index, 4);
    assert_int_equal(t0->array_throttle, 2);
    assert_int_equal(t0->kind, DR_KIND_ARRAY);
    /* row 3: kind given, no id: parent = first task's id */
    assert_int_equal(wl.jobs[4].array_parent, 5);
    assert_int_equal(wl.jobs[4].array_index, 7);
    assert_int_equal(wl.jobs[5].array_index, 9);
    assert_int_equal(wl.jobs[5].array_parent, 5);
    assert_int_equal(wl.jobs[5].array_throttle, 0);
    assert_int_equal(wl.jobs[5].kind, DR_KIND_TRAIN);
    dr_workload_free(&wl);

    /* max_jobs stops inside an array */
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    o.max_jobs = 3;
    assert_int_equal(parse_opts(DR_TRACE_DROVER, "a.csv", text, &o, &wl, &err), 0);
    assert_int_equal(wl.njobs, 3);
    dr_workload_free(&wl);

    /* a step of 2^64-1 once wrapped the index around (103 tasks here) */
    rc =
        parse(DR_TRACE_DROVER, "a.csv",
              "submit_s,duration_s,array\n0,60,\"0,10,100-100:18446744073709551615\"\n", &wl, &err);
    if (rc != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(wl.njobs, 3);
    assert_int_equal(wl.jobs[2].array_index, 100);
    dr_workload_free(&wl);
}

static void test_drover_errors(void **state)
{
    (void)state;
    const char *hdr = "id,submit_s,duration_s,kind,nodes,gpus_per_node,gpu_milli,time_limit_s,"
                      "deadline_s,priority,array,params,precision,cpus\n"
                      ",0,10,,,,,,,,,,,\n";
    char text[1024];
    struct {
        const char *line, *want;
    } bad[] = {
        {",-1,10,,,,,,,,,,,\n", "w.csv:3: submit_s: '-1' must be >= 0"},
        {",,10,,,,,,,,,,,\n", "w.csv:3: submit_s: missing"},
        {",0,x,,,,,,,,,,,\n", "w.csv:3: duration_s: 'x' is not a number"},
        {"0,0,1,,,,,,,,,,,\n", "w.csv:3: id: '0' must be >= 1"},
        {",0,1,job,,,,,,,,,,\n", "w.csv:3: kind: 'job' is not train, serve, batch or array"},
        {",0,1,array,,,,,,,,,,\n", "w.csv:3: kind: 'array' needs an array range"},
        {",0,1,,0,0,,,,,,,,\n", "w.csv:3: nodes: 0 (any number of nodes) needs gpus >= 1"},
        {",0,1,,,2,500,,,,,,,\n", "w.csv:3: gpu_milli: a share of 500 milli-GPU needs exactly one"},
        {",0,1,,,,0,,,,,,,\n", "w.csv:3: gpu_milli: '0' must be >= 1"},
        {",0,1,,,,1001,,,,,,,\n", "w.csv:3: gpu_milli: '1001' must be <= 1000"},
        {",0,1,,1.5,,,,,,,,,\n", "w.csv:3: nodes: '1.5' is not a whole number"},
        {",0,1,,,,,soon,,,,,,\n", "w.csv:3: time_limit_s: 'soon' is not a duration"},
        {",0,1,,,,,nan-01:00:00,,,,,,\n",
         "w.csv:3: time_limit_s: 'nan-01:00:00' is not a duration (seconds, 90m, 2h, 1:30:00...): "
         "days: 'nan' is not a number"},
        {",0,1,,,,,1e400:00,,,,,,\n", "time_limit_s: '1e400:00' is not a duration"},
        {",50,1,,,,,,40,,,,,\n", "w.csv:3: deadline_s: '40' must be after submit_s '50'"},
        {",0,1,,,,,,,high,,,,\n", "w.csv:3: priority: 'high' is not a whole number"},
        {",0,1,,,,,,,,5-1,,,\n", "w.csv:3: array '5-1': range 5-1 is descending"},
        {",0,1,,,,,,,,x,,,\n", "w.csv:3: array 'x': expected a number"},
        {",0,1,,,,,,,,0-9:18446744073709551616,,,\n",
         "w.csv:3: array '0-9:18446744073709551616': step '18446744073709551616' is too large"},
        {",0,1,,,,,,,,0-9:0,,,\n", "w.csv:3: array '0-9:0': step must be >= 1"},
        {",0,1,,,,,,,,,7Q,,\n", "w.csv:3: params: '7Q' is not a count"},
        {",0,1,,,,,,,,,,fp64,\n", "w.csv:3: precision: 'fp64' is not fp32, fp16, bf16 or fp8"},
        {",0,1,,,,,,,,,,,-2\n", "w.csv:3: cpus: '-2' must be >= 0"},
        {",0,1,\"x\n", "w.csv:3: unterminated quote"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s", hdr, bad[i].line);
        expect_error(DR_TRACE_DROVER, "w.csv", text, bad[i].want);
    }
    expect_error(DR_TRACE_DROVER, "w.csv", "submit_s,duration_s,gpus\n",
                 "w.csv:1: header: unknown column 'gpus'");
    expect_error(DR_TRACE_DROVER, "w.csv", "# c\nsubmit_s,duration_s,SUBMIT_S\n",
                 "w.csv:2: header: column 'submit_s' appears twice");
    expect_error(DR_TRACE_DROVER, "w.csv", "submit_s,user\n",
                 "w.csv:1: header: missing column 'duration_s'");
    expect_error(DR_TRACE_DROVER, "w.csv", "# only a comment\n", "w.csv: no header line");
    expect_error(DR_TRACE_DROVER, "w.csv", "id,submit_s,duration_s\n4,0,1\n4,0,1\n",
                 "duplicate job id 4");

    /* lenient */
    snprintf(text, sizeof text, "%s%s%s%s", hdr, bad[2].line, bad[4].line, ",5,10,,,,,,,,,,,\n");
    dr_trace_opts_t o;
    dr_trace_opts_default(&o);
    o.lenient = true;
    dr_workload_t wl;
    dr_err_t err;
    assert_int_equal(parse_opts(DR_TRACE_DROVER, "w.csv", text, &o, &wl, &err), 0);
    assert_int_equal(wl.njobs, 2);
    assert_int_equal(wl.skipped, 2);
    assert_string_equal(wl.first_skip, "w.csv:3: duration_s: 'x' is not a number");
    assert_int_equal(wl.jobs[1].id, 2);
    dr_workload_free(&wl);
}

static void test_drover_example(void **state)
{
    (void)state;
    dr_workload_t wl;
    dr_err_t err = {0};
    dr_workload_init(&wl);
    int rc = dr_trace_load(DR_TRACE_DROVER, tu_src_path("tests/data/example.drover.csv"), NULL, &wl,
                           &err);
    if (rc != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(wl.njobs, 42);
    check_sorted(&wl);
    size_t kinds[DR_KIND_NKINDS] = {0}, shares = 0, deadlines = 0, tasks = 0;
    for (size_t i = 0; i < wl.njobs; i++) {
        const dr_job_t *j = &wl.jobs[i];
        kinds[j->kind]++;
        shares += j->req.gpu_milli < 1000;
        deadlines += j->deadline != 0;
        tasks += j->array_parent != 0;
        assert_true(j->id == 100 || (j->id >= 1 && j->id <= 41));
    }
    assert_int_equal(tasks, 25);
    assert_int_equal(kinds[DR_KIND_ARRAY], 25);
    assert_int_equal(kinds[DR_KIND_TRAIN], 8);
    assert_int_equal(kinds[DR_KIND_SERVE], 3);
    assert_int_equal(kinds[DR_KIND_BATCH], 6);
    assert_int_equal(deadlines, 3);
    assert_int_equal(shares, 4 + 5);
    assert_int_equal(wl.users.n, 11);

    /* its GPU type names all exist on the mixed-modern preset, not on Gavel's */
    dr_catalog_t cat = {0};
    assert_int_equal(dr_catalog_builtin(&cat, &err), 0);
    dr_cluster_t c;
    dr_cluster_init(&c);
    assert_int_equal(dr_cluster_preset(&c, &cat, "mixed-modern", &err), 0);
    rc = dr_workload_bind(&wl, &c, false, &err);
    if (rc != 0)
        fail_msg("%s", err.msg);
    size_t typed = 0;
    for (size_t i = 0; i < wl.njobs; i++) {
        if (!wl.typeset[i])
            continue;
        typed++;
        assert_true(wl.jobs[i].req.types != 0);
        assert_true(dr_cluster_eligible_types(&c, &wl.jobs[i].req) != 0);
    }
    assert_int_equal(typed, 6);
    dr_cluster_free(&c);
    dr_cluster_init(&c);
    assert_int_equal(dr_cluster_preset(&c, &cat, "gavel-36-36-36", &err), 0);
    assert_int_equal(dr_workload_bind(&wl, &c, false, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "job 1: gpu type 'H100' is not in the cluster");
    dr_cluster_free(&c);
    dr_catalog_free(&cat);
    dr_workload_free(&wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workload_finish), cmocka_unit_test(test_workload_bind),
        cmocka_unit_test(test_formats),         cmocka_unit_test(test_gavel_throughputs),
        cmocka_unit_test(test_gavel_basic),     cmocka_unit_test(test_gavel_layouts),
        cmocka_unit_test(test_gavel_errors),    cmocka_unit_test(test_gavel_lenient),
        cmocka_unit_test(test_gavel_real),      cmocka_unit_test(test_philly_basic),
        cmocka_unit_test(test_philly_errors),   cmocka_unit_test(test_philly_real),
        cmocka_unit_test(test_openb_basic),     cmocka_unit_test(test_openb_errors),
        cmocka_unit_test(test_openb_real),      cmocka_unit_test(test_drover_basic),
        cmocka_unit_test(test_drover_arrays),   cmocka_unit_test(test_drover_errors),
        cmocka_unit_test(test_drover_example),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
