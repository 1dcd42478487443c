/* test_slurm_scripts.c - Slurm batch scripts as users write them
 * (tests/data/slurm/: torchrun, DeepSpeed, an array sweep, a dependency
 * chain, --gres, --mem-per-gpu, a checkpointing --signal job, --exclusive, a
 * CPU-only job, --export=NONE with --qos, and three whose body starts its
 * steps with srun: torchrun per node, DeepSpeed per GPU, a prep/train/eval
 * pipeline) read unchanged: the fields each
 * must produce, the directives listed as ignored, the notes of what is not
 * honoured, and the request each makes on a small cluster. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/jobspec.h"

#define S(x) ((dr_time_t)((x)*DR_NSEC_PER_SEC))
#define GB   1024ull

static const char *conf = "NodeName=h[1-4] Gpus=H100-SXM:8 Cpus=96 MemGB=1024\n"
                          "NodeName=a[1-2] Gpus=A100:4 Cpus=32 MemGB=256\n"
                          "NodeName=c[1-2] Cpus=64 MemGB=128\n";

/* Parse tests/data/slurm/NAME, check the ignored list and the notes, and
 * convert it to a job on c. */
static void load(const char *name, dr_jobspec_t *s, const char *const *ignored, const char *notes,
                 dr_cluster_t *c, dr_job_t *j)
{
    char rel[128];
    snprintf(rel, sizeof rel, "tests/data/slurm/%s", name);
    FILE *f = fopen(tu_src_path(rel), "rb");
    if (!f)
        fail_msg("cannot open %s", rel);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    dr_jobspec_init(s);
    dr_err_t err = {0};
    if (dr_jobspec_parse_script(s, name, buf, n, &err) != DR_OK)
        fail_msg("%s: %s", name, err.msg);
    uint32_t k = 0;
    for (; ignored && ignored[k]; k++) {
        if (k >= s->nignored)
            fail_msg("%s: ignored has %u entries, want '%s' too", name, s->nignored, ignored[k]);
        assert_string_equal(s->ignored[k], ignored[k]);
    }
    if (k != s->nignored)
        fail_msg("%s: ignored '%s' unexpectedly", name, s->ignored[k]);
    char got[2048];
    assert_int_equal(dr_jobspec_unsupported(s, got, sizeof got), strlen(notes));
    if (strcmp(got, notes) != 0)
        fail_msg("%s: notes\n got: %s\nwant: %s", name, got, notes);
    if (dr_jobspec_validate(s, &err) != DR_OK)
        fail_msg("%s: %s", name, err.msg);
    dr_job_init(j);
    if (dr_jobspec_to_job(s, c, S(1000), j, &err) != DR_OK)
        fail_msg("%s: to_job: %s", name, err.msg);
    assert_int_equal(dr_cluster_req_possible(c, &j->req, NULL), DR_OK);
    /* and it travels: the API's JSON gives the same spec back */
    char *a = dr_jobspec_to_json(s);
    assert_non_null(a);
    dr_jobspec_t t;
    dr_jobspec_init(&t);
    if (dr_jobspec_from_json(&t, a, strlen(a), &err) != DR_OK)
        fail_msg("%s: from_json: %s", name, err.msg);
    char *b = dr_jobspec_to_json(&t);
    assert_string_equal(a, b);
    free(a);
    free(b);
    dr_jobspec_free(&t);
}

static dr_typemask_t type_bit(const dr_cluster_t *c, const char *name)
{
    int t = dr_cluster_find_type(c, name);
    assert_true(t >= 0);
    return (dr_typemask_t)1 << t;
}

