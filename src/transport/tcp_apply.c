/*
 * tcp transport, the target's side (service thread only): frames from peers are
 * applied to the local heap in arrival order; answers to our own requests complete
 * their pending slot. Host heaps: payloads are received straight into the heap, atomics
 * are CPU atomics (host_amo.h). Device heaps: payloads go through pinned staging and
 * CUDA copies on one stream (two buffers, so receiving chunk k+1 overlaps copying
 * chunk k), atomics and signals are a one-thread kernel on the same stream, so a
 * signal lands after its data; anything answered waits for the stream first.
 */
#include "transport/tcp_impl.h"

#include "core/heap.h"
#include "core/log.h"
#include "transport/host_amo.h"

#include <gshmem/status.h>

#include <stdlib.h>
#include <string.h>

struct tcp_rx {
    struct tcp_cuda *cuda;
    int next; /* staging buffer for the next device-heap chunk */
};

static struct tcp_rx *tcp_rx(struct tcp_net *net)
{
    return net->rx_cuda;
}

static int tcp_rx_cuda(struct tcp_net *net, struct tcp_cuda **out)
{
    if (!net->rx_cuda) {
        struct tcp_rx *rx = calloc(1, sizeof(*rx));
        if (!rx) return GSHMEMX_ERR_NOMEM;
        int rc = gshmemi_tcp_cuda_create(net->device, &rx->cuda);
        if (rc != 0) {
            free(rx);
            return rc;
        }
        net->rx_cuda = rx;
    }
    *out = tcp_rx(net)->cuda;
    /* The staging is made on the thread that registers the heap; the service thread
     * uses it, and its kernels and copies need the heap's GPU current, and must go on
     * while an application thread captures a graph (never relaxed for that thread). */
    return gshmemi_tcp_cuda_bind(net->device, gshmemi_tcp_on_service_thread());
}

int gshmemi_tcp_cuda_prepare(struct tcp_net *net)
{
    struct tcp_cuda *cu;
    int rc = tcp_rx_cuda(net, &cu);
    pthread_mutex_lock(&net->tx_stage_lock);
    if (rc == 0 && !net->tx_cuda) rc = gshmemi_tcp_cuda_create(net->device, (struct tcp_cuda **)&net->tx_cuda);
    pthread_mutex_unlock(&net->tx_stage_lock);
    return rc;
}

void gshmemi_tcp_apply_fini(struct tcp_net *net)
{
    struct tcp_rx *rx = tcp_rx(net);
    if (rx) gshmemi_tcp_cuda_destroy(rx->cuda);
    free(rx);
    net->rx_cuda = NULL;
    if (net->tx_cuda) gshmemi_tcp_cuda_destroy(net->tx_cuda);
    net->tx_cuda = NULL;
}

static int tcp_bad(struct tcp_net *net, struct tcp_conn *c, const struct gshmemi_tcp_frame *f, const char *what)
{
    GSHMEMI_ERROR(TRANSPORT, "tcp: %s from %s on PE %d: %s (offset %llu, %u bytes, heap %u)",
                  gshmemi_tcp_type_name(f->type), c->name, net->my_pe, what, (unsigned long long)f->offset, f->length,
                  f->heap);
    gshmemi_tcp_lost(net, c, "malformed frame");
    return GSHMEMX_ERR_PROTOCOL;
}

/* Whether [offset, offset + len) lies in the heap. */
static int tcp_in_heap(const struct gshmemi_heap *h, uint64_t offset, uint64_t len)
{
    return offset <= h->size && len <= h->size - offset;
}

/* Lowest offset and span of n elements of elem bytes, stride apart from offset. */
static int tcp_strided_in_heap(const struct gshmemi_heap *h, uint64_t offset, int64_t stride, uint64_t elem,
                               uint64_t n)
{
    uint64_t mag = (uint64_t)(stride < 0 ? -stride : stride), span;
    if (n == 0) return 1;
    if (__builtin_mul_overflow(mag, n - 1, &span)) return 0;
    uint64_t low = stride < 0 ? offset - span : offset;
    if (stride < 0 && span > offset) return 0;
    return tcp_in_heap(h, low, span) && tcp_in_heap(h, low + span, elem);
}

