/*
 * The data path: post_send runs each WR to completion in the caller's thread, with
 * the checks a NIC makes on the way (local keys, the peer's QP, the rkey, the
 * access rights) and process_vm_readv/writev to reach the peer. A failed WR always
 * completes with an error and puts the QP in the error state, where every later WR
 * is flushed. poll_cq retires send-queue slots the way selective signalling does.
 */
#define _GNU_SOURCE
#include "mock_ibv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/uio.h>
#include <unistd.h>

static atomic_long mock_data_wrs; /* data WRs run in this process: GSHMEM_MOCK_IB_FAIL_AFTER counts them */

/* A WR's local side: the memory behind its sges, and their total length. */
struct mock_local {
    struct iovec iov[MOCK_MAX_SGE];
    int n;
    size_t total;
};

static const char *mock_reason_str(enum mock_reason r)
{
    switch (r) {
    case MOCK_OK: return "success";
    case MOCK_LKEY_UNKNOWN: return "no local MR has this lkey";
    case MOCK_LKEY_PD: return "the local MR belongs to another PD than the QP";
    case MOCK_LKEY_RANGE: return "the sge is not inside the local MR";
    case MOCK_LKEY_NO_WRITE: return "READ or atomic into a local MR without IBV_ACCESS_LOCAL_WRITE";
    case MOCK_LOCAL_FAULT: return "registered local memory is no longer mapped";
    case MOCK_LEN: return "message longer than max_msg_sz, or atomic sge list not one 8-byte sge";
    case MOCK_RKEY_UNKNOWN: return "rkey unknown";
    case MOCK_RKEY_PD: return "rkey of an MR outside the remote QP's PD";
    case MOCK_RKEY_RANGE: return "remote range outside the MR";
    case MOCK_RKEY_ACCESS: return "the remote MR lacks the access this op needs";
    case MOCK_RQP_ACCESS: return "the remote QP's qp_access_flags lack the access this op needs";
    case MOCK_REMOTE_FAULT: return "registered remote memory is no longer mapped";
    case MOCK_MISALIGNED: return "atomic remote address not 8-byte aligned";
    case MOCK_NO_RD_ATOMIC: return "READ/atomic with max_rd_atomic or the remote max_dest_rd_atomic 0";
    case MOCK_RD_ATOMIC_OVER: return "READ/atomic with max_rd_atomic above the remote max_dest_rd_atomic";
    case MOCK_RQP_MISSING: return "no such remote QP (dest_qp_num)";
    case MOCK_PEER_DEAD: return "the remote QP's process is gone";
    case MOCK_RQP_STATE: return "the remote QP is not in RTR or RTS";
    case MOCK_RQP_NOT_BACK: return "the remote QP's dest_qp_num is not this QP";
    case MOCK_ADDR: return "the address vectors do not lead to each other's port (GID, GID type or LID)";
    case MOCK_PSN: return "sq_psn differs from the remote QP's rq_psn";
    case MOCK_PORT_DOWN: return "port down";
    case MOCK_INJECTED: return "failure injected by GSHMEM_MOCK_IB_FAIL_AFTER";
    case MOCK_PTRACE: return "process_vm_* refused (EPERM): is the peer dumpable, same user?";
    case MOCK_FLUSHED: return "flushed: the QP is in the error state";
    }
    return "?";
}

static enum ibv_wc_status mock_reason_status(enum mock_reason r)
{
    switch (r) {
    case MOCK_OK: return IBV_WC_SUCCESS;
    case MOCK_LKEY_UNKNOWN: case MOCK_LKEY_PD: case MOCK_LKEY_RANGE: case MOCK_LKEY_NO_WRITE:
    case MOCK_LOCAL_FAULT: return IBV_WC_LOC_PROT_ERR;
    case MOCK_LEN: return IBV_WC_LOC_LEN_ERR;
    case MOCK_RKEY_UNKNOWN: case MOCK_RKEY_PD: case MOCK_RKEY_RANGE: case MOCK_RKEY_ACCESS: case MOCK_RQP_ACCESS:
    case MOCK_REMOTE_FAULT: return IBV_WC_REM_ACCESS_ERR;
    case MOCK_MISALIGNED: case MOCK_NO_RD_ATOMIC: case MOCK_RD_ATOMIC_OVER: return IBV_WC_REM_INV_REQ_ERR;
    case MOCK_PTRACE: return IBV_WC_REM_OP_ERR;
    case MOCK_FLUSHED: return IBV_WC_WR_FLUSH_ERR;
    default: return IBV_WC_RETRY_EXC_ERR; /* the peer never answered */
    }
}

