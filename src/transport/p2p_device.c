/*
 * p2p transport, device-heap ops for host-initiated calls: node-local peers' device
 * heaps are mapped into this process's GPU address space, so host RMA is a CUDA copy
 * to or from the peer's slot and a host AMO is a one-thread kernel doing a
 * system-scope atomic there. Everything runs on one internal stream, in issue order,
 * and each call waits for its stream work: blocking semantics, and fence and quiet
 * have nothing left to order.
 */
#include "transport/p2p.h"

#include "core/heap.h"
#include "core/log.h"

#include <gshmem/status.h>

#ifdef GSHMEM_HAVE_CUDA
#include "device/cuda_bind.h"
#include "device/host_kernels.h"
#include "transport/transport_stubs.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>

struct p2p_device_ctx {
    cudaStream_t stream;
    uint64_t *fetched; /* pinned host word for AMO results */
    int device;        /* the GPU the stream belongs to */
};

/* The context, with its GPU made current: the caller may be a thread gshmem has not
 * seen, which starts on GPU 0, where the stream and the kernels would not work. The
 * thread's own device comes back in p2p_device_finish, which every op ends with. */
static _Thread_local int p2p_caller_device = -1;

static struct p2p_device_ctx *p2p_device(struct gshmemi_transport *tp)
{
    struct p2p_device_ctx *ctx = gshmemi_p2p_of(tp)->device_ctx;
    int previous;
    if (p2p_caller_device < 0 && gshmemi_cuda_bind(ctx->device, &previous) == cudaSuccess && previous != ctx->device)
        p2p_caller_device = previous;
    return ctx;
}

/* Waits for the stream; a CUDA error is logged with the peer. */
static int p2p_device_finish(struct gshmemi_transport *tp, cudaError_t err, const char *what, int pe)
{
    if (err == cudaSuccess) err = cudaStreamSynchronize(p2p_device(tp)->stream);
    if (p2p_caller_device >= 0) {
        cudaSetDevice(p2p_caller_device);
        p2p_caller_device = -1;
    }
    if (err == cudaSuccess) return 0;
    GSHMEMI_ERROR(TRANSPORT, "p2p (device heap): %s with PE %d failed: %s", what, pe, cudaGetErrorString(err));
    return GSHMEMX_ERR_CUDA;
}

static int p2p_device_put(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len)
{
    char *dst = gshmemi_p2p_of(tp)->base[pe] + offset;
    return p2p_device_finish(tp, cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, p2p_device(tp)->stream), "put", pe);
}

static int p2p_device_get(struct gshmemi_transport *tp, int pe, void *dst, size_t offset, size_t len)
{
    const char *src = gshmemi_p2p_of(tp)->base[pe] + offset;
    return p2p_device_finish(tp, cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, p2p_device(tp)->stream), "get", pe);
}

static cudaError_t p2p_device_strided(cudaStream_t stream, char *dst, ptrdiff_t dst_stride, const char *src,
                                      ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    if (dst_stride > 0 && src_stride > 0 && (size_t)dst_stride >= elem && (size_t)src_stride >= elem)
        return cudaMemcpy2DAsync(dst, (size_t)dst_stride, src, (size_t)src_stride, elem, nelems, cudaMemcpyDefault,
                                 stream);
    cudaError_t err = cudaSuccess;
    for (size_t i = 0; i < nelems && err == cudaSuccess; i++)
        err = cudaMemcpyAsync(dst + (ptrdiff_t)i * dst_stride, src + (ptrdiff_t)i * src_stride, elem,
                              cudaMemcpyDefault, stream);
    return err;
}

static int p2p_device_iput(struct gshmemi_transport *tp, int pe, size_t offset, ptrdiff_t dst_stride, const void *src,
                           ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    char *dst = gshmemi_p2p_of(tp)->base[pe] + offset;
    return p2p_device_finish(tp, p2p_device_strided(p2p_device(tp)->stream, dst, dst_stride, src, src_stride, elem,
                                                    nelems), "iput", pe);
}

static int p2p_device_iget(struct gshmemi_transport *tp, int pe, void *dst, ptrdiff_t dst_stride, size_t offset,
                           ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    const char *src = gshmemi_p2p_of(tp)->base[pe] + offset;
    return p2p_device_finish(tp, p2p_device_strided(p2p_device(tp)->stream, dst, dst_stride, src, src_stride, elem,
                                                    nelems), "iget", pe);
}

static int p2p_device_amo(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo, uint64_t *fetched)
{
    struct p2p_device_ctx *ctx = p2p_device(tp);
    char *addr = gshmemi_p2p_of(tp)->base[pe] + amo->offset;
    cudaError_t err = (cudaError_t)gshmemi_kernel_amo(addr, amo->op, amo->width, amo->operand, amo->compare,
                                                      ctx->fetched, ctx->stream);
    int rc = p2p_device_finish(tp, err, "atomic", pe);
    if (rc == 0 && fetched) *fetched = *(volatile uint64_t *)ctx->fetched;
    return rc;
}

