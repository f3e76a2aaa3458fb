/*
 * GSHMEM_IB_CM=rdmacm: the queue pairs connected through librdmacm (loaded with dlopen
 * like libibverbs) instead of the bootstrap's exchange of QP numbers and GIDs.
 *
 * The QPs stay the transport's own (its context, PD and CQ); librdmacm only resolves
 * the peer's address and route and carries the connection handshake, which is the
 * "QP-less" use the library documents: rdma_connect/rdma_accept name our QP number,
 * rdma_init_qp_attr gives the attributes for RTR and RTS (path, GID index, MTU, PSNs,
 * timeouts as the fabric's route says), and rdma_establish completes the active side.
 *
 * Every PE listens on its port's IPv4 address (the IPv4-mapped GID of a RoCE port, the
 * IPoIB interface's address on InfiniBand) and publishes it in its endpoint; a PE then
 * calls every higher PE and accepts calls from every lower one, each request carrying
 * the caller's PE (gshmemi_ibv_cm_private_*). Its own loopback QP is connected as the
 * bootstrap would: that path never leaves the NIC.
 */
#ifdef GSHMEM_HAVE_IBV
#include "transport/ibv_impl.h"
#include "transport/ibv_select.h"

#include "core/env.h"
#include "core/log.h"

#include <gshmem/status.h>

#include <stdio.h>
#include <string.h>

#ifdef GSHMEM_HAVE_RDMACM
#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define CM_RESOLVE_MS 2000
#define CM_IN_FLIGHT 64 /* calls one PE has going at once (the answerer's backlog is finite) */
#define CM_RETRY_MS 200 /* before a call that met a passing failure is made again */

#define CM_REQUIRED(X)                                                                                                 \
    X(rdma_create_event_channel, struct rdma_event_channel *, (void))                                                  \
    X(rdma_destroy_event_channel, void, (struct rdma_event_channel *))                                                 \
    X(rdma_create_id, int, (struct rdma_event_channel *, struct rdma_cm_id **, void *, enum rdma_port_space))          \
    X(rdma_destroy_id, int, (struct rdma_cm_id *))                                                                     \
    X(rdma_bind_addr, int, (struct rdma_cm_id *, struct sockaddr *))                                                   \
    X(rdma_listen, int, (struct rdma_cm_id *, int))                                                                    \
    X(rdma_resolve_addr, int, (struct rdma_cm_id *, struct sockaddr *, struct sockaddr *, int))                        \
    X(rdma_resolve_route, int, (struct rdma_cm_id *, int))                                                             \
    X(rdma_connect, int, (struct rdma_cm_id *, struct rdma_conn_param *))                                              \
    X(rdma_accept, int, (struct rdma_cm_id *, struct rdma_conn_param *))                                               \
    X(rdma_reject, int, (struct rdma_cm_id *, const void *, uint8_t))                                                  \
    X(rdma_establish, int, (struct rdma_cm_id *))                                                                      \
    X(rdma_get_cm_event, int, (struct rdma_event_channel *, struct rdma_cm_event **))                                  \
    X(rdma_ack_cm_event, int, (struct rdma_cm_event *))                                                                \
    X(rdma_init_qp_attr, int, (struct rdma_cm_id *, struct ibv_qp_attr *, int *))                                      \
    X(rdma_set_option, int, (struct rdma_cm_id *, int, int, void *, size_t))                                           \
    X(rdma_get_src_port, uint16_t, (struct rdma_cm_id *))
#define CM_OPTIONAL(X) X(rdma_event_str, const char *, (enum rdma_cm_event_type))

struct cm_api {
#define CM_FIELD(name, ret, args) ret(*name) args;
    CM_REQUIRED(CM_FIELD)
    CM_OPTIONAL(CM_FIELD)
#undef CM_FIELD
    char path[256];
};

static struct cm_api cm_api;
static const struct cm_api *cm_loaded;
static char cm_why[384];
static pthread_once_t cm_once = PTHREAD_ONCE_INIT;