static int mock_is_atomic(enum ibv_wr_opcode op)
{
    return op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP;
}

/* What post_send itself refuses (EINVAL), as a driver does before touching the NIC. */
static int mock_wr_valid(const struct mock_qp *q, const struct ibv_send_wr *wr)
{
    if (q->st != IBV_QPS_RTS && q->st != IBV_QPS_ERR)
        return EINVAL;
    if (wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_READ && !mock_is_atomic(wr->opcode))
        return EINVAL;
    if (wr->num_sge < 0 || (uint32_t)wr->num_sge > q->cap.max_send_sge || (wr->num_sge && !wr->sg_list))
        return EINVAL;
    if (wr->send_flags & IBV_SEND_INLINE) {
        size_t total = 0;
        if (wr->opcode != IBV_WR_RDMA_WRITE)
            return EINVAL;
        for (int i = 0; i < wr->num_sge; i++)
            total += wr->sg_list[i].length;
        if (total > q->cap.max_inline_data)
            return EINVAL;
    }
    return 0;
}

/* Resolves the sges: inline data is read from plain addresses; otherwise each sge
 * must lie in a local MR of the QP's PD (addresses in the MR's iova space). */
static enum mock_reason mock_local_resolve(struct mock_context *c, const struct mock_qp *q,
                                           const struct ibv_send_wr *wr, struct mock_local *l)
{
    const int writes_local = wr->opcode != IBV_WR_RDMA_WRITE;
    l->n = 0;
    l->total = 0;
    for (int i = 0; i < wr->num_sge; i++) {
        const struct ibv_sge *s = &wr->sg_list[i];
        uintptr_t host = (uintptr_t)s->addr;
        if (!s->length)
            continue; /* mlx5 skips empty sges */
        if (!(wr->send_flags & IBV_SEND_INLINE)) {
            const struct mock_mr *m = mock_mr_find(c, s->lkey);
            if (!m)
                return MOCK_LKEY_UNKNOWN;
            if (m->mr.pd != q->qp.pd)
                return MOCK_LKEY_PD;
            if (s->addr < m->iova || s->addr - m->iova > m->mr.length || s->length > m->mr.length - (s->addr - m->iova))
                return MOCK_LKEY_RANGE;
            if (writes_local && !(m->access & IBV_ACCESS_LOCAL_WRITE))
                return MOCK_LKEY_NO_WRITE;
            host = (uintptr_t)m->mr.addr + (uintptr_t)(s->addr - m->iova);
        }
        l->iov[l->n++] = (struct iovec){(void *)host, s->length};
        l->total += s->length;
    }
    if (l->total > MOCK_MAX_MSG_SZ || (mock_is_atomic(wr->opcode) && (wr->num_sge != 1 || l->total != 8)))
        return MOCK_LEN;
    return MOCK_OK;
}

/* Whether the two QPs' address vectors lead to each other's port. */
static int mock_addr_match(const struct mock_context *c, const struct mock_qp *q, const struct mock_qp_rec *r)
{
    const struct ibv_ah_attr *ah = &q->attr.ah_attr;
    struct ibv_gid_entry me;
    if (r->is_ib != c->port.is_ib)
        return 0;
    if (c->port.is_ib)
        return ah->dlid == r->lid && r->dlid == c->port.lid;
    mock_gid_entry(c->port.dev, 0, ah->grh.sgid_index, &me);
    return r->gid_type == (int)me.gid_type && mock_gid_find(r->dev, 0, ah->grh.dgid.raw, r->gid_type) &&
           mock_gid_find(c->port.dev, 0, r->dgid, (int)me.gid_type);
}

