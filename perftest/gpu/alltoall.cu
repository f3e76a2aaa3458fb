/*
 * gshmem-perf-gpu-alltoall: alltoallmem on the world team over the device heap, any
 * number of PEs (node-local GPUs, or several PEs on one GPU under MPS). Output in the
 * shape of nccl-tests' alltoall_perf plus per-call percentiles and the spread across
 * PEs (figures defined in perftest/perf_coll.h; timing in coll_common.cuh).
 *
 *   stream  gshmemx_alltoallmem_on_stream, timed with CUDA events
 *   kernel  one kernel whose single block calls gshmemx_alltoallmem_block ITERS times
 *           (-T threads; one block per PE, as the cooperative form allows)
 *
 *   size     bytes per peer (each PE sends size bytes to every PE, itself included);
 *            nccl-tests' size column is size * n_pes
 *   algbw    size * n_pes / time, as nccl-tests computes it for alltoall
 *   busbw    algbw * (n_pes - 1) / n_pes
 *   placements: out-of-place (dest != source) and in-place (dest == source; not with
 *            NVSHMEM, whose alltoall takes no overlap)
 *
 * Block j of PE s's source holds a pattern of (s, j, index, round, size); the
 * destination is poisoned before each checked round. Iterations per size: -i at most,
 * about -x bytes sent per PE, at least 5.
 *
 * usage: gshmemrun -n N gshmem-perf-gpu-alltoall [-b MIN] [-e MAX] [-f FACTOR] [-i ITERS]
 *            [-w WARMUP] [-x BYTES] [-T THREADS] [-a stream,kernel] [-c|--check] [--csv|--json]
 * Without -e the largest size is 64 MiB or what the symmetric heap holds.
 *
 * The same source builds the NVSHMEM version (perftest/nvshmem/, GPERF_NVSHMEM).
 */
#ifdef GPERF_NVSHMEM
#include "nvshmem_api.cuh"
#else
#include "gshmem_api.cuh"
#endif
#include "perf_common.cuh"
#include "coll_common.cuh"

#include <getopt.h>

struct options {
    struct perf_sweep sweep;
    size_t target_bytes;
    int threads;
    const char *apis;
};

/* One size and placement: what the coll_op callbacks work on. */
struct a2a {
    unsigned char *src, *dst; /* symmetric; src == dst in place */
    size_t size;
    int me, n, threads;
    unsigned long long *dwrong;
};

/* Word w of a buffer of n blocks: block w / words, index w % words. as_dest: the
 * block came from PE j to me; else it goes from me to PE j. */
__global__ void a2a_fill_kernel(uint64_t *buf, size_t words, int n, int me, long iter, size_t size)
{
    for (size_t w = blockIdx.x * (size_t)blockDim.x + threadIdx.x; w < words * n; w += (size_t)gridDim.x * blockDim.x)
        buf[w] = perf_a2a_word(me, (int)(w / words), w % words, iter, size);
}

__global__ void a2a_check_kernel(const uint64_t *buf, size_t words, int n, int me, long iter, size_t size,
                                 unsigned long long *wrong)
{
    unsigned long long bad = 0;
    for (size_t w = blockIdx.x * (size_t)blockDim.x + threadIdx.x; w < words * n; w += (size_t)gridDim.x * blockDim.x) {
        uint64_t x = buf[w] ^ perf_a2a_word((int)(w / words), me, w % words, iter, size);
        for (; x; x >>= 8) bad += (x & 0xff) != 0;
    }
    for (int d = 16; d > 0; d /= 2) bad += __shfl_down_sync(0xffffffffu, bad, d);
    if ((threadIdx.x & 31) == 0 && bad) atomicAdd(wrong, bad);
}

__global__ void a2a_block_kernel(unsigned char *dst, const unsigned char *src, size_t size, long iters,
                                 unsigned long long *stamps, struct perf_clock *clk)
{
    COLL_TIMER_DECL();
    struct coll_timer t;
    if (threadIdx.x == 0) coll_timer_start(&t, sh_stamps);
    for (long i = 0; i < iters; i++) {
        SHMX(alltoallmem_block)(PERF_TEAM_WORLD, dst, src, size);
        if (threadIdx.x == 0) coll_timer_stamp(&t, i, stamps);
    }
    if (threadIdx.x == 0) coll_timer_end(&t, iters, stamps, clk);
}

static void a2a_prepare(void *arg, long iter)
{
    struct a2a *a = (struct a2a *)arg;
    if (a->dst != a->src) CHECK_CUDA(cudaMemset(a->dst, 0xa5, a->size * (size_t)a->n));
    a2a_fill_kernel<<<1024, 256>>>((uint64_t *)a->src, a->size / 8, a->n, a->me, iter, a->size);
    CHECK_LAUNCH();
}

