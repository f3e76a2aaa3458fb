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
 * get, g and fetching atomics (the _nbi ones too) wait for their data.
 *
 * Local memory the proxy thread cannot address (a thread's local memory, shared
 * memory) and small puts travel in the ring's data slots (proxy_ring.h): the thread
 * copies the bytes into pinned memory and the request needs no device-to-host copy on
 * the proxy's side; such puts are complete locally once posted. */
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
    case GSHMEMI_PROXY_FENCE: return "fence";
    case GSHMEMI_PROXY_EXCHANGE: return "exchange";
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
        (r.op != GSHMEMI_PROXY_QUIET && r.op != GSHMEMI_PROXY_FENCE && (unsigned)r.pe >= (unsigned)gshmemi_dstate.n_pes))
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

/* Puts of at most this many bytes from global memory travel in data slots too. */
#define GSHMEMI_PROXY_SMALL_PUT 1024u

/* Whether the proxy thread can reach local by address (global memory: device heap,
 * cudaMalloc, pinned or managed host memory); local and shared memory it cannot. */
__device__ __forceinline__ bool proxy_addressable(const void *local)
{
    return __isGlobal(local);
}

/* A put small enough to travel in data slots even from global memory. */
__device__ __forceinline__ bool proxy_small_put(size_t n)
{
    return n <= GSHMEMI_PROXY_SMALL_PUT;
}

__device__ __forceinline__ uint64_t proxy_span(size_t bytes)
{
    return (bytes + GSHMEMI_PROXY_DATA_BYTES - 1) / GSHMEMI_PROXY_DATA_BYTES;
}

/* Packed element e (elem bytes: 1, 2, 4, 8 or 16, which divide the slot's bytes) of the
 * data slots of ticket t. */
__device__ __forceinline__ char *proxy_data_elem(const gshmemi_proxy_ring &ring, uint64_t t, size_t e, unsigned elem)
{
    size_t at = e * elem;
    return (char *)gshmemi_proxy_ring_data_bytes(&ring, t, at / GSHMEMI_PROXY_DATA_BYTES) +
           at % GSHMEMI_PROXY_DATA_BYTES;
}

/* One element between local memory and a data slot (volatile on the slot side: the
 * proxy thread writes them for gets). */
__device__ __forceinline__ void proxy_move(char *to, const char *from, unsigned elem)
{
    switch (elem) {
    case 16:
        ((volatile uint64_t *)to)[0] = ((const volatile uint64_t *)from)[0];
        ((volatile uint64_t *)to)[1] = ((const volatile uint64_t *)from)[1];
        break;
    case 8: *(volatile uint64_t *)to = *(const volatile uint64_t *)from; break;
    case 4: *(volatile uint32_t *)to = *(const volatile uint32_t *)from; break;
    case 2: *(volatile uint16_t *)to = *(const volatile uint16_t *)from; break;
    default:
        for (unsigned i = 0; i < elem; i++) ((volatile char *)to)[i] = ((const volatile char *)from)[i];
    }
}

/* The widest element (<= 8) that bytes at a and b, and n, all allow. */
__device__ __forceinline__ unsigned proxy_unit(const void *a, size_t n)
{
    uintptr_t x = (uintptr_t)a | n;
    return (x & 7) == 0 ? 8 : (x & 3) == 0 ? 4 : (x & 1) == 0 ? 2 : 1;
}

/* Posts one DATA request for nelems elements of elem bytes at local (stride in bytes):
 * a put-like op copies them into the data slots first; a get-like op waits and copies
 * them out. r is the header (op, pe, offset, ...); returns after posting (puts) or
 * after the data is in local (gets). */
__device__ __noinline__ inline void proxy_data_request(gshmemi_proxy_req r, char *local, ptrdiff_t stride,
                                                       unsigned elem, size_t nelems, bool incoming)
{
    if (gshmemi_dstate.proxy.nslots == 0 || (unsigned)r.pe >= (unsigned)gshmemi_dstate.n_pes) report_bad_pe(r.pe);
    gshmemi_proxy_ring ring = gshmemi_dstate.proxy;
    r.span = proxy_span(nelems * elem);
    r.flags |= GSHMEMI_PROXY_F_DATA | (incoming ? GSHMEMI_PROXY_F_RESULT : GSHMEMI_PROXY_F_NBI);
    uint64_t t;
    if (gshmemi_proxy_ring_reserve(&ring, 1 + r.span, &t) != GSHMEMI_PROXY_RING_OK)
        report_proxy_timeout(r.op, r.pe, t, true);
    for (uint64_t i = 0; i < r.span; i++) gshmemi_proxy_ring_data(&ring, t, i); /* marks them as data slots */
    if (!incoming)
        for (size_t e = 0; e < nelems; e++) proxy_move(proxy_data_elem(ring, t, e, elem), local + e * stride, elem);
    gshmemi_proxy_ring_publish(&ring, t, &r);
    if (!incoming) return;
    if (gshmemi_proxy_ring_wait_done(&ring, t) != GSHMEMI_PROXY_RING_OK) report_proxy_timeout(r.op, r.pe, t, false);
    for (size_t e = 0; e < nelems; e++) proxy_move(local + e * stride, proxy_data_elem(ring, t, e, elem), elem);
    gshmemi_proxy_ring_ack(&ring, t);
}
/* Contiguous bytes through data slots, in requests of at most MAX_SPAN slots: puts
 * (the last one carries the signal when sig is set) or gets. */
