/* fuzz_jobspec.c - libFuzzer target: the job-field vocabulary on arbitrary
 * bytes.  The first byte picks the reader (mod 4): 0 the API's JSON, 1 a
 * batch script's directives, 2 a time limit, 3 "FIELD\nVALUE" for
 * dr_jobspec_set.  Whatever parses must survive validation and the
 * conversion to a job on a small cluster, and must round trip: to_json,
 * from_json, to_json give the same text (abort otherwise). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drover/config.h"
#include "drover/jobspec.h"

static dr_cluster_t cluster;
static bool have_cluster;

static void build_cluster(void)
{
    static const char conf[] = "NodeName=h[1-2] Gpus=H100-SXM:8 Cpus=64 MemGB=512\n"
                               "NodeName=a[1-4] Gpus=A100:4 Cpus=32 MemGB=256\n"
                               "NodeName=c1 Cpus=128 MemGB=64\n";
    dr_catalog_t cat;
    dr_err_t err;
    if (dr_catalog_builtin(&cat, &err) != DR_OK)
        abort();
    dr_cluster_init(&cluster);
    if (dr_config_parse(&cluster, &cat, "fuzz.conf", conf, sizeof conf - 1, &err) != DR_OK)
        abort();
    dr_catalog_free(&cat);
    have_cluster = true;
}

/* The invariants of a spec that parsed. */
static void check(const dr_jobspec_t *s)
{
    char *a = dr_jobspec_to_json(s);
    if (!a) /* every string a parser keeps is UTF-8 */
        abort();
    dr_jobspec_t t;
    dr_jobspec_init(&t);
    dr_err_t err;
    if (dr_jobspec_from_json(&t, a, strlen(a), &err) != DR_OK)
        abort();
    char *b = dr_jobspec_to_json(&t);
    if (!b || strcmp(a, b) != 0)
        abort();
    if ((t.set | s->set) != t.set) /* every given field came back */
        abort();
    free(a);
    free(b);
    dr_jobspec_free(&t);

    if (dr_jobspec_validate(s, &err) != DR_OK)
        return;
    dr_job_t j;
    dr_job_init(&j);
    if (dr_jobspec_to_job(s, &cluster, 1000 * DR_NSEC_PER_SEC, &j, &err) == DR_OK &&
        (dr_job_req_validate(&j.req, NULL) != DR_OK ||
         dr_cluster_req_possible(&cluster, &j.req, NULL) != DR_OK))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (!have_cluster)
        build_cluster();
    int mode = data[0] % 4;
    const char *rest = (const char *)data + 1;
    size_t n = size - 1;
    char *text = malloc(n + 1);
    if (!text)
        return 0;
    memcpy(text, rest, n);
    text[n] = '\0';
    dr_jobspec_t s;
    dr_jobspec_init(&s);
    dr_err_t err = {0};
    int rc;
    switch (mode) {
    case 0: rc = dr_jobspec_from_json(&s, rest, n, &err); break;
    case 1: rc = dr_jobspec_parse_script(&s, "fuzz.sh", rest, n, &err); break;
    case 2: {
        dr_time_t t = -1;
        rc = dr_time_limit_parse(text, &t, &err);
        if (rc == DR_OK) {
            if (t < 0 || t > 9000000000LL * DR_NSEC_PER_SEC)
                abort();
            /* the field parses the same text to the same time, in whole seconds */
            if (dr_jobspec_set(&s, "time_limit", text, &err) != DR_OK)
                abort();
            if (s.time_limit < t || s.time_limit - t >= DR_NSEC_PER_SEC ||
                s.time_limit % DR_NSEC_PER_SEC)
                abort();
        }
        break;
    }
    default: {
        char *nl = strchr(text, '\n');
        if (!nl) { /* no value: the field name alone */
            rc = dr_jobspec_set(&s, text, NULL, &err);
            if (rc == DR_OK)
                abort();
            break;
        }
        *nl = '\0';
        rc = dr_jobspec_set(&s, text, nl + 1, &err);
        if (rc == DR_OK && !dr_jobfield_find(text))
            abort();
        break;
    }
    }
    if (rc == DR_OK)
        check(&s);
    else if (rc > 0 || err.msg[0] == '\0')
        abort(); /* a failure says why */
    dr_jobspec_free(&s);
    free(text);
    return 0;
}
