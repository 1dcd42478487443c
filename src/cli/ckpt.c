/* ckpt.c - `drover ckpt commit|verify|list`: the checkpoint manifests
 * (src/ckpt).  No controller is involved: a job runs `drover ckpt commit`
 * on its node once a checkpoint is written; a user runs verify and list
 * wherever the files are.  See docs/operations.md "Checkpoints". */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckpt/ckpt.h"
#include "cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: drover ckpt commit DIR [--keep N] [--sha256]\n"
               "       drover ckpt verify DIR\n"
               "       drover ckpt list [JOBDIR] [--json]\n"
               "\n"
               "commit  hash every file under DIR (XXH3-128; --sha256 adds SHA-256), fsync them\n"
               "        and write DIR/" DR_CKPT_MANIFEST " atomically.  When DIR is in\n"
               "        $DROVER_CHECKPOINT_DIR, or with --keep, the older checkpoints beside it\n"
               "        are pruned to the newest N ($DROVER_CHECKPOINT_KEEP, else 3).\n"
               "verify  check every byte of DIR against its manifest: exit 0 when it matches,\n"
               "        1 (saying what differs) when it does not.\n"
               "list    the checkpoints of JOBDIR (default $DROVER_CHECKPOINT_DIR), newest first,\n"
               "        each verified; the one a restart would use is marked.\n");
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int parse_keep(const char *s, unsigned *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 1 || v > 1000000)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* Is dir directly inside $DROVER_CHECKPOINT_DIR? */
static bool in_job_dir(const char *dir)
{
    const char *jd = getenv("DROVER_CHECKPOINT_DIR");
    if (!jd || !*jd)
        return false;
    char *a = realpath(dir, NULL), *b = realpath(jd, NULL);
    bool in = false;
    if (a && b) {
        char *s = strrchr(a, '/');
        if (s && s != a) {
            *s = '\0';
            in = strcmp(a, b) == 0;
        }
    }
    free(a);
    free(b);
    return in;
}

static int do_commit(int argc, char **argv)
{
    const char *dir = NULL, *v;
    dr_ckpt_commit_opts_t o = {.now_ns = now_ns()};
    bool keep_given = false;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_opt_value(argc, argv, &i, "--keep", &v)) != 0) {
            if (r < 0 || parse_keep(v, &o.keep) != 0)
                return cli_usage_error("--keep: a number of checkpoints, 1 or more");
            keep_given = true;
        } else if (strcmp(argv[i], "--sha256") == 0) {
            o.sha256 = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("ckpt commit: unknown option '%s'", argv[i]);
        } else if (!dir) {
            dir = argv[i];
        } else {
            return cli_usage_error("ckpt commit: one directory");
        }
    }
    if (!dir)
        return cli_usage_error("ckpt commit: which directory? (drover ckpt commit DIR)");
    if (!keep_given && in_job_dir(dir)) {
        const char *k = getenv("DROVER_CHECKPOINT_KEEP");
        o.keep = DR_CKPT_KEEP_DEFAULT;
        if (k && *k && parse_keep(k, &o.keep) != 0) {
            fprintf(stderr,
                    "drover: DROVER_CHECKPOINT_KEEP='%s' is not a number >= 1; keeping %d\n", k,
                    DR_CKPT_KEEP_DEFAULT);
            o.keep = DR_CKPT_KEEP_DEFAULT;
        }
    }
    /* a job's own checkpoint records its generation: a later rank of the
     * same generation never resumes from it (ckpt.h: dr_ckpt_pick_for) */
    const char *g = getenv("DROVER_JOB_GENERATION");
    if (g && *g && in_job_dir(dir)) {
        char *end;
        unsigned long gv = strtoul(g, &end, 10);
        if (!*end && gv > 0 && gv <= UINT32_MAX)
            o.gen = (uint32_t)gv;
    }
    /* the job directory's owner record (the agent's, made at the job's
     * first run): a restart resumes only from checkpoints naming it */
    dr_ckpt_owner_t owner;
    const char *jd = getenv("DROVER_CHECKPOINT_DIR");
    if (jd && *jd && in_job_dir(dir)) {
        int jfd = open(jd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        dr_err_t oe = {0};
        int orc = jfd >= 0 ? dr_ckpt_owner_read(jfd, &owner, &oe) : DR_ENOENT;
        if (jfd >= 0)
            close(jfd);
        if (orc == DR_OK)
            o.owner = &owner;
        else
            fprintf(stderr,
                    "drover: %s/" DR_CKPT_OWNER_FILE ": %s: this checkpoint names no owner, and "
                    "the job's next run will not resume from it\n",
                    jd, orc == DR_ENOENT ? "missing" : oe.msg);
    }
    dr_strvec_t pruned = {0};
    o.pruned = &pruned;
    dr_ckpt_manifest_t m;
    dr_err_t err = {0};
    int rc = dr_ckpt_commit(dir, &o, &m, &err);
    if (rc != DR_OK) {
        dr_strvec_free(&pruned);
        dr_err_prefix(&err, "ckpt commit %s: ", dir);
        return cli_fail(&err);
    }
    printf("committed %s: checkpoint %llu, %zu files, %llu bytes\n", dir, (unsigned long long)m.seq,
           m.nfiles, (unsigned long long)dr_ckpt_manifest_bytes(&m));
    for (size_t i = 0; i < pruned.n; i++)
        printf("pruned %s\n", pruned.v[i]);
    dr_ckpt_manifest_free(&m);
    dr_strvec_free(&pruned);
    return 0;
}

