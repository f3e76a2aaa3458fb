/*
 * Symmetric heap allocation: identical heap offsets on every PE (gathered on PE 0),
 * malloc alignment and gshmem_align up to 2 MiB, calloc zeroes reused memory,
 * realloc keeps content when it grows and shrinks, thousands of alloc/free cycles
 * with overlap and corruption checks, oversized requests return NULL and leave the
 * allocator usable, and the whole heap is reusable after everything is freed.
 * Needs GSHMEM_SYMMETRIC_SIZE >= 16M.
 */
#include "mp_check.h"

#define NADDR 64    /* addresses compared per gather */
#define LIVE 32     /* blocks alive at once in the cycle test */
#define CYCLES 3000

static int g_me, g_npes;
static uint64_t *g_addr_table; /* symmetric: NADDR per PE, meaningful on PE 0 */

/* Heap size as configured (GSHMEM_SYMMETRIC_SIZE, default 256M). */
static size_t heap_size(void)
{
    const char *text = getenv("GSHMEM_SYMMETRIC_SIZE");
    if (!text || !*text) return (size_t)256 << 20;
    char *end;
    size_t v = (size_t)strtoull(text, &end, 10);
    switch (*end) {
    case 'k': case 'K': return v << 10;
    case 'm': case 'M': return v << 20;
    case 'g': case 'G': return v << 30;
    default: return v;
    }
}

/*
 * Every PE sends the offsets of its blocks from the first symmetric allocation (the
 * gather table) to PE 0, which compares them with its own: the heap may sit at a
 * different address in each process, but every allocation has the same offset.
 */
static void check_same_offsets(void *const *ptrs, size_t n, const char *what)
{
    uint64_t mine[NADDR] = {0};
    CHECK(n <= NADDR, "too many addresses");
    for (size_t i = 0; i < n; i++) mine[i] = (uint64_t)((uintptr_t)ptrs[i] - (uintptr_t)g_addr_table);
    gshmem_barrier_all();
    gshmem_putmem(&g_addr_table[(size_t)g_me * NADDR], mine, sizeof mine, 0);
    gshmem_barrier_all();
    if (g_me == 0) {
        for (int pe = 1; pe < g_npes; pe++)
            for (size_t i = 0; i < n; i++)
                CHECK(g_addr_table[(size_t)pe * NADDR + i] == mine[i],
                      "%s: allocation %zu is at heap offset 0x%llx on pe %d but 0x%llx on pe 0", what, i,
                      (unsigned long long)g_addr_table[(size_t)pe * NADDR + i], pe,
                      (unsigned long long)mine[i]);
    }
    gshmem_barrier_all();
}

static void test_malloc_basic(void)
{
    static const size_t sizes[] = {1, 7, 16, 100, 4096, 4097, 65536, 1 << 20};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    void *p[NS];
    for (size_t i = 0; i < NS; i++) {
        p[i] = gshmem_malloc(sizes[i]);
        CHECK(p[i] != NULL, "gshmem_malloc(%zu) failed", sizes[i]);
        CHECK((uintptr_t)p[i] % 16 == 0, "gshmem_malloc(%zu) = %p not 16-byte aligned", sizes[i], p[i]);
        for (size_t j = 0; j < i; j++) {
            uintptr_t a = (uintptr_t)p[i], b = (uintptr_t)p[j];
            CHECK(a + sizes[i] <= b || b + sizes[j] <= a, "blocks %zu and %zu overlap", i, j);
        }
    }
    check_same_offsets(p, NS, "gshmem_malloc");

    /* the blocks are usable for RMA: fill the peer's copy of each and read it back */
    int to = (g_me + 1) % g_npes, from = (g_me + g_npes - 1) % g_npes;
    for (size_t i = 0; i < NS; i++) {
        unsigned char *src = malloc(sizes[i]);
        CHECK(src != NULL, "malloc");
        mp_fill_bytes(src, sizes[i], g_me, to, i);
        gshmem_putmem(p[i], src, sizes[i], to);
        free(src);
    }
    gshmem_barrier_all();
    for (size_t i = 0; i < NS; i++) CHECK_BYTES(p[i], sizes[i], from, g_me, i, "put into a gshmem_malloc block");
    gshmem_barrier_all();
    for (size_t i = NS; i-- > 0;) gshmem_free(p[i]);

    CHECK(gshmem_malloc(0) == NULL, "gshmem_malloc(0) is not NULL");
    gshmem_free(NULL);
}

static void test_align(void)
{
    void *p[NADDR];
    size_t n = 0;
    for (size_t align = 1; align <= ((size_t)2 << 20); align <<= 1) {
        size_t size = align / 2 + 24;
        p[n] = gshmem_align(align, size);
        CHECK(p[n] != NULL, "gshmem_align(%zu, %zu) failed", align, size);
        CHECK((uintptr_t)p[n] % align == 0, "gshmem_align(%zu) = %p", align, p[n]);
        memset(p[n], (int)n, size);
        n++;
    }
    check_same_offsets(p, n, "gshmem_align");
    for (size_t i = 0; i < n; i++) {
        size_t size = ((size_t)1 << i) / 2 + 24;
        const unsigned char *b = p[i];
        CHECK(b[0] == (unsigned char)i && b[size - 1] == (unsigned char)i, "aligned block %zu overwritten", i);
    }
    gshmem_barrier_all();
    for (size_t i = 0; i < n; i++) gshmem_free(p[i]);
}

