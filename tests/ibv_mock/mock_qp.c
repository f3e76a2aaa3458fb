/*
 * Completion queues and RC queue pairs: creation limits, the state machine with the
 * kernel's required and allowed attribute masks, and the QP's registry record.
 */
#define _GNU_SOURCE
#include "mock_ibv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

MOCK_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                                         struct ibv_comp_channel *channel, int comp_vector)
{
    struct mock_context *c = mock_ctx(context);
    if (cqe < 1 || cqe > c->max_cqe || comp_vector < 0 || comp_vector >= context->num_comp_vectors) {
        errno = EINVAL;
        return NULL;
    }
    if (channel) {
        errno = EOPNOTSUPP; /* no completion channels: poll */
        return NULL;
    }
    struct mock_cq *q = calloc(1, sizeof(*q));
    if (!q || !(q->ring = calloc((size_t)cqe, sizeof(*q->ring)))) {
        free(q);
        errno = ENOMEM;
        return NULL;
    }
    /* Exactly what was asked for: hardware may round up, a transport must not count on it. */
    q->size = (uint32_t)cqe;
    q->cq.cqe = cqe;
    q->cq.context = context;
    q->cq.cq_context = cq_context;
    pthread_mutex_init(&q->cq.mutex, NULL);
    pthread_cond_init(&q->cq.cond, NULL);
    pthread_mutex_lock(&c->lock);
    q->cq.handle = ++c->next_handle;
    pthread_mutex_unlock(&c->lock);
    return &q->cq;
}

MOCK_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
    struct mock_context *c = mock_ctx(cq->context);
    struct mock_cq *q = (struct mock_cq *)cq;
    pthread_mutex_lock(&c->lock);
    int busy = q->users > 0;
    pthread_mutex_unlock(&c->lock);
    if (busy)
        return EBUSY;
    pthread_mutex_destroy(&cq->mutex);
    pthread_cond_destroy(&cq->cond);
    free(q->ring);
    free(q);
    return 0;
}

/* Drops q's completions still in the CQ (as mlx5 does on reset and destroy). */
void mock_cq_forget_qp(struct mock_cq *cq, struct mock_qp *q)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < cq->count; i++) {
        struct mock_cqe e = cq->ring[(cq->head + i) % cq->size];
        if (e.qp != q)
            cq->ring[(cq->head + kept++) % cq->size] = e;
    }
    cq->count = kept;
}

/* q's registry record; with the context lock held, or before q is shared. */
static void mock_qp_format(const struct mock_context *c, const struct mock_qp *q, char *buf, size_t len)
{
    struct mock_qp_rec r = {0};
    struct ibv_gid_entry e = {0};
    r.pid = getpid();
    r.start = mock_self_start();
    r.pd = ((struct mock_pd *)q->qp.pd)->id;
    r.state = (int)q->st;
    r.dest_qpn = q->attr.dest_qp_num;
    r.access = q->attr.qp_access_flags;
    r.max_dest_rd_atomic = q->attr.max_dest_rd_atomic;
    r.rq_psn = q->attr.rq_psn;
    r.dev = c->port.dev;
    r.is_ib = c->port.is_ib;
    r.up = c->port.up;
    r.lid = c->port.lid;
    r.dlid = q->attr.ah_attr.dlid;
    if (q->st == IBV_QPS_RTR || q->st == IBV_QPS_RTS) {
        int index = c->port.is_ib ? 0 : q->attr.ah_attr.grh.sgid_index;
        mock_gid_entry(c->port.dev, c->port.is_ib, (uint32_t)index, &e);
        memcpy(r.dgid, q->attr.ah_attr.grh.dgid.raw, 16);
    }
    memcpy(r.gid, e.gid.raw, 16);
    r.gid_type = (int)e.gid_type;
    mock_qp_rec_format(&r, buf, len);
}

/* Publishes q's state; with the context lock held. */
void mock_qp_publish(struct mock_context *c, struct mock_qp *q)
{
    char buf[512];
    mock_qp_format(c, q, buf, sizeof(buf));
    if (mock_registry_update(c, "qp", q->qp.qp_num, buf))
        fprintf(stderr, "mock ibv: cannot publish qp 0x%06x in %s\n", q->qp.qp_num, c->dir);
}

static int mock_qp_init_check(struct ibv_pd *pd, const struct ibv_qp_init_attr *ia)
{
    const struct ibv_qp_cap *cap = &ia->cap;
    if (ia->qp_type != IBV_QPT_RC)
        return EOPNOTSUPP; /* the mock is RC only */
    if (ia->srq)
        return EOPNOTSUPP;
    if (!ia->send_cq || !ia->recv_cq || ia->send_cq->context != pd->context ||
        ia->recv_cq->context != pd->context)
        return EINVAL;
    if (cap->max_send_wr < 1 || cap->max_send_wr > MOCK_MAX_QP_WR || cap->max_recv_wr > MOCK_MAX_QP_WR ||
        cap->max_send_sge > MOCK_MAX_SGE || cap->max_recv_sge > MOCK_MAX_SGE)
        return EINVAL;
    return 0;
}

