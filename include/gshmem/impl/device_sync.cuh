/* Inline device implementation, part 4: queries, point-to-point waits, fence/quiet,
 * and barriers across PEs. */
#ifndef GSHMEM_IMPL_DEVICE_SYNC_CUH
#define GSHMEM_IMPL_DEVICE_SYNC_CUH

#include <gshmem/impl/device_rma.cuh>

#include <cooperative_groups.h>

namespace gshmemi {

/* An ivar's value: acquire (a test's only look), or relaxed (a wait's polls, which
 * end with acquire_ivar on every ivar that satisfied it: see poll_acquired). */
template <bool ACQUIRE, typename T> __device__ __forceinline__ T load_ivar(const T *p)
{
    const volatile typename bits<sizeof(T)>::type *b = (const volatile typename bits<sizeof(T)>::type *)p;
    return from_bits<T>(ACQUIRE ? load_acquire(b) : load_relaxed(b));
}
template <typename T> __device__ __forceinline__ void acquire_ivar(const T *p)
{
    poll_acquired((const volatile typename bits<sizeof(T)>::type *)p);
}

/* One pass over ivars. mode 0: all (1/0), 1: any (index or SIZE_MAX), 2: some (count). */
template <bool ACQUIRE = true, typename T>
__device__ __forceinline__ size_t test_pass(T *ivars, size_t nelems, const int *status, int cmp, const T *values,
                                            bool vector, int mode, size_t *indices)
{
    size_t count = 0, active = 0;
    for (size_t i = 0; i < nelems; i++) {
        if (status && status[i]) continue;
        active++;
        if (!compare(load_ivar<ACQUIRE>(&ivars[i]), cmp, vector ? values[i] : values[0])) {
            if (mode == 0) return 0;
            continue;
        }
        if (mode == 1) return i;
        if (mode == 2) indices[count] = i;
        count++;
    }
    if (mode == 0) return 1;
    if (mode == 1) return SIZE_MAX;
    return active ? count : 0;
}

/* A wait on a set that ran out of GSHMEM_TIMEOUT: reports the first ivar it still waits
 * for, and traps. */
template <typename T>
__device__ __forceinline__ void report_set_timeout(T *ivars, size_t nelems, const int *status, int cmp,
                                                   const T *values, bool vector, int mode)
{
    size_t i = 0;
    for (size_t k = 0; k < nelems; k++)
        if (!(status && status[k])) {
            i = k;
            if (!compare(load_ivar<false>(&ivars[k]), cmp, vector ? values[k] : values[0])) break;
        }
    volatile gshmemi_wait_report *r = wait_report_claim();
    r->kind = GSHMEMI_WAIT_IVARS;
    r->cmp = cmp;
    r->is_signed = (T)-1 < (T)0;
    r->mode = mode;
    r->vector = vector;
    r->addr = (uint64_t)(uintptr_t)&ivars[i];
    r->value = (uint64_t)(long long)load_ivar<false>(&ivars[i]);
    r->target = (uint64_t)(long long)(vector ? values[i] : values[0]);
    r->ivar = i;
    r->count = nelems == 1 && !status ? 0 : nelems;
    wait_report_post(r);
}

__device__ __forceinline__ bool set_satisfied(int mode, size_t r)
{
    return mode == 0 ? r == 1 : mode == 1 ? r != SIZE_MAX : r > 0;
}

/* How many loads a pass over a set counts as towards the wait's clock: its size, clamped
 * to the clock's 1024 (device_poll.cuh). An upper bound: a pass that stops at its first
 * unsatisfied ivar counts the whole set, so a large set's wait reads the clock every
 * pass, which costs little next to a pass's loads; what it buys is a timeout on time
 * however long a pass is. */
__device__ __forceinline__ unsigned set_loads(size_t nelems)
{
    return nelems == 0 ? 1u : nelems >= GSHMEMI_WAIT_INLINE_POLLS ? GSHMEMI_WAIT_INLINE_POLLS : (unsigned)nelems;
}

/* The rest of a wait on a set (see poll_until). */
template <typename T>
__device__ __forceinline__ size_t wait_set_slow(T *ivars, size_t nelems, const int *status, int cmp, const T *values,
                                                bool vector, int mode, size_t *indices, unsigned loads)
{
    wait_clock clock;
    for (;;) {
        size_t r = test_pass<false>(ivars, nelems, status, cmp, values, vector, mode, indices);
        if (set_satisfied(mode, r)) return r;
        if (timed_out(clock, loads)) {
            r = test_pass<false>(ivars, nelems, status, cmp, values, vector, mode, indices);
            if (set_satisfied(mode, r)) return r; /* in the nick of time: not a timeout */
            report_set_timeout(ivars, nelems, status, cmp, values, vector, mode);
        }
    }
}

template <typename T>
__device__ __forceinline__ size_t wait_loop(T *ivars, size_t nelems, const int *status, int cmp,
                                            const T *values, bool vector, int mode, size_t *indices)
{
    size_t active = 0;
    for (size_t i = 0; i < nelems; i++) active += !(status && status[i]);
    if (mode != 0 && active == 0) return mode == 1 ? SIZE_MAX : 0;
    size_t r;
    const unsigned loads = set_loads(nelems);
#pragma unroll 1
    for (unsigned n = 0;
         !set_satisfied(mode, r = test_pass<false>(ivars, nelems, status, cmp, values, vector, mode, indices));)
        if ((n += loads) >= GSHMEMI_WAIT_INLINE_POLLS) {
            r = wait_set_slow(ivars, nelems, status, cmp, values, vector, mode, indices, loads);
            break;
        }
    if (mode == 1)
        acquire_ivar(&ivars[r]);
    else if (mode == 2)
        for (size_t k = 0; k < r; k++) acquire_ivar(&ivars[indices[k]]);
    else
        for (size_t i = 0; i < nelems; i++)
            if (!(status && status[i])) acquire_ivar(&ivars[i]);
    return r;
}

/* Adds 1 to to_pe's copy of the barrier word at flag (a local symmetric address) with
 * release semantics; towards a PROXY peer a SIGNAL(ADD) request, which the in-order
 * proxy puts after this thread's earlier requests. */
__device__ __forceinline__ void barrier_arrive(uint64_t *flag, int to_pe)
{
    uint64_t base = peer_base(to_pe);
    if (__builtin_expect(base == 0, 0)) return proxy_signal(flag, 1, GSHMEM_SIGNAL_ADD, to_pe);
    add_release((unsigned long long *)(base + heap_offset(flag)), 1, same_gpu(to_pe));
}

/* Dissemination barrier over PEs by one thread, on the device sync area of each heap;
 * past GSHMEM_TIMEOUT it reports who it waited for and traps. */
__device__ __forceinline__ void pe_barrier()
{
    gshmemi_device_sync_area *mine = (gshmemi_device_sync_area *)gshmemi_dstate.heap_base;
    unsigned long long epoch = ++mine->barrier_epoch;
    int me = gshmemi_dstate.my_pe, n = gshmemi_dstate.n_pes, round = 0;
    for (int dist = 1; dist < n; dist <<= 1, round++) {
        int to_pe = (me + dist) % n;
        barrier_arrive(&mine->barrier_flags[round], to_pe);
        const volatile unsigned long long *flag = (const volatile unsigned long long *)&mine->barrier_flags[round];
        poll_until(flag, [&](unsigned long long x) { return x >= epoch; }, [&]() {
            int rounds = 0;
            for (int d = 1; d < n; d <<= 1) rounds++;
            wait_barrier_slow(flag, epoch, -1, round, rounds, (me - dist % n + n) % n);
            return epoch;
        });
        poll_acquired(flag);
    }
}

template <int S> __device__ __forceinline__ void barrier(bool complete)
{
    scope_sync<S>();
    if (scope_rank<S>() == 0) {
        if (complete) quiet();
        pe_barrier();
    }
    scope_sync<S>();
}

} /* namespace gshmemi */

