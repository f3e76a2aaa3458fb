/* Inline device implementation, part 2: RMA and signals for a thread, a warp or a block. */
#ifndef GSHMEM_IMPL_DEVICE_RMA_CUH
#define GSHMEM_IMPL_DEVICE_RMA_CUH

#include <gshmem/impl/device_common.cuh>

namespace gshmemi {

/* Who cooperates in a call: one thread, the calling warp (all 32 lanes), or the block. */
enum scope { SCOPE_THREAD, SCOPE_WARP, SCOPE_BLOCK };

template <int S> __device__ __forceinline__ unsigned scope_rank()
{
    if (S == SCOPE_THREAD) return 0;
    if (S == SCOPE_WARP) {
        unsigned lane;
        asm("mov.u32 %0, %%laneid;" : "=r"(lane));
        return lane;
    }
    return block_rank();
}
template <int S> __device__ __forceinline__ unsigned scope_size()
{
    return S == SCOPE_THREAD ? 1u : S == SCOPE_WARP ? 32u : block_size();
}
template <int S> __device__ __forceinline__ void scope_sync()
{
    if (S == SCOPE_WARP) __syncwarp();
    else if (S == SCOPE_BLOCK) __syncthreads();
}

template <int S> __device__ __forceinline__ void putmem(void *dest, const void *source, size_t n, int pe)
{
    copy((char *)peer(dest, pe), (const char *)source, n, scope_rank<S>(), scope_size<S>());
    scope_sync<S>();
}

template <int S> __device__ __forceinline__ void getmem(void *dest, const void *source, size_t n, int pe)
{
    copy((char *)dest, (const char *)peer(source, pe), n, scope_rank<S>(), scope_size<S>());
    scope_sync<S>();
}

template <int S, typename T>
__device__ __forceinline__ void iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)
{
    strided(peer(dest, pe), dst, source, sst, nelems, scope_rank<S>(), scope_size<S>());
    scope_sync<S>();
}

template <int S, typename T>
__device__ __forceinline__ void iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)
{
    strided(dest, dst, peer(source, pe), sst, nelems, scope_rank<S>(), scope_size<S>());
    scope_sync<S>();
}

/* SET or ADD on pe's signal word with release semantics: whoever observes the new
 * value also observes the writes this thread (and, after a group sync, its group)
 * made before. */
__device__ __forceinline__ void signal_update(unsigned long long *p, bool gpu_scope, uint64_t signal, int sig_op)
{
    if (sig_op == GSHMEM_SIGNAL_ADD) add_release(p, signal, gpu_scope);
    else store_release(p, signal, gpu_scope);
}
__device__ __forceinline__ void signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    signal_update((unsigned long long *)peer(sig_addr, pe), same_gpu(pe), signal, sig_op);
}

/* Up to this size a block's put_signal is copied by its first warps only (one warp per
 * 2 KiB), which then signal after a barrier of just those warps: the rest of the block's
 * barrier stays off the latency path. */
#define GSHMEMI_BLOCK_SIGNAL_PARTIAL_BYTES 16384

template <int S>
__device__ __forceinline__ void putmem_signal(void *dest, const void *source, size_t n, uint64_t *sig_addr,
                                              uint64_t signal, int sig_op, int pe)
{
    /* The signal's address and scope first: their constant-bank loads then overlap the
     * copy instead of following it on the latency path. */
    unsigned long long *sig = (unsigned long long *)peer(sig_addr, pe);
    bool gpu_scope = same_gpu(pe);
    if (S == SCOPE_BLOCK && n <= GSHMEMI_BLOCK_SIGNAL_PARTIAL_BYTES) {
        unsigned rank = block_rank(), size = block_size();
        unsigned part = (unsigned)((n + 2047) / 2048) * 32;
        if (part == 0) part = 32;
        if (part < size) {
            if (rank < part) {
                copy((char *)peer(dest, pe), (const char *)source, n, rank, part);
                if (part == 32) __syncwarp();
                else asm volatile("bar.sync 15, %0;" ::"r"(part) : "memory"); /* the copying warps only */
                if (rank == 0) signal_update(sig, gpu_scope, signal, sig_op);
            }
            __syncthreads(); /* nobody returns before the source is copied */
            return;
        }
    }
    copy((char *)peer(dest, pe), (const char *)source, n, scope_rank<S>(), scope_size<S>());
    scope_sync<S>();
    /* The group barrier orders the group's stores before the first thread's release,
     * which is cumulative: whoever acquires the signal sees every thread's data. No
     * barrier after it: every thread's part of the source is already copied. */
    if (scope_rank<S>() == 0) signal_update(sig, gpu_scope, signal, sig_op);
}

} /* namespace gshmemi */

