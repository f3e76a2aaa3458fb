/* Symmetric allocator: alignment, overlap, coalescing, exhaustion, resize, determinism. */
#include "core/alloc.h"

#include <gshmem/status.h>

#include <criterion/criterion.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define G GSHMEMI_ALLOC_GRANULE

static size_t round_up(size_t n)
{
    return (n + G - 1) & ~(G - 1);
}

/* Fixed-seed generator so every run sees the same sequence. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

static size_t rng_below(uint64_t *s, size_t n)
{
    return (size_t)(rng_next(s) % n);
}

/* The test's own record of live blocks, checked against the allocator after every call. */
struct span {
    size_t off, len;
};

struct model {
    struct gshmemi_alloc a;
    size_t base, size;
    struct span *live;
    size_t n, cap;
};

static void model_init(struct model *m, size_t base, size_t size)
{
    memset(m, 0, sizeof(*m));
    m->base = base;
    m->size = size;
    cr_assert_eq(gshmemi_alloc_init(&m->a, base, size), 0);
}

static void model_fini(struct model *m)
{
    gshmemi_alloc_fini(&m->a);
    free(m->live);
}

static void model_add(struct model *m, size_t off, size_t len)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->live = realloc(m->live, m->cap * sizeof(*m->live));
        cr_assert_not_null(m->live);
    }
    m->live[m->n++] = (struct span){off, len};
}

static void model_remove(struct model *m, size_t i)
{
    m->live[i] = m->live[--m->n];
}

