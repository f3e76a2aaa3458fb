/* First contact with the device API: ring p, put+signal, fetch-add from every thread,
 * block barrier, a block's put_signal by each of its paths, on the device heap. Checks
 * every value. */
#include "gpu_check.cuh"

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

/* A block's put_signal by each of its paths, with no wait on the device (so that it runs
 * under compute-sanitizer in seconds): one 16-byte word (thread 0 alone), 4 KiB aligned
 * (the lanes: eight warps), 4 KiB + 8 at odd offsets (the copy path). Each adds 1. */
#define BPS_SPAN 12288
#define BPS_PARTS 3
__host__ __device__ inline void bps_part(int k, unsigned *off, unsigned *soff, unsigned *len)
{
    const unsigned offs[BPS_PARTS] = {0, 64, 4200 + 3}, soffs[BPS_PARTS] = {0, 16, 4200 + 5},
                   lens[BPS_PARTS] = {16, 4096, 4096 + 8};
    *off = offs[k];
    *soff = soffs[k];
    *len = lens[k];
}

__global__ void __launch_bounds__(1024) block_put_signal(char *dst, const char *src, uint64_t *sig, int right)
{
    for (int k = 0; k < BPS_PARTS; k++) {
        unsigned off, soff, len;
        bps_part(k, &off, &soff, &len);
        gshmemx_putmem_signal_block(dst + off, src + soff, len, sig, 1, GSHMEM_SIGNAL_ADD, right);
    }
}

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
    GPU_CHECK_CUDA(cudaGetLastError());
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
    barrier<<<1, 64>>>();
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
    gshmem_signal_wait_until(sig, GSHMEM_CMP_EQ, 1);

    char *bdst = (char *)gshmem_malloc(BPS_SPAN);
    uint64_t *bsig = (uint64_t *)gshmem_calloc(1, sizeof(uint64_t));
    static unsigned char host[BPS_SPAN];
    for (unsigned i = 0; i < BPS_SPAN; i++) host[i] = gpu_pat8(me, i, 0);
    char *bsrc;
    GPU_CHECK_CUDA(cudaMalloc(&bsrc, BPS_SPAN));
    GPU_CHECK_CUDA(cudaMemcpy(bsrc, host, BPS_SPAN, cudaMemcpyHostToDevice));
    GPU_CHECK_CUDA(cudaMemset(bdst, GPU_POISON, BPS_SPAN));
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();
    block_put_signal<<<1, 1024>>>(bdst, bsrc, bsig, (me + 1) % n);
    GPU_CHECK_CUDA(cudaGetLastError());
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
    gshmem_signal_wait_until(bsig, GSHMEM_CMP_EQ, BPS_PARTS);
    GPU_CHECK_CUDA(cudaMemcpy(host, bdst, BPS_SPAN, cudaMemcpyDeviceToHost));
    long bbad = 0;
    for (unsigned i = 0; i < BPS_SPAN; i++) {
        unsigned char expect = GPU_POISON;
        for (int k = 0; k < BPS_PARTS; k++) {
            unsigned off, soff, len;
            bps_part(k, &off, &soff, &len);
            if (i >= off && i < off + len) expect = gpu_pat8(left, soff + (i - off), 0);
        }
        if (host[i] != expect && bbad++ < 5)
            fprintf(stderr, "PE %d: block put_signal byte %u from PE %d: %#x, expected %#x\n", me, i, left, host[i], expect);
    }
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(bsrc));
    gshmem_free(bsig);
    gshmem_free(bdst);
    int got_ring;
    long got[N];
    unsigned long long count = 0;
    GPU_CHECK_CUDA(cudaMemcpy(&got_ring, ring, sizeof(int), cudaMemcpyDeviceToHost));
    GPU_CHECK_CUDA(cudaMemcpy(got, data, sizeof(got), cudaMemcpyDeviceToHost));
    gshmem_barrier_all();
    if (me == 0) GPU_CHECK_CUDA(cudaMemcpy(&count, counter, sizeof(count), cudaMemcpyDeviceToHost));
    int bad = got_ring != 1000 + left || bbad != 0;
    for (int i = 0; i < N; i++) bad += got[i] != (long)left * 1000000 + i;
    if (me == 0 && count != (unsigned long long)n * 4 * 128) {
        fprintf(stderr, "PE 0: counter %llu, expected %d\n", count, n * 4 * 128);
        bad++;
    }
    unsigned *bits_d, bits = 0;
    GPU_CHECK_CUDA(cudaMalloc(&bits_d, sizeof(unsigned)));
    same_gpu_bits<<<1, 1>>>(bits_d);
    GPU_CHECK_CUDA(cudaMemcpy(&bits, bits_d, sizeof(bits), cudaMemcpyDeviceToHost));
    printf("PE %d: PEs on this GPU (bit mask): 0x%x\n", me, bits);
    printf("PE %d: smoke %s (ring %d)\n", me, bad ? "FAILED" : "ok", got_ring);
    gshmem_finalize();
    return bad ? 1 : 0;
}
