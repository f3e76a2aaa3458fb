/* The host API on the device heap, checked through cudaMemcpy:
 *  1. putmem/getmem (host or device-heap buffers on the local side) at odd sizes and
 *     offsets; typed p/g, put/get_nbi + quiet, iput/iget, sized put/get/iput/iget.
 *  2. AMOs: fetch_add from every PE (fetched values form a permutation, exact final
 *     value), fetch_inc, compare_swap increments under contention, and/or/xor bits per
 *     PE, and a set/fetch/swap/_nbi sequence for float, double and long.
 *  3. putmem_signal / signal_fetch / signal_wait_until between hosts, SET and ADD.
 *  4. Host wait_until/_all/_any/_some/test on ivars a peer's kernel writes.
 *  5. gshmem_ptr: a device address (host and device agree) that a kernel stores through.
 *  6. malloc/calloc/realloc/align/free: device pointers, calloc zeroed, realloc keeps
 *     the content, alignment honoured, blocks reachable on every PE; a realloc that
 *     moves 64 MiB, with the left PE's put into the moved tail right after it (the
 *     copy must be over before realloc returns); calloc while this PE's own kernel on
 *     the legacy stream waits for a word the right PE sets only after its calloc (the
 *     clear must not wait for that kernel). */
#include "gpu_check.cuh"

#include <string.h>
#include <strings.h>

#include <vector>

static int me, npes, right_pe, left_pe;

#define REGION 72192 /* the putmem cases end at 69743; typed puts use the last 1024 bytes */
#define SALT_SRC 31u
#define SALT_PUT 37u

static void check_region(const char *what, const void *dev, const std::vector<uint8_t> &expect)
{
    uint8_t *got = (uint8_t *)gpu_fetch(dev, expect.size());
    size_t bad = gpu_cmp_bytes(what, got, expect.data(), expect.size());
    free(got);
    GPU_CHECK(bad == 0, "%s: %zu bytes wrong", what, bad);
}

/* ---- 1. RMA ------------------------------------------------------------------------------ */

