/* Helpers shared by the host-heap perftests: option parsing and the clock. */
#ifndef GSHMEM_PERF_HOST_H
#define GSHMEM_PERF_HOST_H

#ifndef GPERF_NVSHMEM /* the device perftests' NVSHMEM build shares this header */
#include <gshmem.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* After gshmem_init: these programs touch the heap from the CPU, so a device heap
 * (GSHMEM_HEAP=auto with a GPU) is refused with a message instead of a crash.
 * Nonzero: finalized, exit with 2. */
#ifndef GPERF_NVSHMEM
static inline int perf_require_host_heap(const char *prog)
{
    if (strcmp(gshmemx_heap_kind(), "device") != 0) return 0;
    if (gshmem_my_pe() == 0)
        fprintf(stderr, "%s measures the host heap and this job has a device heap: run it with GSHMEM_HEAP=host "
                        "(the GPU perftests, gshmem-perf-gpu-*, measure the device heap)\n", prog);
    gshmem_finalize();
    return 1;
}
#endif

static inline double perf_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Whether test is one of the comma-separated names in list. */
static inline int perf_wants(const char *list, const char *test)
{
    size_t n = strlen(test);
    for (const char *p = list; (p = strstr(p, test)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return 1;
    return 0;
}

/* "64", "4K", "64M", "1G" (binary suffixes) in bytes. */
static inline size_t perf_parse_size(const char *text)
{
    char *end;
    double v = strtod(text, &end);
    switch (*end) {
    case 'k': case 'K': v *= 1024; break;
    case 'm': case 'M': v *= 1024 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (size_t)v;
}

#endif
