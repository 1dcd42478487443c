/* test_ctld_life.c - the controller's logic in process, in milliseconds:
 * a real droverd (dr_ctld_init on a temporary state directory and SQLite
 * store, no listeners) whose agents are function calls (ctld_agent_attach:
 * the frames it sends are captured here, the agents' frames go through
 * ctld_agent_msg as from a socket).  Submit -> pass -> LAUNCH -> rank end ->
 * settle; requeue after a node loss, with the next run only once the lost
 * node's lease is surely over; the generation and epoch fences; a cancel
 * whose ranks must be confirmed over. */
#include "testutil.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "ctld/ctld.h"
#include "ctld/agent_link.h"
#include "ctld/classes.h"
#include "ctld/fence.h"
#include "ctld/kill.h"
#include "ctld/store.h"
#include "ctld/submit.h"
#include "ctld/turn.h"
#include "drover/proto.h"
#include "drover/util.h"

enum { MAX_FRAMES = 256, MAX_NODES = 4 };

typedef struct frame {
    int node, type;
    char *json;
} frame_t;

typedef struct life {
    char dir[64];
    char conf[128], key[128];
    dr_ctld_t c;
    bool up;
    frame_t f[MAX_FRAMES];
    int nf;
    struct tap {
        struct life *l;
        int node;
    } taps[MAX_NODES];
    ctld_agent_t *agent[MAX_NODES];
} life_t;

static void tap(void *ud, int type, const char *json)
{
    struct tap *t = ud;
    life_t *l = t->l;
    assert_true(l->nf < MAX_FRAMES);
    l->f[l->nf++] = (frame_t){t->node, type, dr_strdup(json)};
}

static void frames_clear(life_t *l)
{
    for (int i = 0; i < l->nf; i++)
        free(l->f[i].json);
    l->nf = 0;
}

/* The controller with these node lines, --lease lease_ms. */
static void start(life_t *l, int lease_ms)
{
    memset(&l->c, 0, sizeof l->c);
    ctld_opts_t o = {.config = l->conf,
                     .state_dir = l->dir,
                     .key_file = l->key,
                     .min_pass_interval = 0,
                     .agent_timeout = 3 * DR_NSEC_PER_SEC,
                     .lease = (dr_time_t)lease_ms * DR_NSEC_PER_SEC / 1000,
                     .heartbeat_ms = 50,
                     .init = true,
                     .embedded = true};
    dr_err_t err = {0};
    int rc = dr_ctld_init(&l->c, &o, &err);
    if (rc != DR_OK)
        fail_msg("dr_ctld_init: %s", err.msg);
    l->up = true;
    for (int i = 0; i < MAX_NODES; i++) {
        l->taps[i] = (struct tap){l, i};
        l->agent[i] = NULL;
    }
}

static void stop(life_t *l)
{
    if (l->up)
        dr_ctld_free(&l->c);
    l->up = false;
    frames_clear(l);
}