static void test_calloc(void)
{
    const size_t count = 3000, size = 24, bytes = count * size;
    unsigned char *dirty = gshmem_malloc(bytes);
    CHECK(dirty != NULL, "gshmem_malloc");
    memset(dirty, 0xff, bytes);
    gshmem_barrier_all();
    gshmem_free(dirty);
    unsigned char *z = gshmem_calloc(count, size);
    CHECK(z != NULL, "gshmem_calloc(%zu, %zu) failed", count, size);
    for (size_t k = 0; k < bytes; k++) CHECK(z[k] == 0, "gshmem_calloc byte %zu is 0x%02x", k, z[k]);
    void *same = z;
    check_same_offsets(&same, 1, "gshmem_calloc");
    gshmem_free(z);
    CHECK(gshmem_calloc(SIZE_MAX / 2, 4) == NULL, "gshmem_calloc with an overflowing size is not NULL");
    CHECK(gshmem_calloc(0, 8) == NULL, "gshmem_calloc(0, 8) is not NULL");
}

static void test_realloc(void)
{
    const size_t small = 1000, big = (size_t)1 << 20, shrunk = 100;
    unsigned char *a = gshmem_malloc(small);
    void *blocker = gshmem_malloc(64); /* likely forces the growth to move */
    CHECK(a && blocker, "gshmem_malloc");
    mp_fill_bytes(a, small, g_me, g_me, 41);
    unsigned char *b = gshmem_realloc(a, big);
    CHECK(b != NULL, "gshmem_realloc(%zu -> %zu) failed", small, big);
    CHECK_BYTES(b, small, g_me, g_me, 41, "content kept by growing gshmem_realloc");
    void *addr[2] = {b, blocker};
    check_same_offsets(addr, 2, "gshmem_realloc");
    /* the grown block is usable end to end through RMA */
    int to = (g_me + 1) % g_npes, from = (g_me + g_npes - 1) % g_npes;
    unsigned char *src = malloc(big);
    CHECK(src != NULL, "malloc");
    mp_fill_bytes(src, big, g_me, to, 42);
    gshmem_barrier_all();
    gshmem_putmem(b, src, big, to);
    gshmem_barrier_all();
    CHECK_BYTES(b, big, from, g_me, 42, "put into a reallocated block");
    free(src);
    unsigned char *c = gshmem_realloc(b, shrunk);
    CHECK(c != NULL, "gshmem_realloc shrink failed");
    CHECK_BYTES(c, shrunk, from, g_me, 42, "content kept by shrinking gshmem_realloc");
    void *d = gshmem_realloc(NULL, 256);
    CHECK(d != NULL, "gshmem_realloc(NULL, 256) failed");
    void *addr2[2] = {c, d};
    check_same_offsets(addr2, 2, "gshmem_realloc shrink and from NULL");
    gshmem_free(d);
    gshmem_free(c);
    gshmem_free(blocker);
}

