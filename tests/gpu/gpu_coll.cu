/* Data collectives on the device heap: broadcast (every root), collect (a different size
 * per PE, team index 1 with none), fcollect, alltoall out of place and in place,
 * alltoalls with strides.
 *  1. mem forms in thread, warp and block forms at 0, 1, 1001 bytes, 4 KiB and 1 MiB + 8,
 *     at unaligned offsets, on WORLD and on a strided team (even or odd PEs);
 *  2. typed forms: every type of GSHMEM_RMA_DEVICE_TYPES in block form, a few in thread
 *     and warp forms;
 *  3. three teams at once (strided, row, column) from three blocks of one kernel;
 *  4. the host's blocking collectives (mem and every typed one) on device-heap buffers;
 *  5. a bad team and a bad root are refused (nonzero) by the device and the host;
 *  6. on-stream alltoallmem, fcollectmem, broadcastmem, collectmem, 24 iterations back to
 *     back at 1001 bytes and at up to 8 MiB per peer, values changing per iteration;
 *  7. the four on-stream collectives captured in a CUDA graph, replayed with the values
 *     changed between replays by a kernel on the same stream.
 * Every check poisons the destination with guards around it, fills sources with a
 * pattern of (world PE, index, salt), and compares every byte of the guarded span (and
 * the source, which must stay intact) on the host; the stream loops check on the GPU
 * each iteration and on the host after the last. */
#include "gpu_check.cuh"
#include <unistd.h>

static int me, npes;
static unsigned next_salt = 1;

#define GUARD 64                  /* poisoned bytes before and after every destination */
#define LARGE ((1u << 20) + 8)    /* bytes per member in the large device-API cases */
#define BLOCK 128

/* ---- Teams and result shapes ------------------------------------------------------------- */

struct team_desc { /* members start + i * stride (world PEs), i < size */
    gshmem_team_t handle;
    int start, stride, size, my_idx;
    const char *name;
};

__host__ __device__ inline int desc_world(const team_desc &t, int idx) { return t.start + idx * t.stride; }

enum { OP_BROADCAST, OP_COLLECT, OP_FCOLLECT, OP_ALLTOALL, OP_INPLACE, OP_ALLTOALLS, OP_COUNT };
static const char *const op_names[] = {"broadcast", "collect", "fcollect", "alltoall", "alltoall in place",
                                       "alltoalls"};

/* One collective's arguments in elements. n: per member (collect: the base of the sizes). */
struct op_shape {
    int op;
    team_desc t;
    size_t n;
    int root;
    ptrdiff_t dst, sst;
};

/* collect: member idx contributes this many elements; index 1 contributes none. */
__host__ __device__ inline size_t collect_count(size_t base, int idx, int size)
{
    if (base == 0 || (size > 1 && idx == 1)) return 0;
    return base + (size_t)((idx * 13) % 29);
}

/* Whether dest element r is written, and from which member's source element. */
__host__ __device__ inline bool result_source(const op_shape &s, size_t r, int *from, size_t *idx)
{
    size_t n = s.n, all = (size_t)s.t.size * n;
    if (n == 0) return false;
    switch (s.op) {
    case OP_BROADCAST: *from = s.root, *idx = r; return r < n;
    case OP_COLLECT: {
        size_t off = 0;
        for (int j = 0; j < s.t.size; j++) {
            size_t c = collect_count(n, j, s.t.size);
            if (r < off + c) {
                *from = j, *idx = r - off;
                return true;
            }
            off += c;
        }
        return false;
    }
    case OP_FCOLLECT: *from = (int)(r / n), *idx = r % n; return r < all;
    case OP_ALLTOALL:
    case OP_INPLACE: *from = (int)(r / n), *idx = (size_t)s.t.my_idx * n + r % n; return r < all;
    default:
        if (r % (size_t)s.dst != 0 || r / (size_t)s.dst >= all) return false;
        r /= (size_t)s.dst;
        *from = (int)(r / n), *idx = ((size_t)s.t.my_idx * n + r % n) * (size_t)s.sst;
        return true;
    }
}

