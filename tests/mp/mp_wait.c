/*
 * Point-to-point synchronization, every type: wait_until with each comparison,
 * wait_until_all/any/some and their vector forms (with status masks that exclude
 * elements which would otherwise never or already satisfy), and every test_* form
 * in true and false cases, locally and against remote updates.
 */
#include "mp_check.h"

#define MAXV 64

static unsigned char *g_ivars; /* symmetric, MAXV elements of the largest type */
static int g_me, g_npes;

static int shift_to(int shift) { return (g_me + shift) % g_npes; }
static int shift_from(int shift) { return (g_me - shift + g_npes) % g_npes; }

/* Each comparison: preset value, value written by the peer, comparison value. */
struct cmp_case {
    int cmp;
    int preset, written, operand;
};
static const struct cmp_case g_cmp_cases[] = {
    {GSHMEM_CMP_EQ, 100, 200, 200}, {GSHMEM_CMP_NE, 100, 201, 100}, {GSHMEM_CMP_GT, 100, 202, 150},
    {GSHMEM_CMP_GE, 100, 203, 203}, {GSHMEM_CMP_LT, 100, 50, 60},   {GSHMEM_CMP_LE, 100, 51, 51},
};

/* Indices returned by a _some call are distinct, in range, not excluded; marks them found. */
static size_t note_some(const size_t *idx, size_t count, size_t nelems, int *status, const char *what)
{
    for (size_t k = 0; k < count; k++) {
        CHECK(idx[k] < nelems, "%s: index %zu out of range (%zu)", what, idx[k], nelems);
        CHECK(!status[idx[k]], "%s: index %zu returned twice or while excluded", what, idx[k]);
        status[idx[k]] = 1;
    }
    return count;
}

