/*
 * Edge semantics: negative and zero strides in iput/iget, signed comparisons against
 * negative values in wait/test, wait_until_any/some while the watched values keep
 * changing (the reported index/count must come from the pass that succeeded), and
 * signal_wait_until returning a value that satisfies the comparison.
 */
#include "mp_check.h"

#define EDGE_N 16
#define EDGE_ROUNDS 200

static void edges_strides(int me, int n)
{
    long *dst = gshmem_malloc(3 * EDGE_N * sizeof(long));
    long src[3 * EDGE_N];
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 0; i < 3 * EDGE_N; i++) {
        dst[i] = -1;
        src[i] = me * 1000 + i;
    }
    gshmem_barrier_all();
    /* Walk dest backwards from its last slot, stride -2, reading src forwards, stride 1. */
    gshmem_long_iput(&dst[3 * EDGE_N - 1], src, -2, 1, EDGE_N, right);
    gshmem_barrier_all();
    for (int i = 0; i < 3 * EDGE_N; i++) {
        int slot_from_end = 3 * EDGE_N - 1 - i;
        long want = slot_from_end % 2 == 0 && slot_from_end / 2 < EDGE_N ? left * 1000 + slot_from_end / 2 : -1;
        CHECK(dst[i] == want, "iput stride -2: dst[%d] = %ld, want %ld", i, dst[i], want);
    }
    /* iget with source stride -3 from the left PE's src-like array. */
    for (int i = 0; i < 3 * EDGE_N; i++) dst[i] = me * 1000 + i;
    gshmem_barrier_all();
    long got[EDGE_N];
    gshmem_long_iget(got, &dst[3 * EDGE_N - 1], 1, -3, EDGE_N, left);
    for (int i = 0; i < EDGE_N; i++)
        CHECK(got[i] == left * 1000 + 3 * EDGE_N - 1 - 3 * i, "iget stride -3: got[%d] = %ld", i, got[i]);
    gshmem_barrier_all();
    gshmem_free(dst);
}

static void edges_signed(int me, int n)
{
    int *v = gshmem_malloc(sizeof(int));
    long long *w = gshmem_malloc(sizeof(long long));
    *v = 100; /* neither wait below is met before its put lands */
    *w = 0;
    gshmem_barrier_all();
    /* -5 < 3 only with a signed comparison. Each value is waited for by itself: two puts
     * to different words are not ordered without a fence (relaxed-ordered RDMA
     * reorders them). */
    gshmem_int_p(v, -5, (me + 1) % n);
    gshmem_longlong_p(w, -7000000000LL, (me + 1) % n);
    gshmem_int_wait_until(v, GSHMEM_CMP_LT, 3);
    gshmem_longlong_wait_until(w, GSHMEM_CMP_LE, -6999999999LL);
    CHECK(gshmem_int_test(v, GSHMEM_CMP_LT, 0) == 1, "test(-5 < 0) failed");
    CHECK(gshmem_int_test(v, GSHMEM_CMP_GT, -6) == 1, "test(-5 > -6) failed");
    CHECK(gshmem_int_test(v, GSHMEM_CMP_GT, 0) == 0, "test(-5 > 0) passed");
    unsigned *u = (unsigned *)v; /* the same bits seen unsigned are large */
    CHECK(gshmem_uint_test(u, GSHMEM_CMP_GT, 1000u) == 1, "unsigned view of -5 not > 1000");
    gshmem_barrier_all();
    gshmem_free(w);
    gshmem_free(v);
}

/* PE 0 waits while PE 1 keeps flipping the last element; every returned index/count
 * must describe a satisfied element. */
static void edges_moving(int me, int n)
{
    unsigned *vals = gshmem_calloc(EDGE_N, sizeof(unsigned));
    uint64_t *sig = gshmem_calloc(2, sizeof(uint64_t));
    gshmem_barrier_all();
    if (n >= 2 && me == 1) {
        for (int r = 0; r < EDGE_ROUNDS * 20 && gshmem_uint64_atomic_fetch(&sig[1], 1) == 0; r++) {
            gshmem_uint_atomic_set(&vals[EDGE_N - 1], (unsigned)(r & 1), 0);
            gshmem_signal_add(&sig[0], 1, 0);
        }
    } else if (me == 0 && n >= 2) {
        for (int r = 0; r < EDGE_ROUNDS; r++) {
            size_t idx[EDGE_N];
            size_t any = gshmem_uint_wait_until_any(vals, EDGE_N, NULL, GSHMEM_CMP_EQ, 1);
            CHECK(any == EDGE_N - 1, "round %d: wait_until_any returned %zu", r, any);
            size_t some = gshmem_uint_wait_until_some(vals, EDGE_N, idx, NULL, GSHMEM_CMP_EQ, 1);
            CHECK(some == 1 && idx[0] == EDGE_N - 1, "round %d: wait_until_some returned %zu", r, some);
            uint64_t seen = gshmem_signal_wait_until(&sig[0], GSHMEM_CMP_GE, (uint64_t)r);
            CHECK(seen >= (uint64_t)r, "round %d: signal_wait_until returned %llu", r, (unsigned long long)seen);
        }
        for (int pe = 1; pe < n; pe++) gshmem_uint64_atomic_set(&sig[1], 1, pe);
        gshmem_uint64_atomic_set(&sig[1], 1, 1);
    }
    gshmem_barrier_all();
    gshmem_free(sig);
    gshmem_free(vals);
}

int main(void)
{
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    edges_strides(me, n);
    edges_signed(me, n);
    edges_moving(me, n);
    if (me == 0) printf("mp_edges: %d PEs ok\n", n);
    gshmem_finalize();
    return 0;
}