static size_t dest_extent(const op_shape &s)
{
    size_t all = (size_t)s.t.size * s.n;
    if (s.n == 0) return 0;
    switch (s.op) {
    case OP_BROADCAST: return s.n;
    case OP_COLLECT: {
        size_t sum = 0;
        for (int j = 0; j < s.t.size; j++) sum += collect_count(s.n, j, s.t.size);
        return sum;
    }
    case OP_ALLTOALLS: return (all - 1) * (size_t)s.dst + 1;
    default: return all;
    }
}

static size_t source_extent(const op_shape &s)
{
    if (s.n == 0) return 0;
    switch (s.op) {
    case OP_COLLECT: return collect_count(s.n, s.t.my_idx, s.t.size);
    case OP_ALLTOALL:
    case OP_INPLACE: return (size_t)s.t.size * s.n;
    case OP_ALLTOALLS: return ((size_t)s.t.size * s.n - 1) * (size_t)s.sst + 1;
    default: return s.n;
    }
}

/* ---- Types --------------------------------------------------------------------------------- */

#define TYPE_ENUM(T, N) TY_##N,
enum { TY_MEM, GSHMEM_RMA_DEVICE_TYPES(TYPE_ENUM) TY_COUNT };
#undef TYPE_ENUM

template <typename T> __global__ void fill_kernel(T *p, size_t count, int pe, unsigned salt)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        p[i] = gpu_pat<T>(pe, i, salt);
}
template <typename T> static void fill_t(void *dev, size_t count, unsigned salt)
{
    if (count) fill_kernel<T><<<256, 256>>>((T *)dev, count, me, salt);
    GPU_CHECK_KERNEL();
}
template <typename T> static void pat_t(void *out, int pe, size_t idx, unsigned salt)
{
    T v = gpu_pat<T>(pe, idx, salt);
    memcpy(out, &v, sizeof(T));
}

struct type_info {
    const char *name;
    size_t size;
    void (*fill)(void *dev, size_t count, unsigned salt);
    void (*pat)(void *out, int pe, size_t idx, unsigned salt);
};
#define TYPE_INFO(T, N) {#N, sizeof(T), fill_t<T>, pat_t<T>},
static const type_info types[TY_COUNT] = {{"mem", 1, fill_t<uint8_t>, pat_t<uint8_t>},
                                          GSHMEM_RMA_DEVICE_TYPES(TYPE_INFO)};
#undef TYPE_INFO

/* ---- Device calls -------------------------------------------------------------------------- */

enum { F_THREAD, F_WARP, F_BLOCK, F_HOST };
static const char *const form_names[] = {"thread", "warp", "block", "host"};

struct coll_args {
    int op, type;
    gshmem_team_t team;
    void *dest;
    const void *source;
    size_t n;
    int root;
    ptrdiff_t dst, sst;
};

#define MEM_SWITCH(P, S)                                                                                  \
    switch (a.op) {                                                                                       \
    case OP_BROADCAST: return P##broadcastmem##S(a.team, a.dest, a.source, a.n, a.root);                  \
    case OP_COLLECT: return P##collectmem##S(a.team, a.dest, a.source, a.n);                              \
    case OP_FCOLLECT: return P##fcollectmem##S(a.team, a.dest, a.source, a.n);                            \
    case OP_ALLTOALLS: return P##alltoallsmem##S(a.team, a.dest, a.source, a.dst, a.sst, a.n);            \
    default: return P##alltoallmem##S(a.team, a.dest, a.source, a.n);                                     \
    }
#define TYPED_SWITCH(T, N, P, S)                                                                          \
    case TY_##N:                                                                                          \
        switch (a.op) {                                                                                   \
        case OP_BROADCAST: return P##N##_broadcast##S(a.team, (T *)a.dest, (const T *)a.source, a.n, a.root); \
        case OP_COLLECT: return P##N##_collect##S(a.team, (T *)a.dest, (const T *)a.source, a.n);         \
        case OP_FCOLLECT: return P##N##_fcollect##S(a.team, (T *)a.dest, (const T *)a.source, a.n);       \
        case OP_ALLTOALLS:                                                                                \
            return P##N##_alltoalls##S(a.team, (T *)a.dest, (const T *)a.source, a.dst, a.sst, a.n);      \
        default: return P##N##_alltoall##S(a.team, (T *)a.dest, (const T *)a.source, a.n);                \
        }