static void cm_load(void)
{
    void *lib = gshmemi_ibv_dlopen("librdmacm.so.1", "librdmacm1 (rdma-core)", cm_api.path, sizeof(cm_api.path),
                                   cm_why, sizeof(cm_why));
    if (!lib) return;
#define CM_REQUIRE(name, ret, args)                                                                                    \
    if (!(*(void **)&cm_api.name = dlsym(lib, #name))) {                                                               \
        snprintf(cm_why, sizeof(cm_why), "%.200s lacks %s (too old a librdmacm)", cm_api.path, #name);                 \
        dlclose(lib);                                                                                                  \
        return;                                                                                                        \
    }
    CM_REQUIRED(CM_REQUIRE)
#undef CM_REQUIRE
#define CM_OPTION(name, ret, args) *(void **)&cm_api.name = dlsym(lib, #name);
    CM_OPTIONAL(CM_OPTION)
#undef CM_OPTION
    cm_loaded = &cm_api;
}

static const struct cm_api *cm_lib(char *why, size_t whylen)
{
    pthread_once(&cm_once, cm_load);
    if (!cm_loaded && why) snprintf(why, whylen, "%s", cm_why);
    return cm_loaded;
}

const char *gshmemi_ibv_cm_library(char *why, size_t whylen)
{
    const struct cm_api *api = cm_lib(why, whylen);
    return api ? api->path : NULL;
}

/* ---- One PE's connections --------------------------------------------------- */

/* CM_RETRY: a call met a passing failure (a timeout, a full backlog); it is made
 * again, with a fresh id, once retry_at has passed. */
enum cm_state { CM_IDLE, CM_ADDR, CM_ROUTE, CM_CALLED, CM_ACCEPTED, CM_DONE, CM_RETRY };

struct cm_peer {
    struct rdma_cm_id *id;
    int state; /* enum cm_state */
    double retry_at; /* CM_RETRY: when to call again */
    int tries;
    uint8_t resp_res; /* an answered call: the depths we accepted with */
    uint8_t init_depth;
};

struct ibv_cm {
    const struct cm_api *api;
    struct rdma_event_channel *ch;
    struct rdma_cm_id *listen;
    struct cm_peer *peers; /* [n_pes] */
    double deadline;       /* of the connection phase */
    uint8_t ip[4];
    uint16_t port;
};

static const char *cm_event_name(const struct cm_api *api, enum rdma_cm_event_type t)
{
    const char *s = api->rdma_event_str ? api->rdma_event_str(t) : NULL;
    return s ? s : "connection manager event";
}

static struct sockaddr_in cm_sockaddr(const uint8_t ip[4], uint16_t port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    memcpy(&a.sin_addr, ip, 4);
    a.sin_port = htons(port);
    return a;
}

int gshmemi_ibv_cm_port_address(const struct ibv_port_choice *port, uint8_t ip[4], char *why, size_t whylen)
{
    if (gshmemi_ib_gid_ipv4(port->gid, ip)) return 0;
    if (port->link == GSHMEMI_IBV_LINK_ETH) {
        snprintf(why, whylen,
                 "its GID (index %d) holds no IPv4 address; give the port an IPv4 address, or choose an IPv4 GID "
                 "with GSHMEM_IB_GID_INDEX",
                 port->gid_index);
        return -1;
    }
    char ifname[64], nwhy[256];
    if (gshmemi_ib_port_netdev("/sys/class/net", port->dev, port->port, ifname, sizeof(ifname), nwhy,
                               sizeof(nwhy)) != 0) {
        snprintf(why, whylen, "no IPoIB interface: %s", nwhy);
        return -1;
    }
    struct ifaddrs *all = NULL;
    int found = 0;
    if (getifaddrs(&all) == 0)
        for (struct ifaddrs *a = all; a && !found; a = a->ifa_next)
            if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET && strcmp(a->ifa_name, ifname) == 0) {
                memcpy(ip, &((struct sockaddr_in *)a->ifa_addr)->sin_addr, 4);
                found = 1;
            }
    if (all) freeifaddrs(all);
    if (!found) snprintf(why, whylen, "its interface %s has no IPv4 address", ifname);
    return found ? 0 : -1;
}

/* Whether a CM id landed on our device and port (the address could belong to another). */
static int cm_same_port(struct ibv_net *net, struct rdma_cm_id *id, char *why, size_t whylen)
{
    const char *dev = id->verbs && id->verbs->device ? id->verbs->device->name : "no device";
    if (strcmp(dev, net->rails[0].port.dev) == 0 && id->port_num == net->rails[0].port.port) return 1;
    snprintf(why, whylen, "librdmacm reaches it through %s port %d, but the queue pairs are on %s port %d", dev,
             id->port_num, net->rails[0].port.dev, net->rails[0].port.port);
    return 0;
}

int gshmemi_ibv_cm_listen(struct ibv_net *net, const struct gshmemi_env *env)
{
    char why[384];
    const struct cm_api *api = cm_lib(why, sizeof(why));
    if (!api) {
        GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: GSHMEM_IB_CM=rdmacm, but %s", net->my_pe, why);
        return GSHMEMX_ERR_NOT_SUPPORTED;
    }
    struct ibv_cm *cm = calloc(1, sizeof(*cm));
    if (!cm || !(cm->peers = calloc((size_t)net->n_pes, sizeof(*cm->peers)))) {
        free(cm);
        return GSHMEMX_ERR_NOMEM;
    }
    cm->api = api;
    net->cm = cm;
    if (gshmemi_ibv_cm_port_address(&net->rails[0].port, cm->ip, why, sizeof(why)) != 0) {
        GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: GSHMEM_IB_CM=rdmacm needs an IPv4 address on %s port %d: %s",
                               net->my_pe, net->rails[0].port.dev, net->rails[0].port.port, why);
        return GSHMEMX_ERR_NOT_SUPPORTED;
    }
    const char *step = "create an event channel";
    struct sockaddr_in at = cm_sockaddr(cm->ip, 0);
    int ok = (cm->ch = api->rdma_create_event_channel()) != NULL;
    if (ok) step = "create an id", ok = api->rdma_create_id(cm->ch, &cm->listen, NULL, RDMA_PS_TCP) == 0;
    if (ok) step = "bind", ok = api->rdma_bind_addr(cm->listen, (struct sockaddr *)&at) == 0;
    if (ok) step = "listen", ok = api->rdma_listen(cm->listen, net->n_pes) == 0;
    if (!ok) {
        GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: librdmacm cannot %s on %u.%u.%u.%u (%s port %d): %s", net->my_pe,
                               step, cm->ip[0], cm->ip[1], cm->ip[2], cm->ip[3], net->rails[0].port.dev, net->rails[0].port.port,
                               strerror(errno));
        return GSHMEMX_ERR_SYSTEM;
    }
    if (!cm_same_port(net, cm->listen, why, sizeof(why))) {
        GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: GSHMEM_IB_CM=rdmacm: %u.%u.%u.%u: %s", net->my_pe, cm->ip[0],
                               cm->ip[1], cm->ip[2], cm->ip[3], why);
        return GSHMEMX_ERR_NOT_SUPPORTED;
    }
    if (env->ib_tc) { /* inherited by the ids of the calls it accepts */
        uint8_t tos = (uint8_t)env->ib_tc;
        if (api->rdma_set_option(cm->listen, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)) != 0)
            GSHMEMI_WARN(TRANSPORT, "PE %d: ibv: librdmacm refuses GSHMEM_IB_TC=%ld as the type of service: %s",
                         net->my_pe, (long)env->ib_tc, strerror(errno));
    }
    int fl = fcntl(cm->ch->fd, F_GETFL);
    if (fl < 0 || fcntl(cm->ch->fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: librdmacm's event channel cannot be made non-blocking: %s",
                               net->my_pe, strerror(errno));
        return GSHMEMX_ERR_SYSTEM;
    }
    cm->port = ntohs(api->rdma_get_src_port(cm->listen));
    GSHMEMI_INFO(TRANSPORT, "PE %d: ibv: librdmacm (%s) listens on %u.%u.%u.%u port %u", net->my_pe, api->path,
                 cm->ip[0], cm->ip[1], cm->ip[2], cm->ip[3], cm->port);
    return 0;
}

