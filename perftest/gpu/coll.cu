/*
 * gshmem-perf-gpu-coll: barrier latency and sum reductions on the world team over the
 * device heap, any number of PEs (figures defined in perftest/perf_coll.h; timing in
 * coll_common.cuh).
 *
 *   barriers   stream: barrier_all_on_stream, barrier_on_stream, team_sync_on_stream;
 *              kernel: gshmem_barrier and gshmem_team_sync (one thread), and
 *              gshmemx_barrier_block / gshmemx_team_sync_block (one block of -T threads),
 *              ITERS calls in one kernel
 *   reduce     gshmemx_{float,int64}_sum_reduce_on_stream (stream) and
 *              gshmemx_{float,int64}_sum_reduce_block in a kernel of one block (kernel),
 *              out-of-place and in-place, in the shape of nccl-tests' all_reduce_perf:
 *              size = bytes per PE, algbw = size / time, busbw = algbw * 2 (n - 1) / n
 *
 * Barrier check (#wrong): in a checked round each PE stores the round number into the
 * next PE's token right in front of the call (same stream, or the same kernel; with
 * --check that store is timed with the call); after the call the previous PE's token
 * must hold it, since that PE stored it before entering (the next round's store comes
 * after a host barrier this PE has not reached). Reductions: small integer floats
 * (exact in any order) and int64 below 2^56; in place, the timed calls run on zeros
 * (repeated in-place sums of the pattern would overflow).
 *
 * usage: gshmemrun -n N gshmem-perf-gpu-coll [-t TESTS] [-a stream,kernel] [-d TYPES]
 *            [-b MIN] [-e MAX] [-f FACTOR] [-i ITERS] [-n BITERS] [-w WARMUP] [-x BYTES]
 *            [-T THREADS] [-c|--check] [--csv|--json]
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
    long barrier_iters;
    int threads;
    const char *tests, *apis, *types;
};

/* ---- Barriers. */
enum barrier_op { B_BARRIER_ALL, B_BARRIER, B_TEAM_SYNC };
static const char *const barrier_names[] = {"barrier_all", "barrier", "team_sync"};

struct bar {
    enum barrier_op op;
    int me, n, threads, block; /* block: the _block form in the kernel */
    long *token;               /* symmetric: the previous PE's round number */
    long round;                /* a checked round's number, 0 while timing */
    unsigned long long *dwrong;
};

/* The token for the next PE, in front of the call under test. A sync orders nothing,
 * so the token is completed first; a barrier's own quiet completes it. */
__device__ __forceinline__ void bar_send_token(long *token, long round, int pe, int op)
{
    SHM(long_p)(token, round, pe);
    if (op == B_TEAM_SYNC) SHM(quiet)();
}

template <int BLOCK>
__global__ void bar_kernel(int op, long *token, long round, int next, long iters, unsigned long long *stamps,
                           struct perf_clock *clk)
{
    COLL_TIMER_DECL();
    struct coll_timer t;
    if (threadIdx.x == 0 && round) bar_send_token(token, round, next, op);
    if (threadIdx.x == 0) coll_timer_start(&t, sh_stamps);
    for (long i = 0; i < iters; i++) {
        if (BLOCK && op == B_BARRIER)
            SHMX(barrier_block)(PERF_TEAM_WORLD);
        else if (BLOCK)
            SHMX(team_sync_block)(PERF_TEAM_WORLD);
        else if (op == B_BARRIER)
            SHM(barrier)(PERF_TEAM_WORLD);
        else
            SHM(team_sync)(PERF_TEAM_WORLD);
        if (threadIdx.x == 0) coll_timer_stamp(&t, i, stamps);
    }
    if (threadIdx.x == 0) coll_timer_end(&t, iters, stamps, clk);
}

__global__ void bar_token_kernel(long *token, long round, int pe, int op) { bar_send_token(token, round, pe, op); }

__global__ void bar_check_kernel(const long *token, long round, unsigned long long *wrong)
{
    if (*(const volatile long *)token != round) atomicAdd(wrong, 1ull);
}

static void bar_prepare(void *arg, long iter)
{
    struct bar *b = (struct bar *)arg;
    b->round = iter == COLL_ITER_TIMING ? 0 : iter + 1;
}

