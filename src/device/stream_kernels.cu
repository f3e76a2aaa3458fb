/* Kernels and launchers for the stream-ordered host API (gshmemx_*_on_stream). */
#include "device/stream_kernels.h"

#include "device/cuda_bind.h"

#include <gshmem/impl/device_poll.cuh>
#include <gshmem/types.h>

#include <cuda/atomic>
#include <cuda_runtime.h>
#include <stdio.h>

namespace {

typedef unsigned long long word_t;
typedef cuda::atomic_ref<word_t, cuda::thread_scope_system> sys_word;

/* The waits below poll relaxed and acquire once, with a fence, when satisfied: an
 * acquire load on every poll would invalidate the SM's L1 on every turn (CCTL.IVALL on
 * sm_90), under the feet of whatever else runs on that SM. The fence makes each relaxed
 * load that saw a release (SET, ADD or a barrier's arrival) synchronize with it. */
__device__ __forceinline__ void stream_acquire()
{
    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);
}

__global__ void stream_signal_kernel(word_t *sig, word_t value, int op)
{
    sys_word ref(*sig);
    if (op == GSHMEM_SIGNAL_ADD) ref.fetch_add(value, cuda::memory_order_release);
    else ref.store(value, cuda::memory_order_release);
}

__global__ void stream_wait_kernel(word_t *sig, int cmp, word_t value, uint64_t timeout_ns, int my_pe)
{
    sys_word ref(*sig);
    gshmemi::wait_clock clock;
    word_t seen;
    while (!gshmemi::compare<word_t>(seen = ref.load(cuda::memory_order_relaxed), cmp, value)) {
        if (clock.expired(timeout_ns)) {
            printf("gshmem: PE %d: gshmemx_signal_wait_until_on_stream timed out after %.3f s (GSHMEM_TIMEOUT) "
                   "waiting for the signal at %p to satisfy cmp=%d against %llu (it holds %llu)\n",
                   my_pe, (double)timeout_ns * 1e-9, (void *)sig, cmp, value, seen);
            __trap();
        }
    }
    stream_acquire();
}

__global__ void stream_quiet_kernel()
{
    cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
}

/* The dissemination barrier of gshmemi::pe_barrier (include/gshmem/impl/device_sync.cuh),
 * on the same words, so device-side and stream-ordered barriers may alternate. */
__global__ void stream_barrier_kernel(gshmemi_stream_barrier_args args)
{
    if (args.complete) cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
    gshmemi_device_sync_area *mine = (gshmemi_device_sync_area *)args.mine;
    word_t epoch = ++mine->barrier_epoch;
    gshmemi::wait_clock clock; /* over every round */
    for (int round = 0; round < args.rounds; round++) {
        gshmemi_device_sync_area *to = (gshmemi_device_sync_area *)args.to[round];
        sys_word(*(word_t *)&to->barrier_flags[round]).fetch_add(1, cuda::memory_order_release);
        sys_word flag(*(word_t *)&mine->barrier_flags[round]);
        while (flag.load(cuda::memory_order_relaxed) < epoch) {
            if (clock.expired(args.timeout_ns)) {
                printf("gshmem: PE %d: gshmemx_barrier_all/sync_all_on_stream timed out after %.3f s "
                       "(GSHMEM_TIMEOUT) in round %d of %d, barrier %llu: a PE has not reached it\n",
                       args.my_pe, (double)args.timeout_ns * 1e-9, round + 1, args.rounds, epoch);
                __trap();
            }
        }
        stream_acquire(); /* before the next round's release passes it on */
    }
}

} /* namespace */

extern "C" int gshmemi_stream_copy(int device, void *dst, const void *src, size_t len, struct CUstream_st *stream)
{
    cudaError_t err = gshmemi_cuda_bind(device, NULL);
    if (err == cudaSuccess) err = cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, stream);
    return (int)err;
}

extern "C" int gshmemi_stream_signal(int device, uint64_t *sig, uint64_t value, int op, struct CUstream_st *stream)
{
    cudaError_t err = gshmemi_cuda_bind(device, NULL);
    if (err != cudaSuccess) return (int)err;
    stream_signal_kernel<<<1, 1, 0, stream>>>((word_t *)sig, value, op);
    return (int)cudaGetLastError();
}

extern "C" int gshmemi_stream_wait(int device, const uint64_t *sig, int cmp, uint64_t value, uint64_t timeout_ns,
                                   int my_pe, struct CUstream_st *stream)
{
    cudaError_t err = gshmemi_cuda_bind(device, NULL);
    if (err != cudaSuccess) return (int)err;
    stream_wait_kernel<<<1, 1, 0, stream>>>((word_t *)sig, cmp, value, timeout_ns, my_pe);
    return (int)cudaGetLastError();
}

extern "C" int gshmemi_stream_quiet(int device, struct CUstream_st *stream)
{
    cudaError_t err = gshmemi_cuda_bind(device, NULL);
    if (err != cudaSuccess) return (int)err;
    stream_quiet_kernel<<<1, 1, 0, stream>>>();
    return (int)cudaGetLastError();
}

extern "C" int gshmemi_stream_barrier(int device, const struct gshmemi_stream_barrier_args *args,
                                      struct CUstream_st *stream)
{
    cudaError_t err = gshmemi_cuda_bind(device, NULL);
    if (err != cudaSuccess) return (int)err;
    stream_barrier_kernel<<<1, 1, 0, stream>>>(*args);
    return (int)cudaGetLastError();
}

extern "C" const char *gshmemi_stream_error_string(int err)
{
    return cudaGetErrorString((cudaError_t)err);
}
