/* Inline device implementation: calls on PROXY peers (peer_base 0: another node, or
 * GSHMEM_DISABLE_P2P) become requests in the proxy's ring (proxy_ring.h), served in
 * order by the PE's proxy thread through the peer's host transport. Everything here is
 * out of line (__noinline__): it is the slow path of calls whose P2P path is a load or a
 * store, which stays as short as without a proxy. Internal; included by
 * device_common.cuh.
 *
 * Group forms: the group meets, its first thread posts one request (and, for blocking
 * forms, waits for its completion), the group meets again. Blocking put, put_signal and
 * iput wait until the proxy has taken the source (it may be reused on return); the _nbi
 * forms, p, signals and non-fetching atomics return once posted and complete at quiet.
 * get, g and fetching atomics (the _nbi ones too) wait for their data. */
#ifndef GSHMEM_IMPL_DEVICE_PROXY_CUH
#define GSHMEM_IMPL_DEVICE_PROXY_CUH

#include <gshmem/impl/proxy_ring.h>

namespace gshmemi {

__device__ __noinline__ inline const char *proxy_op_name(int op)
{
    switch (op) {
    case GSHMEMI_PROXY_PUT: return "put";
    case GSHMEMI_PROXY_GET: return "get";
    case GSHMEMI_PROXY_PUT_INLINE: return "p";
    case GSHMEMI_PROXY_GET_INLINE: return "g";
    case GSHMEMI_PROXY_IPUT: return "iput";
    case GSHMEMI_PROXY_IGET: return "iget";
    case GSHMEMI_PROXY_AMO: return "atomic";
    case GSHMEMI_PROXY_PUT_SIGNAL: return "put_signal";
    case GSHMEMI_PROXY_SIGNAL: return "signal";
    case GSHMEMI_PROXY_QUIET: return "quiet";
    default: return "request";
    }
}

__device__ __noinline__ inline void report_proxy_timeout(int op, int pe, unsigned long long ticket, bool posting)
{
    const gshmemi_proxy_ring &ring = gshmemi_dstate.proxy;
    unsigned long long tail = *(const volatile uint64_t *)ring.tail;
    printf("gshmem: PE %d: device %s to PE %d through the proxy: %s after %.3f s (GSHMEM_TIMEOUT); request %llu, "
           "the proxy has released the slots of requests below %llu (ring of %u); is PE %d's proxy thread alive?\n",
           gshmemi_dstate.my_pe, proxy_op_name(op), pe, posting ? "no free ring slot" : "no completion",
           (double)ring.timeout_ns * 1e-9, ticket, tail, ring.nslots, gshmemi_dstate.my_pe);
    __trap();
}

/* Posts r and, with wait, waits for its completion; returns the result word (RESULT
 * requests). A PE out of range, or no proxy at all, traps as before. */
__device__ __noinline__ inline uint64_t proxy_request(gshmemi_proxy_req r, bool wait)
{
    if (gshmemi_dstate.proxy.nslots == 0 ||
        (r.op != GSHMEMI_PROXY_QUIET && (unsigned)r.pe >= (unsigned)gshmemi_dstate.n_pes))
        report_bad_pe(r.pe);
    gshmemi_proxy_ring ring = gshmemi_dstate.proxy;
    uint64_t ticket, result = 0;
    if (gshmemi_proxy_ring_post(&ring, &r, &ticket) != GSHMEMI_PROXY_RING_OK)
        report_proxy_timeout(r.op, r.pe, ticket, true);
    if (wait && gshmemi_proxy_ring_wait(&ring, ticket, (r.flags & GSHMEMI_PROXY_F_RESULT) ? &result : NULL) !=
                    GSHMEMI_PROXY_RING_OK)
        report_proxy_timeout(r.op, r.pe, ticket, false);
    return result;
}

__device__ __forceinline__ gshmemi_proxy_req proxy_req(int op, int flags, int pe, const void *remote)
{
    gshmemi_proxy_req r = {};
    r.op = (uint8_t)op;
    r.flags = (uint8_t)flags;
    r.pe = pe;
    r.offset = heap_offset(remote);
    return r;
}

/* put (PUT) or get (GET) of n bytes by a group. */
template <int S>
__device__ __noinline__ void proxy_rma(int op, bool nbi, const void *remote, const void *local, size_t n, int pe)
{
    scope_sync<S>(); /* a put's source is written by the whole group */
    if (scope_rank<S>() == 0 && n) {
        gshmemi_proxy_req r = proxy_req(op, nbi ? GSHMEMI_PROXY_F_NBI : 0, pe, remote);
        r.local = (uint64_t)(uintptr_t)local;
        r.len = n;
        proxy_request(r, !nbi);
    }
    scope_sync<S>(); /* a get's data is there for the whole group */
}

/* iput (IPUT) or iget (IGET): nelems elements of elem bytes, strides in bytes. */
template <int S>
__device__ __noinline__ void proxy_strided(int op, const void *remote, ptrdiff_t remote_stride, const void *local,
                                           ptrdiff_t local_stride, unsigned elem, size_t nelems, int pe)
{
    scope_sync<S>();
    if (scope_rank<S>() == 0 && nelems) {
        gshmemi_proxy_req r = proxy_req(op, 0, pe, remote);
        r.local = (uint64_t)(uintptr_t)local;
        r.width = (uint8_t)elem;
        r.len = nelems;
        r.operand = (uint64_t)(op == GSHMEMI_PROXY_IPUT ? remote_stride : local_stride);
        r.extra = (uint64_t)(op == GSHMEMI_PROXY_IPUT ? local_stride : remote_stride);
        proxy_request(r, true);
    }
    scope_sync<S>();
}

template <int S>
__device__ __noinline__ void proxy_put_signal(const void *dest, const void *source, size_t n, const uint64_t *sig_addr,
                                              uint64_t signal, int sig_op, bool nbi, int pe)
{
    scope_sync<S>();
    if (scope_rank<S>() == 0) {
        gshmemi_proxy_req r = proxy_req(GSHMEMI_PROXY_PUT_SIGNAL, nbi ? GSHMEMI_PROXY_F_NBI : 0, pe, dest);
        r.sub = (uint8_t)sig_op;
        r.local = (uint64_t)(uintptr_t)source;
        r.len = n;
        r.operand = signal;
        r.extra = heap_offset(sig_addr);
        proxy_request(r, !nbi);
    }
    scope_sync<S>();
}

/* Signals (and the barriers' flag updates): ordered after this thread's earlier
 * requests by the in-order proxy. */
__device__ __noinline__ inline void proxy_signal(const void *sig_addr, uint64_t signal, int sig_op, int pe)
{
    gshmemi_proxy_req r = proxy_req(GSHMEMI_PROXY_SIGNAL, GSHMEMI_PROXY_F_NBI, pe, sig_addr);
    r.sub = (uint8_t)sig_op;
    r.operand = signal;
    proxy_request(r, false);
}

/* p: the value travels in the request. */
__device__ __noinline__ inline void proxy_p(const void *dest, uint64_t value, unsigned size, int pe)
{
    gshmemi_proxy_req r = proxy_req(GSHMEMI_PROXY_PUT_INLINE, GSHMEMI_PROXY_F_NBI, pe, dest);
    r.len = size;
    r.operand = value;
    proxy_request(r, false);
}

/* g: the value comes back in the completion's result word. */
__device__ __noinline__ inline uint64_t proxy_g(const void *source, unsigned size, int pe)
{
    gshmemi_proxy_req r = proxy_req(GSHMEMI_PROXY_GET_INLINE, GSHMEMI_PROXY_F_RESULT, pe, source);
    r.len = size;
    return proxy_request(r, true);
}

/* An atomic of width 4 or 8 (op: enum gshmemi_proxy_amo), values zero-extended. */
__device__ __noinline__ inline uint64_t proxy_amo(const void *dest, int op, unsigned width, uint64_t operand,
                                                  uint64_t compare, bool fetch, int pe)
{
    gshmemi_proxy_req r = proxy_req(GSHMEMI_PROXY_AMO,
                                    fetch ? GSHMEMI_PROXY_F_FETCH | GSHMEMI_PROXY_F_RESULT : GSHMEMI_PROXY_F_NBI, pe,
                                    dest);
    r.sub = (uint8_t)op;
    r.width = (uint8_t)width;
    r.operand = operand;
    r.extra = compare;
    return proxy_request(r, fetch);
}

/* The proxy half of quiet(): every request this thread posted before is complete. */
__device__ __noinline__ inline void proxy_quiet()
{
    gshmemi_proxy_req r = {};
    r.op = GSHMEMI_PROXY_QUIET;
    r.pe = gshmemi_dstate.my_pe;
    proxy_request(r, true);
}

/* OpenSHMEM quiet: earlier puts, AMOs and signals are visible everywhere. With a proxy,
 * also a QUIET request and its completion: the proxy serves in order, so every request
 * posted before it (by this thread, and by its group after a group sync) is then
 * complete at its target. */
__device__ __forceinline__ void quiet()
{
    asm volatile("fence.sc.sys;" ::: "memory");
    if (gshmemi_dstate.proxy.nslots) proxy_quiet();
}

} /* namespace gshmemi */

#endif