#ifdef __CUDA_ARCH__
GSHMEMI_DEVICE_INLINE int gshmem_my_pe(void) { return gshmemi_dstate.my_pe; }
GSHMEMI_DEVICE_INLINE int gshmem_n_pes(void) { return gshmemi_dstate.n_pes; }
GSHMEMI_DEVICE_INLINE void *gshmem_ptr(const void *dest, int pe)
{
    uint64_t off = (uint64_t)(uintptr_t)dest - gshmemi_dstate.heap_base;
    if ((unsigned)pe >= (unsigned)gshmemi_dstate.n_pes || off >= gshmemi_dstate.heap_size) return NULL;
    uint64_t base = gshmemi_dstate.peer_base[pe];
    return base ? (void *)(base + off) : NULL;
}
GSHMEMI_DEVICE_INLINE void gshmem_fence(void) { gshmemi::fence(); }
GSHMEMI_DEVICE_INLINE void gshmem_quiet(void) { gshmemi::quiet(); }
/* Every thread of a grid started with gshmemx_collective_launch calls these. */
GSHMEMI_DEVICE_INLINE void gshmem_barrier_all(void)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    grid.sync();
    if (grid.thread_rank() == 0) {
        gshmemi::quiet();
        gshmemi::pe_barrier();
    }
    grid.sync();
}
GSHMEMI_DEVICE_INLINE void gshmem_sync_all(void)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    grid.sync();
    if (grid.thread_rank() == 0) gshmemi::pe_barrier();
    grid.sync();
}
GSHMEMI_DEVICE_INLINE uint64_t gshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    const volatile unsigned long long *p = (const volatile unsigned long long *)sig_addr;
    /* the value that satisfied the comparison, not a later one */
    unsigned long long v = gshmemi::poll_until(
        p, [&](unsigned long long x) { return gshmemi::compare<unsigned long long>(x, cmp, cmp_value); },
        [&]() { return gshmemi::wait_signal_slow(p, cmp, cmp_value); });
    gshmemi::poll_acquired(p);
    return v;
}

