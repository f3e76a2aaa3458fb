/* The comparison of the point-to-point waits (GSHMEM_CMP_*), shared by the device API
 * and libgshmem's stream kernels. Internal. */
#ifndef GSHMEM_IMPL_DEVICE_COMPARE_CUH
#define GSHMEM_IMPL_DEVICE_COMPARE_CUH

#include <gshmem/types.h>

namespace gshmemi {

template <typename T> __device__ __forceinline__ bool compare(T value, int cmp, T target)
{
    switch (cmp) {
    case GSHMEM_CMP_EQ: return value == target;
    case GSHMEM_CMP_NE: return value != target;
    case GSHMEM_CMP_GT: return value > target;
    case GSHMEM_CMP_GE: return value >= target;
    case GSHMEM_CMP_LT: return value < target;
    default: return value <= target;
    }
}

} /* namespace gshmemi */

#endif
