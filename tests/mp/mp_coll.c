/*
 * Host collectives other than reductions: broadcast (every root), collect (a different
 * count per PE, one PE giving none), fcollect, alltoall (out of place and in place) and
 * alltoalls (strides), in the mem form and typed forms, on WORLD, a strided team, the
 * rows and columns of a 2-D split, a team of one, and evens and odds at the same time;
 * then back-to-back loops reusing the buffers.
 *
 * Element i that world PE w gives for key k (the receiver's world PE in alltoall, the
 * giver's team index elsewhere) is value(mix(w, k, i, salt)); salt mixes the test, the
 * iteration and the team. Destinations are poisoned with guards on both sides; PEs
 * outside the team check their destination was not touched; every source is checked
 * intact on return and then poisoned at once (it may be reused on return).
 */
#include "mp_check.h"

#define G 64                       /* guard bytes on each side of a destination */
#define BUF ((size_t)4 << 20)      /* bytes of each symmetric buffer */
#define BIG ((size_t)(1 << 20) + 3)

typedef int coll_fn(gshmem_team_t, void *, const void *, size_t);

/* One element type: the collectives, and its value for a hash. */
struct ctype {
    const char *name;
    size_t size;
    int (*bcast)(gshmem_team_t, void *, const void *, size_t, int);
    coll_fn *collect, *fcollect, *alltoall;
    int (*alltoalls)(gshmem_team_t, void *, const void *, ptrdiff_t, ptrdiff_t, size_t);
    void (*set)(void *buf, size_t i, uint64_t h);
    int (*is)(const void *buf, size_t i, uint64_t h);
};

/* This PE's view of a team. */
struct tctx {
    gshmem_team_t h;
    int size, index; /* index -1: not a member */
    int pe[64];      /* world PE of each member */
    char name[32];
};

static unsigned char *g_src, *g_dst; /* symmetric */
static int g_me, g_npes;

#define DEFINE_CTYPE(T, N)                                                                                 \
    static int bc_##N(gshmem_team_t t, void *d, const void *s, size_t n, int r)                         \
    {                                                                                                      \
        return gshmem_##N##_broadcast(t, d, s, n, r);                                                      \
    }                                                                                                      \
    static int co_##N(gshmem_team_t t, void *d, const void *s, size_t n) { return gshmem_##N##_collect(t, d, s, n); } \
    static int fc_##N(gshmem_team_t t, void *d, const void *s, size_t n) { return gshmem_##N##_fcollect(t, d, s, n); } \
    static int aa_##N(gshmem_team_t t, void *d, const void *s, size_t n) { return gshmem_##N##_alltoall(t, d, s, n); } \
    static int as_##N(gshmem_team_t t, void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t n)      \
    {                                                                                                      \
        return gshmem_##N##_alltoalls(t, d, s, ds, ss, n);                                                 \
    }                                                                                                      \
    static void set_##N(void *b, size_t i, uint64_t h) { ((T *)b)[i] = (T)(h % mp_value_range(sizeof(T))); } \
    static int is_##N(const void *b, size_t i, uint64_t h)                                                 \
    {                                                                                                      \
        return ((const T *)b)[i] == (T)(h % mp_value_range(sizeof(T)));                                    \
    }
#define COLL_TYPES(X)                                                                                      \
    X(char, char) X(int16_t, int16) X(int, int) X(long, long) X(uint64_t, uint64) X(float, float)        \
    X(double, double) X(long double, longdouble) X(size_t, size)
COLL_TYPES(DEFINE_CTYPE)

/* The mem forms: bytes, any value but the poison. */
static unsigned char mem_value(uint64_t h) { return (h & 0xff) == MP_POISON ? 0x5a : (unsigned char)h; }
static void set_mem(void *b, size_t i, uint64_t h) { ((unsigned char *)b)[i] = mem_value(h); }
static int is_mem(const void *b, size_t i, uint64_t h) { return ((const unsigned char *)b)[i] == mem_value(h); }

