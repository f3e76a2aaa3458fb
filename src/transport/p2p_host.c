/*
 * p2p transport, host-heap ops: every node-local peer's heap is mapped into this
 * process, so RMA is memcpy and AMOs are CPU atomics on the shared pages. A peer's
 * mapping and the peer's own mapping name the same physical memory; atomics from
 * all PEs are atomic against each other because they are the same instructions on
 * the same cache lines.
 */
#include "transport/transport.h"

#include "transport/p2p.h"
#include "transport/host_amo.h"
#include "transport/transport_stubs.h"

#include <gshmem/status.h>

#include <string.h>

static int p2p_put(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len)
{
    memcpy(gshmemi_p2p_of(tp)->base[pe] + offset, src, len);
    return 0;
}

static int p2p_get(struct gshmemi_transport *tp, int pe, void *dst, size_t offset, size_t len)
{
    memcpy(dst, gshmemi_p2p_of(tp)->base[pe] + offset, len);
    return 0;
}

static int p2p_iput(struct gshmemi_transport *tp, int pe, size_t offset, ptrdiff_t dst_stride, const void *src,
                    ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    char *d = gshmemi_p2p_of(tp)->base[pe] + offset;
    const char *s = src;
    for (size_t i = 0; i < nelems; i++) memcpy(d + (ptrdiff_t)i * dst_stride, s + (ptrdiff_t)i * src_stride, elem);
    return 0;
}

static int p2p_iget(struct gshmemi_transport *tp, int pe, void *dst, ptrdiff_t dst_stride, size_t offset,
                    ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    const char *s = gshmemi_p2p_of(tp)->base[pe] + offset;
    char *d = dst;
    for (size_t i = 0; i < nelems; i++) memcpy(d + (ptrdiff_t)i * dst_stride, s + (ptrdiff_t)i * src_stride, elem);
    return 0;
}

static int p2p_amo(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo, uint64_t *fetched)
{
    return gshmemi_host_amo(gshmemi_p2p_of(tp)->base[pe] + amo->offset, amo, fetched);
}

static int p2p_put_signal(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len,
                          size_t sig_offset, uint64_t signal, int sig_op)
{
    struct gshmemi_p2p *p2p = gshmemi_p2p_of(tp);
    memcpy(p2p->base[pe] + offset, src, len);
    gshmemi_host_signal((uint64_t *)(p2p->base[pe] + sig_offset), signal, sig_op);
    return 0;
}

static int p2p_fence(struct gshmemi_transport *tp, int pe)
{
    (void)tp;
    (void)pe;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return 0;
}

static int p2p_quiet(struct gshmemi_transport *tp)
{
    (void)tp;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
}

static void *p2p_ptr(struct gshmemi_transport *tp, int pe, size_t offset)
{
    char *base = gshmemi_p2p_of(tp)->base[pe];
    return base ? base + offset : NULL;
}

const struct gshmemi_transport_ops gshmemi_p2p_host_ops = {
    .size = sizeof(struct gshmemi_transport_ops),
    .name = "p2p",
    .put = p2p_put,
    .get = p2p_get,
    .put_nbi = p2p_put,
    .get_nbi = p2p_get,
    .iput = p2p_iput,
    .iget = p2p_iget,
    .amo = p2p_amo,
    .amo_async = gshmemi_transport_amo_async_sync,
    .put_signal = p2p_put_signal,
    .fence = p2p_fence,
    .quiet = p2p_quiet,
    .flush = gshmemi_transport_flush_none,
    .ptr = p2p_ptr,
    .destroy = gshmemi_p2p_destroy,
};
