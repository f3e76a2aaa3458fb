/* Endpoints, connection steps, posting and polling for the mock's selftest. */
#define _GNU_SOURCE
#include "selftest.h"

#include <string.h>
#include <unistd.h>

struct ibv_context *st_open_maybe(const char *name)
{
    int n = -1;
    struct ibv_device **list = ibv_get_device_list(&n);
    struct ibv_context *ctx = NULL;
    CHECK(list);
    for (int i = 0; i < n; i++)
        if (!strcmp(ibv_get_device_name(list[i]), name))
            ctx = ibv_open_device(list[i]);
    ibv_free_device_list(list);
    return ctx;
}

struct ibv_context *st_open(const char *name)
{
    struct ibv_context *ctx = st_open_maybe(name);
    CHECK(ctx);
    return ctx;
}

void st_ep_create(struct st_ep *e, struct ibv_context *ctx, size_t len, uint32_t max_send_wr, int cqe)
{
    memset(e, 0, sizeof(*e));
    e->own_ctx = !ctx;
    e->ctx = ctx ? ctx : st_open("mockib0");
    CHECK(e->pd = ibv_alloc_pd(e->ctx));
    CHECK(e->cq = ibv_create_cq(e->ctx, cqe, NULL, NULL, 0));
    struct ibv_qp_init_attr ia = {.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = max_send_wr, .max_recv_wr = 1, .max_send_sge = 4,
                                          .max_recv_sge = 1, .max_inline_data = 64}};
    CHECK(e->qp = ibv_create_qp(e->pd, &ia));
    CHECK_EQ(e->qp->state, IBV_QPS_RESET);
    e->len = len;
    CHECK(e->buf = aligned_alloc(64, (len + 63) & ~(size_t)63));
    memset(e->buf, ST_POISON, len);
    CHECK(e->mr = ibv_reg_mr(e->pd, e->buf, len, ST_ALL_ACCESS));
    CHECK(e->mr->lkey && e->mr->rkey);
    e->gid_index = 3;
}

void st_ep_destroy(struct st_ep *e)
{
    CHECK_EQ(ibv_destroy_qp(e->qp), 0);
    CHECK_EQ(ibv_dereg_mr(e->mr), 0);
    CHECK_EQ(ibv_destroy_cq(e->cq), 0);
    CHECK_EQ(ibv_dealloc_pd(e->pd), 0);
    if (e->own_ctx)
        CHECK_EQ(ibv_close_device(e->ctx), 0);
    free(e->buf);
}

uint32_t st_psn(uint32_t qpn) { return (qpn * 2654435761u) & 0xffffff; }

void st_addr_of(const struct st_ep *e, struct st_addr *a)
{
    struct ibv_port_attr port;
    union ibv_gid gid;
    memset(a, 0, sizeof(*a));
    CHECK_EQ(ibv_query_port(e->ctx, 1, &port), 0);
    CHECK_EQ(ibv_query_gid(e->ctx, 1, port.link_layer == IBV_LINK_LAYER_INFINIBAND ? 0 : e->gid_index, &gid), 0);
    a->qpn = e->qp->qp_num;
    a->rkey = e->mr->rkey;
    a->psn = st_psn(e->qp->qp_num);
    a->lid = port.lid;
    a->addr = (uintptr_t)e->buf;
    memcpy(a->gid, gid.raw, 16);
}

int st_qp_init(struct ibv_qp *qp)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qp_access_flags = ST_ALL_ACCESS};
    return ibv_modify_qp(qp, &a, ST_INIT_MASK);
}

void st_rtr_attr(struct st_ep *e, const struct st_addr *peer, struct ibv_qp_attr *a)
{
    struct ibv_port_attr port;
    CHECK_EQ(ibv_query_port(e->ctx, 1, &port), 0);
    memset(a, 0, sizeof(*a));
    a->qp_state = IBV_QPS_RTR;
    a->path_mtu = IBV_MTU_1024;
    a->dest_qp_num = peer->qpn;
    a->rq_psn = st_psn(e->qp->qp_num);
    a->max_dest_rd_atomic = 16;
    a->min_rnr_timer = 12;
    a->ah_attr.port_num = 1;
    if (port.link_layer == IBV_LINK_LAYER_INFINIBAND) {
        a->ah_attr.dlid = peer->lid;
    } else {
        a->ah_attr.is_global = 1;
        a->ah_attr.grh.hop_limit = 64;
        a->ah_attr.grh.sgid_index = (uint8_t)e->gid_index;
        memcpy(a->ah_attr.grh.dgid.raw, peer->gid, 16);
    }
}

int st_qp_rtr(struct st_ep *e, const struct st_addr *peer)
{
    struct ibv_qp_attr a;
    st_rtr_attr(e, peer, &a);
    return ibv_modify_qp(e->qp, &a, ST_RTR_MASK);
}

