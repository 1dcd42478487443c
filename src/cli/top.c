/* top.c - `drover top`: a live full-screen view of the cluster, as htop is
 * of a machine.  Every -d seconds it fetches GET /v1/ping, /v1/stats (404
 * from a controller without it: the figures are computed from the nodes
 * and jobs instead), /v1/nodes and the running and pending jobs, lays the
 * frame out with top_frame.c and draws it with plain ANSI escapes on the
 * alternate screen.  `q` quits; the terminal is restored on every way out
 * (q, SIGINT, SIGTERM, SIGHUP) and the frame is cut anew to the window's
 * size on SIGWINCH.  --once, or a stdout that is not a terminal, prints one
 * frame without escapes and exits: what scripts and tests read. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/top_frame.h"

#define ESC_ALT_ON    "\x1b[?1049h\x1b[?25l" /* alternate screen, cursor hidden */
#define ESC_ALT_OFF   "\x1b[?25h\x1b[?1049l"
#define ESC_HOME      "\x1b[H"
#define ESC_EOL       "\x1b[K"
#define ESC_CLEAR_EOS "\x1b[J"

static volatile sig_atomic_t top_quit, top_resized;

static void on_quit(int sig)
{
    top_quit = sig;
} /* q sets 1 */
static void on_winch(int sig)
{
    (void)sig;
    top_resized = 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: drover top [-d SECONDS] [--once] [--server URL|SOCKET]\n"
               "\n"
               "A live view of the cluster: GPUs per type (total, allocated, idle, down) with\n"
               "utilisation bars, the cost rate of what runs now, the nodes, and the queue\n"
               "(running jobs, then pending), cut to the terminal's size.  Refreshes every\n"
               "-d SECONDS (default 2); q quits, any other key refreshes at once.  --once (or\n"
               "when stdout is not a terminal) prints one frame, whole, and exits.\n");
}

/* One GET's JSON, NULL on any failure (the first failure's message kept in
 * err).  A 404 is "absent", not a failure, when `absent_ok`. */
static json_t *get(cli_client_t *c, const char *target, bool absent_ok, dr_err_t *err)
{
    json_t *reply = NULL;
    dr_err_t e = {0};
    if (cli_client_json(c, "GET", target, NULL, &reply, &e) == DR_OK)
        return reply;
    json_decref(reply);
    if (!(absent_ok && c->last_status == 404) && err->code == DR_OK)
        *err = e;
    return NULL;
}

typedef struct top_data {
    json_t *ping, *stats, *nodes, *running, *pending;
} top_data_t;

static void data_free(top_data_t *d)
{
    json_decref(d->ping);
    json_decref(d->stats);
    json_decref(d->nodes);
    json_decref(d->running);
    json_decref(d->pending);
    memset(d, 0, sizeof *d);
}

/* Everything a frame shows; `rows` bounds the job listings (0: the
 * server's default limit). */
static int fetch(cli_client_t *c, size_t rows, top_data_t *d, dr_err_t *err)
{
    memset(d, 0, sizeof *d);
    d->ping = get(c, "/v1/ping", false, err);
    if (!d->ping)
        return err->code ? err->code : DR_EIO;
    d->stats = get(c, "/v1/stats", true, err);
    d->nodes = get(c, "/v1/nodes", false, err);
    char q[160];
    char lim[48] = "";
    if (rows)
        snprintf(lim, sizeof lim, "&limit=%zu", rows);
    snprintf(q, sizeof q, "/v1/jobs?state=starting,running,completing%s", lim);
    d->running = get(c, q, false, err);
    snprintf(q, sizeof q, "/v1/jobs?state=pending%s", lim);
    d->pending = get(c, q, false, err);
    return err->code;
}

static void term_size(int *w, int *h)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
        *w = ws.ws_col;
        *h = ws.ws_row;
    } else {
        *w = 80;
        *h = 24;
    }
}

