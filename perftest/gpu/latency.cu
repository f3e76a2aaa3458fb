/*
 * gshmem-perf-gpu-latency: latency of the device API between 2 PEs (node-local GPUs, or
 * 2 PEs on one GPU under MPS). Every test is one kernel that runs all its iterations.
 *
 *   p           PE 0 does gshmem_int_p of the round number to PE 1 and waits
 *               (gshmem_int_wait_until) for PE 1's answer, which is the same call back
 *   put_signal  gshmem_putmem_signal (thread), gshmemx_putmem_signal_warp (one warp) and
 *               gshmemx_putmem_signal_block (one block of -T threads), SET of the round
 *               number; the other side waits with gshmem_signal_wait_until and answers
 *               the same way; sizes -b .. -e (x2)
 *   put_quiet   PE 0, one thread: gshmem_putmem of -b bytes from a private device buffer
 *               to PE 1, then gshmem_quiet; per op, the put's completion as the GPU sees
 *               it (on the proxy path: request, proxy, transport, completion, back)
 *   put_quiet_idle  the same, but the thread first idles --idle us (default 2000) before
 *               each round, long enough for the proxy thread to go to sleep; minus
 *               put_quiet, the proxy's wake-up cost (idle spans left out of every figure;
 *               at most 200 rounds; not in the default list)
 *   g, getmem   PE 0 reads 8 bytes of PE 1's array with gshmem_long_g / gshmem_getmem;
 *               each read's address comes from the previous value (a dependent chain)
 *   fetch_add   PE 0: dependent chain of gshmem_uint64_atomic_fetch_add on PE 1 (each
 *               operand depends on the previous result)
 *
 * The header also gives the time to initialize (gshmem_init, max over the PEs).
 * Ping-pongs report half the round trip (half-RTT); chains report one operation
 * (per-op). avg is the kernel's %globaltimer time over the timed iterations / iterations
 * (exact); min/p50/p99 come from per-iteration clock64 stamps calibrated against it,
 * kept for the first 4096 timed iterations only (shared memory; see PERF_STAMPS_MAX):
 * with more iterations the percentiles describe that first part, avg the whole run.
 * When the PEs do not map each other's heaps (GSHMEM_DISABLE_P2P=1, or another node),
 * every call goes through the proxy, and the raw scopes, which need the mapping, are
 * skipped. Proxy round trips:
 *   GSHMEM_DISABLE_P2P=1 gshmemrun -n 2 gshmem-perf-gpu-latency -t p,put_quiet,fetch_add
 * put_signal takes as many iterations as fit in --budget ms (at least 10, at most -i),
 * measured by a 2-round probe. #wrong: bytes (or values) that differ from what the
 * peer sent, both PEs together; 0 expected.
 *
 * usage: gshmemrun -n 2 gshmem-perf-gpu-latency [-w WARMUP] [-i ITERS] [-b MIN] [-e MAX]
 *            [-T THREADS] [-t TESTS] [-s SCOPES] [--budget MS] [--idle US] [--csv]
 *
 * The same source builds the NVSHMEM version (perftest/nvshmem/, GPERF_NVSHMEM).
 */
#ifdef GPERF_NVSHMEM
#include "nvshmem_api.cuh"
#else
#include "gshmem_api.cuh"
#endif
#include "perf_common.cuh"

#include <getopt.h>

#define CHAIN_LEN 64 /* g/getmem: the chain visits all 64 entries (5j + c mod 64, c odd) */

/* raw (only with -s raw, 8 B): not the library's call but the plain-CUDA floor's
 * ordering (perftest/gpu/floor.cu: an 8-byte load and store, then st.release.gpu of the
 * signal) on the library's heap through gshmem_ptr addresses, to tell the cost of the
 * memory and mapping from the cost of the call path.
 * rawblock (only with -s rawblock; 16 B .. 16 -T bytes, multiples of 16): the same for
 * the block: no library call, but the fewest instructions a block's put_signal of that
 * size can take in this kernel: the first ceil(words / 32) warps move one 16-byte word
 * a thread through peer addresses taken from gshmem_ptr once before the loop, meet at a
 * named barrier, and thread 0 does st.release.gpu of the signal (so same-GPU or
 * NVLink-coherent peers only, as raw). Compare it with -s block of the same -T. */
enum scope { SC_THREAD, SC_WARP, SC_BLOCK, SC_RAW, SC_RAWBLOCK };
static const char *const scope_names[] = {"thread", "warp", "block", "raw", "rawblock"};

