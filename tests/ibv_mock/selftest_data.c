/* Selftest cases in one process: data movement, error completions, the send queue, threads. */
#define _GNU_SOURCE
#include "selftest.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static uint8_t want[4096];

static void check_write(struct st_ep *a, struct st_ep *b, struct st_addr *ba)
{
    /* Three sges gathered into one remote range at an odd offset. */
    st_fill(a->buf, a->len, 1);
    struct ibv_sge sge[3] = {{(uintptr_t)a->buf, 100, a->mr->lkey},
                             {(uintptr_t)a->buf + 200, 100, a->mr->lkey},
                             {(uintptr_t)a->buf + 1001, 57, a->mr->lkey}};
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_WRITE, 1, sge, 3, ba->addr + 511, ba->rkey, IBV_SEND_SIGNALED), 0);
    struct ibv_wc wc = st_expect(a->cq, 1, IBV_WC_SUCCESS);
    CHECK_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
    CHECK_EQ(wc.byte_len, 257);
    CHECK_EQ(wc.qp_num, a->qp->qp_num);
    memset(want, ST_POISON, b->len);
    memcpy(want + 511, a->buf, 100);
    memcpy(want + 611, a->buf + 200, 100);
    memcpy(want + 711, a->buf + 1001, 57);
    st_check_same(b->buf, want, b->len);

    /* Inline: the data is taken at post time, and the lkey is not looked at. */
    uint8_t msg[64];
    st_fill(msg, sizeof(msg), 2);
    memset(b->buf, ST_POISON, b->len);
    struct ibv_sge isge = {(uintptr_t)msg, 48, 0xdeadbeef};
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_WRITE, 2, &isge, 1, ba->addr + 3, ba->rkey, IBV_SEND_INLINE), 0);
    memset(msg, 0, sizeof(msg));
    st_check_landed(b->buf, b->len, 3, 51, 0, 2);
    isge.length = 65; /* the QP was created with max_inline_data 64 */
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_WRITE, 3, &isge, 1, ba->addr, ba->rkey, IBV_SEND_INLINE), EINVAL);
    isge.length = 8;
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_READ, 3, &isge, 1, ba->addr, ba->rkey, IBV_SEND_INLINE), EINVAL);
    st_expect_none(a->cq); /* the inline write was unsignalled */
    CHECK_EQ(a->qp->state, IBV_QPS_RTS);
}

static void check_read(struct st_ep *a, struct st_ep *b, struct st_addr *ba)
{
    st_fill(b->buf, b->len, 3);
    memset(a->buf, ST_POISON, a->len);
    struct ibv_sge sge[2] = {{(uintptr_t)a->buf + 8, 100, a->mr->lkey}, {(uintptr_t)a->buf + 300, 100, a->mr->lkey}};
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_READ, 4, sge, 2, ba->addr + 1000, ba->rkey, IBV_SEND_SIGNALED), 0);
    struct ibv_wc wc = st_expect(a->cq, 4, IBV_WC_SUCCESS);
    CHECK_EQ(wc.opcode, IBV_WC_RDMA_READ);
    CHECK_EQ(wc.byte_len, 200);
    memset(want, ST_POISON, a->len);
    memcpy(want + 8, b->buf + 1000, 100);
    memcpy(want + 300, b->buf + 1100, 100);
    st_check_same(a->buf, want, a->len);

    /* Zero-length WRITE and READ: legal, no rkey needed. */
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_WRITE, 5, NULL, 0, 0, 0, IBV_SEND_SIGNALED), 0);
    CHECK_EQ(st_expect(a->cq, 5, IBV_WC_SUCCESS).byte_len, 0);
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_READ, 6, NULL, 0, 0, 0, IBV_SEND_SIGNALED), 0);
    CHECK_EQ(st_expect(a->cq, 6, IBV_WC_SUCCESS).opcode, IBV_WC_RDMA_READ);
}