#define DEFINE_WAIT_TEST(T, N)                                                                        \
    static void wait_##N(void)                                                                        \
    {                                                                                                 \
        T *iv = (T *)g_ivars;                                                                         \
        T cmpv[MAXV];                                                                                 \
        size_t idx[MAXV];                                                                             \
        int status[MAXV];                                                                             \
        size_t nv = (size_t)g_npes + 1; /* element npes is never written by a peer */               \
        int to = shift_to(1), from = shift_from(1);                                                   \
                                                                                                      \
        /* wait_until and test, each comparison, value written by the left neighbour */              \
        for (size_t c = 0; c < sizeof g_cmp_cases / sizeof g_cmp_cases[0]; c++) {                     \
            const struct cmp_case *cc = &g_cmp_cases[c];                                              \
            gshmem_barrier_all();                                                                     \
            iv[0] = (T)cc->preset;                                                                    \
            CHECK(!gshmem_##N##_test(&iv[0], cc->cmp, (T)cc->operand), #N "_test cmp %d true early", \
                  cc->cmp);                                                                           \
            gshmem_barrier_all();                                                                     \
            gshmem_##N##_p(&iv[0], (T)cc->written, to);                                               \
            gshmem_##N##_wait_until(&iv[0], cc->cmp, (T)cc->operand);                                 \
            CHECK_EQ(iv[0], (T)cc->written);                                                          \
            CHECK(gshmem_##N##_test(&iv[0], cc->cmp, (T)cc->operand), #N "_test cmp %d false after wait", \
                  cc->cmp);                                                                           \
        }                                                                                             \
                                                                                                      \
        /* test: spin until the remote write shows */                                                 \
        gshmem_barrier_all();                                                                         \
        iv[1] = 0;                                                                                    \
        gshmem_barrier_all();                                                                         \
        gshmem_##N##_p(&iv[1], (T)(g_me + 1), to);                             \
        while (!gshmem_##N##_test(&iv[1], GSHMEM_CMP_EQ, (T)(from + 1))) {                            \
        }                                                                                             \
                                                                                                      \
        /* wait_until_all (+vector): every PE writes element [pe] = pe + 1 on every PE */            \
        for (int vector = 0; vector < 2; vector++) {                                                  \
            gshmem_barrier_all();                                                                     \
            memset(iv, 0, sizeof(T) * MAXV);                                                          \
            memset(status, 0, sizeof status);                                                         \
            status[g_npes] = 1;                                                                       \
            for (size_t i = 0; i < nv; i++) cmpv[i] = (T)(i + 1);                                     \
            gshmem_barrier_all();                                                                     \
            for (int s = 0; s < g_npes; s++) gshmem_##N##_p(&iv[g_me], (T)(g_me + 1), shift_to(s));   \
            if (vector)                                                                               \
                gshmem_##N##_wait_until_all_vector(iv, nv, status, GSHMEM_CMP_EQ, cmpv);              \
            else                                                                                      \
                gshmem_##N##_wait_until_all(iv, nv, status, GSHMEM_CMP_NE, (T)0);                     \
            for (int pe = 0; pe < g_npes; pe++) CHECK_EQ(iv[pe], pe + 1);                             \
            CHECK_EQ(iv[g_npes], 0);                                                                  \
        }                                                                                             \
                                                                                                      \
        /* wait_until_any (+vector): only the left neighbour writes; an excluded element is      \
         * already true and must not be returned */                                               \
        for (int vector = 0; vector < 2; vector++) {                                                  \
            gshmem_barrier_all();                                                                     \
            memset(iv, 0, sizeof(T) * MAXV);                                                          \
            memset(status, 0, sizeof status);                                                         \
            for (size_t i = 0; i < nv; i++) cmpv[i] = (T)(i + 10);                                    \
            iv[g_npes] = vector ? (T)(g_npes + 10) : (T)7;                                            \
            status[g_npes] = 1;                                                                       \
            gshmem_barrier_all();                                                                     \
            gshmem_##N##_p(&iv[g_me], (T)(g_me + 10), to);                                            \
            size_t got = vector ? gshmem_##N##_wait_until_any_vector(iv, nv, status, GSHMEM_CMP_EQ, cmpv) \
                                : gshmem_##N##_wait_until_any(iv, nv, status, GSHMEM_CMP_NE, (T)0);  \
            CHECK_EQ(got, from);                                                                      \
            for (size_t i = 0; i < nv; i++) status[i] = 1;                                            \
            got = vector ? gshmem_##N##_wait_until_any_vector(iv, nv, status, GSHMEM_CMP_EQ, cmpv)    \
                         : gshmem_##N##_wait_until_any(iv, nv, status, GSHMEM_CMP_NE, (T)0);         \
            CHECK_EQ(got, SIZE_MAX);                                                                  \
        }                                                                                             \
                                                                                                      \
        /* wait_until_some (+vector): collect every writer's index, excluding those found */         \
        for (int vector = 0; vector < 2; vector++) {                                                  \
            gshmem_barrier_all();                                                                     \
            memset(iv, 0, sizeof(T) * MAXV);                                                          \
            memset(status, 0, sizeof status);                                                         \
            status[g_npes] = 1;                                                                       \
            for (size_t i = 0; i < nv; i++) cmpv[i] = (T)(i + 3);                                     \
            gshmem_barrier_all();                                                                     \
            for (int s = 0; s < g_npes; s++) gshmem_##N##_p(&iv[g_me], (T)(g_me + 3), shift_to(s));   \
            size_t found = 0;                                                                         \
            while (found < (size_t)g_npes) {                                                          \
                size_t k = vector ? gshmem_##N##_wait_until_some_vector(iv, nv, idx, status,          \
                                                                         GSHMEM_CMP_EQ, cmpv)         \
                                  : gshmem_##N##_wait_until_some(iv, nv, idx, status, GSHMEM_CMP_GE,  \
                                                                 (T)3);                               \
                CHECK(k >= 1, #N "_wait_until_some returned %zu with %zu of %d found", k, found, g_npes); \
                found += note_some(idx, k, nv, status, #N "_wait_until_some");                        \
            }                                                                                         \
            CHECK_EQ(found, g_npes);                                                                  \
        }                                                                                             \
                                                                                                      \
        /* test_* on local values iv[i] = i */                                                        \
        gshmem_barrier_all();                                                                         \
        const size_t m = 8;                                                                           \
        for (size_t i = 0; i < m; i++) iv[i] = (T)i, cmpv[i] = (T)i;                                  \
        memset(status, 0, sizeof status);                                                             \
        CHECK(gshmem_##N##_test_all(iv, m, NULL, GSHMEM_CMP_GE, (T)0), #N "_test_all GE 0");          \
        CHECK(!gshmem_##N##_test_all(iv, m, NULL, GSHMEM_CMP_GT, (T)0), #N "_test_all GT 0");         \
        status[0] = 1;                                                                                \
        CHECK(gshmem_##N##_test_all(iv, m, status, GSHMEM_CMP_GT, (T)0), #N "_test_all masked");      \
        CHECK_EQ(gshmem_##N##_test_any(iv, m, NULL, GSHMEM_CMP_EQ, (T)3), 3);                         \
        CHECK_EQ(gshmem_##N##_test_any(iv, m, NULL, GSHMEM_CMP_EQ, (T)100), SIZE_MAX);                \
        status[3] = 1;                                                                                \
        CHECK_EQ(gshmem_##N##_test_any(iv, m, status, GSHMEM_CMP_EQ, (T)3), SIZE_MAX);                \
        CHECK_EQ(gshmem_##N##_test_some(iv, m, idx, status, GSHMEM_CMP_GE, (T)2), m - 3);             \
        for (size_t k = 0; k < m - 3; k++)                                                            \
            CHECK(idx[k] >= 2 && idx[k] != 3, #N "_test_some index %zu", idx[k]);                     \
        CHECK_EQ(gshmem_##N##_test_some(iv, m, idx, NULL, GSHMEM_CMP_GT, (T)100), 0);                 \
        memset(status, 0, sizeof status);                                                             \
        CHECK(gshmem_##N##_test_all_vector(iv, m, NULL, GSHMEM_CMP_EQ, cmpv), #N "_test_all_vector"); \
        cmpv[5] = (T)50;                                                                              \
        CHECK(!gshmem_##N##_test_all_vector(iv, m, NULL, GSHMEM_CMP_EQ, cmpv), #N "_test_all_vector false"); \
        status[5] = 1;                                                                                \
        CHECK(gshmem_##N##_test_all_vector(iv, m, status, GSHMEM_CMP_EQ, cmpv), #N "_test_all_vector masked"); \
        CHECK_EQ(gshmem_##N##_test_any_vector(iv, m, NULL, GSHMEM_CMP_GT, cmpv), SIZE_MAX);           \
        CHECK_EQ(gshmem_##N##_test_any_vector(iv, m, NULL, GSHMEM_CMP_LT, cmpv), 5);                  \
        CHECK_EQ(gshmem_##N##_test_any_vector(iv, m, status, GSHMEM_CMP_LT, cmpv), SIZE_MAX);         \
        CHECK_EQ(gshmem_##N##_test_some_vector(iv, m, idx, NULL, GSHMEM_CMP_NE, cmpv), 1);            \
        CHECK_EQ(idx[0], 5);                                                                          \
        CHECK_EQ(gshmem_##N##_test_some_vector(iv, m, idx, status, GSHMEM_CMP_LE, cmpv), m - 1);      \
    }
GSHMEM_P2P_SYNC_TYPES(DEFINE_WAIT_TEST)
#undef DEFINE_WAIT_TEST

int main(void)
{
    gshmem_init();
    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();
    CHECK(g_npes < MAXV - 1, "too many PEs for this test");
    g_ivars = gshmem_align(64, MAXV * 16);
    CHECK(g_ivars != NULL, "symmetric allocation failed");

#define RUN(T, N) wait_##N();
    GSHMEM_P2P_SYNC_TYPES(RUN)
#undef RUN

    gshmem_barrier_all();
    gshmem_free(g_ivars);
    if (g_me == 0) printf("mp_wait: %d PEs OK\n", g_npes);
    gshmem_finalize();
    return 0;
}