/* Thread and warp forms are built for these types only; the block form for every type. */
#define FEW_TYPES(X) X(int, int) X(float, float) X(double, double) X(char, char) X(uint64_t, uint64) X(short, short)
#define TYPED_THREAD(T, N) TYPED_SWITCH(T, N, gshmem_, )
#define TYPED_WARP(T, N) TYPED_SWITCH(T, N, gshmemx_, _warp)
#define TYPED_BLOCK(T, N) TYPED_SWITCH(T, N, gshmemx_, _block)
#define TYPED_HOST(T, N) TYPED_SWITCH(T, N, gshmem_, )

#define IS_FEW(T, N) || type == TY_##N
static bool few_type(int type) { return type == TY_MEM FEW_TYPES(IS_FEW); }
#undef IS_FEW

template <int F> __device__ int device_call(const coll_args &a)
{
    if (a.type == TY_MEM) {
        if constexpr (F == F_THREAD) MEM_SWITCH(gshmem_, )
        else if constexpr (F == F_WARP) MEM_SWITCH(gshmemx_, _warp)
        else MEM_SWITCH(gshmemx_, _block)
    }
    if constexpr (F == F_THREAD) {
        switch (a.type) { FEW_TYPES(TYPED_THREAD) }
    } else if constexpr (F == F_WARP) {
        switch (a.type) { FEW_TYPES(TYPED_WARP) }
    } else {
        switch (a.type) { GSHMEM_RMA_DEVICE_TYPES(TYPED_BLOCK) }
    }
    return -1000; /* a type this form is not built for: the test's own error */
}

static int host_call(const coll_args &a)
{
    if (a.type == TY_MEM) MEM_SWITCH(gshmem_, )
    switch (a.type) { GSHMEM_RMA_DEVICE_TYPES(TYPED_HOST) }
    return -1000;
}

/* The thread form runs on thread 37, the warp form on the last warp, the block form on
 * all; rc[0] counts callers that got nonzero, rc[1] keeps one such value. */
template <int F> __device__ void run_form(const coll_args &a, int *rc)
{
    if (F == F_THREAD && threadIdx.x != 37) return;
    if (F == F_WARP && threadIdx.x / 32 != blockDim.x / 32 - 1) return;
    int r = device_call<F>(a);
    if (r != 0) {
        atomicAdd(&rc[0], 1);
        rc[1] = r;
    }
}

template <int F> __global__ void coll_kernel(coll_args a, int *rc) { run_form<F>(a, rc); }

/* Three collectives on three teams at once: block 0 block form, 1 warp, 2 thread. */
__global__ void three_kernel(coll_args a0, coll_args a1, coll_args a2, int *rc)
{
    if (blockIdx.x == 0) run_form<F_BLOCK>(a0, rc);
    else if (blockIdx.x == 1) run_form<F_WARP>(a1, rc + 2);
    else run_form<F_THREAD>(a2, rc + 4);
}

/* ---- One checked collective ------------------------------------------------------------------ */

static char *arena; /* symmetric: three regions of cap bytes */
static size_t cap;
static int *rc_dev;

struct coll_case {
    op_shape s;
    int type, form;
    char *dregion, *sregion; /* GUARD bytes, then the offset, then dest (source) */
    size_t doff, soff;
    unsigned salt;
};

static char *case_dest(const coll_case &c) { return c.dregion + GUARD + c.doff; }
static char *case_source(const coll_case &c)
{
    return c.s.op == OP_INPLACE ? case_dest(c) : c.sregion + GUARD + c.soff;
}
static size_t dest_span(const coll_case &c) { return 2 * GUARD + c.doff + dest_extent(c.s) * types[c.type].size; }
static size_t source_span(const coll_case &c)
{
    return 2 * GUARD + c.soff + source_extent(c.s) * types[c.type].size;
}

