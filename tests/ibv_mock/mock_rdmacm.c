/*
 * A mock librdmacm (SONAME librdmacm.so.1) over the mock libibverbs: the connection
 * manager calls a transport makes when it manages its own queue pairs ("QP-less":
 * rdma_connect/rdma_accept name the QP number, rdma_init_qp_attr gives the RTR and RTS
 * attributes, rdma_establish completes the active side), between processes of one
 * host. README.md says what it emulates and checks.
 *
 * Addresses: mockib<N> (RoCE) is 198.18.0.<N+1>, the IPv4 address in its GID table.
 * Each event channel is an abstract unix datagram socket; the CM's messages (request,
 * reply, ready-to-use, reject, disconnect) and local events (address and route
 * resolved) are datagrams to it, turned into events by rdma_get_cm_event. A listener
 * is a file cm-<ip>-<port> in the registry directory naming its channel.
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MCM_EXPORT __attribute__((visibility("default")))
#define MCM_MAGIC 0x4d434d4bu
#define MCM_REQ_PDATA 56  /* private data of a connect request (InfiniBand CM REQ, less the rdma_cm header) */
#define MCM_REP_PDATA 196 /* of an accept or reject */
#define MCM_GID_INDEX 3 /* the RoCE v2 IPv4 entry of a mock device */

enum mcm_msg_type { MCM_LOCAL, MCM_REQ, MCM_REP, MCM_RTU, MCM_REJ, MCM_DISC };

struct mcm_msg {
    uint32_t magic, type;
    uint64_t to, from; /* id tokens: the receiver's and the sender's */
    char from_name[64]; /* the sender's channel */
    int event, status;  /* MCM_LOCAL: the event to report */
    uint32_t qpn, psn;
    uint8_t gid[16];
    uint8_t ip[4];
    uint16_t port;
    uint8_t resp_res, init_depth, retry, rnr;
    uint8_t pdata_len;
    uint8_t pdata[MCM_REP_PDATA];
};

enum mcm_state { S_IDLE, S_BOUND, S_LISTEN, S_ADDR, S_ROUTE, S_CALLING, S_REQ_RCVD, S_ACCEPTED, S_REP_RCVD, S_DONE };

struct mcm_channel;

struct mcm_id {
    struct rdma_cm_id id; /* first: callers hold &id */
    struct mcm_channel *ch;
    struct mcm_id *next;
    int state;
    int dev;
    uint8_t ip[4];
    uint16_t port;
    uint8_t dip[4]; /* the active side: the address called */
    uint16_t dport;
    char file[3200]; /* the listener file, "" */
    uint8_t tos;
    /* this side's half of the connection */
    uint32_t qpn, psn;
    uint8_t resp_res, init_depth, retry, rnr;
    int has_psn;
    int unacked; /* events handed out and not acked: rdma_destroy_id would block on them */
    int refused_once; /* a listener under GSHMEM_MOCK_CM_FAULT=reject_once */
    /* the other side's */
    int has_remote;
    uint32_t rqpn, rpsn;
    uint8_t rgid[16];
    char rname[64];
    uint64_t rtoken;
};

struct mcm_channel {
    struct rdma_event_channel ch; /* first */
    char name[64];
    pthread_mutex_t lock;
    struct mcm_id *ids;
    int send_fd;     /* sends go through a blocking socket of their own (the channel's may be non-blocking) */
    char fault[64];  /* GSHMEM_MOCK_CM_FAULT: a comma-separated list */
    int routes_made; /* route_once */
};

