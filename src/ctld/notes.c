/* notes.c - history records the scheduler does not log (a step's end, a
 * node's registration, a checkpoint report): queued for the next turn's
 * commit beside the scheduler's events, one id sequence with them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ctld/ctld.h"
#include "ctld/notes.h"
#include "ctld/store.h"
#include "ctld/turn.h"

struct ctld_notes {
    ctld_note_t *v;
    size_t n, cap;
};

int ctld_notes_init(dr_ctld_t *c)
{
    c->notes = calloc(1, sizeof *c->notes);
    return c->notes ? DR_OK : DR_ENOMEM;
}

void ctld_notes_free(dr_ctld_t *c)
{
    if (!c->notes)
        return;
    ctld_notes_clear(c);
    free(c->notes->v);
    free(c->notes);
    c->notes = NULL;
}

bool ctld_notes_pending(const dr_ctld_t *c)
{
    return c->notes->n > 0;
}

int ctld_notes_write(dr_ctld_t *c, dr_err_t *err)
{
    int rc = DR_OK;
    for (size_t i = 0; i < c->notes->n && rc == DR_OK; i++)
        rc = ctld_store_put_note(c, &c->notes->v[i], err);
    return rc;
}

/* Queue a note (committed with the next turn's records); NULL when memory
 * ran out, which loses the note and nothing else. */
static ctld_note_t *note_push(dr_ctld_t *c, const char *what, const char *fmt, va_list ap)
    DR_PRINTF(3, 0);
static ctld_note_t *note_push(dr_ctld_t *c, const char *what, const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    char *d = dr_strdup(buf);
    struct ctld_notes *q = c->notes;
    if (!d || dr_grow((void **)&q->v, &q->cap, q->n + 1, sizeof *q->v) != 0) {
        free(d);
        return NULL;
    }
    ctld_note_t *n = &q->v[q->n++];
    *n = (ctld_note_t){.job = 0, .node = -1, .t = ctld_now(c), .detail = d};
    snprintf(n->what, sizeof n->what, "%s", what);
    ctld_turn_schedule(c);
    return n;
}

void ctld_note(dr_ctld_t *c, uint64_t job, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ctld_note_t *n = note_push(c, what, fmt, ap);
    va_end(ap);
    if (n)
        n->job = job;
}

void ctld_node_note(dr_ctld_t *c, uint32_t node, const char *what, const char *from,
                    const char *fmt, ...)
{
    if (c->stopping)
        return; /* the agents' connections closing on our way out change nothing */
    va_list ap;
    va_start(ap, fmt);
    ctld_note_t *n = note_push(c, what, fmt, ap);
    va_end(ap);
    if (!n)
        return;
    n->node = (int32_t)node;
    snprintf(n->from, sizeof n->from, "%s", from);
    snprintf(n->to, sizeof n->to, "%s", ctld_node_state(c, node));
}

void ctld_notes_clear(dr_ctld_t *c)
{
    for (size_t i = 0; i < c->notes->n; i++)
        free(c->notes->v[i].detail);
    c->notes->n = 0;
}
