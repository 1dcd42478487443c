/* top_frame.h - what `drover top` shows, as a pure function of the
 * controller's replies (GET /v1/ping, /v1/stats, /v1/nodes, /v1/jobs) and
 * the screen size: no terminal, clock or socket here, so the unit tests pin
 * the frame.  top.c fetches, draws and reads keys. */
#ifndef DROVER_CLI_TOP_FRAME_H
#define DROVER_CLI_TOP_FRAME_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "drover/catalog.h"

/* GPUs of one type: allocated + idle + down == total. */
typedef struct cli_top_type {
    char name[64];
    long long total, allocated, idle, down;
    double usd_per_gpu_hour; /* NAN: unknown */
} cli_top_type_t;

typedef struct cli_top_summary {
    cli_top_type_t *types; /* in the order the controller lists them */
    size_t ntypes;
    double cost_usd_per_hour;         /* of what runs now; NAN: unknown */
    bool cost_partial;                /* some allocated GPUs have no known price */
    long long running, pending, held; /* jobs; pending ones that are held count as held only */
    bool from_stats;                  /* GET /v1/stats answered (else computed) */
} cli_top_summary_t;

/* The header's figures: from `stats` (GET /v1/stats) when not NULL, else
 * computed from `nodes` (GET /v1/nodes: per type GPUs, gpus_alloc; GPUs
 * neither allocated nor on an "up" node count as down) and the job
 * listings (running, pending: GET /v1/jobs replies; an array parent counts
 * its pending tasks, not itself; held jobs are not pending), the cost rate from allocated GPUs at
 * `cat`'s prices (may be NULL: unknown).  DR_OK or DR_ENOMEM. */
int cli_top_summarise(const json_t *stats, const json_t *nodes, const json_t *running,
                      const json_t *pending, const dr_catalog_t *cat, cli_top_summary_t *s);
void cli_top_summary_free(cli_top_summary_t *s);

typedef struct cli_top_input {
    const char *controller; /* where it is, as the user named it */
    const json_t *ping;     /* may be NULL (not reached) */
    const json_t *stats;    /* NULL: no /v1/stats (an older controller) */
    const json_t *nodes;
    const json_t *running; /* GET /v1/jobs?state=starting,running,completing */
    const json_t *pending; /* GET /v1/jobs?state=pending */
    const dr_catalog_t *cat;
    const char *note; /* shown under the title (the last error); NULL: none */
    double now;       /* Unix seconds: ages, times, the clock shown */
    int width;        /* columns; <= 0: no limit */
    int height;       /* lines; <= 0: no limit (every node and job) */
} cli_top_input_t;

/* The frame: lines ending in '\n', none wider than `width` characters, at
 * most `height` of them; no escape sequences (cells are cleaned of control
 * characters).  Sections: a title line, the GPU types with utilisation
 * bars, the cost rate and job counts, the nodes, the queue (running jobs,
 * then pending).  A section cut for height ends in "... N more".  NULL on
 * out of memory (malloc'd). */
char *cli_top_frame(const cli_top_input_t *in);

/* A utilisation bar of `width` cells (plus brackets): '#' allocated, '-'
 * idle, 'x' down, rounded so that any non-zero part shows. */
char *cli_top_bar(long long allocated, long long idle, long long down, int width, char *buf,
                  size_t n);

#endif
