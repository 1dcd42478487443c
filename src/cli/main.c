/* main.c - the drover command: a thin tool over libdrover (plan, sim) and
 * over the controller's API (the live-cluster verbs).  Each verb group
 * lives in its own file. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: drover [--server URL|SOCKET] [--cacert FILE] <command> [options]\n"
            "\n"
            "offline:\n"
            "  plan     size a training run, a service or a batch array: GPU type, count,\n"
            "           time, cost and energy (train | serve | array)\n"
            "  sim      replay a trace on a simulated cluster with one or more policies\n"
            "  config   check a cluster configuration or a site's slurm.conf (config check FILE)\n"
            "\n"
            "live cluster (the controller, droverd):\n"
            "  submit   run a command or a batch script (drover submit [opts] -- CMD ARGS)\n"
            "  queue    list jobs that are not over (--all: every job)\n"
            "  show     every field of a job\n"
            "  cancel   cancel jobs\n"
            "  hold     keep pending jobs from starting (release lets them)\n"
            "  release  release held jobs\n"
            "  update   change a job: drover update JOB priority=N\n"
            "  wait     wait for jobs to end; exits with the first failing job's status\n"
            "  events   a job's history\n"
            "  logs     a job's output (-f follows it)\n"
            "  history  finished jobs: elapsed, GPU-hours, cost, energy, totals (like sacct)\n"
            "  share    fair share per account: shares, usage, factor, limits (like sshare)\n"
            "  classes  job classes: their speed on each GPU type, as drover learnt it\n"
            "  nodes    the nodes, their GPUs and agents\n"
            "  top      a live full-screen view: GPUs per type, cost rate, nodes, queue\n"
            "  scale    set a service's replicas (drover scale SERVICE N)\n"
            "  restart  rolling restart of a service, at least N-1 replicas ready throughout\n"
            "  token    create a bearer token for TCP access\n"
            "  srun     inside a job: start a job step (also run as `srun`)\n"
            "  ckpt     checkpoints: commit one (in a job), verify one, list a job's\n"
            "  admin    operators: an online backup of the store (admin backup FILE)\n"
            "\n"
            "  version  print the version\n"
            "\n"
            "The controller: --server, else $DROVER_SERVER, else %s, then %s.\n"
            "An https:// controller's certificate must chain to one in --cacert FILE (else\n"
            "$DROVER_CACERT, else the system's CA store) and name the host dialled.\n"
            "Run 'drover <command> --help' for the options of a command.\n",
            CLI_DEFAULT_SOCKET, CLI_DEFAULT_URL);
}

typedef struct verb {
    const char *name;
    int (*run)(int argc, char **argv);
} verb_t;

static const verb_t verbs[] = {
    {"sim", cli_sim},     {"plan", cli_plan},       {"submit", cli_submit},
    {"queue", cli_queue}, {"show", cli_show},       {"cancel", cli_cancel},
    {"wait", cli_wait},   {"events", cli_events},   {"logs", cli_logs},
    {"nodes", cli_nodes}, {"token", cli_token},     {"history", cli_history},
    {"scale", cli_scale}, {"restart", cli_restart}, {"config", cli_config},
    {"hold", cli_hold},   {"release", cli_release}, {"update", cli_update},
    {"srun", cli_srun},   {"share", cli_share},     {"ckpt", cli_ckpt},
    {"top", cli_top},     {"admin", cli_admin},     {"classes", cli_classes},
};

int main(int argc, char **argv)
{
    /* the agent links bin/srun to this binary: run as srun, it is srun */
    const char *self = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
    self = self ? self + 1 : argc > 0 && argv[0] ? argv[0] : "";
    if (strcmp(self, "srun") == 0)
        return cli_srun(argc, argv);
    /* `drover --server X [--cacert FILE] VERB`: the server (and the
     * certificates an https:// one's must chain to) for any live verb */
    for (;;) {
        const char *names[] = {"--server", "--cacert"};
        const char **dest[] = {&cli_server_arg, &cli_cacert_arg};
        size_t k = 0, n = 0;
        for (k = 0; k < 2 && argc >= 2; k++) {
            n = strlen(names[k]);
            if (strncmp(argv[1], names[k], n) == 0 && (argv[1][n] == '=' || argv[1][n] == '\0'))
                break;
        }
        if (k == 2 || argc < 2)
            break;
        if (argv[1][n] == '=') {
            *dest[k] = argv[1] + n + 1;
            argc--;
            argv++;
        } else if (argc >= 3) {
            *dest[k] = argv[2];
            argc -= 2;
            argv += 2;
        } else {
            return cli_usage_error("%s needs a value", names[k]);
        }
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
        if (strcmp(cmd, verbs[i].name) == 0)
            return verbs[i].run(argc - 1, argv + 1);
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
