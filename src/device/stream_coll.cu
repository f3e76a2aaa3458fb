/* Kernels and launcher for the stream-ordered collectives. They run the device API's
 * collective code against a module-local __constant__ device state: this file is
 * compiled into libgshmem without relocatable device code, so it cannot see the
 * device library's gshmemi_dstate, and it registers its own copy with the publisher
 * before main (registering at first use would copy during a graph capture). */
#define GSHMEMI_DSTATE_MODULE_LOCAL
#include <gshmem/impl/device_coll.cuh>

#include "device/state_copy.cuh"
#include "device/stream_coll.h"

#include <cuda_runtime.h>

extern "C" void gshmemi_device_register(int (*fn)(int device, const void *state, size_t size));

namespace {

typedef gshmemi_stream_coll_args coll_args;
using gshmemi::team_view;

const unsigned COLL_THREADS = 512;
/* Work (bytes this PE moves) up to which one block does everything: launch latency
 * dominates there, and one block needs no completion count. Above it, a block per
 * COLL_BYTES_PER_BLOCK (small, so mid sizes spread over many SMs), up to
 * COLL_BLOCKS_PER_SM resident blocks per SM: 1024 threads with four 16-byte loads in
 * flight each keep far more bytes in flight than HBM or NVLink need. */
const uint64_t COLL_SINGLE_BLOCK_BYTES = 32 * 1024;
const uint64_t COLL_BYTES_PER_BLOCK = 8 * 1024;
const uint64_t COLL_BYTES_PER_WIDE_BLOCK = 32 * 1024;
const uint64_t COLL_MID_BLOCKS = 16;
const unsigned COLL_BLOCKS_PER_SM = 2;

/* Blocks of a multi-block launch count themselves here; the last resets its team's count. */
__device__ unsigned coll_done[GSHMEMI_TEAMS_LIMIT];

__device__ __forceinline__ team_view coll_team(const coll_args &a)
{
    team_view t;
    if (!gshmemi::team_lookup(a.team, &t)) {
        if (threadIdx.x == 0)
            printf("gshmem: PE %d: on-stream collective on team %d: libgshmem's copy of the device state does not "
                   "know the team\n", a.my_pe, a.team);
        __trap();
    }
    return t;
}

/* Meeting the team before the work: collect first publishes its size, barrier first
 * completes earlier puts. One thread. */
__device__ void coll_entry(const coll_args &a, const team_view &t)
{
    if (a.kind == GSHMEMI_STREAM_COLL_COLLECT)
        *(volatile uint64_t *)&gshmemi::team_words(a.team)->published = a.nelems;
    if (a.kind == GSHMEMI_STREAM_COLL_BARRIER) gshmemi::quiet();
    gshmemi::team_barrier(a.team, t);
}

/* Team sync and barrier; also the entry of a multi-block launch. Blocks spinning on an
 * entry barrier inside the big grid could fill the GPU and keep a peer's kernels (same
 * GPU under MPS) from ever starting, so the one thread waits in a kernel of its own. */
__global__ void coll_sync_kernel(coll_args a)
{
    coll_entry(a, coll_team(a));
}

/* Every block completes its stores and counts itself; the last one completes everybody's
 * (its fence is cumulative over what the count made it observe) and meets the team. */
__device__ __forceinline__ void coll_leave(const coll_args &a, const team_view &t)
{
    __syncthreads();
    if (threadIdx.x != 0) return;
    if (gridDim.x > 1) {
        __threadfence();
        if (atomicAdd(&coll_done[a.team], 1u) != gridDim.x - 1) return;
        coll_done[a.team] = 0; /* every block has counted; the next launch starts from zero */
        __threadfence();
    }
    /* Stores to peers on other GPUs need a system-scope fence before the barrier; on one
     * GPU the barrier's GPU-scope release is cumulative over them (the block barrier and
     * the count above order every block's stores before it). */
    if (!gshmemi::team_on_one_gpu(t) || gshmemi::team_has_proxy(t)) gshmemi::quiet();
    gshmemi::team_barrier(a.team, t);
}

__device__ __forceinline__ void coll_begin(const coll_args &a, const team_view &t, int entry)
{
    if (!entry) return;
    if (threadIdx.x == 0) coll_entry(a, t);
    __syncthreads();
}

template <int KIND>
__global__ void __launch_bounds__(COLL_THREADS, COLL_BLOCKS_PER_SM) coll_kernel(coll_args a, int entry)
{
    team_view t = coll_team(a);
    coll_begin(a, t, entry);
    unsigned rank = blockIdx.x * blockDim.x + threadIdx.x, size = gridDim.x * blockDim.x;
    char *dest = (char *)a.dest;
    const char *source = (const char *)a.source;
    if (KIND == GSHMEMI_STREAM_COLL_BROADCAST) {
        gshmemi::push_all(t, dest, source, a.nelems, rank, size);
    } else if (KIND == GSHMEMI_STREAM_COLL_FCOLLECT) {
        gshmemi::push_all(t, dest + (size_t)t.me * a.nelems, source, a.nelems, rank, size);
    } else if (KIND == GSHMEMI_STREAM_COLL_COLLECT) {
        __shared__ size_t offset;
        if (threadIdx.x == 0) offset = gshmemi::collect_offset(a.team, t);
        __syncthreads();
        gshmemi::push_all(t, dest + offset, source, a.nelems, rank, size);
    } else if (dest == source) {
        gshmemi::alltoall_swap(t, dest, a.nelems, rank, size);
    } else {
        gshmemi::alltoall_push(t, dest, source, a.nelems, rank, size);
    }
    coll_leave(a, t);
}

template <typename T, typename Op>
__global__ void __launch_bounds__(COLL_THREADS, COLL_BLOCKS_PER_SM) reduce_kernel(coll_args a, int entry)
{
    team_view t = coll_team(a);
    coll_begin(a, t, entry);
    unsigned rank = blockIdx.x * blockDim.x + threadIdx.x, size = gridDim.x * blockDim.x;
    if (gshmemi::team_has_proxy(t))
        gshmemi::reduce_slice_proxy<T, Op>(t, (T *)a.dest, (const T *)a.source, a.nelems, rank, size);
    else
        gshmemi::reduce_slice<T, Op>(t, (T *)a.dest, (const T *)a.source, a.nelems, rank, size);
    coll_leave(a, t);
}

template <typename T, typename Op>
cudaError_t reduce_launch_op(const coll_args &a, unsigned blocks, int entry, cudaStream_t stream)
{
    reduce_kernel<T, Op><<<blocks, COLL_THREADS, 0, stream>>>(a, entry);
    return cudaSuccess;
}

template <typename T> cudaError_t reduce_launch_arith(const coll_args &a, unsigned blocks, int entry, cudaStream_t s)
{
    switch (a.op) {
    case GSHMEMI_REDUCE_max: return reduce_launch_op<T, gshmemi::op_max<T> >(a, blocks, entry, s);
    case GSHMEMI_REDUCE_min: return reduce_launch_op<T, gshmemi::op_min<T> >(a, blocks, entry, s);
    case GSHMEMI_REDUCE_sum: return reduce_launch_op<T, gshmemi::op_sum<T> >(a, blocks, entry, s);
    case GSHMEMI_REDUCE_prod: return reduce_launch_op<T, gshmemi::op_prod<T> >(a, blocks, entry, s);
    default: return cudaErrorInvalidValue;
    }
}

template <typename T> cudaError_t reduce_launch_int(const coll_args &a, unsigned blocks, int entry, cudaStream_t s)
{
    switch (a.op) {
    case GSHMEMI_REDUCE_and: return reduce_launch_op<T, gshmemi::op_and<T> >(a, blocks, entry, s);
    case GSHMEMI_REDUCE_or: return reduce_launch_op<T, gshmemi::op_or<T> >(a, blocks, entry, s);
    case GSHMEMI_REDUCE_xor: return reduce_launch_op<T, gshmemi::op_xor<T> >(a, blocks, entry, s);
    default: return reduce_launch_arith<T>(a, blocks, entry, s);
    }
}

cudaError_t reduce_launch(const coll_args &a, unsigned blocks, int entry, cudaStream_t s)
{
    switch (a.type) {
    case GSHMEMI_REDUCE_INT8: return reduce_launch_int<int8_t>(a, blocks, entry, s);
    case GSHMEMI_REDUCE_INT16: return reduce_launch_int<int16_t>(a, blocks, entry, s);
    case GSHMEMI_REDUCE_INT32: return reduce_launch_int<int32_t>(a, blocks, entry, s);
    case GSHMEMI_REDUCE_INT64: return reduce_launch_int<int64_t>(a, blocks, entry, s);
    case GSHMEMI_REDUCE_UINT8: return reduce_launch_int<uint8_t>(a, blocks, entry, s);
    case GSHMEMI_REDUCE_UINT16: return reduce_launch_int<uint16_t>(a, blocks, entry, s);
    case GSHMEMI_REDUCE_UINT32: return reduce_launch_int<uint32_t>(a, blocks, entry, s);
    case GSHMEMI_REDUCE_UINT64: return reduce_launch_int<uint64_t>(a, blocks, entry, s);
    case GSHMEMI_REDUCE_FLOAT: return reduce_launch_arith<float>(a, blocks, entry, s);
    case GSHMEMI_REDUCE_DOUBLE: return reduce_launch_arith<double>(a, blocks, entry, s);
    default: return cudaErrorInvalidValue;
    }
}

size_t reduce_elem_size(int type)
{
    static const unsigned char sizes[] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8};
    return type >= 0 && type < (int)sizeof(sizes) ? sizes[type] : 1;
}