/* One aligned word of 1, 2, 4 or 8 bytes (a p, a flag) is stored whole, so a reader
 * waiting on it never sees half of it (its bytes may reach us in two reads). */
static int tcp_rx_word(struct tcp_net *net, struct tcp_conn *c, void *dst, size_t len)
{
    union {
        uint8_t b;
        uint16_t h;
        uint32_t w;
        uint64_t d;
    } v;
    int rc = gshmemi_tcp_read(net, c, &v, len);
    if (rc != 0) return rc;
    switch (len) {
    case 1: __atomic_store_n((uint8_t *)dst, v.b, __ATOMIC_RELEASE); break;
    case 2: __atomic_store_n((uint16_t *)dst, v.h, __ATOMIC_RELEASE); break;
    case 4: __atomic_store_n((uint32_t *)dst, v.w, __ATOMIC_RELEASE); break;
    default: __atomic_store_n((uint64_t *)dst, v.d, __ATOMIC_RELEASE); break;
    }
    return 0;
}

/* Receives len payload bytes into heap at offset. */
static int tcp_rx_into_heap(struct tcp_net *net, struct tcp_conn *c, struct gshmemi_heap *h, uint64_t offset,
                            size_t len)
{
    char *dst = (char *)h->base + offset;
    if (h->kind != GSHMEMI_HEAP_KIND_DEVICE && (len == 1 || len == 2 || len == 4 || len == 8) &&
        (uintptr_t)dst % len == 0)
        return tcp_rx_word(net, c, dst, len);
    if (h->kind != GSHMEMI_HEAP_KIND_DEVICE) return gshmemi_tcp_read(net, c, dst, len);
    struct tcp_cuda *cu;
    int rc = tcp_rx_cuda(net, &cu);
    struct tcp_rx *rx = tcp_rx(net);
    for (size_t done = 0; rc == 0 && done < len;) {
        size_t n = len - done < GSHMEMI_TCP_CHUNK ? len - done : GSHMEMI_TCP_CHUNK;
        void *stage = gshmemi_tcp_cuda_stage(cu, rx->next);
        rc = stage ? gshmemi_tcp_read(net, c, stage, n) : GSHMEMX_ERR_CUDA;
        if (rc == 0) rc = gshmemi_tcp_cuda_copy(cu, rx->next, (char *)h->base + offset + done, n, 1);
        rx->next ^= 1;
        done += n;
    }
    return rc;
}

static int tcp_signal(struct tcp_net *net, struct gshmemi_heap *h, uint64_t offset, uint64_t value, int op)
{
    void *p = (char *)h->base + offset;
    if (h->kind != GSHMEMI_HEAP_KIND_DEVICE) {
        gshmemi_host_signal(p, value, op);
        return 0;
    }
    struct tcp_cuda *cu;
    int rc = tcp_rx_cuda(net, &cu);
    return rc ? rc : gshmemi_tcp_cuda_amo(cu, p, op == 1 ? GSHMEMI_AMO_ADD : GSHMEMI_AMO_SET, 8, value, 0, NULL);
}

static int tcp_apply_iput(struct tcp_net *net, struct tcp_conn *c, struct gshmemi_heap *h,
                          const struct gshmemi_tcp_frame *f)
{
    uint64_t elem = f->arg1, n = f->length / elem;
    int64_t stride = (int64_t)f->arg0;
    if (!tcp_strided_in_heap(h, f->offset, stride, elem, n)) return tcp_bad(net, c, f, "outside the heap");
    char *buf = malloc(f->length ? f->length : 1);
    if (!buf) return GSHMEMX_ERR_NOMEM;
    int rc = gshmemi_tcp_read(net, c, buf, f->length);
    char *base = (char *)h->base + f->offset;
    struct tcp_cuda *cu = NULL;
    if (rc == 0 && h->kind == GSHMEMI_HEAP_KIND_DEVICE) rc = tcp_rx_cuda(net, &cu);
    if (rc == 0 && cu) rc = gshmemi_tcp_cuda_strided(cu, buf, base, stride, elem, n, 1);
    for (uint64_t i = 0; rc == 0 && !cu && i < n; i++) memcpy(base + (int64_t)i * stride, buf + i * elem, elem);
    free(buf);
    return rc;
}

