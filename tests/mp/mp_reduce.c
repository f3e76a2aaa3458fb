/*
 * Reductions: every op/type pair of GSHMEM_REDUCE_OPS (generated from the same tables,
 * so none is missed), out of place and in place, for 1, 300 and more than 64 KiB of
 * elements, on WORLD and on the two strided halves (evens, odds) at the same time; then
 * back-to-back reductions with no synchronization between them.
 *
 * Each result is checked against a reference folded here, in team order, from the
 * values every member gave. Values keep every result exact and defined: unsigned sums
 * and products wrap (odd factors, so products never collapse to 0); signed sums stay
 * far from overflow, signed products are of -2..2; float and double sums are of small
 * integers, their products of powers of two, their max/min of small integers.
 */
#include "mp_check.h"

#define G 64 /* guard bytes on each side of a destination */
#define BUF ((size_t)256 << 10)
#define OUTSIDE ((size_t)64 << 10)
#define MAX_PES 6 /* keeps signed products of -2..2 inside signed char */

#define IS_FLOAT(T) ((T)0.5 != (T)0)
#define IS_SIGNED(T) ((T)-1 < (T)1)
/* A quarter of the signed type's maximum / MAX_PES: sums of MAX_PES of them fit. */
#define SIGNED_LIMIT(T) ((int64_t)((((uint64_t)1 << (8 * sizeof(T) - 1)) - 1) / (4 * MAX_PES)))

static const double g_pow2[7] = {0.125, 0.25, 0.5, 1, 2, 4, 8};
static const int g_small[4] = {-2, -1, 1, 2};

/* Value for hash h; c is the same on every PE for an element (and/or keep common bits). */
#define VAL_and(T, h, c) ((T)((h) | (c)))
#define VAL_or(T, h, c) ((T)((h) & (c)))
#define VAL_xor(T, h, c) ((T)(h))
#define VAL_max(T, h, c) (IS_FLOAT(T) ? (T)((int64_t)((h) % 2001) - 1000) : (T)(h))
#define VAL_min(T, h, c) VAL_max(T, h, c)
#define VAL_sum(T, h, c)                                                                                  \
    (IS_FLOAT(T)    ? (T)((int64_t)((h) % 2001) - 1000)                                                   \
     : IS_SIGNED(T) ? (T)((int64_t)((h) % (uint64_t)(2 * SIGNED_LIMIT(T) + 1)) - SIGNED_LIMIT(T))        \
                    : (T)(h))
#define VAL_prod(T, h, c)                                                                                 \
    (IS_FLOAT(T)    ? (T)(((h) >> 40 & 1 ? -1 : 1) * g_pow2[(h) % 7])                                     \
     : IS_SIGNED(T) ? (T)((h) % 31 == 0 ? 0 : g_small[(h) >> 8 & 3])                                     \
                    : (T)((h) | 1))

/* The reference: integer sums and products through unsigned long long, so wrapping is
 * defined; the values keep signed results in range. */
#define REF_and(T, a, b) ((T)((a) & (b)))
#define REF_or(T, a, b) ((T)((a) | (b)))
#define REF_xor(T, a, b) ((T)((a) ^ (b)))
#define REF_max(T, a, b) ((a) > (b) ? (a) : (b))
#define REF_min(T, a, b) ((a) < (b) ? (a) : (b))
#define REF_sum(T, a, b) (IS_FLOAT(T) ? (T)((a) + (b)) : (T)((unsigned long long)(a) + (unsigned long long)(b)))
#define REF_prod(T, a, b) (IS_FLOAT(T) ? (T)((a) * (b)) : (T)((unsigned long long)(a) * (unsigned long long)(b)))

/* One op/type pair. verify: index of the first element of buf that differs from the
 * fold over pes[0..np) (np 1: what that PE gave), or n; the wanted value in want. */
struct rtype {
    const char *type, *op;
    size_t size;
    void (*fill)(void *buf, int pe, size_t n, uint64_t salt);
    size_t (*verify)(const void *buf, const int *pes, int np, size_t n, uint64_t salt, void *want);
    int (*call)(gshmem_team_t team, void *dest, const void *source, size_t n);
};

