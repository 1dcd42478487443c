/* main.c - drover-agent: options, the node key, the event loop.
 *
 *   drover-agent --controller HOST:PORT --name NODE [--key FILE]
 *                [--state DIR] [--cache-dir DIR] [--nvml PATH] [--rocm PATH]
 *                [--srun PATH] [--step-dir DIR] [--verbose]
 *
 * Exit status: 0 after SIGTERM/SIGINT (every job process killed first) or
 * SIGUSR2 (every job left running under its keeper, for the next agent
 * started with the same --state to take over), 1 when the controller
 * rejects the node, 2 on a usage or set-up error. */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#define DEFAULT_KEY "/etc/drover/node.key" /* this node's key: droverd --enroll NODE */

static void usage(FILE *f)
{
    fprintf(f, "usage: drover-agent --controller HOST:PORT --name NODE [--key FILE] [--state DIR]\n"
               "                    [--cache-dir DIR] [--nvml PATH] [--rocm PATH] [--srun PATH]\n"
               "                    [--step-dir DIR] [--verbose] [--allow-root-jobs]\n"
               "  --controller HOST:PORT  droverd's agent address ([ADDR]:PORT for IPv6)\n"
               "  --name NODE             this node's name in the cluster config\n"
               "  --key FILE              this node's key ('droverd --enroll NODE' writes it), 64\n"
               "                          hex digits, mode 0600 (default " DEFAULT_KEY ")\n"
               "  --state DIR             agent state directory (created 0711; locked: one agent\n"
               "                          per directory)\n"
               "  --cache-dir DIR         local data cache: its entries are the shards this node\n"
               "                          holds (jobs get DROVER_CACHE_DIR=DIR)\n"
               "  --nvml PATH             NVML library to load (\"\" = do not ask NVML)\n"
               "  --rocm PATH             ROCm SMI library to load (\"\" = do not ask ROCm SMI)\n"
               "  --srun PATH             the drover binary jobs run as `srun` (default: drover\n"
               "                          beside this executable)\n"
               "  --step-dir DIR          srun's socket and bin/srun (created 0711; default: a\n"
               "                          fresh /tmp/drover-agent-XXXXXX, removed at exit)\n"
               "  --verbose               log every frame and reaped process\n"
               "  --allow-root-jobs       run ranks as root (uid 0) even when the controller does\n"
               "                          not say the site allows it (AllowRootJobs=)\n");
}

/* A job's stdio is set up with dup2 onto 0-2: they must not be free slots
 * that a socket or pipe of the agent could take. */
static void ensure_stdio(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        int n = open("/dev/null", O_RDWR);
        if (n >= 0 && n != fd) {
            dup2(n, fd);
            close(n);
        }
    }
}

int main(int argc, char **argv)
{
    const char *controller = NULL, *name = NULL, *keyfile = DEFAULT_KEY, *state = NULL;
    const char *nvml = NULL, *rocm = NULL, *cache = NULL, *srun = NULL, *step_dir = NULL;
    bool verbose = false, allow_root = false;
    static const struct option opts[] = {
        {"controller", required_argument, NULL, 'c'},
        {"name", required_argument, NULL, 'n'},
        {"key", required_argument, NULL, 'k'},
        {"state", required_argument, NULL, 's'},
        {"cache-dir", required_argument, NULL, 'C'},
        {"nvml", required_argument, NULL, 'N'},
        {"rocm", required_argument, NULL, 'R'},
        {"srun", required_argument, NULL, 'S'},
        {"step-dir", required_argument, NULL, 'D'},
        {"verbose", no_argument, NULL, 'v'},
        {"allow-root-jobs", no_argument, NULL, 'A'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "c:n:k:s:vh", opts, NULL)) != -1) {
        switch (c) {
        case 'c': controller = optarg; break;
        case 'n': name = optarg; break;
        case 'k': keyfile = optarg; break;
        case 's': state = optarg; break;
        case 'C': cache = optarg; break;
        case 'N': nvml = optarg; break;
        case 'R': rocm = optarg; break;
        case 'S': srun = optarg; break;
        case 'D': step_dir = optarg; break;
        case 'v': verbose = true; break;
        case 'A': allow_root = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc || !controller || !name || !name[0]) {
        fprintf(stderr, "drover-agent: %s\n",
                optind < argc ? "unexpected arguments" : "--controller and --name are required");
        usage(stderr);
        return 2;
    }
    ensure_stdio();

    dr_err_t err = {0};
    char host[256], port[16];
    uint8_t key[DR_PROTO_KEY];
    if (dr_agent_split_hostport(controller, host, sizeof host, port, sizeof port, &err) != 0 ||
        dr_agent_key_load(keyfile, key, &err) != 0) {
        fprintf(stderr, "drover-agent[%s]: %s\n", name, err.msg);
        return 2;
    }
    struct event_base *base = event_base_new();
    if (!base) {
        fprintf(stderr, "drover-agent[%s]: cannot create the event loop\n", name);
        return 2;
    }
    dr_agent_t a;
    if (dr_agent_init(&a, base, name, &err) != 0) {
        fprintf(stderr, "drover-agent[%s]: %s\n", name, err.msg);
        event_base_free(base);
        return 2;
    }
    a.verbose = verbose;
    a.allow_root_jobs = allow_root;
    int rc = 0;
    char cache_abs[PATH_MAX];
    if (cache && (!cache[0] || !realpath(cache, cache_abs))) { /* jobs run elsewhere: absolute */
        dr_agent_log(&a, "--cache-dir %s: %s", cache, cache[0] ? strerror(errno) : "empty");
        rc = 2;
    } else if (cache) {
        a.cache_dir = cache_abs;
    }
    if (state && dr_agent_state_init(&a, state, &err) != 0) {
        dr_agent_log(&a, "%s", err.msg);
        rc = 2;
    }
    /* ranks an earlier agent left running (kill -9, SIGUSR2): held again
     * before the first REGISTER, which reports them */
    if (rc == 0)
        (void)dr_agent_keeper_adopt(&a);
    if (rc == 0 && dr_agent_steps_start(&a, step_dir, srun, &err) != 0) {
        dr_agent_log(&a, "%s", err.msg);
        rc = 2;
    }
    dr_agent_link_opts_t lo = {host, port, key, nvml, rocm};
    if (rc == 0 && dr_agent_link_start(&a, &lo, &err) != 0) {
        dr_agent_log(&a, "%s", err.msg);
        rc = 2;
    }
    explicit_bzero(key, sizeof key);
    if (rc == 0) {
        dr_agent_log(&a, "starting: controller %s:%s, pid %ld", host, port, (long)getpid());
        event_base_dispatch(base);
        rc = a.exit_code;
        dr_agent_log(&a, "exiting (status %d)", rc);
    }
    dr_agent_steps_free(&a);
    dr_agent_link_free(&a);
    dr_agent_free(&a);
    event_base_free(base);
    return rc;
}