static void test_torchrun(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    const char *ign[] = {"#SBATCH --mail-type=END,FAIL", "#SBATCH --mail-user=someone@example.org",
                         NULL};
    load("torchrun_multinode.sh", &s, ign, "", c, &j);
    assert_string_equal(s.name, "llama-pretrain");
    assert_int_equal(s.nodes, 2);
    assert_int_equal(s.ntasks_per_node, 1);
    assert_int_equal(s.gpus_per_node, 8);
    assert_int_equal(s.cpus_per_node, 32);
    assert_true(s.set & (DR_JF_BIT(DR_JF_MEM))); /* --mem=0: given, none asked for */
    assert_int_equal(s.mem_mb, 0);
    assert_int_equal(s.time_limit, S(2 * 86400));
    assert_string_equal(s.partition, "gpu");
    assert_string_equal(s.out_path, "logs/%x-%j.out");
    assert_string_equal(s.err_path, "logs/%x-%j.err");
    assert_int_equal(j.req.nodes, 2);
    assert_int_equal(j.req.gpus_per_node, 8);
    assert_int_equal(j.req.cpu_milli_per_node, 32000); /* one task of 32 CPUs a node */
    assert_int_equal(j.time_limit, S(2 * 86400));
    dr_jobspec_free(&s);
}

static void test_deepspeed(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    load("deepspeed_hostfile.sh", &s, NULL,
         "--exclusive: whole nodes only where all the nodes the job may use are alike; otherwise "
         "its nodes may be shared\n",
         c, &j);
    assert_string_equal(s.name, "ds-finetune");
    assert_int_equal(s.nodes, 4);
    assert_int_equal(s.gpus_per_node, 8);
    assert_null(s.gpu_type);
    assert_int_equal(s.ntasks_per_node, 1);
    assert_int_equal(s.cpus_per_node, 64);
    assert_int_equal(s.time_limit, S(12 * 3600));
    assert_string_equal(s.account, "nlp");
    assert_int_equal(s.exclusive, 1);
    /* only the H100 nodes hold 8 GPUs, and they are alike: all of one each */
    assert_int_equal(j.req.nodes, 4);
    assert_int_equal(j.req.gpus_per_node, 8);
    assert_true(j.req.types == type_bit(c, "H100"));
    assert_int_equal(j.req.cpu_milli_per_node, 96000);
    assert_int_equal(j.req.mem_mb_per_node, 1024 * GB);
    dr_jobspec_free(&s);
}

static void test_array_sweep(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    load("array_sweep.sh", &s, NULL, "", c, &j);
    assert_string_equal(s.array, "0-31%4");
    assert_int_equal(s.gpus, 1);
    assert_int_equal(s.cpus_per_node, 8);
    assert_int_equal(s.mem_mb, 32 * GB);
    assert_int_equal(s.requeue, 1);
    assert_string_equal(s.out_path, "sweep/%A_%a.out");
    assert_int_equal(j.kind, DR_KIND_ARRAY);
    assert_int_equal(j.array_throttle, 4);
    assert_int_equal(j.req.nodes, 0);
    assert_int_equal(j.req.gpus_per_node, 1);
    assert_int_equal(j.req.mem_mb_per_node, 32 * GB);
    dr_jobspec_free(&s);
}

static void test_dependency(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    const char *ign[] = {"#SBATCH --kill-on-invalid-dep=yes", NULL};
    load("dependency_eval.sh", &s, ign, "", c, &j);
    assert_int_equal(s.ndeps, 2);
    assert_false(s.dep_any);
    assert_int_equal(s.deps[0].kind, DR_DEP_AFTEROK);
    assert_int_equal(s.deps[0].nrefs, 2);
    assert_int_equal(s.deps[0].refs[0].job, 4242);
    assert_int_equal(s.deps[0].refs[0].task, -1);
    assert_int_equal(s.deps[0].refs[1].job, 4243);
    assert_int_equal(s.deps[0].refs[1].task, 7);
    assert_int_equal(s.deps[1].kind, DR_DEP_AFTERANY);
    assert_int_equal(s.deps[1].refs[0].job, 4250);
    assert_int_equal(s.time_limit, S(30 * 60)); /* a bare number is minutes */
    assert_int_equal(j.req.gpus_per_node, 1);
    dr_jobspec_free(&s);
}

