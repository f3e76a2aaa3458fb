/* Symmetric allocator: two-level segregated fit over out-of-band block records. */
#include "core/alloc.h"

#include <gshmem/status.h>

#include <stdlib.h>
#include <string.h>

struct gshmemi_alloc_block {
    size_t off;
    size_t size;
    int is_free;
    struct gshmemi_alloc_block *phys_prev, *phys_next;
    struct gshmemi_alloc_block *free_prev, *free_next;
    struct gshmemi_alloc_block *hash_next;
};

typedef struct gshmemi_alloc_block block_t;

#define ALLOC_CLASS_SCAN_MAX 64

static unsigned alloc_log2(uint64_t v)
{
    return 63u - (unsigned)__builtin_clzll(v);
}

/* Class of a block of `units` granules (rounding down). */
static void alloc_mapping(size_t units, unsigned *fl, unsigned *sl)
{
    if (units < GSHMEMI_ALLOC_SL_COUNT) {
        *fl = 0;
        *sl = (unsigned)units;
        return;
    }
    unsigned f = alloc_log2(units);
    *fl = f - GSHMEMI_ALLOC_SL_LOG2 + 1;
    *sl = (unsigned)(units >> (f - GSHMEMI_ALLOC_SL_LOG2)) - GSHMEMI_ALLOC_SL_COUNT;
}

/* Class whose every block holds at least `units` granules. */
static void alloc_mapping_search(size_t units, unsigned *fl, unsigned *sl)
{
    if (units >= GSHMEMI_ALLOC_SL_COUNT) units += ((size_t)1 << (alloc_log2(units) - GSHMEMI_ALLOC_SL_LOG2)) - 1;
    alloc_mapping(units, fl, sl);
}

static void alloc_free_insert(struct gshmemi_alloc *a, block_t *b)
{
    unsigned fl, sl;
    alloc_mapping(b->size / GSHMEMI_ALLOC_GRANULE, &fl, &sl);
    b->is_free = 1;
    b->free_prev = NULL;
    b->free_next = a->free_lists[fl][sl];
    if (b->free_next) b->free_next->free_prev = b;
    a->free_lists[fl][sl] = b;
    a->fl_bitmap |= 1ull << fl;
    a->sl_bitmap[fl] |= 1u << sl;
}

static void alloc_free_remove(struct gshmemi_alloc *a, block_t *b)
{
    unsigned fl, sl;
    alloc_mapping(b->size / GSHMEMI_ALLOC_GRANULE, &fl, &sl);
    if (b->free_prev) b->free_prev->free_next = b->free_next;
    else a->free_lists[fl][sl] = b->free_next;
    if (b->free_next) b->free_next->free_prev = b->free_prev;
    if (!a->free_lists[fl][sl]) {
        a->sl_bitmap[fl] &= ~(1u << sl);
        if (!a->sl_bitmap[fl]) a->fl_bitmap &= ~(1ull << fl);
    }
    b->is_free = 0;
}

static block_t *alloc_find_free(struct gshmemi_alloc *a, size_t bytes)
{
    size_t units = bytes / GSHMEMI_ALLOC_GRANULE;
    unsigned fl, sl;
    alloc_mapping_search(units, &fl, &sl);
    if (fl < GSHMEMI_ALLOC_FL_COUNT) {
        uint32_t sl_map = a->sl_bitmap[fl] & (~0u << sl);
        if (!sl_map) {
            uint64_t fl_map = fl + 1 < 64 ? a->fl_bitmap & (~0ull << (fl + 1)) : 0;
            if (fl_map) {
                fl = (unsigned)__builtin_ctzll(fl_map);
                sl_map = a->sl_bitmap[fl];
            }
        }
        if (sl_map) return a->free_lists[fl][__builtin_ctz(sl_map)];
    }
    /* Only blocks in the request's own class can still fit: look at the first few of
     * that list (bounded, so every call stays O(1); a miss deeper in is NOMEM). */
    alloc_mapping(units, &fl, &sl);
    int looked = 0;
    for (block_t *b = a->free_lists[fl][sl]; b && looked < ALLOC_CLASS_SCAN_MAX; b = b->free_next, looked++)
        if (b->size >= bytes) return b;
    return NULL;
}

static size_t alloc_hash(const struct gshmemi_alloc *a, size_t off)
{
    uint64_t h = (uint64_t)(off / GSHMEMI_ALLOC_GRANULE) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (a->nbuckets - 1);
}