void gshmemi_ibv_cm_address(const struct ibv_net *net, uint8_t ip[4], uint16_t *port)
{
    memset(ip, 0, 4);
    *port = 0;
    if (!net->cm) return;
    memcpy(ip, net->cm->ip, 4);
    *port = net->cm->port;
}

void gshmemi_ibv_cm_close(struct ibv_net *net)
{
    struct ibv_cm *cm = net->cm;
    if (!cm) return;
    for (int pe = 0; cm->peers && pe < net->n_pes; pe++)
        if (cm->peers[pe].id) cm->api->rdma_destroy_id(cm->peers[pe].id);
    if (cm->listen) cm->api->rdma_destroy_id(cm->listen);
    if (cm->ch) cm->api->rdma_destroy_event_channel(cm->ch);
    free(cm->peers);
    free(cm);
    net->cm = NULL;
}

/* Our QP to pe into state st (RTR or RTS) with the attributes librdmacm derived for
 * id. The caller goes to RTR and RTS on the reply with the CM's attributes (the
 * depths it negotiated); the answerer goes to RTR before it accepts and to RTS once
 * established (its send PSN is fixed by the accept), with the depths it accepted
 * (depth >= 0), as librdmacm does for a QP of its own. Before RTR the QP takes the
 * path's partition key index from the CM (an IPoIB partition need not be index 0). */