/* collect passes this PE's own size; the rest the shape's n. */
static coll_args case_args(const coll_case &c)
{
    size_t n = c.s.op == OP_COLLECT ? collect_count(c.s.n, c.s.t.my_idx, c.s.t.size) : c.s.n;
    return coll_args{c.s.op, c.type, c.s.t.handle, case_dest(c), case_source(c), n, c.s.root, c.s.dst, c.s.sst};
}

static void case_prepare(coll_case &c)
{
    c.salt = next_salt++;
    GPU_CHECK(dest_span(c) <= cap && source_span(c) <= cap, "%s: needs %zu / %zu bytes, regions hold %zu",
              op_names[c.s.op], dest_span(c), source_span(c), cap);
    gpu_poison(c.dregion, dest_span(c));
    if (c.s.op != OP_INPLACE) gpu_poison(c.sregion, source_span(c));
    types[c.type].fill(case_source(c), source_extent(c.s), c.salt);
}

static void case_label(const coll_case &c, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s, %s form, team %s, n %zu, root %d, dst %td sst %td, offsets %zu/%zu", types[c.type].name,
             op_names[c.s.op], form_names[c.form], c.s.t.name, c.s.n, c.s.root, c.s.dst, c.s.sst, c.doff, c.soff);
}

/* The guarded destination span as it must be: poison, and the result where written. */
static void expect_dest(const op_shape &s, int type, size_t doff, unsigned salt, uint8_t *want, size_t span)
{
    size_t es = types[type].size;
    memset(want, GPU_POISON, span);
    for (size_t r = 0; r < dest_extent(s); r++) {
        int from;
        size_t idx;
        if (result_source(s, r, &from, &idx))
            types[type].pat(want + GUARD + doff + r * es, desc_world(s.t, from), idx, salt);
    }
}

static void verify_dest(const char *label, const op_shape &s, int type, const char *dregion, size_t doff,
                        unsigned salt)
{
    size_t span = 2 * GUARD + doff + dest_extent(s) * types[type].size;
    uint8_t *got = (uint8_t *)gpu_fetch(dregion, span), *want = (uint8_t *)malloc(span);
    GPU_CHECK(want != NULL, "out of host memory");
    expect_dest(s, type, doff, salt, want, span);
    char what[320];
    snprintf(what, sizeof(what), "%s: dest (guard %d + offset %zu first)", label, GUARD, doff);
    GPU_CHECK(gpu_cmp_bytes(what, got, want, span) == 0, "%s: wrong result", label);
    free(got);
    free(want);
}

static void case_verify(const coll_case &c, const int *rc_host)
{
    char label[256];
    case_label(c, label, sizeof(label));
    GPU_CHECK(rc_host[0] == 0, "%s: %d caller(s) got nonzero (%d)", label, rc_host[0], rc_host[1]);
    verify_dest(label, c.s, c.type, c.dregion, c.doff, c.salt);
    if (c.s.op == OP_INPLACE) return;
    size_t span = source_span(c), es = types[c.type].size;
    uint8_t *got = (uint8_t *)gpu_fetch(c.sregion, span), *want = (uint8_t *)malloc(span);
    GPU_CHECK(want != NULL, "out of host memory");
    memset(want, GPU_POISON, span);
    for (size_t i = 0; i < source_extent(c.s); i++) types[c.type].pat(want + GUARD + c.soff + i * es, me, i, c.salt);
    char what[320];
    snprintf(what, sizeof(what), "%s: source must stay intact", label);
    GPU_CHECK(gpu_cmp_bytes(what, got, want, span) == 0, "%s: source changed", label);
    free(got);
    free(want);
}

static void launch(const coll_case &c)
{
    coll_args a = case_args(c);
    switch (c.form) {
    case F_THREAD: coll_kernel<F_THREAD><<<1, BLOCK>>>(a, rc_dev); break;
    case F_WARP: coll_kernel<F_WARP><<<1, BLOCK>>>(a, rc_dev); break;
    default: coll_kernel<F_BLOCK><<<1, BLOCK>>>(a, rc_dev);
    }
    GPU_CHECK_KERNEL();
}

