/* speeds.h - how fast jobs run on each GPU type, as the CLI shows it:
 * `drover classes` (the classes the controller learns from, GET
 * /v1/classes: classes.c) and the Speeds section of `drover show` (a JOB's
 * "speeds": show_speeds.c).  Pure: the JSON in, text out, so the unit tests
 * pin the output. */
#ifndef DROVER_CLI_SPEEDS_H
#define DROVER_CLI_SPEEDS_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* A GET /v1/classes reply: per class a header line ("CLASS sim (alice): 12
 * runs, reference H100-SXM-80GB, size 10.5 min, run-to-run spread 8%") and
 * its table of GPU types (TYPE, RATE, RUNS, MEAN RUN, SPREAD, BASIS), a
 * blank line between classes; a line saying why there are none when there
 * are none.  DR_OK, DR_ENOMEM or DR_EIO. */
int cli_classes_print(FILE *f, const json_t *reply);

/* A JOB's "speeds" (nothing when it is not an object): a blank line,
 * "Speeds", its class and work line, and its table of GPU types (TYPE with
 * '*' after the one it got, RATE, RUN TIME, COST, DEADLINE, BASIS).  DR_OK,
 * DR_ENOMEM or DR_EIO. */
int cli_job_speeds_print(FILE *f, const json_t *job);

/* What both show: a rate relative to the reference type ("1", "0.45";
 * "-" when absent), and an estimate's spread factor as "±20%" (1.2; "-"
 * when absent or not above 1's). */
char *cli_fmt_rate(double rate, char *buf, size_t n);
char *cli_fmt_spread(double factor, char *buf, size_t n);

#endif
