/* Point-to-point waits in kernels, for several ivar widths and signednesses: wait_until
 * and test with every comparison, the _all/_any/_some families with status masks, and
 * the _vector forms. Each PE's kernel has a setter block (writes the right-hand PE's
 * ivars one at a time, with delays) and a waiter block (waits on its own ivars). Before
 * each step the waiter checks that test* reports "not yet", then releases the step
 * with a go flag on the setter's PE, waits, and checks the result and every ivar.
 * Then the acquire test: a wait that returns must make the sender's data visible to the
 * waiting block's plain loads even when that SM's L1 still holds the previous round's
 * copy of the same lines (see test_acquire). */
#include "gpu_check.cuh"

#include <vector>

#define NIV 16
#define NSTEPS 12
#define DELAY 20000 /* clock cycles between the setter's writes (about 10 us) */

#define WAIT_TYPE(T, N)                                                                                           \
    struct wt_##N {                                                                                               \
        typedef T type;                                                                                           \
        static const char *name() { return #N; }                                                                  \
        __device__ static void p(T *d, T v, int pe) { gshmem_##N##_p(d, v, pe); }                                 \
        __device__ static void wait_until(T *iv, int c, T v) { gshmem_##N##_wait_until(iv, c, v); }               \
        __device__ static void wait_all(T *iv, size_t n, const int *st, int c, T v)                               \
        {                                                                                                         \
            gshmem_##N##_wait_until_all(iv, n, st, c, v);                                                         \
        }                                                                                                         \
        __device__ static size_t wait_any(T *iv, size_t n, const int *st, int c, T v)                             \
        {                                                                                                         \
            return gshmem_##N##_wait_until_any(iv, n, st, c, v);                                                  \
        }                                                                                                         \
        __device__ static size_t wait_some(T *iv, size_t n, size_t *idx, const int *st, int c, T v)               \
        {                                                                                                         \
            return gshmem_##N##_wait_until_some(iv, n, idx, st, c, v);                                            \
        }                                                                                                         \
        __device__ static void wait_all_v(T *iv, size_t n, const int *st, int c, T *v)                            \
        {                                                                                                         \
            gshmem_##N##_wait_until_all_vector(iv, n, st, c, v);                                                  \
        }                                                                                                         \
        __device__ static size_t wait_any_v(T *iv, size_t n, const int *st, int c, T *v)                          \
        {                                                                                                         \
            return gshmem_##N##_wait_until_any_vector(iv, n, st, c, v);                                           \
        }                                                                                                         \
        __device__ static size_t wait_some_v(T *iv, size_t n, size_t *idx, const int *st, int c, T *v)            \
        {                                                                                                         \
            return gshmem_##N##_wait_until_some_vector(iv, n, idx, st, c, v);                                     \
        }                                                                                                         \
        __device__ static int test(T *iv, int c, T v) { return gshmem_##N##_test(iv, c, v); }                     \
        __device__ static int test_all(T *iv, size_t n, const int *st, int c, T v)                                \
        {                                                                                                         \
            return gshmem_##N##_test_all(iv, n, st, c, v);                                                        \
        }                                                                                                         \
        __device__ static size_t test_any(T *iv, size_t n, const int *st, int c, T v)                             \
        {                                                                                                         \
            return gshmem_##N##_test_any(iv, n, st, c, v);                                                        \
        }                                                                                                         \
        __device__ static size_t test_some(T *iv, size_t n, size_t *idx, const int *st, int c, T v)               \
        {                                                                                                         \
            return gshmem_##N##_test_some(iv, n, idx, st, c, v);                                                  \
        }                                                                                                         \
        __device__ static int test_all_v(T *iv, size_t n, const int *st, int c, T *v)                             \
        {                                                                                                         \
            return gshmem_##N##_test_all_vector(iv, n, st, c, v);                                                 \
        }                                                                                                         \
        __device__ static size_t test_any_v(T *iv, size_t n, const int *st, int c, T *v)                          \
        {                                                                                                         \
            return gshmem_##N##_test_any_vector(iv, n, st, c, v);                                                 \
        }                                                                                                         \
        __device__ static size_t test_some_v(T *iv, size_t n, size_t *idx, const int *st, int c, T *v)            \
        {                                                                                                         \
            return gshmem_##N##_test_some_vector(iv, n, idx, st, c, v);                                           \
        }                                                                                                         \
    };
WAIT_TYPE(short, short)
WAIT_TYPE(unsigned short, ushort)
WAIT_TYPE(int, int)
WAIT_TYPE(uint32_t, uint32)
WAIT_TYPE(long, long)
WAIT_TYPE(unsigned long long, ulonglong)
WAIT_TYPE(size_t, size)
WAIT_TYPE(ptrdiff_t, ptrdiff)
#undef WAIT_TYPE

/* Initial ivars (set by the host): 0, except [12] and [13] which start at 100. */
__host__ __device__ inline long long iv_init(int i) { return i == 12 || i == 13 ? 100 : 0; }

/* ---- Setter: block 0, thread 0, writes the right-hand PE's ivars ---- */

/* One ivar write, fenced so that the waiter sees the writes in the order made. */
template <class Tr> __device__ inline void set_iv(typename Tr::type *iv, int i, long long v, int pe)
{
    Tr::p(&iv[i], (typename Tr::type)v, pe);
    gshmem_fence();
}

template <class Tr> __device__ void setter(typename Tr::type *iv, uint64_t *go, int pe)
{
    for (int k = 0; k < NSTEPS; k++) {
        gshmem_uint64_wait_until(&go[k], GSHMEM_CMP_EQ, 1);
        gpu_spin(DELAY);
        switch (k) {
        case 0: set_iv<Tr>(iv, 0, 5, pe); break;
        case 1: set_iv<Tr>(iv, 15, 3, pe); break;
        case 2: set_iv<Tr>(iv, 14, 9, pe); break;
        case 3: set_iv<Tr>(iv, 12, 10, pe); break;
        case 4: set_iv<Tr>(iv, 13, 20, pe); break;
        case 5: set_iv<Tr>(iv, 14, 30, pe); break;
        case 6: /* every ivar but 2 and 5, in a scrambled order */
            for (int j = 0; j < NIV; j++) {
                int i = j * 7 % NIV;
                if (i == 2 || i == 5) continue;
                set_iv<Tr>(iv, i, 70, pe);
                gpu_spin(DELAY / 4);
            }
            break;
        case 7: /* an excluded element first, then the one that counts */
            set_iv<Tr>(iv, 3, 80, pe);
            gpu_spin(DELAY * 4);
            set_iv<Tr>(iv, 11, 80, pe);
            break;
        case 8: /* three at once */
            set_iv<Tr>(iv, 4, 90, pe);
            set_iv<Tr>(iv, 8, 90, pe);
            set_iv<Tr>(iv, 12, 90, pe);
            break;
        case 9: /* odd elements to 100 + i, from the top down */
            for (int i = NIV - 1; i >= 0; i--) {
                if (!(i & 1)) continue;
                set_iv<Tr>(iv, i, 100 + i, pe);
                gpu_spin(DELAY / 4);
            }
            break;
        case 10: set_iv<Tr>(iv, 6, 206, pe); break;
        default:
            set_iv<Tr>(iv, 1, 1001, pe);
            gpu_spin(DELAY);
            set_iv<Tr>(iv, 14, 1014, pe);
        }
    }
}

/* ---- Waiter: block 1, thread 0, waits on its own ivars ---- */

template <typename T> __device__ inline long long ld(const T *p) { return (long long)*(const volatile T *)p; }

#define WCHECK(step, idx, expect, got) GPU_DCHECK(log, left, (step), (idx), (long long)(expect), (long long)(got))

/* Releases step k on the left-hand PE (whose setter writes our ivars). */
__device__ inline void go_step(uint64_t *go, int k, int left) { gshmemx_signal_op(&go[k], 1, GSHMEM_SIGNAL_SET, left); }

/* Checks every ivar against the values the steps so far leave. */
template <typename T> __device__ void check_all(const T *iv, const long long *model, int step, gpu_log *log, int left)
{
    for (int i = 0; i < NIV; i++) WCHECK(step, i, model[i], ld(&iv[i]));
}

template <class Tr> __device__ void waiter(typename Tr::type *iv, uint64_t *go, int left, gpu_log *log)
{
    typedef typename Tr::type T;
    long long model[NIV];
    for (int i = 0; i < NIV; i++) model[i] = iv_init(i);
    int status[NIV];
    size_t idx[NIV];
    T vals[NIV];

    /* 0: EQ */
    WCHECK(0, -1, 0, Tr::test(&iv[0], GSHMEM_CMP_EQ, (T)5));
    go_step(go, 0, left);
    Tr::wait_until(&iv[0], GSHMEM_CMP_EQ, (T)5);
    model[0] = 5;
    WCHECK(0, -2, 1, Tr::test(&iv[0], GSHMEM_CMP_EQ, (T)5));
    check_all(iv, model, 0, log, left);
    /* 1: NE */
    WCHECK(1, -1, 0, Tr::test(&iv[15], GSHMEM_CMP_NE, (T)0));
    go_step(go, 1, left);
    Tr::wait_until(&iv[15], GSHMEM_CMP_NE, (T)0);
    model[15] = 3;
    check_all(iv, model, 1, log, left);
    /* 2: GT */
    WCHECK(2, -1, 0, Tr::test(&iv[14], GSHMEM_CMP_GT, (T)8));
    go_step(go, 2, left);
    Tr::wait_until(&iv[14], GSHMEM_CMP_GT, (T)8);
    model[14] = 9;
    check_all(iv, model, 2, log, left);
    /* 3: LT */
    WCHECK(3, -1, 0, Tr::test(&iv[12], GSHMEM_CMP_LT, (T)11));
    go_step(go, 3, left);
    Tr::wait_until(&iv[12], GSHMEM_CMP_LT, (T)11);
    model[12] = 10;
    check_all(iv, model, 3, log, left);
    /* 4: LE */
    WCHECK(4, -1, 0, Tr::test(&iv[13], GSHMEM_CMP_LE, (T)20));
    go_step(go, 4, left);
    Tr::wait_until(&iv[13], GSHMEM_CMP_LE, (T)20);
    model[13] = 20;
    check_all(iv, model, 4, log, left);
    /* 5: GE */
    WCHECK(5, -1, 0, Tr::test(&iv[14], GSHMEM_CMP_GE, (T)30));
    go_step(go, 5, left);
    Tr::wait_until(&iv[14], GSHMEM_CMP_GE, (T)30);
    model[14] = 30;
    check_all(iv, model, 5, log, left);

    /* 6: _all with 2 and 5 excluded */
    for (int i = 0; i < NIV; i++) status[i] = i == 2 || i == 5;
    WCHECK(6, -1, 0, Tr::test_all(iv, NIV, status, GSHMEM_CMP_EQ, (T)70));
    go_step(go, 6, left);
    Tr::wait_all(iv, NIV, status, GSHMEM_CMP_EQ, (T)70);
    for (int i = 0; i < NIV; i++)
        if (!status[i]) model[i] = 70;
    WCHECK(6, -2, 1, Tr::test_all(iv, NIV, status, GSHMEM_CMP_EQ, (T)70));
    WCHECK(6, -3, 0, Tr::test_all(iv, NIV, NULL, GSHMEM_CMP_EQ, (T)70)); /* 2 and 5 are still 0 */
    check_all(iv, model, 6, log, left);

    /* 7: _any with 3 excluded: 3 is set first but only 11 may be returned */
    for (int i = 0; i < NIV; i++) status[i] = i == 3;
    WCHECK(7, -1, (long long)SIZE_MAX, Tr::test_any(iv, NIV, status, GSHMEM_CMP_EQ, (T)80));
    go_step(go, 7, left);
    WCHECK(7, -2, 11, Tr::wait_any(iv, NIV, status, GSHMEM_CMP_EQ, (T)80));
    model[3] = 80;
    model[11] = 80;
    {
        size_t any = Tr::test_any(iv, NIV, NULL, GSHMEM_CMP_EQ, (T)80);
        if (any != 3 && any != 11) WCHECK(7, -3, 3, any);
    }
    check_all(iv, model, 7, log, left);

    /* 8: _some: until 4, 8 and 12 have all been reported */
    WCHECK(8, -1, 0, Tr::test_some(iv, NIV, idx, NULL, GSHMEM_CMP_EQ, (T)90));
    go_step(go, 8, left);
    for (unsigned seen = 0; seen != ((1u << 4) | (1u << 8) | (1u << 12));) {
        size_t c = Tr::wait_some(iv, NIV, idx, NULL, GSHMEM_CMP_EQ, (T)90);
        if (c < 1 || c > 3) {
            WCHECK(8, -2, 1, c);
            break;
        }
        for (size_t k = 0; k < c; k++) {
            if ((idx[k] != 4 && idx[k] != 8 && idx[k] != 12) || (k && idx[k] <= idx[k - 1])) WCHECK(8, k, 4, idx[k]);
            seen |= 1u << (idx[k] & 15);
        }
    }
    model[4] = model[8] = model[12] = 90;
    WCHECK(8, -3, 3, Tr::test_some(iv, NIV, idx, NULL, GSHMEM_CMP_EQ, (T)90));
    check_all(iv, model, 8, log, left);

    /* 9: _all_vector over the odd elements */
    for (int i = 0; i < NIV; i++) {
        status[i] = !(i & 1);
        vals[i] = (T)(100 + i);
    }
    WCHECK(9, -1, 0, Tr::test_all_v(iv, NIV, status, GSHMEM_CMP_EQ, vals));
    go_step(go, 9, left);
    Tr::wait_all_v(iv, NIV, status, GSHMEM_CMP_EQ, vals);
    for (int i = 1; i < NIV; i += 2) model[i] = 100 + i;
    WCHECK(9, -2, 1, Tr::test_all_v(iv, NIV, status, GSHMEM_CMP_EQ, vals));
    check_all(iv, model, 9, log, left);

    /* 10: _any_vector, GE 200 + i: only element 6 gets there */
    for (int i = 0; i < NIV; i++) vals[i] = (T)(200 + i);
    WCHECK(10, -1, (long long)SIZE_MAX, Tr::test_any_v(iv, NIV, NULL, GSHMEM_CMP_GE, vals));
    go_step(go, 10, left);
    WCHECK(10, -2, 6, Tr::wait_any_v(iv, NIV, NULL, GSHMEM_CMP_GE, vals));
    model[6] = 206;
    check_all(iv, model, 10, log, left);

    /* 11: _some_vector, NE the values now: 1 and 14 change */
    for (int i = 0; i < NIV; i++) vals[i] = (T)model[i];
    WCHECK(11, -1, 0, Tr::test_some_v(iv, NIV, idx, NULL, GSHMEM_CMP_NE, vals));
    go_step(go, 11, left);
    for (unsigned seen = 0; seen != ((1u << 1) | (1u << 14));) {
        size_t c = Tr::wait_some_v(iv, NIV, idx, NULL, GSHMEM_CMP_NE, vals);
        if (c < 1 || c > 2) {
            WCHECK(11, -2, 1, c);
            break;
        }
        for (size_t k = 0; k < c; k++) {
            if ((idx[k] != 1 && idx[k] != 14) || (k && idx[k] <= idx[k - 1])) WCHECK(11, k, 1, idx[k]);
            seen |= 1u << (idx[k] & 15);
        }
    }
    model[1] = 1001;
    model[14] = 1014;
    check_all(iv, model, 11, log, left);

    /* Everything excluded: _any gives SIZE_MAX, _some 0, _all returns at once. */
    for (int i = 0; i < NIV; i++) status[i] = 1;
    WCHECK(12, -1, (long long)SIZE_MAX, Tr::wait_any(iv, NIV, status, GSHMEM_CMP_EQ, (T)12345));
    WCHECK(12, -2, 0, Tr::wait_some(iv, NIV, idx, status, GSHMEM_CMP_EQ, (T)12345));
    Tr::wait_all(iv, NIV, status, GSHMEM_CMP_EQ, (T)12345);
    WCHECK(12, -3, (long long)SIZE_MAX, Tr::test_any_v(iv, NIV, status, GSHMEM_CMP_EQ, vals));
    WCHECK(12, -4, 0, Tr::test_some_v(iv, NIV, idx, status, GSHMEM_CMP_EQ, vals));
    WCHECK(12, -5, 1, Tr::test_all(iv, NIV, status, GSHMEM_CMP_EQ, (T)12345));
}
#undef WCHECK

template <class Tr> __global__ void wait_kernel(typename Tr::type *iv, uint64_t *go, gpu_log *log)
{
    int n = gshmem_n_pes(), my = gshmem_my_pe();
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) setter<Tr>(iv, go, (my + 1) % n);
    else waiter<Tr>(iv, go, (my + n - 1) % n, log);
}

template <class Tr> static void test_wait(void)
{
    typedef typename Tr::type T;
    T *iv = (T *)gshmem_malloc(NIV * sizeof(T));
    uint64_t *go = (uint64_t *)gshmem_calloc(NSTEPS, sizeof(uint64_t));
    GPU_CHECK(iv && go, "%s: gshmem allocation failed", Tr::name());
    T init[NIV];
    for (int i = 0; i < NIV; i++) init[i] = (T)iv_init(i);
    GPU_CHECK_CUDA(cudaMemcpy(iv, init, sizeof(init), cudaMemcpyHostToDevice));
    GPU_CHECK_CUDA(cudaMemset(go, 0, NSTEPS * sizeof(uint64_t)));
    gpu_log *log = gpu_log_new();
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();
    /* Two blocks of one kernel: setter and waiter run at once on every PE. */
    wait_kernel<Tr><<<2, 32>>>(iv, go, log);
    GPU_CHECK_KERNEL();
    char what[64];
    snprintf(what, sizeof(what), "%s waits (what = step)", Tr::name());
    gpu_log_check(log, what, __FILE__);
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(log));
    gshmem_free(go);
    gshmem_free(iv);
    if (gshmem_my_pe() == 0) printf("wait/test families %s ok\n", Tr::name());
}

/* ---- Acquire: the wait, not anything else, makes the new data visible --------------------
 * Around a ring, ACQ_ROUNDS rounds; round r: the block acks the left-hand PE (it has
 * read round r - 1), polls (relaxed: no acquire of its own) for the right-hand PE's ack,
 * sends round r's pattern to it with a block put_signal, waits with the round's form
 * (r % 5: signal_wait_until, uint64_wait_until, wait_until_all, _any, _some on four
 * ivars set by the sender after the data, every one with a release), then reads all
 * ACQ_BYTES with ld.global.ca (cached in L1) and checks them. The previous round's check
 * left the same lines in the SM's L1, and nothing between that check and the wait
 * invalidates L1 (release stores and relaxed polls do not), so only the wait's own
 * acquire keeps those loads from returning round r - 1's bytes. Measured on the H200:
 * with the wait's closing acquire removed, this test failed (docs/PERFORMANCE.md,
 * "Sessions 11-12"). */
#define ACQ_BYTES 32768
#define ACQ_ROUNDS 100
#define ACQ_THREADS 256

__device__ inline uint64_t acq_poll_relaxed(const uint64_t *p, uint64_t target)
{
    uint64_t v;
    do asm volatile("ld.relaxed.sys.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    while (v < target);
    return v;
}

__global__ void __launch_bounds__(ACQ_THREADS)
    acquire_kernel(char *data, uint64_t *ivars, uint64_t *ack, char *src, gpu_log *log)
{
    int n = gshmem_n_pes(), my = gshmem_my_pe(), right = (my + 1) % n, left = (my + n - 1) % n;
    __shared__ size_t got;
    __shared__ size_t idx[4];
    for (int r = 0; r < ACQ_ROUNDS; r++) {
        const uint64_t want = (uint64_t)r + 1;
        const int form = r % 5;
        __syncthreads();
        if (threadIdx.x == 0) {
            gshmem_signal_add(ack, 1, left);        /* left may overwrite my data now */
            acq_poll_relaxed(ack, want);             /* right has read round r - 1 */
        }
        for (unsigned j = threadIdx.x; j < ACQ_BYTES; j += blockDim.x) src[j] = (char)gpu_pat8(my, j, r);
        __syncthreads();
        /* the data, with ivars[0] (the signal) released after it; then ivars 1-3 */
        gshmemx_putmem_signal_block(data, src, ACQ_BYTES, &ivars[0], want, GSHMEM_SIGNAL_SET, right);
        if (threadIdx.x == 0)
            for (int k = 1; k < 4; k++) gshmem_signal_set(&ivars[k], want, right);

        if (threadIdx.x == 0) {
            got = 0;
            switch (form) {
            case 0: got = gshmem_signal_wait_until(&ivars[0], GSHMEM_CMP_GE, want) >= want; break;
            case 1: gshmem_uint64_wait_until(&ivars[0], GSHMEM_CMP_GE, want); got = 1; break;
            case 2: gshmem_uint64_wait_until_all(ivars, 4, NULL, GSHMEM_CMP_GE, want); got = 1; break;
            case 3: got = gshmem_uint64_wait_until_any(ivars, 4, NULL, GSHMEM_CMP_GE, want) < 4; break;
            default: got = gshmem_uint64_wait_until_some(ivars, 4, idx, NULL, GSHMEM_CMP_GE, want) >= 1; break;
            }
            GPU_DCHECK(log, left, r, -1 - form, (size_t)1, got);
        }
        __syncthreads();
        for (unsigned j = threadIdx.x * 4; j < ACQ_BYTES; j += blockDim.x * 4) {
            unsigned w = __ldca((const unsigned *)(data + j));
            for (unsigned b = 0; b < 4; b++)
                GPU_DCHECK(log, left, r, j + b, gpu_pat8(left, j + b, r), (uint8_t)(w >> (8 * b)));
        }
    }
}

static void test_acquire(void)
{
    char *data = (char *)gshmem_malloc(ACQ_BYTES);
    uint64_t *ivars = (uint64_t *)gshmem_calloc(4, sizeof(uint64_t));
    uint64_t *ack = (uint64_t *)gshmem_calloc(1, sizeof(uint64_t));
    GPU_CHECK(data && ivars && ack, "acquire: gshmem allocation failed");
    char *src = NULL;
    GPU_CHECK_CUDA(cudaMalloc((void **)&src, ACQ_BYTES));
    gpu_poison(data, ACQ_BYTES);
    GPU_CHECK_CUDA(cudaMemset(ivars, 0, 4 * sizeof(uint64_t)));
    GPU_CHECK_CUDA(cudaMemset(ack, 0, sizeof(uint64_t)));
    gpu_log *log = gpu_log_new();
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();
    acquire_kernel<<<1, ACQ_THREADS>>>(data, ivars, ack, src, log);
    GPU_CHECK_KERNEL();
    gpu_log_check(log, "acquire after a wait, L1 holding the old lines (what = round, idx = byte; -1 - form: "
                       "the wait's result)", __FILE__);
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(log));
    GPU_CHECK_CUDA(cudaFree(src));
    gshmem_free(ack);
    gshmem_free(ivars);
    gshmem_free(data);
    if (gshmem_my_pe() == 0) printf("acquire after waits ok (%d rounds, %d bytes)\n", ACQ_ROUNDS, ACQ_BYTES);
}

int main(void)
{
    gpu_test_init("gpu_wait");
    test_acquire();
    test_wait<wt_short>();
    test_wait<wt_ushort>();
    test_wait<wt_int>();
    test_wait<wt_uint32>();
    test_wait<wt_long>();
    test_wait<wt_ulonglong>();
    test_wait<wt_size>();
    test_wait<wt_ptrdiff>();
    gpu_test_pass("gpu_wait");
    return 0;
}