static int alloc_hash_grow(struct gshmemi_alloc *a)
{
    size_t old_n = a->nbuckets;
    block_t **old = a->buckets;
    block_t **fresh = calloc(old_n * 2, sizeof(*fresh));
    if (!fresh) return GSHMEMX_ERR_NOMEM;
    a->buckets = fresh;
    a->nbuckets = old_n * 2;
    for (size_t i = 0; i < old_n; i++) {
        for (block_t *b = old[i], *next; b; b = next) {
            next = b->hash_next;
            size_t h = alloc_hash(a, b->off);
            b->hash_next = a->buckets[h];
            a->buckets[h] = b;
        }
    }
    free(old);
    return 0;
}

/* Makes room for one more live block, before any block is taken. */
static int alloc_hash_reserve(struct gshmemi_alloc *a)
{
    return a->nallocated >= a->nbuckets ? alloc_hash_grow(a) : 0;
}

static void alloc_hash_insert(struct gshmemi_alloc *a, block_t *b)
{
    size_t h = alloc_hash(a, b->off);
    b->hash_next = a->buckets[h];
    a->buckets[h] = b;
    a->nallocated++;
}

static block_t **alloc_hash_slot(const struct gshmemi_alloc *a, size_t off)
{
    block_t **slot = &a->buckets[alloc_hash(a, off)];
    while (*slot && (*slot)->off != off) slot = &(*slot)->hash_next;
    return slot;
}

/* Splits b so that it keeps `keep` bytes; the rest becomes a new block after it. */
static block_t *alloc_split(block_t *b, size_t keep)
{
    block_t *rest = calloc(1, sizeof(*rest));
    if (!rest) return NULL;
    rest->off = b->off + keep;
    rest->size = b->size - keep;
    rest->phys_prev = b;
    rest->phys_next = b->phys_next;
    if (b->phys_next) b->phys_next->phys_prev = rest;
    b->phys_next = rest;
    b->size = keep;
    return rest;
}

/* Absorbs b's physical successor (already out of any list) into b. */
static void alloc_absorb_next(block_t *b)
{
    block_t *next = b->phys_next;
    b->size += next->size;
    b->phys_next = next->phys_next;
    if (next->phys_next) next->phys_next->phys_prev = b;
    free(next);
}

int gshmemi_alloc_init(struct gshmemi_alloc *a, size_t base, size_t size)
{
    memset(a, 0, sizeof(*a));
    if (size == 0 || base % GSHMEMI_ALLOC_GRANULE || size % GSHMEMI_ALLOC_GRANULE) return GSHMEMX_ERR_INVALID_ARG;
    /* The class arrays cover blocks below 2^(FL_COUNT + SL_LOG2 - 1) granules. */
    if (size / GSHMEMI_ALLOC_GRANULE >= (size_t)1 << (GSHMEMI_ALLOC_FL_COUNT + GSHMEMI_ALLOC_SL_LOG2 - 1))
        return GSHMEMX_ERR_INVALID_ARG;
    a->base = base;
    a->size = size;
    a->nbuckets = 64;
    a->buckets = calloc(a->nbuckets, sizeof(*a->buckets));
    a->first = calloc(1, sizeof(*a->first));
    if (!a->buckets || !a->first) {
        gshmemi_alloc_fini(a);
        return GSHMEMX_ERR_NOMEM;
    }
    a->first->off = base;
    a->first->size = size;
    alloc_free_insert(a, a->first);
    return 0;
}

void gshmemi_alloc_fini(struct gshmemi_alloc *a)
{
    for (block_t *b = a->first, *next; b; b = next) {
        next = b->phys_next;
        free(b);
    }
    free(a->buckets);
    memset(a, 0, sizeof(*a));
}

/* Gives the front padding of a found block back as a free block; returns the aligned block. */
static block_t *alloc_take_aligned(struct gshmemi_alloc *a, block_t *b, size_t alignment)
{
    size_t pad = (alignment - b->off % alignment) % alignment;
    if (pad == 0) return b;
    block_t *aligned = alloc_split(b, pad);
    if (!aligned) return NULL;
    alloc_free_insert(a, b);
    return aligned;
}