static life_t *setup_life(const char *nodes, int lease_ms)
{
    life_t *l = calloc(1, sizeof *l);
    snprintf(l->dir, sizeof l->dir, "/tmp/drover-life-XXXXXX");
    assert_non_null(mkdtemp(l->dir));
    snprintf(l->conf, sizeof l->conf, "%s/cluster.conf", l->dir);
    snprintf(l->key, sizeof l->key, "%s/cluster.key", l->dir);
    FILE *f = fopen(l->conf, "w");
    assert_non_null(f);
    fputs(nodes, f);
    fclose(f);
    uint8_t k[DR_PROTO_KEY];
    for (size_t i = 0; i < sizeof k; i++)
        k[i] = (uint8_t)(i * 37 + 11);
    char txt[66];
    dr_proto_key_format(k, txt);
    f = fopen(l->key, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", txt);
    fclose(f);
    start(l, lease_ms);
    return l;
}

static void teardown_life(life_t *l)
{
    stop(l);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", l->dir);
    assert_int_equal(system(cmd), 0);
    free(l);
}

/* Run the event loop until the turns are done (a pass, its commit, the
 * frames after it). */
static void pump(life_t *l)
{
    for (int i = 0; i < 8; i++)
        event_base_loop(l->c.base, EVLOOP_NONBLOCK);
    ctld_turn_now(&l->c); /* a commit the turn deferred (ACKs only) */
}

static void agent_frame(life_t *l, int node, int type, char *json)
{
    assert_non_null(json);
    static uint64_t seq;
    dr_frame_t fr = {.type = type, .seq = ++seq, .body = json, .len = strlen(json)};
    ctld_agent_msg(l->agent[node], &fr);
    free(json);
}

/* The agent of node `node` connects and registers, holding `held`. */
static void agent_up(life_t *l, int node, const dr_msg_held_t *held, uint32_t nheld)
{
    l->agent[node] = ctld_agent_attach(&l->c, (uint32_t)node, tap, &l->taps[node]);
    assert_non_null(l->agent[node]);
    dr_msg_register_t m = {.source = (char *)"declared",
                           .ngpus = 0,
                           .cpus = 16,
                           .mem_mb = 65536,
                           .hostname = (char *)"n",
                           .held = (dr_msg_held_t *)held,
                           .nheld = nheld};
    char *json = NULL;
    size_t len;
    assert_int_equal(dr_msg_register_encode(&m, &json, &len, NULL), DR_OK);
    agent_frame(l, node, DR_MSG_REGISTER, json);
    pump(l);
}

static void agent_down(life_t *l, int node)
{
    ctld_agent_close(l->agent[node], "test: connection cut");
    l->agent[node] = NULL;
    pump(l);
}

/* Rank `rank` of (job, gen) on node: started, or ended with exit code. */
static void rank_report(life_t *l, int node, uint64_t job, uint32_t gen, uint32_t rank,
                        bool started, int exit_code)
{
    dr_msg_job_state_t m = {.job = job,
                            .gen = gen,
                            .rank = rank,
                            .started = started,
                            .pid = started ? 4242 : 0,
                            .exit_code = exit_code,
                            .why = DR_END_EXIT,
                            .t_ns = (int64_t)time(NULL) * DR_NSEC_PER_SEC,
                            .detail = (char *)""};
    char *json = NULL;
    size_t len;
    assert_int_equal(dr_msg_job_state_encode(&m, &json, &len, NULL), DR_OK);
    agent_frame(l, node, DR_MSG_JOB_STATE, json);
    pump(l);
}

static uint64_t submit(life_t *l, const char *spec)
{
    dr_err_t err = {0};
    ctld_job_t *cj = NULL;
    int limit = 413;
    dr_time_t now = ctld_now(&l->c);
    int rc = ctld_job_new(spec, strlen(spec), &cj, &err);
    if (rc == DR_OK)
        rc = ctld_job_check(&l->c, cj, "alice", now, &limit, &err);
    if (rc == DR_OK)
        rc = ctld_job_accept(&l->c, cj, "alice", 1000, 1000, now, &err);
    else
        ctld_job_free(cj);
    if (rc != DR_OK)
        fail_msg("submit %s: %s", spec, err.msg);
    uint64_t id = cj->j.id;
    pump(l);
    return id;
}

/* The frames of `type` sent to node (-1: any) for job, in order. */
static int frames_of(life_t *l, int node, int type, uint64_t job, const frame_t **out, int max)
{
    int n = 0;
    for (int i = 0; i < l->nf; i++) {
        const frame_t *f = &l->f[i];
        if (f->type != type || (node >= 0 && f->node != node))
            continue;
        uint64_t j = 0;
        if (type == DR_MSG_LAUNCH) {
            dr_msg_launch_t m = {0};
            assert_int_equal(dr_msg_launch_parse(&m, f->json, strlen(f->json), NULL), DR_OK);
            j = m.job;
            dr_msg_launch_free(&m);
        } else if (type == DR_MSG_KILL) {
            dr_msg_kill_t m = {0};
            assert_int_equal(dr_msg_kill_parse(&m, f->json, strlen(f->json), NULL), DR_OK);
            j = m.job;
            dr_msg_kill_free(&m);
        }
        if (j == job && n < max)
            out[n++] = f;
    }
    return n;
}

static dr_msg_launch_t launch_of(const frame_t *f)
{
    dr_msg_launch_t m = {0};
    assert_int_equal(dr_msg_launch_parse(&m, f->json, strlen(f->json), NULL), DR_OK);
    return m;
}

/* Every rank launched for job on node: reported started; how many, and
 * their generation into *gen. */
static int start_ranks(life_t *l, int node, uint64_t job, uint32_t *gen)
{
    const frame_t *fr[16];
    int n = frames_of(l, node, DR_MSG_LAUNCH, job, fr, 16);
    uint32_t ranks[16];
    for (int i = 0; i < n; i++) {
        dr_msg_launch_t m = launch_of(fr[i]);
        *gen = m.gen;
        ranks[i] = m.rank;
        dr_msg_launch_free(&m);
    }
    for (int i = 0; i < n; i++)
        rank_report(l, node, job, *gen, ranks[i], true, 0);
    return n;
}

static void end_ranks(life_t *l, int node, uint64_t job, uint32_t gen, int n, int code)
{
    for (int r = 0; r < n; r++)
        rank_report(l, node, job, gen, (uint32_t)r, false, code);
}

static const char *state_of(life_t *l, uint64_t id)
{
    static char buf[32];
    ctld_job_t *cj = ctld_job_find(&l->c, id);
    if (cj) {
        snprintf(buf, sizeof buf, "%s", ctld_job_state_name(cj));
        return buf;
    }
    char *json = ctld_store_job_json(&l->c, id, NULL); /* evicted: from the store */
    assert_non_null(json);
    const char *p = strstr(json, "\"state\":\"");
    assert_non_null(p);
    p += 9;
    size_t n = strcspn(p, "\"");
    snprintf(buf, sizeof buf, "%.*s", (int)n, p);
    free(json);
    return buf;
}

#define ONE_NODE  "NodeName=n1 Gpus=H100-SXM:4 Cpus=16 MemGB=64\n"
#define TWO_NODES "NodeName=n[1-2] Gpus=H100-SXM:4 Cpus=16 MemGB=64\n"
#define ONE_GPU   "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"chdir\":\"/tmp\",\"kind\":\"batch\"}"
#define TRAINING                                                                                   \
    "{\"argv\":[\"/bin/true\"],\"gpus_per_node\":4,\"nodes\":1,\"chdir\":\"/tmp\",\"kind\":"       \
    "\"train\"}"

/* submit -> pass -> LAUNCH (after the commit) -> started -> ended -> settled */
static void test_submit_launch_settle(void **state)
{
    (void)state;
    /* an environment a production droverd might inherit arms no crash
     * point (only --test-crash-at does): this submit would die here */
    setenv("DROVER_CRASH_AT", "submit-before-commit", 1);
    life_t *l = setup_life(ONE_NODE, 10000);
    agent_up(l, 0, NULL, 0);
    frames_clear(l);
    uint64_t id = submit(l, ONE_GPU);
    const frame_t *fr[4];
    assert_int_equal(frames_of(l, 0, DR_MSG_LAUNCH, id, fr, 4), 1);
    dr_msg_launch_t m = launch_of(fr[0]);
    assert_int_equal(m.epoch, l->c.epoch);
    assert_int_equal(m.uid, 1000);
    assert_int_equal(m.ngpus, 1);
    uint32_t gen = m.gen;
    dr_msg_launch_free(&m);
    /* the launch went out only after the job was committed as running */
    char *stored = ctld_store_job_json(&l->c, id, NULL);
    if (stored) /* in memory and stored: its row says it started */
        tu_assert_contains(stored, "\"id\":");
    free(stored);
    assert_string_equal(state_of(l, id), "starting"); /* launched, not yet reported */
    rank_report(l, 0, id, gen, 0, true, 0);
    assert_string_equal(state_of(l, id), "running");
    frames_clear(l);
    rank_report(l, 0, id, gen, 0, false, 0);
    assert_string_equal(state_of(l, id), "completed");
    /* the end report is acknowledged (the agent forgets it then) */
    bool acked = false;
    for (int i = 0; i < l->nf; i++)
        acked |= l->f[i].type == DR_MSG_ACK;
    assert_true(acked);
    /* a failing rank fails the job with its exit code */
    frames_clear(l);
    uint64_t id2 = submit(l, ONE_GPU);
    assert_int_equal(frames_of(l, 0, DR_MSG_LAUNCH, id2, fr, 4), 1);
    m = launch_of(fr[0]);
    gen = m.gen;
    dr_msg_launch_free(&m);
    rank_report(l, 0, id2, gen, 0, true, 0);
    rank_report(l, 0, id2, gen, 0, false, 3);
    assert_string_equal(state_of(l, id2), "failed");
    unsetenv("DROVER_CRASH_AT");
    /* a GPU-memory floor no type here meets is refused at submit, by name */
    const char *big = "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"gpu_mem\":\"200G\"}";
    ctld_job_t *cj = NULL;
    dr_err_t err = {0};
    int limit = 413;
    assert_int_equal(ctld_job_new(big, strlen(big), &cj, &err), DR_OK);
    assert_int_equal(ctld_job_check(&l->c, cj, "alice", ctld_now(&l->c), &limit, &err), DR_ENOSPC);
    tu_assert_contains(err.msg, "gpu_mem: no GPU type of this cluster has 200 GB");
    ctld_job_free(cj);
    teardown_life(l);
}

/* A node whose agent is cut off: nothing of its job runs elsewhere until
 * its lease is surely over (the agent stops it by then); then the job is
 * requeued and launched on the other node in a new generation; the old
 * generation's reports, when the node comes back, are fenced off. */
static void test_requeue_after_node_loss(void **state)
{
    (void)state;
    life_t *l = setup_life(TWO_NODES, 100);
    agent_up(l, 0, NULL, 0);
    frames_clear(l);
    uint64_t id = submit(l, TRAINING);
    uint32_t gen1 = 0, gen2 = 0;
    int n = start_ranks(l, 0, id, &gen1);
    assert_true(n >= 1);
    assert_string_equal(state_of(l, id), "running");
    agent_up(l, 1, NULL, 0);
    frames_clear(l);
    agent_down(l, 0); /* cut off: its lease may still run */
    ctld_fence_tick(&l->c);
    pump(l);
    const frame_t *fr[16];
    assert_int_equal(frames_of(l, 1, DR_MSG_LAUNCH, id, fr, 16), 0);
    assert_string_equal(state_of(l, id), "running");
    /* past the lease (plus the controller's margin): lost, requeued, run on n2 */
    int64_t wait_ns = ctld_requeue_after(&l->c) + 50 * 1000 * 1000;
    struct timespec ts = {(time_t)(wait_ns / DR_NSEC_PER_SEC), (long)(wait_ns % DR_NSEC_PER_SEC)};
    nanosleep(&ts, NULL);
    ctld_fence_tick(&l->c);
    pump(l);
    assert_int_equal(start_ranks(l, 1, id, &gen2), n);
    assert_true(gen2 > gen1);
    assert_string_equal(state_of(l, id), "running");
    /* n1 comes back still holding the old generation running: it is
     * killed there, and the job's current run is untouched */
    frames_clear(l);
    dr_msg_held_t h = {.job = id, .gen = gen1, .rank = 0, .running = true};
    agent_up(l, 0, &h, 1);
    assert_int_equal(frames_of(l, 0, DR_MSG_KILL, id, fr, 16), 1);
    dr_msg_kill_t k = {0};
    assert_int_equal(dr_msg_kill_parse(&k, fr[0]->json, strlen(fr[0]->json), NULL), DR_OK);
    assert_int_equal(k.gen, gen1);
    dr_msg_kill_free(&k);
    /* its end report (an old generation) does not end the job */
    rank_report(l, 0, id, gen1, 0, false, 0);
    assert_string_equal(state_of(l, id), "running");
    end_ranks(l, 1, id, gen2, n, 0);
    assert_string_equal(state_of(l, id), "completed");
    /* its cost is both runs': the lost one lasted at least the lease wait,
     * the second at most this test's few milliseconds since */
    ctld_job_t *cj = ctld_job_find(&l->c, id);
    char *json = cj ? ctld_job_json(&l->c, cj) : ctld_store_job_json(&l->c, id, NULL);
    const char *p = strstr(json, "\"cost_usd\":");
    assert_non_null(p);
    double cost = strtod(p + 11, NULL), price = ctld_price_hr(&l->c, 0);
    assert_true(cost >= (double)n * price * ((double)wait_ns / 1e9) / 3600.0 - 1e-6);
    free(json);
    teardown_life(l);
}

/* A restarted controller has a new epoch, carried by its launches; a job
 * running when it stopped is adopted, not launched again. */
static void test_epoch_across_restart(void **state)
{
    (void)state;
    life_t *l = setup_life(ONE_NODE, 10000);
    uint64_t e1 = l->c.epoch;
    agent_up(l, 0, NULL, 0);
    frames_clear(l);
    uint64_t id = submit(l, ONE_GPU);
    const frame_t *fr[4];
    assert_int_equal(frames_of(l, 0, DR_MSG_LAUNCH, id, fr, 4), 1);
    dr_msg_launch_t m = launch_of(fr[0]);
    uint32_t gen = m.gen;
    dr_msg_launch_free(&m);
    rank_report(l, 0, id, gen, 0, true, 0);
    stop(l);
    start(l, 10000);
    assert_true(l->c.epoch > e1);
    assert_string_equal(state_of(l, id), "running");
    dr_msg_held_t h = {.job = id, .gen = gen, .rank = 0, .running = true};
    agent_up(l, 0, &h, 1);
    assert_int_equal(frames_of(l, 0, DR_MSG_LAUNCH, id, fr, 4), 0);
    uint64_t id2 = submit(l, ONE_GPU);
    assert_int_equal(frames_of(l, 0, DR_MSG_LAUNCH, id2, fr, 4), 1);
    m = launch_of(fr[0]);
    assert_int_equal(m.epoch, l->c.epoch);
    dr_msg_launch_free(&m);
    rank_report(l, 0, id, gen, 0, false, 0);
    assert_string_equal(state_of(l, id), "completed");
    teardown_life(l);
}

/* A cancelled job's GPUs are not given to the next job until its agent
 * confirms its processes are over: "the next run only after the last one
 * is dead". */
static void test_next_run_after_last_dead(void **state)
{
    (void)state;
    life_t *l = setup_life(ONE_NODE, 10000);
    agent_up(l, 0, NULL, 0);
    frames_clear(l);
    uint64_t a = submit(l, TRAINING);
    uint32_t gen = 0, genb = 0;
    int n = start_ranks(l, 0, a, &gen);
    assert_true(n >= 1);
    uint64_t b = submit(l, TRAINING); /* waits: every GPU is a's */
    assert_string_equal(state_of(l, b), "pending");
    frames_clear(l);
    dr_err_t err = {0};
    assert_int_equal(ctld_cancel(&l->c, ctld_job_find(&l->c, a), "test", &err), DR_OK);
    pump(l);
    const frame_t *fr[16];
    assert_true(frames_of(l, 0, DR_MSG_KILL, a, fr, 16) >= 1);
    /* killed, not yet confirmed over: b must not start on its GPUs */
    assert_int_equal(frames_of(l, 0, DR_MSG_LAUNCH, b, fr, 16), 0);
    assert_string_equal(state_of(l, b), "pending");
    end_ranks(l, 0, a, gen, n - 1, -1); /* all but the last rank over */
    assert_int_equal(frames_of(l, 0, DR_MSG_LAUNCH, b, fr, 16), 0);
    rank_report(l, 0, a, gen, (uint32_t)(n - 1), false, -1);
    assert_string_equal(state_of(l, a), "cancelled");
    assert_int_equal(start_ranks(l, 0, b, &genb), n);
    teardown_life(l);
}

/* The site's price for a catalog type (GpuType=NAME PricePerGpuHour=) is
 * what the controller charges: a run of 1 GPU is costed at it. */
static void test_site_price_charged(void **state)
{
    (void)state;
    life_t *l = setup_life("GpuType=H100 PricePerGpuHour=2.10\n" ONE_NODE, 10000);
    assert_true(ctld_price_hr(&l->c, 0) == 2.10);
    agent_up(l, 0, NULL, 0);
    frames_clear(l);
    uint64_t id = submit(l, ONE_GPU);
    uint32_t gen = 0;
    assert_int_equal(start_ranks(l, 0, id, &gen), 1);
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    end_ranks(l, 0, id, gen, 1, 0);
    ctld_job_t *cj = ctld_job_find(&l->c, id);
    char *json = cj ? ctld_job_json(&l->c, cj) : ctld_store_job_json(&l->c, id, NULL);
    assert_non_null(json);
    const char *p = strstr(json, "\"cost_usd\":"), *e = strstr(json, "\"elapsed\":");
    assert_non_null(p);
    assert_non_null(e);
    double cost = strtod(p + 11, NULL), elapsed = strtod(e + 10, NULL);
    free(json);
    /* its run (at least the 0.2 s slept) at $2.10 a GPU-hour, not at the
     * catalog's price; the API rounds to a millisecond and a micro-dollar */
    assert_true(elapsed >= 0.2);
    assert_true(fabs(cost - elapsed / 3600.0 * 2.10) < 2e-6);
    teardown_life(l);
}

#define MIXED                                                                                      \
    "GpuType=H100 PricePerGpuHour=4\nGpuType=A100 PricePerGpuHour=1.8\n"                           \
    "GpuType=L4 PricePerGpuHour=0.8\nSchedulerPolicy=cost\n"                                       \
    "NodeName=n1 Gpus=H100-SXM:1 Cpus=16 MemGB=64\nNodeName=n2 Gpus=A100:1 Cpus=16 MemGB=64\n"     \
    "NodeName=n3 Gpus=L4:1 Cpus=16 MemGB=64\n"

/* The node whose agent got job id's LAUNCH (-1: none yet). */
static int launched_on(life_t *l, uint64_t id)
{
    const frame_t *fr[4];
    for (int n = 0; n < 3; n++)
        if (frames_of(l, n, DR_MSG_LAUNCH, id, fr, 4))
            return n;
    return -1;
}

static double rate_of(life_t *l, uint64_t id, int type)
{
    ctld_job_t *cj = ctld_job_find(&l->c, id);
    assert_non_null(cj);
    return dr_perf_rate(ctld_classes_view(&l->c), &cj->j, (unsigned)type);
}

/* Each job's speed on each type, live: the catalog's ratios for a job that
 * declares nothing (never every type equal), declared speeds, a deadline
 * no type can meet refused at submit, and the cost policy choosing by them
 * at the site's prices: the cheapest for the work when the deadline is
 * loose, a faster, dearer type when it is tight. */
static void test_speeds_route_by_cost(void **state)
{
    (void)state;
    life_t *l = setup_life(MIXED, 10000);
    for (int n = 0; n < 3; n++)
        agent_up(l, n, NULL, 0);
    frames_clear(l);
    /* held: its class is known without running it */
    uint64_t plain = submit(l, "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"hold\":true}");
    double h = rate_of(l, plain, 0), a = rate_of(l, plain, 1), l4 = rate_of(l, plain, 2);
    assert_true(h == 1.0);                     /* H100 is the fastest by the catalog */
    assert_true(fabs(a - 312.0 / 989) < 0.01); /* dense BF16 ratios */
    assert_true(fabs(l4 - 121.0 / 989) < 0.01);
    /* declared: H100 3x, A100 1.5x, L4 1x; the work is 1 h at speed 1 */
    const char *fmt = "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"speeds\":\"H100=3,A100=1.5,L4=1\","
                      "\"estimate\":\"1h\",\"deadline\":\"%s\"}";
    char body[256];
    snprintf(body, sizeof body, fmt, "15m"); /* 20 min even on H100 */
    ctld_job_t *cj = NULL;
    dr_err_t err = {0};
    int limit = 413;
    assert_int_equal(ctld_job_new(body, strlen(body), &cj, &err), DR_OK);
    assert_int_equal(ctld_job_check(&l->c, cj, "alice", ctld_now(&l->c), &limit, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "deadline: the job needs about 20.0 min even on its fastest type "
                                "(H100-SXM-80GB, by its --estimate)");
    ctld_job_free(cj);
    /* loose: L4 does the work for $0.80, A100 for $1.20, H100 for $1.33 */
    snprintf(body, sizeof body, fmt, "10h");
    uint64_t loose = submit(l, body);
    assert_int_equal(launched_on(l, loose), 2);
    assert_true(fabs(rate_of(l, loose, 1) / rate_of(l, loose, 2) - 1.5) < 1e-9);
    /* tight: the cost policy plans a deadline on a pessimistic size, the
     * 0.8 quantile of the estimate pulled toward the 1 h median of its
     * prior (with no history of how good estimates are, 2.6 x the 20 min
     * on H100: sched/size_estimate.h), so L4 needs about 159 min and A100
     * 106 min ($1.20) of the 150 */
    snprintf(body, sizeof body, fmt, "150m");
    uint64_t tight = submit(l, body);
    assert_int_equal(launched_on(l, tight), 1);
    /* tighter (90 min): only H100 (53 min so planned) is in time */
    snprintf(body, sizeof body, fmt, "90m");
    uint64_t tighter = submit(l, body);
    assert_int_equal(launched_on(l, tighter), 0);
    /* a job that waits for a cheaper type says so, and what it saves */
    uint64_t busy = submit(l, "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"gpu_type\":\"L4\","
                              "\"time_limit\":\"10m\"}");
    assert_int_equal(launched_on(l, busy), -1); /* L4 is the loose job's */
    snprintf(body, sizeof body, fmt, "20h");
    uint64_t patient = submit(l, body);
    assert_int_equal(launched_on(l, patient), -1);
    ctld_job_t *pj = ctld_job_find(&l->c, patient);
    tu_assert_contains(pj->reason, "waiting for L4-24GB (free in ~");
    tu_assert_contains(pj->reason, "): the cheapest type that meets its deadline");
    /* H100 frees: it could start there now, and waits for L4 all the same */
    uint32_t g = 0;
    assert_int_equal(start_ranks(l, 0, tighter, &g), 1);
    end_ranks(l, 0, tighter, g, 1, 0);
    assert_int_equal(launched_on(l, patient), -1);
    tu_assert_contains(pj->reason, "waiting for L4-24GB (free in ~");
    tu_assert_contains(pj->reason, "): saves $");
    tu_assert_contains(pj->reason, " against H100-SXM-80GB now");
    /* show says what it knew: each type's time, cost and the deadline */
    char *json = ctld_job_json(&l->c, ctld_job_find(&l->c, loose));
    tu_assert_contains(json, "\"work_from\":\"its --estimate\"");
    tu_assert_contains(json, "\"why\":\"L4-24GB does its work cheapest of the types that meet "
                             "its deadline\"");
    tu_assert_contains(json, "\"type\":\"L4-24GB\",\"rate\":0.333333,\"basis\":\"declared\"");
    tu_assert_contains(json,
                       "\"run_s\":3600.0,\"usd\":0.8,\"meets_deadline\":true,\"chosen\":true");
    free(json);
    teardown_life(l);
}

/* A class learns each type's speed from its completed runs, says so, and
 * keeps what it learned across a restart (the store). */
static void test_class_learns_and_survives(void **state)
{
    (void)state;
    life_t *l = setup_life(MIXED, 10000);
    for (int n = 0; n < 3; n++)
        agent_up(l, n, NULL, 0);
    frames_clear(l);
    const char *job = "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"class\":\"sim\","
                      "\"gpu_type\":\"A100\"}";
    uint64_t id = submit(l, job);
    uint32_t gen = 0;
    assert_int_equal(start_ranks(l, 1, id, &gen), 1);
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    end_ranks(l, 1, id, gen, 1, 0);
    assert_string_equal(state_of(l, id), "completed");
    json_t *a = ctld_classes_list(&l->c, "alice", false);
    char *s = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    tu_assert_contains(s, "\"name\":\"sim\",\"owner\":\"alice\"");
    tu_assert_contains(s, "\"type\":\"A100-80GB-SXM\",\"rate\":");
    tu_assert_contains(s, "\"basis\":\"observed\",\"runs\":1,\"mean_run_s\":0.3");
    tu_assert_contains(s, "\"basis\":\"via the runs on other types\"");
    free(s);
    a = ctld_classes_list(&l->c, "bob", false); /* another user's class is not bob's */
    assert_int_equal(json_array_size(a), 0);
    json_decref(a);
    stop(l);
    start(l, 10000);
    a = ctld_classes_list(&l->c, "alice", false);
    s = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    tu_assert_contains(s, "\"basis\":\"observed\",\"runs\":1,\"mean_run_s\":0.3");
    free(s);
    /* the next job of the class is sized by it: about 0.3 s on A100 */
    uint64_t next =
        submit(l, "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"class\":\"sim\",\"hold\":true}");
    ctld_job_t *cj = ctld_job_find(&l->c, next);
    double a100 = cj->j.work_declared / rate_of(l, next, 1);
    assert_true(a100 > 0.29 && a100 < 0.6);
    teardown_life(l);
}

/* The default policy routes by cost where it costs no completion time: a
 * job with a deadline on the type that does its work cheapest in time, one
 * without on its fastest (SchedulerPolicy=drover:slowdown=X trades speed
 * for savings), a service on the type cheapest by the hour. */
static void test_default_routes_by_cost(void **state)
{
    (void)state;
    char conf[1024];
    snprintf(conf, sizeof conf, "%s", MIXED);
    char *p = strstr(conf, "SchedulerPolicy=cost\n");
    assert_non_null(p);
    memmove(p, p + 21, strlen(p + 21) + 1); /* the default policy */
    life_t *l = setup_life(conf, 10000);
    assert_string_equal(l->c.policy, "drover");
    for (int n = 0; n < 3; n++)
        agent_up(l, n, NULL, 0);
    frames_clear(l);
    /* a service first: every type is free, L4 is the cheapest by the hour */
    uint64_t svc = submit(l, "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"replicas\":1}");
    ctld_job_t *parent = ctld_job_find(&l->c, svc);
    assert_non_null(parent);
    assert_non_null(parent->array);
    assert_non_null(parent->array->svc);
    ctld_job_t *run = parent->array->svc->slot[0].run;
    assert_non_null(run);
    assert_int_equal(launched_on(l, run->j.id), 2);
    /* the service costs what its replicas cost, while they run */
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    (void)ctld_now(&l->c);
    double rc = ctld_job_cost(&l->c, run), pc = ctld_job_cost(&l->c, parent);
    assert_true(rc >= 0.1 / 3600 * 0.8 - 1e-9);
    assert_true(pc == rc);
    /* a deadline job: with L4 taken, A100 does the work for $1.20 in time
     * (H100 $1.33) */
    const char *job = "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"speeds\":\"H100=3,A100=1.5,L4=1\","
                      "\"estimate\":\"1h\"%s}";
    char body[256];
    snprintf(body, sizeof body, job, ",\"deadline\":\"10h\"");
    uint64_t dl = submit(l, body);
    assert_int_equal(launched_on(l, dl), 1);
    /* no deadline: its fastest type, H100 */
    snprintf(body, sizeof body, job, "");
    uint64_t nodl = submit(l, body);
    assert_int_equal(launched_on(l, nodl), 0);
    teardown_life(l);
}

/* --gpu-type A100,H100 is an order of preference: the first type with room
 * (H100 is faster and, by the catalog, cheaper for the work), then the
 * next - under the default policy, the cost policy and first-fit alike. */
static void test_type_preference(void **state)
{
    (void)state;
    const char *policies[] = {"", "SchedulerPolicy=cost\n", "SchedulerPolicy=fifo\n"};
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
        char conf[1024];
        snprintf(conf, sizeof conf, "%s%s", policies[i],
                 "NodeName=n1 Gpus=H100-SXM:1 Cpus=16 MemGB=64\n"
                 "NodeName=n2 Gpus=A100:1 Cpus=16 MemGB=64\n"
                 "NodeName=n3 Gpus=L4:1 Cpus=16 MemGB=64\n");
        life_t *l = setup_life(conf, 10000);
        for (int n = 0; n < 3; n++)
            agent_up(l, n, NULL, 0);
        frames_clear(l);
        const char *job = "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"gpu_type\":\"A100,H100\"}";
        uint64_t a = submit(l, job), b = submit(l, job), x = submit(l, job);
        assert_int_equal(launched_on(l, a), 1);  /* A100 first */
        assert_int_equal(launched_on(l, b), 0);  /* then H100 */
        assert_int_equal(launched_on(l, x), -1); /* never the L4 it did not list */
        teardown_life(l);
    }
}

/* Budgets live: a job of an account with MaxCostPerDay needs a time limit,
 * one that could never fit the budget is refused at submit, and the jobs
 * that fit start until what is spent and committed reaches it; the next
 * waits, saying so with the figures. */
static void test_budget(void **state)
{
    (void)state;
    life_t *l = setup_life("GpuType=H100 PricePerGpuHour=4\n"
                           "NodeName=n1 Gpus=H100-SXM:4 Cpus=16 MemGB=64\n"
                           "Account=lab MaxCostPerDay=10\n",
                           10000);
    agent_up(l, 0, NULL, 0);
    frames_clear(l);
    const char *bad[][2] = {
        {"{\"argv\":[\"/bin/true\"],\"gpus\":1,\"account\":\"lab\"}",
         "time_limit: account lab has a budget (MaxCostPerDay=10.00): give the job a --time"},
        {"{\"argv\":[\"/bin/true\"],\"gpus\":1,\"account\":\"lab\",\"time_limit\":\"3h\"}",
         "account: lab's budget is $10.00 (MaxCostPerDay); this job may cost $12.00 even on its "
         "cheapest type"}};
    for (size_t i = 0; i < 2; i++) {
        ctld_job_t *cj = NULL;
        dr_err_t err = {0};
        int limit = 413;
        assert_int_equal(ctld_job_new(bad[i][0], strlen(bad[i][0]), &cj, &err), DR_OK);
        assert_int_equal(ctld_job_check(&l->c, cj, "alice", ctld_now(&l->c), &limit, &err),
                         DR_EINVAL);
        tu_assert_contains(err.msg, bad[i][1]);
        ctld_job_free(cj);
    }
    const char *ok = "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"account\":\"lab\","
                     "\"time_limit\":\"1h\"}";
    uint64_t a = submit(l, ok), b = submit(l, ok), x = submit(l, ok);
    assert_int_equal(launched_on(l, a), 0);
    assert_int_equal(launched_on(l, b), 0);
    assert_int_equal(launched_on(l, x), -1); /* $8 committed: $4 more would pass $10 */
    tu_assert_contains(ctld_job_reason(&l->c, ctld_job_find(&l->c, x)),
                       "AccountBudget (lab spent $0.00 of its $10.00 this day (UTC) and its "
                       "running jobs may spend $8.00 more; this job may cost up to $4.00)");
    /* what ended runs spent is stored and comes back after a restart */
    uint32_t g = 0;
    start_ranks(l, 0, a, &g);
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    end_ranks(l, 0, a, g, 1, 0);
    dr_budget_info_t before, after;
    assert_true(dr_sched_budget(l->c.sched, 0, ctld_now(&l->c), &before));
    assert_true(before.day_closed >= 0.3 / 3600 * 4 - 1e-9);
    stop(l);
    start(l, 10000);
    assert_true(dr_sched_budget(l->c.sched, 0, ctld_now(&l->c), &after));
    assert_true(after.day_closed == before.day_closed);
    teardown_life(l);
}

/* MaxUserCostPerHour=: one user's running jobs together may cost so much
 * an hour; another user's jobs are not held back by it. */
static void test_user_cost_cap(void **state)
{
    (void)state;
    life_t *l = setup_life("MaxUserCostPerHour=10\nGpuType=H100 PricePerGpuHour=4\n"
                           "NodeName=n1 Gpus=H100-SXM:8 Cpus=16 MemGB=64\n",
                           10000);
    assert_true(l->c.cl.site.max_user_cost_hr == 10);
    agent_up(l, 0, NULL, 0);
    frames_clear(l);
    const char *three = "{\"argv\":[\"/bin/true\"],\"gpus\":3}";
    ctld_job_t *cj = NULL;
    dr_err_t err = {0};
    int limit = 413;
    assert_int_equal(ctld_job_new(three, strlen(three), &cj, &err), DR_OK);
    assert_int_equal(ctld_job_check(&l->c, cj, "alice", ctld_now(&l->c), &limit, &err), DR_EINVAL);
    tu_assert_contains(err.msg, "this job's GPUs cost $12.00 an hour even on its cheapest type, "
                                "more than the $10.00 a user's running jobs may cost together");
    ctld_job_free(cj);
    uint64_t a = submit(l, "{\"argv\":[\"/bin/true\"],\"gpus\":2}");
    uint64_t b = submit(l, "{\"argv\":[\"/bin/true\"],\"gpus\":1}");
    assert_int_equal(launched_on(l, a), 0);
    assert_int_equal(launched_on(l, b), -1); /* $8 + $4 an hour > $10 */
    tu_assert_contains(ctld_job_reason(&l->c, ctld_job_find(&l->c, b)),
                       "UserCostLimit (alice's running jobs cost $8.00 an hour of the $10.00");
    /* bob's job is his own: it starts */
    const char *one = "{\"argv\":[\"/bin/true\"],\"gpus\":1}";
    assert_int_equal(ctld_job_new(one, strlen(one), &cj, &err), DR_OK);
    assert_int_equal(ctld_job_check(&l->c, cj, "bob", ctld_now(&l->c), &limit, &err), DR_OK);
    assert_int_equal(ctld_job_accept(&l->c, cj, "bob", 1001, 1001, ctld_now(&l->c), &err), DR_OK);
    uint64_t bob = cj->j.id;
    pump(l);
    assert_int_equal(launched_on(l, bob), 0);
    /* alice's first job ends: her second starts */
    uint32_t g = 0;
    start_ranks(l, 0, a, &g);
    end_ranks(l, 0, a, g, 1, 0);
    assert_int_equal(launched_on(l, b), 0);
    teardown_life(l);
}

/* --model and --tokens: the rates are the performance model's tokens per
 * second on each type, the work the tokens; a model that fits no type on
 * its GPUs, and a deadline no type can meet, are refused at submit. */
static void test_declared_model(void **state)
{
    (void)state;
    life_t *l = setup_life(MIXED, 10000);
    agent_up(l, 0, NULL, 0);
    frames_clear(l);
    uint64_t id = submit(l, "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"model\":\"params=1B\","
                            "\"tokens\":\"2B\",\"hold\":true}");
    ctld_job_t *cj = ctld_job_find(&l->c, id);
    assert_true(cj->j.work_declared == 2e9 && cj->j.hint_params == 1e9);
    double h = rate_of(l, id, 0), a = rate_of(l, id, 1);
    assert_true(h > a && a > 0); /* tokens per second: H100 faster than A100 */
    char *json = ctld_job_json(&l->c, cj);
    tu_assert_contains(json, "\"work_from\":\"its --tokens\"");
    tu_assert_contains(json, "\"basis\":\"performance model\"");
    free(json);
    const struct {
        const char *body, *msg;
    } bad[] = {
        {"{\"argv\":[\"/bin/true\"],\"gpus\":1,\"model\":\"params=400B\"}",
         "model: a 4e+11-parameter model fits no GPU type of this cluster on 1 GPU"},
        {"{\"argv\":[\"/bin/true\"],\"gpus\":1,\"model\":\"params=1B\",\"tokens\":\"2T\","
         "\"deadline\":\"1h\"}",
         "deadline: the job needs about"},
        {"{\"argv\":[\"/bin/true\"],\"gpus\":1,\"model\":\"no-such-model\"}", "model: "},
        {"{\"argv\":[\"/bin/true\"],\"gpus\":1,\"model\":\"params=1B\",\"tokens\":\"lots\"}",
         "tokens: 'lots' is not a count"},
        {"{\"argv\":[\"/bin/true\"],\"gpus\":1,\"model\":\"params=1B\",\"class\":\"x\"}",
         "model: give --model or --speeds, not both"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ctld_job_t *b = NULL;
        dr_err_t err = {0};
        int limit = 413;
        assert_int_equal(ctld_job_new(bad[i].body, strlen(bad[i].body), &b, &err), DR_OK);
        assert_int_equal(ctld_job_check(&l->c, b, "alice", ctld_now(&l->c), &limit, &err),
                         DR_EINVAL);
        tu_assert_contains(err.msg, bad[i].msg);
        ctld_job_free(b);
    }
    teardown_life(l);
}

/* A large array explores: with two tasks at a time on a fleet whose H100s
 * could take both, its first tasks go one to each type its class has not
 * run on, so that the class learns them; a small one does not. */
static void test_array_explores(void **state)
{
    (void)state;
    char conf[1024];
    snprintf(conf, sizeof conf, "%s",
             "GpuType=H100 PricePerGpuHour=4\nNodeName=n1 Gpus=H100-SXM:4 Cpus=16 MemGB=64\n"
             "NodeName=n2 Gpus=A100:1 Cpus=16 MemGB=64\nNodeName=n3 Gpus=L4:1 Cpus=16 MemGB=64\n");
    for (int big = 0; big < 2; big++) {
        life_t *l = setup_life(conf, 10000);
        for (int n = 0; n < 3; n++)
            agent_up(l, n, NULL, 0);
        frames_clear(l);
        uint64_t arr = submit(l, big ? "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"array\":\"0-39%2\"}"
                                     : "{\"argv\":[\"/bin/true\"],\"gpus\":1,\"array\":\"0-9%2\"}");
        ctld_job_t *p = ctld_job_find(&l->c, arr);
        assert_int_equal(p->array->active, 2);
        int on[3] = {0, 0, 0};
        for (uint32_t i = 0; i < p->array->active; i++) {
            int n = launched_on(l, p->array->live[i]->j.id);
            assert_true(n >= 0);
            on[n]++;
        }
        if (big)
            assert_true(on[0] == 1 && on[1] == 1); /* H100, then A100 to measure it */
        else
            assert_int_equal(on[0], 2); /* both on the fastest */
        teardown_life(l);
    }
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_submit_launch_settle),
        cmocka_unit_test(test_requeue_after_node_loss),
        cmocka_unit_test(test_epoch_across_restart),
        cmocka_unit_test(test_next_run_after_last_dead),
        cmocka_unit_test(test_site_price_charged),
        cmocka_unit_test(test_speeds_route_by_cost),
        cmocka_unit_test(test_class_learns_and_survives),
        cmocka_unit_test(test_default_routes_by_cost),
        cmocka_unit_test(test_type_preference),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_user_cost_cap),
        cmocka_unit_test(test_declared_model),
        cmocka_unit_test(test_array_explores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