static void test_gres_a100(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    const char *ign[] = {"#SBATCH --hint=nomultithread", NULL};
    load("single_node_a100.sh", &s, ign, "", c, &j); /* -C a100: the GPU type, matched */
    assert_int_equal(s.nodes, 1);
    assert_int_equal(s.gpus_per_node, 4);
    assert_string_equal(s.gpu_type, "a100");
    assert_int_equal(s.ntasks, 4);
    assert_int_equal(s.cpus_per_node, 8);
    assert_int_equal(s.mem_mb, 200 * GB);
    assert_int_equal(s.time_limit, S(86400 + 12 * 3600));
    assert_string_equal(s.constraint, "a100");
    assert_int_equal(j.req.nodes, 1);
    assert_int_equal(j.req.gpus_per_node, 4);
    assert_true(j.req.types == type_bit(c, "A100"));
    assert_int_equal(j.req.cpu_milli_per_node, 32000); /* 4 tasks x 8 CPUs */
    assert_int_equal(j.req.mem_mb_per_node, 200 * GB);
    dr_jobspec_free(&s);
}

static void test_mem_per_gpu(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    load("mem_per_gpu.sh", &s, NULL, "", c, &j);
    assert_int_equal(s.ntasks, 8);
    assert_int_equal(s.ntasks_per_node, 4);
    assert_int_equal(s.gpus_per_task, 1);
    assert_int_equal(s.mem_per_gpu_mb, 48 * GB);
    assert_int_equal(s.cpus_per_node, 6);
    assert_int_equal(j.req.nodes, 2);                  /* 8 tasks, 4 a node */
    assert_int_equal(j.req.gpus_per_node, 4);          /* 4 tasks x 1 GPU */
    assert_int_equal(j.req.mem_mb_per_node, 192 * GB); /* 4 GPUs x 48G */
    assert_int_equal(j.req.cpu_milli_per_node, 24000); /* 4 tasks x 6 CPUs */
    dr_jobspec_free(&s);
}

static void test_checkpoint_requeue(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    const char *ign[] = {"#SBATCH --open-mode=append", NULL};
    load("checkpoint_requeue.sh", &s, ign, "", c, &j); /* B: is honoured: no note */
    assert_int_equal(s.signal_num, SIGUSR1);
    assert_int_equal(s.signal_secs, 120);
    assert_true(s.signal_batch);
    assert_int_equal(s.requeue, 1);
    assert_int_equal(s.time_limit, S(4 * 3600));
    assert_int_equal(j.req.gpus_per_node, 8);
    dr_jobspec_free(&s);
}

static void test_exclusive(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    load("exclusive_node.sh", &s, NULL,
         "--exclusive: whole nodes only where all the nodes the job may use are alike; otherwise "
         "its nodes may be shared\n",
         c, &j);
    assert_int_equal(s.exclusive, 1);
    assert_int_equal(s.requeue, 0);
    assert_string_equal(s.gpu_type, "h100");
    assert_int_equal(s.time_limit, S(20 * 60));
    assert_int_equal(j.req.nodes, 1);
    assert_int_equal(j.req.gpus_per_node, 8);
    assert_int_equal(j.req.cpu_milli_per_node, 96000);
    assert_int_equal(j.req.mem_mb_per_node, 1024 * GB);
    dr_jobspec_free(&s);
}

static void test_cpu_only(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    load("cpu_preprocess.sh", &s, NULL, "", c, &j);
    assert_int_equal(s.cpus_per_node, 32);
    assert_int_equal(s.mem_mb, 64 * GB);
    assert_string_equal(s.partition, "cpu");
    assert_string_equal(s.cwd, "/scratch/data");
    assert_int_equal(j.req.nodes, 1);
    assert_int_equal(j.req.gpus_per_node, 0);
    assert_int_equal(j.req.cpu_milli_per_node, 32000);
    assert_int_equal(j.req.mem_mb_per_node, 64 * GB);
    assert_int_equal(j.time_limit, S(3 * 3600));
    dr_jobspec_free(&s);
}