static int span_cmp(const void *x, const void *y)
{
    const struct span *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

/* Bytes free right after the live block at off (up to the next live block or the end). */
static size_t model_gap_after(const struct model *m, size_t off, size_t len)
{
    size_t next = m->base + m->size;
    for (size_t i = 0; i < m->n; i++)
        if (m->live[i].off > off && m->live[i].off < next) next = m->live[i].off;
    return next - (off + len);
}

/* Live blocks lie inside the heap, never overlap, report their sizes; the free space
 * is exactly the gaps between them, and (every free neighbour being merged) the
 * largest free block is the largest gap. */
static void model_check(const struct model *m, size_t *max_gap_out)
{
    struct span *sorted = malloc((m->n ? m->n : 1) * sizeof(*sorted));
    cr_assert_not_null(sorted);
    if (m->n) memcpy(sorted, m->live, m->n * sizeof(*sorted));
    qsort(sorted, m->n, sizeof(*sorted), span_cmp);
    size_t cursor = m->base, gaps = 0, max_gap = 0;
    for (size_t i = 0; i < m->n; i++) {
        const struct span *s = &sorted[i];
        cr_assert_eq(s->off % G, 0, "offset %zu not granule aligned", s->off);
        cr_assert_geq(s->off, cursor, "block at %zu overlaps the one before (ends at %zu)", s->off, cursor);
        cr_assert_leq(s->off + s->len, m->base + m->size, "block at %zu runs past the heap", s->off);
        cr_assert_eq(gshmemi_alloc_block_size(&m->a, s->off), s->len, "block at %zu", s->off);
        size_t gap = s->off - cursor;
        gaps += gap;
        if (gap > max_gap) max_gap = gap;
        cursor = s->off + s->len;
    }
    size_t tail = m->base + m->size - cursor;
    gaps += tail;
    if (tail > max_gap) max_gap = tail;
    cr_assert_eq(gshmemi_alloc_free_bytes(&m->a), gaps);
    cr_assert_eq(gshmemi_alloc_largest_free(&m->a), max_gap);
    free(sorted);
    if (max_gap_out) *max_gap_out = max_gap;
}

static size_t random_size(uint64_t *s)
{
    switch (rng_below(s, 8)) {
    case 0: return 1 + rng_below(s, 64 * 1024);
    case 1: return G * (1 + rng_below(s, 32));
    default: return 1 + rng_below(s, 2048);
    }
}

static size_t random_alignment(uint64_t *s)
{
    static const size_t aligns[] = {0, 0, 0, 0, 1, 8, 32, 64, 128, 256, 1024, 4096, 65536};
    return aligns[rng_below(s, sizeof(aligns) / sizeof(aligns[0]))];
}

/* One random alloc, free or resize, checked against the model. */
static void model_step(struct model *m, uint64_t *s, size_t max_live)
{
    size_t pick = rng_below(s, 10);
    if (m->n == 0 || (m->n < max_live && pick < 5)) {
        size_t size = random_size(s), align = random_alignment(s), eff = align < G ? G : align;
        size_t max_gap, off = (size_t)-1;
        model_check(m, &max_gap);
        int rc = gshmemi_alloc_alloc(&m->a, size, align, &off);
        if (rc == 0) {
            cr_assert_eq(off % eff, 0, "offset %zu for alignment %zu", off, align);
            cr_assert_eq(gshmemi_alloc_block_size(&m->a, off), round_up(size));
            model_add(m, off, round_up(size));
        } else {
            cr_assert_eq(rc, GSHMEMX_ERR_NOMEM);
            /* A hole that fits the request at any alignment must have been found. */
            cr_assert_lt(max_gap, round_up(size) + eff - G, "size %zu align %zu failed with a %zu hole", size,
                         align, max_gap);
        }
    } else if (pick < 8) {
        size_t i = rng_below(s, m->n);
        cr_assert_eq(gshmemi_alloc_free(&m->a, m->live[i].off), 0);
        model_remove(m, i);
    } else {
        size_t i = rng_below(s, m->n);
        struct span *b = &m->live[i];
        size_t new_size = random_size(s), need = round_up(new_size);
        size_t room = b->len + model_gap_after(m, b->off, b->len);
        int rc = gshmemi_alloc_resize(&m->a, b->off, new_size);
        if (need <= room) {
            cr_assert_eq(rc, 0, "resize %zu -> %zu with %zu room", b->len, new_size, room);
            cr_assert_eq(gshmemi_alloc_block_size(&m->a, b->off), need);
            b->len = need;
        } else {
            cr_assert_eq(rc, GSHMEMX_ERR_NOMEM);
            cr_assert_eq(gshmemi_alloc_block_size(&m->a, b->off), b->len);
        }
    }
    model_check(m, NULL);
}

static void model_free_all(struct model *m)
{
    while (m->n) {
        cr_assert_eq(gshmemi_alloc_free(&m->a, m->live[m->n - 1].off), 0);
        m->n--;
    }
    model_check(m, NULL);
    cr_assert_eq(gshmemi_alloc_largest_free(&m->a), m->size);
    cr_assert_eq(gshmemi_alloc_free_bytes(&m->a), m->size);
}

Test(alloc, init_rejects_bad_arguments)
{
    struct gshmemi_alloc a;
    cr_assert_eq(gshmemi_alloc_init(&a, 0, 0), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_init(&a, 32, 4096), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_init(&a, 0, 4096 + 1), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_init(&a, 0, 4096), 0);
    cr_assert_eq(gshmemi_alloc_free_bytes(&a), 4096);
    cr_assert_eq(gshmemi_alloc_largest_free(&a), 4096);
    gshmemi_alloc_fini(&a);
}

Test(alloc, offsets_granule_aligned_and_sizes_rounded)
{
    static const size_t sizes[] = {1, 2, 63, 64, 65, 100, 127, 128, 129, 1000, 4095, 4096, 4097, 7, 3};
    struct model m;
    model_init(&m, 0, 1 << 20);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t off;
        cr_assert_eq(gshmemi_alloc_alloc(&m.a, sizes[i], 0, &off), 0);
        cr_assert_eq(off % G, 0);
        cr_assert_eq(gshmemi_alloc_block_size(&m.a, off), round_up(sizes[i]));
        model_add(&m, off, round_up(sizes[i]));
        model_check(&m, NULL);
    }
    model_free_all(&m);
    model_fini(&m);
}

Test(alloc, offsets_aligned_to_requested_power_of_two)
{
    struct model m;
    /* A base that is only granule aligned: alignment is of the offset, not base-relative. */
    model_init(&m, 5 * G, 64u << 20);
    for (size_t align = 2 * G; align <= ((size_t)1 << 22); align <<= 1) {
        for (int k = 0; k < 3; k++) {
            size_t off, small;
            /* A small block first so the free space starts misaligned. */
            cr_assert_eq(gshmemi_alloc_alloc(&m.a, 1 + (size_t)k * 70, 0, &small), 0);
            model_add(&m, small, round_up(1 + (size_t)k * 70));
            cr_assert_eq(gshmemi_alloc_alloc(&m.a, 100 + (size_t)k, align, &off), 0);
            cr_assert_eq(off % align, 0, "offset %zu for alignment %zu", off, align);
            model_add(&m, off, round_up(100 + (size_t)k));
            model_check(&m, NULL);
        }
    }
    model_free_all(&m);
    model_fini(&m);
}