static void test_rma(void)
{
    /* src: this PE's pattern (read by peers' gets). put: what the left PE puts here. */
    char *src = (char *)gshmem_malloc(REGION);
    char *put = (char *)gshmem_malloc(REGION);
    char *got = (char *)gshmem_malloc(REGION); /* gets land here when the destination is the device heap */
    GPU_CHECK(src && put && got, "rma: gshmem_malloc failed");
    std::vector<uint8_t> h(REGION);
    for (size_t i = 0; i < REGION; i++) h[i] = gpu_pat8(me, i, SALT_SRC);
    GPU_CHECK_CUDA(cudaMemcpy(src, h.data(), REGION, cudaMemcpyHostToDevice));
    gpu_poison(put, REGION);
    gpu_poison(got, REGION);
    gshmem_barrier_all();

    /* Puts to the right: (size, dst offset, src offset), sources alternately host
     * memory (the pattern) and this PE's device-heap src (the same pattern). */
    static const unsigned cases[][3] = {{1, 0, 0}, {13, 20, 3}, {4099, 40, 17}, {65543, 4200, 4200}};
    std::vector<uint8_t> expect_put(REGION, GPU_POISON);
    for (unsigned c = 0; c < 4; c++) {
        unsigned size = cases[c][0], doff = cases[c][1], soff = cases[c][2];
        if (c % 2) gshmem_putmem(put + doff, src + soff, size, right_pe);
        else gshmem_putmem(put + doff, h.data() + soff, size, right_pe);
    }
    for (unsigned c = 0; c < 4; c++)
        for (unsigned j = 0; j < cases[c][0]; j++)
            expect_put[cases[c][1] + j] = gpu_pat8(left_pe, cases[c][2] + j, SALT_SRC);

    /* Gets from the left into host memory and into the device heap. */
    std::vector<uint8_t> hget(REGION, GPU_POISON), expect_hget(REGION, GPU_POISON), expect_got(REGION, GPU_POISON);
    gshmem_getmem(hget.data() + 5, src + 9, 65537, left_pe);
    for (unsigned j = 0; j < 65537; j++) expect_hget[5 + j] = gpu_pat8(left_pe, 9 + j, SALT_SRC);
    gshmem_getmem(got + 3, src + 3, 1000, left_pe);
    gshmem_getmem_nbi(got + 2000, src + 100, 333, left_pe);
    gshmem_quiet();
    for (unsigned j = 0; j < 1000; j++) expect_got[3 + j] = gpu_pat8(left_pe, 3 + j, SALT_SRC);
    for (unsigned j = 0; j < 333; j++) expect_got[2000 + j] = gpu_pat8(left_pe, 100 + j, SALT_SRC);
    GPU_CHECK(gpu_cmp_bytes("host getmem into host memory", hget.data(), expect_hget.data(), REGION) == 0,
              "host getmem into host memory wrong");

    /* Typed and sized puts into the last 1024 bytes, which the cases above leave alone. */
    char *t = put + REGION - 1024;
    std::vector<uint8_t> &e = expect_put;
    int iv[17];
    for (int i = 0; i < 17; i++) iv[i] = gpu_pat<int>(me, i, 1);
    for (int i = 0; i < 17; i++) gshmem_int_p((int *)t + i, iv[i], right_pe); /* [0, 68) */
    for (int i = 0; i < 17; i++) {
        int v = gpu_pat<int>(left_pe, i, 1);
        memcpy(&e[REGION - 1024 + 4 * i], &v, 4);
    }
    long lv[11];
    for (int i = 0; i < 11; i++) lv[i] = gpu_pat<long>(me, i, 2);
    gshmem_long_iput((long *)(t + 128), lv, 3, 1, 11, right_pe); /* longs 0,3,..30 of [128, 376) */
    for (int i = 0; i < 11; i++) {
        long v = gpu_pat<long>(left_pe, i, 2);
        memcpy(&e[REGION - 1024 + 128 + 24 * i], &v, 8);
    }
    double dv[9];
    for (int i = 0; i < 9; i++) dv[i] = gpu_pat<double>(me, i, 3);
    gshmem_double_put_nbi((double *)(t + 400), dv, 9, right_pe); /* [400, 472) */
    gshmem_quiet();
    for (int i = 0; i < 9; i++) {
        double v = gpu_pat<double>(left_pe, i, 3);
        memcpy(&e[REGION - 1024 + 400 + 8 * i], &v, 8);
    }
    uint32_t u32[7];
    for (int i = 0; i < 7; i++) u32[i] = gpu_pat<uint32_t>(me, i, 4);
    gshmem_put32(t + 480, u32, 7, right_pe); /* [480, 508) */
    for (int i = 0; i < 7; i++) {
        uint32_t v = gpu_pat<uint32_t>(left_pe, i, 4);
        memcpy(&e[REGION - 1024 + 480 + 4 * i], &v, 4);
    }
    uint16_t u16[5];
    for (int i = 0; i < 5; i++) u16[i] = gpu_pat<uint16_t>(me, i, 5);
    gshmem_iput16(t + 512, u16, 2, 1, 5, right_pe); /* shorts 0,2,..8 of [512, 530) */
    for (int i = 0; i < 5; i++) {
        uint16_t v = gpu_pat<uint16_t>(left_pe, i, 5);
        memcpy(&e[REGION - 1024 + 512 + 4 * i], &v, 2);
    }
    gpu_u128 q[3];
    for (int i = 0; i < 3; i++) q[i] = gpu_pat<gpu_u128>(me, i, 6);
    gshmem_put128_nbi(t + 544, q, 3, right_pe); /* [544, 592) */
    gshmem_quiet();
    for (int i = 0; i < 3; i++) {
        gpu_u128 v = gpu_pat<gpu_u128>(left_pe, i, 6);
        memcpy(&e[REGION - 1024 + 544 + 16 * i], &v, 16);
    }
    gshmem_barrier_all();
    check_region("host putmem/typed/sized puts from the left PE", put, expect_put);
    check_region("host getmem/getmem_nbi into the device heap", got, expect_got);

    /* Typed gets from the left's src: g, get_nbi, iget, sized get/iget. */
    int bad = 0;
    for (int i = 0; i < 9; i++) {
        unsigned char b = gshmem_uchar_g((unsigned char *)src + 77 + i, left_pe);
        if (b != gpu_pat8(left_pe, 77 + i, SALT_SRC) && bad++ < 8)
            fprintf(stderr, "PE %d: uchar_g byte %d of PE %d: 0x%02x, expected 0x%02x\n", me, 77 + i, left_pe, b,
                    gpu_pat8(left_pe, 77 + i, SALT_SRC));
    }
    uint8_t hb[64 * 3];
    memset(hb, GPU_POISON, sizeof(hb));
    gshmem_iget8(hb, src + 11, 3, 2, 64, left_pe); /* hb[3j] = src[11 + 2j] */
    for (int j = 0; j < 64 * 3; j++) {
        uint8_t want = j % 3 ? (uint8_t)GPU_POISON : gpu_pat8(left_pe, 11 + 2 * (j / 3), SALT_SRC);
        if (hb[j] != want && bad++ < 8)
            fprintf(stderr, "PE %d: iget8 byte %d: 0x%02x, expected 0x%02x\n", me, j, hb[j], want);
    }
    uint64_t hw[10];
    gshmem_get64_nbi(hw, src + 512, 10, left_pe);
    gshmem_quiet();
    for (int j = 0; j < 10; j++) {
        uint64_t want;
        uint8_t wb[8];
        for (int k = 0; k < 8; k++) wb[k] = gpu_pat8(left_pe, 512 + 8 * j + k, SALT_SRC);
        memcpy(&want, wb, 8);
        if (hw[j] != want && bad++ < 8)
            fprintf(stderr, "PE %d: get64_nbi word %d: 0x%llx, expected 0x%llx\n", me, j, (unsigned long long)hw[j],
                    (unsigned long long)want);
    }
    short hs[20];
    memset(hs, GPU_POISON, sizeof(hs));
    gshmem_short_iget(hs, (const short *)(src + 1024), 2, 3, 10, left_pe); /* hs[2j] = srcshort[3j] */
    for (int j = 0; j < 20; j++) {
        short want;
        if (j % 2) memset(&want, GPU_POISON, 2);
        else {
            uint8_t wb[2] = {gpu_pat8(left_pe, 1024 + 6 * (j / 2), SALT_SRC), gpu_pat8(left_pe, 1024 + 6 * (j / 2) + 1, SALT_SRC)};
            memcpy(&want, wb, 2);
        }
        if (hs[j] != want && bad++ < 8) fprintf(stderr, "PE %d: short_iget element %d: %d, expected %d\n", me, j, hs[j], want);
    }
    gpu_u128 hq[4];
    gshmem_get128(hq, src + 2048, 4, left_pe);
    {
        uint8_t wb[64];
        for (int k = 0; k < 64; k++) wb[k] = gpu_pat8(left_pe, 2048 + k, SALT_SRC);
        if (memcmp(hq, wb, 64) != 0 && bad++ < 8) fprintf(stderr, "PE %d: get128 of 4 elements differs\n", me);
    }
    GPU_CHECK(bad == 0, "host typed/sized gets: %d wrong", bad);
    gshmem_barrier_all();
    gshmem_free(got);
    gshmem_free(put);
    gshmem_free(src);
    if (me == 0) printf("host RMA on the device heap ok\n");
}

