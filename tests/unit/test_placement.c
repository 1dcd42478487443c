/* test_placement.c - the cluster ledger and its index, and placement:
 * first-fit vs best-fit, gangs, shares, --gpus=N, CPU-only, hidden and
 * down nodes, and a randomised check against a brute-force model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/cluster.h"
#include "drover/placement.h"
#include "drover/util.h"
#include "testutil.h"

static void add_type(dr_cluster_t *c, const char *name, double mem)
{
    dr_gpu_spec_t s;
    dr_gpu_spec_unknown(&s, name);
    s.mem_gb = mem;
    assert_true(dr_cluster_add_type(c, &s, NULL) >= 0);
    dr_gpu_spec_free(&s);
}

/* nodes: a0..a3 with 8 A GPUs, b0..b3 with 4 B GPUs, c0 CPU-only */
static void build(dr_cluster_t *c)
{
    dr_cluster_init(c);
    add_type(c, "A", 80);
    add_type(c, "B", 24);
    char name[16];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "a%d", i);
        assert_true(dr_cluster_add_node(c, name, 0, 8, 64000, 512000, NULL) >= 0);
    }
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "b%d", i);
        assert_true(dr_cluster_add_node(c, name, 1, 4, 32000, 256000, NULL) >= 0);
    }
    assert_true(dr_cluster_add_node(c, "c0", -1, 0, 128000, 1024000, NULL) >= 0);
    assert_int_equal(dr_cluster_finalize(c, NULL), DR_OK);
}

static dr_job_req_t req(uint32_t nodes, uint32_t gpn, uint32_t milli)
{
    dr_job_req_t r = {.nodes = nodes, .gpus_per_node = gpn, .gpu_milli = milli};
    return r;
}

