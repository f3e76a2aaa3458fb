/*
 * tcp transport, the initiator's side: the ops table. Puts are frames written to the
 * peer's connection (locally complete when written; remotely complete at quiet), gets
 * and fetching atomics wait for their answer, quiet asks every peer with frames that
 * no acknowledged QUIET has covered yet for an ACK. One connection per peer, applied in
 * arrival order by the peer's service thread: fence has nothing to order (puts to one
 * PE stay in order).
 * Small puts may wait in the connection's send buffer for the next frame
 * (GSHMEMI_TCP_CORK_BYTES); flush writes them.
 * Local buffers may be device memory (device heaps: the proxy passes device addresses);
 * they go through pinned staging, pipelined with the sends.
 */
#include "transport/tcp_impl.h"

#include "core/heap.h"
#include "core/log.h"

#include <gshmem/status.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static struct tcp_conn *tcp_conn(struct tcp_net *net, int pe)
{
    return &net->conns[pe];
}

/* Sends frames of up to one chunk each for [src, src+len) (signalling on the last one
 * when sig is set), staging device memory. */
static int tcp_put_frames(struct tcp_transport *t, int pe, size_t offset, const void *src, size_t len,
                          const struct gshmemi_tcp_frame *sig)
{
    struct tcp_net *net = t->net;
    struct tcp_conn *c = tcp_conn(net, pe);
    int device = len > 0 && gshmemi_tcp_is_device_ptr(net, src);
    int rc = 0;
    if (device) {
        pthread_mutex_lock(&net->tx_stage_lock);
        if (!net->tx_cuda) rc = gshmemi_tcp_cuda_create(net->device, (struct tcp_cuda **)&net->tx_cuda);
    }
    size_t done = 0;
    int stage = 0;
    /* Device sources: copy chunk k+1 while chunk k is on the wire. */
    if (device && rc == 0)
        rc = gshmemi_tcp_cuda_copy(net->tx_cuda, 0, (void *)src, len < GSHMEMI_TCP_CHUNK ? len : GSHMEMI_TCP_CHUNK, 0);
    do {
        size_t n = len - done < GSHMEMI_TCP_CHUNK ? len - done : GSHMEMI_TCP_CHUNK;
        int last = done + n == len;
        struct gshmemi_tcp_frame f = last && sig ? *sig : gshmemi_tcp_frame_make(GSHMEMI_TCP_PUT, t->heap_index);
        f.offset = offset + done;
        f.length = (uint32_t)n;
        const void *payload = (const char *)src + done;
        if (device && rc == 0) {
            payload = gshmemi_tcp_cuda_stage(net->tx_cuda, stage); /* waits for its copy */
            if (!payload) rc = GSHMEMX_ERR_CUDA; /* never send a buffer whose copy failed */
            size_t next = len - done - n < GSHMEMI_TCP_CHUNK ? len - done - n : GSHMEMI_TCP_CHUNK;
            if (next && rc == 0) rc = gshmemi_tcp_cuda_copy(net->tx_cuda, stage ^ 1, (char *)src + done + n, next, 0);
        }
        if (rc == 0) rc = gshmemi_tcp_send(net, c, &f, payload);
        stage ^= 1;
        done += n;
    } while (rc == 0 && done < len);
    if (device) pthread_mutex_unlock(&net->tx_stage_lock);
    if (rc == 0) atomic_fetch_add(&c->issued, 1);
    return rc;
}

static int tcp_put(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len)
{
    return tcp_put_frames(tcp_of(tp), pe, offset, src, len, NULL);
}

static int tcp_put_signal(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len,
                          size_t sig_offset, uint64_t signal, int sig_op)
{
    struct tcp_transport *t = tcp_of(tp);
    struct gshmemi_tcp_frame sig = gshmemi_tcp_frame_make(GSHMEMI_TCP_PUT_SIGNAL, t->heap_index);
    sig.arg0 = sig_offset;
    sig.arg1 = signal;
    sig.aux = (uint32_t)sig_op;
    return tcp_put_frames(t, pe, offset, src, len, &sig);
}

/* Sends one request answered by DATA into dst and returns its slot, or -status; with
 * try, TCP_NO_SLOT at once when no slot is free (the caller holds others). */
