/* Helpers shared by the GPU tests: CUDA error checks, failure reports that name the PE,
 * data patterns that mix PE, index and a salt, and a device-side error log that
 * kernels append to and the host prints after the kernel. Any failure ends the whole
 * job through gshmem_global_exit(1), so one remote run tells what went wrong. */
#ifndef GSHMEM_TESTS_GPU_CHECK_CUH
#define GSHMEM_TESTS_GPU_CHECK_CUH

#include <gshmem.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Destinations are filled with this byte before each phase; a write that should not
 * happen shows as a changed byte, a write that should happen as a byte still 0xA5. */
#define GPU_POISON 0xA5

/* Ends the job with a message naming this PE. */
static inline void gpu_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL PE %d: ", gshmem_my_pe());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    gshmem_global_exit(1);
}

#define GPU_CHECK_CUDA(call)                                                                        \
    do {                                                                                            \
        cudaError_t gpu_e_ = (call);                                                                \
        if (gpu_e_ != cudaSuccess) gpu_fail("%s:%d: %s: %s", __FILE__, __LINE__, #call,              \
                                            cudaGetErrorString(gpu_e_));                            \
    } while (0)

/* Checks a kernel launch and waits for it. */
#define GPU_CHECK_KERNEL()                                                                          \
    do {                                                                                            \
        GPU_CHECK_CUDA(cudaGetLastError());                                                         \
        GPU_CHECK_CUDA(cudaDeviceSynchronize());                                                    \
    } while (0)

#define GPU_CHECK(cond, ...)                                                                        \
    do {                                                                                            \
        if (!(cond)) gpu_fail(__VA_ARGS__);                                                         \
    } while (0)

/* gshmem_init, then insists on the device heap: every GPU test is about it. */
static inline void gpu_test_init(const char *name)
{
    gshmem_init();
    const char *kind = gshmemx_heap_kind();
    if (strcmp(kind, "device") != 0)
        gpu_fail("%s needs the device heap, got \"%s\" (no usable GPU, or GSHMEM_HEAP set?)", name, kind);
    if (gshmem_my_pe() == 0) printf("%s: %d PEs, device heap\n", name, gshmem_n_pes());
}

static inline void gpu_test_pass(const char *name)
{
    gshmem_barrier_all();
    if (gshmem_my_pe() == 0) printf("%s: PASS\n", name);
    fflush(stdout);
    gshmem_finalize();
}

/* ---- Patterns ----------------------------------------------------------------------- */

/* A well-mixed 64-bit value of (pe, index, salt); the same on host and device. */
__host__ __device__ inline uint64_t gpu_mix(uint64_t pe, uint64_t idx, uint64_t salt)
{
    uint64_t x = (pe + 1) * 0x9E3779B97F4A7C15ull ^ (idx + 0x632BE59BD9B4E019ull) * 0xD1B54A32D192ED03ull ^
                 salt * 0x8CB92BA72F3D8DD7ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x;
}

/* A byte of the pattern that is never the poison byte. */
__host__ __device__ inline uint8_t gpu_pat8(int pe, size_t idx, unsigned salt)
{
    uint8_t b = (uint8_t)(gpu_mix((uint64_t)pe, idx, salt) >> 24);
    return b == GPU_POISON ? (uint8_t)0x5A : b;
}

/* Element patterns per type: integers take the mixed bits (never all-poison), floating
 * types an exactly representable integer, so values survive any register move. */
struct gpu_u128 {
    uint64_t lo, hi;
};