/* ---- 2. AMOs ----------------------------------------------------------------------------- */

#define HOST_AMO_K 200
#define HOST_CAS_K 20

struct amo_area {
    uint64_t counter;   /* PE 0: fetch_add */
    int finc;           /* PE n-1: fetch_inc */
    int pad0;
    uint64_t casctr;    /* PE 0: compare_swap increments */
    uint64_t bits_or, bits_and, bits_xor; /* PE 0 */
    long seq_long[2];
    float seq_float[2];
    double seq_double[2];
};

static void test_amo(void)
{
    amo_area *a = (amo_area *)gshmem_calloc(1, sizeof(amo_area));
    uint64_t *all = (uint64_t *)gshmem_malloc((size_t)npes * HOST_AMO_K * sizeof(uint64_t));
    GPU_CHECK(a && all, "host amo: gshmem allocation failed");
    amo_area init;
    memset(&init, 0, sizeof(init));
    init.bits_and = ~0ull;
    init.bits_xor = 0x0123456789abcdefull;
    GPU_CHECK_CUDA(cudaMemcpy(a, &init, sizeof(init), cudaMemcpyHostToDevice));
    gpu_poison(all, (size_t)npes * HOST_AMO_K * sizeof(uint64_t));
    gshmem_barrier_all();

    uint64_t mine[HOST_AMO_K];
    int last_inc = -1, bad = 0;
    for (int k = 0; k < HOST_AMO_K; k++) {
        mine[k] = gshmem_uint64_atomic_fetch_add(&a->counter, 1, 0);
        int v = gshmem_int_atomic_fetch_inc(&a->finc, npes - 1);
        if (v <= last_inc && bad++ < 8)
            fprintf(stderr, "PE %d: int fetch_inc returned %d after %d (must grow)\n", me, v, last_inc);
        last_inc = v;
    }
    gshmem_uint64_put(all + (size_t)me * HOST_AMO_K, mine, HOST_AMO_K, 0);
    for (int k = 0; k < HOST_CAS_K; k++) {
        uint64_t cur = gshmem_uint64_atomic_fetch(&a->casctr, 0);
        for (;;) {
            uint64_t old = gshmem_uint64_atomic_compare_swap(&a->casctr, cur, cur + 1, 0);
            if (old == cur) break;
            cur = old;
        }
    }
    uint64_t bit = 1ull << (me % 64);
    uint64_t o = gshmem_uint64_atomic_fetch_or(&a->bits_or, bit, 0);
    if ((o & bit) && bad++ < 8) fprintf(stderr, "PE %d: fetch_or saw its bit already set: 0x%llx\n", me, (unsigned long long)o);
    gshmem_uint64_atomic_and(&a->bits_and, ~bit, 0);
    gshmem_uint64_atomic_fetch_xor_nbi(&o, &a->bits_xor, bit, 0);
    gshmem_quiet();
    if ((o & bit) != (init.bits_xor & bit) && bad++ < 8)
        fprintf(stderr, "PE %d: fetch_xor_nbi saw bit %d changed by another PE: 0x%llx\n", me, me % 64,
                (unsigned long long)o);

    /* A sequence on slot [0] of the right-hand PE, checked step by step. */
    long lb = 5000 + me;
    gshmem_long_atomic_set(&a->seq_long[0], lb, right_pe);
    long lf = gshmem_long_atomic_fetch(&a->seq_long[0], right_pe);
    long ls = gshmem_long_atomic_swap(&a->seq_long[0], lb + 1, right_pe);
    long lc = gshmem_long_atomic_compare_swap(&a->seq_long[0], lb + 1, lb + 7, right_pe);
    long ladd = gshmem_long_atomic_fetch_add(&a->seq_long[0], 3, right_pe); /* lb + 10 */
    if ((lf != lb || ls != lb || lc != lb + 1 || ladd != lb + 7) && bad++ < 8)
        fprintf(stderr, "PE %d: long set/fetch/swap/cswap/fetch_add on PE %d returned %ld %ld %ld %ld, expected %ld %ld %ld %ld\n",
                me, right_pe, lf, ls, lc, ladd, lb, lb, lb + 1, lb + 7);
    float fb = 100.0f + (float)me, ff, fsw;
    gshmem_float_atomic_set(&a->seq_float[0], fb, right_pe);
    gshmem_float_atomic_fetch_nbi(&ff, &a->seq_float[0], right_pe);
    gshmem_float_atomic_swap_nbi(&fsw, &a->seq_float[0], fb + 0.5f, right_pe);
    gshmem_quiet();
    if ((ff != fb || fsw != fb) && bad++ < 8)
        fprintf(stderr, "PE %d: float fetch_nbi/swap_nbi returned %g %g, expected %g\n", me, ff, fsw, fb);
    double db = 1e9 + me;
    gshmem_double_atomic_set(&a->seq_double[0], db, right_pe);
    double dsw = gshmem_double_atomic_swap(&a->seq_double[0], db * 2, right_pe);
    double df = gshmem_double_atomic_fetch(&a->seq_double[0], right_pe);
    if ((dsw != db || df != db * 2) && bad++ < 8)
        fprintf(stderr, "PE %d: double swap/fetch returned %g %g, expected %g %g\n", me, dsw, df, db, db * 2);
    GPU_CHECK(bad == 0, "host AMO return values: %d wrong", bad);
    gshmem_barrier_all();

    amo_area got;
    GPU_CHECK_CUDA(cudaMemcpy(&got, a, sizeof(got), cudaMemcpyDeviceToHost));
    uint64_t all_bits = 0;
    for (int p = 0; p < npes; p++) all_bits |= 1ull << (p % 64);
    if (me == 0) {
        GPU_CHECK(got.counter == (uint64_t)npes * HOST_AMO_K, "host fetch_add: final %llu, expected %llu",
                  (unsigned long long)got.counter, (unsigned long long)npes * HOST_AMO_K);
        GPU_CHECK(got.casctr == (uint64_t)npes * HOST_CAS_K, "host compare_swap increments: final %llu, expected %llu",
                  (unsigned long long)got.casctr, (unsigned long long)npes * HOST_CAS_K);
        GPU_CHECK(got.bits_or == all_bits && got.bits_and == ~all_bits && got.bits_xor == (init.bits_xor ^ all_bits),
                  "host or/and/xor: 0x%llx 0x%llx 0x%llx, expected 0x%llx 0x%llx 0x%llx",
                  (unsigned long long)got.bits_or, (unsigned long long)got.bits_and, (unsigned long long)got.bits_xor,
                  (unsigned long long)all_bits, (unsigned long long)~all_bits,
                  (unsigned long long)(init.bits_xor ^ all_bits));
        uint64_t *v = (uint64_t *)gpu_fetch(all, (size_t)npes * HOST_AMO_K * sizeof(uint64_t));
        std::vector<unsigned char> seen((size_t)npes * HOST_AMO_K, 0);
        for (size_t i = 0; i < (size_t)npes * HOST_AMO_K; i++)
            GPU_CHECK(v[i] < seen.size() && !seen[v[i]]++,
                      "host fetch_add: PE %zu call %zu fetched %llu (out of range or fetched twice)", i / HOST_AMO_K,
                      i % HOST_AMO_K, (unsigned long long)v[i]);
        free(v);
    }
    if (me == npes - 1)
        GPU_CHECK(got.finc == npes * HOST_AMO_K, "host int fetch_inc: final %d, expected %d", got.finc,
                  npes * HOST_AMO_K);
    long lwant = 5000 + left_pe + 10;
    float fwant = 100.0f + (float)left_pe + 0.5f;
    double dwant = (1e9 + left_pe) * 2;
    GPU_CHECK(got.seq_long[0] == lwant && got.seq_float[0] == fwant && got.seq_double[0] == dwant &&
                  got.seq_long[1] == 0 && got.seq_float[1] == 0 && got.seq_double[1] == 0,
              "host AMO sequences from PE %d: long %ld float %g double %g (expected %ld %g %g; neighbours %ld %g %g must be 0)",
              left_pe, got.seq_long[0], got.seq_float[0], got.seq_double[0], lwant, fwant, dwant, got.seq_long[1],
              got.seq_float[1], got.seq_double[1]);
    gshmem_free(all);
    gshmem_free(a);
    if (me == 0) printf("host AMOs on the device heap ok\n");
}