#define TCP_NO_SLOT INT_MIN
static int tcp_request_data(struct tcp_transport *t, int pe, struct gshmemi_tcp_frame *f, void *dst, size_t len,
                            int dst_device, ptrdiff_t dst_stride, size_t elem, int try)
{
    struct tcp_net *net = t->net;
    int s = try ? gshmemi_tcp_slot_try(net, GSHMEMI_TCP_DATA, pe) : gshmemi_tcp_slot_get(net, GSHMEMI_TCP_DATA, pe);
    if (s < 0) return try ? TCP_NO_SLOT : s;
    struct tcp_slot *slot = &net->slots[s];
    slot->dst = dst;
    slot->len = len;
    slot->dst_device = dst_device;
    slot->dst_stride = dst_stride;
    slot->elem = elem;
    f->tag = (uint64_t)s;
    int rc = gshmemi_tcp_send(net, tcp_conn(net, pe), f, NULL);
    return rc ? -rc : s;
}

static int tcp_get(struct gshmemi_transport *tp, int pe, void *dst, size_t offset, size_t len)
{
    struct tcp_transport *t = tcp_of(tp);
    struct tcp_net *net = t->net;
    int dst_device = gshmemi_tcp_is_device_ptr(net, dst);
    int window[GSHMEMI_TCP_GET_WINDOW], head = 0, count = 0;
    size_t done = 0;
    while (done < len || count > 0) {
        while (done < len && count < GSHMEMI_TCP_GET_WINDOW) {
            size_t n = len - done < GSHMEMI_TCP_CHUNK ? len - done : GSHMEMI_TCP_CHUNK;
            struct gshmemi_tcp_frame f = gshmemi_tcp_frame_make(GSHMEMI_TCP_GET, t->heap_index);
            f.offset = offset + done;
            f.arg0 = n;
            /* Holding slots of our own: only a free one, else wait for ours first. */
            int s = tcp_request_data(t, pe, &f, (char *)dst + done, n, dst_device, 0, 0, count > 0);
            if (s == TCP_NO_SLOT) break;
            if (s < 0) return -s;
            window[(head + count++) % GSHMEMI_TCP_GET_WINDOW] = s;
            done += n;
        }
        int rc = gshmemi_tcp_slot_wait(net, window[head], "a get", NULL);
        if (rc != 0) return rc;
        head = (head + 1) % GSHMEMI_TCP_GET_WINDOW;
        count--;
    }
    return 0;
}

/* Packs nelems strided elements into a contiguous host buffer. */
static int tcp_gather(struct tcp_net *net, char *out, const char *src, ptrdiff_t stride, size_t elem, size_t nelems)
{
    if (!gshmemi_tcp_is_device_ptr(net, src)) {
        for (size_t i = 0; i < nelems; i++) memcpy(out + i * elem, src + (ptrdiff_t)i * stride, elem);
        return 0;
    }
    pthread_mutex_lock(&net->tx_stage_lock);
    int rc = net->tx_cuda ? 0 : gshmemi_tcp_cuda_create(net->device, (struct tcp_cuda **)&net->tx_cuda);
    if (rc == 0) rc = gshmemi_tcp_cuda_strided(net->tx_cuda, out, (char *)src, stride, elem, nelems, 0);
    pthread_mutex_unlock(&net->tx_stage_lock);
    return rc;
}

static int tcp_iput(struct gshmemi_transport *tp, int pe, size_t offset, ptrdiff_t dst_stride, const void *src,
                    ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    struct tcp_transport *t = tcp_of(tp);
    struct tcp_net *net = t->net;
    size_t per = GSHMEMI_TCP_CHUNK / elem ? GSHMEMI_TCP_CHUNK / elem : 1;
    char *buf = malloc((per < nelems ? per : nelems) * elem);
    if (!buf) return GSHMEMX_ERR_NOMEM;
    int rc = 0;
    for (size_t i = 0; i < nelems && rc == 0; i += per) {
        size_t n = nelems - i < per ? nelems - i : per;
        rc = tcp_gather(net, buf, (const char *)src + (ptrdiff_t)i * src_stride, src_stride, elem, n);
        struct gshmemi_tcp_frame f = gshmemi_tcp_frame_make(GSHMEMI_TCP_IPUT, t->heap_index);
        f.offset = (uint64_t)((ptrdiff_t)offset + (ptrdiff_t)i * dst_stride);
        f.arg0 = (uint64_t)dst_stride;
        f.arg1 = elem;
        f.length = (uint32_t)(n * elem);
        if (rc == 0) rc = gshmemi_tcp_send(net, tcp_conn(net, pe), &f, buf);
    }
    free(buf);
    if (rc == 0) atomic_fetch_add(&tcp_conn(net, pe)->issued, 1);
    return rc;
}