static void check_atomics(struct st_ep *a, struct st_ep *b, struct st_addr *ba)
{
    uint64_t *counter = (uint64_t *)(b->buf + 2048), *result = (uint64_t *)(a->buf + 64);
    struct ibv_sge sge = {(uintptr_t)result, 8, a->mr->lkey};
    memset(b->buf, ST_POISON, b->len);
    *counter = 40;
    *result = 0x1111;
    CHECK_EQ(st_post_atomic(a->qp, IBV_WR_ATOMIC_FETCH_AND_ADD, 7, &sge, ba->addr + 2048, ba->rkey, 2, 0), 0);
    struct ibv_wc wc = st_expect(a->cq, 7, IBV_WC_SUCCESS);
    CHECK_EQ(wc.opcode, IBV_WC_FETCH_ADD);
    CHECK_EQ(wc.byte_len, 8);
    CHECK_EQ(*result, 40);
    CHECK_EQ(*counter, 42);
    CHECK_EQ(st_post_atomic(a->qp, IBV_WR_ATOMIC_CMP_AND_SWP, 8, &sge, ba->addr + 2048, ba->rkey, 42, 7), 0);
    CHECK_EQ(st_expect(a->cq, 8, IBV_WC_SUCCESS).opcode, IBV_WC_COMP_SWAP);
    CHECK_EQ(*result, 42);
    CHECK_EQ(*counter, 7);
    CHECK_EQ(st_post_atomic(a->qp, IBV_WR_ATOMIC_CMP_AND_SWP, 9, &sge, ba->addr + 2048, ba->rkey, 42, 9), 0);
    st_expect(a->cq, 9, IBV_WC_SUCCESS);
    CHECK_EQ(*result, 7); /* compare failed: nothing written */
    CHECK_EQ(*counter, 7);
    /* Host byte order both ways: adding 2^32 - 1 carries into the higher bytes in place. */
    CHECK_EQ(st_post_atomic(a->qp, IBV_WR_ATOMIC_FETCH_AND_ADD, 10, &sge, ba->addr + 2048, ba->rkey, 0xffffffffu, 0), 0);
    st_expect(a->cq, 10, IBV_WC_SUCCESS);
    CHECK_EQ(b->buf[2048], 6);
    CHECK_EQ(b->buf[2052], 1);
    CHECK_EQ(b->buf[2047], ST_POISON);
    CHECK_EQ(b->buf[2056], ST_POISON);
}

/* An MR registered with an iova: remote and local addresses are in its iova space. */
static void check_iova(struct st_ep *a, struct st_ep *b)
{
    struct ibv_mr *rmr = ibv_reg_mr_iova2(b->pd, b->buf + 1024, 1024, 0x100000000ull, ST_ALL_ACCESS);
    struct ibv_mr *lmr = ibv_reg_mr_iova2(a->pd, a->buf, 1024, 0x7000, ST_ALL_ACCESS);
    CHECK(rmr && lmr);
    st_fill(a->buf, a->len, 4);
    memset(b->buf, ST_POISON, b->len);
    struct ibv_sge sge = {0x7000 + 16, 32, lmr->lkey};
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_WRITE, 11, &sge, 1, 0x100000000ull + 8, rmr->rkey, IBV_SEND_SIGNALED), 0);
    st_expect(a->cq, 11, IBV_WC_SUCCESS);
    st_check_landed(b->buf, b->len, 1032, 1064, 16, 4);
    CHECK_EQ(ibv_dereg_mr(rmr), 0);
    CHECK_EQ(ibv_dereg_mr(lmr), 0);
}

/* A WR list stops at the first bad WR, the ones before it done. */
static void check_wr_list(struct st_ep *a, struct st_ep *b, struct st_addr *ba)
{
    struct ibv_sge sge = {(uintptr_t)a->buf, 16, a->mr->lkey};
    struct ibv_send_wr wr[3], *bad = NULL;
    memset(wr, 0, sizeof(wr));
    for (int i = 0; i < 3; i++) {
        wr[i] = (struct ibv_send_wr){.wr_id = 20 + (uint64_t)i, .sg_list = &sge, .num_sge = 1,
                                     .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED};
        wr[i].wr.rdma.remote_addr = ba->addr + 64 * (uint64_t)i;
        wr[i].wr.rdma.rkey = ba->rkey;
        wr[i].next = i < 2 ? &wr[i + 1] : NULL;
    }
    wr[1].opcode = IBV_WR_SEND; /* one-sided only */
    st_fill(a->buf, 16, 5);
    memset(b->buf, ST_POISON, b->len);
    CHECK_EQ(ibv_post_send(a->qp, wr, &bad), EINVAL);
    CHECK(bad == &wr[1]);
    st_expect(a->cq, 20, IBV_WC_SUCCESS);
    st_expect_none(a->cq);
    st_check_landed(b->buf, b->len, 0, 16, 0, 5);
}