struct options {
    long warmup, iters;
    size_t min_size, max_size;
    int threads, csv;
    double budget_ms;
    const char *tests, *scopes;
    double idle_us;
};

/* Symmetric objects and private device buffers. */
static int g_me, g_peer;
static int *g_flag;          /* p: ping-pong counter */
static uint64_t *g_sig;      /* put_signal: signal word */
static unsigned char *g_buf; /* put_signal: destination */
static long *g_chain;        /* g/getmem: the chain PE 0 follows on PE 1 */
static uint64_t *g_counter;  /* fetch_add target */
static long long *g_slots;   /* [0] #wrong from PE 1, [1] rounds, [2] warmup, [3] mapped */
static double *g_init_ms;    /* [pe]: each PE's init time, on PE 0 */
static unsigned char *g_src; /* private: put_signal source; put_quiet: two sources of -b bytes */
static unsigned long long *g_stamps, *g_dwrong;
static struct perf_clock *g_clock;

__host__ __device__ __forceinline__ long chain_next(long j, int pe) { return (5 * j + 1 + 2 * pe) % CHAIN_LEN; }
static uint64_t sig_salt(int pe, size_t size) { return 0x5157u + (uint64_t)pe * 0x100000001ull + size * 977; }

/* ---- Kernels. One thread keeps the clocks (thread 0; in put_signal, the group's last
 * thread, off the sending warp): stamps[i] is iteration i's cycles, for the
 * first PERF_STAMPS_MAX iterations. They are kept in shared memory until the end: a
 * global store per round would sit in front of the next release and be timed too. */
#define PERF_STAMPS_MAX 4096
#define TIMED_DECL() __shared__ unsigned long long sh_stamps[PERF_STAMPS_MAX]
#define TIMED_START()                                                   \
    do {                                                                \
        g0 = perf_globaltimer();                                        \
        c0 = prev = perf_clock64();                                     \
    } while (0)
#define TIMED_STAMP(k)                                                  \
    do {                                                                \
        unsigned long long t_ = perf_clock64();                         \
        if ((k) < PERF_STAMPS_MAX) sh_stamps[k] = t_ - prev;            \
        prev = t_;                                                      \
    } while (0)
#define TIMED_END()                                                     \
    do {                                                                \
        clk->ns = perf_globaltimer() - g0;                              \
        clk->cycles = prev - c0;                                        \
        for (long k_ = 0; k_ < iters && k_ < PERF_STAMPS_MAX; k_++)     \
            stamps[k_] = sh_stamps[k_];                                 \
    } while (0)

__global__ void p_pingpong(int *flag, int me, int peer, long warmup, long iters, unsigned long long *stamps,
                           struct perf_clock *clk)
{
    TIMED_DECL();
    unsigned long long g0 = 0, c0 = 0, prev = 0;
    long total = warmup + iters;
    for (long i = 1; i <= total; i++) {
        if (i == warmup + 1) TIMED_START();
        if (me == 0) {
            SHM(int_p)(flag, (int)i, peer);
            SHM(int_wait_until)(flag, PERF_CMP_GE, (int)i);
        } else {
            SHM(int_wait_until)(flag, PERF_CMP_GE, (int)i);
            SHM(int_p)(flag, (int)i, peer);
        }
        if (i > warmup) TIMED_STAMP(i - warmup - 1);
    }
    TIMED_END();
}

template <int S>
__device__ __forceinline__ void ps_send(unsigned char *buf, const unsigned char *src, size_t size, uint64_t *sig,
                                        long round, int peer)
{
    if (S == SC_RAW) {
        unsigned long long *pb = (unsigned long long *)SHM(ptr)(buf, peer), *ps = (unsigned long long *)SHM(ptr)(sig, peer);
        *(volatile unsigned long long *)pb = *(const volatile unsigned long long *)src;
        asm volatile("st.release.gpu.global.b64 [%0], %1;" ::"l"(ps), "l"((unsigned long long)round) : "memory");
    } else if (S == SC_THREAD)
        SHM(putmem_signal)(buf, src, size, sig, (uint64_t)round, PERF_SIGNAL_SET, peer);
    else if (S == SC_WARP)
        SHMX(putmem_signal_warp)(buf, src, size, sig, (uint64_t)round, PERF_SIGNAL_SET, peer);
    else
        SHMX(putmem_signal_block)(buf, src, size, sig, (uint64_t)round, PERF_SIGNAL_SET, peer);
}

