/* The ibv transport's chunking and atomic mapping (src/transport/ibv_wire.c): the split
 * of transfers at registration chunks, and each atomic's plan, checked by running it
 * against a simulated 64-bit word with native FADD/CAS exactly as ibv_ops.c does.
 * Random input comes from a fixed-seed generator. */
#include "transport/ibv_wire.h"

#include "test_rng.h"

#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---------------------------------------------------------------- chunking */

static int pow2(uint64_t v) { return v && !(v & (v - 1)); }

TestSuite(ibv_chunk);

Test(ibv_chunk, without_a_limit_one_chunk_covers_the_heap)
{
    static const uint64_t sizes[] = {1, 2, 3, 4095, 4096, 4097, (1ull << 30) + 1, 3ull << 33, 1ull << 40};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint64_t s = sizes[i], c = gshmemi_ibv_chunk_size(s, 0);
        cr_expect(pow2(c), "size %llu: chunk %llu is a power of two", (unsigned long long)s, (unsigned long long)c);
        cr_expect(c >= s && (c == 1 || c / 2 < s), "size %llu: the smallest power of two covering it, not %llu",
                  (unsigned long long)s, (unsigned long long)c);
    }
    cr_expect_eq(gshmemi_ibv_chunk_size(4096, 0), 4096u);
    cr_expect_eq(gshmemi_ibv_chunk_size(4097, 0), 8192u);
    cr_expect_eq(gshmemi_ibv_chunk_size(4096, 1ull << 30), 4096u, "a limit above the heap changes nothing");
    cr_expect_eq(gshmemi_ibv_chunk_size(1ull << 30, 1ull << 30), 1ull << 30, "a limit equal to the heap");
}

Test(ibv_chunk, a_registration_limit_splits_the_heap)
{
    cr_expect_eq(gshmemi_ibv_chunk_size(10ull << 30, 4ull << 30), 4ull << 30, "10 GiB under a 4 GiB limit: 3 chunks");
    cr_expect_eq(gshmemi_ibv_chunk_size(10ull << 30, 3ull << 30), 2ull << 30, "a 3 GiB limit: 2 GiB chunks");
    cr_expect_eq(gshmemi_ibv_chunk_size(64ull << 20, 1 << 20), 1u << 20, "exactly 64 chunks");
    cr_expect_eq(gshmemi_ibv_chunk_size(64ull << 20, (1 << 20) + 5), 1u << 20);
    cr_expect_eq(gshmemi_ibv_chunk_size(4096, 4095), 2048u);
    static const uint64_t cases[][2] = {{10ull << 30, 4ull << 30},     {(1ull << 33) + 7, 1ull << 30},
                                        {123456789, 4000000},          {1ull << 40, (1ull << 35) - 1},
                                        {(1ull << 62) + 1, 1ull << 57}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t s = cases[i][0], m = cases[i][1], c = gshmemi_ibv_chunk_size(s, m);
        cr_expect(pow2(c) && c <= m && c * 2 > m, "size %llu, limit %llu: the largest power of two under it, not %llu",
                  (unsigned long long)s, (unsigned long long)m, (unsigned long long)c);
        if (c)
            cr_expect((s + c - 1) / c <= GSHMEMI_IBV_MAX_CHUNKS, "size %llu: %llu chunks", (unsigned long long)s,
                      (unsigned long long)((s + c - 1) / c));
    }
}

Test(ibv_chunk, too_many_chunks_give_0)
{
    cr_expect_eq(gshmemi_ibv_chunk_size((64ull << 20) + 1, 1 << 20), 0u, "65 chunks");
    cr_expect_eq(gshmemi_ibv_chunk_size(65, 1), 0u, "65 one-byte chunks");
    cr_expect_eq(gshmemi_ibv_chunk_size(64, 1), 1u, "64 one-byte chunks");
    cr_expect_eq(gshmemi_ibv_chunk_size(1ull << 40, 1ull << 33), 0u, "128 chunks");
}