void case_data(void)
{
    struct st_ep a, b;
    struct st_addr ba;
    st_ep_create(&a, NULL, 4096, 64, 64); /* two contexts in one process */
    st_ep_create(&b, NULL, 4096, 64, 64);
    st_pair(&a, &b);
    st_addr_of(&b, &ba);
    check_write(&a, &b, &ba);
    check_read(&a, &b, &ba);
    check_atomics(&a, &b, &ba);
    check_iova(&a, &b);
    check_wr_list(&a, &b, &ba);
    st_expect_none(b.cq);
    st_ep_destroy(&a);
    st_ep_destroy(&b);
}

/* The WR just posted failed with status and reason: the QP is in the error state and
 * flushes the next WR even unsignalled; then the pair is made anew. */
static void expect_failed(struct st_ep *a, struct st_ep *b, uint64_t wr_id, enum ibv_wc_status status, unsigned reason)
{
    struct ibv_wc wc = st_expect(a->cq, wr_id, status);
    struct ibv_qp_attr q;
    struct ibv_qp_init_attr qi;
    if (wc.vendor_err != ST_VENDOR(reason))
        fprintf(stderr, "vendor_err 0x%x, expected 0x%x\n", wc.vendor_err, ST_VENDOR(reason));
    CHECK_EQ(wc.vendor_err, ST_VENDOR(reason));
    CHECK_EQ(wc.qp_num, a->qp->qp_num);
    CHECK_EQ(ibv_query_qp(a->qp, &q, IBV_QP_STATE, &qi), 0);
    CHECK_EQ(q.qp_state, IBV_QPS_ERR);
    struct ibv_sge sge = {(uintptr_t)a->buf, 8, a->mr->lkey};
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_WRITE, 99, &sge, 1, (uintptr_t)b->buf, b->mr->rkey, 0), 0);
    CHECK_EQ(st_expect(a->cq, 99, IBV_WC_WR_FLUSH_ERR).vendor_err, ST_VENDOR(0x40));
    st_expect_none(a->cq);
    st_pair(a, b);
}

static int write8(struct st_ep *a, uint64_t wr_id, uint64_t raddr, uint32_t rkey)
{
    struct ibv_sge sge = {(uintptr_t)a->buf, 8, a->mr->lkey};
    return st_post(a->qp, IBV_WR_RDMA_WRITE, wr_id, &sge, 1, raddr, rkey, 0);
}