static int cm_qp_to(struct ibv_net *net, const struct gshmemi_env *env, struct rdma_cm_id *id, int pe,
                    enum ibv_qp_state st, int depth, char *why, size_t whylen)
{
    const char *name = st == IBV_QPS_RTR ? "RTR" : "RTS";
    struct ibv_qp *qp = net->peers[pe].qp;
    struct ibv_qp_attr a;
    int mask = 0, err = 0;
    if (st == IBV_QPS_RTR) {
        memset(&a, 0, sizeof(a));
        a.qp_state = IBV_QPS_INIT;
        if (net->cm->api->rdma_init_qp_attr(id, &a, &mask) == 0 && (mask & IBV_QP_PKEY_INDEX) && a.pkey_index != 0)
            err = net->api->ibv_modify_qp(qp, &a, IBV_QP_PKEY_INDEX); /* INIT to INIT */
        if (err) {
            snprintf(why, whylen, "its queue pair cannot take partition key index %u: %s", a.pkey_index,
                     strerror(err));
            return -1;
        }
    }
    memset(&a, 0, sizeof(a));
    a.qp_state = st;
    if (net->cm->api->rdma_init_qp_attr(id, &a, &mask) != 0) {
        snprintf(why, whylen, "librdmacm gives no %s attributes: %s", name, strerror(errno));
        return -1;
    }
    if (st == IBV_QPS_RTR && env->ib_sl) a.ah_attr.sl = (uint8_t)env->ib_sl;
    if (depth >= 0 && st == IBV_QPS_RTR) a.max_dest_rd_atomic = (uint8_t)depth;
    if (depth >= 0 && st == IBV_QPS_RTS) a.max_rd_atomic = (uint8_t)depth;
    if ((err = net->api->ibv_modify_qp(qp, &a, mask)) != 0) {
        snprintf(why, whylen, "its queue pair cannot go to %s: %s", name, strerror(err));
        return -1;
    }
    return 0;
}

static void cm_conn_param(struct ibv_net *net, int pe, unsigned char *priv, struct rdma_conn_param *p)
{
    memset(p, 0, sizeof(*p));
    gshmemi_ibv_cm_private_encode(net->my_pe, net->n_pes, priv);
    p->private_data = priv;
    p->private_data_len = GSHMEMI_IBV_CM_PRIVATE_SIZE;
    p->responder_resources = (uint8_t)net->rd_atomic;
    p->initiator_depth = (uint8_t)net->rd_atomic;
    p->retry_count = 7;
    p->rnr_retry_count = 7;
    p->qp_num = net->peers[pe].qp->qp_num;
}

/* Refuses a call. Our private data tells the caller that gshmem refused it, not the
 * CM (a full backlog), so it does not try again. */
static void cm_refuse(struct ibv_net *net, struct rdma_cm_id *id)
{
    unsigned char priv[GSHMEMI_IBV_CM_PRIVATE_SIZE];
    gshmemi_ibv_cm_private_encode(net->my_pe, net->n_pes, priv);
    net->cm->api->rdma_reject(id, priv, sizeof(priv));
}

/* A call from a lower PE: its QP goes to RTR, then we accept. 0; 1: a stranger,
 * refused (logged), the wait goes on; -1 with why: the job cannot go on (the call is
 * refused too, so the caller learns at once). *from: the caller's PE, -1 for a
 * stranger (whose id the caller destroys after the ack). */
