/* Reductions on the device heap, against a host reference computed from the same
 * per-member values:
 *  1. every operator/type pair of GSHMEM_REDUCE_OPS in block form on WORLD: 1001
 *     elements 16-byte aligned, and 37 elements one element off alignment, in place for
 *     every other pair; 0 elements for a few;
 *  2. a subset in thread and warp forms, in and out of place, on WORLD and on a strided
 *     team (even or odd PEs) and a split_2d row;
 *  3. the host's blocking reductions on device-heap buffers;
 *  4. on-stream reductions of 1M elements (one in place, one on the strided team).
 * Values are chosen so every result is exact (small integers in float and double, sums
 * and products that cannot overflow the narrowest type); destinations are poisoned with
 * guards around them, sources must stay intact. */
#include "gpu_check.cuh"

#include <type_traits>

static int me, npes;
static unsigned next_salt = 1;

#define GUARD 64
#define BLOCK 128
#define BIG (1u << 20)

struct team_desc { /* members start + i * stride (world PEs), i < size */
    gshmem_team_t handle;
    int start, stride, size, my_idx;
    const char *name;
};

enum { OP_and, OP_or, OP_xor, OP_max, OP_min, OP_sum, OP_prod };
enum { F_THREAD, F_WARP, F_BLOCK, F_HOST, F_STREAM };
static const char *const form_names[] = {"thread", "warp", "block", "host", "on-stream"};

/* Member idx's (world PE pe) element i. and: mostly ones; or: mostly zeros; sum: at
 * most 120 in magnitude over the team; prod: at most two factors other than 1 per
 * element (2 or 3, a sign, sometimes 0). */
template <typename T>
__host__ __device__ inline T red_value(int op, int pe, int idx, int n, size_t i, unsigned salt)
{
    uint64_t h = gpu_mix((uint64_t)pe, i, salt);
    const bool is_float = !std::is_integral<T>::value, is_signed = std::is_signed<T>::value;
    long long lim = 120 / n;
    switch (op) {
    case OP_and: return (T)(h | (h >> 13) | (h >> 29));
    case OP_or: return (T)(h & (h >> 13) & (h >> 29));
    case OP_xor: return (T)h;
    case OP_max:
    case OP_min: return is_float ? (T)((long long)(h % 2000001) - 1000000) : (T)h;
    case OP_sum: return is_signed ? (T)((long long)(h % (2 * lim + 1)) - lim) : (T)(h % (2 * lim + 1));
    default: {
        int v = 1;
        if ((size_t)idx == i % (size_t)n) v = 2 + (int)(h & 1);
        if (is_signed && (size_t)idx == (i / (size_t)n + 1) % (size_t)n) v = -v;
        if (idx == 0 && i % 97 == 5) v = 0;
        return (T)v;
    }
    }
}

template <typename T> static T host_combine(int op, T a, T b)
{
    if constexpr (std::is_integral<T>::value) {
        if (op == OP_and) return (T)(a & b);
        if (op == OP_or) return (T)(a | b);
        if (op == OP_xor) return (T)(a ^ b);
    }
    switch (op) {
    case OP_max: return a > b ? a : b;
    case OP_min: return a < b ? a : b;
    case OP_sum: return (T)(a + b);
    default: return (T)(a * b);
    }
}

template <typename T>
__global__ void fill_kernel(T *p, size_t n, int op, team_desc t, int pe, unsigned salt)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = red_value<T>(op, pe, t.my_idx, t.size, i, salt);
}

/* ---- One functor per operator/type pair ------------------------------------------------------ */

#define RED_FUNCTOR(T, N, OP)                                                                                 \
    struct red_##N##_##OP {                                                                                   \
        typedef T type;                                                                                       \
        static constexpr int op = OP_##OP;                                                                    \
        static const char *name() { return #N "_" #OP "_reduce"; }                                            \
        template <int F> static __device__ int call(gshmem_team_t t, T *d, const T *s, size_t n)              \
        {                                                                                                     \
            if constexpr (F == F_THREAD) return gshmem_##N##_##OP##_reduce(t, d, s, n);                       \
            else if constexpr (F == F_WARP) return gshmemx_##N##_##OP##_reduce_warp(t, d, s, n);              \
            else return gshmemx_##N##_##OP##_reduce_block(t, d, s, n);                                        \
        }                                                                                                     \
        static int host(gshmem_team_t t, T *d, const T *s, size_t n)                                          \
        {                                                                                                     \
            return gshmem_##N##_##OP##_reduce(t, d, s, n);                                                    \
        }                                                                                                     \
        static int stream(gshmem_team_t t, T *d, const T *s, size_t n, cudaStream_t st)                       \
        {                                                                                                     \
            return gshmemx_##N##_##OP##_reduce_on_stream(t, d, s, n, st);                                     \
        }                                                                                                     \
    };
