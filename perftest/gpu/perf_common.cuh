/*
 * Helpers shared by the device perftests (gshmem and NVSHMEM builds alike): error
 * checks, option parsing, statistics, in-kernel clocks, data patterns and checks.
 * Include after the API header (gshmem_api.cuh or nvshmem_api.cuh).
 */
#ifndef GPERF_PERF_COMMON_CUH
#define GPERF_PERF_COMMON_CUH

#include "../perf_host.h"

#include <limits.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK_CUDA(call)                                                                                \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            fprintf(stderr, "%s perftest: %s:%d: %s: %s\n", PERF_LIB, __FILE__, __LINE__, #call,         \
                    cudaGetErrorString(e_));                                                            \
            SHM(global_exit)(1);                                                                        \
        }                                                                                               \
    } while (0)
/* After a launch: the launch error, then (synchronizing) the kernel's own. */
#define CHECK_LAUNCH()                                                                                  \
    do {                                                                                                \
        CHECK_CUDA(cudaGetLastError());                                                                 \
        CHECK_CUDA(cudaDeviceSynchronize());                                                            \
    } while (0)

static inline double perf_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct perf_stats {
    double min, avg, p50, p99;
};

static int perf_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* min/p50/p99 of n samples (sorted in place), each times `scale`; avg is given (it comes
 * from the kernel's total time, which is exact). */
static inline struct perf_stats perf_summarize(double *samples, long n, double avg, double scale)
{
    struct perf_stats s = {0, avg * scale, 0, 0};
    if (n <= 0) return s;
    qsort(samples, (size_t)n, sizeof *samples, perf_cmp_double);
    s.min = samples[0] * scale;
    s.p50 = samples[n / 2] * scale;
    s.p99 = samples[(long)((double)(n - 1) * 0.99)] * scale;
    return s;
}

/* ---- In-kernel clocks: %globaltimer (ns, shared by every SM) for the total, clock64
 * (cycles of this SM) for each iteration; the ratio of the two over the timed loop turns
 * cycles into ns. */
struct perf_clock {
    unsigned long long ns;     /* globaltimer over the timed iterations */
    unsigned long long cycles; /* clock64 over the same */
};

__device__ __forceinline__ unsigned long long perf_globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

__device__ __forceinline__ unsigned long long perf_clock64(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}

/* Per-iteration samples in us from cycle stamps (deltas) and the clock calibration. */
static inline double perf_samples_us(const unsigned long long *deltas, long n, const struct perf_clock *c,
                                     double *out)
{
    double us_per_cycle = c->cycles ? (double)c->ns / (double)c->cycles / 1e3 : 0;
    for (long i = 0; i < n; i++) out[i] = (double)deltas[i] * us_per_cycle;
    return n > 0 ? (double)c->ns / 1e3 / (double)n : 0; /* average, us */
}

/* ---- Data patterns: 8-byte words, cheap to make and check on the device. */
__host__ __device__ __forceinline__ uint64_t perf_word(size_t k, uint64_t salt)
{
    return ((uint64_t)k + 1) * 0x9e3779b97f4a7c15ull ^ salt;
}

__global__ void perf_fill_kernel(uint64_t *buf, size_t words, uint64_t salt)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < words; k += (size_t)gridDim.x * blockDim.x)
        buf[k] = perf_word(k, salt);
}

/* Adds to *wrong the number of bytes of buf that differ from the pattern. */
__global__ void perf_check_kernel(const uint64_t *buf, size_t words, uint64_t salt, unsigned long long *wrong)
{
    unsigned long long bad = 0;
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < words; k += (size_t)gridDim.x * blockDim.x) {
        uint64_t x = buf[k] ^ perf_word(k, salt);
        for (; x; x >>= 8) bad += (x & 0xff) != 0;
    }
    for (int d = 16; d > 0; d /= 2) bad += __shfl_down_sync(0xffffffffu, bad, d);
    if ((threadIdx.x & 31) == 0 && bad) atomicAdd(wrong, bad);
}

static inline void perf_fill(void *buf, size_t bytes, uint64_t salt)
{
    perf_fill_kernel<<<1024, 256>>>((uint64_t *)buf, bytes / 8, salt);
    CHECK_LAUNCH();
}

/* Bytes of buf (a multiple of 8 long) that differ from the pattern; scratch: one device word. */
static inline long perf_check(const void *buf, size_t bytes, uint64_t salt, unsigned long long *scratch)
{
    unsigned long long wrong = 0;
    CHECK_CUDA(cudaMemset(scratch, 0, sizeof wrong));
    perf_check_kernel<<<1024, 256>>>((const uint64_t *)buf, bytes / 8, salt, scratch);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaMemcpy(&wrong, scratch, sizeof wrong, cudaMemcpyDeviceToHost));
    return (long)wrong;
}

/* ---- Small values between PEs: a one-thread kernel stores into pe's symmetric slot;
 * the reader looks at its own slot after cudaDeviceSynchronize and a barrier. */
__global__ void perf_send_ll_kernel(long long *slot, long long v, int pe) { SHM(longlong_p)(slot, v, pe); }
__global__ void perf_send_double_kernel(double *slot, double v, int pe) { SHM(double_p)(slot, v, pe); }

static inline void perf_send_ll(long long *slot, long long v, int pe)
{
    perf_send_ll_kernel<<<1, 1>>>(slot, v, pe);
    CHECK_LAUNCH();
}
static inline void perf_send_double(double *slot, double v, int pe)
{
    perf_send_double_kernel<<<1, 1>>>(slot, v, pe);
    CHECK_LAUNCH();
}
static inline long long perf_read_ll(const long long *slot)
{
    long long v;
    CHECK_CUDA(cudaMemcpy(&v, slot, sizeof v, cudaMemcpyDeviceToHost));
    return v;
}
static inline double perf_read_double(const double *slot)
{
    double v;
    CHECK_CUDA(cudaMemcpy(&v, slot, sizeof v, cudaMemcpyDeviceToHost));
    return v;
}

#endif