static int cm_answer(struct ibv_net *net, const struct gshmemi_env *env, struct rdma_cm_event *ev, int *from,
                     char *why, size_t whylen)
{
    struct ibv_cm *cm = net->cm;
    struct rdma_cm_id *id = ev->id;
    char pwhy[160];
    int pe = -1;
    *from = -1;
    if (gshmemi_ibv_cm_private_decode(ev->param.conn.private_data, ev->param.conn.private_data_len, net->n_pes, &pe,
                                      pwhy, sizeof(pwhy)) != 0 ||
        pe >= net->my_pe || !net->peers[pe].qp || cm->peers[pe].id) {
        struct sockaddr_in *src = (struct sockaddr_in *)&id->route.addr.dst_addr;
        char addr[INET6_ADDRSTRLEN] = "an unknown address";
        if (src->sin_family == AF_INET) inet_ntop(AF_INET, &src->sin_addr, addr, sizeof(addr));
        if (pe >= 0)
            snprintf(pwhy, sizeof(pwhy), "PE %d %s", pe,
                     pe == net->my_pe  ? "is this PE"
                     : pe > net->my_pe ? "is higher (this PE calls it)"
                     : cm->peers[pe].id ? "called twice"
                                        : "is not reached over ibv");
        GSHMEMI_WARN(TRANSPORT, "PE %d: ibv: refused a librdmacm connection from %s: %s", net->my_pe, addr, pwhy);
        cm_refuse(net, id);
        return 1;
    }
    /* ours from now on: destroyed with the others, whatever happens */
    *from = pe;
    struct cm_peer *p = &cm->peers[pe];
    p->id = id;
    id->context = p; /* it had the listener's */
    /* the depths, seen from here: we answer as many reads/atomics as the caller issues and
     * issue as many as it answers, each at most what our device allows (the caller's QP
     * takes these from our reply) */
    int asked = ev->param.conn.responder_resources, offered = ev->param.conn.initiator_depth;
    p->resp_res = (uint8_t)(asked < net->rd_atomic ? asked : net->rd_atomic);
    p->init_depth = (uint8_t)(offered < net->rd_atomic ? offered : net->rd_atomic);
    if (!cm_same_port(net, id, why, whylen) || cm_qp_to(net, env, id, pe, IBV_QPS_RTR, p->resp_res, why, whylen) != 0) {
        cm_refuse(net, id);
        return -1;
    }
    unsigned char priv[GSHMEMI_IBV_CM_PRIVATE_SIZE];
    struct rdma_conn_param cp;
    cm_conn_param(net, pe, priv, &cp);
    cp.responder_resources = p->resp_res;
    cp.initiator_depth = p->init_depth;
    if (cm->api->rdma_accept(id, &cp) != 0) {
        snprintf(why, whylen, "rdma_accept: %s", strerror(errno));
        cm_refuse(net, id);
        return -1;
    }
    p->state = CM_ACCEPTED;
    return 0;
}

/* Starts (again) the call to pe. 0, or -1 with why. */
static int cm_call(struct ibv_net *net, const struct gshmemi_env *env, int pe, const struct gshmemi_ibv_endpoint *eps,
                   char *why, size_t whylen)
{
    struct ibv_cm *cm = net->cm;
    const struct cm_api *api = cm->api;
    struct cm_peer *p = &cm->peers[pe];
    struct sockaddr_in src = cm_sockaddr(cm->ip, 0), dst = cm_sockaddr(eps[pe].cm_ip, eps[pe].cm_port);
    p->tries++;
    if (api->rdma_create_id(cm->ch, &p->id, p, RDMA_PS_TCP) != 0) {
        p->id = NULL;
        snprintf(why, whylen, "rdma_create_id: %s", strerror(errno));
        return -1;
    }
    uint8_t tos = (uint8_t)env->ib_tc;
    if (tos && api->rdma_set_option(p->id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)) != 0 && p->tries == 1)
        GSHMEMI_WARN(TRANSPORT, "PE %d: ibv: librdmacm refuses GSHMEM_IB_TC=%u as the type of service: %s",
                     net->my_pe, tos, strerror(errno));
    if (api->rdma_resolve_addr(p->id, (struct sockaddr *)&src, (struct sockaddr *)&dst, CM_RESOLVE_MS) != 0) {
        snprintf(why, whylen, "rdma_resolve_addr: %s", strerror(errno));
        return -1;
    }
    p->state = CM_ADDR;
    return 0;
}