/* ---- Names shared with the host API: device versions exist only in the device pass. */
#ifdef __CUDA_ARCH__
GSHMEMI_DEVICE_INLINE void gshmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    gshmemi::putmem<gshmemi::SCOPE_THREAD>(dest, source, nelems, pe);
}
GSHMEMI_DEVICE_INLINE void gshmem_getmem(void *dest, const void *source, size_t nelems, int pe)
{
    gshmemi::getmem<gshmemi::SCOPE_THREAD>(dest, source, nelems, pe);
}
GSHMEMI_DEVICE_INLINE void gshmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    gshmemi::putmem<gshmemi::SCOPE_THREAD>(dest, source, nelems, pe);
}
GSHMEMI_DEVICE_INLINE void gshmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    gshmemi::getmem<gshmemi::SCOPE_THREAD>(dest, source, nelems, pe);
}
GSHMEMI_DEVICE_INLINE void gshmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                                uint64_t signal, int sig_op, int pe)
{
    gshmemi::putmem_signal<gshmemi::SCOPE_THREAD>(dest, source, nelems, sig_addr, signal, sig_op, pe);
}
GSHMEMI_DEVICE_INLINE void gshmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems,
                                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    gshmemi::putmem_signal<gshmemi::SCOPE_THREAD>(dest, source, nelems, sig_addr, signal, sig_op, pe);
}
GSHMEMI_DEVICE_INLINE void gshmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe)
{
    gshmemi::signal_op(sig_addr, signal, GSHMEM_SIGNAL_ADD, pe);
}
GSHMEMI_DEVICE_INLINE void gshmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe)
{
    gshmemi::signal_op(sig_addr, signal, GSHMEM_SIGNAL_SET, pe);
}
GSHMEMI_DEVICE_INLINE uint64_t gshmem_signal_fetch(const uint64_t *sig_addr)
{
    return gshmemi::load_acquire((const volatile unsigned long long *)sig_addr);
}