static void bar_enqueue(void *arg, cudaStream_t s)
{
    struct bar *b = (struct bar *)arg;
    if (b->round) bar_token_kernel<<<1, 1, 0, s>>>(b->token, b->round, (b->me + 1) % b->n, b->op);
    if (b->op == B_BARRIER_ALL) {
        SHMX(barrier_all_on_stream)(s);
        return;
    }
    int rc;
    if (b->op == B_BARRIER)
        rc = SHMX(barrier_on_stream)(PERF_TEAM_WORLD, s);
    else
        rc = SHMX(team_sync_on_stream)(PERF_TEAM_WORLD, s);
    coll_check_rc(rc, barrier_names[b->op], 0, b->me);
}

static void bar_launch(void *arg, cudaStream_t s, long iters, unsigned long long *stamps, struct perf_clock *clk)
{
    struct bar *b = (struct bar *)arg;
    int next = (b->me + 1) % b->n;
    if (b->block)
        bar_kernel<1><<<1, coll_block_threads(bar_kernel<1>, b->threads), 0, s>>>(b->op, b->token, b->round, next, iters, stamps, clk);
    else
        bar_kernel<0><<<1, 1, 0, s>>>(b->op, b->token, b->round, next, iters, stamps, clk);
}

static long bar_wrong(void *arg, long iter)
{
    struct bar *b = (struct bar *)arg;
    bar_check_kernel<<<1, 1>>>(b->token, iter + 1, b->dwrong);
    CHECK_LAUNCH();
    return coll_take_count(b->dwrong);
}

static long barrier_rows(struct coll_ctx *c, const struct options *o, struct perf_table *t, long *token)
{
    long wrong_total = 0;
    for (int api = COLL_STREAM; api <= COLL_KERNEL; api++) {
        if (!perf_wants(o->apis, api == COLL_STREAM ? "stream" : "kernel")) continue;
        char title[128];
        snprintf(title, sizeof title, "barriers (TEAM_WORLD), %s", api == COLL_STREAM ? "_on_stream, CUDA events"
                 : "in a kernel: one thread, or one block of -T threads (_block)");
        int grouped = 0;
        for (int k = 0; k < 6; k++) {
            enum barrier_op op = (enum barrier_op)(k % 3);
            int block = k >= 3;
            if (!perf_wants(o->tests, barrier_names[op]) || (api == COLL_STREAM && block) ||
                (api == COLL_KERNEL && op == B_BARRIER_ALL))
                continue;
            if (c->me == 0 && !grouped++) perf_table_group(t, title, 0);
            struct bar b = {op, c->me, c->n, o->threads, block, token, 0, c->dwrong};
            struct coll_op cop = {&b, bar_prepare, bar_enqueue, bar_launch, bar_wrong};
            char name[48];
            snprintf(name, sizeof name, "%s%s", barrier_names[op], block ? "_block" : "");
            const char *api_name = api == COLL_STREAM ? "stream" : "kernel";
            struct perf_row w = perf_row_init(name, api_name, 0, 0, "none", "none", o->barrier_iters);
            long warmup = o->sweep.warmup < o->barrier_iters ? o->sweep.warmup : o->barrier_iters;
            w.oop = coll_gather(c, coll_measure(c, &cop, (enum coll_api)api, warmup, o->barrier_iters), 0, 0);
            if (c->me == 0) perf_table_row(t, &w);
            wrong_total += w.oop.wrong;
        }
    }
    return wrong_total;
}

/* ---- Reductions. */
struct red {
    int is_float;
    void *src, *dst; /* symmetric; src == dst in place */
    size_t count;
    int me, n, threads;
    unsigned long long *dwrong;
};

__global__ void red_fill_kernel(void *buf, int is_float, size_t count, int me, long iter)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        if (is_float)
            ((float *)buf)[i] = iter == COLL_ITER_TIMING ? 0.0f : perf_red_float(me, i, iter);
        else
            ((int64_t *)buf)[i] = iter == COLL_ITER_TIMING ? 0 : perf_red_int64(me, i, iter);
    }
}

