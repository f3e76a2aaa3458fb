/*
 * Signal conformance: put_signal (typed, sized, mem; blocking and nbi; SET and ADD)
 * where the receiver checks the data right after signal_wait_until returns, with no
 * barrier in between; an ordering stress over many rounds with buffers up to 4 MiB
 * using put_signal and putmem + fence + atomic/signal update; signal_add from every
 * PE into one word; signal_fetch.
 */
#include "mp_check.h"

#define GUARD 4
#define NELEMS 200
#define BIG ((size_t)4 << 20)
#define ROUNDS 48

static unsigned char *g_src, *g_dst; /* symmetric data buffers of BIG + 256 bytes */
static uint64_t *g_sig;              /* symmetric signal words */
static int g_me, g_npes;

enum { SIG_DATA = 0, SIG_ACK = 1, SIG_SUM = 2 };

static int shift_to(int shift) { return (g_me + shift) % g_npes; }
static int shift_from(int shift) { return (g_me - shift + g_npes) % g_npes; }

/* Signal value sent by `from` in a round; nonzero, and distinct per sender and round. */
static uint64_t signal_value(int from, int round) { return 1 + (uint64_t)from * 1000 + (uint64_t)round; }

/*
 * Rounds come in four variants: bit 0 nbi, bit 1 ADD onto a signal preset to 5000
 * instead of SET. Presets this PE's data signal and returns the preset.
 */
static uint64_t round_prepare(int variant)
{
    gshmem_barrier_all();
    g_sig[SIG_DATA] = (variant & 2) ? 5000 : 0;
    return (variant & 2) ? (uint64_t)5000 : 0;
}

static void wait_signal(uint64_t base, int variant, int from, int round)
{
    uint64_t want = base + signal_value(from, round);
    int op_add = variant & 2;
    uint64_t got = gshmem_signal_wait_until(&g_sig[SIG_DATA], op_add ? GSHMEM_CMP_GE : GSHMEM_CMP_EQ, want);
    CHECK_EQ(got, want);
    CHECK_EQ(gshmem_signal_fetch(&g_sig[SIG_DATA]), want);
}

