/*
 * The page size of the symmetric heap mapping itself: KernelPageSize (from
 * /proc/self/smaps) of the mapping that holds a gshmem_malloc'd address, and of
 * the mapping through which gshmem_ptr reaches each peer's copy, against
 * gshmemx_heap_page_size(), gshmemx_heap_kind() and the expected size.
 *
 * usage: mp_heap_pages EXPECTED_KB    (2048: hugetlb pages; 4: normal pages)
 */
#include "mp_check.h"

/* KernelPageSize in kB of the mapping containing addr; 0 when none is found. */
static unsigned long kernel_page_kb(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    CHECK(f != NULL, "cannot open /proc/self/smaps");
    char line[512];
    int inside = 0;
    unsigned long kb = 0;
    uintptr_t a = (uintptr_t)addr;
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        char dash;
        /* a mapping's header line is "lo-hi perms offset dev inode [path]" */
        if (sscanf(line, "%llx%c%llx", &lo, &dash, &hi) == 3 && dash == '-') {
            inside = a >= lo && a < hi;
            continue;
        }
        if (inside && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1) break;
    }
    fclose(f);
    return inside ? kb : 0;
}

int main(int argc, char **argv)
{
    gshmem_init();
    int me = gshmem_my_pe(), npes = gshmem_n_pes();
    CHECK(argc == 2, "usage: %s EXPECTED_KB", argv[0]);
    unsigned long want_kb = strtoul(argv[1], NULL, 10);

    const size_t size = (size_t)4 << 20;
    unsigned char *p = gshmem_malloc(size);
    CHECK(p != NULL, "gshmem_malloc(%zu) failed", size);
    memset(p, me, size);
    gshmem_barrier_all();

    const void *probes[3] = {p, p + size / 2, p + size - 1};
    for (int k = 0; k < 3; k++) {
        unsigned long kb = kernel_page_kb(probes[k]);
        CHECK(kb == want_kb, "heap address %p lies in a mapping with KernelPageSize %lu kB, want %lu kB",
              probes[k], kb, want_kb);
    }
    CHECK_EQ(gshmemx_heap_page_size(), want_kb * 1024);
    const char *kind = gshmemx_heap_kind();
    const char *want_kind = want_kb == 4 ? "host-thp" : "host-hugetlb";
    CHECK(kind && !strcmp(kind, want_kind), "gshmemx_heap_kind() = \"%s\", want \"%s\"", kind ? kind : "(null)",
          want_kind);

    /* the peer mappings use the same pages, and hold the peer's data */
    for (int pe = 0; pe < npes; pe++) {
        unsigned char *peer = gshmem_ptr(p, pe);
        CHECK(peer != NULL, "gshmem_ptr(heap, %d) is NULL", pe);
        unsigned long kb = kernel_page_kb(peer);
        CHECK(kb == want_kb, "pe %d's heap is mapped here with KernelPageSize %lu kB, want %lu kB", pe, kb, want_kb);
        CHECK(peer[0] == (unsigned char)pe && peer[size - 1] == (unsigned char)pe,
              "pe %d's heap seen through gshmem_ptr holds %u..%u", pe, peer[0], peer[size - 1]);
    }

    gshmem_barrier_all();
    gshmem_free(p);
    if (me == 0) printf("mp_heap_pages: %d PEs, %lu kB pages, %s OK\n", npes, want_kb, kind);
    gshmem_finalize();
    return 0;
}
