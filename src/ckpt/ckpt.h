/* ckpt.h - checkpoints drover can vouch for: a manifest per checkpoint
 * directory (each file's path, size and XXH3-128, optionally SHA-256),
 * written atomically when the job commits it, and verified byte for byte
 * before a restart uses it.
 *
 * Shared by the CLI (`drover ckpt commit|verify|list`, run by the job on
 * its node or by a user) and the agent (which picks the checkpoint a
 * restarted job resumes from).  manifest.c is pure (text in, struct out:
 * fuzzed); tree.c walks and hashes a directory; ckpt.c commits, verifies,
 * lists, picks and prunes.
 *
 * Layout: a job's checkpoint directory ($DROVER_CHECKPOINT_DIR, the same
 * for every generation of the job) holds one subdirectory per checkpoint;
 * a subdirectory counts only once it holds a MANIFEST.drover that parses,
 * and is used only when every file it lists is there with the listed size
 * and checksum and nothing else is. */
#ifndef DROVER_CKPT_H
#define DROVER_CKPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drover/error.h"
#include "drover/util.h"

#define DR_CKPT_MANIFEST     "MANIFEST.drover"
#define DR_CKPT_MANIFEST_TMP ".MANIFEST.drover.tmp"
#define DR_CKPT_VERSION      1
#define DR_CKPT_MAX_FILES    1000000
#define DR_CKPT_MAX_PATH     4096
#define DR_CKPT_MAX_TEXT     (256u << 20) /* a manifest of DR_CKPT_MAX_FILES long names */
#define DR_CKPT_KEEP_DEFAULT 3

typedef struct dr_ckpt_file {
    char *path; /* relative to the checkpoint, '/'-separated */
    uint64_t size;
    uint8_t xxh[16]; /* XXH3-128, canonical (big-endian) bytes */
    bool has_sha;
    uint8_t sha[32]; /* SHA-256, when has_sha */
} dr_ckpt_file_t;

/* Whose checkpoint directory it is: the job, the uid it runs as, and a
 * random nonce the agent drew when it made the directory for the job's
 * first run.  The agent writes it to JOBDIR/.drover-job (0600, the job
 * user's); `drover ckpt commit` inside the job copies it into the
 * manifest; a restart resumes only from a checkpoint whose manifest names
 * the same three (a checkpoint planted by someone else, or carried over
 * from another job's directory, names another or none). */
#define DR_CKPT_OWNER_FILE ".drover-job"
typedef struct dr_ckpt_owner {
    uint64_t job;
    uint32_t uid;
    uint8_t nonce[16];
} dr_ckpt_owner_t;

typedef struct dr_ckpt_manifest {
    uint64_t seq;       /* commit order within the job's directory: 1, 2, ... */
    int64_t created_ns; /* Unix ns of the commit (shown; seq orders) */
    uint32_t gen;       /* the job generation that committed it (0: not known) */
    bool has_owner;     /* committed inside a drover job's directory */
    dr_ckpt_owner_t owner;
    dr_ckpt_file_t *files;
    size_t nfiles, cap; /* sorted by path (strcmp), no duplicates */
} dr_ckpt_manifest_t;

/* ---- manifest.c: the text format (pure) ----
 *
 *   drover-checkpoint 1
 *   seq 3
 *   created 1764608456123456789
 *   gen 2                      (only when known: DROVER_JOB_GENERATION)
 *   owner JOB UID <32 hex>     (only inside a job's directory: its .drover-job)
 *   files 2
 *   f 1048576 <32 hex: xxh3-128> - model.pt
 *   f 12 <32 hex> <64 hex: sha-256> opt/state.json
 *   end <32 hex: xxh3-128 of every byte before this line>
 *
 * The path is the rest of the line (it may hold spaces, no control
 * characters).  The last line's checksum makes a torn or edited manifest
 * detectable on its own. */

/* A relative path a manifest may hold: not empty, not absolute, no empty,
 * "." or ".." component, no control character, at most DR_CKPT_MAX_PATH. */
bool dr_ckpt_path_ok(const char *p, size_t n);
/* Sort m's files by path; DR_EINVAL naming a duplicate. */
int dr_ckpt_manifest_sort(dr_ckpt_manifest_t *m, dr_err_t *err);
int dr_ckpt_manifest_format(const dr_ckpt_manifest_t *m, char **text, size_t *len, dr_err_t *err);
int dr_ckpt_manifest_parse(dr_ckpt_manifest_t *m, const char *text, size_t len, dr_err_t *err);
void dr_ckpt_manifest_free(dr_ckpt_manifest_t *m);
/* The owner file's text ("drover-job 1\njob J\nuid U\nnonce HEX\n"):
 * format into buf (at least 128 bytes), parse (DR_EINVAL saying why). */
void dr_ckpt_owner_format(const dr_ckpt_owner_t *o, char *buf, size_t len);
int dr_ckpt_owner_parse(dr_ckpt_owner_t *o, const char *text, size_t len, dr_err_t *err);
bool dr_ckpt_owner_same(const dr_ckpt_owner_t *a, const dr_ckpt_owner_t *b);
/* Add a file (path copied). */
int dr_ckpt_manifest_add(dr_ckpt_manifest_t *m, const char *path, uint64_t size, dr_err_t *err);
uint64_t dr_ckpt_manifest_bytes(const dr_ckpt_manifest_t *m);

/* ---- tree.c: what a directory holds ---- */