#define DEFINE_RED(T, N, OP)                                                                               \
    static T val_##N##_##OP(int pe, size_t i, uint64_t salt)                                              \
    {                                                                                                      \
        uint64_t h = mp_mix((uint64_t)pe, i, salt, 0), c = mp_mix(i, salt, 1, 1);                          \
        (void)c;                                                                                           \
        return VAL_##OP(T, h, c);                                                                          \
    }                                                                                                      \
    static void fill_##N##_##OP(void *buf, int pe, size_t n, uint64_t salt)                               \
    {                                                                                                      \
        for (size_t i = 0; i < n; i++) ((T *)buf)[i] = val_##N##_##OP(pe, i, salt);                        \
    }                                                                                                      \
    static size_t verify_##N##_##OP(const void *buf, const int *pes, int np, size_t n, uint64_t salt,      \
                                    void *want)                                                            \
    {                                                                                                      \
        for (size_t i = 0; i < n; i++) {                                                                   \
            T r = val_##N##_##OP(pes[0], i, salt);                                                         \
            for (int j = 1; j < np; j++) r = REF_##OP(T, r, val_##N##_##OP(pes[j], i, salt));              \
            if (!(((const T *)buf)[i] == r)) {                                                             \
                memcpy(want, &r, sizeof r);                                                                \
                return i;                                                                                  \
            }                                                                                              \
        }                                                                                                  \
        return n;                                                                                          \
    }                                                                                                      \
    static int call_##N##_##OP(gshmem_team_t team, void *dest, const void *source, size_t n)              \
    {                                                                                                      \
        return gshmem_##N##_##OP##_reduce(team, dest, source, n);                                          \
    }
#define DEFINE_RED_and(T, N) DEFINE_RED(T, N, and)
#define DEFINE_RED_or(T, N) DEFINE_RED(T, N, or)
#define DEFINE_RED_xor(T, N) DEFINE_RED(T, N, xor)
#define DEFINE_RED_max(T, N) DEFINE_RED(T, N, max)
#define DEFINE_RED_min(T, N) DEFINE_RED(T, N, min)
#define DEFINE_RED_sum(T, N) DEFINE_RED(T, N, sum)
#define DEFINE_RED_prod(T, N) DEFINE_RED(T, N, prod)
#define DEFINE_RED_OP(OP, TYPES) TYPES(DEFINE_RED_##OP)
GSHMEM_REDUCE_OPS(DEFINE_RED_OP)

#define ROW(T, N, OP) {#N, #OP, sizeof(T), fill_##N##_##OP, verify_##N##_##OP, call_##N##_##OP},
#define ROW_and(T, N) ROW(T, N, and)
#define ROW_or(T, N) ROW(T, N, or)
#define ROW_xor(T, N) ROW(T, N, xor)
#define ROW_max(T, N) ROW(T, N, max)
#define ROW_min(T, N) ROW(T, N, min)
#define ROW_sum(T, N) ROW(T, N, sum)
#define ROW_prod(T, N) ROW(T, N, prod)
#define ROW_OP(OP, TYPES) TYPES(ROW_##OP)
static const struct rtype g_red[] = {GSHMEM_REDUCE_OPS(ROW_OP)};
#define NRED (sizeof g_red / sizeof g_red[0])

/* This PE's view of a team. */
struct tctx {
    gshmem_team_t h;
    int size, index; /* index -1: not a member */
    int pe[MAX_PES]; /* world PE of each member */
    const char *name;
};

static unsigned char *g_src, *g_dst; /* symmetric */
static int g_me, g_npes;

static void hex(char *out, const void *p, size_t n)
{
    for (size_t k = 0; k < n; k++) sprintf(out + 2 * k, "%02x", ((const unsigned char *)p)[k]);
}