static void test_build_and_totals(void **st)
{
    (void)st;
    dr_cluster_t c;
    build(&c);
    assert_int_equal(c.nnodes, 9);
    assert_int_equal(dr_cluster_total_gpus(&c, -1), 48);
    assert_int_equal(dr_cluster_total_gpus(&c, 0), 32);
    assert_int_equal(dr_cluster_free_milli(&c, 1), 16000);
    assert_int_equal(dr_cluster_find_node(&c, "b2"), 6);
    assert_int_equal(dr_cluster_find_node(&c, "zz"), -1);
    dr_err_t err;
    assert_int_equal(dr_cluster_add_node(&c, "a0", 0, 8, 0, 0, &err), DR_ESTATE);
    dr_cluster_free(&c);
    dr_cluster_init(&c);
    add_type(&c, "A", 80);
    assert_true(dr_cluster_add_node(&c, "x", 0, 1, 0, 0, NULL) >= 0);
    assert_int_equal(dr_cluster_add_node(&c, "x", 0, 1, 0, 0, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "defined twice");
    dr_cluster_free(&c);
}

static void test_first_vs_best_fit(void **st)
{
    (void)st;
    dr_cluster_t c;
    build(&c);
    dr_place_opts_t ff = {.strategy = DR_PLACE_FIRST_FIT}, bf = {.strategy = DR_PLACE_BEST_FIT};
    dr_job_req_t one = req(1, 1, 1000);
    dr_alloc_t a1, a2, a3;
    /* first-fit: lowest node, lowest GPU */
    assert_int_equal(dr_place(&c, &one, 1, &ff, &a1), DR_OK);
    assert_int_equal(a1.slots[0].node, 0);
    assert_int_equal(a1.slots[0].gpu, 0);
    /* take 6 on a1 so a1 has 2 idle, a0 has 7 idle */
    dr_job_req_t six = req(1, 6, 1000);
    assert_int_equal(dr_place(&c, &six, 1, &bf, &a2), DR_OK);
    /* best-fit puts 6 GPUs on the fullest node that can take them: a0 has 7 */
    assert_int_equal(a2.slots[0].node, 0);
    /* now a0 has 1 idle: best-fit sends a 1-GPU job there, not to an empty node */
    assert_int_equal(dr_place(&c, &one, 1, &bf, &a3), DR_OK);
    assert_int_equal(a3.slots[0].node, 0);
    assert_int_equal(c.nodes[0].gpus_idle, 0);
    dr_alloc_t *all[] = {&a1, &a2, &a3};
    assert_int_equal(dr_cluster_audit(&c, (const dr_alloc_t *const *)all, 3, NULL), DR_OK);
    dr_cluster_give(&c, &a2);
    assert_int_equal(c.nodes[0].gpus_idle, 6);
    dr_alloc_free(&a1);
    dr_alloc_free(&a2);
    dr_alloc_free(&a3);
    dr_cluster_free(&c);
}

static void test_gang_types_and_limits(void **st)
{
    (void)st;
    dr_cluster_t c;
    build(&c);
    dr_place_opts_t ff = {.strategy = DR_PLACE_FIRST_FIT};
    dr_alloc_t a;
    dr_job_req_t g = req(3, 4, 1000);
    /* only type B allowed: b0..b2 */
    assert_int_equal(dr_place(&c, &g, 1ULL << 1, &ff, &a), DR_OK);
    assert_int_equal(a.nnodes, 3);
    assert_int_equal(a.nslots, 12);
    assert_int_equal(a.type, 1);
    assert_int_equal(a.slots[0].node, 4);
    assert_int_equal(a.slots[11].node, 6);
    /* a second 3x4 gang of B does not fit (one B node left) */
    dr_alloc_t b;
    assert_int_equal(dr_place(&c, &g, 1ULL << 1, &ff, &b), DR_ENOSPC);
    /* but on A or B it goes to A */
    assert_int_equal(dr_place(&c, &g, 3, &ff, &b), DR_OK);
    assert_int_equal(b.type, 0);
    /* 9 GPUs per node never fits */
    dr_job_req_t big = req(1, 9, 1000);
    dr_alloc_t x;
    assert_int_equal(dr_place(&c, &big, 3, &ff, &x), DR_ENOSPC);
    dr_err_t err;
    assert_int_equal(dr_cluster_req_possible(&c, &big, &err), DR_ENOSPC);
    tu_assert_contains(err.msg, "largest eligible node has 8");
    dr_job_req_t mem = req(1, 1, 1000);
    mem.min_gpu_mem_gb = 40;
    assert_int_equal(dr_cluster_eligible_types(&c, &mem), 1);
    mem.min_gpu_mem_gb = 100;
    assert_int_equal(dr_cluster_req_possible(&c, &mem, &err), DR_ENOSPC);
    tu_assert_contains(err.msg, ">= 100 GB");
    /* CPU limits: 40 CPUs per node rules out B nodes (32 CPUs) */
    dr_job_req_t cpu = req(1, 1, 1000);
    cpu.cpu_milli_per_node = 40000;
    assert_int_equal(dr_place(&c, &cpu, 2, &ff, &x), DR_ENOSPC);
    assert_int_equal(dr_place(&c, &cpu, 3, &ff, &x), DR_OK);
    assert_int_equal(c.nodes[x.slots[0].node].type, 0);
    assert_int_equal(c.nodes[x.slots[0].node].cpu_free, 24000);
    dr_cluster_give(&c, &x);
    dr_alloc_free(&x);
    dr_alloc_free(&a);
    dr_alloc_free(&b);
    dr_cluster_free(&c);
}

static void test_shares(void **st)
{
    (void)st;
    dr_cluster_t c;
    build(&c);
    dr_place_opts_t bf = {.strategy = DR_PLACE_BEST_FIT};
    dr_alloc_t a[4];
    dr_job_req_t s3 = req(1, 1, 300), s6 = req(1, 1, 600), s5 = req(1, 1, 500);
    assert_int_equal(dr_place(&c, &s3, 2, &bf, &a[0]), DR_OK); /* B only */
    uint32_t n0 = a[0].slots[0].node;
    uint16_t g0 = a[0].slots[0].gpu;
    /* best-fit: the next share goes on the already-shared GPU (700 free) */
    assert_int_equal(dr_place(&c, &s6, 2, &bf, &a[1]), DR_OK);
    assert_int_equal(a[1].slots[0].node, n0);
    assert_int_equal(a[1].slots[0].gpu, g0);
    assert_int_equal(c.gpu_free[c.nodes[n0].gpu_base + g0], 100);
    /* 500 no longer fits there: a fresh GPU is used */
    assert_int_equal(dr_place(&c, &s5, 2, &bf, &a[2]), DR_OK);
    assert_false(a[2].slots[0].node == n0 && a[2].slots[0].gpu == g0);
    assert_int_equal(dr_alloc_milli(&a[2]), 500);
    /* the ledger refuses to over-commit a GPU */
    dr_alloc_t over = {0};
    dr_slot_t sl = {n0, g0, 200};
    over.slots = &sl;
    over.nslots = 1;
    over.nnodes = 1;
    dr_err_t err;
    assert_int_equal(dr_cluster_take(&c, &over, &err), DR_ENOSPC);
    tu_assert_contains(err.msg, "has 100 milli free");
    const dr_alloc_t *all[] = {&a[0], &a[1], &a[2]};
    assert_int_equal(dr_cluster_audit(&c, all, 3, NULL), DR_OK);
    for (int i = 0; i < 3; i++) {
        dr_cluster_give(&c, &a[i]);
        dr_alloc_free(&a[i]);
    }
    assert_int_equal(dr_cluster_free_milli(&c, -1), 48000);
    dr_cluster_free(&c);
}

static void test_flex_and_cpu_only(void **st)
{
    (void)st;
    dr_cluster_t c;
    build(&c);
    dr_place_opts_t bf = {.strategy = DR_PLACE_BEST_FIT}, ff = {.strategy = DR_PLACE_FIRST_FIT};
    dr_alloc_t a, b, d;
    dr_job_req_t g12 = req(0, 12, 1000);                     /* --gpus=12 */
    assert_int_equal(dr_place(&c, &g12, 2, &bf, &a), DR_OK); /* B: 3 nodes x 4 */
    assert_int_equal(a.nnodes, 3);
    assert_int_equal(a.nslots, 12);
    dr_job_req_t g5 = req(0, 5, 1000);
    assert_int_equal(dr_place(&c, &g5, 2, &bf, &b), DR_ENOSPC); /* only 4 B left */
    assert_int_equal(dr_place(&c, &g5, 3, &ff, &b), DR_OK);     /* one A node */
    assert_int_equal(b.nnodes, 1);
    dr_job_req_t cpu = req(2, 0, 1000);
    cpu.cpu_milli_per_node = 100000; /* only c0 has 128 CPUs */
    assert_int_equal(dr_place(&c, &cpu, 0, &ff, &d), DR_ENOSPC);
    cpu.nodes = 1;
    assert_int_equal(dr_place(&c, &cpu, 0, &ff, &d), DR_OK);
    assert_int_equal(d.slots[0].node, 8);
    assert_int_equal(d.slots[0].gpu, DR_NO_GPU);
    const dr_alloc_t *all[] = {&a, &b, &d};
    assert_int_equal(dr_cluster_audit(&c, all, 3, NULL), DR_OK);
    dr_alloc_free(&a);
    dr_alloc_free(&b);
    dr_alloc_free(&d);
    dr_cluster_free(&c);
}

static void test_hidden_and_down(void **st)
{
    (void)st;
    dr_cluster_t c;
    build(&c);
    dr_place_opts_t ff = {.strategy = DR_PLACE_FIRST_FIT};
    dr_alloc_t a;
    dr_job_req_t one = req(1, 8, 1000);
    dr_cluster_hide(&c, 0, true);
    dr_cluster_set_state(&c, 1, DR_NODE_DOWN);
    assert_int_equal(dr_cluster_total_gpus(&c, 0), 24);
    assert_int_equal(dr_place(&c, &one, 1, &ff, &a), DR_OK);
    assert_int_equal(a.slots[0].node, 2);
    dr_cluster_give(&c, &a);
    dr_alloc_free(&a);
    dr_cluster_hide(&c, 0, false);
    assert_int_equal(dr_place(&c, &one, 1, &ff, &a), DR_OK);
    assert_int_equal(a.slots[0].node, 0);
    dr_alloc_free(&a);
    dr_cluster_set_state(&c, 1, DR_NODE_UP);
    assert_int_equal(dr_cluster_total_gpus(&c, 0), 32);
    assert_int_equal(dr_cluster_free_milli(&c, 0), 24000);
    dr_cluster_free(&c);
}

/* Randomised: many allocations and releases on a larger cluster; the ledger
 * audit must always pass, and a request placement refuses must really not
 * fit (checked by brute force over the nodes). */
static void test_random_against_model(void **st)
{
    (void)st;
    dr_cluster_t c;
    dr_cluster_init(&c);
    add_type(&c, "A", 80);
    add_type(&c, "B", 24);
    char name[16];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "n%03d", i);
        assert_true(dr_cluster_add_node(&c, name, i % 3 == 0, i % 5 == 0 ? 4 : 8, 64000, 1000000,
                                        NULL) >= 0);
    }
    assert_int_equal(dr_cluster_finalize(&c, NULL), DR_OK);
    dr_rng_t rng;
    dr_rng_seed(&rng, 7);
    dr_alloc_t *live = calloc(4000, sizeof *live);
    size_t nlive = 0;
    for (int step = 0; step < 20000; step++) {
        if (nlive && (dr_rng_below(&rng, 3) == 0 || nlive == 4000)) {
            size_t k = dr_rng_below(&rng, nlive);
            dr_cluster_give(&c, &live[k]);
            dr_alloc_free(&live[k]);
            live[k] = live[--nlive];
            continue;
        }
        dr_job_req_t r;
        switch (dr_rng_below(&rng, 4)) {
        case 0: r = req(1, 1, (uint32_t)(100 + dr_rng_below(&rng, 900))); break;
        case 1: r = req(1, 1u << dr_rng_below(&rng, 4), 1000); break;
        case 2: r = req((uint32_t)(1 + dr_rng_below(&rng, 3)), 8, 1000); break;
        default: r = req(0, (uint32_t)(1 + dr_rng_below(&rng, 20)), 1000); break;
        }
        r.cpu_milli_per_node = (uint32_t)dr_rng_below(&rng, 8) * 1000;
        dr_typemask_t allowed = 1 + dr_rng_below(&rng, 3);
        dr_place_opts_t o = {.strategy =
                                 dr_rng_below(&rng, 2) ? DR_PLACE_BEST_FIT : DR_PLACE_FIRST_FIT};
        int rc = dr_place(&c, &r, allowed, &o, &live[nlive]);
        if (rc == DR_OK) {
            nlive++;
        } else if (r.nodes == 1) {
            /* brute force: no single node of an allowed type fits */
            dr_job_req_t rr = r;
            rr.types = allowed;
            for (size_t i = 0; i < c.nnodes; i++)
                if (dr_node_fits(&c, &c.nodes[i], &rr))
                    fail_msg("step %d: placement refused but node %s fits", step, c.nodes[i].name);
        }
        if (step % 1000 == 0) {
            tu_audit(&c, live, nlive, step);
        }
    }
    tu_give_all(&c, live, nlive);
    free(live);
    dr_cluster_free(&c);
}

