/*
 * tcp transport internals, shared by its connection code (tcp.c), the initiator's ops
 * (tcp_ops.c) and the target's side (tcp_apply.c).
 *
 * One process-wide "net" holds a connection to every PE the tcp transport reaches
 * (all opened at init, see tcp.c) and one service thread that reads every frame that
 * arrives: requests from peers are applied to the local heaps in arrival order, answers
 * to our own requests complete a pending slot. Each heap that uses tcp gets a
 * transport instance naming its heap index in the frames (0: the sync heap, 1: the
 * user heap; registered in the same order on every PE).
 *
 * Writers of a connection hold conn->tx for a whole frame. Application and proxy
 * threads write with blocking sends; the service thread never blocks on a send: it
 * queues what cannot go now and keeps reading, so two PEs sending to each other can
 * never both wait on full socket buffers.
 */
#ifndef GSHMEMI_TCP_IMPL_H
#define GSHMEMI_TCP_IMPL_H

#include "transport/tcp_wire.h"
#include "transport/transport.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct gshmemi_heap;
struct gshmemi_bootstrap;
struct gshmemi_env;

/* Bytes per frame for bulk data: large transfers go as a pipeline of these. */
#define GSHMEMI_TCP_CHUNK ((size_t)1 << 20)
/* Receive buffer per connection: reads shorter than this go through it. */
#define GSHMEMI_TCP_RXBUF 4096
/* Outstanding chunk requests of one get. */
#define GSHMEMI_TCP_GET_WINDOW 8
/* Puts (and strided puts) of at most this many bytes wait in the connection's send
 * buffer (txbuf, GSHMEMI_TCP_TXBUF bytes) for the next frame that may not wait (a quiet,
 * a get, an atomic, a signal, a bigger put), and leave with it in one sendmsg, so a small
 * put and the quiet after it cost one system call and are read with one recv, and a
 * stream of small puts one call per buffer. gshmemi_tcp_push writes what waits (through
 * the transport's flush: core's waits, the proxy after each pass, gshmem_global_exit;
 * and before our own waits for answers), and the service thread does once it has waited
 * GSHMEMI_TCP_CORK_MAX_S. Nothing waits while the service thread sleeps. */
#define GSHMEMI_TCP_CORK_BYTES 4096
#define GSHMEMI_TCP_TXBUF 16384
#define GSHMEMI_TCP_CORK_MAX_S 10e-6

struct tcp_out {
    struct tcp_out *next;
    size_t len, done;
    int started; /* the frame's first bytes went before it was queued: c->tx stays held */
    unsigned char data[];
};

struct tcp_conn {
    int fd; /* -1: this PE is not reached by tcp */
    int pe;
    pthread_mutex_t tx;
    int tx_held;          /* the service thread holds tx across loop turns (partial frame) */
    int closed;           /* service thread: closed cleanly after BYE, no longer polled */
    struct tcp_out *out_head, *out_tail; /* the service thread's queued answers */
    /* Quiet's bookkeeping, shared by every thread that sends on the connection (the
     * application's, the proxy's): issued counts the frames a quiet must see applied
     * (puts, signals, atomics without an answer awaited), bumped once the frame is
     * written or waits in txbuf (which any later frame, a QUIET too, writes first);
     * completed is the most of them that an acknowledged QUIET covered. A quiet
     * with completed >= issued (as it read issued) has nothing to ask this peer. */
    atomic_ullong issued, completed;
    atomic_int bye;       /* the peer said BYE: its close is expected */
    atomic_int corked;    /* frames wait in txbuf (set and cleared under tx) */
    double corked_at;     /* when the first of them was put there (under tx) */
    /* Under tx: whole frames waiting to be written, txbuf[tx_at, tx_len); tx_at > 0 only
     * after the service thread wrote part of them, and then every writer finishes them
     * before anything else. */
    size_t tx_at, tx_len;
    unsigned char *txbuf; /* GSHMEMI_TCP_TXBUF bytes, allocated when first needed */
    char name[96];        /* "PE 3 at 198.18.0.11:40123" */
    /* Service thread: bytes received but not yet consumed, rxbuf[rx_at, rx_len). Small
     * reads fill it, so frames that arrive together (a put and its quiet) cost one recv. */
    size_t rx_at, rx_len;
    unsigned char rxbuf[GSHMEMI_TCP_RXBUF];
};