__device__ __noinline__ inline void proxy_data_rma(int op, const void *remote, char *local, size_t n, int pe,
                                                   const gshmemi_proxy_req *sig)
{
    unsigned unit = proxy_unit(local, n);
    size_t piece = (size_t)GSHMEMI_PROXY_MAX_SPAN * GSHMEMI_PROXY_DATA_BYTES;
    for (size_t done = 0; done < n; done += piece) {
        size_t len = n - done < piece ? n - done : piece;
        gshmemi_proxy_req r = sig && done + len == n ? *sig : proxy_req(op, 0, pe, (const char *)remote + done);
        r.offset = heap_offset((const char *)remote + done);
        r.len = len;
        proxy_data_request(r, local + done, unit, unit, len / unit, op == GSHMEMI_PROXY_GET);
    }
}

/* put (PUT) or get (GET) of n bytes by a group. */
template <int S>
__device__ __noinline__ void proxy_rma(int op, bool nbi, const void *remote, const void *local, size_t n, int pe)
{
    scope_sync<S>(); /* a put's source is written by the whole group */
    if (scope_rank<S>() == 0 && n) {
        if (!proxy_addressable(local) || (op == GSHMEMI_PROXY_PUT && proxy_small_put(n))) {
            proxy_data_rma(op, remote, (char *)local, n, pe, NULL);
        } else {
            gshmemi_proxy_req r = proxy_req(op, nbi ? GSHMEMI_PROXY_F_NBI : 0, pe, remote);
            r.local = (uint64_t)(uintptr_t)local;
            r.len = n;
            proxy_request(r, !nbi);
        }
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
        if (!proxy_addressable(local)) { /* packed in data slots, a piece at a time */
            size_t piece = (size_t)GSHMEMI_PROXY_MAX_SPAN * GSHMEMI_PROXY_DATA_BYTES / elem;
            for (size_t done = 0; done < nelems; done += piece) {
                size_t k = nelems - done < piece ? nelems - done : piece;
                const char *at = (const char *)remote + (ptrdiff_t)done * remote_stride;
                gshmemi_proxy_req r = proxy_req(op, 0, pe, at);
                r.width = (uint8_t)elem;
                r.len = k;
                if (op == GSHMEMI_PROXY_IPUT) r.operand = (uint64_t)remote_stride;
                else r.extra = (uint64_t)remote_stride;
                proxy_data_request(r, (char *)local + (ptrdiff_t)done * local_stride, local_stride, elem, k,
                                   op == GSHMEMI_PROXY_IGET);
            }
        } else {
            gshmemi_proxy_req r = proxy_req(op, 0, pe, remote);
            r.local = (uint64_t)(uintptr_t)local;
            r.width = (uint8_t)elem;
            r.len = nelems;
            r.operand = (uint64_t)(op == GSHMEMI_PROXY_IPUT ? remote_stride : local_stride);
            r.extra = (uint64_t)(op == GSHMEMI_PROXY_IPUT ? local_stride : remote_stride);
            proxy_request(r, true);
        }
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
        r.operand = signal;
        r.extra = heap_offset(sig_addr);
        if (n > 0 && (!proxy_addressable(source) || proxy_small_put(n))) {
            proxy_data_rma(GSHMEMI_PROXY_PUT, dest, (char *)source, n, pe, &r);
        } else {
            r.local = (uint64_t)(uintptr_t)source;
            r.len = n;
            proxy_request(r, !nbi);
        }
    }
    scope_sync<S>();
}

/* In-place exchange of n bytes between local (global memory) and remote on pe: the
 * proxy gets theirs, puts ours and stores theirs. Blocking. */
__device__ __noinline__ inline void proxy_exchange(void *local, const void *remote, size_t n, int pe)
{
    gshmemi_proxy_req r = proxy_req(GSHMEMI_PROXY_EXCHANGE, 0, pe, remote);
    r.local = (uint64_t)(uintptr_t)local;
    r.len = n;
    proxy_request(r, true);
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

/* The proxy half of fence(): a FENCE request, not waited for. The proxy serves requests
 * in ticket order, but a remote transport may deliver two operations to one PE out of
 * order (ibv with PCIe relaxed ordering: a later RDMA write may land before an earlier
 * one's data); FENCE makes the proxy call the transports' fence between them. */
__device__ __noinline__ inline void proxy_fence()
{
    gshmemi_proxy_req r = {};
    r.op = GSHMEMI_PROXY_FENCE;
    r.flags = GSHMEMI_PROXY_F_NBI;
    r.pe = gshmemi_dstate.my_pe;
    proxy_request(r, false);
}

/* OpenSHMEM fence: orders this thread's earlier puts and AMOs to each PE before its later
 * ones to that PE. */
__device__ __forceinline__ void fence()
{
    asm volatile("fence.acq_rel.sys;" ::: "memory");
    if (gshmemi_dstate.proxy.nslots) proxy_fence();
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