/* Whether a failed call may pass if made again: address or route resolution timed
 * out (a busy subnet manager or neighbour table), or the call was refused without our
 * private data (the answerer's backlog was full). Both happen before the answerer
 * could accept; a call that timed out later (UNREACHABLE, CONNECT_ERROR) may have been
 * accepted there, and a second one would be refused as a duplicate: those end it. */
static int cm_passing(const struct ibv_net *net, const struct rdma_cm_event *ev)
{
    switch (ev->event) {
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR: return ev->status == -ETIMEDOUT || ev->status == ETIMEDOUT;
    case RDMA_CM_EVENT_REJECTED: {
        int pe;
        char why[64];
        return ev->status != 8 && gshmemi_ibv_cm_private_decode(ev->param.conn.private_data,
                                                                ev->param.conn.private_data_len, net->n_pes, &pe, why,
                                                                sizeof(why)) != 0;
    }
    default: return 0;
    }
}

static double cm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One event for pe's connection. 0, or -1 with why. */
static int cm_advance(struct ibv_net *net, const struct gshmemi_env *env, struct rdma_cm_event *ev, int pe,
                      const struct gshmemi_ibv_endpoint *eps, char *why, size_t whylen)
{
    struct ibv_cm *cm = net->cm;
    struct cm_peer *p = &cm->peers[pe];
    const struct cm_api *api = cm->api;
    if (p->state == CM_DONE) /* connected: only the loss of the device matters now (its QP tells the rest) */
        return ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL ? (snprintf(why, whylen, "the RDMA device was removed"), -1)
                                                         : 0;
    switch (ev->event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (p->state != CM_ADDR) break;
        if (!cm_same_port(net, p->id, why, whylen)) return -1;
        if (api->rdma_resolve_route(p->id, CM_RESOLVE_MS) != 0) {
            snprintf(why, whylen, "rdma_resolve_route: %s", strerror(errno));
            return -1;
        }
        p->state = CM_ROUTE;
        return 0;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
        if (p->state != CM_ROUTE) break;
        unsigned char priv[GSHMEMI_IBV_CM_PRIVATE_SIZE];
        struct rdma_conn_param cp;
        cm_conn_param(net, pe, priv, &cp);
        if (api->rdma_connect(p->id, &cp) != 0) {
            snprintf(why, whylen, "rdma_connect: %s", strerror(errno));
            return -1;
        }
        p->state = CM_CALLED;
        return 0;
    }
    case RDMA_CM_EVENT_CONNECT_RESPONSE: {
        if (p->state != CM_CALLED) break;
        int who = -1;
        char pwhy[160];
        if (gshmemi_ibv_cm_private_decode(ev->param.conn.private_data, ev->param.conn.private_data_len, net->n_pes,
                                          &who, pwhy, sizeof(pwhy)) != 0 ||
            who != pe) {
            if (who >= 0) snprintf(pwhy, sizeof(pwhy), "PE %d answered", who);
            snprintf(why, whylen, "%u.%u.%u.%u port %u is not PE %d: %s", eps[pe].cm_ip[0], eps[pe].cm_ip[1],
                     eps[pe].cm_ip[2], eps[pe].cm_ip[3], eps[pe].cm_port, pe, pwhy);
            return -1;
        }
        if (cm_qp_to(net, env, p->id, pe, IBV_QPS_RTR, -1, why, whylen) != 0 ||
            cm_qp_to(net, env, p->id, pe, IBV_QPS_RTS, -1, why, whylen) != 0)
            return -1;
        if (api->rdma_establish(p->id) != 0) {
            snprintf(why, whylen, "rdma_establish: %s", strerror(errno));
            return -1;
        }
        p->state = CM_DONE;
        return 0;
    }
    case RDMA_CM_EVENT_ESTABLISHED:
        if (p->state != CM_ACCEPTED) return 0;
        if (cm_qp_to(net, env, p->id, pe, IBV_QPS_RTS, p->init_depth, why, whylen) != 0) return -1;
        p->state = CM_DONE;
        return 0;
    case RDMA_CM_EVENT_ADDR_CHANGE:
    case RDMA_CM_EVENT_TIMEWAIT_EXIT: return 0;
    default: break;
    }
    if (pe > net->my_pe && cm_passing(net, ev) && cm_now() + CM_RETRY_MS * 1e-3 < cm->deadline) {
        /* made again later with a fresh id (this one goes once its event is acked) */
        GSHMEMI_INFO(TRANSPORT, "PE %d: ibv: librdmacm call %d to PE %d: %s (status %d); calling again", net->my_pe,
                     p->tries, pe, cm_event_name(api, ev->event), ev->status);
        p->state = CM_RETRY;
        return 0;
    }
    snprintf(why, whylen, "%s (status %d)", cm_event_name(api, ev->event), ev->status);
    if (ev->event == RDMA_CM_EVENT_REJECTED)
        snprintf(why + strlen(why), whylen - strlen(why), "%s",
                 ev->status == 8    ? ": nobody listens there (the address belongs to another host or device?)"
                 : !cm_passing(net, ev) ? ": the peer refused it (its log says why)"
                                   : "");
    return -1;
}

