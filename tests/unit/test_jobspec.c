/* test_jobspec.c - the job-field vocabulary: the table and its spellings,
 * every field's good and bad values (exact messages), the time formats,
 * script directives, JSON, whole-spec checks, the scheduler's view on a
 * small cluster, output path templates, and trace columns taken from the
 * table. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/jobspec.h"
#include "drover/workload.h"

#define S(x) ((dr_time_t)((x)*DR_NSEC_PER_SEC))

/* ------------------------------------------------------------------ */
/* the table                                                           */

static void test_table(void **state)
{
    (void)state;
    const dr_jobfield_t *const *l = dr_jobfield_list();
    size_t n = 0;
    for (; l[n]; n++) {
        assert_int_equal(l[n]->id, n);
        assert_ptr_equal(dr_jobfield_find(l[n]->name), l[n]);
        assert_ptr_equal(dr_jobfield_find(l[n]->opt), l[n]);
        char dashed[64];
        snprintf(dashed, sizeof dashed, "--%s", l[n]->opt);
        assert_ptr_equal(dr_jobfield_find(dashed), l[n]);
        if (l[n]->shopt) {
            char sh[3] = {'-', l[n]->shopt, 0};
            assert_ptr_equal(dr_jobfield_find(sh), l[n]);
        }
        if (l[n]->sbatch) {
            snprintf(dashed, sizeof dashed, "--%s", l[n]->sbatch);
            assert_ptr_equal(dr_jobfield_find(dashed), l[n]);
        }
        assert_true(l[n]->takes_value == (n != DR_JF_REQUEUE && n != DR_JF_EXCLUSIVE &&
                                          n != DR_JF_HOLD && n != DR_JF_TEST_ONLY));
        assert_non_null(l[n]->doc);
    }
    assert_int_equal(n, DR_JF_N);
    assert_string_equal(dr_jobfield_find("-N")->name, "nodes");
    assert_string_equal(dr_jobfield_find("-t")->name, "time_limit");
    assert_string_equal(dr_jobfield_find("--time")->name, "time_limit");
    assert_string_equal(dr_jobfield_find("--gres")->name, "gpus_per_node");
    assert_string_equal(dr_jobfield_find("gres")->name, "gpus_per_node");
    assert_string_equal(dr_jobfield_find("-c")->name, "cpus_per_node");
    assert_string_equal(dr_jobfield_find("--cpus-per-task")->name, "cpus_per_node");
    assert_string_equal(dr_jobfield_find("-D")->name, "chdir");
    assert_string_equal(dr_jobfield_find("-J")->name, "name");
    assert_string_equal(dr_jobfield_find("GPUS_PER_NODE")->name, "gpus_per_node"); /* headers */
    assert_null(dr_jobfield_find("--NODES")); /* options are exact */
    assert_string_equal(dr_jobfield_find("-n")->name, "ntasks");
    assert_string_equal(dr_jobfield_find("--no-requeue")->name, "requeue");
    assert_string_equal(dr_jobfield_find("-p")->name, "partition");
    assert_null(dr_jobfield_find("-x"));          /* Slurm's --exclude */
    assert_null(dr_jobfield_find("N"));           /* a short option has its dash */
    assert_null(dr_jobfield_find("--name"));      /* the option is --job-name */
    assert_null(dr_jobfield_find("--mail-type")); /* not a field: #SBATCH lists it as ignored */
    assert_null(dr_jobfield_find("--"));
    assert_null(dr_jobfield_find(""));
    assert_null(dr_jobfield_find(NULL));
}

/* ------------------------------------------------------------------ */
/* fields one by one                                                   */

static void set_ok(dr_jobspec_t *s, const char *field, const char *value)
{
    dr_err_t err = {0};
    if (dr_jobspec_set(s, field, value, &err) != DR_OK)
        fail_msg("set %s '%s': %s", field, value, err.msg);
}

static void test_set_good(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    assert_int_equal(s.kind, DR_KIND_BATCH);
    assert_false(s.kind_set);
    assert_int_equal(s.set, 0);

    set_ok(&s, "-J", "my job");
    assert_string_equal(s.name, "my job");
    set_ok(&s, "--job-name", " spaced ");
    assert_string_equal(s.name, " spaced "); /* free text is kept as given */
    assert_int_equal(s.set, DR_JF_BIT(DR_JF_NAME));

    set_ok(&s, "kind", "Train");
    assert_int_equal(s.kind, DR_KIND_TRAIN);
    assert_true(s.kind_set);

    set_ok(&s, "-N", "2-2");
    assert_int_equal(s.nodes, 2);
    set_ok(&s, "nodes", " 3 ");
    assert_int_equal(s.nodes, 3);
    set_ok(&s, "--nodes", "8.0");
    assert_int_equal(s.nodes, 8);

    set_ok(&s, "gpus_per_node", "H100:8");
    assert_int_equal(s.gpus_per_node, 8);
    assert_string_equal(s.gpu_type, "H100");
    assert_true(s.set & (DR_JF_BIT(DR_JF_GPU_TYPE)));
    set_ok(&s, "--gpus-per-node", "gpu:4");
    assert_int_equal(s.gpus_per_node, 4);
    assert_string_equal(s.gpu_type, "H100"); /* no type given: kept */
    set_ok(&s, "--gpus-per-node", "gpu:A100-80GB:2");
    assert_int_equal(s.gpus_per_node, 2);
    assert_string_equal(s.gpu_type, "A100-80GB");
    set_ok(&s, "--gpus-per-node", "any:2");
    assert_null(s.gpu_type);
    set_ok(&s, "--gres", "gpu");
    assert_int_equal(s.gpus_per_node, 1);
    set_ok(&s, "--gres", "gpu:2");
    assert_int_equal(s.gpus_per_node, 2);
    set_ok(&s, "--gres", "gpu:h100:4");
    assert_int_equal(s.gpus_per_node, 4);
    assert_string_equal(s.gpu_type, "h100");
    set_ok(&s, "--gres", "gpu:l4");
    assert_int_equal(s.gpus_per_node, 1);
    assert_string_equal(s.gpu_type, "l4");
    set_ok(&s, "-G", "16");
    assert_int_equal(s.gpus, 16);
    set_ok(&s, "gpus", "L4:1000000");
    assert_int_equal(s.gpus, 1000000);

    set_ok(&s, "--gpu-type", "H100, A100|L4");
    assert_string_equal(s.gpu_type, "H100,A100,L4");
    set_ok(&s, "gpu_type", "ANY");
    assert_null(s.gpu_type);
    assert_true(s.set & (DR_JF_BIT(DR_JF_GPU_TYPE)));

    set_ok(&s, "-c", "4");
    assert_int_equal(s.cpus_per_node, 4);
    set_ok(&s, "--cpus-per-task", "6");
    assert_int_equal(s.cpus_per_node, 6);
    set_ok(&s, "--cpus-per-node", "0");
    assert_int_equal(s.cpus_per_node, 0);

    const struct {
        const char *v;
        uint64_t mb;
    } mem[] = {{"16G", 16384},  {"16g", 16384}, {"512M", 512},
               {"1T", 1048576}, {"100", 100},   {"1K", 1},
               {"2049K", 3},    {"0", 0},       {"1125899906842624", 1ull << 50}};
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++) {
        set_ok(&s, "--mem", mem[i].v);
        assert_int_equal(s.mem_mb, mem[i].mb);
    }

    set_ok(&s, "-t", "90");
    assert_int_equal(s.time_limit, S(5400));
    set_ok(&s, "time_limit", "0.5s"); /* whole seconds, rounded up: a limit, not none */
    assert_int_equal(s.time_limit, S(1));
    set_ok(&s, "--deadline", "2h");
    assert_int_equal(s.deadline, S(7200));
    set_ok(&s, "--checkpoint-every", "30m");
    assert_int_equal(s.ckpt_every, S(1800));

    set_ok(&s, "-a", "0-9%2");
    assert_string_equal(s.array, "0-9%2");
    set_ok(&s, "-o", "out-%j.log");
    assert_string_equal(s.out_path, "out-%j.log");
    set_ok(&s, "-e", "err-%A_%a.log");
    assert_string_equal(s.err_path, "err-%A_%a.log");
    set_ok(&s, "-D", "/work/é");
    assert_string_equal(s.cwd, "/work/é");
    set_ok(&s, "-A", "nlp");
    assert_string_equal(s.account, "nlp");
    set_ok(&s, "--priority", "-7");
    assert_int_equal(s.priority, -7);
    set_ok(&s, "priority", "+2147483647");
    assert_int_equal(s.priority, INT32_MAX);
    set_ok(&s, "priority", "-2147483648");
    assert_int_equal(s.priority, INT32_MIN);
    assert_int_equal(s.set, (1u << (DR_JF_PRIORITY + 1)) - 1); /* every field so far given */
    set_ok(&s, "--launcher", "torchrun");
    assert_string_equal(s.launcher, "torchrun");
    set_ok(&s, "--shard", "seg-%3a");
    assert_string_equal(s.shard, "seg-%3a");
    dr_jobspec_free(&s);
    assert_null(s.name);
    assert_int_equal(s.set, 0);
}

