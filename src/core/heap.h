/*
 * The local symmetric heap's backing memory, shareable with node-local PEs by fd.
 * Host heap: one memfd, 2 MiB hugepages when reserved (MFD_HUGETLB), else normal
 * pages with THP advice. Device heap (heap_device.c): CUDA VMM memory exported as
 * a POSIX fd, mapped into one reserved slot per node-local PE. The fd stays open
 * until node-local peers have mapped it.
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
    /* Device heap only. */
    int device;                  /* CUDA ordinal */
    unsigned char uuid[16];      /* GPU UUID, to match peers' GPUs with local ordinals */
    char *slots;                 /* reserved VA: local_nranks slots of slot_size */
    size_t slot_size;
    int local_nranks;
    unsigned long long handle;   /* CUmemGenericAllocationHandle of our memory */
    void *stream;                /* cudaStream_t (non-blocking) for calloc's clear and realloc's copy */
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
/* Maps a node-local peer's heap fd (same size and kind as ours) for the peer with
 * node-local index local_index; NULL on failure (logged). */
void *gshmemi_heap_map_peer(struct gshmemi_heap *heap, int fd, int local_index);
void gshmemi_heap_unmap_peer(struct gshmemi_heap *heap, void *base);
/* Whether this process can load and store the heap's memory (host heaps). */
int gshmemi_heap_host_accessible(const struct gshmemi_heap *heap);

/* Local fills and copies inside the heap, for either kind. 0 or a status. */
int gshmemi_heap_memset(struct gshmemi_heap *heap, size_t offset, int value, size_t len);
int gshmemi_heap_memcpy(struct gshmemi_heap *heap, size_t dst_offset, size_t src_offset, size_t len);

/* Device heap (CUDA builds): memory on GPU `device`, with a slot reserved for each of
 * local_nranks node-local PEs; ours is slot local_rank. */
int gshmemi_heap_device_create(const struct gshmemi_env *env, int device, int local_rank, int local_nranks,
                               struct gshmemi_heap *heap);
void *gshmemi_heap_device_map_peer(struct gshmemi_heap *heap, int fd, int local_index);
/* Whether our GPU can load and store the memory of the GPU with this UUID (same GPU,
 * or peer access over NVLink/PCIe); 0 with the reason in why when it cannot. A GPU not
 * visible to this process counts as reachable (its mapping will tell). */
int gshmemi_heap_device_can_reach(const struct gshmemi_heap *heap, const unsigned char uuid[16], char *why,
                                  size_t whylen);
void gshmemi_heap_device_unmap_peer(struct gshmemi_heap *heap, void *base);
void gshmemi_heap_device_destroy(struct gshmemi_heap *heap);
int gshmemi_heap_device_memset(struct gshmemi_heap *heap, size_t offset, int value, size_t len);
int gshmemi_heap_device_memcpy(struct gshmemi_heap *heap, size_t dst_offset, size_t src_offset, size_t len);
/* Whether this machine has free 2 MiB hugepages (for gshmem-info); fills a description. */
void gshmemi_heap_describe_hugepages(char *out, size_t outlen);
/* The kernel's shmem THP mode ("advise", "never", ...) or "unknown". */
void gshmemi_heap_describe_thp(char *out, size_t outlen);
/* Whether enough 2 MiB hugepages are free now for a heap of size bytes. */
int gshmemi_heap_hugepages_fit(size_t size);

/* The 2 MiB hugepage pool the host heap draws from (MFD_HUGE_2MB): sysfs
 * hugepages-2048kB, or /proc/meminfo's HugePages_* when that directory is missing and
 * 2 MiB is the default size. Counts are -1 when unknown. */
struct gshmemi_hugepages {
    long total;      /* pages in the pool (nr_hugepages) */
    long free_pages; /* free_hugepages */
    long reserved;   /* resv_hugepages: counted free but promised to mappings already made */
    long default_kb; /* Hugepagesize: the pool that vm.nr_hugepages sizes */
};
/* Reads the pool; root prefixes every /proc and /sys path ("" for this machine,
 * another tree in gshmem-info --check's tests). */
void gshmemi_heap_hugepages_read(const char *root, struct gshmemi_hugepages *hp);
/* Pages a new heap can take now: free minus reserved (0 when unknown). */
long gshmemi_heap_hugepages_available(const struct gshmemi_hugepages *hp);
/* 2 MiB pages one PE's host heap takes for GSHMEM_SYMMETRIC_SIZE bytes (gshmem's
 * reserved words included). */
size_t gshmemi_heap_hugepages_needed(size_t symmetric_size);

#endif