/* Would the peer answer at all? Anything wrong here, the requester retries until it gives up. */
static enum mock_reason mock_peer_check(struct mock_context *c, const struct mock_qp *q, struct mock_qp_rec *r)
{
    if (!c->port.up)
        return MOCK_PORT_DOWN;
    if (mock_qp_rec_read(c, q->attr.dest_qp_num, r))
        return MOCK_RQP_MISSING;
    if (!mock_proc_alive(r->pid, r->start))
        return MOCK_PEER_DEAD;
    if (!r->up)
        return MOCK_PORT_DOWN;
    if (r->state != IBV_QPS_RTR && r->state != IBV_QPS_RTS)
        return MOCK_RQP_STATE;
    if (r->dest_qpn != q->qp.qp_num)
        return MOCK_RQP_NOT_BACK;
    if (!mock_addr_match(c, q, r))
        return MOCK_ADDR;
    if (q->attr.sq_psn != r->rq_psn)
        return MOCK_PSN;
    return MOCK_OK;
}

/* The responder's checks; *host gets the remote address in the peer's memory. */
static enum mock_reason mock_remote_check(struct mock_context *c, const struct mock_qp *q,
                                          const struct ibv_send_wr *wr, const struct mock_qp_rec *r, size_t total,
                                          uint64_t *host, unsigned *access)
{
    const int atomic = mock_is_atomic(wr->opcode);
    const uint64_t raddr = atomic ? wr->wr.atomic.remote_addr : wr->wr.rdma.remote_addr;
    const uint32_t rkey = atomic ? wr->wr.atomic.rkey : wr->wr.rdma.rkey;
    const unsigned need = wr->opcode == IBV_WR_RDMA_WRITE  ? IBV_ACCESS_REMOTE_WRITE
                          : wr->opcode == IBV_WR_RDMA_READ ? IBV_ACCESS_REMOTE_READ
                                                           : IBV_ACCESS_REMOTE_ATOMIC;
    struct mock_mr_rec m;
    if (atomic && (raddr & 7))
        return MOCK_MISALIGNED;
    if (wr->opcode != IBV_WR_RDMA_WRITE && (!q->attr.max_rd_atomic || !r->max_dest_rd_atomic))
        return MOCK_NO_RD_ATOMIC;
    /* a requester allowed more reads/atomics in flight than the responder takes: hardware
     * fails when the excess arrives; the mock, which runs one at a time, fails at once */
    if (wr->opcode != IBV_WR_RDMA_WRITE && q->attr.max_rd_atomic > r->max_dest_rd_atomic)
        return MOCK_RD_ATOMIC_OVER;
    if (!(r->access & need))
        return MOCK_RQP_ACCESS;
    if (!total)
        return MOCK_OK; /* zero-length: no rkey to check (IB spec) */
    if (mock_mr_rec_read(c, rkey, &m))
        return MOCK_RKEY_UNKNOWN;
    if (m.pid != r->pid || m.start != r->start || m.pd != r->pd)
        return MOCK_RKEY_PD;
    if (raddr < m.iova || raddr - m.iova > m.length || total > m.length - (raddr - m.iova))
        return MOCK_RKEY_RANGE;
    if (!(m.access & need))
        return MOCK_RKEY_ACCESS;
    *host = m.addr + (raddr - m.iova);
    *access = m.access;
    return MOCK_OK;
}

/* Why a process_vm_* call moved less than asked: the peer went away, ptrace was
 * refused, or memory behind an MR was unmapped on one side. */
static enum mock_reason mock_move_error(ssize_t done, int err, const struct mock_local *l)
{
    if (done >= 0)
        err = EFAULT;
    if (err == ESRCH)
        return MOCK_PEER_DEAD;
    if (err == EPERM)
        return MOCK_PTRACE;
    for (int i = 0; i < l->n; i++)
        if (!mock_range_mapped(l->iov[i].iov_base, l->iov[i].iov_len))
            return MOCK_LOCAL_FAULT;
    return MOCK_REMOTE_FAULT;
}