/* One block for small work, else a block per COLL_BYTES_PER_BLOCK up to full occupancy. */
unsigned coll_blocks(const coll_args &a, int device)
{
    uint64_t work = a.kind == GSHMEMI_STREAM_COLL_REDUCE ? 2 * a.nelems * reduce_elem_size(a.type)
                                                         : a.nelems * (uint64_t)a.team_size;
    /* With members behind the proxy one block: the proxy serves requests one at a time,
     * and a full GPU of threads each polling the pinned ring only floods PCIe (on the
     * H200 the on-stream reductions then stalled: the target's copies never completed). */
    if (work <= COLL_SINGLE_BLOCK_BYTES || a.proxied) return 1;
    static int sm_count;
    int sms = __atomic_load_n(&sm_count, __ATOMIC_RELAXED);
    if (sms == 0) { /* an attribute query, allowed during a graph capture */
        if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms < 1) sms = 1;
        __atomic_store_n(&sm_count, sms, __ATOMIC_RELAXED);
    }
    /* A block per COLL_BYTES_PER_BLOCK up to COLL_MID_BLOCKS blocks, then a block per
     * COLL_BYTES_PER_WIDE_BLOCK: measured on an H200 (2 PEs under MPS), 64 KiB per peer
     * wants many small blocks and 512 KiB fewer, larger ones. */
    uint64_t small = (work + COLL_BYTES_PER_BLOCK - 1) / COLL_BYTES_PER_BLOCK;
    uint64_t wide = (work + COLL_BYTES_PER_WIDE_BLOCK - 1) / COLL_BYTES_PER_WIDE_BLOCK;
    uint64_t blocks = small < COLL_MID_BLOCKS ? small : wide > COLL_MID_BLOCKS ? wide : COLL_MID_BLOCKS;
    uint64_t most = (uint64_t)COLL_BLOCKS_PER_SM * (uint64_t)sms;
    return (unsigned)(blocks < most ? blocks : most);
}

