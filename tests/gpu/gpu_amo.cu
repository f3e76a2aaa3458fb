/* Device atomics on data:
 *  1. Storm: every thread of 64 blocks x 256 threads on every PE hits one word per
 *     operation (fetch_add, fetch_inc, add, inc, fetch_add_nbi, fetch_inc_nbi for
 *     several types, words on different PEs): exact final values, and the fetched
 *     values of the fetching forms form a permutation of 0 .. n*threads-1.
 *  2. compare_swap contention: every thread of every PE races through rounds; exactly
 *     one winner per round (64-bit blocking and 32-bit _nbi forms).
 *  3. and/or/xor (fetching, plain, _nbi) for every bitwise type, a distinct bit per
 *     PE and thread: each fetched value shows the thread's bit untouched by others,
 *     and the final word is exact.
 *  4. A fixed sequence per type (set, fetch, swap, compare_swap hit and miss, fetch_add,
 *     add, fetch_inc, inc and the _nbi forms) checked step by step, for every standard
 *     AMO type and float/double (set/fetch/swap forms).
 *  5. Swap storm (uint64, double, float): the values swapped out plus the final value
 *     are exactly the initial value and every value swapped in. */
#include "gpu_check.cuh"

#include <vector>

static int me, npes;

/* ---- 1. Storm ------------------------------------------------------------------------ */

#define STORM_BLOCKS 64
#define STORM_THREADS 256
#define STORM_T (STORM_BLOCKS * STORM_THREADS)

enum { W_FADD_U64, W_FINC_INT, W_ADD_LONG, W_INC_UINT, W_FADDNBI_LL, W_FINCNBI_U32, W_INC_SIZE, W_FADD_PTRDIFF,
       W_ADD_INT32, W_FADD_ULL, W_INC_INT64, W_WORDS };
enum { P_FADD_U64, P_FINC_INT, P_FADDNBI_LL, P_FINCNBI_U32, P_PERMS };

/* The PE that holds each word: spread so that several targets are exercised. */
__host__ __device__ inline int storm_owner(int w, int n)
{
    switch (w) {
    case W_FINC_INT: case W_FADDNBI_LL: case W_FADD_PTRDIFF: return n - 1;
    case W_ADD_LONG: case W_FINCNBI_U32: return 1 % n;
    default: return 0;
    }
}

/* words: W_WORDS 8-byte slots (zeroed). perm: P_PERMS x n x STORM_T on PE 0.
 * fetched: a private array of STORM_T for the _nbi results. */
__global__ void storm_kernel(uint64_t *words, uint64_t *perm, long long *fetched_ll, uint32_t *fetched_u32)
{
    int n = gshmem_n_pes(), my = gshmem_my_pe();
    size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t slot = (size_t)my * STORM_T + gid;
    size_t plane = (size_t)n * STORM_T;

    uint64_t a = gshmem_uint64_atomic_fetch_add(&words[W_FADD_U64], 1, storm_owner(W_FADD_U64, n));
    int b = gshmem_int_atomic_fetch_inc((int *)&words[W_FINC_INT], storm_owner(W_FINC_INT, n));
    gshmem_long_atomic_add((long *)&words[W_ADD_LONG], (long)(gid % 7 + 1), storm_owner(W_ADD_LONG, n));
    gshmem_uint_atomic_inc((unsigned *)&words[W_INC_UINT], storm_owner(W_INC_UINT, n));
    gshmem_longlong_atomic_fetch_add_nbi(&fetched_ll[gid], (long long *)&words[W_FADDNBI_LL], 1LL,
                                         storm_owner(W_FADDNBI_LL, n));
    gshmem_uint32_atomic_fetch_inc_nbi(&fetched_u32[gid], (uint32_t *)&words[W_FINCNBI_U32],
                                       storm_owner(W_FINCNBI_U32, n));
    gshmem_size_atomic_inc((size_t *)&words[W_INC_SIZE], storm_owner(W_INC_SIZE, n));
    gshmem_ptrdiff_atomic_fetch_add((ptrdiff_t *)&words[W_FADD_PTRDIFF], -1, storm_owner(W_FADD_PTRDIFF, n));
    gshmem_int32_atomic_add((int32_t *)&words[W_ADD_INT32], 3, (int)(gid % n));
    gshmem_ulonglong_atomic_fetch_add((unsigned long long *)&words[W_FADD_ULL], (unsigned long long)gid,
                                      storm_owner(W_FADD_ULL, n));
    gshmem_int64_atomic_inc((int64_t *)&words[W_INC_INT64], storm_owner(W_INC_INT64, n));
    gshmem_quiet(); /* the _nbi fetches have landed */

    gshmem_uint64_p(&perm[P_FADD_U64 * plane + slot], a, 0);
    gshmem_uint64_p(&perm[P_FINC_INT * plane + slot], (uint64_t)(int64_t)b, 0);
    gshmem_uint64_p(&perm[P_FADDNBI_LL * plane + slot], (uint64_t)fetched_ll[gid], 0);
    gshmem_uint64_p(&perm[P_FINCNBI_U32 * plane + slot], (uint64_t)fetched_u32[gid], 0);
    gshmem_quiet();
}

