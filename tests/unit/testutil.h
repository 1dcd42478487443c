/* testutil.h - helpers shared by the unit tests. */
#ifndef DROVER_TESTUTIL_H
#define DROVER_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>

/* Path under the source tree / the read-only shared data (static buffer). */
const char *tu_src_path(const char *rel);
const char *tu_shared_path(const char *rel);
/* True if the shared data directory is present (tests that need it skip otherwise). */
bool tu_have_shared(void);
/* Read a whole file (aborts the test on failure). */
char *tu_read(const char *path, size_t *len);
/* Assert that haystack contains needle, printing both when it does not. */
#define tu_assert_contains(hay, needle) tu_assert_contains_(hay, needle, __FILE__, __LINE__)
void tu_assert_contains_(const char *hay, const char *needle, const char *file, int line);

#endif