static void reduce_one(const struct rtype *r, const struct tctx *t, size_t n, int in_place, uint64_t salt)
{
    size_t bytes = n * r->size;
    mp_poison(g_dst, t->index >= 0 ? bytes + 2 * G : OUTSIDE);
    unsigned char *src = in_place ? g_dst + G : g_src;
    if (t->index >= 0) r->fill(src, g_me, n, salt);
    gshmem_barrier_all();
    if (t->index >= 0) {
        int rc = r->call(t->h, g_dst + G, src, n);
        CHECK(rc == 0, "%s_%s_reduce on team %s (n %zu%s) returned %d", r->type, r->op, t->name, n,
              in_place ? ", in place" : "", rc);
        unsigned char want[16];
        if (!in_place) {
            CHECK(r->verify(g_src, &g_me, 1, n, salt, want) == n, "%s_%s_reduce on team %s changed its source",
                  r->type, r->op, t->name);
            mp_poison(g_src, bytes); /* the source may be reused on return */
        }
        size_t bad = r->verify(g_dst + G, t->pe, t->size, n, salt, want);
        if (bad != n) {
            char g[40], w[40];
            hex(g, g_dst + G + bad * r->size, r->size);
            hex(w, want, r->size);
            mp_fail(__FILE__, __LINE__, "reduce", "%s_%s_reduce on team %s (%d PEs, n %zu%s): elem %zu is %s, want %s",
                    r->type, r->op, t->name, t->size, n, in_place ? ", in place" : "", bad, g, w);
        }
        CHECK_POISON(g_dst, G, "guard before a reduction's dest");
        CHECK_POISON(g_dst + G + bytes, G, "guard after a reduction's dest");
    }
    gshmem_barrier_all();
    if (t->index < 0) CHECK_POISON(g_dst, OUTSIDE, "dest of a PE outside the team");
}

/* Every pair at every size, out of place and in place (both), or one of the two by turns. */
static void all_pairs(const struct tctx *t, int both, uint64_t salt)
{
    for (size_t k = 0; k < NRED; k++) {
        const struct rtype *r = &g_red[k];
        const size_t sizes[3] = {1, 300, ((size_t)64 << 10) / r->size + 77};
        for (int s = 0; s < 3; s++)
            for (int ip = 0; ip < 2; ip++)
                if (both || ip == (int)((k + (size_t)s) % 2))
                    reduce_one(r, t, sizes[s], ip, salt + 16 * k + 4 * (uint64_t)s + (uint64_t)ip);
    }
}

/* x = sum over the team of x, in place, 50 times in a row: every PE's x is the same
 * after the first, so the k-th result is size^(k-1) times the first (mod 2^64). */
static void chained_in_place(const struct tctx *t)
{
    enum { N = 33 };
    uint64_t *x = (uint64_t *)(g_dst + G), want[N];
    for (size_t i = 0; i < N; i++) {
        x[i] = mp_mix((uint64_t)g_me, i, 77, 0);
        want[i] = 0;
        for (int j = 0; j < t->size; j++) want[i] += mp_mix((uint64_t)t->pe[j], i, 77, 0);
    }
    gshmem_barrier_all();
    for (int it = 0; it < 50; it++) {
        CHECK_EQ(gshmem_uint64_sum_reduce(t->h, x, x, N), 0);
        for (size_t i = 0; i < N; i++) {
            CHECK(x[i] == want[i], "chained in-place sum %d on team %s: elem %zu is 0x%llx, want 0x%llx", it, t->name,
                  i, (unsigned long long)x[i], (unsigned long long)want[i]);
            want[i] *= (uint64_t)t->size;
        }
    }
    gshmem_barrier_all();
}

/* New source values every time, written as soon as the previous call returned. */
static void source_reused_loop(const struct tctx *t)
{
    enum { N = 129 };
    int32_t *src = (int32_t *)g_src, *dst = (int32_t *)(g_dst + G);
    gshmem_barrier_all();
    for (int it = 0; it < 50; it++) {
        for (size_t i = 0; i < N; i++) src[i] = (int32_t)(mp_mix((uint64_t)g_me, i, (uint64_t)it, 5) % 20001) - 10000;
        int rc = it % 2 ? gshmem_int32_max_reduce(t->h, dst, src, N) : gshmem_int32_sum_reduce(t->h, dst, src, N);
        CHECK_EQ(rc, 0);
        for (size_t i = 0; i < N; i++) {
            int32_t want = it % 2 ? INT32_MIN : 0;
            for (int j = 0; j < t->size; j++) {
                int32_t v = (int32_t)(mp_mix((uint64_t)t->pe[j], i, (uint64_t)it, 5) % 20001) - 10000;
                want = it % 2 ? (v > want ? v : want) : want + v;
            }
            CHECK(dst[i] == want, "%s loop %d on team %s: elem %zu is %d, want %d", it % 2 ? "max" : "sum", it,
                  t->name, i, dst[i], want);
        }
    }
    gshmem_barrier_all();
}

