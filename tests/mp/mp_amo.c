/*
 * AMO conformance, every type of every AMO table. All PEs hammer words on one
 * target PE (which rotates from type to type): final values must be exact and
 * the values fetched by all PEs together must be a permutation of what the word
 * went through. Bitwise ops use a distinct bit per PE; extended types (float and
 * double included) check fetch/set/swap and their nbi forms.
 */
#include "mp_check.h"

#define K 64       /* blocking fetch_add/fetch_inc per PE */
#define K2 32      /* nbi fetches and compare_swap successes per PE */
#define REC (K + 2 * K2 + 1)
#define SLOT0 16   /* per-PE slots start here (in elements) */

static uint64_t *g_words;   /* symmetric scratch words, reinterpreted per type */
static uint64_t *g_table;   /* symmetric: REC values per PE, gathered on the target */
static int g_me, g_npes, g_next_target;

static int next_target(void) { return g_next_target++ % g_npes; }

/* Start of a test: zero the words on every PE. */
static void reset_words(void)
{
    gshmem_barrier_all();
    memset(g_words, 0, 4096);
    memset(g_table, 0, sizeof(uint64_t) * REC * (size_t)g_npes);
    gshmem_barrier_all();
}

/* table[pe * REC + first .. + count) over all PEs is a permutation of [0, npes * count). */
static void check_permutation(size_t first, size_t count, const char *what)
{
    size_t total = count * (size_t)g_npes;
    unsigned char *seen = calloc(total, 1);
    CHECK(seen != NULL, "calloc");
    for (int pe = 0; pe < g_npes; pe++) {
        for (size_t k = 0; k < count; k++) {
            uint64_t v = g_table[(size_t)pe * REC + first + k];
            CHECK(v < total, "%s: pe %d fetched %llu (record %zu), beyond %zu", what, pe,
                  (unsigned long long)v, k, total);
            CHECK(!seen[v], "%s: value %llu fetched twice (second time by pe %d, record %zu)", what,
                  (unsigned long long)v, pe, k);
            seen[v] = 1;
        }
    }
    free(seen);
}

static void send_records(const uint64_t *rec, int target)
{
    gshmem_putmem(&g_table[(size_t)g_me * REC], rec, sizeof(uint64_t) * REC, target);
    gshmem_barrier_all();
}