/* ---- 3. Signals between hosts -------------------------------------------------------------- */

#define HSIG_ROUNDS 8

static void test_signal(void)
{
    char *data = (char *)gshmem_malloc(REGION);
    uint64_t *sig = (uint64_t *)gshmem_calloc(2, sizeof(uint64_t)); /* signal, ack */
    GPU_CHECK(data && sig, "host signal: gshmem allocation failed");
    gpu_poison(data, REGION);
    gshmem_barrier_all();
    std::vector<uint8_t> src(REGION), expect(REGION, GPU_POISON);
    for (int r = 0; r < HSIG_ROUNDS; r++) {
        size_t size = 1 + ((size_t)r * 10007) % (REGION - 16);
        gshmem_signal_wait_until(&sig[1], GSHMEM_CMP_GE, (uint64_t)r); /* right has read round r - 1 */
        for (size_t j = 0; j < size; j++) src[j] = gpu_pat8(me, j, 500 + r);
        if (r % 2) gshmem_putmem_signal(data, src.data(), size, &sig[0], (uint64_t)r + 1, GSHMEM_SIGNAL_SET, right_pe);
        else {
            gshmem_putmem_signal_nbi(data, src.data(), size, &sig[0], 1, GSHMEM_SIGNAL_ADD, right_pe);
            gshmem_quiet();
        }
        uint64_t v = gshmem_signal_wait_until(&sig[0], GSHMEM_CMP_GE, (uint64_t)r + 1);
        GPU_CHECK(v == (uint64_t)r + 1 && gshmem_signal_fetch(&sig[0]) == (uint64_t)r + 1,
                  "host signal round %d: wait returned %llu", r, (unsigned long long)v);
        for (size_t j = 0; j < size; j++) expect[j] = gpu_pat8(left_pe, j, 500 + r);
        uint8_t *got = (uint8_t *)gpu_fetch(data, size);
        char what[64];
        snprintf(what, sizeof(what), "host putmem_signal round %d (%zu bytes)", r, size);
        GPU_CHECK(gpu_cmp_bytes(what, got, expect.data(), size) == 0, "%s wrong", what);
        free(got);
        gshmem_signal_add(&sig[1], 1, left_pe);
    }
    gshmem_barrier_all();
    gshmem_free(sig);
    gshmem_free(data);
    if (me == 0) printf("host put_signal/signal_wait_until on the device heap ok\n");
}