Test(alloc, small_alignments_round_to_granule)
{
    struct model m;
    model_init(&m, 0, 1 << 16);
    for (size_t align = 1; align < G; align <<= 1) {
        size_t off;
        cr_assert_eq(gshmemi_alloc_alloc(&m.a, 10, align, &off), 0);
        cr_assert_eq(off % G, 0);
        model_add(&m, off, G);
    }
    model_check(&m, NULL);
    model_free_all(&m);
    model_fini(&m);
}

Test(alloc, invalid_size_and_alignment)
{
    static const size_t bad_aligns[] = {3, 5, 65, 96, 100, 192, 4097, (size_t)-1};
    struct gshmemi_alloc a;
    size_t off = 12345;
    cr_assert_eq(gshmemi_alloc_init(&a, 0, 1 << 16), 0);
    cr_assert_eq(gshmemi_alloc_alloc(&a, 0, 0, &off), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_alloc(&a, 0, 128, &off), GSHMEMX_ERR_INVALID_ARG);
    for (size_t i = 0; i < sizeof(bad_aligns) / sizeof(bad_aligns[0]); i++)
        cr_assert_eq(gshmemi_alloc_alloc(&a, 64, bad_aligns[i], &off), GSHMEMX_ERR_INVALID_ARG, "alignment %zu",
                     bad_aligns[i]);
    cr_assert_eq(off, 12345, "offset written on failure");
    cr_assert_eq(gshmemi_alloc_free_bytes(&a), 1 << 16);
    cr_assert_eq(gshmemi_alloc_largest_free(&a), 1 << 16);
    gshmemi_alloc_fini(&a);
}

static void randomized(uint64_t seed, size_t base, size_t size, size_t ops, size_t max_live)
{
    struct model m;
    uint64_t s = seed;
    model_init(&m, base, size);
    for (size_t i = 0; i < ops; i++) model_step(&m, &s, max_live);
    model_free_all(&m);
    model_fini(&m);
}

Test(alloc, randomized_no_overlap)
{
    randomized(0x5EED0001ull, 0, 4u << 20, 6000, 200);
}

Test(alloc, randomized_no_overlap_near_full)
{
    /* A small heap keeps it near exhaustion so failures and tight resizes are common. */
    randomized(0x5EED0002ull, 3 * G, 256u << 10, 6000, 400);
}

Test(alloc, randomized_no_overlap_many_live)
{
    randomized(0x5EED0003ull, 1u << 20, 64u << 20, 4000, 2000);
}

static void coalesce_after(const char *order)
{
    enum { N = 300 };
    struct model m;
    uint64_t s = 0xC0A1E5CEull;
    size_t offs[N], perm[N];
    model_init(&m, 0, 8u << 20);
    for (size_t i = 0; i < N; i++) {
        size_t size = random_size(&s), align = random_alignment(&s);
        cr_assert_eq(gshmemi_alloc_alloc(&m.a, size, align, &offs[i]), 0);
        model_add(&m, offs[i], round_up(size));
        perm[i] = i;
    }
    model_check(&m, NULL);
    if (strcmp(order, "reverse") == 0) {
        for (size_t i = 0; i < N / 2; i++) {
            size_t t = perm[i];
            perm[i] = perm[N - 1 - i];
            perm[N - 1 - i] = t;
        }
    } else if (strcmp(order, "random") == 0) {
        for (size_t i = N - 1; i > 0; i--) {
            size_t j = rng_below(&s, i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
    }
    for (size_t i = 0; i < N; i++) cr_assert_eq(gshmemi_alloc_free(&m.a, offs[perm[i]]), 0);
    m.n = 0;
    model_check(&m, NULL);
    cr_assert_eq(gshmemi_alloc_largest_free(&m.a), m.size);
    cr_assert_eq(gshmemi_alloc_free_bytes(&m.a), m.size);
    /* One block again: the whole heap is one allocation at the base. */
    size_t off;
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, m.size, 0, &off), 0);
    cr_assert_eq(off, m.base);
    cr_assert_eq(gshmemi_alloc_free(&m.a, off), 0);
    model_fini(&m);
}

