/* Teams in device code, on the device heap:
 *  1. gshmem_team_my_pe/n_pes/translate_pe in a kernel on WORLD, SHARED, NODE, the even
 *     and odd strided teams, a team split from a strided one, split_2d rows and columns
 *     (xrange 2), split_2d with xrange 1 (a team of one per PE, and a copy of WORLD), a
 *     one-PE strided team, and handles that name no team; every answer is compared with
 *     a model built from the split arguments, and the host queries with the same model.
 *  2. team_sync / sync / barrier in thread, warp and block forms, 60 rounds per team, with
 *     skewed arrival (__nanosleep): each member writes its cells on every member,
 *     synchronizes (the sync forms after gshmem_quiet), and checks every cell of the
 *     round; afterwards the host checks the last two rounds and the untouched tail.
 *  3. four teams synchronized at the same time from four blocks of one kernel.
 *  4. every split team destroyed, then split again (the slots are reused, their device
 *     barrier words reset): queries on the old and new handles, barriers on the new.
 *  5. on-stream barrier and team_sync interleaved with kernels that write and check,
 *     with device-side barriers on the same team, and with the host's gshmem_team_sync. */
#include "gpu_check.cuh"

static int me, npes;
static unsigned next_salt = 1;

/* ---- Team models ------------------------------------------------------------------------- */

/* What the test expects of a team: members start + i * stride (world PEs), i < size.
 * handle is GSHMEM_TEAM_INVALID on PEs outside it; valid is 0 for handles that name no
 * team at all (queries must answer -1). */
struct team_desc {
    gshmem_team_t handle;
    int start, stride, size, my_idx, valid;
    const char *name;
};

static team_desc desc_make(const char *name, gshmem_team_t h, int start, int stride, int size)
{
    team_desc d = {h, start, stride, size, -1, h != GSHMEM_TEAM_INVALID, name};
    if (d.valid) d.my_idx = (me - start) / stride;
    return d;
}

__host__ __device__ inline int desc_world(const team_desc &t, int idx) { return t.start + idx * t.stride; }

static int model_index(const team_desc &t, int world)
{
    int off = world - t.start;
    if (!t.valid || off < 0 || off % t.stride != 0 || off / t.stride >= t.size) return -1;
    return off / t.stride;
}

static int model_translate(const team_desc &src, int src_pe, const team_desc &dst)
{
    if (!src.valid || !dst.valid || src_pe < 0 || src_pe >= src.size) return -1;
    return model_index(dst, desc_world(src, src_pe));
}

/* Splits parent and checks that exactly the PEs the arguments name got a team. */
static team_desc split_strided(const team_desc &parent, int start, int stride, int size, const char *name)
{
    gshmem_team_t h = GSHMEM_TEAM_INVALID;
    int rc = gshmem_team_split_strided(parent.handle, start, stride, size, NULL, 0, &h);
    GPU_CHECK(rc == 0, "gshmem_team_split_strided(%s, %d, %d, %d) for %s returned %d", parent.name, start, stride,
              size, name, rc);
    team_desc d = desc_make(name, GSHMEM_TEAM_INVALID, desc_world(parent, start), parent.stride * stride, size);
    int off = me - d.start;
    int member = parent.valid && off >= 0 && off % d.stride == 0 && off / d.stride < size;
    GPU_CHECK(member == (h != GSHMEM_TEAM_INVALID), "split %s: PE %d %s a member but got handle %d", name, me,
              member ? "is" : "is not", (int)h);
    return member ? desc_make(name, h, d.start, d.stride, d.size) : d;
}

/* split_2d(WORLD, xrange): this PE's row and column. */
static void split_2d(int xrange, team_desc *row, team_desc *col, const char *row_name, const char *col_name)
{
    gshmem_team_t x = GSHMEM_TEAM_INVALID, y = GSHMEM_TEAM_INVALID;
    int rc = gshmem_team_split_2d(GSHMEM_TEAM_WORLD, xrange, NULL, 0, &x, NULL, 0, &y);
    GPU_CHECK(rc == 0 && x != GSHMEM_TEAM_INVALID && y != GSHMEM_TEAM_INVALID,
              "gshmem_team_split_2d(WORLD, %d) returned %d, teams %d and %d", xrange, rc, (int)x, (int)y);
    int r0 = me / xrange * xrange, c0 = me % xrange;
    *row = desc_make(row_name, x, r0, 1, npes - r0 < xrange ? npes - r0 : xrange);
    *col = desc_make(col_name, y, c0, xrange, (npes - c0 + xrange - 1) / xrange);
}

