/* First contact with the device API: ring p, put+signal, fetch-add from every thread,
 * block barrier, on the device heap. Checks every value. */
#include <gshmem.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK_CUDA(call)                                                                   \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "PE %d: %s:%d: %s\n", gshmem_my_pe(), __FILE__, __LINE__,      \
                    cudaGetErrorString(e_));                                               \
            gshmem_global_exit(1);                                                         \
        }                                                                                  \
    } while (0)

#define N 1000

__global__ void smoke(int *ring, long *data, uint64_t *sig, unsigned long long *counter)
{
    int me = gshmem_my_pe(), n = gshmem_n_pes(), right = (me + 1) % n;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        gshmem_int_p(ring, 1000 + me, right);
        long src[N];
        for (int i = 0; i < N; i++) src[i] = (long)me * 1000000 + i;
        gshmem_long_put_signal(data, src, N, sig, 1, GSHMEM_SIGNAL_ADD, right);
    }
    gshmem_ulonglong_atomic_fetch_add(counter, 1ull, 0);
}

__global__ void barrier(void) { gshmemx_barrier_all_block(); }

/* Which PEs the device state says share this GPU (bit per PE). */
__global__ void same_gpu_bits(unsigned *out) { *out = gshmemi_dstate.same_gpu[0]; }

int main(void)
{
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes(), left = (me + n - 1) % n;
    printf("PE %d of %d: heap %s\n", me, n, gshmemx_heap_kind());
    int *ring = (int *)gshmem_malloc(sizeof(int));
    long *data = (long *)gshmem_malloc(N * sizeof(long));
    uint64_t *sig = (uint64_t *)gshmem_calloc(1, sizeof(uint64_t));
    unsigned long long *counter = (unsigned long long *)gshmem_calloc(1, sizeof(unsigned long long));
    smoke<<<4, 128>>>(ring, data, sig, counter);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    barrier<<<1, 64>>>();
    CHECK_CUDA(cudaDeviceSynchronize());
    gshmem_signal_wait_until(sig, GSHMEM_CMP_EQ, 1);
    int got_ring;
    long got[N];
    unsigned long long count = 0;
    CHECK_CUDA(cudaMemcpy(&got_ring, ring, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(got, data, sizeof(got), cudaMemcpyDeviceToHost));
    gshmem_barrier_all();
    if (me == 0) CHECK_CUDA(cudaMemcpy(&count, counter, sizeof(count), cudaMemcpyDeviceToHost));
    int bad = got_ring != 1000 + left;
    for (int i = 0; i < N; i++) bad += got[i] != (long)left * 1000000 + i;
    if (me == 0 && count != (unsigned long long)n * 4 * 128) {
        fprintf(stderr, "PE 0: counter %llu, expected %d\n", count, n * 4 * 128);
        bad++;
    }
    unsigned *bits_d, bits = 0;
    CHECK_CUDA(cudaMalloc(&bits_d, sizeof(unsigned)));
    same_gpu_bits<<<1, 1>>>(bits_d);
    CHECK_CUDA(cudaMemcpy(&bits, bits_d, sizeof(bits), cudaMemcpyDeviceToHost));
    printf("PE %d: PEs on this GPU (bit mask): 0x%x\n", me, bits);
    printf("PE %d: smoke %s (ring %d)\n", me, bad ? "FAILED" : "ok", got_ring);
    gshmem_finalize();
    return bad ? 1 : 0;
}
