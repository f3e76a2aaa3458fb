/*
 * tcp transport: opening the connections at init (design in tcp.c's header comment).
 * Every PE listens on an ephemeral port and publishes a blob (its IPv4 addresses, the
 * port and a random token) in one bootstrap allgather; it connects to every higher PE,
 * whose token it echoes in HELLO, and accepts every lower one; then the listener closes.
 */
#include "transport/tcp_impl.h"

#include "bootstrap/bootstrap.h"
#include "core/env.h"
#include "core/log.h"

#include <gshmem/status.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define TCP_BLOB_MAGIC 0x42504354u /* "TCPB" */
#define TCP_BLOB_VERSION 1
#define TCP_MAX_ADDRS 4

struct tcp_blob {
    uint32_t magic;
    uint16_t version;
    uint16_t length;
    uint16_t port;
    uint16_t naddrs;
    uint32_t addrs[TCP_MAX_ADDRS]; /* IPv4, network order */
    unsigned char token[GSHMEMI_TCP_TOKEN_SIZE];
};

/* ---- Connection set-up --------------------------------------------------------- */

/* Our IPv4 addresses, the GSHMEM_TCP_IFNAME one or every up non-loopback one, loopback last. */
static int tcp_local_addrs(const char *ifname, uint32_t *addrs, int max)
{
    struct ifaddrs *list, *ifa;
    int n = 0;
    if (getifaddrs(&list) != 0) return 0;
    for (int pass = 0; pass < 2; pass++)
        for (ifa = list; ifa && n < max; ifa = ifa->ifa_next) {
            if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET || !(ifa->ifa_flags & IFF_UP)) continue;
            int loop = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
            if (ifname && *ifname ? strcmp(ifa->ifa_name, ifname) != 0 || pass : loop != pass) continue;
            addrs[n++] = ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr;
        }
    freeifaddrs(list);
    return n;
}

static int tcp_check_blob(const struct tcp_blob *b, int me, int pe)
{
    if (b->magic != TCP_BLOB_MAGIC || b->length != sizeof(*b) || b->naddrs > TCP_MAX_ADDRS) {
        GSHMEMI_ERROR(TRANSPORT, "tcp: malformed exchange blob from PE %d (magic 0x%x, length %u, %u addresses)", pe,
                      b->magic, b->length, b->naddrs);
        return GSHMEMX_ERR_PROTOCOL;
    }
    if (b->version != TCP_BLOB_VERSION) {
        GSHMEMI_ERROR(TRANSPORT, "tcp: PE %d speaks exchange version %u, PE %d speaks %u (mixed gshmem versions?)", pe,
                      b->version, me, TCP_BLOB_VERSION);
        return GSHMEMX_ERR_PROTOCOL;
    }
    return 0;
}

static int tcp_set_options(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int flags = fcntl(fd, F_GETFL);
    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* GSHMEM_TCP_SOCKBUF, before connect or listen (the window scale is agreed at the
 * handshake; accepted sockets inherit the listener's sizes). 0: the kernel's. */
static void tcp_set_buffers(int fd, int bytes)
{
    if (fd < 0 || bytes <= 0) return;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

/* Connects to one address before deadline; fd or -errno. */
static int tcp_connect_addr(uint32_t addr, uint16_t port, int sockbuf, double deadline)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -errno;
    tcp_set_buffers(fd, sockbuf);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = addr};
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        return -e;
    }
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int ms = gshmemi_tcp_poll_ms(deadline), err = 0;
    socklen_t len = sizeof(err);
    if (poll(&p, 1, ms < 0 || ms > 5000 ? 5000 : ms) <= 0) err = ETIMEDOUT;
    else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
        close(fd);
        return -err;
    }
    return fd;
}

static void tcp_name(struct tcp_conn *c, int pe, uint32_t addr, uint16_t port)
{
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &addr, ip, sizeof(ip));
    snprintf(c->name, sizeof(c->name), "PE %d at %s:%u", pe, ip, port);
}

/* Frame I/O during set-up, on blocking-style nonblocking sockets. */
static int tcp_setup_send(int fd, struct gshmemi_tcp_frame *f, const void *payload, double deadline)
{
    unsigned char hdr[GSHMEMI_TCP_HEADER_SIZE];
    gshmemi_tcp_frame_encode(f, hdr);
    struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *)payload, f->length}};
    size_t done = 0;
    return gshmemi_tcp_writev(fd, iov, f->length ? 2 : 1, &done, 1, deadline);
}