Test(alloc, coalesces_after_free_in_order)
{
    coalesce_after("forward");
}

Test(alloc, coalesces_after_free_in_reverse)
{
    coalesce_after("reverse");
}

Test(alloc, coalesces_after_free_in_random_order)
{
    coalesce_after("random");
}

static int size_cmp(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

Test(alloc, fragmentation)
{
    enum { N = 64, BLK = 1024 };
    struct model m;
    size_t offs[N], off;
    model_init(&m, 0, N * BLK);
    for (size_t i = 0; i < N; i++) {
        cr_assert_eq(gshmemi_alloc_alloc(&m.a, BLK, 0, &offs[i]), 0);
        model_add(&m, offs[i], BLK);
    }
    model_check(&m, NULL);
    cr_assert_eq(gshmemi_alloc_free_bytes(&m.a), 0);
    /* The blocks tile the heap; in address order, neighbours are adjacent. */
    qsort(offs, N, sizeof(offs[0]), size_cmp);
    for (size_t i = 0; i < N; i++) cr_assert_eq(offs[i], i * BLK);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 1, 0, &off), GSHMEMX_ERR_NOMEM);
    /* Free every other block: half the heap is free, in holes of one block each. */
    for (size_t i = 0; i < N; i += 2) cr_assert_eq(gshmemi_alloc_free(&m.a, offs[i]), 0);
    m.n = 0;
    for (size_t i = 1; i < N; i += 2) model_add(&m, offs[i], BLK);
    model_check(&m, NULL);
    cr_assert_eq(gshmemi_alloc_free_bytes(&m.a), N / 2 * BLK);
    cr_assert_eq(gshmemi_alloc_largest_free(&m.a), BLK);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, BLK + 1, 0, &off), GSHMEMX_ERR_NOMEM);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 2 * BLK, 0, &off), GSHMEMX_ERR_NOMEM);
    cr_assert_eq(gshmemi_alloc_free_bytes(&m.a), N / 2 * BLK);
    model_check(&m, NULL);
    /* Freeing block 33 merges the holes of blocks 32 and 34 into three blocks' worth. */
    size_t mid = offs[33];
    cr_assert_eq(gshmemi_alloc_free(&m.a, mid), 0);
    for (size_t i = 0; i < m.n; i++)
        if (m.live[i].off == mid) model_remove(&m, i);
    model_check(&m, NULL);
    cr_assert_eq(gshmemi_alloc_largest_free(&m.a), 3 * BLK);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 2 * BLK + 1, 0, &off), 0);
    cr_assert_geq(off, offs[32]);
    cr_assert_leq(off + round_up(2 * BLK + 1), offs[34] + BLK);
    model_add(&m, off, round_up(2 * BLK + 1));
    model_check(&m, NULL);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 2 * BLK, 0, &off), GSHMEMX_ERR_NOMEM);
    model_free_all(&m);
    model_fini(&m);
}

/* An aligned request that fits only in a free block smaller than size + alignment:
 * [1M, 4M + 64K) is free, [2M, 4M) is aligned to 2M and inside it, and no block of
 * 4M - 64 bytes exists. The allocator once looked for that size only, then for an
 * already aligned free block, and refused (found by review). */
Test(alloc, aligned_fits_inside_a_smaller_free_block)
{
    const size_t K = 1024, M = 1024 * K;
    struct model m;
    model_init(&m, 64 * K, 16 * M);
    size_t a, b, c, off;
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, M - 64 * K, 0, &a), 0); /* [64K, 1M) */
    cr_assert_eq(a, 64 * K);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 3 * M + 64 * K, 0, &b), 0); /* [1M, 4M + 64K) */
    cr_assert_eq(b, M);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 12 * M - 64 * K, 0, &c), 0); /* the rest but the last 64K */
    model_add(&m, a, M - 64 * K);
    model_add(&m, c, 12 * M - 64 * K);
    cr_assert_eq(gshmemi_alloc_free(&m.a, b), 0);
    model_check(&m, NULL);
    cr_assert_lt(gshmemi_alloc_largest_free(&m.a), 2 * M + 2 * M - G, "no free block of the search size");
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 2 * M, 2 * M, &off), 0, "[2M, 4M) is free and aligned");
    cr_assert_eq(off % (2 * M), 0);
    cr_assert_geq(off, M);
    cr_assert_leq(off + 2 * M, 4 * M + 64 * K);
    model_add(&m, off, 2 * M);
    model_check(&m, NULL);
    model_free_all(&m);
    model_fini(&m);
}

