/*
 * A mock libibverbs for tests: one host, several processes, an emulated RDMA NIC.
 * Objects embed the public verbs struct first so the pointers the caller holds cast
 * back to ours. Processes find each other through files in a registry directory
 * (mock_registry.c); data moves with process_vm_readv/writev inside post_send.
 * Internal to the mock: nothing here is exported.
 */
#ifndef MOCK_IBV_H
#define MOCK_IBV_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define MOCK_EXPORT __attribute__((visibility("default")))

#define MOCK_MAX_DEVICES 8
#define MOCK_GID_TBL_LEN 8
#define MOCK_MAX_INLINE 256
#define MOCK_MAX_QP_WR 32768
#define MOCK_MAX_SGE 16
#define MOCK_MAX_CQE 4194303
#define MOCK_MAX_RD_ATOM 16
#define MOCK_MAX_MSG_SZ (1u << 30)
#define MOCK_EVENTS_MAX 64
#define MOCK_DIR_MAX 3072 /* leaves room in a PATH_MAX buffer for "/<file name>" */

/* vendor_err of an error completion: "mk" in the high half, the reason below. */
#define MOCK_VENDOR_ERR(reason) (0x6d6b0000u | (uint32_t)(reason))

enum mock_reason {
    MOCK_OK = 0,
    MOCK_LKEY_UNKNOWN = 0x01,  /* no local MR with this lkey */
    MOCK_LKEY_PD = 0x02,       /* local MR of another PD */
    MOCK_LKEY_RANGE = 0x03,    /* sge outside the local MR */
    MOCK_LKEY_NO_WRITE = 0x04, /* READ/atomic target MR without LOCAL_WRITE */
    MOCK_LOCAL_FAULT = 0x05,   /* registered local memory no longer mapped */
    MOCK_LEN = 0x06,           /* message too long, or atomic sge not 8 bytes */
    MOCK_RKEY_UNKNOWN = 0x10,
    MOCK_RKEY_PD = 0x11,       /* rkey of an MR not in the remote QP's PD */
    MOCK_RKEY_RANGE = 0x12,
    MOCK_RKEY_ACCESS = 0x13,   /* MR lacks the remote access the op needs */
    MOCK_RQP_ACCESS = 0x14,    /* remote QP's qp_access_flags lack it */
    MOCK_REMOTE_FAULT = 0x15,  /* remote registered memory no longer mapped */
    MOCK_MISALIGNED = 0x20,
    MOCK_NO_RD_ATOMIC = 0x21,  /* max_rd_atomic or remote max_dest_rd_atomic is 0 */
    MOCK_RD_ATOMIC_OVER = 0x22, /* max_rd_atomic above the remote max_dest_rd_atomic */
    MOCK_RQP_MISSING = 0x30,
    MOCK_PEER_DEAD = 0x31,
    MOCK_RQP_STATE = 0x32,
    MOCK_RQP_NOT_BACK = 0x33,  /* remote dest_qp_num is not us */
    MOCK_ADDR = 0x34,          /* AV does not lead to the other port */
    MOCK_PSN = 0x35,           /* our sq_psn differs from the remote rq_psn */
    MOCK_PORT_DOWN = 0x36,
    MOCK_INJECTED = 0x37,      /* GSHMEM_MOCK_IB_FAIL_AFTER */
    MOCK_PTRACE = 0x38,        /* process_vm_* refused (EPERM) */
    MOCK_FLUSHED = 0x40,
};

/* The port as this process's environment describes it (read at open). */
struct mock_port {
    int dev;     /* device index: mockib<dev> */
    int is_ib;   /* GSHMEM_MOCK_IB_LINK=ib */
    int up;      /* not GSHMEM_MOCK_IB_PORT=down */
    uint16_t lid;
};

struct mock_device {
    struct ibv_device dev; /* first: callers hold &dev */
    int index;
};

struct mock_mr;
struct mock_qp;
struct mock_late;
struct mock_op;

struct mock_context {
    struct ibv_context ctx; /* first */
    pthread_mutex_t lock;   /* every object of this context */
    struct mock_port port;
    char dir[MOCK_DIR_MAX]; /* the registry directory */
    int registry_fd;         /* flock: creating and sweeping registry files */
    int atomic_fd;           /* flock: remote atomics, host-wide */
    int event_fd;            /* write end of the async_fd socket pair */
    long fail_after;         /* GSHMEM_MOCK_IB_FAIL_AFTER, 0: off */
    long max_qps;            /* GSHMEM_MOCK_IB_MAX_QPS: QPs this context may create, -1: no limit */
    long max_cqe;            /* GSHMEM_MOCK_IB_MAX_CQE: the largest CQ (default MOCK_MAX_CQE) */
    long mr_fail_from;       /* GSHMEM_MOCK_IB_MR_FAIL_FROM: registrations from this one (1-based) fail */
    long mr_count;           /* registrations asked for on this context */
    long qps_made;
    int quiet;               /* GSHMEM_MOCK_IB_QUIET: no error reasons on stderr */
    long relaxed_ms;         /* GSHMEM_MOCK_IB_RELAXED: late landing of relaxed-ordered writes, 0: off */
    long rd_atom;            /* GSHMEM_MOCK_IB_RD_ATOM: max_qp_rd_atom and max_qp_init_rd_atom */
    pthread_t late_thread;   /* lands late writes when due (mock_relaxed.c) */
    int late_thread_started, late_stop;
    struct ibv_async_event events[MOCK_EVENTS_MAX];
    int event_head, event_count;
    struct mock_mr *mrs;
    struct mock_qp *qps;
    uint32_t next_handle;
};