static void test_copy(void **st)
{
    (void)st;
    dr_cluster_t c, d;
    build(&c);
    dr_place_opts_t ff = {.strategy = DR_PLACE_FIRST_FIT};
    dr_alloc_t a;
    dr_job_req_t r = req(1, 8, 1000);
    assert_int_equal(dr_place(&c, &r, 1, &ff, &a), DR_OK);
    assert_int_equal(dr_cluster_copy(&d, &c, NULL), DR_OK);
    assert_int_equal(d.nodes[0].gpus_idle, 0);
    assert_string_equal(d.nodes[5].name, "b1");
    assert_int_equal(dr_cluster_find_node(&d, "c0"), 8);
    dr_alloc_t b;
    assert_int_equal(dr_place(&d, &r, 1, &ff, &b), DR_OK);
    assert_int_equal(b.slots[0].node, 1);
    assert_int_equal(c.nodes[1].gpus_idle, 8); /* the copy is independent */
    dr_alloc_free(&a);
    dr_alloc_free(&b);
    dr_cluster_free(&c);
    dr_cluster_free(&d);
}

/* The ledger's query interface (what placement and backfill read instead
 * of the index): finds in node order skipping what cannot fit, bounds,
 * buckets by idle GPUs, and the topology groups' counts, all following
 * bookings, drains and hiding. */