static int do_verify(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-')
        return cli_usage_error("usage: drover ckpt verify DIR");
    dr_ckpt_manifest_t m;
    dr_err_t err = {0};
    if (dr_ckpt_verify(argv[1], &m, &err) != DR_OK) {
        printf("%s: rejected: %s\n", argv[1], err.msg);
        return 1;
    }
    printf("%s: verified: checkpoint %llu, %zu files, %llu bytes\n", argv[1],
           (unsigned long long)m.seq, m.nfiles, (unsigned long long)dr_ckpt_manifest_bytes(&m));
    dr_ckpt_manifest_free(&m);
    return 0;
}

static int do_list(int argc, char **argv)
{
    const char *dir = NULL;
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            as_json = true;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error("ckpt list: unknown option '%s'", argv[i]);
        else if (!dir)
            dir = argv[i];
        else
            return cli_usage_error("ckpt list: one directory");
    }
    if (!dir)
        dir = getenv("DROVER_CHECKPOINT_DIR");
    if (!dir || !*dir)
        return cli_usage_error("ckpt list: which directory? (JOBDIR, or $DROVER_CHECKPOINT_DIR)");
    dr_ckpt_list_t l;
    dr_err_t err = {0};
    if (dr_ckpt_list(dir, &l, &err) != DR_OK)
        return cli_fail(&err);
    /* a job's directory: only its own checkpoints count, as at a restart */
    int jfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    dr_ckpt_owner_t owner;
    dr_err_t oe = {0};
    if (jfd >= 0 && dr_ckpt_owner_read(jfd, &owner, &oe) == DR_OK)
        dr_ckpt_reject_unowned(&l, &owner);
    if (jfd >= 0)
        close(jfd);
    long pick = dr_ckpt_pick(dir, &l, true);
    json_t *a = as_json ? json_array() : NULL;
    if (!as_json)
        printf("%-24s %6s %-11s %6s %12s  %s\n", "NAME", "SEQ", "STATE", "FILES", "BYTES",
               "RESTART / WHY");
    for (size_t i = 0; i < l.n; i++) {
        const dr_ckpt_entry_t *x = &l.e[i];
        bool used = (long)i == pick;
        if (a) {
            json_array_append_new(
                a, json_pack("{s:s,s:I,s:s,s:I,s:I,s:f,s:b,s:s}", "name", x->name, "seq",
                             (json_int_t)x->seq, "state", dr_ckpt_state_name(x->state), "files",
                             (json_int_t)x->nfiles, "bytes", (json_int_t)x->bytes, "created",
                             (double)x->created_ns / 1e9, "restart", used, "why", x->why));
            continue;
        }
        char seq[24] = "-", files[24] = "-", bytes[24] = "-";
        if (x->state == DR_CKPT_VERIFIED || x->state == DR_CKPT_REJECTED) {
            snprintf(seq, sizeof seq, "%llu", (unsigned long long)x->seq);
            snprintf(files, sizeof files, "%zu", x->nfiles);
            snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)x->bytes);
        }
        printf("%-24s %6s %-11s %6s %12s  %s\n", x->name, seq, dr_ckpt_state_name(x->state), files,
               bytes, used ? "<- a restart resumes here" : x->why);
    }
    if (a) {
        json_t *o = json_pack("{s:s,s:o,s:s?}", "dir", dir, "checkpoints", a, "restart_from",
                              pick >= 0 ? l.e[pick].name : NULL);
        cli_print_json(o);
        json_decref(o);
    }
    dr_ckpt_list_free(&l);
    return 0;
}

int cli_ckpt(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "commit") == 0)
        return do_commit(argc - 1, argv + 1);
    if (strcmp(argv[1], "verify") == 0)
        return do_verify(argc - 1, argv + 1);
    if (strcmp(argv[1], "list") == 0)
        return do_list(argc - 1, argv + 1);
    fprintf(stderr, "drover ckpt: unknown subcommand '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