/* Keys, ranges and access rights, on both sides. */
static void check_protection(struct st_ep *a, struct st_ep *b)
{
    const uint64_t bb = (uintptr_t)b->buf;
    const uint32_t rk = b->mr->rkey;
    memset(b->buf, ST_POISON, b->len);
    CHECK_EQ(write8(a, 30, bb, rk ^ 0x5a5a), 0);
    expect_failed(a, b, 30, IBV_WC_REM_ACCESS_ERR, 0x10);
    CHECK_EQ(write8(a, 31, bb + b->len - 4, rk), 0);
    expect_failed(a, b, 31, IBV_WC_REM_ACCESS_ERR, 0x12);
    CHECK_EQ(write8(a, 32, bb - 1, rk), 0);
    expect_failed(a, b, 32, IBV_WC_REM_ACCESS_ERR, 0x12);
    st_check_landed(b->buf, b->len, 0, 0, 0, 0); /* nothing landed */

    struct ibv_mr *ro = ibv_reg_mr(b->pd, b->buf, 64, IBV_ACCESS_REMOTE_READ);
    struct ibv_pd *pd2 = ibv_alloc_pd(b->ctx);
    struct ibv_mr *other = ibv_reg_mr(pd2, b->buf, 64, ST_ALL_ACCESS);
    CHECK(ro && pd2 && other);
    struct ibv_sge sge = {(uintptr_t)a->buf, 8, a->mr->lkey};
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_READ, 33, &sge, 1, bb, ro->rkey, IBV_SEND_SIGNALED), 0);
    st_expect(a->cq, 33, IBV_WC_SUCCESS);
    CHECK_EQ(write8(a, 34, bb, ro->rkey), 0);
    expect_failed(a, b, 34, IBV_WC_REM_ACCESS_ERR, 0x13);
    CHECK_EQ(write8(a, 35, bb, other->rkey), 0);
    expect_failed(a, b, 35, IBV_WC_REM_ACCESS_ERR, 0x11);
    CHECK_EQ(ibv_dereg_mr(ro), 0);
    CHECK_EQ(ibv_dereg_mr(other), 0);
    CHECK_EQ(ibv_dealloc_pd(pd2), 0);

    sge.lkey ^= 0x5a5a;
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_WRITE, 36, &sge, 1, bb, rk, 0), 0);
    expect_failed(a, b, 36, IBV_WC_LOC_PROT_ERR, 0x01);
    sge = (struct ibv_sge){(uintptr_t)a->buf + a->len - 4, 8, a->mr->lkey};
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_WRITE, 37, &sge, 1, bb, rk, 0), 0);
    expect_failed(a, b, 37, IBV_WC_LOC_PROT_ERR, 0x03);
    struct ibv_mr *nolw = ibv_reg_mr(a->pd, a->buf, 64, IBV_ACCESS_REMOTE_READ);
    CHECK(nolw);
    sge = (struct ibv_sge){(uintptr_t)a->buf, 8, nolw->lkey};
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_READ, 38, &sge, 1, bb, rk, 0), 0);
    expect_failed(a, b, 38, IBV_WC_LOC_PROT_ERR, 0x04);
    CHECK_EQ(ibv_dereg_mr(nolw), 0);

    /* Atomics: 8-byte aligned remote address, one 8-byte local sge. */
    sge = (struct ibv_sge){(uintptr_t)a->buf, 8, a->mr->lkey};
    CHECK_EQ(st_post_atomic(a->qp, IBV_WR_ATOMIC_FETCH_AND_ADD, 39, &sge, bb + 4, rk, 1, 0), 0);
    expect_failed(a, b, 39, IBV_WC_REM_INV_REQ_ERR, 0x20);
    sge.length = 4;
    CHECK_EQ(st_post_atomic(a->qp, IBV_WR_ATOMIC_CMP_AND_SWP, 40, &sge, bb, rk, 0, 1), 0);
    expect_failed(a, b, 40, IBV_WC_LOC_LEN_ERR, 0x06);
}

/* Modifies b's QP in RTS (e.g. its access flags) with mask. */
static void modify_rts(struct st_ep *b, struct ibv_qp_attr *at, int mask) { CHECK_EQ(ibv_modify_qp(b->qp, at, mask), 0); }

/* What makes the requester retry until it gives up: the responder QP and the path. */
static void check_unreachable(struct st_ep *a, struct st_ep *b)
{
    const uint64_t bb = (uintptr_t)b->buf;
    const uint32_t rk = b->mr->rkey;
    struct ibv_qp_attr at = {.qp_state = IBV_QPS_RESET};
    struct st_addr aa, ba;
    CHECK_EQ(ibv_modify_qp(b->qp, &at, IBV_QP_STATE), 0);
    CHECK_EQ(write8(a, 41, bb, rk), 0);
    expect_failed(a, b, 41, IBV_WC_RETRY_EXC_ERR, 0x32);

    at = (struct ibv_qp_attr){.qp_access_flags = IBV_ACCESS_REMOTE_READ};
    modify_rts(b, &at, IBV_QP_ACCESS_FLAGS);
    CHECK_EQ(write8(a, 42, bb, rk), 0);
    expect_failed(a, b, 42, IBV_WC_REM_ACCESS_ERR, 0x14);

    at = (struct ibv_qp_attr){.qp_state = IBV_QPS_RESET};
    CHECK_EQ(ibv_modify_qp(a->qp, &at, IBV_QP_STATE), 0);
    CHECK_EQ(ibv_modify_qp(b->qp, &at, IBV_QP_STATE), 0);
    st_addr_of(a, &aa);
    st_addr_of(b, &ba);
    st_connect(b, &aa);
    CHECK_EQ(st_qp_init(a->qp), 0);
    CHECK_EQ(st_qp_rtr(a, &ba), 0);
    CHECK_EQ(st_qp_rts(a->qp, (ba.psn + 1) & 0xffffff), 0);
    CHECK_EQ(write8(a, 43, bb, rk), 0);
    expect_failed(a, b, 43, IBV_WC_RETRY_EXC_ERR, 0x35);

}