/* Answers a GET or IGET with the bytes. */
static int tcp_apply_get(struct tcp_net *net, struct tcp_conn *c, struct gshmemi_heap *h,
                         const struct gshmemi_tcp_frame *f)
{
    int strided = f->type == GSHMEMI_TCP_IGET;
    uint64_t elem = strided ? f->arg1 : 1, n = strided ? f->aux : f->arg0, len = elem * n;
    int64_t stride = strided ? (int64_t)f->arg0 : 1;
    if (strided ? !tcp_strided_in_heap(h, f->offset, stride, elem, n) : !tcp_in_heap(h, f->offset, len))
        return tcp_bad(net, c, f, "outside the heap");
    struct gshmemi_tcp_frame a = gshmemi_tcp_frame_make(GSHMEMI_TCP_DATA, f->heap);
    a.tag = f->tag;
    a.length = (uint32_t)len;
    const char *src = (const char *)h->base + f->offset;
    int device = h->kind == GSHMEMI_HEAP_KIND_DEVICE;
    if (!strided && !device) return gshmemi_tcp_answer(net, c, &a, src);
    struct tcp_cuda *cu = NULL;
    int rc = device ? tcp_rx_cuda(net, &cu) : 0;
    if (rc == 0 && device && !strided) {
        if (len > GSHMEMI_TCP_CHUNK) return tcp_bad(net, c, f, "get larger than a chunk from a device heap");
        struct tcp_rx *rx = tcp_rx(net);
        rc = gshmemi_tcp_cuda_copy(cu, rx->next, (void *)src, len, 0);
        void *stage = rc ? NULL : gshmemi_tcp_cuda_stage(cu, rx->next); /* waits for the copy */
        return rc ? rc : stage ? gshmemi_tcp_answer(net, c, &a, stage) : GSHMEMX_ERR_CUDA;
    }
    char *buf = malloc(len ? len : 1);
    if (!buf) return GSHMEMX_ERR_NOMEM;
    if (rc == 0 && cu) rc = gshmemi_tcp_cuda_strided(cu, buf, (char *)src, stride, elem, n, 0);
    for (uint64_t i = 0; rc == 0 && !cu && i < n; i++) memcpy(buf + i * elem, src + (int64_t)i * stride, elem);
    if (rc == 0) rc = gshmemi_tcp_answer(net, c, &a, buf);
    free(buf);
    return rc;
}

static int tcp_apply_amo(struct tcp_net *net, struct tcp_conn *c, struct gshmemi_heap *h,
                         const struct gshmemi_tcp_frame *f)
{
    struct gshmemi_amo amo = {.op = gshmemi_tcp_aux_op(f->aux), .width = gshmemi_tcp_aux_width(f->aux),
                              .offset = f->offset, .operand = f->arg0, .compare = f->arg1};
    if (!tcp_in_heap(h, f->offset, amo.width)) return tcp_bad(net, c, f, "outside the heap");
    uint64_t old = 0;
    void *p = (char *)h->base + f->offset;
    int fetch = gshmemi_tcp_aux_fetch(f->aux), rc;
    if (h->kind == GSHMEMI_HEAP_KIND_DEVICE) {
        struct tcp_cuda *cu;
        rc = tcp_rx_cuda(net, &cu);
        if (rc == 0) rc = gshmemi_tcp_cuda_amo(cu, p, amo.op, amo.width, amo.operand, amo.compare, fetch ? &old : NULL);
    } else {
        rc = gshmemi_host_amo(p, &amo, &old);
    }
    if (rc != 0 || !fetch) return rc;
    struct gshmemi_tcp_frame a = gshmemi_tcp_frame_make(GSHMEMI_TCP_VALUE, f->heap);
    a.tag = f->tag;
    a.arg0 = old;
    return gshmemi_tcp_answer(net, c, &a, NULL);
}