static void a2a_enqueue(void *arg, cudaStream_t s)
{
    struct a2a *a = (struct a2a *)arg;
    coll_check_rc(SHMX(alltoallmem_on_stream)(PERF_TEAM_WORLD, a->dst, a->src, a->size, s), "alltoallmem_on_stream",
                  a->size, a->me);
}

static void a2a_kernel(void *arg, cudaStream_t s, long iters, unsigned long long *stamps, struct perf_clock *clk)
{
    struct a2a *a = (struct a2a *)arg;
    a2a_block_kernel<<<1, coll_block_threads(a2a_block_kernel, a->threads), 0, s>>>(a->dst, a->src, a->size, iters, stamps, clk);
}

static long a2a_wrong(void *arg, long iter)
{
    struct a2a *a = (struct a2a *)arg;
    a2a_check_kernel<<<1024, 256>>>((const uint64_t *)a->dst, a->size / 8, a->n, a->me, iter, a->size, a->dwrong);
    CHECK_LAUNCH();
    return coll_take_count(a->dwrong);
}

static void print_header(struct perf_table *t, const struct options *o, int n)
{
    int dev = 0;
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDevice(&dev));
    CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
    char gpu[320], it[200], chk[160];
    snprintf(gpu, sizeof gpu, "GPU %d %s; kernel: 1 block x %d threads per PE", dev, prop.name, o->threads);
    snprintf(it, sizeof it, "%ld warmup; at most %ld timed calls per size and placement, about %zu MiB sent per PE, "
             "at least 5", o->sweep.warmup, o->sweep.iters, o->target_bytes >> 20);
    snprintf(chk, sizeof chk, "%s", o->sweep.check ? "--check: every call on fresh data (refill, barrier), every byte checked"
                                             : "#wrong: one more call per row on fresh data, every byte checked");
    const char *desc[] = {
        gpu,
        "size: bytes per peer; count: elements (uint8) per peer; nccl-tests' size = size * n_pes",
        "algbw = size * n_pes / time (GB/s, as nccl-tests for alltoall); busbw = algbw * (n_pes - 1) / n_pes",
        "time: mean over PEs of each PE's mean per call; p50/p99: per call, largest over PEs",
        "spread: largest PE mean / smallest PE mean",
        "stream: calls back to back between two events (mean), then with events between calls (p50/p99)",
        it,
        chk,
    };
    char bench[64];
    snprintf(bench, sizeof bench, "%s-perf-gpu-alltoall", PERF_LIB);
    perf_table_begin(t, bench, n, perf_heap_kind(), desc, 8);
}

static long run_api(struct coll_ctx *c, const struct options *o, struct perf_table *t, enum coll_api api,
                    unsigned char *src, unsigned char *dst)
{
    char title[160];
    if (api == COLL_STREAM)
        snprintf(title, sizeof title, "%sx_alltoallmem_on_stream(TEAM_WORLD), CUDA events", PERF_LIB);
    else
        snprintf(title, sizeof title, "%sx_alltoallmem_block(TEAM_WORLD) in a kernel, 1 block x %d threads", PERF_LIB,
                 o->threads);
    if (c->me == 0) perf_table_group(t, title, 1);
    long wrong_total = 0;
    for (size_t size = o->sweep.min_size; size <= o->sweep.max_size; size *= o->sweep.factor) {
        struct a2a a = {src, dst, size, c->me, c->n, o->threads, c->dwrong};
        struct coll_op op = {&a, a2a_prepare, a2a_enqueue, a2a_kernel, a2a_wrong};
        long iters = coll_iters_for(o->sweep.iters, o->target_bytes, size * (size_t)c->n);
        long warmup = o->sweep.warmup < iters ? o->sweep.warmup : iters;
        double bytes = (double)size * c->n, bus = (double)(c->n - 1) / c->n;
        const char *api_name = api == COLL_STREAM ? "stream" : "kernel";
        struct perf_row w = perf_row_init("alltoall", api_name, size, size, "uint8", "none", iters);
        w.oop = coll_gather(c, coll_measure(c, &op, api, warmup, iters), bytes, bus);
        if (PERF_ALLTOALL_IN_PLACE) {
            a.src = dst;
            w.ip = coll_gather(c, coll_measure(c, &op, api, warmup, iters), bytes, bus);
        }
        if (c->me == 0) perf_table_row(t, &w);
        wrong_total += w.oop.wrong + w.ip.wrong;
        if (size > o->sweep.max_size / o->sweep.factor) break;
    }
    return wrong_total;
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: gshmemrun -n N %s [options]\n"
            "  -b SIZE     smallest size per peer, a multiple of 8 (default 8)\n"
            "  -e SIZE     largest size per peer (default 64M, or what the symmetric heap holds)\n"
            "  -f N        size factor (default 2)\n"
            "  -i N        most timed calls per size (default 1000)\n"
            "  -w N        warmup calls per size (default 20)\n"
            "  -x BYTES    bytes sent per PE per size and placement: fewer calls for large sizes (default 1G)\n"
            "  -T N        threads of the kernel variant's block (default 1024)\n"
            "  -a LIST     stream,kernel (default both)\n"
            "  -c, --check every call on fresh data, every byte of every result checked\n"
            "  --csv       comma-separated output\n"
            "  --json      one JSON document\n",
            prog);
}