__global__ void red_check_kernel(const void *buf, int is_float, size_t count, int n, long iter,
                                 unsigned long long *wrong)
{
    unsigned long long bad = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        if (is_float) {
            float sum = 0;
            for (int p = 0; p < n; p++) sum += perf_red_float(p, i, iter);
            bad += ((const float *)buf)[i] != sum;
        } else {
            int64_t sum = 0;
            for (int p = 0; p < n; p++) sum += perf_red_int64(p, i, iter);
            bad += ((const int64_t *)buf)[i] != sum;
        }
    }
    for (int d = 16; d > 0; d /= 2) bad += __shfl_down_sync(0xffffffffu, bad, d);
    if ((threadIdx.x & 31) == 0 && bad) atomicAdd(wrong, bad);
}

template <int FLOAT>
__global__ void red_block_kernel(void *dst, const void *src, size_t count, long iters, unsigned long long *stamps,
                                 struct perf_clock *clk)
{
    COLL_TIMER_DECL();
    struct coll_timer t;
    if (threadIdx.x == 0) coll_timer_start(&t, sh_stamps);
    for (long i = 0; i < iters; i++) {
        if (FLOAT)
            SHMX(float_sum_reduce_block)(PERF_TEAM_WORLD, (float *)dst, (const float *)src, count);
        else
            SHMX(int64_sum_reduce_block)(PERF_TEAM_WORLD, (int64_t *)dst, (const int64_t *)src, count);
        if (threadIdx.x == 0) coll_timer_stamp(&t, i, stamps);
    }
    if (threadIdx.x == 0) coll_timer_end(&t, iters, stamps, clk);
}

static void red_prepare(void *arg, long iter)
{
    struct red *r = (struct red *)arg;
    size_t elem = r->is_float ? sizeof(float) : sizeof(int64_t);
    if (r->dst != r->src) CHECK_CUDA(cudaMemset(r->dst, 0xa5, r->count * elem));
    /* timing data: the pattern out of place, zeros in place */
    long fill = iter == COLL_ITER_TIMING && r->dst != r->src ? 0 : iter;
    red_fill_kernel<<<1024, 256>>>(r->src, r->is_float, r->count, r->me, fill);
    CHECK_LAUNCH();
}

static void red_enqueue(void *arg, cudaStream_t s)
{
    struct red *r = (struct red *)arg;
    int rc;
    if (r->is_float)
        rc = SHMX(float_sum_reduce_on_stream)(PERF_TEAM_WORLD, (float *)r->dst, (const float *)r->src, r->count, s);
    else
        rc = SHMX(int64_sum_reduce_on_stream)(PERF_TEAM_WORLD, (int64_t *)r->dst, (const int64_t *)r->src, r->count,
                                              s);
    coll_check_rc(rc, r->is_float ? "float_sum_reduce_on_stream" : "int64_sum_reduce_on_stream", r->count, r->me);
}

static void red_launch(void *arg, cudaStream_t s, long iters, unsigned long long *stamps, struct perf_clock *clk)
{
    struct red *r = (struct red *)arg;
    if (r->is_float)
        red_block_kernel<1><<<1, coll_block_threads(red_block_kernel<1>, r->threads), 0, s>>>(r->dst, r->src, r->count, iters, stamps, clk);
    else
        red_block_kernel<0><<<1, coll_block_threads(red_block_kernel<0>, r->threads), 0, s>>>(r->dst, r->src, r->count, iters, stamps, clk);
}

static long red_wrong(void *arg, long iter)
{
    struct red *r = (struct red *)arg;
    red_check_kernel<<<1024, 256>>>(r->dst, r->is_float, r->count, r->n, iter, r->dwrong);
    CHECK_LAUNCH();
    return coll_take_count(r->dwrong);
}

