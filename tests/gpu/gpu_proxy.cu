/* The device API through the proxy (run with GSHMEM_DISABLE_P2P=1: every peer is then a
 * PROXY peer, reached through the request ring, the proxy thread and tcp). Every
 * thread of several blocks works on every PE at once:
 *  1. p / g for 1-, 2-, 4- and 8-byte types and double.
 *  2. put (thread, warp, block; blocking, then _nbi + quiet) of odd sizes at odd
 *     offsets into poisoned destinations; iput; every byte of each destination checked
 *     (written ones against the pattern, the rest still poison).
 *  3. get (thread, warp, block) and iget into private memory, checked in the kernel.
 *  4. putmem_signal (blocking, SET on a per-thread word) and putmem_signal_nbi (ADD on
 *     a per-sender counter); receivers wait in the kernel and check every byte.
 *  5. Atomics, 4 and 8 bytes: fetch_add / add / inc storms (exact totals, distinct
 *     fetched values), a bit per thread through fetch_or / xor / or / fetch_and /
 *     fetch_xor (each fetched value shows the thread's bit as its own earlier requests
 *     left it), and set / fetch / swap / compare_swap (miss and hit) on private words,
 *     uint32, uint64, float and double.
 *  6. Device barriers (block and warp forms): rounds of p to every PE, barrier, check.
 * Without GSHMEM_DISABLE_P2P the same checks run over whatever paths the peers have. */
#include "gpu_check.cuh"

#include <algorithm>
#include <vector>

static int me, npes;

#define BLOCKS 4
#define THREADS 128
#define NT (BLOCKS * THREADS)
#define WARPS (NT / 32)
#define MAX_PES 16 /* the atomics phase keeps a row per PE */

/* ---- 1. p / g ------------------------------------------------------------------------- */

struct pg_slots { /* per sender, per thread */
    uint8_t u8[NT];
    short s16[NT];
    int i32[NT];
    long long i64[NT];
    double d[NT];
};

__global__ void pg_kernel(pg_slots *slots, const pg_slots *src, gpu_log *log)
{
    int my = gshmem_my_pe(), n = gshmem_n_pes();
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < n; k++) {
        int q = (my + k) % n;
        gshmem_uint8_p(&slots[my].u8[gid], gpu_pat<uint8_t>(my, gid, 1), q);
        gshmem_short_p(&slots[my].s16[gid], gpu_pat<short>(my, gid, 2), q);
        gshmem_int_p(&slots[my].i32[gid], gpu_pat<int>(my, gid, 3), q);
        gshmem_longlong_p(&slots[my].i64[gid], gpu_pat<long long>(my, gid, 4), q);
        gshmem_double_p(&slots[my].d[gid], gpu_pat<double>(my, gid, 5), q);
        /* src was filled by q before the barrier that preceded this kernel */
        unsigned j = (gid * 7 + 3) % NT;
        GPU_DCHECK(log, q, 1, j, gpu_pat<uint8_t>(q, j, 11), gshmem_uint8_g(&src->u8[j], q));
        GPU_DCHECK(log, q, 2, j, gpu_pat<short>(q, j, 12), gshmem_short_g(&src->s16[j], q));
        GPU_DCHECK(log, q, 3, j, gpu_pat<int>(q, j, 13), gshmem_int_g(&src->i32[j], q));
        GPU_DCHECK(log, q, 4, j, gpu_pat<long long>(q, j, 14), gshmem_longlong_g(&src->i64[j], q));
        GPU_DCHECK(log, q, 5, j, gpu_pat<double>(q, j, 15), gshmem_double_g(&src->d[j], q));
    }
    gshmem_quiet();
}

__global__ void pg_fill(pg_slots *src)
{
    int my = gshmem_my_pe();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    src->u8[i] = gpu_pat<uint8_t>(my, i, 11);
    src->s16[i] = gpu_pat<short>(my, i, 12);
    src->i32[i] = gpu_pat<int>(my, i, 13);
    src->i64[i] = gpu_pat<long long>(my, i, 14);
    src->d[i] = gpu_pat<double>(my, i, 15);
}

