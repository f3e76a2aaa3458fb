/* Inline device implementation, part 3: atomics (system scope, relaxed like the host
 * API's; order them with fence/quiet). Float and double travel as their bits. */
#ifndef GSHMEM_IMPL_DEVICE_AMO_CUH
#define GSHMEM_IMPL_DEVICE_AMO_CUH

#include <gshmem/impl/device_common.cuh>

#include <cuda/atomic>

namespace gshmemi {

template <typename T>
__device__ __forceinline__ cuda::atomic_ref<typename bits<sizeof(T)>::type, cuda::thread_scope_system> amo_ref(
    T *dest, int pe)
{
    return cuda::atomic_ref<typename bits<sizeof(T)>::type, cuda::thread_scope_system>(
        *(typename bits<sizeof(T)>::type *)peer(dest, pe));
}

#define GSHMEMI_AMO_RELAXED cuda::memory_order_relaxed

template <typename T> __device__ __forceinline__ T amo_fetch(const T *source, int pe)
{
    return from_bits<T>(amo_ref((T *)source, pe).load(GSHMEMI_AMO_RELAXED));
}
template <typename T> __device__ __forceinline__ void amo_set(T *dest, T value, int pe)
{
    amo_ref(dest, pe).store(to_bits(value), GSHMEMI_AMO_RELAXED);
}
template <typename T> __device__ __forceinline__ T amo_swap(T *dest, T value, int pe)
{
    return from_bits<T>(amo_ref(dest, pe).exchange(to_bits(value), GSHMEMI_AMO_RELAXED));
}
template <typename T> __device__ __forceinline__ T amo_compare_swap(T *dest, T cond, T value, int pe)
{
    typename bits<sizeof(T)>::type expected = to_bits(cond);
    amo_ref(dest, pe).compare_exchange_strong(expected, to_bits(value), GSHMEMI_AMO_RELAXED);
    return from_bits<T>(expected);
}
template <typename T> __device__ __forceinline__ T amo_fetch_add(T *dest, T value, int pe)
{
    return from_bits<T>(amo_ref(dest, pe).fetch_add(to_bits(value), GSHMEMI_AMO_RELAXED));
}
template <typename T> __device__ __forceinline__ T amo_fetch_and(T *dest, T value, int pe)
{
    return from_bits<T>(amo_ref(dest, pe).fetch_and(to_bits(value), GSHMEMI_AMO_RELAXED));
}
template <typename T> __device__ __forceinline__ T amo_fetch_or(T *dest, T value, int pe)
{
    return from_bits<T>(amo_ref(dest, pe).fetch_or(to_bits(value), GSHMEMI_AMO_RELAXED));
}
template <typename T> __device__ __forceinline__ T amo_fetch_xor(T *dest, T value, int pe)
{
    return from_bits<T>(amo_ref(dest, pe).fetch_xor(to_bits(value), GSHMEMI_AMO_RELAXED));
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
        gshmemi::amo_fetch_add(dest, value, pe);                                                              \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE T gshmem_##N##_atomic_fetch_inc(T *dest, int pe)                                    \
    {                                                                                                         \
        return gshmemi::amo_fetch_add(dest, (T)1, pe);                                                        \
    }                                                                                                         \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_atomic_inc(T *dest, int pe)                                       \
    {                                                                                                         \
        gshmemi::amo_fetch_add(dest, (T)1, pe);                                                               \
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
        gshmemi::amo_fetch_##OP(dest, value, pe);                                                             \
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