/* Every PE runs the same cases in the same order; members of c.s.t take part. */
static void run_case(coll_case c)
{
    case_prepare(c);
    GPU_CHECK_CUDA(cudaMemset(rc_dev, 0, 6 * sizeof(int)));
    gshmem_barrier_all(); /* every PE poisoned before anyone writes */
    int rc[2] = {0, 0};
    if (c.form == F_HOST) {
        int r = host_call(case_args(c));
        rc[0] = r != 0, rc[1] = r;
    } else {
        launch(c);
        GPU_CHECK_CUDA(cudaMemcpy(rc, rc_dev, sizeof(rc), cudaMemcpyDeviceToHost));
    }
    case_verify(c, rc);
}

static coll_case make_case(int op, int type, int form, const team_desc &t, size_t n, size_t doff, size_t soff)
{
    coll_case c = {};
    bool strided = op == OP_ALLTOALLS;
    c.s = op_shape{op, t, n, (int)(next_salt % (unsigned)t.size), strided ? 3 : 1, strided ? 2 : 1};
    c.type = type, c.form = form, c.doff = doff, c.soff = soff;
    c.dregion = arena, c.sregion = arena + 2 * cap;
    return c;
}

/* ---- 1, 2, 4. Sweeps ------------------------------------------------------------------------- */

struct size_case {
    size_t n, doff, soff;
};
static const size_case mem_sizes[] = {{0, 0, 0}, {1, 3, 1}, {1001, 5, 2}, {4096, 0, 0}, {LARGE, 3, 3}};

static void sweep_mem(const team_desc &t, int form, bool large)
{
    for (int op = 0; op < OP_COUNT; op++)
        for (const size_case &z : mem_sizes) {
            if (z.n == LARGE && (!large || (op == OP_ALLTOALLS && form != F_BLOCK))) continue;
            coll_case c = make_case(op, TY_MEM, form, t, z.n, z.doff, z.soff);
            if (op == OP_BROADCAST && z.n == 1001) { /* every root */
                for (int root = 0; root < t.size; root++) {
                    c.s.root = root;
                    run_case(c);
                }
            } else {
                run_case(c);
            }
        }
    if (me == 0) printf("mem collectives, %s form, team %s ok\n", form_names[form], t.name);
}

static void sweep_typed(const team_desc &t, int form)
{
    for (int type = 1; type < TY_COUNT; type++) {
        if (form != F_BLOCK && form != F_HOST && !few_type(type)) continue;
        size_t es = types[type].size;
        for (int op = 0; op < OP_COUNT; op++) run_case(make_case(op, type, form, t, 257, es, 2 * es));
    }
    if (me == 0) printf("typed collectives, %s form, team %s ok\n", form_names[form], t.name);
}

/* ---- 3. Three teams at once -------------------------------------------------------------------- */

static void test_three(const team_desc *teams)
{
    coll_case c[3];
    static const int ops[3] = {OP_FCOLLECT, OP_ALLTOALL, OP_COLLECT};
    for (int k = 0; k < 3; k++) {
        c[k] = make_case(ops[k], TY_MEM, k == 0 ? F_BLOCK : k == 1 ? F_WARP : F_THREAD, teams[k], 1001 + k, k, 0);
        c[k].dregion = arena + k * (cap / 4), c[k].sregion = arena + 2 * cap + k * (cap / 4);
        case_prepare(c[k]);
    }
    GPU_CHECK_CUDA(cudaMemset(rc_dev, 0, 6 * sizeof(int)));
    gshmem_barrier_all();
    three_kernel<<<3, BLOCK>>>(case_args(c[0]), case_args(c[1]), case_args(c[2]), rc_dev);
    GPU_CHECK_KERNEL();
    int rc[6];
    GPU_CHECK_CUDA(cudaMemcpy(rc, rc_dev, sizeof(rc), cudaMemcpyDeviceToHost));
    for (int k = 0; k < 3; k++) case_verify(c[k], rc + 2 * k);
    if (me == 0)
        printf("fcollect on %s, alltoall on %s, collect on %s from three blocks at once ok\n", teams[0].name,
               teams[1].name, teams[2].name);
}

/* ---- 5. Refusals ------------------------------------------------------------------------------- */