static void test_pg(gpu_log *log)
{
    pg_slots *slots = (pg_slots *)gshmem_malloc(sizeof(pg_slots) * npes);
    pg_slots *src = (pg_slots *)gshmem_malloc(sizeof(pg_slots));
    gpu_poison(slots, sizeof(pg_slots) * npes);
    pg_fill<<<BLOCKS, THREADS>>>(src);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all();
    pg_kernel<<<BLOCKS, THREADS>>>(slots, src, log);
    gpu_log_check(log, "p/g", __FILE__);
    gshmem_barrier_all();
    pg_slots *h = (pg_slots *)gpu_fetch(slots, sizeof(pg_slots) * npes);
    size_t bad = 0;
    for (int q = 0; q < npes; q++) {
        pg_slots e;
        for (unsigned i = 0; i < NT; i++) {
            e.u8[i] = gpu_pat<uint8_t>(q, i, 1);
            e.s16[i] = gpu_pat<short>(q, i, 2);
            e.i32[i] = gpu_pat<int>(q, i, 3);
            e.i64[i] = gpu_pat<long long>(q, i, 4);
            e.d[i] = gpu_pat<double>(q, i, 5);
        }
        char what[64];
        snprintf(what, sizeof what, "p from PE %d", q);
        bad += gpu_cmp_bytes(what, (const uint8_t *)&h[q], (const uint8_t *)&e, sizeof(e));
    }
    GPU_CHECK(bad == 0, "p: %zu bytes wrong", bad);
    free(h);
    gshmem_free(src);
    gshmem_free(slots);
    if (me == 0) printf("p/g: ok\n");
}

/* ---- 2./3. put and get ---------------------------------------------------------------- */

/* One sender's region on a receiver: a unit per thread, per warp and per block. */
#define TU 128u
#define WU 4096u
#define BU 65536u
#define IPU 32u /* iput: ints per thread */
#define REGION (NT * TU + WARPS * WU + BLOCKS * BU + NT * IPU * 4)
#define SRC_BYTES (REGION + 64)

struct piece {
    unsigned dst, len, src; /* offset in the region, bytes, offset in the sender's source */
};

/* kind 0: thread gid, 1: warp, 2: block. */
__host__ __device__ inline piece put_piece(int kind, unsigned i)
{
    piece p;
    if (kind == 0) {
        p.len = 1 + (i * 13) % (TU - 16);
        p.dst = i * TU + i % 8;
        p.src = i * TU + (i % 3);
    } else if (kind == 1) {
        p.len = 1000 + (i * 37) % (WU - 1100);
        p.dst = NT * TU + i * WU + i % 16;
        p.src = NT * TU + i * WU + 16 - i % 16;
    } else {
        p.len = 40000 + i * 1001;
        p.dst = NT * TU + WARPS * WU + i * BU + i % 16;
        p.src = NT * TU + WARPS * WU + i * BU + 8;
    }
    return p;
}
/* iput: thread gid's ints go to every second int of its unit, from every third of the source. */
#define IP_BASE (NT * TU + WARPS * WU + BLOCKS * BU)
#define IP_N 10

__global__ void src_fill(uint8_t *src, size_t n, unsigned salt)
{
    int my = gshmem_my_pe();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        src[i] = gpu_pat8(my, i, salt);
}

template <bool NBI> __global__ void put_kernel(uint8_t *regions, const uint8_t *src)
{
    int my = gshmem_my_pe(), n = gshmem_n_pes();
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x, warp = gid / 32;
    for (int k = 0; k < n; k++) {
        int q = (my + k) % n;
        uint8_t *r = regions + (size_t)my * REGION;
        piece t = put_piece(0, gid), w = put_piece(1, warp), b = put_piece(2, blockIdx.x);
        if (NBI) {
            gshmem_putmem_nbi(r + t.dst, src + t.src, t.len, q);
            gshmemx_putmem_nbi_warp(r + w.dst, src + w.src, w.len, q);
            gshmemx_putmem_nbi_block(r + b.dst, src + b.src, b.len, q);
        } else {
            gshmem_putmem(r + t.dst, src + t.src, t.len, q);
            gshmemx_putmem_warp(r + w.dst, src + w.src, w.len, q);
            gshmemx_putmem_block(r + b.dst, src + b.src, b.len, q);
            gshmem_int_iput((int *)(r + IP_BASE) + gid * IPU, (const int *)src + gid * IPU, 2, 3, IP_N, q);
        }
    }
    gshmem_quiet();
}