__host__ __device__ inline void gpu_pat_make(signed char *v, uint64_t h) { *v = (signed char)(h & 0x7f); }
__host__ __device__ inline void gpu_pat_make(char *v, uint64_t h) { *v = (char)(h & 0x7f); }
__host__ __device__ inline void gpu_pat_make(uint8_t *v, uint64_t h)
{
    *v = (uint8_t)h == GPU_POISON ? (uint8_t)0x5A : (uint8_t)h;
}
__host__ __device__ inline void gpu_pat_make(short *v, uint64_t h) { *v = (short)(h & 0x7fff); }
__host__ __device__ inline void gpu_pat_make(uint16_t *v, uint64_t h) { *v = (uint16_t)(h & 0x7fff); }
__host__ __device__ inline void gpu_pat_make(int *v, uint64_t h) { *v = (int)(h & 0x7fffffff); }
__host__ __device__ inline void gpu_pat_make(uint32_t *v, uint64_t h) { *v = (uint32_t)(h & 0x7fffffff); }
__host__ __device__ inline void gpu_pat_make(long *v, uint64_t h) { *v = (long)(h >> 1); }
__host__ __device__ inline void gpu_pat_make(long long *v, uint64_t h) { *v = (long long)(h >> 1); }
__host__ __device__ inline void gpu_pat_make(unsigned long *v, uint64_t h) { *v = (unsigned long)(h >> 1); }
__host__ __device__ inline void gpu_pat_make(unsigned long long *v, uint64_t h) { *v = h >> 1; }
__host__ __device__ inline void gpu_pat_make(float *v, uint64_t h) { *v = (float)(h & 0xffffff); }
__host__ __device__ inline void gpu_pat_make(double *v, uint64_t h) { *v = (double)(h & 0xfffffffffffffull); }
__host__ __device__ inline void gpu_pat_make(gpu_u128 *v, uint64_t h)
{
    v->lo = h >> 1;
    v->hi = ~h >> 1;
}

template <typename T> __host__ __device__ inline T gpu_pat(int pe, size_t idx, unsigned salt)
{
    T v;
    gpu_pat_make(&v, gpu_mix((uint64_t)pe, idx, salt));
    return v;
}

/* The first 8 bytes of a value, for printing any element as hex. */
template <typename T> inline unsigned long long gpu_bits(const T &v)
{
    unsigned long long b = 0;
    memcpy(&b, &v, sizeof(T) < sizeof(b) ? sizeof(T) : sizeof(b));
    return b;
}

/* ---- Host-side comparison ---------------------------------------------------------- */

/* Compares n bytes; prints up to 8 mismatches with their index and returns how many
 * differ. what names the region (test, variant, peer). */
static inline size_t gpu_cmp_bytes(const char *what, const uint8_t *got, const uint8_t *expect, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (got[i] == expect[i]) continue;
        if (bad < 8)
            fprintf(stderr, "PE %d: %s: byte %zu: expected 0x%02x, got 0x%02x%s\n", gshmem_my_pe(), what, i,
                    expect[i], got[i], got[i] == GPU_POISON ? " (poison: not written)" : "");
        bad++;
    }
    if (bad) fprintf(stderr, "PE %d: %s: %zu of %zu bytes wrong\n", gshmem_my_pe(), what, bad, n);
    return bad;
}

/* Compares n elements of esize bytes; prints up to 8 wrong elements (index, expected
 * and got as hex of their first 8 bytes) and returns how many differ. */
static inline size_t gpu_cmp_elems(const char *what, const void *got, const void *expect, size_t esize, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *g = (const uint8_t *)got + i * esize, *e = (const uint8_t *)expect + i * esize;
        if (memcmp(g, e, esize) == 0) continue;
        if (bad < 8) {
            unsigned long long gv = 0, ev = 0;
            memcpy(&gv, g, esize < 8 ? esize : 8);
            memcpy(&ev, e, esize < 8 ? esize : 8);
            int poisoned = 1;
            for (size_t k = 0; k < esize; k++) poisoned &= g[k] == GPU_POISON;
            int untouched = 1;
            for (size_t k = 0; k < esize; k++) untouched &= e[k] == GPU_POISON;
            fprintf(stderr, "PE %d: %s: element %zu: expected 0x%llx%s, got 0x%llx%s\n", gshmem_my_pe(), what, i, ev,
                    untouched ? " (poison: must stay unwritten)" : "", gv, poisoned ? " (poison: not written)" : "");
        }
        bad++;
    }
    if (bad) fprintf(stderr, "PE %d: %s: %zu of %zu elements wrong\n", gshmem_my_pe(), what, bad, n);
    return bad;
}