/* Addressing: GID types, QP numbers; and a READ nobody may answer. */
static void check_misaddressed(struct st_ep *a, struct st_ep *b)
{
    const uint64_t bb = (uintptr_t)b->buf;
    const uint32_t rk = b->mr->rkey;
    struct ibv_qp_attr at;
    struct st_addr aa, ba;
    /* RoCE v1 source GID against a RoCE v2 peer: the same IP, still no path. */
    a->gid_index = 2;
    st_pair(a, b);
    CHECK_EQ(write8(a, 44, bb, rk), 0);
    a->gid_index = 3;
    expect_failed(a, b, 44, IBV_WC_RETRY_EXC_ERR, 0x34);

    /* The peer's dest_qp_num elsewhere; then a dest_qp_num nobody has. */
    at = (struct ibv_qp_attr){.qp_state = IBV_QPS_RESET};
    CHECK_EQ(ibv_modify_qp(b->qp, &at, IBV_QP_STATE), 0);
    st_addr_of(a, &aa);
    aa.qpn ^= 1;
    st_connect(b, &aa);
    CHECK_EQ(write8(a, 45, bb, rk), 0);
    expect_failed(a, b, 45, IBV_WC_RETRY_EXC_ERR, 0x33);
    CHECK_EQ(ibv_modify_qp(a->qp, &at, IBV_QP_STATE), 0);
    st_addr_of(b, &ba);
    ba.qpn = 0xffffff; /* never allocated */
    st_connect(a, &ba);
    CHECK_EQ(write8(a, 46, bb, rk), 0);
    expect_failed(a, b, 46, IBV_WC_RETRY_EXC_ERR, 0x30);

    /* READ with max_rd_atomic 0 cannot be answered. */
    at = (struct ibv_qp_attr){.qp_state = IBV_QPS_RESET};
    CHECK_EQ(ibv_modify_qp(a->qp, &at, IBV_QP_STATE), 0);
    st_addr_of(b, &ba);
    CHECK_EQ(st_qp_init(a->qp), 0);
    CHECK_EQ(st_qp_rtr(a, &ba), 0);
    st_rts_attr(ba.psn, &at);
    at.max_rd_atomic = 0;
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_RTS_MASK), 0);
    struct ibv_sge sge = {(uintptr_t)a->buf, 8, a->mr->lkey};
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_READ, 47, &sge, 1, bb, rk, 0), 0);
    expect_failed(a, b, 47, IBV_WC_REM_INV_REQ_ERR, 0x21);
}

void case_errors(void)
{
    struct st_ep a, b, d;
    st_ep_create(&a, NULL, 256, 16, 16);
    st_ep_create(&b, NULL, 256, 16, 16);
    st_pair(&a, &b);
    check_protection(&a, &b);
    check_unreachable(&a, &b);
    check_misaddressed(&a, &b);

    /* The responder of a failed requester sees it in the error state, so fails too. */
    CHECK_EQ(write8(&a, 50, (uintptr_t)b.buf - 8, b.mr->rkey), 0);
    st_expect(a.cq, 50, IBV_WC_REM_ACCESS_ERR);
    CHECK_EQ(write8(&b, 51, (uintptr_t)a.buf, a.mr->rkey), 0);
    CHECK_EQ(st_expect(b.cq, 51, IBV_WC_RETRY_EXC_ERR).vendor_err, ST_VENDOR(0x32));
    st_pair(&a, &b);

    /* A port that is down reaches nobody and is reached by nobody. */
    setenv("GSHMEM_MOCK_IB_PORT", "down", 1);
    st_ep_create(&d, NULL, 256, 16, 16);
    unsetenv("GSHMEM_MOCK_IB_PORT");
    st_pair(&d, &b);
    CHECK_EQ(write8(&d, 52, (uintptr_t)b.buf, b.mr->rkey), 0);
    expect_failed(&d, &b, 52, IBV_WC_RETRY_EXC_ERR, 0x36);
    CHECK_EQ(write8(&b, 53, (uintptr_t)d.buf, d.mr->rkey), 0);
    expect_failed(&b, &d, 53, IBV_WC_RETRY_EXC_ERR, 0x36);
    st_ep_destroy(&d);

    /* Made anew, the pair works again. */
    st_pair(&a, &b);
    st_fill(a.buf, 64, 6);
    memset(b.buf, ST_POISON, b.len);
    struct ibv_sge sge = {(uintptr_t)a.buf, 64, a.mr->lkey};
    CHECK_EQ(st_post(a.qp, IBV_WR_RDMA_WRITE, 54, &sge, 1, (uintptr_t)b.buf + 64, b.mr->rkey, IBV_SEND_SIGNALED), 0);
    st_expect(a.cq, 54, IBV_WC_SUCCESS);
    st_check_landed(b.buf, b.len, 64, 128, 0, 6);
    st_expect_none(b.cq);
    st_ep_destroy(&a);
    st_ep_destroy(&b);
}

