/*
 * ibv transport: the net's life (device, queue pairs connected through the bootstrap,
 * heap registrations exchanged) and its event thread (ibv_impl.h).
 */
#ifdef GSHMEM_HAVE_IBV
#include "transport/ibv_impl.h"

#include "bootstrap/bootstrap.h"
#include "core/env.h"
#include "core/heap.h"
#include "core/log.h"

#include <gshmem/status.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

static struct ibv_net *ibv_global;
/* The ports gshmemi_transport_ibv_usable opened, kept for the net. */
static struct ibv_context *ibv_probed_ctx[GSHMEMI_IBV_MAX_RAILS];
static struct ibv_port_choice ibv_probed_port[GSHMEMI_IBV_MAX_RAILS];
static int ibv_probed;

int gshmemi_transport_ibv_usable(const struct gshmemi_env *env, int gpu, char *why, size_t whylen)
{
    if (ibv_probed) return 1;
    const struct gshmemi_ibv_api *api = gshmemi_ibv_api(why, whylen);
    if (!api) return 0;
    char gpu_pci[256];
    gshmemi_ibv_cuda_pci_path(gpu, gpu_pci, sizeof(gpu_pci));
    /* librdmacm connects through one address: one rail */
    int max = env->ib_cm == GSHMEMI_IBV_CM_RDMACM ? 1 : (int)env->ib_max_rails;
    ibv_probed = gshmemi_ibv_ports_open(api, env, gpu_pci[0] ? gpu_pci : NULL, max, ibv_probed_ctx, ibv_probed_port,
                                        why, whylen);
    return ibv_probed > 0;
}

/* ---- Asynchronous events ------------------------------------------------------ */

static int ibv_pe_of_qp(struct ibv_net *net, struct ibv_qp *qp)
{
    for (int pe = 0; pe < net->n_pes; pe++)
        if (net->peers[pe].qp == qp) return pe;
    return -1;
}

/* Whether ev (from rail r) ends the job; fills the story. */
static int ibv_event_fatal(struct ibv_net *net, int r, const struct ibv_async_event *ev, int *pe)
{
    *pe = -1;
    switch (ev->event_type) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_PATH_MIG_ERR: *pe = ibv_pe_of_qp(net, ev->element.qp); return 1;
    case IBV_EVENT_CQ_ERR:
    case IBV_EVENT_DEVICE_FATAL: return 1;
    case IBV_EVENT_PORT_ERR: return ev->element.port_num == net->rails[r].port.port;
    default: return 0;
    }
}

/* Polls the CQ for asynchronous atomics' answers; a failure there has no waiter to
 * report it, so it ends the job. */
static void ibv_events_progress(struct ibv_net *net)
{
    pthread_mutex_lock(&net->lock);
    int rc = gshmemi_ibv_poll(net);
    pthread_mutex_unlock(&net->lock);
    if (rc) gshmemi_transport_fatal(rc);
    if (atomic_load(&net->async_pending)) sched_yield();
}

static void *ibv_events(void *arg)
{
    struct ibv_net *net = arg;
    /* the wake pipe first, then each rail's asynchronous events */
    struct pollfd pfd[1 + GSHMEMI_IBV_MAX_RAILS] = {{net->wake[0], POLLIN, 0}};
    for (int r = 0; r < net->nrails; r++) pfd[1 + r] = (struct pollfd){net->rails[r].ctx->async_fd, POLLIN, 0};
    while (!atomic_load(&net->stop)) {
        /* idle, it still polls the CQs every 100 ms: a failed request that nobody waits
         * for (a PE sitting in a barrier) ends the job naming the peer, not a timeout */
        int busy = atomic_load(&net->async_pending) > 0;
        int n = poll(pfd, (nfds_t)(1 + net->nrails), busy ? 0 : 100);
        if (n < 0 && errno != EINTR) break;
        if (atomic_load(&net->stop)) break;
        char drain[64];
        if (n > 0 && (pfd[0].revents & POLLIN))
            while (read(net->wake[0], drain, sizeof(drain)) > 0) {
            }
        if (busy || n == 0) ibv_events_progress(net);
        for (int r = 0; n > 0 && r < net->nrails; r++) {
            if (!(pfd[1 + r].revents & POLLIN)) continue;
            struct ibv_async_event ev;
            if (net->api->ibv_get_async_event(net->rails[r].ctx, &ev) != 0) continue;
            int pe, fatal = ibv_event_fatal(net, r, &ev, &pe);
            const char *name = gshmemi_ibv_event_name(net->api, ev.event_type);
            net->api->ibv_ack_async_event(&ev);
            if (!fatal) {
                GSHMEMI_INFO(TRANSPORT, "PE %d: ibv: %s on %s", net->my_pe, name, net->rails[r].port.dev);
                continue;
            }
            gshmemi_ibv_lost(net, pe, "asynchronous event on %s port %d: %s (event %d)", net->rails[r].port.dev,
                             net->rails[r].port.port, name, (int)ev.event_type);
            gshmemi_transport_fatal(GSHMEMX_ERR_PEER_LOST);
        }
    }
    return NULL;
}