Test(alloc, exhaustion)
{
    const size_t size = 1u << 20;
    struct gshmemi_alloc a;
    size_t off, other;
    cr_assert_eq(gshmemi_alloc_init(&a, 2 * G, size), 0);
    cr_assert_eq(gshmemi_alloc_alloc(&a, size + G, 0, &off), GSHMEMX_ERR_NOMEM);
    cr_assert_eq(gshmemi_alloc_alloc(&a, size + 1, 0, &off), GSHMEMX_ERR_NOMEM);
    cr_assert_eq(gshmemi_alloc_alloc(&a, 64, 2 * size, &off), GSHMEMX_ERR_NOMEM);
    cr_assert_eq(gshmemi_alloc_alloc(&a, (size_t)-1, 0, &off), GSHMEMX_ERR_NOMEM);
    cr_assert_eq(gshmemi_alloc_free_bytes(&a), size);
    cr_assert_eq(gshmemi_alloc_alloc(&a, size, 0, &off), 0);
    cr_assert_eq(off, 2 * G);
    cr_assert_eq(gshmemi_alloc_block_size(&a, off), size);
    cr_assert_eq(gshmemi_alloc_free_bytes(&a), 0);
    cr_assert_eq(gshmemi_alloc_largest_free(&a), 0);
    cr_assert_eq(gshmemi_alloc_alloc(&a, 1, 0, &other), GSHMEMX_ERR_NOMEM);
    cr_assert_eq(gshmemi_alloc_free(&a, off), 0);
    cr_assert_eq(gshmemi_alloc_free_bytes(&a), size);
    cr_assert_eq(gshmemi_alloc_largest_free(&a), size);
    /* Full size with a large alignment when the base already has it. */
    gshmemi_alloc_fini(&a);
    cr_assert_eq(gshmemi_alloc_init(&a, size, size), 0);
    cr_assert_eq(gshmemi_alloc_alloc(&a, size, size, &off), 0);
    cr_assert_eq(off, size);
    cr_assert_eq(gshmemi_alloc_free(&a, off), 0);
    gshmemi_alloc_fini(&a);
}

Test(alloc, exhaustion_by_granules)
{
    enum { N = 200 };
    struct model m;
    size_t off;
    model_init(&m, 0, N * G);
    for (size_t i = 0; i < N; i++) {
        cr_assert_eq(gshmemi_alloc_alloc(&m.a, 1 + i % G, 0, &off), 0, "allocation %zu", i);
        model_add(&m, off, G);
    }
    model_check(&m, NULL);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 1, 0, &off), GSHMEMX_ERR_NOMEM);
    model_free_all(&m);
    model_fini(&m);
}

Test(alloc, free_rejects_bad_offsets)
{
    struct gshmemi_alloc a;
    size_t x, y;
    cr_assert_eq(gshmemi_alloc_init(&a, 0, 1 << 16), 0);
    cr_assert_eq(gshmemi_alloc_alloc(&a, 4 * G, 0, &x), 0);
    cr_assert_eq(gshmemi_alloc_alloc(&a, 2 * G, 0, &y), 0);
    size_t free_before = gshmemi_alloc_free_bytes(&a);
    /* Never allocated: in the free space, past the heap, in an empty allocator's range. */
    cr_assert_eq(gshmemi_alloc_free(&a, (1 << 16) - G), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_free(&a, 1 << 20), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_free(&a, (size_t)-1), GSHMEMX_ERR_INVALID_ARG);
    /* Inside a live block. */
    cr_assert_eq(gshmemi_alloc_free(&a, x + 1), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_free(&a, x + G), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_free(&a, x + 3 * G), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_free_bytes(&a), free_before);
    cr_assert_eq(gshmemi_alloc_block_size(&a, x), 4 * G);
    cr_assert_eq(gshmemi_alloc_block_size(&a, y), 2 * G);
    /* Twice. */
    cr_assert_eq(gshmemi_alloc_free(&a, x), 0);
    cr_assert_eq(gshmemi_alloc_free(&a, x), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_free_bytes(&a), free_before + 4 * G);
    cr_assert_eq(gshmemi_alloc_block_size(&a, y), 2 * G);
    cr_assert_eq(gshmemi_alloc_free(&a, y), 0);
    cr_assert_eq(gshmemi_alloc_free(&a, y), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_largest_free(&a), 1 << 16);
    gshmemi_alloc_fini(&a);
}