static int post_n(struct st_ep *a, struct st_ep *b, int n, int signal_last)
{
    for (int i = 0; i < n; i++) {
        struct ibv_sge sge = {(uintptr_t)a->buf, 8, a->mr->lkey};
        unsigned flags = signal_last && i == n - 1 ? IBV_SEND_SIGNALED : 0;
        int rc = st_post(a->qp, IBV_WR_RDMA_WRITE, 60 + (uint64_t)i, &sge, 1, (uintptr_t)b->buf, b->mr->rkey, flags);
        if (rc)
            return rc;
    }
    return 0;
}

/* max_send_wr WRs outstanding at most; polling a completion frees its WR and those before it. */
void case_send_queue(void)
{
    struct st_ep a, b;
    st_ep_create(&a, NULL, 64, 4, 8);
    st_ep_create(&b, a.ctx, 64, 4, 8); /* a loopback pair in one context */
    st_pair(&a, &b);
    CHECK_EQ(post_n(&a, &b, 4, 1), 0);
    CHECK_EQ(post_n(&a, &b, 1, 0), ENOMEM);
    st_expect(a.cq, 63, IBV_WC_SUCCESS);
    CHECK_EQ(post_n(&a, &b, 4, 1), 0); /* all four slots free again */
    CHECK_EQ(post_n(&a, &b, 1, 1), ENOMEM);
    st_expect(a.cq, 63, IBV_WC_SUCCESS);

    /* An error completion is always there, even unsignalled, and frees the slots too. */
    CHECK_EQ(post_n(&a, &b, 3, 0), 0);
    CHECK_EQ(write8(&a, 70, (uintptr_t)b.buf, 0), 0);
    CHECK_EQ(write8(&a, 71, (uintptr_t)b.buf, b.mr->rkey), ENOMEM);
    st_expect(a.cq, 70, IBV_WC_REM_ACCESS_ERR);
    CHECK_EQ(post_n(&a, &b, 4, 0), 0); /* flushed: each one completes */
    for (int i = 0; i < 4; i++)
        st_expect(a.cq, 60 + (uint64_t)i, IBV_WC_WR_FLUSH_ERR);

    /* Never signalled: the queue stays full, as on hardware, until the QP is reset. */
    st_pair(&a, &b);
    CHECK_EQ(post_n(&a, &b, 4, 0), 0);
    CHECK_EQ(post_n(&a, &b, 1, 0), ENOMEM);
    st_expect_none(a.cq);
    st_pair(&a, &b);
    CHECK_EQ(post_n(&a, &b, 4, 1), 0);
    st_expect(a.cq, 63, IBV_WC_SUCCESS);
    st_ep_destroy(&b);
    st_ep_destroy(&a);

    /* sq_sig_all: every WR completes. */
    st_ep_create(&a, NULL, 64, 4, 8);
    st_ep_create(&b, a.ctx, 64, 4, 8);
    struct ibv_qp_init_attr ia = {.send_cq = a.cq, .recv_cq = a.cq, .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
                                  .cap = {.max_send_wr = 4, .max_send_sge = 1}};
    CHECK_EQ(ibv_destroy_qp(a.qp), 0);
    CHECK(a.qp = ibv_create_qp(a.pd, &ia));
    st_pair(&a, &b);
    CHECK_EQ(post_n(&a, &b, 2, 0), 0);
    st_expect(a.cq, 60, IBV_WC_SUCCESS);
    st_expect(a.cq, 61, IBV_WC_SUCCESS);
    st_expect_none(a.cq);
    st_ep_destroy(&b);
    st_ep_destroy(&a);
}

struct thread_arg {
    struct ibv_context *ctx;
    unsigned seed;
};

