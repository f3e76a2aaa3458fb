/* Inline device implementation, part 1: state access, address translation, loads and
 * stores with explicit scope and ordering, and the group copy. Internal. */
#ifndef GSHMEM_IMPL_DEVICE_COMMON_CUH
#define GSHMEM_IMPL_DEVICE_COMMON_CUH

#include <gshmem/impl/device_poll.cuh>
#include <gshmem/impl/device_state.h>
#include <gshmem/types.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Defined once in the device library (libgshmem_device.a); written by gshmem_init.
 * libgshmem's own kernels are built without relocatable device code and cannot see
 * that symbol: their translation unit defines GSHMEMI_DSTATE_MODULE_LOCAL and gets a
 * module-local copy, which libgshmem fills the same way (src/device/stream_coll.cu). */
#ifdef GSHMEMI_DSTATE_MODULE_LOCAL
static __constant__ struct gshmemi_device_state gshmemi_dstate;
#else
extern __constant__ struct gshmemi_device_state gshmemi_dstate;
#endif

#define GSHMEMI_DEVICE_INLINE static __device__ __forceinline__

namespace gshmemi {

__device__ __noinline__ inline void report_bad_pe(int pe)
{
    if (!gshmemi_dstate.initialized)
        printf("gshmem: device call before gshmem_init (or without the device library's state)\n");
    else if (pe < 0 || pe >= gshmemi_dstate.n_pes)
        printf("gshmem: PE %d: pe=%d is out of range (the job has %d PEs)\n", gshmemi_dstate.my_pe, pe,
               gshmemi_dstate.n_pes);
    else if (gshmemi_dstate.proxy.nslots)
        printf("gshmem: PE %d reaches PE %d only through the proxy, which this device call does not support "
               "(device collectives need peers mapped by load/store)\n", gshmemi_dstate.my_pe, pe);
    else
        printf("gshmem: PE %d cannot reach PE %d by load/store from the device (peer on another node)\n",
               gshmemi_dstate.my_pe, pe);
    __trap();
}

/* Base of pe's heap in this GPU's address space; 0 for a PROXY peer (reached through
 * the proxy thread, device_proxy.cuh) and for a PE out of range. Callers branch on it
 * once: the P2P path stays a load and an add, the proxy path is a call out of line. */
static_assert((GSHMEMI_DEVICE_MAX_PES & (GSHMEMI_DEVICE_MAX_PES - 1)) == 0 && GSHMEMI_DEVICE_MAX_PES >= 32,
              "peer_base and same_gpu clamp PE numbers with a mask");
__device__ __forceinline__ uint64_t peer_base(int pe)
{
    /* The load is clamped rather than guarded, so it issues at once and overlaps the
     * caller's other loads instead of waiting for the range check's branch. */
    uint64_t base = gshmemi_dstate.peer_base[(unsigned)pe & (GSHMEMI_DEVICE_MAX_PES - 1)];
    return (unsigned)pe < (unsigned)gshmemi_dstate.n_pes ? base : 0;
}
__device__ __forceinline__ uint64_t heap_offset(const void *ptr)
{
    return (uint64_t)(uintptr_t)ptr - gshmemi_dstate.heap_base;
}

/* Address of pe's copy of the symmetric object at ptr (a local symmetric address), for
 * code that has no proxy path (collectives): a PROXY peer traps with a message. */
template <typename T>
__device__ __forceinline__ T *peer(const T *ptr, int pe)
{
    uint64_t base = peer_base(pe);
    if (base == 0) report_bad_pe(pe);
    return (T *)(base + heap_offset(ptr));
}

/* Unsigned integer of the same size, for atomics and ordered accesses. */
template <int N> struct bits;
template <> struct bits<1> { typedef unsigned char type; };
template <> struct bits<2> { typedef unsigned short type; };
template <> struct bits<4> { typedef unsigned int type; };
template <> struct bits<8> { typedef unsigned long long type; };

template <typename T>
__device__ __forceinline__ typename bits<sizeof(T)>::type to_bits(T v)
{
    typename bits<sizeof(T)>::type b;
    memcpy(&b, &v, sizeof(T));
    return b;
}

template <typename T, typename B>
__device__ __forceinline__ T from_bits(B b)
{
    T v;
    memcpy(&v, &b, sizeof(T));
    return v;
}

__device__ __forceinline__ unsigned short load_acquire(const volatile unsigned short *p)
{
    unsigned short v;
    asm volatile("ld.acquire.sys.global.b16 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned int load_acquire(const volatile unsigned int *p)
{
    unsigned int v;
    asm volatile("ld.acquire.sys.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned long long load_acquire(const volatile unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.acquire.sys.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

/* Polls: relaxed loads at system scope until the value is there, then one acquire load
 * of the same word (poll_acquired). An acquire load on sm_90 is a strong load followed by
 * an invalidation of the SM's L1 (CCTL.IVALL): inside the poll it was paid on every
 * turn. The acquire load reads the polled value or a later one of the same word, so it
 * synchronizes with the release that wrote what it reads: the polled writer's, when
 * that is the polled value or a read-modify-write of its release sequence (signal ADDs,
 * barrier counters). When another writer's plain store (a SET) lands between the poll
 * and the acquire, the PTX model promises synchronization with that store only; on
 * sm_90 the polled writer's data reached L2 before its flag and the acquire invalidates
 * L1, so it is seen (a fence.acq_rel.sys after the poll would be the strict form). */
__device__ __forceinline__ unsigned short load_relaxed(const volatile unsigned short *p)
{
    unsigned short v;
    asm volatile("ld.relaxed.sys.global.b16 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned int load_relaxed(const volatile unsigned int *p)
{
    unsigned int v;
    asm volatile("ld.relaxed.sys.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned long long load_relaxed(const volatile unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.sys.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
template <typename B> __device__ __forceinline__ void poll_acquired(const volatile B *p) { (void)load_acquire(p); }

/* Device waits and GSHMEM_TIMEOUT (gshmemi_dstate.wait_timeout_ns; 0: never). A wait
 * polls in the plain loop (a load, a compare, a branch, and a count) for its first 1024
 * polls, the latency path; a wait that goes on longer continues in code of its own
 * (poll_until's more()) that reads the clock and, past GSHMEM_TIMEOUT, leaves a report
 * for the host and traps. Anything more in the loop itself cost: in a 1024-thread
 * kernel at the 64-register cap, three more live registers made ptxas reload
 * threadIdx.x after the caller's barrier; and a call anywhere in a wait, even one
 * never taken (printf, or the rest of the wait out of line), made a warp's put_signal
 * up to a third slower. So no call: the report is a record in pinned host memory
 * (struct gshmemi_wait_report), printed by libgshmem (SASS and A/B runs on the H200,
 * docs/PERFORMANCE.md, session 24). Two other shapes were no faster (session 25, H100):
 * one way out of the plain loop (the count folded into its test), and one loop for the
 * whole wait, the clock's end time in local memory. A wait on a set counts a pass as
 * set_loads(nelems) polls. */
#define GSHMEMI_WAIT_INLINE_POLLS 1024u

/* Whether the rest of a wait (its wait_clock, device_poll.cuh) has run out of
 * GSHMEM_TIMEOUT: with the 1024 inline polls before it, a wait gives up about 2048 polls
 * (a millisecond or two) later than GSHMEM_TIMEOUT; a wait on a large set, up to three
 * passes over it later (the pass that saw the time, one more try, the report). */
__device__ __forceinline__ bool timed_out(wait_clock &clock, unsigned loads = 1)
{
    return clock.expired(gshmemi_dstate.wait_timeout_ns, loads);
}

/* Polls *p with relaxed loads until done(value) and returns that value; after
 * GSHMEMI_WAIT_INLINE_POLLS it returns more(), the rest of the wait with the clock
 * (which returns the value that satisfied it, or reports and traps). The caller
 * acquires what it saw (poll_acquired). */
template <typename B, typename Done, typename More>
__device__ __forceinline__ B poll_until(const volatile B *p, Done done, More more)
{
    B v;
#pragma unroll 1
    for (unsigned n = 0; !done(v = load_relaxed(p));)
        if (++n == GSHMEMI_WAIT_INLINE_POLLS) return more();
    return v;
}

/* A wait that ran out of GSHMEM_TIMEOUT: claims the report (the first such wait of the
 * PE does) and returns it. Another wait's claim: waits (up to a second) until that one
 * is written before trapping, since a trap ends every thread of the kernel, the
 * writer's too (the lanes of a warp waiting on one word time out together). No report:
 * traps at once. */
__device__ __forceinline__ volatile gshmemi_wait_report *wait_report_claim()
{
    volatile gshmemi_wait_report *r = (volatile gshmemi_wait_report *)gshmemi_dstate.wait_report;
    if (r == nullptr) __trap();
    gshmemi_device_sync_area *mine = (gshmemi_device_sync_area *)gshmemi_dstate.heap_base;
    if (atomicCAS((unsigned long long *)&mine->wait_report_claim, 0ull, 1ull) != 0ull) {
        uint64_t give_up = global_ns() + 1000000000ull;
        while (r->state != 2u && global_ns() < give_up) {
        }
        __trap();
    }
    r->state = 1;
    return r;
}
/* Makes the report visible to the host and ends the kernel: the stream reports an error
 * at its next synchronization, and libgshmem prints the report (device_publish.c). */
__device__ __forceinline__ void wait_report_post(volatile gshmemi_wait_report *r)
{
    __threadfence_system();
    r->state = 2;
    __threadfence_system();
    __trap();
}

/* The rest of signal_wait_until's wait (see poll_until); returns the value that
 * satisfied it. */
__device__ __forceinline__ unsigned long long wait_signal_slow(const volatile unsigned long long *p, int cmp,
                                                               unsigned long long target)
{
    wait_clock clock;
    for (;;) {
        unsigned long long v = load_relaxed(p);
        if (compare(v, cmp, target)) return v;
        if (timed_out(clock)) {
            volatile gshmemi_wait_report *r = wait_report_claim();
            r->kind = GSHMEMI_WAIT_SIGNAL;
            r->cmp = cmp;
            r->addr = (uint64_t)(uintptr_t)p;
            r->value = v;
            r->target = target;
            wait_report_post(r);
        }
    }
}

/* The rest of a barrier round's wait (see poll_until): team -1 is the PE barrier
 * (barrier_all, sync_all); from_pe is the PE whose arrival it waits for. */
__device__ __forceinline__ void wait_barrier_slow(const volatile unsigned long long *flag, unsigned long long epoch,
                                                  int team, int round, int rounds, int from_pe)
{
    wait_clock clock;
    while (load_relaxed(flag) < epoch)
        if (timed_out(clock)) {
            volatile gshmemi_wait_report *r = wait_report_claim();
            r->kind = GSHMEMI_WAIT_BARRIER;
            r->team = team;
            r->round = round;
            r->rounds = rounds;
            r->from_pe = from_pe;
            r->addr = (uint64_t)(uintptr_t)flag;
            r->epoch = epoch;
            wait_report_post(r);
        }
}

/* Whether PE pe's heap is on this GPU: GPU-scope ordering is then enough towards it
 * (system scope costs a trip through the whole memory system). */
__device__ __forceinline__ bool same_gpu(int pe)
{
    /* Clamped like peer_base: callers may ask before they know pe is in range. */
    return (gshmemi_dstate.same_gpu[((unsigned)pe >> 5) & (GSHMEMI_DEVICE_MAX_PES / 32 - 1)] >> (pe & 31)) & 1u;
}

__device__ __forceinline__ void store_release(unsigned long long *p, unsigned long long v, bool gpu_scope)
{
    if (gpu_scope) asm volatile("st.release.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
    else asm volatile("st.release.sys.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void add_release(unsigned long long *p, unsigned long long v, bool gpu_scope)
{
    if (gpu_scope) asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
    else asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* The signal's address and scope, settled before the group's barrier: left alone, the
 * compiler sinks the scope's constant-bank load (and the address arithmetic) to their use
 * after the barrier, onto the latency path. An empty asm that takes both and gives them
 * back keeps them in registers from here on (measured on the H200 at 1024 threads:
 * block put_signal 0.01-0.02 us less, docs/PERFORMANCE.md "Session 13"). */
__device__ __forceinline__ void settle_signal(unsigned long long *&sig, bool &gpu_scope)
{
    unsigned scope = gpu_scope;
    asm volatile("" : "+l"(sig), "+r"(scope));
    gpu_scope = scope != 0;
}

/* fence() and quiet() are in device_proxy.cuh: they order and complete requests to PROXY
 * peers too. */

/* A load issued where it is written: the compiler may neither sink it past a later
 * branch (it would then wait for that branch's loads) nor move it across other memory
 * accesses. Generic addresses: a source may be in global, shared or local memory. */
__device__ __forceinline__ void load_now(unsigned long long *v, const void *p)
{
    asm volatile("ld.u64 %0, [%1];" : "=l"(*v) : "l"(p) : "memory");
}
__device__ __forceinline__ void load_now(uint4 *v, const void *p)
{
    asm volatile("ld.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v->x), "=r"(v->y), "=r"(v->z), "=r"(v->w)
                 : "l"(p)
                 : "memory");
}

/* Copies words of type W: thread `rank` of `size` takes every size-th word, four
 * loads in flight before the stores (one thread alone is latency-bound otherwise);
 * a thread's last one to three words are loaded together too. */
template <typename W>
__device__ __forceinline__ void copy_words(W *dst, const W *src, size_t words, unsigned rank, unsigned size)
{
    size_t i = rank;
    for (; i + 3 * (size_t)size < words; i += 4 * (size_t)size) {
        W a = src[i], b = src[i + size], c = src[i + 2 * (size_t)size], d = src[i + 3 * (size_t)size];
        dst[i] = a;
        dst[i + size] = b;
        dst[i + 2 * (size_t)size] = c;
        dst[i + 3 * (size_t)size] = d;
    }
    if (i < words) {
        const size_t j = i + size, k = i + 2 * (size_t)size;
        /* b and c start at zero: started as copies of a, their loads would wait for
         * a's (a warp's aligned 1 KiB put_signal, two words a lane: 1.42-1.44 us with
         * the loads one after the other, 1.27-1.28 in flight together; H200, session 16) */
        W a = src[i], b = W(), c = W();
        if (j < words) b = src[j];
        if (k < words) c = src[k];
        dst[i] = a;
        if (j < words) dst[j] = b;
        if (k < words) dst[k] = c;
    }
}

/* Copies n < 16 bytes (or a head/tail) with the widest accesses the common alignment
 * of dst and src allows; one thread. */
__device__ __forceinline__ void copy_small(char *dst, const char *src, size_t n)
{
    while (n) {
        uintptr_t a = (uintptr_t)dst | (uintptr_t)src;
        if (n >= 8 && (a & 7) == 0) {
            *(unsigned long long *)dst = *(const unsigned long long *)src;
            dst += 8, src += 8, n -= 8;
        } else if (n >= 4 && (a & 3) == 0) {
            *(unsigned *)dst = *(const unsigned *)src;
            dst += 4, src += 4, n -= 4;
        } else if (n >= 2 && (a & 1) == 0) {
            *(unsigned short *)dst = *(const unsigned short *)src;
            dst += 2, src += 2, n -= 2;
        } else {
            *dst++ = *src++;
            n--;
        }
    }
}

/* Small copies whose ends are 8-byte aligned take a short path: one thread's put_signal
 * is a chain of dependent instructions, and the general path's alignment arithmetic and
 * branches cost about 0.3 us of its latency (perftest/gpu/latency.cu -s raw). */
#define GSHMEMI_COPY_SHORT_BYTES 256

/* Copies n bytes spread over a group. Up to GSHMEMI_COPY_SHORT_BYTES with 8-byte aligned
 * ends: 8-byte words. Past that, 16-byte aligned ends: 16-byte words (ALIGNED_PATH).
 * Otherwise the widest word (16, 8, 4 bytes) that dst and src share the alignment of;
 * the head up to that alignment and the tail go to thread 0. The aligned path skips the
 * general path's head, tail and word-size arithmetic, which every thread of the group
 * runs, about fifty instructions before the first load: on the H200 (session 16,
 * docs/PERFORMANCE.md) putmem_nbi_block from 66 blocks became 1.2-1.75x faster from 32
 * KiB to 2 MiB, a warp's put_signal of 1-64 KiB 1-9% and a thread's of 512 B - 64 KiB 5%.
 * A block's put_signal passes false: in the 1024-thread latency kernel the path's
 * registers made ptxas reload threadIdx.x after the wait's barrier, and 8-16 B took
 * 0.02-0.04 us longer. */
template <bool ALIGNED_PATH = true>
__device__ __forceinline__ void copy(char *dst, const char *src, size_t n, unsigned rank, unsigned size)
{
    if (n <= GSHMEMI_COPY_SHORT_BYTES && (((uintptr_t)dst | (uintptr_t)src | n) & 7) == 0) {
        unsigned words = (unsigned)(n >> 3);
        if (words <= size) { /* a word per thread at most: no loop */
            if (rank < words) ((unsigned long long *)dst)[rank] = ((const unsigned long long *)src)[rank];
            return;
        }
        /* several words a thread: four loads in flight (one word at a time, a thread's
         * put_signal of 256 B took 2.63-2.75 us on the H200, now 2.13-2.25) */
        copy_words((unsigned long long *)dst, (const unsigned long long *)src, words, rank, size);
        return;
    }
    if (ALIGNED_PATH && (((uintptr_t)dst | (uintptr_t)src | n) & 15) == 0) {
        copy_words((int4 *)dst, (const int4 *)src, n >> 4, rank, size);
        return;
    }
    uintptr_t rel = (uintptr_t)dst ^ (uintptr_t)src;
    unsigned shift = (rel & 15) == 0 ? 4 : (rel & 7) == 0 ? 3 : (rel & 3) == 0 ? 2 : 0;
    size_t word = (size_t)1 << shift;
    size_t head = (word - ((uintptr_t)dst & (word - 1))) & (word - 1);
    if (head > n) head = n;
    if (rank == 0) copy_small(dst, src, head);
    dst += head, src += head, n -= head;
    size_t body = n >> shift;
    if (word == 16) copy_words((int4 *)dst, (const int4 *)src, body, rank, size);
    else if (word == 8) copy_words((unsigned long long *)dst, (const unsigned long long *)src, body, rank, size);
    else if (word == 4) copy_words((unsigned *)dst, (const unsigned *)src, body, rank, size);
    else copy_words(dst, src, body, rank, size);
    if (rank == 0) copy_small(dst + body * word, src + body * word, n - body * word);
}

/* Strided copy of nelems elements of elem bytes; strides in elements. */
template <typename T>
__device__ __forceinline__ void strided(T *dst, ptrdiff_t dst_stride, const T *src, ptrdiff_t src_stride,
                                        size_t nelems, unsigned rank, unsigned size)
{
    for (size_t i = rank; i < nelems; i += size) dst[(ptrdiff_t)i * dst_stride] = src[(ptrdiff_t)i * src_stride];
}

__device__ __forceinline__ unsigned warp_rank() { return threadIdx.x & 31u; }
__device__ __forceinline__ unsigned block_rank()
{
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ __forceinline__ unsigned block_size() { return blockDim.x * blockDim.y * blockDim.z; }

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

} /* namespace gshmemi */

#include <gshmem/impl/device_proxy.cuh>

#endif