static int tcp_iget(struct gshmemi_transport *tp, int pe, void *dst, ptrdiff_t dst_stride, size_t offset,
                    ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    struct tcp_transport *t = tcp_of(tp);
    struct tcp_net *net = t->net;
    int dst_device = gshmemi_tcp_is_device_ptr(net, dst);
    size_t per = GSHMEMI_TCP_CHUNK / elem ? GSHMEMI_TCP_CHUNK / elem : 1;
    for (size_t i = 0; i < nelems; i += per) {
        size_t n = nelems - i < per ? nelems - i : per;
        struct gshmemi_tcp_frame f = gshmemi_tcp_frame_make(GSHMEMI_TCP_IGET, t->heap_index);
        f.offset = (uint64_t)((ptrdiff_t)offset + (ptrdiff_t)i * src_stride);
        f.arg0 = (uint64_t)src_stride;
        f.arg1 = elem;
        f.aux = (uint32_t)n;
        int s = tcp_request_data(t, pe, &f, (char *)dst + (ptrdiff_t)i * dst_stride, n * elem, dst_device,
                                 dst_stride, elem, 0);
        if (s < 0) return -s;
        int rc = gshmemi_tcp_slot_wait(net, s, "a strided get", NULL);
        if (rc != 0) return rc;
    }
    return 0;
}

static struct gshmemi_tcp_frame tcp_amo_frame(const struct tcp_transport *t, const struct gshmemi_amo *amo, int fetch)
{
    struct gshmemi_tcp_frame f = gshmemi_tcp_frame_make(GSHMEMI_TCP_AMO, t->heap_index);
    f.aux = gshmemi_tcp_amo_aux(amo->op, amo->width, fetch);
    f.offset = amo->offset;
    f.arg0 = amo->operand;
    f.arg1 = amo->compare;
    return f;
}

static int tcp_amo(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo, uint64_t *fetched)
{
    struct tcp_transport *t = tcp_of(tp);
    struct tcp_net *net = t->net;
    struct gshmemi_tcp_frame f = tcp_amo_frame(t, amo, fetched != NULL);
    struct tcp_conn *c = tcp_conn(net, pe);
    if (!fetched) {
        int rc = gshmemi_tcp_send(net, c, &f, NULL);
        if (rc == 0) atomic_fetch_add(&c->issued, 1);
        return rc;
    }
    int s = gshmemi_tcp_slot_get(net, GSHMEMI_TCP_VALUE, pe);
    if (s < 0) return -s;
    f.tag = (uint64_t)s;
    int rc = gshmemi_tcp_send(net, c, &f, NULL);
    if (rc == 0) rc = gshmemi_tcp_slot_wait(net, s, "an atomic", fetched);
    return rc;
}

/* The request goes out now; the service thread hands the answer to done. A quiet
 * after it waits for its ACK, which comes after the VALUE. */
static int tcp_amo_async(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo,
                         void (*done)(void *arg, uint64_t tag, uint64_t value), void *arg, uint64_t tag)
{
    struct tcp_transport *t = tcp_of(tp);
    struct tcp_net *net = t->net;
    struct gshmemi_tcp_frame f = tcp_amo_frame(t, amo, 1);
    struct tcp_conn *c = tcp_conn(net, pe);
    int s = gshmemi_tcp_slot_get(net, GSHMEMI_TCP_VALUE, pe);
    if (s < 0) return -s;
    struct tcp_slot *slot = &net->slots[s];
    slot->done = done;
    slot->done_arg = arg;
    slot->done_tag = tag;
    atomic_store_explicit(&slot->state, TCP_SLOT_WAITING, memory_order_release); /* publishes done */
    f.tag = (uint64_t)s;
    int rc = gshmemi_tcp_send(net, c, &f, NULL);
    /* Counted once written, as every other: a QUIET another thread sent before this
     * frame must not count as covering it. */
    if (rc == 0) atomic_fetch_add(&c->issued, 1);
    return rc;
}

