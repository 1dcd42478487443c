/* stepd.c - the agent's srun socket: job steps asked for from inside a job.
 *
 * The agent owns a directory that job users may traverse but not list
 * (0711): a Unix socket there (mode 0666: anyone may connect, the agent
 * decides who is heard) and bin/srun, a link to the drover binary, which
 * launch.c puts first on every job's PATH; jobs find the socket in
 * DROVER_STEP_SOCKET.  srun sends one STEP_REQ (dr_proto_local_*: the
 * link's strict bodies without its sealing), the agent authenticates the
 * peer - its uid (SO_PEERCRED) must be the one the agent runs a rank of
 * that job generation as, here - and forwards the request over its
 * authenticated link with that uid and a request id of its own; the
 * controller checks the job's step key and the rest.  The controller's
 * STEP_STATE answers (accepted, refused, done) go back to that srun.  An
 * srun that goes away (killed, or its script ended) cancels its step, so
 * nothing it started outlives it. */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#define SRUN_IN_MAX (DR_PROTO_LOCAL_HDR + DR_PROTO_MAX_BODY)

/* One connected srun. */
typedef struct dr_agent_srun {
    dr_agent_t *a;
    struct bufferevent *bev;
    uid_t uid;
    pid_t pid;
    uint64_t job;
    uint32_t gen;
    uint64_t req;  /* 0 until its STEP_REQ went to the controller */
    bool finished; /* refused or done: nothing more to cancel */
    struct dr_agent_srun *next;
} dr_agent_srun_t;

