/*
 * Stream-ordered host API on the device heap: on-stream put, get, putmem_signal
 * (SET and ADD), signal_op, signal_wait_until, quiet, barrier_all and sync_all,
 * interleaved with kernels on the same stream and checked on data (poisoned
 * destinations, PE-and-index patterns, every element, guard bytes that must not
 * change); then one CUDA-graph capture of an on-stream exchange, replayed several
 * times with the data checked after each replay.
 */
#include <gshmem.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_CUDA(call)                                                                                   \
    do {                                                                                                   \
        cudaError_t e_ = (call);                                                                           \
        if (e_ != cudaSuccess) {                                                                           \
            fprintf(stderr, "PE %d: %s:%d: %s: %s\n", gshmem_my_pe(), __FILE__, __LINE__, #call,           \
                    cudaGetErrorString(e_));                                                               \
            gshmem_global_exit(1);                                                                         \
        }                                                                                                  \
    } while (0)

#define COUNT 65536          /* ints per buffer */
#define GUARD 64             /* poisoned ints after each buffer that nothing may write */
#define POISON 0x5a5a5a5a
#define ITERS 16
#define REPLAYS 5
#define ODD_OFFSET 3         /* bytes: an unaligned, odd-sized transfer */
#define ODD_BYTES 4097

__host__ __device__ inline int pattern(int pe, int tag, int i)
{
    return (pe + 1) * 1000003 + tag * 65599 + i;
}

__global__ void fill(int *buf, int pe, int tag, int count)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
        buf[i] = pattern(pe, tag, i);
}

/* Counts elements of buf that differ from pattern(pe, tag, .), and guard ints that lost the poison. */
__global__ void verify(const int *buf, int pe, int tag, int count, int guard, unsigned long long *errors)
{
    unsigned long long bad = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count + guard; i += gridDim.x * blockDim.x)
        bad += buf[i] != (i < count ? pattern(pe, tag, i) : POISON);
    if (bad) atomicAdd(errors, bad);
}

__global__ void expect_word(const uint64_t *word, uint64_t value, unsigned long long *errors)
{
    if (*(const volatile uint64_t *)word != value) atomicAdd(errors, 1ull);
}

/* Byte-wise check of the odd transfer: [0, off) and [off + len, total) keep the poison byte. */
__global__ void verify_bytes(const unsigned char *buf, const unsigned char *want, int off, int len, int total,
                             unsigned long long *errors)
{
    unsigned long long bad = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x)
        bad += buf[i] != (i >= off && i < off + len ? want[i - off] : (unsigned char)0x5a);
    if (bad) atomicAdd(errors, bad);
}

struct ctx {
    int me, n, right, left;
    cudaStream_t stream;
    int *dst, *pub, *src, *got; /* dst, pub symmetric; src, got local device memory */
    uint64_t *sigs;             /* [0] data signal, [1] ack, [2] signal_op target */
    unsigned long long *errors; /* one counter per phase */
};

/* Fills on the test's stream and waits: cudaMemset would run on the legacy stream,
 * unordered with a non-blocking stream, and peers may write right after a barrier. */
static void reset(struct ctx *c, void *buf, int byte, size_t len)
{
    CHECK_CUDA(cudaMemsetAsync(buf, byte, len, c->stream));
    CHECK_CUDA(cudaStreamSynchronize(c->stream));
}

static void poison(struct ctx *c, int *buf, size_t ints)
{
    reset(c, buf, 0x5a, ints * sizeof(int));
}

static unsigned long long read_errors(struct ctx *c, int phase)
{
    unsigned long long v = 0;
    CHECK_CUDA(cudaStreamSynchronize(c->stream));
    CHECK_CUDA(cudaMemcpy(&v, &c->errors[phase], sizeof(v), cudaMemcpyDeviceToHost));
    return v;
}