/* The PEs not connected yet, for the timeout's message. */
static void cm_missing(struct ibv_net *net, char *out, size_t len)
{
    size_t at = 0;
    int shown = 0;
    out[0] = '\0';
    for (int pe = 0; pe < net->n_pes && at + 32 < len; pe++) {
        if (pe == net->my_pe || !net->peers[pe].qp || net->cm->peers[pe].state == CM_DONE) continue;
        if (shown++ == 8) {
            at += (size_t)snprintf(out + at, len - at, ", ...");
            break;
        }
        at += (size_t)snprintf(out + at, len - at, "%s%d (%s)", shown > 1 ? ", " : "", pe,
                               pe > net->my_pe ? "called" : "its call never came");
    }
}

/* Destroys every id but the connected ones (on failure: all of them), so that calls
 * in progress end at once on both sides. */
static void cm_drop_ids(struct ibv_net *net, int all)
{
    struct ibv_cm *cm = net->cm;
    for (int pe = 0; pe < net->n_pes; pe++) {
        struct cm_peer *p = &cm->peers[pe];
        if (!p->id || (!all && p->state == CM_DONE)) continue;
        cm->api->rdma_destroy_id(p->id);
        p->id = NULL;
    }
    if (all && cm->listen) {
        cm->api->rdma_destroy_id(cm->listen);
        cm->listen = NULL;
    }
}