/* size + chunk - 1 computed in 64 bits: a heap near 2^64 must not wrap the chunk count. */
Test(ibv_chunk, huge_heaps_do_not_wrap_the_chunk_count)
{
    cr_expect_eq(gshmemi_ibv_chunk_size(UINT64_MAX, 1ull << 57), 0u,
                 "2^64-1 bytes in 2^57-byte chunks are 128 chunks: got %llu",
                 (unsigned long long)gshmemi_ibv_chunk_size(UINT64_MAX, 1ull << 57));
    uint64_t c = gshmemi_ibv_chunk_size(UINT64_MAX, 0);
    cr_expect(c == 0 || (pow2(c) && (unsigned __int128)c * GSHMEMI_IBV_MAX_CHUNKS >= UINT64_MAX),
              "no limit: %llu", (unsigned long long)c);
}

Test(ibv_chunk, span_at_and_around_boundaries)
{
    const uint64_t C = 4096;
    cr_expect_eq(gshmemi_ibv_chunk_span(0, 10, C), 10u);
    cr_expect_eq(gshmemi_ibv_chunk_span(0, 0, C), 0u);
    cr_expect_eq(gshmemi_ibv_chunk_span(0, C, C), C, "a whole chunk");
    cr_expect_eq(gshmemi_ibv_chunk_span(0, C + 1, C), C, "one byte into the next chunk");
    cr_expect_eq(gshmemi_ibv_chunk_span(C - 1, 1, C), 1u, "the chunk's last byte");
    cr_expect_eq(gshmemi_ibv_chunk_span(C - 1, 2, C), 1u, "crossing after one byte");
    cr_expect_eq(gshmemi_ibv_chunk_span(C - 1, 100000, C), 1u);
    cr_expect_eq(gshmemi_ibv_chunk_span(C, 1, C), 1u, "the next chunk's first byte");
    cr_expect_eq(gshmemi_ibv_chunk_span(C, C, C), C);
    cr_expect_eq(gshmemi_ibv_chunk_span(C, 2 * C, C), C);
    cr_expect_eq(gshmemi_ibv_chunk_span(C + 100, 5000, C), C - 100);
    cr_expect_eq(gshmemi_ibv_chunk_span(7 * C + 5, 3, C), 3u);
    cr_expect_eq(gshmemi_ibv_chunk_span((5ull << 30) - 8, 16, 1ull << 30), 8u, "in 1 GiB chunks");
    cr_expect_eq(gshmemi_ibv_chunk_span(1ull << 40, SIZE_MAX, 1ull << 30), 1ull << 30);
    /* walking any transfer in spans: each stays in one chunk, they add up, later ones start on a boundary */
    rng_seed(0x1b5eed03);
    for (int round = 0; round < 5000; round++) {
        uint64_t chunk = 1ull << (rng() % 16);
        uint64_t off = rng() % (64 * chunk);
        size_t len = (size_t)(rng() % (5 * chunk + 2));
        size_t done = 0;
        int pieces = 0;
        while (done < len) {
            size_t n = gshmemi_ibv_chunk_span(off + done, len - done, chunk);
            cr_assert(n > 0, "no progress at %llu", (unsigned long long)(off + done));
            cr_assert_eq((off + done) / chunk, (off + done + n - 1) / chunk, "a span crosses a chunk boundary");
            if (pieces) cr_assert_eq((off + done) % chunk, 0u, "a later span starts mid-chunk");
            done += n, pieces++;
        }
        cr_assert_eq(done, len);
        cr_assert(pieces <= (int)(len / chunk) + 2);
    }
}

/* ---------------------------------------------------------------- atomics */

static const int all_ops[] = {GSHMEMI_AMO_FETCH, GSHMEMI_AMO_SET, GSHMEMI_AMO_SWAP, GSHMEMI_AMO_COMPARE_SWAP,
                              GSHMEMI_AMO_ADD,   GSHMEMI_AMO_AND, GSHMEMI_AMO_OR,   GSHMEMI_AMO_XOR};
#define NOPS ((int)(sizeof(all_ops) / sizeof(all_ops[0])))

static const char *op_name(int op)
{
    switch (op) {
    case GSHMEMI_AMO_FETCH: return "FETCH";
    case GSHMEMI_AMO_SET: return "SET";
    case GSHMEMI_AMO_SWAP: return "SWAP";
    case GSHMEMI_AMO_COMPARE_SWAP: return "COMPARE_SWAP";
    case GSHMEMI_AMO_ADD: return "ADD";
    case GSHMEMI_AMO_AND: return "AND";
    case GSHMEMI_AMO_OR: return "OR";
    case GSHMEMI_AMO_XOR: return "XOR";
    }
    return "?";
}

