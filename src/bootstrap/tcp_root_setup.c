/* The TCP bootstrap rendezvous: listening socket, allocation and teardown. */
#include "bootstrap/tcp_root_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "gshmem/status.h"

int gshmemi_tcp_root_port(const struct gshmemi_tcp_root *root)
{
    return root->port;
}

const char *gshmemi_tcp_root_address(const struct gshmemi_tcp_root *root)
{
    return root->address;
}

static int root_listen_named(struct gshmemi_tcp_root *root, const char *host);

static int root_bind_one(const struct addrinfo *ai, int backlog)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0) return fd;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* Every interface: IPv6 and IPv4 on one socket where the host has IPv6, else IPv4 only
 * (a root on 0.0.0.0 alone refused every PE of an IPv6-only cluster). */
static int root_listen_any(int port, int backlog)
{
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port), .sin6_addr = in6addr_any};
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int));
        /* without IPv4 on it (bindv6only hosts refuse to clear the option) it is no use */
        if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &(int){0}, sizeof(int)) == 0 &&
            bind(fd, (struct sockaddr *)&a6, sizeof(a6)) == 0 && listen(fd, backlog) == 0)
            return fd;
        int e = errno;
        close(fd);
        if (e == EADDRINUSE) { /* the port is taken, not IPv6 missing */
            errno = e;
            return -1;
        }
    }
    struct addrinfo a4 = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = INADDR_ANY};
    a4.ai_addr = (struct sockaddr *)&sin;
    a4.ai_addrlen = sizeof(sin);
    return root_bind_one(&a4, backlog);
}

static int root_is_wildcard(const char *host)
{
    return host == NULL || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0 || strcmp(host, "*") == 0;
}

static int root_listen(struct gshmemi_tcp_root *root, const char *host, int port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res;
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    if (root_is_wildcard(host)) {
        root->listen_fd = root_listen_any(port, root->nranks + ROOT_PENDING_MAX);
        if (root->listen_fd < 0) {
            GSHMEMI_ERROR(BOOT, "bootstrap root: cannot listen on every interface, port %d: %s", port,
                          strerror(errno));
            return GSHMEMX_ERR_SYSTEM;
        }
        return root_listen_named(root, host);
    }
    int gai = getaddrinfo(host, portstr, &hints, &res);
    if (gai != 0) {
        GSHMEMI_ERROR(BOOT, "bootstrap root: cannot resolve bind address '%s': %s", host ? host : "*",
                      gai_strerror(gai));
        return GSHMEMX_ERR_SYSTEM;
    }
    int backlog = root->nranks + ROOT_PENDING_MAX, e = 0;
    for (struct addrinfo *ai = res; ai != NULL && root->listen_fd < 0; ai = ai->ai_next) {
        root->listen_fd = root_bind_one(ai, backlog);
        if (root->listen_fd < 0) e = errno;
    }
    freeaddrinfo(res);
    if (root->listen_fd < 0) {
        GSHMEMI_ERROR(BOOT, "bootstrap root: cannot listen on %s port %d: %s", host ? host : "*", port, strerror(e));
        return GSHMEMX_ERR_SYSTEM;
    }
    return root_listen_named(root, host);
}

/* The listening port, and the address the root reports ("name:port"). */
static int root_listen_named(struct gshmemi_tcp_root *root, const char *host)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(root->listen_fd, (struct sockaddr *)&ss, &sl) != 0) return GSHMEMX_ERR_SYSTEM;
    root->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                : ((struct sockaddr_in *)&ss)->sin_port);
    char name[GSHMEMI_WIRE_NAME_MAX] = "localhost";
    if (host == NULL) gethostname(name, sizeof(name) - 1);
    else snprintf(name, sizeof(name), "%s", host);
    const char *fmt = strchr(name, ':') ? "[%s]:%d" : "%s:%d";
    snprintf(root->address, sizeof(root->address), fmt, name, root->port);
    return 0;
}

