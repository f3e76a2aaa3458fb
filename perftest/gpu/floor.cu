/*
 * gshmem-perf-gpu-floor: what the hardware and driver cost without gshmem, to place
 * gshmem's figures against a floor measured the same day on the same GPU.
 *   - context creation (cudaFree(0) from a fresh process; run it as an MPS client to
 *     see the MPS cost),
 *   - a ping-pong between two blocks of one kernel through global memory, with the
 *     orderings a put_signal can use: plain flag, acquire polling, data then a
 *     release-store flag (GPU and system scope), data then fence then flag; then
 *     1024-thread blocks, with 8 bytes and with 4 KiB (8 warps, 16 bytes a thread, a
 *     named barrier among them), the shapes of a block put_signal.
 * Half round trips, averaged over ITERS rounds in one kernel.
 * With --ipc the two sides are two processes (fork before CUDA starts; the memory is
 * shared with cudaIpcGetMemHandle), as two PEs on one GPU are; run it under MPS so both
 * kernels run at once.
 * usage: gshmem-perf-gpu-floor [--ipc] [ITERS]
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum {
    MODE_VOLATILE,
    MODE_ACQUIRE_POLL,
    MODE_RELEASE_GPU,
    MODE_RELEASE_SYS,
    MODE_FENCE_SC_GPU,
    MODE_LOADED_RELEASE_GPU,
    MODE_BLOCK_RELEASE_GPU,
    MODE_BLOCK_4K_RELEASE_GPU,
    MODE_COUNT
};
static const char *const mode_names[MODE_COUNT] = {
    "flag: volatile store, volatile poll", "flag: volatile store, ld.acquire.sys poll",
    "data + st.release.gpu flag, acquire poll", "data + st.release.sys flag, acquire poll",
    "data + fence.sc.gpu + volatile flag, acquire poll",
    "data loaded from memory + st.release.gpu flag",
    "1024-thread block: poll, __syncthreads, as above",
    "1024-thread block, 4 KiB: 8 warps move 16 B a thread"};

#define FLOOR_WORDS 4096 /* flags at 0 and 32, 8-byte data at 64.., sources at 128.., 4 KiB data at 1024.. */
#define BLOCK_THREADS(mode) ((mode) >= MODE_BLOCK_RELEASE_GPU ? 1024 : 32)

__device__ __forceinline__ unsigned long long poll_acquire(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.acquire.sys.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void send(int mode, unsigned long long *data, unsigned long long *flag, unsigned long long v,
                                     const unsigned long long *src)
{
    /* A put reads its source from memory: the load is on the critical path too. */
    if (mode >= MODE_LOADED_RELEASE_GPU) *(volatile unsigned long long *)data = *(const volatile unsigned long long *)src + v;
    else if (mode >= MODE_RELEASE_GPU) *(volatile unsigned long long *)data = v;
    switch (mode) {
    case MODE_BLOCK_RELEASE_GPU:
    case MODE_LOADED_RELEASE_GPU:
    case MODE_RELEASE_GPU: asm volatile("st.release.gpu.global.b64 [%0], %1;" ::"l"(flag), "l"(v) : "memory"); break;
    case MODE_RELEASE_SYS: asm volatile("st.release.sys.global.b64 [%0], %1;" ::"l"(flag), "l"(v) : "memory"); break;
    case MODE_FENCE_SC_GPU:
        asm volatile("fence.sc.gpu;" ::: "memory");
        *(volatile unsigned long long *)flag = v;
        break;
    default: *(volatile unsigned long long *)flag = v;
    }
}

__device__ __forceinline__ void wait_for(int mode, unsigned long long *flag, unsigned long long v)
{
    if (mode == MODE_VOLATILE)
        while (*(volatile unsigned long long *)flag < v) {
        }
    else
        while (poll_acquire(flag) < v) {
        }
}

/* 4 KiB: the first 8 warps load 16 bytes each, store them, meet on a named barrier,
 * then thread 0 releases the flag (the shape of a block put_signal of 4 KiB). */
__device__ __forceinline__ void send_4k(unsigned long long *data, unsigned long long *flag, unsigned long long v,
                                        const unsigned long long *src)
{
    unsigned t = threadIdx.x;
    if (t >= 256) return;
    uint4 w;
    asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
                 : "l"((const uint4 *)src + t)
                 : "memory");
    w.x += (unsigned)v;
    ((uint4 *)data)[t] = w;
    asm volatile("bar.sync 1, 256;" ::: "memory");
    if (t == 0) asm volatile("st.release.gpu.global.b64 [%0], %1;" ::"l"(flag), "l"(v) : "memory");
}