#define GSHMEMI_DEVICE_P2P_SYNC(T, N)                                                                          \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)                          \
    {                                                                                                          \
        gshmemi::wait_loop(ivar, 1, (const int *)0, cmp, &cmp_value, false, 0, (size_t *)0);                   \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, \
                                                           T cmp_value)                                        \
    {                                                                                                          \
        gshmemi::wait_loop(ivars, nelems, status, cmp, &cmp_value, false, 0, (size_t *)0);                     \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE size_t gshmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status,       \
                                                             int cmp, T cmp_value)                             \
    {                                                                                                          \
        return gshmemi::wait_loop(ivars, nelems, status, cmp, &cmp_value, false, 1, (size_t *)0);              \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE size_t gshmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,        \
                                                              const int *status, int cmp, T cmp_value)         \
    {                                                                                                          \
        return gshmemi::wait_loop(ivars, nelems, status, cmp, &cmp_value, false, 2, indices);                  \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE void gshmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status,  \
                                                                  int cmp, T *cmp_values)                      \
    {                                                                                                          \
        gshmemi::wait_loop(ivars, nelems, status, cmp, cmp_values, true, 0, (size_t *)0);                      \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE size_t gshmem_##N##_wait_until_any_vector(T *ivars, size_t nelems,                   \
                                                                    const int *status, int cmp, T *cmp_values) \
    {                                                                                                          \
        return gshmemi::wait_loop(ivars, nelems, status, cmp, cmp_values, true, 1, (size_t *)0);               \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE size_t gshmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, \
                                                                     const int *status, int cmp,               \
                                                                     T *cmp_values)                            \
    {                                                                                                          \
        return gshmemi::wait_loop(ivars, nelems, status, cmp, cmp_values, true, 2, indices);                   \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE int gshmem_##N##_test(T *ivar, int cmp, T cmp_value)                                 \
    {                                                                                                          \
        return (int)gshmemi::test_pass(ivar, 1, (const int *)0, cmp, &cmp_value, false, 0, (size_t *)0);       \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE int gshmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp,       \
                                                    T cmp_value)                                               \
    {                                                                                                          \
        return (int)gshmemi::test_pass(ivars, nelems, status, cmp, &cmp_value, false, 0, (size_t *)0);         \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE size_t gshmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp,    \
                                                       T cmp_value)                                            \
    {                                                                                                          \
        return gshmemi::test_pass(ivars, nelems, status, cmp, &cmp_value, false, 1, (size_t *)0);              \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE size_t gshmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices,              \
                                                        const int *status, int cmp, T cmp_value)               \
    {                                                                                                          \
        return gshmemi::test_pass(ivars, nelems, status, cmp, &cmp_value, false, 2, indices);                  \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE int gshmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, \
                                                           T *cmp_values)                                      \
    {                                                                                                          \
        return (int)gshmemi::test_pass(ivars, nelems, status, cmp, cmp_values, true, 0, (size_t *)0);          \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE size_t gshmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status,      \
                                                              int cmp, T *cmp_values)                          \
    {                                                                                                          \
        return gshmemi::test_pass(ivars, nelems, status, cmp, cmp_values, true, 1, (size_t *)0);               \
    }                                                                                                          \
    GSHMEMI_DEVICE_INLINE size_t gshmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,       \
                                                               const int *status, int cmp, T *cmp_values)      \
    {                                                                                                          \
        return gshmemi::test_pass(ivars, nelems, status, cmp, cmp_values, true, 2, indices);                   \
    }
GSHMEM_P2P_SYNC_TYPES(GSHMEMI_DEVICE_P2P_SYNC)
#undef GSHMEMI_DEVICE_P2P_SYNC
#endif /* __CUDA_ARCH__ */

/* Cooperative barriers: every thread of the warp (all 32 lanes) or of the block calls
 * them; one block (or warp) per PE takes part. barrier_all also completes earlier puts. */
GSHMEMI_DEVICE_INLINE void gshmemx_barrier_all_warp(void) { gshmemi::barrier<gshmemi::SCOPE_WARP>(true); }
GSHMEMI_DEVICE_INLINE void gshmemx_barrier_all_block(void) { gshmemi::barrier<gshmemi::SCOPE_BLOCK>(true); }
GSHMEMI_DEVICE_INLINE void gshmemx_sync_all_warp(void) { gshmemi::barrier<gshmemi::SCOPE_WARP>(false); }
GSHMEMI_DEVICE_INLINE void gshmemx_sync_all_block(void) { gshmemi::barrier<gshmemi::SCOPE_BLOCK>(false); }

#endif