static void test_export_qos(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    load("export_none_qos.sh", &s, NULL,
         "--qos=high: not enforced\n"
         "--export=NONE: not applied; the job gets the environment it was submitted with\n",
         c, &j);
    assert_string_equal(s.export_env, "NONE");
    assert_string_equal(s.qos, "high");
    assert_int_equal(s.gpus, 2);
    assert_int_equal(s.priority, 10);
    assert_int_equal(j.priority, 10);
    assert_int_equal(j.req.gpus_per_node, 2);
    assert_int_equal(j.time_limit, S(3600));
    dr_jobspec_free(&s);
}

/* Scripts whose body starts steps with srun (docs/slurm.md, "srun"): the
 * directives still make the job's request; srun's options are the script's
 * business at run time. */
static void test_srun_torchrun(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    load("srun_torchrun.sh", &s, NULL, "", c, &j);
    assert_string_equal(s.name, "ddp-srun");
    assert_int_equal(s.nodes, 2);
    assert_int_equal(s.ntasks_per_node, 1);
    assert_int_equal(s.gpus_per_node, 4);
    assert_int_equal(s.time_limit, S(4 * 3600));
    assert_string_equal(s.out_path, "%x-%j.out");
    assert_non_null(strstr(s.script, "--node_rank \"$SLURM_NODEID\""));
    assert_int_equal(j.req.nodes, 2);
    assert_int_equal(j.req.gpus_per_node, 4);
    assert_int_equal(j.req.cpu_milli_per_node, 16000); /* one task of 16 CPUs a node */
    dr_jobspec_free(&s);
}

static void test_srun_deepspeed(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    load("srun_deepspeed.sh", &s, NULL, "", c, &j);
    assert_string_equal(s.name, "ds-zero3");
    assert_int_equal(s.nodes, 2);
    assert_int_equal(s.ntasks_per_node, 8);
    assert_int_equal(s.gpus_per_task, 1);
    assert_int_equal(s.time_limit, S(86400));
    /* 8 tasks x 1 GPU a node: 8 GPUs, 64 CPUs, 640 GB a node - the H100 nodes */
    assert_int_equal(j.req.nodes, 2);
    assert_int_equal(j.req.gpus_per_node, 8);
    assert_int_equal(j.req.cpu_milli_per_node, 64000);
    assert_int_equal(j.req.mem_mb_per_node, 640 * GB);
    dr_jobspec_free(&s);
}

static void test_srun_pipeline(void **state)
{
    dr_cluster_t *c = *state;
    dr_jobspec_t s;
    dr_job_t j;
    const char *ign[] = {"#SBATCH --mail-type=FAIL", NULL};
    load("srun_pipeline_steps.sh", &s, ign, "", c, &j);
    assert_string_equal(s.name, "prep-train-eval");
    assert_int_equal(s.nodes, 2);
    assert_int_equal(s.ntasks, 8);
    assert_int_equal(s.gpus_per_node, 4);
    assert_int_equal(s.requeue, 1);
    assert_int_equal(j.req.nodes, 2);
    assert_int_equal(j.req.gpus_per_node, 4);
    assert_true(j.req.types == type_bit(c, "A100"));
    dr_jobspec_free(&s);
}

static int setup(void **state)
{
    dr_cluster_t *c = malloc(sizeof *c);
    tu_cluster(c, conf);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    dr_cluster_free(*state);
    free(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torchrun),           cmocka_unit_test(test_deepspeed),
        cmocka_unit_test(test_array_sweep),        cmocka_unit_test(test_dependency),
        cmocka_unit_test(test_gres_a100),          cmocka_unit_test(test_mem_per_gpu),
        cmocka_unit_test(test_checkpoint_requeue), cmocka_unit_test(test_exclusive),
        cmocka_unit_test(test_cpu_only),           cmocka_unit_test(test_export_qos),
        cmocka_unit_test(test_srun_torchrun),      cmocka_unit_test(test_srun_deepspeed),
        cmocka_unit_test(test_srun_pipeline),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