static void test_ledger_queries(void **st)
{
    (void)st;
    dr_cluster_t c;
    build(&c);
    assert_true(dr_cluster_finalized(&c));
    assert_int_equal(dr_ledger_npos(&c, 0), 4);
    assert_int_equal(dr_ledger_npos(&c, 1), 4);
    assert_int_equal(dr_ledger_npos(&c, DR_LEDGER_ALL), 9);
    assert_int_equal(dr_ledger_max_gpus(&c, 0), 8);
    assert_int_equal(dr_ledger_whole_nodes(&c, 0), 4);
    assert_int_equal(dr_ledger_idle_gpus(&c, 1), 16);
    /* a1 gets a 5-GPU job (3 idle left), a2 a half GPU */
    dr_slot_t s1[5], s2[1] = {{2, 0, 500}};
    for (uint16_t g = 0; g < 5; g++)
        s1[g] = (dr_slot_t){1, g, 1000};
    dr_alloc_t a1 = {.slots = s1, .nslots = 5, .nnodes = 1, .type = 0};
    dr_alloc_t a2 = {.slots = s2, .nslots = 1, .nnodes = 1, .type = 0};
    assert_int_equal(dr_cluster_take(&c, &a1, NULL), DR_OK);
    assert_int_equal(dr_cluster_take(&c, &a2, NULL), DR_OK);
    /* nodes with 4 idle GPUs, in node order: a0, a2, a3 (not a1) */
    dr_ledger_q_t q4 = {.idle = 4};
    size_t from = 0;
    uint32_t seen[4], n = 0, nd;
    while ((nd = dr_ledger_find(&c, 0, &from, &q4)) != DR_LEDGER_NIL)
        seen[n++] = nd;
    assert_int_equal(n, 3);
    assert_true(seen[0] == 0 && seen[1] == 2 && seen[2] == 3);
    assert_int_equal(from, 4); /* past the last one found; unchanged by the miss */
    /* a shared GPU with 500 milli free: only a2 */
    dr_ledger_q_t qp = {.part = 500};
    from = 0;
    assert_int_equal(dr_ledger_find(&c, 0, &from, &qp), 2);
    assert_int_equal(dr_ledger_find(&c, 0, &from, &qp), DR_LEDGER_NIL);
    dr_ledger_q_t mx = dr_ledger_max(&c, 0);
    assert_true(mx.idle == 8 && mx.milli == 1000 && mx.part == 500 && mx.pidle == 7);
    /* buckets: a1 has 3 idle, a2 7, a0 and a3 all 8 */
    assert_int_equal(dr_ledger_bucket_count(&c, 0, 8), 2);
    assert_int_equal(dr_ledger_bucket_count(&c, 0, 3), 1);
    assert_int_equal(dr_ledger_bucket_first(&c, 0, 3), 1);
    assert_int_equal(dr_ledger_bucket_next(&c, 1), DR_LEDGER_NIL);
    assert_int_equal(dr_ledger_bucket_count(&c, 0, 9), 0);
    assert_int_equal(dr_ledger_bucket_first(&c, 0, 9), DR_LEDGER_NIL);
    assert_int_equal(dr_ledger_whole_nodes(&c, 0), 2);
    assert_int_equal(dr_ledger_idle_gpus(&c, 0), 8 + 3 + 7 + 8);
    /* drained: out of the trees and in bucket 0; hidden: out of the trees
     * but in its bucket (placement skips it by dr_node_fits) */
    dr_cluster_set_state(&c, 3, DR_NODE_DRAIN);
    dr_cluster_hide(&c, 0, true);
    from = 0;
    assert_int_equal(dr_ledger_find(&c, 0, &from, &q4), 2);
    assert_int_equal(dr_ledger_find(&c, 0, &from, &q4), DR_LEDGER_NIL);
    assert_int_equal(dr_ledger_bucket_count(&c, 0, 0), 1);
    assert_int_equal(dr_ledger_bucket_count(&c, 0, 8), 1);
    assert_int_equal(dr_ledger_max(&c, 0).idle, 7);
    dr_cluster_hide(&c, 0, false);
    dr_cluster_set_state(&c, 3, DR_NODE_UP);
    dr_cluster_give(&c, &a1);
    dr_cluster_give(&c, &a2);
    assert_int_equal(dr_ledger_bucket_count(&c, 0, 8), 4);
    assert_false(dr_ledger_has_groups(&c)); /* no topology here */
    dr_cluster_free(&c);

    /* two leaves of two nodes: groups with their idle counts */
    dr_cluster_init(&c);
    add_type(&c, "A", 80);
    const char *names[] = {"x0", "x1", "y0", "y1"};
    for (int i = 0; i < 4; i++)
        assert_true(dr_cluster_add_node(&c, names[i], 0, 8, 64000, 512000, NULL) >= 0);
    int l1 = dr_cluster_add_switch(&c, "l1", NULL), l2 = dr_cluster_add_switch(&c, "l2", NULL);
    c.nodes[0].switch_id = c.nodes[1].switch_id = l1;
    c.nodes[2].switch_id = c.nodes[3].switch_id = l2;
    assert_int_equal(dr_cluster_finalize(&c, NULL), DR_OK);
    assert_true(dr_ledger_has_groups(&c));
    uint32_t first, ng;
    const dr_ledger_grp_t *gs = dr_ledger_groups(&c, 0, DR_LEDGER_LEAF, &first, &ng);
    assert_int_equal(ng, 2);
    assert_true(gs[0].id == l1 && gs[1].id == l2 && gs[0].n == 2 && gs[0].idle == 16);
    assert_ptr_equal(dr_ledger_group(&c, first + 1), &gs[1]);
    const uint32_t *gn = dr_ledger_group_nodes(&c, first + 1);
    assert_true(gn[0] == 2 && gn[1] == 3);
    assert_null(dr_ledger_groups(&c, 0, DR_LEDGER_NVL, &first, &ng));
    assert_int_equal(ng, 0);
    gs = dr_ledger_groups(&c, 0, DR_LEDGER_LEAF, &first, &ng);
    dr_slot_t s3[6];
    for (uint16_t g = 0; g < 6; g++)
        s3[g] = (dr_slot_t){3, g, 1000};
    dr_alloc_t a3 = {.slots = s3, .nslots = 6, .nnodes = 1, .type = 0};
    assert_int_equal(dr_cluster_take(&c, &a3, NULL), DR_OK); /* y1: 2 idle */
    assert_int_equal(gs[1].idle, 10);
    uint64_t fit[2], fewest[2];
    dr_ledger_groups_fit(&c, first, 2, 4, fit);
    assert_true(fit[0] == 2 && fit[1] == 1);
    dr_ledger_groups_min_nodes(&c, first, 2, 10, fewest);
    assert_true(fewest[0] == 2 && fewest[1] == 2);
    dr_ledger_groups_min_nodes(&c, first, 2, 11, fewest);
    assert_true(fewest[0] == 2 && fewest[1] == UINT64_MAX);
    dr_cluster_give(&c, &a3);
    dr_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_totals),      cmocka_unit_test(test_first_vs_best_fit),
        cmocka_unit_test(test_gang_types_and_limits), cmocka_unit_test(test_shares),
        cmocka_unit_test(test_flex_and_cpu_only),     cmocka_unit_test(test_hidden_and_down),
        cmocka_unit_test(test_random_against_model),  cmocka_unit_test(test_copy),
        cmocka_unit_test(test_ledger_queries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