static int mcm_fault(const struct mcm_channel *c, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = c->fault; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

struct mcm_event {
    struct rdma_cm_event ev; /* first */
    uint8_t pdata[MCM_REP_PDATA];
    struct mcm_id *counted[2]; /* whose unacked counts it is in */
};

static pthread_mutex_t mcm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_context *mcm_ctx[8];
static unsigned mcm_seq;

static int mcm_fail(int err)
{
    errno = err;
    return -1;
}

static void mcm_dir(char *out, size_t len)
{
    const char *d = getenv("GSHMEM_MOCK_IB_DIR");
    if (d && *d)
        snprintf(out, len, "%s", d);
    else
        snprintf(out, len, "/dev/shm/gshmem-mockib-%u", (unsigned)getuid());
    mkdir(out, 0700);
}

/* The mock device with IPv4 address ip (RoCE only), or -1. */
static int mcm_dev_of(const uint8_t ip[4])
{
    const char *link = getenv("GSHMEM_MOCK_IB_LINK");
    if (link && strcmp(link, "ib") == 0)
        return -1;
    const char *n = getenv("GSHMEM_MOCK_IB_DEVICES");
    int ndev = n && *n ? atoi(n) : 1;
    if (ip[0] != 198 || ip[1] != 18 || ip[2] != 0 || ip[3] < 1 || ip[3] > ndev || ip[3] > 8)
        return -1;
    return ip[3] - 1;
}

/* A context of device dev, opened once per process (librdmacm keeps its own too). */
static struct ibv_context *mcm_context(int dev)
{
    pthread_mutex_lock(&mcm_lock);
    if (!mcm_ctx[dev]) {
        int n = 0;
        struct ibv_device **list = ibv_get_device_list(&n);
        if (list && dev < n)
            mcm_ctx[dev] = ibv_open_device(list[dev]);
        if (list)
            ibv_free_device_list(list);
    }
    pthread_mutex_unlock(&mcm_lock);
    return mcm_ctx[dev];
}

static int mcm_sockaddr(const struct sockaddr *sa, uint8_t ip[4], uint16_t *port)
{
    if (!sa || sa->sa_family != AF_INET)
        return mcm_fail(EAFNOSUPPORT);
    const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
    memcpy(ip, &in->sin_addr, 4);
    *port = ntohs(in->sin_port);
    return 0;
}

static void mcm_set_addr(struct sockaddr *out, const uint8_t ip[4], uint16_t port)
{
    struct sockaddr_in in;
    memset(&in, 0, sizeof(in));
    in.sin_family = AF_INET;
    memcpy(&in.sin_addr, ip, 4);
    in.sin_port = htons(port);
    memcpy(out, &in, sizeof(in));
}

static socklen_t mcm_abstract(const char *name, struct sockaddr_un *a)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    size_t len = strlen(name);
    memcpy(a->sun_path + 1, name, len);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
}

static int mcm_send(struct mcm_channel *from, const char *to, struct mcm_msg *m)
{
    struct sockaddr_un a;
    socklen_t alen = mcm_abstract(to, &a);
    m->magic = MCM_MAGIC;
    snprintf(m->from_name, sizeof(m->from_name), "%s", from->name);
    return sendto(from->send_fd, m, sizeof(*m), 0, (struct sockaddr *)&a, alen) == (ssize_t)sizeof(*m) ? 0 : -1;
}

/* An event for id, delivered through its own channel. */
static void mcm_local(struct mcm_id *id, enum rdma_cm_event_type ev, int status)
{
    struct mcm_msg m;
    memset(&m, 0, sizeof(m));
    m.type = MCM_LOCAL, m.to = (uint64_t)(uintptr_t)id, m.event = ev, m.status = status;
    if (mcm_send(id->ch, id->ch->name, &m) != 0)
        fprintf(stderr, "mock rdmacm: cannot queue an event: %s\n", strerror(errno));
}

static uint32_t mcm_psn(void)
{
    uint32_t v = 0;
    if (getrandom(&v, sizeof(v), 0) != sizeof(v))
        v = (uint32_t)getpid() * 2654435761u;
    return v & 0xffffff;
}

static void mcm_own_gid(struct mcm_id *id, uint8_t gid[16])
{
    union ibv_gid g;
    memset(&g, 0, sizeof(g));
    if (id->id.verbs)
        ibv_query_gid(id->id.verbs, 1, MCM_GID_INDEX, &g);
    memcpy(gid, g.raw, 16);
}