/* The three targets of one aligned word at `base`: 4 bytes low, 4 bytes high, 8 bytes. */
struct lane {
    unsigned width, delta, shift;
};
static const struct lane lanes[] = {{4, 0, 0}, {4, 4, 32}, {8, 0, 0}};

static int expected_kind(int op, const struct lane *l)
{
    if (op == GSHMEMI_AMO_FETCH) return GSHMEMI_IBV_AMO_FADD;
    if (op == GSHMEMI_AMO_ADD && (l->width == 8 || l->shift == 32)) return GSHMEMI_IBV_AMO_FADD;
    if (op == GSHMEMI_AMO_COMPARE_SWAP && l->width == 8) return GSHMEMI_IBV_AMO_CAS;
    return GSHMEMI_IBV_AMO_LOOP;
}

TestSuite(ibv_amo, .timeout = 60);

Test(ibv_amo, plan_for_every_op_width_and_lane)
{
    const uint64_t operand = 0xfedcba9876543210ull, compare = 0x0123456789abcdefull;
    static const size_t bases[] = {0, 8, 0x1238, (size_t)1 << 40};
    for (size_t bi = 0; bi < sizeof(bases) / sizeof(bases[0]); bi++)
        for (int o = 0; o < NOPS; o++)
            for (int li = 0; li < 3; li++) {
                const struct lane *l = &lanes[li];
                struct gshmemi_amo amo = {.op = all_ops[o], .width = l->width, .offset = bases[bi] + l->delta,
                                          .operand = operand, .compare = compare};
                struct gshmemi_ibv_amo_plan p;
                memset(&p, 0xa5, sizeof(p));
                const char *on = op_name(all_ops[o]);
                cr_assert_eq(gshmemi_ibv_amo_plan(&amo, &p), 0, "%s width %u offset %zu", on, l->width, amo.offset);
                cr_expect_eq(p.kind, expected_kind(all_ops[o], l), "%s width %u shift %u: kind %d", on, l->width,
                             l->shift, p.kind);
                cr_expect_eq(p.word_offset, bases[bi], "%s width %u offset %zu", on, l->width, amo.offset);
                cr_expect_eq(p.shift, l->shift, "%s width %u offset %zu", on, l->width, amo.offset);
                if (p.kind == GSHMEMI_IBV_AMO_FADD) {
                    uint64_t want = all_ops[o] == GSHMEMI_AMO_FETCH ? 0 : operand << l->shift;
                    cr_expect_eq(p.add, want, "%s width %u shift %u: addend 0x%llx", on, l->width, l->shift,
                                 (unsigned long long)p.add);
                } else if (p.kind == GSHMEMI_IBV_AMO_CAS) {
                    cr_expect_eq(p.compare, compare);
                    cr_expect_eq(p.swap, operand);
                }
            }
    /* the high-lane ADD addend: the operand's upper half drops out, its lower half moves up */
    struct gshmemi_amo hi = {.op = GSHMEMI_AMO_ADD, .width = 4, .offset = 12, .operand = 0xffffffff00000005ull};
    struct gshmemi_ibv_amo_plan p;
    cr_assert_eq(gshmemi_ibv_amo_plan(&hi, &p), 0);
    cr_expect_eq(p.kind, GSHMEMI_IBV_AMO_FADD);
    cr_expect_eq(p.word_offset, 8u);
    cr_expect_eq(p.add, 0x0000000500000000ull);
}

Test(ibv_amo, misaligned_offsets_and_odd_widths_are_refused)
{
    static const struct {
        unsigned width;
        size_t offset;
    } bad[] = {{4, 1}, {4, 2}, {4, 3}, {4, 6}, {4, 4097}, {8, 1}, {8, 4}, {8, 12}, {8, 7},
               {2, 0}, {2, 2}, {1, 0}, {16, 0}, {0, 0}, {3, 0}, {12, 0}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gshmemi_amo amo = {.op = GSHMEMI_AMO_ADD, .width = bad[i].width, .offset = bad[i].offset, .operand = 1};
        struct gshmemi_ibv_amo_plan p;
        memset(&p, 0xa5, sizeof(p));
        cr_expect_eq(gshmemi_ibv_amo_plan(&amo, &p), -1, "width %u at offset %zu", bad[i].width, bad[i].offset);
    }
}

