/* Host symmetric heap backing: memfd on hugetlbfs, or shmem with THP advice. */
#include "core/heap.h"

#include "core/env.h"
#include "core/log.h"

#include <gshmem/status.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21u << 26) /* log2(2 MiB) << MFD_HUGE_SHIFT */
#endif

#define HEAP_HUGE_PAGE ((size_t)2 << 20)

const char *gshmemi_heap_kind_name(int kind)
{
    switch (kind) {
    case GSHMEMI_HEAP_KIND_HOST_HUGETLB: return "host-hugetlb";
    case GSHMEMI_HEAP_KIND_HOST_THP: return "host-thp";
    case GSHMEMI_HEAP_KIND_DEVICE: return "device";
    default: return "unknown";
    }
}

static size_t heap_round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

/* Maps fd at an address aligned to GSHMEMI_HEAP_BASE_ALIGN, so that an offset aligned by
 * the allocator gives an equally aligned address on every PE. MAP_FAILED on failure. */
static void *heap_map_aligned(int fd, size_t size)
{
    size_t span = size + GSHMEMI_HEAP_BASE_ALIGN;
    char *area = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED) return MAP_FAILED;
    uintptr_t start = ((uintptr_t)area + GSHMEMI_HEAP_BASE_ALIGN - 1) & ~(uintptr_t)(GSHMEMI_HEAP_BASE_ALIGN - 1);
    void *p = mmap((void *)start, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
        int saved = errno;
        munmap(area, span);
        errno = saved;
        return MAP_FAILED;
    }
    if (start > (uintptr_t)area) munmap(area, start - (uintptr_t)area);
    char *end = (char *)start + size;
    if (end < area + span) munmap(end, (size_t)(area + span - end));
    return p;
}

/* 0 on success; errno-style failure reason in *why otherwise. */
static int heap_try_hugetlb(struct gshmemi_heap *heap, size_t size, const char **why)
{
    int fd = memfd_create("gshmem-heap", MFD_CLOEXEC | MFD_HUGETLB | MFD_HUGE_2MB);
    if (fd < 0) {
        *why = "memfd_create(MFD_HUGETLB) failed (kernel without hugetlbfs?)";
        return -1;
    }
    size = heap_round_up(size, HEAP_HUGE_PAGE);
    if (ftruncate(fd, (off_t)size) != 0) {
        *why = "sizing the hugetlb memfd failed";
        close(fd);
        return -1;
    }
    /* Every page now, not at first touch: a hugetlb cgroup limit charged at fault time
     * (Kubernetes pods without a hugepage request) or a NUMA binding to a node with too
     * few pages passes the reservation at mmap and would end a later access with
     * SIGBUS; here it is a clean failure (and auto falls back to normal pages). */
    int e;
    do /* hugetlbfs stops at any pending signal (a profiler's timer); the pages kept count */
        e = fallocate(fd, 0, 0, (off_t)size) == 0 ? 0 : errno;
    while (e == EINTR);
    if (e != 0 && e != EOPNOTSUPP && e != ENOSYS && e != EPERM) { /* the last three: no fallocate here */
        *why = e == ENOSPC || e == ENOMEM
                   ? "the 2 MiB hugepages could not be allocated (too few free ones, on this NUMA node or within a "
                     "cgroup hugetlb limit)"
                   : "allocating the 2 MiB hugepages failed";
        close(fd);
        return -1;
    }
    void *base = heap_map_aligned(fd, size);
    if (base == MAP_FAILED) {
        *why = "not enough free 2 MiB hugepages reserved (/proc/sys/vm/nr_hugepages)";
        close(fd);
        return -1;
    }
    heap->base = base;
    heap->size = size;
    heap->fd = fd;
    heap->page_size = HEAP_HUGE_PAGE;
    heap->kind = GSHMEMI_HEAP_KIND_HOST_HUGETLB;
    return 0;
}

