/* testutil.c - helpers shared by the unit tests. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "drover/util.h"

const char *tu_src_path(const char *rel)
{
    static char buf[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", DROVER_SOURCE_DIR, rel);
    return buf[k];
}

const char *tu_shared_path(const char *rel)
{
    static char buf[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", DROVER_SHARED_DIR, rel);
    return buf[k];
}

bool tu_have_shared(void)
{
    struct stat st;
    return stat(DROVER_SHARED_DIR "/data", &st) == 0;
}

char *tu_read(const char *path, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    dr_err_t err = {0};
    if (dr_read_file(path, &buf, &n, &err) != 0)
        fail_msg("cannot read %s: %s", path, err.msg);
    if (len)
        *len = n;
    return buf;
}

void tu_assert_contains_(const char *hay, const char *needle, const char *file, int line)
{
    if (!hay || !strstr(hay, needle))
        _fail(file, line),
            print_error("expected \"%s\" to contain \"%s\"\n", hay ? hay : "(null)", needle);
}