/* SHARED and NODE depend on the machine: modelled from the host's answers. */
static team_desc desc_from_host(const char *name, gshmem_team_t h)
{
    int size = gshmem_team_n_pes(h), start = gshmem_team_translate_pe(h, 0, GSHMEM_TEAM_WORLD);
    int stride = size > 1 ? gshmem_team_translate_pe(h, 1, GSHMEM_TEAM_WORLD) - start : 1;
    GPU_CHECK(size >= 1 && start >= 0 && stride >= 1, "%s: host queries give size %d, start %d, stride %d", name,
              size, start, stride);
    return desc_make(name, h, start, stride, size);
}

/* ---- 1. Queries -------------------------------------------------------------------------- */

/* Per handle: my_pe, n_pes, then for i = -1 .. n: translate(t, i, WORLD),
 * translate(WORLD, i, t), translate(t, i, next handle). */
static int query_width(void) { return 2 + 3 * (npes + 2); }

__global__ void query_kernel(const gshmem_team_t *handles, int count, int n, int *out)
{
    int k = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (k >= count) return;
    int *row = out + (size_t)k * (2 + 3 * (n + 2));
    gshmem_team_t t = handles[k], next = handles[(k + 1) % count];
    row[0] = gshmem_team_my_pe(t);
    row[1] = gshmem_team_n_pes(t);
    for (int i = -1; i <= n; i++) {
        row[2 + (i + 1)] = gshmem_team_translate_pe(t, i, GSHMEM_TEAM_WORLD);
        row[2 + (n + 2) + (i + 1)] = gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, i, t);
        row[2 + 2 * (n + 2) + (i + 1)] = gshmem_team_translate_pe(t, i, next);
    }
}

static void query_rows_model(const team_desc *d, int count, int *out)
{
    team_desc world = desc_make("WORLD", GSHMEM_TEAM_WORLD, 0, 1, npes);
    for (int k = 0; k < count; k++) {
        int *row = out + (size_t)k * query_width();
        const team_desc &t = d[k], &next = d[(k + 1) % count];
        row[0] = t.valid ? t.my_idx : -1;
        row[1] = t.valid ? t.size : -1;
        for (int i = -1; i <= npes; i++) {
            row[2 + (i + 1)] = model_translate(t, i, world);
            row[2 + (npes + 2) + (i + 1)] = model_translate(world, i, t);
            row[2 + 2 * (npes + 2) + (i + 1)] = model_translate(t, i, next);
        }
    }
}

static void query_rows_host(const team_desc *d, int count, int *out)
{
    for (int k = 0; k < count; k++) {
        int *row = out + (size_t)k * query_width();
        gshmem_team_t t = d[k].handle, next = d[(k + 1) % count].handle;
        row[0] = gshmem_team_my_pe(t);
        row[1] = gshmem_team_n_pes(t);
        for (int i = -1; i <= npes; i++) {
            row[2 + (i + 1)] = gshmem_team_translate_pe(t, i, GSHMEM_TEAM_WORLD);
            row[2 + (npes + 2) + (i + 1)] = gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, i, t);
            row[2 + 2 * (npes + 2) + (i + 1)] = gshmem_team_translate_pe(t, i, next);
        }
    }
}

