/* embed.h - data files compiled into libdrover (see cmake/embed.cmake). */
#ifndef DROVER_CORE_EMBED_H
#define DROVER_CORE_EMBED_H

#include <stddef.h>

struct dr_embedded {
    const char *name, *path, *data;
    size_t len;
};
extern const struct dr_embedded dr_embedded_files[];

/* The embedded file called name, or NULL. */
const struct dr_embedded *dr_embedded(const char *name);

#endif