int gshmemi_tcp_apply(struct tcp_net *net, struct tcp_conn *c, const struct gshmemi_tcp_frame *f)
{
    struct gshmemi_heap *h = net->heaps[f->heap];
    int device = h->kind == GSHMEMI_HEAP_KIND_DEVICE, rc = 0;
    /* Frames become visible in arrival order (fence relies on it): what earlier frames
     * wrote is visible before anything this one writes, on weakly ordered CPUs too (on
     * x86 this only keeps the compiler from reordering). Atomics and signals are
     * release or seq_cst themselves. */
    atomic_thread_fence(memory_order_release);
    switch (f->type) {
    case GSHMEMI_TCP_PUT:
    case GSHMEMI_TCP_PUT_SIGNAL:
        if (!tcp_in_heap(h, f->offset, f->length)) return tcp_bad(net, c, f, "outside the heap");
        if (f->type == GSHMEMI_TCP_PUT_SIGNAL && !tcp_in_heap(h, f->arg0, 8))
            return tcp_bad(net, c, f, "signal outside the heap");
        rc = tcp_rx_into_heap(net, c, h, f->offset, f->length);
        if (rc == 0 && f->type == GSHMEMI_TCP_PUT_SIGNAL) rc = tcp_signal(net, h, f->arg0, f->arg1, (int)f->aux);
        return rc;
    case GSHMEMI_TCP_IPUT:
        return tcp_apply_iput(net, c, h, f);
    case GSHMEMI_TCP_GET:
    case GSHMEMI_TCP_IGET:
        return tcp_apply_get(net, c, h, f);
    case GSHMEMI_TCP_AMO:
        return tcp_apply_amo(net, c, h, f);
    case GSHMEMI_TCP_QUIET: {
        /* Everything before it on this connection is applied; device copies must land. */
        for (int i = 0; i < net->nheaps && rc == 0; i++)
            if (net->heaps[i]->kind == GSHMEMI_HEAP_KIND_DEVICE && net->rx_cuda)
                rc = gshmemi_tcp_cuda_sync(tcp_rx(net)->cuda);
        struct gshmemi_tcp_frame a = gshmemi_tcp_frame_make(GSHMEMI_TCP_ACK, f->heap);
        a.tag = f->tag;
        return rc ? rc : gshmemi_tcp_answer(net, c, &a, NULL);
    }
    default:
        (void)device;
        return tcp_bad(net, c, f, "not a request");
    }
}

int gshmemi_tcp_complete(struct tcp_net *net, struct tcp_conn *c, const struct gshmemi_tcp_frame *f)
{
    if (f->tag >= (uint64_t)net->nslots) return tcp_bad(net, c, f, "answer to no request");
    struct tcp_slot *slot = &net->slots[f->tag];
    if (atomic_load(&slot->state) != TCP_SLOT_WAITING || slot->type != f->type || slot->pe != c->pe)
        return tcp_bad(net, c, f, "answer to no request of that peer");
    int rc = 0;
    if (f->type == GSHMEMI_TCP_VALUE) {
        slot->value = f->arg0;
        if (slot->done) { /* amo_async: nobody waits on the slot */
            slot->done(slot->done_arg, slot->done_tag, f->arg0);
            gshmemi_tcp_slot_free(net, (int)f->tag);
            return 0;
        }
    } else if (f->type == GSHMEMI_TCP_DATA) {
        if (f->length != slot->len) return tcp_bad(net, c, f, "answer of the wrong length");
        if (slot->elem == 0 && !slot->dst_device) {
            rc = gshmemi_tcp_read(net, c, slot->dst, f->length);
        } else {
            char *buf = malloc(f->length ? f->length : 1);
            struct tcp_cuda *cu = NULL;
            rc = buf ? gshmemi_tcp_read(net, c, buf, f->length) : GSHMEMX_ERR_NOMEM;
            if (rc == 0 && slot->dst_device) rc = tcp_rx_cuda(net, &cu);
            size_t elem = slot->elem ? slot->elem : f->length, n = elem ? f->length / elem : 0;
            ptrdiff_t stride = slot->elem ? slot->dst_stride : (ptrdiff_t)elem;
            if (rc == 0 && cu) rc = gshmemi_tcp_cuda_strided(cu, buf, slot->dst, stride, elem, n, 1);
            for (size_t i = 0; rc == 0 && !cu && i < n; i++)
                memcpy((char *)slot->dst + (ptrdiff_t)i * stride, buf + i * elem, elem);
            free(buf);
        }
    }
    if (rc == 0) atomic_store_explicit(&slot->state, TCP_SLOT_DONE, memory_order_release);
    return rc;
}