static void put_expect(std::vector<uint8_t> &e, int q, unsigned salt, bool with_iput)
{
    std::fill(e.begin(), e.end(), (uint8_t)GPU_POISON);
    for (int kind = 0; kind < 3; kind++) {
        unsigned count = kind == 0 ? NT : kind == 1 ? WARPS : BLOCKS;
        for (unsigned i = 0; i < count; i++) {
            piece p = put_piece(kind, i);
            for (unsigned k = 0; k < p.len; k++) e[p.dst + k] = gpu_pat8(q, p.src + k, salt);
        }
    }
    if (!with_iput) return;
    for (unsigned g = 0; g < NT; g++)
        for (unsigned k = 0; k < IP_N; k++)
            for (unsigned b = 0; b < 4; b++)
                e[IP_BASE + (g * IPU + 2 * k) * 4 + b] = gpu_pat8(q, (g * IPU + 3 * k) * 4 + b, salt);
}

static void test_put(bool nbi)
{
    unsigned salt = nbi ? 22 : 21;
    uint8_t *regions = (uint8_t *)gshmem_malloc((size_t)REGION * npes);
    uint8_t *src = (uint8_t *)gshmem_malloc(SRC_BYTES);
    gpu_poison(regions, (size_t)REGION * npes);
    src_fill<<<64, 256>>>(src, SRC_BYTES, salt);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all();
    if (nbi) put_kernel<true><<<BLOCKS, THREADS>>>(regions, src);
    else put_kernel<false><<<BLOCKS, THREADS>>>(regions, src);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all();
    uint8_t *h = (uint8_t *)gpu_fetch(regions, (size_t)REGION * npes);
    std::vector<uint8_t> e(REGION);
    size_t bad = 0;
    for (int q = 0; q < npes; q++) {
        put_expect(e, q, salt, !nbi);
        char what[64];
        snprintf(what, sizeof what, "put%s from PE %d", nbi ? "_nbi" : "", q);
        bad += gpu_cmp_bytes(what, h + (size_t)q * REGION, e.data(), REGION);
    }
    GPU_CHECK(bad == 0, "put%s: %zu bytes wrong", nbi ? "_nbi" : "", bad);
    free(h);
    gshmem_barrier_all(); /* nobody reads our source any more */
    gshmem_free(src);
    gshmem_free(regions);
    if (me == 0) printf("put%s: ok\n", nbi ? "_nbi + quiet" : " + iput");
}

/* Every thread gets its pieces of every PE's source into private memory (poisoned),
 * then checks every byte of its unit. */