/* ---- 4. Host waits on ivars a kernel writes ------------------------------------------------ */

#define NIV 8

/* Writes the right-hand PE's ivars one at a time, a pause before each. */
__global__ void ivar_setter(long *iv, int *ivi, uint64_t *ivu)
{
    int n = gshmem_n_pes(), right = (gshmem_my_pe() + 1) % n;
    gpu_spin(2000000);
    gshmem_long_p(&iv[0], 42, right);                         /* wait_until EQ 42 */
    gpu_spin(2000000);
    for (int i = 0; i < NIV; i++) {                           /* wait_until_all GE 1 */
        gshmem_int_p(&ivi[i], i + 1, right);
        gpu_spin(200000);
    }
    gpu_spin(2000000);
    gshmem_uint64_atomic_set(&ivu[2], 7, right);              /* excluded from _any */
    gpu_spin(2000000);
    gshmem_uint64_atomic_set(&ivu[5], 7, right);              /* wait_until_any -> 5 */
    gpu_spin(2000000);
    gshmem_long_p(&iv[3], -9, right);                         /* wait_until_some LT 0 -> {3} */
    gshmem_quiet();
}

static void test_host_wait(void)
{
    long *iv = (long *)gshmem_calloc(NIV, sizeof(long));
    int *ivi = (int *)gshmem_calloc(NIV, sizeof(int));
    uint64_t *ivu = (uint64_t *)gshmem_calloc(NIV, sizeof(uint64_t));
    GPU_CHECK(iv && ivi && ivu, "host wait: gshmem_calloc failed");
    gshmem_barrier_all();
    cudaStream_t run;
    GPU_CHECK_CUDA(cudaStreamCreateWithFlags(&run, cudaStreamNonBlocking));
    ivar_setter<<<1, 1, 0, run>>>(iv, ivi, ivu);
    GPU_CHECK_CUDA(cudaGetLastError());

    gshmem_long_wait_until(&iv[0], GSHMEM_CMP_EQ, 42);
    GPU_CHECK(gshmem_long_test(&iv[0], GSHMEM_CMP_EQ, 42) == 1, "host long_test after wait_until: not satisfied");
    gshmem_int_wait_until_all(ivi, NIV, NULL, GSHMEM_CMP_GE, 1);
    int hi[NIV];
    GPU_CHECK_CUDA(cudaMemcpy(hi, ivi, sizeof(hi), cudaMemcpyDeviceToHost));
    for (int i = 0; i < NIV; i++)
        GPU_CHECK(hi[i] == i + 1, "host int_wait_until_all: ivar %d is %d, expected %d", i, hi[i], i + 1);
    GPU_CHECK(gshmem_int_test_all(ivi, NIV, NULL, GSHMEM_CMP_GE, 1) == 1, "host int_test_all after the wait: 0");
    int status[NIV] = {0, 0, 1, 0, 0, 0, 0, 0};
    size_t any = gshmem_uint64_wait_until_any(ivu, NIV, status, GSHMEM_CMP_EQ, 7);
    GPU_CHECK(any == 5, "host uint64_wait_until_any with element 2 excluded returned %zu, expected 5", any);
    size_t idx[NIV];
    size_t some = gshmem_long_wait_until_some(iv, NIV, idx, NULL, GSHMEM_CMP_LT, 0);
    GPU_CHECK(some == 1 && idx[0] == 3, "host long_wait_until_some LT 0 returned %zu (first index %zu), expected 1 (3)",
              some, some ? idx[0] : (size_t)-1);
    long want[NIV] = {42, 0, 0, -9, 0, 0, 0, 0};
    GPU_CHECK(gshmem_long_test_all_vector(iv, NIV, NULL, GSHMEM_CMP_EQ, want) == 1,
              "host long_test_all_vector: the ivars are not {42, 0, 0, -9, 0, ...}");
    GPU_CHECK_CUDA(cudaStreamSynchronize(run));
    GPU_CHECK_CUDA(cudaStreamDestroy(run));
    gshmem_barrier_all();
    gshmem_free(ivu);
    gshmem_free(ivi);
    gshmem_free(iv);
    if (me == 0) printf("host waits on ivars written by kernels ok\n");
}

