/* A device wait that nobody satisfies must end its kernel after GSHMEM_TIMEOUT, and the
 * PE must say what it waited for, instead of hanging the job. run.sh runs this with
 * GSHMEM_TIMEOUT=2 once per MODE and expects the job to fail with both the line below,
 * which says the kernel ended after the timeout and not long after, and libgshmem's
 * report of the wait (printed at exit from what the trapped wait left in host memory).
 *
 * usage: expect_timeout signal|warp|wait|bigset|barrier
 *   signal   PE 0: gshmem_signal_wait_until(sig, GE, 7) on a word that stays 0
 *   warp     the same by all 32 lanes of a warp at once: one of them reports
 *   wait     PE 0: gshmem_int_wait_until_all over 4 ivars, of which ivar 2 stays 0
 *   bigset   PE 0: the same over 2^18 ivars, of which only the last stays 0: every pass
 *            reads them all (tens of ms), so a clock counted in passes rather than
 *            words read would start the clock 2048 passes late (minutes: with the
 *            previous headers the wait had not ended after 30 s on an H100)
 *   barrier  PE 0: gshmemx_barrier_all_block, which PE 1 never calls
 * The other PEs never touch the GPU after init; they sleep until PE 0 ends the job. */
#include "gpu_check.cuh"

#include <time.h>
#include <unistd.h>

__global__ void wait_signal(uint64_t *sig) { gshmem_signal_wait_until(sig, GSHMEM_CMP_GE, 7); }

#define BIGSET_IVARS (1 << 18)

__global__ void wait_all(int *ivars, size_t n) { gshmem_int_wait_until_all(ivars, n, NULL, GSHMEM_CMP_GE, 1); }

__global__ void barrier_block() { gshmemx_barrier_all_block(); }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    const char *timeout_env = getenv("GSHMEM_TIMEOUT");
    double timeout = timeout_env ? atof(timeout_env) : 0;
    gpu_test_init("expect_timeout");
    if (gshmem_n_pes() < 2) gpu_fail("expect_timeout needs at least 2 PEs");
    if (timeout < 1 || timeout > 30) gpu_fail("expect_timeout needs GSHMEM_TIMEOUT between 1 and 30 s");
    uint64_t *sig = (uint64_t *)gshmem_calloc(1, sizeof(uint64_t));
    int *ivars = (int *)gshmem_malloc(4 * sizeof(int)), *big = (int *)gshmem_malloc(BIGSET_IVARS * sizeof(int));
    GPU_CHECK(sig && ivars && big, "gshmem_calloc/malloc failed");
    const int init[4] = {1, 5, 0, 1}; /* ivar 2 never reaches 1 */
    GPU_CHECK_CUDA(cudaMemcpy(ivars, init, sizeof init, cudaMemcpyHostToDevice));
    static int big_init[BIGSET_IVARS];
    for (int i = 0; i < BIGSET_IVARS - 1; i++) big_init[i] = 1 + i % 7; /* the last stays 0 */
    GPU_CHECK_CUDA(cudaMemcpy(big, big_init, sizeof big_init, cudaMemcpyHostToDevice));
    gshmem_barrier_all();
    if (gshmem_my_pe() != 0) {
        sleep((unsigned)timeout + 60); /* PE 0's exit ends the job long before this */
        gpu_fail("PE 0 did not end the job within GSHMEM_TIMEOUT + 60 s");
    }
    double t0 = now_s();
    if (strcmp(mode, "signal") == 0)
        wait_signal<<<1, 1>>>(sig);
    else if (strcmp(mode, "warp") == 0)
        wait_signal<<<1, 32>>>(sig);
    else if (strcmp(mode, "wait") == 0)
        wait_all<<<1, 1>>>(ivars, 4);
    else if (strcmp(mode, "bigset") == 0)
        wait_all<<<1, 1>>>(big, BIGSET_IVARS);
    else if (strcmp(mode, "barrier") == 0)
        barrier_block<<<1, 128>>>();
    else
        gpu_fail("usage: expect_timeout signal|warp|wait|bigset|barrier (got \"%s\")", mode);
    GPU_CHECK_CUDA(cudaGetLastError());
    cudaError_t e = cudaDeviceSynchronize();
    double took = now_s() - t0;
    GPU_CHECK(e != cudaSuccess, "%s: the wait returned after %.1f s; it should have trapped", mode, took);
    /* about 1024 loads (bigset: up to three passes) after the timeout, plus the trap's
     * and the report's own time: 0.2 s or less on H100s and H200s */
    GPU_CHECK(took >= timeout - 0.05 && took < timeout + 10,
              "%s: the kernel ended after %.1f s, not soon after GSHMEM_TIMEOUT=%s (%s)", mode, took, timeout_env,
              cudaGetErrorString(e));
    printf("expect_timeout %s: PE 0: the kernel ended with \"%s\" after %.1f s (GSHMEM_TIMEOUT=%s), as expected\n",
           mode, cudaGetErrorString(e), took, timeout_env);
    fflush(stdout);
    exit(3); /* the context is gone: no finalize; libgshmem prints the report at exit, and
              * the launcher ends the other PEs */
}
