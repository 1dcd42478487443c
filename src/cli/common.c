/* common.c - helpers shared by the CLI verbs: loading the catalog and the
 * cluster, writing output files, failing with a clear message. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "drover/config.h"

int cli_fail(const dr_err_t *err)
{
    fprintf(stderr, "drover: %s\n", err->msg[0] ? err->msg : dr_strerror(err->code));
    return 1;
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "drover: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 2;
}

int cli_load_catalog(dr_catalog_t *cat, const char *path, dr_err_t *err)
{
    memset(cat, 0, sizeof *cat);
    return path ? dr_catalog_load(cat, path, err) : dr_catalog_builtin(cat, err);
}

int cli_load_cluster(dr_cluster_t *c, const dr_catalog_t *cat, const char *arg, dr_err_t *err)
{
    struct stat st;
    dr_cluster_init(c);
    if (stat(arg, &st) == 0 && S_ISREG(st.st_mode))
        return dr_config_load(c, cat, arg, err);
    int rc = dr_cluster_preset(c, cat, arg, err);
    if (rc == DR_ENOENT) {
        char names[512] = "";
        size_t n = 0;
        for (const char *const *p = dr_cluster_preset_names(); *p; p++)
            n += (size_t)snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s%s",
                                  p == dr_cluster_preset_names() ? "" : ", ", *p);
        return dr_err_set(err, DR_ENOENT,
                          "--cluster '%s': no such file, and not a preset (presets: %s)", arg,
                          names);
    }
    return rc;
}

int cli_write_file(const char *dir, const char *name, const char *text, dr_err_t *err)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return dr_err_set(err, DR_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return dr_err_set(err, DR_EIO, "%s: cannot write: %s", path, strerror(errno));
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    if (!ok)
        return dr_err_set(err, DR_EIO, "%s: write failed", path);
    return DR_OK;
}

double cli_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