static size_t check_perm(const char *what, const uint64_t *v, size_t count)
{
    std::vector<unsigned char> seen(count, 0);
    size_t bad = 0;
    for (size_t i = 0; i < count; i++) {
        if (v[i] >= count) {
            if (bad++ < 8)
                fprintf(stderr, "PE %d: %s: PE %zu thread %zu fetched %llu, outside 0..%zu\n", me, what, i / STORM_T,
                        i % STORM_T, (unsigned long long)v[i], count - 1);
            continue;
        }
        if (seen[v[i]]++ && bad++ < 8)
            fprintf(stderr, "PE %d: %s: PE %zu thread %zu fetched %llu, which another thread fetched too\n", me, what,
                    i / STORM_T, i % STORM_T, (unsigned long long)v[i]);
    }
    for (size_t k = 0; k < count; k++)
        if (!seen[k] && bad++ < 8) fprintf(stderr, "PE %d: %s: no thread fetched %zu\n", me, what, k);
    return bad;
}

/* The 4-byte value a 4-byte atomic left at the start of an 8-byte slot. */
static int32_t slot_i32(uint64_t w)
{
    int32_t v;
    memcpy(&v, &w, sizeof(v));
    return v;
}
static uint32_t slot_u32(uint64_t w)
{
    uint32_t v;
    memcpy(&v, &w, sizeof(v));
    return v;
}