/* ---- Channels and ids ---------------------------------------------------------- */

MCM_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
    struct mcm_channel *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_lock(&mcm_lock);
    snprintf(c->name, sizeof(c->name), "gshmem-mockcm-%d-%u", (int)getpid(), mcm_seq++);
    pthread_mutex_unlock(&mcm_lock);
    const char *f = getenv("GSHMEM_MOCK_CM_FAULT");
    snprintf(c->fault, sizeof(c->fault), "%s", f ? f : "");
    struct sockaddr_un a;
    socklen_t alen = mcm_abstract(c->name, &a);
    c->ch.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    c->send_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    /* a full receiver (net.unix.max_dgram_qlen) makes a send wait, not fail; never forever */
    struct timeval tv = {10, 0};
    if (c->ch.fd < 0 || c->send_fd < 0 || bind(c->ch.fd, (struct sockaddr *)&a, alen) != 0 ||
        setsockopt(c->send_fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
        int err = errno;
        if (c->ch.fd >= 0)
            close(c->ch.fd);
        if (c->send_fd >= 0)
            close(c->send_fd);
        free(c);
        errno = err;
        return NULL;
    }
    return &c->ch;
}

MCM_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
    struct mcm_channel *c = (struct mcm_channel *)channel;
    if (c->ids) { /* librdmacm leaves them dangling: a caller's bug */
        fprintf(stderr, "mock rdmacm: event channel destroyed with ids still on it\n");
        abort();
    }
    close(c->ch.fd);
    close(c->send_fd);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

MCM_EXPORT int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
                              enum rdma_port_space ps)
{
    if (!channel || !id || ps != RDMA_PS_TCP)
        return mcm_fail(EINVAL); /* the synchronous mode and other port spaces are not emulated */
    struct mcm_channel *c = (struct mcm_channel *)channel;
    struct mcm_id *m = calloc(1, sizeof(*m));
    if (!m)
        return mcm_fail(ENOMEM);
    m->id.channel = channel;
    m->id.context = context;
    m->id.ps = ps;
    m->id.qp_type = IBV_QPT_RC;
    m->ch = c;
    m->dev = -1;
    pthread_mutex_lock(&c->lock);
    m->next = c->ids;
    c->ids = m;
    pthread_mutex_unlock(&c->lock);
    *id = &m->id;
    return 0;
}

static struct mcm_id *mcm_find(struct mcm_channel *c, uint64_t token)
{
    for (struct mcm_id *m = c->ids; m; m = m->next)
        if ((uint64_t)(uintptr_t)m == token)
            return m;
    return NULL;
}

static void mcm_tell_peer(struct mcm_id *m, enum mcm_msg_type type, int status)
{
    struct mcm_msg msg;
    memset(&msg, 0, sizeof(msg));
    msg.type = type, msg.to = m->rtoken, msg.from = (uint64_t)(uintptr_t)m, msg.status = status;
    mcm_send(m->ch, m->rname, &msg); /* a peer that is gone hears nothing */
}

MCM_EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
    struct mcm_id *m = (struct mcm_id *)id;
    struct mcm_channel *c = m->ch;
    if (m->unacked) { /* librdmacm would wait for the acks forever */
        fprintf(stderr, "mock rdmacm: rdma_destroy_id with %d event(s) not acked: it would block for good\n",
                m->unacked);
        abort();
    }
    if (m->has_remote && (m->state == S_ACCEPTED || m->state == S_REP_RCVD || m->state == S_DONE))
        mcm_tell_peer(m, MCM_DISC, 0);
    if (m->file[0])
        unlink(m->file);
    pthread_mutex_lock(&c->lock);
    for (struct mcm_id **p = &c->ids; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    pthread_mutex_unlock(&c->lock);
    free(m);
    return 0;
}