static void test_refusals(const team_desc &world)
{
    if (me == 0) printf("refusals: the library's error messages for a bad team and a bad root follow\n");
    coll_case bad_team = make_case(OP_ALLTOALL, TY_MEM, F_BLOCK, world, 16, 0, 0);
    bad_team.s.t.handle = GSHMEM_TEAM_INVALID;
    coll_case bad_root = make_case(OP_BROADCAST, TY_MEM, F_WARP, world, 16, 0, 0);
    bad_root.s.root = npes;
    const coll_case *cases[2] = {&bad_team, &bad_root};
    for (int k = 0; k < 2; k++) {
        GPU_CHECK_CUDA(cudaMemset(rc_dev, 0, 2 * sizeof(int)));
        launch(*cases[k]);
        int rc[2];
        GPU_CHECK_CUDA(cudaMemcpy(rc, rc_dev, sizeof(rc), cudaMemcpyDeviceToHost));
        int callers = k == 0 ? BLOCK : 32;
        GPU_CHECK(rc[0] == callers, "device %s with %s: %d of %d callers got nonzero", op_names[cases[k]->s.op],
                  k == 0 ? "GSHMEM_TEAM_INVALID" : "PE_root = n_pes", rc[0], callers);
        int r = host_call(case_args(*cases[k]));
        GPU_CHECK(r != 0, "host %s with %s returned 0", op_names[cases[k]->s.op],
                  k == 0 ? "GSHMEM_TEAM_INVALID" : "PE_root = n_pes");
    }
    gshmem_barrier_all();
    if (me == 0) printf("bad team and bad root refused by device and host ok\n");
}

/* ---- 6, 7. On-stream collectives ---------------------------------------------------------------- */

/* Checks the guarded span of one iteration; salt is base + *gen when gen is given. */
__global__ void verify_kernel(const uint8_t *region, size_t span, op_shape s, unsigned salt, const unsigned *gen,
                              gpu_log *log)
{
    unsigned sl = gen ? salt + *gen : salt;
    for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < span; p += (size_t)gridDim.x * blockDim.x) {
        int from = -1;
        size_t idx = 0;
        uint8_t want = GPU_POISON;
        if (p >= GUARD && result_source(s, p - GUARD, &from, &idx))
            want = gpu_pat<uint8_t>(desc_world(s.t, from), idx, sl);
        GPU_DCHECK(log, from < 0 ? -1 : desc_world(s.t, from), s.op * 100000 + (int)sl, p, want, region[p]);
    }
}

__global__ void fill_gen_kernel(uint8_t *p, size_t count, int pe, unsigned base, const unsigned *gen)
{
    unsigned salt = base + *gen;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        p[i] = gpu_pat<uint8_t>(pe, i, salt);
}

__global__ void bump_kernel(unsigned *gen) { ++*gen; }

static int stream_call(const op_shape &s, char *dest, const char *source, cudaStream_t st)
{
    switch (s.op) {
    case OP_BROADCAST: return gshmemx_broadcastmem_on_stream(s.t.handle, dest, source, s.n, s.root, st);
    case OP_COLLECT:
        return gshmemx_collectmem_on_stream(s.t.handle, dest, source, collect_count(s.n, s.t.my_idx, s.t.size), st);
    case OP_FCOLLECT: return gshmemx_fcollectmem_on_stream(s.t.handle, dest, source, s.n, st);
    default: return gshmemx_alltoallmem_on_stream(s.t.handle, dest, source, s.n, st);
    }
}

#define STREAM_ITERS 24

/* Iteration i writes region i % 2, so nothing waits between iterations: a member can
 * reach region i % 2 again only after every member entered i + 1, past its check of
 * i. Broadcast and collect add a team_sync: a root (or a member nobody receives from)
 * may otherwise run two calls ahead. The host checks the last iteration again. */
