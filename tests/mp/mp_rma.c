/*
 * RMA conformance: typed put/get (blocking and nbi), p/g, iput/iget with strides,
 * sized put8..put128 and their strided forms, putmem/getmem at odd sizes and
 * misaligned offsets. Every PE talks to every PE (itself included) through a ring
 * shift; destinations are poisoned, every element is checked against a pattern of
 * (sender, receiver, index), and guards and stride gaps must stay poisoned.
 */
#include "mp_check.h"

#define GUARD 4    /* elements kept poisoned on each side of a destination */
#define NMAX 300   /* largest element count */
#define MEM_MAX ((size_t)1 << 20)
#define MEM_GUARD 64

static unsigned char *g_src;   /* symmetric source */
static unsigned char *g_dst;   /* symmetric destination */
static unsigned char *g_local; /* private destination of gets */
static int g_me, g_npes;

/* Peers for a ring shift: this PE writes to `to` and is written by `from`. */
static int shift_to(int shift) { return (g_me + shift) % g_npes; }
static int shift_from(int shift) { return (g_me - shift + g_npes) % g_npes; }

static const size_t g_sizes[3] = {1, 17, NMAX};

/*
 * Element j of a destination of `total` elements, where elements G, G+stride, ...
 * (count of them) hold VALUE(from, me, i) and the rest is poison.
 */
#define CHECK_STRIDED(T, N, buf, total, stride, count, from, salt, what)                               \
    do {                                                                                             \
        for (size_t j = 0; j < (total); j++) {                                                       \
            size_t rel = j - GUARD;                                                                  \
            int live = j >= GUARD && rel % (stride) == 0 && rel / (stride) < (count);                \
            if (live) {                                                                              \
                T want = MP_VALUE(T, from, g_me, rel / (stride), salt);                              \
                CHECK((buf)[j] == want, "%s " #N " elem %zu (of %zu, stride %zu) from pe %d: got %.1f want %.1f", \
                      what, rel / (stride), (size_t)(count), (size_t)(stride), (int)(from),          \
                      (double)(buf)[j], (double)want);                                               \
            } else {                                                                                 \
                CHECK(mp_find_unpoisoned(&(buf)[j], sizeof(T)) == sizeof(T),                         \
                      "%s " #N " untouched elem %zu (count %zu, stride %zu) changed", what, j,       \
                      (size_t)(count), (size_t)(stride));                                            \
            }                                                                                        \
        }                                                                                            \
    } while (0)