/* Binds to ip (a mock device's address); port 0 picks one. A listener file reserves it. */
static int mcm_bind(struct mcm_id *m, const uint8_t ip[4], uint16_t port, int reserve)
{
    int dev = mcm_dev_of(ip);
    if (dev < 0)
        return mcm_fail(EADDRNOTAVAIL);
    struct ibv_context *ctx = mcm_context(dev);
    if (!ctx)
        return mcm_fail(ENODEV);
    m->dev = dev;
    memcpy(m->ip, ip, 4);
    m->id.verbs = ctx;
    m->id.port_num = 1;
    if (reserve) {
        char dir[3072];
        mcm_dir(dir, sizeof(dir));
        unsigned first = port ? port : 20000 + (unsigned)getpid() % 20000, tries = port ? 1 : 40000;
        for (unsigned t = 0; t < tries; t++) {
            unsigned p = port ? port : 20000 + (first - 20000 + t) % 40000;
            snprintf(m->file, sizeof(m->file), "%s/cm-%u.%u.%u.%u-%u", dir, ip[0], ip[1], ip[2], ip[3], p);
            int fd = open(m->file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (fd < 0)
                continue;
            dprintf(fd, "%s %llu\n", m->ch->name, (unsigned long long)(uintptr_t)m);
            close(fd);
            m->port = (uint16_t)p;
            break;
        }
        if (!m->port) {
            m->file[0] = '\0';
            return mcm_fail(EADDRINUSE);
        }
    }
    mcm_set_addr(&m->id.route.addr.src_addr, ip, m->port);
    m->state = S_BOUND;
    return 0;
}

MCM_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
    struct mcm_id *m = (struct mcm_id *)id;
    uint8_t ip[4];
    uint16_t port;
    if (m->state != S_IDLE)
        return mcm_fail(EINVAL);
    if (mcm_sockaddr(addr, ip, &port) != 0)
        return -1;
    return mcm_bind(m, ip, port, 1);
}

MCM_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
    struct mcm_id *m = (struct mcm_id *)id;
    if (m->state != S_BOUND || !m->file[0] || backlog < 0)
        return mcm_fail(EINVAL);
    m->state = S_LISTEN;
    return 0;
}

MCM_EXPORT uint16_t rdma_get_src_port(struct rdma_cm_id *id)
{
    return htons(((struct mcm_id *)id)->port);
}

MCM_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
    if (level != RDMA_OPTION_ID || optname != RDMA_OPTION_ID_TOS || optlen != sizeof(uint8_t) || !optval)
        return mcm_fail(ENOSYS);
    ((struct mcm_id *)id)->tos = *(uint8_t *)optval;
    return 0;
}

/* ---- The active side -------------------------------------------------------------- */

MCM_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
                                 int timeout_ms)
{
    struct mcm_id *m = (struct mcm_id *)id;
    uint8_t dip[4], sip[4];
    uint16_t dport, sport;
    if ((m->state != S_IDLE && m->state != S_BOUND) || timeout_ms <= 0)
        return mcm_fail(EINVAL);
    if (mcm_sockaddr(dst_addr, dip, &dport) != 0)
        return -1;
    if (src_addr && m->state == S_IDLE) {
        if (mcm_sockaddr(src_addr, sip, &sport) != 0 || mcm_bind(m, sip, 0, 0) != 0)
            return -1;
    }
    mcm_set_addr(&m->id.route.addr.dst_addr, dip, dport);
    memcpy(m->dip, dip, 4);
    m->dport = dport;
    int ddev = mcm_dev_of(dip);
    if (ddev >= 0 && m->state == S_IDLE && mcm_bind(m, dip, 0, 0) != 0)
        return -1;
    m->state = S_ADDR;
    mcm_local(m, ddev < 0 ? RDMA_CM_EVENT_ADDR_ERROR : RDMA_CM_EVENT_ADDR_RESOLVED, ddev < 0 ? -EHOSTUNREACH : 0);
    return 0;
}