MOCK_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
    struct mock_context *c = mock_ctx(pd->context);
    int err = mock_qp_init_check(pd, ia);
    char buf[512];
    if (!err && c->qps_made >= c->max_qps)
        err = ENOMEM; /* GSHMEM_MOCK_IB_MAX_QPS: the device's QP resources are exhausted */
    if (err) {
        errno = err;
        return NULL;
    }
    struct mock_qp *q = calloc(1, sizeof(*q));
    if (!q) {
        errno = ENOMEM;
        return NULL;
    }
    q->cap = ia->cap;
    if (q->cap.max_inline_data > MOCK_MAX_INLINE)
        q->cap.max_inline_data = MOCK_MAX_INLINE;
    ia->cap = q->cap; /* what the QP really has; the caller must read it back */
    q->sq_sig_all = ia->sq_sig_all;
    q->st = IBV_QPS_RESET;
    q->qp.context = pd->context;
    q->qp.qp_context = ia->qp_context;
    q->qp.pd = pd;
    q->qp.send_cq = ia->send_cq;
    q->qp.recv_cq = ia->recv_cq;
    q->qp.state = IBV_QPS_RESET;
    q->qp.qp_type = IBV_QPT_RC;
    pthread_mutex_init(&q->qp.mutex, NULL);
    pthread_cond_init(&q->qp.cond, NULL);
    mock_qp_format(c, q, buf, sizeof(buf));
    if (mock_registry_create(c, "qp", 0xffffff, &q->qp.qp_num, buf)) {
        free(q);
        return NULL;
    }
    pthread_mutex_lock(&c->lock);
    q->qp.handle = ++c->next_handle;
    c->qps_made++;
    q->next = c->qps;
    c->qps = q;
    ((struct mock_pd *)pd)->users++;
    ((struct mock_cq *)ia->send_cq)->users++;
    ((struct mock_cq *)ia->recv_cq)->users++;
    pthread_mutex_unlock(&c->lock);
    return &q->qp;
}

MOCK_EXPORT int ibv_destroy_qp(struct ibv_qp *ibqp)
{
    struct mock_context *c = mock_ctx(ibqp->context);
    struct mock_qp *q = (struct mock_qp *)ibqp;
    pthread_mutex_lock(&c->lock);
    mock_late_drain(c, q);
    for (struct mock_qp **pp = &c->qps; *pp; pp = &(*pp)->next)
        if (*pp == q) {
            *pp = q->next;
            break;
        }
    mock_cq_forget_qp((struct mock_cq *)ibqp->send_cq, q);
    mock_cq_forget_qp((struct mock_cq *)ibqp->recv_cq, q);
    mock_event_forget_qp(c, ibqp);
    ((struct mock_pd *)ibqp->pd)->users--;
    ((struct mock_cq *)ibqp->send_cq)->users--;
    ((struct mock_cq *)ibqp->recv_cq)->users--;
    pthread_mutex_unlock(&c->lock);
    mock_registry_remove(c, "qp", ibqp->qp_num);
    pthread_mutex_destroy(&ibqp->mutex);
    pthread_cond_destroy(&ibqp->cond);
    free(q);
    return 0;
}

/* RC transitions: the attributes each one requires and those it also accepts
 * (alternate paths are not emulated, so they are refused). */
static const struct mock_transition {
    enum ibv_qp_state cur, next;
    int req, opt;
} mock_transitions[] = {
    {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0},
    {IBV_QPS_INIT, IBV_QPS_INIT, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
    {IBV_QPS_INIT, IBV_QPS_RTR,
     IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
         IBV_QP_MIN_RNR_TIMER,
     IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS},
    {IBV_QPS_RTR, IBV_QPS_RTS,
     IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
     IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER},
    {IBV_QPS_RTS, IBV_QPS_RTS, 0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER},
};

static int mock_transition_ok(enum ibv_qp_state cur, enum ibv_qp_state next, int mask)
{
    int rest = mask & ~IBV_QP_STATE;
    if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
        return (mask & IBV_QP_STATE) && !rest;
    for (size_t i = 0; i < sizeof(mock_transitions) / sizeof(mock_transitions[0]); i++) {
        const struct mock_transition *t = &mock_transitions[i];
        if (t->cur != cur || t->next != next)
            continue;
        if (cur != next && !(mask & IBV_QP_STATE))
            return 0;
        return (rest & t->req) == t->req && !(rest & ~(t->req | t->opt));
    }
    return 0;
}

static int mock_av_check(const struct mock_context *c, const struct ibv_ah_attr *ah)
{
    struct ibv_gid_entry e;
    static const uint8_t zero[16];
    if (ah->port_num != 1)
        return EINVAL; /* the kernel checks the AV's port, not only the QP's */
    if (ah->is_global &&
        (!memcmp(ah->grh.dgid.raw, zero, 16) || mock_gid_entry(c->port.dev, c->port.is_ib, ah->grh.sgid_index, &e)))
        return EINVAL;
    if (c->port.is_ib)
        return ah->dlid ? 0 : EINVAL;
    return ah->is_global ? 0 : EINVAL; /* RoCE addresses by GID only */
}

static int mock_attr_check(const struct mock_context *c, const struct ibv_qp_attr *a, int mask)
{
    const unsigned access =
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
    if (((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0) || ((mask & IBV_QP_PORT) && a->port_num != 1) ||
        ((mask & IBV_QP_ACCESS_FLAGS) && (a->qp_access_flags & ~access)) ||
        ((mask & IBV_QP_PATH_MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096)) ||
        ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > 0xffffff) ||
        ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > c->rd_atom) ||
        ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > c->rd_atom) ||
        ((mask & IBV_QP_TIMEOUT) && a->timeout > 31) || ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7) ||
        ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7) || ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31))
        return EINVAL;
    return (mask & IBV_QP_AV) ? mock_av_check(c, &a->ah_attr) : 0;
}