static void test_storm(void)
{
    size_t plane = (size_t)npes * STORM_T;
    uint64_t *words = (uint64_t *)gshmem_calloc(W_WORDS, sizeof(uint64_t));
    uint64_t *perm = (uint64_t *)gshmem_malloc(P_PERMS * plane * sizeof(uint64_t));
    GPU_CHECK(words && perm, "storm: gshmem allocation failed");
    long long *fetched_ll;
    uint32_t *fetched_u32;
    GPU_CHECK_CUDA(cudaMalloc(&fetched_ll, STORM_T * sizeof(long long)));
    GPU_CHECK_CUDA(cudaMalloc(&fetched_u32, STORM_T * sizeof(uint32_t)));
    GPU_CHECK_CUDA(cudaMemset(words, 0, W_WORDS * sizeof(uint64_t)));
    gpu_poison(perm, P_PERMS * plane * sizeof(uint64_t));
    gshmem_barrier_all();

    storm_kernel<<<STORM_BLOCKS, STORM_THREADS>>>(words, perm, fetched_ll, fetched_u32);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all();

    uint64_t w[W_WORDS];
    GPU_CHECK_CUDA(cudaMemcpy(w, words, sizeof(w), cudaMemcpyDeviceToHost));
    unsigned long long total = (unsigned long long)npes * STORM_T;
    unsigned long long sum7 = 0, sumgid = 0;
    for (unsigned long long g = 0; g < STORM_T; g++) sum7 += g % 7 + 1, sumgid += g;
    unsigned long long mine_int32 = 0;
    for (unsigned long long g = 0; g < STORM_T; g++) mine_int32 += g % npes == (unsigned long long)me;
    struct {
        int w;
        const char *name;
        long long expect, got;
    } rows[] = {
        {W_FADD_U64, "uint64 fetch_add", (long long)total, (long long)w[W_FADD_U64]},
        {W_FINC_INT, "int fetch_inc", (long long)total, (long long)slot_i32(w[W_FINC_INT])},
        {W_ADD_LONG, "long add", (long long)(sum7 * npes), (long long)w[W_ADD_LONG]},
        {W_INC_UINT, "uint inc", (long long)total, (long long)slot_u32(w[W_INC_UINT])},
        {W_FADDNBI_LL, "longlong fetch_add_nbi", (long long)total, (long long)w[W_FADDNBI_LL]},
        {W_FINCNBI_U32, "uint32 fetch_inc_nbi", (long long)total, (long long)slot_u32(w[W_FINCNBI_U32])},
        {W_INC_SIZE, "size inc", (long long)total, (long long)w[W_INC_SIZE]},
        {W_FADD_PTRDIFF, "ptrdiff fetch_add(-1)", -(long long)total, (long long)w[W_FADD_PTRDIFF]},
        {W_ADD_INT32, "int32 add(3) spread over PEs", (long long)(3 * mine_int32 * npes),
         (long long)slot_i32(w[W_ADD_INT32])},
        {W_FADD_ULL, "ulonglong fetch_add(gid)", (long long)(sumgid * npes), (long long)w[W_FADD_ULL]},
        {W_INC_INT64, "int64 inc", (long long)total, (long long)w[W_INC_INT64]},
    };
    int bad = 0;
    for (auto &r : rows) {
        bool owner = r.w == W_ADD_INT32 || storm_owner(r.w, npes) == me;
        if (owner && r.expect != r.got) {
            fprintf(stderr, "PE %d: storm word %s: expected %lld, got %lld (%d PEs x %d threads)\n", me, r.name,
                    r.expect, r.got, npes, STORM_T);
            bad++;
        }
        /* Words nobody targets on this PE stay 0 (a misrouted atomic shows here). */
        if (!owner && r.got != 0) {
            fprintf(stderr, "PE %d: storm word %s is not this PE's yet changed to %lld\n", me, r.name, r.got);
            bad++;
        }
    }
    if (me == 0) {
        uint64_t *p = (uint64_t *)gpu_fetch(perm, P_PERMS * plane * sizeof(uint64_t));
        static const char *const names[P_PERMS] = {"uint64 fetch_add", "int fetch_inc", "longlong fetch_add_nbi",
                                                   "uint32 fetch_inc_nbi"};
        for (int k = 0; k < P_PERMS; k++) bad += (int)check_perm(names[k], p + k * plane, plane);
        free(p);
    }
    GPU_CHECK(bad == 0, "AMO storm: %d problems", bad);
    GPU_CHECK_CUDA(cudaFree(fetched_ll));
    GPU_CHECK_CUDA(cudaFree(fetched_u32));
    gshmem_free(perm);
    gshmem_free(words);
    if (me == 0) printf("AMO storm ok (%d PEs x %d threads)\n", npes, STORM_T);
}

/* ---- 2. compare_swap contention ------------------------------------------------------ */

#define CAS_ROUNDS 64
#define CAS_BLOCKS 4
#define CAS_THREADS 64

/* Round r: the word moves from r to r + 1 by exactly one compare_swap. A thread whose
 * compare_swap returns a value below r retries (the round has not begun), above r
 * moves on (someone else won). Threads only wait on each other, never on a peer PE, so
 * this cannot deadlock whatever runs when. */
__global__ void cas_kernel(unsigned long long *word64, int *word32, int *wins64, int *wins32)
{
    int n = gshmem_n_pes();
    for (int r = 0; r < CAS_ROUNDS; r++) {
        for (;;) {
            unsigned long long old = gshmem_ulonglong_atomic_compare_swap(word64, r, r + 1, 0);
            if (old == (unsigned long long)r) gshmem_int_atomic_inc(&wins64[r], 0);
            if (old >= (unsigned long long)r) break;
        }
    }
    for (int r = 0; r < CAS_ROUNDS; r++) {
        for (;;) {
            int old;
            gshmem_int_atomic_compare_swap_nbi(&old, word32, r, r + 1, n - 1);
            gshmem_quiet();
            if (old == r) gshmem_int_atomic_inc(&wins32[r], n - 1);
            if (old >= r) break;
        }
    }
}