MCM_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
    struct mcm_id *m = (struct mcm_id *)id;
    if (m->state != S_ADDR || !m->id.verbs || timeout_ms <= 0)
        return mcm_fail(EINVAL);
    m->state = S_ROUTE;
    /* route: no route, every time; route_once: the first resolution times out */
    int status = mcm_fault(m->ch, "route") ? -EHOSTUNREACH
                 : mcm_fault(m->ch, "route_once") && m->ch->routes_made++ == 0 ? -ETIMEDOUT
                                                                                : 0;
    mcm_local(m, status ? RDMA_CM_EVENT_ROUTE_ERROR : RDMA_CM_EVENT_ROUTE_RESOLVED, status);
    return 0;
}

/* The listener file of ip:port: its channel and token. */
static int mcm_listener(const uint8_t ip[4], uint16_t port, char *name, size_t namelen, uint64_t *token)
{
    char dir[3072], path[3200], line[160];
    mcm_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/cm-%u.%u.%u.%u-%u", dir, ip[0], ip[1], ip[2], ip[3], port);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    unsigned long long t = 0;
    char n[64] = "";
    int ok = fgets(line, sizeof(line), f) && sscanf(line, "%63s %llu", n, &t) == 2;
    fclose(f);
    if (!ok)
        return -1;
    snprintf(name, namelen, "%s", n);
    *token = t;
    return 0;
}

static int mcm_check_param(const struct rdma_cm_id *id, const struct rdma_conn_param *p, int max_pdata)
{
    struct ibv_device_attr da;
    if (!p || !id->verbs || ibv_query_device(id->verbs, &da) != 0)
        return mcm_fail(EINVAL);
    /* the depths: at most what the local device allows */
    if ((id->qp == NULL && (p->qp_num == 0 || p->qp_num > 0xffffff)) || p->private_data_len > max_pdata ||
        (p->private_data_len && !p->private_data) || p->responder_resources > da.max_qp_rd_atom ||
        p->initiator_depth > da.max_qp_init_rd_atom || p->retry_count > 7 || p->rnr_retry_count > 7)
        return mcm_fail(EINVAL);
    return 0;
}

static void mcm_fill(struct mcm_id *m, const struct rdma_conn_param *p, struct mcm_msg *msg)
{
    m->qpn = p->qp_num;
    m->psn = mcm_psn(); /* fixed now: RTS attributes exist only from here on */
    m->has_psn = 1;
    m->resp_res = p->responder_resources;
    m->init_depth = p->initiator_depth;
    msg->from = (uint64_t)(uintptr_t)m;
    msg->qpn = m->qpn, msg->psn = m->psn;
    mcm_own_gid(m, msg->gid);
    memcpy(msg->ip, m->ip, 4);
    msg->resp_res = p->responder_resources, msg->init_depth = p->initiator_depth;
    msg->retry = p->retry_count, msg->rnr = p->rnr_retry_count;
    msg->pdata_len = p->private_data_len;
    if (p->private_data_len)
        memcpy(msg->pdata, p->private_data, p->private_data_len);
    if (msg->pdata_len && mcm_fault(m->ch, "garble"))
        msg->pdata[0] ^= 0xff; /* a stranger's call: the answerer must refuse it */
}

MCM_EXPORT int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
    struct mcm_id *m = (struct mcm_id *)id;
    if (m->state != S_ROUTE || mcm_check_param(id, conn_param, MCM_REQ_PDATA) != 0)
        return mcm_fail(EINVAL);
    struct mcm_msg msg;
    memset(&msg, 0, sizeof(msg));
    msg.type = MCM_REQ;
    mcm_fill(m, conn_param, &msg);
    m->retry = conn_param->retry_count, m->rnr = conn_param->rnr_retry_count;
    m->state = S_CALLING;
    char name[64];
    uint64_t token;
    /* nobody listening there: the CM's "invalid service ID" reject (8) */
    if (mcm_listener(m->dip, m->dport, name, sizeof(name), &token) != 0) {
        mcm_local(m, RDMA_CM_EVENT_REJECTED, 8);
        return 0;
    }
    msg.to = token;
    if (mcm_send(m->ch, name, &msg) != 0)
        mcm_local(m, RDMA_CM_EVENT_REJECTED, 8);
    return 0;
}