/* ---- Queue pairs ------------------------------------------------------------- */

static int ibv_qp_create(struct ibv_net *net, int pe)
{
    struct ibv_rail *rail = ibv_rail_of(net, pe);
    struct ibv_qp_init_attr ia;
    memset(&ia, 0, sizeof(ia));
    ia.send_cq = ia.recv_cq = rail->cq;
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = (uint32_t)net->qp_depth;
    ia.cap.max_recv_wr = 1;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    ia.cap.max_inline_data = GSHMEMI_IBV_INLINE_WANT;
    struct ibv_qp *qp = net->api->ibv_create_qp(rail->pd, &ia);
    if (!qp) {
        GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: cannot create a queue pair for PE %d on %s (depth %d): %s", net->my_pe,
                               pe, rail->port.dev, net->qp_depth, strerror(errno));
        return GSHMEMX_ERR_SYSTEM;
    }
    net->peers[pe].qp = qp;
    if (net->max_inline < 0 || (int)ia.cap.max_inline_data < net->max_inline)
        net->max_inline = (int)ia.cap.max_inline_data;
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.port_num = (uint8_t)rail->port.port;
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
    int err = net->api->ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (err) {
        GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: queue pair for PE %d to INIT: %s", net->my_pe, pe, strerror(err));
        return GSHMEMX_ERR_SYSTEM;
    }
    return 0;
}

