/*
 * stream_exchange: every PE sends a block of data to its right neighbour each
 * iteration, entirely in stream order: a kernel produces the data, gshmem moves it
 * and signals, the next kernel consumes what the left neighbour sent. The host only
 * enqueues work and waits once at the end.
 *
 * Per iteration `it`, on one stream:
 *   produce kernel          fill src with this PE's data for `it`
 *   wait ack >= it - 1      the right neighbour has consumed our previous block
 *   putmem_signal           src -> right's inbox, then inbox_sig = it on the right
 *   wait inbox_sig >= it    the left neighbour's block has arrived
 *   consume kernel          check the inbox, count wrong elements
 *   signal_op ack = it      tell the left neighbour its inbox slot on us is free
 *
 *   gshmemrun -n 4 ./stream_exchange [ITERATIONS]
 */
#include <gshmem.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK_CUDA(call)                                                                                    \
    do {                                                                                                    \
        cudaError_t err_ = (call);                                                                          \
        if (err_ != cudaSuccess) {                                                                          \
            fprintf(stderr, "PE %d: %s failed: %s\n", gshmem_my_pe(), #call, cudaGetErrorString(err_));      \
            gshmem_global_exit(1);                                                                          \
        }                                                                                                   \
    } while (0)

#define COUNT (1 << 20) /* ints per block: 4 MiB */

__device__ inline int pattern(int pe, int it, int i)
{
    return pe * 1000003 + it * 7919 + i;
}

__global__ void produce(int *src, int me, int it)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < COUNT; i += gridDim.x * blockDim.x)
        src[i] = pattern(me, it, i);
}

__global__ void consume(const int *inbox, int left, int it, unsigned long long *wrong)
{
    unsigned long long bad = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < COUNT; i += gridDim.x * blockDim.x)
        bad += inbox[i] != pattern(left, it, i);
    if (bad) atomicAdd(wrong, bad);
}

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 20;
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;

    int *inbox = (int *)gshmem_malloc(COUNT * sizeof(int));           /* written by the left neighbour */
    uint64_t *sigs = (uint64_t *)gshmem_calloc(2, sizeof(uint64_t));
    uint64_t *inbox_sig = &sigs[0], *ack = &sigs[1];
    if (!inbox || !sigs) gshmem_global_exit(1);
    int *src;                      /* ordinary device memory: the source of a put need not be symmetric */
    unsigned long long *wrong;
    CHECK_CUDA(cudaMalloc(&src, COUNT * sizeof(int)));
    CHECK_CUDA(cudaMalloc(&wrong, sizeof(*wrong)));
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaMemsetAsync(wrong, 0, sizeof(*wrong), stream)); /* in order with the kernels below */
    gshmem_barrier_all(); /* every PE's signals are zero before anyone sends */

    for (int it = 1; it <= iterations; it++) {
        produce<<<128, 256, 0, stream>>>(src, me, it);
        if (it > 1) gshmemx_signal_wait_until_on_stream(ack, GSHMEM_CMP_GE, (uint64_t)(it - 1), stream);
        gshmemx_putmem_signal_on_stream(inbox, src, COUNT * sizeof(int), inbox_sig, (uint64_t)it,
                                        GSHMEM_SIGNAL_SET, right, stream);
        gshmemx_signal_wait_until_on_stream(inbox_sig, GSHMEM_CMP_GE, (uint64_t)it, stream);
        consume<<<128, 256, 0, stream>>>(inbox, left, it, wrong);
        gshmemx_signal_op_on_stream(ack, (uint64_t)it, GSHMEM_SIGNAL_SET, left, stream);
    }
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaStreamSynchronize(stream));

    unsigned long long bad = 0;
    CHECK_CUDA(cudaMemcpy(&bad, wrong, sizeof(bad), cudaMemcpyDeviceToHost));
    printf("PE %d of %d: %d exchanges of %zu bytes from PE %d, %llu wrong elements (%s)\n", me, n, iterations,
           COUNT * sizeof(int), left, bad, bad ? "WRONG" : "ok");

    gshmem_barrier_all(); /* the last acks have landed everywhere */
    CHECK_CUDA(cudaStreamDestroy(stream));
    CHECK_CUDA(cudaFree(wrong));
    CHECK_CUDA(cudaFree(src));
    gshmem_free(sigs);
    gshmem_free(inbox);
    gshmem_finalize();
    return bad ? 1 : 0;
}