MCM_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
    struct mcm_id *m = (struct mcm_id *)id;
    if (m->state != S_REP_RCVD || id->qp)
        return mcm_fail(EINVAL);
    m->state = S_DONE;
    mcm_tell_peer(m, MCM_RTU, 0);
    return 0;
}

/* ---- The passive side ------------------------------------------------------------- */

MCM_EXPORT int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
    struct mcm_id *m = (struct mcm_id *)id;
    /* the accept's initiator depth: no more than the caller offered to answer */
    if (m->state != S_REQ_RCVD || mcm_check_param(id, conn_param, MCM_REP_PDATA) != 0 ||
        conn_param->initiator_depth > m->init_depth)
        return mcm_fail(EINVAL);
    struct mcm_msg msg;
    memset(&msg, 0, sizeof(msg));
    msg.type = MCM_REP;
    msg.to = m->rtoken;
    mcm_fill(m, conn_param, &msg);
    if (mcm_send(m->ch, m->rname, &msg) != 0)
        return -1;
    m->state = S_ACCEPTED;
    return 0;
}

MCM_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
    struct mcm_id *m = (struct mcm_id *)id;
    if (m->state != S_REQ_RCVD || private_data_len > MCM_REP_PDATA)
        return mcm_fail(EINVAL);
    struct mcm_msg msg;
    memset(&msg, 0, sizeof(msg));
    msg.type = MCM_REJ, msg.to = m->rtoken, msg.from = (uint64_t)(uintptr_t)m, msg.status = 28; /* consumer reject */
    msg.pdata_len = private_data_len;
    if (private_data_len)
        memcpy(msg.pdata, private_data, private_data_len);
    m->state = S_DONE;
    m->has_remote = 0;
    mcm_send(m->ch, m->rname, &msg);
    return 0;
}

/* ---- Attributes for the caller's own QP --------------------------------------------- */

MCM_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
    struct mcm_id *m = (struct mcm_id *)id;
    if (!qp_attr || !qp_attr_mask || !m->id.verbs)
        return mcm_fail(EINVAL);
    enum ibv_qp_state want = qp_attr->qp_state;
    memset(qp_attr, 0, sizeof(*qp_attr));
    qp_attr->qp_state = want;
    switch (want) {
    case IBV_QPS_INIT:
        qp_attr->port_num = 1;
        qp_attr->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
        *qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
        return 0;
    case IBV_QPS_RTR:
    case IBV_QPS_RTS:
        /* the other side's QP, PSN and GID are known once a request or reply came */
        if (!m->has_remote || (m->state != S_REQ_RCVD && m->state != S_ACCEPTED && m->state != S_REP_RCVD &&
                               m->state != S_DONE))
            return mcm_fail(EINVAL);
        break;
    default: return mcm_fail(EINVAL);
    }
    if (want == IBV_QPS_RTS && !m->has_psn)
        return mcm_fail(EINVAL); /* the answerer's send PSN is chosen when it accepts */
    if (want == IBV_QPS_RTR) {
        qp_attr->path_mtu = IBV_MTU_1024; /* the mock RoCE port's active MTU */
        qp_attr->dest_qp_num = m->rqpn;
        qp_attr->rq_psn = m->rpsn;
        qp_attr->max_dest_rd_atomic = m->resp_res;
        qp_attr->min_rnr_timer = 12;
        qp_attr->ah_attr.is_global = 1;
        memcpy(qp_attr->ah_attr.grh.dgid.raw, m->rgid, 16);
        qp_attr->ah_attr.grh.sgid_index = MCM_GID_INDEX;
        qp_attr->ah_attr.grh.hop_limit = 64;
        qp_attr->ah_attr.grh.traffic_class = m->tos;
        qp_attr->ah_attr.port_num = 1;
        *qp_attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    } else {
        qp_attr->sq_psn = m->psn;
        qp_attr->timeout = 14;
        qp_attr->retry_cnt = m->retry;
        qp_attr->rnr_retry = m->rnr;
        qp_attr->max_rd_atomic = m->init_depth;
        *qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                        IBV_QP_MAX_QP_RD_ATOMIC;
    }
    return 0;
}