/* Every regular file under dir (recursively; not the top-level manifest
 * or its temporary), sorted, with its size and no checksum.  Symbolic
 * links and other non-regular entries are an error naming the entry (a
 * checkpoint holds regular files and directories only). */
int dr_ckpt_scan(const char *dir, dr_ckpt_manifest_t *out, dr_err_t *err);
/* Hash dir/f->path (not following a symbolic link) into f->xxh (and
 * f->sha when sha); its size must still be f->size.  When sync, fsync it
 * too (a commit makes the data durable before the manifest says so). */
int dr_ckpt_hash_file(int dirfd, dr_ckpt_file_t *f, bool sha, bool sync, dr_err_t *err);

/* ---- ckpt.c ---- */

typedef struct dr_ckpt_commit_opts {
    bool sha256;                  /* also SHA-256 every file */
    int64_t now_ns;               /* created time */
    uint32_t gen;                 /* the committing job generation, 0 when not known */
    const dr_ckpt_owner_t *owner; /* the job directory's owner record, NULL when none */
    unsigned keep;                /* > 0: prune the parent to the newest `keep` after the commit */
    dr_strvec_t *pruned;          /* the names removed (may be NULL) */
} dr_ckpt_commit_opts_t;

/* Hash every file under dir, fsync them, and write dir/MANIFEST.drover
 * atomically (temporary, fsync, rename, fsync the directory and its
 * parent).  Its seq is one more than any other checkpoint's beside it.
 * An existing manifest is replaced (a rewritten checkpoint). */
int dr_ckpt_commit(const char *dir, const dr_ckpt_commit_opts_t *o, dr_ckpt_manifest_t *out,
                   dr_err_t *err);
/* Read and parse dir/MANIFEST.drover (DR_ENOENT when there is none). */
int dr_ckpt_read_manifest(const char *dir, dr_ckpt_manifest_t *m, dr_err_t *err);
/* DR_OK when dir holds exactly what its manifest lists, every byte
 * checked; otherwise err says the first thing wrong ("model.pt: 812 bytes,
 * the manifest says 1024 (truncated)"). *m, if given, gets the manifest. */
int dr_ckpt_verify(const char *dir, dr_ckpt_manifest_t *m, dr_err_t *err);

typedef enum dr_ckpt_state {
    DR_CKPT_UNCOMMITTED, /* no manifest: being written, or abandoned */
    DR_CKPT_TORN,        /* a manifest that does not parse */
    DR_CKPT_COMMITTED,   /* a manifest that parses; not verified */
    DR_CKPT_VERIFIED,    /* every byte checked */
    DR_CKPT_REJECTED     /* committed, but what is there is not what it lists */
} dr_ckpt_state_t;

typedef struct dr_ckpt_entry {
    char *name; /* the subdirectory's name */
    dr_ckpt_state_t state;
    uint64_t seq;
    int64_t created_ns, mtime_ns;
    uint32_t gen; /* who committed it (0: not known) */
    bool has_owner;
    dr_ckpt_owner_t owner; /* the manifest's, when has_owner */
    size_t nfiles;
    uint64_t bytes;
    char why[DR_ERR_MSG_MAX]; /* TORN / REJECTED: what is wrong */
} dr_ckpt_entry_t;

typedef struct dr_ckpt_list {
    dr_ckpt_entry_t *e;
    size_t n, cap;
} dr_ckpt_list_t;

/* The subdirectories of jobdir (hidden names left out), newest first:
 * committed ones by seq (then created time, then name), then the others
 * by modification time.  Nothing is verified yet.  A missing jobdir is an
 * empty list. */
int dr_ckpt_list(const char *jobdir, dr_ckpt_list_t *l, dr_err_t *err);
/* Verify committed entries newest first until one verifies (all of them
 * when all is set); returns its index, or -1 when none does.  Entries
 * tried become VERIFIED or REJECTED. */
long dr_ckpt_pick(const char *jobdir, dr_ckpt_list_t *l, bool all);
/* The same for a launch of generation `gen`: a checkpoint its own or a later
 * generation committed (a rank of it that started earlier, or a newer run)
 * is passed over - every rank of a generation resumes from the same one -
 * and marked REJECTED saying so. */
long dr_ckpt_pick_for(const char *jobdir, dr_ckpt_list_t *l, uint32_t gen);
/* The same, taking only checkpoints whose manifest names `owner` (this
 * job's directory record): any other committed one is REJECTED saying
 * whose it is. */
void dr_ckpt_reject_unowned(dr_ckpt_list_t *l, const dr_ckpt_owner_t *owner);
long dr_ckpt_pick_owned(const char *jobdir, dr_ckpt_list_t *l, uint32_t gen,
                        const dr_ckpt_owner_t *owner);
/* Read JOBDIR/.drover-job (not following a link): DR_ENOENT when there is
 * none, DR_EINVAL when it does not parse. */
int dr_ckpt_owner_read(int jobdirfd, dr_ckpt_owner_t *o, dr_err_t *err);
void dr_ckpt_list_free(dr_ckpt_list_t *l);
const char *dr_ckpt_state_name(dr_ckpt_state_t s);

/* Keep the newest `keep` committed checkpoints of jobdir and `keep_name`
 * (the one just committed: the newest verified one) and remove the other
 * committed ones (manifest first, so a half-removed one never counts), and
 * uncommitted or torn directories older than the oldest one kept (an
 * abandoned write; a write in progress is newer).  Names removed go to
 * *removed (may be NULL). */
int dr_ckpt_prune(const char *jobdir, unsigned keep, const char *keep_name, dr_strvec_t *removed,
                  dr_err_t *err);

#endif