static void test_queries(const team_desc *d, int count, const char *phase)
{
    size_t w = (size_t)query_width(), bytes = (size_t)count * w * sizeof(int);
    gshmem_team_t *handles_h = (gshmem_team_t *)malloc(count * sizeof(gshmem_team_t)), *handles;
    int *want = (int *)malloc(bytes), *host = (int *)malloc(bytes), *dev;
    GPU_CHECK(handles_h && want && host, "out of host memory");
    for (int k = 0; k < count; k++) handles_h[k] = d[k].handle;
    GPU_CHECK_CUDA(cudaMalloc(&handles, count * sizeof(gshmem_team_t)));
    GPU_CHECK_CUDA(cudaMalloc(&dev, bytes));
    GPU_CHECK_CUDA(cudaMemcpy(handles, handles_h, count * sizeof(gshmem_team_t), cudaMemcpyHostToDevice));
    gpu_poison(dev, bytes);
    query_kernel<<<1, 64>>>(handles, count, npes, dev);
    GPU_CHECK_KERNEL();
    int *got = (int *)gpu_fetch(dev, bytes);
    query_rows_model(d, count, want);
    query_rows_host(d, count, host);
    size_t bad = 0;
    for (int k = 0; k < count; k++) {
        char what[160];
        snprintf(what, sizeof(what), "%s: device queries on %s (handle %d; next %s)", phase, d[k].name,
                 (int)d[k].handle, d[(k + 1) % count].name);
        bad += gpu_cmp_elems(what, got + k * w, want + k * w, sizeof(int), w);
        snprintf(what, sizeof(what), "%s: host queries on %s (handle %d)", phase, d[k].name, (int)d[k].handle);
        bad += gpu_cmp_elems(what, host + k * w, want + k * w, sizeof(int), w);
    }
    GPU_CHECK(bad == 0, "%s: %zu query answers wrong (row layout: my_pe, n_pes, then for i = -1..%d: "
                        "translate(t,i,WORLD), translate(WORLD,i,t), translate(t,i,next))", phase, bad, npes);
    free(got);
    free(want);
    free(host);
    free(handles_h);
    GPU_CHECK_CUDA(cudaFree(dev));
    GPU_CHECK_CUDA(cudaFree(handles));
    if (me == 0) printf("%s: device and host queries on %d handles ok\n", phase, count);
}

/* ---- 2. Rounds of write, synchronize, check ------------------------------------------------ */

enum { F_THREAD, F_WARP, F_BLOCK };
enum { K_BARRIER, K_SYNC };
static const char *const form_names[] = {"thread", "warp", "block"};
static const char *const kind_names[] = {"barrier", "quiet + team_sync/sync"};

#define CELLS 33   /* ints each member writes on each member per round */
#define ROUNDS 60
#define BLOCK 96   /* threads; the warp form runs on warp 1, the thread form on the last thread */

__host__ __device__ inline int cell_value(int pe, int k, int round, unsigned salt)
{
    return gpu_pat<int>(pe, (size_t)k, salt * 4096u + (unsigned)round);
}

template <int F> __device__ inline unsigned grp_rank()
{
    return F == F_THREAD ? 0 : F == F_WARP ? threadIdx.x & 31 : threadIdx.x;
}
template <int F> __device__ inline unsigned grp_size() { return F == F_THREAD ? 1 : F == F_WARP ? 32 : blockDim.x; }
template <int F> __device__ inline void grp_sync()
{
    if (F == F_WARP) __syncwarp();
    else if (F == F_BLOCK) __syncthreads();
}

/* buf holds two planes (round parity) of t.size * CELLS ints. */
template <int F> __device__ void team_write(team_desc t, int *buf, int round, unsigned salt)
{
    int *plane = buf + (size_t)(round & 1) * t.size * CELLS;
    int mine = desc_world(t, t.my_idx);
    if (grp_rank<F>() == 0 && (round * 7 + t.my_idx * 3) % 4 == 0) /* skewed arrival */
        for (int s = 0; s < (round + t.my_idx) % 5; s++) __nanosleep(4000);
    for (int j = 0; j < t.size; j++) {
        int pe = desc_world(t, (t.my_idx + 1 + j) % t.size);
        for (unsigned k = grp_rank<F>(); k < CELLS; k += grp_size<F>())
            gshmem_int_p(&plane[t.my_idx * CELLS + k], cell_value(mine, (int)k, round, salt), pe);
    }
}

template <int F> __device__ void team_check(team_desc t, const int *buf, int round, unsigned salt, gpu_log *log)
{
    const int *plane = buf + (size_t)(round & 1) * t.size * CELLS;
    for (unsigned c = grp_rank<F>(); c < (unsigned)t.size * CELLS; c += grp_size<F>()) {
        int from = desc_world(t, (int)(c / CELLS));
        int got = *(const volatile int *)&plane[c];
        GPU_DCHECK(log, from, round, c, cell_value(from, (int)(c % CELLS), round, salt), got);
    }
    grp_sync<F>();
}

template <int F> __device__ int team_sync_call(gshmem_team_t team, int kind, int round)
{
    if (kind == K_SYNC) gshmem_quiet();
    if constexpr (F == F_THREAD) {
        if (kind == K_BARRIER) return gshmem_barrier(team);
        return (round & 1) ? gshmem_sync(team) : gshmem_team_sync(team);
    } else if constexpr (F == F_WARP) {
        if (kind == K_BARRIER) return gshmemx_barrier_warp(team);
        return (round & 1) ? gshmemx_sync_warp(team) : gshmemx_team_sync_warp(team);
    } else {
        if (kind == K_BARRIER) return gshmemx_barrier_block(team);
        return (round & 1) ? gshmemx_sync_block(team) : gshmemx_team_sync_block(team);
    }
}

