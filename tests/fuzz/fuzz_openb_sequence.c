/* fuzz_openb_sequence.c - libFuzzer target: the openb sequence-file reader
 * (and the pod-list reader) on arbitrary bytes.  What parses must format
 * and parse back to the same pods, and replay on a small cluster with the
 * ledger audit passing; everything is freed (the ASan build checks leaks). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drover/catalog.h"
#include "drover/cluster.h"
#include "drover/openb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void build(dr_cluster_t *c)
{
    dr_cluster_init(c);
    static const char *const types[] = {"T4", "P100"};
    for (int t = 0; t < 2; t++) {
        dr_gpu_spec_t s;
        dr_gpu_spec_unknown(&s, types[t]);
        dr_cluster_add_type(c, &s, NULL);
        dr_gpu_spec_free(&s);
    }
    dr_cluster_add_node(c, "a", 0, 8, 96000, 393216, NULL);
    dr_cluster_add_node(c, "b", 1, 2, 16000, 122880, NULL);
    dr_cluster_add_node(c, "c", 0, 1, 8000, 32768, NULL);
    dr_cluster_finalize(c, NULL);
}

static void replay(const dr_openb_pods_t *p)
{
    static const char *const pols[] = {"fgd", "drover", "bestfit"};
    dr_cluster_t c;
    build(&c);
    dr_openb_opts_t o = {.policy = pols[p->n % 3], .seed = p->n};
    dr_openb_result_t res;
    dr_err_t err;
    if (dr_openb_replay(&c, p, &o, &res, &err) == DR_OK) {
        const dr_alloc_t **ap = malloc((res.npods ? res.npods : 1) * sizeof *ap);
        if (ap) {
            for (size_t i = 0; i < res.npods; i++)
                ap[i] = &res.alloc[i];
            if (dr_cluster_audit(&c, ap, res.npods, &err) != DR_OK)
                abort();
            free(ap);
        }
        char *csv;
        if (dr_openb_placements_format(&res, p, &c, &csv, NULL, &err) == DR_OK)
            free(csv);
        double v;
        dr_openb_curve_at(&res, 100, &v);
        dr_openb_result_free(&res);
    }
    dr_cluster_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dr_openb_pods_t p, back;
    dr_err_t err;
    dr_openb_pods_init(&p);
    if (dr_openb_sequence_parse(&p, "fuzz", (const char *)data, size, &err) == DR_OK) {
        char *text;
        size_t len;
        if (dr_openb_sequence_format(&p, &text, &len, &err) == DR_OK) {
            dr_openb_pods_init(&back);
            if (dr_openb_sequence_parse(&back, "again", text, len, &err) != DR_OK || back.n != p.n)
                abort(); /* what we write we must read */
            for (size_t i = 0; i < p.n; i++)
                if (back.v[i].cpu_milli != p.v[i].cpu_milli ||
                    back.v[i].gpu_milli != p.v[i].gpu_milli ||
                    back.v[i].num_gpu != p.v[i].num_gpu || back.v[i].mem_mib != p.v[i].mem_mib ||
                    strcmp(dr_strtab_get(&back.names, back.v[i].name),
                           dr_strtab_get(&p.names, p.v[i].name)) != 0)
                    abort();
            dr_openb_pods_free(&back);
            free(text);
        }
        if (p.n <= 300)
            replay(&p);
    }
    dr_openb_pods_free(&p);
    /* the same bytes as a trace pod list, and a short sequence from it */
    dr_openb_pods_init(&p);
    if (dr_openb_pods_parse(&p, "fuzz", (const char *)data, size, &err) == DR_OK) {
        dr_openb_pods_t seq;
        dr_openb_pods_init(&seq);
        if (p.n <= 300 && dr_openb_sequence_generate(&seq, &p, 11000, 1.3, size, &err) == DR_OK &&
            seq.n <= 2000)
            replay(&seq);
        dr_openb_pods_free(&seq);
    }
    dr_openb_pods_free(&p);
    return 0;
}
