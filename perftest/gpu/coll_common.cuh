/*
 * How the collective device perftests (alltoall.cu, coll.cu; gshmem and NVSHMEM builds
 * alike) time a call. Include after perf_common.cuh.
 *
 * A test describes its call as a struct coll_op: prepare the buffers for round `iter`
 * (COLL_ITER_TIMING: the data the timed calls run on), enqueue one call on a stream
 * (the host's _on_stream form), launch one kernel making `iters` calls (the device
 * form; NULL when the test has none), and count wrong results after a round.
 *
 *   stream  after warmup and a barrier: `iters` calls back to back between two events
 *           (the mean), then `iters` more with an event between every two (per-call
 *           samples, for p50/p99)
 *   kernel  one kernel makes `iters` calls; thread 0 stamps each (clock64, calibrated
 *           against %globaltimer, whose total over the calls gives the mean)
 *   check   without --check, one more round on fresh data, checked; with --check every
 *           round is: barrier, fresh data, barrier, one call (a kernel of one call),
 *           its time, its check
 */
#ifndef GPERF_COLL_COMMON_CUH
#define GPERF_COLL_COMMON_CUH

#include "../perf_coll.h"

#define COLL_ITER_TIMING (-1L)

struct coll_op {
    void *arg;
    void (*prepare)(void *arg, long iter); /* returns with the device idle */
    void (*enqueue)(void *arg, cudaStream_t s);
    void (*kernel)(void *arg, cudaStream_t s, long iters, unsigned long long *stamps, struct perf_clock *clk);
    long (*wrong)(void *arg, long iter);
};

enum coll_api { COLL_STREAM, COLL_KERNEL };

struct coll_ctx {
    int me, n, check;
    long max_iters;
    cudaStream_t stream;
    cudaEvent_t *ev;                /* max_iters + 1 */
    double *samples;                /* host, max_iters */
    unsigned long long *deltas;     /* host, max_iters */
    unsigned long long *stamps;     /* device, max_iters */
    struct perf_clock *clk;         /* device */
    double *stats;                  /* symmetric: [pe][PERF_PE_STATS_DOUBLES], read on PE 0 */
    unsigned long long *dwrong;     /* device scratch for the tests' checks */
};

static void coll_barrier(void)
{
    CHECK_CUDA(cudaDeviceSynchronize());
    SHM(barrier_all)();
}

/* ---- Kernel side of the kernel variant: thread 0 keeps the time. The first
 * COLL_SHARED_STAMPS stamps stay in shared memory until the end (a global store in the
 * loop would sit in front of the next call's fence and be timed with it); later ones
 * go to global memory. A kernel declares COLL_TIMER_DECL() and passes sh_stamps. */
#define COLL_SHARED_STAMPS 2048
#define COLL_TIMER_DECL() __shared__ unsigned long long sh_stamps[COLL_SHARED_STAMPS]

struct coll_timer {
    unsigned long long g0, c0, prev;
    unsigned long long *sh;
};

__device__ __forceinline__ void coll_timer_start(struct coll_timer *t, unsigned long long *sh)
{
    t->sh = sh;
    t->g0 = perf_globaltimer();
    t->c0 = t->prev = perf_clock64();
}

__device__ __forceinline__ void coll_timer_stamp(struct coll_timer *t, long i, unsigned long long *stamps)
{
    unsigned long long now = perf_clock64();
    if (i < COLL_SHARED_STAMPS)
        t->sh[i] = now - t->prev;
    else
        stamps[i] = now - t->prev;
    t->prev = now;
}

__device__ __forceinline__ void coll_timer_end(const struct coll_timer *t, long iters, unsigned long long *stamps,
                                               struct perf_clock *clk)
{
    clk->ns = perf_globaltimer() - t->g0;
    clk->cycles = t->prev - t->c0;
    for (long i = 0; i < iters && i < COLL_SHARED_STAMPS; i++) stamps[i] = t->sh[i];
}