/* INIT -> RTR -> RTS towards the peer's endpoint. */
static int ibv_qp_connect(struct ibv_net *net, const struct gshmemi_env *env, const struct gshmemi_ibv_endpoint *ep)
{
    struct ibv_qp *qp = net->peers[ep->pe].qp;
    const struct ibv_port_choice *port = &ibv_rail_of(net, ep->pe)->port;
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = (enum ibv_mtu)(ep->mtu < port->mtu ? ep->mtu : port->mtu);
    a.dest_qp_num = ep->qpn_to_me;
    a.rq_psn = ep->psn;
    /* what we answer: our device's depth; what we issue: no more than the peer answers */
    int issue = ep->rd_atomic < net->rd_atomic ? ep->rd_atomic : net->rd_atomic;
    a.max_dest_rd_atomic = (uint8_t)net->rd_atomic;
    a.min_rnr_timer = 12;
    a.ah_attr.port_num = (uint8_t)port->port;
    a.ah_attr.sl = (uint8_t)env->ib_sl;
    a.ah_attr.dlid = ep->lid;
    if (port->link == GSHMEMI_IBV_LINK_ETH || port->gid_index >= 0) {
        a.ah_attr.is_global = 1;
        memcpy(a.ah_attr.grh.dgid.raw, ep->gid, 16);
        a.ah_attr.grh.sgid_index = (uint8_t)(port->gid_index < 0 ? 0 : port->gid_index);
        a.ah_attr.grh.hop_limit = 255;
        a.ah_attr.grh.traffic_class = (uint8_t)env->ib_tc;
    }
    int err = net->api->ibv_modify_qp(qp, &a,
                                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    const char *step = "RTR";
    if (!err) {
        memset(&a, 0, sizeof(a));
        a.qp_state = IBV_QPS_RTS;
        a.sq_psn = net->psn;
        a.timeout = 18; /* 4.096 us * 2^18: about 1 s per try */
        a.retry_cnt = 7;
        a.rnr_retry = 7;
        a.max_rd_atomic = (uint8_t)issue;
        step = "RTS";
        err = net->api->ibv_modify_qp(qp, &a,
                                      IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                          IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
    }
    if (err) {
        GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: queue pair to PE %d (its QP 0x%x) cannot go to %s: %s", net->my_pe,
                               ep->pe, ep->qpn_to_me, step, strerror(err));
        return GSHMEMX_ERR_SYSTEM;
    }
    return 0;
}

static const char *ibv_cm_name(int cm)
{
    return cm == GSHMEMI_IBV_CM_RDMACM ? "rdmacm" : "bootstrap";
}

/* Publishes our endpoint, reads everyone's and connects the queue pairs: directly from
 * the endpoints (GSHMEM_IB_CM=bootstrap), or through librdmacm at the addresses they
 * hold (rdmacm; the QP to itself is connected directly either way). */
static int ibv_connect_all(struct ibv_net *net, struct gshmemi_bootstrap *bs, const struct gshmemi_env *env)
{
    size_t len = gshmemi_ibv_endpoint_size(net->n_pes);
    uint32_t *qpn = calloc((size_t)net->n_pes, sizeof(*qpn));
    unsigned char *all = calloc((size_t)net->n_pes + 1, len);
    struct gshmemi_ibv_endpoint *eps = calloc((size_t)net->n_pes, sizeof(*eps));
    int rc = qpn && all && eps ? 0 : GSHMEMX_ERR_NOMEM;
    for (int pe = 0; rc == 0 && pe < net->n_pes; pe++)
        qpn[pe] = net->peers[pe].qp ? net->peers[pe].qp->qp_num | (uint32_t)net->peers[pe].rail << 24 : 0;
    if (rc == 0) {
        const struct ibv_port_choice *p0 = &net->rails[0].port;
        struct gshmemi_ibv_endpoint me = {.pe = net->my_pe,
                                          .n_pes = net->n_pes,
                                          .link = p0->link,
                                          .mtu = p0->mtu,
                                          .lid = p0->lid,
                                          .nrails = net->nrails,
                                          .psn = net->psn,
                                          .rd_atomic = net->rd_atomic,
                                          .cm = (int)env->ib_cm,
                                          .qpn = qpn};
        memcpy(me.gid, p0->gid, 16);
        for (int r = 1; r < net->nrails; r++) {
            const struct ibv_port_choice *pr = &net->rails[r].port;
            me.rails[r].link = pr->link, me.rails[r].mtu = pr->mtu, me.rails[r].lid = pr->lid;
            memcpy(me.rails[r].gid, pr->gid, 16);
        }
        gshmemi_ibv_cm_address(net, me.cm_ip, &me.cm_port);
        gshmemi_ibv_endpoint_encode(&me, all + (size_t)net->n_pes * len);
        rc = bs->ops->allgather(bs, all + (size_t)net->n_pes * len, all, len);
    }
    for (int pe = 0; rc == 0 && pe < net->n_pes; pe++) {
        if (!net->peers[pe].qp) continue;
        struct gshmemi_ibv_endpoint ep;
        char why[160];
        if (gshmemi_ibv_endpoint_decode(all + (size_t)pe * len, len, pe, net->my_pe, net->n_pes, &ep, why,
                                        sizeof(why)) != 0) {
            GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: the endpoint PE %d published is malformed: %s", net->my_pe, pe,
                                   why);
            rc = GSHMEMX_ERR_PROTOCOL;
        } else if (ep.link != ibv_rail_of(net, pe)->port.link) {
            const struct ibv_port_choice *mine = &ibv_rail_of(net, pe)->port; /* the rail our QP to pe is on */
            GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: PE %d uses %s (its rail %d), this PE %s (%s port %d): they cannot talk",
                                   net->my_pe, pe, ep.link == GSHMEMI_IBV_LINK_IB ? "InfiniBand" : "RoCE",
                                   ep.rail_to_me, mine->link == GSHMEMI_IBV_LINK_IB ? "InfiniBand" : "RoCE", mine->dev,
                                   mine->port);
            rc = GSHMEMX_ERR_NOT_SUPPORTED;
        } else if (ep.cm != (int)env->ib_cm) {
            GSHMEMI_IBV_SETUP_FAIL(net,
                                   "PE %d: ibv: PE %d connects queue pairs with GSHMEM_IB_CM=%s, this PE with %s: set "
                                   "the same on every PE",
                                   net->my_pe, pe, ibv_cm_name(ep.cm), ibv_cm_name((int)env->ib_cm));
            rc = GSHMEMX_ERR_CONFIG;
        } else if (ep.cm == GSHMEMI_IBV_CM_BOOTSTRAP || pe == net->my_pe) {
            rc = ibv_qp_connect(net, env, &ep);
        }
        eps[pe] = ep;
        net->peers[pe].peer_rail = ep.rail_to_me;
    }
    if (rc == 0 && env->ib_cm == GSHMEMI_IBV_CM_RDMACM) rc = gshmemi_ibv_cm_connect(net, env, eps);
    free(eps);
    free(qpn);
    free(all);
    return rc;
}