static void test_cas(void)
{
    unsigned long long *w64 = (unsigned long long *)gshmem_calloc(1, sizeof(unsigned long long));
    int *w32 = (int *)gshmem_calloc(1, sizeof(int));
    int *wins64 = (int *)gshmem_calloc(CAS_ROUNDS, sizeof(int));
    int *wins32 = (int *)gshmem_calloc(CAS_ROUNDS, sizeof(int));
    GPU_CHECK(w64 && w32 && wins64 && wins32, "cas: gshmem_calloc failed");
    gshmem_barrier_all();
    cas_kernel<<<CAS_BLOCKS, CAS_THREADS>>>(w64, w32, wins64, wins32);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all();
    int bad = 0;
    for (int k = 0; k < 2; k++) {
        int owner = k == 0 ? 0 : npes - 1;
        if (me != owner) continue;
        int wins[CAS_ROUNDS];
        long long final = 0;
        if (k == 0) {
            unsigned long long f;
            GPU_CHECK_CUDA(cudaMemcpy(&f, w64, sizeof(f), cudaMemcpyDeviceToHost));
            final = (long long)f;
        } else {
            int f;
            GPU_CHECK_CUDA(cudaMemcpy(&f, w32, sizeof(f), cudaMemcpyDeviceToHost));
            final = f;
        }
        GPU_CHECK_CUDA(cudaMemcpy(wins, k == 0 ? wins64 : wins32, sizeof(wins), cudaMemcpyDeviceToHost));
        const char *name = k == 0 ? "ulonglong compare_swap" : "int compare_swap_nbi";
        if (final != CAS_ROUNDS) {
            fprintf(stderr, "PE %d: %s: final value %lld, expected %d\n", me, name, final, CAS_ROUNDS);
            bad++;
        }
        for (int r = 0; r < CAS_ROUNDS; r++)
            if (wins[r] != 1 && bad++ < 10)
                fprintf(stderr, "PE %d: %s: round %d had %d winners, expected exactly 1\n", me, name, r, wins[r]);
    }
    GPU_CHECK(bad == 0, "compare_swap contention: %d problems", bad);
    gshmem_free(wins32);
    gshmem_free(wins64);
    gshmem_free(w32);
    gshmem_free(w64);
    if (me == 0) printf("compare_swap contention ok (%d rounds, %d threads per PE)\n", CAS_ROUNDS, CAS_BLOCKS * CAS_THREADS);
}

/* ---- 3. Bitwise ------------------------------------------------------------------------ */