/* put to the right neighbour, barrier on the stream, check what the left one put. */
static unsigned long long phase_put(struct ctx *c)
{
    poison(c, c->dst, COUNT + GUARD);
    gshmem_barrier_all();
    fill<<<64, 256, 0, c->stream>>>(c->src, c->me, 1, COUNT);
    gshmemx_putmem_on_stream(c->dst, c->src, COUNT * sizeof(int), c->right, c->stream);
    gshmemx_barrier_all_on_stream(c->stream);
    verify<<<64, 256, 0, c->stream>>>(c->dst, c->left, 1, COUNT, GUARD, &c->errors[0]);
    return read_errors(c, 0);
}

/* Every PE publishes in pub, sync on the stream, get the right neighbour's. */
static unsigned long long phase_get(struct ctx *c)
{
    poison(c, c->got, COUNT + GUARD);
    fill<<<64, 256, 0, c->stream>>>(c->pub, c->me, 2, COUNT);
    gshmemx_sync_all_on_stream(c->stream);
    gshmemx_getmem_on_stream(c->got, c->pub, COUNT * sizeof(int), c->right, c->stream);
    verify<<<64, 256, 0, c->stream>>>(c->got, c->right, 2, COUNT, GUARD, &c->errors[1]);
    gshmemx_sync_all_on_stream(c->stream); /* nobody refills pub while a neighbour still reads it */
    return read_errors(c, 1);
}

/* ITERS exchanges with putmem_signal (ADD) + wait, an ack back with signal_op (SET). */
static unsigned long long phase_signal(struct ctx *c)
{
    reset(c, c->sigs, 0, 3 * sizeof(uint64_t));
    poison(c, c->dst, COUNT + GUARD);
    gshmem_barrier_all();
    for (int it = 1; it <= ITERS; it++) {
        fill<<<64, 256, 0, c->stream>>>(c->src, c->me, 100 + it, COUNT);
        if (it > 1) gshmemx_signal_wait_until_on_stream(&c->sigs[1], GSHMEM_CMP_EQ, (uint64_t)(it - 1), c->stream);
        gshmemx_putmem_signal_on_stream(c->dst, c->src, COUNT * sizeof(int), &c->sigs[0], 1, GSHMEM_SIGNAL_ADD,
                                        c->right, c->stream);
        gshmemx_signal_wait_until_on_stream(&c->sigs[0], GSHMEM_CMP_GE, (uint64_t)it, c->stream);
        verify<<<64, 256, 0, c->stream>>>(c->dst, c->left, 100 + it, COUNT, GUARD, &c->errors[2]);
        gshmemx_signal_op_on_stream(&c->sigs[1], (uint64_t)it, GSHMEM_SIGNAL_SET, c->left, c->stream);
    }
    /* signal_op ADD from every PE onto PE 0's third word: n after a barrier. */
    gshmemx_signal_op_on_stream(&c->sigs[2], 1, GSHMEM_SIGNAL_ADD, 0, c->stream);
    gshmemx_barrier_all_on_stream(c->stream);
    expect_word<<<1, 1, 0, c->stream>>>(&c->sigs[0], ITERS, &c->errors[2]);
    if (c->me == 0) expect_word<<<1, 1, 0, c->stream>>>(&c->sigs[2], (uint64_t)c->n, &c->errors[2]);
    gshmemx_sync_all_on_stream(c->stream); /* the last acks are in before anyone resets the signals */
    return read_errors(c, 2);
}