/* Members name one reduction by different typed forms of one representation (long and
 * int64, int and int32, unsigned long long and uint64): the same call, also under
 * GSHMEM_CHECK (mp_reduce_n3_check), with the right sums. */
static void mixed_forms(const struct tctx *t)
{
    enum { N = 77 };
    int64_t *src = (int64_t *)g_src, *dst = (int64_t *)(g_dst + G);
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < N; i++) src[i] = (int64_t)(mp_mix((uint64_t)g_me, i, (uint64_t)round, 9) % 100001);
        gshmem_barrier_all();
        int odd = t->index % 2, rc;
        if (round == 0)
            rc = odd ? gshmem_int64_sum_reduce(t->h, dst, src, N) : gshmem_long_sum_reduce(t->h, (long *)dst, (long *)src, N);
        else if (round == 1)
            rc = odd ? gshmem_int32_sum_reduce(t->h, (int32_t *)dst, (int32_t *)src, 2 * N)
                     : gshmem_int_sum_reduce(t->h, (int *)dst, (int *)src, 2 * N);
        else
            rc = odd ? gshmem_uint64_sum_reduce(t->h, (uint64_t *)dst, (uint64_t *)src, N)
                     : gshmem_ulonglong_sum_reduce(t->h, (unsigned long long *)dst, (unsigned long long *)src, N);
        CHECK_EQ(rc, 0);
        for (size_t i = 0; i < N; i++) {
            int64_t want = 0;
            for (int j = 0; j < t->size; j++) want += (int64_t)(mp_mix((uint64_t)t->pe[j], i, (uint64_t)round, 9) % 100001);
            /* round 1 sums the 64-bit values' 32-bit halves: small values, so the low halves carry it */
            int64_t got = round == 1 ? (int64_t)((int32_t *)dst)[2 * i] : dst[i];
            CHECK(got == want, "mixed typed forms, round %d on team %s: elem %zu is %lld, want %lld", round, t->name,
                  i, (long long)got, (long long)want);
        }
        gshmem_barrier_all();
    }
}

static struct tctx make(gshmem_team_t h, const char *name)
{
    struct tctx t = {.h = h, .size = gshmem_team_n_pes(h), .index = gshmem_team_my_pe(h), .name = name};
    CHECK(t.size >= 1 && t.size <= MAX_PES && t.index >= 0, "team %s: size %d index %d", name, t.size, t.index);
    for (int i = 0; i < t.size; i++) t.pe[i] = gshmem_team_translate_pe(h, i, GSHMEM_TEAM_WORLD);
    return t;
}

int main(void)
{
    gshmem_init();
    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();
    CHECK(g_npes <= MAX_PES, "mp_reduce's values are chosen for up to %d PEs, not %d", MAX_PES, g_npes);
    g_src = gshmem_malloc(BUF);
    g_dst = gshmem_malloc(BUF + 2 * G);
    CHECK(g_src && g_dst, "symmetric allocation failed");

    struct tctx world = make(GSHMEM_TEAM_WORLD, "world");
    all_pairs(&world, 1, 1);
    chained_in_place(&world);
    source_reused_loop(&world);
    mixed_forms(&world);

    /* Evens and odds (stride 2) reduce at the same time; on one PE, evens alone. */
    gshmem_team_t half = GSHMEM_TEAM_INVALID, other = GSHMEM_TEAM_INVALID;
    CHECK_EQ(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 2, (g_npes + 1) / 2, NULL, 0, &half), 0);
    if (g_npes > 1) CHECK_EQ(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 1, 2, g_npes / 2, NULL, 0, &other), 0);
    struct tctx mine = g_me % 2 ? make(other, "odds") : make(half, "evens");
    all_pairs(&mine, 0, 2);
    chained_in_place(&mine);
    source_reused_loop(&mine);

    gshmem_team_destroy(other);
    gshmem_team_destroy(half);
    gshmem_barrier_all();
    gshmem_free(g_dst);
    gshmem_free(g_src);
    if (g_me == 0) printf("mp_reduce: %d PEs, %zu op/type pairs OK\n", g_npes, NRED);
    gshmem_finalize();
    return 0;
}