/* PAIR(T, N, OP) over every pair of GSHMEM_REDUCE_OPS; PAIR is defined before each use. */
#define PAIR_and(T, N) PAIR(T, N, and)
#define PAIR_or(T, N) PAIR(T, N, or)
#define PAIR_xor(T, N) PAIR(T, N, xor)
#define PAIR_max(T, N) PAIR(T, N, max)
#define PAIR_min(T, N) PAIR(T, N, min)
#define PAIR_sum(T, N) PAIR(T, N, sum)
#define PAIR_prod(T, N) PAIR(T, N, prod)
#define PAIR_OP(OP, TYPES) TYPES(PAIR_##OP)
#define PAIR RED_FUNCTOR
GSHMEM_REDUCE_OPS(PAIR_OP)
#undef PAIR

template <typename R, int F> __global__ void red_kernel(gshmem_team_t team, typename R::type *dest,
                                                        const typename R::type *source, size_t n, int *rc)
{
    if (F == F_THREAD && threadIdx.x != 70) return;
    if (F == F_WARP && threadIdx.x / 32 != 2) return;
    int r = R::template call<F>(team, dest, source, n);
    if (r != 0) {
        atomicAdd(&rc[0], 1);
        rc[1] = r;
    }
}

/* ---- One checked reduction ------------------------------------------------------------------- */

static char *arena; /* symmetric: dest region, then source region, each cap bytes */
static size_t cap;
static int *rc_dev;
static cudaStream_t stream;

struct red_case {
    const team_desc *t;
    size_t n, off; /* elements; off: elements past the 16-byte aligned start */
    bool inplace;
};

template <typename T> static void red_expect(int op, const red_case &c, unsigned salt, T *out)
{
    const team_desc &t = *c.t;
    for (size_t i = 0; i < c.n; i++) {
        T acc = red_value<T>(op, t.start, 0, t.size, i, salt);
        for (int j = 1; j < t.size; j++)
            acc = host_combine<T>(op, acc, red_value<T>(op, t.start + j * t.stride, j, t.size, i, salt));
        out[i] = acc;
    }
}

template <typename R, int F> static int red_launch(const red_case &c, typename R::type *dest,
                                                   const typename R::type *source)
{
    if constexpr (F == F_HOST) {
        return R::host(c.t->handle, dest, source, c.n);
    } else if constexpr (F == F_STREAM) {
        int r = R::stream(c.t->handle, dest, source, c.n, stream);
        GPU_CHECK_CUDA(cudaStreamSynchronize(stream));
        return r;
    } else {
        GPU_CHECK_CUDA(cudaMemset(rc_dev, 0, 2 * sizeof(int)));
        red_kernel<R, F><<<1, BLOCK>>>(c.t->handle, dest, source, c.n, rc_dev);
        GPU_CHECK_KERNEL();
        int rc[2];
        GPU_CHECK_CUDA(cudaMemcpy(rc, rc_dev, sizeof(rc), cudaMemcpyDeviceToHost));
        return rc[0] ? rc[1] : 0;
    }
}

/* Compares the guarded span at region (GUARD + off elements, n results, GUARD). */
template <typename T> static void red_compare(const char *what, const char *region, const red_case &c,
                                              const T *result)
{
    size_t lead = GUARD + c.off * sizeof(T), span = lead + c.n * sizeof(T) + GUARD;
    uint8_t *got = (uint8_t *)gpu_fetch(region, span), *want = (uint8_t *)malloc(span);
    GPU_CHECK(want != NULL, "out of host memory");
    memset(want, GPU_POISON, span);
    memcpy(want + lead, result, c.n * sizeof(T));
    size_t bad = gpu_cmp_elems(what, got + lead, want + lead, sizeof(T), c.n);
    bad += gpu_cmp_bytes(what, got, want, lead);
    bad += gpu_cmp_bytes(what, got + lead + c.n * sizeof(T), want + lead + c.n * sizeof(T), GUARD);
    GPU_CHECK(bad == 0, "%s: wrong (elements, then the guards before and after)", what);
    free(got);
    free(want);
}

template <typename R, int F> static void run_pair(const red_case &c)
{
    typedef typename R::type T;
    unsigned salt = next_salt++;
    size_t lead = GUARD + c.off * sizeof(T), span = lead + c.n * sizeof(T) + GUARD;
    GPU_CHECK(span <= cap, "%s: %zu elements do not fit", R::name(), c.n);
    T *dest = (T *)(arena + lead), *source = c.inplace ? dest : (T *)(arena + cap + lead);
    gpu_poison(arena, span);
    if (!c.inplace) gpu_poison(arena + cap, span);
    if (c.n) fill_kernel<T><<<256, 256>>>(source, c.n, R::op, *c.t, me, salt);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all(); /* every source ready and every dest poisoned before anyone reduces */
    int rc = red_launch<R, F>(c, dest, source);
    char what[200];
    snprintf(what, sizeof(what), "%s, %s form, team %s, %zu elements at +%zu%s", R::name(), form_names[F], c.t->name,
             c.n, c.off, c.inplace ? ", in place" : "");
    GPU_CHECK(rc == 0, "%s: returned %d", what, rc);
    T *want = (T *)malloc((c.n ? c.n : 1) * sizeof(T));
    GPU_CHECK(want != NULL, "out of host memory");
    red_expect<T>(R::op, c, salt, want);
    red_compare<T>(what, arena, c, want);
    if (!c.inplace) {
        for (size_t i = 0; i < c.n; i++) want[i] = red_value<T>(R::op, me, c.t->my_idx, c.t->size, i, salt);
        char swhat[240];
        snprintf(swhat, sizeof(swhat), "%s: source must stay intact", what);
        red_compare<T>(swhat, arena + cap, c, want);
    }
    free(want);
}