#define CTYPE_ROW(T, N) {#N, sizeof(T), bc_##N, co_##N, fc_##N, aa_##N, as_##N, set_##N, is_##N},
static const struct ctype g_types[] = {
    {"mem", 1, gshmem_broadcastmem, gshmem_collectmem, gshmem_fcollectmem, gshmem_alltoallmem, gshmem_alltoallsmem,
     set_mem, is_mem},
    COLL_TYPES(CTYPE_ROW)};
#define NTYPES (sizeof g_types / sizeof g_types[0])

static uint64_t hv(int w, int k, size_t i, uint64_t salt) { return mp_mix((uint64_t)w, (uint64_t)k, i, salt); }

static void hex(char *out, const void *p, size_t n)
{
    for (size_t k = 0; k < n; k++) sprintf(out + 2 * k, "%02x", ((const unsigned char *)p)[k]);
}

/* Element i of buf holds the value for h, or the job ends naming everything. */
static void check_elem(const struct ctype *ct, const struct tctx *t, const char *op, const void *buf, size_t i,
                       uint64_t h, int from)
{
    if (ct->is(buf, i, h)) return;
    unsigned char want[16];
    char g[40], w[40];
    ct->set(want, 0, h);
    hex(g, (const unsigned char *)buf + i * ct->size, ct->size);
    hex(w, want, ct->size);
    mp_fail(__FILE__, __LINE__, op, "%s %s on team %s (%d PEs, index %d): elem %zu from world PE %d is %s, want %s",
            ct->name, op, t->name, t->size, t->index, i, from, g, w);
}

/* The guards around a payload of `bytes` at g_dst + G. */
static void check_guards(const struct tctx *t, const char *op, size_t bytes)
{
    char what[96];
    snprintf(what, sizeof what, "%s on team %s: guard before dest", op, t->name);
    CHECK_POISON(g_dst, G, what);
    snprintf(what, sizeof what, "%s on team %s: guard after dest (%zu bytes)", op, t->name, bytes);
    CHECK_POISON(g_dst + G + bytes, G, what);
}

/* Before: poison dest and guards (PEs outside the team: the first 64 KiB). After: PEs
 * outside the team see theirs untouched. */
#define OUTSIDE ((size_t)64 << 10)
static void begin(const struct tctx *t, size_t bytes)
{
    mp_poison(g_dst, t->index >= 0 ? bytes + 2 * G : OUTSIDE);
}
static void end(const struct tctx *t, const char *op)
{
    gshmem_barrier_all();
    if (t->index >= 0) return;
    char what[96];
    snprintf(what, sizeof what, "%s on team %s: dest of non-member PE %d", op, t->name, g_me);
    CHECK_POISON(g_dst, OUTSIDE, what);
}

/* Checks this PE's source still holds what it gave (n elements at stride 1), then poisons it. */
static void source_reused(const struct ctype *ct, const struct tctx *t, const char *op, size_t n, int key_is_pe,
                          uint64_t salt)
{
    for (size_t i = 0; i < n; i++) {
        size_t blk = key_is_pe ? i / (n / (size_t)t->size) : 0, e = key_is_pe ? i % (n / (size_t)t->size) : i;
        int k = key_is_pe ? t->pe[blk] : t->index;
        if (!ct->is(g_src, i, hv(g_me, k, e, salt)))
            mp_fail(__FILE__, __LINE__, op, "%s %s on team %s: source elem %zu changed on PE %d", ct->name, op,
                    t->name, i, g_me);
    }
    mp_poison(g_src, n * ct->size);
}

#define CHECK_RC(rc, ct, op, t, n) \
    CHECK((rc) == 0, "%s %s on team %s (n %zu) returned %d on PE %d", (ct)->name, op, (t)->name, (size_t)(n), rc, g_me)

static void broadcast(const struct ctype *ct, const struct tctx *t, size_t n, int root, uint64_t salt)
{
    begin(t, n * ct->size);
    if (t->index >= 0)
        for (size_t i = 0; i < n; i++) ct->set(g_src, i, hv(g_me, t->index, i, salt));
    gshmem_barrier_all();
    if (t->index >= 0) {
        int rc = ct->bcast(t->h, g_dst + G, g_src, n, root);
        CHECK_RC(rc, ct, "broadcast", t, n);
        source_reused(ct, t, "broadcast", n, 0, salt);
        for (size_t i = 0; i < n; i++) check_elem(ct, t, "broadcast", g_dst + G, i, hv(t->pe[root], root, i, salt), t->pe[root]);
        check_guards(t, "broadcast", n * ct->size);
    }
    end(t, "broadcast");
}