int gshmemi_alloc_alloc(struct gshmemi_alloc *a, size_t size, size_t alignment, size_t *offset)
{
    if (alignment == 0) alignment = GSHMEMI_ALLOC_GRANULE;
    if (size == 0 || (alignment & (alignment - 1))) return GSHMEMX_ERR_INVALID_ARG;
    if (alignment < GSHMEMI_ALLOC_GRANULE) alignment = GSHMEMI_ALLOC_GRANULE;
    if (size > a->size || alignment > a->size) return GSHMEMX_ERR_NOMEM;
    size_t need = (size + GSHMEMI_ALLOC_GRANULE - 1) & ~(GSHMEMI_ALLOC_GRANULE - 1);
    size_t search = need + (alignment - GSHMEMI_ALLOC_GRANULE);
    block_t *b = alloc_find_free(a, search);
    if (!b && alignment > GSHMEMI_ALLOC_GRANULE) {
        /* A free block smaller than the search size may still hold need bytes from an
         * aligned offset: walk every block (rare: an aligned request on a heap with no
         * block of the search size), first fit. */
        for (block_t *c = a->first; c && !b; c = c->phys_next) {
            size_t pad = (alignment - c->off % alignment) % alignment;
            if (c->is_free && c->size >= need && c->size - need >= pad) b = c;
        }
    }
    if (!b || alloc_hash_reserve(a) != 0) return GSHMEMX_ERR_NOMEM;
    alloc_free_remove(a, b);
    block_t *taken = alloc_take_aligned(a, b, alignment);
    if (!taken) {
        alloc_free_insert(a, b);
        return GSHMEMX_ERR_NOMEM;
    }
    if (taken->size - need >= GSHMEMI_ALLOC_GRANULE) {
        block_t *rest = alloc_split(taken, need);
        if (rest) alloc_free_insert(a, rest);
    }
    alloc_hash_insert(a, taken);
    a->used += taken->size;
    *offset = taken->off;
    return 0;
}

int gshmemi_alloc_free(struct gshmemi_alloc *a, size_t offset)
{
    block_t **slot = alloc_hash_slot(a, offset);
    block_t *b = *slot;
    if (!b) return GSHMEMX_ERR_INVALID_ARG;
    *slot = b->hash_next;
    a->nallocated--;
    a->used -= b->size;
    if (b->phys_next && b->phys_next->is_free) {
        alloc_free_remove(a, b->phys_next);
        alloc_absorb_next(b);
    }
    if (b->phys_prev && b->phys_prev->is_free) {
        block_t *prev = b->phys_prev;
        alloc_free_remove(a, prev);
        alloc_absorb_next(prev);
        b = prev;
    }
    alloc_free_insert(a, b);
    return 0;
}

size_t gshmemi_alloc_block_size(const struct gshmemi_alloc *a, size_t offset)
{
    block_t *b = *alloc_hash_slot(a, offset);
    return b ? b->size : 0;
}

int gshmemi_alloc_resize(struct gshmemi_alloc *a, size_t offset, size_t new_size)
{
    block_t *b = *alloc_hash_slot(a, offset);
    if (!b || new_size == 0) return GSHMEMX_ERR_INVALID_ARG;
    if (new_size > a->size) return GSHMEMX_ERR_NOMEM;
    size_t need = (new_size + GSHMEMI_ALLOC_GRANULE - 1) & ~(GSHMEMI_ALLOC_GRANULE - 1);
    block_t *next = b->phys_next;
    if (need > b->size) {
        if (!next || !next->is_free || b->size + next->size < need) return GSHMEMX_ERR_NOMEM;
        alloc_free_remove(a, next);
        a->used += next->size;
        alloc_absorb_next(b);
    } else if (next && next->is_free) {
        alloc_free_remove(a, next);
        a->used += next->size;
        alloc_absorb_next(b);
    }
    if (b->size - need >= GSHMEMI_ALLOC_GRANULE) {
        block_t *rest = alloc_split(b, need);
        if (rest) {
            a->used -= rest->size;
            alloc_free_insert(a, rest);
        }
    }
    return 0;
}

size_t gshmemi_alloc_free_bytes(const struct gshmemi_alloc *a)
{
    return a->size - a->used;
}

size_t gshmemi_alloc_largest_free(const struct gshmemi_alloc *a)
{
    if (!a->fl_bitmap) return 0;
    unsigned fl = alloc_log2(a->fl_bitmap);
    unsigned sl = alloc_log2(a->sl_bitmap[fl]);
    size_t largest = 0;
    for (block_t *b = a->free_lists[fl][sl]; b; b = b->free_next)
        if (b->size > largest) largest = b->size;
    return largest;
}
