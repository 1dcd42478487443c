/* fuzz_config.c - libFuzzer target: parse arbitrary text as a cluster
 * configuration (with the built-in catalog) and as an openb node list; check
 * the invariants of any cluster that parses, and free everything. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drover/config.h"
#include "drover/workload.h"

/* Inputs that could define more nodes than this are skipped: a million
 * nodes is slow to build and finds nothing a thousand do not. */
#define FUZZ_MAX_NODES 5000

/* An upper bound on the nodes (or switches) an input can make: per line,
 * the product of its bracket groups' sizes, plus every MaxNodes value. */
static bool too_big(const uint8_t *d, size_t n)
{
    double total = 0, line = 1;
    for (size_t i = 0; i < n; i++) {
        if (d[i] == '\n') {
            total += line;
            line = 1;
        } else if (d[i] == '[') {
            double count = 0;
            size_t j = i + 1;
            while (j < n && d[j] != ']' && d[j] != '\n') {
                uint64_t v[2] = {0, 0};
                int nv = 0, digits = 0;
                while (j < n && d[j] != ',' && d[j] != ']' && d[j] != '\n') {
                    if (isdigit(d[j])) {
                        if (++digits > 9)
                            return true;
                        v[nv] = v[nv] * 10 + (uint64_t)(d[j] - '0');
                    } else if (d[j] == '-' && nv == 0) {
                        nv = 1;
                        digits = 0;
                    }
                    j++;
                }
                count += nv && v[1] >= v[0] ? (double)(v[1] - v[0] + 1) : 1;
                if (j < n && d[j] == ',')
                    j++;
            }
            line *= count > 1 ? count : 1;
            i = j < n && d[j] == ']' ? j : j - 1;
        } else if ((d[i] == 'm' || d[i] == 'M') && n - i > 9 &&
                   strncasecmp((const char *)d + i, "maxnodes=", 9) == 0) {
            size_t j = i + 9;
            if (j < n && d[j] == '"')
                j++;
            uint64_t v = 0;
            int digits = 0;
            for (; j < n && isdigit(d[j]); j++) {
                if (++digits > 9)
                    return true;
                v = v * 10 + (uint64_t)(d[j] - '0');
            }
            total += (double)v;
        }
        if (total + line > FUZZ_MAX_NODES)
            return true;
    }
    return false;
}

/* Invariants of a cluster that parsed. */
static void check(const dr_cluster_t *c)
{
    size_t gpus = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        const dr_node_t *n = &c->nodes[i];
        if (n->ngpus && n->type >= c->ntypes)
            abort();
        if (n->gpu_base != gpus ||
            (n->switch_id != DR_NONE && (size_t)n->switch_id >= c->nswitches))
            abort();
        if (n->nvl_domain != DR_NONE && (size_t)n->nvl_domain >= c->nnvl)
            abort();
        if (dr_cluster_find_node(c, n->name) != (int)i)
            abort();
        gpus += n->ngpus;
    }
    if (gpus != c->ngpus)
        abort();
    for (size_t p = 0; p < c->npools; p++)
        if ((size_t)c->pools[p].first_node + c->pools[p].max_nodes > c->nnodes)
            abort();
    for (size_t s = 0; s < c->nswitches; s++) {
        size_t steps = 0; /* no cycles */
        for (int32_t a = c->switches[s].parent; a != DR_NONE; a = c->switches[a].parent)
            if (++steps > c->nswitches)
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static dr_catalog_t cat;
    static bool have_cat;
    dr_err_t err;
    if (!have_cat) {
        if (dr_catalog_builtin(&cat, &err) != 0)
            abort();
        have_cat = true;
    }
    if (too_big(data, size))
        return 0;
    dr_cluster_t c;
    dr_cluster_init(&c);
    err.msg[0] = '\0';
    if (dr_config_parse(&c, &cat, "fuzz.conf", (const char *)data, size, &err) == 0)
        check(&c);
    else if (err.msg[0] == '\0')
        abort(); /* every failure says why */
    dr_cluster_free(&c);

    dr_cluster_init(&c);
    err.msg[0] = '\0';
    if (dr_openb_nodes_parse(&c, &cat, "fuzz.csv", (const char *)data, size, &err) == 0)
        check(&c);
    else if (err.msg[0] == '\0')
        abort();
    dr_cluster_free(&c);
    return 0;
}
