/*
 * gshmem-perf-gpu-bw: bandwidth of the device API between 2 PEs (node-local GPUs, or 2
 * PEs on one GPU under MPS), one direction at a time and, with -t bidir, both at once.
 *
 *   put  PE 0 writes SIZE bytes into PE 1's symmetric buffer: -B blocks of -T threads,
 *        each block does gshmemx_putmem_nbi_block of its slice of a private device
 *        buffer, ITERS times in one kernel, then one gshmem_quiet per block
 *   get  PE 0 reads SIZE bytes of PE 1's symmetric buffer into a private device buffer
 *        the same way (gshmemx_getmem_nbi_block, then gshmem_quiet)
 *   bidir  both PEs put at once, each into the other's buffer (the put kernel on both,
 *        started together after a barrier for every timed kernel); GB/s counts both
 *        directions over the slower PE's median kernel time
 *
 * Reference, in the same run, same grid and slices: a plain copy kernel with 16-byte
 * loads and stores through the same peer mapping (the pointer from gshmem_ptr on the
 * host); ratio = GB/s / copy GB/s (bidir: the copy kernel on both PEs at once). A
 * second reference with --ce: the copy engines, ITERS cudaMemcpyAsync calls through the
 * same mapping (what cudaMemcpyPeer does between two devices of one process). When the
 * library has gshmemx_putmem_on_stream, the put rows also give the host-initiated,
 * stream-ordered bandwidth (ITERS calls on one stream, then gshmemx_quiet_on_stream,
 * timed with events).
 *
 * When either PE's peer heap is not mapped (GSHMEM_DISABLE_P2P=1, or another node: the
 * calls go through the proxy thread and the remote transport) there is no copy or ce
 * reference (copy and ratio print "-", empty in --csv) and -B defaults to 1 block: the
 * proxy serves requests one at a time, so more blocks only cut the transfers into more,
 * smaller requests. The proxy path moves about 1-3 GB/s, so keep the bytes small:
 *   GSHMEM_DISABLE_P2P=1 GSHMEM_HEAP=device gshmemrun -n 2 gshmem-perf-gpu-bw -b 4096 -e 16M -x 64M -r 3
 * moves about 660 MB (about 6000 requests) per pass over its 13 sizes and makes 4 passes
 * per kind of row (put, the stream put, get): under 3 s per kind at 1 GB/s.
 *
 * GB/s = SIZE * ITERS / kernel time (10^9 bytes per second), the median of -r timed
 * kernels after one untimed one; ITERS = (-x bytes) / SIZE, between 1 and -i. The
 * destination is poisoned before each measurement and checked in full afterwards on the
 * device (#wrong: bytes that differ, over every measurement of the row; 0 expected).
 *
 * usage: gshmemrun -n 2 gshmem-perf-gpu-bw [-b MIN] [-e MAX] [-B BLOCKS] [-T THREADS]
 *            [-i MAXITERS] [-x BYTES] [-r REPS] [-t put,get,bidir] [--ce] [--csv]
 * The symmetric heap must hold MAX bytes (GSHMEM_SYMMETRIC_SIZE).
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

struct options {
    size_t min_size, max_size, target_bytes;
    long max_iters;
    int blocks, threads, reps, csv, ce;
    const char *tests;
};

static int g_me, g_peer;
static unsigned char *g_sym;   /* symmetric: put destination / get source, on PE 1 (bidir: both) */
static unsigned char *g_local; /* private: put source / get destination, on PE 0 (bidir: both) */
static long long *g_slots;     /* [0]: #wrong from PE 1, [1]: whether the peers are mapped,
                                * [2]: PE 1's bidir time (ns) */
static unsigned long long *g_dwrong;

/* Block b's slice of a transfer: [off, off + *n). Slices are multiples of 256 bytes. */
__host__ __device__ __forceinline__ size_t slice(size_t size, size_t chunk, unsigned b, size_t *n)
{
    size_t off = (size_t)b * chunk;
    *n = off < size ? (size - off < chunk ? size - off : chunk) : 0;
    return off;
}

/* Once the whole block has issued its transfers, one quiet completes them: on the proxy
 * path every quiet is a round trip through the proxy thread. */
__device__ __forceinline__ void block_quiet(void)
{
    __syncthreads();
    if (threadIdx.x == 0) SHM(quiet)();
}

/* Launched with up to 1024 threads (-T): the bounds make the compiler fit each kernel,
 * with whatever the gshmem calls put inline, in the 64 registers a thread that a
 * 1024-thread block can have (without them a kernel over 64 does not launch). */
