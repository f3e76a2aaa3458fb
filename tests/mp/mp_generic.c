/*
 * The C11 type-generic names (include/gshmem/generic.h), at 2-6 PEs: each generic name on
 * every row of the library's own type tables (types.h, team.h: typedef names included),
 * checked on data as the typed routines are in the other mp_* tests: destinations
 * poisoned, values that mix the sending PE, the receiving PE and the index, guards on both
 * sides, exact AMO totals, waits that wait. A name that chose the routine of another size
 * would move the wrong number of bytes (an element or a guard would differ), one that
 * chose another operation would compute something else, and one that chose another type
 * of the same size does not compile (the pragmas below make that an error in every build).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "mp_check.h"

#include <time.h>

#pragma GCC diagnostic error "-Wincompatible-pointer-types"
#pragma GCC diagnostic error "-Wpointer-sign"

#define N 37     /* elements per RMA transfer */
#define G 8      /* guard elements on each side */
#define NS 12    /* strided elements (iput/iget: dst stride 2, src stride 3) */
#define NC 5     /* elements per PE in collect, fcollect, alltoall(s) */
#define NR 7     /* elements reduced */
#define NI 6     /* ivars in the wait/test families */
#define K 16     /* blocking AMOs per PE and word */
#define MAX_PES 6

static unsigned char *g_src, *g_dst; /* symmetric byte buffers, reinterpreted per type */
static uint64_t *g_words;           /* symmetric AMO words and ivars */
static uint64_t *g_sig;             /* symmetric signal word */
static int g_me, g_npes, g_left, g_right;
static uint64_t g_salt = 1000;
static size_t g_checks;

#define V(T, src_pe, dst_pe, i) MP_VALUE(T, src_pe, dst_pe, i, salt)

/* Element i of what (at p) is want; prints both as long double (every pattern value is an
 * integer below 2^24, exact in every type). */
#define CHECK_ELEM(what, p, i, want)                                                             \
    do {                                                                                         \
        g_checks++;                                                                              \
        if (!((p)[i] == (want)))                                                                 \
            mp_fail(__FILE__, __LINE__, what, "%s: element %zu is %Lg, want %Lg", what, (size_t)(i), \
                    (long double)(p)[i], (long double)(want));                                   \
    } while (0)

/* Before a test writes its source: every PE is done with the previous test (a get or a
 * collective may read this PE's source until then). */
static void begin(void) { gshmem_barrier_all(); }

/* Poison this PE's destination and clear its words and signal, between two barriers. */
static void fresh_buffers(size_t bytes)
{
    gshmem_barrier_all();
    mp_poison(g_dst, bytes);
    memset(g_words, 0, 64 * sizeof(uint64_t));
    *g_sig = 0;
    gshmem_barrier_all();
}

/* ---- RMA and put_signal ------------------------------------------------------------------- */

/* Start of a test in a function with T *src and uint64_t salt: a fresh salt, count source
 * elements for the right-hand PE, this PE's destination poisoned. */
#define START_TO_RIGHT(T, count)                                                                     \
    begin();                                                                                         \
    salt = g_salt++;                                                                                 \
    for (size_t i = 0; i < (count); i++) src[i] = V(T, g_me, g_right, i);                            \
    fresh_buffers(sizeof(T) * (N + 2 * G))
/* buf + G holds the N elements want (an expression of i), and the G guards on each side are
 * still poison. */
#define CHECK_SPAN(T, what, buf, want)                                                               \
    do {                                                                                             \
        for (size_t i = 0; i < N; i++) CHECK_ELEM(what, (buf) + G, i, want);                         \
        CHECK_POISON(buf, sizeof(T) * G, what);                                                      \
        CHECK_POISON((buf) + G + N, sizeof(T) * G, what);                                            \
    } while (0)