static void mock_attr_apply(struct mock_qp *q, const struct ibv_qp_attr *a, int mask)
{
    struct ibv_qp_attr *s = &q->attr;
#define MOCK_APPLY(bit, field)                                                                                 \
    if (mask & (bit))                                                                                          \
        s->field = a->field;
    MOCK_APPLY(IBV_QP_PKEY_INDEX, pkey_index)
    MOCK_APPLY(IBV_QP_PORT, port_num)
    MOCK_APPLY(IBV_QP_ACCESS_FLAGS, qp_access_flags)
    MOCK_APPLY(IBV_QP_AV, ah_attr)
    MOCK_APPLY(IBV_QP_PATH_MTU, path_mtu)
    MOCK_APPLY(IBV_QP_DEST_QPN, dest_qp_num)
    MOCK_APPLY(IBV_QP_RQ_PSN, rq_psn)
    MOCK_APPLY(IBV_QP_SQ_PSN, sq_psn)
    MOCK_APPLY(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic)
    MOCK_APPLY(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic)
    MOCK_APPLY(IBV_QP_MIN_RNR_TIMER, min_rnr_timer)
    MOCK_APPLY(IBV_QP_TIMEOUT, timeout)
    MOCK_APPLY(IBV_QP_RETRY_CNT, retry_cnt)
    MOCK_APPLY(IBV_QP_RNR_RETRY, rnr_retry)
#undef MOCK_APPLY
    s->rq_psn &= 0xffffff; /* PSNs are 24 bits on the wire */
    s->sq_psn &= 0xffffff;
}

MOCK_EXPORT int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
    struct mock_context *c = mock_ctx(ibqp->context);
    struct mock_qp *q = (struct mock_qp *)ibqp;
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    enum ibv_qp_state cur = q->st, next = (attr_mask & IBV_QP_STATE) ? attr->qp_state : cur;
    if (!mock_transition_ok(cur, next, attr_mask) || ((attr_mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur))
        rc = EINVAL;
    if (!rc)
        rc = mock_attr_check(c, attr, attr_mask);
    if (!rc) {
        if (next == IBV_QPS_RESET) {
            mock_late_drain(c, q);
            memset(&q->attr, 0, sizeof(q->attr));
            q->posted = q->retired = 0;
            mock_cq_forget_qp((struct mock_cq *)ibqp->send_cq, q);
            mock_cq_forget_qp((struct mock_cq *)ibqp->recv_cq, q);
        } else {
            mock_attr_apply(q, attr, attr_mask);
        }
        q->st = next;
        ibqp->state = next;
        mock_qp_publish(c, q);
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

MOCK_EXPORT int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
                             struct ibv_qp_init_attr *init_attr)
{
    struct mock_context *c = mock_ctx(ibqp->context);
    struct mock_qp *q = (struct mock_qp *)ibqp;
    (void)attr_mask; /* like the drivers: everything is filled in */
    pthread_mutex_lock(&c->lock);
    *attr = q->attr;
    attr->qp_state = attr->cur_qp_state = q->st;
    attr->cap = q->cap;
    memset(init_attr, 0, sizeof(*init_attr));
    init_attr->qp_context = ibqp->qp_context;
    init_attr->send_cq = ibqp->send_cq;
    init_attr->recv_cq = ibqp->recv_cq;
    init_attr->cap = q->cap;
    init_attr->qp_type = IBV_QPT_RC;
    init_attr->sq_sig_all = q->sq_sig_all;
    pthread_mutex_unlock(&c->lock);
    return 0;
}