Test(alloc, block_size)
{
    struct gshmemi_alloc a;
    size_t x, y;
    cr_assert_eq(gshmemi_alloc_init(&a, 0, 1 << 16), 0);
    cr_assert_eq(gshmemi_alloc_block_size(&a, 0), 0, "free space is no block");
    cr_assert_eq(gshmemi_alloc_alloc(&a, 200, 0, &x), 0);
    cr_assert_eq(gshmemi_alloc_alloc(&a, 64, 0, &y), 0);
    cr_assert_eq(gshmemi_alloc_block_size(&a, x), 256);
    cr_assert_eq(gshmemi_alloc_block_size(&a, y), 64);
    cr_assert_eq(gshmemi_alloc_block_size(&a, x + G), 0);
    cr_assert_eq(gshmemi_alloc_block_size(&a, x + 1), 0);
    cr_assert_eq(gshmemi_alloc_block_size(&a, 1 << 20), 0);
    cr_assert_eq(gshmemi_alloc_free(&a, x), 0);
    cr_assert_eq(gshmemi_alloc_block_size(&a, x), 0);
    cr_assert_eq(gshmemi_alloc_block_size(&a, y), 64);
    gshmemi_alloc_fini(&a);
}

Test(alloc, resize_grows_in_place)
{
    struct gshmemi_alloc a;
    size_t x, y;
    cr_assert_eq(gshmemi_alloc_init(&a, 0, 1 << 16), 0);
    cr_assert_eq(gshmemi_alloc_alloc(&a, 256, 0, &x), 0);
    cr_assert_eq(gshmemi_alloc_resize(&a, x, 1000), 0);
    cr_assert_eq(gshmemi_alloc_block_size(&a, x), 1024);
    cr_assert_eq(gshmemi_alloc_free_bytes(&a), (1 << 16) - 1024);
    /* The freed tail of the heap still follows the block as one piece. */
    cr_assert_eq(gshmemi_alloc_largest_free(&a), (1 << 16) - 1024 - x);
    cr_assert_eq(gshmemi_alloc_alloc(&a, 64, 0, &y), 0);
    cr_assert(y < x || y >= x + 1024, "new block at %zu inside the grown one at %zu", y, x);
    /* Growing to the whole rest of the heap. */
    cr_assert_eq(gshmemi_alloc_free(&a, y), 0);
    cr_assert_eq(gshmemi_alloc_resize(&a, x, (1 << 16) - x), 0);
    cr_assert_eq(gshmemi_alloc_block_size(&a, x), (1 << 16) - x);
    cr_assert_eq(gshmemi_alloc_free_bytes(&a), x);
    cr_assert_eq(gshmemi_alloc_resize(&a, x, (1 << 16) - x + 1), GSHMEMX_ERR_NOMEM);
    cr_assert_eq(gshmemi_alloc_block_size(&a, x), (1 << 16) - x);
    cr_assert_eq(gshmemi_alloc_free(&a, x), 0);
    cr_assert_eq(gshmemi_alloc_largest_free(&a), 1 << 16);
    gshmemi_alloc_fini(&a);
}

Test(alloc, resize_shrinks_in_place)
{
    struct model m;
    size_t x, y;
    model_init(&m, 0, 1 << 16);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 4096, 0, &x), 0);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 64, 0, &y), 0);
    model_add(&m, x, 4096);
    model_add(&m, y, 64);
    /* Shrinking with an allocated neighbour leaves a free hole behind the block. */
    cr_assert_eq(gshmemi_alloc_resize(&m.a, x, 100), 0);
    m.live[0].len = 128;
    model_check(&m, NULL);
    cr_assert_eq(gshmemi_alloc_free_bytes(&m.a), (1 << 16) - 128 - 64);
    /* Same rounded size: nothing changes. */
    cr_assert_eq(gshmemi_alloc_resize(&m.a, x, 128), 0);
    model_check(&m, NULL);
    /* The hole is usable and the block can grow back into it. */
    cr_assert_eq(gshmemi_alloc_resize(&m.a, x, 4096), 0);
    m.live[0].len = 4096;
    model_check(&m, NULL);
    cr_assert_eq(gshmemi_alloc_resize(&m.a, x, 1), 0);
    m.live[0].len = G;
    model_check(&m, NULL);
    model_free_all(&m);
    model_fini(&m);
}