int coll_state_sync(int device, const void *state, size_t size)
{
    return (int)gshmemi_state_copy(device, state, size);
}

struct coll_state_registration {
    coll_state_registration() { gshmemi_device_register(coll_state_sync); }
};
coll_state_registration coll_state_registration_instance;

__global__ void proxy_rma_kernel(gshmemi_stream_proxy_args a)
{
    using namespace gshmemi;
    void *dest = (void *)(uintptr_t)a.dest;
    const void *source = (const void *)(uintptr_t)a.source;
    switch (a.kind) {
    case GSHMEMI_STREAM_PROXY_PUT: proxy_rma<SCOPE_THREAD>(GSHMEMI_PROXY_PUT, false, dest, source, a.nelems, a.pe); break;
    case GSHMEMI_STREAM_PROXY_GET: proxy_rma<SCOPE_THREAD>(GSHMEMI_PROXY_GET, false, source, dest, a.nelems, a.pe); break;
    case GSHMEMI_STREAM_PROXY_PUT_SIGNAL:
        proxy_put_signal<SCOPE_THREAD>(dest, source, a.nelems, (const uint64_t *)(uintptr_t)a.sig_addr, a.signal,
                                       a.sig_op, false, a.pe);
        break;
    case GSHMEMI_STREAM_PROXY_SIGNAL:
        proxy_signal((const uint64_t *)(uintptr_t)a.sig_addr, a.signal, a.sig_op, a.pe);
        break;
    default: quiet();
    }
}

} /* namespace */