static int parse(int argc, char **argv, struct options *o)
{
    int c;
    while ((c = getopt_long(argc, argv, PERF_SWEEP_SHORTOPTS "x:T:a:", perf_sweep_longopts, NULL)) != -1) {
        switch (c) {
        case 'x': o->target_bytes = perf_parse_size(optarg); break;
        case 'T': o->threads = perf_parse_long("-T", optarg, 1, 1024); break;
        case 'a': o->apis = optarg; perf_check_list("-a", optarg, "stream,kernel"); break;
        default:
            if (perf_sweep_option(&o->sweep, c, optarg)) break;
            usage(argv[0]);
            return c == 'h' ? 0 : 2;
        }
    }
    if (o->sweep.iters < 1 || o->sweep.warmup < 0 || o->sweep.min_size < 8 || o->sweep.min_size % 8 || o->sweep.max_size < o->sweep.min_size ||
        o->sweep.factor < 2 || o->threads < 32 || o->threads > 1024 || o->threads % 32) {
        usage(argv[0]);
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    struct options o = {.sweep = {8, (size_t)64 << 20, 2, 1000, 20, 0, 0, PERF_TEXT},
                        .target_bytes = (size_t)1 << 30,
                        .threads = 1024,
                        .apis = "stream,kernel"};
    int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;

    double init_ms = 0;
    perf_init(&init_ms);
    struct coll_ctx c;
    coll_ctx_init(&c, o.sweep.iters, o.sweep.check);
    o.threads = coll_block_threads(a2a_block_kernel, o.threads); /* what the rows then say is what ran */
    if (!o.sweep.max_given) {
        size_t heap = perf_heap_hint(PERF_HEAP_ENV, PERF_HEAP_DEFAULT);
        size_t fit = perf_fit_size(o.sweep.min_size, o.sweep.factor, heap / 4 * 3 / (2 * (size_t)c.n));
        if (fit && fit < o.sweep.max_size) {
            if (c.me == 0)
                fprintf(stderr, "%s-perf-gpu-alltoall: largest size %zu bytes per peer, what a %zu-byte heap holds "
                        "(%s)\n", PERF_LIB, fit, heap, PERF_HEAP_ENV);
            o.sweep.max_size = fit;
        }
    }
    unsigned char *src = (unsigned char *)SHM(malloc)(o.sweep.max_size * (size_t)c.n);
    unsigned char *dst = (unsigned char *)SHM(malloc)(o.sweep.max_size * (size_t)c.n);
    if (!src || !dst) {
        fprintf(stderr, "%s-perf-gpu-alltoall: PE %d: cannot allocate 2 x %zu symmetric bytes (raise %s or lower -e)\n",
                PERF_LIB, c.me, o.sweep.max_size * (size_t)c.n, PERF_HEAP_ENV);
        SHM(global_exit)(1);
    }

    struct perf_table t = {o.sweep.format, 0};
    if (c.me == 0) print_header(&t, &o, c.n);
    long wrong_total = 0;
    if (perf_wants(o.apis, "stream")) wrong_total += run_api(&c, &o, &t, COLL_STREAM, src, dst);
    if (perf_wants(o.apis, "kernel")) wrong_total += run_api(&c, &o, &t, COLL_KERNEL, src, dst);
    if (c.me == 0) perf_table_end(&t);

    coll_barrier();
    SHM(free)(dst);
    SHM(free)(src);
    coll_ctx_fini(&c);
    SHM(finalize)();
    if (wrong_total) fprintf(stderr, "%s-perf-gpu-alltoall: %ld wrong bytes\n", PERF_LIB, wrong_total);
    return wrong_total ? 1 : 0;
}