static void expect_set_err(const char *field, const char *value, const char *want)
{
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    dr_err_t err = {0};
    int rc = dr_jobspec_set(&s, field, value, &err);
    if (rc == DR_OK)
        fail_msg("set %s '%s' succeeded, want \"%s\"", field, value ? value : "(null)", want);
    assert_int_equal(err.code, rc);
    if (strcmp(err.msg, want) != 0)
        fail_msg("set %s '%s':\n got: %s\nwant: %s", field, value ? value : "(null)", err.msg,
                 want);
    assert_int_equal(s.set, 0); /* nothing given on failure */
    dr_jobspec_free(&s);
}

static void test_set_bad(void **state)
{
    (void)state;
    char longname[300];
    memset(longname, 'x', 256);
    longname[256] = '\0';
    const struct {
        const char *field, *value, *want;
    } bad[] = {
        {"--foo", "1", "--foo: unknown field"},
        {"-x", "1", "-x: unknown field"},
        {"nodes", NULL, "nodes: missing value"},
        {"nodes", " ", "nodes: empty value"},
        {"nodes", "x", "nodes: 'x' is not a whole number from 0 to 100000"},
        {"nodes", "1.5", "nodes: '1.5' is not a whole number from 0 to 100000"},
        {"nodes", "-1", "nodes: '-1' is not a whole number from 0 to 100000"},
        {"nodes", "100001", "nodes: '100001' is not a whole number from 0 to 100000"},
        {"nodes", "2-4", "nodes: '2-4': a range of node counts is not supported, give one number"},
        {"nodes", "2-x", "nodes: '2-x' is not a whole number from 0 to 100000"},
        {"gpus_per_node", "1025",
         "gpus_per_node: '1025' is not a GPU count ([TYPE:]N, N a whole number from 0 to 1024)"},
        {"gpus_per_node", "x",
         "gpus_per_node: 'x' is not a GPU count ([TYPE:]N, N a whole number from 0 to 1024)"},
        {"gpus_per_node", "gpu",
         "gpus_per_node: 'gpu' is not a GPU count ([TYPE:]N, N a whole number from 0 to 1024)"},
        {"gpus_per_node", "a:b:c:d",
         "gpus_per_node: 'a:b:c:d' is not a GPU count ([TYPE:]N, N a whole number from 0 to "
         "1024)"},
        {"gpus_per_node", "H 100:8",
         "gpus_per_node: 'H 100:8': 'H 100' is not a GPU type name (letters, digits, - _ . +)"},
        {"gpus", "1000001",
         "gpus: '1000001' is not a GPU count ([TYPE:]N, N a whole number from 0 to 1000000)"},
        {"--gres", "nvme:1",
         "gpus_per_node: --gres 'nvme:1' is not a GPU request (gpu:N or gpu:TYPE:N)"},
        {"--gres", "gpu:h100:x",
         "gpus_per_node: 'gpu:h100:x' is not a GPU count ([TYPE:]N, N a whole number from 0 to "
         "1024)"},
        {"gpu_type", "H100,,A100", "gpu_type: 'H100,,A100' has an empty type name"},
        {"gpu_type", "any,H100", "gpu_type: 'any,H100': 'any' cannot be combined with names"},
        {"gpu_type", "H/100",
         "gpu_type: 'H/100' is not a GPU type name (letters, digits, - _ . +)"},
        {"kind", "job", "kind: 'job' is not train, serve, batch or array"},
        {"cpus_per_node", "1000001",
         "cpus_per_node: '1000001' is not a whole number from 0 to 1000000"},
        {"mem", "16X", "mem: '16X' is not a size (whole MB, or with a unit: 512M, 16G, 1T)"},
        {"mem", "1.5G", "mem: '1.5G' is not a size (whole MB, or with a unit: 512M, 16G, 1T)"},
        {"mem", "G", "mem: 'G' is not a size (whole MB, or with a unit: 512M, 16G, 1T)"},
        {"mem", "99999999999T", "mem: '99999999999T' is too large (at most 1125899906842624 MB)"},
        {"mem", "99999999999999999999",
         "mem: '99999999999999999999' is not a size (whole MB, or with a unit: 512M, 16G, 1T)"},
        {"priority", "high",
         "priority: 'high' is not a whole number from -2147483648 to 2147483647"},
        {"priority", "2147483648",
         "priority: '2147483648' is not a whole number from -2147483648 to 2147483647"},
        {"priority", "1.0", "priority: '1.0' is not a whole number from -2147483648 to 2147483647"},
        {"array", "5-1", "array '5-1': range 5-1 is descending"},
        {"array", "x", "array 'x': expected a number for the range start at 'x'"},
        {"-t", "soon",
         "time_limit: 'soon' is not a time (minutes, MM:SS, [D-]HH:MM:SS, D-HH[:MM], 90s, 15m, "
         "2h, 3d): 'soon' is not a number"},
        {"--deadline", "-5",
         "deadline: '-5' is not a time (minutes, MM:SS, [D-]HH:MM:SS, D-HH[:MM], 90s, 15m, 2h, "
         "3d): '-5' is negative"},
        {"name", "a\tb", "name: 'a\tb' contains a control character"},
        {"name", "\xff", "name: '\xff' is not valid UTF-8"},
        {"name", longname,
         "name: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is longer than "
         "255 bytes"},
        {"-o", "", "output: empty value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_set_err(bad[i].field, bad[i].value, bad[i].want);
}

/* ------------------------------------------------------------------ */
/* time limits                                                         */

static void test_time_formats(void **state)
{
    (void)state;
    const struct {
        const char *text;
        double s;
    } good[] = {
        {"60", 3600},
        {"0", 0},
        {" 45 ", 2700},
        {"UNLIMITED", 0},
        {"unlimited", 0},
        {"infinite", 0},
        {"5:30", 330},
        {"1:00:00", 3600},
        {"2-12", 216000},
        {"2-12:30", 217800},
        {"2-12:30:15", 217815},
        {"0-0:0:1", 1},
        {"90s", 90},
        {"15m", 900},
        {"2h", 7200},
        {"3d", 259200},
        {"1.5h", 5400},
        {"0.25s", 0.25},
        {"150000000", 9e9},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        dr_time_t t = -1;
        dr_err_t err = {0};
        if (dr_time_limit_parse(good[i].text, &t, &err) != DR_OK)
            fail_msg("'%s': %s", good[i].text, err.msg);
        if (t != dr_time_from_s(good[i].s))
            fail_msg("'%s': %lld ns, want %g s", good[i].text, (long long)t, good[i].s);
    }
    const struct {
        const char *text, *want;
    } bad[] = {
        {"", "empty time"},
        {NULL, "empty time"},
        {"1.5",
         "'1.5' is not a time: a number without a unit is whole minutes (as in Slurm); write 90s, "
         "1.5h, 1:30:00 ..."},
        {"1e3",
         "'1e3' is not a time: a number without a unit is whole minutes (as in Slurm); write "
         "90s, 1.5h, 1:30:00 ..."},
        {"150000001", "'150000001' minutes is too long (at most 150000000)"},
        {"5q",
         "'5q' is not a time (minutes, MM:SS, [D-]HH:MM:SS, D-HH[:MM], 90s, 15m, 2h, 3d): unknown "
         "unit 'q' (ms, s, m, h, d, w, mo or y)"},
        {"1:2:3:4",
         "'1:2:3:4' is not a time (minutes, MM:SS, [D-]HH:MM:SS, D-HH[:MM], 90s, 15m, 2h, 3d): "
         "'1:2:3:4' has more than three ':' parts"},
        {"x-1",
         "'x-1' is not a time (minutes, MM:SS, [D-]HH:MM:SS, D-HH[:MM], 90s, 15m, 2h, 3d): days: "
         "'x' is not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dr_time_t t = 77;
        dr_err_t err = {0};
        if (dr_time_limit_parse(bad[i].text, &t, &err) == DR_OK)
            fail_msg("'%s' parsed", bad[i].text);
        assert_int_equal(err.code, DR_EINVAL);
        if (strcmp(err.msg, bad[i].want) != 0)
            fail_msg("'%s':\n got: %s\nwant: %s", bad[i].text, err.msg, bad[i].want);
        assert_int_equal(t, 77);
    }
}

/* ------------------------------------------------------------------ */
/* script directives                                                   */

static int parse_script(dr_jobspec_t *s, const char *name, const char *text, dr_err_t *err)
{
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1); /* no NUL after it */
    memcpy(copy, text, n);
    memset(err, 0, sizeof *err);
    int rc = dr_jobspec_parse_script(s, name, copy, n, err);
    free(copy);
    return rc;
}

static const char *script1 = "#!/bin/bash\n"
                             "#SBATCH --job-name=train\n"
                             "#SBATCH -N2\n"
                             "#SBATCH --time 1:00:00\n"
                             "#SBATCH --mail-type=END\n"
                             "#SBATCH -p gpu --qos normal\n"
                             "#SBATCH --exclusive --account=nlp   # the group\n"
                             "#DROVER --time=2h\n"
                             "# a comment\n"
                             "   # an indented comment\n"
                             "\n"
                             "#SBATCH --gres=gpu:h100:8\n"
                             "#SBATCH -J \"my 'quoted' job\"\r\n"
                             "#SBATCHX -N 5\n"
                             "#SBATCH --deadline=2026-12-01T10:00 --gres=nvme:1\n"
                             "echo hi\n"
                             "#SBATCH --nodes=7\n";

static void test_script_directives(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    dr_err_t err;
    if (parse_script(&s, "job.sh", script1, &err) != DR_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(s.name, "my 'quoted' job"); /* a later line wins, CR dropped */
    assert_int_equal(s.nodes, 2);                   /* not 5 (#SBATCHX) nor 7 (after echo) */
    assert_int_equal(s.time_limit, S(7200));        /* #DROVER wins over #SBATCH */
    assert_int_equal(s.gpus_per_node, 8);
    assert_string_equal(s.gpu_type, "h100");
    assert_string_equal(s.account, "nlp");
    assert_int_equal(s.deadline, 0); /* Slurm's --deadline is a date: ignored */
    assert_string_equal(s.script, script1);
    assert_string_equal(s.script_name, "job.sh");
    assert_string_equal(s.partition, "gpu");
    assert_string_equal(s.qos, "normal");
    assert_int_equal(s.exclusive, 1);
    const char *ignored[] = {"#SBATCH --mail-type=END", "#SBATCH --deadline=2026-12-01T10:00",
                             "#SBATCH --gres=nvme:1"};
    assert_int_equal(s.nignored, sizeof ignored / sizeof ignored[0]);
    for (size_t i = 0; i < s.nignored; i++)
        assert_string_equal(s.ignored[i], ignored[i]);
    assert_null(s.ignored[s.nignored]);
    /* what a script gives counts as given: a second script does not override it */
    if (parse_script(&s, "two.sh", "#SBATCH -N 9 -c 3\n", &err) != DR_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(s.nodes, 2);
    assert_int_equal(s.cpus_per_node, 3);
    assert_string_equal(s.script_name, "two.sh");
    dr_jobspec_free(&s);
}

static void test_script_precedence(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    dr_err_t err;
    set_ok(&s, "-N", "4");         /* the command line */
    set_ok(&s, "--gpus", "8");     /* covers the script's --gpus-per-node */
    set_ok(&s, "--priority", "0"); /* given, though the default value */
    const char *text = "#SBATCH -N 2 --gpus-per-node=H100:8 --priority 5 -t 10\n"
                       "#DROVER --kind serve\n"
                       "#SBATCH --kind=train --cpus-per-task 4\n"
                       "#DROVER -c 2\n";
    if (parse_script(&s, "job.sh", text, &err) != DR_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(s.nodes, 4);
    assert_int_equal(s.gpus, 8);
    assert_int_equal(s.gpus_per_node, 0);
    assert_string_equal(s.gpu_type, "H100"); /* not given on the command line */
    assert_int_equal(s.priority, 0);
    assert_int_equal(s.time_limit, S(600));
    assert_int_equal(s.kind, DR_KIND_SERVE);
    assert_int_equal(s.cpus_per_node, 2);
    assert_int_equal(s.nignored, 0);
    if (dr_jobspec_validate(&s, &err) != DR_OK)
        fail_msg("%s", err.msg);
    dr_jobspec_free(&s);

    /* a field set in the struct directly counts as given too */
    dr_jobspec_init(&s);
    s.time_limit = S(60);
    if (parse_script(&s, "job.sh", "#SBATCH -t 10 --gres gpu:2\n", &err) != DR_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(s.time_limit, S(60));
    assert_int_equal(s.gpus_per_node, 2);
    assert_null(s.gpu_type);
    dr_jobspec_free(&s);
}

static void expect_script_err(const char *text, int code, const char *want)
{
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    set_ok(&s, "-J", "kept");
    dr_err_t err;
    int rc = parse_script(&s, "job.sh", text, &err);
    if (rc != code || strcmp(err.msg, want) != 0)
        fail_msg("--- script:\n%s--- got %d: %s\n--- want %d: %s", text, rc, err.msg, code, want);
    /* s is as it was */
    assert_string_equal(s.name, "kept");
    assert_null(s.script);
    assert_null(s.script_name);
    assert_int_equal(s.nignored, 0);
    assert_int_equal(s.set, DR_JF_BIT(DR_JF_NAME));
    dr_jobspec_free(&s);
}

static void test_script_errors(void **state)
{
    (void)state;
    expect_script_err("#!/bin/sh\n#SBATCH -N 2\n#SBATCH --time=soon\n", DR_EINVAL,
                      "job.sh:3: time_limit: 'soon' is not a time (minutes, MM:SS, [D-]HH:MM:SS, "
                      "D-HH[:MM], 90s, 15m, 2h, 3d): 'soon' is not a number");
    expect_script_err("#SBATCH --mail-type=END\n#DROVER --mail-type=END\n", DR_EINVAL,
                      "job.sh:2: unknown option '--mail-type'");
    expect_script_err("#DROVER -x gpu\n", DR_EINVAL, "job.sh:1: unknown option '-x'");
    expect_script_err("#DROVER stray\n", DR_EINVAL, "job.sh:1: 'stray' is not an option");
    expect_script_err("#SBATCH -N 1\n#SBATCH --time\n", DR_EINVAL,
                      "job.sh:2: time_limit: --time needs a value");
    expect_script_err("#SBATCH -J 'a b\n", DR_EINVAL, "job.sh:1: unterminated quote");
    expect_script_err("#SBATCH -N 2-4\n", DR_EINVAL,
                      "job.sh:1: nodes: '2-4': a range of node counts is not supported, give one "
                      "number");
    expect_script_err("#SBATCH --gres=gpu:h100:x\n", DR_EINVAL,
                      "job.sh:1: gpus_per_node: 'gpu:h100:x' is not a GPU count ([TYPE:]N, N a "
                      "whole number from 0 to 1024)");
    expect_script_err("#SBATCH --array=5-1\n", DR_EINVAL,
                      "job.sh:1: array '5-1': range 5-1 is descending");
    expect_script_err("#!/bin/sh\necho \xe9t\xe9\n", DR_EINVAL, "job.sh:2: not valid UTF-8");

    dr_jobspec_t s;
    dr_jobspec_init(&s);
    dr_err_t err;
    assert_int_equal(dr_jobspec_parse_script(&s, "job.sh", "#!/bin/sh\n\0echo\n", 16, &err),
                     DR_EINVAL);
    assert_string_equal(err.msg, "job.sh: contains a NUL byte");
    size_t big = DR_JOBSPEC_MAX_SCRIPT + 1;
    char *buf = malloc(big);
    memset(buf, '\n', big);
    assert_int_equal(dr_jobspec_parse_script(&s, "big.sh", buf, big, &err), DR_ELIMIT);
    assert_string_equal(err.msg, "big.sh: larger than 4194304 bytes");
    assert_int_equal(dr_jobspec_parse_script(&s, "max.sh", buf, big - 1, &err), DR_OK);
    free(buf);
    assert_int_equal(strlen(s.script), DR_JOBSPEC_MAX_SCRIPT);
    dr_jobspec_free(&s);

    /* the ignored list is bounded as the JSON's is */
    const char *line = "#SBATCH --mail-type=x\n";
    size_t ll = strlen(line);
    buf = malloc(ll * (DR_JOBSPEC_MAX_ARGS + 1));
    for (int i = 0; i <= DR_JOBSPEC_MAX_ARGS; i++)
        memcpy(buf + (size_t)i * ll, line, ll);
    dr_jobspec_init(&s);
    assert_int_equal(dr_jobspec_parse_script(&s, "job.sh", buf, ll * DR_JOBSPEC_MAX_ARGS, &err),
                     DR_OK);
    assert_int_equal(s.nignored, DR_JOBSPEC_MAX_ARGS);
    dr_jobspec_free(&s);
    assert_int_equal(
        dr_jobspec_parse_script(&s, "job.sh", buf, ll * (DR_JOBSPEC_MAX_ARGS + 1), &err),
        DR_ELIMIT);
    assert_string_equal(err.msg, "job.sh: more than 4096 directives drover does not act on");
    free(buf);
    assert_int_equal(dr_jobspec_parse_script(&s, "\xff.sh", "echo\n", 5, &err), DR_EINVAL);
    assert_string_equal(err.msg, "script name: longer than 4095 bytes or not UTF-8");
    dr_jobspec_free(&s);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */

static int from_json(dr_jobspec_t *s, const char *text, dr_err_t *err)
{
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1);
    memcpy(copy, text, n);
    memset(err, 0, sizeof *err);
    int rc = dr_jobspec_from_json(s, copy, n, err);
    free(copy);
    return rc;
}

/* to_json, then from_json and to_json again: the same text. */
static char *round_trip(const dr_jobspec_t *s)
{
    char *a = dr_jobspec_to_json(s);
    assert_non_null(a);
    dr_jobspec_t t;
    dr_jobspec_init(&t);
    dr_err_t err;
    if (from_json(&t, a, &err) != DR_OK)
        fail_msg("%s: %s", a, err.msg);
    char *b = dr_jobspec_to_json(&t);
    assert_non_null(b);
    assert_string_equal(a, b);
    assert_int_equal(t.set | s->set, t.set); /* every given field is back */
    free(b);
    dr_jobspec_free(&t);
    return a;
}

static void test_json(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    dr_err_t err;
    const char *in =
        "{\"name\": \"x\", \"kind\": \"train\", \"nodes\": 2, \"gpus_per_node\": "
        "\"H100:8\", \"time_limit\": \"1:00:00\", \"deadline\": 3600.5, \"mem\": "
        "\"16G\", \"priority\": -5, \"checkpoint_every\": null, \"argv\": [\"python\", "
        "\"t.py\"], \"env\": [\"A=1\", \"B=\"], \"chdir\": \"/w\"}";
    if (from_json(&s, in, &err) != DR_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(s.name, "x");
    assert_int_equal(s.kind, DR_KIND_TRAIN);
    assert_int_equal(s.nodes, 2);
    assert_int_equal(s.gpus_per_node, 8);
    assert_string_equal(s.gpu_type, "H100");
    assert_int_equal(s.time_limit, S(3600));
    assert_int_equal(s.deadline, S(3601)); /* whole seconds, up */
    assert_int_equal(s.ckpt_every, 0);
    assert_int_equal(s.mem_mb, 16384);
    assert_int_equal(s.priority, -5);
    assert_int_equal(s.argc, 2);
    assert_string_equal(s.argv[1], "t.py");
    assert_null(s.argv[2]);
    assert_int_equal(s.nenv, 2);
    assert_string_equal(s.cwd, "/w");
    char *out = round_trip(&s);
    assert_string_equal(out, "{\"name\":\"x\",\"kind\":\"train\",\"nodes\":2,\"gpus_per_node\":8,"
                             "\"gpu_type\":\"H100\",\"mem\":16384,\"time_limit\":3600,"
                             "\"deadline\":3601,\"chdir\":\"/w\",\"priority\":-5,\"argv\":["
                             "\"python\",\"t.py\"],\"env\":[\"A=1\",\"B=\"]}");
    free(out);
    /* from_json replaces the spec */
    if (from_json(&s, "{\"gpus\": 4, \"gpu_type\": \"any\"}", &err) != DR_OK)
        fail_msg("%s", err.msg);
    assert_null(s.name);
    assert_int_equal(s.gpus, 4);
    out = round_trip(&s);
    assert_string_equal(out, "{\"gpus\":4,\"gpu_type\":\"any\"}");
    free(out);
    dr_jobspec_free(&s);

    /* every field, and a parsed script, round trip */
    dr_jobspec_init(&s);
    const dr_jobfield_t *const *l = dr_jobfield_list();
    const char *vals[DR_JF_N] = {[DR_JF_NAME] = "n \"q\" \\ é",
                                 [DR_JF_KIND] = "serve",
                                 [DR_JF_NODES] = "3",
                                 [DR_JF_GPUS_PER_NODE] = "0",
                                 [DR_JF_GPUS] = "6",
                                 [DR_JF_GPU_TYPE] = "A100,L4",
                                 [DR_JF_CPUS_PER_NODE] = "8",
                                 [DR_JF_MEM] = "3K" /* 1 MB */,
                                 [DR_JF_TIME_LIMIT] = "1-0",
                                 [DR_JF_DEADLINE] = "0.1s",
                                 [DR_JF_CHECKPOINT_EVERY] = "5m",
                                 [DR_JF_ARRAY] = "1,3%1",
                                 [DR_JF_OUTPUT] = "o%j",
                                 [DR_JF_ERROR] = "e%j",
                                 [DR_JF_CHDIR] = "/",
                                 [DR_JF_ACCOUNT] = "acct",
                                 [DR_JF_PRIORITY] = "0",
                                 [DR_JF_NTASKS] = "6",
                                 [DR_JF_NTASKS_PER_NODE] = "2",
                                 [DR_JF_GPUS_PER_TASK] = "0",
                                 [DR_JF_MEM_PER_GPU] = "2G",
                                 [DR_JF_SIGNAL] = "b:sigusr2",
                                 [DR_JF_REQUEUE] = "no",
                                 [DR_JF_DEPENDENCY] = "afterok:7:8_2?singleton",
                                 [DR_JF_PARTITION] = "gpu,cpu",
                                 [DR_JF_QOS] = "high",
                                 [DR_JF_CONSTRAINT] = "a100&ib",
                                 [DR_JF_EXCLUSIVE] = "1",
                                 [DR_JF_EXPORT] = "ALL,X=1",
                                 [DR_JF_LAUNCHER] = "torchrun",
                                 [DR_JF_SHARD] = "s%a"};
    for (int i = 0; i < DR_JF_N; i++)
        if (vals[i]) /* fields added later are in their own tests */
            set_ok(&s, l[i]->name, vals[i]);
    if (parse_script(&s, "j.sh", "#SBATCH --mail-user=a@b\n\tweird\x01text\n", &err) != DR_OK)
        fail_msg("%s", err.msg);
    out = round_trip(&s);
    assert_string_equal(
        out, "{\"name\":\"n \\\"q\\\" \\\\ é\",\"kind\":\"serve\",\"nodes\":3,\"gpus_per_node\":0,"
             "\"gpus\":6,\"gpu_type\":\"A100,L4\",\"cpus_per_node\":8,\"mem\":1,"
             "\"time_limit\":86400,\"deadline\":1,\"checkpoint_every\":300,\"array\":\"1,3%1\","
             "\"output\":\"o%j\",\"error\":\"e%j\",\"chdir\":\"/\",\"account\":\"acct\","
             "\"priority\":0,\"ntasks\":6,\"ntasks_per_node\":2,\"gpus_per_task\":0,"
             "\"mem_per_gpu\":2048,\"signal\":\"B:USR2@60\",\"requeue\":false,"
             "\"dependency\":\"afterok:7:8_2?singleton\",\"partition\":\"gpu,cpu\","
             "\"qos\":\"high\",\"constraint\":\"a100&ib\",\"exclusive\":true,"
             "\"export\":\"ALL,X=1\",\"launcher\":\"torchrun\",\"shard\":\"s%a\",\"script\":\"#"
             "SBATCH --mail-user=a@b\\n\\tweird\\u0001text\\n\","
             "\"script_name\":\"j.sh\",\"ignored\":[\"#SBATCH --mail-user=a@b\"]}");
    free(out);
    dr_jobspec_free(&s);

    /* an empty spec */
    dr_jobspec_init(&s);
    out = round_trip(&s);
    assert_string_equal(out, "{}");
    free(out);
    dr_jobspec_free(&s);
}

static void expect_json_err(const char *text, int code, const char *want)
{
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    set_ok(&s, "-J", "kept");
    dr_err_t err;
    int rc = from_json(&s, text, &err);
    if (rc != code || strncmp(err.msg, want, strlen(want)) != 0)
        fail_msg("--- json: %s\n--- got %d: %s\n--- want %d: %s", text, rc, err.msg, code, want);
    assert_string_equal(s.name, "kept"); /* unchanged */
    dr_jobspec_free(&s);
}

static void test_json_errors(void **state)
{
    (void)state;
    expect_json_err("{\"gpus_per_nod\": 8}", DR_EINVAL, "gpus_per_nod: unknown field");
    expect_json_err("{\"--nodes\": 8}", DR_EINVAL, "--nodes: unknown field"); /* keys: names */
    expect_json_err("{\"gpu_types\": \"H100\"}", DR_EINVAL, "gpu_types: unknown field");
    expect_json_err("{\"nodes\": \"x\"}", DR_EINVAL,
                    "nodes: 'x' is not a whole number from 0 to 100000");
    expect_json_err("{\"nodes\": -1}", DR_EINVAL,
                    "nodes: '-1' is not a whole number from 0 to 100000");
    expect_json_err("{\"nodes\": 1.5}", DR_EINVAL, "nodes: must be a whole number or a string");
    expect_json_err("{\"nodes\": true}", DR_EINVAL, "nodes: must be a number or a string");
    expect_json_err("{\"name\": 5}", DR_EINVAL, "name: must be a string");
    expect_json_err("{\"kind\": 1}", DR_EINVAL, "kind: must be a string");
    expect_json_err("{\"name\": [\"x\"]}", DR_EINVAL, "name: must be a string");
    expect_json_err("{\"time_limit\": -1}", DR_EINVAL,
                    "time_limit: must be from 0 to 9000000000 seconds, not -1");
    expect_json_err("{\"time_limit\": 1e10}", DR_EINVAL,
                    "time_limit: must be from 0 to 9000000000 seconds, not 1e+10");
    expect_json_err("{\"time_limit\": \"90\", \"mem\": \"1Q\"}", DR_EINVAL,
                    "mem: '1Q' is not a size (whole MB, or with a unit: 512M, 16G, 1T)");
    expect_json_err("{\"argv\": \"ls\"}", DR_EINVAL, "argv: must be an array of strings");
    expect_json_err("{\"argv\": [\"ls\", 1]}", DR_EINVAL, "argv: must be an array of strings");
    expect_json_err("{\"env\": [\"X\"]}", DR_EINVAL, "env: 'X' is not KEY=VALUE");
    expect_json_err("{\"env\": [\"=1\"]}", DR_EINVAL, "env: '=1' is not KEY=VALUE");
    expect_json_err("{\"script\": 1}", DR_EINVAL, "script: must be a string");
    expect_json_err("{\"argv\": [\"a\\u0000b\"]}", DR_EINVAL, "json: "); /* jansson refuses NUL */
    expect_json_err("[1]", DR_EINVAL, "json: a job must be an object");
    expect_json_err("{", DR_EINVAL, "json: ");
    expect_json_err("{\"name\": \"a\", \"name\": \"b\"}", DR_EINVAL, "json: duplicate object key");
    expect_json_err("{\"name\": \"a\\tb\"}", DR_EINVAL,
                    "name: 'a\tb' contains a control character");

    /* argv at its bound, and one past it */
    size_t cap = 16 + 5 * (DR_JOBSPEC_MAX_ARGS + 1);
    char *big = malloc(cap);
    size_t n = (size_t)snprintf(big, cap, "{\"argv\":[");
    for (int i = 0; i < DR_JOBSPEC_MAX_ARGS; i++)
        n += (size_t)snprintf(big + n, cap - n, "%s\"a\"", i ? "," : "");
    snprintf(big + n, cap - n, "]}");
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    dr_err_t err;
    assert_int_equal(from_json(&s, big, &err), DR_OK);
    assert_int_equal(s.argc, DR_JOBSPEC_MAX_ARGS);
    snprintf(big + n, cap - n, ",\"a\"]}");
    assert_int_equal(from_json(&s, big, &err), DR_ELIMIT);
    assert_string_equal(err.msg, "argv: more than 4096 entries");
    assert_int_equal(s.argc, DR_JOBSPEC_MAX_ARGS);
    free(big);
    dr_jobspec_free(&s);
}

/* ------------------------------------------------------------------ */
/* whole-spec checks                                                   */

static void expect_invalid(dr_jobspec_t *s, const char *want)
{
    dr_err_t err = {0};
    assert_int_not_equal(dr_jobspec_validate(s, &err), DR_OK);
    assert_string_equal(err.msg, want);
    dr_jobspec_free(s);
}

static dr_jobspec_t spec_cmd(void)
{
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    dr_err_t err;
    assert_int_equal(from_json(&s, "{\"argv\": [\"true\"]}", &err), DR_OK);
    return s;
}

static void test_validate(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    expect_invalid(&s, "argv: a job needs a command or a script");

    s = spec_cmd();
    dr_err_t err;
    assert_int_equal(dr_jobspec_validate(&s, &err), DR_OK);
    assert_int_equal(parse_script(&s, "j.sh", "echo\n", &err), DR_OK);
    assert_int_equal(dr_jobspec_validate(&s, &err), DR_OK); /* argv: the script's arguments */
    dr_jobspec_free(&s);

    s = spec_cmd();
    set_ok(&s, "--gpus", "2");
    set_ok(&s, "--gpus-per-node", "2");
    expect_invalid(&s, "gpus: --gpus and --gpus-per-node cannot both be given");

    s = spec_cmd();
    set_ok(&s, "--gpus", "10");
    set_ok(&s, "-N", "4");
    expect_invalid(&s, "gpus: 10 GPUs do not spread evenly over 4 nodes");

    s = spec_cmd();
    set_ok(&s, "--gpu-type", "H100");
    expect_invalid(&s, "gpu_type: 'H100' is given without --gpus or --gpus-per-node");

    s = spec_cmd();
    set_ok(&s, "--kind", "array");
    expect_invalid(&s, "kind: 'array' needs --array");

    s = spec_cmd();
    set_ok(&s, "-D", "rel/dir");
    expect_invalid(&s, "chdir: 'rel/dir' is not an absolute path");

    s = spec_cmd();
    s.nodes = 100001; /* set directly, past the parser */
    expect_invalid(&s, "nodes: 100001 is more than 100000");

    s = spec_cmd();
    s.time_limit = -1;
    expect_invalid(&s, "time_limit: must be from 0 to 9000000000 seconds");

    s = spec_cmd();
    s.array = strdup("9-0");
    expect_invalid(&s, "array '9-0': range 9-0 is descending");

    s = spec_cmd();
    s.env = calloc(2, sizeof *s.env);
    s.env[0] = strdup("NOEQ");
    s.nenv = 1;
    expect_invalid(&s, "env: 'NOEQ' is not KEY=VALUE");

    s = spec_cmd();
    free(s.argv[0]);
    s.argv[0] = strdup("\xc0\x80"); /* overlong NUL */
    expect_invalid(&s, "argv: entry 0 is not valid UTF-8");
}

/* ------------------------------------------------------------------ */
/* the scheduler's view                                                */

static const char *conf = "NodeName=h[1-2] Gpus=H100-SXM:8 Cpus=64 MemGB=512\n"
                          "NodeName=a[1-4] Gpus=A100:4 Cpus=32 MemGB=256\n"
                          "NodeName=c[1-2] Cpus=128 MemGB=64\n";

/* The job of a spec given as option/value pairs (NULL-terminated). */
static int to_job(dr_cluster_t *c, dr_job_t *j, dr_err_t *err, ...)
{
    dr_jobspec_t s = spec_cmd();
    va_list ap;
    va_start(ap, err);
    const char *f;
    while ((f = va_arg(ap, const char *))) {
        const char *v = va_arg(ap, const char *);
        set_ok(&s, f, v);
    }
    va_end(ap);
    dr_job_init(j);
    memset(err, 0, sizeof *err);
    int rc = dr_jobspec_to_job(&s, c, S(1000), j, err);
    dr_jobspec_free(&s);
    return rc;
}

static void expect_job_err(dr_cluster_t *c, int code, const char *want, const char *f1,
                           const char *v1, const char *f2, const char *v2)
{
    dr_job_t j;
    dr_err_t err;
    int rc = to_job(c, &j, &err, f1, v1, f2, v2, NULL);
    if (rc != code || strcmp(err.msg, want) != 0)
        fail_msg("%s %s %s %s:\n got %d: %s\nwant %d: %s", f1, v1, f2 ? f2 : "", v2 ? v2 : "", rc,
                 err.msg, code, want);
}

static void test_to_job(void **state)
{
    (void)state;
    dr_cluster_t c;
    tu_cluster(&c, conf);
    int h100 = dr_cluster_find_type(&c, "H100"), a100 = dr_cluster_find_type(&c, "A100");
    assert_true(h100 >= 0 && a100 >= 0);
    dr_job_t j;
    dr_err_t err;

    /* nothing asked: one node, one CPU, no GPU (as Slurm), batch */
    assert_int_equal(to_job(&c, &j, &err, NULL), DR_OK);
    assert_int_equal(j.req.nodes, 1);
    assert_int_equal(j.req.gpus_per_node, 0);
    assert_int_equal(j.req.gpu_milli, 1000);
    assert_int_equal(j.req.cpu_milli_per_node, 1000);
    assert_int_equal(j.req.mem_mb_per_node, 0);
    assert_int_equal(j.req.types, 0);
    assert_int_equal(j.kind, DR_KIND_BATCH);
    assert_int_equal(j.time_limit, 0);
    assert_int_equal(j.deadline, 0);

    /* --gpus N: as few nodes as hold them */
    assert_int_equal(to_job(&c, &j, &err, "--gpus", "12", NULL), DR_OK);
    assert_int_equal(j.req.nodes, 0);
    assert_int_equal(j.req.gpus_per_node, 12);

    /* -N n --gpus-per-node g, types */
    assert_int_equal(to_job(&c, &j, &err, "-N", "2", "--gpus-per-node", "H100:8", NULL), DR_OK);
    if (err.msg[0])
        fail_msg("%s", err.msg);
    assert_int_equal(j.req.nodes, 2);
    assert_int_equal(j.req.gpus_per_node, 8);
    assert_true(j.req.types == (dr_typemask_t)1 << h100);
    assert_int_equal(to_job(&c, &j, &err, "--gpus-per-node", "2", "--gpu-type", "a100,H100", NULL),
                     DR_OK);
    assert_true(j.req.types == ((dr_typemask_t)1 << h100 | (dr_typemask_t)1 << a100));

    /* -N n --gpus g: g/n on each */
    assert_int_equal(to_job(&c, &j, &err, "-N", "4", "--gpus", "16", NULL), DR_OK);
    assert_int_equal(j.req.nodes, 4);
    assert_int_equal(j.req.gpus_per_node, 4);

    /* CPUs and memory; the times; kind and array */
    assert_int_equal(to_job(&c, &j, &err, "-c", "8", "--mem", "16G", "-t", "90", "--deadline", "2h",
                            "--checkpoint-every", "10m", "--priority", "3", "-a", "0-9%4", NULL),
                     DR_OK);
    assert_int_equal(j.req.cpu_milli_per_node, 8000);
    assert_int_equal(j.req.mem_mb_per_node, 16384);
    assert_int_equal(j.time_limit, S(5400));
    assert_int_equal(j.deadline, S(1000 + 7200));
    assert_int_equal(j.ckpt_every, S(600));
    assert_int_equal(j.priority, 3);
    assert_int_equal(j.kind, DR_KIND_ARRAY);
    assert_int_equal(j.array_throttle, 4);
    assert_int_equal(to_job(&c, &j, &err, "--kind", "train", "-a", "1", NULL), DR_OK);
    assert_int_equal(j.kind, DR_KIND_TRAIN);

    /* errors, named by the field to change */
    char want[512];
    snprintf(want, sizeof want, "gpu_type: no GPU type 'H10' in this cluster (has %s, %s)",
             c.types[0].name, c.types[1].name);
    expect_job_err(&c, DR_EINVAL, want, "--gpu-type", "H100,H10", "--gpus", "1");
    expect_job_err(&c, DR_ENOSPC,
                   "gpus_per_node: needs 16 GPUs per node, the largest eligible node has 8",
                   "--gpus-per-node", "16", NULL, NULL);
    expect_job_err(&c, DR_ENOSPC,
                   "nodes: needs 3 nodes with 8 GPUs, 1 CPUs and 0 MB each; the cluster has 2 "
                   "such nodes",
                   "-N", "3", "--gpus-per-node", "8");
    expect_job_err(&c, DR_ENOSPC,
                   "gpus: needs 24 GPUs of one type, the largest eligible type has 16", "--gpus",
                   "24", NULL, NULL);
    expect_job_err(&c, DR_ENOSPC,
                   "cpus_per_node: needs 1 nodes with 4 GPUs, 65 CPUs and 0 MB each; the cluster "
                   "has 0 such nodes",
                   "-c", "65", "--gpus-per-node", "4");
    expect_job_err(&c, DR_ENOSPC,
                   "mem: needs 1 nodes with 0 GPUs, 1 CPUs and 1048576 MB each; the cluster has "
                   "0 such nodes",
                   "--mem", "1T", NULL, NULL);
    expect_job_err(&c, DR_ENOSPC,
                   "cpus_per_node, mem: needs 1 nodes with 0 GPUs, 100 CPUs and 307200 MB each; "
                   "the cluster has 0 such nodes",
                   "-c", "100", "--mem", "300G");
    expect_job_err(&c, DR_ENOSPC,
                   "cpus_per_node: needs 8 GPUs of one type on nodes with 40 CPUs and 0 MB "
                   "each; the largest eligible type has 0 there",
                   "--gpus", "A100:8", "-c", "40");
    expect_job_err(&c, DR_EINVAL, "gpus: 10 GPUs do not spread evenly over 4 nodes", "-N", "4",
                   "--gpus", "10");
    dr_cluster_free(&c);

    /* nodes that declare no CPUs still take a job that asks for none */
    tu_cluster(&c, "NodeName=z Gpus=T4:1 Cpus=0 MemGB=8\n");
    assert_int_equal(to_job(&c, &j, &err, "--gpus-per-node", "1", NULL), DR_OK);
    assert_int_equal(j.req.cpu_milli_per_node, 0);
    expect_job_err(&c, DR_ENOSPC,
                   "cpus_per_node: needs 1 nodes with 1 GPUs, 1 CPUs and 0 MB each; the cluster "
                   "has 0 such nodes",
                   "-c", "1", "--gpus-per-node", "1");
    dr_cluster_free(&c);
}

/* ------------------------------------------------------------------ */
/* output paths                                                        */

static void expect_path(const char *tmpl, uint64_t job, uint64_t parent, uint32_t idx,
                        const char *name, const char *user, const char *want)
{
    char *p = dr_jobspec_expand_path(tmpl, job, parent, idx, name, user, NULL);
    assert_non_null(p);
    assert_string_equal(p, want);
    free(p);
}

static void test_expand_path(void **state)
{
    (void)state;
    expect_path("slurm-%j.out", 42, 0, 0, "x", "u", "slurm-42.out");
    expect_path("%A_%a.log", 43, 40, 3, "x", "u", "40_3.log");
    expect_path("%A_%a.log", 42, 0, 0, "x", "u", "42_0.log"); /* not an array task */
    expect_path("t%4a-%2j", 42, 40, 3, "x", "u", "t0003-42");
    expect_path("%x-%u", 1, 0, 0, "train", "alice", "train-alice");
    expect_path("%x-%u", 1, 0, 0, NULL, NULL, "-");
    expect_path("100%%", 1, 0, 0, NULL, NULL, "100%");
    expect_path("%N %q %5% %", 1, 0, 0, NULL, NULL, "%N %q %5% %"); /* kept as they are */
    expect_path("", 1, 0, 0, NULL, NULL, "");
    assert_null(dr_jobspec_expand_path(NULL, 1, 0, 0, NULL, NULL, NULL));
    char *p = dr_jobspec_expand_path("%x-%N-%j.out", 7, 0, 0, "train", "u", "gpu-01");
    assert_string_equal(p, "train-gpu-01-7.out"); /* %N: the first node */
    free(p);
}

/* ------------------------------------------------------------------ */
/* trace columns from the table                                        */

static int parse_trace(const char *text, dr_workload_t *wl, dr_err_t *err)
{
    dr_workload_init(wl);
    memset(err, 0, sizeof *err);
    return dr_trace_parse(DR_TRACE_DROVER, "w.csv", text, strlen(text), NULL, wl, err);
}

static void test_trace_columns(void **state)
{
    (void)state;
    dr_workload_t wl;
    dr_err_t err;
    const char *text = "submit_s,duration_s,time_limit,gpu_type,gpus_per_node,nodes,Priority\n"
                       "0,10,90,\"H100, A100\",H200:2,2-2,-3\n"
                       "1,10,1:00:00,,gpu:A100:4,,\n";
    if (parse_trace(text, &wl, &err) != DR_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(wl.njobs, 2);
    assert_int_equal(wl.jobs[0].time_limit, S(5400)); /* minutes, as --time */
    assert_int_equal(wl.jobs[0].req.nodes, 2);
    assert_int_equal(wl.jobs[0].req.gpus_per_node, 2);
    assert_int_equal(wl.jobs[0].priority, -3);
    assert_string_equal(wl.typesets.strs[wl.typeset[0] - 1], "H100|A100"); /* the column wins */
    assert_int_equal(wl.jobs[1].time_limit, S(3600));
    assert_int_equal(wl.jobs[1].req.gpus_per_node, 4);
    assert_string_equal(wl.typesets.strs[wl.typeset[1] - 1], "A100");
    dr_workload_free(&wl);

    const struct {
        const char *text, *want;
    } bad[] = {
        {"submit_s,duration_s,time_limit\n0,1,1.5\n",
         "w.csv:2: time_limit: '1.5' is not a time: a number without a unit is whole minutes"},
        {"submit_s,duration_s,gpu_types\n0,1,H100||A100\n",
         "w.csv:2: gpu_types: 'H100||A100' has an empty type name"},
        {"submit_s,duration_s,nodes\n0,1,2-3\n",
         "w.csv:2: nodes: '2-3': a range of node counts is not supported"},
        {"submit_s,duration_s,nodes,gpus_per_node\n0,1,0,x\n",
         "w.csv:2: gpus_per_node: 'x' is not a GPU count ([TYPE:]N, N a whole number from 0 to "
         "1000000)"},
        {"submit_s,duration_s,account\n0,1,\"a\tb\"\n",
         "w.csv:2: account: 'a\tb' contains a control character"},
        {"submit_s,duration_s,time_limit,time_limit_s\n",
         "w.csv:1: header: column 'time_limit' appears twice"},
        {"submit_s,duration_s,gpu_type,GPU_TYPES\n",
         "w.csv:1: header: column 'gpu_type' appears twice"},
        {"submit_s,duration_s,cpus_per_node\n", "w.csv:1: header: unknown column 'cpus_per_node'"},
        {"submit_s,duration_s,-N\n", "w.csv:1: header: unknown column '-N'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (parse_trace(bad[i].text, &wl, &err) == DR_OK)
            fail_msg("parsed: %s", bad[i].text);
        tu_assert_contains(err.msg, bad[i].want);
        dr_workload_free(&wl);
    }
}

/* ------------------------------------------------------------------ */
/* Slurm's task, signal, dependency and sharing fields                 */

static void test_slurm_fields(void **state)
{
    (void)state;
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    assert_int_equal(s.requeue, -1);
    assert_int_equal(s.exclusive, -1);
    set_ok(&s, "-n", "16");
    assert_int_equal(s.ntasks, 16);
    set_ok(&s, "--ntasks-per-node", "8");
    assert_int_equal(s.ntasks_per_node, 8);
    set_ok(&s, "--gpus-per-task", "a100:1");
    assert_int_equal(s.gpus_per_task, 1);
    assert_string_equal(s.gpu_type, "a100");
    set_ok(&s, "--mem-per-gpu", "40G");
    assert_int_equal(s.mem_per_gpu_mb, 40960);

    const struct {
        const char *v;
        int sig;
        unsigned secs;
        bool batch;
    } sigs[] = {{"USR1", SIGUSR1, 60, false},
                {"SIGUSR1@90", SIGUSR1, 90, false},
                {"B:USR1@120", SIGUSR1, 120, true},
                {"term@0", SIGTERM, 0, false},
                {"10@65535", 10, 65535, false},
                {" b:sigint ", SIGINT, 60, true},
                {"64", 64, 60, false}};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        set_ok(&s, "--signal", sigs[i].v);
        assert_int_equal(s.signal_num, sigs[i].sig);
        assert_int_equal(s.signal_secs, sigs[i].secs);
        assert_int_equal(s.signal_batch, sigs[i].batch);
    }
    assert_int_equal(dr_signal_parse("SIGTERM", 7), SIGTERM);
    assert_int_equal(dr_signal_parse("0", 1), 0);
    assert_string_equal(dr_signal_name(SIGUSR2), "USR2");
    assert_null(dr_signal_name(40));

    set_ok(&s, "--requeue", "1");
    assert_int_equal(s.requeue, 1);
    set_ok(&s, "--no-requeue", "1"); /* the CLI's value for a flag */
    assert_int_equal(s.requeue, 0);
    set_ok(&s, "requeue", "TRUE");
    assert_int_equal(s.requeue, 1);
    set_ok(&s, "--exclusive", "1");
    assert_int_equal(s.exclusive, 1);
    set_ok(&s, "exclusive", "off");
    assert_int_equal(s.exclusive, 0);

    set_ok(&s, "-d", "afterok:12:13_4,afterany:14,singleton,afternotok:15,after:16");
    assert_int_equal(s.ndeps, 5);
    assert_false(s.dep_any);
    assert_int_equal(s.deps[0].kind, DR_DEP_AFTEROK);
    assert_int_equal(s.deps[0].nrefs, 2);
    assert_int_equal(s.deps[0].refs[0].job, 12);
    assert_int_equal(s.deps[0].refs[0].task, -1);
    assert_int_equal(s.deps[0].refs[1].job, 13);
    assert_int_equal(s.deps[0].refs[1].task, 4);
    assert_int_equal(s.deps[1].kind, DR_DEP_AFTERANY);
    assert_int_equal(s.deps[2].kind, DR_DEP_SINGLETON);
    assert_int_equal(s.deps[2].nrefs, 0);
    assert_int_equal(s.deps[3].kind, DR_DEP_AFTERNOTOK);
    assert_int_equal(s.deps[4].kind, DR_DEP_AFTER);
    set_ok(&s, "--dependency", "afterok:1?afterany:2");
    assert_int_equal(s.ndeps, 2);
    assert_true(s.dep_any);

    set_ok(&s, "-p", "gpu,debug");
    assert_string_equal(s.partition, "gpu,debug");
    set_ok(&s, "-q", "high");
    assert_string_equal(s.qos, "high");
    set_ok(&s, "-C", "a100&ib");
    assert_string_equal(s.constraint, "a100&ib");
    const char *exports[] = {"ALL",           "NONE",      "NIL",  "PATH,HOME",
                             "ALL,A=1,B=x y", "NONE,_X9=", "A=b=c"};
    for (size_t i = 0; i < sizeof exports / sizeof exports[0]; i++) {
        set_ok(&s, "--export", exports[i]);
        assert_string_equal(s.export_env, exports[i]);
    }
    char *a = round_trip(&s);
    free(a);
    dr_jobspec_free(&s);
    assert_int_equal(s.ndeps, 0);
    assert_int_equal(s.requeue, -1);

    /* bad values, exact messages */
    const struct {
        const char *field, *value, *want;
    } bad[] = {
        {"-n", "x", "ntasks: 'x' is not a whole number from 0 to 1000000"},
        {"--ntasks-per-node", "-1",
         "ntasks_per_node: '-1' is not a whole number from 0 to 1000000"},
        {"--gpus-per-task", "1025",
         "gpus_per_task: '1025' is not a GPU count ([TYPE:]N, N a whole number from 0 to 1024)"},
        {"--mem-per-gpu", "1.5G",
         "mem_per_gpu: '1.5G' is not a size (whole MB, or with a unit: 512M, 16G, 1T)"},
        {"--signal", "FOO",
         "signal: 'FOO' is not [B:]SIG[@SECS] (SIG a name such as USR1 or a number from 1 to 64, "
         "SECS from 0 to 65535)"},
        {"--signal", "USR1@65536",
         "signal: 'USR1@65536' is not [B:]SIG[@SECS] (SIG a name such as USR1 or a number from 1 "
         "to 64, SECS from 0 to 65535)"},
        {"--signal", "65",
         "signal: '65' is not [B:]SIG[@SECS] (SIG a name such as USR1 or a number from 1 to 64, "
         "SECS from 0 to 65535)"},
        {"--signal", "X:USR1",
         "signal: 'X:USR1' is not [B:]SIG[@SECS] (SIG a name such as USR1 or a number from 1 to "
         "64, SECS from 0 to 65535)"},
        {"--signal", "R:USR1@60", "signal: 'R:USR1@60': R: (a reservation's end) is not supported"},
        {"--requeue", "maybe", "requeue: 'maybe' is not a flag value (give --requeue alone)"},
        {"--exclusive", "user", "exclusive: 'user' is not a flag value (give --exclusive alone)"},
        {"-d", "afterok", "dependency: 'afterok': 'afterok' needs job ids (KIND:ID[:ID...])"},
        {"-d", "singleton:1", "dependency: 'singleton:1': 'singleton:1' takes no job ids"},
        {"-d", "afterwards:1",
         "dependency: 'afterwards:1': 'afterwards' is not a dependency kind (after, afterok, "
         "afterany, afternotok, singleton)"},
        {"-d", "afterok:1,afterany:2?afterok:3",
         "dependency: 'afterok:1,afterany:2?afterok:3': ',' (all of) and '?' (any of) cannot be "
         "mixed"},
        {"-d", "afterok:1,", "dependency: 'afterok:1,' has an empty term"},
        {"-d", "afterok:0", "dependency: 'afterok:0': '0' is not a job id (ID or ID_TASK)"},
        {"-d", "afterok:1:x", "dependency: 'afterok:1:x': 'x' is not a job id (ID or ID_TASK)"},
        {"-d", "afterok:1_", "dependency: 'afterok:1_': '1_' is not a job id (ID or ID_TASK)"},
        {"-d", "afterok:1::2", "dependency: 'afterok:1::2': '' is not a job id (ID or ID_TASK)"},
        {"-d", "after:5+10",
         "dependency: 'after:5+10': a delay after a job id ('+10') is not supported"},
        {"--export", "ALL,1X",
         "export: 'ALL,1X': '1X' is not a variable name (ALL or NONE only "
         "first)"},
        {"--export", "A,NONE",
         "export: 'A,NONE': 'NONE' is not a variable name (ALL or NONE "
         "only first)"},
        {"--export", "A,,B", "export: 'A,,B': '' is not a variable name (ALL or NONE only first)"},
        {"-p", "a\tb", "partition: 'a\tb' contains a control character"},
        {"--qos", "", "qos: empty value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_set_err(bad[i].field, bad[i].value, bad[i].want);
    /* the dependency list is bounded */
    size_t cap = 16 + 3 * (DR_JOBSPEC_MAX_DEPS + 1);
    char *big = malloc(cap);
    size_t n = (size_t)snprintf(big, cap, "afterok");
    for (int i = 0; i <= DR_JOBSPEC_MAX_DEPS; i++)
        n += (size_t)snprintf(big + n, cap - n, ":1");
    expect_set_err("-d", big, "dependency: more than 1024 job ids");
    big[n - 2] = '\0'; /* exactly the bound */
    dr_jobspec_init(&s);
    set_ok(&s, "-d", big);
    assert_int_equal(s.deps[0].nrefs, DR_JOBSPEC_MAX_DEPS);
    dr_jobspec_free(&s);
    free(big);

    /* JSON: flags are booleans, signal and dependency strings */
    dr_err_t err;
    dr_jobspec_init(&s);
    assert_int_equal(from_json(&s,
                               "{\"requeue\": false, \"exclusive\": true, \"signal\": "
                               "\"usr1@30\", \"dependency\": \"afterany:3_1\"}",
                               &err),
                     DR_OK);
    assert_int_equal(s.requeue, 0);
    assert_int_equal(s.exclusive, 1);
    a = round_trip(&s);
    assert_string_equal(a, "{\"signal\":\"USR1@30\",\"requeue\":false,\"dependency\":"
                           "\"afterany:3_1\",\"exclusive\":true}");
    free(a);
    dr_jobspec_free(&s);
    expect_json_err("{\"requeue\": 1}", DR_EINVAL, "requeue: must be true or false");
    expect_json_err("{\"exclusive\": \"yes\"}", DR_EINVAL, "exclusive: must be true or false");
    expect_json_err("{\"signal\": 10}", DR_EINVAL, "signal: must be a string");
    expect_json_err("{\"dependency\": [1]}", DR_EINVAL, "dependency: must be a string");
    expect_json_err("{\"ntasks\": \"x\"}", DR_EINVAL,
                    "ntasks: 'x' is not a whole number from 0 to 1000000");

    /* directives: flags take no value, --no-requeue negates */
    dr_jobspec_init(&s);
    const char *text = "#SBATCH --exclusive -n 4 --requeue\n"
                       "#SBATCH --no-requeue --signal=B:USR1@120 -d afterok:9\n";
    if (parse_script(&s, "job.sh", text, &err) != DR_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(s.exclusive, 1);
    assert_int_equal(s.ntasks, 4);
    assert_int_equal(s.requeue, 0); /* the later one wins */
    assert_true(s.signal_batch);
    assert_int_equal(s.nignored, 0);
    dr_jobspec_free(&s);
    expect_script_err("#SBATCH --exclusive=user\n", DR_EINVAL,
                      "job.sh:1: exclusive: 'user' is not a flag value (give --exclusive alone)");
}

static void test_slurm_validate(void **state)
{
    (void)state;
    dr_jobspec_t s = spec_cmd();
    set_ok(&s, "-N", "2");
    set_ok(&s, "-n", "8");
    set_ok(&s, "--ntasks-per-node", "4");
    dr_err_t err;
    assert_int_equal(dr_jobspec_validate(&s, &err), DR_OK);
    set_ok(&s, "-n", "6");
    expect_invalid(&s, "ntasks: --ntasks=6 does not equal --nodes=2 x --ntasks-per-node=4");

    s = spec_cmd();
    set_ok(&s, "--gpus-per-task", "1");
    expect_invalid(&s, "gpus_per_task: --gpus-per-task needs --ntasks or --ntasks-per-node");
    s = spec_cmd();
    set_ok(&s, "--gpus-per-task", "1");
    set_ok(&s, "-n", "2");
    set_ok(&s, "--gpus-per-node", "2");
    expect_invalid(&s, "gpus_per_task: --gpus-per-task and --gpus-per-node cannot both be given");
    s = spec_cmd();
    set_ok(&s, "--gpus-per-task", "H100:1"); /* a type with --gpus-per-task alone is fine */
    set_ok(&s, "-n", "2");
    assert_int_equal(dr_jobspec_validate(&s, &err), DR_OK);
    dr_jobspec_free(&s);

    s = spec_cmd();
    set_ok(&s, "--mem", "1G");
    set_ok(&s, "--mem-per-gpu", "1G");
    set_ok(&s, "--gpus", "1");
    expect_invalid(&s, "mem_per_gpu: --mem and --mem-per-gpu cannot both be given");
    s = spec_cmd();
    set_ok(&s, "--mem-per-gpu", "1G");
    expect_invalid(&s, "mem_per_gpu: --mem-per-gpu is given without GPUs");

    s = spec_cmd();
    s.signal_num = 65;
    expect_invalid(&s, "signal: 65@0 is not a signal from 1 to 64 and 0 to 65535 seconds");
    s = spec_cmd();
    s.requeue = 2;
    expect_invalid(&s, "requeue: 2 is not -1, 0 or 1");
    s = spec_cmd();
    s.deps = calloc(1, sizeof *s.deps);
    s.ndeps = 1;
    s.deps[0].kind = DR_DEP_AFTEROK; /* no job */
    expect_invalid(&s, "dependency: term 0 is malformed");
}

static void test_slurm_to_job(void **state)
{
    (void)state;
    dr_cluster_t c;
    tu_cluster(&c, conf);
    int a100 = dr_cluster_find_type(&c, "A100"), h100 = dr_cluster_find_type(&c, "H100");
    dr_job_t j;
    dr_err_t err;

    /* -n with --ntasks-per-node: the nodes; -c is per task */
    assert_int_equal(to_job(&c, &j, &err, "-n", "8", "--ntasks-per-node", "4", "-c", "2", NULL),
                     DR_OK);
    assert_int_equal(j.req.nodes, 2);
    assert_int_equal(j.req.cpu_milli_per_node, 8000);
    assert_int_equal(j.req.gpus_per_node, 0);
    /* one CPU for each task by default */
    assert_int_equal(to_job(&c, &j, &err, "-N", "2", "-n", "6", NULL), DR_OK);
    assert_int_equal(j.req.nodes, 2);
    assert_int_equal(j.req.cpu_milli_per_node, 3000);

    /* --gpus-per-task x the tasks of a node */
    assert_int_equal(to_job(&c, &j, &err, "-N", "2", "--ntasks-per-node", "4", "--gpus-per-task",
                            "A100:1", NULL),
                     DR_OK);
    assert_int_equal(j.req.nodes, 2);
    assert_int_equal(j.req.gpus_per_node, 4);
    assert_true(j.req.types == (dr_typemask_t)1 << a100);
    assert_int_equal(j.req.cpu_milli_per_node, 4000);
    assert_int_equal(to_job(&c, &j, &err, "-N", "2", "-n", "3", "--gpus-per-task", "2", NULL),
                     DR_OK);
    assert_int_equal(j.req.gpus_per_node, 4); /* ceil(3 / 2) tasks x 2 */
    /* without -N: all the tasks' GPUs on as few nodes as hold them */
    assert_int_equal(to_job(&c, &j, &err, "-n", "12", "--gpus-per-task", "1", NULL), DR_OK);
    assert_int_equal(j.req.nodes, 0);
    assert_int_equal(j.req.gpus_per_node, 12);
    assert_int_equal(j.req.cpu_milli_per_node, 1000);

    /* --gpu-mem: the GPU's own memory, a set of types (not host memory) */
    assert_int_equal(to_job(&c, &j, &err, "--gpus-per-node", "1", "--gpu-mem", "80G", NULL), DR_OK);
    assert_true(j.req.min_gpu_mem_gb == 80);
    assert_int_equal(j.req.mem_mb_per_node, 0);
    assert_true(dr_cluster_eligible_types(&c, &j.req) >> h100 & 1);
    assert_int_equal(to_job(&c, &j, &err, "--gpus-per-node", "1", NULL), DR_OK);
    assert_true(j.req.min_gpu_mem_gb == 0);
    expect_job_err(&c, DR_EINVAL, "gpu_mem: --gpu-mem is given without GPUs", "--gpu-mem", "80G",
                   NULL, NULL);
    expect_job_err(
        &c, DR_ENOSPC,
        "gpu_mem: no GPU type of this cluster has 200 GB (the most: H100-SXM-80GB, 80 GB)",
        "--gpus-per-node", "1", "--gpu-mem", "200G");

    /* --mem-per-gpu x the GPUs of a node */
    assert_int_equal(to_job(&c, &j, &err, "--gpus-per-node", "4", "--mem-per-gpu", "32G", NULL),
                     DR_OK);
    assert_int_equal(j.req.mem_mb_per_node, 4 * 32768);
    assert_int_equal(to_job(&c, &j, &err, "--gpus", "H100:16", "--mem-per-gpu", "10G", NULL),
                     DR_OK);
    assert_int_equal(j.req.mem_mb_per_node, 8 * 10240); /* a node holds at most 8 */
    expect_job_err(&c, DR_ENOSPC,
                   "mem: needs 1 nodes with 4 GPUs, 1 CPUs and 409600 MB each; the cluster has 0 "
                   "such nodes",
                   "--gpus-per-node", "A100:4", "--mem-per-gpu", "100G");

    /* --exclusive: the whole node when the eligible nodes are alike */
    assert_int_equal(to_job(&c, &j, &err, "--gpus-per-node", "A100:2", "--exclusive", "1", NULL),
                     DR_OK);
    assert_int_equal(j.req.nodes, 1);
    assert_int_equal(j.req.gpus_per_node, 4);
    assert_int_equal(j.req.cpu_milli_per_node, 32000);
    assert_int_equal(j.req.mem_mb_per_node, 256 * 1024);
    assert_int_equal(to_job(&c, &j, &err, "--gpus", "H100:12", "--exclusive", "1", NULL), DR_OK);
    assert_int_equal(j.req.nodes, 2);
    assert_int_equal(j.req.gpus_per_node, 8);
    assert_true(j.req.types == (dr_typemask_t)1 << h100);
    /* 2 GPUs of any type: A100 and H100 nodes differ, so the request stands */
    assert_int_equal(to_job(&c, &j, &err, "--gpus-per-node", "2", "--exclusive", "1", NULL), DR_OK);
    assert_int_equal(j.req.gpus_per_node, 2);
    assert_int_equal(j.req.cpu_milli_per_node, 1000);
    /* not exclusive: unchanged */
    assert_int_equal(to_job(&c, &j, &err, "--gpus-per-node", "A100:2", "--exclusive", "0", NULL),
                     DR_OK);
    assert_int_equal(j.req.gpus_per_node, 2);
    dr_cluster_free(&c);
}

static void test_slurm_unsupported(void **state)
{
    (void)state;
    dr_jobspec_t s = spec_cmd();
    char buf[1024];
    assert_int_equal(dr_jobspec_unsupported(&s, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    set_ok(&s, "--qos", "high");
    set_ok(&s, "-C", "a100"); /* matched by the controller's cluster: no note */
    set_ok(&s, "--export", "NONE");
    set_ok(&s, "--signal", "B:USR1@120");
    set_ok(&s, "--exclusive", "1");
    set_ok(&s, "-p", "gpu"); /* mapped by the controller: no note */
    set_ok(&s, "--requeue", "1");
    const char *want =
        "--qos=high: not enforced\n"
        "--export=NONE: not applied; the job gets the environment it was submitted with\n"
        "--signal=B:USR1@120: the job has no time limit here (its partition may give one) and "
        "no --checkpoint-every, so it is sent only before a preemption or a drain\n"
        "--exclusive: whole nodes only where all the nodes the job may use are alike; otherwise "
        "its nodes may be shared\n";
    assert_int_equal(dr_jobspec_unsupported(&s, buf, sizeof buf), strlen(want));
    assert_string_equal(buf, want);
    /* as snprintf: the whole length, a cut text */
    char small[10];
    assert_int_equal(dr_jobspec_unsupported(&s, small, sizeof small), strlen(want));
    assert_string_equal(small, "--qos=hig");
    assert_int_equal(dr_jobspec_unsupported(&s, NULL, 0), strlen(want));
    set_ok(&s, "--export", "ALL");
    set_ok(&s, "-t", "1:00:00");
    set_ok(&s, "--signal", "USR1@120");
    set_ok(&s, "--exclusive", "no");
    assert_int_equal(dr_jobspec_unsupported(&s, buf, sizeof buf),
                     strlen("--qos=high: not enforced\n"));
    dr_jobspec_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_set_good),
        cmocka_unit_test(test_set_bad),
        cmocka_unit_test(test_time_formats),
        cmocka_unit_test(test_script_directives),
        cmocka_unit_test(test_script_precedence),
        cmocka_unit_test(test_script_errors),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_to_job),
        cmocka_unit_test(test_expand_path),
        cmocka_unit_test(test_trace_columns),
        cmocka_unit_test(test_slurm_fields),
        cmocka_unit_test(test_slurm_validate),
        cmocka_unit_test(test_slurm_to_job),
        cmocka_unit_test(test_slurm_unsupported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
