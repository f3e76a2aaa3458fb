/* Inline device implementation, part 2: RMA and signals for a thread, a warp or a block. */
#ifndef GSHMEM_IMPL_DEVICE_RMA_CUH
#define GSHMEM_IMPL_DEVICE_RMA_CUH

#include <gshmem/impl/device_common.cuh>

namespace gshmemi {

/* Every call below branches once on peer_base(pe): 0 is a PROXY peer (or a bad PE) and
 * goes out of line to device_proxy.cuh; NBI only matters there. */
template <int S, bool NBI = false>
__device__ __forceinline__ void putmem(void *dest, const void *source, size_t n, int pe)
{
    uint64_t base = peer_base(pe);
    if (__builtin_expect(base == 0, 0)) return proxy_rma<S>(GSHMEMI_PROXY_PUT, NBI, dest, source, n, pe);
    copy((char *)(base + heap_offset(dest)), (const char *)source, n, scope_rank<S>(), scope_size<S>());
    scope_sync<S>();
}

template <int S, bool NBI = false>
__device__ __forceinline__ void getmem(void *dest, const void *source, size_t n, int pe)
{
    uint64_t base = peer_base(pe);
    if (__builtin_expect(base == 0, 0)) return proxy_rma<S>(GSHMEMI_PROXY_GET, NBI, source, dest, n, pe);
    copy((char *)dest, (const char *)(base + heap_offset(source)), n, scope_rank<S>(), scope_size<S>());
    scope_sync<S>();
}

template <int S, typename T>
__device__ __forceinline__ void iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)
{
    uint64_t base = peer_base(pe);
    if (__builtin_expect(base == 0, 0))
        return proxy_strided<S>(GSHMEMI_PROXY_IPUT, dest, dst * (ptrdiff_t)sizeof(T), source,
                                sst * (ptrdiff_t)sizeof(T), sizeof(T), nelems, pe);
    strided((T *)(base + heap_offset(dest)), dst, source, sst, nelems, scope_rank<S>(), scope_size<S>());
    scope_sync<S>();
}

template <int S, typename T>
__device__ __forceinline__ void iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)
{
    uint64_t base = peer_base(pe);
    if (__builtin_expect(base == 0, 0))
        return proxy_strided<S>(GSHMEMI_PROXY_IGET, source, sst * (ptrdiff_t)sizeof(T), dest,
                                dst * (ptrdiff_t)sizeof(T), sizeof(T), nelems, pe);
    strided(dest, dst, (const T *)(base + heap_offset(source)), sst, nelems, scope_rank<S>(), scope_size<S>());
    scope_sync<S>();
}

/* p and g: one element, its value inline in the request or the completion. */
template <typename T> __device__ __forceinline__ void put_value(T *dest, T value, int pe)
{
    uint64_t base = peer_base(pe);
    if (__builtin_expect(base == 0, 0)) return proxy_p(dest, (uint64_t)to_bits(value), sizeof(T), pe);
    *(volatile T *)(base + heap_offset(dest)) = value;
}
template <typename T> __device__ __forceinline__ T get_value(const T *source, int pe)
{
    uint64_t base = peer_base(pe);
    if (__builtin_expect(base == 0, 0))
        return from_bits<T>((typename bits<sizeof(T)>::type)proxy_g(source, sizeof(T), pe));
    return *(const volatile T *)(base + heap_offset(source));
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
    uint64_t base = peer_base(pe);
    if (__builtin_expect(base == 0, 0)) return proxy_signal(sig_addr, signal, sig_op, pe);
    signal_update((unsigned long long *)(base + heap_offset(sig_addr)), same_gpu(pe), signal, sig_op);
}

/* Up to this size a block's put_signal is copied by its first warps only (one warp per
 * 2 KiB), which then signal after a barrier of just those warps: the rest of the block's
 * barrier stays off the latency path. */
#define GSHMEMI_BLOCK_SIGNAL_PARTIAL_BYTES 16384

/* A block's put_signal of aligned words: the first nw warps move them, one word a
 * thread (thread r: word r), the load issued before the store; they meet (a warp sync,
 * or a named barrier for nw > 1) and thread 0 signals; the caller's closing barrier
 * follows. The caller passes the threads of those warps only (rank < 32 nw <= block
 * size: whole warps, as warps are formed from the linear thread index). One word a
 * lane: on the H200 two were 0.02-0.05 us faster than four (session 13), and one is
 * 0.01-0.03 faster than two from 2 to 16 KiB at 1024 threads and within 0.01 below
 * (session 15, 12-16 runs of each in turn; docs/PERFORMANCE.md). */
