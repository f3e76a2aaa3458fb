/*
 * The local symmetric heap's backing memory. Host heap: one memfd, 2 MiB hugepages
 * when reserved (MFD_HUGETLB), else normal pages with THP advice. The fd is kept
 * open until node-local peers have mapped it.
 */
#ifndef GSHMEMI_HEAP_H
#define GSHMEMI_HEAP_H

#include <stddef.h>

struct gshmemi_env;

enum gshmemi_heap_kind { GSHMEMI_HEAP_KIND_HOST_HUGETLB, GSHMEMI_HEAP_KIND_HOST_THP, GSHMEMI_HEAP_KIND_DEVICE };

struct gshmemi_heap {
    void *base;
    size_t size;        /* mapped bytes: reserved area + user area, page aligned */
    size_t page_size;
    int kind;
    int fd;             /* -1 once closed */
    const char *fallback_reason; /* why hugepages were not used, or NULL */
};

/* Every heap mapping (own and peers') starts at a multiple of this, so gshmem_align
 * gives the same alignment on every PE for alignments up to it. */
#define GSHMEMI_HEAP_BASE_ALIGN ((size_t)1 << 30)

/* Bytes at the start of every heap kept for gshmem's own synchronization words. */
#define GSHMEMI_HEAP_RESERVED ((size_t)64 * 1024)

int gshmemi_heap_create(const struct gshmemi_env *env, struct gshmemi_heap *heap);
void gshmemi_heap_close_fd(struct gshmemi_heap *heap);
void gshmemi_heap_destroy(struct gshmemi_heap *heap);
const char *gshmemi_heap_kind_name(int kind);
/* Maps a peer's heap fd (same size); NULL on failure with errno set. */
void *gshmemi_heap_map_peer(int fd, size_t size);
/* Whether this machine has free 2 MiB hugepages (for gshmem-info); fills a description. */
void gshmemi_heap_describe_hugepages(char *out, size_t outlen);
/* Whether enough 2 MiB hugepages are free now for a heap of size bytes. */
int gshmemi_heap_hugepages_fit(size_t size);

#endif