static int heap_create_normal(struct gshmemi_heap *heap, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size = heap_round_up(size, HEAP_HUGE_PAGE);
    int fd = memfd_create("gshmem-heap", MFD_CLOEXEC);
    if (fd < 0) {
        GSHMEMI_ERROR(HEAP, "memfd_create for a %zu-byte heap failed: %s", size, strerror(errno));
        return GSHMEMX_ERR_SYSTEM;
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        GSHMEMI_ERROR(HEAP, "sizing the heap to %zu bytes failed: %s", size, strerror(errno));
        close(fd);
        return GSHMEMX_ERR_NOMEM;
    }
    void *base = heap_map_aligned(fd, size);
    if (base == MAP_FAILED) {
        GSHMEMI_ERROR(HEAP, "mapping a %zu-byte heap failed: %s", size, strerror(errno));
        close(fd);
        return GSHMEMX_ERR_NOMEM;
    }
    madvise(base, size, MADV_HUGEPAGE); /* effective when shmem THP is "advise" or "always" */
    heap->base = base;
    heap->size = size;
    heap->fd = fd;
    heap->page_size = page;
    heap->kind = GSHMEMI_HEAP_KIND_HOST_THP;
    return 0;
}

int gshmemi_heap_create(const struct gshmemi_env *env, struct gshmemi_heap *heap)
{
    memset(heap, 0, sizeof(*heap));
    heap->fd = -1;
    if (env->symmetric_size > SIZE_MAX - GSHMEMI_HEAP_RESERVED - HEAP_HUGE_PAGE) {
        GSHMEMI_ERROR(HEAP, "GSHMEM_SYMMETRIC_SIZE=%zu is too large", env->symmetric_size);
        return GSHMEMX_ERR_CONFIG;
    }
    size_t size = GSHMEMI_HEAP_RESERVED + env->symmetric_size;
    if (env->hugepages != GSHMEMI_HUGEPAGES_OFF) {
        const char *why = NULL;
        if (heap_try_hugetlb(heap, size, &why) == 0) return 0;
        if (env->hugepages == GSHMEMI_HUGEPAGES_ON) {
            GSHMEMI_ERROR(HEAP, "GSHMEM_HUGEPAGES=on but a %zu-byte hugepage heap is not possible: %s", size, why);
            return GSHMEMX_ERR_NOMEM;
        }
        heap->fallback_reason = why;
    } else {
        heap->fallback_reason = "GSHMEM_HUGEPAGES=off";
    }
    int rc = heap_create_normal(heap, size);
    if (rc == 0 && heap->fallback_reason == NULL) heap->fallback_reason = "";
    return rc;
}

void gshmemi_heap_close_fd(struct gshmemi_heap *heap)
{
    if (heap->fd >= 0) close(heap->fd);
    heap->fd = -1;
}

void gshmemi_heap_destroy(struct gshmemi_heap *heap)
{
    gshmemi_heap_close_fd(heap);
    if (heap->kind == GSHMEMI_HEAP_KIND_DEVICE) {
        gshmemi_heap_device_destroy(heap);
        return;
    }
    if (heap->base) munmap(heap->base, heap->size);
    heap->base = NULL;
}

int gshmemi_heap_memset(struct gshmemi_heap *heap, size_t offset, int value, size_t len)
{
    if (heap->kind == GSHMEMI_HEAP_KIND_DEVICE) return gshmemi_heap_device_memset(heap, offset, value, len);
    memset((char *)heap->base + offset, value, len);
    return 0;
}

int gshmemi_heap_memcpy(struct gshmemi_heap *heap, size_t dst_offset, size_t src_offset, size_t len)
{
    if (heap->kind == GSHMEMI_HEAP_KIND_DEVICE) return gshmemi_heap_device_memcpy(heap, dst_offset, src_offset, len);
    memmove((char *)heap->base + dst_offset, (char *)heap->base + src_offset, len);
    return 0;
}

int gshmemi_heap_host_accessible(const struct gshmemi_heap *heap)
{
    return heap->kind != GSHMEMI_HEAP_KIND_DEVICE;
}

void *gshmemi_heap_map_peer(struct gshmemi_heap *heap, int fd, int local_index)
{
    if (heap->kind == GSHMEMI_HEAP_KIND_DEVICE) return gshmemi_heap_device_map_peer(heap, fd, local_index);
    struct stat sb = {0};
    if (fstat(fd, &sb) != 0 || (size_t)sb.st_size < heap->size) {
        GSHMEMI_ERROR(HEAP, "node-local peer %d's heap file is %lld bytes, smaller than the %zu-byte heap", local_index,
                      (long long)sb.st_size, heap->size);
        return NULL;
    }
    void *p = heap_map_aligned(fd, heap->size);
    if (p != MAP_FAILED) return p;
    GSHMEMI_ERROR(HEAP, "mapping node-local peer %d's %zu-byte heap failed: %s", local_index, heap->size,
                  strerror(errno));
    return NULL;
}