extern "C" int gshmemi_stream_proxy(int device, const struct gshmemi_stream_proxy_args *args, struct CUstream_st *stream)
{
    cudaError_t err = gshmemi_cuda_bind(device, NULL);
    if (err != cudaSuccess) return (int)err;
    proxy_rma_kernel<<<1, 1, 0, stream>>>(*args);
    return (int)cudaGetLastError();
}

extern "C" int gshmemi_stream_coll(int device, const struct gshmemi_stream_coll_args *args, struct CUstream_st *stream)
{
    cudaError_t err = gshmemi_cuda_bind(device, NULL);
    if (err != cudaSuccess) return (int)err;
    coll_args a = *args;
    bool bystander = a.kind == GSHMEMI_STREAM_COLL_BROADCAST && a.my_index != a.root;
    if (a.kind == GSHMEMI_STREAM_COLL_SYNC || a.kind == GSHMEMI_STREAM_COLL_BARRIER || bystander) {
        if (bystander) a.kind = GSHMEMI_STREAM_COLL_SYNC; /* the root's barrier says its data has landed */
        coll_sync_kernel<<<1, 1, 0, stream>>>(a);
        return (int)cudaGetLastError();
    }
    unsigned blocks = coll_blocks(a, device);
    bool entry = a.kind == GSHMEMI_STREAM_COLL_COLLECT || a.kind == GSHMEMI_STREAM_COLL_REDUCE ||
                 (a.kind == GSHMEMI_STREAM_COLL_ALLTOALL && a.dest == a.source);
    if (entry && blocks > 1) coll_sync_kernel<<<1, 1, 0, stream>>>(a);
    int inline_entry = entry && blocks == 1;
    if (a.kind == GSHMEMI_STREAM_COLL_REDUCE) err = reduce_launch(a, blocks, inline_entry, stream);
    else if (a.kind == GSHMEMI_STREAM_COLL_BROADCAST)
        coll_kernel<GSHMEMI_STREAM_COLL_BROADCAST><<<blocks, COLL_THREADS, 0, stream>>>(a, inline_entry);
    else if (a.kind == GSHMEMI_STREAM_COLL_FCOLLECT)
        coll_kernel<GSHMEMI_STREAM_COLL_FCOLLECT><<<blocks, COLL_THREADS, 0, stream>>>(a, inline_entry);
    else if (a.kind == GSHMEMI_STREAM_COLL_COLLECT)
        coll_kernel<GSHMEMI_STREAM_COLL_COLLECT><<<blocks, COLL_THREADS, 0, stream>>>(a, inline_entry);
    else coll_kernel<GSHMEMI_STREAM_COLL_ALLTOALL><<<blocks, COLL_THREADS, 0, stream>>>(a, inline_entry);
    return (int)(err != cudaSuccess ? err : cudaGetLastError());
}