#define GSHMEMI_DEVICE_RMA(T, N)                                                                                \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_put(T *dest, const T *source, size_t nelems, int pe)                \
    {                                                                                                           \
        gshmemi::putmem<gshmemi::SCOPE_THREAD>(dest, source, nelems * sizeof(T), pe);                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_get(T *dest, const T *source, size_t nelems, int pe)                \
    {                                                                                                           \
        gshmemi::getmem<gshmemi::SCOPE_THREAD>(dest, source, nelems * sizeof(T), pe);                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe)            \
    {                                                                                                           \
        gshmemi::putmem<gshmemi::SCOPE_THREAD>(dest, source, nelems * sizeof(T), pe);                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe)            \
    {                                                                                                           \
        gshmemi::getmem<gshmemi::SCOPE_THREAD>(dest, source, nelems * sizeof(T), pe);                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_p(T *dest, T value, int pe)                                         \
    {                                                                                                           \
        *(volatile T *)gshmemi::peer(dest, pe) = value;                                                         \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE T gshmem_##N##_g(const T *source, int pe)                                             \
    {                                                                                                           \
        return *(const volatile T *)gshmemi::peer(source, pe);                                                  \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,        \
                                                 size_t nelems, int pe)                                         \
    {                                                                                                           \
        gshmemi::iput<gshmemi::SCOPE_THREAD>(dest, source, dst, sst, nelems, pe);                               \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,        \
                                                 size_t nelems, int pe)                                         \
    {                                                                                                           \
        gshmemi::iget<gshmemi::SCOPE_THREAD>(dest, source, dst, sst, nelems, pe);                               \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_put_signal(T *dest, const T *source, size_t nelems,                 \
                                                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) \
    {                                                                                                           \
        gshmemi::putmem_signal<gshmemi::SCOPE_THREAD>(dest, source, nelems * sizeof(T), sig_addr, signal,       \
                                                      sig_op, pe);                                              \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems,             \
                                                           uint64_t *sig_addr, uint64_t signal, int sig_op,     \
                                                           int pe)                                              \
    {                                                                                                           \
        gshmemi::putmem_signal<gshmemi::SCOPE_THREAD>(dest, source, nelems * sizeof(T), sig_addr, signal,       \
                                                      sig_op, pe);                                              \
    }
GSHMEM_RMA_DEVICE_TYPES(GSHMEMI_DEVICE_RMA)
#undef GSHMEMI_DEVICE_RMA

#define GSHMEMI_DEVICE_SIZED(BITS, T)                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_put##BITS(void *dest, const void *source, size_t nelems, int pe)          \
    {                                                                                                           \
        gshmemi::putmem<gshmemi::SCOPE_THREAD>(dest, source, nelems * sizeof(T), pe);                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_get##BITS(void *dest, const void *source, size_t nelems, int pe)          \
    {                                                                                                           \
        gshmemi::getmem<gshmemi::SCOPE_THREAD>(dest, source, nelems * sizeof(T), pe);                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe)    \
    {                                                                                                           \
        gshmemi::putmem<gshmemi::SCOPE_THREAD>(dest, source, nelems * sizeof(T), pe);                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe)    \
    {                                                                                                           \
        gshmemi::getmem<gshmemi::SCOPE_THREAD>(dest, source, nelems * sizeof(T), pe);                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,  \
                                                 size_t nelems, int pe)                                         \
    {                                                                                                           \
        gshmemi::iput<gshmemi::SCOPE_THREAD>((T *)dest, (const T *)source, dst, sst, nelems, pe);               \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,  \
                                                 size_t nelems, int pe)                                         \
    {                                                                                                           \
        gshmemi::iget<gshmemi::SCOPE_THREAD>((T *)dest, (const T *)source, dst, sst, nelems, pe);               \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_put##BITS##_signal(void *dest, const void *source, size_t nelems,         \
                                                         uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) \
    {                                                                                                           \
        gshmemi::putmem_signal<gshmemi::SCOPE_THREAD>(dest, source, nelems * sizeof(T), sig_addr, signal,       \
                                                      sig_op, pe);                                              \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_put##BITS##_signal_nbi(void *dest, const void *source, size_t nelems,     \
                                                             uint64_t *sig_addr, uint64_t signal, int sig_op,   \
                                                             int pe)                                            \
    {                                                                                                           \
        gshmemi::putmem_signal<gshmemi::SCOPE_THREAD>(dest, source, nelems * sizeof(T), sig_addr, signal,       \
                                                      sig_op, pe);                                              \
    }
GSHMEM_SIZED_TYPES(GSHMEMI_DEVICE_SIZED)
#undef GSHMEMI_DEVICE_SIZED
#endif /* __CUDA_ARCH__ */

/* ---- Device-only extensions: cooperative forms, callable by every thread of the warp
 * (all 32 lanes) or of the block, with the same arguments. ---- */
GSHMEMI_DEVICE_INLINE void gshmemx_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    gshmemi::signal_op(sig_addr, signal, sig_op, pe);
}

#define GSHMEMI_DEVICE_GROUP_MEM(SUFFIX, S)                                                                     \
    GSHMEMI_DEVICE_INLINE void gshmemx_putmem_##SUFFIX(void *dest, const void *source, size_t nelems, int pe)   \
    {                                                                                                           \
        gshmemi::putmem<S>(dest, source, nelems, pe);                                                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_getmem_##SUFFIX(void *dest, const void *source, size_t nelems, int pe)   \
    {                                                                                                           \
        gshmemi::getmem<S>(dest, source, nelems, pe);                                                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_putmem_nbi_##SUFFIX(void *dest, const void *source, size_t nelems,       \
                                                           int pe)                                              \
    {                                                                                                           \
        gshmemi::putmem<S>(dest, source, nelems, pe);                                                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_getmem_nbi_##SUFFIX(void *dest, const void *source, size_t nelems,       \
                                                           int pe)                                              \
    {                                                                                                           \
        gshmemi::getmem<S>(dest, source, nelems, pe);                                                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_putmem_signal_##SUFFIX(void *dest, const void *source, size_t nelems,    \
                                                              uint64_t *sig_addr, uint64_t signal, int sig_op,  \
                                                              int pe)                                           \
    {                                                                                                           \
        gshmemi::putmem_signal<S>(dest, source, nelems, sig_addr, signal, sig_op, pe);                          \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_putmem_signal_nbi_##SUFFIX(void *dest, const void *source, size_t nelems, \
                                                                  uint64_t *sig_addr, uint64_t signal,          \
                                                                  int sig_op, int pe)                           \
    {                                                                                                           \
        gshmemi::putmem_signal<S>(dest, source, nelems, sig_addr, signal, sig_op, pe);                          \
    }
GSHMEMI_DEVICE_GROUP_MEM(warp, gshmemi::SCOPE_WARP)
GSHMEMI_DEVICE_GROUP_MEM(block, gshmemi::SCOPE_BLOCK)
#undef GSHMEMI_DEVICE_GROUP_MEM

#define GSHMEMI_DEVICE_GROUP_RMA_SCOPE(T, N, SUFFIX, S)                                                         \
    GSHMEMI_DEVICE_INLINE void gshmemx_##N##_put_##SUFFIX(T *dest, const T *source, size_t nelems, int pe)      \
    {                                                                                                           \
        gshmemi::putmem<S>(dest, source, nelems * sizeof(T), pe);                                               \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_##N##_get_##SUFFIX(T *dest, const T *source, size_t nelems, int pe)      \
    {                                                                                                           \
        gshmemi::getmem<S>(dest, source, nelems * sizeof(T), pe);                                               \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_##N##_put_nbi_##SUFFIX(T *dest, const T *source, size_t nelems, int pe)  \
    {                                                                                                           \
        gshmemi::putmem<S>(dest, source, nelems * sizeof(T), pe);                                               \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_##N##_get_nbi_##SUFFIX(T *dest, const T *source, size_t nelems, int pe)  \
    {                                                                                                           \
        gshmemi::getmem<S>(dest, source, nelems * sizeof(T), pe);                                               \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_##N##_iput_##SUFFIX(T *dest, const T *source, ptrdiff_t dst,             \
                                                           ptrdiff_t sst, size_t nelems, int pe)                \
    {                                                                                                           \
        gshmemi::iput<S>(dest, source, dst, sst, nelems, pe);                                                   \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_##N##_iget_##SUFFIX(T *dest, const T *source, ptrdiff_t dst,             \
                                                           ptrdiff_t sst, size_t nelems, int pe)                \
    {                                                                                                           \
        gshmemi::iget<S>(dest, source, dst, sst, nelems, pe);                                                   \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_##N##_put_signal_##SUFFIX(T *dest, const T *source, size_t nelems,       \
                                                                 uint64_t *sig_addr, uint64_t signal,           \
                                                                 int sig_op, int pe)                            \
    {                                                                                                           \
        gshmemi::putmem_signal<S>(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);              \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_##N##_put_signal_nbi_##SUFFIX(T *dest, const T *source, size_t nelems,   \
                                                                     uint64_t *sig_addr, uint64_t signal,       \
                                                                     int sig_op, int pe)                        \
    {                                                                                                           \
        gshmemi::putmem_signal<S>(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);              \
    }
#define GSHMEMI_DEVICE_GROUP_RMA(T, N)                                   \
    GSHMEMI_DEVICE_GROUP_RMA_SCOPE(T, N, warp, gshmemi::SCOPE_WARP)      \
    GSHMEMI_DEVICE_GROUP_RMA_SCOPE(T, N, block, gshmemi::SCOPE_BLOCK)
GSHMEM_RMA_DEVICE_TYPES(GSHMEMI_DEVICE_GROUP_RMA)
#undef GSHMEMI_DEVICE_GROUP_RMA
#undef GSHMEMI_DEVICE_GROUP_RMA_SCOPE

#endif