template <bool NBI, typename W>
__device__ __forceinline__ void putmem_signal_lanes(void *dest, const void *source, size_t n, uint64_t *sig_addr,
                                                    uint64_t signal, int sig_op, int pe, unsigned nw)
{
    const unsigned words = (unsigned)(n / sizeof(W)), rank = block_rank();
    uint64_t base = peer_base(pe); /* before load_now, whose clobber would make them reloads */
    bool gpu_scope = same_gpu(pe);
    W v = W();
    if (rank < words) load_now(&v, (const W *)source + rank);
    if (__builtin_expect(base == 0, 0)) { /* a PROXY peer: thread 0 posts it alone */
        if (rank == 0) proxy_put_signal<SCOPE_THREAD>(dest, source, n, sig_addr, signal, sig_op, NBI, pe);
        return;
    }
    W *d = (W *)(base + heap_offset(dest));
    unsigned long long *sig = (unsigned long long *)(base + heap_offset(sig_addr));
    settle_signal(sig, gpu_scope);
    if (rank < words) d[rank] = v;
    if (nw == 1) __syncwarp();
    else asm volatile("bar.sync 15, %0;" ::"r"(32 * nw) : "memory");
    if (rank == 0) signal_update(sig, gpu_scope, signal, sig_op);
}

/* put_signal of aligned words W, at most one a thread of the group: the latency path.
 * One word (or none): the group's first thread moves it alone, by the thread path, and
 * the group meets after it (at 1024 threads, 0.12 us less than a group path: the other
 * warps only reach the barrier). A block of at least 32 threads: putmem_signal_lanes.
 * Otherwise (a warp, a smaller block, a thread) each thread moves its word; every load
 * (its source word, the peer's base, its scope) is issued before anything waits on one;
 * the group meets, thread 0 signals. Where one thread or a few warps post to the proxy
 * for the group, they do not meet the rest first: as for any group call, the source is
 * ready for every thread of the group when the call starts, and the proxy request's
 * release is cumulative. The closing barrier comes after the signal, off the path, so
 * that nobody returns before its source is read. Peer heaps are mapped at
 * granularity-aligned bases, so the local dest's alignment is the remote one's. */
template <int S, bool NBI, typename W>
__device__ __forceinline__ void putmem_signal_words(void *dest, const void *source, size_t n, uint64_t *sig_addr,
                                                    uint64_t signal, int sig_op, int pe)
{
    unsigned words = (unsigned)(n / sizeof(W));
    if (S != SCOPE_THREAD && words <= 1) {
        if (scope_rank<S>() == 0) putmem_signal_words<SCOPE_THREAD, NBI, W>(dest, source, n, sig_addr, signal, sig_op, pe);
        scope_sync<S>();
        return;
    }
    if (S == SCOPE_BLOCK) {
        const unsigned nw = (words + 31) / 32;
        if (32 * nw <= scope_size<S>()) { /* words past the block's last whole warp go on below */
            if (scope_rank<S>() < 32 * nw)
                putmem_signal_lanes<NBI, W>(dest, source, n, sig_addr, signal, sig_op, pe, nw);
            __syncthreads(); /* nobody returns before the source is read */
            return;
        }
    }
    unsigned rank = scope_rank<S>();
    bool mine = rank < words;
    uint64_t base = peer_base(pe); /* before load_now, whose clobber would make them reloads */
    bool gpu_scope = same_gpu(pe);
    W v = W(); /* defined on every path: otherwise a loop around the call carries (and spills) it */
    if (mine) load_now(&v, (const W *)source + rank);
    if (__builtin_expect(base == 0, 0)) return proxy_put_signal<S>(dest, source, n, sig_addr, signal, sig_op, NBI, pe);
    if (mine) ((W *)(base + heap_offset(dest)))[rank] = v;
    unsigned long long *sig = (unsigned long long *)(base + heap_offset(sig_addr));
    /* a thread: nothing; a warp or a block of < 32 threads: every word is read and
     * stored before the signal (and nobody returns before the source is read) */
    scope_sync<S>();
    if (rank == 0) signal_update(sig, gpu_scope, signal, sig_op);
}

/* Every other put_signal. */
template <int S, bool NBI>
__device__ __forceinline__ void putmem_signal_copy(void *dest, const void *source, size_t n, uint64_t *sig_addr,
                                                uint64_t signal, int sig_op, int pe)
{
    /* The signal's address and scope first: their constant-bank loads then overlap the
     * copy instead of following it on the latency path. */
    uint64_t base = peer_base(pe);
    if (__builtin_expect(base == 0, 0))
        return proxy_put_signal<S>(dest, source, n, sig_addr, signal, sig_op, NBI, pe);
    unsigned long long *sig = (unsigned long long *)(base + heap_offset(sig_addr));
    char *peer_dest = (char *)(base + heap_offset(dest));
    bool gpu_scope = same_gpu(pe);
    const bool aligned_path = S != SCOPE_BLOCK; /* a block's copy does without it: see copy() */
    if (S == SCOPE_BLOCK && n <= GSHMEMI_BLOCK_SIGNAL_PARTIAL_BYTES) {
        unsigned rank = block_rank(), size = block_size();
        unsigned part = (unsigned)((n + 2047) / 2048) * 32;
        if (part == 0) part = 32;
        if (part < size) {
            if (rank < part) {
                copy<aligned_path>(peer_dest, (const char *)source, n, rank, part);
                if (part == 32) __syncwarp();
                else asm volatile("bar.sync 15, %0;" ::"r"(part) : "memory"); /* the copying warps only */
                if (rank == 0) signal_update(sig, gpu_scope, signal, sig_op);
            }
            __syncthreads(); /* nobody returns before the source is copied */
            return;
        }
    }
    copy<aligned_path>(peer_dest, (const char *)source, n, scope_rank<S>(), scope_size<S>());
    scope_sync<S>();
    /* The group barrier orders the group's stores before the first thread's release,
     * which is cumulative: whoever acquires the signal sees every thread's data. No
     * barrier after it: every thread's part of the source is already copied. */
    if (scope_rank<S>() == 0) signal_update(sig, gpu_scope, signal, sig_op);
}

