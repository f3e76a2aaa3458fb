/*
 * ibv transport internals: one process-wide "net" shared by the heaps that use it (0:
 * the sync heap, 1: the user heap, registered in that order on every PE). It drives
 * one or more RDMA ports ("rails": the allowed ports as near the GPU as the nearest,
 * at most GSHMEM_IB_MAX_RAILS), each with its device context, protection domain,
 * completion queue and registrations; each remote PE has one RC queue pair, on rail
 * (its PE + ours) % rails, so one peer's requests keep their order and many peers
 * spread over the NICs.
 *
 * Every operation is one-sided: the target's CPU takes no part. Initiators post under
 * net->lock and poll the CQ themselves while they wait; a small thread watches the
 * device's asynchronous events (a QP or port error ends the job, naming the peer) and
 * polls the CQ while asynchronous atomics (the proxy's) await their answers.
 *
 * Completion tracking: work requests to one PE complete in order, so each QP counts
 * the requests posted and the highest one known complete ("retired"); only some are
 * signalled (every GSHMEMI_IBV_SIGNAL_EVERY-th, and any a caller will wait for), and a
 * signalled completion retires every earlier request on its QP.
 */
#ifndef GSHMEMI_IBV_IMPL_H
#define GSHMEMI_IBV_IMPL_H

#include "transport/ibv_verbs.h"
#include "transport/ibv_wire.h"
#include "transport/transport.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct gshmemi_heap;
struct gshmemi_env;
struct gshmemi_bootstrap;

#define GSHMEMI_IBV_MAX_HEAPS 2
#define GSHMEMI_IBV_SIGNAL_EVERY 32
#define GSHMEMI_IBV_STAGE_SLOTS 16 /* bounce buffers for unregistered memory */
#define GSHMEMI_IBV_STAGE_SLOT ((size_t)256 * 1024)
#define GSHMEMI_IBV_CELLS 1024 /* 8-byte answers of atomics and flush reads */
#define GSHMEMI_IBV_INLINE_WANT 128

/* The port chosen at init. */
struct ibv_port_choice {
    char dev[64];
    int port;
    int link;      /* enum gshmemi_ibv_link */
    int gid_index; /* -1 on InfiniBand without a GID in use */
    uint8_t gid[16];
    uint16_t lid;
    int mtu; /* active MTU (enum ibv_mtu) */
    uint32_t max_msg_sz;
    char pci[256]; /* sysfs path of the NIC, for the log */
};

/* One RDMA port this PE uses. */
struct ibv_rail {
    struct ibv_port_choice port;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    int cq_size;
    struct ibv_mr *host_mr; /* the net's host memory (stage slots, cells) */
};

struct ibv_peer {
    struct ibv_qp *qp; /* NULL: not reached through ibv */
    int rail;          /* our rail its QP is on */
    int peer_rail;     /* its rail for us: whose registration keys we use */
    uint64_t posted;   /* requests posted */
    uint64_t retired;  /* highest request known complete */
    uint64_t last_signaled;
    unsigned unsignaled;
    unsigned flush_heaps; /* bit h: writes into its heap h (relaxed-ordered there) since their flush read */
    int fence_due; /* gshmem_fence: the next request waits for earlier ones */
};

/* One answer cell: an atomic's fetched word, or what an asynchronous atomic does
 * with it when its completion arrives. */
struct ibv_cell {
    int busy;
    int ready; /* its request completed */
    /* amo_async: what to do with the answer when its completion is polled */
    void (*done)(void *arg, uint64_t tag, uint64_t value);
    void *arg;
    uint64_t tag;
    struct gshmemi_amo amo;
    unsigned shift;
};

struct ibv_stage_slot {
    int pe;       /* -1: no request uses it */
    uint64_t seq; /* the request that reads or fills it */
    int held;     /* a get copies out of it: not to be reused until released */
};

struct ibv_heapreg {
    struct gshmemi_heap *heap;
    struct ibv_mr *mr[GSHMEMI_IBV_MAX_RAILS][GSHMEMI_IBV_MAX_CHUNKS];
    struct ibv_mr *mr_local[GSHMEMI_IBV_MAX_RAILS][GSHMEMI_IBV_MAX_CHUNKS]; /* GPU memory with relaxed ordering:
                                                                              the same without, for gets */
    int nchunks;
    uint64_t chunk;
    int dmabuf;                        /* registered through DMA-BUF (else ibv_reg_mr) */
    int relaxed;                       /* registered with IBV_ACCESS_RELAXED_ORDERING */
    int flush;                         /* writers read it before a signal (relaxed, or a GPU's own order) */
    struct gshmemi_ibv_heapkeys *peer; /* [n_pes]: its registration on its rail for us */
    int *peer_flush;                   /* [n_pes] writes into its registration need a flush read */
};