static int root_alloc(struct gshmemi_tcp_root *root, int nranks)
{
    root->nranks = nranks;
    root->nslots = 2 * nranks + ROOT_PENDING_MAX; /* joined, plus nranks + ROOT_PENDING_MAX pending */
    root->listen_fd = root->stop_pipe[0] = root->stop_pipe[1] = -1;
    root->conns = calloc((size_t)root->nslots, sizeof(*root->conns));
    root->slot_of_rank = calloc((size_t)nranks, sizeof(int));
    root->rank_seen = calloc((size_t)nranks, 1);
    root->rank_left = calloc((size_t)nranks, 1);
    root->contrib = calloc((size_t)nranks, sizeof(*root->contrib));
    root->rank_gone = calloc((size_t)nranks, 1);
    root->gone_queue = calloc((size_t)nranks * 2, sizeof(int));
    if (!root->conns || !root->slot_of_rank || !root->rank_seen || !root->rank_left || !root->contrib ||
        !root->rank_gone || !root->gone_queue)
        return GSHMEMX_ERR_NOMEM;
    for (int i = 0; i < root->nslots; i++) root_conn_reset(&root->conns[i]);
    for (int r = 0; r < nranks; r++) root->slot_of_rank[r] = -1;
    root->round_first = -1;
    root->seq = 1;
    if (pipe2(root->stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        GSHMEMI_ERROR(BOOT, "bootstrap root: pipe failed: %s", strerror(errno));
        return GSHMEMX_ERR_SYSTEM;
    }
    return 0;
}

/* Takes over an already listening socket. */
static int root_adopt(struct gshmemi_tcp_root *root, const char *host, int fd)
{
    root->listen_fd = fd;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0 || root_listen_named(root, host) != 0) {
        GSHMEMI_ERROR(BOOT, "bootstrap root: unusable listening socket: %s", strerror(errno));
        return GSHMEMX_ERR_SYSTEM;
    }
    return 0;
}

static int root_create(const struct gshmemi_tcp_root_config *cfg, int listen_fd, struct gshmemi_tcp_root **out)
{
    *out = NULL;
    if (cfg->nranks < 1 || cfg->port < 0 || cfg->port > 65535 || cfg->secret_len > GSHMEMI_WIRE_SECRET_MAX ||
        (cfg->secret_len > 0 && cfg->secret == NULL)) {
        GSHMEMI_ERROR(BOOT, "bootstrap root: invalid configuration (nranks %d, port %d, secret of %zu bytes)",
                      cfg->nranks, cfg->port, cfg->secret_len);
        if (listen_fd >= 0) close(listen_fd);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    struct gshmemi_tcp_root *root = calloc(1, sizeof(*root));
    if (root == NULL) {
        if (listen_fd >= 0) close(listen_fd);
        return GSHMEMX_ERR_NOMEM;
    }
    atomic_init(&root->stopping, 0);
    pthread_mutex_init(&root->gone_lock, NULL);
    root->timeout = cfg->timeout;
    snprintf(root->job_id, sizeof(root->job_id), "%s", cfg->job_id ? cfg->job_id : "");
    int rc = root_alloc(root, cfg->nranks);
    if (rc == 0 && cfg->secret_len > 0) {
        root->secret = malloc(cfg->secret_len);
        if (root->secret == NULL) rc = GSHMEMX_ERR_NOMEM;
        else memcpy(root->secret, cfg->secret, cfg->secret_len);
        root->secret_len = cfg->secret_len;
    }
    const char *host = (cfg->bind_host && cfg->bind_host[0]) ? cfg->bind_host : NULL;
    if (listen_fd >= 0 && rc != 0) close(listen_fd);
    else if (listen_fd >= 0) rc = root_adopt(root, host, listen_fd);
    else if (rc == 0) rc = root_listen(root, host, cfg->port);
    if (rc != 0) {
        gshmemi_tcp_root_destroy(root);
        return rc;
    }
    GSHMEMI_INFO(BOOT, "bootstrap root: listening on %s for %d PEs%s", root->address, root->nranks,
                 root->secret ? ", job secret required" : "");
    *out = root;
    return 0;
}

int gshmemi_tcp_root_create(const struct gshmemi_tcp_root_config *cfg, struct gshmemi_tcp_root **out)
{
    return root_create(cfg, -1, out);
}

int gshmemi_tcp_root_create_on(const struct gshmemi_tcp_root_config *cfg, int listen_fd,
                               struct gshmemi_tcp_root **out)
{
    if (listen_fd < 0) {
        *out = NULL;
        return GSHMEMX_ERR_INVALID_ARG;
    }
    return root_create(cfg, listen_fd, out);
}

void gshmemi_tcp_root_destroy(struct gshmemi_tcp_root *root)
{
    if (root == NULL) return;
    for (int i = 0; root->conns && i < root->nslots; i++) {
        if (root->conns[i].fd >= 0) close(root->conns[i].fd);
        root_conn_reset(&root->conns[i]); /* its payload, and a challenge still unanswered */
    }
    for (int r = 0; root->contrib && r < root->nranks; r++) free(root->contrib[r]);
    if (root->listen_fd >= 0) close(root->listen_fd);
    if (root->stop_pipe[0] >= 0) close(root->stop_pipe[0]);
    if (root->stop_pipe[1] >= 0) close(root->stop_pipe[1]);
    free(root->conns);
    free(root->slot_of_rank);
    free(root->rank_seen);
    free(root->rank_left);
    free(root->contrib);
    free(root->rank_gone);
    free(root->gone_queue);
    if (root->secret != NULL) memset(root->secret, 0, root->secret_len);
    free(root->secret);
    pthread_mutex_destroy(&root->gone_lock);
    free(root);
}