/* counts[j]: what member j gives; fcollect when every count is the same. */
static void collect(const struct ctype *ct, const struct tctx *t, const size_t *counts, int fixed, uint64_t salt)
{
    const char *op = fixed ? "fcollect" : "collect";
    size_t total = 0, mine = t->index >= 0 ? counts[t->index] : 0;
    for (int j = 0; j < t->size; j++) total += counts[j];
    begin(t, total * ct->size);
    for (size_t i = 0; i < mine; i++) ct->set(g_src, i, hv(g_me, t->index, i, salt));
    gshmem_barrier_all();
    if (t->index >= 0) {
        int rc = (fixed ? ct->fcollect : ct->collect)(t->h, g_dst + G, g_src, mine);
        CHECK_RC(rc, ct, op, t, mine);
        source_reused(ct, t, op, mine, 0, salt);
        size_t at = 0;
        for (int j = 0; j < t->size; j++)
            for (size_t i = 0; i < counts[j]; i++) check_elem(ct, t, op, g_dst + G, at++, hv(t->pe[j], j, i, salt), t->pe[j]);
        check_guards(t, op, total * ct->size);
    }
    end(t, op);
}

static void alltoall(const struct ctype *ct, const struct tctx *t, size_t n, int in_place, uint64_t salt)
{
    const char *op = in_place ? "alltoall in place" : "alltoall";
    size_t total = t->index >= 0 ? n * (size_t)t->size : 0;
    begin(t, total * ct->size);
    unsigned char *src = in_place ? g_dst + G : g_src;
    for (size_t i = 0; i < total; i++) ct->set(src, i, hv(g_me, t->pe[i / n], i % n, salt));
    gshmem_barrier_all();
    if (t->index >= 0) {
        int rc = ct->alltoall(t->h, g_dst + G, src, n);
        CHECK_RC(rc, ct, op, t, n);
        if (!in_place) source_reused(ct, t, op, total, 1, salt);
        for (size_t i = 0; i < total; i++) check_elem(ct, t, op, g_dst + G, i, hv(t->pe[i / n], g_me, i % n, salt), t->pe[i / n]);
        check_guards(t, op, total * ct->size);
    }
    end(t, op);
}

/* The gaps between source elements hold decoys; the gaps in dest must stay poisoned. */
static void alltoalls(const struct ctype *ct, const struct tctx *t, size_t n, ptrdiff_t dst, ptrdiff_t sst,
                      uint64_t salt)
{
    size_t cells = t->index >= 0 ? n * (size_t)t->size : 0, span = cells ? (cells - 1) * (size_t)dst + 1 : 0;
    begin(t, span * ct->size);
    for (size_t c = 0; c < cells * (size_t)sst; c++) ct->set(g_src, c, hv(g_me, -1, c, salt + 1));
    for (size_t c = 0; c < cells; c++) ct->set(g_src, c * (size_t)sst, hv(g_me, t->pe[c / n], c % n, salt));
    gshmem_barrier_all();
    if (t->index >= 0) {
        int rc = ct->alltoalls(t->h, g_dst + G, g_src, dst, sst, n);
        CHECK_RC(rc, ct, "alltoalls", t, n);
        for (size_t e = 0; e < span; e++) {
            if (e % (size_t)dst == 0) {
                size_t c = e / (size_t)dst;
                check_elem(ct, t, "alltoalls", g_dst + G, e, hv(t->pe[c / n], g_me, c % n, salt), t->pe[c / n]);
            } else if (mp_find_unpoisoned(g_dst + G + e * ct->size, ct->size) != ct->size) {
                mp_fail(__FILE__, __LINE__, "alltoalls", "%s alltoalls dst stride %td sst %td on team %s: gap elem %zu "
                        "changed on PE %d", ct->name, dst, sst, t->name, e, g_me);
            }
        }
        check_guards(t, "alltoalls", span * ct->size);
    }
    end(t, "alltoalls");
}