static int tcp_fence(struct gshmemi_transport *tp, int pe)
{
    (void)tp, (void)pe; /* one connection per peer, applied in order: already ordered */
    return 0;
}

#define TCP_QUIET_STACK_PES 64

struct tcp_asked {
    int pe, slot;
    unsigned long long covers; /* the connection's issued count when its QUIET went */
};

/* Waits for the ACKs of asked[0, n) and records what each covered; the first error. */
static int tcp_quiet_wait(struct tcp_net *net, const struct tcp_asked *asked, int n)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        int wrc = gshmemi_tcp_slot_wait(net, asked[i].slot, "quiet", NULL);
        if (wrc == 0) {
            atomic_ullong *completed = &tcp_conn(net, asked[i].pe)->completed;
            unsigned long long done = atomic_load(completed);
            while (done < asked[i].covers && !atomic_compare_exchange_weak(completed, &done, asked[i].covers)) {}
        }
        if (rc == 0) rc = wrc;
    }
    return rc;
}

/* Asks every peer with frames not yet covered by an acknowledged QUIET for an ACK.
 * Threads share the connections (the proxy's and the application's), so what one
 * thread's quiet covers is counted, not cleared: a quiet that found a flag cleared by
 * another thread's QUIET still in flight would return before its own puts landed. */
static int tcp_quiet(struct gshmemi_transport *tp)
{
    struct tcp_net *net = tcp_of(tp)->net;
    /* On the stack up to TCP_QUIET_STACK_PES PEs: a quiet is on every put's path. */
    struct tcp_asked stack[TCP_QUIET_STACK_PES];
    struct tcp_asked *asked = net->n_pes <= TCP_QUIET_STACK_PES ? stack : malloc(sizeof(*asked) * (size_t)net->n_pes);
    if (!asked) return GSHMEMX_ERR_NOMEM;
    int n = 0, rc = 0;
    for (int pe = 0; pe < net->n_pes && rc == 0; pe++) {
        struct tcp_conn *c = tcp_conn(net, pe);
        if (c->fd < 0) continue;
        /* Every frame counted here is written or waits in txbuf: the QUIET below follows it. */
        unsigned long long issued = atomic_load(&c->issued);
        if (atomic_load(&c->completed) >= issued) continue;
        struct gshmemi_tcp_frame f = gshmemi_tcp_frame_make(GSHMEMI_TCP_QUIET, 0);
        int s = gshmemi_tcp_slot_try(net, GSHMEMI_TCP_ACK, pe);
        if (s < 0 && n > 0) { /* none free: ours first (holding them, we may not wait for others') */
            rc = tcp_quiet_wait(net, asked, n);
            n = 0;
        }
        if (s < 0 && rc == 0) s = gshmemi_tcp_slot_get(net, GSHMEMI_TCP_ACK, pe);
        if (s < 0) {
            if (rc == 0) rc = -s;
            break;
        }
        f.tag = (uint64_t)s;
        rc = gshmemi_tcp_send(net, c, &f, NULL);
        if (rc == 0) asked[n++] = (struct tcp_asked){pe, s, issued};
    }
    int wrc = n > 0 ? tcp_quiet_wait(net, asked, n) : 0;
    if (rc == 0) rc = wrc;
    if (asked != stack) free(asked);
    return rc;
}

static void tcp_flush_held(struct gshmemi_transport *tp)
{
    gshmemi_tcp_push(tcp_of(tp)->net);
}

static void *tcp_ptr(struct gshmemi_transport *tp, int pe, size_t offset)
{
    (void)tp, (void)pe, (void)offset;
    return NULL;
}

void gshmemi_tcp_destroy(struct gshmemi_transport *tp);

const struct gshmemi_transport_ops gshmemi_tcp_ops = {
    .size = sizeof(struct gshmemi_transport_ops),
    .name = "tcp",
    .put = tcp_put,
    .get = tcp_get,
    .put_nbi = tcp_put,
    .get_nbi = tcp_get,
    .iput = tcp_iput,
    .iget = tcp_iget,
    .amo = tcp_amo,
    .amo_async = tcp_amo_async,
    .put_signal = tcp_put_signal,
    .fence = tcp_fence,
    .quiet = tcp_quiet,
    .flush = tcp_flush_held,
    .ptr = tcp_ptr,
    .destroy = gshmemi_tcp_destroy,
};