Test(alloc, resize_nomem_when_neighbour_allocated)
{
    struct model m;
    size_t x, y, z;
    model_init(&m, 0, 1 << 16);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 512, 0, &x), 0);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 512, 0, &y), 0);
    cr_assert_eq(gshmemi_alloc_alloc(&m.a, 512, 0, &z), 0);
    model_add(&m, x, 512);
    model_add(&m, y, 512);
    model_add(&m, z, 512);
    model_check(&m, NULL);
    /* Find the block whose successor is allocated. */
    size_t first = x < y ? (x < z ? x : z) : (y < z ? y : z);
    cr_assert_eq(model_gap_after(&m, first, 512), 0, "blocks are not adjacent");
    size_t free_before = gshmemi_alloc_free_bytes(&m.a);
    cr_assert_eq(gshmemi_alloc_resize(&m.a, first, 513), GSHMEMX_ERR_NOMEM);
    cr_assert_eq(gshmemi_alloc_block_size(&m.a, first), 512);
    cr_assert_eq(gshmemi_alloc_free_bytes(&m.a), free_before);
    model_check(&m, NULL);
    /* Free the middle one: the first can take exactly its room, no more. */
    size_t mid = first + 512;
    for (size_t i = 0; i < m.n; i++)
        if (m.live[i].off == mid) model_remove(&m, i);
    cr_assert_eq(gshmemi_alloc_free(&m.a, mid), 0);
    cr_assert_eq(gshmemi_alloc_resize(&m.a, first, 1025), GSHMEMX_ERR_NOMEM);
    cr_assert_eq(gshmemi_alloc_block_size(&m.a, first), 512);
    model_check(&m, NULL);
    cr_assert_eq(gshmemi_alloc_resize(&m.a, first, 1024), 0);
    for (size_t i = 0; i < m.n; i++)
        if (m.live[i].off == first) m.live[i].len = 1024;
    model_check(&m, NULL);
    model_free_all(&m);
    model_fini(&m);
}

Test(alloc, resize_rejects_bad_arguments)
{
    struct gshmemi_alloc a;
    size_t x;
    cr_assert_eq(gshmemi_alloc_init(&a, 0, 1 << 16), 0);
    cr_assert_eq(gshmemi_alloc_alloc(&a, 256, 0, &x), 0);
    cr_assert_eq(gshmemi_alloc_resize(&a, x, 0), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_resize(&a, x + G, 64), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_resize(&a, 1 << 20, 64), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemi_alloc_resize(&a, x, (1 << 16) + 1), GSHMEMX_ERR_NOMEM);
    cr_assert_eq(gshmemi_alloc_resize(&a, x, (size_t)-1), GSHMEMX_ERR_NOMEM);
    cr_assert_eq(gshmemi_alloc_block_size(&a, x), 256);
    cr_assert_eq(gshmemi_alloc_free(&a, x), 0);
    cr_assert_eq(gshmemi_alloc_resize(&a, x, 64), GSHMEMX_ERR_INVALID_ARG, "resize of a freed block");
    gshmemi_alloc_fini(&a);
}

