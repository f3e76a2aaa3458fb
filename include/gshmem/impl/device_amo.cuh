/* Inline device implementation, part 3: atomics (relaxed like the host API's; order
 * them with fence/quiet). Float and double travel as their bits. */
#ifndef GSHMEM_IMPL_DEVICE_AMO_CUH
#define GSHMEM_IMPL_DEVICE_AMO_CUH

#include <gshmem/impl/device_common.cuh>

#include <cuda/atomic>

namespace gshmemi {

/* An atomic view of pe's copy of *dest: device scope when that copy is on this GPU
 * (the atomic is then performed in this GPU's L2 like any device atomic), system scope
 * otherwise. */
template <typename T, cuda::thread_scope Sc>
__device__ __forceinline__ cuda::atomic_ref<typename bits<sizeof(T)>::type, Sc> amo_ref(T *peer_dest)
{
    return cuda::atomic_ref<typename bits<sizeof(T)>::type, Sc>(*(typename bits<sizeof(T)>::type *)peer_dest);
}

#define GSHMEMI_AMO_RELAXED cuda::memory_order_relaxed
/* Runs EXPR with `ref` bound to pe's copy of dest at the right scope; a PROXY peer runs
 * PROXY instead (out of line, device_proxy.cuh). */
#define GSHMEMI_AMO_SCOPED(T, dest, pe, PROXY, EXPR)                                                 \
    do {                                                                                             \
        uint64_t base_ = peer_base(pe);                                                              \
        if (__builtin_expect(base_ == 0, 0)) { PROXY; }                                              \
        T *peer_dest_ = (T *)(base_ + heap_offset(dest));                                            \
        if (same_gpu(pe)) {                                                                          \
            auto ref = amo_ref<T, cuda::thread_scope_device>(peer_dest_);                            \
            EXPR;                                                                                    \
        } else {                                                                                     \
            auto ref = amo_ref<T, cuda::thread_scope_system>(peer_dest_);                            \
            EXPR;                                                                                    \
        }                                                                                            \
    } while (0)

/* The proxy's result word as a T (values travel zero-extended in 64 bits). */
template <typename T> __device__ __forceinline__ T amo_result(uint64_t word)
{
    return from_bits<T>((typename bits<sizeof(T)>::type)word);
}
#define GSHMEMI_AMO_PROXY(T, dest, op, value, compare, fetch, pe)                                    \
    proxy_amo(dest, op, sizeof(T), (uint64_t)to_bits(value), (uint64_t)(compare), fetch, pe)

template <typename T> __device__ __forceinline__ T amo_fetch(const T *source, int pe)
{
    GSHMEMI_AMO_SCOPED(T, (T *)source, pe,
                       return amo_result<T>(GSHMEMI_AMO_PROXY(T, source, GSHMEMI_PROXY_AMO_FETCH, (T)0, 0, true, pe)),
                       return from_bits<T>(ref.load(GSHMEMI_AMO_RELAXED)));
}
template <typename T> __device__ __forceinline__ void amo_set(T *dest, T value, int pe)
{
    GSHMEMI_AMO_SCOPED(T, dest, pe, GSHMEMI_AMO_PROXY(T, dest, GSHMEMI_PROXY_AMO_SET, value, 0, false, pe); return,
                       ref.store(to_bits(value), GSHMEMI_AMO_RELAXED));
}
template <typename T> __device__ __forceinline__ T amo_swap(T *dest, T value, int pe)
{
    GSHMEMI_AMO_SCOPED(T, dest, pe,
                       return amo_result<T>(GSHMEMI_AMO_PROXY(T, dest, GSHMEMI_PROXY_AMO_SWAP, value, 0, true, pe)),
                       return from_bits<T>(ref.exchange(to_bits(value), GSHMEMI_AMO_RELAXED)));
}
template <typename T> __device__ __forceinline__ T amo_compare_swap(T *dest, T cond, T value, int pe)
{
    typename bits<sizeof(T)>::type expected = to_bits(cond);
    GSHMEMI_AMO_SCOPED(T, dest, pe,
                       return amo_result<T>(GSHMEMI_AMO_PROXY(T, dest, GSHMEMI_PROXY_AMO_COMPARE_SWAP, value,
                                                              expected, true, pe)),
                       ref.compare_exchange_strong(expected, to_bits(value), GSHMEMI_AMO_RELAXED));
    return from_bits<T>(expected);
}
/* fetch false: the caller drops the result (atomic_add, _inc, _and, ...), so through
 * the proxy the call returns once the request is posted. */
template <typename T> __device__ __forceinline__ T amo_fetch_add(T *dest, T value, int pe, bool fetch = true)
{
    GSHMEMI_AMO_SCOPED(T, dest, pe,
                       return amo_result<T>(GSHMEMI_AMO_PROXY(T, dest, GSHMEMI_PROXY_AMO_ADD, value, 0, fetch, pe)),
                       return from_bits<T>(ref.fetch_add(to_bits(value), GSHMEMI_AMO_RELAXED)));
}
template <typename T> __device__ __forceinline__ T amo_fetch_and(T *dest, T value, int pe, bool fetch = true)
{
    GSHMEMI_AMO_SCOPED(T, dest, pe,
                       return amo_result<T>(GSHMEMI_AMO_PROXY(T, dest, GSHMEMI_PROXY_AMO_AND, value, 0, fetch, pe)),
                       return from_bits<T>(ref.fetch_and(to_bits(value), GSHMEMI_AMO_RELAXED)));
}
template <typename T> __device__ __forceinline__ T amo_fetch_or(T *dest, T value, int pe, bool fetch = true)
{
    GSHMEMI_AMO_SCOPED(T, dest, pe,
                       return amo_result<T>(GSHMEMI_AMO_PROXY(T, dest, GSHMEMI_PROXY_AMO_OR, value, 0, fetch, pe)),
                       return from_bits<T>(ref.fetch_or(to_bits(value), GSHMEMI_AMO_RELAXED)));
}
template <typename T> __device__ __forceinline__ T amo_fetch_xor(T *dest, T value, int pe, bool fetch = true)
{
    GSHMEMI_AMO_SCOPED(T, dest, pe,
                       return amo_result<T>(GSHMEMI_AMO_PROXY(T, dest, GSHMEMI_PROXY_AMO_XOR, value, 0, fetch, pe)),
                       return from_bits<T>(ref.fetch_xor(to_bits(value), GSHMEMI_AMO_RELAXED)));
}

} /* namespace gshmemi */