static enum mock_reason mock_rdma(const struct ibv_send_wr *wr, const struct mock_local *l, pid_t pid,
                                  uint64_t host)
{
    const struct iovec remote = {(void *)(uintptr_t)host, l->total};
    ssize_t done = wr->opcode == IBV_WR_RDMA_WRITE ? process_vm_writev(pid, l->iov, (unsigned long)l->n, &remote, 1, 0)
                                                  : process_vm_readv(pid, l->iov, (unsigned long)l->n, &remote, 1, 0);
    return done == (ssize_t)l->total ? MOCK_OK : mock_move_error(done, errno, l);
}

/* Read-modify-write of 8 bytes in the peer under a host-wide lock: atomic with
 * respect to every other mock atomic (IBV_ATOMIC_HCA), in host byte order. */
static enum mock_reason mock_atomic(struct mock_context *c, const struct ibv_send_wr *wr, const struct mock_local *l,
                                    pid_t pid, uint64_t host)
{
    uint64_t old = 0, val;
    struct iovec mine = {&old, 8}, theirs = {(void *)(uintptr_t)host, 8}, next = {&val, 8};
    flock(c->atomic_fd, LOCK_EX);
    ssize_t done = process_vm_readv(pid, &mine, 1, &theirs, 1, 0);
    if (done == 8) {
        if (wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
            val = old + wr->wr.atomic.compare_add;
        else
            val = old == wr->wr.atomic.compare_add ? wr->wr.atomic.swap : old;
        if (val != old)
            done = process_vm_writev(pid, &next, 1, &theirs, 1, 0);
    }
    int err = errno;
    flock(c->atomic_fd, LOCK_UN);
    if (done != 8)
        return mock_move_error(done, err, l);
    /* Into the local sge through the kernel too: unmapped memory is an error, not a crash. */
    done = process_vm_writev(getpid(), &mine, 1, l->iov, 1, 0);
    return done == 8 ? MOCK_OK : mock_move_error(done, errno, l);
}

static enum mock_reason mock_wr_run(struct mock_context *c, struct mock_qp *q, const struct ibv_send_wr *wr,
                                    uint32_t *byte_len)
{
    struct mock_local l;
    struct mock_qp_rec r;
    uint64_t host = 0;
    unsigned access = 0;
    enum mock_reason why = mock_local_resolve(c, q, wr, &l);
    if (!why)
        why = mock_peer_check(c, q, &r);
    if (!why)
        why = mock_remote_check(c, q, wr, &r, l.total, &host, &access);
    if (why)
        return why;
    *byte_len = (uint32_t)l.total;
    if (!l.total)
        return MOCK_OK;
    const uint32_t rkey = mock_is_atomic(wr->opcode) ? wr->wr.atomic.rkey : wr->wr.rdma.rkey;
    if (mock_late_before(c, q, wr->opcode, rkey, access)) /* GSHMEM_MOCK_IB_RELAXED */
        return mock_late_defer(c, q, l.iov, l.n, l.total, r.pid, rkey, host);
    return mock_is_atomic(wr->opcode) ? mock_atomic(c, wr, &l, r.pid, host) : mock_rdma(wr, &l, r.pid, host);
}

void mock_cq_push(struct mock_cq *cq, struct mock_qp *q, const struct ibv_wc *wc, uint64_t seq)
{
    if (cq->count == cq->size) {
        fprintf(stderr, "mock ibv: CQ overrun (cqe %d)\n", cq->cq.cqe);
        abort();
    }
    cq->ring[(cq->head + cq->count++) % cq->size] = (struct mock_cqe){*wc, q, seq};
}

static void mock_report(const struct mock_context *c, const struct mock_qp *q, const struct ibv_send_wr *wr,
                        enum mock_reason why)
{
    static const char *const ops[] = {[IBV_WR_RDMA_WRITE] = "RDMA_WRITE", [IBV_WR_RDMA_READ] = "RDMA_READ",
                                      [IBV_WR_ATOMIC_CMP_AND_SWP] = "CMP_AND_SWP",
                                      [IBV_WR_ATOMIC_FETCH_AND_ADD] = "FETCH_AND_ADD"};
    const int atomic = mock_is_atomic(wr->opcode);
    if (c->quiet)
        return;
    fprintf(stderr,
            "mock ibv: pid %d qp 0x%06x -> 0x%06x: %s wr_id 0x%" PRIx64 " rkey 0x%x raddr 0x%" PRIx64
            " failed: %s (%s, vendor_err 0x%08x)\n",
            (int)getpid(), q->qp.qp_num, q->attr.dest_qp_num, ops[wr->opcode], wr->wr_id,
            atomic ? wr->wr.atomic.rkey : wr->wr.rdma.rkey,
            atomic ? wr->wr.atomic.remote_addr : wr->wr.rdma.remote_addr, mock_reason_str(why),
            ibv_wc_status_str(mock_reason_status(why)), MOCK_VENDOR_ERR(why));
}

static const enum ibv_wc_opcode mock_wc_opcodes[] = {
    [IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE, [IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ,
    [IBV_WR_ATOMIC_CMP_AND_SWP] = IBV_WC_COMP_SWAP, [IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD};

/* Runs one accepted WR; *wc is its completion, and the result says whether it goes to
 * the CQ: always on error, on success when signalled. */
int mock_wr_go(struct mock_context *c, struct mock_qp *q, const struct ibv_send_wr *wr, struct ibv_wc *wc)
{
    *wc = (struct ibv_wc){.wr_id = wr->wr_id, .opcode = mock_wc_opcodes[wr->opcode], .qp_num = q->qp.qp_num};
    enum mock_reason why;
    if (q->st == IBV_QPS_ERR) {
        why = MOCK_FLUSHED;
    } else if (c->fail_after && atomic_fetch_add(&mock_data_wrs, 1) + 1 == c->fail_after) {
        why = MOCK_INJECTED;
        mock_event_push(c, IBV_EVENT_QP_FATAL, &q->qp);
    } else {
        why = mock_wr_run(c, q, wr, &wc->byte_len);
    }
    if (why == MOCK_OK)
        return q->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
    wc->status = mock_reason_status(why);
    wc->vendor_err = MOCK_VENDOR_ERR(why);
    wc->byte_len = 0;
    if (why != MOCK_FLUSHED) {
        mock_report(c, q, wr, why);
        q->st = IBV_QPS_ERR;
        q->qp.state = IBV_QPS_ERR;
        mock_qp_publish(c, q);
    }
    return 1;
}

/* Runs one accepted WR and queues its completion, unless the relaxed-ordering
 * emulation takes it (mock_relaxed.c: a READ or atomic runs late, a fenced WR waits
 * for it, a completion waits for the earlier ones). */
static void mock_wr_execute(struct mock_context *c, struct mock_qp *q, const struct ibv_send_wr *wr)
{
    const uint64_t seq = q->posted++;
    struct ibv_wc wc;
    if (mock_ops_take(c, q, wr, seq))
        return;
    if (mock_wr_go(c, q, wr, &wc))
        mock_cq_push((struct mock_cq *)q->qp.send_cq, q, &wc, seq);
}

int mock_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
    struct mock_context *c = mock_ctx(ibqp->context);
    struct mock_qp *q = (struct mock_qp *)ibqp;
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    for (; wr; wr = wr->next) {
        rc = mock_wr_valid(q, wr);
        if (!rc && q->posted - q->retired >= q->cap.max_send_wr)
            rc = ENOMEM; /* the send queue is full until completions are polled */
        if (rc) {
            *bad_wr = wr;
            break;
        }
        mock_wr_execute(c, q, wr);
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int mock_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
    (void)ibqp;
    *bad_wr = wr;
    return ENOSYS; /* one-sided RDMA only */
}

int mock_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
    (void)ibcq, (void)solicited_only;
    return ENOSYS;
}

/* A polled completion frees its WR's send-queue slot and those of the unsignalled WRs before it. */
int mock_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
    struct mock_context *c = mock_ctx(ibcq->context);
    struct mock_cq *cq = (struct mock_cq *)ibcq;
    int n = 0;
    pthread_mutex_lock(&c->lock);
    while (n < num_entries && cq->count) {
        struct mock_cqe *e = &cq->ring[cq->head];
        wc[n++] = e->wc;
        if (e->qp->retired < e->seq + 1)
            e->qp->retired = e->seq + 1;
        cq->head = (cq->head + 1) % cq->size;
        cq->count--;
    }
    pthread_mutex_unlock(&c->lock);
    return n;
}