/* put and get (blocking when nbi == 0), p and g, iput and iget, for one type. */
#define DEFINE_TYPED_TEST(T, N)                                                                      \
    static void rma_##N(void)                                                                        \
    {                                                                                                \
        T *src = (T *)g_src, *dst = (T *)g_dst, *loc = (T *)g_local;                                 \
        for (int shift = 0; shift < g_npes; shift++) {                                               \
            int to = shift_to(shift), from = shift_from(shift);                                      \
            for (int nbi = 0; nbi < 2; nbi++) {                                                      \
                size_t n = g_sizes[(shift * 2 + nbi) % 3], total = n + 2 * GUARD;                    \
                uint64_t salt = (uint64_t)(shift * 2 + nbi);                                         \
                gshmem_barrier_all();                                                                \
                for (size_t i = 0; i < n; i++) src[i] = MP_VALUE(T, g_me, to, i, salt);              \
                mp_poison(dst, total * sizeof(T));                                                   \
                mp_poison(loc, total * sizeof(T));                                                   \
                gshmem_barrier_all();                                                                \
                if (nbi) {                                                                           \
                    gshmem_##N##_put_nbi(dst + GUARD, src, n, to);                                   \
                    gshmem_quiet();                                                                  \
                } else {                                                                             \
                    gshmem_##N##_put(dst + GUARD, src, n, to);                                       \
                }                                                                                    \
                gshmem_barrier_all();                                                                \
                CHECK_STRIDED(T, N, dst, total, 1, n, from, salt, nbi ? "put_nbi" : "put");          \
                /* from's src holds VALUE(from, me, i) until the next barrier */                    \
                if (nbi) {                                                                           \
                    gshmem_##N##_get_nbi(loc + GUARD, src, n, from);                                 \
                    gshmem_quiet();                                                                  \
                } else {                                                                             \
                    gshmem_##N##_get(loc + GUARD, src, n, from);                                     \
                }                                                                                    \
                CHECK_STRIDED(T, N, loc, total, 1, n, from, salt, nbi ? "get_nbi" : "get");          \
            }                                                                                        \
                                                                                                     \
            /* p, then g reads back what this PE wrote into to's copy */                            \
            const size_t np = 5, ptotal = np + 2 * GUARD;                                            \
            gshmem_barrier_all();                                                                    \
            mp_poison(dst, ptotal * sizeof(T));                                                      \
            gshmem_barrier_all();                                                                    \
            for (size_t i = 0; i < np; i++)                                                          \
                gshmem_##N##_p(dst + GUARD + i, MP_VALUE(T, g_me, to, i, 10 + shift), to);           \
            gshmem_barrier_all();                                                                    \
            CHECK_STRIDED(T, N, dst, ptotal, 1, np, from, 10 + shift, "p");                         \
            for (size_t i = 0; i < np; i++) {                                                        \
                T got = gshmem_##N##_g(dst + GUARD + i, to);                                         \
                T want = MP_VALUE(T, g_me, to, i, 10 + shift);                                       \
                CHECK(got == want, "g " #N " elem %zu from pe %d: got %.1f want %.1f", i, to,        \
                      (double)got, (double)want);                                                    \
            }                                                                                        \
                                                                                                     \
            /* iput: source stride 2, destination stride 3; gaps stay poisoned */                   \
            size_t n = g_sizes[shift % 3], total = 3 * n + 2 * GUARD;                                \
            uint64_t salt = 20 + (uint64_t)shift;                                                    \
            gshmem_barrier_all();                                                                    \
            for (size_t i = 0; i < 4 * n; i++) src[i] = MP_VALUE(T, g_me, to, i, 99);                \
            for (size_t i = 0; i < n; i++) src[2 * i] = MP_VALUE(T, g_me, to, i, salt);              \
            mp_poison(dst, total * sizeof(T));                                                       \
            mp_poison(loc, total * sizeof(T));                                                       \
            gshmem_barrier_all();                                                                    \
            gshmem_##N##_iput(dst + GUARD, src, 3, 2, n, to);                                        \
            gshmem_barrier_all();                                                                    \
            CHECK_STRIDED(T, N, dst, total, 3, n, from, salt, "iput");                              \
            /* iget: from's src holds VALUE(from, me, i, salt) at 2i; take every one of them */     \
            gshmem_##N##_iget(loc + GUARD, src, 3, 2, n, from);                                      \
            CHECK_STRIDED(T, N, loc, total, 3, n, from, salt, "iget");                              \
            /* and every second one (source stride 4) into destination stride 2 */                 \
            mp_poison(loc, total * sizeof(T));                                                       \
            size_t half = (n + 1) / 2;                                                               \
            gshmem_##N##_iget(loc + GUARD, src, 2, 4, half, from);                                   \
            for (size_t j = 0; j < total; j++) {                                                     \
                size_t rel = j - GUARD;                                                              \
                if (j >= GUARD && rel % 2 == 0 && rel / 2 < half) {                                  \
                    T want = MP_VALUE(T, from, g_me, rel, salt);                                     \
                    CHECK(loc[j] == want, "iget stride 4 " #N " elem %zu: got %.1f want %.1f",       \
                          rel / 2, (double)loc[j], (double)want);                                    \
                } else {                                                                             \
                    CHECK_POISON(&loc[j], sizeof(T), "iget stride 4 " #N " gap");                    \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
    }
GSHMEM_RMA_TYPES(DEFINE_TYPED_TEST)
#undef DEFINE_TYPED_TEST

/* Sized forms: byte patterns, element size BITS/8, guards of GUARD elements. */
#define DEFINE_SIZED_TEST(BITS, T)                                                                   \
    static void sized_##BITS(void)                                                                   \
    {                                                                                                \
        const size_t es = BITS / 8, g = GUARD * es;                                                  \
        for (int shift = 0; shift < g_npes; shift++) {                                               \
            int to = shift_to(shift), from = shift_from(shift);                                      \
            for (int nbi = 0; nbi < 2; nbi++) {                                                      \
                size_t n = g_sizes[(shift + nbi) % 3], bytes = n * es;                               \
                uint64_t salt = 1000 + BITS * 10 + (uint64_t)(shift * 2 + nbi);                     \
                gshmem_barrier_all();                                                                \
                mp_fill_bytes(g_src, bytes, g_me, to, salt);                                         \
                mp_poison(g_dst, bytes + 2 * g);                                                     \
                mp_poison(g_local, bytes + 2 * g);                                                   \
                gshmem_barrier_all();                                                                \
                if (nbi) {                                                                           \
                    gshmem_put##BITS##_nbi(g_dst + g, g_src, n, to);                                 \
                    gshmem_quiet();                                                                  \
                } else {                                                                             \
                    gshmem_put##BITS(g_dst + g, g_src, n, to);                                       \
                }                                                                                    \
                gshmem_barrier_all();                                                                \
                CHECK_POISON(g_dst, g, "put" #BITS " leading guard");                                \
                CHECK_BYTES(g_dst + g, bytes, from, g_me, salt, "put" #BITS);                        \
                CHECK_POISON(g_dst + g + bytes, g, "put" #BITS " trailing guard");                   \
                if (nbi) {                                                                           \
                    gshmem_get##BITS##_nbi(g_local + g, g_src, n, from);                             \
                    gshmem_quiet();                                                                  \
                } else {                                                                             \
                    gshmem_get##BITS(g_local + g, g_src, n, from);                                   \
                }                                                                                    \
                CHECK_POISON(g_local, g, "get" #BITS " leading guard");                              \
                CHECK_BYTES(g_local + g, bytes, from, g_me, salt, "get" #BITS);                      \
                CHECK_POISON(g_local + g + bytes, g, "get" #BITS " trailing guard");                 \
            }                                                                                        \
            /* iput: source stride 1, destination stride 2; iget back at stride 3 */                \
            size_t n = g_sizes[shift % 3], bytes = n * es;                                           \
            uint64_t salt = 2000 + BITS * 10 + (uint64_t)shift;                                      \
            gshmem_barrier_all();                                                                    \
            mp_fill_bytes(g_src, bytes, g_me, to, salt);                                             \
            mp_poison(g_dst, 2 * bytes + 2 * g);                                                     \
            mp_poison(g_local, 3 * bytes + 2 * g);                                                   \
            gshmem_barrier_all();                                                                    \
            gshmem_iput##BITS(g_dst + g, g_src, 2, 1, n, to);                                        \
            gshmem_barrier_all();                                                                    \
            CHECK_POISON(g_dst, g, "iput" #BITS " leading guard");                                   \
            for (size_t i = 0; i < n; i++) {                                                         \
                for (size_t b = 0; b < es; b++) {                                                    \
                    unsigned char got = g_dst[g + 2 * i * es + b];                                   \
                    unsigned char want = mp_byte(from, g_me, i * es + b, salt);                      \
                    CHECK(got == want, "iput" #BITS " elem %zu byte %zu: 0x%02x want 0x%02x", i, b,  \
                          got, want);                                                                \
                }                                                                                    \
                CHECK_POISON(g_dst + g + (2 * i + 1) * es, es, "iput" #BITS " gap");                 \
            }                                                                                        \
            CHECK_POISON(g_dst + g + 2 * bytes, g, "iput" #BITS " trailing guard");                  \
            /* to's destination holds this PE's pattern at stride 2: gather it to stride 3 */           \
            gshmem_iget##BITS(g_local + g, g_dst + g, 3, 2, n, to);                                      \
            CHECK_POISON(g_local, g, "iget" #BITS " leading guard");                                 \
            for (size_t i = 0; i < n; i++) {                                                         \
                for (size_t b = 0; b < es; b++) {                                                    \
                    unsigned char got = g_local[g + 3 * i * es + b];                                 \
                    unsigned char want = mp_byte(g_me, to, i * es + b, salt);                        \
                    CHECK(got == want, "iget" #BITS " elem %zu byte %zu: 0x%02x want 0x%02x", i, b,  \
                          got, want);                                                                \
                }                                                                                    \
                CHECK_POISON(g_local + g + (3 * i + 1) * es, 2 * es, "iget" #BITS " gap");           \
            }                                                                                        \
            CHECK_POISON(g_local + g + 3 * bytes, g, "iget" #BITS " trailing guard");                \
        }                                                                                            \
    }
GSHMEM_SIZED_TYPES(DEFINE_SIZED_TEST)
#undef DEFINE_SIZED_TEST

/* putmem/getmem (blocking and nbi) at odd sizes and misaligned offsets, plus size 0. */
static void mem_test(void)
{
    static const size_t sizes[] = {0, 1, 3, 8, 4095, 65536 + 13, MEM_MAX - 8};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    for (int shift = 0; shift < g_npes; shift++) {
        int to = shift_to(shift), from = shift_from(shift);
        for (size_t s = 0; s < nsizes; s++) {
            for (int nbi = 0; nbi < 2; nbi++) {
                size_t n = sizes[s];
                size_t doff = MEM_GUARD + (s + (size_t)shift) % 8; /* destination misalignment */
                size_t soff = (s * 3 + (size_t)nbi) % 8;           /* source misalignment */
                size_t span = doff + n + MEM_GUARD;
                uint64_t salt = 5000 + s * 10 + (uint64_t)(shift * 2 + nbi);
                gshmem_barrier_all();
                mp_fill_bytes(g_src + soff, n, g_me, to, salt);
                mp_poison(g_dst, span);
                mp_poison(g_local, span);
                gshmem_barrier_all();
                if (nbi) {
                    gshmem_putmem_nbi(g_dst + doff, g_src + soff, n, to);
                    gshmem_quiet();
                } else {
                    gshmem_putmem(g_dst + doff, g_src + soff, n, to);
                }
                gshmem_barrier_all();
                CHECK_POISON(g_dst, doff, "putmem leading guard");
                CHECK_BYTES(g_dst + doff, n, from, g_me, salt, nbi ? "putmem_nbi" : "putmem");
                CHECK_POISON(g_dst + doff + n, MEM_GUARD, "putmem trailing guard");
                if (nbi) {
                    gshmem_getmem_nbi(g_local + doff, g_src + soff, n, from);
                    gshmem_quiet();
                } else {
                    gshmem_getmem(g_local + doff, g_src + soff, n, from);
                }
                CHECK_POISON(g_local, doff, "getmem leading guard");
                CHECK_BYTES(g_local + doff, n, from, g_me, salt, nbi ? "getmem_nbi" : "getmem");
                CHECK_POISON(g_local + doff + n, MEM_GUARD, "getmem trailing guard");
            }
        }
    }

    /* After quiet, a get from the target sees this PE's own put (this PE is its only writer). */
    int to = shift_to(1);
    gshmem_barrier_all();
    for (int round = 0; round < 8; round++) {
        size_t n = (size_t)4096 << round % 4;
        mp_fill_bytes(g_src, n, g_me, to, 7000 + (uint64_t)round);
        gshmem_putmem_nbi(g_dst, g_src, n, to);
        gshmem_quiet();
        mp_poison(g_local, n);
        gshmem_getmem(g_local, g_dst, n, to);
        CHECK_BYTES(g_local, n, g_me, to, 7000 + (uint64_t)round, "getmem after putmem_nbi + quiet");
    }
    gshmem_barrier_all();
}

/* A burst: 400 rounds of 200-byte putmem_nbi from the symmetric heap to every PE (over
 * ibv each is a zero-copy, signalled write), then one quiet. Slice r of PE `to`'s
 * destination region for this PE holds round r; every byte is checked, and the byte past
 * each PE's region stays poisoned. Over ibv the completions of a whole rail pile up in
 * its one completion queue: a device whose queues are small once overran it. */
#define BURST_ROUNDS 400
#define BURST_LEN 200
static void burst_test(void)
{
    /* 400 rounds up to 13 PEs, fewer beyond, so that every PE's region fits */
    size_t most = (MEM_MAX / (size_t)g_npes - MEM_GUARD) / BURST_LEN;
    const int rounds = most < BURST_ROUNDS ? (int)most : BURST_ROUNDS;
    const size_t region = (size_t)rounds * BURST_LEN + MEM_GUARD;
    mp_poison(g_dst, region * (size_t)g_npes);
    /* The sources: one slice per (round, peer), written once before the burst. */
    size_t need = (size_t)rounds * (size_t)g_npes * BURST_LEN;
    unsigned char *src = gshmem_malloc(need);
    CHECK(src != NULL, "gshmem_malloc(%zu)", need);
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < g_npes; k++)
            mp_fill_bytes(src + ((size_t)r * g_npes + (size_t)k) * BURST_LEN, BURST_LEN, g_me, shift_to(k),
                          9000 + (uint64_t)r);
    gshmem_barrier_all(); /* every destination is poisoned */
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < g_npes; k++)
            gshmem_putmem_nbi(g_dst + (size_t)g_me * region + (size_t)r * BURST_LEN,
                              src + ((size_t)r * g_npes + (size_t)k) * BURST_LEN, BURST_LEN, shift_to(k));
    gshmem_quiet();
    gshmem_barrier_all();
    for (int from = 0; from < g_npes; from++) {
        const unsigned char *d = g_dst + (size_t)from * region;
        for (int r = 0; r < rounds; r++)
            CHECK_BYTES(d + (size_t)r * BURST_LEN, BURST_LEN, from, g_me, 9000 + (uint64_t)r, "burst putmem_nbi");
        CHECK_POISON(d + (size_t)rounds * BURST_LEN, MEM_GUARD, "burst region's guard");
    }
    gshmem_barrier_all();
    gshmem_free(src);
}

int main(void)
{
    gshmem_init();
    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();

    size_t typed = (3 * NMAX + 2 * GUARD) * 16 + 4 * NMAX * 16;
    size_t buf_size = MEM_MAX + 256 > typed ? MEM_MAX + 256 : typed;
    g_src = gshmem_align(64, buf_size);
    g_dst = gshmem_align(64, buf_size);
    CHECK(g_src != NULL && g_dst != NULL, "gshmem_align(64, %zu) failed", buf_size);
    g_local = malloc(buf_size);
    CHECK(g_local != NULL, "malloc");

#define RUN_TYPED(T, N) rma_##N();
    GSHMEM_RMA_TYPES(RUN_TYPED)
#undef RUN_TYPED
#define RUN_SIZED(BITS, T) sized_##BITS();
    GSHMEM_SIZED_TYPES(RUN_SIZED)
#undef RUN_SIZED
    mem_test();
    burst_test();

    gshmem_barrier_all();
    free(g_local);
    gshmem_free(g_dst);
    gshmem_free(g_src);
    if (g_me == 0) printf("mp_rma: %d PEs OK\n", g_npes);
    gshmem_finalize();
    return 0;
}