static long reduce_rows(struct coll_ctx *c, const struct options *o, struct perf_table *t, int is_float,
                        enum coll_api api, void *src, void *dst)
{
    const char *type = is_float ? "float" : "int64";
    size_t elem = is_float ? sizeof(float) : sizeof(int64_t);
    char title[160];
    if (api == COLL_STREAM)
        snprintf(title, sizeof title, "%sx_%s_sum_reduce_on_stream(TEAM_WORLD), CUDA events", PERF_LIB, type);
    else
        snprintf(title, sizeof title, "%sx_%s_sum_reduce_block(TEAM_WORLD) in a kernel, 1 block x %d threads", PERF_LIB,
                 type, o->threads);
    if (c->me == 0) perf_table_group(t, title, 1);
    long wrong_total = 0;
    double bus = 2.0 * (c->n - 1) / c->n;
    for (size_t size = o->sweep.min_size; size <= o->sweep.max_size; size *= o->sweep.factor) {
        size_t count = size / elem, bytes = count * elem;
        if (count > 0) {
            struct red r = {is_float, src, dst, count, c->me, c->n, o->threads, c->dwrong};
            struct coll_op op = {&r, red_prepare, red_enqueue, red_launch, red_wrong};
            long iters = coll_iters_for(o->sweep.iters, o->target_bytes, bytes);
            long warmup = o->sweep.warmup < iters ? o->sweep.warmup : iters;
            const char *api_name = api == COLL_STREAM ? "stream" : "kernel";
            struct perf_row w = perf_row_init("reduce", api_name, bytes, count, type, "sum", iters);
            w.oop = coll_gather(c, coll_measure(c, &op, api, warmup, iters), (double)bytes, bus);
            r.src = dst;
            w.ip = coll_gather(c, coll_measure(c, &op, api, warmup, iters), (double)bytes, bus);
            if (c->me == 0) perf_table_row(t, &w);
            wrong_total += w.oop.wrong + w.ip.wrong;
        }
        if (size > o->sweep.max_size / o->sweep.factor) break;
    }
    return wrong_total;
}

/* ---- Driver. */
static void print_header(struct perf_table *t, const struct options *o, int n)
{
    int dev = 0;
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDevice(&dev));
    CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
    char gpu[320], it[240];
    snprintf(gpu, sizeof gpu, "GPU %d %s; kernel: one thread or 1 block x %d threads per PE", dev, prop.name,
             o->threads);
    snprintf(it, sizeof it, "barriers: %ld warmup + %ld timed calls; reduce: at most %ld per size and placement, "
             "about %zu MiB per PE, at least 5%s", o->sweep.warmup, o->barrier_iters, o->sweep.iters, o->target_bytes >> 20,
             o->sweep.check ? "; --check: every call on fresh data, fully checked" : "");
    const char *desc[] = {
        gpu,
        "time: mean over PEs of each PE's mean per call; p50/p99: per call, largest over PEs; "
        "spread: largest PE mean / smallest",
        "barriers: #wrong = checked rounds whose token from the previous PE was missing after the call",
        "reduce: size = bytes per PE; algbw = size / time (GB/s); busbw = algbw * 2 (n_pes - 1) / n_pes "
        "(nccl-tests all_reduce)",
        it,
    };
    char bench[64];
    snprintf(bench, sizeof bench, "%s-perf-gpu-coll", PERF_LIB);
    perf_table_begin(t, bench, n, perf_heap_kind(), desc, 5);
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: gshmemrun -n N %s [options]\n"
            "  -t LIST     barrier_all,barrier,team_sync,reduce (default all)\n"
            "  -a LIST     stream,kernel (default both)\n"
            "  -d LIST     reduce types: float,int64 (default both)\n"
            "  -b SIZE     smallest reduce size in bytes (default 4)\n"
            "  -e SIZE     largest (default 64M, or what the symmetric heap holds)\n"
            "  -f N        size factor (default 2)\n"
            "  -i N        most timed reduce calls per size (default 1000)\n"
            "  -n N        timed barrier calls (default 10000)\n"
            "  -w N        warmup calls (default 20)\n"
            "  -x BYTES    bytes reduced per PE per size and placement: fewer calls for large sizes (default 1G)\n"
            "  -T N        threads of the kernel variant's block (default 1024)\n"
            "  -c, --check every call on fresh data, every result checked\n"
            "  --csv       comma-separated output\n"
            "  --json      one JSON document\n",
            prog);
}