struct mock_pd {
    struct ibv_pd pd; /* first */
    uint64_t id;      /* with the pid: which PD an MR or QP belongs to, host-wide */
    int users;
};

struct mock_mr {
    struct ibv_mr mr; /* first */
    uint64_t iova;
    unsigned access;
    struct mock_mr *next;
};

struct mock_cqe {
    struct ibv_wc wc;
    struct mock_qp *qp;
    uint64_t seq; /* the WR's place in its QP's send queue */
};

struct mock_cq {
    struct ibv_cq cq; /* first */
    struct mock_cqe *ring;
    uint32_t size, head, count;
    int users;
};

struct mock_qp {
    struct ibv_qp qp; /* first */
    enum ibv_qp_state st;
    struct ibv_qp_cap cap;
    int sq_sig_all;
    struct ibv_qp_attr attr; /* what modify_qp set */
    uint64_t posted, retired; /* send-queue occupancy: posted - retired */
    struct mock_late *late;   /* relaxed-ordered writes not landed yet (mock_relaxed.c) */
    struct mock_op *ops;      /* READs, atomics, fenced WRs and completions waiting (mock_relaxed.c) */
    struct mock_qp *next;
};

/* A QP as its registry file shows it to other processes. */
struct mock_qp_rec {
    pid_t pid;
    unsigned long long start; /* process start time: a reused pid is not the owner */
    unsigned long long pd;
    int state;
    uint32_t dest_qpn, access, max_dest_rd_atomic, rq_psn;
    int dev, is_ib, up, gid_type;
    unsigned lid, dlid;
    uint8_t gid[16], dgid[16]; /* the QP's source GID and its AV's destination */
};

struct mock_mr_rec {
    pid_t pid;
    unsigned long long start, pd, addr, iova, length;
    unsigned access;
};

/* mock_device.c */
int mock_gid_entry(int dev, int is_ib, uint32_t index, struct ibv_gid_entry *e);
int mock_gid_find(int dev, int is_ib, const uint8_t gid[16], int type);

/* mock_registry.c */
int mock_registry_open(struct mock_context *c);
void mock_registry_close(struct mock_context *c);
int mock_registry_create(struct mock_context *c, const char *kind, uint32_t key_mask, uint32_t *key,
                         const char *content);
int mock_registry_update(struct mock_context *c, const char *kind, uint32_t key, const char *content);
int mock_registry_read(struct mock_context *c, const char *kind, uint32_t key, char *buf, size_t len);
void mock_registry_remove(struct mock_context *c, const char *kind, uint32_t key);
unsigned long long mock_self_start(void);
int mock_proc_alive(pid_t pid, unsigned long long start);
int mock_qp_rec_read(struct mock_context *c, uint32_t qpn, struct mock_qp_rec *r);
int mock_mr_rec_read(struct mock_context *c, uint32_t rkey, struct mock_mr_rec *r);
void mock_qp_rec_format(const struct mock_qp_rec *r, char *buf, size_t len);

/* mock_qp.c */
void mock_qp_publish(struct mock_context *c, struct mock_qp *q);
void mock_cq_forget_qp(struct mock_cq *cq, struct mock_qp *q);

/* mock_post.c */
int mock_wr_go(struct mock_context *c, struct mock_qp *q, const struct ibv_send_wr *wr, struct ibv_wc *wc);
void mock_cq_push(struct mock_cq *cq, struct mock_qp *q, const struct ibv_wc *wc, uint64_t seq);
int mock_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int mock_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int mock_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int mock_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);

/* mock_mr.c */
struct mock_mr *mock_mr_find(struct mock_context *c, uint32_t lkey);
int mock_range_mapped(const void *addr, size_t len);

/* mock_relaxed.c */
int mock_late_before(struct mock_context *c, struct mock_qp *q, enum ibv_wr_opcode op, uint32_t rkey,
                     unsigned access);
enum mock_reason mock_late_defer(struct mock_context *c, struct mock_qp *q, const struct iovec *iov, int n,
                                 size_t total, pid_t pid, uint32_t rkey, uint64_t host);
void mock_late_drain(struct mock_context *c, struct mock_qp *q);
int mock_ops_take(struct mock_context *c, struct mock_qp *q, const struct ibv_send_wr *wr, uint64_t seq);
void mock_late_stop(struct mock_context *c);

/* mock_event.c */
void mock_event_push(struct mock_context *c, enum ibv_event_type type, struct ibv_qp *qp);
void mock_event_forget_qp(struct mock_context *c, struct ibv_qp *qp);

static inline struct mock_context *mock_ctx(struct ibv_context *c) { return (struct mock_context *)c; }

#endif
