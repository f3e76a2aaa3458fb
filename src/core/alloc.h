/*
 * The symmetric allocator: manages offsets in the heap, never touches heap memory
 * (so it serves the device heap too). Deterministic: the same sequence of calls gives
 * the same offsets on every PE. Two-level segregated free lists with bitmaps give O(1)
 * allocation and free; neighbours coalesce on free.
 */
#ifndef GSHMEMI_ALLOC_H
#define GSHMEMI_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#define GSHMEMI_ALLOC_GRANULE ((size_t)64)
#define GSHMEMI_ALLOC_SL_LOG2 4
#define GSHMEMI_ALLOC_SL_COUNT (1 << GSHMEMI_ALLOC_SL_LOG2)
#define GSHMEMI_ALLOC_FL_COUNT 48

struct gshmemi_alloc_block;

struct gshmemi_alloc {
    size_t base;  /* first managed offset */
    size_t size;  /* managed bytes */
    size_t used;  /* bytes in allocated blocks */
    uint64_t fl_bitmap;
    uint32_t sl_bitmap[GSHMEMI_ALLOC_FL_COUNT];
    struct gshmemi_alloc_block *free_lists[GSHMEMI_ALLOC_FL_COUNT][GSHMEMI_ALLOC_SL_COUNT];
    struct gshmemi_alloc_block **buckets; /* allocated blocks by offset */
    size_t nbuckets;
    size_t nallocated;
    struct gshmemi_alloc_block *first;    /* lowest offset, for walks and teardown */
};

/* base and size must be multiples of GSHMEMI_ALLOC_GRANULE; size > 0. */
int gshmemi_alloc_init(struct gshmemi_alloc *a, size_t base, size_t size);
void gshmemi_alloc_fini(struct gshmemi_alloc *a);
/* alignment: power of two (0 means the granule). GSHMEMX_ERR_NOMEM when nothing fits,
 * GSHMEMX_ERR_INVALID_ARG for size 0 or a bad alignment. */
int gshmemi_alloc_alloc(struct gshmemi_alloc *a, size_t size, size_t alignment, size_t *offset);
/* GSHMEMX_ERR_INVALID_ARG when offset is not the start of an allocated block. */
int gshmemi_alloc_free(struct gshmemi_alloc *a, size_t offset);
/* Usable bytes of the allocated block at offset, or 0 when there is none. */
size_t gshmemi_alloc_block_size(const struct gshmemi_alloc *a, size_t offset);
/* Grows or shrinks the block at offset in place when its neighbour allows;
 * GSHMEMX_ERR_NOMEM when it cannot (the block is then unchanged). */
int gshmemi_alloc_resize(struct gshmemi_alloc *a, size_t offset, size_t new_size);
size_t gshmemi_alloc_free_bytes(const struct gshmemi_alloc *a);
size_t gshmemi_alloc_largest_free(const struct gshmemi_alloc *a);

#endif
