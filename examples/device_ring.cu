/*
 * device_ring: a token travels LAPS times around the ring of PEs, handed on from
 * inside a CUDA kernel. Each hop adds one to the token and sends it to the right
 * neighbour with a put-with-signal; the receiver waits on the signal only, and the
 * signal is released after the data, so the token is there when the signal is.
 *
 *   gshmemrun -n 4 ./device_ring [LAPS]
 *
 * Several PEs on one GPU: start CUDA MPS first (see the README), otherwise every
 * hand-off waits for the GPU to switch processes.
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

/* One thread per PE. PE 0 starts each lap; the others forward what they receive.
 * *last gets the token value this PE saw last. */
__global__ void ring(long *token, uint64_t *arrivals, int laps, long *last)
{
    int me = gshmem_my_pe(), n = gshmem_n_pes(), right = (me + 1) % n;
    long value = 0;
    for (int lap = 1; lap <= laps; lap++) {
        if (me == 0) {
            long next = value + 1;
            gshmem_long_put_signal(token, &next, 1, arrivals, 1, GSHMEM_SIGNAL_ADD, right);
        }
        gshmem_signal_wait_until(arrivals, GSHMEM_CMP_GE, (uint64_t)lap);
        value = *(volatile long *)token;
        if (me != 0) {
            long next = value + 1;
            gshmem_long_put_signal(token, &next, 1, arrivals, 1, GSHMEM_SIGNAL_ADD, right);
        }
    }
    *last = value;
}

int main(int argc, char **argv)
{
    int laps = argc > 1 ? atoi(argv[1]) : 100;
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes();

    /* Symmetric objects live in GPU memory (the device heap): kernels use them directly. */
    long *token = (long *)gshmem_calloc(1, sizeof(long));
    uint64_t *arrivals = (uint64_t *)gshmem_calloc(1, sizeof(uint64_t));
    long *last;
    CHECK_CUDA(cudaMalloc(&last, sizeof(long)));
    if (!token || !arrivals) gshmem_global_exit(1);

    ring<<<1, 1>>>(token, arrivals, laps, last);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    /* PE k sees (lap - 1) * n + k on each lap; PE 0 sees the full lap, lap * n. */
    long got, expected = me == 0 ? (long)laps * n : (long)(laps - 1) * n + me;
    CHECK_CUDA(cudaMemcpy(&got, last, sizeof(long), cudaMemcpyDeviceToHost));
    int ok = got == expected;
    printf("PE %d of %d: token %ld after %d laps (%s)\n", me, n, got, laps, ok ? "ok" : "WRONG");

    gshmem_barrier_all();
    CHECK_CUDA(cudaFree(last));
    gshmem_free(arrivals);
    gshmem_free(token);
    gshmem_finalize();
    return ok ? 0 : 1;
}