/* Writes and reads back through a pair of its own, on a context shared with another thread. */
static void *thread_run(void *p)
{
    struct thread_arg *t = p;
    struct st_ep a, b;
    st_ep_create(&a, t->ctx, 4096, 16, 16);
    st_ep_create(&b, t->ctx, 4096, 16, 16);
    st_pair(&a, &b);
    for (unsigned i = 0; i < 2000; i++) {
        size_t off = (i % 32) * 64;
        struct ibv_sge sge = {(uintptr_t)a.buf + off, 64, a.mr->lkey};
        unsigned flags = i % 8 == 7 ? IBV_SEND_SIGNALED : 0;
        st_fill(a.buf + off, 64, t->seed + i);
        CHECK_EQ(st_post(a.qp, IBV_WR_RDMA_WRITE, i, &sge, 1, (uintptr_t)b.buf + off, b.mr->rkey, flags), 0);
        if (flags)
            st_expect(a.cq, i, IBV_WC_SUCCESS);
        CHECK(!memcmp(a.buf + off, b.buf + off, 64));
    }
    st_ep_destroy(&b);
    st_ep_destroy(&a);
    return NULL;
}

void case_threads(void)
{
    struct ibv_context *ctx = st_open("mockib0");
    pthread_t th[2];
    struct thread_arg arg[2] = {{ctx, 1}, {ctx, 5000}};
    for (int i = 0; i < 2; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, thread_run, &arg[i]), 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(pthread_join(th[i], NULL), 0);
    CHECK_EQ(ibv_close_device(ctx), 0);
}

/* GSHMEM_MOCK_IB_RELAXED: a relaxed-ordered write lands late unless a read or an atomic
 * through the same QP into the same MR pushes it; a later relaxed write overtakes it;
 * destroying the QP lands what is left. */
static void relaxed_write(struct st_ep *a, uint64_t id, size_t src, uint64_t raddr, uint32_t rkey, size_t len)
{
    struct ibv_sge sge = {(uintptr_t)a->buf + src, (uint32_t)len, a->mr->lkey};
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_WRITE, id, &sge, 1, raddr, rkey, IBV_SEND_SIGNALED), 0);
    st_expect(a->cq, id, IBV_WC_SUCCESS); /* completes at once: the responder took it */
}

/* The next completion, polled for up to 2 s (READs and atomics run a tick late). */
static struct ibv_wc relaxed_expect(struct ibv_cq *cq, uint64_t wr_id)
{
    struct ibv_wc wc;
    int n = 0;
    for (int i = 0; i < 2000 && (n = ibv_poll_cq(cq, 1, &wc)) == 0; i++)
        usleep(1000);
    CHECK_EQ(n, 1);
    CHECK_EQ(wc.status, IBV_WC_SUCCESS);
    CHECK_EQ(wc.wr_id, wr_id);
    return wc;
}

static void landed(uint8_t *want, const struct st_ep *a, size_t src, size_t dst, size_t len)
{
    memcpy(want + dst, a->buf + src, len);
}