Test(alloc, deterministic)
{
    enum { OPS = 5000, SLOTS = 128 };
    struct gshmemi_alloc a, b;
    size_t live_a[SLOTS], live_b[SLOTS];
    int used[SLOTS] = {0};
    uint64_t s = 0xDE7E4ull;
    cr_assert_eq(gshmemi_alloc_init(&a, 0, 2u << 20), 0);
    cr_assert_eq(gshmemi_alloc_init(&b, 0, 2u << 20), 0);
    for (size_t i = 0; i < OPS; i++) {
        size_t slot = rng_below(&s, SLOTS), size = random_size(&s), align = random_alignment(&s);
        int ra, rb;
        if (!used[slot]) {
            ra = gshmemi_alloc_alloc(&a, size, align, &live_a[slot]);
            rb = gshmemi_alloc_alloc(&b, size, align, &live_b[slot]);
            cr_assert_eq(ra, rb, "op %zu", i);
            if (ra == 0) {
                cr_assert_eq(live_a[slot], live_b[slot], "op %zu", i);
                used[slot] = 1;
            }
        } else if (rng_below(&s, 3) == 0) {
            ra = gshmemi_alloc_resize(&a, live_a[slot], size);
            rb = gshmemi_alloc_resize(&b, live_b[slot], size);
            cr_assert_eq(ra, rb, "op %zu", i);
        } else {
            cr_assert_eq(gshmemi_alloc_free(&a, live_a[slot]), 0);
            cr_assert_eq(gshmemi_alloc_free(&b, live_b[slot]), 0);
            used[slot] = 0;
        }
        cr_assert_eq(gshmemi_alloc_free_bytes(&a), gshmemi_alloc_free_bytes(&b));
        cr_assert_eq(gshmemi_alloc_largest_free(&a), gshmemi_alloc_largest_free(&b));
    }
    gshmemi_alloc_fini(&a);
    gshmemi_alloc_fini(&b);
}

Test(alloc, scales_to_100k_allocations)
{
    enum { N = 100000 };
    struct gshmemi_alloc a;
    size_t *offs = malloc(N * sizeof(*offs));
    cr_assert_not_null(offs);
    cr_assert_eq(gshmemi_alloc_init(&a, 0, (size_t)N * G), 0);
    size_t done = 0;
    for (size_t i = 0; i < N; i++)
        if (gshmemi_alloc_alloc(&a, 1 + i % G, 0, &offs[i]) == 0) done++;
    cr_assert_eq(done, N);
    cr_assert_eq(gshmemi_alloc_free_bytes(&a), 0);
    size_t extra;
    cr_assert_eq(gshmemi_alloc_alloc(&a, 1, 0, &extra), GSHMEMX_ERR_NOMEM);
    /* Every offset distinct and the blocks tile the heap. */
    char *seen = calloc(N, 1);
    cr_assert_not_null(seen);
    for (size_t i = 0; i < N; i++) {
        cr_assert_eq(offs[i] % G, 0);
        cr_assert_lt(offs[i] / G, N);
        cr_assert_eq(seen[offs[i] / G], 0, "offset %zu given twice", offs[i]);
        seen[offs[i] / G] = 1;
    }
    /* Free in a stride so most frees merge with a neighbour on one side only. */
    size_t freed = 0;
    for (size_t start = 0; start < 7; start++)
        for (size_t i = start; i < N; i += 7)
            if (gshmemi_alloc_free(&a, offs[i]) == 0) freed++;
    cr_assert_eq(freed, N);
    cr_assert_eq(gshmemi_alloc_free_bytes(&a), (size_t)N * G);
    cr_assert_eq(gshmemi_alloc_largest_free(&a), (size_t)N * G);
    free(seen);
    free(offs);
    gshmemi_alloc_fini(&a);
}

/* The header asks only that size be a positive multiple of the granule; the block
 * classes stop at GSHMEMI_ALLOC_FL_COUNT, so a heap this large must either be refused
 * or work. The allocator never touches the heap, so no memory of that size is needed. */
Test(alloc, huge_heap_refused_or_usable)
{
    const size_t size = (size_t)1 << 57;
    struct gshmemi_alloc a;
    int rc = gshmemi_alloc_init(&a, 0, size);
    if (rc != 0) {
        cr_assert(rc == GSHMEMX_ERR_INVALID_ARG || rc == GSHMEMX_ERR_NOMEM, "rc %d", rc);
        return;
    }
    cr_assert_eq(gshmemi_alloc_largest_free(&a), size);
    size_t off;
    cr_assert_eq(gshmemi_alloc_alloc(&a, size, 0, &off), 0);
    cr_assert_eq(off, 0);
    cr_assert_eq(gshmemi_alloc_free(&a, off), 0);
    cr_assert_eq(gshmemi_alloc_largest_free(&a), size);
    gshmemi_alloc_fini(&a);
}