int gshmemi_ibv_cm_connect(struct ibv_net *net, const struct gshmemi_env *env, const struct gshmemi_ibv_endpoint *eps)
{
    struct ibv_cm *cm = net->cm;
    const struct cm_api *api = cm->api;
    int want = 0, done = 0, fail_pe = -1, timed_out = 0;
    char why[384] = "";
    for (int pe = 0; pe < net->n_pes; pe++) want += pe != net->my_pe && net->peers[pe].qp != NULL;
    /* half of GSHMEM_TIMEOUT: a PE that failed early waits in the next exchange (ibv_agree)
     * for the others, and they must reach it before its own GSHMEM_TIMEOUT ends it */
    double wait = net->timeout > 0 ? net->timeout / 2 : 1e30;
    double deadline = cm->deadline = cm_now() + wait;
    while (fail_pe < 0 && done < want) {
        double now = cm_now(), left = deadline - now;
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        /* new calls (and calls made again), a bounded number at once */
        int in_flight = 0;
        for (int pe = net->my_pe + 1; pe < net->n_pes; pe++) {
            int st = cm->peers[pe].state;
            in_flight += st == CM_ADDR || st == CM_ROUTE || st == CM_CALLED;
        }
        for (int pe = net->my_pe + 1; pe < net->n_pes && in_flight < CM_IN_FLIGHT && fail_pe < 0; pe++) {
            struct cm_peer *p = &cm->peers[pe];
            if (!net->peers[pe].qp || !(p->state == CM_IDLE || (p->state == CM_RETRY && now >= p->retry_at)))
                continue;
            if (cm_call(net, env, pe, eps, why, sizeof(why)) != 0) fail_pe = pe;
            in_flight++;
        }
        struct pollfd pfd = {cm->ch->fd, POLLIN, 0};
        int n = fail_pe < 0 ? poll(&pfd, 1, left > 0.1 ? 100 : (int)(left * 1000) + 1) : 0;
        if (n < 0 && errno != EINTR) {
            snprintf(why, sizeof(why), "poll: %s", strerror(errno));
            break;
        }
        struct rdma_cm_event *ev;
        while (fail_pe < 0 && api->rdma_get_cm_event(cm->ch, &ev) == 0) {
            int pe = -1, rc = 0;
            if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
                rc = cm_answer(net, env, ev, &pe, why, sizeof(why));
                if (pe < 0) { /* a stranger, refused: the id is ours to destroy once the event is acked */
                    struct rdma_cm_id *stranger = ev->id;
                    api->rdma_ack_cm_event(ev);
                    api->rdma_destroy_id(stranger);
                    continue;
                }
            } else if (ev->id && ev->id->context) { /* every id of ours names its peer */
                pe = (int)((struct cm_peer *)ev->id->context - cm->peers);
                rc = cm_advance(net, env, ev, pe, eps, why, sizeof(why));
            } else {
                GSHMEMI_INFO(TRANSPORT, "PE %d: ibv: librdmacm: %s on the listening id", net->my_pe,
                             cm_event_name(api, ev->event));
                if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
                    snprintf(why, sizeof(why), "the RDMA device was removed");
                    rc = -1;
                }
            }
            api->rdma_ack_cm_event(ev);
            if (rc < 0) fail_pe = pe >= 0 ? pe : net->my_pe;
            if (pe >= 0 && cm->peers[pe].state == CM_RETRY && cm->peers[pe].id) {
                api->rdma_destroy_id(cm->peers[pe].id); /* its event is acked */
                cm->peers[pe].id = NULL;
                cm->peers[pe].retry_at = cm_now() + CM_RETRY_MS * 1e-3;
            }
            done = 0;
            for (int q = 0; q < net->n_pes; q++) done += cm->peers[q].state == CM_DONE;
        }
        if (fail_pe < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            snprintf(why, sizeof(why), "rdma_get_cm_event: %s", strerror(errno));
            break;
        }
    }
    int failed = fail_pe >= 0 || why[0] || timed_out;
    /* on failure every id goes at once: calls still coming are refused, calls made are
     * dropped, not left to time out on the other side */
    cm_drop_ids(net, failed);
    if (!failed) {
        GSHMEMI_INFO(TRANSPORT, "PE %d: ibv: librdmacm connected %d queue pairs", net->my_pe, want);
        return 0;
    }
    if (timed_out) {
        char missing[256];
        cm_missing(net, missing, sizeof(missing));
        GSHMEMI_IBV_SETUP_FAIL(net,
                               "PE %d: ibv: librdmacm: connected %d of %d PEs in %gs (half of GSHMEM_TIMEOUT); not "
                               "connected: %s",
                               net->my_pe, done, want, wait, missing);
        return GSHMEMX_ERR_TIMEOUT;
    }
    if (fail_pe < 0 || fail_pe == net->my_pe)
        GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: librdmacm: %s", net->my_pe, why);
    else
        GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: librdmacm connection to PE %d (%u.%u.%u.%u port %u): %s", net->my_pe,
                               fail_pe, eps[fail_pe].cm_ip[0], eps[fail_pe].cm_ip[1], eps[fail_pe].cm_ip[2],
                               eps[fail_pe].cm_ip[3], eps[fail_pe].cm_port, why);
    return GSHMEMX_ERR_SYSTEM;
}

#else /* built without <rdma/rdma_cma.h> */

const char *gshmemi_ibv_cm_library(char *why, size_t whylen)
{
    if (why) snprintf(why, whylen, "this gshmem was built without librdmacm-dev");
    return NULL;
}

int gshmemi_ibv_cm_port_address(const struct ibv_port_choice *port, uint8_t ip[4], char *why, size_t whylen)
{
    (void)port, (void)ip;
    snprintf(why, whylen, "this gshmem was built without librdmacm-dev");
    return -1;
}

int gshmemi_ibv_cm_listen(struct ibv_net *net, const struct gshmemi_env *env)
{
    (void)env;
    GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: GSHMEM_IB_CM=rdmacm, but this gshmem was built without librdmacm-dev",
                           net->my_pe);
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

void gshmemi_ibv_cm_address(const struct ibv_net *net, uint8_t ip[4], uint16_t *port)
{
    (void)net;
    memset(ip, 0, 4);
    *port = 0;
}

int gshmemi_ibv_cm_connect(struct ibv_net *net, const struct gshmemi_env *env, const struct gshmemi_ibv_endpoint *eps)
{
    (void)env, (void)eps;
    return gshmemi_ibv_cm_listen(net, NULL);
}

void gshmemi_ibv_cm_close(struct ibv_net *net)
{
    (void)net;
}
#endif
#endif