/* ---- The net --------------------------------------------------------------- */

static void ibv_net_free(struct ibv_net *net)
{
    const struct gshmemi_ibv_api *api = net->api;
    if (net->thread_started) {
        atomic_store(&net->stop, 1);
        if (write(net->wake[1], "x", 1) < 0) { /* the thread also checks stop on every event */
        }
        pthread_join(net->thread, NULL);
    }
    for (int i = 0; i < 2; i++)
        if (net->wake[i] >= 0) close(net->wake[i]);
    for (int h = 0; h < net->nheaps; h++) gshmemi_ibv_heap_deregister(net, &net->heaps[h]);
    gshmemi_ibv_cm_close(net);
    for (int pe = 0; net->peers && pe < net->n_pes; pe++)
        if (net->peers[pe].qp) api->ibv_destroy_qp(net->peers[pe].qp);
    for (int r = 0; r < net->nrails; r++) {
        struct ibv_rail *rail = &net->rails[r];
        if (rail->host_mr) api->ibv_dereg_mr(rail->host_mr);
        if (rail->cq) api->ibv_destroy_cq(rail->cq);
        if (rail->pd) api->ibv_dealloc_pd(rail->pd);
        if (rail->ctx) api->ibv_close_device(rail->ctx);
    }
    if (net->host) munmap(net->host, net->host_size);
    pthread_mutex_destroy(&net->lock);
    free(net->peers);
    free(net);
}

/* Each rail's limits (the net takes the smallest), protection domain and CQ; then a
 * QP per remote PE on its rail. */
static int ibv_net_resources(struct ibv_net *net, const struct gshmemi_env *env, const unsigned char *remote)
{
    const struct gshmemi_ibv_api *api = net->api;
    for (int pe = 0; pe < net->n_pes; pe++) net->peers[pe].rail = pe == net->my_pe ? 0 : (pe + net->my_pe) % net->nrails;
    net->qp_depth = (int)env->ib_qp_depth;
    net->max_msg = (size_t)1 << 30;
    net->rd_atomic = 16;
    for (int r = 0; r < net->nrails; r++) {
        struct ibv_rail *rail = &net->rails[r];
        struct ibv_device_attr da;
        if (api->ibv_query_device(rail->ctx, &da) != 0) {
            GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: cannot query %s", net->my_pe, rail->port.dev);
            return GSHMEMX_ERR_SYSTEM;
        }
        if (da.max_qp_wr < net->qp_depth) net->qp_depth = da.max_qp_wr;
        if (rail->port.max_msg_sz && rail->port.max_msg_sz < net->max_msg) net->max_msg = rail->port.max_msg_sz;
        if (da.max_qp_rd_atom < net->rd_atomic) net->rd_atomic = da.max_qp_rd_atom;
        if (da.max_qp_init_rd_atom < net->rd_atomic) net->rd_atomic = da.max_qp_init_rd_atom;
        /* a device without remote atomics or reads is no rail (gshmemi_ibv_ports_open) */
        int remote_pes = 0;
        for (int pe = 0; pe < net->n_pes; pe++) remote_pes += remote[pe] && net->peers[pe].rail == r;
        /* Every QP of the rail may hold qp_depth signalled requests whose completions
         * nobody polled yet: the rail's CQ must take them all, or it overruns. A device
         * whose CQs are smaller gets a shallower queue on every QP (it was capped alone). */
        long peers = remote_pes ? remote_pes : 1, cqe = (long)net->qp_depth * peers + 16;
        if (cqe > da.max_cqe) {
            long depth = ((long)da.max_cqe - 16) / peers;
            if (depth < 16) {
                GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: %s's completion queues hold at most %d entries: too few for "
                                            "%ld peers on it at a queue depth of 16", net->my_pe, rail->port.dev,
                                       da.max_cqe, peers);
                return GSHMEMX_ERR_NOT_SUPPORTED;
            }
            GSHMEMI_WARN(TRANSPORT, "PE %d: ibv: %s's completion queues hold at most %d entries: queue depth %ld, "
                                    "not %d, for its %ld peers", net->my_pe, rail->port.dev, da.max_cqe, depth,
                         net->qp_depth, peers);
            net->qp_depth = (int)depth;
            cqe = depth * peers + 16;
        }
        rail->cq_size = (int)cqe;
        if (!(rail->pd = api->ibv_alloc_pd(rail->ctx)) ||
            !(rail->cq = api->ibv_create_cq(rail->ctx, rail->cq_size, NULL, NULL, 0))) {
            GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: cannot allocate a %s on %s: %s", net->my_pe,
                                   rail->pd ? "completion queue" : "protection domain", rail->port.dev, strerror(errno));
            return GSHMEMX_ERR_SYSTEM;
        }
    }
    int rc = gshmemi_ibv_host_register(net);
    for (int pe = 0; rc == 0 && pe < net->n_pes; pe++)
        if (remote[pe]) rc = ibv_qp_create(net, pe); /* itself too: host atomics on its own heap */
    if (rc == 0 && net->max_inline < 8) {
        GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: %s allows %d bytes of inline data; gshmem needs 8", net->my_pe,
                               net->rails[0].port.dev, net->max_inline);
        rc = GSHMEMX_ERR_NOT_SUPPORTED;
    }
    return rc;
}

