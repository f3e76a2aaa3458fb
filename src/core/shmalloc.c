/* Collective symmetric allocation: same calls, same offsets, on every PE. */
#include "core/api.h"

#include <gshmem.h>

#include <stdlib.h>
#include <string.h>

enum shmalloc_op { SHMALLOC_MALLOC = 1, SHMALLOC_CALLOC, SHMALLOC_ALIGN, SHMALLOC_REALLOC, SHMALLOC_FREE };

/* What every PE passed to a collective allocation call (GSHMEM_CHECK). */
struct shmalloc_call {
    uint64_t seq;
    uint32_t op;
    uint32_t pad;
    uint64_t size;
    uint64_t arg; /* alignment, or the offset of the block to realloc/free */
};

static const char *shmalloc_op_name(uint32_t op)
{
    static const char *const names[] = {"?", "gshmem_malloc", "gshmem_calloc", "gshmem_align", "gshmem_realloc",
                                        "gshmem_free"};
    return op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
}

/* Under GSHMEM_CHECK, compares this call with every PE's; a difference ends the job
 * with a message naming the PEs that disagree with PE 0. */
static void shmalloc_cross_check(struct gshmemi_state *st, const char *fn, uint32_t op, size_t size, uint64_t arg)
{
    struct shmalloc_call mine = {.seq = st->alloc_seq++, .op = op, .size = size, .arg = arg};
    if (!st->check_args || st->n_pes == 1) return;
    struct shmalloc_call *all = calloc((size_t)st->n_pes, sizeof(*all));
    if (!all) gshmemi_fatal(st, GSHMEMX_ERR_NOMEM);
    int rc = st->boot.ops->allgather(&st->boot, &mine, all, sizeof(mine));
    if (rc != 0) gshmemi_fatal(st, rc);
    int mismatches = 0;
    for (int pe = 1; pe < st->n_pes; pe++) {
        if (memcmp(&all[pe], &all[0], sizeof(mine)) == 0) continue;
        mismatches++;
        if (st->my_pe == 0 || st->my_pe == pe) /* PE 0 and the odd one out both say it */
            GSHMEMI_ERROR(ALLOC, "%s: collective call #%llu differs: PE 0 called %s(size=%llu, arg=%llu), PE %d "
                                 "called %s(size=%llu, arg=%llu) as its call #%llu", fn,
                          (unsigned long long)all[0].seq, shmalloc_op_name(all[0].op),
                          (unsigned long long)all[0].size, (unsigned long long)all[0].arg, pe,
                          shmalloc_op_name(all[pe].op), (unsigned long long)all[pe].size,
                          (unsigned long long)all[pe].arg, (unsigned long long)all[pe].seq);
    }
    free(all);
    if (mismatches) gshmemi_fatal(st, GSHMEMX_ERR_MISMATCH);
}

static void *shmalloc_alloc(struct gshmemi_state *st, const char *fn, size_t size, size_t alignment)
{
    size_t off = 0;
    int rc = size ? gshmemi_alloc_alloc(&st->alloc, size, alignment, &off) : GSHMEMX_ERR_INVALID_ARG;
    if (rc == GSHMEMX_ERR_NOMEM)
        GSHMEMI_WARN(ALLOC, "%s: cannot allocate %zu bytes (alignment %zu): %zu bytes free, largest free block "
                            "%zu bytes (raise GSHMEM_SYMMETRIC_SIZE)", fn, size, alignment,
                     gshmemi_alloc_free_bytes(&st->alloc), gshmemi_alloc_largest_free(&st->alloc));
    return rc == 0 ? (char *)st->heap.base + off : NULL;
}

void *gshmem_malloc(size_t size)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    if (size == 0) return NULL; /* no action, so no barrier (OpenSHMEM) */
    shmalloc_cross_check(st, __func__, SHMALLOC_MALLOC, size, 0);
    void *p = shmalloc_alloc(st, __func__, size, 0);
    gshmemi_sync_quiet(st, __func__); /* ends like gshmem_barrier_all, as OpenSHMEM says */
    gshmemi_sync_barrier(st, __func__);
    return p;
}