#define DEFINE_TYPED_TEST(T, N)                                                                       \
    static void typed_##N(int shift, int variant, int round)                                          \
    {                                                                                                 \
        T *src = (T *)g_src, *dst = (T *)g_dst;                                                       \
        int to = shift_to(shift), from = shift_from(shift);                                           \
        size_t n = variant == 0 ? 1 : NELEMS - (size_t)variant, total = n + 2 * GUARD;                \
        uint64_t base = round_prepare(variant);                                                       \
        for (size_t i = 0; i < n; i++) src[i] = MP_VALUE(T, g_me, to, i, round);                      \
        mp_poison(dst, total * sizeof(T));                                                            \
        gshmem_barrier_all();                                                                         \
        int op = (variant & 2) ? GSHMEM_SIGNAL_ADD : GSHMEM_SIGNAL_SET;                               \
        if (variant & 1) {                                                                            \
            gshmem_##N##_put_signal_nbi(dst + GUARD, src, n, &g_sig[SIG_DATA],                        \
                                        signal_value(g_me, round), op, to);                           \
        } else {                                                                                      \
            gshmem_##N##_put_signal(dst + GUARD, src, n, &g_sig[SIG_DATA], signal_value(g_me, round), \
                                    op, to);                                                          \
        }                                                                                             \
        wait_signal(base, variant, from, round);                                                      \
        CHECK_POISON(dst, GUARD * sizeof(T), #N "_put_signal leading guard");                         \
        for (size_t i = 0; i < n; i++) {                                                              \
            T want = MP_VALUE(T, from, g_me, i, round);                                               \
            CHECK(dst[GUARD + i] == want, #N "_put_signal variant %d elem %zu of %zu from pe %d: got %.1f want %.1f", \
                  variant, i, n, from, (double)dst[GUARD + i], (double)want);                         \
        }                                                                                             \
        CHECK_POISON(dst + GUARD + n, GUARD * sizeof(T), #N "_put_signal trailing guard");            \
        gshmem_quiet();                                                                               \
    }
GSHMEM_RMA_TYPES(DEFINE_TYPED_TEST)
#undef DEFINE_TYPED_TEST

/* Sized and mem forms: byte patterns; BITS 0 stands for putmem_signal. */
static void bytes_round(int bits, int shift, int variant, int round)
{
    size_t es = bits ? (size_t)bits / 8 : 1;
    size_t n = variant == 0 ? 1 : (size_t)(NELEMS * 7 + variant), bytes = n * es;
    size_t guard = 64;
    int to = shift_to(shift), from = shift_from(shift);
    uint64_t base = round_prepare(variant), sig = signal_value(g_me, round);
    uint64_t salt = 100000 + (uint64_t)bits * 1000 + (uint64_t)round;
    mp_fill_bytes(g_src, bytes, g_me, to, salt);
    mp_poison(g_dst, bytes + 2 * guard);
    gshmem_barrier_all();
    int op = (variant & 2) ? GSHMEM_SIGNAL_ADD : GSHMEM_SIGNAL_SET, nbi = variant & 1;
    void *d = g_dst + guard;
    uint64_t *s = &g_sig[SIG_DATA];
    switch (bits) {
#define SIZED_CASE(BITS, T)                                                                \
    case BITS:                                                                             \
        if (nbi)                                                                           \
            gshmem_put##BITS##_signal_nbi(d, g_src, n, s, sig, op, to);                    \
        else                                                                               \
            gshmem_put##BITS##_signal(d, g_src, n, s, sig, op, to);                        \
        break;
        GSHMEM_SIZED_TYPES(SIZED_CASE)
#undef SIZED_CASE
    default:
        if (nbi)
            gshmem_putmem_signal_nbi(d, g_src, n, s, sig, op, to);
        else
            gshmem_putmem_signal(d, g_src, n, s, sig, op, to);
        break;
    }
    wait_signal(base, variant, from, round);
    char what[64];
    snprintf(what, sizeof what, "put%d_signal%s variant %d", bits, nbi ? "_nbi" : "", variant);
    CHECK_POISON(g_dst, guard, what);
    CHECK_BYTES(g_dst + guard, bytes, from, g_me, salt, what);
    CHECK_POISON(g_dst + guard + bytes, guard, what);
    gshmem_quiet();
}

/*
 * Ordering stress around a ring: every round the sender writes a fresh buffer (up to 4 MiB)
 * and raises the data signal to round+1 by one of four methods; the receiver checks every
 * byte as soon as it sees the signal, then acknowledges so that the sender may reuse the
 * destination.
 */
static void ordering_stress(void)
{
    static const size_t sizes[] = {8, 4096, 65536 + 24, (size_t)1 << 20, BIG - 64};
    int to = shift_to(1), from = shift_from(1);
    gshmem_barrier_all();
    g_sig[SIG_DATA] = 0;
    g_sig[SIG_ACK] = 0;
    gshmem_barrier_all();
    for (int r = 0; r < ROUNDS; r++) {
        size_t n = sizes[(size_t)r % (sizeof sizes / sizeof sizes[0])];
        uint64_t salt = 900000 + (uint64_t)r, next = (uint64_t)r + 1;
        mp_fill_bytes(g_src, n, g_me, to, salt);
        switch (r % 4) {
        case 0:
            gshmem_putmem_signal(g_dst, g_src, n, &g_sig[SIG_DATA], next, GSHMEM_SIGNAL_SET, to);
            break;
        case 1:
            gshmem_putmem_signal_nbi(g_dst, g_src, n, &g_sig[SIG_DATA], 1, GSHMEM_SIGNAL_ADD, to);
            break;
        case 2:
            gshmem_putmem(g_dst, g_src, n, to);
            gshmem_fence();
            gshmem_uint64_atomic_set(&g_sig[SIG_DATA], next, to);
            break;
        default:
            gshmem_putmem_nbi(g_dst, g_src, n, to);
            gshmem_fence();
            gshmem_signal_add(&g_sig[SIG_DATA], 1, to);
            break;
        }
        uint64_t seen = gshmem_signal_wait_until(&g_sig[SIG_DATA], GSHMEM_CMP_GE, next);
        CHECK(seen == next, "round %d: data signal %llu, want %llu", r, (unsigned long long)seen,
              (unsigned long long)next);
        char what[64];
        snprintf(what, sizeof what, "ordering round %d (method %d, %zu bytes)", r, r % 4, n);
        CHECK_BYTES(g_dst, n, from, g_me, salt, what);
        gshmem_signal_set(&g_sig[SIG_ACK], next, from);
        gshmem_signal_wait_until(&g_sig[SIG_ACK], GSHMEM_CMP_GE, next);
        gshmem_quiet(); /* the nbi source may be rewritten only after quiet */
    }
}

/* Every PE adds (pe + 1) K times into every PE's SIG_SUM word. */
static void signal_add_all(void)
{
    const uint64_t k = 50;
    gshmem_barrier_all();
    g_sig[SIG_SUM] = 0;
    gshmem_barrier_all();
    for (uint64_t i = 0; i < k; i++)
        for (int s = 0; s < g_npes; s++) gshmem_signal_add(&g_sig[SIG_SUM], (uint64_t)g_me + 1, shift_to(s));
    uint64_t want = k * (uint64_t)g_npes * ((uint64_t)g_npes + 1) / 2;
    uint64_t got = gshmem_signal_wait_until(&g_sig[SIG_SUM], GSHMEM_CMP_EQ, want);
    CHECK_EQ(got, want);
    gshmem_barrier_all();
    CHECK_EQ(gshmem_signal_fetch(&g_sig[SIG_SUM]), want);
    /* signal_set overwrites: each PE sets its right neighbour's word to a value naming itself */
    gshmem_barrier_all();
    gshmem_signal_set(&g_sig[SIG_SUM], 77000 + (uint64_t)g_me, shift_to(1));
    got = gshmem_signal_wait_until(&g_sig[SIG_SUM], GSHMEM_CMP_NE, want);
    CHECK_EQ(got, 77000 + (uint64_t)shift_from(1));
    /* wait_until with an already-true condition returns at once with the current value */
    CHECK_EQ(gshmem_signal_wait_until(&g_sig[SIG_SUM], GSHMEM_CMP_LT, 1u << 30), 77000 + (uint64_t)shift_from(1));
    gshmem_barrier_all();
}

int main(void)
{
    gshmem_init();
    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();
    g_src = gshmem_align(64, BIG + 256);
    g_dst = gshmem_align(64, BIG + 256);
    g_sig = gshmem_calloc(8, sizeof(uint64_t));
    CHECK(g_src && g_dst && g_sig, "symmetric allocation failed");

    int round = 0;
    for (int shift = 0; shift < g_npes; shift++) {
        for (int variant = 0; variant < 4; variant++) {
            if ((shift + variant) % 2) continue; /* half the combinations keep runtime small */
#define RUN(T, N) typed_##N(shift, variant, round++);
            GSHMEM_RMA_TYPES(RUN)
#undef RUN
        }
    }
    static const int bits[] = {8, 16, 32, 64, 128, 0};
    for (int shift = 0; shift < g_npes; shift++)
        for (int variant = 0; variant < 4; variant++)
            for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++) bytes_round(bits[b], shift, variant, round++);

    ordering_stress();
    signal_add_all();

    gshmem_barrier_all();
    gshmem_free(g_sig);
    gshmem_free(g_dst);
    gshmem_free(g_src);
    if (g_me == 0) printf("mp_signal: %d PEs OK\n", g_npes);
    gshmem_finalize();
    return 0;
}