static void srun_free(dr_agent_srun_t *s)
{
    dr_agent_t *a = s->a;
    for (dr_agent_srun_t **p = &a->sruns; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    if (s->bev)
        bufferevent_free(s->bev);
    free(s);
}

static void srun_send(dr_agent_srun_t *s, int type, const void *m)
{
    uint8_t *out = NULL;
    size_t n = 0;
    dr_err_t err = {0};
    if (dr_proto_local_encode(type, m, &out, &n, &err) != DR_OK) {
        dr_agent_log(s->a, "srun pid %ld: cannot answer: %s", (long)s->pid, err.msg);
        return;
    }
    bufferevent_write(s->bev, out, n);
    free(out);
}

/* Refuse on the agent's own account; srun prints why and exits. */
static void srun_refuse(dr_agent_srun_t *s, const char *why)
{
    dr_agent_log(s->a, "srun pid %ld (uid %u), job %llu: step refused: %s", (long)s->pid,
                 (unsigned)s->uid, (unsigned long long)s->job, why);
    dr_msg_step_state_t m = {
        .job = s->job, .gen = s->gen, .state = DR_STEP_REFUSED, .detail = (char *)why};
    srun_send(s, DR_MSG_STEP_STATE, &m);
    s->finished = true;
}

/* The controller no longer hears of the step: tell the controller to stop it. */
static void srun_cancel(dr_agent_srun_t *s, int sig)
{
    if (!s->req || s->finished)
        return;
    dr_msg_step_cancel_t c = {.job = s->job, .gen = s->gen, .req = s->req, .signal = sig};
    if (dr_agent_link_send(s->a, DR_MSG_STEP_CANCEL, &c) != 0)
        dr_agent_log(s->a, "job %llu: step of srun pid %ld left to the job's end: %s",
                     (unsigned long long)s->job, (long)s->pid, "no controller link");
}

static void srun_on_req(dr_agent_srun_t *s, const dr_frame_t *f)
{
    dr_agent_t *a = s->a;
    dr_msg_step_req_t m;
    dr_err_t err = {0};
    if (s->req || s->finished) {
        srun_refuse(s, "one step per connection");
        return;
    }
    if (dr_msg_step_req_parse(&m, f->body, f->len, &err) != DR_OK) {
        srun_refuse(s, err.msg);
        return;
    }
    s->job = m.job;
    s->gen = m.gen;
    /* the peer must run as the job's user, in a job this node runs now */
    const dr_agent_job_t *own = NULL;
    for (size_t i = 0; i < a->njobs && !own; i++)
        if (a->jobs[i]->job == m.job && a->jobs[i]->gen == m.gen && a->jobs[i]->running)
            own = a->jobs[i];
    char why[160];
    if (!own) {
        snprintf(why, sizeof why, "job %llu (run %u) runs nothing on %s", (unsigned long long)m.job,
                 m.gen, a->name);
        srun_refuse(s, why);
    } else if (s->uid != 0 && s->uid != own->uid) {
        snprintf(why, sizeof why, "uid %u is not the user of job %llu", (unsigned)s->uid,
                 (unsigned long long)m.job);
        srun_refuse(s, why);
    } else {
        m.uid = (uint32_t)s->uid;
        m.req = ++a->next_req;
        if (dr_agent_link_send(a, DR_MSG_STEP_REQ, &m) != 0) {
            srun_refuse(s, "the controller is not reachable");
        } else {
            s->req = m.req;
            dr_agent_log(a, "job %llu: srun pid %ld asks for a step: %s%s (request %llu)",
                         (unsigned long long)m.job, (long)s->pid, m.argv[0],
                         m.argc > 1 ? " ..." : "", (unsigned long long)m.req);
        }
    }
    dr_msg_step_req_free(&m);
}

static void srun_on_read(struct bufferevent *bev, void *arg)
{
    dr_agent_srun_t *s = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    for (;;) {
        size_t len = evbuffer_get_length(in), used = 0;
        if (len == 0)
            return;
        uint8_t hdr[DR_PROTO_LOCAL_HDR];
        ev_ssize_t h = evbuffer_copyout(in, hdr, sizeof hdr);
        dr_frame_t f;
        dr_err_t err = {0};
        dr_proto_rc_t rc = dr_proto_local_decode(hdr, h > 0 ? (size_t)h : 0, &used, &f, &err);
        if (rc == DR_PROTO_NEED && h == (ev_ssize_t)sizeof hdr) {
            /* the header is sound: decode the whole frame once it is here */
            size_t need = DR_PROTO_LOCAL_HDR + ((size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 |
                                                (size_t)hdr[2] << 8 | hdr[3]);
            if (len < need)
                return;
            rc =
                dr_proto_local_decode(evbuffer_pullup(in, (ev_ssize_t)need), need, &used, &f, &err);
        }
        if (rc == DR_PROTO_NEED)
            return;
        if (rc != DR_PROTO_FRAME) {
            dr_agent_log(s->a, "srun pid %ld: %s; closing", (long)s->pid, err.msg);
            srun_cancel(s, SIGTERM);
            srun_free(s);
            return;
        }
        if (f.type == DR_MSG_STEP_REQ) {
            srun_on_req(s, &f);
        } else if (f.type == DR_MSG_STEP_CANCEL) {
            dr_msg_step_cancel_t c;
            if (dr_msg_step_cancel_parse(&c, f.body, f.len, &err) == DR_OK) {
                srun_cancel(s, c.signal); /* its own request only, whatever it says */
                dr_msg_step_cancel_free(&c);
            }
        }
        evbuffer_drain(in, used);
    }
}

static void srun_on_event(struct bufferevent *bev, short what, void *arg)
{
    dr_agent_srun_t *s = arg;
    (void)bev;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
        /* srun went away (killed, or its script ended): so does its step */
        srun_cancel(s, SIGTERM);
        srun_free(s);
    }
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int slen,
                      void *arg)
{
    dr_agent_t *a = arg;
    (void)l;
    (void)sa;
    (void)slen;
    struct ucred cred;
    socklen_t cl = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0 || cl != sizeof cred) {
        dr_agent_log(a, "srun socket: no peer credentials (%s); closed", strerror(errno));
        close(fd);
        return;
    }
    dr_agent_srun_t *s = calloc(1, sizeof *s);
    struct bufferevent *bev = s ? bufferevent_socket_new(a->base, fd, BEV_OPT_CLOSE_ON_FREE) : NULL;
    if (!bev) {
        free(s);
        close(fd);
        return;
    }
    *s = (dr_agent_srun_t){.a = a, .bev = bev, .uid = cred.uid, .pid = cred.pid};
    s->next = a->sruns;
    a->sruns = s;
    bufferevent_setcb(bev, srun_on_read, NULL, srun_on_event, s);
    bufferevent_setwatermark(bev, EV_READ, 0, SRUN_IN_MAX);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
}

void dr_agent_steps_on_state(dr_agent_t *a, const dr_msg_step_state_t *m)
{
    for (dr_agent_srun_t *s = a->sruns; s; s = s->next) {
        if (s->req != m->req || s->job != m->job || s->finished)
            continue;
        if (m->state >= DR_STEP_NSTATES)
            return;
        srun_send(s, DR_MSG_STEP_STATE, m);
        s->finished = m->state != DR_STEP_ACCEPTED;
        return;
    }
    dr_agent_debug(a, "job %llu: step answer for request %llu: its srun is gone",
                   (unsigned long long)m->job, (unsigned long long)m->req);
}

void dr_agent_steps_link_down(dr_agent_t *a)
{
    for (dr_agent_srun_t *s = a->sruns; s; s = s->next)
        if (s->req && !s->finished)
            srun_refuse(s, "lost the controller while the step ran (its tasks stop when the job "
                           "ends)");
}