template <int S, bool NBI = false>
__device__ __forceinline__ void putmem_signal(void *dest, const void *source, size_t n, uint64_t *sig_addr,
                                              uint64_t signal, int sig_op, int pe)
{
    uintptr_t align = (uintptr_t)dest | (uintptr_t)source | (uintptr_t)n;
    if ((align & 15) == 0 && n <= 16 * (size_t)scope_size<S>())
        return putmem_signal_words<S, NBI, uint4>(dest, source, n, sig_addr, signal, sig_op, pe);
    if ((align & 7) == 0 && n <= 8 * (size_t)scope_size<S>())
        return putmem_signal_words<S, NBI, unsigned long long>(dest, source, n, sig_addr, signal, sig_op, pe);
    putmem_signal_copy<S, NBI>(dest, source, n, sig_addr, signal, sig_op, pe);
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
    gshmemi::putmem<gshmemi::SCOPE_THREAD, true>(dest, source, nelems, pe);
}
GSHMEMI_DEVICE_INLINE void gshmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    gshmemi::getmem<gshmemi::SCOPE_THREAD, true>(dest, source, nelems, pe);
}
GSHMEMI_DEVICE_INLINE void gshmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                                uint64_t signal, int sig_op, int pe)
{
    gshmemi::putmem_signal<gshmemi::SCOPE_THREAD>(dest, source, nelems, sig_addr, signal, sig_op, pe);
}
GSHMEMI_DEVICE_INLINE void gshmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems,
                                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    gshmemi::putmem_signal<gshmemi::SCOPE_THREAD, true>(dest, source, nelems, sig_addr, signal, sig_op, pe);
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
        gshmemi::putmem<gshmemi::SCOPE_THREAD, true>(dest, source, nelems * sizeof(T), pe);                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe)            \
    {                                                                                                           \
        gshmemi::getmem<gshmemi::SCOPE_THREAD, true>(dest, source, nelems * sizeof(T), pe);                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_p(T *dest, T value, int pe)                                         \
    {                                                                                                           \
        gshmemi::put_value(dest, value, pe);                                                                    \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE T gshmem_##N##_g(const T *source, int pe)                                             \
    {                                                                                                           \
        return gshmemi::get_value(source, pe);                                                                  \
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
        gshmemi::putmem_signal<gshmemi::SCOPE_THREAD, true>(dest, source, nelems * sizeof(T), sig_addr, signal,       \
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
        gshmemi::putmem<gshmemi::SCOPE_THREAD, true>(dest, source, nelems * sizeof(T), pe);                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe)    \
    {                                                                                                           \
        gshmemi::getmem<gshmemi::SCOPE_THREAD, true>(dest, source, nelems * sizeof(T), pe);                           \
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
        gshmemi::putmem_signal<gshmemi::SCOPE_THREAD, true>(dest, source, nelems * sizeof(T), sig_addr, signal,       \
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
        gshmemi::putmem<S, true>(dest, source, nelems, pe);                                                           \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_getmem_nbi_##SUFFIX(void *dest, const void *source, size_t nelems,       \
                                                           int pe)                                              \
    {                                                                                                           \
        gshmemi::getmem<S, true>(dest, source, nelems, pe);                                                           \
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
        gshmemi::putmem_signal<S, true>(dest, source, nelems, sig_addr, signal, sig_op, pe);                          \
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
        gshmemi::putmem<S, true>(dest, source, nelems * sizeof(T), pe);                                               \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE void gshmemx_##N##_get_nbi_##SUFFIX(T *dest, const T *source, size_t nelems, int pe)  \
    {                                                                                                           \
        gshmemi::getmem<S, true>(dest, source, nelems * sizeof(T), pe);                                               \
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
        gshmemi::putmem_signal<S, true>(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);              \
    }
#define GSHMEMI_DEVICE_GROUP_RMA(T, N)                                   \
    GSHMEMI_DEVICE_GROUP_RMA_SCOPE(T, N, warp, gshmemi::SCOPE_WARP)      \
    GSHMEMI_DEVICE_GROUP_RMA_SCOPE(T, N, block, gshmemi::SCOPE_BLOCK)
GSHMEM_RMA_DEVICE_TYPES(GSHMEMI_DEVICE_GROUP_RMA)
#undef GSHMEMI_DEVICE_GROUP_RMA
#undef GSHMEMI_DEVICE_GROUP_RMA_SCOPE

#endif