__device__ __forceinline__ void block_pingpong(int mode, unsigned long long *words, long iters, unsigned long long *ns,
                                               int side)
{
    int me = side >= 0 ? side : (int)blockIdx.x;
    const bool big = mode == MODE_BLOCK_4K_RELEASE_GPU;
    unsigned long long *my_flag = words + 32 * me, *peer_flag = words + 32 * (1 - me);
    unsigned long long *peer_data = big ? words + 1024 + 512 * (1 - me) : words + 64 + 32 * (1 - me);
    const unsigned long long *src = big ? words + 2048 + 512 * me : words + 128 + 32 * me;
    unsigned long long t0 = 0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (long i = 1; i <= iters; i++) {
        if (me == 1) {
            if (threadIdx.x == 0) wait_for(MODE_BLOCK_RELEASE_GPU, my_flag, (unsigned long long)i);
            __syncthreads();
        }
        if (big)
            send_4k(peer_data, peer_flag, (unsigned long long)i, src);
        else if (threadIdx.x == 0)
            send(MODE_BLOCK_RELEASE_GPU, peer_data, peer_flag, (unsigned long long)i, src);
        __syncthreads();
        if (me == 0) {
            if (threadIdx.x == 0) wait_for(MODE_BLOCK_RELEASE_GPU, my_flag, (unsigned long long)i);
            __syncthreads();
        }
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (me == 0 && threadIdx.x == 0) *ns = t1 - t0;
}

/* Block 0 and block 1 bounce a counter (or, with side >= 0, this kernel's one block
 * plays that side); each side owns the flag it waits on. In the block mode every thread
 * of the block takes part, as in a block-scope put_signal and its wait. */
__global__ void pingpong(int mode, unsigned long long *words, long iters, unsigned long long *ns, int side)
{
    if (mode >= MODE_BLOCK_RELEASE_GPU) {
        block_pingpong(mode, words, iters, ns, side);
        return;
    }
    if (threadIdx.x != 0) return;
    int me = side >= 0 ? side : (int)blockIdx.x;
    unsigned long long *my_flag = words + 32 * me, *peer_flag = words + 32 * (1 - me);
    unsigned long long *peer_data = words + 64 + 32 * (1 - me);
    unsigned long long t0 = 0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (long i = 1; i <= iters; i++) {
        if (me == 0) {
            send(mode, peer_data, peer_flag, (unsigned long long)i, words + 128 + 32 * me);
            wait_for(mode, my_flag, (unsigned long long)i);
        } else {
            wait_for(mode, my_flag, (unsigned long long)i);
            send(mode, peer_data, peer_flag, (unsigned long long)i, words + 128 + 32 * me);
        }
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (me == 0) *ns = t1 - t0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Two processes: the parent allocates and plays side 0, the child opens the memory
 * through CUDA IPC and plays side 1; one round of every mode. */
static int floor_ipc(long iters)
{
    int to_child[2], to_parent[2];
    if (pipe(to_child) != 0 || pipe(to_parent) != 0) return 1;
    pid_t pid = fork();
    int side = pid == 0 ? 1 : 0;
    unsigned long long *words = NULL, *ns, host_ns = 0;
    cudaIpcMemHandle_t handle;
    if (side == 0) {
        cudaMalloc(&words, FLOOR_WORDS * sizeof(unsigned long long));
        cudaIpcGetMemHandle(&handle, words);
        if (write(to_child[1], &handle, sizeof(handle)) != (ssize_t)sizeof(handle)) return 1;
    } else {
        if (read(to_child[0], &handle, sizeof(handle)) != (ssize_t)sizeof(handle)) return 1;
        if (cudaIpcOpenMemHandle((void **)&words, handle, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) return 1;
    }
    cudaMalloc(&ns, sizeof(unsigned long long));
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        char go = 1;
        if (side == 0) { /* clear, then let the child start; both kernels spin until the other answers */
            cudaMemset(words, 0, FLOOR_WORDS * sizeof(unsigned long long));
            cudaDeviceSynchronize();
            if (write(to_child[1], &go, 1) != 1) return 1;
        } else if (read(to_child[0], &go, 1) != 1) {
            return 1;
        }
        pingpong<<<1, BLOCK_THREADS(mode)>>>(mode, words, iters, ns, side);
        cudaError_t err = cudaDeviceSynchronize();
        if (err != cudaSuccess) {
            fprintf(stderr, "gshmem-perf-gpu-floor: side %d: %s\n", side, cudaGetErrorString(err));
            return 1;
        }
        if (side == 1) {
            if (write(to_parent[1], &go, 1) != 1) return 1;
            continue;
        }
        if (read(to_parent[0], &go, 1) != 1) return 1;
        cudaMemcpy(&host_ns, ns, sizeof(host_ns), cudaMemcpyDeviceToHost);
        printf("two processes: %-52s half-RTT %.3f us\n", mode_names[mode], (double)host_ns / 1e3 / (double)iters / 2.0);
    }
    if (side == 1) _exit(0);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* ITERS: a whole number from 1 up, or the program ends with status 2. */
static long floor_iters(const char *text)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < 1 || v > (1L << 40)) {
        fprintf(stderr, "ITERS '%s' is not a whole number from 1 to %ld\n", text, 1L << 40);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--ipc") == 0) return floor_ipc(argc > 2 ? floor_iters(argv[2]) : 20000);
    long iters = argc > 1 ? floor_iters(argv[1]) : 20000;
    double t0 = now_ms();
    if (cudaFree(0) != cudaSuccess) {
        fprintf(stderr, "gshmem-perf-gpu-floor: no usable GPU\n");
        return 1;
    }
    printf("context creation (cudaFree(0) in a fresh process): %.1f ms\n", now_ms() - t0);
    unsigned long long *words, *ns, host_ns;
    cudaMalloc(&words, FLOOR_WORDS * sizeof(unsigned long long));
    cudaMalloc(&ns, sizeof(unsigned long long));
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        cudaMemset(words, 0, FLOOR_WORDS * sizeof(unsigned long long));
        pingpong<<<2, BLOCK_THREADS(mode)>>>(mode, words, iters, ns, -1);
        cudaError_t err = cudaDeviceSynchronize();
        cudaMemcpy(&host_ns, ns, sizeof(host_ns), cudaMemcpyDeviceToHost);
        if (err != cudaSuccess) {
            fprintf(stderr, "gshmem-perf-gpu-floor: %s\n", cudaGetErrorString(err));
            return 1;
        }
        printf("%-52s half-RTT %.3f us\n", mode_names[mode], (double)host_ns / 1e3 / (double)iters / 2.0);
    }
    return 0;
}