/* Whether every PE got rc == 0 (an allgather): 0, or NOT_SUPPORTED on every PE when
 * any failed (that PE logged why), so all of them fall back or fail alike. */
static int ibv_agree(struct ibv_net *net, struct gshmemi_bootstrap *bs, int rc, const char *what)
{
    int ok = rc == 0, *oks = calloc((size_t)net->n_pes, sizeof(int));
    int brc = oks ? bs->ops->allgather(bs, &ok, oks, sizeof(ok)) : GSHMEMX_ERR_NOMEM;
    for (int pe = 0; brc == 0 && pe < net->n_pes; pe++)
        if (!oks[pe]) {
            if (ok)
                gshmemi_log(net->may_fall_back ? GSHMEMI_LOG_INFO : GSHMEMI_LOG_ERROR, GSHMEMI_SUBSYS_TRANSPORT,
                            "PE %d: ibv: PE %d could not %s (its log says why)", net->my_pe, pe, what);
            rc = GSHMEMX_ERR_NOT_SUPPORTED;
            break;
        }
    free(oks);
    return brc ? brc : rc;
}

static int ibv_net_create(struct gshmemi_bootstrap *bs, const struct gshmemi_env *env, const unsigned char *remote,
                          struct ibv_net **out)
{
    struct ibv_net *net = calloc(1, sizeof(*net));
    if (!net) return GSHMEMX_ERR_NOMEM;
    net->api = gshmemi_ibv_api(NULL, 0);
    net->my_pe = bs->rank, net->n_pes = bs->nranks;
    net->timeout = env->timeout;
    net->relaxed = env->ib_relaxed_ordering;
    net->may_fall_back = env->remote_transport == GSHMEMI_REMOTE_AUTO;
    net->device = -1;
    net->max_inline = -1;
    net->wake[0] = net->wake[1] = -1;
    net->nrails = ibv_probed;
    for (int r = 0; r < net->nrails; r++) {
        net->rails[r].ctx = ibv_probed_ctx[r], net->rails[r].port = ibv_probed_port[r];
        ibv_probed_ctx[r] = NULL;
    }
    ibv_probed = 0;
    pthread_mutex_init(&net->lock, NULL);
    if (net->nrails == 0) { /* gshmemi_transport_ibv_usable found no port */
        free(net);
        return GSHMEMX_ERR_INTERNAL;
    }
    uint32_t psn = 0;
    if (getrandom(&psn, sizeof(psn), 0) != sizeof(psn)) psn = (uint32_t)getpid();
    net->psn = psn & 0xffffff;
    for (int pe = 0; pe < net->n_pes; pe++) net->direct_peers += pe != net->my_pe && !remote[pe];
    net->peers = calloc((size_t)net->n_pes, sizeof(*net->peers));
    int rc = net->peers ? ibv_net_resources(net, env, remote) : GSHMEMX_ERR_NOMEM;
    /* every PE enters each exchange, so one that failed does not leave the others waiting */
    rc = ibv_agree(net, bs, rc, "set up its RDMA resources");
    /* every PE takes this step, whatever its GSHMEM_IB_CM: a mismatch shows in the endpoints */
    if (rc == 0)
        rc = ibv_agree(net, bs, env->ib_cm == GSHMEMI_IBV_CM_RDMACM ? gshmemi_ibv_cm_listen(net, env) : 0,
                       "listen for librdmacm connections");
    if (rc == 0) rc = ibv_agree(net, bs, ibv_connect_all(net, bs, env), "connect its queue pairs");
    if (rc == 0 && pipe2(net->wake, O_CLOEXEC | O_NONBLOCK) != 0) rc = GSHMEMX_ERR_SYSTEM;
    for (int r = 0; rc == 0 && r < net->nrails; r++) {
        int fd = net->rails[r].ctx->async_fd;
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) rc = GSHMEMX_ERR_SYSTEM;
    }
    if (rc == 0 && pthread_create(&net->thread, NULL, ibv_events, net) != 0) rc = GSHMEMX_ERR_SYSTEM;
    net->thread_started = rc == 0;
    if (rc != 0) {
        ibv_net_free(net);
        return rc;
    }
    for (int r = 0; r < net->nrails; r++) {
        const struct ibv_port_choice *p = &net->rails[r].port;
        int peers = 0;
        for (int pe = 0; pe < net->n_pes; pe++) peers += net->peers[pe].qp && pe != net->my_pe && net->peers[pe].rail == r;
        GSHMEMI_INFO(TRANSPORT, "PE %d: ibv: rail %d of %d: %s port %d (%s, MTU %d, GID index %d, %s), %d PE%s", net->my_pe,
                     r, net->nrails, p->dev, p->port, p->link == GSHMEMI_IBV_LINK_ETH ? "RoCE" : "InfiniBand",
                     128 << p->mtu, p->gid_index, p->pci[0] ? p->pci : "PCI path unknown", peers, peers == 1 ? "" : "s");
    }
    GSHMEMI_INFO(TRANSPORT, "PE %d: ibv: %d-deep queue pairs connected through %s, %d bytes inline", net->my_pe,
                 net->qp_depth, env->ib_cm == GSHMEMI_IBV_CM_RDMACM ? "librdmacm" : "the bootstrap", net->max_inline);
    *out = net;
    return 0;
}

