/* tcp transport: pinned staging, copies and atomics for device heaps (CUDA builds). */
#include "transport/tcp_impl.h"

#include "core/heap.h"
#include "core/log.h"

#include <gshmem/status.h>

#include <stdlib.h>

#ifdef GSHMEM_HAVE_CUDA
#include "device/host_kernels.h"

#include <cuda_runtime_api.h>

struct tcp_cuda {
    cudaStream_t stream;
    void *stage[2];
    cudaEvent_t ev[2];
    int pending[2];
    uint64_t *fetched; /* pinned */
};

static int tcp_cuda_check(cudaError_t err, const char *what)
{
    if (err == cudaSuccess) return 0;
    GSHMEMI_ERROR(TRANSPORT, "tcp (device heap): %s failed: %s", what, cudaGetErrorString(err));
    return GSHMEMX_ERR_CUDA;
}

/* Device memory must not reach sendmsg or memcpy. The device heaps (ours, and peers'
 * mapped into its slots) are known by range: a VMM mapping is not reliably reported by
 * cudaPointerGetAttributes in every thread; anything else (cudaMalloc buffers the proxy
 * passes) is asked for. */
int gshmemi_tcp_is_device_ptr(const struct tcp_net *net, const void *p)
{
    if (net->device < 0 || p == NULL) return 0;
    uintptr_t a = (uintptr_t)p;
    int nheaps = __atomic_load_n(&net->nheaps, __ATOMIC_ACQUIRE);
    for (int i = 0; i < nheaps; i++) {
        const struct gshmemi_heap *h = net->heaps[i];
        if (h->kind != GSHMEMI_HEAP_KIND_DEVICE) continue;
        if (a - (uintptr_t)h->base < h->size) return 1;
        if (h->slots && a - (uintptr_t)h->slots < h->slot_size * (size_t)h->local_nranks) return 1;
    }
    struct cudaPointerAttributes attr;
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return attr.type == cudaMemoryTypeDevice;
}

int gshmemi_tcp_cuda_bind(int device, int own_thread)
{
    static __thread int bound = -1;
    if (device < 0) return 0;
    if (own_thread) {
        cudaError_t err = (cudaError_t)gshmemi_helper_thread_relax_capture();
        if (err != cudaSuccess) return tcp_cuda_check(err, "relaxing the service thread's stream capture mode");
    }
    if (bound == device) return 0;
    int rc = tcp_cuda_check(cudaSetDevice(device), "cudaSetDevice");
    if (rc == 0) bound = device;
    return rc;
}

int gshmemi_tcp_cuda_create(int device, struct tcp_cuda **out)
{
    struct tcp_cuda *cu = calloc(1, sizeof(*cu));
    if (!cu) return GSHMEMX_ERR_NOMEM;
    int rc = tcp_cuda_check(cudaSetDevice(device), "cudaSetDevice");
    if (rc == 0) rc = tcp_cuda_check((cudaError_t)gshmemi_kernels_preload(), "loading the atomic kernel");
    if (rc == 0) rc = tcp_cuda_check((cudaError_t)gshmemi_helper_stream_create((void **)&cu->stream), "stream creation");
    for (int i = 0; i < 2 && rc == 0; i++) {
        rc = tcp_cuda_check(cudaHostAlloc(&cu->stage[i], GSHMEMI_TCP_CHUNK, cudaHostAllocDefault), "pinned staging");
        if (rc == 0) rc = tcp_cuda_check(cudaEventCreateWithFlags(&cu->ev[i], cudaEventDisableTiming), "event");
    }
    if (rc == 0) rc = tcp_cuda_check(cudaHostAlloc((void **)&cu->fetched, 64, cudaHostAllocDefault), "pinned word");
    if (rc != 0) {
        gshmemi_tcp_cuda_destroy(cu);
        return rc;
    }
    *out = cu;
    return 0;
}

void gshmemi_tcp_cuda_destroy(struct tcp_cuda *cu)
{
    if (!cu) return;
    if (cu->stream) cudaStreamSynchronize(cu->stream);
    for (int i = 0; i < 2; i++) {
        if (cu->stage[i]) cudaFreeHost(cu->stage[i]);
        if (cu->ev[i]) cudaEventDestroy(cu->ev[i]);
    }
    if (cu->fetched) cudaFreeHost(cu->fetched);
    if (cu->stream) cudaStreamDestroy(cu->stream);
    free(cu);
}

void *gshmemi_tcp_cuda_stage(struct tcp_cuda *cu, int i)
{
    int rc = cu->pending[i] ? tcp_cuda_check(cudaEventSynchronize(cu->ev[i]), "staging copy") : 0;
    cu->pending[i] = 0;
    return rc ? NULL : cu->stage[i]; /* a copy that failed, or may still run: not this buffer */
}