template <int F> __device__ void team_rounds(team_desc t, int kind, int *buf, int first, int rounds, unsigned salt,
                                             gpu_log *log)
{
    for (int r = first; r < first + rounds; r++) {
        team_write<F>(t, buf, r, salt);
        int rc = team_sync_call<F>(t.handle, kind, r);
        GPU_DCHECK(log, -1, r, -1, 0, rc);
        team_check<F>(t, buf, r, salt, log);
    }
}

template <int F> __global__ void rounds_kernel(team_desc t, int kind, int *buf, int first, int rounds, unsigned salt,
                                               gpu_log *log)
{
    if (F == F_THREAD && threadIdx.x != blockDim.x - 1) return;
    if (F == F_WARP && threadIdx.x / 32 != 1) return;
    team_rounds<F>(t, kind, buf, first, rounds, salt, log);
}

/* The last two rounds' planes hold their values; the rest of the region keeps the poison. */
static void host_check_planes(const char *what, const int *dev, size_t region_ints, const team_desc &t, int last,
                              unsigned salt)
{
    int *got = (int *)gpu_fetch(dev, region_ints * sizeof(int)), *want = (int *)malloc(region_ints * sizeof(int));
    GPU_CHECK(want != NULL, "out of host memory");
    memset(want, GPU_POISON, region_ints * sizeof(int));
    for (int r = last - 1; r <= last; r++)
        for (int c = 0; c < t.size * CELLS; c++)
            want[(size_t)(r & 1) * t.size * CELLS + c] = cell_value(desc_world(t, c / CELLS), c % CELLS, r, salt);
    size_t bad = gpu_cmp_elems(what, got, want, sizeof(int), region_ints);
    GPU_CHECK(bad == 0, "%s: final planes wrong", what);
    free(got);
    free(want);
}

static int *cells;        /* symmetric: 4 regions (concurrent test) */
static size_t region_ints; /* 2 planes of npes * CELLS, plus a tail that nobody writes */

static void run_rounds(const team_desc &t, int form, int kind, int rounds)
{
    unsigned salt = next_salt++;
    gpu_poison(cells, region_ints * sizeof(int));
    gshmem_barrier_all();
    if (t.valid) {
        gpu_log *log = gpu_log_new();
        switch (form) {
        case F_THREAD: rounds_kernel<F_THREAD><<<1, BLOCK>>>(t, kind, cells, 0, rounds, salt, log); break;
        case F_WARP: rounds_kernel<F_WARP><<<1, BLOCK>>>(t, kind, cells, 0, rounds, salt, log); break;
        default: rounds_kernel<F_BLOCK><<<1, BLOCK>>>(t, kind, cells, 0, rounds, salt, log);
        }
        GPU_CHECK_KERNEL();
        char what[160];
        snprintf(what, sizeof(what), "%s %s form on %s (what = round)", kind_names[kind], form_names[form], t.name);
        gpu_log_check(log, what, __FILE__);
        host_check_planes(what, cells, region_ints, t, rounds - 1, salt);
        GPU_CHECK_CUDA(cudaFree(log));
    }
    gshmem_barrier_all();
}

static void test_rounds(const team_desc *d, int count, int rounds)
{
    for (int k = 0; k < count; k++)
        for (int form = F_THREAD; form <= F_BLOCK; form++)
            for (int kind = K_BARRIER; kind <= K_SYNC; kind++) run_rounds(d[k], form, kind, rounds);
    if (me == 0) printf("device team barriers and syncs, 3 forms, %d teams, %d rounds each ok\n", count, rounds);
}

/* ---- 3. Four teams at once ------------------------------------------------------------------ */

struct four_teams {
    team_desc t[4];
};

/* Block b synchronizes team t[b], each with its own form and region. */
__global__ void concurrent_kernel(four_teams ft, int *buf, size_t region, int rounds, unsigned salt, gpu_log *log)
{
    int b = (int)blockIdx.x;
    int *mine = buf + (size_t)b * region;
    switch (b) {
    case 0: team_rounds<F_BLOCK>(ft.t[0], K_BARRIER, mine, 0, rounds, salt + 0, log); break;
    case 1:
        if (threadIdx.x == 0) team_rounds<F_THREAD>(ft.t[1], K_BARRIER, mine, 0, rounds, salt + 1, log);
        break;
    case 2:
        if (threadIdx.x < 32) team_rounds<F_WARP>(ft.t[2], K_SYNC, mine, 0, rounds, salt + 2, log);
        break;
    default: team_rounds<F_BLOCK>(ft.t[3], K_SYNC, mine, 0, rounds, salt + 3, log);
    }
}