/* rawblock's send: peer addresses come from the caller (taken before the loop). */
__device__ __forceinline__ void ps_send_rawblock(uint4 *peer_buf, unsigned long long *peer_sig, const uint4 *src,
                                                 size_t size, long round)
{
    const unsigned t = threadIdx.x, words = (unsigned)(size / 16), part = (words + 31) & ~31u;
    if (t < part) {
        if (t < words) {
            uint4 w;
            asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                         : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
                         : "l"(src + t)
                         : "memory");
            peer_buf[t] = w;
        }
        asm volatile("bar.sync 1, %0;" ::"r"(part) : "memory");
        if (t == 0) asm volatile("st.release.gpu.global.b64 [%0], %1;" ::"l"(peer_sig), "l"((unsigned long long)round) : "memory");
    }
    __syncthreads(); /* nobody goes on before the source is read */
}

/* One thread waits; the group goes on together. */
template <int S> __device__ __forceinline__ void ps_wait(uint64_t *sig, long round)
{
    if (threadIdx.x == 0) SHM(signal_wait_until)(sig, PERF_CMP_GE, (uint64_t)round);
    if (S == SC_WARP) __syncwarp();
    if (S == SC_BLOCK || S == SC_RAWBLOCK) __syncthreads();
}

template <int S>
__global__ void __launch_bounds__(1024)
    ps_pingpong(unsigned char *buf, const unsigned char *src, size_t size, uint64_t *sig, int me, int peer, long warmup,
                long iters, unsigned long long *stamps, struct perf_clock *clk)
{
    TIMED_DECL();
    unsigned long long g0 = 0, c0 = 0, prev = 0;
    /* The group's last thread keeps the clocks: in a block, a warp that neither waits nor
     * sends (the clock reads and stores would otherwise sit on the latency path, in the
     * warp that sends); every round ends with the whole group meeting, so it sees the
     * same rounds. */
    const bool stamper = threadIdx.x == blockDim.x - 1;
    uint4 *peer_buf = S == SC_RAWBLOCK ? (uint4 *)SHM(ptr)(buf, peer) : NULL;
    unsigned long long *peer_sig = S == SC_RAWBLOCK ? (unsigned long long *)SHM(ptr)(sig, peer) : NULL;
    long total = warmup + iters;
    for (long i = 1; i <= total; i++) {
        if (stamper && i == warmup + 1) TIMED_START();
        if (S == SC_RAWBLOCK) {
            if (me == 0) {
                ps_send_rawblock(peer_buf, peer_sig, (const uint4 *)src, size, i);
                ps_wait<S>(sig, i);
            } else {
                ps_wait<S>(sig, i);
                ps_send_rawblock(peer_buf, peer_sig, (const uint4 *)src, size, i);
            }
        } else if (me == 0) {
            ps_send<S>(buf, src, size, sig, i, peer);
            ps_wait<S>(sig, i);
        } else {
            ps_wait<S>(sig, i);
            ps_send<S>(buf, src, size, sig, i, peer);
        }
        if (stamper && i > warmup) TIMED_STAMP(i - warmup - 1);
    }
    if (stamper) TIMED_END();
}

template <int GETMEM>
__global__ void get_chain(const long *chain, int peer, long warmup, long iters, unsigned long long *stamps,
                        struct perf_clock *clk, unsigned long long *wrong)
{
    TIMED_DECL();
    unsigned long long g0 = 0, c0 = 0, prev = 0, bad = 0;
    long idx = 0, total = warmup + iters;
    for (long i = 0; i < total; i++) {
        if (i == warmup) TIMED_START();
        long v;
        if (GETMEM)
            SHM(getmem)(&v, chain + idx, sizeof v, peer);
        else
            v = SHM(long_g)(chain + idx, peer);
        bad += v != chain_next(idx, peer);
        idx = v & (CHAIN_LEN - 1); /* the next address depends on this value */
        if (i >= warmup) TIMED_STAMP(i - warmup);
    }
    TIMED_END();
    *wrong = bad;
}

__global__ void fadd_chain(uint64_t *counter, int peer, long warmup, long iters, unsigned long long *stamps,
                           struct perf_clock *clk, unsigned long long *wrong)
{
    TIMED_DECL();
    unsigned long long g0 = 0, c0 = 0, prev = 0, bad = 0;
    uint64_t expect = 0, add = 1;
    long total = warmup + iters;
    for (long i = 0; i < total; i++) {
        if (i == warmup) TIMED_START();
        uint64_t old = SHM(uint64_atomic_fetch_add)(counter, add, peer);
        bad += old != expect;
        expect += add;
        add = (old & 1) + 1; /* the next operand depends on the fetched value */
        if (i >= warmup) TIMED_STAMP(i - warmup);
    }
    TIMED_END();
    bad += SHM(uint64_atomic_fetch)(counter, peer) != expect;
    *wrong = bad;
}