/* A remote heap of three 64-bit words, and the HCA's two native atomics on it. A
 * "racing PE" may overwrite the target word just before any of the next `races`
 * atomics; `linear` then holds the heap as the op must see it. */
struct fake_heap {
    unsigned char mem[24];
    unsigned char linear[24];
    int races;
    int atomics;
};

static uint64_t heap_load(struct fake_heap *h, uint64_t off)
{
    uint64_t w;
    memcpy(&w, h->mem + off, 8);
    return w;
}
static void heap_store(struct fake_heap *h, uint64_t off, uint64_t w) { memcpy(h->mem + off, &w, 8); }

static void heap_race(struct fake_heap *h, uint64_t off)
{
    h->atomics++;
    if (h->races > 0) {
        h->races--;
        heap_store(h, off, rng());
        memcpy(h->linear, h->mem, sizeof(h->mem));
    }
}

static uint64_t fake_fadd(struct fake_heap *h, uint64_t off, uint64_t add)
{
    heap_race(h, off);
    uint64_t old = heap_load(h, off);
    heap_store(h, off, old + add);
    return old;
}

static uint64_t fake_cas(struct fake_heap *h, uint64_t off, uint64_t compare, uint64_t swap)
{
    heap_race(h, off);
    uint64_t old = heap_load(h, off);
    if (old == compare) heap_store(h, off, swap);
    return old;
}

/* ibv_amo_locked (src/transport/ibv_ops.c) with ibv_atomic replaced by the fakes. */
static int drive(struct fake_heap *h, const struct gshmemi_amo *amo, uint64_t *fetched)
{
    struct gshmemi_ibv_amo_plan plan;
    if (gshmemi_ibv_amo_plan(amo, &plan) != 0) return -1;
    uint64_t word = 0, next;
    if (plan.kind != GSHMEMI_IBV_AMO_LOOP) {
        word = plan.kind == GSHMEMI_IBV_AMO_FADD ? fake_fadd(h, plan.word_offset, plan.add)
                                                 : fake_cas(h, plan.word_offset, plan.compare, plan.swap);
        if (fetched) *fetched = gshmemi_ibv_amo_fetched(amo, plan.shift, word);
        return 0;
    }
    /* compare-swap loop: guess the word, learn its value from each failed attempt */
    int known = 0;
    for (;;) {
        if (!gshmemi_ibv_amo_next(amo, plan.shift, word, &next)) {
            if (known) break;
            next = word; /* a FETCH or failing compare on a guess: confirm the value */
        }
        uint64_t old = fake_cas(h, plan.word_offset, word, next);
        if (old == word) break;
        word = old, known = 1;
        cr_assert(h->atomics < 1000, "the compare-swap loop does not end");
    }
    if (fetched) *fetched = gshmemi_ibv_amo_fetched(amo, plan.shift, word);
    return 0;
}

/* The OpenSHMEM atomic in plain C on the heap's memory; returns the old value. */
static uint64_t reference(unsigned char *mem, const struct gshmemi_amo *amo)
{
    if (amo->width == 4) {
        uint32_t v, old, x = (uint32_t)amo->operand;
        memcpy(&v, mem + amo->offset, 4);
        old = v;
        switch (amo->op) {
        case GSHMEMI_AMO_FETCH: break;
        case GSHMEMI_AMO_SET:
        case GSHMEMI_AMO_SWAP: v = x; break;
        case GSHMEMI_AMO_COMPARE_SWAP: v = old == (uint32_t)amo->compare ? x : old; break;
        case GSHMEMI_AMO_ADD: v = old + x; break;
        case GSHMEMI_AMO_AND: v = old & x; break;
        case GSHMEMI_AMO_OR: v = old | x; break;
        case GSHMEMI_AMO_XOR: v = old ^ x; break;
        }
        memcpy(mem + amo->offset, &v, 4);
        return old;
    }
    uint64_t v, old, x = amo->operand;
    memcpy(&v, mem + amo->offset, 8);
    old = v;
    switch (amo->op) {
    case GSHMEMI_AMO_FETCH: break;
    case GSHMEMI_AMO_SET:
    case GSHMEMI_AMO_SWAP: v = x; break;
    case GSHMEMI_AMO_COMPARE_SWAP: v = old == amo->compare ? x : old; break;
    case GSHMEMI_AMO_ADD: v = old + x; break;
    case GSHMEMI_AMO_AND: v = old & x; break;
    case GSHMEMI_AMO_OR: v = old | x; break;
    case GSHMEMI_AMO_XOR: v = old ^ x; break;
    }
    memcpy(mem + amo->offset, &v, 8);
    return old;
}