__global__ void get_kernel(uint8_t *priv, const uint8_t *src, unsigned salt, gpu_log *log)
{
    int my = gshmem_my_pe(), n = gshmem_n_pes();
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x, warp = gid / 32, lane = threadIdx.x % 32;
    for (int k = 0; k < n; k++) {
        int q = (my + 1 + k) % n;
        uint8_t *mine = priv + (size_t)q * REGION;
        piece t = put_piece(0, gid), w = put_piece(1, warp), b = put_piece(2, blockIdx.x);
        gshmem_getmem(mine + t.dst, src + t.src, t.len, q);
        gshmemx_getmem_warp(mine + w.dst, src + w.src, w.len, q);
        if (k % 2) gshmemx_getmem_block(mine + b.dst, src + b.src, b.len, q);
        else {
            gshmemx_getmem_nbi_block(mine + b.dst, src + b.src, b.len, q);
            gshmem_quiet();
            __syncthreads();
        }
        gshmem_int_iget((int *)(mine + IP_BASE) + gid * IPU, (const int *)src + gid * IPU, 2, 3, IP_N, q);
        for (unsigned i = 0; i < TU; i++) {
            unsigned off = gid * TU + i;
            bool in = off >= t.dst && off < t.dst + t.len;
            uint8_t want = in ? gpu_pat8(q, t.src + (off - t.dst), salt) : (uint8_t)GPU_POISON;
            if (GPU_DCHECK(log, q, 10, off, want, mine[off])) break;
        }
        for (unsigned i = lane; i < WU; i += 32) {
            unsigned off = NT * TU + warp * WU + i;
            bool in = off >= w.dst && off < w.dst + w.len;
            uint8_t want = in ? gpu_pat8(q, w.src + (off - w.dst), salt) : (uint8_t)GPU_POISON;
            if (GPU_DCHECK(log, q, 11, off, want, mine[off])) break;
        }
        for (unsigned i = threadIdx.x; i < BU; i += blockDim.x) {
            unsigned off = NT * TU + WARPS * WU + blockIdx.x * BU + i;
            bool in = off >= b.dst && off < b.dst + b.len;
            uint8_t want = in ? gpu_pat8(q, b.src + (off - b.dst), salt) : (uint8_t)GPU_POISON;
            if (GPU_DCHECK(log, q, 12, off, want, mine[off])) break;
        }
        for (unsigned kk = 0; kk < IPU; kk++) {
            const int *got = (const int *)(mine + IP_BASE) + gid * IPU + kk;
            bool in = kk % 2 == 0 && kk / 2 < IP_N;
            uint8_t want[4];
            for (unsigned byte = 0; byte < 4; byte++)
                want[byte] = in ? gpu_pat8(q, (gid * IPU + 3 * (kk / 2)) * 4 + byte, salt) : (uint8_t)GPU_POISON;
            int w4;
            memcpy(&w4, want, 4);
            if (GPU_DCHECK(log, q, 13, kk, w4, *got)) break;
        }
    }
}

static void test_get(gpu_log *log)
{
    unsigned salt = 23;
    uint8_t *src = (uint8_t *)gshmem_malloc(SRC_BYTES);
    uint8_t *priv;
    GPU_CHECK_CUDA(cudaMalloc(&priv, (size_t)REGION * npes));
    gpu_poison(priv, (size_t)REGION * npes);
    src_fill<<<64, 256>>>(src, SRC_BYTES, salt);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all();
    get_kernel<<<BLOCKS, THREADS>>>(priv, src, salt, log);
    gpu_log_check(log, "get", __FILE__);
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(priv));
    gshmem_free(src);
    if (me == 0) printf("get + iget: ok\n");
}

/* ---- 4. put with signal -------------------------------------------------------------- */

#define SU 256u /* bytes per thread per sender */

/* Thread gid sends SU - gid % 64 bytes to every PE: even threads putmem_signal with SET
 * of gid + 1 on their own word, odd ones putmem_signal_nbi with ADD 1 on the sender's
 * counter. Then every thread waits for, and checks, what each PE sent it. */
