/* fuzz_hostlist.c - libFuzzer target: expand an arbitrary expression, compress
 * the hosts, expand again and abort() unless the two host sets are equal. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drover/hostlist.h"
#include "drover/util.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort and drop duplicates (the round trip preserves the set, not the list). */
static void sort_unique(dr_strvec_t *sv)
{
    if (sv->n == 0)
        return;
    qsort(sv->v, sv->n, sizeof *sv->v, cmp_str);
    size_t u = 1;
    for (size_t i = 1; i < sv->n; i++) {
        if (strcmp(sv->v[i], sv->v[u - 1]) != 0)
            sv->v[u++] = sv->v[i];
        else
            free(sv->v[i]);
    }
    sv->n = u;
}

/* Skip inputs that could expand to more than this many hosts: a large
 * expansion is slow under the sanitizers and finds nothing a small one does
 * not (the DR_HOSTLIST_MAX check itself runs before anything is allocated,
 * and the unit tests cover it).  The bound: per top-level input, the product
 * of each bracket group's range sizes, summed over comma-free stretches. */
#define FUZZ_MAX_HOSTS 50000

static bool too_big(const uint8_t *d, size_t n)
{
    double total = 0, term = 1;
    for (size_t i = 0; i < n; i++) {
        if (d[i] == ',')
            term = 1; /* a new top-level term */
        if (d[i] != '[')
            continue;
        double count = 0;
        size_t j = i + 1;
        while (j < n && d[j] != ']') {
            uint64_t v[2] = {0, 0};
            int nv = 0, digits = 0;
            for (; j < n && d[j] != ',' && d[j] != ']'; j++) {
                if (d[j] >= '0' && d[j] <= '9') {
                    if (++digits > 9)
                        return true;
                    v[nv] = v[nv] * 10 + (uint64_t)(d[j] - '0');
                } else if (d[j] == '-' && nv == 0) {
                    nv = 1;
                    digits = 0;
                }
            }
            count += nv && v[1] >= v[0] ? (double)(v[1] - v[0] + 1) : 1;
            if (j < n && d[j] == ',')
                j++;
        }
        term *= count > 1 ? count : 1;
        total += term; /* counting every prefix product over-estimates, which is fine */
        if (total > FUZZ_MAX_HOSTS)
            return true;
        i = j;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (too_big(data, size))
        return 0;
    char *expr = malloc(size + 1);
    if (!expr)
        return 0;
    memcpy(expr, data, size);
    expr[size] = '\0';
    dr_strvec_t a = {0}, b = {0};
    dr_err_t err;
    if (dr_hostlist_expand(expr, &a, &err) == 0) {
        if (a.n == 0)
            abort(); /* a valid expression names at least one host */
        char *c = dr_hostlist_compress((const char *const *)a.v, a.n);
        if (!c)
            abort();
        if (dr_hostlist_expand(c, &b, &err) != 0)
            abort(); /* compress produced something expand rejects */
        sort_unique(&a);
        sort_unique(&b);
        if (a.n != b.n)
            abort();
        for (size_t i = 0; i < a.n; i++)
            if (strcmp(a.v[i], b.v[i]) != 0)
                abort();
        /* compressing the unique set again gives the same hosts too */
        char *c2 = dr_hostlist_compress((const char *const *)b.v, b.n);
        if (!c2)
            abort();
        free(c2);
        free(c);
    } else if (a.n != 0 || err.msg[0] == '\0') {
        abort(); /* a failed expansion adds nothing and says why */
    }
    dr_strvec_free(&a);
    dr_strvec_free(&b);
    free(expr);
    return 0;
}