void case_relaxed(void)
{
    static uint8_t want_b[4096];
    struct st_ep a, b;
    struct st_addr ba;
    setenv("GSHMEM_MOCK_IB_RELAXED", "2000", 1); /* read when the contexts open */
    st_ep_create(&a, NULL, 4096, 64, 64);
    st_ep_create(&b, NULL, 4096, 64, 64);
    st_pair(&a, &b);
    st_addr_of(&b, &ba);
    /* the first half of b's buffer again, with relaxed ordering */
    struct ibv_mr *ro = ibv_reg_mr_iova2(b.pd, b.buf, 2048, (uintptr_t)b.buf, ST_ALL_ACCESS | IBV_ACCESS_RELAXED_ORDERING);
    CHECK(ro);
    const uint64_t base = (uintptr_t)b.buf;
    st_fill(a.buf, a.len, 7);
    memset(b.buf, ST_POISON, b.len);
    memset(want_b, ST_POISON, sizeof(want_b));

    relaxed_write(&a, 1, 0, base + 0, ro->rkey, 16); /* the oldest: held 2 s */
    st_check_same(b.buf, want_b, b.len);
    relaxed_write(&a, 2, 100, base + 64, ro->rkey, 24); /* held 200 ms */
    for (int i = 0; i < 1000 && b.buf[64] == ST_POISON; i++)
        usleep(1000);
    landed(want_b, &a, 100, 64, 24); /* the second overtook the first */
    st_check_same(b.buf, want_b, b.len);

    /* A READ through the same QP into the same MR pushes the first ahead of itself. */
    struct ibv_sge rs = {(uintptr_t)a.buf + 3000, 8, a.mr->lkey};
    CHECK_EQ(st_post(a.qp, IBV_WR_RDMA_READ, 3, &rs, 1, base + 512, ro->rkey, IBV_SEND_SIGNALED), 0);
    relaxed_expect(a.cq, 3);
    landed(want_b, &a, 0, 0, 16);
    st_check_same(b.buf, want_b, b.len);

    /* A READ runs a tick late; a WRITE without a fence passes it (b's own MR lands at
     * once) but completes after it; a fenced WRITE waits for it. */
    st_fill(a.buf + 3100, 8, 9);
    CHECK_EQ(st_post(a.qp, IBV_WR_RDMA_READ, 30, &rs, 1, base + 520, ro->rkey, IBV_SEND_SIGNALED), 0);
    struct ibv_sge ws = {(uintptr_t)a.buf + 600, 8, a.mr->lkey};
    CHECK_EQ(st_post(a.qp, IBV_WR_RDMA_WRITE, 31, &ws, 1, ba.addr + 3500, ba.rkey, IBV_SEND_SIGNALED), 0);
    landed(want_b, &a, 600, 3500, 8); /* landed before the READ ran */
    st_check_same(b.buf, want_b, b.len);
    struct ibv_sge fs = {(uintptr_t)a.buf + 700, 8, a.mr->lkey};
    CHECK_EQ(st_post(a.qp, IBV_WR_RDMA_READ, 32, &rs, 1, base + 528, ro->rkey, 0), 0);
    CHECK_EQ(st_post(a.qp, IBV_WR_RDMA_WRITE, 33, &fs, 1, ba.addr + 3600, ba.rkey, IBV_SEND_SIGNALED | IBV_SEND_FENCE), 0);
    st_check_same(b.buf, want_b, b.len); /* the fenced WRITE waits */
    relaxed_expect(a.cq, 30);           /* completions in order: the READ's first */
    relaxed_expect(a.cq, 31);
    relaxed_expect(a.cq, 33);
    landed(want_b, &a, 700, 3600, 8);
    st_check_same(b.buf, want_b, b.len);

    /* So does an atomic, which also sees the bytes it lands on. */
    relaxed_write(&a, 4, 200, base + 1024, ro->rkey, 8);
    struct ibv_sge as = {(uintptr_t)a.buf + 3008, 8, a.mr->lkey};
    uint64_t before;
    memcpy(&before, a.buf + 200, 8);
    CHECK_EQ(st_post_atomic(a.qp, IBV_WR_ATOMIC_FETCH_AND_ADD, 5, &as, base + 1024, ro->rkey, 1, 0), 0);
    relaxed_expect(a.cq, 5);
    uint64_t fetched, after = before + 1;
    memcpy(&fetched, a.buf + 3008, 8);
    CHECK_EQ(fetched, before);
    memcpy(want_b + 1024, &after, 8);
    st_check_same(b.buf, want_b, b.len);

    /* A write into another MR (without relaxed ordering: it lands at once) does not push
     * it: one MR, one path. */
    relaxed_write(&a, 6, 300, base + 256, ro->rkey, 32);
    relaxed_write(&a, 7, 400, ba.addr + 3000, ba.rkey, 16); /* b's own MR: no relaxed ordering */
    landed(want_b, &a, 400, 3000, 16);
    st_check_same(b.buf, want_b, b.len);
    for (int i = 0; i < 5000 && b.buf[256] == ST_POISON; i++) /* its time comes (2 s) */
        usleep(1000);
    landed(want_b, &a, 300, 256, 32);
    st_check_same(b.buf, want_b, b.len);

    /* Destroying the QP lands what is left. */
    relaxed_write(&a, 8, 500, base + 1500, ro->rkey, 40);
    st_check_same(b.buf, want_b, b.len);
    CHECK_EQ(ibv_destroy_qp(a.qp), 0);
    landed(want_b, &a, 500, 1500, 40);
    st_check_same(b.buf, want_b, b.len);
    a.qp = NULL;
    CHECK_EQ(ibv_dereg_mr(ro), 0);
    CHECK_EQ(ibv_dereg_mr(a.mr), 0);
    CHECK_EQ(ibv_destroy_cq(a.cq), 0);
    CHECK_EQ(ibv_dealloc_pd(a.pd), 0);
    CHECK_EQ(ibv_close_device(a.ctx), 0);
    free(a.buf);
    st_ep_destroy(&b);
}