__global__ void __launch_bounds__(1024) put_kernel(unsigned char *dst, const unsigned char *src, size_t size,
                                                   size_t chunk, long iters, int peer)
{
    size_t n, off = slice(size, chunk, blockIdx.x, &n);
    if (!n) return;
    for (long it = 0; it < iters; it++) SHMX(putmem_nbi_block)(dst + off, src + off, n, peer);
    block_quiet();
}

__global__ void __launch_bounds__(1024) get_kernel(unsigned char *dst, const unsigned char *src, size_t size,
                                                   size_t chunk, long iters, int peer)
{
    size_t n, off = slice(size, chunk, blockIdx.x, &n);
    if (!n) return;
    for (long it = 0; it < iters; it++) SHMX(getmem_nbi_block)(dst + off, src + off, n, peer);
    block_quiet();
}

/* The reference: plain 16-byte loads and stores, the same slices. */
__global__ void __launch_bounds__(1024) copy_kernel(unsigned char *dst, const unsigned char *src, size_t size,
                                                    size_t chunk, long iters)
{
    size_t n, off = slice(size, chunk, blockIdx.x, &n);
    int4 *d = (int4 *)(dst + off);
    const int4 *s = (const int4 *)(src + off);
    size_t vecs = n / 16;
    for (long it = 0; it < iters; it++)
        for (size_t i = threadIdx.x; i < vecs; i += blockDim.x) d[i] = s[i];
}

static void barrier(void)
{
    CHECK_CUDA(cudaDeviceSynchronize());
    SHM(barrier_all)();
}

enum kind { K_PUT, K_GET, K_BIDIR, K_COPY_PUT, K_COPY_GET, K_COPY_BIDIR, K_CE_PUT, K_CE_GET, K_CE_BIDIR, K_STREAM };

static int is_get_kind(enum kind k) { return k == K_GET || k == K_COPY_GET || k == K_CE_GET; }
static int is_bidir_kind(enum kind k) { return k == K_BIDIR || k == K_COPY_BIDIR || k == K_CE_BIDIR; }

struct launch {
    int blocks, threads;
    size_t size, chunk;
    long iters;
    unsigned char *peer_sym; /* the peer's buffer through the mapping; NULL on the proxy path */
    cudaStream_t stream;
};

