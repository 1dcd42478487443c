/* replay_main.c - runs a fuzz target over its seed corpus when the build has
 * no libFuzzer (gcc builds), so every build still exercises the parsers on
 * the corpus inputs. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drover/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    int n = 0;
    for (int a = 1; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        if (!d) {
            fprintf(stderr, "%s: cannot open corpus directory\n", argv[a]);
            return 1;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
            char *buf;
            size_t len;
            dr_err_t err;
            if (dr_read_file(path, &buf, &len, &err) != 0)
                continue;
            LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
            free(buf);
            n++;
        }
        closedir(d);
    }
    printf("replayed %d inputs\n", n);
    return n > 0 ? 0 : 1;
}