/* Counts for collect: they differ per member and per call; member z gives none. */
static void collect_counts(const struct tctx *t, size_t base, uint64_t salt, size_t *counts)
{
    int z = (int)(salt % (uint64_t)(t->size + 1));
    for (int j = 0; j < t->size; j++) counts[j] = j == z ? 0 : base + (size_t)((j * 37 + (int)(salt % 11)) % 23);
}

/* Every collective for one type; sizes differ with the team so concurrent teams differ. */
static void suite_type(const struct ctype *ct, const struct tctx *t, uint64_t salt)
{
    size_t shift = (size_t)(t->size > 0 ? t->pe[0] : 0);
    const size_t sizes[] = {0, 1, 7 + shift, 301 + 2 * shift};
    size_t counts[64];
    /* As many calls on every PE, member or not: each one has world barriers. */
    for (int r = 0; r < (g_npes > 4 ? g_npes : 4); r++)
        broadcast(ct, t, sizes[r % 4], t->size > 0 ? r % t->size : 0, salt + (uint64_t)r);
    for (int k = 0; k < 3; k++) {
        collect_counts(t, k == 2 ? 250 : 1, salt + 10 + (uint64_t)k, counts);
        collect(ct, t, counts, 0, salt + 10 + (uint64_t)k);
        for (int j = 0; j < t->size; j++) counts[j] = sizes[k + 1];
        collect(ct, t, counts, 1, salt + 20 + (uint64_t)k);
    }
    for (int k = 0; k < 3; k++) {
        alltoall(ct, t, sizes[k + 1], 0, salt + 30 + (uint64_t)k);
        alltoall(ct, t, sizes[k + 1], 1, salt + 40 + (uint64_t)k);
    }
    const ptrdiff_t strides[][2] = {{1, 1}, {2, 3}, {3, 1}, {1, 2}, {4, 4}};
    const size_t per_pair[] = {sizes[1], sizes[2], sizes[3], sizes[2], 0};
    for (int k = 0; k < 5; k++)
        alltoalls(ct, t, per_pair[k], strides[k][0], strides[k][1], salt + 50 + (uint64_t)k);
}

/* Megabyte-sized mem collectives. */
static void suite_big(const struct tctx *t, uint64_t salt)
{
    const struct ctype *mem = &g_types[0];
    size_t counts[64];
    broadcast(mem, t, BIG, t->size > 0 ? t->size - 1 : 0, salt);
    broadcast(mem, t, BIG - 3, 0, salt + 1);
    collect_counts(t, (BIG - 3) / 8, salt + 2, counts);
    collect(mem, t, counts, 0, salt + 2);
    for (int j = 0; j < t->size; j++) counts[j] = (BIG - 3) / 5 + 5;
    collect(mem, t, counts, 1, salt + 3);
    alltoall(mem, t, (size_t)(64 << 10) + 1, 0, salt + 4);
    alltoall(mem, t, (size_t)(64 << 10) + 1, 1, salt + 5);
    alltoalls(mem, t, 20000, 3, 2, salt + 6);
}

static void suite(const struct tctx *t, uint64_t salt)
{
    for (size_t k = 0; k < NTYPES; k++) suite_type(&g_types[k], t, salt + 1000 * k);
    suite_big(t, salt + 99999);
}

/* 60 collectives back to back on the same buffers, values changing every time; a team
 * sync stands between this PE's check of one result and the peers' next writes. */
