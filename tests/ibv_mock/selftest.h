/*
 * Helpers of the mock's selftest: checks that exit the case's process, endpoints
 * (context, PD, CQ, QP, a registered buffer) and the RC connection steps.
 */
#ifndef MOCK_SELFTEST_H
#define MOCK_SELFTEST_H

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                    \
    do {                                                                                               \
        if (!(cond)) {                                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                 \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

#define CHECK_EQ(a, b)                                                                                 \
    do {                                                                                               \
        long long a_ = (long long)(a), b_ = (long long)(b);                                            \
        if (a_ != b_) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, #a, \
                    #b, a_, b_);                                                                       \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

#define ST_POISON 0xa5
#define ST_ALL_ACCESS                                                                                  \
    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
/* vendor_err of a mock error completion with reason r (mock_ibv.h's enum). */
#define ST_VENDOR(r) (0x6d6b0000u | (r))

struct st_ep {
    struct ibv_context *ctx;
    int own_ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    uint8_t *buf;
    size_t len;
    struct ibv_mr *mr;
    int gid_index; /* source GID on RoCE (3: RoCE v2, IPv4) */
};

/* What a peer needs to connect to an endpoint and reach its buffer. */
struct st_addr {
    uint32_t qpn, rkey, psn;
    uint16_t lid;
    uint64_t addr;
    uint8_t gid[16];
};

struct ibv_context *st_open_maybe(const char *name);
struct ibv_context *st_open(const char *name);
/* ctx NULL: opens mockib0 for the endpoint. */
void st_ep_create(struct st_ep *e, struct ibv_context *ctx, size_t len, uint32_t max_send_wr, int cqe);
void st_ep_destroy(struct st_ep *e);
void st_addr_of(const struct st_ep *e, struct st_addr *a);
#define ST_INIT_MASK (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define ST_RTR_MASK                                                                                    \
    (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | \
     IBV_QP_MIN_RNR_TIMER)
#define ST_RTS_MASK                                                                                    \
    (IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)

/* The rq_psn an endpoint's QP expects: derived from its number, so both sides know it. */
uint32_t st_psn(uint32_t qpn);
int st_qp_init(struct ibv_qp *qp);
/* The attributes st_qp_rtr and st_qp_rts use, for tests that spoil one of them. */
void st_rtr_attr(struct st_ep *e, const struct st_addr *peer, struct ibv_qp_attr *a);
void st_rts_attr(uint32_t sq_psn, struct ibv_qp_attr *a);
int st_qp_rtr(struct st_ep *e, const struct st_addr *peer);
int st_qp_rts(struct ibv_qp *qp, uint32_t sq_psn);
void st_connect(struct st_ep *e, const struct st_addr *peer);
/* Resets both QPs and connects them to each other again. */
void st_pair(struct st_ep *a, struct st_ep *b);

int st_post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id, struct ibv_sge *sge, int nsge, uint64_t raddr,
            uint32_t rkey, unsigned flags);
int st_post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id, struct ibv_sge *sge, uint64_t raddr,
                   uint32_t rkey, uint64_t compare_add, uint64_t swap);
/* Polls exactly one completion (there must be one) and checks it. */
struct ibv_wc st_expect(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status);
void st_expect_none(struct ibv_cq *cq);

void st_fill(uint8_t *p, size_t n, unsigned seed);
uint8_t st_pattern(size_t i, unsigned seed);
void st_check_same(const uint8_t *got, const uint8_t *want, size_t n);
/* Whether p[from, to) holds the pattern (seed, counted from pattern_start) and the rest of p[0, n) the poison. */
void st_check_landed(const uint8_t *p, size_t n, size_t from, size_t to, size_t pattern_start, unsigned seed);

/* Whether the registry holds kind-<key> ("qp" or "mr"). */
int st_registry_has(const char *kind, uint32_t key);

/* Cases: each runs in a process of its own and exits on the first failed check. */
void case_devices(void);
void case_mr_pd(void);
void case_qp_state(void);
void case_data(void);
void case_errors(void);
void case_send_queue(void);
void case_threads(void);
void case_two_processes(void);
void case_fault_injection(void);
void case_cq_overrun(void);
void case_relaxed(void);

#endif