__global__ void signal_kernel(uint8_t *data, uint64_t *words, uint64_t *counters, const uint8_t *src, unsigned salt,
                              gpu_log *log)
{
    int my = gshmem_my_pe(), n = gshmem_n_pes();
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned len = SU - gid % 64;
    for (int k = 0; k < n; k++) {
        int q = (my + k) % n;
        uint8_t *d = data + ((size_t)my * NT + gid) * SU;
        const uint8_t *s = src + (size_t)gid * SU + gid % 5;
        if (gid % 2 == 0)
            gshmem_putmem_signal(d, s, len, &words[(size_t)my * NT + gid], gid + 1, GSHMEM_SIGNAL_SET, q);
        else
            gshmem_putmem_signal_nbi(d, s, len, &counters[my], 1, GSHMEM_SIGNAL_ADD, q);
    }
    gshmem_quiet();
    for (int q = 0; q < n; q++) {
        if (gid % 2 == 0) {
            uint64_t v = gshmem_signal_wait_until(&words[(size_t)q * NT + gid], GSHMEM_CMP_EQ, gid + 1);
            GPU_DCHECK(log, q, 20, gid, (uint64_t)gid + 1, v);
        } else {
            gshmem_signal_wait_until(&counters[q], GSHMEM_CMP_GE, NT / 2);
        }
        const uint8_t *d = data + ((size_t)q * NT + gid) * SU;
        for (unsigned i = 0; i < SU; i++) {
            uint8_t want = i < len ? gpu_pat8(q, (size_t)gid * SU + gid % 5 + i, salt) : (uint8_t)GPU_POISON;
            if (GPU_DCHECK(log, q, 21, i, want, d[i])) break;
        }
    }
}

