/* What every spinning wait on the device uses, the device API's and libgshmem's stream
 * kernels' alike: the comparison of the point-to-point waits (GSHMEM_CMP_*) and the
 * clock of a wait that may time out. Internal. */
#ifndef GSHMEM_IMPL_DEVICE_POLL_CUH
#define GSHMEM_IMPL_DEVICE_POLL_CUH

#include <gshmem/types.h>

#include <stdint.h>

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

__device__ __forceinline__ uint64_t global_ns()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* A spinning wait's clock: expired(timeout_ns, loads) after each unsatisfied poll (loads:
 * the words it read, or an upper bound, at most 1024) reads the clock once every 1024
 * words counted, and the first read starts the count, so a wait gives up 1024 loads
 * (under a millisecond) or one poll, whichever is longer, after timeout_ns; 0 never
 * expires. */
struct wait_clock {
    uint64_t end = 0;
    unsigned polls = 0;
    __device__ __forceinline__ bool expired(uint64_t timeout_ns, unsigned loads = 1)
    {
        if (timeout_ns == 0 || (polls += loads) < 1024u) return false;
        polls -= 1024u;
        uint64_t now = global_ns();
        if (end == 0) end = now + timeout_ns;
        return now > end;
    }
};

} /* namespace gshmemi */

#endif