static void test_concurrent(const four_teams &ft)
{
    unsigned salt = next_salt;
    next_salt += 4;
    gpu_poison(cells, 4 * region_ints * sizeof(int));
    gpu_log *log = gpu_log_new();
    gshmem_barrier_all();
    concurrent_kernel<<<4, BLOCK>>>(ft, cells, region_ints, ROUNDS * 2, salt, log);
    GPU_CHECK_KERNEL();
    gpu_log_check(log, "four teams at once (block b: team b; what = round)", __FILE__);
    for (int b = 0; b < 4; b++) {
        char what[128];
        snprintf(what, sizeof(what), "four teams at once: block %d on %s", b, ft.t[b].name);
        host_check_planes(what, cells + b * region_ints, region_ints, ft.t[b], ROUNDS * 2 - 1, salt + b);
    }
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(log));
    if (me == 0)
        printf("barriers on %s, %s, %s, %s from four blocks at once ok\n", ft.t[0].name, ft.t[1].name,
               ft.t[2].name, ft.t[3].name);
}

/* ---- 5. On-stream team_sync and barrier ------------------------------------------------------ */

__global__ void write_kernel(team_desc t, int *buf, int round, unsigned salt)
{
    team_write<F_BLOCK>(t, buf, round, salt);
}
__global__ void check_kernel(team_desc t, const int *buf, int round, unsigned salt, gpu_log *log)
{
    team_check<F_BLOCK>(t, buf, round, salt, log);
}

#define STREAM_ROUNDS 40

/* Round r: 0 mod 4 on-stream barrier; 1 quiet + team_sync on the stream; 2 a kernel
 * with the device-side block barrier (the same team words); 3 as 1, then the host's
 * gshmem_team_sync (its own words) every 8 rounds. */
static void test_on_stream(const team_desc &t, cudaStream_t s)
{
    unsigned salt = next_salt++;
    gpu_poison(cells, region_ints * sizeof(int));
    gshmem_barrier_all();
    gpu_log *log = gpu_log_new();
    for (int r = 0; r < STREAM_ROUNDS; r++) {
        if (r % 4 == 2) {
            rounds_kernel<F_BLOCK><<<1, BLOCK, 0, s>>>(t, K_BARRIER, cells, r, 1, salt, log);
            continue;
        }
        write_kernel<<<1, BLOCK, 0, s>>>(t, cells, r, salt);
        int rc;
        if (r % 4 == 0) {
            rc = gshmemx_barrier_on_stream(t.handle, s);
        } else {
            gshmemx_quiet_on_stream(s);
            rc = gshmemx_team_sync_on_stream(t.handle, s);
        }
        GPU_CHECK(rc == 0, "on-stream %s on %s, round %d: returned %d", r % 4 ? "team_sync" : "barrier", t.name, r, rc);
        check_kernel<<<1, BLOCK, 0, s>>>(t, cells, r, salt, log);
        if (r % 8 == 3) {
            GPU_CHECK_CUDA(cudaStreamSynchronize(s));
            rc = gshmem_team_sync(t.handle);
            GPU_CHECK(rc == 0, "host gshmem_team_sync on %s returned %d", t.name, rc);
        }
    }
    GPU_CHECK_CUDA(cudaStreamSynchronize(s));
    char what[128];
    snprintf(what, sizeof(what), "on-stream barrier/team_sync on %s (what = round)", t.name);
    gpu_log_check(log, what, __FILE__);
    host_check_planes(what, cells, region_ints, t, STREAM_ROUNDS - 1, salt);
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(log));
    if (me == 0) printf("%s: %d rounds ok\n", what, STREAM_ROUNDS);
}

/* ---- Main ------------------------------------------------------------------------------------ */

enum { T_WORLD, T_SHARED, T_NODE, T_EVEN, T_ODD, T_SUB, T_ROW, T_COL, T_ONE, T_ALL, T_LAST, T_NONE1, T_NONE2, T_NONE3,
       T_COUNT };
#define FIRST_SPLIT T_EVEN
#define LAST_SPLIT T_LAST