void st_rts_attr(uint32_t sq_psn, struct ibv_qp_attr *a)
{
    memset(a, 0, sizeof(*a));
    a->qp_state = IBV_QPS_RTS;
    a->sq_psn = sq_psn;
    a->timeout = 14;
    a->retry_cnt = 7;
    a->rnr_retry = 7;
    a->max_rd_atomic = 16;
}

int st_qp_rts(struct ibv_qp *qp, uint32_t sq_psn)
{
    struct ibv_qp_attr a;
    st_rts_attr(sq_psn, &a);
    return ibv_modify_qp(qp, &a, ST_RTS_MASK);
}

void st_connect(struct st_ep *e, const struct st_addr *peer)
{
    CHECK_EQ(st_qp_init(e->qp), 0);
    CHECK_EQ(st_qp_rtr(e, peer), 0);
    CHECK_EQ(st_qp_rts(e->qp, peer->psn), 0);
    CHECK_EQ(e->qp->state, IBV_QPS_RTS);
}

void st_pair(struct st_ep *a, struct st_ep *b)
{
    struct ibv_qp_attr reset = {.qp_state = IBV_QPS_RESET};
    struct st_addr aa, ba;
    CHECK_EQ(ibv_modify_qp(a->qp, &reset, IBV_QP_STATE), 0);
    CHECK_EQ(ibv_modify_qp(b->qp, &reset, IBV_QP_STATE), 0);
    st_addr_of(a, &aa);
    st_addr_of(b, &ba);
    st_connect(a, &ba);
    st_connect(b, &aa);
}

int st_post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id, struct ibv_sge *sge, int nsge, uint64_t raddr,
            uint32_t rkey, unsigned flags)
{
    struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = sge, .num_sge = nsge, .opcode = op, .send_flags = flags};
    struct ibv_send_wr *bad = NULL;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    int rc = ibv_post_send(qp, &wr, &bad);
    CHECK(rc ? bad == &wr : bad == NULL);
    return rc;
}

int st_post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id, struct ibv_sge *sge, uint64_t raddr,
                   uint32_t rkey, uint64_t compare_add, uint64_t swap)
{
    struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = sge, .num_sge = 1, .opcode = op,
                             .send_flags = IBV_SEND_SIGNALED};
    struct ibv_send_wr *bad = NULL;
    wr.wr.atomic.remote_addr = raddr;
    wr.wr.atomic.rkey = rkey;
    wr.wr.atomic.compare_add = compare_add;
    wr.wr.atomic.swap = swap;
    int rc = ibv_post_send(qp, &wr, &bad);
    CHECK(rc ? bad == &wr : bad == NULL);
    return rc;
}

struct ibv_wc st_expect(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status)
{
    struct ibv_wc wc;
    memset(&wc, 0, sizeof(wc));
    CHECK_EQ(ibv_poll_cq(cq, 1, &wc), 1);
    if (wc.status != status)
        fprintf(stderr, "completion of wr %llu: \"%s\", expected \"%s\" (vendor_err 0x%x)\n",
                (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), ibv_wc_status_str(status),
                wc.vendor_err);
    CHECK_EQ(wc.status, status);
    CHECK_EQ(wc.wr_id, wr_id);
    return wc;
}

void st_expect_none(struct ibv_cq *cq)
{
    struct ibv_wc wc;
    CHECK_EQ(ibv_poll_cq(cq, 1, &wc), 0);
}

uint8_t st_pattern(size_t i, unsigned seed)
{
    uint8_t v = (uint8_t)(i * 131 + seed * 17 + (i >> 8));
    return v == ST_POISON ? (uint8_t)~v : v; /* never the poison: a missed byte must show */
}

void st_fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = st_pattern(i, seed);
}

void st_check_same(const uint8_t *got, const uint8_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            fprintf(stderr, "byte %zu of [0, %zu): 0x%02x, expected 0x%02x\n", i, n, got[i], want[i]);
            exit(1);
        }
}

void st_check_landed(const uint8_t *p, size_t n, size_t from, size_t to, size_t pattern_start, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t want = i >= from && i < to ? st_pattern(pattern_start + i - from, seed) : ST_POISON;
        if (p[i] != want) {
            fprintf(stderr, "byte %zu of [0, %zu): 0x%02x, expected 0x%02x (data in [%zu, %zu))\n", i, n, p[i], want,
                    from, to);
            exit(1);
        }
    }
}

int st_registry_has(const char *kind, uint32_t key)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s-%08x", getenv("GSHMEM_MOCK_IB_DIR"), kind, key);
    return access(path, F_OK) == 0;
}