/* ---- Host side. */
static void coll_ctx_init(struct coll_ctx *c, long max_iters, int check)
{
    memset(c, 0, sizeof *c);
    c->me = SHM(my_pe)();
    c->n = SHM(n_pes)();
    c->check = check;
    c->max_iters = max_iters;
    c->stats = (double *)SHM(calloc)((size_t)c->n * PERF_PE_STATS_DOUBLES, sizeof(double));
    c->ev = (cudaEvent_t *)malloc(sizeof(cudaEvent_t) * (size_t)(max_iters + 1));
    c->samples = (double *)malloc(sizeof(double) * (size_t)max_iters);
    c->deltas = (unsigned long long *)malloc(sizeof(unsigned long long) * (size_t)max_iters);
    if (!c->stats || !c->ev || !c->samples || !c->deltas) {
        fprintf(stderr, "%s perftest: PE %d: out of memory for %ld iterations\n", PERF_LIB, c->me, max_iters);
        SHM(global_exit)(1);
    }
    for (long i = 0; i <= max_iters; i++) CHECK_CUDA(cudaEventCreate(&c->ev[i]));
    CHECK_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaMalloc((void **)&c->stamps, sizeof(unsigned long long) * (size_t)max_iters));
    CHECK_CUDA(cudaMalloc((void **)&c->clk, sizeof(struct perf_clock)));
    CHECK_CUDA(cudaMalloc((void **)&c->dwrong, sizeof(unsigned long long)));
}

static void coll_ctx_fini(struct coll_ctx *c)
{
    coll_barrier();
    CHECK_CUDA(cudaFree(c->dwrong));
    CHECK_CUDA(cudaFree(c->clk));
    CHECK_CUDA(cudaFree(c->stamps));
    CHECK_CUDA(cudaStreamDestroy(c->stream));
    for (long i = 0; i <= c->max_iters; i++) CHECK_CUDA(cudaEventDestroy(c->ev[i]));
    free(c->deltas);
    free(c->samples);
    free(c->ev);
    SHM(free)(c->stats);
}

/* Threads for a one-block kernel: as requested, or fewer (whole warps) when the kernel's
 * registers do not allow that many; said once on stderr. */
template <typename K> static int coll_block_threads(K kernel, int want)
{
    cudaFuncAttributes fa;
    CHECK_CUDA(cudaFuncGetAttributes(&fa, kernel));
    int got = want <= fa.maxThreadsPerBlock ? want : fa.maxThreadsPerBlock / 32 * 32;
    static int said;
    if (got != want && !said++)
        fprintf(stderr, "%s perftest: %d threads per block instead of %d (the kernel's limit)\n", PERF_LIB, got, want);
    return got;
}

static double coll_event_us(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    return (double)ms * 1e3;
}

/* iters calls back to back; the mean time per call in us, and per-call samples when
 * samples is not NULL. */
static double coll_run(struct coll_ctx *c, const struct coll_op *op, enum coll_api api, long iters, double *samples)
{
    if (api == COLL_KERNEL) {
        op->kernel(op->arg, c->stream, iters, c->stamps, c->clk);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaStreamSynchronize(c->stream));
        struct perf_clock clk;
        CHECK_CUDA(cudaMemcpy(&clk, c->clk, sizeof clk, cudaMemcpyDeviceToHost));
        if (samples) {
            CHECK_CUDA(cudaMemcpy(c->deltas, c->stamps, sizeof *c->deltas * (size_t)iters, cudaMemcpyDeviceToHost));
            perf_samples_us(c->deltas, iters, &clk, samples);
        }
        return (double)clk.ns / 1e3 / (double)iters;
    }
    CHECK_CUDA(cudaEventRecord(c->ev[0], c->stream));
    for (long i = 0; i < iters; i++) {
        op->enqueue(op->arg, c->stream);
        if (samples || i == iters - 1) CHECK_CUDA(cudaEventRecord(c->ev[samples ? i + 1 : 1], c->stream));
    }
    CHECK_CUDA(cudaStreamSynchronize(c->stream));
    for (long i = 0; samples && i < iters; i++) samples[i] = coll_event_us(c->ev[i], c->ev[i + 1]);
    return coll_event_us(c->ev[0], c->ev[samples ? iters : 1]) / (double)iters;
}

