/* prom.h - Prometheus' text exposition format (prom.c). */
#ifndef DROVER_CTLD_PROM_H
#define DROVER_CTLD_PROM_H

#include <stdint.h>

#define CTLD_VERSION "0.1.0"

/* prom.c: the text exposition format.  A histogram has fixed buckets
 * (upper bounds le[], ascending; +Inf is implied). */
#define CTLD_HIST_MAX 20
typedef struct ctld_hist {
    const double *le;
    uint32_t nle;
    uint64_t bucket[CTLD_HIST_MAX + 1]; /* per bucket, not cumulative; [nle]: above the last */
    uint64_t count;
    double sum;
} ctld_hist_t;
void ctld_hist_init(ctld_hist_t *h, const double *le, uint32_t nle);
void ctld_hist_observe(ctld_hist_t *h, double v); /* NaN is ignored */
struct evbuffer;
void ctld_prom_family(struct evbuffer *b, const char *name, const char *type, const char *help);
/* name{k="v",...} value: nlabels (key, value) string pairs follow; values escaped */
void ctld_prom_sample(struct evbuffer *b, const char *name, double v, int nlabels, ...);
void ctld_prom_hist(struct evbuffer *b, const char *name, const ctld_hist_t *h);
void ctld_prom_value(struct evbuffer *b, double v);

#endif
