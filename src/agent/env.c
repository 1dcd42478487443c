/* env.c - the environment a job rank starts with.
 *
 * Nothing of the agent's own environment leaks into a job: the base is a
 * fixed PATH and the job user's identity; the controller's LAUNCH entries
 * (the user's exported variables) go on top; last come the variables the
 * agent owns (GPU visibility, DROVER_*), so that a job cannot widen its GPU
 * set by exporting CUDA_VISIBLE_DEVICES itself. */
#include "agent/agent.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#define ENV_BASE_PATH "/usr/local/bin:/usr/bin:/bin"

static size_t env_keylen(const char *entry)
{
    const char *eq = strchr(entry, '=');
    return eq ? (size_t)(eq - entry) : strlen(entry);
}

static int env_put(dr_strvec_t *env, char *entry)
{
    size_t kl = env_keylen(entry);
    for (size_t i = 0; i < env->n; i++) {
        if (env_keylen(env->v[i]) == kl && strncmp(env->v[i], entry, kl) == 0) {
            free(env->v[i]);
            env->v[i] = entry;
            return 0;
        }
    }
    if (dr_strvec_push_owned(env, entry) != 0) {
        free(entry);
        return DR_ENOMEM;
    }
    return 0;
}

int dr_agent_env_set(dr_strvec_t *env, const char *key, const char *value)
{
    size_t n = strlen(key) + strlen(value) + 2;
    char *e = malloc(n);
    if (!e)
        return DR_ENOMEM;
    snprintf(e, n, "%s=%s", key, value);
    return env_put(env, e);
}

void dr_agent_env_unset(dr_strvec_t *env, const char *key)
{
    size_t kl = strlen(key), k = 0;
    for (size_t i = 0; i < env->n; i++) {
        if (env_keylen(env->v[i]) == kl && strncmp(env->v[i], key, kl) == 0)
            free(env->v[i]);
        else
            env->v[k++] = env->v[i];
    }
    env->n = k;
}

const char *dr_agent_env_get(const dr_strvec_t *env, const char *key)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i < env->n; i++)
        if (env_keylen(env->v[i]) == kl && strncmp(env->v[i], key, kl) == 0 && env->v[i][kl])
            return env->v[i] + kl + 1;
    return NULL;
}

/* "0,1,3" from the launch's GPU indices ("" for none). */
static char *env_gpu_list(const dr_msg_launch_t *l)
{
    size_t cap = (size_t)l->ngpus * 11 + 1;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t len = 0;
    s[0] = '\0';
    for (uint32_t i = 0; i < l->ngpus; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s%u", i ? "," : "", l->gpus[i]);
    return s;
}

int dr_agent_env_build(const dr_msg_launch_t *l, const char *node, const char *addr,
                       const char *ifname, const dr_agent_user_t *u, dr_strvec_t *env,
                       dr_err_t *err)
{
    int rc = 0;
    char num[32];
    rc |= dr_agent_env_set(env, "PATH", ENV_BASE_PATH);
    if (u && u->home)
        rc |= dr_agent_env_set(env, "HOME", u->home);
    if (u && u->name) {
        rc |= dr_agent_env_set(env, "USER", u->name);
        rc |= dr_agent_env_set(env, "LOGNAME", u->name);
    }
    if (u && u->shell)
        rc |= dr_agent_env_set(env, "SHELL", u->shell);
    if (rc)
        goto nomem;
    for (uint32_t i = 0; i < l->nenv; i++) {
        const char *e = l->env[i];
        const char *eq = strchr(e, '=');
        if (!eq || eq == e) {
            dr_strvec_free(env);
            return dr_err_set(err, DR_EINVAL, "env[%u]: '%.64s' is not KEY=VALUE", i, e);
        }
        char *copy = dr_strdup(e);
        if (!copy || env_put(env, copy) != 0)
            goto nomem;
    }
    char *gpus = env_gpu_list(l);
    if (!gpus)
        goto nomem;
    static const char *const gpu_vars[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                           "HIP_VISIBLE_DEVICES", "DROVER_GPUS"};
    for (size_t i = 0; i < sizeof gpu_vars / sizeof gpu_vars[0]; i++)
        rc |= dr_agent_env_set(env, gpu_vars[i], gpus);
    free(gpus);
    rc |= dr_agent_env_set(env, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    /* the controller says which node of the gang this is; older ones did
     * not, and then the rank is the node's */
    snprintf(num, sizeof num, "%u", l->rank);
    if (!dr_agent_env_get(env, "DROVER_NODE_RANK"))
        rc |= dr_agent_env_set(env, "DROVER_NODE_RANK", num);
    snprintf(num, sizeof num, "%u", l->nranks);
    if (!dr_agent_env_get(env, "DROVER_NNODES"))
        rc |= dr_agent_env_set(env, "DROVER_NNODES", num);
    rc |= dr_agent_env_set(env, "DROVER_NODENAME", node);
    if (addr && *addr)
        rc |= dr_agent_env_set(env, "DROVER_NODE_ADDR", addr);
    /* gloo binds to the address of the host's name, which on a host with
     * several networks (or namespaces) may not be the one the gang uses:
     * point it at the interface the controller is reached through, unless
     * the job chose one */
    if (ifname && *ifname && !dr_agent_env_get(env, "GLOO_SOCKET_IFNAME"))
        rc |= dr_agent_env_set(env, "GLOO_SOCKET_IFNAME", ifname);
    if (rc)
        goto nomem;
    return 0;
nomem:
    dr_strvec_free(env);
    return dr_err_set(err, DR_ENOMEM, "env: out of memory");
}

/* Remember the local address and interface of the link's socket. */
void dr_agent_note_local_addr(dr_agent_t *a, int fd)
{
    struct sockaddr_storage ss = {0};
    socklen_t sl = sizeof ss;
    a->local_addr[0] = a->local_ifname[0] = '\0';
    if (fd < 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 || ss.ss_family != AF_INET)
        return;
    const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
    inet_ntop(AF_INET, &in->sin_addr, a->local_addr, sizeof a->local_addr);
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0)
        return;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
            ((const struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == in->sin_addr.s_addr) {
            snprintf(a->local_ifname, sizeof a->local_ifname, "%s", i->ifa_name);
            break;
        }
    freeifaddrs(ifs);
}