#ifdef __CUDA_ARCH__
#define GSHMEMI_DEVICE_AMO_EXTENDED(T, N)                                                                     \
    GSHMEMI_DEVICE_INLINE T gshmem_##N##_atomic_fetch(const T *source, int pe)                                \
    {                                                                                                         \
        return gshmemi::amo_fetch(source, pe);                                                                \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_atomic_set(T *dest, T value, int pe)                              \
    {                                                                                                         \
        gshmemi::amo_set(dest, value, pe);                                                                    \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE T gshmem_##N##_atomic_swap(T *dest, T value, int pe)                                \
    {                                                                                                         \
        return gshmemi::amo_swap(dest, value, pe);                                                            \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe)               \
    {                                                                                                         \
        *fetch = gshmemi::amo_fetch(source, pe);                                                              \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe)               \
    {                                                                                                         \
        *fetch = gshmemi::amo_swap(dest, value, pe);                                                          \
    }
GSHMEM_AMO_EXTENDED_TYPES(GSHMEMI_DEVICE_AMO_EXTENDED)
#undef GSHMEMI_DEVICE_AMO_EXTENDED

#define GSHMEMI_DEVICE_AMO_STANDARD(T, N)                                                                     \
    GSHMEMI_DEVICE_INLINE T gshmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe)                \
    {                                                                                                         \
        return gshmemi::amo_compare_swap(dest, cond, value, pe);                                              \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE T gshmem_##N##_atomic_fetch_add(T *dest, T value, int pe)                           \
    {                                                                                                         \
        return gshmemi::amo_fetch_add(dest, value, pe);                                                       \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_atomic_add(T *dest, T value, int pe)                              \
    {                                                                                                         \
        gshmemi::amo_fetch_add(dest, value, pe, false);                                                       \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE T gshmem_##N##_atomic_fetch_inc(T *dest, int pe)                                    \
    {                                                                                                         \
        return gshmemi::amo_fetch_add(dest, (T)1, pe);                                                        \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_atomic_inc(T *dest, int pe)                                       \
    {                                                                                                         \
        gshmemi::amo_fetch_add(dest, (T)1, pe, false);                                                        \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe) \
    {                                                                                                         \
        *fetch = gshmemi::amo_compare_swap(dest, cond, value, pe);                                            \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe)                   \
    {                                                                                                         \
        *fetch = gshmemi::amo_fetch_add(dest, (T)1, pe);                                                      \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe)          \
    {                                                                                                         \
        *fetch = gshmemi::amo_fetch_add(dest, value, pe);                                                     \
    }
GSHMEM_AMO_STANDARD_TYPES(GSHMEMI_DEVICE_AMO_STANDARD)
#undef GSHMEMI_DEVICE_AMO_STANDARD

#define GSHMEMI_DEVICE_AMO_BITWISE_OP(T, N, OP)                                                               \
    GSHMEMI_DEVICE_INLINE T gshmem_##N##_atomic_fetch_##OP(T *dest, T value, int pe)                          \
    {                                                                                                         \
        return gshmemi::amo_fetch_##OP(dest, value, pe);                                                      \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_atomic_##OP(T *dest, T value, int pe)                             \
    {                                                                                                         \
        gshmemi::amo_fetch_##OP(dest, value, pe, false);                                                      \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_atomic_fetch_##OP##_nbi(T *fetch, T *dest, T value, int pe)       \
    {                                                                                                         \
        *fetch = gshmemi::amo_fetch_##OP(dest, value, pe);                                                    \
    }
#define GSHMEMI_DEVICE_AMO_BITWISE(T, N)           \
    GSHMEMI_DEVICE_AMO_BITWISE_OP(T, N, and)       \
    GSHMEMI_DEVICE_AMO_BITWISE_OP(T, N, or)        \
    GSHMEMI_DEVICE_AMO_BITWISE_OP(T, N, xor)
GSHMEM_AMO_BITWISE_TYPES(GSHMEMI_DEVICE_AMO_BITWISE)
#undef GSHMEMI_DEVICE_AMO_BITWISE
#undef GSHMEMI_DEVICE_AMO_BITWISE_OP
#endif /* __CUDA_ARCH__ */

#endif