struct ibv_cm;

struct ibv_net {
    const struct gshmemi_ibv_api *api;
    struct ibv_cm *cm; /* GSHMEM_IB_CM=rdmacm: the connection manager's state (ibv_cm.c) */
    int refs;
    int my_pe, n_pes;
    double timeout;
    int relaxed;       /* our registrations use PCIe relaxed ordering */
    int gdr_flush;     /* our GPU sees what the NIC writes only after cudaDeviceFlushGPUDirectRDMAWrites */
    int direct_peers;  /* other PEs that reach our heaps without the NIC (p2p on this node) */
    int may_fall_back; /* GSHMEM_REMOTE_TRANSPORT=auto: a heap ibv cannot register goes over tcp */
    struct ibv_rail rails[GSHMEMI_IBV_MAX_RAILS];
    int nrails;
    int qp_depth;
    size_t max_msg; /* bytes per request: the port's max_msg_sz, at most 1 GiB */
    int max_inline;
    int rd_atomic;
    uint32_t psn;
    struct ibv_peer *peers; /* [n_pes] */
    struct ibv_heapreg heaps[GSHMEMI_IBV_MAX_HEAPS];
    int nheaps;
    pthread_mutex_t lock; /* posting, polling, cells and stage slots */
    /* Registered host memory: stage slots, then the cells. */
    unsigned char *host;
    size_t host_size;
    struct ibv_stage_slot stage[GSHMEMI_IBV_STAGE_SLOTS];
    unsigned stage_next;
    struct ibv_cell cells[GSHMEMI_IBV_CELLS];
    unsigned cell_next;
    int device; /* GPU of a device heap, -1 */
    pthread_t thread;
    int thread_started;
    int wake[2];
    atomic_int stop;
    atomic_int failed;
    atomic_int closing;       /* finalize: failures are expected (peers are leaving) and ignored */
    atomic_int async_pending; /* amo_async answers not yet polled: the event thread polls the CQ */
    char lost_msg[384];
};

struct ibv_transport {
    struct gshmemi_transport tp;
    struct ibv_net *net;
    int heap_index;
};

static inline struct ibv_transport *ibv_of(struct gshmemi_transport *tp)
{
    return (struct ibv_transport *)tp->impl;
}

/* The rail of our QP to pe (rail 0 for a PE without one). */
static inline struct ibv_rail *ibv_rail_of(struct ibv_net *net, int pe)
{
    return &net->rails[pe >= 0 && pe < net->n_pes ? net->peers[pe].rail : 0];
}

extern const struct gshmemi_transport_ops gshmemi_ibv_ops;

/* A set-up failure: an error, or under GSHMEM_REMOTE_TRANSPORT=auto (which then falls
 * back to tcp) a warning. */
#define GSHMEMI_IBV_SETUP_FAIL(net, ...)                                                                               \
    gshmemi_log((net)->may_fall_back ? GSHMEMI_LOG_WARN : GSHMEMI_LOG_ERROR, GSHMEMI_SUBSYS_TRANSPORT, __VA_ARGS__)

/* ibv_port.c: opens the ports nearest the GPU (gpu_pci: its sysfs path, or NULL) among
 * those GSHMEM_IB_HCA allows: the nearest and every other as near, in device order, at
 * most max; each with the GID GSHMEM_IB_GID_INDEX names or the automatic choice, and a
 * context of its own. Returns how many (ctx[i], out[i]), or 0 with the reason in why. */
int gshmemi_ibv_ports_open(const struct gshmemi_ibv_api *api, const struct gshmemi_env *env, const char *gpu_pci,
                           int max, struct ibv_context **ctx, struct ibv_port_choice *out, char *why, size_t whylen);

/* ibv_cm.c: GSHMEM_IB_CM=rdmacm. Loads librdmacm and listens on the port's IPv4
 * address (before the endpoints are exchanged). 0 or a status (logged). */
int gshmemi_ibv_cm_listen(struct ibv_net *net, const struct gshmemi_env *env);
/* The address it listens on (zeros before listen). */
void gshmemi_ibv_cm_address(const struct ibv_net *net, uint8_t ip[4], uint16_t *port);
/* Connects the QP of every other PE that has one: calls the higher PEs at the addresses
 * in eps[] (every PE's decoded endpoint), answers the lower ones; within GSHMEM_TIMEOUT.
 * 0 or a status (logged, naming the peer). */
int gshmemi_ibv_cm_connect(struct ibv_net *net, const struct gshmemi_env *env, const struct gshmemi_ibv_endpoint *eps);
void gshmemi_ibv_cm_close(struct ibv_net *net);
/* The IPv4 address librdmacm reaches port by: the IPv4-mapped GID of a RoCE port, the
 * address of an InfiniBand port's IPoIB interface. 0, or -1 with the reason. */