#define DEFINE_RMA(T, NM)                                                                            \
    static void rma_##NM(void)                                                                       \
    {                                                                                                \
        T *dst = (T *)g_dst, *src = (T *)g_src, loc[N + 2 * G];                                      \
        const T *csrc = src; /* g and atomic_fetch select on a pointer to const as well */          \
        uint64_t salt;                                                                               \
        /* put, put_nbi: every PE to its right-hand neighbour */                                     \
        for (int nbi = 0; nbi < 2; nbi++) {                                                          \
            START_TO_RIGHT(T, N);                                                                    \
            if (nbi) {                                                                               \
                gshmem_put_nbi(dst + G, src, N, g_right);                                            \
                gshmem_quiet();                                                                      \
            } else {                                                                                 \
                gshmem_put(dst + G, src, N, g_right);                                                \
            }                                                                                        \
            gshmem_barrier_all();                                                                    \
            CHECK_SPAN(T, nbi ? "put_nbi " #T : "put " #T, dst, V(T, g_left, g_me, i));              \
        }                                                                                            \
        /* get, get_nbi, g: from the right-hand neighbour's source (V(owner, 0, i)) */               \
        for (int form = 0; form < 3; form++) {                                                       \
            begin();                                                                                 \
            salt = g_salt++;                                                                         \
            for (size_t i = 0; i < N; i++) src[i] = V(T, g_me, 0, i);                                 \
            fresh_buffers(0);                                                                        \
            mp_poison(loc, sizeof loc);                                                              \
            if (form == 0) gshmem_get(loc + G, src, N, g_right);                                     \
            if (form == 1) {                                                                         \
                gshmem_get_nbi(loc + G, src, N, g_right);                                            \
                gshmem_quiet();                                                                      \
            }                                                                                        \
            if (form == 2)                                                                           \
                for (size_t i = 0; i < N; i++) loc[G + i] = gshmem_g(csrc + i, g_right);             \
            CHECK_SPAN(T, form == 0 ? "get " #T : form == 1 ? "get_nbi " #T : "g " #T, loc,          \
                       V(T, g_right, 0, i));                                                         \
        }                                                                                            \
        /* p: element by element to the right */                                                    \
        begin();                                                                                     \
        salt = g_salt++;                                                                             \
        fresh_buffers(sizeof(T) * (N + 2 * G));                                                      \
        for (size_t i = 0; i < N; i++) gshmem_p(dst + G + i, V(T, g_me, g_right, i), g_right);       \
        gshmem_barrier_all();                                                                        \
        CHECK_SPAN(T, "p " #T, dst, V(T, g_left, g_me, i));                                          \
        /* iput to the right (every third source element to every second slot), iget back */       \
        START_TO_RIGHT(T, 3 * NS);                                                                   \
        gshmem_iput(dst + G, src, 2, 3, NS, g_right);                                                \
        gshmem_barrier_all();                                                                        \
        for (size_t i = 0; i < NS; i++) {                                                            \
            CHECK_ELEM("iput " #T, dst + G, 2 * i, V(T, g_left, g_me, 3 * i));                         \
            if (i + 1 < NS) CHECK_POISON(dst + G + 2 * i + 1, sizeof(T), "iput " #T " (gap)");        \
        }                                                                                            \
        CHECK_POISON(dst, sizeof(T) * G, "iput " #T);                                                \
        CHECK_POISON(dst + G + 2 * NS - 1, sizeof(T) * (N + G - 2 * NS + 1), "iput " #T);             \
        mp_poison(loc, sizeof loc);                                                                  \
        gshmem_iget(loc + G, src, 2, 3, NS, g_right);                                                \
        for (size_t i = 0; i < NS; i++) {                                                            \
            CHECK_ELEM("iget " #T, loc + G, 2 * i, V(T, g_right, (g_right + 1) % g_npes, 3 * i));      \
            if (i + 1 < NS) CHECK_POISON(loc + G + 2 * i + 1, sizeof(T), "iget " #T " (gap)");        \
        }                                                                                            \
        CHECK_POISON(loc, sizeof(T) * G, "iget " #T);                                                \
        CHECK_POISON(loc + G + 2 * NS - 1, sizeof(T) * (N + G - 2 * NS + 1), "iget " #T);             \
        /* put_signal (SET to the salt) and put_signal_nbi (ADD of 1): the right-hand PE waits */   \
        for (int nbi = 0; nbi < 2; nbi++) {                                                          \
            START_TO_RIGHT(T, N);                                                                    \
            if (nbi) {                                                                               \
                gshmem_put_signal_nbi(dst + G, src, N, g_sig, 1, GSHMEM_SIGNAL_ADD, g_right);        \
                gshmem_quiet();                                                                      \
            } else {                                                                                 \
                gshmem_put_signal(dst + G, src, N, g_sig, salt, GSHMEM_SIGNAL_SET, g_right);         \
            }                                                                                        \
            CHECK_EQ(gshmem_signal_wait_until(g_sig, GSHMEM_CMP_EQ, nbi ? 1 : salt), nbi ? 1 : salt); \
            CHECK_SPAN(T, nbi ? "put_signal_nbi " #T : "put_signal " #T, dst, V(T, g_left, g_me, i)); \
        }                                                                                            \
    }
GSHMEM_RMA_TYPES(DEFINE_RMA)

/* ---- AMOs ------------------------------------------------------------------------------------ */

/* Standard types: every PE adds, increments and compare-swaps words on one target PE. */
#define DEFINE_AMO_STANDARD(T, NM)                                                                   \
    static void amo_standard_##NM(void)                                                              \
    {                                                                                                \
        T *w = (T *)g_words;                                                                         \
        const int target = (int)(g_salt++ % (uint64_t)g_npes);                                       \
        const T total = (T)(K * g_npes * (g_npes + 1) / 2), count = (T)(K * g_npes);                 \
        T fetched[K];                                                                                \
        fresh_buffers(0);                                                                            \
        for (int k = 0; k < K; k++) {                                                                \
            T old = gshmem_atomic_fetch_add(&w[0], (T)(g_me + 1), target);                           \
            CHECK(old < total, "fetch_add " #T ": fetched %Lg, the total is %Lg", (long double)old,  \
                  (long double)total);                                                               \
            gshmem_atomic_add(&w[1], (T)(g_me + 1), target);                                         \
            old = gshmem_atomic_fetch_inc(&w[2], target);                                            \
            CHECK(old < count, "fetch_inc " #T ": fetched %Lg of %Lg", (long double)old, (long double)count); \
            gshmem_atomic_inc(&w[3], target);                                                        \
            gshmem_atomic_fetch_add_nbi(&fetched[k], &w[4], (T)2, target);                           \
        }                                                                                            \
        gshmem_quiet();                                                                              \
        for (int k = 0; k < K; k++)                                                                  \
            CHECK(fetched[k] % 2 == 0 && fetched[k] < 2 * count, "fetch_add_nbi " #T ": fetched %Lg", \
                  (long double)fetched[k]);                                                          \
        for (int k = 0; k < K; k++) gshmem_atomic_fetch_inc_nbi(&fetched[k], &w[5], target);         \
        gshmem_quiet();                                                                              \
        for (int k = 0; k < K; k++)                                                                  \
            CHECK(fetched[k] < count, "fetch_inc_nbi " #T ": fetched %Lg", (long double)fetched[k]); \
        /* one PE wins each compare_swap from 0; the winners count themselves in w[7], w[9] */      \
        T won = gshmem_atomic_compare_swap(&w[6], (T)0, (T)(g_me + 1), target);                      \
        gshmem_atomic_add(&w[7], (T)(won == 0), target);                                             \
        gshmem_atomic_compare_swap_nbi(&fetched[0], &w[8], (T)0, (T)(g_me + 1), target);            \
        gshmem_quiet();                                                                              \
        gshmem_atomic_add(&w[9], (T)(fetched[0] == 0), target);                                      \
        gshmem_barrier_all();                                                                        \
        if (g_me == target) {                                                                        \
            CHECK_EQ(w[0], total);                                                                   \
            CHECK_EQ(w[1], total);                                                                   \
            CHECK_EQ(w[2], count);                                                                   \
            CHECK_EQ(w[3], count);                                                                   \
            CHECK_EQ(w[4], 2 * count);                                                               \
            CHECK_EQ(w[5], count);                                                                   \
            CHECK(w[6] >= 1 && w[6] <= (T)g_npes, "compare_swap " #T ": word is %Lg", (long double)w[6]); \
            CHECK_EQ(w[7], 1);                                                                       \
            CHECK(w[8] >= 1 && w[8] <= (T)g_npes, "compare_swap_nbi " #T ": word is %Lg", (long double)w[8]); \
            CHECK_EQ(w[9], 1);                                                                       \
            for (int k = 10; k < 16; k++) CHECK_EQ(w[k], 0);                                         \
            g_checks += 16;                                                                          \
        }                                                                                            \
    }
GSHMEM_AMO_STANDARD_TYPES(DEFINE_AMO_STANDARD)

/* Extended types: each PE sets, fetches and swaps its own slot on its right-hand PE. */
#define DEFINE_AMO_EXTENDED(T, NM)                                                                   \
    static void amo_extended_##NM(void)                                                              \
    {                                                                                                \
        T *w = (T *)g_words, f = 0;                                                                  \
        const T *cw = w;                                                                             \
        begin();                                                                                     \
        uint64_t salt = g_salt++;                                                                    \
        fresh_buffers(0);                                                                            \
        gshmem_atomic_set(&w[g_me], V(T, g_me, g_right, 0), g_right);                                \
        gshmem_barrier_all();                                                                        \
        CHECK_ELEM("atomic_set " #T, w, g_left, V(T, g_left, g_me, 0));                              \
        gshmem_barrier_all(); /* read before the left-hand PE swaps it */                           \
        f = gshmem_atomic_fetch(&cw[g_me], g_right);                                                 \
        CHECK_ELEM("atomic_fetch " #T, (&f), 0, V(T, g_me, g_right, 0));                             \
        f = gshmem_atomic_swap(&w[g_me], V(T, g_me, g_right, 1), g_right);                           \
        CHECK_ELEM("atomic_swap " #T, (&f), 0, V(T, g_me, g_right, 0));                              \
        gshmem_atomic_fetch_nbi(&f, &cw[g_me], g_right);                                             \
        gshmem_quiet();                                                                              \
        CHECK_ELEM("atomic_fetch_nbi " #T, (&f), 0, V(T, g_me, g_right, 1));                         \
        gshmem_atomic_swap_nbi(&f, &w[g_me], V(T, g_me, g_right, 2), g_right);                       \
        gshmem_quiet();                                                                              \
        CHECK_ELEM("atomic_swap_nbi " #T, (&f), 0, V(T, g_me, g_right, 1));                          \
        gshmem_barrier_all();                                                                        \
        CHECK_ELEM("atomic_swap_nbi " #T, w, g_left, V(T, g_left, g_me, 2));                         \
        for (int p = 0; p < g_npes; p++)                                                             \
            if (p != g_left) CHECK_ELEM("atomic_set " #T " (other slots)", w, p, (T)0);              \
    }
GSHMEM_AMO_EXTENDED_TYPES(DEFINE_AMO_EXTENDED)

/* Bitwise types: each PE clears, sets and flips its own bit of words on one target PE. The
 * and words start as all ones; the or and xor words start with PE 0's bit set, so or ends
 * with every PE's bit and xor with every PE's but PE 0's. */
#define DEFINE_AMO_BITWISE(T, NM)                                                                    \
    static void amo_bitwise_##NM(void)                                                               \
    {                                                                                                \
        T *w = (T *)g_words, f[3], all = 0;                                                          \
        const int target = (int)(g_salt++ % (uint64_t)g_npes);                                       \
        const T bit = (T)((T)1 << (2 * g_me + 1));                                                   \
        for (int p = 0; p < g_npes; p++) all |= (T)((T)1 << (2 * p + 1));                             \
        fresh_buffers(0);                                                                            \
        const T bit0 = (T)2, mine_set = (T)(g_me == 0 ? bit : 0); /* PE 0's bit, preset */          \
        if (g_me == target) {                                                                        \
            w[0] = w[3] = w[6] = (T)~(T)0;                                                           \
            w[1] = w[2] = w[4] = w[5] = w[7] = w[8] = bit0;                                          \
        }                                                                                            \
        gshmem_barrier_all();                                                                        \
        T old = gshmem_atomic_fetch_and(&w[0], (T)~bit, target);                                     \
        CHECK((old & bit) != 0, "fetch_and " #T ": fetched %llx", (unsigned long long)old);          \
        gshmem_atomic_and(&w[3], (T)~bit, target);                                                   \
        old = gshmem_atomic_fetch_or(&w[1], bit, target);                                            \
        CHECK((old & bit) == mine_set && (old & ~all) == 0, "fetch_or " #T ": fetched %llx",         \
              (unsigned long long)old);                                                              \
        gshmem_atomic_or(&w[4], bit, target);                                                        \
        old = gshmem_atomic_fetch_xor(&w[2], bit, target);                                           \
        CHECK((old & bit) == mine_set && (old & ~all) == 0, "fetch_xor " #T ": fetched %llx",        \
              (unsigned long long)old);                                                              \
        gshmem_atomic_xor(&w[5], bit, target);                                                       \
        gshmem_atomic_fetch_and_nbi(&f[0], &w[6], (T)~bit, target);                                  \
        gshmem_atomic_fetch_or_nbi(&f[1], &w[7], bit, target);                                       \
        gshmem_atomic_fetch_xor_nbi(&f[2], &w[8], bit, target);                                      \
        gshmem_quiet();                                                                              \
        CHECK((f[0] & bit) != 0, "fetch_and_nbi " #T ": fetched %llx", (unsigned long long)f[0]);    \
        CHECK((f[1] & bit) == mine_set, "fetch_or_nbi " #T ": fetched %llx", (unsigned long long)f[1]); \
        CHECK((f[2] & bit) == mine_set, "fetch_xor_nbi " #T ": fetched %llx", (unsigned long long)f[2]); \
        gshmem_barrier_all();                                                                        \
        if (g_me == target) {                                                                        \
            CHECK_EQ(w[0], (T)~all);                                                                 \
            CHECK_EQ(w[3], (T)~all);                                                                 \
            CHECK_EQ(w[6], (T)~all);                                                                 \
            CHECK_EQ(w[1], all);                                                                     \
            CHECK_EQ(w[4], all);                                                                     \
            CHECK_EQ(w[7], all);                                                                     \
            CHECK_EQ(w[2], (T)(all & ~bit0));                                                        \
            CHECK_EQ(w[5], (T)(all & ~bit0));                                                        \
            CHECK_EQ(w[8], (T)(all & ~bit0));                                                        \
            CHECK_EQ(w[9], 0);                                                                       \
            g_checks += 10;                                                                          \
        }                                                                                            \
    }
GSHMEM_AMO_BITWISE_TYPES(DEFINE_AMO_BITWISE)

/* ---- wait_until and test families ---------------------------------------------------------- */

/* ivar i of PE p ends as want(p, i): set by p's left-hand PE with the generic p. */
#define SYNC_WANT(T, p, i) ((T)(1 + (i) + 8 * (p)))

/* Waits that wait: in each round PE 1 writes ivar k of PE 0 some 2 ms after the round
 * starts, while PE 0 is in the wait form under test (a wait that returned at once would
 * see the old value, or return no index). The other PEs only meet. */
#define DEFINE_LATE_WRITES(T, NM)                                                                    \
    static void late_writes_##NM(T *iv)                                                              \
    {                                                                                                \
        T cur[NI], vec[NI];                                                                          \
        int only[NI];                                                                                \
        size_t idx[NI];                                                                              \
        for (size_t i = 0; i < NI; i++) cur[i] = iv[i];                                              \
        for (int round = 0; round < 7; round++) {                                                    \
            const size_t k = (size_t)round % NI;                                                     \
            const T value = (T)(100 + round); /* above every value the ivars held before */        \
            gshmem_barrier_all();                                                                    \
            if (g_me == 1) {                                                                         \
                nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);                             \
                gshmem_p(&iv[k], value, 0);                                                          \
                gshmem_quiet();                                                                      \
            }                                                                                        \
            if (g_me != 0) continue;                                                                 \
            for (size_t i = 0; i < NI; i++) {                                                        \
                only[i] = i != k;                                                                    \
                vec[i] = round < 5 ? cur[i] : (T)(cur[i] + 1); /* 5, 6: no other element matches */ \
            }                                                                                        \
            vec[k] = value;                                                                          \
            switch (round) {                                                                         \
            case 0: gshmem_wait_until(&iv[k], GSHMEM_CMP_EQ, value); break;                          \
            case 1: gshmem_wait_until_all(iv, NI, only, GSHMEM_CMP_EQ, value); break;                \
            case 2: CHECK_EQ(gshmem_wait_until_any(iv, NI, NULL, GSHMEM_CMP_EQ, value), k); break;   \
            case 3:                                                                                  \
                CHECK_EQ(gshmem_wait_until_some(iv, NI, idx, NULL, GSHMEM_CMP_EQ, value), 1);        \
                CHECK_EQ(idx[0], k);                                                                 \
                break;                                                                               \
            case 4: gshmem_wait_until_all_vector(iv, NI, NULL, GSHMEM_CMP_EQ, vec); break;           \
            case 5: CHECK_EQ(gshmem_wait_until_any_vector(iv, NI, NULL, GSHMEM_CMP_EQ, vec), k); break; \
            default:                                                                                 \
                CHECK_EQ(gshmem_wait_until_some_vector(iv, NI, idx, NULL, GSHMEM_CMP_EQ, vec), 1);   \
                CHECK_EQ(idx[0], k);                                                                 \
            }                                                                                        \
            CHECK_ELEM("a wait's late write " #T, iv, k, value);                                     \
            cur[k] = value;                                                                          \
        }                                                                                            \
        gshmem_barrier_all();                                                                        \
    }
GSHMEM_P2P_SYNC_TYPES(DEFINE_LATE_WRITES)

#define DEFINE_SYNC(T, NM)                                                                           \
    static void sync_##NM(void)                                                                      \
    {                                                                                                \
        T *iv = (T *)g_words, e[NI], v[NI];                                                          \
        size_t idx[NI];                                                                              \
        const int skip[NI] = {0, 0, 1, 0, 0, 0}; /* status: element 2 excluded */                  \
        fresh_buffers(0);                                                                            \
        for (size_t i = 0; i < NI; i++) {                                                            \
            e[i] = SYNC_WANT(T, g_me, i);                                                            \
            gshmem_p(&iv[i], SYNC_WANT(T, g_right, i), g_right);                                     \
        }                                                                                            \
        gshmem_quiet();                                                                              \
        gshmem_wait_until_all(iv, NI, NULL, GSHMEM_CMP_NE, (T)0);                                    \
        for (size_t i = 0; i < NI; i++) CHECK_ELEM("wait_until_all " #T, iv, i, e[i]);               \
        gshmem_wait_until(&iv[2], GSHMEM_CMP_EQ, e[2]);                                              \
        CHECK_EQ(gshmem_test(&iv[3], GSHMEM_CMP_EQ, e[3]), 1);                                       \
        CHECK_EQ(gshmem_test(&iv[3], GSHMEM_CMP_EQ, (T)(e[3] + 1)), 0);                              \
        CHECK_EQ(gshmem_test_all(iv, NI, NULL, GSHMEM_CMP_GE, e[0]), 1);                             \
        CHECK_EQ(gshmem_test_all(iv, NI, NULL, GSHMEM_CMP_GT, e[0]), 0);                             \
        CHECK_EQ(gshmem_test_any(iv, NI, skip, GSHMEM_CMP_EQ, e[2]), SIZE_MAX);                        \
        CHECK_EQ(gshmem_test_any(iv, NI, skip, GSHMEM_CMP_EQ, e[4]), 4);                               \
        CHECK_EQ(gshmem_wait_until_any(iv, NI, skip, GSHMEM_CMP_EQ, e[5]), 5);                         \
        CHECK_EQ(gshmem_test_some(iv, NI, idx, skip, GSHMEM_CMP_GE, e[1]), 4);                         \
        CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 4 && idx[3] == 5, "test_some " #T ": %zu %zu %zu %zu", \
              idx[0], idx[1], idx[2], idx[3]);                                                       \
        CHECK_EQ(gshmem_wait_until_some(iv, NI, idx, NULL, GSHMEM_CMP_LT, e[2]), 2);                 \
        CHECK(idx[0] == 0 && idx[1] == 1, "wait_until_some " #T ": %zu %zu", idx[0], idx[1]);        \
        gshmem_wait_until_all_vector(iv, NI, NULL, GSHMEM_CMP_EQ, e);                                \
        CHECK_EQ(gshmem_test_all_vector(iv, NI, NULL, GSHMEM_CMP_EQ, e), 1);                         \
        for (size_t i = 0; i < NI; i++) v[i] = (T)(e[i] + 1);                                        \
        CHECK_EQ(gshmem_test_any_vector(iv, NI, NULL, GSHMEM_CMP_EQ, v), SIZE_MAX);                  \
        v[4] = e[4];                                                                                 \
        CHECK_EQ(gshmem_test_any_vector(iv, NI, NULL, GSHMEM_CMP_EQ, v), 4);                         \
        CHECK_EQ(gshmem_wait_until_any_vector(iv, NI, NULL, GSHMEM_CMP_EQ, v), 4);                   \
        v[1] = e[1];                                                                                 \
        CHECK_EQ(gshmem_test_some_vector(iv, NI, idx, NULL, GSHMEM_CMP_EQ, v), 2);                   \
        CHECK(idx[0] == 1 && idx[1] == 4, "test_some_vector " #T ": %zu %zu", idx[0], idx[1]);       \
        v[4] = (T)(e[4] + 1);                                                                        \
        CHECK_EQ(gshmem_wait_until_some_vector(iv, NI, idx, skip, GSHMEM_CMP_EQ, v), 1);               \
        CHECK_EQ(idx[0], 1);                                                                         \
        CHECK_EQ(gshmem_test_all_vector(iv, NI, NULL, GSHMEM_CMP_EQ, v), 0);                         \
        g_checks += 17;                                                                              \
        if (g_npes > 1) late_writes_##NM(iv);                                                        \
    }
GSHMEM_P2P_SYNC_TYPES(DEFINE_SYNC)

/* ---- Collectives ------------------------------------------------------------------------------ */

#define DEFINE_COLL(T, NM)                                                                           \
    static void coll_##NM(void)                                                                      \
    {                                                                                                \
        T *dst = (T *)g_dst, *src = (T *)g_src;                                                      \
        const size_t span = (size_t)g_npes * NC;                                                     \
        begin();                                                                                     \
        uint64_t salt = g_salt++;                                                                    \
        const int root = (int)(salt % (uint64_t)g_npes);                                             \
        /* broadcast from root */                                                                    \
        for (size_t i = 0; i < N; i++) src[i] = V(T, g_me, 0, i);                                     \
        fresh_buffers(sizeof(T) * (N + 2 * G));                                                      \
        CHECK_EQ(gshmem_broadcast(GSHMEM_TEAM_WORLD, dst + G, src, N, root), 0);                     \
        for (size_t i = 0; i < N; i++) CHECK_ELEM("broadcast " #T, dst + G, i, V(T, root, 0, i));    \
        CHECK_POISON(dst, sizeof(T) * G, "broadcast " #T);                                           \
        CHECK_POISON(dst + G + N, sizeof(T) * G, "broadcast " #T);                                   \
        /* fcollect: NC each; collect: PE p gives p + 1 */                                           \
        for (int fixed = 1; fixed >= 0; fixed--) {                                                   \
            fresh_buffers(sizeof(T) * (span + 2 * G));                                               \
            size_t mine = fixed ? NC : (size_t)g_me + 1, at = 0;                                     \
            CHECK_EQ(fixed ? gshmem_fcollect(GSHMEM_TEAM_WORLD, dst + G, src, mine)                   \
                           : gshmem_collect(GSHMEM_TEAM_WORLD, dst + G, src, mine),                  \
                     0);                                                                             \
            for (int p = 0; p < g_npes; p++) {                                                       \
                size_t theirs = fixed ? NC : (size_t)p + 1;                                          \
                for (size_t i = 0; i < theirs; i++)                                                  \
                    CHECK_ELEM(fixed ? "fcollect " #T : "collect " #T, dst + G, at + i, V(T, p, 0, i)); \
                at += theirs;                                                                        \
            }                                                                                        \
            CHECK_POISON(dst, sizeof(T) * G, "collect " #T);                                         \
            CHECK_POISON(dst + G + at, sizeof(T) * G, "collect " #T);                                \
        }                                                                                            \
        /* alltoall: NC to each PE; alltoalls: the same through strides (dst 2, src 3) */          \
        begin();                                                                                     \
        for (int p = 0; p < g_npes; p++)                                                             \
            for (size_t i = 0; i < NC; i++) src[(size_t)p * NC + i] = V(T, g_me, p, i);              \
        fresh_buffers(sizeof(T) * (span + 2 * G));                                                   \
        CHECK_EQ(gshmem_alltoall(GSHMEM_TEAM_WORLD, dst + G, src, NC), 0);                           \
        for (int p = 0; p < g_npes; p++)                                                             \
            for (size_t i = 0; i < NC; i++) CHECK_ELEM("alltoall " #T, dst + G, (size_t)p * NC + i, V(T, p, g_me, i)); \
        CHECK_POISON(dst, sizeof(T) * G, "alltoall " #T);                                            \
        CHECK_POISON(dst + G + span, sizeof(T) * G, "alltoall " #T);                                 \
        begin();                                                                                     \
        for (int p = 0; p < g_npes; p++)                                                             \
            for (size_t i = 0; i < NC; i++) src[3 * ((size_t)p * NC + i)] = V(T, g_me, p, i);        \
        fresh_buffers(sizeof(T) * (2 * span + 2 * G));                                               \
        CHECK_EQ(gshmem_alltoalls(GSHMEM_TEAM_WORLD, dst + G, src, 2, 3, NC), 0);                    \
        for (int p = 0; p < g_npes; p++)                                                             \
            for (size_t i = 0; i < NC; i++) {                                                        \
                size_t j = (size_t)p * NC + i;                                                       \
                CHECK_ELEM("alltoalls " #T, dst + G, 2 * j, V(T, p, g_me, i));                       \
                CHECK_POISON(dst + G + 2 * j + 1, sizeof(T), "alltoalls " #T " (gap)");              \
            }                                                                                        \
        CHECK_POISON(dst, sizeof(T) * G, "alltoalls " #T);                                           \
        CHECK_POISON(dst + G + 2 * span, sizeof(T) * G, "alltoalls " #T);                            \
    }
GSHMEM_RMA_TYPES(DEFINE_COLL)

/* One reduction of NR elements: PE p contributes IN(p, i); want(i) folds them with FOLD. */
#define REDUCE_ONE(T, OP, IN, FOLD)                                                                  \
    do {                                                                                             \
        T *dst = (T *)g_dst, *src = (T *)g_src;                                                      \
        begin();                                                                                     \
        for (size_t i = 0; i < NR; i++) src[i] = (T)(IN(g_me, i));                                   \
        fresh_buffers(sizeof(T) * (NR + 2 * G));                                                     \
        CHECK_EQ(gshmem_##OP##_reduce(GSHMEM_TEAM_WORLD, dst + G, src, NR), 0);                      \
        for (size_t i = 0; i < NR; i++) {                                                            \
            T want = (T)(IN(0, i));                                                                  \
            for (int p = 1; p < g_npes; p++) want = (T)(FOLD(want, (T)(IN(p, i))));                 \
            CHECK_ELEM(#OP "_reduce " #T, dst + G, i, want);                                         \
        }                                                                                            \
        CHECK_POISON(dst, sizeof(T) * G, #OP "_reduce " #T);                                         \
        CHECK_POISON(dst + G + NR, sizeof(T) * G, #OP "_reduce " #T);                                \
    } while (0)

#define BIT_OF(p, i) ((unsigned)1 << (((p) + (i)) % 7))
#define IN_AND(p, i) (~BIT_OF(p, i) & 0x7f)
#define IN_OR(p, i) (BIT_OF(p, i) | BIT_OF((p) + 1, i)) /* overlapping: xor would differ */
#define IN_XOR(p, i) (((p) + 1) * ((i) + 3) & 0x7f)
#define IN_MAX(p, i) (((p) * 5 + (i) * 3) % 11 + 1)
#define IN_SUM(p, i) (((p) * 3 + (i)) % 7 + 1)
#define IN_PROD(p, i) (((p) + (i)) % 3 == 0 ? 2 : 1)
#define F_AND(a, b) ((a) & (b))
#define F_OR(a, b) ((a) | (b))
#define F_XOR(a, b) ((a) ^ (b))
#define F_MAX(a, b) ((a) > (b) ? (a) : (b))
#define F_MIN(a, b) ((a) < (b) ? (a) : (b))
#define F_SUM(a, b) ((a) + (b))
#define F_PROD(a, b) ((a) * (b))

#define DEFINE_REDUCE_BITWISE(T, NM)                                                                 \
    static void reduce_bitwise_##NM(void)                                                            \
    {                                                                                                \
        REDUCE_ONE(T, and, IN_AND, F_AND);                                                           \
        REDUCE_ONE(T, or, IN_OR, F_OR);                                                              \
        REDUCE_ONE(T, xor, IN_XOR, F_XOR);                                                           \
    }
GSHMEM_REDUCE_BITWISE_TYPES(DEFINE_REDUCE_BITWISE)

#define DEFINE_REDUCE_ARITH(T, NM)                                                                   \
    static void reduce_arith_##NM(void)                                                              \
    {                                                                                                \
        REDUCE_ONE(T, max, IN_MAX, F_MAX);                                                           \
        REDUCE_ONE(T, min, IN_MAX, F_MIN);                                                           \
        REDUCE_ONE(T, sum, IN_SUM, F_SUM);                                                           \
        REDUCE_ONE(T, prod, IN_PROD, F_PROD);                                                        \
    }
GSHMEM_REDUCE_ARITH_TYPES(DEFINE_REDUCE_ARITH)

int main(void)
{
    gshmem_init();
    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();
    g_left = (g_me + g_npes - 1) % g_npes;
    g_right = (g_me + 1) % g_npes;
    CHECK(g_npes <= MAX_PES, "mp_generic's values are chosen for up to %d PEs, not %d", MAX_PES, g_npes);
    g_src = gshmem_malloc(4096);
    g_dst = gshmem_malloc(4096);
    g_words = gshmem_malloc(64 * sizeof(uint64_t));
    g_sig = gshmem_malloc(sizeof(uint64_t));
    CHECK(g_src && g_dst && g_words && g_sig, "symmetric allocation failed");

#define RUN(T, NM) rma_##NM();
    GSHMEM_RMA_TYPES(RUN)
#undef RUN
#define RUN(T, NM) amo_standard_##NM();
    GSHMEM_AMO_STANDARD_TYPES(RUN)
#undef RUN
#define RUN(T, NM) amo_extended_##NM();
    GSHMEM_AMO_EXTENDED_TYPES(RUN)
#undef RUN
#define RUN(T, NM) amo_bitwise_##NM();
    GSHMEM_AMO_BITWISE_TYPES(RUN)
#undef RUN
#define RUN(T, NM) sync_##NM();
    GSHMEM_P2P_SYNC_TYPES(RUN)
#undef RUN
#define RUN(T, NM) coll_##NM();
    GSHMEM_RMA_TYPES(RUN)
#undef RUN
#define RUN(T, NM) reduce_bitwise_##NM();
    GSHMEM_REDUCE_BITWISE_TYPES(RUN)
#undef RUN
#define RUN(T, NM) reduce_arith_##NM();
    GSHMEM_REDUCE_ARITH_TYPES(RUN)
#undef RUN

    gshmem_barrier_all();
    gshmem_free(g_sig);
    gshmem_free(g_words);
    gshmem_free(g_dst);
    gshmem_free(g_src);
    if (g_me == 0) printf("mp_generic: %d PEs, %zu checks OK\n", g_npes, g_checks);
    gshmem_finalize();
    return 0;
}