static int tcp_setup_recv(int fd, void *buf, size_t len, double deadline)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = recv(fd, p, len, 0);
        if (r > 0) {
            p += r;
            len -= (size_t)r;
            continue;
        }
        if (r == 0) return -ECONNRESET;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -errno;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int ms = gshmemi_tcp_poll_ms(deadline);
        if (ms == 0) return -ETIMEDOUT;
        poll(&pf, 1, ms);
    }
    return 0;
}

static int tcp_connect_peer(struct tcp_net *net, const struct gshmemi_bootstrap *bs, const struct tcp_blob *b, int pe,
                            double deadline)
{
    uint32_t tries[TCP_MAX_ADDRS + 1];
    int n = 0;
    if (bs->node_of_rank[pe] == bs->node_of_rank[net->my_pe]) tries[n++] = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < b->naddrs; i++) tries[n++] = b->addrs[i];
    int fd = -ENOENT;
    for (int i = 0; i < n && fd < 0; i++) {
        fd = tcp_connect_addr(tries[i], b->port, net->sockbuf, deadline);
        if (fd >= 0) tcp_name(&net->conns[pe], pe, tries[i], b->port);
    }
    if (fd < 0) {
        char ip[INET_ADDRSTRLEN] = "none";
        if (b->naddrs) inet_ntop(AF_INET, &b->addrs[0], ip, sizeof(ip));
        GSHMEMI_ERROR(TRANSPORT, "tcp: PE %d cannot connect to PE %d (%d addresses, first %s, port %u): %s "
                      "(GSHMEM_TCP_IFNAME picks the interface PEs publish)", net->my_pe, pe, b->naddrs, ip, b->port,
                      strerror(-fd));
        return GSHMEMX_ERR_SYSTEM;
    }
    tcp_set_options(fd);
    net->conns[pe].fd = fd;
    struct gshmemi_tcp_frame f = gshmemi_tcp_frame_make(GSHMEMI_TCP_HELLO, 0);
    f.arg0 = (uint64_t)net->my_pe;
    f.arg1 = (uint64_t)pe;
    f.length = GSHMEMI_TCP_TOKEN_SIZE;
    if (tcp_setup_send(fd, &f, b->token, deadline) != 0) {
        GSHMEMI_ERROR(TRANSPORT, "tcp: PE %d cannot greet %s", net->my_pe, net->conns[pe].name);
        return GSHMEMX_ERR_SYSTEM;
    }
    return 0;
}

/* How long an accepted connection has to send its HELLO: a peer sends it right after
 * connecting; anything else connecting to the port (a scanner, a health check) must not
 * hold up the PEs queued behind it until init's deadline. */
#define TCP_HELLO_S 5.0

/* Accepts one connection and checks its HELLO; 0 when a peer joined, 1 when a stranger
 * was turned away, or a status. */