/* ---- 5. gshmem_ptr ---------------------------------------------------------------------------- */

/* Node-local peers are mapped unless GSHMEM_DISABLE_P2P sends them through the proxy. */
static bool peers_mapped(void)
{
    const char *v = getenv("GSHMEM_DISABLE_P2P");
    return !(v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0));
}

__global__ void ptr_kernel(char *buf, char *peer_host_view, const char *foreign, gpu_log *log)
{
    int n = gshmem_n_pes(), my = gshmem_my_pe(), right = (my + 1) % n;
    char *p = (char *)gshmem_ptr(buf, right);
    if (threadIdx.x == 0) {
        GPU_DCHECK(log, right, 0, 0, (unsigned long long)(uintptr_t)peer_host_view, (unsigned long long)(uintptr_t)p);
        GPU_DCHECK(log, my, 1, 0, (unsigned long long)(uintptr_t)buf, (unsigned long long)(uintptr_t)gshmem_ptr(buf, my));
        GPU_DCHECK(log, my, 2, 0, 0ull, (unsigned long long)(uintptr_t)gshmem_ptr(foreign, my));
        GPU_DCHECK(log, n, 3, 0, 0ull, (unsigned long long)(uintptr_t)gshmem_ptr(buf, n));
    }
    if (!p) return;
    for (int j = threadIdx.x; j < 4096; j += blockDim.x) p[j] = (char)gpu_pat8(my, j, 77);
}