#define DEFINE_STANDARD_TEST(T, N)                                                                    \
    static void amo_standard_##N(void)                                                                \
    {                                                                                                 \
        T *w = (T *)g_words;                                                                          \
        uint64_t rec[REC];                                                                            \
        T fetched[K2];                                                                                \
        int tgt = next_target();                                                                      \
        reset_words();                                                                                \
        /* w[0]: fetch_add/fetch_inc; w[1]: add 2 and inc; w[2]: nbi fetches; w[3]: CAS counter */  \
        for (int k = 0; k < K; k++) {                                                                 \
            T old = (k % 2) ? gshmem_##N##_atomic_fetch_inc(&w[0], tgt)                               \
                            : gshmem_##N##_atomic_fetch_add(&w[0], (T)1, tgt);                        \
            rec[k] = (uint64_t)old;                                                                   \
            gshmem_##N##_atomic_add(&w[1], (T)2, tgt);                                                \
            gshmem_##N##_atomic_inc(&w[1], tgt);                                                      \
        }                                                                                             \
        for (int k = 0; k < K2; k++) {                                                                \
            if (k % 2)                                                                                \
                gshmem_##N##_atomic_fetch_inc_nbi(&fetched[k], &w[2], tgt);                           \
            else                                                                                      \
                gshmem_##N##_atomic_fetch_add_nbi(&fetched[k], &w[2], (T)1, tgt);                     \
        }                                                                                             \
        gshmem_quiet();                                                                               \
        for (int k = 0; k < K2; k++) rec[K + k] = (uint64_t)fetched[k];                               \
        for (int won = 0; won < K2;) {                                                                \
            T cur = gshmem_##N##_atomic_fetch(&w[3], tgt);                                            \
            T old;                                                                                    \
            if (won % 2) {                                                                            \
                old = gshmem_##N##_atomic_compare_swap(&w[3], cur, (T)(cur + 1), tgt);                \
            } else {                                                                                  \
                gshmem_##N##_atomic_compare_swap_nbi(&old, &w[3], cur, (T)(cur + 1), tgt);            \
                gshmem_quiet();                                                                       \
            }                                                                                         \
            if (old == cur) rec[K + K2 + won++] = (uint64_t)old;                                      \
        }                                                                                             \
        /* one compare_swap from 0 per PE: exactly one wins */                                        \
        T first = gshmem_##N##_atomic_compare_swap(&w[4], (T)0, (T)(g_me + 1), tgt);                  \
        rec[REC - 1] = first == 0 ? 1 : 0;                                                            \
        gshmem_barrier_all();                                                                         \
        T n = (T)g_npes;                                                                              \
        CHECK_EQ(gshmem_##N##_atomic_fetch(&w[0], tgt), n * K);                                       \
        CHECK_EQ(gshmem_##N##_atomic_fetch(&w[1], tgt), n * K * 3);                                   \
        CHECK_EQ(gshmem_##N##_atomic_fetch(&w[2], tgt), n * K2);                                      \
        CHECK_EQ(gshmem_##N##_atomic_fetch(&w[3], tgt), n * K2);                                      \
        T winner = gshmem_##N##_atomic_fetch(&w[4], tgt);                                             \
        CHECK(winner >= 1 && winner <= n, #N " compare_swap winner value %llu",                      \
              (unsigned long long)winner);                                                            \
        send_records(rec, tgt);                                                                       \
        if (g_me == tgt) {                                                                            \
            check_permutation(0, K, #N " fetch_add/fetch_inc");                                       \
            check_permutation(K, K2, #N " fetch_add_nbi/fetch_inc_nbi");                              \
            check_permutation(K + K2, K2, #N " compare_swap successes");                              \
            int winners = 0;                                                                          \
            for (int pe = 0; pe < g_npes; pe++) {                                                     \
                if (g_table[(size_t)pe * REC + REC - 1]) {                                            \
                    winners++;                                                                        \
                    CHECK_EQ(winner, pe + 1);                                                         \
                }                                                                                     \
            }                                                                                         \
            CHECK(winners == 1, #N " compare_swap from 0: %d winners", winners);                     \
        }                                                                                             \
    }
GSHMEM_AMO_STANDARD_TYPES(DEFINE_STANDARD_TEST)
#undef DEFINE_STANDARD_TEST

/*
 * fetch/set/swap (+nbi): swap chain on one word (the old values and the final value are
 * exactly {0, 1, ..., npes*K2}), then per-PE slots written with set and read with fetch.
 */
#define DEFINE_EXTENDED_TEST(T, N)                                                                    \
    static void amo_extended_##N(void)                                                                \
    {                                                                                                 \
        T *w = (T *)g_words;                                                                          \
        uint64_t rec[REC] = {0};                                                                      \
        int tgt = next_target();                                                                      \
        reset_words();                                                                                \
        for (int k = 0; k < K2; k++) {                                                                \
            T mine = (T)(1 + g_me * K2 + k);                                                          \
            T old;                                                                                    \
            if (k % 2) {                                                                              \
                old = gshmem_##N##_atomic_swap(&w[0], mine, tgt);                                     \
            } else {                                                                                  \
                gshmem_##N##_atomic_swap_nbi(&old, &w[0], mine, tgt);                                 \
                gshmem_quiet();                                                                       \
            }                                                                                         \
            rec[k] = (uint64_t)old;                                                                   \
        }                                                                                             \
        gshmem_barrier_all();                                                                         \
        rec[REC - 1] = (uint64_t)gshmem_##N##_atomic_fetch(&w[0], tgt);                               \
        send_records(rec, tgt);                                                                       \
        if (g_me == tgt) {                                                                            \
            size_t total = (size_t)g_npes * K2 + 1;                                                   \
            unsigned char *seen = calloc(total, 1);                                                   \
            CHECK(seen != NULL, "calloc");                                                            \
            uint64_t final = g_table[REC - 1];                                                        \
            for (int pe = 0; pe <= g_npes; pe++) {                                                    \
                for (int k = 0; k < (pe < g_npes ? K2 : 1); k++) {                                    \
                    uint64_t v = pe < g_npes ? g_table[(size_t)pe * REC + k] : final;                 \
                    CHECK(v < total && !seen[v], #N " swap chain: value %llu (pe %d, record %d) out of range or seen twice", \
                          (unsigned long long)v, pe, k);                                              \
                    seen[v] = 1;                                                                      \
                }                                                                                     \
            }                                                                                         \
            free(seen);                                                                               \
        }                                                                                             \
        /* slot[me] on every peer: set, then fetch from the owner's side and from here */           \
        for (int pe = 0; pe < g_npes; pe++)                                                           \
            gshmem_##N##_atomic_set(&w[SLOT0 + g_me], MP_VALUE(T, g_me, pe, 0, 300), pe);             \
        gshmem_barrier_all();                                                                         \
        for (int pe = 0; pe < g_npes; pe++) {                                                         \
            T got = gshmem_##N##_atomic_fetch(&w[SLOT0 + pe], g_me);                                  \
            T want = MP_VALUE(T, pe, g_me, 0, 300);                                                   \
            CHECK(got == want, #N " set by pe %d: got %.1f want %.1f", pe, (double)got, (double)want); \
        }                                                                                             \
        gshmem_barrier_all(); /* every PE has read its slots before they are swapped */               \
        for (int pe = 0; pe < g_npes; pe++) {                                                         \
            T got, old;                                                                               \
            gshmem_##N##_atomic_fetch_nbi(&got, &w[SLOT0 + g_me], pe);                                \
            gshmem_quiet();                                                                           \
            T want = MP_VALUE(T, g_me, pe, 0, 300);                                                   \
            CHECK(got == want, #N " fetch_nbi from pe %d: got %.1f want %.1f", pe, (double)got,      \
                  (double)want);                                                                      \
            old = gshmem_##N##_atomic_swap(&w[SLOT0 + g_me], MP_VALUE(T, g_me, pe, 0, 301), pe);      \
            CHECK(old == want, #N " swap on pe %d returned %.1f want %.1f", pe, (double)old,          \
                  (double)want);                                                                      \
        }                                                                                             \
        gshmem_barrier_all();                                                                         \
        for (int pe = 0; pe < g_npes; pe++) {                                                         \
            T got = gshmem_##N##_atomic_fetch(&w[SLOT0 + pe], g_me);                                  \
            T want = MP_VALUE(T, pe, g_me, 0, 301);                                                   \
            CHECK(got == want, #N " swapped by pe %d: got %.1f want %.1f", pe, (double)got,           \
                  (double)want);                                                                      \
        }                                                                                             \
    }
GSHMEM_AMO_EXTENDED_TYPES(DEFINE_EXTENDED_TEST)
#undef DEFINE_EXTENDED_TEST

/* Bit of a PE: distinct for up to 31 PEs (5 is coprime with 31 and 63), never the top bit,
 * and PE 0's is the highest other bit so that a 64-bit op truncated to 32 bits shows. */
#define PE_BIT(T, pe) ((T)((T)1 << (((size_t)(pe) * 5 + sizeof(T) * 8 - 2) % (sizeof(T) * 8 - 1))))

#define DEFINE_BITWISE_TEST(T, N)                                                                     \
    static void amo_bitwise_##N(void)                                                                 \
    {                                                                                                 \
        T *w = (T *)g_words;                                                                          \
        int tgt = next_target();                                                                      \
        T ones = (T)~(T)0, all = 0, bit = PE_BIT(T, g_me), got[3];                                    \
        for (int pe = 0; pe < g_npes; pe++) all |= PE_BIT(T, pe);                                     \
        reset_words();                                                                                \
        w[1] = w[4] = w[7] = ones; /* and-words start all ones */                                     \
        gshmem_barrier_all();                                                                         \
        gshmem_##N##_atomic_or(&w[0], bit, tgt);                                                      \
        gshmem_##N##_atomic_and(&w[1], (T)~bit, tgt);                                                 \
        for (int k = 0; k < 3; k++) gshmem_##N##_atomic_xor(&w[2], bit, tgt);                         \
        T old = gshmem_##N##_atomic_fetch_or(&w[3], bit, tgt);                                        \
        CHECK(!(old & bit), #N " fetch_or: own bit already set in 0x%llx", (unsigned long long)old); \
        old = gshmem_##N##_atomic_fetch_and(&w[4], (T)~bit, tgt);                                     \
        CHECK(old & bit, #N " fetch_and: own bit already clear in 0x%llx", (unsigned long long)old); \
        old = gshmem_##N##_atomic_fetch_xor(&w[5], bit, tgt);                                         \
        CHECK(!(old & bit), #N " fetch_xor: own bit already set in 0x%llx", (unsigned long long)old); \
        gshmem_##N##_atomic_fetch_or_nbi(&got[0], &w[6], bit, tgt);                                   \
        gshmem_##N##_atomic_fetch_and_nbi(&got[1], &w[7], (T)~bit, tgt);                              \
        gshmem_##N##_atomic_fetch_xor_nbi(&got[2], &w[8], bit, tgt);                                  \
        gshmem_quiet();                                                                               \
        CHECK(!(got[0] & bit) && (got[1] & bit) && !(got[2] & bit),                                   \
              #N " nbi fetches 0x%llx 0x%llx 0x%llx (bit 0x%llx)", (unsigned long long)got[0],        \
              (unsigned long long)got[1], (unsigned long long)got[2], (unsigned long long)bit);       \
        gshmem_barrier_all();                                                                         \
        static const int is_and[9] = {0, 1, 0, 0, 1, 0, 0, 1, 0};                                     \
        for (int i = 0; i < 9; i++) {                                                                 \
            T v = gshmem_##N##_atomic_fetch(&w[i], tgt);                                              \
            CHECK_EQ(v, is_and[i] ? (T)~all : all);                                                   \
        }                                                                                             \
    }
GSHMEM_AMO_BITWISE_TYPES(DEFINE_BITWISE_TEST)
#undef DEFINE_BITWISE_TEST

int main(void)
{
    gshmem_init();
    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();
    CHECK(g_npes <= 31, "this test supports up to 31 PEs");
    g_words = gshmem_align(64, 4096);
    g_table = gshmem_malloc(sizeof(uint64_t) * REC * (size_t)g_npes);
    CHECK(g_words != NULL && g_table != NULL, "symmetric allocation failed");

#define RUN(T, N) amo_standard_##N();
    GSHMEM_AMO_STANDARD_TYPES(RUN)
#undef RUN
#define RUN(T, N) amo_extended_##N();
    GSHMEM_AMO_EXTENDED_TYPES(RUN)
#undef RUN
#define RUN(T, N) amo_bitwise_##N();
    GSHMEM_AMO_BITWISE_TYPES(RUN)
#undef RUN

    gshmem_barrier_all();
    gshmem_free(g_table);
    gshmem_free(g_words);
    if (g_me == 0) printf("mp_amo: %d PEs OK\n", g_npes);
    gshmem_finalize();
    return 0;
}