/* Each put writes one of the two sources, by parity: the last one tells PE 1 which
 * to expect. */
__global__ void put_quiet_chain(unsigned char *buf, const unsigned char *src, size_t size, int peer, long warmup,
                                long iters, unsigned long long *stamps, struct perf_clock *clk)
{
    TIMED_DECL();
    unsigned long long g0 = 0, c0 = 0, prev = 0;
    long total = warmup + iters;
    for (long i = 0; i < total; i++) {
        if (i == warmup) TIMED_START();
        SHM(putmem)(buf, src + (size_t)(i & 1) * size, size, peer);
        SHM(quiet)();
        if (i >= warmup) TIMED_STAMP(i - warmup);
    }
    TIMED_END();
}

/* put_quiet after the GPU thread idled idle_ns (the proxy thread has gone to sleep by
 * then): the idle spans are left out of the stamps and of the kernel time. */
__global__ void put_quiet_idle_chain(unsigned char *buf, const unsigned char *src, size_t size, int peer, long warmup,
                                     long iters, unsigned long long idle_ns, unsigned long long *stamps,
                                     struct perf_clock *clk)
{
    TIMED_DECL();
    unsigned long long g0 = 0, c0 = 0, prev = 0, skip_ns = 0, skip_cycles = 0;
    long total = warmup + iters;
    for (long i = 0; i < total; i++) {
        if (i == warmup) TIMED_START();
        unsigned long long ga = perf_globaltimer(), ca = perf_clock64();
        while (perf_globaltimer() - ga < idle_ns) {
        }
        if (i >= warmup) {
            unsigned long long cb = perf_clock64();
            skip_ns += perf_globaltimer() - ga;
            skip_cycles += cb - ca;
            prev += cb - ca;
        }
        SHM(putmem)(buf, src + (size_t)(i & 1) * size, size, peer);
        SHM(quiet)();
        if (i >= warmup) TIMED_STAMP(i - warmup);
    }
    TIMED_END();
    clk->ns -= skip_ns;
    clk->cycles -= skip_cycles;
}

/* ---- Host side. */
static void barrier(void)
{
    CHECK_CUDA(cudaDeviceSynchronize());
    SHM(barrier_all)();
}

/* Sum of both PEs' counts, on PE 0 (0 elsewhere). Collective. */
static long gather_wrong(long mine)
{
    barrier();
    if (g_me == 1) perf_send_ll(&g_slots[0], mine, 0);
    barrier();
    long total = g_me == 0 ? mine + (long)perf_read_ll(&g_slots[0]) : 0;
    barrier();
    return total;
}

/* PE 0 decides, PE 1 learns (rounds and warmup of the next run). Collective. */
static void share_counts(long *rounds, long *warmup)
{
    barrier();
    if (g_me == 0) {
        perf_send_ll(&g_slots[1], *rounds, 1);
        perf_send_ll(&g_slots[2], *warmup, 1);
    }
    barrier();
    if (g_me == 1) {
        *rounds = (long)perf_read_ll(&g_slots[1]);
        *warmup = (long)perf_read_ll(&g_slots[2]);
    }
    barrier();
}

static struct perf_stats timed_stats(long iters, double scale, double *samples)
{
    struct perf_clock clk;
    CHECK_CUDA(cudaMemcpy(&clk, g_clock, sizeof clk, cudaMemcpyDeviceToHost));
    long n = iters < PERF_STAMPS_MAX ? iters : PERF_STAMPS_MAX; /* stamped iterations */
    unsigned long long *deltas = (unsigned long long *)malloc(sizeof *deltas * (size_t)n);
    if (!deltas) {
        fprintf(stderr, "%s perftest: out of host memory\n", PERF_LIB);
        SHM(global_exit)(1);
    }
    CHECK_CUDA(cudaMemcpy(deltas, g_stamps, sizeof *deltas * (size_t)n, cudaMemcpyDeviceToHost));
    perf_samples_us(deltas, n, &clk, samples);
    double avg = iters > 0 ? (double)clk.ns / 1e3 / (double)iters : 0; /* every iteration, from globaltimer */
    free(deltas);
    return perf_summarize(samples, n, avg, scale);
}