/* Deterministic pseudo-random sequence, identical on every PE. */
static uint64_t next_rand(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

struct block {
    unsigned char *p;
    size_t size;
    uint64_t tag;
};

static void tag_block(const struct block *b)
{
    memcpy(b->p, &b->tag, sizeof b->tag);
    memcpy(b->p + b->size - sizeof b->tag, &b->tag, sizeof b->tag);
}

static void check_tag(const struct block *b)
{
    uint64_t head, tail;
    memcpy(&head, b->p, sizeof head);
    memcpy(&tail, b->p + b->size - sizeof tail, sizeof tail);
    CHECK(head == b->tag && tail == b->tag, "block %p (%zu bytes, tag %llu) corrupted: head %llu tail %llu",
          (void *)b->p, b->size, (unsigned long long)b->tag, (unsigned long long)head, (unsigned long long)tail);
}

static void test_cycles(void)
{
    struct block live[LIVE] = {{0}};
    uint64_t rng = 12345, addr_hash = 0;
    for (int it = 0; it < CYCLES; it++) {
        struct block *b = &live[next_rand(&rng) % LIVE];
        if (b->p) {
            check_tag(b);
            gshmem_free(b->p);
            b->p = NULL;
            continue;
        }
        uint64_t r = next_rand(&rng);
        b->size = 16 + (size_t)(r % (r % 8 == 0 ? 128 * 1024 : 2048));
        b->tag = (uint64_t)it + 1;
        switch (r % 3) {
        case 0: b->p = gshmem_malloc(b->size); break;
        case 1: b->p = gshmem_calloc(1, b->size); break;
        default: b->p = gshmem_align((size_t)64 << (r % 6), b->size); break;
        }
        CHECK(b->p != NULL, "cycle %d: allocation of %zu bytes failed", it, b->size);
        for (int j = 0; j < LIVE; j++) {
            const struct block *o = &live[j];
            if (o == b || !o->p) continue;
            CHECK(b->p + b->size <= o->p || o->p + o->size <= b->p,
                  "cycle %d: new block %p+%zu overlaps live block %p+%zu", it, (void *)b->p, b->size,
                  (void *)o->p, o->size);
        }
        tag_block(b);
        addr_hash = mp_mix(addr_hash, (uint64_t)((uintptr_t)b->p - (uintptr_t)g_addr_table), b->size, 0);
        if (it % 500 == 499) {
            void *h = (void *)((uintptr_t)g_addr_table + (uintptr_t)addr_hash);
            check_same_offsets(&h, 1, "alloc/free cycles (hash of every offset so far)");
        }
    }
    for (int j = 0; j < LIVE; j++) {
        if (live[j].p) {
            check_tag(&live[j]);
            gshmem_free(live[j].p);
        }
    }
}

/* The calls that perform no action: each returns NULL (or nothing) at once. */
static void no_action_calls(void)
{
    CHECK(gshmem_malloc(0) == NULL, "gshmem_malloc(0) is not NULL");
    CHECK(gshmem_calloc(0, 8) == NULL, "gshmem_calloc(0, 8) is not NULL");
    CHECK(gshmem_calloc(8, 0) == NULL, "gshmem_calloc(8, 0) is not NULL");
    CHECK(gshmem_align(64, 0) == NULL, "gshmem_align(64, 0) is not NULL");
    CHECK(gshmem_realloc(NULL, 0) == NULL, "gshmem_realloc(NULL, 0) is not NULL");
    gshmem_free(NULL);
}

/* OpenSHMEM: "when no action is performed, these routines return without performing a
 * barrier". PE 0 makes every such call first, then releases the others through a flag,
 * and only then do they make the same calls: a barrier in any call would wait for PEs
 * that wait for PE 0, until GSHMEM_TIMEOUT ends the job. */
static void test_no_action_no_barrier(void)
{
    int *flag = gshmem_calloc(1, sizeof(int));
    CHECK(flag != NULL, "gshmem_calloc");
    if (g_me == 0) {
        no_action_calls();
        for (int pe = 1; pe < g_npes; pe++) gshmem_int_atomic_set(flag, 1, pe);
    } else {
        gshmem_int_wait_until(flag, GSHMEM_CMP_EQ, 1);
        no_action_calls();
    }
    gshmem_barrier_all();
    gshmem_free(flag);
}

static void test_oversized(void)
{
    /* the usable heap may exceed the configured size by up to a (huge)page of rounding */
    size_t heap = heap_size(), beyond = heap + ((size_t)4 << 20);
    CHECK(gshmem_malloc(beyond) == NULL, "gshmem_malloc(heap size + 4 MiB = %zu) is not NULL", beyond);
    CHECK(gshmem_malloc((size_t)1 << 50) == NULL, "gshmem_malloc(1 PiB) is not NULL");
    CHECK(gshmem_malloc(SIZE_MAX) == NULL, "gshmem_malloc(SIZE_MAX) is not NULL");
    CHECK(gshmem_align((size_t)1 << 20, beyond) == NULL, "gshmem_align(1 MiB, heap size + 4 MiB) is not NULL");
    void *p = gshmem_malloc(64);
    CHECK(p != NULL, "gshmem_malloc(64) failed after oversized requests");
    void *q = gshmem_realloc(p, SIZE_MAX / 2);
    CHECK(q == NULL, "oversized gshmem_realloc is not NULL");
    gshmem_free(p); /* a failed realloc leaves the block allocated */

    /* nothing leaked or fragmented beyond use: most of the heap is one block again */
    size_t most = heap / 4 * 3;
    void *whole = gshmem_malloc(most);
    CHECK(whole != NULL, "gshmem_malloc(%zu) failed after every block was freed (heap %zu)", most, heap);
    memset(whole, 0x3c, most);
    gshmem_barrier_all();
    gshmem_free(whole);
}

int main(void)
{
    gshmem_init();
    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();
    CHECK(heap_size() >= ((size_t)16 << 20), "run with GSHMEM_SYMMETRIC_SIZE of 16M or more");
    g_addr_table = gshmem_malloc(sizeof(uint64_t) * NADDR * (size_t)g_npes);
    CHECK(g_addr_table != NULL, "symmetric allocation failed");

    test_malloc_basic();
    test_align();
    test_calloc();
    test_realloc();
    test_cycles();
    test_oversized();
    test_no_action_no_barrier();

    gshmem_barrier_all();
    gshmem_free(g_addr_table);
    if (g_me == 0) printf("mp_alloc: %d PEs OK\n", g_npes);
    gshmem_finalize();
    return 0;
}