int gshmemi_ibv_cm_port_address(const struct ibv_port_choice *port, uint8_t ip[4], char *why, size_t whylen);
/* The librdmacm file loaded, or NULL with the reason (gshmem-info). */
const char *gshmemi_ibv_cm_library(char *why, size_t whylen);

/* ibv_mr.c: registers heap (in chunks; DMA-BUF, then nvidia-peermem, for a device
 * heap) and the net's host memory. 0 or a status (logged). */
int gshmemi_ibv_heap_register(struct ibv_net *net, struct ibv_heapreg *reg, struct gshmemi_heap *heap);
void gshmemi_ibv_heap_deregister(struct ibv_net *net, struct ibv_heapreg *reg);
int gshmemi_ibv_host_register(struct ibv_net *net);
/* The local key on rail covering [p, p + len) inside registered memory, with the bytes
 * *span that lie in that registration: 1 (host memory) or 2 (device memory), or 0 when
 * p is not registered. */
int gshmemi_ibv_local_key(struct ibv_net *net, int rail, const void *p, size_t len, uint32_t *lkey, size_t *span);

/* ibv_post.c: the request engine. */
/* One request to pe. sge may be NULL (zero length). flags: IBV_SEND_* (SIGNALED is
 * added as needed); cell >= 0 routes the completion to that cell. Returns its sequence
 * number, or 0 with the status in *rc. Called with net->lock held. */
uint64_t gshmemi_ibv_post(struct ibv_net *net, int pe, struct ibv_send_wr *wr, int cell, int *rc);
/* Waits (dropping and retaking net->lock) until request seq to pe is complete. */
int gshmemi_ibv_wait(struct ibv_net *net, int pe, uint64_t seq, const char *what);
/* Polls the CQ once; net->lock held. 0 or a status (a failed request: logged once). */
int gshmemi_ibv_poll(struct ibv_net *net);
/* A free stage slot (waiting for one to drain when none is), or -1 with *rc. */
int gshmemi_ibv_stage_get(struct ibv_net *net, int *rc);
unsigned char *gshmemi_ibv_stage_ptr(struct ibv_net *net, int slot);
int gshmemi_ibv_cell_get(struct ibv_net *net, int *rc);
uint64_t *gshmemi_ibv_cell_ptr(struct ibv_net *net, int cell);
/* Posts a read of pe's first heap word: it completes after every earlier write there
 * is visible. 0 with *rc on failure. */
uint64_t gshmemi_ibv_post_flush(struct ibv_net *net, int pe, int signaled, int *rc);
/* gshmem_fence towards pe: later requests are placed after earlier ones. */
int gshmemi_ibv_fence_pe(struct ibv_net *net, int pe);
/* Makes every request so far to pe (all PEs when pe < 0) complete and, for targets
 * with relaxed ordering, visible. */
int gshmemi_ibv_quiet_pe(struct ibv_net *net, int pe);
/* Finalize: waits (briefly) until every posted request has left, ignoring failures. */
void gshmemi_ibv_drain(struct ibv_net *net);
/* Records a failure once (the job ends). */
void gshmemi_ibv_lost(struct ibv_net *net, int pe, const char *fmt, ...);

/* ibv_cuda.c (stubs without CUDA). */
/* Whether p is GPU memory (asked with GPU device current for this thread). */
int gshmemi_ibv_cuda_is_device(int device, const void *p);
/* Synchronous copy on a private non-blocking stream (kernels waiting on the proxy keep
 * running), with GPU device current for this thread. */
int gshmemi_ibv_cuda_copy(int device, void *dst, const void *src, size_t len);
/* A DMA-BUF fd for [addr, addr + len) of device memory, or -1 with the reason. */
int gshmemi_ibv_cuda_dmabuf(void *addr, size_t len, char *why, size_t whylen);
/* sysfs path of GPU device's PCI function, or "" when unknown. */
void gshmemi_ibv_cuda_pci_path(int device, char *out, size_t outlen);
/* How GPU device orders what a NIC writes into its memory, for its own kernels (and,
 * with all_devices, for the other GPUs too): 0 in order (nothing to do), 1 not in order
 * but cudaDeviceFlushGPUDirectRDMAWrites makes it visible, -1 neither (or unknown);
 * what says which, in words. */
int gshmemi_ibv_cuda_gdr_order(int device, int all_devices, char *what, size_t whatlen);
/* One line per visible GPU: how it orders what a NIC writes into it (gshmem-info). */
void gshmemi_ibv_cuda_gdr_describe(FILE *out);
/* cudaDeviceFlushGPUDirectRDMAWrites for device, to its own kernels (or every GPU). */
int gshmemi_ibv_cuda_gdr_flush(int device, int all_devices);

#endif