/* ---- Events ------------------------------------------------------------------------- */

static void mcm_take_remote(struct mcm_id *m, const struct mcm_msg *msg)
{
    m->has_remote = 1;
    m->rqpn = msg->qpn, m->rpsn = msg->psn;
    memcpy(m->rgid, msg->gid, 16);
    snprintf(m->rname, sizeof(m->rname), "%s", msg->from_name);
    m->rtoken = msg->from;
}

static void mcm_event_conn(struct mcm_event *e, const struct mcm_msg *msg)
{
    /* InfiniBand CM messages have a fixed private data area: it comes padded with zeros */
    memcpy(e->pdata, msg->pdata, msg->pdata_len);
    e->ev.param.conn.private_data = e->pdata;
    e->ev.param.conn.private_data_len = msg->type == MCM_REQ ? MCM_REQ_PDATA : MCM_REP_PDATA;
    /* what the other side offers, seen from this side */
    e->ev.param.conn.responder_resources = msg->init_depth;
    e->ev.param.conn.initiator_depth = msg->resp_res;
    e->ev.param.conn.retry_count = msg->retry;
    e->ev.param.conn.rnr_retry_count = msg->rnr;
    e->ev.param.conn.qp_num = msg->qpn;
}

/* An incoming request for listener l: a new id, or a reject. NULL: no event. */
static struct mcm_id *mcm_request(struct mcm_channel *c, struct mcm_id *l, const struct mcm_msg *msg,
                                  struct mcm_event *e)
{
    struct mcm_msg rej;
    memset(&rej, 0, sizeof(rej));
    rej.type = MCM_REJ, rej.to = msg->from, rej.status = 8;
    /* reject_once: the first call is refused by the CM itself (as with a full backlog: no private data) */
    int once = l && mcm_fault(c, "reject_once") && !l->refused_once;
    if (!l || l->state != S_LISTEN || once) {
        if (once)
            rej.status = 28, l->refused_once = 1;
        mcm_send(c, msg->from_name, &rej);
        return NULL;
    }
    if (mcm_fault(c, "drop"))
        return NULL;
    struct rdma_cm_id *nid;
    if (rdma_create_id(&c->ch, &nid, l->id.context, l->id.ps) != 0)
        return NULL;
    struct mcm_id *n = (struct mcm_id *)nid;
    n->dev = l->dev;
    memcpy(n->ip, l->ip, 4);
    n->port = l->port;
    n->tos = l->tos;
    n->id.verbs = l->id.verbs;
    n->id.port_num = l->id.port_num;
    n->retry = msg->retry, n->rnr = msg->rnr; /* the requester's, for both directions */
    /* until the accept says otherwise (RTR comes before it) */
    n->resp_res = msg->init_depth, n->init_depth = msg->resp_res;
    mcm_set_addr(&n->id.route.addr.src_addr, l->ip, l->port);
    mcm_set_addr(&n->id.route.addr.dst_addr, msg->ip, 0);
    mcm_take_remote(n, msg);
    n->state = S_REQ_RCVD;
    e->ev.event = RDMA_CM_EVENT_CONNECT_REQUEST;
    e->ev.listen_id = &l->id;
    mcm_event_conn(e, msg);
    return n;
}