/* An unaligned, odd-sized put with zero-length calls around it (they must do nothing). */
static unsigned long long phase_odd(struct ctx *c)
{
    poison(c, c->dst, COUNT + GUARD);
    gshmem_barrier_all();
    fill<<<64, 256, 0, c->stream>>>(c->src, c->me, 3, COUNT);
    char *dst = (char *)c->dst + ODD_OFFSET;
    const char *src = (const char *)c->src + 1;
    gshmemx_putmem_on_stream(dst, src, 0, c->right, c->stream);
    gshmemx_putmem_on_stream(dst, src, ODD_BYTES, c->right, c->stream);
    gshmemx_getmem_on_stream(c->got, c->pub, 0, c->right, c->stream);
    gshmemx_quiet_on_stream(c->stream);
    gshmemx_sync_all_on_stream(c->stream);
    /* The left neighbour's source bytes, rebuilt locally for the comparison. */
    fill<<<64, 256, 0, c->stream>>>(c->got, c->left, 3, COUNT);
    verify_bytes<<<64, 256, 0, c->stream>>>((const unsigned char *)c->dst, (const unsigned char *)c->got + 1,
                                            ODD_OFFSET, ODD_BYTES, (COUNT + GUARD) * (int)sizeof(int),
                                            &c->errors[3]);
    return read_errors(c, 3);
}

/* Captures fill -> putmem_signal -> wait -> verify -> ack -> barrier into a graph
 * and replays it; the generation number lives in device memory so each replay
 * sends new data and waits for the next signal value. */
__global__ void next_generation(int *gen)
{
    ++*gen;
}

__global__ void fill_gen(int *buf, const int *gen, int pe, int count)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
        buf[i] = pattern(pe, 1000 + *gen, i);
}

__global__ void verify_gen(const int *buf, const int *gen, int pe, int count, unsigned long long *errors,
                           const uint64_t *sig)
{
    unsigned long long bad = 0;
    int g = *gen;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
        bad += buf[i] != pattern(pe, 1000 + g, i);
    if (blockIdx.x == 0 && threadIdx.x == 0) bad += *(const volatile uint64_t *)sig != (uint64_t)g;
    if (bad) atomicAdd(errors, bad);
}

static int phase_graph(struct ctx *c)
{
    int *gen;
    CHECK_CUDA(cudaMalloc(&gen, sizeof(int)));
    reset(c, gen, 0, sizeof(int));
    reset(c, c->sigs, 0, 3 * sizeof(uint64_t));
    poison(c, c->dst, COUNT + GUARD);
    gshmem_barrier_all();

    /* Replay g sends generation g's data; the data signal (ADD 1 per replay) reads g
     * when it is checked. The graph's parameters are fixed at capture, so the
     * generation lives in device memory. */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeGlobal));
    next_generation<<<1, 1, 0, c->stream>>>(gen);
    fill_gen<<<64, 256, 0, c->stream>>>(c->src, gen, c->me, COUNT);
    gshmemx_putmem_signal_on_stream(c->dst, c->src, COUNT * sizeof(int), &c->sigs[0], 1, GSHMEM_SIGNAL_ADD, c->right,
                                    c->stream);
    gshmemx_quiet_on_stream(c->stream);
    gshmemx_barrier_all_on_stream(c->stream); /* every PE's data has landed */
    verify_gen<<<64, 256, 0, c->stream>>>(c->dst, gen, c->left, COUNT, &c->errors[4], &c->sigs[0]);
    gshmemx_sync_all_on_stream(c->stream);    /* nobody overwrites dst before its owner has checked it */
    CHECK_CUDA(cudaStreamEndCapture(c->stream, &graph));
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));

    int failures = 0;
    for (int r = 1; r <= REPLAYS; r++) {
        CHECK_CUDA(cudaGraphLaunch(exec, c->stream));
        /* An on-stream wait between replays, outside the graph: the signal counts replays.
         * At least r, not exactly: the left neighbour may already be in replay r + 1 (its
         * put comes once every PE has passed replay r's closing sync) when this wait runs,
         * which a late host thread can enqueue after that. The exact count is checked
         * once every PE is done. */
        gshmemx_signal_wait_until_on_stream(&c->sigs[0], GSHMEM_CMP_GE, (uint64_t)r, c->stream);
        unsigned long long bad = read_errors(c, 4);
        int g = 0;
        CHECK_CUDA(cudaMemcpy(&g, gen, sizeof(g), cudaMemcpyDeviceToHost));
        if (bad || g != r) {
            fprintf(stderr, "PE %d: graph replay %d: %llu wrong values (generation %d)\n", c->me, r, bad, g);
            failures++;
        }
    }
    /* every PE has run every replay: the data signal counted each exactly once */
    gshmemx_barrier_all_on_stream(c->stream);
    expect_word<<<1, 1, 0, c->stream>>>(&c->sigs[0], REPLAYS, &c->errors[4]);
    if (read_errors(c, 4)) {
        fprintf(stderr, "PE %d: after %d graph replays the data signal is not %d\n", c->me, REPLAYS, REPLAYS);
        failures++;
    }
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));
    CHECK_CUDA(cudaFree(gen));
    return failures;
}