/* One call on fresh data: every PE is done with the previous round before anyone
 * prepares, and done preparing before anyone calls. Its time in us; *wrong += its count. */
static double coll_checked_round(struct coll_ctx *c, const struct coll_op *op, enum coll_api api, long iter,
                                 long *wrong)
{
    coll_barrier();
    op->prepare(op->arg, iter);
    coll_barrier();
    double us = coll_run(c, op, api, 1, NULL);
    *wrong += op->wrong(op->arg, iter);
    return us;
}

/* This PE's statistics of one measurement. Collective. */
static struct perf_pe_stats coll_measure(struct coll_ctx *c, const struct coll_op *op, enum coll_api api,
                                         long warmup, long iters)
{
    long wrong = 0;
    double mean = -1;
    if (c->check) {
        for (long i = 0; i < warmup; i++) coll_checked_round(c, op, api, iters + 1 + i, &wrong);
        for (long i = 0; i < iters; i++) c->samples[i] = coll_checked_round(c, op, api, i, &wrong);
    } else {
        coll_barrier();
        op->prepare(op->arg, COLL_ITER_TIMING);
        coll_barrier();
        if (warmup > 0) coll_run(c, op, api, warmup, NULL);
        coll_barrier();
        if (api == COLL_STREAM) {
            mean = coll_run(c, op, api, iters, NULL);
            coll_barrier();
            coll_run(c, op, api, iters, c->samples);
        } else {
            mean = coll_run(c, op, api, iters, c->samples);
        }
        coll_checked_round(c, op, api, iters, &wrong);
    }
    return perf_pe_summarize(c->samples, iters, mean, wrong);
}

__global__ void coll_send_stats_kernel(double *slot, struct perf_pe_stats s, int pe)
{
    SHM(double_p)(slot + 0, s.mean_us, pe);
    SHM(double_p)(slot + 1, s.p50_us, pe);
    SHM(double_p)(slot + 2, s.p99_us, pe);
    SHM(double_p)(slot + 3, s.wrong, pe);
}

/* The figures over every PE, on PE 0 (valid = 0 elsewhere). Collective. */
static struct perf_result coll_gather(struct coll_ctx *c, struct perf_pe_stats mine, double bytes, double bus_factor)
{
    struct perf_result r;
    memset(&r, 0, sizeof r);
    coll_send_stats_kernel<<<1, 1>>>(c->stats + (size_t)c->me * PERF_PE_STATS_DOUBLES, mine, 0);
    CHECK_LAUNCH();
    coll_barrier();
    if (c->me == 0) {
        struct perf_pe_stats *all = (struct perf_pe_stats *)malloc(sizeof *all * (size_t)c->n);
        if (!all) {
            fprintf(stderr, "%s perftest: out of host memory\n", PERF_LIB);
            SHM(global_exit)(1);
        }
        CHECK_CUDA(cudaMemcpy(all, c->stats, sizeof *all * (size_t)c->n, cudaMemcpyDeviceToHost));
        r = perf_combine(all, c->n, bytes, bus_factor);
        free(all);
    }
    coll_barrier();
    return r;
}

/* Iterations for a call moving `bytes` per PE: at most max_iters and about target
 * bytes in all, at least 5. */
static long coll_iters_for(long max_iters, size_t target, size_t bytes)
{
    size_t cap = bytes ? target / bytes : (size_t)max_iters;
    if (cap < 5) cap = 5;
    return (size_t)max_iters < cap ? max_iters : (long)cap;
}

static void coll_check_rc(int rc, const char *call, size_t size, int me)
{
    if (rc == 0) return;
    fprintf(stderr, "%s perftest: PE %d: %s (%zu bytes) returned %d\n", PERF_LIB, me, call, size, rc);
    SHM(global_exit)(1);
}

/* A device counter's value, read and reset to 0. */
static long coll_take_count(unsigned long long *d)
{
    unsigned long long v = 0;
    CHECK_CUDA(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemset(d, 0, sizeof v));
    return (long)v;
}

#endif
