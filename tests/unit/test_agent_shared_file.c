/* test_agent_shared_file.c - the files the agent writes for jobs (scripts,
 * hostfiles): one per distinct content and owner, shared while in use,
 * never handed out again once changed on disk, removed when the cache
 * trims them or the agent goes. */
#include "testutil.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/agent.h"

typedef struct fx {
    struct event_base *base;
    dr_agent_t a;
    char dir[64];
} fx_t;

static int setup(void **state)
{
    fx_t *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->base = event_base_new();
    assert_non_null(fx->base);
    dr_err_t err = {0};
    assert_int_equal(dr_agent_init(&fx->a, fx->base, "n1", &err), 0);
    snprintf(fx->dir, sizeof fx->dir, "/tmp/test_shared_file_XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    fx->a.state_dir = strdup(fx->dir);
    *state = fx;
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    dr_agent_free(&fx->a);
    event_base_free(fx->base);
    nftw(fx->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(fx);
    return 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static size_t files_in(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", dir);
    FILE *p = popen(cmd, "r");
    unsigned long n = 0;
    if (p) {
        if (fscanf(p, "%lu", &n) != 1)
            n = 0;
        pclose(p);
    }
    return n;
}

/* Where the files of the agent's own uid go: STATE/jobs/UID */
static const char *udir(const fx_t *fx)
{
    static char d[300];
    snprintf(d, sizeof d, "%s/jobs/%u", fx->dir, (unsigned)geteuid());
    return d;
}

static void test_same_text_one_file(void **state)
{
    fx_t *fx = *state;
    char d[256];
    const char *p1 =
        dr_agent_file_get(&fx->a, "sh", 0700, "#!/bin/sh\ntrue\n", false, 0, 0, d, sizeof d);
    const char *p2 =
        dr_agent_file_get(&fx->a, "sh", 0700, "#!/bin/sh\ntrue\n", false, 0, 0, d, sizeof d);
    assert_non_null(p1);
    assert_ptr_equal(p1, p2);
    assert_string_equal(slurp(p1), "#!/bin/sh\ntrue\n");
    struct stat st;
    assert_int_equal(stat(p1, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    /* another text, or the same text as another kind: another file */
    const char *p3 =
        dr_agent_file_get(&fx->a, "sh", 0700, "#!/bin/sh\nfalse\n", false, 0, 0, d, sizeof d);
    const char *p4 =
        dr_agent_file_get(&fx->a, "hosts", 0644, "#!/bin/sh\ntrue\n", false, 0, 0, d, sizeof d);
    assert_non_null(p3);
    assert_non_null(p4);
    assert_true(p3 != p1 && p4 != p1 && p3 != p4);
    assert_non_null(strstr(p4, ".hosts"));
    assert_int_equal(files_in(udir(fx)), 3);
    /* STATE/jobs 0711 (users pass through), jobs/UID 0700, the user's */
    char jobs[300];
    snprintf(jobs, sizeof jobs, "%s/jobs", fx->dir);
    assert_int_equal(stat(jobs, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0711);
    assert_int_equal(stat(udir(fx), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(strncmp(p1, udir(fx), strlen(udir(fx))), 0);
}

/* As root: another user's file goes to that user's directory, both its. */
static void test_other_user(void **state)
{
    fx_t *fx = *state;
    if (geteuid() != 0)
        skip();
    char d[256];
    const char *p =
        dr_agent_file_get(&fx->a, "sh", 0700, "#!/bin/sh\nsecret\n", true, 4242, 4343, d, sizeof d);
    assert_non_null(p);
    char want[300];
    snprintf(want, sizeof want, "%s/jobs/4242/", fx->dir);
    assert_int_equal(strncmp(p, want, strlen(want)), 0);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_true(st.st_uid == 4242 && st.st_gid == 4343 && (st.st_mode & 0777) == 0700);
    want[strlen(want) - 1] = '\0';
    assert_int_equal(stat(want, &st), 0);
    assert_true(st.st_uid == 4242 && (st.st_mode & 07777) == 0700);
    dr_agent_file_put(&fx->a, p);
    dr_agent_file_clear(&fx->a);
    assert_int_equal(access(want, F_OK), -1); /* the emptied directory went at the exit */
}

static void test_changed_file_never_reused(void **state)
{
    fx_t *fx = *state;
    char d[256];
    const char *text = "#!/bin/sh\necho one\n";
    const char *p1 = dr_agent_file_get(&fx->a, "sh", 0700, text, false, 0, 0, d, sizeof d);
    assert_non_null(p1);
    char first[512];
    snprintf(first, sizeof first, "%s", p1);
    /* the job (its user owns the file) rewrites its script */
    usleep(20000); /* a later ctime even on coarse clocks */
    int fd = open(first, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "#!/bin/sh\nrm -rf ~\n", 19), 19);
    close(fd);
    const char *p2 = dr_agent_file_get(&fx->a, "sh", 0700, text, false, 0, 0, d, sizeof d);
    assert_non_null(p2);
    assert_string_not_equal(p2, first);
    assert_string_equal(slurp(p2), text);
    /* the changed file goes once its user is done with it */
    dr_agent_file_put(&fx->a, p1);
    assert_int_equal(access(first, F_OK), -1);
    assert_int_equal(access(p2, F_OK), 0);
    /* a chmod moves ctime too */
    usleep(20000);
    assert_int_equal(chmod(p2, 0777), 0);
    const char *p3 = dr_agent_file_get(&fx->a, "sh", 0700, text, false, 0, 0, d, sizeof d);
    assert_non_null(p3);
    assert_ptr_not_equal(p3, p2);
}

static void test_unused_kept_then_trimmed(void **state)
{
    fx_t *fx = *state;
    char d[256], text[64];
    const char *first = NULL;
    char first_path[512];
    for (int i = 0; i < 40; i++) {
        snprintf(text, sizeof text, "#!/bin/sh\nexit %d\n", i);
        const char *p = dr_agent_file_get(&fx->a, "sh", 0700, text, false, 0, 0, d, sizeof d);
        assert_non_null(p);
        if (!first) {
            first = p;
            snprintf(first_path, sizeof first_path, "%s", p);
        }
        dr_agent_file_put(&fx->a, p);
    }
    /* 32 unused files are kept for the next job; the oldest went */
    assert_int_equal(files_in(udir(fx)), 32);
    assert_int_equal(access(first_path, F_OK), -1);
    /* an unused file is handed out again while it is unchanged */
    const char *again =
        dr_agent_file_get(&fx->a, "sh", 0700, "#!/bin/sh\nexit 39\n", false, 0, 0, d, sizeof d);
    assert_non_null(again);
    assert_int_equal(files_in(udir(fx)), 32);
    /* the agent's exit removes them all, and the emptied user directory */
    dr_agent_file_clear(&fx->a);
    assert_int_equal(access(udir(fx), F_OK), -1);
}

static void test_unwritable_dir_reports(void **state)
{
    fx_t *fx = *state;
    char d[256] = "";
    free(fx->a.state_dir);
    fx->a.state_dir = strdup("/nonexistent/drover-test");
    const char *p = dr_agent_file_get(&fx->a, "sh", 0700, "x", false, 0, 0, d, sizeof d);
    assert_null(p);
    assert_non_null(strstr(d, "/nonexistent/drover-test"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_same_text_one_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_user, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_file_never_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unused_kept_then_trimmed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_dir_reports, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