static void test_signal(gpu_log *log)
{
    unsigned salt = 24;
    uint8_t *data = (uint8_t *)gshmem_malloc((size_t)npes * NT * SU);
    uint64_t *words = (uint64_t *)gshmem_calloc((size_t)npes * NT, sizeof(uint64_t));
    uint64_t *counters = (uint64_t *)gshmem_calloc(npes, sizeof(uint64_t));
    uint8_t *src = (uint8_t *)gshmem_malloc((size_t)NT * SU + 8);
    gpu_poison(data, (size_t)npes * NT * SU);
    src_fill<<<64, 256>>>(src, (size_t)NT * SU + 8, salt);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all();
    signal_kernel<<<BLOCKS, THREADS>>>(data, words, counters, src, salt, log);
    gpu_log_check(log, "put_signal", __FILE__);
    std::vector<uint64_t> c(npes);
    GPU_CHECK_CUDA(cudaMemcpy(c.data(), counters, npes * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    for (int q = 0; q < npes; q++) GPU_CHECK(c[q] == NT / 2, "signal counter of PE %d is %llu, want %d", q,
                                             (unsigned long long)c[q], NT / 2);
    gshmem_barrier_all();
    gshmem_free(src);
    gshmem_free(counters);
    gshmem_free(words);
    gshmem_free(data);
    if (me == 0) printf("put_signal: ok\n");
}

/* ---- 5. Atomics ----------------------------------------------------------------------- */

struct amo_words {
    unsigned long long fadd64, add64, inc64;
    unsigned int fadd32, add32, inc32;
    uint64_t bits64[MAX_PES * NT / 64]; /* a bit per (PE, thread) */
    uint32_t bits32[MAX_PES * NT / 32];
    uint64_t own64[MAX_PES][NT]; /* private words per (sender, thread) */
    uint32_t own32[MAX_PES][NT];
    double ownd[MAX_PES][NT];
    float ownf[MAX_PES][NT];
};

__device__ void bit_dance64(uint64_t *word, uint64_t bit, int q, int what, gpu_log *log)
{
    uint64_t v = gshmem_uint64_atomic_fetch_or(word, bit, q);
    GPU_DCHECK(log, q, what, 0, (uint64_t)0, v & bit);
    gshmem_uint64_atomic_xor(word, bit, q); /* clears it */
    gshmem_uint64_atomic_or(word, bit, q);  /* sets it */
    v = gshmem_uint64_atomic_fetch_and(word, ~bit, q);
    GPU_DCHECK(log, q, what + 1, 0, bit, v & bit);
    gshmem_uint64_atomic_and(word, ~bit, q); /* still clear */
    v = gshmem_uint64_atomic_fetch_xor(word, bit, q);
    GPU_DCHECK(log, q, what + 2, 0, (uint64_t)0, v & bit); /* now set for good */
}
__device__ void bit_dance32(uint32_t *word, uint32_t bit, int q, int what, gpu_log *log)
{
    uint32_t v = gshmem_uint32_atomic_fetch_or(word, bit, q);
    GPU_DCHECK(log, q, what, 0, (uint32_t)0, v & bit);
    gshmem_uint32_atomic_xor(word, bit, q);
    gshmem_uint32_atomic_or(word, bit, q);
    v = gshmem_uint32_atomic_fetch_and(word, ~bit, q);
    GPU_DCHECK(log, q, what + 1, 0, bit, v & bit);
    gshmem_uint32_atomic_and(word, ~bit, q);
    v = gshmem_uint32_atomic_fetch_xor(word, bit, q);
    GPU_DCHECK(log, q, what + 2, 0, (uint32_t)0, v & bit);
}

__global__ void amo_kernel(amo_words *w, unsigned long long *f64, unsigned *f32, gpu_log *log)
{
    int my = gshmem_my_pe(), n = gshmem_n_pes();
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned who = (unsigned)my * NT + gid;
    for (int k = 0; k < n; k++) {
        int q = (my + k) % n;
        f64[(size_t)q * NT + gid] = gshmem_ulonglong_atomic_fetch_add(&w->fadd64, 1, q);
        gshmem_ulonglong_atomic_add(&w->add64, 3, q);
        gshmem_ulonglong_atomic_inc(&w->inc64, q);
        f32[(size_t)q * NT + gid] = gshmem_uint_atomic_fetch_inc(&w->fadd32, q);
        gshmem_uint_atomic_add(&w->add32, 5, q);
        gshmem_uint_atomic_inc(&w->inc32, q);
        bit_dance64(&w->bits64[who / 64], 1ull << (who % 64), q, 30, log);
        bit_dance32(&w->bits32[who / 32], 1u << (who % 32), q, 33, log);

        uint64_t a = gpu_mix(my, gid, 40), b = gpu_mix(my, gid, 41), c = gpu_mix(my, gid, 42);
        uint64_t *o64 = &w->own64[my][gid];
        gshmem_uint64_atomic_set(o64, a, q);
        GPU_DCHECK(log, q, 40, gid, a, gshmem_uint64_atomic_fetch(o64, q));
        GPU_DCHECK(log, q, 41, gid, a, gshmem_uint64_atomic_swap(o64, b, q));
        GPU_DCHECK(log, q, 42, gid, b, gshmem_uint64_atomic_compare_swap(o64, a, c, q)); /* miss */
        GPU_DCHECK(log, q, 43, gid, b, gshmem_uint64_atomic_compare_swap(o64, b, c, q)); /* hit */
        uint64_t fetched = 0;
        gshmem_uint64_atomic_fetch_nbi(&fetched, o64, q);
        GPU_DCHECK(log, q, 44, gid, c, fetched);

        uint32_t *o32 = &w->own32[my][gid];
        gshmem_uint32_atomic_set(o32, (uint32_t)a, q);
        GPU_DCHECK(log, q, 45, gid, (uint32_t)a, gshmem_uint32_atomic_fetch(o32, q));
        GPU_DCHECK(log, q, 46, gid, (uint32_t)a, gshmem_uint32_atomic_swap(o32, (uint32_t)b, q));
        GPU_DCHECK(log, q, 47, gid, (uint32_t)b, gshmem_uint32_atomic_compare_swap(o32, (uint32_t)a, (uint32_t)c, q));
        GPU_DCHECK(log, q, 48, gid, (uint32_t)b, gshmem_uint32_atomic_compare_swap(o32, (uint32_t)b, (uint32_t)c, q));
        uint32_t fetched32 = 0;
        gshmem_uint32_atomic_compare_swap_nbi(&fetched32, o32, (uint32_t)c, (uint32_t)a, q);
        GPU_DCHECK(log, q, 49, gid, (uint32_t)c, fetched32);

        double da = gpu_pat<double>(my, gid, 50), db = gpu_pat<double>(my, gid, 51);
        double *od = &w->ownd[my][gid];
        gshmem_double_atomic_set(od, da, q);
        GPU_DCHECK(log, q, 50, gid, da, gshmem_double_atomic_swap(od, db, q));
        GPU_DCHECK(log, q, 51, gid, db, gshmem_double_atomic_fetch(od, q));
        float fa = gpu_pat<float>(my, gid, 52), fb = gpu_pat<float>(my, gid, 53);
        float *of = &w->ownf[my][gid];
        gshmem_float_atomic_set(of, fa, q);
        GPU_DCHECK(log, q, 52, gid, fa, gshmem_float_atomic_swap(of, fb, q));
        GPU_DCHECK(log, q, 53, gid, fb, gshmem_float_atomic_fetch(of, q));
    }
    gshmem_quiet();
}

template <typename T> static void check_distinct(const char *what, const T *v, size_t count, int q)
{
    std::vector<T> s(v, v + count);
    std::sort(s.begin(), s.end());
    for (size_t i = 1; i < count; i++)
        GPU_CHECK(s[i] != s[i - 1], "%s on PE %d: value %llu fetched twice", what, q, (unsigned long long)s[i]);
    for (size_t i = 0; i < count; i++)
        GPU_CHECK((unsigned long long)s[i] < (unsigned long long)npes * NT, "%s on PE %d: fetched %llu out of range",
                  what, q, (unsigned long long)s[i]);
}

static void test_amo(gpu_log *log)
{
    GPU_CHECK(npes <= MAX_PES, "gpu_proxy's atomics phase supports up to %d PEs (job has %d)", MAX_PES, npes);
    amo_words *w = (amo_words *)gshmem_calloc(1, sizeof(amo_words));
    unsigned long long *f64;
    unsigned *f32;
    GPU_CHECK_CUDA(cudaMalloc(&f64, (size_t)npes * NT * sizeof(*f64)));
    GPU_CHECK_CUDA(cudaMalloc(&f32, (size_t)npes * NT * sizeof(*f32)));
    gshmem_barrier_all();
    amo_kernel<<<BLOCKS, THREADS>>>(w, f64, f32, log);
    gpu_log_check(log, "atomics", __FILE__);
    gshmem_barrier_all();
    amo_words *h = (amo_words *)gpu_fetch(w, sizeof(amo_words));
    unsigned long long total = (unsigned long long)npes * NT;
    GPU_CHECK(h->fadd64 == total && h->inc64 == total && h->add64 == 3 * total,
              "64-bit counters: fetch_add %llu, inc %llu, add %llu (want %llu, %llu, %llu)", h->fadd64, h->inc64,
              h->add64, total, total, 3 * total);
    GPU_CHECK(h->fadd32 == total && h->inc32 == total && h->add32 == 5 * total,
              "32-bit counters: fetch_inc %u, inc %u, add %u (want %llu, %llu, %llu)", h->fadd32, h->inc32, h->add32,
              total, total, 5 * total);
    for (unsigned who = 0; who < total; who++) {
        GPU_CHECK(h->bits64[who / 64] >> (who % 64) & 1, "64-bit bit of PE %u thread %u is clear", who / NT,
                  who % NT);
        GPU_CHECK(h->bits32[who / 32] >> (who % 32) & 1, "32-bit bit of PE %u thread %u is clear", who / NT,
                  who % NT);
    }
    for (int p = 0; p < npes; p++)
        for (unsigned g = 0; g < NT; g++) {
            GPU_CHECK(h->own64[p][g] == gpu_mix(p, g, 42), "own64 of PE %d thread %u", p, g);
            GPU_CHECK(h->own32[p][g] == (uint32_t)gpu_mix(p, g, 40), "own32 of PE %d thread %u", p, g);
            GPU_CHECK(h->ownd[p][g] == gpu_pat<double>(p, g, 51), "own double of PE %d thread %u", p, g);
            GPU_CHECK(h->ownf[p][g] == gpu_pat<float>(p, g, 53), "own float of PE %d thread %u", p, g);
        }
    free(h);
    /* What this PE fetched from each PE's counters is distinct (all PEs together form a
     * permutation of 0 .. total - 1; each PE sees its share of it). */
    std::vector<unsigned long long> v64((size_t)npes * NT);
    std::vector<unsigned> v32((size_t)npes * NT);
    GPU_CHECK_CUDA(cudaMemcpy(v64.data(), f64, v64.size() * sizeof(v64[0]), cudaMemcpyDeviceToHost));
    GPU_CHECK_CUDA(cudaMemcpy(v32.data(), f32, v32.size() * sizeof(v32[0]), cudaMemcpyDeviceToHost));
    for (int q = 0; q < npes; q++) {
        check_distinct("fetch_add (64-bit)", v64.data() + (size_t)q * NT, NT, q);
        check_distinct("fetch_inc (32-bit)", v32.data() + (size_t)q * NT, NT, q);
    }
    GPU_CHECK_CUDA(cudaFree(f64));
    GPU_CHECK_CUDA(cudaFree(f32));
    gshmem_free(w);
    if (me == 0) printf("atomics: ok\n");
}

/* ---- 6. Barriers --------------------------------------------------------------------- */

#define BAR_ROUNDS 20

template <bool WARP> __global__ void barrier_kernel(int *slots, gpu_log *log)
{
    int my = gshmem_my_pe(), n = gshmem_n_pes();
    for (int round = 1; round <= BAR_ROUNDS; round++) {
        for (int q = threadIdx.x; q < n; q += blockDim.x) gshmem_int_p(&slots[my], round * 1000 + my, q);
        if (WARP) gshmemx_barrier_all_warp();
        else gshmemx_barrier_all_block();
        for (int q = threadIdx.x; q < n; q += blockDim.x) GPU_DCHECK(log, q, 60 + WARP, round, round * 1000 + q, slots[q]);
        /* nobody writes the next round before everyone has checked this one */
        if (WARP) gshmemx_sync_all_warp();
        else gshmemx_sync_all_block();
    }
}

static void test_barrier(gpu_log *log)
{
    int *slots = (int *)gshmem_calloc(npes, sizeof(int));
    barrier_kernel<false><<<1, 128>>>(slots, log);
    gpu_log_check(log, "barrier_all_block", __FILE__);
    gshmem_barrier_all();
    barrier_kernel<true><<<1, 32>>>(slots, log);
    gpu_log_check(log, "barrier_all_warp", __FILE__);
    gshmem_barrier_all();
    gshmem_free(slots);
    if (me == 0) printf("device barriers: ok\n");
}

/* ---- Which peers go through the proxy ------------------------------------------------ */

__global__ void count_proxied(const void *sym, int *count)
{
    int n = gshmem_n_pes(), c = 0;
    for (int q = 0; q < n; q++) c += q != gshmem_my_pe() && gshmem_ptr(sym, q) == NULL;
    *count = c;
}

int main(void)
{
    gpu_test_init("gpu_proxy");
    me = gshmem_my_pe();
    npes = gshmem_n_pes();
    gpu_log *log = gpu_log_new();

    int *sym = (int *)gshmem_malloc(sizeof(int)), *dcount, proxied = 0;
    GPU_CHECK_CUDA(cudaMalloc(&dcount, sizeof(int)));
    count_proxied<<<1, 1>>>(sym, dcount);
    GPU_CHECK_KERNEL();
    GPU_CHECK_CUDA(cudaMemcpy(&proxied, dcount, sizeof(int), cudaMemcpyDeviceToHost));
    const char *forced = getenv("GSHMEM_DISABLE_P2P");
    if (forced && strcmp(forced, "1") == 0)
        GPU_CHECK(proxied == npes - 1, "GSHMEM_DISABLE_P2P=1 but only %d of %d peers go through the proxy", proxied,
                  npes - 1);
    if (me == 0) printf("gpu_proxy: %d of %d peers through the proxy\n", proxied, npes - 1);

    test_pg(log);
    test_put(false);
    test_put(true);
    test_get(log);
    test_signal(log);
    test_amo(log);
    test_barrier(log);

    GPU_CHECK_CUDA(cudaFree(dcount));
    gshmem_free(sym);
    gpu_test_pass("gpu_proxy");
    return 0;
}