static int tcp_accept_one(struct tcp_net *net, int lfd, const unsigned char *remote, double deadline)
{
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    int ms = gshmemi_tcp_poll_ms(deadline);
    if (ms == 0 || poll(&p, 1, ms) <= 0) return GSHMEMX_ERR_TIMEOUT;
    struct sockaddr_in sa;
    socklen_t salen = sizeof(sa);
    int fd = accept4(lfd, (struct sockaddr *)&sa, &salen, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return 1;
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
    unsigned char hdr[GSHMEMI_TCP_HEADER_SIZE], token[GSHMEMI_TCP_TOKEN_SIZE];
    struct gshmemi_tcp_frame f;
    char err[160] = "";
    double hello_by = gshmemi_tcp_now() + TCP_HELLO_S;
    if (deadline > 0 && deadline < hello_by) hello_by = deadline;
    int got = tcp_setup_recv(fd, hdr, sizeof(hdr), hello_by);
    int ok = got == 0 && gshmemi_tcp_frame_decode(hdr, 0, &f, err, sizeof(err)) == 0 && f.type == GSHMEMI_TCP_HELLO &&
             (got = tcp_setup_recv(fd, token, sizeof(token), hello_by)) == 0;
    if (!ok && !*err)
        snprintf(err, sizeof(err), got == -ETIMEDOUT ? "no HELLO within %g s" : "closed before its HELLO (%g s allowed)",
                 TCP_HELLO_S);
    int from = ok ? (int)f.arg0 : -1;
    const char *why = !ok ? err
                      : f.arg1 != (uint64_t)net->my_pe || memcmp(token, net->token, sizeof(token)) != 0
                          ? "it does not hold this PE's token (another job?)"
                      : f.arg0 >= (uint64_t)net->my_pe || !remote[from] ? "it claims a PE that does not connect here"
                      : net->conns[from].fd >= 0 ? "its PE is already connected"
                                                 : NULL;
    if (why) {
        GSHMEMI_WARN(TRANSPORT, "tcp: PE %d refused a connection from %s:%u: %s", net->my_pe, ip,
                     ntohs(sa.sin_port), why);
        close(fd);
        return 1;
    }
    tcp_set_options(fd);
    net->conns[from].fd = fd;
    tcp_name(&net->conns[from], from, sa.sin_addr.s_addr, ntohs(sa.sin_port));
    struct gshmemi_tcp_frame w = gshmemi_tcp_frame_make(GSHMEMI_TCP_WELCOME, 0);
    if (tcp_setup_send(fd, &w, NULL, deadline) != 0) return GSHMEMX_ERR_SYSTEM;
    return 0;
}

static int tcp_listen(uint16_t *port, int sockbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    tcp_set_buffers(fd, sockbuf);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof(sa);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

int gshmemi_tcp_connect_all(struct tcp_net *net, struct gshmemi_bootstrap *bs, const struct gshmemi_env *env,
                           const unsigned char *remote)
{
    struct tcp_blob mine = {.magic = TCP_BLOB_MAGIC, .version = TCP_BLOB_VERSION, .length = sizeof(mine)};
    int lfd = tcp_listen(&mine.port, net->sockbuf);
    if (lfd < 0) {
        GSHMEMI_ERROR(TRANSPORT, "tcp: PE %d cannot listen: %s", net->my_pe, strerror(errno));
        return GSHMEMX_ERR_SYSTEM;
    }
    mine.naddrs = (uint16_t)tcp_local_addrs(env->tcp_ifname, mine.addrs, TCP_MAX_ADDRS);
    if (env->tcp_ifname && *env->tcp_ifname && mine.naddrs == 0) {
        GSHMEMI_ERROR(TRANSPORT, "tcp: GSHMEM_TCP_IFNAME=%s: PE %d has no up interface of that name with an IPv4 "
                      "address", env->tcp_ifname, net->my_pe);
        close(lfd);
        return GSHMEMX_ERR_CONFIG;
    }
    memcpy(mine.token, net->token, sizeof(mine.token));
    struct tcp_blob *blobs = calloc((size_t)net->n_pes, sizeof(*blobs));
    int rc = blobs ? bs->ops->allgather(bs, &mine, blobs, sizeof(mine)) : GSHMEMX_ERR_NOMEM;
    for (int pe = 0; pe < net->n_pes && rc == 0; pe++)
        if (remote[pe]) rc = tcp_check_blob(&blobs[pe], net->my_pe, pe);
    double deadline = gshmemi_tcp_deadline(net);
    int lower = 0;
    for (int pe = 0; pe < net->n_pes && rc == 0; pe++) {
        if (!remote[pe]) continue;
        if (pe < net->my_pe) lower++;
        else rc = tcp_connect_peer(net, bs, &blobs[pe], pe, deadline);
    }
    for (int joined = 0; rc == 0 && joined < lower;) {
        int r = tcp_accept_one(net, lfd, remote, deadline);
        if (r == 0) joined++;
        else if (r != 1) {
            char list[256] = "";
            size_t len = 0;
            for (int pe = 0; pe < net->my_pe && len < sizeof(list) - 16; pe++)
                if (remote[pe] && net->conns[pe].fd < 0) len += (size_t)snprintf(list + len, sizeof(list) - len, " %d", pe);
            GSHMEMI_ERROR(TRANSPORT, "tcp: PE %d: PEs%s never connected (GSHMEM_TIMEOUT=%g)", net->my_pe, list,
                          net->timeout);
            rc = r;
        }
    }
    for (int pe = net->my_pe + 1; pe < net->n_pes && rc == 0; pe++) {
        if (!remote[pe]) continue;
        unsigned char hdr[GSHMEMI_TCP_HEADER_SIZE];
        struct gshmemi_tcp_frame f;
        char err[160] = "no answer";
        if (tcp_setup_recv(net->conns[pe].fd, hdr, sizeof(hdr), deadline) != 0 ||
            gshmemi_tcp_frame_decode(hdr, 0, &f, err, sizeof(err)) != 0 || f.type != GSHMEMI_TCP_WELCOME) {
            GSHMEMI_ERROR(TRANSPORT, "tcp: %s did not welcome PE %d: %s", net->conns[pe].name, net->my_pe, err);
            rc = GSHMEMX_ERR_PROTOCOL;
        }
    }
    close(lfd);
    free(blobs);
    return rc;
}