/* Copies a device region to a fresh host buffer (caller frees). */
static inline void *gpu_fetch(const void *dev, size_t n)
{
    void *h = malloc(n ? n : 1);
    GPU_CHECK(h != NULL, "out of host memory (%zu bytes)", n);
    GPU_CHECK_CUDA(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
    return h;
}

static inline void gpu_poison(void *dev, size_t n)
{
    GPU_CHECK_CUDA(cudaMemset(dev, GPU_POISON, n));
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
}

/* ---- Device-side error log -------------------------------------------------------- */

#define GPU_LOG_RECORDS 16

struct gpu_log_record {
    int line;       /* source line of the check */
    int pe;         /* PE that found it */
    int peer;       /* the other PE involved, or -1 */
    int block;
    int thread;
    int what;       /* test-specific: round, variant, step */
    long long idx;  /* element index */
    unsigned long long expect, got;
};

struct gpu_log {
    unsigned long long count;
    struct gpu_log_record rec[GPU_LOG_RECORDS];
};

/* Appends one failure; only the first GPU_LOG_RECORDS are kept, all are counted. */
__device__ inline void gpu_log_fail(gpu_log *log, int line, int peer, int what, long long idx,
                                    unsigned long long expect, unsigned long long got)
{
    unsigned long long slot = atomicAdd(&log->count, 1ull);
    if (slot >= GPU_LOG_RECORDS) return;
    gpu_log_record *r = &log->rec[slot];
    r->line = line;
    r->pe = gshmem_my_pe();
    r->peer = peer;
    r->block = (int)blockIdx.x;
    r->thread = (int)threadIdx.x;
    r->what = what;
    r->idx = idx;
    r->expect = expect;
    r->got = got;
}

/* In a kernel: when got != expect, logs them (as up to 64 bits) and evaluates to 1. */
#define GPU_DCHECK(log, peer, what, idx, expect, got)                                               \
    gpu_dcheck_((log), __LINE__, (peer), (what), (long long)(idx), (expect), (got))

template <typename T>
__device__ inline int gpu_dcheck_(gpu_log *log, int line, int peer, int what, long long idx, T expect, T got)
{
    unsigned long long e = 0, g = 0;
    const unsigned char *pe = (const unsigned char *)&expect, *pg = (const unsigned char *)&got;
    bool same = true;
    for (unsigned i = 0; i < sizeof(T); i++) same = same && pe[i] == pg[i];
    if (same) return 0;
    memcpy(&e, &expect, sizeof(T) < 8 ? sizeof(T) : 8);
    memcpy(&g, &got, sizeof(T) < 8 ? sizeof(T) : 8);
    gpu_log_fail(log, line, peer, what, idx, e, g);
    return 1;
}

static inline gpu_log *gpu_log_new(void)
{
    gpu_log *log;
    GPU_CHECK_CUDA(cudaMalloc(&log, sizeof(*log)));
    GPU_CHECK_CUDA(cudaMemset(log, 0, sizeof(*log)));
    return log;
}

/* After the kernel: prints every kept record and ends the job when any were logged.
 * what names the kernel or phase; file is the test's source for the line numbers. */
static inline void gpu_log_check(gpu_log *log, const char *what, const char *file)
{
    gpu_log h;
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
    GPU_CHECK_CUDA(cudaMemcpy(&h, log, sizeof(h), cudaMemcpyDeviceToHost));
    if (h.count == 0) return;
    unsigned long long kept = h.count < GPU_LOG_RECORDS ? h.count : GPU_LOG_RECORDS;
    for (unsigned long long i = 0; i < kept; i++) {
        const gpu_log_record *r = &h.rec[i];
        fprintf(stderr,
                "PE %d: %s: %s:%d: peer %d, block %d thread %d, what %d, index %lld: expected 0x%llx (%lld), "
                "got 0x%llx (%lld)\n",
                r->pe, what, file, r->line, r->peer, r->block, r->thread, r->what, r->idx, r->expect,
                (long long)r->expect, r->got, (long long)r->got);
    }
    gpu_fail("%s: %llu device-side check(s) failed", what, h.count);
}

/* Spins for about `cycles` GPU clock cycles. */
__device__ inline void gpu_spin(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

#endif