int gshmemi_tcp_cuda_copy(struct tcp_cuda *cu, int i, void *device_addr, size_t len, int to_device)
{
    void *stage = gshmemi_tcp_cuda_stage(cu, i);
    if (!stage) return GSHMEMX_ERR_CUDA; /* its last copy failed (logged) */
    /* Default: the proxy's sources may be any memory the GPU addresses. */
    cudaError_t err = to_device ? cudaMemcpyAsync(device_addr, stage, len, cudaMemcpyDefault, cu->stream)
                                : cudaMemcpyAsync(stage, device_addr, len, cudaMemcpyDefault, cu->stream);
    if (err == cudaSuccess) err = cudaEventRecord(cu->ev[i], cu->stream);
    cu->pending[i] = err == cudaSuccess;
    return tcp_cuda_check(err, to_device ? "copy into the device heap" : "copy out of device memory");
}

int gshmemi_tcp_cuda_sync(struct tcp_cuda *cu)
{
    return tcp_cuda_check(cudaStreamSynchronize(cu->stream), "stream synchronize");
}

static int tcp_cuda_memcpy(struct tcp_cuda *cu, void *dst, const void *src, size_t len)
{
    cudaError_t err = cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, cu->stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(cu->stream);
    return tcp_cuda_check(err, "copy");
}

/* Strides a 2D copy takes: at least the element (no overlap), at most this. */
#define TCP_CUDA_MAX_PITCH ((ptrdiff_t)1 << 30)

int gshmemi_tcp_cuda_strided(struct tcp_cuda *cu, char *packed, char *device, ptrdiff_t stride, size_t elem, size_t n,
                             int to_device)
{
    if (n == 0) return 0;
    if (stride < (ptrdiff_t)elem || stride > TCP_CUDA_MAX_PITCH) { /* negative, overlapping or huge: one by one */
        int rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++) {
            char *d = device + (ptrdiff_t)i * stride;
            rc = to_device ? tcp_cuda_memcpy(cu, d, packed + i * elem, elem)
                           : tcp_cuda_memcpy(cu, packed + i * elem, d, elem);
        }
        return rc;
    }
    /* One copy of n rows of elem bytes: the copy engines do strided copies themselves. */
    cudaError_t err = to_device ? cudaMemcpy2DAsync(device, (size_t)stride, packed, elem, elem, n, cudaMemcpyDefault,
                                                    cu->stream)
                                : cudaMemcpy2DAsync(packed, elem, device, (size_t)stride, elem, n, cudaMemcpyDefault,
                                                    cu->stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(cu->stream);
    return tcp_cuda_check(err, to_device ? "strided copy into device memory" : "strided copy out of device memory");
}

int gshmemi_tcp_cuda_amo(struct tcp_cuda *cu, void *addr, int op, unsigned width, uint64_t operand, uint64_t compare,
                         uint64_t *fetched)
{
    cudaError_t err = (cudaError_t)gshmemi_kernel_amo(addr, op, width, operand, compare, fetched ? cu->fetched : NULL,
                                                      cu->stream);
    if (err == cudaSuccess && fetched) err = cudaStreamSynchronize(cu->stream);
    if (err == cudaSuccess && fetched) *fetched = *cu->fetched;
    return tcp_cuda_check(err, "atomic on the device heap");
}

#else /* no CUDA: device heaps do not exist */

int gshmemi_tcp_is_device_ptr(const struct tcp_net *net, const void *p)
{
    (void)net, (void)p;
    return 0;
}
int gshmemi_tcp_cuda_create(int device, struct tcp_cuda **out)
{
    (void)device;
    *out = NULL;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}
int gshmemi_tcp_cuda_bind(int device, int own_thread)
{
    (void)device, (void)own_thread;
    return 0;
}
void gshmemi_tcp_cuda_destroy(struct tcp_cuda *cu) { (void)cu; }
void *gshmemi_tcp_cuda_stage(struct tcp_cuda *cu, int i)
{
    (void)cu, (void)i;
    return NULL;
}
int gshmemi_tcp_cuda_copy(struct tcp_cuda *cu, int i, void *device_addr, size_t len, int to_device)
{
    (void)cu, (void)i, (void)device_addr, (void)len, (void)to_device;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}
int gshmemi_tcp_cuda_sync(struct tcp_cuda *cu)
{
    (void)cu;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}
int gshmemi_tcp_cuda_strided(struct tcp_cuda *cu, char *packed, char *device, ptrdiff_t stride, size_t elem, size_t n,
                             int to_device)
{
    (void)cu, (void)packed, (void)device, (void)stride, (void)elem, (void)n, (void)to_device;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}
int gshmemi_tcp_cuda_amo(struct tcp_cuda *cu, void *addr, int op, unsigned width, uint64_t operand, uint64_t compare,
                         uint64_t *fetched)
{
    (void)cu, (void)addr, (void)op, (void)width, (void)operand, (void)compare, (void)fetched;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}
#endif