static int parse(int argc, char **argv, struct options *o)
{
    int c;
    while ((c = getopt_long(argc, argv, PERF_SWEEP_SHORTOPTS "t:a:d:n:x:T:", perf_sweep_longopts, NULL)) != -1) {
        switch (c) {
        case 't': o->tests = optarg; perf_check_list("-t", optarg, "barrier_all,barrier,team_sync,reduce"); break;
        case 'a': o->apis = optarg; perf_check_list("-a", optarg, "stream,kernel"); break;
        case 'd': o->types = optarg; perf_check_list("-d", optarg, "float,int64"); break;
        case 'n': o->barrier_iters = perf_parse_long("-n", optarg, 1, LONG_MAX); break;
        case 'x': o->target_bytes = perf_parse_size(optarg); break;
        case 'T': o->threads = perf_parse_long("-T", optarg, 1, 1024); break;
        default:
            if (perf_sweep_option(&o->sweep, c, optarg)) break;
            usage(argv[0]);
            return c == 'h' ? 0 : 2;
        }
    }
    if (o->sweep.iters < 1 || o->barrier_iters < 1 || o->sweep.warmup < 0 || o->sweep.min_size < 1 || o->sweep.max_size < o->sweep.min_size ||
        o->sweep.factor < 2 || o->threads < 32 || o->threads > 1024 || o->threads % 32) {
        usage(argv[0]);
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    struct options o = {.sweep = {4, (size_t)64 << 20, 2, 1000, 20, 0, 0, PERF_TEXT},
                        .target_bytes = (size_t)1 << 30,
                        .barrier_iters = 10000,
                        .threads = 1024,
                        .tests = "barrier_all,barrier,team_sync,reduce",
                        .apis = "stream,kernel",
                        .types = "float,int64"};
    int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;

    double init_ms = 0;
    perf_init(&init_ms);
    struct coll_ctx c;
    coll_ctx_init(&c, o.sweep.iters > o.barrier_iters ? o.sweep.iters : o.barrier_iters, o.sweep.check);
    /* One count for every kernel row, the most all three kernels take: the rows say what ran. */
    o.threads = coll_block_threads(bar_kernel<1>, o.threads);
    o.threads = coll_block_threads(red_block_kernel<1>, o.threads);
    o.threads = coll_block_threads(red_block_kernel<0>, o.threads);
    int reduce = perf_wants(o.tests, "reduce");
    size_t fit = perf_fit_size(o.sweep.min_size, o.sweep.factor, perf_heap_hint(PERF_HEAP_ENV, PERF_HEAP_DEFAULT) / 4 * 3 / 2);
    if (reduce && !o.sweep.max_given && fit && fit < o.sweep.max_size) {
        if (c.me == 0)
            fprintf(stderr, "%s-perf-gpu-coll: largest reduce size %zu bytes, what the heap holds (%s)\n", PERF_LIB,
                    fit, PERF_HEAP_ENV);
        o.sweep.max_size = fit;
    }
    void *src = reduce ? SHM(malloc)(o.sweep.max_size) : NULL, *dst = reduce ? SHM(malloc)(o.sweep.max_size) : NULL;
    long *token = (long *)SHM(calloc)(1, sizeof(long));
    if ((reduce && (!src || !dst)) || !token) {
        fprintf(stderr, "%s-perf-gpu-coll: PE %d: cannot allocate 2 x %zu symmetric bytes (raise %s or lower -e)\n",
                PERF_LIB, c.me, o.sweep.max_size, PERF_HEAP_ENV);
        SHM(global_exit)(1);
    }

    struct perf_table t = {o.sweep.format, 0};
    if (c.me == 0) print_header(&t, &o, c.n);
    long wrong_total = barrier_rows(&c, &o, &t, token);
    for (int k = 0; reduce && k < 2; k++) {
        if (!perf_wants(o.types, k == 0 ? "float" : "int64")) continue;
        for (int api = COLL_STREAM; api <= COLL_KERNEL; api++)
            if (perf_wants(o.apis, api == COLL_STREAM ? "stream" : "kernel"))
                wrong_total += reduce_rows(&c, &o, &t, k == 0, (enum coll_api)api, src, dst);
    }
    if (c.me == 0) perf_table_end(&t);

    coll_barrier();
    SHM(free)(token);
    if (reduce) {
        SHM(free)(dst);
        SHM(free)(src);
    }
    coll_ctx_fini(&c);
    SHM(finalize)();
    if (wrong_total) fprintf(stderr, "%s-perf-gpu-coll: %ld wrong results\n", PERF_LIB, wrong_total);
    return wrong_total ? 1 : 0;
}
