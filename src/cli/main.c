/* main.c - the drover command: a thin tool over libdrover (and, later, the
 * controller's API).  Each verb group lives in its own file. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: drover <command> [options]\n"
               "\n"
               "commands:\n"
               "  plan     size a training run, a service or a batch array: GPU type, count,\n"
               "           time, cost and energy (train | serve | array)\n"
               "  sim      replay a trace on a simulated cluster with one or more policies\n"
               "  version  print the version\n"
               "\n"
               "Run 'drover <command> --help' for the options of a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "sim") == 0)
        return cli_sim(argc - 1, argv + 1);
    if (strcmp(cmd, "plan") == 0)
        return cli_plan(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("drover 0.1.0\n");
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "drover: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