static void launch(enum kind k, const struct launch *l)
{
    switch (k) {
    case K_PUT:
    case K_BIDIR:
        put_kernel<<<l->blocks, l->threads, 0, l->stream>>>(g_sym, g_local, l->size, l->chunk, l->iters, g_peer);
        break;
    case K_GET:
        get_kernel<<<l->blocks, l->threads, 0, l->stream>>>(g_local, g_sym, l->size, l->chunk, l->iters, g_peer);
        break;
    case K_COPY_PUT:
    case K_COPY_BIDIR:
        copy_kernel<<<l->blocks, l->threads, 0, l->stream>>>(l->peer_sym, g_local, l->size, l->chunk, l->iters);
        break;
    case K_CE_PUT:
    case K_CE_BIDIR:
        for (long it = 0; it < l->iters; it++)
            CHECK_CUDA(cudaMemcpyAsync(l->peer_sym, g_local, l->size, cudaMemcpyDeviceToDevice, l->stream));
        break;
    case K_CE_GET:
        for (long it = 0; it < l->iters; it++)
            CHECK_CUDA(cudaMemcpyAsync(g_local, l->peer_sym, l->size, cudaMemcpyDeviceToDevice, l->stream));
        break;
    case K_COPY_GET:
        copy_kernel<<<l->blocks, l->threads, 0, l->stream>>>(g_local, l->peer_sym, l->size, l->chunk, l->iters);
        break;
    case K_STREAM:
#ifdef PERF_HAVE_PUTMEM_ON_STREAM
        for (long it = 0; it < l->iters; it++) SHMX(putmem_on_stream)(g_sym, g_local, l->size, g_peer, l->stream);
        SHMX(quiet_on_stream)(l->stream);
#endif
        break;
    }
    CHECK_CUDA(cudaGetLastError());
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median milliseconds of `reps` timed launches after an untimed one (PE 0; for bidir
 * both PEs, which meet before every launch so that each timed kernel meets the other
 * direction's traffic). */
static double time_ms(enum kind k, const struct launch *l, int reps)
{
    const int both = is_bidir_kind(k);
    cudaEvent_t a, b;
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    launch(k, l);
    CHECK_CUDA(cudaStreamSynchronize(l->stream));
    float ms[64];
    for (int r = 0; r < reps; r++) {
        if (both) barrier();
        CHECK_CUDA(cudaEventRecord(a, l->stream));
        launch(k, l);
        CHECK_CUDA(cudaEventRecord(b, l->stream));
        CHECK_CUDA(cudaEventSynchronize(b));
        CHECK_CUDA(cudaEventElapsedTime(&ms[r], a, b));
    }
    CHECK_CUDA(cudaEventDestroy(a));
    CHECK_CUDA(cudaEventDestroy(b));
    qsort(ms, (size_t)reps, sizeof ms[0], cmp_float);
    return ms[reps / 2];
}

/* One measurement, collective: poison the destination, PE 0 times, check the
 * destination (PE 1's buffer for puts, PE 0's for gets, both buffers for bidir, where
 * PE p's source holds salt + p). GB/s on PE 0 (bidir: both directions); *wrong +=
 * bytes. */
static double measure(enum kind k, const struct launch *l, int reps, uint64_t salt, long *wrong)
{
    int is_get = is_get_kind(k), both = is_bidir_kind(k);
    int receives = both || g_me == (is_get ? 0 : 1);
    unsigned char *dst = is_get ? g_local : g_sym;
    barrier();
    if (receives) CHECK_CUDA(cudaMemset(dst, 0xa5, l->size));
    barrier();
    double ms = g_me == 0 || both ? time_ms(k, l, reps) : 0;
    if (both && g_me == 1) perf_send_ll(&g_slots[2], (long long)(ms * 1e6), 0);
    barrier();
    if (both && g_me == 0) { /* the slower direction bounds the pair */
        double ms1 = (double)perf_read_ll(&g_slots[2]) / 1e6;
        if (ms1 > ms) ms = ms1;
    }
    long mine = receives ? perf_check(dst, l->size, both ? salt + (uint64_t)g_peer : salt, g_dwrong) : 0;
    if (g_me == 1) perf_send_ll(&g_slots[0], mine, 0);
    barrier();
    if (g_me == 0) *wrong += mine + (!is_get || both ? (long)perf_read_ll(&g_slots[0]) : 0);
    barrier();
    double bytes = (double)l->size * (double)l->iters * (both ? 2 : 1);
    return g_me == 0 && ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0;
}

/* Whether both PEs have the other's heap mapped, on both PEs: both skip the copy
 * references together. Collective. */
static int share_mapped(int mapped)
{
    barrier();
    if (g_me == 1) perf_send_ll(&g_slots[1], mapped, 0);
    barrier();
    if (g_me == 0) {
        mapped = mapped && perf_read_ll(&g_slots[1]);
        perf_send_ll(&g_slots[1], mapped, 1);
    }
    barrier();
    if (g_me == 1) mapped = (int)perf_read_ll(&g_slots[1]);
    barrier();
    return mapped;
}

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: gshmemrun -n 2 %s [options]\n"
            "  -b SIZE   smallest size, a multiple of 256 (default 4K)\n"
            "  -e SIZE   largest size (default 1G; the symmetric heap must hold it)\n"
            "  -B N      blocks (default: SMs visible to this process x resident blocks per SM;\n"
            "            1 when a peer heap is not mapped: the proxy path)\n"
            "  -T N      threads per block (default 1024)\n"
            "  -i N      most transfers per kernel (default 1000)\n"
            "  -x BYTES  bytes per kernel: ITERS = BYTES / SIZE, at least 1 (default 2G)\n"
            "  -r N      timed kernels per measurement, median reported (default 5, at most 64)\n"
            "  -t LIST   put,get,bidir (default put,get)\n"
            "  --ce      also the copy engines' reference (cudaMemcpyAsync through the mapping)\n"
            "  --csv     comma-separated output\n",
            prog);
}