/* Registers heap and learns every peer's registration of it: each PE publishes its
 * keys on every rail; we keep those of the rail its QP for us is on. */
static int ibv_heap_exchange(struct ibv_net *net, struct gshmemi_bootstrap *bs, struct ibv_heapreg *reg,
                             unsigned heap_index)
{
    /* per rail: the keys blob; then one byte: whether writes into this registration need a flush read */
    const size_t keys = GSHMEMI_IBV_HEAPKEYS_SIZE, len = GSHMEMI_IBV_MAX_RAILS * keys + 1;
    unsigned char *all = calloc((size_t)net->n_pes + 1, len);
    reg->peer = calloc((size_t)net->n_pes, sizeof(*reg->peer));
    reg->peer_flush = calloc((size_t)net->n_pes, sizeof(int));
    if (!all || !reg->peer || !reg->peer_flush) {
        free(all);
        return GSHMEMX_ERR_NOMEM;
    }
    unsigned char *in = all + (size_t)net->n_pes * len;
    for (int r = 0; r < net->nrails; r++) {
        struct gshmemi_ibv_heapkeys mine = {
            heap_index, (uintptr_t)reg->heap->base, reg->heap->size, reg->chunk, reg->nchunks, {0}};
        for (int i = 0; i < reg->nchunks; i++) mine.rkey[i] = reg->mr[r][i]->rkey;
        gshmemi_ibv_heapkeys_encode(&mine, in + (size_t)r * keys);
    }
    in[len - 1] = (unsigned char)reg->flush;
    int rc = bs->ops->allgather(bs, in, all, len);
    for (int pe = 0; rc == 0 && pe < net->n_pes; pe++) {
        if (!net->peers[pe].qp) continue;
        char why[160];
        const unsigned char *b = all + (size_t)pe * len;
        int r = net->peers[pe].peer_rail;
        if (gshmemi_ibv_heapkeys_decode(b + (size_t)r * keys, keys, heap_index, 0, &reg->peer[pe], why,
                                        sizeof(why)) != 0) {
            GSHMEMI_IBV_SETUP_FAIL(net,
                                   "PE %d: ibv: the registration of heap %u PE %d published for its rail %d is "
                                   "malformed: %s",
                                   net->my_pe, heap_index, pe, r, why);
            rc = GSHMEMX_ERR_PROTOCOL;
        }
        reg->peer_flush[pe] = b[len - 1] != 0;
    }
    free(all);
    return rc;
}