/* ---- 1. Every pair in block form -------------------------------------------------------------- */

struct pair_entry {
    void (*run)(const red_case &c);
};
#define RED_ENTRY(T, N, OP) {run_pair<red_##N##_##OP, F_BLOCK>},
#define PAIR RED_ENTRY
static const pair_entry block_pairs[] = {GSHMEM_REDUCE_OPS(PAIR_OP)};
#undef PAIR

static void test_every_pair(const team_desc &world)
{
    size_t count = sizeof(block_pairs) / sizeof(block_pairs[0]);
    for (size_t k = 0; k < count; k++) {
        block_pairs[k].run(red_case{&world, 1001, 0, false});
        block_pairs[k].run(red_case{&world, 37, 1, k % 2 == 1});
        if (k % 19 == 0) block_pairs[k].run(red_case{&world, 0, 0, false});
    }
    if (me == 0) printf("every reduction (%zu operator/type pairs) in block form on WORLD ok\n", count);
}

/* ---- 2, 3, 4. Subsets ----------------------------------------------------------------------- */

template <int F> static void subset(const team_desc &t)
{
    run_pair<red_int_sum, F>(red_case{&t, 333, 0, false});
    run_pair<red_int_sum, F>(red_case{&t, 1000, 0, true});
    run_pair<red_double_max, F>(red_case{&t, 257, 1, false});
    run_pair<red_float_prod, F>(red_case{&t, 1031, 0, true});
    run_pair<red_uint8_xor, F>(red_case{&t, 4099, 3, false});
    run_pair<red_long_min, F>(red_case{&t, 64, 0, false});
    run_pair<red_uint64_and, F>(red_case{&t, 515, 1, true});
    run_pair<red_uchar_or, F>(red_case{&t, 17, 5, false});
    run_pair<red_short_sum, F>(red_case{&t, 2048, 0, false});
    run_pair<red_size_prod, F>(red_case{&t, 99, 0, false});
    if (me == 0) printf("reduction subset, %s form, team %s ok\n", form_names[F], t.name);
}

static void test_stream(const team_desc &world, const team_desc &parity)
{
    run_pair<red_int_sum, F_STREAM>(red_case{&world, BIG, 0, false});
    run_pair<red_double_max, F_STREAM>(red_case{&world, BIG, 0, true});
    run_pair<red_uint64_xor, F_STREAM>(red_case{&world, BIG + 3, 1, false});
    run_pair<red_float_sum, F_STREAM>(red_case{&parity, BIG, 0, false});
    run_pair<red_int16_prod, F_STREAM>(red_case{&world, 1001, 1, false});
    if (me == 0) printf("on-stream reductions of up to %u elements ok\n", BIG + 3);
}

int main(void)
{
    gpu_test_init("gpu_reduce");
    me = gshmem_my_pe();
    npes = gshmem_n_pes();
    cap = (size_t)(BIG + 16) * sizeof(double) + 2 * GUARD;
    arena = (char *)gshmem_malloc(2 * cap);
    GPU_CHECK(arena != NULL, "gshmem_malloc(%zu) failed", 2 * cap);
    GPU_CHECK_CUDA(cudaMalloc(&rc_dev, 2 * sizeof(int)));
    GPU_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    team_desc world = {GSHMEM_TEAM_WORLD, 0, 1, npes, me, "WORLD"};
    gshmem_team_t even, odd, rh, ch;
    GPU_CHECK(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even) == 0 &&
                  gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odd) == 0 &&
                  gshmem_team_split_2d(GSHMEM_TEAM_WORLD, 2, NULL, 0, &rh, NULL, 0, &ch) == 0,
              "team splits failed");
    team_desc parity = {me % 2 ? odd : even, me % 2, 2, me % 2 ? npes / 2 : (npes + 1) / 2, me / 2,
                        me % 2 ? "odd PEs" : "even PEs"};
    team_desc row = {rh, me / 2 * 2, 1, npes - me / 2 * 2 < 2 ? 1 : 2, me % 2, "row (xrange 2)"};

    test_every_pair(world);
    subset<F_THREAD>(world);
    subset<F_WARP>(world);
    subset<F_BLOCK>(parity);
    subset<F_WARP>(row);
    subset<F_THREAD>(parity);
    subset<F_HOST>(world);
    subset<F_HOST>(parity);
    test_stream(world, parity);

    gshmem_team_destroy(ch);
    gshmem_team_destroy(rh);
    gshmem_team_destroy(odd);
    gshmem_team_destroy(even);
    GPU_CHECK_CUDA(cudaStreamDestroy(stream));
    GPU_CHECK_CUDA(cudaFree(rc_dev));
    gshmem_free(arena);
    gpu_test_pass("gpu_reduce");
    return 0;
}