/* bin/srun -> the drover binary (`srun` is one of its names), and
 * bin/drover for `drover ckpt commit` in jobs on nodes without drover on
 * their PATH. */
static void link_srun(dr_agent_t *a, const char *srun)
{
    char self[PATH_MAX], path[PATH_MAX + 16];
    if (!srun) { /* the drover binary beside the agent's own */
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 16);
        if (n <= 0)
            return;
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (!slash)
            return;
        snprintf(slash + 1, sizeof self - (size_t)(slash + 1 - self), "drover");
        srun = self;
    }
    if (access(srun, X_OK) != 0) {
        dr_agent_log(a, "srun: %s: %s; jobs get no srun (--srun PATH names the drover binary)",
                     srun, strerror(errno));
        return;
    }
    snprintf(path, sizeof path, "%s/bin", a->step_dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return;
    a->srun_dir = dr_strdup(path);
    snprintf(path, sizeof path, "%s/bin/srun", a->step_dir);
    unlink(path);
    if (!a->srun_dir || symlink(srun, path) != 0) {
        dr_agent_log(a, "srun: %s: %s; jobs get no srun", path, strerror(errno));
        free(a->srun_dir);
        a->srun_dir = NULL;
        return;
    }
    snprintf(path, sizeof path, "%s/bin/drover", a->step_dir);
    unlink(path);
    if (symlink(srun, path) != 0)
        dr_agent_log(a, "%s: %s; jobs find drover on their PATH only", path, strerror(errno));
}

int dr_agent_steps_start(dr_agent_t *a, const char *dir, const char *srun, dr_err_t *err)
{
    char tmp[] = "/tmp/drover-agent-XXXXXX";
    if (dir) {
        if (mkdir(dir, 0711) != 0 && errno != EEXIST)
            return dr_err_set(err, DR_EIO, "--step-dir %s: %s", dir, strerror(errno));
        a->step_dir = dr_strdup(dir);
    } else if (mkdtemp(tmp)) {
        a->step_dir = dr_strdup(tmp);
        a->step_dir_made = true;
    } else {
        return dr_err_set(err, DR_EIO, "step directory %s: %s", tmp, strerror(errno));
    }
    if (!a->step_dir)
        return dr_err_set(err, DR_ENOMEM, "steps: out of memory");
    /* job users reach the socket and srun in it, and list nothing */
    if (chmod(a->step_dir, 0711) != 0)
        return dr_err_set(err, DR_EIO, "step directory %s: %s", a->step_dir, strerror(errno));
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    if ((size_t)snprintf(sun.sun_path, sizeof sun.sun_path, "%s/step.sock", a->step_dir) >=
        sizeof sun.sun_path)
        return dr_err_set(err, DR_EINVAL, "step directory %s: too long for a socket path",
                          a->step_dir);
    unlink(sun.sun_path);
    a->step_lst = evconnlistener_new_bind(a->base, on_accept, a,
                                          LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 16,
                                          (struct sockaddr *)&sun, (int)sizeof sun);
    if (!a->step_lst)
        return dr_err_set(err, DR_EIO, "srun socket %s: %s", sun.sun_path, strerror(errno));
    if (chmod(sun.sun_path, 0666) != 0)
        return dr_err_set(err, DR_EIO, "srun socket %s: %s", sun.sun_path, strerror(errno));
    a->step_sock = dr_strdup(sun.sun_path);
    if (!a->step_sock)
        return dr_err_set(err, DR_ENOMEM, "steps: out of memory");
    link_srun(a, srun);
    return 0;
}

void dr_agent_steps_free(dr_agent_t *a)
{
    while (a->sruns) {
        dr_agent_srun_t *s = a->sruns;
        a->sruns = s->next;
        if (s->bev)
            bufferevent_free(s->bev);
        free(s);
    }
    if (a->step_lst)
        evconnlistener_free(a->step_lst);
    a->step_lst = NULL;
    if (a->step_sock)
        unlink(a->step_sock);
    if (a->step_dir) {
        char path[PATH_MAX + 16];
        snprintf(path, sizeof path, "%s/bin/srun", a->step_dir);
        unlink(path);
        snprintf(path, sizeof path, "%s/bin/drover", a->step_dir);
        unlink(path);
        snprintf(path, sizeof path, "%s/bin", a->step_dir);
        rmdir(path);
        if (a->step_dir_made)
            rmdir(a->step_dir);
    }
    free(a->step_sock);
    free(a->step_dir);
    free(a->srun_dir);
    a->step_sock = a->step_dir = a->srun_dir = NULL;
}