static void test_ptr(void)
{
    char *buf = (char *)gshmem_malloc(4096 + 64);
    GPU_CHECK(buf != NULL, "ptr: gshmem_malloc failed");
    gpu_poison(buf, 4096 + 64);
    char *foreign;
    GPU_CHECK_CUDA(cudaMalloc(&foreign, 64));
    char *r = (char *)gshmem_ptr(buf, right_pe);
    bool mapped = peers_mapped();
    if (mapped)
        GPU_CHECK(r != NULL, "host gshmem_ptr(buf, right PE %d) is NULL: a node-local peer must be mapped", right_pe);
    else
        GPU_CHECK(r == NULL, "host gshmem_ptr(buf, right PE %d) is %p with GSHMEM_DISABLE_P2P=1: expected NULL",
                  right_pe, (void *)r);
    GPU_CHECK(gshmem_ptr(buf, me) == buf, "host gshmem_ptr(buf, me) = %p, expected buf = %p", gshmem_ptr(buf, me),
              (void *)buf);
    GPU_CHECK(gshmem_ptr(foreign, me) == NULL, "host gshmem_ptr of a cudaMalloc pointer is %p, expected NULL",
              gshmem_ptr(foreign, me));
    cudaPointerAttributes attr;
    if (mapped) {
        GPU_CHECK_CUDA(cudaPointerGetAttributes(&attr, r));
        GPU_CHECK(attr.type == cudaMemoryTypeDevice, "gshmem_ptr(buf, right) is not a device address (type %d)",
                  (int)attr.type);
    }
    gpu_log *log = gpu_log_new();
    gshmem_barrier_all();
    ptr_kernel<<<1, 128>>>(buf, r, foreign, log);
    GPU_CHECK_KERNEL();
    gpu_log_check(log, "gshmem_ptr in a kernel (what 0: equals the host's, 1: own, 2: foreign is NULL, 3: bad PE is NULL)",
                  __FILE__);
    gshmem_barrier_all();
    std::vector<uint8_t> expect(4096 + 64, GPU_POISON);
    for (int j = 0; mapped && j < 4096; j++) expect[j] = gpu_pat8(left_pe, j, 77);
    check_region(mapped ? "stores through gshmem_ptr from the left PE's kernel" : "untouched (no mapping to store through)",
                 buf, expect);
    GPU_CHECK_CUDA(cudaFree(log));
    GPU_CHECK_CUDA(cudaFree(foreign));
    gshmem_free(buf);
    if (me == 0) printf("gshmem_ptr ok\n");
}

/* ---- 6. Allocation ---------------------------------------------------------------------------- */

__global__ void fill_kernel(char *p, size_t n, int salt)
{
    for (size_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += (size_t)gridDim.x * blockDim.x)
        p[j] = (char)gpu_pat8(gshmem_my_pe(), j, salt);
}

static void check_pattern(const char *what, const void *dev, size_t n, int pe, int salt)
{
    std::vector<uint8_t> expect(n);
    for (size_t j = 0; j < n; j++) expect[j] = gpu_pat8(pe, j, salt);
    check_region(what, dev, expect);
}

/* realloc's copy ends before it returns: the left PE puts into the moved block's tail
 * as soon as its own realloc is back, and the copy of the old tail must not land later. */
#define MOVE_BYTES ((size_t)64 << 20)
#define MOVE_TAIL ((size_t)4096)
static void test_realloc_move(void)
{
    char *a = (char *)gshmem_malloc(MOVE_BYTES);
    char *guard = (char *)gshmem_malloc(1 << 20); /* right after a: the realloc must move */
    GPU_CHECK(a != NULL && guard != NULL, "gshmem_malloc of %zu bytes and a guard failed", MOVE_BYTES);
    fill_kernel<<<264, 512>>>(a, MOVE_BYTES, 11);
    GPU_CHECK_KERNEL();
    std::vector<uint8_t> src(MOVE_TAIL);
    for (size_t j = 0; j < MOVE_TAIL; j++) src[j] = gpu_pat8(me, j, 12);
    gshmem_barrier_all();
    char *b = (char *)gshmem_realloc(a, MOVE_BYTES + (16 << 20));
    GPU_CHECK(b != NULL && b != a, "gshmem_realloc to %zu bytes: %p (was %p; it had to move)",
              MOVE_BYTES + (16 << 20), (void *)b, (void *)a);
    gshmem_putmem(b + MOVE_BYTES - MOVE_TAIL, src.data(), MOVE_TAIL, right_pe);
    gshmem_barrier_all();
    std::vector<uint8_t> expect(MOVE_BYTES);
    for (size_t j = 0; j < MOVE_BYTES - MOVE_TAIL; j++) expect[j] = gpu_pat8(me, j, 11);
    for (size_t j = 0; j < MOVE_TAIL; j++) expect[MOVE_BYTES - MOVE_TAIL + j] = gpu_pat8(left_pe, j, 12);
    check_region("a moved realloc's content, then the left PE's put into its tail", b, expect);
    gshmem_free(guard);
    gshmem_free(b);
}

__global__ void wait_word_kernel(uint64_t *word)
{
    gshmem_uint64_wait_until(word, GSHMEM_CMP_EQ, 1);
}

/* A kernel of this PE on the legacy stream waits for the right PE, which sets the word
 * only after its gshmem_calloc; both PEs' callocs meet in a barrier meanwhile. A clear
 * on the legacy stream (or a device-wide synchronize) would wait for the kernel: a
 * deadlock ended by the test's timeout. */