static void make_teams(team_desc *d)
{
    d[T_WORLD] = desc_make("WORLD", GSHMEM_TEAM_WORLD, 0, 1, npes);
    d[T_SHARED] = desc_from_host("SHARED", GSHMEM_TEAM_SHARED);
    d[T_NODE] = desc_from_host("NODE", GSHMEMX_TEAM_NODE);
    d[T_EVEN] = split_strided(d[T_WORLD], 0, 2, (npes + 1) / 2, "even PEs");
    d[T_ODD] = split_strided(d[T_WORLD], 1, 2, npes / 2, "odd PEs");
    /* Split from a strided team: its members but the first (or the only one). */
    const team_desc &par = d[me % 2 ? T_ODD : T_EVEN];
    d[T_SUB] = split_strided(par, par.size > 1 ? 1 : 0, 1, par.size > 1 ? par.size - 1 : 1,
                             me % 2 ? "odd PEs but the first" : "even PEs but the first");
    split_2d(2, &d[T_ROW], &d[T_COL], "row (xrange 2)", "column (xrange 2)");
    split_2d(1, &d[T_ONE], &d[T_ALL], "team of one (xrange 1)", "all (xrange 1 column)");
    d[T_LAST] = split_strided(d[T_WORLD], npes - 1, 1, 1, "last PE alone");
    d[T_NONE1] = desc_make("GSHMEM_TEAM_INVALID", GSHMEM_TEAM_INVALID, 0, 1, 1);
    d[T_NONE2] = team_desc{40, 0, 1, 1, -1, 0, "handle 40 (never created)"};
    d[T_NONE3] = team_desc{1000, 0, 1, 1, -1, 0, "handle 1000 (out of range)"};
}

/* Destroys the split teams in one order on every PE; their handles must then answer -1. */
static int destroy_teams(team_desc *d, int first, int last, const char *phase)
{
    int highest = -1;
    for (int k = last; k >= first; k--) {
        if (d[k].handle > highest) highest = d[k].handle;
        gshmem_team_destroy(d[k].handle);
        d[k].valid = 0; /* its handle now names no team */
    }
    test_queries(d + first, last - first + 1, phase);
    return highest;
}

int main(void)
{
    gpu_test_init("gpu_team");
    me = gshmem_my_pe();
    npes = gshmem_n_pes();
    GPU_CHECK(npes >= 2, "gpu_team needs at least 2 PEs (got %d)", npes);
    region_ints = 2 * (size_t)npes * CELLS + 64;
    cells = (int *)gshmem_malloc(4 * region_ints * sizeof(int));
    GPU_CHECK(cells != NULL, "gshmem_malloc of %zu bytes failed", 4 * region_ints * sizeof(int));

    team_desc d[T_COUNT];
    make_teams(d);
    test_queries(d, T_COUNT, "teams as split");
    test_rounds(d, T_NONE1, ROUNDS);
    four_teams ft = {{d[T_WORLD], d[T_ROW], d[T_COL], d[me % 2 ? T_ODD : T_EVEN]}};
    test_concurrent(ft);

    cudaStream_t s;
    GPU_CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const int on_stream[] = {T_WORLD, T_ROW, me % 2 ? T_ODD : T_EVEN, T_ONE};
    for (int k = 0; k < 4; k++) test_on_stream(d[on_stream[k]], s);

    int highest = destroy_teams(d, FIRST_SPLIT, LAST_SPLIT, "after destroy");
    team_desc n[5];
    n[0] = split_strided(d[T_WORLD], 1, 1, npes - 1, "PEs 1..n-1 (re-split)");
    split_2d(2, &n[1], &n[2], "row (re-split)", "column (re-split)");
    n[3] = split_strided(d[T_WORLD], 0, npes - 1, 2, "first and last PE (re-split)");
    n[4] = split_strided(d[T_WORLD], 0, 1, 1, "PE 0 alone (re-split)");
    for (int k = 0; k < 5; k++)
        GPU_CHECK(n[k].handle <= highest, "%s: handle %d, but destroyed slots up to %d were free", n[k].name,
                  (int)n[k].handle, highest);
    test_queries(n, 5, "teams re-split into destroyed slots");
    test_rounds(n, 5, ROUNDS * 2);
    test_on_stream(n[1], s);
    for (int k = 4; k >= 0; k--) gshmem_team_destroy(n[k].handle);

    GPU_CHECK_CUDA(cudaStreamDestroy(s));
    gshmem_free(cells);
    gpu_test_pass("gpu_team");
    return 0;
}