/* --expect-refusal, on a host heap (GSHMEM_HEAP=host): the first on-stream call must
 * end the job with a message; returning from it is a failure. */
static int refusal(void)
{
    char *dest = (char *)gshmem_malloc(64);
    char source[8] = "abcdefg";
    gshmemx_putmem_on_stream(dest, source, sizeof source, (gshmem_my_pe() + 1) % gshmem_n_pes(), 0);
    fprintf(stderr, "PE %d: gshmemx_putmem_on_stream on a %s heap was accepted\n", gshmem_my_pe(),
            gshmemx_heap_kind());
    gshmem_finalize();
    return 1;
}

int main(int argc, char **argv)
{
    gshmem_init();
    if (argc > 1 && strcmp(argv[1], "--expect-refusal") == 0) return refusal();
    struct ctx c;
    memset(&c, 0, sizeof(c));
    c.me = gshmem_my_pe();
    c.n = gshmem_n_pes();
    c.right = (c.me + 1) % c.n;
    c.left = (c.me + c.n - 1) % c.n;
    if (strncmp(gshmemx_heap_kind(), "device", 6) != 0) {
        fprintf(stderr, "PE %d: gpu_stream needs the device heap (heap: %s)\n", c.me, gshmemx_heap_kind());
        gshmem_finalize();
        return 1;
    }
    c.dst = (int *)gshmem_malloc((COUNT + GUARD) * sizeof(int));
    c.pub = (int *)gshmem_malloc(COUNT * sizeof(int));
    c.sigs = (uint64_t *)gshmem_calloc(3, sizeof(uint64_t));
    if (!c.dst || !c.pub || !c.sigs) gshmem_global_exit(1);
    CHECK_CUDA(cudaMalloc(&c.src, COUNT * sizeof(int)));
    CHECK_CUDA(cudaMalloc(&c.got, (COUNT + GUARD) * sizeof(int)));
    CHECK_CUDA(cudaMalloc(&c.errors, 8 * sizeof(unsigned long long)));
    CHECK_CUDA(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
    reset(&c, c.errors, 0, 8 * sizeof(unsigned long long));

    int failed = 0;
    unsigned long long bad;
#define PHASE(name, call)                                                                   \
    bad = (call);                                                                           \
    printf("PE %d: %-12s %s", c.me, name, bad ? "FAILED" : "ok");                           \
    if (bad) printf(" (%llu wrong)", bad);                                                  \
    printf("\n");                                                                           \
    failed += bad != 0;
    PHASE("put", phase_put(&c));
    PHASE("get", phase_get(&c));
    PHASE("signal", phase_signal(&c));
    PHASE("odd", phase_odd(&c));
    PHASE("graph", (unsigned long long)phase_graph(&c));
#undef PHASE

    CHECK_CUDA(cudaStreamSynchronize(c.stream));
    gshmem_barrier_all();
    CHECK_CUDA(cudaStreamDestroy(c.stream));
    CHECK_CUDA(cudaFree(c.errors));
    CHECK_CUDA(cudaFree(c.got));
    CHECK_CUDA(cudaFree(c.src));
    gshmem_free(c.sigs);
    gshmem_free(c.pub);
    gshmem_free(c.dst);
    printf("PE %d: gpu_stream %s\n", c.me, failed ? "FAILED" : "ok");
    gshmem_finalize();
    return failed ? 1 : 0;
}