static void test_stream_loop(int op, const team_desc &t, size_t n, cudaStream_t st)
{
    op_shape s = {op, t, n, 1 % t.size, 1, 1};
    size_t span = 2 * GUARD + dest_extent(s);
    GPU_CHECK(span <= cap, "stream %s: %zu bytes do not fit", op_names[op], span);
    gpu_poison(arena, 2 * cap);
    gpu_log *log = gpu_log_new();
    gshmem_barrier_all();
    unsigned base = next_salt;
    next_salt += STREAM_ITERS;
    char *src = arena + 2 * cap;
    for (int i = 0; i < STREAM_ITERS; i++) {
        char *region = arena + (size_t)(i & 1) * cap;
        fill_kernel<uint8_t><<<256, 256, 0, st>>>((uint8_t *)src, source_extent(s), me, base + i);
        int rc = stream_call(s, region + GUARD, src, st);
        GPU_CHECK(rc == 0, "on-stream %s, iteration %d: returned %d", op_names[op], i, rc);
        verify_kernel<<<256, 256, 0, st>>>((const uint8_t *)region, span, s, base + i, NULL, log);
        if (op == OP_BROADCAST || op == OP_COLLECT) GPU_CHECK(gshmemx_team_sync_on_stream(t.handle, st) == 0, "sync");
    }
    GPU_CHECK_CUDA(cudaStreamSynchronize(st));
    char what[160];
    snprintf(what, sizeof(what),
             "on-stream %smem on %s, %zu bytes per member, %d iterations (what = op * 100000 + salt)", op_names[op],
             t.name, n, STREAM_ITERS);
    gpu_log_check(log, what, __FILE__);
    verify_dest(what, s, TY_MEM, arena + (size_t)((STREAM_ITERS - 1) & 1) * cap, 0, base + STREAM_ITERS - 1);
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(log));
    if (me == 0) printf("%s ok\n", what);
}

#define GRAPH_REPLAYS 12
#define GRAPH_BYTES 4099

/* One graph: fill (salt from *gen), the four collectives, their checks, a team_sync. */
static void test_graph(const team_desc &t, cudaStream_t st)
{
    static const int ops[4] = {OP_ALLTOALL, OP_FCOLLECT, OP_BROADCAST, OP_COLLECT};
    op_shape s[4];
    char *region[4], *src = arena + 2 * cap;
    unsigned *gen, base = next_salt;
    next_salt += GRAPH_REPLAYS + 1;
    GPU_CHECK_CUDA(cudaMalloc(&gen, sizeof(unsigned)));
    GPU_CHECK_CUDA(cudaMemset(gen, 0, sizeof(unsigned)));
    gpu_poison(arena, 2 * cap);
    gpu_log *log = gpu_log_new();
    gshmem_barrier_all();
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    GPU_CHECK_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    fill_gen_kernel<<<64, 256, 0, st>>>((uint8_t *)src, (size_t)t.size * GRAPH_BYTES, me, base, gen);
    for (int k = 0; k < 4; k++) {
        s[k] = op_shape{ops[k], t, GRAPH_BYTES, (k + 1) % t.size, 1, 1};
        region[k] = arena + k * (cap / 2);
        GPU_CHECK(stream_call(s[k], region[k] + GUARD, src, st) == 0, "capturing on-stream %s", op_names[ops[k]]);
    }
    for (int k = 0; k < 4; k++)
        verify_kernel<<<64, 256, 0, st>>>((const uint8_t *)region[k], 2 * GUARD + dest_extent(s[k]), s[k], base, gen,
                                          log);
    GPU_CHECK(gshmemx_team_sync_on_stream(t.handle, st) == 0, "capturing on-stream team_sync");
    /* The team's last member is still capturing (in the global mode) when the others'
     * first replays send to it: alltoall has no entry barrier. Through the proxy, its
     * tcp service thread then applies their puts and signals with CUDA copies, syncs and
     * kernels, which CUDA refuses while a capture in the global mode is open, unless the
     * thread relaxed its own capture mode (2026-12-05: a likely cause of this test's
     * rare failures without peer mappings). */
    if (t.my_idx == t.size - 1) usleep(20000);
    GPU_CHECK_CUDA(cudaStreamEndCapture(st, &graph));
    GPU_CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int r = 1; r <= GRAPH_REPLAYS; r++) {
        bump_kernel<<<1, 1, 0, st>>>(gen);
        GPU_CHECK_CUDA(cudaGraphLaunch(exec, st));
    }
    GPU_CHECK_CUDA(cudaStreamSynchronize(st));
    gpu_log_check(log, "graph of four on-stream collectives (what = op * 100000 + salt)", __FILE__);
    for (int k = 0; k < 4; k++)
        verify_dest("graph, last replay", s[k], TY_MEM, region[k], 0, base + GRAPH_REPLAYS);
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaGraphExecDestroy(exec));
    GPU_CHECK_CUDA(cudaGraphDestroy(graph));
    GPU_CHECK_CUDA(cudaFree(gen));
    GPU_CHECK_CUDA(cudaFree(log));
    if (me == 0)
        printf("graph of alltoall, fcollect, broadcast, collect on %s: %d replays ok\n", t.name, GRAPH_REPLAYS);
}

