/* fuzz_constraint.c - libFuzzer target: arbitrary text as a --constraint
 * expression and as a --partition list, checked on its own and evaluated
 * on a small cluster with partitions and features.  Either is refused with
 * a message naming the field, or the restriction is a node set of the
 * cluster (or none) whose nodes all pass placement's check. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drover/config.h"
#include "drover/partition.h"

static dr_cluster_t cluster;
static int loaded;

static const char conf[] = "NodeName=h[1-3] Gres=gpu:h100:8 CPUs=64 RealMemory=512000 "
                           "Features=ib,nvme\n"
                           "NodeName=a[1-2] Gres=gpu:a100_80g:4 CPUs=32 RealMemory=256000 "
                           "Features=ib\n"
                           "NodeName=c1 CPUs=16 RealMemory=64000 Features=cpu\n"
                           "PartitionName=gpu Nodes=h[1-3],a[1-2] Default=YES MaxTime=1-00:00:00\n"
                           "PartitionName=cpu Nodes=c1\nPartitionName=all Nodes=ALL\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!loaded) {
        dr_cluster_init(&cluster);
        if (dr_config_parse(&cluster, NULL, "fuzz.conf", conf, sizeof conf - 1, NULL) != 0)
            abort();
        loaded = 1;
    }
    if (size > 2048)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    /* the first line, if any, is a partition list; the rest the constraint */
    char *nl = strchr(s, '\n');
    const char *part = NULL, *cons = s;
    if (nl) {
        *nl = '\0';
        part = s;
        cons = nl + 1;
    }
    dr_err_t err = {0};
    int syntax = dr_constraint_check(cons, &err);
    if (syntax != 0 && strncmp(err.msg, "constraint: ", 12) != 0)
        abort();
    for (uint32_t nodes = 0; nodes <= 2; nodes++) {
        dr_job_req_t r = {.nodes = nodes, .gpus_per_node = nodes, .gpu_milli = 1000};
        dr_restrict_t out;
        memset(&err, 0, sizeof err);
        int rc = dr_cluster_restrict(&cluster, part, cons, &r, &out, &err);
        if (rc != 0) {
            if (strncmp(err.msg, "constraint: ", 12) != 0 &&
                strncmp(err.msg, "partition: ", 11) != 0)
                abort();
            continue;
        }
        if (syntax != 0 && cons[strspn(cons, " \t\r\n\v\f")]) /* accepted what the check refused */
            abort();
        if (out.nodeset && dr_nodeset_count(&cluster, out.nodeset) == 0)
            abort(); /* an empty restriction is refused, never returned */
    }
    free(s);
    return 0;
}
