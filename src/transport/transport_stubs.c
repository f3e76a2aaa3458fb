/* "Not supported" entries for ops tables. */
#include "transport/transport_stubs.h"

#include <gshmem/status.h>

int gshmemi_transport_stub_put(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len)
{
    (void)tp, (void)pe, (void)offset, (void)src, (void)len;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

int gshmemi_transport_stub_get(struct gshmemi_transport *tp, int pe, void *dst, size_t offset, size_t len)
{
    (void)tp, (void)pe, (void)dst, (void)offset, (void)len;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

int gshmemi_transport_stub_iput(struct gshmemi_transport *tp, int pe, size_t offset, ptrdiff_t dst_stride,
                                const void *src, ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    (void)tp, (void)pe, (void)offset, (void)dst_stride, (void)src, (void)src_stride, (void)elem, (void)nelems;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

int gshmemi_transport_stub_iget(struct gshmemi_transport *tp, int pe, void *dst, ptrdiff_t dst_stride, size_t offset,
                                ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    (void)tp, (void)pe, (void)dst, (void)dst_stride, (void)offset, (void)src_stride, (void)elem, (void)nelems;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

int gshmemi_transport_stub_amo(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo, uint64_t *fetched)
{
    (void)tp, (void)pe, (void)amo, (void)fetched;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

int gshmemi_transport_amo_async_sync(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo,
                                     void (*done)(void *arg, uint64_t tag, uint64_t value), void *arg, uint64_t tag)
{
    uint64_t value = 0;
    int rc = tp->ops->amo(tp, pe, amo, &value);
    if (rc == 0) done(arg, tag, value);
    return rc;
}

int gshmemi_transport_stub_amo_async(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo,
                                     void (*done)(void *arg, uint64_t tag, uint64_t value), void *arg, uint64_t tag)
{
    (void)tp, (void)pe, (void)amo, (void)done, (void)arg, (void)tag;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

int gshmemi_transport_stub_put_signal(struct gshmemi_transport *tp, int pe, size_t offset, const void *src,
                                      size_t len, size_t sig_offset, uint64_t signal, int sig_op)
{
    (void)tp, (void)pe, (void)offset, (void)src, (void)len, (void)sig_offset, (void)signal, (void)sig_op;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

int gshmemi_transport_stub_fence(struct gshmemi_transport *tp, int pe)
{
    (void)tp, (void)pe;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

int gshmemi_transport_stub_quiet(struct gshmemi_transport *tp)
{
    (void)tp;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

void gshmemi_transport_flush_none(struct gshmemi_transport *tp)
{
    (void)tp;
}

void *gshmemi_transport_stub_ptr(struct gshmemi_transport *tp, int pe, size_t offset)
{
    (void)tp, (void)pe, (void)offset;
    return NULL;
}