static void write_all(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t k = write(STDOUT_FILENO, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

/* The frame on the screen: from the top left, each line cleared to its
 * end, then the rest of the screen cleared; one write, so it does not
 * flicker.  The last line gets no newline (it would scroll). */
static void draw(const char *frame)
{
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    if (!m)
        return;
    fputs(ESC_HOME, m);
    for (const char *p = frame; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        fwrite(p, 1, n, m);
        fputs(ESC_EOL, m);
        p += n;
        if (nl) {
            p++;
            if (*p)
                fputs("\r\n", m);
        }
    }
    fputs(ESC_CLEAR_EOS, m);
    if (fclose(m) == 0)
        write_all(out, len);
    free(out);
}

static char *frame_of(const cli_client_t *c, const top_data_t *d, const dr_catalog_t *cat,
                      const char *note, int width, int height)
{
    cli_top_input_t in = {.controller = c->ep.display ? c->ep.display : "?",
                          .ping = d->ping,
                          .stats = d->stats,
                          .nodes = d->nodes,
                          .running = d->running,
                          .pending = d->pending,
                          .cat = cat,
                          .note = note,
                          .now = cli_wall_now(),
                          .width = width,
                          .height = height};
    return cli_top_frame(&in);
}

/* A frame of fresh figures; while the controller does not answer, of the
 * last ones it gave (`last`, replaced by each complete answer), saying
 * since when. */
static char *render(cli_client_t *c, const dr_catalog_t *cat, int width, int height, size_t rows,
                    top_data_t *last, double *last_t, dr_err_t *err)
{
    top_data_t d;
    fetch(c, rows, &d, err);
    if (err->code == DR_OK || !last->ping) {
        data_free(last);
        *last = d;
        if (err->code == DR_OK)
            *last_t = cli_wall_now();
    } else {
        data_free(&d);
    }
    char note[sizeof err->msg + 64] = "", when[48];
    if (err->code != DR_OK && *last_t > 0)
        snprintf(note, sizeof note, "as of %s: %s", cli_fmt_time(*last_t, when, sizeof when),
                 err->msg); /* the time first: a long message is cut at the width */
    else if (err->code != DR_OK)
        snprintf(note, sizeof note, "%s", err->msg);
    return frame_of(c, last, cat, note, width, height);
}

int cli_top(int argc, char **argv)
{
    const char *server = NULL, *delay = NULL;
    bool once = false;
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--once") == 0) {
            once = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((m = cli_opt_value(argc, argv, &i, "--server", &server)) != 0 ||
                   (m = cli_opt_value(argc, argv, &i, "--delay", &delay)) != 0 ||
                   (m = cli_opt_value(argc, argv, &i, "-d", &delay)) != 0) {
            if (m < 0)
                return 2;
        } else {
            return cli_usage_error("top: unknown argument '%s' (see drover top --help)", argv[i]);
        }
    }
    double period = 2.0;
    if (delay) {
        char *end = NULL;
        period = strtod(delay, &end);
        if (!end || end == delay || *end || !(period >= 0.1 && period <= 3600))
            return cli_usage_error("top: -d '%s': seconds between 0.1 and 3600", delay);
    }
    cli_client_t c;
    dr_err_t err = {0};
    if (cli_client_init(&c, server ? server : cli_server_arg, &err) != DR_OK) {
        cli_client_free(&c);
        return cli_usage_error("%s", err.msg);
    }
    /* prices for the cost rate when the controller has no /v1/stats */
    dr_catalog_t cat;
    dr_err_t cerr = {0};
    bool have_cat = cli_load_catalog(&cat, NULL, &cerr) == DR_OK;
    const dr_catalog_t *catp = have_cat ? &cat : NULL;

    if (once || !isatty(STDOUT_FILENO)) {
        top_data_t last = {0};
        double last_t = 0;
        char *frame = render(&c, catp, 0, 0, 0, &last, &last_t, &err);
        data_free(&last);
        int rc = 0;
        if (err.code != DR_OK) {
            rc = cli_fail(&err); /* a frame of an unreachable controller is no answer */
        } else if (frame) {
            fputs(frame, stdout);
        } else {
            rc = cli_fail(&(dr_err_t){DR_ENOMEM, "top: out of memory"});
        }
        free(frame);
        if (have_cat)
            dr_catalog_free(&cat);
        cli_client_free(&c);
        return rc;
    }

    /* the full-screen loop */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_quit; /* no SA_RESTART: a signal ends the wait at once */
    struct sigaction old_int, old_term, old_hup, old_winch;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    sa.sa_handler = on_winch;
    sigaction(SIGWINCH, &sa, &old_winch);
    bool keys = isatty(STDIN_FILENO), raw_set = false;
    struct termios saved;
    if (keys && tcgetattr(STDIN_FILENO, &saved) == 0) {
        raw_set = true;
        struct termios raw = saved;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO); /* keys one by one, unechoed; ^C still signals */
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    } else {
        keys = false;
    }
    write_all(ESC_ALT_ON, sizeof ESC_ALT_ON - 1);
    top_data_t last = {0};
    double last_t = 0;
    while (!top_quit) {
        int w, h;
        term_size(&w, &h);
        top_resized = 0;
        err = (dr_err_t){0};
        c.connect_timeout_ms = 2000; /* a frame should not hang on a lost controller */
        c.read_timeout_ms = 5000;
        char *frame = render(&c, catp, w, h, (size_t)h, &last, &last_t, &err);
        if (frame)
            draw(frame);
        free(frame);
        /* wait for the period, a key, a resize or a signal */
        double until = cli_now_s() + period;
        bool redraw = false;
        while (!top_quit && !redraw) {
            double left = until - cli_now_s();
            if (left <= 0)
                break;
            struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
            int n = poll(keys ? &p : NULL, keys ? 1 : 0, (int)ceil(left * 1000));
            if (n < 0 && errno != EINTR)
                break;
            if (top_resized) {
                redraw = true;
            } else if (n > 0 && (p.revents & POLLIN)) {
                char ch[16];
                ssize_t k = read(STDIN_FILENO, ch, sizeof ch);
                for (ssize_t i = 0; i < k; i++)
                    if (ch[i] == 'q' || ch[i] == 'Q')
                        top_quit = 1;
                redraw = true;
            } else if (n > 0) {
                keys = false; /* the terminal hung up: only the timer now */
            }
        }
    }
    write_all(ESC_ALT_OFF, sizeof ESC_ALT_OFF - 1);
    data_free(&last);
    if (raw_set)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    sigaction(SIGWINCH, &old_winch, NULL);
    if (have_cat)
        dr_catalog_free(&cat);
    cli_client_free(&c);
    return top_quit > 1 ? 128 + top_quit : 0; /* q: 0; a signal: as the shell counts it */
}