static int little_endian_host(void)
{
    uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Runs amo on a heap holding init (racing `races` times), checks it against the
 * reference: every byte of the heap, the untouched lane, the fetched value. */
static void check_amo(const unsigned char init[24], const struct gshmemi_amo *amo, int races, const char *what)
{
    struct fake_heap h = {.races = races};
    memcpy(h.mem, init, 24);
    memcpy(h.linear, init, 24);
    uint64_t fetched = 0xdeadbeefdeadbeefull;
    cr_assert_eq(drive(&h, amo, &fetched), 0, "%s", what);
    unsigned char want[24];
    memcpy(want, h.linear, 24);
    uint64_t old = reference(want, amo);
    for (int i = 0; i < 24; i++)
        cr_assert_eq(h.mem[i], want[i], "%s: byte %d is 0x%02x, want 0x%02x (word 0x%016llx)", what, i, h.mem[i],
                     want[i], (unsigned long long)heap_load(&h, amo->offset & ~(size_t)7));
    if (amo->width == 4) { /* said twice: the other lane of the word keeps its value */
        size_t other = amo->offset ^ 4;
        cr_assert_eq(memcmp(h.mem + other, h.linear + other, 4), 0, "%s: the other lane changed", what);
    }
    cr_assert_eq(fetched, old, "%s: fetched 0x%llx, the old value was 0x%llx", what, (unsigned long long)fetched,
                 (unsigned long long)old);
    if (!races) {
        struct gshmemi_ibv_amo_plan p;
        gshmemi_ibv_amo_plan(amo, &p);
        cr_assert(h.atomics <= (p.kind == GSHMEMI_IBV_AMO_LOOP ? 2 : 1), "%s: %d atomics", what, h.atomics);
    }
}

static uint64_t interesting(void)
{
    static const uint64_t v[] = {0,
                                 ~0ull,
                                 0x00000000ffffffffull,
                                 0xffffffff00000000ull,
                                 0x7fffffff7fffffffull,
                                 0x8000000080000000ull,
                                 0x00000001ffffffffull,
                                 0xffffffff00000001ull,
                                 1,
                                 0x0000000100000000ull};
    return rng() % 3 ? rng() : v[rng() % (sizeof(v) / sizeof(v[0]))];
}

Test(ibv_amo, simulated_plans_match_plain_atomics)
{
    if (!little_endian_host()) cr_skip_test("the lanes are laid out for little-endian hosts");
    rng_seed(0x1b5eed04);
    char what[200];
    for (int round = 0; round < 4000; round++)
        for (int o = 0; o < NOPS; o++)
            for (int li = 0; li < 3; li++) {
                unsigned char init[24];
                for (int i = 0; i < 24; i += 8) {
                    uint64_t w = interesting();
                    memcpy(init + i, &w, 8);
                }
                const struct lane *l = &lanes[li];
                size_t base = 8 * (size_t)(rng() % 3);
                struct gshmemi_amo amo = {.op = all_ops[o], .width = l->width, .offset = base + l->delta,
                                          .operand = interesting(), .compare = interesting()};
                if (rng() % 2) { /* a compare that matches (with junk above a 4-byte lane) */
                    uint64_t cur;
                    memcpy(&cur, init + base, 8);
                    amo.compare = l->width == 8 ? cur : (cur >> l->shift & 0xffffffffu) | (rng() << 32);
                }
                int races = round % 4 == 3 ? (int)(rng() % 4) : 0;
                snprintf(what, sizeof(what), "round %d: %s width %u at offset %zu, operand 0x%llx compare 0x%llx%s",
                         round, op_name(amo.op), amo.width, amo.offset, (unsigned long long)amo.operand,
                         (unsigned long long)amo.compare, races ? " (racing)" : "");
                check_amo(init, &amo, races, what);
            }
}

static void check_word(uint64_t init, int op, unsigned width, unsigned lane_off, uint64_t operand, uint64_t compare,
                       uint64_t want_word, uint64_t want_fetched, int want_kind, const char *what)
{
    unsigned char mem[24];
    memset(mem, 0x3c, sizeof(mem));
    memcpy(mem + 8, &init, 8);
    struct gshmemi_amo amo = {.op = op, .width = width, .offset = 8 + lane_off, .operand = operand, .compare = compare};
    struct gshmemi_ibv_amo_plan p;
    cr_assert_eq(gshmemi_ibv_amo_plan(&amo, &p), 0);
    cr_expect_eq(p.kind, want_kind, "%s: kind %d", what, p.kind);
    struct fake_heap h = {.races = 0};
    memcpy(h.mem, mem, 24);
    uint64_t fetched;
    cr_assert_eq(drive(&h, &amo, &fetched), 0);
    cr_expect_eq(heap_load(&h, 8), want_word, "%s: word 0x%016llx, want 0x%016llx", what,
                 (unsigned long long)heap_load(&h, 8), (unsigned long long)want_word);
    cr_expect_eq(fetched, want_fetched, "%s: fetched 0x%llx", what, (unsigned long long)fetched);
    for (int i = 0; i < 8; i++)
        cr_expect(h.mem[i] == 0x3c && h.mem[16 + i] == 0x3c, "%s: the neighbouring words", what);
    check_amo(mem, &amo, 0, what);
}

Test(ibv_amo, carries_stay_in_their_lane)
{
    if (!little_endian_host()) cr_skip_test("the lanes are laid out for little-endian hosts");
    check_word(0xffffffff12345678ull, GSHMEMI_AMO_ADD, 4, 4, 1, 0, 0x0000000012345678ull, 0xffffffffu,
               GSHMEMI_IBV_AMO_FADD, "high lane 0xffffffff + 1 wraps to 0, carry out of the word");
    check_word(0xfffffff0ffffffffull, GSHMEMI_AMO_ADD, 4, 4, 0x20, 0, 0x00000010ffffffffull, 0xfffffff0u,
               GSHMEMI_IBV_AMO_FADD, "high lane wraps past a full low lane");
    check_word(0xabcdef01ffffffffull, GSHMEMI_AMO_ADD, 4, 0, 1, 0, 0xabcdef0100000000ull, 0xffffffffu,
               GSHMEMI_IBV_AMO_LOOP, "low lane 0xffffffff + 1 does not carry into the high lane");
    check_word(0xabcdef0180000000ull, GSHMEMI_AMO_ADD, 4, 0, 0xffffffff80000001ull, 0, 0xabcdef0100000001ull,
               0x80000000u, GSHMEMI_IBV_AMO_LOOP, "low lane ADD with junk above the 32-bit operand");
    check_word(0xffffffffffffffffull, GSHMEMI_AMO_ADD, 8, 0, 1, 0, 0, ~0ull, GSHMEMI_IBV_AMO_FADD,
               "8-byte ADD wraps");
    check_word(0x1111111122222222ull, GSHMEMI_AMO_ADD, 4, 4, (uint64_t)-1, 0, 0x1111111022222222ull, 0x11111111u,
               GSHMEMI_IBV_AMO_FADD, "high lane ADD -1 (sign-extended) subtracts one from the lane only");
    check_word(0x1111111122222222ull, GSHMEMI_AMO_COMPARE_SWAP, 4, 0, 0x99, 0x22222223, 0x1111111122222222ull,
               0x22222222u, GSHMEMI_IBV_AMO_LOOP, "low lane compare fails: nothing changes");
    check_word(0x1111111122222222ull, GSHMEMI_AMO_COMPARE_SWAP, 4, 4, 0x99, 0x11111111, 0x0000009922222222ull,
               0x11111111u, GSHMEMI_IBV_AMO_LOOP, "high lane compare matches");
    check_word(0x1111111122222222ull, GSHMEMI_AMO_COMPARE_SWAP, 8, 0, 7, 0x1111111122222222ull, 7,
               0x1111111122222222ull, GSHMEMI_IBV_AMO_CAS, "8-byte compare matches");
    check_word(0x1111111122222222ull, GSHMEMI_AMO_FETCH, 4, 4, 0x55, 0, 0x1111111122222222ull, 0x11111111u,
               GSHMEMI_IBV_AMO_FADD, "high lane FETCH");
    check_word(0, GSHMEMI_AMO_SET, 4, 4, 0xcafef00d, 0, 0xcafef00d00000000ull, 0, GSHMEMI_IBV_AMO_LOOP,
               "high lane SET on a zero word (the loop's first guess is right)");
}
