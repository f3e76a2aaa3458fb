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

/* Command-line values are taken as written or refused: a typo ("-i 10x", "-w abc",
 * "-t fooo") ends the program with status 2 and says which option, instead of running
 * something else than was asked for. */
static inline void perf_bad_value(const char *opt, const char *text, const char *want)
{
    fprintf(stderr, "option %s: '%s' is not %s\n", opt, text, want);
    exit(2);
}

/* "64", "4K", "64M", "1G", "1.5K" (binary suffixes) in bytes: at least 1. */
static inline size_t perf_parse_size(const char *text)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text) perf_bad_value("(size)", text, "a size such as 64, 4K, 64M or 1G");
    switch (*end) {
    case 'k': case 'K': v *= 1024; end++; break;
    case 'm': case 'M': v *= 1024 * 1024; end++; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end != '\0' || !(v >= 1) || v > 1e18) perf_bad_value("(size)", text, "a size such as 64, 4K, 64M or 1G");
    return (size_t)v;
}

/* A whole number in [min, max]. */
static inline long perf_parse_long(const char *opt, const char *text, long min, long max)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < min || v > max) {
        char want[96];
        snprintf(want, sizeof want, "a whole number from %ld to %ld", min, max);
        perf_bad_value(opt, text, want);
    }
    return v;
}

/* A number in [min, max]. */
static inline double perf_parse_double(const char *opt, const char *text, double min, double max)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !(v >= min && v <= max)) {
        char want[96];
        snprintf(want, sizeof want, "a number from %g to %g", min, max);
        perf_bad_value(opt, text, want);
    }
    return v;
}

/* Every name of the comma-separated list is one of known's (comma-separated too). */
static inline void perf_check_list(const char *opt, const char *list, const char *known)
{
    char name[64];
    for (const char *p = list;;) {
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= sizeof name) perf_bad_value(opt, list, known);
        memcpy(name, p, n);
        name[n] = '\0';
        if (!perf_wants(known, name)) {
            char want[256];
            snprintf(want, sizeof want, "a list of names from %s ('%s' is none of them)", known, name);
            perf_bad_value(opt, list, want);
        }
        if (p[n] == '\0') break;
        p += n + 1;
    }
}

#endif