static void back_to_back(const struct tctx *t, uint64_t salt)
{
    if (t->index < 0) return;
    const struct ctype *ct = &g_types[3]; /* int */
    for (int it = 0; it < 60; it++) {
        const struct ctype *c = (it / 4) % 2 ? ct : &g_types[0];
        size_t n = 5 + (size_t)(it * 13 % 97), s = salt + (uint64_t)it;
        int op = it % 4, root = it % t->size;
        unsigned char *src = op == 3 ? g_dst + G : g_src;
        size_t give = op == 0 ? n : op == 1 ? n : n * (size_t)t->size;
        for (size_t i = 0; i < give; i++)
            c->set(src, i, op >= 2 ? hv(g_me, t->pe[i / n], i % n, s) : hv(g_me, t->index, i, s));
        CHECK_EQ(gshmem_team_sync(t->h), 0);
        int rc = op == 0 ? c->bcast(t->h, g_dst + G, src, n, root) : op == 1 ? c->fcollect(t->h, g_dst + G, src, n)
                                                                    : c->alltoall(t->h, g_dst + G, src, n);
        CHECK_RC(rc, c, "back-to-back", t, n);
        if (op != 3) mp_poison(g_src, give * c->size);
        for (size_t i = 0; i < (op == 0 ? n : n * (size_t)t->size); i++) {
            int j = op == 0 ? root : (int)(i / n);
            uint64_t h = op == 0 ? hv(t->pe[root], root, i, s) : op == 1 ? hv(t->pe[j], j, i % n, s)
                                                                         : hv(t->pe[j], g_me, i % n, s);
            check_elem(c, t, op == 0 ? "broadcast loop" : op == 1 ? "fcollect loop" : "alltoall loop", g_dst + G, i, h,
                       t->pe[j]);
        }
    }
    CHECK_EQ(gshmem_team_sync(t->h), 0);
}

static struct tctx make(gshmem_team_t h, const char *name)
{
    struct tctx t = {.h = h, .size = 0, .index = -1};
    snprintf(t.name, sizeof t.name, "%s", name);
    if (h == GSHMEM_TEAM_INVALID) return t;
    t.size = gshmem_team_n_pes(h);
    t.index = gshmem_team_my_pe(h);
    CHECK(t.size >= 1 && t.size <= 64 && t.index >= 0, "team %s: size %d index %d", name, t.size, t.index);
    for (int i = 0; i < t.size; i++) t.pe[i] = gshmem_team_translate_pe(h, i, GSHMEM_TEAM_WORLD);
    return t;
}

static gshmem_team_t split(int start, int stride, int size)
{
    gshmem_team_t h = GSHMEM_TEAM_INVALID;
    int rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, start, stride, size, NULL, 0, &h);
    CHECK(rc == 0, "split_strided(%d, %d, %d) returned %d", start, stride, size, rc);
    return h;
}

int main(void)
{
    gshmem_init();
    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();
    CHECK(g_npes <= 64, "mp_coll runs on up to 64 PEs, not %d", g_npes);
    g_src = gshmem_malloc(BUF);
    g_dst = gshmem_malloc(BUF + 2 * G);
    CHECK(g_src && g_dst, "symmetric allocation failed");

    struct tctx world = make(GSHMEM_TEAM_WORLD, "world");
    suite(&world, 1);
    back_to_back(&world, 2);

    gshmem_team_t evens = split(0, 2, (g_npes + 1) / 2);
    struct tctx ev = make(evens, "evens");
    suite(&ev, 3); /* the odds look on: their dest stays untouched */
    gshmem_team_t one = split(g_npes - 1, 1, 1);
    struct tctx t1 = make(one, "of one");
    suite(&t1, 4);
    back_to_back(&t1, 5);
    if (g_npes >= 2) { /* evens and odds at once, with different sizes */
        gshmem_team_t odds = split(1, 2, g_npes / 2);
        struct tctx mine = g_me % 2 ? make(odds, "odds") : ev;
        suite(&mine, 6);
        back_to_back(&mine, 7);
        gshmem_team_destroy(odds);
    }
    gshmem_team_t row, col;
    int x = g_npes >= 4 ? 3 : 2;
    CHECK_EQ(gshmem_team_split_2d(GSHMEM_TEAM_WORLD, x, NULL, 0, &row, NULL, 0, &col), 0);
    struct tctx r = make(row, "2-D row"), c = make(col, "2-D column");
    suite(&r, 8);
    suite(&c, 9);
    back_to_back(&c, 10);

    gshmem_team_destroy(col);
    gshmem_team_destroy(row);
    gshmem_team_destroy(one);
    gshmem_team_destroy(evens);
    gshmem_barrier_all();
    gshmem_free(g_dst);
    gshmem_free(g_src);
    if (g_me == 0) printf("mp_coll: %d PEs OK\n", g_npes);
    gshmem_finalize();
    return 0;
}