enum tcp_slot_state { TCP_SLOT_FREE, TCP_SLOT_WAITING, TCP_SLOT_DONE };

struct tcp_slot {
    atomic_int state;
    unsigned type;   /* the answer expected: DATA, VALUE or ACK */
    int pe;
    void *dst;       /* DATA: where the bytes go */
    size_t len;
    int dst_device;  /* dst is device memory */
    ptrdiff_t dst_stride; /* IGET answers: scatter elements of elem bytes */
    size_t elem;
    uint64_t value;  /* VALUE */
    /* amo_async: called with the VALUE on the service thread, which then frees the slot */
    void (*done)(void *arg, uint64_t tag, uint64_t value);
    void *done_arg;
    uint64_t done_tag;
};

struct tcp_net {
    int refs;
    int my_pe, n_pes;
    double timeout;
    int sockbuf; /* GSHMEM_TCP_SOCKBUF; 0: the kernel's */
    struct tcp_conn *conns;
    struct gshmemi_heap *heaps[GSHMEMI_TCP_MAX_HEAPS];
    int nheaps;
    unsigned char token[GSHMEMI_TCP_TOKEN_SIZE];
    pthread_t thread;
    int thread_started;
    struct pollfd *read_pfd; /* service thread: n_pes + 1 entries for gshmemi_tcp_read's waits */
    int wake[2];
    atomic_int stop;
    atomic_int failed; /* a status once any connection broke: every wait returns it */
    atomic_int ncorked;  /* connections with corked set */
    atomic_int sleeping; /* the service thread is (about to be) asleep in poll: nothing may be held back */
    atomic_int wake_asked; /* a sender found it asleep and wrote to wake (once a sleep) */
    pthread_mutex_t slot_lock;
    int nslots; /* requests awaiting an answer, process-wide (GSHMEM_TCP_REQUESTS) */
    int *free_slots;
    int nfree;
    struct tcp_slot *slots;
    /* CUDA (device heaps): the service thread's and the initiators' staging. */
    int device;       /* GPU of the device heap, -1 */
    void *rx_cuda;    /* struct tcp_cuda, service thread only */
    pthread_mutex_t tx_stage_lock;
    void *tx_cuda;    /* struct tcp_cuda, initiators, under tx_stage_lock */
    char lost_msg[320]; /* the first broken connection, under slot_lock */
    /* Counters for gshmem-info / perftests. */
    atomic_ullong frames_in, frames_out;
};

struct tcp_transport {
    struct gshmemi_transport tp;
    struct tcp_net *net;
    unsigned heap_index;
    struct gshmemi_heap *heap;
};

static inline struct tcp_transport *tcp_of(struct gshmemi_transport *tp)
{
    return (struct tcp_transport *)tp->impl;
}

extern const struct gshmemi_transport_ops gshmemi_tcp_ops;

/* tcp.c */
double gshmemi_tcp_now(void);
/* Milliseconds left until deadline, for poll (-1: no deadline; 0: passed). */
int gshmemi_tcp_poll_ms(double deadline);
/* Writes iov from byte *done on (advancing it); block: wait for room until deadline.
 * 0, -EAGAIN (not blocking, no room), -ETIMEDOUT or -errno. */
int gshmemi_tcp_writev(int fd, struct iovec *iov, int n, size_t *done, int block, double deadline);
/* Now + GSHMEM_TIMEOUT, or 0 (no deadline). */
double gshmemi_tcp_deadline(const struct tcp_net *net);
/* Writes a frame (header + payload) to conn; blocking, under conn->tx, honouring the
 * timeout. 0 or a status (logged, naming the peer). */
int gshmemi_tcp_send(struct tcp_net *net, struct tcp_conn *c, struct gshmemi_tcp_frame *f, const void *payload);
/* Pushes what every connection holds back (see GSHMEMI_TCP_CORK_BYTES); cheap when
 * nothing is. */
void gshmemi_tcp_push(struct tcp_net *net);
/* The service thread's send: never blocks (queues instead). */
int gshmemi_tcp_answer(struct tcp_net *net, struct tcp_conn *c, struct gshmemi_tcp_frame *f, const void *payload);
/* Reads exactly len bytes from c (service thread), honouring the timeout: from the
 * connection's receive buffer first, then short reads through it and long ones straight
 * into buf. */