void gshmemi_heap_unmap_peer(struct gshmemi_heap *heap, void *base)
{
    if (heap->kind == GSHMEMI_HEAP_KIND_DEVICE) gshmemi_heap_device_unmap_peer(heap, base);
    else munmap(base, heap->size);
}

/* First line of root/path into buf; 0, or -1 when it cannot be read. */
static int heap_read_line(const char *root, const char *path, char *buf, size_t len)
{
    char full[512];
    snprintf(full, sizeof(full), "%s%s", root, path);
    FILE *f = fopen(full, "r");
    if (!f) return -1;
    int ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    return ok ? 0 : -1;
}

static long heap_read_count(const char *root, const char *path)
{
    char line[64];
    long v;
    return heap_read_line(root, path, line, sizeof(line)) == 0 && sscanf(line, "%ld", &v) == 1 ? v : -1;
}

void gshmemi_heap_hugepages_read(const char *root, struct gshmemi_hugepages *hp)
{
    long meminfo_total = -1, meminfo_free = -1, meminfo_resv = -1;
    hp->default_kb = -1;
    char full[512], line[256];
    snprintf(full, sizeof(full), "%s/proc/meminfo", root);
    FILE *f = fopen(full, "r");
    while (f && fgets(line, sizeof(line), f)) {
        sscanf(line, "HugePages_Total: %ld", &meminfo_total);
        sscanf(line, "HugePages_Free: %ld", &meminfo_free);
        sscanf(line, "HugePages_Rsvd: %ld", &meminfo_resv);
        sscanf(line, "Hugepagesize: %ld kB", &hp->default_kb);
    }
    if (f) fclose(f);
    hp->total = heap_read_count(root, "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
    hp->free_pages = heap_read_count(root, "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");
    hp->reserved = heap_read_count(root, "/sys/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages");
    if (hp->total < 0 && hp->default_kb == 2048) {
        hp->total = meminfo_total;
        hp->free_pages = meminfo_free;
        hp->reserved = meminfo_resv;
    }
}

long gshmemi_heap_hugepages_available(const struct gshmemi_hugepages *hp)
{
    long avail = hp->free_pages - (hp->reserved > 0 ? hp->reserved : 0);
    return hp->free_pages > 0 && avail > 0 ? avail : 0;
}

size_t gshmemi_heap_hugepages_needed(size_t symmetric_size)
{
    if (symmetric_size > SIZE_MAX - GSHMEMI_HEAP_RESERVED - HEAP_HUGE_PAGE) return SIZE_MAX / HEAP_HUGE_PAGE;
    return heap_round_up(symmetric_size + GSHMEMI_HEAP_RESERVED, HEAP_HUGE_PAGE) / HEAP_HUGE_PAGE;
}

void gshmemi_heap_describe_thp(char *out, size_t outlen)
{
    char line[256] = "";
    if (heap_read_line("", "/sys/kernel/mm/transparent_hugepage/shmem_enabled", line, sizeof(line)) != 0)
        line[0] = '\0';
    char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
    if (open && close) snprintf(out, outlen, "%.*s", (int)(close - open - 1), open + 1);
    else snprintf(out, outlen, "unknown");
}

int gshmemi_heap_hugepages_fit(size_t size)
{
    struct gshmemi_hugepages hp;
    gshmemi_heap_hugepages_read("", &hp);
    size_t pages = heap_round_up(size, HEAP_HUGE_PAGE) / HEAP_HUGE_PAGE;
    return (size_t)gshmemi_heap_hugepages_available(&hp) >= pages && pages > 0;
}

void gshmemi_heap_describe_hugepages(char *out, size_t outlen)
{
    struct gshmemi_hugepages hp;
    gshmemi_heap_hugepages_read("", &hp);
    if (hp.total < 0) snprintf(out, outlen, "unknown (no 2 MiB hugepage pool in /sys/kernel/mm/hugepages)");
    else snprintf(out, outlen, "%ld of %ld 2 MiB hugepages free%s", gshmemi_heap_hugepages_available(&hp), hp.total,
                  hp.total == 0 ? " (none reserved: the host heap uses normal pages with THP advice)" : "");
}