static void print_row(const struct options *o, const char *test, size_t size, const char *scope, long iters,
                      const char *measure, struct perf_stats s, long wrong)
{
    if (o->csv)
        printf("%s,%zu,%s,%ld,%s,%.3f,%.3f,%.3f,%.3f,%ld\n", test, size, scope, iters, measure, s.min, s.avg, s.p50,
               s.p99, wrong);
    else
        printf("%-10s %9zu %-8s %7ld %-8s %9.3f %9.3f %9.3f %9.3f %7ld\n", test, size, scope, iters, measure, s.min,
               s.avg, s.p50, s.p99, wrong);
    fflush(stdout);
}

static void test_p(const struct options *o, double *samples, long *wrong_total)
{
    barrier();
    CHECK_CUDA(cudaMemset(g_flag, 0, sizeof *g_flag));
    barrier();
    p_pingpong<<<1, 1>>>(g_flag, g_me, g_peer, o->warmup, o->iters, g_stamps, g_clock);
    CHECK_LAUNCH();
    barrier();
    int flag = 0;
    CHECK_CUDA(cudaMemcpy(&flag, g_flag, sizeof flag, cudaMemcpyDeviceToHost));
    long wrong = gather_wrong(flag != (int)(o->warmup + o->iters));
    if (g_me == 0) print_row(o, "p", sizeof(int), "thread", o->iters, "half-RTT", timed_stats(o->iters, 0.5, samples), wrong);
    *wrong_total += wrong;
}

static void launch_ps(int sc, const struct options *o, size_t size, long warmup, long iters)
{
    switch (sc) {
    case SC_THREAD:
        ps_pingpong<SC_THREAD><<<1, 1>>>(g_buf, g_src, size, g_sig, g_me, g_peer, warmup, iters, g_stamps, g_clock);
        break;
    case SC_RAW:
        ps_pingpong<SC_RAW><<<1, 1>>>(g_buf, g_src, size, g_sig, g_me, g_peer, warmup, iters, g_stamps, g_clock);
        break;

    case SC_WARP:
        ps_pingpong<SC_WARP><<<1, 32>>>(g_buf, g_src, size, g_sig, g_me, g_peer, warmup, iters, g_stamps, g_clock);
        break;
    case SC_RAWBLOCK:
        ps_pingpong<SC_RAWBLOCK><<<1, o->threads>>>(g_buf, g_src, size, g_sig, g_me, g_peer, warmup, iters, g_stamps,
                                                     g_clock);
        break;
    default:
        ps_pingpong<SC_BLOCK><<<1, o->threads>>>(g_buf, g_src, size, g_sig, g_me, g_peer, warmup, iters, g_stamps,
                                                  g_clock);
        break;
    }
    CHECK_LAUNCH();
}

static void test_put_signal(const struct options *o, int sc, size_t size, double *samples, long *wrong_total)
{
    barrier();
    perf_fill(g_src, size, sig_salt(g_me, size));
    CHECK_CUDA(cudaMemset(g_sig, 0, sizeof *g_sig));
    barrier();
    /* probe: 2 rounds, to fit the run in the time budget */
    launch_ps(sc, o, size, 0, 2);
    long rounds = o->iters, warmup = o->warmup;
    if (g_me == 0) {
        struct perf_clock clk;
        CHECK_CUDA(cudaMemcpy(&clk, g_clock, sizeof clk, cudaMemcpyDeviceToHost));
        double round_ms = (double)clk.ns / 2 / 1e6;
        if (round_ms > 0 && o->budget_ms / round_ms < (double)rounds) rounds = (long)(o->budget_ms / round_ms);
        if (rounds < 10) rounds = 10;
        if (rounds > o->iters) rounds = o->iters;
        if (warmup > rounds / 10) warmup = rounds / 10 > 0 ? rounds / 10 : 1;
    }
    share_counts(&rounds, &warmup);
    CHECK_CUDA(cudaMemset(g_sig, 0, sizeof *g_sig));
    CHECK_CUDA(cudaMemset(g_buf, 0xa5, size)); /* poison */
    barrier();
    launch_ps(sc, o, size, warmup, rounds);
    barrier();
    uint64_t sig = 0;
    CHECK_CUDA(cudaMemcpy(&sig, g_sig, sizeof sig, cudaMemcpyDeviceToHost));
    long mine = perf_check(g_buf, size, sig_salt(g_peer, size), g_dwrong) + (sig != (uint64_t)(warmup + rounds));
    long wrong = gather_wrong(mine);
    if (g_me == 0)
        print_row(o, "put_signal", size, scope_names[sc], rounds, "half-RTT", timed_stats(rounds, 0.5, samples),
                  wrong);
    *wrong_total += wrong;
}

