/* Atomics on device heap words, on behalf of host calls. */
#include "device/host_kernels.h"
#include "transport/transport.h"

#include <cuda/atomic>
#include <cuda_runtime.h>

template <typename T>
__device__ T host_kernels_apply(T *addr, int op, T operand, T compare)
{
    cuda::atomic_ref<T, cuda::thread_scope_system> ref(*addr);
    switch (op) {
    case GSHMEMI_AMO_FETCH: return ref.load(cuda::memory_order_acquire);
    case GSHMEMI_AMO_SET: ref.store(operand, cuda::memory_order_release); return 0;
    case GSHMEMI_AMO_SWAP: return ref.exchange(operand, cuda::memory_order_acq_rel);
    case GSHMEMI_AMO_COMPARE_SWAP: ref.compare_exchange_strong(compare, operand, cuda::memory_order_acq_rel); return compare;
    case GSHMEMI_AMO_ADD: return ref.fetch_add(operand, cuda::memory_order_acq_rel);
    case GSHMEMI_AMO_AND: return ref.fetch_and(operand, cuda::memory_order_acq_rel);
    case GSHMEMI_AMO_OR: return ref.fetch_or(operand, cuda::memory_order_acq_rel);
    default: return ref.fetch_xor(operand, cuda::memory_order_acq_rel);
    }
}

__global__ void host_kernels_amo(void *addr, int op, unsigned width, uint64_t operand, uint64_t compare,
                                 uint64_t *fetched)
{
    uint64_t old;
    if (width == 8)
        old = host_kernels_apply<unsigned long long>((unsigned long long *)addr, op, operand, compare);
    else
        old = host_kernels_apply<unsigned int>((unsigned int *)addr, op, (unsigned int)operand, (unsigned int)compare);
    if (fetched) *fetched = old;
}

extern "C" int gshmemi_kernel_amo(void *addr, int op, unsigned width, uint64_t operand, uint64_t compare,
                                  uint64_t *fetched, void *stream)
{
    host_kernels_amo<<<1, 1, 0, (cudaStream_t)stream>>>(addr, op, width, operand, compare, fetched);
    return (int)cudaGetLastError();
}

extern "C" int gshmemi_kernels_preload(void)
{
    cudaFuncAttributes attr;
    return (int)cudaFuncGetAttributes(&attr, host_kernels_amo);
}

extern "C" int gshmemi_helper_stream_create(void **stream)
{
    int least = 0, greatest = 0;
    cudaError_t err = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    if (err == cudaSuccess)
        err = cudaStreamCreateWithPriority((cudaStream_t *)stream, cudaStreamNonBlocking, greatest);
    return (int)err;
}

extern "C" int gshmemi_helper_thread_relax_capture(void)
{
    static thread_local bool relaxed;
    if (relaxed) return (int)cudaSuccess;
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaError_t err = cudaThreadExchangeStreamCaptureMode(&mode);
    relaxed = err == cudaSuccess;
    return (int)err;
}