int main(int argc, char **argv)
{
    struct options o = {4096, (size_t)1 << 30, (size_t)2 << 30, 1000, 0, 1024, 5, 0, 0, "put,get"};
    static const struct option longopts[] = {{"csv", no_argument, NULL, 'c'}, {"ce", no_argument, NULL, 'E'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "b:e:B:T:i:x:r:t:ch", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': o.min_size = perf_parse_size(optarg); break;
        case 'e': o.max_size = perf_parse_size(optarg); break;
        case 'B': o.blocks = perf_parse_long("-B", optarg, 1, INT_MAX); break;
        case 'T': o.threads = perf_parse_long("-T", optarg, 1, 1024); break;
        case 'i': o.max_iters = perf_parse_long("-i", optarg, 1, LONG_MAX); break;
        case 'x': o.target_bytes = perf_parse_size(optarg); break;
        case 'r': o.reps = perf_parse_long("-r", optarg, 1, INT_MAX); break;
        case 't': o.tests = optarg; perf_check_list("-t", optarg, "put,get,bidir"); break;
        case 'c': o.csv = 1; break;
        case 'E': o.ce = 1; break;
        default: usage(argv[0]); return c == 'h' ? 0 : 2;
        }
    }
    if (o.min_size < 256 || o.min_size % 256 || o.max_size < o.min_size || o.blocks < 0 || o.threads < 32 ||
        o.threads > 1024 || o.threads % 32 || o.max_iters < 1 || o.reps < 1 || o.reps > 64) {
        usage(argv[0]);
        return 2;
    }

    double init_ms = 0;
    perf_init(&init_ms);
    g_me = SHM(my_pe)();
    if (SHM(n_pes)() != 2) {
        if (g_me == 0) fprintf(stderr, "%s-perf-gpu-bw needs exactly 2 PEs (got %d)\n", PERF_LIB, SHM(n_pes)());
        SHM(finalize)();
        return 2;
    }
    g_peer = 1 - g_me;
    g_sym = (unsigned char *)SHM(malloc)(o.max_size);
    g_slots = (long long *)SHM(calloc)(3, sizeof(long long));
    if (!g_sym || !g_slots) {
        fprintf(stderr, "%s-perf-gpu-bw: PE %d: cannot allocate %zu symmetric bytes (raise the heap size)\n",
                PERF_LIB, g_me, o.max_size);
        SHM(global_exit)(1);
    }
    CHECK_CUDA(cudaMalloc((void **)&g_local, o.max_size));
    CHECK_CUDA(cudaMalloc((void **)&g_dwrong, sizeof(unsigned long long)));

    struct launch l;
    memset(&l, 0, sizeof l);
    l.threads = o.threads;
    l.peer_sym = (unsigned char *)SHM(ptr)(g_sym, g_peer);
    int mapped = share_mapped(l.peer_sym != NULL);
    CHECK_CUDA(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    int dev = 0, sms = 0, per_sm = 0;
    CHECK_CUDA(cudaGetDevice(&dev));
    CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    {
        int a = 0, b = 0, d = 0;
        CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&a, put_kernel, o.threads, 0));
        CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, get_kernel, o.threads, 0));
        CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&d, copy_kernel, o.threads, 0));
        per_sm = a < b ? a : b;
        per_sm = per_sm < d ? per_sm : d;
        if (per_sm < 1) per_sm = 1;
    }
    l.blocks = o.blocks ? o.blocks : mapped ? sms * per_sm : 1;

    if (g_me == 0) {
        cudaDeviceProp prop;
        CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
        if (o.csv) {
            printf("op,size_bytes,blocks,threads,iters,us_per_transfer,GBps,copy_GBps,ratio,ce_GBps,stream_GBps,"
                   "wrong\n");
            if (!mapped) fprintf(stderr, "peer not mapped (proxy path): no copy or ce reference\n"); /* rows only */
        } else {
            printf("# %s-perf-gpu-bw: PE 0 -> PE 1 (put), PE 0 <- PE 1 (get), both at once (bidir), heap %s, "
                   "GPU %d %s\n",
                   PERF_LIB, perf_heap_kind(), dev, prop.name);
            printf("# %d blocks x %d threads (%d SMs, %d resident per SM); %s; GB/s = 10^9 bytes/s, "
                   "median of %d kernels; bidir: both directions\n",
                   l.blocks, l.threads, sms, per_sm, "put/get: <op>mem_nbi_block per block, then quiet", o.reps);
            if (mapped)
                printf("# copy: plain 16-byte copy kernel through the same peer mapping, same grid; "
                       "ratio = GB/s / copy%s\n",
                       o.ce ? "; ce: cudaMemcpyAsync through the mapping (copy engines)" : "");
            else
                printf("# peer not mapped (proxy path): no copy or ce reference\n");
#ifdef PERF_HAVE_PUTMEM_ON_STREAM
            printf("# stream: host putmem_on_stream, ITERS calls on one stream (put rows only)\n");
#else
            printf("# stream: not measured (this %s has no putmem_on_stream)\n", PERF_LIB);
#endif
            printf("%-5s %11s %6s %10s %9s %10s %6s %9s %11s %7s\n", "op", "size(B)", "iters", "us/xfer", "GB/s",
                   "copy GB/s", "ratio", "ce GB/s", "stream GB/s", "#wrong");
        }
        fflush(stdout);
    }

    static const char *const op_names[] = {"put", "get", "bidir"};
    static const enum kind op_kind[] = {K_PUT, K_GET, K_BIDIR}, copy_kind[] = {K_COPY_PUT, K_COPY_GET, K_COPY_BIDIR},
                           ce_kind[] = {K_CE_PUT, K_CE_GET, K_CE_BIDIR};
    long wrong_total = 0;
    for (int op = 0; op < 3; op++) {
        if (!perf_wants(o.tests, op_names[op])) continue;
        const int is_get = op == 1, both = op == 2;
        for (size_t size = o.min_size; size <= o.max_size; size *= 2) {
            uint64_t salt = size * 131 + (uint64_t)op * 7 + 0x6b;
            long iters = (long)(o.target_bytes / size);
            if (iters > o.max_iters) iters = o.max_iters;
            if (iters < 1) iters = 1;
            l.size = size;
            l.iters = iters;
            l.chunk = round_up((size + (size_t)l.blocks - 1) / (size_t)l.blocks, 256);
            /* the source holds the pattern: PE 0's private buffer (put), PE 1's heap (get),
             * each PE's private buffer (bidir, salt + PE) */
            barrier();
            if (both) perf_fill(g_local, size, salt + (uint64_t)g_me);
            else if (!is_get && g_me == 0) perf_fill(g_local, size, salt);
            else if (is_get && g_me == 1) perf_fill(g_sym, size, salt);
            long wrong = 0;
            double gbps = measure(op_kind[op], &l, o.reps, salt, &wrong);
            double copy = mapped ? measure(copy_kind[op], &l, o.reps, salt, &wrong) : -1;
            double ce = mapped && o.ce ? measure(ce_kind[op], &l, o.reps, salt, &wrong) : -1;
            double stream = -1;
#ifdef PERF_HAVE_PUTMEM_ON_STREAM
            if (op == 0) stream = measure(K_STREAM, &l, o.reps, salt, &wrong);
#endif
            if (g_me == 0) {
                /* one direction's transfer of SIZE bytes */
                double us = gbps > 0 ? (double)size / (gbps / (both ? 2 : 1) * 1e3) : 0;
                /* columns not measured: empty in CSV, "-" in the table */
                const char *none = o.csv ? "" : "-";
                char cbuf[32], rbuf[32], ebuf[32], sbuf[32];
                snprintf(cbuf, sizeof cbuf, o.csv ? "%.3f" : "%.1f", copy);
                snprintf(rbuf, sizeof rbuf, "%.3f", copy > 0 ? gbps / copy : 0);
                snprintf(ebuf, sizeof ebuf, o.csv ? "%.3f" : "%.1f", ce);
                snprintf(sbuf, sizeof sbuf, o.csv ? "%.3f" : "%.1f", stream);
                const char *cs = copy >= 0 ? cbuf : none, *rs = copy >= 0 ? rbuf : none;
                const char *es = ce >= 0 ? ebuf : none, *ss = stream >= 0 ? sbuf : none;
                if (o.csv)
                    printf("%s,%zu,%d,%d,%ld,%.3f,%.3f,%s,%s,%s,%s,%ld\n", op_names[op], size, l.blocks, l.threads,
                           iters, us, gbps, cs, rs, es, ss, wrong);
                else
                    printf("%-5s %11zu %6ld %10.3f %9.1f %10s %6s %9s %11s %7ld\n", op_names[op], size, iters, us,
                           gbps, cs, rs, es, ss, wrong);
                fflush(stdout);
            }
            wrong_total += wrong;
        }
    }

    barrier();
    CHECK_CUDA(cudaStreamDestroy(l.stream));
    CHECK_CUDA(cudaFree(g_dwrong));
    CHECK_CUDA(cudaFree(g_local));
    SHM(free)(g_slots);
    SHM(free)(g_sym);
    SHM(finalize)();
    if (wrong_total) fprintf(stderr, "%s-perf-gpu-bw: %ld wrong bytes\n", PERF_LIB, wrong_total);
    return wrong_total ? 1 : 0;
}