static void test_chain(const struct options *o, const char *name, double *samples, long *wrong_total)
{
    int fadd = !strcmp(name, "fetch_add"), getmem = !strcmp(name, "getmem");
    barrier();
    CHECK_CUDA(cudaMemset(g_counter, 0, sizeof *g_counter));
    CHECK_CUDA(cudaMemset(g_dwrong, 0, sizeof *g_dwrong));
    barrier();
    long mine = 0;
    if (g_me == 0) {
        if (fadd)
            fadd_chain<<<1, 1>>>(g_counter, g_peer, o->warmup, o->iters, g_stamps, g_clock, g_dwrong);
        else if (getmem)
            get_chain<1><<<1, 1>>>(g_chain, g_peer, o->warmup, o->iters, g_stamps, g_clock, g_dwrong);
        else
            get_chain<0><<<1, 1>>>(g_chain, g_peer, o->warmup, o->iters, g_stamps, g_clock, g_dwrong);
        CHECK_LAUNCH();
        unsigned long long w = 0;
        CHECK_CUDA(cudaMemcpy(&w, g_dwrong, sizeof w, cudaMemcpyDeviceToHost));
        mine = (long)w;
    }
    long wrong = gather_wrong(mine);
    if (g_me == 0) print_row(o, name, 8, "thread", o->iters, "per-op", timed_stats(o->iters, 1.0, samples), wrong);
    *wrong_total += wrong;
}

static uint64_t pq_salt(long half, size_t size) { return 0x9017u + (uint64_t)half * 0x10001ull + size * 131; }

static void test_put_quiet(const struct options *o, double *samples, long *wrong_total, int idle)
{
    size_t size = o->min_size;
    /* idle: a few hundred rounds are enough, each costs the idle time on top */
    long warmup = idle ? 5 : o->warmup, iters = idle && o->iters > 200 ? 200 : o->iters;
    long last = (warmup + iters - 1) & 1; /* the source of the last put */
    barrier();
    if (g_me == 0) {
        perf_fill(g_src, size, pq_salt(0, size));
        perf_fill(g_src + size, size, pq_salt(1, size));
    } else {
        CHECK_CUDA(cudaMemset(g_buf, 0xa5, size)); /* poison */
    }
    barrier();
    if (g_me == 0) {
        if (idle)
            put_quiet_idle_chain<<<1, 1>>>(g_buf, g_src, size, g_peer, warmup, iters,
                                           (unsigned long long)(o->idle_us * 1e3), g_stamps, g_clock);
        else
            put_quiet_chain<<<1, 1>>>(g_buf, g_src, size, g_peer, warmup, iters, g_stamps, g_clock);
        CHECK_LAUNCH();
    }
    barrier();
    long mine = g_me == 1 ? perf_check(g_buf, size, pq_salt(last, size), g_dwrong) : 0;
    long wrong = gather_wrong(mine);
    if (g_me == 0)
        print_row(o, idle ? "put_quiet_idle" : "put_quiet", size, "thread", iters, "per-op",
                  timed_stats(iters, 1.0, samples), wrong);
    *wrong_total += wrong;
}

/* Whether each PE maps the other's heap (else every call goes through the proxy), on
 * both PEs. Collective. */
static int both_mapped(void)
{
    long long mapped = SHM(ptr)(g_buf, g_peer) != NULL;
    barrier();
    if (g_me == 1) perf_send_ll(&g_slots[3], mapped, 0);
    barrier();
    if (g_me == 0) {
        mapped = mapped && perf_read_ll(&g_slots[3]);
        perf_send_ll(&g_slots[3], mapped, 1);
    }
    barrier();
    if (g_me == 1) mapped = perf_read_ll(&g_slots[3]);
    barrier();
    return (int)mapped;
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: gshmemrun -n 2 %s [options]\n"
            "  -w N         warmup iterations (default 1000; put_signal: at most a tenth of its iterations)\n"
            "  -i N         timed iterations (default 10000; put_signal: at most)\n"
            "  -b SIZE      smallest put_signal size, a multiple of 8; the put_quiet size (default 8)\n"
            "  -e SIZE      largest put_signal size (default 1M)\n"
            "  -T N         threads of the block for put_signal block (default 1024)\n"
            "  -t LIST      tests: p,put_signal,put_quiet,put_quiet_idle,g,getmem,fetch_add (default all but\n"
            "               put_quiet_idle; 'init' alone: header\n"
            "               only)\n"
            "  -s LIST      put_signal scopes: thread,warp,block (default all); raw: the floor ordering on the heap, 8 B;\n"
            "               rawblock: the block's floor, 16 B .. 16 -T bytes (not the library's call)\n"
            "  --budget MS  put_signal: timed milliseconds per row (default 50)\n"
            "  --idle US    put_quiet_idle: idle time before each round (default 2000)\n"
            "  --csv        comma-separated output\n",
            prog);
}