/* The net goes when no heap uses it any more (its QPs, staging memory, event thread):
 * after the last heap's transport, or at once when the first heap could not join it. */
static void ibv_net_put(struct ibv_net *net)
{
    if (net->refs > 0) return;
    if (!atomic_load(&net->failed)) gshmemi_ibv_drain(net); /* requests in a send queue die with it */
    ibv_global = NULL;
    ibv_net_free(net);
}

void gshmemi_ibv_destroy(struct gshmemi_transport *tp)
{
    struct ibv_transport *t = ibv_of(tp);
    struct ibv_net *net = t->net;
    free(t);
    net->refs--;
    ibv_net_put(net);
}

int gshmemi_transport_ibv_create(struct gshmemi_bootstrap *bs, struct gshmemi_heap *heap, const struct gshmemi_env *env,
                                 const unsigned char *remote, struct gshmemi_transport **out)
{
    int rc = 0;
    if (!ibv_global) rc = ibv_net_create(bs, env, remote, &ibv_global);
    if (rc != 0) return rc;
    struct ibv_net *net = ibv_global;
    struct ibv_transport *t = calloc(1, sizeof(*t));
    if (!t || net->nheaps == GSHMEMI_IBV_MAX_HEAPS) {
        rc = t ? GSHMEMX_ERR_INTERNAL : GSHMEMX_ERR_NOMEM;
        free(t);
        ibv_net_put(net);
        return rc;
    }
    t->tp.ops = &gshmemi_ibv_ops;
    t->tp.impl = t;
    t->net = net;
    t->heap_index = net->nheaps;
    struct ibv_heapreg *reg = &net->heaps[net->nheaps];
    rc = ibv_agree(net, bs, gshmemi_ibv_heap_register(net, reg, heap), "register its heap");
    if (rc == 0) rc = ibv_agree(net, bs, ibv_heap_exchange(net, bs, reg, (unsigned)net->nheaps), "read every heap key");
    if (rc != 0) {
        gshmemi_ibv_heap_deregister(net, reg);
        free(t);
        ibv_net_put(net);
        return rc;
    }
    if (heap->kind == GSHMEMI_HEAP_KIND_DEVICE) net->device = heap->device;
    net->nheaps++;
    net->refs++;
    *out = &t->tp;
    return bs->ops->barrier(bs); /* peers write into this heap only once everyone knows its keys */
}

void gshmemi_transport_ibv_release(void)
{
    const struct gshmemi_ibv_api *api = gshmemi_ibv_api(NULL, 0);
    for (int r = 0; r < ibv_probed; r++)
        if (ibv_probed_ctx[r] && api) api->ibv_close_device(ibv_probed_ctx[r]);
    memset(ibv_probed_ctx, 0, sizeof(ibv_probed_ctx));
    ibv_probed = 0;
}

int gshmemi_transport_ibv_in_use(void)
{
    return ibv_global != NULL;
}

const char *gshmemi_transport_ibv_device(void)
{
    return ibv_global ? ibv_global->rails[0].port.dev : NULL;
}

const char *gshmemi_transport_ibv_loss(void)
{
    return ibv_global && ibv_global->lost_msg[0] ? ibv_global->lost_msg : NULL;
}
#endif