static void test_calloc_beside_waiting_kernel(void)
{
    uint64_t *word = (uint64_t *)gshmem_calloc(1, sizeof(uint64_t));
    GPU_CHECK(word != NULL, "gshmem_calloc of the wait word failed");
    gshmem_barrier_all();
    wait_word_kernel<<<1, 1>>>(word);
    GPU_CHECK_CUDA(cudaGetLastError());
    char *c = (char *)gshmem_calloc(3, 1000003);
    GPU_CHECK(c != NULL, "gshmem_calloc(3, 1000003) beside a waiting kernel failed");
    gshmem_uint64_atomic_set(word, 1, left_pe); /* the left PE's kernel waits for this */
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
    check_region("gshmem_calloc beside a waiting kernel", c, std::vector<uint8_t>(3000009, 0));
    gshmem_barrier_all();
    gshmem_free(c);
    gshmem_free(word);
}

static void test_alloc(void)
{
    GPU_CHECK(gshmem_malloc(0) == NULL, "gshmem_malloc(0) is not NULL");

    char *a = (char *)gshmem_malloc(100000);
    GPU_CHECK(a != NULL, "gshmem_malloc(100000) failed");
    cudaPointerAttributes attr;
    GPU_CHECK_CUDA(cudaPointerGetAttributes(&attr, a));
    int dev = -1;
    GPU_CHECK_CUDA(cudaGetDevice(&dev));
    GPU_CHECK(attr.type == cudaMemoryTypeDevice && attr.device == dev,
              "gshmem_malloc returned %p: memory type %d on device %d, expected device memory on device %d", (void *)a,
              (int)attr.type, attr.device, dev);
    gpu_poison(a, 100000);
    gshmem_free(a);
    /* Likely the same block again: calloc must have zeroed the poison. */
    char *c = (char *)gshmem_calloc(25000, 4);
    GPU_CHECK(c != NULL, "gshmem_calloc(25000, 4) failed");
    check_region("gshmem_calloc content", c, std::vector<uint8_t>(100000, 0));

    char *r = (char *)gshmem_malloc(1000);
    GPU_CHECK(r != NULL, "gshmem_malloc(1000) failed");
    fill_kernel<<<4, 128>>>(r, 1000, 5);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all();
    char *r2 = (char *)gshmem_realloc(r, 3 << 20);
    GPU_CHECK(r2 != NULL, "gshmem_realloc to 3 MiB failed");
    check_pattern("gshmem_realloc (grow to 3 MiB) kept the first 1000 bytes", r2, 1000, me, 5);
    fill_kernel<<<64, 256>>>(r2, 3 << 20, 6);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all();
    char *r3 = (char *)gshmem_realloc(r2, 777);
    GPU_CHECK(r3 != NULL, "gshmem_realloc to 777 bytes failed");
    check_pattern("gshmem_realloc (shrink to 777) kept the first 777 bytes", r3, 777, me, 6);
    /* The reallocated block is symmetric: the left PE's put lands here. */
    std::vector<uint8_t> src(777);
    for (int j = 0; j < 777; j++) src[j] = gpu_pat8(me, j, 8);
    gshmem_barrier_all();
    gshmem_putmem(r3, src.data(), 777, right_pe);
    gshmem_barrier_all();
    check_pattern("put into a reallocated block from the left PE", r3, 777, left_pe, 8);

    static const size_t aligns[] = {16, 256, 4096, 65536, 2u << 20, 64u << 20};
    for (size_t k = 0; k < sizeof(aligns) / sizeof(aligns[0]); k++) {
        char *p = (char *)gshmem_align(aligns[k], 100 + k);
        GPU_CHECK(p != NULL, "gshmem_align(%zu, %zu) failed", aligns[k], 100 + k);
        GPU_CHECK((uintptr_t)p % aligns[k] == 0, "gshmem_align(%zu) returned %p", aligns[k], (void *)p);
        for (int pe = 0; pe < npes; pe++)
            GPU_CHECK((gshmem_ptr(p, pe) != NULL) == (pe == me || peers_mapped()),
                      "gshmem_align(%zu) block: gshmem_ptr on PE %d is %p", aligns[k], pe, gshmem_ptr(p, pe));
        fill_kernel<<<1, 128>>>(p, 100 + k, 9);
        GPU_CHECK_KERNEL();
        check_pattern("kernel writes into a gshmem_align block", p, 100 + k, me, 9);
        gshmem_free(p);
    }
    gshmem_free(r3);
    gshmem_free(c);
    test_realloc_move();
    test_calloc_beside_waiting_kernel();
    if (me == 0) printf("device heap malloc/calloc/realloc/align/free ok\n");
}

int main(void)
{
    gpu_test_init("gpu_host_api");
    me = gshmem_my_pe();
    npes = gshmem_n_pes();
    right_pe = (me + 1) % npes;
    left_pe = (me + npes - 1) % npes;
    test_rma();
    test_amo();
    test_signal();
    test_host_wait();
    test_ptr();
    test_alloc();
    gpu_test_pass("gpu_host_api");
    return 0;
}
