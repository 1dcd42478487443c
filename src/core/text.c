/* text.c - blanks trimmed from a value, and a CSV file read as a table (the
 * GPU catalog, openb's node list and its pod lists share the loop).  One
 * implementation of each. */
#include "drover/text.h"

#include <ctype.h>
#include <string.h>

const char *dr_trim_span(const char *s, size_t *n)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t len = strlen(s);
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    *n = len;
    return s;
}

char *dr_trim(char *s)
{
    size_t n;
    char *b = s + (dr_trim_span(s, &n) - s);
    b[n] = '\0';
    return b;
}

void dr_csv_open(dr_csv_t *c, const char *buf, size_t len)
{
    if (buf && len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) { /* a UTF-8 byte order mark */
        buf += 3;
        len -= 3;
    }
    dr_csv_init(c, buf, len, ',');
}

static int csv_next(dr_csv_t *c, const char *name, dr_err_t *err)
{
    int nf = dr_csv_next(c);
    if (nf < 0)
        return nf == DR_ENOMEM ? dr_err_set(err, nf, "%s: out of memory", name)
                               : dr_err_set(err, nf, "%s:%zu: unterminated quote", name, c->line);
    return nf;
}

int dr_csv_header(dr_csv_t *c, const char *name, dr_err_t *err)
{
    int nf = csv_next(c, name, err);
    if (nf == 0)
        return dr_err_set(err, DR_EINVAL, "%s: empty file (no header)", name);
    return nf;
}

int dr_csv_row(dr_csv_t *c, const char *name, size_t ncols, dr_err_t *err)
{
    for (;;) {
        int nf = csv_next(c, name, err);
        if (nf <= 0)
            return nf;
        if (c->nfields == 1 && dr_is_blank(c->fields[0]))
            continue; /* a line of blanks */
        if (ncols && c->nfields != ncols)
            return dr_err_set(err, DR_EINVAL, "%s:%zu: row has %zu fields, the header has %zu",
                              name, c->line, c->nfields, ncols);
        return nf;
    }
}