MCM_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
    struct mcm_channel *c = (struct mcm_channel *)channel;
    if (!event)
        return mcm_fail(EINVAL);
    for (;;) {
        struct mcm_msg msg;
        ssize_t got = recv(c->ch.fd, &msg, sizeof(msg), 0);
        if (got < 0)
            return -1; /* EAGAIN on a non-blocking channel */
        if (got != (ssize_t)sizeof(msg) || msg.magic != MCM_MAGIC)
            continue;
        struct mcm_event *e = calloc(1, sizeof(*e));
        if (!e)
            return mcm_fail(ENOMEM);
        pthread_mutex_lock(&c->lock);
        struct mcm_id *m = mcm_find(c, msg.to);
        pthread_mutex_unlock(&c->lock);
        int ok = 0;
        switch (msg.type) {
        case MCM_LOCAL:
            if (!m)
                break;
            e->ev.event = msg.event, e->ev.status = msg.status, ok = 1;
            break;
        case MCM_REQ:
            m = mcm_request(c, m, &msg, e);
            ok = m != NULL;
            break;
        case MCM_REP:
            if (!m || m->state != S_CALLING)
                break;
            mcm_take_remote(m, &msg);
            /* as the CM does: the depths the answerer accepted are this side's now */
            m->init_depth = msg.resp_res, m->resp_res = msg.init_depth;
            m->state = S_REP_RCVD;
            e->ev.event = RDMA_CM_EVENT_CONNECT_RESPONSE; /* no QP on the id: the caller completes it */
            mcm_event_conn(e, &msg);
            ok = 1;
            break;
        case MCM_RTU:
            if (!m || m->state != S_ACCEPTED)
                break;
            m->state = S_DONE;
            e->ev.event = RDMA_CM_EVENT_ESTABLISHED, ok = 1;
            break;
        case MCM_REJ:
            if (!m || m->state != S_CALLING)
                break;
            m->state = S_DONE;
            e->ev.event = RDMA_CM_EVENT_REJECTED, e->ev.status = msg.status;
            mcm_event_conn(e, &msg);
            ok = 1;
            break;
        case MCM_DISC:
            if (!m || !m->has_remote)
                break;
            m->has_remote = 0;
            e->ev.event = RDMA_CM_EVENT_DISCONNECTED, ok = 1;
            break;
        default: break;
        }
        if (!ok) {
            free(e);
            continue;
        }
        e->ev.id = &m->id;
        e->counted[0] = m, m->unacked++;
        if (e->ev.listen_id)
            e->counted[1] = (struct mcm_id *)e->ev.listen_id, e->counted[1]->unacked++;
        *event = &e->ev;
        return 0;
    }
}

MCM_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
    struct mcm_event *e = (struct mcm_event *)event;
    for (int i = 0; i < 2; i++)
        if (e->counted[i])
            e->counted[i]->unacked--;
    free(e);
    return 0;
}

MCM_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
    static const char *names[] = {"RDMA_CM_EVENT_ADDR_RESOLVED",    "RDMA_CM_EVENT_ADDR_ERROR",
                                  "RDMA_CM_EVENT_ROUTE_RESOLVED",   "RDMA_CM_EVENT_ROUTE_ERROR",
                                  "RDMA_CM_EVENT_CONNECT_REQUEST",  "RDMA_CM_EVENT_CONNECT_RESPONSE",
                                  "RDMA_CM_EVENT_CONNECT_ERROR",    "RDMA_CM_EVENT_UNREACHABLE",
                                  "RDMA_CM_EVENT_REJECTED",         "RDMA_CM_EVENT_ESTABLISHED",
                                  "RDMA_CM_EVENT_DISCONNECTED",     "RDMA_CM_EVENT_DEVICE_REMOVAL",
                                  "RDMA_CM_EVENT_MULTICAST_JOIN",   "RDMA_CM_EVENT_MULTICAST_ERROR",
                                  "RDMA_CM_EVENT_ADDR_CHANGE",      "RDMA_CM_EVENT_TIMEWAIT_EXIT"};
    return (unsigned)event < sizeof(names) / sizeof(names[0]) ? names[event] : "UNKNOWN EVENT";
}