#define AMO_BITWISE(T, N)                                                                                        \
    struct bit_##N {                                                                                             \
        typedef T type;                                                                                          \
        static const char *name() { return #N; }                                                                \
        __device__ static T fetch_and(T *d, T v, int pe) { return gshmem_##N##_atomic_fetch_and(d, v, pe); }     \
        __device__ static T fetch_or(T *d, T v, int pe) { return gshmem_##N##_atomic_fetch_or(d, v, pe); }       \
        __device__ static T fetch_xor(T *d, T v, int pe) { return gshmem_##N##_atomic_fetch_xor(d, v, pe); }     \
        __device__ static void and_(T *d, T v, int pe) { gshmem_##N##_atomic_and(d, v, pe); }                    \
        __device__ static void or_(T *d, T v, int pe) { gshmem_##N##_atomic_or(d, v, pe); }                      \
        __device__ static void xor_(T *d, T v, int pe) { gshmem_##N##_atomic_xor(d, v, pe); }                    \
        __device__ static void fetch_and_nbi(T *f, T *d, T v, int pe)                                            \
        {                                                                                                        \
            gshmem_##N##_atomic_fetch_and_nbi(f, d, v, pe);                                                      \
        }                                                                                                        \
        __device__ static void fetch_or_nbi(T *f, T *d, T v, int pe) { gshmem_##N##_atomic_fetch_or_nbi(f, d, v, pe); } \
        __device__ static void fetch_xor_nbi(T *f, T *d, T v, int pe)                                            \
        {                                                                                                        \
            gshmem_##N##_atomic_fetch_xor_nbi(f, d, v, pe);                                                      \
        }                                                                                                        \
    };
AMO_BITWISE(unsigned int, uint)
AMO_BITWISE(unsigned long, ulong)
AMO_BITWISE(unsigned long long, ulonglong)
AMO_BITWISE(int32_t, int32)
AMO_BITWISE(int64_t, int64)
AMO_BITWISE(uint32_t, uint32)
AMO_BITWISE(uint64_t, uint64)
#undef AMO_BITWISE

template <typename T> __host__ __device__ inline T bit_of(int b)
{
    return (T)((unsigned long long)1 << b);
}
template <typename T> __host__ __device__ inline T bit_init_xor() { return (T)0x5a3c96e1f00f6699ull; }

/* words on PE 0: [0] or (starts 0), [1] and (starts ~0), [2] xor (starts bit_init_xor).
 * Thread j < bits/n of PE me owns bit me*(bits/n) + j. Form by j % 3: fetching, plain, _nbi. */
template <class Tr> __global__ void bitwise_kernel(typename Tr::type *words, gpu_log *log)
{
    typedef typename Tr::type T;
    int n = gshmem_n_pes(), my = gshmem_my_pe();
    int per = (int)(8 * sizeof(T)) / n;
    int j = (int)threadIdx.x;
    if (j >= per) return;
    int b = my * per + j;
    T bit = bit_of<T>(b), old;
    switch (j % 3) {
    case 0:
        old = Tr::fetch_or(&words[0], bit, 0);
        GPU_DCHECK(log, 0, b, 0, (T)0, (T)(old & bit));
        old = Tr::fetch_and(&words[1], (T)~bit, 0);
        GPU_DCHECK(log, 0, b, 1, bit, (T)(old & bit));
        old = Tr::fetch_xor(&words[2], bit, 0);
        GPU_DCHECK(log, 0, b, 2, (T)(bit_init_xor<T>() & bit), (T)(old & bit));
        break;
    case 1:
        Tr::or_(&words[0], bit, 0);
        Tr::and_(&words[1], (T)~bit, 0);
        Tr::xor_(&words[2], bit, 0);
        break;
    default:
        Tr::fetch_or_nbi(&old, &words[0], bit, 0);
        gshmem_quiet();
        GPU_DCHECK(log, 0, b, 3, (T)0, (T)(old & bit));
        Tr::fetch_and_nbi(&old, &words[1], (T)~bit, 0);
        gshmem_quiet();
        GPU_DCHECK(log, 0, b, 4, bit, (T)(old & bit));
        Tr::fetch_xor_nbi(&old, &words[2], bit, 0);
        gshmem_quiet();
        GPU_DCHECK(log, 0, b, 5, (T)(bit_init_xor<T>() & bit), (T)(old & bit));
    }
}

template <class Tr> static void test_bitwise(void)
{
    typedef typename Tr::type T;
    T *words = (T *)gshmem_malloc(3 * sizeof(T));
    GPU_CHECK(words != NULL, "bitwise: gshmem_malloc failed");
    T init[3] = {(T)0, (T)~(T)0, bit_init_xor<T>()};
    GPU_CHECK_CUDA(cudaMemcpy(words, init, sizeof(init), cudaMemcpyHostToDevice));
    gpu_log *log = gpu_log_new();
    gshmem_barrier_all();
    bitwise_kernel<Tr><<<1, 64>>>(words, log);
    GPU_CHECK_KERNEL();
    gpu_log_check(log, Tr::name(), __FILE__);
    gshmem_barrier_all();
    if (me == 0) {
        int per = (int)(8 * sizeof(T)) / npes;
        T all = 0;
        for (int b = 0; b < per * npes; b++) all |= bit_of<T>(b);
        T got[3];
        GPU_CHECK_CUDA(cudaMemcpy(got, words, sizeof(got), cudaMemcpyDeviceToHost));
        T expect[3] = {all, (T)~all, (T)(bit_init_xor<T>() ^ all)};
        static const char *const ops[3] = {"or", "and", "xor"};
        for (int k = 0; k < 3; k++)
            GPU_CHECK(got[k] == expect[k], "%s atomic %s: final 0x%llx, expected 0x%llx (%d bits per PE)", Tr::name(),
                      ops[k], (unsigned long long)got[k], (unsigned long long)expect[k], per);
    }
    GPU_CHECK_CUDA(cudaFree(log));
    gshmem_free(words);
    if (me == 0) printf("bitwise AMO %s ok\n", Tr::name());
}

/* ---- 4. Fixed sequences ----------------------------------------------------------------- */

#define AMO_EXT_OPS(T, N)                                                                                        \
    typedef T type;                                                                                              \
    static const char *name() { return #N; }                                                                     \
    __device__ static T fetch(const T *s, int pe) { return gshmem_##N##_atomic_fetch(s, pe); }                   \
    __device__ static void set(T *d, T v, int pe) { gshmem_##N##_atomic_set(d, v, pe); }                         \
    __device__ static T swap(T *d, T v, int pe) { return gshmem_##N##_atomic_swap(d, v, pe); }                   \
    __device__ static void fetch_nbi(T *f, const T *s, int pe) { gshmem_##N##_atomic_fetch_nbi(f, s, pe); }      \
    __device__ static void swap_nbi(T *f, T *d, T v, int pe) { gshmem_##N##_atomic_swap_nbi(f, d, v, pe); }
#define AMO_STD(T, N)                                                                                            \
    struct amo_##N {                                                                                             \
        static constexpr bool standard = true;                                                                   \
        AMO_EXT_OPS(T, N)                                                                                        \
        __device__ static T cswap(T *d, T c, T v, int pe) { return gshmem_##N##_atomic_compare_swap(d, c, v, pe); } \
        __device__ static T fetch_add(T *d, T v, int pe) { return gshmem_##N##_atomic_fetch_add(d, v, pe); }     \
        __device__ static void add(T *d, T v, int pe) { gshmem_##N##_atomic_add(d, v, pe); }                     \
        __device__ static T fetch_inc(T *d, int pe) { return gshmem_##N##_atomic_fetch_inc(d, pe); }             \
        __device__ static void inc(T *d, int pe) { gshmem_##N##_atomic_inc(d, pe); }                             \
        __device__ static void cswap_nbi(T *f, T *d, T c, T v, int pe)                                           \
        {                                                                                                        \
            gshmem_##N##_atomic_compare_swap_nbi(f, d, c, v, pe);                                                \
        }                                                                                                        \
        __device__ static void fetch_inc_nbi(T *f, T *d, int pe) { gshmem_##N##_atomic_fetch_inc_nbi(f, d, pe); } \
        __device__ static void fetch_add_nbi(T *f, T *d, T v, int pe)                                            \
        {                                                                                                        \
            gshmem_##N##_atomic_fetch_add_nbi(f, d, v, pe);                                                      \
        }                                                                                                        \
    };
#define AMO_EXT(T, N)                                                                                            \
    struct amo_##N {                                                                                             \
        static constexpr bool standard = false;                                                                  \
        AMO_EXT_OPS(T, N)                                                                                        \
        __device__ static T cswap(T *, T, T, int) { __trap(); return 0; }                                        \
        __device__ static T fetch_add(T *, T, int) { __trap(); return 0; }                                       \
        __device__ static void add(T *, T, int) { __trap(); }                                                    \
        __device__ static T fetch_inc(T *, int) { __trap(); return 0; }                                          \
        __device__ static void inc(T *, int) { __trap(); }                                                       \
        __device__ static void cswap_nbi(T *, T *, T, T, int) { __trap(); }                                      \
        __device__ static void fetch_inc_nbi(T *, T *, int) { __trap(); }                                        \
        __device__ static void fetch_add_nbi(T *, T *, T, int) { __trap(); }                                     \
    };
AMO_STD(int, int)
AMO_STD(long, long)
AMO_STD(long long, longlong)
AMO_STD(unsigned int, uint)
AMO_STD(unsigned long, ulong)
AMO_STD(unsigned long long, ulonglong)
AMO_STD(int32_t, int32)
AMO_STD(int64_t, int64)
AMO_STD(uint32_t, uint32)
AMO_STD(uint64_t, uint64)
AMO_STD(size_t, size)
AMO_STD(ptrdiff_t, ptrdiff)
AMO_EXT(float, float)
AMO_EXT(double, double)
#undef AMO_STD
#undef AMO_EXT
#undef AMO_EXT_OPS

/* The value the sequence leaves on the target, and its starting base. */
__host__ __device__ inline long long seq_base(int pe) { return 1000LL * pe + 10; }
__host__ __device__ inline long long seq_final(int pe, bool standard) { return seq_base(pe) + (standard ? 40 : 3); }

/* One thread: slot[me] on the right-hand PE goes through a fixed sequence; every
 * returned value is checked (what = step number). */
template <class Tr> __global__ void seq_kernel(typename Tr::type *slot, gpu_log *log)
{
    typedef typename Tr::type T;
    int n = gshmem_n_pes(), my = gshmem_my_pe(), pe = (my + 1) % n;
    T *d = &slot[my];
    T b = (T)seq_base(my), f;
    Tr::set(d, b, pe);
    GPU_DCHECK(log, pe, 1, 0, b, Tr::fetch(d, pe));
    GPU_DCHECK(log, pe, 2, 0, b, Tr::swap(d, (T)(b + 1), pe));
    Tr::fetch_nbi(&f, d, pe);
    gshmem_quiet();
    GPU_DCHECK(log, pe, 3, 0, (T)(b + 1), f);
    Tr::swap_nbi(&f, d, (T)(b + 3), pe);
    gshmem_quiet();
    GPU_DCHECK(log, pe, 4, 0, (T)(b + 1), f);
    GPU_DCHECK(log, pe, 5, 0, (T)(b + 3), Tr::fetch(d, pe));
    if (!Tr::standard) return;
    /* b + 3 from here; compare_swap miss, then hit. */
    GPU_DCHECK(log, pe, 6, 0, (T)(b + 3), Tr::cswap(d, (T)(b + 4), (T)(b + 100), pe));
    GPU_DCHECK(log, pe, 7, 0, (T)(b + 3), Tr::fetch(d, pe));
    GPU_DCHECK(log, pe, 8, 0, (T)(b + 3), Tr::cswap(d, (T)(b + 3), (T)(b + 20), pe));
    GPU_DCHECK(log, pe, 9, 0, (T)(b + 20), Tr::fetch_add(d, (T)5, pe));
    Tr::add(d, (T)7, pe);                                         /* b + 32 */
    GPU_DCHECK(log, pe, 10, 0, (T)(b + 32), Tr::fetch_inc(d, pe)); /* b + 33 */
    Tr::inc(d, pe);                                               /* b + 34 */
    Tr::cswap_nbi(&f, d, (T)(b + 34), (T)(b + 29), pe);
    gshmem_quiet();
    GPU_DCHECK(log, pe, 11, 0, (T)(b + 34), f);
    Tr::fetch_inc_nbi(&f, d, pe); /* b + 30 */
    gshmem_quiet();
    GPU_DCHECK(log, pe, 12, 0, (T)(b + 29), f);
    Tr::fetch_add_nbi(&f, d, (T)10, pe); /* b + 40 */
    gshmem_quiet();
    GPU_DCHECK(log, pe, 13, 0, (T)(b + 30), f);
    GPU_DCHECK(log, pe, 14, 0, (T)(b + 40), Tr::fetch(d, pe));
}

template <class Tr> static void test_seq(void)
{
    typedef typename Tr::type T;
    T *slot = (T *)gshmem_malloc((size_t)npes * sizeof(T));
    GPU_CHECK(slot != NULL, "sequence: gshmem_malloc failed");
    gpu_poison(slot, (size_t)npes * sizeof(T));
    gpu_log *log = gpu_log_new();
    gshmem_barrier_all();
    seq_kernel<Tr><<<1, 1>>>(slot, log);
    GPU_CHECK_KERNEL();
    gpu_log_check(log, Tr::name(), __FILE__);
    gshmem_barrier_all();
    std::vector<T> got(npes);
    GPU_CHECK_CUDA(cudaMemcpy(got.data(), slot, npes * sizeof(T), cudaMemcpyDeviceToHost));
    int left = (me + npes - 1) % npes;
    for (int pe = 0; pe < npes; pe++) {
        T expect;
        if (pe == left) expect = (T)seq_final(left, Tr::standard);
        else memset((void *)&expect, GPU_POISON, sizeof(T));
        GPU_CHECK(memcmp((const void *)&got[pe], (const void *)&expect, sizeof(T)) == 0,
                  "%s AMO sequence: slot of PE %d: expected 0x%llx, got 0x%llx%s", Tr::name(), pe, gpu_bits(expect),
                  gpu_bits(got[pe]), pe == left ? "" : " (no PE targets this slot here)");
    }
    GPU_CHECK_CUDA(cudaFree(log));
    gshmem_free(slot);
}

/* ---- 5. Swap storm ------------------------------------------------------------------------ */

#define SWAP_BLOCKS 8
#define SWAP_THREADS 128
#define SWAP_T (SWAP_BLOCKS * SWAP_THREADS)

/* Every thread swaps in its own value (1 + its global index over all PEs) on PE 0 and
 * records what it got back in out on PE 0. */
template <class Tr> __global__ void swap_kernel(typename Tr::type *word, uint64_t *out)
{
    typedef typename Tr::type T;
    size_t id = (size_t)gshmem_my_pe() * SWAP_T + blockIdx.x * blockDim.x + threadIdx.x;
    T old = Tr::swap(word, (T)(id + 1), 0);
    gshmem_uint64_p(&out[id], (uint64_t)old, 0);
    gshmem_quiet();
}

template <class Tr> static void test_swap_storm(void)
{
    typedef typename Tr::type T;
    size_t total = (size_t)npes * SWAP_T;
    T *word = (T *)gshmem_calloc(1, sizeof(T));
    uint64_t *out = (uint64_t *)gshmem_malloc(total * sizeof(uint64_t));
    GPU_CHECK(word && out, "swap storm: gshmem allocation failed");
    gpu_poison(out, total * sizeof(uint64_t));
    gshmem_barrier_all();
    swap_kernel<Tr><<<SWAP_BLOCKS, SWAP_THREADS>>>(word, out);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all();
    if (me == 0) {
        uint64_t *v = (uint64_t *)gpu_fetch(out, total * sizeof(uint64_t));
        T final;
        GPU_CHECK_CUDA(cudaMemcpy(&final, word, sizeof(T), cudaMemcpyDeviceToHost));
        /* Values 0 .. total: each exactly once among the swapped-out values and the final one. */
        std::vector<unsigned char> seen(total + 1, 0);
        size_t bad = 0;
        for (size_t i = 0; i <= total; i++) {
            uint64_t x = i < total ? v[i] : (uint64_t)final;
            if (x > total || seen[x]++) {
                if (bad++ < 8)
                    fprintf(stderr, "PE 0: %s swap storm: %s %zu: value %llu %s\n", Tr::name(),
                            i < total ? "thread" : "final", i, (unsigned long long)x,
                            x > total ? "out of range" : "seen twice");
            }
        }
        GPU_CHECK(bad == 0, "%s swap storm: %zu problems", Tr::name(), bad);
        free(v);
    }
    gshmem_free(out);
    gshmem_free(word);
    if (me == 0) printf("swap storm %s ok\n", Tr::name());
}

int main(void)
{
    gpu_test_init("gpu_amo");
    me = gshmem_my_pe();
    npes = gshmem_n_pes();
    test_storm();
    test_cas();
    test_bitwise<bit_uint>();
    test_bitwise<bit_ulong>();
    test_bitwise<bit_ulonglong>();
    test_bitwise<bit_int32>();
    test_bitwise<bit_int64>();
    test_bitwise<bit_uint32>();
    test_bitwise<bit_uint64>();
    test_seq<amo_int>();
    test_seq<amo_long>();
    test_seq<amo_longlong>();
    test_seq<amo_uint>();
    test_seq<amo_ulong>();
    test_seq<amo_ulonglong>();
    test_seq<amo_int32>();
    test_seq<amo_int64>();
    test_seq<amo_uint32>();
    test_seq<amo_uint64>();
    test_seq<amo_size>();
    test_seq<amo_ptrdiff>();
    test_seq<amo_float>();
    test_seq<amo_double>();
    if (me == 0) printf("AMO sequences ok (12 standard types, float, double)\n");
    test_swap_storm<amo_uint64>();
    test_swap_storm<amo_double>();
    test_swap_storm<amo_float>();
    test_swap_storm<amo_int>();
    gpu_test_pass("gpu_amo");
    return 0;
}