int main(int argc, char **argv)
{
    struct options o = {1000, 10000, 8, (size_t)1 << 20, 1024, 0, 50.0, "p,put_signal,put_quiet,g,getmem,fetch_add",
                        "thread,warp,block", 2000.0};
    static const struct option longopts[] = {{"csv", no_argument, NULL, 'c'},
                                             {"budget", required_argument, NULL, 'm'},
                                             {"idle", required_argument, NULL, 'I'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "w:i:b:e:T:t:s:ch", longopts, NULL)) != -1) {
        switch (c) {
        case 'w': o.warmup = perf_parse_long("-w", optarg, 0, LONG_MAX); break;
        case 'i': o.iters = perf_parse_long("-i", optarg, 1, LONG_MAX); break;
        case 'b': o.min_size = perf_parse_size(optarg); break;
        case 'e': o.max_size = perf_parse_size(optarg); break;
        case 'T': o.threads = perf_parse_long("-T", optarg, 1, 1024); break;
        case 't': o.tests = optarg; perf_check_list("-t", optarg, "p,put_signal,put_quiet,put_quiet_idle,g,getmem,fetch_add,init"); break;
        case 's': o.scopes = optarg; perf_check_list("-s", optarg, "thread,warp,block,raw,rawblock"); break;
        case 'm': o.budget_ms = perf_parse_double("--budget", optarg, 1e-3, 1e9); break;
        case 'I': o.idle_us = perf_parse_double("--idle", optarg, 0, 1e7); break;
        case 'c': o.csv = 1; break;
        default: usage(argv[0]); return c == 'h' ? 0 : 2;
        }
    }
    if (o.iters < 10 || o.warmup < 0 || o.min_size < 8 || o.min_size % 8 || o.max_size < o.min_size ||
        o.threads < 1 || o.threads > 1024 || o.budget_ms <= 0 || o.iters > 0x7fffffffL - o.warmup) {
        usage(argv[0]);
        return 2;
    }

    double init_ms = 0;
    perf_init(&init_ms);
    g_me = SHM(my_pe)();
    if (SHM(n_pes)() != 2) {
        if (g_me == 0) fprintf(stderr, "%s-perf-gpu-latency needs exactly 2 PEs (got %d)\n", PERF_LIB, SHM(n_pes)());
        SHM(finalize)();
        return 2;
    }
    g_peer = 1 - g_me;
    g_flag = (int *)SHM(calloc)(1, sizeof(int));
    g_sig = (uint64_t *)SHM(calloc)(1, sizeof(uint64_t));
    g_buf = (unsigned char *)SHM(malloc)(o.max_size);
    g_chain = (long *)SHM(malloc)(CHAIN_LEN * sizeof(long));
    g_counter = (uint64_t *)SHM(calloc)(1, sizeof(uint64_t));
    g_slots = (long long *)SHM(calloc)(4, sizeof(long long));
    g_init_ms = (double *)SHM(calloc)(2, sizeof(double));
    double *samples = (double *)malloc(sizeof(double) * (size_t)o.iters);
    if (!g_flag || !g_sig || !g_buf || !g_chain || !g_counter || !g_slots || !g_init_ms || !samples) {
        fprintf(stderr, "%s-perf-gpu-latency: PE %d: allocation failed (max size %zu)\n", PERF_LIB, g_me, o.max_size);
        SHM(global_exit)(1);
    }
    CHECK_CUDA(cudaMalloc((void **)&g_src, 2 * o.max_size));
    CHECK_CUDA(cudaMalloc((void **)&g_stamps, sizeof(unsigned long long) * (size_t)o.iters));
    CHECK_CUDA(cudaMalloc((void **)&g_dwrong, sizeof(unsigned long long)));
    CHECK_CUDA(cudaMalloc((void **)&g_clock, sizeof(struct perf_clock)));
    long chain[CHAIN_LEN];
    for (long j = 0; j < CHAIN_LEN; j++) chain[j] = chain_next(j, g_me);
    CHECK_CUDA(cudaMemcpy(g_chain, chain, sizeof chain, cudaMemcpyHostToDevice));

    int mapped = both_mapped();

    /* init time, max over PEs */
    perf_send_double(&g_init_ms[g_me], init_ms, 0);
    barrier();
    if (g_me == 0) {
        double pe0 = perf_read_double(&g_init_ms[0]), pe1 = perf_read_double(&g_init_ms[1]);
        double mx = pe0 > pe1 ? pe0 : pe1;
        int dev = 0, sms = 0;
        cudaDeviceProp prop;
        CHECK_CUDA(cudaGetDevice(&dev));
        CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
        CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        if (o.csv) {
            printf("test,size_bytes,scope,iters,measure,min_us,avg_us,p50_us,p99_us,wrong\n");
            if (!mapped) fprintf(stderr, "peers not mapped (proxy path)\n"); /* the CSV keeps to its rows */
            struct perf_stats s = {mx * 1e3, mx * 1e3, mx * 1e3, mx * 1e3};
            print_row(&o, "init", 0, "host", 1, "max-PEs", s, 0);
        } else {
            printf("# %s-perf-gpu-latency: 2 PEs, heap %s, GPU %d %s (%d SMs for PE 0)\n", PERF_LIB, perf_heap_kind(),
                   dev, prop.name, sms);
            printf("# init: %.1f ms (%s initialization to return, max over PEs; PE 0 %.1f, PE 1 %.1f)\n", mx,
                   PERF_LIB, pe0, pe1);
            printf("# %ld warmup + %ld timed iterations (put_signal: fewer, see 'iters'); block scope: %d threads\n",
                   o.warmup, o.iters, o.threads);
            if (!mapped) printf("# peers not mapped (proxy path): every call goes through the proxy; no raw scopes\n");
            printf("# half-RTT: half a ping-pong round trip; per-op: one operation of a dependent chain, or\n"
                   "# (put_quiet) one putmem + quiet; put_quiet_idle: the same after the GPU idled --idle us\n"
                   "# (the proxy thread asleep by then: the difference is its wake-up cost)\n");
            printf("# avg: kernel time / iterations; min/p50/p99: per-iteration clock64 stamps\n");
            printf("%-10s %9s %-8s %7s %-8s %9s %9s %9s %9s %7s\n", "test", "size(B)", "scope", "iters", "measure",
                   "min(us)", "avg(us)", "p50(us)", "p99(us)", "#wrong");
        }
        fflush(stdout);
    }

    long wrong_total = 0;
    if (perf_wants(o.tests, "p")) test_p(&o, samples, &wrong_total);
    if (perf_wants(o.tests, "put_signal")) {
        for (int sc = SC_THREAD; sc <= SC_RAWBLOCK; sc++) {
            if (!perf_wants(o.scopes, scope_names[sc])) continue;
            for (size_t size = o.min_size; size <= o.max_size; size *= 2) {
                if (sc == SC_RAW && (size != 8 || !mapped)) continue;
                if (sc == SC_RAWBLOCK && (size < 16 || size % 16 || size > 16 * (size_t)o.threads || !mapped)) continue;
                test_put_signal(&o, sc, size, samples, &wrong_total);
            }
        }
    }
    if (perf_wants(o.tests, "put_quiet")) test_put_quiet(&o, samples, &wrong_total, 0);
    if (perf_wants(o.tests, "put_quiet_idle")) test_put_quiet(&o, samples, &wrong_total, 1);
    static const char *const chains[] = {"g", "getmem", "fetch_add"};
    for (int k = 0; k < 3; k++)
        if (perf_wants(o.tests, chains[k])) test_chain(&o, chains[k], samples, &wrong_total);

    barrier();
    free(samples);
    CHECK_CUDA(cudaFree(g_clock));
    CHECK_CUDA(cudaFree(g_dwrong));
    CHECK_CUDA(cudaFree(g_stamps));
    CHECK_CUDA(cudaFree(g_src));
    SHM(free)(g_init_ms);
    SHM(free)(g_slots);
    SHM(free)(g_counter);
    SHM(free)(g_chain);
    SHM(free)(g_buf);
    SHM(free)(g_sig);
    SHM(free)(g_flag);
    SHM(finalize)();
    if (wrong_total) fprintf(stderr, "%s-perf-gpu-latency: %ld wrong values\n", PERF_LIB, wrong_total);
    return wrong_total ? 1 : 0;
}
