/* Explicit "not supported" entries for ops tables, so callers never test for NULL. */
#ifndef GSHMEMI_TRANSPORT_STUBS_H
#define GSHMEMI_TRANSPORT_STUBS_H

#include "transport/transport.h"

int gshmemi_transport_stub_put(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len);
int gshmemi_transport_stub_get(struct gshmemi_transport *tp, int pe, void *dst, size_t offset, size_t len);
int gshmemi_transport_stub_iput(struct gshmemi_transport *tp, int pe, size_t offset, ptrdiff_t dst_stride,
                                const void *src, ptrdiff_t src_stride, size_t elem, size_t nelems);
int gshmemi_transport_stub_iget(struct gshmemi_transport *tp, int pe, void *dst, ptrdiff_t dst_stride, size_t offset,
                                ptrdiff_t src_stride, size_t elem, size_t nelems);
int gshmemi_transport_stub_amo(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo, uint64_t *fetched);
/* amo_async for transports whose atomics answer at once: amo, then done. */
int gshmemi_transport_amo_async_sync(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo,
                                     void (*done)(void *arg, uint64_t tag, uint64_t value), void *arg, uint64_t tag);
int gshmemi_transport_stub_amo_async(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo,
                                     void (*done)(void *arg, uint64_t tag, uint64_t value), void *arg, uint64_t tag);
int gshmemi_transport_stub_put_signal(struct gshmemi_transport *tp, int pe, size_t offset, const void *src,
                                      size_t len, size_t sig_offset, uint64_t signal, int sig_op);
int gshmemi_transport_stub_fence(struct gshmemi_transport *tp, int pe);
int gshmemi_transport_stub_quiet(struct gshmemi_transport *tp);
/* flush for transports that hold nothing back. */
void gshmemi_transport_flush_none(struct gshmemi_transport *tp);
void *gshmemi_transport_stub_ptr(struct gshmemi_transport *tp, int pe, size_t offset);

#endif
