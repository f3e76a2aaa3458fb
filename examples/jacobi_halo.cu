/*
 * jacobi_halo: 1-D Jacobi iteration for u'' = 0 on a rod held at 1 on the left end
 * and 0 on the right, split evenly over the PEs. Each iteration a PE updates its
 * points, then hands its edge values to its neighbours from inside the kernel with
 * put-with-signal; before the next iteration it waits for the neighbours' edges.
 * The rod starts from a jagged profile (start_value), so every halo carries data that
 * matters from the first iteration on: a lost or late edge changes the answer. After
 * ITERS iterations every PE compares its part with the same computation done on the
 * host over the whole rod; both do the same double operations, so they must agree
 * exactly.
 *
 * Two copies of the grid (even and odd iterations) make the exchange safe: a
 * neighbour's edge for iteration k+1 arrives in the copy that iteration k+1 reads,
 * and it can only arrive after we have finished reading it in iteration k-1.
 *
 *   gshmemrun -n 4 ./jacobi_halo [POINTS_PER_PE] [ITERS]
 */
#include <gshmem.h>

#include <math.h>
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

#define LEFT_END 1.0
#define RIGHT_END 0.0

/*
 * One block per PE. grid holds two copies of local + 2 points: [0] is the left
 * halo, [1..local] this PE's points, [local + 1] the right halo. sigs[0] counts the
 * iterations whose left halo has arrived, sigs[1] the right.
 */
__global__ void jacobi(double *grid, uint64_t *sigs, int local, int iters)
{
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    int stride = local + 2;
    for (int k = 0; k < iters; k++) {
        const double *old = grid + (k % 2) * stride;
        double *next = grid + ((k + 1) % 2) * stride;
        for (int i = 1 + threadIdx.x; i <= local; i += blockDim.x) next[i] = 0.5 * (old[i - 1] + old[i + 1]);
        __syncthreads();
        if (threadIdx.x == 0) {
            uint64_t done = (uint64_t)k + 1;
            /* Our first point is the left neighbour's right halo, our last the right's left halo. */
            if (me > 0)
                gshmem_double_put_signal(&next[local + 1], &next[1], 1, &sigs[1], done, GSHMEM_SIGNAL_SET, me - 1);
            if (me < n - 1)
                gshmem_double_put_signal(&next[0], &next[local], 1, &sigs[0], done, GSHMEM_SIGNAL_SET, me + 1);
            if (me > 0) gshmem_signal_wait_until(&sigs[0], GSHMEM_CMP_GE, done);
            if (me < n - 1) gshmem_signal_wait_until(&sigs[1], GSHMEM_CMP_GE, done);
        }
        __syncthreads(); /* the halos thread 0 acquired are visible to the whole block */
    }
}

/* The starting value of the rod's point g (0-based): a jagged profile in [0, 1). */
static double start_value(long g)
{
    return (double)((g * 37 + 11) % 101) / 101.0;
}

/* The same iteration over the whole rod, on the host. */
static double *reference(int points, int iters)
{
    double *a = (double *)calloc((size_t)points + 2, sizeof(double)), *b = (double *)calloc((size_t)points + 2, sizeof(double));
    if (!a || !b) return NULL;
    a[0] = b[0] = LEFT_END;
    a[points + 1] = b[points + 1] = RIGHT_END;
    for (int i = 1; i <= points; i++) a[i] = start_value(i - 1);
    for (int k = 0; k < iters; k++) {
        for (int i = 1; i <= points; i++) b[i] = 0.5 * (a[i - 1] + a[i + 1]);
        double *t = a;
        a = b;
        b = t;
    }
    free(b);
    return a;
}

int main(int argc, char **argv)
{
    int local = argc > 1 ? atoi(argv[1]) : 4096;
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    int stride = local + 2;

    double *grid = (double *)gshmem_calloc(2 * (size_t)stride, sizeof(double));
    uint64_t *sigs = (uint64_t *)gshmem_calloc(2, sizeof(uint64_t));
    if (!grid || !sigs) gshmem_global_exit(1);
    /* Copy 0 (what iteration 0 reads): our points and, as halos, the neighbours' edge
     * points; the rod's ends are fixed halos that nobody writes, in both copies. */
    double *start = (double *)malloc((size_t)stride * sizeof(double));
    if (!start) gshmem_global_exit(1);
    for (int i = 0; i < stride; i++) start[i] = start_value((long)me * local + i - 1);
    double left_end = LEFT_END, right_end = RIGHT_END;
    if (me == 0) start[0] = left_end;
    if (me == n - 1) start[local + 1] = right_end;
    CHECK_CUDA(cudaMemcpy(grid, start, (size_t)stride * sizeof(double), cudaMemcpyHostToDevice));
    free(start);
    if (me == 0) CHECK_CUDA(cudaMemcpy(&grid[stride], &left_end, sizeof(double), cudaMemcpyHostToDevice));
    if (me == n - 1)
        CHECK_CUDA(cudaMemcpy(&grid[stride + local + 1], &right_end, sizeof(double), cudaMemcpyHostToDevice));
    gshmem_barrier_all();

    jacobi<<<1, 256>>>(grid, sigs, local, iters);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    double *mine = (double *)malloc((size_t)local * sizeof(double));
    double *ref = reference(n * local, iters);
    if (!mine || !ref) gshmem_global_exit(1);
    CHECK_CUDA(cudaMemcpy(mine, &grid[(iters % 2) * stride + 1], (size_t)local * sizeof(double),
                          cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int i = 0; i < local; i++) worst = fmax(worst, fabs(mine[i] - ref[1 + me * local + i]));
    int ok = worst == 0;
    printf("PE %d of %d: points %d..%d after %d iterations, max difference from the host %.3g (%s)\n", me, n,
           me * local, (me + 1) * local - 1, iters, worst, ok ? "ok" : "WRONG");

    free(ref);
    free(mine);
    gshmem_barrier_all();
    gshmem_free(sigs);
    gshmem_free(grid);
    gshmem_finalize();
    return ok ? 0 : 1;
}