static int p2p_device_put_signal(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len,
                                 size_t sig_offset, uint64_t signal, int sig_op)
{
    struct p2p_device_ctx *ctx = p2p_device(tp);
    char *base = gshmemi_p2p_of(tp)->base[pe];
    cudaError_t err = len ? cudaMemcpyAsync(base + offset, src, len, cudaMemcpyDefault, ctx->stream) : cudaSuccess;
    /* Same stream: the signal kernel starts after the copy has landed. */
    if (err == cudaSuccess)
        err = (cudaError_t)gshmemi_kernel_amo(base + sig_offset, sig_op == 1 ? GSHMEMI_AMO_ADD : GSHMEMI_AMO_SET, 8,
                                             signal, 0, NULL, ctx->stream);
    return p2p_device_finish(tp, err, "put_signal", pe);
}

static int p2p_device_fence(struct gshmemi_transport *tp, int pe)
{
    (void)tp, (void)pe;
    return 0;
}

static int p2p_device_quiet(struct gshmemi_transport *tp)
{
    return p2p_device_finish(tp, cudaSuccess, "quiet", gshmemi_p2p_of(tp)->my_pe);
}

/* A device address: usable in kernels, not dereferenceable by the host. */
static void *p2p_device_ptr(struct gshmemi_transport *tp, int pe, size_t offset)
{
    char *base = gshmemi_p2p_of(tp)->base[pe];
    return base ? base + offset : NULL;
}

int gshmemi_p2p_device_init(struct gshmemi_p2p *p2p)
{
    struct p2p_device_ctx *ctx = calloc(1, sizeof(*ctx));
    if (!ctx) return GSHMEMX_ERR_NOMEM;
    p2p->device_ctx = ctx;
    cudaError_t err = cudaGetDevice(&ctx->device); /* init made the PE's GPU current */
    if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking);
    if (err == cudaSuccess) err = cudaHostAlloc((void **)&ctx->fetched, sizeof(uint64_t), cudaHostAllocMapped);
    if (err == cudaSuccess) return 0;
    GSHMEMI_ERROR(TRANSPORT, "p2p (device heap): creating the internal stream failed: %s", cudaGetErrorString(err));
    return GSHMEMX_ERR_CUDA;
}

void gshmemi_p2p_device_fini(struct gshmemi_p2p *p2p)
{
    struct p2p_device_ctx *ctx = p2p->device_ctx;
    if (ctx->stream) cudaStreamDestroy(ctx->stream);
    if (ctx->fetched) cudaFreeHost(ctx->fetched);
    free(ctx);
    p2p->device_ctx = NULL;
}

const struct gshmemi_transport_ops gshmemi_p2p_device_ops = {
    .size = sizeof(struct gshmemi_transport_ops),
    .name = "p2p-device",
    .put = p2p_device_put,
    .get = p2p_device_get,
    .put_nbi = p2p_device_put,
    .get_nbi = p2p_device_get,
    .iput = p2p_device_iput,
    .iget = p2p_device_iget,
    .amo = p2p_device_amo,
    .amo_async = gshmemi_transport_amo_async_sync,
    .put_signal = p2p_device_put_signal,
    .fence = p2p_device_fence,
    .quiet = p2p_device_quiet,
    .flush = gshmemi_transport_flush_none,
    .ptr = p2p_device_ptr,
    .destroy = gshmemi_p2p_destroy,
};
#else
#include "transport/transport_stubs.h"

int gshmemi_p2p_device_init(struct gshmemi_p2p *p2p)
{
    (void)p2p;
    GSHMEMI_ERROR(TRANSPORT, "p2p: device heaps need a CUDA build");
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

void gshmemi_p2p_device_fini(struct gshmemi_p2p *p2p)
{
    p2p->device_ctx = NULL;
}

/* Without CUDA there is no device heap; every entry says so. */
const struct gshmemi_transport_ops gshmemi_p2p_device_ops = {
    .size = sizeof(struct gshmemi_transport_ops),
    .name = "p2p-device (not built)",
    .put = gshmemi_transport_stub_put,
    .get = gshmemi_transport_stub_get,
    .put_nbi = gshmemi_transport_stub_put,
    .get_nbi = gshmemi_transport_stub_get,
    .iput = gshmemi_transport_stub_iput,
    .iget = gshmemi_transport_stub_iget,
    .amo = gshmemi_transport_stub_amo,
    .amo_async = gshmemi_transport_stub_amo_async,
    .put_signal = gshmemi_transport_stub_put_signal,
    .fence = gshmemi_transport_stub_fence,
    .quiet = gshmemi_transport_stub_quiet,
    .flush = gshmemi_transport_flush_none,
    .ptr = gshmemi_transport_stub_ptr,
    .destroy = gshmemi_p2p_destroy,
};
#endif
