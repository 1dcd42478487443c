/* config.c - `drover config check FILE`: read a cluster configuration (a
 * drover one or a site's slurm.conf) as droverd would, print what it
 * ignores and what it found (nodes, GPUs by type, partitions, features),
 * exit 0, or 1 with the reader's "FILE:LINE: KEY: reason". */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "drover/config.h"
#include "drover/partition.h"

static int check(const char *path)
{
    dr_cluster_t c;
    dr_cluster_init(&c);
    dr_strvec_t notes = {0};
    dr_err_t err = {0};
    int rc = dr_config_load_notes(&c, NULL, path, &notes, &err);
    for (size_t i = 0; i < notes.n; i++)
        printf("note: %s\n", notes.v[i]);
    dr_strvec_free(&notes);
    if (rc != 0) {
        fprintf(stderr, "drover: %s\n", err.msg);
        dr_cluster_free(&c);
        return 1;
    }
    printf("%s: %zu nodes\n", path, c.nnodes);
    for (size_t t = 0; t < c.ntypes; t++)
        printf("  %llu x %s\n", (unsigned long long)dr_cluster_total_gpus(&c, (int)t),
               c.types[t].name);
    for (size_t i = 0; i < dr_cluster_npartitions(&c); i++) {
        const dr_partition_t *p = dr_cluster_partition(&c, i);
        printf("  partition %s: %llu nodes%s, %s\n", p->name,
               (unsigned long long)dr_nodeset_count(&c, p->nodeset),
               p->is_default ? " (default)" : "", dr_part_state_name((dr_part_state_t)p->state));
    }
    if (dr_cluster_nfeatures(&c)) {
        printf("  features:");
        for (size_t f = 0; f < dr_cluster_nfeatures(&c); f++)
            printf(" %s", dr_cluster_feature_name(&c, f));
        printf("\n");
    }
    dr_cluster_free(&c);
    return 0;
}

int cli_config(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: drover config check FILE\n"
               "Read a cluster configuration (drover's, or a site's slurm.conf) as droverd "
               "does:\nprint the keys it ignores and what it found; exit 1 on an error.\n");
        return 0;
    }
    if (argc != 3 || strcmp(argv[1], "check") != 0)
        return cli_usage_error("usage: drover config check FILE");
    return check(argv[2]);
}