void *gshmem_calloc(size_t count, size_t size)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    if (count == 0 || size == 0) return NULL; /* no action, so no barrier (OpenSHMEM) */
    shmalloc_cross_check(st, __func__, SHMALLOC_CALLOC, size, count);
    void *p = NULL;
    if (size && count > SIZE_MAX / size) {
        GSHMEMI_WARN(ALLOC, "gshmem_calloc: count=%zu elements of size=%zu overflow size_t", count, size);
    } else if ((p = shmalloc_alloc(st, __func__, count * size, 0)) != NULL) {
        int rc = gshmemi_heap_memset(&st->heap, (size_t)((char *)p - (char *)st->heap.base), 0, count * size);
        if (rc != 0) gshmemi_fatal(st, rc);
    }
    gshmemi_sync_quiet(st, __func__); /* ends like gshmem_barrier_all, as OpenSHMEM says */
    gshmemi_sync_barrier(st, __func__);
    return p;
}

void *gshmem_align(size_t alignment, size_t size)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    if (size == 0) return NULL; /* no action, so no barrier (OpenSHMEM) */
    shmalloc_cross_check(st, __func__, SHMALLOC_ALIGN, size, alignment);
    void *p = NULL;
    if (alignment == 0 || (alignment & (alignment - 1)))
        GSHMEMI_WARN(ALLOC, "gshmem_align: alignment=%zu is not a power of two", alignment);
    else if (alignment > GSHMEMI_HEAP_BASE_ALIGN)
        GSHMEMI_WARN(ALLOC, "gshmem_align: alignment=%zu exceeds the largest supported (%zu)", alignment,
                     GSHMEMI_HEAP_BASE_ALIGN);
    else p = shmalloc_alloc(st, __func__, size, alignment);
    gshmemi_sync_quiet(st, __func__); /* ends like gshmem_barrier_all, as OpenSHMEM says */
    gshmemi_sync_barrier(st, __func__);
    return p;
}

/* Heap offset of a block returned by the allocator; a foreign pointer ends the job. */
static size_t shmalloc_block(struct gshmemi_state *st, const char *fn, void *ptr)
{
    size_t off = gshmemi_heap_offset(st, ptr, 0);
    if (off == SIZE_MAX || gshmemi_alloc_block_size(&st->alloc, off) == 0) {
        GSHMEMI_ERROR(ALLOC, "%s: ptr=%p was not returned by gshmem_malloc/calloc/align/realloc (or was freed)",
                      fn, ptr);
        gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
    }
    return off;
}

void gshmem_free(void *ptr)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    if (!ptr) return; /* no action, so no barrier (OpenSHMEM) */
    size_t off = shmalloc_block(st, __func__, ptr);
    shmalloc_cross_check(st, __func__, SHMALLOC_FREE, 0, off);
    gshmemi_sync_quiet(st, __func__);
    gshmemi_sync_barrier(st, __func__); /* nobody still uses the block */
    gshmemi_alloc_free(&st->alloc, off);
}

void *gshmem_realloc(void *ptr, size_t size)
{
    if (!ptr) return gshmem_malloc(size);
    if (size == 0) {
        gshmem_free(ptr);
        return NULL;
    }
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    size_t off = shmalloc_block(st, __func__, ptr);
    shmalloc_cross_check(st, __func__, SHMALLOC_REALLOC, size, off);
    gshmemi_sync_quiet(st, __func__);
    gshmemi_sync_barrier(st, __func__); /* peers' writes to the old block are done */
    void *result = ptr;
    if (gshmemi_alloc_resize(&st->alloc, off, size) != 0) {
        size_t old_size = gshmemi_alloc_block_size(&st->alloc, off);
        result = shmalloc_alloc(st, __func__, size, 0);
        if (result) {
            size_t new_off = (size_t)((char *)result - (char *)st->heap.base);
            int rc = gshmemi_heap_memcpy(&st->heap, new_off, off, old_size < size ? old_size : size);
            if (rc != 0) gshmemi_fatal(st, rc);
            gshmemi_alloc_free(&st->alloc, off);
        }
    }
    gshmemi_sync_barrier(st, __func__);
    return result;
}