/* ---- Main ----------------------------------------------------------------------------------------- */

static team_desc split(int start, int stride, int size, const char *name)
{
    gshmem_team_t h = GSHMEM_TEAM_INVALID;
    GPU_CHECK(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, start, stride, size, NULL, 0, &h) == 0, "split %s", name);
    return team_desc{h, start, stride, size, h == GSHMEM_TEAM_INVALID ? -1 : (me - start) / stride, name};
}

int main(void)
{
    gpu_test_init("gpu_coll");
    me = gshmem_my_pe();
    npes = gshmem_n_pes();
    size_t big = (32u << 20) / (unsigned)npes < (8u << 20) ? (32u << 20) / (unsigned)npes : (8u << 20);
    cap = (size_t)npes * big + (64u << 10);
    arena = (char *)gshmem_malloc(3 * cap);
    GPU_CHECK(arena != NULL, "gshmem_malloc(%zu) failed (GSHMEM_SYMMETRIC_SIZE too small?)", 3 * cap);
    GPU_CHECK_CUDA(cudaMalloc(&rc_dev, 6 * sizeof(int)));

    team_desc world = {GSHMEM_TEAM_WORLD, 0, 1, npes, me, "WORLD"};
    team_desc even = split(0, 2, (npes + 1) / 2, "even PEs"), odd = split(1, 2, npes / 2, "odd PEs");
    const team_desc &parity = me % 2 ? odd : even;
    gshmem_team_t rh, ch;
    GPU_CHECK(gshmem_team_split_2d(GSHMEM_TEAM_WORLD, 2, NULL, 0, &rh, NULL, 0, &ch) == 0, "split_2d");
    team_desc row = {rh, me / 2 * 2, 1, npes - me / 2 * 2 < 2 ? 1 : 2, me % 2, "row (xrange 2)"};
    team_desc col = {ch, me % 2, 2, (npes - me % 2 + 1) / 2, me / 2, "column (xrange 2)"};

    for (int form = F_THREAD; form <= F_HOST; form++) sweep_mem(world, form, true);
    for (int form = F_THREAD; form <= F_HOST; form++) sweep_mem(parity, form, form == F_BLOCK || form == F_HOST);
    for (int form = F_THREAD; form <= F_HOST; form++) sweep_typed(world, form);
    sweep_typed(parity, F_BLOCK);
    const team_desc three[3] = {parity, row, col};
    test_three(three);
    test_refusals(world);

    cudaStream_t st;
    GPU_CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    static const int stream_ops[4] = {OP_ALLTOALL, OP_FCOLLECT, OP_BROADCAST, OP_COLLECT};
    for (int k = 0; k < 4; k++) {
        test_stream_loop(stream_ops[k], world, 1001, st);
        test_stream_loop(stream_ops[k], world, big, st);
    }
    test_stream_loop(OP_ALLTOALL, parity, 1001, st);
    test_graph(world, st);
    test_graph(row, st);

    GPU_CHECK_CUDA(cudaStreamDestroy(st));
    gshmem_team_destroy(ch);
    gshmem_team_destroy(rh);
    gshmem_team_destroy(odd.handle);
    gshmem_team_destroy(even.handle);
    GPU_CHECK_CUDA(cudaFree(rc_dev));
    gshmem_free(arena);
    gpu_test_pass("gpu_coll");
    return 0;
}