int gshmemi_tcp_read(struct tcp_net *net, struct tcp_conn *c, void *buf, size_t len);
/* A slot for a request of type to pe, waiting for one to be freed if need be, or
 * -status: the transport failed, or none came free within GSHMEM_TIMEOUT (logged). A
 * thread holding slots whose answers it has not waited for must not wait here (the
 * holders could all be waiting for each other): gshmemi_tcp_slot_try, then wait for
 * its own first. */
int gshmemi_tcp_slot_get(struct tcp_net *net, unsigned type, int pe);
/* Waits for a slot's answer and frees it, storing a VALUE answer's value first (value
 * may be NULL): once free, the slot may be another thread's. 0 or a status (logged). */
int gshmemi_tcp_slot_wait(struct tcp_net *net, int slot, const char *what, uint64_t *value);
/* Logs a broken connection once and makes every wait fail; the job ends. */
void gshmemi_tcp_lost(struct tcp_net *net, struct tcp_conn *c, const char *why);

/* tcp_connect.c: opens a connection to every PE tcp reaches (collective, at init);
 * remote: which PEs to reach. 0 or a status (logged, naming the PEs that never came). */
int gshmemi_tcp_connect_all(struct tcp_net *net, struct gshmemi_bootstrap *bs, const struct gshmemi_env *env,
                            const unsigned char *remote);

/* tcp_apply.c: the target's side (service thread). 0 or a status (logged). */
int gshmemi_tcp_apply(struct tcp_net *net, struct tcp_conn *c, const struct gshmemi_tcp_frame *f);
/* An answer to one of our requests arrived. */
int gshmemi_tcp_complete(struct tcp_net *net, struct tcp_conn *c, const struct gshmemi_tcp_frame *f);
/* Returns slot s to the free list (its answer has been consumed). */
void gshmemi_tcp_slot_free(struct tcp_net *net, int s);
/* A free slot for a request of type to pe, or -1 at once when none is. */
int gshmemi_tcp_slot_try(struct tcp_net *net, unsigned type, int pe);
void gshmemi_tcp_apply_fini(struct tcp_net *net);

/* tcp_cuda.c (CUDA builds; stubs otherwise). */
int gshmemi_tcp_is_device_ptr(const struct tcp_net *net, const void *p);
/* Creates the service thread's and the initiators' CUDA staging now, at registration of
 * a device heap: later (lazily) it could run while a kernel waits on it (module loading,
 * pinned allocations). */
int gshmemi_tcp_cuda_prepare(struct tcp_net *net);
/* Whether the calling thread is a tcp service thread. */
int gshmemi_tcp_on_service_thread(void);
/* Staging: a pinned buffer pair with events for pipelined copies. */
struct tcp_cuda;
int gshmemi_tcp_cuda_create(int device, struct tcp_cuda **out);
/* Makes device current for the calling thread (once per thread); own_thread (the
 * service thread) also relaxes its stream capture mode (host_kernels.h). */
int gshmemi_tcp_cuda_bind(int device, int own_thread);
void gshmemi_tcp_cuda_destroy(struct tcp_cuda *cu);
/* Buffer i (0/1) once its previous copy has finished; NULL (logged) when that copy
 * failed or could not be waited for. */
void *gshmemi_tcp_cuda_stage(struct tcp_cuda *cu, int i);
/* Async copy on the staging stream, then an event on buffer i. kind: 0 H2D from stage i, 1 D2H into stage i. */
int gshmemi_tcp_cuda_copy(struct tcp_cuda *cu, int i, void *device_addr, size_t len, int to_device);
int gshmemi_tcp_cuda_sync(struct tcp_cuda *cu);
/* One-thread atomic kernel on the staging stream; fetched (may be NULL) after a sync. */
/* n elements of elem bytes between packed host memory and device memory stride bytes
 * apart (to_device: packed -> device), synchronously. */
int gshmemi_tcp_cuda_strided(struct tcp_cuda *cu, char *packed, char *device, ptrdiff_t stride, size_t elem, size_t n,
                             int to_device);
int gshmemi_tcp_cuda_amo(struct tcp_cuda *cu, void *addr, int op, unsigned width, uint64_t operand, uint64_t compare,
                         uint64_t *fetched);

#endif
